"""Validation of public parameters: one place, one message format.

Every public boundary of dpcert — the constructors, the learners, the experiment configs and the
three command lines — checks its inputs with these functions, so one rule has one wording: the
message names the parameter, the value received and what is valid (:class:`ParameterError`,
:class:`ParameterTypeError`).

**Size limits.** A few quantities have a ceiling beyond which the work cannot finish (or the
arithmetic leaves the float range); :func:`count` and :func:`at_most` refuse them *before* the
work starts, and the message gives the limit and the reason. The limits are module constants
(:data:`MAX_COUNT`, ...), so a caller quotes the same number the check uses.
"""

from __future__ import annotations

import functools
import math
import numbers
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import ParamSpec, TypeVar

import mpmath

from accounting.errors import ParameterError, ParameterTypeError

Real = float | int | Fraction | mpmath.mpf
_T = TypeVar("_T")
P = ParamSpec("P")
R = TypeVar("R")

#: The largest count of repeated work dpcert accepts: compositions of a ledger entry, users of
#: a batch, repetitions, samples. 10^18 (about 2^60) keeps every count an int64 for numpy, and
#: is far beyond any privacy analysis or run; the exact composition of lattice mechanisms squares
#: once per binary digit of the count on a grid that widens with it, and stops finishing in
#: minutes near 10^24.
MAX_COUNT = 10**18

#: Why :data:`MAX_COUNT` exists (appended to the message of a refused count).
COUNT_REASON = "counts above 10^18 do not fit the int64 arrays of the computation, whose work grows with them"


def real(name: str, value: object) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``.

    A number too large for a float (``Fraction(10**400)``, ``10**400``) is refused as not
    finite instead of escaping as an :class:`OverflowError`.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real | mpmath.mpf):
        raise ParameterTypeError(name, value, "a real number")
    try:
        as_float = float(value)
    except OverflowError:
        raise ParameterError(name, value, "a finite real number (this one exceeds the float range)") from None
    if not math.isfinite(as_float):
        raise ParameterError(name, value, "a finite real number")
    return as_float


#: The smallest positive normal float. A positive parameter below it is subnormal: it has lost
#: precision, its reciprocal overflows and half of it may be 0 (``Skellam(5e-324)``), so it is refused.
SMALLEST_POSITIVE = sys.float_info.min


def positive(name: str, value: object) -> float:
    """A finite real ``> 0`` (and a normal float: at least :data:`SMALLEST_POSITIVE`)."""
    v = real(name, value)
    if not v > 0:
        raise ParameterError(name, value, "a finite real number > 0")
    if v < SMALLEST_POSITIVE:
        why = "smaller ones are subnormal floats: inverted, they overflow"
        raise ParameterError(name, value, f"a real number >= {SMALLEST_POSITIVE!r} ({why})")
    return v


def nonnegative(name: str, value: object) -> float:
    """A finite real ``>= 0``."""
    v = real(name, value)
    if not v >= 0:
        raise ParameterError(name, value, "a finite real number >= 0")
    return v


def nonnegative_or_inf(name: str, value: object) -> float:
    """A real ``>= 0``, or ``+inf`` (a claim of no guarantee)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | mpmath.mpf):
        raise ParameterTypeError(name, value, "a real number >= 0 (or inf)")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if math.isnan(v) or not v >= 0:
        raise ParameterError(name, value, "a real number >= 0 (or inf)")
    return v


def open_unit(name: str, value: object) -> float:
    """A real in the open interval (0, 1), for example a δ or a probability β."""
    v = real(name, value)
    if not 0 < v < 1:
        raise ParameterError(name, value, "a real number in the open interval (0, 1)")
    return v


def choice(name: str, value: object, options: Sequence[str]) -> str:
    """``value`` if it is one of the strings ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ParameterError(name, value, "one of " + ", ".join(options))
    return value


class SpellingNote(FutureWarning):
    """A name given in an old spelling was accepted; the message names the new one (one line).

    dpcert names each idea once across the library, the command lines and the experiment TOML;
    where a name changed, the old spelling still works and this note says what to write instead.
    The command lines print it as ``prog: note: ...`` on stderr.
    """


class Note(UserWarning):
    """A one-line remark on a valid answer that its user should read (a ledger nothing verifies,
    :mod:`accounting.integrity`). The command lines print it as ``prog: note: ...`` on stderr."""


def _note(message: str) -> None:
    """Warn with :class:`SpellingNote`, attributed to the first caller outside this module."""
    import warnings

    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__") == __name__:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, SpellingNote, stacklevel=level)


def old_name(what: str, old: str, new: str) -> None:
    """Note that ``old`` (a keyword, key, option or attribute of ``what``) is now spelled ``new``."""
    _note(f"{what} {old!r} is now spelled {new!r}; the old spelling still works")


def spelling(name: str, value: _T, old: dict[str, str]) -> _T | str:
    """``value``, or the new spelling of an old one in ``old`` (``{old: new}``), with a note."""
    if isinstance(value, str) and value in old:
        old_name(name, value, old[value])
        return old[value]
    return value


def renamed(where: str, given: dict[str, object], old: dict[str, str]) -> dict[str, object]:
    """``given`` with each key in ``old`` (``{old: new}``) renamed, with a note; giving both
    spellings of one name is refused (which one was meant?)."""
    out = dict(given)
    for before, after in old.items():
        if before not in out:
            continue
        if after in out:
            why = f"one spelling of the name ({after!r}, the new one, is given too)"
            raise ParameterError(before, out[before], why)
        old_name(where, before, after)
        out[after] = out.pop(before)
    return out


def old_keywords(**old: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function so that each keyword ``old=new`` given in its old spelling still works,
    renamed with a note (:func:`renamed`); giving both spellings is refused."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            if not old.keys() & kwargs.keys():
                return function(*args, **kwargs)
            name = function.__qualname__.removesuffix(".__init__")
            given = renamed(f"{name}()'s keyword", dict(kwargs), old)
            return function(*args, **given)  # type: ignore[arg-type]

        return wrapper

    return decorate


def interval(
    name: str,
    value: object,
    low: float,
    high: float,
    *,
    low_open: bool = True,
    high_open: bool = False,
    why: str = "",
) -> float:
    """A finite real in the interval from ``low`` to ``high`` (open or closed at each end).

    ``why`` is appended to the message (the reason of a limit that is not mathematical).
    """
    v = real(name, value)
    above = v > low if low_open else v >= low
    below = v < high if high_open else v <= high
    if not (above and below):
        reason = f" ({why})" if why else ""
        if math.isinf(high):
            where = f"{'>' if low_open else '>='} {low:g}"
            raise ParameterError(name, value, f"a finite real number {where}{reason}")
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise ParameterError(name, value, f"a real number in {lo}{low:g}, {high:g}{hi}{reason}")
    return v


def _exact_integer(value: object) -> int | None:
    """``value`` as an ``int`` if it is exactly an integer, ``None`` if it is a non-integral number.

    Exact: a :class:`~fractions.Fraction` is integral only with denominator 1 (never by rounding
    through a float, which would turn ``Fraction(2**60 + 1, 2)`` into an integer), a float only if
    it has no fractional part (every float >= 2^53 is the integer it stores).
    """
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Rational):
        return int(value.numerator) if value.denominator == 1 else None
    if isinstance(value, mpmath.mpf):
        if not mpmath.isfinite(value):
            return None
        return int(value) if value == mpmath.floor(value) else None
    if isinstance(value, numbers.Real):
        x = float(value)
        if not math.isfinite(x) or not x.is_integer():
            return None
        return int(x)
    raise TypeError


def _integer_range(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"an integer in [{minimum}, {maximum}]"
    if minimum is not None:
        return f"an integer >= {minimum}"
    if maximum is not None:
        return f"an integer <= {maximum}"
    return "an integer"


def integer(
    name: str, value: object, *, minimum: int | None = None, maximum: int | None = None, why: str = ""
) -> int:
    """An integer (``int``, a numpy integer, an integral ``Fraction``), in ``[minimum, maximum]``.

    A float (or ``mpmath.mpf``) that is exactly an integer (``2.0``) is accepted: it is what a user
    typing ``sensitivity=2.0`` means. Nothing is ever rounded: ``2.5`` or ``Fraction(7, 2)`` is
    refused (rounding a count down would be optimistic). ``why`` is appended to the message of a
    value above ``maximum`` (the reason of the limit).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real | mpmath.mpf):
        raise ParameterTypeError(name, value, "an integer")
    v = _exact_integer(value)
    valid = _integer_range(minimum, maximum)
    if v is None or (minimum is not None and v < minimum):
        raise ParameterError(name, short(value), valid)
    if maximum is not None and v > maximum:
        raise ParameterError(name, short(value), valid + (f" ({why})" if why else ""))
    return v


def count(name: str, value: object, *, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
    """A count of repeated work (compositions, users, repetitions, samples): an integer in
    ``[minimum, MAX_COUNT]``; above :data:`MAX_COUNT` the message says why."""
    why = COUNT_REASON if maximum == MAX_COUNT else ""
    return integer(name, value, minimum=minimum, maximum=maximum, why=why)


def at_most(name: str, value: float, limit: float, why: str) -> float:
    """``value`` (already validated) if it is ``<= limit``, else a :class:`ParameterError` saying why."""
    if not value <= limit:
        raise ParameterError(name, value, f"a value <= {limit:g} ({why})")
    return value


def short(value: object) -> object:
    """A huge integer shown as ``10**k``-sized text instead of hundreds of digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        digits = len(str(abs(value)))
        return f"{'-' if value < 0 else ''}<an integer of {digits} digits>"
    return value


def order(name: str, value: object, *, allow_inf: bool = True) -> float:
    """A Rényi order α: a real ``> 1``, or ``inf`` when ``allow_inf``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | mpmath.mpf):
        raise ParameterTypeError(name, value, "a real number > 1")
    try:
        v = float(value)
    except OverflowError:  # a huge Fraction or int: an order beyond every float
        v = math.inf
    if math.isnan(v) or not v > 1:
        raise ParameterError(name, value, "a real number > 1" + (" or inf" if allow_inf else ""))
    if math.isinf(v) and not allow_inf:
        raise ParameterError(name, value, "a finite real number > 1")
    return v


def dps(name: str, value: object, maximum: int = 1000, why: str = "") -> int:
    """A working precision in decimal digits: an integer in [5, ``maximum``] (1000 unless a command
    needs less, ``why`` saying so)."""
    return integer(name, value, minimum=5, maximum=maximum, why=why)


def seed(name: str, value: object) -> int:
    """A seed of :class:`numpy.random.SeedSequence`: an integer in ``[0, 2^128)``."""
    why = "numpy seeds are non-negative 128-bit integers"
    return integer(name, value, minimum=0, maximum=2**128 - 1, why=why)
