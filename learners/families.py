"""Learner families: what one family plugs into the experiment runner (issue 16 §3).

One runner, one TOML format and one results layout serve every learner family; a family brings
the few things that differ, as a :class:`Family`:

* its **algorithms** (name -> whether it takes an ε: a private algorithm runs once per ε of a
  panel, the others once per panel) and the keywords of its ``make_learner`` (``params``);
* its **instance kinds** (``[instance] kind``), each with its TOML keys, defaults and validation
  (:meth:`Family.instance`), and how an instance is drawn for a repetition or shared by all of
  them (the value it returns: :class:`InstanceSpec`, :class:`LinearInstanceSpec`);
* how a **learner** is built from ``(name, ε, params)`` (:meth:`Family.learner`: its errors name
  the parameter, which :func:`learners.config.load_config` turns into the config path, e.g.
  ``algorithms[1].params.batch``) and what is refused before anything runs (:meth:`Family.check`);
* how a **unit runs** (:meth:`Family.run`: the family's ``run`` on a chunk of repetitions), giving
  the regret curves, the per-repetition arrays it keeps (:attr:`Family.unit_arrays`) and a JSON
  ``meta`` holding its ledgers (``{key: Accountant.to_dict()}``: the key is the batch size for MAB,
  the nodes per stream for federated LinUCB) and its communication;
* the **summary** of a (panel, algorithm, ε) from its units (:meth:`Family.result`): the privacy
  block (``claimed`` ``{epsilon, delta, statement, holds}`` and ``exact`` ``{epsilon, delta, route,
  ledgers, ...}`` in every family, which the plots' legends and ``summary.md`` read), the
  communication, and how the regret is named in the plots (:attr:`Family.regret_label`).

The families (:data:`FAMILIES`):

``mab``     the distributed MAB paper (:mod:`learners.mab`); instance kinds ``gaussian-easy``,
            ``gaussian-hard``, ``bernoulli``, ``beta``, ``mslr``; regret is the pseudo-regret;
``linear``  federated LinUCB (Zhou & Chowdhury, :mod:`learners.linear`); instance kinds
            ``linear-synthetic`` (spec §8.2, one instance shared by every repetition, as the
            paper's seed 2) and ``linear-mslr`` (§8.3, queries of an MSLR-WEB10K-format file, or
            the offline stand-in, shared by every repetition); regret is the *group*
            pseudo-regret, summed over the ``M`` silos;
``phased``  phased elimination with partial distributed feedback (Li, Zhou & Ji, DP-DPE and
            DP-PE, :mod:`learners.phased`); instance kind ``phased-synthetic`` (spec §7.1-7.2,
            one action set and ``θ*`` shared by every repetition, the clients drawn per phase);
            regret is the pseudo-regret.

A config's family is the one of its first algorithm, or its top-level ``family`` key. Its
algorithms may belong to several families (LDP-UCB beside the distributed MAB paper's variants,
issue 18 §3) when every panel's instance is one that each of them runs: a kind of its own, or one
it adopts (:data:`ADOPTED_KINDS`, :func:`instance_for`); each algorithm's units are then run, and
its summary entries written, by its own family.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Accountant
from accounting.noise import Skellam
from learners import ldp, ldp_instances, linear, mab, phased, privacy
from learners.environments import BernoulliArms, BetaArms, MABInstance, gaussian_easy, gaussian_hard
from learners.errors import ConfigError, ParameterError, ParameterTypeError
from learners.linear_instances import QueryInstance, SyntheticInstance, draw_synthetic
from learners.phased_instances import PhasedInstance, draw_instance

if TYPE_CHECKING:
    from learners.config import Panel

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Arms of an instance: the learner keeps per-arm statistics of every repetition.
MAX_ARMS = 10**6
_WHY_ARMS = "the learner keeps per-arm statistics of every repetition in memory"
#: Floats a unit of the linear family holds per round: ``chunk x M x K x d`` (about 8 bytes each).
MAX_LINEAR_STATE = 10**8


# ---------------------------------------------------------------------------------------
# The interface
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class UnitRun:
    """What one unit's run gives back: the regret curves, per-repetition arrays and a JSON meta.

    Attributes
    ----------
    rounds : numpy.ndarray of int64, shape (C,)
    pseudo, realized : numpy.ndarray of float64, shape (R, C)
    arrays : dict of str to numpy.ndarray
        The family's per-repetition arrays (leading axis ``R``), named as in
        :attr:`Family.unit_arrays`, in that order.
    meta : dict
        JSON: at least ``label``, ``learner`` and ``ledgers`` (``{str(key): Accountant.to_dict()}``).
    """

    rounds: IntArray
    pseudo: FloatArray
    realized: FloatArray
    arrays: dict[str, NDArray[Any]]
    meta: dict[str, Any]


class Family(ABC):
    """A learner family (module docstring). Stateless: one instance of each in :data:`FAMILIES`."""

    #: The family's name (the config's ``family``).
    name: ClassVar[str]
    #: Algorithm name -> whether it takes an ε (runs at every ε of a panel).
    algorithms: ClassVar[Mapping[str, bool]]
    #: Instance kind -> its keys in ``[instance]`` (``kind`` first).
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]]
    #: The keywords of the family's ``make_learner`` (the keys of ``params``).
    params: ClassVar[tuple[str, ...]]
    #: The per-repetition arrays of a unit, beside the regret (a unit without one is recomputed).
    unit_arrays: ClassVar[tuple[str, ...]]
    #: How the plots and tables name the regret: ``(name, symbol)``, e.g. ("pseudo-regret", "Reg(t)").
    regret_label: ClassVar[tuple[str, str]]
    #: The first paragraph of ``summary.md`` (what "claimed" and "exact" mean in this family).
    table_note: ClassVar[str]

    @abstractmethod
    def instance(self, where: str, table: Mapping[str, Any], base: Path) -> Any:
        """The validated ``[instance]`` table at ``where`` (its ``kind`` is one of ours): a frozen,
        hashable spec with ``kind``, ``shared``, ``draw(rng)``, ``build_shared()``, ``to_dict()`` and
        ``describe()``. Relative paths are taken from ``base``."""

    #: Whether a private learner takes its own ``delta`` (its claim), which then defaults to the
    #: config's top-level ``delta`` (:meth:`params_of`).
    learner_delta: ClassVar[bool] = False

    def params_of(self, name: str, params: dict[str, Any], delta: float) -> dict[str, Any]:
        """The params of ``[[algorithms]]`` as resolved (defaults the config supplies filled in):
        with :attr:`learner_delta`, a private algorithm's ``delta`` defaults to the config's."""
        if self.learner_delta and self.algorithms.get(name) and "delta" not in params:
            return {**params, "delta": delta}
        return params

    @abstractmethod
    def learner(self, name: str, epsilon: float | None, params: Mapping[str, Any]) -> Any:
        """The learner (raises :class:`ParameterError` naming the parameter, or ``TypeError``)."""

    def default_label(self, learner: Any) -> str:
        """An algorithm's label where the config gives none (the same at every ε)."""
        return str(learner.label)

    def check_panel(  # noqa: B027 - an optional hook: nothing to refuse unless a family says so
        self, instance: Any, *, where: str, horizon: int, horizon_where: str, repetitions: int, chunk: int
    ) -> None:
        """Refuse a panel whose instance, horizon and repetitions cannot run together."""

    def check(  # noqa: B027 - an optional hook, as check_panel
        self, learner: Any, panel: Panel, algorithm: int, epsilon_where: str
    ) -> None:
        """Refuse, before anything runs, a learner that cannot run on ``panel`` (a config error)."""

    @abstractmethod
    def run(
        self,
        learner: Any,
        instances: Any,
        horizon: int,
        *,
        tapes: Sequence[np.random.Generator],
        rng: np.random.Generator,
        checkpoints: int,
        delta: float,
    ) -> UnitRun:
        """Run one unit: ``len(tapes)`` repetitions on ``instances`` (one shared, or one each)."""

    def unit_run(self, learner: Any, result: Any, **meta: Any) -> UnitRun:
        """A :class:`UnitRun` of a family's run result: its curves, its :attr:`unit_arrays` and the
        meta every family writes (label, learner, horizon, the ledgers the run wrote as it
        released, answered once when the outputs are written) followed by ``meta``."""
        return UnitRun(
            np.asarray(result.rounds, dtype=np.int64),
            np.asarray(result.pseudo_regret, dtype=np.float64),
            np.asarray(result.realized_regret, dtype=np.float64),
            {name: np.asarray(getattr(result, name), dtype=np.int64) for name in self.unit_arrays},
            {
                "label": learner.label,
                "learner": asdict(learner),
                "horizon": result.horizon,
                "ledgers": {str(n): ledger.to_dict() for n, ledger in result.ledgers.items()},
            }
            | meta,
        )

    @abstractmethod
    def result(
        self,
        learner: Any,
        panel: Panel,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        *,
        delta: float,
        route: str,
        exact: str,
        files: Sequence[str],
    ) -> dict[str, Any]:
        """The family's entries of a ``summary.json`` result (``privacy`` first, built by
        :func:`learners.privacy.report`), from the units of one (panel, algorithm, ε): ``arrays``
        concatenated over chunks, their ``metas``, the merged ``ledgers`` (saved as ``files``) and
        the releases of each ledger key; ``route`` answers the headline ε, ``exact`` (an exact mode
        of :mod:`learners.privacy`) the ``exact`` block."""


def _error_field(where: str, name: str) -> str:
    return f"{where}.{name}"


# ---------------------------------------------------------------------------------------
# The distributed MAB family (learners.mab)
# ---------------------------------------------------------------------------------------

_DEFAULT_ARMS = 10
_DEFAULT_CLUSTERS = 50
_DEFAULT_CONCENTRATION = 10.0


@dataclass(frozen=True)
class InstanceSpec:
    """The bandit instance of a panel of the MAB family (``[instance]``).

    Attributes
    ----------
    kind : str
        One of the MAB family's kinds (``gaussian-easy``, ``gaussian-hard``, ``bernoulli``,
        ``beta``, ``mslr``).
    arms : int
        ``K`` (for ``"mslr"``, the number of K-means clusters).
    means : tuple of float or None
        Fixed arm means of ``"bernoulli"`` / ``"beta"``; ``None`` draws them per repetition.
    concentration : float or None
        The Beta concentration (``"beta"`` only).
    path : str or None
        The MSLR-WEB10K-format file, absolute (``"mslr"``; ``None``: the offline stand-in).
    cluster_seed : int or None
        The K-means seed (``"mslr"`` only).
    """

    kind: str
    arms: int
    means: tuple[float, ...] | None = None
    concentration: float | None = None
    path: str | None = None
    cluster_seed: int | None = None

    @property
    def shared(self) -> bool:
        """Whether one instance serves every repetition (real data, or given means)."""
        return self.kind == "mslr" or self.means is not None

    def draw(self, rng: np.random.Generator) -> MABInstance:
        """The instance of one repetition, drawn from its instance stream (synthetic kinds)."""
        if self.kind == "gaussian-easy":
            return gaussian_easy(rng, self.arms)
        if self.kind == "gaussian-hard":
            return gaussian_hard(rng, self.arms)
        means = self.means if self.means is not None else tuple(0.25 + 0.5 * rng.random(self.arms))
        if self.kind == "bernoulli":
            return BernoulliArms(means)
        if self.kind == "beta":
            return BetaArms(
                means, _DEFAULT_CONCENTRATION if self.concentration is None else self.concentration
            )
        raise ConfigError("instance.kind", self.kind, "a synthetic kind to draw")  # pragma: no cover

    def build_shared(self) -> MABInstance:
        """The one instance of every repetition (:attr:`shared` kinds; may read and cluster a file)."""
        if self.kind != "mslr":
            return self.draw(np.random.default_rng(0))  # means are fixed: the stream is not read
        from learners.datasets import default_real_instance, mslr_instance

        seed = 0 if self.cluster_seed is None else self.cluster_seed
        if self.path is None:
            return default_real_instance(self.arms, seed)
        return mslr_instance(self.path, self.arms, seed)

    def to_dict(self) -> dict[str, Any]:
        """The ``[instance]`` table of this spec."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "mslr":
            if self.path is not None:
                out["path"] = self.path
            out["clusters"] = self.arms
            out["cluster_seed"] = self.cluster_seed
            return out
        out["arms"] = self.arms
        if self.means is not None:
            out["means"] = list(self.means)
        if self.concentration is not None:
            out["concentration"] = self.concentration
        return out

    def describe(self) -> str:
        """A short caption, e.g. ``gaussian-easy, K=10``."""
        if self.kind == "mslr":
            if self.path is None:
                return f"mslr stand-in (not MSLR-WEB10K), K={self.arms}"
            return f"mslr ({Path(self.path).name}), K={self.arms}"
        return f"{self.kind}, K={self.arms}"


def _bernoulli_mean(where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(where, value, "a mean in [0, 1]")
    return float(value)


#: The largest variance of an aggregate's noise a run draws: the samplers draw int64 values, and
#: numpy's Poisson (behind Skellam, two rates of half the variance) takes rates below 9.2e18.
MAX_NOISE_VARIANCE = 1.8e19


class MABFamily(Family):
    """The distributed MAB paper's learners (:mod:`learners.mab`)."""

    name = "mab"
    algorithms: ClassVar[Mapping[str, bool]] = {n: a.private for n, a in mab.ALGORITHMS.items()}
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "gaussian-easy": ("kind", "arms"),
        "gaussian-hard": ("kind", "arms"),
        "bernoulli": ("kind", "arms", "means"),
        "beta": ("kind", "arms", "means", "concentration"),
        "mslr": ("kind", "path", "clusters", "cluster_seed"),
    }
    params = tuple(f for f in mab.Learner.__dataclass_fields__ if f not in ("name", "epsilon"))
    unit_arrays = ("released", "final_arms")
    regret_label = ("pseudo-regret", "Reg(t)")
    table_note = (
        "Claimed: the guarantee of the variant's theorem (— where its hypotheses do not hold). Exact: the "
        "certified guarantee of the run's saved ledgers (ledgers/), worst over the released batch "
        "sizes, and the accountant route that answered it. Every ε is a certified upper bound, rounded up. "
        "Regret: the final time-average pseudo-regret Reg(T)/T, mean ± 95% CI half-width."
    )

    def instance(self, where: str, table: Mapping[str, Any], base: Path) -> InstanceSpec:
        from learners.config import _integer, _list, _real, _string

        kind = table["kind"]
        if kind == "mslr":
            clusters = _integer(
                f"{where}.clusters", table.get("clusters", _DEFAULT_CLUSTERS), 2, MAX_ARMS, _WHY_ARMS
            )
            cluster_seed = _integer(
                f"{where}.cluster_seed",
                table.get("cluster_seed", 0),
                0,
                2**32 - 1,
                "K-means seeds are 32-bit",
            )
            path = None
            if "path" in table:
                given = Path(_string(f"{where}.path", table["path"])).expanduser()
                resolved = given if given.is_absolute() else base / given
                if not resolved.is_file():
                    raise ConfigError(
                        f"{where}.path",
                        table["path"],
                        f"an existing MSLR-WEB10K-format file (looked for {resolved})",
                    )
                path = str(resolved.resolve())
            return InstanceSpec(kind, clusters, path=path, cluster_seed=cluster_seed)
        means: tuple[float, ...] | None = None
        if "means" in table:
            items = _list(f"{where}.means", table["means"])
            # Beta(μc, (1-μ)c) needs 0 < μ < 1; a Bernoulli mean may be 0 or 1.
            if kind == "beta":
                means = tuple(_real(f"{where}.means[{j}]", m, low=0.0, high=1.0) for j, m in enumerate(items))
            else:
                means = tuple(_bernoulli_mean(f"{where}.means[{j}]", m) for j, m in enumerate(items))
            if len(means) < 2:
                raise ConfigError(f"{where}.means", table["means"], "K >= 2 arm means")
        default_arms = len(means) if means is not None else _DEFAULT_ARMS
        arms = _integer(f"{where}.arms", table.get("arms", default_arms), 2, MAX_ARMS, _WHY_ARMS)
        if means is not None and arms != len(means):
            raise ConfigError(f"{where}.arms", arms, f"the number of means, {len(means)}")
        concentration = None
        if kind == "beta":
            concentration = _real(
                f"{where}.concentration", table.get("concentration", _DEFAULT_CONCENTRATION)
            )
        return InstanceSpec(kind, arms, means=means, concentration=concentration)

    def learner(self, name: str, epsilon: float | None, params: Mapping[str, Any]) -> mab.Learner:
        return mab.make_learner(name, epsilon, **params)

    def check_panel(
        self, instance: Any, *, where: str, horizon: int, horizon_where: str, repetitions: int, chunk: int
    ) -> None:
        from learners.config import MAX_CURVE_POINTS

        if horizon < instance.arms:
            raise ConfigError(horizon_where, horizon, f"a horizon T >= K = {instance.arms} (K of {where})")
        if repetitions * instance.arms > MAX_CURVE_POINTS:
            raise ConfigError(
                "repetitions",
                repetitions,
                f"repetitions x arms <= {MAX_CURVE_POINTS:.0e} (= {repetitions} x {instance.arms} here: "
                "the learner keeps per-arm statistics of every repetition in memory)",
            )

    def check(self, learner: Any, panel: Panel, algorithm: int, epsilon_where: str) -> None:
        """The protocol parameters of the first and the last full batch, computed now: a setting they
        cannot take (a noise beyond the samplers, an encoding beyond 2^53) is a config error before
        anything runs, naming the setting, not a failure in the middle of the run."""
        if learner.variant is None or learner.epsilon is None:
            return
        from accounting.papers.distributed_dp_mab import protocol_parameters
        from learners.protocols import Protocol

        horizon = panel.horizon
        where = f"algorithms[{algorithm}]"
        sizes = {learner.eta}
        while max(sizes) * learner.eta <= horizon:
            sizes.add(max(sizes) * learner.eta)
        variance = 0.0
        try:
            for n in (min(sizes), max(sizes)):
                par = protocol_parameters(
                    learner.variant, learner.epsilon, n, horizon, scale=learner.scale, p=learner.p_tau
                )
                Protocol(par)  # its own checks
                if par.g > 2**53:  # the encoding of every batch (learners.protocols.encode)
                    raise ParameterError(
                        "g", par.g, "an integer in [1, 2**53] (x*g must be exact enough to round)"
                    )
                noise = par.share if par.share is not None else par.server_noise
                if isinstance(noise, Skellam):  # the one sampler with a ceiling below int64's
                    variance = max(variance, noise.variance() * (n if par.share is not None else 1))
        except (ParameterError, ParameterTypeError) as err:
            field = f"{where}.params.{err.name}" if err.name in ("scale", "p") else epsilon_where
            if err.name == "g" and learner.scale is not None:
                field = f"{where}.params.scale"
            value = learner.scale if field.endswith("scale") else learner.epsilon
            raise ConfigError(field, value, f"settings the protocol can take ({err})") from None
        if not variance <= MAX_NOISE_VARIANCE:
            field = f"{where}.params.scale" if learner.scale is not None else epsilon_where
            raise ConfigError(
                field,
                learner.scale if learner.scale is not None else learner.epsilon,
                f"a Skellam protocol noise of variance at most {MAX_NOISE_VARIANCE:g} per aggregate (this "
                f"one has {variance:.3g}: numpy's Poisson sampler takes rates below 9.2e18)",
            )

    def run(
        self,
        learner: Any,
        instances: Any,
        horizon: int,
        *,
        tapes: Sequence[np.random.Generator],
        rng: np.random.Generator,
        checkpoints: int,
        delta: float,
    ) -> UnitRun:
        result = mab.run(
            learner, instances, horizon, tapes=tapes, rng=rng, checkpoints=checkpoints, delta=delta
        )
        return self.unit_run(
            learner,
            result,
            releases={str(n): int(k) for n, k in result.releases.items()},
            bits=int(result.bits),
            batch_sizes=[int(n) for n in result.batch_sizes],
        )

    def result(
        self,
        learner: Any,
        panel: Panel,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        *,
        delta: float,
        route: str,
        exact: str,
        files: Sequence[str],
    ) -> dict[str, Any]:
        return {
            "privacy": self.privacy(learner, ledgers, releases, delta, route, files, exact),
            "bits_per_user_per_batch": max(int(m["bits"]) for m in metas),
            "batch_sizes": sorted({int(n) for m in metas for n in m["batch_sizes"]}),
            "released_mean": float(arrays["released"].mean()),
            "final_arms_mean": float(arrays["final_arms"].mean()),
            "learner": metas[0]["learner"],
        }

    @staticmethod
    def privacy(
        learner: mab.Learner,
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        delta: float,
        route: str,
        files: Sequence[str],
        exact: str = "auto",
    ) -> dict[str, Any]:
        """The privacy of a (panel, algorithm, ε): its merged ledgers (saved as ``files``), answered.

        ``epsilon``, ``delta``, ``batches``, ... are :func:`learners.mab.privacy_of` by the config's
        ``route``; ``claimed`` is the variant's theorem; ``exact`` is
        :func:`learners.mab.exact_privacy` by the ``exact`` mode (under
        :data:`learners.privacy.EXACT_BUDGET`, unless both ask for ``"auto"``: exact answers at any
        cost, which :func:`privacy_of` computes anyway).
        """
        # a run answered by cheap routes (a quick run) caps the headline's exact answers as well
        cap = privacy.CHEAP_BUDGET if exact == "cheap" else None
        answered = mab.privacy_of(learner, ledgers, delta, route, cap)
        claimed = answered.theorem_epsilon
        if answered.notion == "pure" and answered.theorem_holds:
            claimed = learner.epsilon  # (ε, 0)-DP, the nominal ε, whatever was released
        budget = None if route == exact == "auto" else privacy.EXACT_BUDGET
        return privacy.report(
            answered,
            privacy.Claimed(claimed, answered.delta, answered.statement, answered.theorem_holds),
            None if exact == "off" else mab.exact_privacy(learner, ledgers, delta, budget, mode=exact),
            files,
            extra={"releases": [[n, releases[n]] for n in sorted(releases)]},
        )


# ---------------------------------------------------------------------------------------
# The federated linear family (learners.linear)
# ---------------------------------------------------------------------------------------

#: The synthetic instance's defaults: the paper's (spec §8.2), its instance fixed by seed 2.
_LINEAR_DEFAULTS: dict[str, Any] = {
    "dim": 10,
    "arms": 100,
    "agents": 100,
    "noise_sd": 0.5,
    "instance_seed": 2,
}


@dataclass(frozen=True)
class LinearInstanceSpec:
    """The instance of a panel of the linear family: ``linear-synthetic`` (spec §8.2).

    One instance serves every repetition (the paper fixes it with seed 2): ``θ*`` and the key of
    its arm stream are drawn by :func:`learners.linear_instances.draw_synthetic` from
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


#: The real-data instance's defaults (spec §8.3: the paper's main instance, Figure 2(c)).
_MSLR_DEFAULTS: dict[str, Any] = {"features": "title", "agents": 10, "reward": "model", "seed": 0}


#: The stand-in's images (scikit-learn's digits) and images per query (default_linear_instance's).
_STAND_IN_IMAGES, _STAND_IN_DOCS = 1797, 20


@lru_cache(maxsize=4)
def _query_instance(path: str | None, features: str, agents: int, reward: str, seed: int) -> QueryInstance:
    """The real-data instance of a spec, built once per process (an MSLR-WEB10K file is read and its
    Lasso fitted once, at config load, and reused by the run)."""
    from learners.datasets import default_linear_instance, mslr_linear_instance

    if path is None:
        # queries of 20 images (90 of them), fewer per query beyond 89 silos so that every silo
        # has one (Figure 3(d)'s M = 100: 17 images, 106 queries)
        docs = max(1, min(_STAND_IN_DOCS, _STAND_IN_IMAGES // agents))
        return default_linear_instance(agents=agents, docs=docs, reward=reward, seed=seed)
    return mslr_linear_instance(path, features, agents=agents, reward=reward, seed=seed)


@dataclass(frozen=True)
class MSLRLinearSpec:
    """The instance of a panel of the linear family: ``linear-mslr`` (spec §8.3).

    Contexts are queries, arms their documents, ``θ*`` the Lasso fit of the relevance on the
    chosen features; rewards are noise-free (:func:`learners.datasets.mslr_linear_instance`). One
    instance serves every repetition, including its query sequence (keyed by ``seed``): the
    repetitions differ in the privacy noise only (the authors' code redraws the query sequence
    per run, spec §8.4, which would pad every repetition's blocks separately at up to 908 arms).
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


def _linear(panel: Panel) -> LinearSpec:
    assert isinstance(panel.instance, LinearInstanceSpec | MSLRLinearSpec), panel.instance
    return panel.instance


def _linear_statement(learner: linear.Learner) -> str:
    """The claim of a private linear learner, as its paper states it."""
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


class LinearFamily(Family):
    """Federated LinUCB and its baselines (:mod:`learners.linear`)."""

    name = "linear"
    algorithms: ClassVar[Mapping[str, bool]] = {n: a.private for n, a in linear.ALGORITHMS.items()}
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "linear-synthetic": ("kind", "dim", "arms", "agents", "noise_sd", "instance_seed"),
        "linear-mslr": ("kind", "path", "features", "agents", "reward", "seed"),
    }
    params = tuple(f for f in linear.Learner.__dataclass_fields__ if f not in ("name", "epsilon"))
    unit_arrays = ("syncs", "reals", "bits", "clipped")
    regret_label = ("group pseudo-regret", "R_M(t)")
    learner_delta = True
    table_note = (
        "Claimed: the learner's target (ε, δ) (holds: whether the run certifies it). Exact: the certified "
        "guarantee of the run's saved ledgers (ledgers/, one per number of tree nodes a batch entered), "
        "worst over them, by the accountant route named (∞ where the ledger does not bound what the "
        "algorithm as run reveals; see the notes). Every ε is a certified upper bound, rounded up. Regret: "
        "the final time-average group pseudo-regret R_M(T)/T (summed over the M silos), mean ± 95% CI "
        "half-width."
    )

    def instance(self, where: str, table: Mapping[str, Any], base: Path) -> LinearSpec:
        if table["kind"] == "linear-mslr":
            return self._mslr(where, table, base)
        return self._synthetic(where, table)

    @staticmethod
    def _mslr(where: str, table: Mapping[str, Any], base: Path) -> MSLRLinearSpec:
        """``linear-mslr``: the keys checked, then the instance built (the file read and the Lasso
        fitted, memoized for the run), so a malformed file is a config error naming ``path``."""
        from learners.config import _integer, _string
        from learners.datasets import FEATURE_SETS, REWARDS

        values = {**_MSLR_DEFAULTS, **{k: v for k, v in table.items() if k != "kind"}}
        features = _string(f"{where}.features", values["features"])
        if features not in FEATURE_SETS:
            raise ConfigError(f"{where}.features", features, "one of " + ", ".join(FEATURE_SETS))
        agents = _integer(f"{where}.agents", values["agents"], 1, 10**6, "one block of queries per silo")
        reward = _string(f"{where}.reward", values["reward"])
        if reward not in REWARDS:
            raise ConfigError(f"{where}.reward", reward, "one of " + ", ".join(REWARDS))
        seed = _integer(f"{where}.seed", values["seed"], 0, 2**32 - 1, "the Lasso's random_state is 32-bit")
        path = None
        if "path" in table:
            given = Path(_string(f"{where}.path", table["path"])).expanduser()
            resolved = given if given.is_absolute() else base / given
            if not resolved.is_file():
                raise ConfigError(
                    f"{where}.path",
                    table["path"],
                    f"an existing MSLR-WEB10K-format file (looked for {resolved})",
                )
            path = str(resolved.resolve())
        spec = MSLRLinearSpec(table["kind"], path, features, agents, reward, seed)
        try:
            spec.build_shared()
        except (ParameterError, ParameterTypeError) as err:
            name = err.name if err.name in _MSLR_DEFAULTS else "path"
            value = table.get("path") if name == "path" else values.get(name)
            if name == "path" and path is None:  # the stand-in refused a setting: its silos
                name, value = "agents", agents
            raise ConfigError(_error_field(where, name), value, err.valid) from None
        return spec

    @staticmethod
    def _synthetic(where: str, table: Mapping[str, Any]) -> LinearInstanceSpec:
        from learners.config import _integer, _real

        values = {**_LINEAR_DEFAULTS, **{k: v for k, v in table.items() if k != "kind"}}
        dim = _integer(f"{where}.dim", values["dim"], 2, 10**4, "V is a d x d matrix per silo and repetition")
        arms = _integer(f"{where}.arms", values["arms"], dim, MAX_ARMS, "the first d arms are the basis arms")
        agents = _integer(f"{where}.agents", values["agents"], 1, 10**6)
        noise_sd = _real(f"{where}.noise_sd", values["noise_sd"], low_open=False)
        seed = _integer(
            f"{where}.instance_seed", values["instance_seed"], 0, 2**128 - 1, "numpy seeds are non-negative"
        )
        spec = LinearInstanceSpec(table["kind"], dim, arms, agents, float(noise_sd), seed)
        try:
            spec.build_shared()  # its own checks (one block of arms must fit in memory)
        except (ParameterError, ParameterTypeError) as err:
            name = err.name if err.name in _LINEAR_DEFAULTS else "agents"
            raise ConfigError(_error_field(where, name), values.get(name), err.valid) from None
        return spec

    def learner(self, name: str, epsilon: float | None, params: Mapping[str, Any]) -> linear.Learner:
        return linear.make_learner(name, epsilon, **params)

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

    def check(self, learner: Any, panel: Panel, algorithm: int, epsilon_where: str) -> None:
        """``B <= T``, and for the shuffle variants their noise (Theorem 5.3, instant): a setting no
        σ0 certifies (outside Lemma F.2's hypotheses) is refused before anything runs, naming the ε.
        (The silo-level σ0 is calibrated by the run: seconds each, which ``dp-regret list`` should
        not spend, and it takes every ε the config accepts.)"""
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

    def run(
        self,
        learner: Any,
        instances: Any,
        horizon: int,
        *,
        tapes: Sequence[np.random.Generator],
        rng: np.random.Generator,
        checkpoints: int,
        delta: float,
    ) -> UnitRun:
        # δ of the report: the learner's own (its claim) where it has one
        result = linear.run(learner, instances, horizon, tapes=tapes, rng=rng, checkpoints=checkpoints)
        noise = result.noise
        # the ledgers are keyed by the tree nodes per stream the batch entered
        return self.unit_run(
            learner,
            result,
            noise={"sigma0": noise.sigma0, "mode": noise.mode, "syncs": noise.syncs, "kappa": noise.kappa},
            regularizer=result.regularizer,
        )

    def result(
        self,
        learner: Any,
        panel: Panel,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        *,
        delta: float,
        route: str,
        exact: str,
        files: Sequence[str],
    ) -> dict[str, Any]:
        d = _linear(panel).dim
        noise = metas[0]["noise"]
        return {
            "privacy": self.privacy(learner, panel, ledgers, delta, files, route, exact),
            "communication": {
                "syncs_mean": float(arrays["syncs"].mean()),
                "syncs_max": int(arrays["syncs"].max()),
                "reals_per_sync": d + d * (d + 1) // 2,
                "reals_per_silo_mean": float(arrays["reals"].mean()),
                "bits_per_silo_mean": float(arrays["bits"].mean()),
                "bits_per_silo_max": int(arrays["bits"].max()),
            },
            "clipped_mean": float(arrays["clipped"].mean()),
            "noise": {**noise, "regularizer": metas[0]["regularizer"]},
            "learner": metas[0]["learner"],
        }

    @staticmethod
    def privacy(
        learner: linear.Learner,
        panel: Panel,
        ledgers: Mapping[int, Accountant],
        delta: float,
        files: Sequence[str],
        route: str = "auto",
        exact: str = "auto",
    ) -> dict[str, Any]:
        """:func:`learners.linear.privacy_of` the merged ledgers by ``route``, with ``claimed`` (the
        learner's target and whether the run certifies it) and ``exact`` (the ledgers by the
        ``exact`` mode, worst over them; ``inf`` where the ledger is not a guarantee of the run; the
        vector-sum variants' ledgers of (ε0, δ0) calls by the PLD route).

        The δ is the learner's (its claim) for a private learner, else the config's ``delta``.
        """
        d = learner.delta if learner.delta is not None else delta
        spec = _linear(panel)
        noise = linear.noise_of(learner, panel.horizon, spec.agents, dim=spec.dim)
        answered = linear.privacy_of(learner, noise, ledgers, d, route)
        nodes = {"nodes": [list(n) for n in answered.nodes]}
        if not learner.private:
            return privacy.report(answered, None, None, files, extra=nodes)
        vector = learner.algorithm.release == "vector-sum"
        return privacy.report(
            answered,
            privacy.Claimed(learner.epsilon, learner.delta, _linear_statement(learner), answered.meets_claim),
            None
            if exact == "off"
            else privacy.exact(ledgers, d, exact, auto_route="pld" if vector else "auto", what="tree nodes"),
            files,
            certified=answered.certified,
            batches="nodes",
            extra=nodes,
            exact_extra={"certified": answered.certified, "content_epsilon": answered.content_epsilon},
        )


# ---------------------------------------------------------------------------------------
# The phased elimination family (learners.phased)
# ---------------------------------------------------------------------------------------

#: The synthetic instance's defaults: spec §7.1-7.2 (k = 1000 arms, d = 20, σ = 0.1, |𝒰| = 10^6).
_PHASED_DEFAULTS: dict[str, Any] = {
    "arms": 1000,
    "dim": 20,
    "client_sd": 0.1,
    "noise_sd": 1.0,
    "population": 10**6,
    "theta_norm": 1.0,
    "instance_seed": 0,
}


@dataclass(frozen=True)
class PhasedInstanceSpec:
    """The instance of a panel of the phased family: ``phased-synthetic`` (spec §7.2).

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
        return {"kind": self.kind, **{k: getattr(self, k) for k in _PHASED_DEFAULTS}}

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


def _phased(panel: Panel) -> PhasedInstanceSpec:
    assert isinstance(panel.instance, PhasedInstanceSpec), panel.instance
    return panel.instance


class PhasedFamily(Family):
    """DP-DPE, DP-PE and their non-private baselines (:mod:`learners.phased`)."""

    name = "phased"
    algorithms: ClassVar[Mapping[str, bool]] = {n: a.private for n, a in phased.ALGORITHMS.items()}
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "phased-synthetic": ("kind", *_PHASED_DEFAULTS),
    }
    params = tuple(f for f in phased.Learner.__dataclass_fields__ if f not in ("name", "epsilon"))
    unit_arrays = ("phases", "clients", "reals", "bits", "final_arms")
    regret_label = ("pseudo-regret", "Reg(t)")
    learner_delta = True
    table_note = (
        "Claimed: the learner's target (ε, δ) (holds: whether the run certifies it). Exact: the certified "
        "guarantee of the run's saved ledgers (ledgers/, one per phase: every client reports once, in "
        "one phase, so the run's ε is the worst phase's), by the accountant route named (∞ where nothing "
        "is certified; see the notes). Every ε is a certified upper bound, rounded up. Mode: "
        "'faithful' (the paper's constants) or 'practical' (§7.4's data-dependent widths), named in each "
        "label. Regret: the final time-average pseudo-regret Reg(T)/T, mean ± 95% CI half-width."
    )

    def instance(self, where: str, table: Mapping[str, Any], base: Path) -> PhasedInstanceSpec:
        from learners.config import _integer, _real

        values = {**_PHASED_DEFAULTS, **{k: v for k, v in table.items() if k != "kind"}}
        arms = _integer(f"{where}.arms", values["arms"], 2, MAX_ARMS, _WHY_ARMS)
        dim = _integer(f"{where}.dim", values["dim"], 1, 10**4, "the design solves d x d systems per action")
        client_sd = _real(f"{where}.client_sd", values["client_sd"], low_open=False)
        noise_sd = _real(f"{where}.noise_sd", values["noise_sd"], high=1.0, high_open=False)
        population = _integer(f"{where}.population", values["population"], 1, 10**15)
        theta_norm = _real(f"{where}.theta_norm", values["theta_norm"], high=1.0, high_open=False)
        seed = _integer(
            f"{where}.instance_seed", values["instance_seed"], 0, 2**128 - 1, "numpy seeds are non-negative"
        )
        spec = PhasedInstanceSpec(
            table["kind"], arms, dim, float(client_sd), float(noise_sd), population, float(theta_norm), seed
        )
        try:
            spec.build_shared()
        except (ParameterError, ParameterTypeError) as err:
            name = err.name if err.name in _PHASED_DEFAULTS else "arms"
            raise ConfigError(_error_field(where, name), values.get(name), err.valid) from None
        return spec

    def learner(self, name: str, epsilon: float | None, params: Mapping[str, Any]) -> phased.Learner:
        return phased.make_learner(name, epsilon, **params)

    def default_label(self, learner: Any) -> str:
        """The algorithm's name in the paper and its mode, e.g. ``CDP-DPE (practical)``."""
        return f"{learner.algorithm.label} ({learner.mode})"

    def check(self, learner: Any, panel: Panel, algorithm: int, epsilon_where: str) -> None:
        """The population must hold every client the schedule samples up to ``T`` (each reports
        once, §8 P6), or the config is refused naming ``population``."""
        spec = _phased(panel)
        needed = phased.clients_needed(learner, panel.horizon)
        if needed > spec.population:
            raise ConfigError(
                f"{panel.instance_where}.population",
                spec.population,
                f"at least the {needed} clients algorithms[{algorithm}] samples up to T = {panel.horizon} "
                "(each client reports once)",
            )

    def run(
        self,
        learner: Any,
        instances: Any,
        horizon: int,
        *,
        tapes: Sequence[np.random.Generator],
        rng: np.random.Generator,
        checkpoints: int,
        delta: float,
    ) -> UnitRun:
        result = phased.run(learner, instances, horizon, tapes=tapes, rng=rng, checkpoints=checkpoints)
        noise = result.noise
        return self.unit_run(
            learner,
            result,
            noise={
                "kind": noise.kind,
                "calibration": noise.calibration,
                "multiplier": noise.multiplier,
                "exact_multiplier": noise.exact_multiplier,
                "classic_multiplier": noise.classic_multiplier,
            },
            mode=result.mode,
            unit=result.unit,
        )

    def result(
        self,
        learner: Any,
        panel: Panel,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        *,
        delta: float,
        route: str,
        exact: str,
        files: Sequence[str],
    ) -> dict[str, Any]:
        d = learner.delta if learner.delta is not None else delta
        answered = phased.privacy_of(learner, ledgers, d, route)
        phases = {"phases": [list(p) for p in answered.phases]}
        if not learner.private:
            report = privacy.report(answered, None, None, files, extra=phases)
        else:
            statement = (
                f"({learner.epsilon:g}, {learner.delta:g})-DP in the {learner.model} model "
                f"({answered.argument})"
            )
            report = privacy.report(
                answered,
                privacy.Claimed(learner.epsilon, learner.delta, statement, answered.meets_claim),
                None if exact == "off" else privacy.exact(ledgers, d, exact, what="phase"),
                files,
                certified=answered.certified,
                batches="phases",
                extra=phases,
                exact_extra={"basis": answered.basis, "certified": answered.certified},
            )
        unit = metas[0]["unit"]
        return {
            "privacy": report,
            "communication": {
                "unit": unit,
                "phases_mean": float(arrays["phases"].mean()),
                "clients_mean": float(arrays["clients"].mean()),
                "reals_mean": float(arrays["reals"].mean()),
                "bits_mean": float(arrays["bits"].mean()),
            },
            "final_arms_mean": float(arrays["final_arms"].mean()),
            "mode": metas[0]["mode"],
            "noise": metas[0]["noise"],
            "learner": metas[0]["learner"],
        }


# ---------------------------------------------------------------------------------------
# The LDP bandits family (learners.ldp)
# ---------------------------------------------------------------------------------------

#: The ``[instance]`` defaults of the LDP family's kinds (spec §10's synthetic d = 5, K = 10;
#: §6.2's MovieLens 20 movies and rank 20).
_LDP_DEFAULTS: dict[str, dict[str, Any]] = {
    "ldp-quadratic": {"convexity": "convex", "dim": 5, "mu": 1.0, "perturbation": 0.0},
    "ldp-linear": {"dim": 5, "arms": 10, "noise": 0.1, "instance_seed": 0},
    "ldp-glm": {"link": "logistic", "dim": 5, "arms": 10, "instance_seed": 0},
    "ldp-movielens": {"arms": 20, "rank": 20},
    "ldp-bernoulli": {},
}
#: ``[instance] convexity`` of ``ldp-quadratic``.
CONVEXITIES = ("convex", "strongly-convex")
#: The base learners of Algorithm 1 (``params.base``), by name.
LDP_BASES: dict[str, Any] = {
    "fkm": ldp.FKM,
    "adx": ldp.ADXOnePoint,
    "saha-tewari": ldp.SahaTewari,
    "hazan-levy": ldp.HazanLevy,
    "ucb": ldp.UCB,
}
#: ``params.base_<key>``: the base learner's keyword ``<key>`` (``base_arms`` -> ``UCB(arms=...)``).
_BASE_KEYS = ("mu", "smoothness", "arms", "rho", "eta", "rho0")
#: The LDP family's algorithm names -> (the ``learners.ldp`` algorithm, whether it is private).
_LDP_ALGORITHMS: dict[str, tuple[str, bool]] = {
    "one-point": ("one-point", True),
    "two-point": ("two-point", True),
    "ldp-linucb": ("ldp-linucb", True),
    "ldp-glm": ("ldp-glm", True),
    "one-point-nonprivate": ("one-point", False),
    "two-point-nonprivate": ("two-point", False),
}
#: The instance kinds each ``learners.ldp`` algorithm runs on (``one-point``: by its base).
_LDP_KINDS = {
    "one-point": ("ldp-quadratic",),
    "one-point/ucb": ("ldp-bernoulli",),
    "two-point": ("ldp-quadratic",),
    "ldp-linucb": ("ldp-linear", "ldp-movielens"),
    "ldp-glm": ("ldp-glm",),
}


@dataclass(frozen=True)
class LDPInstanceSpec:
    """The instance of a panel of the LDP family (:mod:`learners.ldp_instances`), shared by every
    repetition (the repetitions differ in their environment stream: contexts, users, losses).

    Attributes
    ----------
    kind : str
        ``ldp-quadratic`` (:func:`~learners.ldp_instances.convex_quadratic` or
        :func:`~learners.ldp_instances.strongly_convex_quadratic`), ``ldp-linear``
        (:func:`~learners.ldp_instances.synthetic_linear`), ``ldp-glm``
        (:func:`~learners.ldp_instances.glm_bandit`), ``ldp-movielens``
        (:func:`~learners.ldp_instances.movielens_instance`) or ``ldp-bernoulli``
        (:class:`~learners.ldp_instances.BernoulliArms`).
    convexity : str or None
        ``ldp-quadratic``: ``"convex"`` or ``"strongly-convex"``.
    dim, arms : int or None
        ``d`` (MovieLens: ``rank``) and ``K``.
    mu : float or None
        The strong convexity of a strongly convex quadratic.
    minimizer : tuple of float or None
        ``x*`` (``None``: ``(0.5/√d)(1, ..., 1)``).
    perturbation, noise : float or None
        The quadratic's ``ζ_t`` radius; the linear bandit's reward noise ``η ~ U[-noise, noise]``.
    link : str or None
        ``ldp-glm``: ``"logistic"`` or ``"poisson"``.
    instance_seed : int or None
        The seed of ``θ*`` (``ldp-linear``, ``ldp-glm``).
    path : str or None
        ``ldp-movielens``: a ``ua.base``-format file, absolute (``None``: the offline stand-in).
    means : tuple of float or None
        ``ldp-bernoulli``: the arms' *reward* means, as the MAB family's ``bernoulli`` kind; the
        learner minimizes the loss ``1 − reward`` (the same pseudo-regret).
    """

    kind: str
    convexity: str | None = None
    dim: int | None = None
    arms: int | None = None
    mu: float | None = None
    minimizer: tuple[float, ...] | None = None
    perturbation: float | None = None
    noise: float | None = None
    link: str | None = None
    instance_seed: int | None = None
    path: str | None = None
    means: tuple[float, ...] | None = None

    @property
    def shared(self) -> bool:
        return True

    def draw(self, rng: np.random.Generator) -> Any:  # pragma: no cover - always shared
        return self.build_shared()

    def build_shared(self) -> Any:
        return _ldp_instance(self)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for key in LDPFamily.instance_keys[self.kind][1:]:
            value = getattr(self, "dim" if key == "rank" else key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out

    def describe(self) -> str:
        if self.kind == "ldp-quadratic":
            return f"{self.convexity} quadratic on the unit ball, d={self.dim}"
        if self.kind == "ldp-linear":
            return f"synthetic linear bandit, d={self.dim}, K={self.arms}"
        if self.kind == "ldp-glm":
            return f"{self.link} bandit, d={self.dim}, K={self.arms}"
        if self.kind == "ldp-movielens":
            if self.path is None:
                return f"MovieLens stand-in (synthetic, not MovieLens-100K), K={self.arms}, d={self.dim}"
            return f"MovieLens ({Path(self.path).name}), K={self.arms}, d={self.dim}"
        assert self.means is not None
        return f"Bernoulli arms, K={len(self.means)}"


@lru_cache(maxsize=8)
def _ldp_instance(spec: LDPInstanceSpec) -> Any:
    """The instance of a spec, built once per process (MovieLens: the file read and the SVD taken)."""
    assert spec.dim is not None or spec.kind == "ldp-bernoulli"
    minimizer = None if spec.minimizer is None else np.array(spec.minimizer, dtype=np.float64)
    if spec.kind == "ldp-quadratic":
        assert spec.dim is not None
        assert spec.perturbation is not None
        if spec.convexity == "convex":
            return ldp_instances.convex_quadratic(spec.dim, minimizer, perturbation=spec.perturbation)
        assert spec.mu is not None
        return ldp_instances.strongly_convex_quadratic(
            spec.dim, minimizer, mu=spec.mu, perturbation=spec.perturbation
        )
    if spec.kind == "ldp-linear":
        assert spec.dim is not None
        assert spec.arms is not None
        assert spec.noise is not None
        gen = np.random.default_rng(spec.instance_seed)
        return ldp_instances.synthetic_linear(spec.dim, spec.arms, noise=spec.noise, rng=gen)
    if spec.kind == "ldp-glm":
        assert spec.link is not None
        assert spec.dim is not None
        assert spec.arms is not None
        gen = np.random.default_rng(spec.instance_seed)
        return ldp_instances.glm_bandit(spec.link, spec.dim, spec.arms, rng=gen)
    if spec.kind == "ldp-movielens":
        assert spec.arms is not None
        assert spec.dim is not None
        return ldp_instances.movielens_instance(spec.path, arms=spec.arms, rank=spec.dim)
    assert spec.means is not None
    return ldp_instances.BernoulliArms(1.0 - np.array(spec.means, dtype=np.float64))


def _ldp(panel: Panel) -> LDPInstanceSpec:
    assert isinstance(panel.instance, LDPInstanceSpec), panel.instance
    return panel.instance


def _ldp_statement(learner: ldp.Learner) -> str:
    """The claim of a private LDP learner, as the paper states it (spec §2.3, §3.4, §4.2, §4.4)."""
    theorem = {
        "one-point": "Theorem 2, Algorithm 1",
        "two-point": "Theorem 5, Algorithm 2",
        "ldp-linucb": "Theorem 7, Algorithm 5",
        "ldp-glm": "Theorem 9, Algorithm 3",
    }[learner.name]
    if learner.delta is None:
        how = "Laplace mechanism" if learner.mechanism == "laplace" else "randomized response"
        return f"{learner.epsilon:g}-LDP ({theorem}; {how}), each user reports once"
    how = f"mode={learner.mode!r}, calibration={learner.calibration!r}"
    if learner.mode == "code":
        how = "mode='code' (uncertified: the official code's σ, a factor √2 short, spec P6)"
    return f"({learner.epsilon:g}, {learner.delta:g})-LDP ({theorem}; {how}), each user reports once"


class LDPFamily(Family):
    """The locally private bandit learners of Zheng et al. (NeurIPS 2020), :mod:`learners.ldp`.

    **Algorithms**: ``one-point`` (Algorithm 1, the black-box reduction; ``params.base`` one of
    :data:`LDP_BASES` — ``fkm`` (default), ``adx``, ``saha-tewari``, ``hazan-levy``, ``ucb`` —
    with the base's keywords as ``params.base_mu``, ``base_smoothness``, ``base_arms``,
    ``base_rho``, ``base_eta``, ``base_rho0``), ``two-point`` (Algorithm 2), ``ldp-linucb``
    (Algorithm 5), ``ldp-glm`` (Algorithm 3), and the non-private baselines
    ``one-point-nonprivate`` and ``two-point-nonprivate`` (the same learners without noise).
    ``params.mechanism = "laplace"`` runs Algorithms 1 and 2 with the Laplace mechanism, and
    ``"randomized-response"`` Algorithm 1 with randomized response (both pure ε-LDP, no δ);
    otherwise a private learner's ``delta`` defaults to the config's.

    **Instances** (:class:`LDPInstanceSpec`, every one shared by the repetitions): ``ldp-quadratic``
    (Algorithms 1 with a continuous base, 2), ``ldp-bernoulli`` (Algorithm 1 with ``ucb``),
    ``ldp-linear`` and ``ldp-movielens`` (``ldp-linucb``), ``ldp-glm`` (``ldp-glm``).

    **Streams** (:meth:`run`). :func:`learners.ldp.run` takes one generator for the privacy noise
    (``rng``, from which it spawns the learners' own stream) and one for the environment
    (``env_rng``: contexts, users, losses, rewards), vectorized over the repetitions. The unit's
    ``rng`` (its noise stream, per panel, algorithm, ε and chunk) is passed as ``rng``; the
    environment stream is ``default_rng(SeedSequence([w_1, ..., w_R]))``, ``w_r`` one 63-bit draw
    from repetition ``r``'s tape. Every algorithm and ε of a panel therefore sees the same users
    and losses in the same chunk (common random numbers, as in the other families), and the same
    config gives the same numbers bit for bit; unlike the MAB family, a repetition's environment
    depends on the whole chunk it runs in (``chunk`` is part of the config and its fingerprint).

    **Privacy**: one ledger (key 1, one user's release); ``claimed`` is the learner's ``(ε, δ)``
    (``holds``: whether the exact ε of the ledger meets it — ``mode = "code"`` does not), ``exact``
    the ledger's exact ε by the accountant (Laplace: the pure ε).
    """

    name = "ldp"
    algorithms: ClassVar[Mapping[str, bool]] = {n: p for n, (_, p) in _LDP_ALGORITHMS.items()}
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "ldp-quadratic": ("kind", "convexity", "dim", "mu", "minimizer", "perturbation"),
        "ldp-linear": ("kind", "dim", "arms", "noise", "instance_seed"),
        "ldp-glm": ("kind", "link", "dim", "arms", "instance_seed"),
        "ldp-movielens": ("kind", "path", "arms", "rank"),
        "ldp-bernoulli": ("kind", "means"),
    }
    params = (
        *(f for f in ldp.Learner.__dataclass_fields__ if f not in ("name", "epsilon")),
        *(f"base_{k}" for k in _BASE_KEYS),
    )
    unit_arrays = ("indefinite",)
    regret_label = ("pseudo-regret", "Reg(t)")
    learner_delta = True
    table_note = (
        "Claimed: the learner's (ε, δ)-LDP (ε-LDP with the Laplace mechanism or randomized response; "
        "holds: whether the run certifies it — mode 'code', the official code's σ, does not). Exact: "
        "the certified guarantee of the saved ledger (ledgers/: one user's release; each user reports "
        "once, so the run is as private as one release), by the accountant route named. Every ε is a "
        "certified upper bound, rounded up. Regret: the final time-average pseudo-regret Reg(T)/T, "
        "mean ± 95% CI half-width."
    )

    def params_of(self, name: str, params: dict[str, Any], delta: float) -> dict[str, Any]:
        """A private learner's ``delta`` defaults to the config's, unless its mechanism is pure
        (``params.mechanism = "laplace"`` or ``"randomized-response"``: no δ)."""
        if params.get("mechanism") in ldp.PURE_MECHANISMS:
            return params
        return super().params_of(name, params, delta)

    def instance(self, where: str, table: Mapping[str, Any], base: Path) -> LDPInstanceSpec:
        from learners.config import _integer, _list, _real, _string

        kind = table["kind"]
        values = {**_LDP_DEFAULTS[kind], **{k: v for k, v in table.items() if k != "kind"}}
        fields: dict[str, Any] = {}
        if "dim" in values:
            fields["dim"] = _integer(
                f"{where}.dim", values["dim"], 1, 10_000, "d x d matrices per repetition"
            )
        if "arms" in values:
            fields["arms"] = _integer(f"{where}.arms", values["arms"], 1, 100_000)
        if "instance_seed" in values:
            fields["instance_seed"] = _integer(
                f"{where}.instance_seed",
                values["instance_seed"],
                0,
                2**128 - 1,
                "numpy seeds are non-negative",
            )
        if kind == "ldp-quadratic":
            convexity = _string(f"{where}.convexity", values["convexity"])
            if convexity not in CONVEXITIES:
                raise ConfigError(f"{where}.convexity", convexity, "one of " + ", ".join(CONVEXITIES))
            fields["convexity"] = convexity
            if convexity == "strongly-convex":
                fields["mu"] = _real(f"{where}.mu", values["mu"])
            elif "mu" in table:
                raise ConfigError(
                    f"{where}.mu", table["mu"], 'no mu: convexity = "convex" (set "strongly-convex")'
                )
            fields["perturbation"] = _real(f"{where}.perturbation", values["perturbation"], low_open=False)
            if "minimizer" in values:
                items = _list(f"{where}.minimizer", values["minimizer"])
                fields["minimizer"] = tuple(
                    _real(f"{where}.minimizer[{j}]", x, low=-1.0, high=1.0) for j, x in enumerate(items)
                )
                if len(items) != fields["dim"]:
                    raise ConfigError(
                        f"{where}.minimizer", values["minimizer"], f"a point of dimension d = {fields['dim']}"
                    )
        elif kind == "ldp-linear":
            fields["noise"] = _real(
                f"{where}.noise", values["noise"], high=1.0, low_open=False, high_open=False
            )
        elif kind == "ldp-glm":
            link = values["link"]
            if link not in ("logistic", "poisson"):
                raise ConfigError(f"{where}.link", link, 'one of "logistic", "poisson"')
            fields["link"] = link
        elif kind == "ldp-movielens":
            fields["dim"] = _integer(f"{where}.rank", values["rank"], 1, 10_000, "the SVD's rank is d")
            if "path" in table:
                given = Path(_string(f"{where}.path", table["path"])).expanduser()
                resolved = given if given.is_absolute() else base / given
                if not resolved.is_file():
                    raise ConfigError(
                        f"{where}.path",
                        table["path"],
                        f"an existing MovieLens-100K 'ua.base'-format file (looked for {resolved})",
                    )
                fields["path"] = str(resolved.resolve())
        else:  # ldp-bernoulli
            if "means" not in table:
                raise ConfigError(f"{where}.means", None, "the arms' reward means (K >= 2 numbers in [0, 1])")
            items = _list(f"{where}.means", table["means"])
            fields["means"] = tuple(_bernoulli_mean(f"{where}.means[{j}]", m) for j, m in enumerate(items))
            if len(items) < 2:
                raise ConfigError(f"{where}.means", table["means"], "K >= 2 arm means")
        spec = LDPInstanceSpec(kind, **fields)
        try:
            spec.build_shared()  # a malformed ratings file, a minimizer outside the ball, ...
        except (ParameterError, ParameterTypeError) as err:
            name = {"d": "dim", "theta": "dim", "curvature": "mu", "pool": "path"}.get(err.name, err.name)
            if kind == "ldp-movielens" and name not in ("arms", "rank"):
                name = "path" if "path" in table else "arms"
            if name not in self.instance_keys[kind]:
                name = "dim" if "dim" in self.instance_keys[kind] else "means"
            value = table.get(name, values.get(name))
            raise ConfigError(_error_field(where, name), value, err.valid) from None
        return spec

    def learner(self, name: str, epsilon: float | None, params: Mapping[str, Any]) -> ldp.Learner:
        algorithm, _ = _LDP_ALGORITHMS[name]
        given = dict(params)
        base_keys = {k: given.pop(f"base_{k}") for k in _BASE_KEYS if f"base_{k}" in given}
        base_name = given.pop("base", None)
        if base_name is not None or base_keys:
            if algorithm != "one-point":
                raise ParameterError(
                    "base" if base_name is not None else f"base_{next(iter(base_keys))}",
                    base_name if base_name is not None else next(iter(base_keys.values())),
                    "no base learner: only 'one-point' (Algorithm 1) takes one",
                )
            chosen = "fkm" if base_name is None else base_name
            if not isinstance(chosen, str) or chosen not in LDP_BASES:
                raise ParameterError("base", base_name, "one of " + ", ".join(LDP_BASES))
            cls = LDP_BASES[chosen]
            taken = set(cls.__dataclass_fields__)
            for key, value in base_keys.items():
                if key not in taken:
                    raise ParameterError(
                        f"base_{key}",
                        value,
                        f"no such setting of '{chosen}': "
                        + ", ".join(f"base_{k}" for k in cls.__dataclass_fields__),
                    )
            required = [
                k for k, f in cls.__dataclass_fields__.items() if f.default is MISSING and k not in base_keys
            ]
            if required:
                raise ParameterError(f"base_{required[0]}", None, f"a value: the '{chosen}' base needs it")
            given["base"] = cls(**base_keys)
        return ldp.make_learner(algorithm, epsilon if self.algorithms[name] else None, **given)

    def default_label(self, learner: Any) -> str:
        """The algorithm's name and mode, e.g. ``Alg1[fkm] (paper)`` (a label serves every ε)."""
        label = str(learner.label).split("(")[0]
        if not learner.private:
            return f"{label} (non-private)"
        noise = {"laplace": "Laplace", "randomized-response": "RR"}.get(learner.mechanism, learner.mode)
        return f"{label} ({noise})"

    def check_panel(
        self, instance: Any, *, where: str, horizon: int, horizon_where: str, repetitions: int, chunk: int
    ) -> None:
        if horizon > ldp.MAX_HORIZON:
            raise ConfigError(
                horizon_where, horizon, f"a horizon T <= {ldp.MAX_HORIZON:.0e} (learners.ldp's limit)"
            )

    def check(self, learner: Any, panel: Panel, algorithm: int, epsilon_where: str) -> None:
        """The instance kind must be one the algorithm runs on (its base, for Algorithm 1; the UCB
        base's ``base_arms`` must be the instance's K), and its noise computed now: a setting it
        refuses is a config error before anything runs."""
        spec = _ldp(panel)
        where = f"algorithms[{algorithm}]"
        key = learner.name
        if key == "one-point" and isinstance(learner.base, ldp.UCB):
            key = "one-point/ucb"
        kinds = _LDP_KINDS[key]
        if spec.kind not in kinds:
            what = f"'{learner.name}'" + (
                f" with base '{learner.base.name}'" if learner.name == "one-point" else ""
            )
            raise ConfigError(
                f"{panel.instance_where}.kind",
                spec.kind,
                f"one of {', '.join(kinds)} (the instances {what} of {where} runs on)",
            )
        if (
            isinstance(learner.base, ldp.UCB)
            and spec.means is not None
            and learner.base.arms != len(spec.means)
        ):
            raise ConfigError(
                f"{where}.params.base_arms", learner.base.arms, f"the instance's K = {len(spec.means)}"
            )
        try:
            ldp.noise_of(learner, spec.build_shared(), panel.horizon)
        except (ParameterError, ParameterTypeError) as err:
            raise ConfigError(f"{where}.params.{err.name}", err.value, err.valid) from None

    def run(
        self,
        learner: Any,
        instances: Any,
        horizon: int,
        *,
        tapes: Sequence[np.random.Generator],
        rng: np.random.Generator,
        checkpoints: int,
        delta: float,
    ) -> UnitRun:
        # the environment of the chunk: one draw from each repetition's tape (class docstring)
        words = [int(tape.integers(0, 2**63)) for tape in tapes]
        env = np.random.default_rng(np.random.SeedSequence(words))
        result = ldp.run(
            learner,
            instances,
            horizon,
            rng=rng,
            repetitions=len(tapes),
            env_rng=env,
            checkpoints=checkpoints,
            delta=learner.delta if learner.delta is not None else delta,
        )
        noise = result.noise
        ledgers = result.ledgers
        return self.unit_run(
            learner,
            result,
            base=learner.base.name if learner.base is not None else None,
            noise={
                "kind": noise.kind,
                "calibration": noise.calibration,
                "sigma": noise.sigma,
                "multiplier": noise.multiplier,
                "messages": [asdict(m) for m in noise.messages],
            },
            releases={str(n): horizon * len(tapes) for n in ledgers},
            mode=result.mode,
            theta_hat_norm_max=float(result.theta_hat_norm.max()),
            instance=getattr(instances, "name", type(instances).__name__),
        )

    def result(
        self,
        learner: Any,
        panel: Panel,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        *,
        delta: float,
        route: str,
        exact: str,
        files: Sequence[str],
    ) -> dict[str, Any]:
        d = learner.delta if learner.delta is not None else delta
        noise = ldp.noise_of(learner, _ldp(panel).build_shared(), panel.horizon)
        answered = ldp.privacy_of(learner, noise, dict(ledgers), d, route)
        users = {"users": int(sum(releases.values()))}
        if not learner.private:
            report = privacy.report(answered, None, None, files, extra=users)
        else:
            pure = noise.kind in ldp.PURE_MECHANISMS
            report = privacy.report(
                answered,
                privacy.Claimed(
                    learner.epsilon,
                    learner.delta if learner.delta is not None else 0.0,
                    _ldp_statement(learner),
                    answered.meets_claim,
                ),
                None if exact == "off" else privacy.exact(ledgers, d, exact, pure=pure, what="users"),
                files,
                certified=answered.certified,
                extra=users,
                exact_extra={"certified": answered.certified},
            )
        dim = _ldp_dim(_ldp(panel))
        reals = {"one-point": 1, "two-point": 1, "ldp-linucb": dim * (dim + 1) // 2 + dim}
        per_user = reals.get(learner.name, dim * (dim + 1) // 2 + 2 * dim)
        return {
            "privacy": report,
            "communication": {"messages_per_user": 1, "reals_per_user": per_user},
            "indefinite_mean": float(arrays["indefinite"].mean()),
            "theta_hat_norm_max": max(float(m["theta_hat_norm_max"]) for m in metas),
            "mode": metas[0]["mode"],
            "base": metas[0]["base"],
            "noise": metas[0]["noise"],
            "learner": metas[0]["learner"],
        }


def _ldp_dim(spec: LDPInstanceSpec) -> int:
    """``d`` of an LDP instance (a Bernoulli instance's: 1, one loss per user)."""
    return spec.dim if spec.dim is not None else 1


# ---------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------

#: The families, by name; the default (``family`` absent, and no algorithm says otherwise) is "mab".
FAMILIES: dict[str, Family] = {f.name: f for f in (MABFamily(), LinearFamily(), PhasedFamily(), LDPFamily())}
DEFAULT_FAMILY = "mab"

#: Every instance kind, of every family.
INSTANCE_KINDS = tuple(kind for f in FAMILIES.values() for kind in f.instance_keys)


def _as_ldp_bernoulli(where: str, table: Mapping[str, Any]) -> dict[str, Any]:
    if "means" not in table:
        raise ConfigError(
            f"{where}.means",
            None,
            "fixed reward means (K >= 2 numbers in [0, 1]): the ldp family's Bernoulli arms are shared "
            "by the repetitions, so its algorithms cannot run on means drawn per repetition",
        )
    return {"kind": "ldp-bernoulli", "means": table["means"]}


def _as_mab_bernoulli(where: str, table: Mapping[str, Any]) -> dict[str, Any]:
    return {"kind": "bernoulli", "means": table.get("means")} if "means" in table else {"kind": "bernoulli"}


#: The instance kinds a family runs although another family owns them, by the same arms: ``(family,
#: kind) -> the table in the family's own kind`` (a :class:`ConfigError` naming the field if the
#: table does not translate). A config whose algorithms span families (issue 18 §3: LDP-UCB of the
#: ldp family beside the distributed MAB paper's variants) has each panel's instance built by every
#: family it involves: Bernoulli arms with fixed reward means are both the MAB family's
#: ``bernoulli`` and the ldp family's ``ldp-bernoulli`` (reward means in both; the ldp learner
#: minimizes the loss ``1 − reward``: the same pseudo-regret).
ADOPTED_KINDS: dict[tuple[str, str], Callable[[str, Mapping[str, Any]], dict[str, Any]]] = {
    ("ldp", "bernoulli"): _as_ldp_bernoulli,
    ("mab", "ldp-bernoulli"): _as_mab_bernoulli,
}


def instance_for(fam: Family, where: str, table: Mapping[str, Any], base: Path) -> Any:
    """The validated ``[instance]`` table at ``where`` as an instance of ``fam``: of one of its own
    kinds, or of a kind it adopts (:data:`ADOPTED_KINDS`); a :class:`ConfigError` otherwise."""
    kind = table.get("kind")
    if isinstance(kind, str) and kind in fam.instance_keys:
        return fam.instance(where, table, base)
    adopt = ADOPTED_KINDS.get((fam.name, kind)) if isinstance(kind, str) else None
    if adopt is None:
        own = ", ".join(fam.instance_keys)
        also = ", ".join(k for f, k in ADOPTED_KINDS if f == fam.name)
        raise ConfigError(
            f"{where}.kind",
            kind,
            f"an instance kind the '{fam.name}' family runs: one of {own}"
            + (f" (or {also})" if also else ""),
        )
    return fam.instance(where, adopt(where, table), base)


def family(name: str) -> Family:
    """The family called ``name`` (a :class:`ParameterError` naming it otherwise)."""
    found = FAMILIES.get(name) if isinstance(name, str) else None
    if found is None:
        raise ParameterError("family", name, "one of " + ", ".join(FAMILIES))
    return found


def family_of_algorithm(name: object) -> Family | None:
    """The family an algorithm name belongs to (``None``: no family has it)."""
    return next((f for f in FAMILIES.values() if isinstance(name, str) and name in f.algorithms), None)


__all__ = [
    "ADOPTED_KINDS",
    "DEFAULT_FAMILY",
    "FAMILIES",
    "INSTANCE_KINDS",
    "MAX_ARMS",
    "Family",
    "InstanceSpec",
    "LDPFamily",
    "LDPInstanceSpec",
    "LinearFamily",
    "LinearInstanceSpec",
    "LinearSpec",
    "MABFamily",
    "MSLRLinearSpec",
    "PhasedFamily",
    "PhasedInstanceSpec",
    "UnitRun",
    "family",
    "family_of_algorithm",
    "instance_for",
]
