"""Algorithm 1's bases and the gradient estimators (:mod:`learners.ldp.bases`): unbiased with noise
(Flaxman, Kalai & McMahan 2005; Agarwal, Dekel & Xiao 2010), and Hazan & Levy (2014)'s FTRL step."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learners.ldp import (
    make_learner,
    noise_of,
    one_point_gradient,
    privatize_difference,
    two_point_gradient,
)
from learners.ldp.bases import _hazan_levy_radius
from learners.ldp_instances import (
    unit_sphere,
)
from tests.learners.ldp.support import DELTA, QUAD, N


def test_one_point_estimator_is_unbiased_with_noise() -> None:
    gen = np.random.default_rng(12)
    y = np.array([0.1, -0.2, 0.3])
    rho, sigma = 0.3, 2.0
    u = unit_sphere(gen, (N,), 3)
    values = QUAD.mean(y + rho * u) + gen.normal(0, sigma, N)
    g = one_point_gradient(values, u, rho)
    se = g.std(axis=0) / math.sqrt(N)
    assert np.all(
        np.abs(g.mean(axis=0) - QUAD.gradient(y)) < 4 * se
    )  # quadratic: the smoothed gradient is ∇f


def test_two_point_estimator_is_unbiased_with_noise() -> None:
    gen = np.random.default_rng(13)
    y = np.array([0.1, -0.2, 0.3])
    T = 1000
    learner = make_learner("two-point", 0.5, delta=DELTA, calibration="classic")
    noise = noise_of(learner, QUAD, T)
    rho = math.log(T) / T
    u = unit_sphere(gen, (N,), 3)
    diff = QUAD.mean(y + rho * u) - QUAD.mean(y - rho * u)
    m = privatize_difference(diff, 2 * rho * u, 2 * rho * QUAD.lipschitz, noise, gen)
    g = two_point_gradient(m, u, rho)
    se = g.std(axis=0) / math.sqrt(N)
    assert np.all(np.abs(g.mean(axis=0) - QUAD.gradient(y)) < 4 * se)
    # the noise term d (nᵀu) u has E‖.‖² = d² σ² (Zheng et al. 2020, Algorithm 2), whatever ρ
    noise_part = g - two_point_gradient(diff, u, rho)
    assert float((noise_part**2).sum(axis=1).mean()) == pytest.approx(9 * noise.sigma**2, rel=0.02)


def test_hazan_levy_radius_is_the_root_found_by_brentq() -> None:
    """``s`` solves m s + c s/(1 − s²) = a on [0, 1): against scipy's brentq, for small and huge a,
    m = 0 and large m."""
    from scipy.optimize import brentq

    gen = np.random.default_rng(3)
    a = np.concatenate([[0.0, 1e-12, 1e6, 1e12], 10.0 ** gen.uniform(-6, 6, 200)])
    for m, c in ((0.0, 2.0), (3.0, 0.5), (1e4, 1e-3), (1e-3, 50.0)):
        got = _hazan_levy_radius(a, m, c)
        assert ((got >= 0) & (got < 1)).all()
        for ai, si in zip(a, got, strict=True):
            if ai == 0:
                assert si == 0
                continue

            def h(s: float, ai: float = ai, m: float = m, c: float = c) -> float:
                return m * s + c * s / (1 - s * s) - ai

            want = brentq(h, 0.0, 1 - 1e-16, xtol=1e-300)
            assert si == pytest.approx(want, rel=1e-12, abs=1e-15)
