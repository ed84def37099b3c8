"""Tests of :mod:`accounting.subsampling`: Poisson sampling and sampling without replacement.

Every reference is computed independently of the code under test:

* lattice pairs: the mixture PMFs written out from :func:`math.comb` (centred binomial) or
  :func:`mpmath.exp` (discrete Gaussian, normalised by a direct sum), then ``δ(ε)`` and the
  Rényi divergence summed over the outputs at 60 digits (compositions over the product space);
* the subsampled Gaussian and Laplace: ``δ(ε) = ∫ (p - e^ε q)_+`` and
  ``D_α = ln ∫ p^α q^{1-α} / (α - 1)`` by :func:`mpmath.quad`, split at the kinks and at the
  root of ``p = e^ε q``;
* ``q = 1``: the unsampled mechanism's own closed form or exact sum;
* Google's ``dp_accounting`` (when installed): our upper end is at least its optimistic estimate
  and close to its pessimistic one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import pytest
from mpmath import mp

from accounting import (
    AdditiveNoise,
    CenteredBinomial,
    DiscreteGaussian,
    DistributedSum,
    Enclosure,
    Gaussian,
    Geometric,
    Laplace,
    ParameterError,
    ParameterTypeError,
    Skellam,
    UnsupportedEventError,
)
from accounting.neighbouring import Neighbouring
from accounting.subsampling import (
    LatticeMixture,
    MixturePair,
    PoissonSampled,
    SampledWithoutReplacement,
)

Mpf = Any
REF_DPS = 60
ADD_REMOVE = Neighbouring.ADD_REMOVE
REPLACE_ONE = Neighbouring.REPLACE_ONE


def assert_in(value: Mpf, enclosure: Enclosure) -> None:
    assert enclosure.lo <= value <= enclosure.hi, (value, enclosure)


def overlaps(a: Enclosure, b: Enclosure) -> bool:
    return bool(a.lo <= b.hi and b.lo <= a.hi)


# ---------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------


def binomial_pmf(trials: int) -> dict[int, Mpf]:
    half = trials // 2
    return {k - half: mp.mpf(math.comb(trials, k)) / 2**trials for k in range(trials + 1)}


def dgauss_pmf(sigma: float, reach: int = 200) -> dict[int, Mpf]:
    weights = {x: mp.exp(-(mp.mpf(x) ** 2) / (2 * mp.mpf(sigma) ** 2)) for x in range(-reach, reach + 1)}
    total = mp.fsum(weights.values())
    return {x: w / total for x, w in weights.items()}


def mixture(base: dict[int, Mpf], weight: Fraction, shift: int) -> dict[int, Mpf]:
    """``(1 - w) X + w (X + shift)`` as a PMF."""
    w = mp.mpf(weight.numerator) / weight.denominator
    out: dict[int, Mpf] = {}
    for x, p in base.items():
        out[x] = out.get(x, mp.zero) + (1 - w) * p
        out[x + shift] = out.get(x + shift, mp.zero) + w * p
    return out


def lattice_pairs(
    base: dict[int, Mpf], q: Fraction, d: int, relation: str, scheme: str, reach: int | None = None
) -> list[tuple[dict[int, Mpf], dict[int, Mpf]]]:
    """The pairs of the module table, written out by hand (cropped to ``|x| <= reach``)."""
    if relation == "replace-one":
        pairs = [(mixture(base, q, d), mixture(base, q, -d))]
    else:
        shift = 2 * d if scheme == "wor" else d
        remove = (mixture(base, q, shift), dict(base))
        pairs = [remove, (remove[1], remove[0])]
    if reach is None:
        return pairs
    return [tuple({x: m for x, m in side.items() if abs(x) <= reach} for side in pair) for pair in pairs]  # type: ignore[misc]


def brute_delta(p: Mapping[Any, Mpf], q: Mapping[Any, Mpf], epsilon: float) -> Mpf:
    e = mp.exp(mp.mpf(epsilon))
    return mp.fsum(max(mp.zero, p.get(x, mp.zero) - e * q.get(x, mp.zero)) for x in set(p) | set(q))


def brute_renyi(p: dict[int, Mpf], q: dict[int, Mpf], alpha: float) -> Mpf:
    terms = []
    for x, px in p.items():
        if px == 0:
            continue
        qx = q.get(x, mp.zero)
        if qx == 0:
            return mp.inf
        terms.append(px**alpha * qx ** (1 - alpha))
    return mp.log(mp.fsum(terms)) / (alpha - 1)


def product(p: dict[int, Mpf], count: int) -> dict[tuple[int, ...], Mpf]:
    return {xs: mp.fprod(p[x] for x in xs) for xs in itertools.product(list(p), repeat=count)}


def brute_epsilon(p: dict[Any, Mpf], q: dict[Any, Mpf], delta: float) -> Mpf:
    """``max_S ln((P(S) - δ)/Q(S))`` over the top sets of outputs sorted by loss."""
    keys = sorted(
        set(p) | set(q), key=lambda x: mp.inf if q.get(x, 0) == 0 else p.get(x, 0) / q[x], reverse=True
    )
    best, a, b = mp.zero, mp.zero, mp.zero
    for x in keys:
        a += p.get(x, mp.zero)
        b += q.get(x, mp.zero)
        if a > delta:
            if b == 0:
                return mp.inf
            best = max(best, mp.log((a - delta) / b))
    return best


def gaussian_pdf(sigma: float, mean: float) -> Callable[[Mpf], Mpf]:
    return lambda x: mp.npdf(x, mean, sigma)


def laplace_pdf(scale: float, mean: float) -> Callable[[Mpf], Mpf]:
    return lambda x: mp.exp(-abs(x - mean) / scale) / (2 * scale)


def continuous_sides(pair: MixturePair) -> tuple[Callable[[Mpf], Mpf], Callable[[Mpf], Mpf]]:
    noise = pair.noise
    density = gaussian_pdf if isinstance(noise, Gaussian) else laplace_pdf
    scale = float(noise.sigma) if isinstance(noise, Gaussian) else float(noise.scale)  # type: ignore[attr-defined]
    f0 = density(scale, 0.0)
    fa = density(scale, float(pair.p_shift))
    fb = density(scale, float(pair.q_shift))
    alpha = mp.mpf(pair.p_weight.numerator) / pair.p_weight.denominator
    beta = mp.mpf(pair.q_weight.numerator) / pair.q_weight.denominator
    return (lambda x: (1 - alpha) * f0(x) + alpha * fa(x)), (lambda x: (1 - beta) * f0(x) + beta * fb(x))


def quad_delta(pair: MixturePair, epsilon: float) -> Mpf:
    """``∫ (p - e^ε q)_+`` by :func:`mpmath.quad`, split where ``p = e^ε q`` and at the kinks."""
    p, q = continuous_sides(pair)
    e = mp.exp(mp.mpf(epsilon))

    def g(x: Mpf) -> Mpf:
        return p(x) - e * q(x)

    lo, hi = mp.mpf(-40), mp.mpf(40)
    # The loss is nondecreasing: bisect for the sign change of g.
    a, b = lo, hi
    if g(b) <= 0:
        return mp.zero
    if g(a) > 0:
        return mp.quad(g, [-mp.inf, 0, float(pair.p_shift), float(pair.q_shift), mp.inf])
    for _ in range(200):
        m = (a + b) / 2
        if g(m) > 0:
            b = m
        else:
            a = m
    points = sorted({b, mp.mpf(float(pair.p_shift)), mp.mpf(float(pair.q_shift)), mp.zero})
    points = [x for x in points if x >= b]
    return mp.quad(g, [*points, mp.inf])


def quad_renyi(pair: MixturePair, alpha: int) -> Mpf:
    p, q = continuous_sides(pair)
    value = mp.quad(lambda x: p(x) ** alpha * q(x) ** (1 - alpha), [-mp.inf, -5, 0, 5, mp.inf])
    return mp.log(value) / (alpha - 1)


# ---------------------------------------------------------------------------------------------
# q = 1 is the unsampled mechanism
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "mechanism",
    [
        AdditiveNoise(Gaussian(1.5), 1.0),
        AdditiveNoise(Laplace(2.0), 1.0),
        AdditiveNoise(DiscreteGaussian(2.0), 1),
        AdditiveNoise(Skellam(30), 2),
    ],
    ids=repr,
)
def test_rate_one_is_the_unsampled_mechanism(mechanism: Any) -> None:
    """Add-remove: the pair ``(X + Δ, X)``; replace-one: ``(X + 2Δ, X)`` (contribution bound Δ)."""
    doubled = AdditiveNoise(mechanism.noise, 2 * mechanism.sensitivity)
    poisson = PoissonSampled(mechanism, 1)
    wor = SampledWithoutReplacement(mechanism, 1)
    for eps in (0.0, 0.3, 1.0):
        assert overlaps(poisson.delta(eps, ADD_REMOVE), mechanism.delta(eps))
        assert overlaps(poisson.delta(eps, REPLACE_ONE), doubled.delta(eps))
        assert overlaps(wor.delta(eps, REPLACE_ONE), doubled.delta(eps))
        assert overlaps(wor.delta(eps, ADD_REMOVE), doubled.delta(eps))
    for delta in (1e-3, 1e-6):
        got = poisson.epsilon(delta, ADD_REMOVE)
        assert overlaps(got, mechanism.epsilon(delta)), (got, mechanism.epsilon(delta))
        assert got.relative_width < 1e-12
    if not isinstance(mechanism.noise, Laplace):
        assert overlaps(poisson.rdp(3, ADD_REMOVE), mechanism.rdp(3))


# ---------------------------------------------------------------------------------------------
# Lattice mixtures against sums written out by hand
# ---------------------------------------------------------------------------------------------

LATTICE_CASES = [
    (CenteredBinomial(12), binomial_pmf(12), Fraction(1, 4), 1),
    (CenteredBinomial(8), binomial_pmf(8), Fraction(3, 5), 2),
    (DiscreteGaussian(1.5), None, Fraction(1, 10), 1),
]


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["poisson", "wor"])
@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize(("noise", "table", "q", "d"), LATTICE_CASES, ids=lambda x: repr(x)[:30])
def test_lattice_mixture_delta_epsilon_renyi(
    noise: Any, table: Any, q: Fraction, d: int, relation: str, scheme: str
) -> None:
    with mp.workdps(REF_DPS):
        base = table if table is not None else dgauss_pmf(1.5)
        pairs = lattice_pairs(base, q, d, relation, scheme, None if table is not None else 150)
        event = (PoissonSampled if scheme == "poisson" else SampledWithoutReplacement)(
            AdditiveNoise(noise, d), q
        )
        for eps in (0.0, 0.2, 0.7):
            assert_in(max(brute_delta(p, qq, eps) for p, qq in pairs), event.delta(eps, relation, dps=25))
        for delta in (1e-2, 1e-4):
            assert_in(
                max(brute_epsilon(p, qq, delta) for p, qq in pairs), event.epsilon(delta, relation, dps=25)
            )
        for alpha in (2, 3.5):
            exact = max(brute_renyi(p, qq, alpha) for p, qq in pairs)
            got = event.rdp(alpha, relation, dps=25)
            if mp.isinf(exact):
                assert mp.isinf(got.hi)
            else:
                assert_in(exact, got)
                assert got.relative_width < 1e-15


def test_replace_one_pair_dominates_every_replacement_numerically() -> None:
    """The ±Δ pair (dp_accounting's REPLACE_ONE) against all ``(a, b) ∈ [-Δ, Δ]^2``, both orders."""
    with mp.workdps(40):
        for table, q, d in ((binomial_pmf(10), Fraction(1, 3), 2), (dgauss_pmf(1.0, 60), Fraction(1, 5), 1)):
            worst = (mixture(table, q, d), mixture(table, q, -d))
            for a, b in itertools.product(range(-d, d + 1), repeat=2):
                p, qq = mixture(table, q, a), mixture(table, q, b)
                for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
                    for first, second in ((p, qq), (qq, p)):
                        assert brute_delta(first, second, eps) <= brute_delta(*worst, eps) * (
                            1 + mp.mpf(10) ** -30
                        )


def test_two_fold_composition_of_a_lattice_mixture_against_the_product_space() -> None:
    from accounting.pld import compose_events

    noise = CenteredBinomial(6)
    q = Fraction(1, 3)
    with mp.workdps(REF_DPS):
        remove = (mixture(binomial_pmf(6), q, 1), binomial_pmf(6))
        for relation in ("add-remove", "replace-one"):
            pairs = lattice_pairs(binomial_pmf(6), q, 1, relation, "poisson")
            composed = [(product(p, 2), product(qq, 2)) for p, qq in pairs]
            result = compose_events([(PoissonSampled(AdditiveNoise(noise, 1), q), 2)], relation, dps=20)
            for eps in (0.0, 0.3, 1.0):
                assert_in(max(brute_delta(p, qq, eps) for p, qq in composed), result.delta(eps))
            for delta in (1e-2, 1e-3):
                assert_in(max(brute_epsilon(p, qq, delta) for p, qq in composed), result.epsilon(delta))
        assert remove  # the remove pair is the first of the add-remove pairs


# ---------------------------------------------------------------------------------------------
# Continuous noise against numerical integration
# ---------------------------------------------------------------------------------------------

CONTINUOUS = [
    PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.01),
    PoissonSampled(AdditiveNoise(Gaussian(0.8), 1.5), 0.3),
    PoissonSampled(AdditiveNoise(Laplace(1.0), 1.0), 0.2),
    SampledWithoutReplacement(AdditiveNoise(Laplace(2.0), 1.0), Fraction(1, 8)),
]


@pytest.mark.slow
@pytest.mark.parametrize("event", CONTINUOUS, ids=repr)
@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_continuous_delta_against_quadrature(event: Any, relation: str) -> None:
    with mp.workdps(40):
        for eps in (0.0, 0.05, 0.5):
            exact = max(quad_delta(pair, eps) for pair in event.dominating_pairs(relation).values())
            got = event.delta(eps, relation, dps=20)
            assert got.lo <= exact * (1 + mp.mpf(10) ** -18)
            assert exact <= got.hi * (1 + mp.mpf(10) ** -18)
            assert got.hi - got.lo <= mp.mpf(10) ** -18 + got.hi * mp.mpf(10) ** -15


@pytest.mark.slow
@pytest.mark.parametrize("event", CONTINUOUS[:2] + CONTINUOUS[2:3], ids=repr)
def test_continuous_epsilon_inverts_delta(event: Any) -> None:
    for relation in ("add-remove", "replace-one"):
        for delta in (1e-3, 1e-6):
            eps = event.epsilon(delta, relation, dps=20)
            assert eps.relative_width < 1e-12
            assert event.delta(float(eps.hi), relation, dps=20).hi <= delta
            if eps.lo > 1e-6:
                assert event.delta(float(eps.lo) * (1 - 1e-9), relation, dps=20).lo > delta


@pytest.mark.slow
def test_sampled_gaussian_rdp_is_mironov_talwar_zhang() -> None:
    """MTZ 2019 §3.3 at integer orders against quadrature; the chord encloses fractional orders."""
    event = PoissonSampled(AdditiveNoise(Gaussian(1.2), 1.0), 0.05)
    remove = event.dominating_pairs(ADD_REMOVE)["remove"]
    with mp.workdps(45):
        for alpha in (2, 3, 8):
            got = event.rdp(alpha, ADD_REMOVE, dps=25)
            assert_in(quad_renyi(remove, alpha), got)
            assert got.relative_width < 1e-20
            # The add direction is smaller (MTZ's B_α <= A_α): checked by quadrature.
            assert quad_renyi(remove.reversed(), alpha) <= got.hi
        low, high = event.rdp(2.5, ADD_REMOVE).lo, event.rdp(2.5, ADD_REMOVE).hi
        exact = (
            mp.log(mp.quad(lambda x: _mix(x) ** 2.5 * mp.npdf(x, 0, 1.2) ** -1.5, [-mp.inf, 0, mp.inf])) / 1.5
        )
        assert low <= exact <= high
    wor = SampledWithoutReplacement(AdditiveNoise(Gaussian(1.2), 1.0), 0.05)
    assert overlaps(
        wor.rdp(4, ADD_REMOVE), PoissonSampled(AdditiveNoise(Gaussian(1.2), 2.0), 0.05).rdp(4, ADD_REMOVE)
    )
    with pytest.raises(UnsupportedEventError, match="PLD route"):
        event.rdp(2, REPLACE_ONE)


def _mix(x: Mpf) -> Mpf:
    return (1 - mp.mpf("0.05")) * mp.npdf(x, 0, 1.2) + mp.mpf("0.05") * mp.npdf(x, 1, 1.2)


def test_pure_epsilon_of_bounded_losses() -> None:
    """``D_∞`` of the Laplace mixtures: ``ln(1 - q + q e^{Δ/b})`` (remove), the ratio of both (replace)."""
    b = 1.0
    event = PoissonSampled(AdditiveNoise(Laplace(b), 1.0), 0.2)
    with mp.workdps(40):
        q = mp.mpf(0.2)
        remove = mp.log(1 - q + q * mp.e)
        replace = mp.log((1 - q + q * mp.e) / (1 - q + q / mp.e))
        assert_in(remove, event.pure_epsilon(ADD_REMOVE))
        assert_in(replace, event.pure_epsilon(REPLACE_ONE))
        assert_in(remove, event.rdp(math.inf, ADD_REMOVE))
    assert mp.isinf(PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.1).pure_epsilon(ADD_REMOVE).hi)


# ---------------------------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "mechanism", [AdditiveNoise(Gaussian(1.0), 1.0), AdditiveNoise(DiscreteGaussian(3.0), 1)], ids=repr
)
def test_monotone_in_the_rate(mechanism: Any) -> None:
    rates = [0.01, 0.05, 0.2, 0.6, 1.0]
    for relation in ("add-remove", "replace-one"):
        values = [PoissonSampled(mechanism, q).epsilon(1e-5, relation, dps=20) for q in rates]
        for smaller, larger in itertools.pairwise(values):
            assert smaller.hi < larger.lo
        deltas = [PoissonSampled(mechanism, q).delta(0.1, relation, dps=20) for q in rates]
        for smaller, larger in itertools.pairwise(deltas):
            assert smaller.hi < larger.lo


def test_without_replacement_is_worse_under_add_remove() -> None:
    """Shift 2Δ (the replaced batch member) against Poisson's Δ at the same rate."""
    mech = AdditiveNoise(Gaussian(1.0), 1.0)
    poisson = PoissonSampled(mech, 0.1).epsilon(1e-5, ADD_REMOVE)
    wor = SampledWithoutReplacement(mech, 0.1).epsilon(1e-5, ADD_REMOVE)
    assert poisson.hi < wor.lo
    assert overlaps(
        SampledWithoutReplacement(mech, 0.1).epsilon(1e-5, REPLACE_ONE),
        PoissonSampled(mech, 0.1).epsilon(1e-5, REPLACE_ONE),
    )


def test_distributed_sums() -> None:
    """Without replacement the batch holds ``users`` shares; Poisson refuses add-remove."""
    shares = DistributedSum(DiscreteGaussian(1.0), users=9)
    total = AdditiveNoise(shares.total_noise, 1)
    wor = SampledWithoutReplacement(shares, Fraction(9, 100))
    assert overlaps(
        wor.delta(0.5, REPLACE_ONE),
        SampledWithoutReplacement(total, Fraction(9, 100)).delta(0.5, REPLACE_ONE),
    )
    assert wor.delta(0.5, ADD_REMOVE).hi > 0
    poisson = PoissonSampled(shares, 0.1)
    assert poisson.delta(0.5, REPLACE_ONE).hi > 0
    with pytest.raises(UnsupportedEventError, match="share"):
        poisson.delta(0.5, ADD_REMOVE)


def test_dominating_pairs_and_reversal() -> None:
    event = PoissonSampled(AdditiveNoise(Gaussian(1.0), 2.0), 0.25)
    pairs = event.dominating_pairs("add-remove")
    assert set(pairs) == {"remove", "add"}
    assert pairs["add"] == pairs["remove"].reversed()
    assert pairs["remove"].reversed().reversed() == pairs["remove"]
    replace = event.dominating_pairs(REPLACE_ONE)["replace-one"]
    assert replace.reversed() == replace
    with mp.workdps(30):
        for x in (-3.0, 0.25, 4.0):
            assert overlaps(
                Enclosure.from_interval(pairs["remove"].loss(mp.mpf(x))),
                Enclosure.from_interval(-pairs["add"].loss(mp.mpf(-x))),
            )


# ---------------------------------------------------------------------------------------------
# Against dp_accounting
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_against_dp_accounting_single_release() -> None:
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    relation = {
        ADD_REMOVE: dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
        REPLACE_ONE: dpa.NeighboringRelation.REPLACE_ONE,
    }
    for sigma, q in ((1.0, 0.01), (2.0, 0.2)):
        event = PoissonSampled(AdditiveNoise(Gaussian(sigma), 1.0), q)
        for ours, theirs in relation.items():
            estimates = [
                pld_lib.from_gaussian_mechanism(
                    sigma,
                    sampling_prob=q,
                    pessimistic_estimate=pessimistic,
                    neighboring_relation=theirs,
                    value_discretization_interval=1e-4,
                ).get_epsilon_for_delta(1e-5)
                for pessimistic in (False, True)
            ]
            got = event.epsilon(1e-5, ours)
            assert got.hi >= estimates[0] * (1 - 1e-12)
            assert abs(float(got.hi) - estimates[1]) <= 2e-3 * estimates[1]


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [PoissonSampled, SampledWithoutReplacement])
def test_errors_name_the_field(cls: Any) -> None:
    mech = AdditiveNoise(Gaussian(1.0), 1.0)
    for bad in (0, 0.0, -0.1, 1.5):
        with pytest.raises(ParameterError, match="rate") as info:
            cls(mech, bad)
        assert "(0, 1]" in str(info.value)
    with pytest.raises(ParameterError, match="rate"):
        cls(mech, math.nan)
    for bad_type in ("0.1", None, True):
        with pytest.raises(ParameterTypeError, match="rate"):
            cls(mech, bad_type)
    with pytest.raises(ParameterTypeError, match="mechanism"):
        cls(Gaussian(1.0), 0.1)
    with pytest.raises(UnsupportedEventError, match="symmetric log-concave"):
        cls(AdditiveNoise(Geometric(0.5), 1), 0.1)
    with pytest.raises(UnsupportedEventError):
        cls(AdditiveNoise(Skellam.from_rates(3, 5), 1), 0.1)
    event = cls(mech, 0.1)
    with pytest.raises(ParameterError, match="delta"):
        event.epsilon(0.0, ADD_REMOVE)
    with pytest.raises(ParameterError, match="epsilon"):
        event.delta(-1.0, ADD_REMOVE)
    with pytest.raises(ParameterError, match="alpha"):
        event.rdp(1.0, ADD_REMOVE)
    with pytest.raises(ParameterError, match="neighbouring"):
        event.delta(0.1, "sideways")


def test_pair_errors() -> None:
    with pytest.raises(ParameterError, match="p_weight"):
        MixturePair(Gaussian(1.0), Fraction(3, 2), 1.0)
    with pytest.raises(ParameterError, match="p_shift"):
        MixturePair(Gaussian(1.0), Fraction(1, 2), -1.0)
    with pytest.raises(ParameterError, match="q_shift"):
        MixturePair(Gaussian(1.0), Fraction(1, 2), 1.0, Fraction(1, 2), 1.0)
    with pytest.raises(ParameterError, match="weight"):
        LatticeMixture(DiscreteGaussian(1.0), Fraction(2), 1)


@pytest.mark.slow
def test_mixed_ledger_of_sampled_and_cited_events() -> None:
    from accounting import PureDP
    from accounting.pld import compose_events

    sampled = PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.05)
    cited = PureDP(0.1, "a cited theorem", "add-remove")
    values = [
        compose_events([(sampled, k), (cited, 2)], ADD_REMOVE, spacing=2.0**-9, dps=15).epsilon(1e-6)
        for k in (10, 40)
    ]
    assert values[0].hi < values[1].lo
    alone = compose_events([(sampled, 40)], ADD_REMOVE, spacing=2.0**-9, dps=15).epsilon(1e-6)
    assert alone.hi < values[1].lo
    assert values[1].relative_width < 2e-3


@pytest.mark.parametrize("c", ["1e-300", "-1e-300", "3e-17", "-3e-17", "1e-5", "-0.0009", "0.5", "-0.5", "7"])
def test_log1p_encloses_the_truth_tightly(c: str) -> None:
    """The interval ln(1 + t) used by the mixture pairs: contains ln(1 + c) (mpmath at 60 digits)
    and is narrow relative to it, where iv.log(1 + t) keeps no digit of a tiny t."""
    from mpmath import iv

    from accounting.certified import log1p, lower, precision, upper

    with mp.workdps(60):
        truth = mp.log1p(mp.mpf(c))
    with precision(20):
        x = iv.mpf(c)
        got = log1p(x)
        assert lower(got) <= truth <= upper(got)
        assert upper(got) - lower(got) <= abs(truth) * mp.mpf(10) ** -15 + (upper(x) - lower(x)) * 2


def test_a_tiny_sampling_rate_is_answered_at_once() -> None:
    """Poisson sampling at rate 1e-300 of the Laplace mechanism: the loss lost every digit of the
    rate (ln((1 - q) + q e^r) at 20 digits) and the threshold search ran for minutes."""
    from accounting import Accountant, AdditiveNoise, Laplace

    release = PoissonSampled(AdditiveNoise(Laplace(3.0), 1), 1e-300)
    # δ(0) = q TV <= 1e-300; at 20 digits the masses of P and Q (about 1/2 each) differ below
    # the working precision, so the certified ends are ~1e-27: upper bounds, far below any δ
    assert release.delta(0.0, "add-remove").hi <= 1e-20
    assert Accountant().compose(release).delta(0.0).hi <= 1e-20
    assert Accountant().compose(release).epsilon(1e-6).hi == 0
