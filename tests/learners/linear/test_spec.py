"""A learner's settings and a run's arguments are validated (:mod:`learners.linear.spec`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from learners.errors import ParameterError, ParameterTypeError
from learners.linear import (
    make_learner,
    run,
)
from learners.linear_instances import SyntheticInstance
from tests.learners.linear.support import BATCH, tapes

# ------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"name": "nope"}, ParameterError, "algorithm"),
        ({"name": "ldp-fedlinucb", "delta": 0.1}, ParameterError, "epsilon"),
        ({"name": "ldp-fedlinucb", "epsilon": 1.0}, ParameterError, "delta"),
        ({"name": "ldp-fedlinucb", "epsilon": -1.0, "delta": 0.1}, ParameterError, "epsilon"),
        ({"name": "ldp-fedlinucb", "epsilon": 1.0, "delta": 1.0}, ParameterError, "delta"),
        ({"name": "ldp-fedlinucb", "epsilon": "1", "delta": 0.1}, ParameterTypeError, "epsilon"),
        ({"name": "fedlinucb", "epsilon": 1.0}, ParameterError, "epsilon"),
        ({"name": "fedlinucb", "batch": 0}, ParameterError, "batch"),
        ({"name": "fedlinucb", "batch": 2.5}, ParameterError, "batch"),
        ({"name": "fedlinucb", "sigma_mode": "loose"}, ParameterError, "sigma_mode"),
        ({"name": "fedlinucb", "sensitivity": "none"}, ParameterError, "sensitivity"),
        ({"name": "fedlinucb", "radius": "big"}, ParameterError, "radius"),
        ({"name": "fedlinucb", "radius_scale": 0.0}, ParameterError, "radius_scale"),
        ({"name": "fedlinucb", "alpha": 1.5}, ParameterError, "alpha"),
        ({"name": "fedlinucb", "regularizer": -1.0}, ParameterError, "regularizer"),
        ({"name": "fedlinucb", "eig_floor": 0.0}, ParameterError, "eig_floor"),
        ({"name": "fedlinucb", "threshold": 3.0}, ParameterError, "threshold"),
        ({"name": "fedlinucb", "bound": float("nan")}, ParameterError, "bound"),
        ({"name": "dubey-pentland", "epsilon": 1.0, "delta": 0.1, "batch": 5}, ParameterError, "batch"),
        (
            {"name": "dubey-pentland", "epsilon": 1.0, "delta": 0.1, "sensitivity": "batch"},
            ParameterError,
            "sensitivity",
        ),
        ({"name": "fedlinucb", "speed": 3}, ParameterError, "speed"),
    ],
)
def test_bad_learner_parameters(kwargs: dict[str, Any], error: type[Exception], name: str) -> None:
    kw = dict(kwargs)
    with pytest.raises(error, match=name):
        make_learner(kw.pop("name"), **kw)


def test_bad_run_arguments(inst: SyntheticInstance) -> None:
    learner = make_learner("fedlinucb", batch=BATCH)
    rng = np.random.default_rng(0)
    with pytest.raises(ParameterError, match="horizon"):
        run(learner, inst, BATCH - 1, tapes=tapes(1), rng=rng)
    with pytest.raises(ParameterError, match="tapes"):
        run(learner, inst, 10, tapes=[], rng=rng)
    with pytest.raises(ParameterTypeError, match="tapes"):
        run(learner, inst, 10, tapes=[3], rng=rng)  # type: ignore[list-item]
    with pytest.raises(ParameterTypeError, match="rng"):
        run(learner, inst, 10, tapes=tapes(1), rng=1)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="instances"):
        run(learner, [inst, inst], 10, tapes=tapes(1), rng=rng)
    with pytest.raises(ParameterError, match="checkpoints"):
        run(learner, inst, 10, tapes=tapes(1), rng=rng, checkpoints=0)
    with pytest.raises(ParameterError, match="delta"):
        run(learner, inst, 10, tapes=tapes(1), rng=rng, delta=2.0)
    with pytest.raises(ParameterTypeError, match="learner"):
        run("fedlinucb", inst, 10, tapes=tapes(1), rng=rng)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="observer"):
        run(learner, inst, 10, tapes=tapes(1), rng=rng, observer=3)  # type: ignore[arg-type]
