"""A lattice distribution moved by an integer: the output ``q(D) + X`` of a query answering ``q(D)``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting._exact import Randomness
from accounting.certified import DEFAULT_DPS, Interval, Mpf
from accounting.errors import ParameterError
from accounting.noise.base import FloatArray, IntArray, LatticeNoise, RenyiPrior

__all__ = ["Shifted"]


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
