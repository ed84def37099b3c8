"""Regret experiments of the distributed MAB paper (spec §7): configs, a resumable runner, outputs.

An experiment is *data*: a TOML file (:func:`load_config`) naming the instance, the horizon, the
privacy levels, the algorithms with their settings and the seed. One file ships per figure of the
paper (:func:`shipped_configs`; spec §7.4). :func:`run_experiment` runs it and writes, in one
results folder,

``config.toml``    the resolved configuration (``--quick`` applied, defaults filled in); running it
                   again reproduces the results;
``versions.json``  Python, the libraries and the platform;
``regret.csv``     tidy regret curves: one row per panel, algorithm, ε, repetition and checkpoint;
``summary.json``   final time-average and cumulative regret with 95% confidence intervals, the
                   privacy guarantee and the communication of every panel/algorithm/ε;
``regret-*.png``   time-average regret ``Reg(t)/t`` against the round (:func:`plot_results`);
``units/``         one ``.npz`` per finished unit of work (below).

**Common random numbers and seeds.** Repetition ``r`` of panel ``p`` draws its instance (the arm
means of a synthetic instance) and its reward tape from the two children of
``SeedSequence(seed, spawn_key=(p, 0, r))``; every algorithm and every ε of the panel is run on the
same instance and on a fresh generator of the same tape, so the comparison between algorithms has
low variance (spec §7.1). Privacy noise of a unit comes from
``SeedSequence(seed, spawn_key=(p, 1, algorithm, epsilon, chunk))``. Unlike the paper's released
code (whose noise generator is unseeded) every number is reproducible: the same config gives the
same ``regret.csv``, bit for bit, whatever the number of workers and however often the run was
interrupted and resumed. (``chunk`` is part of the config: each chunk has its own noise stream.)
A non-private algorithm (``"se"``) runs once per panel; its rows have an empty ε and it is drawn
in every ε's subplot.

**Plots and intervals.** Bands and summary intervals are 95% Student-t intervals,
``mean ± t_{0.975, R-1} sd / sqrt(R)``; the paper's figures show ±1 standard error (spec §7.1),
about half as wide at ``R = 20``.

**Units and resuming.** A unit is one (panel, algorithm, ε, chunk of ``chunk`` repetitions). Each
finished unit is saved at once, atomically, as ``units/<panel>__<algorithm>__<ε>__<chunk>.npz``
(indices); a run started again on the same folder loads the finished units and computes only the
rest. ``fingerprint.txt`` holds a hash of everything in the config that the numbers depend on (not
names, labels or the description), so a folder is never resumed with a different config. Each
unit holds a sha256 of its content: one edited after it was written is refused, naming the file.
While a run writes a folder it holds ``.dp-regret.lock`` (an ``fcntl`` lock, released however the
run ends, naming the holder): a second run on the same folder is refused at once.

**Execution.** Units run here one after another (with a progress bar), on ``workers`` local
processes (:class:`concurrent.futures.ProcessPoolExecutor`) or on a Dask cluster (``scheduler``:
an address or a :class:`distributed.Client`; the optional ``dask`` extra). Results come back to this
process, which alone writes the folder.

**Config format.** Top-level keys (``*``: required)::

    name*          the experiment (letters, digits, '.', '_', '-'): the default results folder
    description    one line
    seed*          integer >= 0
    repetitions*   R >= 1
    horizon        T (required here unless every panel sets it)
    epsilons       privacy levels ε > 0 (required if an algorithm is private)
    checkpoints    regret is recorded at this many evenly spaced rounds (default 1000; at most T)
    chunk          repetitions per unit of work (default 10)
    delta          δ of the (ε, δ) statements of non-pure variants (default 1e-6)
    privacy_route  the accountant route answering the ledgers of the RDP and zCDP variants
                   (default "auto", the tightest exact one; "published": Lemma 3 / Lemma 4 on the
                   released mechanism, instant where an exact answer over large batches takes
                   minutes); see :func:`learners.mab.privacy_of`
    [instance]     kind* = gaussian-easy | gaussian-hard | bernoulli | beta | mslr, and
                   arms (K, default 10; synthetic kinds), means (bernoulli, beta: fixed for every
                   repetition; else drawn Uniform[0.25, 0.75] per repetition), concentration (beta,
                   default 10), path / clusters (K, default 50) / cluster_seed (default 0) (mslr;
                   without a path, the offline stand-in :func:`~learners.datasets.default_real_instance`)
    [[algorithms]] name* (a key of :data:`learners.mab.ALGORITHMS`), label, params (keywords of
                   :func:`learners.mab.make_learner`)
    [[panels]]     name*, and instance / horizon / epsilons overriding the top level
    [quick]        horizon (a cap on every panel's), repetitions, checkpoints: applied by ``quick``

A synthetic instance is drawn per repetition (as the paper's ``np.random.seed(run)``); Bernoulli or
Beta arms with given ``means`` and the real-data instance are shared by all repetitions.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import platform
import re
import sys
import tomllib
import zipfile
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from accounting import _validate as v
from accounting.accountant import Accountant
from accounting.noise import Skellam
from learners import mab
from learners.environments import BernoulliArms, BetaArms, MABInstance, gaussian_easy, gaussian_hard
from learners.errors import ConfigError, LearnerError, ParameterError, ParameterTypeError

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "INSTANCE_KINDS",
    "AlgorithmSpec",
    "Config",
    "InstanceSpec",
    "Panel",
    "Unit",
    "load_config",
    "plot_results",
    "run_experiment",
    "shipped_configs",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The instance kinds of ``[instance] kind``.
INSTANCE_KINDS = ("gaussian-easy", "gaussian-hard", "bernoulli", "beta", "mslr")

#: Files of a results folder.
CSV_FILE = "regret.csv"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.toml"
VERSIONS_FILE = "versions.json"
FINGERPRINT_FILE = "fingerprint.txt"
UNITS_DIR = "units"
CSV_COLUMNS = (
    "panel",
    "algorithm",
    "label",
    "epsilon",
    "repetition",
    "round",
    "pseudo_regret",
    "realized_regret",
)

_TOP_KEYS = (
    "name",
    "description",
    "seed",
    "repetitions",
    "horizon",
    "epsilons",
    "checkpoints",
    "chunk",
    "delta",
    "privacy_route",
    "instance",
    "algorithms",
    "panels",
    "quick",
)
_PANEL_KEYS = ("name", "instance", "horizon", "epsilons")
_ALGORITHM_KEYS = ("name", "label", "params")
_QUICK_KEYS = ("horizon", "repetitions", "checkpoints")
_INSTANCE_KEYS = {
    "gaussian-easy": ("kind", "arms"),
    "gaussian-hard": ("kind", "arms"),
    "bernoulli": ("kind", "arms", "means"),
    "beta": ("kind", "arms", "means", "concentration"),
    "mslr": ("kind", "path", "clusters", "cluster_seed"),
}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")

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
#: Arms of an instance: the learner keeps per-arm statistics of every repetition.
MAX_ARMS = 10**6
#: The privacy levels a learner can run at: below, the noise overflows the int64 samplers (a
#: Skellam variance beyond 10^18 for 1e-12) or rounds β = exp(-ε/Δ) to 1; above, the
#: fixed-point encoding overflows (g > 2^53 near 1e30).
MIN_EPSILON, MAX_EPSILON = 1e-9, 1e8
_WHY_ARMS = "the learner keeps per-arm statistics of every repetition in memory"
_WHY_REPETITIONS = "every repetition holds its instance, reward tape and regret curves in memory"
_WHY_CURVES = "regret.csv holds a row per repetition and checkpoint, assembled in memory"
_WHY_EPSILON = (
    "smaller ε make noise beyond the int64 samplers, larger ones a fixed-point encoding beyond 2^53"
)
_DEFAULT_ARMS = 10
_DEFAULT_CLUSTERS = 50
_DEFAULT_CONCENTRATION = 10.0

#: The colours of the paper's figures (spec §7.1), by label; other labels cycle through tab10.
PAPER_COLORS = {
    "DP-SE": "black",
    "Dist-DP-SE": "blue",
    "Dist-RDP-SE(s=10)": "red",
    "Dist-RDP-SE(s=100)": "green",
    "CDP-SE": "black",
    "LDP-SE": "cyan",
}
_PAPER_PREFIX_COLORS = (("Dist-CDP-SE", "green"),)


# ---------------------------------------------------------------------------------------
# The configuration: frozen values, validated in one place
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstanceSpec:
    """The bandit instance of a panel (``[instance]``).

    Attributes
    ----------
    kind : str
        One of :data:`INSTANCE_KINDS`.
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
            source = Path(self.path).name if self.path else "offline stand-in"
            return f"mslr ({source}), K={self.arms}"
        return f"{self.kind}, K={self.arms}"


@dataclass(frozen=True)
class AlgorithmSpec:
    """One ``[[algorithms]]`` entry.

    Attributes
    ----------
    name : str
        A key of :data:`learners.mab.ALGORITHMS`.
    label : str
        The name in plots, CSV and summary (unique in the config).
    params : tuple of (str, object)
        Keywords of :func:`learners.mab.make_learner`, sorted by name.
    private : bool
        Whether the algorithm takes an ε (``"se"`` does not: it runs once per panel).
    """

    name: str
    label: str
    params: tuple[tuple[str, Any], ...]
    private: bool

    def learner(self, epsilon: float | None) -> mab.Learner:
        """The learner at privacy level ``epsilon`` (``None`` for a non-private algorithm)."""
        return mab.make_learner(self.name, epsilon, **dict(self.params))


@dataclass(frozen=True)
class Panel:
    """One panel: an instance, a horizon and the privacy levels its algorithms run at.

    Attributes
    ----------
    name : str
        Names the panel in files, CSV rows and plots.
    instance : InstanceSpec
    horizon : int
        ``T``.
    epsilons : tuple of float
    """

    name: str
    instance: InstanceSpec
    horizon: int
    epsilons: tuple[float, ...]
    #: Where the panel's instance and epsilons were given in the config (for error messages).
    instance_where: str = field(default="instance", compare=False, repr=False)
    epsilons_where: str = field(default="epsilons", compare=False, repr=False)


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

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration as TOML-ready data (:func:`load_config` reads it back)."""
        return {
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "repetitions": self.repetitions,
            "checkpoints": self.checkpoints,
            "chunk": self.chunk,
            "delta": self.delta,
            "privacy_route": self.privacy_route,
            "algorithms": [
                {"name": a.name, "label": a.label, "params": dict(a.params)} for a in self.algorithms
            ],
            "panels": [
                {
                    "name": p.name,
                    "horizon": p.horizon,
                    "epsilons": list(p.epsilons),
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
        """A hash of everything the numbers depend on (not the names, description or labels)."""
        data = self.to_dict()
        del data["name"], data["description"], data["privacy_route"]
        for algorithm in data["algorithms"]:
            del algorithm["label"]
        for panel in data["panels"]:
            del panel["name"]
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

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
    why: str = "",
) -> float:
    """A finite real of the config in ``(low, high)`` (``[low, high)`` with ``low_open=False``), by
    accounting's validator."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(where, value, f"a number, not a {_type_name(value)}")
    try:
        x = v.interval(where, value, low, high, low_open=low_open, high_open=True, why=why)
    except (ParameterError, ParameterTypeError) as err:
        raise ConfigError(where, err.value, err.valid.replace("real number", "number")) from None
    return x


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


def _instance(where: str, value: object, base: Path) -> InstanceSpec:
    table = _table(where, value)
    if "kind" not in table:
        raise ConfigError(f"{where}.kind", None, "one of " + ", ".join(INSTANCE_KINDS))
    kind = table["kind"]
    if kind not in INSTANCE_KINDS:
        raise ConfigError(f"{where}.kind", kind, "one of " + ", ".join(INSTANCE_KINDS))
    _keys(where, table, _INSTANCE_KEYS[kind])
    if kind == "mslr":
        clusters = _integer(
            f"{where}.clusters", table.get("clusters", _DEFAULT_CLUSTERS), 2, MAX_ARMS, _WHY_ARMS
        )
        cluster_seed = _integer(
            f"{where}.cluster_seed", table.get("cluster_seed", 0), 0, 2**32 - 1, "K-means seeds are 32-bit"
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
        check = _beta_mean if kind == "beta" else _bernoulli_mean
        means = tuple(check(f"{where}.means[{j}]", m) for j, m in enumerate(items))
        if len(means) < 2:
            raise ConfigError(f"{where}.means", table["means"], "K >= 2 arm means")
    default_arms = len(means) if means is not None else _DEFAULT_ARMS
    arms = _integer(f"{where}.arms", table.get("arms", default_arms), 2, MAX_ARMS, _WHY_ARMS)
    if means is not None and arms != len(means):
        raise ConfigError(f"{where}.arms", arms, f"the number of means, {len(means)}")
    concentration = None
    if kind == "beta":
        concentration = _real(f"{where}.concentration", table.get("concentration", _DEFAULT_CONCENTRATION))
    return InstanceSpec(kind, arms, means=means, concentration=concentration)


def _bernoulli_mean(where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(where, value, "a mean in [0, 1]")
    return float(value)


def _beta_mean(where: str, value: object) -> float:
    return _real(where, value, low=0.0, high=1.0)


def _algorithm(i: int, value: object) -> tuple[str, str | None, tuple[tuple[str, Any], ...]]:
    where = f"algorithms[{i}]"
    table = _table(where, value)
    _keys(where, table, _ALGORITHM_KEYS)
    if "name" not in table:
        raise ConfigError(f"{where}.name", None, "one of " + ", ".join(mab.ALGORITHMS))
    name = table["name"]
    if name not in mab.ALGORITHMS:
        raise ConfigError(f"{where}.name", name, "one of " + ", ".join(mab.ALGORITHMS))
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
    return name, label, tuple(sorted(params.items()))


def _learner_error(
    err: ParameterError | ParameterTypeError, algorithm: int, epsilon_where: str
) -> ConfigError:
    """A :func:`learners.mab.make_learner` error, renamed to the config field it came from."""
    if err.name == "algorithm":
        return ConfigError(f"algorithms[{algorithm}].name", err.value, err.valid)
    if err.name == "epsilon":
        return ConfigError(epsilon_where, err.value, f"{err.valid} (for algorithms[{algorithm}])")
    return ConfigError(f"algorithms[{algorithm}].params.{err.name}", err.value, err.valid)


#: The largest variance of an aggregate's noise a run draws: the samplers draw int64 values, and
#: numpy's Poisson (behind Skellam, two rates of half the variance) takes rates below 9.2e18.
MAX_NOISE_VARIANCE = 1.8e19


def _check_protocol(learner: mab.Learner, horizon: int, algorithm: int, epsilon_where: str) -> None:
    """The protocol parameters of the first and the last full batch, computed now: a setting they
    cannot take (a noise beyond the samplers, an encoding beyond 2^53) is a config error before
    anything runs, naming the setting, not a failure in the middle of the run."""
    if learner.variant is None or learner.epsilon is None:
        return
    from accounting.calibration import protocol_parameters
    from learners.protocols import Protocol

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
            f"a Skellam protocol noise of variance at most {MAX_NOISE_VARIANCE:g} per aggregate (this one "
            f"has {variance:.3g}: numpy's Poisson sampler takes rates below 9.2e18)",
        )


def _is_private(name: str) -> bool:
    return mab.ALGORITHMS[name].private


def load_config(source: str | os.PathLike[str] | Mapping[str, Any], quick: bool = False) -> Config:
    """Read and validate an experiment configuration.

    Everything is checked before anything runs: every key is known, every number in range, every
    algorithm is built by :func:`learners.mab.make_learner` at every ε of every panel, ``K >= 2``,
    ``T >= K``, a data file exists.

    Parameters
    ----------
    source : str, os.PathLike or mapping
        A TOML file, or the parsed table itself (relative data paths are then taken from the
        working directory instead of the file's folder).
    quick : bool, optional
        Apply the ``[quick]`` overrides: its horizon caps every panel's, its repetitions and
        checkpoints replace the config's.

    Returns
    -------
    Config

    Raises
    ------
    ConfigError
        Naming the offending field, e.g. ``algorithms[2].name``, ``epsilons[1]``,
        ``panels[3].instance.path`` or ``quick`` (``quick=True`` without a ``[quick]`` table).
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

    if "algorithms" not in data:
        raise ConfigError("algorithms", None, "an array of tables [[algorithms]] (the key is required)")
    raw_algorithms = _list("algorithms", data["algorithms"])
    if not raw_algorithms:
        raise ConfigError("algorithms", raw_algorithms, "at least one [[algorithms]] table")
    parsed = [_algorithm(i, a) for i, a in enumerate(raw_algorithms)]
    any_private = any(_is_private(n) for n, _, _ in parsed)

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
        instance = _instance(iwhere, raw_instance, base)
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
        if horizon < instance.arms:
            raise ConfigError(hwhere, horizon, f"a horizon T >= K = {instance.arms} (K of {iwhere})")
        if repetitions * min(checkpoints, horizon) > MAX_CURVE_POINTS:
            raise ConfigError(
                "repetitions",
                repetitions,
                f"at most {MAX_CURVE_POINTS:.0e} points of regret curves per algorithm and ε: repetitions x "
                f"checkpoints = {repetitions} x {min(checkpoints, horizon)} ({_WHY_CURVES})",
            )
        if repetitions * instance.arms > MAX_CURVE_POINTS:
            raise ConfigError(
                "repetitions",
                repetitions,
                f"repetitions x arms <= {MAX_CURVE_POINTS:.0e} (= {repetitions} x {instance.arms} here: "
                "the learner keeps per-arm statistics of every repetition in memory)",
            )
        return Panel(pname, instance, horizon, epsilons, instance_where=iwhere, epsilons_where=ewhere)

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

    algorithms: list[AlgorithmSpec] = []
    labels: set[str] = set()
    for i, (aname, label, params) in enumerate(parsed):
        private = _is_private(aname)
        spec = AlgorithmSpec(aname, label or "", params, private)
        default_label = ""
        for p in panels:
            grid: Sequence[tuple[int, float | None]] = list(enumerate(p.epsilons)) if private else [(0, None)]
            for j, eps in grid:
                try:
                    learner = spec.learner(eps)
                except (ParameterError, ParameterTypeError) as err:
                    raise _learner_error(err, i, f"{p.epsilons_where}[{j}]") from err
                except TypeError as err:  # a keyword make_learner does not take
                    raise ConfigError(f"algorithms[{i}].params", dict(params), str(err)) from err
                _check_protocol(learner, p.horizon, i, f"{p.epsilons_where}[{j}]")
                default_label = default_label or learner.label
        final = label if label is not None else default_label
        if final in labels:
            raise ConfigError(f"algorithms[{i}].label", final, "a label no other algorithm has")
        labels.add(final)
        algorithms.append(AlgorithmSpec(aname, final, params, private))

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
    )


def shipped_configs() -> dict[str, Path]:
    """The configs shipped with dpcert, one per figure of the paper: name -> file."""
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


# ---------------------------------------------------------------------------------------
# Units of work: the task shipped to a worker and the data it sends back
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Task:
    unit: Unit
    learner: mab.Learner
    instances: MABInstance | tuple[MABInstance, ...]
    horizon: int
    tape_seeds: tuple[np.random.SeedSequence, ...]
    noise_seed: np.random.SeedSequence
    checkpoints: int
    delta: float


@dataclass(frozen=True, eq=False)
class _UnitData:
    rounds: IntArray
    pseudo: FloatArray
    realized: FloatArray
    released: IntArray
    final_arms: IntArray
    meta: dict[str, Any]

    #: The hash of the content, written with it (``None`` for units of an older version).
    checksum: str | None = None

    def arrays(self) -> dict[str, NDArray[Any]]:
        return {
            "rounds": self.rounds,
            "pseudo": self.pseudo,
            "realized": self.realized,
            "released": self.released,
            "final_arms": self.final_arms,
        }

    def digest(self) -> str:
        """``sha256:`` of every array (dtype, shape, bytes) and the meta JSON, in a fixed order."""
        h = hashlib.sha256()
        for name, a in self.arrays().items():
            c = np.ascontiguousarray(a)
            h.update(f"{name}:{c.dtype.str}:{c.shape};".encode())
            h.update(c.tobytes())
        h.update(json.dumps(self.meta, sort_keys=True).encode())
        return "sha256:" + h.hexdigest()

    def save(self, path: Path) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with tmp.open("wb") as f:
            np.savez(
                f,
                rounds=self.rounds,
                pseudo=self.pseudo,
                realized=self.realized,
                released=self.released,
                final_arms=self.final_arms,
                meta=np.array(json.dumps(self.meta, sort_keys=True)),
                checksum=np.array(self.digest()),
            )
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> _UnitData:
        """Read a unit; one whose content does not match its hash is :class:`TamperedError`."""
        with np.load(path, allow_pickle=False) as z:
            data = cls(
                np.asarray(z["rounds"], dtype=np.int64),
                np.asarray(z["pseudo"], dtype=np.float64),
                np.asarray(z["realized"], dtype=np.float64),
                np.asarray(z["released"], dtype=np.int64),
                np.asarray(z["final_arms"], dtype=np.int64),
                _strict_json(str(z["meta"])),
                str(z["checksum"]) if "checksum" in z.files else None,
            )
        if data.checksum is not None and data.checksum != data.digest():
            raise TamperedError(
                "checkpoint",
                str(path),
                "a unit checkpoint whose content matches the hash written with it (it was changed after "
                "it was written); delete it to compute it again, or --force to start afresh",
            )
        return data

    def fits(self, unit: Unit) -> bool:
        c = self.rounds.shape[0]
        return (
            self.checksum is not None  # units of an older version: run them again
            and self.pseudo.shape == self.realized.shape == (unit.count, c)
            and self.released.shape == (unit.count,)
            and "ledgers" in self.meta  # units of an older version held no ledgers: run them again
        )


class TamperedError(ParameterError, LearnerError):
    """A file of a results folder does not match the content hash written with it."""


def _strict_json(text: str) -> Any:
    """``json.loads`` that refuses a key given twice in one object (the later would win silently)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise ValueError(f"the key {key!r} appears twice in one object")
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=pairs)


def _compute(task: _Task) -> _UnitData:
    """Run one unit (in this process, a worker process or on a Dask worker)."""
    tapes = [np.random.default_rng(s) for s in task.tape_seeds]
    result = mab.run(
        task.learner,
        task.instances,
        task.horizon,
        tapes=tapes,
        rng=np.random.default_rng(task.noise_seed),
        checkpoints=task.checkpoints,
        delta=task.delta,
    )
    meta = {
        "label": task.learner.label,
        "learner": asdict(task.learner),
        "horizon": result.horizon,
        # the ledgers the run wrote as it released (answered once, when the outputs are written)
        "ledgers": {str(n): ledger.to_dict() for n, ledger in result.ledgers.items()},
        "releases": {str(n): int(k) for n, k in result.releases.items()},
        "bits": int(result.bits),
        "batch_sizes": [int(n) for n in result.batch_sizes],
    }
    return _UnitData(
        np.asarray(result.rounds, dtype=np.int64),
        np.asarray(result.pseudo_regret, dtype=np.float64),
        np.asarray(result.realized_regret, dtype=np.float64),
        np.asarray(result.released, dtype=np.int64),
        np.asarray(result.final_arms, dtype=np.int64),
        meta,
    )


def _panel_draws(
    config: Config, shared_cache: dict[InstanceSpec, MABInstance]
) -> list[tuple[list[MABInstance] | MABInstance, list[np.random.SeedSequence]]]:
    """For each panel: its instance(s), one per repetition unless shared, and the tape seeds."""
    out: list[tuple[list[MABInstance] | MABInstance, list[np.random.SeedSequence]]] = []
    for p, panel in enumerate(config.panels):
        instance_seeds, tape_seeds = [], []
        for r in range(config.repetitions):
            child_instance, child_tape = np.random.SeedSequence(config.seed, spawn_key=(p, 0, r)).spawn(2)
            instance_seeds.append(child_instance)
            tape_seeds.append(child_tape)
        spec = panel.instance
        instances: list[MABInstance] | MABInstance
        if spec.shared:
            if spec not in shared_cache:
                try:
                    shared_cache[spec] = spec.build_shared()
                except (ParameterError, ParameterTypeError) as err:
                    where = f"{panel.instance_where}.{_instance_field(err.name)}"
                    raise ConfigError(where, err.value, err.valid) from err
            instances = shared_cache[spec]
        else:
            instances = [spec.draw(np.random.default_rng(s)) for s in instance_seeds]
        out.append((instances, tape_seeds))
    return out


def _instance_field(name: str) -> str:
    """The ``[instance]`` key of a parameter of :mod:`learners.datasets` / :mod:`~learners.environments`."""
    return {"seed": "cluster_seed", "locations": "means"}.get(name, name)


def _tasks(config: Config, units: Sequence[Unit]) -> list[_Task]:
    draws = _panel_draws(config, {})
    tasks = []
    for u in units:
        panel = config.panels[u.panel]
        algorithm = config.algorithms[u.algorithm]
        instances, tape_seeds = draws[u.panel]
        part = (
            instances if isinstance(instances, MABInstance) else tuple(instances[u.first : u.first + u.count])
        )
        noise = np.random.SeedSequence(config.seed, spawn_key=(u.panel, 1, u.algorithm, u.epsilon, u.chunk))
        eps = panel.epsilons[u.epsilon] if algorithm.private else None
        tasks.append(
            _Task(
                u,
                algorithm.learner(eps),
                part,
                panel.horizon,
                tuple(tape_seeds[u.first : u.first + u.count]),
                noise,
                config.checkpoints,
                config.delta,
            )
        )
    return tasks


# ---------------------------------------------------------------------------------------
# Execution: here, on local processes, or on a Dask cluster
# ---------------------------------------------------------------------------------------


_Results = Generator[tuple["_Task", "_UnitData"], None, None]


def _run_here(tasks: Sequence[_Task]) -> _Results:
    for task in tasks:
        yield task, _compute(task)


def _run_processes(tasks: Sequence[_Task], workers: int) -> _Results:
    pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)))
    try:
        futures = {pool.submit(_compute, task): task for task in tasks}
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _distributed() -> Any:
    """The :mod:`distributed` module (imported on first use: it is an optional dependency)."""
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - the dask extra is not installed
        raise LearnerError(
            "a scheduler was given but dask.distributed is not installed (pip install 'dpcert[dask]')"
        ) from exc
    return distributed


#: Seconds a scheduler address may take to answer before the run gives up (one line, status 2).
CONNECT_TIMEOUT = 4.0

_SCHEMES = ("tcp", "tls", "ws", "wss", "inproc", "ucx")


def connect(address: str, name: str = "scheduler", timeout: float = CONNECT_TIMEOUT) -> Any:
    """A :class:`distributed.Client` of the Dask scheduler at ``address``.

    An address that is malformed, or a scheduler that does not answer within about ``timeout``
    seconds, is a :class:`ParameterError` naming ``name`` (the option or argument it came from),
    never a hang: the connection is made in a daemon thread that is abandoned at the deadline.
    """
    distributed = _distributed()
    if not isinstance(address, str) or not address.strip():
        raise ParameterError(name, address, "a Dask scheduler address such as tcp://host:8786")
    try:
        from distributed.comm.addressing import parse_address, parse_host_port

        scheme, location = parse_address(address)
        host, port = None, 0
        if scheme not in _SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}")
        if scheme in ("tcp", "tls", "ws", "wss"):
            host, port = parse_host_port(location)
            if not 0 < int(port) < 65536:
                raise ValueError(f"port {port} is not in 1..65535")
    except Exception as exc:  # distributed raises ValueError, TypeError or AssertionError here
        raise ParameterError(
            name, address, f"a Dask scheduler address such as tcp://host:8786 ({exc})"
        ) from None
    if host is not None:
        import socket

        try:  # a quick, clean answer for the common case: nothing listens there
            socket.create_connection((host, int(port)), timeout=timeout).close()
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            valid = f"the address of a running Dask scheduler ({reason})"
            raise ParameterError(name, address, valid) from None

    import threading

    box: dict[str, Any] = {}

    def attempt() -> None:
        client = distributed.Client.__new__(distributed.Client)
        try:
            client.__init__(address, timeout=timeout, set_as_default=False)
            box["client"] = client
        except BaseException as exc:  # reported to the caller below
            box["error"] = exc
            # A half-built client would try to close itself when collected, for seconds, and
            # print a traceback: it never connected, so there is nothing to close.
            client.status = "closed"

    thread = threading.Thread(target=attempt, name="dpcert-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if "client" in box:
        return box["client"]
    error = box.get("error")
    reason = (
        f"{type(error).__name__}: {' '.join(str(error).split())}" if error else f"no answer in {timeout:g} s"
    )
    raise ParameterError(name, address, f"the address of a running Dask scheduler ({reason})")


def _run_dask(tasks: Sequence[_Task], client: Any) -> _Results:
    """Run the tasks on a connected Dask client (:func:`run_experiment` owns and closes it)."""
    distributed = _distributed()
    futures: dict[Any, _Task] = {}
    try:
        futures = {client.submit(_compute, task, pure=False): task for task in tasks}
        for future in distributed.as_completed(list(futures), loop=client.loop):
            data: _UnitData = future.result()
            task = futures[future]
            future.release()
            yield task, data
    finally:
        if futures:
            client.cancel(list(futures))


def _check_scheduler(scheduler: object, workers: object) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ParameterError("workers", workers, "an integer >= 1")
    if scheduler is None:
        return
    if isinstance(scheduler, str):
        if not scheduler:
            raise ParameterError("scheduler", scheduler, "None, a Dask scheduler address or a Client")
    elif not (hasattr(scheduler, "submit") and hasattr(scheduler, "cancel")):
        raise ParameterTypeError("scheduler", scheduler, "None, a Dask scheduler address (str) or a Client")
    if workers != 1:
        raise ParameterError(
            "workers", workers, "1 when a scheduler is given (the cluster has its own workers)"
        )


# ---------------------------------------------------------------------------------------
# The results folder
# ---------------------------------------------------------------------------------------


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for key, dist in (
        ("numpy", "numpy"),
        ("scipy", "scipy"),
        ("mpmath", "mpmath"),
        ("sklearn", "scikit-learn"),
        ("matplotlib", "matplotlib"),
        ("dpcert", "dpcert"),
    ):
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = "not installed"
    out["executable"] = sys.executable
    return out


#: The lock of a results folder: held (``fcntl.flock``) by the run writing it, and naming it.
LOCK_FILE = ".dp-regret.lock"


def _folder_error(out: Path, exc: OSError) -> ParameterError:
    """An operating-system error on the results folder, as one line naming the file."""
    where = f"{exc.filename}: " if exc.filename else ""
    return ParameterError("out_dir", str(out), f"a writable results folder ({where}{exc.strerror or exc})")


def _check_place(out: Path) -> None:
    """Refuse, before writing anything, a results folder that is a file or lies below one."""
    if out.exists() and not out.is_dir():
        raise ParameterError("out_dir", str(out), "a folder (a file of that name exists)")
    for parent in out.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise ParameterError("out_dir", str(out), f"a folder, but {parent} is a file")
            break


class _FolderLock:
    """An exclusive lock on a results folder, so two runs on one folder never write over each other.

    The lock is ``fcntl.flock`` on :data:`LOCK_FILE`, which the kernel releases when the process
    ends however it ends (no stale locks); the file names the holder (pid, host, start time) for the
    message a second run gets, and is removed when the run ends. Where ``fcntl`` does not exist
    (Windows) the folder is not locked.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / LOCK_FILE
        self.handle: Any = None

    def __enter__(self) -> _FolderLock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return self
        if self.path.exists() and not self.path.is_file():
            raise ParameterError(
                "out_dir", str(self.out), f"a folder whose {LOCK_FILE} is a file (remove it)"
            )
        while True:
            handle = open(self.path, "a+", encoding="utf-8")  # held until __exit__
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = " ".join(handle.read(500).split()) or "another process"
                handle.close()
                raise ParameterError(
                    "out_dir",
                    str(self.out),
                    f"a folder no other run is writing: it is locked by {holder} ({self.path}); wait for "
                    "that run to finish, or give another --out",
                ) from None
            except OSError:
                handle.close()
                raise
            # The holder before us removes the file as it ends: locking that removed file is no lock.
            try:
                same = os.stat(self.path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            handle.close()
        import socket
        import time

        handle.seek(0)
        handle.truncate()
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        handle.write(f"dp-regret pid {os.getpid()} on {socket.gethostname()} since {started}\n")
        handle.flush()
        self.handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            import fcntl

            self.path.unlink(missing_ok=True)  # while still locked: the next run makes a new one
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None


def _our_files(out: Path) -> list[Path]:
    files = [out / n for n in (CSV_FILE, SUMMARY_FILE, CONFIG_FILE, VERSIONS_FILE, FINGERPRINT_FILE)]
    files += sorted(out.glob("regret*.png"))
    units = out / UNITS_DIR
    if units.is_dir():
        files += sorted(units.glob("*.npz")) + sorted(units.glob(".*.tmp"))
    return [f for f in files if f.is_file()]


def _open_folder(out: Path, config: Config, force: bool) -> None:
    """Check that ``out`` may hold this config's results; clear it with ``force``."""
    if out.exists() and not out.is_dir():
        raise ParameterError("out_dir", str(out), "a folder (a file of that name exists)")
    if not (out.is_dir() and any(f.name != LOCK_FILE for f in out.iterdir())):
        return
    stamp = out / FINGERPRINT_FILE
    old = stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else None
    if old == config.fingerprint and not force:
        return
    if not force:
        if old is None:
            raise ParameterError(
                "out_dir",
                str(out),
                f"a new or empty folder, or a dp-regret results folder (this one has files but no "
                f"{FINGERPRINT_FILE}); pass force=True (--force) to write into it anyway",
            )
        raise ParameterError(
            "out_dir",
            str(out),
            f"a folder holding results of this same config (its fingerprint is {old}, this config's "
            f"is {config.fingerprint}); pass force=True (--force) to discard them and start afresh",
        )
    for f in _our_files(out):
        f.unlink()


def run_experiment(
    config: Config,
    out_dir: str | os.PathLike[str],
    *,
    workers: int = 1,
    scheduler: str | Client | None = None,
    progress: bool = True,
    force: bool = False,
    on_unit: Callable[[Unit, bool], None] | None = None,
) -> Path:
    """Run every unit of ``config`` not yet finished in ``out_dir``, then write the outputs.

    Parameters
    ----------
    config : Config
        From :func:`load_config`.
    out_dir : str or os.PathLike
        The results folder: created if missing; an existing folder of the same config is resumed.
    workers : int, optional
        Local worker processes (1: run here).
    scheduler : str or distributed.Client, optional
        Run the units on a Dask cluster (its address or a client); needs the ``dask`` extra and
        dpcert installed on the workers.
    progress : bool, optional
        Show a progress bar (tqdm, on stderr) over the units.
    force : bool, optional
        Discard earlier results in ``out_dir`` (of any config) and start afresh.
    on_unit : callable, optional
        Called as ``on_unit(unit, computed)`` after each unit is saved (``computed=True``) or found
        finished on disk (``computed=False``); an exception it raises stops the run, with every
        unit saved so far kept for a resume.

    Returns
    -------
    pathlib.Path
        The results folder.

    Raises
    ------
    ConfigError
        A data file that cannot be read or clustered (nothing is written).
    ParameterError
        ``out_dir`` holds something else than results of this config (and ``force`` is false), or
        bad ``workers`` / ``scheduler``.
    """
    if not isinstance(config, Config):
        raise ParameterTypeError("config", config, "a Config (from load_config)")
    _check_scheduler(scheduler, workers)
    out = Path(out_dir)
    units = config.units()
    tasks = _tasks(config, units)  # builds the instances: a bad data file fails before any write
    _check_place(out)
    # Connect before anything is written: an unreachable scheduler is one line, within seconds.
    client: Any = connect(scheduler) if isinstance(scheduler, str) else scheduler
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _folder_error(out, exc) from None
        with _FolderLock(out):
            try:
                return _run_in(out, config, units, tasks, workers, client, progress, force, on_unit)
            except OSError as exc:
                raise _folder_error(out, exc) from None
    finally:
        if isinstance(scheduler, str):
            client.close()


def _run_in(
    out: Path,
    config: Config,
    units: Sequence[Unit],
    tasks: Sequence[_Task],
    workers: int,
    client: Any,
    progress: bool,
    force: bool,
    on_unit: Callable[[Unit, bool], None] | None,
) -> Path:
    """The body of :func:`run_experiment`, with the folder locked."""
    _open_folder(out, config, force)

    unit_dir = out / UNITS_DIR
    unit_dir.mkdir(parents=True, exist_ok=True)
    for stale in unit_dir.glob(".*.tmp"):
        stale.unlink()
    _write_atomic(out / FINGERPRINT_FILE, config.fingerprint + "\n")
    _write_atomic(out / CONFIG_FILE, config.to_toml())
    _write_atomic(out / VERSIONS_FILE, json.dumps(_versions(), indent=2) + "\n")

    pending: list[_Task] = []
    finished: list[Unit] = []
    for task in tasks:
        path = unit_dir / f"{task.unit.stem}.npz"
        if path.exists() and not path.is_file():
            raise ParameterError(
                "checkpoint",
                str(path),
                "a unit checkpoint file (this is not a file: remove it to compute the unit)",
            )
        if path.is_file():
            try:
                ok = _UnitData.load(path).fits(task.unit)
            except TamperedError:
                raise
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                ok = False  # unreadable (say, a disk filled up): compute it again
            if ok:
                finished.append(task.unit)
                continue
        pending.append(task)

    from tqdm import tqdm

    with tqdm(
        total=len(tasks), initial=len(finished), disable=not progress, desc=config.name, unit="unit"
    ) as bar:
        for unit in finished:
            if on_unit is not None:
                on_unit(unit, False)
        if pending:
            runs = (
                _run_dask(pending, client)
                if client is not None
                else _run_processes(pending, workers)
                if workers > 1
                else _run_here(pending)
            )
            try:
                for task, data in runs:
                    data.save(unit_dir / f"{task.unit.stem}.npz")
                    bar.update(1)
                    if on_unit is not None:
                        on_unit(task.unit, True)
            finally:
                runs.close()  # stops the workers (and cancels what is queued) if we stopped early

    _write_outputs(config, out, units)
    plot_results(out)
    return out


# ---------------------------------------------------------------------------------------
# Outputs: CSV, summary, plots
# ---------------------------------------------------------------------------------------


def _t_quantile(repetitions: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, repetitions - 1))


def _statistics(values: FloatArray) -> dict[str, Any]:
    """Mean and the 95% t confidence interval ``mean ± t_{0.975, R-1} sd / sqrt(R)`` of ``values``."""
    r = values.size
    mean = float(values.mean())
    if r < 2:
        return {"mean": mean, "sd": None, "half_width": None, "ci95": None}
    sd = float(values.std(ddof=1))
    half = _t_quantile(r) * sd / math.sqrt(r)
    return {"mean": mean, "sd": sd, "half_width": half, "ci95": [mean - half, mean + half]}


def _json_ready(value: Any) -> Any:
    """Standard JSON (infinities and NaN as strings)."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _merge_privacy(
    learner: mab.Learner, metas: Sequence[Mapping[str, Any]], delta: float, route: str
) -> dict[str, Any]:
    """The privacy of a (panel, algorithm, ε) over its chunks: its ledgers, answered once.

    Every chunk wrote the ledger of each batch size it released; chunks that released the same
    size wrote the same events (the parameters depend on the size only). The merged ledgers are
    answered by :func:`learners.mab.privacy_of`, which memoizes them.
    """
    ledgers: dict[int, Accountant] = {}
    releases: dict[int, int] = {}
    for m in metas:
        for key, data in m["ledgers"].items():
            n, ledger = int(key), Accountant.from_dict(data)
            if ledgers.setdefault(n, ledger) != ledger:
                raise LearnerError(f"two chunks wrote different ledgers for batches of {n} users")
            releases[n] = releases.get(n, 0) + int(m["releases"][key])
    privacy = asdict(mab.privacy_of(learner, ledgers, delta, route))
    privacy["releases"] = [[n, releases[n]] for n in sorted(releases)]
    return privacy


def _write_outputs(config: Config, out: Path, units: Sequence[Unit]) -> None:
    groups: dict[tuple[int, int, int], list[tuple[Unit, _UnitData]]] = {}
    for u in units:
        groups.setdefault((u.panel, u.algorithm, u.epsilon), []).append(
            (u, _UnitData.load(out / UNITS_DIR / f"{u.stem}.npz"))
        )

    results: list[dict[str, Any]] = []
    tmp = out / f".{CSV_FILE}.{os.getpid()}.tmp"
    with tmp.open("w", encoding="utf-8", newline="") as f:
        f.write(",".join(CSV_COLUMNS) + "\n")
        for (p, a, e), parts in groups.items():
            panel, algorithm = config.panels[p], config.algorithms[a]
            eps = panel.epsilons[e] if algorithm.private else None
            eps_text = repr(eps) if eps is not None else ""
            rounds = parts[0][1].rounds
            for u, data in parts:
                if not np.array_equal(data.rounds, rounds):
                    raise LearnerError(f"unit {u.stem}: checkpoints differ from the other chunks'")
                round_list = rounds.tolist()
                for i in range(u.count):
                    rep = u.first + i
                    for t, ps, rz in zip(
                        round_list, data.pseudo[i].tolist(), data.realized[i].tolist(), strict=True
                    ):
                        f.write(
                            f"{panel.name},{algorithm.name},{_csv_text(algorithm.label)},{eps_text},"
                            f"{rep},{t},{ps!r},{rz!r}\n"
                        )
            pseudo = np.concatenate([d.pseudo for _, d in parts])
            realized = np.concatenate([d.realized for _, d in parts])
            final_round = int(rounds[-1])
            metas = [d.meta for _, d in parts]
            results.append(
                {
                    "panel": panel.name,
                    "algorithm": algorithm.name,
                    "label": algorithm.label,
                    "epsilon": eps,
                    "horizon": panel.horizon,
                    "repetitions": int(pseudo.shape[0]),
                    "round": final_round,
                    "pseudo_regret": {
                        "time_average": _statistics(pseudo[:, -1] / final_round),
                        "cumulative": _statistics(pseudo[:, -1]),
                    },
                    "realized_regret": {
                        "time_average": _statistics(realized[:, -1] / final_round),
                        "cumulative": _statistics(realized[:, -1]),
                    },
                    "privacy": _merge_privacy(
                        algorithm.learner(eps), metas, config.delta, config.privacy_route
                    ),
                    "bits_per_user_per_batch": max(int(m["bits"]) for m in metas),
                    "batch_sizes": sorted({int(n) for m in metas for n in m["batch_sizes"]}),
                    "released_mean": float(np.concatenate([d.released for _, d in parts]).mean()),
                    "final_arms_mean": float(np.concatenate([d.final_arms for _, d in parts]).mean()),
                    "learner": metas[0]["learner"],
                }
            )
    os.replace(tmp, out / CSV_FILE)

    summary = {
        "name": config.name,
        "description": config.description,
        "fingerprint": config.fingerprint,
        "quick": config.quick,
        "seed": config.seed,
        "repetitions": config.repetitions,
        "delta": config.delta,
        "panels": [
            {
                "name": p.name,
                "instance": p.instance.to_dict(),
                "caption": p.instance.describe(),
                "horizon": p.horizon,
                "epsilons": list(p.epsilons),
            }
            for p in config.panels
        ],
        "results": results,
    }
    _write_atomic(out / SUMMARY_FILE, json.dumps(_json_ready(summary), indent=2, allow_nan=False) + "\n")


def _csv_text(text: str) -> str:
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


@dataclass(frozen=True, eq=False)
class _Curve:
    panel: str
    algorithm: str
    label: str
    epsilon: float | None
    rounds: IntArray
    pseudo: FloatArray  # (R, C)


def _read_curves(path: Path) -> list[_Curve]:
    """The regret curves of a ``regret.csv``, in the order they appear.

    A file that is not what :func:`run_experiment` writes — another header, a short or garbled
    line, a round below 1, a non-finite regret, repetitions with different checkpoints — is a
    :class:`ParameterError` naming the file and the line.
    """
    rows: dict[tuple[str, str, str, str], dict[int, list[tuple[int, float]]]] = {}
    expected = f"a {CSV_FILE} written by dp-regret, with columns {', '.join(CSV_COLUMNS)}"

    def bad(detail: str) -> ParameterError:
        return ParameterError("results_dir", str(path), f"{expected} ({detail})")

    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None or tuple(header) != CSV_COLUMNS:
                raise bad("its header differs")
            for line in reader:
                if len(line) != len(CSV_COLUMNS):
                    raise bad(f"line {reader.line_num} has {len(line)} fields, not {len(CSV_COLUMNS)}")
                panel, algorithm, label, eps, rep, t, regret, _ = line
                try:
                    point, r = (int(t), float(regret)), int(rep)
                    eps_ok = not eps or math.isfinite(float(eps))
                except ValueError as exc:
                    raise bad(f"line {reader.line_num}: {exc}") from None
                if point[0] < 1 or r < 0 or not math.isfinite(point[1]) or not eps_ok:
                    raise bad(f"line {reader.line_num}: a round < 1, a repetition < 0 or a non-finite number")
                rows.setdefault((panel, algorithm, label, eps), {}).setdefault(r, []).append(point)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise bad(" ".join(str(exc).split())[:200]) from None
    curves = []
    for (panel, algorithm, label, eps), reps in rows.items():
        series = [sorted(points) for _, points in sorted(reps.items())]
        rounds = np.array([t for t, _ in series[0]], dtype=np.int64)
        if any([t for t, _ in s] != rounds.tolist() for s in series):
            raise bad(f"the repetitions of {panel}/{label}/{eps or 'non-private'} have different checkpoints")
        pseudo = np.array([[v for _, v in s] for s in series], dtype=np.float64)
        curves.append(_Curve(panel, algorithm, label, float(eps) if eps else None, rounds, pseudo))
    return curves


def _read_summary(path: Path) -> tuple[str | None, dict[str, str]]:
    """The title and the panel captions of a ``summary.json`` (a malformed one names the file)."""
    try:
        data = _strict_json(path.read_text(encoding="utf-8"))
        title = data.get("name")
        captions = {
            str(p["name"]): f"{p['caption']}, T={_short(int(p['horizon']))}" for p in data.get("panels", [])
        }
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        detail = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
        raise ParameterError(
            "results_dir", str(path), f"a {SUMMARY_FILE} written by dp-regret ({detail})"
        ) from None
    return (str(title) if title is not None else None), captions


def _colors(labels: Sequence[str]) -> dict[str, str]:
    """The paper's colour for each label where it has one (once per figure); tab10 otherwise."""
    wanted: dict[str, str | None] = {}
    for label in labels:
        color = PAPER_COLORS.get(label)
        if color is None:
            color = next((c for prefix, c in _PAPER_PREFIX_COLORS if label.startswith(prefix)), None)
        wanted[label] = color
    taken: set[str] = set()
    out: dict[str, str] = {}
    for label, color in wanted.items():
        if color is not None and color not in taken:
            out[label] = color
            taken.add(color)
    palette = [f"C{i}" for i in range(10)]  # matplotlib's tab10 cycle
    for n, label in enumerate(label for label in wanted if label not in out):
        free = [c for c in palette if c not in taken]
        out[label] = free[0] if free else palette[n % len(palette)]
        taken.add(out[label])
    return out


def _draw(
    cells: Sequence[tuple[str, float | None]],
    curves: Sequence[_Curve],
    captions: Mapping[str, str],
    title: str,
    path: Path,
    columns: int,
) -> Path:
    from matplotlib.figure import Figure

    rows = math.ceil(len(cells) / columns)
    cols = min(columns, len(cells))
    fig = Figure(figsize=(4.6 * cols, 3.6 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    colors = _colors(list(dict.fromkeys(c.label for c in curves)))
    for ax in axes.flat[len(cells) :]:
        ax.set_visible(False)
    for ax, (panel, eps) in zip(axes.flat, cells, strict=False):
        for curve in curves:
            if curve.panel != panel or (curve.epsilon is not None and curve.epsilon != eps):
                continue
            t = curve.rounds.astype(np.float64)
            average = curve.pseudo / t
            mean = average.mean(axis=0)
            color = colors[curve.label]
            ax.plot(t, mean, color=color, label=curve.label, linewidth=1.3)
            r = average.shape[0]
            if r > 1:
                half = _t_quantile(r) * average.std(axis=0, ddof=1) / math.sqrt(r)
                ax.fill_between(t, mean - half, mean + half, color=color, alpha=0.2, linewidth=0)
        caption = captions.get(panel, "")
        eps_text = f"ε = {eps:g}" if eps is not None else "non-private"
        ax.set_title(f"{panel}: {caption + ', ' if caption else ''}{eps_text}", fontsize=9)
        ax.set_xlabel("Round")
        ax.set_ylabel("Time-average regret")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"{title}: mean Reg(t)/t with 95% confidence bands", fontsize=10)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fig.savefig(tmp, format="png", dpi=110)
    os.replace(tmp, path)
    return path


def _short(n: int) -> str:
    """``1e6`` for 1000000, ``2.5e5`` for 250000, ``1234`` for 1234."""
    if n < 10**4:
        return str(n)
    digits = len(str(n)) - 1
    mantissa = n / 10**digits
    return f"{mantissa:g}e{digits}" if mantissa == round(mantissa, 3) else str(n)


def plot_results(out_dir: str | os.PathLike[str]) -> list[Path]:
    """Draw the time-average pseudo-regret ``Reg(t)/t`` of a results folder from its ``regret.csv``.

    One PNG per panel (``regret-<panel>.png``: a subplot per ε, a line per algorithm with its 95%
    confidence band ``mean ± t_{0.975, R-1} sd / sqrt(R)``; non-private algorithms appear in every
    subplot), and for several panels an overview ``regret.png`` with every panel and ε (Figure 1 of
    the paper is such a 2×3 grid). Colours are the paper's (spec §7.1).

    Parameters
    ----------
    out_dir : str or os.PathLike
        A results folder of :func:`run_experiment`.

    Returns
    -------
    list of pathlib.Path
        The PNG files written.
    """
    out = Path(out_dir)
    try:
        return _plot(out)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        valid = f"a readable and writable results folder ({where}{exc.strerror or exc})"
        raise ParameterError("results_dir", str(out), valid) from None


def _plot(out: Path) -> list[Path]:
    csv_path = out / CSV_FILE
    if not csv_path.is_file():
        raise ParameterError("results_dir", str(out), f"a results folder of dp-regret run (with {CSV_FILE})")
    curves = _read_curves(csv_path)
    if not curves:
        raise ParameterError("results_dir", str(out), f"a {CSV_FILE} with at least one row")
    captions: dict[str, str] = {}
    title = out.name
    summary = out / SUMMARY_FILE
    if summary.exists():
        named, captions = _read_summary(summary)
        title = named or title
    panels = list(dict.fromkeys(c.panel for c in curves))
    cells_of: dict[str, list[tuple[str, float | None]]] = {}
    for panel in panels:
        eps = list(dict.fromkeys(c.epsilon for c in curves if c.panel == panel and c.epsilon is not None))
        cells_of[panel] = [(panel, e) for e in eps] or [(panel, None)]
    written = [
        _draw(cells, curves, captions, f"{title} {panel}", out / f"regret-{panel}.png", len(cells))
        for panel, cells in cells_of.items()
    ]
    if len(panels) > 1:
        every = [cell for panel in panels for cell in cells_of[panel]]
        written.append(_draw(every, curves, captions, title, out / "regret.png", 3))
    return written
