"""Protocol P (Zhou & Chowdhury 2024, Algorithm 2) as :mod:`learners.linear.state` runs it: noise,
symmetry, tree bookkeeping."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learners.linear import (
    RunResult,
    SyncRecord,
)
from tests.learners.linear.support import AGENTS, DIM

# ------------------------------------------------------------------------------------------
# Protocol P (Algorithm 2): noise, symmetry, tree bookkeeping
# ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_node_carries_sigma0_noise(recorded: tuple[RunResult, list[SyncRecord]]) -> None:
    """Released p-sum minus raw p-sum, per silo: N(0, σ0²) per bias coordinate (Zhou & Chowdhury 2024,
    Algorithm 2).

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
    # the server's node is the sum of M silos' messages: variance M σ0² (not σ0², Dubey & Pentland's
    # mistake, Zhou & Chowdhury 2024, §3)
    node = z.sum(axis=1)
    assert abs(node.var() / (AGENTS * sigma**2) - 1) < 0.2


def test_matrix_noise_is_symmetric_with_halved_off_diagonal(
    recorded: tuple[RunResult, list[SyncRecord]],
) -> None:
    """(N + Nᵀ)/2: exactly symmetric, diagonal variance σ0², off-diagonal σ0²/2 (the authors' code;
    Assumption C.3)."""
    result, records = recorded
    sigma = result.noise.sigma0
    z = np.concatenate([r.messages_cov - r.psums_cov for r in records])  # type: ignore[operator]
    np.testing.assert_array_equal(
        np.concatenate([r.messages_cov for r in records]),
        np.concatenate([r.messages_cov for r in records]).swapaxes(-1, -2),
    )
    diag = np.diagonal(z, axis1=-2, axis2=-1)
    iu = np.triu_indices(DIM, 1)
    off = z[..., iu[0], iu[1]]
    assert abs(diag.var() / sigma**2 - 1) < 0.1  # 4096 draws
    assert abs(off.var() / (sigma**2 / 2) - 1) < 0.1  # 6144 draws


def test_prefix_noise_is_popcount_nodes_of_all_silos(recorded: tuple[RunResult, list[SyncRecord]]) -> None:
    """Ũ_syn - exact prefix: variance M · popcount(k) · σ0² per coordinate (≤ Mκσ0², Zhou & Chowdhury
    2024, §4)."""
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
    """The raw registers' prefix Σ_{j: bit j of k} Σ_i α_j equals Σ over all silos and rounds <= kB
    (Algorithm 2)."""
    _, records = recorded
    for r in records:
        assert r.raw_prefix_bias is not None
        assert r.raw_prefix_cov is not None
        np.testing.assert_allclose(r.raw_prefix_bias, r.exact_bias, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(r.raw_prefix_cov, r.exact_cov, rtol=1e-10, atol=1e-9)
        # the released prefix replaces (not increments) the synced statistics (Algorithm 2)
        assert np.all(r.level == np.log2(r.step & -r.step))
    k6 = next(r for r in records if int(r.step[0]) == 6)
    assert int(k6.level[0]) == 1
    assert int(k6.nodes[0]) == 2
