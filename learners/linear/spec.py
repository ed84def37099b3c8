"""The algorithms of the federated LinUCB paper and their settings (a :class:`Learner` is a value).

Zhou & Chowdhury (2024), "On differentially private federated linear contextual bandits" (ICLR 2024).

Algorithms (:data:`ALGORITHMS`):

=========================  =================================================================
name                       what it is
=========================  =================================================================
``fedlinucb``              Algorithm 1 without privacy: exact sums, fixed batch ``B``
``fedlinucb-lazy``         the same, deciding from the synced statistics only
``ldp-fedlinucb``          Algorithm 1 + protocol P (Algorithm 2, silo-level LDP, Thm 5.1)
``ldp-fedlinucb-lazy``     Algorithm 8 (App. G) + protocol P: decisions from synced data only
``sdp-fedlinucb-amp``      Algorithm 1 + P with a shuffler, σ0 of Theorem 5.3 (Lemma F.2)
``sdp-fedlinucb-amp-lazy`` the same with Algorithm 8's decisions
``sdp-fedlinucb-vec``      Algorithm 1 + P_T^Vec (Algorithms 5-6, Theorem 5.5): shuffle vector sums
``sdp-fedlinucb-vec-lazy`` the same with Algorithm 8's decisions
``dubey-pentland``         Dubey & Pentland 2020 as the paper's Algorithm 3: adaptive sync
                           rule on non-private local data — **not private** (Example 3.1)
=========================  =================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accounting import validate as v
from learners.errors import ParameterError
from learners.runs import FLOAT_BITS, make_settings

__all__ = [
    "ALGORITHMS",
    "FLOAT_BITS",
    "RADII",
    "SENSITIVITIES",
    "SIGMA_MODES",
    "Algorithm",
    "Learner",
    "make_learner",
]


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
    #: How a node is released: ``"gaussian"`` (protocol P) or ``"vector-sum"`` (P_T^Vec, Theorem 5.5).
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

#: How σ0 is set (:mod:`learners.linear.noise`).
SIGMA_MODES = ("exact", "paper", "code")
#: The per-user sensitivities (:mod:`learners.linear.noise`).
SENSITIVITIES = ("replace-one", "add-remove", "batch")
#: The confidence radius: the authors' code, or Lemma C.4.
RADII = ("code", "theory")
#: The largest ``eig_floor``: 1/2 (Zhou & Chowdhury 2024, proof of Lemma C.4; :class:`Learner`).
MAX_EIG_FLOOR = 0.5


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
    bound : float or None
        Rewards enter the statistics clipped to ``[-bound, bound]`` (private default 1; ``None``: no
        clipping, allowed only without privacy). ``clip`` is its old spelling.
    regularizer : float or None
        ``λ``; ``None``: the code's formula (:func:`learners.linear.radius.regularizer_of`).
    radius : {"code", "theory"}
        The confidence radius.
    radius_scale : float
        Multiplier of the radius (1 synthetic, 0.1 real data in the paper).
    alpha : float
        The confidence level ``α ∈ (0, 1)`` (0.01).
    noise_scale : float or None
        ``R`` of the code radius (``None``: the instance's reward noise sd).
    threshold : float or None
        ``D`` of Dubey & Pentland's rule (``None``: ``T log(MT)/(dM)``; only for that algorithm).
    eig_floor : float
        Eigenvalues of ``λI + W̃_syn`` are clipped at ``eig_floor · λ`` (in ``(0, 1/2]``).
    """

    name: str
    epsilon: float | None = None
    delta: float | None = None
    batch: int | None = None
    sigma_mode: str = "exact"
    sensitivity: str = "replace-one"
    bound: float | None = None
    regularizer: float | None = None
    radius: str = "code"
    radius_scale: float = 1.0
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
            bound = 1.0 if self.bound is None else self.bound
            object.__setattr__(self, "bound", v.positive("bound", bound))
        else:
            for attr in ("epsilon", "delta"):
                if getattr(self, attr) is not None:
                    raise ParameterError(attr, getattr(self, attr), f"None for the non-private '{self.name}'")
            if self.bound is not None:
                object.__setattr__(self, "bound", v.positive("bound", self.bound))
        if algorithm.schedule == "fixed":
            batch = 25 if self.batch is None else self.batch
            object.__setattr__(self, "batch", v.integer("batch", batch, minimum=1))
        elif self.batch is not None:
            raise ParameterError("batch", self.batch, f"None ('{self.name}' syncs adaptively)")
        v.choice("sigma_mode", self.sigma_mode, SIGMA_MODES)
        if algorithm.model == "shuffle" and self.sigma_mode == "paper":
            why = (
                "Theorem 5.5's split spends all of δ on the calls"
                if algorithm.release == "vector-sum"
                else "Theorem 5.3 states σ0 only up to constants"
            )
            raise ParameterError("sigma_mode", self.sigma_mode, f"'exact' or 'code' ({why})")
        v.choice("sensitivity", self.sensitivity, SENSITIVITIES)
        if algorithm.release == "vector-sum" and self.sensitivity != "replace-one":
            raise ParameterError(
                "sensitivity",
                self.sensitivity,
                "'replace-one' (P_Vec's guarantee is per data point, under replace-one: ‖x y‖ <= bound, "
                "‖upper(x xᵀ)‖ <= 1)",
            )
        if self.sensitivity == "batch" and algorithm.schedule != "fixed":
            raise ParameterError(
                "sensitivity", self.sensitivity, "'replace-one' or 'add-remove' (no fixed B)"
            )
        if self.regularizer is not None:
            object.__setattr__(self, "regularizer", v.positive("regularizer", self.regularizer))
        v.choice("radius", self.radius, RADII)
        object.__setattr__(self, "radius_scale", v.positive("radius_scale", self.radius_scale))
        object.__setattr__(self, "alpha", v.open_unit("alpha", self.alpha))
        if self.noise_scale is not None:
            object.__setattr__(self, "noise_scale", v.nonnegative("noise_scale", self.noise_scale))
        if self.threshold is not None:
            if algorithm.schedule != "adaptive":
                raise ParameterError(
                    "threshold", self.threshold, f"None ('{self.name}' has a fixed schedule)"
                )
            object.__setattr__(self, "threshold", v.positive("threshold", self.threshold))
        # Zhou & Chowdhury (2024), proof of Lemma C.4: with λ = 2Σ_N every eigenvalue of λI + W̃ is
        # at least λ/2 on the event the regret bound holds, so a floor up to λ/2 acts only outside
        # it (the safeguard); a higher one would change V where the analysis holds
        why = "a fraction of λ: Lemma C.4 keeps the eigenvalues of λI + W̃ above λ/2"
        object.__setattr__(
            self,
            "eig_floor",
            v.interval("eig_floor", self.eig_floor, 0.0, MAX_EIG_FLOOR, high_open=False, why=why),
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


#: Old spellings of :class:`Learner`'s settings: ``crs`` was the radius multiplier, ``radius_scale``
#: in every family; ``clip`` the clipping bound, ``bound`` in every family.
OLD_PARAMS = {"crs": "radius_scale", "clip": "bound"}


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them (old spellings in
    :data:`OLD_PARAMS` are accepted with a note)."""
    return make_settings(Learner, name, epsilon, params, OLD_PARAMS)
