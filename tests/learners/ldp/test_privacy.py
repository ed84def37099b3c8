"""What a run guarantees (:mod:`learners.ldp.privacy`): the exact ε of what was released, in every
mode and mechanism."""

from __future__ import annotations

import numpy as np
import pytest

from learners.ldp import (
    UCB,
    make_learner,
    noise_of,
    run,
)
from learners.ldp_instances import (
    BernoulliArms,
    convex_quadratic,
    synthetic_linear,
)


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
