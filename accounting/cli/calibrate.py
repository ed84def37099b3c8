"""``dp-account calibrate``: the least noise of a family meeting a target ``(ε, δ)``
(:func:`accounting.calibration.calibrate`), in the family's one unit for the sum and for each user
(:func:`noise_amount`), certified and rounded toward more noise. ``--max-evaluations`` (the same
answer on any machine) or the opt-in ``--time-limit`` stop the search early; the output then gives
the bracket of the least noise."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from fractions import Fraction

from mpmath import iv

from accounting.accountant import noise_to_dict
from accounting.calibration import FAMILIES, Calibration, calibrate
from accounting.certified import float_up, precision, upper
from accounting.cli.framework import (
    Subcommands,
    certified_text,
    emit,
    inputs,
    positive_float,
    positive_int,
    progress,
    unit_float,
)
from accounting.cli.noise_options import (
    add_accounting_arguments,
    decimal_up,
    describe,
    exact_compositions,
    lattice_sensitivity,
    noise_text,
    relation,
    sampling_of,
)
from accounting.mechanisms import Mechanism
from accounting.noise import Gaussian, Polya, Skellam, family_named


@dataclass(frozen=True)
class NoiseAmount:
    """The noise a calibration gives, in its family's one unit, for the sum and for each user.

    Attributes
    ----------
    unit : str
        The family's parameter: ``"sigma"`` (gaussian, discrete-gaussian), ``"scale"`` (laplace,
        discrete-laplace) or ``"variance"`` (skellam).
    total : float
        That parameter of the noise in the released sum.
    per_user : float
        That parameter of each user's share (``total`` when there is one user).
    users : int
        How many users add shares.
    calibrated : str
        Which of the two the search calibrated (``"total"`` or ``"per_user"``, the discrete
        Gaussian's shares, whose sum is no discrete Gaussian); the other is derived from it,
        rounded toward more noise, like every value here.
    combine : str
        How the users' shares make the total.
    """

    unit: str
    total: float
    per_user: float
    users: int
    calibrated: str
    combine: str


#: How shares combine, by family (:attr:`NoiseAmount.combine`): a short phrase for the text, then
#: the rest of the sentence.
_COMBINE = {
    "gaussian": ("sigma^2 adds", ": total^2 = users x per_user^2"),
    "laplace": ("one user adds it all", " (a sum of Laplace shares is no Laplace)"),
    "discrete-laplace": (
        "the same scale in every share, whose shapes 1/users add to 1",
        ": each user adds the difference of two Polya(1/users, beta = exp(-1/scale)) draws, and they "
        "sum to the discrete Laplace of that scale",
    ),
    "discrete-gaussian": (
        "sigma^2 adds",
        ": total^2 = users x per_user^2 (a sum of discrete Gaussians is no discrete Gaussian; its "
        "variance is at most total^2)",
    ),
    "skellam": ("variances add", ": total = users x per_user"),
}


def noise_amount(cal: Calibration) -> NoiseAmount:
    """The calibrated noise of a family (:func:`accounting.calibration.calibrate`) in one unit per
    family, for the sum (``total``) and for each user (``per_user``), as decimals rounded toward
    more noise."""
    family, n, value = cal.family, cal.users, cal.value
    unit = "sigma per user" if cal.parameter == "sigma per user" else cal.parameter
    if unit == "sigma per user":  # discrete Gaussian shares: the share is what was calibrated
        with precision(30):
            total = float_up(upper(iv.sqrt(iv.mpf(n)) * iv.mpf(value)))
        return NoiseAmount("sigma", total, value, n, "per_user", "".join(_COMBINE[family]))
    per_user = value
    share = cal.share
    if isinstance(share, Gaussian):
        per_user = decimal_up(share.sigma)
    elif isinstance(share, Skellam):
        per_user = decimal_up(Fraction(share.mu1) + Fraction(share.mu2))
    return NoiseAmount(unit, value, per_user, n, "total", "".join(_COMBINE[family]))


def _cmd_calibrate(args: argparse.Namespace) -> int:
    family = args.noise
    exact_compositions(args, family == "gaussian")
    if family_named(family).lattice:
        lattice_sensitivity(Skellam(1), args.sensitivity)  # any lattice noise: the same limit
    with progress(args, "calibrating (noise levels accounted)"):
        cal = calibrate(
            family,
            args.epsilon,
            args.delta,
            sensitivity=args.sensitivity,
            compositions=args.compositions,
            users=args.users,
            route=args.route,
            dps=args.dps,
            neighbouring=relation(args),
            max_evaluations=args.max_evaluations,
            time_limit=args.time_limit,
            sampling_rate=args.sampling_rate,
            sampling=sampling_of(args),
        )
    amount = noise_amount(cal)
    record: dict[str, object] = {
        "command": "calibrate",
        "neighbouring": relation(args).value,
        "inputs": inputs(
            args,
            ("noise", "epsilon", "delta", "sensitivity", "compositions", "users", "route")
            + (("sampling_rate",) if args.sampling_rate is not None else ()),
        )
        | ({"sampling": sampling_of(args)} if args.sampling_rate is not None else {}),
        "parameter": amount.unit,
        amount.unit: amount.total,
        "noise": amount,
        "epsilon_certified": cal.epsilon.upper,
        "route": cal.route,
        "dps": args.dps,
        "converged": cal.converged,
        "not_met": cal.not_met,
        "evaluations": cal.evaluations,
    } | describe(_family_mechanism(cal.mechanism))
    if cal.share is not None:
        record["share"] = noise_to_dict(cal.share)
    if amount.users == 1:
        head = f"{family}: {amount.unit} = {amount.total!r} (rounded toward more noise)"
    else:
        head = (
            f"{family}: {amount.unit} = {amount.total!r} in total, {amount.per_user!r} per user "
            f"({amount.users} users; {_COMBINE[family][0]}; rounded toward more noise)"
        )
    text = (
        f"{head}\n"
        f"certified epsilon = {certified_text('epsilon', cal.epsilon)} <= {args.epsilon:g} "
        f"at delta = {args.delta:g} "
        f"over {args.compositions} composition(s)"
        + (
            f" of batches sampled at q = {args.sampling_rate:g} ({sampling_of(args)})"
            if args.sampling_rate is not None
            else ""
        )
        + f" (route {cal.route})"
    )
    if cal.share is not None:
        adds = noise_text(cal.share)
        if isinstance(cal.share, Polya):
            adds = f"the difference of two {adds} draws"
        text += f"\neach of {args.users} users adds {adds}"
    if not cal.converged:
        budget = args.max_evaluations is not None and cal.evaluations >= args.max_evaluations
        limit = (
            f"--max-evaluations {args.max_evaluations}" if budget else f"--time-limit {args.time_limit:g} s"
        )
        text += (
            f"\nthe search stopped at {limit} ({cal.evaluations} noise levels accounted): the least "
            f"{cal.parameter} meeting the target lies in ({cal.not_met!r}, {cal.value!r}] "
            f"(a larger {limit.split()[0]} narrows it)"
        )
    return emit(args, record, text)


def _family_mechanism(mechanism: Mechanism | None) -> Mechanism:
    """A family calibration always gives its mechanism (only a constructor may not)."""
    assert mechanism is not None
    return mechanism


def add_parser(sub: Subcommands) -> None:
    """The parser of ``calibrate``."""
    cal_cmd = sub.add_parser("calibrate", help="the least noise meeting (ε, δ)")
    cal_cmd.add_argument("--noise", choices=FAMILIES, required=True, help="noise family")
    cal_cmd.add_argument("--epsilon", type=positive_float, required=True, help="target ε > 0")
    cal_cmd.add_argument("--delta", type=unit_float, required=True, help="target δ in (0, 1)")
    cal_cmd.add_argument(
        "--max-evaluations",
        type=positive_int,
        metavar="N",
        help="after N noise levels accounted, stop refining once one meets the target (certified, "
        "toward more noise; the output gives the bracket); the same answer on any machine "
        "(default: no limit, the search runs to its tolerance)",
    )
    cal_cmd.add_argument(
        "--time-limit",
        type=positive_float,
        metavar="SECONDS",
        help="opt-in: after this many seconds, stop refining once a noise level meeting the target is "
        "known, as --max-evaluations; the answer then depends on the machine's speed and load "
        "(default: no limit, no clock read)",
    )
    add_accounting_arguments(cal_cmd, sampling=True, cost=False)
    cal_cmd.set_defaults(func=_cmd_calibrate)
