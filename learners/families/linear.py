"""The family of federated LinUCB (Zhou & Chowdhury 2024; :mod:`learners.linear`).

Instance kinds ``linear-synthetic`` (the synthetic instance of the paper's Figures 2(a)-(b) and
3(a)-(b), one instance shared by every repetition, as the authors' code fixes it with seed 2) and
``linear-mslr`` (the real-data instance of Figures 2(c) and 3(c)-(d): queries of an
MSLR-WEB10K-format file, or the offline stand-in, shared by every repetition). The regret is the
*group* pseudo-regret, summed over the ``M`` silos.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Accountant
from learners import linear
from learners.budget import Cost, nbytes
from learners.datasets import FEATURE_SETS, REWARDS, default_linear_instance, mslr_linear_instance
from learners.errors import ConfigError, ParameterError, ParameterTypeError
from learners.families.base import Answer, Family, PanelView, algorithms_of, keys_of, keywords_of
from learners.linear.engine import footprint
from learners.linear_instances import QueryInstance, SyntheticInstance, draw_synthetic
from learners.schema import MAX_ARMS, MAX_SEED, Field, Section

#: Floats a unit of the linear family holds per round: ``chunk x M x K x d`` (about 8 bytes each).
MAX_LINEAR_STATE = 10**8


@dataclass(frozen=True)
class LinearInstanceSpec:
    """The instance of a panel of the linear family: ``linear-synthetic`` (Zhou & Chowdhury 2024,
    the synthetic experiment of Figures 2(a)-(b) and 3(a)-(b)).

    One instance serves every repetition (the authors' code fixes it with seed 2): ``θ*`` and the
    key of its arm stream are drawn by :func:`learners.linear_instances.draw_synthetic` from
    ``numpy.random.default_rng(instance_seed)``; the repetitions differ in their reward noise.

    Attributes
    ----------
    kind : str
        ``"linear-synthetic"``.
    dim, arms, agents : int
        ``d``, ``K`` (arms per silo and round), ``M`` (silos).
    noise_sd : float
        The reward noise's standard deviation.
    instance_seed : int
    """

    kind: str
    dim: int
    arms: int
    agents: int
    noise_sd: float
    instance_seed: int

    @property
    def shared(self) -> bool:
        return True

    def draw(self, rng: np.random.Generator) -> SyntheticInstance:  # pragma: no cover - always shared
        return self.build_shared()

    def build_shared(self) -> SyntheticInstance:
        """The instance (cheap: ``d - 1`` normals and a key; its arms are computed as the run reads them)."""
        rng = np.random.default_rng(self.instance_seed)
        return draw_synthetic(rng, self.dim, self.arms, self.agents, self.noise_sd)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "dim": self.dim,
            "arms": self.arms,
            "agents": self.agents,
            "noise_sd": self.noise_sd,
            "instance_seed": self.instance_seed,
        }

    def describe(self) -> str:
        return f"synthetic, d={self.dim}, K={self.arms}, M={self.agents}"


#: The stand-in's images (scikit-learn's digits) and images per query (default_linear_instance's).
_STAND_IN_IMAGES, _STAND_IN_DOCS = 1797, 20


@lru_cache(maxsize=4)
def _query_instance(path: str | None, features: str, agents: int, reward: str, seed: int) -> QueryInstance:
    """The real-data instance of a spec, built once per process (an MSLR-WEB10K file is read and its
    Lasso fitted once, at config load, and reused by the run)."""
    if path is None:
        # queries of 20 images (90 of them), fewer per query beyond 89 silos so that every silo
        # has one (Figure 3(d)'s M = 100: 17 images, 106 queries)
        docs = max(1, min(_STAND_IN_DOCS, _STAND_IN_IMAGES // agents))
        return default_linear_instance(agents=agents, docs=docs, reward=reward, seed=seed)
    return mslr_linear_instance(path, features, agents=agents, reward=reward, seed=seed)


@dataclass(frozen=True)
class MSLRLinearSpec:
    """The instance of a panel of the linear family: ``linear-mslr`` (Zhou & Chowdhury 2024, the
    real-data experiment of Figures 2(c) and 3(c)-(d)).

    Contexts are queries, arms their documents, ``θ*`` the Lasso fit of the relevance on the
    chosen features; rewards are noise-free (:func:`learners.datasets.mslr_linear_instance`). One
    instance serves every repetition, including its query sequence (keyed by ``seed``): the
    repetitions differ in the privacy noise only (the authors' code redraws the query sequence
    per run, which would pad every repetition's blocks separately at up to 908 arms).
    Without a ``path`` the offline stand-in :func:`learners.datasets.default_linear_instance`
    (scikit-learn's digits as queries of 20 documents, ``d = 65`` whatever ``features``; beyond 89
    silos, of ``⌊1797/M⌋`` documents, so that every silo has a query) is used.

    Attributes
    ----------
    kind : str
        ``"linear-mslr"``.
    path : str or None
        The MSLR-WEB10K-format file, absolute (``None``: the stand-in).
    features : str
        ``"title"`` (``d = 57``, the paper's main instance) or ``"body"`` (``d = 78``, Figure 3(c)).
    agents : int
        ``M`` silos (the paper: 10).
    reward : str
        ``"model"`` (the Lasso prediction, the paper's) or ``"label"``.
    seed : int
        The Lasso's ``random_state`` and the query stream's key.
    """

    kind: str
    path: str | None
    features: str
    agents: int
    reward: str
    seed: int

    @property
    def shared(self) -> bool:
        return True

    def draw(self, rng: np.random.Generator) -> QueryInstance:  # pragma: no cover - always shared
        return self.build_shared()

    def build_shared(self) -> QueryInstance:
        """The instance (memoized per process: reading and fitting a file is done once)."""
        return _query_instance(self.path, self.features, self.agents, self.reward, self.seed)

    @property
    def dim(self) -> int:
        return self.build_shared().dim

    @property
    def arms(self) -> int:
        """The most documents of one query."""
        return self.build_shared().arms

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.path is not None:
            out["path"] = self.path
        out.update(features=self.features, agents=self.agents, reward=self.reward, seed=self.seed)
        return out

    def describe(self) -> str:
        built = self.build_shared()
        if self.path is None:
            what = "mslr stand-in (sklearn digits, not MSLR-WEB10K)"
        else:
            what = f"mslr ({Path(self.path).name}, {self.features})"
        reward = "" if self.reward == "model" else ", reward=label"
        return f"{what}, d={built.dim}, M={self.agents}, queries={built.queries}{reward}"


#: The instance of a panel of the linear family, of either kind.
LinearSpec = LinearInstanceSpec | MSLRLinearSpec


def _linear(panel: PanelView) -> LinearSpec:
    assert isinstance(panel.instance, LinearInstanceSpec | MSLRLinearSpec), panel.instance
    return panel.instance


def _statement(learner: linear.Learner) -> str:
    """The claim of a private linear learner, as Zhou & Chowdhury (2024) state it (Definitions 2.1
    and 2.3; Theorems 5.1, 5.3 and 5.5)."""
    model = learner.algorithm.model
    theorem = {
        "silo-ldp": "silo-level LDP (Definition 2.1; Theorem 5.1, protocol P)",
        "shuffle": "shuffle DP (Definition 2.3; Theorem 5.3, amplification by shuffling)",
        "none": "Fed-DP of Dubey & Pentland (2020) — not a guarantee: its sync rule leaks (§7.2)",
    }[model]
    if learner.algorithm.release == "vector-sum":
        theorem = "shuffle DP (Definition 2.3; Theorem 5.5, the vector-sum protocol P_T^Vec)"
    mode = f"sigma_mode={learner.sigma_mode!r}"
    if learner.sigma_mode == "code":
        mode += " (uncertified: the authors' code's noise)"
    return f"({learner.epsilon:g}, {learner.delta:g})-{theorem}, {mode}"


# ---------------------------------------------------------------------------------------
# The keys: [instance] of each kind, and params
# ---------------------------------------------------------------------------------------

_AGENTS = Field("agents", "integer", default=100, low=1, high=10**6)
_SEED_WHY = "numpy seeds are non-negative"

#: The linear family's instance kinds.
SECTIONS: dict[str, Section] = {
    "linear-synthetic": Section(
        "linear-synthetic",
        (
            Field(
                "dim",
                "integer",
                default=10,
                low=2,
                high=10**4,
                why="V is a d x d matrix per silo and repetition",
            ),
            Field(
                "arms",
                "integer",
                default=100,
                low="dim",
                high=MAX_ARMS,
                why="the first d arms are the basis arms",
            ),
            _AGENTS,
            Field("noise_sd", "number", default=0.5, low=0.0),
            Field("instance_seed", "integer", default=2, low=0, high=MAX_SEED, why=_SEED_WHY),
        ),
        "the synthetic instance of the federated paper (Zhou & Chowdhury 2024, Figures 2(a)-(b), 3(a)-(b)): "
        "every round each of the M = `agents` silos sees K = `arms` arms, the first d the basis arms, the "
        "rest [u, 1] with u uniform on the sphere, θ* = [0.5 v/‖v‖, 0.5], rewards ⟨x, θ*⟩ + N(0, "
        "`noise_sd`²); one instance, drawn from `instance_seed`, shared by every repetition (the authors' "
        "code fixes it with seed 2); the repetitions differ in their reward noise; agents × arms × dim at "
        "most 2^23",
    ),
    "linear-mslr": Section(
        "linear-mslr",
        (
            Field(
                "path",
                "path",
                default=None,
                refusal="an existing MSLR-WEB10K-format file",
                default_doc="none: the stand-in",
            ),
            Field(
                "features",
                "string",
                default="title",
                choices=tuple(FEATURE_SETS),
                valid_doc="`title` (d = 57) or `body` (d = 78)",
            ),
            Field(
                "agents",
                "integer",
                default=10,
                low=1,
                high=10**6,
                why="one block of queries per silo",
                valid_doc="1 … 10^6, at most the number of queries",
            ),
            Field("reward", "string", default="model", choices=REWARDS),
            Field(
                "seed", "integer", default=0, low=0, high=2**32 - 1, why="the Lasso's random_state is 32-bit"
            ),
        ),
        "the real-data instance of the federated paper (Zhou & Chowdhury 2024, Figures 2(c), 3(c)-(d)): "
        "queries as contexts, their documents as arms, θ* the Lasso fit of the relevance on the feature set, "
        "noise-free rewards (`model`: ⟨raw features, θ*⟩; `label`: the relevance), the queries in M = "
        "`agents` contiguous blocks, one per silo; `seed` is the Lasso's and the query stream's; one "
        "instance, query sequence included, shared by every repetition (they differ in the privacy noise); a "
        "missing or malformed file is an error naming `path`; without `path`, the offline stand-in from "
        "scikit-learn's digits (queries of 20 images, d = 65 whatever `features`; "
        '`run`/`reproduce` say so on stderr, captions say "stand-in")',
    ),
}

#: ``params`` of the linear family: the keywords of :func:`learners.linear.make_learner`.
PARAMS = Section(
    "linear",
    (
        Field(
            "delta",
            "number",
            "the δ of the learner's (ε, δ) claim; σ0 is calibrated to it",
            default=None,
            default_doc="the top-level `delta` (private algorithms); refused by the non-private",
            valid_doc="(0, 1)",
            bad=(1.5, 0),
        ),
        Field(
            "batch",
            "integer",
            "B, rounds between synchronisations",
            default=25,
            default_doc="25; refused by `dubey-pentland` (adaptive)",
            valid_doc="1 … T",
            bad=(0, 2.5),
        ),
        Field(
            "sigma_mode",
            "string",
            "σ0: the least certified one (exact), Theorem 5.1's formula, or the authors' code (uncertified: "
            "its exact ε is reported)",
            default="exact",
            valid_doc="`exact`, `paper`, `code` (shuffle variants: `exact`, `code`)",
            bad=("exactly",),
        ),
        Field(
            "sensitivity",
            "string",
            "the per-user sensitivities σ0 is calibrated for and the ledger is written with (`batch`: B "
            "times, which certifies Algorithm 1)",
            default="replace-one",
            choices=("replace-one", "add-remove", "batch"),
            bad=("one",),
        ),
        Field(
            "bound",
            "number",
            "rewards enter the statistics clipped to [−bound, bound]",
            default=None,
            default_doc="1 for the private algorithms, none otherwise",
            valid_doc="> 0",
            bad=(0, -1),
        ),
        Field(
            "regularizer",
            "number",
            "λ",
            default=None,
            default_doc="the code's λ (√M; with noise, √(Mκ) σ0 (√(κ + log(1/α)) + √d))",
            valid_doc="> 0",
            bad=(0, -1),
        ),
        Field(
            "radius",
            "string",
            "the confidence radius: the authors' code, or Lemma C.4",
            default="code",
            choices=("code", "theory"),
            bad=("wide",),
        ),
        Field(
            "radius_scale",
            "number",
            "multiplier of the radius (the paper: 1 synthetic, 0.1 real data)",
            default=1.0,
            valid_doc="> 0",
            bad=(0, -1),
        ),
        Field("alpha", "number", "the confidence level α", default=0.01, valid_doc="(0, 1)", bad=(0, 1)),
        Field(
            "noise_scale",
            "number",
            "R of the code radius",
            default=None,
            default_doc="the instance's `noise_sd`",
            valid_doc="≥ 0",
            bad=(-1,),
        ),
        Field(
            "threshold",
            "number",
            "D of Dubey & Pentland's sync rule",
            default=None,
            default_doc="T log(MT)/(dM); `dubey-pentland` only",
            valid_doc="> 0",
            algorithms=("dubey-pentland",),
            bad=(0, -1),
        ),
        Field(
            "eig_floor",
            "number",
            "eigenvalues of λI + W̃ are clipped at `eig_floor` · λ",
            default=0.001,
            valid_doc="(0, 1/2]",
            bad=(0, 1),
        ),
    ),
    "`learners.linear.make_learner`, checked at every ε of every panel; an error names the key, e.g. "
    "`algorithms[1].params.batch`; the shuffle variants' σ0 is checked against Theorem 5.3's hypotheses "
    "before anything runs",
)


class LinearFamily(Family):
    """Federated LinUCB and its baselines (Zhou & Chowdhury 2024; :mod:`learners.linear`)."""

    name = "linear"
    engine: ClassVar[ModuleType] = linear
    algorithms: ClassVar[Mapping[str, bool]] = algorithms_of(linear)
    instance_sections: ClassVar[Mapping[str, Section]] = SECTIONS
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]] = keys_of(SECTIONS)
    params = keywords_of(linear.Learner)
    params_section = PARAMS
    old_params = linear.OLD_PARAMS
    unit_arrays = ("syncs", "reals", "bits", "clipped")
    regret_label = ("group pseudo-regret", "R_M(t)")
    learner_delta = True
    ledger_keys = "nodes"
    table_note = (
        "Claimed: the learner's target (ε, δ) (holds: whether the run certifies it). Exact: the certified "
        "guarantee of the run's saved ledgers (ledgers/, one per number of tree nodes a batch entered), "
        "worst over them, by the accountant route named (∞ where the ledger does not bound what the "
        "algorithm as run reveals; see the notes). Every ε is a certified upper bound, rounded up. Regret: "
        "the final time-average group pseudo-regret R_M(T)/T (summed over the M silos), mean ± 95% CI "
        "half-width."
    )

    def instance_spec(
        self, where: str, kind: str, values: dict[str, Any], table: Mapping[str, Any]
    ) -> LinearSpec:
        """The spec, built by :meth:`Family.instance` (``linear-mslr``: the file read and the Lasso
        fitted, memoized for the run, so a malformed file is a config error naming ``path``)."""
        if kind == "linear-mslr":
            return MSLRLinearSpec(
                kind, values["path"], values["features"], values["agents"], values["reward"], values["seed"]
            )
        return LinearInstanceSpec(
            kind, values["dim"], values["arms"], values["agents"], values["noise_sd"], values["instance_seed"]
        )

    def instance_error_key(self, kind: str, name: str, table: Mapping[str, Any]) -> str:
        """A key of the kind by name; else the file (the stand-in has none: its silos, ``agents``)
        or, for the synthetic instance, ``agents`` (one block of arms must fit in memory)."""
        if name in self.instance_sections[kind].names() and name != "path":
            return name
        return "path" if kind == "linear-mslr" and "path" in table else "agents"

    def default_label(self, learner: Any) -> str:
        """The algorithm's name in the paper, e.g. ``LDP-FedLinUCB-Lazy`` (the learner's own label
        names its ε, and a label serves every ε)."""
        return str(learner.algorithm.label)

    def check_panel(
        self, instance: Any, *, where: str, horizon: int, horizon_where: str, repetitions: int, chunk: int
    ) -> None:
        per = instance.agents * instance.arms * instance.dim
        count = min(chunk, repetitions)
        if count * per > MAX_LINEAR_STATE:
            raise ConfigError(
                "chunk",
                chunk,
                f"chunk x agents x arms x dim <= {MAX_LINEAR_STATE:.0e} (= {count} x {per} for {where}: "
                "every round a unit scores each silo's arms of its repetitions at once)",
            )

    def check(self, learner: Any, panel: PanelView, algorithm: int, epsilon_where: str) -> None:
        """``B <= T``, and for the shuffle variants their noise (Zhou & Chowdhury 2024, Theorem 5.3,
        instant): a setting no σ0 certifies (outside Lemma F.2's hypotheses) is refused before
        anything runs, naming the ε. (The silo-level σ0 of Theorem 5.1 is calibrated by the run:
        seconds each, which ``dp-regret list`` should not spend, and it takes every ε the config
        accepts.)"""
        where = f"algorithms[{algorithm}]"
        agents, dim = _linear(panel).agents, _linear(panel).dim
        if learner.batch is not None and learner.batch > panel.horizon:
            raise ConfigError(
                panel.horizon_where, panel.horizon, f"a horizon T >= batch B = {learner.batch} (of {where})"
            )
        if learner.algorithm.model != "shuffle":
            return
        try:
            noise = linear.noise_of(learner, panel.horizon, agents, dim=dim)
        except (ParameterError, ParameterTypeError) as err:
            raise ConfigError(epsilon_where, learner.epsilon, f"{err.valid} (for {where})") from None
        if not noise.feasible:
            raise ConfigError(
                epsilon_where,
                learner.epsilon,
                f"a setting Theorem 5.3 certifies for {where} at M = {agents}, T = "
                f"{panel.horizon} ({noise.conditions}); sigma_mode = 'code' runs the authors' uncertified σ0",
            )

    def cost(self, learner: Any, panel: PanelView, repetitions: int, checkpoints: int) -> Cost:
        """:func:`learners.linear.engine.footprint`: the silos' statistics and protocol P's tree
        (``R M κ d(d+1)/2`` floats of registers), a chunk of arms, and ``T R M K d(d+1)/2``
        multiply-adds of scores."""
        spec = _linear(panel)
        M, K, d, T = spec.agents, spec.arms, spec.dim, panel.horizon
        shapes, work = footprint(learner, repetitions, M, d, K, T, checkpoints, shared=True)
        formula = f"T x R x M x K x d(d+1)/2 = {T} x {repetitions} x {M} x {K} x {d * (d + 1) // 2}"
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
    ) -> linear.RunResult:
        # the learner's own δ is its claim: the config's is not needed to run
        return linear.run(learner, instances, horizon, tapes=tapes, rng=rng, checkpoints=checkpoints)

    def unit_meta(
        self, learner: Any, result: Any, *, instances: Any, horizon: int, repetitions: int
    ) -> dict[str, Any]:
        noise = result.noise
        # the ledgers are keyed by the tree nodes per stream the batch entered
        return {
            "noise": {"sigma0": noise.sigma0, "mode": noise.mode, "syncs": noise.syncs, "kappa": noise.kappa},
            "regularizer": result.regularizer,
        }

    def summary(
        self,
        learner: Any,
        panel: PanelView,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        d = _linear(panel).dim
        return {
            "communication": {
                "syncs_mean": float(arrays["syncs"].mean()),
                "syncs_max": int(arrays["syncs"].max()),
                "reals_per_sync": d + d * (d + 1) // 2,
                "reals_per_silo_mean": float(arrays["reals"].mean()),
                "bits_per_silo_mean": float(arrays["bits"].mean()),
                "bits_per_silo_max": int(arrays["bits"].max()),
            },
            "clipped_mean": float(arrays["clipped"].mean()),
            "noise": {**metas[0]["noise"], "regularizer": metas[0]["regularizer"]},
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
        """:func:`learners.linear.privacy_of` the ledgers by ``route``; the exact block answers each
        ledger (the vector-sum variants' ledgers of (ε0, δ0) calls by the PLD route, the optimal
        composition of the calls of Theorem 5.5's protocol)."""
        spec = _linear(panel)
        noise = linear.noise_of(learner, panel.horizon, spec.agents, dim=spec.dim)
        account = linear.privacy_of(learner, noise, ledgers, delta, route)
        vector = learner.algorithm.release == "vector-sum"
        return Answer(
            account,
            extra={"nodes": [list(n) for n in account.nodes]},
            exact={"auto_route": "pld" if vector else "auto", "what": "tree nodes"},
            exact_extra={"certified": account.certified, "content_epsilon": account.content_epsilon},
            statement=_statement(learner) if learner.private else "",
        )


__all__ = [
    "MAX_LINEAR_STATE",
    "PARAMS",
    "SECTIONS",
    "LinearFamily",
    "LinearInstanceSpec",
    "LinearSpec",
    "MSLRLinearSpec",
]
