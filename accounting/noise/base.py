"""The shared protocol of the noise distributions and the machinery every family uses.

:class:`NoiseDistribution` is what every noise offers (variance, tail bound, samplers);
:class:`LatticeNoise` adds what the exact divergences need of a distribution on the integers: a
certified PMF table (cached, :meth:`LatticeNoise.pmf_intervals`), certified one-sided tails, the
window holding all but a given mass, and the a-priori bounds (:class:`RenyiPrior`,
:meth:`LatticeNoise.rho_tail`, :meth:`LatticeNoise.max_privacy_loss`) that bound a truncated sum.
The helpers below validate parameters, sample sizes and exact-sampler arguments the same way for
every family.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike, NDArray

from accounting import _exact
from accounting import validate as v
from accounting._exact import Randomness
from accounting.certified import DEFAULT_DPS, Enclosure, Interval, Mpf, float_up, precision, upper
from accounting.errors import ParameterError, UnsupportedError
from accounting.search import expand, smallest_integer

__all__ = [
    "MAX_EXACT_SCALE",
    "MAX_SAMPLE_SCALE",
    "MAX_SAMPLE_VARIANCE",
    "WHY_EXACT",
    "WHY_SAMPLE",
    "FloatArray",
    "IntArray",
    "LatticeNoise",
    "NoiseDistribution",
    "Param",
    "RenyiPrior",
    "as_float64",
    "as_int64",
    "exact_shape",
    "parameter",
    "sample_shape",
]

#: A real parameter: a float, or an exact :class:`~fractions.Fraction` kept as one.
Param = float | Fraction
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def parameter(name: str, value: object, *, positive: bool = True) -> Param:
    """Validate a real parameter, keeping an exact Fraction as a Fraction."""
    checked = v.positive(name, value) if positive else v.nonnegative(name, value)
    if isinstance(value, Fraction):
        return value
    return checked


def sample_shape(size: int | tuple[int, ...]) -> tuple[int, ...]:
    """A validated ``size`` of a sampler as a shape tuple (``size`` an int or a tuple of ints >= 0)."""
    if isinstance(size, int | np.integer):
        return (v.integer("size", size, minimum=0),)
    return tuple(v.integer("size", s, minimum=0) for s in size)


def exact_shape(rng: object, size: int | tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """Validate ``rng`` and ``size`` of an exact sampler: the shape and the number of draws."""
    _exact.check_randomness(rng)
    shape = sample_shape(size)
    return shape, math.prod(shape)


def as_int64(values: NDArray[np.generic], shape: tuple[int, ...]) -> IntArray:
    """Exact draws as int64 of ``shape`` (every noise value here is far inside int64)."""
    return np.asarray(values, dtype=np.int64).reshape(shape)


def as_float64(x: ArrayLike) -> FloatArray:
    """The points at which a float PMF is evaluated, as float64 (non-integers get probability 0)."""
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
#: Why the samplers refuse beyond those limits (the ``why`` of their errors).
WHY_EXACT = "the exact sampler draws int64, which larger noise leaves"
WHY_SAMPLE = "the floating-point sampler's draws leave int64 or its parameters round beyond it"


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

        ``ok`` is monotone (false, then true, moving away from ``start``): the kernel's bracket
        inference (:func:`accounting.search.expand`, steps 1, 2, 4, ... from ``start``), then its
        integer bisection (:func:`accounting.search.smallest_integer`) between the last point where
        ``ok`` failed and the first where it held.
        """
        if ok(start):
            return start

        def reached(t: int) -> bool:
            if ok(t):
                return True
            if abs(t - start) > _MAX_REACH:
                # The certified tail bound has not fallen by 2^63 from the centre: the noise is
                # wider than any window an exact sum could take (or its decay rounds to 1 at the
                # working precision, as e^{-1/b} for a discrete Laplace scale near 1e33), and
                # doubling on would never end.
                raise UnsupportedError(
                    f"the noise's certified tails do not fall within 2^63 of its centre ({_MAX_REACH:.2e} "
                    "lattice points): it is too wide for an exact sum over a window"
                )
            return False

        end = int(limit) if math.isfinite(limit) else None
        failed, held = expand(reached, start, direction, anchored=True, limit=end)
        assert failed is not None  # anchored: ``start`` at the least
        if direction > 0:
            return smallest_integer(ok, failed + 1, held)
        # Moving down: the smallest y = -t in (-failed, -held] where ok(-y).
        return -smallest_integer(lambda y: ok(-y), -failed + 1, -held)


#: The farthest :meth:`LatticeNoise.window` searches from the centre (int64 range): a tail that has
#: not fallen below the mass asked for by then is refused, not searched for ever.
_MAX_REACH = 2**63


#: Tables up to this many points are cached (at most 32 of them, a few MB each).
_CACHE_POINTS = 20_000


@lru_cache(maxsize=32)
def _cached_table(noise: LatticeNoise, lo: int, hi: int, dps: int) -> tuple[Interval, ...]:
    with precision(dps):
        return tuple(noise._intervals(lo, hi))
