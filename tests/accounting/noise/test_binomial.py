"""``Binomial(trials, p)`` (accounting.noise): exact PMF, tails, samplers, its ``p = 1/2`` case.

The references are independent of the code under test: exact rationals from ``math.comb`` and
:class:`fractions.Fraction` for the PMF and the tails, ``mpmath.loggamma`` at 80 digits for the
log-factorials, and brute-force hockey-stick sums ``Σ max(0, P - e^ε Q)`` for the mechanism.
The centered binomial's answers are compared with the values the code before ``Binomial`` gave
(commit 6230d00, recorded below).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from mpmath import iv, mp
from scipy import stats

from accounting import _exact
from accounting.accountant import Accountant
from accounting.certified import Mpf, lower, precision, upper
from accounting.divergence import hockey_stick
from accounting.errors import ParameterError, ParameterTypeError
from accounting.mechanisms import AdditiveNoise
from accounting.noise import EXACT_ANCHOR_BITS, Binomial, CenteredBinomial, Shifted, ln_factorial
from verification.goodness_of_fit import check_sampler

SEEDS = np.random.SeedSequence(20261125).spawn(16)


def rng(i: int) -> np.random.Generator:
    return np.random.default_rng(SEEDS[i])


def exact_pmf(n: int, p: Fraction) -> list[Fraction]:
    """``C(n, k) p^k (1-p)^(n-k)`` for ``k = 0..n``, as exact rationals."""
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def as_mpf(x: Fraction) -> Mpf:
    return mp.mpf(x.numerator) / x.denominator


# -- the PMF -----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n", "p"),
    [(1, 0.3), (7, Fraction(1, 3)), (40, 0.9), (300, 0.01), (2000, 0.5), (6000, 0.3)],
    ids=repr,
)
def test_pmf_encloses_the_exact_rational(n: int, p: float | Fraction) -> None:
    """Every interval holds ``C(n, k) p^k (1-p)^(n-k)``; (6000, 0.3) takes the log-factorial anchor."""
    noise = Binomial(n, p)
    a, d = Fraction(p).numerator, Fraction(p).denominator
    lo, hi = (0, n) if n <= 300 else (int(n * float(p)) - 60, int(n * float(p)) + 60)
    table = noise.pmf_intervals(lo - 2, hi + 2, dps=20)
    with mp.workdps(60):
        for x, value in zip(range(lo - 2, hi + 3), table, strict=True):
            # C(n, x) a^x (d-a)^(n-x) / d^n in integers (Fractions of 300k-bit numbers are slow)
            exact = math.comb(n, x) * a**x * (d - a) ** (n - x) if 0 <= x <= n else 0
            ref = mp.mpf(exact) / mp.mpf(d) ** n
            assert lower(value) <= ref <= upper(value), (n, p, x)
            if ref > 0:
                assert upper(value) - lower(value) <= ref * mp.mpf(10) ** -18, (n, p, x)


def test_the_anchor_switches_from_the_exact_rational_to_log_factorials() -> None:
    """The anchor is exact while ``n`` times the bits of p's denominator is at most EXACT_ANCHOR_BITS."""
    assert 300 * Fraction(0.01).denominator.bit_length() <= EXACT_ANCHOR_BITS
    assert 6000 * Fraction(0.3).denominator.bit_length() > EXACT_ANCHOR_BITS


def test_large_trials_against_mpmath_loggamma() -> None:
    """10^9 trials (far beyond any exact rational): the PMF near the mean against mpmath at 80 digits."""
    n, p = 10**9, Fraction(2, 5)
    noise = Binomial(n, p)
    mean = 4 * 10**8
    table = noise.pmf_intervals(mean - 3, mean + 3, dps=25)
    with mp.workdps(80):
        for k, value in zip(range(mean - 3, mean + 4), table, strict=True):
            log_ref = (
                mp.loggamma(n + 1)
                - mp.loggamma(k + 1)
                - mp.loggamma(n - k + 1)
                + k * mp.log(mp.mpf(2) / 5)
                + (n - k) * mp.log(mp.mpf(3) / 5)
            )
            ref = mp.exp(log_ref)
            assert lower(value) <= ref <= upper(value)
            assert upper(value) - lower(value) <= ref * mp.mpf(10) ** -22


@pytest.mark.parametrize("m", [0, 1, 17, 255, 256, 257, 1000, 123_456, 10**9, 10**15])
@pytest.mark.parametrize("dps", [15, 40, 90])
def test_ln_factorial_encloses_loggamma(m: int, dps: int) -> None:
    with mp.workdps(dps + 40):
        ref = mp.loggamma(m + 1)
    with precision(dps):
        value = ln_factorial(m)
        assert lower(value) <= ref <= upper(value)
        assert upper(value) - lower(value) <= max(abs(ref), 1) * mp.mpf(10) ** -(dps + 5)


def test_pmf_sums_to_one_and_float_pmf_agrees() -> None:
    cases: list[tuple[int, float | Fraction]] = [(25, 0.3), (12, Fraction(2, 7))]
    for n, p in cases:
        noise = Binomial(n, p)
        with precision(20):
            total = sum(noise.pmf_intervals(0, n), iv.mpf(0))
            assert lower(total) <= 1 <= upper(total)
        exact = exact_pmf(n, Fraction(p))
        assert np.allclose(noise.pmf(np.arange(n + 1)), [float(x) for x in exact], rtol=1e-12, atol=0)
        assert noise.pmf(np.array([-1, n + 1])).tolist() == [0.0, 0.0]


# -- tails, moments, structure -----------------------------------------------------------------


@pytest.mark.parametrize(("n", "p"), [(30, 0.5), (50, 0.1), (40, Fraction(5, 6))], ids=repr)
def test_tail_bounds_dominate_the_exact_tails(n: int, p: float | Fraction) -> None:
    noise = Binomial(n, p)
    exact = exact_pmf(n, Fraction(p))
    with mp.workdps(40):
        for t in range(-2, n + 3):
            sf = sum(exact[max(t, 0) :], Fraction(0)) if t <= n else Fraction(0)
            cdf = sum(exact[: t + 1], Fraction(0)) if t >= 0 else Fraction(0)
            assert noise.sf_bound(t) >= as_mpf(sf), t
            assert noise.cdf_bound(t) >= as_mpf(cdf), t
    # Chernoff's bound is far tighter than Hoeffding's for a small p (the window it gives).
    a, b = Binomial(10_000, 0.001).window(mp.mpf(10) ** -30)
    assert a >= 0
    assert b < 120


def test_moments_support_and_symmetry() -> None:
    assert Binomial(10, 0.3).support() == (0.0, 10.0)
    assert Binomial(10, Fraction(1, 3)).variance() == float(Fraction(10, 3) * Fraction(2, 3))
    assert CenteredBinomial(9).support() == (-4.0, 5.0)
    assert CenteredBinomial(9).variance() == 9 / 4
    assert not Binomial(10, 0.5).symmetric  # its support [0, 10] is not symmetric about 0
    assert CenteredBinomial(10).symmetric
    assert not CenteredBinomial(9).symmetric
    assert Binomial(10, 0.2).log_concave
    assert Binomial(4, 0.5) == Binomial(4, Fraction(1, 2))
    assert Binomial(3, 0.2).max_privacy_loss(1) == mp.inf
    assert Binomial(3, 0.2).max_privacy_loss(0) == 0


# -- p = 1/2: the centered binomial, unchanged -------------------------------------------------

#: ``(trials, sensitivity, δ, ε, [ε(δ) upper, lower, δ(ε) upper, lower, PLD ε(δ) of 3 upper, lower])``
#: of ``AdditiveNoise(CenteredBinomial(trials), sensitivity)`` as the code before Binomial gave them
#: (commit 6230d00; odd trials have no PLD composition).
CENTERED_BEFORE = [
    (40, 3, 0.001, 0.5, [3.1904642491084316, 3.190464249108431, 0.21623164351791374, 0.2162316435179137,
                         6.095854466193246, 6.095540647403775]),
    (7, 1, 0.01, 0.1, [1.9050881545350582, 1.905088154535058, 0.2496097138734861, 0.24960971387348607]),
    (1000, 5, 1e-06, 0.3, [1.3741152008892163, 1.3741152008892161, 0.033472262295686436, 0.03347226229568643,
                           2.496352398955076, 2.49624385039137]),
    (2001, 7, 1e-05, 1.0, [1.188000467756996, 1.1880004677569957, 9.778360213043233e-05,
                           9.778360213043232e-05]),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("n", "s", "delta", "eps", "before"), CENTERED_BEFORE, ids=lambda x: repr(x)[:12])
def test_centered_binomial_answers_are_unchanged(
    n: int, s: int, delta: float, eps: float, before: list[float]
) -> None:
    mech = AdditiveNoise(CenteredBinomial(n), s)
    e, d = mech.epsilon(delta), mech.delta(eps)
    assert [e.upper, e.lower, d.upper, d.lower] == before[:4]
    if n % 2 == 0:
        # The composition takes float products: its upper end may move by the
        # certified slack they are allowed (a 2^-20 share of δ; about 1e-11 of ε here), its lower
        # end by as much (or up, where more of the grids is kept). The old upper end is the truth
        # to 16 digits here (40 digits by brute force over the 41^3 outputs for n = 40:
        # 6.09585446619324528).
        pld = Accountant().compose(mech, 3).epsilon(delta)
        upper, lower = before[4:]
        assert pld.lower <= upper <= pld.upper
        assert pld.upper == pytest.approx(upper, rel=1e-9)
        assert pld.lower >= lower * (1 - 1e-9)


@pytest.mark.parametrize("n", [6, 7, 40])
def test_binomial_at_one_half_is_the_centered_binomial_moved(n: int) -> None:
    centered, plain = CenteredBinomial(n), Binomial(n, 0.5)
    shift = n // 2
    with precision(20):
        for a, b in zip(
            centered.pmf_intervals(-shift - 1, n), plain.pmf_intervals(-1, n + shift), strict=True
        ):
            assert (lower(a), upper(a)) == (lower(b), upper(b))
    for s in (1, 3):
        x = AdditiveNoise(centered, s).epsilon(1e-3)
        y = AdditiveNoise(plain, s).epsilon(1e-3)
        assert (x.upper, x.lower) == (y.upper, y.lower)


def test_exact_sampler_at_one_half_is_the_old_popcount_word_for_word() -> None:
    for n in (1, 63, 64, 65, 131, 1000):
        old = _exact.centered_binomial(np.random.default_rng(n), n, 3000)
        assert np.array_equal(CenteredBinomial(n).sample_exact(np.random.default_rng(n), 3000), old)
        assert np.array_equal(Binomial(n, 0.5).sample_exact(np.random.default_rng(n), 3000), old + n // 2)
    a = CenteredBinomial(10).sample(np.random.default_rng(1), 50)
    assert np.array_equal(a, np.random.default_rng(1).binomial(10, 0.5, 50) - 5)


# -- samplers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("noise", "seed"),
    [
        (Binomial(20, 0.3), 1),
        (Binomial(7, Fraction(1, 3)), 2),
        (Binomial(150, 0.95), 3),
        (Binomial(3, 0.001), 4),
    ],
    ids=repr,
)
def test_exact_sampler_fits_the_exact_pmf(noise: Binomial, seed: int) -> None:
    """Goodness of fit (chi-square and G-test with pooled tails): dyadic p, p = 1/3 (an infinite
    binary expansion), p near 1 and a tiny p."""
    report = check_sampler(noise, rng(seed), 40_000, noise.sample_exact)
    assert report.passed, report.summary()


def test_samplers_shapes_seeds_and_moments() -> None:
    noise = Binomial(10**6, 0.4999)
    draws = noise.sample_exact(rng(5), (40, 5))
    assert draws.shape == (40, 5)
    assert draws.dtype == np.int64
    assert np.array_equal(draws, noise.sample_exact(rng(5), (40, 5)))
    z = (draws.mean() - 499_900) / math.sqrt(noise.variance() / draws.size)
    assert abs(z) < 5
    assert Binomial(5, 0.5).sample_exact(rng(6), 0).shape == (0,)
    fast = Binomial(50, 0.2).sample(rng(7), 20_000)
    assert fast.dtype == np.int64
    assert fast.min() >= 0
    assert fast.max() <= 50
    assert stats.ttest_1samp(fast, 10).pvalue > 1e-4


def test_exact_sampler_refuses_more_work_than_its_limit() -> None:
    with pytest.raises(ParameterError) as info:
        Binomial(10**9, 0.3).sample_exact(rng(8), 100)
    assert info.value.name == "trials"
    with pytest.raises(ParameterTypeError):
        Binomial(5, 0.3).sample_exact(np.random.RandomState(1), 3)  # type: ignore[arg-type]


# -- the mechanism: both shifts, against brute force -------------------------------------------


def brute_delta(n: int, p: Fraction, shift: int, eps: float) -> Mpf:
    """``max over ±shift of Σ_x max(0, P(x - shift) - e^ε P(x))`` at 60 digits (exact PMF)."""
    pmf = exact_pmf(n, p)
    best = mp.zero
    with mp.workdps(60):
        e = mp.exp(mp.mpf(eps))
        for k in (shift, -shift):
            total = mp.zero
            for x in range(min(0, k), n + max(0, k) + 1):
                px = pmf[x - k] if 0 <= x - k <= n else Fraction(0)
                qx = pmf[x] if 0 <= x <= n else Fraction(0)
                term = as_mpf(px) - e * as_mpf(qx)
                if term > 0:
                    total += term
            best = max(best, total)
    return best


@pytest.mark.parametrize(("n", "p", "shift"), [(30, 0.2, 1), (60, Fraction(2, 3), 3), (25, 0.5, 2)], ids=repr)
def test_mechanism_delta_and_epsilon_against_brute_force(n: int, p: float | Fraction, shift: int) -> None:
    """δ(ε) encloses the brute force over both shifts (they differ unless p = 1/2); ε(δ) is never
    below the true value (δ at its upper end is at most the target) and tight."""
    mech = AdditiveNoise(Binomial(n, p), shift)
    slack = mp.mpf(10) ** -30
    for eps in (0.0, 0.3, 1.5):
        ref = brute_delta(n, Fraction(p), shift, eps)
        got = mech.delta(eps)
        with mp.workdps(60):  # compared exactly: both ends are far more precise than the slack
            assert got.lo - slack <= ref <= got.hi + slack
    for delta in (1e-2, 1e-4):
        e = mech.epsilon(delta)
        if math.isinf(e.upper):  # the infinite-loss mass P(X < shift) exceeds δ: no ε suffices
            assert e.lower == math.inf
            assert brute_delta(n, Fraction(p), shift, 700.0) > delta
            continue
        assert brute_delta(n, Fraction(p), shift, float(e.upper)) <= delta + 1e-30
        assert e.upper - e.lower <= 1e-12 * max(1.0, e.upper)
        if e.lower > 0:
            assert brute_delta(n, Fraction(p), shift, float(e.lower) * (1 - 1e-9)) > delta
    noise = Binomial(n, p)
    up, down = (hockey_stick(Shifted(noise, k), noise, 0.3).upper for k in (shift, -shift))
    assert (up == down) == (Fraction(p) == Fraction(1, 2))  # the two shifts differ unless p = 1/2


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: Binomial(0, 0.5), "trials"),
        (lambda: Binomial(-3, 0.5), "trials"),
        (lambda: Binomial(2.5, 0.5), "trials"),  # type: ignore[arg-type]
        (lambda: Binomial(5, 0), "p"),
        (lambda: Binomial(5, 1), "p"),
        (lambda: Binomial(5, -0.2), "p"),
        (lambda: Binomial(5, 1.5), "p"),
        (lambda: Binomial(5, math.nan), "p"),
        (lambda: Binomial(5, math.inf), "p"),
        (lambda: Binomial(5, Fraction(3, 2)), "p"),
        (lambda: Binomial(5, Fraction(0)), "p"),
        (lambda: CenteredBinomial(0), "trials"),
    ],
)
def test_bad_parameters_are_named(make: object, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        make()  # type: ignore[operator]
    assert info.value.name == name


def test_bad_parameter_types_are_named() -> None:
    with pytest.raises(ParameterTypeError) as info:
        Binomial(5, "0.5")  # type: ignore[arg-type]
    assert info.value.name == "p"


def test_binomial_ledgers_round_trip_through_json() -> None:
    """A ledger of binomial noise (float or exact-rational p) is saved and read back unchanged."""
    from fractions import Fraction

    from accounting import AdditiveNoise, Binomial
    from accounting.accountant import Accountant

    ledger = Accountant().compose(AdditiveNoise(Binomial(1000, 0.3), 2))
    ledger.compose(AdditiveNoise(Binomial(64, Fraction(1, 3)), 1))
    back = Accountant.from_dict(json.loads(json.dumps(ledger.to_dict())))
    assert back.ledger == ledger.ledger
    assert back.to_dict()["events"][1]["mechanism"]["noise"] == {
        "type": "Binomial",
        "trials": 64,
        "p": {"fraction": "1/3"},
    }
