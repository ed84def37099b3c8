"""DP-DPE and DP-PE: private phased elimination for linear bandits with partial distributed feedback.

Li, Zhou & Ji (2022), "Differentially Private Linear Bandits with Partial Distributed Feedback"
(arXiv 2207.05827). Algorithms (:data:`ALGORITHMS`):

================  =====================================  =======================================
name              what it is                             privatizer
================  =====================================  =======================================
``dpe``           Algorithm 1 without privacy (Thm 5.1)  plain average of the clients' reports
``cdp-dpe``       Algorithm 1, central DP (Thm 4.2)      the server adds ``N(0, σ_nc² I)`` (eq. 5)
``ldp-dpe``       Algorithm 1, local DP (Thm 4.4)        every client adds ``N(0, σ_nl² I)`` (eq. 7)
``sdp-dpe``       Algorithm 1, shuffle DP (Thm 4.6)      Algorithm 2, the vector shuffle protocol
``dpe-fixedu``    §7's DPE-FixedU: ``U`` clients in      plain average
                  every phase (equal communication)
``pe``            Algorithm 3 without privacy            plain sum of one reward per client
                  (Lattimore & Szepesvári 2020)
``cdp-pe``        Algorithm 3, central DP (Thm C.1)      the server adds ``N(0, σ_nc²)`` per action
``ldp-pe``        Algorithm 3, local DP (Thm C.3)        every client adds ``N(0, σ_nl²)``
``sdp-pe``        Algorithm 3, shuffle DP (Thm C.6)      Algorithm 4, the scalar shuffle protocol
================  =====================================  =======================================

One module per idea:

* :mod:`learners.phased.spec`: the algorithms, a learner's settings (:class:`Learner`,
  :func:`make_learner`) and the schedule of clients (:func:`phase_clients`,
  :func:`fixed_clients`, :func:`clients_needed`);
* :mod:`learners.phased.noise`: the privatizers' noise (:func:`noise_of`, the shuffle protocols'
  parameters, :func:`sdp_average`);
* :mod:`learners.phased.privacy`: what a run guarantees (:func:`privacy_of`);
* :mod:`learners.phased.engine`: the vectorized run (:func:`run`);
* :mod:`learners.phased.record`: what a run returns (:class:`RunResult`, :class:`PhaseRecord`);
* :mod:`learners.phased.instances`: the population model and the synthetic instance of §7.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from learners.phased.engine import run
from learners.phased.noise import Noise, noise_of, sdp_average, sdp_dpe_parameters, sdp_pe_parameters
from learners.phased.privacy import Privacy, privacy_of
from learners.phased.record import PhaseRecord, RunResult
from learners.phased.spec import (
    ALGORITHMS,
    CALIBRATIONS,
    MODES,
    OLD_PARAMS,
    Algorithm,
    Learner,
    clients_needed,
    fixed_clients,
    make_learner,
    phase_clients,
)
from learners.phased.spec import FLOAT_BITS as FLOAT_BITS
from learners.phased.spec import MAX_HORIZON as MAX_HORIZON

__all__ = [
    "ALGORITHMS",
    "CALIBRATIONS",
    "MODES",
    "OLD_PARAMS",
    "Algorithm",
    "Learner",
    "Noise",
    "PhaseRecord",
    "Privacy",
    "RunResult",
    "clients_needed",
    "fixed_clients",
    "make_learner",
    "noise_of",
    "phase_clients",
    "privacy_of",
    "run",
    "sdp_average",
    "sdp_dpe_parameters",
    "sdp_pe_parameters",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
