"""The algorithms of the DP-DPE paper, their settings and their schedule.

Li, Zhou & Ji (2022), "Differentially Private Linear Bandits with Partial Distributed Feedback"
(arXiv 2207.05827). A server plays actions of a fixed set ``D ⊂ R^d``, ``|D| = k``, in phases; in
phase ``l`` it plays a near-G-optimal design of the active actions ``D_l``
``T_l(x) = ⌈h_l π_l(x)⌉`` times each (:mod:`learners.design`), then aggregates the reports of
clients through a privatizer ``P = (R, S, A)``, fits ``θ̂_l`` by weighted least squares and
eliminates every action more than ``2 W_l`` below the best estimate (strictly: Algorithm 1, line 18).

**DP-DPE (Algorithm 1, §3.2).** ``h_l = 2^l``; after the plays of phase ``l``, ``|U_l| = ⌈2^{αl}⌉``
fresh clients (never reused: the parallel composition over phases of §5 needs each user in one phase
at most) each report the vector ``ȳ_l^u`` of their local averages over the ``s_l = |supp π_l|``
played actions, clipped to ``[-B, B]`` (the paper assumes ``|y| <= B``, §2.1; the simulated noise is
Gaussian and unbounded, so the clipping makes the sensitivities ``2B√s_l`` true).
``θ_u = θ* + ξ_u``; a client's local average over ``T_l(x)`` pulls is drawn in one step from its
exact law, ``⟨θ_u, x⟩ + noise_sd · N(0, 1/T_l(x))`` (the mean of ``T_l(x)`` i.i.d. Gaussians), and
its ``ξ_u ~ N(0, σ² I)`` when it is sampled (a uniform sample without replacement from an i.i.d.
population is i.i.d., :mod:`learners.phased.instances`). ``θ̂_l = V_l⁺ Σ_x T_l(x) x ỹ_l(x)`` with
``V_l = Σ_x T_l(x) x xᵀ`` (the pseudo-inverse on the span of the support, where Remark 3.2 works
once ``D_l`` no longer spans ``R^d``). The width is eq. (3) as we rebuilt it from the proofs (the
OCR lost it; checked
term by term against them and numerically by the tests)::

    W_l = ( sqrt(2d / (h_l |U_l|)) + σ / sqrt(|U_l|) + σ_n ) · sqrt(2 ln(1/β)),   β = 1/(kT).

**DP-PE (Algorithm 3, App. C.1).** One fresh client per pull (``T`` users in all), ``θ_u = θ*``,
``h_l = S 2^{l-1}``; ``ỹ_l(x)`` is the private *sum* of the ``T_l(x)`` rewards of ``x`` (each
clipped to ``[-B, B]``), ``θ̂_l = V_l⁺ Σ_x x ỹ_l(x)`` (no ``T_l(x)`` weight, eq. 53) and
``W_l = (sqrt(2d/h_l) + σ_n) sqrt(2 ln(1/β))`` (eq. 54).

**DPE-FixedU** (§7, Figure 2(c)) samples ``U`` clients every phase; ``U`` (``clients``) defaults to
:func:`fixed_clients`, the mean of ``⌈2^{αl}⌉`` over the phases that can finish before ``T``
(``h_l = 2^l``), which equalizes the communication when ``s_l`` is constant (measured within a few
percent, see the tests). At ``T = 10⁶`` 18 phases finish (``U = 2822``); counting the 19th, which
does not, would give ``U ≈ 4.6·10³``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from accounting import validate as v
from learners.design import MAX_H
from learners.errors import ParameterError, ParameterTypeError
from learners.runs import FLOAT_BITS, make_settings

__all__ = [
    "ALGORITHMS",
    "CALIBRATIONS",
    "FLOAT_BITS",
    "MAX_HORIZON",
    "MODES",
    "Algorithm",
    "Learner",
    "clients_needed",
    "completable_phases",
    "fixed_clients",
    "make_learner",
    "phase_clients",
]

#: The largest horizon: ``h_l`` must stay within :data:`learners.design.MAX_H` for exact rounding.
MAX_HORIZON = int(MAX_H)


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

#: The paper's formulas and constants, or data-dependent widths (:mod:`learners.phased.noise`).
MODES = ("faithful", "practical")
#: How the Gaussian privatizers' noise multiplier is set (:mod:`learners.phased.noise`).
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
        The paper's widths and constants, or data-dependent ones (:mod:`learners.phased.noise`).
    calibration : {"exact", "classic"}
        The Gaussian privatizers' noise multiplier (:mod:`learners.phased.noise`); ignored by the
        shuffle ones.
    alpha : float
        ``α ∈ (0, 1]``: ``|U_l| = ⌈2^{αl}⌉`` clients in phase ``l`` (DP-DPE; the paper: 0.8).
    bound : float
        ``B > 0``: reports are clipped to ``[-B, B]`` (local averages in DP-DPE, rewards in DP-PE).
    clipped : bool or None
        Whether to clip (``None``: clip exactly when private; a private learner must clip).
        ``clip`` is its old spelling.
    beta : float or None
        ``β ∈ (0, 1)`` of the widths (``None``: ``1/(kT)``, the theorems').
    support_constant : int or None
        ``S`` (``None``: :func:`learners.design.support_bound` ``(d)``, 104 at ``d = 20``).
    design_c : float
        The design's target ``g(π) <= (1 + c) d`` (``c = 1``: the paper's ``2d``).
    clients : int or None
        ``U`` of DPE-FixedU (``None``: :func:`fixed_clients`); only for that algorithm.
    client_sd : float or None
        The ``σ`` the widths assume (``None``: the instance's, which the paper's widths take as
        known).
    """

    name: str
    epsilon: float | None = None
    delta: float | None = None
    mode: str = "faithful"
    calibration: str = "exact"
    alpha: float = 0.8
    bound: float = 1.0
    clipped: bool | None = None
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
        if self.clipped is None:
            object.__setattr__(self, "clipped", algorithm.private)
        elif not isinstance(self.clipped, bool):
            raise ParameterTypeError("clipped", self.clipped, "True, False or None")
        elif algorithm.private and not self.clipped:
            raise ParameterError(
                "clipped",
                self.clipped,
                "True or None for a private learner (the sensitivities assume |y| <= B)",
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


#: Old spellings of :class:`Learner`'s settings: ``clip`` was whether reports are clipped
#: (``clipped``; the clipping bound is ``bound``, as in every family).
OLD_PARAMS = {"clip": "clipped"}


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them (old spellings in
    :data:`OLD_PARAMS` are accepted with a note)."""
    return make_settings(Learner, name, epsilon, params, OLD_PARAMS)


# ---------------------------------------------------------------------------------------
# The schedule
# ---------------------------------------------------------------------------------------


def phase_clients(alpha: float, phase: int) -> int:
    """``|U_l| = ⌈2^{αl}⌉`` (Algorithm 1 line 7)."""
    a = v.interval("alpha", alpha, 0.0, 1.0)
    n = v.integer("phase", phase, minimum=1)
    clients: int = math.ceil(2.0 ** (a * n))
    return clients


def completable_phases(horizon: int) -> int:
    """Phases of DP-DPE that can finish within ``T``: ``T_l >= h_l = 2^l``, so at most the ``L`` with
    ``Σ_{l<=L} 2^l = 2^{L+1} - 2 <= T``."""
    return max(0, (horizon + 2).bit_length() - 2)


def fixed_clients(alpha: float, horizon: int) -> int:
    """DPE-FixedU's default ``U``: the mean of ``⌈2^{αl}⌉`` over the phases that can finish (§7).

    Figure 2(c) of Li, Zhou & Ji (2022) compares DPE and DPE-FixedU at equal communication.

    With ``s_l`` constant this gives DPE's communication ``Σ_l s_l |U_l|`` (rounded to the nearest
    integer ``U``) **if DPE runs every phase**. It does not once one arm is left: on the synthetic
    instance of §7 (:func:`learners.phased.instances.draw_instance`) at ``T = 10^6`` DPE stops after
    14 phases (40788 reals per run), and this ``U`` (2822) gives DPE-FixedU 15 times DPE's
    communication. For equal communication measure DPE's and pass ``clients`` (the shipped
    ``dpdpe-figure2c``: ``U = 84``).
    """
    T = v.integer("horizon", horizon, minimum=1)
    L = completable_phases(T)
    if L == 0:
        return 1
    return max(1, round(sum(phase_clients(alpha, j) for j in range(1, L + 1)) / L))


def clients_needed(learner: Learner, horizon: int) -> int:
    """The most users a run of ``learner`` over ``horizon`` rounds can sample (none is reused: each client
    reports in one phase, the parallel composition of §5).

    DP-PE: one per pull, at most ``T``. DP-DPE: ``Σ |U_l|`` over the phases that can finish
    (``h_l <= T_l``), whatever the designs' supports.
    """
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.phased.Learner (see make_learner)")
    T = v.integer("horizon", horizon, minimum=1)
    if learner.single:
        return T
    L = completable_phases(T)
    if learner.algorithm.fixed_clients:
        return L * (learner.clients if learner.clients is not None else fixed_clients(learner.alpha, T))
    return sum(phase_clients(learner.alpha, j) for j in range(1, L + 1))
