"""Configuration of regret experiments: the TOML format, validated in one place into frozen values.

See :mod:`learners.experiment` for the results folder, seeds and execution.

The config format. Top-level keys (``*``: required)::

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
    bands          the band drawn around each mean regret curve: "ci95" (default, the 95%
                   Student-t interval) or "se" (±1 standard error, the papers' bands); plots only,
                   not part of the fingerprint (``dp-regret plot --bands`` overrides it)
    [instance]     kind* = gaussian-easy | gaussian-hard | bernoulli | beta | mslr, and
                   arms (K, default 10; synthetic kinds), means (bernoulli, beta: fixed for every
                   repetition; else drawn Uniform[0.25, 0.75] per repetition), concentration (beta,
                   default 10), path / clusters (K, default 50) / cluster_seed (default 0) (mslr;
                   without a path, the offline stand-in :func:`~learners.datasets.default_real_instance`)
    [[algorithms]] name* (a key of :data:`learners.mab.ALGORITHMS`), label, params (keywords of
                   :func:`learners.mab.make_learner`)
    [[panels]]     name*, and instance / horizon / epsilons overriding the top level
    [quick]        horizon (a cap on every panel's), repetitions, checkpoints: applied by ``quick``

Every key, with its type, default and valid range, is listed in the README's "Experiment config
reference" (a test checks that every key accepted here appears there).

A synthetic instance is drawn per repetition (as the paper's ``np.random.seed(run)``); Bernoulli or
Beta arms with given ``means`` and the real-data instance are shared by all repetitions.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from accounting import _validate as v
from accounting.noise import Skellam
from learners import mab
from learners.environments import BernoulliArms, BetaArms, MABInstance, gaussian_easy, gaussian_hard
from learners.errors import ConfigError, ParameterError, ParameterTypeError

if TYPE_CHECKING:
    pass

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The instance kinds of ``[instance] kind``.
INSTANCE_KINDS = ("gaussian-easy", "gaussian-hard", "bernoulli", "beta", "mslr")

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
    "bands",
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

#: The bands a plot can draw around a mean regret curve (``bands``): ``"ci95"``, the 95% Student-t
#: interval ``mean ± t_{0.975, R-1} sd / sqrt(R)``, or ``"se"``, ±1 standard error ``sd / sqrt(R)``
#: (the papers' figures; about half as wide at R = 20).
BANDS = ("ci95", "se")
DEFAULT_BANDS = "ci95"

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
            if self.path is None:
                return f"mslr stand-in (not MSLR-WEB10K), K={self.arms}"
            return f"mslr ({Path(self.path).name}), K={self.arms}"
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
            "bands": self.bands,
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
        """A hash of everything the numbers depend on (not the names, description, labels, the
        privacy route or the plots' bands)."""
        data = self.to_dict()
        del data["name"], data["description"], data["privacy_route"], data["bands"]
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
    bands = bands_name("bands", data.get("bands", DEFAULT_BANDS))

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
        bands,
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
