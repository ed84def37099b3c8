"""Shuffle summation protocols: bits with binomial noise (Cheu, Joseph, Mao & Peng 2021).

Each of ``n`` users encodes every coordinate of its input in ``{0, ..., levels}`` (a shift, a
scaling and randomized rounding), adds ``Bin(b, p)`` and sends that many ones among
``levels + b`` one-bit messages tagged with the coordinate; a shuffler permutes all the bits and
the analyzer counts the ones of each coordinate. The protocol is Cheu, Joseph, Mao & Peng,
"Shuffle private stochastic convex optimization" (2021), Lemma 3.1 (scalars) and its vector
form ``P_Vec``, as three papers parametrise it:

* :func:`shuffle_sum_parameters` gives ``g``, ``b``, ``p`` and the cited ``(ε, δ)``-SDP of one call
  of each protocol of :data:`SHUFFLE_SUM_PROTOCOLS`: Algorithm 4 (Theorem C.6) and Algorithm 2
  (Theorem 4.6 / A.2) of Li, Zhou & Ji 2022, "Differentially private linear bandits with partial
  distributed feedback" (DP-DPE), and ``P_Vec`` as Zhou & Chowdhury 2024 (ICLR), "On differentially
  private federated linear contextual bandits", §5.3 uses it;
* :func:`shuffle_sum_ledger` accounts one call *exactly*, not through a theorem: the server's view
  is the count of ones of each coordinate, the users' encoded sum plus ``Bin(b n, p)``, at
  sensitivity ``levels`` (the reduction is written out above :func:`shuffle_sum_ledger`).
  :func:`shuffle_sum_epsilon`, :func:`shuffle_sum_delta` and :func:`shuffle_sum_rdp` answer for
  one call (exact for one coordinate; for ``D`` coordinates exact at ``p = 1/2``, else a certified
  bound: within about ``1/(2b)`` relatively at the DP-DPE protocols' ``p``, looser far from 1/2);
* :func:`shuffle_sum_calibration` finds the least ``b`` by that exact accounting, beside the cited
  one (``dp-account shuffle-protocol --exact``).

The parameters are re-exported by :mod:`accounting.calibration` and the accounting by
:mod:`accounting.shuffle`, where they were first written.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath import mp

from accounting import validate as v
from accounting.accountant import Accountant
from accounting.bounds.gaussian import gaussian_sigma_analytic
from accounting.certified import DEFAULT_DPS, Enclosure, Mpf, float_up
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError
from accounting.mechanisms import AdditiveNoise, ApproxDP
from accounting.neighbouring import Neighbouring
from accounting.noise import Binomial, CenteredBinomial, LatticeNoise
from accounting.search import bracket_and_search

__all__ = [
    "SHUFFLE_SUM_PROTOCOLS",
    "ShuffleSumCalibration",
    "ShuffleSumParameters",
    "shuffle_sum_calibration",
    "shuffle_sum_delta",
    "shuffle_sum_epsilon",
    "shuffle_sum_exact",
    "shuffle_sum_ledger",
    "shuffle_sum_noise",
    "shuffle_sum_parameters",
    "shuffle_sum_rdp",
]

# ---------------------------------------------------------------------------------------
# Parameters of the protocols, as the cited theorems set them
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


def _ceil(x: object) -> int:
    """``ceil`` of an mpf computed at 50 digits (the arguments are transcendental, no ties)."""
    return int(mp.ceil(x))


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
        Algorithm 4 of Li, Zhou & Ji 2022 (DP-DPE), Appendix C, eq. (60), whose Lemma C.5 is Cheu et
        al. 2021 Lemma 3.1, run at ``ε/2`` as its Theorem C.6 prescribes: ``g = ⌈2B√n⌉``,
        ``b`` the least integer ``> 180 g² ln(2/δ) / ((ε/2)² n)``,
        ``p = 90 g² ln(2/δ) / (b (ε/2)² n)``; ``(ε, δ)``-SDP for ``ε ∈ (0, 30)``, ``δ ∈ (0, 1/2)``.
        (A reading of the OCR'd text, which shows ``g = 2B√n``; the lemma only needs ``g >= B√n``,
        so the larger ``g`` is safe.)
    ``"dpdpe-vector"``
        Algorithm 2 of Li, Zhou & Ji 2022, eq. (22); Theorem 4.6 / A.2:
        ``ε̂ = ε / (18 sqrt(ln(2/δ)))``, ``g = max(⌈ε̂ √n / (6 sqrt(5 ln(4D/δ)))⌉, ⌈√D⌉, 10)``,
        ``b`` the least integer ``> 180 g² ln(4D/δ) / (ε̂² n)``, ``p = 90 g² ln(4D/δ) / (b ε̂² n)``;
        ``(ε, δ)``-SDP for ``ε ∈ (0, 15)``, ``δ ∈ (0, 1)``, inputs with ``‖x‖₂ <= B``. (The
        constants 18, 6√5, 180, 90 are reconstructed from the OCR'd text of the paper.)
    ``"cheu-vector"``
        ``P_Vec`` (Cheu et al. 2021) as Zhou & Chowdhury 2024, §5.3 (Algorithms 5–6, Theorem 5.5)
        uses it: ``g = max(⌈2√n⌉, D, 4)``, ``p = 1/4``,
        ``b = ⌈24·10⁴ g² ln(4(D + 1)/δ)² / (ε² n)⌉``, inputs shifted into ``[0, 2L]``
        (``levels = 2g``); ``(ε, δ)``-SDP for ``ε ∈ (0, 15]``, ``δ ∈ (0, 1/2)``. (The authors'
        released code uses ``b = g² ln(d²/δ)²/(ε² n)`` with no constant, which the theorem does
        not cover; it is not offered here.)

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


# --------------------------------------------------------------------------------------------
# The shuffle summation protocols (bits with binomial noise), accounted exactly
# --------------------------------------------------------------------------------------------
#
# What the server sees (ShuffleSumParameters: n users, D coordinates, each coordinate of each
# user's input encoded as x̂ ∈ {0, ..., levels} by a shift, a scaling and randomized rounding,
# then sent as x̂ + Bin(b, p) ones among levels + b bits tagged with the coordinate):
#
# 1. The view is the vector of counts. The shuffler outputs a uniformly random order of the
#    multiset of tagged bits; the multiset is fixed by the counts c_j of ones per coordinate (each
#    coordinate carries n (levels + b) bits), and its order is independent of the inputs given
#    the multiset. So the view and the counts are post-processings of each other: same privacy.
# 2. c_j = Σ_u x̂_{u,j} + X_j with X_j ~ Bin(b n, p): the users' Bin(b, p) are independent and
#    add up; the X_j are independent over j.
# 3. Replace one user's input. Given the other users' encodings (the same law on both sides: a
#    mixture with common weights) and a coupling of the changed user's two roundings, the pair is
#    (⊗_j (X_j + k_j), ⊗_j X_j) up to a common translation, with k_j ∈ [-levels, levels]; by joint
#    convexity of the hockey-stick divergence the view is no worse than the worst such k.
#    Binomial noise is log-concave, so the loss of (X + k, X) is monotone and δ(ε) is that of a
#    threshold set, sup_t [P(X >= t - k) - e^ε P(X >= t)], nondecreasing in |k| (for each sign):
#    every coordinate's pair is a post-processing of (X + levels, X) or of (X - levels, X).
#
# One coordinate (D = 1) is therefore exactly AdditiveNoise(Bin(b n, p), levels), both shifts;
# the worst case is attained (x = -B against x' = B is encoded as 0 against levels, no rounding).
# The two shifts differ unless p = 1/2 (Bin(N, p) reflected is Bin(N, 1 - p)).
#
# D coordinates: the pair is the product of D pairs, each (X + levels, X) or (X - levels, X). The
# PLD route composes symmetric noise only (a single dominating pair), so the ledger is built on a
# pair that dominates *both* shifts, by thinning: for p <= 1/2, Bin(N, p) is Bin(M, 1/2) with
# M ~ Bin(N, 2p) independent of the data (each trial is active with probability 2p, then a fair
# coin). Revealing M: when M >= M0, Bin(M, 1/2) is Bin(M0, 1/2) plus independent coins, so
# either shift is a post-processing of the symmetric pair (Y + levels, Y), Y ~ Bin(M0, 1/2)
# (X - levels against X is its mirror image y -> M0 - y); when M < M0, nothing is claimed. So each
# coordinate is dominated by that pair composed with the (0, τ)-DP pair of Kairouz, Oh &
# Viswanath, τ = P(M < M0) (their product is "with probability τ reveal the data, else the
# symmetric pair"), and the ledger is D × AdditiveNoise(CenteredBinomial(M0), levels) and
# D × ApproxDP(0, τ), composed by the PLD route. M0 (made even, so that the centred noise is
# symmetric; dropping a fair coin is a post-processing) is the τ-quantile of Bin(N, 2p), certified
# by Chernoff's bound. At p = 1/2, M = N and τ = 0: the ledger is exact for even N. The DP-DPE
# protocols' p is within 1/(2b) of 1/2 (b is the least integer above 180 s and p = 90 s/b), so M0
# is about N - n - 12 sqrt(n): the bound exceeds the exact value by about 1/(2b) relatively (plus
# D τ in δ; measured 1.4e-5 in ε for dpdpe-vector at (5, 0.01), n = 50, D = 3). Far from 1/2 it is
# loose: no thinning into fair coins keeps more than a fraction 2 min(p, 1-p) of the trials, so at
# cheu-vector's p = 1/4 the bound has 2/3 of the variance (ε about 15% high at δ = 10^-3).
#
# Inputs with ||x||_2 <= B cannot move every coordinate by the whole range at once: under that
# constraint the vector ledger is a certified upper bound, exact for inputs bounded per coordinate.
#
# The Rényi divergence is infinite at every order: X + levels puts mass where X has none (the
# binomial's support is finite), so the protocols are (ε, δ)-DP with δ > 0 only.

#: The largest tail τ the vector ledger leaves to an ApproxDP(0, τ) event, relative to the δ asked
#: (ε(δ)), or absolutely (δ(ε)): far below any δ that matters, and M0 is only about 12 standard
#: deviations of M below its mean.
_THINNING_TAIL = 1e-30
_THINNING_RELATIVE = 1e-10


def _count_noise(trials: int, p: float | Fraction) -> LatticeNoise:
    """``Bin(trials, p)`` (at ``p = 1/2`` centred, which changes no divergence and is symmetric
    for even ``trials``)."""
    return CenteredBinomial(trials) if Fraction(p) == Fraction(1, 2) else Binomial(trials, p)


def shuffle_sum_noise(params: ShuffleSumParameters) -> LatticeNoise:
    """The noise on each coordinate's count of ones: ``Bin(b n, p)`` (the users' ``Bin(b, p)`` add up).

    At ``p = 1/2`` it is given centred (:class:`~accounting.noise.CenteredBinomial`): a translation
    changes no divergence.
    """
    return _count_noise(params.b * params.users, params.p)


def _thinned(trials: int, p: float | Fraction, tail: float) -> tuple[int, Mpf]:
    """``(M0, τ)``: an even ``M0`` with ``P(Bin(trials, 2p) < M0) <= τ <= tail`` (certified; ``p``
    folded to ``<= 1/2`` first)."""
    q = 2 * min(Fraction(p), 1 - Fraction(p))
    if q == 1:
        return trials - trials % 2, mp.zero
    active = Binomial(trials, q)
    low, _ = active.window(mp.mpf(2) * mp.mpf(tail))
    low = max(low, 0)
    tau = active.cdf_bound(low - 1) if low > 0 else mp.zero
    return low - low % 2, tau


def shuffle_sum_ledger(
    params: ShuffleSumParameters, tail: float = _THINNING_TAIL, dps: int = DEFAULT_DPS
) -> Accountant:
    """One call of a shuffle summation protocol as a ledger (replace-one, the theorems' relation).

    One coordinate: exactly ``AdditiveNoise(Bin(b n, p), levels)``. ``D > 1`` coordinates: the
    dominating ledger of the reduction above (``D`` releases of ``CenteredBinomial(M0)`` at
    sensitivity ``levels``, and ``D`` of ``ApproxDP(0, τ)`` when ``p != 1/2``), composed exactly by
    the PLD route; exact when ``p = 1/2`` and ``b n`` is even, for inputs bounded per coordinate.

    Parameters
    ----------
    params : ShuffleSumParameters
        From :func:`shuffle_sum_parameters` or
        :func:`shuffle_sum_calibration`.
    tail : float
        The largest ``τ`` the thinning may leave (vectors with ``p != 1/2`` only), in ``(0, 1)``.
    dps : int
        Working precision of the ledger.

    Returns
    -------
    Accountant
    """
    if not isinstance(params, ShuffleSumParameters):
        raise ParameterTypeError("params", params, "a ShuffleSumParameters")
    t = v.open_unit("tail", tail)
    acc = Accountant(Neighbouring.REPLACE_ONE, dps)
    trials = params.b * params.users
    if params.dimension == 1:
        return acc.compose(AdditiveNoise(_count_noise(trials, params.p), params.levels))
    m0, tau = _thinned(trials, params.p, t)
    if m0 < 2:
        raise UnsupportedError(
            f"the thinning of Bin({trials}, {params.p!r}) keeps no trial with certainty 1 - {t:g}: "
            "too little noise to account the vector protocol"
        )
    acc.compose(AdditiveNoise(CenteredBinomial(m0), params.levels), params.dimension)
    if tau > 0:
        source = (
            f"thinning of Bin({trials}, p) into Bin(M, 1/2), M ~ Bin({trials}, 2p) below {m0} with "
            "probability at most this delta"
        )
        acc.compose(ApproxDP(0, float_up(tau), source), params.dimension)
    return acc


def shuffle_sum_exact(params: ShuffleSumParameters) -> bool:
    """Whether :func:`shuffle_sum_ledger` is the protocol's exact privacy (for inputs bounded per
    coordinate): one coordinate, or ``p = 1/2`` with ``b n`` even; otherwise a certified upper bound."""
    if params.dimension == 1:
        return True
    return Fraction(params.p) == Fraction(1, 2) and (params.b * params.users) % 2 == 0


def shuffle_sum_epsilon(params: ShuffleSumParameters, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
    """The certified ``ε(δ)`` of one call (:func:`shuffle_sum_ledger`; the route is named).

    The thinning's ``τ`` is at most ``10^-10 δ / D`` (and ``10^-30``).
    """
    d = v.open_unit("delta", delta)
    tail = min(_THINNING_TAIL, d * _THINNING_RELATIVE / params.dimension)
    return shuffle_sum_ledger(params, tail, dps).epsilon(d)


def shuffle_sum_delta(params: ShuffleSumParameters, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
    """The certified ``δ(ε)`` of one call (:func:`shuffle_sum_ledger`; the thinning's ``τ <= 10^-30``)."""
    eps = v.nonnegative("epsilon", epsilon)
    return shuffle_sum_ledger(params, _THINNING_TAIL, dps).delta(eps)


def shuffle_sum_rdp(params: ShuffleSumParameters, alpha: float, dps: int = DEFAULT_DPS) -> float:
    """The Rényi DP of one call at order ``α``: the sum over the coordinates of the worse of the two
    shifts' ``D_α`` (exact: the product of the coordinates' pairs), which is ``inf`` at every order,
    since ``Bin(b n, p) + levels`` has mass where ``Bin(b n, p)`` has none."""
    a = v.order("alpha", alpha)
    if not isinstance(params, ShuffleSumParameters):
        raise ParameterTypeError("params", params, "a ShuffleSumParameters")
    mech = AdditiveNoise(Binomial(params.b * params.users, params.p), params.levels)
    return Accountant(Neighbouring.REPLACE_ONE, dps).compose(mech, params.dimension).rdp(a)


@dataclass(frozen=True)
class ShuffleSumCalibration:
    """The least binomial noise of a shuffle summation protocol, by exact accounting, and the cited one.

    Attributes
    ----------
    cited : ShuffleSumParameters
        The parameters of the cited theorem (:func:`shuffle_sum_parameters`).
    exact : ShuffleSumParameters
        The same ``g`` and ``levels``, the least ``b`` at the chosen ``p`` whose certified ``ε(δ)``
        (:func:`shuffle_sum_epsilon`) is at most the target; its ``epsilon`` is that certified ε.
    epsilon : Enclosure
        The certified ``ε(δ)`` of ``exact`` (``epsilon.upper <= `` the target).
    exact_accounting : bool
        Whether that ε is the exact value (:func:`shuffle_sum_exact`) or a certified upper bound
        (vectors at ``p != 1/2``, or an odd ``b n``); the ``b`` found is then least for the bound.
    """

    cited: ShuffleSumParameters
    exact: ShuffleSumParameters
    epsilon: Enclosure
    exact_accounting: bool

    @property
    def saved_bits(self) -> int:
        """How many fewer one-bit messages each user sends per call than with the cited constants."""
        return self.cited.bits - self.exact.bits

    @property
    def saved_fraction(self) -> float:
        """:attr:`saved_bits` as a fraction of the cited bits."""
        return self.saved_bits / self.cited.bits


def shuffle_sum_calibration(
    protocol: str,
    epsilon: float,
    delta: float,
    users: int,
    dimension: int = 1,
    bound: float = 1.0,
    p: float = 0.5,
    dps: int = DEFAULT_DPS,
) -> ShuffleSumCalibration:
    """The least ``b`` (at success probability ``p``) meeting ``(ε, δ)`` by exact accounting.

    ``g`` and ``levels`` are the cited theorem's (:func:`shuffle_sum_parameters`: they set the
    rounding error, not the privacy); ``b`` is searched by the calibrations' search
    (:func:`accounting.search.bracket_and_search`: a bracket, then regula falsi) over the
    certified ``ε(δ)`` of :func:`shuffle_sum_epsilon`, each integer ``b`` accounted once. ``p = 1/2``
    (the default) gives the most variance per bit and a symmetric noise. The ``b`` returned was
    itself accounted and meets the target, and ``b - 1`` (unless ``b = 1``) was accounted and does not.

    Parameters
    ----------
    protocol, epsilon, delta, users, dimension, bound
        As :func:`shuffle_sum_parameters` (whose ranges apply).
    p : float
        The success probability of each user's binomial, in ``(0, 1)`` (accounted as the float it is,
        which the protocol's sampler uses).
    dps : int
        Working precision of each accounting.

    Returns
    -------
    ShuffleSumCalibration
    """
    cited = shuffle_sum_parameters(protocol, epsilon, delta, users, dimension, bound)
    prob = v.open_unit("p", p)
    dps = v.dps("dps", dps)
    target = cited.epsilon

    def at(b: int) -> ShuffleSumParameters:
        return dataclasses.replace(
            cited, b=b, p=prob, bits=cited.dimension * (cited.levels + b), theorem=_EXACT_THEOREM
        )

    answers: dict[int, Enclosure] = {}

    def excess(theta: float) -> float:
        """``ln ε(b) - ln target`` at ``b = ceil(θ)``: ``<= 0`` exactly when met (cached per ``b``)."""
        b = max(1, math.ceil(theta))
        if b not in answers:
            answers[b] = shuffle_sum_epsilon(at(b), cited.delta, dps)
        hi = answers[b].hi
        if hi > target:
            with mp.workdps(30):
                return max(float(mp.log(hi) - mp.log(target)), 1e-300)
        if hi == 0:
            return -math.inf
        with mp.workdps(30):
            return min(float(mp.log(hi) - mp.log(target)), 0.0)

    # Start from the analytic Gaussian's variance at the ℓ2 sensitivity levels·sqrt(D).
    sigma = gaussian_sigma_analytic(target, cited.delta, cited.levels * math.sqrt(cited.dimension))
    guess = max(1.0, sigma**2 / (cited.users * float(prob) * (1 - float(prob))))
    b = max(1, math.ceil(bracket_and_search(excess, guess, 0.0)))
    found = at(b)
    value = answers[b]
    found = dataclasses.replace(
        found, epsilon=value.upper, theorem=f"({value.upper:g}, {cited.delta:g})-SDP: {_EXACT_THEOREM}"
    )
    return ShuffleSumCalibration(cited, found, value, shuffle_sum_exact(found))


# The theorem a calibrated protocol cites (its results and ledgers show it): kept as first written,
# when these functions lived in accounting.shuffle.
_EXACT_THEOREM = (
    "exact accounting of the count of ones, the sum plus Bin(b n, p) at sensitivity levels "
    "(accounting.shuffle.shuffle_sum_ledger)"
)
