"""Configuration of regret experiments: the TOML format, validated in one place into frozen values.

See :mod:`learners.experiment` for the results folder, seeds and execution. One format serves every
learner family (:mod:`learners.families`): the family of a config is the one its algorithms belong
to, or its ``family`` key; the family says which instance kinds, algorithm names and ``params`` it
takes, and checks them.

The config format. Top-level keys (``*``: required)::

    name*          the experiment (letters, digits, '.', '_', '-'): the default results folder
    family         "mab" (default), "linear", "phased" or "ldp"; optional: the first algorithm's
                   name says it too. The algorithms may span families when every panel's instance
                   is one each of them runs (:data:`learners.families.ADOPTED_KINDS`: Bernoulli arms
                   with fixed means, for the mab and ldp families). Part of the fingerprint unless
                   "mab"
    description    one line
    seed*          integer >= 0
    repetitions*   R >= 1
    horizon        T (required here unless every panel sets it)
    epsilons       privacy levels ε > 0 (required if an algorithm is private)
    checkpoints    regret is recorded at this many evenly spaced rounds (default 1000; at most T)
    chunk          repetitions per unit of work (default 10)
    delta          δ of the (ε, δ) statements of non-pure variants (default 1e-6); in the linear
                   family, the δ of every private learner that sets no ``params.delta``
    privacy_route  the accountant route answering the ledgers of the privacy report's headline
                   ``epsilon`` (default "auto", the tightest exact one; "published": Lemma 3 /
                   Lemma 4 on the released mechanism, instant where an exact answer over large
                   batches takes minutes); see :func:`learners.mab.privacy_of`. Every family
    exact_privacy  how the report's ``exact`` block is answered (:mod:`learners.privacy`): "auto"
                   (default: the exact routes, each ledger within a deterministic cost budget),
                   "cheap" (the default of a quick run: exact routes only where they cost well
                   under a second, else the published bound), "off" (no exact block), or a route
    bands          the band drawn around each mean regret curve: "ci95" (default, the 95%
                   Student-t interval) or "se" (±1 standard error, the papers' bands); plots only,
                   not part of the fingerprint (``dp-regret plot --bands`` overrides it)
    x_axis         what a panel's figure plots against: "round" (default: Reg(t)/t against t, a
                   subplot per ε), "epsilon" (the final regret Reg(T) against ε, one line per
                   private algorithm, the non-private ones as horizontal lines) or "horizon" (the
                   panel is one point of the figure ``regret-horizon``: the final regret Reg(T) of
                   every "horizon" panel against its T, log-log, with the least-squares slope; at
                   least two such panels with different horizons); plots only
    y_axis         what a "round" panel's figures plot against t, one name or a list of them (a
                   figure each): "average" (default: the time-average regret Reg(t)/t),
                   "cumulative" (Reg(t)) or "sqrt" (Reg(t)/√t); plots only
    [instance]     kind*, one of the family's kinds:
                   MAB: gaussian-easy | gaussian-hard | bernoulli | beta | mslr, and
                   arms (K, default 10; synthetic kinds), means (bernoulli, beta: fixed for every
                   repetition; else drawn Uniform[0.25, 0.75] per repetition), concentration (beta,
                   default 10), path / clusters (K, default 50) / cluster_seed (default 0) (mslr;
                   without a path, the offline stand-in :func:`~learners.datasets.default_real_instance`);
                   linear: linear-synthetic, and dim (d, default 10), arms (K, 100), agents (M,
                   100), noise_sd (0.5), instance_seed (2): one instance shared by every repetition;
                   linear-mslr, and path (an MSLR-WEB10K-format file; without it the offline
                   stand-in :func:`~learners.datasets.default_linear_instance`), features ("title",
                   d = 57, default, or "body", d = 78), agents (M, 10), reward ("model", default,
                   or "label"), seed (0; the Lasso's and the query stream's): shared as well;
                   phased: phased-synthetic, and arms (k, 1000), dim (d, 20), client_sd (0.1),
                   noise_sd (1), population (10^6), theta_norm (1), instance_seed (0): shared
    [[algorithms]] name* (a key of :data:`learners.mab.ALGORITHMS` or
                   :data:`learners.linear.ALGORITHMS`), label, params (keywords of the family's
                   ``make_learner``)
    [[panels]]     name*, and instance / horizon / epsilons overriding the top level
    [quick]        horizon (a cap on every panel's), repetitions, checkpoints: applied by ``quick``

Every key, with its type, default and valid range, is listed in the README's "Experiment config
reference" (a test checks that every key accepted here appears there).

A synthetic MAB instance is drawn per repetition (as the paper's ``np.random.seed(run)``); Bernoulli
or Beta arms with given ``means``, the real-data instance and the linear family's instance are shared
by all repetitions.
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.storage import digest
from learners import mab, privacy
from learners.errors import ConfigError, ParameterError, ParameterTypeError
from learners.families import (
    ADOPTED_KINDS,
    DEFAULT_FAMILY,
    FAMILIES,
    Family,
    InstanceSpec,
    LinearInstanceSpec,
    MSLRLinearSpec,
    family_of_algorithm,
    instance_for,
)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The instance of a panel, of whichever family.
Instance = InstanceSpec | LinearInstanceSpec | MSLRLinearSpec

_TOP_KEYS = (
    "name",
    "family",
    "description",
    "seed",
    "repetitions",
    "horizon",
    "epsilons",
    "checkpoints",
    "chunk",
    "delta",
    "privacy_route",
    "exact_privacy",
    "bands",
    "x_axis",
    "y_axis",
    "instance",
    "algorithms",
    "panels",
    "quick",
)
_PANEL_KEYS = ("name", "instance", "horizon", "epsilons", "x_axis", "y_axis")
_ALGORITHM_KEYS = ("name", "label", "params")
_QUICK_KEYS = ("horizon", "repetitions", "checkpoints")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")

#: The bands a plot can draw around a mean regret curve (``bands``): ``"ci95"``, the 95% Student-t
#: interval ``mean ± t_{0.975, R-1} sd / sqrt(R)``, or ``"se"``, ±1 standard error ``sd / sqrt(R)``
#: (the papers' figures; about half as wide at R = 20).
BANDS = ("ci95", "se")
DEFAULT_BANDS = "ci95"
#: What a panel's figure plots against (``x_axis``): the round, ε (the final regret), or the
#: horizon (the final regret of each ``"horizon"`` panel against its T, log-log).
X_AXES = ("round", "epsilon", "horizon")
DEFAULT_X_AXIS = "round"
#: What a ``"round"`` panel's figures plot against t (``y_axis``, one figure each): the
#: time-average regret ``Reg(t)/t``, the cumulative regret ``Reg(t)`` or ``Reg(t)/√t``.
Y_AXES = ("average", "cumulative", "sqrt")
DEFAULT_Y_AXES = ("average",)

#: The limits of a config, each refused before anything runs (the message gives the reason).
#: Rounds are simulated pull by pull (about 3·10^7 a second per core): 10^12 rounds are hours of
#: one repetition where no arm is eliminated.
MAX_HORIZON = 10**12
_WHY_HORIZON = "rounds are simulated pull by pull, about 3e7 a second: 1e12 rounds take hours per repetition"
#: Every repetition holds its instance, reward tape and regret curves in memory.
MAX_REPETITIONS = 10**6
#: regret.csv holds a row per repetition and checkpoint of each (panel, algorithm, ε), and the
#: outputs are assembled in memory: 10^8 rows are gigabytes.
MAX_CURVE_POINTS = 10**8
#: The privacy levels a learner can run at: below, the noise overflows the int64 samplers (a
#: Skellam variance beyond 10^18 for 1e-12) or rounds β = exp(-ε/Δ) to 1; above, the
#: fixed-point encoding overflows (g > 2^53 near 1e30).
MIN_EPSILON, MAX_EPSILON = 1e-9, 1e8
_WHY_REPETITIONS = "every repetition holds its instance, reward tape and regret curves in memory"
_WHY_CURVES = "regret.csv holds a row per repetition and checkpoint, assembled in memory"
_WHY_EPSILON = (
    "smaller ε make noise beyond the int64 samplers, larger ones a fixed-point encoding beyond 2^53"
)

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
        return header + _dump_toml(self.to_dict())

    @property
    def fingerprint(self) -> str:
        """A hash of everything the numbers depend on (not the names, description, labels, the
        privacy route or the plots' bands and axes)."""
        data = self.to_dict()
        del data["name"], data["description"], data["privacy_route"], data["exact_privacy"], data["bands"]
        for algorithm in data["algorithms"]:
            del algorithm["label"]
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


def _type_name(value: object) -> str:
    return type(value).__name__


def _keys(where: str, table: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for key in table:
        if key not in allowed:
            path = f"{where}.{key}" if where else key
            raise ConfigError(path, table[key], "no such key; valid keys: " + ", ".join(allowed))


def _table(where: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(where, value, f"a table, not a {_type_name(value)}")
    return value


def _string(where: str, value: object, *, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(value, str):
        raise ConfigError(where, value, f"a string, not a {_type_name(value)}")
    if pattern is not None and not pattern.fullmatch(value):
        raise ConfigError(
            where, value, "a name of letters, digits, '.', '_' and '-' (a letter or digit first)"
        )
    return value


def _integer(where: str, value: object, low: int, high: int | None = None, why: str = "") -> int:
    """An integer of the config, by accounting's validator (a TOML float such as ``1e6`` is refused:
    TOML has integers, and a float in an integer field is a typo to point out)."""
    if isinstance(value, bool) or not isinstance(value, int):
        hint = " (write 1_000_000, not 1e6)" if isinstance(value, float) else ""
        range_text = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ConfigError(where, value, f"an integer {range_text}{hint}")
    try:
        return v.integer(where, value, minimum=low, maximum=high, why=why)
    except ParameterError as err:
        raise ConfigError(where, err.value, err.valid) from None


def _real(
    where: str,
    value: object,
    *,
    low: float = 0.0,
    high: float = math.inf,
    low_open: bool = True,
    high_open: bool = True,
    why: str = "",
) -> float:
    """A finite real of the config in ``(low, high)`` (``[low, ...`` with ``low_open=False``,
    ``..., high]`` with ``high_open=False``), by accounting's validator."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(where, value, f"a number, not a {_type_name(value)}")
    try:
        x = v.interval(where, value, low, high, low_open=low_open, high_open=high_open, why=why)
    except (ParameterError, ParameterTypeError) as err:
        raise ConfigError(where, err.value, err.valid.replace("real number", "number")) from None
    return x


def bands_name(where: str, value: object) -> str:
    """``value`` if it is one of :data:`BANDS`, else a :class:`ConfigError` naming ``where``."""
    if not isinstance(value, str) or value not in BANDS:
        raise ConfigError(
            where, value, 'one of "ci95" (95% t-interval) or "se" (±1 standard error, the papers\' bands)'
        )
    return value


def _list(where: str, value: object) -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(where, value, f"an array, not a {_type_name(value)}")
    return value


def _epsilons(where: str, value: object) -> tuple[float, ...]:
    items = _list(where, value)
    out: list[float] = []
    for j, item in enumerate(items):
        eps = _real(
            f"{where}[{j}]", item, low=MIN_EPSILON, high=MAX_EPSILON, low_open=False, why=_WHY_EPSILON
        )
        if eps in out:
            raise ConfigError(f"{where}[{j}]", item, "privacy levels without repeats")
        out.append(eps)
    return tuple(out)


def _all_algorithms() -> str:
    return "; ".join(f"{', '.join(f.algorithms)} ({f.name} family)" for f in FAMILIES.values())


def _algorithm(i: int, value: object) -> tuple[str, str | None, dict[str, Any]]:
    where = f"algorithms[{i}]"
    table = _table(where, value)
    _keys(where, table, _ALGORITHM_KEYS)
    if "name" not in table:
        raise ConfigError(f"{where}.name", None, "one of " + _all_algorithms())
    name = table["name"]
    if family_of_algorithm(name) is None:
        raise ConfigError(f"{where}.name", name, "one of " + _all_algorithms())
    label = _string(f"{where}.label", table["label"]) if "label" in table else None
    if label is not None and not label.strip():
        raise ConfigError(f"{where}.label", label, "a non-empty label (or no `label` key: the learner's)")
    params = dict(_table(f"{where}.params", table.get("params", {})))
    for reserved in ("name", "epsilon"):
        if reserved in params:
            raise ConfigError(
                f"{where}.params.{reserved}",
                params[reserved],
                "no such parameter here: the algorithm is `name`, its ε comes from `epsilons`",
            )
    return name, label, params


def _family(data: Mapping[str, Any], names: Sequence[str]) -> tuple[Family, list[Family]]:
    """The config's family (its ``family`` key, else the family of ``algorithms[0]``) and each
    algorithm's. Algorithms of several families must name the regret alike (one figure draws them
    together); the panels' instances are checked by :func:`_instance`."""
    if "family" in data:
        given = data["family"]
        if not isinstance(given, str) or given not in FAMILIES:
            raise ConfigError("family", given, "one of " + ", ".join(FAMILIES))
        chosen = FAMILIES[given]
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
    where: str, value: object, base: Path, family: Family, others: Sequence[Family]
) -> tuple[Instance, tuple[tuple[str, Any], ...]]:
    """``[instance]``: its ``kind`` one the config's family runs, its keys the kind's, checked by
    the family; and the same instance as each family of ``others`` runs it (:func:`instance_for`)."""
    table = _table(where, value)
    kind = table.get("kind")
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
    _keys(where, table, owner.instance_keys[kind])
    instance: Instance = instance_for(family, where, table, base)
    adopted = tuple((f.name, instance_for(f, where, table, base)) for f in others if f is not family)
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


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any], quick: bool = False, exact_privacy: str | None = None
) -> Config:
    """Read and validate an experiment configuration.

    Everything is checked before anything runs: every key is known, every number in range, every
    algorithm belongs to the config's family (:mod:`learners.families`) and is built by its
    ``make_learner`` at every ε of every panel and checked there by the family (MAB: ``K >= 2``,
    ``T >= K``, the protocol of the first and last batch; linear: ``T >= B``, the noise calibrated),
    a data file exists.

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
    if isinstance(source, Mapping):
        data: Mapping[str, Any] = source
        base = Path.cwd()
    elif isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise ConfigError("config", str(source), "an existing TOML file")
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(
                "config", str(source), f"a readable TOML file ({exc.strerror or exc})"
            ) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            detail = " ".join(str(exc).split())[:200]
            raise ConfigError("config", str(source), f"a valid TOML file ({detail})") from None
        base = path.resolve().parent
    else:
        raise ConfigError("config", source, "a TOML file path or a table (mapping)")

    _keys("", data, _TOP_KEYS)
    for required in ("name", "seed", "repetitions"):
        if required not in data:
            raise ConfigError(required, None, "a value (the key is required)")
    name = _string("name", data["name"], pattern=_NAME)
    description = _string("description", data.get("description", ""))
    seed = _integer("seed", data["seed"], 0, 2**128 - 1, "numpy seeds are non-negative 128-bit integers")
    repetitions = _integer("repetitions", data["repetitions"], 1, MAX_REPETITIONS, _WHY_REPETITIONS)
    checkpoints = _integer("checkpoints", data.get("checkpoints", 1000), 1, MAX_CURVE_POINTS, _WHY_CURVES)
    chunk = _integer("chunk", data.get("chunk", 10), 1)
    delta = _real("delta", data.get("delta", 1e-6), high=1.0)
    privacy_route = data.get("privacy_route", "auto")
    try:
        mab.route_name(privacy_route)
    except (ParameterError, ParameterTypeError) as exc:
        raise ConfigError("privacy_route", privacy_route, exc.valid) from exc
    bands = bands_name("bands", data.get("bands", DEFAULT_BANDS))

    if "algorithms" not in data:
        raise ConfigError("algorithms", None, "an array of tables [[algorithms]] (the key is required)")
    raw_algorithms = _list("algorithms", data["algorithms"])
    if not raw_algorithms:
        raise ConfigError("algorithms", raw_algorithms, "at least one [[algorithms]] table")
    parsed = [_algorithm(i, a) for i, a in enumerate(raw_algorithms)]
    family, families = _family(data, [n for n, _, _ in parsed])
    involved = list(dict.fromkeys([family, *families]))
    if exact_privacy is None:  # the config's, else "cheap" in a quick run (cheap routes only)
        exact_privacy = data.get("exact_privacy", "cheap" if quick else "auto")
        where = "exact_privacy"
    else:
        where = "exact_privacy (--exact-privacy)"
    try:
        exact_privacy = privacy.exact_mode(exact_privacy, where)
    except (ParameterError, ParameterTypeError) as exc:
        raise ConfigError(where, exact_privacy, exc.valid) from exc
    any_private = any(f.algorithms[n] for f, (n, _, _) in zip(families, parsed, strict=True))

    cap: int | None = None
    if quick:
        if "quick" not in data:
            raise ConfigError("quick", None, "a [quick] table in the config (the --quick overrides)")
        q = _table("quick", data["quick"])
        _keys("quick", q, _QUICK_KEYS)
        if "horizon" in q:
            cap = _integer("quick.horizon", q["horizon"], 2, MAX_HORIZON, _WHY_HORIZON)
        if "repetitions" in q:
            repetitions = _integer(
                "quick.repetitions", q["repetitions"], 1, MAX_REPETITIONS, _WHY_REPETITIONS
            )
        if "checkpoints" in q:
            checkpoints = _integer("quick.checkpoints", q["checkpoints"], 1, MAX_CURVE_POINTS, _WHY_CURVES)
    elif "quick" in data:
        q = _table("quick", data["quick"])
        _keys("quick", q, _QUICK_KEYS)

    def setting(prefix: str, table: Mapping[str, Any], key: str, what: str) -> tuple[str, Any]:
        """Where a panel's ``key`` is given (the panel, else the top level) and its value."""
        if key in table:
            return prefix + key, table[key]
        if key in data:
            return key, data[key]
        raise ConfigError(prefix + key, None, f"{what} (in the panel or at the top level)")

    def panel(prefix: str, table: Mapping[str, Any], default_name: str) -> Panel:
        pname = _string(f"{prefix}name", table.get("name", default_name), pattern=_NAME)
        iwhere, raw_instance = setting(prefix, table, "instance", "an [instance] table")
        instance, adopted = _instance(iwhere, raw_instance, base, family, involved)
        hwhere, raw_horizon = setting(prefix, table, "horizon", "a horizon T")
        horizon = _integer(hwhere, raw_horizon, 2, MAX_HORIZON, _WHY_HORIZON)
        if cap is not None and cap < horizon:
            horizon, hwhere = cap, "quick.horizon"
        ewhere, raw_epsilons = (
            setting(prefix, table, "epsilons", "privacy levels")
            if any_private or "epsilons" in table or "epsilons" in data
            else ("epsilons", [])
        )
        epsilons = _epsilons(ewhere, raw_epsilons)
        if any_private and not epsilons:
            raise ConfigError(ewhere, raw_epsilons, "at least one privacy level ε > 0")
        xwhere = prefix + "x_axis" if "x_axis" in table else "x_axis"
        x_axis = table.get("x_axis", data.get("x_axis", DEFAULT_X_AXIS))
        if not isinstance(x_axis, str) or x_axis not in X_AXES:
            raise ConfigError(
                xwhere,
                x_axis,
                'one of "round" (Reg(t)/t against t), "epsilon" (Reg(T) against ε) or "horizon" '
                "(Reg(T) against T over the panels)",
            )
        if x_axis == "epsilon" and not any_private:
            raise ConfigError(
                xwhere, x_axis, '"round": no algorithm of the config is private, so none runs at an ε'
            )
        y_axes = _y_axes(prefix, table, data, x_axis)
        for f in involved:
            f.check_panel(
                dict(adopted).get(f.name, instance),
                where=iwhere,
                horizon=horizon,
                horizon_where=hwhere,
                repetitions=repetitions,
                chunk=chunk,
            )
        if repetitions * min(checkpoints, horizon) > MAX_CURVE_POINTS:
            raise ConfigError(
                "repetitions",
                repetitions,
                f"at most {MAX_CURVE_POINTS:.0e} points of regret curves per algorithm and ε: repetitions x "
                f"checkpoints = {repetitions} x {min(checkpoints, horizon)} ({_WHY_CURVES})",
            )
        return Panel(
            pname,
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

    if "panels" in data:
        raw_panels = _list("panels", data["panels"])
        if not raw_panels:
            raise ConfigError("panels", raw_panels, "at least one [[panels]] table, or no `panels` key")
        panels = []
        for i, raw in enumerate(raw_panels):
            where = f"panels[{i}]"
            table = _table(where, raw)
            _keys(where, table, _PANEL_KEYS)
            if "name" not in table:
                raise ConfigError(f"{where}.name", None, "a panel name (the key is required)")
            panels.append(panel(f"{where}.", table, ""))
    else:
        panels = [panel("", {}, name)]
    seen: set[str] = set()
    for i, p in enumerate(panels):
        if p.name in seen:
            raise ConfigError(f"panels[{i}].name", p.name, "a name no other panel has")
        seen.add(p.name)
    own_axis = [isinstance(t, Mapping) and "x_axis" in t for t in data.get("panels", [{}])]
    _check_horizon_axis(panels, own_axis, cap)

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

    return Config(
        name,
        description,
        seed,
        repetitions,
        checkpoints,
        chunk,
        delta,
        tuple(algorithms),
        tuple(panels),
        quick,
        privacy_route,
        bands,
        family.name,
        exact_privacy,
    )


def y_axes_names(where: str, raw: object) -> tuple[str, ...]:
    """``raw`` as a ``y_axis`` value: one of :data:`Y_AXES` or a list of them without repeats, else
    a :class:`ConfigError` naming ``where``."""
    items = [raw] if isinstance(raw, str) else raw
    valid = (
        'one of "average" (Reg(t)/t), "cumulative" (Reg(t)) or "sqrt" (Reg(t)/√t), or a list of them '
        "without repeats (a figure each)"
    )
    if (
        not isinstance(items, list)
        or not items
        or not all(isinstance(y, str) and y in Y_AXES for y in items)
        or len(set(items)) != len(items)
    ):
        raise ConfigError(where, raw, valid)
    return tuple(items)


def _y_axes(prefix: str, table: Mapping[str, Any], data: Mapping[str, Any], x_axis: str) -> tuple[str, ...]:
    """A panel's ``y_axis`` (its own, else the top level's, :func:`y_axes_names`); other than the
    default only for ``x_axis = "round"``."""
    where = prefix + "y_axis" if "y_axis" in table else "y_axis"
    raw = table.get("y_axis", data.get("y_axis", list(DEFAULT_Y_AXES)))
    axes = y_axes_names(where, raw)
    if axes != DEFAULT_Y_AXES and x_axis != "round":
        raise ConfigError(
            where,
            raw,
            f'"average" (the default): the panel\'s x_axis is "{x_axis}", whose figure is the final regret',
        )
    return axes


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


def shipped_configs() -> dict[str, Path]:
    """The configs shipped with dpcert, one per reproduced figure: name -> file."""
    root = resources.files("learners").joinpath("configs")
    found: dict[str, Path] = {}
    for entry in root.iterdir():
        if entry.name.endswith(".toml"):
            found[entry.name.removesuffix(".toml")] = Path(str(entry))
    return dict(sorted(found.items()))


# ---------------------------------------------------------------------------------------
# A small TOML writer for the resolved config (the standard library only reads TOML)
# ---------------------------------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    # A JSON string is a TOML basic string, except that TOML also wants DEL escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:_d}" if abs(value) >= 10**5 else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise ConfigError("config", value, "strings, numbers, booleans, arrays and tables")


def _dump_toml(data: Mapping[str, Any]) -> str:
    """``data`` as TOML: scalars first, then each array of tables (its tables' tables inline)."""
    lines: list[str] = []
    arrays: list[tuple[str, list[Mapping[str, Any]]]] = []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            arrays.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for key, tables in arrays:
        for table in tables:
            lines += ["", f"[[{_toml_key(key)}]]"]
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"
