"""The ``dp-account`` command line (also ``python -m accounting``).

Subcommands ``epsilon``, ``delta``, ``rdp``, ``calibrate``, ``dpsgd``, ``curve``, ``protocol``, ``shuffle``,
``shuffle-protocol``, ``ledger``, ``tree`` and ``demo``, each with ``--json``. Invalid input exits with
status 2 and a one-line message naming the bad option. The subcommands that may account for long
(``epsilon``, ``delta``, ``rdp``, ``calibrate``, ``dpsgd``, ``curve``, ``ledger``, ``tree``) show a
progress bar on standard error when it is a terminal (:func:`accounting.progress.bar`), never with
``--no-progress``.

One module per subcommand, each adding its own parser (``add_parser``):

* :mod:`~accounting.cli.demo` (``demo``), :mod:`~accounting.cli.epsilon_delta_rdp` (``epsilon``,
  ``delta``, ``rdp``), :mod:`~accounting.cli.calibrate`, :mod:`~accounting.cli.dpsgd`,
  :mod:`~accounting.cli.protocol`,
  :mod:`~accounting.cli.shuffle` (``shuffle``, ``shuffle-protocol``), :mod:`~accounting.cli.ledger`,
  :mod:`~accounting.cli.tree`, :mod:`~accounting.cli.curve`;
* :mod:`~accounting.cli.noise_options`: the options naming a noise and its accounting (shared with
  ``dp-audit``);
* :mod:`~accounting.cli.framework`: what the three command lines (``dp-account``, ``dp-audit``,
  ``dp-regret``) share — the contract of :func:`run`, the option types checked by
  :mod:`accounting.validate`, strict JSON output, the progress bar.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from accounting.claims import ClaimCheck, check_claim
from accounting.cli import calibrate, curve, demo, dpsgd, epsilon_delta_rdp, ledger, protocol, shuffle, tree
from accounting.cli.calibrate import NoiseAmount, noise_amount
from accounting.cli.curve import CURVE_FORMATS, MAX_CURVE_POINTS, CurveSpec, curve_spec
from accounting.cli.epsilon_delta_rdp import MAX_LATTICE_ORDER
from accounting.cli.framework import (
    MAX_MESSAGE,
    Parser,
    checked,
    json_text,
    package_version,
    parse_number,
    run,
)
from accounting.cli.noise_options import (
    MAX_BINOMIAL_TRIALS,
    MAX_LATTICE_SHIFT,
    MAX_LATTICE_VARIANCE,
    MAX_PLD_COMPOSITIONS,
    MAX_SENSITIVITY,
    MAX_SIGNAL_TO_NOISE,
    NOISE_PARAMETERS,
    add_noise_arguments,
    exact_compositions,
    lattice_sensitivity,
    lattice_width,
    noise_from_arguments,
    noise_text,
    signal_to_noise,
)
from accounting.cli.shuffle import MAX_SHUFFLE_BOUND, MIN_SHUFFLE_EPSILON
from accounting.cli.tree import MAX_TREE_EPSILON, MIN_TREE_EPSILON, tree_sensitivities
from accounting.curves import curve_grid
from accounting.demo import DemoRow, demo_rows

__all__ = [
    "CURVE_FORMATS",
    "MAX_BINOMIAL_TRIALS",
    "MAX_CURVE_POINTS",
    "MAX_LATTICE_ORDER",
    "MAX_LATTICE_SHIFT",
    "MAX_LATTICE_VARIANCE",
    "MAX_MESSAGE",
    "MAX_PLD_COMPOSITIONS",
    "MAX_SENSITIVITY",
    "MAX_SHUFFLE_BOUND",
    "MAX_SIGNAL_TO_NOISE",
    "MAX_TREE_EPSILON",
    "MIN_SHUFFLE_EPSILON",
    "MIN_TREE_EPSILON",
    "NOISE_PARAMETERS",
    "ClaimCheck",
    "CurveSpec",
    "DemoRow",
    "NoiseAmount",
    "Parser",
    "add_noise_arguments",
    "build_parser",
    "check_claim",
    "checked",
    "curve_grid",
    "curve_spec",
    "demo_rows",
    "exact_compositions",
    "json_text",
    "lattice_sensitivity",
    "lattice_width",
    "main",
    "noise_amount",
    "noise_from_arguments",
    "noise_text",
    "package_version",
    "parse_number",
    "run",
    "signal_to_noise",
    "tree_sensitivities",
]


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``dp-account``: each subcommand's module adds its own, in the order of the help."""
    parser = Parser(
        prog="dp-account",
        description="Certified privacy accounting for discrete (and continuous) noise.",
    )
    parser.add_version()
    sub = parser.add_subparsers(dest="command", required=True)
    demo.add_parser(sub)
    epsilon_delta_rdp.add_parsers(sub)
    calibrate.add_parser(sub)
    dpsgd.add_parser(sub)
    protocol.add_parser(sub)
    shuffle.add_parsers(sub)
    ledger.add_parser(sub)
    tree.add_parser(sub)
    curve.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dp-account`` on ``argv`` (default: the process's arguments); the exit status."""
    return run(build_parser(), argv)
