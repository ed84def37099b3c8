"""The noise level ``σ0`` of the federated LinUCB paper's privacy protocols (Zhou & Chowdhury 2024).

**Noise level** ``σ0`` (``sigma_mode``), for ``κ = ⌊log2(T/B)⌋ + 1`` releases per stream:

* ``"exact"`` (default): :func:`accounting.tree.calibrate_sigma`, the least ``σ0`` whose release
  (``κ`` Gaussian nodes per stream, exact GDP accounting) meets ``(ε, δ)`` under the chosen
  sensitivities — certified;
* ``"paper"``: Theorem 5.1's ``σ0² = 8κ(log(2/δ) + ε)/ε²`` (:func:`accounting.tree.paper_sigma`;
  derived for ``L = 1``, loose enough that it holds even with replace-one sensitivities, as exact
  accounting shows);
* ``"code"``: the authors' code ``σ0 = √(κ(log(1/δ) + ε))/ε`` (:func:`accounting.tree.code_sigma`),
  for reproducing the figures only: it does **not** meet its claim in general (it is
  ``√8`` times the paper's and has ``log(1/δ)`` for ``log(2/δ)``: at ``(5, 0.1)`` its exact
  ``δ(5) ≈ 0.18`` at ``L = 1``). The run still reports the exact ε of what it
  released, and :attr:`Privacy.meets_claim` says whether the claim holds.

**SDP via amplification** (Theorem 5.3 and Lemma F.2, App. F; the explicit constants are our
reconstruction, the theorem states σ0 only up to O(·)). The shuffler permutes the ``M`` silos'
messages, which leaves the server's sum unchanged, so only ``σ0`` differs: ``sigma_mode="exact"`` is
:func:`accounting.papers.federated_lcb.theorem53_sigma0` (explicit constants, Lemma F.2 inverted, advanced
composition over ``κ`` releases per stream, sensitivity the larger of the two streams'), and a
setting where Lemma F.2's hypotheses fail for every ``ε0`` (it needs ``M > 16 ln(2/δ_lemma)``: the
paper's ``M = 100`` at ``δ = 10⁻⁴`` or ``0.1``) is refused as infeasible
(:class:`~learners.errors.ProtocolError`, before anything runs; :func:`noise_of` reports it);
``"code"`` is the authors' ``σ0 = √(κ log(1/δ) log(1 + κ/(Tδ)) log(Mκ/δ))/(ε√M)``, for reproducing
Figure 2(a) uncertified (``"paper"`` has no constants and is refused). The ledger holds the Gaussian
node releases as for silo-level LDP: each silo's transcript is an adaptive composition in which only
the changed user's silo's ``κ`` nodes per stream depend on her, so its exact ε is also a central
(shuffle-model) guarantee; :attr:`Privacy.epsilon` is the smaller of it and Theorem 5.3's certified
total (where the run's δ covers the theorem's). Inside the theorem's range ``σ0 ≳ T·polylog`` (our
reading of the theorem's conditions ``ε ≲ √κ/(T√M)``), so the plain Gaussian ledger is usually the
smaller.

**SDP via the vector-sum protocol P_T^Vec** (Algorithms 5-6, App. F.2, and Theorem 5.5; P_Vec is
Cheu, Joseph, Mao & Peng (2021)). The node of level ``i`` is one P_Vec call over its
``n_i = 2^i B M`` data points (every silo's per-round ``x y`` and upper triangle of ``x xᵀ``, norms
``<= clip`` and ``<= 1``), re-randomized afresh in each call; the analyzer's view is simulated
exactly by :func:`learners.protocols.shuffle_sum`'s count path (``Σ x̂ + Bin(n b, p)``), one batch
at a time (:meth:`learners.linear.state.State.vector_step`). Its noise is central-level (one noise
per call, no factor ``M``: ``λ`` and the theory radius use ``√κ σ̂``). ``sigma_mode="exact"``:
:func:`accounting.calibration.shuffle_sum_parameters` ``("cheu-vector")`` at a per-call ``(ε0, δ0)``
with ``δ0 = δ/(4κ)`` and ``ε0`` the largest whose optimal composition over the ``2κ`` calls a user's
two points enter meets ``(ε, δ)``; the ledger holds those ``ApproxDP`` calls and ``ε`` is their
Kairouz–Oh–Viswanath composition (the accountant's ``pld`` route), certified for the lazy variant
(Algorithm 1's within-batch adaptivity changes up to ``B`` points: :mod:`learners.linear.privacy`).
``"code"``: the authors' ``b = ⌈g² ln(d²/δ)²/(ε² n)⌉`` (``scale = 1``, ceil instead of numpy's
truncation), uncertified: no ledger, ``ε = inf``. The ``scale ≈ 24·10⁴`` of the theory mode (Cheu et
al. 2021 as recalled, constants uncertain) makes its noise far larger than the code's (σ̂ ≈ 10⁴
against 2 at ``d = 4``, ``ε = 1``).

**Sensitivities** (``sensitivity``; derived here: the paper states ``L = 1`` only).
``"replace-one"`` (default, the paper's relation): ``2c`` on the bias stream and ``√2`` on the
covariance, with rewards clipped to ``[-c, c]`` (``clip``, default 1) and features of norm 1;
``"add-remove"``: ``c`` and 1 (the paper's ``L = 1``); ``"batch"``: ``2cB`` and ``√2 B``
(replace-one), which covers Algorithm 1's within-batch adaptivity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from mpmath import mp

from accounting import validate as v
from accounting.accountant import Accountant, Event
from accounting.calibration import ShuffleSumParameters, shuffle_sum_parameters
from accounting.certified import float_up
from accounting.mechanisms import ApproxDP
from accounting.neighbouring import Neighbouring
from accounting.papers.federated_lcb import Theorem53Calibration, theorem53_sigma0
from accounting.tree import (
    ADD_REMOVE,
    REPLACE_ONE,
    Sensitivities,
    Tree,
    calibrate_sigma,
    code_sigma,
    paper_sigma,
)
from learners.errors import ParameterError, ParameterTypeError, ProtocolError
from learners.linear.spec import Learner

__all__ = ["Noise", "VectorSum", "noise_of", "sensitivities_of"]


def sensitivities_of(learner: Learner, batch: int) -> Sensitivities:
    c = learner.bound if learner.bound is not None else 1.0
    if learner.sensitivity == "add-remove":
        if c == 1.0:
            return ADD_REMOVE
        return Sensitivities(c, 1.0, Neighbouring.ADD_REMOVE, f"add-remove, |y| <= {c:g}")
    if learner.sensitivity == "replace-one":
        if c == 1.0:
            return REPLACE_ONE
        return Sensitivities(
            float_up(2 * mp.mpf(c)), REPLACE_ONE.covariance, Neighbouring.REPLACE_ONE, "replace-one"
        )
    with mp.workdps(40):
        bias, cov = float_up(2 * mp.mpf(c) * batch), float_up(mp.sqrt(2) * batch)
    return Sensitivities(bias, cov, Neighbouring.REPLACE_ONE, f"batch (B = {batch}, replace-one)")


@dataclass(frozen=True)
class Noise:
    """The privacy noise of a run.

    Attributes
    ----------
    sigma0 : float
        Standard deviation of every node's noise, per coordinate (0 without privacy).
    mode : str
        How it was set (:data:`SIGMA_MODES`, or ``"none"``).
    syncs : int
        ``K``, the stream length the tree is sized for (``⌊T/B⌋``, or ``T`` for the adaptive rule).
    kappa : int
        ``κ = ⌊log2 K⌋ + 1``.
    sensitivities : Sensitivities or None
        What one user can change in each stream (``None`` without privacy).
    feasible : bool
        False when the mode certifies nothing for this setting (Theorem 5.3 outside Lemma F.2's
        hypotheses); then ``sigma0`` is ``inf`` and :func:`run` refuses.
    conditions : str
        What was checked (Theorem 5.3), or empty.
    amplified : tuple of (float, float) or None
        Theorem 5.3's certified total ``(ε, δ)`` at this σ0 (exact shuffle mode only).
    vector : VectorSum or None
        The P_T^Vec parameters (the vector-sum variants only); then ``sigma0`` is the largest
        per-coordinate noise sd of one node release, over levels and streams.
    """

    sigma0: float
    mode: str
    syncs: int
    kappa: int
    sensitivities: Sensitivities | None
    feasible: bool = True
    conditions: str = ""
    amplified: tuple[float, float] | None = None
    vector: VectorSum | None = None

    @property
    def tree(self) -> Tree | None:
        """The Gaussian tree release this noise makes (``None`` without privacy or for P_T^Vec)."""
        if not 0 < self.sigma0 < math.inf or self.sensitivities is None or self.vector is not None:
            return None
        return Tree(self.sigma0, self.syncs, 1, self.sensitivities)

    def copies(self, agents: int) -> int:
        """Independent noises in a node sum over the silos: ``M`` (each silo adds its own, protocol P)
        or 1 (P_Vec adds noise once per call, central-level: Zhou & Chowdhury (2024), Theorem 5.5,
        "no factor M")."""
        return 1 if self.vector is not None else agents


@dataclass(frozen=True)
class VectorSum:
    """The P_T^Vec protocol of a run (Zhou & Chowdhury (2024), Algorithms 5-6): a P_Vec call per node
    and stream.

    The node of level ``i`` sums ``n_i = 2^i B M`` data points (every silo's ``x y`` or upper
    triangle of ``x xᵀ`` of its ``2^i B`` rounds), each ``R_vec``-randomized afresh in every call
    it enters, at most ``κ`` per stream.

    Attributes
    ----------
    epsilon0, delta0 : float
        The cited per-call ``(ε0, δ0)``-SDP (``"exact"``), or the code's total ``(ε, δ)`` that its
        ``b`` is computed from (``"code"``, not a guarantee).
    bias, cov : tuple of ShuffleSumParameters
        Level ``i``'s parameters (``n_i`` users; ``D = d`` with bound ``clip``, ``D = d(d+1)/2``
        with bound 1).
    certified : bool
        Whether each call's ``(ε0, δ0)`` is the cited theorem's (``"exact"``: parameters from
        :func:`accounting.calibration.shuffle_sum_parameters` ``("cheu-vector")``); the code's
        ``scale = 1`` parameters certify nothing (not split over the calls, and ``scale`` far below
        the theorem's).
    """

    epsilon0: float
    delta0: float
    bias: tuple[ShuffleSumParameters, ...]
    cov: tuple[ShuffleSumParameters, ...]
    certified: bool

    @property
    def event(self) -> ApproxDP:
        """One call's cited guarantee, as the ledger holds it (both streams: the same pair)."""
        return ApproxDP(
            self.epsilon0,
            self.delta0,
            "P_Vec (Cheu et al. 2021) per call, federated LCB §5.3.2 / Theorem 5.5",
        )

    def variance(self, level: int, stream: str) -> tuple[float, float]:
        """Bounds on the per-coordinate noise variance of the level's release:
        ``n b p (1 - p) / scale²`` (the binomial part, exact) and that plus ``n/(4 scale²)`` (the
        randomized rounding adds ``Σ f(1 - f) <= n/4`` encoded units², data dependent)."""
        params = (self.bias if stream == "bias" else self.cov)[level]
        n, b, p, scale = params.users, params.b, params.p, params.scale
        binomial = n * b * p * (1 - p) / scale**2
        return binomial, binomial + n / (4 * scale**2)


@cache
def _calibrated(epsilon: float, delta: float, horizon: int, batch: int, sens: Sensitivities) -> float:
    return calibrate_sigma(epsilon, delta, horizon, batch, sens).value


@cache
def _theorem53(
    epsilon: float, delta: float, agents: int, horizon: int, batch: int, sensitivity: float
) -> Theorem53Calibration:
    return theorem53_sigma0(epsilon, delta, agents, horizon, batch, sensitivity)


def _code_sdp_sigma(epsilon: float, delta: float, kappa: int, agents: int, horizon: int) -> float:
    """The authors' code for Theorem 5.3: ``√(κ log(1/δ) log(1 + κ/(Tδ)) log(Mκ/δ))/(ε√M)`` (Zhou &
    Chowdhury (2024), Theorem 5.3 without its constants, with ``log(1 + κ/(Tδ))`` for the theorem's
    ``log(κ/(δT))``)."""
    with mp.workdps(40):
        e, d = mp.mpf(epsilon), mp.mpf(delta)
        inner = kappa * mp.log(1 / d) * mp.log1p(kappa / (horizon * d)) * mp.log(agents * kappa / d)
        return float_up(mp.sqrt(inner) / (e * mp.sqrt(agents)))


def noise_of(learner: Learner, horizon: int, agents: int | None = None, *, dim: int | None = None) -> Noise:
    """``σ0`` and the tree of ``learner`` over ``horizon`` rounds (calibrations are memoized).

    ``agents`` (``M``) is required by the shuffle variants, whose σ0 depends on it; ``dim``
    (``d``) by the vector-sum variants, whose P_Vec parameters depend on ``D = d, d(d+1)/2``.
    """
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.linear.Learner (see make_learner)")
    T = v.integer("horizon", horizon, minimum=1)
    batch = learner.batch if learner.batch is not None else 1
    if batch > T:
        raise ParameterError("horizon", horizon, f"an integer >= batch = {batch} (at least one sync)")
    syncs = T // batch
    kappa = syncs.bit_length()
    if not learner.private:
        return Noise(0.0, "none", syncs, kappa, None)
    assert learner.epsilon is not None
    assert learner.delta is not None
    sens = sensitivities_of(learner, batch)
    if learner.algorithm.model == "shuffle":
        if agents is None:
            raise ParameterError(
                "agents", agents, f"the number of silos M >= 1 (required by '{learner.name}')"
            )
        m = v.integer("agents", agents, minimum=1)
        if learner.algorithm.release == "vector-sum":
            if dim is None:
                raise ParameterError("dim", dim, f"the dimension d >= 1 (required by '{learner.name}')")
            d = v.integer("dim", dim, minimum=1)
            clip = learner.bound if learner.bound is not None else 1.0
            vec = _vector_sum(learner.epsilon, learner.delta, kappa, batch * m, d, clip, learner.sigma_mode)
            sd = max(math.sqrt(vec.variance(i, s)[1]) for i in range(kappa) for s in ("bias", "cov"))
            return Noise(float_up(sd), learner.sigma_mode, syncs, kappa, sens, vector=vec)
        if learner.sigma_mode == "code":
            sigma = _code_sdp_sigma(learner.epsilon, learner.delta, kappa, m, T)
            return Noise(sigma, "code", syncs, kappa, sens)
        cal = _theorem53(learner.epsilon, learner.delta, m, T, batch, max(sens.bias, sens.covariance))
        if not cal.valid:
            return Noise(math.inf, "exact", syncs, kappa, sens, False, cal.conditions)
        return Noise(cal.sigma0, "exact", syncs, kappa, sens, True, cal.conditions, (cal.epsilon, cal.delta))
    if learner.sigma_mode == "exact":
        sigma = _calibrated(learner.epsilon, learner.delta, T, batch, sens)
    elif learner.sigma_mode == "paper":
        sigma = paper_sigma(learner.epsilon, learner.delta, kappa)
    else:
        sigma = code_sigma(learner.epsilon, learner.delta, kappa)
    return Noise(sigma, learner.sigma_mode, syncs, kappa, sens)


#: Bisection steps for the per-call ε0 of P_T^Vec (relative precision ~2^-40).
_VEC_STEPS = 40


def _vec_total(epsilon0: float, delta0: float, calls: int, delta: float) -> float:
    """ε at ``delta`` of ``calls`` adaptive ``(ε0, δ0)``-DP releases: Kairouz–Oh–Viswanath's optimal
    composition (the accountant's ``pld`` route for cited pairs), rounded up."""
    accountant = Accountant(Neighbouring.REPLACE_ONE)
    accountant.compose(Event(ApproxDP(epsilon0, delta0, "P_Vec call"), calls))
    return float(accountant.epsilon(delta, route="pld"))


@cache
def _vec_budget(epsilon: float, delta: float, kappa: int) -> tuple[float, float]:
    """The per-call ``(ε0, δ0)`` of P_T^Vec's ``"exact"`` mode (a safe reading of Zhou & Chowdhury
    (2024), Theorem 5.5).

    A user's two data points (bias and covariance) each enter at most ``κ`` calls: ``2κ`` adaptive
    ``(ε0, δ0)``-SDP calls. ``δ0 = δ/(4κ)`` (half of ``δ`` spent by the calls, half left to the
    composition) and ``ε0`` the largest, by bisection, whose optimal composition (Kairouz–Oh–
    Viswanath) is at most ``ε`` at ``δ``; ``ε0 <= 15``, the range of P_Vec's guarantee. Theorem 5.5
    instead uses advanced composition with ``ε0 = ε/(2√(2κ log(2/δ)))`` and ``δ0 = δ/(2κ)`` per
    stream, which spends all of ``δ`` on the calls and drops the second-order term of advanced
    composition (our observation).
    """
    delta0 = delta / (4 * kappa)
    calls = 2 * kappa
    hi = min(15.0, epsilon)
    if _vec_total(hi, delta0, calls, delta) <= epsilon:
        return hi, delta0
    lo = 0.0
    for _ in range(_VEC_STEPS):
        mid = (lo + hi) / 2
        if _vec_total(mid, delta0, calls, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    if lo <= 0:
        raise ProtocolError(f"no per-call ε0 > 0 meets (ε, δ) = ({epsilon:g}, {delta:g}) over {calls} calls")
    return lo, delta0


def _code_vec_parameters(
    epsilon: float, delta: float, users: int, dim: int, coords: int, bound: float
) -> ShuffleSumParameters:
    """The authors' code's P_Vec parameters: ``g = max(⌈2√n⌉, d, 4)``, ``p = 1/4``,
    ``b = ⌈g² ln(d²/δ)²/(ε² n)⌉`` (``scale = 1``, the total ``(ε, δ)``; the code leaves ``b`` a
    float, which numpy truncates) — not a guarantee."""
    with mp.workdps(50):
        g = max(int(mp.ceil(2 * mp.sqrt(users))), dim, 4)
        b = max(
            1,
            int(
                mp.ceil(g**2 * mp.log(mp.mpf(dim) ** 2 / mp.mpf(delta)) ** 2 / (mp.mpf(epsilon) ** 2 * users))
            ),
        )
    levels = 2 * g
    return ShuffleSumParameters(
        "cheu-vector", epsilon, delta, users, coords, bound, g, levels, b, 0.25, coords * (levels + b),
        "UNCERTIFIED: the authors' code's P_Vec parameters (scale = 1, total (ε, δ), not split over calls)",
    )  # fmt: skip


@cache
def _vector_sum(
    epsilon: float, delta: float, kappa: int, users0: int, dim: int, clip: float, mode: str
) -> VectorSum:
    """P_T^Vec's parameters per level (``n_i = 2^i users0``, ``users0 = B M``)."""
    cov = dim * (dim + 1) // 2
    if mode == "code":
        bias = tuple(_code_vec_parameters(epsilon, delta, users0 << i, dim, dim, clip) for i in range(kappa))
        covs = tuple(_code_vec_parameters(epsilon, delta, users0 << i, dim, cov, 1.0) for i in range(kappa))
        return VectorSum(epsilon, delta, bias, covs, False)
    eps0, delta0 = _vec_budget(epsilon, delta, kappa)
    bias = tuple(
        shuffle_sum_parameters("cheu-vector", eps0, delta0, users0 << i, dim, clip) for i in range(kappa)
    )
    covs = tuple(
        shuffle_sum_parameters("cheu-vector", eps0, delta0, users0 << i, cov, 1.0) for i in range(kappa)
    )
    return VectorSum(eps0, delta0, bias, covs, True)
