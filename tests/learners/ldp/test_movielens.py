"""The MovieLens environment of the official LDP-LinUCB code of Zheng, Cai, Huang, Li & Wang
(2020) (``MovieLensEnv`` of its ``src/dataset.py``; the paper has no such experiment) on small
``ua.base``-format files: what ``tests/learners/ldp/test_instances.py``'s loader test leaves out — users
without a rating among the first ``K`` movies (dropped, the others kept in order), users and
movies missing from the file, and a rank below ``K`` (features and rewards of the rank-``k``
reconstruction ``U_k diag(s_k) V_kᵀ``, as the official code's ``u_hat @ v_hat`` with
``u_hat = U_k √s_k``, ``v_hat = √s_k V_kᵀ``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from learners.ldp_instances import load_ratings, movielens_instance

USERS, ITEMS = 30, 25


def _write(path: Path, ratings: dict[tuple[int, int], int]) -> None:
    """A ``ua.base``-format file: ``user item rating timestamp`` (1-based ids), tab-separated."""
    lines = [f"{u}\t{i}\t{r}\t8812{u:02d}{i:03d}" for (u, i), r in sorted(ratings.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _sample() -> tuple[dict[tuple[int, int], int], list[int]]:
    """Users 1..30 over 25 movies; users 3 and 7 rate only movies 21..24, user 10 nothing, and
    movie 25 is rated by user 30 only (the matrix is 30 × 25). Returns the ratings and the users
    (1-based) with a rating among the first 20 movies."""
    gen = np.random.default_rng(18)
    ratings: dict[tuple[int, int], int] = {}
    for u in range(1, USERS + 1):
        if u == 10:
            continue
        items = range(21, 25) if u in (3, 7) else range(1, 25)
        for i in items:
            if gen.random() < 0.5:
                ratings[(u, i)] = int(gen.integers(1, 6))
        if u not in (3, 7):
            ratings[(u, 1 + u % 20)] = 4  # at least one rating among the first 20
    ratings[(USERS, ITEMS)] = 5
    kept = [u for u in range(1, USERS + 1) if any(i <= 20 for (v, i) in ratings if v == u)]
    return ratings, kept


def test_users_without_a_rating_among_the_first_movies_are_dropped(tmp_path: Path) -> None:
    ratings, kept = _sample()
    path = tmp_path / "ua.base"
    _write(path, ratings)
    dense = load_ratings(path)
    assert dense.shape == (USERS, ITEMS)  # (max user id, max item id); user 10 is an empty row
    assert not dense[9].any()
    inst = movielens_instance(path)
    assert kept == [u for u in range(1, USERS + 1) if u not in (3, 7, 10)]
    assert inst.pool is not None
    assert inst.pool.shape == (len(kept), 20, 20)
    # rank 20 of 20 columns: each kept user's rewards are its normalized row, in the file's order
    normalized = 0.4 * (dense[np.array(kept) - 1, :20] - 2.5)
    np.testing.assert_allclose(inst.pool @ inst.theta, normalized, atol=1e-12)
    assert set(np.round(inst.pool @ inst.theta, 9).ravel()) <= {-1.0, -0.6, -0.2, 0.2, 0.6, 1.0}


@pytest.mark.parametrize(("arms", "rank"), [(20, 20), (8, 3)])
def test_features_and_rewards_follow_the_official_recipe(tmp_path: Path, arms: int, rank: int) -> None:
    ratings, _ = _sample()
    path = tmp_path / "ua.base"
    _write(path, ratings)
    inst = movielens_instance(path, arms=arms, rank=rank)
    # the official code's preprocessing, written out: first `arms` movies, users with a rating
    # there, 0.4 (R - 2.5), thin SVD, x_ij = U[i, :k] ⊙ Vᵀ[:k, j], θ* = s[:k], rewards (U_k
    # √s_k)(√s_k V_kᵀ)
    first = load_ratings(path)[:, :arms].astype(np.float64)
    first = first[first.sum(axis=1) > 0]
    U, s, Vt = np.linalg.svd(0.4 * (first - 2.5), full_matrices=False)
    approx = (U[:, :rank] * np.sqrt(s[:rank])) @ (np.sqrt(s[:rank])[:, None] * Vt[:rank])
    assert inst.pool is not None
    assert inst.pool.shape == (first.shape[0], arms, rank)
    assert inst.dim == rank
    assert inst.arms == arms
    np.testing.assert_allclose(inst.theta, s[:rank], rtol=1e-12)
    for i in range(first.shape[0]):
        np.testing.assert_allclose(inst.pool[i], (U[i, :rank] * Vt[:rank].T), atol=1e-12)
    np.testing.assert_allclose(inst.pool @ inst.theta, approx, atol=1e-12)
    assert np.linalg.norm(inst.pool, axis=2).max() <= 1 + 1e-12
    # the rewards are deterministic: y = xᵀθ*, no η (as in the official code)
    lin = inst.pool[0] @ inst.theta
    np.testing.assert_array_equal(inst.reward(lin, np.random.default_rng(0)), lin)
