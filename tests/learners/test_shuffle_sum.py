"""Shuffle summation protocols (bits with binomial noise): message level = fast path, unbiased."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from accounting.calibration import shuffle_sum_parameters
from learners.errors import ParameterError, ParameterTypeError
from learners.protocols import shuffle_sum


def _same_law(a: np.ndarray, b: np.ndarray) -> float:
    """The p-value of a chi-square test that two samples of a discrete law are equal."""
    values = np.union1d(a, b)
    table = np.array([[np.sum(a == v) for v in values], [np.sum(b == v) for v in values]])
    keep = table.sum(axis=0) >= 10  # pool rare values so the test is valid
    pooled = np.column_stack([table[:, keep], table[:, ~keep].sum(axis=1)]) if (~keep).any() else table
    return float(stats.chi2_contingency(pooled)[1])


def test_messages_and_counts_agree_in_distribution_scalar() -> None:
    params = shuffle_sum_parameters("dpdpe-scalar", 20.0, 0.4, 4)
    rng = np.random.default_rng(0)
    x = np.tile([0.3, -1.0, 1.0, 0.05], (20_000, 1))
    fast = shuffle_sum(x, params, rng)
    slow = shuffle_sum(x, params, rng, messages=True)
    assert _same_law(fast, slow) > 1e-3
    for est in (fast, slow):
        se = math.sqrt(params.variance() / est.size)
        assert abs(est.mean() - x[0].sum()) < 5 * se


def test_messages_and_counts_agree_in_distribution_vector() -> None:
    params = shuffle_sum_parameters("cheu-vector", 15.0, 0.4, 3, 2)
    params = type(params)(**{**params.__dict__, "b": 6})  # fewer bits, the same law either way
    rng = np.random.default_rng(1)
    x = np.tile(np.array([[0.6, -0.8], [0.0, 1.0], [-0.5, 0.5]]), (8_000, 1, 1))
    fast = shuffle_sum(x, params, rng)
    slow = shuffle_sum(x, params, rng, messages=True)
    assert fast.shape == slow.shape == (8_000, 2)
    for j in range(2):
        assert _same_law(fast[:, j], slow[:, j]) > 1e-3
        assert abs(fast[:, j].mean() - x[0, :, j].sum()) < 5 * math.sqrt(params.variance() / 8_000)


def test_estimate_is_unbiased_with_the_stated_variance_at_scale() -> None:
    params = shuffle_sum_parameters("dpdpe-vector", 1.0, 1e-6, 5000, 3, bound=1.0)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 5000, 3))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=2, keepdims=True))
    est = np.concatenate([shuffle_sum(x, params, rng) for _ in range(100)])
    truth = np.tile(x.sum(axis=1), (100, 1))
    err = est - truth
    assert np.all(np.abs(err.mean(axis=0)) < 5 * math.sqrt(params.variance() / err.shape[0]))
    assert np.all(err.var(axis=0) <= params.variance() * 1.3)


def test_the_message_count_is_bounded() -> None:
    params = shuffle_sum_parameters("dpdpe-scalar", 1.0, 1e-6, 1000)
    with pytest.raises(ParameterError, match="messages"):
        shuffle_sum(np.zeros((10, 1000)), params, np.random.default_rng(0), messages=True)


def test_bad_inputs() -> None:
    vec = shuffle_sum_parameters("cheu-vector", 1.0, 1e-6, 3, 2)
    rng = np.random.default_rng(0)
    with pytest.raises(ParameterError, match="shape"):
        shuffle_sum(np.zeros((2, 4, 2)), vec, rng)
    with pytest.raises(ParameterError, match="norm"):
        shuffle_sum(np.full((1, 3, 2), 0.9), vec, rng)
    with pytest.raises(ParameterError, match=r"\[-1, 1\]"):
        shuffle_sum(np.full((1, 3, 2), 1.5), vec, rng)
    with pytest.raises(ParameterTypeError, match="params"):
        shuffle_sum(np.zeros((1, 3)), "dpdpe", rng)  # type: ignore[arg-type]
