"""The federated linear family's real-data instance (Zhou & Chowdhury 2024, §6 and App. H: MSLR-WEB10K).

The instance is read from a small file written in the MSLR-WEB10K format (svmlight with ``qid``),
and from the offline stand-in built from scikit-learn's bundled digits data.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from accounting.accountant import Accountant, Event
from accounting.calibration import shuffle_sum_parameters
from accounting.mechanisms import ApproxDP
from accounting.neighbouring import Neighbouring
from learners.datasets import (
    FEATURE_SETS,
    INTERCEPT,
    MSLR_FEATURES,
    default_linear_instance,
    load_letor_queries,
    mslr_linear_instance,
    query_instance,
)
from learners.errors import ParameterError
from learners.linear import RunResult, SyncRecord, make_learner, noise_of, run
from learners.linear_instances import CHUNK, LinearInstance, QueryInstance, SyntheticInstance, draw_synthetic

QUERIES, AGENTS = 42, 4  # 10 queries per silo, the last 2 unused


def _planted(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows of QUERIES queries (2..12 documents each) whose labels are a planted linear model of the
    title features (rounded to integers: svmlight relevance labels are integers)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 13, size=QUERIES)
    qids = np.repeat(np.arange(1, QUERIES + 1), sizes)
    x = rng.uniform(0, 100, size=(qids.size, MSLR_FEATURES))
    cols = np.array(FEATURE_SETS["title"])
    theta = np.zeros(cols.size)
    theta[1:] = rng.uniform(-1, 1, size=cols.size - 1)  # no weight on the 0.01 intercept
    labels = np.round(x[:, cols[1:] - 1] @ theta[1:]).astype(np.int64)
    return x, labels, qids, theta


@pytest.fixture(scope="module")
def mslr_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x, labels, qids, _ = _planted()
    path = tmp_path_factory.mktemp("mslr") / "mslr.txt"
    dump_svmlight_file(x, labels, str(path), zero_based=False, query_id=qids)
    return path


@pytest.fixture(scope="module")
def title(mslr_file: Path) -> QueryInstance:
    return mslr_linear_instance(mslr_file, "title", agents=AGENTS)


@pytest.fixture(scope="module")
def standin() -> QueryInstance:
    return default_linear_instance()


# ------------------------------------------------------------------------------------------
# The loader
# ------------------------------------------------------------------------------------------


def test_feature_sets_are_the_codes() -> None:
    # get_feature_sets("MSLR") of the authors' code: title 1 + 50 + 6 = 57, body 1 + 75 + 2 = 78,
    # column 0 in both
    assert len(FEATURE_SETS["title"]) == 57
    assert len(FEATURE_SETS["body"]) == 78
    assert FEATURE_SETS["title"][:5] == (0, 2, 4, 7, 9)
    assert FEATURE_SETS["body"][:4] == (0, 1, 3, 5)
    assert FEATURE_SETS["title"][-6:] == (126, 127, 128, 129, 130, 131)
    assert FEATURE_SETS["body"][-2:] == (132, 133)
    assert max(FEATURE_SETS["title"] + FEATURE_SETS["body"]) <= MSLR_FEATURES


def test_load_letor_queries_round_trip(mslr_file: Path) -> None:
    x, labels, qids, _ = _planted()
    fx, flabels, fqids = load_letor_queries(mslr_file, MSLR_FEATURES)
    assert fx.shape == x.shape
    np.testing.assert_allclose(fx.toarray(), x, rtol=1e-12)
    np.testing.assert_array_equal(flabels, labels)
    np.testing.assert_array_equal(fqids, qids)


def test_shapes_blocks_and_normalization(title: QueryInstance, mslr_file: Path) -> None:
    x, _, qids, _ = _planted()
    assert isinstance(title, LinearInstance)
    assert (title.dim, title.agents, title.queries, title.queries_per_agent) == (57, AGENTS, 40, 10)
    sizes = np.bincount(qids)[1:]
    np.testing.assert_array_equal(title.sizes, sizes[:40])  # the last 2 queries are left out
    assert title.arms == sizes[:40].max()
    assert title.features.shape == (sizes[:40].sum(), 57)
    np.testing.assert_allclose(np.linalg.norm(title.features, axis=1), 1.0, rtol=1e-12)
    # raw features: the code's matrix (intercept 0.01, then the file's columns), title columns
    full = np.hstack([np.full((x.shape[0], 1), INTERCEPT), x])[: title.features.shape[0]]
    raw = full[:, list(FEATURE_SETS["title"])]
    np.testing.assert_allclose(title.features, raw / np.linalg.norm(raw, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(title.means, raw @ title.theta, rtol=1e-10)  # on the RAW features
    body = mslr_linear_instance(mslr_file, "body", agents=AGENTS)
    assert body.dim == 78


def test_each_silo_draws_from_its_own_block(title: QueryInstance) -> None:
    per = title.queries_per_agent
    seen = np.concatenate([title.query_block(c) for c in range(40)])  # (40 CHUNK, M)
    for i in range(AGENTS):
        assert set(seen[:, i].tolist()) == set(range(i * per, (i + 1) * per))
    feats, means = title.block(3)
    q = title.query_block(3)
    k = int(title.sizes[q].max())
    assert feats.shape == (CHUNK, AGENTS, k, title.dim)
    assert means.shape == (CHUNK, AGENTS, k)
    for j, i in [(0, 0), (5, 3), (15, 2)]:
        lo, n = title.offsets[q[j, i]], title.sizes[q[j, i]]
        rows = lo + np.arange(k) % n  # the query's documents, repeated cyclically to k
        np.testing.assert_array_equal(feats[j, i], title.features[rows])
        np.testing.assert_array_equal(means[j, i], title.means[rows])
    again = title.block(3)
    np.testing.assert_array_equal(feats, again[0])
    other = title.reseeded(np.random.default_rng(9))
    assert other.features is title.features
    assert not np.array_equal(other.query_block(3), q)


def test_lasso_recovers_a_planted_linear_model(title: QueryInstance) -> None:
    *_, theta = _planted()
    # labels are the planted model rounded to integers; Lasso(alpha=1) shrinks the weights a little
    np.testing.assert_allclose(title.theta[1:], theta[1:], atol=5e-3)
    assert abs(title.theta[0]) < 1  # the 0.01 intercept carries nothing
    assert np.linalg.norm(title.theta - theta) < 0.01 * np.linalg.norm(theta)


def test_label_rewards(mslr_file: Path) -> None:
    _, labels, _, _ = _planted()
    inst = mslr_linear_instance(mslr_file, "title", agents=AGENTS, reward="label")
    np.testing.assert_array_equal(inst.means, labels[: inst.means.size])


def test_same_seed_same_instance(mslr_file: Path, title: QueryInstance) -> None:
    again = mslr_linear_instance(mslr_file, "title", agents=AGENTS)
    np.testing.assert_array_equal(again.theta, title.theta)
    assert again.key == title.key


# ------------------------------------------------------------------------------------------
# The offline stand-in
# ------------------------------------------------------------------------------------------


def test_standin_is_built_the_same_way(standin: QueryInstance) -> None:
    assert (standin.dim, standin.agents, standin.queries, standin.queries_per_agent) == (65, 10, 90, 9)
    assert standin.arms == 20
    assert standin.sizes.min() == 17
    np.testing.assert_allclose(np.linalg.norm(standin.features, axis=1), 1.0, rtol=1e-12)
    assert np.count_nonzero(standin.theta) > 5
    from sklearn.datasets import load_digits

    data = load_digits()
    raw = np.hstack([np.full((data.data.shape[0], 1), INTERCEPT), data.data])
    np.testing.assert_allclose(standin.means, raw @ standin.theta, rtol=1e-10)
    direct = query_instance(data.data, data.target, np.arange(1797) // 20, range(65), 10)
    np.testing.assert_array_equal(direct.theta, standin.theta)


# ------------------------------------------------------------------------------------------
# Runs (realized = pseudo-regret on noise-free real data)
# ------------------------------------------------------------------------------------------


def _uniform_regret_per_round(inst: QueryInstance) -> float:
    """Group regret per round of playing a uniformly random document."""
    gaps = [
        float(np.mean(inst.means[lo:hi].max() - inst.means[lo:hi]))
        for lo, hi in zip(inst.offsets[:-1], inst.offsets[1:], strict=True)
    ]
    return float(np.asarray(gaps).reshape(inst.agents, -1).mean(axis=1).sum())


@pytest.mark.slow
def test_fedlinucb_learns_on_the_standin(standin: QueryInstance) -> None:
    T = 1000
    res = run(
        make_learner("fedlinucb", radius_scale=0.1), standin, T,
        tapes=[np.random.default_rng(s) for s in range(2)], rng=np.random.default_rng(0), checkpoints=10,
    )  # fmt: skip
    assert np.isfinite(res.pseudo_regret).all()
    np.testing.assert_array_equal(res.pseudo_regret, res.realized_regret)  # noise-free rewards
    assert (np.diff(res.pseudo_regret, axis=1) >= 0).all()
    average = res.pseudo_regret.mean(axis=0) / res.rounds
    assert average[-1] < 0.6 * average[0]  # the time-average regret falls
    second_half = (res.pseudo_regret[:, -1] - res.pseudo_regret[:, 4]).mean() / (T - res.rounds[4])
    assert second_half < 0.35 * _uniform_regret_per_round(standin)
    assert res.syncs.tolist() == [T // 25] * 2


@pytest.mark.slow
def test_private_run_on_real_data(title: QueryInstance) -> None:
    res = run(
        make_learner("ldp-fedlinucb-lazy", 5.0, delta=0.1, batch=5, bound=100.0), title, 100,
        tapes=[np.random.default_rng(0)], rng=np.random.default_rng(1), checkpoints=4,
    )  # fmt: skip
    assert np.isfinite(res.pseudo_regret).all()
    assert res.privacy.certified
    assert res.privacy.meets_claim


def test_per_repetition_instances_pad_to_a_common_arm_count(title: QueryInstance) -> None:
    """Each repetition its own query stream (as the authors' code): a block padded to the largest
    repetition's arm count gives the same run as that repetition alone."""
    a = title.reseeded(np.random.default_rng(1))
    b = title.reseeded(np.random.default_rng(2))
    learner = make_learner("fedlinucb", batch=5)

    def go(insts: QueryInstance | list[QueryInstance], seeds: list[int]) -> np.ndarray:
        res = run(
            learner, insts, 80, tapes=[np.random.default_rng(s) for s in seeds],
            rng=np.random.default_rng(0), checkpoints=80,
        )  # fmt: skip
        return np.asarray(res.pseudo_regret)

    both = go([a, b], [0, 1])
    np.testing.assert_allclose(both[0], go(a, [0])[0], rtol=1e-12)
    np.testing.assert_allclose(both[1], go(b, [1])[0], rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Bad inputs
# ------------------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="path"):
        mslr_linear_instance(tmp_path / "absent.txt")


def test_wrong_format(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not svmlight\n")
    with pytest.raises(ParameterError, match="path"):
        mslr_linear_instance(bad)
    no_qid = tmp_path / "noqid.txt"
    no_qid.write_text("1 1:0.5 3:2\n0 2:1\n")
    with pytest.raises(ParameterError, match="qid"):
        mslr_linear_instance(no_qid)
    wide = tmp_path / "wide.txt"
    wide.write_text("1 qid:1 1:0.5 137:2\n")
    with pytest.raises(ParameterError, match="path"):
        mslr_linear_instance(wide)
    fractional = tmp_path / "fractional.txt"
    fractional.write_text("0.5 qid:1 1:0.5\n")
    with pytest.raises(ParameterError, match="integer relevance"):
        mslr_linear_instance(fractional)


def test_too_few_queries_for_the_silos(mslr_file: Path) -> None:
    with pytest.raises(ParameterError, match=r"agents.*Q = 42"):
        mslr_linear_instance(mslr_file, agents=43)
    assert mslr_linear_instance(mslr_file, agents=42).queries_per_agent == 1


def test_bad_settings(mslr_file: Path) -> None:
    with pytest.raises(ParameterError, match="features"):
        mslr_linear_instance(mslr_file, "anchor")
    with pytest.raises(ParameterError, match="features"):
        mslr_linear_instance(mslr_file, [0, 137])
    with pytest.raises(ParameterError, match="reward"):
        mslr_linear_instance(mslr_file, reward="clicks")
    with pytest.raises(ParameterError, match="agents"):
        default_linear_instance(agents=0)
    with pytest.raises(ParameterError, match="agents"):
        QueryInstance(np.ones((3, 2)), np.zeros(3), np.array([0, 1, 3]), 3, np.zeros(2), (1, 2))


# ------------------------------------------------------------------------------------------
# SDP via the vector-sum protocol P_T^Vec (Zhou & Chowdhury 2024, Algorithms 5-6, Theorem 5.5)
# ------------------------------------------------------------------------------------------


def _synthetic() -> SyntheticInstance:
    return draw_synthetic(np.random.default_rng(2), dim=4, arms=10, agents=4)


def test_vec_parameters_theory_and_code() -> None:
    d, M, B, T = 4, 4, 5, 320  # K = 64 syncs, kappa = 7
    vec_learner = make_learner("sdp-fedlinucb-vec-lazy", 1.0, delta=0.1, batch=B)
    noise = noise_of(vec_learner, T, M, dim=d)
    vec = noise.vector
    assert vec is not None
    assert vec.certified
    assert noise.kappa == 7
    assert vec.delta0 == 0.1 / (4 * 7)
    # the largest ε0 whose optimal composition over 2κ calls meets (1, 0.1)
    acc = Accountant(Neighbouring.REPLACE_ONE)
    acc.compose(Event(ApproxDP(vec.epsilon0, vec.delta0, "x"), 14))
    assert float(acc.epsilon(0.1, route="pld")) <= 1.0
    acc = Accountant(Neighbouring.REPLACE_ONE)
    acc.compose(Event(ApproxDP(vec.epsilon0 * 1.01, vec.delta0, "x"), 14))
    assert float(acc.epsilon(0.1, route="pld")) > 1.0
    for i in range(7):
        n = (B * M) << i
        assert vec.bias[i] == shuffle_sum_parameters("cheu-vector", vec.epsilon0, vec.delta0, n, d, 1.0)
        assert vec.cov[i] == shuffle_sum_parameters(
            "cheu-vector", vec.epsilon0, vec.delta0, n, d * (d + 1) // 2
        )
    assert noise.tree is None
    assert noise.copies(M) == 1  # central-level noise: no factor M (Theorem 5.5)
    code = noise_of(
        make_learner("sdp-fedlinucb-vec", 0.2, delta=0.1, batch=B, sigma_mode="code"), T, M, dim=d
    )
    assert code.vector is not None
    assert not code.vector.certified
    for i, params in enumerate(code.vector.bias):
        n = (B * M) << i
        g = max(math.ceil(2 * math.sqrt(n)), d, 4)
        assert (params.g, params.levels, params.p) == (g, 2 * g, 0.25)
        assert isinstance(
            params.b, int
        )  # b = ceil(...), never numpy's silent truncation (as in the authors' code)
        assert params.b == math.ceil(g**2 * math.log(d**2 / 0.1) ** 2 / (0.2**2 * n))


@pytest.mark.parametrize("mode", ["exact", "code"])
def test_vec_noise_variance_equals_its_formula(mode: str) -> None:
    """One sync (T = B, level 0): the released sums minus the exact sums are the analyzer's noise,
    unbiased, with per-coordinate variance n b p (1 - p)/scale² plus the rounding's (<= n/(4 scale²))."""
    inst, B, reps = _synthetic(), 5, 150
    learner = make_learner("sdp-fedlinucb-vec-lazy", 0.5, delta=0.1, batch=B, sigma_mode=mode)
    noise = noise_of(learner, B, inst.agents, dim=inst.dim)
    assert noise.vector is not None
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def observe(rec: SyncRecord) -> None:
        iu = np.triu_indices(inst.dim)
        seen.append((rec.prefix_bias - rec.exact_bias, (rec.prefix_cov - rec.exact_cov)[:, iu[0], iu[1]]))

    run(learner, inst, B, tapes=[np.random.default_rng(s) for s in range(reps)],
        rng=np.random.default_rng(3), checkpoints=1, observer=observe)  # fmt: skip
    ((zb, zc),) = seen
    for z, stream in ((zb, "bias"), (zc, "cov")):
        lo, hi = noise.vector.variance(0, stream)
        var = float(np.mean(z**2))
        slack = 5 * math.sqrt(2 / z.size)
        assert lo * (1 - slack) <= var <= hi * (1 + slack), (stream, lo, var, hi)
        assert abs(float(z.mean())) < 5 * math.sqrt(hi / z.size)
    assert math.isclose(noise.sigma0, math.sqrt(max(noise.vector.variance(0, s)[1] for s in ("bias", "cov"))))


def test_vec_ledger_and_certification() -> None:
    inst = _synthetic()

    def go(name: str, mode: str = "exact") -> RunResult:
        learner = make_learner(name, 1.0, delta=0.1, batch=5, sigma_mode=mode)
        return run(
            learner, inst, 80, tapes=[np.random.default_rng(0)], rng=np.random.default_rng(1), checkpoints=4
        )

    lazy = go("sdp-fedlinucb-vec-lazy")
    assert np.isfinite(lazy.pseudo_regret).all()
    vec = lazy.noise.vector
    assert vec is not None
    assert lazy.privacy.certified
    assert lazy.privacy.meets_claim
    assert lazy.privacy.epsilon <= 1.0
    assert sorted(lazy.ledgers) == [1, 2, 3, 4, 5]  # K = 16 syncs: the first batch enters κ = 5 nodes
    for n, ledger in lazy.ledgers.items():
        assert len(ledger.ledger) == 2 * n
        assert all(e.mechanism == vec.event for e in ledger.ledger)
    eager = go("sdp-fedlinucb-vec")
    assert not eager.privacy.certified  # within-batch adaptivity (Algorithm 1; learners.linear.privacy)
    assert eager.privacy.epsilon == math.inf
    assert eager.privacy.content_epsilon == lazy.privacy.content_epsilon
    code = go("sdp-fedlinucb-vec-lazy", "code")
    assert code.ledgers == {}
    assert code.privacy.epsilon == math.inf
    assert not code.privacy.certified
    assert "code" in code.privacy.message


def test_vec_refusals() -> None:
    with pytest.raises(ParameterError, match="sigma_mode"):
        make_learner("sdp-fedlinucb-vec", 1.0, delta=0.1, sigma_mode="paper")
    with pytest.raises(ParameterError, match="sensitivity"):
        make_learner("sdp-fedlinucb-vec", 1.0, delta=0.1, sensitivity="batch")
    with pytest.raises(ParameterError, match="dim"):
        noise_of(make_learner("sdp-fedlinucb-vec", 1.0, delta=0.1), 100, 4)
    with pytest.raises(ParameterError, match="epsilon"):
        make_learner("sdp-fedlinucb-vec")
