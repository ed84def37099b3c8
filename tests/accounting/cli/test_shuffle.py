"""``dp-account shuffle-protocol``: the parameters of the shuffle summation protocols and their limits."""

from __future__ import annotations

import json
import math
import shlex

import pytest

from accounting.cli import main
from tests.accounting.cli.helpers import exit_2_one_line, json_of


def test_shuffle_protocol_json_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    from accounting.calibration import shuffle_sum_parameters

    argv = "shuffle-protocol --protocol dpdpe-vector --epsilon 2 --delta 1e-5 --users 100000 --dimension 4"
    assert main([*shlex.split(argv), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    par = shuffle_sum_parameters("dpdpe-vector", 2.0, 1e-5, 100_000, 4)
    assert (record["g"], record["b"], record["p"], record["bits_per_user"]) == (par.g, par.b, par.p, par.bits)
    assert record["variance_bound"] == par.variance()
    assert main(shlex.split(argv)) == 0
    assert "one-bit messages" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ("shuffle-protocol --protocol vec --epsilon 1 --delta 1e-6 --users 10", "--protocol"),
        ("shuffle-protocol --protocol cheu-vector --epsilon 16 --delta 1e-6 --users 10", "epsilon"),
        (
            "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 10 --dimension 2",
            "dimension",
        ),
        ("shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 2 --users 10", "--delta"),
    ],
)
def test_shuffle_protocol_bad_input_exits_2(
    argv: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:  # argparse exits for bad syntax; library errors return 2
        code = main(shlex.split(argv))
    except SystemExit as err:
        code = int(err.code or 0)
    assert code == 2
    assert needle in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value"),
    [("--epsilon", "1e-300"), ("--epsilon", "1e-51"), ("--bound", "1e308"), ("--bound", "1e51"),
     ("--bound", "1e-300")],
)  # fmt: skip
@pytest.mark.parametrize("protocol", ["dpdpe-scalar", "dpdpe-vector", "cheu-vector"])
def test_shuffle_protocol_refuses_sizes_beyond_the_float_range(
    protocol: str, option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused by the option's own check, with the limit and the reason (no generic fallback)."""
    argv = ["shuffle-protocol", "--protocol", protocol, "--epsilon", "1", "--delta", "1e-6", "--users", "10"]
    exit_2_one_line([*argv, option, value], capsys, option, "float range")
    assert "cannot compute" not in capsys.readouterr().err


def test_shuffle_protocol_at_its_limits_is_finite_or_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """At the extremes of every option the call would send more than 10^18 one-bit messages: refused,
    naming the option; within the limit the answer is a finite, positive variance bound."""
    for protocol, bound in (("dpdpe-scalar", "1e50"), ("dpdpe-vector", "1e50"), ("cheu-vector", "1e-50")):
        dimension = "1" if protocol == "dpdpe-scalar" else "1000000000000000000"
        argv = ["shuffle-protocol", "--protocol", protocol, "--epsilon", "1e-50", "--bound", bound,
                "--delta", "5e-324", "--users", "1000000000000000000", "--dimension", dimension]  # fmt: skip
        exit_2_one_line(argv, capsys, "--", "one-bit messages")
    for protocol in ("dpdpe-scalar", "dpdpe-vector", "cheu-vector"):
        record = json_of(
            capsys,
            ["shuffle-protocol", "--protocol", protocol, "--epsilon", "0.1", "--bound", "10",
             "--delta", "5e-324", "--users", "10000"],
        )  # fmt: skip
        assert 0 < float(record["variance_bound"]) < math.inf  # type: ignore[arg-type]
        assert 0 < float(record["p"]) <= 0.5  # type: ignore[arg-type]
