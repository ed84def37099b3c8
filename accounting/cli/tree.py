"""``dp-account tree``: the tree release of federated LinUCB (:mod:`accounting.tree`; Zhou &
Chowdhury, ICLR 2024, Sections 4 and 5.1).

With ``--sigma`` it prints the certified δ(ε) or ε(δ), or checks a claim ``(ε, δ)`` given whole
(:func:`accounting.claims.check_claim`; a claim missed is an answer, status 0, ``"meets": false``);
with ``--calibrate`` it prints the least σ0 beside Theorem 5.1's and the authors' code's, each with
its δ(ε) and whether it meets the claim. Calibration is an option, not a nested subcommand: one
level of subcommands as everywhere else, and no option of ``tree`` silently reset by the defaults
of a sub-subcommand's parser.
"""

from __future__ import annotations

import argparse

from accounting import tree
from accounting import validate as v
from accounting.claims import ClaimCheck, check_claim
from accounting.cli.framework import (
    Subcommands,
    add_json,
    add_no_progress,
    certified_text,
    checked,
    emit,
    inputs,
    nonnegative_float,
    positive_float,
    progress,
    unit_float,
)
from accounting.cli.noise_options import MAX_SIGNAL_TO_NOISE
from accounting.errors import ParameterError

#: The target ε that ``tree --calibrate`` searches σ0 for: the search steps ln σ0, and far out
#: (ε = 1e-100 or 1e-200 at δ = 1e-300) it took about 25 s; within these limits a few seconds.
MIN_TREE_EPSILON = 1e-30
MAX_TREE_EPSILON = 1e30
_TREE_EPSILON_WHY = (
    "the search for the least sigma0 slows far out: about 25 s at epsilon = 1e-100 and delta = 1e-300"
)

#: Where each σ0 of ``tree --calibrate`` comes from (the closed forms take ``L = 1``, whatever
#: ``--sensitivity`` is: they are what the paper and its code set, evaluated under the relation asked).
_TREE_SIGMAS = {
    "exact": "the least sigma0 (accounting.tree.calibrate_sigma)",
    "paper": "Theorem 5.1: sigma0^2 = 8 kappa (log(2/delta) + epsilon) / epsilon^2, L = 1",
    "code": "the authors' code: sigma0 = sqrt(kappa (log(1/delta) + epsilon)) / epsilon, L = 1",
}


#: ``--horizon`` and ``--batch``: counts of rounds, at most :data:`accounting.validate.MAX_COUNT`
#: (10^18) as every count of the command lines. The accounting itself is exact integer arithmetic
#: for any ``K <= 2^62`` (only ``κ = ⌊log2 K⌋ + 1`` enters it), but a horizon beyond 10^18 is no run
#: of a learner (whose rounds are int64) and leaves the int64 range of the JSON record near 9.2e18.
_tree_int = checked(v.count, integer=True)


def _verdict_text(check: ClaimCheck, epsilon: float, delta: float) -> str:
    if check.verdict == "meets":
        return f"meets the claim: delta({epsilon:g}) <= {delta:g}"
    if check.verdict == "misses":
        return f"MISSES the claim: delta({epsilon:g}) > {delta:g}"
    return (
        f"NOT CERTIFIED: delta({epsilon:g}) lies in [{check.delta_lower!r}, {check.delta!r}], "
        f"which holds {delta:g}"
    )


def tree_sensitivities(name: str) -> tree.Sensitivities:
    """``--sensitivity replace-one|add-remove`` as :mod:`accounting.tree`'s sensitivities."""
    return tree.ADD_REMOVE if name == "add-remove" else tree.REPLACE_ONE


def _sensitivity_name(text: str) -> str:
    """``--sensitivity``: the old spelling ``paper`` is ``add-remove`` (with a note)."""
    return v.spelling("--sensitivity", text, tree.OLD_SENSITIVITIES)


def _tree_shape(args: argparse.Namespace) -> None:
    """``--batch`` at most ``--horizon``, and ``K = ⌊T/B⌋`` at most :data:`accounting.tree.MAX_SYNCS`."""
    if args.batch > args.horizon:
        raise ParameterError("--batch", v.short(args.batch), f"an integer in [1, --horizon = {args.horizon}]")
    if args.horizon // args.batch > tree.MAX_SYNCS:
        raise ParameterError(
            "--horizon",
            v.short(args.horizon),
            f"at most 2^62 x --batch (K = horizon/batch synchronisations <= 2^62 = {tree.MAX_SYNCS}, "
            "a tree of at most 63 levels)",
        )


def _tree_sigma(args: argparse.Namespace, sens: tree.Sensitivities) -> float:
    """``--sigma`` at least the largest sensitivity / :data:`MAX_SIGNAL_TO_NOISE` (as ``epsilon``'s)."""
    largest = max(sens.bias, sens.covariance)
    sigma: float = args.sigma
    if not largest / sigma <= MAX_SIGNAL_TO_NOISE:
        raise ParameterError(
            "--sigma",
            sigma,
            f"at least {largest / MAX_SIGNAL_TO_NOISE:g} = {largest:g} / {MAX_SIGNAL_TO_NOISE:g} with "
            f"--sensitivity {sens.name} (the privacy "
            "loss grows with sensitivity/sigma and its square, which leave the float range beyond)",
        )
    return sigma


def _tree_options(args: argparse.Namespace) -> tuple[tree.Sensitivities, float | None]:
    """Every check of ``tree`` before any accounting: the mode's options present and no other."""
    sens = tree_sensitivities(args.sensitivity)
    _tree_shape(args)
    if args.calibrate:
        if args.sigma is not None:
            raise ParameterError("--sigma", args.sigma, "not given with --calibrate (which finds sigma0)")
        for option in ("epsilon", "delta"):
            if getattr(args, option) is None:
                raise ParameterError(f"--{option}", None, "a value: --calibrate needs --epsilon and --delta")
        v.interval(
            "--epsilon",
            args.epsilon,
            MIN_TREE_EPSILON,
            MAX_TREE_EPSILON,
            low_open=False,
            why=_TREE_EPSILON_WHY,
        )
        return sens, None
    if args.sigma is None:
        raise ParameterError("--sigma", None, "a value: the node noise sigma0 (or --calibrate to find it)")
    if args.epsilon is None and args.delta is None:
        raise ParameterError(
            "--epsilon",
            None,
            "a value: --epsilon E prints delta(E), --delta D prints epsilon(D), both check the claim (E, D)",
        )
    return sens, _tree_sigma(args, sens)


def _tree_head(release: tree.Tree) -> dict[str, object]:
    s = release.sensitivities
    return {
        "horizon": release.horizon,
        "batch": release.batch,
        "syncs": release.syncs,
        "kappa": release.kappa,
        "sensitivity": {"name": s.name, "bias": s.bias, "covariance": s.covariance},
        "neighbouring": s.neighbouring.value,
    }


def _tree_head_text(release: tree.Tree) -> list[str]:
    s = release.sensitivities
    if s is tree.ADD_REMOVE:
        why = "the paper's L = 1, valid under add-remove"
    else:
        why = "sqrt 2 rounded up; replace-one, the paper's relation"
    return [
        f"tree: T = {release.horizon}, B = {release.batch}, K = floor(T/B) = {release.syncs} "
        f"synchronisations, kappa = {release.kappa} levels",
        f"sensitivity {s.name}: {s.bias!r} (bias stream), {s.covariance!r} (covariance stream); {why}",
    ]


def _cmd_tree(args: argparse.Namespace) -> int:
    sens, sigma = _tree_options(args)
    if sigma is None:
        return _tree_calibrate(args, sens)
    release = tree.Tree(sigma, args.horizon, args.batch, sens)
    record: dict[str, object] = (
        {
            "command": "tree",
            "mode": "account",
            "inputs": inputs(args, ("sigma", "horizon", "batch", "sensitivity", "epsilon", "delta")),
        }
        | _tree_head(release)
        | {"sigma": sigma, "mu": release.mu()}
    )
    lines = [
        *_tree_head_text(release),
        f"sigma0 = {sigma!r}: the release is mu-GDP with mu = {release.mu()!r}",
    ]
    with progress(args, "accounting"):
        if args.epsilon is not None and args.delta is not None:
            check = check_claim(release, args.epsilon, args.delta)
            record |= {
                "epsilon": args.epsilon,
                "delta": check.delta,
                "delta_lower": check.delta_lower,
                "claim": {"epsilon": args.epsilon, "delta": args.delta},
                "meets": check.meets,
                "verdict": check.verdict,
            }
            lines += [
                f"delta = {check.delta!r} at epsilon = {args.epsilon:g} (certified; rounded up)",
                f"claim (epsilon, delta) = ({args.epsilon:g}, {args.delta:g}): "
                + _verdict_text(check, args.epsilon, args.delta),
            ]
            return emit(args, record, "\n".join(lines))
        asked, given = ("delta", "epsilon") if args.epsilon is not None else ("epsilon", "delta")
        at = getattr(args, given)
        answer = release.delta(at) if asked == "delta" else release.epsilon(at)
    record |= {
        given: at,
        asked: answer.upper,
        f"{asked}_lower": answer.lower,
        "route": answer.route,
        "claim": None,
        "meets": None,
        "verdict": None,
    }
    lines.append(f"{asked} = {certified_text(asked, answer)} at {given} = {at:g} (certified; rounded up)")
    return emit(args, record, "\n".join(lines))


def _tree_calibrate(args: argparse.Namespace, sens: tree.Sensitivities) -> int:
    eps, delta = args.epsilon, args.delta
    with progress(args, "calibrating sigma0 (noise levels accounted)"):
        cal = tree.calibrate_sigma(eps, delta, args.horizon, args.batch, sens)
    kappa = tree.levels(args.horizon // args.batch)
    sigmas = {
        "exact": cal.value,
        "paper": tree.paper_sigma(eps, delta, kappa),
        "code": tree.code_sigma(eps, delta, kappa),
    }
    rows: dict[str, dict[str, object]] = {}
    for name, sigma in sigmas.items():
        release = tree.Tree(sigma, args.horizon, args.batch, sens)
        check = check_claim(release, eps, delta)
        rows[name] = {
            "sigma": sigma,
            "mu": release.mu(),
            "delta": check.delta,
            "delta_lower": check.delta_lower,
            "meets": check.meets,
            "verdict": check.verdict,
            "source": _TREE_SIGMAS[name],
        }
    release = tree.Tree(cal.value, args.horizon, args.batch, sens)
    record: dict[str, object] = (
        {
            "command": "tree",
            "mode": "calibrate",
            "inputs": inputs(args, ("horizon", "batch", "sensitivity", "epsilon", "delta")),
        }
        | _tree_head(release)
        | {
            "claim": {"epsilon": eps, "delta": delta},
            "sigma": cal.value,
            "epsilon_certified": cal.epsilon.upper,
            "sigmas": rows,
        }
    )
    verdicts = {"meets": "meets", "misses": "MISSES", "undecided": "NOT CERTIFIED"}
    width = max(len(repr(r["sigma"])) for r in rows.values())
    lines = [
        *_tree_head_text(release),
        f"least sigma0 = {cal.value!r} meeting (epsilon, delta) = ({eps:g}, {delta:g}) (rounded up)",
        f"its certified epsilon at delta = {delta:g}: {cal.epsilon.upper!r} <= {eps:g}",
        "",
        f"{'sigma0 from':<11}  {'sigma0':>{width}}  {'mu':>22}  {f'delta({eps:g})':>24}  claim",
    ]
    for name, row in rows.items():
        lines.append(
            f"{name:<11}  {row['sigma']!r:>{width}}  {row['mu']!r:>22}  {row['delta']!r:>24}  "
            f"{verdicts[str(row['verdict'])]}"
        )
    lines += ["", *(f"{name}: {source}" for name, source in _TREE_SIGMAS.items())]
    return emit(args, record, "\n".join(lines))


def add_parser(sub: Subcommands) -> None:
    """The parser of ``tree``."""
    tr = sub.add_parser(
        "tree",
        help="the tree release of federated LinUCB (Gaussian p-sums): certified delta(E), epsilon(D), "
        "a claim checked, or the least sigma0 (--calibrate)",
    )
    tr.add_argument("--sigma", type=positive_float, help="sigma0, the noise of each released node")
    tr.add_argument(
        "--horizon", type=_tree_int, required=True, help="T, rounds of each silo: an integer in [1, 10^18]"
    )
    tr.add_argument(
        "--batch",
        type=_tree_int,
        required=True,
        help="B, rounds between synchronisations: an integer in [1, --horizon]",
    )
    tr.add_argument(
        "--sensitivity",
        type=_sensitivity_name,
        choices=("replace-one", "add-remove"),
        default="replace-one",
        help="replace-one (default: 2 for the bias stream, sqrt 2 for the covariance stream) or add-remove "
        "(the paper's L = 1 for both; 'paper' is its old spelling)",
    )
    tr.add_argument("--epsilon", type=nonnegative_float, help="print delta(E); with --delta, check the claim")
    tr.add_argument("--delta", type=unit_float, help="print epsilon(D); with --epsilon, check the claim")
    tr.add_argument(
        "--calibrate",
        action="store_true",
        help="the least sigma0 meeting (--epsilon, --delta), beside the paper's and the authors' code's",
    )
    add_json(tr)
    add_no_progress(tr)
    tr.set_defaults(func=_cmd_tree)
