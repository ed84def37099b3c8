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
import dataclasses
import math

from mpmath import mp

from accounting import shuffle
from accounting import validate as v
from accounting.bounds.gaussian import gaussian_sigma_analytic
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
from accounting.cli.noise_options import DEFAULT_MAX_COST, add_max_cost, refuse_cost
from accounting.divergence import MAX_POINTS
from accounting.errors import ParameterError, UnsupportedError
from accounting.noise import LatticeNoise
from accounting.search import smallest, smallest_integer

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


#: The most one-bit messages one call of a shuffle summation protocol may send in all (``n`` users
#: times ``D (levels + b)`` bits each): :data:`accounting.validate.MAX_COUNT`. Beyond it the ``b n``
#: binomial trials that ``--exact`` sums leave the int64 range, and no deployment sends 10^18
#: bits per call; a parameter set beyond it is refused, naming the option that brings it back.
MAX_SHUFFLE_MESSAGES = v.MAX_COUNT

#: The range of ``--probability``: ``p (1 - p) >= 10^-6`` roughly. The calibration needs
#: ``b n p (1 - p)`` near the Gaussian's variance, so ``b n`` grows as ``1/(p (1 - p))``: at
#: ``p = 10^-16`` it leaves the int64 range and each exact sum takes 10 s at 10^20 trials.
MIN_PROBABILITY = 1e-6
_probability = checked(
    v.interval,
    low=MIN_PROBABILITY,
    high=1 - MIN_PROBABILITY,
    low_open=False,
    why="the binomial trials of the calibration grow as 1/(p (1 - p))",
)

#: Seconds per lattice point of an exact ε(δ) sum (the pair's PMF enclosures, losses and the
#: verified prefix) at the default 50 digits: measured 1.4-1.7e-4 for binomial windows of 10^4 to
#: 10^5 points; it grows with the precision (``--dps``).
SECONDS_PER_POINT = 1.6e-4
#: The evaluations of the least-``b`` search counted in the estimate: 2-6 measured (2 at p = 1/2,
#: where the analytic Gaussian's guess is within a trial or two).
CALIBRATION_EVALUATIONS = 4


def _messages(par: ShuffleSumParameters) -> int:
    """The one-bit messages of one call, all users together."""
    return par.users * par.bits


def _fits(args: argparse.Namespace, **change: object) -> bool:
    """Whether the protocol's cited parameters at ``args`` (with ``change``) are within the theorem's
    range and send at most :data:`MAX_SHUFFLE_MESSAGES` bits per call."""
    given = {name: getattr(args, name) for name in ("epsilon", "delta", "users", "dimension", "bound")}
    given |= change
    try:
        par = shuffle_sum_parameters(args.protocol, **given)
    except ParameterError:
        return False
    return _messages(par) <= MAX_SHUFFLE_MESSAGES


def _refuse_size(args: argparse.Namespace, par: ShuffleSumParameters) -> None:
    """Refuse parameters that send more than :data:`MAX_SHUFFLE_MESSAGES` bits per call, naming the
    first option (``--users``, ``--dimension``, ``--epsilon``, ``--bound``) that, changed alone,
    brings them within it, and the range that does (found by the project's searches on the same
    :func:`~accounting.calibration.shuffle_sum_parameters`)."""
    total = _messages(par)
    if total <= MAX_SHUFFLE_MESSAGES:
        return
    why = (
        f"with the other options as given, at most {MAX_SHUFFLE_MESSAGES:.0e} one-bit messages per call "
        f"(users x bits per user); these options need {total:.3g}"
    )
    for name in ("users", "dimension"):
        value = getattr(args, name)
        if value > 1 and _fits(args, **{name: 1}):

            def exceeds(k: int, option: str = name) -> bool:
                return not _fits(args, **{option: k})

            most = smallest_integer(exceeds, 1, value) - 1
            raise ParameterError(f"--{name}", value, f"an integer in [1, {most}] ({why})")
    top = 30.0 if args.protocol == "dpdpe-scalar" else 15.0
    highest = math.nextafter(top, 0.0)
    if _fits(args, epsilon=highest):
        least = smallest(lambda e: _fits(args, epsilon=e), args.epsilon, highest, rtol=1e-3, log=True)
        raise ParameterError("--epsilon", args.epsilon, f"at least {least:.4g} ({why})")
    low_bound = 1 / MAX_SHUFFLE_BOUND
    if args.bound > low_bound and _fits(args, bound=low_bound):
        most_b = -smallest(lambda x: not _fits(args, bound=-x), -args.bound, -low_bound, rtol=1e-3)
        raise ParameterError("--bound", args.bound, f"at most {most_b:.4g} ({why})")
    raise ParameterError(
        "--epsilon", args.epsilon, f"a larger value, or fewer --users or --dimension ({why})"
    )


def _window_points(noise: LatticeNoise, levels: int, delta: float, dps: int) -> int:
    """The lattice points of the exact ε(δ) sum of ``noise`` at sensitivity ``levels``: the window
    :func:`accounting.divergence.epsilon_for_delta` takes (its tail mass ``δ 10^-(dps+6)``)."""
    with mp.workdps(dps):
        a, b = noise.window(mp.mpf(delta) * mp.mpf(10) ** -(dps + 6), dps)
    return b - a + 2 * levels + 1


def exact_cost(par: ShuffleSumParameters, p: float, dps: int) -> float:
    """The estimated seconds (reference machine) of ``shuffle-protocol --exact`` for one coordinate:
    the exact sum of the cited parameters (nothing when its window exceeds
    :data:`~accounting.divergence.MAX_POINTS`, which the sum refuses at once) and
    :data:`CALIBRATION_EVALUATIONS` sums at the search's first guess (the analytic Gaussian's
    variance at sensitivity ``levels``, as :func:`~accounting.shuffle.shuffle_sum_calibration`
    starts). The windows are the ones the sums take (:func:`_window_points`). Vectors are composed
    by the PLD route, whose grids cost seconds: 0 here."""
    if par.dimension > 1:
        return 0.0
    rate = SECONDS_PER_POINT * max(1.0, dps / DEFAULT_DPS)
    cited = _window_points(shuffle.shuffle_sum_noise(par), par.levels, par.delta, dps)
    total = rate * cited if cited <= MAX_POINTS else 0.0
    sigma = gaussian_sigma_analytic(par.epsilon, par.delta, par.levels)
    b = max(1, math.ceil(sigma**2 / (par.users * p * (1 - p))))
    guess = dataclasses.replace(par, b=b, p=p)
    points = _window_points(shuffle.shuffle_sum_noise(guess), par.levels, par.delta, dps)
    return total + rate * CALIBRATION_EVALUATIONS * min(points, MAX_POINTS)


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
    _refuse_size(args, par)
    if args.exact:
        p = 0.5 if args.probability is None else args.probability
        basis = "exact sums over the binomial's window; it grows as sqrt(--users) and with ln(1/--delta)"
        refuse_cost(args, exact_cost(par, p, args.dps), "--exact", basis)
    elif args.max_cost != DEFAULT_MAX_COST:
        raise ParameterError("--max-cost", args.max_cost, "given with --exact only")
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
        help=f"target ε of one call (at least {MIN_SHUFFLE_EPSILON:g}, and large enough that the call sends "
        f"at most {MAX_SHUFFLE_MESSAGES:.0e} one-bit messages in all)",
    )
    sp.add_argument("--delta", type=unit_float, required=True, help="target δ of one call")
    sp.add_argument(
        "--users",
        type=positive_int,
        required=True,
        help=f"n, users (data points) per call (n x bits per user at most {MAX_SHUFFLE_MESSAGES:.0e})",
    )
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
        type=_probability,
        help=f"with --exact: the binomial p of the exact calibration, in [{MIN_PROBABILITY:g}, "
        f"{1 - MIN_PROBABILITY:g}] (default 1/2)",
    )
    add_max_cost(sp, "--exact (given with it only)")
    sp.add_argument(
        "--dps",
        type=dps_int,
        default=DEFAULT_DPS,
        help=f"with --exact: working precision in digits (default {DEFAULT_DPS})",
    )
    add_json(sp)
    sp.set_defaults(func=_cmd_shuffle_protocol)
