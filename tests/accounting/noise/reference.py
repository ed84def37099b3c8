"""Independent references for the tests of :mod:`accounting.noise` (and of the divergences and mechanisms).

Every expected value of those tests is either a number of a paper or an independent computation
here: closed forms and direct sums in :mod:`mpmath` at :data:`REF_DPS` digits (the Bessel series for
Skellam, itself checked against ``mp.besseli``; ``mp.loggamma`` for Pólya; direct normalizing sums
for the discrete Gaussian (the library uses Poisson summation for σ >= 1/2); brute-force
convolution for sums of discrete Gaussians; ``math.comb`` for the binomial), never outputs of the
code under test; and the sampler checks (moments and Pearson's test) the sampler tests share.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.stats
from hypothesis import settings
from mpmath import mp

from accounting import (
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Geometric,
    LatticeNoise,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
)

Mpf = Any

FAST = settings(max_examples=15, deadline=None)

#: Digits of every reference value (far above the 15-30 digits the library is asked for).
REF_DPS = 50


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
        if noise.beta is not None:
            q = as_mpf(noise.beta)
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
