"""What a run of the DP-DPE paper's algorithms guarantees (Li, Zhou & Ji 2022).

**Privacy: one release per client** (parallel composition over the phases, Li, Zhou & Ji 2022, §4).
Each client reports once, in one phase, so the run is ``(ε, δ)``-private exactly when every phase's
release is. The run writes, as it releases, one :class:`~accounting.accountant.Accountant` per phase
(``ledgers``, keyed by ``l``) holding that phase's event, built from the very ``σ`` that scales the
noise drawn (never from ``z`` beside it: halving the released noise changes the ledger). An
isotropic Gaussian on an ℓ2-bounded vector query is the scalar Gaussian mechanism
``AdditiveNoise(Gaussian(σ), Δ)``, whose guarantee depends only on ``σ/Δ`` (Balle & Wang 2018, Thm
8). DP-PE releases the same ``(σ, Δ = 2B)`` in every repetition and phase (the server's noise on the
sums, or each client's on its reward), and its ledger holds ``AdditiveNoise(Gaussian(σ), 2B)`` as
released. DP-DPE's ``σ_j`` and ``Δ_j`` (``2B√s_l/|U_l|`` central, ``2B√s_l`` local) scale with
``√s_l``, which differs between repetitions and so between the chunks of a run, whose ledgers must
agree: the phase's ledger holds the release normalized by its sensitivity,
``AdditiveNoise(Gaussian(ρ), 1)`` with ``ρ`` the least ``σ_j/Δ_j`` of the phase computed exactly and
rounded down, recorded as the calibrated ``z`` when every ``σ_j/Δ_j >= z`` (always: ``σ_j`` is
``zΔ_j`` rounded up) (:func:`learners.phased.noise.released_event`). The shuffle protocols' phases
hold the cited ``ApproxDP(ε, δ)`` of Theorem 4.6 / C.6. :attr:`Privacy.epsilon` is the largest
certified ε over the phases at δ.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from accounting import validate as v
from accounting.accountant import Accountant
from accounting.mechanisms import ApproxDP
from learners.errors import ParameterTypeError
from learners.phased.noise import noise_of
from learners.phased.spec import Learner
from learners.runs import ledger_epsilons

__all__ = ["Privacy", "privacy_of"]


@dataclass(frozen=True)
class Privacy:
    """What a run's releases guarantee.

    Attributes
    ----------
    model : str
        ``"central"``, ``"local"``, ``"shuffle"`` or ``"none"``.
    mode, calibration : str
        The learner's.
    claimed_epsilon, claimed_delta : float or None
        The learner's target ``(ε, δ)``.
    epsilon : float
        The certified ε at ``delta``: the largest over the phases' ledgers (each client is in one
        phase: parallel composition); ``inf`` when nothing is certified.
    delta : float
    certified : bool
        Whether ``epsilon`` is a guarantee of the run as it ran.
    meets_claim : bool
        ``certified`` and ``epsilon <= claimed_epsilon`` (at the claimed δ or a larger one).
    basis : str
        ``"accounted"`` (the Gaussian releases, exact accounting), ``"cited"`` (the shuffle
        protocols' theorems, as stated) or ``"none"``.
    multiplier : float
        The Gaussian ``z = σ/Δ`` (0 otherwise).
    phases : tuple of (int, float)
        ``(phase, ε)`` of every ledger.
    argument : str
        Under which argument ``epsilon`` holds.
    message : str
        What does not hold, if anything.
    """

    model: str
    mode: str
    calibration: str
    claimed_epsilon: float | None
    claimed_delta: float | None
    epsilon: float
    delta: float
    certified: bool
    meets_claim: bool
    basis: str
    multiplier: float
    phases: tuple[tuple[int, float], ...]
    argument: str
    message: str = ""


_ARGUMENTS = {
    "central": (
        "central DP (Definition 4.1): the server adds N(0, (z Δ)² I) to the clients' average, "
        "Δ = 2B√s_l/|U_l|"
    ),
    "local": "local DP (Definition 4.3): every client adds N(0, (z Δ)² I) to its report, Δ = 2B√s_l",
    "shuffle": "shuffle DP (Definition 4.5)",
}


def privacy_of(
    learner: Learner, ledgers: Mapping[int, Accountant], delta: float, route: str = "auto"
) -> Privacy:
    """The privacy of a run from its per-phase ledgers (:attr:`RunResult.ledgers`), each answered
    by the accountant's ``route``."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.phased.Learner")
    if not isinstance(ledgers, Mapping) or not all(
        isinstance(n, int) and isinstance(acc, Accountant) for n, acc in ledgers.items()
    ):
        raise ParameterTypeError("ledgers", ledgers, "a mapping of int (phase) to accounting Accountant")
    d = v.open_unit("delta", delta)
    noise = noise_of(learner)
    if not learner.private:
        return Privacy(
            "none", learner.mode, "none", None, None, math.inf, d, False, False, "none", 0.0, (),
            "none: the clients' reports are averaged without noise",
            "a non-private run: nothing is guaranteed",
        )  # fmt: skip
    assert learner.epsilon is not None
    assert learner.delta is not None
    notes: list[str] = []
    if noise.kind == "surrogate":
        notes.append(
            "practical SDP-DPE: Gaussian noise at Theorem 4.6's rate with constant 1 (our hypothesis for "
            "the paper's Figure 2) stands in for the shuffle protocol; no protocol releases it, "
            "nothing is certified"
        )
        return Privacy(
            learner.model, learner.mode, noise.calibration, learner.epsilon, learner.delta, math.inf, d,
            False, False, "none", 0.0, (), _ARGUMENTS["shuffle"] + ": not run (a surrogate)",
            "; ".join(notes),
        )  # fmt: skip
    per = ledger_epsilons(ledgers, d, route)
    epsilon = max((e for _, e in per), default=0.0)
    argument = _ARGUMENTS[learner.model]
    if noise.kind == "gaussian":
        basis = "accounted"
        argument += (
            f", z = {noise.multiplier:.6g} ({noise.calibration} calibration), replace-one; each client "
            "reports in one phase (parallel composition); exact accounting of the Gaussian mechanism"
        )
        if learner.calibration == "classic" and learner.epsilon >= 1:
            notes.append(
                "calibration='classic': Dwork–Roth's σ = Δ sqrt(2 ln(1.25/δ))/ε is proved only for ε < 1 "
                "(Dwork & Roth 2014, Theorem A.1), the paper uses it at ε = 10; epsilon is the exact ε of "
                "what was released"
            )
    else:
        basis = "cited"
        theorem = (
            "Theorem 4.6 / A.2 (Algorithm 2)" if not learner.single else "Theorem C.6 (Algorithm 4 at ε/2)"
        )
        argument += (
            f": each phase's release is ({learner.epsilon:g}, {learner.delta:g})-SDP by {theorem}, as cited "
            "(Cheu et al. 2021); each client reports in one phase (parallel composition)"
        )
        if not learner.single:
            notes.append(
                "Algorithm 2's constants (18, 6√5, 180, 90) are our reconstruction of Li, Zhou & Ji (2022) "
                "from its OCR; the guarantee is the theorem's as reconstructed"
            )
    meets = epsilon <= learner.epsilon and d >= learner.delta
    if basis == "cited" and not meets and d >= learner.delta:
        # a cited (ε, δ) read back at δ is rounded outward by an ulp: the claim holds when every
        # phase released exactly one cited pair within it
        meets = all(
            len(acc.ledger) == 1
            and isinstance(acc.ledger[0].mechanism, ApproxDP)
            and acc.ledger[0].count == 1
            and acc.ledger[0].mechanism.eps <= learner.epsilon
            and acc.ledger[0].mechanism.dlt <= d
            for acc in ledgers.values()
        )
    if not meets:
        notes.append(
            f"the release's certified epsilon {epsilon:g} at δ = {d:g} exceeds the claimed "
            f"{learner.epsilon:g}"
        )
    return Privacy(
        model=learner.model,
        mode=learner.mode,
        calibration=noise.calibration,
        claimed_epsilon=learner.epsilon,
        claimed_delta=learner.delta,
        epsilon=epsilon,
        delta=d,
        certified=True,
        meets_claim=meets,
        basis=basis,
        multiplier=noise.multiplier,
        phases=per,
        argument=argument,
        message="; ".join(notes),
    )
