"""What a learner family plugs into the experiment runner: the base class :class:`Family`.

One runner, one TOML format and one results layout serve every learner family; a family brings
the few things that differ, as a subclass of :class:`Family`:

* its **algorithms** (name -> whether it takes an ε: a private algorithm runs once per ε of a
  panel, the others once per panel) and the keywords of its ``make_learner`` (``params``,
  documented by :attr:`Family.params_section`);
* its **instance kinds** (``[instance] kind``), each a :class:`~learners.schema.Section` of keys
  with their types, ranges and defaults (:attr:`Family.instance_sections`), validated by
  :meth:`Family.instance` into a frozen spec (:meth:`Family.instance_spec`) that draws an instance
  for a repetition or builds the one all of them share;
* how a **learner** is built from ``(name, ε, params)`` (:meth:`Family.learner`: its errors name
  the parameter, which :func:`learners.config.load_config` turns into the config path, e.g.
  ``algorithms[1].params.batch``) and what is refused before anything runs (:meth:`Family.check`);
* how a **unit runs** (:meth:`Family.run`: the family's engine on a chunk of repetitions), giving
  the regret curves, the per-repetition arrays it keeps (:attr:`Family.unit_arrays`) and a JSON
  ``meta`` holding its **ledgers** (``{key: Accountant.to_dict()}``, written while it ran) and its
  communication;
* the **summary** of a (panel, algorithm, ε) from its units (:meth:`Family.result`): the
  **privacy report** (:meth:`Family.privacy`: ``claimed`` ``{epsilon, delta, statement, holds}``
  and ``exact`` ``{epsilon, delta, route, ledgers, ...}`` in every family, which the plots'
  legends and ``summary.md`` read), the communication, and how the regret is named in the plots
  (:attr:`Family.regret_label`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.accountant import Accountant
from learners import privacy
from learners.budget import Budget, Cost, memory_error
from learners.errors import ConfigError, ParameterError, ParameterTypeError
from learners.schema import REQUIRED, Field, Section

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class PanelView(Protocol):
    """What a family reads of a panel (:class:`learners.config.Panel`)."""

    @property
    def instance(self) -> Any: ...
    @property
    def horizon(self) -> int: ...
    @property
    def epsilons(self) -> tuple[float, ...]: ...
    @property
    def instance_where(self) -> str: ...
    @property
    def horizon_where(self) -> str: ...


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


@dataclass(frozen=True)
class Answer:
    """A family's account of the privacy of a (panel, algorithm, ε), for :meth:`Family.privacy`.

    Attributes
    ----------
    account : dataclass
        The family's ``privacy_of`` answer (its fields come first in the report; a private
        learner's has ``certified`` and ``meets_claim``).
    extra : dict
        The report's entries after ``account``'s (e.g. the ledger keys answered).
    exact : dict
        The keywords of :func:`learners.privacy.exact` (beyond the ledgers, δ and mode).
    exact_extra : dict
        The family's entries of the ``exact`` block.
    statement : str
        The claim as the paper states it (a private learner's).
    """

    account: Any
    extra: dict[str, Any]
    exact: dict[str, Any] = field(default_factory=dict)
    exact_extra: dict[str, Any] = field(default_factory=dict)
    statement: str = ""


#: Bernoulli arms' fixed reward means: the ``means`` of the mab family's ``bernoulli`` kind and of
#: the ldp family's ``ldp-bernoulli`` (one table serves both, :data:`learners.families.ADOPTED_KINDS`).
MEANS = Field(
    "means",
    "numbers",
    default=None,
    low=0.0,
    high=1.0,
    refusal="a mean in [0, 1]",
    min_items=2,
    few="K >= 2 arm means",
    default_doc="drawn",
)


def keys_of(sections: Mapping[str, Section]) -> dict[str, tuple[str, ...]]:
    """Instance kind -> its keys in ``[instance]``, ``kind`` first."""
    return {kind: ("kind", *section.names()) for kind, section in sections.items()}


def algorithms_of(engine: ModuleType) -> dict[str, bool]:
    """Algorithm name -> whether it is private, from a learners module's ``ALGORITHMS``."""
    return {n: a.private for n, a in engine.ALGORITHMS.items()}


def keywords_of(learner: Any) -> tuple[str, ...]:
    """The keywords of a ``make_learner`` beside the name and ε: its ``Learner``'s other fields."""
    return tuple(f.name for f in fields(learner) if f.name not in ("name", "epsilon"))


class Family(ABC):
    """A learner family (module docstring). Stateless: one instance of each in
    :data:`learners.families.FAMILIES`."""

    #: The family's name (the config's ``family``).
    name: ClassVar[str]
    #: The learners module whose ``make_learner`` builds the family's learners.
    engine: ClassVar[ModuleType]
    #: Algorithm name -> whether it takes an ε (runs at every ε of a panel).
    algorithms: ClassVar[Mapping[str, bool]]
    #: Instance kind -> its keys (besides ``kind``) with their types, ranges and defaults.
    instance_sections: ClassVar[Mapping[str, Section]]
    #: Instance kind -> its keys in ``[instance]`` (``kind`` first): :func:`keys_of` the sections.
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]]
    #: The keywords of the family's ``make_learner`` (the keys of ``params``).
    params: ClassVar[tuple[str, ...]]
    #: The same keywords documented (type, default, valid, meaning; checked by ``make_learner``).
    params_section: ClassVar[Section]
    #: Old spellings of keys of ``params`` (``{old: new}``), accepted with a note.
    old_params: ClassVar[Mapping[str, str]] = {}
    #: The per-repetition arrays of a unit, beside the regret (a unit without one is recomputed).
    unit_arrays: ClassVar[tuple[str, ...]]
    #: How the plots and tables name the regret: ``(name, symbol)``, e.g. ("pseudo-regret", "Reg(t)").
    regret_label: ClassVar[tuple[str, str]]
    #: The first paragraph of ``summary.md`` (what "claimed" and "exact" mean in this family).
    table_note: ClassVar[str]
    #: Whether a private learner takes its own ``delta`` (its claim), which then defaults to the
    #: config's top-level ``delta`` (:meth:`params_of`).
    learner_delta: ClassVar[bool] = False
    #: Whether the shared instance is built when the config is loaded (a file read, a model
    #: fitted), so that a setting it refuses is a config error naming the key.
    builds_on_load: ClassVar[bool] = True
    #: The family's name of its ledger keys in the privacy report's ``exact`` block.
    ledger_keys: ClassVar[str] = "batches"

    # -- the instance ------------------------------------------------------------------------

    def instance(self, where: str, table: Mapping[str, Any], base: Path, budget: Budget | None = None) -> Any:
        """The validated ``[instance]`` table at ``where`` (its ``kind`` is one of ours): a frozen,
        hashable spec with ``kind``, ``shared``, ``draw(rng)``, ``build_shared()``, ``to_dict()`` and
        ``describe()``. Relative paths are taken from ``base``; an instance whose arrays are beyond
        ``budget.memory`` (:meth:`instance_memory`) is refused before it is built."""
        kind = table["kind"]
        section = self.instance_sections[kind]
        spec = self.instance_spec(where, kind, section.parse(where, table, base), table)
        budget = Budget() if budget is None else budget
        size, key = self.instance_memory(spec)
        if size > budget.memory:
            value = table.get(key, section[key].default if key in section.names() else None)
            raise memory_error(f"{where}.{key}", value, Cost(size, 0.0, ""), budget, f"the {kind} instance")
        if self.builds_on_load:
            try:
                spec.build_shared()  # its own checks: a malformed file, a block beyond memory, ...
            except (ParameterError, ParameterTypeError) as err:
                key = self.instance_error_key(kind, err.name, table)
                default = section[key].default
                value = table.get(key, None if default is REQUIRED else default)
                raise ConfigError(f"{where}.{key}", value, err.valid) from None
        return spec

    @abstractmethod
    def instance_spec(self, where: str, kind: str, values: dict[str, Any], table: Mapping[str, Any]) -> Any:
        """The spec of the instance whose keys are ``values`` (validated, defaults filled in), after
        the rules between keys (a :class:`ConfigError` naming the key); ``table`` is as given."""

    def instance_error_key(self, kind: str, name: str, table: Mapping[str, Any]) -> str:
        """The key of ``kind`` that a parameter error of building the instance names (``name``:
        the builder's parameter): ``name`` if it is a key, else the kind's first key."""
        keys = self.instance_sections[kind].names()
        return name if name in keys else keys[0]

    # -- the learner -------------------------------------------------------------------------

    def spelled_now(self, where: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` with each old spelling (:attr:`old_params`) renamed, and a note naming it."""
        return v.renamed(where, dict(params), dict(self.old_params))

    def spelled_first(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` under each key's first spelling: what a config's fingerprint hashes, so that a
        results folder written before a rename still resumes and keeps its fingerprint."""
        first = {new: old for old, new in self.old_params.items()}
        return {first.get(key, key): value for key, value in params.items()}

    def params_of(self, name: str, params: dict[str, Any], delta: float) -> dict[str, Any]:
        """The params of ``[[algorithms]]`` as resolved (defaults the config supplies filled in):
        with :attr:`learner_delta`, a private algorithm's ``delta`` defaults to the config's."""
        if self.learner_delta and self.algorithms.get(name) and "delta" not in params:
            return {**params, "delta": delta}
        return params

    def learner(self, name: str, epsilon: float | None, params: Mapping[str, Any]) -> Any:
        """The learner (raises :class:`ParameterError` naming the parameter, or ``TypeError``)."""
        return self.engine.make_learner(name, epsilon, **params)

    def default_label(self, learner: Any) -> str:
        """An algorithm's label where the config gives none (the same at every ε)."""
        return str(learner.label)

    def check_panel(  # noqa: B027 - an optional hook: nothing to refuse unless a family says so
        self, instance: Any, *, where: str, horizon: int, horizon_where: str, repetitions: int, chunk: int
    ) -> None:
        """Refuse a panel whose instance, horizon and repetitions cannot run together."""

    def check(  # noqa: B027 - an optional hook, as check_panel
        self, learner: Any, panel: PanelView, algorithm: int, epsilon_where: str
    ) -> None:
        """Refuse, before anything runs, a learner that cannot run on ``panel`` (a config error)."""

    @abstractmethod
    def cost(self, learner: Any, panel: PanelView, repetitions: int, checkpoints: int) -> Cost:
        """The estimated peak memory and work of a unit of ``repetitions`` repetitions of
        ``learner`` on ``panel`` (:mod:`learners.budget`), from the shapes the family's engine
        allocates: computed before the instance is built (a real-data instance is built at load)."""

    def instance_memory(self, spec: Any) -> tuple[int, str]:
        """The bytes of the arrays the shared instance ``spec`` builds (checked against the budget
        before it is built, :meth:`instance`) and the key of ``[instance]`` that sets them (0 where
        the instance is small, or built per repetition and counted by :meth:`cost`)."""
        return 0, "kind"

    # -- the run and its ledgers ---------------------------------------------------------------

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
        result = self.simulate(
            learner, instances, horizon, tapes=tapes, rng=rng, checkpoints=checkpoints, delta=delta
        )
        meta = self.unit_meta(learner, result, instances=instances, horizon=horizon, repetitions=len(tapes))
        return self.unit_run(learner, result, **meta)

    @abstractmethod
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
    ) -> Any:
        """The family's engine on one unit: a result with ``rounds``, ``pseudo_regret``,
        ``realized_regret``, ``horizon``, ``ledgers`` and the :attr:`unit_arrays`."""

    def unit_meta(
        self, learner: Any, result: Any, *, instances: Any, horizon: int, repetitions: int
    ) -> dict[str, Any]:
        """The family's entries of a unit's meta (its communication, noise, ...)."""
        return {}

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

    # -- the summary and its privacy report ---------------------------------------------------

    def result(
        self,
        learner: Any,
        panel: PanelView,
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
        """The family's entries of a ``summary.json`` result from the units of one (panel,
        algorithm, ε): the privacy report (:meth:`privacy`), the family's :meth:`summary`, the
        learner. ``arrays`` are concatenated over chunks, ``metas`` the units' metas, ``ledgers``
        the merged ledgers (saved as ``files``) and ``releases`` the releases of each ledger key;
        ``route`` answers the headline ε, ``exact`` (an exact mode of :mod:`learners.privacy`)
        the ``exact`` block."""
        report = self.privacy(
            learner, panel, ledgers, releases, delta=delta, route=route, exact=exact, files=files
        )
        return {
            "privacy": report,
            **self.summary(learner, panel, arrays, metas),
            "learner": metas[0]["learner"],
        }

    @abstractmethod
    def summary(
        self,
        learner: Any,
        panel: PanelView,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        """The family's own entries of a result: its communication, noise, ..."""

    def privacy(
        self,
        learner: Any,
        panel: PanelView,
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        *,
        delta: float,
        route: str,
        exact: str,
        files: Sequence[str],
    ) -> dict[str, Any]:
        """The privacy report (:func:`learners.privacy.report`) of the merged ``ledgers`` (saved as
        ``files``): the family's :meth:`answer` by ``route``; ``claimed``, the learner's target
        ``(ε, δ)`` and whether the run certifies it; ``exact``, the ledgers by the ``exact`` mode
        (``inf`` where the ledgers are not a guarantee of the run). The δ is the learner's (its
        claim) for a private learner, else the config's ``delta``."""
        d = learner.delta if learner.delta is not None else delta
        answer = self.answer(learner, panel, ledgers, releases, d, route)
        if not learner.private:
            return privacy.report(answer.account, None, None, files, extra=answer.extra)
        claim_delta = learner.delta if learner.delta is not None else 0.0  # a pure ε-DP claim
        account = answer.account
        return privacy.report(
            account,
            privacy.Claimed(learner.epsilon, claim_delta, answer.statement, account.meets_claim),
            None if exact == "off" else privacy.exact(ledgers, d, exact, **answer.exact),
            files,
            certified=account.certified,
            batches=self.ledger_keys,
            extra=answer.extra,
            exact_extra=answer.exact_extra,
        )

    def answer(
        self,
        learner: Any,
        panel: PanelView,
        ledgers: Mapping[int, Accountant],
        releases: Mapping[int, int],
        delta: float,
        route: str,
    ) -> Answer:
        """The family's account of the ``ledgers`` at ``delta`` by ``route`` (:meth:`privacy`)."""
        raise NotImplementedError(f"the {self.name} family reports its privacy by its own privacy()")


__all__ = [
    "MEANS",
    "Answer",
    "Family",
    "PanelView",
    "UnitRun",
    "algorithms_of",
    "keys_of",
    "keywords_of",
]
