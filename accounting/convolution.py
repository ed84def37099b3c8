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

Long sequences of probabilities are convolved in floating point instead (:func:`fft_convolve`),
with a rigorous bound on the rounding error of the whole computation that the caller absorbs in
the direction its answer must err (:func:`accounting.pld.products.compose_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import mpmath.libmp
import numpy as np
from numpy.typing import NDArray

__all__ = ["FFT_ERROR_PER_LEVEL", "UNIT", "convolve", "convolve_rows", "fft_convolve", "fft_error"]

_MPZ = mpmath.libmp.MPZ

#: The unit roundoff of numpy's long double, in which the transforms run (``2^-64`` for the x87
#: extended format of x86-64 Linux; float64's where long double is no wider).
UNIT = float(np.finfo(np.longdouble).eps) / 2

#: ``η/u`` of the error model of :func:`fft_convolve`: each level of a radix-2 transform of
#: float64 data with accurately computed twiddle factors (error ``μ <= u``) multiplies the error by
#: at most ``1 + η``, ``η = μ + γ_4(√2 + μ) <= 6.7u`` (Higham 2002, Theorem 24.2). We take
#: ``η = 20u``, three times that, for pocketfft's radix-4 passes (numpy's FFT).
FFT_ERROR_PER_LEVEL = 20.0


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


def fft_convolve(
    a: NDArray[np.floating[Any]], b: NDArray[np.floating[Any]], same: bool = False
) -> NDArray[np.longdouble]:
    """The convolution of two nonnegative float sequences by FFT, within a certified ℓ1 error.

    Returns ``c`` (long double): ``len(a) + len(b) - 1`` entries, all ``>= 0``, with
    ``Σ |c_i - (a * b)_i| <= e`` for the exact convolution ``a * b`` of the given floats, where
    ``e`` is :func:`fft_error` (known before the transforms are run, so a caller decides first).

    **The error bound.** The sequences are zero-padded to ``N = 2^t`` and transformed by scipy's
    real FFT (pocketfft) in long double (``u = 2^-64`` on x86-64). For a transform of ``N = 2^t``
    points with twiddle factors accurate to ``μ``, ``‖ŷ - y‖_2 <= ε_N ‖y‖_2`` with
    ``ε_N = tη/(1 - tη)``, ``η = μ + γ_4(√2 + μ)`` (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 2nd ed., 2002, Theorem 24.2); we assume it with
    ``η = FFT_ERROR_PER_LEVEL · u`` (about three times the radix-2 value) for pocketfft's
    transforms, forward and inverse (the ``1/N`` is exact). With ``A = F a`` (``‖A‖_2 = √N ‖a‖_2``,
    ``‖A‖_∞ <= ‖a‖_1``), the spectra's error ``‖Â - A‖_2 <= ε_N √N ‖a‖_2``, the product's
    rounding ``√2 γ_2 |Â_k||B̂_k|`` (Higham 2002, Lemma 3.5) and the inverse transform's ``ε_N``,
    the computed ``ĉ`` satisfies

        ‖ĉ - c‖_2 <= D (1 + ε_N) + ε_N ‖a‖_1 ‖b‖_2,
        D = ε_N (‖a‖_2 B + ‖a‖_1 ‖b‖_2) + √2 γ_2 (1 + ε_N) ‖a‖_2 B,    B = ‖b‖_1 + ε_N √N ‖b‖_2,

    (``‖c‖_2 <= ‖a‖_1‖b‖_2``, Young), and ``‖ĉ - c‖_1 <= √M ‖ĉ - c‖_2`` over the ``M`` entries
    kept; negative entries set to 0 only come closer to ``c >= 0``. The bound is computed from
    norms rounded up (a relative margin of ``2^-30`` covers their own rounding). Tests hold it
    against exact integer convolutions; the errors measured are orders of magnitude below it.
    """
    import scipy.fft  # here: importing scipy takes a while and only long compositions need it

    n = len(a) + len(b) - 1
    size = _padded(n)
    spectrum_a = scipy.fft.rfft(a.astype(np.longdouble), size)
    spectrum_b = spectrum_a if same else scipy.fft.rfft(b.astype(np.longdouble), size)
    return np.asarray(
        np.maximum(scipy.fft.irfft(spectrum_a * spectrum_b, size)[:n], 0.0), dtype=np.longdouble
    )


def _padded(n: int) -> int:
    return 1 << max(1, (n - 1).bit_length())


def fft_error(a: NDArray[np.floating[Any]], b: NDArray[np.floating[Any]], same: bool = False) -> float:
    """The bound on the ℓ1 error of :func:`fft_convolve` of ``a`` and ``b`` (see there)."""
    n = len(a) + len(b) - 1
    size = _padded(n)
    margin = 1.0 + 2.0**-30
    a1, a2 = float(np.sum(a)) * margin, math.sqrt(float(np.dot(a, a))) * margin
    b1, b2 = (a1, a2) if same else (float(np.sum(b)) * margin, math.sqrt(float(np.dot(b, b))) * margin)
    levels = size.bit_length() - 1
    eta = levels * FFT_ERROR_PER_LEVEL * UNIT
    eps = eta / (1.0 - eta)
    gamma2 = 2 * UNIT / (1 - 2 * UNIT)
    big_b = b1 + eps * math.sqrt(size) * b2
    d = eps * (a2 * big_b + a1 * b2) + math.sqrt(2.0) * gamma2 * (1 + eps) * a2 * big_b
    return (d * (1 + eps) + eps * a1 * b2) * math.sqrt(n) * margin
