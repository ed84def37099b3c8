"""``dp-account`` as a whole: ``python -m accounting``, and the parser every subcommand adds to."""

from __future__ import annotations

import json
import subprocess
import sys


def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "accounting", "demo", "--epsilons", "5", "--dps", "15", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["rows"]


def test_cli_precision_defaults_are_the_library_s() -> None:
    """One default precision: every ``--dps`` of ``dp-account`` (calibrate's was 15) is DEFAULT_DPS."""
    import argparse

    from accounting import DEFAULT_DPS
    from accounting.cli import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    with_dps = {
        name: sub.get_default("dps")
        for name, sub in commands.choices.items()
        if any("--dps" in a.option_strings for a in sub._actions)
    }
    assert {"calibrate", "epsilon", "delta", "rdp", "demo", "shuffle-protocol"} <= set(with_dps)
    assert set(with_dps.values()) == {DEFAULT_DPS}
    args = parser.parse_args(["calibrate", "--noise", "skellam", "--epsilon", "1", "--delta", "1e-6"])
    assert args.dps == DEFAULT_DPS
    assert args.time_limit is None
    assert args.max_evaluations is None


def test_every_subcommand_module_adds_its_parser_in_the_order_of_the_help() -> None:
    import argparse

    from accounting.cli import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(commands.choices) == [
        "demo",
        "epsilon",
        "delta",
        "rdp",
        "calibrate",
        "dpsgd",
        "protocol",
        "shuffle",
        "shuffle-protocol",
        "ledger",
        "tree",
        "curve",
    ]


def test_python_dash_m_accounting_cli_is_dp_account() -> None:
    """``accounting.cli:main`` (the console script) and ``python -m accounting.cli`` are one command."""
    out = subprocess.run(
        [sys.executable, "-m", "accounting.cli", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("dp-account ")
