"""From the loss atoms of a pair to the two grids of its privacy-loss distribution.

* The **pessimistic** grid: probabilities' upper ends rounded up, an atom at ``+inf`` that also
  absorbs the ``P``-mass outside the computed window (from the certified tail bounds), and each
  loss that is not on the grid *split* between its two neighbouring grid points so that both
  the ``P``-mass and the ``Q``-mass (``Σ p e^{-l}``) are preserved — "connect the dots"
  (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022). The split pair has the true pair as a
  post-processing (merging the two atoms back), so it dominates it; the error is second order
  in ``h`` (``(1 - e^{ε-l})_+`` is linear in ``e^{-l}`` away from ``l = ε``). Mass is otherwise
  moved to higher losses only (to the upper end of a loss enclosure, truncated top tails to
  ``+inf``, truncated bottom tails to the lowest kept point).
* The **optimistic** grid, a *mean-preserving contraction* of each pair's ``Q``-law of the loss.
  With ``S = Σ L_i`` (``L_i`` under ``Q_i``) and ``f(s) = (e^s - e^ε)_+`` convex and
  nondecreasing, ``δ(ε) = E f(S) + P(S = +inf)``. Group each mechanism's ``Q``-mass into blocks
  (atoms may be split into pieces) and put each block at its ``Q``-weighted mean loss: the
  contracted sum is ``S' = E[S | blocks]`` (blocks of different mechanisms are independent), so
  by conditional Jensen ``E f(S') <= E f(S)`` — for every ``ε`` at once, which is what a
  composition needs. Lowering a block's loss or mass only lowers ``E f`` (``f >= 0``,
  nondecreasing), so certified lower bounds of the means and masses keep it valid. The blocks
  are built greedily (:func:`_contract`) so that every block mean *is* a grid point (the atom
  that crosses it is split exactly, in integer fixed point). Each block is then taken as one
  merged output, a post-processing whose loss ``ln(ΣP/ΣQ)`` is at least its ``Q``-mean (Jensen),
  put at the grid point with all its ``P``-mass (:func:`_merged_blocks`); so the composition
  and query code is the same for both sides. The error is second order: a ``k``-fold
  composition loses variance ``O(k h^2)``, not ``O(k h)`` in mean as rounding every loss down
  did, and no ``P``-mass (placing ``Q``-mass at the mean lost a share of about the block's
  variance per mechanism, a deficit that ``k`` compositions multiply: ``ε`` of 10^6 Skellam
  mechanisms of variance 100 was 7e-4 low for it).

Continuous cells: pessimistic, the two-point extreme split of each cell (loss range ends, ``P``-
and ``Q``-mass preserved), then connect the dots; optimistic, each cell merged into one atom (a
post-processing) at a lower bound of its ``Q``-mean loss, then contracted. Tails beyond the window
go to ``+inf`` (pessimistic) or are dropped (:func:`_table_grids`).

**Where the contraction costs more.** At the ends of a loss range where mass piles up (the atoms
``±Δ/b`` of the Laplace mechanism, the two atoms of randomized response, a subsampled loss
approaching ``ln(1 - q)``), the greedy sweeps run *toward* the pile from inside (upward below a
split point, downward above it, the split chosen to minimise the first-order leftover), and a
rounded grid is offset so that the lowest heavy atom sits on a grid point (and the default
spacing divides the span to the top one). Sparse atoms (a lattice loss with steps ``D >> h``,
e.g. the discrete Gaussian on a rounded grid) are merged with pieces of their neighbours: the
error is then ``O(h D)`` per composition, still far below ``h``. For 100 Skellam(variance 100)
mechanisms on the ledger's default grid ``ε(10^-5)`` is enclosed in ``[4.375993, 4.376088]``
(rounding losses down gave ``[4.36953, 4.37609]``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from mpmath import iv, mp
from numpy.typing import NDArray

from accounting.balls import arb, ball_precision, exact_ball, exact_parts, units, upper_of
from accounting.certified import Enclosure, Interval, Mpf, float_up, lower, precision, upper
from accounting.pld.atoms import CELL_DPS, Atoms, CellTable, pair_atoms
from accounting.pld.grid import (
    Grid,
    Rows,
    binary_parts,
    fixed_point,
    probability_bits,
    truncate_rows,
)
from accounting.pld.pairs import Pair
from accounting.pld.spacing import continuous_spacing, range_spacing
from accounting.subsampling import MixturePair

__all__ = ["Discretized", "discretize"]


#: Fractional bits of a loss measured in grid steps, for the optimistic contraction.
_LOSS_BITS = 64


def _ratio(x: Mpf | tuple[int, int], h: Fraction, shift: int) -> tuple[int, int]:
    """``x · 2^shift / h`` as an exact fraction ``(numerator, denominator)`` (``x`` an mpf or an
    exact ``(mantissa, exponent)``)."""
    if isinstance(x, tuple):
        signed, exp = x
    else:
        sign, man, exp, _ = binary_parts(x)
        signed = -int(man) if sign else int(man)
    num = signed * h.denominator
    den = h.numerator
    e = int(exp) + shift
    if e >= 0:
        num <<= e
    else:
        den <<= -e
    return num, den


def _floor_steps(x: Mpf | tuple[int, int], h: Fraction, shift: int = 0) -> int:
    """``⌊x · 2^shift / h⌋`` exactly."""
    num, den = _ratio(x, h, shift)
    return num // den


@dataclass(frozen=True)
class _SplitRule:
    """How a ``P``-mass at a loss in an interval goes onto the grid: the share ``w`` at ``j_hi``,
    an upper end of it in ``[0, 1]``, exactly ``numerator/denominator``."""

    j_lo: int
    j_hi: int
    numerator: int
    denominator: int

    def apply(self, p_up: int, pess: dict[int, int]) -> None:
        if p_up == 0:
            return
        if self.j_lo == self.j_hi:
            pess[self.j_lo] = pess.get(self.j_lo, 0) + p_up
            return
        top = min(p_up, -((-p_up * self.numerator) // self.denominator))
        pess[self.j_hi] = pess.get(self.j_hi, 0) + top
        pess[self.j_lo] = pess.get(self.j_lo, 0) + p_up - top


#: Where ``top`` lies within this share of a grid step from a grid point (a cell boundary, placed
#: at a crossing of the grid), :func:`_split_rule` bounds ``w`` without Arb.
_NEAR = 2**30


def _split_rule(top: Mpf | tuple[int, int], h: float) -> _SplitRule:
    """Connect the dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022) for a loss at most ``top``.

    The mass is first moved to ``top``, the upper end of the loss's enclosure (a higher loss at the
    same ``P``-mass only raises δ, for every composition), then split between
    ``j_lo = ⌊top/h⌋`` and ``j_hi = ⌈top/h⌉`` preserving ``Σ p`` and ``Σ p e^{-l}``: the share at
    ``j_hi`` is ``w = (1 - e^{-d})/(1 - e^{-h})``, ``d = top - j_lo h``, the upper end of its Arb
    ball (``top`` an mpf or an exact ``(mantissa, exponent)``). Near a grid point, where cell
    boundaries are (floats whose loss is within about 1e-12 of a step from a grid point),
    exactly: ``w <= (d/h)(1 + h)`` for ``d`` within ``h/2^30`` above one (as ``1 - e^{-d} <= d``
    and ``h/(1 - e^{-h}) <= 1 + h/2 + h²/12 <= 1 + h`` for ``h <= 1``), and ``w <= 1`` within
    ``h/2^30`` below one (``d <= h``; at most 2^-30 of the mass goes a step higher than needed).
    """
    hf = _fraction(h)
    num, den = _ratio(top, hf, 0)
    j_lo = num // den
    rest = num - j_lo * den  # d/h = rest/den
    if rest == 0:
        return _SplitRule(j_lo, j_lo, 1, 1)
    j_hi = j_lo + 1
    if h <= 1 and rest * _NEAR <= den:
        return _SplitRule(j_lo, j_hi, rest * (hf.denominator + hf.numerator), den * hf.denominator)
    if h <= 1 and (den - rest) * _NEAR <= den:
        return _SplitRule(j_lo, j_hi, 1, 1)
    with ball_precision(iv.prec):
        d = (exact_ball(top) - arb(j_lo) * arb(h)).nonnegative_part()
        w = (-d).expm1() / _split_denominator(h, iv.prec)  # (e^{-d} - 1)/(e^{-h} - 1)
        if w.upper() >= 1:
            return _SplitRule(j_lo, j_hi, 1, 1)
        man, exp = exact_parts(w.upper())
        if man <= 0:
            return _SplitRule(j_lo, j_hi, 0, 1)
        return _SplitRule(j_lo, j_hi, man << max(0, exp), 1 << max(0, -exp))


@lru_cache(maxsize=64)
def _fraction(h: float) -> Fraction:
    return Fraction(h)


@lru_cache(maxsize=64)
def _split_denominator(h: float, prec: int) -> arb:
    """``e^{-h} - 1`` as a ball at ``prec`` bits."""
    with ball_precision(prec):
        return (-arb(h)).expm1()


def _split(loss: Interval, h: float, p_up: int, pess: dict[int, int]) -> None:
    """Put ``P``-mass ``p_up`` (fixed point) at a loss in ``loss`` onto the grid (:func:`_split_rule`)."""
    if p_up:
        _split_rule(upper(loss), h).apply(p_up, pess)


def _table_grids(
    table: CellTable, h: float, bits: int, pess: dict[int, int], q_atoms: list[Atom], q_bits: int
) -> tuple[Mpf, Mpf]:
    """Put the cells of a continuous pair on both sides of the grid; returns the ``P``-mass at ``+∞``
    and the ``P``-mass of the tails beyond the window (upper bounds).

    **Pessimistic.** A law of the loss on ``[l_a, l_b]`` with ``P``-mass ``P`` and ``Q``-mass
    ``Q = E_P[e^{-L}]`` is a post-processing of the two-point law at ``l_a`` and ``l_b`` with
    the same two masses (under ``P``, ``e^{-L}`` is a mean-preserving contraction of it):
    ``p_b = (P e^{-l_a} - Q)/(e^{-l_a} - e^{-l_b})`` and ``p_a = (Q - P e^{-l_b})/(e^{-l_a} - e^{-l_b})``
    (upper ends of their enclosures), each end then split onto the grid (:func:`_split_rule`).
    A cell too narrow for that division is a point at its loss range. Beyond the window: the
    ``P``-mass of a top tail with ``L -> +∞`` goes to ``+∞``, that of a bottom tail with
    ``L -> -∞`` to the loss at the window's end (higher than its own).

    **Optimistic.** Each cell merged into one output (a post-processing): an atom of ``Q``-mass
    ``Q`` (``q_bits`` fractional bits) at a lower bound of its loss ``ln(P/Q)`` (and ``>= l_a``),
    with ``P/Q`` bounded from below, for :func:`_merged_blocks`. The tails beyond the window are
    dropped.

    The masses, losses and ``e^{-l}`` come as Arb balls. Cells whose ends' ``e^{-l}`` differ by at
    least :data:`_FLOAT_GAP` of themselves (every bulk cell of the default grids) are put on the
    grid as floats, with outward rounding, all at once (:class:`_FloatCells`: 0.6 s -> 0.1 s for
    the 15k cells of a Poisson-subsampled Gaussian at q = 0.001); the others, and the ends whose
    split needs ``e^{-d}``, in Arb balls read as fixed point exactly from their ends
    (:func:`accounting.balls.units`), one at a time.
    """
    hf = Fraction(h)
    n = len(table.losses)
    assert n + 1 == len(table.masses)
    with ball_precision(iv.prec):
        ends: list[arb | None] = [table.bottom, *table.losses, table.top]
        rules: dict[int, _SplitRule] = {}
        exps = [None if e is None else ((-e.lower()).exp(), (-e.upper()).exp()) for e in ends]

        def rule(k: int) -> _SplitRule:
            if k not in rules:
                loss = ends[k]
                assert loss is not None
                rules[k] = _split_rule(exact_parts(loss.upper()), h)
            return rules[k]

        cells = _FloatCells(table, ends, exps, h)
        infinite, cut = arb(0), arb(0)
        narrow = arb(2) ** (-(iv.prec // 2))
        for i in cells.rest:
            p, q = table.masses[i]
            cap = units(p, bits, up=True)
            if cap == 0 and q.upper() == 0:
                continue
            left, right = ends[i], ends[i + 1]  # the cell's loss lies between them
            if left is None:  # bottom tail beyond the window, L -> -∞
                rule(i + 1).apply(cap, pess)
                cut += p.upper()
                continue
            if right is None:  # top tail beyond the window, L -> +∞
                infinite += p.upper()
                cut += p.upper()
                continue
            low = left.lower()
            if not right.upper() - low > narrow * max(arb(1), abs(low)):
                rule(i + 1).apply(cap, pess)  # a point at the cell's highest loss
            else:
                low_end, high_end = _two_point(p, q, exps[i][0], exps[i + 1][1])  # type: ignore[index]
                rule(i).apply(min(cap, max(0, units(low_end, bits, up=True))), pess)
                rule(i + 1).apply(min(cap, max(0, units(high_end, bits, up=True))), pess)
            m = units(q, q_bits, up=False)
            if m > 0 and p.lower() > 0:
                ratio = p / q
                merged = ratio.log().lower()
                merged = merged if merged > low else low
                q_atoms.append(
                    (
                        _floor_steps(exact_parts(merged), hf, _LOSS_BITS),
                        m,
                        units(ratio, _RATIO_BITS, up=False),
                    )
                )
        cells.put(bits, pess, rule, ends)
        cells.atoms(q_bits, hf, q_atoms, table)
        return upper_of(infinite), upper_of(cut)


def _two_point(p: arb, q: arb, ea: arb, eb: arb) -> tuple[arb, arb]:
    """The two-point law of a cell with ``P``-mass ``p`` and ``Q``-mass ``q`` whose loss lies in
    ``[l_a, l_b]`` (``ea = e^{-l_a}``, ``eb = e^{-l_b}``): its ``P``-masses at ``l_a`` and ``l_b``,
    ``(q - p e^{-l_b})/(e^{-l_a} - e^{-l_b})`` and ``(p e^{-l_a} - q)/(e^{-l_a} - e^{-l_b})``
    (:func:`_table_grids`)."""
    gap = ea - eb
    return (q - p * eb) / gap, (p * ea - q) / gap


#: :func:`_table_grids` takes a cell the float way (:class:`_FloatCells`) when ``e^{-l_a} - e^{-l_b}``
#: is at least this share of ``e^{-l_a}`` (a loss range of about 1e-6 or more): the optimistic
#: ``z = P e^{-l_a}/Q - 1``, about that share, is then computed from floats to ``2^-31`` of itself.
_FLOAT_GAP = 2.0**-20

#: Float shortcuts of a split rule (:func:`_split_rule`): ``d/h`` within this of a grid point.
_FLOAT_NEAR = 1.0 / _NEAR

#: An optimistic cell's loss ``ln(P/Q)`` is bounded by ``l_a + 2z/(2 + z)`` (``z = P e^{-l_a}/Q - 1``,
#: short by ``z^3/12``) up to this ``z``; wider cells take Arb's logarithm.
_FLOAT_LOG_Z = 2.0**-8

_U = 2.0**-53

FloatArray = NDArray[np.float64]


def _dn(x: FloatArray) -> FloatArray:
    return np.nextafter(x, -np.inf)


def _up(x: FloatArray) -> FloatArray:
    return np.nextafter(x, np.inf)


def _float_bounds(balls: Sequence[arb]) -> tuple[FloatArray, FloatArray]:
    """Float bounds of balls: their ends read as floats (within an ulp), one ulp outward."""
    lo = np.array([float(b.lower()) for b in balls], dtype=np.float64)
    hi = np.array([float(b.upper()) for b in balls], dtype=np.float64)
    return _dn(lo), _up(hi)


class _FloatCells:
    """The inner cells of a table put on the grid as floats, with outward rounding (one ulp per
    operation: IEEE 754 rounds each to nearest, so the next float outward bounds the exact result).

    The two-point masses ``p_a``, ``p_b`` are divided out in Arb (their numerators cancel to about
    ``h`` of ``P``) and read as floats; the split onto the grid (:func:`_split_rule`'s shortcuts
    near a grid point, its Arb rule elsewhere), the sums per grid point (:meth:`put`) and the
    optimistic atoms (:meth:`atoms`) are numpy over all cells at once. ``rest`` lists the cells
    left to the one-at-a-time Arb path: the tails beyond the window, the cells without ``P``- or
    ``Q``-mass, and those narrower than :data:`_FLOAT_GAP`.
    """

    def __init__(
        self, table: CellTable, ends: list[arb | None], exps: list[tuple[arb, arb] | None], h: float
    ) -> None:
        count = len(table.masses)
        inner = [i for i in range(count) if exps[i] is not None and exps[i + 1] is not None]
        self.idx = np.zeros(0, dtype=np.int64)
        self.rest = list(range(count))
        if not inner:
            return
        p_lo, p_hi = _float_bounds([table.masses[i][0] for i in inner])
        q_lo, q_hi = _float_bounds([table.masses[i][1] for i in inner])
        ea_lo, ea_hi = _float_bounds([exps[i][0] for i in inner])  # type: ignore[index]
        eb_hi = _float_bounds([exps[i + 1][1] for i in inner])[1]  # type: ignore[index]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            gap = _dn(ea_lo - eb_hi)
            ok = np.isfinite(ea_hi) & (p_lo > 0) & (q_lo > 0) & (gap > 0) & (gap >= _FLOAT_GAP * ea_hi)
            cells = np.array(inner, dtype=np.int64)
            self.idx = cells[ok]
            taken = set(self.idx.tolist())
            self.rest = [i for i in range(count) if i not in taken]
            p_lo, p_hi, q_lo, q_hi = p_lo[ok], p_hi[ok], q_lo[ok], q_hi[ok]
            ea_lo = ea_lo[ok]
        # p_a = (Q - P e^{-l_b})/gap and p_b = (P e^{-l_a} - Q)/gap cancel to about h of P in the
        # bulk: in floats their excess over P would be ~1e-10 of it per cell, which a composition
        # of 10^5 multiplies. In Arb balls, then read as floats (upper ends), it is ~1e-16.
        split = [_two_point(*table.masses[i], exps[i][0], exps[i + 1][1]) for i in self.idx.tolist()]  # type: ignore[index]
        a = _float_bounds([low_end for low_end, _ in split])[1]
        b = _float_bounds([high_end for _, high_end in split])[1]
        self.p_a = np.minimum(p_hi, np.maximum(a, 0.0))
        self.p_b = np.minimum(p_hi, np.maximum(b, 0.0))
        self.p_lo, self.q_lo, self.q_hi, self.ea_lo = p_lo, q_lo, q_hi, ea_lo
        self.la_lo = _float_bounds([ends[i] for i in self.idx.tolist()])[0]  # type: ignore[misc]
        self.h = h

    def put(
        self, bits: int, pess: dict[int, int], rule: Callable[[int], _SplitRule], ends: list[arb | None]
    ) -> None:
        """Add the pessimistic masses of the cells: ``p_a`` at the split of the lower end, ``p_b``
        at that of the upper end, summed per grid point in floats (bounded by the count of terms)
        and read as fixed point rounded up."""
        if not len(self.idx):
            return
        h = self.h
        at = np.concatenate([self.idx, self.idx + 1])
        mass = np.concatenate([self.p_a, self.p_b])
        keys = np.unique(at)
        tops = _float_bounds([e for k in keys.tolist() if (e := ends[k]) is not None])[1]
        t = tops / h  # exact when h is a power of two
        j_lo = np.floor(t)
        frac = t - j_lo  # exact: a float's fractional part is a float
        w = np.where(frac == 0, 0.0, np.where(frac <= _FLOAT_NEAR, _up(frac * (1 + h)), 1.0))
        if math.frexp(h)[0] != 0.5:
            general = np.ones(len(keys), dtype=bool)  # t rounded: every end by its exact rule
        elif h <= 1:
            general = (frac > _FLOAT_NEAR) & (frac < 1 - _FLOAT_NEAR)
        else:
            general = frac > 0  # the shortcuts hold for h <= 1
        lo_at = j_lo.astype(np.int64)
        for i in np.flatnonzero(general).tolist():
            r = rule(int(keys[i]))
            lo_at[i] = r.j_lo
            exact = r.j_lo == r.j_hi or r.numerator == 0
            w[i] = (
                0.0
                if exact
                else min(1.0, math.nextafter(float(Fraction(r.numerator, r.denominator)), math.inf))
            )
        pos = np.searchsorted(keys, at)
        share = w[pos]
        top = np.where(share > 0, np.minimum(mass, _up(mass * share)), 0.0)
        rest = mass - top
        below = np.where(rest > 0, _up(rest), 0.0)
        index = np.concatenate([lo_at[pos] + 1, lo_at[pos]])
        weight = np.concatenate([top, below])
        used = weight > 0
        index, weight = index[used], weight[used]
        if not len(index):
            return
        base = int(index.min())
        added = np.asarray(np.bincount(index - base, weights=weight), dtype=np.float64)
        terms = np.bincount(index - base)
        # a sum of c nonnegative terms in floats is within (1 + u)^(c-1) of the exact one
        bound = np.where(added > 0, _up(added * (1 + 2 * _U * (terms + 1))), 0.0)
        for j in np.flatnonzero(bound > 0).tolist():
            key = base + j
            pess[key] = pess.get(key, 0) + fixed_point(float(bound[j]), bits, "c")

    def atoms(self, q_bits: int, hf: Fraction, q_atoms: list[Atom], table: CellTable) -> None:
        """Add the optimistic atoms of the cells: ``Q``-mass (rounded down) at a lower bound of
        ``ln(P/Q)`` no lower than the cell's lower end ``l_a``: ``l_a + 2z/(2 + z)`` with
        ``z = P e^{-l_a}/Q - 1`` (``ln(1 + z) >= 2z/(2 + z)`` for ``z >= 0``; its deficit
        ``z^3/12`` is negligible up to :data:`_FLOAT_LOG_Z`), Arb's logarithm for wider cells;
        ``P/Q`` rounded down to :data:`_RATIO_BITS` bits."""
        if not len(self.idx):
            return
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            ratio = _dn(self.p_lo / self.q_hi)
            z = _dn(_dn(_dn(self.p_lo * self.ea_lo) / self.q_hi) - 1.0)
            z = np.maximum(z, 0.0)
            lifted = _dn(_dn(2.0 * z) / _up(2.0 + z))
            merged = _dn(self.la_lo + lifted)
        for c, cell in enumerate(self.idx.tolist()):
            m = fixed_point(float(self.q_lo[c]), q_bits, "f")
            if m <= 0:
                continue
            if z[c] <= _FLOAT_LOG_Z:
                loss = float(merged[c])
            else:
                p, q = table.masses[cell]
                exact = (p / q).log().lower()
                loss = max(float(self.la_lo[c]), math.nextafter(float(exact), -math.inf))
            man, exp = math.frexp(loss)
            steps = _floor_steps((int(man * 2**53), exp - 53), hf, _LOSS_BITS)
            q_atoms.append((steps, m, fixed_point(float(ratio[c]), _RATIO_BITS, "f")))


#: Fractional bits of the ratios ``P/Q`` (``e^{loss}``) carried with the optimistic atoms.
_RATIO_BITS = 192


class _Sweep:
    """One greedy sweep of :func:`_contract`: blocks of ``Q``-atoms whose mean reaches a grid point.

    ``upward``: atoms by increasing loss; a block targets the grid point ``g`` at or above its
    first atom and takes atoms until its mean reaches ``g``, splitting the atom that crosses so
    that the mean is ``>= g`` by less than one unit (the piece is rounded up). Downward: the
    mirror image, the grid point at or below the first atom, the piece rounded down so the mean
    stays ``>= g``. Either way every closed block sits at or below its mean, and the pieces of a
    split atom add up to it; the rest of a split atom starts the next block. The block still
    open at the end (the *leftover*) goes to the grid point below its mean: its first-order
    error is what the choice of sweeps in :func:`_contract` keeps small.

    Alongside each block's ``Q``-mass it adds up the ``P``-masses of its pieces (``Q``-piece times
    a lower bound ``r`` of the atom's ``P/Q``, :data:`_RATIO_BITS` fractional bits, rounded down;
    ``shift`` also drops the extra fractional bits that the ``Q``-masses carry, see :func:`_from_atoms`).
    """

    def __init__(self, unit: int, upward: bool, shift: int = _RATIO_BITS) -> None:
        self.unit = unit
        self.upward = upward
        self.shift = shift
        #: the closed blocks, in order: (grid point, Q-mass, P-mass)
        self.closed: list[tuple[int, int, int]] = []
        self.mass = 0
        self.moment = 0
        self.p = 0
        self.target = 0

    def _close(self, g: int, q: int, p: int) -> None:
        self.closed.append((g, q, p))

    def state(self) -> tuple[int, int, int, int]:
        """The blocks closed so far (a count) and the open block's ``Q``-mass, moment, ``P``-mass."""
        return len(self.closed), self.mass, self.moment, self.p

    def _start(self, t: int, m: int, r: int) -> None:
        unit = self.unit
        self.target = -((-t) // unit) if self.upward else t // unit
        if t == self.target * unit:
            self._close(self.target, m, (m * r) >> self.shift)
            self.mass = self.moment = self.p = 0
        else:
            self.mass, self.moment, self.p = m, m * t, (m * r) >> self.shift

    def add(self, t: int, m: int, r: int = 0) -> None:
        if m <= 0:
            return
        if self.mass == 0:
            self._start(t, m, r)
            return
        goal = self.target * self.unit
        if (t <= goal) if self.upward else (t >= goal):
            self._absorb(t, m, r)
            return
        if self.upward:
            need, per = goal * self.mass - self.moment, t - goal  # the piece needed is need/per
        else:
            need, per = self.moment - goal * self.mass, goal - t
        if m * per <= need:  # the whole atom keeps the mean on the right side of g
            self._absorb(t, m, r)
            return
        piece = -((-need) // per) if self.upward else need // per
        self._close(self.target, self.mass + piece, self.p + ((piece * r) >> self.shift))
        self.mass = self.moment = self.p = 0
        if m > piece:
            self._start(t, m - piece, r)

    def _absorb(self, t: int, m: int, r: int) -> None:
        self.mass += m
        self.moment += m * t
        self.p += (m * r) >> self.shift

    def leftover_cost(self) -> float:
        """``mass × (mean - ⌊mean⌋)`` of the open block, in grid steps (the first-order loss)."""
        if not self.mass:
            return 0.0
        floor = self.moment // (self.mass * self.unit)
        # In units of the P-masses' scale: the Q-masses carry extra bits (see _from_atoms).
        return (self.moment - floor * self.mass * self.unit) / (self.unit << (self.shift - _RATIO_BITS))

    def blocks(self, state: tuple[int, int, int, int]) -> list[tuple[int, int, int]]:
        """The blocks of the sweep as it stood at ``state``, its open block closed at the grid point
        at or below its mean."""
        count, mass, moment, p = state
        if not mass:
            return self.closed[:count]
        return [*self.closed[:count], (moment // (mass * self.unit), mass, p)]


Atom = tuple[int, int] | tuple[int, int, int]


def _contract(atoms: Sequence[Atom], frac: int) -> dict[int, int]:
    """A mean-preserving contraction of ``Q``-atoms onto the grid, in exact integers.

    ``atoms`` are ``(t, m)`` or ``(t, m, r)``: a loss of ``t·2^-frac`` grid steps (a lower bound),
    a ``Q``-mass ``m`` (fixed point) and a lower bound ``r`` of ``P/Q`` (:class:`_Sweep`). The
    atoms below a split point are swept upward and those above it downward (:class:`_Sweep`), so
    that the two leftover blocks meet where the mass is thin; the split point minimises the
    leftovers' first-order cost (a sweep in one direction only is the split at an end). A law
    piled up against an end of its range (a subsampled loss near ``ln(1 - q)``, the atoms of the
    discrete Laplace) is then contracted toward that end from the inside, with second-order
    error only.

    The result is valid for every composition (the module docstring): each block's mass sits at
    a grid point at or below its ``Q``-mean. Returns the ``Q``-masses; :func:`_merged_blocks` the
    ``P``-masses of the same blocks.
    """
    return _blocks(atoms, frac)[0]


def _merged_blocks(atoms: Sequence[Atom], frac: int, extra: int = 0) -> dict[int, int]:
    """The blocks of :func:`_contract` as merged outputs: each with the ``P``-mass of its pieces.

    A block of ``Q``-pieces ``c_i`` at losses ``l_i`` with ``Q``-mean ``>= g`` is, merged into one
    output (a post-processing), an atom of ``P``-mass ``Σ c_i e^{l_i}`` whose loss
    ``ln(Σ c_i e^{l_i} / Σ c_i) >= Σ c_i l_i / Σ c_i >= g`` (Jensen): put at ``g`` with all of that
    ``P``-mass it lowers δ for every composition. The contraction's ``P``-mass ``e^{g} Σ c_i`` is
    smaller by about the block's variance, a deficit that a ``k``-fold composition multiplies by
    ``k``; the merge has none. The ``Q``-masses carry ``extra`` more fractional bits than the
    ``P``-masses returned.
    """
    return _blocks(atoms, frac, extra)[1]


def _blocks(atoms: Sequence[Atom], frac: int, extra: int = 0) -> tuple[dict[int, int], dict[int, int]]:
    """The ``Q``- and ``P``-masses of :func:`_contract`'s blocks: one sweep each way over all the atoms,
    each recording its state after every atom, then the split point that minimises the two
    leftovers' cost, and the blocks of each sweep as it stood there."""
    ordered = sorted((a[0], a[1], a[2] if len(a) > 2 else 0) for a in atoms if a[1] > 0)
    n = len(ordered)
    unit = 1 << frac
    shift = _RATIO_BITS + extra
    up = _Sweep(unit, upward=True, shift=shift)
    up_states = [up.state()]
    up_cost = [0.0]
    for t, m, r in ordered:
        up.add(t, m, r)
        up_states.append(up.state())
        up_cost.append(up.leftover_cost())
    down = _Sweep(unit, upward=False, shift=shift)
    down_states = [down.state()]
    down_cost = [0.0]
    for t, m, r in reversed(ordered):
        down.add(t, m, r)
        down_states.append(down.state())
        down_cost.append(down.leftover_cost())
    # the split s: atoms [0, s) swept upward, [s, n) downward (the down sweep's state n - s)
    split = min(range(n + 1), key=lambda s: up_cost[s] + down_cost[n - s])
    q_out: dict[int, int] = {}
    p_out: dict[int, int] = {}
    for g, q, p in [*up.blocks(up_states[split]), *down.blocks(down_states[n - split])]:
        q_out[g] = q_out.get(g, 0) + q
        p_out[g] = p_out.get(g, 0) + p
    return q_out, p_out


class Discretized(NamedTuple):
    """The two grids of one pair, as a :class:`~accounting.pld.PrivacyLossDistribution` holds them
    (see there for the fields)."""

    spacing: Enclosure
    offset: Enclosure
    exact_grid: bool
    bits: int
    dps: int
    pessimistic: Grid
    optimistic: Grid


def _from_atoms(atoms: Atoms, spacing: float | None, dps: int) -> Discretized:
    """The two grids of a pair: on its exact lattice, or on the rounded grid of spacing ``spacing``.

    Pessimistic: ``P``-masses rounded up, points split onto the grid (:func:`_split`), cells by
    their two-point extreme split (:func:`_table_grids`). Optimistic: on an exact lattice the
    ``P``-masses rounded down; on a rounded grid the ``Q``-masses (rounded down) at lower bounds
    of their losses grouped into blocks onto the grid (:func:`_contract`), each block a merged
    output with the ``P``-masses of its pieces (:func:`_merged_blocks`).
    """
    bits = probability_bits(dps)
    exact = spacing is None and atoms.lattice is not None and atoms.table is None
    pess: dict[int, int] = {}
    opt: dict[int, int] = {}
    infinite_hi = atoms.infinite_hi
    slack = 0.0  # the tails a table's window leaves
    with precision(dps):
        if exact:
            assert atoms.lattice is not None
            offset, h = atoms.lattice
            for point in atoms.points:
                assert point.j is not None
                pess[point.j] = pess.get(point.j, 0) + fixed_point(upper(point.p), bits, "c")
                opt[point.j] = opt.get(point.j, 0) + fixed_point(lower(point.p), bits, "f")
            spacing_e = Enclosure.from_interval(h)
            offset_e = Enclosure.from_interval(offset)
        else:
            h_float = spacing if spacing is not None else range_spacing(atoms)
            hf = Fraction(h_float)
            # The grid is offset + j h: the lowest heavy atom on a grid point costs no contraction.
            # Losses are measured from the offset, Q-masses scaled by e^offset (CellTable.shifted).
            offset = atoms.pile if atoms.pile is not None else mp.zero
            scale = iv.exp(iv.mpf(offset))
            # Q-masses carry enough extra bits that an atom of high loss (Q = P e^{-l}) keeps its
            # P-mass: Skellam of variance 1e-300 has P ≈ 1 at l = 691.5.
            extra = _extra_bits(atoms, offset)
            q_bits = bits + extra
            q_atoms: list[Atom] = []
            for point in atoms.points:
                loss = point.loss - offset
                _split(loss, h_float, fixed_point(upper(point.p), bits, "c"), pess)
                m = fixed_point(lower(point.q * scale), q_bits, "f")
                if m > 0:
                    ratio = fixed_point(lower(iv.exp(loss)), _RATIO_BITS, "f")
                    q_atoms.append((_floor_steps(lower(loss), hf, _LOSS_BITS), m, ratio))
            if atoms.table is not None:
                with precision(dps + CELL_DPS):
                    table = atoms.table if offset == 0 else atoms.table.shifted(offset)
                    tail, cut = _table_grids(table, h_float, bits, pess, q_atoms, q_bits)
                infinite_hi = upper(iv.mpf(infinite_hi) + iv.mpf(tail))
                slack = float_up(cut)
            opt = _merged_blocks(q_atoms, _LOSS_BITS, extra)
            spacing_e = Enclosure.exact(h_float)
            offset_e = Enclosure(offset, offset)
        return Discretized(
            spacing=spacing_e,
            offset=offset_e,
            exact_grid=exact,
            bits=bits,
            dps=dps,
            pessimistic=truncate_rows(
                Rows.from_dict(pess, fixed_point(infinite_hi, bits, "c"), bits, slack), True
            ).grid(),
            optimistic=truncate_rows(
                Rows.from_dict(opt, fixed_point(atoms.infinite_lo, bits, "f"), bits, slack), False
            ).grid(),
        )


def _extra_bits(atoms: Atoms, offset: Mpf) -> int:
    """Fractional bits beyond a probability's that a ``Q``-mass ``P e^{-(l - offset)}`` needs to keep
    the ``P``-mass of the highest finite loss ``l`` of ``atoms`` (8 to spare)."""
    highs = [upper(p.loss) for p in atoms.points]
    if atoms.table is not None:
        highs += [upper_of(x) for x in atoms.table.losses]
    top = max(highs, default=mp.zero) - offset
    return 8 + max(0, math.ceil(float(top) / math.log(2))) if mp.isfinite(top) else 8


def discretize(
    pair: Pair,
    spacing: float | None,
    dps: int,
    tables: dict[tuple[MixturePair, float], CellTable] | None = None,
    tail: float = 0.0,
) -> Discretized:
    """The two grids of one pair: on its exact lattice when it has one and no spacing is asked.

    ``tables`` caches the cells of continuous pairs (:func:`accounting.pld.atoms.pair_atoms`), whose
    windows may leave ``tail`` beyond each end.
    """
    bits = probability_bits(dps)
    if spacing is None and isinstance(pair, MixturePair) and not pair.lattice:
        spacing = continuous_spacing(pair, dps)
    return _from_atoms(pair_atoms(pair, spacing, bits, dps, tables, tail), spacing, dps)
