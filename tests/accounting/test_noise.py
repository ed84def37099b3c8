"""Tests of :mod:`accounting.noise`: exact PMFs, certified tails, moments and samplers.

Names of results are as in ``papers/distributed-dp-mab.md`` ("the spec"). Every expected value
is either one of the spec's own numbers or an independent computation in this file: closed
forms and direct sums in :mod:`mpmath` at :data:`REF_DPS` digits (the Bessel series for
Skellam, itself checked against ``mp.besseli``; ``mp.loggamma`` for Pólya; direct
normalizing sums for the discrete Gaussian (the library uses Poisson summation for σ >= 1/2);
brute-force convolution for sums of discrete Gaussians;
``math.comb`` for the binomial), never outputs of the code under test. The references live
here and are shared with ``test_divergence.py`` and ``test_mechanisms.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import (
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Geometric,
    Laplace,
    LatticeNoise,
    ParameterError,
    ParameterTypeError,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
)

FAST = settings(max_examples=15, deadline=None)

#: Digits of every reference value (far above the 15-30 digits the library is asked for).
REF_DPS = 50

Mpf = Any

# ---------------------------------------------------------------------------------------------
# Independent references (shared with the divergence and mechanism tests)
# ---------------------------------------------------------------------------------------------


def as_mpf(value: object) -> Mpf:
    """A parameter (float, int or Fraction) as an mpf at the current precision (exact for floats)."""
    if isinstance(value, Fraction):
        return mp.mpf(value.numerator) / value.denominator
    return mp.mpf(value)


def _dg_weight_reach(sigma: Mpf) -> int:
    """Half-width beyond which exp(-x²/(2σ²)) is below 10^-(dps + 10) relative to the peak."""
    return int(mp.ceil(sigma * mp.sqrt(2 * (mp.dps + 10) * mp.log(10)))) + 2


@lru_cache(maxsize=256)
def _dg_table(sigma: float | Fraction, dps: int) -> tuple[int, tuple[Mpf, ...]]:
    """N_Z(0, σ²) on [-W, W] by a *direct* normalizing sum (the library uses Poisson summation)."""
    with mp.workdps(dps):
        s = as_mpf(sigma)
        w = _dg_weight_reach(s) + 40  # also covers every (widened) reference_window
        weights = [mp.exp(-(mp.mpf(x) ** 2) / (2 * s * s)) for x in range(-w, w + 1)]
        total = mp.fsum(weights)
        return -w, tuple(x / total for x in weights)


@lru_cache(maxsize=64)
def _sum_dg_table(sigma: float | Fraction, count: int, dps: int) -> tuple[int, tuple[Mpf, ...]]:
    """The ``count``-fold convolution of N_Z(0, σ²), term by term (quadratic, fine for small n)."""
    offset, one = _dg_table(sigma, dps)
    with mp.workdps(dps):
        table: list[Mpf] = [mp.one]
        start = 0
        for _ in range(count):
            out = [mp.zero] * (len(table) + len(one) - 1)
            for i, a in enumerate(table):
                for j, b in enumerate(one):
                    out[i + j] += a * b
            table, start = out, start + offset
        return start, tuple(table)


def reference_pmf(noise: LatticeNoise, x: int) -> Mpf:
    """P(X = x) from the textbook formula, at the current mpmath precision."""
    if isinstance(noise, Shifted):
        return reference_pmf(noise.base, x - noise.shift)
    if isinstance(noise, DiscreteLaplace):
        if noise.decay is not None:
            q = as_mpf(noise.decay)
            return (1 - q) / (1 + q) * q ** abs(x)
        inv_b = 1 / as_mpf(noise.scale)
        # Definition 4 as printed in the spec (§2.3).
        return (mp.exp(inv_b) - 1) / (mp.exp(inv_b) + 1) * mp.exp(-abs(x) * inv_b)
    if isinstance(noise, Geometric):
        beta = as_mpf(noise.beta)
        return beta**x * (1 - beta) if x >= 0 else mp.zero
    if isinstance(noise, Polya):
        if x < 0:
            return mp.zero
        r, beta = as_mpf(noise.r), as_mpf(noise.beta)
        log_c = mp.loggamma(x + r) - mp.loggamma(x + 1) - mp.loggamma(r)
        return mp.exp(log_c + x * mp.log(beta) + r * mp.log(1 - beta))
    if isinstance(noise, Skellam):
        mu1, mu2 = as_mpf(noise.mu1), as_mpf(noise.mu2)
        k = x - noise.offset
        return mp.exp(-(mu1 + mu2)) * (mu1 / mu2) ** (mp.mpf(k) / 2) * bessel_i(k, 2 * mp.sqrt(mu1 * mu2))
    if isinstance(noise, DiscreteGaussian):
        start, table = _dg_table(noise.sigma, mp.dps)
        i = x - start
        return table[i] if 0 <= i < len(table) else _dg_far(noise.sigma, x, table, start)
    if isinstance(noise, SumOfDiscreteGaussians):
        start, table = _sum_dg_table(noise.sigma, noise.count, mp.dps)
        i = x - start
        if not 0 <= i < len(table):
            raise AssertionError(f"reference table too small for x={x}")
        return table[i]
    if isinstance(noise, CenteredBinomial):
        n, k = noise.trials, x + noise.trials // 2
        if not 0 <= k <= n:
            return mp.zero
        return mp.mpf(math.comb(n, k)) / mp.mpf(2) ** n
    raise TypeError(f"no reference for {noise!r}")


def bessel_i(k: int, z: Mpf) -> Mpf:
    """The modified Bessel function I_k(z), z > 0, by its power series Σ (z/2)^{2m+|k|}/(m!(m+|k|)!).

    All terms are positive (no cancellation), so the plain sum is accurate to the working
    precision; :func:`test_bessel_series_matches_mpmath` checks it against ``mp.besseli``.
    """
    k = abs(k)
    half = z / 2
    term = half**k / mp.factorial(k)
    total = term
    m = 0
    tiny = mp.mpf(2) ** (-mp.prec - 10)
    while True:
        m += 1
        term = term * half * half / (m * (m + k))
        total += term
        if m > half and term < tiny * total:
            return total


def _dg_far(sigma: float | Fraction, x: int, table: tuple[Mpf, ...], start: int) -> Mpf:
    s = as_mpf(sigma)
    return table[-start] * mp.exp(-(mp.mpf(x) ** 2) / (2 * s * s))  # table[-start] = 1/Z


def reference_window(noise: LatticeNoise, extra: int = 0) -> tuple[int, int]:
    """A window outside which the mass is far below 10^-30 (by generous textbook tail estimates)."""
    if isinstance(noise, Shifted):
        a, b = reference_window(noise.base, extra)
        return a + noise.shift, b + noise.shift
    if isinstance(noise, DiscreteLaplace):
        w = math.ceil(80 * float(noise.scale)) + 5  # mass beyond w is 2q^w/(1+q) < e^-80
        return -w - extra, w + extra
    if isinstance(noise, Polya):
        beta, r = float(noise.beta), float(noise.r)
        # P(X >= w) <= C(w+r) β^w with a polynomial factor: 90 e-folds swamp it for r <= 10.
        w = math.ceil((90 + 10 * math.log1p(r)) / -math.log(beta)) + math.ceil(4 * r) + 20
        return 0, w + extra
    if isinstance(noise, Skellam):
        var = float(noise.mu1) + float(noise.mu2)
        w = math.ceil(2 * var + 12 * math.sqrt(var) + 60)
        m = noise.offset + round(float(noise.mu1) - float(noise.mu2))
        return m - w - extra, m + w + extra
    if isinstance(noise, DiscreteGaussian):
        w = math.ceil(13 * float(noise.sigma)) + 10
        return -w - extra, w + extra
    if isinstance(noise, SumOfDiscreteGaussians):
        w = math.ceil(13 * float(noise.sigma) * math.sqrt(noise.count)) + 10
        return -w - extra, w + extra
    if isinstance(noise, CenteredBinomial):
        lo, hi = noise.support()
        return int(lo), int(hi)
    raise TypeError(f"no reference window for {noise!r}")


def reference_table(noise: LatticeNoise, a: int, b: int) -> list[Mpf]:
    """Reference PMF values on a..b (current precision; cached)."""
    return list(_reference_table(noise, a, b, mp.dps))


@lru_cache(maxsize=512)
def _reference_table(noise: LatticeNoise, a: int, b: int, dps: int) -> tuple[Mpf, ...]:
    with mp.workdps(dps):
        return tuple(reference_pmf(noise, x) for x in range(a, b + 1))


@lru_cache(maxsize=512)
def reference_moments(noise: LatticeNoise) -> tuple[float, float, float]:
    """Mean, variance and fourth central moment by direct summation of the reference PMF."""
    with mp.workdps(30):
        a, b = reference_window(noise)
        xs = range(a, b + 1)
        ps = reference_table(noise, a, b)
        mean = mp.fsum(x * p for x, p in zip(xs, ps, strict=True))
        var = mp.fsum((x - mean) ** 2 * p for x, p in zip(xs, ps, strict=True))
        m4 = mp.fsum((x - mean) ** 4 * p for x, p in zip(xs, ps, strict=True))
        return float(mean), float(var), float(m4)


def assert_encloses(lo: Mpf, hi: Mpf, reference: Mpf, rel: float = 1e-40, abs_tol: float = 0.0) -> None:
    """``reference`` (accurate to ``rel``, plus ``abs_tol`` of truncation) lies in ``[lo, hi]``."""
    with mp.workdps(REF_DPS + 10):
        slack = abs(reference) * mp.mpf(rel) + mp.mpf(abs_tol)
        assert lo <= reference + slack, f"lower end {mp.nstr(lo, 25)} > reference {mp.nstr(reference, 25)}"
        assert reference - slack <= hi, f"upper end {mp.nstr(hi, 25)} < reference {mp.nstr(reference, 25)}"


def assert_close(actual: Mpf, expected: Mpf, rel: float) -> None:
    """``|actual - expected| <= rel |expected|`` in mpmath (``pytest.approx`` works in float64)."""
    with mp.workdps(REF_DPS + 10):
        assert abs(actual - expected) <= mp.mpf(rel) * abs(expected), (actual, expected)


# ---------------------------------------------------------------------------------------------
# The distributions under test
# ---------------------------------------------------------------------------------------------

NOISES: list[LatticeNoise] = [
    DiscreteLaplace(3.7),
    DiscreteLaplace(Fraction(8, 3)),
    DiscreteLaplace(decay=0.8),
    DiscreteLaplace(decay=Fraction(7, 9)),
    Geometric(0.3),
    Geometric(Fraction(2, 3)),
    Polya(0.37, 0.6),
    Polya(Fraction(1, 64), math.exp(-0.5 / 4)),  # one user's share in spec §9.1
    Polya(3.5, 0.9),
    Skellam(2),
    Skellam(37.3),
    Skellam(Fraction(1, 20)),
    Skellam(6, mean=-3),
    Skellam.from_rates(1.5, 0.25, 3),
    Skellam.from_rates(20, 3.3, -2),
    DiscreteGaussian(0.3),  # direct-sum normalizer (σ < 1/2)
    DiscreteGaussian(0.49),
    DiscreteGaussian(0.5),  # Poisson-summation normalizer (σ >= 1/2)
    DiscreteGaussian(7.3),
    DiscreteGaussian(Fraction(5, 2)),
    SumOfDiscreteGaussians(0.4, 2),
    SumOfDiscreteGaussians(0.7, 3),
    SumOfDiscreteGaussians(1.5, 4),
    CenteredBinomial(1),
    CenteredBinomial(7),
    CenteredBinomial(40),
]


def _probe_points(noise: LatticeNoise) -> list[int]:
    """Points in the bulk, in the tails and just outside the support (where it is bounded)."""
    mean, var, _ = reference_moments(noise)
    sd = math.sqrt(var)
    points = {round(mean + k * sd) for k in (-6, -3, -1.5, -1, 0, 0.5, 1, 2, 4, 7)}
    lo, hi = noise.support()
    if math.isfinite(lo):
        points.add(int(lo) - 1)
    if math.isfinite(hi):
        points.add(int(hi) + 1)
    return sorted(points)


# ---------------------------------------------------------------------------------------------
# Spec test vectors (§2.3, §2.4, §2.5, Fact 3)
# ---------------------------------------------------------------------------------------------


def test_skellam_spec_vector() -> None:
    """Spec §2.4: Sk(0, 2) has P = 0.308508, 0.215269, 0.093239, 0.028791 at x = 0..3 (symmetric)."""
    noise = Skellam(2)
    for x, expected in enumerate([0.308508, 0.215269, 0.093239, 0.028791]):
        assert float(noise.pmf_exact(x).mid) == pytest.approx(expected, abs=5e-7)
        assert noise.pmf_exact(-x) == noise.pmf_exact(x)


@pytest.mark.parametrize(
    ("k", "z"), [(0, "2"), (3, "2"), (-3, "2"), (0, "0.05"), (7, "37.3"), (40, "37.3"), (12, "0.7")]
)
def test_bessel_series_matches_mpmath(k: int, z: str) -> None:
    """The reference Skellam PMF's Bessel series agrees with ``mp.besseli`` (spec §2.4)."""
    with mp.workdps(REF_DPS):
        assert_close(bessel_i(k, mp.mpf(z)), mp.besseli(k, mp.mpf(z)), rel=1e-45)


def test_discrete_gaussian_spec_vector() -> None:
    """Spec §2.5: N_Z(0, 1) has P = 0.398942, 0.241971, 0.053991 at x = 0, 1, 2."""
    noise = DiscreteGaussian(1)
    for x, expected in enumerate([0.398942, 0.241971, 0.053991]):
        assert float(noise.pmf_exact(x).mid) == pytest.approx(expected, abs=5e-7)


def _fact3_tail(epsilon: Mpf, sensitivity: Mpf, m: int) -> Mpf:
    """Fact 3 (spec §2.3): P[Y > m] = e^{-εm/Δ} / (e^{ε/Δ} + 1) for Y ~ Lap_Z(Δ/ε)."""
    return mp.exp(-epsilon * m / sensitivity) / (mp.exp(epsilon / sensitivity) + 1)


def test_fact3_tail_spec_vector() -> None:
    """Spec §2.3, Fact 3: g = 4, ε = 0.5, m = 10 gives P[Y > 10] = 0.134311 = sf_bound(11)."""
    noise = DiscreteLaplace(8)  # Δ/ε = g/ε = 8
    with mp.workdps(REF_DPS):
        closed = _fact3_tail(mp.mpf("0.5"), mp.mpf(4), 10)
        _, hi = reference_window(noise)
        by_sum = mp.fsum(reference_table(noise, 11, hi))
        assert abs(closed - by_sum) < mp.mpf(10) ** -30  # the PMF sum agrees with the identity
    assert float(closed) == pytest.approx(0.134311, abs=5e-7)
    for bound in (noise.sf_bound(11), noise.cdf_bound(-11)):  # P[Y > m] = P[Y < -m]
        with mp.workdps(REF_DPS):
            assert bound >= closed
            assert (bound - closed) / closed < mp.mpf(10) ** -28  # exact for the discrete Laplace


@given(scale=st.floats(0.1, 200), m=st.integers(0, 400), decay_form=st.booleans())
@FAST
def test_discrete_laplace_tail_is_fact3_exactly(scale: float, m: int, decay_form: bool) -> None:
    """Fact 3 (spec §2.3) at any scale: sf_bound(m + 1) is the exact tail, certified from above."""
    with mp.workdps(REF_DPS):
        b = mp.mpf(scale)
        closed = _fact3_tail(1 / b, mp.one, m)
        if decay_form:
            decay = math.exp(-1 / scale)
            noise = DiscreteLaplace(decay=decay)
            q = mp.mpf(decay)
            closed = q ** (m + 1) / (1 + q)  # the same identity with e^{-1/b} = β exactly
        else:
            noise = DiscreteLaplace(scale)
    for bound in (noise.sf_bound(m + 1, dps=25), noise.cdf_bound(-m - 1, dps=25)):
        with mp.workdps(REF_DPS):
            assert bound >= closed
            assert (bound - closed) / closed < mp.mpf(10) ** -23


@given(scale=st.floats(0.1, 50), t=st.integers(1, 60))
@settings(max_examples=60, deadline=None)
def test_discrete_laplace_two_sided_tail_bound_is_rounded_up(scale: float, t: int) -> None:
    """tail_bound(t) >= P(|X| >= t) = 2e^{-t/b}/(1 + e^{-1/b}) exactly (Fact 3), as a float.

    The sum of the two exact one-sided tails must be rounded up, also when the caller runs at
    mpmath's default 53-bit precision (a sum rounded to nearest there fails half the time).
    """
    bound = DiscreteLaplace(scale).tail_bound(t)
    with mp.workdps(REF_DPS):
        q = mp.exp(-1 / mp.mpf(scale))
        assert mp.mpf(bound) >= 2 * q**t / (1 + q)


def test_discrete_laplace_variance_spec_value() -> None:
    """Spec §2.3: Var Lap_Z(b) = 2e^{-1/b}/(1 - e^{-1/b})²; b = 8 gives 127.83 (spec §9.1)."""
    q = math.exp(-1 / 8)
    assert 2 * q / (1 - q) ** 2 == pytest.approx(127.83, abs=5e-3)
    assert DiscreteLaplace(8).variance() == pytest.approx(127.83, abs=5e-3)
    assert DiscreteLaplace(decay=q).variance() == pytest.approx(127.83, abs=5e-3)
    _, var, _ = reference_moments(DiscreteLaplace(8))
    assert DiscreteLaplace(8).variance() == pytest.approx(var, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Exact PMFs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", NOISES, ids=repr)
@pytest.mark.parametrize("dps", [15, 30])
def test_pmf_exact_encloses_reference_and_is_tight(noise: LatticeNoise, dps: int) -> None:
    """Every enclosure contains the textbook value (spec §2.2-§2.5, §2.7) to ~dps digits."""
    for x in _probe_points(noise):
        enclosure = noise.pmf_exact(x, dps=dps)
        with mp.workdps(REF_DPS):
            reference = reference_pmf(noise, x)
        assert_encloses(enclosure.lo, enclosure.hi, reference)
        if reference == 0:
            assert enclosure.hi == 0
        else:
            assert enclosure.digits() >= dps - 3, (x, enclosure)


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_pmf_intervals_agree_with_reference_on_a_window(noise: LatticeNoise) -> None:
    """The table form (what the divergences consume) encloses the same values (spec §2.2-§2.7)."""
    mean, var, _ = reference_moments(noise)
    a = round(mean - 4 * math.sqrt(var)) - 2
    table = noise.pmf_intervals(a, a + 30, dps=20)
    assert len(table) == 31
    with mp.workdps(REF_DPS):
        for x, value in zip(range(a, a + 31), table, strict=True):
            lo, hi = mp.make_mpf(value._mpi_[0]), mp.make_mpf(value._mpi_[1])
            assert_encloses(lo, hi, reference_pmf(noise, x))


def _noise_strategy() -> st.SearchStrategy[LatticeNoise]:
    """Random members of every lattice family, with parameters where references are quick."""
    pos = st.floats(0.05, 40)
    unit = st.floats(0.02, 0.95)
    return st.one_of(
        pos.map(DiscreteLaplace),
        unit.map(lambda q: DiscreteLaplace(decay=q)),
        unit.map(Geometric),
        st.builds(Polya, st.floats(0.01, 8), st.floats(0.02, 0.9)),
        st.builds(Polya, st.integers(1, 200).map(lambda n: Fraction(1, n)), unit),
        st.builds(Skellam, st.floats(0.01, 80), st.integers(-5, 5)),
        st.builds(Skellam.from_rates, st.floats(0.01, 30), st.floats(0.01, 30), st.integers(-5, 5)),
        st.floats(0.1, 15).map(DiscreteGaussian),
        st.builds(SumOfDiscreteGaussians, st.floats(0.2, 2), st.integers(1, 4)),
        st.integers(1, 300).map(CenteredBinomial),
    )


@pytest.mark.slow
@given(noise=_noise_strategy(), where=st.floats(-6, 6))
@settings(max_examples=30, deadline=None)
def test_pmf_exact_encloses_reference_random_parameters(noise: LatticeNoise, where: float) -> None:
    """Property form of the test above, over every family and random parameters."""
    mean, var, _ = reference_moments(noise)
    x = round(mean + where * math.sqrt(var))
    enclosure = noise.pmf_exact(x, dps=20)
    with mp.workdps(REF_DPS):
        reference = reference_pmf(noise, x)
    assert_encloses(enclosure.lo, enclosure.hi, reference)
    assert reference == 0 or enclosure.digits() >= 17


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_pmf_sums_to_one_within_certified_error(noise: LatticeNoise) -> None:
    """Σ lower ends <= 1 <= Σ upper ends + certified mass outside the window (sf/cdf bounds).

    And the gap 1 - Σ lower ends is no more than that outside mass plus the working precision.
    """
    dps = 20
    a, b = noise.window(mp.mpf(10) ** -25, dps)
    outside = noise.cdf_bound(a - 1, dps) + noise.sf_bound(b + 1, dps)
    assert outside <= mp.mpf(10) ** -24
    table = noise.pmf_intervals(a, b, dps)
    with mp.workdps(200):  # exact enough that the sums' own rounding is irrelevant
        total_lo = mp.fsum(mp.make_mpf(x._mpi_[0]) for x in table)
        total_hi = mp.fsum(mp.make_mpf(x._mpi_[1]) for x in table)
        assert total_lo <= 1
        assert total_hi + outside >= 1
        assert 1 - total_lo <= outside + mp.mpf(10) ** -(dps - 2)


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_float_pmf_agrees_with_exact(noise: LatticeNoise) -> None:
    """The float64 PMF (numpy/scipy, for statistics) matches the exact one to 1e-12 relative."""
    a, b = reference_window(noise)
    xs = np.arange(max(a, -400), min(b, 400) + 1)
    floats = noise.pmf(xs)
    exact = noise.pmf_intervals(int(xs[0]), int(xs[-1]), dps=20)
    checked = 0
    for f, value in zip(floats, exact, strict=True):
        mid = float(mp.make_mpf(value._mpi_[1]))
        if mid > 1e-30:
            assert f == pytest.approx(mid, rel=1e-12)
            checked += 1
        else:
            assert f <= 1e-29
    assert checked >= 2


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_tail_bounds_dominate_exact_tails(noise: LatticeNoise) -> None:
    """sf_bound(t) >= P(X >= t), cdf_bound(t) >= P(X <= t), tail_bound(t) >= P(|X| >= t).

    The bounds are Fact 3 (spec §2.3, exact), β^t (§2.2, exact), Chernoff (Pólya, Skellam),
    sub-Gaussianity (§2.5) and Hoeffding (binomial); the tails are summed from the references.
    """
    mean, var, _ = reference_moments(noise)
    sd = math.sqrt(var)
    a, b = reference_window(noise)
    with mp.workdps(REF_DPS):
        table = dict(zip(range(a, b + 1), reference_table(noise, a, b), strict=True))
    for k in (-8, -4, -2, -1, 0, 1, 2, 4, 8):
        t = round(mean + k * sd)
        with mp.workdps(REF_DPS):
            upper_tail = mp.fsum(p for x, p in table.items() if x >= t)
            lower_tail = mp.fsum(p for x, p in table.items() if x <= t)
            abs_tail = mp.fsum(p for x, p in table.items() if abs(x) >= abs(t))
        sf = noise.sf_bound(t, dps=20)
        cdf = noise.cdf_bound(t, dps=20)
        assert 0 <= sf <= 1
        assert 0 <= cdf <= 1
        with mp.workdps(REF_DPS):
            assert sf >= upper_tail * (1 - mp.mpf(10) ** -30)
            assert cdf >= lower_tail * (1 - mp.mpf(10) ** -30)
            # A float rounded up: compared exactly (mp.mpf of a float is exact).
            assert mp.mpf(noise.tail_bound(abs(t))) >= abs_tail * (1 - mp.mpf(10) ** -30)


@pytest.mark.parametrize("beta", [0.1, 0.5, Fraction(9, 10)])
def test_geometric_tail_is_exact(beta: float | Fraction) -> None:
    """Spec §2.2: P(X >= t) = β^t for Geometric(β) = Polya(1, β)."""
    noise = Geometric(beta)
    for t in (1, 2, 10, 50):
        bound = noise.sf_bound(t, dps=25)
        with mp.workdps(REF_DPS):
            exact = as_mpf(beta) ** t
            assert exact <= bound <= exact * (1 + mp.mpf(10) ** -23)


@pytest.mark.slow
def test_polya_shares_add_up_to_the_discrete_laplace() -> None:
    """Fact 1 (spec §2.3): Σ_{i<=n} (γ_i⁺ - γ_i⁻) with γ ~ Polya(1/n, β) is Lap_Z with e^{-1/b} = β.

    The n-fold convolution is computed from the library's own Pólya PMF enclosures (in
    interval arithmetic, so the result is again an enclosure) and compared with the
    library's discrete Laplace PMF, and with the closed form of Definition 4.
    """
    n, beta = 4, Fraction(4, 5)
    share = Polya(Fraction(1, n), beta)
    width = 300  # β^300 < 1e-29: the left-out mass is negligible next to the checked values
    with mp.workdps(60):
        one = [share.pmf_exact(x, dps=40).lo for x in range(width)]
        total = [mp.one] + [mp.zero] * (width - 1)
        for _ in range(n):  # the n-fold convolution of the one-sided share, exact below `width`
            total = [mp.fsum(total[j] * one[k - j] for j in range(k + 1)) for k in range(width)]
        q = as_mpf(beta)
        for k in range(12):  # ... is Polya(1, β), the geometric distribution (spec §2.2)
            assert_close(total[k], q**k * (1 - q), rel=1e-30)
        for x in range(-6, 7):  # ... and the difference of two of them is Lap_Z
            difference = mp.fsum(total[j + x] * total[j] for j in range(max(0, -x), width - max(x, 0)))
            laplace = DiscreteLaplace(decay=beta).pmf_exact(x, dps=40)
            assert_close(difference, laplace.mid, rel=1e-25)
            assert_close(difference, reference_pmf(DiscreteLaplace(decay=beta), x), rel=1e-25)


def test_skellam_shares_add_up_to_a_skellam() -> None:
    """Spec §2.4 closure: Sk(0, v) + Sk(0, v) + Sk(0, v) = Sk(0, 3v), by direct convolution."""
    share, total = Skellam(Fraction(5, 4)), Skellam(Fraction(15, 4))
    with mp.workdps(REF_DPS):
        a, b = reference_window(share)
        one = dict(zip(range(a, b + 1), reference_table(share, a, b), strict=True))
        two = {x: mp.fsum(one[y] * one[x - y] for y in one if x - y in one) for x in range(2 * a, 2 * b + 1)}
        for x in range(-8, 9):
            three = mp.fsum(two[y] * one[x - y] for y in two if x - y in one)
            enclosure = total.pmf_exact(x, dps=30)
            assert_encloses(enclosure.lo, enclosure.hi, three, rel=1e-35)


# ---------------------------------------------------------------------------------------------
# Moments
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_variance_matches_direct_summation(noise: LatticeNoise) -> None:
    """variance() (closed forms: spec §2.2-§2.5) equals Σ (x - mean)² P(x)."""
    _, var, _ = reference_moments(noise)
    assert noise.variance() == pytest.approx(var, rel=1e-12)


@given(noise=_noise_strategy())
@FAST
def test_variance_matches_direct_summation_random_parameters(noise: LatticeNoise) -> None:
    """As above, over every family with random parameters (spec §2.2-§2.5, §2.7)."""
    _, var, _ = reference_moments(noise)
    assert noise.variance() == pytest.approx(var, rel=1e-11)


# ---------------------------------------------------------------------------------------------
# Samplers
# ---------------------------------------------------------------------------------------------

SAMPLES = 100_000

SAMPLED: list[LatticeNoise] = [
    DiscreteLaplace(3.7),
    DiscreteLaplace(decay=0.8),
    Geometric(0.3),
    Polya(0.37, 0.6),
    Polya(3.5, 0.9),
    Skellam(2),
    Skellam(37.3),
    Skellam.from_rates(1.5, 0.25, 3),
    Shifted(Skellam(5), -4),
    DiscreteGaussian(0.3),
    DiscreteGaussian(0.5),
    DiscreteGaussian(7.3),
    SumOfDiscreteGaussians(0.7, 3),
    SumOfDiscreteGaussians(1.5, 4),
    CenteredBinomial(7),
    CenteredBinomial(40),
]


def moments_consistent(samples: np.ndarray, mean: float, var: float, m4: float, z: float = 5.0) -> bool:
    """Sample mean and variance within ``z`` standard errors of the true ones.

    The standard error of the sample variance is sqrt((μ4 - σ⁴)/N), from the true fourth
    central moment μ4.
    """
    n = samples.size
    se_mean = math.sqrt(var / n)
    se_var = math.sqrt(max(m4 - var**2, 0.0) / n) + 1e-12
    return bool(abs(samples.mean() - mean) <= z * se_mean and abs(samples.var(ddof=1) - var) <= z * se_var)


def chi_square_pvalue(
    samples: np.ndarray, pmf: Callable[[np.ndarray], np.ndarray], lo: int, hi: int
) -> float:
    """Pearson's test of ``samples`` against ``pmf`` on ``lo..hi``, tails pooled to >= 5 expected."""
    n = samples.size
    xs = np.arange(lo, hi + 1)
    expected = n * pmf(xs)
    inner = np.flatnonzero(expected >= 5)
    first, last = xs[inner[0]], xs[inner[-1]]
    keep = (xs >= first) & (xs <= last)
    observed = np.array([np.count_nonzero(samples == x) for x in xs[keep]], dtype=float)
    exp_inner = expected[keep]
    cells_obs = [np.count_nonzero(samples < first), *observed, np.count_nonzero(samples > last)]
    cells_exp = [expected[xs < first].sum(), *exp_inner, expected[xs > last].sum()]
    # Merge a thin pooled tail into its neighbour so every cell expects >= 5.
    for end in (0, -1):
        if cells_exp[end] < 5:
            neighbour = 1 if end == 0 else -2
            cells_obs[neighbour] += cells_obs[end]
            cells_exp[neighbour] += cells_exp[end]
            del cells_obs[end]
            del cells_exp[end]
    obs = np.asarray(cells_obs, dtype=float)
    exp = np.asarray(cells_exp, dtype=float)
    exp *= obs.sum() / exp.sum()  # the window holds all but ~1e-30 of the mass
    return float(scipy.stats.chisquare(obs, exp).pvalue)


@pytest.mark.parametrize("noise", SAMPLED, ids=repr)
def test_sampler_moments_and_goodness_of_fit(noise: LatticeNoise) -> None:
    """The fast samplers (spec §2.2 Gamma-Poisson, §2.4 Poisson difference, §2.5 CKS rejection)."""
    rng = np.random.default_rng(20230501)
    samples = noise.sample(rng, SAMPLES)
    assert samples.shape == (SAMPLES,)
    assert np.issubdtype(samples.dtype, np.integer)
    mean, var, m4 = reference_moments(noise)
    assert moments_consistent(samples, mean, var, m4)
    a, b = reference_window(noise)
    assert chi_square_pvalue(samples, noise.pmf, a, b) > 1e-4


def test_sampler_shapes_and_seeding() -> None:
    """Randomness is an explicit Generator: the same seed gives the same draws (STYLE.md)."""
    noise = Skellam(3)
    draws = noise.sample(np.random.default_rng(7), (3, 4))
    assert draws.shape == (3, 4)
    assert np.array_equal(draws, noise.sample(np.random.default_rng(7), (3, 4)))
    assert noise.sample(np.random.default_rng(7), 0).shape == (0,)


def _polya_sum_differences(
    rng: np.random.Generator, users: int, beta: float, size: int, gamma_scale: float
) -> np.ndarray:
    """Σ_i (γ_i⁺ - γ_i⁻), γ ~ Gamma-Poisson with shape 1/users and the given Gamma scale."""

    def draw() -> np.ndarray:
        lam = rng.gamma(shape=1 / users, scale=gamma_scale, size=(users, size))
        return np.asarray(rng.poisson(lam).sum(axis=0))

    plus, minus = draw(), draw()
    return np.asarray(plus - minus)


@pytest.mark.slow
def test_polya_difference_sum_is_discrete_laplace_spec_9_1() -> None:
    """Spec §9.1: n = 64 users, ε = 0.5, g = 4: Σ (Polya(1/64, e^{-ε/g}) differences) ~ Lap_Z(8).

    The library's sampler must give variance 127.83 and pass a chi-square test against
    Lap_Z(8). The released code's Gamma scale (1-β)/β samples Polya(r, 1-β): the same
    moment check must reject it (its variance is about 0.30).
    """
    users, beta = 64, math.exp(-0.5 / 4)
    target = DiscreteLaplace(8)
    mean, var, m4 = reference_moments(target)
    assert var == pytest.approx(127.83, abs=5e-3)
    rng = np.random.default_rng(91)
    size = 100_000
    share = Polya(Fraction(1, users), beta)
    total = share.sample(rng, (users, size)).sum(axis=0) - share.sample(rng, (users, size)).sum(axis=0)
    assert moments_consistent(total, mean, var, m4)
    a, b = reference_window(target)
    assert chi_square_pvalue(total, target.pmf, a, b) > 1e-4

    # The same check catches the scale bug of the released code.
    buggy = _polya_sum_differences(rng, users, beta, size, gamma_scale=(1 - beta) / beta)
    assert not moments_consistent(buggy, mean, var, m4)
    assert buggy.var() == pytest.approx(0.30, abs=0.01)
    # ... and a hand-written sampler with the paper's scale β/(1-β) passes it, as a control.
    correct = _polya_sum_differences(rng, users, beta, size, gamma_scale=beta / (1 - beta))
    assert moments_consistent(correct, mean, var, m4)


# ---------------------------------------------------------------------------------------------
# Validation: every bad parameter raises an error naming it
# ---------------------------------------------------------------------------------------------

nan, inf = math.nan, math.inf

BAD_CONSTRUCTIONS: list[tuple[str, Callable[[], object], str, type[Exception]]] = [
    ("dlap-zero", lambda: DiscreteLaplace(0), "scale", ParameterError),
    ("dlap-negative", lambda: DiscreteLaplace(-1.0), "scale", ParameterError),
    ("dlap-nan", lambda: DiscreteLaplace(nan), "scale", ParameterError),
    ("dlap-inf", lambda: DiscreteLaplace(inf), "scale", ParameterError),
    ("dlap-string", lambda: DiscreteLaplace("2"), "scale", ParameterTypeError),  # type: ignore[arg-type]
    ("dlap-neither", lambda: DiscreteLaplace(), "scale", ParameterError),
    ("dlap-both", lambda: DiscreteLaplace(2.0, decay=0.5), "scale", ParameterError),
    ("dlap-decay-zero", lambda: DiscreteLaplace(decay=0), "decay", ParameterError),
    ("dlap-decay-one", lambda: DiscreteLaplace(decay=1), "decay", ParameterError),
    ("dlap-decay-big", lambda: DiscreteLaplace(decay=1.5), "decay", ParameterError),
    ("dlap-decay-nan", lambda: DiscreteLaplace(decay=nan), "decay", ParameterError),
    ("polya-r-zero", lambda: Polya(0, 0.5), "r", ParameterError),
    ("polya-r-negative", lambda: Polya(-1, 0.5), "r", ParameterError),
    ("polya-r-nan", lambda: Polya(nan, 0.5), "r", ParameterError),
    ("polya-r-inf", lambda: Polya(inf, 0.5), "r", ParameterError),
    ("polya-beta-zero", lambda: Polya(1, 0), "beta", ParameterError),
    ("polya-beta-one", lambda: Polya(1, 1), "beta", ParameterError),
    ("polya-beta-nan", lambda: Polya(1, nan), "beta", ParameterError),
    ("polya-beta-inf", lambda: Polya(1, inf), "beta", ParameterError),
    ("geometric-zero", lambda: Geometric(0), "beta", ParameterError),
    ("geometric-one", lambda: Geometric(1.0), "beta", ParameterError),
    ("geometric-nan", lambda: Geometric(nan), "beta", ParameterError),
    ("skellam-zero", lambda: Skellam(0), "variance", ParameterError),
    ("skellam-negative", lambda: Skellam(-2.0), "variance", ParameterError),
    ("skellam-nan", lambda: Skellam(nan), "variance", ParameterError),
    ("skellam-inf", lambda: Skellam(inf), "variance", ParameterError),
    ("skellam-mean", lambda: Skellam(2, mean=0.5), "mean", ParameterError),  # type: ignore[arg-type]
    ("skellam-mu1", lambda: Skellam.from_rates(0, 1), "mu1", ParameterError),
    ("skellam-mu2", lambda: Skellam.from_rates(1, -1), "mu2", ParameterError),
    ("skellam-mu1-nan", lambda: Skellam.from_rates(nan, 1), "mu1", ParameterError),
    ("skellam-mu2-inf", lambda: Skellam.from_rates(1, inf), "mu2", ParameterError),
    ("skellam-offset", lambda: Skellam.from_rates(1, 1, 0.5), "offset", ParameterError),  # type: ignore[arg-type]
    ("dg-zero", lambda: DiscreteGaussian(0), "sigma", ParameterError),
    ("dg-negative", lambda: DiscreteGaussian(-1), "sigma", ParameterError),
    ("dg-nan", lambda: DiscreteGaussian(nan), "sigma", ParameterError),
    ("dg-inf", lambda: DiscreteGaussian(inf), "sigma", ParameterError),
    ("sum-dg-sigma", lambda: SumOfDiscreteGaussians(0, 2), "sigma", ParameterError),
    ("sum-dg-sigma-nan", lambda: SumOfDiscreteGaussians(nan, 2), "sigma", ParameterError),
    ("sum-dg-count-zero", lambda: SumOfDiscreteGaussians(1, 0), "count", ParameterError),
    ("sum-dg-count-frac", lambda: SumOfDiscreteGaussians(1, 1.5), "count", ParameterError),  # type: ignore[arg-type]
    ("binomial-zero", lambda: CenteredBinomial(0), "trials", ParameterError),
    ("binomial-negative", lambda: CenteredBinomial(-3), "trials", ParameterError),
    ("binomial-frac", lambda: CenteredBinomial(2.5), "trials", ParameterError),  # type: ignore[arg-type]
    ("binomial-nan", lambda: CenteredBinomial(nan), "trials", ParameterError),  # type: ignore[arg-type]
    ("laplace-zero", lambda: Laplace(0), "scale", ParameterError),
    ("laplace-inf", lambda: Laplace(inf), "scale", ParameterError),
    ("laplace-negative", lambda: Laplace(-2.0), "scale", ParameterError),
    ("laplace-nan", lambda: Laplace(nan), "scale", ParameterError),
    ("gaussian-zero", lambda: Gaussian(0), "sigma", ParameterError),
    ("gaussian-inf", lambda: Gaussian(inf), "sigma", ParameterError),
    ("gaussian-nan", lambda: Gaussian(nan), "sigma", ParameterError),
    ("gaussian-negative", lambda: Gaussian(-1), "sigma", ParameterError),
    ("shifted-frac", lambda: Shifted(Skellam(1), 1.5), "shift", ParameterError),  # type: ignore[arg-type]
    ("shifted-continuous", lambda: Shifted(Laplace(1), 1), "base", ParameterError),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(
    ("build", "name", "error"),
    [case[1:] for case in BAD_CONSTRUCTIONS],
    ids=[case[0] for case in BAD_CONSTRUCTIONS],
)
def test_bad_parameters_raise_naming_the_parameter(
    build: Callable[[], object], name: str, error: type[Exception]
) -> None:
    """Zero, negative, NaN and infinite parameters raise (never NaN later), naming the parameter."""
    with pytest.raises(error) as info:
        build()
    assert getattr(info.value, "name", None) == name
    assert name in str(info.value)
    # The hierarchy: ParameterError is a ValueError, ParameterTypeError a TypeError.
    assert isinstance(info.value, ValueError if error is ParameterError else TypeError)


BAD_CALLS: list[tuple[str, Callable[[], object], str]] = [
    ("pmf-exact-frac", lambda: Skellam(2).pmf_exact(1.5), "x"),  # type: ignore[arg-type]
    ("pmf-exact-dps-low", lambda: Skellam(2).pmf_exact(0, dps=2), "dps"),
    ("pmf-exact-dps-high", lambda: Skellam(2).pmf_exact(0, dps=5000), "dps"),
    ("pmf-intervals-order", lambda: DiscreteGaussian(1).pmf_intervals(3, 1), "hi"),
    ("sf-bound-frac", lambda: DiscreteLaplace(1).sf_bound(0.5), "t"),  # type: ignore[arg-type]
    ("cdf-bound-nan", lambda: DiscreteLaplace(1).cdf_bound(nan), "t"),  # type: ignore[arg-type]
    ("tail-bound-negative", lambda: DiscreteLaplace(1).tail_bound(-1), "t"),
    ("tail-bound-nan", lambda: Skellam(1).tail_bound(nan), "t"),
    ("sample-negative", lambda: Skellam(1).sample(np.random.default_rng(0), -1), "size"),
    ("gaussian-tail-negative", lambda: Gaussian(1).tail_bound(-0.5), "t"),
]


@pytest.mark.parametrize(("call", "name"), [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS])
def test_bad_arguments_raise_naming_the_parameter(call: Callable[[], object], name: str) -> None:
    """Bad method arguments (non-integer points, precision out of range, ...) raise too."""
    with pytest.raises((ParameterError, ParameterTypeError)) as info:
        call()
    assert getattr(info.value, "name", None) == name


@pytest.mark.parametrize(
    "noise",
    [
        DiscreteLaplace(1e-3),
        DiscreteLaplace(1e6),
        Skellam(1e-6),
        Skellam(1e4),
        Polya(1e-6, 0.999),
        DiscreteGaussian(1e-3),
        DiscreteGaussian(1e4),
        CenteredBinomial(10**5),
    ],
    ids=repr,
)
def test_extreme_parameters_give_numbers_not_nan(noise: LatticeNoise) -> None:
    """Valid but extreme parameters give probabilities in [0, 1], never NaN."""
    for value in noise.pmf_intervals(0, 5, dps=15):
        lo, hi = mp.make_mpf(value._mpi_[0]), mp.make_mpf(value._mpi_[1])
        assert not mp.isnan(lo)
        assert not mp.isnan(hi)
        assert 0 <= lo <= hi <= 1
    assert not math.isnan(noise.variance())
    assert 0 <= noise.tail_bound(3) <= 1


def test_skellam_renyi_prior_of_a_wide_shift_skips_the_poisson_bound() -> None:
    """A shift of 10^6 (dp-regret's Dist-RDP-SE at scale 10^6) computed 10^6! and stalled for
    seconds per call (minutes at 10^7): beyond 1000 the Poisson shift bound exceeds e^250 and the
    AKL bound answers alone."""
    from accounting.bounds import skellam_rdp_akl
    from accounting.noise.skellam import _POISSON_SHIFT_MAX

    noise = Skellam(1e6)
    prior = noise.renyi_prior(10**7, 3.0)
    assert prior.bound == mp.mpf(skellam_rdp_akl(int(prior.beta), 2 * min(noise.mu1, noise.mu2), 10**7))
    assert noise._poisson_shift_prior(_POISSON_SHIFT_MAX + 1, 2) == mp.inf
    # below the cut-off the Poisson bound is still used where it wins (a tiny rate)
    small = Skellam(1e-300)
    assert small.renyi_prior(1, 1.0).bound < mp.mpf(skellam_rdp_akl(2, 2 * min(small.mu1, small.mu2), 1))


@pytest.mark.parametrize(
    ("noise", "name"),
    [
        (DiscreteLaplace(1e30), "scale"),
        (DiscreteGaussian(1e30), "sigma"),
        (Skellam(1e19), "variance"),
        (Polya(0.5, 1 - 1e-15 / 4), "mean"),
    ],
)
def test_float_samplers_refuse_noise_they_cannot_draw(noise: Any, name: str) -> None:
    """numpy returned zeros for DiscreteLaplace(1e30) and DiscreteGaussian(1e30), and a Poisson
    rate past 9.2e18 was numpy's 'lam value too large'."""
    with pytest.raises(ParameterError, match=name):
        noise.sample(np.random.default_rng(0), 3)


@pytest.mark.parametrize(
    ("noise", "name"),
    [(DiscreteLaplace(1e30), "scale"), (DiscreteGaussian(1e30), "sigma"), (Skellam(1e9), "rate")],
)
def test_exact_samplers_refuse_work_they_cannot_finish(noise: Any, name: str) -> None:
    """DiscreteLaplace(1e30).sample_exact overflowed int64; Skellam(1e9) needs ~10^9 geometric
    draws per variate (it ran for minutes); both are refused up front, naming the parameter."""
    with pytest.raises(ParameterError, match=name):
        noise.sample_exact(np.random.default_rng(0), 3)


def test_samplers_at_their_limits_still_draw() -> None:
    rng = np.random.default_rng(1)
    assert DiscreteLaplace(1e15).sample(rng, 4).dtype == np.int64
    assert np.all(np.abs(DiscreteGaussian(1e17).sample_exact(rng, 4)) < 2**62)
    assert Skellam(1e6).sample_exact(rng, 2).shape == (2,)


def test_a_vanishing_discrete_gaussian_samples_zeros() -> None:
    """σ = 1e-300: σ² underflowed, the acceptance was 0/0 and the float sampler never returned
    (dp-audit mechanism hung); P(X != 0) < e^{-10^199}, so every draw is 0."""
    draws = DiscreteGaussian(1e-300).sample(np.random.default_rng(0), 1000)
    assert draws.dtype == np.int64
    assert not draws.any()
    assert DiscreteGaussian(0.5).sample(np.random.default_rng(0), 1000).any()  # the usual path
