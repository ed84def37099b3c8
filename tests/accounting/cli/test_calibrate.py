"""``dp-account calibrate``: the least noise, one unit per family, total and per user, and its stops."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from accounting.cli import main
from tests.accounting.cli.helpers import json_of


def test_calibrate_a_skellam_for_4096_users(capsys: pytest.CaptureFixture[str]) -> None:
    cal = json_of(capsys, shlex.split("calibrate --noise skellam --epsilon 1 --delta 1e-6 --users 4096"))
    assert cal["parameter"] == "variance"
    assert cal["epsilon_certified"] <= 1  # type: ignore[operator]
    assert cal["share"]["type"] == "Skellam"  # type: ignore[index]


UNITS = {
    "gaussian": "sigma",
    "laplace": "scale",
    "discrete-laplace": "scale",
    "discrete-gaussian": "sigma",
    "skellam": "variance",
}


@pytest.mark.slow
@pytest.mark.parametrize(("family", "users"), [(f, 1 if f == "laplace" else 4) for f in UNITS])
def test_calibrate_reports_total_and_per_user_in_one_unit(
    family: str, users: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from accounting.calibration import calibrate

    argv = ["calibrate", "--noise", family, "--epsilon", "1", "--delta", "1e-6", "--users", str(users)]
    data = json_of(capsys, argv)
    noise = data["noise"]
    assert isinstance(noise, dict)
    assert set(noise) == {"unit", "total", "per_user", "users", "calibrated", "combine"}
    unit, total, per_user = noise["unit"], noise["total"], noise["per_user"]
    assert unit == UNITS[family] == data["parameter"]
    assert data[unit] == total
    assert noise["users"] == users
    assert isinstance(total, float)
    assert isinstance(per_user, float)
    cal = calibrate(family, 1.0, 1e-6, users=users)  # the library's defaults, precision included
    calibrated = noise["calibrated"]
    assert calibrated == ("per_user" if family == "discrete-gaussian" else "total")
    assert noise[calibrated] == cal.value
    # the users' shares make the total (each derived value rounded toward more noise)
    if unit == "sigma":  # σ² adds
        assert total**2 == pytest.approx(users * per_user**2, rel=1e-14)
        derived_up = users * per_user**2 if calibrated == "total" else total**2  # the derived side
        assert derived_up >= (users * per_user**2 + total**2) / 2 * (1 - 1e-15)
    elif unit == "variance":  # variances add
        assert users * per_user == pytest.approx(total, rel=1e-15)
        assert per_user >= total / users
    elif family == "discrete-laplace":  # the same scale in every share, shapes 1/users add to 1
        assert per_user == total
        share = data["share"]
        assert isinstance(share, dict)
        assert share["type"] == "Polya"
        assert "exp(-1/scale)" in str(noise["combine"])
    else:
        assert per_user == total
    # the text says the same, in decimals
    assert main(argv) == 0
    text = capsys.readouterr().out
    head = text.splitlines()[0]
    assert head.startswith(f"{family}: {unit} = {total!r}")
    if users > 1:
        assert f"{per_user!r} per user" in head
        assert f"each of {users} users adds" in text
    assert "Fraction" not in text
    assert "mpf" not in text


@pytest.mark.slow
def test_calibrate_stops_at_max_evaluations(capsys: pytest.CaptureFixture[str]) -> None:
    """--max-evaluations: the search stops refining once that many levels are accounted and one
    meets the target; the answer is certified, the output gives the bracket of the least noise, and
    the same command prints the same bytes again."""
    argv = ["calibrate", "--noise", "skellam", "--epsilon", "1", "--delta", "1e-6", "--compositions", "10"]
    full = json_of(capsys, [*argv, "--no-progress"])
    assert full["converged"] is True
    assert isinstance(full["evaluations"], int)
    assert full["evaluations"] > 2
    quick = json_of(capsys, [*argv, "--max-evaluations", "2", "--no-progress"])
    assert quick["evaluations"] == 2
    assert quick["converged"] is False
    assert quick["epsilon_certified"] <= 1  # type: ignore[operator]
    assert quick["not_met"] < full["variance"] < quick["variance"]  # type: ignore[operator]
    assert main([*argv, "--max-evaluations", "2", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "the search stopped at --max-evaluations 2 (2 noise levels accounted)" in text
    assert f"lies in ({quick['not_met']!r}, {quick['variance']!r}]" in text
    assert "a larger --max-evaluations narrows it" in text
    assert main([*argv, "--max-evaluations", "2", "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == quick
    with pytest.raises(SystemExit):
        main([*argv, "--max-evaluations", "0"])
    assert "--max-evaluations" in capsys.readouterr().err


@pytest.mark.slow
def test_calibrate_answer_does_not_depend_on_the_clock(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``calibrate --noise discrete-laplace --epsilon 1e-300 --delta 1e-6`` printed
    500000.00 on a quiet machine and 500499.04 on a busy one (an 8 s default time limit). A clock
    that jumps an hour at every reading now changes no byte of the default answer and is never
    read; it still stops an explicit --time-limit, which is what makes this test able to fail."""
    import time

    from accounting import DEFAULT_DPS

    argv = ["calibrate", "--noise", "discrete-laplace", "--epsilon", "1e-300", "--delta", "1e-6"]
    argv += ["--json", "--no-progress"]
    assert main(argv) == 0
    quiet = capsys.readouterr().out
    readings: list[float] = []

    def busy() -> float:
        readings.append(3600.0 * (len(readings) + 1))
        return readings[-1]

    monkeypatch.setattr(time, "monotonic", busy)
    assert main(argv) == 0
    assert capsys.readouterr().out == quiet
    assert readings == []
    least = json.loads(quiet)
    assert least["converged"] is True
    assert least["dps"] == DEFAULT_DPS  # the library's precision
    assert main([*argv, "--time-limit", "8"]) == 0
    limited = json.loads(capsys.readouterr().out)
    assert readings
    assert limited["converged"] is False
    assert limited["epsilon_certified"] <= 1e-300
    assert limited["not_met"] < least["scale"] < limited["scale"]


def test_calibrate_takes_a_sampling_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """DP-SGD's question from the command line: the least σ of a Poisson-sampled Gaussian (the
    RDP route here, for speed; the PLD route is checked in tests/accounting/test_calibration.py)."""
    argv = "calibrate --noise gaussian --epsilon 1 --delta 1e-5 --compositions 10 --sampling-rate 0.1"
    record: Any = json_of(capsys, shlex.split(argv + " --neighbouring add-remove --route rdp"))
    assert record["inputs"]["sampling_rate"] == 0.1
    assert record["inputs"]["sampling"] == "poisson"
    assert record["epsilon_certified"] <= 1
    assert 1.5 < record["sigma"] < 2.5


def test_sampling_without_a_rate_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = "calibrate --noise gaussian --epsilon 1 --delta 1e-5 --sampling fixed"
    assert main(shlex.split(argv)) == 2
    assert "--sampling" in capsys.readouterr().err
