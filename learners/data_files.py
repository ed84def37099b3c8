"""Data files given by a config (MSLR-WEB10K, MovieLens), read with bounds.

A data file is opened only when it is a regular file (:func:`accounting.storage.open_regular`: a
pipe, a device or a folder is refused before a byte is read, without blocking) of at most
:data:`MAX_DATA_BYTES`, and read as a stream of lines (:class:`DataLines`) each checked as it
passes: at most :data:`MAX_LINE_BYTES` long and free of NUL bytes, so a binary file (or gigabytes
of NULs without a line end) is refused at its first line instead of being parsed to the end. The
total read is bounded again as it goes (a compressed file is bounded by what it decompresses to).
Every failure is a :class:`~learners.errors.ParameterError` naming the parameter (``path``), the
file and what it should be; the families turn it into the config field (``instance.path``).
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from accounting.storage import open_regular
from learners.errors import ParameterError, ParameterTypeError

__all__ = ["MAX_DATA_BYTES", "MAX_LINE_BYTES", "DataLines", "data_lines", "text_lines"]

#: The largest data file read, in bytes (after decompression): one fold of MSLR-WEB10K (train, vali
#: and test concatenated, as the papers use it) is about 1.3 GB of text.
MAX_DATA_BYTES = 2**31
#: The longest line of a data file (MSLR-WEB10K's lines, of 136 features, are about 1 kB).
MAX_LINE_BYTES = 2**16


class DataLines:
    """The lines of an open data file, each checked as it is read.

    Iterating yields each line as ``bytes`` (with its line end), after checking that it is at most
    :data:`MAX_LINE_BYTES` long, has no NUL byte, and that the file so far is within
    :data:`MAX_DATA_BYTES`; a line that fails is a :class:`ParameterError` naming ``name``, the file,
    ``what`` it should be and the line's number. It has a ``read`` method too, so that readers
    asking for a file object (:func:`sklearn.datasets.load_svmlight_file`) take it; they iterate it.

    Attributes
    ----------
    number : int
        The number of lines read so far (the last one's number, 1-based).
    """

    def __init__(self, handle: IO[bytes], name: str, path: str, what: str) -> None:
        self._handle = handle
        self._name = name
        self._path = path
        self._what = what
        self._read = 0
        self._back: list[bytes] = []
        self.number = 0

    def refuse(self, detail: str) -> ParameterError:
        """The error naming the file, what it should be, and ``detail`` (what is wrong)."""
        return ParameterError(self._name, self._path, f"{self._what}; {detail}")

    def __iter__(self) -> Iterator[bytes]:
        return self

    def push_back(self, lines: list[bytes]) -> None:
        """Give ``lines`` (read from here, in order) back: the next ones iterated, before the rest."""
        self._back = list(lines) + self._back

    def __next__(self) -> bytes:
        if self._back:
            return self._back.pop(0)
        try:
            line = self._handle.readline(MAX_LINE_BYTES + 1)
        except (OSError, EOFError, ValueError) as err:  # unreadable, a corrupt .gz / .bz2
            raise self.refuse(f"reading it failed after line {self.number}: {err}") from None
        if not line:
            raise StopIteration
        self.number += 1
        self._read += len(line)
        if b"\0" in line:
            raise self.refuse(f"text lines; line {self.number} has a NUL byte (a binary file?)")
        if len(line) > MAX_LINE_BYTES:
            raise self.refuse(f"lines of at most {MAX_LINE_BYTES} bytes; line {self.number} is longer")
        if self._read > MAX_DATA_BYTES:
            raise self.refuse(f"at most {MAX_DATA_BYTES} bytes of text; line {self.number} is beyond")
        return line

    def read(self, size: int = -1) -> bytes:
        """The rest of the file (or the lines up to ``size`` bytes), checked line by line."""
        out = bytearray()
        for line in self:
            out += line
            if 0 <= size <= len(out):
                break
        return bytes(out)


@contextmanager
def data_lines(path: str | os.PathLike[str], what: str, name: str = "path") -> Iterator[DataLines]:
    """The checked lines (:class:`DataLines`) of the data file ``path``; ``.gz`` and ``.bz2`` files
    are decompressed as they are read.

    Raises
    ------
    ParameterTypeError
        ``path`` is not a path.
    ParameterError
        Naming ``name`` and ``path``: missing, unreadable, not a regular file, larger
        than :data:`MAX_DATA_BYTES`, or (as it is read) a line :class:`DataLines` refuses.
    """
    if not isinstance(path, str | os.PathLike):
        raise ParameterTypeError(name, path, "a file path (str or os.PathLike)")
    shown = os.fspath(path)
    try:
        handle = open_regular(path, name, MAX_DATA_BYTES, "data file")
    except ParameterError as err:
        raise ParameterError(name, shown, f"{what}: {err.valid}") from None
    stream: Any = handle
    suffix = os.path.splitext(str(shown))[1]
    if suffix == ".gz":
        stream = gzip.GzipFile(fileobj=handle, mode="rb")
    elif suffix == ".bz2":
        stream = bz2.BZ2File(handle, mode="rb")
    try:
        yield DataLines(stream, name, shown, what)
    finally:
        stream.close()
        handle.close()


def text_lines(lines: DataLines) -> Iterator[str]:
    """The lines of ``lines`` as text: UTF-8 with universal line ends (``\\r\\n`` and ``\\r`` too),
    as :func:`open` in text mode reads them."""
    wrapper = io.TextIOWrapper(io.BufferedReader(_Raw(lines)), encoding="utf-8")
    while True:
        try:
            text = wrapper.readline()
        except UnicodeDecodeError as exc:
            raise lines.refuse(f"UTF-8 text: {exc}") from None
        if not text:
            return
        yield text


class _Raw(io.RawIOBase):
    """The checked lines of a :class:`DataLines` as a raw stream (for :class:`io.TextIOWrapper`)."""

    def __init__(self, lines: DataLines) -> None:
        self._lines = lines
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._pending:
            self._pending = next(self._lines, b"")
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n
