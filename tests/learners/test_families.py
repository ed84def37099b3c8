"""Learner families in the one runner: MAB unchanged, federated LinUCB run, resumed,
refused where its config is wrong, and its saved ledgers re-accounted (learners/families/)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from accounting import cli as account_cli
from accounting.accountant import Accountant
from learners import mab
from learners.errors import ConfigError
from learners.experiment import (
    FAMILIES,
    LinearInstanceSpec,
    Unit,
    load_config,
    run_experiment,
    shipped_configs,
)
from learners.results import UNITS_DIR, UnitData

DELTA = 0.1


def mab_config(**changes: Any) -> dict[str, Any]:
    """A MAB config of a second: K = 4, T = 2000, R = 3 in chunks of 2, one private and SE."""
    config: dict[str, Any] = {
        "name": "mab-tiny",
        "seed": 11,
        "horizon": 2000,
        "repetitions": 3,
        "epsilons": [1.0],
        "checkpoints": 20,
        "chunk": 2,
        "instance": {"kind": "gaussian-easy", "arms": 4},
        "algorithms": [{"name": "dist-dp-se", "params": {"growth": 2}}, {"name": "se"}],
    }
    config.update(changes)
    return config


def linear_config(**changes: Any) -> dict[str, Any]:
    """A federated LinUCB config of seconds: d = 4, K = 12, M = 3, T = 120, B = 10, R = 3 in chunks
    of 2; FedLinUCB and LDP-FedLinUCB-Lazy at ε = 1, δ = 0.1."""
    config: dict[str, Any] = {
        "name": "linear-tiny",
        "seed": 5,
        "horizon": 120,
        "repetitions": 3,
        "epsilons": [1.0],
        "checkpoints": 12,
        "chunk": 2,
        "delta": DELTA,
        "instance": {"kind": "linear-synthetic", "dim": 4, "arms": 12, "agents": 3},
        "algorithms": [
            {"name": "fedlinucb", "params": {"batch": 10}},
            {"name": "ldp-fedlinucb-lazy", "params": {"batch": 10}},
        ],
    }
    config.update(changes)
    return config


# ---------------------------------------------------------------------------------------
# The MAB family: the same numbers as learners.mab.run called directly
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_mab_regret_csv_equals_mab_run_called_directly(tmp_path: Path) -> None:
    """regret.csv, byte for byte, from learners.mab.run with the seeds of learners.experiment's
    overview (instance and tape of repetition r: the children of SeedSequence(seed, (p, 0, r));
    noise of a unit: SeedSequence(seed, (p, 1, algorithm, ε index, chunk))), independent of the runner."""
    raw = mab_config()
    out = run_experiment(load_config(raw), tmp_path / "res", progress=False)

    from learners.environments import gaussian_easy

    seed, chunk, reps = raw["seed"], raw["chunk"], raw["repetitions"]
    children = [np.random.SeedSequence(seed, spawn_key=(0, 0, r)).spawn(2) for r in range(reps)]
    lines = ["panel,algorithm,label,epsilon,repetition,round,pseudo_regret,realized_regret"]
    for a, (name, label, eps) in enumerate([("dist-dp-se", "Dist-DP-SE", 1.0), ("se", "SE", None)]):
        learner = mab.make_learner(name, eps, **raw["algorithms"][a].get("params", {}))
        for c, first in enumerate(range(0, reps, chunk)):
            part = range(first, min(first + chunk, reps))
            result = mab.run(
                learner,
                tuple(gaussian_easy(np.random.default_rng(children[r][0]), 4) for r in part),
                raw["horizon"],
                tapes=[np.random.default_rng(children[r][1]) for r in part],
                rng=np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0, 1, a, 0, c))),
                checkpoints=raw["checkpoints"],
            )
            for i, r in enumerate(part):
                for t, ps, rz in zip(
                    result.rounds.tolist(),
                    result.pseudo_regret[i].tolist(),
                    result.realized_regret[i].tolist(),
                    strict=True,
                ):
                    eps_text = repr(eps) if eps is not None else ""
                    lines.append(f"mab-tiny,{name},{label},{eps_text},{r},{t},{ps!r},{rz!r}")
    assert (out / "regret.csv").read_text(encoding="utf-8") == "\n".join(lines) + "\n"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["family"] == "mab"
    assert summary["regret_label"] == ["pseudo-regret", "Reg(t)"]
    entry = summary["results"][0]
    assert set(entry["privacy"]["claimed"]) == {"epsilon", "delta", "statement", "holds"}
    assert "released_mean" in entry
    assert "bits_per_user_per_batch" in entry


def test_mab_fingerprints_and_family_key_are_unchanged() -> None:
    """The shipped figures keep their fingerprints (results folders of earlier versions resume), and
    `family = "mab"` written out changes nothing, while another family is part of the fingerprint."""
    assert load_config(shipped_configs()["figure1"]).fingerprint == (
        "sha256:4e8ab5a8c9c71097fea2a0d8c90e2dac84a3a64c88c45bcbee8dd9580cec561b"
    )
    assert load_config(shipped_configs()["figure2"], quick=True).fingerprint == (
        "sha256:f4a57600577d8c763b96263d59fabdfea7202eb1b29451649ef4fabebc3124ac"
    )
    plain = load_config(mab_config())
    explicit = load_config(mab_config(family="mab"))
    assert plain == explicit
    assert plain.fingerprint == explicit.fingerprint
    assert "family" not in plain.to_dict()
    linear = load_config(linear_config())
    assert linear.family == "linear"
    assert linear.to_dict()["family"] == "linear"
    assert load_config(linear_config(family="linear")).fingerprint == linear.fingerprint


def test_units_of_an_older_version_load_or_are_recomputed(tmp_path: Path) -> None:
    """A MAB unit written by the code before the families (released, final_arms as arrays of their
    own, hashed in that order) still loads and fits; one without its family's arrays or without a
    hash is recomputed, never a crash."""
    unit = Unit(0, 0, 0, 0, 0, 2, "0__0__0__0")
    rounds = np.array([5, 10], dtype=np.int64)
    curves = np.arange(4, dtype=np.float64).reshape(2, 2)
    released, final = np.array([3, 4], dtype=np.int64), np.array([1, 2], dtype=np.int64)
    meta = {"label": "x", "ledgers": {}}
    data = UnitData(rounds, curves, curves, {"released": released, "final_arms": final}, meta)
    path = tmp_path / "old.npz"
    # the former UnitData.save, verbatim in its order of entries
    np.savez(
        path,
        rounds=rounds,
        pseudo=curves,
        realized=curves,
        released=released,
        final_arms=final,
        meta=np.array(json.dumps(meta, sort_keys=True)),
        checksum=np.array(data.digest()),
    )
    loaded = UnitData.load(path)
    assert loaded.checksum == data.digest()
    assert loaded.fits(unit, FAMILIES["mab"].unit_arrays)
    assert not loaded.fits(unit, FAMILIES["linear"].unit_arrays)  # another family's unit: recompute
    np.savez(path, rounds=rounds, pseudo=curves, realized=curves, meta=np.array(json.dumps(meta)))
    assert not UnitData.load(path).fits(unit, FAMILIES["mab"].unit_arrays)  # no hash: older


# ---------------------------------------------------------------------------------------
# The linear family through the runner
# ---------------------------------------------------------------------------------------


class StopRunError(Exception):
    pass


@pytest.fixture(scope="module")
def linear_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_experiment(
        load_config(linear_config()), tmp_path_factory.mktemp("linear") / "res", progress=False
    )


@pytest.mark.slow
def test_linear_runs_and_resumes_byte_identically(linear_run: Path, tmp_path: Path) -> None:
    config = load_config(linear_config())
    out = tmp_path / "res"
    seen: list[tuple[str, bool]] = []

    def stop_after_first(unit: Unit, computed: bool) -> None:
        seen.append((unit.stem, computed))
        if computed:
            raise StopRunError

    with pytest.raises(StopRunError):
        run_experiment(config, out, progress=False, on_unit=stop_after_first)
    assert len(list((out / UNITS_DIR).glob("*.npz"))) == 1
    assert not (out / "regret.csv").exists()
    seen.clear()
    run_experiment(config, out, progress=False, on_unit=lambda u, c: seen.append((u.stem, c)))
    assert sorted(c for _, c in seen) == [False] + [True] * (len(config.units()) - 1)
    for name in ("regret.csv", "summary.json", "summary.md"):
        assert (out / name).read_bytes() == (linear_run / name).read_bytes(), name
    for unit in config.units():
        a = UnitData.load(out / UNITS_DIR / f"{unit.stem}.npz")
        b = UnitData.load(linear_run / UNITS_DIR / f"{unit.stem}.npz")
        assert a.checksum == b.checksum
        assert list(a.extra) == ["syncs", "reals", "bits", "clipped"]


def test_linear_outputs_name_the_group_regret_communication_and_privacy(linear_run: Path) -> None:
    summary = json.loads((linear_run / "summary.json").read_text(encoding="utf-8"))
    assert summary["family"] == "linear"
    assert summary["regret_label"] == ["group pseudo-regret", "R_M(t)"]
    assert summary["panels"][0]["caption"] == "synthetic, d=4, K=12, M=3"
    by_label = {r["label"]: r for r in summary["results"]}
    assert set(by_label) == {"FedLinUCB", "LDP-FedLinUCB-Lazy"}
    fed, ldp = by_label["FedLinUCB"], by_label["LDP-FedLinUCB-Lazy"]
    assert fed["epsilon"] is None
    assert fed["privacy"]["claimed"] is None
    for r in (fed, ldp):
        comm = r["communication"]
        assert comm["syncs_mean"] == 12  # T / B
        assert comm["reals_per_sync"] == 4 + 4 * 5 // 2
        assert comm["bits_per_silo_max"] == 12 * 14 * 64
    claimed, exact = ldp["privacy"]["claimed"], ldp["privacy"]["exact"]
    assert (claimed["epsilon"], claimed["delta"], claimed["holds"]) == (1.0, DELTA, True)
    assert exact["delta"] == DELTA
    assert exact["certified"] is True
    assert 0 < exact["epsilon"] <= 1.0
    assert exact["epsilon"] == max(eps for _, eps, _ in exact["nodes"])
    assert "R_M(T)/T" in (linear_run / "summary.md").read_text(encoding="utf-8")
    for ext in ("png", "pdf", "svg"):
        assert (linear_run / f"regret-linear-tiny.{ext}").is_file()
    rows = (linear_run / "regret.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1 + 2 * 3 * 12  # header + 2 algorithms x 3 repetitions x 12 checkpoints


def test_a_saved_linear_ledger_reaccounts_to_the_exact_epsilon(
    linear_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = json.loads((linear_run / "summary.json").read_text(encoding="utf-8"))
    exact = next(r for r in summary["results"] if r["epsilon"] is not None)["privacy"]["exact"]
    assert [n for n, _, _ in exact["nodes"]] == sorted(n for n, _, _ in exact["nodes"])
    answers = []
    for name, (nodes, eps, _) in zip(exact["ledgers"], exact["nodes"], strict=True):
        assert name.endswith(f"__n{nodes}.json")
        ledger = Accountant.from_json((linear_run / name).read_text(encoding="utf-8"))
        assert ledger == Accountant.from_dict(json.loads((linear_run / name).read_text(encoding="utf-8")))
        assert float(ledger.epsilon(DELTA)) == eps  # to the float
        answers.append(eps)
    assert max(answers) == exact["epsilon"]
    worst = exact["ledgers"][answers.index(max(answers))]
    assert account_cli.main(["ledger", str(linear_run / worst), "--delta", repr(DELTA), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["epsilon"], out["route"]) == (exact["epsilon"], exact["route"])


# ---------------------------------------------------------------------------------------
# Config errors
# ---------------------------------------------------------------------------------------


def _error(raw: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return info.value


def test_a_config_of_two_families_is_refused_naming_the_algorithm() -> None:
    raw = mab_config()
    raw["algorithms"].append({"name": "fedlinucb"})
    err = _error(raw)
    assert err.name == "algorithms[2].name"
    assert "'mab' family" in str(err)
    assert "'fedlinucb' is of the 'linear' family" in str(err)
    raw = linear_config(family="linear")
    raw["algorithms"].insert(0, {"name": "se"})
    assert _error(raw).name == "algorithms[0].name"
    assert _error(linear_config(family="mab")).name == "algorithms[0].name"
    assert _error(linear_config(family="bandits")).name == "family"


def _linear_with(path: str, value: Any) -> dict[str, Any]:
    raw = copy.deepcopy(linear_config())
    *parents, last = path.split(".")
    table: Any = raw
    for key in parents:
        table = table[int(key)] if key.isdigit() else table[key]
    table[last] = value
    return raw


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("algorithms.1.params.batch", 0, "algorithms[1].params.batch"),
        ("algorithms.1.params.sigma_mode", "exactly", "algorithms[1].params.sigma_mode"),
        ("algorithms.1.params.batches", 5, "algorithms[1].params.batches"),
        ("algorithms.0.params.delta", 0.1, "algorithms[0].params.delta"),  # not private: no δ
        ("algorithms.1.params.delta", 1.5, "algorithms[1].params.delta"),
        ("algorithms.1.params.batch", 500, "horizon"),  # B > T
        ("instance.dim", 1, "instance.dim"),
        ("instance.arms", 3, "instance.arms"),  # K < d
        ("instance.agents", 0, "instance.agents"),
        ("instance.noise_sd", -1.0, "instance.noise_sd"),
        ("instance.instance_seed", -2, "instance.instance_seed"),
        ("instance.clusters", 5, "instance.clusters"),  # a key of another kind
        ("instance.kind", "gaussian-easy", "instance.kind"),  # a kind of another family
        ("privacy_route", "fastest", "privacy_route"),
        ("exact_privacy", "never", "exact_privacy"),
        ("epsilons", [0.0], "epsilons[0]"),
    ],
)
def test_linear_config_errors_name_the_key(path: str, value: Any, field: str) -> None:
    err = _error(_linear_with(path, value))
    assert err.name == field
    assert str(err).startswith(field)


def test_linear_settings_refused_before_running_name_the_key() -> None:
    # Theorem 5.3 outside Lemma F.2's hypotheses (M = 3 silos): refused naming the ε
    raw = linear_config(algorithms=[{"name": "sdp-fedlinucb-amp-lazy", "params": {"batch": 10}}])
    err = _error(raw)
    assert err.name == "epsilons[0]"
    assert "Theorem 5.3" in str(err)
    # a top-level δ the learners cannot take is named as the top-level key
    assert _error(linear_config(delta=1.0)).name == "delta"
    # one block of arms beyond memory names the instance's agents
    assert _error(_linear_with("instance.agents", 10**6)).name == "instance.agents"


def test_the_shipped_linear_config_is_figure_3a_in_small() -> None:
    config = load_config(shipped_configs()["fedlcb-figure3a"])
    assert config.family == "linear"
    settings = [
        (a.name, dict(a.params)["batch"], dict(a.params).get("sigma_mode")) for a in config.algorithms
    ]
    assert settings == [
        ("fedlinucb", 25, None),
        ("ldp-fedlinucb", 25, "code"),  # the paper's figure: Algorithm 1, the authors' sigma0
        ("ldp-fedlinucb-lazy", 25, "exact"),  # beside it, certified
    ]
    assert dict(config.algorithms[1].params)["delta"] == 0.1
    assert [p.instance for p in config.panels] == [
        LinearInstanceSpec("linear-synthetic", 10, 100, m, 0.5, 2) for m in (10, 100)
    ]
    assert all(p.epsilons == (0.2, 1.0, 5.0) and p.horizon == 10_000 for p in config.panels)
    quick = load_config(shipped_configs()["fedlcb-figure3a"], quick=True)
    assert (quick.repetitions, [p.horizon for p in quick.panels]) == (2, [500, 500])  # seconds
