"""The kernel's one exact conversion to Fraction (accounting.certified.exact_fraction)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from accounting.certified import exact_fraction
from accounting.errors import ParameterError, ParameterTypeError


def test_a_float_is_its_binary_value_not_its_decimal() -> None:
    assert exact_fraction(0.1) == Fraction(3602879701896397, 36028797018963968)
    assert exact_fraction(0.1) != Fraction(1, 10)
    assert exact_fraction(-2.5) == Fraction(-5, 2)
    assert exact_fraction(np.float64(0.1)) == Fraction(0.1)
    assert exact_fraction(5e-324) == Fraction(1, 2**1074)


def test_an_mpf_is_its_binary_value_at_any_precision() -> None:
    with mpmath.workprec(200):
        third = mpmath.mpf(1) / 3
    man, exp = third.man_exp
    assert exact_fraction(third) == Fraction(int(man)) * Fraction(2) ** int(exp)
    assert exact_fraction(mpmath.mpf(0.1)) == Fraction(0.1)
    assert exact_fraction(-mpmath.mpf("0.75")) == Fraction(-3, 4)
    assert exact_fraction(mpmath.mpf(0)) == 0


def test_integers_and_fractions_are_taken_as_they_are() -> None:
    big = 10**400  # beyond the float range: still exact
    assert exact_fraction(big) == Fraction(big)
    assert exact_fraction(np.int64(-7)) == Fraction(-7)
    q = Fraction(1, 3)
    assert exact_fraction(q) is q
    assert isinstance(exact_fraction(3), Fraction)


@pytest.mark.parametrize(
    "value", [math.inf, -math.inf, math.nan, mpmath.mpf("inf"), mpmath.mpf("-inf"), mpmath.mpf("nan")]
)
def test_infinity_and_nan_are_refused_naming_the_parameter(value: object) -> None:
    # an mpf's infinity or NaN stores a zero mantissa: it must not read as 0
    with pytest.raises(ParameterError, match=r"^epsilon=") as err:
        exact_fraction(value, "epsilon")
    assert err.value.name == "epsilon"


def test_a_non_number_is_a_type_error() -> None:
    with pytest.raises(ParameterTypeError, match=r"^sigma="):
        exact_fraction("0.1", "sigma")
