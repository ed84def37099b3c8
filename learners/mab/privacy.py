"""What a run of the distributed MAB paper's algorithms spent: its ledgers, answered.

Every user takes part in one batch of one arm, so a user's whole ledger is the release of their
batch (parallel composition over unique users, Chowdhury & Zhou (2023), §2; returning users would
need their App. I): a run keeps one ledger per released batch size. :func:`privacy_of` answers
those ledgers — the guarantee of what was released — and states the closed form of the variant's
theorem beside it only where the theorem's hypotheses hold (Theorems 4, 5 and 6, App. F and H,
assume ``ε < 1``). :func:`exact_privacy` answers them by the tightest exact route whatever route
``privacy_of`` was asked for (the results folder reports both, :mod:`learners.results`): for
Dist-RDP-SE at ``ε = 1`` the theorem's closed form (Lemma 3 and Lemma 10) is ``(5.23, 10^-6)``-DP,
the exact answer of the same ledgers ``4.89``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from accounting import validate as v
from accounting.accountant import PUBLISHED, ROUTES, Accountant, Event
from accounting.accountant import route_name as accounting_route_name
from accounting.answers import Question, answer
from accounting.errors import UnsupportedError
from accounting.mechanisms import DistributedSum
from accounting.neighbouring import Neighbouring
from accounting.papers.distributed_dp_mab import Variant
from learners import privacy
from learners.errors import ParameterError, ParameterTypeError
from learners.mab.spec import Learner, real_in

__all__ = ["EXACT_BUDGET", "Exact", "Privacy", "exact_privacy", "privacy_of", "route_name"]


@dataclass(frozen=True)
class Privacy:
    """What a run spent: its ledgers answered, and the variant's theorem where it applies.

    Attributes
    ----------
    model : str
        ``"distributed"``, ``"shuffle"``, ``"central"``, ``"local"`` or ``"none"``.
    notion : str
        The guarantee the variant's theorem states: ``"pure"`` (ε-DP), ``"rdp"`` (Theorem 2),
        ``"zcdp"`` (Theorem 4), or ``"none"``.
    epsilon : float
        The certified ε of the run: the largest, over the released batch sizes, of the ε of that
        size's ledger (a user is in one batch: parallel composition). ``inf`` for ``"se"``; 0 if
        nothing was released.
    delta : float
        The δ that goes with ``epsilon`` (0 for the pure notion, answered by the pure route).
    batches : tuple of (int, float, str)
        ``(n, ε, route)`` for each released batch size ``n``: the ledger's ε and the route that
        certified it (an :class:`~accounting.accountant.Accountant` route, or the published bound
        on the released mechanism the accountant fell back to, see ``message``).
    theorem : int or None
        The theorem of the distributed MAB paper the variant cites (``None``: ``dp-se``, ``se``).
    theorem_holds : bool
        Whether the theorem's hypotheses hold at this ε (Theorems 4, 5 and 6 assume ``ε < 1``;
        Chowdhury & Zhou (2023), App. F and H). Always ``True`` for ``dp-se``, ``False`` for ``se``.
    theorem_epsilon : float or None
        The theorem's own closed form, worst over the released batches, where its hypotheses
        hold: ε for the pure variants and DP-SE, Lemma 3 at the actual ``g`` converted by
        Lemma 10 (Theorem 2), Lemma 4's ρ converted (Theorem 4). ``None`` where they do not.
    rho : float or None
        Theorem 4's ρ (Lemma 4, worst batch) where the theorem holds.
    statement : str
        The variant and what its theorem says.
    message : str
        Empty when the theorem holds and every ledger was answered by the accountant; otherwise
        what does not hold and where the reported numbers come from.
    """

    model: str
    notion: str
    epsilon: float
    delta: float
    batches: tuple[tuple[int, float, str], ...]
    theorem: int | None
    theorem_holds: bool
    theorem_epsilon: float | None
    rho: float | None
    statement: str
    message: str = ""


_MODELS = {
    Variant.POLYA_SHARES: "distributed",
    Variant.SKELLAM_SHARES: "distributed",
    Variant.SHUFFLED_POLYA: "shuffle",
    Variant.DISCRETE_GAUSSIAN_SHARES: "distributed",
    Variant.CENTRAL_LAPLACE: "central",
    Variant.LOCAL_LAPLACE: "local",
}

_STATEMENTS = {
    Variant.POLYA_SHARES: "Theorem 1: (ε, 0)-DP; Pólya shares sum to Lap_Z(g/ε) under secure aggregation",
    Variant.SKELLAM_SHARES: "Theorem 2: RDP of the Skellam sum by Lemma 3 (integer orders, actual g), "
    "converted to (ε, δ) by Lemma 10",
    Variant.SHUFFLED_POLYA: "Theorem 3: (ε, 0)-DP via shuffling; ε/2 for the modular sum plus ε/2 for "
    "relaxed SecAgg",
    Variant.DISCRETE_GAUSSIAN_SHARES: "Theorem 4: ρ-zCDP of the discrete Gaussian sum by Lemma 4, "
    "converted to (ε, δ) (CKS 2020); assumes ε < 1",
    Variant.CENTRAL_LAPLACE: "Theorem 5: (ε, 0) central DP; the trusted server adds Lap_Z(g/ε); "
    "assumes ε < 1",
    Variant.LOCAL_LAPLACE: "Theorem 6: (ε, 0) local DP; every message carries Lap_Z(g/ε); assumes ε < 1",
}

#: The published bound on the mechanism each non-pure variant releases, an accountant route:
#: Lemma 3 (Agarwal, Kairouz & Liu 2021, Thm 3.5; integer orders, actual ``g``) and Lemma 4
#: (Kairouz, Liu & Steinke 2021a, Prop. 13). Theorems 2 and 4 are these lemmas instantiated
#: (so the accountant evaluates the lemmas directly, with each batch's actual n and g); the lemmas hold at
#: every ε, it is Theorem 4 that assumes ``ε < 1``.
_PUBLISHED = {
    Variant.SKELLAM_SHARES: "published:skellam-akl",
    Variant.DISCRETE_GAUSSIAN_SHARES: "published:ddg-kls",
}


def _answer(
    events: tuple[Event, ...], neighbouring: Neighbouring, dps: int, delta: float, route: str
) -> tuple[float, str] | None:
    """The accountant's certified ε of a ledger by ``route`` (``None`` if it cannot account it),
    through :func:`accounting.answers.answer` (memoized, cached on disk)."""
    try:
        got = answer(Question(events, neighbouring, dps, delta, route))
    except UnsupportedError:
        return None
    return float(got), route if route.startswith("published") else got.route


def route_name(route: object) -> str:
    """``route`` if it names an accountant route (the accountant's own check, so both agree).

    Raises
    ------
    ParameterError, ParameterTypeError
        Naming ``route`` and the valid routes.
    """
    if not isinstance(route, str):
        raise ParameterTypeError("route", route, "an accounting route name (" + ", ".join(ROUTES) + ")")
    return accounting_route_name(route)


def _check_ledgers(learner: object, ledgers: object, delta: object) -> tuple[float, list[int]]:
    """The checked ``delta`` and the sorted batch sizes of ``ledgers`` (see :func:`privacy_of`)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.mab.Learner")
    d = real_in("delta", delta, 0.0, 1.0)
    if d >= 1:
        raise ParameterError("delta", delta, "a probability in (0, 1)")
    if not isinstance(ledgers, Mapping):
        raise ParameterTypeError("ledgers", ledgers, "a mapping of batch size to accounting Accountant")
    sizes = sorted(v.integer("ledgers", n, minimum=1) for n in ledgers)
    for n in sizes:
        if not isinstance(ledgers[n], Accountant):
            raise ParameterTypeError(f"ledgers[{n}]", ledgers[n], "an accounting.accountant.Accountant")
    return d, sizes


def privacy_of(
    learner: Learner,
    ledgers: Mapping[int, Accountant],
    delta: float = 1e-6,
    route: str = "auto",
    budget: float | None = None,
) -> Privacy:
    """The privacy of a run from its ledgers: one per released batch size (parallel composition).

    Each ledger is answered by the :class:`~accounting.accountant.Accountant`: by the pure route
    for the pure variants and DP-SE (``δ = 0``), by ``route`` at ``delta`` for the RDP and zCDP
    variants. Where the accountant cannot answer a ledger by ``route`` (a Skellam sum too wide for
    its exact sums), it is answered by the published bound on its mechanism (Lemma 3 or 4, which
    hold at every ε) and ``message`` says so. The theorem's closed form is reported beside it
    only where the theorem's hypotheses hold.

    Parameters
    ----------
    learner : Learner
    ledgers : mapping of int to Accountant
        The ledger of one user of each released batch size (:attr:`RunResult.ledgers`).
    delta : float
        δ in ``(0, 1)`` of the ``(ε, δ)`` report of the RDP and zCDP variants.
    route : str
        The accountant route for the RDP and zCDP variants: ``"auto"`` (the tightest exact route;
        a discrete Gaussian sum over a batch of ~10^5 users takes minutes), or a cheaper one such
        as ``"published"`` (Lemma 3 / Lemma 4 on the released mechanism).
    budget : float, optional
        With ``route="auto"``, the largest estimated cost (:meth:`Accountant.pld_cost`) of a ledger
        answered exactly; costlier ones by the published bound (``message`` says so). ``None``:
        no limit (a run with ``exact_privacy = "cheap"``, a quick run, passes
        :data:`learners.privacy.CHEAP_BUDGET`).
    """
    d, sizes = _check_ledgers(learner, ledgers, delta)
    how = route_name(route)
    if budget is not None:
        budget = real_in("budget", budget, 0.0, open_low=False)
    if learner.name == "se":
        return Privacy(
            "none", "none", math.inf, 0.0, (), None, False, None, None,
            "no privacy (non-private elimination)", "a non-private run: nothing is guaranteed",
        )  # fmt: skip
    assert learner.epsilon is not None
    variant = learner.variant
    notion = variant.notion if variant is not None else "pure"
    pure = notion == "pure"
    published = _PUBLISHED.get(variant) if variant is not None else None
    # each ledger by the route ("auto" without a budget: the exact answer at any cost), Lemma 3 / 4
    # where the route refuses it
    answered = privacy.exact(
        {n: ledgers[n] for n in sizes},
        d,
        "pure" if pure else how,
        pure=pure,
        fallback=published,
        budget=budget,
    )
    per = list(answered.batches)
    holds = variant.hypotheses_hold(learner.epsilon) if variant is not None else True
    theorem_epsilon, rho, notes = _theorem(learner, holds, published, ledgers, sizes, d)
    if answered.message:
        notes.append(answered.message)
    statement = (
        _STATEMENTS[variant]
        if variant is not None
        else "DP-SE (Sajed & Sheffet 2019): (ε, 0) central DP, Laplace(1/ε) on each sum of rewards"
    )
    return Privacy(
        model=_MODELS[variant] if variant is not None else "central",
        notion=notion,
        epsilon=max((e for _, e, _ in per), default=0.0),
        delta=0.0 if pure else d,
        batches=tuple(per),
        theorem=variant.theorem if variant is not None else None,
        theorem_holds=holds,
        theorem_epsilon=theorem_epsilon,
        rho=rho,
        statement=statement,
        message="; ".join(notes),
    )


def _theorem(
    learner: Learner,
    holds: bool,
    published: str | None,
    ledgers: Mapping[int, Accountant],
    sizes: list[int],
    d: float,
) -> tuple[float | None, float | None, list[str]]:
    """The variant's theorem beside the ledgers: its closed-form ε and Theorem 4's ρ where its
    hypotheses hold, or the note saying they do not."""
    variant = learner.variant
    theorem_epsilon: float | None = None
    rho: float | None = None
    notes: list[str] = []
    if holds and published is None:
        theorem_epsilon = learner.epsilon if sizes else 0.0  # (ε, 0)-DP: Theorems 1, 3, 5, 6, DP-SE
    elif holds and published is not None:
        closed = [
            _answer(ledgers[n].ledger, ledgers[n].neighbouring, ledgers[n].dps, d, published) for n in sizes
        ]
        theorem_epsilon = max((c[0] if c is not None else math.inf for c in closed), default=0.0)
        if variant is Variant.DISCRETE_GAUSSIAN_SHARES:
            kls = PUBLISHED[published.split(":", 1)[1]]
            rho = max(
                (
                    kls.value(e.mechanism, None)
                    for n in sizes
                    for e in ledgers[n].ledger
                    if isinstance(e.mechanism, DistributedSum)
                ),
                default=None,
            )
    else:
        assert variant is not None
        assert learner.epsilon is not None
        notes.append(
            f"Theorem {variant.theorem} assumes ε < 1 (Chowdhury & Zhou 2023) and this run has "
            f"ε = {learner.epsilon:g}: "
            "its hypotheses do not hold, so its closed form is not reported; epsilon is the guarantee "
            "of what was released, answered from the run's ledgers"
        )
    return theorem_epsilon, rho, notes


#: The budget of :func:`exact_privacy` (:data:`learners.privacy.EXACT_BUDGET`).
EXACT_BUDGET = privacy.EXACT_BUDGET

#: The exact guarantee of a run's ledgers (:class:`learners.privacy.Exact`).
Exact = privacy.Exact


def exact_privacy(
    learner: Learner,
    ledgers: Mapping[int, Accountant],
    delta: float = 1e-6,
    budget: float | None = EXACT_BUDGET,
    mode: str = "auto",
) -> privacy.Exact:
    """The exact guarantee of a run's ledgers: one per released batch size (parallel composition).

    The pure variants and DP-SE are answered by the pure route (``δ = 0``): their theorems are
    pure ε-DP and the pure ε of the ledger is exact. The RDP and zCDP variants (Skellam and
    discrete Gaussian sums) are answered at ``delta`` by ``mode`` (:func:`learners.privacy.exact`:
    ``"auto"``, the accountant's tightest exact route, whatever the route :func:`privacy_of` was
    asked for; ``"cheap"``; or a route). A ledger the route cannot answer (a Skellam sum too wide
    for the exact sums), or whose estimated cost (:meth:`Accountant.pld_cost`) exceeds the mode's
    budget, is answered by the published bound on its mechanism (Lemma 3 or 4, which hold at
    every ε) and ``message`` says so.

    Parameters
    ----------
    learner : Learner
    ledgers : mapping of int to Accountant
        The ledger of one user of each released batch size (:attr:`RunResult.ledgers`).
    delta : float
        δ in ``(0, 1)`` of the ``(ε, δ)`` report of the RDP and zCDP variants.
    budget : float or None
        The largest estimated cost that mode ``"auto"`` answers exactly (:data:`EXACT_BUDGET`;
        ``None``: no limit).
    mode : str
        An exact mode of :mod:`learners.privacy` other than ``"off"``.
    """
    d, sizes = _check_ledgers(learner, ledgers, delta)
    if budget is not None:
        budget = real_in("budget", budget, 0.0, open_low=False)
    if learner.name == "se":
        return privacy.Exact(
            math.inf, 0.0, "none", (math.inf, math.inf), (), "a non-private run: nothing is guaranteed"
        )
    variant = learner.variant
    return privacy.exact(
        {n: ledgers[n] for n in sizes},
        d,
        mode,
        pure=variant is None or variant.notion == "pure",
        fallback=_PUBLISHED.get(variant) if variant is not None else None,
        budget=budget,
    )
