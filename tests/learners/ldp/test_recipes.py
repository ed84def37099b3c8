"""The noise recipes (:mod:`learners.ldp.recipes`): ``Υ_t``, Algorithm 3's printed σ (Zheng et al.
2020, §4.2) by basic composition, the exact calibration, and the official code's σ against exact
accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learners.ldp import (
    code_mode_check,
    code_sigma,
    composed_sigmas,
    make_learner,
    noise_of,
    symmetric_noise,
    upsilon,
)
from learners.ldp_instances import (
    glm_bandit,
)


def test_upsilon_bounds_the_accumulated_matrix_noise() -> None:
    """Zheng et al. (2020), §4.1 (as we rebuilt it): ‖Σ_{s<=t} B_s‖₂ <= Υ_t w.p. >= 1 - α/(2T); the sum
    of t mirrored matrices is one mirrored matrix of entry sd σ√t, so it is drawn directly (500
    draws at d = 5, 20)."""
    sigma, T, alpha = 0.3, 10**4, 0.1
    for d in (5, 20):
        for t in (1, 100, T):
            N_t = symmetric_noise(np.random.default_rng(t + d), (500,), d, sigma * math.sqrt(t))
            norms = np.abs(np.linalg.eigvalsh(N_t)).max(axis=1)
            bound = upsilon(sigma, t, d, T, alpha)
            assert norms.max() <= bound
            assert norms.max() <= 0.5 * bound  # loose: Wigner's 2σ√(td) against 4σ√(td) + 2σ√t ln(2T/α)


@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-9])
@pytest.mark.parametrize("eps", [0.1, 0.9])
def test_calibration_helper_reproduces_algorithm3_constant(eps: float, delta: float) -> None:
    sig = composed_sigmas(eps, delta, [2.0, 2.0, 2.0])
    want = 6 * math.sqrt(2 * math.log(3.75 / delta)) / eps
    assert sig == pytest.approx((want, want, want), rel=1e-12)
    B = 1.5
    assert composed_sigmas(eps, delta, [2 * B])[0] == pytest.approx(
        2 * B * math.sqrt(2 * math.log(1.25 / delta)) / eps, rel=1e-12
    )


def test_exact_calibration_meets_target_and_beats_classic() -> None:
    eps, delta = 0.5, 1e-5
    exact = composed_sigmas(eps, delta, [2.0, 2.0, 2.0], "exact")
    classic = composed_sigmas(eps, delta, [2.0, 2.0, 2.0])
    assert all(e < c for e, c in zip(exact, classic, strict=True))
    learner = make_learner("ldp-glm", eps, delta=delta)
    acc = noise_of(learner, glm_bandit(), 100).ledger()
    assert float(acc.epsilon(delta)) <= eps


def test_code_mode_misses_its_stated_privacy() -> None:
    official = code_mode_check(8e5, 0.1)
    assert official.sigma_code == pytest.approx(4 * math.sqrt(math.log(12.5)) / 8e5, rel=1e-12)
    assert official.sigma_stated == pytest.approx(math.sqrt(2) * official.sigma_code, rel=1e-9)
    assert official.misses
    assert official.epsilon_stated > 1e10
    assert official.epsilon_blocks > 8e5
    moderate = code_mode_check(1.0, 1e-5)
    assert moderate.misses
    assert 1.05 < moderate.epsilon_stated < 1.15
    assert code_sigma(1.0, 1e-5, 1.0) == pytest.approx(4 * math.sqrt(math.log(1.25e5)), rel=1e-12)
