"""Integers mod ``m``, exactly: the arithmetic of every protocol step, and the checks of its inputs.

Everything on the privacy path is integer: ``int64`` with a reduction mod ``m`` after every step
while ``m < 2**62`` (:data:`BIG_MODULUS`: the sum of two residues fits), and Python integers
(``dtype=object``) from there on. Nothing is ever accumulated in floating point, so the
floating-point attacks on noise (Mironov 2012) have nothing to act on.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting.noise import uniform_below
from learners.errors import ParameterTypeError

__all__ = [
    "BIG_MODULUS",
    "FloatArray",
    "IntArray",
    "add_mod",
    "describe",
    "generator",
    "integral",
    "reals",
    "ring",
    "sub_mod",
    "uniform_residues",
]


#: From this modulus on, residues are Python integers (``dtype=object``): below it the sum of
#: two residues fits in int64.
BIG_MODULUS = 2**62

#: An integer array: int64, or object (Python integers) when the modulus is ``>= BIG_MODULUS``.
IntArray = NDArray[Any]
FloatArray = NDArray[np.float64]


def generator(name: str, rng: object) -> np.random.Generator:
    """``rng`` if it is a :class:`numpy.random.Generator` (a :class:`ParameterTypeError` naming ``name``
    otherwise): the simulation's randomness (rounding, masks, permutations)."""
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(name, rng, "a numpy.random.Generator")
    return rng


def reals(name: str, x: object, valid: str) -> FloatArray:
    """``x`` as a float64 array; what cannot be one is a :class:`ParameterTypeError` saying ``valid``."""
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(name, x, valid) from exc


def describe(a: NDArray[Any]) -> str:
    """An array as an error message names it: its shape and dtype (never its content)."""
    return f"<array of shape {a.shape}, dtype {a.dtype}>"


def integral(name: str, values: ArrayLike) -> NDArray[Any]:
    """``values`` as an integer array (a numpy integer dtype, or object holding Python integers)."""
    a = np.asarray(values)
    if a.dtype == object:
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in a.flat):
            raise ParameterTypeError(name, describe(a), "an array of integers")
        return a
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise ParameterTypeError(name, describe(a), "an array of integers")
    return a


def ring(values: ArrayLike, m: int, name: str = "y") -> IntArray:
    """Reduce integers into ``[0, m-1]`` (mathematical modulo): int64, or object when ``m >= 2**62``."""
    a = integral(name, values)
    if m >= BIG_MODULUS:
        return np.asarray(np.mod(a.astype(object), m), dtype=object)
    if a.dtype == object:
        return np.asarray(np.mod(a, m), dtype=object).astype(np.int64)
    if a.dtype == np.uint64:
        return np.asarray(np.mod(a, np.uint64(m)), dtype=np.int64)
    return np.asarray(np.mod(a.astype(np.int64, copy=False), m), dtype=np.int64)


def add_mod(a: IntArray, b: IntArray, m: int) -> IntArray:
    """``(a + b) mod m`` for residues ``a, b`` (no overflow: ``2(m-1) < 2**63`` in the int64 case)."""
    return np.asarray(np.mod(a + b, m))


def sub_mod(a: IntArray, b: IntArray, m: int) -> IntArray:
    """``(a - b) mod m`` for residues ``a, b``."""
    return np.asarray(np.mod(a - b, m))


def uniform_residues(rng: np.random.Generator, m: int, shape: tuple[int, ...]) -> IntArray:
    """Uniform residues in ``Z_m``: int64, or Python integers when ``m >= 2**62``."""
    u = uniform_below(rng, m, math.prod(shape)).reshape(shape)
    return u.astype(object) if m >= BIG_MODULUS else u
