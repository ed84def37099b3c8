"""Mechanisms users ask about: additive noise, distributed sums of noise shares, and pure-DP black boxes.

* :class:`AdditiveNoise` — ``q(D) + X`` for a query of sensitivity ``Δ`` (an integer for lattice
  noise).
* :class:`DistributedSum` — ``n`` users each add an independent share; the released sum carries
  the ``n``-fold convolution: Pólya ``(1/n, β)`` differences make a discrete Laplace exactly
  (Fact 1), Skellam shares a Skellam, discrete Gaussian shares a sum of discrete Gaussians.
* :class:`PureDP` — a mechanism known (by a cited theorem) to be ``ε``-DP and nothing more, such
  as the relaxed secure aggregation of Cheu & Yan whose ``2ε̂`` term Theorem 3 of the distributed
  MAB paper adds. It answers for the worst case over all ``ε``-DP mechanisms: binary randomized
  response (Kairouz, Oh & Viswanath 2015).

All three answer ``epsilon(delta)``, ``delta(epsilon)``, ``rdp(alpha)``, ``pure_epsilon()`` and
``zcdp_rho()`` with certified enclosures (``float(result)`` is the upper end rounded up).

Lattice noise is accounted exactly (:mod:`accounting.divergence`). The neighbouring relation is
replace-one for a query whose value moves by at most ``Δ``: the pairs are ``(X + k, X)`` for
``0 < |k| <= Δ`` in both directions. For log-concave noise (all of ours but Pólya with
``r < 1``) the likelihood ratio is monotone, so each divergence is nondecreasing in ``|k|``
and only ``k = ±Δ`` are computed (``+Δ`` alone when the noise is symmetric). The continuous
baselines use their exact closed forms (:mod:`accounting.bounds`). A :class:`PureDP` has no
noise to inspect: its ``ε`` is the cited theorem's, for the theorem's neighbouring relation.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
from mpmath import iv, mp

from accounting import bounds, conversion
from accounting import validate as v
from accounting.certified import Enclosure, Mpf, float_down, float_up, lower, precision, to_interval, upper
from accounting.divergence import (
    discrete_gaussian_delta,
    discrete_gaussian_epsilon,
    epsilon_for_delta,
    hockey_stick,
    renyi,
)
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError, UnsupportedEventError
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    DEFAULT_DPS,
    TAIL_SUM_SIGMA,
    CenteredBinomial,
    ContinuousNoise,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
)

__all__ = [
    "AddRemoveSum",
    "AdditiveNoise",
    "ApproxDP",
    "DistributedSum",
    "DistributedVectorSum",
    "Mechanism",
    "PureDP",
]


def _max(enclosures: list[Enclosure]) -> Enclosure:
    """The enclosure of the maximum of several certified values."""
    return Enclosure(max(e.lo for e in enclosures), max(e.hi for e in enclosures))


_closed = Enclosure.from_rounded_up


class Mechanism(ABC):
    """What a mechanism can answer. Every answer is a certified :class:`Enclosure`."""

    @abstractmethod
    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The smallest ε with the mechanism ``(ε, δ)``-DP."""

    @abstractmethod
    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The smallest δ with the mechanism ``(ε, δ)``-DP."""

    @abstractmethod
    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The exact Rényi DP curve at order ``α`` (real ``> 1`` or ``inf``)."""

    @abstractmethod
    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """The pure-DP ε (``D_∞``); ``inf`` when the mechanism has none."""

    @abstractmethod
    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``ρ = sup_{α > 1} D_α / α`` (zero-concentrated DP), ``inf`` where unbounded."""

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        """The mechanism whose answers are this one's under ``neighbouring``.

        Itself where the relation does not change the worst pair (additive noise, whose
        sensitivity is stated for the relation); a view with the relation's own pairs where it
        does (a distributed sum under add-remove); a cited guarantee refuses a relation other than
        its theorem's with :class:`~accounting.errors.UnsupportedEventError`.
        """
        Neighbouring.parse(neighbouring)
        return self


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
            from accounting import pld  # one Gaussian mechanism is a composition of one

            return pld.gaussian_composition_epsilon(self.noise.sigma, self.sensitivity, 1, d)
        if isinstance(self.noise, Laplace):
            return _laplace_epsilon(self.noise, self.sensitivity, d)
        if _by_tails(self.noise):
            assert isinstance(self.noise, DiscreteGaussian)
            return discrete_gaussian_epsilon(self.noise, int(self.sensitivity), d, dps)
        return _max([epsilon_for_delta(p, q, d, dps) for p, q in self._pairs()])

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        eps = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        if isinstance(self.noise, Gaussian):
            from accounting import pld

            return pld.gaussian_composition_delta(self.noise.sigma, self.sensitivity, 1, eps)
        if isinstance(self.noise, Laplace):
            return _closed(bounds.laplace_delta(float(self.noise.scale), eps, self.sensitivity))
        if _by_tails(self.noise):
            assert isinstance(self.noise, DiscreteGaussian)
            return discrete_gaussian_delta(self.noise, int(self.sensitivity), eps, dps)
        return _max([hockey_stick(p, q, eps, dps) for p, q in self._pairs()])

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        a = v.order("alpha", alpha)
        dps = v.dps("dps", dps)
        if isinstance(self.noise, Gaussian):
            if math.isinf(a):
                return Enclosure(mp.inf, mp.inf)
            from accounting import pld

            # σ/Δ enclosed by floats (a Fraction σ is not a float): less noise for the upper end.
            s_lo, s_hi = pld.gaussian_equivalent_sigma([(self.noise.sigma, self.sensitivity, 1)])
            return _closed(bounds.gaussian_rdp(a, s_lo, 1.0), bounds.gaussian_rdp(a, s_hi, 1.0))
        if isinstance(self.noise, Laplace):
            return _closed(bounds.laplace_rdp(a, float(self.noise.scale), self.sensitivity))
        return _max([renyi(p, q, a, dps) for p, q in self._pairs()])

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


@dataclass(frozen=True)
class DistributedSum(Mechanism):
    """``n`` users each add an independent noise share; the server sees only the sum.

    The total noise is the ``n``-fold convolution of the share:

    * ``Polya(r, β)`` shares, each user adding the difference of two independent draws (Fact 1,
      Goryczka–Xiong 2015): with ``r·n = 1`` exactly, the total is the discrete Laplace with
      ``e^{-1/b} = β``;
    * ``Skellam`` shares: a Skellam with ``n`` times the rates (exact rational arithmetic);
    * ``DiscreteGaussian(σ)`` shares: ``SumOfDiscreteGaussians(σ, n)``;
    * ``CenteredBinomial(t)`` shares with even ``t``: ``CenteredBinomial(n t)``.

    A share whose sum has no exact form here raises :class:`UnsupportedError` rather than
    being approximated.
    """

    share: NoiseDistribution
    users: int
    sensitivity: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "users", v.integer("users", self.users, minimum=1))
        object.__setattr__(self, "sensitivity", v.integer("sensitivity", self.sensitivity, minimum=1))
        self.total_noise  # noqa: B018 - validate the share now, not at the first question

    @property
    def total_noise(self) -> LatticeNoise:
        """The distribution of the sum of all users' shares."""
        n = self.users
        share = self.share
        if isinstance(share, Polya) and Fraction(share.r) * n != 1:
            raise UnsupportedError(
                f"Polya shares sum to a discrete Laplace only when r * users == 1 exactly; got "
                f"r={share.r!r}, users={n} (pass r as fractions.Fraction(1, users))"
            )
        return self.noise_of(n)

    def noise_of(self, users: int) -> LatticeNoise:
        """The distribution of the sum of ``users`` shares (``1 <= users``), exactly.

        ``users`` Pólya ``(r, β)`` differences are the difference of two negative binomials
        ``NB(users·r, β)``: the discrete Laplace when ``users·r = 1`` (Fact 1); other counts have
        no exact law here (:class:`~accounting.errors.UnsupportedError`).
        """
        n = v.integer("users", users, minimum=1)
        share = self.share
        if isinstance(share, Polya):
            if Fraction(share.r) * n != 1:
                raise UnsupportedError(
                    f"the sum of {n} Pólya({share.r!r}, β) differences is a difference of two "
                    f"NB({Fraction(share.r) * n}, β), which has no exact law here (only r·users = 1: "
                    "the discrete Laplace)"
                )
            return DiscreteLaplace(decay=share.beta)
        if isinstance(share, Skellam):
            return Skellam.from_rates(Fraction(share.mu1) * n, Fraction(share.mu2) * n, share.offset * n)
        if isinstance(share, DiscreteGaussian):
            return SumOfDiscreteGaussians(share.sigma, n)
        if isinstance(share, SumOfDiscreteGaussians):
            return SumOfDiscreteGaussians(share.sigma, share.count * n)
        if isinstance(share, CenteredBinomial) and share.trials % 2 == 0:
            return CenteredBinomial(share.trials * n)
        raise UnsupportedError(
            f"no exact distribution for the sum of {n} shares of {share!r}: supported shares are "
            "Polya(1/users, β) differences, Skellam, DiscreteGaussian and CenteredBinomial (even trials)"
        )

    @property
    def mechanism(self) -> AdditiveNoise:
        """The equivalent central mechanism: the sum plus the total noise (replace-one)."""
        return AdditiveNoise(self.total_noise, self.sensitivity)

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        """Replace-one: the central mechanism. Add-remove: the pairs of :class:`AddRemoveSum`."""
        if Neighbouring.parse(neighbouring) is Neighbouring.REPLACE_ONE:
            return self.mechanism
        return AddRemoveSum(self)

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.mechanism.epsilon(delta, dps)

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.mechanism.delta(epsilon, dps)

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.mechanism.rdp(alpha, dps)

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.mechanism.pure_epsilon(dps)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        return self.mechanism.zcdp_rho(dps, rtol)


@dataclass(frozen=True, init=False, repr=False)
class PureDP(Mechanism):
    """A mechanism known (by a cited theorem) to be ``ε``-DP, and nothing more.

    For example the relaxed secure aggregation of Cheu & Yan, whose ``2ε̂`` term Theorem 3 of
    the distributed MAB paper adds. Nothing else is known about the mechanism, so every answer
    is the *worst case over all* ``ε``-DP mechanisms, which is binary randomized response
    ``P = (e^ε, 1)/(1 + e^ε)`` against its reverse ``Q``: every ``ε``-DP pair is a
    post-processing of it (Kairouz, Oh & Viswanath 2015, "The Composition Theorem for
    Differential Privacy": the privacy region of an ``ε``-DP mechanism lies inside that of
    randomized response, the dominance behind their Theorem 3.3), so by data processing no
    ``ε``-DP mechanism has a larger hockey-stick or Rényi divergence. Nothing is optimistic.

    Parameters
    ----------
    epsilon : float or Fraction
        The cited ``ε > 0`` (finite). An ``int``, ``Fraction`` or ``mpf`` that is not a float is
        rounded *up* to one: a smaller ε would claim more privacy than the theorem gives.
    source : str
        Where the guarantee comes from (paper and theorem), kept in the ledger.
    neighbouring : Neighbouring or str
        The relation the cited theorem is stated for (replace-one by default); an
        :class:`~accounting.accountant.Accountant` under another relation refuses the event.
    """

    eps: float
    source: str
    neighbouring: Neighbouring

    def __init__(
        self,
        epsilon: float | Fraction,
        source: str,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE_ONE,
    ) -> None:
        v.positive("epsilon", epsilon)
        object.__setattr__(self, "eps", _float_at_least(epsilon))
        object.__setattr__(self, "source", _source(source))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(neighbouring))

    def __repr__(self) -> str:
        return (
            f"PureDP(epsilon={self.eps!r}, source={self.source!r}, neighbouring={self.neighbouring.value!r})"
        )

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        return _cited_under(self, self.neighbouring, neighbouring)

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The inverse of :meth:`delta`: ``ε' = ln(e^ε - δ(1 + e^ε))``, clipped at 0.

        The smallest ``ε'`` with ``δ(ε') <= δ`` (``0`` once ``δ >= tanh(ε/2) = δ(0)``).
        Interval arithmetic at ``dps`` digits (plus guard digits).
        """
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        with precision(dps):
            e = iv.exp(iv.mpf(self.eps))
            ratio = e - iv.mpf(d) * (1 + e)  # e^{ε'}
            if upper(ratio) <= 1:
                return Enclosure.exact(0)
            if lower(ratio) < 1:
                ratio = iv.mpf([1, upper(ratio)])
            return Enclosure.from_interval(iv.log(ratio))

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The privacy profile of randomized response: ``δ(ε') = (e^ε - e^{ε'})/(1 + e^ε)`` for ``ε' < ε``.

        ``0`` for ``ε' >= ε``. Kairouz, Oh & Viswanath 2015 (the privacy region of an ``ε``-DP
        mechanism lies inside that of randomized response; its hockey-stick divergence is
        ``[P_1 - e^{ε'} Q_1]_+``). Interval arithmetic at ``dps`` digits (plus guard digits).
        """
        eps_prime = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        if eps_prime >= self.eps:
            return Enclosure.exact(0)
        with precision(dps):
            e = iv.exp(iv.mpf(self.eps))
            value = (e - iv.exp(iv.mpf(eps_prime))) / (1 + e)
            return Enclosure(max(mp.zero, lower(value)), upper(value))

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The Rényi divergence of randomized response, the tight worst case over ``ε``-DP.

        ``D_α = 1/(α-1) ln[(e^{αε} + e^{(1-α)ε})/(1 + e^ε)]`` for finite ``α > 1``, ``D_∞ = ε``:
        :func:`accounting.conversion.pure_to_rdp` (evaluated at >= 50 digits, rounded up).
        """
        a = v.order("alpha", alpha)
        v.dps("dps", dps)
        if math.isinf(a):
            return self.pure_epsilon(dps)
        return _closed(conversion.pure_to_rdp(self.eps, a))

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """The cited ``ε``, exactly."""
        v.dps("dps", dps)
        return Enclosure.exact(self.eps)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``ρ <= ε²/2``: Bun & Steinke 2016, Proposition 3.3 (``ε``-DP implies ``(ε²/2)``-zCDP).

        The upper end is :func:`accounting.conversion.pure_to_zcdp`. The lower end is the
        Kullback–Leibler divergence of randomized response, ``ε tanh(ε/2)``: the limit of
        ``D_α/α`` as ``α → 1``, so the worst-case ``sup_α D_α/α`` is at least that (numerically
        it *is* that, below ``ε²/2``; the upper end keeps the cited theorem). ``rtol`` is unused.
        """
        dps = v.dps("dps", dps)
        v.positive("rtol", rtol)
        # e^ε - 1 cancels for small ε: carry the digits it loses.
        extra = max(0, math.ceil(-math.log10(self.eps)))
        with precision(dps + extra):
            e = iv.exp(iv.mpf(self.eps))
            kl = iv.mpf(self.eps) * (e - 1) / (e + 1)
            return Enclosure(max(mp.zero, lower(kl)), mp.mpf(conversion.pure_to_zcdp(self.eps)))


def _float_at_least(value: object) -> float:
    """The smallest float ``>= value`` (a finite real already validated), compared exactly."""
    if isinstance(value, mpmath.mpf):
        return float_up(value)
    f = float(value)  # type: ignore[arg-type]
    as_ratio = getattr(value, "as_integer_ratio", None)
    if as_ratio is not None and Fraction(f) < Fraction(*as_ratio()):
        f = math.nextafter(f, math.inf)
    return f


def _cited_under(mechanism: Mechanism, own: Neighbouring, asked: Neighbouring | str) -> Mechanism:
    if Neighbouring.parse(asked) is not own:
        raise UnsupportedEventError(
            f"{mechanism!r} is cited for the {own.value} relation and cannot be accounted under "
            f"{Neighbouring.parse(asked).value} (restate the theorem for that relation)"
        )
    return mechanism


def _source(source: object) -> str:
    if not isinstance(source, str):
        raise ParameterTypeError("source", source, "a non-empty str naming the theorem")
    if not source.strip():
        raise ParameterError("source", source, "a non-empty str naming the theorem")
    return source


@dataclass(frozen=True, init=False, repr=False)
class ApproxDP(Mechanism):
    """A mechanism known (by a cited theorem) to be ``(ε, δ)``-DP, and nothing more.

    Amplification by shuffling, the shuffle summation protocols, advanced compositions and
    returning users give such guarantees. Every answer is the worst case over all
    ``(ε, δ)``-DP mechanisms: the pair of Kairouz, Oh & Viswanath 2015 (their Theorem 3.3's
    ``M̃``), which with probability ``δ`` reveals the input (loss ``+∞``) and otherwise is
    randomized response, ``P = (δ, (1-δ) e^ε/(1+e^ε), (1-δ)/(1+e^ε), 0)`` against ``Q`` its
    reverse. Every ``(ε, δ)``-DP pair is a post-processing of it, so nothing is optimistic.
    With ``δ = 0`` it answers exactly as :class:`PureDP`.

    Parameters
    ----------
    epsilon : float
        The cited ``ε >= 0`` (rounded up to a float when given as a Fraction or mpf).
    delta : float
        The cited ``δ ∈ [0, 1)`` (rounded up likewise).
    source : str
        Where the guarantee comes from, kept in the ledger.
    neighbouring : Neighbouring or str
        The relation of the cited theorem (replace-one by default).
    """

    eps: float
    dlt: float
    source: str
    neighbouring: Neighbouring

    def __init__(
        self,
        epsilon: float | Fraction,
        delta: float | Fraction,
        source: str,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE_ONE,
    ) -> None:
        v.nonnegative("epsilon", epsilon)
        d = v.real("delta", delta)
        if not 0 <= d < 1:
            raise ParameterError("delta", delta, "a real number in [0, 1)")
        object.__setattr__(self, "eps", _float_at_least(epsilon))
        object.__setattr__(self, "dlt", _float_at_least(delta))
        object.__setattr__(self, "source", _source(source))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(neighbouring))

    def __repr__(self) -> str:
        return (
            f"ApproxDP(epsilon={self.eps!r}, delta={self.dlt!r}, source={self.source!r}, "
            f"neighbouring={self.neighbouring.value!r})"
        )

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        return _cited_under(self, self.neighbouring, neighbouring)

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``δ + (1 - δ) (e^ε - e^{ε'})_+ / (1 + e^ε)`` (KOV 2015): interval arithmetic."""
        eps_prime = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        with precision(dps):
            base = iv.mpf(self.dlt)
            if eps_prime >= self.eps:
                return Enclosure.from_interval(base)
            e = iv.exp(iv.mpf(self.eps))
            value = base + (1 - base) * (e - iv.exp(iv.mpf(eps_prime))) / (1 + e)
            return Enclosure(max(mp.zero, lower(value)), min(mp.one, upper(value)))

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The inverse of :meth:`delta`: ``ln(e^ε - (δ' - δ)(1 + e^ε)/(1 - δ))``, ``∞`` for ``δ' < δ``."""
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        if d < self.dlt:
            return Enclosure(mp.inf, mp.inf)
        with precision(dps):
            e = iv.exp(iv.mpf(self.eps))
            ratio = e - (iv.mpf(d) - iv.mpf(self.dlt)) * (1 + e) / (1 - iv.mpf(self.dlt))
            if upper(ratio) <= 1:
                return Enclosure.exact(0)
            if lower(ratio) < 1:
                ratio = iv.mpf([1, upper(ratio)])
            return Enclosure.from_interval(iv.log(ratio))

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """Infinite when ``δ > 0`` (the pair has an atom of loss ``+∞``); else :class:`PureDP`'s."""
        a = v.order("alpha", alpha)
        v.dps("dps", dps)
        if self.dlt > 0:
            return Enclosure(mp.inf, mp.inf)
        if self.eps == 0:
            return Enclosure.exact(0)
        return PureDP(self.eps, self.source).rdp(a, dps)

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """``ε`` when ``δ = 0``, else ``∞``."""
        v.dps("dps", dps)
        return Enclosure.exact(self.eps) if self.dlt == 0 else Enclosure(mp.inf, mp.inf)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``ε²/2`` when ``δ = 0`` (Bun–Steinke 2016 Prop. 3.3), else ``∞``."""
        v.dps("dps", dps)
        v.positive("rtol", rtol)
        if self.dlt > 0:
            return Enclosure(mp.inf, mp.inf)
        if self.eps == 0:
            return Enclosure.exact(0)
        return PureDP(self.eps, self.source).zcdp_rho(dps, rtol)


#: The most neighbouring pairs an :class:`AddRemoveSum` computes (two per shift ``0..Δ``).
MAX_ADD_REMOVE_PAIRS = 130


@dataclass(frozen=True)
class AddRemoveSum(Mechanism):
    """A :class:`DistributedSum` under the add-remove relation: a removed user takes their share along.

    With ``X_m`` the sum of ``m`` shares, the larger dataset has ``n = users`` participants and
    the smaller ``n - 1``. Removing a user whose value is ``x`` (``|x| <= Δ``) turns
    ``S + x + X_n`` into ``S + X_{n-1}``, so the pairs are ``(X_n + k, X_{n-1})`` (remove) and
    ``(X_{n-1} + k, X_n)`` (add, after the shift ``y -> k - y`` for symmetric noise) for
    ``k = 0..Δ`` (``-Δ..Δ`` for asymmetric noise): the variances differ, so ``k = 0`` already
    leaks, and no single pair is known to dominate the others; every one is computed and the
    worst taken. ``δ(ε)`` and ``ε(δ)`` are exact (certified window sums). The two laws have
    different tails, so the privacy loss is unbounded (no pure ε, no zCDP), and the Rényi
    divergence of such a pair has no certified tail bound here: :meth:`rdp` is refused, and so
    is composition by the PLD route (no dominating pair is certified).

    More noise does not make such a release arbitrarily private: as the variance grows the pair
    ``(X_n, X_{n-1})`` tends to two centred Gaussians with variance ratio ``(n-1)/n``, whose
    ``ε(10⁻⁶)`` is about 1.03 for ``n = 10``, 0.071 for ``n = 100`` and 0.0049 for ``n = 1000``
    (a float check with scipy); :func:`~accounting.calibration.calibrate` says so when a target
    is below that floor.
    """

    sum: DistributedSum

    def __post_init__(self) -> None:
        if not isinstance(self.sum, DistributedSum):
            raise ParameterTypeError("sum", self.sum, "a DistributedSum")
        if self.sum.users < 2:
            raise UnsupportedEventError(
                f"users={self.sum.users} under add-remove: removing the only user leaves no noise at all"
            )
        try:
            self.sum.noise_of(self.sum.users - 1)
        except UnsupportedError as err:
            raise UnsupportedEventError(f"{self.sum!r} under add-remove: {err}") from None
        if 2 * len(self._shifts()) > MAX_ADD_REMOVE_PAIRS:
            raise UnsupportedEventError(
                f"sensitivity={self.sum.sensitivity} under add-remove needs "
                f"{2 * len(self._shifts())} neighbouring pairs (at most {MAX_ADD_REMOVE_PAIRS} are computed)"
            )

    def _shifts(self) -> list[int]:
        d = int(self.sum.sensitivity)
        symmetric = self.sum.noise_of(self.sum.users).symmetric
        return list(range(0, d + 1)) if symmetric else list(range(-d, d + 1))

    def pairs(self) -> list[tuple[LatticeNoise, LatticeNoise]]:
        """Every neighbouring pair ``(P, Q)``: removals, then additions."""
        large = self.sum.noise_of(self.sum.users)
        small = self.sum.noise_of(self.sum.users - 1)
        ks = self._shifts()
        removals: list[tuple[LatticeNoise, LatticeNoise]] = [(Shifted(large, k), small) for k in ks]
        return removals + [(Shifted(small, k), large) for k in ks]

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        return _max([epsilon_for_delta(p, q, d, dps) for p, q in self.pairs()])

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        eps = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        return _max([hockey_stick(p, q, eps, dps) for p, q in self.pairs()])

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        v.order("alpha", alpha)
        v.dps("dps", dps)
        if math.isinf(alpha):
            return self.pure_epsilon(dps)
        raise UnsupportedEventError(
            "the Rényi divergence of a distributed sum under add-remove (X_n + k against X_{n-1}) "
            "has no certified tail bound here: ask for ε(δ) of a single release"
        )

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """``∞``: the sums of ``n`` and ``n - 1`` shares have different tails."""
        v.dps("dps", dps)
        return Enclosure(mp.inf, mp.inf)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``∞``: ``D_α`` of laws with different tails grows faster than ``α`` (or is infinite)."""
        v.dps("dps", dps)
        v.positive("rtol", rtol)
        return Enclosure(mp.inf, mp.inf)


@dataclass(frozen=True)
class DistributedVectorSum(Mechanism):
    """``n`` users each add an independent noise share to every coordinate of an integer vector
    query in ``Z^d``; the server sees only the sum, and the query's change is bounded in ℓ2.

    A user's change ``v ∈ Z^d`` of the query has ``‖v‖₂ <= l2`` (and ``‖v‖₁ <= l1`` when given):
    for example a bias vector ``x·y`` with ``‖x‖ <= 1`` or the upper triangle of ``x xᵀ``, scaled
    and rounded to the integers. Composing the ``d`` coordinates as scalar sums (each at the
    per-coordinate bound) assumes every coordinate moves by its full bound at once, about ``√d``
    too much noise under an ℓ2 bound; here the guarantee is the closed form for the vector:

    * ``Skellam`` shares (a Skellam of variance ``σ²`` on each coordinate): RDP at integer orders
      ``α >= 2``, Agarwal–Kairouz–Liu 2021 Thm 3.5 (:func:`accounting.bounds.skellam_rdp_akl`);
      an asymmetric or offset Skellam is a symmetric one of variance ``2 min(μ1, μ2)`` plus
      independent noise (post-processing), and is accounted as that;
    * ``DiscreteGaussian`` (or ``SumOfDiscreteGaussians``) shares with ``σ >= 1/2``: zCDP,
      Kairouz–Liu–Steinke 2021 (:func:`accounting.bounds.sum_discrete_gaussians_rho_kls`).

    Parameters are read toward less noise (a variance or σ rounded down to a float), so every
    answer is an upper bound. Between integer orders a Skellam sum's RDP is the chord of AKL's
    values (see :meth:`rdp`).

    **Relation.** The sensitivities are those of replace-one: one person's data replaced, every
    noise share present. Under add-remove a removed user would take a share along (the laws of
    the two sums differ in variance, which no closed form here covers): refused with
    :class:`~accounting.errors.UnsupportedEventError`. A release where users' data come and go
    but the ``n`` shares stay (silos adding noise for their users) is a shift of the sum: state
    that shift's bounds and account it under replace-one.

    **(ε, δ).** No certified dominating pair is known for a shift bounded in ℓ2 only, so
    :meth:`epsilon` and :meth:`delta` are refused and the PLD route of the
    :class:`~accounting.accountant.Accountant` refuses the event; the RDP route (which ``"auto"``
    reaches) converts the curve. For a scalar (``dimension = 1``),
    :class:`DistributedSum` is exact and tighter.

    Parameters
    ----------
    share : LatticeNoise
        Each user's noise share per coordinate.
    users : int
        ``n >= 1``, the shares summed.
    dimension : int
        ``d >= 1``, the coordinates of the query.
    l2 : float
        The ℓ2 sensitivity ``Δ2 >= 1`` (a float rounded up from any real given; in one
        dimension the integer ``⌊Δ2⌋`` is used).
    l1 : float, optional
        An ℓ1 sensitivity ``Δ1 >= 1``; by default ``min(√d Δ2, Δ2²)``, which every integer
        vector of norm ``<= Δ2`` meets (see :func:`accounting.bounds.skellam_rdp_akl`).
    """

    share: NoiseDistribution
    users: int
    dimension: int
    l2: float
    l1: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.share, LatticeNoise):
            raise ParameterTypeError(
                "share", self.share, "lattice noise (a Skellam or DiscreteGaussian share)"
            )
        object.__setattr__(self, "users", v.integer("users", self.users, minimum=1))
        object.__setattr__(self, "dimension", v.integer("dimension", self.dimension, minimum=1))
        why = "a nonzero integer vector has norm >= 1"
        v.interval("l2", self.l2, 1, math.inf, low_open=False, why=why)
        object.__setattr__(self, "l2", _float_at_least(self.l2))
        if self.l1 is not None:
            v.interval("l1", self.l1, 1, math.inf, low_open=False, why=why)
            object.__setattr__(self, "l1", _float_at_least(self.l1))
        noise = self.total_noise
        if isinstance(noise, SumOfDiscreteGaussians) and _sigma_down(noise) < 0.5:
            raise ParameterError(
                "share", self.share, "a discrete Gaussian share with σ >= 1/2 (Kairouz–Liu–Steinke 2021)"
            )
        if not isinstance(noise, Skellam | SumOfDiscreteGaussians):
            raise UnsupportedError(
                f"no closed-form bound for a vector sum of {self.share!r} shares: Skellam and "
                "discrete Gaussian shares have one (use DistributedSum per coordinate)"
            )

    @property
    def total_noise(self) -> LatticeNoise:
        """The law of the sum of all users' shares on each coordinate (:class:`DistributedSum`'s)."""
        return DistributedSum(self.share, self.users).total_noise

    @property
    def bound_arguments(self) -> dict[str, Any]:
        """The sensitivity arguments of the closed forms of :mod:`accounting.bounds`
        (``sensitivity``, ``dimension``, ``l1``)."""
        l2: float | int = math.floor(self.l2) if self.dimension == 1 else self.l2
        return {"sensitivity": l2, "dimension": self.dimension, "l1": self.l1}

    def _skellam_rdp(self, order: int) -> float:
        noise = self.total_noise
        assert isinstance(noise, Skellam)
        variance = _float_at_most(2 * min(Fraction(noise.mu1), Fraction(noise.mu2)))
        return bounds.skellam_rdp_akl(order, variance, **self.bound_arguments)

    @functools.cached_property
    def _kls_rho(self) -> float:
        """KLS's ρ, computed once (the RDP route asks at many orders; ξ costs tens of ms)."""
        noise = self.total_noise
        assert isinstance(noise, SumOfDiscreteGaussians)
        return bounds.sum_discrete_gaussians_rho_kls(_sigma_down(noise), noise.count, **self.bound_arguments)

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        """Itself under replace-one; refused under add-remove (see the class docstring)."""
        if Neighbouring.parse(neighbouring) is Neighbouring.REPLACE_ONE:
            return self
        raise UnsupportedEventError(
            f"{self!r} under add-remove: a removed user takes a noise share along, and no closed form "
            "here covers sums of different variances; state the sensitivities of one person's change "
            "with every share present and account under replace-one"
        )

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        v.open_unit("delta", delta)
        v.dps("dps", dps)
        raise UnsupportedError(self._no_pair())

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        v.nonnegative("epsilon", epsilon)
        v.dps("dps", dps)
        raise UnsupportedError(self._no_pair())

    def _no_pair(self) -> str:
        return (
            "a vector sum bounded in ℓ2 has no certified dominating pair here, only an RDP curve: "
            "compose it in an Accountant and ask it (route 'rdp', which 'auto' reaches)"
        )

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``α ρ`` of KLS (discrete Gaussians); AKL's bound (Skellam) at integer orders, between them
        its chord; ``∞`` at ``α = ∞``.

        AKL's theorem holds at integer orders only. ``f(α) = (α - 1) D_α`` is convex (the log of
        ``E_Q[(P/Q)^α]``) with ``f(1) = 0``, so on ``[k - 1, k]`` it lies below the chord through
        ``(k - 2) AKL(k - 1)`` and ``(k - 1) AKL(k)`` (through 0 at ``α = 1``: ``D_α <= AKL(2)``
        on ``(1, 2]``). Continuous in ``α``, unlike ``AKL(⌈α⌉)``, so the accountant's search over
        real orders is not misled by steps.
        """
        a = v.order("alpha", alpha)
        v.dps("dps", dps)
        if math.isinf(a):
            return Enclosure(mp.inf, mp.inf)
        if isinstance(self.total_noise, Skellam):
            k = max(2, math.ceil(a))
            top = self._skellam_rdp(k)
            if a == k or k == 2:
                return Enclosure(mp.zero, mp.mpf(top))
            below = self._skellam_rdp(k - 1)
            with mp.workdps(30):
                am = mp.mpf(a)
                chord = (k - am) * (k - 2) * mp.mpf(below) + (am - k + 1) * (k - 1) * mp.mpf(top)
                return Enclosure(mp.zero, mp.mpf(float_up(chord / (am - 1))))
        with mp.workdps(30):
            return Enclosure(mp.zero, mp.mpf(float_up(mp.mpf(a) * mp.mpf(self._kls_rho))))

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """``∞``: the privacy loss of a shifted Skellam or sum of discrete Gaussians is unbounded."""
        v.dps("dps", dps)
        return Enclosure(mp.inf, mp.inf)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """KLS's ρ; for Skellam ``sup_α D_α/α <= AKL(2)``.

        For ``α ∈ (k-1, k]``, ``D_α/α <= AKL(k)/(k-1)``, which decreases in ``k`` (see
        :meth:`accounting.noise.Skellam.rho_tail`; the argument holds with ``‖v‖₂²`` and ``‖v‖₁``
        in place of ``Δ²`` and ``Δ``), so its value at ``k = 2`` bounds every order. ``rtol`` is unused.
        """
        v.dps("dps", dps)
        v.positive("rtol", rtol)
        if isinstance(self.total_noise, Skellam):
            return Enclosure(mp.zero, mp.mpf(self._skellam_rdp(2)))
        return Enclosure(mp.zero, mp.mpf(self._kls_rho))


def _sigma_down(noise: SumOfDiscreteGaussians) -> float:
    """σ of a sum of discrete Gaussians as a float rounded down (less noise: a larger bound)."""
    with precision(DEFAULT_DPS):
        return float_down(lower(to_interval(noise.sigma)))


def _float_at_most(value: Fraction) -> float:
    """The largest float ``<= value``, compared exactly."""
    f = float(value)
    return math.nextafter(f, -math.inf) if Fraction(f) > value else f
