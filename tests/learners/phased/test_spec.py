"""The schedule of clients and a learner's and a run's settings (:mod:`learners.phased.spec`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from learners.errors import ParameterError, ParameterTypeError
from learners.phased import (
    clients_needed,
    fixed_clients,
    make_learner,
    phase_clients,
    run,
)
from learners.phased_instances import PhasedInstance, draw_instance
from tests.learners.phased.support import tapes


def test_schedule() -> None:
    """|U_l| = ⌈2^{αl}⌉ (at l = 10, 15, 19: 256, 4096, 37641); DPE-FixedU's U (Li, Zhou & Ji
    2022, §7)."""
    assert [phase_clients(0.8, j) for j in (10, 15, 19)] == [256, 4096, 37641]
    # T = 10^6: 18 phases can finish (h_l = 2^l), Σ_{l<=18} ⌈2^{0.8 l}⌉ = 50796 (8.8e4 counts the
    # 19th, which does not finish)
    assert fixed_clients(0.8, 10**6) == round(50796 / 18) == 2822
    assert sum(phase_clients(0.8, j) for j in range(1, 20)) == 88437
    assert clients_needed(make_learner("dpe"), 10**6) == 50796
    assert clients_needed(make_learner("dpe-fixedu"), 10**6) == 18 * 2822
    assert clients_needed(make_learner("pe"), 1000) == 1000


# ------------------------------------------------------------------------------------------
# Bad input
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"name": "nope"}, "algorithm"),
        ({"name": "cdp-dpe", "epsilon": 0.0, "delta": 0.1}, "epsilon"),
        ({"name": "cdp-dpe", "epsilon": -1.0, "delta": 0.1}, "epsilon"),
        ({"name": "cdp-dpe", "epsilon": 1.0, "delta": 0.0}, "delta"),
        ({"name": "cdp-dpe", "epsilon": 1.0, "delta": 1.0}, "delta"),
        ({"name": "cdp-dpe", "epsilon": 1.0}, "delta"),
        ({"name": "cdp-dpe", "delta": 0.1}, "epsilon"),
        ({"name": "dpe", "epsilon": 1.0}, "epsilon"),
        ({"name": "dpe", "alpha": 0.0}, "alpha"),
        ({"name": "dpe", "alpha": 1.5}, "alpha"),
        ({"name": "dpe", "bound": 0.0}, "bound"),
        ({"name": "dpe", "bound": -1.0}, "bound"),
        ({"name": "dpe", "mode": "fast"}, "mode"),
        ({"name": "cdp-dpe", "epsilon": 1.0, "delta": 0.1, "calibration": "rdp"}, "calibration"),
        ({"name": "cdp-dpe", "epsilon": 1.0, "delta": 0.1, "clipped": False}, "clipped"),
        ({"name": "dpe", "clients": 10}, "clients"),
        ({"name": "dpe-fixedu", "clients": 0}, "clients"),
        ({"name": "sdp-dpe", "epsilon": 15.0, "delta": 0.1}, "epsilon"),
        ({"name": "sdp-pe", "epsilon": 1.0, "delta": 0.5}, "delta"),
        ({"name": "dpe", "beta": 1.0}, "beta"),
        ({"name": "dpe", "design_c": 0.0}, "design_c"),
        ({"name": "dpe", "colour": "red"}, "colour"),
    ],
)
def test_bad_learner(kwargs: dict[str, Any], field: str) -> None:
    kw = dict(kwargs)
    name, eps = kw.pop("name"), kw.pop("epsilon", None)
    with pytest.raises(ParameterError) as err:
        make_learner(name, eps, **kw)
    assert err.value.name == field


def test_bad_instance() -> None:
    rng = np.random.default_rng(0)
    for kwargs, field in (
        ({"arms": 1}, "arms"),
        ({"dim": 0}, "dim"),
        ({"population": 0}, "population"),
        ({"client_sd": -0.1}, "client_sd"),
        ({"noise_sd": 2.0}, "noise_sd"),
        ({"theta_norm": 1.5}, "theta_norm"),
    ):
        with pytest.raises(ParameterError) as err:
            draw_instance(rng, **kwargs)
        assert err.value.name == field
    with pytest.raises(ParameterError) as err:
        PhasedInstance(np.array([[1.0], [2.0]]), np.array([1.0]))
    assert err.value.name == "actions"
    with pytest.raises(ParameterError) as err:
        PhasedInstance(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1.0, 0.0]))
    assert err.value.name == "theta"
    with pytest.raises(ParameterError) as err:
        PhasedInstance(np.zeros((0, 2)), np.zeros(2))
    assert err.value.name == "arms"
    with pytest.raises(ParameterTypeError):
        draw_instance(0)  # type: ignore[arg-type]


def test_bad_run(inst: PhasedInstance) -> None:
    learner = make_learner("dpe")
    small = draw_instance(np.random.default_rng(0), arms=5, dim=2, population=100)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"instances": small}, "population"),
        ({"tapes": []}, "tapes"),
        ({"tapes": [0]}, "tapes[0]"),
        ({"rng": 3}, "rng"),
        ({"horizon": 0}, "horizon"),
        ({"horizon": 2.5}, "horizon"),
        ({"checkpoints": 0}, "checkpoints"),
        ({"instances": [inst]}, "instances"),
        ({"instances": [inst, small]}, "instances"),
        ({"learner": "dpe"}, "learner"),
        ({"delta": 2.0}, "delta"),
    ]
    for change, field in cases:
        kw: dict[str, Any] = {"learner": learner, "instances": inst, "horizon": 512}
        kw |= {"tapes": tapes(2), "rng": np.random.default_rng(0)}
        kw.update(change)
        with pytest.raises((ParameterError, ParameterTypeError)) as err:
            run(kw.pop("learner"), kw.pop("instances"), kw.pop("horizon"), **kw)
        assert isinstance(err.value, (ParameterError, ParameterTypeError))
        assert err.value.name == field, (change, err.value)
    with pytest.raises(ParameterError) as err:
        run(make_learner("pe"), small, 101, tapes=tapes(1), rng=np.random.default_rng(0))
    assert err.value.name == "population"
    assert "101" in str(err.value)
