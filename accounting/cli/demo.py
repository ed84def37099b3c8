"""``dp-account demo``: for a few target ε at one δ, the exact ε(δ) of discrete noise sized by the
classic recipes next to what the best published closed form claims for the same noise, so one sees
how much exact accounting saves (the rows: :func:`accounting.demo.demo_rows`)."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from accounting.certified import DEFAULT_DPS
from accounting.cli.framework import (
    Subcommands,
    add_json,
    dps_int,
    json_text,
    positive_float,
    positive_int,
    unit_float,
)
from accounting.demo import DemoRow, demo_rows


def _print_table(rows: list[DemoRow], delta: float) -> None:
    print(f"dpcert: exact ε at δ = {delta:g} versus the best published bound, for the same noise")
    print("(sensitivity 1; noise sized by the classic recipes for each target ε; ε rounded up)\n")
    header = (
        f"{'target ε':>8}  {'noise':<36} {'published route':<28} {'bound ε':>10} {'exact ε':>10} {'saved':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r.target_epsilon:>8g}  {r.noise:<36} {r.bound_name:<28} "
            f"{r.bound_epsilon:>10.6g} {r.exact_epsilon:>10.6g} {100 * r.saving:>6.1f}%"
        )
    digits = min(r.exact_digits for r in rows)
    print(f"\nEvery exact ε is certified to at least {digits:.0f} significant digits.")


def _cmd_demo(args: argparse.Namespace) -> int:
    rows = demo_rows(args.epsilons, args.delta, users=args.users, dps=args.dps)
    if args.json:
        table = [asdict(r) | {"saving": r.saving} for r in rows]
        print(json_text({"delta": args.delta, "rows": table}))
    else:
        _print_table(rows, args.delta)
    return 0


def add_parser(sub: Subcommands) -> None:
    """The parser of ``demo``."""
    demo = sub.add_parser("demo", help="exact ε versus the published bounds, for a few noise sizes")
    demo.add_argument("--delta", type=unit_float, default=1e-6, help="δ in (0, 1) (default 1e-6)")
    demo.add_argument(
        "--epsilons", type=positive_float, nargs="+", default=[0.1, 0.5, 1.0, 5.0], help="target ε values"
    )
    demo.add_argument(
        "--users", type=positive_int, default=10, help="shares in the distributed row (default 10)"
    )
    demo.add_argument(
        "--dps",
        type=dps_int,
        default=DEFAULT_DPS,
        help=f"working precision in digits (default {DEFAULT_DPS})",
    )
    add_json(demo, "print JSON instead of a table")
    demo.set_defaults(func=_cmd_demo)
