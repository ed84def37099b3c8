"""The files of dpcert: one atomic write, one strict JSON reader and writer, one digest, one figure saver.

Every file the project writes (a ledger, a results folder's ``summary.json``, ``regret.csv``, unit
checkpoints, curves and figures) goes through here, so they share one rule each:

* :func:`write_atomic` / :func:`atomic_path`: a temporary file in the target's folder named after
  the process (``.<name>.<pid>.tmp``), flushed to disk, then renamed over the target, so a reader
  sees the old file or the new one, never a partial one;
* :func:`read_text` / :func:`read_json`: a file given by a user, read only when it is a regular
  file of at most a stated size (a pipe, a device or a folder is refused before it is opened for
  reading, so nothing blocks on a FIFO or fills memory from ``/dev/zero``), as UTF-8;
* :func:`open_regular`: the same checks for a file read in a stream (a data set, too large to read
  at once), returning the open binary handle;
* :func:`strict_json_loads`: JSON in which a key given twice in one object is refused (``json.loads``
  keeps the last silently);
* :func:`json_ready` / :func:`json_text`: strict JSON out (``allow_nan=False``), infinities as the
  strings ``"inf"`` / ``"-inf"``;
* :func:`canonical_json` / :func:`digest`: ``sha256:`` of the sorted, compact JSON of plain data
  (the ledger's hash and a config's fingerprint);
* :func:`save_figure`: matplotlib figures whose bytes depend on the figure only (no dates, fixed
  SVG ids, TrueType fonts in PDF).

This module belongs to :mod:`accounting` (the kernel): :mod:`learners` and :mod:`verification`
import it, never the reverse.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Literal

import mpmath
import numpy as np

from accounting.errors import ParameterError

__all__ = [
    "atomic_path",
    "canonical_json",
    "digest",
    "json_ready",
    "json_text",
    "open_regular",
    "read_json",
    "read_text",
    "save_figure",
    "strict_json_loads",
    "write_atomic",
]

PathLike = str | os.PathLike[str]


def _temporary(path: Path) -> Path:
    # In the target's folder (``os.replace`` is atomic only within one file system) and named after
    # the process, so two processes writing one file never share a temporary; the results folder's
    # clean-up finds stale ones by the pattern ``.*.tmp``.
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


@contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """A temporary path to write ``path``'s new content to; it replaces ``path`` on success.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.

    Yields
    ------
    Path
        ``.<name>.<pid>.tmp`` in the folder of ``path``. When the block ends without an exception
        the file there is flushed to disk (``fsync``) and renamed over ``path`` (``os.replace``);
        when it raises, the temporary file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    tmp = _temporary(target)
    try:
        yield tmp
        # fsync before the rename: after a crash the name never points at a file whose content
        # has not reached the disk (the rename may be persisted before the data otherwise).
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_atomic(path: PathLike, data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    data : str or bytes
        The content; a ``str`` is written as UTF-8, with its line ends as they are.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    with atomic_path(path) as tmp:
        tmp.write_bytes(raw)


#: The largest file :func:`read_text` reads unless told otherwise (a ledger of thousands of events,
#: a schedule, a summary or a config are far below it).
MAX_READ_BYTES = 2**24


def read_text(path: PathLike, name: str, limit: int = MAX_READ_BYTES, what: str = "file") -> str:
    """The text of a regular file of at most ``limit`` bytes, or a :class:`ParameterError`.

    The file is opened without blocking and checked on its descriptor before a byte is read: a
    FIFO, a device (``/dev/zero``), a socket or a folder is refused, and so is a file larger than
    ``limit`` (by its size, and again by what is read, for a file that grows meanwhile).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    name : str
        What the error names: the option, argument or config field that gave ``path``.
    limit : int, optional
        The most bytes read (default :data:`MAX_READ_BYTES`).
    what : str, optional
        What the file should be, for the message ("ledger file", "JSON file", ...).

    Returns
    -------
    str
        The content, decoded as UTF-8.

    Raises
    ------
    ParameterError
        Naming ``name`` and ``path``: not a regular file, unreadable, too large, or not UTF-8.
    """
    with open_regular(path, name, limit, what) as handle:
        try:
            raw = handle.read(limit + 1)
        except OSError as err:
            raise ParameterError(name, str(path), f"a readable {what} ({err.strerror or err})") from None
    if len(raw) > limit:
        raise ParameterError(name, str(path), f"a {what} of at most {limit} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ParameterError(name, str(path), f"a UTF-8 {what}") from None


def read_json(path: PathLike, name: str, limit: int = MAX_READ_BYTES, what: str = "JSON file") -> Any:
    """:func:`strict_json_loads` of :func:`read_text`; malformed JSON is a :class:`ParameterError`
    naming ``name``, ``path`` and the fault."""
    text = read_text(path, name, limit, what)
    try:
        return strict_json_loads(text)
    except ParameterError:
        raise
    except ValueError as err:
        raise ParameterError(name, str(path), f"a {what} ({err})") from None


def open_regular(path: PathLike, name: str, limit: int | None = None, what: str = "file") -> BinaryIO:
    """A binary handle on a regular file of at most ``limit`` bytes, or a :class:`ParameterError`.

    As :func:`read_text`, the file is opened without blocking and checked on its descriptor before
    a byte is read (a FIFO, a device, a socket or a folder is refused, and so is a file larger than
    ``limit`` by its size); the caller then reads it in a stream, and closes it. Reading a regular
    file never blocks, so the non-blocking flag changes nothing after the check.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    name : str
        What the error names: the option, argument or config field that gave ``path``.
    limit : int or None, optional
        The largest size accepted, in bytes; ``None``: any size.
    what : str, optional
        What the file should be, for the message ("data file", ...).

    Returns
    -------
    BinaryIO
        The file, open for reading in binary mode at its start.

    Raises
    ------
    ParameterError
        Naming ``name`` and ``path``: missing or unreadable (permissions), not a regular file, or
        larger than ``limit``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError) as err:  # ValueError: a NUL character in the path
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise ParameterError(name, str(path), f"a readable {what} ({reason})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ParameterError(name, str(path), f"a regular {what} (not a folder, pipe or device)")
    if limit is not None and info.st_size > limit:
        os.close(fd)
        raise ParameterError(name, str(path), f"a {what} of at most {limit} bytes ({info.st_size})")
    return os.fdopen(fd, "rb")


def _duplicate_key(key: str, value: Any) -> Exception:
    return ParameterError(key, value, "a key given once in its object (this one appears twice)")


def strict_json_loads(
    text: str | bytes | bytearray, duplicate: Callable[[str, Any], Exception] = _duplicate_key
) -> Any:
    """``json.loads`` refusing a key given twice in one object.

    Parameters
    ----------
    text : str, bytes or bytearray
        The JSON text.
    duplicate : callable, optional
        ``duplicate(key, value)`` is the exception raised for a key given twice (``value`` the
        second one); by default a :class:`~accounting.errors.ParameterError` naming the key.

    Returns
    -------
    Any
        The data, as :func:`json.loads` returns it.
    """

    def unique(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise duplicate(key, value)
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=unique)


def json_ready(value: Any, nan: Literal["keep", "string"] = "keep") -> Any:
    """Data for strict JSON: dataclasses, mappings, sequences, numpy and mpmath scalars, enums.

    Parameters
    ----------
    value : Any
        The data.
    nan : {"keep", "string"}, optional
        ``"keep"`` (the command lines): NaN is left a float, so :func:`json_text` refuses it, as a
        NaN in an answer is a bug to see. ``"string"`` (a results folder's ``summary.json``): NaN is
        the string ``"nan"``, as a statistic of a degenerate run may be one.

    Returns
    -------
    Any
        Plain data: ``+inf`` is the string ``"inf"`` and ``-inf`` the string ``"-inf"``; an object
        of another type is its ``str``.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_ready(dataclasses.asdict(value), nan)
    if isinstance(value, Mapping):
        return {str(k): json_ready(x, nan) for k, x in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(x, nan) for x in value]
    if isinstance(value, enum.Enum):
        return json_ready(value.value, nan)
    if isinstance(value, np.generic):
        return json_ready(value.item(), nan)
    if isinstance(value, mpmath.mpf):
        return json_ready(float(value), nan)
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        if math.isinf(value) or (math.isnan(value) and nan == "string"):
            return str(value)
        return value
    return str(value)


def json_text(record: Any, indent: int | None = 2, nan: Literal["keep", "string"] = "keep") -> str:
    """``record`` as strict JSON (:func:`json_ready`, then ``allow_nan=False``).

    Parameters
    ----------
    record : Any
        The data.
    indent : int or None, optional
        As :func:`json.dumps`.
    nan : {"keep", "string"}, optional
        As :func:`json_ready`.

    Returns
    -------
    str
        The JSON text.

    Raises
    ------
    ValueError
        If a NaN is left in the data (``nan="keep"``): JSON has no NaN.
    """
    return json.dumps(json_ready(record, nan), indent=indent, allow_nan=False)


def canonical_json(data: Any) -> str:
    """The canonical JSON of plain data: keys sorted, no spaces (the text :func:`digest` hashes).

    Parameters
    ----------
    data : Any
        JSON-ready data (dicts, lists, str, int, float, bool, None).

    Returns
    -------
    str
        ``json.dumps(data, sort_keys=True, separators=(",", ":"))``.
    """
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def digest(data: Any) -> str:
    """``"sha256:<hex>"`` of :func:`canonical_json` of ``data``: equal data, equal digests.

    Parameters
    ----------
    data : Any
        JSON-ready data; the order of a dict's keys does not matter.

    Returns
    -------
    str
        The hash, prefixed ``sha256:`` (as a ledger's ``sha256`` field and a config's fingerprint).
    """
    return "sha256:" + hashlib.sha256(canonical_json(data).encode()).hexdigest()


#: The metadata of each format: no creation date, so the same figure gives the same bytes.
_FIGURE_METADATA: Mapping[str, Any] = {"png": None, "pdf": {"CreationDate": None}, "svg": {"Date": None}}


def save_figure(fig: Any, paths: Sequence[PathLike], **savefig: Any) -> list[Path]:
    """Write ``fig`` to each of ``paths`` (format from the suffix), reproducibly and atomically.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    paths : sequence of str or os.PathLike
        The files, each ending in ``.png``, ``.pdf`` or ``.svg``.
    **savefig
        Further arguments of ``Figure.savefig`` (``dpi``, ``bbox_inches``, ...).

    Returns
    -------
    list of Path
        The files written, in order.
    """
    from matplotlib import rc_context

    written = []
    # TrueType fonts in PDF (publishers refuse Type 3) and SVG ids from a fixed salt, not random.
    with rc_context({"pdf.fonttype": 42, "svg.hashsalt": "dpcert"}):
        for path in paths:
            target = Path(path)
            fmt = target.suffix[1:]
            with atomic_path(target) as tmp:
                fig.savefig(tmp, format=fmt, metadata=_FIGURE_METADATA[fmt], **savefig)
            written.append(target)
    return written
