"""A1: the schedule side channel of Dubey & Pentland 2020, sampled as silo ``j`` sees it.

Dubey & Pentland 2020 (Algorithm 1, restated as Algorithm 3 of Zhou & Chowdhury 2024) sync when a
silo's non-private ``log det`` increment passes ``D/(t - t_last)``; with ``Z = 0`` a sync after
round 1 happens iff some first user has ``‖x‖² > C = λ(e^D - 1)`` (Zhou & Chowdhury 2024, Section 3,
Example 3.1). :class:`SideChannelPair` runs :func:`learners.linear.run` on that neighbouring pair
(``M = d = 2``, silo ``i``'s first user Alice with ``‖x‖² = C/2`` or Tracy with ``2C``) and returns
what silo ``j`` sees; :mod:`verification.broken` hands it to the empirical auditor (the catalogue
entries ``dubey-pentland-*``, and the fixed-batch controls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from learners import linear
from verification.errors import ParameterError
from verification.federated.scripted import IntArray, ScriptedInstance

__all__ = [
    "A1_ANGLE",
    "A1_REGULARIZER",
    "A1_THRESHOLD",
    "SideChannelPair",
    "View",
    "side_channel_claim",
    "side_channel_instance",
]

#: The A1 setting: λ = 1 and D = ln 1.5, so C = λ(e^D - 1) = 1/2 (both users feasible, ‖x‖ <= 1).
A1_REGULARIZER = 1.0
A1_THRESHOLD = math.log(1.5)
#: Silo j's two arms at round 2: at angle ±A1_ANGLE from the first user's axis, so that without a
#: sync they have equal widths and silo j's own first user decides (arm 0, deterministically).
A1_ANGLE = 0.3


def side_channel_instance(
    tracy: bool, threshold: float = A1_THRESHOLD, regularizer: float = A1_REGULARIZER
) -> ScriptedInstance:
    """The neighbouring pair of Zhou & Chowdhury 2024, Example 3.1: ``M = 2`` silos (``i = 0``, ``j = 1``).

    Round 1: silo ``i``'s first user is Alice (``x = (-√(C/2), 0)``, ``‖x‖² = C/2``) or, in the
    neighbour, Tracy (``x = (-√(2C), 0)``, ``‖x‖² = 2C``), ``C = λ(e^D - 1)``; silo ``j``'s first
    user Bob has ``x = (√(C/2), 0)``; each user's two arms are the same vector (the action is
    forced) and every reward is 1 (the same potential outcomes: one user differs, in her context).
    Round 2: both silos see the arms ``(cos a, sin a)`` and ``(-cos a, sin a)``; silo ``j``'s pay 1
    and 0 (so its pseudo-regret in round 2 is its action), silo ``i``'s pay 1/2 each.

    Without a sync silo ``j`` decides from its own Bob only: the arms have equal widths under
    ``V = λI + x xᵀ`` and Bob's reward favours arm 0, always. With a sync (Tracy) it decides from
    the noisy synced statistics, which hold Tracy's ``x y = (-√(2C), 0)``: arm 1 about half the time.
    """
    lam = v.positive("regularizer", regularizer)
    d_threshold = v.positive("threshold", threshold)
    c = lam * math.expm1(d_threshold)
    if not 2 * c <= 1:
        raise ParameterError(
            "threshold", threshold, f"D with C = λ(e^D - 1) <= 1/2 (here C = {c:g}: Tracy's ‖x‖² = 2C > 1)"
        )
    features = np.zeros((2, 2, 2, 2))
    means = np.ones((2, 2, 2))
    features[0, 0, :] = (-math.sqrt(2 * c if tracy else c / 2), 0.0)
    features[0, 1, :] = (math.sqrt(c / 2), 0.0)
    features[1, :, 0] = (math.cos(A1_ANGLE), math.sin(A1_ANGLE))
    features[1, :, 1] = (-math.cos(A1_ANGLE), math.sin(A1_ANGLE))
    means[1, 0, :] = 0.5
    means[1, 1, :] = (1.0, 0.0)
    return ScriptedInstance(features, means)


View = Literal["transcript", "action"]


@dataclass(frozen=True)
class SideChannelPair:
    """What silo ``j`` sees of a federated LinUCB run on the A1 pair (Alice on ``D``, Tracy on ``D'``).

    Each call runs :func:`learners.linear.run` for ``size`` repetitions of 2 rounds on each
    dataset (vectorized over the repetitions; the privacy noise from ``rng``) and reduces each to

    * ``view="transcript"``: ``2·1{sync after round 1} + a_{2,j}`` — the schedule (silo-level LDP,
      Zhou & Chowdhury 2024, Definition 2.1, covers the transcript's timing: Section 3) and silo
      ``j``'s own action at ``t = 2``;
    * ``view="action"``: ``a_{2,j}`` alone (the Fed-DP of Dubey & Pentland 2020, under which the
      action of another silo must not reveal the user; it fails too: Zhou & Chowdhury 2024,
      Appendix B.2).

    The sync is read from ``run``'s observer (a :class:`~learners.linear.SyncRecord` at round 1),
    the action from the pseudo-regret of round 2 (silo ``j``'s arms pay 1 and 0, silo ``i``'s the
    same for both, :func:`side_channel_instance`).

    Attributes
    ----------
    algorithm : str
        A key of :data:`learners.linear.ALGORITHMS` (``"dubey-pentland"`` or a fixed-batch one).
    epsilon, delta : float
        The learner's claimed ``(ε, δ)`` (its noise is calibrated to it).
    view : {"transcript", "action"}
    batch : int or None
        ``B`` of a fixed schedule (``None`` for Dubey & Pentland).
    sensitivity : str
        The learner's sensitivities (``"batch"`` certifies Algorithm 1, with ``B = 1`` equal to
        the per-user ones).
    """

    algorithm: str
    epsilon: float
    delta: float
    view: View = "transcript"
    batch: int | None = None
    sensitivity: str = "replace-one"

    def __post_init__(self) -> None:
        if self.view not in ("transcript", "action"):
            raise ParameterError("view", self.view, "'transcript' or 'action'")
        self.learner()  # validates the rest

    def learner(self) -> linear.Learner:
        """The learner run on each side."""
        threshold = A1_THRESHOLD if self.algorithm == "dubey-pentland" else None
        return linear.make_learner(
            self.algorithm,
            self.epsilon,
            delta=self.delta,
            batch=self.batch,
            sensitivity=self.sensitivity,
            regularizer=A1_REGULARIZER,
            threshold=threshold,
        )

    def _side(self, tracy: bool, rng: np.random.Generator, size: int) -> IntArray:
        synced = np.zeros(size, dtype=bool)

        def observe(record: linear.SyncRecord) -> None:
            if record.round == 1:
                synced[record.reps] = True

        result = linear.run(
            self.learner(),
            side_channel_instance(tracy),
            2,
            tapes=[rng] * size,  # noise-free rewards: the tapes are never read
            rng=rng,
            checkpoints=2,
            observer=observe,
        )
        action = np.rint(result.pseudo_regret[:, 1] - result.pseudo_regret[:, 0]).astype(np.int64)
        if self.view == "action":
            return action
        return 2 * synced.astype(np.int64) + action

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        return self._side(False, rng, size), self._side(True, rng, size)


def side_channel_claim(pair: SideChannelPair) -> float:
    """The ε the pair's learner claims at its δ: the exact ε of its node releases (rounded up).

    For the fixed schedules this is the run's certified ledger (``κ`` nodes per stream for the
    first batch, :class:`accounting.tree.Tree`); for Dubey & Pentland it is what its content
    noise would give were the schedule public (:attr:`learners.linear.Privacy.content_epsilon`),
    which is all its privacy argument accounts for.
    """
    learner = pair.learner()
    noise = linear.noise_of(learner, 2, 2, dim=2)
    tree = noise.tree
    assert tree is not None
    return float(tree.epsilon(pair.delta).upper)
