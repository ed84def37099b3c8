"""Private batched successive elimination for multi-armed bandits, in every trust model.

Algorithm 1 of Chowdhury & Zhou (2023), "Distributed differential privacy in multi-armed
bandits" (ICLR 2023), §3, with the protocol of each of its Theorems 1-6, DP-SE (Sajed & Sheffet
2019) and non-private elimination. One module per idea:

* :mod:`learners.mab.spec`: the algorithms (:data:`ALGORITHMS`) and a learner's settings
  (:class:`Learner`, :func:`make_learner`);
* :mod:`learners.mab.recipes`: the noise of one batch (the protocol of the variant's theorem,
  the fast path's total noise, DP-SE's Laplace noise);
* :mod:`learners.mab.radius`: the confidence radius ``β(b)`` of eq. (2) and DP-SE's batch sizes;
* :mod:`learners.mab.privacy`: what a run spent, its ledgers answered (:func:`privacy_of`,
  :func:`exact_privacy`);
* :mod:`learners.mab.engine`: the vectorized run over ``R`` repetitions (:func:`run`,
  :class:`RunResult`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from learners.mab.engine import CHUNK, RunResult, run
from learners.mab.privacy import EXACT_BUDGET, Exact, Privacy, exact_privacy, privacy_of, route_name
from learners.mab.radius import confidence_radius
from learners.mab.recipes import batch_protocol as batch_protocol
from learners.mab.spec import ALGORITHMS, NOISE_PATHS, OLD_PARAMS, Algorithm, Learner, make_learner

__all__ = [
    "ALGORITHMS",
    "CHUNK",
    "EXACT_BUDGET",
    "NOISE_PATHS",
    "OLD_PARAMS",
    "Algorithm",
    "Exact",
    "Learner",
    "Privacy",
    "RunResult",
    "confidence_radius",
    "exact_privacy",
    "make_learner",
    "privacy_of",
    "route_name",
    "run",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
