"""The privacy-loss distribution (PLD) of a pair, certified, and its exact compositions.

The privacy loss of a pair ``(P, Q)`` is ``L(x) = ln(P(x)/Q(x))`` with ``x ~ P`` (``+inf`` where
``Q(x) = 0``), and

    δ(ε) = E_P[(1 - e^{ε - L})_+] = E_Q[(e^{L} - e^{ε})_+] + P(L = +inf)      (hockey stick)

(Meiser–Mohammadi 2018; Sommer–Meiser–Mohammadi 2019). The losses of independent mechanisms add,
so a composition is a convolution of PLDs (:mod:`accounting.pld.grid`). A
:class:`PrivacyLossDistribution` holds two grids, a pessimistic and an optimistic one
(:mod:`accounting.pld.discretization`); :meth:`PrivacyLossDistribution.delta` and
:meth:`PrivacyLossDistribution.epsilon` return ``[optimistic, pessimistic]`` as an
:class:`~accounting.certified.Enclosure`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from mpmath import iv, mp

from accounting import validate as v
from accounting.certified import Enclosure, Interval, Mpf, float_down, float_up, lower, precision, upper
from accounting.errors import ParameterError, ParameterTypeError
from accounting.mechanisms import Mechanism
from accounting.noise import DEFAULT_DPS
from accounting.pld.atoms import CellTable
from accounting.pld.coarsening import Sides, doubled, fit, levels_apart, lift, paired
from accounting.pld.discretization import discretize
from accounting.pld.grid import EXTRA_DPS, Grid, Rows, enclosed, fixed_point
from accounting.pld.pairs import Pair, mechanism_pair
from accounting.pld.powers import plan_power, power_sides
from accounting.pld.products import FFT_MIN_POINTS, FLOAT_SLACK, compose_rows
from accounting.pld.sums import GUARD_BITS, SuffixSums
from accounting.progress import Progress, report
from accounting.search import certify_upward, smallest_integer
from accounting.subsampling import MixturePair

__all__ = ["MAX_COMPOSITIONS", "PrivacyLossDistribution", "pair_distribution"]


#: The most self-compositions of one pair :func:`compose_events` squares out (``2^30``): each binary
#: digit of the count is a squaring of a grid of up to :data:`MAX_GRID_POINTS` points per direction,
#: about a third of a second each (10^9 Skellam releases took 12 s, 10^12 took 28 s, 10^18 did not
#: finish in minutes). Ledgers of Gaussian mechanisms only have a closed form and no limit; the
#: RDP, zCDP, pure and published routes compose any count by multiplication.
MAX_COMPOSITIONS = 10**9

#: A self-composition takes the rest of its count in one transform
#: (:func:`~accounting.pld.powers.power_rows`) from this many on.
_POWER_FROM = 4

#: A power whose window is too wide for :data:`~accounting.pld.powers.MAX_POWER_POINTS` coarsens its
#: base first, once that base is the composition of at least ``2^_COARSEN_FROM`` steps: each
#: halving then adds about ``(2h)^2/4`` to a variance of ``2^_COARSEN_FROM (s/h)^2 h^2`` (``s/h``
#: at least 96 for a subsampled release, :mod:`accounting.pld.spacing`), 10^-7 of it.
_COARSEN_FROM = 8


# ---------------------------------------------------------------------------------------
# The privacy-loss distribution
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class PrivacyLossDistribution:
    """A certified privacy-loss distribution on a grid, and its exact compositions.

    Build one with :meth:`from_mechanism`; compose with :meth:`compose` and
    :meth:`self_compose`; ask :meth:`delta` and :meth:`epsilon`. Every answer is an
    :class:`~accounting.certified.Enclosure` whose lower end comes from the optimistic grid
    and whose upper end from the pessimistic one (:mod:`accounting.pld.discretization`).

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
    pessimistic: Grid
    optimistic: Grid

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
        pair = mechanism_pair(mechanism)
        h = None if spacing is None else v.positive("spacing", spacing)
        dps = v.dps("dps", dps)
        return pair_distribution(pair, h, dps)

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
        return pair_distribution(pair, h, v.dps("dps", dps))

    # -- composition ----------------------------------------------------------------------
    def compose(self, other: PrivacyLossDistribution, slack: float = FLOAT_SLACK) -> PrivacyLossDistribution:
        """The PLD of running both mechanisms (independent noise): losses add.

        Grids whose spacings differ by a power of two are composed on the coarser one (the finer
        is coarsened, :func:`accounting.pld.coarsening._coarsen`); a composed side of more than
        :data:`~accounting.pld.coarsening.MAX_GRID_POINTS` points is coarsened too. ``slack`` is
        the mass float products may move (:mod:`accounting.pld.products`; 0: exact products).

        Raises
        ------
        ParameterError
            When the two spacings differ by other than a power of two.
        """
        slack = v.nonnegative("slack", slack)
        if not isinstance(other, PrivacyLossDistribution):
            raise ParameterTypeError("other", other, "a PrivacyLossDistribution")
        up_self, up_other = levels_apart(self.spacing, other.spacing)
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
        a = lift(a, self.spacing, up_self, bits, dps)
        b = a if other is self else lift(b, other.spacing, up_other, bits, dps)
        spacing = doubled(self.spacing, up_self)
        sides = Sides(*(compose_rows(x, y, bits, up, other is self, slack) for x, y, up in paired(a, b)))
        sides, more = fit(sides, spacing, bits, dps)
        with precision(dps + EXTRA_DPS):
            offset = Enclosure.from_interval(enclosed(self.offset) + enclosed(other.offset))
        exact = self.exact_grid and other.exact_grid and up_self + up_other + more == 0
        return self._made(sides, doubled(spacing, more), offset, bits, dps, exact)

    def self_compose(
        self, count: int, progress: Progress | None = None, slack: float = FLOAT_SLACK
    ) -> PrivacyLossDistribution:
        """The ``count``-fold composition, by repeated squaring (on byte rows, :class:`Rows`) until
        the rest of the count can be taken in one transform (:func:`~accounting.pld.powers.power_rows`:
        its slack within what the remaining squarings may take, its window at most
        :data:`~accounting.pld.powers.MAX_POWER_POINTS`; from the start for a long composition on a
        grid of moderate width: 10^4 Poisson-sampled Gaussian steps take one transform each way).

        A side that grows beyond :data:`~accounting.pld.coarsening.MAX_GRID_POINTS` points is
        coarsened (:func:`accounting.pld.coarsening._coarsen`), and so is the base of a power whose
        window is too wide once 2^:data:`_COARSEN_FROM` steps are composed
        (:attr:`~accounting.pld.powers.PowerPlan.halvings`): the spacing of the result is then the
        PLD's times a power of two.

        Parameters
        ----------
        count : int
            ``k >= 1``.
        progress : callable, optional
            Called as ``progress(done, total)`` after each squaring (``total`` is the number of
            binary digits of ``k``); by default the current context's callback
            (:func:`accounting.progress.reporting`, what a progress bar sets).
        slack : float
            The mass float products may move in all (:mod:`accounting.pld.products`), spread over
            the squarings by how often each result is used: ``δ(ε)`` may be loose by that much
            (:attr:`slack` of the result). 0 takes exact products only.
        """
        slack = v.nonnegative("slack", slack)
        why = "one squaring per binary digit of the count, about a third of a second each"
        k = v.integer("count", count, minimum=1, maximum=MAX_COMPOSITIONS, why=why)
        bits, dps = self.bits, self.dps
        base, base_level = self._rows(bits), 0
        result: Sides | None = None
        result_level = 0
        n, done, total = k, 0, k.bit_length()
        # Float products' slack: at most ``slack`` in all, a squaring's weighted by the number
        # of times its result enters the composition (k >> (done + 1)).
        share = slack / (2 * total)
        wide_at = -1  # the base level at which the whole composition's window was too wide
        while True:
            if n >= _POWER_FROM and not (done < _COARSEN_FROM and base_level == wide_at):
                # the rest in one transform each way, if its slack fits what the rest may take
                allowance = share * 2 * (total - done)
                powered = self._powered(result, result_level, base, base_level, n, done, allowance)
                if isinstance(powered, tuple):
                    result, result_level = powered
                    report(total, total, progress)
                    break
                if powered:
                    # The window of the whole composition, too wide on this grid before
                    # 2^_COARSEN_FROM steps, stays so until the grid coarsens: plans skipped.
                    wide_at = base_level
            if n & 1:
                if result is None:
                    result, result_level = base, base_level
                else:
                    fine = doubled(self.spacing, result_level)
                    lifted = lift(result, fine, base_level - result_level, bits, dps)
                    result = Sides(
                        *(compose_rows(x, y, bits, up, False, share) for x, y, up in paired(lifted, base))
                    )
                    result, more = fit(result, doubled(self.spacing, base_level), bits, dps)
                    result_level = base_level + more
            n >>= 1
            done += 1
            report(done, total, progress)
            if not n:
                break
            allowance = share / max(1, k >> done)
            base = Sides(*(compose_rows(x, x, bits, up, True, allowance) for x, _, up in paired(base, base)))
            base, more = fit(base, doubled(self.spacing, base_level), bits, dps)
            base_level += more
        assert result is not None
        with precision(dps + EXTRA_DPS):
            offset = Enclosure.from_interval(k * enclosed(self.offset))
        exact = self.exact_grid and result_level == 0
        return self._made(result, doubled(self.spacing, result_level), offset, bits, dps, exact)

    def _powered(
        self,
        result: Sides | None,
        result_level: int,
        base: Sides,
        base_level: int,
        n: int,
        done: int,
        allowance: float,
    ) -> tuple[Sides, int] | bool:
        """``result`` times ``base^n`` by :func:`~accounting.pld.powers.power_sides` and the level of
        its grid; ``True`` where it declines for a window too wide while ``base``, the composition
        of ``2^done`` steps, is too narrow to coarsen (below 2^:data:`_COARSEN_FROM` steps, whose
        coarsening error relative to their spread would be above about 10^-7), ``False`` for
        another reason (too loose, exact products asked)."""
        if len(base.pessimistic.rows) < FFT_MIN_POINTS:
            return False
        bits, dps = self.bits, self.dps
        if result is not None:
            result = lift(result, doubled(self.spacing, result_level), base_level - result_level, bits, dps)

        def parts(x: Rows, y: Rows) -> list[tuple[Rows, int]]:
            return [(x, n)] if result is None else [(x, n), (y, 1)]

        paired_sides = paired(base, base if result is None else result)
        plans = [plan_power(parts(x, y), bits, up, allowance) for x, y, up in paired_sides]
        if any(plan is None for plan in plans):
            return False
        halvings = max(plan.halvings for plan in plans if plan is not None)
        if halvings:
            if done < _COARSEN_FROM:
                return True
            base = lift(base, doubled(self.spacing, base_level), halvings, bits, dps)
            if result is not None:
                result = lift(result, doubled(self.spacing, base_level), halvings, bits, dps)
            base_level += halvings
            paired_sides = paired(base, base if result is None else result)
            plans = [None, None]  # on the coarser grid: planned again
        jobs = [(parts(x, y), up, plan) for (x, y, up), plan in zip(paired_sides, plans, strict=True)]
        pessimistic, optimistic = power_sides(jobs, bits, allowance)
        if pessimistic is None or optimistic is None:
            return False
        return Sides(pessimistic, optimistic), base_level

    def _rows(self, bits: int) -> Sides:
        """Both sides as byte rows with ``bits`` fractional bits (rounded as each side must be)."""
        return Sides(
            Rows.of(self.pessimistic.rescaled(self.bits - bits, True), bits),
            Rows.of(self.optimistic.rescaled(self.bits - bits, False), bits),
        )

    @staticmethod
    def _made(
        sides: Sides, spacing: Enclosure, offset: Enclosure, bits: int, dps: int, exact: bool
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
        return max(self.pessimistic.size, self.optimistic.size)

    @property
    def slack(self) -> float:
        """An upper bound on the mass float products moved (:attr:`~accounting.pld.grid.Grid.slack`,
        the larger side's): how much ``δ(ε)`` may be loose because of them."""
        return max(self.pessimistic.slack, self.optimistic.slack)

    @property
    def loss_range(self) -> tuple[float, float]:
        """The smallest and largest finite loss held on either side (rounded outward)."""
        with precision(self.dps + EXTRA_DPS):
            ends = [
                (self._loss(g.start), self._loss(g.start + g.size - 1))
                for g in (self.pessimistic, self.optimistic)
                if g.size
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
        with precision(self.dps + EXTRA_DPS):
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
        if d not in self._epsilons:
            with precision(self.dps + EXTRA_DPS):
                # lo <= ε_optimistic <= ε <= ε_pessimistic <= hi: an empty enclosure would be a bug.
                self._epsilons[d] = Enclosure(self._epsilon_lower(d), self._epsilon_upper(d))
        return self._epsilons[d]

    def epsilon_upper(self, delta: float) -> Mpf:
        """The upper end of :meth:`epsilon` alone (the pessimistic grid's)."""
        d = v.open_unit("delta", delta)
        if d in self._epsilons:
            return self._epsilons[d].hi
        with precision(self.dps + EXTRA_DPS):
            return self._epsilon_upper(d)

    @cached_property
    def _epsilons(self) -> dict[float, Enclosure]:
        """The answers of :meth:`epsilon` so far (the Accountant asks again for the looseness)."""
        return {}

    def __repr__(self) -> str:
        kind = "exact" if self.exact_grid else "rounded"
        return (
            f"PrivacyLossDistribution(spacing={mp.nstr(self.spacing.hi, 10)} ({kind}), "
            f"grid_points={self.grid_points}, bits={self.bits})"
        )

    # -- internals ------------------------------------------------------------------------
    def _loss(self, j: int) -> Interval:
        """The grid loss ``offset + j·h`` as an interval (current precision)."""
        return enclosed(self.offset) + j * enclosed(self.spacing)

    def _sums(self, pessimistic: bool) -> SuffixSums:
        return self._pessimistic_sums if pessimistic else self._optimistic_sums

    @cached_property
    def _pessimistic_sums(self) -> SuffixSums:
        return self._suffix_sums(self.pessimistic, up=False)

    @cached_property
    def _optimistic_sums(self) -> SuffixSums:
        return self._suffix_sums(self.optimistic, up=True)

    def _suffix_sums(self, grid: Grid, up: bool) -> SuffixSums:
        """Suffix sums of ``grid`` (``horner`` rounded up when ``up``, else down; see :class:`SuffixSums`)."""
        frac = self.bits + 2 * GUARD_BITS
        with precision(self.dps + EXTRA_DPS):
            r = iv.exp(-enclosed(self.spacing))
            ratio = fixed_point(upper(r), frac, "c") if up else fixed_point(lower(r), frac, "f")
        return SuffixSums(grid, ratio, frac, up)

    def _first_above(self, grid: Grid, epsilon: Mpf) -> int:
        """The first index ``i`` whose grid loss is certainly ``> ε`` (``len`` if none)."""
        return smallest_integer(lambda i: bool(lower(self._loss(grid.start + i)) > epsilon), 0, grid.size)

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
        total = iv.mpf(grid.infinite + sums.mass(i0)) / iv.mpf(2) ** bits
        if i0 < grid.size:
            b = iv.mpf(sums.horner(i0)) / iv.mpf(2) ** (bits + GUARD_BITS)
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
                total += iv.mpf(sums.at(i)) / iv.mpf(2) ** bits * iv.mpf(positive_part)
            i -= 1
        return max(mp.zero, upper(total))

    def _grid_delta(self, grid: Grid, sums: SuffixSums, i: int) -> int:
        """``δ`` of ``grid`` at its ``i``-th loss, scaled by ``2^(2 bits + 3G)``.

        Rounded as the suffix sums are: an upper bound on the pessimistic side, a lower bound
        on the optimistic one.

        At ``ε = l_i`` the terms are ``m_j (1 - r^{j-i})`` for ``j > i``: no offset, no exp.
        """
        return (
            (grid.infinite + sums.mass(i + 1)) << (self.bits + 3 * GUARD_BITS)
        ) - sums.ratio * sums.horner(i + 1)

    def _segment(self, grid: Grid, sums: SuffixSums, delta: Mpf) -> int:
        """The smallest index ``k`` whose grid loss has ``δ(l_k) <= δ`` (per :meth:`_grid_delta`):
        from the top down in steps growing by a quarter, then by bisection, so that the suffix
        sums are computed only a little below ``k``."""
        target = fixed_point(delta, 2 * self.bits + 3 * GUARD_BITS, "f")

        def holds(i: int) -> bool:
            return self._grid_delta(grid, sums, i) <= target

        n = grid.size
        hi, step = n, 1
        while hi > 0:
            lo = max(0, hi - step)
            if not holds(lo):
                return smallest_integer(holds, lo + 1, hi)
            hi, step = lo, step + step // 4 + 1  # steps growing by a quarter: a short overshoot
        return 0

    def _segment_epsilon(self, grid: Grid, sums: SuffixSums, k: int, delta: Mpf) -> Interval | None:
        """``ln((A_k - δ)/B_k)`` in interval arithmetic (``None`` where undefined)."""
        bits = self.bits
        a = iv.mpf(grid.infinite + sums.mass(k)) / iv.mpf(2) ** bits - iv.mpf(delta)
        if not lower(a) > 0 or sums.horner(k) == 0:
            return None
        b = iv.mpf(sums.horner(k)) / iv.mpf(2) ** (bits + GUARD_BITS)
        return iv.log(a) - iv.log(b) + self._loss(grid.start + k)

    def _epsilon_upper(self, delta: float) -> Mpf:
        grid, sums = self.pessimistic, self._pessimistic_sums
        dm = mp.mpf(delta)
        if grid.infinite >= fixed_point(dm, self.bits, "f"):
            return mp.inf
        k = self._segment(grid, sums, dm)
        if k == grid.size:
            return mp.inf  # only when δ is within rounding of the mass at +inf
        # δ(l_{k-1}) > δ: ε = 0 may do only where l_{k-1} < 0
        if (k == 0 or lower(self._loss(grid.start + k - 1)) < 0) and self._delta_side(
            mp.zero, pessimistic=True
        ) <= dm:
            return mp.zero
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
        n = grid.size
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


def pair_distribution(
    pair: Pair,
    spacing: float | None,
    dps: int,
    tables: dict[tuple[MixturePair, float], CellTable] | None = None,
    tail: float = 0.0,
) -> PrivacyLossDistribution:
    """The PLD of one pair (validated by the caller): its two grids
    (:func:`accounting.pld.discretization.discretize`), on its exact lattice when it has one and no
    spacing is asked; ``tables`` caches the cells of continuous pairs, whose windows may leave
    ``tail`` beyond each end."""
    return PrivacyLossDistribution(*discretize(pair, spacing, dps, tables, tail))
