"""``dp-account protocol``: the parameters of Theorems 1-6 of the distributed MAB paper."""

from __future__ import annotations

import shlex

import pytest

from tests.accounting.cli.helpers import json_of


def test_protocol_of_theorem_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Chowdhury & Zhou 2023, Theorem 2 (Skellam shares, scaling factor s = 10): g, τ, m and bits."""
    proto = json_of(
        capsys, shlex.split("protocol --theorem 2 --epsilon 1 --users 1024 --horizon 1000000 --scale 10")
    )
    assert (proto["g"], proto["tau"], proto["m"], proto["bits_per_user"]) == (320, 2459, 332599, 19)
