"""The LDP family (Zheng et al. 2020, learners.ldp) through the one runner: configs, results, refusals,
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
    panel_instance = panel.instance
    assert isinstance(panel_instance, LDPInstanceSpec)
    assert (panel.horizon, panel.epsilons, panel_instance.arms, panel_instance.dim) == (
        10**6,
        (1e5, 2e5, 4e5, 8e5),
        20,
        20,
    )
    assert movielens.repetitions == 1
    assert [dict(a.params)["mode"] for a in movielens.algorithms] == ["code"]


@pytest.mark.slow
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
        if label == "code":  # the official code's σ misses its stated ε (by a factor √2)
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


@pytest.mark.slow
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


@pytest.mark.slow
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
    assert isinstance(spec, LDPInstanceSpec)
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
        (
            {"algorithms": [{"name": "two-point", "params": {"mechanism": "randomized-response"}}]},
            "algorithms[0].params.mechanism",
        ),
        (
            {"algorithms": [{"name": "one-point-nonprivate", "params": {"mechanism": "laplace"}}]},
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


def horizon_config(**changes: Any) -> dict[str, Any]:
    """Three panels at T = 200, 400, 800 on one quadratic, plotted against the horizon."""
    config = small(
        instance={"kind": "ldp-quadratic", "dim": 2},
        epsilons=[5.0],
        checkpoints=10,
        x_axis="horizon",
        panels=[{"name": f"T{t}", "horizon": t} for t in (200, 400, 800)],
        algorithms=[{"name": "one-point"}, {"name": "one-point-nonprivate"}],
    )
    del config["horizon"]
    config.update(changes)
    return config


@pytest.mark.slow
def test_the_horizon_axis_plots_final_regret_against_t_with_the_fitted_slope(tmp_path: Path) -> None:
    import csv
    import math

    from learners.plotting import horizon_lines
    from learners.results import read_curves

    config = load_config(horizon_config())
    assert [p.x_axis for p in config.panels] == ["horizon"] * 3
    # plots only: not part of the fingerprint
    assert config.fingerprint == load_config(horizon_config(x_axis="round")).fingerprint
    out = run_experiment(config, tmp_path / "res", progress=False)
    assert (out / "regret-horizon.png").is_file()
    assert (out / "regret-horizon.svg").is_file()
    assert not (out / "regret-T200.png").exists()  # each panel is a point of regret-horizon
    # by hand from regret.csv: each (label, ε, panel)'s final rows, their mean, and the slope
    finals: dict[tuple[str, str], dict[int, list[float]]] = {}
    last: dict[tuple[str, str, str], int] = {}
    rows = list(csv.DictReader((out / "regret.csv").open()))
    for row in rows:
        key = (row["label"], row["epsilon"], row["panel"])
        last[key] = max(last.get(key, 0), int(row["round"]))
    for row in rows:
        key = (row["label"], row["epsilon"], row["panel"])
        if int(row["round"]) == last[key]:
            finals.setdefault((row["label"], row["epsilon"]), {}).setdefault(last[key], []).append(
                float(row["pseudo_regret"])
            )
    lines = {
        (line.label, "" if line.epsilon is None else repr(line.epsilon)): line
        for line in horizon_lines(read_curves(out / "regret.csv"), ["T200", "T400", "T800"])
    }
    assert set(lines) == set(finals)
    for label_eps, by_t in finals.items():
        ts = sorted(by_t)
        assert ts == [200, 400, 800]
        means = [sum(by_t[t]) / len(by_t[t]) for t in ts]
        x = [math.log(t) for t in ts]
        y = [math.log(m) for m in means]
        xm, ym = sum(x) / 3, sum(y) / 3
        slope = sum((a - xm) * (b - ym) for a, b in zip(x, y, strict=True)) / sum((a - xm) ** 2 for a in x)
        line = lines[label_eps]
        assert line.horizons.tolist() == ts
        np.testing.assert_allclose(line.finals, means, rtol=1e-12)
        assert line.slope == pytest.approx(slope, rel=1e-9)


@pytest.mark.parametrize(
    ("changes", "quick", "field"),
    [
        ({"panels": [{"name": "only", "horizon": 200}]}, False, "x_axis"),
        ({"panels": [{"name": "a", "horizon": 200}, {"name": "b", "horizon": 200}]}, False, "x_axis"),
        (
            {
                "x_axis": "round",
                "panels": [{"name": "a", "horizon": 300, "x_axis": "horizon"}, {"name": "b", "horizon": 200}],
            },
            False,
            "panels[0].x_axis",
        ),
        ({"quick": {"horizon": 100}}, True, "quick.horizon"),
        ({"x_axis": "time"}, False, "x_axis"),
    ],
)
def test_bad_horizon_axes_name_the_field(changes: dict[str, Any], quick: bool, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(horizon_config(**changes), quick=quick)
    assert info.value.name == field, str(info.value)


# ---------------------------------------------------------------------------------------
# One config, two families: LDP-UCB beside the distributed MAB paper's learners
# ---------------------------------------------------------------------------------------

MEANS = [0.7, 0.55, 0.5, 0.3]


def mixed(**changes: Any) -> dict[str, Any]:
    """LDP-SE (mab family) and LDP-UCB by randomized response (ldp family) on the same arms."""
    config: dict[str, Any] = {
        "name": "mixed",
        "family": "ldp",
        "seed": 11,
        "repetitions": 3,
        "horizon": 3000,
        "checkpoints": 10,
        "chunk": 3,
        "epsilons": [0.5, 1.0],
        "instance": {"kind": "ldp-bernoulli", "means": list(MEANS)},
        "algorithms": [
            {"name": "ldp-se", "params": {"growth": 2}},
            {
                "name": "one-point",
                "label": "LDP-UCB (RR)",
                "params": {"base": "ucb", "base_arms": 4, "mechanism": "randomized-response"},
            },
        ],
    }
    config.update(changes)
    return config


def _rows(out: Path, label: str) -> list[list[str]]:
    lines = (out / "regret.csv").read_text().splitlines()
    head = lines[0].split(",")
    at = head.index("label")
    return [row.split(",")[1:] for row in lines[1:] if row.split(",")[at] == label]  # all but the panel


@pytest.mark.slow
def test_one_config_runs_algorithms_of_two_families_on_the_same_arms(tmp_path: Path) -> None:
    """The mab family's LDP-SE in the mixed config is the LDP-SE of a pure mab config on the same
    Bernoulli arms (same seed, same algorithm index: the same streams), bit for bit; each result
    says its family; the ldp learner's regret is on the same arms (both pseudo-regrets against the
    best arm's 0.7)."""
    config = load_config(mixed())
    assert config.families == ("ldp", "mab")
    assert [a.family for a in config.algorithms] == ["mab", "ldp"]
    out = run_experiment(config, tmp_path / "mixed", progress=False)
    alone = {
        **mixed(name="alone", family="mab", algorithms=[mixed()["algorithms"][0]]),
        "instance": {"kind": "bernoulli", "means": list(MEANS)},
    }
    ref = run_experiment(load_config(alone), tmp_path / "alone", progress=False)
    got, want = _rows(out, "LDP-SE"), _rows(ref, "LDP-SE")
    assert got
    assert got == want
    summary = json.loads((out / "summary.json").read_text())
    assert summary["families"] == ["ldp", "mab"]
    fams = {(r["label"], r["family"]) for r in summary["results"]}
    assert fams == {("LDP-SE", "mab"), ("LDP-UCB (RR)", "ldp")}
    for r in summary["results"]:
        assert r["privacy"]["exact"]["epsilon"] <= r["epsilon"] * (1 + 1e-12)
        # pseudo-regret per round is between 0 and the largest gap (0.4)
        assert 0 <= r["pseudo_regret"]["time_average"]["mean"] <= 0.4
    text = (out / "summary.md").read_text()
    assert "ldp family:" in text
    assert "mab family:" in text
    # the resolved config reads back to the same config (a resumed run finds every unit)
    again = load_config(out / "config.toml")
    assert again.fingerprint == config.fingerprint
    assert [a.family for a in again.algorithms] == ["mab", "ldp"]


def test_the_mab_family_can_host_ldp_ucb_on_its_bernoulli_kind() -> None:
    config = load_config(mixed(family="mab", instance={"kind": "bernoulli", "means": list(MEANS)}))
    assert config.families == ("mab", "ldp")
    panel = config.panels[0]
    assert panel.for_family("ldp").instance.kind == "ldp-bernoulli"
    # reward means there, loss means here: the ldp instance's losses are 1 - means
    ldp_instance = panel.for_family("ldp").instance
    assert isinstance(ldp_instance, LDPInstanceSpec)
    built = ldp_instance.build_shared()
    assert np.allclose(built.means, 1 - np.array(MEANS))


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        # the group regret of federated LinUCB cannot share a figure with the pseudo-regret
        (
            {
                "algorithms": [
                    {"name": "one-point", "params": {"base": "ucb", "base_arms": 4}},
                    {"name": "fedlinucb"},
                ]
            },
            "algorithms[1].name",
        ),
        # DP-DPE (phased) names the regret alike but runs no Bernoulli arms
        ({"algorithms": [{"name": "ldp-se"}, {"name": "dpe"}]}, "instance.kind"),
        # the mab family's Bernoulli arms drawn per repetition cannot be the ldp family's
        ({"family": "mab", "instance": {"kind": "bernoulli", "arms": 4}}, "instance.means"),
        # an instance no family of the config runs
        ({"instance": {"kind": "ldp-quadratic", "dim": 2}}, "instance.kind"),
    ],
)
def test_bad_mixed_configs_name_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(mixed(**changes))
    assert info.value.name == field, str(info.value)


# ---------------------------------------------------------------------------------------
# y_axis: the official figures' cumulative regret and regret/√t
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_y_axis_draws_cumulative_and_sqrt_figures_of_the_curves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each y_axis is a figure; its mean line is Reg(t)/t, Reg(t) or Reg(t)/√t of regret.csv."""
    from matplotlib.axes import Axes

    from learners.results import read_curves

    lines: list[tuple[np.ndarray, np.ndarray]] = []
    original = Axes.plot

    def spy(self: Axes, *args: Any, **kwargs: Any) -> Any:
        if len(args) >= 2:
            lines.append((np.asarray(args[0], dtype=float), np.asarray(args[1], dtype=float)))
        return original(self, *args, **kwargs)

    config = small(
        y_axis=["average", "cumulative", "sqrt"], epsilons=[1e4], algorithms=[{"name": "ldp-linucb"}]
    )
    out = run_experiment(load_config(config), tmp_path / "y", progress=False)
    for name in ("regret-ldptiny", "regret-ldptiny-cumulative", "regret-ldptiny-sqrt"):
        assert (out / f"{name}.png").is_file()
    monkeypatch.setattr(Axes, "plot", spy)
    from learners.experiment import plot_results

    plot_results(out)
    (curve,) = read_curves(out / "regret.csv")
    t = curve.rounds.astype(float)
    want = [curve.pseudo.mean(axis=0) / t**power for power in (1.0, 0.0, 0.5)]
    drawn = [y for x, y in lines if x.shape == t.shape and np.array_equal(x, t)]
    for w in want:
        assert any(np.allclose(y, w, rtol=1e-12, atol=0) for y in drawn)
    # plots only: the fingerprint is the default's
    assert (
        load_config(config).fingerprint
        == load_config(small(epsilons=[1e4], algorithms=[{"name": "ldp-linucb"}])).fingerprint
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"y_axis": "log"}, "y_axis"),
        ({"y_axis": []}, "y_axis"),
        ({"y_axis": ["sqrt", "sqrt"]}, "y_axis"),
        ({"y_axis": 1}, "y_axis"),
        ({"panels": [{"name": "p", "y_axis": ["cumulative", "x"]}]}, "panels[0].y_axis"),
        # the final-regret figures have no t axis
        ({"x_axis": "epsilon", "y_axis": "cumulative"}, "y_axis"),
    ],
)
def test_bad_y_axes_name_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(small(**changes))
    assert info.value.name == field, str(info.value)
