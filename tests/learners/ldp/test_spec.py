"""A learner's settings and a run's arguments are validated (:mod:`learners.ldp.spec`)."""

from __future__ import annotations

import numpy as np
import pytest

from learners.errors import ParameterError
from learners.ldp import (
    Learner,
    code_mode_check,
    composed_sigmas,
    make_learner,
    run,
)
from learners.ldp_instances import (
    ContextualInstance,
    QuadraticLoss,
    convex_quadratic,
    glm_bandit,
    link_constants,
    synthetic_linear,
)
from tests.learners.ldp.support import DELTA


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
