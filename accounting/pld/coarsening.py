"""Coarsening: a composed side moved onto twice the grid spacing.

The composed loss spreads as ``√k`` while the spacing stays fixed, so a side that grows beyond
:data:`MAX_GRID_POINTS` points is moved onto twice the spacing (:func:`_coarsen`: connect the dots
for the pessimistic side, merged outputs for the optimistic one, both second order) before it is
composed further; grids whose spacings differ by a power of two then compose on the coarser
(:func:`lift`). A ``k``-fold composition costs ``O(log k)`` products of at most that size whatever
``k``: 10^6 Skellam mechanisms of variance 100, ``ε(10^-5)`` in ``[5425.4671, 5425.5492]``, take
about 4.5 s (the grid would otherwise hold about 10^8 points); 10^4 of them
``[91.81591, 91.81688]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from mpmath import iv, mp
from numpy.typing import NDArray

from accounting.certified import Enclosure, lower, precision, upper
from accounting.pld.grid import EXTRA_DPS, Rows, enclosed, fixed_point, truncate_rows

#: A composed side holding more grid points than this is coarsened (its spacing doubled,
#: :func:`_coarsen`) before it is composed further. The composed loss's spread grows as the
#: square root of the number of compositions while the spacing stays fixed, so without it a
#: ``k``-fold composition costs ``O(√k)`` grid points per side (10^6 Skellam mechanisms: about
#: 10^8). With it the grid keeps about this many points per side whatever ``k``, each halving
#: adding a second-order error only (see :func:`_coarsen`).
MAX_GRID_POINTS = 2**16


@dataclass(frozen=True)
class _Halving:
    """Fixed-point factors (``frac`` fractional bits) of one coarsening of spacing ``h`` into ``2h``.

    ``share`` bounds ``1/(1 + e^{-h})`` from above (the pessimistic split). For the optimistic
    merges (:func:`_merge_pairs`): ``near`` and ``near_inverse`` bound ``e^{h}`` from above and
    ``e^{-h}`` from below; ``above`` and ``above_inverse`` bound ``ρ = e^{h}/(1 + e^{-h})`` from
    above and ``1/ρ`` from below; ``below`` and ``below_inverse`` bound ``σ = e^{-h}/(1 + e^{h})``
    from below and ``1/σ`` from above.
    """

    frac: int
    share: int
    near: int
    near_inverse: int
    above: int
    above_inverse: int
    below: int
    below_inverse: int

    @classmethod
    def of(cls, spacing: Enclosure, bits: int, dps: int) -> _Halving:
        frac = bits + 64
        with precision(dps + EXTRA_DPS):
            h = enclosed(spacing)
            e, f = iv.exp(h), iv.exp(-h)
            rho, sigma = e / (1 + f), f / (1 + e)
            return cls(
                frac,
                fixed_point(upper(1 / (1 + f)), frac, "c"),
                fixed_point(upper(e), frac, "c"),
                fixed_point(lower(f), frac, "f"),
                fixed_point(upper(rho), frac, "c"),
                fixed_point(lower(1 / rho), frac, "f"),
                fixed_point(lower(sigma), frac, "f"),
                fixed_point(upper(1 / sigma), frac, "c"),
            )


def _ints(values: Sequence[int] | NDArray[np.object_], length: int) -> NDArray[np.object_]:
    """Python integers as a numpy object array of ``length`` (zero-padded): exact big-int arithmetic."""
    out = np.zeros(length, dtype=object)
    out[: len(values)] = values
    return out


Pieces = tuple[NDArray[np.object_], NDArray[np.object_], NDArray[np.object_]]


def _ceil_times(x: NDArray[np.object_], factor: int, frac: int) -> NDArray[np.object_]:
    return np.asarray(-((-x * factor) >> frac), dtype=object)


def _floor_times(x: NDArray[np.object_], factor: int, frac: int) -> NDArray[np.object_]:
    return np.asarray((x * factor) >> frac, dtype=object)


def _merge_pairs(low: NDArray[np.object_], high: NDArray[np.object_], c: _Halving) -> Pieces:
    """Merge pieces of atoms two fine steps apart (``low`` at ``l``, ``high`` at ``l + 2h``) at ``l + h``.

    Merging outputs is a post-processing of the pair: ``P``-pieces ``x`` and ``y`` make one atom of
    ``P``-mass ``x + y`` whose loss is ``-ln((x e^{-l} + y e^{-l-2h})/(x + y))``, at least ``l + h``
    exactly when ``y >= x e^{h}``. Returns what is left of each and the merged atoms.
    """
    frac = c.frac
    x = np.minimum(low, _floor_times(high, c.near_inverse, frac))
    y = np.minimum(high, _ceil_times(x, c.near, frac))
    x = np.minimum(x, _floor_times(y, c.near_inverse, frac))  # y >= x e^{h} after rounding
    return low - x, high - y, x + y


def _merge_far(odd: NDArray[np.object_], even: NDArray[np.object_], c: _Halving, upward: bool) -> Pieces:
    """Merge pieces of an odd atom at ``l`` and an even one at ``l ± 3h`` at ``l ± h``.

    As :func:`_merge_pairs`: the merged loss is at least ``l + h`` when ``y >= x ρ``,
    ``ρ = e^{h}/(1 + e^{-h})`` (even above), and at least ``l - h`` when ``y <= x σ``,
    ``σ = e^{-h}/(1 + e^{h})`` (even below). Returns what is left of each and the merged atoms.
    """
    frac = c.frac
    if upward:
        x = np.minimum(odd, _floor_times(even, c.above_inverse, frac))
        y = np.minimum(even, _ceil_times(x, c.above, frac))
        x = np.minimum(x, _floor_times(y, c.above_inverse, frac))
    else:
        y = np.minimum(even, _floor_times(odd, c.below, frac))
        x = np.minimum(odd, _ceil_times(y, c.below_inverse, frac))
    return odd - x, even - y, x + y


def _coarsen(side: Rows, up: bool, c: _Halving, bits: int) -> tuple[Rows, float]:
    """The side on the grid of spacing ``2h``, whose points are the even points ``offset + 2J·h``.

    An atom at an even point stays; an atom at an odd point ``2J + 1`` sits exactly halfway
    between the coarse points ``J`` and ``J + 1`` (the loss is affine in the index).

    **Pessimistic** (``up``): connect the dots (Doroshenko et al. 2022, as
    :func:`accounting.pld.discretization._split_rule`): the share ``w = 1/(1 + e^{-h})`` of its
    ``P``-mass (rounded up) goes to ``J + 1`` and the rest to ``J``, preserving ``P``- and
    ``Q``-mass to within the rounding, which moves mass up only.

    **Optimistic**: a post-processing of the pair, merging outputs, then losses moved down only
    (both lower δ for every composition). The odd atoms are paired, ``(4I + 1, 4I + 3)``: pieces
    merged so that the merged loss is at least the even point ``4I + 2`` between them, where
    the merged atom goes with its whole ``P``-mass (:func:`_merge_pairs`); what is left is
    merged likewise across groups, ``(4I + 3, 4I + 5)``, and then with half of the even atom
    three fine steps away (:func:`_merge_far`). What is left after that moves down to the coarse
    point below it, keeping its ``P``-mass. Every factor is rounded so that the pieces never
    exceed the atoms and the merged losses never fall below their points. Merging loses only
    second order (Jensen on ``(1 - e^{ε} u)_+``, ``u = e^{-L}`` averaged under ``P``) and keeps all
    the ``P``-mass; the last move is a first-order error, small on a grid that resolves the
    composed loss (:func:`fit` postpones a coarsening where it is not).

    Either way one halving of a ``k``-fold composition costs about ``k h^2`` in the composed
    loss's variance: that is why coarsening is left until the composed spread makes it
    negligible (:data:`MAX_GRID_POINTS`).

    Returns the coarse side and the share of its mass that moved down whole (the first-order
    part of the optimistic side's error; 0 for the pessimistic side).
    """
    if not len(side.rows):
        return side, 0.0
    lead = side.start & 1
    first = side.start - lead  # even
    n = lead + len(side.rows)
    pairs = (n + 3) // 4  # groups of four fine points: two even, two odd
    fine = _ints([], 4 * pairs)
    fine[lead:n] = side.ints()
    even, odd = fine[0::2], fine[1::2]
    out = _ints([], 2 * pairs + 1)
    frac = c.frac
    moved = 0.0
    if up:
        out[:-1] += even
        top = np.minimum(-((-odd * c.share) >> frac), odd)
        out[:-1] += odd - top
        out[1:] += top
    else:
        # Pairs (4I + 1, 4I + 3) meet at 4I + 2; what is left, (4I + 3, 4I + 5) at 4I + 4.
        a, b = odd[0::2], odd[1::2]
        a, b, near = _merge_pairs(a, b, c)
        b_next = _ints(list(a[1:]), len(a))
        b, b_next, across = _merge_pairs(b, b_next, c)
        a[1:] = b_next[:-1]
        # Then with half of the even atom 1.5 coarse steps away (4I + 4 above 4I + 1, 4I below
        # 4I + 3), each merged atom again at 4I + 2.
        partners = even[0::2]
        below = partners >> 1
        above = _ints(list(partners[1:] - below[1:]), len(partners))
        a, above, far_a = _merge_far(a, above, c, upward=True)
        b, below, far_b = _merge_far(b, below, c, upward=False)
        even[0::2] = below + _ints([0, *above[:-1]], len(partners))
        out[:-1] = even
        out[1::2] += near + far_a + far_b
        out[2::2] += across
        # What is left moves down to the coarse point below it, keeping its P-mass.
        out[0:-1:2] += a
        out[1::2] += b
        moved = float(a.sum() + b.sum()) / max(1.0, float(fine.sum()))
    kept = np.flatnonzero(out != 0)
    if not len(kept):
        return Rows.of_ints(0, out[:0], side.infinite, bits, side.slack), moved
    lo, hi = int(kept[0]), int(kept[-1]) + 1
    rows = Rows.of_ints(first // 2 + lo, out[lo:hi], side.infinite, bits, side.slack)
    return truncate_rows(rows, up), moved


class Sides(NamedTuple):
    """The two sides of a PLD being composed, as byte rows."""

    pessimistic: Rows
    optimistic: Rows


def paired(a: Sides, b: Sides) -> list[tuple[Rows, Rows, bool]]:
    """``(a side, b side, up)`` for the pessimistic (``up``) and the optimistic side."""
    return [(a.pessimistic, b.pessimistic, True), (a.optimistic, b.optimistic, False)]


def doubled(spacing: Enclosure, times: int) -> Enclosure:
    """``spacing · 2^times``, exactly."""
    return Enclosure(mp.ldexp(spacing.lo, times), mp.ldexp(spacing.hi, times)) if times else spacing


def levels_apart(a: Enclosure, b: Enclosure) -> tuple[int, int]:
    """How many halvings bring grids of spacings ``a`` and ``b`` to a common one (``(-1, -1)``: none)."""
    for m in range(64):
        if doubled(a, m) == b:
            return m, 0
        if doubled(b, m) == a:
            return 0, m
    return -1, -1


def _halve(sides: Sides, spacing: Enclosure, bits: int, dps: int, rough: float = 1.0) -> tuple[Sides, float]:
    """``sides`` (on a grid of ``spacing``) coarsened once (:func:`_coarsen`), and the share of the
    optimistic side's mass that moved down whole; ``sides`` unchanged when that share is above
    ``rough``."""
    c = _Halving.of(spacing, bits, dps)
    optimistic, moved = _coarsen(sides.optimistic, False, c, bits)
    if moved > rough:
        return sides, moved
    pessimistic, _ = _coarsen(sides.pessimistic, True, c, bits)
    return Sides(pessimistic, optimistic), moved


def lift(sides: Sides, spacing: Enclosure, times: int, bits: int, dps: int) -> Sides:
    """``sides`` coarsened ``times`` times, whatever it costs (to meet a coarser grid)."""
    for level in range(times):
        sides, _ = _halve(sides, doubled(spacing, level), bits, dps)
    return sides


#: A coarsening that moves more than this share of the optimistic side's mass down whole is
#: postponed (until the side holds :data:`MAX_GRID_POINTS` times :data:`_POSTPONE` points): early
#: in a composition of sparse atoms (a lattice loss with steps much wider than the spacing, like
#: Skellam noise's) the composed law is a comb of narrow teeth that pairs badly, and every
#: composition after that multiplies the first-order error; a few more compositions smooth it.
_ROUGH = 1e-3
_POSTPONE = 4


def fit(sides: Sides, spacing: Enclosure, bits: int, dps: int) -> tuple[Sides, int]:
    """``sides`` coarsened until each holds at most :data:`MAX_GRID_POINTS`; how many times it took."""
    times = 0
    while (size := max(len(sides.pessimistic.rows), len(sides.optimistic.rows))) > MAX_GRID_POINTS:
        rough = _ROUGH if size <= _POSTPONE * MAX_GRID_POINTS else 1.0
        sides, moved = _halve(sides, doubled(spacing, times), bits, dps, rough)
        if moved > rough:
            break
        times += 1
    return sides, times
