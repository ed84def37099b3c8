"""The options that name a noise and how its release is accounted.

``--noise KIND`` with the one parameter of that noise (:data:`NOISE_PARAMETERS`), ``--users``,
``--sensitivity``, ``--compositions``, ``--route``, ``--neighbouring`` and sampling: read by
``dp-account epsilon``, ``delta``, ``rdp`` and ``curve`` (:func:`add_mechanism_arguments`,
:func:`mechanism_from_arguments`, :func:`accountant_from_arguments`) and, for the noise alone, by
``dp-audit`` (:func:`add_noise_arguments`, :func:`noise_from_arguments`). Each option is checked
before any work, against the limits below, with an error naming it.
"""

from __future__ import annotations

import argparse
import math
from fractions import Fraction

import mpmath
from mpmath import mp

from accounting import validate as v
from accounting.accountant import (
    AUTO_PLD_BUDGET,
    PUBLISHED,
    ROUTES,
    Accountant,
    EventLike,
    mechanism_to_dict,
    noise_to_dict,
)
from accounting.certified import DEFAULT_DPS, float_down, float_up
from accounting.cli.framework import (
    add_json,
    add_no_progress,
    checked,
    dps_int,
    positive_float,
    positive_int,
    rate_float,
    unit_float,
)
from accounting.divergence import MAX_POINTS
from accounting.errors import ParameterError, UnsupportedEventError
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    NOISE_FAMILIES,
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
#: The largest sensitivity for continuous noise: 2^53, below which a float holds every integer.
MAX_SENSITIVITY = 2.0**53

_sensitivity = checked(
    v.interval,
    low=0.0,
    high=MAX_SENSITIVITY,
    why="2^53: a float holds every integer up to it, and larger sensitivities leave the float range of "
    "the derived noise",
)

#: The noises ``--noise`` names (the families of :data:`~accounting.noise.NOISE_FAMILIES` it offers).
NOISES = tuple(f.name for f in NOISE_FAMILIES if f.option)

#: The option giving each noise's parameter (``--noise KIND`` takes this one and no other).
NOISE_PARAMETERS = {f.name: f.parameter for f in NOISE_FAMILIES if f.option}


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
    raise ParameterError("--noise", kind, "one of " + ", ".join(NOISES))  # pragma: no cover


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


def relation(args: argparse.Namespace) -> Neighbouring:
    """``--neighbouring`` (replace-one where the subcommand has no such option)."""
    return Neighbouring.parse(getattr(args, "neighbouring", Neighbouring.REPLACE_ONE.value))


def sampling_of(args: argparse.Namespace) -> str:
    """``--sampling`` (``poisson`` by default), refused without ``--sampling-rate``."""
    if getattr(args, "sampling_rate", None) is None and getattr(args, "sampling", None) is not None:
        raise ParameterError("--sampling", args.sampling, "given together with --sampling-rate")
    return str(getattr(args, "sampling", None) or "poisson")


def event_from_arguments(args: argparse.Namespace, mech: Mechanism) -> EventLike:
    """The release: the mechanism, or the mechanism on a sampled batch (``--sampling-rate``)."""
    how = sampling_of(args)
    rate = getattr(args, "sampling_rate", None)
    if rate is None:
        return mech
    from accounting import subsampling

    return subsampling.sampled(mech, rate, how)  # type: ignore[arg-type]


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


#: The default of ``--max-cost``: the estimated seconds (reference machine, 2 cores) of the
#: accounting above which it is refused up front (:func:`accounting_cost`), so that a default run
#: ends within 20 s; the unit and name of ``shuffle-protocol --max-cost``.
DEFAULT_MAX_COST = 20.0
#: Seconds per unit of :meth:`Accountant.pld_cost <accounting.accountant.Accountant.pld_cost>`: its
#: docstring measured 1-3.5 s per unit; here 10^9 Skellam(100) releases (3.9 units) took 9.4-11 s,
#: 10^3 of them (1.2 units) 3.4 s, with another process on the second core. The upper end.
SECONDS_PER_PLD_UNIT = 3.0
#: The same for continuous noise (Gaussian, Laplace; sampled or not), whose cells and float-path
#: products are far cheaper than a lattice's certified PMFs: measured on a quiet machine, a unit of
#: a Poisson-sampled Gaussian took 0.36-0.85 s (q = 0.001-0.01, 10^2-10^5 steps), of composed
#: Laplace 0.04 s; lattice noise 0.16 s (a sampled discrete Gaussian) to 2.5 s (Skellam).
SECONDS_PER_CONTINUOUS_PLD_UNIT = 1.0
#: The same for continuous noise without sampling (composed Laplace releases: 0.04 s a unit
#: measured; their loss takes a few grid points where the model counts the grid's limit).
SECONDS_PER_PLAIN_CONTINUOUS_PLD_UNIT = 0.1
#: Seconds per lattice point of the noise's window (:func:`rdp_window`) for the RDP and zCDP
#: routes' exact Rényi sums, the whole search over orders (24 grid orders and their refinement, or
#: up to 80 for ρ): measured 4.7-8.7 ms for windows of 200 to 22 000 points (Skellam, discrete
#: Gaussian and Laplace, sums of discrete Gaussians) at the default precision, with another
#: process on the second core: 117 s for Skellam(10^6), 56 s for a discrete Laplace of scale 100.
RDP_SECONDS_PER_POINT = 8e-3
#: How much dearer a sampled lattice release's Rényi sums are per window point (mixtures of the
#: shifted PMFs): 52 ms a point measured for a Poisson-sampled discrete Gaussian of σ = 3.
SAMPLED_RDP_FACTOR = 8.0

#: The least noise multiplier ``σ/Δ`` of a sampled Gaussian that ``dpsgd`` asks of the PLD route
#: (``--route auto`` or ``pld``); below it :func:`accounting_cost` grows as ``σ^-3``. The sampled
#: Gaussian's privacy loss reaches about ``1/(2 σ^2)`` inside its window, and the exact masses of
#: its discretization carry that many bits more (:mod:`accounting.pld.discretization`): at
#: q = 0.01 and 1000 steps σ = 0.01 took 1.7 s, 0.005 14 s, 0.003 30 s, 0.001 more than 60 s. The
#: RDP route answers any σ at once.
MIN_PLD_NOISE_MULTIPLIER = 0.01


_ACCOUNTING_BASIS = "from the PLD route's grids and the RDP route's exact sums over the noise's window"


def add_max_cost(cmd: argparse.ArgumentParser, what: str = "the accounting") -> None:
    """``--max-cost SECONDS`` (default :data:`DEFAULT_MAX_COST`): the budget :func:`refuse_cost`
    holds ``what`` to."""
    cmd.add_argument(
        "--max-cost",
        type=positive_float,
        default=DEFAULT_MAX_COST,
        metavar="SECONDS",
        help=f"refuse up front when the estimated time of {what} (seconds on the reference machine, "
        "2 cores; from the sizes the computation will use) exceeds this "
        f"(default {DEFAULT_MAX_COST:g})",
    )


def _lattice_noise(mech: Mechanism) -> LatticeNoise | None:
    """The lattice noise whose exact Rényi sums the RDP route takes (the total of a distributed sum)."""
    if isinstance(mech, DistributedSum):
        return mech.total_noise
    if isinstance(mech, AdditiveNoise) and isinstance(mech.noise, LatticeNoise):
        return mech.noise
    return None


def rdp_window(mech: Mechanism, dps: int) -> int:
    """The lattice points of the exact Rényi sums of ``mech`` (0 when its RDP has a closed form):
    the noise's window of tail mass ``10^-(dps+6)`` (what :func:`accounting.divergence.renyi` takes,
    before Hölder's adjustment) plus the shifts, at most :data:`~accounting.divergence.MAX_POINTS`."""
    noise = _lattice_noise(mech)
    if noise is None:
        return 0
    lo, hi = noise.support()
    if math.isfinite(lo) and math.isfinite(hi):
        points = hi - lo + 1
    else:
        with mp.workdps(dps):
            a, b = noise.window(mp.mpf(10) ** -(dps + 6), dps)
        points = b - a + 1
    shift = 2 * float(getattr(mech, "sensitivity", 1)) + 1
    return int(min(points + shift, MAX_POINTS))


#: The privacy loss up to which the PLD's discretization costs what :meth:`Accountant.pld_cost`
#: says. Its exact masses carry about ``loss / ln 2`` more bits (:mod:`accounting.pld.discretization`),
#: so beyond it the cost grows about as ``loss^1.5``: a Poisson-sampled Gaussian (loss about
#: ``1/(2 σ^2)``) at q = 0.01 and 1000 steps took 1.7 s at σ = 0.01 (loss 5000), 14 s at 0.005,
#: 30 s at 0.003, more than 60 s at 0.001; Skellam of variance 100 at Δ = 10^5 (loss 5·10^7) more
#: than a minute. The RDP route answers these at once.
FREE_LOSS = 0.5 / MIN_PLD_NOISE_MULTIPLIER**2


def _largest_loss(mech: Mechanism) -> float:
    """About the largest privacy loss the PLD discretizes for ``mech`` (a sum's total noise): the
    Gaussian's ``(Δ/σ)^2/2``, Laplace's ``Δ/b``, a lattice noise's ``(Δ/sd)^2/2``."""
    noise = _lattice_noise(mech) or getattr(mech, "noise", None)
    sensitivity = float(getattr(mech, "sensitivity", 1))
    if isinstance(noise, Laplace | DiscreteLaplace):
        return sensitivity / float(noise.scale)
    if isinstance(noise, Gaussian | DiscreteGaussian):
        return 0.5 * (sensitivity / float(noise.sigma)) ** 2
    if isinstance(noise, NoiseDistribution):
        return 0.5 * sensitivity**2 / max(float(noise.variance()), 1e-300)
    return 0.0


def accounting_cost(args: argparse.Namespace, mech: Mechanism, acc: Accountant) -> float:
    """The estimated seconds (reference machine, 2 cores) of ``acc.epsilon`` or ``acc.delta`` by
    ``--route``, from the sizes the routes will use: the PLD route's grids
    (:meth:`Accountant.pld_cost <accounting.accountant.Accountant.pld_cost>`, times
    :data:`SECONDS_PER_PLD_UNIT`, or the continuous noise's rates) where it runs — ``pld``, or ``auto`` within
    :data:`~accounting.accountant.AUTO_PLD_BUDGET` — and the RDP route's exact sums over the
    noise's window (:func:`rdp_window`, :data:`RDP_SECONDS_PER_POINT`) where it runs — ``rdp``,
    ``zcdp``, or ``auto`` beyond that budget. Closed forms and published bounds cost nothing. It
    decides only whether to start: every answer is certified whatever it says."""
    route = args.route
    units = acc.pld_cost()
    pld_first = route == "auto" and units <= AUTO_PLD_BUDGET
    rate = SECONDS_PER_PLD_UNIT
    if _lattice_noise(mech) is None:
        sampled = getattr(args, "sampling_rate", None) is not None
        rate = SECONDS_PER_CONTINUOUS_PLD_UNIT if sampled else SECONDS_PER_PLAIN_CONTINUOUS_PLD_UNIT
    seconds = rate * units if route == "pld" or pld_first else 0.0
    seconds *= max(1.0, _largest_loss(mech) / FREE_LOSS) ** 1.5
    if route in ("rdp", "zcdp") or (route == "auto" and not pld_first):
        per_point = RDP_SECONDS_PER_POINT
        if getattr(args, "sampling_rate", None) is not None:
            per_point *= SAMPLED_RDP_FACTOR
        seconds += per_point * rdp_window(mech, args.dps)
    return float(seconds * max(1.0, float(args.dps) / DEFAULT_DPS))


def refuse_cost(args: argparse.Namespace, cost: float, what: str, basis: str = _ACCOUNTING_BASIS) -> None:
    """Refuse work estimated (``basis``: how; :func:`accounting_cost` by default) above
    ``--max-cost``, naming it, the estimate and how to run it anyway."""
    if cost > args.max_cost:
        raise ParameterError(
            "--max-cost",
            args.max_cost,
            f"at least {math.ceil(cost) if math.isfinite(cost) else cost} for these options: {what} is "
            f"estimated at {cost:.3g} s ({basis}); raise --max-cost to run it"
            + (", or choose a cheaper --route" if basis == _ACCOUNTING_BASIS else ""),
        )


def accountant_from_arguments(args: argparse.Namespace, mech: Mechanism) -> Accountant:
    """The ledger of ``--compositions`` releases of ``mech`` (sampled with ``--sampling-rate``)."""
    return Accountant(relation(args), dps=args.dps).compose(
        event_from_arguments(args, mech), args.compositions
    )


def mechanism_from_arguments(args: argparse.Namespace) -> Mechanism:
    """The mechanism the options name: the noise (the sum of ``--users`` shares) at ``--sensitivity``,
    each size checked before any accounting."""
    share = noise_from_arguments(args)
    lattice_sensitivity(share, args.sensitivity)
    lattice_width(args, share)
    signal_to_noise(args, share, args.sensitivity)
    if args.users > 1:
        if isinstance(share, Gaussian) and relation(args) is Neighbouring.ADD_REMOVE:
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


def describe(mech: Mechanism) -> dict[str, object]:
    """The mechanism of a record (and the total noise of a distributed sum)."""
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


#: The options of a mechanism, reported among a record's ``inputs``.
NOISE_OPTIONS = (
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


def total_line(mech: Mechanism) -> str:
    """The line on the total noise of a distributed sum (nothing for one user)."""
    if isinstance(mech, DistributedSum):
        return f"\ntotal noise of {mech.users} users: {noise_text(mech.total_noise)}"
    return ""


def decimal_up(x: float | int | Fraction | mpmath.mpf) -> float:
    """``x`` as the least float at or above it: a parameter shown as a decimal, toward more noise."""
    if isinstance(x, Fraction):
        f = float(x)
        return math.nextafter(f, math.inf) if Fraction(f) < x else f
    return float_up(x)


def noise_text(noise: NoiseDistribution) -> str:
    """A noise as its constructor with decimal parameters (no ``Fraction(...)`` or ``mpf`` reprs),
    each rounded toward more noise (at or above the exact value)."""
    up = decimal_up
    if isinstance(noise, Gaussian | DiscreteGaussian):
        return f"{type(noise).__name__}(sigma={up(noise.sigma)!r})"
    if isinstance(noise, Laplace):
        return f"Laplace(scale={up(noise.scale)!r})"
    if isinstance(noise, DiscreteLaplace):
        if noise.beta is not None:
            return f"DiscreteLaplace(beta={up(noise.beta)!r})"
        return f"DiscreteLaplace(scale={up(noise.scale)!r})"
    if isinstance(noise, SumOfDiscreteGaussians):
        return f"the sum of {noise.count} DiscreteGaussian(sigma={up(noise.sigma)!r})"
    if isinstance(noise, Skellam) and noise.mu1 == noise.mu2:
        offset = f", offset={noise.offset}" if noise.offset else ""
        return f"Skellam(variance={up(2 * Fraction(noise.mu1))!r}{offset})"
    if isinstance(noise, Polya):
        return f"Polya(r={float(noise.r)!r}, beta={up(noise.beta)!r})"
    return repr(noise)


def add_noise_arguments(cmd: argparse.ArgumentParser) -> None:
    """The options naming a noise (shared with ``dp-audit``); :func:`noise_from_arguments` reads them."""
    cmd.add_argument("--noise", choices=NOISES, required=True, help="the noise (a user's share with --users)")
    cmd.add_argument("--sigma", type=positive_float, help="σ (gaussian, discrete-gaussian)")
    cmd.add_argument("--variance", type=positive_float, help="variance (skellam)")
    cmd.add_argument("--scale", type=positive_float, help="scale b (laplace, discrete-laplace)")
    cmd.add_argument("--beta", type=unit_float, help="β of Pólya(1/users, β) shares (polya)")
    cmd.add_argument("--trials", type=positive_int, help="trials (binomial)")
    cmd.add_argument("--users", type=positive_int, default=1, help="users adding shares (default 1)")


def add_probability(cmd: argparse.ArgumentParser) -> None:
    """``--probability``: the success probability of ``--noise binomial`` (``dp-account`` only)."""
    cmd.add_argument(
        "--probability",
        type=unit_float,
        help="success probability p in (0, 1) of each binomial trial (binomial; default 1/2, the "
        "centered binomial; otherwise Binomial(trials, p), accounted for both shifts ±Δ)",
    )


#: The ``--route`` choices: an accountant route, or a published bound by name.
ROUTE_CHOICES = [*ROUTES, *(f"published:{name}" for name in PUBLISHED)]


def add_accounting_arguments(
    cmd: argparse.ArgumentParser, users: bool = True, sampling: bool = True, cost: bool = True
) -> None:
    """How a release is accounted: ``--sensitivity``, ``--compositions``, ``--route``,
    ``--neighbouring``, sampling (with ``sampling``), ``--dps``, ``--max-cost`` (with ``cost``;
    :func:`accounting_cost`), ``--json``, ``--no-progress``, and ``--users`` (with ``users``)."""
    if users:
        cmd.add_argument("--users", type=positive_int, default=1, help="users adding shares (default 1)")
    cmd.add_argument("--sensitivity", type=_sensitivity, default=1, help="sensitivity Δ (default 1)")
    cmd.add_argument("--compositions", type=positive_int, default=1, help="releases composed (default 1)")
    cmd.add_argument(
        "--route",
        choices=ROUTE_CHOICES,
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
            type=rate_float,
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
        type=dps_int,
        default=DEFAULT_DPS,
        help=f"working precision in digits (default {DEFAULT_DPS})",
    )
    if cost:
        add_max_cost(cmd)
    add_json(cmd)
    add_no_progress(cmd)


def add_mechanism_arguments(cmd: argparse.ArgumentParser) -> None:
    """The options of a mechanism and its accounting (:func:`mechanism_from_arguments`,
    :func:`accountant_from_arguments`)."""
    add_noise_arguments(cmd)
    add_probability(cmd)
    add_accounting_arguments(cmd, users=False)
