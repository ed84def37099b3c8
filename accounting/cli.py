"""The ``dp-account`` command line (also ``python -m accounting``).

``dp-account demo`` prints, for a few target ε at one δ, the exact ε(δ) of discrete noise
sized by the classic recipes next to what the best published closed form claims for the
same noise, so one sees how much exact accounting saves.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from accounting import bounds
from accounting._certified import float_up
from accounting.conversion import rdp_to_dp
from accounting.errors import AccountingError
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism
from accounting.noise import DiscreteGaussian, DiscreteLaplace, Skellam

#: Orders for converting a zCDP curve (valid at every real α > 1) with Lemma 10.
_REAL_ORDERS = [1 + 10 ** (k / 40) for k in range(-120, 161)]
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


def _zcdp_route(rho: float, delta: float) -> float:
    return rdp_to_dp(((a, float_up(a * rho)) for a in _REAL_ORDERS), delta)


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
                _zcdp_route(bounds.discrete_gaussian_rho_cks(sigma), delta),
            ),
            (
                f"{users} x DiscreteGaussian(sigma={share:.4g})",
                DistributedSum(DiscreteGaussian(share), users),
                kls_name,
                _zcdp_route(kls_rho, delta),
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


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number > 0")
    return value


def _unit_float(text: str) -> float:
    value = _positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be in the open interval (0, 1)")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except AccountingError as err:
        print(f"dp-account: error: {err}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
