"""Calibration: the least noise that meets a target ``(ε, δ)``, certified.

:func:`calibrate` searches the noise parameter (σ, variance or scale) for the smallest value whose
certified ε at ``δ`` (by the :class:`~accounting.accountant.Accountant`, over ``compositions``
events) is at most the target, and returns the parameter rounded toward *more* noise together
with the certified ε it achieves. The search runs on ``log θ`` by regula falsi (Illinois, the
project's one search: :func:`accounting.search.bracket_and_search`), keeping a bracket
``[lo, hi]`` with ``ε(lo) > target >= ε(hi)``; ``hi`` is returned, so the target is always met by
the value returned, which was itself evaluated exactly, and it errs toward more noise by at most
``rtol`` relative (``rtol = 0``: the smallest float, for the Gaussian by default). Any constructor
``θ -> event or ledger`` can be calibrated the same way, like ``dp_accounting``'s
``calibrate_dp_mechanism`` and OpenDP's ``binary_search_param``.

Monotonicity of ε in the noise level is what makes the bracket find the *smallest* noise; it
holds for every family here except the discrete Gaussian at small σ (about σ < 1), where lattice
effects make δ(ε) non-monotone. There the value returned still meets the target, but a smaller
one might too.

Budgets
-------
By default the search runs until its bracket is ``rtol`` wide, so the answer depends only on the
arguments, never on the machine or the clock. ``max_evaluations`` bounds the work and keeps that
property: once that many noise levels have been accounted and one of them meets the target, the
search stops refining and returns the least level known to meet it (certified, toward more noise,
up to ``value - not_met`` above the least; ``converged`` is false unless the bracket had closed).
The levels accounted before one meets the target all count, and the search goes on until one
does; a full search typically accounts 5 to 7 levels (about 30 where ε falls to exactly 0, or at
``rtol = 0``). ``time_limit`` (opt-in) bounds it in seconds of :func:`time.monotonic` instead, and
gives that property up: on a busy machine it stops earlier, with more noise, so the same arguments
can give different answers; each evaluation of a long ledger takes seconds, so the limit can be
exceeded by one evaluation.

The parameters of published protocols are not calibrated here but set by their papers:
:func:`shuffle_sum_parameters` (re-exported from :mod:`accounting.summation`) for the shuffle
summation protocols of Cheu et al. 2021, and the per-batch parameters of Chowdhury & Zhou 2023
in :mod:`accounting.papers.distributed_dp_mab` (re-exported by the :mod:`accounting` root).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from mpmath import iv, mp

from accounting import validate as v
from accounting.accountant import Accountant, EventLike
from accounting.bounds.gaussian import gaussian_sigma_analytic
from accounting.certified import DEFAULT_DPS, Enclosure, float_up, precision, upper
from accounting.errors import ParameterError, UnsupportedError
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    NoiseDistribution,
    Polya,
    Skellam,
    family_named,
)
from accounting.progress import Progress, current, report, reporting
from accounting.search import MAX_STEP as MAX_STEP
from accounting.search import bracket_and_search
from accounting.subsampling import SAMPLINGS, sampled
from accounting.summation import SHUFFLE_SUM_PROTOCOLS, ShuffleSumParameters, shuffle_sum_parameters

__all__ = [
    "FAMILIES",
    "SHUFFLE_SUM_PROTOCOLS",
    "Calibration",
    "ShuffleSumParameters",
    "calibrate",
    "shuffle_sum_parameters",
]

FAMILIES = ("gaussian", "laplace", "discrete-laplace", "discrete-gaussian", "skellam")

#: The most users :func:`calibrate` splits discrete Gaussian noise among on the exact routes
#: (10^4 took 7 s; the published KLS bound has no limit).
MAX_EXACT_DG_USERS = 10**4

Constructor = Callable[[float], "EventLike | Accountant"]
"""``θ -> an event or a whole ledger``: what :func:`calibrate` searches over (more θ, more noise)."""


@dataclass(frozen=True)
class Calibration:
    """The result of :func:`calibrate`.

    Attributes
    ----------
    family : str
        A name of :data:`FAMILIES`, or ``"custom"`` for a constructor.
    parameter : str
        What ``value`` is: ``"sigma"``, ``"scale"`` or ``"variance"`` of the total noise, or
        ``"sigma per user"`` for discrete Gaussian shares (their sum is no discrete Gaussian),
        or ``"theta"`` for a constructor.
    value : float
        The calibrated parameter, rounded toward more noise.
    share : NoiseDistribution or None
        Each user's share when ``users > 1``.
    mechanism : Mechanism or None
        The mechanism to run (one release; composed ``compositions`` times), ``None`` when the
        constructor gave a whole ledger or a composed event.
    epsilon : Enclosure
        The certified ε it achieves at ``delta`` (``epsilon.upper <= target``); its ``route``
        says which accounting route certified it.
    ledger : Accountant
        The ledger at ``value`` that certified it.
    not_met : float
        The largest parameter accounted that does not meet the target (``0.0`` if none was): the
        least noise lies in ``(not_met, value]``. Wider than ``rtol`` only when the search
        stopped at ``max_evaluations`` or ``time_limit``.
    converged : bool
        Whether the search closed its bracket to ``rtol`` (``False``: stopped at
        ``max_evaluations`` or ``time_limit``; ``value`` still meets the target, with more noise
        than the least by at most ``value - not_met``).
    evaluations : int
        The noise levels accounted (each one whole ledger's ε at ``delta``), a count that depends
        only on the inputs: what ``max_evaluations`` bounds.
    sampling_rate, sampling : float and str, or None
        Each release runs on a batch sampled at this rate, this way (``mechanism`` is then what
        runs on the batch).
    """

    family: str
    parameter: str
    value: float
    share: NoiseDistribution | None
    mechanism: Mechanism | None
    epsilon: Enclosure
    target_epsilon: float
    delta: float
    route: str
    compositions: int
    users: int
    sensitivity: float
    ledger: Accountant | None = None
    not_met: float = 0.0
    converged: bool = True
    evaluations: int = 0
    sampling_rate: float | None = None
    sampling: str | None = None


def _builder(family: str, sensitivity: float, users: int) -> tuple[str, Callable[[float], Mechanism]]:
    """The parameter searched and the mechanism it gives."""
    n = users
    if family == "gaussian":
        return "sigma", lambda s: AdditiveNoise(Gaussian(s), sensitivity)
    if family == "laplace":
        if n > 1:
            raise UnsupportedError(
                "a sum of Laplace shares is not a Laplace: use discrete-laplace (Pólya shares)"
            )
        return "scale", lambda b: AdditiveNoise(Laplace(b), sensitivity)
    if family == "discrete-laplace":
        if n == 1:
            return "scale", lambda b: AdditiveNoise(DiscreteLaplace(b), sensitivity)

        def polya(b: float) -> Mechanism:
            # β = e^{-1/b} rounded up: a larger β is more noise.
            with precision(30):
                beta = float_up(upper(iv.exp(-1 / iv.mpf(b))))
            return DistributedSum(Polya(Fraction(1, n), beta), n, int(sensitivity))

        return "scale", polya
    if family == "discrete-gaussian":
        if n == 1:
            return "sigma", lambda s: AdditiveNoise(DiscreteGaussian(s), sensitivity)
        return "sigma per user", lambda s: DistributedSum(DiscreteGaussian(s), n, int(sensitivity))
    if family == "skellam":
        if n == 1:
            return "variance", lambda var: AdditiveNoise(Skellam(var), sensitivity)
        # Shares of exactly variance/n (a Fraction): the total is exactly the calibrated variance.
        return "variance", lambda var: DistributedSum(Skellam(Fraction(var) / n), n, int(sensitivity))
    raise ParameterError("noise_family", family, "one of " + ", ".join(FAMILIES) + ", or a callable")


def calibrate(
    noise_family: str | Constructor,
    epsilon: float,
    delta: float,
    sensitivity: float = 1,
    compositions: int = 1,
    users: int = 1,
    route: str = "auto",
    dps: int = DEFAULT_DPS,
    rtol: float = 1e-8,
    *,
    neighbouring: Neighbouring | str = Neighbouring.REPLACE_ONE,
    guess: float | None = None,
    progress: Progress | None = None,
    max_evaluations: int | None = None,
    time_limit: float | None = None,
    sampling_rate: float | None = None,
    sampling: str = "poisson",
) -> Calibration:
    """The smallest noise meeting ``(epsilon, delta)``, certified by the Accountant (see the module).

    ``noise_family`` is a name of :data:`FAMILIES` (then ``sensitivity``, ``users`` and
    ``compositions`` describe the release), or any constructor ``θ -> event or Accountant`` whose
    ε is nonincreasing in ``θ`` (more θ, more noise): its event is composed ``compositions`` times
    into an :class:`~accounting.accountant.Accountant` under ``neighbouring`` (a returned
    Accountant is taken as the whole ledger).

    Parameters
    ----------
    noise_family : str or callable
        One of :data:`FAMILIES`, or a constructor.
    epsilon, delta : float
        The target; ``ε > 0``, ``δ ∈ (0, 1)``.
    sensitivity : int or float
        Sensitivity of each release (an integer for discrete noise; families only).
    compositions : int
        Number of releases composed (each with the same noise).
    users : int
        With ``users > 1`` the noise is split into that many shares (Pólya differences, Skellam
        or discrete Gaussian shares; Gaussian shares for ``gaussian``). Families only.
    route : str
        Accounting route (see :class:`~accounting.accountant.Accountant`).
    dps : int
        Working precision of each exact evaluation.
    rtol : float
        Relative width of the final bracket on the parameter (``>= 0``).
    neighbouring : Neighbouring or str
        The relation of the ledger.
    guess : float, optional
        Where the bracket search starts (a constructor: default 1).
    max_evaluations : int, optional
        ``>= 1``: a deterministic budget of noise levels accounted (the module's "Budgets").
        ``None`` (default): search until ``rtol``.
    time_limit : float, optional
        Opt-in, ``> 0``: a budget in seconds, machine-dependent (the module's "Budgets").
        ``None`` (default): no clock is read.
    progress : callable, optional
        ``progress(done, done + 1)`` after each accounted noise level (the search's length is not
        known ahead); by default the current context's (:mod:`accounting.progress`). The
        accounting inside each evaluation does not report.
    sampling_rate : float, optional
        Families only: each release runs on a sampled batch, ``q ∈ (0, 1]`` (DP-SGD's sample
        rate; the sensitivity is then one record's contribution bound).
    sampling : {"poisson", "fixed"}
        With ``sampling_rate``: Poisson sampling (each record independently with probability
        ``q``: :class:`~accounting.subsampling.PoissonSampled`) or batches of a fixed size ``q n``
        drawn without replacement (:class:`~accounting.subsampling.SampledWithoutReplacement`).
    """
    target = v.positive("epsilon", epsilon)
    d = v.open_unit("delta", delta)
    k = v.integer("compositions", compositions, minimum=1)
    n = v.integer("users", users, minimum=1)
    relation = Neighbouring.parse(neighbouring)
    Accountant(relation, dps).epsilon(d, route)  # validates route and dps before any work
    tol = v.nonnegative("rtol", rtol)
    budget = None if max_evaluations is None else v.count("max_evaluations", max_evaluations)
    deadline = None if time_limit is None else time.monotonic() + v.positive("time_limit", time_limit)
    start = None if guess is None else v.positive("guess", guess)
    rate = None if sampling_rate is None else v.interval("sampling_rate", sampling_rate, 0.0, 1.0)
    how = v.choice("sampling", sampling, SAMPLINGS)
    setup = _setup(noise_family, sensitivity, users, n, k, target, d, route, start, tol, rate is not None)
    if rate is not None:
        setup = _sampled(setup, rate, how, target, d, k, start)
    outer = progress if progress is not None else current()
    search = _Search(setup.build, relation, dps, compositions, k, target, d, route, outer, budget, deadline)
    theta = bracket_and_search(search.excess, setup.first, setup.rtol, search.spent)
    return _result(search, theta, setup, target, d, k, n)


def _sampled(
    setup: _Setup, rate: float, how: str, target: float, d: float, k: int, start: float | None
) -> _Setup:
    """``setup`` with each release on a sampled batch, and a first guess for the sampled ledger.

    The guess is the central limit of ``k`` Poisson-sampled Gaussian releases (Dong, Roth & Su
    2022, "Gaussian Differential Privacy", Corollary 5.4: ``μ = q sqrt(k (e^{Δ²/σ²} - 1))``), solved
    for the ``σ`` whose ``μ`` is that of the Gaussian mechanism meeting ``(ε, δ)``: a starting
    point only (the search certifies every level it returns).
    """
    if setup.family == "custom":
        raise ParameterError("sampling_rate", rate, "None with a constructor (sample inside it)")
    inner = setup.build

    def build(theta: float) -> EventLike | Accountant:
        made = inner(theta)
        assert isinstance(made, AdditiveNoise | DistributedSum)
        return sampled(made, rate, how)

    first = setup.first
    if start is None:
        sens = float(setup.sensitivity)
        mu = sens / gaussian_sigma_analytic(target, d, sens)
        sigma = sens / math.sqrt(math.log1p(mu * mu / (rate * rate * k)))
        first = sigma * sigma if setup.parameter == "variance" else sigma
    return replace(setup, build=build, first=first, unsampled=inner, rate=rate, sampling=how)


@dataclass(frozen=True)
class _Setup:
    """What a calibration searches: the family's name, the parameter searched and its constructor,
    the validated sensitivity, the first guess and the final relative width."""

    family: str
    parameter: str
    sensitivity: float
    build: Callable[[float], EventLike | Accountant]
    first: float
    rtol: float
    unsampled: Callable[[float], EventLike | Accountant] | None = None
    rate: float | None = None
    sampling: str | None = None


def _setup(
    noise_family: str | Constructor,
    sensitivity: float,
    users: int,
    n: int,
    k: int,
    target: float,
    d: float,
    route: str,
    start: float | None,
    tol: float,
    sampled: bool,
) -> _Setup:
    """Validate the family (or constructor) and its release, and choose the first guess."""
    sens: float
    if callable(noise_family):
        if n != 1:
            raise ParameterError("users", users, "1 with a constructor (build the shares in it)")
        sens = v.positive("sensitivity", sensitivity)
        return _Setup("custom", "theta", sens, noise_family, start if start is not None else 1.0, tol)
    family = noise_family
    if family not in FAMILIES:
        raise ParameterError("noise_family", family, "one of " + ", ".join(FAMILIES) + ", or a callable")
    lattice = family_named(family).lattice
    sens = v.positive("sensitivity", sensitivity)
    if lattice:
        sens = v.integer("sensitivity", sensitivity, minimum=1)
    if family == "discrete-gaussian" and n > MAX_EXACT_DG_USERS and not route.startswith("published"):
        raise ParameterError(
            "users",
            users,
            f"at most {MAX_EXACT_DG_USERS} discrete Gaussian shares with route={route!r} (the search "
            "accounts per-user σ far below 1, whose sums need exact tables of thousands of bits per "
            "entry: 10^5 users did not finish in 100 s); route='published' (KLS 2021 Prop. 13) "
            "calibrates any number of users",
        )
    parameter, build = _builder(family, sens, n)
    # A starting point from the Gaussian mechanism (the composition of k is one with σ/√k).
    sigma0 = gaussian_sigma_analytic(target, d, float(sens)) * math.sqrt(k)
    default = {"sigma": sigma0, "sigma per user": sigma0 / math.sqrt(n), "variance": sigma0**2}
    first = start if start is not None else default.get(parameter, sigma0 / math.sqrt(2))
    if family == "gaussian" and route in ("auto", "pld") and not sampled:
        # exact (closed form per evaluation): the smallest float σ. A sampled release has no
        # closed form: each evaluation is a whole PLD composition, and the search stops at tol
        # (the smallest float took 19 of them, 14 after ε was within 1e-8 of the target).
        tol = 0.0
    return _Setup(family, parameter, sens, build, first, tol)


class _Search:
    """The state of one calibration's search: each noise level's ledger and certified ε (accounted
    once), how many levels were accounted, whether the budget stopped the search, and the largest
    level found not to meet the target."""

    def __init__(
        self,
        build: Callable[[float], EventLike | Accountant],
        relation: Neighbouring,
        dps: int,
        compositions: object,
        k: int,
        target: float,
        d: float,
        route: str,
        outer: Progress | None,
        budget: int | None,
        deadline: float | None,
    ) -> None:
        self.build, self.relation, self.dps = build, relation, dps
        self.compositions, self.k, self.target, self.d = compositions, k, target, d
        self.route, self.outer = route, outer
        self.budget, self.deadline = budget, deadline
        self.ledgers: dict[float, Accountant] = {}
        self.answers: dict[float, Enclosure] = {}
        self.evaluations = 0  # levels whose accounting was started (a refused level counts)
        self.stopped = False
        self.unmet = 0.0

    def ledger(self, theta: float) -> Accountant:
        if theta not in self.ledgers:
            made = self.build(theta)
            if isinstance(made, Accountant):
                if self.k != 1:
                    raise ParameterError(
                        "compositions", self.compositions, "1 when the constructor returns a ledger"
                    )
                self.ledgers[theta] = made
            else:
                self.ledgers[theta] = Accountant(self.relation, self.dps).compose(made, self.k)
        return self.ledgers[theta]

    def account(self, theta: float) -> Enclosure:
        if theta not in self.answers:
            self.evaluations += 1
            with reporting(None):
                self.answers[theta] = self.ledger(theta).epsilon(self.d, self.route)
            report(len(self.answers), len(self.answers) + 1, self.outer)
        return self.answers[theta]

    def spent(self) -> bool:
        """Whether the budget is spent (asked only once a level meeting the target is known)."""
        if (self.budget is not None and self.evaluations >= self.budget) or (
            self.deadline is not None and time.monotonic() > self.deadline
        ):
            self.stopped = True
        return self.stopped

    def excess(self, theta: float) -> float:
        """``ln ε(θ) - ln target``: ``<= 0`` exactly when the target is met (sign decided exactly)."""
        hi = self.account(theta).hi
        if hi > self.target:
            self.unmet = max(self.unmet, theta)
            with mp.workdps(30):
                return max(float(mp.log(hi) - mp.log(self.target)), 1e-300)
        if hi == 0:
            return -math.inf
        with mp.workdps(30):
            return min(float(mp.log(hi) - mp.log(self.target)), 0.0)


def _result(
    search: _Search, theta: float, setup: _Setup, target: float, d: float, k: int, n: int
) -> Calibration:
    """The :class:`Calibration` at the level ``theta`` the search returned."""
    unmet = search.unmet
    closed = unmet > 0 and (theta - unmet <= setup.rtol * theta or math.nextafter(unmet, math.inf) >= theta)
    converged = closed or not search.stopped
    value = search.account(theta)
    made = (setup.unsampled or setup.build)(theta)
    mech = made if isinstance(made, Mechanism) else None
    share: NoiseDistribution | None = None
    if n > 1 and isinstance(mech, DistributedSum):
        share = mech.share
    elif n > 1 and setup.family == "gaussian":
        share = Gaussian(float_up(mp.mpf(theta) / mp.sqrt(n)))
    return Calibration(
        setup.family,
        setup.parameter,
        theta,
        share,
        mech,
        value,
        target,
        d,
        value.route,
        k,
        n,
        setup.sensitivity,
        search.ledger(theta),
        unmet,
        converged,
        search.evaluations,
        setup.rate,
        setup.sampling,
    )
