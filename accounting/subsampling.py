"""Subsampled releases: Poisson sampling and sampling without replacement, certified.

A subsampled release runs a mechanism on a random batch of the dataset:

* :class:`PoissonSampled` — each record enters the batch independently with probability ``q``
  (DP-SGD; client sampling in federated learning);
* :class:`SampledWithoutReplacement` — a batch of fixed size ``m`` drawn uniformly, ``q = m/n``.

**Sensitivity convention** (the one of ``dp_accounting``): the mechanism's sensitivity ``Δ`` is
the *contribution bound of one record*, ``|f(S ∪ {x}) - f(S)| <= Δ`` for every batch ``S``. So a
record moves the released sum by at most ``Δ`` when it is added or removed, and by ``2Δ`` when it
is replaced by another.

**Dominating pairs.** Every answer is the answer of a pair ``(P, Q)`` of output laws that
dominates every neighbouring pair (Zhu, Dong & Wang 2022, "Optimal accounting of differential
privacy via characteristic function": by their composition theorem for dominating pairs, a
dominating pair of each mechanism of an adaptive composition gives one of the composition).
With ``X`` the noise (for a distributed sum, the sum of the shares, see below) the pairs are the
:class:`MixturePair`\\ s

=====================  ====================  ==========================================================
sampling               relation              pairs ``(P, Q)``
=====================  ====================  ==========================================================
Poisson                add-remove            remove ``((1-q)X + q(X+Δ), X)``; add ``(X, (1-q)X + q(X+Δ))``
Poisson                replace-one           ``((1-q)X + q(X+Δ), (1-q)X + q(X-Δ))``
without replacement    replace-one           the same pair as Poisson replace-one
without replacement    add-remove            remove ``((1-q)X + q(X+2Δ), X)``; add the reverse
=====================  ====================  ==========================================================

* *Poisson, add-remove* (Zhu, Dong & Wang 2022, their Poisson-subsampling pairs; the pairs of
  ``dp_accounting``'s PLD accountant): with probability ``1 - q`` the record is not sampled and
  both outputs have the law of ``f(S) + X``; otherwise the larger dataset adds ``f(x)``,
  ``|f(x)| <= Δ``. The pair ``(X + s, X)`` with ``|s| <= Δ`` is a post-processing of
  ``(X + Δ, X)`` for symmetric log-concave ``X`` (a monotone likelihood ratio; see :mod:`accounting.pld`),
  and the kernel that maps one to the other maps the mixtures to the mixtures. Each direction is
  composed over the whole ledger separately and the larger δ is taken (Zhu–Dong–Wang: under
  add-remove every neighbouring pair of the composition is of one direction for all mechanisms).
* *Poisson, replace-one*: the pair of ``dp_accounting``'s ``REPLACE_ONE`` and of Lebeda, Regehr,
  Kamath & Steinke 2024 ("Avoiding pitfalls for privacy accounting of subsampled mechanisms
  under composition"). That it dominates every pair
  ``((1-q)X + q(X+a), (1-q)X + q(X+b))`` with ``|a|, |b| <= Δ`` is taken from that work; it is
  checked numerically for lattice noise by this module's tests, not proved here.
* *Without replacement, replace-one*: the replaced record (same index) is in the batch with
  probability ``q``; conditionally on the rest of the batch the pair is the one above.
* *Without replacement, add-remove* (derived here): let the larger dataset be ``D' = D ∪ {x}``.
  A uniform ``m``-subset of ``D'`` contains ``x`` with probability ``q' = m/|D'|``, and then its
  other ``m - 1`` records are a uniform ``(m-1)``-subset ``S`` of ``D``; a uniform ``m``-subset of
  ``D`` is ``S ∪ {y}`` with ``y`` uniform outside ``S``. Coupling the two through ``(S, y)``,
  ``M(D') = E_{S,y}[(1-q') N + q' (N + f(x) - f(y))]`` and ``M(D) = E_{S,y}[N]`` with
  ``N = f(S) + f(y) + X``: a mixture over ``(S, y)``, with the same weights, of subsampled pairs
  whose shift ``f(x) - f(y)`` is at most ``2Δ`` (triangle inequality). By joint convexity of the
  hockey-stick divergence each ``H_{e^ε}`` of ``(M(D'), M(D))`` is at most that of
  ``((1-q')X + q'(X+2Δ), X)``, and ``q' <= q`` may be replaced by ``q``: the hockey-stick
  divergence of ``((1-w)Q + wP, Q)`` is convex in ``w`` and zero at ``w = 0`` for ``ε >= 0``,
  hence nondecreasing (for ``ε < 0`` the same holds of the reversed pair). So ``rate`` need only
  be an upper bound on ``m`` over the size of the *larger* dataset. The shift ``2Δ`` makes this
  pair markedly worse than Poisson's at the same ``q`` (Lebeda et al. 2024 find an order of
  magnitude in ε for DP-SGD-like parameters).

With ``q = 1`` the pairs are the unsampled mechanism's: ``(X + Δ, X)`` under add-remove (Poisson),
``(X + 2Δ, X)`` under replace-one (a replaced record moves the sum by ``2Δ``).

**Distributed sums** (Kairouz, Liu & Steinke 2021, the distributed discrete Gaussian, and the
Skellam and Pólya shares of :class:`~accounting.mechanisms.DistributedSum`): the noise is the
sum of the shares of the clients that take part.

* Without replacement, ``users`` is the batch size ``m``: every released sum holds exactly ``m``
  shares, in both neighbouring datasets and under both relations, so ``X`` is the sum of ``m``
  shares.
* Poisson: the batch size is random, so ``users`` must be a *guaranteed lower bound* on the
  number of shares in every released sum (a protocol that tops up with dummy clients, or
  refuses to release a smaller sum). Under replace-one both datasets have the same
  participants but one, so every conditional pair is a subsampled pair of ``X_k`` with
  ``k >= users`` shares, a post-processing (adding the extra shares) of the pair of ``X_users``.
  Under add-remove the removed record takes its own share along, the two laws have different
  noise, and no dominating pair is certified: refused (:class:`~accounting.errors.UnsupportedEventError`).

**Answers.** ``epsilon``, ``delta`` and ``rdp`` take the neighbouring relation explicitly and
return certified :class:`~accounting.certified.Enclosure`\\ s. Lattice noise is answered by
certified window sums over the mixture pair (:mod:`accounting.divergence`, with
:class:`LatticeMixture` for the sides); continuous Gaussian and Laplace noise by the exact
threshold form of the hockey-stick divergence of a pair with a monotone privacy loss. Every
mixture pair here has a nondecreasing loss ``L(x) = ln(P(x)/Q(x))``: with ``ρ_s(x) = f(x-s)/f(x)``
(nondecreasing in ``x`` for ``s >= 0`` and nonincreasing for ``s <= 0`` when the density ``f`` is
log-concave), ``P/Q = ((1-α) + α ρ_a)/((1-β) + β ρ_b)`` with ``a >= 0 >= b`` has a nondecreasing
numerator and a nonincreasing denominator. The ``add`` direction is written with ``x -> -x``
(``X`` is symmetric) so that it has that form too.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import mpmath
import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.certified import (
    Enclosure,
    Interval,
    Mpf,
    exact_fraction,
    float_up,
    log1p,
    lower,
    precision,
    to_interval,
    to_mpf,
    upper,
)
from accounting.divergence import _holder_mass, epsilon_for_delta, hockey_stick, renyi_sum
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError, UnsupportedEventError
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    DEFAULT_DPS,
    Gaussian,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
    RenyiPrior,
    Shifted,
)
from accounting.search import certify_upward
from accounting.special import erfc as _erfc

if TYPE_CHECKING:
    from accounting.pld import PrivacyLossDistribution

__all__ = [
    "LatticeMixture",
    "MixturePair",
    "PoissonSampled",
    "SampledWithoutReplacement",
]

FloatArray = NDArray[np.float64]

#: The largest integer order whose Rényi divergence is summed term by term (binomial expansion).
_MAX_INTEGER_ORDER = 10_000


# ---------------------------------------------------------------------------------------
# Certified tails of the continuous noise
# ---------------------------------------------------------------------------------------


def _small_tail(noise: Gaussian | Laplace, z: Interval, scale: Interval) -> tuple[Interval, bool]:
    """The smaller tail of ``X`` at ``z``: ``(P(X > z), True)`` when ``z >= 0``, else ``(P(X <= z), False)``.

    ``scale`` is ``σ√2`` for the Gaussian and ``b`` for Laplace noise (an enclosure). Returning
    the smaller side keeps the relative precision of a difference of tails.
    """
    mid = (lower(z) + upper(z)) / 2
    upper_side = mid >= 0
    w = z if upper_side else -z  # P(X <= z) = P(X > -z): X is symmetric
    if isinstance(noise, Gaussian):
        tail = _erfc(w / scale) / 2
    else:
        w_lo, w_hi = lower(w), upper(w)
        if w_lo >= 0:
            tail = iv.exp(-w / scale) / 2
        else:  # an interval straddling 0 (only at a kink): the hull of both branches
            left = 1 - iv.exp(iv.mpf([w_lo, 0]) / scale) / 2
            right = iv.exp(-iv.mpf([0, max(mp.zero, w_hi)]) / scale) / 2
            tail = iv.mpf([min(lower(left), lower(right)), max(upper(left), upper(right))])
    return tail, upper_side


def _tail_scale(noise: Gaussian | Laplace) -> Interval:
    """``σ√2`` (Gaussian) or ``b`` (Laplace) at the current precision: the scale of :func:`_small_tail`."""
    if isinstance(noise, Gaussian):
        return to_interval(noise.sigma) * iv.sqrt(2)
    return to_interval(noise.scale)


_ONE = iv.mpf(1)


def _mass_between(first: tuple[Interval, bool] | None, second: tuple[Interval, bool] | None) -> Interval:
    """``P(z1 < X <= z2)`` from the small tails at ``z1`` and ``z2`` (``None``: ``∓∞``)."""
    if first is None and second is None:
        return _ONE
    if first is None:
        assert second is not None
        t2, up2 = second
        mass = _ONE - t2 if up2 else t2
    elif second is None:
        t1, up1 = first
        mass = t1 if up1 else _ONE - t1
    else:
        (t1, up1), (t2, up2) = first, second
        if up1 and up2:
            mass = t1 - t2
        elif not up1 and not up2:
            mass = t2 - t1
        else:  # z1 on the lower side, z2 on the upper side
            mass = _ONE - t1 - t2
    if lower(mass) >= 0:
        return mass
    return iv.mpf([0, max(mp.zero, upper(mass))])


# ---------------------------------------------------------------------------------------
# A mixture of lattice noise and its shift
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LatticeMixture(LatticeNoise):
    """``(1 - weight)·X + weight·(X + shift)``: one side of a subsampled lattice pair.

    Only its law is used (PMF tables, tail bounds, window): a mixture is not log-concave in
    general, and its own shift pairs are never formed, so :meth:`renyi_prior`,
    :meth:`max_privacy_loss` and :meth:`rho_tail` refuse.

    Parameters
    ----------
    base : LatticeNoise
        The noise ``X``.
    weight : Fraction
        The mixture weight in ``[0, 1]`` (exact).
    shift : int
        The shift of the second component.
    """

    base: LatticeNoise
    weight: Fraction
    shift: int

    def __post_init__(self) -> None:
        if not isinstance(self.base, LatticeNoise):
            raise ParameterTypeError("base", self.base, "a LatticeNoise")
        w = (
            Fraction(self.weight)
            if isinstance(self.weight, int | Fraction)
            else _fraction("weight", self.weight)
        )
        if not 0 <= w <= 1:
            raise ParameterError("weight", self.weight, "a real number in [0, 1]")
        object.__setattr__(self, "weight", w)
        object.__setattr__(self, "shift", v.integer("shift", self.shift))

    @property
    def log_concave(self) -> bool:
        return self.weight in (0, 1) or self.shift == 0

    @property
    def symmetric(self) -> bool:
        return self.base.symmetric and (self.weight == 0 or self.shift == 0)

    def support(self) -> tuple[float, float]:
        lo, hi = self.base.support()
        if self.weight == 0:
            return (lo, hi)
        if self.weight == 1:
            return (lo + self.shift, hi + self.shift)
        return (min(lo, lo + self.shift), max(hi, hi + self.shift))

    def _center(self) -> float:
        return self.base._center()

    def _weights(self) -> tuple[Interval, Interval]:
        w = to_interval(self.weight)
        return 1 - w, w

    def _combine(self, table: list[Interval], lo: int, hi: int, start: int) -> list[Interval]:
        """``(1-w) X(x) + w X(x - s)`` for ``x = lo..hi`` from a base table starting at ``start``."""
        keep, move = self._weights()
        out = []
        for x in range(lo, hi + 1):
            value = iv.mpf(0)
            if self.weight != 1:
                value += keep * table[x - start]
            if self.weight != 0:
                value += move * table[x - self.shift - start]
            out.append(value)
        return out

    def pmf_intervals(self, lo: int, hi: int, dps: int = DEFAULT_DPS) -> list[Interval]:
        lo = v.integer("lo", lo)
        hi = v.integer("hi", hi)
        if hi < lo:
            raise ParameterError("hi", hi, f"an integer >= lo={lo}")
        start = lo - max(self.shift, 0)
        table = self.base.pmf_intervals(start, hi - min(self.shift, 0), dps)
        with precision(v.dps("dps", dps)):
            return self._combine(table, lo, hi, start)

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        start = lo - max(self.shift, 0)
        return self._combine(self.base._intervals(start, hi - min(self.shift, 0)), lo, hi, start)

    def _base_tail(self, t: int, upper_tail: bool) -> Interval:
        lo, hi = self.base.support()
        if upper_tail:
            if t <= lo:
                return iv.mpf(1)
            if t > hi:
                return iv.mpf(0)
            return iv.mpf([0, min(mp.one, upper(self.base._sf(t)))])
        if t >= hi:
            return iv.mpf(1)
        if t < lo:
            return iv.mpf(0)
        return iv.mpf([0, min(mp.one, upper(self.base._cdf(t)))])

    def _sf(self, t: int) -> Interval:
        keep, move = self._weights()
        return keep * self._base_tail(t, True) + move * self._base_tail(t - self.shift, True)

    def _cdf(self, t: int) -> Interval:
        keep, move = self._weights()
        return keep * self._base_tail(t, False) + move * self._base_tail(t - self.shift, False)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        raise UnsupportedError("a subsampling mixture is one side of a pair, not noise to shift")

    def max_privacy_loss(self, shift: int) -> Mpf:
        raise UnsupportedError("a subsampling mixture is one side of a pair, not noise to shift")

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        raise UnsupportedError("a subsampling mixture is one side of a pair, not noise to shift")

    def variance(self) -> float:
        w = float(self.weight)
        return self.base.variance() + w * (1 - w) * self.shift**2

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = np.asarray(x, dtype=np.float64)
        w = float(self.weight)
        return np.asarray((1 - w) * self.base.pmf(xs) + w * self.base.pmf(xs - self.shift), dtype=np.float64)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.generic]:
        draws = np.asarray(self.base.sample(rng, size))
        moved = rng.random(draws.shape) < float(self.weight)
        return np.asarray(draws + np.where(moved, self.shift, 0), dtype=np.int64)


def _fraction(name: str, value: object) -> Fraction:
    """A real validated by :mod:`accounting.validate`, as the exact rational it stores."""
    v.real(name, value)
    return exact_fraction(value, name)


# ---------------------------------------------------------------------------------------
# The mixture pair
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MixturePair:
    """The pair ``P = (1-α)X + α(X + a)``, ``Q = (1-β)X + β(X + b)`` with ``a >= 0 >= b``.

    ``X`` is symmetric and log-concave (continuous :class:`~accounting.noise.Gaussian` or
    :class:`~accounting.noise.Laplace`, or lattice noise), so the privacy loss
    ``L(x) = ln(P(x)/Q(x))`` is nondecreasing in ``x`` (module docstring). Special cases: the
    shift pair ``(X + Δ, X)`` (``α = 1``, ``β = 0``), the subsampled pairs of the module table,
    and their reverses (:meth:`reversed`).

    Parameters
    ----------
    noise : NoiseDistribution
        ``X``.
    p_weight, q_weight : Fraction
        ``α`` and ``β`` in ``[0, 1]`` (exact rationals; a float is the rational it stores).
    p_shift, q_shift : float
        ``a >= 0`` and ``b <= 0`` (integers for lattice noise).
    """

    noise: NoiseDistribution
    p_weight: Fraction
    p_shift: float
    q_weight: Fraction = Fraction(0)
    q_shift: float = 0.0

    def __post_init__(self) -> None:
        noise = self.noise
        lattice = isinstance(noise, LatticeNoise)
        if not (isinstance(noise, Gaussian | Laplace) or lattice):
            raise ParameterTypeError("noise", noise, "Gaussian, Laplace or lattice noise")
        if isinstance(noise, LatticeNoise) and not (noise.symmetric and noise.log_concave):
            raise UnsupportedEventError(
                f"noise {noise!r} is not symmetric and log-concave: a mixture pair of it has no "
                "monotone privacy loss and no single dominating pair is certified (use the RDP route)"
            )
        for name, w in (("p_weight", self.p_weight), ("q_weight", self.q_weight)):
            weight = _fraction(name, w)
            if not 0 <= weight <= 1:
                raise ParameterError(name, w, "a real number in [0, 1]")
            object.__setattr__(self, name, weight)
        shift = v.integer if lattice else v.real
        a = shift("p_shift", self.p_shift)
        b = shift("q_shift", self.q_shift)
        if a < 0:
            raise ParameterError("p_shift", self.p_shift, "a real number >= 0")
        if b > 0:
            raise ParameterError("q_shift", self.q_shift, "a real number <= 0")
        object.__setattr__(self, "p_shift", a)
        object.__setattr__(self, "q_shift", b)

    # -- structure --------------------------------------------------------------------
    @property
    def lattice(self) -> bool:
        """Whether ``X`` is lattice noise."""
        return isinstance(self.noise, LatticeNoise)

    def reversed(self) -> MixturePair:
        """The pair ``(Q, P)`` written with ``x -> -x``: ``(1-β)X + β(X - b)`` against ``(1-α)X + α(X - a)``.

        Its loss at ``-x`` is ``-L(x)``; hockey-stick and Rényi divergences are unchanged by the
        reflection.
        """
        zero: float = 0 if self.lattice else 0.0
        return MixturePair(self.noise, self.q_weight, zero - self.q_shift, self.p_weight, zero - self.p_shift)

    @property
    def shift_pair(self) -> tuple[LatticeNoise, int] | None:
        """``(X, Δ)`` when the pair is the plain shift pair ``(X + Δ, X)`` of lattice noise."""
        if self.lattice and self.p_weight == 1 and self.q_weight == 0:
            assert isinstance(self.noise, LatticeNoise)
            return self.noise, int(self.p_shift)
        return None

    def sides(self) -> tuple[LatticeNoise, LatticeNoise]:
        """``(P, Q)`` as lattice distributions (lattice noise only)."""
        if not isinstance(self.noise, LatticeNoise):
            raise UnsupportedError(
                "sides() is for lattice noise; continuous pairs are answered in closed form"
            )
        return _side(self.noise, self.p_weight, int(self.p_shift)), _side(
            self.noise, self.q_weight, int(self.q_shift)
        )

    def _components(self) -> list[tuple[Fraction, float, bool]]:
        """``(weight, location, in P)`` of the non-zero mixture components of ``P`` and ``Q``."""
        out: list[tuple[Fraction, float, bool]] = []
        for weight, loc, in_p in (
            (1 - self.p_weight, 0.0, True),
            (self.p_weight, float(self.p_shift), True),
            (1 - self.q_weight, 0.0, False),
            (self.q_weight, float(self.q_shift), False),
        ):
            if weight:
                out.append((weight, loc, in_p))
        return out

    def centers(self) -> list[float]:
        """The distinct locations of the mixture components (where tails are taken)."""
        return sorted({loc for _, loc, _ in self._components()})

    def kinks(self) -> list[float]:
        """Where the loss is not smooth: the component locations for Laplace noise, else none."""
        return self.centers() if isinstance(self.noise, Laplace) else []

    # -- the certified privacy loss ---------------------------------------------------
    def _log_ratio(self, x: Interval, s: float, scale: Interval | None = None) -> Interval:
        """``ln ρ_s(x) = ln(f(x - s)/f(x))`` in interval arithmetic (``scale``: ``2σ²`` or ``b``)."""
        if isinstance(self.noise, Gaussian):
            two_s2 = scale if scale is not None else 2 * to_interval(self.noise.sigma) ** 2
            return (2 * x * s - iv.mpf(s) ** 2) / two_s2
        assert isinstance(self.noise, Laplace)
        b = scale if scale is not None else to_interval(self.noise.scale)
        return (abs(x) - abs(x - s)) / b

    @staticmethod
    def _log_mix(weight: Fraction, log_ratio: Interval | None) -> Interval:
        """``ln((1 - w) + w e^{r})`` (``r = None``: the limit ``r -> -∞``)."""
        if weight == 0:
            return iv.mpf(0)
        w = to_interval(weight)
        if log_ratio is None:
            return log1p(-w)
        if weight == 1:
            return log_ratio
        return log1p(w * (iv.exp(log_ratio) - 1))

    def loss_limits(self) -> tuple[Interval | None, Interval | None]:
        """``L(-∞)`` and ``L(+∞)`` (``None`` where infinite), continuous noise only.

        As ``x -> +∞``, ``ρ_a -> ∞`` and ``ρ_b -> 0``, so ``L -> +∞`` when ``α > 0`` (or ``β = 1``)
        and ``L -> -ln(1-β)`` otherwise; ``x -> -∞`` is the mirror image. Laplace noise is flat
        beyond its outermost components, where the limits are attained.
        """
        if isinstance(self.noise, Laplace):
            return self.loss(iv.mpf(self.q_shift)), self.loss(iv.mpf(self.p_shift))
        a, b = float(self.p_shift), float(self.q_shift)
        alpha, beta = self.p_weight, self.q_weight
        # ln((1-w) + w ρ) with ρ -> 0 is ln(1-w); with the shift 0, ρ = 1 and the term is 0.
        p_low = self._log_mix(alpha, None) if a > 0 else iv.mpf(0)
        q_low = self._log_mix(beta, None) if b < 0 else iv.mpf(0)
        top_inf = (alpha > 0 and a > 0) or (beta == 1 and b < 0)
        bottom_inf = (beta > 0 and b < 0) or (alpha == 1 and a > 0)
        bottom = None if bottom_inf else p_low  # x -> -∞: ρ_a -> 0, and ρ_b plays no part (β b = 0)
        top = None if top_inf else -q_low  # x -> +∞: ρ_b -> 0, and ρ_a plays no part (α a = 0)
        return bottom, top

    def loss(self, x: Interval) -> Interval:
        """``L(x) = ln((1-α) + α ρ_a(x)) - ln((1-β) + β ρ_b(x))`` in interval arithmetic.

        Continuous noise only (see :meth:`losses` for many points at once).
        """
        return self.losses([x])[0]

    def losses(self, xs: Sequence[Interval | Mpf | float]) -> list[Interval]:
        """:meth:`loss` at each point of ``xs`` (the constants are enclosed once)."""
        noise = self.noise
        gaussian = isinstance(noise, Gaussian)
        if gaussian:
            assert isinstance(noise, Gaussian)
            s2 = to_interval(noise.sigma) ** 2
        else:
            assert isinstance(noise, Laplace)
            b = to_interval(noise.scale)
        terms = []
        for weight, shift, sign in (
            (self.p_weight, float(self.p_shift), 1),
            (self.q_weight, float(self.q_shift), -1),
        ):
            if weight == 0 or shift == 0:
                continue
            w = to_interval(weight)
            s_iv = iv.mpf(shift)
            slope, offset = (s_iv / s2, s_iv * s_iv / (2 * s2)) if gaussian else (s_iv, iv.mpf(0))
            terms.append((weight == 1, w, slope, offset, s_iv, sign))
        out = []
        for x in xs:
            xi = iv.mpf(x)
            total = iv.mpf(0)
            for whole, w, slope, offset, s_iv, sign in terms:
                r = xi * slope - offset if gaussian else (abs(xi) - abs(xi - s_iv)) / b
                part = r if whole else log1p(w * (iv.exp(r) - 1))
                total = total + part if sign > 0 else total - part
            out.append(total)
        return out

    def masses(self, boundaries: Sequence[Mpf]) -> list[tuple[Interval, Interval]]:
        """``(P, Q)`` masses of the cells ``(-∞, x_0], (x_0, x_1], ..., (x_{n-1}, +∞)``.

        ``boundaries`` are increasing finite numbers (floats or mpf). Each tail is evaluated once
        per boundary and component location, on its small side (:func:`_small_tail`).
        """
        noise = self.noise
        assert isinstance(noise, Gaussian | Laplace)
        scale = _tail_scale(noise)
        tails: dict[float, list[tuple[Interval, bool] | None]] = {}
        for c in self.centers():
            shifted = [iv.mpf(x) - c for x in boundaries]
            tails[c] = [None, *(_small_tail(noise, z, scale) for z in shifted), None]
        comps = [(to_interval(weight), loc, in_p) for weight, loc, in_p in self._components()]
        out = []
        for i in range(len(boundaries) + 1):
            p = iv.mpf(0)
            q = iv.mpf(0)
            for weight, loc, in_p in comps:
                mass = weight * _mass_between(tails[loc][i], tails[loc][i + 1])
                if in_p:
                    p += mass
                else:
                    q += mass
            out.append((p, q))
        return out

    # -- float helpers (choice of cells only, never certified) ------------------------
    def loss_float(self, x: FloatArray) -> FloatArray:
        """``L(x)`` in float64 (for placing cells)."""
        xs = np.asarray(x, dtype=np.float64)

        def log_ratio(s: float) -> FloatArray:
            if isinstance(self.noise, Gaussian):
                s2 = float(self.noise.sigma) ** 2
                return np.asarray((2 * xs * s - s * s) / (2 * s2), dtype=np.float64)
            lam = _scale(self.noise)
            return np.asarray((np.abs(xs) - np.abs(xs - s)) / lam, dtype=np.float64)

        def log_mix(weight: Fraction, s: float) -> FloatArray:
            if weight == 0 or s == 0:
                return np.zeros_like(xs)
            if weight == 1:
                return log_ratio(s)
            w = float(weight)
            return np.asarray(np.logaddexp(math.log1p(-w), math.log(w) + log_ratio(s)), dtype=np.float64)

        return log_mix(self.p_weight, float(self.p_shift)) - log_mix(self.q_weight, float(self.q_shift))

    def log_tails_float(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """``ln`` of ``P(X <= x)``, ``P(X > x)``, ``Q(X <= x)``, ``Q(X > x)`` in float64."""
        import scipy.special  # here: importing scipy takes a while and is rarely needed

        xs = np.asarray(x, dtype=np.float64)
        parts: dict[bool, list[tuple[FloatArray, FloatArray]]] = {True: [], False: []}
        for weight, loc, in_p in self._components():
            z = xs - loc
            if isinstance(self.noise, Gaussian):
                s = _scale(self.noise)
                low = scipy.special.log_ndtr(z / s)
                high = scipy.special.log_ndtr(-z / s)
            else:
                lam = _scale(self.noise)
                with np.errstate(divide="ignore"):
                    low = np.where(z <= 0, z / lam - math.log(2), np.log1p(-0.5 * np.exp(-np.abs(z) / lam)))
                    high = np.where(z >= 0, -z / lam - math.log(2), np.log1p(-0.5 * np.exp(-np.abs(z) / lam)))
            lw = math.log(float(weight))
            parts[in_p].append((lw + low, lw + high))
        out = []
        for in_p in (True, False):
            lows = np.logaddexp.reduce([lo for lo, _ in parts[in_p]], axis=0)
            highs = np.logaddexp.reduce([hi for _, hi in parts[in_p]], axis=0)
            out.extend([np.asarray(lows, dtype=np.float64), np.asarray(highs, dtype=np.float64)])
        return out[0], out[1], out[2], out[3]

    def window_float(self, log_mass: float) -> tuple[float, float]:
        """Floats ``x_a < x_b`` beyond which both tails of ``P`` and ``Q`` are ``e^{log_mass}`` or less."""
        scale = _scale(self.noise)
        centers = self.centers()

        def beyond(x: float, upper_side: bool) -> float:
            p_low, p_high, q_low, q_high = self.log_tails_float(np.array([x]))
            pair = (p_high, q_high) if upper_side else (p_low, q_low)
            return float(np.logaddexp(pair[0], pair[1])[0])

        lo, hi = min(centers) - scale, max(centers) + scale
        step = scale
        while beyond(lo, False) > log_mass:
            lo -= step
            step *= 2
        step = scale
        while beyond(hi, True) > log_mass:
            hi += step
            step *= 2
        return lo, hi

    def inverse_loss_float(self, targets: FloatArray, lo: float, hi: float) -> FloatArray:
        """Floats ``x`` in ``[lo, hi]`` with ``L(x)`` close to each target (vectorized bisection)."""
        t = np.asarray(targets, dtype=np.float64)
        a = np.full(t.shape, lo)
        b = np.full(t.shape, hi)
        for _ in range(80):
            mid = (a + b) / 2
            below = self.loss_float(mid) < t
            a = np.where(below, mid, a)
            b = np.where(below, b, mid)
        return np.asarray((a + b) / 2, dtype=np.float64)

    # -- single-release answers -------------------------------------------------------
    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``δ(ε) = sup_S P(S) - e^ε Q(S)`` of the pair, certified.

        Lattice noise: :func:`accounting.divergence.hockey_stick` over the sides. Continuous
        noise: the loss is nondecreasing, so with ``x_lo <= x_hi`` bracketing the threshold where
        ``L`` crosses ``ε`` (checked in interval arithmetic),
        ``δ = [P - e^ε Q](X > x_hi) + ∫_{(x_lo, x_hi]} (p - e^ε q)_+``, and the second term lies in
        ``[0, P(x_lo < X <= x_hi)]``; the bracket is bisected to the working precision.
        """
        eps = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        if self.lattice:
            p, q = self.sides()
            return hockey_stick(p, q, eps, dps)
        with precision(dps):
            x_lo, x_hi = self._threshold(mp.mpf(eps))
            (_, p_mid, p_top), (_, _, q_top) = self._three_masses(x_lo, x_hi)
            base = p_top - iv.exp(iv.mpf(eps)) * q_top
            lo = max(mp.zero, lower(base))
            hi = min(mp.one, max(mp.zero, upper(base + p_mid)))
            return Enclosure(min(lo, hi), hi)

    def _three_masses(self, x_lo: Mpf, x_hi: Mpf) -> tuple[tuple[Interval, ...], tuple[Interval, ...]]:
        """``P`` and ``Q`` masses of ``(-∞, x_lo]``, ``(x_lo, x_hi]``, ``(x_hi, ∞)`` (ends may be ``±∞``)."""
        points = [x for x in (x_lo, x_hi) if mp.isfinite(x)]
        if len(points) == 2 and points[0] == points[1]:
            points = points[:1]
        cells = iter(self.masses(points))
        zero = iv.mpf(0)
        ps: list[Interval] = []
        qs: list[Interval] = []
        edges = [mp.ninf, x_lo, x_hi, mp.inf]
        for left, right in itertools.pairwise(edges):
            if left >= right:
                ps.append(zero)
                qs.append(zero)
            else:
                p, q = next(cells)
                ps.append(p)
                qs.append(q)
        return tuple(ps), tuple(qs)

    def _threshold(self, eps: Mpf) -> tuple[Mpf, Mpf]:
        """``x_lo <= x_hi`` with ``L <= ε`` on ``(-∞, x_lo]``, ``L >= ε`` on ``[x_hi, ∞)`` (maybe ``±∞``)."""
        bottom, top = self.loss_limits()
        if bottom is not None and lower(bottom) >= eps:
            return mp.ninf, mp.ninf  # L >= ε everywhere
        if top is not None and upper(top) <= eps:
            return mp.inf, mp.inf  # L <= ε everywhere
        a, b = self._bracket(eps)
        tolerance = mp.ldexp(max(mp.one, abs(a), abs(b)), -iv.prec + 24)
        while b - a > tolerance:
            mid = (a + b) / 2
            loss = self.loss(iv.mpf(mid))
            if upper(loss) <= eps:
                a = mid
            elif lower(loss) >= eps:
                b = mid
            else:
                # The loss interval at mid contains ε: close in from both sides of mid instead.
                a = self._walk(mid, eps, -tolerance, a)
                b = self._walk(mid, eps, tolerance, b)
                break
        return a, b

    def _walk(self, x: Mpf, eps: Mpf, step: Mpf, limit: Mpf) -> Mpf:
        """The nearest point to ``x`` (steps doubling away from it, toward ``limit``) where the
        loss is certainly ``<= ε`` (``step < 0``) or ``>= ε`` (``step > 0``); ``limit`` qualifies."""
        while True:
            y = x + step
            if (step < 0 and y <= limit) or (step > 0 and y >= limit):
                return limit
            loss = self.loss(iv.mpf(y))
            if (upper(loss) <= eps) if step < 0 else (lower(loss) >= eps):
                return y
            step *= 2

    def _bracket(self, eps: Mpf) -> tuple[Mpf, Mpf]:
        """Finite ``a < b`` with ``L(a) <= ε <= L(b)`` certified, near the float threshold."""
        lo_f, hi_f = self.window_float(-60.0)
        x0 = float(self.inverse_loss_float(np.array([float(eps)]), lo_f, hi_f)[0])
        step = max(1.0, abs(x0)) * 2.0**-30
        a = mp.mpf(x0) - step
        while upper(self.loss(iv.mpf(a))) > eps:
            step *= 4
            a -= step
        step = max(1.0, abs(x0)) * 2.0**-30
        b = mp.mpf(x0) + step
        while lower(self.loss(iv.mpf(b))) < eps:
            step *= 4
            b += step
        return a, b

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``ε(δ) = inf{ε >= 0 : δ(ε) <= δ}`` of the pair, certified.

        Lattice noise: :func:`accounting.divergence.epsilon_for_delta`. Continuous noise: on the
        threshold set ``S = (x, ∞)`` the point ``(L(x), [P - e^{L(x)} Q](S))`` lies on the curve
        ``δ(ε)``, so ``x`` is bisected until it is ``δ``; the lower end is
        ``ln((P(S) - δ)/Q(S))`` (any set gives a lower bound, see :mod:`accounting.divergence`),
        and the upper end ``L(x)`` is checked with :meth:`delta` (and nudged up) before it is
        returned.
        """
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        if self.lattice:
            p, q = self.sides()
            return epsilon_for_delta(p, q, d, dps)
        if self.delta(0.0, dps).hi <= d:
            return Enclosure.exact(0)
        with precision(dps):
            dm = mp.mpf(d)
            _, top = self.loss_limits()
            lo_f, hi_f = self.window_float(-60.0)
            span = max(1.0, hi_f - lo_f)
            a = mp.mpf(lo_f) - span
            b = mp.mpf(hi_f) + span

            def curve(x: Mpf) -> Mpf:
                (_, _, p_top), (_, _, q_top) = self._three_masses(x, x)
                e = iv.exp(self.loss(iv.mpf(x)))
                return mp.mpf((p_top - e * q_top).mid)

            while curve(b) > dm:  # δ(L(x)) decreases in x: widen until the target is bracketed
                b += span
                span *= 2
            for _ in range(iv.prec + 8):
                if b - a <= mp.ldexp(max(mp.one, abs(a), abs(b)), -iv.prec + 20):
                    break
                mid = (a + b) / 2
                if curve(mid) > dm:
                    a = mid
                else:
                    b = mid
            if top is not None and lower(self.loss(iv.mpf(b))) >= upper(top):
                b = a  # past the flat top: the threshold set at the last point below it
            proposal = float_up(max(mp.zero, upper(self.loss(iv.mpf(b)))))

            def certified(epsilon: float) -> bool:
                return bool(self.delta(epsilon, dps).hi <= d)

            # ε stays a float here, raised in float arithmetic from 2^-44 relative (2^8 of its ulps).
            candidate = certify_upward(proposal, certified, nudge_exponent=-44, what="the mixture's ε(δ)")
            (_, _, p_top), (_, _, q_top) = self._three_masses(a, a)
            eps_lo = mp.zero
            if lower(p_top) > dm and lower(q_top) > 0:
                eps_lo = max(mp.zero, lower(iv.log((p_top - iv.mpf(d)) / q_top)))
            return Enclosure(min(eps_lo, mp.mpf(candidate)), mp.mpf(candidate))

    def renyi(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``D_α(P || Q)`` by certified window sums (lattice noise, real ``α > 1`` or ``∞``).

        The window is cut where Hölder's inequality bounds the left-out part,
        ``E_Q[1_T (P/Q)^α] <= Q(T)^{1-α/γ} (E_Q[(P/Q)^γ])^{α/γ}``, with the a-priori bound of the
        noise at an order ``γ > α`` (:meth:`~accounting.noise.LatticeNoise.renyi_prior`) carried
        to the mixtures by joint convexity of ``(P, Q) -> Σ P^γ Q^{1-γ}``: written over common
        weights, ``P`` and ``Q`` are mixtures of pairs ``(X + s, X + t)`` with ``|s - t| <= a - b``,
        each with ``D_γ <= D_γ(X + (a - b) || X)`` (a monotone likelihood ratio), so
        ``E_Q[(P/Q)^γ] <= (1 - w) + w e^{(γ-1) B}`` with ``w = max(α, β)``.
        """
        a_ord = v.order("alpha", alpha)
        dps = v.dps("dps", dps)
        if not self.lattice:
            raise UnsupportedError("renyi() sums lattice pairs; continuous pairs have closed forms")
        assert isinstance(self.noise, LatticeNoise)
        if math.isinf(a_ord):
            return self.max_loss(dps)
        p, q = self.sides()
        spread = int(self.p_shift - self.q_shift)
        if spread == 0:
            return Enclosure.exact(0)
        finite = all(math.isfinite(t) for t in (*p.support(), *q.support()))
        with precision(dps):
            target = mp.mpf(10) ** -(dps + 6)
            holder: tuple[float, Mpf] | None = None
            if finite:
                a = int(min(p.support()[0], q.support()[0]))
                b = int(max(p.support()[1], q.support()[1]))
            else:
                prior = self.noise.renyi_prior(spread, a_ord)
                w = to_mpf(max(self.p_weight, self.q_weight))
                if math.isinf(prior.beta):
                    bound = prior.bound
                else:
                    g = mp.mpf(prior.beta)
                    bound = mp.log((1 - w) + w * mp.exp((g - 1) * prior.bound)) / (g - 1)
                bound *= 1 + mp.ldexp(1, -mp.prec + 8)
                holder = (prior.beta, bound)
                mass = _holder_mass(target, a_ord, prior.beta, bound)
                ap, bp = p.window(mass, dps)
                aq, bq = q.window(mass, dps)
                a, b = min(ap, aq), max(bp, bq)
        return renyi_sum(p, q, a, b, a_ord, holder, dps)

    def max_loss(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """``D_∞(P || Q) = sup_x L(x)``: the limit ``L(+∞)`` of the nondecreasing loss.

        With ``M(s) = D_∞(X + s || X)`` (:meth:`~accounting.noise.LatticeNoise.max_privacy_loss`;
        ``|s|/λ`` for Laplace, ``∞`` for the Gaussian), ``ρ_a -> e^{M(a)}`` and ``ρ_b -> e^{-M(-b)}``
        as ``x -> ∞`` (symmetric noise), so ``D_∞ = ln((1-α) + α e^{M(a)}) - ln((1-β) + β e^{-M(-b)})``.
        """
        dps = v.dps("dps", dps)
        with precision(dps):
            if isinstance(self.noise, Gaussian):
                _, top = self.loss_limits()
                if top is None:
                    return Enclosure(mp.inf, mp.inf)
                return Enclosure(max(mp.zero, lower(top)), max(mp.zero, upper(top)))

            def sup_log_ratio(s: float) -> Interval | None:
                if s == 0:
                    return iv.mpf(0)
                if isinstance(self.noise, Laplace):
                    return iv.mpf(abs(s)) / to_interval(self.noise.scale)
                assert isinstance(self.noise, LatticeNoise)
                value = self.noise.max_privacy_loss(int(abs(s)))
                if mp.isinf(value):
                    return None
                slack = abs(value) * mp.ldexp(1, -mp.prec + 8)  # computed in mpf: widen
                return iv.mpf([value - slack, value + slack])

            m_a = sup_log_ratio(float(self.p_shift))
            m_b = sup_log_ratio(float(self.q_shift))
            if (m_a is None and self.p_weight > 0) or (m_b is None and self.q_weight == 1):
                return Enclosure(mp.inf, mp.inf)
            num = self._log_mix(self.p_weight, m_a) if m_a is not None else iv.mpf(0)
            den = self._log_mix(self.q_weight, -m_b if m_b is not None else None)
            value = num - den
            return Enclosure(max(mp.zero, lower(value)), max(mp.zero, upper(value)))


def _scale(noise: NoiseDistribution) -> float:
    """``σ`` of a Gaussian or ``b`` of a Laplace noise, as a float (for placing cells only)."""
    if isinstance(noise, Gaussian):
        return float(noise.sigma)
    assert isinstance(noise, Laplace)
    return float(noise.scale)


def _side(noise: LatticeNoise, weight: Fraction, shift: int) -> LatticeNoise:
    if weight == 0 or shift == 0:
        return noise
    if weight == 1:
        return Shifted(noise, shift)
    return LatticeMixture(noise, weight, shift)


# ---------------------------------------------------------------------------------------
# The events
# ---------------------------------------------------------------------------------------

_MECHANISM = "an AdditiveNoise or a DistributedSum"


@dataclass(frozen=True)
class _Subsampled:
    """What both sampling schemes share: validation, the noise, and the answers."""

    mechanism: AdditiveNoise | DistributedSum
    rate: float | Fraction

    def __post_init__(self) -> None:
        mech = self.mechanism
        if not isinstance(mech, AdditiveNoise | DistributedSum):
            raise ParameterTypeError("mechanism", mech, _MECHANISM)
        if isinstance(self.rate, bool) or not isinstance(self.rate, int | float | Fraction | mpmath.mpf):
            raise ParameterTypeError("rate", self.rate, "a real number in (0, 1]")
        if not math.isfinite(float(self.rate)):
            raise ParameterError("rate", self.rate, "a real number in (0, 1]")
        rate = _fraction("rate", self.rate)
        if not 0 < rate <= 1:
            raise ParameterError("rate", self.rate, "a real number in (0, 1]")
        noise = self.noise
        if isinstance(noise, LatticeNoise) and not (noise.symmetric and noise.log_concave):
            raise UnsupportedEventError(
                f"subsampling is certified here for symmetric log-concave noise only; {noise!r} has no "
                "single dominating pair (account the unsampled mechanism by the RDP route instead)"
            )
        if not isinstance(noise, LatticeNoise | Gaussian | Laplace):
            raise UnsupportedEventError(f"no subsampled pair for noise {noise!r}")

    @property
    def q(self) -> Fraction:
        """The sampling rate as an exact rational."""
        return _fraction("rate", self.rate)

    @property
    def noise(self) -> NoiseDistribution:
        """The noise of one release (for a distributed sum, the sum of ``users`` shares)."""
        mech = self.mechanism
        return mech.total_noise if isinstance(mech, DistributedSum) else mech.noise

    @property
    def sensitivity(self) -> float:
        """The contribution bound ``Δ`` of one record."""
        return self.mechanism.sensitivity

    def _shift(self, factor: int) -> float:
        d = self.sensitivity
        return int(d) * factor if isinstance(self.noise, LatticeNoise) else float(d) * factor

    def dominating_pairs(self, neighbouring: Neighbouring | str) -> dict[str, MixturePair]:
        """The dominating pair of each direction under ``neighbouring`` (module docstring).

        Keys are ``"replace-one"`` under replace-one and ``"remove"``, ``"add"`` under add-remove.

        Raises
        ------
        UnsupportedEventError
            For a Poisson-sampled distributed sum under add-remove.
        """
        raise NotImplementedError  # pragma: no cover - every subclass defines it

    def plds(
        self, neighbouring: Neighbouring | str, spacing: float | None = None, dps: int = DEFAULT_DPS
    ) -> dict[str, PrivacyLossDistribution]:
        """The privacy-loss distribution of one release for each direction of ``neighbouring``.

        :meth:`accounting.pld.PrivacyLossDistribution.from_pair` of each dominating pair; a
        ledger is composed by :func:`accounting.pld.compose_events` (which shares the cells of
        the two directions and one grid across events).
        """
        from accounting.pld import PrivacyLossDistribution  # pld builds on this module

        return {
            direction: PrivacyLossDistribution.from_pair(pair, spacing, dps)
            for direction, pair in self.dominating_pairs(neighbouring).items()
        }

    # -- answers ----------------------------------------------------------------------
    def delta(self, epsilon: float, neighbouring: Neighbouring | str, dps: int = DEFAULT_DPS) -> Enclosure:
        """``δ(ε)`` of one release: the largest over the dominating pairs, certified."""
        eps = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        return _max([pair.delta(eps, dps) for pair in self.dominating_pairs(neighbouring).values()])

    def epsilon(self, delta: float, neighbouring: Neighbouring | str, dps: int = DEFAULT_DPS) -> Enclosure:
        """``ε(δ)`` of one release: the largest over the dominating pairs, certified."""
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        return _max([pair.epsilon(d, dps) for pair in self.dominating_pairs(neighbouring).values()])

    def pure_epsilon(self, neighbouring: Neighbouring | str, dps: int = DEFAULT_DPS) -> Enclosure:
        """``D_∞`` of the dominating pairs (:meth:`MixturePair.max_loss`): finite for bounded loss."""
        dps = v.dps("dps", dps)
        return _max([pair.max_loss(dps) for pair in self.dominating_pairs(neighbouring).values()])

    def rdp(self, alpha: float, neighbouring: Neighbouring | str, dps: int = DEFAULT_DPS) -> Enclosure:
        """The Rényi divergence of the dominating pairs at order ``α`` (the largest), certified.

        * Lattice noise: exact, by certified window sums of each pair (:meth:`MixturePair.renyi`).
        * Gaussian noise, add-remove (Poisson, and without replacement with shift ``2Δ``): the
          exact binomial expansion of Mironov, Talwar & Zhang 2019 ("Rényi differential privacy
          of the sampled Gaussian mechanism", Section 3.3, ``A_α``) at integer ``α``, in interval
          arithmetic; the add direction's ``B_α`` is at most ``A_α`` (their Section 3.3). At a
          non-integer ``α`` (deviation: their fractional-order series is not implemented with a
          certified remainder) the enclosure is ``[D_⌊α⌋, chord]``: ``D_α`` is nondecreasing in
          ``α`` and ``(α - 1) D_α`` is convex, so it lies below the chord through the integers
          around ``α`` (through ``(1, 0)`` below 2).
        * ``α = ∞``: :meth:`pure_epsilon`.

        Raises
        ------
        UnsupportedEventError
            For continuous noise other than the Gaussian under add-remove (no exact RDP of the
            pair is known here: use the PLD route).
        """
        a = v.order("alpha", alpha)
        dps = v.dps("dps", dps)
        pairs = self.dominating_pairs(neighbouring)
        if math.isinf(a):
            return self.pure_epsilon(neighbouring, dps)
        if isinstance(self.noise, LatticeNoise):
            return _max([pair.renyi(a, dps) for pair in pairs.values()])
        if isinstance(self.noise, Gaussian) and "remove" in pairs:
            remove = pairs["remove"]
            return _sampled_gaussian_rdp(a, remove.p_weight, self.noise.sigma, float(remove.p_shift), dps)
        raise UnsupportedEventError(
            f"no exact Rényi divergence of {self!r} under {Neighbouring.parse(neighbouring).value}: "
            "the mixture pair of continuous noise has one only for the Gaussian under add-remove "
            "(Mironov–Talwar–Zhang); use the PLD route (accounting.pld.compose_events)"
        )


@dataclass(frozen=True)
class PoissonSampled(_Subsampled):
    """Each record enters the batch independently with probability ``rate``; ``mechanism`` runs on the batch.

    Parameters
    ----------
    mechanism : AdditiveNoise or DistributedSum
        The mechanism run on the batch; its sensitivity is the contribution bound of one record.
        For a :class:`~accounting.mechanisms.DistributedSum`, ``users`` is a guaranteed lower
        bound on the number of shares in every released sum (module docstring).
    rate : float or Fraction
        The sampling probability ``q ∈ (0, 1]``.
    """

    def dominating_pairs(self, neighbouring: Neighbouring | str) -> dict[str, MixturePair]:
        relation = Neighbouring.parse(neighbouring)
        x = self.noise
        q = self.q
        d = self._shift(1)
        if relation is Neighbouring.REPLACE_ONE:
            return {"replace-one": MixturePair(x, q, d, q, -d)}
        if isinstance(self.mechanism, DistributedSum):
            raise UnsupportedEventError(
                f"{self!r} under add-remove: the removed record takes its own noise share along, so the "
                "two laws differ in noise and no dominating pair is certified (under add-remove sample "
                "a fixed-size batch, SampledWithoutReplacement, or account under replace-one)"
            )
        zero: float = 0 if isinstance(x, LatticeNoise) else 0.0
        remove = MixturePair(x, q, d)
        return {"remove": remove, "add": MixturePair(x, Fraction(0), zero, q, -d)}


@dataclass(frozen=True)
class SampledWithoutReplacement(_Subsampled):
    """A batch of fixed size ``m`` drawn uniformly without replacement; ``rate = m/n``.

    Parameters
    ----------
    mechanism : AdditiveNoise or DistributedSum
        The mechanism run on the batch; its sensitivity is the contribution bound of one record.
        For a :class:`~accounting.mechanisms.DistributedSum`, ``users`` is the batch size ``m``.
    rate : float or Fraction
        ``q = m/n ∈ (0, 1]``; under add-remove, an upper bound on ``m`` over the size of the
        larger dataset.
    """

    def dominating_pairs(self, neighbouring: Neighbouring | str) -> dict[str, MixturePair]:
        relation = Neighbouring.parse(neighbouring)
        x = self.noise
        q = self.q
        if relation is Neighbouring.REPLACE_ONE:
            d = self._shift(1)
            return {"replace-one": MixturePair(x, q, d, q, -d)}
        d2 = self._shift(2)
        zero: float = 0 if isinstance(x, LatticeNoise) else 0.0
        return {"remove": MixturePair(x, q, d2), "add": MixturePair(x, Fraction(0), zero, q, -d2)}


def _max(enclosures: list[Enclosure]) -> Enclosure:
    """The enclosure of the maximum of several certified values."""
    return Enclosure(max(e.lo for e in enclosures), max(e.hi for e in enclosures))


def _sampled_gaussian_rdp(
    alpha: float, q: Fraction, sigma: float | Fraction, shift: float, dps: int
) -> Enclosure:
    """``D_α((1-q)N(0,σ²) + qN(Δ,σ²) || N(0,σ²))``: MTZ 2019 ``A_α`` at integer orders, else the chord."""
    if alpha.is_integer():
        return _mtz_integer(int(alpha), q, sigma, shift, dps)
    k = math.floor(alpha)
    upper_value = _mtz_integer(k + 1, q, sigma, shift, dps)
    with precision(dps):
        a = iv.mpf(alpha)
        if k == 1:
            chord = iv.mpf(upper_value.hi)  # (α - 1) D_α <= (α - 1) D_2 on (1, 2]
            lo = mp.zero
        else:
            lower_value = _mtz_integer(k, q, sigma, shift, dps)
            f_k = (k - 1) * iv.mpf(lower_value.hi)
            f_k1 = k * iv.mpf(upper_value.hi)
            chord = (f_k + (a - k) * (f_k1 - f_k)) / (a - 1)
            lo = lower_value.lo
        return Enclosure(lo, max(lo, upper(chord)))


def _mtz_integer(alpha: int, q: Fraction, sigma: float | Fraction, shift: float, dps: int) -> Enclosure:
    """``ln(A_α)/(α - 1)``, ``A_α = Σ_k C(α, k) (1-q)^{α-k} q^k e^{(k² - k)Δ²/(2σ²)}`` (MTZ 2019, §3.3)."""
    if alpha > _MAX_INTEGER_ORDER:
        raise UnsupportedError(
            f"alpha={alpha}: the binomial expansion is summed up to order {_MAX_INTEGER_ORDER}"
        )
    with precision(dps):
        qi = to_interval(q)
        keep = 1 - qi
        c = iv.mpf(shift) ** 2 / (2 * to_interval(sigma) ** 2)
        total = iv.mpf(0)
        for k in range(alpha + 1):
            term = iv.mpf(math.comb(alpha, k)) * qi**k * keep ** (alpha - k) * iv.exp((k * k - k) * c)
            total += term
        value = iv.log(total) / (alpha - 1)
        return Enclosure(max(mp.zero, lower(value)), max(mp.zero, upper(value)))
