"""``dp-account epsilon``, ``delta`` and ``rdp``: the certified ε at a δ, the certified δ at an ε,
and the exact Rényi DP curve at given orders, of the mechanism the noise options name
(:mod:`accounting.cli.noise_options`), composed ``--compositions`` times (sampled with
``--sampling-rate``) by the :class:`~accounting.accountant.Accountant`, by the route ``--route``."""

from __future__ import annotations

import argparse
import math

import mpmath

from accounting import validate as v
from accounting.cli.framework import (
    Subcommands,
    certified_text,
    checked,
    emit,
    inputs,
    nonnegative_float,
    progress,
    unit_float,
)
from accounting.cli.noise_options import (
    NOISE_OPTIONS,
    accountant_from_arguments,
    accounting_cost,
    add_mechanism_arguments,
    describe,
    exact_compositions,
    mechanism_from_arguments,
    noise_from_arguments,
    refuse_cost,
    relation,
    total_line,
)
from accounting.errors import ParameterError, UnsupportedError, UnsupportedEventError
from accounting.mechanisms import AdditiveNoise, Mechanism
from accounting.noise import Gaussian, Laplace, LatticeNoise

#: The largest finite Rényi order asked of lattice noise (the exact sums' windows scale with α).
MAX_LATTICE_ORDER = 1e100
_order = checked(v.order)


def _answer(args: argparse.Namespace, asked: str, given: str) -> int:
    """``epsilon`` (asked) at a ``delta`` (given), or the other way round."""
    mech = mechanism_from_arguments(args)
    plain_gaussian = isinstance(mech, AdditiveNoise) and isinstance(mech.noise, Gaussian)
    exact_compositions(args, plain_gaussian and getattr(args, "sampling_rate", None) is None)
    acc = accountant_from_arguments(args, mech)
    refuse_cost(args, accounting_cost(args, mech, acc), f"this {asked}")
    at = getattr(args, given)
    with progress(args, "accounting"):
        answer = acc.epsilon(at, args.route) if asked == "epsilon" else acc.delta(at, args.route)
    shown = certified_text(asked, answer)
    record: dict[str, object] = {
        "command": asked,
        "inputs": inputs(args, (*NOISE_OPTIONS, given, "route")),
        "neighbouring": acc.neighbouring.value,
        asked: answer.upper,
        f"{asked}_lower": answer.lower,
        "route": answer.route,
        "candidates": answer.candidates,
        "dps": args.dps,
    } | describe(mech)
    text = f"{asked} = {shown} at {given} = {at:g} (route {answer.route}; rounded up)"
    return emit(args, record, text + total_line(mech))


def _cmd_epsilon(args: argparse.Namespace) -> int:
    return _answer(args, "epsilon", "delta")


def _cmd_delta(args: argparse.Namespace) -> int:
    return _answer(args, "delta", "epsilon")


def _cmd_rdp(args: argparse.Namespace) -> int:
    mech = mechanism_from_arguments(args)
    if isinstance(noise_from_arguments(args), LatticeNoise):
        for a in args.alpha:
            if math.isfinite(a) and a > MAX_LATTICE_ORDER:
                raise ParameterError(
                    "--alpha",
                    a,
                    f"inf or an order at most {MAX_LATTICE_ORDER:g} for lattice noise (the exact Rényi sums' "
                    "windows grow with the order and leave the float range)",
                )
    acc = accountant_from_arguments(args, mech)
    with progress(args, "accounting"):
        values = {str(a): acc.rdp(a) for a in args.alpha}  # the ledger's one sum, rounded up
    shown = {a: _rdp_text(args, mech, float(a), x) for a, x in values.items()}
    record: dict[str, object] = {
        "command": "rdp",
        "inputs": inputs(args, (*NOISE_OPTIONS, "alpha")),
        "rdp": values,
        "dps": args.dps,
    } | describe(mech)
    text = "\n".join(f"rdp({a}) = {x}" for a, x in shown.items())
    return emit(args, record, text + total_line(mech))


def _rdp_text(args: argparse.Namespace, mech: Mechanism, alpha: float, value: float) -> str:
    """One RDP value as text; an infinite one is shown only when the divergence is unbounded.

    The ledger's sum takes an order its exact sum refuses as ``inf`` (sound for optimising over
    orders, no answer for one asked order): the mechanism is asked again for the reason.
    """
    if math.isfinite(value):
        return repr(value)
    continuous = isinstance(noise_from_arguments(args), Gaussian | Laplace)  # finite at finite orders
    if math.isfinite(alpha) and continuous and isinstance(mech.under(relation(args)), AdditiveNoise):
        raise ParameterError("--alpha", alpha, "an order at which the Rényi divergence fits the float range")
    if getattr(args, "sampling_rate", None) is None:
        try:
            exact = mech.under(relation(args)).rdp(alpha, args.dps)
        except UnsupportedEventError:
            raise
        except UnsupportedError as err:
            valid = f"an order whose Rényi divergence can be certified ({err})"
            raise ParameterError("--alpha", alpha, valid) from None
        if exact.lo == mpmath.inf:
            return "inf (unbounded)"
    raise ParameterError("--alpha", alpha, "an order with a finite certified Rényi divergence")


def add_parsers(sub: Subcommands) -> None:
    """The parsers of ``epsilon``, ``delta`` and ``rdp``."""
    eps_cmd = sub.add_parser("epsilon", help="the certified ε at a δ")
    add_mechanism_arguments(eps_cmd)
    eps_cmd.add_argument("--delta", type=unit_float, required=True, help="δ in (0, 1)")
    eps_cmd.set_defaults(func=_cmd_epsilon)

    delta_cmd = sub.add_parser("delta", help="the certified δ at an ε")
    add_mechanism_arguments(delta_cmd)
    delta_cmd.add_argument("--epsilon", type=nonnegative_float, required=True, help="ε >= 0")
    delta_cmd.set_defaults(func=_cmd_delta)

    rdp_cmd = sub.add_parser("rdp", help="the exact Rényi DP curve at given orders")
    add_mechanism_arguments(rdp_cmd)
    rdp_cmd.add_argument("--alpha", type=_order, nargs="+", required=True, help="orders α > 1 (or inf)")
    rdp_cmd.set_defaults(func=_cmd_rdp)
