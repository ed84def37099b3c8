"""``dp-account protocol``: the parameters ``g``, ``τ``, ``m``, the bits per user and the noise of
Theorems 1-6 of the distributed MAB paper (:func:`accounting.calibration.protocol_parameters`),
with the guarantee the theorem states."""

from __future__ import annotations

import argparse

from accounting import validate as v
from accounting.accountant import noise_to_dict
from accounting.cli.framework import (
    Subcommands,
    add_json,
    add_old_spelling,
    checked,
    emit,
    inputs,
    positive_float,
    positive_int,
    unit_float,
)
from accounting.papers.distributed_dp_mab import Variant, protocol_parameters


def _cmd_protocol(args: argparse.Namespace) -> int:
    variant = Variant.from_theorem(args.theorem)
    par = protocol_parameters(variant, args.epsilon, args.users, args.horizon, args.scaling, args.p)
    record: dict[str, object] = {
        "command": "protocol",
        "inputs": inputs(args, ("theorem", "epsilon", "users", "horizon", "scaling", "p")),
        "g": par.g,
        "tau": par.tau,
        "m": par.m,
        "bits_per_user": par.bits,
        "share": noise_to_dict(par.share) if par.share is not None else None,
        "server_noise": noise_to_dict(par.server_noise) if par.server_noise is not None else None,
        "privacy": par.privacy,
    }
    noise = par.share if par.share is not None else par.server_noise
    text = (
        f"Theorem {variant.theorem}: g = {par.g}, tau = {par.tau}, m = {par.m}, {par.bits} bits per user\n"
        f"noise: {noise!r} ({'per user' if par.share is not None else 'added by the server'})\n"
        f"privacy: {par.privacy}"
    )
    return emit(args, record, text)


def add_parser(sub: Subcommands) -> None:
    """The parser of ``protocol``."""
    proto = sub.add_parser("protocol", help="parameters of Theorems 1-6 of the distributed MAB paper")
    proto.add_argument(
        "--theorem", type=checked(v.integer, integer=True, minimum=1, maximum=6), required=True, help="1..6"
    )
    proto.add_argument("--epsilon", type=positive_float, required=True, help="ε > 0")
    proto.add_argument("--users", type=positive_int, required=True, help="users in the batch, n = l(b)")
    proto.add_argument("--horizon", type=positive_int, required=True, help="horizon T")
    proto.add_argument("--scaling", type=positive_float, help="scaling factor s >= 1 (Theorems 2 and 4)")
    add_old_spelling(proto, "--scale", "--scaling", type=positive_float)
    proto.add_argument("--p", type=unit_float, help="failure probability in τ (default 1/T)")
    add_json(proto)
    proto.set_defaults(func=_cmd_protocol)
