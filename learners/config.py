"""Configuration of regret experiments: the TOML format, validated in one place into frozen values.

See :mod:`learners.experiment` for the results folder, seeds and execution. Every key of the
format, with its type, default and valid range, is a field of the declarative schema
(:mod:`learners.schema`): the config's own tables in :mod:`learners.config_schema` (the top level,
``[[panels]]``, ``[[algorithms]]``, ``[quick]``), the instance kinds and ``params`` of each
learner family in :mod:`learners.families`. The README's "Experiment config reference" is
rendered from the same tables (:func:`learners.config_schema.reference`).

One format serves every learner family: the family of a config is the one its algorithms belong
to, or its ``family`` key; the family says which instance kinds, algorithm names and ``params`` it
takes, and checks them. The algorithms may span families when every panel's instance is one each
of them runs (:data:`learners.families.ADOPTED_KINDS`: Bernoulli arms with fixed means, for the
mab and ldp families).

A panel (``[[panels]]``, or one panel named after the config) overrides the top level's
``instance``, ``horizon``, ``epsilons``, ``x_axis`` and ``y_axis``; ``[quick]`` caps every panel's
horizon and replaces the repetitions and checkpoints when :func:`load_config` is asked for a quick
run. A synthetic MAB instance is drawn per repetition (as the distributed MAB paper's
``np.random.seed(run)``); Bernoulli or Beta arms with given ``means``, the real-data instance and
the other families' instances are shared by all repetitions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accounting.storage import digest
from learners import mab, privacy
from learners.budget import Budget, check_budget
from learners.config_files import read_config, shipped_configs
from learners.config_schema import (
    ALGORITHM,
    BANDS,
    DEFAULT_BANDS,
    DEFAULT_X_AXIS,
    DEFAULT_Y_AXES,
    PANEL,
    QUICK,
    TOP,
    X_AXES,
    Y_AXES,
)
from learners.errors import ConfigError, ParameterError, ParameterTypeError
from learners.families import (
    ADOPTED_KINDS,
    DEFAULT_FAMILY,
    FAMILIES,
    Family,
    InstanceSpec,
    LDPInstanceSpec,
    LinearInstanceSpec,
    MSLRLinearSpec,
    PhasedInstanceSpec,
    family_of_algorithm,
    instance_for,
)
from learners.schema import (
    MAX_CURVE_POINTS,
    MAX_EPSILON,
    MAX_HORIZON,
    MAX_REPETITIONS,
    MIN_EPSILON,
    WHY_CURVES,
    check_keys,
    string,
    table,
)
from learners.toml_writer import dump_toml

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The instance of a panel, of whichever family.
#: A panel's instance, of whichever family (each family's spec builds its own instances).
Instance = InstanceSpec | LinearInstanceSpec | MSLRLinearSpec | PhasedInstanceSpec | LDPInstanceSpec

# The keys of each table (the schema's; read by tests/learners/test_cli.py).
_TOP_KEYS = TOP.names()
_PANEL_KEYS = PANEL.names()
_ALGORITHM_KEYS = ALGORITHM.names()
_QUICK_KEYS = QUICK.names()
#: The TOML writer under its former name (tests write configs with it).
_dump_toml = dump_toml

# ---------------------------------------------------------------------------------------
# The configuration: frozen values, validated in one place
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlgorithmSpec:
    """One ``[[algorithms]]`` entry.

    Attributes
    ----------
    name : str
        A key of the family's algorithms (:data:`learners.mab.ALGORITHMS`,
        :data:`learners.linear.ALGORITHMS`).
    label : str
        The name in plots, CSV and summary (unique in the config).
    params : tuple of (str, object)
        Keywords of the family's ``make_learner``, sorted by name.
    private : bool
        Whether the algorithm takes an ε (``"se"``, ``"fedlinucb"`` do not: they run once per panel).
    family : str
        The learner family (:data:`learners.families.FAMILIES`).
    """

    name: str
    label: str
    params: tuple[tuple[str, Any], ...]
    private: bool
    family: str = DEFAULT_FAMILY

    def learner(self, epsilon: float | None) -> Any:
        """The learner at privacy level ``epsilon`` (``None`` for a non-private algorithm)."""
        return FAMILIES[self.family].learner(self.name, epsilon, dict(self.params))


@dataclass(frozen=True)
class Panel:
    """One panel: an instance, a horizon and the privacy levels its algorithms run at.

    Attributes
    ----------
    name : str
        Names the panel in files, CSV rows and plots.
    instance : InstanceSpec, LinearInstanceSpec or MSLRLinearSpec
        Of the config's family (:mod:`learners.families`).
    horizon : int
        ``T``.
    epsilons : tuple of float
    x_axis : str
        What the panel's figure plots against, one of :data:`X_AXES` (plots only).
    y_axes : tuple of str
        What its figures plot against t, each one of :data:`Y_AXES` (plots only).
    adopted : tuple of (str, instance)
        The panel's instance as built by each other family of a config whose algorithms span
        families (:func:`learners.families.instance_for`); see :meth:`for_family`.
    """

    name: str
    instance: Instance
    horizon: int
    epsilons: tuple[float, ...]
    x_axis: str = DEFAULT_X_AXIS
    y_axes: tuple[str, ...] = DEFAULT_Y_AXES
    adopted: tuple[tuple[str, Any], ...] = field(default=(), compare=False, repr=False)
    #: Where the panel's instance, epsilons and horizon were given in the config (for error messages).
    instance_where: str = field(default="instance", compare=False, repr=False)
    epsilons_where: str = field(default="epsilons", compare=False, repr=False)
    horizon_where: str = field(default="horizon", compare=False, repr=False)

    def for_family(self, name: str) -> Panel:
        """The panel with its instance as family ``name`` runs it (itself for the config's family)."""
        for fam, instance in self.adopted:
            if fam == name:
                return replace(self, instance=instance, adopted=())
        return self


@dataclass(frozen=True)
class Unit:
    """One unit of work: an algorithm at one ε on one chunk of a panel's repetitions.

    Attributes
    ----------
    panel, algorithm, epsilon, chunk : int
        Indices into :attr:`Config.panels`, :attr:`Config.algorithms`, the panel's epsilons (0 for
        a non-private algorithm) and the chunks of repetitions.
    first, count : int
        The repetitions ``first, ..., first + count - 1``.
    stem : str
        The file name of the unit in ``units/``, without ``.npz``: the four indices joined by
        ``__`` (indices, not names, so renaming a panel or the config keeps its results).
    """

    panel: int
    algorithm: int
    epsilon: int
    chunk: int
    first: int
    count: int
    stem: str


@dataclass(frozen=True)
class Config:
    """A validated experiment configuration (build it with :func:`load_config`).

    Attributes
    ----------
    name, description : str
    seed : int
    repetitions : int
    checkpoints : int
    chunk : int
    delta : float
    algorithms : tuple of AlgorithmSpec
    panels : tuple of Panel
    privacy_route : str
        The accountant route of the privacy report (not part of the fingerprint: units hold the
        ledgers, and the report answers them when the outputs are written).
    exact_privacy : str
        The exact mode of the report's ``exact`` block (:data:`learners.privacy.EXACT_MODES`:
        ``"auto"`` by default, ``"cheap"`` by default in a quick run, ``"off"``, or a route); not
        part of the fingerprint.
    family : str
        The config's learner family (:data:`learners.families.FAMILIES`): its first algorithm's,
        or the ``family`` key; the panels' instances are of this family (each algorithm of another
        family runs on :meth:`Panel.for_family`). Part of the fingerprint unless it is the default
        ``"mab"`` (so configs of older versions keep theirs).
    bands : str
        The band of the plots, one of :data:`BANDS` (not part of the fingerprint: plots only).
    quick : bool
        Whether the ``[quick]`` overrides were applied (not part of equality).
    """

    name: str
    description: str
    seed: int
    repetitions: int
    checkpoints: int
    chunk: int
    delta: float
    algorithms: tuple[AlgorithmSpec, ...]
    panels: tuple[Panel, ...]
    quick: bool = field(default=False, compare=False)
    privacy_route: str = "auto"
    bands: str = DEFAULT_BANDS
    family: str = DEFAULT_FAMILY
    exact_privacy: str = "auto"

    @property
    def learners(self) -> Family:
        """The config's learner family."""
        return FAMILIES[self.family]

    @property
    def families(self) -> tuple[str, ...]:
        """The families of the config's algorithms, the config's own first."""
        return tuple(dict.fromkeys([self.family, *(a.family for a in self.algorithms)]))

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration as TOML-ready data (:func:`load_config` reads it back)."""
        family = {"family": self.family} if self.family != DEFAULT_FAMILY else {}
        return {
            "name": self.name,
            **family,
            "description": self.description,
            "seed": self.seed,
            "repetitions": self.repetitions,
            "checkpoints": self.checkpoints,
            "chunk": self.chunk,
            "delta": self.delta,
            "privacy_route": self.privacy_route,
            "exact_privacy": self.exact_privacy,
            "bands": self.bands,
            "algorithms": [
                {"name": a.name, "label": a.label, "params": dict(a.params)} for a in self.algorithms
            ],
            "panels": [
                {
                    "name": p.name,
                    "horizon": p.horizon,
                    "epsilons": list(p.epsilons),
                    **({"x_axis": p.x_axis} if p.x_axis != DEFAULT_X_AXIS else {}),
                    **({"y_axis": list(p.y_axes)} if p.y_axes != DEFAULT_Y_AXES else {}),
                    "instance": p.instance.to_dict(),
                }
                for p in self.panels
            ],
        }

    def to_toml(self) -> str:
        """The resolved configuration as a TOML document."""
        header = f"# dp-regret resolved configuration{' (--quick applied)' if self.quick else ''}\n"
        return header + dump_toml(self.to_dict())

    @property
    def fingerprint(self) -> str:
        """A hash of everything the numbers depend on (not the names, description, labels, the
        privacy route or the plots' bands and axes; a renamed parameter under its old name)."""
        data = self.to_dict()
        del data["name"], data["description"], data["privacy_route"], data["exact_privacy"], data["bands"]
        for algorithm, spec in zip(data["algorithms"], self.algorithms, strict=True):
            del algorithm["label"]
            algorithm["params"] = FAMILIES[spec.family].spelled_first(algorithm["params"])
        for panel in data["panels"]:
            del panel["name"]
            panel.pop("x_axis", None)
            panel.pop("y_axis", None)
        return digest(data)

    def epsilon_indices(self, panel: Panel, algorithm: AlgorithmSpec) -> range:
        """The ε indices an algorithm runs at in a panel (one run, index 0, if non-private)."""
        return range(len(panel.epsilons)) if algorithm.private else range(1)

    def units(self) -> list[Unit]:
        """Every unit of work, in the canonical order of the outputs."""
        out: list[Unit] = []
        for p, panel in enumerate(self.panels):
            for a, algorithm in enumerate(self.algorithms):
                for e in self.epsilon_indices(panel, algorithm):
                    for c, first in enumerate(range(0, self.repetitions, self.chunk)):
                        count = min(self.chunk, self.repetitions - first)
                        out.append(Unit(p, a, e, c, first, count, f"{p}__{a}__{e}__{c}"))
        return out


def _all_algorithms() -> str:
    return "; ".join(f"{', '.join(f.algorithms)} ({f.name} family)" for f in FAMILIES.values())


def _algorithm(i: int, value: object) -> tuple[str, str | None, dict[str, Any]]:
    """``algorithms[i]``: its name (of some family), label and params (their values are checked by
    the family's ``make_learner``, :func:`_learners`)."""
    where = f"algorithms[{i}]"
    given = table(where, value)
    check_keys(where, given, ALGORITHM.names())
    if "name" not in given:
        raise ConfigError(f"{where}.name", None, "one of " + _all_algorithms())
    name = given["name"]
    family = family_of_algorithm(name)
    if family is None:
        raise ConfigError(f"{where}.name", name, "one of " + _all_algorithms())
    label = string(f"{where}.label", given["label"]) if "label" in given else None
    if label is not None and not label.strip():
        raise ConfigError(f"{where}.label", label, "a non-empty label (or no `label` key: the learner's)")
    params = dict(table(f"{where}.params", given.get("params", {})))
    params = family.spelled_now(f"{where}.params", params)
    for reserved in ("name", "epsilon"):
        if reserved in params:
            raise ConfigError(
                f"{where}.params.{reserved}",
                params[reserved],
                "no such parameter here: the algorithm is `name`, its ε comes from `epsilons`",
            )
    return name, label, params


def _given_algorithms(data: Mapping[str, Any]) -> list[tuple[str, str | None, dict[str, Any]]]:
    """``[[algorithms]]``: at least one, each :func:`_algorithm`."""
    if "algorithms" not in data:
        raise ConfigError("algorithms", None, TOP["algorithms"].missing)
    raw_algorithms = TOP["algorithms"].parse("algorithms", data["algorithms"])
    if not raw_algorithms:
        raise ConfigError("algorithms", raw_algorithms, "at least one [[algorithms]] table")
    return [_algorithm(i, a) for i, a in enumerate(raw_algorithms)]


def _family(data: Mapping[str, Any], names: Sequence[str]) -> tuple[Family, list[Family]]:
    """The config's family (its ``family`` key, else the family of ``algorithms[0]``) and each
    algorithm's. Algorithms of several families must name the regret alike (one figure draws them
    together); the panels' instances are checked by :func:`_instance`."""
    if "family" in data:
        chosen = FAMILIES[TOP["family"].parse("family", data["family"])]
    else:
        found = family_of_algorithm(names[0])
        assert found is not None  # checked by _algorithm
        chosen = found
    each: list[Family] = []
    for i, name in enumerate(names):
        own = family_of_algorithm(name)
        assert own is not None  # checked by _algorithm
        if own.regret_label != chosen.regret_label:
            raise ConfigError(
                f"algorithms[{i}].name",
                name,
                f"an algorithm whose regret is the {chosen.regret_label[0]} {chosen.regret_label[1]}, as "
                f"the config's '{chosen.name}' family's ('{name}' is of the '{own.name}' family: "
                f"{own.regret_label[0]} {own.regret_label[1]}); one of " + ", ".join(chosen.algorithms),
            )
        each.append(own)
    return chosen, each


def _instance(
    where: str, value: object, base: Path, family: Family, involved: Sequence[Family], budget: Budget
) -> tuple[Instance, tuple[tuple[str, Any], ...]]:
    """``[instance]``: its ``kind`` one the config's family runs, its keys the kind's, checked by
    the family; and the same instance as each other family ``involved`` runs it (:func:`instance_for`)."""
    given = table(where, value)
    kind = given.get("kind")
    owner = next((f for f in FAMILIES.values() if isinstance(kind, str) and kind in f.instance_keys), None)
    adopts = ", ".join(k for f, k in ADOPTED_KINDS if f == family.name)
    valid = f"one of {', '.join(family.instance_keys)} (the instance kinds of the '{family.name}' family" + (
        f"; it also runs {adopts})" if adopts else ")"
    )
    if kind is None:
        raise ConfigError(f"{where}.kind", None, valid)
    if owner is None or (owner is not family and (family.name, kind) not in ADOPTED_KINDS):
        note = f"; '{kind}' is of the '{owner.name}' family" if owner is not None else ""
        raise ConfigError(f"{where}.kind", kind, valid + note)
    check_keys(where, given, owner.instance_keys[kind])
    instance: Instance = instance_for(family, where, given, base, budget)
    adopted = tuple(
        (f.name, instance_for(f, where, given, base, budget)) for f in involved if f is not family
    )
    return instance, adopted


def _learner_error(
    err: ParameterError | ParameterTypeError, algorithm: int, epsilon_where: str, delta_given: bool = True
) -> ConfigError:
    """A ``make_learner`` error, renamed to the config field it came from (a ``delta`` the config's
    top level supplied is named ``delta``)."""
    if err.name == "algorithm":
        return ConfigError(f"algorithms[{algorithm}].name", err.value, err.valid)
    if err.name == "epsilon":
        return ConfigError(epsilon_where, err.value, f"{err.valid} (for algorithms[{algorithm}])")
    if err.name == "delta" and not delta_given:
        return ConfigError("delta", err.value, f"{err.valid} (for algorithms[{algorithm}])")
    return ConfigError(f"algorithms[{algorithm}].params.{err.name}", err.value, err.valid)


def _check_horizon_axis(panels: Sequence[Panel], own: Sequence[bool], cap: int | None) -> None:
    """``x_axis = "horizon"`` draws a line through the panels that have it: at least two of them,
    at two horizons or more (after ``[quick]``'s cap), or a :class:`ConfigError` naming the key
    (``own[i]``: whether panel ``i`` set its ``x_axis`` itself)."""
    mine = [i for i, p in enumerate(panels) if p.x_axis == "horizon"]
    if not mine:
        return
    where = f"panels[{mine[0]}].x_axis" if own[mine[0]] else "x_axis"
    horizons = {panels[i].horizon for i in mine}
    if len(horizons) >= 2:
        return
    if cap is not None and len(mine) >= 2:
        raise ConfigError(
            "quick.horizon",
            cap,
            f'a cap leaving at least two horizons among the x_axis = "horizon" panels (all are {cap} '
            "under it: no slope can be fitted)",
        )
    raise ConfigError(
        where,
        "horizon",
        'at least two panels with x_axis = "horizon" at different horizons (Reg(T) against T fits a '
        f"slope through them; found {len(mine)} panel(s) at T = {sorted(horizons)})",
    )


# ---------------------------------------------------------------------------------------
# Reading a config: the top level, the panels, the algorithms
# ---------------------------------------------------------------------------------------


def _top(data: Mapping[str, Any], key: str) -> Any:
    """The top-level ``key``, validated by its field (its default where absent)."""
    return TOP[key].parse(key, data.get(key, TOP[key].default))


def y_axes_names(where: str, raw: object) -> tuple[str, ...]:
    """``raw`` as a ``y_axis`` value: one of :data:`Y_AXES` or a list of them without repeats, else
    a :class:`ConfigError` naming ``where``."""
    axes: tuple[str, ...] = TOP["y_axis"].parse(where, raw)
    return axes


def bands_name(where: str, value: object) -> str:
    """``value`` if it is one of :data:`BANDS`, else a :class:`ConfigError` naming ``where``."""
    name: str = TOP["bands"].parse(where, value)
    return name


def _route(data: Mapping[str, Any]) -> str:
    """``privacy_route``: a route of the accountant (its own check, :func:`learners.mab.route_name`)."""
    route = data.get("privacy_route", TOP["privacy_route"].default)
    try:
        mab.route_name(route)
    except (ParameterError, ParameterTypeError) as exc:
        raise ConfigError("privacy_route", route, exc.valid) from exc
    return str(route)


def _exact_mode(data: Mapping[str, Any], quick: bool, given: str | None) -> str:
    """``exact_privacy``: ``given`` (the CLIs' ``--exact-privacy``), else the config's, else
    ``"cheap"`` in a quick run (cheap routes only) and ``"auto"`` otherwise."""
    if given is None:
        given = data.get("exact_privacy", "cheap" if quick else TOP["exact_privacy"].default)
        where = "exact_privacy"
    else:
        where = "exact_privacy (--exact-privacy)"
    try:
        return privacy.exact_mode(given, where)
    except (ParameterError, ParameterTypeError) as exc:
        raise ConfigError(where, given, exc.valid) from exc


def _quick(data: Mapping[str, Any], quick: bool) -> dict[str, int]:
    """``[quick]`` validated: its keys that a quick run applies (``{}`` unless ``quick``)."""
    if "quick" not in data:
        if quick:
            raise ConfigError("quick", None, "a [quick] table in the config (the --quick overrides)")
        return {}
    given = table("quick", data["quick"])
    check_keys("quick", given, QUICK.names())
    if not quick:  # its values are read by a quick run only
        return {}
    return {key: QUICK[key].parse(f"quick.{key}", given[key]) for key in QUICK.names() if key in given}


@dataclass(frozen=True)
class _Frame:
    """What every panel of a config is read with: the config's table, its folder, its families and
    the settings that bound a panel."""

    data: Mapping[str, Any]
    base: Path
    family: Family
    involved: tuple[Family, ...]
    any_private: bool
    cap: int | None
    repetitions: int
    checkpoints: int
    chunk: int
    budget: Budget = field(default_factory=Budget)


def _setting(data: Mapping[str, Any], prefix: str, panel: Mapping[str, Any], key: str) -> tuple[str, Any]:
    """Where a panel's ``key`` is given (the panel, else the top level) and its value."""
    if key in panel:
        return prefix + key, panel[key]
    if key in data:
        return key, data[key]
    raise ConfigError(prefix + key, None, TOP[key].missing)


def _axes(frame: _Frame, prefix: str, panel: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """A panel's ``x_axis`` and ``y_axis`` (its own, else the top level's); ``epsilon`` needs a
    private algorithm, and a ``y_axis`` other than the default an ``x_axis`` of ``round``."""
    data = frame.data
    xwhere = prefix + "x_axis" if "x_axis" in panel else "x_axis"
    x_axis = PANEL["x_axis"].parse(xwhere, panel.get("x_axis", data.get("x_axis", DEFAULT_X_AXIS)))
    if x_axis == "epsilon" and not frame.any_private:
        raise ConfigError(
            xwhere, x_axis, '"round": no algorithm of the config is private, so none runs at an ε'
        )
    ywhere = prefix + "y_axis" if "y_axis" in panel else "y_axis"
    raw = panel.get("y_axis", data.get("y_axis", list(DEFAULT_Y_AXES)))
    axes = y_axes_names(ywhere, raw)
    if axes != DEFAULT_Y_AXES and x_axis != "round":
        raise ConfigError(
            ywhere,
            raw,
            f'"average" (the default): the panel\'s x_axis is "{x_axis}", whose figure is the final regret',
        )
    return x_axis, axes


def _panel(frame: _Frame, prefix: str, panel: Mapping[str, Any], default_name: str) -> Panel:
    """One panel: its settings (its own, else the top level's), checked by every family involved."""
    data = frame.data
    name = PANEL["name"].parse(f"{prefix}name", panel.get("name", default_name))
    iwhere, raw_instance = _setting(data, prefix, panel, "instance")
    instance, adopted = _instance(
        iwhere, raw_instance, frame.base, frame.family, frame.involved, frame.budget
    )
    hwhere, raw_horizon = _setting(data, prefix, panel, "horizon")
    horizon = TOP["horizon"].parse(hwhere, raw_horizon)
    if frame.cap is not None and frame.cap < horizon:
        horizon, hwhere = frame.cap, "quick.horizon"
    ewhere, raw_epsilons = (
        _setting(data, prefix, panel, "epsilons")
        if frame.any_private or "epsilons" in panel or "epsilons" in data
        else ("epsilons", [])
    )
    epsilons = TOP["epsilons"].parse(ewhere, raw_epsilons)
    if frame.any_private and not epsilons:
        raise ConfigError(ewhere, raw_epsilons, "at least one privacy level ε > 0")
    x_axis, y_axes = _axes(frame, prefix, panel)
    for f in frame.involved:
        f.check_panel(
            dict(adopted).get(f.name, instance),
            where=iwhere,
            horizon=horizon,
            horizon_where=hwhere,
            repetitions=frame.repetitions,
            chunk=frame.chunk,
        )
    points = frame.repetitions * min(frame.checkpoints, horizon)
    if points > MAX_CURVE_POINTS:
        raise ConfigError(
            "repetitions",
            frame.repetitions,
            f"at most {MAX_CURVE_POINTS:.0e} points of regret curves per algorithm and ε: repetitions x "
            f"checkpoints = {frame.repetitions} x {min(frame.checkpoints, horizon)} ({WHY_CURVES})",
        )
    return Panel(
        name,
        instance,
        horizon,
        epsilons,
        x_axis,
        y_axes,
        adopted,
        instance_where=iwhere,
        epsilons_where=ewhere,
        horizon_where=hwhere,
    )


def _panels(frame: _Frame) -> list[Panel]:
    """``[[panels]]`` (or one panel named after the config), with distinct names; the
    ``x_axis = "horizon"`` panels at two horizons or more."""
    data = frame.data
    if "panels" not in data:
        panels = [_panel(frame, "", {}, data["name"])]
    else:
        raw_panels = TOP["panels"].parse("panels", data["panels"])
        if not raw_panels:
            raise ConfigError("panels", raw_panels, "at least one [[panels]] table, or no `panels` key")
        panels = []
        for i, raw in enumerate(raw_panels):
            where = f"panels[{i}]"
            given = table(where, raw)
            check_keys(where, given, PANEL.names())
            if "name" not in given:
                raise ConfigError(f"{where}.name", None, PANEL["name"].missing)
            panels.append(_panel(frame, f"{where}.", given, ""))
    seen: set[str] = set()
    for i, p in enumerate(panels):
        if p.name in seen:
            raise ConfigError(f"panels[{i}].name", p.name, "a name no other panel has")
        seen.add(p.name)
    own_axis = [isinstance(t, Mapping) and "x_axis" in t for t in data.get("panels", [{}])]
    _check_horizon_axis(panels, own_axis, frame.cap)
    return panels


def _learners(
    parsed: Sequence[tuple[str, str | None, dict[str, Any]]],
    families: Sequence[Family],
    panels: Sequence[Panel],
    delta: float,
) -> tuple[AlgorithmSpec, ...]:
    """The algorithms, each built by its family at every ε of every panel and checked there (a
    :class:`ConfigError` naming the config's field); labels default to the learner's, distinct."""
    algorithms: list[AlgorithmSpec] = []
    labels: set[str] = set()
    for i, (aname, label, given) in enumerate(parsed):
        own = families[i]
        private = own.algorithms[aname]
        params = tuple(sorted(own.params_of(aname, given, delta).items()))
        spec = AlgorithmSpec(aname, label or "", params, private, own.name)
        default_label = ""
        for p in (q.for_family(own.name) for q in panels):
            grid: Sequence[tuple[int, float | None]] = list(enumerate(p.epsilons)) if private else [(0, None)]
            for j, eps in grid:
                try:
                    learner = spec.learner(eps)
                except (ParameterError, ParameterTypeError) as err:
                    raise _learner_error(err, i, f"{p.epsilons_where}[{j}]", "delta" in given) from err
                except TypeError as err:  # a keyword make_learner does not take
                    raise ConfigError(f"algorithms[{i}].params", dict(params), str(err)) from err
                own.check(learner, p, i, f"{p.epsilons_where}[{j}]")
                default_label = default_label or own.default_label(learner)
        final = label if label is not None else default_label
        if final in labels:
            raise ConfigError(f"algorithms[{i}].label", final, "a label no other algorithm has")
        labels.add(final)
        algorithms.append(AlgorithmSpec(aname, final, params, private, own.name))
    return tuple(algorithms)


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any],
    quick: bool = False,
    exact_privacy: str | None = None,
    budget: Budget | None = None,
) -> Config:
    """Read and validate an experiment configuration.

    Everything is checked before anything runs: every key is known, every number in range (the
    schema, :mod:`learners.config_schema`), every algorithm belongs to the config's family
    (:mod:`learners.families`) and is built by its ``make_learner`` at every ε of every panel and
    checked there by the family (MAB: ``K >= 2``, ``T >= K``, the protocol of the first and last
    batch; linear: ``T >= B``, the noise calibrated), a data file exists.

    Parameters
    ----------
    source : str, os.PathLike or mapping
        A TOML file, or the parsed table itself (relative data paths are then taken from the
        working directory instead of the file's folder).
    quick : bool, optional
        Apply the ``[quick]`` overrides: its horizon caps every panel's, its repetitions and
        checkpoints replace the config's; the exact privacy is then answered by cheap routes only
        (``exact_privacy = "cheap"``) unless the config or ``exact_privacy`` says otherwise.
    exact_privacy : str, optional
        The exact mode of the privacy report (:data:`learners.privacy.EXACT_MODES`), overriding
        the config's ``exact_privacy`` (the CLIs' ``--exact-privacy``).
    budget : Budget, optional
        The most memory a unit and work a unit may take (:mod:`learners.budget`; default
        :class:`Budget`'s: 8 GiB, 10^14 operations): a config whose estimate exceeds it is
        refused before anything is built, naming the field that sets it
        (:meth:`Budget.unlimited` checks nothing).

    Returns
    -------
    Config

    Raises
    ------
    ConfigError
        Naming the offending field, e.g. ``algorithms[2].name`` (also an algorithm of another
        family than the config's), ``epsilons[1]``, ``panels[3].instance.path``,
        ``algorithms[1].params.batch`` or ``quick`` (``quick=True`` without a ``[quick]`` table).
    """
    data, base = read_config(source)
    check_keys("", data, TOP.names())
    for required in ("name", "seed", "repetitions"):
        if required not in data:
            raise ConfigError(required, None, TOP[required].missing)
    name, description, seed = _top(data, "name"), _top(data, "description"), _top(data, "seed")
    repetitions, checkpoints = _top(data, "repetitions"), _top(data, "checkpoints")
    chunk, delta = _top(data, "chunk"), _top(data, "delta")
    privacy_route = _route(data)
    bands = bands_name("bands", data.get("bands", DEFAULT_BANDS))
    parsed = _given_algorithms(data)
    family, families = _family(data, [n for n, _, _ in parsed])
    exact_privacy = _exact_mode(data, quick, exact_privacy)
    capped = _quick(data, quick)
    frame = _Frame(
        data,
        base,
        family,
        tuple(dict.fromkeys([family, *families])),
        any(f.algorithms[n] for f, (n, _, _) in zip(families, parsed, strict=True)),
        capped.get("horizon"),
        capped.get("repetitions", repetitions),
        capped.get("checkpoints", checkpoints),
        chunk,
        Budget() if budget is None else budget,
    )
    panels = _panels(frame)
    config = Config(
        name,
        description,
        seed,
        frame.repetitions,
        frame.checkpoints,
        chunk,
        delta,
        _learners(parsed, families, panels, delta),
        tuple(panels),
        quick,
        privacy_route,
        bands,
        family.name,
        exact_privacy,
    )
    check_budget(config, frame.budget, FAMILIES)
    return config


__all__ = [
    "BANDS",
    "DEFAULT_BANDS",
    "DEFAULT_X_AXIS",
    "DEFAULT_Y_AXES",
    "MAX_CURVE_POINTS",
    "MAX_EPSILON",
    "MAX_HORIZON",
    "MAX_REPETITIONS",
    "MIN_EPSILON",
    "X_AXES",
    "Y_AXES",
    "AlgorithmSpec",
    "Config",
    "Instance",
    "Panel",
    "Unit",
    "bands_name",
    "load_config",
    "shipped_configs",
    "y_axes_names",
]
