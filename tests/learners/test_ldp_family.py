"""The LDP family (Zheng et al., learners.ldp) through the one runner: configs, results, refusals,
and the ``x_axis = "horizon"`` figure read back against regret.csv."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from accounting.accountant import Accountant
from learners import ldp
from learners.config import _dump_toml
from learners.errors import ConfigError
from learners.experiment import load_config, run_experiment, shipped_configs
from learners.families import FAMILIES, LDPFamily, LDPInstanceSpec
from tests.learners.test_cli import _fails_in_one_line

LINEAR = {"kind": "ldp-linear", "dim": 3, "arms": 5}


def small(**changes: Any) -> dict[str, Any]:
    """An LDP config that runs in about two seconds: LDP-LinUCB in the paper's and the code's mode."""
    config: dict[str, Any] = {
        "name": "ldptiny",
        "family": "ldp",
        "seed": 3,
        "repetitions": 2,
        "horizon": 1500,
        "checkpoints": 15,
        "chunk": 2,
        "delta": 0.1,
        "epsilons": [1e3, 1e4],
        "instance": dict(LINEAR),
        "algorithms": [
            {"name": "ldp-linucb"},
            {"name": "ldp-linucb", "label": "code", "params": {"mode": "code", "reward_bound": 1.0}},
        ],
    }
    config.update(changes)
    return config


def write_ratings(path: Path, *, users: int = 30, items: int = 8, bad_line: str | None = None) -> Path:
    """A small file in MovieLens-100K's ``ua.base`` format (user, item, rating, timestamp)."""
    gen = np.random.default_rng(1)
    lines = [
        f"{u}\t{i}\t{int(gen.integers(1, 6))}\t88125{u:04d}"
        for u in range(1, users + 1)
        for i in range(1, items + 1)
        if gen.random() < 0.6
    ]
    if bad_line is not None:
        lines.insert(3, bad_line)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_shipped_ldp_configs_load_in_the_ldp_family() -> None:
    names = [n for n in shipped_configs() if n.startswith("ldp-")]
    assert "ldp-movielens" in names
    for name in names:
        for quick in (False, True):
            config = load_config(shipped_configs()[name], quick=quick)
            assert config.family == "ldp"
            assert config.name == name
            assert all(isinstance(p.instance, LDPInstanceSpec) for p in config.panels)
    movielens = load_config(shipped_configs()["ldp-movielens"])
    (panel,) = movielens.panels
    assert (panel.horizon, panel.epsilons, panel.instance.arms, panel.instance.dim) == (
        10**6,
        (1e5, 2e5, 4e5, 8e5),
        20,
        20,
    )
    assert movielens.repetitions == 1
    assert [dict(a.params)["mode"] for a in movielens.algorithms] == ["code"]


def test_an_ldp_run_writes_regret_privacy_and_ledgers(tmp_path: Path) -> None:
    out = run_experiment(load_config(small()), tmp_path / "res", progress=False)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["family"] == "ldp"
    results = {(r["label"], r["epsilon"]): r for r in summary["results"]}
    assert set(results) == {(label, e) for label in ("LDP-LinUCB (paper)", "code") for e in (1e3, 1e4)}
    for (label, eps), r in results.items():
        privacy = r["privacy"]
        exact, claimed = privacy["exact"], privacy["claimed"]
        assert claimed["epsilon"] == eps
        assert claimed["delta"] == exact["delta"] == 0.1
        if label == "code":  # the official code's σ misses its stated ε (spec P6)
            assert exact["epsilon"] > eps
            assert claimed["holds"] is False
        else:
            assert exact["epsilon"] <= eps * (1 + 1e-12)
            assert claimed["holds"] is True
        # each ledger re-accounts to the summary's exact ε (one user's release)
        (name,) = exact["ledgers"]
        ledger = Accountant.from_dict(json.loads((out / name).read_text()))
        assert ledger.epsilon(0.1).hi == pytest.approx(exact["epsilon"], rel=1e-9)
        assert r["communication"] == {"messages_per_user": 1, "reals_per_user": 3 * 4 // 2 + 3}
        assert privacy["users"] == 2 * 1500
        assert r["pseudo_regret"]["cumulative"]["mean"] > 0
    rows = (out / "regret.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2 * 2 * 15  # header + 2 algorithms × 2 ε × R × checkpoints
    assert "code" in (out / "summary.md").read_text()


def test_the_run_adapter_is_deterministic_and_shares_the_environment(tmp_path: Path) -> None:
    """Every algorithm of a chunk sees the users the repetitions' tapes seed: the non-private
    UCB base (deterministic given the losses) under two labels gives the same curves, though each
    algorithm has its own noise stream; and a second run gives the same regret.csv."""
    ucb = {"base": "ucb", "base_arms": 3}
    config = small(
        instance={"kind": "ldp-bernoulli", "means": [0.7, 0.5, 0.4]},
        epsilons=[2.0],
        algorithms=[
            {"name": "one-point-nonprivate", "params": ucb},
            {"name": "one-point-nonprivate", "label": "again", "params": ucb},
            {"name": "one-point", "params": {**ucb, "mechanism": "laplace"}},
        ],
    )
    first = run_experiment(load_config(config), tmp_path / "a", progress=False)
    second = run_experiment(load_config(config), tmp_path / "b", progress=False)
    assert (first / "regret.csv").read_text() == (second / "regret.csv").read_text()
    summary = json.loads((first / "summary.json").read_text())
    curves = {r["label"]: r["pseudo_regret"]["cumulative"]["mean"] for r in summary["results"]}
    assert curves["again"] == curves["Alg1[ucb] (non-private)"]
    laplace = next(r for r in summary["results"] if r["epsilon"] == 2.0)["privacy"]
    assert laplace["exact"]["route"] == "pure"
    assert laplace["exact"]["delta"] == 0.0
    assert laplace["exact"]["epsilon"] <= 2.0


def test_the_ucb_base_runs_on_bernoulli_arms_and_movielens_reads_a_file(tmp_path: Path) -> None:
    config = small(
        instance={"kind": "ldp-bernoulli", "means": [0.9, 0.6, 0.5]},
        epsilons=[1.0],
        algorithms=[{"name": "one-point", "params": {"base": "ucb", "base_arms": 3}}],
    )
    out = run_experiment(load_config(config), tmp_path / "mab", progress=False)
    (result,) = json.loads((out / "summary.json").read_text())["results"]
    assert result["base"] == "ucb"
    assert result["privacy"]["exact"]["epsilon"] <= 1.0 * (1 + 1e-12)
    ratings = write_ratings(tmp_path / "ua.base")
    movielens = small(instance={"kind": "ldp-movielens", "path": str(ratings), "arms": 5, "rank": 3})
    spec = load_config(movielens).panels[0].instance
    built = spec.build_shared()
    assert built.name == "movielens"
    assert built.pool is not None
    assert built.pool.shape[1:] == (5, 3)
    assert "ua.base" in spec.describe()
    standin = load_config(small(instance={"kind": "ldp-movielens"})).panels[0].instance
    assert "stand-in" in standin.describe()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"epsilons": [0.0]}, "epsilons[0]"),
        ({"epsilons": [-1.0]}, "epsilons[0]"),
        ({"delta": 1.0}, "delta"),
        ({"delta": 0.0}, "delta"),
        ({"algorithms": [{"name": "ldp-linucb", "params": {"delta": 1.5}}]}, "algorithms[0].params.delta"),
        ({"instance": {**LINEAR, "dim": 0}}, "instance.dim"),
        ({"instance": {"kind": "ldp-glm", "link": "probit"}}, "instance.link"),
        ({"instance": {"kind": "ldp-quadratic", "convexity": "concave"}}, "instance.convexity"),
        ({"instance": {"kind": "ldp-movielens", "path": "no-such-ua.base"}}, "instance.path"),
        ({"instance": {"kind": "ldp-bernoulli"}}, "instance.means"),
        ({"instance": {"kind": "ldp-glm"}}, "instance.kind"),  # ldp-linucb runs on linear instances
        ({"algorithms": [{"name": "ldp-linucb", "params": {"mode": "fast"}}]}, "algorithms[0].params.mode"),
        ({"algorithms": [{"name": "ldp-glm", "params": {"mode": "code"}}]}, "algorithms[0].params.mode"),
        (
            {"algorithms": [{"name": "one-point", "params": {"base": "sgd"}}]},
            "algorithms[0].params.base",
        ),
        (
            {"algorithms": [{"name": "ldp-linucb", "params": {"mechanism": "laplace"}}]},
            "algorithms[0].params.mechanism",
        ),
    ],
)
def test_bad_ldp_configs_name_the_field(
    changes: dict[str, Any], field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(small(**changes))
    assert info.value.name == field, str(info.value)
    path = tmp_path / "bad.toml"
    path.write_text(_dump_toml(small(**changes)))
    _fails_in_one_line(["run", str(path), "--out", str(tmp_path / "r")], capsys, field)
    assert not (tmp_path / "r").exists()


def test_a_malformed_ratings_file_is_an_error_naming_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write_ratings(tmp_path / "ua.base", bad_line="7\t3\tfive\t881250949")
    config = small(instance={"kind": "ldp-movielens", "path": str(bad), "arms": 5, "rank": 3})
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert info.value.name == "instance.path"
    assert "line 4" in str(info.value)
    path = tmp_path / "bad.toml"
    path.write_text(_dump_toml(config))
    _fails_in_one_line(["run", str(path), "--out", str(tmp_path / "r")], capsys, "instance.path")


def test_the_family_is_registered_with_its_names() -> None:
    family = FAMILIES["ldp"]
    assert isinstance(family, LDPFamily)
    assert family.algorithms["ldp-linucb"]
    assert not family.algorithms["one-point-nonprivate"]
    assert set(ldp.ALGORITHMS) <= set(family.algorithms)
    assert "base" in family.params
    assert "base_arms" in family.params
    learner = family.learner("one-point", 1.0, {"base": "hazan-levy", "base_mu": 1.0, "base_smoothness": 1.0})
    assert isinstance(learner.base, ldp.HazanLevy)
    spec = load_config(small()).panels[0].instance
    assert spec.build_shared() is spec.build_shared()  # built once per process
