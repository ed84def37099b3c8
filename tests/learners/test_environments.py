"""MAB environments: exact means of the clipped laws, vectorized pulls, validation (spec §7.2)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from learners.environments import (
    BernoulliArms,
    BetaArms,
    ClippedGaussianArms,
    gaussian_easy,
    gaussian_hard,
)
from learners.errors import ParameterError, ParameterTypeError


@pytest.mark.parametrize("mu", [0.02, 0.3, 0.5, 0.97])
def test_clipped_gaussian_mean_matches_quadrature(mu: float) -> None:
    sd = 0.1
    inner, _ = integrate.quad(lambda x: x * stats.norm.pdf(x, mu, sd), 0, 1)
    expected = inner + stats.norm.sf(1, mu, sd)
    got = ClippedGaussianArms((mu, 0.5), sd).means[0]
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "instance",
    [ClippedGaussianArms((0.05, 0.5, 0.9)), BernoulliArms((0.1, 0.5, 0.8)), BetaArms((0.2, 0.5, 0.7))],
    ids=["clipped-gaussian", "bernoulli", "beta"],
)
def test_pulls_have_the_stated_means_and_range(instance: ClippedGaussianArms) -> None:
    rng = np.random.default_rng(0)
    arms = np.repeat(np.arange(instance.arms), 4)
    rewards = instance.pull(rng, arms, 50_000)
    assert rewards.shape == (arms.size, 50_000)
    assert rewards.min() >= 0.0
    assert rewards.max() <= 1.0
    per_arm = rewards.reshape(instance.arms, -1).mean(axis=1)
    assert np.allclose(per_arm, instance.means, atol=3e-3)


def test_gaps_best_and_instances_of_the_paper() -> None:
    easy = gaussian_easy(np.random.default_rng(1))
    hard = gaussian_hard(np.random.default_rng(1), arms=5)
    assert easy.arms == 10
    assert hard.arms == 5
    assert all(0.25 <= x <= 0.75 for x in easy.locations)
    assert all(0.45 <= x <= 0.55 for x in hard.locations)
    assert easy.gaps[easy.best] == 0
    assert np.all(easy.gaps >= 0)
    # Clipping keeps the order of the arms (spec §7.2).
    assert np.array_equal(np.argsort(easy.means), np.argsort(easy.locations))


def test_same_stream_same_rewards() -> None:
    inst = gaussian_easy(np.random.default_rng(2))
    a = inst.pull(np.random.default_rng(3), np.array([0, 1]), 10)
    b = inst.pull(np.random.default_rng(3), np.array([0, 1]), 10)
    assert np.array_equal(a, b)


def test_bad_input_is_named() -> None:
    inst = BernoulliArms((0.1, 0.9))
    with pytest.raises(ParameterError, match="locations"):
        BernoulliArms((0.5,))
    with pytest.raises(ParameterError, match="locations"):
        BernoulliArms((0.5, 1.5))
    with pytest.raises(ParameterError, match="locations"):
        BetaArms((0.0, 0.5))
    with pytest.raises(ParameterError, match="sd"):
        ClippedGaussianArms((0.2, 0.4), sd=0)
    with pytest.raises(ParameterError, match="arms"):
        inst.pull(np.random.default_rng(0), np.array([2]), 3)
    with pytest.raises(ParameterError, match="count"):
        inst.pull(np.random.default_rng(0), np.array([0]), -1)
    with pytest.raises(ParameterTypeError, match="rng"):
        inst.pull(0, np.array([0]), 1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="arms"):
        gaussian_easy(np.random.default_rng(0), arms=1)
