"""Tests of :mod:`verification.goodness_of_fit.fit`: Pearson's chi-square and the G-test by hand.

A three-point distribution with closed-form p-values (Pearson 1900; Wilks 1938).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting import CenteredBinomial, DiscreteLaplace, Gaussian, Polya
from verification.errors import ParameterError, ParameterTypeError, VerificationError
from verification.goodness_of_fit import (
    chi_square_test,
    g_test,
    moment_test,
)

from .streams import rng, three_point_samples


def test_chi_square_by_hand() -> None:
    """Expected 25, 50, 25: X² = 25/25 + 100/50 + 25/25 = 4 on 2 dof, p = e^{-2}."""
    result = chi_square_test(CenteredBinomial(2), three_point_samples())
    assert [b.observed for b in result.bins] == [30, 40, 30]
    assert [b.expected for b in result.bins] == pytest.approx([25, 50, 25], rel=1e-12)
    assert result.statistic == pytest.approx(4.0, rel=1e-12)
    assert result.dof == 2
    assert result.p_value == pytest.approx(math.exp(-2), rel=1e-10)
    assert result.passed


def test_g_test_by_hand() -> None:
    """G = 2 (60 ln(30/25) + 40 ln(40/50)), p = e^{-G/2} on 2 dof."""
    result = g_test(CenteredBinomial(2), three_point_samples())
    g = 2 * (60 * math.log(1.2) + 40 * math.log(0.8))
    assert result.statistic == pytest.approx(g, rel=1e-12)
    assert result.p_value == pytest.approx(math.exp(-g / 2), rel=1e-10)
    assert result.log10_p == pytest.approx(-g / 2 / math.log(10), rel=1e-10)


def test_samples_outside_the_support_fail() -> None:
    """A value the distribution cannot take fails outright, however few there are."""
    noise = Polya(2.5, 0.7)
    samples = noise.sample(rng(26), 10_000)
    samples[0] = -1
    for result in (chi_square_test(noise, samples), g_test(noise, samples)):
        assert not result.passed
        assert result.outside_support == 1
        assert result.p_value == 0.0
    binomial = np.array([0] * 50 + [1] * 30 + [-1] * 30 + [3])  # support of CenteredBinomial(2) is -1..1
    assert chi_square_test(CenteredBinomial(2), binomial).outside_support == 1


def test_too_few_samples_for_two_bins() -> None:
    with pytest.raises(VerificationError, match="fewer than two bins"):
        chi_square_test(DiscreteLaplace(2.0), np.array([0, 1, -1]))


def test_float_samples_that_are_integers_are_accepted() -> None:
    result = chi_square_test(CenteredBinomial(2), three_point_samples().astype(np.float64))
    assert result.statistic == pytest.approx(4.0)


def test_bad_parameters_name_the_parameter() -> None:
    noise = DiscreteLaplace(2.0)
    good = noise.sample(rng(29), 1000)
    cases: list[tuple[str, type[Exception], object]] = [
        ("noise", ParameterTypeError, lambda: chi_square_test(Gaussian(1.0), good)),  # type: ignore[arg-type]
        ("samples", ParameterError, lambda: chi_square_test(noise, np.array([0.5, 1.0]))),
        ("samples", ParameterError, lambda: g_test(noise, np.array([], dtype=np.int64))),
        ("min_expected", ParameterError, lambda: chi_square_test(noise, good, 0)),
        ("alpha", ParameterError, lambda: chi_square_test(noise, good, alpha=1.5)),
        ("alpha", ParameterError, lambda: moment_test(noise, good, alpha=0.0)),
    ]
    for name, error, call in cases:
        assert callable(call)
        with pytest.raises(error) as info:
            call()
        assert info.value.name == name  # type: ignore[attr-defined]
