"""Validation of public parameters: one place, one message format."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import mpmath

from accounting.errors import ParameterError, ParameterTypeError

Real = float | int | Fraction | mpmath.mpf


def real(name: str, value: object) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | mpmath.mpf):
        raise ParameterTypeError(name, value, "a real number")
    as_float = float(value)
    if not math.isfinite(as_float):
        raise ParameterError(name, value, "a finite real number")
    return as_float


def positive(name: str, value: object) -> float:
    """A finite real ``> 0``."""
    v = real(name, value)
    if not v > 0:
        raise ParameterError(name, value, "a finite real number > 0")
    return v


def nonnegative(name: str, value: object) -> float:
    """A finite real ``>= 0``."""
    v = real(name, value)
    if not v >= 0:
        raise ParameterError(name, value, "a finite real number >= 0")
    return v


def open_unit(name: str, value: object) -> float:
    """A real in the open interval (0, 1), for example a δ or a probability β."""
    v = real(name, value)
    if not 0 < v < 1:
        raise ParameterError(name, value, "a real number in the open interval (0, 1)")
    return v


def integer(name: str, value: object, *, minimum: int | None = None) -> int:
    """An integer (``int`` or an integral numpy integer), optionally ``>= minimum``.

    Floats are refused even when integral-valued in principle, except that a float
    that is exactly an integer (``2.0``) is accepted: it is what a user typing
    ``sensitivity=2.0`` means.
    """
    if isinstance(value, bool):
        raise ParameterTypeError(name, value, "an integer")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        v = int(float(value))
    elif isinstance(value, numbers.Real):
        raise ParameterError(name, value, "an integer" + (f" >= {minimum}" if minimum is not None else ""))
    else:
        raise ParameterTypeError(name, value, "an integer")
    if minimum is not None and v < minimum:
        raise ParameterError(name, value, f"an integer >= {minimum}")
    return v


def order(name: str, value: object, *, allow_inf: bool = True) -> float:
    """A Rényi order α: a real ``> 1``, or ``inf`` when ``allow_inf``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | mpmath.mpf):
        raise ParameterTypeError(name, value, "a real number > 1")
    v = float(value)
    if math.isnan(v) or not v > 1:
        raise ParameterError(name, value, "a real number > 1" + (" or inf" if allow_inf else ""))
    if math.isinf(v) and not allow_inf:
        raise ParameterError(name, value, "a finite real number > 1")
    return v


def dps(name: str, value: object) -> int:
    """A working precision in decimal digits: an integer in [5, 1000]."""
    v = integer(name, value, minimum=5)
    if v > 1000:
        raise ParameterError(name, value, "an integer in [5, 1000]")
    return v
