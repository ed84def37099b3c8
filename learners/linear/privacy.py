"""What a run of the federated LinUCB paper's algorithms guarantees (Zhou & Chowdhury 2024).

**Which variant is private, and why** (our observation; the paper does not discuss it). The ledger's
ε is the exact privacy of the released node sums *given* the per-user sensitivity. In the **lazy**
variant (Algorithm 8) every action depends on the user's own context and on released statistics
only, so changing one user changes one term of one stream element: the per-user sensitivity holds,
and the run is ``(ε, δ)``-silo-level LDP by the ledger (adaptive composition over syncs). In
**Algorithm 1** the actions of later users of a batch depend on the silo's non-private ``W_i, U_i``,
so one user can change up to ``B`` terms of ``γ_k``: the paper's per-user argument does not hold,
and the ledger certifies Algorithm 1 only with ``sensitivity="batch"``. :attr:`Privacy.certified`
says which case a run is in. **Dubey & Pentland** (Algorithm 3) decides *when* to sync from
non-private local data, a side channel no content noise covers (Zhou & Chowdhury 2024,
Example 3.1 and App. B.1): it is never
private, whatever its noise; its result says so (``certified=False``, ``epsilon = inf``), and the
privacy its content noise alone would give with a public schedule is reported separately
(``content_epsilon``).

**Privacy ledger.** At every sync of a fixed schedule the node released at level ``i_k`` contains
batches ``k - 2^{i_k} + 1 .. k``; a Gaussian event per stream is composed, as it is released,
into the :class:`~accounting.accountant.Accountant` of each of those batches. Users of batches
whose ledgers are equal are grouped: :attr:`RunResult.ledgers` maps the number of released nodes
per stream a batch entered to its ledger (the first batch enters ``κ``, the most).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from accounting import validate as v
from accounting.accountant import Accountant
from accounting.answers import ledger_epsilon
from accounting.certified import DEFAULT_DPS
from learners.errors import ParameterTypeError
from learners.linear.noise import Noise, VectorSum
from learners.linear.spec import Learner
from learners.runs import ledger_epsilons

__all__ = ["Privacy", "privacy_of"]


@dataclass(frozen=True)
class Privacy:
    """What a run's release guarantees, and whether it is a guarantee of the algorithm as run.

    Attributes
    ----------
    model : str
        ``"silo-ldp"`` (Definition 2.1), ``"shuffle"`` (Definition 2.3) or ``"none"``.
    claimed_epsilon, claimed_delta : float or None
        The learner's target ``(ε, δ)`` (``None`` without privacy).
    epsilon : float
        The exact certified ε of the release at ``delta`` (the largest over the ledgers: a user is
        in the nodes of one batch); ``inf`` when nothing is certified (``certified`` False, or no
        privacy).
    delta : float
        The run's δ.
    content_epsilon : float
        The exact ε at ``delta`` of the released node sums alone, whatever the argument: equal to
        ``epsilon`` when ``certified``; for Algorithm 1 with per-user sensitivity and for Dubey &
        Pentland it is what the noise would give if the per-user argument held (it does not).
    certified : bool
        Whether the ledger's ε is a guarantee of the algorithm as run (the module docstring).
    meets_claim : bool
        ``certified`` and ``epsilon <= claimed_epsilon``.
    sigma0 : float
    sigma_mode : str
    kappa : int
    sensitivity : str
    nodes : tuple of (int, float)
        ``(nodes per stream, ε)`` for each distinct ledger.
    argument : str
        Under which argument ``content_epsilon`` holds.
    message : str
        What does not hold, if anything.
    """

    model: str
    claimed_epsilon: float | None
    claimed_delta: float | None
    epsilon: float
    delta: float
    content_epsilon: float
    certified: bool
    meets_claim: bool
    sigma0: float
    sigma_mode: str
    kappa: int
    sensitivity: str
    nodes: tuple[tuple[int, float], ...]
    argument: str
    message: str = ""


def privacy_of(
    learner: Learner, noise: Noise, ledgers: Mapping[int, Accountant], delta: float, route: str = "auto"
) -> Privacy:
    """The privacy of a run from its ledgers (one per number of nodes a batch entered), answered by
    the accountant's ``route`` (``"auto"`` is the PLD route for the vector sums' cited (ε0, δ0)
    calls)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.linear.Learner")
    if not isinstance(noise, Noise):
        raise ParameterTypeError("noise", noise, "a learners.linear.Noise (see noise_of)")
    if not isinstance(ledgers, Mapping) or not all(
        isinstance(n, int) and isinstance(acc, Accountant) for n, acc in ledgers.items()
    ):
        raise ParameterTypeError("ledgers", ledgers, "a mapping of int (nodes) to accounting Accountant")
    d = v.open_unit("delta", delta)
    if not learner.private:
        return Privacy(
            "none", None, None, math.inf, d, math.inf, False, False, 0.0, "none", noise.kappa, "none", (),
            "none: exact sums are shared", "a non-private run: nothing is guaranteed",
        )  # fmt: skip
    assert learner.epsilon is not None
    assert noise.sensitivities is not None
    if noise.vector is not None:
        return _vector_privacy(learner, noise, noise.vector, ledgers, d, "pld" if route == "auto" else route)
    per = ledger_epsilons(ledgers, d, route)
    sens = noise.sensitivities
    argument = (
        f"silo-level LDP (Definition 2.1) under {sens.neighbouring.value} with per-user sensitivities "
        f"{sens.bias:g} (bias) and {sens.covariance:g} (covariance): kappa = {noise.kappa} Gaussian node "
        f"releases per stream, sigma0 = {noise.sigma0:g}, exact GDP accounting"
    )
    notes: list[str] = []
    if learner.name == "dubey-pentland":
        tree = noise.tree
        assert tree is not None
        content = ledger_epsilon(tree.accountant().ledger, d, sens.neighbouring, DEFAULT_DPS)
        certified = False
        notes.append(
            "NOT PRIVATE: Dubey & Pentland's sync rule depends on non-private local data, so the schedule "
            "itself leaks (Zhou & Chowdhury 2024, Example 3.1); content_epsilon is what the noise alone "
            "would give if the schedule were public (a tree over T syncs)"
        )
    else:
        content = max((e for _, e in per), default=0.0)
        certified = learner.lazy or learner.sensitivity == "batch"
        if not certified:
            notes.append(
                "Algorithm 1 decides from the silo's non-private current-batch data, so one user can change "
                "up to B terms of a stream element (not covered by the paper's proof): the per-user "
                "sensitivity the ledger uses "
                "does not bound it, and content_epsilon is not a guarantee of this run "
                "(use 'ldp-fedlinucb-lazy' or sensitivity='batch')"
            )
    epsilon = content if certified else math.inf
    if certified and noise.amplified is not None and d >= noise.amplified[1]:
        epsilon = min(epsilon, noise.amplified[0])
        argument += (
            f"; and Theorem 5.3 (shuffling, Lemma F.2): ({noise.amplified[0]:g}, {noise.amplified[1]:g}) "
            "certified with explicit constants; epsilon is the smaller"
        )
    meets = certified and epsilon <= learner.epsilon
    if learner.sigma_mode == "code" and learner.algorithm.model == "shuffle":
        notes.append(
            "sigma_mode='code': the authors' Theorem 5.3 sigma0, with no constants; the amplified guarantee "
            "is not certified, epsilon is the unamplified Gaussian ledger's"
        )
    elif learner.sigma_mode == "code":
        notes.append(
            "sigma_mode='code': the authors' code's sigma0, which does not meet its claim in general "
            "(it is √8 times Theorem 5.1's)"
        )
    if certified and not meets:
        notes.append(f"the release's exact epsilon {epsilon:g} exceeds the claimed {learner.epsilon:g}")
    return Privacy(
        model=learner.algorithm.model,
        claimed_epsilon=learner.epsilon,
        claimed_delta=learner.delta,
        epsilon=epsilon,
        delta=d,
        content_epsilon=content,
        certified=certified,
        meets_claim=meets,
        sigma0=noise.sigma0,
        sigma_mode=learner.sigma_mode,
        kappa=noise.kappa,
        sensitivity=sens.name,
        nodes=per,
        argument=argument,
        message="; ".join(notes),
    )


def _vector_privacy(
    learner: Learner,
    noise: Noise,
    vec: VectorSum,
    ledgers: Mapping[int, Accountant],
    delta: float,
    route: str,
) -> Privacy:
    """The privacy of a P_T^Vec run (Theorem 5.5's argument, accounted exactly)."""
    assert learner.epsilon is not None
    notes: list[str] = []
    if vec.certified:
        per = ledger_epsilons(ledgers, delta, route)
        content = max((e for _, e in per), default=0.0)
    else:
        per = ()
        content = math.inf
        notes.append(
            "sigma_mode='code': the authors' P_Vec parameters (b = g² ln(d²/δ)²/(ε² n), scale = 1, the total "
            "(ε, δ) per call) are not covered by the cited theorem: nothing is certified, no ledger"
        )
    certified = vec.certified and learner.lazy
    if vec.certified and not learner.lazy:
        notes.append(
            "Algorithm 1 decides from the silo's non-private current-batch data, so one user can change "
            "up to B data points of a call (not covered by the paper's proof), beyond P_Vec's per-point "
            "guarantee; "
            "content_epsilon is not a guarantee of this run (use 'sdp-fedlinucb-vec-lazy')"
        )
    epsilon = content if certified else math.inf
    meets = certified and epsilon <= learner.epsilon
    if certified and not meets:
        notes.append(f"the release's epsilon {epsilon:g} exceeds the claimed {learner.epsilon:g}")
    argument = (
        "shuffle DP (Definition 2.3) under replace-one: each user's bias point (norm <= clip) and "
        f"covariance point (norm <= 1) enter at most kappa = {noise.kappa} P_Vec calls each (Algorithm 5), "
        f"every call ({vec.epsilon0:g}, {vec.delta0:g})-SDP as cited "
        "(Cheu et al. 2021, via Zhou & Chowdhury 2024, Algorithm 6); the "
        "2 kappa calls composed optimally (Kairouz-Oh-Viswanath, the accountant's pld route), "
        "as Theorem 5.5 composes them"
    )
    return Privacy(
        model=learner.algorithm.model,
        claimed_epsilon=learner.epsilon,
        claimed_delta=learner.delta,
        epsilon=epsilon,
        delta=delta,
        content_epsilon=content,
        certified=certified,
        meets_claim=meets,
        sigma0=noise.sigma0,
        sigma_mode=learner.sigma_mode,
        kappa=noise.kappa,
        sensitivity="replace-one (per data point)",
        nodes=per,
        argument=argument,
        message="; ".join(notes),
    )
