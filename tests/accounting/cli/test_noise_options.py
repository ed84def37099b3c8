"""The noise and accounting options: sizes that cannot finish, relations and sampling, refused at once."""

from __future__ import annotations

import shlex

import pytest

from accounting.cli import main
from tests.accounting.cli.helpers import exit_2_one_line


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (
            [
                "epsilon",
                "--noise",
                "gaussian",
                "--sigma",
                "1",
                "--users",
                "4",
                "--delta",
                "1e-5",
                "--neighbouring",
                "add-remove",
            ],
            "add-remove",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--neighbouring", "both"],
            "--neighbouring",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--sampling-rate", "0"],
            "--sampling-rate",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--sampling-rate", "1.5"],
            "--sampling-rate",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--sampling", "fixed"],
            "--sampling",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--route", "published:x"],
            "--route",
        ),
    ],
)
def test_relation_and_sampling_errors_exit_2(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as err:
        code = int(err.code or 0)
    assert code == 2
    err_text = capsys.readouterr().err
    assert option in err_text
    assert "Traceback" not in err_text
    assert len(err_text.strip().splitlines()) <= 2


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        ("epsilon --noise gaussian --sigma 1e-300 --delta 1e-5", "--sigma"),
        ("epsilon --noise laplace --scale 1e-300 --delta 1e-5", "--scale"),
        ("epsilon --noise discrete-gaussian --sigma 1e-300 --users 10 --delta 1e-5", "--sigma"),
        ("epsilon --noise skellam --variance 1e31 --delta 1e-5", "--variance"),
        ("epsilon --noise skellam --variance 10 --users 1000000000000000000000 --delta 1e-5", "--users"),
        (
            "epsilon --noise gaussian --sigma 1 --compositions 1000000000000000000000 --delta 1e-5",
            "--compositions",
        ),
        ("epsilon --noise discrete-laplace --scale 1 --sensitivity 1e6 --delta 1e-5", "--sensitivity"),
        ("epsilon --noise skellam --variance 1 --compositions 1000000000000 --delta 1e-5", "--compositions"),
        ("calibrate --noise laplace --epsilon 1 --delta 1e-6 --compositions 1000000000000", "--compositions"),
        ("epsilon --noise gaussian --sigma 1 --sensitivity 1e308 --delta 1e-5", "--sensitivity"),
        ("rdp --noise discrete-gaussian --sigma 3 --alpha 1e308", "--alpha"),
        ("rdp --noise gaussian --sigma 1e-99 --alpha 1e300", "--alpha"),
        ("calibrate --noise skellam --epsilon 1 --delta 1e-6 --sensitivity 1e9", "--sensitivity"),
        ("calibrate --noise gaussian --epsilon 1e-320 --delta 1e-6", "--epsilon"),
        ("shuffle --epsilon0 1e-300 --users 100 --delta 1e-6", "--epsilon0"),
        ("protocol --theorem 1 --epsilon 1e-300 --users 1024 --horizon 100", "--epsilon"),
    ],
)
def test_sizes_that_cannot_finish_are_refused_at_once(
    argv: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any work, naming the option (the message gives the limit and the reason)."""
    exit_2_one_line(shlex.split(argv), capsys, option)
