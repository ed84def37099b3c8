"""``dp-account protocol``: the parameters of Theorems 1-6 of the distributed MAB paper."""

from __future__ import annotations

import json
import shlex

import pytest

from accounting.cli import main
from tests.accounting.cli.helpers import json_of


def test_protocol_of_theorem_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Chowdhury & Zhou 2023, Theorem 2 (Skellam shares, scaling factor s = 10): g, τ, m and bits."""
    proto = json_of(
        capsys, shlex.split("protocol --theorem 2 --epsilon 1 --users 1024 --horizon 1000000 --scaling 10")
    )
    assert (proto["g"], proto["tau"], proto["m"], proto["bits_per_user"]) == (320, 2459, 332599, 19)


def test_scale_is_the_old_spelling_of_scaling(capsys: pytest.CaptureFixture[str]) -> None:
    """``--scale`` (the old spelling; ``--scale`` is a noise's scale b everywhere else) still works:
    the same answer, the same ``inputs`` (under the new name), and one note on stderr."""
    argv = "protocol --theorem 4 --epsilon 0.5 --users 64 --horizon 1000 --json --scaling 3"
    new = json_of(capsys, shlex.split(argv))
    assert main(shlex.split(argv.replace("--scaling", "--scale"))) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == new
    assert (
        err == "dp-account: note: option '--scale' is now spelled '--scaling'; the old spelling still works\n"
    )
