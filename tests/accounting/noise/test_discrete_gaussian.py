"""The discrete Gaussian (:mod:`accounting.noise.discrete_gaussian`, Canonne, Kamath & Steinke 2020)."""

from __future__ import annotations

import numpy as np
import pytest

from accounting import DiscreteGaussian


def test_discrete_gaussian_spec_vector() -> None:
    """Spec §2.5: N_Z(0, 1) has P = 0.398942, 0.241971, 0.053991 at x = 0, 1, 2."""
    noise = DiscreteGaussian(1)
    for x, expected in enumerate([0.398942, 0.241971, 0.053991]):
        assert float(noise.pmf_exact(x).mid) == pytest.approx(expected, abs=5e-7)


def test_a_vanishing_discrete_gaussian_samples_zeros() -> None:
    """σ = 1e-300: σ² underflowed, the acceptance was 0/0 and the float sampler never returned
    (dp-audit mechanism hung); P(X != 0) < e^{-10^199}, so every draw is 0."""
    draws = DiscreteGaussian(1e-300).sample(np.random.default_rng(0), 1000)
    assert draws.dtype == np.int64
    assert not draws.any()
    assert DiscreteGaussian(0.5).sample(np.random.default_rng(0), 1000).any()  # the usual path
