"""Samplers against exact PMFs: chi-square and G-tests with pooled tails, and moment z-tests.

A sampler is only as private as the distribution it really draws from. The accountant
assumes the exact PMF of :mod:`accounting.noise`; these tests ask whether samples are
consistent with it:

* :func:`chi_square_test` and :func:`g_test` — Pearson's ``X² = Σ (O - E)²/E`` and the
  likelihood-ratio ``G = 2 Σ O ln(O/E)`` over integer bins, with expected counts from the
  *exact* PMF (certified enclosures converted to float) and tails pooled so that every
  expected count is at least ``min_expected``; p-values from the ``χ²`` distribution with
  ``bins - 1`` degrees of freedom (no parameter is estimated);
* :func:`moment_test` — z-tests of the sample mean and of the sample variance about the
  known mean against the exact moments;
* :func:`check_sampler` — draws, times, and runs all three, with a verdict at a family-wise
  level ``alpha``;
* :data:`SAMPLERS` — every sampler of the project, with the sample size at which it is
  checked, including the Pólya-difference construction of a discrete Laplace (Fact 1);
* :func:`buggy_polya_sample` — the Pólya sampler of the paper's released code, whose
  Gamma scale ``(1-β)/β`` should be ``β/(1-β)`` (spec §9.1): it must fail.

The p-values are exact for the asymptotic ``χ²`` law of the statistics; with every expected
count ``>= 5`` that law is the classical, accurate approximation (no exact multinomial test
is attempted).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from mpmath import mp
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.certified import lower, precision, upper
from accounting.noise import (
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Geometric,
    LatticeNoise,
    Polya,
    Skellam,
    SumOfDiscreteGaussians,
)
from verification.errors import ParameterError, ParameterTypeError, VerificationError

__all__ = [
    "SAMPLERS",
    "SIZE",
    "Bin",
    "FitResult",
    "MomentResult",
    "Sampler",
    "SamplerCase",
    "SamplerReport",
    "buggy_polya_sample",
    "check_sampler",
    "chi_square_test",
    "g_test",
    "moment_test",
    "polya_difference_sampler",
    "polya_sample",
]

#: A sampler: ``sampler(rng, size)`` returns ``size`` integer draws as a 1-d array.
Sampler = Callable[[np.random.Generator, int], NDArray[np.integer]]

#: Working precision (decimal digits) of the exact PMF tables; float64 needs no more.
_DPS = 15

#: Mass left outside the exact table, relative to one expected count (see :func:`_table`).
_OUTSIDE_COUNTS = 1e-6


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bin:
    """A pooled bin: the integers ``lo..hi`` (``lo = -inf`` / ``hi = inf`` for a tail)."""

    lo: float
    hi: float
    observed: int
    expected: float

    @property
    def label(self) -> str:
        """``"x <= -12"``, ``"x = 3"``, ``"5..7"`` or ``"x >= 40"``."""
        if math.isinf(self.lo) and math.isinf(self.hi):
            return "all x"
        if math.isinf(self.lo):
            return f"x <= {int(self.hi)}"
        if math.isinf(self.hi):
            return f"x >= {int(self.lo)}"
        if self.lo == self.hi:
            return f"x = {int(self.lo)}"
        return f"{int(self.lo)}..{int(self.hi)}"


def _format_p(p_value: float, log10_p: float) -> str:
    if p_value > 0:
        return f"{p_value:.3g}"
    return f"10^{log10_p:.1f}"


@dataclass(frozen=True)
class FitResult:
    """A chi-square or G goodness-of-fit test of integer samples against an exact PMF.

    Attributes
    ----------
    test : str
        ``"chi-square"`` (Pearson) or ``"G"`` (likelihood ratio).
    statistic : float
        The test statistic (``inf`` when a sample lies outside the support).
    dof : int
        Degrees of freedom, ``len(bins) - 1``.
    p_value : float
        ``P(χ²_dof >= statistic)`` (it underflows to 0 for gross misfits; see ``log10_p``).
    log10_p : float
        ``log10`` of the p-value, finite far below the float range.
    bins : tuple of Bin
        The pooled bins with observed and expected counts.
    size : int
        Number of samples.
    outside_support : int
        Samples at integers of probability 0 (any such sample fails the test).
    alpha : float
        The level at which ``passed`` was decided.
    passed : bool
        ``p_value >= alpha`` (and no sample outside the support).
    """

    test: str
    statistic: float
    dof: int
    p_value: float
    log10_p: float
    bins: tuple[Bin, ...]
    size: int
    outside_support: int
    alpha: float
    passed: bool

    def worst_bins(self, count: int = 3) -> tuple[Bin, ...]:
        """The bins contributing most to Pearson's statistic (where the misfit is)."""
        return tuple(sorted(self.bins, key=lambda b: -((b.observed - b.expected) ** 2) / b.expected)[:count])

    def summary(self) -> str:
        """One readable paragraph: statistic, dof, p-value, verdict, and the worst bins."""
        verdict = "pass" if self.passed else "FAIL"
        head = (
            f"{self.test} test: statistic {self.statistic:.6g} on {self.dof} dof, "
            f"p = {_format_p(self.p_value, self.log10_p)} -> {verdict} at alpha = {self.alpha:g} "
            f"({self.size} samples, {len(self.bins)} bins)"
        )
        if self.outside_support:
            head += f"; {self.outside_support} samples outside the support"
        worst = ", ".join(f"{b.label}: {b.observed} vs {b.expected:.1f}" for b in self.worst_bins())
        return f"{head}\n  largest deviations (observed vs expected): {worst}"


@dataclass(frozen=True)
class MomentResult:
    """z-tests of the sample mean and variance against the exact moments.

    ``variance_z`` tests ``Σ (x - μ)² / N`` (centered at the exact mean ``μ``), whose standard
    error is exactly ``sqrt((μ4 - σ⁴) / N)``. ``p_value`` is the Bonferroni combination
    ``min(1, 2 min(mean_p, variance_p))``.
    """

    size: int
    mean: float
    expected_mean: float
    mean_z: float
    mean_p: float
    variance: float
    expected_variance: float
    variance_z: float
    variance_p: float
    fourth_moment: float
    table_variance: float
    p_value: float
    alpha: float
    passed: bool

    def summary(self) -> str:
        """The two z-tests in two readable lines."""
        verdict = "pass" if self.passed else "FAIL"
        return (
            f"moment test ({self.size} samples) -> {verdict} at alpha = {self.alpha:g}\n"
            f"  mean {self.mean:.6g} vs exact {self.expected_mean:.6g}: z = {self.mean_z:+.2f}, "
            f"p = {self.mean_p:.3g}\n"
            f"  variance {self.variance:.6g} vs exact {self.expected_variance:.6g}: "
            f"z = {self.variance_z:+.2f}, p = {self.variance_p:.3g}"
        )


# ---------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------


def _lattice(noise: object) -> LatticeNoise:
    if not isinstance(noise, LatticeNoise):
        raise ParameterTypeError("noise", noise, "a lattice distribution from accounting.noise")
    return noise


def _samples(samples: ArrayLike) -> NDArray[np.int64]:
    arr = np.asarray(samples)
    described = f"<array of shape {arr.shape}, dtype {arr.dtype}>"
    if arr.size == 0:
        raise ParameterError("samples", described, "a non-empty array of integers")
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64, copy=False).ravel()
    if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        return arr.astype(np.int64).ravel()
    raise ParameterError("samples", described, "an array of integers")


def _alpha(alpha: object) -> float:
    return v.open_unit("alpha", alpha)


# ---------------------------------------------------------------------------------------
# The exact table and the pooling
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Table:
    """Float probabilities ``probs[i] = P(X = start + i)`` from certified enclosures."""

    start: int
    probs: NDArray[np.float64]

    @property
    def xs(self) -> NDArray[np.float64]:
        return np.arange(self.start, self.start + self.probs.size, dtype=np.float64)


def _table(noise: LatticeNoise, size: int) -> _Table:
    """The exact PMF on a window holding all but ``1e-6 / size`` of the mass.

    The window comes from the certified tail bounds (:meth:`LatticeNoise.window`), so the
    mass outside it is at most ``1e-6`` expected counts: it is left out of the tail bins, an
    error far below the ``min_expected`` counts each of them holds (5 by default). Inside,
    every value is the midpoint of a certified enclosure rounded to float (relative error
    about ``1e-16``).
    """
    mass = mp.mpf(_OUTSIDE_COUNTS) / size
    a, b = noise.window(mass, _DPS)
    with precision(_DPS):
        intervals = noise.pmf_intervals(a, b, _DPS)
        probs = np.array([(float(lower(x)) + float(upper(x))) / 2 for x in intervals], dtype=np.float64)
    return _Table(a, probs)


def _pooled(noise: LatticeNoise, samples: NDArray[np.int64], min_expected: float) -> tuple[list[Bin], int]:
    """Bins with every expected count ``>= min_expected``, and the samples outside the support.

    Cells are the integers of the exact table plus the two open tails; adjacent cells are
    merged from the left until a bin holds ``min_expected`` expected counts, and a short last
    bin is merged into its neighbour. The first bin starts at ``-inf`` and the last ends at
    ``+inf``, so every sample lands in a bin.
    """
    size = samples.size
    table = _table(noise, size)
    start, stop = table.start, table.start + table.probs.size - 1
    clipped = np.clip(samples, start - 1, stop + 1) - (start - 1)
    counts = np.bincount(clipped, minlength=table.probs.size + 2)
    expected = np.concatenate([[0.0], table.probs * size, [0.0]])
    lo_support, hi_support = noise.support()
    outside = int(np.count_nonzero((samples < lo_support) | (samples > hi_support)))
    inside_zero = (table.probs == 0) & (counts[1:-1] > 0)  # impossible values inside the window
    outside += int(counts[1:-1][inside_zero].sum())
    bins: list[Bin] = []
    lo, obs, exp = -math.inf, 0, 0.0
    last = counts.size - 1
    for i in range(counts.size):
        obs += int(counts[i])
        exp += float(expected[i])
        if exp >= min_expected and i < last:
            bins.append(Bin(lo, float(start - 1 + i), obs, exp))
            lo, obs, exp = float(start + i), 0, 0.0
    if bins and exp < min_expected:
        prev = bins.pop()
        bins.append(Bin(prev.lo, math.inf, prev.observed + obs, prev.expected + exp))
    else:
        bins.append(Bin(lo, math.inf, obs, exp))
    if len(bins) < 2:
        raise VerificationError(
            f"{size} samples give fewer than two bins with {min_expected} expected counts each: "
            "draw more samples or lower min_expected"
        )
    return bins, outside


def _log10_chi2_sf(statistic: float, dof: int) -> float:
    """``log10 P(χ²_dof >= statistic)``, finite far below the float range (mpmath when scipy underflows)."""
    import scipy.stats

    if math.isinf(statistic):
        return -math.inf
    log_sf = float(scipy.stats.chi2.logsf(statistic, dof))
    if math.isfinite(log_sf):
        return log_sf / math.log(10)
    with mp.workdps(20):
        return float(mp.log10(mp.gammainc(mp.mpf(dof) / 2, mp.mpf(statistic) / 2, mp.inf, regularized=True)))


def _fit(test: str, noise: object, samples: ArrayLike, min_expected: float, alpha: float) -> FitResult:
    import scipy.stats  # here, not at module level: importing it takes about a second

    dist = _lattice(noise)
    xs = _samples(samples)
    m = v.positive("min_expected", min_expected)
    level = _alpha(alpha)
    bins, outside = _pooled(dist, xs, m)
    obs = np.array([b.observed for b in bins], dtype=np.float64)
    exp = np.array([b.expected for b in bins], dtype=np.float64)
    if test == "chi-square":
        statistic = float(np.sum((obs - exp) ** 2 / exp))
    else:
        nonzero = obs > 0
        statistic = float(2 * np.sum(obs[nonzero] * np.log(obs[nonzero] / exp[nonzero])))
        statistic = max(statistic, 0.0)  # G >= 0 up to rounding when Σ O = Σ E
    dof = len(bins) - 1
    if outside:
        statistic = math.inf
    p_value = float(scipy.stats.chi2.sf(statistic, dof))
    log10_p = _log10_chi2_sf(statistic, dof)
    passed = p_value >= level and not outside
    return FitResult(test, statistic, dof, p_value, log10_p, tuple(bins), xs.size, outside, level, passed)


def chi_square_test(
    noise: LatticeNoise, samples: ArrayLike, min_expected: float = 5, *, alpha: float = 1e-3
) -> FitResult:
    """Pearson's chi-square test of integer ``samples`` against the exact PMF of ``noise``.

    Expected counts come from the exact PMF (:meth:`LatticeNoise.pmf_intervals`, certified
    enclosures at 15 digits converted to float) on a window from the certified tail bounds
    that leaves out at most ``1e-6`` expected counts; the two tails and any cell with a low
    expected count are pooled with their neighbours until every bin expects at least
    ``min_expected`` samples (see ``_pooled``). The p-value is ``P(χ²_{k-1} >= X²)`` for
    ``k`` bins, from :data:`scipy.stats.chi2`. A sample at an integer of probability 0 fails
    the test outright (statistic ``inf``, p-value 0).

    Parameters
    ----------
    noise : LatticeNoise
        The distribution the samples should follow.
    samples : array_like of int
        The draws (any shape; flattened).
    min_expected : float
        The smallest expected count of a pooled bin (5 is the classical rule).
    alpha : float
        The level at which ``passed`` is decided.

    Returns
    -------
    FitResult
    """
    return _fit("chi-square", noise, samples, min_expected, alpha)


def g_test(
    noise: LatticeNoise, samples: ArrayLike, min_expected: float = 5, *, alpha: float = 1e-3
) -> FitResult:
    """The likelihood-ratio G-test ``G = 2 Σ O ln(O/E)`` against the exact PMF of ``noise``.

    Same bins, expected counts and p-value law as :func:`chi_square_test`; ``G`` weighs the
    bins by log-likelihood instead of squared deviation, so it reacts to a misfit in the tails
    differently.

    Parameters
    ----------
    noise : LatticeNoise
        The distribution the samples should follow.
    samples : array_like of int
        The draws (any shape; flattened).
    min_expected : float
        The smallest expected count of a pooled bin.
    alpha : float
        The level at which ``passed`` is decided.

    Returns
    -------
    FitResult
    """
    return _fit("G", noise, samples, min_expected, alpha)


def moment_test(noise: LatticeNoise, samples: ArrayLike, *, alpha: float = 1e-3) -> MomentResult:
    """z-tests of the sample mean and variance against the exact moments of ``noise``.

    The mean ``μ`` and fourth central moment ``μ4`` are summed from the exact PMF table (the
    same window as :func:`chi_square_test`); the variance ``σ²`` is ``noise.variance()``, the
    library's own closed form (``table_variance``, summed from the PMF, is reported next to it
    as a cross-check of that closed form). With ``N`` samples:

    * ``z_mean = (x̄ - μ) / sqrt(σ²/N)``;
    * ``z_var = (v - σ²) / sqrt((μ4 - σ⁴)/N)`` with ``v = Σ (x - μ)²/N``, an average of i.i.d.
      terms of mean ``σ²`` and variance ``μ4 - σ⁴``.

    Both are two-sided; the result passes when the Bonferroni p-value
    ``min(1, 2 min(p_mean, p_var))`` is at least ``alpha``.

    Parameters
    ----------
    noise : LatticeNoise
        The distribution the samples should follow.
    samples : array_like of int
        The draws (any shape; flattened).
    alpha : float
        The level at which ``passed`` is decided.

    Returns
    -------
    MomentResult
    """
    import scipy.stats

    dist = _lattice(noise)
    xs = _samples(samples)
    level = _alpha(alpha)
    n = xs.size
    if n < 2:
        raise ParameterError("samples", f"<{n} sample>", "at least 2 samples")
    table = _table(dist, n)
    grid = table.xs
    mu = math.fsum(grid * table.probs)
    centered = grid - mu
    table_var = math.fsum(centered**2 * table.probs)
    mu4 = math.fsum(centered**4 * table.probs)
    var = float(dist.variance())
    dev = xs.astype(np.float64) - mu
    mean = float(xs.mean(dtype=np.float64))
    second = float(np.mean(dev * dev))
    mean_z = (mean - mu) / math.sqrt(var / n)
    spread = mu4 - var * var
    var_z = (second - var) / math.sqrt(spread / n) if spread > 0 else (0.0 if second == var else math.inf)
    mean_p = float(2 * scipy.stats.norm.sf(abs(mean_z)))
    var_p = float(2 * scipy.stats.norm.sf(abs(var_z)))
    p_value = min(1.0, 2 * min(mean_p, var_p))
    return MomentResult(
        size=n,
        mean=mean,
        expected_mean=mu,
        mean_z=mean_z,
        mean_p=mean_p,
        variance=second,
        expected_variance=var,
        variance_z=var_z,
        variance_p=var_p,
        fourth_moment=mu4,
        table_variance=table_var,
        p_value=p_value,
        alpha=level,
        passed=p_value >= level,
    )


# ---------------------------------------------------------------------------------------
# check_sampler
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SamplerReport:
    """The verdict on one sampler: three tests, each at level ``alpha / 3`` (Bonferroni).

    ``passed`` is true when the chi-square test, the G-test and the moment test all pass
    at ``alpha / 3``, so a correct sampler fails with probability at most ``alpha``.
    """

    name: str
    noise: str
    size: int
    seconds: float
    samples_per_second: float
    chi_square: FitResult
    g: FitResult
    moments: MomentResult
    alpha: float
    passed: bool

    @property
    def verdict(self) -> str:
        """``"pass"`` or ``"FAIL"``."""
        return "pass" if self.passed else "FAIL"

    @property
    def p_value(self) -> float:
        """The smallest of the three p-values (the one that decides the verdict)."""
        return min(self.chi_square.p_value, self.g.p_value, self.moments.p_value)

    def summary(self) -> str:
        """The verdict, speed and all three tests, for a terminal."""
        head = (
            f"{self.name}: {self.verdict} ({self.noise}; {self.size} samples in {self.seconds:.3f} s, "
            f"{self.samples_per_second:,.0f} samples/s; family-wise alpha = {self.alpha:g})"
        )
        return "\n".join([head, self.chi_square.summary(), self.g.summary(), self.moments.summary()])


def check_sampler(
    noise: LatticeNoise,
    rng: np.random.Generator,
    size: int,
    sampler: Sampler | None = None,
    alpha: float = 1e-3,
    *,
    min_expected: float = 5,
    name: str | None = None,
) -> SamplerReport:
    """Draw ``size`` samples and test them against the exact PMF of ``noise``.

    Runs :func:`chi_square_test`, :func:`g_test` and :func:`moment_test`, each at level
    ``alpha / 3``, so the family-wise false-alarm rate for a correct sampler is at most
    ``alpha`` (union bound). Only the sampling is timed.

    Parameters
    ----------
    noise : LatticeNoise
        The distribution the sampler claims to draw from.
    rng : numpy.random.Generator
        The randomness (use a spawned stream per check).
    size : int
        Number of samples, ``>= 2``.
    sampler : callable, optional
        ``sampler(rng, size)`` returning integer draws; ``noise.sample`` when omitted.
    alpha : float
        Family-wise level in (0, 1).
    min_expected : float
        Smallest expected count of a pooled bin.
    name : str, optional
        A label for the report (the noise's repr when omitted).

    Returns
    -------
    SamplerReport
    """
    dist = _lattice(noise)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    n = v.integer("size", size, minimum=2)
    if sampler is not None and not callable(sampler):
        raise ParameterTypeError("sampler", sampler, "a callable sampler(rng, size) or None")
    level = _alpha(alpha)
    draw: Sampler = sampler if sampler is not None else dist.sample  # type: ignore[assignment]
    started = time.perf_counter()
    samples = np.asarray(draw(rng, n))
    seconds = time.perf_counter() - started
    if samples.size != n:
        raise VerificationError(f"the sampler returned {samples.size} draws, not size={n}")
    each = level / 3
    chi = chi_square_test(dist, samples, min_expected, alpha=each)
    g = g_test(dist, samples, min_expected, alpha=each)
    moments = moment_test(dist, samples, alpha=each)
    return SamplerReport(
        name=name if name is not None else repr(dist),
        noise=repr(dist),
        size=n,
        seconds=seconds,
        samples_per_second=n / seconds if seconds > 0 else math.inf,
        chi_square=chi,
        g=g,
        moments=moments,
        alpha=level,
        passed=chi.passed and g.passed and moments.passed,
    )


# ---------------------------------------------------------------------------------------
# Pólya samplers: the correct one, the released code's bug, and the users' sum
# ---------------------------------------------------------------------------------------


def _polya_params(r: object, beta: object) -> tuple[float, float]:
    shape = v.positive("r", r)
    b = v.open_unit("beta", beta)
    return shape, b


def polya_sample(r: float | Fraction, beta: float | Fraction) -> Sampler:
    """The Gamma–Poisson sampler of ``Polya(r, β)``: ``λ ~ Gamma(r, scale = β/(1-β))``, ``X ~ Poisson(λ)``.

    The paper's footnote 3 (via Goryczka & Xiong 2015), spec §2.2; the same draw as
    :meth:`accounting.noise.Polya.sample`.

    Parameters
    ----------
    r : float or Fraction
        Shape ``r > 0``.
    beta : float or Fraction
        ``β`` in (0, 1).

    Returns
    -------
    Sampler
    """
    shape, b = _polya_params(r, beta)

    def draw(rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        return rng.poisson(rng.gamma(shape=shape, scale=b / (1 - b), size=size)).astype(np.int64)

    return draw


def buggy_polya_sample(r: float | Fraction, beta: float | Fraction) -> Sampler:
    """The Pólya sampler of the paper's released code: Gamma scale ``(1-β)/β`` (a bug).

    ``MABPrivate.py`` draws ``λ ~ Gamma(r, scale = (1-p)/p)`` with ``p = β``, which samples
    ``Polya(r, 1-β)`` instead of ``Polya(r, β)`` (spec §9.1). With ``n = 64``, ``ε = 0.5``,
    ``g = 4`` the users' total noise has variance 0.30 instead of 127.8. Kept here so that
    the goodness-of-fit tests can be shown to catch it.

    Parameters
    ----------
    r : float or Fraction
        Shape ``r > 0``.
    beta : float or Fraction
        The ``β`` the caller asked for, in (0, 1).

    Returns
    -------
    Sampler
    """
    shape, b = _polya_params(r, beta)

    def draw(rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        return rng.poisson(rng.gamma(shape=shape, scale=(1 - b) / b, size=size)).astype(np.int64)

    return draw


def polya_difference_sampler(
    users: int,
    beta: float | Fraction,
    share: Callable[[float | Fraction, float | Fraction], Sampler] = polya_sample,
) -> Sampler:
    """The total noise of ``users`` users, each adding ``γ⁺ - γ⁻`` with ``γ^± ~ Polya(1/n, β)``.

    Fact 1 (Goryczka & Xiong 2015, Thm 5.1; spec §2.3): the sum is ``Lap_Z`` with
    ``e^{-1/b} = β``, i.e. ``DiscreteLaplace(decay=β)``. ``share(r, β)`` makes the per-draw
    sampler (:func:`polya_sample`, or :func:`buggy_polya_sample` to reproduce spec §9.1).
    Users are drawn in blocks, so memory stays ``O(size)`` for any number of users.

    Parameters
    ----------
    users : int
        The number of users ``n >= 1``.
    beta : float or Fraction
        ``β`` in (0, 1).
    share : callable
        ``share(r, β)`` returning a :data:`Sampler` of ``Polya(r, β)``.

    Returns
    -------
    Sampler
    """
    n = v.integer("users", users, minimum=1)
    v.open_unit("beta", beta)
    one = share(Fraction(1, n), beta)

    def some_users(rng: np.random.Generator, k: int, size: int) -> NDArray[np.int64]:
        plus = one(rng, k * size).reshape(k, size)
        minus = one(rng, k * size).reshape(k, size)
        return np.asarray((plus - minus).sum(axis=0), dtype=np.int64)

    return _summed_over_users(n, some_users)


_SomeUsers = Callable[[np.random.Generator, int, int], NDArray[np.int64]]


def _summed_over_users(n: int, some_users: _SomeUsers) -> Sampler:
    """A sampler of the sum over ``n`` users, drawn ``k`` at a time (``some_users(rng, k, size)``),
    so memory stays about ``2^22`` draws whatever ``n`` is."""

    def draw(rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        total = np.zeros(size, dtype=np.int64)
        block = max(1, 2**22 // max(size, 1))
        done = 0
        while done < n:
            k = min(block, n - done)
            total += some_users(rng, k, size)
            done += k
        return total

    return draw


# ---------------------------------------------------------------------------------------
# Every sampler of the project
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SamplerCase:
    """A sampler to check: its exact distribution, the sampler, and the sample size.

    ``sampler`` is ``None`` for the distribution's own :meth:`~LatticeNoise.sample`, or its
    :meth:`~LatticeNoise.sample_exact` when ``exact`` is true.
    """

    name: str
    noise: LatticeNoise
    size: int
    sampler: Sampler | None = None
    exact: bool = False

    def check(self, rng: np.random.Generator, alpha: float = 1e-3) -> SamplerReport:
        """:func:`check_sampler` on this case (the exact sampler when ``exact`` and no ``sampler``)."""
        sampler = self.sampler
        if sampler is None and self.exact:
            sampler = self.noise.sample_exact  # type: ignore[assignment]
        return check_sampler(self.noise, rng, self.size, sampler, alpha, name=self.name)


#: The spec's §9.1 example: n = 64 users, ε = 0.5, g = 4, so b = g/ε = 8 and β = e^{-1/8}.
_FACT1_USERS = 64
_FACT1_BETA = math.exp(-1 / 8)

#: Samples per check. At 200 000 draws the variance z-test has a standard error of about
#: ``sqrt((κ - 1)/N) <= 0.5%`` of the variance for every case below (kurtosis ``κ <= 6``), so a
#: sampler whose variance is 3% off gives ``|z| >= 6`` and fails; a wrong parameterization
#: (σ·√2, the Pólya scale bug) is off by far more.
SIZE = 200_000

#: Every sampler the project has, with its exact distribution (see :func:`check_sampler`).
SAMPLERS: tuple[SamplerCase, ...] = (
    SamplerCase("discrete Laplace (b = 8)", DiscreteLaplace(8.0), SIZE),
    SamplerCase("geometric (β = 0.9)", Geometric(0.9), SIZE),
    SamplerCase("Pólya (r = 2.5, β = 0.7)", Polya(2.5, 0.7), SIZE),
    SamplerCase("Pólya share (r = 1/16, β = 0.9)", Polya(Fraction(1, 16), 0.9), SIZE),
    SamplerCase("Skellam symmetric (variance 50)", Skellam(50.0), SIZE),
    SamplerCase("Skellam asymmetric (μ1 = 3.5, μ2 = 1.25, offset 2)", Skellam.from_rates(3.5, 1.25, 2), SIZE),
    SamplerCase("discrete Gaussian (σ = 0.4)", DiscreteGaussian(0.4), SIZE),
    SamplerCase("discrete Gaussian (σ = 150)", DiscreteGaussian(150.0), SIZE),
    SamplerCase("sum of 8 discrete Gaussians (σ = 3)", SumOfDiscreteGaussians(3.0, 8), SIZE),
    SamplerCase("centered binomial (31 trials)", CenteredBinomial(31), SIZE),
    SamplerCase(
        f"Pólya differences of {_FACT1_USERS} users (Fact 1, b = 8)",
        DiscreteLaplace(decay=_FACT1_BETA),
        SIZE,
        polya_difference_sampler(_FACT1_USERS, _FACT1_BETA),
    ),
)


def exact_share_sum_sampler(share: LatticeNoise, users: int) -> Sampler:
    """The users' total noise with every share drawn by its exact sampler (``sample_exact``).

    Pólya shares are added as differences ``γ⁺ - γ⁻`` (Fact 1), every other share as it is, so the
    draw has the distribution of :attr:`accounting.mechanisms.DistributedSum.total_noise`. Users are
    drawn in blocks so memory stays bounded.

    Parameters
    ----------
    share : LatticeNoise
        One user's share.
    users : int
        The number of users ``n >= 1``.

    Returns
    -------
    Sampler
    """
    dist = _lattice(share)
    n = v.integer("users", users, minimum=1)
    signed = isinstance(dist, Polya)

    def some_users(rng: np.random.Generator, k: int, size: int) -> NDArray[np.int64]:
        part = dist.sample_exact(rng, (size, k)).sum(axis=1)
        if signed:
            part = part - dist.sample_exact(rng, (size, k)).sum(axis=1)
        return np.asarray(part, dtype=np.int64)

    return _summed_over_users(n, some_users)


def _exact_polya_share(r: float | Fraction, beta: float | Fraction) -> Sampler:
    """The exact Pólya sampler (:meth:`accounting.noise.Polya.sample_exact`) as a share sampler."""
    return Polya(r, beta).sample_exact


#: Every exact sampler (``sample_exact``), on the cases of :data:`SAMPLERS`, plus rational
#: parameters (the fast int64 paths) and the users' sum of exact Pólya shares (Fact 1).
EXACT_SAMPLERS: tuple[SamplerCase, ...] = (
    *(
        SamplerCase(f"exact {case.name}", case.noise, case.size, exact=True)
        for case in SAMPLERS
        if case.sampler is None
    ),
    SamplerCase("exact discrete Laplace (b = 10/3)", DiscreteLaplace(Fraction(10, 3)), SIZE, exact=True),
    SamplerCase("exact discrete Gaussian (σ = 37/10)", DiscreteGaussian(Fraction(37, 10)), SIZE, exact=True),
    SamplerCase("exact discrete Laplace (decay β = 0.95)", DiscreteLaplace(decay=0.95), SIZE, exact=True),
    SamplerCase(
        "exact Pólya share (r = 1/1000, β = 0.999)", Polya(Fraction(1, 1000), 0.999), SIZE, exact=True
    ),
    SamplerCase(
        f"exact Pólya differences of {_FACT1_USERS} users (Fact 1, b = 8)",
        DiscreteLaplace(decay=_FACT1_BETA),
        SIZE,
        polya_difference_sampler(_FACT1_USERS, _FACT1_BETA, share=_exact_polya_share),
    ),
)
