"""The noise of every message against its formula (:mod:`learners.ldp.noise`; Zheng et al. 2020,
Algorithms 1, 2, 3 and 5), and randomized response's decoding (Duchi, Jordan & Wainwright 2013)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learners.ldp import (
    gaussian_multiplier,
    make_learner,
    noise_of,
    privatize_difference,
    privatize_glm,
    privatize_linear,
    privatize_loss,
    rr_outputs,
)
from learners.ldp_instances import (
    glm_bandit,
    link_constants,
    synthetic_linear,
    unit_sphere,
)
from tests.learners.ldp.support import DELTA, QUAD, N, classic, std_close


@pytest.mark.parametrize("calibration", ["classic", "exact"])
@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_algorithm1_noise_std_is_its_formula(calibration: str, eps: float) -> None:
    learner = make_learner("one-point", eps, delta=DELTA, calibration=calibration)
    noise = noise_of(learner, QUAD, 1000)
    B = QUAD.bound
    want = classic(eps, DELTA, 2 * B) if calibration == "classic" else gaussian_multiplier(eps, DELTA) * 2 * B
    assert noise.sigma == pytest.approx(want, rel=1e-12)
    assert noise.sigma >= want  # rounded toward more noise
    msg = privatize_loss(np.zeros(N), B, noise, np.random.default_rng(1))
    std_close(msg, want)
    assert noise.messages[0].sensitivity == 2 * B


def test_algorithm1_laplace_for_pure_epsilon() -> None:
    noise = noise_of(make_learner("one-point", 2.0), QUAD, 100)  # delta=None: pure ε
    b = 2 * QUAD.bound / 2.0
    assert noise.kind == "laplace"
    assert noise.sigma == pytest.approx(b, rel=1e-12)
    msg = privatize_loss(np.zeros(N), QUAD.bound, noise, np.random.default_rng(2))
    std_close(msg, math.sqrt(2) * b)  # Laplace(b) has sd b√2
    assert noise.ledger().pure_epsilon() <= 2.0


@pytest.mark.parametrize("calibration", ["classic", "exact"])
def test_algorithm2_noise_std_is_2_rho_sigma(calibration: str) -> None:
    eps, T = 0.8, 5000
    learner = make_learner("two-point", eps, delta=DELTA, calibration=calibration)
    noise = noise_of(learner, QUAD, T)
    G = QUAD.lipschitz
    rho = math.log(T) / T
    sigma = (
        classic(eps, DELTA, 2 * G) if calibration == "classic" else gaussian_multiplier(eps, DELTA) * 2 * G
    )
    assert noise.sigma == pytest.approx(sigma, rel=1e-12)
    assert noise.messages[0].sd == pytest.approx(2 * rho * sigma, rel=1e-12)
    assert noise.messages[0].sensitivity == pytest.approx(4 * rho * G, rel=1e-12)
    u = unit_sphere(np.random.default_rng(3), (N,), QUAD.dim)
    msg = privatize_difference(np.zeros(N), 2 * rho * u, 2 * rho * G, noise, np.random.default_rng(4))
    std_close(msg, 2 * rho * sigma)


def test_linucb_messages_std_paper_and_code() -> None:
    inst = synthetic_linear()
    eps, n = 0.9, 20_000
    x0, y0 = np.zeros((n, inst.dim)), np.zeros(n)
    classic = noise_of(make_learner("ldp-linucb", eps, delta=DELTA, calibration="classic"), inst, 100)
    assert classic.sigma == pytest.approx(6 * math.sqrt(2 * math.log(1.25 / DELTA)) / eps, rel=1e-12)
    code = noise_of(make_learner("ldp-linucb", eps, delta=DELTA, mode="code", reward_bound=1.0), inst, 100)
    assert code.sigma == pytest.approx(4 * math.sqrt(math.log(1.25 / DELTA)) / eps, rel=1e-12)
    exact = noise_of(make_learner("ldp-linucb", eps, delta=DELTA), inst, 100)
    assert exact.sigma == pytest.approx(gaussian_multiplier(eps, DELTA) * math.sqrt(2 + 16), rel=1e-12)
    for noise in (classic, code, exact):
        matrix, vector = privatize_linear(x0, y0, noise.sigma, 2.0, np.random.default_rng(7))
        std_close(matrix, noise.sigma)
        std_close(vector, noise.sigma)
        assert [m.sd for m in noise.messages] == [noise.sigma, noise.sigma]


@pytest.mark.parametrize("link", ["logistic", "poisson"])
def test_glm_messages_std(link: str) -> None:
    inst = glm_bandit(link)
    eps, n = 0.7, 20_000
    _, C = link_constants(link)
    noise = noise_of(make_learner("ldp-glm", eps, delta=DELTA, calibration="classic"), inst, 100)
    sigma = 6 * math.sqrt(2 * math.log(3.75 / DELTA)) / eps
    assert noise.sigma == pytest.approx(sigma, rel=1e-12)
    assert [m.sd for m in noise.messages] == pytest.approx([sigma, sigma, C * sigma], rel=1e-12)
    x0 = np.zeros((n, inst.dim))
    matrix, vector, gradient = privatize_glm(x0, np.zeros(n), x0, link, sigma, C, np.random.default_rng(8))
    std_close(matrix, sigma)
    std_close(vector, sigma)
    std_close(gradient, C * sigma)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize(("low", "high"), [(0.0, 1.0), (-2.0, 2.0)])
def test_rr_decoding_is_unbiased_in_exact_arithmetic(eps: float, low: float, high: float) -> None:
    """E[decoded | x] = x for x at both ends and inside the range: with p = e^ε/(1 + e^ε),
    P(b = 1 | x) = q + (p − q)(x − low)/(high − low), checked with mpmath at 50 digits."""
    import mpmath as mp

    v0, v1 = rr_outputs(low, high, eps)
    with mp.workdps(50):
        p = mp.e**eps / (1 + mp.e**eps)
        q = 1 - p
        for x in (low, high, low + 0.3 * (high - low)):
            one = q + (p - q) * (mp.mpf(x) - low) / (high - low)
            mean = one * mp.mpf(v1) + (1 - one) * mp.mpf(v0)
            assert abs(mean - x) < 1e-12 * (1 + abs(v1 - v0))
