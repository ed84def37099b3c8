"""A scripted instance: a federated linear bandit whose every context and reward is given.

The audits of :mod:`verification.federated` run :func:`learners.linear.run` on fixed neighbouring
sequences of users, which the paper's setting allows: contexts may be arbitrary (Zhou & Chowdhury
2024, Section 1, contrasting the stochastic contexts of Huang et al. 2023).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from learners.linear_instances import CHUNK
from verification.errors import ParameterError

__all__ = ["FloatArray", "IntArray", "ScriptedInstance"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class ScriptedInstance:
    """A :class:`learners.linear_instances.LinearInstance` whose contexts and rewards are given.

    Contexts may be arbitrary (adversarial; Zhou & Chowdhury 2024, Section 1), which is what the
    audits need: their neighbouring datasets are fixed sequences of users. Rewards are noise-free (a
    user is her context and the rewards she would give to every action, the adjacency of Zhou &
    Chowdhury 2024, Section 2), so ``noise_sd = 0`` and no tape is drawn.

    Attributes
    ----------
    features : numpy.ndarray, shape (T, M, K, d)
        The arms each silo sees in each round (norms at most 1, Assumption 4.1 of Zhou & Chowdhury 2024).
    means : numpy.ndarray, shape (T, M, K)
        The reward of each arm.
    reward_scale : float
        The code radius's ``R``.
    """

    features: FloatArray
    means: FloatArray
    reward_scale: float = 1.0

    def __post_init__(self) -> None:
        x = np.array(self.features, dtype=np.float64)
        m = np.array(self.means, dtype=np.float64)
        if x.ndim != 4 or min(x.shape) < 1:
            raise ParameterError("features", getattr(x, "shape", None), "an array of shape (T, M, K, d)")
        if m.shape != x.shape[:3]:
            raise ParameterError("means", m.shape, f"an array of shape (T, M, K) = {x.shape[:3]}")
        if not (np.isfinite(x).all() and np.isfinite(m).all()):
            raise ParameterError("features", "non-finite values", "finite features and means")
        if float(np.linalg.norm(x, axis=-1).max()) > 1 + 1e-12:
            raise ParameterError("features", "an arm of norm > 1", "arms of norm at most 1 (Assumption 4.1)")
        x.setflags(write=False)
        m.setflags(write=False)
        object.__setattr__(self, "features", x)
        object.__setattr__(self, "means", m)
        object.__setattr__(self, "reward_scale", v.nonnegative("reward_scale", self.reward_scale))

    @property
    def dim(self) -> int:
        return int(self.features.shape[3])

    @property
    def arms(self) -> int:
        return int(self.features.shape[2])

    @property
    def agents(self) -> int:
        return int(self.features.shape[1])

    @property
    def rounds(self) -> int:
        return int(self.features.shape[0])

    @property
    def noise_sd(self) -> float:
        return 0.0

    def block(self, chunk: int) -> tuple[FloatArray, FloatArray]:
        """Rounds ``[CHUNK·chunk, CHUNK·(chunk + 1))``; past the script, zero arms (never played)."""
        c = v.integer("chunk", chunk, minimum=0)
        features = np.zeros((CHUNK, *self.features.shape[1:]))
        means = np.zeros((CHUNK, *self.means.shape[1:]))
        lo, hi = c * CHUNK, min(self.rounds, (c + 1) * CHUNK)
        if hi > lo:
            features[: hi - lo] = self.features[lo:hi]
            means[: hi - lo] = self.means[lo:hi]
        return features, means
