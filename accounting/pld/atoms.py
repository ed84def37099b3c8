"""The loss atoms of one dominating pair: points with their ``P``- and ``Q``-masses, or cells.

**Exact grids.** When the loss is affine in the output the grid represents it exactly and the
two grids of a PLD differ only by the rounding of probabilities (about ``10^-dps``):

* discrete Laplace ``Lap_Z(b)``: ``L(y) = (|y + Δ| - |y|)/b`` for ``y = x - Δ ~ X`` takes the
  values ``-Δ/b, (2-Δ)/b, ..., Δ/b``: offset ``-Δ/b``, spacing ``2/b``, ``j = clip(y + Δ, 0, Δ)``;
* discrete Gaussian ``N_Z(0, σ^2)``: ``L(y) = (2yΔ + Δ^2)/(2σ^2)``: offset ``Δ^2/(2σ^2)``,
  spacing ``Δ/σ^2``, ``j = y``;
* randomized response (a cited ``ε``): offset ``-ε``, spacing ``2ε``.

Other lattice noise gives its atoms from certified PMF tables over a window
(:func:`_window_atoms`).

**Continuous noise** (Gaussian, Laplace and their subsampled mixtures, whose loss is monotone
in the output): the output axis is cut into cells at (floats near) the points where the loss
crosses ``n h``, wider in the tails (:data:`_TAIL_MASS`); each cell's ``P``- and ``Q``-masses
are certified (interval ``exp``; the Gaussian tail through :func:`mpmath.erfc` with a margin,
see :meth:`accounting.subsampling.MixturePair.masses`) and its loss lies between the losses at its
ends (:func:`_cell_table`). :mod:`accounting.pld.discretization` puts them on the grid.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from mpmath import iv, mp

from accounting.balls import arb, ball, ball_of, ball_precision, lower_of, upper_of
from accounting.certified import Interval, Mpf, lower, precision, to_interval, upper
from accounting.divergence import check_size, pmf_tables
from accounting.errors import UnsupportedError
from accounting.mixture_cells import gaussian_losses, gaussian_masses
from accounting.noise import DiscreteLaplace, Gaussian, LatticeNoise, Shifted
from accounting.pld.pairs import CitedPair, Pair, exact_lattice
from accounting.subsampling import MixturePair


@dataclass(frozen=True)
class _Point:
    """An atom of the loss: ``P``- and ``Q``-mass at the loss ``loss`` (an enclosure of one value).

    ``j`` is its index on the pair's exact lattice (``None`` off a lattice).
    """

    j: int | None
    p: Interval
    q: Interval
    loss: Interval


@dataclass(frozen=True)
class CellTable:
    """The cells of the output axis of a continuous pair with a nondecreasing loss.

    All are Arb balls (:mod:`accounting.balls`). ``losses[i]`` encloses the loss at the boundary
    ``x_i`` (increasing); ``masses[i]`` are the
    ``P`` and ``Q`` masses of the cell ``(x_{i-1}, x_i]`` (with ``x_{-1} = -∞``, ``x_n = +∞``), so
    each cell's loss lies between the losses of its ends; ``bottom`` and ``top`` enclose
    ``L(-∞)`` and ``L(+∞)`` (``None``: infinite).
    """

    losses: list[arb]
    masses: list[tuple[arb, arb]]
    bottom: arb | None
    top: arb | None

    def shifted(self, offset: Mpf) -> CellTable:
        """The same cells with every loss measured from ``offset`` (at the current ``iv`` precision).

        ``Q``-masses are scaled by ``e^{offset}``, so that ``Q = Σ P e^{-loss}`` still holds with
        the shifted losses (the two-point split and the ``Q``-weighted means rely on it).
        """
        with ball_precision(iv.prec):
            shift = ball(offset)
            scale = shift.exp()
            return CellTable(
                [loss - shift for loss in self.losses],
                [(p, q * scale) for p, q in self.masses],
                None if self.bottom is None else self.bottom - shift,
                None if self.top is None else self.top - shift,
            )

    def reversed(self) -> CellTable:
        """The table of :meth:`MixturePair.reversed`: ``x -> -x``, ``P`` and ``Q`` swapped, losses negated."""
        return CellTable(
            [-loss for loss in reversed(self.losses)],
            [(q, p) for p, q in reversed(self.masses)],
            None if self.top is None else -self.top,
            None if self.bottom is None else -self.bottom,
        )


@dataclass(frozen=True)
class Atoms:
    """What one pair contributes: point atoms, a table of continuous cells, the ``P``-mass at ``+inf``.

    ``infinite_hi`` also bounds the ``P``-mass left outside a window (pessimistic side only);
    ``lattice`` is ``(offset, h)`` when every point's loss is exactly ``offset + j h``; ``pile``
    is a lower bound (within rounding) of the loss of the lowest heavy atom, which a rounded
    grid puts on a grid point (:func:`accounting.pld.discretization.discretize`).
    """

    points: list[_Point]
    table: CellTable | None
    infinite_hi: Mpf
    infinite_lo: Mpf
    lattice: tuple[Interval, Interval] | None
    pile: Mpf | None = None


def pair_atoms(
    pair: Pair,
    spacing: float | None,
    bits: int,
    dps: int,
    tables: dict[tuple[MixturePair, float], CellTable] | None = None,
    tail: float = 0.0,
) -> Atoms:
    """The atoms of one pair (``spacing`` is needed to place continuous cells).

    ``tables`` caches the cells of continuous pairs: the reverse of a pair (the other direction
    under add-remove) reuses its cells reflected. ``tail``: the mass a continuous pair's window
    may leave beyond each end (:func:`_cell_table`).
    """
    if isinstance(pair, CitedPair):
        return _cited_atoms(pair, dps)
    if pair.shift_pair is not None or pair.lattice:
        return lattice_atoms(pair, bits, dps)
    if spacing is None:
        raise AssertionError("continuous pairs need a spacing")
    tables = {} if tables is None else tables
    if (pair, tail) not in tables:
        mirror = (pair.reversed(), tail)
        tables[pair, tail] = (
            tables[mirror].reversed() if mirror in tables else _cell_table(pair, spacing, bits, dps, tail)
        )
    table = tables[pair, tail]
    return Atoms([], table, mp.zero, mp.zero, None, _flat_bottom(table))


@lru_cache(maxsize=16)
def lattice_atoms(pair: MixturePair, bits: int, dps: int) -> Atoms:
    """The atoms of a lattice pair (no spacing needed), kept: the default spacing and the grid
    of one ledger read the same window tables, whose certified PMFs dominate the cost."""
    shift = pair.shift_pair
    if shift is not None:
        noise, d = shift
        if isinstance(noise, DiscreteLaplace):
            return _discrete_laplace_atoms(noise, d, dps)
        return _window_atoms(*pair.sides(), bits, dps, (noise, d))
    return _window_atoms(*pair.sides(), bits, dps, None)


def _flat_bottom(table: CellTable) -> Mpf | None:
    """The loss of the bottom cell when it is an atom (Laplace noise is flat below its components)."""
    if table.bottom is None or not table.losses:
        return None
    low, high = lower_of(table.bottom), upper_of(table.losses[0])
    with precision(15):
        flat = high - low <= mp.ldexp(max(mp.one, abs(low)), -60)
    return low if flat else None


def _cited_atoms(pair: CitedPair, dps: int) -> Atoms:
    with precision(dps):
        eps = iv.mpf(pair.eps)
        keep = 1 - iv.mpf(pair.dlt)
        e = iv.exp(eps)
        high = keep * e / (1 + e)
        low = keep / (1 + e)
        if pair.eps == 0:
            points = [_Point(None, keep, keep, iv.mpf(0))]
            lattice = None
        else:
            points = [_Point(0, low, high, -eps), _Point(1, high, low, eps)]
            lattice = (-eps, 2 * eps)
        pile = lower(points[0].loss)
        return Atoms(points, None, upper(iv.mpf(pair.dlt)), lower(iv.mpf(pair.dlt)), lattice, pile)


def _discrete_laplace_atoms(noise: DiscreteLaplace, shift: int, dps: int) -> Atoms:
    """The ``Δ + 1`` loss atoms of ``Lap_Z`` in closed form: no window, no tail (derived here).

    With ``q = e^{-1/b}`` (the decay itself when given) and ``y = x - Δ ~ X``: ``j = 0`` carries
    ``P(X <= -Δ) = q^Δ/(1+q)``, ``j = Δ`` carries ``P(X >= 0) = 1/(1+q)``, and ``j = y + Δ``
    for ``-Δ < y < 0`` carries ``P(X = y) = (1-q)/(1+q) q^{-y}``; the parts sum to 1. The
    ``Q``-mass of an atom is its ``P``-mass times ``e^{-loss}``.
    """
    with precision(dps):
        lattice = exact_lattice(noise, shift)
        assert lattice is not None
        offset, h = lattice
        q = to_interval(noise.beta) if noise.beta is not None else iv.exp(-1 / to_interval(noise.scale))
        masses = {0: q**shift / (1 + q), shift: 1 / (1 + q)}
        for y in range(-shift + 1, 0):
            masses[y + shift] = (1 - q) / (1 + q) * q ** (-y)
        points = []
        for j, m in sorted(masses.items()):
            loss = offset + j * h
            points.append(_Point(j, m, m * iv.exp(-loss), loss))
        return Atoms(points, None, mp.zero, mp.zero, lattice, lower(offset))


def _window_atoms(
    p: LatticeNoise, q: LatticeNoise, bits: int, dps: int, shift_pair: tuple[LatticeNoise, int] | None
) -> Atoms:
    """Loss atoms from certified PMF tables over a window whose tails hold at most ``2^-bits``.

    On an exact lattice (the discrete Gaussian's ``(X + Δ, X)``, where the loss at ``x`` is
    ``Δ^2/(2σ^2) + (x - Δ) Δ/σ^2``) each loss is checked to contain its lattice point.
    """
    mass = mp.ldexp(1, -bits)
    ap, bp = p.window(mass, dps)
    aq, bq = q.window(mass, dps)
    a, b = min(ap, aq), max(bp, bq)
    check_size(a, b, "the privacy-loss distribution")
    ps, qs = pmf_tables(p, q, a, b, dps)  # one table of the base noise for a shift pair
    base = p.shift if isinstance(p, Shifted) else 0
    with precision(dps):
        lattice = None if shift_pair is None else exact_lattice(*shift_pair)
        inf_hi = iv.mpf(p.cdf_bound(a - 1, dps)) + iv.mpf(p.sf_bound(b + 1, dps))
        inf_lo = iv.mpf(0)
        points: list[_Point] = []
        logs: dict[int, Interval] = {}  # a shift pair's two tables share entries: one log each

        def log(x: Interval) -> Interval:
            if id(x) not in logs:
                logs[id(x)] = iv.log(x)
            return logs[id(x)]

        for x, px, qx in zip(range(a, b + 1), ps, qs, strict=True):
            if upper(px) == 0:
                continue
            if not lower(qx) > 0:  # P-mass where Q may vanish: infinite loss (pessimistically)
                inf_hi += iv.mpf(upper(px))
                if upper(qx) == 0:
                    inf_lo += iv.mpf(lower(px))
                continue
            loss = log(px) - log(qx)
            j = None
            if lattice is not None:
                j = x - base
                on_grid = lattice[0] + j * lattice[1]
                if upper(on_grid) < lower(loss) or upper(loss) < lower(on_grid):
                    raise AssertionError(f"loss at x={x} is off its exact lattice point j={j}")
            points.append(_Point(j, px, qx, loss))
        return Atoms(points, None, upper(inf_hi), lower(inf_lo), lattice)


#: Extra decimal digits of the cell masses (differences of tails lose a few).
CELL_DPS = 10

#: A cell away from the bulk may be ``2^m`` grid steps wide once the mass beyond it (``P + Q``,
#: on its side) is below ``_TAIL_MASS / 4^m``: its second-order error then stays below that of
#: a few bulk cells. Measured against 2^-16 on subsampled Gaussians (96 steps per standard
#: deviation): the upper end of ε rises by 4e-7 of itself at q = 0.01, σ = 1, 10^4 steps, and
#: by at most 1.2e-6 at q = 0.001, σ = 0.8, for a third fewer cells (28k -> 17k at q = 0.001)
#: and a discretization 35-45% faster.
_TAIL_MASS = 2.0**-12

#: :func:`_cell_table` reads the tail masses, which set the cells' widths, at every this many
#: grid points.
_WIDTH_STRIDE = 16

#: Bulk cells span ``1/_SUBCELLS`` of a grid step of loss: the optimistic side's bound on a
#: cell's mean loss (:func:`accounting.pld.discretization._table_grids`) is low by at most ``(width)^2/8``.
_SUBCELLS = 1

#: The most grid points a continuous pair's loss range may span at the chosen spacing.
_MAX_CELL_GRID = 2**22


def least_cell_spacing(pair: MixturePair, bits: int) -> float:
    """The least spacing :func:`_cell_table` takes for ``pair`` at ``bits``: its window's loss span
    (where the tails fall below ``2^-(bits + 8)``) over :data:`_MAX_CELL_GRID` steps. A small
    sampling rate makes the loss's spread tiny beside that span (the loss is about ``q`` in the
    bulk and ``ln q + x/σ²`` far out), so the spread alone would ask for more steps than that."""
    xa, xb = pair.window_float(-(bits + 8) * math.log(2))
    span = float(pair.loss_float(np.array([xb]))[0]) - float(pair.loss_float(np.array([xa]))[0])
    return span * _SUBCELLS / _MAX_CELL_GRID


def _cell_table(pair: MixturePair, h: float, bits: int, dps: int, tail: float = 0.0) -> CellTable:
    """Cells of the output axis of a continuous pair with a nondecreasing loss, on a grid of spacing ``h``.

    The cell boundaries are (floats near) the points where the loss crosses ``n h``, so a
    bulk cell spans one grid step of loss; a cell with little mass beyond it is ``2^m`` steps
    wide (:data:`_TAIL_MASS`); the component locations of Laplace noise (where the loss has
    kinks and flat ends) are boundaries too. Each cell's masses are certified
    (:meth:`MixturePair.masses`) and its loss range is ``[L(x_i), L(x_{i+1})]`` (the loss is
    monotone, so the end points bound it). The window is cut where the ``P``- and ``Q``-tails are
    below ``2^-(bits + 8)`` (see :func:`accounting.pld.discretization._table_grids` for what
    happens beyond it), or where they are below ``tail`` when that is more: the composition that
    asks for it can lose that much (the first and last cells, beyond the window, are certified as
    the others are; the pessimistic side puts the top one at ``+∞``).
    """
    log_cut = max(-(bits + 8) * math.log(2), math.log(tail) if tail > 0 else -math.inf)
    xa, xb = pair.window_float(log_cut)
    low_f = float(pair.loss_float(np.array([xa]))[0])
    high_f = float(pair.loss_float(np.array([xb]))[0])
    step = h / _SUBCELLS
    n_lo, n_hi = math.ceil(low_f / step), math.floor(high_f / step)
    if n_hi - n_lo > _MAX_CELL_GRID:
        raise UnsupportedError(
            f"the loss of {pair!r} spans {n_hi - n_lo} grid steps of {h}: choose a larger spacing"
        )
    chosen: list[float] = [xa, xb, *(k for k in pair.kinks() if xa < k < xb)]
    if n_hi >= n_lo:
        count = n_hi - n_lo + 1
        # The widths allowed are read from every _WIDTH_STRIDE-th grid point, each point taking
        # the smaller of its two neighbours' (a narrower cell costs time, never validity); only
        # the boundaries chosen are then found on the output axis.
        coarse = np.unique(np.append(np.arange(0, count, _WIDTH_STRIDE), count - 1))
        xs = pair.inverse_loss_float(np.asarray((n_lo + coarse) * step, dtype=np.float64), xa, xb)
        lp_low, lp_high, lq_low, lq_high = pair.log_tails_float(xs)
        near = np.minimum(np.logaddexp(lp_low, lq_low), np.logaddexp(lp_high, lq_high))
        widths = np.maximum(np.floor((math.log(_TAIL_MASS) - near) / math.log(4.0)), 0).astype(np.int64)
        slot = np.searchsorted(coarse, np.arange(count), side="right") - 1
        allowed = np.minimum(widths[slot], widths[np.minimum(slot + 1, len(coarse) - 1)])
        # ``near`` rises then falls along the axis, so ``allowed`` falls then rises: its minimum
        # over [i, j] is at an end, or at the bulk ``centre`` when that lies between them.
        centre = int(np.argmin(allowed))
        i, last = 0, count - 1
        picked: list[int] = []
        while i <= last:
            picked.append(i)
            m = int(allowed[i])
            while m > 0:
                j = min(i + (1 << m), last)
                lowest = allowed[centre] if i <= centre <= j else min(allowed[i], allowed[j])
                if lowest >= m:
                    break
                m -= 1
            i += 1 << m
        targets = np.asarray((n_lo + np.array(picked)) * step, dtype=np.float64)
        chosen.extend(pair.inverse_loss_float(targets, xa, xb).tolist())
    boundaries = sorted({x for x in chosen if xa <= x <= xb})
    with precision(dps + CELL_DPS), ball_precision(iv.prec):
        if isinstance(pair.noise, Gaussian):
            masses = gaussian_masses(pair, boundaries)
            losses = gaussian_losses(pair, boundaries)
        else:
            masses = [(ball_of(p), ball_of(q)) for p, q in pair.masses(boundaries)]
            losses = [ball_of(x) for x in pair.losses(boundaries)]
        for left, right in itertools.pairwise(losses):
            if right.upper() < left.lower():
                raise AssertionError(f"the loss of {pair!r} is not monotone where it must be")
        bottom, top = (None if x is None else ball_of(x) for x in pair.loss_limits())
        return CellTable(losses, masses, bottom, top)
