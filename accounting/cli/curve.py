"""``dp-account curve``: tabulate and draw what users otherwise script.

The certified ε at a δ against the noise parameter (``--sigma-range LO HI``, ``--scale-range``,
``--variance-range``, ...) or the compositions (``--compositions-range``), or the certified δ
against ε (``--epsilon-range``), with the noise options of ``epsilon``; ``--out PREFIX`` writes
``PREFIX.csv`` and the figure (:mod:`accounting.curves`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from accounting import validate as v
from accounting.certified import Enclosure
from accounting.cli.framework import (
    Subcommands,
    certified_text,
    checked,
    emit,
    inputs,
    nonnegative_float,
    positive_float,
    positive_int,
    progress,
    unit_float,
)
from accounting.cli.noise_options import (
    NOISE_OPTIONS,
    NOISE_PARAMETERS,
    accountant_from_arguments,
    accounting_cost,
    add_mechanism_arguments,
    exact_compositions,
    mechanism_from_arguments,
    refuse_cost,
    relation,
)
from accounting.curves import curve_grid, draw_curve, write_csv
from accounting.errors import AccountingError, ParameterError, ParameterTypeError
from accounting.mechanisms import AdditiveNoise
from accounting.noise import Gaussian
from accounting.progress import reporting

#: The most points of one curve: each is a whole certified accounting, and a plot shows no more.
MAX_CURVE_POINTS = 200
#: What a curve's figure may be written as (beside the CSV, always written with ``--out``).
CURVE_FORMATS = ("png", "pdf", "svg")
#: The range options of ``curve`` (the x axis): the noise parameter's, the compositions', or ε's.
_NOISE_RANGES = {f"{p}_range": f"--{p}-range" for p in dict.fromkeys(NOISE_PARAMETERS.values())}


@dataclass(frozen=True)
class CurveSpec:
    """What ``dp-account curve`` draws: ``asked`` (``"epsilon"`` or ``"delta"``) against ``x``.

    ``x`` is the noise parameter (``"sigma"``, ``"scale"``, ...), ``"compositions"`` or
    ``"epsilon"``; ``option`` is the range option that gave it, ``at`` the δ of an ε curve (the ε
    of a δ curve is ``x`` itself).
    """

    x: str
    option: str
    asked: str
    at: float | None
    points: tuple[float | int, ...]


def curve_spec(args: argparse.Namespace) -> CurveSpec:
    """The curve the options ask for: exactly one range option, the options it conflicts with
    absent, ``LO < HI``. Errors name the option."""
    given = {
        option: getattr(args, dest)
        for dest, option in (*_NOISE_RANGES.items(), ("compositions_range", "--compositions-range"),
                             ("epsilon_range", "--epsilon-range"))
        if getattr(args, dest, None) is not None
    }  # fmt: skip
    if not given:
        raise ParameterError(
            "--" + NOISE_PARAMETERS[args.noise] + "-range",
            None,
            "one range, the x axis: --" + NOISE_PARAMETERS[args.noise] + "-range LO HI (the noise of "
            "--noise " + args.noise + "), --compositions-range LO HI or --epsilon-range LO HI",
        )
    (option, (lo, hi)), *more = given.items()
    if more:
        raise ParameterError(more[0][0], list(more[0][1]), f"not given with {option}: a curve has one x axis")
    if not lo < hi:
        raise ParameterError(option, [lo, hi], "LO < HI")
    if args.spacing == "log" and not lo > 0:
        raise ParameterError(option, [lo, hi], "LO > 0 with --spacing log (or --spacing linear)")
    x = option[2:].removesuffix("-range")
    if x in NOISE_PARAMETERS.values():
        wanted = NOISE_PARAMETERS[args.noise]
        if x != wanted:
            raise ParameterError(
                option, [lo, hi], f"not given with --noise {args.noise}, whose parameter is --{wanted}"
            )
        if getattr(args, x) is not None:
            raise ParameterError(f"--{x}", getattr(args, x), f"not given with {option} (the curve varies it)")
    if x == "compositions" and args.compositions is not None:
        raise ParameterError(
            "--compositions", args.compositions, f"not given with {option} (the curve varies it)"
        )
    if x == "epsilon":
        if args.delta is not None:
            raise ParameterError(
                "--delta", args.delta, f"not given with {option} (the curve gives δ at each ε)"
            )
        asked, at = "delta", None
    else:
        if args.delta is None:
            raise ParameterError("--delta", None, f"a value: the curve of {option} gives ε at a δ")
        asked, at = "epsilon", args.delta
    integer = x in ("compositions", "trials")
    points = curve_grid(lo, hi, args.points, args.spacing, integer)
    return CurveSpec(x, option, asked, at, points)


def _at_point(args: argparse.Namespace, spec: CurveSpec, x: float | int) -> argparse.Namespace:
    """The options of one point: ``args`` with the curve's x set to ``x``."""
    point = argparse.Namespace(**vars(args))
    if point.compositions is None:
        point.compositions = 1
    if spec.x != "epsilon":
        setattr(point, spec.x, x)
    return point


def _renamed(err: ParameterError, old: str, new: str, value: object) -> ParameterError:
    """A check of one point's option (``--sigma``) reported as the range option (``--sigma-range``)."""
    if err.name != old:
        return err
    return ParameterError(
        new, value, f"a range whose every point is valid ({old}={err.value!r}: {err.valid})"
    )


def _check_curve_ends(args: argparse.Namespace, spec: CurveSpec) -> None:
    """The size checks of ``epsilon`` at both ends of the range (each is monotone in the x, so the
    ends decide for every point), before any accounting; they name the range option."""
    old = f"--{spec.x}"
    for x in (spec.points[0], spec.points[-1]):
        point = _at_point(args, spec, x)
        try:
            mech = mechanism_from_arguments(point)
            plain = isinstance(mech, AdditiveNoise) and isinstance(mech.noise, Gaussian)
            exact_compositions(point, plain and getattr(point, "sampling_rate", None) is None)
        except ParameterError as err:
            raise _renamed(err, old, spec.option, [spec.points[0], spec.points[-1]]) from None


def curve_cost(args: argparse.Namespace, spec: CurveSpec) -> float:
    """The estimated seconds (reference machine) of the whole curve: the sum over its points of
    :func:`~accounting.cli.noise_options.accounting_cost`, each from the ledger that point will
    account (its PLD grids and RDP windows), before any accounting."""
    total = 0.0
    for x in spec.points:
        point = _at_point(args, spec, x)
        mech = mechanism_from_arguments(point)
        total += accounting_cost(point, mech, accountant_from_arguments(point, mech))
    return total


def _curve_point(args: argparse.Namespace, spec: CurveSpec, x: float | int) -> Enclosure:
    """The certified answer at one point (its upper end is what the curve shows)."""
    point = _at_point(args, spec, x)
    try:
        acc = accountant_from_arguments(point, mechanism_from_arguments(point))
        with reporting(None):  # the bar counts points, not each point's squarings
            answer = acc.epsilon(spec.at, args.route) if spec.at is not None else acc.delta(x, args.route)
        certified_text(spec.asked, answer)  # refuses an upper end that could not be bounded
    except (AccountingError, ParameterTypeError) as err:
        if isinstance(err, ParameterError) and err.name.startswith("--") and err.name != f"--{spec.x}":
            raise
        raise ParameterError(
            spec.option, x, f"a range whose every point's {spec.asked} can be certified (at {x!r}: {err})"
        ) from None
    return answer


def _curve_columns(spec: CurveSpec) -> list[str]:
    at = ["delta"] if spec.asked == "epsilon" else []
    return [spec.x, *at, spec.asked, f"{spec.asked}_lower", "route"]


def _curve_rows(spec: CurveSpec, answers: Sequence[Enclosure]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for x, answer in zip(spec.points, answers, strict=True):
        row: dict[str, object] = {spec.x: x}
        if spec.at is not None:
            row["delta"] = spec.at
        row |= {spec.asked: answer.upper, f"{spec.asked}_lower": answer.lower, "route": answer.route}
        rows.append(row)
    return rows


def _curve_title(args: argparse.Namespace, spec: CurveSpec) -> str:
    what = f"certified {spec.asked}" + (f" at delta = {spec.at:g}" if spec.at is not None else "")
    noise = args.noise
    if spec.x != NOISE_PARAMETERS[args.noise]:
        parameter = NOISE_PARAMETERS[args.noise]
        noise += f" {parameter} {getattr(args, parameter):g}"
    parts = [noise]
    if args.users > 1:
        parts.append(f"{args.users} users")
    if args.sensitivity != 1:
        parts.append(f"sensitivity {args.sensitivity:g}")
    if spec.x != "compositions" and (args.compositions or 1) > 1:
        parts.append(f"{args.compositions} compositions")
    return f"{what} against {spec.x} ({', '.join(parts)})"


def _check_out(prefix: str) -> None:
    """``--out PREFIX`` names files in a writable folder (checked before any accounting)."""
    folder = os.path.dirname(prefix) or "."
    if not prefix or prefix.endswith(os.sep) or os.path.basename(prefix) in (".", ".."):
        raise ParameterError("--out", prefix, "a path prefix naming files (PREFIX.csv, PREFIX.png)")
    if not os.path.isdir(folder):
        raise ParameterError("--out", prefix, f"a prefix in an existing folder ({folder!r} is not one)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ParameterError("--out", prefix, f"a prefix in a writable folder ({folder!r} is not)")


def _cmd_curve(args: argparse.Namespace) -> int:
    spec = curve_spec(args)
    if args.out is not None:
        _check_out(args.out)
    _check_curve_ends(args, spec)
    refuse_cost(args, curve_cost(args, spec), f"this curve of {len(spec.points)} points")
    answers: list[Enclosure] = []
    with progress(args, "curve points") as update:
        for x in spec.points:
            answers.append(_curve_point(args, spec, x))
            if update is not None:
                update(len(answers), len(spec.points))
    columns = _curve_columns(spec)
    rows = _curve_rows(spec, answers)
    title = _curve_title(args, spec)
    files: list[str] = []
    if args.out is not None:
        files = [f"{args.out}.csv", *(f"{args.out}.{fmt}" for fmt in dict.fromkeys(args.format))]
        try:
            write_csv(files[0], columns, rows)
            draw_curve(files[1:], rows, spec.x, spec.asked, title, log_x=args.spacing == "log")
        except OSError as err:
            raise ParameterError(
                "--out", args.out, f"a writable path prefix ({err.strerror or err})"
            ) from None
    record: dict[str, object] = {
        "command": "curve",
        "inputs": inputs(args, (*NOISE_OPTIONS, "delta", spec.option[2:].replace("-", "_"), "route")),
        "neighbouring": relation(args).value,
        "x": spec.x,
        "y": spec.asked,
        "columns": columns,
        "rows": rows,
        "files": files,
        "dps": args.dps,
    }
    width = max(len(spec.x), *(len(repr(row[spec.x])) for row in rows))
    lines = [f"{title} (upper ends, rounded up)", f"{spec.x:>{width}}  {spec.asked:>22}  route"]
    for row in rows:
        lines.append(f"{row[spec.x]!r:>{width}}  {row[spec.asked]!r:>22}  {row['route']}")
    if files:
        lines.append("wrote " + ", ".join(files))
    return emit(args, record, "\n".join(lines))


_curve_points = checked(
    v.integer,
    integer=True,
    minimum=2,
    maximum=MAX_CURVE_POINTS,
    why="each point is a whole certified accounting, and a figure shows no more",
)
#: The types of the noise ranges other than positive reals.
_RANGE_TYPES: dict[str, Callable[[str], Any]] = {"beta": unit_float, "trials": positive_int}


def add_parser(sub: Subcommands) -> None:
    """The parser of ``curve``."""
    curve = sub.add_parser(
        "curve",
        help="certified ε against the noise or the compositions, or δ against ε: a table, CSV and figure",
    )
    add_mechanism_arguments(curve)
    curve.add_argument("--delta", type=unit_float, help="δ in (0, 1) of an ε curve")
    for parameter, option in _NOISE_RANGES.items():
        name = parameter.removesuffix("_range")
        kinds = ", ".join(k for k, p in NOISE_PARAMETERS.items() if p == name)
        curve.add_argument(
            option,
            nargs=2,
            type=_RANGE_TYPES.get(name, positive_float),
            metavar=("LO", "HI"),
            help=f"x axis: ε at --delta against --{name} ({kinds}) from LO to HI",
        )
    curve.add_argument(
        "--compositions-range",
        nargs=2,
        type=positive_int,
        metavar=("LO", "HI"),
        help="x axis: ε at --delta against the number of compositions, integers from LO to HI",
    )
    curve.add_argument(
        "--epsilon-range",
        nargs=2,
        type=nonnegative_float,
        metavar=("LO", "HI"),
        help="x axis: δ against ε from LO to HI",
    )
    curve.add_argument(
        "--points",
        type=_curve_points,
        default=20,
        help=f"points of the curve, 2..{MAX_CURVE_POINTS} (default 20; integers: at most HI - LO + 1)",
    )
    curve.add_argument(
        "--spacing", choices=("log", "linear"), default="log", help="points evenly in ln x (default) or in x"
    )
    curve.add_argument("--out", metavar="PREFIX", help="write PREFIX.csv and the figure PREFIX.png")
    curve.add_argument(
        "--format",
        nargs="+",
        choices=CURVE_FORMATS,
        default=["png"],
        help="figure formats written with --out (default png; e.g. --format png pdf svg)",
    )
    curve.set_defaults(func=_cmd_curve, compositions=None)
