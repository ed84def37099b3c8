"""Binning: a statistic's values to bin indices, fixed on the pilot before any counted sample.

Integer statistics are binned exactly (or in equal widths when their range is wide), real ones
between quantiles of the pilot. Either way the bins are ordered like the values, so threshold
events on bins are threshold events on the statistic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from verification.errors import VerificationError

__all__ = ["Binning", "EdgeBins", "IntegerBins", "edge_bins", "integer_bins"]


@dataclass(frozen=True)
class IntegerBins:
    """Integers in ``[lo, lo + bins*width)`` in bins of ``width``; values beyond go to the end bins.

    Clipping is monotone, so threshold events on bins are threshold events on the values.
    """

    lo: int
    width: int
    bins: int

    def index(self, values: NDArray[Any]) -> NDArray[np.intp]:
        x = np.asarray(values).astype(np.int64, copy=False)
        return np.clip((x - self.lo) // self.width, 0, self.bins - 1).astype(np.intp)

    def at_least(self, b: int) -> str:
        return f">= {self.lo + b * self.width}"

    def at_most(self, b: int) -> str:
        return f"<= {self.lo + (b + 1) * self.width - 1}"

    def values(self, b: int) -> str:
        first = self.lo + b * self.width
        last = first + self.width - 1
        if b == 0:
            return f"<= {last}"
        if b == self.bins - 1:
            return f">= {first}"
        return str(first) if self.width == 1 else f"[{first}, {last}]"


@dataclass(frozen=True)
class EdgeBins:
    """Real values in the bins ``(-inf, e0), [e0, e1), ..., [e_last, inf)`` (quantiles of the pilot)."""

    edges: tuple[float, ...]

    @property
    def bins(self) -> int:
        return len(self.edges) + 1

    def index(self, values: NDArray[Any]) -> NDArray[np.intp]:
        x = np.asarray(values, dtype=np.float64)
        return np.searchsorted(np.asarray(self.edges), x, side="right").astype(np.intp)

    def at_least(self, b: int) -> str:
        return f">= {self.edges[b - 1]!r}"

    def at_most(self, b: int) -> str:
        return f"< {self.edges[b]!r}"

    def values(self, b: int) -> str:
        lo = "-inf" if b == 0 else repr(self.edges[b - 1])
        hi = "inf" if b == len(self.edges) else repr(self.edges[b])
        return f"[{lo}, {hi})"


def integer_bins(values: NDArray[Any], max_bins: int) -> IntegerBins:
    """Bins of width >= 1 covering the pilot's range and a margin, at most ``max_bins`` of them."""
    lo, hi = int(values.min()), int(values.max())
    # Room beyond the pilot's range: later chunks reach further into the tails.
    margin = max(16, (hi - lo) // 2)
    lo, hi = lo - margin, hi + margin
    span = hi - lo + 1
    width = -(-span // max_bins)
    return IntegerBins(lo, width, -(-span // width))


def edge_bins(values: NDArray[Any], float_bins: int) -> EdgeBins:
    """Bins between the distinct ``float_bins``-quantiles of the pilot's values."""
    x = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise VerificationError("the statistic returned NaN or infinite values on the pilot sample")
    qs = np.quantile(x, np.linspace(0, 1, float_bins + 1)[1:-1], method="inverted_cdf")
    return EdgeBins(tuple(float(e) for e in np.unique(qs)))


#: The binning of a statistic: exact integers or quantiles of the pilot.
Binning = IntegerBins | EdgeBins
