"""Tests of learners.ldp and learners.ldp_instances: Zheng et al. (NeurIPS 2020), spec ldp-bandits.md.

Spec §10's acceptance tests (noise std of every message against its formula, the symmetric matrix
noise, Algorithm 2's 2ρσ, the §7.1 calibration helper, sublinear regret of Algorithms 1 and 5,
θ̂ of Algorithm 3 in the unit ball), the official code's constants (§6.2, P6) checked against
exact accounting, unbiasedness of the estimators the analyses rely on (§7.7-§7.8), the ua.base
loader, and bad input. The regret horizons are small (a few 10^4 rounds at most).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from accounting.accountant import Accountant
from learners.errors import ParameterError
from learners.ldp import (
    FKM,
    UCB,
    ADXOnePoint,
    Feedback,
    HazanLevy,
    Learner,
    SahaTewari,
    code_mode_check,
    code_sigma,
    composed_sigmas,
    gaussian_multiplier,
    make_learner,
    noise_of,
    one_point_gradient,
    privatize_difference,
    privatize_glm,
    privatize_linear,
    privatize_loss,
    rr_outputs,
    run,
    symmetric_noise,
    two_point_gradient,
    upsilon,
)
from learners.ldp.bases import _hazan_levy_radius
from learners.ldp_instances import (
    BernoulliArms,
    ContextualInstance,
    QuadraticLoss,
    convex_quadratic,
    glm_bandit,
    link_constants,
    load_ratings,
    movielens_instance,
    standin_ratings,
    strongly_convex_quadratic,
    synthetic_linear,
    unit_sphere,
)

DELTA = 1e-3
N = 200_000  # samples for the std checks: relative sd of a sample std ~ 1/sqrt(2N) = 0.0016


def _classic(eps: float, delta: float, sens: float) -> float:
    return sens * math.sqrt(2 * math.log(1.25 / delta)) / eps


def _std_close(samples: np.ndarray, sd: float, tol: float = 0.01) -> None:
    assert abs(float(np.std(samples)) / sd - 1) < tol


def _slope(horizons: list[int], regrets: list[float]) -> float:
    return float(np.polyfit(np.log(horizons), np.log(regrets), 1)[0])


QUAD = strongly_convex_quadratic(3, np.array([0.6, 0.3, 0.0]))


# ---------------------------------------------------------------------------------------
# Noise of every message (spec §10, first bullet)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("calibration", ["classic", "exact"])
@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_algorithm1_noise_std_is_its_formula(calibration: str, eps: float) -> None:
    learner = make_learner("one-point", eps, delta=DELTA, calibration=calibration)
    noise = noise_of(learner, QUAD, 1000)
    B = QUAD.bound
    want = (
        _classic(eps, DELTA, 2 * B) if calibration == "classic" else gaussian_multiplier(eps, DELTA) * 2 * B
    )
    assert noise.sigma == pytest.approx(want, rel=1e-12)
    assert noise.sigma >= want  # rounded toward more noise
    msg = privatize_loss(np.zeros(N), B, noise, np.random.default_rng(1))
    _std_close(msg, want)
    assert noise.messages[0].sensitivity == 2 * B


def test_algorithm1_laplace_for_pure_epsilon() -> None:
    noise = noise_of(make_learner("one-point", 2.0), QUAD, 100)  # delta=None: pure ε
    b = 2 * QUAD.bound / 2.0
    assert noise.kind == "laplace"
    assert noise.sigma == pytest.approx(b, rel=1e-12)
    msg = privatize_loss(np.zeros(N), QUAD.bound, noise, np.random.default_rng(2))
    _std_close(msg, math.sqrt(2) * b)  # Laplace(b) has sd b√2
    assert noise.ledger().pure_epsilon() <= 2.0


@pytest.mark.parametrize("calibration", ["classic", "exact"])
def test_algorithm2_noise_std_is_2_rho_sigma(calibration: str) -> None:
    eps, T = 0.8, 5000
    learner = make_learner("two-point", eps, delta=DELTA, calibration=calibration)
    noise = noise_of(learner, QUAD, T)
    G = QUAD.lipschitz
    rho = math.log(T) / T
    sigma = (
        _classic(eps, DELTA, 2 * G) if calibration == "classic" else gaussian_multiplier(eps, DELTA) * 2 * G
    )
    assert noise.sigma == pytest.approx(sigma, rel=1e-12)
    assert noise.messages[0].sd == pytest.approx(2 * rho * sigma, rel=1e-12)
    assert noise.messages[0].sensitivity == pytest.approx(4 * rho * G, rel=1e-12)
    u = unit_sphere(np.random.default_rng(3), (N,), QUAD.dim)
    msg = privatize_difference(np.zeros(N), 2 * rho * u, 2 * rho * G, noise, np.random.default_rng(4))
    _std_close(msg, 2 * rho * sigma)


def test_symmetric_noise_exact_symmetry_and_variance_everywhere() -> None:
    d, sigma, n = 4, 1.7, 50_000
    B = symmetric_noise(np.random.default_rng(5), (n,), d, sigma)
    assert np.array_equal(B, B.swapaxes(-1, -2))  # exactly symmetric
    var = B.var(axis=0) / sigma**2
    assert np.all(np.abs(var - 1) < 0.03)  # every entry, the diagonal included (sd of the estimate ~0.006)
    iu = np.triu_indices(d)
    upper = B[:, iu[0], iu[1]]
    corr = np.corrcoef(upper.T) - np.eye(upper.shape[1])
    assert np.abs(corr).max() < 0.03  # the upper triangle is independent
    # learners.linear's (N + Nᵀ)/2 would give σ²/2 off the diagonal: not this module's law (P2)
    M = np.random.default_rng(6).normal(0, sigma, (n, d, d))
    half = (M + M.swapaxes(-1, -2)) / 2
    assert half[:, 0, 1].var() / sigma**2 == pytest.approx(0.5, abs=0.03)


def test_upsilon_bounds_the_accumulated_matrix_noise() -> None:
    """Spec §7.3 [RECON]: ‖Σ_{s<=t} B_s‖₂ <= Υ_t w.p. >= 1 - α/(2T); the sum of t mirrored matrices
    is one mirrored matrix of entry sd σ√t, so it is drawn directly (500 draws at d = 5, 20)."""
    sigma, T, alpha = 0.3, 10**4, 0.1
    for d in (5, 20):
        for t in (1, 100, T):
            N_t = symmetric_noise(np.random.default_rng(t + d), (500,), d, sigma * math.sqrt(t))
            norms = np.abs(np.linalg.eigvalsh(N_t)).max(axis=1)
            bound = upsilon(sigma, t, d, T, alpha)
            assert norms.max() <= bound
            assert norms.max() <= 0.5 * bound  # loose: Wigner's 2σ√(td) against 4σ√(td) + 2σ√t ln(2T/α)


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
        _std_close(matrix, noise.sigma)
        _std_close(vector, noise.sigma)
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
    _std_close(matrix, sigma)
    _std_close(vector, sigma)
    _std_close(gradient, C * sigma)


# ---------------------------------------------------------------------------------------
# Calibration helper (spec §7.1)
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# The official code's constants (spec §6.2, P6, P7)
# ---------------------------------------------------------------------------------------


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


def test_run_reports_the_code_modes_exact_epsilon() -> None:
    inst = synthetic_linear()
    code = run(
        make_learner("ldp-linucb", 1e3, delta=0.1, mode="code", reward_bound=1.0),
        inst, 50, rng=np.random.default_rng(0), checkpoints=5,
    )  # fmt: skip
    assert not code.privacy.meets_claim
    assert code.privacy.epsilon > 1e3
    assert "lacks the factor 2 under the square root" in code.privacy.message
    paper = run(make_learner("ldp-linucb", 1e3, delta=0.1), inst, 50, rng=np.random.default_rng(0))
    assert paper.privacy.meets_claim
    assert paper.privacy.epsilon <= 1e3


# ---------------------------------------------------------------------------------------
# Regret (spec §10)
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_algorithm1_fkm_sublinear_and_worse_at_smaller_epsilon() -> None:
    horizons = [2000, 8000, 32000]
    regrets = []
    for T in horizons:
        res = run(
            make_learner("one-point", 10.0, delta=DELTA), QUAD, T, rng=np.random.default_rng(T), repetitions=8
        )
        assert res.pseudo_regret.shape == (8, res.rounds.size)
        assert res.rounds[-1] == T
        regrets.append(float(res.pseudo_regret[:, -1].mean()))
    assert _slope(horizons, regrets) < 0.95  # measured 0.89 (T^{3/4} rate after a linear transient)
    small = run(
        make_learner("one-point", 0.5, delta=DELTA), QUAD, 32000, rng=np.random.default_rng(1), repetitions=8
    )
    assert small.pseudo_regret[:, -1].mean() > regrets[-1]


@pytest.mark.slow
def test_algorithm5_sublinear_regret() -> None:
    inst = synthetic_linear()  # d = 5, K = 10, ‖θ*‖ = 1
    horizons = [500, 2000, 8000]
    regrets = []
    for T in horizons:
        res = run(
            make_learner("ldp-linucb", 100.0, delta=DELTA),
            inst,
            T,
            rng=np.random.default_rng(T),
            repetitions=4,
        )
        regrets.append(float(res.pseudo_regret[:, -1].mean()))
        assert res.indefinite.sum() == 0
    assert _slope(horizons, regrets) < 0.75  # measured 0.13 at ε = 100
    assert regrets[-1] / horizons[-1] ** 0.75 < regrets[0] / horizons[0] ** 0.75


@pytest.mark.slow
@pytest.mark.parametrize("link", ["logistic", "poisson"])
def test_algorithm3_theta_hat_stays_in_the_unit_ball(link: str) -> None:
    inst = glm_bandit(link)
    res = run(
        make_learner("ldp-glm", 10.0, delta=DELTA, step=0.5),
        inst,
        3000,
        rng=np.random.default_rng(9),
        repetitions=4,
    )
    assert np.all(res.theta_hat_norm <= 1.0)
    assert np.all(res.theta_hat_norm > 0.99)  # the large step pushes it to the boundary: the projection acts
    assert np.all(np.diff(res.pseudo_regret, axis=1) >= -1e-12)


@pytest.mark.slow
def test_algorithm3_learns_at_large_epsilon() -> None:
    inst = glm_bandit("logistic")
    regrets = []
    for T in (500, 2000, 8000):
        res = run(
            make_learner("ldp-glm", 100.0, delta=DELTA), inst, T, rng=np.random.default_rng(T), repetitions=4
        )
        regrets.append(float(res.pseudo_regret[:, -1].mean()))
    assert _slope([500, 2000, 8000], regrets) < 0.75  # measured 0.27


@pytest.mark.slow
def test_algorithm2_strongly_convex_is_logarithmic_without_noise() -> None:
    regrets = []
    for T in (2000, 8000, 32000):
        learner = make_learner("two-point", strong_convexity=1.0)
        regrets.append(
            float(
                run(learner, QUAD, T, rng=np.random.default_rng(T), repetitions=4).pseudo_regret[:, -1].mean()
            )
        )
    assert max(regrets) < 5  # O(log T): measured about 1.1 at every horizon


@pytest.mark.slow
@pytest.mark.parametrize(
    "base", [FKM(), ADXOnePoint(mu=1.0), SahaTewari(smoothness=1.0), HazanLevy(mu=1.0, smoothness=1.0)]
)
def test_every_continuous_base_plays_in_the_ball_and_learns(base: object) -> None:
    feedback = Feedback(QUAD.dim, 4000, QUAD.bound, 0.0, QUAD.bound, QUAD.lipschitz)
    state = base.start(6, feedback, np.random.default_rng(10))  # type: ignore[attr-defined]
    gen = np.random.default_rng(11)
    early = late = 0.0
    for t in range(4000):
        x = state.propose()
        assert np.all(np.linalg.norm(x, axis=1) <= 1 + 1e-12)
        losses = QUAD.evaluate(x[:, None, :], gen)
        state.observe(losses.values[:, 0])
        if t < 200:
            early += float(losses.means.mean())
        elif t >= 3800:
            late += float(losses.means.mean())
    assert late < early


def test_ucb_base_on_bernoulli_arms() -> None:
    arms = BernoulliArms(np.array([0.2, 0.5, 0.6, 0.7]))
    res = run(
        make_learner("one-point", 10.0, delta=DELTA, base=UCB(4)),
        arms,
        20000,
        rng=np.random.default_rng(0),
        repetitions=4,
    )
    final = res.pseudo_regret[:, -1].mean()
    assert final < 0.1 * 20000 * 0.3  # far below uniform play (mean gap 0.3): measured 339 of 6000


# ---------------------------------------------------------------------------------------
# Unbiasedness (spec §7.7, §7.8) and the privatized statistics
# ---------------------------------------------------------------------------------------


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
    # the noise term d (nᵀu) u has E‖.‖² = d² σ² (spec §3.3), whatever ρ
    noise_part = g - two_point_gradient(diff, u, rho)
    assert float((noise_part**2).sum(axis=1).mean()) == pytest.approx(9 * noise.sigma**2, rel=0.02)


def test_privatized_statistics_are_unbiased() -> None:
    gen = np.random.default_rng(14)
    n = 50_000
    x = np.tile(np.array([0.6, 0.0, -0.8]), (n, 1))
    y = np.full(n, 0.5)
    matrix, vector = privatize_linear(x, y, 1.0, 2.0, gen)
    assert np.abs(matrix.mean(axis=0) - np.outer(x[0], x[0])).max() < 4 / math.sqrt(n)
    assert np.abs(vector.mean(axis=0) - 0.5 * x[0]).max() < 4 / math.sqrt(n)


# ---------------------------------------------------------------------------------------
# Runs: shape, ledgers, reproducibility
# ---------------------------------------------------------------------------------------


def test_run_result_shape_and_ledger() -> None:
    res = run(
        make_learner("ldp-linucb", 2.0, delta=DELTA),
        synthetic_linear(),
        300,
        rng=np.random.default_rng(0),
        repetitions=3,
        checkpoints=30,
    )
    assert res.rounds.shape == (30,)
    assert res.rounds[-1] == 300
    assert res.pseudo_regret.shape == res.realized_regret.shape == (3, 30)
    assert not res.pseudo_regret.flags.writeable
    assert set(res.ledgers) == {1}
    assert isinstance(res.ledgers[1], Accountant)
    assert len(res.ledgers[1].ledger) == 2  # the matrix and the vector block
    assert res.privacy.meets_claim
    assert res.privacy.epsilon <= 2.0
    assert not np.allclose(res.pseudo_regret[0], res.pseudo_regret[1])  # repetitions differ
    again = run(
        make_learner("ldp-linucb", 2.0, delta=DELTA),
        synthetic_linear(),
        300,
        rng=np.random.default_rng(0),
        repetitions=3,
        checkpoints=30,
    )
    assert np.array_equal(res.pseudo_regret, again.pseudo_regret)


def test_common_environment_stream() -> None:
    inst = synthetic_linear()
    a = run(
        make_learner("ldp-linucb", 5.0, delta=DELTA),
        inst,
        200,
        rng=np.random.default_rng(1),
        env_rng=np.random.default_rng(7),
    )
    b = run(
        make_learner("ldp-linucb", 5.0, delta=DELTA),
        inst,
        200,
        rng=np.random.default_rng(2),
        env_rng=np.random.default_rng(7),
    )
    assert a.pseudo_regret[0, 0] == b.pseudo_regret[0, 0]  # same first users and first action (Ṽ_0 = c_1 I)


def test_non_private_baseline() -> None:
    res = run(make_learner("one-point"), QUAD, 500, rng=np.random.default_rng(0))
    assert res.noise.kind == "none"
    assert res.ledgers == {}
    assert not res.privacy.certified


# ---------------------------------------------------------------------------------------
# MovieLens (spec §6.2)
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: make_learner("one-point", 0.0, delta=DELTA), "epsilon"),
        (lambda: make_learner("one-point", -1.0, delta=DELTA), "epsilon"),
        (lambda: make_learner("ldp-linucb", 1.0, delta=0.0), "delta"),
        (lambda: make_learner("ldp-linucb", 1.0, delta=1.0), "delta"),
        (lambda: make_learner("ldp-glm", 1.0), "delta"),
        (lambda: make_learner("one-point", 1.0, delta=DELTA, mode="code"), "mode"),
        (lambda: make_learner("nope", 1.0), "algorithm"),
        (lambda: make_learner("one-point", 1.0, colour=1), "colour"),
        (lambda: link_constants("probit"), "link"),
        (lambda: glm_bandit("probit"), "link"),
        (lambda: ContextualInstance(np.ones(3) / 2, 4, link="cauchit"), "link"),
        (lambda: synthetic_linear(0), "d"),
        (lambda: convex_quadratic(0), "d"),
        (lambda: QuadraticLoss(np.array([1.0, 0.0]), np.ones(2)), "minimizer"),
        (lambda: composed_sigmas(0.0, DELTA, [1.0]), "epsilon"),
        (lambda: composed_sigmas(1.0, 2.0, [1.0]), "delta"),
        (lambda: code_mode_check(1.0, 0.0), "delta"),
        (lambda: make_learner("one-point", 1.0, mechanism="randomized-response", delta=DELTA), "delta"),
        (lambda: make_learner("one-point", 1.0, mechanism="laplace", delta=DELTA), "delta"),
        (lambda: make_learner("one-point", 1.0, mechanism="gaussian"), "delta"),
        (lambda: make_learner("one-point", None, mechanism="laplace"), "mechanism"),
        (lambda: make_learner("one-point", 1.0, mechanism="coin"), "mechanism"),
        (lambda: make_learner("two-point", 1.0, mechanism="randomized-response"), "mechanism"),
        (lambda: make_learner("ldp-linucb", 1.0, mechanism="laplace"), "mechanism"),
    ],
)
def test_bad_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(ParameterError) as info:
        call()  # type: ignore[operator]
    assert info.value.name == field


def test_glm_refuses_identity_link_instance() -> None:
    with pytest.raises(ParameterError) as info:
        run(make_learner("ldp-glm", 1.0, delta=DELTA), synthetic_linear(), 10, rng=np.random.default_rng(0))
    assert info.value.name == "link"


def test_learner_is_a_value() -> None:
    learner = make_learner("ldp-linucb", 1.0, delta=DELTA)
    assert isinstance(learner, Learner)
    assert learner == make_learner("ldp-linucb", 1.0, delta=DELTA)
    assert learner.label == "LDP-LinUCB(ε=1, paper)"


# ---------------------------------------------------------------------------------------
# Randomized response (issue 18 §3: a locally private UCB by the Laplace mechanism or RR)
# ---------------------------------------------------------------------------------------


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


def test_rr_flips_with_probability_one_over_one_plus_e_eps_and_is_unbiased() -> None:
    """The reported bit of a loss 1 is 1 with probability p = e^ε/(1 + e^ε), of a loss 0 with q:
    the likelihood ratio of every output is e^ε (ε-LDP, tight); the decoded mean is the loss."""
    eps = 1.0
    arms = BernoulliArms(np.array([0.3, 0.6]))
    noise = noise_of(make_learner("one-point", eps, mechanism="randomized-response", base=UCB(2)), arms, 10)
    assert noise.loss_range == (0.0, 1.0)
    v0, v1 = rr_outputs(0.0, 1.0, eps)
    gen = np.random.default_rng(5)
    p = math.exp(eps) / (1 + math.exp(eps))
    for loss, want in ((1.0, p), (0.0, 1 - p)):
        out = privatize_loss(np.full(N, loss), 1.0, noise, gen)
        assert set(np.unique(out).tolist()) == {v0, v1}
        share = float(np.mean(out == v1))
        assert abs(share - want) < 5 * math.sqrt(want * (1 - want) / N)
        assert abs(float(out.mean()) - loss) < 5 * float(out.std()) / math.sqrt(N)
    fractional = privatize_loss(np.full(N, 0.25), 1.0, noise, gen)  # rounded to a bit first
    assert abs(float(fractional.mean()) - 0.25) < 5 * float(fractional.std()) / math.sqrt(N)
    assert 2 * noise.sigma == pytest.approx(v1 - v0)  # the sub-Gaussian scale: half the range


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0])
def test_rr_and_laplace_ledgers_are_exactly_eps_on_bernoulli_arms(eps: float) -> None:
    """Bernoulli losses are bits: the message's sensitivity is 1 (Laplace scale 1/ε, not 2/ε),
    and both pure mechanisms certify exactly ε (randomized response is PureDP's worst case)."""
    arms = BernoulliArms(np.array([0.3, 0.6]))
    for mechanism in ("laplace", "randomized-response"):
        learner = make_learner("one-point", eps, mechanism=mechanism, base=UCB(2))
        res = run(learner, arms, 50, rng=np.random.default_rng(0), repetitions=2)
        (message,) = res.noise.messages
        assert message.sensitivity == 1.0
        assert res.privacy.delta == 0.0
        assert res.privacy.meets_claim
        assert res.privacy.epsilon <= eps
        assert res.privacy.epsilon == pytest.approx(eps, rel=1e-12)
        if mechanism == "laplace":
            assert message.sd == pytest.approx(1 / eps, rel=1e-14)
            assert message.sd >= 1 / eps  # rounded toward more noise
    # a quadratic's losses span [-B, B]: the paper's Δ = 2B is unchanged
    quad = convex_quadratic(2)
    assert noise_of(make_learner("one-point", 1.0, mechanism="laplace"), quad, 10).messages[
        0
    ].sensitivity == (2 * quad.bound)


@pytest.mark.slow
def test_ldp_ucb_by_randomized_response_learns() -> None:
    """LDP-UCB with randomized response: regret far below uniform play, falling as ε grows."""
    arms = BernoulliArms(np.array([0.25, 0.4, 0.55, 0.7]))
    T = 20_000
    finals = []
    for eps in (0.5, 4.0):
        learner = make_learner("one-point", eps, mechanism="randomized-response", base=UCB(4))
        res = run(learner, arms, T, rng=np.random.default_rng(1), repetitions=4)
        finals.append(float(res.pseudo_regret[:, -1].mean()))
    uniform = T * float(np.mean(arms.means - arms.means.min()))
    assert finals[1] < finals[0] < 0.5 * uniform


# ---------------------------------------------------------------------------------------
# Hazan–Levy's FTRL step (the radius root)
# ---------------------------------------------------------------------------------------


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


def test_the_code_mode_runs_the_code_radius_unless_told_otherwise() -> None:
    """``mode="code"`` is the official algorithm: its β_t (the code's radius) by default; the paper
    mode's default is the derived radius; an explicit radius wins in both."""
    assert make_learner("ldp-linucb", 1.0, delta=DELTA, mode="code").radius == "code"
    assert make_learner("ldp-linucb", 1.0, delta=DELTA).radius == "derived"
    assert make_learner("ldp-linucb", 1.0, delta=DELTA, mode="code", radius="derived").radius == "derived"
    assert make_learner("ldp-linucb", 1.0, delta=DELTA, radius="code").radius == "code"
    with pytest.raises(ParameterError) as info:
        make_learner("ldp-linucb", 1.0, delta=DELTA, radius="wide")
    assert info.value.name == "radius"
