"""``dp-regret run`` on extreme and bad configs: each ends cleanly, or with status 2 and one line
naming the config field (or option), its value and what is valid, before anything is built.

The costs of a run are known before they are paid (:mod:`learners.budget`): every family's
estimate of a unit's peak memory and work comes from the shapes its engine allocates, and a
config beyond the budget is refused with the estimate, the budget and the option that raises it.
"""

from __future__ import annotations

import math
import os
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from learners.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_WORK, Budget
from learners.cli import main as regret_main
from learners.config import load_config, shipped_configs
from learners.datasets import load_letor
from learners.errors import ConfigError, ParameterError
from learners.families import FAMILIES
from learners.ldp.instances import load_ratings, movielens_instance
from learners.ldp.noise import rr_flip, rr_outputs
from learners.linear.spec import MAX_EIG_FLOOR, make_learner
from learners.linear.state import state_shapes
from learners.schema import MAX_NAME
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


# -- data files: read only as regular text files, sniffed first, bounded ---------------------------


def _data_configs(path: str) -> dict[str, tuple[dict[str, Any], str]]:
    """One config of each family that reads a data file, with ``path`` as its file, and the field
    a refusal of the file names."""
    mslr = _shipped(
        "figure1",
        panels=[{"name": "d", "instance": {"kind": "mslr", "clusters": 3, "path": path}, "epsilons": [1.0]}],
    )
    linear = _shipped("fedlcb-figure2c")
    linear["instance"]["path"] = path
    movielens = _shipped("ldp-movielens")
    movielens["panels"][0]["instance"]["path"] = path
    return {
        "mab": (mslr, "panels[0].instance.path="),
        "linear": (linear, "instance.path="),
        "ldp": (movielens, "panels[0].instance.path="),
    }


def _special(tmp_path: Path, kind: str) -> Path:
    target = tmp_path / f"data-{kind}"
    if kind == "nul":  # 200 MB of NULs without a line end (sparse: nothing is written)
        with target.open("wb") as handle:
            handle.truncate(200 * 2**20)
    elif kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)  # opened for reading, a FIFO without a writer would block
    elif kind == "binary":
        target.write_bytes(bytes(range(256)) * 64)
    elif kind == "long-line":
        target.write_bytes(b"1 " * 100_000)
    return target


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("kind", ["nul", "folder", "fifo", "binary", "long-line"])
@pytest.mark.parametrize("family", ["mab", "linear", "ldp"])
def test_a_data_path_that_is_no_data_file_is_refused_naming_the_field(
    tmp_path: Path, family: str, kind: str
) -> None:
    path = _special(tmp_path, kind)
    data, field = _data_configs(str(path))[family]
    outcome = _run(tmp_path, data, "--quick")
    assert_refused(outcome, "dp-regret", field)
    assert str(path) in outcome.err
    assert not (tmp_path / "out").exists()  # refused when the config is loaded


@pytest.mark.parametrize("family", ["mab", "linear", "ldp"])
def test_a_data_file_without_read_permission_is_refused_naming_the_field(
    tmp_path: Path, family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data.txt"
    path.write_text("1 qid:1 1:0.5\n", encoding="utf-8")
    real_open = os.open

    def denied(name: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(name) == str(path):  # as for a file of mode 000 (tests may run as root)
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    data, field = _data_configs(str(path))[family]
    outcome = _run(tmp_path, data, "--quick")
    assert_refused(outcome, "dp-regret", field)
    assert "Permission denied" in outcome.err


def test_an_mslr_file_with_fewer_rows_than_clusters_is_refused_when_loaded(tmp_path: Path) -> None:
    path = tmp_path / "three.txt"
    path.write_text("".join(f"{r} qid:{r} 1:{r}.5 2:1\n" for r in range(3)), encoding="utf-8")
    data, _ = _data_configs(str(path))["mab"]
    data["panels"][0]["instance"]["clusters"] = 5
    outcome = _run(tmp_path, data, "--quick")
    assert_refused(outcome, "dp-regret", "panels[0].instance.clusters=5")
    assert "x.toml" in outcome.err  # the config
    assert "(3)" in outcome.err  # the rows the file has
    assert not (tmp_path / "out").exists()


def test_an_mslr_feature_index_beyond_the_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_text("1 qid:1 999999999:1\n2 qid:2 1:1\n0 qid:3 2:1\n", encoding="utf-8")
    with pytest.raises(ParameterError, match="feature indices at most"):
        load_letor(path)


def test_movielens_ids_size_no_matrix(tmp_path: Path) -> None:
    """One rating of user and item 999999999: the dense matrix is refused, and the instance (which
    keeps only the first `arms` items) allocates by the rows of the file, not by the ids."""
    path = tmp_path / "ua.base"
    path.write_text("999999999\t999999999\t5\t0\n", encoding="utf-8")
    with pytest.raises(ParameterError, match="max user id"):
        load_ratings(path)
    with pytest.raises(ParameterError, match="found 0"):
        movielens_instance(path, arms=2, rank=1)
    data, field = _data_configs(str(path))["ldp"]
    assert_refused(_run(tmp_path, data, "--quick"), "dp-regret", field)


def test_movielens_instance_from_the_rows_equals_the_dense_matrix(tmp_path: Path) -> None:
    """Zheng et al. (2020)'s official code (LDPbandit2020): the first `arms` columns of the dense
    ratings matrix, users without a rating there dropped; built from the rows, the same instance."""
    rng = np.random.default_rng(5)
    lines = [
        f"{u}\t{i}\t{rng.integers(1, 6)}\t{u * 1000 + i}"
        for u in rng.permutation(np.arange(1, 80))
        for i in range(1, 40)
        if rng.random() < 0.4
    ]
    lines.append(lines[0].rsplit("\t", 2)[0] + "\t1\t0")  # a repeated pair keeps its last rating
    path = tmp_path / "ua.base"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    arms, rank = 12, 6
    dense = load_ratings(path)[:, :arms].astype(np.float64)
    dense = dense[dense.sum(axis=1) > 0]
    normalized = 0.4 * (dense - 2.5)
    u, s, vt = np.linalg.svd(normalized, full_matrices=False)
    got = movielens_instance(path, arms=arms, rank=rank)
    assert np.array_equal(got.theta, s[:rank])
    assert got.pool is not None
    assert np.array_equal(got.pool, u[:, None, :rank] * vt[:rank, :].T[None, :, :])


def test_a_name_too_long_for_a_file_name_is_refused(tmp_path: Path) -> None:
    data = _shipped("figure2")
    data["name"] = "x" * (MAX_NAME + 1)
    outcome = _run(tmp_path, data, "--quick")
    assert_refused(outcome, "dp-regret", "name=")
    assert not (tmp_path / "out").exists()
