"""The certified answer of a ledger: one door, memoized in the process and cached on disk.

A run's exact answers are pure functions of its ledgers: the ε at δ of a ledger by a route is
determined by the ledger (its events, neighbouring relation and precision, which its canonical
``sha256`` covers, :meth:`Accountant.to_dict <accounting.accountant.Accountant.to_dict>`), the
route, δ and the code that answers. :func:`answer` computes it once per process and keeps it on
disk across processes and runs (a test, a CLI subprocess, ``make demo`` and the next run of the same
config ask the same ledgers again, and the exact routes take seconds to minutes for wide lattice
sums).

**The store.** A :class:`diskcache.Cache` (SQLite, safe for concurrent processes) in the user's cache
directory (``platformdirs.user_cache_dir("dpcert")``), or in ``$DPCERT_CACHE_DIR``. Set
``DPCERT_NO_CACHE=1``, call :func:`set_caching` or use :func:`caching` to bypass it (the
in-process memo stays: it holds nothing that was not computed by this process).

**The key** is a sha256 of the ledger's digest, the route, δ (its exact binary value), the precision,
the library's version and a digest of the source of :mod:`accounting` — so an answer computed by
other code is never served, even between two commits of one version.

**Trust.** An entry holds the enclosure's two ends exactly (the integer mantissa and exponent of
each ``mpf``), the route and the candidates, with a sha256 of that content. A cached answer is the
same value, bit for bit, as a fresh one; an entry that does not parse, whose checksum or key does not
match, or whose ends are not an enclosure, is discarded and recomputed, never trusted.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mpmath
from mpmath import mp

from accounting.accountant import Accountant, Event
from accounting.certified import DEFAULT_DPS, Enclosure
from accounting.errors import UnsupportedError
from accounting.neighbouring import Neighbouring

__all__ = [
    "CACHE_DIR_ENV",
    "NO_CACHE_ENV",
    "Question",
    "answer",
    "cache_directory",
    "caching",
    "caching_enabled",
    "forget",
    "ledger_epsilon",
    "set_caching",
]

#: The environment variable naming the cache directory (default: the user's cache directory).
CACHE_DIR_ENV = "DPCERT_CACHE_DIR"
#: Set to anything but ``""``/``"0"`` to bypass the disk cache.
NO_CACHE_ENV = "DPCERT_NO_CACHE"
#: The layout of an entry; part of the key.
_FORMAT = "dpcert-answer/1"


@dataclass(frozen=True)
class Question:
    """What determines an answer: a ledger's events, relation and precision, δ and the route."""

    events: tuple[Event, ...]
    neighbouring: Neighbouring
    dps: int
    delta: float
    route: str

    @classmethod
    def of(cls, ledger: Accountant, delta: float, route: str = "auto") -> Question:
        """The question "ε at ``delta`` of ``ledger`` by ``route``"."""
        return cls(ledger.ledger, ledger.neighbouring, ledger.dps, float(delta), route)

    def accountant(self) -> Accountant:
        """The ledger as an :class:`Accountant` (validated by composing its events again)."""
        acc = Accountant(self.neighbouring, self.dps)
        for event in self.events:
            acc.compose(event)
        return acc

    def key(self) -> str:
        """The cache key: what determines the answer, hashed (module docstring)."""
        ledger = self.accountant().to_dict()["sha256"]
        body = {
            "format": _FORMAT,
            "ledger": ledger,
            "route": self.route,
            "delta": self.delta.hex(),
            "dps": self.dps,
            "code": code_digest(),
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


# -- settings -----------------------------------------------------------------------------------

_setting: bool | None = None  # None: the environment decides


def set_caching(enabled: bool | None) -> None:
    """Use the disk cache (``True``), bypass it (``False``) or follow ``$DPCERT_NO_CACHE`` (``None``)."""
    global _setting
    if enabled is not None and not isinstance(enabled, bool):
        from accounting.errors import ParameterTypeError

        raise ParameterTypeError("enabled", enabled, "True, False or None")
    _setting = enabled


def caching_enabled() -> bool:
    """Whether :func:`answer` reads and writes the disk cache now."""
    if _setting is not None:
        return _setting
    return os.environ.get(NO_CACHE_ENV, "") in ("", "0")


@contextlib.contextmanager
def caching(enabled: bool) -> Iterator[None]:
    """Within the block, use (or bypass) the disk cache; the setting before it is restored after."""
    before = _setting
    set_caching(enabled)
    try:
        yield
    finally:
        set_caching(before)


def cache_directory() -> Path:
    """The disk cache's directory: ``$DPCERT_CACHE_DIR``, else the user's cache directory."""
    given = os.environ.get(CACHE_DIR_ENV)
    if given:
        return Path(given)
    import platformdirs

    return Path(platformdirs.user_cache_dir("dpcert")) / "answers"


@functools.cache
def code_digest() -> str:
    """The version of dpcert and a sha256 of the source of :mod:`accounting` (its ``.py`` files)."""
    import accounting

    h = hashlib.sha256(accounting.__version__.encode())
    root = Path(accounting.__file__).parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return f"{accounting.__version__}+{h.hexdigest()[:16]}"


_stores: dict[Path, Any] = {}
_lock = threading.Lock()


def _store() -> Any | None:
    """The open cache of :func:`cache_directory` (``None`` if it cannot be opened: answers are then
    computed, as with the cache bypassed)."""
    where = cache_directory()
    with _lock:
        if where not in _stores:
            try:
                import diskcache

                _stores[where] = diskcache.Cache(str(where), size_limit=2**30)
            except Exception:  # an unwritable directory, a broken database: work without it
                return None
        return _stores[where]


# -- the entries ------------------------------------------------------------------------------


def _mpf_data(x: Any) -> list[Any]:
    sign, man, exp, bc = x._mpf_
    return [int(sign), str(int(man)), int(exp), int(bc)]


def _mpf_of(data: Any) -> Any:
    sign, man, exp, bc = data
    if not (isinstance(sign, int) and isinstance(man, str) and isinstance(exp, int) and isinstance(bc, int)):
        raise ValueError("malformed mpf")
    return mp.make_mpf((sign, mpmath.libmp.MPZ(int(man)), exp, bc))


def _float_text(x: float) -> str:
    return x.hex() if math.isfinite(x) else repr(x)


def _seal(key: str, text: str) -> str:
    """The checksum of an entry's content, bound to its key (an entry moved to another key fails)."""
    return hashlib.sha256(f"{key}\n{text}".encode()).hexdigest()


def _encode(key: str, result: Enclosure | UnsupportedError) -> str:
    if isinstance(result, UnsupportedError):
        body: dict[str, Any] = {"refused": str(result)}
    else:
        body = {
            "lo": _mpf_data(result.lo),
            "hi": _mpf_data(result.hi),
            "route": result.route,
            "candidates": {k: _float_text(float(c)) for k, c in result.candidates.items()},
        }
    text = json.dumps(body, sort_keys=True)
    return json.dumps({"body": text, "sha256": _seal(key, text)})


def _decode(key: str, entry: object) -> Enclosure | UnsupportedError:
    """An entry's answer; any defect is a ``ValueError`` (the entry is then recomputed)."""
    if not isinstance(entry, str):
        raise ValueError("not an entry")
    outer = json.loads(entry)
    text = outer["body"]
    if not isinstance(text, str) or _seal(key, text) != outer["sha256"]:
        raise ValueError("checksum mismatch")
    body = json.loads(text)
    if "refused" in body:
        return UnsupportedError(str(body["refused"]))
    lo, hi = _mpf_of(body["lo"]), _mpf_of(body["hi"])
    candidates = {str(k): float.fromhex(v) if "0x" in v else float(v) for k, v in body["candidates"].items()}
    return Enclosure(lo, hi, str(body["route"]), candidates)  # Enclosure refuses lo > hi


# -- the door ---------------------------------------------------------------------------------

_memo: dict[Question, Enclosure | UnsupportedError] = {}


def forget() -> None:
    """Empty the process's memo of answers (the disk cache is kept)."""
    _memo.clear()


def _compute(question: Question) -> Enclosure | UnsupportedError:
    try:
        return question.accountant().epsilon(question.delta, route=question.route)
    except UnsupportedError as err:
        return err


def answer(question: Question) -> Enclosure:
    """The certified ε at δ of a ledger by a route: :meth:`Accountant.epsilon`, computed once.

    Looked up in the process's memo, then (unless bypassed) in the disk cache, else computed and
    stored in both. The answer is the same value, with the same route and candidates, whichever
    way it came.

    Raises
    ------
    UnsupportedError
        When the route cannot account the ledger (a refusal is remembered as an answer is).
    """
    result = _memo.get(question)
    if result is None:
        result = _lookup(question)
        _memo[question] = result
    if isinstance(result, UnsupportedError):
        raise UnsupportedError(str(result))
    return result


def _lookup(question: Question) -> Enclosure | UnsupportedError:
    store = _store() if caching_enabled() else None
    if store is None:
        return _compute(question)
    key = question.key()
    try:
        entry = store.get(key)
    except Exception:  # an unreadable database: compute, as without a cache
        entry = None
    if entry is not None:
        try:
            return _decode(key, entry)
        except (ValueError, KeyError, TypeError, AttributeError):
            pass  # corrupt: recomputed below and written over
    result = _compute(question)
    with contextlib.suppress(Exception):  # a full disk loses the cache entry, never the answer
        store.set(key, _encode(key, result))
    return result


def ledger_epsilon(
    events: tuple[Event, ...],
    delta: float,
    neighbouring: Neighbouring = Neighbouring.REPLACE_ONE,
    dps: int = DEFAULT_DPS,
    route: str = "auto",
) -> float:
    """The certified ε at ``δ`` of a ledger's events (:attr:`Accountant.ledger`) by ``route``,
    rounded up: ``float`` of :func:`answer`.

    The one place a learner turns a ledger into a number: runs re-answer the same ledger for every
    unit, chunk and summary (each user's, each phase's), and the exact routes take seconds.
    """
    return float(answer(Question(tuple(events), neighbouring, dps, float(delta), route)))
