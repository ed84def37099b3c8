"""``dp-account shuffle`` and ``shuffle-protocol`` (:mod:`accounting.shuffle`).

``shuffle`` prints the privacy amplification by shuffling ``n`` reports of an ``ε0``-LDP randomizer,
by one theorem or by every generic bound (``--bound all``).

``shuffle-protocol`` prints the parameters of a shuffle summation protocol and the cited theorem's
guarantee; with ``--exact`` also the certified exact ε(δ) of those parameters and the least binomial
noise meeting the target by exact accounting, with the bits per user it saves
(:func:`accounting.shuffle.shuffle_sum_calibration`). ``--probability`` gives the binomial ``p`` of
that calibration (default 1/2).
"""

from __future__ import annotations

import argparse
import math

from accounting import shuffle
from accounting import validate as v
from accounting.calibration import SHUFFLE_SUM_PROTOCOLS, ShuffleSumParameters, shuffle_sum_parameters
from accounting.certified import DEFAULT_DPS
from accounting.cli.framework import (
    Subcommands,
    add_json,
    certified_text,
    checked,
    dps_int,
    emit,
    inputs,
    one_line,
    positive_float,
    positive_int,
    unit_float,
)
from accounting.errors import ParameterError, UnsupportedError

#: The smallest target ε of ``shuffle-protocol``, and the range of its bound B (``[1/MAX, MAX]``):
#: the binomial trials b grow as (B/ε)^2 (times constants up to 10^11 at the smallest δ and the
#: largest --users and --dimension), and the error variance with them; within these limits both
#: stay far inside the float range (b at most about 10^230) for every other option, beyond them
#: they leave it (ε = 1e-300 asks for b near 10^606).
MIN_SHUFFLE_EPSILON = 1e-50
MAX_SHUFFLE_BOUND = 1e50
_SHUFFLE_WHY = (
    "the binomial trials each user sends grow as (B/epsilon)^2 and the encoding scale as 1/B; beyond, "
    "they or the error variance leave the float range"
)

_shuffle_epsilon = checked(
    v.interval, low=MIN_SHUFFLE_EPSILON, high=math.inf, low_open=False, why=_SHUFFLE_WHY
)
_shuffle_bound = checked(
    v.interval, low=1 / MAX_SHUFFLE_BOUND, high=MAX_SHUFFLE_BOUND, low_open=False, why=_SHUFFLE_WHY
)


def _shuffle_record(result: shuffle.AmplificationBound) -> dict[str, object]:
    return {
        "bound": result.bound,
        "epsilon": result.epsilon,
        "epsilon_lower": result.lower,
        "delta": result.delta,
        "valid": result.valid,
        "theorem": result.theorem,
        "conditions": result.conditions,
    }


def _shuffle_line(result: shuffle.AmplificationBound) -> str:
    if not result.valid:
        return f"{result.bound}: does not apply ({result.conditions}): epsilon = {result.epsilon!r}"
    text = f"{result.bound}: epsilon = {result.epsilon!r} at delta = {result.delta:g} (rounded up)"
    if result.lower is not None:
        text += f"; the analysis's exact epsilon lies in [{result.lower!r}, {result.epsilon!r}]"
    return text


def _cmd_shuffle(args: argparse.Namespace) -> int:
    names = shuffle.BOUNDS if args.bound == "all" else (args.bound,)
    results = [shuffle.amplify(args.epsilon0, args.users, args.delta, name) for name in names]
    given = inputs(args, ("epsilon0", "users", "delta", "bound"))
    record: dict[str, object] = {"command": "shuffle", "inputs": given}
    if args.bound == "all":
        record["results"] = [_shuffle_record(r) for r in results]
    else:
        record |= _shuffle_record(results[0])
    lines = [_shuffle_line(r) for r in results]
    if args.bound != "all":
        lines.append(f"theorem: {results[0].theorem}")
    head = f"shuffling n = {args.users} reports of an epsilon0 = {args.epsilon0:g} local randomizer"
    return emit(args, record, "\n".join([head, *lines]))


def _cmd_shuffle_protocol(args: argparse.Namespace) -> int:
    par = shuffle_sum_parameters(
        args.protocol, args.epsilon, args.delta, args.users, args.dimension, args.bound
    )
    names = ("protocol", "epsilon", "delta", "users", "dimension", "bound")
    record: dict[str, object] = {
        "command": "shuffle-protocol",
        "inputs": inputs(args, names),
        "g": par.g,
        "levels": par.levels,
        "b": par.b,
        "p": par.p,
        "bits_per_user": par.bits,
        "variance_bound": par.variance(),
        "privacy": par.theorem,
    }
    text = (
        f"{par.protocol}: g = {par.g}, levels = {par.levels}, b = {par.b}, p = {par.p!r}\n"
        f"each user sends {par.bits} one-bit messages "
        f"({par.dimension} coordinate(s) x {par.levels + par.b})\n"
        f"error of each coordinate of the sum: unbiased, variance <= {par.variance():.6g}\n"
        f"privacy: {par.theorem}"
    )
    if args.exact:
        exact_record, exact_text = _shuffle_protocol_exact(args, par)
        record |= exact_record
        text += "\n" + exact_text
    elif args.probability is not None:
        raise ParameterError("--probability", args.probability, "given with --exact only")
    return emit(args, record, text)


def _shuffle_protocol_exact(
    args: argparse.Namespace, par: ShuffleSumParameters
) -> tuple[dict[str, object], str]:
    """``shuffle-protocol --exact``: the certified ε(δ) of the cited parameters (or why it cannot be
    certified here) and the least ``b`` by exact accounting
    (:func:`accounting.shuffle.shuffle_sum_calibration`)."""
    p = 0.5 if args.probability is None else args.probability
    what = "exact" if shuffle.shuffle_sum_exact(par) else "a certified upper bound (thinning ledger)"
    cited: dict[str, object]
    try:
        value = shuffle.shuffle_sum_epsilon(par, par.delta, args.dps)
    except UnsupportedError as err:
        cited = {"epsilon": None, "refused": str(err)}
        first = f"  these parameters: not accounted here ({one_line(str(err))})"
    else:
        shown = certified_text("epsilon", value)
        cited = {
            "epsilon": value.upper,
            "epsilon_lower": value.lower,
            "route": value.route,
            "exact": shuffle.shuffle_sum_exact(par),
        }
        first = (
            f"  these parameters: epsilon(delta = {par.delta:g}) = {shown} ({what}; rounded up; route "
            f"{value.route}), where the cited theorem gives {par.epsilon:g}"
        )
    cal = shuffle.shuffle_sum_calibration(
        par.protocol, par.epsilon, par.delta, par.users, par.dimension, par.bound, p, args.dps
    )
    best = cal.exact
    how = "exact" if cal.exact_accounting else "a certified upper bound (thinning ledger)"
    record: dict[str, object] = {
        "exact": cited,
        "calibrated": {
            "b": best.b,
            "p": best.p,
            "bits_per_user": best.bits,
            "variance_bound": best.variance(),
            "epsilon": cal.epsilon.upper,
            "epsilon_lower": cal.epsilon.lower,
            "route": cal.epsilon.route,
            "exact": cal.exact_accounting,
        },
        "saved_bits": cal.saved_bits,
        "saved_fraction": cal.saved_fraction,
    }
    text = "\n".join(
        [
            "exact accounting (replace-one; the count of ones is the sum plus Bin(b n, p) at sensitivity "
            f"levels = {par.levels}):",
            first,
            f"  least b meeting ({par.epsilon:g}, {par.delta:g}): b = {best.b} at p = {best.p!r}, "
            f"epsilon = {certified_text('epsilon', cal.epsilon)} ({how}; rounded up), error variance <= "
            f"{best.variance():.6g}",
            f"  bits per user: {best.bits} by exact accounting, {par.bits} by the cited constants "
            f"({cal.saved_bits} fewer: the cited constants need {par.bits / best.bits:.4g} times as many)",
        ]
    )
    return record, text


def add_parsers(sub: Subcommands) -> None:
    """The parsers of ``shuffle`` and ``shuffle-protocol``."""
    shuf = sub.add_parser("shuffle", help="privacy amplification by shuffling n eps0-LDP reports")
    shuf.add_argument("--epsilon0", type=positive_float, required=True, help="the local randomizer's ε0 > 0")
    shuf.add_argument("--users", type=positive_int, required=True, help="n, the number of shuffled reports")
    shuf.add_argument("--delta", type=unit_float, required=True, help="target δ in (0, 1)")
    shuf.add_argument(
        "--bound",
        choices=(*shuffle.BOUNDS, "all"),
        default="fmt-numerical",
        help="which theorem (default fmt-numerical, the tightest; all: every generic bound)",
    )
    add_json(shuf)
    shuf.set_defaults(func=_cmd_shuffle)
    sp = sub.add_parser(
        "shuffle-protocol", help="parameters of the shuffle summation protocols (bits + binomial)"
    )
    sp.add_argument("--protocol", choices=SHUFFLE_SUM_PROTOCOLS, required=True, help="which protocol")
    sp.add_argument(
        "--epsilon",
        type=_shuffle_epsilon,
        required=True,
        help=f"target ε of one call (at least {MIN_SHUFFLE_EPSILON:g})",
    )
    sp.add_argument("--delta", type=unit_float, required=True, help="target δ of one call")
    sp.add_argument("--users", type=positive_int, required=True, help="n, users (data points) per call")
    sp.add_argument("--dimension", type=positive_int, default=1, help="D coordinates (default 1)")
    sp.add_argument(
        "--bound",
        type=_shuffle_bound,
        default=1.0,
        help=f"B: |x| (or ||x||_2) <= B, in [{1 / MAX_SHUFFLE_BOUND:g}, {MAX_SHUFFLE_BOUND:g}] (default 1)",
    )
    sp.add_argument(
        "--exact",
        action="store_true",
        help="also the certified exact epsilon(delta) of these parameters (the count of ones is the sum "
        "plus Bin(b n, p) at sensitivity levels), and the least b meeting (epsilon, delta) by exact "
        "accounting, with the bits per user it saves",
    )
    sp.add_argument(
        "--probability",
        type=unit_float,
        help="with --exact: the binomial p of the exact calibration, in (0, 1) (default 1/2)",
    )
    sp.add_argument(
        "--dps",
        type=dps_int,
        default=DEFAULT_DPS,
        help=f"with --exact: working precision in digits (default {DEFAULT_DPS})",
    )
    add_json(sp)
    sp.set_defaults(func=_cmd_shuffle_protocol)
