"""``dp-account ledger``: re-account a saved ledger (``Accountant.to_json`` output, e.g. a
``dp-regret`` run's): its certified ε(δ) — the answer a run cached, or computed once and cached
(:mod:`accounting.answers`; ``--no-cache`` computes it afresh) — or its δ(ε).

The ledger is checked first (:func:`accounting.integrity.verify`): against the digest its run's
``summary.json`` records when it lies in a run's ``ledgers/`` folder, against its signature when a
key is given (``--key-file``, or the environment), and a ledger nothing verifies is answered with a
one-line note. ``--sign`` signs a ledger with the key."""

from __future__ import annotations

import argparse
import contextlib
import warnings

from accounting import answers, integrity
from accounting import validate as v
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
from accounting.storage import read_text, strict_json_loads, write_atomic


def _cmd_ledger(args: argparse.Namespace) -> int:
    """Re-account a saved ledger (``Accountant.to_json`` output, e.g. a dp-regret run's), or sign it."""
    if args.sign:
        if args.delta is not None or args.epsilon is not None:
            raise ParameterError("--sign", True, "no --delta or --epsilon with it (it only signs FILE)")
    elif (args.delta is None) == (args.epsilon is None):
        raise ParameterError("--delta/--epsilon", None, "exactly one of --delta or --epsilon")
    key = integrity.read_key(args.key_file)
    if args.sign and key is None:
        raise ParameterError(
            "--sign",
            True,
            f"a key to sign with: --key-file PATH, or ${integrity.KEY_FILE_ENV} or ${integrity.KEY_ENV}",
        )
    text = read_text(args.file, "FILE", what="ledger file")
    try:
        acc = Accountant.from_json(text)
        data = strict_json_loads(text)  # valid: from_json read it
        evidence = integrity.verify(data, args.file, None if args.sign else key)
    except (AccountingError, ParameterTypeError) as err:
        raise AccountingError(f"{args.file}: not a valid ledger: {err}") from None
    if args.sign:
        write_atomic(args.file, acc.to_json(key=key) + "\n")
        signed: dict[str, object] = {
            "command": "ledger",
            "file": args.file,
            "signed": True,
            "events": len(acc.ledger),
            "integrity": evidence.value,  # before signing
        }
        return emit(args, signed, f"signed {args.file} ({len(acc.ledger)} event(s), HMAC-SHA256)")
    note = evidence.note(args.file)
    if note is not None:
        warnings.warn(note, v.Note, stacklevel=1)
    elif key is None and integrity.SIGNATURE_FIELD in data:
        warnings.warn(
            f"{args.file} is signed, but no key was given to check it (--key-file)", v.Note, stacklevel=1
        )
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
        "integrity": evidence.value,
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
    led.add_argument(
        "--key-file",
        metavar="PATH",
        help="a file holding the secret key (at least 16 bytes) that signs ledgers: the ledger must "
        f"carry a signature under it (HMAC-SHA256); also ${integrity.KEY_FILE_ENV} (a path) or "
        f"${integrity.KEY_ENV} (the key). Never the key itself on the command line",
    )
    led.add_argument(
        "--sign",
        action="store_true",
        help="sign FILE with the key (rewritten in place, atomically) instead of answering a question",
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
