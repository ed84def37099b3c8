"""Pearson's chi-square test and the likelihood-ratio G-test against an exact PMF.

Pearson 1900 ("On the criterion that a given system of deviations from the probable ...",
Philosophical Magazine 50): ``X² = Σ (O - E)²/E``; the G-test ``G = 2 Σ O ln(O/E)`` (Wilks 1938,
"The large-sample distribution of the likelihood ratio for testing composite hypotheses", Annals
of Mathematical Statistics 9). Both over the pooled bins of
:mod:`verification.goodness_of_fit.pooling`, with p-values from the ``χ²`` law with ``bins - 1``
degrees of freedom (no parameter is estimated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from accounting import validate as v
from accounting.noise import LatticeNoise
from verification.goodness_of_fit.pooling import Bin, checked_level, integer_samples, lattice, pooled_bins
from verification.goodness_of_fit.pvalues import format_p, log10_chi2_sf

__all__ = ["FitResult", "chi_square_test", "g_test"]


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
            f"p = {format_p(self.p_value, self.log10_p)} -> {verdict} at alpha = {self.alpha:g} "
            f"({self.size} samples, {len(self.bins)} bins)"
        )
        if self.outside_support:
            head += f"; {self.outside_support} samples outside the support"
        worst = ", ".join(f"{b.label}: {b.observed} vs {b.expected:.1f}" for b in self.worst_bins())
        return f"{head}\n  largest deviations (observed vs expected): {worst}"


def _fit(test: str, noise: object, samples: ArrayLike, min_expected: float, alpha: float) -> FitResult:
    import scipy.stats  # here, not at module level: importing it takes about a second

    dist = lattice(noise)
    xs = integer_samples(samples)
    m = v.positive("min_expected", min_expected)
    level = checked_level(alpha)
    bins, outside = pooled_bins(dist, xs, m)
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
    log10_p = log10_chi2_sf(statistic, dof)
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
    ``min_expected`` samples (see :func:`~verification.goodness_of_fit.pooling.pooled_bins`). The
    p-value is ``P(χ²_{k-1} >= X²)`` for ``k`` bins, from :data:`scipy.stats.chi2`. A sample at an
    integer of probability 0 fails the test outright (statistic ``inf``, p-value 0).

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
