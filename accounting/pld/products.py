"""Products of two sides of a PLD (:class:`~accounting.pld.grid.Rows`): exact, float, or both.

:func:`compose_rows` takes the product measure of two sides, rounded up on the pessimistic side
and down on the optimistic one. Three ways, the cheapest whose error fits the ``allowance`` its
caller gives (:meth:`accounting.pld.PrivacyLossDistribution.self_compose` spreads
:data:`FLOAT_SLACK` over its products by how often each result is used):

* **exact**: integer convolution by Kronecker substitution
  (:func:`accounting.convolution.convolve_rows`, one GMP product), no error but rounding;
* **float**: an FFT in long double (:func:`accounting.convolution.fft_convolve`) with a certified
  bound ``e`` on the ℓ1 error, made good per side — ``e`` added to ``+inf`` on the pessimistic
  side (every upper tail ``P(L > t)`` of the exact product is then at most the computed one's,
  so every composition after it and every ``δ(ε)`` is bounded above), ``e`` taken off the top
  of the optimistic one (every upper tail then at most the exact one's);
* **split**: where the mass is concentrated (the loss of a subsampled release sits on a few
  hundred grid points around ``ln(1 - q)`` with ``1 - q`` of the mass) the FFT's error, which
  scales with ``‖a‖_2``, is large. The *bulk* (the shortest span of the entries above a share of
  the largest, :data:`_BULK_FLOORS`, of at most :data:`_BULK_SPAN` points) is multiplied exactly
  and only the products with the thin *rest* by FFT: the bound falls with ``‖rest‖`` (1.6e-15 to
  2e-19 for one Poisson-sampled Gaussian step at spacing 2^-13).

What the float products moved is added to the sides' :attr:`~accounting.pld.grid.Rows.slack`;
:func:`exact_products` turns them off (the :class:`~accounting.accountant.Accountant` does where
the slack would loosen the δ asked, :meth:`accounting.pld.ComposedPLD.loose_at`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from accounting.certified import shift_down
from accounting.convolution import convolve_rows, fft_convolve, fft_error
from accounting.pld.grid import Rows, add_rows, truncate_rows

__all__ = [
    "FFT_MAX_BITS",
    "FFT_MIN_POINTS",
    "FLOAT_SLACK",
    "WIDEN",
    "compose_rows",
    "exact_only",
    "exact_products",
    "fixed_masses",
    "float_masses",
    "made_good",
    "settled",
]

#: Sides of at least this many points each may be convolved in floating point (:func:`compose_rows`):
#: an exact product of two sides of ``n`` points of ``b`` bits costs GMP ``O(nb log(nb))`` on
#: megabit integers (20–110 ms at 62,530 points of 96 bits), a long-double FFT of the same 10–20 ms.
FFT_MIN_POINTS = 1024

#: Fixed-point widths up to which products may be taken in floating point: the default
#: precision's (:func:`probability_bits` of 20 digits). A PLD asked at more digits (a δ below
#: about 10^-12, :class:`~accounting.accountant.Accountant`) wants more than float products give.
FFT_MAX_BITS = 96

#: The slack (:attr:`~accounting.pld.grid.Grid.slack`) a composition may take from float products
#: when no δ is known to share out (:func:`~accounting.pld.compose_events`, which gives each
#: distinct event a part; a self-composition spreads its part over its products, weighted by how
#: often each one's result is used: :meth:`~accounting.pld.PrivacyLossDistribution.self_compose`).
#: With :data:`~accounting.pld.SLACK_SHARE` it keeps float products for every δ above about 10^-8.
FLOAT_SLACK = 1e-14

_EXACT: ContextVar[bool] = ContextVar("exact_products", default=False)


def exact_only() -> bool:
    """Whether the current context takes exact products only (:func:`exact_products`)."""
    return _EXACT.get()


@contextmanager
def exact_products() -> Iterator[None]:
    """Within this context every composition is an exact integer product (no float products):
    for an answer whose δ the float products' slack (:attr:`~accounting.pld.grid.Grid.slack`)
    would loosen."""
    token = _EXACT.set(True)
    try:
        yield
    finally:
        _EXACT.reset(token)


#: Relative widening of a long double mass converted from fixed point (:func:`float_masses`): 8
#: units of roundoff (``2^-61`` on x86-64) cover its roundings (one, where long double holds a
#: 64-bit limb; three, where it is float64) and the widening's own.
WIDEN = 4 * float(np.finfo(np.longdouble).eps)


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


def float_masses(rows: NDArray[np.uint8], bits: int, up: bool) -> NDArray[np.longdouble]:
    """Fixed-point masses (``bits`` fractional bits) as long doubles, each rounded up (``up``) or down."""
    n, width = rows.shape
    buf = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    buf[:, :width] = rows
    limbs = buf.view(np.uint64)
    value = np.zeros(n, dtype=np.longdouble)
    for i in range(limbs.shape[1] - 1, -1, -1):
        value = value * np.longdouble(2.0**64) + limbs[:, i].astype(np.longdouble)
    factor = np.longdouble(1) + (np.longdouble(WIDEN) if up else -np.longdouble(WIDEN))
    return np.asarray(np.ldexp(value * factor, -bits), dtype=np.longdouble)


def fixed_masses(values: NDArray[np.floating[Any]], bits: int, up: bool, width: int) -> NDArray[np.uint8]:
    """Float masses ``>= 0`` as fixed-point byte rows of ``width <= 16`` bytes, rounded up or down.

    Exact: ``m = v·2^bits`` (a power-of-two scaling) is below ``2^(8 width)``; its high limb
    ``⌊m/2^64⌋`` and the rest ``m - 2^64⌊m/2^64⌋ < 2^64`` are floats of the same format, and a
    conversion to ``uint64`` truncates (``⌊⌋`` of a nonnegative float); ``⌈⌉`` adds one where the
    rest has a fraction, which makes it below ``2^64 - 1`` in a float of at most 64 significant
    bits, so nothing carries (numpy's ``ceil`` of long doubles is an order of magnitude slower).
    """
    dtype = values.dtype.type
    m = values * dtype(2.0**bits)
    if np.any(m >= dtype(2.0 ** (8 * width))):
        raise AssertionError("a composed mass exceeds its fixed-point width")
    high = (m * dtype(2.0**-64)).astype(np.uint64)
    rest = m - high.astype(dtype) * dtype(2.0**64)
    low = rest.astype(np.uint64)
    if up:
        low += (rest > low.astype(dtype)).astype(np.uint64)
    limbs = np.stack([low, high], axis=1)
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


#: The bulk of a concentrated side (see the module notes): the span of its entries above the
#: least of these shares of its largest one ...
_BULK_FLOORS = tuple(2.0**-e for e in range(32, 8, -4))

#: ... for which that span has at most this many points (its exact product then costs little).
_BULK_SPAN = 8192


def _bulk(values: NDArray[np.longdouble]) -> tuple[int, int] | None:
    """``[lo, hi)``: the shortest span of the entries above a share (:data:`_BULK_FLOORS`) of the
    largest that has at most :data:`_BULK_SPAN` points (``None`` if none has)."""
    top = float(values.max())
    for floor in _BULK_FLOORS:
        big = np.flatnonzero(values >= floor * top)
        lo, hi = int(big[0]), int(big[-1]) + 1
        if hi - lo <= _BULK_SPAN:
            return lo, hi
    return None


def _outside(values: NDArray[np.longdouble], span: tuple[int, int]) -> NDArray[np.longdouble]:
    out = values.copy()
    out[span[0] : span[1]] = 0.0
    return out


def _inside(values: NDArray[np.longdouble], span: tuple[int, int]) -> NDArray[np.longdouble]:
    out = np.zeros_like(values)
    out[span[0] : span[1]] = values[span[0] : span[1]]
    return out


class _Float:
    """A float product: ``values`` (long double, nonnegative) from index ``0`` of the product, the
    bound ``error`` on their ℓ1 error, and the exact product of the bulks (``first``, byte rows
    at twice the fixed-point bits) when split."""

    def __init__(
        self, values: NDArray[np.longdouble], error: float, exact: tuple[int, NDArray[np.uint8]] | None
    ) -> None:
        self.values = values
        self.error = error
        self.exact = exact


def _float_product(a: Rows, b: Rows, bits: int, up: bool, same: bool, allowance: float) -> _Float | None:
    """The float or split product of two sides within ``allowance`` (``None``: take the exact one)."""
    fa = float_masses(a.rows, bits, up)
    fb = fa if same else float_masses(b.rows, bits, up)
    error = fft_error(fa, fb, same)
    if error <= allowance:
        return _Float(fft_convolve(fa, fb, same), error, None)
    span_a = _bulk(fa)
    span_b = span_a if same else _bulk(fb)
    if span_a is None or span_b is None:
        return None
    # a*b = a_bulk*b_bulk (exact) + a_bulk*b_rest + a_rest*b (float)
    bulk_a, rest_b, rest_a = _inside(fa, span_a), _outside(fb, span_b), _outside(fa, span_a)
    bound = fft_error(bulk_a, rest_b) + fft_error(rest_a, fb)
    total = float(np.sum(fa)) * float(np.sum(fb)) * (1 + 2.0**-30)
    bound += 2 * float(np.finfo(np.longdouble).eps) * total  # adding the two float products
    if bound > allowance:
        return None
    left = fft_convolve(bulk_a, rest_b)
    right = fft_convolve(rest_a, fb)
    (la, ha), (lb, hb) = span_a, span_b
    exact = convolve_rows(a.rows[la:ha], b.rows[lb:hb], same=same)
    return _Float(left + right, bound, (la + lb, exact))


def compose_rows(a: Rows, b: Rows, bits: int, up: bool, same: bool = False, allowance: float = 0.0) -> Rows:
    """The product measure of two sides: finite losses convolve, ``+inf`` absorbs the rest.

    The mass at ``+inf`` is ``a_inf·(B_fin + b_inf) + A_fin·b_inf`` (the measure product; it is
    ``1 - (1 - a_inf)(1 - b_inf)`` when both totals are 1). Rounded up for the pessimistic side
    (``up``), down for the optimistic one, then truncated
    (:func:`~accounting.pld.grid.truncate_rows`).

    Sides of :data:`FFT_MIN_POINTS` points or more, of at most :data:`FFT_MAX_BITS` bits, outside
    :func:`exact_products`, take a float or split product when the slack it adds (its error
    bound ``e`` made good, the tails of the float part within ``e`` cut by :func:`_cut_tails`,
    the widening of its inputs) is at most ``allowance`` (see the module notes).
    """
    width = bits // 8 + 1
    a_fin, b_fin = a.total(), b.total()
    infinite = shift_down(a.infinite * (b_fin + b.infinite) + a_fin * b.infinite, bits, up)
    # Float products' errors carried along: each side's slack times the other's total mass.
    mass_a, mass_b = (
        math.ldexp(float(t + x.infinite), -bits) * (1 + WIDEN) for t, x in ((a_fin, a), (b_fin, b))
    )
    slack = (a.slack * mass_b + b.slack * mass_a) * (1 + WIDEN)
    if not len(a.rows) or not len(b.rows):
        return Rows(0, np.zeros((0, width), dtype=np.uint8), infinite, slack)
    fast = min(len(a.rows), len(b.rows)) >= FFT_MIN_POINTS and bits <= FFT_MAX_BITS and not exact_only()
    # what a float product adds to the slack (below) is at most 5e plus the inputs' widening
    budget = (allowance / (1 + WIDEN) - 3 * WIDEN * mass_a * mass_b) / 5
    product = _float_product(a, b, bits, up, same, budget) if fast and budget > 0 else None
    if product is None:
        rows = _shift_rows(convolve_rows(a.rows, b.rows, same), bits // 8, up, width)
        return truncate_rows(Rows(a.start + b.start, rows, infinite, slack), up)
    made = made_good(product.values, product.error, 0.0, 0.0, bits, up)
    slack += (3 * WIDEN * mass_a * mass_b + made.slack) * (1 + WIDEN)  # with the inputs' widening
    first, rows = made.first, made.rows
    if product.exact is not None:
        first, rows = _plus_exact(first, rows, product.exact, bits, up, width)
    return settled(a.start + b.start + first, rows, infinite + made.infinite, slack, up)


class Made(NamedTuple):
    """Float masses made good (:func:`made_good`): byte rows from index ``first``, the units to
    add at ``+inf`` and the mass moved (for the slack)."""

    first: int
    rows: NDArray[np.uint8]
    infinite: int
    slack: float


def made_good(
    values: NDArray[np.longdouble], error: float, above: float, below: float, bits: int, up: bool
) -> Made:
    """Float masses within ℓ1 ``error`` of a measure (whose mass above and below the computed
    window is at most ``above`` and ``below``, and may have wrapped into it) as fixed-point rows
    on the side they stand for.

    Pessimistic (``up``): ``error + above`` is added at ``+inf``, so every upper tail is at least
    the measure's. Optimistic: ``error + above + below`` is taken off the top entries
    (:func:`_take_from_top`), so every upper tail is at most the measure's. The tails of the
    result within ``error`` (rounding noise) are then cut (:func:`_cut_tails`).
    """
    width = bits // 8 + 1
    infinite = 0
    if up:
        infinite += math.ceil(math.ldexp(error + above, bits))
    else:
        values = _take_from_top(values, error + above + below)
    first, values, top, bottom = _cut_tails(values, error, up)
    if up:
        infinite += math.ceil(math.ldexp(top, bits))
    # how far an upper tail may move: the error, the mass beyond the window, and on the optimistic
    # side what is taken off the top (up to twice what is asked, :func:`_take_from_top`); the
    # tails cut, the rounding to fixed point (a unit per entry at most)
    slack = 3 * (error + above + below) + top + bottom + math.ldexp(len(values), -bits)
    return Made(first, fixed_masses(values, bits, up, width), infinite, slack)


def settled(start: int, rows: NDArray[np.uint8], infinite: int, slack: float, up: bool) -> Rows:
    """The side of these rows, its negligible tails truncated (:func:`~accounting.pld.grid.truncate_rows`)."""
    if not len(rows):
        return Rows(0, rows, infinite, slack)
    return truncate_rows(Rows(start, rows, infinite, slack), up)


def _plus_exact(
    first: int, rows: NDArray[np.uint8], exact: tuple[int, NDArray[np.uint8]], bits: int, up: bool, width: int
) -> tuple[int, NDArray[np.uint8]]:
    """Fixed-point rows from index ``first`` plus the exact bulk product (at ``2 bits``, rounded
    as the side is) from its own index: rows over the union of the two ranges."""
    start, product = exact
    bulk = _shift_rows(product, bits // 8, up, width)
    lo = min(first, start) if len(rows) else start
    hi = max(first + len(rows), start + len(bulk))
    out = np.zeros((hi - lo, width), dtype=np.uint8)
    out[first - lo : first - lo + len(rows)] = rows
    region = out[start - lo : start - lo + len(bulk)]
    out[start - lo : start - lo + len(bulk)] = add_rows(np.ascontiguousarray(region), bulk)
    return lo, out
