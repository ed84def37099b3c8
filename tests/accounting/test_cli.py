"""The ``dp-account`` command line: the demo table, its JSON, and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from accounting.cli import demo_rows, main


def test_demo_rows_exact_never_above_published() -> None:
    """Every published route is an upper bound, so the exact ε must not exceed it."""
    rows = demo_rows([1.0], 1e-6, users=4, dps=15)
    assert len(rows) == 4
    for row in rows:
        assert 0 < row.exact_epsilon <= row.bound_epsilon
        assert row.exact_digits >= 15


def test_demo_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--epsilons", "2", "--delta", "1e-5", "--dps", "15", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["delta"] == 1e-5
    assert {r["noise"].split("(")[0] for r in data["rows"]} >= {"DiscreteLaplace", "Skellam"}
    for r in data["rows"]:
        assert r["exact_epsilon"] <= r["bound_epsilon"]


def test_demo_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--epsilons", "0.5", "--dps", "15"]) == 0
    out = capsys.readouterr().out
    assert "Skellam(variance=" in out
    assert "certified to at least" in out


@pytest.mark.parametrize(
    "bad", [["demo", "--delta", "0"], ["demo", "--delta", "2"], ["demo", "--epsilons", "nan"]]
)
def test_bad_arguments_exit_with_a_message(bad: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(bad)
    assert err.value.code == 2
    assert "must be" in capsys.readouterr().err


def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "accounting", "demo", "--epsilons", "5", "--dps", "15", "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(out.stdout)["rows"]
