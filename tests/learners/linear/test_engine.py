"""The vectorized run (:mod:`learners.linear.engine`): learning, reproducibility, repetitions, and the
round's scores by packed quadratic features."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from learners.linear import (
    RunResult,
    make_learner,
    run,
)
from learners.linear.engine import _quadratic_features, _scores
from learners.linear_instances import SyntheticInstance, draw_synthetic
from tests.learners.linear.support import AGENTS, ARMS, BATCH, DELTA, DIM, EPS, go, tapes

# ------------------------------------------------------------------------------------------
# Learning
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def learning(inst: SyntheticInstance) -> dict[str, RunResult]:
    T = 1600
    out = {}
    for name, kw in [("fedlinucb", {}), ("ldp-fedlinucb-lazy", {"epsilon": 0.05, "delta": 0.1})]:
        out[name] = run(
            make_learner(name, batch=10, **kw),
            inst,
            T,
            tapes=tapes(3),
            rng=np.random.default_rng(1),
            checkpoints=16,
        )
    return out


@pytest.mark.slow
def test_nonprivate_regret_is_sublinear_and_beats_private(learning: dict[str, RunResult]) -> None:
    plain = learning["fedlinucb"]
    regret = plain.pseudo_regret.mean(axis=0)
    first = regret[3] / plain.rounds[3]  # average over the first quarter
    last = (regret[-1] - regret[11]) / (plain.rounds[-1] - plain.rounds[11])  # over the last quarter
    assert last < first / 2  # measured: 0.035 against 0.097
    private = learning["ldp-fedlinucb-lazy"]
    assert private.pseudo_regret.mean(axis=0)[-1] > 2 * regret[-1]
    assert np.all(np.diff(plain.pseudo_regret, axis=1) >= 0)


@pytest.mark.slow
def test_lazy_decisions_ignore_current_batch_data(inst: SyntheticInstance) -> None:
    """Algorithm 8 decides from synced statistics only: before the first sync, no reward observed in
    the batch can move a decision, so two reward tapes give the same arms (same pseudo-regret at
    every round); Algorithm 1 learns from them within the batch and does not."""
    T = 12
    for name, same in [("fedlinucb-lazy", True), ("fedlinucb", False)]:
        learner = make_learner(name, batch=T)
        a = go(learner, inst, horizon=T, reps=1, tapes=tapes(1, 100))
        b = go(learner, inst, horizon=T, reps=1, tapes=tapes(1, 200))
        assert np.array_equal(a.pseudo_regret, b.pseudo_regret) is same
    # private: within every batch the lazy decisions are a function of the synced state only, so
    # runs that share the privacy noise and see different rewards agree until the first sync
    lazy = make_learner("ldp-fedlinucb-lazy", EPS, delta=DELTA, batch=BATCH)
    a = go(lazy, inst, horizon=2 * BATCH, reps=1, tapes=tapes(1, 100))
    b = go(lazy, inst, horizon=2 * BATCH, reps=1, tapes=tapes(1, 200))
    np.testing.assert_array_equal(a.pseudo_regret[:, :BATCH], b.pseudo_regret[:, :BATCH])


def test_seeded_runs_reproduce(inst: SyntheticInstance) -> None:
    learner = make_learner("ldp-fedlinucb", EPS, delta=DELTA, batch=BATCH)
    a = go(learner, inst, horizon=60, reps=2)
    b = go(learner, inst, horizon=60, reps=2)
    np.testing.assert_array_equal(a.realized_regret, b.realized_regret)
    np.testing.assert_array_equal(a.pseudo_regret, b.pseudo_regret)
    c = go(learner, inst, horizon=60, reps=2, rng=np.random.default_rng(12))
    assert not np.array_equal(a.realized_regret, c.realized_regret)


@dataclass(frozen=True)
class Untied:
    """A synthetic instance whose arms have distinct norms (``0.6..1``, per arm index).

    On unit-norm arms, LinUCB's first round ties every arm exactly (``θ = 0``, ``P = I/λ``) and
    the winner is decided by rounding, which BLAS may do differently for a batch of ``R``
    repetitions than for one (blocking). The law of a run does not depend on it, but comparing
    trajectories does: without exact ties, repetition ``r`` of a batch and its run alone agree to
    rounding.
    """

    base: SyntheticInstance

    dim = property(lambda self: self.base.dim)
    arms = property(lambda self: self.base.arms)
    agents = property(lambda self: self.base.agents)
    noise_sd = property(lambda self: self.base.noise_sd)
    reward_scale = property(lambda self: self.base.reward_scale)

    def block(self, chunk: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        feats, means = self.base.block(chunk)
        return feats * np.linspace(0.6, 1.0, feats.shape[-2])[:, None], means


@pytest.mark.parametrize("name", ["fedlinucb", "ldp-fedlinucb", "dubey-pentland"])
def test_repetitions_equal_separate_runs(inst: SyntheticInstance, name: str) -> None:
    """Vectorization: repetition r of an R-run is the run of tape r alone (privacy noise: the r-th
    key drawn from rng, so repetition 0 of any R-run is the 1-run with the same rng seed), up to
    rounding (:class:`Untied`)."""
    untied = Untied(inst)
    kw: dict[str, Any] = {"epsilon": EPS, "delta": DELTA} if name != "fedlinucb" else {}
    learner = make_learner(
        name, **kw, **({"threshold": 5.0} if name == "dubey-pentland" else {"batch": BATCH})
    )
    together = go(learner, untied, horizon=60, reps=3, tapes=tapes(3, 40), rng=np.random.default_rng(3))
    reps = range(3) if name == "fedlinucb" else range(1)
    for r in reps:
        alone = go(
            learner,
            untied,
            horizon=60,
            reps=1,
            tapes=[np.random.default_rng(40 + r)],
            rng=np.random.default_rng(3),
        )
        np.testing.assert_allclose(
            together.realized_regret[r], alone.realized_regret[0], rtol=1e-9, atol=1e-9
        )
        np.testing.assert_allclose(together.pseudo_regret[r], alone.pseudo_regret[0], rtol=1e-9, atol=1e-9)
        assert together.syncs[r] == alone.syncs[0]


def test_per_repetition_instances(inst: SyntheticInstance) -> None:
    other = Untied(draw_synthetic(np.random.default_rng(9), dim=DIM, arms=ARMS, agents=AGENTS))
    learner = make_learner("fedlinucb", batch=BATCH)
    both = go(learner, [Untied(inst), other], horizon=48, reps=2, tapes=tapes(2, 7))
    one = go(learner, other, horizon=48, reps=1, tapes=[np.random.default_rng(8)])
    np.testing.assert_allclose(both.realized_regret[1], one.realized_regret[0], rtol=1e-9, atol=1e-9)


def test_indefinite_v_is_clipped_and_counted(inst: SyntheticInstance) -> None:
    """A λ far below the noise makes λI + W̃_syn indefinite; eigenvalues are clipped, counted."""
    learner = make_learner("ldp-fedlinucb", EPS, delta=DELTA, batch=BATCH, regularizer=1e-3)
    res = go(learner, inst, horizon=60)
    assert res.clipped.min() > 0
    assert np.isfinite(res.realized_regret).all()
    assert np.isfinite(res.pseudo_regret).all()


# ------------------------------------------------------------------------------------------
# The round's scores: packed quadratic features against the direct products
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("silos_share_p", [True, False])
def test_scores_equal_direct_products(shared: bool, silos_share_p: bool) -> None:
    """``⟨x, θ⟩`` and ``xᵀPx`` by the packed features ``triu(x xᵀ)`` equal the textbook products
    (``numpy.einsum`` on the full ``P``) up to rounding, and repetition ``r`` of an ``R``-batch
    agrees with the batch of repetition ``r`` alone to rounding (BLAS blocks a batch of rows by
    size, so the last bit may differ)."""
    rng = np.random.default_rng(4)
    R, M, K, d = 5, 3, 17, 6
    A = 1 if silos_share_p else M
    X = rng.standard_normal((1 if shared else R, M, d, K))
    XX = _quadratic_features(X, np.empty((*X.shape[:-2], d * (d + 1) // 2, K)))
    G = rng.standard_normal((R, A, d, d))
    P = G @ G.swapaxes(-1, -2)  # symmetric positive semi-definite
    theta = rng.standard_normal((R, A, d))
    iu = np.triu_indices(d)
    coef = P[..., iu[0], iu[1]] * np.where(iu[0] == iu[1], 1.0, 2.0)
    est, quad = _scores(X, XX, theta.swapaxes(0, 1), coef.swapaxes(0, 1))
    Xr = np.broadcast_to(X, (R, M, d, K))
    np.testing.assert_allclose(
        est, np.einsum("rmdk,rmd->mrk", Xr, np.broadcast_to(theta, (R, M, d))), rtol=1e-12
    )
    direct = np.einsum("rmdk,rmde,rmek->mrk", Xr, np.broadcast_to(P, (R, M, d, d)), Xr)
    np.testing.assert_allclose(quad, direct, rtol=1e-11, atol=1e-12)
    for r in range(R):
        s = slice(r, r + 1)
        one_est, one_quad = _scores(
            X if shared else X[s], XX if shared else XX[s], theta[s].swapaxes(0, 1), coef[s].swapaxes(0, 1)
        )
        np.testing.assert_allclose(one_est[:, 0], est[:, r], rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(one_quad[:, 0], quad[:, r], rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("name", ["fedlinucb", "ldp-fedlinucb", "sdp-fedlinucb-vec"])
def test_low_rank_silo_inverses_equal_the_per_silo_updates(
    inst: SyntheticInstance, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Algorithm 1's V^{-1} as the synced P0 minus each silo's rank-one terms (the large-d path)
    plays exactly what the per-silo Sherman-Morrison matrices play, up to rounding."""
    import learners.linear.state as state_module

    kw: dict[str, Any] = {"epsilon": EPS, "delta": DELTA} if name != "fedlinucb" else {}
    if name == "sdp-fedlinucb-vec":
        kw["sigma_mode"] = "code"
    learner = make_learner(name, batch=BATCH, **kw)
    untied = Untied(inst)
    rule = state_module._low_rank
    monkeypatch.setattr(state_module, "_low_rank", lambda d, learner: False)
    per_silo = go(learner, untied, horizon=60, reps=3)
    monkeypatch.setattr(state_module, "_low_rank", lambda d, learner: True)
    low_rank = go(learner, untied, horizon=60, reps=3)
    np.testing.assert_allclose(low_rank.pseudo_regret, per_silo.pseudo_regret, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(low_rank.realized_regret, per_silo.realized_regret, rtol=1e-9, atol=1e-9)
    # the rule: the terms are cheaper when a batch's B - 1 terms of d entries undercut d(d+1)/2
    assert not rule(10, make_learner("fedlinucb", batch=25))
    assert rule(57, make_learner("fedlinucb", batch=25))
