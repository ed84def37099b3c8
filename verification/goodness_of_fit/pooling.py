"""The exact PMF table and the pooled bins every goodness-of-fit statistic is computed on.

Expected counts come from the *exact* PMF of :mod:`accounting.noise` (certified enclosures at 15
digits, converted to float) on a window from the certified tail bounds; the two open tails and any
cell with a low expected count are pooled with their neighbours until every bin expects at least
``min_expected`` samples (5 by default: the classical rule for the chi-square approximation,
Cochran 1954, "Some methods for strengthening the common χ² tests", Biometrics 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mpmath import mp
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.certified import lower, precision, upper
from accounting.noise import LatticeNoise
from verification.errors import ParameterError, ParameterTypeError, VerificationError

__all__ = ["Bin", "Table", "checked_level", "exact_table", "integer_samples", "lattice", "pooled_bins"]

#: Working precision (decimal digits) of the exact PMF tables; float64 needs no more.
_DPS = 15

#: Mass left outside the exact table, relative to one expected count (see :func:`exact_table`).
_OUTSIDE_COUNTS = 1e-6


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


def lattice(noise: object) -> LatticeNoise:
    """``noise``, checked to be a lattice distribution of :mod:`accounting.noise`."""
    if not isinstance(noise, LatticeNoise):
        raise ParameterTypeError("noise", noise, "a lattice distribution from accounting.noise")
    return noise


def integer_samples(samples: ArrayLike) -> NDArray[np.int64]:
    """``samples`` as a flat int64 array (floats that are integers accepted), non-empty."""
    arr = np.asarray(samples)
    described = f"<array of shape {arr.shape}, dtype {arr.dtype}>"
    if arr.size == 0:
        raise ParameterError("samples", described, "a non-empty array of integers")
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64, copy=False).ravel()
    if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        return arr.astype(np.int64).ravel()
    raise ParameterError("samples", described, "an array of integers")


def checked_level(alpha: object) -> float:
    """``alpha``, the level of a test, checked to be in (0, 1)."""
    return v.open_unit("alpha", alpha)


@dataclass(frozen=True)
class Table:
    """Float probabilities ``probs[i] = P(X = start + i)`` from certified enclosures."""

    start: int
    probs: NDArray[np.float64]

    @property
    def xs(self) -> NDArray[np.float64]:
        return np.arange(self.start, self.start + self.probs.size, dtype=np.float64)


def exact_table(noise: LatticeNoise, size: int) -> Table:
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
    return Table(a, probs)


def pooled_bins(
    noise: LatticeNoise, samples: NDArray[np.int64], min_expected: float
) -> tuple[list[Bin], int]:
    """Bins with every expected count ``>= min_expected``, and the samples outside the support.

    Cells are the integers of the exact table plus the two open tails; adjacent cells are
    merged from the left until a bin holds ``min_expected`` expected counts, and a short last
    bin is merged into its neighbour. The first bin starts at ``-inf`` and the last ends at
    ``+inf``, so every sample lands in a bin.
    """
    size = samples.size
    table = exact_table(noise, size)
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
