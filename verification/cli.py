"""The ``dp-audit`` command line (also ``python -m verification``).

Subcommands, each with ``--json`` and a human-readable report:

``sampler``    goodness of fit of a noise sampler against its exact PMF;
``bounds``     published closed forms against the exact values, over a grid;
``mechanism``  an empirical ε lower bound for additive noise, against a claimed ε;
``broken``     the catalogue of broken mechanisms (each must be flagged) and their correct twins,
               with the federated LinUCB audits (Dubey & Pentland's schedule side channel, sampled;
               the aggregate noise, the tree's exact accounting and within-batch adaptivity, checked);
               ``--entry NAME`` (repeatable) audits only the named entries, each with the seed it
               has in the whole run (e.g. ``ldp-linucb-code-sigma``: LDP-LinUCB's official code
               missing its stated (ε, δ));
``proofs``     the sympy proofs the accounting relies on.

Exit status: 0 when every check passes, 1 when a check fails (a sampler rejected, a bound that
should dominate violated, a violation found, a broken mechanism not flagged or a correct one
flagged, a proof that does not hold), 2 for invalid input (a one-line message).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from accounting import validate as v
from accounting.certified import DEFAULT_DPS
from accounting.cli.framework import (
    Parser,
    add_json,
    add_no_progress,
    checked,
    json_text,
    progress,
    run,
    unit_float,
)
from accounting.cli.noise_options import (
    MAX_BINOMIAL_TRIALS,
    MAX_LATTICE_SHIFT,
    NOISE_PARAMETERS,
    add_noise_arguments,
    lattice_sensitivity,
    noise_from_arguments,
)
from accounting.errors import AccountingError, ParameterError
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.noise import CenteredBinomial, LatticeNoise, SumOfDiscreteGaussians
from verification.audit.auditor import within_draws
from verification.exactness import BOUNDS

#: The most samples ``dp-audit sampler`` draws: the goodness-of-fit test holds every draw in
#: memory (8 bytes each, and working copies), so 10^8 draws take a few GB.
MAX_SAMPLER_SAMPLES = 10**8
#: The most samples per side of ``dp-audit mechanism`` and ``broken``: the audit draws chunks of
#: 10^6 and keeps only counts, at about 10^7 samples a second per core, so 10^12 is about a day of
#: one machine's work (spread it with ``--scheduler``).
MAX_AUDIT_SAMPLES = 10**12
#: The highest ``--dps`` of ``bounds``: its exact values are compared with closed forms printed to a
#: few digits, and the work grows with the precision (Skellam's grid took 7 s at 20 digits, 11 s at
#: 100, 26 s at 300).
MAX_BOUNDS_DPS = 100
_WHY_BOUNDS_DPS = "the closed forms are checked to a few digits and the work grows with the precision"
#: The default ``--max-draws`` of ``mechanism`` and ``broken``: outputs drawn in all, both sides and
#: the pilots included (the whole catalogue at its default 10^6 samples draws about 2.5e7; 10^8 takes
#: some tens of seconds of one core). Larger audits are refused before any draw unless it is raised.
DEFAULT_MAX_DRAWS = 10**8
#: The default ``--max-draws`` of ``sampler``, whose test holds every sample (8 bytes and working
#: copies) and tabulates them: 2·10^7 samples take some seconds and about a GB.
DEFAULT_SAMPLER_DRAWS = 2 * 10**7
#: What an exact draw (``sampler --exact``: integer arithmetic) counts in the budget: about ten
#: fast draws (10^6 exact Skellam draws took 11 s where 10^7 fast ones took 4 s here).
EXACT_DRAW_WEIGHT = 10
#: The largest noise variance the samplers are asked for: they draw int64 values, and numpy's
#: Poisson (behind Skellam) takes rates below about 1e19.
MAX_SAMPLED_VARIANCE = 1e18
#: The largest noise variance ``dp-audit sampler`` tests: the goodness of fit tabulates the exact
#: PMF, in interval arithmetic, at every integer of a window some 50 standard deviations wide, which
#: takes about 10 s at a standard deviation of 5000 and grows with it.
MAX_FITTED_VARIANCE = 2.5e7
#: The most binomial trials ``dp-audit sampler`` tests: its exact PMF starts from C(n, k), whose
#: cost grows with n (about 7 s at 10^6), as in dp-account.
MAX_FITTED_TRIALS = MAX_BINOMIAL_TRIALS
#: Discrete Gaussian shares are drawn one by one (their sum is no discrete Gaussian): at most this
#: many share draws per command (about 3e6 a second here; 1000 users x 10^5 samples took 34 s).
MAX_SHARE_DRAWS = 3 * 10**7
#: Users of a discrete Gaussian sum whose exact PMF ``sampler`` tabulates (10^4: 4 s, 10^5: 17 s).
MAX_FITTED_DG_USERS = 10**4
#: How long ``--scheduler`` may take to answer before the audit gives up (seconds).
CONNECT_TIMEOUT = 4.0

#: Which registered closed forms concern each noise family (``dp-audit bounds --noise``).
#: ``dp-audit bounds --noise`` choices: the families of the registered checks, in registry order.
_BOUND_FAMILIES = tuple(dict.fromkeys(spec.family for spec in BOUNDS.values()))


def _emit(args: argparse.Namespace, record: dict[str, Any], text: str, ok: bool) -> int:
    print(json_text(record | {"passed": ok}) if args.json else text)
    return 0 if ok else 1


def _sampleable(args: argparse.Namespace, noise: Any, most: float, why: str) -> None:
    """Refuse, before drawing, a noise too wide to sample or to fit (naming its option)."""
    variance = noise.variance()
    if not variance <= most:
        parameter = NOISE_PARAMETERS[args.noise]
        raise ParameterError(
            f"--{parameter}",
            getattr(args, parameter),
            f"a noise of variance at most {most:g} (this one has {variance:.3g}"
            f"{' in total' if args.users > 1 else ''}; {why})",
        )


def _share_draws(args: argparse.Namespace, sides: int) -> None:
    """Refuse, before drawing, more discrete Gaussian share draws than :data:`MAX_SHARE_DRAWS`."""
    draws = sides * args.users * args.samples
    if draws > MAX_SHARE_DRAWS:
        raise ParameterError(
            "--users",
            args.users,
            f"at most {MAX_SHARE_DRAWS:.0e} discrete Gaussian share draws in all ({args.users} users x "
            f"{args.samples} --samples{' x 2 sides' if sides == 2 else ''} = {draws:.2g}; the shares are "
            "drawn one by one): fewer --users or --samples",
        )


def _cmd_sampler(args: argparse.Namespace) -> int:
    from verification.goodness_of_fit import check_sampler, exact_share_sum_sampler

    share = noise = noise_from_arguments(args)
    if args.users > 1:
        noise = DistributedSum(share, args.users).total_noise
    _sampleable(args, noise, MAX_FITTED_VARIANCE, "the test tabulates its exact PMF integer by integer")
    if isinstance(noise, SumOfDiscreteGaussians):
        if args.users > MAX_FITTED_DG_USERS:
            raise ParameterError(
                "--users",
                args.users,
                f"at most {MAX_FITTED_DG_USERS} discrete Gaussian shares (the test tabulates the exact PMF "
                "of their sum: 10^5 shares took 17 s)",
            )
        _share_draws(args, 1)
    if isinstance(noise, CenteredBinomial) and noise.trials > MAX_FITTED_TRIALS:
        raise ParameterError(
            "--trials",
            args.trials,
            f"at most {MAX_FITTED_TRIALS} trials in total (the exact PMF starts from C(n, k), whose cost "
            "grows with n)",
        )
    if not isinstance(noise, LatticeNoise) or not isinstance(share, LatticeNoise):
        raise AccountingError(f"--noise {args.noise}: goodness of fit needs a noise on the integers")
    weight = EXACT_DRAW_WEIGHT if args.exact else 1
    what = f"{args.samples} samples held for the test" + (
        f", x {weight} for exact draws" if args.exact else ""
    )
    within_draws(args.samples * weight, args.max_draws, what, value=args.samples)
    # --exact with --users: every user's share by its exact sampler, summed (the protocol's noise).
    sampler = None
    if args.exact:
        sampler = exact_share_sum_sampler(share, args.users) if args.users > 1 else noise.sample_exact
    report = check_sampler(
        noise,
        np.random.default_rng(args.seed),
        args.samples,
        sampler,  # type: ignore[arg-type]
        alpha=args.alpha,
        name=f"{'exact' if args.exact else 'fast'} sampler of {noise!r}",
    )
    record = {"command": "sampler", "exact": args.exact, "noise": repr(noise), "report": report}
    return _emit(args, record, report.summary(), report.passed)


def _cmd_bounds(args: argparse.Namespace) -> int:
    from verification.exactness import check_all

    names = [name for name, spec in BOUNDS.items() if args.noise in ("all", spec.family)]
    with progress(args, "bounds"):
        reports = check_all(quick=args.quick, dps=args.dps, names=names)
    ok = all(r.as_expected for r in reports)
    text = "\n".join(r.summary() for r in reports)
    text += "\n\n" + (
        "every proved bound dominates the exact value; every known slip is reported"
        if ok
        else "UNEXPECTED: a bound behaves unlike its citation"
    )
    return _emit(args, {"command": "bounds", "reports": list(reports)}, text, ok)


def _cmd_mechanism(args: argparse.Namespace) -> int:
    from verification.audit import additive_pair, audit

    noise = noise_from_arguments(args)
    lattice_sensitivity(noise, args.sensitivity)
    if args.users > 1 and not isinstance(noise, LatticeNoise):
        raise ParameterError("--users", args.users, f"1 for --noise {args.noise} (continuous noise)")
    mech = DistributedSum(noise, args.users, args.sensitivity) if args.users > 1 else None
    total = mech.total_noise if mech is not None else noise
    _sampleable(args, total, MAX_SAMPLED_VARIANCE, "the samplers draw int64 values")
    if isinstance(total, SumOfDiscreteGaussians):
        _share_draws(args, 2)  # both sides of the pair
    claimed = args.claimed_epsilon
    if claimed is None:
        claimed = AdditiveNoise(total, args.sensitivity).epsilon(args.delta).upper if args.delta else None
        if claimed is None:
            claimed = AdditiveNoise(total, args.sensitivity).pure_epsilon().upper
    scheduler = _connect(args.scheduler) if args.scheduler is not None else None
    try:
        result = _audit(audit, additive_pair(total, args.sensitivity), claimed, args, scheduler)
    finally:
        if scheduler is not None:
            scheduler.close()
    ok = result.verdict != "violation"
    record = {"command": "mechanism", "noise": repr(total), "claimed_epsilon": claimed, "result": result}
    return _emit(args, record, result.summary(), ok)


def _connect(address: str) -> Any:
    """A Dask client of ``--scheduler``, or one line within :data:`CONNECT_TIMEOUT` seconds."""
    from learners.experiment import connect

    return connect(address, "--scheduler", CONNECT_TIMEOUT)


def _audit(audit: Any, pair: Any, claimed: float, args: argparse.Namespace, scheduler: Any) -> Any:
    return audit(
        pair,
        args.delta,
        claimed,
        samples=args.samples,
        confidence=args.confidence,
        seed=args.seed,
        scheduler=scheduler,
        max_draws=args.max_draws,
    )


def _cmd_broken(args: argparse.Namespace) -> int:
    from verification.broken import run_catalogue
    from verification.federated import run_checks

    rows = run_catalogue(
        samples=args.samples, seed=args.seed, federated=True, names=args.names, max_draws=args.max_draws
    )
    # The checks are no entries: --entry asks for entries only.
    checks = run_checks(seed=args.seed) if args.names is None else []
    ok = all(row.as_expected for row in rows) and all(check.as_expected for check in checks)
    text = "\n".join(row.summary() for row in rows)
    if checks:
        text += "\n\nfederated LinUCB, not sampled (spec federated-lcb.md §7.5 A2, A4, A5):\n"
        text += "\n".join(check.summary() for check in checks)
    every = "every" if args.names is None else "every named"
    verdict = f"{every} broken mechanism flagged, no correct one" if ok else "UNEXPECTED verdicts above"
    text += "\n\n" + verdict
    return _emit(args, {"command": "broken", "rows": list(rows), "checks": list(checks)}, text, ok)


def _cmd_proofs(args: argparse.Namespace) -> int:
    from verification.symbolic import prove_all

    proofs = prove_all()
    ok = all(p.holds for p in proofs.values())
    text = "\n\n".join(
        f"{name}: {'holds' if p.holds else 'DOES NOT HOLD'}\n{p.derivation}" for name, p in proofs.items()
    )
    record = {
        "command": "proofs",
        "proofs": {
            name: {"statement": p.statement, "holds": p.holds, "derivation": p.derivation}
            for name, p in proofs.items()
        },
    }
    return _emit(args, record, text, ok)


_WHY_SAMPLES = {
    MAX_SAMPLER_SAMPLES: "the goodness-of-fit test holds every draw in memory",
    MAX_AUDIT_SAMPLES: "about a day of one machine's work; spread larger audits over --scheduler",
}
_unit_or_zero = checked(v.interval, low=0.0, high=1.0, low_open=False, high_open=True)
_claim = checked(v.nonnegative_or_inf)
_seed = checked(v.seed, integer=True)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dp-audit", description="Check samplers, bounds and mechanisms against what samples show."
    )
    parser.add_version()
    sub = parser.add_subparsers(dest="command", required=True)

    def seeded(cmd: argparse.ArgumentParser, samples: int, most: int, budget: int | None = None) -> None:
        count = checked(v.integer, integer=True, minimum=100, maximum=most, why=_WHY_SAMPLES[most])
        cmd.add_argument("--samples", type=count, default=samples, help=f"samples (default {samples})")
        cmd.add_argument("--seed", type=_seed, default=0, help="seed of the random streams (default 0)")
        if budget is not None:
            cmd.add_argument(
                "--max-draws",
                type=checked(v.integer, integer=True, minimum=1),
                default=budget,
                help="refuse, before drawing, work of more outputs drawn in all (an audit: both sides, "
                "the pilots, every entry; the sampler test: the samples it holds, an exact draw "
                f"counted {EXACT_DRAW_WEIGHT} times; default {budget:.0e}, some seconds of one core)",
            )
        add_json(cmd)

    sampler = sub.add_parser("sampler", help="goodness of fit of a sampler against its exact PMF")
    add_noise_arguments(sampler)
    sampler.add_argument("--alpha", type=unit_float, default=1e-3, help="false-alarm level (default 1e-3)")
    sampler.add_argument(
        "--exact", action="store_true", help="check the exact sampler (integer arithmetic), not the fast one"
    )
    seeded(sampler, 1_000_000, MAX_SAMPLER_SAMPLES, DEFAULT_SAMPLER_DRAWS)
    sampler.set_defaults(func=_cmd_sampler)

    bounds = sub.add_parser("bounds", help="published closed forms against the exact values")
    bounds.add_argument("--noise", choices=(*_BOUND_FAMILIES, "all"), default="all", help="which bounds")
    bounds.add_argument("--quick", action="store_true", help="a small grid")
    bounds.add_argument(
        "--dps",
        type=checked(v.dps, integer=True, maximum=MAX_BOUNDS_DPS, why=_WHY_BOUNDS_DPS),
        default=DEFAULT_DPS,
        help=f"working precision (default {DEFAULT_DPS}, at most {MAX_BOUNDS_DPS})",
    )
    add_no_progress(bounds)
    add_json(bounds)
    bounds.set_defaults(func=_cmd_bounds)

    mech = sub.add_parser("mechanism", help="empirical ε lower bound of additive noise versus a claim")
    add_noise_arguments(mech)
    mech.add_argument(
        "--sensitivity",
        type=checked(v.integer, integer=True, minimum=1, maximum=MAX_LATTICE_SHIFT),
        default=1,
        help="integer sensitivity Δ (default 1)",
    )
    mech.add_argument("--claimed-epsilon", type=_claim, help="the claim (default: the exact ε)")
    mech.add_argument("--delta", type=_unit_or_zero, default=0.0, help="δ of the claim (default 0)")
    mech.add_argument("--confidence", type=unit_float, default=0.95, help="confidence (default 0.95)")
    mech.add_argument("--scheduler", help="a Dask scheduler address to run the sampling on")
    seeded(mech, 1_000_000, MAX_AUDIT_SAMPLES, DEFAULT_MAX_DRAWS)
    mech.set_defaults(func=_cmd_mechanism)

    broken = sub.add_parser("broken", help="run the catalogue of broken mechanisms")
    broken.add_argument(
        "--entry",
        dest="names",
        action="append",
        metavar="NAME",
        help="audit only this entry (repeatable; e.g. ldp-linucb-code-sigma), with its seed of the whole run",
    )
    seeded(broken, 1_000_000, MAX_AUDIT_SAMPLES, DEFAULT_MAX_DRAWS)
    broken.set_defaults(func=_cmd_broken)

    proofs = sub.add_parser("proofs", help="the sympy proofs the accounting relies on")
    add_json(proofs)
    proofs.set_defaults(func=_cmd_proofs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser(), argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
