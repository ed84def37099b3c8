"""Additive noise, ``q(D) + X``: the exact answers of one release.

Lattice noise is accounted exactly (:mod:`accounting.divergence`). The neighbouring relation is
replace-one for a query whose value moves by at most ``Δ``: the pairs are ``(X + k, X)`` for
``0 < |k| <= Δ`` in both directions. For log-concave noise (all of ours but Pólya with
``r < 1``) the likelihood ratio is monotone, so each divergence is nondecreasing in ``|k|``
and only ``k = ±Δ`` are computed (``+Δ`` alone when the noise is symmetric). The continuous
baselines use their exact closed forms (:mod:`accounting.bounds`, and
:mod:`accounting.mechanisms.gaussian` for the Gaussian).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from mpmath import iv, mp

from accounting import bounds
from accounting import validate as v
from accounting.certified import Enclosure, Mpf, lower, precision, to_interval, upper
from accounting.divergence import (
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    epsilon_for_delta,
    hockey_stick,
    renyi,
)
from accounting.errors import ParameterError
from accounting.mechanisms.base import Mechanism, max_enclosure
from accounting.mechanisms.gaussian import (
    gaussian_composition_delta,
    gaussian_composition_epsilon,
    gaussian_equivalent_sigma,
)
from accounting.noise import (
    DEFAULT_DPS,
    TAIL_SUM_SIGMA,
    ContinuousNoise,
    DiscreteGaussian,
    Gaussian,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
    Shifted,
)

__all__ = ["AdditiveNoise"]

_closed = Enclosure.from_rounded_up


@dataclass(frozen=True)
class AdditiveNoise(Mechanism):
    """``M(D) = q(D) + X`` with ``X ~ noise`` and ``|q(D) - q(D')| <= sensitivity``.

    Parameters
    ----------
    noise : NoiseDistribution
        Lattice noise (then ``sensitivity`` must be an integer ``>= 1``) or a continuous baseline.
    sensitivity : int or float
        The sensitivity ``Δ`` of the query.
    """

    noise: NoiseDistribution
    sensitivity: float = 1

    def __post_init__(self) -> None:
        if isinstance(self.noise, LatticeNoise):
            d: float = v.integer("sensitivity", self.sensitivity, minimum=1)
        elif isinstance(self.noise, ContinuousNoise):
            d = v.positive("sensitivity", self.sensitivity)
        else:
            raise ParameterError("noise", self.noise, "a distribution from accounting.noise")
        object.__setattr__(self, "sensitivity", d)

    # -- the neighbouring pairs ---------------------------------------------------------
    def _shifts(self) -> list[int]:
        assert isinstance(self.noise, LatticeNoise)
        d = int(self.sensitivity)
        if self.noise.log_concave:
            return [d] if self.noise.symmetric else [d, -d]
        ks = range(1, d + 1)
        return list(ks) if self.noise.symmetric else [*ks, *(-k for k in ks)]

    def _pairs(self) -> list[tuple[LatticeNoise, LatticeNoise]]:
        assert isinstance(self.noise, LatticeNoise)
        return [(Shifted(self.noise, k), self.noise) for k in self._shifts()]

    # -- answers ------------------------------------------------------------------------
    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        if isinstance(self.noise, Gaussian):
            # One Gaussian mechanism is a composition of one.
            return gaussian_composition_epsilon(self.noise.sigma, self.sensitivity, 1, d)
        if isinstance(self.noise, Laplace):
            return _laplace_epsilon(self.noise, self.sensitivity, d)
        if _by_tails(self.noise):
            assert isinstance(self.noise, DiscreteGaussian)
            return discrete_gaussian_epsilon(self.noise, int(self.sensitivity), d, dps)
        return max_enclosure([epsilon_for_delta(p, q, d, dps) for p, q in self._pairs()])

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        eps = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        if isinstance(self.noise, Gaussian):
            return gaussian_composition_delta(self.noise.sigma, self.sensitivity, 1, eps)
        if isinstance(self.noise, Laplace):
            return _closed(bounds.laplace_delta(float(self.noise.scale), eps, self.sensitivity))
        if _by_tails(self.noise):
            assert isinstance(self.noise, DiscreteGaussian)
            return discrete_gaussian_delta(self.noise, int(self.sensitivity), eps, dps)
        return max_enclosure([hockey_stick(p, q, eps, dps) for p, q in self._pairs()])

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        a = v.order("alpha", alpha)
        dps = v.dps("dps", dps)
        if isinstance(self.noise, Gaussian):
            if math.isinf(a):
                return Enclosure(mp.inf, mp.inf)
            # σ/Δ enclosed by floats (a Fraction σ is not a float): less noise for the upper end.
            s_lo, s_hi = gaussian_equivalent_sigma([(self.noise.sigma, self.sensitivity, 1)])
            return _closed(bounds.gaussian_rdp(a, s_lo, 1.0), bounds.gaussian_rdp(a, s_hi, 1.0))
        if isinstance(self.noise, Laplace):
            return _closed(bounds.laplace_rdp(a, float(self.noise.scale), self.sensitivity))
        return max_enclosure([renyi(p, q, a, dps) for p, q in self._pairs()])

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.rdp(math.inf, dps)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``ρ = sup_{α > 1} D_α/α``, certified by branch and bound over α.

        On ``[a, b]``, ``(α - 1) D_α`` is convex in α (it is the log of a sum of exponentials
        of linear functions of α), so it lies below its chord, which bounds ``D_α/α`` on the
        whole interval; beyond the last order the noise's own tail bound applies
        (:meth:`~accounting.noise.LatticeNoise.rho_tail`). Intervals are split until the upper
        bound is within ``rtol`` of the best value seen, or 80 orders have been evaluated;
        the enclosure is honest either way.
        """
        dps = v.dps("dps", dps)
        tol = v.positive("rtol", rtol)
        if isinstance(self.noise, Gaussian):
            # D_α/α = Δ²/(2σ²) for every α (Mironov 2017). Enclosed in interval arithmetic:
            # an mpf at the caller's precision would round it to nearest, not enclose it.
            with precision(dps):
                rho = iv.mpf(self.sensitivity) ** 2 / (2 * to_interval(self.noise.sigma) ** 2)
                return Enclosure.from_interval(rho)
        if isinstance(self.noise, Laplace):
            pure = mp.mpf(bounds.laplace_pure_epsilon(float(self.noise.scale), self.sensitivity))

            def tail(a: float) -> Mpf:
                return pure / a  # D_α <= D_∞

        else:
            assert isinstance(self.noise, LatticeNoise)
            noise = self.noise

            def tail(a: float) -> Mpf:
                return max(noise.rho_tail(k, a) for k in self._shifts())

        return _sup_over_orders(lambda a: self.rdp(a, dps), tail, tol)


def _by_tails(noise: NoiseDistribution) -> bool:
    """Whether single-release ε and δ come from the noise's tail masses, not a window sum: the
    discrete Gaussian from :data:`~accounting.noise.TAIL_SUM_SIGMA` on."""
    return isinstance(noise, DiscreteGaussian) and Fraction(noise.sigma) >= TAIL_SUM_SIGMA


def _laplace_epsilon(noise: Laplace, sensitivity: float, delta: float) -> Enclosure:
    """Inverse of the Laplace mechanism's exact ``δ(ε) = 1 - exp((ε - Δ/b)/2)``: ``ε = Δ/b + 2 ln(1 - δ)``.

    See :func:`accounting.bounds.laplace_delta` for the forward formula; clipped at 0.
    """
    with precision(30):
        value = iv.mpf(sensitivity) / iv.mpf(float(noise.scale)) + 2 * iv.log(1 - iv.mpf(delta))
        lo = max(mp.zero, mp.make_mpf(value._mpi_[0]))
        return Enclosure(lo, max(mp.zero, upper(value)))


def _sup_over_orders(
    divergence: Callable[[float], Enclosure], tail: Callable[[float], Mpf], rtol: float
) -> Enclosure:
    """Certified ``sup_{α > 1} D_α / α`` (see :meth:`AdditiveNoise.zcdp_rho`)."""
    # Orders spaced geometrically in α - 1: the chord bound's slack scales with (b-a)²/(α(α-1)).
    grid = [1.0 + 2.0**k for k in range(-6, 9)]
    values: dict[float, Enclosure] = {}

    def at(a: float) -> Enclosure:
        if a not in values:
            values[a] = divergence(a)
        return values[a]

    def lower_ratio(e: Enclosure, a: float) -> Mpf:
        """``e.lo / a`` rounded down (a lower bound on ``D_a / a``)."""
        return mp.fdiv(e.lo, a, rounding="f")

    for a in grid:
        at(a)
    best = max(lower_ratio(e, a) for a, e in values.items())
    if mp.isinf(best):
        return Enclosure(mp.inf, mp.inf)
    top = grid[-1]
    with mp.workdps(30):
        # The tail bounds are evaluated in mpf, rounded to nearest: widen them upwards.
        tail_bound = mp.mpf(tail(top)) * (1 + mp.ldexp(1, -mp.prec + 8))
    # A heap of (-upper bound, a, b); (1, grid[0]] is bounded by D at its right end.
    heap: list[tuple[Mpf, float, float]] = []

    def push(a: float, b: float) -> None:
        heapq.heappush(heap, (-_chord_bound(a, at(a) if a > 1 else None, b, at(b)), a, b))

    push(1.0, grid[0])
    for a, b in itertools.pairwise(grid):
        push(a, b)
    evaluations = len(values)
    while heap:
        neg_u, a, b = heap[0]
        u = -neg_u
        if u <= best * (1 + rtol) or evaluations >= 80:
            break
        heapq.heappop(heap)
        mid = 1 + math.sqrt((a - 1) * (b - 1)) if a > 1 else 1 + (b - 1) / 4
        e = at(mid)
        evaluations += 1
        best = max(best, lower_ratio(e, mid))
        push(a, mid)
        push(mid, b)
    upper_bound = max([-heap[0][0] if heap else mp.zero, tail_bound, best])
    return Enclosure(best, upper_bound)


def _chord_bound(a: float, da: Enclosure | None, b: float, db: Enclosure) -> Mpf:
    """An upper bound on ``D_α/α`` over ``α ∈ [a, b]`` from convexity of ``f(α) = (α-1) D_α``.

    ``f`` lies below its chord ``c0 + c1 α`` through ``(a, f(a))`` and ``(b, f(b))`` (upper
    ends; ``f(1) = 0``), so ``D_α/α <= g(α) = (c0 + c1 α)/(α(α-1))``. ``g`` is monotone
    between the roots of ``c1 α² + 2 c0 α - c0 = 0``, so its maximum on ``[a, b]`` is at an
    end or at such a root; each candidate is evaluated in interval arithmetic (a root over
    a small interval around its computed value, which contains the true root).
    """
    if mp.isinf(db.hi):
        return mp.inf
    with precision(20):
        ia, ib = iv.mpf(a), iv.mpf(b)
        fa = iv.mpf(0) if da is None else (ia - 1) * iv.mpf(da.hi)
        fb = (ib - 1) * iv.mpf(db.hi)
        c1 = (fb - fa) / (ib - ia)
        c0 = fa - c1 * ia

        def g(x: object) -> Mpf:
            x_iv = iv.mpf(x)
            if a == 1.0 and lower(x_iv) <= 1:
                # At a = 1, g(α) = f(b)/((b-1) α) (the chord through (1, 0)): no 0/0.
                return upper(fb / ((ib - 1) * x_iv))
            return upper((c0 + c1 * x_iv) / (x_iv * (x_iv - 1)))

        candidates = [g(a if a > 1 else iv.mpf([1, 1])), g(b)]
        m0, m1 = mp.mpf(c0.mid), mp.mpf(c1.mid)
        roots: list[Mpf] = []
        if m1 != 0:
            disc = m0 * m0 + m1 * m0
            if disc >= 0:
                roots = [(-m0 + sgn * mp.sqrt(disc)) / m1 for sgn in (1, -1)]
        elif m0 != 0:
            roots = [mp.mpf(0.5)]
        width = mp.ldexp(1, -40)
        for r in roots:
            if a < r < b:
                near = iv.mpf([max(mp.mpf(a), r * (1 - width)), min(mp.mpf(b), r * (1 + width))])
                candidates.append(g(near))
        return max(candidates)
