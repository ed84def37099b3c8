"""Arb ball arithmetic (python-flint) where :mod:`mpmath.iv` is too slow (kernel).

Arb (Johansson, "Arb: efficient arbitrary-precision midpoint-radius interval arithmetic", IEEE
Transactions on Computers 66(8), 2017) encloses every result in a ball ``[m ± r]`` that contains
the exact value, special functions included (``erfc`` among them, which :mod:`mpmath.iv` lacks:
:func:`accounting.special.erfc` builds one from a point value and a margin). Its operations are
one to two orders of magnitude faster than :mod:`mpmath.iv`'s, which matters where thousands of
cells are evaluated (the cells of a continuous pair, :meth:`accounting.subsampling.MixturePair.masses`).
Results are read as exact ``mpf`` ends (:func:`lower_of`, :func:`upper_of`), or leave as
:mod:`mpmath.iv` intervals (:func:`interval_of`) where the rest of the kernel reads intervals;
:mod:`mpmath` stays the reference the tests hold these against.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction

import mpmath.libmp
from flint import arb, ctx
from mpmath import iv, mp

from accounting.certified import Interval, Mpf, lower, shift_down, upper

__all__ = [
    "arb",
    "ball",
    "ball_of",
    "ball_precision",
    "exact_ball",
    "exact_parts",
    "interval_of",
    "lower_of",
    "units",
    "upper_of",
]


@contextmanager
def ball_precision(bits: int) -> Iterator[None]:
    """Within this context Arb works at ``bits`` bits (python-flint's precision is global)."""
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def ball(x: int | float | Fraction | Mpf) -> arb:
    """``x`` as a ball: exact for an int, a float or an ``mpf`` (below ``ball_precision`` bits),
    the quotient's ball for a fraction."""
    if isinstance(x, Fraction):
        return arb(x.numerator) / arb(x.denominator)
    if isinstance(x, mpmath.mpf):
        return _exact(x)
    return arb(x)


def ball_of(x: Interval) -> arb:
    """An :mod:`mpmath.iv` interval as a ball containing it (exact ends below ``ball_precision``
    bits; work at the interval's precision)."""
    return _exact(lower(x)).union(_exact(upper(x)))


def exact_parts(x: arb) -> tuple[int, int]:
    """``(mantissa, exponent)`` of an exact ball (an end of one: ``x.lower()``, ``x.upper()``)."""
    man, exp = x.man_exp()
    return int(man), int(exp)


def exact_ball(x: Mpf | tuple[int, int]) -> arb:
    """An ``mpf`` or an exact ``(mantissa, exponent)`` as a ball, exactly."""
    if isinstance(x, tuple):
        man, exp = x
        return arb(man) * arb(2) ** exp if man else arb(0)
    return _exact(x)


def units(x: arb, bits: int, up: bool) -> int:
    """``⌈upper(x)·2^bits⌉`` (``up``) or ``⌊lower(x)·2^bits⌋``, exactly: a ball read as fixed point."""
    man, exp = exact_parts(x.upper() if up else x.lower())
    shift = exp + bits
    return man << shift if shift >= 0 else shift_down(man, -shift, up)


def _exact(x: Mpf) -> arb:
    sign, man, exp, _ = x._mpf_
    if not man:
        if exp:  # ±inf or nan: mpmath's special values
            raise ValueError(f"no ball for {x}")
        return arb(0)
    return arb(-int(man) if sign else int(man)) * arb(2) ** int(exp)


def lower_of(x: arb) -> Mpf:
    """The lower end of a ball, exactly, as an ``mpf``."""
    man, exp = x.lower().man_exp()
    return mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


def upper_of(x: arb) -> Mpf:
    """The upper end of a ball, exactly, as an ``mpf``."""
    man, exp = x.upper().man_exp()
    return mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


def _end(x: arb, rounding: str) -> object:
    man, exp = x.man_exp()
    return mpmath.libmp.from_man_exp(int(man), int(exp), iv.prec, rounding)


def interval_of(x: arb) -> Interval:
    """The ball ``x`` as an :mod:`mpmath.iv` interval containing it (at the current ``iv`` precision)."""
    return iv.mpf([mp.make_mpf(_end(x.lower(), "f")), mp.make_mpf(_end(x.upper(), "c"))])
