"""``dp-account dpsgd``: DP-SGD's questions from the command line (add-remove by default)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from accounting import dpsgd
from accounting.cli import main
from tests.accounting.cli.helpers import exit_2_one_line, json_of

RUN = "dpsgd --noise-multiplier 1.0 --sample-rate 0.01 --delta 1e-5 --route rdp"


def test_a_run_and_its_curve(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "curve.csv"
    record: Any = json_of(capsys, shlex.split(f"{RUN} --steps 100,1000 --csv {out}"))
    assert record["neighbouring"] == "add-remove"
    assert [p["steps"] for p in record["curve"]] == [100, 1000]
    expected = dpsgd.epsilon(1.0, 0.01, 1000, 1e-5, route="rdp")
    assert record["curve"][1]["epsilon"] == expected.upper
    assert out.read_text(encoding="utf-8").splitlines()[0] == "steps,epsilon,epsilon_lower,route"
    assert main(shlex.split(f"{RUN} --steps 100 --no-progress")) == 0
    assert "add-remove neighbours (the default, as Opacus and dp_accounting)" in capsys.readouterr().out


def test_the_least_noise_multiplier(capsys: pytest.CaptureFixture[str]) -> None:
    argv = "dpsgd --epsilon 1 --sample-rate 0.1 --steps 10 --delta 1e-5 --route rdp"
    record: Any = json_of(capsys, shlex.split(argv))
    assert record["epsilon_certified"] <= 1
    assert dpsgd.epsilon(record["noise_multiplier"], 0.1, 10, 1e-5, route="rdp").upper <= 1


def test_a_schedule_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    phases = [
        {"sample_rate": 0.01, "noise_multiplier": 1.2, "steps": 50},
        {"sample_rate": 0.02, "noise_multiplier": 0.9, "steps": 30},
    ]
    path.write_text(json.dumps(phases), encoding="utf-8")
    record: Any = json_of(capsys, shlex.split(f"dpsgd --schedule {path} --delta 1e-5 --route rdp"))
    expected = dpsgd.schedule_epsilon([(0.01, 1.2, 50), (0.02, 0.9, 30)], 1e-5, route="rdp")
    assert (record["phases"], record["epsilon"]) == (2, expected.upper)


@pytest.mark.slow
def test_an_opacus_history_and_its_answer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text("[[1.1, 0.05, 20], [0.9, 0.1, 10]]", encoding="utf-8")
    record: Any = json_of(
        capsys, shlex.split(f"dpsgd --opacus-history {path} --opacus-epsilon 1.0 --delta 1e-5")
    )
    assert record["verdict"] == "optimistic"  # 1.0 is below the certified lower end (about 3.70)
    assert record["epsilon_lower"] > 1.0


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ("dpsgd --noise-multiplier 1 --delta 1e-5", "--sample-rate"),
        ("dpsgd --noise-multiplier 1 --epsilon 1 --sample-rate 0.1 --steps 5 --delta 1e-5", "exactly one of"),
        ("dpsgd --noise-multiplier 1 --sample-rate 0.1 --steps 0 --delta 1e-5", "--steps"),
        ("dpsgd --noise-multiplier 1 --sample-rate 0.1 --steps x --delta 1e-5", "--steps"),
        ("dpsgd --noise-multiplier 1 --sample-rate 0.1 --steps 2,1" + "0" * 30 + " --delta 1e-5", "10^18"),
        ("dpsgd --noise-multiplier 1 --sample-rate 0.1 --steps 5 --delta 1e-5 --csv c.csv", "--csv"),
        ("dpsgd --noise-multiplier 1 --sample-rate 0 --steps 5 --delta 1e-5", "--sample-rate"),
        ("dpsgd --noise-multiplier -1 --sample-rate 0.1 --steps 5 --delta 1e-5", "--noise-multiplier"),
        ("dpsgd --opacus-history /dev/zero --delta 1e-5", "--opacus-history"),
        ("dpsgd --opacus-history h.json --sampling fixed --delta 1e-5", "--sampling"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(
    argv: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    exit_2_one_line(shlex.split(argv), capsys, needle)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('[{"sample_rate": 0.1, "noise_multiplier": 1.0, "steps": -5}]', "--schedule[0].steps"),
        ('[{"sample_rate": 0.1, "noise_multiplier": 1.0}]', "schedule[0]"),
        ('{"sample_rate": 0.1}', "--schedule"),
        ("not json", "--schedule"),
    ],
)
def test_a_bad_schedule_names_the_field(
    content: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.json"
    path.write_text(content, encoding="utf-8")
    exit_2_one_line(shlex.split(f"dpsgd --schedule {path} --delta 1e-5"), capsys, needle)


def test_a_bad_opacus_history_names_the_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history.json"
    path.write_text("[[1.0, 0.1]]", encoding="utf-8")
    exit_2_one_line(shlex.split(f"dpsgd --opacus-history {path} --delta 1e-5"), capsys, "--opacus-history[0]")
