"""Noise distributions: on the integers (the noise real systems add) and two continuous baselines.

Every distribution is an immutable value with validated parameters. A lattice
distribution (:class:`LatticeNoise`) offers

* an exact PMF at any precision: :meth:`LatticeNoise.pmf_exact` returns a certified
  :class:`~accounting.certified.Enclosure`, and :meth:`LatticeNoise.pmf_intervals` a whole
  table of :mod:`mpmath.iv` intervals, which is what the divergences consume;
* a vectorized float64 PMF for statistics (:meth:`LatticeNoise.pmf`, numpy/scipy);
* rigorous one-sided tail bounds (:meth:`LatticeNoise.sf_bound` for ``P(X >= t)``,
  :meth:`LatticeNoise.cdf_bound` for ``P(X <= t)``) and ``tail_bound(t) >= P(|X| >= t)``,
  used to truncate infinite sums with a certified remainder;
* an a-priori Rényi bound for the shifted pair ``(X + Δ, X)`` (:meth:`LatticeNoise.renyi_prior`),
  used only to bound the truncated tail of a Rényi sum by Hölder's inequality;
* ``variance()``, ``support()`` and ``sample(rng, size)`` (fast, floating point inside numpy);
* ``sample_exact(rng, size)``: integer / rational arithmetic only, vectorized over the draws
  (:mod:`accounting._exact`: Canonne–Kamath–Steinke 2020 Algorithms 1–3 for ``Bernoulli(exp(-γ))``,
  the discrete Laplace and the discrete Gaussian; exact geometric, Poisson (hence Skellam), Pólya
  (negative-binomial totals split by the Ewens partition) and binomial (fair random bits against
  the binary digits of ``p``)).
  ``rng`` is a :class:`numpy.random.Generator` or :class:`SystemRandomness` (the operating
  system's CSPRNG). Every parameter is used as the exact rational it is (a float is the dyadic
  rational it stores; pass :class:`fractions.Fraction` for values like 1/3).

Parameters that are naturally rational (a scale ``g/ε``) may be given as
:class:`fractions.Fraction`; the exact PMFs then enclose the rational value rigorously.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache

import mpmath
import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike, NDArray

from accounting import _exact
from accounting import validate as v
from accounting._exact import Randomness as Randomness
from accounting._exact import SystemRandomness as SystemRandomness
from accounting._exact import bernoulli_exp as bernoulli_exp
from accounting._exact import check_randomness as check_randomness
from accounting._exact import uniform_below as uniform_below
from accounting.certified import DEFAULT_DPS as DEFAULT_DPS
from accounting.certified import (
    Enclosure,
    Interval,
    Mpf,
    float_down,
    float_up,
    lower,
    precision,
    to_interval,
    to_mpf,
    upper,
)
from accounting.convolution import convolve
from accounting.errors import ParameterError, UnsupportedError

Param = float | Fraction
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def _param(name: str, value: object, *, positive: bool = True) -> Param:
    """Validate a real parameter, keeping an exact Fraction as a Fraction."""
    checked = v.positive(name, value) if positive else v.nonnegative(name, value)
    if isinstance(value, Fraction):
        return value
    return checked


def _size(size: int | tuple[int, ...]) -> tuple[int, ...]:
    if isinstance(size, int | np.integer):
        return (v.integer("size", size, minimum=0),)
    return tuple(v.integer("size", s, minimum=0) for s in size)


def _shape_total(rng: object, size: int | tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """Validate ``rng`` and ``size`` of an exact sampler: the shape and the number of draws."""
    _exact.check_randomness(rng)
    shape = _size(size)
    return shape, math.prod(shape)


def _shaped(values: NDArray[np.generic], shape: tuple[int, ...]) -> IntArray:
    """Exact draws as int64 of ``shape`` (every noise value here is far inside int64)."""
    return np.asarray(values, dtype=np.int64).reshape(shape)


def _as_int_array(x: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(x, dtype=np.float64)


@dataclass(frozen=True)
class RenyiPrior:
    """An a-priori upper bound ``D_β(X + Δ || X) <= bound`` at order ``β`` (``β = inf`` allowed).

    Used only to bound the truncated tails of a Rényi sum (Hölder's inequality); it does
    not need to be tight.
    """

    beta: float
    bound: Mpf


#: The largest scale (σ, a discrete Laplace scale, a Pólya mean) the floating-point samplers
#: (``sample``) draw at: beyond, draws leave int64 (numpy's Poisson refuses rates past 9.2e18)
#: or the float parameters round (``e^{-1/b}`` to 1), and numpy returned zeros
#: (``DiscreteLaplace(1e30)``, ``DiscreteGaussian(1e30)``).
MAX_SAMPLE_SCALE = 1e15
#: The largest Skellam variance the floating-point sampler draws at (numpy's Poisson rates).
MAX_SAMPLE_VARIANCE = 1e18
#: The largest σ or scale the exact samplers draw at: int64 draws, which exceed 9.2e18 with
#: probability below e^-90 there (DiscreteLaplace(1e30).sample_exact overflowed).
MAX_EXACT_SCALE = 1e17
_WHY_EXACT = "the exact sampler draws int64, which larger noise leaves"
_WHY_SAMPLE = "the floating-point sampler's draws leave int64 or its parameters round beyond it"


class NoiseDistribution(ABC):
    """Common interface of every noise distribution."""

    @abstractmethod
    def variance(self) -> float:
        """The variance."""

    @abstractmethod
    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.generic]:
        """Draw samples with ``rng`` (fast, floating point inside numpy)."""

    @abstractmethod
    def tail_bound(self, t: float) -> float:
        """An upper bound on ``P(|X| >= t)``, rounded up."""

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> NDArray[np.generic]:
        """Draw samples with integer / rational arithmetic only (no floating point on the privacy path).

        ``rng`` is a :class:`numpy.random.Generator` or :class:`SystemRandomness` (the operating
        system's CSPRNG). Continuous noise has none: its floating-point samples are exactly what
        the Mironov (2012) attack exploits.
        """
        raise UnsupportedError(f"{type(self).__name__} is continuous noise: it has no exact sampler")


class LatticeNoise(NoiseDistribution):
    """A distribution on the integers with an exact PMF and certified tails."""

    @property
    def log_concave(self) -> bool:
        """Whether the PMF is log-concave.

        For log-concave noise the privacy loss of ``X + Δ`` versus ``X`` is monotone in the
        output (a monotone likelihood ratio), so every divergence of the pair is
        nondecreasing in ``|Δ|`` and the worst neighbour is the extreme shift.
        """
        return True

    # -- to implement -------------------------------------------------------------------
    @abstractmethod
    def support(self) -> tuple[float, float]:
        """The smallest interval of integers holding all the mass (``±inf`` when unbounded)."""

    @abstractmethod
    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        """PMF intervals at ``lo..hi`` at the current ``iv`` precision."""

    @abstractmethod
    def _sf(self, t: int) -> Interval:
        """An interval whose upper end bounds ``P(X >= t)`` (current precision)."""

    @abstractmethod
    def _cdf(self, t: int) -> Interval:
        """An interval whose upper end bounds ``P(X <= t)`` (current precision)."""

    @abstractmethod
    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        """An order ``β > α`` (or ``inf``) and a bound on ``D_β(X + shift || X)``."""

    @abstractmethod
    def max_privacy_loss(self, shift: int) -> Mpf:
        """``D_∞(X + shift || X) = sup_x ln(P(x - shift)/P(x))``, exactly (``inf`` when unbounded)."""

    @abstractmethod
    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        """An upper bound on ``sup_{a >= alpha} D_a(X + shift || X) / a`` (``inf`` if none)."""

    @abstractmethod
    def pmf(self, x: ArrayLike) -> FloatArray:
        """The PMF in float64, vectorized (for statistics, not for guarantees)."""

    @property
    def symmetric(self) -> bool:
        """Whether ``X`` and ``-X`` have the same distribution."""
        return False

    # -- provided -----------------------------------------------------------------------
    def log_pmf(self, x: ArrayLike) -> FloatArray:
        """The log-PMF in float64 (``-inf`` outside the support)."""
        with np.errstate(divide="ignore"):
            return np.log(self.pmf(x))

    def pmf_intervals(self, lo: int, hi: int, dps: int = DEFAULT_DPS) -> list[Interval]:
        """Certified PMF values at ``lo..hi`` as :mod:`mpmath.iv` intervals at ``dps`` digits (+guard).

        Cached: the divergences ask for the same table many times.
        """
        lo = v.integer("lo", lo)
        hi = v.integer("hi", hi)
        if hi < lo:
            raise ParameterError("hi", hi, f"an integer >= lo={lo}")
        dps = v.dps("dps", dps)
        if hi - lo > _CACHE_POINTS:  # big tables are not kept: memory, not time, is the limit there
            with precision(dps):
                return self._intervals(lo, hi)
        return list(_cached_table(self, lo, hi, dps))

    def pmf_exact(self, x: int, dps: int = DEFAULT_DPS) -> Enclosure:
        """The PMF at ``x`` as a certified enclosure, accurate to about ``dps`` digits."""
        x = v.integer("x", x)
        (value,) = self.pmf_intervals(x, x, dps)
        return Enclosure.from_interval(value)

    def log_pmf_exact(self, x: int, dps: int = DEFAULT_DPS) -> Enclosure:
        """``ln P(X = x)`` as a certified enclosure (``[-inf, -inf]`` outside the support)."""
        x = v.integer("x", x)
        (value,) = self.pmf_intervals(x, x, dps)
        with precision(v.dps("dps", dps)):
            if upper(value) == 0:
                return Enclosure(mp.ninf, mp.ninf)
            return Enclosure.from_interval(iv.log(value))

    def sf_bound(self, t: int, dps: int = DEFAULT_DPS) -> Mpf:
        """A certified upper bound on ``P(X >= t)``, as an ``mpf``."""
        t = v.integer("t", t)
        lo, hi = self.support()
        if t <= lo:
            return mp.one
        if t > hi:
            return mp.zero
        with precision(v.dps("dps", dps)):
            return min(mp.one, upper(self._sf(t)))

    def cdf_bound(self, t: int, dps: int = DEFAULT_DPS) -> Mpf:
        """A certified upper bound on ``P(X <= t)``, as an ``mpf``."""
        t = v.integer("t", t)
        lo, hi = self.support()
        if t >= hi:
            return mp.one
        if t < lo:
            return mp.zero
        with precision(v.dps("dps", dps)):
            return min(mp.one, upper(self._cdf(t)))

    def tail_bound(self, t: float) -> float:
        """An upper bound on ``P(|X| >= t)``, rounded up to a float."""
        t = v.nonnegative("t", t)
        k = math.ceil(t)
        if k == 0:
            return 1.0
        # Add and round inside a precision context: at the caller's precision (53 bits by
        # default) the sum would be rounded to nearest, and float_up would round that.
        sf, cdf = self.sf_bound(k), self.cdf_bound(-k)
        with precision(DEFAULT_DPS):
            return float_up(min(mp.one, upper(iv.mpf(sf) + iv.mpf(cdf))))

    def window(self, mass: Mpf, dps: int = DEFAULT_DPS) -> tuple[int, int]:
        """Integers ``a <= b`` with ``P(X < a) <= mass/2`` and ``P(X > b) <= mass/2`` (certified).

        Found by exponential search and bisection on the certified tail bounds, so the
        window is as small as the bounds allow (up to a factor of about 1 in width).
        """
        half = mp.mpf(mass) / 2
        lo, hi = self.support()
        center = round(self._center())
        b = self._search(lambda t: self.sf_bound(t + 1, dps) <= half, center, +1, hi)
        a = self._search(lambda t: self.cdf_bound(t - 1, dps) <= half, center, -1, lo)
        return a, b

    def _center(self) -> float:
        lo, hi = self.support()
        return min(max(0.0, lo), hi)

    @staticmethod
    def _search(ok: Callable[[int], bool], start: int, direction: int, limit: float) -> int:
        """The ``t`` nearest ``start`` in ``direction`` with ``ok(t)``; ``ok(limit)`` must hold.

        ``ok`` is monotone (false, then true, moving away from ``start``): exponential
        search for a true point, then bisection.
        """
        if ok(start):
            return start
        near, step = start, 1
        while True:
            far = start + direction * step
            if math.isfinite(limit) and direction * (far - limit) >= 0:
                far = int(limit)
                break
            if ok(far):
                break
            if step > _MAX_REACH:
                # The certified tail bound has not fallen by 2^63 from the centre: the noise is
                # wider than any window an exact sum could take (or its decay rounds to 1 at the
                # working precision, as e^{-1/b} for a discrete Laplace scale near 1e33), and
                # doubling on would never end.
                raise UnsupportedError(
                    f"the noise's certified tails do not fall within 2^63 of its centre ({_MAX_REACH:.2e} "
                    "lattice points): it is too wide for an exact sum over a window"
                )
            near, step = far, step * 2
        while abs(far - near) > 1:
            mid = (near + far) // 2
            if ok(mid):
                far = mid
            else:
                near = mid
        return far


#: The farthest :meth:`LatticeNoise.window` searches from the centre (int64 range): a tail that has
#: not fallen below the mass asked for by then is refused, not searched for ever.
_MAX_REACH = 2**63


#: Tables up to this many points are cached (at most 32 of them, a few MB each).
_CACHE_POINTS = 20_000


@lru_cache(maxsize=32)
def _cached_table(noise: LatticeNoise, lo: int, hi: int, dps: int) -> tuple[Interval, ...]:
    with precision(dps):
        return tuple(noise._intervals(lo, hi))


def _geometric_tail(first: Interval, ratio: Interval) -> Interval:
    """``first / (1 - ratio)``: the sum of a geometric series (ratio < 1)."""
    return first / (1 - ratio)


# ---------------------------------------------------------------------------------------
# Discrete Laplace and the geometric / Pólya family
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class DiscreteLaplace(LatticeNoise):
    """Discrete Laplace ``Lap_Z(b)``: ``P(x) = tanh(1/(2b)) e^{-|x|/b}`` on the integers.

    Definition 4 of the distributed MAB paper (spec §2.3); ``tanh(1/(2b))`` equals the
    paper's ``(e^{1/b} - 1)/(e^{1/b} + 1)``. Exact tail (Fact 3):
    ``P(X >= t) = e^{-(t-1)/b} / (e^{1/b} + 1)`` for ``t >= 1``.

    Give either the scale ``b`` or, keyword-only, the ``decay`` ``β = e^{-1/b}`` in (0, 1),
    which is how Pólya shares define it (``DistributedSum`` of ``Polya(1/n, β)``): the
    exact computations then use ``β`` itself, not ``e^{-1/b}`` of a rounded ``b``.
    """

    scale: Param
    decay: Param | None

    def __init__(self, scale: Param | None = None, *, decay: Param | None = None) -> None:
        if (scale is None) == (decay is None):
            raise ParameterError("scale", scale, "exactly one of scale > 0 or decay in (0, 1)")
        if decay is not None:
            beta = _param("decay", decay)
            v.open_unit("decay", beta)
            object.__setattr__(self, "decay", beta)
            object.__setattr__(self, "scale", -1 / math.log(float(beta)))
        else:
            object.__setattr__(self, "scale", _param("scale", scale))
            object.__setattr__(self, "decay", None)

    def __repr__(self) -> str:
        if self.decay is not None:
            return f"DiscreteLaplace(decay={self.decay!r})"
        return f"DiscreteLaplace(scale={self.scale!r})"

    @property
    def symmetric(self) -> bool:
        return True

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _q(self) -> Interval:
        """``q = e^{-1/b}`` (the decay β itself when given)."""
        if self.decay is not None:
            return to_interval(self.decay)
        return iv.exp(-1 / to_interval(self.scale))

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        q = self._q()
        c = (1 - q) / (1 + q)
        if self.decay is None:
            inv_b = 1 / to_interval(self.scale)
            return [c * iv.exp(-abs(x) * inv_b) for x in range(lo, hi + 1)]
        return [c * q ** iv.mpf(abs(x)) for x in range(lo, hi + 1)]

    def _sf(self, t: int) -> Interval:
        q = self._q()
        if t >= 1:
            return q ** iv.mpf(t) / (1 + q)
        return 1 - q ** iv.mpf(1 - t) / (1 + q)

    def _cdf(self, t: int) -> Interval:
        return self._sf(-t)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        return RenyiPrior(math.inf, self.max_privacy_loss(shift))

    def max_privacy_loss(self, shift: int) -> Mpf:
        # Fact 3: the loss (|x| - |x - Δ|)/b is at most |Δ|/b, attained at x >= Δ.
        if self.decay is not None:
            return -abs(shift) * mp.log(to_mpf(self.decay))
        return abs(shift) / to_mpf(self.scale)

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        return self.max_privacy_loss(shift) / alpha

    def variance(self) -> float:
        # 2q/(1-q)^2 with 1 - q = -expm1(-1/b): 1 - exp(-1/b) cancels to 0 for a scale near 1e16.
        if self.decay is not None:
            q = float(self.decay)
            gap = 1 - q
        else:
            gap = -math.expm1(-1 / float(self.scale))
            q = 1 - gap
        value = 2 * q / gap / gap
        if not math.isfinite(value):
            valid = "a scale whose variance (about 2 scale^2) is below 1.8e308"
            raise ParameterError("scale", self.scale, valid)
        return value

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = _as_int_array(x)
        b = float(self.scale)
        return np.where(xs == np.round(xs), math.tanh(1 / (2 * b)) * np.exp(-np.abs(xs) / b), 0.0)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        v.at_most("scale", float(self.scale), MAX_SAMPLE_SCALE, _WHY_SAMPLE)
        p = -math.expm1(-1 / float(self.scale))
        shape = _size(size)
        return (rng.geometric(p, shape) - rng.geometric(p, shape)).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: CKS 2020 Algorithm 2 for a rational ``scale``; a difference of two exact
        geometrics (Bernoulli(β) trials, about ``1/(1-β)`` draws each) for a rational ``decay``."""
        shape, total = _shape_total(rng, size)
        v.at_most("scale", float(self.scale), MAX_EXACT_SCALE, _WHY_EXACT)
        if self.decay is None:
            out = _exact.discrete_laplace(rng, _exact.rational("scale", self.scale), total)
        else:
            beta = _exact.rational("decay", self.decay)
            out = _exact.geometric(rng, beta, total) - _exact.geometric(rng, beta, total)
        return _shaped(out, shape)


@dataclass(frozen=True)
class Polya(LatticeNoise):
    """Pólya (negative binomial) ``Polya(r, β)`` on ``{0, 1, ...}`` (spec §2.2).

    ``P(x) = Γ(x+r)/(x! Γ(r)) β^x (1-β)^r``; mean ``rβ/(1-β)``, variance ``rβ/(1-β)^2``.
    ``n`` users each adding ``Polya(1/n, e^{-1/b})`` differences make ``Lap_Z(b)`` (Fact 1).
    The sampler is Gamma–Poisson with Gamma scale ``β/(1-β)``; the released code of the
    paper uses ``(1-β)/β``, which samples ``Polya(r, 1-β)`` (spec §9.1).
    """

    r: Param
    beta: Param

    def __post_init__(self) -> None:
        object.__setattr__(self, "r", _param("r", self.r))
        object.__setattr__(self, "beta", _param("beta", self.beta))
        v.open_unit("beta", self.beta)

    @property
    def log_concave(self) -> bool:
        return float(self.r) >= 1

    def support(self) -> tuple[float, float]:
        return (0.0, math.inf)

    def _center(self) -> float:
        return float(self.r) * float(self.beta) / (1 - float(self.beta))

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        """``P(0) = (1-β)^r``, then the exact ratio ``P(x+1)/P(x) = β(x+r)/(x+1)`` upwards.

        No log-gamma: :func:`mpmath.iv.loggamma` does not round outward reliably (at
        ``r = 1/64`` it returns an interval with ``lo > hi``), so even a table that starts
        far from 0 is built from ``P(0)``; the cost is ``O(hi)`` interval products.
        """
        r = to_interval(self.r)
        beta = to_interval(self.beta)
        out: list[Interval] = [iv.mpf(0) for _ in range(lo, min(hi + 1, 0))]
        if hi < 0:
            return out
        value = iv.exp(r * iv.log(1 - beta))
        for x in range(hi + 1):
            if x >= lo:
                out.append(value)
            value = value * beta * (x + r) / (x + 1)
        return out

    def _sf(self, t: int) -> Interval:
        # Chernoff with the MGF ((1-β)/(1-βe^θ))^r at e^θ = t/(β(r+t)) (valid when t > mean).
        if t <= self._center():
            return iv.mpf(1)
        r = to_interval(self.r)
        beta = to_interval(self.beta)
        e_theta = iv.mpf(t) / (beta * (r + t))
        if not (1 - beta * e_theta).a > 0:
            # For a tiny r that point is within rounding of the pole e^θ = 1/β (at any working
            # precision some r is): the bound holds at every 1 < e^θ < 1/β, so take the midpoint.
            e_theta = (1 + 1 / beta) / 2
        return ((1 - beta) / (1 - beta * e_theta)) ** r * iv.exp(-t * iv.log(e_theta))

    def _cdf(self, t: int) -> Interval:
        return iv.mpf(1)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        return RenyiPrior(math.inf, self.max_privacy_loss(shift))

    def max_privacy_loss(self, shift: int) -> Mpf:
        if shift < 0:
            return mp.inf  # X + shift puts mass below 0, where X has none
        if shift == 0:
            return mp.zero
        # L(x) = P(x-Δ)/P(x) = Π_{j=x-Δ+1}^{x} j/(β(j-1+r)). For r < 1 each factor j/(j-1+r)
        # exceeds 1 and decreases in j, so the sup is at x = Δ: Γ(Δ+1)Γ(r)/(Γ(Δ+r) β^Δ).
        # For r >= 1 the factors increase to 1, so the sup is the limit β^-Δ.
        r = to_mpf(self.r)
        log_beta = mp.log(to_mpf(self.beta))
        if r < 1:
            return mp.loggamma(shift + 1) + mp.loggamma(r) - mp.loggamma(shift + r) - shift * log_beta
        return -shift * log_beta

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        return self.max_privacy_loss(shift) / alpha

    def variance(self) -> float:
        b = float(self.beta)
        return float(self.r) * b / (1 - b) ** 2

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = _as_int_array(x)
        import scipy.stats  # here, not at module level: importing it takes about a second

        out = scipy.stats.nbinom.pmf(xs, float(self.r), 1 - float(self.beta))
        return np.asarray(out, dtype=np.float64)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        b = float(self.beta)
        v.at_most("mean", float(self.r) * b / (1 - b), MAX_SAMPLE_SCALE, _WHY_SAMPLE)
        lam = rng.gamma(shape=float(self.r), scale=b / (1 - b), size=_size(size))
        return rng.poisson(lam).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws for rational ``r = a/b`` and ``β``: ``NB(a, β)`` totals split by the Ewens
        partition (Feller coupling), see :func:`accounting._exact.polya`. With ``r = 1/n`` and
        ``size = (R, n)`` each row of ``n`` shares costs one geometric total plus ``n`` slots."""
        shape, total = _shape_total(rng, size)
        r = _exact.rational("r", self.r)
        return _shaped(_exact.polya(rng, r, _exact.rational("beta", self.beta), total), shape)


@dataclass(frozen=True, init=False)
class Geometric(Polya):
    """Geometric on ``{0, 1, ...}``: ``P(k) = β^k (1-β)``, i.e. ``Polya(1, β)`` (spec §2.2).

    The difference of two independent ``Geometric(e^{-1/b})`` is ``Lap_Z(b)``.
    """

    def __init__(self, beta: Param) -> None:
        object.__setattr__(self, "r", Fraction(1))
        object.__setattr__(self, "beta", _param("beta", beta))
        v.open_unit("beta", self.beta)

    def __repr__(self) -> str:
        return f"Geometric(beta={self.beta!r})"

    def _sf(self, t: int) -> Interval:
        return to_interval(self.beta) ** iv.mpf(t)  # exact: P(X >= t) = β^t

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        return (rng.geometric(1 - float(self.beta), _size(size)) - 1).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: Bernoulli(β) trials with rational ``β`` (about ``1/(1-β)`` draws each)."""
        shape, total = _shape_total(rng, size)
        return _shaped(_exact.geometric(rng, _exact.rational("beta", self.beta), total), shape)


# ---------------------------------------------------------------------------------------
# Skellam
# ---------------------------------------------------------------------------------------


#: The largest shift at which :meth:`Skellam._poisson_shift_prior` is evaluated (see there).
_POISSON_SHIFT_MAX = 1000


@dataclass(frozen=True, init=False)
class Skellam(LatticeNoise):
    """Skellam: ``offset + N1 - N2`` with independent ``N1 ~ Poisson(μ1)``, ``N2 ~ Poisson(μ2)``.

    ``Skellam(variance, mean=0)`` is the symmetric ``Sk(mean, variance)`` of the paper
    (Definition 5, spec §2.4; ``μ1 = μ2 = variance/2``). ``Skellam.from_rates(mu1, mu2)``
    is the asymmetric form. PMF:
    ``P(offset + k) = e^{-(μ1+μ2)} (μ1/μ2)^{k/2} I_k(2 sqrt(μ1 μ2))``.

    The exact table runs the Bessel recurrence downwards in interval arithmetic (see
    :meth:`_intervals`); tests cross-check it against :func:`mpmath.besseli`.
    """

    mu1: Param
    mu2: Param
    offset: int = field(default=0)

    def __init__(self, variance: Param, mean: int = 0) -> None:
        half = _param("variance", variance)
        half = half / 2
        if half < 2.2250738585072014e-308:  # a subnormal rate (or 0: Skellam(5e-324)) inverts to inf
            valid = "a variance >= 4.5e-308 (each rate, variance/2, a normal float)"
            raise ParameterError("variance", variance, valid)
        object.__setattr__(self, "mu1", half)
        object.__setattr__(self, "mu2", half)
        object.__setattr__(self, "offset", v.integer("mean", mean))

    @classmethod
    def from_rates(cls, mu1: Param, mu2: Param, offset: int = 0) -> Skellam:
        """The asymmetric Skellam ``offset + Poisson(mu1) - Poisson(mu2)``."""
        self = object.__new__(cls)
        object.__setattr__(self, "mu1", _param("mu1", mu1))
        object.__setattr__(self, "mu2", _param("mu2", mu2))
        object.__setattr__(self, "offset", v.integer("offset", offset))
        return self

    def __repr__(self) -> str:
        if self.mu1 == self.mu2:
            return f"Skellam(variance={self.mu1 * 2!r}, mean={self.offset})"
        return f"Skellam.from_rates(mu1={self.mu1!r}, mu2={self.mu2!r}, offset={self.offset})"

    @property
    def symmetric(self) -> bool:
        return self.mu1 == self.mu2 and self.offset == 0

    @property
    def mean(self) -> float:
        return self.offset + float(self.mu1) - float(self.mu2)

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _center(self) -> float:
        return self.mean

    @staticmethod
    def _bessel_ratio(k: int, z: Interval) -> Interval:
        """An enclosure of ``r_k = I_{k+1}(z) / I_k(z)`` by its continued fraction.

        ``r_ν = 1 / (2(ν+1)/z + r_{ν+1})`` and ``0 < r_ν < 1``; the map is decreasing and
        contracting (factor about ``r^2``), so iterating it from ``[0, 1]`` at a deep
        order ``m`` encloses ``r_k`` ever more tightly. The depth doubles until the
        enclosure is tight to the working precision.
        """
        depth = 32
        tight = mp.ldexp(1, -iv.prec + 12)
        while True:
            r = iv.mpf([0, 1])
            for nu in range(k + depth, k - 1, -1):
                r = 1 / (2 * (nu + 1) / z + r)
            if upper(r) - lower(r) <= tight * upper(r) or depth > 10**7:
                return r
            depth *= 2

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        """Exact PMF enclosures by the Bessel recurrence, in interval arithmetic throughout.

        With ``z = 2 sqrt(μ1 μ2)`` and ``t = sqrt(μ1/μ2)``, ``P(offset + k) ∝ t^k I_|k|(z)``.
        ``J_k = I_k / I_K`` follows from ``J_K = 1``, ``J_{K+1} = r_K`` (continued fraction)
        and the downward recurrence ``J_{k-1} = J_{k+1} + (2k/z) J_k``: a positive
        combination, stable and tight. The PMF is ``t^k J_|k|`` over its total, whose parts
        beyond ``|k| = K`` are geometric series: ``r_k`` decreases in ``k`` (the Turán-type
        inequality ``I_ν^2 > I_{ν-1} I_{ν+1}``, Thiruvenkatachar–Nanjundiah 1951), so the
        ratio of consecutive terms stays below ``t r_K`` (resp. ``r_K / t``). No special
        function of a library is trusted: every step is interval arithmetic.
        """
        mu1 = to_interval(self.mu1)
        mu2 = to_interval(self.mu2)
        z = 2 * iv.sqrt(mu1 * mu2)
        t = iv.mpf(1) if self.mu1 == self.mu2 else iv.sqrt(mu1 / mu2)
        ks = range(lo - self.offset, hi - self.offset + 1)
        # Start where the Chernoff tails say the mass beyond is negligible (no doubling later).
        cut = mp.ldexp(1, -iv.prec - 10)
        reach = 1
        while max(upper(self._chernoff(reach, a, b)) for a, b in self._rate_pairs()) > cut:
            reach *= 2
        big = max(abs(ks[0]), abs(ks[-1]), reach)
        while True:
            r = self._bessel_ratio(big, z)
            # The tails beyond ``big`` are geometric series of ratio t r_K (resp. r_K / t).
            if max(upper(t * r), upper(r / t)) < 1:
                break
            big *= 2
        log_t = iv.log(t)
        negligible = mp.ldexp(1, -iv.prec - 8)
        while True:
            jlo, jhi, jexp = self._recurrence(big, r, z)

            def j(k: int, jlo: list[int] = jlo, jhi: list[int] = jhi, jexp: list[int] = jexp) -> Interval:
                if not jexp[k]:
                    return iv.mpf([jlo[k], jhi[k]])  # ints, rounded outward by iv
                ends = [mp.make_mpf(mpmath.libmp.from_man_exp(m, jexp[k])) for m in (jlo[k], jhi[k])]
                return iv.mpf(ends)

            if self.mu1 == self.mu2:
                one = iv.mpf(1)
                weight = {-big: one, big: one}
                if not jexp[0]:  # one scale throughout: exact integer sums
                    total = iv.mpf([jlo[0] + 2 * sum(jlo[1 : big + 1]), jhi[0] + 2 * sum(jhi[1 : big + 1])])
                else:
                    total = j(0) + 2 * sum((j(k) for k in range(1, big + 1)), iv.mpf(0))
            else:
                weight = {k: iv.exp(k * log_t) for k in range(-big, big + 1)}
                total = sum((weight[k] * j(abs(k)) for k in range(-big, big + 1)), iv.mpf(0))
            tails = j(big) * (weight[big] * (t * r) / (1 - t * r) + weight[-big] * (r / t) / (1 - r / t))
            # Grow the table until the mass beyond it is below the working precision.
            if upper(tails) <= negligible * lower(total):
                break
            big *= 2
            r = self._bessel_ratio(big, z)
        norm = total + iv.mpf([0, upper(tails)])
        if self.mu1 == self.mu2:
            return [j(abs(k)) / norm if abs(k) <= big else iv.mpf(0) for k in ks]
        return [weight[k] * j(abs(k)) / norm if abs(k) <= big else iv.mpf(0) for k in ks]

    @staticmethod
    def _recurrence(big: int, r: Interval, z: Interval) -> tuple[list[int], list[int], list[int]]:
        """Integer enclosures ``lo_k 2^{e_k} <= 2^F J_k <= hi_k 2^{e_k}`` for ``k = 0..big+1``.

        ``J_big = 1``, ``J_{big+1} = r``. The recurrence ``J_{k-1} = J_{k+1} + (2k/z) J_k`` has
        positive coefficients, so running it on lower bounds rounded down and on upper bounds
        rounded up (fixed point with ``F`` bits beyond the working precision, exact Python
        integers) encloses every ``J_k``: the interval arithmetic of mpmath, at a fraction of
        the cost. ``J_k`` grows super-exponentially as ``k`` falls far below ``big`` when
        ``big >> z``; the running pair is then shifted right (block floating point, exponents
        ``e_k``) so the integers stay about ``2F`` bits long.
        """
        bits = iv.prec + 24
        to_int = mpmath.libmp.to_int
        shift = mpmath.libmp.mpf_shift
        scaled = iv.mpf(2) ** bits / z
        c_lo, c_hi = to_int(lower(scaled)._mpf_, "f"), to_int(upper(scaled)._mpf_, "c")
        lo = [0] * (big + 2)
        hi = [0] * (big + 2)
        exps = [0] * (big + 2)
        lo[big] = hi[big] = 1 << bits
        lo[big + 1] = to_int(shift(lower(r)._mpf_, bits), "f")
        hi[big + 1] = to_int(shift(upper(r)._mpf_, bits), "c")
        # The returned J_k keep the scale they were computed at; only the running pair is
        # shifted. (Shifting the stored J_k too lost every bit of J_1 = I_1/I_K relative to J_0
        # when z is tiny: Skellam of variance 1e-300 had P(X = ±1) enclosed in [0, 3e-81].)
        out_lo, out_hi = lo[:], hi[:]
        limit = 3 * bits
        e = 0
        for k in range(big, 0, -1):
            lo[k - 1] = lo[k + 1] + ((2 * k * c_lo * lo[k]) >> bits)
            hi[k - 1] = hi[k + 1] - ((-2 * k * c_hi * hi[k]) >> bits)
            exps[k - 1] = e
            out_lo[k - 1], out_hi[k - 1] = lo[k - 1], hi[k - 1]
            if hi[k - 1].bit_length() > limit:
                s = hi[k - 1].bit_length() - 2 * bits
                e += s
                for i in (k - 1, k):
                    lo[i] >>= s
                    hi[i] = -((-hi[i]) >> s)
        return out_lo, out_hi, exps

    def _rate_pairs(self) -> tuple[tuple[Param, Param], tuple[Param, Param]]:
        return ((self.mu1, self.mu2), (self.mu2, self.mu1))

    def _chernoff(self, s: int, mu_up: Param, mu_down: Param) -> Interval:
        """``P(N_up - N_down >= s) <= exp(μu(e^θ-1) + μd(e^-θ-1) - θs)`` at the optimal θ."""
        a = to_interval(mu_up)
        b = to_interval(mu_down)
        am, bm = mp.mpf(a.mid), mp.mpf(b.mid)
        e_theta = iv.mpf((s + mp.sqrt(s * s + 4 * am * bm)) / (2 * am))
        theta = iv.log(e_theta)
        return iv.exp(a * (e_theta - 1) + b * (1 / e_theta - 1) - theta * s)

    def _sf(self, t: int) -> Interval:
        s = t - self.offset
        if s <= float(self.mu1) - float(self.mu2):
            return iv.mpf(1)
        return self._chernoff(s, self.mu1, self.mu2)

    def _cdf(self, t: int) -> Interval:
        s = self.offset - t
        if s <= float(self.mu2) - float(self.mu1):
            return iv.mpf(1)
        return self._chernoff(s, self.mu2, self.mu1)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        # Agarwal–Kairouz–Liu 2021 Thm 3.5 at the integer order β = max(2, ceil(2α)), for the
        # symmetric part of variance 2 min(μ1, μ2) (the rest is independent post-processing),
        # or the Poisson shift bound (:meth:`_poisson_shift_prior`) where it is smaller: the
        # AKL bound grows as 1/variance (Skellam of variance 1e-300: about 1e300, a Hölder
        # window beyond any exact sum; the shift bound is 691.5).
        from accounting.bounds import skellam_rdp_akl

        beta = max(2, math.ceil(2 * alpha))
        if shift == 0:
            return RenyiPrior(beta, mp.zero)
        variance = 2 * min(self.mu1, self.mu2)
        akl = mp.mpf(skellam_rdp_akl(beta, variance, abs(shift)))
        return RenyiPrior(beta, min(akl, self._poisson_shift_prior(shift, beta)))

    def _poisson_shift_prior(self, shift: int, beta: int) -> Mpf:
        """An upper bound on ``D_β(X + Δ || X)`` from the Poisson part that the shift moves.

        ``X + Δ = offset + (N1 + Δ) - N2`` (``Δ > 0``; ``N2 + |Δ|`` for ``Δ < 0``), so by
        post-processing ``D_β(X + Δ || X) <= D_β(N + Δ || N)`` for ``N ~ Poisson(μ)``, whose sum
        is ``E[((K+1)···(K+Δ)/μ^Δ)^{β-1}]`` over ``K ~ Poisson(μ)``; with
        ``(K+1)···(K+Δ) <= Δ! e^{ΔK}`` and the Poisson MGF,
        ``D_β <= ln(Δ!/μ^Δ) + μ(e^{Δ(β-1)} - 1)/(β - 1)`` (rounded up).

        For shifts beyond :data:`_POISSON_SHIFT_MAX` the bound is ``inf`` (not computed): there
        ``Δ!`` alone takes seconds (a minute at 10^7), and as ``μ >= 5e-324 > e^{-745}`` its last
        term exceeds ``e^{Δ(β-1) - 745}/(β - 1) > e^{250}``, so it never beats the AKL bound.
        """
        d = abs(shift)
        if d > _POISSON_SHIFT_MAX:
            return mp.inf
        rate = self.mu1 if shift > 0 else self.mu2
        with precision(DEFAULT_DPS):
            mu = to_interval(rate)
            value = iv.log(iv.mpf(math.factorial(d))) - d * iv.log(mu)
            value += mu * (iv.exp(iv.mpf(d * (beta - 1))) - 1) / (beta - 1)
            return upper(value)

    def max_privacy_loss(self, shift: int) -> Mpf:
        # I_{k-Δ}(z)/I_k(z) grows without bound in k: no pure DP.
        return mp.zero if shift == 0 else mp.inf

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        """``sup_{a >= alpha} D_a/a`` from Agarwal–Kairouz–Liu 2021 Thm 3.5.

        For ``a`` in ``(k-1, k]`` (integer ``k >= 2``), ``D_a <= D_k <= AKL(k)``, so
        ``D_a/a < AKL(k)/(k-1)``. With ``c = Δ²/(2σ²)``, ``AKL(k) = min(kC + D, kc + B)`` where
        ``C = c + Δ²/(2σ⁴)``, ``D = (6Δ - Δ²)/(4σ⁴)`` and ``B = 3Δ/(2σ²)`` (the first argument
        of the min *grows* with ``k``), so ``AKL(k)/(k-1)`` is the minimum of
        ``C + (C + D)/(k-1)`` and ``c + (c + B)/(k-1)``; both ``C + D`` and ``c + B`` are
        positive, so it decreases in ``k`` and the first ``k`` bounds all later ones.
        """
        from accounting.bounds import skellam_rdp_akl

        if shift == 0:
            return mp.zero
        k = max(2, math.ceil(alpha))
        variance = 2 * min(self.mu1, self.mu2)
        first = mp.mpf(skellam_rdp_akl(k, variance, abs(shift))) / max(k - 1, alpha)
        nxt = mp.mpf(skellam_rdp_akl(k + 1, variance, abs(shift))) / k
        return max(first, nxt)

    def variance(self) -> float:
        return float(self.mu1) + float(self.mu2)

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = _as_int_array(x)
        import scipy.stats  # here, not at module level: importing it takes about a second

        out = scipy.stats.skellam.pmf(xs - self.offset, float(self.mu1), float(self.mu2))
        return np.asarray(out, dtype=np.float64)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        shape = _size(size)
        v.at_most("variance", self.variance(), MAX_SAMPLE_VARIANCE, _WHY_SAMPLE)
        n1 = rng.poisson(float(self.mu1), shape)
        n2 = rng.poisson(float(self.mu2), shape)
        return (self.offset + n1 - n2).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: ``offset + N1 - N2`` with exact Poissons of the rational rates.

        The Poisson sampler costs ``O(μ)`` uniform draws per variate (see
        :func:`accounting._exact.poisson`), so large variances are slow; :meth:`sample` is the
        fast floating-point alternative (numpy's Poisson, as in Agarwal et al. 2021).
        """
        shape, total = _shape_total(rng, size)
        n1 = _exact.poisson(rng, _exact.rational("mu1", self.mu1), total)
        n2 = _exact.poisson(rng, _exact.rational("mu2", self.mu2), total)
        return _shaped(self.offset + n1 - n2, shape)


# ---------------------------------------------------------------------------------------
# Discrete Gaussian and sums of discrete Gaussians
# ---------------------------------------------------------------------------------------


def _gaussian_series(a: Interval, first: int) -> Interval:
    """``Σ_{k >= first} e^{-a k^2}`` in interval arithmetic, with a certified remainder."""
    total = iv.mpf(0)
    k = first
    eps = mp.ldexp(1, -iv.prec - 4)
    while True:
        term = iv.exp(-a * k * k)
        total += term
        if upper(term) < eps * max(lower(total), mp.ldexp(1, -(10**6))) or upper(term) == 0:
            break
        k += 1
    # Remainder Σ_{j > k} e^{-a j^2} <= e^{-a (k+1)^2} / (1 - e^{-a (2k+3)}).
    rest = iv.exp(-a * (k + 1) ** 2) / (1 - iv.exp(-a * (2 * k + 3)))
    return total + iv.mpf([0, upper(rest)])


def _dg_normalizer(sigma: Interval) -> Interval:
    """``Z = Σ_{y in Z} e^{-y^2/(2σ^2)}``, certified.

    For ``σ >= 1/2`` the Poisson-summation (Jacobi theta) form
    ``Z = sqrt(2π) σ (1 + 2 Σ_{k>=1} e^{-2π^2 σ^2 k^2})`` converges in a few terms;
    for smaller ``σ`` the direct sum does.
    """
    s2 = sigma * sigma
    if lower(sigma) >= mp.mpf("0.5"):
        dual = 2 * iv.pi**2 * s2
        return iv.sqrt(2 * iv.pi) * sigma * (1 + 2 * _gaussian_series(dual, 1))
    return 1 + 2 * _gaussian_series(1 / (2 * s2), 1)


#: From this σ on, single-release ε and δ of the discrete Gaussian come from its tail sums
#: (:meth:`DiscreteGaussian.sf_exact`, CKS 2020 Thm 7) instead of a window sum over about ``24σ``
#: lattice points (which took 19 s at σ = 10^4 and was refused beyond about 9500 at δ = 1e-6).
TAIL_SUM_SIGMA = 1000


@dataclass(frozen=True)
class DiscreteGaussian(LatticeNoise):
    """Discrete Gaussian ``N_Z(0, σ^2)``: ``P(x) ∝ e^{-x^2/(2σ^2)}`` (spec §2.5, CKS 2020).

    ``σ^2`` is the scale parameter; the variance is slightly below it (computed exactly
    by :meth:`variance`). The normalizer is certified (see :func:`_dg_normalizer`).
    """

    sigma: Param

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _param("sigma", self.sigma))

    @property
    def symmetric(self) -> bool:
        return True

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        sigma = to_interval(self.sigma)
        inv_two_s2 = 1 / (2 * sigma * sigma)
        inv_z = 1 / _dg_normalizer(sigma)
        return [inv_z * iv.exp(-(x * x) * inv_two_s2) for x in range(lo, hi + 1)]

    def _sf(self, t: int) -> Interval:
        if t <= 0:
            return iv.mpf(1)
        sigma = to_interval(self.sigma)
        a = 1 / (2 * sigma * sigma)
        # Consecutive terms shrink by e^{-a(2x+1)} <= e^{-a(2t+1)} beyond t.
        return _geometric_tail(iv.exp(-a * t * t), iv.exp(-a * (2 * t + 1))) / _dg_normalizer(sigma)

    def _cdf(self, t: int) -> Interval:
        return self._sf(-t)

    def sf_exact(self, t: int, dps: int = DEFAULT_DPS) -> Enclosure:
        """``P(X >= t)`` as a certified enclosure, for ``σ >=`` :data:`TAIL_SUM_SIGMA` (no window).

        See :meth:`_tail_mass`.
        """
        t = v.integer("t", t)
        with precision(v.dps("dps", dps)):
            return Enclosure.from_interval(self._tail_mass(t))

    def _tail_mass(self, t: int) -> Interval:
        """``P(X >= t) = Σ_{y >= t} e^{-y^2/(2σ^2)} / Z`` by the Euler–Maclaurin formula (current precision).

        With ``f(x) = e^{-x^2/(2σ^2)}`` and ``u = t/σ``:
        ``Σ_{y >= t} f(y) = ∫_t^∞ f + f(t)/2 + Σ_{k=1}^{p} B_{2k}/(2k)! σ^{1-2k} He_{2k-1}(u) f(t) + R_p``
        (``f^{(n)}(x) = (-1)^n σ^{-n} He_n(x/σ) f(x)``, probabilists' Hermite polynomials), with
        ``|R_p| <= 2ζ(2p)/(2π)^{2p} ∫|f^{(2p)}| <= 2ζ(2)/(2π)^{2p} √(2π (2p)!) σ^{1-2p}``
        (Cauchy–Schwarz with ``∫ He_n^2 e^{-u^2/2} = √(2π) n!``), and
        ``∫_t^∞ f = σ √(π/2) erfc(t/(σ√2))`` (the project's interval ``erfc``,
        :func:`accounting.subsampling._erfc`). ``Z`` is :func:`_dg_normalizer`. Each term gains
        ``σ^-2``: for ``σ`` in the thousands a few terms reach any precision, where a window sum
        would need ``24σ`` lattice points.

        Raises
        ------
        UnsupportedError
            When ``σ`` is too small for the remainder to reach the working precision (then the
            window sums apply).
        """
        from accounting.subsampling import _erfc

        sigma = to_interval(self.sigma)
        u = iv.mpf(t) / sigma
        f_t = iv.exp(-u * u / 2)
        total = sigma * iv.sqrt(iv.pi / 2) * _erfc(u / iv.sqrt(2)) + f_t / 2
        target = mp.ldexp(1, -iv.prec - 10)
        he_prev, he = iv.mpf(1), u  # He_0, He_1
        power = iv.mpf(1)  # σ^{1-2k}
        factorial = 1
        for k in range(1, 41):
            power = power / (sigma * sigma)
            p_num, p_den = mp.bernfrac(2 * k)
            factorial *= (2 * k - 1) * (2 * k)
            total += iv.mpf(int(p_num)) / (iv.mpf(int(p_den)) * factorial) * power * sigma * he * f_t
            # He_{n+1} = u He_n - n He_{n-1}: advance from (He_{2k-2}, He_{2k-1}) to (He_{2k}, He_{2k+1}).
            he_even = u * he - (2 * k - 1) * he_prev
            he_prev, he = he_even, u * he_even - 2 * k * he
            remainder = (
                2 * (iv.pi**2 / 6) / (2 * iv.pi) ** (2 * k) * iv.sqrt(2 * iv.pi * factorial) * power * sigma
            )
            if upper(remainder) <= target * max(lower(total), mp.ldexp(1, -(10**6))):
                total += iv.mpf([-upper(remainder), upper(remainder)])
                return total / _dg_normalizer(sigma)
        raise UnsupportedError(
            f"σ={self.sigma!r} is too small for the Euler–Maclaurin tail of the discrete Gaussian to "
            f"reach {iv.prec} bits (sum over a window instead)"
        )

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        # CKS 2020: D_β(N_Z(Δ,σ^2) || N_Z(0,σ^2)) <= β Δ^2/(2σ^2) for every β > 1.
        beta = 2 * alpha
        return RenyiPrior(beta, beta * self._rho(shift))

    def _rho(self, shift: int) -> Mpf:
        return mp.mpf(shift) ** 2 / (2 * to_mpf(self.sigma) ** 2)

    def max_privacy_loss(self, shift: int) -> Mpf:
        return mp.zero if shift == 0 else mp.inf

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        return self._rho(shift)  # CKS 2020: D_a <= a Δ^2/(2σ^2) for all a

    @cached_property
    def _float_normalizer(self) -> float:
        with precision(20):
            return float(mp.mpf(_dg_normalizer(to_interval(self.sigma)).mid))

    def variance(self) -> float:
        with precision(20):
            sigma = to_mpf(self.sigma)
            s2 = sigma**2
            if sigma >= mp.mpf("0.5"):
                # Poisson summation of x^2 e^{-x^2/(2σ^2)}: transform √(2π)σ(σ^2 - 4π^2σ^4k^2)e^{-2π^2σ^2k^2}.
                terms = [mp.exp(-2 * mp.pi**2 * s2 * k * k) for k in range(1, 40)]
                num = 1 + 2 * mp.fsum((1 - 4 * mp.pi**2 * s2 * k * k) * t for k, t in enumerate(terms, 1))
                den = 1 + 2 * mp.fsum(terms)
                return float(s2 * num / den)
            terms = [mp.exp(-(x * x) / (2 * s2)) for x in range(1, 60)]
            num = 2 * mp.fsum(x * x * t for x, t in enumerate(terms, 1))
            return float(num / (1 + 2 * mp.fsum(terms)))

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = _as_int_array(x)
        s = float(self.sigma)
        return np.where(xs == np.round(xs), np.exp(-(xs**2) / (2 * s * s)) / self._float_normalizer, 0.0)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        """Rejection from a discrete Laplace (CKS 2020 Algorithm 3), vectorized, float acceptance."""
        shape = _size(size)
        total = math.prod(shape)
        sigma = v.at_most("sigma", float(self.sigma), MAX_SAMPLE_SCALE, _WHY_SAMPLE)
        if sigma < 1e-100:
            # σ² underflows (1e-300: the acceptance was 0/0 and the loop never ended); there
            # P(X != 0) = 2e^{-1/(2σ²)}/Z < e^{-10^199}, so every draw is 0.
            return np.zeros(shape, dtype=np.int64)
        t = math.floor(sigma) + 1
        proposal = DiscreteLaplace(t)
        out = np.empty(total, dtype=np.int64)
        filled = 0
        while filled < total:
            # The acceptance rate is at least about 1/(1 + 1/e)... draw a little extra.
            need = total - filled
            y = proposal.sample(rng, int(need * 1.6) + 16)
            accept = rng.random(y.size) < np.exp(-((np.abs(y) - sigma**2 / t) ** 2) / (2 * sigma**2))
            kept = y[accept][:need]
            out[filled : filled + kept.size] = kept
            filled += kept.size
        return out.reshape(shape)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: CKS 2020 Algorithm 3 with the exact rational ``σ²`` (of the stored ``σ``).

        Fast (int64) when ``σ`` has a short binary or rational form (an integer, a
        :class:`~fractions.Fraction` with a small denominator); a float like ``3.7`` is the dyadic
        rational it stores, whose ``σ²`` needs Python integers (exact, slower).
        """
        shape, total = _shape_total(rng, size)
        v.at_most("sigma", float(self.sigma), MAX_EXACT_SCALE, _WHY_EXACT)
        sigma = _exact.rational("sigma", self.sigma)
        return _shaped(_exact.discrete_gaussian(rng, sigma * sigma, total), shape)


def _to_fixed(values: list[Interval], bits: int) -> list[int]:
    """Lower endpoints scaled by ``2^bits`` and rounded down (lower bounds stay lower bounds)."""
    # Exact integer arithmetic on the raw mantissas: mp.floor would round to mp.prec.
    return [mpmath.libmp.to_int(mpmath.libmp.mpf_shift(lower(x)._mpf_, bits), "f") for x in values]


@dataclass(frozen=True)
class _SumTable:
    """Lower bounds ``masses[i]·2^-bits`` of ``P(Z = offset + i)`` for ``|offset + i| <= reach``,
    and ``missing``: ``2^bits`` minus their total, which bounds every value's error (see
    :class:`SumOfDiscreteGaussians`)."""

    reach: int
    bits: int
    offset: int
    masses: list[int]
    missing: int


#: The widest fixed-point table of each sum of discrete Gaussians computed so far, per
#: ``(σ, count, working precision)``: a table of reach ``R`` serves every window within it (its
#: bits were chosen for the smallest value at ``±R``), so the Rényi sums at many orders (each
#: with its own window) share one convolution instead of rebuilding it per order.
_SUM_TABLES: dict[tuple[Param, int, int], _SumTable] = {}


def _sum_table(sigma: Param, count: int, reach: int, prec: int) -> _SumTable:
    """The fixed-point table of ``count`` discrete Gaussians of parameter ``σ`` out to ``±reach``.

    Reuses a cached table that reaches at least as far (:data:`_SUM_TABLES`); otherwise builds
    one (:func:`_build_sum_table`), at twice the reach asked for when it replaces a narrower one
    so that a growing sequence of windows rebuilds only a few times.
    """
    key = (sigma, count, prec)
    cached = _SUM_TABLES.get(key)
    if cached is not None and cached.reach >= reach:
        return cached
    if cached is not None:
        reach = max(reach, 2 * cached.reach)
    table = _build_sum_table(sigma, count, reach, prec)
    if len(_SUM_TABLES) >= 16:
        _SUM_TABLES.pop(next(iter(_SUM_TABLES)))
    _SUM_TABLES[key] = table
    return table


def _build_sum_table(sigma: Param, n: int, reach: int, prec: int) -> _SumTable:
    """The exact convolution of ``n`` lower-bounded discrete Gaussian tables in fixed point.

    Bits: the working precision plus the dynamic range down to the window's edge (an estimate of
    the smallest value there, :func:`_edge_nats`). A table with a value still 0 within ``±reach``
    (the estimate fell short: its enclosure would touch zero inside the support) is rebuilt with
    twice the bits; beyond :data:`MAX_SUM_TABLE_BITS` the sum is refused, naming ``sigma``. The
    component's own rounding error is lost mass too: it is computed at that precision, by the
    recurrence ``e^{-(x+1)^2/(2σ^2)} = e^{-x^2/(2σ^2)} · e^{-(2x+1)/(2σ^2)}`` (two interval
    products per point instead of an exponential at thousands of bits).
    """
    s = float(sigma)
    edge_log2 = min(_edge_nats(s, n, reach) / math.log(2), 2.0 * MAX_SUM_TABLE_BITS)
    bits = prec + int(edge_log2) + 2 * max(n, 2).bit_length() + 16
    while True:
        if bits > MAX_SUM_TABLE_BITS:
            raise ParameterError(
                "sigma",
                sigma,
                f"a per-summand σ whose sum of {n} has no value below 2^-{MAX_SUM_TABLE_BITS} in its "
                f"window (this one needs more than {bits // 2} bits per entry: P(X = ±1) = "
                "e^(-1/(2σ²)) of each summand is too small for an exact table); a larger σ, or "
                "route='published' (KLS 2021, σ >= 1/2)",
            )
        table = _convolved_table(sigma, n, reach, bits)
        inside = _trim(table.masses, table.offset, reach)[0]
        if len(inside) == 2 * reach + 1 and min(inside) > 0:
            return table
        bits *= 2


def _convolved_table(sigma: Param, n: int, reach: int, bits: int) -> _SumTable:
    """:func:`_build_sum_table` at ``bits`` fractional bits."""
    s = float(sigma)
    stages = 2 * max(n, 2).bit_length()

    def cut(k: int) -> int:
        # P(|Z_k| > W) <= 2 exp(-W^2/(2kσ^2)) <= 2^-bits / stages.
        w = math.sqrt(2 * k * s * s * (bits * math.log(2) + math.log(4 * stages))) + 1
        return math.ceil(w)

    w1 = cut(1)
    saved = iv.prec
    try:
        iv.prec = bits + 16
        half = _discrete_gaussian_half(to_interval(sigma), w1)
    finally:
        iv.prec = saved
    base = _to_fixed([*reversed(half[1:]), *half], bits)
    base_k, base_off = 1, -w1
    acc: list[int] | None = None
    acc_k, acc_off = 0, 0
    remaining = n
    while True:
        if remaining & 1:
            if acc is None:
                acc, acc_k, acc_off = base, base_k, base_off
            else:
                acc = [x >> bits for x in convolve(acc, base)]
                acc_k += base_k
                acc_off += base_off
                acc, acc_off = _trim(acc, acc_off, max(cut(acc_k), reach))
        remaining >>= 1
        if not remaining:
            break
        base = [x >> bits for x in convolve(base, base)]
        base_k *= 2
        base_off *= 2
        base, base_off = _trim(base, base_off, max(cut(base_k), reach))
    assert acc is not None
    missing = (1 << bits) - sum(acc)
    if missing < 0:  # impossible for lower bounds of a probability vector
        raise AssertionError("lower bounds exceed one")
    return _SumTable(reach, bits, acc_off, acc, missing)


#: The most fixed-point bits per entry of a table of :class:`SumOfDiscreteGaussians`: beyond, the
#: per-summand σ is so small (its ``P(±1) = e^{-1/(2σ²)}``) that the exact convolution would carry
#: megabits per entry; the sum is refused, naming ``sigma``.
MAX_SUM_TABLE_BITS = 2**17


def _edge_nats(s: float, n: int, reach: int) -> float:
    """An estimate of ``-ln P(Z = reach)`` for ``Z`` the sum of ``n`` discrete Gaussians of ``σ = s``.

    The Gaussian estimate ``reach²/(2nσ²)`` is close from σ of about 1 on, but below it the
    lattice dominates: the likeliest way to reach ``x`` is ``x`` summands at ±1 (each
    ``e^{-1/(2σ²)}``), far rarer than the Gaussian's tail (for σ = 0.042, e^{-283} per unit).
    There the exact bound of that configuration is used: ``Σ k_i²/(2σ²) + n ln N(σ)`` with the
    ``k_i`` as equal as possible (``ln N <= ln(1 + 2 r/(1 - r))``, ``r = e^{-1/(2σ²)}``), unless its
    ``n ln N`` alone exceeds the Gaussian estimate (many summands are off 0: the Gaussian regime).
    Too small an estimate left values of the table at 0 (an enclosure touching zero inside the
    support); :func:`_build_sum_table` now rebuilds then, so this only saves rebuilds.
    """
    if not s * s > 0:
        return math.inf  # σ² underflows: e^{-1/(2σ²)} is 0 to any precision a table could carry
    gauss = reach**2 / (2 * n * s * s) + math.log(math.sqrt(2 * math.pi * n) * s + 1)
    if s >= 1:
        return gauss
    inv = 1 / (2 * s * s)
    r = math.exp(-inv)
    log_norm = math.log1p(2 * r / (1 - r))
    if n * log_norm > gauss:
        return gauss  # many summands off 0: the Gaussian regime (the rebuild covers a shortfall)
    q, rem = divmod(reach, n)
    squares = (n - rem) * q * q + rem * (q + 1) ** 2
    return max(gauss, squares * inv + n * log_norm)


def _discrete_gaussian_half(sigma: Interval, width: int) -> list[Interval]:
    """``P(N_Z(0, σ^2) = x)`` for ``x = 0..width`` by the recurrence of :func:`_build_sum_table`."""
    inv_two_s2 = 1 / (2 * sigma * sigma)
    q = iv.exp(-2 * inv_two_s2)  # e^{-1/σ^2}: the ratio of consecutive factors
    factor = iv.exp(-inv_two_s2)  # e^{-(2x+1)/(2σ^2)} at x = 0
    value = 1 / _dg_normalizer(sigma)
    out = [value]
    for _ in range(width):
        value = value * factor
        factor = factor * q
        out.append(value)
    return out


@dataclass(frozen=True)
class SumOfDiscreteGaussians(LatticeNoise):
    """The sum of ``count`` independent ``N_Z(0, σ^2)`` (spec §2.5, §3.3): not a discrete Gaussian.

    ``sigma`` is the per-summand (per-user) parameter. The exact table is the exact
    convolution of lower bounds in fixed point (``F`` bits, rounded down, Kronecker
    products), with windows cut where the sub-Gaussian tail (each summand is
    ``σ^2``-sub-Gaussian, CKS 2020) is below ``2^-F``. The computed values are lower
    bounds whose total ``M`` falls short of 1 by all the truncated and rounded-off mass,
    so ``true(x) <= lower(x) + (1 - M)`` at every ``x``: a certified enclosure without any
    bookkeeping of where mass was lost.
    """

    sigma: Param
    count: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _param("sigma", self.sigma))
        object.__setattr__(self, "count", v.integer("count", self.count, minimum=1))

    @property
    def symmetric(self) -> bool:
        return True

    @property
    def component(self) -> DiscreteGaussian:
        return DiscreteGaussian(self.sigma)

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        table = _sum_table(self.sigma, self.count, max(abs(lo), abs(hi)), iv.prec)
        bits, offset, acc, missing = table.bits, table.offset, table.masses, table.missing
        out: list[Interval] = []
        for x in range(lo, hi + 1):
            i = x - offset
            low = acc[i] if 0 <= i < len(acc) else 0
            # Exact dyadic endpoints; iv.mpf then rounds them outward to the working precision.
            ends = [mp.make_mpf(mpmath.libmp.from_man_exp(m, -bits)) for m in (low, low + missing)]
            out.append(iv.mpf(ends))
        return out

    def _sf(self, t: int) -> Interval:
        # Each summand is σ^2-sub-Gaussian (CKS 2020), so the sum is nσ^2-sub-Gaussian.
        if t <= 0:
            return iv.mpf(1)
        sigma = to_interval(self.sigma)
        return iv.exp(-(iv.mpf(t) ** 2) / (2 * self.count * sigma * sigma))

    def _cdf(self, t: int) -> Interval:
        return self._sf(-t)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        # Post-processing: Z + Δ = (X_1 + Δ) + (X_2 + ... + X_n), so D_β is at most the
        # single discrete Gaussian's, <= β Δ^2/(2σ^2) (CKS 2020); and at most β ρ for the zCDP
        # ρ of Kairouz–Liu–Steinke 2021 Prop. 13 (about n times smaller: the Hölder window of
        # a Rényi sum at order 256 shrinks from ±1600 to ±520 for n = 10, σ = 2).
        single = self.component.renyi_prior(shift, alpha)
        rho = self.rho_tail(shift, alpha)
        return RenyiPrior(single.beta, min(single.bound, single.beta * rho))

    def max_privacy_loss(self, shift: int) -> Mpf:
        return mp.zero if shift == 0 else mp.inf

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        # Kairouz–Liu–Steinke 2021 Prop. 13 (requires σ >= 1/2), else one summand's CKS bound.
        from accounting.bounds import sum_discrete_gaussians_rho_kls

        single = self.component.rho_tail(shift, alpha)
        with precision(DEFAULT_DPS):
            sigma = float_down(lower(to_interval(self.sigma)))  # less noise: a larger bound
        if shift == 0 or sigma < 0.5:
            return single
        return min(single, to_mpf(sum_discrete_gaussians_rho_kls(sigma, self.count, abs(shift))))

    def variance(self) -> float:
        return self.count * self.component.variance()

    @cached_property
    def _float_table(self) -> tuple[int, FloatArray]:
        n = self.count
        s = float(self.sigma)
        w = math.ceil(10 * s) + 2
        xs = np.arange(-w, w + 1)
        one = self.component.pmf(xs)
        table = np.array([1.0])
        offset = 0
        base, base_off = one, -w
        remaining = n
        while remaining:
            if remaining & 1:
                table = np.convolve(table, base)
                offset += base_off
            remaining >>= 1
            if remaining:
                base = np.convolve(base, base)
                base_off *= 2
        return offset, table

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = _as_int_array(x)
        offset, table = self._float_table
        idx = xs - offset
        inside = (idx >= 0) & (idx < table.size) & (xs == np.round(xs))
        out = np.zeros(xs.shape, dtype=np.float64)
        out[inside] = table[idx[inside].astype(np.int64)]
        return out

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        shape = _size(size)
        total = math.prod(shape)
        out = np.zeros(total, dtype=np.int64)
        # Summands in blocks so memory stays bounded for many users.
        block = max(1, 2**22 // max(total, 1))
        done = 0
        while done < self.count:
            k = min(block, self.count - done)
            out += self.component.sample(rng, (k, total)).sum(axis=0)
            done += k
        return out.reshape(shape)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: the sum of ``count`` exact discrete Gaussians (CKS 2020 Algorithm 3)."""
        shape, total = _shape_total(rng, size)
        component = self.component
        out = np.zeros(total, dtype=np.int64)
        block = max(1, 2**22 // max(total, 1))
        done = 0
        while done < self.count:
            k = min(block, self.count - done)
            out += component.sample_exact(rng, (k, total)).sum(axis=0)
            done += k
        return _shaped(out, shape)


def _trim(table: list[int], offset: int, reach: int) -> tuple[list[int], int]:
    """Keep the entries at ``|x| <= reach`` (dropping mass only lowers the lower bounds)."""
    start = max(0, -reach - offset)
    stop = min(len(table), reach - offset + 1)
    return table[start:stop], offset + start


# ---------------------------------------------------------------------------------------
# Binomial
# ---------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _even_bernoulli_numbers(count: int) -> tuple[Fraction, ...]:
    """``B_2, B_4, ..., B_{2 count}`` exactly (Akiyama–Tanigawa; ``B_1 = +1/2`` is not used)."""
    out: list[Fraction] = []
    row: list[Fraction] = []
    for m in range(2 * count + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        if m >= 2 and m % 2 == 0:
            out.append(row[0])
    return tuple(out)


#: The most terms of Stirling's series :func:`ln_factorial` sums (``B_2 .. B_60``): from ``m = 256``
#: on they reach an error below ``10^-100``.
_STIRLING_TERMS = 30


def ln_factorial(m: int) -> Interval:
    """``ln m!`` as an :mod:`mpmath.iv` interval at the current precision, certified.

    Exact (the integer ``m!``, rounded outward) below 256; beyond, Stirling's series for
    ``ln Γ(m + 1)`` with as many terms as the precision needs. DLMF 5.11.1 and §5.11(ii): for real
    ``x > 0`` the error of the series truncated after the ``B_{2K}`` term is at most the first
    omitted term, ``|B_{2K+2}| / ((2K+2)(2K+1) x^{2K+1})``, which is added as a symmetric interval.
    (:func:`mpmath.iv.loggamma` is not used: it does not always round outward.)
    """
    if m < 256:
        return iv.log(iv.mpf(math.factorial(m)))
    x = iv.mpf(m + 1)
    s = (x - iv.mpf(0.5)) * iv.log(x) - x + iv.log(2 * iv.pi) / 2
    bernoulli = _even_bernoulli_numbers(_STIRLING_TERMS + 1)
    floor = mp.ldexp(1, -iv.prec)
    for k in range(1, _STIRLING_TERMS + 1):
        s += to_interval(bernoulli[k - 1] / (2 * k * (2 * k - 1))) / x ** (2 * k - 1)
        rem = upper(abs(to_interval(bernoulli[k] / ((2 * k + 2) * (2 * k + 1)))) / x ** (2 * k + 1))
        if rem < floor:
            break
    return s + iv.mpf([-rem, rem])


#: The PMF's first value is the exact rational ``C(n, k) a^k (d-a)^(n-k) / d^n`` (``p = a/d``) while
#: ``n`` times the bits of ``d`` is at most this (``math.comb(n, n/2)``: 2 ms at ``n = 10^4``, 0.1 s
#: at ``10^5``, 6 s at ``10^6``); beyond, it is enclosed through :func:`ln_factorial`.
EXACT_ANCHOR_BITS = 2**18


class _BinomialLaw(LatticeNoise):
    """``offset + Binomial(trials, p)``: the PMF, tails and samplers of :class:`Binomial` and
    :class:`CenteredBinomial` (its ``p = 1/2`` case moved by ``-floor(trials/2)``), written once."""

    trials: int

    @property
    @abstractmethod
    def _p(self) -> Fraction:
        """The success probability as an exact rational."""

    @property
    @abstractmethod
    def _offset(self) -> int:
        """The value of the noise at zero successes."""

    def support(self) -> tuple[float, float]:
        return (float(self._offset), float(self._offset + self.trials))

    def _center(self) -> float:
        return float(self._offset + self.trials * self._p)

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        """The first value in the support from :meth:`_anchor`, then the exact ratio
        ``P(k+1)/P(k) = (n-k)/(k+1) · p/(1-p)`` upwards (one interval product per point)."""
        n, low, p = self.trials, self._offset, self._p
        odds = None if p == Fraction(1, 2) else to_interval(p / (1 - p))  # at p = 1/2 exactly 1
        out: list[Interval] = []
        value: Interval | None = None
        for x in range(lo, hi + 1):
            k = x - low
            if k < 0 or k > n:
                out.append(iv.mpf(0))
                continue
            if value is None:
                value = self._anchor(k)
            out.append(value)
            value = value * (n - k) / (k + 1)
            if odds is not None:
                value = value * odds
        return out

    def _anchor(self, k: int) -> Interval:
        """``C(n, k) p^k (1-p)^(n-k)`` at the current precision: the exact rational when it is
        small (:data:`EXACT_ANCHOR_BITS`), else ``exp`` of certified log-factorials and logs,
        evaluated with enough extra bits that the ``n ln n``-sized terms cancel without loss."""
        n, p = self.trials, self._p
        a, d = p.numerator, p.denominator
        if n * d.bit_length() <= EXACT_ANCHOR_BITS:
            # Exact integers (iv.loggamma does not always round outward); iv rounds them outward.
            return iv.mpf(math.comb(n, k) * a**k * (d - a) ** (n - k)) / iv.mpf(d) ** n
        saved = iv.prec
        iv.prec = saved + 2 * n.bit_length() + 16
        try:
            log_value = ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
            if k:
                log_value += k * iv.log(to_interval(p))
            if n - k:
                log_value += (n - k) * iv.log(to_interval(1 - p))
            return iv.exp(log_value)
        finally:
            iv.prec = saved

    def _chernoff(self, k: int) -> Interval:
        """``exp(-n KL(k/n || p))``: Chernoff's bound on ``P(K >= k)`` for ``k >= np`` and on
        ``P(K <= k)`` for ``k <= np``, ``K ~ Binomial(n, p)`` (Hoeffding 1963, Theorem 1)."""
        n, p = self.trials, self._p
        exponent = iv.mpf(0)
        if k:
            exponent += k * (iv.log(iv.mpf(k)) - iv.log(iv.mpf(n) * to_interval(p)))
        if n - k:
            exponent += (n - k) * (iv.log(iv.mpf(n - k)) - iv.log(iv.mpf(n) * to_interval(1 - p)))
        return iv.exp(-exponent)

    def _sf(self, t: int) -> Interval:
        k = t - self._offset
        if k <= self.trials * self._p:
            return iv.mpf(1)
        return self._chernoff(k)

    def _cdf(self, t: int) -> Interval:
        k = t - self._offset
        if k >= self.trials * self._p:
            return iv.mpf(1)
        return self._chernoff(k)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        return RenyiPrior(math.inf, self.max_privacy_loss(shift))

    def max_privacy_loss(self, shift: int) -> Mpf:
        return mp.inf if shift else mp.zero  # X + shift has mass outside the support of X

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        return self.max_privacy_loss(shift)

    def variance(self) -> float:
        p = self._p
        return float(self.trials * p * (1 - p))

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = _as_int_array(x)
        import scipy.stats  # here, not at module level: importing it takes about a second

        out = scipy.stats.binom.pmf(xs - self._offset, self.trials, float(self._p))
        return np.asarray(out, dtype=np.float64)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        return (rng.binomial(self.trials, float(self._p), _size(size)) + self._offset).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws from fair random bits only (:func:`_exact_binomial`), plus the offset."""
        shape, total = _shape_total(rng, size)
        return _shaped(_exact_binomial(rng, self.trials, self._p, total) + self._offset, shape)


#: Random words per block of an exact binomial draw (32 MB), so memory stays bounded.
_BLOCK_WORDS = 2**22


def _fair_counts(rng: Randomness, trials: IntArray) -> IntArray:
    """``Binomial(trials[i], 1/2)`` for each ``i``: the popcount of ``trials[i]`` random bits.

    Row ``i`` takes ``ceil(max trials / 64)`` words and keeps its first ``trials[i]`` bits (of a
    partly used word, the high ones), drawn in blocks of rows; with equal ``trials`` this is
    the popcount of ``accounting._exact.centered_binomial``, word for word.
    """
    counts = np.zeros(trials.size, dtype=np.int64)
    if not trials.size:
        return counts
    nwords = max(1, -(-int(trials.max()) // 64))
    rows = max(1, _BLOCK_WORDS // nwords)
    column = np.arange(nwords)
    for start in range(0, trials.size, rows):
        ks = trials[start : start + rows]
        words = _exact.random_words(rng, ks.size * nwords).reshape(ks.size, nwords)
        full, rem = ks // 64, ks % 64
        words[column[None, :] >= (full + (rem > 0))[:, None]] = 0
        partial = np.flatnonzero(rem > 0)
        words[partial, full[partial]] >>= (64 - rem[partial]).astype(np.uint64)
        counts[start : start + ks.size] = np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    return counts


def _exact_binomial(rng: Randomness, trials: int, p: Fraction, size: int) -> IntArray:
    """``size`` draws of ``Binomial(trials, p)`` for a rational ``p``, from fair random bits only.

    A trial succeeds when a uniform ``U ∈ [0, 1)`` is below ``p``; ``U`` is revealed one binary
    digit at a time against the digits ``b_1 b_2 ...`` of ``p`` (exact long division). While a
    trial's digits equal ``p``'s it is undecided; at a digit where they differ it is decided: a
    success when ``b_j = 1`` (``U``'s digit is 0), a failure when ``b_j = 0``. Of the ``K``
    undecided trials of a draw, the number decided at a digit is ``Binomial(K, 1/2)`` — a popcount
    (:func:`_fair_counts`) — so about ``2 trials`` random bits per draw in all. When ``p``'s
    expansion ends (a dyadic ``p``, every float), the still undecided trials have ``U >= p``:
    failures. At ``p = 1/2`` this is one popcount of ``trials`` bits.
    """
    a, d = p.numerator, p.denominator
    words = -(-trials // 64)
    _exact._check_work(
        "trials", Fraction(trials), size * (2 * words + 1), "about 2 trials/64 random words per draw"
    )
    out = np.zeros(size, dtype=np.int64)
    left = np.full(size, trials, dtype=np.int64)  # undecided trials of each draw
    active = np.arange(size)
    while active.size and a:
        a *= 2
        digit = a >= d
        if digit:
            a -= d
        decided = _fair_counts(rng, left[active])
        if digit:
            out[active] += decided
        left[active] -= decided
        active = active[left[active] > 0]
    return out


@dataclass(frozen=True)
class Binomial(_BinomialLaw):
    """``Binomial(trials, p)`` on ``{0, ..., trials}``: the noise of the shuffle summation protocols.

    ``P(k) = C(n, k) p^k (1-p)^(n-k)``; mean ``np``, variance ``np(1-p)``. Log-concave, and not
    symmetric (its support is ``[0, n]``): a mechanism adding it is accounted for both shifts
    ``±Δ`` (:class:`~accounting.mechanisms.AdditiveNoise`), which differ unless ``p = 1/2``.
    ``p`` is used as the exact rational it is (a float is the dyadic rational it stores; pass a
    :class:`fractions.Fraction` for ``1/3``). :class:`CenteredBinomial` is ``Binomial(n, 1/2)``
    moved to ``-floor(n/2)`` and shares every computation with it.

    The exact PMF starts from :meth:`_anchor` (an exact rational for small ``n``, else certified
    log-factorials, :func:`ln_factorial`) and follows the exact ratio recurrence, so its cost is
    the window's length whatever ``n``; tails by Chernoff's bound; ``sample_exact`` uses fair
    random bits only (:func:`_exact_binomial`).
    """

    trials: int
    p: Param = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "trials", v.integer("trials", self.trials, minimum=1))
        checked = v.open_unit("p", self.p)
        if isinstance(self.p, Fraction):
            if not 0 < self.p < 1:
                raise ParameterError("p", self.p, "a real number in the open interval (0, 1)")
            return
        object.__setattr__(self, "p", checked)

    @property
    def _p(self) -> Fraction:
        return Fraction(self.p)

    @property
    def _offset(self) -> int:
        return 0


@dataclass(frozen=True)
class CenteredBinomial(_BinomialLaw):
    """``Binomial(trials, 1/2) - floor(trials/2)``: binomial noise on the integers (spec §2.7).

    The support is ``[-floor(n/2), ceil(n/2)]``; the mean is 0 for even ``trials`` and 1/2
    for odd. The ``p = 1/2`` case of :class:`Binomial`, moved: the same PMF (``C(n, k)/2^n``
    exactly for ``n`` up to about 10^5, then certified log-factorials), tails and samplers.
    """

    trials: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "trials", v.integer("trials", self.trials, minimum=1))

    @property
    def symmetric(self) -> bool:
        return self.trials % 2 == 0

    @property
    def _p(self) -> Fraction:
        return Fraction(1, 2)

    @property
    def _offset(self) -> int:
        return -(self.trials // 2)


# ---------------------------------------------------------------------------------------
# A lattice distribution moved by an integer
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shifted(LatticeNoise):
    """``base + shift`` for an integer ``shift``: the output of ``q(D) + X`` when ``q(D) = shift``."""

    base: LatticeNoise
    shift: int

    def __post_init__(self) -> None:
        if not isinstance(self.base, LatticeNoise):
            raise ParameterError("base", self.base, "a LatticeNoise")
        object.__setattr__(self, "shift", v.integer("shift", self.shift))

    @property
    def log_concave(self) -> bool:
        return self.base.log_concave

    def support(self) -> tuple[float, float]:
        lo, hi = self.base.support()
        return (lo + self.shift, hi + self.shift)

    def _center(self) -> float:
        return self.base._center() + self.shift

    def pmf_intervals(self, lo: int, hi: int, dps: int = DEFAULT_DPS) -> list[Interval]:
        return self.base.pmf_intervals(lo - self.shift, hi - self.shift, dps)

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        return self.base._intervals(lo - self.shift, hi - self.shift)

    def _sf(self, t: int) -> Interval:
        return self.base._sf(t - self.shift)

    def _cdf(self, t: int) -> Interval:
        return self.base._cdf(t - self.shift)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        return self.base.renyi_prior(shift, alpha)

    def max_privacy_loss(self, shift: int) -> Mpf:
        return self.base.max_privacy_loss(shift)

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        return self.base.rho_tail(shift, alpha)

    def variance(self) -> float:
        return self.base.variance()

    def pmf(self, x: ArrayLike) -> FloatArray:
        return self.base.pmf(np.asarray(x) - self.shift)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.generic]:
        return self.base.sample(rng, size) + self.shift

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        return np.asarray(self.base.sample_exact(rng, size) + self.shift, dtype=np.int64)


# ---------------------------------------------------------------------------------------
# Continuous baselines
# ---------------------------------------------------------------------------------------


class ContinuousNoise(NoiseDistribution):
    """A continuous baseline; its mechanisms are accounted by closed forms."""

    @abstractmethod
    def pdf(self, x: ArrayLike) -> FloatArray:
        """The density in float64, vectorized."""

    @abstractmethod
    def pdf_exact(self, x: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The density at ``x``, certified."""


@dataclass(frozen=True)
class Laplace(ContinuousNoise):
    """Continuous Laplace ``Lap(0, b)``, density ``e^{-|x|/b}/(2b)`` (spec §2.6; DP-SE baseline).

    Floating-point Laplace noise leaks through its low-order bits (Mironov 2012): use it
    to compare, not to deploy.
    """

    scale: Param

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _param("scale", self.scale))

    def pdf(self, x: ArrayLike) -> FloatArray:
        b = float(self.scale)
        return np.exp(-np.abs(np.asarray(x, dtype=np.float64)) / b) / (2 * b)

    def pdf_exact(self, x: float, dps: int = DEFAULT_DPS) -> Enclosure:
        x = v.real("x", x)
        with precision(v.dps("dps", dps)):
            b = to_interval(self.scale)
            return Enclosure.from_interval(iv.exp(-abs(iv.mpf(x)) / b) / (2 * b))

    def variance(self) -> float:
        return 2 * float(self.scale) ** 2

    def tail_bound(self, t: float) -> float:
        t = v.nonnegative("t", t)
        with mp.workdps(30):
            return float_up(mp.exp(-mp.mpf(t) / to_mpf(self.scale)))

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> FloatArray:
        return rng.laplace(0.0, float(self.scale), _size(size))


@dataclass(frozen=True)
class Gaussian(ContinuousNoise):
    """Continuous Gaussian ``N(0, σ^2)`` (baseline for the Gaussian mechanism)."""

    sigma: Param

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _param("sigma", self.sigma))

    def pdf(self, x: ArrayLike) -> FloatArray:
        s = float(self.sigma)
        xs = np.asarray(x, dtype=np.float64)
        return np.exp(-(xs**2) / (2 * s * s)) / (math.sqrt(2 * math.pi) * s)

    def pdf_exact(self, x: float, dps: int = DEFAULT_DPS) -> Enclosure:
        x = v.real("x", x)
        with precision(v.dps("dps", dps)):
            s = to_interval(self.sigma)
            xi = iv.mpf(x)
            return Enclosure.from_interval(iv.exp(-(xi * xi) / (2 * s * s)) / (iv.sqrt(2 * iv.pi) * s))

    def variance(self) -> float:
        return float(self.sigma) ** 2

    def tail_bound(self, t: float) -> float:
        t = v.nonnegative("t", t)
        # P(|X| >= t) = erfc(t/(σ√2)); evaluated with 20 guard digits and rounded up.
        with mp.workdps(40):
            value = mp.erfc(mp.mpf(t) / (to_mpf(self.sigma) * mp.sqrt(2)))
            return float_up(value * (1 + mp.mpf(10) ** -30))

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> FloatArray:
        return rng.normal(0.0, float(self.sigma), _size(size))
