"""``dp-account demo``: the table, its JSON, and its option errors."""

from __future__ import annotations

import json

import pytest

from accounting.cli import main


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
    err_text = capsys.readouterr().err
    assert f"argument {bad[1]}" in err_text
    assert "is invalid: expected" in err_text
