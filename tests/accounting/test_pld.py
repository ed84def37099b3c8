"""Tests of :mod:`accounting.pld`: certified composition of privacy-loss distributions.

Every reference is computed independently of the code under test:

* one mechanism: the exact single-shot ``δ(ε)`` / ``ε(δ)`` of :mod:`accounting.divergence`
  (a direct sum over outputs, not over losses);
* ``k``-fold discrete Laplace: the loss of ``Lap_Z(b)`` under ``(X + 1, X)`` is ``±1/b`` with
  ``P(+1/b) = P(X >= 0) = 1/(1 + e^{-1/b})``, so the composed loss is ``(2K - k)/b`` with
  ``K ~ Binomial(k, 1/(1 + e^{-1/b}))``: ``δ(ε)`` and ``ε(δ)`` in :mod:`mpmath` at 60 digits;
* ``k``-fold discrete Gaussian: the composed loss is ``(2Δ Σy_i + kΔ^2)/(2σ^2)``, and for
  ``Z = Σy_i`` (a :class:`SumOfDiscreteGaussians`) shifting every summand by ``Δ`` tilts the
  Gaussian weights, ``P(Z = z + kΔ) = P(Z = z) e^{-(2Δz + kΔ^2)/(2σ^2)}``; so the composition
  has exactly the ``δ(ε)`` of the single mechanism ``(Z + kΔ, Z)``, computed by
  :mod:`accounting.divergence` from the convolution table of :mod:`accounting.noise`;
* small compositions of centred binomials and Skellams: brute-force hockey-stick sums over the
  product space, with PMFs from :func:`math.comb` and :func:`mpmath.besseli`;
* the Gaussian acceptance number of issue 3;
* the continuous Gaussian on a grid: the closed form of Balle–Wang (``k`` Gaussians are one);
* the continuous Laplace: its loss is ``±a`` (``a = Δ/b``) with ``P``-masses ``1/2`` and
  ``e^{-a}/2`` and the density ``e^{(l - a)/2}/4`` on ``(-a, a)``; two-fold ``δ(ε)`` by
  :func:`mpmath.quad` over one loss with the other integrated in closed form;
* cited guarantees: ``k``-fold randomized response is a binomial of losses ``±ε`` (as the
  discrete Laplace), and ``ApproxDP(ε, δ)`` adds ``1 - (1 - δ)^k`` at ``+∞``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import (
    AdditiveNoise,
    ApproxDP,
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    DistributedSum,
    Enclosure,
    Gaussian,
    Geometric,
    Laplace,
    ParameterError,
    ParameterTypeError,
    Polya,
    PureDP,
    Skellam,
    SumOfDiscreteGaussians,
    UnsupportedError,
    UnsupportedEventError,
)
from accounting.neighbouring import Neighbouring
from accounting.pld import (
    PrivacyLossDistribution,
    _contract,
    compose_events,
    compose_mechanisms,
    gaussian_composition_delta,
    gaussian_composition_epsilon,
    gaussian_equivalent_sigma,
)
from accounting.subsampling import PoissonSampled, SampledWithoutReplacement

Mpf = Any
REF_DPS = 60
FAST = settings(max_examples=12, deadline=None)


def pld(mechanism: Any, spacing: float | None = None, dps: int = 30) -> PrivacyLossDistribution:
    return PrivacyLossDistribution.from_mechanism(mechanism, spacing=spacing, dps=dps)


def overlaps(a: Enclosure, b: Enclosure) -> bool:
    return bool(a.lo <= b.hi and b.lo <= a.hi)


def assert_in(value: Mpf, enclosure: Enclosure) -> None:
    assert enclosure.lo <= value <= enclosure.hi, (value, enclosure)


# ---------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------


def brute_delta(atoms: list[tuple[Mpf, Mpf]], epsilon: float) -> Mpf:
    """Σ max(0, p - e^ε q) over (P-mass, Q-mass) atoms of a pair."""
    e = mp.exp(mp.mpf(epsilon))
    return mp.fsum(max(mp.zero, p - e * q) for p, q in atoms)


def brute_epsilon(atoms: list[tuple[Mpf, Mpf]], delta: float) -> Mpf:
    """``max(0, max_S ln((P(S) - δ)/Q(S)))`` over the top sets of atoms sorted by loss."""
    ordered = sorted(atoms, key=lambda pq: mp.inf if pq[1] == 0 else pq[0] / pq[1], reverse=True)
    best, a, b = mp.zero, mp.zero, mp.zero
    for p, q in ordered:
        a += p
        b += q
        if a > delta and b > 0:
            best = max(best, mp.log((a - delta) / b))
        elif a > delta:
            return mp.inf
    return best


def binomial_atoms(scale: float, count: int) -> list[tuple[Mpf, Mpf]]:
    """The ``count``-fold discrete Laplace pair as (P-mass, Q-mass) atoms of its loss."""
    b = mp.mpf(scale)
    up = 1 / (1 + mp.exp(-1 / b))
    atoms = []
    for k in range(count + 1):
        p = mp.binomial(count, k) * up**k * (1 - up) ** (count - k)
        atoms.append((p, p * mp.exp(-(2 * k - count) / b)))
    return atoms


def product_atoms(table: dict[int, Mpf], shift: int, count: int) -> list[tuple[Mpf, Mpf]]:
    """Atoms of ``(X + Δ)^{⊗k}`` vs ``X^{⊗k}`` by enumerating the product space."""
    support = sorted(set(table) | {x + shift for x in table})
    single = [(table.get(x - shift, mp.zero), table.get(x, mp.zero)) for x in support]
    atoms = []
    for combo in itertools.product(single, repeat=count):
        p = mp.fprod(c[0] for c in combo)
        q = mp.fprod(c[1] for c in combo)
        if p or q:
            atoms.append((p, q))
    return atoms


def binomial_table(trials: int) -> dict[int, Mpf]:
    half = trials // 2
    return {k - half: mp.mpf(math.comb(trials, k)) / 2**trials for k in range(trials + 1)}


def skellam_table(variance: float, reach: int) -> dict[int, Mpf]:
    mu = mp.mpf(variance) / 2
    return {k: mp.exp(-2 * mu) * mp.besseli(abs(k), 2 * mu) for k in range(-reach, reach + 1)}


# ---------------------------------------------------------------------------------------------
# One mechanism: the PLD encloses the exact single-shot values
# ---------------------------------------------------------------------------------------------

SINGLE = [
    AdditiveNoise(DiscreteLaplace(3.0), 1),
    AdditiveNoise(DiscreteLaplace(Fraction(5, 2)), 2),
    AdditiveNoise(DiscreteLaplace(decay=0.7), 1),
    AdditiveNoise(DiscreteGaussian(1.5), 1),
    AdditiveNoise(DiscreteGaussian(3.0), 2),
    AdditiveNoise(Skellam(20), 1),
    AdditiveNoise(Skellam(50), 3),
    AdditiveNoise(CenteredBinomial(16), 1),
    DistributedSum(DiscreteGaussian(2.0), 3),
]


@pytest.mark.parametrize("mechanism", SINGLE, ids=repr)
def test_single_mechanism_encloses_the_exact_values(mechanism: Any) -> None:
    dist = pld(mechanism, dps=20)
    for eps in (0.0, 0.1, 0.5, 1.5):
        exact = mechanism.delta(eps, 20)
        got = dist.delta(eps)
        assert overlaps(got, exact), (eps, got, exact)
        # The pessimistic end is tight: exact lattices to the working precision, rounded grids
        # to second order in the spacing.
        assert got.hi <= exact.hi + mp.mpf(10) ** -15 + exact.hi * 1e-6
    for delta in (1e-2, 1e-5):
        exact = mechanism.epsilon(delta, 20)
        got = dist.epsilon(delta)
        assert overlaps(got, exact), (delta, got, exact)
        assert got.hi <= exact.hi * (1 + 1e-6) + mp.mpf(10) ** -15


@pytest.mark.parametrize(
    "mechanism", [AdditiveNoise(DiscreteLaplace(4.0), 1), AdditiveNoise(DiscreteGaussian(2.5), 1)], ids=repr
)
def test_exact_lattices_are_detected_and_tight(mechanism: Any) -> None:
    dist = pld(mechanism)
    assert dist.exact_grid
    for eps in (0.0, 0.2):
        got = dist.delta(eps)
        assert got.relative_width < 1e-25
        assert overlaps(mechanism.delta(eps), got)


def test_discrete_laplace_lattice_is_the_two_point_loss() -> None:
    dist = pld(AdditiveNoise(DiscreteLaplace(10.0), 1))
    assert dist.grid_points == 2
    assert float(dist.spacing.lo) == pytest.approx(0.2, rel=1e-15)
    lo, hi = dist.loss_range
    assert lo == pytest.approx(-0.1, rel=1e-14)
    assert hi == pytest.approx(0.1, rel=1e-14)


def test_discrete_laplace_on_a_chosen_grid_encloses_the_binomial() -> None:
    """With a ``spacing``, the closed-form atoms are split onto that grid (no window needed)."""
    dist = pld(AdditiveNoise(DiscreteLaplace(1000.0), 1), spacing=2.0**-12).self_compose(30)
    assert not dist.exact_grid
    assert dist.infinite_mass.hi < 1e-30  # only truncated rounding dust: no window tails
    with mp.workdps(REF_DPS):
        atoms = binomial_atoms(1000.0, 30)
        for eps in (0.0, 0.01, 0.03):
            assert_in(brute_delta(atoms, eps), dist.delta(eps))
        assert_in(brute_epsilon(atoms, 1e-3), dist.epsilon(1e-3))


def test_polya_shares_give_the_discrete_laplace_lattice() -> None:
    beta = 0.9
    shares = DistributedSum(Polya(Fraction(1, 8), beta), 8)
    direct = AdditiveNoise(DiscreteLaplace(decay=beta), 1)
    assert pld(shares) == pld(direct)


def test_centered_binomial_has_infinite_loss_mass() -> None:
    dist = pld(AdditiveNoise(CenteredBinomial(10), 1))
    exact = mp.mpf(1) / 2**10  # P(X + 1 = 6) where X <= 5: the top binomial atom
    assert_in(exact, dist.infinite_mass)
    with mp.workdps(40):
        assert dist.delta(50.0).lo >= exact * (1 - mp.mpf(10) ** -20)


# ---------------------------------------------------------------------------------------------
# Compositions against independent exact values
# ---------------------------------------------------------------------------------------------


def test_hundred_fold_discrete_laplace_to_twelve_digits() -> None:
    """Issue 3: 100-fold discrete Laplace answered to 12+ significant digits (we get ~25)."""
    dist = pld(AdditiveNoise(DiscreteLaplace(10.0), 1)).self_compose(100)
    with mp.workdps(REF_DPS):
        atoms = binomial_atoms(10.0, 100)
        for eps in (0.0, 0.5, 1.0, 2.0, 4.0, 6.0):
            got = dist.delta(eps)
            assert_in(brute_delta(atoms, eps), got)
            assert got.digits() >= 12
        for delta in (1e-3, 1e-6, 1e-10):
            got = dist.epsilon(delta)
            assert_in(brute_epsilon(atoms, delta), got)
            assert got.digits() >= 12


@given(scale=st.floats(0.5, 20.0), count=st.integers(1, 40), eps=st.floats(0.0, 5.0))
@FAST
def test_k_fold_discrete_laplace_is_binomial(scale: float, count: int, eps: float) -> None:
    dist = pld(AdditiveNoise(DiscreteLaplace(scale), 1), dps=20).self_compose(count)
    with mp.workdps(REF_DPS):
        got = dist.delta(eps)
        assert_in(brute_delta(binomial_atoms(scale, count), eps), got)
        assert got.hi - got.lo <= mp.mpf(10) ** -18


@given(
    sigma=st.sampled_from([1.0, 1.5, 2.0, 3.25]),
    sensitivity=st.integers(1, 2),
    count=st.integers(2, 9),
    eps=st.floats(0.0, 4.0),
)
@FAST
def test_k_fold_discrete_gaussian_is_one_mechanism_with_summed_noise(
    sigma: float, sensitivity: int, count: int, eps: float
) -> None:
    dist = pld(AdditiveNoise(DiscreteGaussian(sigma), sensitivity), dps=20).self_compose(count)
    assert dist.exact_grid
    summed = AdditiveNoise(SumOfDiscreteGaussians(sigma, count), count * sensitivity)
    got = dist.delta(eps)
    exact = summed.delta(eps, 20)
    assert overlaps(got, exact), (got, exact)
    assert got.hi - got.lo <= mp.mpf(10) ** -18


def test_k_fold_discrete_gaussian_epsilon_matches_summed_noise() -> None:
    dist = pld(AdditiveNoise(DiscreteGaussian(2.0), 1)).self_compose(10)
    summed = AdditiveNoise(SumOfDiscreteGaussians(2.0, 10), 10)
    for delta in (1e-3, 1e-5, 1e-9):
        got, exact = dist.epsilon(delta), summed.epsilon(delta)
        assert overlaps(got, exact)
        assert got.digits() >= 20


def test_centered_binomial_composition_brute_force() -> None:
    """A rounded grid with infinite losses, against the product space enumerated exactly."""
    mechanism = AdditiveNoise(CenteredBinomial(6), 1)
    dist = pld(mechanism, dps=20).self_compose(3)
    assert not dist.exact_grid
    with mp.workdps(REF_DPS):
        atoms = product_atoms(binomial_table(6), 1, 3)
        for eps in (0.0, 0.3, 1.0, 2.0):
            assert_in(brute_delta(atoms, eps), dist.delta(eps))
        for delta in (0.05, 0.02):
            assert_in(brute_epsilon(atoms, delta), dist.epsilon(delta))


@pytest.mark.slow
def test_skellam_two_fold_brute_force_and_tight_upper_end() -> None:
    mechanism = AdditiveNoise(Skellam(4), 1)
    with mp.workdps(REF_DPS):
        atoms = product_atoms(skellam_table(4, 60), 1, 2)
        for spacing in (2.0**-8, 2.0**-11):
            dist = pld(mechanism, spacing=spacing, dps=20).self_compose(2)
            for eps in (0.0, 0.5, 1.0):
                exact = brute_delta(atoms, eps)
                got = dist.delta(eps)
                assert_in(exact, got)
                # Connect-the-dots: the split is exact wherever ε is not inside a split cell, so the
                # upper end is far tighter than one grid step (the lower end is about one step).
                assert got.hi - exact <= spacing / 4 * exact + mp.mpf(10) ** -18
            exact_eps = brute_epsilon(atoms, 1e-4)
            assert_in(exact_eps, dist.epsilon(1e-4))


def test_skellam_composition_shrinks_with_the_spacing() -> None:
    mechanism = AdditiveNoise(Skellam(100), 1)
    coarse = pld(mechanism, spacing=2.0**-9).self_compose(8)
    fine = pld(mechanism, spacing=2.0**-12).self_compose(8)
    for eps in (0.5, 1.5):
        a, b = coarse.delta(eps), fine.delta(eps)
        assert overlaps(a, b)
        assert b.hi - b.lo < (a.hi - a.lo) / 4
    a, b = coarse.epsilon(1e-6), fine.epsilon(1e-6)
    assert overlaps(a, b)
    assert b.relative_width < 2e-3


# ---------------------------------------------------------------------------------------------
# Structure: monotonicity, commutativity, associativity
# ---------------------------------------------------------------------------------------------


# One exact-lattice and one rounded-grid composition, shared by the structural tests.
_DLAP_20 = pld(AdditiveNoise(DiscreteLaplace(3.0), 1), dps=20).self_compose(20)
_SKELLAM_5 = pld(AdditiveNoise(Skellam(30), 1), dps=20).self_compose(5)


@given(e1=st.floats(0.0, 6.0), e2=st.floats(0.0, 6.0))
@FAST
def test_delta_is_nonincreasing_in_epsilon(e1: float, e2: float) -> None:
    a, b = min(e1, e2), max(e1, e2)
    for dist in (_DLAP_20, _SKELLAM_5):
        da, db = dist.delta(a), dist.delta(b)
        assert db.lo <= da.hi
        with mp.workdps(40):
            assert db.hi <= da.hi * (1 + mp.mpf(10) ** -20) + mp.mpf(10) ** -30


@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_epsilon_increases_with_the_number_of_compositions(delta: float) -> None:
    base = pld(AdditiveNoise(DiscreteGaussian(3.0), 1), dps=20)
    values = [base.self_compose(k).epsilon(delta) for k in (1, 2, 3, 5, 8)]
    for smaller, larger in itertools.pairwise(values):
        assert smaller.hi < larger.lo


def test_epsilon_inverts_delta() -> None:
    for dist in (_DLAP_20, _SKELLAM_5):
        for delta in (1e-2, 1e-4, 1e-7):
            eps = dist.epsilon(delta)
            assert dist.delta(float(eps.hi)).hi <= delta * (1 + 1e-12)
            if eps.lo > 0.01:
                below = float(eps.lo) - 0.01
                assert dist.delta(below).lo > delta


def test_composition_is_commutative_exactly() -> None:
    a = pld(AdditiveNoise(Skellam(30), 1), spacing=2.0**-10)
    b = pld(AdditiveNoise(DiscreteGaussian(4.0), 1), spacing=2.0**-10)
    assert a.compose(b) == b.compose(a)


def test_composition_is_associative_up_to_rounding() -> None:
    a = pld(AdditiveNoise(DiscreteLaplace(2.0), 1))
    b = pld(AdditiveNoise(DiscreteLaplace(2.0), 1)).self_compose(3)
    c = pld(AdditiveNoise(DiscreteLaplace(2.0), 1)).self_compose(2)
    left, right = a.compose(b).compose(c), a.compose(b.compose(c))
    assert left.grid_points == right.grid_points
    for eps in (0.0, 1.0, 2.5):
        x, y = left.delta(eps), right.delta(eps)
        assert overlaps(x, y)
        assert abs(x.hi - y.hi) <= mp.mpf(10) ** -28
    assert overlaps(left.epsilon(1e-5), right.epsilon(1e-5))
    # Repeated squaring and one-at-a-time composition agree too.
    one = pld(AdditiveNoise(DiscreteLaplace(2.0), 1))
    assert overlaps(one.self_compose(6).delta(1.0), left.delta(1.0))


def test_compose_mechanisms_heterogeneous() -> None:
    dlap = AdditiveNoise(DiscreteLaplace(5.0), 1)
    dg = AdditiveNoise(DiscreteGaussian(3.0), 1)
    same = compose_mechanisms([(dlap, 3), (dlap, 2)], dps=30)
    assert same.exact_grid
    five = pld(dlap).self_compose(5)
    assert same.spacing == five.spacing
    for eps in (0.0, 0.5):
        assert overlaps(same.delta(eps), five.delta(eps))
        assert same.delta(eps).digits() > 25
    mixed = compose_mechanisms([(dlap, 3), (dg, 2)])
    assert not mixed.exact_grid
    # Against the exact lattices composed in another order: no exact joint grid exists, so
    # check both against a fine common grid.
    fine = compose_mechanisms([(dg, 2), (dlap, 3)], spacing=2.0**-13)
    for eps in (0.0, 1.0, 2.0):
        assert overlaps(mixed.delta(eps), fine.delta(eps))


# ---------------------------------------------------------------------------------------------
# The continuous Gaussian baseline (issue 3 acceptance)
# ---------------------------------------------------------------------------------------------


def test_gaussian_composition_acceptance_number() -> None:
    result = gaussian_composition_epsilon(1.0, 1.0, 1000, 1e-5)
    assert abs(float(result) - 633.9298513356146) <= 1e-9 * 633.9298513356146
    assert_in(mp.mpf(633.9298513356146), result)
    assert result.relative_width < 1e-14


@pytest.mark.slow
@given(sigma=st.floats(0.5, 20.0), count=st.integers(1, 500), delta=st.floats(1e-10, 1e-2))
@FAST
def test_gaussian_composition_round_trip(sigma: float, count: int, delta: float) -> None:
    eps = gaussian_composition_epsilon(sigma, 1.0, count, delta)
    assert gaussian_composition_delta(sigma, 1.0, count, float(eps)).hi <= delta * (1 + 1e-12)
    single = gaussian_composition_epsilon(sigma / math.sqrt(count), 1.0, 1, delta)
    assert overlaps(eps, single) or abs(eps.hi - single.hi) <= 1e-12 * single.hi


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mechanism",
    [
        AdditiveNoise(Skellam.from_rates(3, 5), 1),
        AdditiveNoise(Geometric(0.5), 1),
        AdditiveNoise(CenteredBinomial(7), 1),
    ],
    ids=repr,
)
def test_unsupported_mechanisms(mechanism: Any) -> None:
    with pytest.raises(UnsupportedError):
        pld(mechanism)


def test_parameter_errors() -> None:
    dlap = AdditiveNoise(DiscreteLaplace(5.0), 1)
    with pytest.raises(ParameterError, match="spacing"):
        pld(dlap, spacing=0.0)
    with pytest.raises(ParameterError, match="count"):
        pld(dlap).self_compose(0)
    with pytest.raises(ParameterError, match="other"):
        pld(dlap).compose(pld(AdditiveNoise(DiscreteLaplace(3.0), 1)))
    with pytest.raises(ParameterTypeError):
        pld(dlap).compose(dlap)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError):
        pld("not a mechanism")
    with pytest.raises(ParameterError):
        compose_mechanisms([])
    with pytest.raises(ParameterError, match="delta"):
        pld(dlap).epsilon(0.0)
    with pytest.raises(ParameterError, match="epsilon"):
        pld(dlap).delta(-1.0)
    with pytest.raises(ParameterError, match="count"):
        gaussian_composition_epsilon(1.0, 1.0, 0, 1e-5)


# ---------------------------------------------------------------------------------------------
# The second-order optimistic side: a mean-preserving contraction onto the grid
# ---------------------------------------------------------------------------------------------

ATOMS = st.lists(st.tuples(st.integers(-3000, 3000), st.integers(1, 10**9)), min_size=1, max_size=30)


@given(atoms=ATOMS, threshold=st.floats(-20.0, 20.0))
@FAST
def test_contraction_lowers_every_convex_nondecreasing_expectation(
    atoms: list[tuple[int, int]], threshold: float
) -> None:
    """``Σ q_g f(g h) <= Σ q f(l)`` for ``f(s) = (e^s - e^c)_+`` (conditional Jensen; blocks below means)."""
    frac, h = 8, mp.mpf("0.01")
    out = _contract(atoms, frac)
    assert sum(out.values()) == sum(m for _, m in atoms)  # the pieces partition the mass
    with mp.workdps(40):
        e_c = mp.exp(threshold)

        def f(s: Mpf) -> Mpf:
            return max(mp.zero, mp.exp(s) - e_c)

        before = mp.fsum(m * f(mp.mpf(t) / 2**frac * h) for t, m in atoms)
        after = mp.fsum(m * f(g * h) for g, m in out.items())
        assert after <= before * (1 + mp.mpf(10) ** -30)
        # and the mean moves down by less than one grid step
        mean_before = mp.fsum(mp.mpf(t) * m for t, m in atoms) / 2**frac
        mean_after = mp.fsum(g * m for g, m in out.items())
        total = sum(m for _, m in atoms)
        assert mean_before - total <= mean_after <= mean_before


def test_contraction_keeps_atoms_on_the_grid_and_piles_at_either_end() -> None:
    unit = 1 << 8
    assert _contract([(3 * unit, 5), (7 * unit, 2)], 8) == {3: 5, 7: 2}
    # A pile against the top end (mass 10 at 9.5 steps) is contracted from the inside:
    # nothing of it is rounded down by a whole step.
    atoms = [(int((k + 0.5) * unit), 1) for k in range(9)] + [(int(9.5 * unit), 10)]
    out = _contract(atoms, 8)
    mean_before = sum(t * m for t, m in atoms) / unit
    mean_after = sum(g * m for g, m in out.items())
    assert mean_before - mean_after < 1.0


def test_optimistic_end_is_second_order_for_skellam() -> None:
    """100 × Skellam(100) at δ = 1e-5: the first-order lower end was 4.36953 even at h = 2^-13."""
    dist = pld(AdditiveNoise(Skellam(100), 1), spacing=2.0**-11, dps=20).self_compose(100)
    got = dist.epsilon(1e-5)
    assert got.lo > 4.375
    assert got.hi - got.lo < 1e-3  # 100 steps of h/2 would be 2.4e-2


@pytest.mark.slow
def test_hundred_skellams_on_the_default_grid() -> None:
    """The ledger's default grid (refined for 100 sparse atoms, coarsened as it grows) is tighter
    than a single mechanism's default grid was uncoarsened: [4.37591, 4.37609]."""
    got = compose_events([(AdditiveNoise(Skellam(100), 1), 100)], "replace-one").epsilon(1e-5)
    assert got.lo > 4.37598
    assert got.hi < 4.376088
    assert got.hi - got.lo < 1.1e-4  # first-order rounding gave [4.36953, 4.37609]
    # One mechanism's own default grid, coarsened beyond MAX_GRID_POINTS: still second order.
    coarsened = pld(AdditiveNoise(Skellam(100), 1), dps=20).self_compose(100).epsilon(1e-5)
    assert coarsened.lo > 4.37589
    assert coarsened.hi < 4.37609


def test_rounded_grid_lower_end_below_the_exact_discrete_gaussian() -> None:
    """Atoms 256 grid steps apart (``Δ/σ² = 1/4``): a contraction merges neighbours that far apart,
    so the width is of order ``h·Δ/σ²`` per step rather than ``h²`` (still far below ``h``)."""
    dist = pld(AdditiveNoise(DiscreteGaussian(2.0), 1), spacing=2.0**-10, dps=20).self_compose(10)
    assert not dist.exact_grid
    summed = AdditiveNoise(SumOfDiscreteGaussians(2.0, 10), 10)
    for eps in (0.0, 1.0, 3.0):
        exact = summed.delta(eps, 20)
        got = dist.delta(eps)
        assert got.lo <= exact.hi
        assert exact.lo <= got.hi
        assert got.hi - got.lo < 4e-3 * got.hi
    got_eps, exact_eps = dist.epsilon(1e-6), summed.epsilon(1e-6, 20)
    assert overlaps(got_eps, exact_eps)
    assert got_eps.relative_width < 2e-3


def test_rounded_grid_discrete_laplace_width_is_second_order() -> None:
    h = 2.0**-12
    dist = pld(AdditiveNoise(DiscreteLaplace(1000.0), 1), spacing=h).self_compose(30)
    with mp.workdps(REF_DPS):
        exact = brute_epsilon(binomial_atoms(1000.0, 30), 1e-3)
    got = dist.epsilon(1e-3)
    assert_in(exact, got)
    assert got.hi - got.lo < 30 * h / 5  # rounding each loss down would cost up to 30 h


# ---------------------------------------------------------------------------------------------
# Continuous noise by cells of the output axis
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("sigma", "count"), [(2.0, 1), (2.0, 10), (5.0, 200)])
def test_continuous_gaussian_cells_enclose_the_closed_form(sigma: float, count: int) -> None:
    dist = pld(AdditiveNoise(Gaussian(sigma), 1.0), spacing=2.0**-10, dps=20).self_compose(count)
    exact = gaussian_composition_epsilon(sigma, 1.0, count, 1e-5)
    got = dist.epsilon(1e-5)
    assert overlaps(got, exact), (got, exact)
    assert got.relative_width < 3e-5
    for eps in (0.0, 0.5, 2.0):
        assert overlaps(dist.delta(eps), gaussian_composition_delta(sigma, 1.0, count, eps))


def _laplace_two_fold_delta(a: Mpf, eps: Mpf) -> Mpf:
    """``δ(ε)`` of two Laplace mechanisms from the law of the loss (module docstring)."""
    atoms = [(a, mp.mpf(1) / 2), (-a, mp.exp(-a) / 2)]

    def density(x: Mpf) -> Mpf:
        return mp.exp((x - a) / 2) / 4

    def g(s: Mpf) -> Mpf:
        return max(mp.zero, 1 - mp.exp(eps - s))

    def against_density(shift: Mpf) -> Mpf:
        """``∫_{-a}^{a} f(l) (1 - e^{ε - shift - l})_+ dl`` in closed form."""
        u = max(-a, eps - shift)
        if u >= a:
            return mp.zero
        first = (1 - mp.exp((u - a) / 2)) / 2
        second = mp.exp(eps - shift - a / 2) / 2 * (mp.exp(-u / 2) - mp.exp(-a / 2))
        return first - second

    total = mp.fsum(p1 * p2 * g(l1 + l2) for l1, p1 in atoms for l2, p2 in atoms)
    total += 2 * mp.fsum(p * against_density(loss) for loss, p in atoms)
    breaks = sorted({-a, a, *(x for x in (eps - a, eps + a) if -a < x < a)})
    total += mp.quad(lambda l1: density(l1) * against_density(l1), breaks)
    return total


@pytest.mark.slow
def test_continuous_laplace_two_fold_against_quadrature() -> None:
    b = 2.0
    dist = pld(AdditiveNoise(Laplace(b), 1.0), spacing=2.0**-12, dps=20)
    two = dist.self_compose(2)
    with mp.workdps(30):
        a = 1 / mp.mpf(b)
        for eps in (0.0, 0.2, 0.6, 0.9):
            exact = _laplace_two_fold_delta(a, mp.mpf(eps))
            got = two.delta(eps)
            assert got.lo <= exact <= got.hi, (eps, got, exact)
            assert overlaps(AdditiveNoise(Laplace(b), 1.0).delta(eps), dist.delta(eps))


def test_continuous_laplace_ledger_is_tight_on_the_default_grid() -> None:
    """The heavy end atoms ``±Δ/b`` sit on grid points (offset and spacing chosen for them)."""
    ledger = compose_events([(AdditiveNoise(Laplace(10.0), 1.0), 100)], "add-remove")
    got = ledger.epsilon(1e-5)
    assert got.relative_width < 1e-4
    assert got.lo < 4.53  # the RDP route's answer
    mixed = compose_events(
        [(AdditiveNoise(Laplace(10.0), 1.0), 50), (PureDP(0.05, "thm", "add-remove"), 20)], "add-remove"
    )
    assert mixed.epsilon(1e-5).relative_width < 1e-3


def test_continuous_laplace_against_dp_accounting() -> None:
    """The ledger that fell back to RDP (4.53) now has a PLD route: dp_accounting's PLD says 4.2203."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    ours = compose_events([(AdditiveNoise(Laplace(10.0), 1.0), 100)], "add-remove").epsilon(1e-5)
    theirs = pld_lib.from_laplace_mechanism(10.0, value_discretization_interval=1e-4).self_compose(100)
    pessimistic = theirs.get_epsilon_for_delta(1e-5)
    assert ours.hi >= 4.2201  # dp_accounting's optimistic estimate
    assert abs(float(ours.hi) - pessimistic) < 2e-3 * pessimistic
    assert ours.hi < 4.53


# ---------------------------------------------------------------------------------------------
# Ledgers: compose_events
# ---------------------------------------------------------------------------------------------


def test_gaussian_ledger_is_one_gaussian() -> None:
    items = [(AdditiveNoise(Gaussian(2.0), 1.0), 10), (AdditiveNoise(Gaussian(3.0), 2.0), 5)]
    lo, hi = gaussian_equivalent_sigma([(2.0, 1.0, 10), (3.0, 2.0, 5)])
    with mp.workdps(40):
        exact = 1 / mp.sqrt(mp.mpf(10) / 4 + mp.mpf(5) * 4 / 9)
        assert lo <= exact <= hi
        assert hi - lo <= 2.0**-50 * exact
    for relation in ("add-remove", "replace-one"):
        ledger = compose_events(items, relation)
        assert ledger.gaussian_sigma == (lo, hi)
        assert overlaps(ledger.epsilon(1e-6), gaussian_composition_epsilon(float(exact), 1.0, 1, 1e-6))
    with pytest.raises(ParameterError, match="sigma"):
        gaussian_equivalent_sigma([(0.0, 1.0, 1)])
    with pytest.raises(ParameterError, match="count"):
        gaussian_equivalent_sigma([(1.0, 1.0, 0)])


def rr_atoms(eps: float, count: int, dlt: float = 0.0) -> list[tuple[Mpf, Mpf]]:
    """``count``-fold randomized response (the KOV pair of ε) as (P, Q) atoms; ``+∞`` carries the rest."""
    e = mp.exp(mp.mpf(eps))
    up = e / (1 + e)
    keep = (1 - mp.mpf(dlt)) ** count
    atoms = []
    for k in range(count + 1):
        p = keep * mp.binomial(count, k) * up**k * (1 - up) ** (count - k)
        atoms.append((p, p * mp.exp(-(2 * k - count) * mp.mpf(eps))))
    atoms.append((1 - keep, mp.zero))
    return atoms


def test_cited_guarantees_compose_exactly() -> None:
    with mp.workdps(REF_DPS):
        pure = compose_events([(PureDP(0.3, "thm"), 20)], "replace-one")
        approx = compose_events([(ApproxDP(0.3, 1e-6, "thm"), 20)], "replace-one")
        assert pure.directions["replace-one"].exact_grid
        for eps in (0.0, 1.0, 3.0):
            assert_in(brute_delta(rr_atoms(0.3, 20), eps), pure.delta(eps))
            assert_in(brute_delta(rr_atoms(0.3, 20, 1e-6), eps), approx.delta(eps))
        assert_in(brute_epsilon(rr_atoms(0.3, 20), 1e-5), pure.epsilon(1e-5))
        assert pure.delta(0.5).digits() > 15
    with pytest.raises(UnsupportedEventError, match="replace-one"):
        compose_events([(PureDP(0.3, "thm"), 2)], "add-remove")


def test_mixed_ledger_against_the_product_of_atoms() -> None:
    """Randomized response and a discrete Laplace on one rounded grid: atoms multiply."""
    with mp.workdps(REF_DPS):
        mixed = compose_events(
            [(PureDP(0.25, "thm"), 3), (AdditiveNoise(DiscreteLaplace(3.0), 1), 4)], "replace-one"
        )
        assert not mixed.directions["replace-one"].exact_grid
        atoms = [
            (p1 * p2, q1 * q2)
            for (p1, q1), (p2, q2) in itertools.product(rr_atoms(0.25, 3), binomial_atoms(3.0, 4))
        ]
        for eps in (0.0, 0.5, 1.5):
            got = mixed.delta(eps)
            assert_in(brute_delta(atoms, eps), got)
            assert got.hi - got.lo < 1e-3 * got.hi
        assert_in(brute_epsilon(atoms, 1e-3), mixed.epsilon(1e-3))


def test_subsampled_ledger_takes_the_worse_direction() -> None:
    event = PoissonSampled(AdditiveNoise(DiscreteGaussian(2.0), 1), 0.2)
    ledger = compose_events([(event, 20)], Neighbouring.ADD_REMOVE, dps=20)
    assert set(ledger.directions) == {"remove", "add"}
    for delta in (1e-3, 1e-6):
        parts = [d.epsilon(delta) for d in ledger.directions.values()]
        got = ledger.epsilon(delta)
        assert got.hi == max(p.hi for p in parts)
        assert got.lo == max(p.lo for p in parts)
    # A symmetric ledger is composed once under add-remove.
    symmetric = compose_events([(AdditiveNoise(DiscreteGaussian(2.0), 1), 3)], "add-remove")
    assert len(symmetric.directions) == 1


@pytest.mark.slow
def test_composition_is_additive_in_the_counts() -> None:
    event = SampledWithoutReplacement(AdditiveNoise(Gaussian(2.0), 1.0), 0.1)
    split = compose_events([(event, 30), (event, 50)], "replace-one", spacing=2.0**-9, dps=20)
    whole = compose_events([(event, 80)], "replace-one", spacing=2.0**-9, dps=20)
    for delta in (1e-3, 1e-6):
        assert overlaps(split.epsilon(delta), whole.epsilon(delta))
    pair = event.dominating_pairs("replace-one")["replace-one"]
    one = PrivacyLossDistribution.from_pair(pair, spacing=2.0**-9, dps=20)
    for eps in (0.0, 0.5):
        assert overlaps(
            one.self_compose(30).compose(one.self_compose(50)).delta(eps), one.self_compose(80).delta(eps)
        )


@pytest.mark.parametrize(
    ("event", "relation", "match"),
    [
        (DistributedSum(DiscreteGaussian(2.0), 5), "add-remove", "noise share"),
        (AdditiveNoise(Geometric(0.5), 1), "replace-one", "RDP"),
        (AdditiveNoise(Skellam.from_rates(3, 5), 1), "add-remove", "RDP"),
        (PureDP(1.0, "thm", "add-remove"), "replace-one", "add-remove"),
        ("not an event", "replace-one", "PLD route"),
        (PoissonSampled(DistributedSum(DiscreteGaussian(2.0), 5), 0.1), "add-remove", "share"),
    ],
    ids=repr,
)
def test_compose_events_refuses_what_it_cannot_certify(event: Any, relation: str, match: str) -> None:
    with pytest.raises(UnsupportedEventError, match=match):
        compose_events([(event, 2)], relation)


def test_compose_events_parameter_errors() -> None:
    mech = AdditiveNoise(DiscreteLaplace(3.0), 1)
    with pytest.raises(ParameterError, match="items"):
        compose_events([], "replace-one")
    with pytest.raises(ParameterTypeError, match=r"items\[0\]"):
        compose_events([mech], "replace-one")  # type: ignore[list-item]
    with pytest.raises(ParameterError, match="count"):
        compose_events([(mech, 0)], "replace-one")
    with pytest.raises(ParameterError, match="spacing"):
        compose_events([(mech, 1)], "replace-one", spacing=-1.0)
    with pytest.raises(ParameterError, match="neighbouring"):
        compose_events([(mech, 1)], "sideways")


# ---------------------------------------------------------------------------------------------
# Coarsening: long compositions keep a bounded grid (issue 15 §2.1)
# ---------------------------------------------------------------------------------------------


def test_coarsened_discrete_laplace_encloses_the_binomial(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forced to coarsen from 2^-12, 300 discrete Laplace releases still enclose the exact
    binomial ε (60 digits) and δ. The binomial lattice (steps of 2/b, 27 grid steps) is a comb
    that no coarsening smooths: it is postponed to 4 MAX_GRID_POINTS, then done regardless, and
    the width is first order there (rounding every loss down would cost 300 h = 0.07)."""
    import accounting.pld as module

    monkeypatch.setattr(module, "MAX_GRID_POINTS", 2**8)
    dist = pld(AdditiveNoise(DiscreteLaplace(300.0), 1), spacing=2.0**-12, dps=20).self_compose(300)
    assert dist.grid_points <= 4 * 2**8
    assert float(dist.spacing.hi) >= 2.0**-10  # coarsened twice
    atoms = binomial_atoms(300.0, 300)
    with mp.workdps(REF_DPS):
        exact = brute_epsilon(atoms, 1e-6)
        exact_delta = brute_delta(atoms, 0.5)
    got = dist.epsilon(1e-6)
    assert_in(exact, got)
    assert got.relative_width < 3e-2
    assert_in(exact_delta, dist.delta(0.5))


def test_coarsened_gaussian_cells_enclose_the_closed_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """Continuous Gaussian cells composed 10^4 times on a grid held to 2^12 points: Balle–Wang."""
    import accounting.pld as module

    monkeypatch.setattr(module, "MAX_GRID_POINTS", 2**12)
    event = AdditiveNoise(Gaussian(40.0), 1.0)
    dist = PrivacyLossDistribution.from_mechanism(event, spacing=2.0**-12, dps=20).self_compose(10**4)
    assert dist.grid_points <= 2**12
    assert float(dist.spacing.hi) >= 2.0**-6
    exact = gaussian_composition_epsilon(40.0, 1.0, 10**4, 1e-5)
    got = dist.epsilon(1e-5)
    assert overlaps(got, exact), (got, exact)
    assert got.relative_width < 3e-4  # uncoarsened (2 s, 2e5 points): 3.6e-5


def test_heterogeneous_grids_meet_on_the_coarser_spacing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A coarsened composition composes with an uncoarsened one (spacings a power of two apart):
    the discrete Laplace binomial again, split 200 + 3."""
    import accounting.pld as module

    monkeypatch.setattr(module, "MAX_GRID_POINTS", 2**8)
    one = pld(AdditiveNoise(DiscreteLaplace(300.0), 1), spacing=2.0**-12, dps=20)
    many, few = one.self_compose(200), one.self_compose(3)
    assert many.spacing != few.spacing
    both = many.compose(few)
    with mp.workdps(REF_DPS):
        exact = brute_epsilon(binomial_atoms(300.0, 203), 1e-6)
    assert_in(exact, both.epsilon(1e-6))
    with pytest.raises(ParameterError, match="power of two"):
        few.compose(pld(AdditiveNoise(DiscreteLaplace(300.0), 1), spacing=3 * 2.0**-12, dps=20))


@pytest.mark.slow
def test_long_skellam_composition_stays_on_a_bounded_grid() -> None:
    """10^4 Skellam(100) releases (10^6 is the benchmark): uncoarsened the grid would hold about
    1.6·10^6 points per side; coarsened it holds at most MAX_GRID_POINTS, the enclosure stays
    within 2e-5 of ε, and the RDP route (an independent certified upper bound) lies above it."""
    from accounting import Accountant
    from accounting.pld import MAX_GRID_POINTS

    event = AdditiveNoise(Skellam(100), 1)
    dist = compose_events([(event, 10**4)], "replace-one").directions["replace-one"]
    assert dist.grid_points <= MAX_GRID_POINTS
    got = dist.epsilon(1e-5)
    assert got.relative_width < 2e-5
    rdp = Accountant().compose(event, 10**4).epsilon(1e-5, route="rdp")
    assert got.hi < rdp.hi < 1.1 * got.hi


# ---------------------------------------------------------------------------------------------
# The Gaussian closed form: both ends certified (issue 15 §2.7)
# ---------------------------------------------------------------------------------------------


def _balle_wang_epsilon(sigma: Mpf, delta: Mpf) -> Mpf:
    """ε(δ) of the Gaussian mechanism (sensitivity 1) by bisection on Balle–Wang's δ(ε) at 80 digits."""
    with mp.workdps(80):

        def dlt(e: Mpf) -> Mpf:
            return mp.ncdf(1 / (2 * sigma) - e * sigma) - mp.exp(e) * mp.ncdf(-1 / (2 * sigma) - e * sigma)

        if dlt(0) <= delta:
            return mp.zero
        lo, hi = mp.zero, mp.one
        while dlt(hi) > delta:
            hi *= 2
        for _ in range(300):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
        return hi


@pytest.mark.parametrize(
    ("sigma", "count", "delta"),
    [
        (Fraction(1, 1000001), 1, 1e-5),  # float(σ) rounded up: both ends were below the truth
        (Fraction(3, 13), 1, 1e-5),
        (Fraction(1, 250), 1, 1e-5),
        (1.0, 10**6, 1e-5),  # the example: σ_eff = 1e-3
        (10.0, 1, "flat"),  # δ nearly δ(0): δ barely moves across floats of ε
        (1000.0, 1, "flat"),
    ],
)
def test_gaussian_enclosure_contains_the_sixty_digit_truth(sigma: Any, count: int, delta: Any) -> None:
    """Issue 15 §2.7: the lower end was ``from_rounded_up``'s two floats below an answer that was
    itself a float search with a 1e-25 margin on δ, and a Fraction σ went through float(σ); where
    δ is flat in ε (ε ~ 1e-14) or σ was rounded up, [lo, hi] excluded the truth."""
    with mp.workdps(80):
        s = mp.mpf(sigma.numerator) / sigma.denominator if isinstance(sigma, Fraction) else mp.mpf(sigma)
        s_eff = s / mp.sqrt(count)
        if delta == "flat":
            delta = float((mp.ncdf(1 / (2 * s_eff)) - mp.ncdf(-1 / (2 * s_eff))) * (1 - mp.mpf(1e-12)))
        exact = _balle_wang_epsilon(s_eff, mp.mpf(delta))
    got = (
        AdditiveNoise(Gaussian(sigma), 1.0).epsilon(delta)
        if count == 1
        else gaussian_composition_epsilon(sigma, 1.0, count, delta)
    )
    assert_in(exact, got)
    if count == 1:
        ledger = compose_events([(AdditiveNoise(Gaussian(sigma), 1.0), 1)], "replace-one")
        assert_in(exact, ledger.epsilon(delta))
