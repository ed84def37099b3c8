"""Certified numbers: enclosures ``[lo, hi]`` and outward rounding to float.

The arithmetic behind every enclosure is interval arithmetic (:mod:`mpmath.iv`),
whose elementary operations round outward, so an enclosure contains the true
value whatever the working precision. The float accessors round *outward* too:
``float(enclosure)`` is the upper end rounded up, so a reported ε or δ is never
smaller than the certified value, not even by one ulp.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, TypeAlias

import mpmath
from mpmath import iv, mp

from accounting.errors import ParameterError, ParameterTypeError

# mpmath ships no type information: its numbers are ``Any`` to mypy. These aliases document intent.
Interval: TypeAlias = Any
Mpf: TypeAlias = Any


def _exact(x: object) -> Mpf:
    """``x`` as an ``mpf`` without rounding (``mp.mpf(x)`` would round to the ambient precision)."""
    if isinstance(x, mpmath.mpf):
        return x
    if isinstance(x, int):
        return mp.make_mpf(mpmath.libmp.from_int(x))
    if isinstance(x, float):
        return mp.make_mpf(mpmath.libmp.from_float(x))
    raise TypeError(f"cannot convert {x!r} exactly")


def exact_fraction(x: int | float | Fraction | mpmath.mpf, name: str = "value") -> Fraction:
    """The exact rational value of a finite real number: the one conversion of the kernel.

    Parameters
    ----------
    x : int, float, Fraction or mpmath.mpf
        The number (any :class:`numbers.Rational` or :class:`numbers.Real`, numpy scalars
        included). A float or an ``mpf`` is the binary fraction it stores, not the decimal it
        prints as: ``0.1`` is ``3602879701896397 / 2**55``.
    name : str, optional
        The parameter named by the error when ``x`` is refused.

    Returns
    -------
    Fraction
        ``x`` without rounding.

    Raises
    ------
    ParameterError
        If ``x`` is infinite or NaN (no fraction equals it).
    ParameterTypeError
        If ``x`` is not a real number.
    """
    if isinstance(x, Fraction):
        return x
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, mpmath.mpf):
        # ``mp.isfinite``, not the mantissa: the special values (inf, nan) store a zero mantissa
        # and would read as 0.
        if not mp.isfinite(x):
            raise ParameterError(name, x, "a finite real number (an exact fraction has no inf or NaN)")
        return Fraction(*mpmath.libmp.to_rational(x._mpf_))
    if isinstance(x, numbers.Real):
        f = float(x)
        if not math.isfinite(f):
            raise ParameterError(name, x, "a finite real number (an exact fraction has no inf or NaN)")
        return Fraction(f)
    raise ParameterTypeError(name, x, "a real number (int, float, Fraction or mpmath.mpf)")


def float_up(x: Mpf | int | float) -> float:
    """The smallest float ``>= x`` (``inf`` stays ``inf``), compared exactly."""
    x = _exact(x)
    if mp.isinf(x):
        return math.inf if x > 0 else -math.inf
    f = float(x)
    if _exact(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def shift_down(x: int, bits: int, up: bool) -> int:
    """``x / 2^bits`` for integers, rounded up (``up``) or down, exactly."""
    return -((-x) >> bits) if up else x >> bits


def float_down(x: Mpf | int | float) -> float:
    """The largest float ``<= x`` (``-inf`` stays ``-inf``), compared exactly."""
    x = _exact(x)
    if mp.isinf(x):
        return math.inf if x > 0 else -math.inf
    f = float(x)
    if _exact(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


#: The working precision (decimal digits) of every certified computation unless a caller asks
#: for another: the one default of the project (mechanisms, divergences, PLDs, the Accountant,
#: calibration).
DEFAULT_DPS = 20


@dataclass(frozen=True)
class Enclosure:
    """A certified enclosure ``lo <= value <= hi`` of a real number: the one result type.

    ``float(e)`` is ``hi`` rounded up: the number to report when the quantity is a
    privacy loss (an ε, a δ, a divergence), since it is never optimistic. An answer of the
    :class:`~accounting.accountant.Accountant` also says which ``route`` gave it and what every
    route tried gave (``candidates``, upper ends); they take no part in equality.
    """

    lo: mpmath.mpf
    hi: mpmath.mpf
    route: str = field(default="exact", compare=False)
    candidates: Mapping[str, float] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.lo <= self.hi:
            raise ValueError(f"empty enclosure: lo={self.lo} > hi={self.hi}")

    @classmethod
    def from_interval(cls, x: Interval) -> Enclosure:
        """The enclosure given by an :mod:`mpmath.iv` interval."""
        return cls(lower(x), upper(x))

    @classmethod
    def exact(cls, x: mpmath.mpf | int | float) -> Enclosure:
        """The degenerate enclosure of a number known exactly."""
        v = mp.mpf(x)
        return cls(v, v)

    @classmethod
    def from_rounded_up(cls, high: float, low: float | None = None) -> Enclosure:
        """Enclose a closed form evaluated at >= 30 digits and rounded up to a float.

        ``high`` is the value (rounded up) where the upper end is wanted and ``low`` (default
        ``high``) the one where the lower end is wanted, e.g. at a parameter rounded the other
        way. The evaluation error is far below an ulp, so the true value lies within one float of
        the returned one: two floats below ``low`` is a safe lower end (clipped at 0).
        """
        if low is None:
            low = high
        if math.isinf(high):
            return cls(mp.inf if math.isinf(low) else mp.mpf(low), mp.inf)
        lo = math.nextafter(math.nextafter(low, -math.inf), -math.inf)
        return cls(mp.mpf(max(lo, 0.0)), mp.mpf(high))

    def answered(self, route: str, candidates: Mapping[str, float] | None = None) -> Enclosure:
        """This enclosure as the answer of ``route`` (and the upper ends every route tried gave)."""
        return replace(self, route=route, candidates=dict(candidates or {route: self.upper}))

    @property
    def upper(self) -> float:
        """``hi`` rounded up to a float: the value to report."""
        return float_up(self.hi)

    @property
    def lower(self) -> float:
        """``lo`` rounded down to a float."""
        return float_down(self.lo)

    @property
    def mid(self) -> mpmath.mpf:
        """The midpoint (for display only: it is not a bound)."""
        if mp.isinf(self.hi) or mp.isinf(self.lo):
            return self.hi if mp.isinf(self.hi) else self.lo
        return (self.lo + self.hi) / 2

    @property
    def relative_width(self) -> mpmath.mpf:
        """``(hi - lo) / |hi|``: how many significant digits the enclosure certifies."""
        if mp.isinf(self.hi):
            return mp.zero if mp.isinf(self.lo) else mp.inf
        if self.hi == 0:
            return mp.zero if self.lo == 0 else mp.inf
        return (self.hi - self.lo) / abs(self.hi)

    def digits(self) -> float:
        """Number of certified significant decimal digits (``inf`` for an exact value)."""
        w = self.relative_width
        if w == 0:
            return math.inf
        return float(-mp.log10(w))

    def __float__(self) -> float:
        return self.upper

    def __contains__(self, x: object) -> bool:
        """Whether ``x`` (an int, float or mpf, compared exactly) lies in the enclosure."""
        value = _exact(x)
        return bool(self.lo <= value <= self.hi)

    def __repr__(self) -> str:
        where = "" if self.route == "exact" else f", route={self.route!r}"
        return f"Enclosure([{mp.nstr(self.lo, 17)}, {mp.nstr(self.hi, 17)}]{where})"


Number: TypeAlias = Any


def interval(lo: Number, hi: Number | None = None) -> Interval:
    """An :mod:`mpmath.iv` interval at the current ``iv`` precision."""
    if hi is None:
        return iv.mpf(lo)
    return iv.mpf([lo, hi])


#: Extra decimal digits carried internally above the precision a caller asks for.
GUARD_DIGITS = 12


@contextmanager
def precision(dps: int) -> Iterator[None]:
    """Work at ``dps + GUARD_DIGITS`` digits in both :data:`mpmath.mp` and :data:`mpmath.iv`.

    Precision is a local context (as ``mp.workdps``); ``iv`` has no ``workdps`` of its
    own, so its precision is saved and restored here.
    """
    saved = iv.prec
    with mp.workdps(dps + GUARD_DIGITS):
        iv.prec = mp.prec
        try:
            yield
        finally:
            iv.prec = saved


def lower(x: Interval) -> Mpf:
    """The lower endpoint of an interval, exactly, as an ``mpf``."""
    return mp.make_mpf(x._mpi_[0])


def upper(x: Interval) -> Mpf:
    """The upper endpoint of an interval, exactly, as an ``mpf``."""
    return mp.make_mpf(x._mpi_[1])


def to_interval(value: object) -> Interval:
    """A rigorous interval around a parameter given as int, float, Fraction or mpf.

    Floats and ints are exact binary numbers; a Fraction is enclosed by dividing its
    numerator by its denominator in interval arithmetic.
    """
    if isinstance(value, Fraction):
        return iv.mpf(value.numerator) / iv.mpf(value.denominator)
    if isinstance(value, int | float):
        return iv.mpf(value)
    return iv.mpf(mp.mpf(value))  # an mpf: exact at any precision it fits


def to_mpf(value: object) -> Mpf:
    """An ``mpf`` (rounded to nearest at the current precision) from int, float, Fraction or mpf."""
    if isinstance(value, Fraction):
        return mp.mpf(value.numerator) / value.denominator
    return mp.mpf(value)


def log1p(t: Interval) -> Interval:
    """``ln(1 + t)`` for an interval ``t >= -1``, without the cancellation of ``iv.log(1 + t)``.

    ``iv.log(1 + t)`` at a tiny ``t`` (a subsampling rate of 1e-300) rounds ``1 + t`` to an
    interval ``[1, 1 + ulp]`` and loses every digit of ``t``: its enclosure ``[0, 2^-prec]`` can
    decide no sign. ``ln(1 + t)`` is increasing, so its ends are those of the two ends of ``t``,
    each enclosed by :func:`_log1p_point`.
    """
    a, b = lower(t), upper(t)
    if not a > -1:
        return iv.log(1 + t)  # reaches ln 0 = -inf (a weight of 1): no cancellation to avoid
    return iv.mpf([lower(_log1p_point(a)), upper(_log1p_point(b))])


def _log1p_point(c: Mpf) -> Interval:
    """``ln(1 + c)`` enclosed: ``iv.log`` when ``|c| >= 2^-10``; else the alternating series
    ``Σ_{k<=n} (-1)^{k+1} c^k/k`` with the remainder ``|c|^{n+1}/((n+1)(1-|c|))`` as an interval,
    ``n`` such that the remainder is below ``2^-(prec+10)`` relative to ``|c|``."""
    if c == 0:
        return iv.mpf(0)
    x = iv.mpf(c)
    if abs(c) >= mp.mpf(2) ** -10:
        return iv.log(1 + x)
    n = max(1, math.ceil((iv.prec + 10) / -float(mp.log(abs(c), 2))))
    total = iv.mpf(0)
    power = iv.mpf(1)
    for k in range(1, n + 1):
        power = power * x
        total = total + power / k if k % 2 else total - power / k
    size = abs(x)
    remainder = upper(size ** (n + 1) / ((n + 1) * (1 - size)))
    return total + iv.mpf([-remainder, remainder])
