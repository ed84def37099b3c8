"""Real-data instances: MSLR-format loading, K-means arms, pulls, the offline default (the MSLR-WEB10K
instance of Chowdhury & Zhou 2023, §7 and App. J)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import dump_svmlight_file

import learners.datasets as ds
from learners.datasets import (
    ClusteredArms,
    cluster_instance,
    default_real_instance,
    load_letor,
    mslr_instance,
)
from learners.errors import ParameterError, ParameterTypeError

ROWS, FEATURES = 600, 8


def _letor_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(ROWS, FEATURES))
    x[:, 0] = rng.uniform(0, 5, size=ROWS)  # feature 1 drives the label, so clusters differ in mean
    labels = np.clip(np.floor(x[:, 0] + rng.normal(0, 0.5, size=ROWS)), 0, 4).astype(np.int64)
    qids = np.repeat(np.arange(ROWS // 20), 20)
    return x, labels, qids


@pytest.fixture
def letor_file(tmp_path: Path) -> Path:
    x, labels, qids = _letor_data()
    path = tmp_path / "fold.txt"
    dump_svmlight_file(x, labels, str(path), query_id=qids, zero_based=False)
    return path


def test_load_letor_round_trip(letor_file: Path) -> None:
    x, labels, _ = _letor_data()
    first = letor_file.read_text().splitlines()[0]
    assert first.split()[1].startswith("qid:")
    assert first.split()[2].startswith("1:")
    features, got = load_letor(letor_file)
    assert sparse.issparse(features)
    assert features.shape == (ROWS, FEATURES)
    assert features.dtype == np.float64
    assert got.dtype == np.int64
    assert got.shape == (ROWS,)
    np.testing.assert_array_equal(got, labels)
    np.testing.assert_allclose(features.toarray(), x, rtol=1e-14)


def test_load_letor_reads_hand_written_mslr_lines(tmp_path: Path) -> None:
    path = tmp_path / "mslr.txt"
    path.write_text("2 qid:10 1:3 2:0 3:2 4:0.5\n0 qid:10 1:1 2:1 3:0 4:0.25\n4 qid:11 1:0 2:9 3:1 4:7\n")
    features, labels = load_letor(str(path))
    np.testing.assert_array_equal(labels, [2, 0, 4])
    np.testing.assert_array_equal(features.toarray(), [[3, 0, 2, 0.5], [1, 1, 0, 0.25], [0, 9, 1, 7]])


def test_mslr_instance_means_are_cluster_label_averages(letor_file: Path) -> None:
    inst = mslr_instance(letor_file, clusters=5)
    assert inst.arms == 5
    assert inst.sizes.sum() == ROWS
    _, labels, _ = _letor_data()
    assert np.array_equal(np.sort(inst.rewards_sorted), np.sort(labels / 4))
    for a in range(5):
        lo, hi = inst.offsets[a], inst.offsets[a + 1]
        assert inst.means[a] == pytest.approx(inst.rewards_sorted[lo:hi].mean(), abs=1e-15)
    assert inst.means.min() >= 0
    assert inst.means.max() <= 1
    assert inst.means.max() - inst.means.min() > 0.2  # feature 1 drives the label: clusters differ
    assert np.sum(inst.sizes * inst.means) == pytest.approx(labels.sum() / 4)
    rewards = inst.pull(np.random.default_rng(0), np.array([0, 1, 2]), 20000)
    assert rewards.shape == (3, 20000)
    assert set(np.unique(rewards)) <= {0.0, 0.25, 0.5, 0.75, 1.0}
    np.testing.assert_allclose(rewards.mean(axis=1), inst.means[:3], atol=0.015)


def test_same_seed_same_instance(letor_file: Path) -> None:
    a, b = mslr_instance(letor_file, clusters=5, seed=3), mslr_instance(letor_file, clusters=5, seed=3)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.rewards_sorted, b.rewards_sorted)
    np.testing.assert_array_equal(a.means, b.means)


def test_reward_is_inverse_cdf_of_cluster_and_broadcasts() -> None:
    inst = ClusteredArms(np.array([0.5, 0.0, 1.0, 0.25, 0.75]), np.array([0, 3, 5]))
    np.testing.assert_array_equal(inst.rewards_sorted, [0.0, 0.5, 1.0, 0.25, 0.75])  # sorted per cluster
    np.testing.assert_allclose(inst.means, [0.5, 0.5])
    np.testing.assert_array_equal(inst.sizes, [3, 2])
    tape = np.array([0.0, 0.34, 0.67, np.nextafter(1.0, 0.0)])
    np.testing.assert_array_equal(inst.reward(0, tape), [0.0, 0.5, 1.0, 1.0])
    np.testing.assert_array_equal(
        inst.reward(np.array([[0], [1]]), tape), [[0, 0.5, 1, 1], [0.25] * 2 + [0.75] * 2]
    )
    assert not inst.rewards_sorted.flags.writeable
    assert not inst.means.flags.writeable
    assert "K=2" in repr(inst)


def test_default_real_instance() -> None:
    inst = default_real_instance(clusters=50)
    assert inst.arms == 50
    assert inst.sizes.sum() == 442
    assert inst.sizes.min() >= 1
    assert inst.means.min() >= 0
    assert inst.means.max() <= 1
    top = np.sort(inst.means)[::-1]
    assert top[0] > top[1]  # a distinct best arm
    assert inst.gaps[inst.best] == 0
    assert (inst.gaps > 0).sum() == 49


def test_minibatch_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ds, "MINIBATCH_ROWS", 100)
    x, labels, _ = _letor_data()
    inst = cluster_instance(x, labels / 4, clusters=4, seed=1)
    assert inst.arms == 4
    assert inst.sizes.sum() == ROWS


def test_missing_file_names_path(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="path=") as info:
        mslr_instance(tmp_path / "absent.txt")
    assert info.value.name == "path"
    assert "MSLR-WEB10K" in str(info.value)


def test_unparsable_file_names_path(tmp_path: Path) -> None:
    path = tmp_path / "junk.txt"
    path.write_text("hello world\n")
    with pytest.raises(ParameterError, match="path=") as info:
        load_letor(path)
    assert info.value.name == "path"


def test_clusters_validated(letor_file: Path) -> None:
    with pytest.raises(ParameterError, match="clusters=1") as info:
        mslr_instance(letor_file, clusters=1)
    assert info.value.name == "clusters"
    with pytest.raises(ParameterError, match="clusters"):
        mslr_instance(letor_file, clusters=ROWS + 1)
    with pytest.raises(ParameterTypeError, match="clusters"):
        mslr_instance(letor_file, clusters=5.0)  # type: ignore[arg-type]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_too_few_distinct_rows_rejected() -> None:
    x = np.repeat(np.eye(3), 4, axis=0)
    with pytest.raises(ParameterError, match="clusters"):
        cluster_instance(x, np.full(12, 0.5), clusters=5)


@pytest.mark.parametrize("bad", [5, -1])
def test_labels_outside_0_to_4_rejected(tmp_path: Path, bad: int) -> None:
    x, labels, qids = _letor_data()
    labels[7] = bad
    path = tmp_path / "bad.txt"
    dump_svmlight_file(x, labels, str(path), query_id=qids, zero_based=False)
    with pytest.raises(ParameterError, match=r"labels in 0\.\.4") as info:
        mslr_instance(path, clusters=5)
    assert info.value.name == "path"
    assert f"label {bad}" in str(info.value)


def test_clustered_arms_validation() -> None:
    with pytest.raises(ParameterError, match="rewards_sorted"):
        ClusteredArms(np.array([0.5, 1.5]), np.array([0, 1, 2]))
    with pytest.raises(ParameterError, match="non-empty"):
        ClusteredArms(np.array([0.5, 0.5]), np.array([0, 2, 2]))
    with pytest.raises(ParameterError, match="offsets"):
        ClusteredArms(np.array([0.5, 0.5]), np.array([0, 2]))  # K = 1
    with pytest.raises(ParameterTypeError, match="offsets"):
        ClusteredArms(np.array([0.5, 0.5]), np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ParameterError, match="rewards"):
        cluster_instance(np.zeros((3, 2)), [0.1, 0.2, 2.0], clusters=2)
