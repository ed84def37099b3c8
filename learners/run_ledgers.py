"""A results folder's ledgers against its ``summary.json``: the digests a run records, checked on read.

``dp-regret run`` records, beside its results, the digest of every ledger it writes
(:data:`accounting.integrity.RUN_DIGESTS`). ``dp-regret plot`` checks the folder with
:func:`check_run` (``dp-account ledger`` checks one ledger against the same record with
:func:`accounting.integrity.verify`):

* every ledger the summary records is there and matches its digest (an edited σ, count, relation
  or sensitivity, a ledger removed — with or without its own ``sha256`` recomputed), and, with a
  signing key in the environment (``$DPCERT_LEDGER_KEY`` or ``$DPCERT_LEDGER_KEY_FILE``, with which
  ``run`` signs what it writes), carries a signature under it — which stops an edit that changed
  the summary's digest too;
* every result's exact guarantee names only recorded ledgers, and the ε it states for each ledger
  is the certified answer of that ledger by the route it names, asked again
  (:func:`accounting.answers.answer`: the answer the run cached, or computed once), and the
  result's ε is at least the largest of them. A summary whose ε was lowered by hand is refused.

Each refusal is a :class:`~learners.errors.ParameterError` naming the file and the field.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from accounting.accountant import Accountant
from accounting.answers import Question, answer
from accounting.errors import AccountingError, ParameterTypeError
from accounting.integrity import (
    RUN_DIGESTS,
    check_signature,
    ledger_digest,
    read_key,
    recorded_digests,
    same_digest,
)
from accounting.storage import read_json
from accounting.validate import Note
from learners.errors import ParameterError

__all__ = ["check_run"]


def _ledger(out: Path, name: str, recorded: str, summary: Path, key: bytes | None) -> Accountant:
    """The ledger file ``name`` of the folder, checked against the digest its run ``recorded``
    and, with a ``key``, against its signature."""
    path = out / name
    data = read_json(path, str(path), what="ledger file")
    try:
        acc = Accountant.from_dict(data)
    except (AccountingError, ParameterTypeError) as err:
        raise ParameterError(str(path), "(ledger)", f"a ledger written by its run ({err})") from None
    if not same_digest(recorded, ledger_digest(data)):
        valid = f"the ledger its run wrote: its content differs from the digest {summary} records"
        raise ParameterError(str(path), "(edited)", valid + " (the file was changed after the run)")
    if key is not None:
        check_signature(data, key, str(path))
    return acc


def _exact(result: Any, where: str) -> dict[str, Any] | None:
    """The ``exact`` block of a result (``None`` when the run answered none)."""
    privacy = result.get("privacy") if isinstance(result, dict) else None
    if not isinstance(privacy, dict):
        raise ParameterError(f"{where}.privacy", privacy, "an object (the result's privacy report)")
    exact = privacy.get("exact")
    if exact is not None and not isinstance(exact, dict):
        raise ParameterError(f"{where}.privacy.exact", exact, "an object or null")
    return exact


def _per_ledger(exact: dict[str, Any], where: str) -> list[tuple[str, float, str]]:
    """``(file, ε, route)`` of each ledger an exact block states, matched by the ledger's key."""
    files = exact.get("ledgers")
    rows = [val for k, val in exact.items() if k in ("batches", "nodes", "phases")]
    if not isinstance(files, list) or len(rows) != 1 or not isinstance(rows[0], list):
        raise ParameterError(f"{where}.ledgers", files, "the ledger files and their keys' answers")
    by_key = {str(f).rsplit("__n", 1)[-1].removesuffix(".json"): str(f) for f in files}
    out = []
    for row in rows[0]:
        if not (isinstance(row, list) and len(row) == 3 and str(row[0]) in by_key):
            raise ParameterError(f"{where}.ledgers", row, "[key, ε, route] of a ledger file it names")
        key, eps, route = row
        out.append((by_key[str(key)], float(eps), str(route)))
    return out


def check_run(out: str | Path, summary: Mapping[str, Any], path: str | Path = "summary.json") -> None:
    """Check a results folder's ledgers against its ``summary`` (the content of its ``path``,
    module docstring); a summary that records no digests (written before they were recorded) is
    left as it is, with a :class:`~accounting.validate.Note` that its ε are unverified.

    Raises
    ------
    ParameterError
        Naming the file and the field that disagree.
    """
    out = Path(out)
    path = out / path
    recorded = recorded_digests(dict(summary), str(path))
    if recorded is None:
        note = f"{path} records no ledger digests (written by an older dpcert): its ε are unverified"
        warnings.warn(note, Note, stacklevel=2)
        return
    key = read_key()  # with a key in the environment, the run's ledgers must be signed with it
    ledgers = {name: _ledger(out, name, digest, path, key) for name, digest in recorded.items()}
    delta = summary.get("delta")  # what the run asked of every ledger (a pure one ignores it)
    if not isinstance(delta, float | int) or not 0 < delta < 1:
        raise ParameterError(f"{path}: delta", delta, "the run's δ, in (0, 1)")
    results = summary.get("results")
    if not isinstance(results, list):
        raise ParameterError(f"{path}: results", results, "a list of results")
    for i, result in enumerate(results):
        where = f"{path}: results[{i}]"
        exact = _exact(result, where)
        if exact is None:
            continue
        stated = []
        for name, eps, route in _per_ledger(exact, f"{where}.privacy.exact"):
            if name not in ledgers:
                raise ParameterError(
                    f"{where}.privacy.exact.ledgers", name, f"a ledger {RUN_DIGESTS} records"
                )
            stated.append(eps)
            if route == "none" or math.isinf(eps):
                continue
            try:
                got = answer(Question.of(ledgers[name], delta, route)).upper
            except AccountingError:  # (UnsupportedError among them)
                got = math.nan
            if got != eps:
                raise ParameterError(
                    f"{where}.privacy.exact",
                    eps,
                    f"the certified ε of {name} by route {route!r}, {got!r} (the summary was edited "
                    "after the run, or its ledger was)",
                )
        # at least the largest: a family may state more (∞ where the ledgers are no guarantee of
        # the run, as for the linear family's Algorithm 1 with per-user sensitivity)
        if stated and not float(exact.get("epsilon", math.nan)) >= max(stated):
            raise ParameterError(
                f"{where}.privacy.exact.epsilon",
                exact.get("epsilon"),
                f"at least the largest of its ledgers' ε, {max(stated)!r}",
            )
