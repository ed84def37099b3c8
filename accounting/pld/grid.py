"""One side of a privacy-loss distribution: a fixed-point measure on a grid of losses.

Losses live on a grid ``offset + j·h`` (integer ``j``); probabilities are exact fixed-point
integers with scale ``2^bits`` (:func:`probability_bits`), plus an atom at ``+inf``. A side is read
by queries as a :class:`Grid` (by blocks, :mod:`accounting.pld.sums`) and composed as :class:`Rows`
(little-endian byte rows, :mod:`accounting.pld.products`); a grid holds whichever form it was
made in. Negligible tails are cut (:func:`truncate_rows`) — moving mass to higher losses only on
the pessimistic side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import mpmath.libmp
import numpy as np
from numpy.typing import NDArray

from accounting.certified import Enclosure, Interval, Mpf, interval, shift_down

#: Extra decimal digits of the interval arithmetic that evaluates δ and ε on a grid.
EXTRA_DPS = 20


_LIMB = (1 << 64) - 1


def probability_bits(dps: int) -> int:
    """Fixed-point bits of the probabilities: ``dps`` decimal digits, 4 guard digits, and 16 bits
    for the rounding errors of up to ``2^16`` grid points adding up (each rounding is one unit),
    rounded up to whole bytes (the composition shifts byte rows,
    :func:`~accounting.pld.products.compose_rows`)."""
    return 8 * math.ceil((math.ceil((dps + 4) * math.log2(10)) + 16) / 8)


def binary_parts(x: Mpf | float) -> tuple[int, int, int, int]:
    """The exact binary ``(sign, mantissa, exponent, bitcount)`` of an mpf or float.

    Not ``mp.mpf(x)``, which would round an mpf wider than the current precision.
    """
    if isinstance(x, mpmath.mpf):
        return x._mpf_  # type: ignore[no-any-return]
    return mpmath.libmp.from_float(float(x))  # type: ignore[no-any-return]


def fixed_point(x: Mpf | float, bits: int, rounding: str) -> int:
    """``x · 2^bits`` rounded (``"f"`` down, ``"c"`` up), exactly from the binary mantissa."""
    if isinstance(x, float) and math.isfinite(x):
        man, exp = math.frexp(x)
        m, e = int(man * 2**53), exp - 53 + bits  # exact: a float's mantissa has 53 bits
        return m << e if e >= 0 else shift_down(m, -e, rounding == "c")
    return int(mpmath.libmp.to_int(mpmath.libmp.mpf_shift(binary_parts(x), bits), rounding))


# ---------------------------------------------------------------------------------------
# One side of a PLD: a fixed-point measure on the grid plus an atom at +inf
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Grid:
    """Masses ``masses[i] · 2^-bits`` at the grid losses ``offset + (start + i)·h``, plus ``+inf``.

    ``held`` is either the masses as Python integers or as byte rows (little-endian, as
    :class:`Rows` holds them: what a composition returns). Each form is made from the other only
    when asked: a query reads the blocks it needs (:meth:`ints`), a composition the rows.
    """

    start: int
    held: tuple[int, ...] | NDArray[np.uint8]
    infinite: int
    #: An upper bound on the mass that float products moved
    #: (:func:`~accounting.pld.products.compose_rows`): to ``+inf``
    #: on the pessimistic side, off the top on the optimistic one, and that a window left beyond
    #: its ends (:func:`accounting.pld.atoms.pair_atoms`). δ may be loose by this much.
    slack: float = 0.0

    def __eq__(self, other: object) -> bool:
        """The same measure on the same grid points (whichever form each holds)."""
        if not isinstance(other, Grid):
            return NotImplemented
        return (self.start, self.infinite, self.slack, self.size) == (
            other.start,
            other.infinite,
            other.slack,
            other.size,
        ) and self.masses == other.masses

    def __hash__(self) -> int:
        return hash((self.start, self.infinite, self.slack, self.masses))

    @property
    def size(self) -> int:
        """The number of grid points held."""
        return len(self.held)

    @property
    def width(self) -> int:
        """Bytes enough for each mass (at least 1)."""
        if isinstance(self.held, tuple):
            return max(self.held, default=0).bit_length() // 8 + 1
        return max(1, int(self.held.shape[1]))

    @cached_property
    def masses(self) -> tuple[int, ...]:
        """The masses as Python integers."""
        if isinstance(self.held, tuple):
            return self.held
        return tuple(_ints(self.held).tolist())

    def ints(self, lo: int, hi: int) -> NDArray[np.object_]:
        """``masses[lo:hi]`` as Python integers in a numpy object array."""
        if isinstance(self.held, tuple):
            return np.array(self.held[lo:hi], dtype=object)
        return _ints(self.held[lo:hi])

    def byte_rows(self, width: int) -> NDArray[np.uint8]:
        """The masses as byte rows ``width`` bytes wide (``AssertionError`` if one does not fit)."""
        if isinstance(self.held, tuple):
            return int_rows(self.held, width)
        rows = self.held
        if rows.shape[1] > width:
            if len(rows) and np.any(rows[:, width:]):
                raise AssertionError("a mass exceeds its fixed-point width")
            return np.ascontiguousarray(rows[:, :width])
        if rows.shape[1] < width:
            wider = np.zeros((len(rows), width), dtype=np.uint8)
            wider[:, : rows.shape[1]] = rows
            return wider
        return rows

    def rescaled(self, shift: int, up: bool) -> Grid:
        """The same grid with ``shift`` fewer fractional bits (rounded up or down)."""
        if shift == 0:
            return self
        return Grid(
            self.start,
            tuple(shift_down(m, shift, up) for m in self.masses),
            shift_down(self.infinite, shift, up),
            self.slack,
        )


def int_rows(masses: Sequence[int] | NDArray[np.object_], width: int) -> NDArray[np.uint8]:
    """Nonnegative Python integers as byte rows ``width`` bytes wide (little-endian)."""
    try:
        raw = b"".join(int(m).to_bytes(width, "little") for m in masses)
    except OverflowError:
        raise AssertionError("a mass exceeds its fixed-point width") from None
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(masses), width).copy()


def add_rows(a: NDArray[np.uint8], b: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Row by row sums of two arrays of byte rows of one width, exactly, in 32-bit limbs with the
    carries passed up (``AssertionError`` where a sum does not fit the width)."""
    n, width = a.shape
    padded = -(-width // 4) * 4 + 4  # a limb to spare for the last carry

    def limbs(x: NDArray[np.uint8]) -> NDArray[np.uint64]:
        buf = np.zeros((n, padded), dtype=np.uint8)
        buf[:, :width] = x
        return buf.view("<u4").astype(np.uint64)

    total = limbs(a) + limbs(b)
    for i in range(total.shape[1] - 1):
        total[:, i + 1] += total[:, i] >> np.uint64(32)
        total[:, i] &= np.uint64(0xFFFFFFFF)
    out = np.ascontiguousarray(total.astype("<u4").view(np.uint8))
    if n and np.any(out[:, width:]):
        raise AssertionError("a mass exceeds its fixed-point width")
    return np.ascontiguousarray(out[:, :width])


def _ints(rows: NDArray[np.uint8]) -> NDArray[np.object_]:
    """Byte rows as Python integers in a numpy object array (exact big-int arithmetic)."""
    n, width = rows.shape
    buf = np.zeros((n, max(1, -(-width // 8)) * 8), dtype=np.uint8)
    buf[:, :width] = rows
    limbs = buf.view(np.uint64)
    out = limbs[:, -1].astype(object)
    for i in range(limbs.shape[1] - 2, -1, -1):
        out = (out << 64) | limbs[:, i].astype(object)
    return np.asarray(out, dtype=object)


@dataclass(frozen=True, eq=False)
class Rows:
    """A side held as byte rows for composition: row ``i`` is ``masses[i]`` in little-endian bytes.

    Convolutions then pack, multiply and unpack whole arrays (numpy and one GMP product) with no
    Python loop over grid points; :class:`Grid` is what queries read (:meth:`grid` wraps the rows).
    """

    start: int
    rows: NDArray[np.uint8]
    infinite: int
    slack: float = 0.0  # as Grid.slack

    @classmethod
    def of(cls, grid: Grid, bits: int) -> Rows:
        width = bits // 8 + 1  # a mass is at most 1 + (rounding): below 2^(bits + 8)
        return cls(grid.start if grid.size else 0, grid.byte_rows(width), grid.infinite, grid.slack)

    @classmethod
    def of_ints(
        cls, start: int, masses: NDArray[np.object_], infinite: int, bits: int, slack: float = 0.0
    ) -> Rows:
        """Rows of Python integers (a numpy object array), as :meth:`ints` gives them."""
        width = bits // 8 + 1  # a mass is at most 1 + (rounding): below 2^(bits + 8)
        return cls(start if len(masses) else 0, int_rows(masses, width), infinite, slack)

    @classmethod
    def from_dict(cls, masses: dict[int, int], infinite: int, bits: int, slack: float = 0.0) -> Rows:
        """Rows of the masses at the grid indices of a dict (absent and zero ones are empty)."""
        kept = sorted((j, m) for j, m in masses.items() if m)
        width = bits // 8 + 1
        if not kept:
            return cls(0, np.zeros((0, width), dtype=np.uint8), infinite, slack)
        lo, hi = kept[0][0], kept[-1][0]
        rows = np.zeros((hi - lo + 1, width), dtype=np.uint8)
        rows[np.array([j for j, _ in kept]) - lo] = int_rows([m for _, m in kept], width)
        return cls(lo, rows, infinite, slack)

    def ints(self) -> NDArray[np.object_]:
        """The masses as Python integers in a numpy object array (exact big-int arithmetic)."""
        return _ints(self.rows)

    def grid(self) -> Grid:
        """The same side as a :class:`Grid` (holding these rows)."""
        n = len(self.rows)
        return Grid(self.start if n else 0, self.rows if n else (), self.infinite, self.slack)

    def total(self) -> int:
        """``Σ masses``, exactly (column sums of bytes cannot overflow 64 bits below 2^56 rows)."""
        sums = self.rows.sum(axis=0, dtype=np.uint64)
        return sum(int(x) << (8 * i) for i, x in enumerate(sums))


def truncate_rows(side: Rows, up: bool) -> Rows:
    """Cut the tails whose mass is at most ``len(masses)`` units (the rounding error's size).

    Pessimistic (``up``): the top tail goes to ``+inf`` and the bottom tail to the lowest kept
    point (both move mass to higher losses). Optimistic: both are dropped.
    """
    rows = side.rows
    n, width = rows.shape
    if n == 0:
        return side
    budget = n
    low = np.zeros(n, dtype=np.uint64)
    for col in range(min(4, width)):
        low |= rows[:, col].astype(np.uint64) << np.uint64(8 * col)
    small = low <= budget
    if width > 4:
        small &= ~np.any(rows[:, 4:] != 0, axis=1)
    values = np.where(small, low, np.uint64(budget + 1))
    from_top = np.cumsum(values[::-1])
    k_top = int(np.searchsorted(from_top, budget, side="right"))
    top = n - k_top
    cut_top = int(from_top[k_top - 1]) if k_top else 0
    k_bottom = cut_bottom = 0
    if top > 1:
        from_bottom = np.cumsum(values[: top - 1])
        k_bottom = int(np.searchsorted(from_bottom, budget, side="right"))
        cut_bottom = int(from_bottom[k_bottom - 1]) if k_bottom else 0
    if k_bottom == 0 and top == n:
        return side
    kept = np.array(rows[k_bottom:top], dtype=np.uint8)
    infinite = side.infinite
    if up:
        infinite += cut_top
        if len(kept) and cut_bottom:
            first = int.from_bytes(kept[0].tobytes(), "little") + cut_bottom
            kept[0] = np.frombuffer(first.to_bytes(width, "little"), dtype=np.uint8)
    if not len(kept):
        return Rows(0, kept, infinite, side.slack)
    return Rows(side.start + k_bottom, kept, infinite, side.slack)


def enclosed(e: Enclosure) -> Interval:
    """The interval of an enclosure (at the current ``iv`` precision)."""
    return interval(e.lo, e.hi)
