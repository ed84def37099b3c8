"""Tests of :mod:`learners.protocols.randomizer`: randomized rounding and the randomizer ``R``.

Chowdhury & Zhou (2023, §3): ``xhat = floor(x g) + Bernoulli(x g - floor(x g))`` is ``floor(x g)``
or the next integer, unbiased, and ``y = (xhat + η) mod m`` lands in ``[0, m-1]`` (mathematical
modulo).
Expected values are computed here independently (Python integers, closed forms), never by the
code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from learners.errors import ParameterError
from learners.protocols import encode, randomize
from tests.learners.protocols.helpers import FAST, constant_sampler, rng


@FAST
@given(x=st.floats(0, 1), g=st.integers(1, 10**6))
def test_rounding_is_floor_or_next(x: float, g: int) -> None:
    out = encode(np.full(50, x), g, rng(14))
    low = math.floor(x * g)
    assert set(out.tolist()) <= {low, low + 1}
    if x * g == low:
        assert np.all(out == low)


def test_rounding_endpoints() -> None:
    assert encode([0.0, 1.0], 7, rng(0)).tolist() == [0, 7]


@pytest.mark.parametrize(("x", "g"), [(0.3, 1), (0.123456, 7), (0.5, 3), (0.999, 1000), (1 / 3, 10)])
def test_rounding_is_unbiased(x: float, g: int) -> None:
    draws = 400_000
    out = encode(np.full(draws, x), g, rng(15))
    frac = x * g - math.floor(x * g)
    se = math.sqrt(frac * (1 - frac) / draws)
    assert abs(out.mean() - x * g) <= 5 * se


@pytest.mark.parametrize("bad", [-0.1, 1.0000001, math.nan, math.inf])
def test_rounding_refuses_values_outside_unit_interval(bad: float) -> None:
    with pytest.raises(ParameterError, match=r"x=.*values in \[0, 1\]"):
        encode([0.5, bad], 4, rng(0))


def test_randomize_reduces_into_ring() -> None:
    m = 11
    y = randomize(np.zeros((4, 100)), 3, m, rng(0), share_sampler=constant_sampler(-3))
    assert np.all(y == m - 3)
    big = randomize(np.ones((2, 3)), 3, 2**64, rng(0), share_sampler=constant_sampler(-5))
    assert big.dtype == object
    assert big.tolist() == [[2**64 - 2] * 3] * 2
    assert np.all(randomize(np.full((2, 3), 0.5), 4, 5, rng(0)) == 2)  # no noise: central model
