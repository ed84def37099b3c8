"""The family of DP-DPE and DP-PE (Li, Zhou & Ji 2022; :mod:`learners.phased`).

Phased elimination with partial distributed feedback. Instance kind ``phased-synthetic``: the
synthetic instance of the paper's Section 7 (one action set and ``θ*`` shared by every
repetition, the clients drawn per phase). The regret is the pseudo-regret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Accountant
from learners import phased
from learners.budget import Cost, nbytes
from learners.design import MAX_ITERATIONS
from learners.errors import ConfigError
from learners.families.base import Answer, Family, PanelView, algorithms_of, keys_of, keywords_of
from learners.phased.engine import footprint as phased_footprint
from learners.phased.instances import instance_shapes
from learners.phased_instances import PhasedInstance, draw_instance
from learners.schema import MAX_ARMS, MAX_SEED, WHY_ARMS, Field, Section

#: The synthetic instance's keys: Li, Zhou & Ji (2022), Section 7 (k = 1000 arms, d = 20,
#: σ = 0.1, |𝒰| = 10^6).
SECTIONS: dict[str, Section] = {
    "phased-synthetic": Section(
        "phased-synthetic",
        (
            Field("arms", "integer", default=1000, low=2, high=MAX_ARMS, why=WHY_ARMS),
            Field(
                "dim",
                "integer",
                default=20,
                low=1,
                high=10**4,
                why="the design solves d x d systems per action",
            ),
            Field("client_sd", "number", default=0.1, low=0.0),
            Field("noise_sd", "number", default=1.0, low=0.0, low_open=True, high=1.0),
            Field("population", "integer", default=10**6, low=1, high=10**15),
            Field("theta_norm", "number", default=1.0, low=0.0, low_open=True, high=1.0),
            Field(
                "instance_seed",
                "integer",
                default=0,
                low=0,
                high=MAX_SEED,
                why="numpy seeds are non-negative",
            ),
        ),
        "the synthetic instance of the DP-DPE paper (Li, Zhou & Ji 2022, Section 7): k = `arms` actions and "
        "θ* uniform on the unit sphere of R^d (θ* scaled to `theta_norm`), users θ_u = θ* + N(0, "
        "`client_sd`² I), rewards ⟨θ_u, x⟩ + N(0, `noise_sd`²), clients drawn from `population` users "
        "without replacement; one action set and θ* shared by every repetition",
    ),
}


@dataclass(frozen=True)
class PhasedInstanceSpec:
    """The instance of a panel of the phased family: ``phased-synthetic`` (Li, Zhou & Ji 2022,
    Section 7).

    One action set and ``θ*`` serve every repetition, drawn by
    :func:`learners.phased_instances.draw_instance` from ``numpy.random.default_rng(instance_seed)``;
    the repetitions differ in their clients (the population model) and reward noise.

    Attributes
    ----------
    kind : str
        ``"phased-synthetic"``.
    arms, dim : int
        ``k`` actions on the unit sphere of ``R^d``.
    client_sd, noise_sd : float
        ``σ`` of the users' ``ξ_u`` and of the reward noise.
    population : int
        ``|𝒰|``: the users the clients are drawn from, each at most once.
    theta_norm : float
        ``‖θ*‖``.
    instance_seed : int
    """

    kind: str
    arms: int
    dim: int
    client_sd: float
    noise_sd: float
    population: int
    theta_norm: float
    instance_seed: int

    @property
    def shared(self) -> bool:
        return True

    def draw(self, rng: np.random.Generator) -> PhasedInstance:  # pragma: no cover - always shared
        return self.build_shared()

    def build_shared(self) -> PhasedInstance:
        return _phased_instance(self)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **{k: getattr(self, k) for k in SECTIONS[self.kind].names()}}

    def describe(self) -> str:
        return f"synthetic, k={self.arms}, d={self.dim}, σ={self.client_sd:g}, |U|={self.population:.0e}"


@lru_cache(maxsize=4)
def _phased_instance(spec: PhasedInstanceSpec) -> PhasedInstance:
    """The instance of a spec, drawn once per process."""
    return draw_instance(
        np.random.default_rng(spec.instance_seed),
        arms=spec.arms,
        dim=spec.dim,
        client_sd=spec.client_sd,
        noise_sd=spec.noise_sd,
        population=spec.population,
        theta_norm=spec.theta_norm,
    )


def _phased(panel: PanelView) -> PhasedInstanceSpec:
    assert isinstance(panel.instance, PhasedInstanceSpec), panel.instance
    return panel.instance


#: ``params`` of the phased family: the keywords of :func:`learners.phased.make_learner`.
PARAMS = Section(
    "phased",
    (
        Field(
            "delta",
            "number",
            "the δ of the claim",
            default=None,
            default_doc="the top-level `delta` (private algorithms); refused by the non-private",
            valid_doc="(0, 1); `sdp-pe`: (0, 1/2)",
            bad=(1.5, 0),
        ),
        Field(
            "mode",
            "string",
            "the paper's widths and constants, or the data-dependent widths of Li, Zhou & Ji (2022), "
            "Section 7 (which reproduce the figures; practical SDP-DPE draws an uncertified Gaussian "
            "stand-in); every label names it",
            default="faithful",
            choices=("faithful", "practical"),
            bad=("fast",),
        ),
        Field(
            "calibration",
            "string",
            "the Gaussian privatizers' multiplier: the least certified one, or the paper's formula (not (ε, "
            "δ)-DP at large ε: the run reports its exact ε)",
            default="exact",
            choices=("exact", "classic"),
            bad=("loose",),
        ),
        Field(
            "alpha",
            "number",
            "\\|U_l\\| = ⌈2^{αl}⌉ fresh clients in phase l",
            default=0.8,
            valid_doc="(0, 1]",
            bad=(0, 1.5),
        ),
        Field("bound", "number", "B: reports clipped to [−B, B]", default=1.0, valid_doc="> 0", bad=(0, -1)),
        Field(
            "clipped",
            "boolean",
            "whether reports are clipped",
            default=None,
            default_doc="true when private",
            valid_doc="true for the private algorithms",
            bad=(False,),
        ),
        Field(
            "beta",
            "number",
            "the widths' confidence β",
            default=None,
            default_doc="1/(kT)",
            valid_doc="(0, 1)",
            bad=(0, 1),
        ),
        Field(
            "support_constant",
            "integer",
            "S of the widths",
            default=None,
            default_doc="4d log log d + 16 (104 at d = 20)",
            valid_doc="≥ 1",
            bad=(0, 2.5),
        ),
        Field(
            "design_c",
            "number",
            "the design's target g(π) ≤ (1 + c)d",
            default=1.0,
            valid_doc="> 0",
            bad=(0, -1),
        ),
        Field(
            "clients",
            "integer",
            "U, DPE-FixedU's clients per phase",
            default=None,
            default_doc="the mean of ⌈2^{αl}⌉ over the phases that fit in T (DPE's communication only if "
            "DPE runs every phase); `dpe-fixedu` only",
            valid_doc="≥ 1",
            algorithms=("dpe-fixedu",),
            bad=(0, 2.5),
        ),
        Field(
            "client_sd",
            "number",
            "the σ the widths assume",
            default=None,
            default_doc="the instance's",
            valid_doc="≥ 0",
            bad=(-1,),
        ),
    ),
    "`learners.phased.make_learner`, checked at every ε of every panel; the population must hold every "
    "client the schedule samples up to T, else `instance.population` is refused",
)


class PhasedFamily(Family):
    """DP-DPE, DP-PE and their non-private baselines (Li, Zhou & Ji 2022; :mod:`learners.phased`)."""

    name = "phased"
    engine: ClassVar[ModuleType] = phased
    algorithms: ClassVar[Mapping[str, bool]] = algorithms_of(phased)
    instance_sections: ClassVar[Mapping[str, Section]] = SECTIONS
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]] = keys_of(SECTIONS)
    params = keywords_of(phased.Learner)
    params_section = PARAMS
    old_params = phased.OLD_PARAMS
    unit_arrays = ("phases", "clients", "reals", "bits", "final_arms")
    regret_label = ("pseudo-regret", "Reg(t)")
    learner_delta = True
    ledger_keys = "phases"
    table_note = (
        "Claimed: the learner's target (ε, δ) (holds: whether the run certifies it). Exact: the certified "
        "guarantee of the run's saved ledgers (ledgers/, one per phase: every client reports once, in one "
        "phase, so the run's ε is the worst phase's), by the accountant route named (∞ where nothing is "
        "certified; see the notes). Every ε is a certified upper bound, rounded up. Mode: 'faithful' (the "
        "paper's constants) or 'practical' (§7.4's data-dependent widths), named in each label. Regret: the "
        "final time-average pseudo-regret Reg(T)/T, mean ± 95% CI half-width."
    )

    def instance_spec(
        self, where: str, kind: str, values: dict[str, Any], table: Mapping[str, Any]
    ) -> PhasedInstanceSpec:
        return PhasedInstanceSpec(kind, **values)

    def default_label(self, learner: Any) -> str:
        """The algorithm's name in the paper and its mode, e.g. ``CDP-DPE (practical)``."""
        return f"{learner.algorithm.label} ({learner.mode})"

    def check(self, learner: Any, panel: PanelView, algorithm: int, epsilon_where: str) -> None:
        """The population must hold every client the schedule samples up to ``T`` (each reports
        once: Li, Zhou & Ji 2022, Algorithm 1 samples fresh clients in every phase), or the config
        is refused naming ``population``."""
        spec = _phased(panel)
        needed = phased.clients_needed(learner, panel.horizon)
        if needed > spec.population:
            raise ConfigError(
                f"{panel.instance_where}.population",
                spec.population,
                f"at least the {needed} clients algorithms[{algorithm}] samples up to T = {panel.horizon} "
                "(each client reports once)",
            )

    def instance_memory(self, spec: Any) -> tuple[int, str]:
        """The actions the instance draws (:func:`learners.phased.instances.instance_shapes`)."""
        return nbytes(instance_shapes(spec.arms, spec.dim)), "arms"

    def cost(self, learner: Any, panel: PanelView, repetitions: int, checkpoints: int) -> Cost:
        """:func:`learners.phased.engine.footprint`: the designs' ``(R, k, d)`` arrays and a phase's
        reports; at most ``MAX_ITERATIONS`` Frank–Wolfe steps of ``2 R k d²`` per phase."""
        spec = _phased(panel)
        k, d, T = spec.arms, spec.dim, panel.horizon
        shapes, work = phased_footprint(learner, repetitions, k, d, T, checkpoints)
        formula = f"phases x {MAX_ITERATIONS} design steps x 2 R k d² (R = {repetitions}, k = {k}, d = {d})"
        return Cost(nbytes(shapes), float(work), formula)

    def simulate(
        self,
        learner: Any,
        instances: Any,
        horizon: int,
        *,
        tapes: Sequence[np.random.Generator],
        rng: np.random.Generator,
        checkpoints: int,
        delta: float,
    ) -> phased.RunResult:
        return phased.run(learner, instances, horizon, tapes=tapes, rng=rng, checkpoints=checkpoints)

    def unit_meta(
        self, learner: Any, result: Any, *, instances: Any, horizon: int, repetitions: int
    ) -> dict[str, Any]:
        noise = result.noise
        return {
            "noise": {
                "kind": noise.kind,
                "calibration": noise.calibration,
                "multiplier": noise.multiplier,
                "exact_multiplier": noise.exact_multiplier,
                "classic_multiplier": noise.classic_multiplier,
            },
            "mode": result.mode,
            "unit": result.unit,
        }

    def summary(
        self,
        learner: Any,
        panel: PanelView,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        return {
            "communication": {
                "unit": metas[0]["unit"],
                "phases_mean": float(arrays["phases"].mean()),
                "clients_mean": float(arrays["clients"].mean()),
                "reals_mean": float(arrays["reals"].mean()),
                "bits_mean": float(arrays["bits"].mean()),
            },
            "final_arms_mean": float(arrays["final_arms"].mean()),
            "mode": metas[0]["mode"],
            "noise": metas[0]["noise"],
        }

    def answer(
        self,
        learner: Any,
        panel: PanelView,
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        delta: float,
        route: str,
    ) -> Answer:
        """:func:`learners.phased.privacy_of` the ledgers (one per phase) by ``route``; the claim is
        the paper's (Theorems 4.2, 4.4, 4.6; C.1, C.3, C.6) in the learner's trust model."""
        account = phased.privacy_of(learner, ledgers, delta, route)
        statement = ""
        if learner.private:
            claim = f"({learner.epsilon:g}, {learner.delta:g})-DP"
            statement = f"{claim} in the {learner.model} model ({account.argument})"
        return Answer(
            account,
            extra={"phases": [list(p) for p in account.phases]},
            exact={"what": "phase"},
            exact_extra={"basis": account.basis, "certified": account.certified},
            statement=statement,
        )


__all__ = ["PARAMS", "SECTIONS", "PhasedFamily", "PhasedInstanceSpec"]
