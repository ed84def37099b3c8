"""Tests of :mod:`verification.federated.adaptivity` (A5): within-batch adaptivity of Algorithm 1.

In Algorithm 1 of Zhou & Chowdhury 2024 (Section 4) a batch can follow its first user, so the
released sum changes by up to ``2B`` where the proof of Theorem 5.1 (Appendix E.1) counts 2; the lazy
Algorithm 8 (Appendix G.3) does not adapt within a batch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting.tree import REPLACE_ONE, Tree, paper_sigma
from learners import linear
from verification.federated import (
    AdaptivityResult,
    ScriptedInstance,
    adaptivity_search,
)


@pytest.fixture(scope="module")
def a5() -> tuple[AdaptivityResult, AdaptivityResult]:
    return adaptivity_search("ldp-fedlinucb", seed=1), adaptivity_search("ldp-fedlinucb-lazy", seed=1)


def test_a5_algorithm_1_exceeds_the_per_user_sensitivity(
    a5: tuple[AdaptivityResult, AdaptivityResult],
) -> None:
    """Near-tied arms make the batch follow its first user; ‖Δγ‖ approaches 2B and √2 B."""
    alg1 = a5[0]
    assert alg1.bias > 0.8 * 2 * 25  # far above the per-user 2
    assert alg1.cov > 0.8 * math.sqrt(2) * 25  # and √2
    assert alg1.bias <= 2 * 25 + 1e-9
    assert alg1.cov <= math.sqrt(2) * 25 + 1e-9
    assert not alg1.within_per_user
    # Theorem 5.1's σ0 at (1, 0.1), κ = 9 (16.96) is vacuous at these Δ.
    assert alg1.sigma0 == pytest.approx(paper_sigma(1.0, 0.1, 9))
    assert alg1.sigma0 == pytest.approx(16.96, abs=0.01)
    assert alg1.delta_at_epsilon > 0.9


def test_a5_the_lazy_variant_stays_within_the_per_user_sensitivity(
    a5: tuple[AdaptivityResult, AdaptivityResult],
) -> None:
    lazy = a5[1]
    assert lazy.bias <= 2 * (1 + 1e-9)
    assert lazy.cov <= math.sqrt(2) * (1 + 1e-9)
    assert lazy.within_per_user
    assert lazy.bias > 1.5  # the search does find the first user's own change
    at_per_user = Tree(lazy.sigma0, 10_000, 25, REPLACE_ONE).delta(1.0).upper
    assert lazy.delta_at_epsilon == pytest.approx(float(at_per_user))
    assert lazy.delta_at_epsilon < 0.1


def test_a5_a_hand_built_flip() -> None:
    """The flip by hand: arms ±e1, rewards 1; the first user's reward 1 or 0."""
    b = 25
    features = np.zeros((b, 1, 2, 2))
    means = np.ones((b, 1, 2))
    features[0, 0, :] = (1.0, 0.0)
    features[1:, 0, 0] = (-1.0, 0.0)  # ties (no information) go to the first arm, -e1
    features[1:, 0, 1] = (1.0, 0.0)
    other = means.copy()
    other[0, 0, :] = 0.0
    got: dict[str, np.ndarray] = {}

    def observe(record: linear.SyncRecord) -> None:
        assert record.psums_bias is not None
        got["bias"] = record.psums_bias[:, 0]

    learner = linear.make_learner("ldp-fedlinucb", 1.0, delta=0.1, batch=b, sigma_mode="paper")
    insts = [ScriptedInstance(features, means), ScriptedInstance(features, other)]
    gen = np.random.default_rng(0)
    linear.run(learner, insts, b, tapes=[gen, gen], rng=gen, checkpoints=1, observer=observe)
    # y1 = 1 tilts θ̂ to +e1, and every later user follows (+e1 each); y1 = 0 leaves a tie: -e1.
    assert got["bias"][0] == pytest.approx([b, 0.0])
    assert got["bias"][1] == pytest.approx([-(b - 1), 0.0])
    assert np.linalg.norm(got["bias"][0] - got["bias"][1]) == pytest.approx(2 * b - 1)
