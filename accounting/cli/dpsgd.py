"""``dp-account dpsgd``: DP-SGD's questions (:mod:`accounting.dpsgd`), add-remove by default.

* ``--noise-multiplier S --sample-rate Q --steps N --delta D``: the certified ε after the run
  (``--steps N1,N2,...``: after each, a curve; ``--csv FILE`` writes it);
* ``--epsilon E`` instead of ``--noise-multiplier``: the least noise multiplier meeting ``(E, D)``;
* ``--schedule FILE``: a run of phases, a JSON list of ``{"sample_rate", "noise_multiplier",
  "steps"}`` objects;
* ``--opacus-history FILE``: an Opacus accountant's ``history`` (a JSON list of
  ``[noise_multiplier, sample_rate, steps]``), certified; ``--opacus-epsilon X`` places Opacus's own
  answer against the certified enclosure.
"""

from __future__ import annotations

import argparse
import csv
import io
from typing import Any

from accounting import dpsgd
from accounting import validate as v
from accounting.certified import DEFAULT_DPS, Enclosure
from accounting.cli.framework import (
    Subcommands,
    add_json,
    add_no_progress,
    certified_text,
    checked,
    dps_int,
    emit,
    nonnegative_float,
    positive_float,
    positive_int,
    progress,
    rate_float,
    unit_float,
)
from accounting.cli.noise_options import MIN_PLD_NOISE_MULTIPLIER, ROUTE_CHOICES
from accounting.errors import ParameterError
from accounting.neighbouring import Neighbouring
from accounting.storage import read_json, write_atomic

#: The largest target ε of ``dpsgd --epsilon``: e^100 bounds no likelihood ratio anyone relies on,
#: and the search for the least noise multiplier evaluates levels below the answer, where each
#: Poisson-sampled PLD composition takes longer as σ falls (measured at q = 0.01, 1000 steps: ε = 100
#: took 33 s with progress shown; ε = 1e30 searched down to σ = 1e-13 and did not finish).
MAX_DPSGD_EPSILON = 100.0
_target_epsilon = checked(
    v.interval,
    low=0.0,
    high=MAX_DPSGD_EPSILON,
    why="the search for the noise multiplier of a larger target does not finish",
)


#: The largest schedule or history file read (a run of thousands of phases is far below it).
MAX_FILE_BYTES = 2**20


def _read_json(option: str, path: str) -> Any:
    """A small JSON file given to ``option`` (:func:`accounting.storage.read_json`)."""
    return read_json(path, option, MAX_FILE_BYTES)


def _schedule(path: str) -> list[tuple[object, object, object]]:
    data = _read_json("--schedule", path)
    if not isinstance(data, list):
        raise ParameterError("--schedule", path, "a JSON list of phases")
    phases = []
    for i, item in enumerate(data):
        keys = {"sample_rate", "noise_multiplier", "steps"}
        if not isinstance(item, dict) or set(item) != keys:
            valid = "an object with exactly " + ", ".join(sorted(keys))
            raise ParameterError(f"schedule[{i}]", item, valid)
        phases.append((item["sample_rate"], item["noise_multiplier"], item["steps"]))
    return phases


def _steps(text: str) -> list[int]:
    """``--steps N`` or ``N1,N2,...`` (a curve)."""
    counts = []
    for part in text.split(","):
        try:
            count = int(part.strip())
        except ValueError:
            raise ParameterError(
                "--steps", text, "a positive integer or a comma-separated list of them"
            ) from None
        counts.append(v.count("--steps", count))
    return counts


def _mode(args: argparse.Namespace, steps: list[int]) -> str:
    """Which question the options ask, each option of another question refused."""
    given = {
        "run": args.noise_multiplier is not None,
        "calibrate": args.epsilon is not None,
        "schedule": args.schedule is not None,
        "opacus": args.opacus_history is not None,
    }
    if sum(given.values()) != 1:
        raise ParameterError(
            "--noise-multiplier/--epsilon/--schedule/--opacus-history",
            None,
            "exactly one of --noise-multiplier (ε of a run), --epsilon (the least noise multiplier), "
            "--schedule FILE or --opacus-history FILE",
        )
    mode = next(k for k, given_ in given.items() if given_)
    needs_run = mode in ("run", "calibrate")
    for option, value in (("--sample-rate", args.sample_rate), ("--steps", args.steps)):
        if needs_run and value is None:
            raise ParameterError(option, None, f"a value: {option} goes with --noise-multiplier or --epsilon")
        if not needs_run and value is not None:
            raise ParameterError(
                option, value, "not given with --schedule or --opacus-history (the file has it)"
            )
    if args.opacus_epsilon is not None and mode != "opacus":
        raise ParameterError("--opacus-epsilon", args.opacus_epsilon, "given with --opacus-history")
    if mode == "opacus" and args.sampling != "poisson":
        raise ParameterError(
            "--sampling",
            args.sampling,
            "poisson with --opacus-history (Opacus samples and accounts Poisson batches; a run on "
            "fixed-size batches is certified with --schedule FILE --sampling fixed)",
        )
    if args.csv is not None and not (mode == "run" and len(steps) > 1):
        raise ParameterError("--csv", args.csv, "given with --noise-multiplier and several --steps")
    if mode == "calibrate" and len(steps) != 1:
        raise ParameterError("--steps", args.steps, "one step count with --epsilon")
    sampled = args.sample_rate is not None and args.sample_rate < 1
    pld = mode == "run" and sampled and args.route in ("auto", "pld")
    if pld and args.noise_multiplier < MIN_PLD_NOISE_MULTIPLIER:
        raise ParameterError(
            "--noise-multiplier",
            args.noise_multiplier,
            f"at least {MIN_PLD_NOISE_MULTIPLIER:g} with --route {args.route} and --sample-rate below 1 "
            "(the sampled Gaussian's privacy loss grows as 1/sigma^2, and the PLD's exact masses with "
            "it: minutes below); --route rdp answers it at once",
        )
    return mode


def _cmd_dpsgd(args: argparse.Namespace) -> int:
    steps = [] if args.steps is None else _steps(args.steps)
    mode = _mode(args, steps)
    options: dict[str, Any] = {
        "neighbouring": args.neighbouring,
        "sampling": args.sampling,
        "route": args.route,
        "dps": args.dps,
    }
    record: dict[str, object] = {
        "command": "dpsgd",
        "neighbouring": args.neighbouring,
        "sampling": args.sampling,
        "delta": args.delta,
    }
    why = (
        "the default, as Opacus and dp_accounting" if args.neighbouring == "add-remove" else "not the default"
    )
    relation = f"{args.neighbouring} neighbours ({why})"
    with progress(args, "accounting"):
        if mode == "run":
            curve = dpsgd.epsilon_curve(args.noise_multiplier, args.sample_rate, steps, args.delta, **options)
            lines = [f"after {s} steps: epsilon = {certified_text('epsilon', e)}" for s, e in curve]
            record |= {"noise_multiplier": args.noise_multiplier, "sample_rate": args.sample_rate}
            record["curve"] = [
                {"steps": s, "epsilon": e.upper, "epsilon_lower": e.lower, "route": e.route} for s, e in curve
            ]
            if args.csv is not None:
                _write_csv(args.csv, curve)
            head = (
                f"noise multiplier {args.noise_multiplier:g}, sample rate {args.sample_rate:g}, "
                f"delta {args.delta:g}, {relation}"
            )
            text = "\n".join([head, *lines])
        elif mode == "calibrate":
            (count,) = steps
            budget = args.max_evaluations
            cal = dpsgd.noise_multiplier(
                args.epsilon, args.delta, args.sample_rate, count, **options, max_evaluations=budget
            )
            record |= {
                "epsilon": args.epsilon,
                "sample_rate": args.sample_rate,
                "steps": count,
                "noise_multiplier": cal.value,
                "epsilon_certified": cal.epsilon.upper,
                "route": cal.route,
                "converged": cal.converged,
                "evaluations": cal.evaluations,
            }
            text = (
                f"noise multiplier = {cal.value!r} (the least meeting epsilon {args.epsilon:g} at delta "
                f"{args.delta:g} after {count} steps at sample rate {args.sample_rate:g}; rounded toward "
                f"more noise)\ncertified epsilon = {certified_text('epsilon', cal.epsilon)}; {relation}"
            )
        else:
            answer, text_head = _file_answer(args, mode, options)
            record |= answer
            text = text_head + f"\n{relation}"
    return emit(args, record, text)


def _file_answer(
    args: argparse.Namespace, mode: str, options: dict[str, Any]
) -> tuple[dict[str, object], str]:
    """The answer of ``--schedule`` or ``--opacus-history``."""
    if mode == "schedule":
        phases = _schedule(args.schedule)
        e = dpsgd.schedule_epsilon(phases, args.delta, **options)
        return (
            {"phases": len(phases), "epsilon": e.upper, "epsilon_lower": e.lower, "route": e.route},
            f"{len(phases)} phases: epsilon = {certified_text('epsilon', e)}",
        )
    history = _read_json("--opacus-history", args.opacus_history)
    options.pop("sampling")
    cert = dpsgd.certify_opacus(history, args.delta, opacus_epsilon=args.opacus_epsilon, **options)
    out: dict[str, object] = {
        "entries": len(history),
        "epsilon": cert.certified.upper,
        "epsilon_lower": cert.certified.lower,
        "route": cert.certified.route,
    }
    if cert.theirs is not None:
        out |= {"opacus_epsilon": cert.theirs, "verdict": cert.verdict}
    return out, str(cert)


def _write_csv(path: str, curve: list[tuple[int, Enclosure]]) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["steps", "epsilon", "epsilon_lower", "route"])
    for s, e in curve:
        writer.writerow([s, repr(e.upper), repr(e.lower), e.route])
    write_atomic(path, out.getvalue())


def add_parser(sub: Subcommands) -> None:
    """The parser of ``dpsgd``."""
    cmd = sub.add_parser(
        "dpsgd", help="DP-SGD: ε of a run, the least noise multiplier, schedules, Opacus histories"
    )
    cmd.add_argument(
        "--noise-multiplier", type=positive_float, help="σ: noise standard deviation / clipping norm"
    )
    cmd.add_argument(
        "--epsilon",
        type=_target_epsilon,
        help=f"target ε in (0, {MAX_DPSGD_EPSILON:g}]: print the least noise multiplier meeting it",
    )
    cmd.add_argument(
        "--sample-rate", type=rate_float, help="q in (0, 1]: a record's probability of being in a batch"
    )
    cmd.add_argument("--steps", help="training steps N, or N1,N2,... for a curve")
    cmd.add_argument("--delta", type=unit_float, required=True, help="δ in (0, 1)")
    cmd.add_argument("--schedule", metavar="FILE", help="JSON list of {sample_rate, noise_multiplier, steps}")
    cmd.add_argument(
        "--opacus-history", metavar="FILE", help="an Opacus accountant's history: [[σ, q, steps], ...]"
    )
    cmd.add_argument("--opacus-epsilon", type=nonnegative_float, help="the ε Opacus printed for that history")
    cmd.add_argument("--csv", metavar="FILE", help="with several --steps: write the curve as CSV")
    cmd.add_argument(
        "--neighbouring",
        choices=[n.value for n in Neighbouring],
        default=Neighbouring.ADD_REMOVE.value,
        help="the relation (default add-remove, as Opacus and dp_accounting)",
    )
    cmd.add_argument(
        "--sampling", choices=("poisson", "fixed"), default="poisson", help="poisson (default) or fixed"
    )
    cmd.add_argument(
        "--route", choices=ROUTE_CHOICES, default="auto", metavar="ROUTE", help="route (default auto)"
    )
    cmd.add_argument(
        "--max-evaluations",
        type=positive_int,
        metavar="N",
        help="with --epsilon: a deterministic search budget",
    )
    cmd.add_argument(
        "--dps", type=dps_int, default=DEFAULT_DPS, help=f"working precision (default {DEFAULT_DPS})"
    )
    add_json(cmd)
    add_no_progress(cmd)
    cmd.set_defaults(func=_cmd_dpsgd)
