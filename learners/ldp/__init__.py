"""Locally differentially private bandits: the learners of Zheng et al. (NeurIPS 2020), vectorized.

Zheng, Cai, Huang, Li & Wang (2020), "Locally Differentially Private (Contextual) Bandits
Learning" (NeurIPS 2020). Every round a **new user** arrives, takes part once and sends the server
locally privatized messages only; the server runs a bandit learner on them. Algorithms
(:data:`ALGORITHMS`):

================  ==========================================================================
name              what it is
================  ==========================================================================
``one-point``     Algorithm 1 (§3.1): the black-box reduction. The user sends ``f_t(x_t) + Z_t``
                  (``f_t`` clipped to ``[-B, B]``, ``Δ = 2B``; to ``[0, 1]``, ``Δ = 1``, for
                  Bernoulli arms, whose losses are bits); any one-point base learner
                  (:class:`OnePointBase`: :class:`FKM`, :class:`ADXOnePoint`, :class:`SahaTewari`,
                  :class:`HazanLevy`, :class:`UCB`) runs on the noisy values
``two-point``     Algorithm 2 (§3.2): Agarwal–Dekel–Xiao two-point gradient descent (Algorithm 4);
                  the user sends ``m_t = f_t(x_1) − f_t(x_2) + n_tᵀ(x_1 − x_2)``,
                  ``n_t ~ N(0, σ² I_d)``, one scalar of std ``2ρσ``
``ldp-linucb``    Algorithm 5 (§4.1): the user sends ``x xᵀ + B_t`` and ``y x + ξ_t``; the server
                  ridge-regresses with ``c_t = 2Υ_t`` and plays LinUCB
``ldp-glm``       Algorithm 3 (§4.2): GLOC with LDP-OGD: ``x xᵀ + B_t``, ``z x + ξ_t``
                  (``z = xᵀθ̂_t``) and ``∇ℓ_t(θ̂_t) + r_t``; ``θ̂`` by projected noisy OGD on the
                  unit ball, ``θ̃`` by the noisy ridge regression; logistic and Poisson links
================  ==========================================================================

One module per idea:

* :mod:`learners.ldp.spec`: the algorithms and a learner's settings (:class:`Learner`,
  :func:`make_learner`);
* :mod:`learners.ldp.bases`: Algorithm 1's one-point black boxes and the gradient estimators;
* :mod:`learners.ldp.recipes`: the noise multipliers and σ's of the paper and of its official code
  (:func:`composed_sigmas`, :func:`code_sigma`, :func:`code_mode_check`, :func:`upsilon`);
* :mod:`learners.ldp.noise`: the blocks of a user's release (:func:`noise_of`, :class:`Message`);
* :mod:`learners.ldp.randomizers`: what each user sends (:func:`privatize_loss`, ...);
* :mod:`learners.ldp.privacy`: what a run guarantees (:func:`privacy_of`);
* :mod:`learners.ldp.engine`: the vectorized runs (:func:`run`, :class:`RunResult`);
* :mod:`learners.ldp.instances`: the losses, arms and contextual instances.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from learners.ldp.bases import (
    FKM,
    UCB,
    ADXOnePoint,
    Feedback,
    HazanLevy,
    OnePointBase,
    OnePointState,
    SahaTewari,
    one_point_gradient,
    two_point_gradient,
)
from learners.ldp.engine import CHUNK, ContextualRecord, RunResult, run
from learners.ldp.noise import Message, Noise, noise_of, rr_outputs
from learners.ldp.privacy import Privacy, privacy_of
from learners.ldp.randomizers import (
    privatize_difference,
    privatize_glm,
    privatize_linear,
    privatize_loss,
    symmetric_noise,
)
from learners.ldp.recipes import MATRIX_SENSITIVITY as MATRIX_SENSITIVITY
from learners.ldp.recipes import (
    CodeModeCheck,
    classic_sigma,
    code_mode_check,
    code_sigma,
    composed_sigmas,
    gaussian_multiplier,
    upsilon,
)
from learners.ldp.spec import (
    ALGORITHMS,
    CALIBRATIONS,
    MECHANISMS,
    MODES,
    PURE_MECHANISMS,
    Learner,
    make_learner,
)
from learners.ldp.spec import MAX_HORIZON as MAX_HORIZON
from learners.ldp.spec import RADII as RADII

__all__ = [
    "ALGORITHMS",
    "CALIBRATIONS",
    "CHUNK",
    "FKM",
    "MECHANISMS",
    "MODES",
    "PURE_MECHANISMS",
    "UCB",
    "ADXOnePoint",
    "CodeModeCheck",
    "ContextualRecord",
    "Feedback",
    "HazanLevy",
    "Learner",
    "Message",
    "Noise",
    "OnePointBase",
    "OnePointState",
    "Privacy",
    "RunResult",
    "SahaTewari",
    "classic_sigma",
    "code_mode_check",
    "code_sigma",
    "composed_sigmas",
    "gaussian_multiplier",
    "make_learner",
    "noise_of",
    "one_point_gradient",
    "privacy_of",
    "privatize_difference",
    "privatize_glm",
    "privatize_linear",
    "privatize_loss",
    "rr_outputs",
    "run",
    "symmetric_noise",
    "two_point_gradient",
    "upsilon",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
