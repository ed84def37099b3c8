"""The synthetic instance of Zhou & Chowdhury (2024), §6 (:mod:`learners.linear.instances`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learners.errors import ParameterError, ParameterTypeError
from learners.linear_instances import CHUNK, NoiseTape, SyntheticInstance, draw_synthetic
from tests.learners.linear.support import AGENTS, ARMS, DIM

# ------------------------------------------------------------------------------------------
# The synthetic instance (Zhou & Chowdhury 2024, §6, as the authors' code builds it)
# ------------------------------------------------------------------------------------------


def test_synthetic_instance_matches_the_authors_code(inst: SyntheticInstance) -> None:
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
