"""The analyzer ``A``: decoding the modular sum with the underflow correction.

Chowdhury & Zhou (2023, §3 and the proof of Theorem 1): the server's view, a residue mod ``m``, is
decoded to the noisy integer sum (:func:`decode`) and divided by the precision (:func:`analyze`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from accounting import validate as v
from learners.errors import ParameterError
from learners.protocols.aggregation import modular_sum
from learners.protocols.arithmetic import BIG_MODULUS, FloatArray, IntArray, describe, integral

__all__ = ["analyze", "decode", "divide"]


def decode(yhat: ArrayLike, n: int, g: int, tau: int, m: int) -> IntArray:
    """The analyzer's integer decoding with the underflow correction (Chowdhury & Zhou 2023, ``A``; proof of
    Theorem 1).

    ``S = yhat - m`` if ``yhat > n g + τ`` (strict), else ``S = yhat``. By the decoding lemma,
    every noisy sum ``S_true`` in ``[-τ, n g + τ]`` is recovered exactly from ``S_true mod m``
    when ``m >= n g + 2τ + 1`` (the paper's ``m`` is equality); outside that range decoding fails.

    Parameters
    ----------
    yhat : array_like of int
        The server's view, residues in ``[0, m-1]``.
    n, g, tau, m : int
        Users, precision, accuracy level and modulus, with ``m >= n g + 2 tau + 1``.

    Returns
    -------
    numpy.ndarray
        ``S``: int64 (object when ``m >= 2**62``), the shape of ``yhat``.
    """
    users = v.integer("n", n, minimum=1)
    precision = v.integer("g", g, minimum=1)
    accuracy = v.integer("tau", tau, minimum=0)
    mod = v.integer("m", m, minimum=1)
    if mod < users * precision + 2 * accuracy + 1:
        raise ParameterError("m", m, f"a modulus >= n*g + 2*tau + 1 = {users * precision + 2 * accuracy + 1}")
    a = integral("yhat", yhat)
    a = a.astype(object) if mod >= BIG_MODULUS else a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= mod):
        raise ParameterError("yhat", describe(a), f"residues in [0, {mod - 1}]")
    return np.where(a > users * precision + accuracy, a - mod, a)


def divide(sums: IntArray, g: int) -> FloatArray:
    """``S / g`` as floats (post-processing); Python integers divide with one correct rounding."""
    if sums.dtype == object:
        return np.array([s / g for s in sums.flat], dtype=np.float64).reshape(sums.shape)
    return np.asarray(sums / g, dtype=np.float64)


def analyze(yhat: ArrayLike, n: int, g: int, tau: int, m: int, *, multiset: bool = False) -> FloatArray:
    """The analyzer ``A``: the estimate ``z = S/g`` of ``Σ x_i`` (Chowdhury & Zhou 2023, §3; Algorithms 3, 5).

    Parameters
    ----------
    yhat : array_like of int
        The server's view: the modular sum, or with ``multiset=True`` the shuffled messages
        ``(R, n[, d])``, whose sum mod ``m`` is taken first (Chowdhury & Zhou 2023, footnote 6).
    n, g, tau, m : int
        As in :func:`decode`.
    multiset : bool
        Whether ``yhat`` is the shuffler's output.

    Returns
    -------
    numpy.ndarray of float64
        ``z = decode(yhat) / g``.
    """
    view = modular_sum(yhat, m, axis=1) if multiset else yhat
    return divide(decode(view, n, g, tau, m), v.integer("g", g, minimum=1))
