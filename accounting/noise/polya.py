"""The Pólya (negative binomial) distribution and its case ``r = 1``, the geometric distribution.

``n`` users each adding the difference of two ``Polya(1/n, β)`` shares make the discrete Laplace of
decay ``β`` (:class:`~accounting.noise.DiscreteLaplace`; Fact 1 of Chowdhury & Zhou 2023).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike

from accounting import _exact
from accounting import validate as v
from accounting._exact import Randomness
from accounting.certified import Interval, Mpf, to_interval, to_mpf
from accounting.noise.base import (
    MAX_SAMPLE_SCALE,
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

__all__ = ["Geometric", "Polya"]


@dataclass(frozen=True)
class Polya(LatticeNoise):
    """Pólya (negative binomial) ``Polya(r, β)`` on ``{0, 1, ...}``.

    ``P(x) = Γ(x+r)/(x! Γ(r)) β^x (1-β)^r``; mean ``rβ/(1-β)``, variance ``rβ/(1-β)^2``.
    ``n`` users each adding ``Polya(1/n, e^{-1/b})`` differences make ``Lap_Z(b)`` (Fact 1 of
    Chowdhury & Zhou 2023, "Distributed differential privacy in multi-armed bandits"). The sampler
    is Gamma–Poisson with Gamma scale ``β/(1-β)``; the code released with that paper uses
    ``(1-β)/β``, which samples ``Polya(r, 1-β)``.
    """

    r: Param
    beta: Param

    def __post_init__(self) -> None:
        object.__setattr__(self, "r", parameter("r", self.r))
        object.__setattr__(self, "beta", parameter("beta", self.beta))
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
        xs = as_float64(x)
        import scipy.stats  # here, not at module level: importing it takes about a second

        out = scipy.stats.nbinom.pmf(xs, float(self.r), 1 - float(self.beta))
        return np.asarray(out, dtype=np.float64)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        b = float(self.beta)
        v.at_most("mean", float(self.r) * b / (1 - b), MAX_SAMPLE_SCALE, WHY_SAMPLE)
        lam = rng.gamma(shape=float(self.r), scale=b / (1 - b), size=sample_shape(size))
        return rng.poisson(lam).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws for rational ``r = a/b`` and ``β``: ``NB(a, β)`` totals split by the Ewens
        partition (Feller coupling), see :func:`accounting._exact.polya`. With ``r = 1/n`` and
        ``size = (R, n)`` each row of ``n`` shares costs one geometric total plus ``n`` slots."""
        shape, total = exact_shape(rng, size)
        r = _exact.rational("r", self.r)
        return as_int64(_exact.polya(rng, r, _exact.rational("beta", self.beta), total), shape)


@dataclass(frozen=True, init=False)
class Geometric(Polya):
    """Geometric on ``{0, 1, ...}``: ``P(k) = β^k (1-β)``, i.e. ``Polya(1, β)``.

    The difference of two independent ``Geometric(e^{-1/b})`` is ``Lap_Z(b)``.
    """

    def __init__(self, beta: Param) -> None:
        object.__setattr__(self, "r", Fraction(1))
        object.__setattr__(self, "beta", parameter("beta", beta))
        v.open_unit("beta", self.beta)

    def __repr__(self) -> str:
        return f"Geometric(beta={self.beta!r})"

    def _sf(self, t: int) -> Interval:
        return to_interval(self.beta) ** iv.mpf(t)  # exact: P(X >= t) = β^t

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        return (rng.geometric(1 - float(self.beta), sample_shape(size)) - 1).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: Bernoulli(β) trials with rational ``β`` (about ``1/(1-β)`` draws each)."""
        shape, total = exact_shape(rng, size)
        return as_int64(_exact.geometric(rng, _exact.rational("beta", self.beta), total), shape)
