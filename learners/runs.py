"""What the runs of every learner family share.

The checkpoints a regret curve is recorded at, read-only result arrays, the δ a privacy report is
answered at, the ε of each of a run's ledgers, the bits of a real on the wire, and a learner built
from named settings. Each family (:mod:`learners.mab`, :mod:`learners.linear`,
:mod:`learners.phased`, :mod:`learners.ldp`) had its own copy of these; they are one here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.accountant import Accountant
from accounting.answers import ledger_epsilon
from learners.errors import ParameterError

__all__ = [
    "FLOAT_BITS",
    "checkpoint_rounds",
    "ledger_epsilons",
    "make_settings",
    "read_only",
    "report_delta",
]

#: Bits of a real number on the wire (the real-valued privatizers' communication in bits).
FLOAT_BITS = 64

T = TypeVar("T")
A = TypeVar("A", bound=NDArray[Any])


def checkpoint_rounds(horizon: int, checkpoints: int) -> NDArray[np.int64]:
    """The rounds regret is recorded after: ``ceil(c T / C)`` for ``c = 1..min(C, T)`` (distinct)."""
    n = min(checkpoints, horizon)
    return np.unique(-(-np.arange(1, n + 1, dtype=np.int64) * horizon // n))


def read_only(a: A) -> A:
    """``a``, made read-only (a run's result arrays are its record)."""
    a.setflags(write=False)
    return a


def report_delta(learner_delta: float | None, delta: float | None) -> float:
    """The δ a run's privacy report is answered at: ``delta`` (in ``(0, 1)``), or the learner's δ,
    or ``1e-6`` without one."""
    if delta is None:
        return learner_delta if learner_delta is not None else 1e-6
    return v.open_unit("delta", delta)


def ledger_epsilons(
    ledgers: Mapping[int, Accountant], delta: float, route: str = "auto"
) -> tuple[tuple[int, float], ...]:
    """``(key, ε)`` of each ledger in key order: its certified ε at ``delta`` by the accountant's
    ``route`` (:func:`accounting.answers.ledger_epsilon`, memoized)."""
    return tuple(
        (n, ledger_epsilon(acc.ledger, delta, acc.neighbouring, acc.dps, route))
        for n, acc in sorted(ledgers.items())
    )


def make_settings(
    cls: Callable[..., T],
    name: str,
    epsilon: float | None,
    params: Mapping[str, Any],
    old: Mapping[str, str] | None = None,
) -> T:
    """``cls(name, epsilon, **params)`` for a family's frozen ``Learner`` dataclass; a setting it does
    not have is an error naming it and the known ones. ``old`` (``{old: new}``) renames the old
    spellings of settings, with a note (:func:`accounting.validate.renamed`)."""
    params = v.renamed("make_learner's keyword", dict(params), dict(old or {}))
    known = set(getattr(cls, "__dataclass_fields__")) - {"name", "epsilon"}  # noqa: B009 - any dataclass
    unknown = sorted(set(params) - known)
    if unknown:
        raise ParameterError(unknown[0], params[unknown[0]], "one of " + ", ".join(sorted(known)))
    return cls(name, epsilon, **params)
