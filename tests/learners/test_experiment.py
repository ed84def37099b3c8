"""The experiment runner: config validation, seeds, resume, parallel and Dask runs, outputs."""

from __future__ import annotations

import copy
import csv
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

import learners.config as config_module
from accounting.validate import SpellingNote
from learners import linear, phased, plotting, runner
from learners.errors import ConfigError, LearnerError, ParameterError
from learners.experiment import (
    CSV_COLUMNS,
    Config,
    InstanceSpec,
    MSLRLinearSpec,
    Unit,
    load_config,
    plot_results,
    run_experiment,
    shipped_configs,
)

HORIZON = 3000
CHECKPOINTS = 30


def tiny(**changes: Any) -> dict[str, Any]:
    """A config that runs in well under a second: K = 4, T = 3000, R = 3 in chunks of 2."""
    config: dict[str, Any] = {
        "name": "tiny",
        "description": "a tiny test experiment",
        "seed": 7,
        "horizon": HORIZON,
        "repetitions": 3,
        "epsilons": [0.5, 1.0],
        "checkpoints": CHECKPOINTS,
        "chunk": 2,
        "instance": {"kind": "gaussian-easy", "arms": 4},
        "algorithms": [
            {"name": "dp-se", "params": {"growth": 2}},
            {"name": "dist-rdp-se", "params": {"scaling": 10, "growth": 2}},
            {"name": "se"},
        ],
        "quick": {"horizon": 1000, "repetitions": 2},
    }
    config.update(changes)
    return config


def run_tiny(out: Path, config: dict[str, Any] | None = None, **kwargs: Any) -> Path:
    return run_experiment(load_config(config or tiny()), out, progress=False, **kwargs)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------------------------
# Configs
# ---------------------------------------------------------------------------------------


def test_shipped_configs_cover_the_figures_of_spec_7_4() -> None:
    configs = shipped_configs()
    dpdpe = [f"dpdpe-figure{p}" for p in ("2a", "2b", "2c")]
    fedlcb = [f"fedlcb-figure{p}" for p in ("2a", "2b", "2c", "3a", "3b", "3c", "3d")]
    ldp = ["ldp-mab-ucb", "ldp-movielens", "ldp-table1-2pt", "ldp-table1-fkm", "ldp-table1-hl"]
    assert list(configs) == [*dpdpe, *fedlcb, *(f"figure{i}" for i in range(1, 6)), *ldp]
    for name, path in configs.items():
        if not name.startswith("figure"):  # another family (tests/learners/test_families.py)
            continue
        config = load_config(path)
        assert config.family == "mab"
        assert config.name == name
        assert config.repetitions == 20
        for a in config.algorithms:
            params = dict(a.params)
            assert params["p_beta"] == 0.1
            assert params["radius_scale"] == 1
            assert "p_tau" not in params  # the default: 1/T
        quick = load_config(path, quick=True)
        assert quick.quick
        assert quick.repetitions == 4
        assert all(p.horizon <= 100_000 for p in quick.panels)


def test_figure1_has_the_six_panels_of_the_paper() -> None:
    config = load_config(shipped_configs()["figure1"])
    got = [(p.name, p.instance.kind, p.instance.arms, p.horizon, p.epsilons) for p in config.panels]
    assert got == [
        ("a", "gaussian-easy", 10, 10**6, (0.1,)),
        ("b", "gaussian-easy", 10, 10**6, (0.5,)),
        ("c", "gaussian-hard", 10, 10**7, (0.1,)),
        ("d", "mslr", 50, 10**6, (1.0,)),
        ("e", "mslr", 50, 10**6, (5.0,)),
        ("f", "mslr", 50, 10**6, (10.0,)),
    ]
    assert [a.label for a in config.algorithms] == [
        "DP-SE",
        "Dist-DP-SE",
        "Dist-RDP-SE(s=10)",
        "Dist-RDP-SE(s=100)",
    ]
    # Chowdhury & Zhou (2023), Section 7: l(b) = 4^b for the distributed variants, dc = 2 for DP-SE.
    assert [dict(a.params)["growth"] for a in config.algorithms] == [2, 4, 4, 4]


def test_figure4_runs_every_algorithm_with_growth_2() -> None:
    config = load_config(shipped_configs()["figure4"])
    assert [a.name for a in config.algorithms] == [
        "cdp-se",
        "ldp-se",
        "dist-dp-se",
        "dist-rdp-se",
        "dist-cdp-se",
    ]
    assert {dict(a.params)["growth"] for a in config.algorithms} == {2}
    assert config.panels[0].epsilons == (0.1, 0.5, 1.0)


def test_resolved_config_reads_back_to_the_same_config() -> None:
    for path in shipped_configs().values():
        for quick in (False, True):
            config = load_config(path, quick=quick)
            again = load_config(tomllib.loads(config.to_toml()))
            assert again == config
            assert again.fingerprint == config.fingerprint


def test_quick_caps_the_horizon_and_replaces_the_repetitions() -> None:
    config = load_config(tiny(), quick=True)
    assert (config.panels[0].horizon, config.repetitions) == (1000, 2)
    assert load_config(tiny()).panels[0].horizon == HORIZON


def test_fingerprint_follows_the_numbers_not_the_names() -> None:
    base = load_config(tiny()).fingerprint
    renamed = tiny(name="other", description="words")
    renamed["algorithms"][0]["label"] = "Baseline"
    assert load_config(renamed).fingerprint == base
    assert load_config(tiny(seed=8)).fingerprint != base
    assert load_config(tiny(horizon=HORIZON + 1)).fingerprint != base
    # the privacy route changes how the units' ledgers are answered, not the units
    assert load_config(tiny(privacy_route="published")).fingerprint == base


def test_an_old_key_spelling_loads_the_same_experiment() -> None:
    """``params.scale`` (the old spelling of ``scaling``) gives the same config and fingerprint, with
    a note naming the key and the new spelling."""
    old, new = tiny(), tiny()
    old["algorithms"][1]["params"] = {"scale": 10, "growth": 2, "crs": 1.5}
    new["algorithms"][1]["params"] = {"scaling": 10, "growth": 2, "radius_scale": 1.5}
    with pytest.warns(SpellingNote) as notes:
        loaded = load_config(old)
    assert sorted(str(n.message).split(";")[0] for n in notes) == [
        "algorithms[1].params 'crs' is now spelled 'radius_scale'",
        "algorithms[1].params 'scale' is now spelled 'scaling'",
    ]
    assert loaded == load_config(new)
    assert loaded.fingerprint == load_config(new).fingerprint


@pytest.mark.parametrize(
    ("family", "name", "old", "new"),
    [
        (linear, "ldp-fedlinucb-lazy", {"clip": 2.0, "crs": 0.5}, {"bound": 2.0, "radius_scale": 0.5}),
        (phased, "cdp-dpe", {"clip": True}, {"clipped": True}),
    ],
)
def test_every_family_takes_its_old_spellings_in_make_learner(
    family: Any, name: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    with pytest.warns(SpellingNote, match="make_learner's keyword"):
        before = family.make_learner(name, 1.0, delta=0.1, **old)
    assert before == family.make_learner(name, 1.0, delta=0.1, **new)


def test_default_labels_come_from_the_learner() -> None:
    config = load_config(tiny())
    assert [a.label for a in config.algorithms] == ["DP-SE", "Dist-RDP-SE(s=10)", "SE"]
    assert [a.private for a in config.algorithms] == [True, True, False]


def _mutate(change: str) -> dict[str, Any]:
    config = tiny()
    if change == "unknown algorithm":
        config["algorithms"][1]["name"] = "dist-xyz"
    elif change == "epsilon zero":
        config["epsilons"] = [0.5, 0.0]
    elif change == "epsilon negative":
        config["epsilons"] = [-1]
    elif change == "K < 2":
        config["instance"] = {"kind": "gaussian-hard", "arms": 1}
    elif change == "T < K":
        config["horizon"] = 3
    elif change == "unknown key":
        config["horizons"] = 5
    elif change == "unknown instance key":
        config["instance"]["arm"] = 5
    elif change == "unknown kind":
        config["instance"] = {"kind": "cauchy"}
    elif change == "unknown param":
        config["algorithms"][0]["params"]["grow"] = 2
    elif change == "bad param":
        config["algorithms"][1]["params"]["scaling"] = 0.5
    elif change == "scale where none":
        config["algorithms"][0]["params"]["scaling"] = 10
    elif change == "epsilon for se":
        config["algorithms"][2]["params"] = {"epsilon": 1.0}
    elif change == "float horizon":
        config["horizon"] = 1e6
    elif change == "no repetitions":
        config["repetitions"] = 0
    elif change == "duplicate label":
        config["algorithms"][2]["label"] = "DP-SE"
    elif change == "duplicate epsilon":
        config["epsilons"] = [0.5, 0.5]
    elif change == "missing seed":
        del config["seed"]
    elif change == "bad name":
        config["name"] = "a/b"
    elif change == "delta":
        config["delta"] = 1.5
    elif change == "panel kind":
        config["panels"] = [{"name": "x"}, {"name": "y", "instance": {"kind": "nope"}}]
    elif change == "panel T < K":
        config["panels"] = [{"name": "x", "horizon": 2}]
    elif change == "panel epsilons":
        config["panels"] = [{"name": "x"}, {"name": "y", "epsilons": [1.0, "big"]}]
    elif change == "duplicate panel":
        config["panels"] = [{"name": "x"}, {"name": "x"}]
    elif change == "quick T < K":
        config["quick"] = {"horizon": 3}
    elif change == "bernoulli mean":
        config["instance"] = {"kind": "bernoulli", "means": [0.2, 1.5]}
    elif change == "beta mean":
        config["instance"] = {"kind": "beta", "means": [0.0, 0.5]}
    elif change == "arms vs means":
        config["instance"] = {"kind": "bernoulli", "arms": 3, "means": [0.2, 0.5]}
    elif change == "missing data file":
        config["instance"] = {"kind": "mslr", "path": "no/such/file.txt", "clusters": 2}
    elif change == "privacy route":
        config["privacy_route"] = "exact"
    else:  # pragma: no cover
        raise AssertionError(change)
    return config


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ("unknown algorithm", "algorithms[1].name"),
        ("epsilon zero", "epsilons[1]"),
        ("epsilon negative", "epsilons[0]"),
        ("K < 2", "instance.arms"),
        ("T < K", "horizon"),
        ("unknown key", "horizons"),
        ("unknown instance key", "instance.arm"),
        ("unknown kind", "instance.kind"),
        ("unknown param", "algorithms[0].params.grow"),
        ("bad param", "algorithms[1].params.scaling"),
        ("scale where none", "algorithms[0].params.scaling"),
        ("epsilon for se", "algorithms[2].params.epsilon"),
        ("float horizon", "horizon"),
        ("no repetitions", "repetitions"),
        ("duplicate label", "algorithms[2].label"),
        ("duplicate epsilon", "epsilons[1]"),
        ("missing seed", "seed"),
        ("bad name", "name"),
        ("delta", "delta"),
        ("panel kind", "panels[1].instance.kind"),
        ("panel T < K", "panels[0].horizon"),
        ("panel epsilons", "panels[1].epsilons[1]"),
        ("duplicate panel", "panels[1].name"),
        ("quick T < K", "quick.horizon"),
        ("bernoulli mean", "instance.means[1]"),
        ("beta mean", "instance.means[0]"),
        ("arms vs means", "instance.arms"),
        ("missing data file", "instance.path"),
        ("privacy route", "privacy_route"),
    ],
)
def test_invalid_configs_name_the_field(change: str, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_mutate(change), quick=change.startswith("quick"))
    assert info.value.name == field
    assert str(info.value).startswith(field)
    assert isinstance(info.value, ValueError)


def test_quick_without_a_quick_table_is_an_error() -> None:
    config = tiny()
    del config["quick"]
    load_config(config)
    with pytest.raises(ConfigError) as info:
        load_config(config, quick=True)
    assert info.value.name == "quick"


def test_a_bad_toml_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "x\nseed = 1\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.name == "config"
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.toml")


def test_a_data_path_is_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    _letor(tmp_path / "data" / "fold.txt")
    config = tiny(instance={"kind": "mslr", "path": "data/fold.txt", "clusters": 3, "cluster_seed": 1})
    path = tmp_path / "exp.toml"
    path.write_text(config_module._dump_toml(config))
    loaded = load_config(path)
    assert isinstance(loaded.panels[0].instance, InstanceSpec | MSLRLinearSpec)  # the specs with a path
    assert loaded.panels[0].instance.path == str((tmp_path / "data" / "fold.txt").resolve())


# ---------------------------------------------------------------------------------------
# Seeds and units
# ---------------------------------------------------------------------------------------


def test_units_cover_every_repetition_once() -> None:
    config = load_config(tiny())
    units = config.units()
    # dp-se and dist-rdp-se at 2 ε, se once, each in chunks [0, 1], [2]
    assert len(units) == (2 * 2 + 1) * 2
    assert {u.stem for u in units} == {
        f"0__{a}__{e}__{c}" for a, es in ((0, (0, 1)), (1, (0, 1)), (2, (0,))) for e in es for c in (0, 1)
    }
    assert [(u.first, u.count) for u in units[:2]] == [(0, 2), (2, 1)]


def test_every_algorithm_sees_the_same_instances_and_tapes() -> None:
    config = load_config(tiny())
    tasks = runner._tasks(config, config.units())
    by_chunk: dict[int, list[runner._Task]] = {}
    for task in tasks:
        by_chunk.setdefault(task.unit.chunk, []).append(task)
    for group in by_chunk.values():
        first = group[0]
        for task in group[1:]:
            assert task.instances == first.instances
            for a, b in zip(task.tape_seeds, first.tape_seeds, strict=True):
                assert np.random.default_rng(a).random() == np.random.default_rng(b).random()
    # each repetition has its own instance; each unit its own noise stream
    assert len({inst.locations for t in tasks[:2] for inst in t.instances}) == 3
    noise = {np.random.default_rng(t.noise_seed).integers(2**62) for t in tasks}
    assert len(noise) == len(tasks)


# ---------------------------------------------------------------------------------------
# Running: outputs, reproducibility, resume
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_outputs_are_complete_and_well_formed(tmp_path: Path) -> None:
    out = run_tiny(tmp_path / "res")
    for name in ("config.toml", "versions.json", "regret.csv", "summary.json", "fingerprint.txt"):
        assert (out / name).is_file(), name
    config = load_config(tiny())
    assert load_config(out / "config.toml") == config

    rows = read_csv(out / "regret.csv")
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == 3 * (2 * 2 + 1) * CHECKPOINTS  # R x (algorithm, ε) x checkpoints
    se_rows = [r for r in rows if r["algorithm"] == "se"]
    assert {r["epsilon"] for r in se_rows} == {""}
    assert {r["repetition"] for r in rows} == {"0", "1", "2"}
    finals = [r for r in rows if r["round"] == str(HORIZON)]
    assert len(finals) == 3 * 5
    assert all(float(r["pseudo_regret"]) >= 0 for r in rows)

    summary = json.loads((out / "summary.json").read_text())
    assert summary["name"] == "tiny"
    assert summary["fingerprint"] == config.fingerprint
    results = summary["results"]
    assert [(r["label"], r["epsilon"]) for r in results] == [
        ("DP-SE", 0.5),
        ("DP-SE", 1.0),
        ("Dist-RDP-SE(s=10)", 0.5),
        ("Dist-RDP-SE(s=10)", 1.0),
        ("SE", None),
    ]
    for r in results:
        assert r["round"] == HORIZON
        assert r["repetitions"] == 3
        ta = r["pseudo_regret"]["time_average"]
        lo, hi = ta["ci95"]
        assert lo <= ta["mean"] <= hi
        assert r["pseudo_regret"]["cumulative"]["mean"] == pytest.approx(ta["mean"] * HORIZON)
        assert set(r["realized_regret"]) == {"time_average", "cumulative"}
        privacy = r["privacy"]
        keys = {
            "model",
            "notion",
            "epsilon",
            "delta",
            "batches",
            "theorem",
            "theorem_holds",
            "theorem_epsilon",
        }
        assert keys | {"rho", "statement", "message", "releases"} <= set(privacy)
        # one ledger per released batch size, answered: (n, ε, route)
        assert [b[0] for b in privacy["batches"]] == r["batch_sizes"]
        assert [n for n, _ in privacy["releases"]] == r["batch_sizes"]
        assert isinstance(r["bits_per_user_per_batch"], int)
        assert isinstance(r["batch_sizes"], list)
    # the 95% interval is mean ± t_{0.975, R-1} sd / sqrt(R)
    finals_dp = [
        float(x["pseudo_regret"]) / HORIZON for x in finals if x["label"] == "DP-SE" and x["epsilon"] == "0.5"
    ]
    from scipy import stats

    half = stats.t.ppf(0.975, 2) * np.std(finals_dp, ddof=1) / np.sqrt(3)
    assert results[0]["pseudo_regret"]["time_average"]["half_width"] == pytest.approx(half)
    assert results[4]["privacy"]["epsilon"] == "inf"  # standard JSON: infinities as strings
    # DP-SE spends ε per release (Laplace(1/ε) on a sum of sensitivity 1); Theorem 2 holds at any ε
    assert results[0]["privacy"]["epsilon"] == pytest.approx(0.5, rel=1e-12)
    assert results[3]["privacy"]["theorem_holds"] is True
    assert results[3]["privacy"]["epsilon"] < results[3]["privacy"]["theorem_epsilon"]
    releases = sum(k for _, k in results[2]["privacy"]["releases"])
    assert releases == pytest.approx(results[2]["released_mean"] * results[2]["repetitions"])
    assert results[1]["bits_per_user_per_batch"] == 0  # DP-SE: no protocol
    assert results[3]["bits_per_user_per_batch"] > 0

    versions = json.loads((out / "versions.json").read_text())
    assert {"python", "numpy", "scipy", "mpmath", "sklearn", "dpcert", "platform"} <= set(versions)

    pngs = sorted(out.glob("*.png"))
    assert [p.name for p in pngs] == ["regret-tiny.png"]
    assert pngs[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_same_config_gives_the_same_csv_bit_for_bit(tmp_path: Path) -> None:
    first = run_tiny(tmp_path / "one")
    second = run_tiny(tmp_path / "two")
    assert (first / "regret.csv").read_bytes() == (second / "regret.csv").read_bytes()
    assert (first / "summary.json").read_bytes() == (second / "summary.json").read_bytes()
    other = run_tiny(tmp_path / "three", tiny(seed=8))
    assert (other / "regret.csv").read_bytes() != (first / "regret.csv").read_bytes()


@pytest.mark.slow
def test_two_workers_give_the_same_csv_as_one(tmp_path: Path) -> None:
    one = run_tiny(tmp_path / "one")
    two = run_tiny(tmp_path / "two", workers=2)
    assert (one / "regret.csv").read_bytes() == (two / "regret.csv").read_bytes()


class StopError(Exception):
    """Stands for a kill in the middle of a run."""


@pytest.mark.slow
def test_a_killed_run_resumes_without_recomputing_finished_units(tmp_path: Path) -> None:
    out = tmp_path / "res"
    seen: list[tuple[Unit, bool]] = []

    def die_after_two(unit: Unit, computed: bool) -> None:
        seen.append((unit, computed))
        if len(seen) == 2:
            raise StopError

    with pytest.raises(StopError):
        run_tiny(out, on_unit=die_after_two)
    saved = sorted((out / "units").glob("*.npz"))
    assert [p.stem for p in saved] == sorted(u.stem for u, _ in seen)
    assert not (out / "regret.csv").exists()
    stamps = {p.name: p.stat().st_mtime_ns for p in saved}

    again: list[tuple[Unit, bool]] = []
    run_tiny(out, on_unit=lambda u, c: again.append((u, c)))
    total = len(load_config(tiny()).units())
    assert sorted(u.stem for u, c in again if not c) == sorted(p.stem for p in saved)
    assert sum(c for _, c in again) == total - 2
    assert {p.name: p.stat().st_mtime_ns for p in saved} == stamps  # not rewritten

    fresh = run_tiny(tmp_path / "fresh")
    assert (out / "regret.csv").read_bytes() == (fresh / "regret.csv").read_bytes()


@pytest.mark.slow
def test_deleted_or_corrupt_units_are_recomputed(tmp_path: Path) -> None:
    out = run_tiny(tmp_path / "res")
    before = (out / "regret.csv").read_bytes()
    units = sorted((out / "units").glob("*.npz"))
    units[0].unlink()
    units[1].write_bytes(b"not a zip file")
    units[2].write_bytes(units[2].read_bytes()[:200])  # cut short
    computed: list[str] = []
    run_tiny(out, on_unit=lambda u, c: computed.append(u.stem) if c else None)
    assert sorted(computed) == sorted(p.stem for p in units[:3])
    assert (out / "regret.csv").read_bytes() == before


@pytest.mark.slow
def test_a_folder_of_another_config_is_refused_unless_forced(tmp_path: Path) -> None:
    out = run_tiny(tmp_path / "res")
    other = load_config(tiny(seed=99))
    with pytest.raises(ParameterError) as info:
        run_experiment(other, out, progress=False)
    assert info.value.name == "out_dir"
    assert "fingerprint" in str(info.value)
    run_experiment(other, out, progress=False, force=True)
    assert (out / "fingerprint.txt").read_text().strip() == other.fingerprint
    assert len(list((out / "units").glob("*.npz"))) == len(other.units())


def test_a_foreign_nonempty_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ParameterError) as info:
        run_tiny(tmp_path)
    assert info.value.name == "out_dir"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_an_unreadable_data_file_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "broken.txt"
    data.write_text("this is not svmlight\n")
    with pytest.raises(ConfigError) as info:  # its first line is sniffed when the config is loaded
        load_config(tiny(instance={"kind": "mslr", "path": str(data), "clusters": 2}))
    assert info.value.name == "instance.path"
    assert not (tmp_path / "res").exists()


def test_bad_execution_arguments(tmp_path: Path) -> None:
    config = load_config(tiny())
    with pytest.raises(ParameterError, match="workers"):
        run_experiment(config, tmp_path / "a", workers=0, progress=False)
    with pytest.raises(ParameterError, match="workers"):
        run_experiment(config, tmp_path / "a", workers=2, scheduler="tcp://127.0.0.1:1", progress=False)
    with pytest.raises(TypeError):
        run_experiment(config, tmp_path / "a", scheduler=3, progress=False)  # type: ignore[arg-type]
    assert not (tmp_path / "a").exists()


def _letor(path: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 4))
    labels = np.clip(np.floor(2 + x[:, 0]), 0, 4).astype(np.int64)
    dump_svmlight_file(x, labels, str(path), query_id=np.repeat(np.arange(12), 10), zero_based=False)


@pytest.mark.slow
def test_every_instance_kind_runs(tmp_path: Path) -> None:
    _letor(tmp_path / "fold.txt")
    panels: list[dict[str, Any]] = [
        {"name": "hard", "instance": {"kind": "gaussian-hard", "arms": 3}},
        {"name": "bern", "instance": {"kind": "bernoulli", "means": [0.2, 0.5, 0.8]}},
        {"name": "bern-drawn", "instance": {"kind": "bernoulli", "arms": 3}},
        {"name": "beta", "instance": {"kind": "beta", "arms": 3, "concentration": 4.0}},
        {"name": "real", "instance": {"kind": "mslr", "path": "fold.txt", "clusters": 3}, "epsilons": [5.0]},
    ]
    config = tiny(panels=panels, algorithms=[{"name": "dist-dp-se", "params": {"growth": 2}}])
    path = tmp_path / "kinds.toml"
    path.write_text(config_module._dump_toml(config))
    out = run_experiment(load_config(path), tmp_path / "res", progress=False)
    summary = json.loads((out / "summary.json").read_text())
    assert [(r["panel"], r["epsilon"]) for r in summary["results"]] == [
        ("hard", 0.5),
        ("hard", 1.0),
        ("bern", 0.5),
        ("bern", 1.0),
        ("bern-drawn", 0.5),
        ("bern-drawn", 1.0),
        ("beta", 0.5),
        ("beta", 1.0),
        ("real", 5.0),
    ]
    names = sorted(p.name for p in out.glob("*.png"))
    assert names == sorted([f"regret-{p['name']}.png" for p in panels] + ["regret.png"])


@pytest.mark.slow
def test_plot_results_redraws_from_the_csv(tmp_path: Path) -> None:
    out = run_tiny(tmp_path / "res")
    for png in out.glob("*.png"):
        png.unlink()
    (out / "summary.json").unlink()  # captions are optional
    written = plot_results(out)
    assert [p.name for p in written] == ["regret-tiny.png", "regret-tiny.pdf", "regret-tiny.svg"]
    assert written[0].stat().st_size > 1000
    with pytest.raises(ParameterError) as info:
        plot_results(tmp_path)
    assert info.value.name == "results_dir"


def _colors(labels: list[str]) -> dict[str, str]:
    return {label: style.color for label, style in plotting.styles(labels).items()}


def test_paper_colours_and_no_clashes() -> None:
    """The paper's hues, on the colour-blind-safe palette (red -> vermillion, green -> bluish green)."""
    hue = plotting.PAPER_HUES
    colors = _colors(["DP-SE", "Dist-DP-SE", "Dist-RDP-SE(s=10)", "Dist-RDP-SE(s=100)"])
    assert colors == {
        "DP-SE": hue["black"],
        "Dist-DP-SE": hue["blue"],
        "Dist-RDP-SE(s=10)": hue["red"],
        "Dist-RDP-SE(s=100)": hue["green"],
    }
    colors = _colors(["CDP-SE", "LDP-SE", "Dist-DP-SE", "Dist-RDP-SE(s=10)", "Dist-CDP-SE(s=10)"])
    assert colors["CDP-SE"] == hue["black"]
    assert colors["LDP-SE"] == hue["cyan"]
    assert colors["Dist-CDP-SE(s=10)"] == hue["green"]
    mixed = _colors(["DP-SE", "CDP-SE", "mine", "yours"])  # DP-SE and CDP-SE both want black
    assert len(set(mixed.values())) == 4


def test_toml_writer_round_trips_awkward_values() -> None:
    data = {
        "s": 'quote " back\\slash \n tab\t del\x7f ε',
        "i": 10**7,
        "f": [1e-6, 0.1, 2.0],
        "t": {"a key": 1, "b": True},
        "arr": [{"x": 1}, {"x": 2, "y": {"z": "w"}}],
    }
    assert tomllib.loads(config_module._dump_toml(data)) == data


@pytest.mark.slow
def test_a_dask_cluster_gives_the_same_csv(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    local = run_tiny(tmp_path / "local")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        # by address first, while no client exists that Dask could fall back on as a default
        by_address = run_tiny(tmp_path / "address", scheduler=cluster.scheduler_address)
        with distributed.Client(cluster, set_as_default=False) as client:
            by_client = run_tiny(tmp_path / "client", scheduler=client)
    expected = (local / "regret.csv").read_bytes()
    assert (by_address / "regret.csv").read_bytes() == expected
    assert (by_client / "regret.csv").read_bytes() == expected


def test_config_is_a_frozen_value() -> None:
    config = load_config(tiny())
    with pytest.raises(AttributeError):
        config.seed = 3  # type: ignore[misc]
    assert isinstance(config, Config)
    assert load_config(copy.deepcopy(tiny())) == config
    assert issubclass(ConfigError, LearnerError)
    assert os.fspath(shipped_configs()["figure2"]).endswith("figure2.toml")
