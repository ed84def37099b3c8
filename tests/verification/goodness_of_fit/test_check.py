"""Tests of :mod:`verification.goodness_of_fit.check`: the check has power, and reads well.

A discrete Gaussian sampled with ``σ√2`` fails, as do samplers whose variance is 3% off.
"""

from __future__ import annotations

import math

import pytest

from accounting import DiscreteGaussian, DiscreteLaplace, Skellam
from verification.errors import ParameterError, ParameterTypeError
from verification.goodness_of_fit import (
    SIZE,
    check_sampler,
)

from .streams import rng


@pytest.mark.parametrize("sigma", [0.4, 150.0])
def test_discrete_gaussian_off_by_sqrt2_fails(sigma: float) -> None:
    """A discrete Gaussian sampled with σ√2 (a variance/σ² mix-up) fails at the catalogue's size."""
    wrong = DiscreteGaussian(sigma * math.sqrt(2))
    report = check_sampler(DiscreteGaussian(sigma), rng(23), SIZE, wrong.sample)
    assert not report.passed
    assert report.moments.variance_z > 10


@pytest.mark.parametrize(
    ("claimed", "actual"),
    [
        (Skellam(50.0), Skellam(51.5)),
        (DiscreteLaplace(8.0), DiscreteLaplace(8.0 * math.sqrt(1.03))),
        (DiscreteGaussian(150.0), DiscreteGaussian(150.0 * math.sqrt(1.03))),
    ],
    ids=["skellam", "discrete-laplace", "discrete-gaussian"],
)
def test_three_percent_wrong_variance_fails(claimed: object, actual: object) -> None:
    """SIZE is chosen so that a 3% error in the variance is caught (see SIZE's comment)."""
    assert isinstance(actual, DiscreteGaussian | DiscreteLaplace | Skellam)
    report = check_sampler(claimed, rng(24), SIZE, actual.sample)  # type: ignore[arg-type]
    assert not report.passed
    assert abs(report.moments.variance_z) > 4


def test_summaries_are_readable() -> None:
    report = check_sampler(DiscreteLaplace(8.0), rng(27), 20_000, name="dlap")
    text = report.summary()
    assert text.startswith("dlap: pass")
    assert "chi-square test" in text
    assert "G test" in text
    assert "moment test" in text
    assert "samples/s" in text


def test_bad_parameters_name_the_parameter() -> None:
    noise = DiscreteLaplace(2.0)
    cases: list[tuple[str, type[Exception], object]] = [
        ("size", ParameterError, lambda: check_sampler(noise, rng(0), 1)),
        ("rng", ParameterTypeError, lambda: check_sampler(noise, 42, 100)),  # type: ignore[arg-type]
        ("sampler", ParameterTypeError, lambda: check_sampler(noise, rng(0), 100, 3)),  # type: ignore[arg-type]
    ]
    for name, error, call in cases:
        assert callable(call)
        with pytest.raises(error) as info:
            call()
        assert info.value.name == name  # type: ignore[attr-defined]
