"""Exact convolution of sequences of nonnegative integers, by Kronecker substitution.

Each sequence is packed into one big integer whose slots (a whole number of bytes each) are wide
enough for any sum of products; the two integers are multiplied once, by GMP
(``mpmath.libmp.MPZ``, gmpy2, when :mod:`mpmath` runs on it, its default backend here; a squaring
when both sequences are one), and the slots of the product are the convolution. One big product
replaces ``len(a)·len(b)`` small ones: Python's own Karatsuba took 20 s for the tables of a Rényi
sum at order 100 (thousands of bits per entry), GMP a fraction of a second, and it is about 100x
slower than GMP on the megabit products of a long composition of privacy-loss distributions.

Two forms of the same product: :func:`convolve_rows` on sequences held as little-endian byte rows
(numpy arrays, packed and unpacked with no Python loop over entries: the privacy-loss grids of
:mod:`accounting.pld`), and :func:`convolve` on lists of Python integers (the convolution tables
of :mod:`accounting.noise`).
"""

from __future__ import annotations

from collections.abc import Sequence

import mpmath.libmp
import numpy as np
from numpy.typing import NDArray

__all__ = ["convolve", "convolve_rows"]

_MPZ = mpmath.libmp.MPZ


def convolve_rows(a: NDArray[np.uint8], b: NDArray[np.uint8], same: bool = False) -> NDArray[np.uint8]:
    """The exact convolution of two sequences of nonnegative integers held as byte rows.

    Row ``i`` of ``a`` is the integer ``a[i]`` in little-endian bytes (any fixed width per array).
    The result has ``len(a) + len(b) - 1`` rows whose width holds any sum of products.

    Parameters
    ----------
    a, b : numpy.ndarray of uint8
        Two-dimensional, one row per entry (``b`` is ignored when ``same``).
    same : bool
        Whether ``b`` is ``a`` (the product is then a squaring).
    """
    slot = a.shape[1] + b.shape[1] + (min(len(a), len(b)).bit_length() + 7) // 8

    def pack(rows: NDArray[np.uint8]) -> object:
        buf = np.zeros((len(rows), slot), dtype=np.uint8)
        buf[:, : rows.shape[1]] = rows
        return _MPZ(int.from_bytes(buf.tobytes(), "little"))

    pa = pack(a)
    product = pa * pa if same else pa * pack(b)  # type: ignore[operator]
    n = len(a) + len(b) - 1
    raw = int(product).to_bytes(n * slot, "little")
    return np.frombuffer(raw, dtype=np.uint8).reshape(n, slot)


def convolve(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The exact convolution of two nonempty sequences of nonnegative Python integers.

    :func:`convolve_rows` of the sequences written as byte rows just wide enough for their largest
    entries (a squaring when ``b`` is ``a``).
    """
    rows_a = _rows(a)
    rows_b = rows_a if b is a else _rows(b)
    product = convolve_rows(rows_a, rows_b, same=b is a)
    width = product.shape[1]
    raw = product.tobytes()
    return [int.from_bytes(raw[i * width : (i + 1) * width], "little") for i in range(len(product))]


def _rows(values: Sequence[int]) -> NDArray[np.uint8]:
    """``values`` as little-endian byte rows of one width (at least one byte)."""
    width = max(1, (max(values).bit_length() + 7) // 8)
    raw = b"".join(x.to_bytes(width, "little") for x in values)
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(values), width)
