"""Continuous baselines: Laplace and Gaussian noise, accounted by closed forms.

Floating-point continuous noise leaks through its low-order bits (Mironov 2012): these are for
comparison with the papers' baselines, not for deployment; they have no exact sampler.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass

import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike

from accounting import validate as v
from accounting.certified import DEFAULT_DPS, Enclosure, float_up, precision, to_interval, to_mpf
from accounting.noise.base import FloatArray, NoiseDistribution, Param, parameter, sample_shape

__all__ = ["ContinuousNoise", "Gaussian", "Laplace"]


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
    """Continuous Laplace ``Lap(0, b)``, density ``e^{-|x|/b}/(2b)`` (the baseline DP-SE adds).

    Floating-point Laplace noise leaks through its low-order bits (Mironov 2012): use it
    to compare, not to deploy.
    """

    scale: Param

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", parameter("scale", self.scale))

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
        return rng.laplace(0.0, float(self.scale), sample_shape(size))


@dataclass(frozen=True)
class Gaussian(ContinuousNoise):
    """Continuous Gaussian ``N(0, σ^2)`` (baseline for the Gaussian mechanism)."""

    sigma: Param

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", parameter("sigma", self.sigma))

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
        return rng.normal(0.0, float(self.sigma), sample_shape(size))
