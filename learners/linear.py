"""Federated linear contextual bandits: Private-Fed LinUCB and its baselines, vectorized.

Zhou & Chowdhury, "On differentially private federated linear contextual bandits" (ICLR 2024),
spec ``federated-lcb.md``. ``M`` silos each serve one user per round; every silo plays LinUCB on
``V = λI + W̃_syn (+ W_i)`` and ``θ̂ = V^{-1}(Ũ_syn (+ U_i))`` and, at synchronisations, sends its
batch's ``U_i = Σ x y`` and ``W_i = Σ x xᵀ`` through a privacy protocol to the server, whose
noisy *prefix sums* replace ``Ũ_syn`` and ``W̃_syn`` (the paper's Algorithms 1 and 2).

Algorithms (:data:`ALGORITHMS`):

=========================  =================================================================
name                       what it is
=========================  =================================================================
``fedlinucb``              Algorithm 1 without privacy: exact sums, fixed batch ``B`` [C]
``fedlinucb-lazy``         the same, deciding from the synced statistics only
``ldp-fedlinucb``          Algorithm 1 + protocol P (Algorithm 2, silo-level LDP, Thm 5.1)
``ldp-fedlinucb-lazy``     Algorithm 8 (§11.1) + protocol P: decisions from synced data only
``sdp-fedlinucb-amp``      Algorithm 1 + P with a shuffler, σ0 of Theorem 5.3 (Lemma F.2)
``sdp-fedlinucb-amp-lazy`` the same with Algorithm 8's decisions
``sdp-fedlinucb-vec``      Algorithm 1 + P_T^Vec (Algorithms 5-6, Theorem 5.5): shuffle vector sums
``sdp-fedlinucb-vec-lazy`` the same with Algorithm 8's decisions
``dubey-pentland``         Dubey & Pentland 2020 as the paper's Algorithm 3 (§7.1): adaptive
                           sync rule on non-private local data — **not private** (§7.2)
=========================  =================================================================

**Protocol P** (Algorithm 2, §4; the tree-based mechanism of Dwork et al. 2010 and Chan, Shi &
Song 2011, whose description the extracted text lost, rebuilt from Algorithms 4-5 and the authors'
code). Each silo keeps, per stream, raw (noise-free) p-sum
registers ``α_0..α_{κ-1}``; at sync ``k`` it sets ``α_{i_k} = Σ_{j<i_k} α_j + γ_k`` (``i_k`` the
lowest set bit of ``k``) and releases ``α_{i_k} + Z`` with fresh noise: ``N(0, σ0² I_d)`` on the
bias vector and the symmetric ``(N + Nᵀ)/2``, ``N`` i.i.d. ``N(0, σ0²)``, on the covariance matrix
(diagonal variance ``σ0²``, off-diagonal ``σ0²/2``; post-processing of i.i.d. noise on all ``d²``
entries, §4.3, §10.6). The server keeps its own registers ``α̃_{i_k} = Σ_i (released)`` and
*replaces* ``Ũ_syn, W̃_syn`` by ``Σ_{j: bit j of k} α̃_j`` (§10.9). The shuffler of the SDP
variants does not change the sum, so it is not simulated.

**Noise level** ``σ0`` (``sigma_mode``), for ``κ = ⌊log2(T/B)⌋ + 1`` releases per stream:

* ``"exact"`` (default): :func:`accounting.tree.calibrate_sigma`, the least ``σ0`` whose release
  (``κ`` Gaussian nodes per stream, exact GDP accounting) meets ``(ε, δ)`` under the chosen
  sensitivities — certified;
* ``"paper"``: Theorem 5.1's ``σ0² = 8κ(log(2/δ) + ε)/ε²`` (:func:`accounting.tree.paper_sigma`;
  derived for ``L = 1``, loose enough that it holds even with replace-one sensitivities, §7.5 A4);
* ``"code"``: the authors' code ``σ0 = √(κ(log(1/δ) + ε))/ε`` (:func:`accounting.tree.code_sigma`),
  for reproducing the figures only: it does **not** meet its claim in general (§10.3; at
  ``(5, 0.1)`` its ``δ(5) ≈ 0.18`` at ``L = 1``). The run still reports the exact ε of what it
  released, and :attr:`Privacy.meets_claim` says whether the claim holds.

**SDP via amplification** (Theorem 5.3 and Lemma F.2, App. F; the explicit constants are our
reconstruction, the theorem states σ0 only up to O(·)). The shuffler permutes the ``M``
silos' messages, which leaves the server's sum unchanged, so only ``σ0`` differs:
``sigma_mode="exact"`` is :func:`accounting.shuffle.theorem53_sigma0` (explicit constants, Lemma
F.2 inverted, advanced composition over ``κ`` releases per stream, sensitivity the larger of the
two streams'), and a setting where Lemma F.2's hypotheses fail for every ``ε0`` (it needs
``M > 16 ln(2/δ_lemma)``: the paper's ``M = 100`` at ``δ = 10⁻⁴`` or ``0.1``) is refused as
infeasible (:class:`~learners.errors.ProtocolError`, before anything runs; :func:`noise_of` reports
it); ``"code"`` is the authors' ``σ0 = √(κ log(1/δ) log(1 + κ/(Tδ)) log(Mκ/δ))/(ε√M)``, for
reproducing Figure 2(a) uncertified (``"paper"`` has no constants and is refused). The ledger
holds the Gaussian node releases as for silo-level LDP: each silo's transcript is an adaptive
composition in which only the changed user's silo's ``κ`` nodes per stream depend on her, so its
exact ε is also a central (shuffle-model) guarantee; :attr:`Privacy.epsilon` is the smaller of it
and Theorem 5.3's certified total (where the run's δ covers the theorem's). Inside the theorem's
range ``σ0 ≳ T·polylog`` (§5.2.4 [O]), so the plain Gaussian ledger is usually the smaller.

**SDP via the vector-sum protocol P_T^Vec** (Algorithms 5-6, App. F.2, and Theorem 5.5; P_Vec is
Cheu, Joseph, Mao & Peng (2021)).
The node of level ``i`` is one P_Vec call over its ``n_i = 2^i B M`` data points (every silo's
per-round ``x y`` and upper triangle of ``x xᵀ``, norms ``<= clip`` and ``<= 1``), re-randomized
afresh in each call; the analyzer's view is simulated exactly by :func:`learners.protocols.shuffle_sum`'s
count path (``Σ x̂ + Bin(n b, p)``), one batch at a time (:meth:`_State.vector_step`). Its noise is
central-level (one noise per call, no factor ``M``: ``λ`` and the theory radius use ``√κ σ̂``).
``sigma_mode="exact"``: :func:`accounting.calibration.shuffle_sum_parameters` ``("cheu-vector")``
at a per-call ``(ε0, δ0)`` with ``δ0 = δ/(4κ)`` and ``ε0`` the largest whose optimal composition over
the ``2κ`` calls a user's two points enter meets ``(ε, δ)``; the ledger holds those ``ApproxDP``
calls and ``ε`` is their Kairouz–Oh–Viswanath composition (the accountant's ``pld`` route), certified
for the lazy variant (Algorithm 1's within-batch adaptivity changes up to ``B`` points, §10.1).
``"code"``: the authors' ``b = ⌈g² ln(d²/δ)²/(ε² n)⌉`` (``scale = 1``, ceil instead of numpy's
truncation), uncertified: no ledger, ``ε = inf``. The 24·10⁴ of the theory mode (spec [K], constants
uncertain) makes its noise far larger than the code's (σ̂ ≈ 10⁴ against 2 at ``d = 4``, ``ε = 1``).

**Sensitivities** (``sensitivity``; derived here: the paper states ``L = 1`` only).
``"replace-one"`` (default, the paper's relation): ``2c`` on the bias stream and ``√2`` on the
covariance, with rewards clipped to ``[-c, c]`` (``clip``, default 1) and features of norm 1;
``"add-remove"``: ``c`` and 1 (the paper's ``L = 1``); ``"batch"``: ``2cB`` and ``√2 B``
(replace-one), which covers Algorithm 1's within-batch adaptivity.

**Which variant is private, and why** (our observation; the paper does not discuss it). The ledger's
ε is the exact privacy of the released node sums *given* the per-user sensitivity. In the **lazy**
variant (Algorithm 8) every action depends on the user's own context and on released statistics
only, so changing one user changes one term of one stream element: the per-user sensitivity holds,
and the run is ``(ε, δ)``-silo-level LDP by the ledger (adaptive composition over syncs). In
**Algorithm 1** the actions of later users of a batch depend on the silo's non-private ``W_i, U_i``,
so one user can change up to ``B`` terms of ``γ_k``: the paper's per-user argument does not hold,
and the ledger certifies Algorithm 1 only with ``sensitivity="batch"``. :attr:`Privacy.certified`
says which case a run is in. **Dubey & Pentland** (Algorithm 3) decides *when* to sync from
non-private local data, a side channel no content noise covers (§7.2, Example 3.1): it is never
private, whatever its noise; its result says so (``certified=False``, ``epsilon = inf``), and the
privacy its content noise alone would give with a public schedule is reported separately
(``content_epsilon``).

**Deviations from the paper and its code** (documented choices):

* rewards enter the statistics clipped to ``[-c, c]`` in the private variants (the synthetic
  rewards are Gaussian and unbounded, so Assumption 4.1 and any finite sensitivity fail without
  it; the code does not clip); the non-private variants do not clip unless ``clip`` is given;
* ``V`` is made positive definite at each sync by clipping the eigenvalues of ``λI + W̃_syn`` at
  ``eig_floor · λ`` (the nearest such symmetric matrix in Frobenius norm; counted per repetition,
  :attr:`RunResult.clipped`); the paper has no safeguard and relies on ``λ`` with high
  probability (§9, §10.7). Between syncs ``V_{t,i}`` only gains PSD terms, so it stays definite;
* ``V^{-1}`` is obtained by ``numpy.linalg.solve`` at each sync and updated by Sherman–Morrison
  rank-one updates for the silo's own rounds (recomputed from scratch at every sync);
* the radius and ``λ`` default to the code's constants (``radius="code"``, ``regularizer=None``):
  ``β_t = crs (√λ S + R √(d log(1 + t M/(dλ)) + log(1/α)))`` with ``S = √d``, ``R`` the reward
  noise scale; ``λ = √M`` without privacy, ``λ = √(Mκ) σ0 (√(κ + log(1/α)) + √d)`` with it.
  ``radius="theory"`` is Lemma C.4's ``√(2 log(2/α) + d log(1 + Mt/(dλ_min))) + √λ_max + ν`` with
  ``λ_min = λ/2``, ``λ_max = 3λ/2``, ``ν = σ_tot(√d + √(2 log(4K/α)))/√λ_min`` [R, constants 1];
* Dubey & Pentland's threshold defaults to ``D = T log(MT)/(dM)`` (Wang et al. 2020's choice [K],
  override with ``threshold``), their privatizer is protocol P's tree over at most ``T`` syncs, at
  the same ``σ0`` rule with ``B = 1``; the sync rule uses the exact local ``log det`` increment
  (matrix determinant lemma), as in §7.1 line 9.

**Vectorization.** ``R`` repetitions × ``M`` silos are arrays; rounds loop. A round's scores
``⟨x, θ⟩`` and ``xᵀPx`` of all ``K`` arms are two matrix products per silo for all repetitions at
once: ``xᵀPx = c(P) · triu(x xᵀ)`` with ``c(P)`` the packed upper triangle of ``P`` (off-diagonal
entries doubled) and the arms' quadratic features ``triu(x xᵀ)`` (``d(d+1)/2`` of them, shared by
the repetitions) formed in the drawing thread (:func:`_quadratic_features`, :func:`_scores`);
``W`` is kept packed, ``V^{-1}`` has a rank-one update of ``(R, M, d, d)``. The arms of a round
come from the instance's keyed stream (:mod:`learners.linear_instances`), the reward noise from
each repetition's tape, and the privacy noise of repetition ``r`` from a Philox stream keyed by
two words drawn from ``rng`` (the ``r``-th pair), so a repetition's run has the same law however
many run beside it; its trajectory agrees with its run alone up to rounding (BLAS blocks the rows
of a product by the batch size, and a rounding difference can decide an exact tie, such as the
first round's, where all unit-norm arms score alike).

**Privacy ledger.** At every sync of a fixed schedule the node released at level ``i_k`` contains
batches ``k - 2^{i_k} + 1 .. k``; a Gaussian event per stream is composed, as it is released,
into the :class:`~accounting.accountant.Accountant` of each of those batches. Users of batches
whose ledgers are equal are grouped: :attr:`RunResult.ledgers` maps the number of released nodes
per stream a batch entered to its ledger (the first batch enters ``κ``, the most).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from types import MappingProxyType
from typing import Any

import numpy as np
from mpmath import mp
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from accounting import validate as v
from accounting.accountant import Accountant, Event
from accounting.answers import ledger_epsilon
from accounting.calibration import ShuffleSumParameters, shuffle_sum_parameters
from accounting.certified import DEFAULT_DPS, float_up
from accounting.mechanisms import AdditiveNoise, ApproxDP
from accounting.neighbouring import Neighbouring
from accounting.noise import Gaussian
from accounting.papers.federated_lcb import Theorem53Calibration, theorem53_sigma0
from accounting.tree import PAPER, REPLACE_ONE, Sensitivities, Tree, calibrate_sigma, code_sigma, paper_sigma
from learners.errors import ParameterError, ParameterTypeError, ProtocolError
from learners.linear_instances import CHUNK, LinearInstance, NoiseTape, keyed_stream
from learners.protocols import shuffle_sum

__all__ = [
    "ALGORITHMS",
    "RADII",
    "SENSITIVITIES",
    "SIGMA_MODES",
    "Algorithm",
    "Learner",
    "Noise",
    "Privacy",
    "RunResult",
    "SyncRecord",
    "VectorSum",
    "make_learner",
    "noise_of",
    "privacy_of",
    "regularizer_of",
    "run",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class Algorithm:
    """An entry of :data:`ALGORITHMS`."""

    label: str
    #: Whether it adds privacy noise (takes ε and δ).
    private: bool
    #: Decisions from the synced statistics only (Algorithm 8).
    lazy: bool
    #: ``"fixed"`` (every ``B`` rounds) or ``"adaptive"`` (Dubey & Pentland's rule).
    schedule: str
    #: The trust model its privacy is stated in (``"silo-ldp"``, ``"shuffle"`` or ``"none"``).
    model: str
    #: How a node is released: ``"gaussian"`` (protocol P) or ``"vector-sum"`` (P_T^Vec, §5.3).
    release: str = "gaussian"


ALGORITHMS: dict[str, Algorithm] = {
    "fedlinucb": Algorithm("FedLinUCB", False, False, "fixed", "none"),
    "fedlinucb-lazy": Algorithm("FedLinUCB-Lazy", False, True, "fixed", "none"),
    "ldp-fedlinucb": Algorithm("LDP-FedLinUCB", True, False, "fixed", "silo-ldp"),
    "ldp-fedlinucb-lazy": Algorithm("LDP-FedLinUCB-Lazy", True, True, "fixed", "silo-ldp"),
    "sdp-fedlinucb-amp": Algorithm("SDP-FedLinUCB-Amp", True, False, "fixed", "shuffle"),
    "sdp-fedlinucb-amp-lazy": Algorithm("SDP-FedLinUCB-Amp-Lazy", True, True, "fixed", "shuffle"),
    "sdp-fedlinucb-vec": Algorithm("SDP-FedLinUCB-Vec", True, False, "fixed", "shuffle", "vector-sum"),
    "sdp-fedlinucb-vec-lazy": Algorithm(
        "SDP-FedLinUCB-Vec-Lazy", True, True, "fixed", "shuffle", "vector-sum"
    ),
    "dubey-pentland": Algorithm("Dubey-Pentland (not private)", True, False, "adaptive", "none"),
}

#: How σ0 is set (see the module docstring).
SIGMA_MODES = ("exact", "paper", "code")
#: The per-user sensitivities (see the module docstring).
SENSITIVITIES = ("replace-one", "add-remove", "batch")
#: The confidence radius: the authors' code, or Lemma C.4.
RADII = ("code", "theory")

#: Reals each silo sends per sync: the bias vector and the upper triangle of the symmetric matrix.
FLOAT_BITS = 64


@dataclass(frozen=True)
class Learner:
    """One algorithm with all its settings (a value; build it with :func:`make_learner`).

    Attributes
    ----------
    name : str
        A key of :data:`ALGORITHMS`.
    epsilon, delta : float or None
        The claimed ``(ε, δ)`` (required by the private algorithms, ``None`` otherwise).
    batch : int or None
        ``B``, rounds between syncs of the fixed schedule (default 25, the paper's); ``None`` for
        ``dubey-pentland`` (adaptive).
    sigma_mode : {"exact", "paper", "code"}
        How σ0 is set.
    sensitivity : {"replace-one", "add-remove", "batch"}
        The per-user sensitivities σ0 is calibrated for and the ledger is written with.
    clip : float or None
        Rewards enter the statistics clipped to ``[-clip, clip]`` (private default 1; ``None``: no
        clipping, allowed only without privacy).
    regularizer : float or None
        ``λ``; ``None``: the code's formula (module docstring).
    radius : {"code", "theory"}
        The confidence radius.
    crs : float
        Multiplier of the radius (1 synthetic, 0.1 real data in the paper).
    alpha : float
        The confidence level ``α ∈ (0, 1)`` (0.01).
    noise_scale : float or None
        ``R`` of the code radius (``None``: the instance's reward noise sd).
    threshold : float or None
        ``D`` of Dubey & Pentland's rule (``None``: ``T log(MT)/(dM)``; only for that algorithm).
    eig_floor : float
        Eigenvalues of ``λI + W̃_syn`` are clipped at ``eig_floor · λ`` (in ``(0, 1]``).
    """

    name: str
    epsilon: float | None = None
    delta: float | None = None
    batch: int | None = None
    sigma_mode: str = "exact"
    sensitivity: str = "replace-one"
    clip: float | None = None
    regularizer: float | None = None
    radius: str = "code"
    crs: float = 1.0
    alpha: float = 0.01
    noise_scale: float | None = None
    threshold: float | None = None
    eig_floor: float = 1e-3

    def __post_init__(self) -> None:
        algorithm = ALGORITHMS.get(self.name) if isinstance(self.name, str) else None
        if algorithm is None:
            raise ParameterError("algorithm", self.name, "one of " + ", ".join(ALGORITHMS))
        if algorithm.private:
            if self.epsilon is None or self.delta is None:
                missing = "epsilon" if self.epsilon is None else "delta"
                raise ParameterError(missing, None, f"a value (required by the private '{self.name}')")
            object.__setattr__(self, "epsilon", v.positive("epsilon", self.epsilon))
            object.__setattr__(self, "delta", v.open_unit("delta", self.delta))
            clip = 1.0 if self.clip is None else self.clip
            object.__setattr__(self, "clip", v.positive("clip", clip))
        else:
            for attr in ("epsilon", "delta"):
                if getattr(self, attr) is not None:
                    raise ParameterError(attr, getattr(self, attr), f"None for the non-private '{self.name}'")
            if self.clip is not None:
                object.__setattr__(self, "clip", v.positive("clip", self.clip))
        if algorithm.schedule == "fixed":
            batch = 25 if self.batch is None else self.batch
            object.__setattr__(self, "batch", v.integer("batch", batch, minimum=1))
        elif self.batch is not None:
            raise ParameterError("batch", self.batch, f"None ('{self.name}' syncs adaptively)")
        v.choice("sigma_mode", self.sigma_mode, SIGMA_MODES)
        if algorithm.model == "shuffle" and self.sigma_mode == "paper":
            why = (
                "Theorem 5.5's split spends all of δ on the calls (§5.3.3)"
                if algorithm.release == "vector-sum"
                else "Theorem 5.3 states σ0 only up to constants"
            )
            raise ParameterError("sigma_mode", self.sigma_mode, f"'exact' or 'code' ({why})")
        v.choice("sensitivity", self.sensitivity, SENSITIVITIES)
        if algorithm.release == "vector-sum" and self.sensitivity != "replace-one":
            raise ParameterError(
                "sensitivity",
                self.sensitivity,
                "'replace-one' (P_Vec's guarantee is per data point, under replace-one: ‖x y‖ <= clip, "
                "‖upper(x xᵀ)‖ <= 1)",
            )
        if self.sensitivity == "batch" and algorithm.schedule != "fixed":
            raise ParameterError(
                "sensitivity", self.sensitivity, "'replace-one' or 'add-remove' (no fixed B)"
            )
        if self.regularizer is not None:
            object.__setattr__(self, "regularizer", v.positive("regularizer", self.regularizer))
        v.choice("radius", self.radius, RADII)
        object.__setattr__(self, "crs", v.positive("crs", self.crs))
        object.__setattr__(self, "alpha", v.open_unit("alpha", self.alpha))
        if self.noise_scale is not None:
            object.__setattr__(self, "noise_scale", v.nonnegative("noise_scale", self.noise_scale))
        if self.threshold is not None:
            if algorithm.schedule != "adaptive":
                raise ParameterError(
                    "threshold", self.threshold, f"None ('{self.name}' has a fixed schedule)"
                )
            object.__setattr__(self, "threshold", v.positive("threshold", self.threshold))
        object.__setattr__(
            self, "eig_floor", v.interval("eig_floor", self.eig_floor, 0.0, 1.0, why="a fraction of λ")
        )

    @property
    def algorithm(self) -> Algorithm:
        return ALGORITHMS[self.name]

    @property
    def private(self) -> bool:
        return self.algorithm.private

    @property
    def lazy(self) -> bool:
        return self.algorithm.lazy

    @property
    def label(self) -> str:
        """A display label such as ``LDP-FedLinUCB(ε=0.2)``."""
        base = self.algorithm.label
        return f"{base}(ε={self.epsilon:g})" if self.epsilon is not None else base


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them."""
    known = set(Learner.__dataclass_fields__) - {"name", "epsilon"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ParameterError(unknown[0], params[unknown[0]], "one of " + ", ".join(sorted(known)))
    return Learner(name, epsilon, **params)


# ---------------------------------------------------------------------------------------
# Noise level, regularizer, radius
# ---------------------------------------------------------------------------------------


def _sensitivities(learner: Learner, batch: int) -> Sensitivities:
    c = learner.clip if learner.clip is not None else 1.0
    if learner.sensitivity == "add-remove":
        return (
            PAPER if c == 1.0 else Sensitivities(c, 1.0, Neighbouring.ADD_REMOVE, f"add-remove, |y| <= {c:g}")
        )
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
        or 1 (P_Vec adds noise once per call, central-level: §5.3.3, "no factor M")."""
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
        ``scale = 1`` parameters certify nothing (§10.5).
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
    """The authors' code for Theorem 5.3: ``√(κ log(1/δ) log(1 + κ/(Tδ)) log(Mκ/δ))/(ε√M)`` (§5.2.4 [C])."""
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
    sens = _sensitivities(learner, batch)
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
            clip = learner.clip if learner.clip is not None else 1.0
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
    """The per-call ``(ε0, δ0)`` of P_T^Vec's ``"exact"`` mode (§5.3.3, the spec's safe reading).

    A user's two data points (bias and covariance) each enter at most ``κ`` calls: ``2κ`` adaptive
    ``(ε0, δ0)``-SDP calls. ``δ0 = δ/(4κ)`` (half of ``δ`` spent by the calls, half left to the
    composition) and ``ε0`` the largest, by bisection, whose optimal composition (Kairouz–Oh–
    Viswanath) is at most ``ε`` at ``δ``; ``ε0 <= 15``, the range of P_Vec's guarantee. Theorem 5.5
    instead uses advanced composition with ``ε0 = ε/(2√(2κ log(2/δ)))`` and ``δ0 = δ/(2κ)`` per
    stream, which spends all of ``δ`` on the calls and drops the second-order term (§5.3.3 [O]).
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
    """The authors' code's P_Vec parameters [C]: ``g = max(⌈2√n⌉, d, 4)``, ``p = 1/4``,
    ``b = ⌈g² ln(d²/δ)²/(ε² n)⌉`` (``scale = 1``, the total ``(ε, δ)``; the code leaves ``b`` a
    float, which numpy truncates, §10.5) — not a guarantee."""
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


def regularizer_of(learner: Learner, noise: Noise, agents: int, dim: int) -> float:
    """``λ``: the learner's own, or the code's ``√M`` / ``√(Mκ) σ0 (√(κ + log(1/α)) + √d)`` (§3.1)."""
    if learner.regularizer is not None:
        return learner.regularizer
    m = v.integer("agents", agents, minimum=1)
    d = v.integer("dim", dim, minimum=1)
    if noise.sigma0 <= 0:
        return math.sqrt(m)
    k = noise.kappa
    sigma = noise.sigma0
    if noise.vector is not None and learner.sigma_mode == "code" and learner.delta is not None:
        # the code's "noise level" of the vector-sum variant (§5.3.3 [C]), used only for λ
        assert learner.epsilon is not None
        delta = learner.delta
        sigma = math.sqrt(k * math.log(1 / delta)) * math.log(k * d * d / delta) / learner.epsilon
    return (
        math.sqrt(noise.copies(m) * k) * sigma * (math.sqrt(k + math.log(1 / learner.alpha)) + math.sqrt(d))
    )


def _radius(
    learner: Learner, noise: Noise, lam: float, agents: int, dim: int, scale: float
) -> Callable[[int], float]:
    """``t -> β_t`` (see the module docstring)."""
    a, m, d = learner.alpha, agents, dim
    if learner.radius == "code":
        s = math.sqrt(d)

        def code(t: int) -> float:
            return learner.crs * (
                math.sqrt(lam) * s + scale * math.sqrt(d * math.log1p(t * m / (d * lam)) + math.log(1 / a))
            )

        return code
    if noise.sigma0 > 0:
        lo, hi = lam / 2, 3 * lam / 2
        total = math.sqrt(noise.copies(m) * noise.kappa) * noise.sigma0
        nu = total * (math.sqrt(d) + math.sqrt(2 * math.log(4 * noise.syncs / a))) / math.sqrt(lo)
    else:
        lo = hi = lam
        nu = 0.0

    def theory(t: int) -> float:
        return learner.crs * (
            math.sqrt(2 * math.log(2 / a) + d * math.log1p(m * t / (d * lo))) + math.sqrt(hi) + nu
        )

    return theory


# ---------------------------------------------------------------------------------------
# Privacy
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Privacy:
    """What a run's release guarantees, and whether it is a guarantee of the algorithm as run.

    Attributes
    ----------
    model : str
        ``"silo-ldp"`` (Definition 2.1), ``"shuffle"`` (Definition 2.3) or ``"none"``.
    claimed_epsilon, claimed_delta : float or None
        The learner's target ``(ε, δ)`` (``None`` without privacy).
    epsilon : float
        The exact certified ε of the release at ``delta`` (the largest over the ledgers: a user is
        in the nodes of one batch); ``inf`` when nothing is certified (``certified`` False, or no
        privacy).
    delta : float
        The run's δ.
    content_epsilon : float
        The exact ε at ``delta`` of the released node sums alone, whatever the argument: equal to
        ``epsilon`` when ``certified``; for Algorithm 1 with per-user sensitivity and for Dubey &
        Pentland it is what the noise would give if the per-user argument held (it does not).
    certified : bool
        Whether the ledger's ε is a guarantee of the algorithm as run (module docstring).
    meets_claim : bool
        ``certified`` and ``epsilon <= claimed_epsilon``.
    sigma0 : float
    sigma_mode : str
    kappa : int
    sensitivity : str
    nodes : tuple of (int, float)
        ``(nodes per stream, ε)`` for each distinct ledger.
    argument : str
        Under which argument ``content_epsilon`` holds.
    message : str
        What does not hold, if anything.
    """

    model: str
    claimed_epsilon: float | None
    claimed_delta: float | None
    epsilon: float
    delta: float
    content_epsilon: float
    certified: bool
    meets_claim: bool
    sigma0: float
    sigma_mode: str
    kappa: int
    sensitivity: str
    nodes: tuple[tuple[int, float], ...]
    argument: str
    message: str = ""


def privacy_of(
    learner: Learner, noise: Noise, ledgers: Mapping[int, Accountant], delta: float, route: str = "auto"
) -> Privacy:
    """The privacy of a run from its ledgers (one per number of nodes a batch entered), answered by
    the accountant's ``route`` (``"auto"`` is the PLD route for the vector sums' cited (ε0, δ0)
    calls)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.linear.Learner")
    if not isinstance(noise, Noise):
        raise ParameterTypeError("noise", noise, "a learners.linear.Noise (see noise_of)")
    if not isinstance(ledgers, Mapping) or not all(
        isinstance(n, int) and isinstance(acc, Accountant) for n, acc in ledgers.items()
    ):
        raise ParameterTypeError("ledgers", ledgers, "a mapping of int (nodes) to accounting Accountant")
    d = v.open_unit("delta", delta)
    if not learner.private:
        return Privacy(
            "none", None, None, math.inf, d, math.inf, False, False, 0.0, "none", noise.kappa, "none", (),
            "none: exact sums are shared", "a non-private run: nothing is guaranteed",
        )  # fmt: skip
    assert learner.epsilon is not None
    assert noise.sensitivities is not None
    if noise.vector is not None:
        return _vector_privacy(learner, noise, noise.vector, ledgers, d, "pld" if route == "auto" else route)
    per = tuple(
        (n, ledger_epsilon(acc.ledger, d, acc.neighbouring, acc.dps, route))
        for n, acc in sorted(ledgers.items())
    )
    sens = noise.sensitivities
    argument = (
        f"silo-level LDP (Definition 2.1) under {sens.neighbouring.value} with per-user sensitivities "
        f"{sens.bias:g} (bias) and {sens.covariance:g} (covariance): kappa = {noise.kappa} Gaussian node "
        f"releases per stream, sigma0 = {noise.sigma0:g}, exact GDP accounting"
    )
    notes: list[str] = []
    if learner.name == "dubey-pentland":
        tree = noise.tree
        assert tree is not None
        content = ledger_epsilon(tree.accountant().ledger, d, sens.neighbouring, DEFAULT_DPS)
        certified = False
        notes.append(
            "NOT PRIVATE: Dubey & Pentland's sync rule depends on non-private local data, so the schedule "
            "itself leaks (Zhou & Chowdhury 2024, Example 3.1); content_epsilon is what the noise alone "
            "would give if the schedule were public (a tree over T syncs)"
        )
    else:
        content = max((e for _, e in per), default=0.0)
        certified = learner.lazy or learner.sensitivity == "batch"
        if not certified:
            notes.append(
                "Algorithm 1 decides from the silo's non-private current-batch data, so one user can change "
                "up to B terms of a stream element (not covered by the paper's proof): the per-user "
                "sensitivity the ledger uses "
                "does not bound it, and content_epsilon is not a guarantee of this run "
                "(use 'ldp-fedlinucb-lazy' or sensitivity='batch')"
            )
    epsilon = content if certified else math.inf
    if certified and noise.amplified is not None and d >= noise.amplified[1]:
        epsilon = min(epsilon, noise.amplified[0])
        argument += (
            f"; and Theorem 5.3 (shuffling, Lemma F.2): ({noise.amplified[0]:g}, {noise.amplified[1]:g}) "
            "certified with explicit constants; epsilon is the smaller"
        )
    meets = certified and epsilon <= learner.epsilon
    if learner.sigma_mode == "code" and learner.algorithm.model == "shuffle":
        notes.append(
            "sigma_mode='code': the authors' Theorem 5.3 sigma0, with no constants; the amplified guarantee "
            "is not certified, epsilon is the unamplified Gaussian ledger's"
        )
    elif learner.sigma_mode == "code":
        notes.append(
            "sigma_mode='code': the authors' code's sigma0, which does not meet its claim in general (§10.3)"
        )
    if certified and not meets:
        notes.append(f"the release's exact epsilon {epsilon:g} exceeds the claimed {learner.epsilon:g}")
    return Privacy(
        model=learner.algorithm.model,
        claimed_epsilon=learner.epsilon,
        claimed_delta=learner.delta,
        epsilon=epsilon,
        delta=d,
        content_epsilon=content,
        certified=certified,
        meets_claim=meets,
        sigma0=noise.sigma0,
        sigma_mode=learner.sigma_mode,
        kappa=noise.kappa,
        sensitivity=sens.name,
        nodes=per,
        argument=argument,
        message="; ".join(notes),
    )


def _vector_privacy(
    learner: Learner,
    noise: Noise,
    vec: VectorSum,
    ledgers: Mapping[int, Accountant],
    delta: float,
    route: str,
) -> Privacy:
    """The privacy of a P_T^Vec run (Theorem 5.5's argument, accounted exactly)."""
    assert learner.epsilon is not None
    notes: list[str] = []
    if vec.certified:
        per = tuple(
            (n, ledger_epsilon(ledgers[n].ledger, delta, ledgers[n].neighbouring, ledgers[n].dps, route))
            for n in sorted(ledgers)
        )
        content = max((e for _, e in per), default=0.0)
    else:
        per = ()
        content = math.inf
        notes.append(
            "sigma_mode='code': the authors' P_Vec parameters (b = g² ln(d²/δ)²/(ε² n), scale = 1, the total "
            "(ε, δ) per call) are not covered by the cited theorem (§10.5): nothing is certified, no ledger"
        )
    certified = vec.certified and learner.lazy
    if vec.certified and not learner.lazy:
        notes.append(
            "Algorithm 1 decides from the silo's non-private current-batch data, so one user can change "
            "up to B data points of a call (not covered by the paper's proof), beyond P_Vec's per-point "
            "guarantee; "
            "content_epsilon is not a guarantee of this run (use 'sdp-fedlinucb-vec-lazy')"
        )
    epsilon = content if certified else math.inf
    meets = certified and epsilon <= learner.epsilon
    if certified and not meets:
        notes.append(f"the release's epsilon {epsilon:g} exceeds the claimed {learner.epsilon:g}")
    argument = (
        "shuffle DP (Definition 2.3) under replace-one: each user's bias point (norm <= clip) and "
        f"covariance point (norm <= 1) enter at most kappa = {noise.kappa} P_Vec calls each (Algorithm 5), "
        f"every call ({vec.epsilon0:g}, {vec.delta0:g})-SDP as cited "
        "(Cheu et al. 2021, via Zhou & Chowdhury 2024, Algorithm 6); the "
        "2 kappa calls composed optimally (Kairouz-Oh-Viswanath, the accountant's pld route), "
        "as Theorem 5.5 composes them"
    )
    return Privacy(
        model=learner.algorithm.model,
        claimed_epsilon=learner.epsilon,
        claimed_delta=learner.delta,
        epsilon=epsilon,
        delta=delta,
        content_epsilon=content,
        certified=certified,
        meets_claim=meets,
        sigma0=noise.sigma0,
        sigma_mode=learner.sigma_mode,
        kappa=noise.kappa,
        sensitivity="replace-one (per data point)",
        nodes=per,
        argument=argument,
        message="; ".join(notes),
    )


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SyncRecord:
    """What one sync did, for the repetitions ``reps`` that synced (given to ``run``'s observer).

    Arrays have a leading axis over ``reps`` (``n``), then silos ``M`` where per silo. Without
    privacy the message, p-sum and register fields are ``None``.
    """

    round: int
    reps: IntArray
    step: IntArray
    level: IntArray
    messages_bias: FloatArray | None  # (n, M, d): each silo's released noisy p-sum
    messages_cov: FloatArray | None  # (n, M, d, d)
    psums_bias: FloatArray | None  # (n, M, d): the raw p-sums they are the noisy versions of
    psums_cov: FloatArray | None
    raw_prefix_bias: FloatArray | None  # (n, d): the tree's prefix from raw registers
    raw_prefix_cov: FloatArray | None
    prefix_bias: FloatArray  # (n, d): Ũ_syn as released
    prefix_cov: FloatArray  # (n, d, d): W̃_syn as released
    exact_bias: FloatArray  # (n, d): Σ over silos and rounds so far of x y (clipped y)
    exact_cov: FloatArray  # (n, d, d)
    nodes: IntArray  # (n,): popcount(k), nodes summed in the prefix


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of :func:`run` for ``R`` repetitions (arrays read-only).

    Attributes
    ----------
    learner : Learner
    horizon : int
    rounds : numpy.ndarray of int64, shape (C,)
    pseudo_regret : numpy.ndarray, shape (R, C)
        Group pseudo-regret ``Σ_i Σ_{s<=t} max_a μ - μ_{a_s,i}`` (Zhou & Chowdhury (2024)'s ``R_M(T)``).
    realized_regret : numpy.ndarray, shape (R, C)
        ``Σ_i Σ_{s<=t} r(best) - r(a_s,i)`` with ``best`` the mean-best arm (the code's measure, §8.4).
    syncs : numpy.ndarray of int64, shape (R,)
        Synchronisations (communication rounds).
    reals : numpy.ndarray of int64, shape (R,)
        Reals each silo sent: ``syncs · (d + d(d+1)/2)``.
    bits : numpy.ndarray of int64, shape (R,)
        ``64 · reals``.
    clipped : numpy.ndarray of int64, shape (R,)
        Syncs at which ``λI + W̃_syn`` had an eigenvalue below the floor and was clipped (§10.7).
    noise : Noise
    regularizer : float
        ``λ``.
    delta : float
        The δ of :attr:`privacy`.
    """

    learner: Learner
    horizon: int
    rounds: IntArray
    pseudo_regret: FloatArray
    realized_regret: FloatArray
    syncs: IntArray
    reals: IntArray
    bits: IntArray
    clipped: IntArray
    noise: Noise
    regularizer: float
    delta: float
    _ledgers: Mapping[int, Accountant] = field(repr=False)

    @property
    def released(self) -> IntArray:
        """Node releases per stream per silo (one per sync)."""
        return self.syncs

    @property
    def ledgers(self) -> dict[int, Accountant]:
        """The ledger of one user of each kind of batch, keyed by the nodes per stream it entered (copies)."""
        return {n: acc.copy() for n, acc in self._ledgers.items()}

    @cached_property
    def privacy(self) -> Privacy:
        """:func:`privacy_of` the run's ledgers at :attr:`delta` (memoized per ledger)."""
        return privacy_of(self.learner, self.noise, self._ledgers, self.delta)


# ---------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------


def _check_run(
    learner: object, instances: object, horizon: object, tapes: object, rng: object, checkpoints: object
) -> tuple[list[LinearInstance], int, list[np.random.Generator], IntArray]:
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.linear.Learner (see make_learner)")
    if not isinstance(tapes, Sequence) or not tapes:
        raise ParameterError("tapes", tapes, "a non-empty sequence of numpy Generators (one per repetition)")
    for i, gen in enumerate(tapes):
        if not isinstance(gen, np.random.Generator):
            raise ParameterTypeError(f"tapes[{i}]", gen, "a numpy.random.Generator")
    R = len(tapes)
    insts: list[LinearInstance]
    if isinstance(instances, LinearInstance):
        insts = [instances] * R
    elif isinstance(instances, Sequence) and not isinstance(instances, str) and len(instances) == R:
        insts = list(instances)
        for i, inst in enumerate(insts):
            if not isinstance(inst, LinearInstance):
                raise ParameterTypeError(
                    f"instances[{i}]",
                    inst,
                    "a linear instance (learners.linear_instances.SyntheticInstance or QueryInstance)",
                )
    else:
        raise ParameterError(
            "instances", instances, f"one linear instance or a sequence of R={R} of them (LinearInstance)"
        )
    shape = (insts[0].dim, insts[0].arms, insts[0].agents)
    if any((i.dim, i.arms, i.agents) != shape for i in insts):
        raise ParameterError(
            "instances", [(i.dim, i.arms, i.agents) for i in insts], "one (dim, arms, agents)"
        )
    T = v.integer("horizon", horizon, minimum=1)
    if learner.batch is not None and learner.batch > T:
        raise ParameterError("horizon", horizon, f"an integer >= batch = {learner.batch}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    C = v.integer("checkpoints", checkpoints, minimum=1)
    n = min(C, T)
    rounds = np.unique(-(-np.arange(1, n + 1, dtype=np.int64) * T // n))
    return insts, T, list(tapes), rounds


class _State:
    """All repetitions' statistics, the tree registers, and the ledgers.

    The tree registers and the synced statistics have a leading axis ``R``; the silos' own state
    is *feature-major*, ``(features..., M, R)`` (``U``, the packed ``W``, ``V^{-1}`` as ``P`` of
    shape ``(d, d, 1|M, R)``, ``θ`` and the packed coefficients of ``P``), so that its per-round
    updates run over ``M·R`` contiguous entries and the score products read it as a transposed
    operand.
    """

    def __init__(
        self,
        learner: Learner,
        noise: Noise,
        lam: float,
        R: int,
        M: int,
        d: int,
        keys: NDArray[np.uint64] | None,
    ) -> None:
        self.learner, self.noise, self.lam = learner, noise, lam
        self.R, self.M, self.d = R, M, d
        self.keys = keys
        # the packed upper triangle of x xᵀ (np.triu_indices order): W's entries, P's as coefficients
        self.triu = np.triu_indices(d)
        D = self.triu[0].size
        self.flat = self.triu[0] * d + self.triu[1]
        self.twice = np.where(self.triu[0] == self.triu[1], 1.0, 2.0)[:, None, None]
        self.W = np.zeros((D, M, R))  # packed: each entry x_i x_j is the same float as in x xᵀ
        self.U = np.zeros((d, M, R))
        self.exact_b = np.zeros((R, d))
        self.exact_c = np.zeros((R, D))  # the covariance statistics are packed throughout
        k = noise.kappa
        self.vector = noise.vector
        if self.vector is not None:
            # P_T^Vec: the current batch's data points, and per level the analyzer's estimates of
            # the batches since that level's window opened (module docstring)
            batch = learner.batch or 1
            self.points_b = np.zeros((R, batch, M, d))
            self.points_c = np.zeros((R, batch, M, D))
            self.acc_b = np.zeros((R, k, d))
            self.acc_c = np.zeros((R, k, D))
            self.server_b = np.zeros((R, k, d))
            self.server_c = np.zeros((R, k, D))
        elif learner.private:
            # Protocol P's node noise (Zhou & Chowdhury 2024, Algorithm 2): one law, whose
            # σ0 both scales every node's draws (tree_step) and builds every node's ledger events
            # (account), so the ledger holds what was added, not a stand-in computed beside it
            self.node_noise = Gaussian(noise.sigma0)
            self.alpha_b = np.zeros((R, M, k, d))
            self.alpha_c = np.zeros((R, M, k, D))
            self.server_b = np.zeros((R, k, d))
            self.server_c = np.zeros((R, k, D))
            self.raw_b = np.zeros((R, k, d))
            self.raw_c = np.zeros((R, k, D))
        self.step = np.zeros(R, dtype=np.int64)
        self.t_last = np.zeros(R, dtype=np.int64)
        self.clipped = np.zeros(R, dtype=np.int64)
        self.logdet = np.zeros((M, R))
        # V^{-1}: shared by a repetition's silos (lazy); per silo (Algorithm 1), updated by
        # Sherman-Morrison; or (low_rank, Algorithm 1 on a fixed schedule where d is large) the
        # synced P0 shared by the silos minus each silo's rank-one terms u uᵀ since the sync
        self.low_rank = not learner.lazy and learner.algorithm.schedule == "fixed" and _low_rank(d, learner)
        shared = learner.lazy or self.low_rank
        self.P = np.broadcast_to((np.eye(d) / lam)[:, :, None, None], (d, d, 1 if shared else M, R)).copy()
        self.outer = None if shared else np.empty_like(self.P)  # the Sherman-Morrison term's buffer
        if self.low_rank:
            self.P0 = np.broadcast_to(np.eye(d) / lam, (R, d, d)).copy()
            self.us = np.zeros((M, learner.batch or 1, R, d))  # the silos' u of the rounds since the sync
            self.terms = 0
        self.b = np.zeros((d, 1, R))
        self.theta = np.zeros((d, 1, R))
        self.coef = self.packed(self.P)  # the quadratic-form coefficients of the shared P, per sync
        self.batch_ledgers: list[Accountant] = []

    def tree_step(
        self, ra: IntArray, gb: FloatArray, gc: FloatArray, record: bool
    ) -> tuple[FloatArray, FloatArray, dict[str, Any]]:
        """Protocol P at sync ``step[ra]`` for the repetitions ``ra``: the released prefixes.

        The covariance stream is packed (``d(d+1)/2`` entries, :meth:`full` restores the symmetric
        matrices): its noise is the packed upper triangle of ``σ0 (N + Nᵀ)/2``, ``N`` the ``d²``
        standard normals drawn as before. A node adds the registers of the levels below its own
        only (half the syncs, level 0, add none).
        """
        n, M, d, kappa = ra.size, self.M, self.d, self.noise.kappa
        step = self.step[ra]
        level = np.log2(step & -step).astype(np.int64)
        node_b, node_c = gb.copy(), gc.copy()
        for lv in np.unique(level).tolist():
            if lv:
                sel = np.flatnonzero(level == lv)
                node_b[sel] += self.alpha_b[ra[sel], :, :lv].sum(axis=2)
                node_c[sel] += self.alpha_c[ra[sel], :, :lv].sum(axis=2)
        ms = np.arange(M)[None, :]
        self.alpha_b[ra[:, None], ms, level[:, None]] = node_b
        self.alpha_c[ra[:, None], ms, level[:, None]] = node_c
        zb = np.empty((n, M, d))
        zc = np.empty(node_c.shape)
        i, j = self.triu
        assert self.keys is not None
        for k, r in enumerate(ra.tolist()):  # one keyed stream per repetition (see the module docstring)
            gen = keyed_stream((int(self.keys[r, 0]), int(self.keys[r, 1])), int(step[k]), 2)
            zb[k] = gen.standard_normal((M, d))
            z = gen.standard_normal((M, d, d))
            zc[k] = z[:, i, j] + z[:, j, i]
        sigma = float(self.node_noise.sigma)  # the ledger's σ0 (account), the same float
        zb *= sigma
        zc = sigma * zc / 2
        msg_b, msg_c = node_b + zb, node_c + zc
        self.server_b[ra, level] = msg_b.sum(axis=1)
        self.server_c[ra, level] = msg_c.sum(axis=1)
        bits = ((step[:, None] >> np.arange(kappa)[None, :]) & 1).astype(np.float64)
        prefix_b = np.einsum("nj,njd->nd", bits, self.server_b[ra])
        prefix_c = np.einsum("nj,njd->nd", bits, self.server_c[ra])
        extra: dict[str, Any] = {}
        if record:
            self.raw_b[ra, level] = node_b.sum(axis=1)
            self.raw_c[ra, level] = node_c.sum(axis=1)
            extra = {
                "level": level,
                "messages_bias": msg_b,
                "messages_cov": self.full(msg_c),
                "psums_bias": node_b,
                "psums_cov": self.full(node_c),
                "raw_prefix_bias": np.einsum("nj,njd->nd", bits, self.raw_b[ra]),
                "raw_prefix_cov": self.full(np.einsum("nj,njd->nd", bits, self.raw_c[ra])),
            }
        return prefix_b, prefix_c, extra

    def packed(self, P: FloatArray) -> FloatArray:
        """The coefficients ``c`` of ``xᵀPx = c · triu(x xᵀ)`` for symmetric ``P`` of shape
        ``(d, d, A, n)``: its upper triangle, off-diagonal entries doubled, shape ``(D, A, n)``."""
        out: FloatArray = np.take(P.reshape(self.d * self.d, *P.shape[2:]), self.flat, axis=0)
        out *= self.twice
        return out

    def apply(self, v: FloatArray) -> FloatArray:
        """``P_i v`` for every silo and repetition, ``v`` of shape ``(d, M, R)`` (low_rank only):
        ``P0 v - Σ_s u_s (u_sᵀ v)`` over the silo's terms since the sync."""
        out: FloatArray = (self.P0 @ v.transpose(2, 0, 1)).transpose(1, 2, 0)
        if self.terms:
            us = self.us[:, : self.terms]  # (M, j, R, d)
            out = out - np.einsum("mjrd,mjr->dmr", us, np.einsum("mjrd,dmr->mjr", us, v))
        return out

    def correction(self, X: FloatArray) -> FloatArray | None:
        """``Σ_s (u_sᵀ x)²`` of every arm, shape ``(M, R, K)``: what the silo's terms since the
        sync take off ``xᵀ P0 x`` (low_rank only; ``None`` right after a sync)."""
        if not self.terms:
            return None
        j, (M, R, d) = self.terms, (self.M, self.R, self.d)
        us = self.us[:, :j]  # (M, j, R, d), contiguous
        if X.shape[0] == 1:
            proj = us.reshape(M, j * R, d) @ X[0]  # (M, j R, K)
            proj = proj.reshape(M, j, R, -1)
        else:
            proj = np.einsum("mjrd,rmdk->mjrk", us, X)
        out: FloatArray = np.einsum("mjrk,mjrk->mrk", proj, proj)
        return out

    def add_term(self, x: FloatArray) -> FloatArray:
        """Algorithm 1's rank-one update by the silos' played ``x`` ``(d, M, R)`` (low_rank only):
        ``u = P_i x / sqrt(1 + xᵀ P_i x)`` joins the silo's terms; the denominators are returned."""
        Px = self.apply(x)
        den = 1.0 + np.einsum("imr,imr->mr", x, Px)
        self.us[:, self.terms] = (Px / np.sqrt(den)).transpose(1, 2, 0)
        self.terms += 1
        out: FloatArray = den
        return out

    def full(self, W: FloatArray) -> FloatArray:
        """The symmetric matrices ``(..., d, d)`` whose packed upper triangles are ``W`` ``(..., D)``."""
        i, j = self.triu
        out = np.empty((*W.shape[:-1], self.d, self.d))
        out[..., i, j] = W
        out[..., j, i] = W
        return out

    def record_point(self, j: int, x: FloatArray, y: FloatArray, xx: FloatArray) -> None:
        """Keep round ``j`` of the batch's data points ``x y`` and ``xx``, the upper triangle of ``x xᵀ``."""
        self.points_b[:, j] = x * y[..., None]
        self.points_c[:, j] = xx

    def vector_step(self, ra: IntArray) -> tuple[FloatArray, FloatArray, dict[str, Any]]:
        """P_T^Vec (Algorithms 5-6) at sync ``step[ra]``: the released prefixes.

        The node of level ``i`` at step ``k`` is one P_Vec call over the data points of batches
        ``k - 2^i + 1 .. k`` (every silo's). Its analyzer sees the count of ones per coordinate,
        ``Σ x̂ + Bin(n_i b_i, p)`` (:func:`learners.protocols.shuffle_sum`'s exact path), and that
        count is the sum over the window's batches of ``Σ_batch x̂ + Bin(n_batch b_i, p)``: so each
        batch is randomized, when it ends, at every level's parameters (fresh rounding and
        binomials per level: a point is randomized afresh in each call it enters), the estimates are
        accumulated per level, and level ``i``'s accumulator is released at the next step of
        level ``i`` and cleared with those below it. Points are kept for one batch only.
        """
        vec = self.vector
        assert vec is not None
        assert self.keys is not None
        M, d, kappa = self.M, self.d, self.noise.kappa
        step = self.step[ra]
        level = np.log2(step & -step).astype(np.int64)
        users = self.points_b.shape[1] * M
        for j, r in enumerate(ra.tolist()):  # one keyed stream per repetition (see the module docstring)
            gen = keyed_stream((int(self.keys[r, 0]), int(self.keys[r, 1])), int(step[j]), 2)
            xb = self.points_b[r].reshape(1, users, d)
            xc = self.points_c[r].reshape(1, users, -1)
            for i in range(kappa):
                self.acc_b[r, i] += shuffle_sum(xb, replace(vec.bias[i], users=users), gen)[0]
                self.acc_c[r, i] += shuffle_sum(xc, replace(vec.cov[i], users=users), gen)[0]
        self.server_b[ra, level] = self.acc_b[ra, level]
        self.server_c[ra, level] = self.acc_c[ra, level]
        below = np.arange(kappa)[None, :] <= level[:, None]  # (n, κ): cleared levels
        self.acc_b[ra] *= ~below[..., None]
        self.acc_c[ra] *= ~below[..., None]
        bits = ((step[:, None] >> np.arange(kappa)[None, :]) & 1).astype(np.float64)
        prefix_b = np.einsum("nj,njd->nd", bits, self.server_b[ra])
        prefix_c = np.einsum("nj,njd->nd", bits, self.server_c[ra])
        return prefix_b, prefix_c, {"level": level}

    def account(self, step: int) -> None:
        """Compose the node released at sync ``step`` into the ledger of every batch it contains."""
        sens = self.noise.sensitivities
        assert sens is not None
        if self.vector is not None:
            if not self.vector.certified:
                return  # the code's parameters certify nothing: no ledger (privacy_of says so)
            bias = cov = Event(self.vector.event)
        else:
            gauss = self.node_noise  # the law tree_step drew the node's noise from
            bias, cov = Event(AdditiveNoise(gauss, sens.bias)), Event(AdditiveNoise(gauss, sens.covariance))
        while len(self.batch_ledgers) < step:
            self.batch_ledgers.append(Accountant(sens.neighbouring))
        width = step & -step
        for batch in range(step - width, step):
            self.batch_ledgers[batch].compose(bias).compose(cov)

    def sync(self, ra: IntArray, t: int, observer: Callable[[SyncRecord], None] | None) -> None:
        """Synchronise the repetitions ``ra`` after round ``t``."""
        learner, d = self.learner, self.d
        self.step[ra] += 1
        gb, gc = self.U[..., ra].transpose(2, 1, 0), self.W[..., ra].transpose(2, 1, 0)  # (n, M, d | D)
        self.exact_b[ra] += gb.sum(axis=1)
        self.exact_c[ra] += gc.sum(axis=1)
        extra: dict[str, Any] = {}
        if self.vector is not None:
            pb, pc, extra = self.vector_step(ra)
            self.account(int(self.step[ra[0]]))
        elif learner.private:
            pb, pc, extra = self.tree_step(ra, gb, gc, observer is not None)
            if learner.algorithm.schedule == "fixed":
                self.account(int(self.step[ra[0]]))
        else:
            pb, pc = self.exact_b[ra], self.exact_c[ra]
        A = self.lam * np.eye(d) + self.full(pc)  # symmetric by construction
        w, Q = np.linalg.eigh(A)
        floor = learner.eig_floor * self.lam
        bad = w[:, 0] < floor
        if bad.any():
            wc = np.maximum(w[bad], floor)
            A[bad] = (Q[bad] * wc[:, None, :]) @ Q[bad].swapaxes(-1, -2)
            self.clipped[ra[bad]] += 1
        P0 = np.linalg.solve(A, np.broadcast_to(np.eye(d), A.shape))
        P0 = (P0 + P0.swapaxes(-1, -2)) / 2
        P0t = P0.transpose(1, 2, 0)[:, :, None, :]  # (d, d, 1, n)
        self.P[..., ra] = P0t
        self.b[:, 0, ra] = pb.T
        self.theta[:, 0, ra] = (P0 @ pb[..., None])[..., 0].T
        if learner.lazy or self.low_rank:
            self.coef[..., ra] = self.packed(P0t)
        if self.low_rank:  # a fixed schedule: every repetition syncs
            self.P0[ra] = P0
            self.terms = 0
        self.U[..., ra] = 0.0
        self.W[..., ra] = 0.0
        self.logdet[:, ra] = 0.0
        self.t_last[ra] = t
        if observer is not None:
            step = self.step[ra]
            observer(
                SyncRecord(
                    round=t,
                    reps=ra.copy(),
                    step=step.copy(),
                    level=extra.get("level", np.log2(step & -step).astype(np.int64)),
                    messages_bias=extra.get("messages_bias"),
                    messages_cov=extra.get("messages_cov"),
                    psums_bias=extra.get("psums_bias"),
                    psums_cov=extra.get("psums_cov"),
                    raw_prefix_bias=extra.get("raw_prefix_bias"),
                    raw_prefix_cov=extra.get("raw_prefix_cov"),
                    prefix_bias=pb.copy(),
                    prefix_cov=self.full(pc),
                    exact_bias=self.exact_b[ra].copy(),
                    exact_cov=self.full(self.exact_c[ra]),
                    nodes=np.array([bin(int(s)).count("1") for s in step], dtype=np.int64),
                )
            )

    def ledgers(self) -> dict[int, Accountant]:
        """The batch ledgers grouped: nodes per stream -> the ledger of such a batch."""
        out: dict[int, Accountant] = {}
        for acc in self.batch_ledgers:
            n = len(acc.ledger) // 2
            known = out.setdefault(n, acc)
            assert known.ledger == acc.ledger
        return dict(sorted(out.items()))


#: Bytes of a block's quadratic features above which they are formed round by round, not ahead in
#: the drawing thread (a shared synthetic instance of the paper: 70 MB; MSLR's d = 78 would need GBs).
QUADRATIC_BUDGET = 2**28


class _Slots:
    """Two sets of reusable arrays, one for the chunk being played and one for the chunk being
    drawn: fresh arrays of tens of MB a chunk would cost a page fault per 4 kB on every use."""

    def __init__(self) -> None:
        self.arrays: dict[tuple[int, str], FloatArray] = {}

    def get(self, c: int, name: str, shape: tuple[int, ...]) -> FloatArray:
        """The array ``name`` of chunk ``c``'s slot with this shape (reallocated if it changed)."""
        key = (c % 2, name)
        out = self.arrays.get(key)
        if out is None or out.shape != shape:
            out = self.arrays[key] = np.empty(shape)
        return out


def _low_rank(d: int, learner: Learner) -> bool:
    """Whether Algorithm 1 keeps each silo's ``V^{-1}`` as the synced ``P0`` minus rank-one terms
    (:meth:`_State.apply`) rather than a ``d × d`` matrix per silo: when a batch's ``B - 1`` terms
    of ``d`` entries cost less than the matrix's ``d(d+1)/2`` per score (``B < d + 2``: MSLR's
    ``d = 57, 78`` at ``B = 25``, not the synthetic ``d = 10``). Both are exactly Algorithm 1's
    Sherman-Morrison updates; they differ in rounding only."""
    return (learner.batch or 1) < d + 2


def _chunk(
    insts: list[LinearInstance], shared: bool, tapes: list[NoiseTape], c: int, slots: _Slots
) -> tuple[FloatArray, FloatArray | None, FloatArray, FloatArray]:
    """Arms ``(1|R, CHUNK, M, d, K_c)`` (features last-but-one), their :func:`_quadratic_features`
    (or ``None`` above :data:`QUADRATIC_BUDGET`: computed round by round), means
    ``(1|R, CHUNK, M, K_c)``, noise ``(CHUNK, M, R, 2)``.

    ``K_c <= arms`` is the block's own arm count (the real-data instance pads a block to its
    largest query only); blocks of different repetitions are padded to the largest by cyclic
    repetition of their arms, which adds copies of existing arms only (ties go to the first copy).
    The features come transposed, ``(..., d, K)``, the layout the round's products and
    :func:`_quadratic_features` read contiguously.
    """
    inst0 = insts[0]
    if shared:
        feats, means = inst0.block(c)
        feats, means = feats[None], means[None]
    else:
        blocks = [inst.block(c) for inst in insts]
        k = max(b[1].shape[-1] for b in blocks)
        feats = np.stack([np.take(b[0], np.arange(k) % b[0].shape[-2], axis=-2) for b in blocks])
        means = np.stack([np.take(b[1], np.arange(k) % b[1].shape[-1], axis=-1) for b in blocks])
    if inst0.noise_sd == 0:  # noise-free rewards (real data): no tape to draw
        xi = np.zeros((CHUNK, inst0.agents, len(tapes), 2))
    else:
        xi = np.stack([tape.block(c, inst0.agents) for tape in tapes], axis=2) * inst0.noise_sd
    X = slots.get(c, "X", feats.swapaxes(-1, -2).shape)
    np.copyto(X, feats.swapaxes(-1, -2))
    d, k = X.shape[-2:]
    shape = (*X.shape[:-2], d * (d + 1) // 2, k)
    if math.prod(shape) * 8 > QUADRATIC_BUDGET:
        return X, None, means, xi
    return X, _quadratic_features(X, slots.get(c, "XX", shape)), means, xi


def _quadratic_features(X: FloatArray, out: FloatArray) -> FloatArray:
    """``triu(x xᵀ)`` of the arms ``X`` of shape ``(..., d, K)`` into ``out`` ``(..., d(d+1)/2, K)``.

    Rows in :func:`numpy.triu_indices` order, so that ``xᵀPx`` of every arm is one product with
    the packed coefficients of ``P`` (:meth:`_State.packed`): a product of shape
    ``(R, d(d+1)/2) @ (d(d+1)/2, K)`` per silo instead of ``R`` products ``(K, d) @ (d, d)`` and a
    contraction. Built row block by row block, each a contiguous broadcast product.
    """
    d, o = X.shape[-2], 0
    for i in range(d):
        np.multiply(X[..., i : i + 1, :], X[..., i:, :], out=out[..., o : o + d - i, :])
        o += d - i
    return out


def _scores(
    X: FloatArray, XX: FloatArray, theta: FloatArray, coef: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``⟨x, θ⟩`` and ``xᵀPx`` of every arm, both of shape ``(M, R, K)``.

    ``X`` ``(1|R, M, d, K)``, ``XX`` its :func:`_quadratic_features`, ``theta`` ``(1|M, R, d)``, and
    ``coef`` ``(1|M, R, d(d+1)/2)`` the packed ``P`` of each repetition (and silo), any strides. On
    a shared instance a silo's arms are multiplied by all repetitions' coefficients at once.
    """
    if X.shape[0] == 1:
        if theta.shape[1] == 1:
            # BLAS takes its matrix-vector path for a single row, which rounds its sums differently
            # from the matrix product's: with two equal rows, a repetition alone is scored by the
            # same kernel as in a batch
            est, quad = _scores(X, XX, np.concatenate([theta, theta], 1), np.concatenate([coef, coef], 1))
            return est[:, :1], quad[:, :1]
        return theta @ X[0], coef @ XX[0]
    # one instance per repetition: a product per repetition and silo, of two equal rows (see above)
    th, co = theta.swapaxes(0, 1), coef.swapaxes(0, 1)
    est = (np.stack([th, th], axis=-2) @ X)[:, :, 0].swapaxes(0, 1)
    quad = (np.stack([co, co], axis=-2) @ XX)[:, :, 0].swapaxes(0, 1)
    return est, quad


def _blocks(
    insts: list[LinearInstance], shared: bool, tapes: list[NoiseTape], chunks: int
) -> Iterator[tuple[FloatArray, FloatArray | None, FloatArray, FloatArray]]:
    """The chunks in order, the next one drawn in a worker thread while this one is played.

    Every block comes from its own keyed stream, so drawing ahead changes no number; numpy's
    generators release the GIL while drawing, which hides most of the cost of the arms. A chunk's
    arrays are reused two chunks later: the caller is done with chunk ``c`` when it asks for
    ``c + 1``, which is when ``c + 2`` starts being drawn.
    """
    slots = _Slots()
    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead = pool.submit(_chunk, insts, shared, tapes, 0, slots)
        for c in range(chunks):
            current = ahead.result()
            if c + 1 < chunks:
                ahead = pool.submit(_chunk, insts, shared, tapes, c + 1, slots)
            yield current


def run(
    learner: Learner,
    instances: LinearInstance | Sequence[LinearInstance],
    horizon: int,
    *,
    tapes: Sequence[np.random.Generator],
    rng: np.random.Generator,
    checkpoints: int = 1000,
    delta: float | None = None,
    observer: Callable[[SyncRecord], None] | None = None,
) -> RunResult:
    """Run ``learner`` for ``R = len(tapes)`` repetitions of ``horizon`` rounds on every silo.

    Parameters
    ----------
    learner : Learner
        From :func:`make_learner`.
    instances : LinearInstance or sequence of them
        A :class:`~learners.linear_instances.SyntheticInstance` (Zhou & Chowdhury (2024), §6) or a real-data
        :class:`~learners.linear_instances.QueryInstance` (§8.3; anything with the
        :class:`~learners.linear_instances.LinearInstance` interface): one instance for every
        repetition (the paper's setting: the instance is fixed across runs), or one per repetition
        (same ``d``, ``K``, ``M``).
    horizon : int
        ``T >= B``.
    tapes : sequence of numpy.random.Generator
        Repetition ``r``'s reward noise is keyed by two words drawn from ``tapes[r]`` (a fresh
        generator from the same seed gives every algorithm the same noise).
    rng : numpy.random.Generator
        The privacy noise: repetition ``r`` uses a stream keyed by the ``r``-th pair of words drawn.
    checkpoints : int
        Regret is recorded after ``ceil(c T / C)`` rounds, ``c = 1..C``.
    delta : float or None
        δ of the privacy report (``None``: the learner's δ, or 1e-6 without privacy).
    observer : callable or None
        Called with a :class:`SyncRecord` after every sync (for audits and tests).

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
        raise ParameterTypeError("observer", observer, "a callable taking a SyncRecord, or None")
    R = len(gens)
    inst0 = insts[0]
    d, M = inst0.dim, inst0.agents
    shared = all(inst == inst0 for inst in insts)
    noise = noise_of(learner, T, M, dim=d)
    if not noise.feasible:
        raise ProtocolError(
            f"'{learner.name}' at (ε, δ) = ({learner.epsilon:g}, {learner.delta:g}), M = {M}, T = {T}: "
            f"Theorem 5.3 is infeasible ({noise.conditions}: Lemma F.2's hypotheses fail); "
            "sigma_mode='code' runs the "
            "authors' uncertified σ0"
        )
    lam = regularizer_of(learner, noise, M, d)
    scale = learner.noise_scale if learner.noise_scale is not None else inst0.reward_scale
    beta = _radius(learner, noise, lam, M, d, scale)
    tape_list = [NoiseTape.draw(g) for g in gens]
    keys = rng.integers(0, 2**64, size=(R, 2), dtype=np.uint64, endpoint=False) if learner.private else None
    st = _State(learner, noise, lam, R, M, d, keys)
    adaptive = learner.algorithm.schedule == "adaptive"
    threshold = learner.threshold if learner.threshold is not None else T * math.log(M * T) / (d * M)
    clip = learner.clip
    lazy = learner.lazy
    pseudo_total = np.zeros(R)
    realized_total = np.zeros(R)
    pseudo = np.zeros((R, rounds.size))
    realized = np.zeros((R, rounds.size))
    next_cp = 0
    all_reps = np.arange(R)
    mm = np.arange(M)[:, None]
    r0 = np.zeros((1, R), dtype=np.intp) if shared else np.arange(R)[None, :]  # each repetition's instance
    # BLAS on one thread: a round is a batch of small products and factorizations, where OpenBLAS's
    # threads only contend (measured on 2 busy cores: eigh of (4, 65, 65) 84 ms threaded, 1.8 ms not;
    # a run 6-10x faster)
    with threadpool_limits(1):
        for c, (feats, quadratic, means, xi) in enumerate(_blocks(insts, shared, tape_list, -(-T // CHUNK))):
            best = means.argmax(axis=-1)  # (1|R, CHUNK, M)
            top = np.take_along_axis(means, best[..., None], axis=-1)[..., 0]
            if quadratic is None:
                buffer = np.empty((feats.shape[0], M, st.W.shape[0], feats.shape[-1]))
            for j in range(min(CHUNK, T - c * CHUNK)):
                t = c * CHUNK + j + 1
                X = feats[:, j]  # (1|R, M, d, K)
                XX = _quadratic_features(X, buffer) if quadratic is None else quadratic[:, j]
                if lazy:
                    theta, coef = st.theta, st.coef
                elif st.low_rank:
                    theta, coef = st.apply(st.b + st.U), st.coef
                else:
                    theta = np.einsum("ijmr,jmr->imr", st.P, st.b + st.U)  # (d, M, R)
                    coef = st.packed(st.P)
                est, quad = _scores(X, XX, theta.transpose(1, 2, 0), coef.transpose(1, 2, 0))  # (M, R, K)
                if st.low_rank and (less := st.correction(X)) is not None:
                    quad -= less
                ucb = np.sqrt(np.maximum(quad, 0.0, out=quad), out=quad)  # in place: 250k entries
                ucb *= beta(t)
                ucb += est
                arm = ucb.argmax(axis=-1)  # (M, R)
                x = np.ascontiguousarray(X[r0, mm, :, arm].transpose(2, 0, 1))  # (d, M, R)
                xx = _quadratic_features(x.reshape(d, M * R), np.empty((st.W.shape[0], M * R)))
                xx = xx.reshape(-1, M, R)  # (d(d+1)/2, M, R): the same floats as XX's column
                mu_a = means[r0, j, mm, arm]  # (M, R)
                top_j = top[:, j].T  # (M, 1|R)
                xi_t = xi[j]  # (M, R, 2): the best arm's noise, another arm's
                y = mu_a + np.where(arm == best[r0, j, mm], xi_t[..., 0], xi_t[..., 1])
                pseudo_total += (top_j - mu_a).sum(axis=0)
                realized_total += (top_j + xi_t[..., 0] - y).sum(axis=0)
                yc = np.clip(y, -clip, clip) if clip is not None else y
                if st.vector is not None:
                    st.record_point((t - 1) % (learner.batch or 1), x.T, yc.T, xx.T)
                st.U += x * yc
                st.W += xx
                if st.low_rank:
                    st.logdet += np.log(st.add_term(x))
                elif not lazy:
                    assert st.outer is not None
                    Px = np.einsum("ijmr,jmr->imr", st.P, x)
                    den = 1.0 + np.einsum("imr,imr->mr", x, Px)
                    u = Px / np.sqrt(den)
                    st.P -= np.multiply(u[:, None], u[None, :], out=st.outer)  # bitwise symmetric
                    st.logdet += np.log(den)
                while next_cp < rounds.size and rounds[next_cp] == t:
                    pseudo[:, next_cp] = pseudo_total
                    realized[:, next_cp] = realized_total
                    next_cp += 1
                if adaptive:
                    fire = ((t - st.t_last) * st.logdet > threshold).any(axis=0)
                    if fire.any():
                        st.sync(np.flatnonzero(fire), t, observer)
                elif t % (learner.batch or 1) == 0:
                    st.sync(all_reps, t, observer)

    def frozen(a: NDArray[Any]) -> NDArray[Any]:
        a.setflags(write=False)
        return a

    per_sync = d + d * (d + 1) // 2
    reals = st.step * per_sync
    return RunResult(
        learner=learner,
        horizon=T,
        rounds=frozen(rounds),
        pseudo_regret=frozen(pseudo),
        realized_regret=frozen(realized),
        syncs=frozen(st.step.copy()),
        reals=frozen(reals),
        bits=frozen(reals * FLOAT_BITS),
        clipped=frozen(st.clipped),
        noise=noise,
        regularizer=lam,
        delta=d_report,
        _ledgers=MappingProxyType(st.ledgers()),
    )
