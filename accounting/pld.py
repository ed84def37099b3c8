"""Exact composition of privacy-loss distributions (PLDs) of lattice mechanisms, certified.

The privacy loss of a pair ``(P, Q)`` is ``L(x) = ln(P(x)/Q(x))`` with ``x ~ P`` (``+inf`` where
``Q(x) = 0``), and

    δ(ε) = E_P[(1 - e^{ε - L})_+]                          (hockey-stick divergence)

(Meiser–Mohammadi 2018; Sommer–Meiser–Mohammadi 2019). The losses of independent mechanisms add,
so a composition is a convolution of PLDs. For ``AdditiveNoise(X, Δ)`` with symmetric,
log-concave lattice noise the single pair ``(X + Δ, X)`` dominates every neighbouring pair in
both directions, for every ``ε`` in ``R``: the likelihood ratio is monotone, so the optimal
(Neyman–Pearson) tests are thresholds and the trade-off curve of ``(X + k, X)`` lies above that
of ``(X + Δ, X)`` for ``|k| <= Δ``; and ``(X, X + Δ)`` is ``(X + Δ, X)`` mapped by
``x -> Δ - x``. That is what adaptive composition needs (Zhu–Dong–Wang 2022, dominating
pairs). Asymmetric noise has two worst pairs and no single dominating one: it is refused
(:class:`~accounting.errors.UnsupportedError`).

**Representation.** Losses live on a grid ``offset + j·h`` (integer ``j``); probabilities are
exact fixed-point integers with scale ``2^bits``. Every PLD is a *pair* of grids:

* the **pessimistic** one: probabilities' upper ends rounded up, an atom at ``+inf`` that also
  absorbs the ``P``-mass outside the computed window (from the certified tail bounds), and each
  loss that is not on the grid *split* between its two neighbouring grid points so that both
  the ``P``-mass and the ``Q``-mass (``Σ p e^{-l}``) are preserved — "connect the dots"
  (Doroshenko–Ghazi–Kamath–Kumar–Manurangsi 2022). The split pair has the true pair as a
  post-processing (merging the two atoms back), so it dominates it. Its error is local:
  ``(1 - e^{ε-l})_+`` is linear in ``e^{-l}`` away from ``l = ε``, so δ moves only where ``ε``
  minus the other mechanisms' losses falls inside a split cell (for one mechanism δ(ε) is
  exact unless an atom shares ``ε``'s cell; for spread-out composed losses the error is second
  order in ``h``). Mass is then moved to higher losses only (a larger share to the upper
  neighbour, truncated top tails to ``+inf``, truncated bottom tails to the lowest kept point).
* the **optimistic** one: probabilities' lower ends rounded down, losses rounded *down* to the
  grid, window tails dropped. Each loss moves by less than ``h``, so a ``k``-fold composition
  is low by up to ``k·h`` in loss: this end is first order in ``h`` and sets the width of the
  enclosure (no merge of the true atoms lands them on a grid in general).

Since ``(1 - e^{ε-l})_+`` is nonnegative, nondecreasing in ``l`` and convex in ``e^{-l}``, and
since these orders are preserved by convolution (for every ``ε`` at once, which is what a
composition needs: the other factors shift ``ε``), the pessimistic composition's ``δ(ε)`` is
a certified upper bound and the optimistic one's a certified lower bound: an
:class:`~accounting._certified.Enclosure`.

**Exact grids.** When the loss is affine in the output the grid represents it exactly and the
two grids differ only by the rounding of probabilities (about ``10^-dps``):

* discrete Laplace ``Lap_Z(b)``: ``L(y) = (|y + Δ| - |y|)/b`` for ``y = x - Δ ~ X`` takes the
  values ``-Δ/b, (2-Δ)/b, ..., Δ/b``: offset ``-Δ/b``, spacing ``2/b``, ``j = clip(y + Δ, 0, Δ)``;
* discrete Gaussian ``N_Z(0, σ^2)``: ``L(y) = (2yΔ + Δ^2)/(2σ^2)``: offset ``Δ^2/(2σ^2)``,
  spacing ``Δ/σ^2``, ``j = y``.

The discrete Laplace's ``Δ + 1`` atoms are in closed form (no window, no tail). Other lattice
noises (Skellam, sums of discrete Gaussians, centred binomial) get a grid of spacing
``2^⌊log2(10^-4 · loss range)⌋`` (or the ``spacing`` given) and an enclosure whose width
shrinks with ``h``. For 100 Skellam(variance 100) mechanisms at the default ``h = 2^-13``,
``ε(10^-5)`` is enclosed in ``[4.36953, 4.37609]``; the upper end moves by ``5·10^-7`` when
``h`` is divided by 4, the lower end by ``5·10^-3``.

**Composition** is exact integer convolution by Kronecker substitution (one big-integer
product, done by GMP through :mod:`mpmath`'s backend), rounded down for the optimistic grid
and up for the pessimistic one; ``k``-fold by repeated squaring.

The continuous Gaussian composes in closed form (:func:`gaussian_composition_epsilon`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import mpmath.libmp
from mpmath import iv, mp

from accounting import _validate as v
from accounting import bounds
from accounting._certified import (
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
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism
from accounting.noise import (
    DEFAULT_DPS,
    ContinuousNoise,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    LatticeNoise,
)

__all__ = [
    "PrivacyLossDistribution",
    "compose_mechanisms",
    "gaussian_composition_delta",
    "gaussian_composition_epsilon",
]

#: Fractional bits carried by the suffix sums ``Σ m_j e^{-(j-i)h}`` beyond the probabilities' own.
_GUARD_BITS = 32

#: Default grid spacing for losses that are not on a lattice, relative to the loss range.
_RELATIVE_SPACING = 1e-4

#: Extra decimal digits of the interval arithmetic that evaluates δ and ε on a grid.
_EXTRA_DPS = 20

# Big-integer products go through GMP when mpmath runs on gmpy2 (its default backend here):
# Python's own Karatsuba is about 100x slower on the megabit products of a long composition.
_MPZ = mpmath.libmp.MPZ


def _bits(dps: int) -> int:
    """Fixed-point bits of the probabilities: ``dps`` decimal digits, 4 guard digits, and 16 bits
    for the rounding errors of up to ``2^16`` grid points adding up (each rounding is one unit)."""
    return math.ceil((dps + 4) * math.log2(10)) + 16


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


def _convolve(a: tuple[int, ...], b: tuple[int, ...]) -> list[int]:
    """Exact convolution of nonnegative integer sequences by Kronecker substitution.

    The same algorithm as :func:`accounting.noise._convolve_int`, with the product done by
    GMP's FFT multiplication (``mpmath.libmp.MPZ``) and a squaring when ``a is b``.
    """
    if not a or not b:
        return []
    width = max(a).bit_length() + max(b).bit_length() + min(len(a), len(b)).bit_length() + 1
    nbytes = (width + 7) // 8

    def pack(xs: tuple[int, ...]) -> object:
        return _MPZ(int.from_bytes(b"".join(x.to_bytes(nbytes, "little") for x in xs), "little"))

    pa = pack(a)
    product = pa * pa if a is b else pa * pack(b)  # type: ignore[operator]
    n = len(a) + len(b) - 1
    raw = int(product).to_bytes(n * nbytes, "little")
    return [int.from_bytes(raw[i * nbytes : (i + 1) * nbytes], "little") for i in range(n)]


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


def _compose_grids(a: _Grid, b: _Grid, bits: int, up: bool) -> _Grid:
    """The product measure of two sides: finite losses convolve, ``+inf`` absorbs the rest.

    The mass at ``+inf`` is ``a_inf·(B_fin + b_inf) + A_fin·b_inf`` (the measure product; it is
    ``1 - (1 - a_inf)(1 - b_inf)`` when both totals are 1). Rounded up for the pessimistic side
    (``up``), down for the optimistic one, then truncated (:func:`_truncate`).
    """
    product = _convolve(a.masses, b.masses)
    masses = tuple(_shift_down(x, bits, up) for x in product)
    a_fin, b_fin = sum(a.masses), sum(b.masses)
    infinite = _shift_down(a.infinite * (b_fin + b.infinite) + a_fin * b.infinite, bits, up)
    start = a.start + b.start if masses else 0
    return _truncate(_Grid(start, masses, infinite), up)


def _truncate(grid: _Grid, up: bool) -> _Grid:
    """Cut the tails whose mass is at most ``len(masses)`` units (the rounding error's size).

    Pessimistic (``up``): the top tail goes to ``+inf`` and the bottom tail to the lowest kept
    point (both move mass to higher losses). Optimistic: both are dropped.
    """
    masses = grid.masses
    budget = len(masses)
    top = len(masses)
    cut_top = 0
    while top > 0 and cut_top + masses[top - 1] <= budget:
        top -= 1
        cut_top += masses[top]
    bottom = 0
    cut_bottom = 0
    while bottom < top - 1 and cut_bottom + masses[bottom] <= budget:
        cut_bottom += masses[bottom]
        bottom += 1
    if bottom == 0 and top == len(masses):
        return grid
    kept = list(masses[bottom:top])
    infinite = grid.infinite
    if up:
        infinite += cut_top
        if kept:
            kept[0] += cut_bottom
    if not kept:
        return _Grid(0, (), infinite)
    return _Grid(grid.start + bottom, tuple(kept), infinite)


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
    :class:`~accounting._certified.Enclosure` whose lower end comes from the optimistic grid
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
        """The PLD of one run of a lattice mechanism.

        Parameters
        ----------
        mechanism : AdditiveNoise or DistributedSum
            With symmetric, log-concave lattice noise (the pair ``(X + Δ, X)`` then dominates).
        spacing : float, optional
            The grid spacing ``h > 0``. By default the exact lattice of the discrete Laplace or
            discrete Gaussian loss, and ``2^⌊log2(10^-4 · loss range)⌋`` for other noise.
            Mechanisms must share the spacing to be composed.
        dps : int
            Working precision in decimal digits (probabilities carry about ``dps + 4``).

        Raises
        ------
        UnsupportedError
            For continuous noise (see :func:`gaussian_composition_epsilon`) and for noise
            that is not symmetric or not log-concave (no single dominating pair).
        """
        noise, shift = _lattice_pair(mechanism)
        h = None if spacing is None else v.positive("spacing", spacing)
        dps = v.dps("dps", dps)
        return _single(noise, shift, h, dps)

    # -- composition ----------------------------------------------------------------------
    def compose(self, other: PrivacyLossDistribution) -> PrivacyLossDistribution:
        """The PLD of running both mechanisms (independent noise): losses add.

        Raises
        ------
        ParameterError
            When the two grids have different spacings.
        """
        if not isinstance(other, PrivacyLossDistribution):
            raise ParameterTypeError("other", other, "a PrivacyLossDistribution")
        if other.spacing != self.spacing:
            raise ParameterError(
                "other",
                f"a PLD with spacing {other.spacing}",
                f"a PLD with the same spacing {self.spacing} (build both with the same `spacing`)",
            )
        bits = min(self.bits, other.bits)
        sides = []
        for up in (True, False):
            a = (self.pessimistic if up else self.optimistic).rescaled(self.bits - bits, up)
            b = (
                a
                if other is self
                else (other.pessimistic if up else other.optimistic).rescaled(other.bits - bits, up)
            )
            sides.append(_compose_grids(a, b, bits, up))
        dps = min(self.dps, other.dps)
        with precision(dps + _EXTRA_DPS):
            offset = Enclosure.from_interval(_iv(self.offset) + _iv(other.offset))
        return PrivacyLossDistribution(
            spacing=self.spacing,
            offset=offset,
            exact_grid=self.exact_grid and other.exact_grid,
            bits=bits,
            dps=dps,
            pessimistic=sides[0],
            optimistic=sides[1],
        )

    def self_compose(self, count: int) -> PrivacyLossDistribution:
        """The ``count``-fold composition, by repeated squaring."""
        k = v.integer("count", count, minimum=1)
        result: PrivacyLossDistribution | None = None
        base = self
        while True:
            if k & 1:
                result = base if result is None else result.compose(base)
            k >>= 1
            if not k:
                break
            base = base.compose(base)
        assert result is not None
        return result

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
        nudge = mp.ldexp(max(mp.one, abs(candidate)), -iv.prec + 16)
        for _ in range(24):
            if candidate >= fallback:
                break
            if self._delta_side(candidate, pessimistic=True) <= dm:
                return candidate
            candidate += nudge
            nudge *= 4
        return max(mp.zero, fallback)

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
# The PLD of one mechanism
# ---------------------------------------------------------------------------------------


def _lattice_pair(mechanism: object) -> tuple[LatticeNoise, int]:
    """The noise ``X`` and shift ``Δ`` of the dominating pair ``(X + Δ, X)``."""
    if isinstance(mechanism, DistributedSum):
        mechanism = mechanism.mechanism
    if isinstance(mechanism, Mechanism) and not isinstance(mechanism, AdditiveNoise):
        raise UnsupportedError(f"no privacy-loss distribution for {mechanism!r}")
    if not isinstance(mechanism, AdditiveNoise):
        raise ParameterTypeError("mechanism", mechanism, "an AdditiveNoise or DistributedSum")
    noise = mechanism.noise
    if isinstance(noise, Gaussian):
        raise UnsupportedError(
            "the Gaussian mechanism composes in closed form: use gaussian_composition_epsilon"
        )
    if isinstance(noise, ContinuousNoise) or not isinstance(noise, LatticeNoise):
        raise UnsupportedError(f"no privacy-loss distribution for continuous noise {noise!r}")
    if not (noise.symmetric and noise.log_concave):
        raise UnsupportedError(
            f"noise {noise!r} is not symmetric and log-concave: a single dominating pair is needed "
            "for adaptive composition, and (X + Δ, X) is one only for such noise"
        )
    return noise, int(mechanism.sensitivity)


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


@dataclass(frozen=True)
class _Atoms:
    """The loss atoms of one pair: ``(j, P-mass, loss)`` with ``j`` the exact lattice index
    (``None`` off a lattice), and the ``P``-mass at ``+inf`` (``infinite_hi`` also bounds the
    mass outside the window)."""

    finite: list[tuple[int | None, Interval, Interval]]
    infinite_hi: Mpf
    infinite_lo: Mpf
    lattice: tuple[Interval, Interval] | None


def _single(noise: LatticeNoise, shift: int, spacing: float | None, dps: int) -> PrivacyLossDistribution:
    """The PLD of ``(X + Δ, X)``: on its exact lattice, or split onto a rounded grid."""
    bits = _bits(dps)
    atoms = _discrete_laplace_atoms(noise, shift, dps) if isinstance(noise, DiscreteLaplace) else None
    if atoms is None:
        atoms = _window_atoms(noise, shift, bits, dps)
    with precision(dps):
        pess: dict[int, int] = {}
        opt: dict[int, int] = {}
        exact = spacing is None and atoms.lattice is not None
        if exact:
            assert atoms.lattice is not None
            offset, h = atoms.lattice
            for j, p, _ in atoms.finite:
                assert j is not None
                pess[j] = pess.get(j, 0) + _fixed(upper(p), bits, "c")
                opt[j] = opt.get(j, 0) + _fixed(lower(p), bits, "f")
            spacing_e = Enclosure.from_interval(h)
            offset_e = Enclosure.from_interval(offset)
        else:
            h_float = spacing if spacing is not None else _default_spacing([x for _, _, x in atoms.finite])
            for _, p, loss in atoms.finite:
                _split(
                    loss, iv.mpf(h_float), _fixed(upper(p), bits, "c"), _fixed(lower(p), bits, "f"), pess, opt
                )
            spacing_e = Enclosure.exact(h_float)
            offset_e = Enclosure.exact(0)
        return PrivacyLossDistribution(
            spacing=spacing_e,
            offset=offset_e,
            exact_grid=exact,
            bits=bits,
            dps=dps,
            pessimistic=_truncate(_Grid.from_dict(pess, _fixed(atoms.infinite_hi, bits, "c")), up=True),
            optimistic=_truncate(_Grid.from_dict(opt, _fixed(atoms.infinite_lo, bits, "f")), up=False),
        )


def _discrete_laplace_atoms(noise: DiscreteLaplace, shift: int, dps: int) -> _Atoms:
    """The ``Δ + 1`` loss atoms of ``Lap_Z`` in closed form: no window, no tail (Fact 3 of the spec).

    With ``q = e^{-1/b}`` (the decay itself when given) and ``y = x - Δ ~ X``: ``j = 0`` carries
    ``P(X <= -Δ) = q^Δ/(1+q)``, ``j = Δ`` carries ``P(X >= 0) = 1/(1+q)``, and ``j = y + Δ``
    for ``-Δ < y < 0`` carries ``P(X = y) = (1-q)/(1+q) q^{-y}``; the parts sum to 1.
    """
    with precision(dps):
        lattice = _exact_lattice(noise, shift)
        assert lattice is not None
        offset, h = lattice
        q = to_interval(noise.decay) if noise.decay is not None else iv.exp(-1 / to_interval(noise.scale))
        masses = {0: q**shift / (1 + q), shift: 1 / (1 + q)}
        for y in range(-shift + 1, 0):
            masses[y + shift] = (1 - q) / (1 + q) * q ** (-y)
        finite: list[tuple[int | None, Interval, Interval]] = [
            (j, m, offset + j * h) for j, m in sorted(masses.items())
        ]
        return _Atoms(finite, mp.zero, mp.zero, lattice)


def _window_atoms(noise: LatticeNoise, shift: int, bits: int, dps: int) -> _Atoms:
    """Loss atoms from the certified PMF table over a window whose tails hold at most ``2^-bits``.

    On an exact lattice (:func:`_exact_lattice`) each loss is checked to contain its lattice point.
    """
    a, b = noise.window(mp.ldexp(1, -bits), dps)
    table = noise.pmf_intervals(a, b + shift, dps)
    with precision(dps):
        inf_hi = iv.mpf(noise.cdf_bound(a - 1, dps)) + iv.mpf(noise.sf_bound(b + 1, dps))
        inf_lo = iv.mpf(0)
        lattice = _exact_lattice(noise, shift)
        finite: list[tuple[int | None, Interval, Interval]] = []
        for y in range(a, b + 1):
            p, q = table[y - a], table[y + shift - a]
            if upper(p) == 0:
                continue
            if not lower(q) > 0:  # P-mass where Q may vanish: infinite loss (pessimistically)
                inf_hi += iv.mpf(upper(p))
                if upper(q) == 0:
                    inf_lo += iv.mpf(lower(p))
                continue
            loss = iv.log(p) - iv.log(q)
            j = None
            if lattice is not None:
                j = y  # the discrete Gaussian: L(y) = Δ^2/(2σ^2) + y Δ/σ^2
                on_grid = lattice[0] + j * lattice[1]
                if upper(on_grid) < lower(loss) or upper(loss) < lower(on_grid):
                    raise AssertionError(f"loss at y={y} is off its exact lattice point j={j}")
            finite.append((j, p, loss))
        return _Atoms(finite, upper(inf_hi), lower(inf_lo), lattice)


def _default_spacing(losses: list[Interval]) -> float:
    """``2^⌊log2(10^-4 · range)⌋`` of the finite losses (a power of two: grids of similar
    mechanisms then coincide and can be composed)."""
    if not losses:
        return 1.0
    spread = float(max(upper(x) for x in losses) - min(lower(x) for x in losses))
    if not spread > 0:
        spread = max(1.0, float(max(abs(upper(x)) for x in losses)))
    return 2.0 ** (math.frexp(_RELATIVE_SPACING * spread)[1] - 1)


def _split(
    loss: Interval, h: Interval, p_up: int, p_down: int, pess: dict[int, int], opt: dict[int, int]
) -> None:
    """Put one loss on a rounded grid of exact spacing ``h``.

    Optimistic: all of ``p_down`` at ``⌊l/h⌋``. Pessimistic: ``p_up`` split between
    ``j_lo = ⌊l/h⌋`` and ``j_hi = ⌈l/h⌉`` preserving ``Σ p`` and ``Σ p e^{-l}`` (connect the
    dots): the share at ``j_hi`` is ``w = (1 - e^{-(l - j_lo h)})/(1 - e^{-(j_hi - j_lo) h})``,
    rounded up (moving the rounding to the higher loss keeps it pessimistic).
    """
    ratio = loss / h
    j_lo = int(mp.floor(lower(ratio)))
    j_hi = int(mp.ceil(upper(ratio)))
    opt[j_lo] = opt.get(j_lo, 0) + p_down
    if j_lo == j_hi:
        pess[j_lo] = pess.get(j_lo, 0) + p_up
        return
    w = (1 - iv.exp(-(loss - j_lo * h))) / (1 - iv.exp(-(j_hi - j_lo) * h))
    share = min(p_up, _scale_int(p_up, min(mp.one, max(mp.zero, upper(w))), "c"))
    pess[j_hi] = pess.get(j_hi, 0) + share
    pess[j_lo] = pess.get(j_lo, 0) + p_up - share


# ---------------------------------------------------------------------------------------
# Heterogeneous compositions and the Gaussian baseline
# ---------------------------------------------------------------------------------------


def compose_mechanisms(
    mechanisms_with_counts: Iterable[tuple[Mechanism, int]],
    spacing: float | None = None,
    dps: int = DEFAULT_DPS,
) -> PrivacyLossDistribution:
    """The PLD of running each mechanism its count of times (independent noise).

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
    pairs = []
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ParameterTypeError(f"mechanisms_with_counts[{i}]", item, "a (mechanism, count) pair")
        pairs.append(
            (_lattice_pair(item[0]), v.integer(f"mechanisms_with_counts[{i}] count", item[1], minimum=1))
        )
    h = None if spacing is None else v.positive("spacing", spacing)
    dps = v.dps("dps", dps)
    plds = [_single(noise, shift, h, dps) for (noise, shift), _ in pairs]
    if len({(p.spacing.lo, p.spacing.hi) for p in plds}) > 1:
        # The widest loss range sets the scale of the composition (a narrower one just spans
        # fewer grid points).
        common = max(_rounded_default(p) for p in plds)
        plds = [_single(noise, shift, common, dps) for (noise, shift), _ in pairs]
    result = plds[0].self_compose(pairs[0][1])
    for pld, (_, count) in zip(plds[1:], pairs[1:], strict=True):
        result = result.compose(pld.self_compose(count))
    return result


def _rounded_default(pld: PrivacyLossDistribution) -> float:
    """The default rounded spacing of a single mechanism's PLD (from its loss range)."""
    lo, hi = pld.loss_range
    spread = hi - lo if hi > lo else max(1.0, abs(hi))
    return 2.0 ** (math.frexp(_RELATIVE_SPACING * spread)[1] - 1)


def _gaussian_sigma(sigma: float, count: int) -> tuple[float, float]:
    """Floats ``lo <= σ/√count <= hi`` (outward rounding)."""
    with precision(30):
        s = iv.mpf(sigma) / iv.sqrt(iv.mpf(count))
        return float_down(lower(s)), float_up(upper(s))


def gaussian_composition_epsilon(sigma: float, sensitivity: float, count: int, delta: float) -> Enclosure:
    """``ε(δ)`` of ``count`` Gaussian mechanisms ``N(0, σ^2)`` with ℓ2 sensitivity ``Δ``, exactly.

    The privacy loss of the Gaussian mechanism is Gaussian, ``N(μ, 2μ)`` with
    ``μ = Δ^2/(2σ^2)``, so ``k`` of them compose to the Gaussian mechanism with ``σ/√k``
    (Dong–Roth–Su 2019, Gaussian DP: ``μ``-GDP composes to ``√k μ``-GDP), whose ``ε(δ)`` is
    Balle–Wang 2018 Theorem 8 (:func:`accounting.bounds.gaussian_epsilon_analytic`). The
    effective ``σ/√k`` is rounded *down* for the upper end (less noise, larger ε) and up for
    the lower end.
    """
    s = v.positive("sigma", sigma)
    d = v.positive("sensitivity", sensitivity)
    k = v.integer("count", count, minimum=1)
    dl = v.open_unit("delta", delta)
    s_lo, s_hi = _gaussian_sigma(s, k)
    high = bounds.gaussian_epsilon_analytic(s_lo, dl, d) if s_lo > 0 else math.inf
    low = bounds.gaussian_epsilon_analytic(s_hi, dl, d)
    return Enclosure.from_rounded_up(high, low)


def gaussian_composition_delta(sigma: float, sensitivity: float, count: int, epsilon: float) -> Enclosure:
    """``δ(ε)`` of ``count`` Gaussian mechanisms (see :func:`gaussian_composition_epsilon`)."""
    s = v.positive("sigma", sigma)
    d = v.positive("sensitivity", sensitivity)
    k = v.integer("count", count, minimum=1)
    eps = v.nonnegative("epsilon", epsilon)
    s_lo, s_hi = _gaussian_sigma(s, k)
    high = bounds.gaussian_delta_analytic(s_lo, eps, d) if s_lo > 0 else 1.0
    low = bounds.gaussian_delta_analytic(s_hi, eps, d)
    return Enclosure.from_rounded_up(min(high, 1.0), low)
