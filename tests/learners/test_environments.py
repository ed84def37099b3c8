"""MAB environments: exact means of the clipped laws, vectorized pulls, validation (the synthetic
instances of Chowdhury & Zhou 2023, §7)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from learners.environments import (
    BernoulliArms,
    BetaArms,
    ClippedGaussianArms,
    RewardTable,
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
    # Clipping keeps the order of the arms (clipping is monotone in the location).
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


# -- the reward table: independent rewards per arm and round, read on demand ---------------------


def test_reward_table_columns_have_the_arm_laws_and_are_independent() -> None:
    """One reward per arm per round, independent across arms (the released code of Chowdhury & Zhou
    2023, §7, draws a reward vector per round). Each column has its arm's law (KS test against the
    exact clipped normal CDF); two columns at the same rounds are uncorrelated (|r| within 5/sqrt(n))."""
    inst = ClippedGaussianArms((0.3, 0.6))
    table = RewardTable.draw(inst, np.random.default_rng(0))
    n = 50_000
    a, b = table.rewards(0, 0, n), table.rewards(1, 0, n)
    for mu, col in ((0.3, a), (0.6, b)):
        inner = (col > 0) & (col < 1)  # the atoms of clipping sit at 0 and 1 (none here at sd 0.1)
        assert stats.kstest(col[inner], stats.norm(mu, 0.1).cdf).pvalue > 1e-4
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 / np.sqrt(n)
    assert abs(np.corrcoef(a[1:], a[:-1])[0, 1]) < 5 / np.sqrt(n)  # independent across rounds


def test_reward_table_is_random_access_and_keyed() -> None:
    """Any block of a column, read in any pieces, is the same numbers (a run reads only what it
    pulls); the same key gives the same table, another key another."""
    inst = BernoulliArms((0.2, 0.5, 0.9))
    table = RewardTable.draw(inst, np.random.default_rng(5))
    whole = table.uniforms(2, 0, 1001)
    pieces = np.concatenate([table.uniforms(2, 0, 3), table.uniforms(2, 3, 10), table.uniforms(2, 10, 1001)])
    assert np.array_equal(whole, pieces)
    assert np.array_equal(table.uniforms(2, 997, 1001), whole[997:])
    again = RewardTable.draw(inst, np.random.default_rng(5))
    assert np.array_equal(again.rewards(1, 0, 100), table.rewards(1, 0, 100))
    other = RewardTable.draw(inst, np.random.default_rng(6))
    assert not np.array_equal(other.uniforms(1, 0, 100), table.uniforms(1, 0, 100))
    assert not np.array_equal(table.uniforms(0, 0, 100), table.uniforms(1, 0, 100))
    assert table.uniforms(0, 7, 7).shape == (0,)


def test_reward_table_bad_input_is_named() -> None:
    table = RewardTable(BernoulliArms((0.1, 0.9)), (1, 2))
    with pytest.raises(ParameterError, match="arm"):
        table.rewards(2, 0, 1)
    with pytest.raises(ParameterError, match="stop"):
        table.rewards(0, 5, 4)
    with pytest.raises(ParameterError, match="start"):
        table.rewards(0, -1, 4)
    with pytest.raises(ParameterError, match="key"):
        RewardTable(BernoulliArms((0.1, 0.9)), (1, 2**64))
    with pytest.raises(ParameterTypeError, match="instance"):
        RewardTable("arms", (1, 2))  # type: ignore[arg-type]
