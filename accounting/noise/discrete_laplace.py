"""The discrete Laplace distribution ``Lap_Z(b)`` (scale ``b``, or decay ``β = e^{-1/b}``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike

from accounting import _exact
from accounting import validate as v
from accounting._exact import Randomness
from accounting.certified import Interval, Mpf, to_interval, to_mpf
from accounting.errors import ParameterError
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

__all__ = ["DiscreteLaplace"]


@dataclass(frozen=True, init=False)
class DiscreteLaplace(LatticeNoise):
    """Discrete Laplace ``Lap_Z(b)``: ``P(x) = tanh(1/(2b)) e^{-|x|/b}`` on the integers.

    Definition 4 of Chowdhury & Zhou 2023 (ICLR), "Distributed differential privacy in multi-armed
    bandits"; ``tanh(1/(2b))`` equals the paper's ``(e^{1/b} - 1)/(e^{1/b} + 1)``. Exact tail (Fact 3):
    ``P(X >= t) = e^{-(t-1)/b} / (e^{1/b} + 1)`` for ``t >= 1``.

    Give either the scale ``b`` or, keyword-only, the decay ``beta`` ``β = e^{-1/b}`` in (0, 1)
    (the ``β`` of :class:`Polya` and ``dp-account --beta``; ``decay=`` is its old spelling), which
    is how Pólya shares define it (``DistributedSum`` of ``Polya(1/n, β)``): the exact computations
    then use ``β`` itself, not ``e^{-1/b}`` of a rounded ``b``. A ledger stores ``β`` under the
    field name ``"decay"`` (the ledger format's, unchanged).
    """

    scale: Param
    beta: Param | None

    @v.old_keywords(decay="beta")
    def __init__(self, scale: Param | None = None, *, beta: Param | None = None) -> None:
        if (scale is None) == (beta is None):
            raise ParameterError("scale", scale, "exactly one of scale > 0 or beta in (0, 1)")
        if beta is not None:
            exact = parameter("beta", beta)
            v.open_unit("beta", exact)
            object.__setattr__(self, "beta", exact)
            object.__setattr__(self, "scale", -1 / math.log(float(exact)))
        else:
            object.__setattr__(self, "scale", parameter("scale", scale))
            object.__setattr__(self, "beta", None)

    @property
    def decay(self) -> Param | None:
        """The old name of :attr:`beta` (read with a note)."""
        v.old_name("DiscreteLaplace's attribute", "decay", "beta")
        return self.beta

    def __repr__(self) -> str:
        if self.beta is not None:
            return f"DiscreteLaplace(beta={self.beta!r})"
        return f"DiscreteLaplace(scale={self.scale!r})"

    @property
    def symmetric(self) -> bool:
        return True

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _q(self) -> Interval:
        """``q = e^{-1/b}`` (the decay β itself when given)."""
        if self.beta is not None:
            return to_interval(self.beta)
        return iv.exp(-1 / to_interval(self.scale))

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        q = self._q()
        c = (1 - q) / (1 + q)
        if self.beta is None:
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
        if self.beta is not None:
            return -abs(shift) * mp.log(to_mpf(self.beta))
        return abs(shift) / to_mpf(self.scale)

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        return self.max_privacy_loss(shift) / alpha

    def variance(self) -> float:
        # 2q/(1-q)^2 with 1 - q = -expm1(-1/b): 1 - exp(-1/b) cancels to 0 for a scale near 1e16.
        if self.beta is not None:
            q = float(self.beta)
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
        xs = as_float64(x)
        b = float(self.scale)
        return np.where(xs == np.round(xs), math.tanh(1 / (2 * b)) * np.exp(-np.abs(xs) / b), 0.0)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        v.at_most("scale", float(self.scale), MAX_SAMPLE_SCALE, WHY_SAMPLE)
        p = -math.expm1(-1 / float(self.scale))
        shape = sample_shape(size)
        return (rng.geometric(p, shape) - rng.geometric(p, shape)).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: CKS 2020 Algorithm 2 for a rational ``scale``; a difference of two exact
        geometrics (Bernoulli(β) trials, about ``1/(1-β)`` draws each) for a rational ``beta``."""
        shape, total = exact_shape(rng, size)
        v.at_most("scale", float(self.scale), MAX_EXACT_SCALE, WHY_EXACT)
        if self.beta is None:
            out = _exact.discrete_laplace(rng, _exact.rational("scale", self.scale), total)
        else:
            beta = _exact.rational("beta", self.beta)
            out = _exact.geometric(rng, beta, total) - _exact.geometric(rng, beta, total)
        return as_int64(out, shape)
