"""The contract of the command lines (:mod:`accounting.cli.framework`): one-line errors with status
2, and the progress bar."""

from __future__ import annotations

import json
import math
import shlex

import pytest

from accounting.cli import main
from tests.accounting.cli.helpers import on_a_terminal


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ("epsilon --noise skellam --delta 1e-5", "--variance"),
        ("epsilon --noise skellam --variance 0 --delta 1e-5", "--variance"),
        ("epsilon --noise skellam --variance 10 --delta 1e-5 --sensitivity 1.5", "sensitivity"),
        ("calibrate --noise laplace --epsilon 1 --delta 1e-6 --users 3", "Laplace"),
        ("protocol --theorem 2 --epsilon 1 --users 16 --horizon 100", "scaling"),
        ("epsilon --noise cauchy --delta 1e-5", "--noise"),
    ],
)
def test_invalid_input_is_one_line_and_status_2(
    argv: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(shlex.split(argv))
    except SystemExit as err:
        code = int(err.code or 0)
    assert code == 2
    err_text = capsys.readouterr().err.strip()
    assert len(err_text.splitlines()) == 1
    assert needle in err_text
    assert "Traceback" not in err_text


#: Commands with a loop to report, on inputs that answer in about a second (a test of the bar, not
#: of the answer: 20 Skellam compositions took 10 s here).
LONG = {
    "epsilon": "epsilon --noise skellam --variance 10 --compositions 3 --delta 1e-5",
    "delta": "delta --noise discrete-laplace --scale 5 --compositions 3 --epsilon 1",
    "rdp": "rdp --noise skellam --variance 10 --compositions 3 --alpha 2",
    "calibrate": "calibrate --noise discrete-laplace --epsilon 1 --delta 1e-6 --compositions 3",
}


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(LONG))
def test_no_progress_hides_the_bar_and_keeps_the_answer(command: str) -> None:
    """On a terminal the bar is drawn on standard error (never on stdout, so --json stays JSON);
    --no-progress draws nothing at all."""
    argv = [*shlex.split(LONG[command]), "--json"]
    code, out, err = on_a_terminal(argv)
    assert code == 0
    answer = json.loads(out)  # nothing but the JSON on stdout
    if command != "rdp":  # the RDP sum has no long loop to report
        assert "step" in err
    code, quiet_out, quiet_err = on_a_terminal([*argv, "--no-progress"])
    assert code == 0
    assert quiet_err == ""
    assert json.loads(quiet_out) == answer


def test_no_bar_when_standard_error_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(shlex.split(LONG["epsilon"])) == 0
    assert capsys.readouterr().err == ""


def test_checked_gives_the_validators_wording_as_an_argparse_error() -> None:
    import argparse

    from accounting import validate as v
    from accounting.cli.framework import checked

    count = checked(v.integer, integer=True, minimum=2, maximum=5)
    assert count("3") == 3
    assert count("4.0") == 4  # an integer written as a decimal
    with pytest.raises(argparse.ArgumentTypeError, match=r"'7' is invalid: expected an integer in \[2, 5\]"):
        count("7")
    with pytest.raises(argparse.ArgumentTypeError, match="'x' is not an integer"):
        count("x")


def test_json_text_is_strict_and_spells_infinity() -> None:
    from accounting.cli.framework import json_text

    assert json.loads(json_text({"epsilon": math.inf})) == {"epsilon": "inf"}
    with pytest.raises(RuntimeError, match="NaN"):
        json_text({"epsilon": math.nan})
