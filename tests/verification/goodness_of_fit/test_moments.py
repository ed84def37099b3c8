"""Tests of :mod:`verification.goodness_of_fit.moments`: the z-tests by hand, and the exact mean."""

from __future__ import annotations

import math

import pytest

from accounting import CenteredBinomial, Skellam
from verification.goodness_of_fit import (
    moment_test,
)

from .streams import rng, three_point_samples


def test_moment_test_by_hand() -> None:
    """Mean 0, variance 1/2, μ4 = 1/2 for CenteredBinomial(2); 60 of 100 samples at ±1."""
    result = moment_test(CenteredBinomial(2), three_point_samples())
    assert result.expected_mean == pytest.approx(0.0, abs=1e-15)
    assert result.expected_variance == 0.5
    assert result.fourth_moment == pytest.approx(0.5, rel=1e-12)
    assert result.mean_z == pytest.approx(0.0, abs=1e-12)
    # v = 0.6, SE = sqrt((1/2 - 1/4)/100) = 0.05, z = 2.
    assert result.variance_z == pytest.approx(2.0, rel=1e-9)
    assert result.p_value == pytest.approx(min(1.0, 2 * math.erfc(2 / math.sqrt(2))), rel=1e-9)


def test_moment_test_uses_the_exact_mean() -> None:
    """Asymmetric Skellam: mean offset + μ1 - μ2 (Chowdhury & Zhou 2023, Definition 5), from the PMF table."""
    noise = Skellam.from_rates(3.5, 1.25, 2)
    result = moment_test(noise, noise.sample(rng(25), 20_000))
    assert result.expected_mean == pytest.approx(4.25, rel=1e-10)
    assert result.expected_variance == 4.75
    assert result.passed
