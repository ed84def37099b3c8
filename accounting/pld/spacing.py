"""The grid spacing of a privacy-loss distribution, when the caller gives none.

By default (:func:`default_spacing`) each pair's exact lattice when the whole ledger shares one;
otherwise the coarsest of the pairs' own choices: ``2^⌊log2(s/n)⌋`` for the standard deviation
``s`` of a continuous or subsampled pair's loss and ``n`` steps per standard deviation (24; 96
for a subsampled release; the relative error is about ``(h/s)^2`` whatever the number of
compositions), ``2^⌊log2(10^-4 · r)⌋`` for the loss range ``r`` of a lattice shift
pair. For a ledger of sparse lattice atoms the default spacing is refined first
(:func:`_refined_spacing`). A power of two: grids of similar mechanisms then coincide and can be
composed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from mpmath import iv, mp
from numpy.typing import NDArray

from accounting.balls import lower_of, upper_of
from accounting.certified import Mpf, float_down, lower, precision, upper
from accounting.noise import DEFAULT_DPS, DiscreteLaplace, Laplace
from accounting.pld.atoms import Atoms, least_cell_spacing, pair_atoms
from accounting.pld.grid import probability_bits
from accounting.pld.pairs import CitedPair, Pair, exact_lattice
from accounting.subsampling import MixturePair

__all__ = ["default_spacing"]


#: Default grid spacing for losses that are not on a lattice, relative to the loss range.
RELATIVE_SPACING = 1e-4


def range_spacing(atoms: Atoms) -> float:
    """``2^⌊log2(10^-4 · range)⌋`` of the finite losses (a power of two: grids of similar
    mechanisms then coincide and can be composed)."""
    lows = [lower(p.loss) for p in atoms.points]
    highs = [upper(p.loss) for p in atoms.points]
    if atoms.table is not None:
        lows += [lower_of(x) for x in atoms.table.losses]
        highs += [upper_of(x) for x in atoms.table.losses]
    if not lows:
        return 1.0
    spread = float(max(highs) - min(lows))
    if not spread > 0:
        spread = max(1.0, float(max(abs(x) for x in highs)))
    return power_of_two_below(RELATIVE_SPACING * spread)


#: The relative error of ``ε`` that the optimistic side of a composition of lattice atoms may
#: reach before :func:`_refined_spacing` halves the default spacing (at most :data:`_REFINE` times).
_LOWER_END_RTOL = 1e-5
_REFINE = 3


def _refined_spacing(atoms: Atoms, h: float, compositions: int) -> float:
    """``h`` halved (at most :data:`_REFINE` times) while ``√k·h·max(h, D)/(8s) > _LOWER_END_RTOL``.

    ``s`` is the standard deviation of one mechanism's loss and ``D`` the typical gap between its
    atoms. The optimistic side merges each atom with a piece of its neighbour to reach a grid
    point (:func:`accounting.pld.discretization._merged_blocks`), which loses about
    ``h·max(h, D)/4`` of the loss's variance per mechanism, and each coarsening of a long
    composition (:func:`accounting.pld.coarsening.fit`) a little more; the
    rule spends grid points where the ledger is long and the atoms sparse, which is where that
    shows (Skellam noise of variance 100, ``D ≈ 0.01`` against ``h = 2^-13``, from about 100
    compositions on: then both ends are tighter than on the unrefined, uncoarsened grid, and
    10^6 compositions still take seconds). Dense atoms (``D <= h``) rarely need it. The constant
    is a cost/tightness choice, not part of the certificate.
    """
    points = sorted((float(mp.mpf(p.loss.mid)), float(mp.mpf(p.p.mid))) for p in atoms.points)
    weights = np.array([w for _, w in points])
    losses = np.array([x for x, _ in points])
    if compositions < 2 or len(points) < 3 or not weights.sum() > 0:
        return h
    weights = weights / weights.sum()
    mean = float(weights @ losses)
    s = math.sqrt(float(weights @ (losses - mean) ** 2))
    gap = float(np.diff(losses) @ ((weights[1:] + weights[:-1]) / 2))
    for _ in range(_REFINE):
        if not s > 0 or math.sqrt(compositions) * h * max(h, gap) / (8 * s) <= _LOWER_END_RTOL:
            break
        h /= 2
    return h


def power_of_two_below(x: float) -> float:
    return 2.0 ** (math.frexp(x)[1] - 1)


#: A continuous pair's default spacing is ``2^⌊log2(s/n)⌋`` for the standard deviation ``s`` of its
#: loss, ``n = _STEPS_PER_STD`` steps per standard deviation. The discretization errors of both
#: ends are second order, about ``(h/s)^2`` relative to the composed loss's spread whatever the
#: number of compositions. A subsampled release (more than one component on a side) takes
#: ``_SAMPLED_STEPS_PER_STD``: ε of 10^4 Poisson-subsampled Gaussian steps (q = 0.01, σ = 1,
#: δ = 1e-5) has its upper end 1.3e-4 above the truth (relative) at s/24 and 8.3e-6 at s/96 (its
#: grid 2^-13, one transform of 2^18 points: :mod:`accounting.pld.powers`), the 1e-5 that DP-SGD
#: accounting is asked for. A plain Laplace release keeps 24: its error is that of its two heavy
#: atoms, which a finer grid does not place better.
_STEPS_PER_STD = 24
_SAMPLED_STEPS_PER_STD = 96


def continuous_spacing(pair: MixturePair, dps: int = DEFAULT_DPS) -> float:
    """``2^⌊log2(s/n)⌋`` for the standard deviation ``s`` of the pair's loss under ``P`` (float
    estimate) and ``n`` steps per standard deviation (:data:`_STEPS_PER_STD`), at least the least
    spacing its cells take (a power of two above
    :func:`~accounting.pld.atoms.least_cell_spacing`: a small sampling rate)."""
    xa, xb = pair.window_float(-12 * math.log(10))
    xs = np.linspace(xa, xb, 20_001)  # 100_001 gave the same spacing for 420 sampled pairs
    weights = np.diff(np.exp(pair.log_tails_float(xs)[0]))
    by_spread = _std_spacing(weights, pair.loss_float((xs[1:] + xs[:-1]) / 2), _steps(pair))
    return max(by_spread, 2 * power_of_two_below(least_cell_spacing(pair, probability_bits(dps))))


def _mixture_default_spacing(pair: MixturePair, dps: int) -> float:
    """:func:`continuous_spacing`, or for lattice mixtures the same rule from float PMFs."""
    if not pair.lattice:
        return continuous_spacing(pair, dps)
    p, q = pair.sides()
    mass = mp.mpf(10) ** -12
    ap, bp = p.window(mass)
    aq, bq = q.window(mass)
    xs = np.arange(min(ap, aq), max(bp, bq) + 1, dtype=np.float64)
    ps, qs = p.pmf(xs), q.pmf(xs)
    kept = (ps > 0) & (qs > 0)
    return _std_spacing(ps[kept], np.log(ps[kept]) - np.log(qs[kept]), _steps(pair))


def _steps(pair: MixturePair) -> int:
    """Grid steps per standard deviation of the loss: more for a subsampled release."""
    return _SAMPLED_STEPS_PER_STD if len(pair.components()) > 2 else _STEPS_PER_STD


def _std_spacing(weights: NDArray[np.float64], losses: NDArray[np.float64], steps: int) -> float:
    """``2^⌊log2(s/steps)⌋`` for the standard deviation ``s`` of ``losses`` under ``weights``."""
    total = float(np.sum(weights))
    mean = float(np.sum(weights * losses)) / total
    std = math.sqrt(max(0.0, float(np.sum(weights * (losses - mean) ** 2)) / total))
    return power_of_two_below(std / steps if std > 0 else 1.0)


#: How much finer than its own default spacing a pair is discretized when another pair of the ledger
#: asks for a finer grid (:func:`default_spacing`).
MAX_REFINEMENT = 16


def default_spacing(pairs: Sequence[Pair], dps: int = DEFAULT_DPS, compositions: int = 1) -> float | None:
    """The grid spacing :func:`compose_events` uses when none is given (``None``: exact lattices).

    ``None`` when every pair has an exact lattice with the same spacing (discrete Laplace,
    discrete Gaussian, cited guarantees of one ε): the composition is then exact up to the
    rounding of probabilities. Otherwise the finest of the pairs' own defaults, but at most
    :data:`MAX_REFINEMENT` times finer than the coarsest: ``2^⌊log2(s/n)⌋`` for the standard deviation
    ``s`` of a continuous pair's loss (:data:`_STEPS_PER_STD`), and ``2^⌊log2(10^-4 · r)⌋`` for
    the loss range ``r`` of a lattice or cited pair (as :meth:`PrivacyLossDistribution.from_mechanism`),
    halved up to three times for a ledger of ``compositions`` releases whose lattice atoms are
    sparse on that grid (:func:`_refined_spacing`).
    """
    lattices: set[tuple[Mpf, Mpf]] = set()
    for pair in pairs:
        lattice = _pair_lattice(pair, dps)
        if lattice is None:
            lattices = set()
            break
        lattices.add(lattice)
    if len(lattices) == 1:
        return None
    candidates = []
    for pair in set(pairs):
        if isinstance(pair, MixturePair) and pair.shift_pair is None:
            candidates.append(_mixture_default_spacing(pair, dps))
        else:
            atoms = pair_atoms(pair, None, probability_bits(dps), dps)
            candidates.append(_refined_spacing(atoms, range_spacing(atoms), compositions))
    # The finest pair sets the grid, so that a ledger of several kinds of events composes as tightly
    # as its finest part alone (a Laplace release beside 10^4 sampled Gaussian steps: on the
    # Laplace's coarser grid, ε(1e-5) was [1.20, 2.68]; now [2.5497, 2.5513], dp_accounting's PLD
    # 2.551); but at most MAX_REFINEMENT times finer than the coarsest pair's own, which bounds that
    # pair's grid and the cost (that ledger: 0.7 s before, 8 s now).
    h = max(min(candidates), max(candidates) / MAX_REFINEMENT)
    for pair in pairs:
        piles = _piles(pair)
        if piles is not None:
            # Put the top heavy atom of the first pair that has two on a grid point too (the
            # bottom one is put there by the offset): N steps of span/N, rounded down.
            with precision(20):
                span = piles[1] - piles[0]
                steps = math.ceil(span / h)
                return float_down(lower(iv.mpf(span) / steps))
    return h


def _piles(pair: Pair) -> tuple[Mpf, Mpf] | None:
    """Lower bounds of the losses of the two heavy end atoms of a pair, if it has them.

    The continuous Laplace (flat below and above its components: ``P``-masses ``e^{-Δ/b}/2`` and
    ``1/2``), a cited guarantee (``±ε``) and the discrete Laplace (``±Δ/b``).
    """
    with precision(20):
        if isinstance(pair, CitedPair):
            return (-mp.mpf(pair.eps), mp.mpf(pair.eps)) if pair.eps > 0 else None
        if not pair.lattice and isinstance(pair.noise, Laplace):
            bottom, top = pair.loss_limits()
            return None if bottom is None or top is None else (lower(bottom), lower(top))
        shift = pair.shift_pair
        if shift is not None and isinstance(shift[0], DiscreteLaplace):
            lattice = exact_lattice(*shift)
            assert lattice is not None
            return lower(lattice[0]), lower(lattice[0] + shift[1] * lattice[1])
    return None


def _pair_lattice(pair: Pair, dps: int) -> tuple[Mpf, Mpf] | None:
    """The exact lattice spacing of a pair, as the PLD would hold it (``None`` off a lattice).

    Computed as :func:`accounting.pld.atoms._cited_atoms` and :func:`exact_lattice` compute it at
    ``dps``, so that equal enclosures here are equal spacings in
    :meth:`~accounting.pld.PrivacyLossDistribution.compose`.
    """
    with precision(dps):
        if isinstance(pair, CitedPair):
            if pair.eps == 0:
                return None
            h = 2 * iv.mpf(pair.eps)
            return (lower(h), upper(h))
        shift = pair.shift_pair
        if shift is None:
            return None
        lattice = exact_lattice(*shift)
        if lattice is None:
            return None
        return (lower(lattice[1]), upper(lattice[1]))
