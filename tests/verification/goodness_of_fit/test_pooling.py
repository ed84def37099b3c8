"""Tests of :mod:`verification.goodness_of_fit.pooling`: the pooled bins partition the line."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting import DiscreteLaplace
from verification.goodness_of_fit import (
    Bin,
    chi_square_test,
)


@given(st.integers(min_value=500, max_value=5000), st.floats(min_value=1, max_value=20))
@settings(max_examples=15, deadline=None)
def test_pooled_bins_partition_the_line(size: int, min_expected: float) -> None:
    """Bins are contiguous, cover (-inf, inf), hold every sample, and expect >= min_expected each."""
    noise = DiscreteLaplace(3.0)
    samples = noise.sample(np.random.default_rng(size), size)
    result = chi_square_test(noise, samples, min_expected)
    bins = result.bins
    assert bins[0].lo == -math.inf
    assert bins[-1].hi == math.inf
    assert all(b.hi + 1 == c.lo for b, c in itertools.pairwise(bins))
    assert sum(b.observed for b in bins) == size
    assert sum(b.expected for b in bins) == pytest.approx(size, abs=1.1e-6)  # <= 1e-6 counts left out
    assert min(b.expected for b in bins) >= min_expected
    assert result.dof == len(bins) - 1


def test_bin_labels() -> None:
    assert Bin(-math.inf, -3, 1, 1.0).label == "x <= -3"
    assert Bin(4, math.inf, 1, 1.0).label == "x >= 4"
    assert Bin(2, 2, 1, 1.0).label == "x = 2"
    assert Bin(2, 5, 1, 1.0).label == "2..5"
