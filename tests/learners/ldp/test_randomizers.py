"""What each user releases (:mod:`learners.ldp.randomizers`): the symmetric matrix noise ``B_t`` of
Zheng et al. (2020), Algorithms 3 and 5, unbiased privatized statistics, randomized response."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learners.ldp import (
    UCB,
    make_learner,
    noise_of,
    privatize_linear,
    privatize_loss,
    rr_outputs,
    symmetric_noise,
)
from learners.ldp_instances import (
    BernoulliArms,
)
from tests.learners.ldp.support import N


def test_symmetric_noise_exact_symmetry_and_variance_everywhere() -> None:
    d, sigma, n = 4, 1.7, 50_000
    B = symmetric_noise(np.random.default_rng(5), (n,), d, sigma)
    assert np.array_equal(B, B.swapaxes(-1, -2))  # exactly symmetric
    var = B.var(axis=0) / sigma**2
    assert np.all(np.abs(var - 1) < 0.03)  # every entry, the diagonal included (sd of the estimate ~0.006)
    iu = np.triu_indices(d)
    upper = B[:, iu[0], iu[1]]
    corr = np.corrcoef(upper.T) - np.eye(upper.shape[1])
    assert np.abs(corr).max() < 0.03  # the upper triangle is independent
    # learners.linear's (N + Nᵀ)/2 would give σ²/2 off the diagonal: not this module's law (Zheng et al. 2020,
    # Algorithms 3 and 5)
    M = np.random.default_rng(6).normal(0, sigma, (n, d, d))
    half = (M + M.swapaxes(-1, -2)) / 2
    assert half[:, 0, 1].var() / sigma**2 == pytest.approx(0.5, abs=0.03)


def test_privatized_statistics_are_unbiased() -> None:
    gen = np.random.default_rng(14)
    n = 50_000
    x = np.tile(np.array([0.6, 0.0, -0.8]), (n, 1))
    y = np.full(n, 0.5)
    matrix, vector = privatize_linear(x, y, 1.0, 2.0, gen)
    assert np.abs(matrix.mean(axis=0) - np.outer(x[0], x[0])).max() < 4 / math.sqrt(n)
    assert np.abs(vector.mean(axis=0) - 0.5 * x[0]).max() < 4 / math.sqrt(n)


def test_rr_flips_with_probability_one_over_one_plus_e_eps_and_is_unbiased() -> None:
    """The reported bit of a loss 1 is 1 with probability p = e^ε/(1 + e^ε), of a loss 0 with q:
    the likelihood ratio of every output is e^ε (ε-LDP, tight); the decoded mean is the loss."""
    eps = 1.0
    arms = BernoulliArms(np.array([0.3, 0.6]))
    noise = noise_of(make_learner("one-point", eps, mechanism="randomized-response", base=UCB(2)), arms, 10)
    assert noise.loss_range == (0.0, 1.0)
    v0, v1 = rr_outputs(0.0, 1.0, eps)
    gen = np.random.default_rng(5)
    p = math.exp(eps) / (1 + math.exp(eps))
    for loss, want in ((1.0, p), (0.0, 1 - p)):
        out = privatize_loss(np.full(N, loss), 1.0, noise, gen)
        assert set(np.unique(out).tolist()) == {v0, v1}
        share = float(np.mean(out == v1))
        assert abs(share - want) < 5 * math.sqrt(want * (1 - want) / N)
        assert abs(float(out.mean()) - loss) < 5 * float(out.std()) / math.sqrt(N)
    fractional = privatize_loss(np.full(N, 0.25), 1.0, noise, gen)  # rounded to a bit first
    assert abs(float(fractional.mean()) - 0.25) < 5 * float(fractional.std()) / math.sqrt(N)
    assert 2 * noise.sigma == pytest.approx(v1 - v0)  # the sub-Gaussian scale: half the range
