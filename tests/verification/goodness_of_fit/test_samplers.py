"""Tests of :mod:`verification.goodness_of_fit.samplers`: the Pólya sampler, and its released-code bug.

The released code of Chowdhury & Zhou 2023 (``MABPrivate.py``) draws the Gamma of the Pólya sampler
with scale ``(1-β)/β`` where their footnote 3 has ``β/(1-β)``: for ``n = 64``, ``ε = 0.5``,
``g = 4`` the users' total has variance 0.30 instead of the 127.8 of ``Lap_Z(8)``. It must fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting import DiscreteLaplace, Polya
from verification.errors import ParameterError
from verification.goodness_of_fit import (
    SIZE,
    buggy_polya_sample,
    check_sampler,
    polya_difference_sampler,
    polya_sample,
)

from .streams import rng

BETA = math.exp(-1 / 8)  # the released-code example: n = 64, ε = 0.5, g = 4, so Lap_Z(8)


def test_polya_scale_bug_fails_in_the_users_sum() -> None:
    """With Gamma scale (1-β)/β the total of 64 users has variance 0.30, not 127.8."""
    target = DiscreteLaplace(beta=BETA)
    buggy = polya_difference_sampler(64, BETA, buggy_polya_sample)
    report = check_sampler(target, rng(20), 50_000, buggy)
    assert not report.passed
    assert report.chi_square.p_value < 1e-300
    assert report.chi_square.log10_p < -1000
    assert report.moments.variance == pytest.approx(0.30, abs=0.02)
    assert report.moments.expected_variance == pytest.approx(127.83, abs=0.01)


def test_polya_scale_bug_fails_for_one_draw() -> None:
    """The bug samples Polya(r, 1-β) instead of Polya(r, β)."""
    report = check_sampler(Polya(2.5, 0.7), rng(21), SIZE, buggy_polya_sample(2.5, 0.7))
    assert not report.passed
    assert report.g.p_value < 1e-300
    assert report.moments.mean == pytest.approx(2.5 * 0.3 / 0.7, rel=0.02)  # the mean of Polya(2.5, 0.3)


def test_correct_polya_sampler_passes() -> None:
    report = check_sampler(Polya(2.5, 0.7), rng(22), SIZE, polya_sample(2.5, 0.7))
    assert report.passed, report.summary()


def test_exact_polya_scale_bug_still_caught() -> None:
    # The released code's scale bug, with exact shares elsewhere: the users' sum must fail.
    beta = math.exp(-1 / 8)
    report = check_sampler(
        DiscreteLaplace(beta=beta),
        np.random.default_rng(3),
        50_000,
        polya_difference_sampler(64, beta, share=buggy_polya_sample),
    )
    assert not report.passed


def test_bad_parameters_name_the_parameter() -> None:
    cases: list[tuple[str, type[Exception], object]] = [
        ("beta", ParameterError, lambda: buggy_polya_sample(1.0, 1.0)),
        ("r", ParameterError, lambda: polya_sample(0, 0.5)),
        ("users", ParameterError, lambda: polya_difference_sampler(0, 0.5)),
    ]
    for name, error, call in cases:
        assert callable(call)
        with pytest.raises(error) as info:
            call()
        assert info.value.name == name  # type: ignore[attr-defined]
