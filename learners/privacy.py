"""The privacy report of a run: the claimed guarantee beside the exact one, built in one place.

Every learner family (:mod:`learners.families`) reports the privacy of a (panel, algorithm, ε) the
same way, in ``summary.json``'s ``privacy`` block:

``claimed``  the guarantee of the algorithm's theorem or target, :class:`Claimed`:
             ``{"epsilon", "delta", "statement", "holds"}``, ``epsilon`` null where the theorem's
             hypotheses fail; null for a non-private algorithm;
``exact``    the certified guarantee of the run's saved ledgers, :func:`exact` (:class:`Exact`):
             ``{"epsilon", "delta", "route", "enclosure", "ledgers", "batches", "message", ...}``,
             the worst ledger's ε (a user is in one of them: parallel composition), the route(s)
             that answered and the enclosure ``[lo, hi]`` of that ε; null for a non-private algorithm
             or when the exact block is turned off.

The exact block is answered by the run's **exact mode** (the config's ``exact_privacy``, the CLIs'
``--exact-privacy``), one of :data:`EXACT_MODES`:

``"auto"``     the accountant's tightest exact route, each ledger whose estimated cost
               (:meth:`Accountant.pld_cost <accounting.accountant.Accountant.pld_cost>`, a
               deterministic function of the ledger) is at most :data:`EXACT_BUDGET` (about 20 s);
               costlier ones by the published bound on the released mechanism where there is one;
``"cheap"``    the same with :data:`CHEAP_BUDGET` (well under a second a ledger): the default of
               ``--quick`` runs, whose ``summary.md`` says so;
a route        ``"pld"``, ``"rdp"``, ``"zcdp"``, ``"pure"``, ``"published"``, ``"published:<name>"``:
               every ledger by that route (no budget);
``"off"``      no exact block.

Whatever the mode, ledgers of a pure guarantee are answered by the pure route (exact and free), a
ledger that a route refuses falls back to the published bound where the family has one, and the
route that answered is written beside every ε. The budgets apply where there is a published bound
to fall back on (the MAB family's Skellam and discrete Gaussian sums, whose exact answers take
seconds to minutes); the other families' ledgers (Gaussian nodes and releases, Laplace,
randomized response, cited guarantees) are answered exactly whatever the mode. Answers go through
:func:`accounting.answers.answer`: memoized, cached on disk, computed once. No answer depends on
the wall clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from accounting.accountant import ROUTES, Accountant, route_name
from accounting.answers import Question, answer
from accounting.certified import Enclosure, float_down
from accounting.errors import ParameterError as AccountingParameterError
from accounting.errors import UnsupportedError
from learners.errors import ParameterError, ParameterTypeError

__all__ = [
    "CHEAP_BUDGET",
    "EXACT_BUDGET",
    "EXACT_MODES",
    "Claimed",
    "Exact",
    "exact",
    "exact_mode",
]

#: The largest estimated cost (:meth:`Accountant.pld_cost`, in "seconds on the reference machine")
#: of a ledger that mode ``"auto"`` answers exactly. On a 2-core machine, alone, the full-size
#: ledgers of the shipped figure configs took 2-3.5 s per unit of it (cost 1.9: 4 s; 3.7: 9 s; 4.0:
#: 14 s, Dist-CDP-SE at n = 2^19; 5.35: 13.5 s, Dist-RDP-SE(s=10) at n = 4^10, T = 10^7, the
#: costliest one any exact route answers), and up to three times as long with another process on
#: the second core. 6 answers every one of them exactly, each in about 20 s at most; beyond, the
#: published bound answers.
EXACT_BUDGET = 6.0

#: The largest estimated cost of a ledger that mode ``"cheap"`` (the ``--quick`` default) answers
#: exactly: a fraction of a second a ledger; costlier ones by the published bound.
CHEAP_BUDGET = 0.25

#: The exact modes (module docstring); a ``"published:<name>"`` route is accepted too.
EXACT_MODES = ("auto", "cheap", "off", *(r for r in ROUTES if r != "auto"))


def exact_mode(value: object, name: str = "exact_privacy") -> str:
    """``value`` if it names an exact mode (:data:`EXACT_MODES`, or ``"published:<name>"``).

    Raises
    ------
    ParameterError, ParameterTypeError
        Naming ``name`` and the valid modes.
    """
    valid = "one of " + ", ".join(EXACT_MODES) + ", or published:<name>"
    if not isinstance(value, str):
        raise ParameterTypeError(name, value, valid)
    if value in EXACT_MODES:
        return value
    try:
        route_name(value)  # the accountant's own check of a route name
    except AccountingParameterError:
        raise ParameterError(name, value, valid) from None
    return value


@dataclass(frozen=True)
class Claimed:
    """The guarantee an algorithm's theorem (or its target) states.

    Attributes
    ----------
    epsilon : float or None
        ``None`` where the theorem's hypotheses fail.
    delta : float or None
    statement : str
    holds : bool
        Whether the theorem's hypotheses hold (or the run certifies the target).
    """

    epsilon: float | None
    delta: float | None
    statement: str
    holds: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Exact:
    """The exact guarantee of what a run released: its ledgers answered, worst over them.

    Attributes
    ----------
    epsilon : float
        The largest, over the ledgers, of the certified ε of each (rounded up); 0 if nothing was
        released; ``inf`` where nothing is certified.
    delta : float
        0 for a pure guarantee (answered by the pure route), else the δ asked for.
    route : str
        The route(s) that answered, in ledger order and joined by ``+`` (each a ``--route`` of
        ``dp-account ledger`` that reproduces its ledger's ε); ``"none"`` if nothing answered.
    enclosure : tuple of (float, float)
        ``[lo, hi]`` certified around ``epsilon``'s exact value (``lo`` rounded down, ``hi`` up).
    batches : tuple of (int, float, str)
        ``(key, ε, route)`` of each ledger (the key: a batch size, tree nodes, a phase, ...).
    message : str
        Empty when every ledger was answered by the mode's route; otherwise which were not, and why.
    """

    epsilon: float
    delta: float
    route: str
    enclosure: tuple[float, float]
    batches: tuple[tuple[int, float, str], ...]
    message: str = ""

    def to_dict(self, files: Sequence[str], batches: str = "batches") -> dict[str, Any]:
        """The ``exact`` block of ``summary.json``: these fields, the ledger ``files`` answered,
        and :attr:`batches` under the family's name for its ledger keys."""
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "route": self.route,
            "enclosure": list(self.enclosure),
            "ledgers": list(files),
            batches: [list(b) for b in self.batches],
            "message": self.message,
        }


def _budget_of(mode: str, budget: float | None) -> float | None:
    if mode == "cheap":
        return CHEAP_BUDGET
    if mode == "auto":
        return budget
    return None


def exact(
    ledgers: Mapping[int, Accountant],
    delta: float,
    mode: str = "auto",
    *,
    pure: bool = False,
    fallback: str | None = None,
    budget: float | None = EXACT_BUDGET,
    auto_route: str = "auto",
    what: str = "batches of n",
) -> Exact:
    """The exact guarantee of a run's ledgers by ``mode`` (module docstring), worst over them.

    Parameters
    ----------
    ledgers : mapping of int to Accountant
        The ledger of one user of each key (parallel composition).
    delta : float
        δ of the ``(ε, δ)`` answer (unused for ``pure``).
    mode : str
        An exact mode other than ``"off"``.
    pure : bool
        The ledgers hold a pure guarantee: answered by the pure route at δ = 0.
    fallback : str, optional
        The published bound on the released mechanism (a ``published:<name>`` route), answering a
        ledger the mode's route refuses or that is over the mode's budget.
    budget : float or None
        The budget of mode ``"auto"`` (:data:`EXACT_BUDGET`; ``None``: no limit).
    auto_route : str
        The accountant route that ``"auto"`` and ``"cheap"`` mean for this family's ledgers.
    what : str
        How the message names the ledgers' keys.
    """
    mode = exact_mode(mode, "mode")
    if mode == "off":
        raise ParameterError("mode", mode, "an exact mode other than 'off' (there is nothing to answer)")
    limit = _budget_of(mode, budget)
    per: list[tuple[int, float, str]] = []
    ends: list[tuple[float, float]] = []
    refused: list[int] = []
    costly: list[int] = []
    for key in sorted(ledgers):
        ledger = ledgers[key]
        if pure:
            route = "pure"
        elif mode in ("auto", "cheap"):
            route = auto_route
            if limit is not None and fallback is not None and ledger.pld_cost() > limit:
                costly.append(key)
                route = fallback
        else:
            route = mode
        got, route, fell_back = _answer(ledger, delta, route, fallback)
        if fell_back:
            refused.append(key)
        if got is None:
            per.append((key, math.inf, "none"))
            ends.append((math.inf, math.inf))
            continue
        # a published route names itself; an exact one names the route that won (auto's choice)
        name = route if route.startswith("published") else got.route
        per.append((key, got.upper, name))
        ends.append((float_down(got.lo), got.upper))
    routes = dict.fromkeys(r for _, _, r in per)
    worst = max(range(len(per)), key=lambda i: per[i][1], default=None)
    return Exact(
        epsilon=per[worst][1] if worst is not None else 0.0,
        delta=0.0 if pure else delta,
        route="+".join(routes) if routes else ("pure" if pure else "none"),
        # the max of the ledgers' ε lies between the max of their lower ends and of their upper ends
        enclosure=(max(lo for lo, _ in ends), max(hi for _, hi in ends)) if ends else (0.0, 0.0),
        batches=tuple(per),
        message=_message(mode, what, fallback, limit, refused, costly, per),
    )


def _answer(
    ledger: Accountant, delta: float, route: str, fallback: str | None
) -> tuple[Enclosure | None, str, bool]:
    """The answer of ``ledger`` by ``route``, else by ``fallback`` where the route refuses it: the
    enclosure (``None`` if nothing answered), the route that answered, and whether ``fallback``
    was asked."""
    try:
        return answer(Question.of(ledger, delta, route)), route, False
    except UnsupportedError:
        if fallback is None or route == fallback:
            return None, route, False
    try:
        return answer(Question.of(ledger, delta, fallback)), fallback, True
    except UnsupportedError:
        return None, route, True


def _message(
    mode: str,
    what: str,
    fallback: str | None,
    limit: float | None,
    refused: Sequence[int],
    costly: Sequence[int],
    per: Sequence[tuple[int, float, str]],
) -> str:
    """:attr:`Exact.message`: which ledgers the mode's route did not answer, and why."""
    notes: list[str] = []
    keys = ", ".join
    if refused:
        who = f"the route {mode!r} cannot"
        if mode in ("auto", "cheap"):
            who = "no exact route of the accountant can"
        notes.append(
            f"{who} answer the ledgers of {what} = {keys(map(str, refused))} (their lattice is too wide for "
            f"the exact sums, or the route has no form for them); they are answered by {fallback!r}, the "
            "published bound on the released mechanism (it holds at every ε)"
        )
    if costly:
        notes.append(
            f"the exact answer of the ledgers of {what} = {keys(map(str, costly))} is estimated to cost more "
            f"than {limit:g} (Accountant.pld_cost{', a quick run' if mode == 'cheap' else ''}); they are "
            f"answered by {fallback!r}, the published bound on the released mechanism "
            "(--exact-privacy auto, or `dp-account ledger FILE --route auto`, answers them exactly)"
        )
    unanswered = [k for k, e, _ in per if math.isinf(e)]
    if unanswered:
        notes.append(f"no certified guarantee for the ledgers of {what} = {keys(map(str, unanswered))}")
    return "; ".join(notes)


def report(
    answered: Any,
    claimed: Claimed | None,
    exact: Exact | None,
    files: Sequence[str],
    *,
    certified: bool = True,
    batches: str = "batches",
    extra: Mapping[str, Any] | None = None,
    exact_extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``privacy`` block of a ``summary.json`` result, the same for every family.

    Parameters
    ----------
    answered : dataclass
        The family's own account of the run (``privacy_of``), whose fields come first.
    claimed : Claimed or None
        ``None`` for a non-private algorithm.
    exact : Exact or None
        ``None`` for a non-private algorithm or with the exact block off.
    files : sequence of str
        The ledger files :attr:`Exact` answered.
    certified : bool
        Whether the ledgers are a guarantee of the run as it ran; if not, the exact ε is ``inf``
        (nothing is certified), whatever the ledgers' own answer.
    batches : str
        The family's name of its ledger keys in the ``exact`` block (``batches``, ``nodes``, ...).
    extra, exact_extra : mapping, optional
        The family's entries after ``answered``'s, and in the ``exact`` block.
    """
    out = asdict(answered) | dict(extra or {})
    out["claimed"] = claimed.to_dict() if claimed is not None else None
    if exact is None:
        out["exact"] = None
        return out
    block = exact.to_dict(files, batches)
    if not certified:
        block["epsilon"], block["enclosure"] = math.inf, [math.inf, math.inf]
    out["exact"] = block | dict(exact_extra or {})
    return out
