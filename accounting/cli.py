"""The ``dp-account`` command line (also ``python -m accounting``).

Subcommands ``epsilon``, ``delta``, ``rdp``, ``calibrate``, ``curve``, ``protocol``, ``shuffle``,
``shuffle-protocol``, ``ledger``, ``tree`` and ``demo``, each with ``--json``. Invalid input exits with
status 2 and a one-line message naming the bad option. The subcommands that may account for long
(``epsilon``, ``delta``, ``rdp``, ``calibrate``, ``curve``, ``ledger``, ``tree``) show a progress bar
on standard error when it is a terminal (:func:`accounting.progress.bar`), never with
``--no-progress``.

``dp-account tree`` accounts the tree release of federated LinUCB (:mod:`accounting.tree`; spec
``federated-lcb.md`` §4, §5.1): with ``--sigma`` it prints the certified δ(ε) or ε(δ), or checks a
claim ``(ε, δ)`` given whole (a claim missed is an answer, status 0, ``"meets": false``); with
``--calibrate`` it prints the least σ0 beside Theorem 5.1's and the authors' code's, each with its
δ(ε) and whether it meets the claim. Calibration is an option, not a nested subcommand: one level
of subcommands as everywhere else, and no option of ``tree`` silently reset by the defaults of a
sub-subcommand's parser.

``dp-account curve`` tabulates and draws what users otherwise script: the certified ε at a δ
against the noise parameter (``--sigma-range LO HI``, ``--scale-range``, ``--variance-range``, ...)
or the compositions (``--compositions-range``), or the certified δ against ε (``--epsilon-range``),
with the noise options of ``epsilon``; ``--out PREFIX`` writes ``PREFIX.csv`` and the figure.

This module also holds what the three command lines (``dp-account``, ``dp-audit``, ``dp-regret``)
share — the contract of :func:`run`:

* every option is checked by the validators of :mod:`accounting.validate` (:func:`checked`), so a
  bad value gets the same wording as in the library, and a count above its limit is refused before
  any work with the limit and the reason;
* invalid input exits with status 2 and one line on stderr naming the option, never a traceback:
  library errors, unreadable files, and — as a last resort — arithmetic that leaves the float range
  (the message then lists the options given); an unexpected bug is one line with status 1
  (``DPCERT_DEBUG=1`` shows its traceback);
* ``--json`` prints strict JSON (:func:`json_text`, ``allow_nan=False``): an infinite value is the
  string ``"inf"`` (or ``"-inf"``), the one convention of the three command lines;
* a closed pipe (``dp-account ... | head``) ends quietly; Ctrl-C exits with status 130;
* ``--version`` prints the package version.

``dp-account shuffle-protocol`` prints the parameters of a shuffle summation protocol and the cited
theorem's guarantee; with ``--exact`` also the certified exact ε(δ) of those parameters and the least
binomial noise meeting the target by exact accounting, with the bits per user it saves
(:mod:`accounting.shuffle`). ``--noise binomial`` takes ``--probability p`` (default 1/2, the centered
binomial; otherwise ``Binomial(trials, p)``, accounted for both shifts).

``dp-account demo`` prints, for a few target ε at one δ, the exact ε(δ) of discrete noise
sized by the classic recipes next to what the best published closed form claims for the
same noise, so one sees how much exact accounting saves.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, NoReturn, TypeVar

import mpmath
import numpy as np
from mpmath import iv, mp

from accounting import answers, bounds, shuffle, storage, tree
from accounting import validate as v
from accounting.accountant import PUBLISHED, ROUTES, Accountant, EventLike, mechanism_to_dict, noise_to_dict
from accounting.calibration import (
    FAMILIES,
    SHUFFLE_SUM_PROTOCOLS,
    Calibration,
    ShuffleSumParameters,
    calibrate,
    shuffle_sum_parameters,
)
from accounting.certified import DEFAULT_DPS, Enclosure, float_down, float_up, precision, upper
from accounting.conversion import rdp_to_dp, zcdp_to_dp_cks
from accounting.divergence import MAX_POINTS
from accounting.errors import (
    AccountingError,
    ParameterError,
    ParameterTypeError,
    UnsupportedError,
    UnsupportedEventError,
)
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    Binomial,
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
    Polya,
    Skellam,
    SumOfDiscreteGaussians,
)
from accounting.papers.distributed_dp_mab import Variant, protocol_parameters
from accounting.progress import Progress, bar, reporting

T = TypeVar("T")

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


def demo_rows(
    epsilons: Sequence[float], delta: float, users: int = 10, dps: int = DEFAULT_DPS
) -> list[DemoRow]:
    """The rows of ``dp-account demo`` (sensitivity 1).

    Noise is sized by the classic recipes for a target ε: ``b = 1/ε`` for the discrete
    Laplace (Fact 3) and the Gaussian ``σ = sqrt(2 ln(1.25/δ))/ε`` (Dwork–Roth A.1, used here
    for every ε only as a size) for the Skellam variance, the discrete Gaussian and, split
    over ``users`` shares, the sum of discrete Gaussians.
    """
    n = v.count("users", users)
    d = v.open_unit("delta", delta)
    rows: list[DemoRow] = []
    for eps in epsilons:
        try:
            rows += _demo_rows_at(v.positive("epsilons", eps), d, n, dps)
        except AccountingError as err:
            # The recipes size noise from ε: an ε far from 1 sizes noise no route can account.
            valid = f"a target ε whose recipe noise can be accounted ({err})"
            raise ParameterError("epsilons", eps, valid) from None
    return rows


def _demo_rows_at(eps: float, delta: float, users: int, dps: int) -> list[DemoRow]:
    rows: list[DemoRow] = []
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / eps
    variance = sigma * sigma  # inf (refused by Skellam) where ** would raise OverflowError
    share = sigma / math.sqrt(users)
    if share >= 0.5:
        kls_name = "KLS21 Prop 13 + Lemma 10"
        kls_rho = bounds.sum_discrete_gaussians_rho_kls(share, users)
    else:  # KLS needs σ >= 1/2: fall back on one share's CKS bound (post-processing)
        kls_name = "CKS20, one share + Lemma 10"
        kls_rho = bounds.discrete_gaussian_rho_cks(share)
    skellam_curve = ((a, bounds.skellam_rdp_akl(a, variance)) for a in _INTEGER_ORDERS)
    cases: list[tuple[str, Mechanism, str, float]] = [
        (
            f"DiscreteLaplace(scale={1 / eps:.4g})",
            AdditiveNoise(DiscreteLaplace(1 / eps)),
            "pure ε (Fact 3)",
            bounds.discrete_laplace_pure_epsilon(1 / eps),
        ),
        (
            f"Skellam(variance={variance:.4g})",
            AdditiveNoise(Skellam(variance)),
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
        if not math.isfinite(exact.upper):
            raise AccountingError(f"the exact ε of {name} is not finite")
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
        print(json_text({"delta": args.delta, "rows": table}))
    else:
        _print_table(rows, args.delta)
    return 0


_NOISES = ("gaussian", "laplace", "discrete-laplace", "discrete-gaussian", "skellam", "polya", "binomial")


#: The option giving each noise's parameter (``--noise KIND`` takes this one and no other).
NOISE_PARAMETERS = {
    "gaussian": "sigma",
    "laplace": "scale",
    "discrete-laplace": "scale",
    "discrete-gaussian": "sigma",
    "skellam": "variance",
    "polya": "beta",
    "binomial": "trials",
}


def noise_from_arguments(args: argparse.Namespace) -> NoiseDistribution:
    """The noise (each user's share when ``--users`` > 1) named by the options.

    Exactly the option of :data:`NOISE_PARAMETERS` for ``--noise`` must be given: another noise's
    parameter (``--sigma`` with ``--noise skellam``) is an error, not silently ignored.
    """
    kind = args.noise
    wanted = NOISE_PARAMETERS[kind]
    for option in sorted(set(NOISE_PARAMETERS.values()) - {wanted}):
        if getattr(args, option, None) is not None:
            raise ParameterError(
                f"--{option}",
                getattr(args, option),
                f"not given with --noise {kind}, whose parameter is --{wanted} (--{option} belongs to "
                + ", ".join(f"--noise {k}" for k, o in NOISE_PARAMETERS.items() if o == option)
                + ")",
            )

    probability = getattr(args, "probability", None)
    if probability is not None and kind != "binomial":
        raise ParameterError(
            "--probability", probability, f"not given with --noise {kind} (it belongs to --noise binomial)"
        )

    def need(option: str) -> float:
        value = getattr(args, option)
        if value is None:
            raise ParameterError(f"--{option}", None, f"a value: --noise {kind} needs --{option}")
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
        # p = 1/2 (the default) is the centered binomial: a translation changes no divergence.
        if probability is None or probability == 0.5:
            return CenteredBinomial(int(need("trials")))
        return Binomial(int(need("trials")), probability)
    raise ParameterError("--noise", kind, "one of " + ", ".join(_NOISES))  # pragma: no cover


def lattice_sensitivity(noise: NoiseDistribution, sensitivity: float) -> float:
    """``--sensitivity`` checked against the noise: at most :data:`MAX_LATTICE_SHIFT` for lattice noise."""
    if isinstance(noise, LatticeNoise) and sensitivity > MAX_LATTICE_SHIFT:
        raise ParameterError(
            "--sensitivity",
            sensitivity,
            f"at most {MAX_LATTICE_SHIFT} for lattice noise (the exact sums over the lattice shift by the "
            "sensitivity point by point, and no sum holds more points than that)",
        )
    return sensitivity


def lattice_width(args: argparse.Namespace, noise: NoiseDistribution) -> None:
    """Refuse lattice noise wider than :data:`MAX_LATTICE_VARIANCE`, naming the noise option."""
    if not isinstance(noise, LatticeNoise):
        return
    if isinstance(noise, CenteredBinomial | Binomial) and noise.trials > MAX_BINOMIAL_TRIALS:
        total = " in total" if getattr(args, "users", 1) > 1 else ""
        raise ParameterError(
            "--trials",
            args.trials,
            f"at most {MAX_BINOMIAL_TRIALS:.0e} binomial trials{total} (this is {noise.trials}: the command "
            "line's limit; the library's Binomial and dp-account shuffle-protocol --exact account wider "
            "binomial noise, up to a window of 2^18 lattice points)",
        )
    variance = noise.variance()
    if not variance <= MAX_LATTICE_VARIANCE:
        parameter = NOISE_PARAMETERS[args.noise]
        total = " in total" if getattr(args, "users", 1) > 1 else ""
        raise ParameterError(
            f"--{parameter}",
            getattr(args, parameter),
            f"lattice noise of variance at most {MAX_LATTICE_VARIANCE:g} (this one has {variance:.3g}"
            f"{total}: its support lies beyond the 2^53 integers a float holds exactly, where the exact "
            "routes' tail searches do not finish)",
        )


def signal_to_noise(args: argparse.Namespace, noise: NoiseDistribution, sensitivity: float) -> None:
    """Refuse ``sensitivity / (σ or scale)`` above :data:`MAX_SIGNAL_TO_NOISE`, naming the noise option."""
    width: float | None = None
    if isinstance(noise, Gaussian | DiscreteGaussian):
        width = float(noise.sigma)
    elif isinstance(noise, Laplace | DiscreteLaplace):
        width = float(noise.scale)
    if width is not None and not sensitivity / width <= MAX_SIGNAL_TO_NOISE:
        parameter = NOISE_PARAMETERS[args.noise]
        raise ParameterError(
            f"--{parameter}",
            getattr(args, parameter),
            f"at least --sensitivity / {MAX_SIGNAL_TO_NOISE:g} (the privacy loss grows with "
            f"sensitivity/{parameter} and its square, which leave the float range beyond)",
        )


def _mechanism(args: argparse.Namespace) -> Mechanism:
    share = noise_from_arguments(args)
    lattice_sensitivity(share, args.sensitivity)
    lattice_width(args, share)
    signal_to_noise(args, share, args.sensitivity)
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
        mech = DistributedSum(share, args.users, args.sensitivity)
        lattice_width(args, mech.total_noise)
        return mech
    return AdditiveNoise(share, args.sensitivity)


def _describe(mech: Mechanism) -> dict[str, object]:
    try:
        described: object = mechanism_to_dict(mech)
    except ParameterError:
        # Noise the ledger format does not hold (Binomial at p != 1/2): described by its text.
        if not isinstance(mech, AdditiveNoise):
            raise
        described = {
            "type": "AdditiveNoise",
            "noise": noise_text(mech.noise),
            "sensitivity": mech.sensitivity,
        }
    out: dict[str, object] = {"mechanism": described}
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
    "probability",
    "users",
    "sensitivity",
    "compositions",
)


def _emit(args: argparse.Namespace, record: dict[str, object], text: str) -> int:
    print(json_text(record) if args.json else text)
    return 0


def _progress(args: argparse.Namespace, description: str) -> AbstractContextManager[Progress | None]:
    """The progress bar of a long answer (:func:`accounting.progress.bar`): on standard error, so
    never mixed into the answer (``--json`` included), shown only when standard error is a
    terminal, and never with ``--no-progress``."""
    return bar(description, enabled=not getattr(args, "no_progress", False))


def _add_no_progress(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (one is shown on standard error only when it is a terminal)",
    )


def _certified(asked: str, answer: Enclosure) -> str:
    """The text of a certified answer: its upper end, or ``inf`` when it is unbounded.

    An upper end that is infinite while the lower end is finite is no answer (the computation
    could not bound it, or the value exceeds the float range): it is refused, never printed.
    """
    if math.isfinite(answer.upper):
        return repr(answer.upper)
    if answer.lo == mpmath.inf:
        return f"inf (unbounded: no finite {asked} holds)"
    raise AccountingError(
        f"no finite certified {asked} for these options: the certified enclosure is "
        f"[{answer.lower!r}, inf] (the value exceeds the float range, or the route could not bound "
        "it; try another --route)"
    )


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


def exact_compositions(args: argparse.Namespace, closed_form: bool) -> None:
    """Refuse more than :data:`MAX_PLD_COMPOSITIONS` releases on the exact PLD route (``auto``, ``pld``),
    unless their composition has a closed form: the other routes compose any count at once."""
    if args.compositions > MAX_PLD_COMPOSITIONS and args.route in ("auto", "pld") and not closed_form:
        raise ParameterError(
            "--compositions",
            args.compositions,
            f"at most {MAX_PLD_COMPOSITIONS:.0e} with --route {args.route} for this noise (the exact PLD "
            "composition squares a grid once per binary digit of the count, about a second each, and the "
            "auto route tries it first); --route rdp, zcdp, pure or published:<bound> composes any count",
        )


def _ledger(args: argparse.Namespace, mech: Mechanism) -> Accountant:
    return Accountant(_relation(args), dps=args.dps).compose(_event(args, mech), args.compositions)


def _answer(args: argparse.Namespace, asked: str, given: str) -> int:
    """``epsilon`` (asked) at a ``delta`` (given), or the other way round."""
    mech = _mechanism(args)
    plain_gaussian = isinstance(mech, AdditiveNoise) and isinstance(mech.noise, Gaussian)
    exact_compositions(args, plain_gaussian and getattr(args, "sampling_rate", None) is None)
    acc = _ledger(args, mech)
    at = getattr(args, given)
    with _progress(args, "accounting"):
        answer = acc.epsilon(at, args.route) if asked == "epsilon" else acc.delta(at, args.route)
    shown = _certified(asked, answer)
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
    text = f"{asked} = {shown} at {given} = {at:g} (route {answer.route}; rounded up)"
    return _emit(args, record, text + _total_line(mech))


def _cmd_epsilon(args: argparse.Namespace) -> int:
    return _answer(args, "epsilon", "delta")


def _cmd_delta(args: argparse.Namespace) -> int:
    return _answer(args, "delta", "epsilon")


def _cmd_rdp(args: argparse.Namespace) -> int:
    mech = _mechanism(args)
    if isinstance(noise_from_arguments(args), LatticeNoise):
        for a in args.alpha:
            if math.isfinite(a) and a > MAX_LATTICE_ORDER:
                raise ParameterError(
                    "--alpha",
                    a,
                    f"inf or an order at most {MAX_LATTICE_ORDER:g} for lattice noise (the exact Rényi sums' "
                    "windows grow with the order and leave the float range)",
                )
    acc = _ledger(args, mech)
    with _progress(args, "accounting"):
        values = {str(a): acc.rdp(a) for a in args.alpha}  # the ledger's one sum, rounded up
    shown = {a: _rdp_text(args, mech, float(a), x) for a, x in values.items()}
    record: dict[str, object] = {
        "command": "rdp",
        "inputs": _inputs(args, (*_NOISE_OPTIONS, "alpha")),
        "rdp": values,
        "dps": args.dps,
    } | _describe(mech)
    text = "\n".join(f"rdp({a}) = {x}" for a, x in shown.items())
    return _emit(args, record, text + _total_line(mech))


def _rdp_text(args: argparse.Namespace, mech: Mechanism, alpha: float, value: float) -> str:
    """One RDP value as text; an infinite one is shown only when the divergence is unbounded.

    The ledger's sum takes an order its exact sum refuses as ``inf`` (sound for optimising over
    orders, no answer for one asked order): the mechanism is asked again for the reason.
    """
    if math.isfinite(value):
        return repr(value)
    continuous = isinstance(noise_from_arguments(args), Gaussian | Laplace)  # finite at finite orders
    if math.isfinite(alpha) and continuous and isinstance(mech.under(_relation(args)), AdditiveNoise):
        raise ParameterError("--alpha", alpha, "an order at which the Rényi divergence fits the float range")
    if getattr(args, "sampling_rate", None) is None:
        try:
            exact = mech.under(_relation(args)).rdp(alpha, args.dps)
        except UnsupportedEventError:
            raise
        except UnsupportedError as err:
            valid = f"an order whose Rényi divergence can be certified ({err})"
            raise ParameterError("--alpha", alpha, valid) from None
        if exact.lo == mpmath.inf:
            return "inf (unbounded)"
    raise ParameterError("--alpha", alpha, "an order with a finite certified Rényi divergence")


def _total_line(mech: Mechanism) -> str:
    if isinstance(mech, DistributedSum):
        return f"\ntotal noise of {mech.users} users: {noise_text(mech.total_noise)}"
    return ""


def _decimal_up(x: float | int | Fraction | mpmath.mpf) -> float:
    """``x`` as the least float at or above it: a parameter shown as a decimal, toward more noise."""
    if isinstance(x, Fraction):
        f = float(x)
        return math.nextafter(f, math.inf) if Fraction(f) < x else f
    return float_up(x)


def noise_text(noise: NoiseDistribution) -> str:
    """A noise as its constructor with decimal parameters (no ``Fraction(...)`` or ``mpf`` reprs),
    each rounded toward more noise (at or above the exact value)."""
    up = _decimal_up
    if isinstance(noise, Gaussian | DiscreteGaussian):
        return f"{type(noise).__name__}(sigma={up(noise.sigma)!r})"
    if isinstance(noise, Laplace):
        return f"Laplace(scale={up(noise.scale)!r})"
    if isinstance(noise, DiscreteLaplace):
        if noise.decay is not None:
            return f"DiscreteLaplace(decay={up(noise.decay)!r})"
        return f"DiscreteLaplace(scale={up(noise.scale)!r})"
    if isinstance(noise, SumOfDiscreteGaussians):
        return f"the sum of {noise.count} DiscreteGaussian(sigma={up(noise.sigma)!r})"
    if isinstance(noise, Skellam) and noise.mu1 == noise.mu2:
        mean = f", mean={noise.offset}" if noise.offset else ""
        return f"Skellam(variance={up(2 * Fraction(noise.mu1))!r}{mean})"
    if isinstance(noise, Polya):
        return f"Polya(r={float(noise.r)!r}, beta={up(noise.beta)!r})"
    return repr(noise)


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
        per_user = _decimal_up(share.sigma)
    elif isinstance(share, Skellam):
        per_user = _decimal_up(Fraction(share.mu1) + Fraction(share.mu2))
    return NoiseAmount(unit, value, per_user, n, "total", "".join(_COMBINE[family]))


def _cmd_calibrate(args: argparse.Namespace) -> int:
    family = args.noise
    exact_compositions(args, family == "gaussian")
    if family.startswith("discrete") or family == "skellam":
        lattice_sensitivity(Skellam(1), args.sensitivity)  # any lattice noise: the same limit
    with _progress(args, "calibrating (noise levels accounted)"):
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
            max_evaluations=args.max_evaluations,
            time_limit=args.time_limit,
        )
    amount = noise_amount(cal)
    record: dict[str, object] = {
        "command": "calibrate",
        "neighbouring": _relation(args).value,
        "inputs": _inputs(
            args, ("noise", "epsilon", "delta", "sensitivity", "compositions", "users", "route")
        ),
        "parameter": amount.unit,
        amount.unit: amount.total,
        "noise": amount,
        "epsilon_certified": cal.epsilon.upper,
        "route": cal.route,
        "dps": args.dps,
        "converged": cal.converged,
        "not_met": cal.not_met,
        "evaluations": cal.evaluations,
    } | _describe(_family_mechanism(cal.mechanism))
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
        f"certified epsilon = {_certified('epsilon', cal.epsilon)} <= {args.epsilon:g} "
        f"at delta = {args.delta:g} "
        f"over {args.compositions} composition(s) (route {cal.route})"
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
    if args.exact:
        exact_record, exact_text = _shuffle_protocol_exact(args, par)
        record |= exact_record
        text += "\n" + exact_text
    elif args.probability is not None:
        raise ParameterError("--probability", args.probability, "given with --exact only")
    return _emit(args, record, text)


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
        first = f"  these parameters: not accounted here ({_one_line(str(err))})"
    else:
        shown = _certified("epsilon", value)
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
            f"epsilon = {_certified('epsilon', cal.epsilon)} ({how}; rounded up), error variance <= "
            f"{best.variance():.6g}",
            f"  bits per user: {best.bits} by exact accounting, {par.bits} by the cited constants "
            f"({cal.saved_bits} fewer: the cited constants need {par.bits / best.bits:.4g} times as many)",
        ]
    )
    return record, text


def _cmd_ledger(args: argparse.Namespace) -> int:
    """Re-account a saved ledger (``Accountant.to_json`` output, e.g. a dp-regret run's)."""
    if (args.delta is None) == (args.epsilon is None):
        raise ParameterError("--delta/--epsilon", None, "exactly one of --delta or --epsilon")
    try:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as err:
        raise ParameterError("FILE", args.file, f"a readable ledger file ({err.strerror or err})") from None
    except UnicodeDecodeError:
        raise ParameterError("FILE", args.file, "a UTF-8 JSON ledger file") from None
    try:
        acc = Accountant.from_json(text)
    except (AccountingError, ParameterTypeError) as err:
        raise AccountingError(f"{args.file}: not a valid ledger: {err}") from None
    asked, given = ("epsilon", "delta") if args.delta is not None else ("delta", "epsilon")
    at = getattr(args, given)
    with _progress(args, "accounting"):
        if asked == "epsilon":  # the answer a dp-regret run cached, or computed once and cached
            with answers.caching(False) if args.no_cache else contextlib.nullcontext():
                answer = answers.answer(answers.Question.of(acc, at, args.route))
        else:
            answer = acc.delta(at, args.route)
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
        f"{asked} = {_certified(asked, answer)} at {given} = {at:g} (route {answer.route}; rounded up) "
        f"for {len(acc.ledger)} event(s) under {acc.neighbouring.value}"
    )
    return _emit(args, record, text_out)


# -- dp-account tree ------------------------------------------------------------------------

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


@dataclass(frozen=True)
class ClaimCheck:
    """Whether a tree release meets a claim ``(ε, δ)``, certified both ways.

    ``delta`` is the certified upper end of ``δ(ε)``; ``verdict`` is ``"meets"`` when ``δ(ε) <= δ``
    is certified (by ``δ(ε)``'s upper end, or by ``ε(δ)``'s: ``ε(δ) <= ε`` implies it, ``δ(·)``
    being nonincreasing), ``"misses"`` when ``δ(ε) > δ`` is (by ``δ(ε)``'s lower end), and
    ``"undecided"`` when ``δ`` lies inside the enclosure of ``δ(ε)`` (then ``meets`` is false: a
    claim is met only when certified).
    """

    delta: float
    delta_lower: float
    verdict: str

    @property
    def meets(self) -> bool:
        return self.verdict == "meets"


def check_claim(release: tree.Tree, epsilon: float, delta: float) -> ClaimCheck:
    """:class:`ClaimCheck` of ``release`` against ``(epsilon, delta)``."""
    acc = release.accountant()
    at = acc.delta(epsilon)
    upper_end, lower_end = at.upper, at.lower
    if upper_end <= delta:
        return ClaimCheck(upper_end, lower_end, "meets")
    if at.lo > delta:
        return ClaimCheck(upper_end, lower_end, "misses")
    if acc.epsilon(delta).upper <= epsilon:
        # δ itself is then a certified upper end of δ(ε), below the one computed directly.
        return ClaimCheck(delta, lower_end, "meets")
    return ClaimCheck(upper_end, lower_end, "undecided")


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
    """``--sensitivity replace-one|paper`` as :mod:`accounting.tree`'s sensitivities."""
    return tree.PAPER if name == "paper" else tree.REPLACE_ONE


def _tree_shape(args: argparse.Namespace) -> None:
    """``--batch`` at most ``--horizon``, and ``K = ⌊T/B⌋`` at most :data:`accounting.tree.MAX_SYNCS`."""
    if args.batch > args.horizon:
        raise ParameterError(
            "--batch", v._short(args.batch), f"an integer in [1, --horizon = {args.horizon}]"
        )
    if args.horizon // args.batch > tree.MAX_SYNCS:
        raise ParameterError(
            "--horizon",
            v._short(args.horizon),
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
    if s is tree.PAPER:
        why = "L = 1, valid under add-remove"
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
            "inputs": _inputs(args, ("sigma", "horizon", "batch", "sensitivity", "epsilon", "delta")),
        }
        | _tree_head(release)
        | {"sigma": sigma, "mu": release.mu()}
    )
    lines = [
        *_tree_head_text(release),
        f"sigma0 = {sigma!r}: the release is mu-GDP with mu = {release.mu()!r}",
    ]
    with _progress(args, "accounting"):
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
            return _emit(args, record, "\n".join(lines))
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
    lines.append(f"{asked} = {_certified(asked, answer)} at {given} = {at:g} (certified; rounded up)")
    return _emit(args, record, "\n".join(lines))


def _tree_calibrate(args: argparse.Namespace, sens: tree.Sensitivities) -> int:
    eps, delta = args.epsilon, args.delta
    with _progress(args, "calibrating sigma0 (noise levels accounted)"):
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
            "inputs": _inputs(args, ("horizon", "batch", "sensitivity", "epsilon", "delta")),
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
    return _emit(args, record, "\n".join(lines))


# -- dp-account curve -----------------------------------------------------------------------

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


def curve_grid(lo: float, hi: float, points: int, spacing: str, integer: bool) -> tuple[float | int, ...]:
    """``points`` values from ``lo`` to ``hi`` (both included), evenly in ``ln x`` (``log``) or in
    ``x`` (``linear``); integers are rounded and repeated ones dropped (so fewer may remain)."""
    xs = np.geomspace(lo, hi, points) if spacing == "log" else np.linspace(lo, hi, points)
    values = [float(x) for x in xs]
    values[0], values[-1] = float(lo), float(hi)  # the ends exactly as given
    if integer:
        return tuple(sorted({round(x) for x in values}))
    return tuple(dict.fromkeys(values))


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
            mech = _mechanism(point)
            plain = isinstance(mech, AdditiveNoise) and isinstance(mech.noise, Gaussian)
            exact_compositions(point, plain and getattr(point, "sampling_rate", None) is None)
        except ParameterError as err:
            raise _renamed(err, old, spec.option, [spec.points[0], spec.points[-1]]) from None


def _curve_point(args: argparse.Namespace, spec: CurveSpec, x: float | int) -> Enclosure:
    """The certified answer at one point (its upper end is what the curve shows)."""
    point = _at_point(args, spec, x)
    try:
        acc = _ledger(point, _mechanism(point))
        with reporting(None):  # the bar counts points, not each point's squarings
            answer = acc.epsilon(spec.at, args.route) if spec.at is not None else acc.delta(x, args.route)
        _certified(spec.asked, answer)  # refuses an upper end that could not be bounded
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


def _write_curve_csv(path: str, columns: Sequence[str], rows: Sequence[Mapping[str, object]]) -> None:
    import csv

    with storage.atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(columns)
        for row in rows:  # floats by repr: every value read back is the one certified
            out.writerow([repr(row[c]) if isinstance(row[c], float) else row[c] for c in columns])


def _draw_curve(
    paths: Sequence[str], spec: CurveSpec, rows: Sequence[Mapping[str, object]], title: str, log_x: bool
) -> None:
    """The curve as figures (matplotlib's object API, no pyplot state): points whose value is 0 or
    unbounded are left out of a logarithmic axis and said so."""
    from matplotlib.figure import Figure

    xs = [float(r[spec.x]) for r in rows]  # type: ignore[arg-type]
    ys = [float(r[spec.asked]) for r in rows]  # type: ignore[arg-type]
    finite = [(x, y) for x, y in zip(xs, ys, strict=True) if math.isfinite(y)]
    positive = [y for _, y in finite if y > 0]
    log_y = len(positive) >= 2 and max(positive) > 100 * min(positive)
    shown = [(x, y) for x, y in finite if y > 0 or not log_y]
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    if shown:
        ax.plot(*zip(*shown, strict=True), marker="o", markersize=3, linewidth=1.3)
    from matplotlib.ticker import FuncFormatter, LogFormatter

    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    for log, axis in ((log_x, ax.xaxis), (log_y, ax.yaxis)):
        if log:  # 0.5, 2, 1000 rather than 5x10^-1 (minor ticks labelled on narrow ranges only)
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))
    ax.set_xlabel(spec.x)
    ax.set_ylabel(f"certified {spec.asked} (upper bound)")
    left_out = len(rows) - len(shown)
    note = f"\n({left_out} point(s) at 0 or unbounded not drawn)" if left_out else ""
    ax.set_title(title + note, fontsize=9)
    ax.grid(alpha=0.3, which="both")
    storage.save_figure(fig, paths, dpi=120)  # no dates: the same curve gives the same files


def _cmd_curve(args: argparse.Namespace) -> int:
    spec = curve_spec(args)
    if args.out is not None:
        _check_out(args.out)
    _check_curve_ends(args, spec)
    answers: list[Enclosure] = []
    with _progress(args, "curve points") as update:
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
            _write_curve_csv(files[0], columns, rows)
            _draw_curve(files[1:], spec, rows, title, log_x=args.spacing == "log")
        except OSError as err:
            raise ParameterError(
                "--out", args.out, f"a writable path prefix ({err.strerror or err})"
            ) from None
    record: dict[str, object] = {
        "command": "curve",
        "inputs": _inputs(args, (*_NOISE_OPTIONS, "delta", spec.option[2:].replace("-", "_"), "route")),
        "neighbouring": _relation(args).value,
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
    return _emit(args, record, "\n".join(lines))


# -- option values, checked by accounting.validate -----------------------------------------


def _parse_real(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _parse_integer(text: str) -> int | Fraction:
    """The exact number ``text`` names (``1e3`` and ``2.0`` are integers, ``2.5`` is not)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def checked(check: Callable[..., T], *, integer: bool = False, **limits: Any) -> Callable[[str], T]:
    """An argparse ``type=``: parse the text, then ``check(name, value, **limits)`` from
    :mod:`accounting.validate`, whose message (what is valid) becomes argparse's one-line error."""

    def convert(text: str) -> T:
        value: object = _parse_integer(text) if integer else _parse_real(text)
        try:
            return check("", value, **limits)
        except (ParameterError, ParameterTypeError) as err:
            raise argparse.ArgumentTypeError(f"{text!r} is invalid: expected {err.valid}") from None

    convert.__name__ = getattr(check, "__name__", "value")  # argparse names the type in some errors
    return convert


def parse_number(
    text: str, convert: Callable[[str], float], valid: Callable[[float], bool], what: str
) -> Any:
    """``convert(text)`` if it satisfies ``valid``, else an argparse error saying ``what`` it must be.

    Prefer :func:`checked` (the library's validators); this remains for callers outside dpcert.
    """
    try:
        value = convert(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not valid(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    return value


#: The largest sensitivity (a shift on the lattice) the command lines accept for lattice noise.
MAX_LATTICE_SHIFT = MAX_POINTS
#: The widest lattice noise the command lines account: a standard deviation of 1e15 (about 2^50).
MAX_LATTICE_VARIANCE = 1e30
#: The most compositions the exact PLD route is asked for (auto or pld), except where they have a
#: closed form (the Gaussian mechanism): about a second per binary digit of the count, and beyond
#: 10^9 the grids' widths make it minutes.
MAX_PLD_COMPOSITIONS = 10**9
#: The most binomial trials (of the total noise) the exact routes are asked for.
MAX_BINOMIAL_TRIALS = 10**6
#: The largest sensitivity / σ (or / scale): a privacy loss of (Δ/σ)^2 stays in the float range.
MAX_SIGNAL_TO_NOISE = 1e100
#: The largest finite Rényi order asked of lattice noise (the exact sums' windows scale with α).
MAX_LATTICE_ORDER = 1e100
#: The largest sensitivity for continuous noise: 2^53, below which a float holds every integer.
MAX_SENSITIVITY = 2.0**53

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

_positive_float = checked(v.positive)
_nonnegative_float = checked(v.nonnegative)
_positive_int = checked(v.count, integer=True)
_order = checked(v.order)
_rate = checked(v.interval, low=0.0, high=1.0)
_unit_float = checked(v.open_unit)
_dps = checked(v.dps, integer=True)
_tree_int = checked(v.integer, integer=True, minimum=1)  # horizon/batch: see _tree_shape
_shuffle_epsilon = checked(
    v.interval, low=MIN_SHUFFLE_EPSILON, high=math.inf, low_open=False, why=_SHUFFLE_WHY
)
_shuffle_bound = checked(
    v.interval, low=1 / MAX_SHUFFLE_BOUND, high=MAX_SHUFFLE_BOUND, low_open=False, why=_SHUFFLE_WHY
)
_curve_points = checked(
    v.integer,
    integer=True,
    minimum=2,
    maximum=MAX_CURVE_POINTS,
    why="each point is a whole certified accounting, and a figure shows no more",
)
#: The types of the noise ranges other than positive reals.
_RANGE_TYPES: dict[str, Callable[[str], Any]] = {"beta": _unit_float, "trials": _positive_int}
_sensitivity = checked(
    v.interval,
    low=0.0,
    high=MAX_SENSITIVITY,
    why="2^53: a float holds every integer up to it, and larger sensitivities leave the float range of "
    "the derived noise",
)


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


def _add_probability(cmd: argparse.ArgumentParser) -> None:
    """``--probability``: the success probability of ``--noise binomial`` (``dp-account`` only)."""
    cmd.add_argument(
        "--probability",
        type=_unit_float,
        help="success probability p in (0, 1) of each binomial trial (binomial; default 1/2, the "
        "centered binomial; otherwise Binomial(trials, p), accounted for both shifts ±Δ)",
    )


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``prog: error: ...``), exit status 2."""

    def add_version(self) -> None:
        """``--version``: the program and the package version (:func:`package_version`)."""
        self.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def package_version() -> str:
    """The installed version of dpcert (its package metadata), else the source's."""
    from importlib import metadata

    try:
        return metadata.version("dpcert")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        from accounting import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dp-account",
        description="Certified privacy accounting for discrete (and continuous) noise.",
    )
    parser.add_version()
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="exact ε versus the published bounds, for a few noise sizes")
    demo.add_argument("--delta", type=_unit_float, default=1e-6, help="δ in (0, 1) (default 1e-6)")
    demo.add_argument(
        "--epsilons", type=_positive_float, nargs="+", default=[0.1, 0.5, 1.0, 5.0], help="target ε values"
    )
    demo.add_argument(
        "--users", type=_positive_int, default=10, help="shares in the distributed row (default 10)"
    )
    demo.add_argument(
        "--dps", type=_dps, default=DEFAULT_DPS, help=f"working precision in digits (default {DEFAULT_DPS})"
    )
    demo.add_argument("--json", action="store_true", help="print JSON instead of a table")
    demo.set_defaults(func=_cmd_demo)

    def noise_options(cmd: argparse.ArgumentParser) -> None:
        add_noise_arguments(cmd)
        _add_probability(cmd)
        common(cmd, users=False)

    def common(cmd: argparse.ArgumentParser, users: bool = True, sampling: bool = True) -> None:
        if users:
            cmd.add_argument("--users", type=_positive_int, default=1, help="users adding shares (default 1)")
        cmd.add_argument("--sensitivity", type=_sensitivity, default=1, help="sensitivity Δ (default 1)")
        cmd.add_argument(
            "--compositions", type=_positive_int, default=1, help="releases composed (default 1)"
        )
        cmd.add_argument(
            "--route",
            choices=[*ROUTES, *(f"published:{name}" for name in PUBLISHED)],
            default="auto",
            metavar="ROUTE",
            help="accounting route: "
            + ", ".join(ROUTES)
            + ", published:<"
            + "|".join(PUBLISHED)
            + "> (default auto)",
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
            "--dps",
            type=_dps,
            default=DEFAULT_DPS,
            help=f"working precision in digits (default {DEFAULT_DPS})",
        )
        cmd.add_argument("--json", action="store_true", help="print one JSON object")
        _add_no_progress(cmd)

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
    cal_cmd.add_argument(
        "--max-evaluations",
        type=_positive_int,
        metavar="N",
        help="after N noise levels accounted, stop refining once one meets the target (certified, "
        "toward more noise; the output gives the bracket); the same answer on any machine "
        "(default: no limit, the search runs to its tolerance)",
    )
    cal_cmd.add_argument(
        "--time-limit",
        type=_positive_float,
        metavar="SECONDS",
        help="opt-in: after this many seconds, stop refining once a noise level meeting the target is "
        "known, as --max-evaluations; the answer then depends on the machine's speed and load "
        "(default: no limit, no clock read)",
    )
    common(cal_cmd, sampling=False)
    cal_cmd.set_defaults(func=_cmd_calibrate)

    proto = sub.add_parser("protocol", help="parameters of Theorems 1-6 of the distributed MAB paper")
    proto.add_argument(
        "--theorem", type=checked(v.integer, integer=True, minimum=1, maximum=6), required=True, help="1..6"
    )
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
    sp.add_argument(
        "--epsilon",
        type=_shuffle_epsilon,
        required=True,
        help=f"target ε of one call (at least {MIN_SHUFFLE_EPSILON:g})",
    )
    sp.add_argument("--delta", type=_unit_float, required=True, help="target δ of one call")
    sp.add_argument("--users", type=_positive_int, required=True, help="n, users (data points) per call")
    sp.add_argument("--dimension", type=_positive_int, default=1, help="D coordinates (default 1)")
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
        type=_unit_float,
        help="with --exact: the binomial p of the exact calibration, in (0, 1) (default 1/2)",
    )
    sp.add_argument(
        "--dps",
        type=_dps,
        default=DEFAULT_DPS,
        help=f"with --exact: working precision in digits (default {DEFAULT_DPS})",
    )
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
    led.add_argument(
        "--no-cache",
        action="store_true",
        help="compute ε(δ) afresh, neither reading nor writing the on-disk cache of answers "
        f"(also: {answers.NO_CACHE_ENV}=1)",
    )
    _add_no_progress(led)
    led.set_defaults(func=_cmd_ledger)

    tr = sub.add_parser(
        "tree",
        help="the tree release of federated LinUCB (Gaussian p-sums): certified delta(E), epsilon(D), "
        "a claim checked, or the least sigma0 (--calibrate)",
    )
    tr.add_argument("--sigma", type=_positive_float, help="sigma0, the noise of each released node")
    tr.add_argument("--horizon", type=_tree_int, required=True, help="T, rounds of each silo")
    tr.add_argument("--batch", type=_tree_int, required=True, help="B, rounds between synchronisations")
    tr.add_argument(
        "--sensitivity",
        choices=("replace-one", "paper"),
        default="replace-one",
        help="replace-one (default: 2 for the bias stream, sqrt 2 for the covariance stream) or paper "
        "(L = 1 for both, valid under add-remove)",
    )
    tr.add_argument(
        "--epsilon", type=_nonnegative_float, help="print delta(E); with --delta, check the claim"
    )
    tr.add_argument("--delta", type=_unit_float, help="print epsilon(D); with --epsilon, check the claim")
    tr.add_argument(
        "--calibrate",
        action="store_true",
        help="the least sigma0 meeting (--epsilon, --delta), beside the paper's and the authors' code's",
    )
    tr.add_argument("--json", action="store_true", help="print one JSON object")
    _add_no_progress(tr)
    tr.set_defaults(func=_cmd_tree)

    curve = sub.add_parser(
        "curve",
        help="certified ε against the noise or the compositions, or δ against ε: a table, CSV and figure",
    )
    add_noise_arguments(curve)
    _add_probability(curve)
    common(curve, users=False)
    curve.add_argument("--delta", type=_unit_float, help="δ in (0, 1) of an ε curve")
    for parameter, option in _NOISE_RANGES.items():
        name = parameter.removesuffix("_range")
        kinds = ", ".join(k for k, p in NOISE_PARAMETERS.items() if p == name)
        curve.add_argument(
            option,
            nargs=2,
            type=_RANGE_TYPES.get(name, _positive_float),
            metavar=("LO", "HI"),
            help=f"x axis: ε at --delta against --{name} ({kinds}) from LO to HI",
        )
    curve.add_argument(
        "--compositions-range",
        nargs=2,
        type=_positive_int,
        metavar=("LO", "HI"),
        help="x axis: ε at --delta against the number of compositions, integers from LO to HI",
    )
    curve.add_argument(
        "--epsilon-range",
        nargs=2,
        type=_nonnegative_float,
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
    return parser


# -- the contract of the three command lines -------------------------------------------------


def json_text(record: Any) -> str:
    """``record`` as strict JSON (:func:`accounting.storage.json_text`: ``+inf`` is ``"inf"``, and
    ``allow_nan=False``, so a slip fails loudly: a NaN in an answer is a bug, reported as an
    internal error, never printed)."""
    try:
        return storage.json_text(record)
    except ValueError as err:
        raise RuntimeError(f"an answer holds a NaN, which JSON cannot carry ({err})") from None


#: Library parameter names that are a command-line option under another name.
_ALIASES = {
    "count": "compositions",
    "rate": "sampling_rate",
    "size": "samples",
    "results_dir": "results",
    "out_dir": "out",
}


def _options_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """``dest -> option string`` of the subcommand that ran (``users -> --users``)."""
    out: dict[str, str] = {}
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                parsers.append(chosen)
    for p in parsers:
        for action in p._actions:
            if action.option_strings:
                out.setdefault(action.dest, max(action.option_strings, key=len))
            elif action.dest not in ("help", argparse.SUPPRESS):
                name = action.metavar if isinstance(action.metavar, str) else action.dest  # as in usage
                out.setdefault(action.dest, name)
    return out


def _given(argv: Sequence[str]) -> str:
    """The options given, for a message about a value derived from them."""
    return " ".join(argv) if argv else "(no options)"


def _message(err: Exception, options: Mapping[str, str], argv: Sequence[str]) -> str:
    """The one line of a library error: its parameter renamed to the option it came from, or,
    for a value derived from the options, those options."""
    if isinstance(err, ParameterError | ParameterTypeError):
        root = err.name.split("[", 1)[0].split(".", 1)[0]
        dest = _ALIASES.get(root, root)
        if err.name.startswith("-") or err.name.isupper():
            return str(err)
        if dest in options:
            kind = ParameterError if isinstance(err, ParameterError) else ParameterTypeError
            return str(kind(options[dest], err.value, err.valid))
        if isinstance(err.value, int | float | Fraction) and not isinstance(err.value, bool):
            return f"{err} (a value derived from the options: {_given(argv)})"
    return str(err)


#: The longest error message printed in full (a route's refusals can list dozens of orders).
MAX_MESSAGE = 600


def _one_line(text: str) -> str:
    """``text`` on one line, cut at :data:`MAX_MESSAGE` characters."""
    flat = " ".join(text.split())
    if len(flat) <= MAX_MESSAGE:
        return flat
    return flat[:MAX_MESSAGE].rstrip() + " ... (DPCERT_DEBUG=1 shows the whole message)"


def _debug() -> bool:
    return os.environ.get("DPCERT_DEBUG", "") not in ("", "0")


def _quiet_stdout() -> None:
    """After a closed pipe: send what is left of stdout nowhere, so exiting does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout (tests)
        pass


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run the chosen subcommand under the command-line contract.

    Exit status 0 (or the subcommand's own), 2 for invalid input — a library error, an unreadable
    file, or arithmetic the values given push out of the float range — with one line on stderr
    naming the option, 1 for an unexpected error (one line; ``DPCERT_DEBUG=1`` re-raises it for the
    traceback), 130 when interrupted, 141 when stdout is a closed pipe.
    """
    given = list(sys.argv[1:] if argv is None else argv)
    prog = parser.prog
    try:
        args = parser.parse_args(given)
        options = _options_of(parser, args)
        with warnings.catch_warnings():
            # numpy's overflow/invalid-value warnings are not the user's business: answers are
            # checked (a non-finite one is refused or reported as unbounded).
            warnings.simplefilter("ignore", RuntimeWarning)
            code: int = args.func(args)
        sys.stdout.flush()
        return code
    except (AccountingError, ParameterTypeError) as err:
        if _debug():
            raise
        print(f"{prog}: error: {_one_line(_message(err, options, given))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 130
    except OSError as err:
        if _debug():
            raise
        where = f"{err.filename}: " if err.filename else ""
        print(f"{prog}: error: {where}{err.strerror or err}", file=sys.stderr)
        return 2
    except (ValueError, ArithmeticError, RecursionError, MemoryError) as err:
        if _debug():
            raise
        print(
            f"{prog}: error: cannot compute this with the values given ({_given(given)}): "
            f"{type(err).__name__}: {' '.join(str(err).split()) or 'no detail'}",
            file=sys.stderr,
        )
        return 2
    except Exception as err:
        if _debug():
            raise
        print(
            f"{prog}: internal error: {type(err).__name__}: {' '.join(str(err).split())} "
            "(please report it; DPCERT_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser(), argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def _family_mechanism(mechanism: Mechanism | None) -> Mechanism:
    """A family calibration always gives its mechanism (only a constructor may not)."""
    assert mechanism is not None
    return mechanism
