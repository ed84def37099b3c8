"""Calibration: the least noise that meets a target ``(ε, δ)``, certified; protocol parameters.

:func:`calibrate` searches the noise parameter (σ, variance or scale) for the smallest value whose
certified ε at ``δ`` (by the :class:`~accounting.accountant.Accountant`, over ``compositions``
events) is at most the target, and returns the parameter rounded toward *more* noise together
with the certified ε it achieves. The search runs on ``log θ`` by regula falsi (Illinois, the
project's one search: :mod:`accounting.search`), keeping a bracket ``[lo, hi]`` with
``ε(lo) > target >= ε(hi)``; ``hi`` is returned, so the target is always met by the value
returned, which was itself evaluated exactly. Any constructor ``θ -> event or ledger`` can be
calibrated the same way.

Monotonicity of ε in the noise level is what makes the bracket find the *smallest* noise; it
holds for every family here except the discrete Gaussian at small σ (about σ < 1), where lattice
effects make δ(ε) non-monotone. There the value returned still meets the target, but a smaller
one might too.

:func:`protocol_parameters` gives the parameters of each :class:`Variant` of the distributed MAB
paper (Theorems 1–6; spec §4.4, §5); :func:`shuffle_sum_parameters` those of the shuffle summation
protocols (bits with binomial noise) of Cheu et al. 2021 as the federated LCB and DP-DPE papers use.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath import iv, mp

from accounting import bounds
from accounting import validate as v
from accounting.accountant import Accountant, EventLike
from accounting.certified import DEFAULT_DPS, Enclosure, float_up, precision, upper
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError
from accounting.mechanisms import AdditiveNoise, ApproxDP, DistributedSum, Mechanism
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    NoiseDistribution,
    Polya,
    Skellam,
)
from accounting.progress import Progress, current, report, reporting
from accounting.search import smallest

__all__ = [
    "FAMILIES",
    "SHUFFLE_SUM_PROTOCOLS",
    "Calibration",
    "ProtocolParameters",
    "ShuffleSumParameters",
    "Variant",
    "calibrate",
    "protocol_parameters",
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
) -> Calibration:
    """The smallest noise meeting ``(epsilon, delta)``, certified by the Accountant.

    ``noise_family`` is a name of :data:`FAMILIES` (then ``sensitivity``, ``users`` and
    ``compositions`` describe the release), or any constructor ``θ -> event or Accountant`` whose
    ε is nonincreasing in ``θ`` (more θ, more noise), like ``dp_accounting``'s
    ``calibrate_dp_mechanism`` and OpenDP's ``binary_search_param``: its event is composed
    ``compositions`` times into an :class:`~accounting.accountant.Accountant` under
    ``neighbouring`` (a returned Accountant is taken as the whole ledger).

    The search (:func:`accounting.search.smallest`, regula falsi on ``ln θ``) keeps a bracket
    ``[lo, hi]`` with ``ε(lo) > target >= ε(hi)`` and returns ``hi``: the value returned was itself
    accounted and meets the target, and errs toward more noise by at most ``rtol`` relative
    (``rtol = 0``: the smallest float, for the Gaussian by default).

    By default the search runs until its bracket is ``rtol`` wide, so the answer depends only on
    the arguments, never on the machine or the clock; ``max_evaluations`` bounds the work and
    keeps that property, ``time_limit`` bounds it in seconds and gives it up.

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
        ``>= 1``: once this many noise levels have been accounted and one of them meets the target,
        the search stops refining and returns the least level known to meet it (certified, toward
        more noise, up to ``value - not_met`` above the least; ``converged`` is false unless the
        bracket had closed). The levels accounted before one meets the target all count, and the
        search goes on until one does. A deterministic budget: the same arguments give the same
        answer on any machine. ``None`` (default): search until ``rtol`` (a full search typically
        accounts 5 to 7 levels; about 30 where ε falls to exactly 0, or at ``rtol = 0``).
    time_limit : float, optional
        Opt-in, ``> 0``: seconds (of :func:`time.monotonic`) after which the search starts no
        further refinement once a level meeting the target is known, as ``max_evaluations`` does.
        The answer then depends on the machine's speed and load (on a busy machine it stops
        earlier, with more noise): the same arguments can give different answers. Each evaluation
        of a long ledger takes seconds, so the limit can be exceeded by one evaluation. ``None``
        (default): no clock is read.
    progress : callable, optional
        ``progress(done, done + 1)`` after each accounted noise level (the search's length is not
        known ahead); by default the current context's (:mod:`accounting.progress`). The
        accounting inside each evaluation does not report.
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
    sens: float
    if callable(noise_family):
        family, parameter = "custom", "theta"
        if n != 1:
            raise ParameterError("users", users, "1 with a constructor (build the shares in it)")
        sens = v.positive("sensitivity", sensitivity)
        build: Callable[[float], EventLike | Accountant] = noise_family
        first = start if start is not None else 1.0
    else:
        family = noise_family
        if family not in FAMILIES:
            raise ParameterError("noise_family", family, "one of " + ", ".join(FAMILIES) + ", or a callable")
        lattice = family.startswith("discrete") or family == "skellam"
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
        sigma0 = bounds.gaussian_sigma_analytic(target, d, float(sens)) * math.sqrt(k)
        default = {"sigma": sigma0, "sigma per user": sigma0 / math.sqrt(n), "variance": sigma0**2}
        first = start if start is not None else default.get(parameter, sigma0 / math.sqrt(2))
        if family == "gaussian" and route in ("auto", "pld"):
            tol = 0.0  # exact (closed form per evaluation): the smallest float σ

    ledgers: dict[float, Accountant] = {}

    def ledger(theta: float) -> Accountant:
        if theta not in ledgers:
            made = build(theta)
            if isinstance(made, Accountant):
                if k != 1:
                    raise ParameterError(
                        "compositions", compositions, "1 when the constructor returns a ledger"
                    )
                ledgers[theta] = made
            else:
                ledgers[theta] = Accountant(relation, dps).compose(made, k)
        return ledgers[theta]

    answers: dict[float, Enclosure] = {}

    outer = progress if progress is not None else current()

    evaluations = [0]  # levels whose accounting was started (a refused level counts)

    def account(theta: float) -> Enclosure:
        if theta not in answers:
            evaluations[0] += 1
            with reporting(None):
                answers[theta] = ledger(theta).epsilon(d, route)
            report(len(answers), len(answers) + 1, outer)
        return answers[theta]

    stopped = [False]

    def spent() -> bool:
        """Whether the budget is spent (asked only once a level meeting the target is known)."""
        if (budget is not None and evaluations[0] >= budget) or (
            deadline is not None and time.monotonic() > deadline
        ):
            stopped[0] = True
        return stopped[0]

    unmet = [0.0]

    def excess(theta: float) -> float:
        """``ln ε(θ) - ln target``: ``<= 0`` exactly when the target is met (sign decided exactly)."""
        hi = account(theta).hi
        if hi > target:
            unmet[0] = max(unmet[0], theta)
            with mp.workdps(30):
                return max(float(mp.log(hi) - mp.log(target)), 1e-300)
        if hi == 0:
            return -math.inf
        with mp.workdps(30):
            return min(float(mp.log(hi) - mp.log(target)), 0.0)

    theta = _bracket_and_search(excess, first, tol, spent)
    closed = unmet[0] > 0 and (theta - unmet[0] <= tol * theta or math.nextafter(unmet[0], math.inf) >= theta)
    converged = closed or not stopped[0]
    value = account(theta)
    made = build(theta)
    mech = made if isinstance(made, Mechanism) else None
    share: NoiseDistribution | None = None
    if n > 1 and isinstance(mech, DistributedSum):
        share = mech.share
    elif n > 1 and family == "gaussian":
        share = Gaussian(float_up(mp.mpf(theta) / mp.sqrt(n)))
    return Calibration(
        family,
        parameter,
        theta,
        share,
        mech,
        value,
        target,
        d,
        value.route,
        k,
        n,
        sens,
        ledger(theta),
        unmet[0],
        converged,
        evaluations[0],
    )


def _bracket_and_search(
    excess: Callable[[float], float], first: float, rtol: float, stop: Callable[[], bool] | None = None
) -> float:
    """Bracket the crossing from ``first``, then :func:`~accounting.search.smallest` from both ends.

    The excess is ``ln ε(θ) - ln target``, and ``ε`` falls at least as ``θ^{-1/2}`` in every family
    here (as ``1/σ``, ``1/b`` or ``1/√variance`` in the Gaussian regime), so the first step in
    ``ln θ`` is ``2.5 |excess(first)|``: from a good guess (the analytic Gaussian's, usually within
    ``10^-6``) the bracket is then that narrow, and regula falsi, given the excess at both ends,
    finishes in a few evaluations instead of bisecting from a factor-2 bracket (each evaluation
    of a long ledger is a whole PLD composition).

    ``ε`` may also fall much *faster* than that: to exactly 0 once ``δ`` exceeds the total
    variation distance (a target ``ε = 1e-20`` is met a factor 2 above a guess whose ε is
    ``1e-6``, an excess of 32). So the step is at most :data:`MAX_STEP` (a factor e^2), and a step
    that does not cross doubles: an uncapped step of ``e^64`` made the next evaluation one at a
    noise level ``10^28`` times too large (a discrete Laplace scale of 1.7e33, which did not finish).

    A noise level the route cannot account (a published bound's hypothesis, such as KLS's
    ``σ >= 1/2``, or a table too fine to build) counts as not meeting the target while no
    smaller level has been accounted: the search then moves to more noise, which is certified.

    ``stop`` (the caller's budget, :func:`~accounting.search.smallest`'s) is asked once a level
    meeting the target is known, before each further evaluation: when true, that level is returned.
    """

    refused: list[Exception] = []

    def checked(theta: float) -> float:
        try:
            return excess(theta)
        except (UnsupportedError, ParameterError) as err:
            refused.append(err)
            return math.inf

    f0 = checked(first)
    step = 2.5 * abs(f0) if math.isfinite(f0) and f0 != 0 else math.log(2)
    step = min(max(step, 1e-9), MAX_STEP)
    if f0 > 0:
        lo, f_lo = first, f0
        while True:
            hi = lo * math.exp(step)
            if hi > 1e300:
                if refused and not math.isfinite(f_lo):
                    raise refused[0]  # no level up to 1e300 could be accounted: say why
                raise UnsupportedError("no noise level up to 1e300 meets the target")
            try:
                f_hi = excess(hi)
            except (UnsupportedError, ParameterError) as err:
                if math.isfinite(f_lo):
                    raise UnsupportedError(
                        f"no noise level meets the target: ε is still above it at θ = {lo!r} and "
                        f"θ = {hi!r} cannot be accounted ({err}); under add-remove a distributed sum "
                        "has an ε floor that no amount of noise removes (the removed user's share "
                        "changes the variance)"
                    ) from None
                refused.append(err)
                f_hi = math.inf  # nothing accounted yet: keep moving toward more noise
            if f_hi <= 0:
                break
            lo, f_lo = hi, f_hi
            step *= 2
    else:
        hi, f_hi = first, f0
        while True:
            lo = hi * math.exp(-step)
            if lo < 1e-300 or (stop is not None and stop()):
                return hi
            f_lo = checked(lo)
            if f_lo > 0:
                break
            hi, f_hi = lo, f_lo
            step *= 2
    return smallest(checked, lo, hi, rtol=rtol, log=True, f_lo=f_lo, f_hi=f_hi, stop=stop)


#: The largest first step of the calibration bracket in ``ln θ`` (a factor ``e^2``); later steps double.
MAX_STEP = 2.0


# ---------------------------------------------------------------------------------------
# Protocol parameters of the distributed MAB paper (spec §4.4, §5)
# ---------------------------------------------------------------------------------------

#: The local-model constant of Lemma 5 (spec §2.3: c = 1.6 is valid for every ε).
LOCAL_C = 1.6


class Variant(enum.Enum):
    """The protocol variants of the distributed MAB paper (spec §4.4), named by what they are.

    The value is the name a user types; :attr:`theorem` is the paper's theorem, for citation
    only (:meth:`from_theorem` reads a theorem number, as ``dp-account protocol --theorem``
    does). Nothing dispatches on the number.
    """

    #: Pólya shares under secure aggregation; they sum to ``Lap_Z(g/ε)`` (Theorem 1, pure DP).
    POLYA_SHARES = "polya-shares"
    #: Skellam shares (scale ``s``) under secure aggregation (Theorem 2, RDP).
    SKELLAM_SHARES = "skellam-shares"
    #: Pólya shares at ``ε' = ε/2``, shuffled (relaxed SecAgg of Cheu & Yan; Theorem 3, pure DP).
    SHUFFLED_POLYA = "shuffled-polya"
    #: Discrete Gaussian shares (scale ``s``) under secure aggregation (Theorem 4, zCDP).
    DISCRETE_GAUSSIAN_SHARES = "discrete-gaussian-shares"
    #: The trusted server adds ``Lap_Z(g/ε)`` (Theorem 5, central pure DP).
    CENTRAL_LAPLACE = "central-laplace"
    #: Every user adds ``Lap_Z(g/ε)`` (Theorem 6, local pure DP).
    LOCAL_LAPLACE = "local-laplace"

    @property
    def theorem(self) -> int:
        """The theorem of the distributed MAB paper (citation only)."""
        return _VARIANT_THEOREMS[self]

    @property
    def scaled(self) -> bool:
        """Whether the variant takes the scaling factor ``s >= 1`` (Theorems 2 and 4)."""
        return self in (Variant.SKELLAM_SHARES, Variant.DISCRETE_GAUSSIAN_SHARES)

    @property
    def notion(self) -> str:
        """The guarantee its theorem states: ``"pure"``, ``"rdp"`` or ``"zcdp"``."""
        if self is Variant.SKELLAM_SHARES:
            return "rdp"
        if self is Variant.DISCRETE_GAUSSIAN_SHARES:
            return "zcdp"
        return "pure"

    @property
    def epsilon_below_one(self) -> bool:
        """Whether the theorem assumes ``ε ∈ (0, 1)`` (Theorems 4, 5, 6; spec §3.3, §4.4, §9.5).

        Theorems 1–3 hold for every ``ε > 0``. Outside ``(0, 1)`` the protocol still runs and its
        ledger still has an exact guarantee; only the theorem's statement does not apply.
        """
        return self in (Variant.DISCRETE_GAUSSIAN_SHARES, Variant.CENTRAL_LAPLACE, Variant.LOCAL_LAPLACE)

    def hypotheses_hold(self, epsilon: float) -> bool:
        """Whether the theorem's hypotheses on ``ε`` hold (``ε > 0``, and ``ε < 1`` where assumed)."""
        eps = v.positive("epsilon", epsilon)
        return eps < 1 or not self.epsilon_below_one

    @classmethod
    def from_theorem(cls, theorem: object) -> Variant:
        """The variant of Theorem ``theorem`` (an integer in 1..6) of the distributed MAB paper."""
        th = v.integer("theorem", theorem, minimum=1)
        for variant, number in _VARIANT_THEOREMS.items():
            if number == th:
                return variant
        raise ParameterError(
            "theorem", theorem, "an integer in 1..6 (a theorem of the distributed MAB paper)"
        )

    @classmethod
    def parse(cls, value: object, name: str = "variant") -> Variant:
        """A :class:`Variant` from a member or its name as typed (``"skellam-shares"``)."""
        if isinstance(value, Variant):
            return value
        if isinstance(value, str):
            try:
                return cls(value)
            except ValueError:
                pass
            raise ParameterError(name, value, "one of " + ", ".join(x.value for x in cls))
        raise ParameterTypeError(
            name,
            value,
            "an accounting.calibration.Variant or its name ("
            + ", ".join(x.value for x in cls)
            + "); Variant.from_theorem(k) for Theorem k",
        )


_VARIANT_THEOREMS = {
    Variant.POLYA_SHARES: 1,
    Variant.SKELLAM_SHARES: 2,
    Variant.SHUFFLED_POLYA: 3,
    Variant.DISCRETE_GAUSSIAN_SHARES: 4,
    Variant.CENTRAL_LAPLACE: 5,
    Variant.LOCAL_LAPLACE: 6,
}


@dataclass(frozen=True)
class ProtocolParameters:
    """Per-batch parameters of one :class:`Variant` (``n`` = users in the batch; spec §4.4).

    ``bits`` is ``ceil(log2 m)``, what each user sends. ``share`` is each user's noise
    (``None`` for the central model, where the server adds ``server_noise``).
    """

    variant: Variant
    epsilon: float
    users: int
    horizon: int
    scale: float | None
    g: int
    tau: int
    m: int
    bits: int
    share: NoiseDistribution | None
    server_noise: NoiseDistribution | None
    privacy: str


#: Calibrated σ of discrete Gaussian shares is rounded up to a multiple of ``1/SIGMA_GRID``, so
#: ``σ²`` has a short rational form and the exact sampler runs in int64 (CKS Algorithm 3).
SIGMA_GRID = 16

#: Rational ε of the central and local discrete Laplace scale ``g/ε``: a denominator at most this.
EPSILON_DENOMINATOR = 10**6


def _rational_below(eps: float) -> Fraction:
    """A rational ``<= eps`` with a small denominator (``0.1`` gives ``1/10``).

    The discrete Laplace scale ``g/ε`` then has a short rational form, which the exact sampler
    (CKS Algorithm 2) needs to stay in int64; rounding ε down adds noise, never removes it.
    """
    exact = Fraction(eps)
    q = exact.limit_denominator(EPSILON_DENOMINATOR)
    if q > exact:
        q = Fraction(math.floor(exact * EPSILON_DENOMINATOR), EPSILON_DENOMINATOR)
    return q if q > 0 else exact


def _sigma_up(variance: Fraction) -> Fraction:
    """The smallest multiple of ``1/SIGMA_GRID`` whose square is at least ``variance`` (exact)."""
    k = math.isqrt(variance.numerator * SIGMA_GRID**2 // variance.denominator)
    while Fraction(k, SIGMA_GRID) ** 2 < variance:
        k += 1
    return Fraction(k, SIGMA_GRID)


def _ceil(x: object) -> int:
    """``ceil`` of an mpf computed at 50 digits (the arguments are transcendental, no ties)."""
    return int(mp.ceil(x))


def protocol_parameters(
    variant: Variant | str,
    epsilon: float,
    users: int,
    horizon: int,
    scale: float | None = None,
    p: float | None = None,
) -> ProtocolParameters:
    """``g``, ``τ``, ``m``, bits and noise of one batch of a :class:`Variant` (spec §4.4, §5).

    Theorems 1–6 of the distributed MAB paper, by :attr:`Variant.theorem`. ``p`` is the
    failure probability inside ``τ`` (theory: ``1/T``, the default); the shuffled variant
    (Theorem 3) uses ``p' = 1/(2T)`` and ``ε' = ε/2`` (spec §3.6, RECON). The parameters are
    computed for any ``ε > 0``; whether the theorem's own hypotheses hold (Theorems 4–6 assume
    ``ε < 1``) is :meth:`Variant.hypotheses_hold`'s question, not a reason to refuse.

    Parameters
    ----------
    variant : Variant or str
        The variant, or its name (``"polya-shares"``, ...).
    epsilon : float
        ``ε > 0``.
    users : int
        ``n = l(b)``, the users of the batch.
    horizon : int
        ``T >= 2``.
    scale : float or None
        ``s >= 1`` for the scaled variants (Skellam and discrete Gaussian shares), else ``None``.
    p : float or None
        The failure probability in ``τ``, in ``(0, 1)`` (``None``: the theory's choice).

    Returns
    -------
    ProtocolParameters
    """
    var = Variant.parse(variant)
    eps = v.positive("epsilon", epsilon)
    n = v.integer("users", users, minimum=1)
    T = v.integer("horizon", horizon, minimum=2)
    s: float | None = None
    if var.scaled:
        if scale is None:
            raise ParameterError(
                "scale", scale, f"a scaling factor s >= 1 ({var.value}, Theorem {var.theorem})"
            )
        s = v.real("scale", scale)
        if s < 1:
            raise ParameterError(
                "scale", scale, f"a scaling factor s >= 1 ({var.value}, Theorem {var.theorem})"
            )
    prob = v.open_unit("p", p) if p is not None else None
    share: NoiseDistribution | None = None
    server: NoiseDistribution | None = None
    with mp.workdps(50):
        log_2_over_p = mp.log(2 / mp.mpf(prob)) if prob is not None else mp.log(2 * mp.mpf(T))
        if var in (Variant.POLYA_SHARES, Variant.CENTRAL_LAPLACE, Variant.LOCAL_LAPLACE):
            g = bounds.theorem2_g(eps, 1, n)
            e = mp.mpf(eps)
            if var is Variant.LOCAL_LAPLACE:
                width = max(mp.sqrt(2 * n * log_2_over_p), 2 * log_2_over_p)
                tau = _ceil(mp.mpf(LOCAL_C) * g / e * width)  # g may exceed the float range
            else:
                tau = _ceil(g / e * log_2_over_p)
            lap = DiscreteLaplace(scale=Fraction(g) / _rational_below(eps))
            if var is Variant.POLYA_SHARES:
                share = Polya(Fraction(1, n), float_up(mp.exp(-e / g)))
                privacy = f"({eps:g}, 0)-DP: Pólya shares sum to Lap_Z(g/ε)"
            elif var is Variant.CENTRAL_LAPLACE:
                server = lap
                privacy = f"({eps:g}, 0) central DP: the server adds Lap_Z(g/ε)"
            else:
                share = lap
                privacy = f"({eps:g}, 0) local DP: each user adds Lap_Z(g/ε)"
        elif var is Variant.SHUFFLED_POLYA:
            e = mp.mpf(eps) / 2
            g = bounds.theorem2_g(eps / 2, 1, n)
            log_term = mp.log(2 / mp.mpf(prob)) if prob is not None else mp.log(4 * mp.mpf(T))
            tau = _ceil(g / e * log_term)
            share = Polya(Fraction(1, n), float_up(mp.exp(-e / g)))
            privacy = f"({eps:g}, 0)-DP via shuffling: ε' = ε/2 for the sum, ε/4 per relaxed SecAgg side"
        else:
            assert s is not None
            g = bounds.theorem2_g(eps, s, n)
            e = mp.mpf(eps)
            share_variance = Fraction(g * g) / n / Fraction(eps) ** 2
            if var is Variant.SKELLAM_SHARES:
                tau = _ceil(2 * g / e * mp.sqrt(log_2_over_p) + mp.sqrt(2) * log_2_over_p)
                share = Skellam(share_variance)
                privacy = "RDP at integer orders (Lemma 3 with the actual g; see accounting.bounds)"
            else:
                tau = _ceil(g / e * mp.sqrt(2 * log_2_over_p))
                share = DiscreteGaussian(_sigma_up(share_variance))
                privacy = "zCDP (Lemma 4, Kairouz–Liu–Steinke Prop. 13)"
    if not var.hypotheses_hold(eps):
        privacy += (
            f"; Theorem {var.theorem} assumes ε < 1: at ε = {eps:g} its statement does not apply "
            "(account the released mechanism itself)"
        )
    m = n * g + 2 * tau + 1
    bits = (m - 1).bit_length()
    return ProtocolParameters(var, eps, n, T, s, g, tau, m, bits, share, server, privacy)


# ---------------------------------------------------------------------------------------
# Shuffle summation protocols (bits with binomial noise; Cheu, Joseph, Mao & Peng 2021)
# ---------------------------------------------------------------------------------------

#: The shuffle summation protocols :func:`shuffle_sum_parameters` knows.
SHUFFLE_SUM_PROTOCOLS = ("dpdpe-scalar", "dpdpe-vector", "cheu-vector")


@dataclass(frozen=True)
class ShuffleSumParameters:
    """Parameters of a shuffle summation protocol (one call, ``n`` users, ``D`` coordinates).

    Each user maps every coordinate ``x ∈ [-B, B]`` to ``x̂ ∈ {0, ..., levels}`` (shift by ``B``,
    scale by ``levels / (2B)``, randomized rounding), adds ``Bin(b, p)`` and sends
    ``x̂ + Bin(b, p)`` ones among ``levels + b`` bits labelled with the coordinate; the shuffler
    permutes all bits; the analyzer counts the ones of each coordinate, ``c``, and outputs
    ``(c - n b p) / scale - n B``, an unbiased estimate of ``Σ x``.

    Attributes
    ----------
    protocol : str
        A key of :data:`SHUFFLE_SUM_PROTOCOLS`.
    epsilon, delta : float
        The ``(ε, δ)``-SDP the cited theorem gives one call, on the protocol's neighbouring relation.
    users, dimension : int
        ``n`` and ``D``.
    bound : float
        ``B``: each coordinate lies in ``[-B, B]`` (vector protocols: ``‖x‖₂ <= B``).
    g : int
        The precision parameter of the theorem.
    levels : int
        The largest encoding, ``g`` (DP-DPE) or ``2g`` (the federated paper's shift into ``[0, 2L]``).
    b : int
        Binomial trials per user and coordinate.
    p : float
        Binomial success probability, ``<= 1/2``.
    bits : int
        One-bit messages each user sends: ``D (levels + b)``.
    theorem : str
        The guarantee and where it comes from.
    """

    protocol: str
    epsilon: float
    delta: float
    users: int
    dimension: int
    bound: float
    g: int
    levels: int
    b: int
    p: float
    bits: int
    theorem: str

    @property
    def scale(self) -> float:
        """``levels / (2B)``: encoded units per unit of input."""
        return self.levels / (2 * self.bound)

    def event(self) -> ApproxDP:
        """One call's cited ``(ε, δ)``-SDP as a ledger event (replace-one, as the theorem)."""
        return ApproxDP(self.epsilon, self.delta, self.theorem)

    def variance(self) -> float:
        """An upper bound on the variance of each coordinate of the estimate of ``Σ x``:
        ``(n/4 + n b p (1 - p)) / scale²`` (randomized rounding has variance at most 1/4)."""
        n = self.users
        return (n / 4 + n * self.b * self.p * (1 - self.p)) / self.scale**2


def _strictly_above(x: object) -> int:
    """The least integer ``> x`` (an mpf at 50 digits): the lemmas need ``b`` strictly above."""
    return int(mp.floor(x)) + 1


def _cheu_binomial(g: int, log_term: Any, eps: Any, n: int) -> tuple[int, float]:
    """Cheu et al. 2021 Lemma 3.1: ``b`` the least integer ``> 180 g² L / (ε² n)`` and
    ``p = 90 g² L / (b ε² n)`` (``<= 1/2``), with ``L`` the lemma's log term (mpf inputs)."""
    scaled = g**2 * log_term / (eps**2 * n)
    b = _strictly_above(180 * scaled)
    return b, float(90 * scaled / b)


def shuffle_sum_parameters(
    protocol: str,
    epsilon: float,
    delta: float,
    users: int,
    dimension: int = 1,
    bound: float = 1.0,
) -> ShuffleSumParameters:
    """``g``, ``b``, ``p`` and the cited guarantee of a shuffle summation protocol.

    ``"dpdpe-scalar"``
        Algorithm 4 of the DP-DPE paper (spec ``dp-dpe.md`` §3.4; Cheu et al. 2021 Lemma 3.1 =
        Lemma C.5), run at ``ε/2`` as its Theorem C.6 prescribes: ``g = ⌈2B√n⌉``,
        ``b`` the least integer ``> 180 g² ln(2/δ) / ((ε/2)² n)``,
        ``p = 90 g² ln(2/δ) / (b (ε/2)² n)``; ``(ε, δ)``-SDP for ``ε ∈ (0, 30)``, ``δ ∈ (0, 1/2)``.
        (Spec RECON/UNSURE: the OCR reads ``g = 2B√n``; the lemma only needs ``g >= B√n``, so the
        larger ``g`` is safe.)
    ``"dpdpe-vector"``
        Algorithm 2 of the DP-DPE paper (spec §3.3, eq. 22; Theorem 4.6 / A.2):
        ``ε̂ = ε / (18 sqrt(ln(2/δ)))``, ``g = max(⌈ε̂ √n / (6 sqrt(5 ln(4D/δ)))⌉, ⌈√D⌉, 10)``,
        ``b`` the least integer ``> 180 g² ln(4D/δ) / (ε̂² n)``, ``p = 90 g² ln(4D/δ) / (b ε̂² n)``;
        ``(ε, δ)``-SDP for ``ε ∈ (0, 15)``, ``δ ∈ (0, 1)``, inputs with ``‖x‖₂ <= B``. (The
        constants 18, 6√5, 180, 90 are the spec's reconstruction from OCR, tagged RECON.)
    ``"cheu-vector"``
        ``P_Vec`` as the federated LCB paper uses it (spec ``federated-lcb.md`` §5.3.2):
        ``g = max(⌈2√n⌉, D, 4)``, ``p = 1/4``, ``b = ⌈24·10⁴ g² ln(4(D + 1)/δ)² / (ε² n)⌉``,
        inputs shifted into ``[0, 2L]`` (``levels = 2g``); ``(ε, δ)``-SDP for ``ε ∈ (0, 15]``,
        ``δ ∈ (0, 1/2)``. (The released code uses ``b = g² ln(d²/δ)²/(ε² n)`` with no constant,
        which the theorem does not cover; it is not offered here.)

    The guarantees are the cited theorems', not computed here; for the scalar protocol the
    shuffled bits are equivalent to their count, so the exact privacy is that of adding
    ``Bin(b n, p)`` to a sum of sensitivity ``levels``.

    Parameters
    ----------
    protocol : str
        One of :data:`SHUFFLE_SUM_PROTOCOLS`.
    epsilon, delta : float
        The target of one call.
    users : int
        ``n >= 1`` users (data points) in the call.
    dimension : int
        ``D >= 1`` coordinates (1 for the scalar protocol).
    bound : float
        ``B > 0``: the bound on each input (its ℓ2 norm for the vector protocols).

    Returns
    -------
    ShuffleSumParameters
    """
    if protocol not in SHUFFLE_SUM_PROTOCOLS:
        raise ParameterError("protocol", protocol, "one of " + ", ".join(SHUFFLE_SUM_PROTOCOLS))
    eps = v.positive("epsilon", epsilon)
    dl = v.open_unit("delta", delta)
    n = v.integer("users", users, minimum=1)
    d = v.integer("dimension", dimension, minimum=1)
    bnd = v.positive("bound", bound)
    if protocol == "dpdpe-scalar" and d != 1:
        raise ParameterError("dimension", dimension, "1 (dpdpe-scalar sums scalars)")
    with mp.workdps(50):
        e = mp.mpf(eps)
        if protocol == "dpdpe-scalar":
            if not (eps < 30 and dl < 0.5):
                raise ParameterError(
                    "epsilon" if eps >= 30 else "delta", eps if eps >= 30 else dl,
                    "ε in (0, 30) and δ in (0, 1/2) (Theorem C.6 of the DP-DPE paper)",
                )  # fmt: skip
            g = _ceil(2 * mp.mpf(bnd) * mp.sqrt(n))
            half = e / 2
            ln_d = mp.log(2 / mp.mpf(dl))
            b, p = _cheu_binomial(g, ln_d, half, n)
            levels = g
            theorem = f"({eps:g}, {dl:g})-SDP: DP-DPE Theorem C.6 (Cheu et al. 2021 Lemma 3.1 at ε/2)"
        elif protocol == "dpdpe-vector":
            if not (eps < 15):
                raise ParameterError("epsilon", eps, "ε in (0, 15) (Theorem 4.6 / A.2 of the DP-DPE paper)")
            hat = e / (18 * mp.sqrt(mp.log(2 / mp.mpf(dl))))
            ln_d = mp.log(4 * d / mp.mpf(dl))
            g = max(_ceil(hat * mp.sqrt(n) / (6 * mp.sqrt(5 * ln_d))), _ceil(mp.sqrt(d)), 10)
            b, p = _cheu_binomial(g, ln_d, hat, n)
            levels = g
            theorem = f"({eps:g}, {dl:g})-SDP: DP-DPE Theorem 4.6 / A.2 (Cheu et al. 2021 vector sum)"
        else:
            if not (eps <= 15 and dl < 0.5):
                raise ParameterError(
                    "epsilon" if eps > 15 else "delta", eps if eps > 15 else dl,
                    "ε in (0, 15] and δ in (0, 1/2) (Cheu et al. 2021, as in the federated LCB paper)",
                )  # fmt: skip
            g = max(_ceil(2 * mp.sqrt(n)), d, 4)
            b = _ceil(24 * 10**4 * g**2 * mp.log(4 * (d + 1) / mp.mpf(dl)) ** 2 / (e**2 * n))
            p = 0.25
            levels = 2 * g
            theorem = f"({eps:g}, {dl:g})-SDP: P_Vec of Cheu et al. 2021 (federated LCB paper §5.3.2)"
    return ShuffleSumParameters(
        protocol, eps, dl, n, d, bnd, int(g), int(levels), int(b), p, d * (int(levels) + int(b)), theorem
    )
