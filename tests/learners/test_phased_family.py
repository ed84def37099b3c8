"""The phased family (DP-DPE, Li, Zhou & Ji 2022, learners.phased) through the one runner: configs,
results, refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from learners.cli import main
from learners.config import _dump_toml
from learners.errors import ConfigError
from learners.experiment import load_config, run_experiment, shipped_configs
from learners.families import PhasedFamily, PhasedInstanceSpec
from tests.learners.test_cli import _fails_in_one_line

SMALL = {"kind": "phased-synthetic", "arms": 20, "dim": 4, "population": 20_000, "instance_seed": 3}


def small(**changes: Any) -> dict[str, Any]:
    """A phased config that runs in about a second."""
    config: dict[str, Any] = {
        "name": "phasedtiny",
        "family": "phased",
        "seed": 5,
        "repetitions": 2,
        "horizon": 4000,
        "checkpoints": 20,
        "chunk": 2,
        "delta": 0.25,
        "epsilons": [2.0, 10.0],
        "instance": dict(SMALL),
        "algorithms": [
            {"name": "dpe", "params": {"mode": "practical"}},
            {"name": "cdp-dpe", "params": {"mode": "practical"}},
            {"name": "ldp-dpe"},
        ],
    }
    config.update(changes)
    return config


def test_shipped_dpdpe_configs_load_in_the_phased_family() -> None:
    names = [n for n in shipped_configs() if n.startswith("dpdpe-")]
    assert names == ["dpdpe-figure2a", "dpdpe-figure2b", "dpdpe-figure2c"]
    for name in names:
        for quick in (False, True):
            config = load_config(shipped_configs()[name], quick=quick)
            assert config.family == "phased"
            assert isinstance(config.panels[0].instance, PhasedInstanceSpec)
    assert load_config(shipped_configs()["dpdpe-figure2a"]).panels[0].x_axis == "epsilon"
    paper = load_config(shipped_configs()["dpdpe-figure2b"]).panels[0]
    paper_instance = paper.instance
    assert isinstance(paper_instance, PhasedInstanceSpec)
    assert (paper.horizon, paper.epsilons, paper_instance.arms, paper_instance.dim) == (
        10**6,
        (10.0,),
        1000,
        20,
    )


@pytest.mark.slow
def test_a_phased_run_writes_regret_privacy_and_communication(tmp_path: Path) -> None:
    out = run_experiment(load_config(small()), tmp_path / "res", progress=False)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["family"] == "phased"
    results = {(r["label"], r["epsilon"]): r for r in summary["results"]}
    cdp = results[("CDP-DPE (practical)", 10.0)]
    exact = cdp["privacy"]["exact"]
    assert exact["certified"]
    assert exact["epsilon"] <= 10.0 * (1 + 1e-9)
    assert cdp["privacy"]["claimed"]["holds"] is True
    assert math.isfinite(exact["epsilon"])
    assert exact["ledgers"]
    assert cdp["communication"]["unit"] == "reals"
    assert cdp["communication"]["clients_mean"] > 0
    dpe = results[("DPE (practical)", None)]
    assert dpe["privacy"]["claimed"] is None
    # every ledger file re-accounts to at most the claim (each client is in one phase)
    from accounting.accountant import Accountant

    for name in exact["ledgers"]:
        ledger = Accountant.from_dict(json.loads((out / name).read_text()))
        assert ledger.epsilon(0.25).hi <= 10.0 * (1 + 1e-9)
    rows = (out / "regret.csv").read_text().splitlines()
    assert len(rows) == 1 + (1 + 2 * 2) * 2 * 20  # header + (DPE + 2 private × 2 ε) × R × checkpoints


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"instance": {**SMALL, "arms": 1}}, "instance.arms"),
        ({"instance": {**SMALL, "dim": 0}}, "instance.dim"),
        ({"instance": {**SMALL, "population": 50}}, "instance.population"),
        ({"epsilons": [0.0]}, "epsilons[0]"),
        ({"delta": 1.0}, "delta"),
        ({"algorithms": [{"name": "ldp-dpe", "params": {"alpha": 0.0}}]}, "algorithms[0].params.alpha"),
        ({"algorithms": [{"name": "ldp-dpe", "params": {"alpha": 1.5}}]}, "algorithms[0].params.alpha"),
        ({"algorithms": [{"name": "ldp-dpe", "params": {"bound": 0}}]}, "algorithms[0].params.bound"),
        ({"algorithms": [{"name": "ldp-dpe", "params": {"mode": "fast"}}]}, "algorithms[0].params.mode"),
    ],
)
def test_bad_phased_configs_name_the_field(
    changes: dict[str, Any], field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(small(**changes))
    assert info.value.name == field, str(info.value)
    path = tmp_path / "bad.toml"
    path.write_text(_dump_toml(small(**changes)))
    _fails_in_one_line(["run", str(path), "--out", str(tmp_path / "r")], capsys, field)
    assert not (tmp_path / "r").exists()


def test_the_family_is_registered_with_its_names() -> None:
    family = PhasedFamily()
    assert family.algorithms["cdp-dpe"]
    assert not family.algorithms["dpe-fixedu"]
    assert "population" in family.instance_keys["phased-synthetic"]
    assert main(["list"]) == 0
    spec = load_config(small()).panels[0].instance
    assert isinstance(spec, PhasedInstanceSpec)
    assert spec.build_shared() is spec.build_shared()  # drawn once per process
    np.testing.assert_allclose(np.linalg.norm(spec.build_shared().actions, axis=1), 1.0)
