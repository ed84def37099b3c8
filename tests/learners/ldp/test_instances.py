"""The MovieLens-100K environment of the official code (:mod:`learners.ldp.instances`): the ``ua.base``
loader and the deterministic stand-in."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from learners.errors import ParameterError
from learners.ldp import (
    make_learner,
    run,
)
from learners.ldp_instances import (
    ContextualInstance,
    load_ratings,
    movielens_instance,
    standin_ratings,
)


def _write_ua(path: Path, users: int = 30, items: int = 25) -> np.ndarray:
    gen = np.random.default_rng(15)
    dense = np.where(gen.random((users, items)) < 0.4, gen.integers(1, 6, (users, items)), 0)
    dense[:, 0] = 3  # every user rates the first item
    lines = [
        f"{u + 1}\t{i + 1}\t{dense[u, i]}\t88125{u}"
        for u in range(users)
        for i in range(items)
        if dense[u, i]
    ]
    path.write_text("\n".join(lines) + "\n")
    return dense


def test_ua_base_file_loads_and_preprocesses(tmp_path: Path) -> None:
    path = tmp_path / "ua.base"
    dense = _write_ua(path)
    ratings = load_ratings(path)
    assert np.array_equal(ratings, dense)
    inst = movielens_instance(path)
    assert inst.name == "movielens"
    assert inst.pool is not None
    assert inst.pool.shape == (30, 20, 20)
    assert inst.theta.shape == (20,)
    # rank 20 = 20 columns: x_ij ᵀ s reproduces the normalized ratings, missing -> -1
    assert np.allclose(inst.pool @ inst.theta, 0.4 * (dense[:, :20] - 2.5))
    assert np.linalg.norm(inst.pool, axis=2).max() <= 1 + 1e-12
    res = run(
        make_learner("ldp-linucb", 8e5, delta=0.1, mode="code", reward_bound=1.0),
        inst,
        200,
        rng=np.random.default_rng(0),
        checkpoints=10,
    )
    assert np.all(np.isclose(res.pseudo_regret / 0.4, np.round(res.pseudo_regret / 0.4)))  # steps of 0.4


def test_malformed_ratings_file_names_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "ua.base"
    path.write_text("1\t1\t5\t874965758\n1\t2\tthree\t876893171\n")
    with pytest.raises(ParameterError, match="line 2") as info:
        load_ratings(path)
    assert info.value.name == "path"
    path.write_text("1\t1\t9\t874965758\n")
    with pytest.raises(ParameterError, match="line 1"):
        load_ratings(path)
    with pytest.raises(ParameterError) as missing:
        load_ratings(tmp_path / "absent")
    assert missing.value.name == "path"


def test_standin_is_a_deterministic_matrix_of_movielens_shape() -> None:
    a = standin_ratings()
    assert a.shape == (943, 1682)
    assert a.min() == 0
    assert a.max() == 5
    assert 0.04 < (a > 0).mean() < 0.08
    assert np.array_equal(a, standin_ratings())
    inst = movielens_instance()
    assert inst.name == "movielens-standin"
    assert inst.dim == 20
    assert inst.arms == 20


def test_a_run_gives_the_same_bytes_in_this_process_and_in_a_worker() -> None:
    """The MovieLens features come out of a broadcast product in a strided layout; a worker gets
    the pickled, C-ordered copy. The instance stores its pool in C order, so a run here and a run
    on the copy (as ``--workers 2`` or Dask does) agree bit for bit (they were one ulp apart)."""
    inst = movielens_instance(None, arms=6, rank=6)
    assert inst.pool is not None
    assert inst.pool.flags["C_CONTIGUOUS"]
    strided = np.ascontiguousarray(inst.pool.transpose(0, 2, 1)).transpose(0, 2, 1)  # as the product's
    assert not strided.flags["C_CONTIGUOUS"]
    assert not strided.flags["F_CONTIGUOUS"]
    again = ContextualInstance(inst.theta, inst.arms, "identity", 0.0, strided, inst.name)
    assert again.pool is not None
    assert again.pool.flags["C_CONTIGUOUS"]
    shipped = pickle.loads(pickle.dumps(again))
    learner = make_learner("ldp-linucb", 1e5, delta=0.1, mode="code", radius="code", alpha=0.1)
    here, there = (
        run(learner, i, 3000, rng=np.random.default_rng(3), checkpoints=30) for i in (again, shipped)
    )
    assert np.array_equal(here.pseudo_regret, there.pseudo_regret)
    assert here.pseudo_regret.tobytes() == there.pseudo_regret.tobytes()
