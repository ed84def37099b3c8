"""What a run of the LDP bandits paper's learners guarantees (Zheng et al. 2020).

**Privacy: one release per user** (Zheng et al. 2020, Definition 1). Each user reports once, so the run is
``(ε, δ)``-LDP exactly when one user's release is. :attr:`RunResult.ledgers` holds one
:class:`~accounting.accountant.Accountant` (key 1: every round's user has the same ledger — in
Algorithm 2 the sensitivity ``4ρG`` and the noise ``2ρσ`` scale together), with one
``AdditiveNoise`` event per message block; :attr:`RunResult.privacy` is its exact ε at δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accounting import validate as v
from accounting.accountant import Accountant
from learners.errors import ParameterTypeError
from learners.ldp.noise import Noise
from learners.ldp.spec import PURE_MECHANISMS, Learner
from learners.runs import ledger_epsilons

__all__ = ["Privacy", "privacy_of"]


@dataclass(frozen=True)
class Privacy:
    """What a run's releases guarantee.

    Attributes
    ----------
    mode, calibration : str
    claimed_epsilon, claimed_delta : float or None
    epsilon : float
        The exact certified ε of one user's release at ``delta`` (the pure ε for Laplace noise;
        ``inf`` without privacy).
    delta : float
        ``0`` for Laplace noise.
    certified : bool
    meets_claim : bool
        ``epsilon <= claimed_epsilon``.
    argument, message : str
    """

    mode: str
    calibration: str
    claimed_epsilon: float | None
    claimed_delta: float | None
    epsilon: float
    delta: float
    certified: bool
    meets_claim: bool
    argument: str
    message: str = ""


def privacy_of(
    learner: Learner, noise: Noise, ledgers: dict[int, Accountant], delta: float, route: str = "auto"
) -> Privacy:
    """The privacy of a run from its ledgers (:attr:`RunResult.ledgers`); the Gaussian releases'
    ledgers are answered by the accountant's ``route`` (the pure mechanisms' by the pure route)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.ldp.Learner")
    d = v.open_unit("delta", delta)
    if noise.kind == "none":
        return Privacy(
            learner.mode, "none", None, None, math.inf, d, False, False,
            "none: the losses are released without noise", "a non-private run: nothing is guaranteed",
        )  # fmt: skip
    blocks = ", ".join(f"{m.name} (Δ = {m.sensitivity:.6g}, noise {m.sd:.6g})" for m in noise.messages)
    argument = (
        f"each user releases once ({blocks}): the run is as private as one release; replace-one "
        "(LDP: any two data of a user)"
    )
    if noise.kind in PURE_MECHANISMS:
        epsilon = max(acc.pure_epsilon() for acc in ledgers.values())
        at = 0.0
        argument += f"; {'Laplace mechanism' if noise.kind == 'laplace' else 'randomized response'}, pure ε"
    else:
        epsilon = max(e for _, e in ledger_epsilons(ledgers, d, route))
        at = d
        argument += f"; {noise.calibration} calibration, exact accounting of the Gaussian mechanism"
    assert learner.epsilon is not None
    meets = epsilon <= learner.epsilon and (learner.delta is None or at >= learner.delta or at == 0.0)
    notes = []
    if noise.calibration == "code":
        notes.append(
            "mode='code': the official code's σ = (2 + 2Y) sqrt(ln(1.25/δ))/ε lacks the factor 2 under the "
            "square root that its README states (Dwork & Roth 2014, Theorem A.1); epsilon is the exact ε of "
            "what was released"
        )
    if noise.calibration == "classic" and learner.epsilon >= 1:
        notes.append(
            "calibration='classic': Dwork–Roth's formula is proved only for ε < 1 (Dwork & Roth 2014, "
            "Theorem A.1)"
        )
    if not meets:
        notes.append(f"the release's exact epsilon {epsilon:g} exceeds the claimed {learner.epsilon:g}")
    return Privacy(
        learner.mode, noise.calibration, learner.epsilon, learner.delta, epsilon, at, True, meets, argument,
        "; ".join(notes),
    )  # fmt: skip
