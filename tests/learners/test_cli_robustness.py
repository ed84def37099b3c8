"""``dp-regret run`` on extreme and bad configs: each ends cleanly, or with status 2 and one line
naming the config field (or option), its value and what is valid, before anything is built.

The costs of a run are known before they are paid (:mod:`learners.budget`): every family's
estimate of a unit's peak memory and work comes from the shapes its engine allocates, and a
config beyond the budget is refused with the estimate, the budget and the option that raises it.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import pytest

from learners.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_WORK, Budget
from learners.cli import main as regret_main
from learners.config import load_config, shipped_configs
from learners.errors import ConfigError
from learners.families import FAMILIES
from learners.ldp.noise import rr_flip, rr_outputs
from learners.linear.spec import MAX_EIG_FLOOR, make_learner
from learners.linear.state import state_shapes
from learners.toml_writer import dump_toml
from tests.test_cli_contract import assert_refused, invoke


def _shipped(name: str, **changes: Any) -> dict[str, Any]:
    data = tomllib.loads(shipped_configs()[name].read_text(encoding="utf-8"))
    for key, value in changes.items():
        target = data
        *path, last = key.split("__")
        for part in path:
            target = target[part]
        target[last] = value
    return data


def _run(tmp_path: Path, data: dict[str, Any], *options: str) -> Any:
    config = tmp_path / "x.toml"
    config.write_text(dump_toml(data), encoding="utf-8")
    argv = ["run", str(config), "--out", str(tmp_path / "out"), "--no-progress", *options]
    return invoke(regret_main, argv)


_LINEAR = {"kind": "linear-synthetic", "dim": 2, "arms": 2, "agents": 1, "noise_sd": 0.5, "instance_seed": 2}

#: (config, the field the refusal names): every family's costs, known before they are paid.
BEYOND_BUDGET = {
    "linear-T1e12": (
        _shipped(
            "fedlcb-figure2a",
            horizon=10**12,
            repetitions=10**6,
            chunk=10**6,
            checkpoints=10,
            instance=_LINEAR,
        ),
        "horizon=",
    ),
    "linear-d2000": (
        _shipped("fedlcb-figure2a", instance=_LINEAR | {"dim": 2000, "arms": 2000}, repetitions=25, chunk=25),
        "instance=",
    ),
    "linear-chunk": (
        _shipped(
            "fedlcb-figure2a", instance=_LINEAR | {"dim": 1000, "arms": 1000}, repetitions=100, chunk=100
        ),
        "chunk=",
    ),
    "phased-k1e6-d1e4": (
        _shipped(
            "dpdpe-figure2a",
            instance={"kind": "phased-synthetic", "arms": 10**6, "dim": 10**4},
            repetitions=2,
            chunk=2,
        ),
        "instance.arms=",
    ),
    "ldp-d1e4-K1e5": (
        _shipped(
            "ldp-movielens",
            panels=[{"name": "p", "instance": {"kind": "ldp-linear", "dim": 10**4, "arms": 10**5}}],
        ),
        "panels[0].instance=",
    ),
    "mab-T1e12": (_shipped("figure2", horizon=10**12), "horizon="),
    "mab-shares": (
        _shipped(
            "figure2",
            horizon=10**8,
            algorithms=[{"name": "dist-dp-se", "params": {"noise": "shares"}}],
        ),
        "chunk=",
    ),
}


@pytest.mark.parametrize("case", list(BEYOND_BUDGET))
def test_a_config_beyond_the_budget_is_refused_with_its_estimate(tmp_path: Path, case: str) -> None:
    data, field = BEYOND_BUDGET[case]
    outcome = _run(tmp_path, data)
    assert_refused(outcome, "dp-regret", field)
    assert "--max-memory" in outcome.err or "--max-work" in outcome.err, outcome.err
    assert "above the budget of" in outcome.err, outcome.err
    assert "about" in outcome.err, outcome.err
    assert not (tmp_path / "out").exists()


def test_the_budget_options_are_checked() -> None:
    outcome = invoke(regret_main, ["run", "x.toml", "--max-memory", "0"])
    assert_refused(outcome, "dp-regret", "--max-memory")
    outcome = invoke(regret_main, ["run", "x.toml", "--max-work", "lots"])
    assert_refused(outcome, "dp-regret", "--max-work")


def test_raising_the_budget_lifts_the_refusal() -> None:
    data, _ = BEYOND_BUDGET["linear-chunk"]
    with pytest.raises(ConfigError) as info:
        load_config(data)
    assert info.value.name == "chunk"
    load_config(data, budget=Budget(64 * 2**30, math.inf))


@pytest.mark.parametrize("name", list(shipped_configs()))
def test_every_shipped_config_is_within_the_default_budget(name: str) -> None:
    config = load_config(shipped_configs()[name])  # refused otherwise
    count = min(config.chunk, config.repetitions)
    for panel in config.panels:
        for algorithm in config.algorithms:
            own = panel.for_family(algorithm.family)
            for eps in own.epsilons if algorithm.private else (None,):
                cost = FAMILIES[algorithm.family].cost(algorithm.learner(eps), own, count, config.checkpoints)
                assert 0 < cost.memory <= DEFAULT_MAX_MEMORY
                assert 0 < cost.work <= DEFAULT_MAX_WORK


def test_the_linear_estimate_counts_the_arrays_the_state_allocates() -> None:
    from learners.linear.noise import noise_of
    from learners.linear.state import State

    learner = make_learner("ldp-fedlinucb", 1.0, delta=1e-4, batch=5, sigma_mode="code")
    noise = noise_of(learner, 200, 3, dim=4)
    st = State(learner, noise, 1.0, 2, 3, 4, None)
    for name, shape in state_shapes(learner, noise.kappa, 2, 3, 4, vector=False).items():
        if hasattr(st, name):
            assert getattr(st, name).shape == shape, name


# -- bad input that ran -------------------------------------------------------------------------


def test_eig_floor_above_one_half_is_refused(tmp_path: Path) -> None:
    """Zhou & Chowdhury (2024), proof of Lemma C.4: λ = 2Σ_N keeps the eigenvalues of λI + W̃
    above λ/2, so the safeguard's floor is at most λ/2."""
    assert MAX_EIG_FLOOR == 0.5
    data = _shipped("fedlcb-figure2a")
    data["algorithms"][0]["params"]["eig_floor"] = 1
    assert_refused(_run(tmp_path, data, "--quick"), "dp-regret", "algorithms[0].params.eig_floor=1")


def test_randomized_response_takes_every_epsilon_without_overflow() -> None:
    """Warner (1965): the flip probability 1/(1 + e^ε), beyond e^ε's float range too."""
    assert rr_flip(1.0) == 1.0 / (1.0 + math.exp(1.0))
    assert 0 <= rr_flip(800.0) < 1e-300
    v0, v1 = rr_outputs(0.0, 1.0, 800.0)
    assert math.isfinite(v0)
    assert math.isfinite(v1)


@pytest.mark.parametrize(
    ("key", "value"),
    [("base_rho", 1.5), ("base_eta", 0.0), ("base_rho0", -1.0)],
)
def test_the_base_learners_check_their_keywords(tmp_path: Path, key: str, value: float) -> None:
    data = _shipped("ldp-table1-fkm")
    data["algorithms"][0]["params"][key] = value
    assert_refused(_run(tmp_path, data, "--quick"), "dp-regret", f"algorithms[0].params.{key}=")
