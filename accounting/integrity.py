"""How far a saved ledger can be trusted: its own digest, a run's record of it, a keyed signature.

A ledger file (:meth:`Accountant.to_json <accounting.accountant.Accountant.to_json>`) is answered
as it stands, so an edited σ, count or relation changes the answer. Three kinds of evidence guard
it, from the weakest:

* **its own** ``sha256`` (:func:`ledger_digest`): catches an
  accidental edit; a deliberate one recomputes or deletes it;
* **the run that wrote it:** ``dp-regret run`` records the digest of every ledger it writes in its
  ``summary.json`` (under :data:`RUN_DIGESTS`), so a ledger in a run's ``ledgers/`` folder must match
  the digest of its run (:func:`run_digest`) — an edit must then change two files consistently;
* **a keyed signature** (``hmac``): HMAC-SHA256 (Krawczyk, Bellare & Canetti 1997, RFC 2104) of the
  ledger's canonical JSON under a secret key (:func:`signature`), which no one without the key can
  recompute. The key is read from a file (``--key-file``) or from the environment
  (:data:`KEY_ENV`, :data:`KEY_FILE_ENV`), never from the command line, where other users of the
  machine can read it in the process table.

:func:`verify` checks every kind the ledger and the caller offer and returns the strongest that held
(:class:`Evidence`); any that fails is an error naming the file and the field, never a silent
fallback to a weaker one.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import os
from pathlib import Path
from typing import Any

from accounting.errors import ParameterError
from accounting.storage import canonical_json, digest, read_json, read_text

__all__ = [
    "KEY_ENV",
    "KEY_FILE_ENV",
    "MIN_KEY_BYTES",
    "RUN_DIGESTS",
    "SIGNATURE_FIELD",
    "Evidence",
    "check_signature",
    "ledger_digest",
    "read_key",
    "recorded_digests",
    "run_digest",
    "same_digest",
    "sign",
    "signature",
    "verify",
]

#: The field of a ledger holding its signature, ``"hmac-sha256:<hex>"``.
SIGNATURE_FIELD = "hmac"
#: The key of ``summary.json`` mapping each ledger file of a run (relative to the results folder,
#: ``ledgers/<name>.json``) to the digest of its content.
RUN_DIGESTS = "ledger_sha256"
#: The environment variable holding a signing key (its UTF-8 text).
KEY_ENV = "DPCERT_LEDGER_KEY"
#: The environment variable naming a file that holds a signing key.
KEY_FILE_ENV = "DPCERT_LEDGER_KEY_FILE"
#: The shortest key accepted (128 bits, as NIST SP 800-107 asks of an HMAC key's strength).
MIN_KEY_BYTES = 16
#: The largest key file read.
_MAX_KEY_BYTES = 4096
_PREFIX = "hmac-sha256:"
_SUMMARY = "summary.json"


class Evidence(enum.Enum):
    """The strongest evidence that a ledger is as it was written (:func:`verify`)."""

    SIGNED = "signed"  # its hmac matches the key given
    RUN = "run"  # its content matches the digest its run's summary.json records
    DIGEST = "sha256"  # its own sha256 matches (an accidental edit would show)
    NONE = "unverified"  # nothing to check it against

    def note(self, file: str) -> str | None:
        """One line for the user where the evidence is weak, else ``None``."""
        if self is Evidence.NONE:
            return (
                f"{file} is unverified: it carries no sha256, no run's summary.json records it and no "
                "key signs it, so its answer is only as trustworthy as the file"
            )
        return None


def _content(data: dict[str, Any]) -> dict[str, Any]:
    """A ledger's content: its fields other than ``sha256`` and ``hmac`` (derived from the rest)."""
    return {k: val for k, val in data.items() if k not in ("sha256", SIGNATURE_FIELD)}


def ledger_digest(data: dict[str, Any]) -> str:
    """``sha256:`` of a ledger's content (:func:`_content`) as canonical JSON (so signing a ledger
    leaves its digest as it was)."""
    return digest(_content(data))


def signature(data: dict[str, Any], key: bytes) -> str:
    """``"hmac-sha256:<hex>"`` of a ledger's content (:func:`_content`) as canonical JSON."""
    content = canonical_json(_content(data)).encode()
    return _PREFIX + hmac.new(key, content, hashlib.sha256).hexdigest()


def sign(data: dict[str, Any], key: bytes) -> dict[str, Any]:
    """A copy of a ledger's plain data with its :func:`signature` under ``key``."""
    out = {k: val for k, val in data.items() if k != SIGNATURE_FIELD}
    out[SIGNATURE_FIELD] = signature(data, key)
    return out


def read_key(key_file: str | os.PathLike[str] | None = None, name: str = "--key-file") -> bytes | None:
    """The signing key: from ``key_file``, else from :data:`KEY_FILE_ENV`, else :data:`KEY_ENV`;
    ``None`` if none is given. The key is the file's or variable's text without surrounding
    whitespace (a trailing newline is not part of it).

    Raises
    ------
    ParameterError
        Naming the option or variable: an unreadable key file, or a key shorter than
        :data:`MIN_KEY_BYTES` bytes.
    """
    if key_file is None and os.environ.get(KEY_FILE_ENV):
        key_file, name = os.environ[KEY_FILE_ENV], KEY_FILE_ENV
    if key_file is not None:
        text = read_text(key_file, name, _MAX_KEY_BYTES, "key file")
        shown: object = str(key_file)
    elif os.environ.get(KEY_ENV):
        text, name, shown = os.environ[KEY_ENV], KEY_ENV, "(hidden)"
    else:
        return None
    key = text.strip().encode("utf-8")
    if len(key) < MIN_KEY_BYTES:
        raise ParameterError(name, shown, f"a key of at least {MIN_KEY_BYTES} bytes (it has {len(key)})")
    return key


def recorded_digests(summary: object, where: str) -> dict[str, str] | None:
    """The ledger digests a run's ``summary.json`` content records (:data:`RUN_DIGESTS`): each
    file of its ``ledgers/`` folder (``ledgers/<name>.json``, nothing elsewhere) to a digest;
    ``None`` for a summary of a version that recorded none.

    Raises
    ------
    ParameterError
        Naming ``where`` (the summary) for a record of another shape.
    """
    if not isinstance(summary, dict) or RUN_DIGESTS not in summary:
        return None
    record = summary[RUN_DIGESTS]
    if not (
        isinstance(record, dict)
        and all(_in_ledgers(name) and isinstance(d, str) for name, d in record.items())
    ):
        valid = "an object of the run's ledger files (ledgers/<name>.json) to their digests"
        raise ParameterError(f"{where}: {RUN_DIGESTS}", record, valid)
    return record


def _in_ledgers(name: object) -> bool:
    """Whether ``name`` is a file of a results folder's ``ledgers/`` (nothing elsewhere is read)."""
    return (
        isinstance(name, str)
        and name.startswith("ledgers/")
        and name.endswith(".json")
        and "/" not in name[len("ledgers/") :]
    )


def run_digest(path: Path) -> tuple[Path, str | None] | None:
    """Where ``path`` lies in a run's ``ledgers/`` folder whose ``summary.json`` records ledger
    digests: that summary and the digest it records for ``path`` (``None`` if it names no such
    file); ``None`` outside such a run.

    Raises
    ------
    ParameterError
        Naming the summary, for a ``summary.json`` that is not valid JSON or whose record of the
        digests is malformed.
    """
    folder = path.resolve().parent
    summary = folder.parent / _SUMMARY
    if folder.name != "ledgers" or not summary.is_file():
        return None
    digests = recorded_digests(read_json(summary, str(summary), what="summary.json"), str(summary))
    if digests is None:
        return None  # a run of a version that recorded no digests
    return summary, digests.get(f"ledgers/{path.name}")


def same_digest(a: str, b: str) -> bool:
    """``a == b`` in constant time (``hmac.compare_digest`` on the UTF-8 bytes: a stated digest may
    hold any character)."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def check_signature(data: dict[str, Any], key: bytes, where: str = "ledger") -> None:
    """Refuse a ledger's plain data that carries no signature under ``key``, or a wrong one
    (changed after it was signed, or signed with another key): a :class:`ParameterError` naming
    ``where`` (the file) and the ``hmac`` field."""
    stated = data.get(SIGNATURE_FIELD)
    if not isinstance(stated, str) or not same_digest(stated, signature(data, key)):
        valid = (
            "a ledger signed with this key (it was changed after it was signed, or signed with another key)"
            if stated is not None
            else "a ledger signed with the key given (it carries no hmac: sign it with "
            "`dp-account ledger FILE --sign`)"
        )
        raise ParameterError(f"{where}: {SIGNATURE_FIELD}", stated, valid)


def verify(
    data: dict[str, Any], path: str | os.PathLike[str] | None = None, key: bytes | None = None
) -> Evidence:
    """The strongest :class:`Evidence` for a ledger's plain data (its own ``sha256`` already
    checked by :func:`~accounting.accountant.serialization.check_ledger`), read from ``path``.

    With a ``key``, the ledger must carry a matching signature; with a ``path`` inside a run's
    ``ledgers/`` folder whose summary records digests, the ledger must match its digest there.

    Raises
    ------
    ParameterError
        Naming the file and what failed: no signature or a wrong one under ``key``; a ledger its
        run does not name; a content that differs from its run's record.
    """
    where = str(path) if path is not None else "ledger"
    if key is not None:
        check_signature(data, key, where)
    run = run_digest(Path(path)) if path is not None else None
    if run is not None:
        summary, recorded = run
        if recorded is None:
            raise ParameterError(
                where, "(not recorded)", f"a ledger that {summary} records (the run wrote no such ledger)"
            )
        if not same_digest(recorded, ledger_digest(data)):
            raise ParameterError(
                where,
                "(edited)",
                f"the ledger its run wrote: its content differs from the digest {summary} records "
                "(the file was changed after the run)",
            )
    if key is not None:
        return Evidence.SIGNED
    if run is not None:
        return Evidence.RUN
    return Evidence.DIGEST if "sha256" in data else Evidence.NONE
