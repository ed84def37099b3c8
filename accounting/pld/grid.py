"""One side of a privacy-loss distribution: a fixed-point measure on a grid of losses, and its exact
convolution.

Losses live on a grid ``offset + j·h`` (integer ``j``); probabilities are exact fixed-point
integers with scale ``2^bits`` (:func:`probability_bits`), plus an atom at ``+inf``. A side is read
by queries as a :class:`Grid` (Python integers) and composed as :class:`Rows` (little-endian byte
rows): composition is exact integer convolution by Kronecker substitution
(:func:`accounting.convolution.convolve_rows`: one big-integer product by GMP on rows packed by
numpy), rounded down for the optimistic side and up for the pessimistic one, whose negligible tails
are then cut (:func:`truncate_rows`) — moving mass to higher losses only on the pessimistic side.
Long sides are convolved in floating point (:func:`accounting.convolution.fft_convolve`) with a
certified bound on the error, which goes to ``+inf`` on the pessimistic side and is taken off the
top of the optimistic one (:data:`FFT_MIN_POINTS`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import mpmath.libmp
import numpy as np
from numpy.typing import NDArray

from accounting.certified import Enclosure, Interval, Mpf, interval
from accounting.convolution import convolve_rows, fft_convolve, fft_error

#: Extra decimal digits of the interval arithmetic that evaluates δ and ε on a grid.
EXTRA_DPS = 20


_LIMB = (1 << 64) - 1

#: Sides of at least this many points each are convolved in floating point (:func:`compose_rows`):
#: an exact product of two sides of ``n`` points of ``b`` bits costs GMP ``O(nb log(nb))`` on
#: megabit integers (20–110 ms at 62,530 points of 96 bits), a float FFT of the same about 5 ms.
FFT_MIN_POINTS = 1024

#: Fixed-point widths up to which products may be taken in floating point: the default
#: precision's (:func:`probability_bits` of 20 digits). A PLD asked at more digits (a δ below
#: about 10^-12, :class:`~accounting.accountant.Accountant`) wants more than float products give.
FFT_MAX_BITS = 96

#: The slack (:attr:`Grid.slack`) one composition may take from float products: a
#: self-composition spreads it over its products, weighted by how often each one's result is
#: used (:meth:`~accounting.pld.PrivacyLossDistribution.self_compose`). With
#: :data:`~accounting.pld.SLACK_SHARE` it keeps float products for every δ above about 10^-8.
FLOAT_SLACK = 1e-14

_EXACT: ContextVar[bool] = ContextVar("exact_products", default=False)


@contextmanager
def exact_products() -> Iterator[None]:
    """Within this context every composition is an exact integer product (no float products):
    for an answer whose δ the float products' slack (:attr:`Grid.slack`) would loosen."""
    token = _EXACT.set(True)
    try:
        yield
    finally:
        _EXACT.reset(token)


#: Relative widening of a float64 mass converted from fixed point (:func:`float_masses`:
#: ``2^-50``, 8 units of roundoff, covers its three roundings and the widening's own).
_WIDEN = 2.0**-50


def probability_bits(dps: int) -> int:
    """Fixed-point bits of the probabilities: ``dps`` decimal digits, 4 guard digits, and 16 bits
    for the rounding errors of up to ``2^16`` grid points adding up (each rounding is one unit),
    rounded up to whole bytes (the composition shifts byte rows, :func:`compose_rows`)."""
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
    return int(mpmath.libmp.to_int(mpmath.libmp.mpf_shift(binary_parts(x), bits), rounding))


def scale_int(n: int, x: Mpf, rounding: str) -> int:
    """``n · x`` for an integer ``n >= 0`` and an ``mpf`` ``x >= 0``, rounded exactly."""
    sign, man, exp, _ = binary_parts(x)
    if sign:
        raise AssertionError("negative factor")
    value = n * int(man)
    exp = int(exp)
    if exp >= 0:
        return value << exp
    return value >> -exp if rounding == "f" else -((-value) >> -exp)


def shift_down(x: int, bits: int, up: bool) -> int:
    """``x / 2^bits`` rounded up (``up``) or down."""
    return -((-x) >> bits) if up else x >> bits


# ---------------------------------------------------------------------------------------
# One side of a PLD: a fixed-point measure on the grid plus an atom at +inf
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grid:
    """Masses ``masses[i] · 2^-bits`` at the grid losses ``offset + (start + i)·h``, plus ``+inf``."""

    start: int
    masses: tuple[int, ...]
    infinite: int
    #: An upper bound on the mass that float products moved (:func:`compose_rows`): to ``+inf``
    #: on the pessimistic side, off the top on the optimistic one. δ may be loose by this much.
    slack: float = 0.0

    @classmethod
    def from_dict(cls, masses: dict[int, int], infinite: int) -> Grid:
        kept = {j: m for j, m in masses.items() if m}
        if not kept:
            return cls(0, (), infinite)
        lo, hi = min(kept), max(kept)
        return cls(lo, tuple(kept.get(j, 0) for j in range(lo, hi + 1)), infinite)

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


@dataclass(frozen=True, eq=False)
class Rows:
    """A side held as byte rows for composition: row ``i`` is ``masses[i]`` in little-endian bytes.

    Convolutions then pack, multiply and unpack whole arrays (numpy and one GMP product) with no
    Python loop over grid points; :class:`Grid` (Python integers) is what queries read.
    """

    start: int
    rows: NDArray[np.uint8]
    infinite: int
    slack: float = 0.0  # as Grid.slack

    @classmethod
    def of(cls, grid: Grid, bits: int) -> Rows:
        return cls.of_ints(grid.start, np.array(grid.masses, dtype=object), grid.infinite, bits, grid.slack)

    @classmethod
    def of_ints(
        cls, start: int, masses: NDArray[np.object_], infinite: int, bits: int, slack: float = 0.0
    ) -> Rows:
        """Rows of Python integers (a numpy object array), as :meth:`ints` gives them."""
        width = bits // 8 + 1  # a mass is at most 1 + (rounding): below 2^(bits + 8)
        limbs = np.zeros((len(masses), -(-width // 8)), dtype=np.uint64)
        rest = masses
        for i in range(limbs.shape[1]):
            limbs[:, i] = (rest & _LIMB).astype(np.uint64)
            rest = rest >> 64
        raw = limbs.view(np.uint8)[:, :width]
        if len(masses) and (np.any(rest != 0) or np.any(limbs.view(np.uint8)[:, width:])):
            raise AssertionError("a mass exceeds its fixed-point width")
        return cls(start if len(masses) else 0, np.ascontiguousarray(raw), infinite, slack)

    def ints(self) -> NDArray[np.object_]:
        """The masses as Python integers in a numpy object array (exact big-int arithmetic)."""
        n, width = self.rows.shape
        buf = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
        buf[:, :width] = self.rows
        limbs = buf.view(np.uint64)
        out = limbs[:, -1].astype(object)
        for i in range(limbs.shape[1] - 2, -1, -1):
            out = (out << 64) | limbs[:, i].astype(object)
        return np.asarray(out, dtype=object)

    def grid(self) -> Grid:
        masses = tuple(self.ints().tolist())
        return Grid(self.start if masses else 0, masses, self.infinite, self.slack)

    def total(self) -> int:
        """``Σ masses``, exactly (column sums of bytes cannot overflow 64 bits below 2^56 rows)."""
        sums = self.rows.sum(axis=0, dtype=np.uint64)
        return sum(int(x) << (8 * i) for i, x in enumerate(sums))


def _shift_rows(rows: NDArray[np.uint8], nbytes: int, up: bool, width: int) -> NDArray[np.uint8]:
    """Each row divided by ``2^(8 nbytes)``, rounded up (``up``) or down, in ``width`` bytes."""
    high = rows[:, nbytes:]
    if high.shape[1] > width and np.any(high[:, width:]):
        raise AssertionError("a composed mass exceeds its fixed-point width")
    out = np.zeros((len(rows), width), dtype=np.uint8)
    keep = min(width, high.shape[1])
    out[:, :keep] = high[:, :keep]
    if up:
        carry = np.any(rows[:, :nbytes] != 0, axis=1).astype(np.uint16)
        for col in range(width):
            if not carry.any():
                break
            value = out[:, col].astype(np.uint16) + carry
            out[:, col] = (value & 0xFF).astype(np.uint8)
            carry = value >> 8
        if carry.any():
            raise AssertionError("a composed mass exceeds its fixed-point width")
    return out


def float_masses(rows: NDArray[np.uint8], bits: int, up: bool) -> NDArray[np.float64]:
    """Fixed-point masses (``bits`` fractional bits) as float64, each rounded up (``up``) or down."""
    n, width = rows.shape
    buf = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    buf[:, :width] = rows
    limbs = buf.view(np.uint64)
    value = np.zeros(n)
    for i in range(limbs.shape[1] - 1, -1, -1):  # each step rounds once: at most 3 roundings
        value = value * 2.0**64 + limbs[:, i].astype(np.float64)
    return np.ldexp(value * (1.0 + _WIDEN if up else 1.0 - _WIDEN), -bits)


def fixed_masses(values: NDArray[np.floating[Any]], bits: int, up: bool, width: int) -> NDArray[np.uint8]:
    """Float masses ``>= 0`` as fixed-point byte rows of ``width <= 16`` bytes, rounded up or down.

    Exact: ``m = ⌈v·2^bits⌉`` (or ``⌊⌋``) is a float integer below ``2^116``, and its two 64-bit
    limbs ``⌊m/2^64⌋`` and ``m - 2^64⌊m/2^64⌋`` are floats of the same format too.
    """
    m = np.ldexp(values, bits)
    m = np.ceil(m) if up else np.floor(m)
    if np.any(m >= 2.0 ** (8 * width)):
        raise AssertionError("a composed mass exceeds its fixed-point width")
    high = np.floor(np.ldexp(m, -64))
    low = m - np.ldexp(high, 64)
    limbs = np.stack([low.astype(np.uint64), high.astype(np.uint64)], axis=1)
    return np.ascontiguousarray(limbs.view(np.uint8)[:, :width])


def _take_from_top(values: NDArray[np.longdouble], mass: float) -> NDArray[np.longdouble]:
    """``values`` (``>= 0``) with at least ``mass`` taken off the top entries.

    The suffix sums are computed in floating point (relative error far below the factor 2 of slack
    asked of the entry where the cut falls); what that entry gives up is widened by ``2^-40``.
    """
    if mass <= 0:
        return values
    want = mass * (1 + 2.0**-20)
    suffix = np.cumsum(values[::-1])[::-1]
    above = np.flatnonzero(suffix > 2 * want)
    out = values.copy()
    if not len(above):
        out[:] = 0.0
        return out
    k = int(above[-1])
    rest = float(suffix[k + 1]) if k + 1 < len(out) else 0.0
    out[k + 1 :] = 0.0
    out[k] = max(0.0, out[k] - max(0.0, want - rest) * (1 + 2.0**-40))
    return out


def _cut_tails(
    values: NDArray[np.longdouble], budget: float, up: bool
) -> tuple[int, NDArray[np.longdouble], float, float]:
    """Cut the tails of float masses whose sums are at most ``budget``.

    Returns ``(first kept, kept, top, bottom)`` with the masses of the two tails (their float sums
    widened by ``2^-40``). A float product's entries far in its tails are rounding noise (about
    ``u`` times the largest entry), which no fixed-point truncation would cut. Pessimistic
    (``up``): the bottom tail's mass goes to the lowest kept point (the caller puts the top's at
    ``+inf``); optimistic: both are dropped.
    """
    top = np.cumsum(values[::-1])
    k_top = int(np.searchsorted(top, budget, side="right"))
    end = len(values) - k_top
    bottom = np.cumsum(values[:end])
    k_bottom = min(int(np.searchsorted(bottom, budget, side="right")), max(0, end - 1))
    kept = values[k_bottom:end].copy()
    widen = 1 + 2.0**-40
    top_mass = float(top[k_top - 1]) * widen if k_top else 0.0
    bottom_mass = float(bottom[k_bottom - 1]) * widen if k_bottom else 0.0
    if up and bottom_mass and len(kept):
        kept[0] += bottom_mass
    return k_bottom, kept, top_mass, bottom_mass


def compose_rows(a: Rows, b: Rows, bits: int, up: bool, same: bool = False, allowance: float = 0.0) -> Rows:
    """The product measure of two sides: finite losses convolve, ``+inf`` absorbs the rest.

    The mass at ``+inf`` is ``a_inf·(B_fin + b_inf) + A_fin·b_inf`` (the measure product; it is
    ``1 - (1 - a_inf)(1 - b_inf)`` when both totals are 1). Rounded up for the pessimistic side
    (``up``), down for the optimistic one, then truncated (:func:`truncate_rows`).

    Sides of :data:`FFT_MIN_POINTS` points or more, of at most :data:`FFT_MAX_BITS` bits, are
    convolved in floating point (:func:`~accounting.convolution.fft_convolve`) when its error
    bound ``e`` is at most ``allowance`` (outside :func:`exact_products`): their masses rounded up
    (pessimistic) or down, the result's likewise, and ``e`` made good: the pessimistic side adds
    ``e`` to ``+inf`` — every upper tail ``P(L > t)`` of the exact product is then at most the
    computed one's, so every composition after it and every ``δ(ε)`` is bounded above — and the
    optimistic side takes ``e`` off its top losses, so every upper tail is at most the exact
    one's. Tails of the float result within ``e`` are cut (:func:`_cut_tails`). What moved is
    added to :attr:`Rows.slack`.
    """
    width = bits // 8 + 1
    a_fin, b_fin = a.total(), b.total()
    infinite = shift_down(a.infinite * (b_fin + b.infinite) + a_fin * b.infinite, bits, up)
    # Float products' errors carried along: each side's slack times the other's total mass.
    mass_a, mass_b = (math.ldexp(float(x.total() + x.infinite), -bits) * (1 + _WIDEN) for x in (a, b))
    slack = (a.slack * mass_b + b.slack * mass_a) * (1 + _WIDEN)
    if not len(a.rows) or not len(b.rows):
        return Rows(0, np.zeros((0, width), dtype=np.uint8), infinite, slack)
    fast = min(len(a.rows), len(b.rows)) >= FFT_MIN_POINTS and bits <= FFT_MAX_BITS and not _EXACT.get()
    fa = float_masses(a.rows, bits, up) if fast else None
    fb = fa if same else float_masses(b.rows, bits, up) if fast else None
    if fa is not None and fb is not None and fft_error(fa, fb, same) <= allowance:
        product, error = fft_convolve(fa, fb, same)
        if up:
            infinite += math.ceil(math.ldexp(error, bits))
        else:
            product = _take_from_top(product, error)
        first, product, top, bottom = _cut_tails(product, error, up)
        if up:
            infinite += math.ceil(math.ldexp(top, bits))
        # the widened inputs' excess mass, the error and the tails cut
        slack += (3 * _WIDEN * mass_a * mass_b + 2 * error + top + bottom) * (1 + _WIDEN)
        if not len(product):
            return Rows(0, np.zeros((0, width), dtype=np.uint8), infinite, slack)
        rows = fixed_masses(product, bits, up, width)
        return truncate_rows(Rows(a.start + b.start + first, rows, infinite, slack), up)
    rows = _shift_rows(convolve_rows(a.rows, b.rows, same), bits // 8, up, width)
    return truncate_rows(Rows(a.start + b.start, rows, infinite, slack), up)


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


def truncate(grid: Grid, up: bool) -> Grid:
    """:func:`truncate_rows` of a grid of Python integers (``bits`` only sets the row width)."""
    width = max((m.bit_length() for m in grid.masses), default=0) // 8 + 1
    return truncate_rows(Rows.of(grid, 8 * (width - 1)), up).grid()


def enclosed(e: Enclosure) -> Interval:
    """The interval of an enclosure (at the current ``iv`` precision)."""
    return interval(e.lo, e.hi)
