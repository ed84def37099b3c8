"""Certified composition of privacy-loss distributions (PLDs): lattice, continuous, subsampled, cited.

The privacy loss of a pair ``(P, Q)`` is ``L(x) = ln(P(x)/Q(x))`` with ``x ~ P`` (``+inf`` where
``Q(x) = 0``), and

    δ(ε) = E_P[(1 - e^{ε - L})_+] = E_Q[(e^{L} - e^{ε})_+] + P(L = +inf)      (hockey stick)

(Meiser–Mohammadi 2018; Sommer–Meiser–Mohammadi 2019). The losses of independent mechanisms add,
so a composition is a convolution of PLDs. What is composed is a *dominating pair* of each
mechanism (Zhu, Dong & Wang 2022, "Optimal accounting of differential privacy via characteristic
function": by their composition theorem for dominating pairs, dominating pairs of the mechanisms
of an adaptive composition compose to one of the composition):

* ``AdditiveNoise(X, Δ)`` with symmetric, log-concave noise: ``(X + Δ, X)``, in both directions
  and under both relations (``Δ`` being the sensitivity under the relation). The likelihood
  ratio is monotone, so the trade-off curve of ``(X + k, X)`` lies above that of ``(X + Δ, X)``
  for ``|k| <= Δ``, and ``(X, X + Δ)`` is ``(X + Δ, X)`` mapped by ``x -> Δ - x``. Lattice noise,
  and the continuous Gaussian and Laplace (by cells, below). Asymmetric or non-log-concave
  noise has no single dominating pair here: refused (the RDP route answers it).
* A :class:`~accounting.mechanisms.DistributedSum`: its central mechanism under replace-one;
  refused under add-remove (a removed user takes their share along).
* :class:`~accounting.mechanisms.PureDP` and :class:`~accounting.mechanisms.ApproxDP`: the pair
  of Kairouz, Oh & Viswanath 2015 (Theorem 3.3's ``M̃``), under the relation of their theorem.
* Subsampled releases (:mod:`accounting.subsampling`): mixture pairs, one per direction.

Under add-remove every neighbouring pair of the composition is of one direction for all
mechanisms (Zhu–Dong–Wang 2022), so :func:`compose_events` composes the *remove* pairs of the
whole ledger and the *add* pairs separately, and answers with the larger δ (or ε).

**Representation.** Losses live on a grid ``offset + j·h`` (integer ``j``); probabilities are
exact fixed-point integers with scale ``2^bits``. Every PLD is a *pair* of grids, both in the
``P``-representation ``p_j``:

* the **pessimistic** one: probabilities' upper ends rounded up, an atom at ``+inf`` that also
  absorbs the ``P``-mass outside the computed window (from the certified tail bounds), and each
  loss that is not on the grid *split* between its two neighbouring grid points so that both
  the ``P``-mass and the ``Q``-mass (``Σ p e^{-l}``) are preserved — "connect the dots"
  (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022). The split pair has the true pair as a
  post-processing (merging the two atoms back), so it dominates it; the error is second order
  in ``h`` (``(1 - e^{ε-l})_+`` is linear in ``e^{-l}`` away from ``l = ε``). Mass is otherwise
  moved to higher losses only (to the upper end of a loss enclosure, truncated top tails to
  ``+inf``, truncated bottom tails to the lowest kept point).
* the **optimistic** one, a *mean-preserving contraction* of each pair's ``Q``-law of the loss.
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

The two ends of the enclosure: :meth:`PrivacyLossDistribution.delta` and
:meth:`PrivacyLossDistribution.epsilon` return ``[optimistic, pessimistic]`` as an
:class:`~accounting.certified.Enclosure`.

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

**Exact grids.** When the loss is affine in the output the grid represents it exactly and the
two grids differ only by the rounding of probabilities (about ``10^-dps``):

* discrete Laplace ``Lap_Z(b)``: ``L(y) = (|y + Δ| - |y|)/b`` for ``y = x - Δ ~ X`` takes the
  values ``-Δ/b, (2-Δ)/b, ..., Δ/b``: offset ``-Δ/b``, spacing ``2/b``, ``j = clip(y + Δ, 0, Δ)``;
* discrete Gaussian ``N_Z(0, σ^2)``: ``L(y) = (2yΔ + Δ^2)/(2σ^2)``: offset ``Δ^2/(2σ^2)``,
  spacing ``Δ/σ^2``, ``j = y``;
* randomized response (a cited ``ε``): offset ``-ε``, spacing ``2ε``.

**Continuous noise** (Gaussian, Laplace and their subsampled mixtures, whose loss is monotone
in the output): the output axis is cut into cells at (floats near) the points where the loss
crosses ``n h``, wider in the tails (:data:`_TAIL_MASS`); each cell's ``P``- and ``Q``-masses
are certified (interval ``exp``; the Gaussian tail through :func:`mpmath.erfc` with a margin,
see :func:`accounting.subsampling._erfc`) and its loss lies between the losses at its ends.
Pessimistic: the two-point extreme split of each cell (loss range ends, ``P``- and ``Q``-mass
preserved), then connect the dots. Optimistic: each cell merged into one atom (a
post-processing) at a lower bound of its ``Q``-mean loss (Hoeffding's lemma), then contracted.
Tails beyond the window go to ``+inf`` (pessimistic) or are dropped.

**Spacing.** By default (:func:`default_spacing`) each pair's exact lattice when the whole
ledger shares one; otherwise the coarsest of the pairs' own choices: ``2^⌊log2(s/24)⌋`` for
the standard deviation ``s`` of a continuous or subsampled pair's loss (the relative error is
about ``(h/s)^2`` whatever the number of compositions), ``2^⌊log2(10^-4 · r)⌋`` for the loss
range ``r`` of a lattice shift pair.

**Composition** is exact integer convolution by Kronecker substitution (one big-integer
product, done by GMP through :mod:`mpmath`'s backend, on byte rows packed by numpy), rounded
down for the optimistic grid and up for the pessimistic one; ``k``-fold by repeated squaring.

**Coarsening.** The composed loss spreads as ``√k`` while the spacing stays fixed, so a side
that grows beyond :data:`MAX_GRID_POINTS` points is moved onto twice the spacing
(:func:`_coarsen`: connect the dots for the pessimistic side, merged outputs for the optimistic
one, both second order) before it is composed further; grids whose spacings differ by a power
of two then compose on the coarser. A ``k``-fold composition costs ``O(log k)`` products of at
most that size whatever ``k``: 10^6 Skellam mechanisms of variance 100, ``ε(10^-5)`` in
``[5425.4671, 5425.5492]``, take about 4.5 s (the grid would otherwise hold about 10^8 points);
10^4 of them ``[91.81591, 91.81688]``. For a ledger of sparse lattice atoms the default spacing
is refined first (:func:`_refined_spacing`).
The 10^4-fold Poisson-subsampled Gaussian (``q = 0.01``, ``σ = 1``) takes about 2 s of CPU
under add-remove (``ε(10^-5) ∈ [6.18537, 6.18850]``) and 3 s under replace-one
(``[10.87873, 10.88137]``).

A ledger of Gaussian mechanisms only is one Gaussian mechanism (:func:`gaussian_equivalent_sigma`)
and is answered in closed form (Balle & Wang 2018, Theorem 8).
"""

from __future__ import annotations

import bisect
import itertools
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import NamedTuple

import mpmath.libmp
import numpy as np
from mpmath import iv, mp
from numpy.typing import NDArray

from accounting import bounds
from accounting import validate as v
from accounting.certified import (
    Enclosure,
    Interval,
    Mpf,
    float_down,
    float_up,
    lower,
    precision,
    to_interval,
    upper,
)
from accounting.divergence import _check_size, _tables
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError, UnsupportedEventError
from accounting.mechanisms import AdditiveNoise, ApproxDP, DistributedSum, Mechanism, PureDP
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    DEFAULT_DPS,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    LatticeNoise,
    Shifted,
)
from accounting.progress import Progress, current, report, reporting
from accounting.search import certify_upward, largest
from accounting.subsampling import MixturePair, PoissonSampled, SampledWithoutReplacement

__all__ = [
    "ComposedPLD",
    "PrivacyLossDistribution",
    "compose_events",
    "compose_mechanisms",
    "default_spacing",
    "dominating_pairs",
    "gaussian_composition_delta",
    "gaussian_composition_epsilon",
    "gaussian_equivalent_sigma",
]

#: Fractional bits carried by the suffix sums ``Σ m_j e^{-(j-i)h}`` beyond the probabilities' own.
_GUARD_BITS = 32

#: Default grid spacing for losses that are not on a lattice, relative to the loss range.
_RELATIVE_SPACING = 1e-4

#: Extra decimal digits of the interval arithmetic that evaluates δ and ε on a grid.
_EXTRA_DPS = 20

_LIMB = (1 << 64) - 1

# Big-integer products go through GMP when mpmath runs on gmpy2 (its default backend here):
# Python's own Karatsuba is about 100x slower on the megabit products of a long composition.
_MPZ = mpmath.libmp.MPZ


def _bits(dps: int) -> int:
    """Fixed-point bits of the probabilities: ``dps`` decimal digits, 4 guard digits, and 16 bits
    for the rounding errors of up to ``2^16`` grid points adding up (each rounding is one unit),
    rounded up to whole bytes (the composition shifts byte rows, :func:`_compose_rows`)."""
    return 8 * math.ceil((math.ceil((dps + 4) * math.log2(10)) + 16) / 8)


def _raw(x: Mpf | float) -> tuple[int, int, int, int]:
    """The exact binary ``(sign, mantissa, exponent, bitcount)`` of an mpf or float.

    Not ``mp.mpf(x)``, which would round an mpf wider than the current precision.
    """
    if isinstance(x, mpmath.mpf):
        return x._mpf_  # type: ignore[no-any-return]
    return mpmath.libmp.from_float(float(x))  # type: ignore[no-any-return]


def _fixed(x: Mpf | float, bits: int, rounding: str) -> int:
    """``x · 2^bits`` rounded (``"f"`` down, ``"c"`` up), exactly from the binary mantissa."""
    return int(mpmath.libmp.to_int(mpmath.libmp.mpf_shift(_raw(x), bits), rounding))


def _scale_int(n: int, x: Mpf, rounding: str) -> int:
    """``n · x`` for an integer ``n >= 0`` and an ``mpf`` ``x >= 0``, rounded exactly."""
    sign, man, exp, _ = _raw(x)
    if sign:
        raise AssertionError("negative factor")
    value = n * int(man)
    exp = int(exp)
    if exp >= 0:
        return value << exp
    return value >> -exp if rounding == "f" else -((-value) >> -exp)


def _shift_down(x: int, bits: int, up: bool) -> int:
    """``x / 2^bits`` rounded up (``up``) or down."""
    return -((-x) >> bits) if up else x >> bits


# ---------------------------------------------------------------------------------------
# One side of a PLD: a fixed-point measure on the grid plus an atom at +inf
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    """Masses ``masses[i] · 2^-bits`` at the grid losses ``offset + (start + i)·h``, plus ``+inf``."""

    start: int
    masses: tuple[int, ...]
    infinite: int

    @classmethod
    def from_dict(cls, masses: dict[int, int], infinite: int) -> _Grid:
        kept = {j: m for j, m in masses.items() if m}
        if not kept:
            return cls(0, (), infinite)
        lo, hi = min(kept), max(kept)
        return cls(lo, tuple(kept.get(j, 0) for j in range(lo, hi + 1)), infinite)

    def rescaled(self, shift: int, up: bool) -> _Grid:
        """The same grid with ``shift`` fewer fractional bits (rounded up or down)."""
        if shift == 0:
            return self
        return _Grid(
            self.start,
            tuple(_shift_down(m, shift, up) for m in self.masses),
            _shift_down(self.infinite, shift, up),
        )


@dataclass(frozen=True, eq=False)
class _Rows:
    """A side held as byte rows for composition: row ``i`` is ``masses[i]`` in little-endian bytes.

    Convolutions then pack, multiply and unpack whole arrays (numpy and one GMP product) with no
    Python loop over grid points; :class:`_Grid` (Python integers) is what queries read.
    """

    start: int
    rows: NDArray[np.uint8]
    infinite: int

    @classmethod
    def of(cls, grid: _Grid, bits: int) -> _Rows:
        return cls.of_ints(grid.start, np.array(grid.masses, dtype=object), grid.infinite, bits)

    @classmethod
    def of_ints(cls, start: int, masses: NDArray[np.object_], infinite: int, bits: int) -> _Rows:
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
        return cls(start if len(masses) else 0, np.ascontiguousarray(raw), infinite)

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

    def grid(self) -> _Grid:
        masses = tuple(self.ints().tolist())
        return _Grid(self.start if masses else 0, masses, self.infinite)

    def total(self) -> int:
        """``Σ masses``, exactly (column sums of bytes cannot overflow 64 bits below 2^56 rows)."""
        sums = self.rows.sum(axis=0, dtype=np.uint64)
        return sum(int(x) << (8 * i) for i, x in enumerate(sums))


def _convolve_rows(a: NDArray[np.uint8], b: NDArray[np.uint8], same: bool) -> NDArray[np.uint8]:
    """Exact convolution of two sequences of nonnegative integers held as byte rows.

    Kronecker substitution (as :func:`accounting.noise._convolve_int`): each sequence is packed
    into one integer with slots wide enough for any sum of products, the two integers are
    multiplied by GMP (``mpmath.libmp.MPZ``; a squaring when ``same``), and the product's bytes
    are the slots of the result.
    """
    slot = a.shape[1] + b.shape[1] + (min(len(a), len(b)).bit_length() + 7) // 8

    def pack(rows: NDArray[np.uint8]) -> object:
        buf = np.zeros((len(rows), slot), dtype=np.uint8)
        buf[:, : rows.shape[1]] = rows
        return _MPZ(int.from_bytes(buf.tobytes(), "little"))

    pa = pack(a)
    product = pa * pa if same else pa * pack(b)  # type: ignore[operator]
    n = len(a) + len(b) - 1
    raw = int(product).to_bytes(n * slot, "little")
    return np.frombuffer(raw, dtype=np.uint8).reshape(n, slot)


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


def _compose_rows(a: _Rows, b: _Rows, bits: int, up: bool, same: bool = False) -> _Rows:
    """The product measure of two sides: finite losses convolve, ``+inf`` absorbs the rest.

    The mass at ``+inf`` is ``a_inf·(B_fin + b_inf) + A_fin·b_inf`` (the measure product; it is
    ``1 - (1 - a_inf)(1 - b_inf)`` when both totals are 1). Rounded up for the pessimistic side
    (``up``), down for the optimistic one, then truncated (:func:`_truncate_rows`).
    """
    width = bits // 8 + 1
    a_fin, b_fin = a.total(), b.total()
    infinite = _shift_down(a.infinite * (b_fin + b.infinite) + a_fin * b.infinite, bits, up)
    if not len(a.rows) or not len(b.rows):
        return _Rows(0, np.zeros((0, width), dtype=np.uint8), infinite)
    product = _convolve_rows(a.rows, b.rows, same)
    rows = _shift_rows(product, bits // 8, up, width)
    return _truncate_rows(_Rows(a.start + b.start, rows, infinite), up)


def _truncate_rows(side: _Rows, up: bool) -> _Rows:
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
        return _Rows(0, kept, infinite)
    return _Rows(side.start + k_bottom, kept, infinite)


def _truncate(grid: _Grid, up: bool) -> _Grid:
    """:func:`_truncate_rows` of a grid of Python integers (``bits`` only sets the row width)."""
    width = max((m.bit_length() for m in grid.masses), default=0) // 8 + 1
    return _truncate_rows(_Rows.of(grid, 8 * (width - 1)), up).grid()


# ---------------------------------------------------------------------------------------
# Coarsening: a composed grid onto twice the spacing
# ---------------------------------------------------------------------------------------

#: A composed side holding more grid points than this is coarsened (its spacing doubled,
#: :func:`_coarsen`) before it is composed further. The composed loss's spread grows as the
#: square root of the number of compositions while the spacing stays fixed, so without it a
#: ``k``-fold composition costs ``O(√k)`` grid points per side (10^6 Skellam mechanisms: about
#: 10^8). With it the grid keeps about this many points per side whatever ``k``, each halving
#: adding a second-order error only (see :func:`_coarsen`).
MAX_GRID_POINTS = 2**16

#: The most self-compositions of one pair :func:`compose_events` squares out (``2^30``): each binary
#: digit of the count is a squaring of a grid of up to :data:`MAX_GRID_POINTS` points per direction,
#: about a third of a second each (10^9 Skellam releases took 12 s, 10^12 took 28 s, 10^18 did not
#: finish in minutes). Ledgers of Gaussian mechanisms only have a closed form and no limit; the
#: RDP, zCDP, pure and published routes compose any count by multiplication.
MAX_COMPOSITIONS = 10**9


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
        with precision(dps + _EXTRA_DPS):
            h = _iv(spacing)
            e, f = iv.exp(h), iv.exp(-h)
            rho, sigma = e / (1 + f), f / (1 + e)
            return cls(
                frac,
                _fixed(upper(1 / (1 + f)), frac, "c"),
                _fixed(upper(e), frac, "c"),
                _fixed(lower(f), frac, "f"),
                _fixed(upper(rho), frac, "c"),
                _fixed(lower(1 / rho), frac, "f"),
                _fixed(lower(sigma), frac, "f"),
                _fixed(upper(1 / sigma), frac, "c"),
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


def _coarsen(side: _Rows, up: bool, c: _Halving, bits: int) -> tuple[_Rows, float]:
    """The side on the grid of spacing ``2h``, whose points are the even points ``offset + 2J·h``.

    An atom at an even point stays; an atom at an odd point ``2J + 1`` sits exactly halfway
    between the coarse points ``J`` and ``J + 1`` (the loss is affine in the index).

    **Pessimistic** (``up``): connect the dots (Doroshenko et al. 2022, as :func:`_split_rule`):
    the share ``w = 1/(1 + e^{-h})`` of its ``P``-mass (rounded up) goes to ``J + 1`` and the rest
    to ``J``, preserving ``P``- and ``Q``-mass to within the rounding, which moves mass up only.

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
    composed loss (:func:`_fit` postpones a coarsening where it is not).

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
        return _Rows.of_ints(0, out[:0], side.infinite, bits), moved
    lo, hi = int(kept[0]), int(kept[-1]) + 1
    return _truncate_rows(_Rows.of_ints(first // 2 + lo, out[lo:hi], side.infinite, bits), up), moved


class _Sides(NamedTuple):
    """The two sides of a PLD being composed, as byte rows."""

    pessimistic: _Rows
    optimistic: _Rows


def _paired(a: _Sides, b: _Sides) -> list[tuple[_Rows, _Rows, bool]]:
    """``(a side, b side, up)`` for the pessimistic (``up``) and the optimistic side."""
    return [(a.pessimistic, b.pessimistic, True), (a.optimistic, b.optimistic, False)]


def _doubled(spacing: Enclosure, times: int) -> Enclosure:
    """``spacing · 2^times``, exactly."""
    return Enclosure(mp.ldexp(spacing.lo, times), mp.ldexp(spacing.hi, times)) if times else spacing


def _levels_apart(a: Enclosure, b: Enclosure) -> tuple[int, int]:
    """How many halvings bring grids of spacings ``a`` and ``b`` to a common one (``(-1, -1)``: none)."""
    for m in range(64):
        if _doubled(a, m) == b:
            return m, 0
        if _doubled(b, m) == a:
            return 0, m
    return -1, -1


def _halve(
    sides: _Sides, spacing: Enclosure, bits: int, dps: int, rough: float = 1.0
) -> tuple[_Sides, float]:
    """``sides`` (on a grid of ``spacing``) coarsened once (:func:`_coarsen`), and the share of the
    optimistic side's mass that moved down whole; ``sides`` unchanged when that share is above
    ``rough``."""
    c = _Halving.of(spacing, bits, dps)
    optimistic, moved = _coarsen(sides.optimistic, False, c, bits)
    if moved > rough:
        return sides, moved
    pessimistic, _ = _coarsen(sides.pessimistic, True, c, bits)
    return _Sides(pessimistic, optimistic), moved


def _lift(sides: _Sides, spacing: Enclosure, times: int, bits: int, dps: int) -> _Sides:
    """``sides`` coarsened ``times`` times, whatever it costs (to meet a coarser grid)."""
    for level in range(times):
        sides, _ = _halve(sides, _doubled(spacing, level), bits, dps)
    return sides


#: A coarsening that moves more than this share of the optimistic side's mass down whole is
#: postponed (until the side holds :data:`MAX_GRID_POINTS` times :data:`_POSTPONE` points): early
#: in a composition of sparse atoms (a lattice loss with steps much wider than the spacing, like
#: Skellam noise's) the composed law is a comb of narrow teeth that pairs badly, and every
#: composition after that multiplies the first-order error; a few more compositions smooth it.
_ROUGH = 1e-3
_POSTPONE = 4


def _fit(sides: _Sides, spacing: Enclosure, bits: int, dps: int) -> tuple[_Sides, int]:
    """``sides`` coarsened until each holds at most :data:`MAX_GRID_POINTS`; how many times it took."""
    times = 0
    while (size := max(len(sides.pessimistic.rows), len(sides.optimistic.rows))) > MAX_GRID_POINTS:
        rough = _ROUGH if size <= _POSTPONE * MAX_GRID_POINTS else 1.0
        sides, moved = _halve(sides, _doubled(spacing, times), bits, dps, rough)
        if moved > rough:
            break
        times += 1
    return sides, times


@dataclass(frozen=True)
class _Sums:
    """Suffix sums of one side, for δ and ε queries.

    ``mass[i] = Σ_{i' >= i} m_{i'}`` (scale ``2^bits``) and
    ``horner[i] = Σ_{i' >= i} m_{i'} r^{i' - i}`` with ``r = e^{-h}`` (scale ``2^(bits + G)``),
    rounded down with ``r`` rounded down (a lower bound, for the pessimistic side) or up with
    ``r`` rounded up (an upper bound, for the optimistic side); ``ratio`` is that ``r`` with
    ``bits + 2G`` fractional bits. Both lists have a final entry 0 (the empty suffix).
    """

    mass: list[int]
    horner: list[int]
    ratio: int


# ---------------------------------------------------------------------------------------
# The privacy-loss distribution
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class PrivacyLossDistribution:
    """A certified privacy-loss distribution on a grid, and its exact compositions.

    Build one with :meth:`from_mechanism`; compose with :meth:`compose` and
    :meth:`self_compose`; ask :meth:`delta` and :meth:`epsilon`. Every answer is an
    :class:`~accounting.certified.Enclosure` whose lower end comes from the optimistic grid
    and whose upper end from the pessimistic one (see the module docstring).

    Attributes
    ----------
    spacing : Enclosure
        The grid spacing ``h`` (an exact float when chosen, an enclosure of ``2/b`` or
        ``Δ/σ^2`` when the losses form an exact lattice).
    offset : Enclosure
        Losses are ``offset + j·h``.
    exact_grid : bool
        Whether every finite loss lies exactly on the grid (no discretization error).
    bits : int
        Fractional bits of the fixed-point probabilities.
    dps : int
        The working precision in decimal digits.
    """

    spacing: Enclosure
    offset: Enclosure
    exact_grid: bool
    bits: int
    dps: int
    pessimistic: _Grid
    optimistic: _Grid

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_mechanism(
        cls, mechanism: Mechanism, spacing: float | None = None, dps: int = DEFAULT_DPS
    ) -> PrivacyLossDistribution:
        """The PLD of one run of an additive mechanism: the pair ``(X + Δ, X)``.

        Parameters
        ----------
        mechanism : AdditiveNoise or DistributedSum
            With symmetric, log-concave lattice noise (the pair ``(X + Δ, X)`` then dominates),
            or continuous Gaussian or Laplace noise (cells of the output axis).
        spacing : float, optional
            The grid spacing ``h > 0``. By default the exact lattice of the discrete Laplace or
            discrete Gaussian loss, and ``2^⌊log2(10^-4 · loss range)⌋`` for other noise.
            Mechanisms must share the spacing to be composed.
        dps : int
            Working precision in decimal digits (probabilities carry about ``dps + 4``).

        Raises
        ------
        UnsupportedError
            For noise that is not symmetric or not log-concave (no single dominating pair).
        """
        pair = _mechanism_pair(mechanism)
        h = None if spacing is None else v.positive("spacing", spacing)
        dps = v.dps("dps", dps)
        return _single(pair, h, dps)

    @classmethod
    def from_pair(
        cls, pair: MixturePair, spacing: float | None = None, dps: int = DEFAULT_DPS
    ) -> PrivacyLossDistribution:
        """The PLD of one direction of one release: a :class:`~accounting.subsampling.MixturePair`.

        See :meth:`from_mechanism` for ``spacing`` and ``dps``.
        """
        if not isinstance(pair, MixturePair):
            raise ParameterTypeError("pair", pair, "a MixturePair")
        h = None if spacing is None else v.positive("spacing", spacing)
        return _single(pair, h, v.dps("dps", dps))

    # -- composition ----------------------------------------------------------------------
    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution:
        """The PLD of running both mechanisms (independent noise): losses add.

        Grids whose spacings differ by a power of two are composed on the coarser one (the finer
        is coarsened, :func:`_coarsen`); a composed side of more than :data:`MAX_GRID_POINTS`
        points is coarsened too.

        Raises
        ------
        ParameterError
            When the two spacings differ by other than a power of two.
        """
        if not isinstance(other, PrivacyLossDistribution):
            raise ParameterTypeError("other", other, "a PrivacyLossDistribution")
        up_self, up_other = _levels_apart(self.spacing, other.spacing)
        if up_self < 0:
            raise ParameterError(
                "other",
                f"a PLD with spacing {other.spacing}",
                f"a PLD whose spacing is {self.spacing} times a power of two (build both with the "
                "same `spacing`)",
            )
        bits = min(self.bits, other.bits)
        dps = min(self.dps, other.dps)
        a = self._rows(bits)
        b = a if other is self else other._rows(bits)
        a = _lift(a, self.spacing, up_self, bits, dps)
        b = a if other is self else _lift(b, other.spacing, up_other, bits, dps)
        spacing = _doubled(self.spacing, up_self)
        sides = _Sides(*(_compose_rows(x, y, bits, up, same=other is self) for x, y, up in _paired(a, b)))
        sides, more = _fit(sides, spacing, bits, dps)
        with precision(dps + _EXTRA_DPS):
            offset = Enclosure.from_interval(_iv(self.offset) + _iv(other.offset))
        exact = self.exact_grid and other.exact_grid and up_self + up_other + more == 0
        return self._made(sides, _doubled(spacing, more), offset, bits, dps, exact)

    def self_compose(self, count: int, progress: Progress | None = None) -> PrivacyLossDistribution:
        """The ``count``-fold composition, by repeated squaring (on byte rows, :class:`_Rows`).

        A side that grows beyond :data:`MAX_GRID_POINTS` points is coarsened (:func:`_coarsen`):
        the spacing of the result is then the PLD's times a power of two.

        Parameters
        ----------
        count : int
            ``k >= 1``.
        progress : callable, optional
            Called as ``progress(done, total)`` after each squaring (``total`` is the number of
            binary digits of ``k``); by default the current context's callback
            (:func:`accounting.progress.reporting`, what a progress bar sets).
        """
        why = "one squaring per binary digit of the count, about a third of a second each"
        k = v.integer("count", count, minimum=1, maximum=MAX_COMPOSITIONS, why=why)
        bits, dps = self.bits, self.dps
        base, base_level = self._rows(bits), 0
        result: _Sides | None = None
        result_level = 0
        n, done, total = k, 0, k.bit_length()
        while True:
            if n & 1:
                if result is None:
                    result, result_level = base, base_level
                else:
                    fine = _doubled(self.spacing, result_level)
                    lifted = _lift(result, fine, base_level - result_level, bits, dps)
                    result = _Sides(*(_compose_rows(x, y, bits, up) for x, y, up in _paired(lifted, base)))
                    result, more = _fit(result, _doubled(self.spacing, base_level), bits, dps)
                    result_level = base_level + more
            n >>= 1
            done += 1
            report(done, total, progress)
            if not n:
                break
            base = _Sides(*(_compose_rows(x, x, bits, up, same=True) for x, _, up in _paired(base, base)))
            base, more = _fit(base, _doubled(self.spacing, base_level), bits, dps)
            base_level += more
        assert result is not None
        with precision(dps + _EXTRA_DPS):
            offset = Enclosure.from_interval(k * _iv(self.offset))
        exact = self.exact_grid and result_level == 0
        return self._made(result, _doubled(self.spacing, result_level), offset, bits, dps, exact)

    def _rows(self, bits: int) -> _Sides:
        """Both sides as byte rows with ``bits`` fractional bits (rounded as each side must be)."""
        return _Sides(
            _Rows.of(self.pessimistic.rescaled(self.bits - bits, True), bits),
            _Rows.of(self.optimistic.rescaled(self.bits - bits, False), bits),
        )

    @staticmethod
    def _made(
        sides: _Sides, spacing: Enclosure, offset: Enclosure, bits: int, dps: int, exact: bool
    ) -> PrivacyLossDistribution:
        return PrivacyLossDistribution(
            spacing=spacing,
            offset=offset,
            exact_grid=exact,
            bits=bits,
            dps=dps,
            pessimistic=sides.pessimistic.grid(),
            optimistic=sides.optimistic.grid(),
        )

    # -- properties -----------------------------------------------------------------------
    @property
    def grid_points(self) -> int:
        """Number of grid points held (the longer of the two sides)."""
        return max(len(self.pessimistic.masses), len(self.optimistic.masses))

    @property
    def loss_range(self) -> tuple[float, float]:
        """The smallest and largest finite loss held on either side (rounded outward)."""
        with precision(self.dps + _EXTRA_DPS):
            ends = [
                (self._loss(g.start), self._loss(g.start + len(g.masses) - 1))
                for g in (self.pessimistic, self.optimistic)
                if g.masses
            ]
            if not ends:
                return (math.inf, -math.inf)
            return (
                float_down(min(lower(a) for a, _ in ends)),
                float_up(max(upper(b) for _, b in ends)),
            )

    @property
    def infinite_mass(self) -> Enclosure:
        """``P(L = +inf)``; the upper end also holds the window tails and truncated mass."""
        scale = mp.ldexp(1, -self.bits)
        with precision(self.dps):
            return Enclosure(self.optimistic.infinite * scale, min(mp.one, self.pessimistic.infinite * scale))

    # -- answers --------------------------------------------------------------------------
    def delta(self, epsilon: float) -> Enclosure:
        """``δ(ε) = E_P[(1 - e^{ε - L})_+]`` of the (composed) pair, certified.

        Parameters
        ----------
        epsilon : float
            ``ε >= 0``.
        """
        eps = mp.mpf(v.nonnegative("epsilon", epsilon))
        with precision(self.dps + _EXTRA_DPS):
            hi = self._delta_side(eps, pessimistic=True)
            lo = self._delta_side(eps, pessimistic=False)
            return Enclosure(lo, min(mp.one, hi))

    def epsilon(self, delta: float) -> Enclosure:
        """``ε(δ) = inf{ε >= 0 : δ(ε) <= δ}``, certified (``inf`` when no ε suffices).

        Between consecutive grid losses ``δ(ε) = A_k - e^ε B_k`` exactly, so the answer is
        ``ln((A_k - δ)/B_k)`` on the segment where ``δ`` is crossed (found by bisection over
        the grid points, where ``δ`` is a suffix sum). The upper end is then checked by
        evaluating the pessimistic ``δ`` at it with upward rounding (and nudged up if needed,
        as in :func:`accounting.divergence.epsilon_for_delta`); the lower end is
        ``ln((A_k - δ)/B_k)`` of the optimistic grid, a lower bound for every ``k``.
        """
        d = v.open_unit("delta", delta)
        with precision(self.dps + _EXTRA_DPS):
            # lo <= ε_optimistic <= ε <= ε_pessimistic <= hi: an empty enclosure would be a bug.
            return Enclosure(self._epsilon_lower(d), self._epsilon_upper(d))

    def __repr__(self) -> str:
        kind = "exact" if self.exact_grid else "rounded"
        return (
            f"PrivacyLossDistribution(spacing={mp.nstr(self.spacing.hi, 10)} ({kind}), "
            f"grid_points={self.grid_points}, bits={self.bits})"
        )

    # -- internals ------------------------------------------------------------------------
    def _loss(self, j: int) -> Interval:
        """The grid loss ``offset + j·h`` as an interval (current precision)."""
        return _iv(self.offset) + j * _iv(self.spacing)

    def _sums(self, pessimistic: bool) -> _Sums:
        return self._pessimistic_sums if pessimistic else self._optimistic_sums

    @cached_property
    def _pessimistic_sums(self) -> _Sums:
        return self._suffix_sums(self.pessimistic, up=False)

    @cached_property
    def _optimistic_sums(self) -> _Sums:
        return self._suffix_sums(self.optimistic, up=True)

    def _suffix_sums(self, grid: _Grid, up: bool) -> _Sums:
        """Suffix sums of ``grid`` (``horner`` rounded up when ``up``, else down; see :class:`_Sums`)."""
        g = _GUARD_BITS
        frac = self.bits + 2 * g
        with precision(self.dps + _EXTRA_DPS):
            r = iv.exp(-_iv(self.spacing))
            ratio = _fixed(upper(r), frac, "c") if up else _fixed(lower(r), frac, "f")
        n = len(grid.masses)
        mass = [0] * (n + 1)
        horner = [0] * (n + 1)
        acc_m = 0
        acc_h = 0
        for i in range(n - 1, -1, -1):
            m = grid.masses[i]
            acc_m += m
            acc_h = (m << g) + _shift_down(acc_h * ratio, frac, up)
            mass[i] = acc_m
            horner[i] = acc_h
        return _Sums(mass, horner, ratio)

    def _first_above(self, grid: _Grid, epsilon: Mpf) -> int:
        """The first index ``i`` whose grid loss is certainly ``> ε`` (``len`` if none)."""
        return bisect.bisect_left(
            range(len(grid.masses)), True, key=lambda i: bool(lower(self._loss(grid.start + i)) > epsilon)
        )

    def _delta_side(self, epsilon: Mpf, pessimistic: bool) -> Mpf:
        """Upper bound of the pessimistic side's δ(ε), or lower bound of the optimistic side's.

        ``δ(ε) = inf + T(S)``, ``T(S) = Σ_{j in S} m_j (1 - e^{ε - l_j})`` over ``S = {l_j > ε}``;
        ``T(S') = M(S') - e^{ε - l_{i0}} H(i0)`` for the indices ``S'`` certainly above ε.
        The few indices whose loss interval contains ε add at most their positive part.
        """
        grid = self.pessimistic if pessimistic else self.optimistic
        sums = self._sums(pessimistic)
        i0 = self._first_above(grid, epsilon)
        bits = self.bits
        eps = iv.mpf(epsilon)
        total = iv.mpf(grid.infinite + sums.mass[i0]) / iv.mpf(2) ** bits
        if i0 < len(grid.masses):
            b = iv.mpf(sums.horner[i0]) / iv.mpf(2) ** (bits + _GUARD_BITS)
            total -= iv.exp(eps - self._loss(grid.start + i0)) * b
        if not pessimistic:
            return max(mp.zero, lower(total))
        i = i0 - 1
        while i >= 0:
            loss = self._loss(grid.start + i)
            if not upper(loss) > epsilon:
                break
            positive_part = upper(1 - iv.exp(eps - loss))
            if positive_part > 0:
                total += iv.mpf(grid.masses[i]) / iv.mpf(2) ** bits * iv.mpf(positive_part)
            i -= 1
        return max(mp.zero, upper(total))

    def _grid_delta(self, grid: _Grid, sums: _Sums, i: int) -> int:
        """``δ`` of ``grid`` at its ``i``-th loss, scaled by ``2^(2 bits + 3G)``.

        Rounded as the suffix sums are: an upper bound on the pessimistic side, a lower bound
        on the optimistic one.

        At ``ε = l_i`` the terms are ``m_j (1 - r^{j-i})`` for ``j > i``: no offset, no exp.
        """
        return (
            (grid.infinite + sums.mass[i + 1]) << (self.bits + 3 * _GUARD_BITS)
        ) - sums.ratio * sums.horner[i + 1]

    def _segment(self, grid: _Grid, sums: _Sums, delta: Mpf) -> int:
        """The smallest index ``k`` whose grid loss has ``δ(l_k) <= δ`` (per :meth:`_grid_delta`)."""
        target = _fixed(delta, 2 * self.bits + 3 * _GUARD_BITS, "f")
        return bisect.bisect_left(
            range(len(grid.masses)), True, key=lambda i: self._grid_delta(grid, sums, i) <= target
        )

    def _segment_epsilon(self, grid: _Grid, sums: _Sums, k: int, delta: Mpf) -> Interval | None:
        """``ln((A_k - δ)/B_k)`` in interval arithmetic (``None`` where undefined)."""
        bits = self.bits
        a = iv.mpf(grid.infinite + sums.mass[k]) / iv.mpf(2) ** bits - iv.mpf(delta)
        if not lower(a) > 0 or sums.horner[k] == 0:
            return None
        b = iv.mpf(sums.horner[k]) / iv.mpf(2) ** (bits + _GUARD_BITS)
        return iv.log(a) - iv.log(b) + self._loss(grid.start + k)

    def _epsilon_upper(self, delta: float) -> Mpf:
        grid, sums = self.pessimistic, self._pessimistic_sums
        dm = mp.mpf(delta)
        if grid.infinite >= _fixed(dm, self.bits, "f"):
            return mp.inf
        if self._delta_side(mp.zero, pessimistic=True) <= dm:
            return mp.zero
        k = self._segment(grid, sums, dm)
        if k == len(grid.masses):
            return mp.inf  # only when δ is within rounding of the mass at +inf
        # Certified by the exact grid sum: δ(l_k) <= δ.
        fallback = upper(self._loss(grid.start + k))
        value = self._segment_epsilon(grid, sums, k, dm)
        if value is None:
            return max(mp.zero, fallback)
        candidate = max(mp.zero, upper(value))

        def certified(epsilon: Mpf) -> bool:
            return bool(self._delta_side(epsilon, pessimistic=True) <= dm)

        # The grid loss is already certified: a few fast-growing nudges, then settle for it.
        return max(mp.zero, certify_upward(candidate, certified, growth=4, max_tries=24, ceiling=fallback))

    def _epsilon_lower(self, delta: float) -> Mpf:
        grid, sums = self.optimistic, self._optimistic_sums
        dm = mp.mpf(delta)
        if iv.mpf(grid.infinite) / iv.mpf(2) ** self.bits > dm:
            return mp.inf
        n = len(grid.masses)
        if n == 0:
            return mp.zero
        k = self._segment(grid, sums, dm)
        best = mp.zero
        for i in (k - 1, k, k + 1):
            if 0 <= i < n:
                value = self._segment_epsilon(grid, sums, i, dm)
                if value is not None:
                    best = max(best, lower(value))
        return best


def _iv(e: Enclosure) -> Interval:
    return iv.mpf([e.lo, e.hi])


# ---------------------------------------------------------------------------------------
# Loss atoms of one pair
# ---------------------------------------------------------------------------------------


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
class _CellTable:
    """The cells of the output axis of a continuous pair with a nondecreasing loss.

    ``losses[i]`` encloses the loss at the boundary ``x_i`` (increasing); ``masses[i]`` are the
    ``P`` and ``Q`` masses of the cell ``(x_{i-1}, x_i]`` (with ``x_{-1} = -∞``, ``x_n = +∞``), so
    each cell's loss lies between the losses of its ends; ``bottom`` and ``top`` enclose
    ``L(-∞)`` and ``L(+∞)`` (``None``: infinite).
    """

    losses: list[Interval]
    masses: list[tuple[Interval, Interval]]
    bottom: Interval | None
    top: Interval | None

    def shifted(self, offset: Mpf) -> _CellTable:
        """The same cells with every loss measured from ``offset`` (current precision).

        ``Q``-masses are scaled by ``e^{offset}``, so that ``Q = Σ P e^{-loss}`` still holds with
        the shifted losses (the two-point split and the ``Q``-weighted means rely on it).
        """
        scale = iv.exp(iv.mpf(offset))
        return _CellTable(
            [loss - offset for loss in self.losses],
            [(p, q * scale) for p, q in self.masses],
            None if self.bottom is None else self.bottom - offset,
            None if self.top is None else self.top - offset,
        )

    def reversed(self) -> _CellTable:
        """The table of :meth:`MixturePair.reversed`: ``x -> -x``, ``P`` and ``Q`` swapped, losses negated."""
        return _CellTable(
            [-loss for loss in reversed(self.losses)],
            [(q, p) for p, q in reversed(self.masses)],
            None if self.top is None else -self.top,
            None if self.bottom is None else -self.bottom,
        )


@dataclass(frozen=True)
class _Atoms:
    """What one pair contributes: point atoms, a table of continuous cells, the ``P``-mass at ``+inf``.

    ``infinite_hi`` also bounds the ``P``-mass left outside a window (pessimistic side only);
    ``lattice`` is ``(offset, h)`` when every point's loss is exactly ``offset + j h``; ``pile``
    is a lower bound (within rounding) of the loss of the lowest heavy atom, which a rounded
    grid puts on a grid point (:func:`_from_atoms`).
    """

    points: list[_Point]
    table: _CellTable | None
    infinite_hi: Mpf
    infinite_lo: Mpf
    lattice: tuple[Interval, Interval] | None
    pile: Mpf | None = None


@dataclass(frozen=True)
class _CitedPair:
    """The worst-case pair of an ``(ε, δ)`` guarantee (Kairouz, Oh & Viswanath 2015, Theorem 3.3's ``M̃``).

    Loss ``+∞`` with probability ``δ``; ``+ε`` with ``P``-mass ``(1-δ) e^ε/(1+e^ε)`` and ``-ε``
    with ``(1-δ)/(1+e^ε)`` (``Q`` the mirror image). Symmetric, so one pair serves every direction.
    """

    eps: float
    dlt: float


_Pair = MixturePair | _CitedPair


def _lattice_pair(mechanism: object) -> tuple[LatticeNoise, int]:
    """The noise ``X`` and shift ``Δ`` of the dominating pair ``(X + Δ, X)`` of a lattice mechanism."""
    pair = _mechanism_pair(mechanism, continuous=False)
    shift = pair.shift_pair if isinstance(pair, MixturePair) else None
    assert shift is not None
    return shift


def _mechanism_pair(mechanism: object, continuous: bool = True) -> MixturePair:
    """The pair ``(X + Δ, X)`` of an additive mechanism (either relation: module docstring)."""
    if isinstance(mechanism, DistributedSum):
        mechanism = mechanism.mechanism
    if isinstance(mechanism, Mechanism) and not isinstance(mechanism, AdditiveNoise):
        raise UnsupportedEventError(f"no privacy-loss distribution for {mechanism!r}")
    if not isinstance(mechanism, AdditiveNoise):
        raise ParameterTypeError("mechanism", mechanism, "an AdditiveNoise or DistributedSum")
    noise = mechanism.noise
    if isinstance(noise, Gaussian | Laplace):
        if not continuous:
            raise UnsupportedEventError(f"{noise!r} is continuous noise: not a lattice mechanism")
        return MixturePair(noise, Fraction(1), float(mechanism.sensitivity))
    if not isinstance(noise, LatticeNoise):
        raise UnsupportedEventError(f"no privacy-loss distribution for noise {noise!r}")
    if not (noise.symmetric and noise.log_concave):
        raise UnsupportedEventError(
            f"noise {noise!r} is not symmetric and log-concave: a single dominating pair is needed "
            "for adaptive composition, and (X + Δ, X) is one only for such noise (the RDP route "
            "accounts it)"
        )
    return MixturePair(noise, Fraction(1), int(mechanism.sensitivity))


def _exact_lattice(noise: LatticeNoise, shift: int) -> tuple[Interval, Interval] | None:
    """``(offset, h)`` when the loss of ``(X + Δ, X)`` at ``y`` is exactly ``offset + j(y)·h``.

    ``None`` for noise without such a lattice. The index is ``j(y) = clip(y + Δ, 0, Δ)`` for
    ``Lap_Z`` (see :func:`_discrete_laplace_atoms`) and ``j(y) = y`` for ``N_Z``.
    """
    if isinstance(noise, DiscreteLaplace):
        rate = -iv.log(to_interval(noise.decay)) if noise.decay is not None else 1 / to_interval(noise.scale)
        return -shift * rate, 2 * rate
    if isinstance(noise, DiscreteGaussian):
        s2 = to_interval(noise.sigma) ** 2
        return iv.mpf(shift * shift) / (2 * s2), shift / s2
    return None


def _pair_atoms(
    pair: _Pair,
    spacing: float | None,
    bits: int,
    dps: int,
    tables: dict[MixturePair, _CellTable] | None = None,
) -> _Atoms:
    """The atoms of one pair (``spacing`` is needed to place continuous cells).

    ``tables`` caches the cells of continuous pairs: the reverse of a pair (the other direction
    under add-remove) reuses its cells reflected.
    """
    if isinstance(pair, _CitedPair):
        return _cited_atoms(pair, dps)
    if pair.shift_pair is not None or pair.lattice:
        return _lattice_atoms(pair, bits, dps)
    if spacing is None:
        raise AssertionError("continuous pairs need a spacing")
    tables = {} if tables is None else tables
    if pair not in tables:
        mirror = pair.reversed()
        tables[pair] = (
            tables[mirror].reversed() if mirror in tables else _cell_table(pair, spacing, bits, dps)
        )
    table = tables[pair]
    return _Atoms([], table, mp.zero, mp.zero, None, _flat_bottom(table))


@lru_cache(maxsize=16)
def _lattice_atoms(pair: MixturePair, bits: int, dps: int) -> _Atoms:
    """The atoms of a lattice pair (no spacing needed), kept: the default spacing and the grid
    of one ledger read the same window tables, whose certified PMFs dominate the cost."""
    shift = pair.shift_pair
    if shift is not None:
        noise, d = shift
        if isinstance(noise, DiscreteLaplace):
            return _discrete_laplace_atoms(noise, d, dps)
        return _window_atoms(*pair.sides(), bits, dps, (noise, d))
    return _window_atoms(*pair.sides(), bits, dps, None)


def _flat_bottom(table: _CellTable) -> Mpf | None:
    """The loss of the bottom cell when it is an atom (Laplace noise is flat below its components)."""
    if table.bottom is None or not table.losses:
        return None
    low, high = lower(table.bottom), upper(table.losses[0])
    with precision(15):
        flat = high - low <= mp.ldexp(max(mp.one, abs(low)), -60)
    return low if flat else None


def _cited_atoms(pair: _CitedPair, dps: int) -> _Atoms:
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
        return _Atoms(points, None, upper(iv.mpf(pair.dlt)), lower(iv.mpf(pair.dlt)), lattice, pile)


def _discrete_laplace_atoms(noise: DiscreteLaplace, shift: int, dps: int) -> _Atoms:
    """The ``Δ + 1`` loss atoms of ``Lap_Z`` in closed form: no window, no tail (Fact 3 of the spec).

    With ``q = e^{-1/b}`` (the decay itself when given) and ``y = x - Δ ~ X``: ``j = 0`` carries
    ``P(X <= -Δ) = q^Δ/(1+q)``, ``j = Δ`` carries ``P(X >= 0) = 1/(1+q)``, and ``j = y + Δ``
    for ``-Δ < y < 0`` carries ``P(X = y) = (1-q)/(1+q) q^{-y}``; the parts sum to 1. The
    ``Q``-mass of an atom is its ``P``-mass times ``e^{-loss}``.
    """
    with precision(dps):
        lattice = _exact_lattice(noise, shift)
        assert lattice is not None
        offset, h = lattice
        q = to_interval(noise.decay) if noise.decay is not None else iv.exp(-1 / to_interval(noise.scale))
        masses = {0: q**shift / (1 + q), shift: 1 / (1 + q)}
        for y in range(-shift + 1, 0):
            masses[y + shift] = (1 - q) / (1 + q) * q ** (-y)
        points = []
        for j, m in sorted(masses.items()):
            loss = offset + j * h
            points.append(_Point(j, m, m * iv.exp(-loss), loss))
        return _Atoms(points, None, mp.zero, mp.zero, lattice, lower(offset))


def _window_atoms(
    p: LatticeNoise, q: LatticeNoise, bits: int, dps: int, shift_pair: tuple[LatticeNoise, int] | None
) -> _Atoms:
    """Loss atoms from certified PMF tables over a window whose tails hold at most ``2^-bits``.

    On an exact lattice (the discrete Gaussian's ``(X + Δ, X)``, where the loss at ``x`` is
    ``Δ^2/(2σ^2) + (x - Δ) Δ/σ^2``) each loss is checked to contain its lattice point.
    """
    mass = mp.ldexp(1, -bits)
    ap, bp = p.window(mass, dps)
    aq, bq = q.window(mass, dps)
    a, b = min(ap, aq), max(bp, bq)
    _check_size(a, b, "the privacy-loss distribution")
    ps, qs = _tables(p, q, a, b, dps)  # one table of the base noise for a shift pair
    base = p.shift if isinstance(p, Shifted) else 0
    with precision(dps):
        lattice = None if shift_pair is None else _exact_lattice(*shift_pair)
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
        return _Atoms(points, None, upper(inf_hi), lower(inf_lo), lattice)


# ---------------------------------------------------------------------------------------
# Continuous pairs: cells of the output axis
# ---------------------------------------------------------------------------------------

#: Extra decimal digits of the cell masses (differences of tails lose a few).
_CELL_DPS = 10

#: A cell away from the bulk may be ``2^m`` grid steps wide once the mass beyond it (``P + Q``,
#: on its side) is below ``_TAIL_MASS / 4^m``: its second-order error then stays below that of
#: one bulk cell.
_TAIL_MASS = 2.0**-16

#: Bulk cells span ``1/_SUBCELLS`` of a grid step of loss: the optimistic side's bound on a
#: cell's mean loss (:func:`_cell_mean_loss`) is low by at most ``(width)^2/8``.
_SUBCELLS = 1

#: The most grid points a continuous pair's loss range may span at the chosen spacing.
_MAX_CELL_GRID = 2**22


def _cell_table(pair: MixturePair, h: float, bits: int, dps: int) -> _CellTable:
    """Cells of the output axis of a continuous pair with a nondecreasing loss, on a grid of spacing ``h``.

    The cell boundaries are (floats near) the points where the loss crosses ``n h``, so a
    bulk cell spans one grid step of loss; a cell with little mass beyond it is ``2^m`` steps
    wide (:data:`_TAIL_MASS`); the component locations of Laplace noise (where the loss has
    kinks and flat ends) are boundaries too. Each cell's masses are certified
    (:meth:`MixturePair.masses`) and its loss range is ``[L(x_i), L(x_{i+1})]`` (the loss is
    monotone, so the end points bound it). The window is cut where the ``P``- and ``Q``-tails are
    below ``2^-(bits + 8)`` (see :func:`_table_grids` for what happens beyond it).
    """
    log_cut = -(bits + 8) * math.log(2)
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
        ns = np.arange(n_lo, n_hi + 1)
        xs = pair.inverse_loss_float(np.asarray(ns * step, dtype=np.float64), xa, xb)
        lp_low, lp_high, lq_low, lq_high = pair.log_tails_float(xs)
        near = np.minimum(np.logaddexp(lp_low, lq_low), np.logaddexp(lp_high, lq_high))
        widths = np.floor((math.log(_TAIL_MASS) - near) / math.log(4.0))
        allowed = np.maximum(widths, 0).astype(np.int64)
        # ``near`` rises then falls along the axis, so ``allowed`` falls then rises: its minimum
        # over [i, j] is at an end, or at the bulk ``centre`` when that lies between them.
        centre = int(np.argmin(allowed))
        i, last = 0, len(ns) - 1
        while i <= last:
            chosen.append(float(xs[i]))
            m = int(allowed[i])
            while m > 0:
                j = min(i + (1 << m), last)
                lowest = allowed[centre] if i <= centre <= j else min(allowed[i], allowed[j])
                if lowest >= m:
                    break
                m -= 1
            i += 1 << m
    boundaries = sorted({x for x in chosen if xa <= x <= xb})
    with precision(dps + _CELL_DPS):
        masses = pair.masses(boundaries)
        losses = pair.losses(boundaries)
        for left, right in itertools.pairwise(losses):
            if upper(right) < lower(left):
                raise AssertionError(f"the loss of {pair!r} is not monotone where it must be")
        bottom, top = pair.loss_limits()
        return _CellTable(losses, masses, bottom, top)


# ---------------------------------------------------------------------------------------
# From atoms to the two grids
# ---------------------------------------------------------------------------------------

#: Fractional bits of a loss measured in grid steps, for the optimistic contraction.
_LOSS_BITS = 64


def _ratio(x: Mpf, h: Fraction, shift: int) -> tuple[int, int]:
    """``x · 2^shift / h`` as an exact fraction ``(numerator, denominator)`` (``x`` an mpf)."""
    sign, man, exp, _ = _raw(x)
    num = int(man) * h.denominator
    den = h.numerator
    e = int(exp) + shift
    if e >= 0:
        num <<= e
    else:
        den <<= -e
    return (-num if sign else num), den


def _floor_steps(x: Mpf, h: Fraction, shift: int = 0) -> int:
    """``⌊x · 2^shift / h⌋`` exactly."""
    num, den = _ratio(x, h, shift)
    return num // den


def _ceil_steps(x: Mpf, h: Fraction, shift: int = 0) -> int:
    """``⌈x · 2^shift / h⌉`` exactly."""
    num, den = _ratio(x, h, shift)
    return -((-num) // den)


@dataclass(frozen=True)
class _SplitRule:
    """How a ``P``-mass at a loss in an interval goes onto the grid: the share ``w`` at ``j_hi``."""

    j_lo: int
    j_hi: int
    share: Mpf  # upper end of w, in [0, 1]

    def apply(self, p_up: int, pess: dict[int, int]) -> None:
        if p_up == 0:
            return
        if self.j_lo == self.j_hi:
            pess[self.j_lo] = pess.get(self.j_lo, 0) + p_up
            return
        top = min(p_up, _scale_int(p_up, self.share, "c"))
        pess[self.j_hi] = pess.get(self.j_hi, 0) + top
        pess[self.j_lo] = pess.get(self.j_lo, 0) + p_up - top


def _split_rule(loss: Interval, h: float) -> _SplitRule:
    """Connect the dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022) for a loss in ``loss``.

    The mass is first moved to the upper end ``l`` of the enclosure (a higher loss at the same
    ``P``-mass only raises δ, for every composition), then split between ``j_lo = ⌊l/h⌋`` and
    ``j_hi = ⌈l/h⌉`` preserving ``Σ p`` and ``Σ p e^{-l}``: the share at ``j_hi`` is
    ``w = (1 - e^{-(l - j_lo h)})/(1 - e^{-h})`` (rounded up by the caller's use of its upper end).
    """
    hf = Fraction(h)
    top = upper(loss)
    j_lo = _floor_steps(top, hf)
    j_hi = _ceil_steps(top, hf)
    if j_lo == j_hi:
        return _SplitRule(j_lo, j_hi, mp.one)
    # The directed roundings of mpmath's libmp, as mpmath.iv uses them, without its per-operation
    # overhead (a lattice window has thousands of atoms): every step rounds toward a larger w.
    lib, prec = mpmath.libmp, iv.prec
    step = lib.from_float(h)
    d = lib.mpf_sub(_raw(top), lib.mpf_mul(lib.from_int(j_lo), step), prec, "c")
    num = lib.mpf_sub(lib.fone, lib.mpf_exp(lib.mpf_neg(d), prec, "f"), prec, "c")
    den = lib.mpf_sub(lib.fone, lib.mpf_exp(lib.mpf_neg(step), prec, "c"), prec, "f")
    w = mp.make_mpf(lib.mpf_div(num, den, prec, "c"))
    return _SplitRule(j_lo, j_hi, min(mp.one, max(mp.zero, w)))


def _split(loss: Interval, h: float, p_up: int, pess: dict[int, int]) -> None:
    """Put ``P``-mass ``p_up`` (fixed point) at a loss in ``loss`` onto the grid (:func:`_split_rule`)."""
    if p_up:
        _split_rule(loss, h).apply(p_up, pess)


def _table_grids(
    table: _CellTable, h: float, bits: int, pess: dict[int, int], q_atoms: list[Atom], q_bits: int
) -> Mpf:
    """Put the cells of a continuous pair on both sides of the grid; returns the ``P``-mass at ``+∞``.

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
    """
    hf = Fraction(h)
    losses = table.losses
    n = len(losses)
    ends: list[Interval | None] = [table.bottom, *losses, table.top]
    rules: dict[int, _SplitRule] = {}
    exps: dict[int, tuple[Interval, Interval]] = {}

    def rule(k: int) -> _SplitRule:
        if k not in rules:
            loss = ends[k]
            assert loss is not None
            rules[k] = _split_rule(loss, h)
        return rules[k]

    def exps_at(k: int) -> tuple[Interval, Interval]:
        """``e^{-lo}`` and ``e^{-hi}`` of the end ``k``."""
        if k not in exps:
            loss = ends[k]
            assert loss is not None
            exps[k] = (iv.exp(-iv.mpf(lower(loss))), iv.exp(-iv.mpf(upper(loss))))
        return exps[k]

    infinite = iv.mpf(0)
    for i, (p, q) in enumerate(table.masses):
        if upper(p) == 0 and upper(q) == 0:
            continue
        left, right = ends[i], ends[i + 1]  # the cell's loss lies between them
        if left is None:  # bottom tail beyond the window, L -> -∞
            rule(i + 1).apply(_fixed(upper(p), bits, "c"), pess)
            continue
        if right is None:  # top tail beyond the window, L -> +∞
            infinite += iv.mpf(upper(p))
            continue
        low, high = lower(left), upper(right)
        width = high - low
        if not width > mp.ldexp(max(mp.one, abs(low)), -iv.prec // 2):
            _split(iv.mpf([low, high]), h, _fixed(upper(p), bits, "c"), pess)
        else:
            ea, eb = exps_at(i)[0], exps_at(i + 1)[1]
            gap = ea - eb
            cap = upper(p)
            p_top = min(cap, max(mp.zero, upper((p * ea - q) / gap)))
            p_bottom = min(cap, max(mp.zero, upper((q - p * eb) / gap)))
            rule(i).apply(_fixed(p_bottom, bits, "c"), pess)
            rule(i + 1).apply(_fixed(p_top, bits, "c"), pess)
        m = _fixed(lower(q), q_bits, "f")
        if m > 0 and lower(p) > 0:
            ratio = p / q
            merged = max(low, lower(iv.log(ratio)))
            q_atoms.append((_floor_steps(merged, hf, _LOSS_BITS), m, _fixed(lower(ratio), _RATIO_BITS, "f")))
    assert n + 1 == len(table.masses)
    return upper(infinite)


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
        self.out: dict[int, int] = {}
        self.out_p: dict[int, int] = {}
        self.mass = 0
        self.moment = 0
        self.p = 0
        self.target = 0

    def _close(self, g: int, q: int, p: int) -> None:
        self.out[g] = self.out.get(g, 0) + q
        self.out_p[g] = self.out_p.get(g, 0) + p

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

    def finish(self) -> None:
        if self.mass:
            self._close(self.moment // (self.mass * self.unit), self.mass, self.p)
            self.mass = self.moment = self.p = 0


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
    ordered = sorted((a[0], a[1], a[2] if len(a) > 2 else 0) for a in atoms if a[1] > 0)
    n = len(ordered)
    unit = 1 << frac
    up_cost = [0.0] * (n + 1)
    sweep = _Sweep(unit, upward=True, shift=_RATIO_BITS + extra)
    for i, (t, m, _) in enumerate(ordered):
        sweep.add(t, m)
        up_cost[i + 1] = sweep.leftover_cost()
    down_cost = [0.0] * (n + 1)
    sweep = _Sweep(unit, upward=False, shift=_RATIO_BITS + extra)
    for i in range(n - 1, -1, -1):
        sweep.add(ordered[i][0], ordered[i][1])
        down_cost[i] = sweep.leftover_cost()
    split = min(range(n + 1), key=lambda s: up_cost[s] + down_cost[s])
    up = _Sweep(unit, upward=True, shift=_RATIO_BITS + extra)
    for t, m, r in ordered[:split]:
        up.add(t, m, r)
    down = _Sweep(unit, upward=False, shift=_RATIO_BITS + extra)
    for t, m, r in reversed(ordered[split:]):
        down.add(t, m, r)
    up.finish()
    down.finish()
    q_out, p_out = up.out, up.out_p
    for g, m in down.out.items():
        q_out[g] = q_out.get(g, 0) + m
        p_out[g] = p_out.get(g, 0) + down.out_p[g]
    return q_out, p_out


def _from_atoms(atoms: _Atoms, spacing: float | None, dps: int) -> PrivacyLossDistribution:
    """The two grids of a pair: on its exact lattice, or on the rounded grid of spacing ``spacing``.

    Pessimistic: ``P``-masses rounded up, points split onto the grid (:func:`_split`), cells by
    their two-point extreme split (:func:`_table_grids`). Optimistic: on an exact lattice the
    ``P``-masses rounded down; on a rounded grid the ``Q``-masses (rounded down) at lower bounds
    of their losses grouped into blocks onto the grid (:func:`_contract`), each block a merged
    output with the ``P``-masses of its pieces (:func:`_merged_blocks`).
    """
    bits = _bits(dps)
    exact = spacing is None and atoms.lattice is not None and atoms.table is None
    pess: dict[int, int] = {}
    opt: dict[int, int] = {}
    infinite_hi = atoms.infinite_hi
    with precision(dps):
        if exact:
            assert atoms.lattice is not None
            offset, h = atoms.lattice
            for point in atoms.points:
                assert point.j is not None
                pess[point.j] = pess.get(point.j, 0) + _fixed(upper(point.p), bits, "c")
                opt[point.j] = opt.get(point.j, 0) + _fixed(lower(point.p), bits, "f")
            spacing_e = Enclosure.from_interval(h)
            offset_e = Enclosure.from_interval(offset)
        else:
            h_float = spacing if spacing is not None else _default_spacing(atoms)
            hf = Fraction(h_float)
            # The grid is offset + j h: the lowest heavy atom on a grid point costs no contraction.
            # Losses are measured from the offset, Q-masses scaled by e^offset (_CellTable.shifted).
            offset = atoms.pile if atoms.pile is not None else mp.zero
            scale = iv.exp(iv.mpf(offset))
            # Q-masses carry enough extra bits that an atom of high loss (Q = P e^{-l}) keeps its
            # P-mass: Skellam of variance 1e-300 has P ≈ 1 at l = 691.5.
            extra = _extra_bits(atoms, offset)
            q_bits = bits + extra
            q_atoms: list[Atom] = []
            for point in atoms.points:
                loss = point.loss - offset
                _split(loss, h_float, _fixed(upper(point.p), bits, "c"), pess)
                m = _fixed(lower(point.q * scale), q_bits, "f")
                if m > 0:
                    ratio = _fixed(lower(iv.exp(loss)), _RATIO_BITS, "f")
                    q_atoms.append((_floor_steps(lower(loss), hf, _LOSS_BITS), m, ratio))
            if atoms.table is not None:
                with precision(dps + _CELL_DPS):
                    table = atoms.table if offset == 0 else atoms.table.shifted(offset)
                    tail = _table_grids(table, h_float, bits, pess, q_atoms, q_bits)
                infinite_hi = upper(iv.mpf(infinite_hi) + iv.mpf(tail))
            opt = _merged_blocks(q_atoms, _LOSS_BITS, extra)
            spacing_e = Enclosure.exact(h_float)
            offset_e = Enclosure(offset, offset)
        return PrivacyLossDistribution(
            spacing=spacing_e,
            offset=offset_e,
            exact_grid=exact,
            bits=bits,
            dps=dps,
            pessimistic=_truncate(_Grid.from_dict(pess, _fixed(infinite_hi, bits, "c")), up=True),
            optimistic=_truncate(_Grid.from_dict(opt, _fixed(atoms.infinite_lo, bits, "f")), up=False),
        )


def _extra_bits(atoms: _Atoms, offset: Mpf) -> int:
    """Fractional bits beyond a probability's that a ``Q``-mass ``P e^{-(l - offset)}`` needs to keep
    the ``P``-mass of the highest finite loss ``l`` of ``atoms`` (8 to spare)."""
    highs = [upper(p.loss) for p in atoms.points]
    if atoms.table is not None:
        highs += [upper(x) for x in atoms.table.losses]
    top = max(highs, default=mp.zero) - offset
    return 8 + max(0, math.ceil(float(top) / math.log(2))) if mp.isfinite(top) else 8


def _default_spacing(atoms: _Atoms) -> float:
    """``2^⌊log2(10^-4 · range)⌋`` of the finite losses (a power of two: grids of similar
    mechanisms then coincide and can be composed)."""
    lows = [lower(p.loss) for p in atoms.points]
    highs = [upper(p.loss) for p in atoms.points]
    if atoms.table is not None:
        lows += [lower(x) for x in atoms.table.losses]
        highs += [upper(x) for x in atoms.table.losses]
    if not lows:
        return 1.0
    spread = float(max(highs) - min(lows))
    if not spread > 0:
        spread = max(1.0, float(max(abs(x) for x in highs)))
    return _power_of_two_below(_RELATIVE_SPACING * spread)


#: The relative error of ``ε`` that the optimistic side of a composition of lattice atoms may
#: reach before :func:`_refined_spacing` halves the default spacing (at most :data:`_REFINE` times).
_LOWER_END_RTOL = 1e-5
_REFINE = 3


def _refined_spacing(atoms: _Atoms, h: float, compositions: int) -> float:
    """``h`` halved (at most :data:`_REFINE` times) while ``√k·h·max(h, D)/(8s) > _LOWER_END_RTOL``.

    ``s`` is the standard deviation of one mechanism's loss and ``D`` the typical gap between its
    atoms. The optimistic side merges each atom with a piece of its neighbour to reach a grid
    point (:func:`_merged_blocks`), which loses about ``h·max(h, D)/4`` of the loss's variance
    per mechanism, and each coarsening of a long composition (:func:`_fit`) a little more; the
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


def _power_of_two_below(x: float) -> float:
    return 2.0 ** (math.frexp(x)[1] - 1)


def _single(
    pair: _Pair, spacing: float | None, dps: int, tables: dict[MixturePair, _CellTable] | None = None
) -> PrivacyLossDistribution:
    """The PLD of one pair: on its exact lattice when it has one and no spacing is asked."""
    bits = _bits(dps)
    if spacing is None and isinstance(pair, MixturePair) and not pair.lattice:
        spacing = _continuous_default_spacing(pair)
    return _from_atoms(_pair_atoms(pair, spacing, bits, dps, tables), spacing, dps)


#: A continuous pair's default spacing is ``2^⌊log2(s/_STEPS_PER_STD)⌋`` for the standard deviation
#: ``s`` of its loss. The discretization errors of both ends are second order, about ``(h/s)^2``
#: relative to the composed loss's spread whatever the number of compositions: 24 keeps ``ε``
#: of 10^4 Poisson-subsampled Gaussian releases (q = 0.01, σ = 1) within ``5·10^-4`` relative.
_STEPS_PER_STD = 24


def _continuous_default_spacing(pair: MixturePair) -> float:
    """``2^⌊log2(s/24)⌋`` for the standard deviation ``s`` of the pair's loss under ``P`` (float estimate)."""
    xa, xb = pair.window_float(-12 * math.log(10))
    xs = np.linspace(xa, xb, 100_001)
    weights = np.diff(np.exp(pair.log_tails_float(xs)[0]))
    return _std_spacing(weights, pair.loss_float((xs[1:] + xs[:-1]) / 2))


def _mixture_default_spacing(pair: MixturePair) -> float:
    """:func:`_continuous_default_spacing`, or for lattice mixtures the same rule from float PMFs."""
    if not pair.lattice:
        return _continuous_default_spacing(pair)
    p, q = pair.sides()
    mass = mp.mpf(10) ** -12
    ap, bp = p.window(mass)
    aq, bq = q.window(mass)
    xs = np.arange(min(ap, aq), max(bp, bq) + 1, dtype=np.float64)
    ps, qs = p.pmf(xs), q.pmf(xs)
    kept = (ps > 0) & (qs > 0)
    return _std_spacing(ps[kept], np.log(ps[kept]) - np.log(qs[kept]))


def _std_spacing(weights: NDArray[np.float64], losses: NDArray[np.float64]) -> float:
    """``2^⌊log2(s/24)⌋`` for the standard deviation ``s`` of ``losses`` under ``weights``."""
    total = float(np.sum(weights))
    mean = float(np.sum(weights * losses)) / total
    std = math.sqrt(max(0.0, float(np.sum(weights * (losses - mean) ** 2)) / total))
    return _power_of_two_below(std / _STEPS_PER_STD if std > 0 else 1.0)


# ---------------------------------------------------------------------------------------
# Ledgers: every event, both directions
# ---------------------------------------------------------------------------------------


def dominating_pairs(event: object, neighbouring: Neighbouring | str) -> dict[str, _Pair]:
    """The dominating pair of ``event`` for each direction of ``neighbouring``.

    Keys: ``"replace-one"`` under replace-one; ``"remove"`` and ``"add"`` under add-remove (the
    same pair for both when it is symmetric). See the module docstring for which events are
    held and why the others are refused.

    Raises
    ------
    UnsupportedEventError
        For an event without a certified dominating pair here.
    """
    relation = Neighbouring.parse(neighbouring)
    if isinstance(event, PoissonSampled | SampledWithoutReplacement):
        return dict(event.dominating_pairs(relation))
    if isinstance(event, PureDP | ApproxDP):
        if event.neighbouring is not relation:
            raise UnsupportedEventError(
                f"{event!r} is cited for the {event.neighbouring.value} relation and cannot be "
                f"accounted under {relation.value}"
            )
        pair: _Pair = _CitedPair(event.eps, event.dlt if isinstance(event, ApproxDP) else 0.0)
    elif isinstance(event, DistributedSum) and relation is Neighbouring.ADD_REMOVE:
        raise UnsupportedEventError(
            f"{event!r} under add-remove: removing a user also removes their noise share, so the "
            "pairs (X_n + k, X_{n-1}) have no single certified dominating pair and cannot be "
            "composed by PLD (a single release is answered exactly by the mechanism itself)"
        )
    elif isinstance(event, AdditiveNoise | DistributedSum):
        pair = _mechanism_pair(event)
    else:
        raise UnsupportedEventError(
            f"no privacy-loss distribution for {event!r}: the PLD route holds additive noise, "
            "distributed sums (replace-one), PureDP, ApproxDP and subsampled releases"
        )
    if relation is Neighbouring.REPLACE_ONE:
        return {"replace-one": pair}
    return {"remove": pair, "add": pair}


@dataclass(frozen=True)
class ComposedPLD:
    """A ledger composed by PLD: one composition per direction, answered by the worst.

    Built by :func:`compose_events`. Under add-remove every neighbouring pair of the composition
    is of one direction for all mechanisms (Zhu, Dong & Wang 2022), so ``δ(ε)`` is the larger of
    the two directions' and ``ε(δ)`` likewise.

    Attributes
    ----------
    neighbouring : Neighbouring
        The relation.
    directions : dict
        The composed :class:`PrivacyLossDistribution` of each direction (one entry when both
        directions coincide or under replace-one).
    gaussian_sigma : tuple of float, optional
        When the ledger is all Gaussian mechanisms: the enclosure ``(lo, hi)`` of the single
        equivalent σ at sensitivity 1 (:func:`gaussian_equivalent_sigma`), answered in closed form.
    """

    neighbouring: Neighbouring
    directions: dict[str, PrivacyLossDistribution]
    gaussian_sigma: tuple[float, float] | None = None

    def delta(self, epsilon: float) -> Enclosure:
        """``δ(ε)`` of the ledger, certified: the largest over the directions."""
        eps = v.nonnegative("epsilon", epsilon)
        if self.gaussian_sigma is not None:
            return _gaussian_delta(self.gaussian_sigma, eps)
        return _max_enclosure([pld.delta(eps) for pld in self.directions.values()])

    def epsilon(self, delta: float) -> Enclosure:
        """``ε(δ)`` of the ledger, certified: the largest over the directions."""
        d = v.open_unit("delta", delta)
        if self.gaussian_sigma is not None:
            return _gaussian_epsilon(self.gaussian_sigma, d)
        return _max_enclosure([pld.epsilon(d) for pld in self.directions.values()])


def _max_enclosure(enclosures: list[Enclosure]) -> Enclosure:
    return Enclosure(max(e.lo for e in enclosures), max(e.hi for e in enclosures))


def compose_events(
    items: Iterable[tuple[object, int]],
    neighbouring: Neighbouring | str,
    spacing: float | None = None,
    dps: int = DEFAULT_DPS,
    progress: Progress | None = None,
) -> ComposedPLD:
    """Compose a ledger of events by certified PLD convolution, per direction.

    Parameters
    ----------
    items : iterable of (event, count)
        Events and how often each ran (adaptively composed): an
        :class:`~accounting.mechanisms.AdditiveNoise` with Gaussian, Laplace or symmetric
        log-concave lattice noise; a :class:`~accounting.mechanisms.DistributedSum`
        (replace-one); a :class:`~accounting.mechanisms.PureDP` or
        :class:`~accounting.mechanisms.ApproxDP` (under the relation of its theorem); a
        :class:`~accounting.subsampling.PoissonSampled` or
        :class:`~accounting.subsampling.SampledWithoutReplacement` release.
    neighbouring : Neighbouring or str
        The relation the sensitivities refer to.
    spacing : float, optional
        A common grid spacing. By default each pair's exact lattice when they all share one
        (discrete Laplace, discrete Gaussian, cited guarantees of one ε), else the spacing
        chosen by :func:`default_spacing`.
    dps : int
        Working precision in decimal digits.
    progress : callable, optional
        ``progress(done, total)`` after each squaring of every composition (by default the
        current context's, :mod:`accounting.progress`).

    Returns
    -------
    ComposedPLD
        ``.epsilon(δ)`` and ``.delta(ε)`` as certified enclosures. A ledger of Gaussian
        mechanisms only is answered in closed form (:func:`gaussian_equivalent_sigma`).

    Raises
    ------
    UnsupportedEventError
        For an event without a certified dominating pair (see :func:`dominating_pairs`).
    """
    relation = Neighbouring.parse(neighbouring)
    entries = list(items)
    if not entries:
        raise ParameterError("items", entries, "at least one (event, count) pair")
    counted: list[tuple[object, int]] = []
    for i, item in enumerate(entries):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ParameterTypeError(f"items[{i}]", item, "an (event, count) pair")
        counted.append((item[0], v.integer(f"items[{i}] count", item[1], minimum=1)))
    h = None if spacing is None else v.positive("spacing", spacing)
    dps = v.dps("dps", dps)
    if all(isinstance(e, AdditiveNoise) and isinstance(e.noise, Gaussian) for e, _ in counted):
        sigmas = [(e.noise.sigma, e.sensitivity, k) for e, k in counted]  # type: ignore[attr-defined]
        return ComposedPLD(relation, {}, gaussian_equivalent_sigma(sigmas))
    per_direction: dict[str, list[tuple[_Pair, int]]] = {}
    for event, count in counted:
        for direction, pair in dominating_pairs(event, relation).items():
            per_direction.setdefault(direction, []).append((pair, count))
    pairs = [pair for listed in per_direction.values() for pair, _ in listed]
    if h is None:
        h = default_spacing(pairs, dps, sum(count for _, count in counted))
    cache: dict[_Pair, PrivacyLossDistribution] = {}
    tables: dict[MixturePair, _CellTable] = {}
    directions: dict[str, PrivacyLossDistribution] = {}
    done: dict[tuple[tuple[_Pair, int], ...], PrivacyLossDistribution] = {}
    keys = {tuple(sorted(_merge(listed).items(), key=repr)) for listed in per_direction.values()}
    steps = sum(count.bit_length() for key in keys for _, count in key)
    finished = 0
    outer = progress if progress is not None else current()

    def step(done: int, total: int) -> None:
        report(finished + done, steps, outer)

    for listed in per_direction.values():
        for count in _merge(listed).values():
            if count > MAX_COMPOSITIONS:
                raise UnsupportedError(
                    f"compositions={count} of one event are more than the PLD route squares out "
                    f"(at most {MAX_COMPOSITIONS:.0e}: one squaring of a grid per binary digit of the "
                    "count, about a third of a second each); the routes 'rdp', 'zcdp', 'pure' and "
                    "'published' compose any count at once"
                )
    for direction, listed in per_direction.items():
        key = tuple(sorted(_merge(listed).items(), key=repr))
        if key in done:  # both directions are the same ledger of pairs: compose once
            continue
        result: PrivacyLossDistribution | None = None
        for pair, count in key:
            if pair not in cache:
                cache[pair] = _single(pair, h, dps, tables)
            with reporting(None):
                part = cache[pair].self_compose(count, step)
            finished += count.bit_length()
            result = part if result is None else result.compose(part)
        assert result is not None
        done[key] = result
        directions[direction] = result
    return ComposedPLD(relation, directions)


def _merge(listed: list[tuple[_Pair, int]]) -> dict[_Pair, int]:
    merged: dict[_Pair, int] = {}
    for pair, count in listed:
        merged[pair] = merged.get(pair, 0) + count
    return merged


def default_spacing(pairs: Sequence[_Pair], dps: int = DEFAULT_DPS, compositions: int = 1) -> float | None:
    """The grid spacing :func:`compose_events` uses when none is given (``None``: exact lattices).

    ``None`` when every pair has an exact lattice with the same spacing (discrete Laplace,
    discrete Gaussian, cited guarantees of one ε): the composition is then exact up to the
    rounding of probabilities. Otherwise the coarsest of the pairs' own defaults (a finer grid
    would only refine the other pairs, at a cost): ``2^⌊log2(s/24)⌋`` for the standard deviation
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
            candidates.append(_mixture_default_spacing(pair))
        else:
            atoms = _pair_atoms(pair, None, _bits(dps), dps)
            candidates.append(_refined_spacing(atoms, _default_spacing(atoms), compositions))
    h = max(candidates)
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


def _piles(pair: _Pair) -> tuple[Mpf, Mpf] | None:
    """Lower bounds of the losses of the two heavy end atoms of a pair, if it has them.

    The continuous Laplace (flat below and above its components: ``P``-masses ``e^{-Δ/b}/2`` and
    ``1/2``), a cited guarantee (``±ε``) and the discrete Laplace (``±Δ/b``).
    """
    with precision(20):
        if isinstance(pair, _CitedPair):
            return (-mp.mpf(pair.eps), mp.mpf(pair.eps)) if pair.eps > 0 else None
        if not pair.lattice and isinstance(pair.noise, Laplace):
            bottom, top = pair.loss_limits()
            return None if bottom is None or top is None else (lower(bottom), lower(top))
        shift = pair.shift_pair
        if shift is not None and isinstance(shift[0], DiscreteLaplace):
            lattice = _exact_lattice(*shift)
            assert lattice is not None
            return lower(lattice[0]), lower(lattice[0] + shift[1] * lattice[1])
    return None


def _pair_lattice(pair: _Pair, dps: int) -> tuple[Mpf, Mpf] | None:
    """The exact lattice spacing of a pair, as the PLD would hold it (``None`` off a lattice).

    Computed as :func:`_cited_atoms` and :func:`_exact_lattice` compute it at ``dps``, so that
    equal enclosures here are equal spacings in :meth:`PrivacyLossDistribution.compose`.
    """
    with precision(dps):
        if isinstance(pair, _CitedPair):
            if pair.eps == 0:
                return None
            h = 2 * iv.mpf(pair.eps)
            return (lower(h), upper(h))
        shift = pair.shift_pair
        if shift is None:
            return None
        lattice = _exact_lattice(*shift)
        if lattice is None:
            return None
        return (lower(lattice[1]), upper(lattice[1]))


def compose_mechanisms(
    mechanisms_with_counts: Iterable[tuple[Mechanism, int]],
    spacing: float | None = None,
    dps: int = DEFAULT_DPS,
) -> PrivacyLossDistribution:
    """The PLD of running each lattice mechanism its count of times (independent noise).

    Kept for the callers of the single symmetric pair ``(X + Δ, X)`` (the same under both
    relations for additive noise); :func:`compose_events` is the general entry point.

    Parameters
    ----------
    mechanisms_with_counts : iterable of (Mechanism, int)
        Lattice mechanisms (see :meth:`PrivacyLossDistribution.from_mechanism`) and counts ``>= 1``.
    spacing : float, optional
        A common grid spacing. By default each mechanism's own grid when they all coincide
        (e.g. copies of one discrete Laplace: exact), else ``2^⌊log2(10^-4 · r)⌋`` for the
        widest single-mechanism loss range ``r``, for all of them.
    dps : int
        Working precision in decimal digits.
    """
    items = list(mechanisms_with_counts)
    if not items:
        raise ParameterError("mechanisms_with_counts", items, "at least one (mechanism, count) pair")
    pairs: list[tuple[_Pair, int]] = []
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ParameterTypeError(f"mechanisms_with_counts[{i}]", item, "a (mechanism, count) pair")
        noise, shift = _lattice_pair(item[0])
        count = v.integer(f"mechanisms_with_counts[{i}] count", item[1], minimum=1)
        pairs.append((MixturePair(noise, Fraction(1), shift), count))
    h = None if spacing is None else v.positive("spacing", spacing)
    dps = v.dps("dps", dps)
    plds = [_single(pair, h, dps) for pair, _ in pairs]
    if len({(p.spacing.lo, p.spacing.hi) for p in plds}) > 1:
        # The widest loss range sets the scale of the composition (a narrower one just spans
        # fewer grid points).
        common = max(_rounded_default(p) for p in plds)
        plds = [_single(pair, common, dps) for pair, _ in pairs]
    result = plds[0].self_compose(pairs[0][1])
    for pld, (_, count) in zip(plds[1:], pairs[1:], strict=True):
        result = result.compose(pld.self_compose(count))
    return result


def _rounded_default(pld: PrivacyLossDistribution) -> float:
    """The default rounded spacing of a single mechanism's PLD (from its loss range)."""
    lo, hi = pld.loss_range
    spread = hi - lo if hi > lo else max(1.0, abs(hi))
    return _power_of_two_below(_RELATIVE_SPACING * spread)


# ---------------------------------------------------------------------------------------
# The Gaussian closed form
# ---------------------------------------------------------------------------------------


def gaussian_equivalent_sigma(
    items: Iterable[tuple[float | Fraction, float | Fraction, int]],
) -> tuple[float, float]:
    """The σ of the one Gaussian mechanism (sensitivity 1) equal to a ledger of Gaussian mechanisms.

    The privacy loss of ``N(0, σ^2)`` with ℓ2 sensitivity ``Δ`` is ``N(μ, 2μ)`` with
    ``μ = Δ^2/(2σ^2)``; losses add, so ``k_i`` runs of ``(σ_i, Δ_i)`` compose to the Gaussian
    mechanism with ``1/σ_eff^2 = Σ k_i Δ_i^2/σ_i^2`` (Dong, Roth & Su 2019, Gaussian DP,
    Corollary 3.3: ``μ_i``-GDP compose to ``√(Σ μ_i^2)``-GDP).

    Parameters
    ----------
    items : iterable of (sigma, sensitivity, count)
        Each ``σ > 0``, ``Δ > 0`` and ``count >= 1``.

    Returns
    -------
    tuple of float
        ``(lo, hi)``: floats with ``lo <= σ_eff <= hi`` (``lo`` is the one to use for an upper
        bound on ε or δ: less noise is pessimistic).
    """
    listed = list(items)
    if not listed:
        raise ParameterError("items", listed, "at least one (sigma, sensitivity, count)")
    with precision(30):
        total = iv.mpf(0)
        for i, item in enumerate(listed):
            if not (isinstance(item, tuple) and len(item) == 3):
                raise ParameterTypeError(f"items[{i}]", item, "a (sigma, sensitivity, count) triple")
            sigma, sensitivity, count = item
            v.positive(f"items[{i}] sigma", sigma)
            v.positive(f"items[{i}] sensitivity", sensitivity)
            k = v.integer(f"items[{i}] count", count, minimum=1)
            total += k * (to_interval(sensitivity) / to_interval(sigma)) ** 2
        s = 1 / iv.sqrt(total)
        return float_down(lower(s)), float_up(upper(s))


def _gaussian_epsilon(sigma: tuple[float, float], delta: float) -> Enclosure:
    """``ε(δ)`` of the Gaussian mechanism with σ in ``[lo, hi]`` and sensitivity 1 (Balle–Wang Thm 8).

    The upper end is :func:`accounting.bounds.gaussian_epsilon_analytic` at ``σ_lo`` (the smallest
    float whose ``δ`` is at most the target, so at least the exact ε). The lower end is
    :func:`_gaussian_epsilon_below` at ``σ_hi``: a float *evaluated* to have ``δ`` above the
    target, rather than two floats below the upper search's answer, which assumed ``δ`` moves by
    more than the search's margin across two floats of ε (not so where ``δ`` is flat in ε).
    """
    s_lo, s_hi = sigma
    high = bounds.gaussian_epsilon_analytic(s_lo, delta, 1.0) if s_lo > 0 else math.inf
    return Enclosure(mp.mpf(_gaussian_epsilon_below(s_hi, delta)), mp.mpf(high))


#: Relative margin by which the Balle–Wang δ, evaluated at 30+ significant digits, must exceed
#: the target for a float ε to be a certified lower end (far above the evaluation error).
_GAUSSIAN_MARGIN = mp.mpf("1e-25")


def _gaussian_epsilon_below(sigma: float, delta: float) -> float:
    """The largest float ε with ``δ(ε) >= δ (1 + 1e-25)`` (Balle–Wang, evaluated at 30+ digits),
    so that the exact ``ε(δ)`` lies above it; 0 when even ``δ(0)`` is below that.

    Found by :func:`accounting.search.largest` below the upper end's answer (which has
    ``δ <= δ(1 - 1e-25)``). A ``σ`` so small that no finite float ε reaches the target gives the
    largest finite float.
    """
    upper_end = bounds.gaussian_epsilon_analytic(sigma, delta, 1.0)
    if upper_end == 0:
        return 0.0
    if math.isinf(upper_end):
        return sys.float_info.max
    with mp.workdps(50):
        target = mp.mpf(delta) * (1 + _GAUSSIAN_MARGIN)

    def above(eps: float) -> bool:
        value, dps = bounds._gaussian_delta_mp(sigma, eps, 1.0)
        with mp.workdps(dps):
            return bool(value >= target)

    if not above(0.0):
        return 0.0
    return largest(above, 0.0, upper_end)


def _gaussian_delta(sigma: tuple[float, float], epsilon: float) -> Enclosure:
    """``δ(ε)`` of the Gaussian mechanism with σ in ``[lo, hi]`` and sensitivity 1 (Balle–Wang Thm 8)."""
    s_lo, s_hi = sigma
    high = bounds.gaussian_delta_analytic(s_lo, epsilon, 1.0) if s_lo > 0 else 1.0
    low = bounds.gaussian_delta_analytic(s_hi, epsilon, 1.0)
    return Enclosure.from_rounded_up(min(high, 1.0), low)


def gaussian_composition_epsilon(
    sigma: float | Fraction, sensitivity: float | Fraction, count: int, delta: float
) -> Enclosure:
    """``ε(δ)`` of ``count`` Gaussian mechanisms ``N(0, σ^2)`` with ℓ2 sensitivity ``Δ``, exactly.

    ``k`` of them compose to the Gaussian mechanism with ``σ/(Δ√k)`` at sensitivity 1
    (:func:`gaussian_equivalent_sigma`), whose ``ε(δ)`` is Balle–Wang 2018 Theorem 8
    (:func:`accounting.bounds.gaussian_epsilon_analytic`). The effective σ is rounded *down*
    for the upper end (less noise, larger ε) and up for the lower end.
    """
    v.positive("sigma", sigma)
    v.positive("sensitivity", sensitivity)
    k = v.integer("count", count, minimum=1)
    dl = v.open_unit("delta", delta)
    return _gaussian_epsilon(gaussian_equivalent_sigma([(sigma, sensitivity, k)]), dl)


def gaussian_composition_delta(
    sigma: float | Fraction, sensitivity: float | Fraction, count: int, epsilon: float
) -> Enclosure:
    """``δ(ε)`` of ``count`` Gaussian mechanisms (see :func:`gaussian_composition_epsilon`)."""
    v.positive("sigma", sigma)
    v.positive("sensitivity", sensitivity)
    k = v.integer("count", count, minimum=1)
    eps = v.nonnegative("epsilon", epsilon)
    return _gaussian_delta(gaussian_equivalent_sigma([(sigma, sensitivity, k)]), eps)
