"""DP-DPE and DP-PE: private phased elimination for linear bandits with partial distributed feedback.

Li, Zhou & Ji, "Differentially Private Linear Bandits with Partial Distributed Feedback" (arXiv
2207.05827), spec ``dp-dpe.md``. A server plays actions of a fixed set ``D ⊂ R^d``, ``|D| = k``, in
phases; in phase ``l`` it plays a near-G-optimal design of the active actions ``D_l``
``T_l(x) = ⌈h_l π_l(x)⌉`` times each (:mod:`learners.design`), then aggregates the reports of
clients through a privatizer ``P = (R, S, A)``, fits ``θ̂_l`` by weighted least squares and
eliminates every action more than ``2 W_l`` below the best estimate (strictly, P12).

Algorithms (:data:`ALGORITHMS`):

================  =====================================  =======================================
name              what it is                             privatizer
================  =====================================  =======================================
``dpe``           Algorithm 1 without privacy (Thm 5.1)  plain average of the clients' reports
``cdp-dpe``       Algorithm 1, central DP (Thm 4.2)      the server adds ``N(0, σ_nc² I)`` (eq. 5)
``ldp-dpe``       Algorithm 1, local DP (Thm 4.4)        every client adds ``N(0, σ_nl² I)`` (eq. 7)
``sdp-dpe``       Algorithm 1, shuffle DP (Thm 4.6)      Algorithm 2, the vector shuffle protocol
``dpe-fixedu``    §7.3's DPE-FixedU: ``U`` clients in    plain average
                  every phase (equal communication)
``pe``            Algorithm 3 without privacy ([LS20])   plain sum of one reward per client
``cdp-pe``        Algorithm 3, central DP (Thm C.1)      the server adds ``N(0, σ_nc²)`` per action
``ldp-pe``        Algorithm 3, local DP (Thm C.3)        every client adds ``N(0, σ_nl²)``
``sdp-pe``        Algorithm 3, shuffle DP (Thm C.6)      Algorithm 4, the scalar shuffle protocol
================  =====================================  =======================================

**DP-DPE (Algorithm 1, spec §2).** ``h_l = 2^l``; after the plays of phase ``l``,
``|U_l| = ⌈2^{αl}⌉`` fresh clients (never reused: each user is in one phase at most, §8 P6) each
report the vector ``ȳ_l^u`` of their local averages over the ``s_l = |supp π_l|`` played actions,
clipped to ``[-B, B]`` (P7: the paper assumes ``|y| <= B``; the simulated noise is Gaussian and
unbounded, so the clipping makes the sensitivities ``2B√s_l`` true). ``θ_u = θ* + ξ_u``; a client's
local average over ``T_l(x)`` pulls is drawn in one step from its exact law,
``⟨θ_u, x⟩ + noise_sd · N(0, 1/T_l(x))`` (the mean of ``T_l(x)`` i.i.d. Gaussians, P15), and its
``ξ_u ~ N(0, σ² I)`` when it is sampled (a uniform sample without replacement from an i.i.d.
population is i.i.d., :mod:`learners.phased_instances`). ``θ̂_l = V_l⁺ Σ_x T_l(x) x ỹ_l(x)`` with
``V_l = Σ_x T_l(x) x xᵀ`` (the pseudo-inverse on the span of the support, P4). The width is eq. (3)
as rebuilt (§2.4 [RECON], checked term by term against the proofs and numerically by the tests)::

    W_l = ( sqrt(2d / (h_l |U_l|)) + σ / sqrt(|U_l|) + σ_n ) · sqrt(2 ln(1/β)),   β = 1/(kT).

**DP-PE (Algorithm 3, spec §4).** One fresh client per pull (``T`` users in all), ``θ_u = θ*``,
``h_l = S 2^{l-1}``; ``ỹ_l(x)`` is the private *sum* of the ``T_l(x)`` rewards of ``x`` (each
clipped to ``[-B, B]``), ``θ̂_l = V_l⁺ Σ_x x ỹ_l(x)`` (no ``T_l(x)`` weight, P14) and
``W_l = (sqrt(2d/h_l) + σ_n) sqrt(2 ln(1/β))`` (eq. 54).

**Noise (``calibration``).** The Gaussian privatizers (central and local) release a query of ℓ2
sensitivity ``Δ`` (``2B√s_l/|U_l|`` central, ``2B√s_l`` local, ``2B`` for DP-PE, all under
replace-one, §1.5) with noise ``σ = z Δ``; the noise multiplier ``z`` comes from :mod:`accounting`:

* ``"exact"`` (default): :func:`accounting.calibration.calibrate` ``("gaussian", ε, δ)``, the least
  ``z`` whose Gaussian mechanism the :class:`~accounting.accountant.Accountant` certifies
  ``(ε, δ)``-DP (the analytic Gaussian mechanism of Balle & Wang 2018, accounted exactly);
* ``"classic"``: the paper's ``z = sqrt(2 ln(1.25/δ))/ε`` (eqs. 5, 7; Dwork–Roth Thm A.1), by
  :func:`accounting.bounds.gaussian_sigma_classic`. That theorem is proved only for ``ε < 1``; the
  paper uses it at ``ε = 10``, where it does **not** give its claim (P8): at ``(10, 0.25)`` the
  classic ``z = 0.1794`` is only ``(18.36, 0.25)``-DP, and the exact ``z = 0.2472`` is 1.38 times
  larger. The exact ``z`` is the smaller wherever the classic one meets its target (always below
  ``ε = 1``: 0.42 times at ``(1, 0.25)``, 0.77 at ``(1, 10⁻⁵)``); at ``δ = 0.25`` the classic
  formula stops being ``(ε, δ)``-DP between ``ε = 4`` (its exact ε 3.14) and ``ε = 6`` (6.95),
  at ``δ = 10⁻⁵`` between 8 and 10. At large ε the exact ``z`` falls as ``1/sqrt(2ε)``, not as
  ``1/ε``. A run reports the exact ε of what it released either way
  (:attr:`Privacy.meets_claim`).

The released σ is ``z Δ`` rounded up by a relative ``4·2⁻⁵²`` (the float products of ``Δ`` must
not leave ``σ/Δ`` an ulp below ``z``). The shuffle protocols' parameters come from
:func:`accounting.calibration.shuffle_sum_parameters` (``"dpdpe-vector"``: Algorithm 2 with
``Δ_2 = B√s_l``, eq. 22 [RECON constants]; ``"dpdpe-scalar"``: Algorithm 4 at ``ε/2``,
Theorem C.6) and run through :func:`learners.protocols.shuffle_sum` (its exact count path: the
ones of a coordinate are ``Σ x̂ + Bin(n b, p)``; the analyzer's output divided by ``|U_l|`` is
Algorithm 2's average).

**Modes** (``mode``; every result and label names it).

* ``"faithful"`` (default; the correctness tests): the paper's formulas and constants. ``σ_n`` of
  Table 3: ``2σ_nc sqrt(S d)`` (central), ``2σ_nl sqrt(S d/|U_l|)`` (local, [RECON]),
  ``2σ_ns sqrt(S d)`` (shuffle) with ``S = 4d ln ln d + 16`` (104 at ``d = 20``, P2; ``S_eff =
  max(S, s_l)`` when a design's support exceeds it, P1), and Theorem A.2's
  ``σ_ns² = 360 Δ_2² ln(4s/δ)/(|U|² ε̂²)``, ``ε̂ = ε/(18 sqrt(ln(2/δ)))`` — or the protocol's
  variance bound ``(n/4 + n b p(1-p))/(scale² n²)`` where that is larger (deviation: the proof's
  last step is loose by a factor 2 when ``g`` is set by its first term, §3.3; at the paper's
  settings the theorem's value is the larger, by ``√2``). DP-PE's Table 4: ``2d σ_nc √s_l/h_l``,
  ``2d σ_nl sqrt(2 s_l/h_l)``, ``2d σ_ns √s_l/h_l`` with ``σ_ns`` the scalar protocol's variance
  bound (the paper gives only ``O(B sqrt(ln(1/δ))/ε)``; deviation: its exact bound is used).
* ``"practical"`` (§7.4): the data-dependent privacy width of §5.1, the exact standard deviation of
  the privacy term of ``⟨θ̂_l, x'⟩``, ``max_{x'∈D_l} sqrt(Σ_x T_l(x)² ⟨x', V_l⁺ x⟩² σ_x²)`` (DP-PE:
  without the ``T_l(x)²``), instead of the ``2 sqrt(S d)`` inflation (P10); and for SDP-DPE the
  spec's hypothesis for the figures: Gaussian noise at the rate of Theorem 4.6 with constant 1,
  ``σ_ns = B √s_l ln(s_l/δ)/(ε |U_l|)``, added to the average — a *surrogate*, not a protocol:
  nothing is certified (:attr:`Privacy.certified` is false, no ledger). With the paper's own
  constants SDP-DPE's noise is *larger* than LDP-DPE's averaged noise at ``|U_l| ≈ 4·10⁴`` (§7.4),
  so its Figure 2 ("SDP close to CDP") cannot come from them.

**Privacy: one release per client** (parallel composition, §5.2). Each client reports once, in
one phase, so the run is ``(ε, δ)``-private exactly when every phase's release is. The run writes,
as it releases, one :class:`~accounting.accountant.Accountant` per phase (``ledgers``, keyed by
``l``) holding that phase's event, built from the very ``σ`` that scales the noise drawn (never
from ``z`` beside it: halving the released noise changes the ledger). An isotropic Gaussian on an
ℓ2-bounded vector query is the scalar Gaussian mechanism ``AdditiveNoise(Gaussian(σ), Δ)``, whose
guarantee depends only on ``σ/Δ`` (Balle & Wang 2018, Thm 8). DP-PE releases the same
``(σ, Δ = 2B)`` in every repetition and phase (the server's noise on the sums, or each client's
on its reward), and its ledger holds ``AdditiveNoise(Gaussian(σ), 2B)`` as released. DP-DPE's
``σ_j`` and ``Δ_j`` (``2B√s_l/|U_l|`` central, ``2B√s_l`` local) scale with ``√s_l``, which
differs between repetitions and so between the chunks of a run, whose ledgers must agree: the
phase's ledger holds the release normalized by its sensitivity, ``AdditiveNoise(Gaussian(ρ), 1)``
with ``ρ`` the least ``σ_j/Δ_j`` of the phase computed exactly and rounded down, recorded as the
calibrated ``z`` when every ``σ_j/Δ_j >= z`` (always: ``σ_j`` is ``zΔ_j`` rounded up)
(:func:`_released_event`). The shuffle protocols' phases hold the cited ``ApproxDP(ε, δ)`` of
Theorem 4.6 / C.6. :attr:`Privacy.epsilon` is the largest certified ε over the phases at δ.

**Communication** (eq. 2, §9.8): ``Σ_l s_l |U_l|`` reals (DPE, CDP, LDP, DPE-FixedU),
``Σ_l (g_l + b_l) s_l |U_l|`` bits (SDP); DP-PE: one real, or ``g + b`` bits, per client. Only
phases that finish before ``T`` report: a phase cut off by the horizon is never aggregated (its
clients are not sampled, line 7 follows line 6), and is not counted.

**DPE-FixedU** (§7.3) samples ``U`` clients every phase; ``U`` (``clients``) defaults to
:func:`fixed_clients`, the mean of ``⌈2^{αl}⌉`` over the phases that can finish before ``T``
(``h_l = 2^l``), which equalizes the communication when ``s_l`` is constant (measured within a few
percent, see the tests). The spec's ``U ≈ 4.6·10³`` at ``T = 10⁶`` counts the 19th phase, which
does not finish (18 do: ``U = 2822``).

**Regret.** ``pseudo_regret`` is the paper's (eq. 1), against ``θ*``, exact per round: within a
phase the support is played in increasing action index, ``T_l(x)`` times each. ``realized_regret``
is, for DP-DPE, the regret on the mean parameter of the phase's clients, ``Σ_t ⟨θ̄_{U_l}, x* -
x_t⟩`` (the sample the server learns from; not the paper's measure, §1.2; equal to the
pseudo-regret in a phase without clients); for DP-PE, ``T⟨θ*, x*⟩ - Σ_t y_t`` with the rewards
the clients observed (unclipped). Once a single action remains (P4) it is played to ``T`` with no
further clients, and both curves add its gap per round.

**Vectorization and randomness.** Repetitions (leading axis ``R``), clients and actions are array
axes; phases loop. Repetition ``r`` draws its clients and rewards from streams seeded by four words
of ``tapes[r]`` (a fresh generator of the same seed gives every algorithm the same clients while
the designs agree), its design directions from another, and its privacy noise from a stream seeded
by the ``r``-th four words drawn from ``rng``: the only per-repetition Python loops draw random
numbers (and call the shuffle protocol, whose parameters depend on the repetition's ``s_l``), so a
repetition's numbers do not depend on how many run beside it.

**Measured** (``tests/benchmarks/test_phased_bench.py``): see that module's docstring.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.accountant import Accountant, Event
from accounting.answers import ledger_epsilon
from accounting.bounds import gaussian_sigma_classic
from accounting.calibration import ShuffleSumParameters, calibrate, shuffle_sum_parameters
from accounting.mechanisms import AdditiveNoise, ApproxDP
from accounting.neighbouring import Neighbouring
from accounting.noise import Gaussian
from learners.design import MAX_H, DesignWarning, g_optimal_design, pull_counts, support_bound
from learners.errors import ParameterError, ParameterTypeError
from learners.phased_instances import PhasedInstance
from learners.protocols import shuffle_sum

__all__ = [
    "ALGORITHMS",
    "CALIBRATIONS",
    "MODES",
    "Algorithm",
    "Learner",
    "Noise",
    "PhaseRecord",
    "Privacy",
    "RunResult",
    "clients_needed",
    "fixed_clients",
    "make_learner",
    "noise_of",
    "phase_clients",
    "privacy_of",
    "run",
    "sdp_average",
    "sdp_dpe_parameters",
    "sdp_pe_parameters",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

#: The largest horizon: ``h_l`` must stay within :data:`learners.design.MAX_H` for exact rounding.
MAX_HORIZON = int(MAX_H)

#: Bits of a real number on the wire (the real-valued privatizers' communication in bits).
FLOAT_BITS = 64

#: Relative amount a released σ = zΔ is rounded up by (4 float operations of at most half an ulp).
_SIGMA_UP = 1.0 + 4 * 2.0**-52


@dataclass(frozen=True)
class Algorithm:
    """An entry of :data:`ALGORITHMS`."""

    label: str
    #: The trust model: ``"none"``, ``"central"``, ``"local"`` or ``"shuffle"``.
    model: str
    #: ``"distributed"`` (Algorithm 1, DP-DPE) or ``"single"`` (Algorithm 3, DP-PE).
    setting: str
    #: DPE-FixedU: a fixed number of clients per phase.
    fixed_clients: bool = False

    @property
    def private(self) -> bool:
        return self.model != "none"


ALGORITHMS: dict[str, Algorithm] = {
    "dpe": Algorithm("DPE", "none", "distributed"),
    "cdp-dpe": Algorithm("CDP-DPE", "central", "distributed"),
    "ldp-dpe": Algorithm("LDP-DPE", "local", "distributed"),
    "sdp-dpe": Algorithm("SDP-DPE", "shuffle", "distributed"),
    "dpe-fixedu": Algorithm("DPE-FixedU", "none", "distributed", True),
    "pe": Algorithm("PE", "none", "single"),
    "cdp-pe": Algorithm("CDP-PE", "central", "single"),
    "ldp-pe": Algorithm("LDP-PE", "local", "single"),
    "sdp-pe": Algorithm("SDP-PE", "shuffle", "single"),
}

#: The paper's formulas and constants, or §7.4's data-dependent widths (module docstring).
MODES = ("faithful", "practical")
#: How the Gaussian privatizers' noise multiplier is set (module docstring).
CALIBRATIONS = ("exact", "classic")


@dataclass(frozen=True)
class Learner:
    """One algorithm with all its settings (a value; build it with :func:`make_learner`).

    Attributes
    ----------
    name : str
        A key of :data:`ALGORITHMS`.
    epsilon, delta : float or None
        The claimed ``(ε, δ)`` (required by the private algorithms, ``None`` otherwise);
        ``ε > 0``, ``δ ∈ (0, 1)``. The shuffle protocols' theorems need ``ε < 15`` (SDP-DPE,
        Theorem 4.6; faithful mode) and ``ε < 30``, ``δ < 1/2`` (SDP-PE, Theorem C.6).
    mode : {"faithful", "practical"}
        The paper's widths and constants, or §7.4's (module docstring).
    calibration : {"exact", "classic"}
        The Gaussian privatizers' noise multiplier (module docstring); ignored by the shuffle ones.
    alpha : float
        ``α ∈ (0, 1]``: ``|U_l| = ⌈2^{αl}⌉`` clients in phase ``l`` (DP-DPE; the paper: 0.8).
    bound : float
        ``B > 0``: reports are clipped to ``[-B, B]`` (local averages in DP-DPE, rewards in DP-PE).
    clip : bool or None
        Whether to clip (``None``: clip exactly when private; a private learner must clip).
    beta : float or None
        ``β ∈ (0, 1)`` of the widths (``None``: ``1/(kT)``, the theorems').
    support_constant : int or None
        ``S`` (``None``: :func:`learners.design.support_bound` ``(d)``, 104 at ``d = 20``).
    design_c : float
        The design's target ``g(π) <= (1 + c) d`` (``c = 1``: the paper's ``2d``).
    clients : int or None
        ``U`` of DPE-FixedU (``None``: :func:`fixed_clients`); only for that algorithm.
    client_sd : float or None
        The ``σ`` the widths assume (``None``: the instance's; P13).
    """

    name: str
    epsilon: float | None = None
    delta: float | None = None
    mode: str = "faithful"
    calibration: str = "exact"
    alpha: float = 0.8
    bound: float = 1.0
    clip: bool | None = None
    beta: float | None = None
    support_constant: int | None = None
    design_c: float = 1.0
    clients: int | None = None
    client_sd: float | None = None

    def __post_init__(self) -> None:
        algorithm = ALGORITHMS.get(self.name) if isinstance(self.name, str) else None
        if algorithm is None:
            raise ParameterError("algorithm", self.name, "one of " + ", ".join(ALGORITHMS))
        v.choice("mode", self.mode, MODES)
        v.choice("calibration", self.calibration, CALIBRATIONS)
        if algorithm.private:
            if self.epsilon is None or self.delta is None:
                missing = "epsilon" if self.epsilon is None else "delta"
                raise ParameterError(missing, None, f"a value (required by the private '{self.name}')")
            eps = v.positive("epsilon", self.epsilon)
            delta = v.open_unit("delta", self.delta)
            if self.name == "sdp-dpe" and self.mode == "faithful" and not eps < 15:
                raise ParameterError("epsilon", self.epsilon, "ε in (0, 15) (Theorem 4.6 / A.2, Algorithm 2)")
            if self.name == "sdp-pe" and not eps < 30:
                raise ParameterError("epsilon", self.epsilon, "ε in (0, 30) (Theorem C.6, Algorithm 4)")
            if self.name == "sdp-pe" and not delta < 0.5:
                raise ParameterError("delta", self.delta, "δ in (0, 1/2) (Theorem C.6, Algorithm 4)")
            object.__setattr__(self, "epsilon", eps)
            object.__setattr__(self, "delta", delta)
        else:
            for attr in ("epsilon", "delta"):
                if getattr(self, attr) is not None:
                    raise ParameterError(attr, getattr(self, attr), f"None for the non-private '{self.name}'")
        object.__setattr__(
            self,
            "alpha",
            v.interval("alpha", self.alpha, 0.0, 1.0, why="|U_l| = ⌈2^{αl}⌉ clients, α ∈ (0, 1]"),
        )
        object.__setattr__(self, "bound", v.positive("bound", self.bound))
        if self.clip is None:
            object.__setattr__(self, "clip", algorithm.private)
        elif not isinstance(self.clip, bool):
            raise ParameterTypeError("clip", self.clip, "True, False or None")
        elif algorithm.private and not self.clip:
            raise ParameterError(
                "clip",
                self.clip,
                "True or None for a private learner (the sensitivities assume |y| <= B, P7)",
            )
        if self.beta is not None:
            object.__setattr__(self, "beta", v.open_unit("beta", self.beta))
        if self.support_constant is not None:
            object.__setattr__(
                self, "support_constant", v.integer("support_constant", self.support_constant, minimum=1)
            )
        object.__setattr__(self, "design_c", v.positive("design_c", self.design_c))
        if self.clients is not None:
            if not algorithm.fixed_clients:
                raise ParameterError("clients", self.clients, "None (only 'dpe-fixedu' takes a fixed U)")
            object.__setattr__(self, "clients", v.count("clients", self.clients))
        if self.client_sd is not None:
            object.__setattr__(self, "client_sd", v.nonnegative("client_sd", self.client_sd))

    @property
    def algorithm(self) -> Algorithm:
        return ALGORITHMS[self.name]

    @property
    def private(self) -> bool:
        return self.algorithm.private

    @property
    def model(self) -> str:
        return self.algorithm.model

    @property
    def single(self) -> bool:
        """DP-PE (Algorithm 3): one client per pull."""
        return self.algorithm.setting == "single"

    @property
    def label(self) -> str:
        """A display label naming the mode, e.g. ``CDP-DPE(ε=10, faithful)``."""
        base = self.algorithm.label
        inner = f"ε={self.epsilon:g}, {self.mode}" if self.epsilon is not None else self.mode
        return f"{base}({inner})"


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them."""
    known = set(Learner.__dataclass_fields__) - {"name", "epsilon"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ParameterError(unknown[0], params[unknown[0]], "one of " + ", ".join(sorted(known)))
    return Learner(name, epsilon, **params)


# ---------------------------------------------------------------------------------------
# The schedule
# ---------------------------------------------------------------------------------------


def phase_clients(alpha: float, phase: int) -> int:
    """``|U_l| = ⌈2^{αl}⌉`` (Algorithm 1 line 7)."""
    a = v.interval("alpha", alpha, 0.0, 1.0)
    n = v.integer("phase", phase, minimum=1)
    clients: int = math.ceil(2.0 ** (a * n))
    return clients


def _completable(horizon: int) -> int:
    """Phases of DP-DPE that can finish within ``T``: ``T_l >= h_l = 2^l``, so at most the ``L`` with
    ``Σ_{l<=L} 2^l = 2^{L+1} - 2 <= T``."""
    return max(0, (horizon + 2).bit_length() - 2)


def fixed_clients(alpha: float, horizon: int) -> int:
    """DPE-FixedU's default ``U``: the mean of ``⌈2^{αl}⌉`` over the phases that can finish (§7.3).

    With ``s_l`` constant this gives DPE's communication ``Σ_l s_l |U_l|`` (rounded to the nearest
    integer ``U``) **if DPE runs every phase**. It does not once one arm is left: on spec §7.2's
    instance at ``T = 10^6`` DPE stops after 14 phases (40788 reals per run), and this ``U`` (2822)
    gives DPE-FixedU 15 times DPE's communication. For equal communication measure DPE's and pass
    ``clients`` (the shipped ``dpdpe-figure2c``: ``U = 84``).
    """
    T = v.integer("horizon", horizon, minimum=1)
    L = _completable(T)
    if L == 0:
        return 1
    return max(1, round(sum(phase_clients(alpha, j) for j in range(1, L + 1)) / L))


def clients_needed(learner: Learner, horizon: int) -> int:
    """The most users a run of ``learner`` over ``horizon`` rounds can sample (none is reused, P6).

    DP-PE: one per pull, at most ``T``. DP-DPE: ``Σ |U_l|`` over the phases that can finish
    (``h_l <= T_l``), whatever the designs' supports.
    """
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.phased.Learner (see make_learner)")
    T = v.integer("horizon", horizon, minimum=1)
    if learner.single:
        return T
    L = _completable(T)
    if learner.algorithm.fixed_clients:
        return L * (learner.clients if learner.clients is not None else fixed_clients(learner.alpha, T))
    return sum(phase_clients(learner.alpha, j) for j in range(1, L + 1))


# ---------------------------------------------------------------------------------------
# Noise
# ---------------------------------------------------------------------------------------


@cache
def _exact_multiplier(epsilon: float, delta: float) -> float:
    """The least ``z`` with ``N(0, z²)`` on a sensitivity-1 query ``(ε, δ)``-DP, certified."""
    return calibrate("gaussian", epsilon, delta, sensitivity=1.0).value


@cache
def _classic_multiplier(epsilon: float, delta: float) -> float:
    """The paper's ``z = sqrt(2 ln(1.25/δ))/ε`` (Dwork–Roth Thm A.1), rounded up.

    :func:`accounting.bounds.gaussian_sigma_classic` refuses ``ε >= 1`` (the theorem is proved only
    below 1); the paper uses the formula at ``ε = 10`` (P8), so it is evaluated here through the
    homogeneity ``σ(ε, δ, Δ) = σ(ε/2^m, δ, Δ/2^m)`` with ``2^m > ε`` (exact divisions by a power of
    two): the number is the formula's; it is a guarantee only where the run's ledger says so.
    """
    m = max(0, math.frexp(epsilon)[1])
    scale = 2.0**m
    return gaussian_sigma_classic(epsilon / scale, delta, 1.0 / scale)


def _gaussian_epsilon(multiplier: float, delta: float) -> float:
    return ledger_epsilon((Event(AdditiveNoise(Gaussian(multiplier), 1.0)),), delta)


def _sqrt_down(q: Fraction) -> float:
    """The largest float ``r`` with ``r² <= q`` (``q > 0``, exact): a square root rounded down."""
    r = math.sqrt(float(q))
    while r > 0 and Fraction(r) ** 2 > q:
        r = math.nextafter(r, 0.0)
    while Fraction(up := math.nextafter(r, math.inf)) ** 2 <= q:
        r = up
    return r


def _released_event(sigma: FloatArray, squared_sensitivity: Sequence[Fraction], multiplier: float) -> Event:
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
    by :data:`_SIGMA_UP`) the ledger is ``AdditiveNoise(Gaussian(z), 1)``, the same in every chunk;
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
    exact, classic = _exact_multiplier(eps, delta), _classic_multiplier(eps, delta)
    z = exact if learner.calibration == "exact" else classic
    return Noise(
        model,
        "gaussian",
        learner.calibration,
        z,
        exact,
        classic,
        _gaussian_epsilon(exact, delta),
        _gaussian_epsilon(classic, delta),
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


def _theorem_a2_sd(params: ShuffleSumParameters) -> float:
    """Theorem A.2's ``σ_ns = sqrt(360 Δ_2² ln(4s/δ)/(|U|² ε̂²))``, ``ε̂ = ε/(18 sqrt(ln(2/δ)))``,
    or the protocol's variance bound on the average where that is larger (module docstring)."""
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


# ---------------------------------------------------------------------------------------
# Privacy
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Privacy:
    """What a run's releases guarantee.

    Attributes
    ----------
    model : str
        ``"central"``, ``"local"``, ``"shuffle"`` or ``"none"``.
    mode, calibration : str
        The learner's.
    claimed_epsilon, claimed_delta : float or None
        The learner's target ``(ε, δ)``.
    epsilon : float
        The certified ε at ``delta``: the largest over the phases' ledgers (each client is in one
        phase: parallel composition); ``inf`` when nothing is certified.
    delta : float
    certified : bool
        Whether ``epsilon`` is a guarantee of the run as it ran.
    meets_claim : bool
        ``certified`` and ``epsilon <= claimed_epsilon`` (at the claimed δ or a larger one).
    basis : str
        ``"accounted"`` (the Gaussian releases, exact accounting), ``"cited"`` (the shuffle
        protocols' theorems, as stated) or ``"none"``.
    multiplier : float
        The Gaussian ``z = σ/Δ`` (0 otherwise).
    phases : tuple of (int, float)
        ``(phase, ε)`` of every ledger.
    argument : str
        Under which argument ``epsilon`` holds.
    message : str
        What does not hold, if anything.
    """

    model: str
    mode: str
    calibration: str
    claimed_epsilon: float | None
    claimed_delta: float | None
    epsilon: float
    delta: float
    certified: bool
    meets_claim: bool
    basis: str
    multiplier: float
    phases: tuple[tuple[int, float], ...]
    argument: str
    message: str = ""


_ARGUMENTS = {
    "central": (
        "central DP (Definition 4.1): the server adds N(0, (z Δ)² I) to the clients' average, "
        "Δ = 2B√s_l/|U_l|"
    ),
    "local": "local DP (Definition 4.3): every client adds N(0, (z Δ)² I) to its report, Δ = 2B√s_l",
    "shuffle": "shuffle DP (Definition 4.5)",
}


def privacy_of(
    learner: Learner, ledgers: Mapping[int, Accountant], delta: float, route: str = "auto"
) -> Privacy:
    """The privacy of a run from its per-phase ledgers (:attr:`RunResult.ledgers`), each answered
    by the accountant's ``route``."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.phased.Learner")
    if not isinstance(ledgers, Mapping) or not all(
        isinstance(n, int) and isinstance(acc, Accountant) for n, acc in ledgers.items()
    ):
        raise ParameterTypeError("ledgers", ledgers, "a mapping of int (phase) to accounting Accountant")
    d = v.open_unit("delta", delta)
    noise = noise_of(learner)
    if not learner.private:
        return Privacy(
            "none", learner.mode, "none", None, None, math.inf, d, False, False, "none", 0.0, (),
            "none: the clients' reports are averaged without noise",
            "a non-private run: nothing is guaranteed",
        )  # fmt: skip
    assert learner.epsilon is not None
    assert learner.delta is not None
    notes: list[str] = []
    if noise.kind == "surrogate":
        notes.append(
            "practical SDP-DPE: Gaussian noise at Theorem 4.6's rate with constant 1 (spec §7.4's "
            "hypothesis for the figures) stands in for the shuffle protocol; no protocol releases it, "
            "nothing is certified"
        )
        return Privacy(
            learner.model, learner.mode, noise.calibration, learner.epsilon, learner.delta, math.inf, d,
            False, False, "none", 0.0, (), _ARGUMENTS["shuffle"] + ": not run (a surrogate)",
            "; ".join(notes),
        )  # fmt: skip
    per = tuple(
        (j, ledger_epsilon(acc.ledger, d, acc.neighbouring, acc.dps, route))
        for j, acc in sorted(ledgers.items())
    )
    epsilon = max((e for _, e in per), default=0.0)
    argument = _ARGUMENTS[learner.model]
    if noise.kind == "gaussian":
        basis = "accounted"
        argument += (
            f", z = {noise.multiplier:.6g} ({noise.calibration} calibration), replace-one; each client "
            "reports in one phase (parallel composition); exact accounting of the Gaussian mechanism"
        )
        if learner.calibration == "classic" and learner.epsilon >= 1:
            notes.append(
                "calibration='classic': Dwork–Roth's σ = Δ sqrt(2 ln(1.25/δ))/ε is proved only for ε < 1 "
                "(spec P8); epsilon is the exact ε of what was released"
            )
    else:
        basis = "cited"
        theorem = (
            "Theorem 4.6 / A.2 (Algorithm 2)" if not learner.single else "Theorem C.6 (Algorithm 4 at ε/2)"
        )
        argument += (
            f": each phase's release is ({learner.epsilon:g}, {learner.delta:g})-SDP by {theorem}, as cited "
            "(Cheu et al. 2021); each client reports in one phase (parallel composition)"
        )
        if not learner.single:
            notes.append(
                "Algorithm 2's constants (18, 6√5, 180, 90) are the spec's reconstruction from the OCR "
                "(dp-dpe.md §3.3 [RECON]); the guarantee is the theorem's as reconstructed"
            )
    meets = epsilon <= learner.epsilon and d >= learner.delta
    if basis == "cited" and not meets and d >= learner.delta:
        # a cited (ε, δ) read back at δ is rounded outward by an ulp: the claim holds when every
        # phase released exactly one cited pair within it
        meets = all(
            len(acc.ledger) == 1
            and isinstance(acc.ledger[0].mechanism, ApproxDP)
            and acc.ledger[0].count == 1
            and acc.ledger[0].mechanism.eps <= learner.epsilon
            and acc.ledger[0].mechanism.dlt <= d
            for acc in ledgers.values()
        )
    if not meets:
        notes.append(
            f"the release's certified epsilon {epsilon:g} at δ = {d:g} exceeds the claimed "
            f"{learner.epsilon:g}"
        )
    return Privacy(
        model=learner.model,
        mode=learner.mode,
        calibration=noise.calibration,
        claimed_epsilon=learner.epsilon,
        claimed_delta=learner.delta,
        epsilon=epsilon,
        delta=d,
        certified=True,
        meets_claim=meets,
        basis=basis,
        multiplier=noise.multiplier,
        phases=per,
        argument=argument,
        message="; ".join(notes),
    )


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PhaseRecord:
    """What one phase did, for the repetitions ``reps`` that finished it (given to ``run``'s observer).

    Arrays have a leading axis over ``reps`` (``n``); per-action arrays are over the support,
    padded to the largest (``support = -1``, ``counts = 0`` in the padding).
    """

    phase: int
    h: float
    reps: IntArray
    start: IntArray  # (n,): t_l
    clients: int  # |U_l| (DP-DPE); 0 for DP-PE (T_l(x) clients per action)
    support: IntArray  # (n, s): action indices played, in play order
    counts: IntArray  # (n, s): T_l(x)
    average: FloatArray  # (n, s): the non-private average (DP-DPE) or sum (DP-PE) of the clipped reports
    released: FloatArray  # (n, s): ỹ_l
    noise_sd: FloatArray  # (n, s): sd of ỹ_l - average (Gaussian), or the bound on it the width uses
    sigma_n: FloatArray  # (n,): σ_n in the width
    width: FloatArray  # (n,): W_l
    theta_hat: FloatArray  # (n, d)
    active: BoolArray  # (n, k): D_l
    eliminated: BoolArray  # (n, k): E_l
    messages: IntArray  # (n,): communication of the phase, in the model's unit (reals or bits)


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of :func:`run` for ``R`` repetitions (arrays read-only).

    Attributes
    ----------
    learner : Learner
    mode : str
        ``"faithful"`` or ``"practical"`` (also in :attr:`Learner.label`).
    horizon : int
    rounds : numpy.ndarray of int64, shape (C,)
    pseudo_regret : numpy.ndarray, shape (R, C)
        ``Σ_{t<=T} ⟨θ*, x* - x_t⟩`` (eq. 1).
    realized_regret : numpy.ndarray, shape (R, C)
        See the module docstring.
    phases : numpy.ndarray of int64, shape (R,)
        Phases that finished (and released) before ``T``.
    clients : numpy.ndarray of int64, shape (R,)
        Users sampled (each reports once).
    reals, bits : numpy.ndarray of int64, shape (R,)
        Communication: reals sent (0 for the shuffle protocols), and bits (64 per real, or the
        protocols' one-bit messages).
    final_arms : numpy.ndarray of int64, shape (R,)
        ``|D|`` at the end.
    noise : Noise
    beta : float
        The widths' ``β``.
    delta : float
        The δ of :attr:`privacy`.
    """

    learner: Learner
    mode: str
    horizon: int
    rounds: IntArray
    pseudo_regret: FloatArray
    realized_regret: FloatArray
    phases: IntArray
    clients: IntArray
    reals: IntArray
    bits: IntArray
    final_arms: IntArray
    noise: Noise
    beta: float
    delta: float
    _ledgers: Mapping[int, Accountant] = field(repr=False)

    @property
    def unit(self) -> str:
        """The unit of :attr:`communication` (§9.8): ``"bits"`` for the shuffle protocols, else
        ``"reals"``."""
        return "bits" if self.noise.kind == "protocol" else "reals"

    @property
    def communication(self) -> IntArray:
        """``C(T)`` (eq. 2) in :attr:`unit`, shape ``(R,)``."""
        return self.bits if self.unit == "bits" else self.reals

    @property
    def ledgers(self) -> dict[int, Accountant]:
        """The ledger of a client of each phase that released, keyed by the phase (copies)."""
        return {n: acc.copy() for n, acc in self._ledgers.items()}

    @cached_property
    def privacy(self) -> Privacy:
        """:func:`privacy_of` the run's ledgers at :attr:`delta`."""
        return privacy_of(self.learner, self._ledgers, self.delta)


# ---------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------


def _check_run(
    learner: object, instances: object, horizon: object, tapes: object, rng: object, checkpoints: object
) -> tuple[list[PhasedInstance], int, list[np.random.Generator], IntArray]:
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.phased.Learner (see make_learner)")
    if not isinstance(tapes, Sequence) or isinstance(tapes, str) or not tapes:
        raise ParameterError("tapes", tapes, "a non-empty sequence of numpy Generators (one per repetition)")
    for i, gen in enumerate(tapes):
        if not isinstance(gen, np.random.Generator):
            raise ParameterTypeError(f"tapes[{i}]", gen, "a numpy.random.Generator")
    R = len(tapes)
    insts: list[PhasedInstance]
    if isinstance(instances, PhasedInstance):
        insts = [instances] * R
    elif isinstance(instances, Sequence) and not isinstance(instances, str) and len(instances) == R:
        insts = list(instances)
        for i, inst in enumerate(insts):
            if not isinstance(inst, PhasedInstance):
                raise ParameterTypeError(
                    f"instances[{i}]", inst, "a learners.phased_instances.PhasedInstance"
                )
    else:
        raise ParameterError(
            "instances", instances, f"one PhasedInstance or a sequence of R={R} of them (one per tape)"
        )
    shape = (insts[0].arms, insts[0].dim)
    if any((i.arms, i.dim) != shape for i in insts):
        raise ParameterError(
            "instances", [(i.arms, i.dim) for i in insts], "one (arms, dim) for every repetition"
        )
    T = v.integer("horizon", horizon, minimum=1, maximum=MAX_HORIZON, why="h_l must be rounded exactly")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    C = v.integer("checkpoints", checkpoints, minimum=1)
    need = clients_needed(learner, T)
    small = min(inst.population for inst in insts)
    if small < need:
        raise ParameterError(
            "population",
            small,
            f"at least {need} users: '{learner.name}' over T = {T} rounds samples up to {need} fresh clients "
            "and never reuses one (spec §8 P6)",
        )
    n = min(C, T)
    rounds = np.unique(-(-np.arange(1, n + 1, dtype=np.int64) * T // n))
    return insts, T, list(tapes), rounds


def _streams(gen: np.random.Generator, count: int) -> list[np.random.Generator]:
    """``count`` independent generators seeded by four words drawn from ``gen``."""
    words = gen.integers(0, 2**63, size=4, dtype=np.int64).tolist()
    return [np.random.default_rng(s) for s in np.random.SeedSequence(words).spawn(count)]


def _blocks(counts: IntArray, gaps: FloatArray) -> Callable[[IntArray, IntArray], FloatArray]:
    """``(i, m) -> Σ_j gaps[i, j] · min(max(m - before_j, 0), counts[i, j])``: the sum of ``gaps`` over
    the first ``m`` rounds of repetition ``i``'s segment, blocks of ``counts[i, j]`` rounds in order."""
    before = np.cumsum(counts, axis=1) - counts

    def at(i: IntArray, m: IntArray) -> FloatArray:
        played = np.clip(m[:, None] - before[i], 0, counts[i])
        return np.asarray((played * gaps[i]).sum(axis=1), dtype=np.float64)

    return at


class _Engine:
    """All repetitions' state (leading axis ``R``), the regret curves and the ledgers."""

    def __init__(
        self,
        learner: Learner,
        insts: list[PhasedInstance],
        T: int,
        tapes: list[np.random.Generator],
        rng: np.random.Generator,
        rounds: IntArray,
        observer: Callable[[PhaseRecord], None] | None,
    ) -> None:
        self.learner, self.T, self.rounds, self.observer = learner, T, rounds, observer
        R = len(tapes)
        inst0 = insts[0]
        self.R, self.k, self.d = R, inst0.arms, inst0.dim
        self.shared = all(inst is inst0 for inst in insts)
        if self.shared:
            self.X = np.broadcast_to(inst0.actions, (R, self.k, self.d))
            self.theta = np.broadcast_to(inst0.theta, (R, self.d))
        else:
            self.X = np.stack([inst.actions for inst in insts])
            self.theta = np.stack([inst.theta for inst in insts])
        self.means = np.einsum("rkd,rd->rk", self.X, self.theta)
        self.best = self.means.argmax(axis=1)
        self.gaps = self.means[np.arange(R), self.best][:, None] - self.means
        self.client_sd = np.array([inst.client_sd for inst in insts])
        self.noise_sd = np.array([inst.noise_sd for inst in insts])
        self.width_sd = (
            np.full(R, learner.client_sd) if learner.client_sd is not None else self.client_sd.copy()
        )
        env = [_streams(tape, 2) for tape in tapes]
        self.env = [e[0] for e in env]
        self.design_rng = [e[1] for e in env]
        self.private_rng = [_streams(rng, 1)[0] for _ in range(R)] if learner.private else []
        self.noise = noise_of(learner)
        self.beta = learner.beta if learner.beta is not None else 1.0 / (self.k * T)
        self.log_term = math.sqrt(2 * math.log(1 / self.beta))
        self.S = learner.support_constant if learner.support_constant is not None else support_bound(self.d)
        self.fixed_u = (
            (learner.clients if learner.clients is not None else fixed_clients(learner.alpha, T))
            if learner.algorithm.fixed_clients
            else 0
        )
        self.active = np.ones((R, self.k), dtype=np.bool_)
        self.next_t = np.ones(R, dtype=np.int64)
        self.done = np.zeros(R, dtype=np.bool_)
        self.pseudo = np.zeros((R, rounds.size))
        self.realized = np.zeros((R, rounds.size))
        self.pseudo_base = np.zeros(R)
        self.realized_base = np.zeros(R)
        self.phases = np.zeros(R, dtype=np.int64)
        self.clients = np.zeros(R, dtype=np.int64)
        self.reals = np.zeros(R, dtype=np.int64)
        self.bits = np.zeros(R, dtype=np.int64)
        self.ledgers: dict[int, Accountant] = {}

    # -- regret --------------------------------------------------------------------------
    def segment(
        self,
        reps: IntArray,
        start: IntArray,
        length: IntArray,
        pseudo: Callable[[IntArray, IntArray], FloatArray],
        realized: Callable[[IntArray, IntArray], FloatArray],
    ) -> IntArray:
        """Record the checkpoints in rounds ``[start, start + length)`` cut at ``T`` of ``reps``;
        ``pseudo(i, m)`` / ``realized(i, m)`` give the regret of the segment's first ``m`` rounds of
        ``reps[i]``. Returns the rounds played."""
        end = np.minimum(start + length - 1, self.T)
        lo = np.searchsorted(self.rounds, start, "left")
        hi = np.searchsorted(self.rounds, end, "right")
        cnt = np.maximum(hi - lo, 0)
        total = int(cnt.sum())
        if total:
            i = np.repeat(np.arange(reps.size), cnt)
            c = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt) + np.repeat(lo, cnt)
            m = self.rounds[c] - start[i] + 1
            self.pseudo[reps[i], c] = self.pseudo_base[reps[i]] + pseudo(i, m)
            self.realized[reps[i], c] = self.realized_base[reps[i]] + realized(i, m)
        played = np.asarray(end - start + 1, dtype=np.int64)
        every = np.arange(reps.size)
        self.pseudo_base[reps] += pseudo(every, played)
        self.realized_base[reps] += realized(every, played)
        self.next_t[reps] = start + played
        return played

    def finish_single_arm(self, reps: IntArray) -> None:
        """Repetitions with one active action play it to ``T`` (P4)."""
        arm = self.active[reps].argmax(axis=1)
        gap = self.gaps[reps, arm][:, None]
        rest = (self.T - self.next_t[reps] + 1)[:, None]
        at = _blocks(rest, gap)
        self.segment(reps, self.next_t[reps], rest[:, 0], at, at)
        self.done[reps] = True

    # -- one phase -----------------------------------------------------------------------
    def design(self, reps: IntArray, h: float) -> tuple[IntArray, IntArray, IntArray]:
        """The support (play order, padded with -1), the counts ``T_l(x)`` and ``s_l`` of ``reps``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DesignWarning)  # a support above S: S_eff = max(S, s_l) (P1)
            design = g_optimal_design(
                self.X[reps],
                rng=[self.design_rng[r] for r in reps.tolist()],
                c=self.learner.design_c,
                mask=self.active[reps],
            )
        if not design.converged.all():
            warnings.warn(
                f"G-optimal design: {int((~design.converged).sum())} repetitions did not reach "
                "g <= (1 + c) d'",
                DesignWarning,
                stacklevel=3,
            )
        counts = pull_counts(design.weights, h)
        s = (counts > 0).sum(axis=1)
        width = int(s.max())
        order = np.argsort(counts == 0, axis=1, kind="stable")[:, :width]  # support first, index order
        pad = np.arange(width)[None, :] >= s[:, None]
        support = np.where(pad, -1, order)
        Tx = np.where(pad, 0, np.take_along_axis(counts, order, axis=1))
        return support, Tx, s

    def run_phase(self, phase: int) -> None:
        learner = self.learner
        reps = np.flatnonzero(~self.done)
        single = self.active[reps].sum(axis=1) == 1
        if single.any():
            self.finish_single_arm(reps[single])
            reps = reps[~single]
        if reps.size == 0:
            return
        h = 2.0**phase if not learner.single else self.S * 2.0 ** (phase - 1)
        support, Tx, s = self.design(reps, h)
        safe = np.maximum(support, 0)
        rows = reps[:, None]
        start = self.next_t[reps]
        total = Tx.sum(axis=1)
        complete = start + total - 1 <= self.T
        gaps = np.where(support >= 0, self.gaps[rows, safe], 0.0)
        pseudo = _blocks(Tx, gaps)
        if learner.single:
            self.single_phase(phase, h, reps, start, support, Tx, s, complete, pseudo)
        else:
            self.distributed_phase(phase, h, reps, start, support, Tx, s, complete, pseudo)
        self.done[reps[~complete]] = True
        self.done[self.next_t > self.T] = True

    # -- DP-DPE ----------------------------------------------------------------------------
    def distributed_phase(
        self,
        phase: int,
        h: float,
        reps: IntArray,
        start: IntArray,
        support: IntArray,
        Tx: IntArray,
        s: IntArray,
        complete: BoolArray,
        pseudo: Callable[[IntArray, IntArray], FloatArray],
    ) -> None:
        learner = self.learner
        cut = np.flatnonzero(~complete)
        if cut.size:  # the last phase, cut by T: no clients (line 7 follows line 6), regret only
            self.segment(reps[cut], start[cut], Tx[cut].sum(axis=1), _sub(pseudo, cut), _sub(pseudo, cut))
        done = np.flatnonzero(complete)
        if done.size == 0:
            return
        rr, sup, cnt, ss = reps[done], support[done], Tx[done], s[done]
        n = self.fixed_u if learner.algorithm.fixed_clients else phase_clients(learner.alpha, phase)
        B = learner.bound
        width = sup.shape[1]
        valid = sup >= 0
        safe = np.maximum(sup, 0)
        X = self.X[rr[:, None], safe]  # (m, s, d)
        mu = np.where(valid, self.means[rr[:, None], safe], 0.0)
        # clients: ξ_u ~ N(0, σ² I) and local averages ⟨θ_u, x⟩ + noise_sd N(0, 1/T(x)) (P15)
        m = rr.size
        xi = np.empty((m, n, self.d))
        z = np.zeros((m, n, width))
        for j, r in enumerate(rr.tolist()):
            gen = self.env[r]
            xi[j] = gen.standard_normal((n, self.d))
            z[j, :, : ss[j]] = gen.standard_normal((n, int(ss[j])))
        xi *= self.client_sd[rr][:, None, None]
        inv = np.where(valid, 1.0 / np.sqrt(np.maximum(cnt, 1)), 0.0) * self.noise_sd[rr][:, None]
        Y = xi @ X.swapaxes(1, 2)
        Y += mu[:, None, :]
        z *= inv[:, None, :]
        Y += z
        del z
        theta_bar = self.theta[rr] + xi.mean(axis=1)
        del xi
        if learner.clip:
            np.clip(Y, -B, B, out=Y)
        Y *= valid[:, None, :]
        avg = Y.mean(axis=1)
        # regret: pseudo against θ*, realized against the clients' mean parameter θ̄
        means_bar = np.einsum("mkd,md->mk", self.X[rr], theta_bar)
        best = self.best[rr]
        gaps_bar = means_bar[np.arange(m), best][:, None] - np.where(
            valid, means_bar[np.arange(m)[:, None], safe], 0.0
        )
        gaps_bar = np.where(valid, gaps_bar, 0.0)
        self.segment(rr, start[done], cnt.sum(axis=1), _sub(pseudo, done), _blocks(cnt, gaps_bar))
        # the privatizer
        released, sd, messages, sigma_n = self.privatize_average(phase, rr, Y, avg, ss, n, valid)
        del Y
        # the estimate and the elimination
        theta_hat, V_pinv = _least_squares(X, cnt, cnt * released)
        term_a = math.sqrt(2 * self.d / (h * n))
        term_c = self.width_sd[rr] / math.sqrt(n)
        if learner.mode == "practical" and learner.private:
            sigma_n = _privacy_sd(self.X[rr], self.active[rr], V_pinv, X, cnt.astype(np.float64) * sd)
        W = (term_a + term_c + sigma_n) * self.log_term
        self.eliminate(
            phase, h, rr, start[done], n, sup, cnt, avg, released, sd, sigma_n, W, theta_hat, messages
        )
        self.clients[rr] += n

    def privatize_average(
        self, phase: int, rr: IntArray, Y: FloatArray, avg: FloatArray, s: IntArray, n: int, valid: BoolArray
    ) -> tuple[FloatArray, FloatArray, IntArray, FloatArray]:
        """ỹ_l of DP-DPE: the released average, its per-coordinate noise sd (or variance bound),
        the communication of the phase and the faithful ``σ_n`` of Table 3."""
        learner, noise = self.learner, self.noise
        m = avg.shape[0]
        B = learner.bound
        S_eff = np.maximum(self.S, s).astype(np.float64)
        reals = (s * n).astype(np.int64)
        zero = np.zeros(m)
        if noise.kind == "none":
            return avg, np.zeros_like(avg), reals, zero
        eps, delta = learner.epsilon, learner.delta
        assert eps is not None
        assert delta is not None
        root_s = np.sqrt(s.astype(np.float64))
        if noise.kind == "protocol":
            released = np.zeros_like(avg)
            sd = np.zeros(m)
            bits = np.zeros(m, dtype=np.int64)
            for j, r in enumerate(rr.tolist()):
                params = sdp_dpe_parameters(eps, delta, n, int(s[j]), B)
                released[j, : s[j]] = sdp_average(Y[j : j + 1, :, : s[j]], params, self.private_rng[r])[0]
                sd[j] = _theorem_a2_sd(params)
                bits[j] = n * params.bits
            self.account(phase, Event(sdp_dpe_parameters(eps, delta, n, int(s[0]), B).event()))
            sigma_n = 2 * sd * np.sqrt(S_eff * self.d)
            return released, sd[:, None] * valid, bits, sigma_n
        if noise.kind == "surrogate":
            sd = B * root_s * np.log(s / delta) / (eps * n)
            sigma_n = 2 * sd * np.sqrt(S_eff * self.d)  # unused: practical widths are data-dependent
        else:
            z = noise.multiplier
            # ℓ2 sensitivities under replace-one (§1.5): a client's clipped report ȳ ∈ [-B, B]^{s_l}
            # moves by ‖ȳ - ȳ'‖₂ <= 2B√s_l (eq. 21), the clients' average by 2B√s_l/|U_l| (eq. 19)
            report = 2 * B * root_s
            squared = [4 * Fraction(B) ** 2 * k for k in s.tolist()]  # Δ² exactly: √s_l is irrational
            if learner.model == "central":
                sens = report / n
                sigma = sens * z * _SIGMA_UP  # σ_nc = zΔ, eq. (5): the server's noise on the average
                sd = sigma
                sigma_n = 2 * sd * np.sqrt(S_eff * self.d)
                squared = [q / n**2 for q in squared]
            else:
                sigma = report * z * _SIGMA_UP  # σ_nl = zΔ, eq. (7): each client's noise on its report
                sd = sigma / math.sqrt(n)  # the average of n clients' independent noise
                sigma_n = 2 * sigma * np.sqrt(S_eff * self.d / n)
            # the ledger from the σ that scales the draw below, never from z beside it (issue 24)
            self.account(phase, _released_event(sigma, squared, z))
        gauss = np.zeros_like(avg)
        for j, r in enumerate(rr.tolist()):
            gauss[j, : s[j]] = self.private_rng[r].standard_normal(int(s[j]))
        sd2 = sd[:, None] * valid
        return avg + gauss * sd2, sd2, reals, sigma_n

    def account(self, phase: int, event: Event) -> None:
        """Phase ``l`` released: its clients' ledger (one release each; a phase releases once, for
        all its repetitions, so there is one event per phase)."""
        if phase not in self.ledgers:
            self.ledgers[phase] = Accountant(Neighbouring.REPLACE_ONE).compose(event)

    def eliminate(
        self,
        phase: int,
        h: float,
        rr: IntArray,
        start: IntArray,
        n: int,
        sup: IntArray,
        cnt: IntArray,
        avg: FloatArray,
        released: FloatArray,
        sd: FloatArray,
        sigma_n: FloatArray,
        W: FloatArray,
        theta_hat: FloatArray,
        messages: IntArray,
    ) -> None:
        """Line 18: drop every active action more than ``2 W_l`` below the best estimate (strictly)."""
        est = np.einsum("mkd,md->mk", self.X[rr], theta_hat)
        active = self.active[rr]
        top = np.where(active, est, -np.inf).max(axis=1)
        out = active & (top[:, None] - est > 2 * W[:, None])
        before = active.copy()
        self.active[rr] = active & ~out
        self.phases[rr] += 1
        if self.noise.kind == "protocol":
            self.bits[rr] += messages
        else:
            self.reals[rr] += messages
            self.bits[rr] += messages * FLOAT_BITS
        if self.observer is not None:
            self.observer(
                PhaseRecord(
                    phase=phase, h=h, reps=rr.copy(), start=start.copy(), clients=n, support=sup.copy(),
                    counts=cnt.copy(), average=avg, released=released, noise_sd=sd,
                    sigma_n=np.asarray(sigma_n), width=W, theta_hat=theta_hat, active=before, eliminated=out,
                    messages=messages,
                )
            )  # fmt: skip

    # -- DP-PE ---------------------------------------------------------------------------
    def single_phase(
        self,
        phase: int,
        h: float,
        reps: IntArray,
        start: IntArray,
        support: IntArray,
        Tx: IntArray,
        s: IntArray,
        complete: BoolArray,
        pseudo: Callable[[IntArray, IntArray], FloatArray],
    ) -> None:
        learner = self.learner
        B = learner.bound
        m, width = support.shape
        valid = support >= 0
        safe = np.maximum(support, 0)
        mu = np.where(valid, self.means[reps[:, None], safe], 0.0)
        played = np.minimum(Tx.sum(axis=1), self.T - start + 1)
        top = int(played.max())
        # one client per pull: rewards ⟨θ*, x⟩ + noise, in play order (blocks of T(x))
        y = np.zeros((m, top))
        block = np.zeros((m, top), dtype=np.int64)
        for j, r in enumerate(reps.tolist()):
            p = int(played[j])
            block[j, :p] = np.repeat(np.arange(width), Tx[j])[:p]
            y[j, :p] = self.env[r].standard_normal(p)
        y *= self.noise_sd[reps][:, None]
        y += np.take_along_axis(mu, block, axis=1)
        inside = np.arange(top)[None, :] < played[:, None]
        y *= inside
        cum = np.cumsum(y, axis=1)
        best_mean = self.means[reps, self.best[reps]]

        def realized(i: IntArray, k: IntArray) -> FloatArray:
            got = np.where(k > 0, cum[i, np.maximum(k, 1) - 1], 0.0)
            return np.asarray(k * best_mean[i] - got, dtype=np.float64)

        self.segment(reps, start, Tx.sum(axis=1), pseudo, realized)
        done = np.flatnonzero(complete)
        if done.size == 0:
            return
        rr, sup, cnt, ss = reps[done], support[done], Tx[done], s[done]
        yc = np.clip(y[done], -B, B) if learner.clip else y[done]
        yc *= inside[done]
        flat = (np.arange(done.size)[:, None] * width + block[done]).ravel()
        totals = np.bincount(flat, weights=yc.ravel(), minlength=done.size * width)
        sums: FloatArray = np.asarray(totals, dtype=np.float64).reshape(done.size, width) * valid[done]
        released, sd, messages, sigma_n = self.privatize_sums(
            phase, h, rr, yc, block[done], sums, cnt, ss, valid[done]
        )
        X = self.X[rr[:, None], np.maximum(sup, 0)]
        theta_hat, V_pinv = _least_squares(X, cnt, released)
        if learner.mode == "practical" and learner.private:
            sigma_n = _privacy_sd(self.X[rr], self.active[rr], V_pinv, X, sd)
        W = (math.sqrt(2 * self.d / h) + sigma_n) * self.log_term
        self.eliminate(
            phase, h, rr, start[done], 0, sup, cnt, sums, released, sd, sigma_n, W, theta_hat, messages
        )
        self.clients[rr] += cnt.sum(axis=1)

    def privatize_sums(
        self,
        phase: int,
        h: float,
        rr: IntArray,
        yc: FloatArray,
        block: IntArray,
        sums: FloatArray,
        cnt: IntArray,
        s: IntArray,
        valid: BoolArray,
    ) -> tuple[FloatArray, FloatArray, IntArray, FloatArray]:
        """ỹ_l of DP-PE (Table 4): the released sums, their noise sd per action, the communication and
        the faithful ``σ_n``."""
        learner, noise = self.learner, self.noise
        m = sums.shape[0]
        B = learner.bound
        reals = cnt.sum(axis=1).astype(np.int64)
        if noise.kind == "none":
            return sums, np.zeros_like(sums), reals, np.zeros(m)
        eps, delta = learner.epsilon, learner.delta
        assert eps is not None
        assert delta is not None
        root_s = np.sqrt(s.astype(np.float64))
        d = self.d
        if noise.kind == "protocol":
            released = np.zeros_like(sums)
            sd = np.zeros_like(sums)
            bits = np.zeros(m, dtype=np.int64)
            before = np.cumsum(cnt, axis=1) - cnt
            for j, r in enumerate(rr.tolist()):
                for a in range(int(s[j])):
                    count = int(cnt[j, a])
                    params = sdp_pe_parameters(eps, delta, count, B)
                    chunk = yc[j : j + 1, before[j, a] : before[j, a] + count]
                    released[j, a] = shuffle_sum(chunk, params, self.private_rng[r])[0]
                    sd[j, a] = math.sqrt(params.variance())
                    bits[j] += count * params.bits
            self.account(phase, Event(ApproxDP(eps, delta, sdp_pe_parameters(eps, delta, 1, B).theorem)))
            sigma_n = 2 * d * sd.max(axis=1) * root_s / h
            return released, sd, bits, sigma_n
        z = noise.multiplier
        # each client adds one reward in [-B, B] to one action's sum (§4.4): replacing it moves the
        # vector of sums by at most 2B in ℓ2, in every repetition and phase
        sens = 2 * B
        sigma = sens * z * _SIGMA_UP  # σ_nc = σ_nl = zΔ (classic: 2B sqrt(2 ln(1.25/δ))/ε), Table 4
        if learner.model == "central":
            sd = np.full(sums.shape, sigma)
            sigma_n = 2 * d * sigma * root_s / h
        else:
            sd = sigma * np.sqrt(cnt.astype(np.float64))  # the sum of T(x) clients' noise
            sigma_n = 2 * d * sigma * np.sqrt(2 * s / h)
        # the release as it is (the same σ and Δ in every repetition): the server's noise on the sums
        # (central) or each client's on its reward (local), the σ that scales the draw below
        self.account(phase, Event(AdditiveNoise(Gaussian(sigma), sens)))
        gauss = np.zeros_like(sums)
        for j, r in enumerate(rr.tolist()):
            gauss[j, : s[j]] = self.private_rng[r].standard_normal(int(s[j]))
        sd = sd * valid
        return sums + gauss * sd, sd, reals, sigma_n


def _sub(
    fn: Callable[[IntArray, IntArray], FloatArray], index: IntArray
) -> Callable[[IntArray, IntArray], FloatArray]:
    """``fn`` restricted to the rows ``index`` (``i`` indexes ``index``)."""
    return lambda i, m: fn(index[i], m)


def _least_squares(X: FloatArray, counts: IntArray, weighted: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``θ̂ = V⁺ Σ_x x w(x)`` with ``V = Σ_x T(x) x xᵀ`` over the support (line 17; eq. 53 for DP-PE),
    and ``V⁺`` (the pseudo-inverse on the span of the support: P4; relative cut ``1e-10``)."""
    V = np.einsum("ms,msd,mse->mde", counts.astype(np.float64), X, X)
    P = np.linalg.pinv(V, rcond=1e-10, hermitian=True)
    G = np.einsum("ms,msd->md", weighted, X)
    return np.einsum("mde,me->md", P, G), P


def _privacy_sd(
    actions: FloatArray, active: BoolArray, V_pinv: FloatArray, X: FloatArray, scale: FloatArray
) -> FloatArray:
    """Practical mode's ``σ_n``: ``max_{x' ∈ D_l} sqrt(Σ_x ⟨x', V⁺ x⟩² scale(x)²)``, the exact standard
    deviation of the privacy term of ``⟨θ̂, x'⟩`` (``scale = T(x) σ`` for DP-DPE, ``σ_x`` for DP-PE)."""
    A = actions @ V_pinv @ X.swapaxes(1, 2)  # (m, k, s): ⟨x', V⁺ x⟩
    var = np.einsum("mks,ms->mk", A * A, scale * scale)
    return np.asarray(np.sqrt(np.where(active, var, 0.0).max(axis=1)), dtype=np.float64)


def run(
    learner: Learner,
    instances: PhasedInstance | Sequence[PhasedInstance],
    horizon: int,
    *,
    tapes: Sequence[np.random.Generator],
    rng: np.random.Generator,
    checkpoints: int = 1000,
    delta: float | None = None,
    observer: Callable[[PhaseRecord], None] | None = None,
) -> RunResult:
    """Run ``learner`` for ``R = len(tapes)`` repetitions of ``horizon`` rounds.

    Parameters
    ----------
    learner : Learner
        From :func:`make_learner`.
    instances : PhasedInstance or sequence of them
        One instance for every repetition, or one per repetition (same ``k`` and ``d``).
    horizon : int
        ``T`` (at most ``2^40``).
    tapes : sequence of numpy.random.Generator
        Repetition ``r``'s clients, rewards and design directions come from streams seeded by
        ``tapes[r]`` (a fresh generator of the same seed gives every algorithm the same clients).
    rng : numpy.random.Generator
        The privacy noise (one stream per repetition, seeded in order).
    checkpoints : int
        Regret is recorded after ``ceil(c T / C)`` rounds, ``c = 1..C``.
    delta : float or None
        δ of the privacy report (``None``: the learner's δ, or 1e-6 without privacy).
    observer : callable or None
        Called with a :class:`PhaseRecord` after every phase that released (for audits and tests).

    Returns
    -------
    RunResult
    """
    insts, T, gens, rounds = _check_run(learner, instances, horizon, tapes, rng, checkpoints)
    if delta is None:
        d_report = learner.delta if learner.delta is not None else 1e-6
    else:
        d_report = v.open_unit("delta", delta)
    if observer is not None and not callable(observer):
        raise ParameterTypeError("observer", observer, "a callable taking a PhaseRecord, or None")
    engine = _Engine(learner, insts, T, gens, rng, rounds, observer)
    phase = 0
    while not engine.done.all():
        phase += 1
        engine.run_phase(phase)

    def frozen(a: NDArray[Any]) -> NDArray[Any]:
        a.setflags(write=False)
        return a

    return RunResult(
        learner=learner,
        mode=learner.mode,
        horizon=T,
        rounds=frozen(rounds),
        pseudo_regret=frozen(engine.pseudo),
        realized_regret=frozen(engine.realized),
        phases=frozen(engine.phases),
        clients=frozen(engine.clients),
        reals=frozen(engine.reals),
        bits=frozen(engine.bits),
        final_arms=frozen(engine.active.sum(axis=1).astype(np.int64)),
        noise=engine.noise,
        beta=engine.beta,
        delta=d_report,
        _ledgers=engine.ledgers,
    )
