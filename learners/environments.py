"""Multi-armed bandit environments: reward distributions on ``[0, 1]``, vectorized over repetitions.

An instance is an immutable value: ``K`` arms with known means (so pseudo-regret is exact) and a
vectorized reward draw :meth:`MABInstance.pull` that returns the rewards of ``count`` pulls of one
arm for each of ``R`` repetitions in one call (arm ``arms[r]`` in repetition ``r``). Randomness is an
explicit :class:`numpy.random.Generator`. Every reward is the inverse CDF of its arm at a uniform
*tape* value (:meth:`MABInstance.reward`), so one uniform fixes one reward.

**The reward table and common random numbers.** A run of one repetition reads its rewards from a
:class:`RewardTable`: the reward ``r_t(a)`` of *every* arm ``a`` at *every* round ``t``, drawn
independently across arms and rounds — the released code of the distributed MAB paper draws one
reward vector per round (Chowdhury & Zhou (2023), §7), and the realized regret
``Σ_t r_t(a*) - r_t(a_t)`` is defined on it. The table is never materialized: its uniforms come
from a counter-based generator (Philox) keyed per repetition, the uniforms of arm ``a`` at rounds
``t`` being the outputs at counters ``(t // 4, a, 0, 0)``, so any block of any column is computed
on demand, in chunks, and only the columns a run reads (the arm it pulls and the best arm) are
ever drawn. Algorithms given the same key read the same table: the comparison between them uses
common random numbers.

Instances of the distributed MAB paper (Chowdhury & Zhou (2023), §7 and App. J): Gaussian
rewards with standard deviation 0.1 *clipped* to ``[0, 1]`` (the released code clips and does not
resample), with means i.i.d. ``Uniform[0.25, 0.75]`` (easy) or ``Uniform[0.45, 0.55]`` (hard).
Clipping changes the mean of an arm; :attr:`MABInstance.means` is the exact mean of the clipped
law, so gaps and pseudo-regret refer to what the learner actually faces.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from accounting import validate as v
from learners.errors import ParameterError, ParameterTypeError

__all__ = [
    "BernoulliArms",
    "BetaArms",
    "ClippedGaussianArms",
    "MABInstance",
    "RewardTable",
    "gaussian_easy",
    "gaussian_hard",
]

FloatArray = NDArray[np.float64]


def _unit_means(name: str, values: ArrayLike, *, open_interval: bool = False) -> tuple[float, ...]:
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1 or a.size < 2:
        raise ParameterError(name, values, "a 1-d sequence of K >= 2 arm means")
    inside = (a > 0) & (a < 1) if open_interval else (a >= 0) & (a <= 1)
    if not inside.all():
        bad = float(a[~inside][0])
        raise ParameterError(name, bad, "means in (0, 1)" if open_interval else "means in [0, 1]")
    return tuple(float(x) for x in a)


class MABInstance(ABC):
    """``K`` arms with rewards in ``[0, 1]``."""

    @property
    @abstractmethod
    def means(self) -> FloatArray:
        """The exact mean reward of each arm, shape ``(K,)``."""

    def tape(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> FloatArray:
        """``size`` uniforms on ``[0, 1)`` read in order from ``rng`` (drawing ``a`` then ``b``
        values gives the same numbers as drawing ``a + b`` at once)."""
        return rng.random(size)

    @abstractmethod
    def reward(self, arm: ArrayLike, tape: FloatArray) -> FloatArray:
        """The rewards of ``arm`` at tape values ``tape``, uniforms on ``[0, 1)``: the inverse CDF
        of the arm's law, nondecreasing in ``tape`` (``arm`` broadcasts against ``tape``; no
        validation, this is the inner loop)."""

    @property
    def arms(self) -> int:
        """``K``."""
        return int(self.means.size)

    @property
    def best(self) -> int:
        """The index of an optimal arm."""
        return int(np.argmax(self.means))

    @property
    def gaps(self) -> FloatArray:
        """``Δ_a = μ* - μ_a``."""
        m = self.means
        return np.asarray(m.max() - m, dtype=np.float64)

    def pull(self, rng: np.random.Generator, arms: ArrayLike, count: int) -> FloatArray:
        """``count`` rewards of arm ``arms[r]`` for every repetition ``r``: shape ``(R, count)``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The reward stream.
        arms : array_like of int
            One arm index per repetition, shape ``(R,)``.
        count : int
            Pulls per repetition, ``>= 0``.
        """
        if not isinstance(rng, np.random.Generator):
            raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
        idx = np.asarray(arms)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ParameterError("arms", arms, "a 1-d array of integer arm indices (one per repetition)")
        if idx.size and (idx.min() < 0 or idx.max() >= self.arms):
            raise ParameterError("arms", arms, f"arm indices in 0..{self.arms - 1}")
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
            raise ParameterError("count", count, "an integer >= 0")
        return self.reward(idx[:, None], self.tape(rng, (idx.size, int(count))))


def _clipped_normal_mean(mu: float, sd: float) -> float:
    """``E[clip(N(mu, sd^2), 0, 1)]`` in closed form (math.erf, float64; for utility, not privacy)."""

    def phi(z: float) -> float:
        return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    def cdf(z: float) -> float:
        return 0.5 * (1 + math.erf(z / math.sqrt(2)))

    a, b = (0 - mu) / sd, (1 - mu) / sd
    # E = 0·P(X<0) + E[X; 0<=X<=1] + 1·P(X>1)
    inner = mu * (cdf(b) - cdf(a)) + sd * (phi(a) - phi(b))
    return inner + (1 - cdf(b))


@dataclass(frozen=True)
class ClippedGaussianArms(MABInstance):
    """Rewards ``clip(N(μ_a, sd²), 0, 1)`` (Chowdhury & Zhou (2023), §7); ``locations`` are the ``μ_a``
    before clipping."""

    locations: tuple[float, ...]
    sd: float = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "locations", _unit_means("locations", self.locations))
        if not (isinstance(self.sd, int | float) and math.isfinite(self.sd) and self.sd > 0):
            raise ParameterError("sd", self.sd, "a finite standard deviation > 0")

    @property
    def means(self) -> FloatArray:
        return np.array([_clipped_normal_mean(m, float(self.sd)) for m in self.locations])

    def reward(self, arm: ArrayLike, tape: FloatArray) -> FloatArray:
        """``clip(μ_a + sd Φ^{-1}(u), 0, 1)`` (``u = 0`` gives 0: clipping absorbs ``-inf``)."""
        mu = np.asarray(self.locations, dtype=np.float64)[np.asarray(arm, dtype=np.intp)]
        out = np.asarray(special.ndtri(tape), dtype=np.float64)
        out *= float(self.sd)
        out += mu
        return np.clip(out, 0.0, 1.0, out=out)


class _MeanArms(MABInstance):
    """Arms whose ``locations`` are their means."""

    locations: tuple[float, ...]

    @property
    def means(self) -> FloatArray:
        return np.asarray(self.locations, dtype=np.float64)


@dataclass(frozen=True)
class BernoulliArms(_MeanArms):
    """Rewards ``Bernoulli(μ_a)``."""

    locations: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "locations", _unit_means("locations", self.locations))

    def reward(self, arm: ArrayLike, tape: FloatArray) -> FloatArray:
        return (tape < self.means[np.asarray(arm, dtype=np.intp)]).astype(np.float64)


@dataclass(frozen=True)
class BetaArms(_MeanArms):
    """Rewards ``Beta(μ_a c, (1 - μ_a) c)`` with mean ``μ_a`` and concentration ``c``."""

    locations: tuple[float, ...]
    concentration: float = 10.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "locations", _unit_means("locations", self.locations, open_interval=True))
        c = self.concentration
        if not (isinstance(c, int | float) and math.isfinite(c) and c > 0):
            raise ParameterError("concentration", c, "a finite concentration > 0")

    def reward(self, arm: ArrayLike, tape: FloatArray) -> FloatArray:
        c = float(self.concentration)
        mu = self.means[np.asarray(arm, dtype=np.intp)]
        return np.asarray(special.betaincinv(mu * c, (1 - mu) * c, tape), dtype=np.float64)


@dataclass(frozen=True)
class RewardTable:
    """The rewards of every arm at every round of one repetition, computed on demand.

    ``r_t(a) = instance.reward(a, U[t, a])`` with ``U[t, a]`` i.i.d. uniform on ``[0, 1)``:
    independent across arms and rounds (as the released code of Chowdhury & Zhou (2023), §7, draws
    one reward vector per round). ``U[., a]`` is the stream of a Philox generator keyed by ``key``
    with counter ``(j, a, 0, 0)`` for the four uniforms of rounds ``4j .. 4j + 3``; any block of a
    column is therefore read without drawing the rest of the table, and reading a column in pieces
    gives the same numbers as reading it at once.

    Attributes
    ----------
    instance : MABInstance
        The arms.
    key : tuple of int
        Two 64-bit words keying the table (:meth:`draw` takes them from a generator).
    """

    instance: MABInstance
    key: tuple[int, int]

    def __post_init__(self) -> None:
        if not isinstance(self.instance, MABInstance):
            raise ParameterTypeError("instance", self.instance, "a learners.environments.MABInstance")
        key = tuple(self.key)
        if len(key) != 2 or not all(
            isinstance(k, int | np.integer) and not isinstance(k, bool) and 0 <= k < 2**64 for k in key
        ):
            raise ParameterError("key", self.key, "two integers in [0, 2**64)")
        object.__setattr__(self, "key", (int(key[0]), int(key[1])))

    @classmethod
    def draw(cls, instance: MABInstance, rng: np.random.Generator) -> RewardTable:
        """The table keyed by two words drawn from ``rng`` (a fresh generator from the same seed
        gives the same table: common random numbers across algorithms)."""
        if not isinstance(rng, np.random.Generator):
            raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
        words = rng.integers(0, 2**64, size=2, dtype=np.uint64, endpoint=False)
        return cls(instance, (int(words[0]), int(words[1])))

    def _check(self, arm: object, start: object, stop: object) -> tuple[int, int, int]:
        a = v.integer("arm", arm, minimum=0)
        if a >= self.instance.arms:
            raise ParameterError("arm", arm, f"an arm index in 0..{self.instance.arms - 1}")
        t0 = v.integer("start", start, minimum=0)
        return a, t0, v.integer("stop", stop, minimum=t0)

    def uniforms(self, arm: int, start: int, stop: int) -> FloatArray:
        """``U[start:stop, arm]``, shape ``(stop - start,)``."""
        a, t0, t1 = self._check(arm, start, stop)
        skip = t0 % 4
        bits = np.random.Philox(key=np.array(self.key, dtype=np.uint64), counter=[t0 // 4, a, 0, 0])
        return np.random.Generator(bits).random(t1 - t0 + skip)[skip:]

    def rewards(self, arm: int, start: int, stop: int) -> FloatArray:
        """``r_t(arm)`` for rounds ``t = start .. stop - 1``."""
        return self.instance.reward(np.intp(arm), self.uniforms(arm, start, stop))


def gaussian_easy(rng: np.random.Generator, arms: int = 10) -> ClippedGaussianArms:
    """The easy instance of Chowdhury & Zhou (2023), §7: locations i.i.d. ``Uniform[0.25, 0.75]``,
    sd 0.1, clipped."""
    return ClippedGaussianArms(tuple(0.25 + 0.5 * rng.random(_arms(arms))))


def gaussian_hard(rng: np.random.Generator, arms: int = 10) -> ClippedGaussianArms:
    """The hard instance of Chowdhury & Zhou (2023), §7: locations i.i.d. ``Uniform[0.45, 0.55]``,
    sd 0.1, clipped."""
    return ClippedGaussianArms(tuple(0.45 + 0.1 * rng.random(_arms(arms))))


def _arms(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise ParameterError("arms", k, "an integer K >= 2")
    return int(k)
