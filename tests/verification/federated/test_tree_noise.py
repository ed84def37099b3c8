"""Tests of :mod:`verification.federated.tree_noise` (A2): the aggregate noise is ``M·κ·σ0²``.

Zhou & Chowdhury 2024, Section 4 (Algorithm 2: every silo adds its own noise to every node) and
Section 3 (Dubey & Pentland's analysis counts ``σ²`` where the server holds ``Mσ²``).
"""

from __future__ import annotations

from verification.federated import (
    measure_tree_noise,
)


def test_a2_the_tree_noise_is_m_kappa_sigma0_squared() -> None:
    """Algorithm 2: per coordinate Var = M·κ·σ0² at a full prefix (T = 7, B = 1: κ = 3 nodes)."""
    measured = measure_tree_noise("ldp-fedlinucb", agents=8, horizon=7, repetitions=2000, seed=5)
    assert measured.values == 2000 * 5  # d = 2: two bias coordinates and three of the triangle
    assert measured.low <= 1.0 <= measured.high
    assert not measured.refuted
    assert measured.high - measured.low < 0.1
    # Dubey & Pentland's analysis counts one silo's noise (Section 3): off by the factor M.
    dp = measure_tree_noise(
        "dubey-pentland", agents=8, horizon=16, repetitions=2000, seed=5, claimed_copies=1
    )
    assert dp.refuted
    assert dp.low <= 8 <= dp.high
