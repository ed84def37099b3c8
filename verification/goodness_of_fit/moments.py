"""z-tests of the sample mean and variance against the exact moments of a lattice distribution."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from accounting.noise import LatticeNoise
from verification.errors import ParameterError
from verification.goodness_of_fit.pooling import checked_level, exact_table, integer_samples, lattice

__all__ = ["MomentResult", "moment_test"]


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

    dist = lattice(noise)
    xs = integer_samples(samples)
    level = checked_level(alpha)
    n = xs.size
    if n < 2:
        raise ParameterError("samples", f"<{n} sample>", "at least 2 samples")
    table = exact_table(dist, n)
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
