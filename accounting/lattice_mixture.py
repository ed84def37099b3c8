"""A mixture of lattice noise and its shift: one side of a subsampled lattice pair.

``(1 - w)·X + w·(X + s)`` is the law of a release of lattice noise ``X`` whose query moved by ``s``
with probability ``w`` (a record sampled into the batch, :mod:`accounting.subsampling`). It is a
:class:`~accounting.noise.LatticeNoise` whose exact PMF tables and certified tails are those of
``X``'s combined, so the window sums of :mod:`accounting.divergence` answer a subsampled lattice
pair as they answer a shift pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.certified import Interval, Mpf, exact_fraction, precision, to_interval, upper
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError
from accounting.noise import DEFAULT_DPS, LatticeNoise, RenyiPrior

__all__ = ["LatticeMixture"]

FloatArray = NDArray[np.float64]


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
        if isinstance(self.weight, int | Fraction):
            w = Fraction(self.weight)
        else:
            v.real("weight", self.weight)  # validated, then the exact rational it stores
            w = exact_fraction(self.weight, "weight")
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
