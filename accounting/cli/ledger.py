"""``dp-account ledger``: re-account a saved ledger (``Accountant.to_json`` output, e.g. a
``dp-regret`` run's): its certified ε(δ) — the answer a run cached, or computed once and cached
(:mod:`accounting.answers`; ``--no-cache`` computes it afresh) — or its δ(ε)."""

from __future__ import annotations

import argparse
import contextlib

from accounting import answers
from accounting.accountant import Accountant
from accounting.cli.framework import (
    Subcommands,
    add_json,
    add_no_progress,
    certified_text,
    emit,
    nonnegative_float,
    progress,
    unit_float,
)
from accounting.cli.noise_options import ROUTE_CHOICES
from accounting.errors import AccountingError, ParameterError, ParameterTypeError


def _cmd_ledger(args: argparse.Namespace) -> int:
    """Re-account a saved ledger (``Accountant.to_json`` output, e.g. a dp-regret run's)."""
    if (args.delta is None) == (args.epsilon is None):
        raise ParameterError("--delta/--epsilon", None, "exactly one of --delta or --epsilon")
    try:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as err:
        raise ParameterError("FILE", args.file, f"a readable ledger file ({err.strerror or err})") from None
    except UnicodeDecodeError:
        raise ParameterError("FILE", args.file, "a UTF-8 JSON ledger file") from None
    try:
        acc = Accountant.from_json(text)
    except (AccountingError, ParameterTypeError) as err:
        raise AccountingError(f"{args.file}: not a valid ledger: {err}") from None
    asked, given = ("epsilon", "delta") if args.delta is not None else ("delta", "epsilon")
    at = getattr(args, given)
    with progress(args, "accounting"):
        if asked == "epsilon":  # the answer a dp-regret run cached, or computed once and cached
            with answers.caching(False) if args.no_cache else contextlib.nullcontext():
                answer = answers.answer(answers.Question.of(acc, at, args.route))
        else:
            answer = acc.delta(at, args.route)
    record: dict[str, object] = {
        "command": "ledger",
        "file": args.file,
        "neighbouring": acc.neighbouring.value,
        "events": len(acc.ledger),
        given: at,
        asked: answer.upper,
        f"{asked}_lower": answer.lower,
        "route": answer.route,
        "candidates": answer.candidates,
    }
    text_out = (
        f"{asked} = {certified_text(asked, answer)} at {given} = {at:g} (route {answer.route}; rounded up) "
        f"for {len(acc.ledger)} event(s) under {acc.neighbouring.value}"
    )
    return emit(args, record, text_out)


def add_parser(sub: Subcommands) -> None:
    """The parser of ``ledger``."""
    led = sub.add_parser("ledger", help="re-account a saved ledger (JSON written by Accountant.to_json)")
    led.add_argument("file", metavar="FILE", help="the ledger file")
    led.add_argument("--delta", type=unit_float, help="δ in (0, 1): print ε(δ)")
    led.add_argument("--epsilon", type=nonnegative_float, help="ε >= 0: print δ(ε)")
    led.add_argument(
        "--route",
        choices=ROUTE_CHOICES,
        default="auto",
        metavar="ROUTE",
        help="accounting route (default auto)",
    )
    add_json(led)
    led.add_argument(
        "--no-cache",
        action="store_true",
        help="compute ε(δ) afresh, neither reading nor writing the on-disk cache of answers "
        f"(also: {answers.NO_CACHE_ENV}=1)",
    )
    add_no_progress(led)
    led.set_defaults(func=_cmd_ledger)
