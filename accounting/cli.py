"""The ``dp-account`` command line (also ``python -m accounting``).

Subcommands ``epsilon``, ``delta``, ``rdp``, ``calibrate``, ``protocol``, ``shuffle``,
``shuffle-protocol``, ``ledger`` and ``demo``, each with ``--json``. Invalid input exits with status 2 and a
one-line message naming the bad option.

``dp-account demo`` prints, for a few target ε at one δ, the exact ε(δ) of discrete noise
sized by the classic recipes next to what the best published closed form claims for the
same noise, so one sees how much exact accounting saves.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, NoReturn

from mpmath import mp

from accounting import bounds, shuffle
from accounting._certified import float_down
from accounting.accountant import PUBLISHED, ROUTES, Accountant, EventLike, mechanism_to_dict, noise_to_dict
from accounting.calibration import (
    FAMILIES,
    SHUFFLE_SUM_PROTOCOLS,
    Variant,
    calibrate,
    protocol_parameters,
    shuffle_sum_parameters,
)
from accounting.conversion import rdp_to_dp, zcdp_to_dp_cks
from accounting.errors import AccountingError, ParameterError, ParameterTypeError, UnsupportedEventError
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    NoiseDistribution,
    Polya,
    Skellam,
)

_INTEGER_ORDERS = range(2, 2001)


@dataclass(frozen=True)
class DemoRow:
    """One line of the demo table."""

    target_epsilon: float
    noise: str
    bound_name: str
    bound_epsilon: float
    exact_epsilon: float
    exact_digits: float

    @property
    def saving(self) -> float:
        """How much smaller the exact ε is than the bound's, as a fraction of the bound."""
        if not math.isfinite(self.bound_epsilon) or self.bound_epsilon == 0:
            return 0.0
        return 1 - self.exact_epsilon / self.bound_epsilon


def demo_rows(epsilons: Sequence[float], delta: float, users: int = 10, dps: int = 20) -> list[DemoRow]:
    """The rows of ``dp-account demo`` (sensitivity 1).

    Noise is sized by the classic recipes for a target ε: ``b = 1/ε`` for the discrete
    Laplace (Fact 3) and the Gaussian ``σ = sqrt(2 ln(1.25/δ))/ε`` (Dwork–Roth A.1, used here
    for every ε only as a size) for the Skellam variance, the discrete Gaussian and, split
    over ``users`` shares, the sum of discrete Gaussians.
    """
    rows: list[DemoRow] = []
    for eps in epsilons:
        sigma = math.sqrt(2 * math.log(1.25 / delta)) / eps
        share = sigma / math.sqrt(users)
        if share >= 0.5:
            kls_name = "KLS21 Prop 13 + Lemma 10"
            kls_rho = bounds.sum_discrete_gaussians_rho_kls(share, users)
        else:  # KLS needs σ >= 1/2: fall back on one share's CKS bound (post-processing)
            kls_name = "CKS20, one share + Lemma 10"
            kls_rho = bounds.discrete_gaussian_rho_cks(share)
        skellam_curve = ((a, bounds.skellam_rdp_akl(a, sigma**2)) for a in _INTEGER_ORDERS)
        cases: list[tuple[str, Mechanism, str, float]] = [
            (
                f"DiscreteLaplace(scale={1 / eps:.4g})",
                AdditiveNoise(DiscreteLaplace(1 / eps)),
                "pure ε (Fact 3)",
                bounds.discrete_laplace_pure_epsilon(1 / eps),
            ),
            (
                f"Skellam(variance={sigma**2:.4g})",
                AdditiveNoise(Skellam(sigma**2)),
                "AKL21 Thm 3.5 + Lemma 10",
                rdp_to_dp(skellam_curve, delta),
            ),
            (
                f"DiscreteGaussian(sigma={sigma:.4g})",
                AdditiveNoise(DiscreteGaussian(sigma)),
                "CKS20 zCDP + Lemma 10",
                zcdp_to_dp_cks(bounds.discrete_gaussian_rho_cks(sigma), delta),
            ),
            (
                f"{users} x DiscreteGaussian(sigma={share:.4g})",
                DistributedSum(DiscreteGaussian(share), users),
                kls_name,
                zcdp_to_dp_cks(kls_rho, delta),
            ),
        ]
        for name, mech, bound_name, bound_eps in cases:
            exact = mech.epsilon(delta, dps)
            rows.append(DemoRow(eps, name, bound_name, bound_eps, exact.upper, exact.digits()))
    return rows


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
        print(json.dumps({"delta": args.delta, "rows": table}, indent=2))
    else:
        _print_table(rows, args.delta)
    return 0


_NOISES = ("gaussian", "laplace", "discrete-laplace", "discrete-gaussian", "skellam", "polya", "binomial")


def noise_from_arguments(args: argparse.Namespace) -> NoiseDistribution:
    """The noise (each user's share when ``--users`` > 1) named by the options."""
    kind = args.noise

    def need(option: str) -> float:
        value = getattr(args, option)
        if value is None:
            raise AccountingError(f"--noise {kind} needs --{option}")
        return float(value)

    if kind == "gaussian":
        return Gaussian(need("sigma"))
    if kind == "laplace":
        return Laplace(need("scale"))
    if kind == "discrete-laplace":
        return DiscreteLaplace(need("scale"))
    if kind == "discrete-gaussian":
        return DiscreteGaussian(need("sigma"))
    if kind == "skellam":
        return Skellam(need("variance"))
    if kind == "polya":
        return Polya(Fraction(1, args.users), need("beta"))
    if kind == "binomial":
        return CenteredBinomial(int(need("trials")))
    raise ParameterError("--noise", kind, "one of " + ", ".join(_NOISES))  # pragma: no cover


def _mechanism(args: argparse.Namespace) -> Mechanism:
    share = noise_from_arguments(args)
    if args.users > 1:
        if isinstance(share, Gaussian) and _relation(args) is Neighbouring.ADD_REMOVE:
            raise UnsupportedEventError(
                "--noise gaussian --users N under --neighbouring add-remove: removing a user removes "
                "a share too; give the total noise (--users 1) or use discrete shares"
            )
        if isinstance(share, Gaussian):
            # Gaussian shares sum to a Gaussian of n times the variance.
            with mp.workdps(40):
                total = Gaussian(float_down(mp.sqrt(args.users) * mp.mpf(float(share.sigma))))
            return AdditiveNoise(total, args.sensitivity)
        return DistributedSum(share, args.users, args.sensitivity)
    return AdditiveNoise(share, args.sensitivity)


def _describe(mech: Mechanism) -> dict[str, object]:
    out: dict[str, object] = {"mechanism": mechanism_to_dict(mech)}
    if isinstance(mech, DistributedSum):
        out["total_noise"] = noise_to_dict(mech.total_noise)
        out["total_variance"] = mech.total_noise.variance()
    return out


def _inputs(args: argparse.Namespace, names: Sequence[str]) -> dict[str, object]:
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


_NOISE_OPTIONS = (
    "noise",
    "sigma",
    "variance",
    "scale",
    "beta",
    "trials",
    "users",
    "sensitivity",
    "compositions",
)


def _emit(args: argparse.Namespace, record: dict[str, object], text: str) -> int:
    if args.json:
        print(json.dumps(record, indent=2, default=str))
    else:
        print(text)
    return 0


def _relation(args: argparse.Namespace) -> Neighbouring:
    return Neighbouring.parse(getattr(args, "neighbouring", Neighbouring.REPLACE_ONE.value))


def _event(args: argparse.Namespace, mech: Mechanism) -> EventLike:
    """The release: the mechanism, or the mechanism on a sampled batch (``--sampling-rate``)."""
    rate = getattr(args, "sampling_rate", None)
    if rate is None:
        if getattr(args, "sampling", None) is not None:
            raise ParameterError("--sampling", args.sampling, "given together with --sampling-rate")
        return mech
    from accounting import subsampling

    if args.sampling in (None, "poisson"):
        return subsampling.PoissonSampled(mech, rate)  # type: ignore[arg-type]
    return subsampling.SampledWithoutReplacement(mech, rate)  # type: ignore[arg-type]


def _ledger(args: argparse.Namespace, mech: Mechanism) -> Accountant:
    return Accountant(_relation(args), dps=args.dps).compose(_event(args, mech), args.compositions)


def _answer(args: argparse.Namespace, asked: str, given: str) -> int:
    """``epsilon`` (asked) at a ``delta`` (given), or the other way round."""
    mech = _mechanism(args)
    acc = _ledger(args, mech)
    at = getattr(args, given)
    answer = acc.epsilon(at, args.route) if asked == "epsilon" else acc.delta(at, args.route)
    record: dict[str, object] = {
        "command": asked,
        "inputs": _inputs(args, (*_NOISE_OPTIONS, given, "route")),
        "neighbouring": acc.neighbouring.value,
        asked: answer.upper,
        f"{asked}_lower": answer.lower,
        "route": answer.route,
        "candidates": answer.candidates,
        "dps": args.dps,
    } | _describe(mech)
    text = f"{asked} = {answer.upper!r} at {given} = {at:g} (route {answer.route}; rounded up)"
    return _emit(args, record, text + _total_line(mech))


def _cmd_epsilon(args: argparse.Namespace) -> int:
    return _answer(args, "epsilon", "delta")


def _cmd_delta(args: argparse.Namespace) -> int:
    return _answer(args, "delta", "epsilon")


def _cmd_rdp(args: argparse.Namespace) -> int:
    mech = _mechanism(args)
    acc = _ledger(args, mech)
    values = {str(a): acc.rdp(a) for a in args.alpha}  # the ledger's one sum, rounded up
    record: dict[str, object] = {
        "command": "rdp",
        "inputs": _inputs(args, (*_NOISE_OPTIONS, "alpha")),
        "rdp": values,
        "dps": args.dps,
    } | _describe(mech)
    text = "\n".join(f"rdp({a}) = {x!r}" for a, x in values.items())
    return _emit(args, record, text + _total_line(mech))


def _total_line(mech: Mechanism) -> str:
    if isinstance(mech, DistributedSum):
        return f"\ntotal noise of {mech.users} users: {mech.total_noise!r}"
    return ""


def _cmd_calibrate(args: argparse.Namespace) -> int:
    family = args.noise
    cal = calibrate(
        family,
        args.epsilon,
        args.delta,
        sensitivity=args.sensitivity,
        compositions=args.compositions,
        users=args.users,
        route=args.route,
        dps=args.dps,
        neighbouring=_relation(args),
    )
    record: dict[str, object] = {
        "command": "calibrate",
        "neighbouring": _relation(args).value,
        "inputs": _inputs(
            args, ("noise", "epsilon", "delta", "sensitivity", "compositions", "users", "route")
        ),
        "parameter": cal.parameter,
        cal.parameter.replace(" ", "_"): cal.value,
        "epsilon_certified": cal.epsilon.upper,
        "route": cal.route,
        "dps": args.dps,
    } | _describe(_family_mechanism(cal.mechanism))
    if cal.share is not None:
        record["share"] = noise_to_dict(cal.share)
    text = (
        f"{family}: {cal.parameter} = {cal.value!r} (rounded toward more noise)\n"
        f"certified epsilon = {cal.epsilon.upper!r} <= {args.epsilon:g} at delta = {args.delta:g} "
        f"over {args.compositions} composition(s) (route {cal.route})"
    )
    if cal.share is not None:
        text += f"\neach of {args.users} users adds {cal.share!r}"
    return _emit(args, record, text)


def _cmd_protocol(args: argparse.Namespace) -> int:
    variant = Variant.from_theorem(args.theorem)
    par = protocol_parameters(variant, args.epsilon, args.users, args.horizon, args.scale, args.p)
    record: dict[str, object] = {
        "command": "protocol",
        "inputs": _inputs(args, ("theorem", "epsilon", "users", "horizon", "scale", "p")),
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
    return _emit(args, record, text)


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
    inputs = _inputs(args, ("epsilon0", "users", "delta", "bound"))
    record: dict[str, object] = {"command": "shuffle", "inputs": inputs}
    if args.bound == "all":
        record["results"] = [_shuffle_record(r) for r in results]
    else:
        record |= _shuffle_record(results[0])
    lines = [_shuffle_line(r) for r in results]
    if args.bound != "all":
        lines.append(f"theorem: {results[0].theorem}")
    head = f"shuffling n = {args.users} reports of an epsilon0 = {args.epsilon0:g} local randomizer"
    return _emit(args, record, "\n".join([head, *lines]))


def _cmd_shuffle_protocol(args: argparse.Namespace) -> int:
    par = shuffle_sum_parameters(
        args.protocol, args.epsilon, args.delta, args.users, args.dimension, args.bound
    )
    names = ("protocol", "epsilon", "delta", "users", "dimension", "bound")
    record: dict[str, object] = {
        "command": "shuffle-protocol",
        "inputs": _inputs(args, names),
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
    return _emit(args, record, text)


def _cmd_ledger(args: argparse.Namespace) -> int:
    """Re-account a saved ledger (``Accountant.to_json`` output, e.g. a dp-regret run's)."""
    try:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as err:
        raise ParameterError("FILE", args.file, f"a readable ledger file ({err.strerror})") from None
    except UnicodeDecodeError:
        raise ParameterError("FILE", args.file, "a UTF-8 JSON ledger file") from None
    acc = Accountant.from_json(text)
    if (args.delta is None) == (args.epsilon is None):
        raise ParameterError("--delta/--epsilon", None, "exactly one of --delta or --epsilon")
    asked, given = ("epsilon", "delta") if args.delta is not None else ("delta", "epsilon")
    at = getattr(args, given)
    answer = acc.epsilon(at, args.route) if asked == "epsilon" else acc.delta(at, args.route)
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
        f"{asked} = {answer.upper!r} at {given} = {at:g} (route {answer.route}; rounded up) "
        f"for {len(acc.ledger)} event(s) under {acc.neighbouring.value}"
    )
    return _emit(args, record, text_out)


def parse_number(
    text: str, convert: Callable[[str], float], valid: Callable[[float], bool], what: str
) -> Any:
    """``convert(text)`` if it satisfies ``valid``, else an argparse error saying ``what`` it must be."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not valid(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    return value


def _positive_float(text: str) -> float:
    return float(parse_number(text, float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0"))


def _nonnegative_float(text: str) -> float:
    return float(parse_number(text, float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0"))


def _positive_int(text: str) -> int:
    return int(parse_number(text, int, lambda v: v >= 1, "an integer >= 1"))


def _order(text: str) -> float:
    return float(parse_number(text, float, lambda v: v > 1, "a number > 1 (or inf)"))


def _rate(text: str) -> float:
    return float(parse_number(text, float, lambda v: 0 < v <= 1, "a sampling rate q in (0, 1]"))


def _unit_float(text: str) -> float:
    return float(parse_number(text, float, lambda v: 0 < v < 1, "in the open interval (0, 1)"))


def add_noise_arguments(cmd: argparse.ArgumentParser) -> None:
    """The options naming a noise (shared with ``dp-audit``); :func:`noise_from_arguments` reads them."""
    cmd.add_argument(
        "--noise", choices=_NOISES, required=True, help="the noise (a user's share with --users)"
    )
    cmd.add_argument("--sigma", type=_positive_float, help="σ (gaussian, discrete-gaussian)")
    cmd.add_argument("--variance", type=_positive_float, help="variance (skellam)")
    cmd.add_argument("--scale", type=_positive_float, help="scale b (laplace, discrete-laplace)")
    cmd.add_argument("--beta", type=_unit_float, help="β of Pólya(1/users, β) shares (polya)")
    cmd.add_argument("--trials", type=_positive_int, help="trials (binomial)")
    cmd.add_argument("--users", type=_positive_int, default=1, help="users adding shares (default 1)")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``prog: error: ...``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dp-account",
        description="Certified privacy accounting for discrete (and continuous) noise.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="exact ε versus the published bounds, for a few noise sizes")
    demo.add_argument("--delta", type=_unit_float, default=1e-6, help="δ in (0, 1) (default 1e-6)")
    demo.add_argument(
        "--epsilons", type=_positive_float, nargs="+", default=[0.1, 0.5, 1.0, 5.0], help="target ε values"
    )
    demo.add_argument("--users", type=int, default=10, help="shares in the distributed row (default 10)")
    demo.add_argument("--dps", type=int, default=20, help="working precision in digits (default 20)")
    demo.add_argument("--json", action="store_true", help="print JSON instead of a table")
    demo.set_defaults(func=_cmd_demo)

    def noise_options(cmd: argparse.ArgumentParser) -> None:
        add_noise_arguments(cmd)
        common(cmd, users=False)

    def common(cmd: argparse.ArgumentParser, users: bool = True, sampling: bool = True) -> None:
        if users:
            cmd.add_argument("--users", type=_positive_int, default=1, help="users adding shares (default 1)")
        cmd.add_argument("--sensitivity", type=_positive_float, default=1, help="sensitivity Δ (default 1)")
        cmd.add_argument(
            "--compositions", type=_positive_int, default=1, help="releases composed (default 1)"
        )
        cmd.add_argument(
            "--route",
            choices=[*ROUTES, *(f"published:{name}" for name in PUBLISHED)],
            default="auto",
            metavar="ROUTE",
            help="accounting route: " + ", ".join(ROUTES) + ", published:<"
            + "|".join(PUBLISHED) + "> (default auto)",
        )
        cmd.add_argument(
            "--neighbouring",
            choices=[n.value for n in Neighbouring],
            default=Neighbouring.REPLACE_ONE.value,
            help="neighbouring relation the sensitivity refers to (default replace-one; "
            "dp_accounting's default is add-remove)",
        )
        if sampling:
            cmd.add_argument(
                "--sampling-rate",
                type=_rate,
                help="each release runs on a sampled batch: q in (0, 1] (Poisson: inclusion "
                "probability; fixed: batch size / dataset size); the sensitivity is then one "
                "record's contribution bound",
            )
            cmd.add_argument(
                "--sampling",
                choices=("poisson", "fixed"),
                help="poisson (default) or fixed-size batches without replacement",
            )
        cmd.add_argument(
            "--dps", type=_positive_int, default=20, help="working precision in digits (default 20)"
        )
        cmd.add_argument("--json", action="store_true", help="print one JSON object")

    eps_cmd = sub.add_parser("epsilon", help="the certified ε at a δ")
    noise_options(eps_cmd)
    eps_cmd.add_argument("--delta", type=_unit_float, required=True, help="δ in (0, 1)")
    eps_cmd.set_defaults(func=_cmd_epsilon)

    delta_cmd = sub.add_parser("delta", help="the certified δ at an ε")
    noise_options(delta_cmd)
    delta_cmd.add_argument("--epsilon", type=_nonnegative_float, required=True, help="ε >= 0")
    delta_cmd.set_defaults(func=_cmd_delta)

    rdp_cmd = sub.add_parser("rdp", help="the exact Rényi DP curve at given orders")
    noise_options(rdp_cmd)
    rdp_cmd.add_argument("--alpha", type=_order, nargs="+", required=True, help="orders α > 1 (or inf)")
    rdp_cmd.set_defaults(func=_cmd_rdp)

    cal_cmd = sub.add_parser("calibrate", help="the least noise meeting (ε, δ)")
    cal_cmd.add_argument("--noise", choices=FAMILIES, required=True, help="noise family")
    cal_cmd.add_argument("--epsilon", type=_positive_float, required=True, help="target ε > 0")
    cal_cmd.add_argument("--delta", type=_unit_float, required=True, help="target δ in (0, 1)")
    common(cal_cmd, sampling=False)
    cal_cmd.set_defaults(func=_cmd_calibrate, dps=15)

    proto = sub.add_parser("protocol", help="parameters of Theorems 1-6 of the distributed MAB paper")
    proto.add_argument("--theorem", type=int, choices=range(1, 7), required=True, help="1..6")
    proto.add_argument("--epsilon", type=_positive_float, required=True, help="ε > 0")
    proto.add_argument("--users", type=_positive_int, required=True, help="users in the batch, n = l(b)")
    proto.add_argument("--horizon", type=_positive_int, required=True, help="horizon T")
    proto.add_argument("--scale", type=_positive_float, help="scaling factor s >= 1 (Theorems 2 and 4)")
    proto.add_argument("--p", type=_unit_float, help="failure probability in τ (default 1/T)")
    proto.add_argument("--json", action="store_true", help="print one JSON object")
    proto.set_defaults(func=_cmd_protocol)
    shuf = sub.add_parser("shuffle", help="privacy amplification by shuffling n eps0-LDP reports")
    shuf.add_argument("--epsilon0", type=_positive_float, required=True, help="the local randomizer's ε0 > 0")
    shuf.add_argument("--users", type=_positive_int, required=True, help="n, the number of shuffled reports")
    shuf.add_argument("--delta", type=_unit_float, required=True, help="target δ in (0, 1)")
    shuf.add_argument(
        "--bound",
        choices=(*shuffle.BOUNDS, "all"),
        default="fmt-numerical",
        help="which theorem (default fmt-numerical, the tightest; all: every generic bound)",
    )
    shuf.add_argument("--json", action="store_true", help="print one JSON object")
    shuf.set_defaults(func=_cmd_shuffle)
    sp = sub.add_parser(
        "shuffle-protocol", help="parameters of the shuffle summation protocols (bits + binomial)"
    )
    sp.add_argument("--protocol", choices=SHUFFLE_SUM_PROTOCOLS, required=True, help="which protocol")
    sp.add_argument("--epsilon", type=_positive_float, required=True, help="target ε of one call")
    sp.add_argument("--delta", type=_unit_float, required=True, help="target δ of one call")
    sp.add_argument("--users", type=_positive_int, required=True, help="n, users (data points) per call")
    sp.add_argument("--dimension", type=_positive_int, default=1, help="D coordinates (default 1)")
    sp.add_argument("--bound", type=_positive_float, default=1.0, help="B: |x| (or ||x||_2) <= B (default 1)")
    sp.add_argument("--json", action="store_true", help="print one JSON object")
    sp.set_defaults(func=_cmd_shuffle_protocol)

    led = sub.add_parser("ledger", help="re-account a saved ledger (JSON written by Accountant.to_json)")
    led.add_argument("file", metavar="FILE", help="the ledger file")
    led.add_argument("--delta", type=_unit_float, help="δ in (0, 1): print ε(δ)")
    led.add_argument("--epsilon", type=_nonnegative_float, help="ε >= 0: print δ(ε)")
    led.add_argument(
        "--route",
        choices=[*ROUTES, *(f"published:{name}" for name in PUBLISHED)],
        default="auto",
        metavar="ROUTE",
        help="accounting route (default auto)",
    )
    led.add_argument("--json", action="store_true", help="print one JSON object")
    led.set_defaults(func=_cmd_ledger)
    return parser


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run the chosen subcommand; a library error is one line and status 2."""
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except (AccountingError, ParameterTypeError) as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    return code


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser(), argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def _family_mechanism(mechanism: Mechanism | None) -> Mechanism:
    """A family calibration always gives its mechanism (only a constructor may not)."""
    assert mechanism is not None
    return mechanism
