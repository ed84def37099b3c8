"""The privacy noise of the DP-DPE paper's privatizers (Li, Zhou & Ji 2022).

**Noise (``calibration``).** The Gaussian privatizers (central and local) release a query of ℓ2
sensitivity ``Δ`` (``2B√s_l/|U_l|`` central, ``2B√s_l`` local, ``2B`` for DP-PE, all under
replace-one, §4.1) with noise ``σ = z Δ``; the noise multiplier ``z`` comes from :mod:`accounting`:

* ``"exact"`` (default): :func:`accounting.calibration.calibrate` ``("gaussian", ε, δ)``, the least
  ``z`` whose Gaussian mechanism the :class:`~accounting.accountant.Accountant` certifies
  ``(ε, δ)``-DP (the analytic Gaussian mechanism of Balle & Wang 2018, accounted exactly);
* ``"classic"``: the paper's ``z = sqrt(2 ln(1.25/δ))/ε`` (eqs. 5, 7; Dwork & Roth 2014, Theorem A.1),
  by :func:`learners.gaussian.classic_sigma`. That theorem is proved only for ``ε < 1``; the
  paper uses it at ``ε = 10`` (§7), where it does **not** give its claim: at ``(10, 0.25)`` the
  classic ``z = 0.1794`` is only ``(18.36, 0.25)``-DP, and the exact ``z = 0.2472`` is 1.38 times
  larger. The exact ``z`` is the smaller wherever the classic one meets its target (always below
  ``ε = 1``: 0.42 times at ``(1, 0.25)``, 0.77 at ``(1, 10⁻⁵)``); at ``δ = 0.25`` the classic
  formula stops being ``(ε, δ)``-DP between ``ε = 4`` (its exact ε 3.14) and ``ε = 6`` (6.95),
  at ``δ = 10⁻⁵`` between 8 and 10. At large ε the exact ``z`` falls as ``1/sqrt(2ε)``, not as
  ``1/ε``. A run reports the exact ε of what it released either way
  (:attr:`Privacy.meets_claim`).

The released σ is ``z Δ`` rounded up by a relative ``4·2⁻⁵²`` (the float products of ``Δ`` must not
leave ``σ/Δ`` an ulp below ``z``). The shuffle protocols' parameters come from
:func:`accounting.calibration.shuffle_sum_parameters` (``"dpdpe-vector"``: Algorithm 2 with
``Δ_2 = B√s_l``, eq. 22, constants as we rebuilt them from the OCR; ``"dpdpe-scalar"``: Algorithm 4
at ``ε/2``, Theorem C.6) and run through :func:`learners.protocols.shuffle_sum` (its exact count
path: the ones of a coordinate are ``Σ x̂ + Bin(n b, p)``; the analyzer's output divided by
``|U_l|`` is Algorithm 2's average).

**Modes** (``mode``; every result and label names it).

* ``"faithful"`` (default; the correctness tests): the paper's formulas and constants. ``σ_n`` of
  Table 3: ``2σ_nc sqrt(S d)`` (central), ``2σ_nl sqrt(S d/|U_l|)`` (local, as we rebuilt it),
  ``2σ_ns sqrt(S d)`` (shuffle) with ``S = 4d ln ln d + 16`` (104 at ``d = 20``, natural logarithms;
  ``S_eff = max(S, s_l)`` when a design's support exceeds it, so that ``T_l <= h_l + S_eff``), and
  Theorem A.2's ``σ_ns² = 360 Δ_2² ln(4s/δ)/(|U|² ε̂²)``, ``ε̂ = ε/(18 sqrt(ln(2/δ)))`` — or the
  protocol's variance bound ``(n/4 + n b p(1-p))/(scale² n²)`` where that is larger (deviation: the
  proof's last step is loose by a factor 2 when ``g`` is set by its first term; at the paper's
  settings the theorem's value is the larger, by ``√2``). DP-PE's Table 4: ``2d σ_nc √s_l/h_l``,
  ``2d σ_nl sqrt(2 s_l/h_l)``, ``2d σ_ns √s_l/h_l`` with ``σ_ns`` the scalar protocol's variance
  bound (the paper gives only ``O(B sqrt(ln(1/δ))/ε)``; deviation: its exact bound is used).
* ``"practical"`` (our hypothesis for the paper's Figure 2, §7): a data-dependent privacy width, the
  exact standard deviation of
  the privacy term of ``⟨θ̂_l, x'⟩``, ``max_{x'∈D_l} sqrt(Σ_x T_l(x)² ⟨x', V_l⁺ x⟩² σ_x²)`` (DP-PE:
  without the ``T_l(x)²``), instead of the ``2 sqrt(S d)`` inflation (about 91 at ``d = 20``); and for SDP-DPE
  a Gaussian stand-in: Gaussian noise at the rate of Theorem 4.6 with constant 1,
  ``σ_ns = B √s_l ln(s_l/δ)/(ε |U_l|)``, added to the average — a *surrogate*, not a protocol:
  nothing is certified (:attr:`Privacy.certified` is false, no ledger). With the paper's own
  constants SDP-DPE's noise is *larger* than LDP-DPE's averaged noise at ``|U_l| ≈ 4·10⁴``,
  so its Figure 2 ("SDP close to CDP") cannot come from them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Event
from accounting.calibration import ShuffleSumParameters, shuffle_sum_parameters
from accounting.mechanisms import AdditiveNoise
from accounting.noise import Gaussian
from learners.errors import ParameterTypeError
from learners.gaussian import classic_sigma, gaussian_multiplier, releases_epsilon
from learners.phased.spec import Learner
from learners.protocols import shuffle_sum

__all__ = [
    "SIGMA_UP",
    "Noise",
    "noise_of",
    "released_event",
    "sdp_average",
    "sdp_dpe_parameters",
    "sdp_pe_parameters",
    "theorem_a2_sd",
]

FloatArray = NDArray[np.float64]

#: Relative amount a released σ = zΔ is rounded up by (4 float operations of at most half an ulp).
SIGMA_UP = 1.0 + 4 * 2.0**-52


def _sqrt_down(q: Fraction) -> float:
    """The largest float ``r`` with ``r² <= q`` (``q > 0``, exact): a square root rounded down."""
    r = math.sqrt(float(q))
    while r > 0 and Fraction(r) ** 2 > q:
        r = math.nextafter(r, 0.0)
    while Fraction(up := math.nextafter(r, math.inf)) ** 2 <= q:
        r = up
    return r


def released_event(sigma: FloatArray, squared_sensitivity: Sequence[Fraction], multiplier: float) -> Event:
    """The ledger event of a phase of DP-DPE whose repetitions released ``N(0, σ_j² I)`` on queries of
    ℓ2 sensitivity ``Δ_j``, from the very ``σ_j`` that scaled the draws.

    The Gaussian mechanism's ``δ(ε)`` depends on ``σ`` and ``Δ`` only through ``σ/Δ`` (Balle & Wang
    2018, Theorem 8; Li, Zhou & Ji 2022, Thm A.1 as used in §4), and releasing ``q + N(0, σ² I)``
    is releasing ``q/Δ + N(0, (σ/Δ)² I)`` up to a data-independent rescaling: the release of
    repetition ``j`` is exactly ``AdditiveNoise(Gaussian(σ_j/Δ_j), 1)``. ``σ_j`` and ``Δ_j`` scale
    with ``√s_l``, which differs between repetitions (and so between the chunks a run is split
    into), while a phase has one ledger: it holds the least ``σ_j/Δ_j`` of the phase, the worst
    client's, computed exactly (``(σ_j/Δ_j)² = σ_j²/Δ_j²`` in rationals, ``Δ_j²`` the true squared
    sensitivity) and rounded down. Where every ``σ_j/Δ_j`` is at least the calibrated ``z`` (always,
    by :data:`SIGMA_UP`) the ledger is ``AdditiveNoise(Gaussian(z), 1)``, the same in every chunk;
    a release below ``z`` (less noise than calibrated) is recorded as it is.

    Parameters
    ----------
    sigma : numpy.ndarray, shape (m,)
        ``σ_j``, the standard deviation of every released coordinate's noise (each client's, in
        the local model) in repetition ``j``.
    squared_sensitivity : sequence of Fraction, length m
        ``Δ_j²``: ``(2B)² s_l/|U_l|²`` (central, eq. 19) or ``(2B)² s_l`` (local, eq. 21).
    multiplier : float
        The calibrated ``z``.

    Returns
    -------
    Event
    """
    worst = min(
        Fraction(float(sd)) ** 2 / sq for sd, sq in zip(sigma.tolist(), squared_sensitivity, strict=True)
    )
    ratio = multiplier if worst >= Fraction(multiplier) ** 2 else _sqrt_down(worst)
    return Event(AdditiveNoise(Gaussian(ratio), 1.0))


@dataclass(frozen=True)
class Noise:
    """The privacy noise of a learner (:func:`noise_of`).

    Attributes
    ----------
    model : str
        The trust model (``"none"``, ``"central"``, ``"local"``, ``"shuffle"``).
    kind : str
        ``"none"``, ``"gaussian"`` (central and local), ``"protocol"`` (the shuffle protocols,
        run bit for bit in law) or ``"surrogate"`` (practical SDP-DPE's Gaussian, uncertified).
    calibration : str
        ``"exact"`` or ``"classic"`` for ``"gaussian"``, else ``kind``.
    multiplier : float
        ``z = σ/Δ`` of the Gaussian privatizer run (0 otherwise).
    exact_multiplier, classic_multiplier : float
        Both calibrations' ``z`` (0 when not Gaussian), side by side.
    exact_epsilon, classic_epsilon : float
        The Accountant's exact ε at δ of each multiplier (``inf`` when not Gaussian).
    """

    model: str
    kind: str
    calibration: str
    multiplier: float = 0.0
    exact_multiplier: float = 0.0
    classic_multiplier: float = 0.0
    exact_epsilon: float = math.inf
    classic_epsilon: float = math.inf


def noise_of(learner: Learner) -> Noise:
    """The noise ``learner`` runs with (calibrations are memoized per ``(ε, δ)``)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.phased.Learner (see make_learner)")
    model = learner.model
    if model == "none":
        return Noise("none", "none", "none")
    assert learner.epsilon is not None
    assert learner.delta is not None
    if model == "shuffle":
        kind = "surrogate" if (learner.mode == "practical" and not learner.single) else "protocol"
        return Noise(model, kind, kind)
    eps, delta = learner.epsilon, learner.delta
    exact, classic = gaussian_multiplier(eps, delta), classic_sigma(eps, delta)
    z = exact if learner.calibration == "exact" else classic
    return Noise(
        model,
        "gaussian",
        learner.calibration,
        z,
        exact,
        classic,
        releases_epsilon([AdditiveNoise(Gaussian(exact), 1.0)], delta),
        releases_epsilon([AdditiveNoise(Gaussian(classic), 1.0)], delta),
    )


@cache
def sdp_dpe_parameters(
    epsilon: float, delta: float, clients: int, support: int, bound: float
) -> ShuffleSumParameters:
    """Algorithm 2's parameters for ``|U| = clients`` reports of ``s = support`` coordinates,
    ``Δ_2 = B√s`` (:func:`accounting.calibration.shuffle_sum_parameters` ``("dpdpe-vector")``)."""
    return shuffle_sum_parameters(
        "dpdpe-vector", epsilon, delta, clients, support, bound * math.sqrt(support)
    )


@cache
def sdp_pe_parameters(epsilon: float, delta: float, clients: int, bound: float) -> ShuffleSumParameters:
    """Algorithm 4's parameters for ``n = clients`` rewards in ``[-B, B]`` (Theorem C.6, run at ε/2)."""
    return shuffle_sum_parameters("dpdpe-scalar", epsilon, delta, clients, 1, bound)


def theorem_a2_sd(params: ShuffleSumParameters) -> float:
    """Theorem A.2's ``σ_ns = sqrt(360 Δ_2² ln(4s/δ)/(|U|² ε̂²))``, ``ε̂ = ε/(18 sqrt(ln(2/δ)))``,
    or the protocol's variance bound on the average where that is larger (the module docstring, Modes)."""
    n, s, delta = params.users, params.dimension, params.delta
    hat = params.epsilon / (18 * math.sqrt(math.log(2 / delta)))
    paper = 360 * params.bound**2 * math.log(4 * s / delta) / (n**2 * hat**2)
    return math.sqrt(max(paper, params.variance() / n**2))


def sdp_average(
    reports: FloatArray, params: ShuffleSumParameters, rng: np.random.Generator, *, messages: bool = False
) -> FloatArray:
    """Algorithm 2's output: the analyzer's estimate of the clients' average report.

    ``reports`` has shape ``(R, |U|, s)`` (entries in ``[-B, B]``, so ``‖y‖₂ <= Δ_2 = B√s``);
    :func:`learners.protocols.shuffle_sum` estimates the sum (``messages=True``: every bit
    materialized and shuffled), and ``o = sum/|U|`` is Algorithm 2's
    ``(2Δ_2/(g|U|))(Σ bits - b|U|p) - Δ_2``.
    """
    return shuffle_sum(reports, params, rng, messages=messages) / params.users
