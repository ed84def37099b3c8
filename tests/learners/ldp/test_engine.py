"""The vectorized runs (:mod:`learners.ldp.engine`): sublinear regret of Algorithms 1, 2, 3 and 5
(Zheng et al. 2020) at small horizons, a run's shape and ledger, reproducibility."""

from __future__ import annotations

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
    SahaTewari,
    make_learner,
    run,
)
from learners.ldp_instances import (
    BernoulliArms,
    glm_bandit,
    synthetic_linear,
)
from tests.learners.ldp.support import DELTA, QUAD, slope


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
    assert slope(horizons, regrets) < 0.95  # measured 0.89 (T^{3/4} rate after a linear transient)
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
    assert slope(horizons, regrets) < 0.75  # measured 0.13 at ε = 100
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
    assert slope([500, 2000, 8000], regrets) < 0.75  # measured 0.27


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
