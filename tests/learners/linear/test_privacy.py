"""What a run guarantees (:mod:`learners.linear.privacy`): the ledger written at release, and which
variants of Zhou & Chowdhury (2024) it certifies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting.tree import REPLACE_ONE, Tree
from learners.linear import (
    ALGORITHMS,
    RunResult,
    SyncRecord,
    make_learner,
)
from learners.linear_instances import SyntheticInstance
from tests.learners.linear.support import BATCH, DELTA, DIM, EPS, HORIZON, go


def test_ledger_written_at_release_is_the_tree(recorded: tuple[RunResult, list[SyncRecord]]) -> None:
    result, _ = recorded
    ledgers = result.ledgers
    kappa = result.noise.kappa
    assert sorted(ledgers) == list(range(1, kappa + 1))
    worst = ledgers[kappa]
    tree = Tree(result.noise.sigma0, HORIZON, BATCH, REPLACE_ONE).accountant()
    assert float(worst.epsilon(DELTA)) == pytest.approx(float(tree.epsilon(DELTA)), rel=1e-12)
    p = result.privacy
    assert p.certified
    assert p.meets_claim
    assert p.model == "silo-ldp"
    assert p.epsilon <= EPS
    assert p.claimed_epsilon == EPS
    assert p.claimed_delta == DELTA
    assert p.epsilon == max(e for _, e in p.nodes)
    # communication: one upload per sync, the bias vector and the upper triangle
    np.testing.assert_array_equal(result.syncs, HORIZON // BATCH)
    np.testing.assert_array_equal(result.reals, (HORIZON // BATCH) * (DIM + DIM * (DIM + 1) // 2))
    np.testing.assert_array_equal(result.bits, 64 * result.reals)


@pytest.mark.slow
def test_algorithm1_is_certified_only_with_batch_sensitivity(inst: SyntheticInstance) -> None:
    """Algorithm 1's within-batch adaptivity breaks the per-user sensitivity (Zhou & Chowdhury 2024's
    privacy proof does not cover it): nothing is certified unless the sensitivity is the batch's."""
    res = go(make_learner("ldp-fedlinucb", EPS, delta=DELTA, batch=BATCH), inst, horizon=40)
    p = res.privacy
    assert not p.certified
    assert math.isinf(p.epsilon)
    assert "one user can change up to B terms" in p.message
    assert p.content_epsilon <= EPS
    batch = make_learner("ldp-fedlinucb", EPS, delta=DELTA, batch=BATCH, sensitivity="batch")
    rb = go(batch, inst, horizon=40)
    assert rb.privacy.certified
    assert rb.privacy.meets_claim
    assert rb.noise.sigma0 > 4 * res.noise.sigma0  # sensitivities 2cB and √2 B instead of 2c and √2


def test_code_sigma_is_labelled(inst: SyntheticInstance) -> None:
    learner = make_learner("ldp-fedlinucb-lazy", 5.0, delta=0.001, batch=BATCH, sigma_mode="code")
    p = go(learner, inst, horizon=40).privacy
    assert p.certified
    assert not p.meets_claim
    assert p.epsilon > 5.0
    assert "code" in p.message


def test_dubey_pentland_is_flagged_not_private(inst: SyntheticInstance) -> None:
    learner = make_learner("dubey-pentland", EPS, delta=DELTA, threshold=5.0)
    res = go(learner, inst, horizon=200)
    p = res.privacy
    assert not p.certified
    assert not p.meets_claim
    assert math.isinf(p.epsilon)
    assert "NOT PRIVATE" in p.message
    assert p.model == "none"
    assert np.isfinite(p.content_epsilon)
    assert "not private" in ALGORITHMS["dubey-pentland"].label
    assert res.syncs.min() >= 1
    assert np.isfinite(res.realized_regret).all()
