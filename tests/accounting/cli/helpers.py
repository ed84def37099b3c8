"""What the tests of ``dp-account`` share: run it in-process and read its answer or its error."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from accounting.cli import main


def json_of(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, object]:
    """The JSON record ``dp-account ARGV --json`` prints (status 0 asserted)."""
    assert main([*argv, "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def exit_2_one_line(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> None:
    """``dp-account ARGV`` exits with status 2 and one line on stderr holding every needle."""
    try:
        code = main(argv)
    except SystemExit as err:
        code = int(err.code or 0)
    err_text = capsys.readouterr().err
    assert code == 2, err_text
    assert len(err_text.strip().splitlines()) == 1, err_text
    assert "Traceback" not in err_text
    for needle in needles:
        assert needle in err_text, err_text


class Terminal(io.StringIO):
    """A standard error that says it is a terminal, where the progress bar is shown."""

    def isatty(self) -> bool:
        return True


def on_a_terminal(argv: list[str]) -> tuple[int, str, str]:
    """Status, stdout and stderr of ``dp-account ARGV`` with a standard error that is a terminal."""
    out, err = io.StringIO(), Terminal()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()
