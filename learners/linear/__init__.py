"""Federated linear contextual bandits: Private-Fed LinUCB and its baselines, vectorized.

Zhou & Chowdhury (2024), "On differentially private federated linear contextual bandits" (ICLR
2024). ``M`` silos each serve one user per round; every silo plays LinUCB on the synced
statistics (and its own since the last sync) and, at synchronisations, sends its batch's
statistics through a privacy protocol to the server, whose noisy prefix sums replace the synced
ones (the paper's Algorithms 1 and 2). One module per idea:

* :mod:`learners.linear.spec`: the algorithms (:data:`ALGORITHMS`) and a learner's settings
  (:class:`Learner`, :func:`make_learner`);
* :mod:`learners.linear.noise`: the noise level ``σ0`` of every mode and protocol
  (:func:`noise_of`, :class:`Noise`, :class:`VectorSum`);
* :mod:`learners.linear.radius`: LinUCB's regularizer ``λ`` and confidence radius ``β_t``;
* :mod:`learners.linear.privacy`: what a run guarantees, and whether it is a guarantee of the
  algorithm as run (:func:`privacy_of`);
* :mod:`learners.linear.state`: the silos' statistics, protocol P's tree and the ledgers;
* :mod:`learners.linear.engine`: the vectorized run (:func:`run`, :class:`RunResult`);
* :mod:`learners.linear.instances`: the synthetic and real-data instances, computed round by round.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from learners.linear.engine import QUADRATIC_BUDGET as QUADRATIC_BUDGET
from learners.linear.engine import RunResult, run
from learners.linear.noise import Noise, VectorSum, noise_of
from learners.linear.privacy import Privacy, privacy_of
from learners.linear.radius import regularizer_of
from learners.linear.spec import (
    ALGORITHMS,
    OLD_PARAMS,
    RADII,
    SENSITIVITIES,
    SIGMA_MODES,
    Algorithm,
    Learner,
    make_learner,
)
from learners.linear.spec import FLOAT_BITS as FLOAT_BITS
from learners.linear.state import SyncRecord

__all__ = [
    "ALGORITHMS",
    "OLD_PARAMS",
    "RADII",
    "SENSITIVITIES",
    "SIGMA_MODES",
    "Algorithm",
    "Learner",
    "Noise",
    "Privacy",
    "RunResult",
    "SyncRecord",
    "VectorSum",
    "make_learner",
    "noise_of",
    "privacy_of",
    "regularizer_of",
    "run",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
