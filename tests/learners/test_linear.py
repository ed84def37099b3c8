"""Tests of learners.linear: Private-Fed LinUCB and baselines (spec federated-lcb.md §3–§8, §10, §11.1)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from accounting.tree import REPLACE_ONE, Tree, levels
from learners.errors import ParameterError, ParameterTypeError, ProtocolError
from learners.linear import (
    ALGORITHMS,
    Learner,
    RunResult,
    SyncRecord,
    make_learner,
    noise_of,
    run,
)
from learners.linear.engine import _quadratic_features, _scores
from learners.linear_instances import CHUNK, LinearInstance, NoiseTape, SyntheticInstance, draw_synthetic

# one small instance and one privacy setting for the whole module (calibrations are memoized)
DIM, ARMS, AGENTS = 4, 10, 4
BATCH, HORIZON = 5, 320  # K = 64 syncs, κ = 7
EPS, DELTA = 1.0, 0.1


@pytest.fixture(scope="module")
def inst() -> SyntheticInstance:
    return draw_synthetic(np.random.default_rng(2), dim=DIM, arms=ARMS, agents=AGENTS)


def tapes(n: int, base: int = 0) -> list[np.random.Generator]:
    return [np.random.default_rng(base + s) for s in range(n)]


def go(
    learner: Learner,
    inst: LinearInstance | Sequence[LinearInstance],
    horizon: int = HORIZON,
    reps: int = 2,
    **kw: Any,
) -> RunResult:
    kw.setdefault("rng", np.random.default_rng(11))
    kw.setdefault("checkpoints", horizon)
    return run(learner, inst, horizon, tapes=kw.pop("tapes", tapes(reps)), **kw)


# ------------------------------------------------------------------------------------------
# The synthetic instance (§8.2)
# ------------------------------------------------------------------------------------------


def test_synthetic_instance_matches_spec_8_2(inst: SyntheticInstance) -> None:
    theta = inst.theta_array
    assert theta[-1] == 0.5
    assert math.isclose(float(np.linalg.norm(theta)), 1 / math.sqrt(2), rel_tol=1e-12)
    feats, means = inst.block(3)
    assert feats.shape == (CHUNK, AGENTS, ARMS, DIM)
    assert means.shape == (CHUNK, AGENTS, ARMS)
    np.testing.assert_allclose(np.linalg.norm(feats, axis=-1), 1.0, rtol=1e-12)
    basis = np.eye(DIM)
    basis[:, -1] = 1.0
    np.testing.assert_allclose(
        feats[:, :, :DIM] * np.linalg.norm(basis, axis=1)[:, None],
        np.broadcast_to(basis, feats[:, :, :DIM].shape),
    )
    # sphere arms: raw x = [u, 1] = √2 · (normalized); the mean is on the raw features
    raw = feats[:, :, DIM:] * math.sqrt(2)
    np.testing.assert_allclose(raw[..., -1], 1.0)
    np.testing.assert_allclose(means[:, :, DIM:], raw @ theta, atol=1e-12)
    np.testing.assert_allclose(means[:, :, :DIM], np.broadcast_to(basis @ theta, means[:, :, :DIM].shape))
    # lazily generated from keyed streams: the same block twice, different blocks differ
    again, _ = inst.block(3)
    np.testing.assert_array_equal(feats, again)
    assert not np.array_equal(feats, inst.block(4)[0])
    a = NoiseTape.draw(np.random.default_rng(5)).block(2, AGENTS)
    np.testing.assert_array_equal(a, NoiseTape.draw(np.random.default_rng(5)).block(2, AGENTS))


def test_instance_rejects_bad_values() -> None:
    with pytest.raises(ParameterError, match="arms"):
        draw_synthetic(np.random.default_rng(0), dim=5, arms=3, agents=2)
    with pytest.raises(ParameterError, match="dim"):
        draw_synthetic(np.random.default_rng(0), dim=1)
    with pytest.raises(ParameterTypeError, match="rng"):
        draw_synthetic(3)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="theta"):
        SyntheticInstance(3, 5, 2, (1.0, 2.0), 0.5, (1, 2))
    with pytest.raises(ParameterError, match="key"):
        SyntheticInstance(2, 5, 2, (1.0, 2.0), 0.5, (1, -2))


# ------------------------------------------------------------------------------------------
# Protocol P (Algorithm 2): noise, symmetry, tree bookkeeping
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(inst: SyntheticInstance) -> tuple[RunResult, list[SyncRecord]]:
    records: list[SyncRecord] = []
    learner = make_learner("ldp-fedlinucb-lazy", EPS, delta=DELTA, batch=BATCH)
    result = go(learner, inst, reps=4, observer=records.append)
    return result, records


@pytest.mark.slow
def test_every_node_carries_sigma0_noise(recorded: tuple[RunResult, list[SyncRecord]]) -> None:
    """Released p-sum minus raw p-sum, per silo: N(0, σ0²) per bias coordinate (spec §4.1, A2).

    The test statistic is the sample variance over 64 syncs × 4 repetitions × 4 silos × 4
    coordinates (4096 draws): its relative standard error is √(2/4096) ≈ 0.022, the tolerance 0.1.
    """
    result, records = recorded
    sigma = result.noise.sigma0
    assert sigma > 0
    z = np.concatenate([r.messages_bias - r.psums_bias for r in records])  # type: ignore[operator]
    assert z.size == 64 * 4 * AGENTS * DIM
    assert abs(z.var() / sigma**2 - 1) < 0.1
    assert abs(z.mean()) / sigma < 4 / math.sqrt(z.size)
    # the server's node is the sum of M silos' messages: variance M σ0² (not σ0², D&P's mistake §7.3)
    node = z.sum(axis=1)
    assert abs(node.var() / (AGENTS * sigma**2) - 1) < 0.2


def test_matrix_noise_is_symmetric_with_halved_off_diagonal(
    recorded: tuple[RunResult, list[SyncRecord]],
) -> None:
    """(N + Nᵀ)/2: exactly symmetric, diagonal variance σ0², off-diagonal σ0²/2 (spec §4.3, §10.6)."""
    result, records = recorded
    sigma = result.noise.sigma0
    z = np.concatenate([r.messages_cov - r.psums_cov for r in records])  # type: ignore[operator]
    np.testing.assert_array_equal(
        np.concatenate([r.messages_cov for r in records]),  # type: ignore[misc]
        np.concatenate([r.messages_cov for r in records]).swapaxes(-1, -2),  # type: ignore[misc]
    )
    diag = np.diagonal(z, axis1=-2, axis2=-1)
    iu = np.triu_indices(DIM, 1)
    off = z[..., iu[0], iu[1]]
    assert abs(diag.var() / sigma**2 - 1) < 0.1  # 4096 draws
    assert abs(off.var() / (sigma**2 / 2) - 1) < 0.1  # 6144 draws


def test_prefix_noise_is_popcount_nodes_of_all_silos(recorded: tuple[RunResult, list[SyncRecord]]) -> None:
    """Ũ_syn - exact prefix: variance M · popcount(k) · σ0² per coordinate (≤ Mκσ0², spec §4.2)."""
    result, records = recorded
    sigma = result.noise.sigma0
    scaled = np.concatenate(
        [(r.prefix_bias - r.exact_bias) / np.sqrt(AGENTS * r.nodes[:, None]) / sigma for r in records]
    )
    assert abs(scaled.var() - 1) < 0.2  # 1024 correlated draws (shared nodes)
    full = [r for r in records if int(r.step[0]) == 63]  # popcount 6 ... the widest prefix here
    assert full
    assert int(full[0].nodes[0]) == 6 <= result.noise.kappa


def test_tree_prefix_without_noise_is_the_exact_prefix(recorded: tuple[RunResult, list[SyncRecord]]) -> None:
    """The raw registers' prefix Σ_{j: bit j of k} Σ_i α_j equals Σ over all silos and rounds <= kB (§4.1)."""
    _, records = recorded
    for r in records:
        assert r.raw_prefix_bias is not None
        assert r.raw_prefix_cov is not None
        np.testing.assert_allclose(r.raw_prefix_bias, r.exact_bias, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(r.raw_prefix_cov, r.exact_cov, rtol=1e-10, atol=1e-9)
        # the released prefix replaces (not increments) the synced statistics (§10.9)
        assert np.all(r.level == np.log2(r.step & -r.step))
    k6 = next(r for r in records if int(r.step[0]) == 6)
    assert int(k6.level[0]) == 1
    assert int(k6.nodes[0]) == 2


# ------------------------------------------------------------------------------------------
# Noise level and the ledger
# ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_sigma_modes(inst: SyntheticInstance) -> None:
    """exact <= paper (Thm 5.1's closed form is loose, §10.3); the code's σ0 misses ε = 5 (A4)."""
    for eps, dl in [(EPS, DELTA), (0.2, 0.1)]:
        exact = noise_of(make_learner("ldp-fedlinucb-lazy", eps, delta=dl, batch=BATCH), HORIZON)
        paper = noise_of(
            make_learner("ldp-fedlinucb-lazy", eps, delta=dl, batch=BATCH, sigma_mode="paper"), HORIZON
        )
        assert exact.kappa == paper.kappa == levels(HORIZON // BATCH) == 7
        assert 0 < exact.sigma0 <= paper.sigma0
        # the exact σ0 meets the target exactly under replace-one sensitivities
        tree = Tree(exact.sigma0, HORIZON, BATCH, REPLACE_ONE)
        assert float(tree.epsilon(dl)) <= eps
    code = make_learner("ldp-fedlinucb-lazy", 5.0, delta=0.1, batch=25, sigma_mode="code")
    noise = noise_of(code, 10**4)
    assert float(Tree(noise.sigma0, 10**4, 25, "paper").delta(5.0)) > 0.1  # spec A4: δ(5) ≈ 0.178


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
    """§10.7: a λ far below the noise makes λI + W̃_syn indefinite; eigenvalues are clipped, counted."""
    learner = make_learner("ldp-fedlinucb", EPS, delta=DELTA, batch=BATCH, regularizer=1e-3)
    res = go(learner, inst, horizon=60)
    assert res.clipped.min() > 0
    assert np.isfinite(res.realized_regret).all()
    assert np.isfinite(res.pseudo_regret).all()


# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"name": "nope"}, ParameterError, "algorithm"),
        ({"name": "ldp-fedlinucb", "delta": 0.1}, ParameterError, "epsilon"),
        ({"name": "ldp-fedlinucb", "epsilon": 1.0}, ParameterError, "delta"),
        ({"name": "ldp-fedlinucb", "epsilon": -1.0, "delta": 0.1}, ParameterError, "epsilon"),
        ({"name": "ldp-fedlinucb", "epsilon": 1.0, "delta": 1.0}, ParameterError, "delta"),
        ({"name": "ldp-fedlinucb", "epsilon": "1", "delta": 0.1}, ParameterTypeError, "epsilon"),
        ({"name": "fedlinucb", "epsilon": 1.0}, ParameterError, "epsilon"),
        ({"name": "fedlinucb", "batch": 0}, ParameterError, "batch"),
        ({"name": "fedlinucb", "batch": 2.5}, ParameterError, "batch"),
        ({"name": "fedlinucb", "sigma_mode": "loose"}, ParameterError, "sigma_mode"),
        ({"name": "fedlinucb", "sensitivity": "none"}, ParameterError, "sensitivity"),
        ({"name": "fedlinucb", "radius": "big"}, ParameterError, "radius"),
        ({"name": "fedlinucb", "crs": 0.0}, ParameterError, "crs"),
        ({"name": "fedlinucb", "alpha": 1.5}, ParameterError, "alpha"),
        ({"name": "fedlinucb", "regularizer": -1.0}, ParameterError, "regularizer"),
        ({"name": "fedlinucb", "eig_floor": 0.0}, ParameterError, "eig_floor"),
        ({"name": "fedlinucb", "threshold": 3.0}, ParameterError, "threshold"),
        ({"name": "fedlinucb", "clip": float("nan")}, ParameterError, "clip"),
        ({"name": "dubey-pentland", "epsilon": 1.0, "delta": 0.1, "batch": 5}, ParameterError, "batch"),
        (
            {"name": "dubey-pentland", "epsilon": 1.0, "delta": 0.1, "sensitivity": "batch"},
            ParameterError,
            "sensitivity",
        ),
        ({"name": "fedlinucb", "speed": 3}, ParameterError, "speed"),
    ],
)
def test_bad_learner_parameters(kwargs: dict[str, Any], error: type[Exception], name: str) -> None:
    kw = dict(kwargs)
    with pytest.raises(error, match=name):
        make_learner(kw.pop("name"), **kw)


def test_bad_run_arguments(inst: SyntheticInstance) -> None:
    learner = make_learner("fedlinucb", batch=BATCH)
    rng = np.random.default_rng(0)
    with pytest.raises(ParameterError, match="horizon"):
        run(learner, inst, BATCH - 1, tapes=tapes(1), rng=rng)
    with pytest.raises(ParameterError, match="tapes"):
        run(learner, inst, 10, tapes=[], rng=rng)
    with pytest.raises(ParameterTypeError, match="tapes"):
        run(learner, inst, 10, tapes=[3], rng=rng)  # type: ignore[list-item]
    with pytest.raises(ParameterTypeError, match="rng"):
        run(learner, inst, 10, tapes=tapes(1), rng=1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="instances"):
        run(learner, [inst, inst], 10, tapes=tapes(1), rng=rng)
    with pytest.raises(ParameterError, match="checkpoints"):
        run(learner, inst, 10, tapes=tapes(1), rng=rng, checkpoints=0)
    with pytest.raises(ParameterError, match="delta"):
        run(learner, inst, 10, tapes=tapes(1), rng=rng, delta=2.0)
    with pytest.raises(ParameterTypeError, match="learner"):
        run("fedlinucb", inst, 10, tapes=tapes(1), rng=rng)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="observer"):
        run(learner, inst, 10, tapes=tapes(1), rng=rng, observer=3)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# SDP via amplification (Theorem 5.3, Lemma F.2)
# ------------------------------------------------------------------------------------------


def test_sdp_amplification_infeasible_at_the_papers_settings(inst: SyntheticInstance) -> None:
    """§10.4: Lemma F.2 needs M > 16 ln(2/δ_lemma); at Fig. 2(a)'s M = 100, δ = 1e-4 it certifies nothing."""
    learner = make_learner("sdp-fedlinucb-amp-lazy", 1e-3, delta=1e-4, batch=25)
    noise = noise_of(learner, 10**4, 100)
    assert not noise.feasible
    assert math.isinf(noise.sigma0)
    assert "Lemma F.2" in noise.conditions
    with pytest.raises(ProtocolError, match="infeasible"):
        run(
            make_learner("sdp-fedlinucb-amp-lazy", 1e-3, delta=1e-4, batch=BATCH),
            inst,
            40,
            tapes=tapes(1),
            rng=np.random.default_rng(0),
        )
    # the authors' code σ0 (uncertified), spec §8.5's table: 0.65 at (0.2, 0.1), M = 100, T = 10^4, B = 25
    code = make_learner("sdp-fedlinucb-amp", 0.2, delta=0.1, batch=25, sigma_mode="code")
    assert noise_of(code, 10**4, 100).sigma0 == pytest.approx(0.65, rel=0.01)
    with pytest.raises(ParameterError, match="agents"):
        noise_of(code, 10**4)
    with pytest.raises(ParameterError, match="sigma_mode"):
        make_learner("sdp-fedlinucb-amp", 0.2, delta=0.1, sigma_mode="paper")


def test_sdp_amplification_where_feasible() -> None:
    """M = 100, δ = 0.5, K = 8 syncs: Lemma F.2 holds; the run is certified by the smaller of the
    Gaussian ledger and Theorem 5.3's total, and meets the claim."""
    big = draw_synthetic(np.random.default_rng(4), dim=2, arms=2, agents=100)
    learner = make_learner("sdp-fedlinucb-amp-lazy", 1.0, delta=0.5, batch=5)
    noise = noise_of(learner, 40, 100)
    assert noise.feasible
    assert noise.amplified is not None
    assert noise.amplified[0] <= 1.0
    assert noise.amplified[1] <= 0.5
    res = run(learner, big, 40, tapes=tapes(1), rng=np.random.default_rng(0), checkpoints=4)
    p = res.privacy
    assert p.model == "shuffle"
    assert p.certified
    assert p.meets_claim
    assert p.epsilon <= min(noise.amplified[0], p.content_epsilon)
    assert "Theorem 5.3" in p.argument


def test_theory_radius_and_explicit_regularizer(inst: SyntheticInstance) -> None:
    """Lemma C.4's radius [R] runs; an explicit λ is used as given (§3.1)."""
    learner = make_learner(
        "ldp-fedlinucb-lazy", EPS, delta=DELTA, batch=BATCH, radius="theory", regularizer=50.0
    )
    res = go(learner, inst, horizon=60)
    assert res.regularizer == 50.0
    assert np.isfinite(res.pseudo_regret).all()
    assert np.all(np.diff(res.pseudo_regret, axis=1) >= 0)


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
