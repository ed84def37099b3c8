"""The discrete Gaussian ``N_Z(0, σ²)`` (Canonne, Kamath & Steinke 2020) and its certified normalizer."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike

from accounting import _exact
from accounting import validate as v
from accounting._exact import Randomness
from accounting.certified import (
    DEFAULT_DPS,
    Enclosure,
    Interval,
    Mpf,
    lower,
    precision,
    to_interval,
    to_mpf,
    upper,
)
from accounting.errors import UnsupportedError
from accounting.noise.base import (
    MAX_EXACT_SCALE,
    MAX_SAMPLE_SCALE,
    WHY_EXACT,
    WHY_SAMPLE,
    FloatArray,
    IntArray,
    LatticeNoise,
    Param,
    RenyiPrior,
    as_float64,
    as_int64,
    exact_shape,
    parameter,
    sample_shape,
)
from accounting.noise.discrete_laplace import DiscreteLaplace
from accounting.special import erfc

__all__ = ["TAIL_SUM_SIGMA", "DiscreteGaussian", "normalizer"]


def _geometric_tail(first: Interval, ratio: Interval) -> Interval:
    """``first / (1 - ratio)``: the sum of a geometric series (ratio < 1)."""
    return first / (1 - ratio)


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


def normalizer(sigma: Interval) -> Interval:
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
    """Discrete Gaussian ``N_Z(0, σ^2)``: ``P(x) ∝ e^{-x^2/(2σ^2)}`` (Canonne, Kamath & Steinke 2020).

    ``σ^2`` is the scale parameter; the variance is slightly below it (computed exactly
    by :meth:`variance`). The normalizer is certified (see :func:`normalizer`).
    """

    sigma: Param

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", parameter("sigma", self.sigma))

    @property
    def symmetric(self) -> bool:
        return True

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        sigma = to_interval(self.sigma)
        inv_two_s2 = 1 / (2 * sigma * sigma)
        inv_z = 1 / normalizer(sigma)
        return [inv_z * iv.exp(-(x * x) * inv_two_s2) for x in range(lo, hi + 1)]

    def _sf(self, t: int) -> Interval:
        if t <= 0:
            return iv.mpf(1)
        sigma = to_interval(self.sigma)
        a = 1 / (2 * sigma * sigma)
        # Consecutive terms shrink by e^{-a(2x+1)} <= e^{-a(2t+1)} beyond t.
        return _geometric_tail(iv.exp(-a * t * t), iv.exp(-a * (2 * t + 1))) / normalizer(sigma)

    def _cdf(self, t: int) -> Interval:
        return self._sf(-t)

    def sf_exact(self, t: int, dps: int = DEFAULT_DPS) -> Enclosure:
        """``P(X >= t)`` as a certified enclosure, for ``σ >=`` :data:`TAIL_SUM_SIGMA` (no window).

        See :meth:`tail_mass`.
        """
        t = v.integer("t", t)
        with precision(v.dps("dps", dps)):
            return Enclosure.from_interval(self.tail_mass(t))

    def tail_mass(self, t: int) -> Interval:
        """``P(X >= t) = Σ_{y >= t} e^{-y^2/(2σ^2)} / Z`` by the Euler–Maclaurin formula (current precision).

        With ``f(x) = e^{-x^2/(2σ^2)}`` and ``u = t/σ``:
        ``Σ_{y >= t} f(y) = ∫_t^∞ f + f(t)/2 + Σ_{k=1}^{p} B_{2k}/(2k)! σ^{1-2k} He_{2k-1}(u) f(t) + R_p``
        (``f^{(n)}(x) = (-1)^n σ^{-n} He_n(x/σ) f(x)``, probabilists' Hermite polynomials), with
        ``|R_p| <= 2ζ(2p)/(2π)^{2p} ∫|f^{(2p)}| <= 2ζ(2)/(2π)^{2p} √(2π (2p)!) σ^{1-2p}``
        (Cauchy–Schwarz with ``∫ He_n^2 e^{-u^2/2} = √(2π) n!``), and
        ``∫_t^∞ f = σ √(π/2) erfc(t/(σ√2))`` (the project's interval ``erfc``,
        :func:`accounting.special.erfc`). ``Z`` is :func:`normalizer`. Each term gains
        ``σ^-2``: for ``σ`` in the thousands a few terms reach any precision, where a window sum
        would need ``24σ`` lattice points.

        Raises
        ------
        UnsupportedError
            When ``σ`` is too small for the remainder to reach the working precision (then the
            window sums apply).
        """
        sigma = to_interval(self.sigma)
        u = iv.mpf(t) / sigma
        f_t = iv.exp(-u * u / 2)
        total = sigma * iv.sqrt(iv.pi / 2) * erfc(u / iv.sqrt(2)) + f_t / 2
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
                return total / normalizer(sigma)
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
            return float(mp.mpf(normalizer(to_interval(self.sigma)).mid))

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
        xs = as_float64(x)
        s = float(self.sigma)
        return np.where(xs == np.round(xs), np.exp(-(xs**2) / (2 * s * s)) / self._float_normalizer, 0.0)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        """Rejection from a discrete Laplace (CKS 2020 Algorithm 3), vectorized, float acceptance."""
        shape = sample_shape(size)
        total = math.prod(shape)
        sigma = v.at_most("sigma", float(self.sigma), MAX_SAMPLE_SCALE, WHY_SAMPLE)
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
        shape, total = exact_shape(rng, size)
        v.at_most("sigma", float(self.sigma), MAX_EXACT_SCALE, WHY_EXACT)
        sigma = _exact.rational("sigma", self.sigma)
        return as_int64(_exact.discrete_gaussian(rng, sigma * sigma, total), shape)
