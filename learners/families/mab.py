"""The family of the distributed MAB learners (Chowdhury & Zhou 2023; :mod:`learners.mab`).

Instance kinds ``gaussian-easy``, ``gaussian-hard``, ``bernoulli``, ``beta`` (synthetic, drawn per
repetition as the paper's ``np.random.seed(run)``, unless Bernoulli or Beta arms have fixed
``means``) and ``mslr`` (K-means clusters of an MSLR-WEB10K-format file, the paper's Section 7
real-data instance, or its offline stand-in; shared by every repetition). The regret is the
pseudo-regret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Accountant
from accounting.noise import Skellam
from accounting.papers.distributed_dp_mab import protocol_parameters
from learners import mab, privacy
from learners.budget import Cost, nbytes
from learners.datasets import default_real_instance, letor_rows, mslr_instance
from learners.environments import BernoulliArms, BetaArms, MABInstance, gaussian_easy, gaussian_hard
from learners.errors import ConfigError, ParameterError, ParameterTypeError
from learners.families.base import MEANS, Family, PanelView, algorithms_of, keys_of, keywords_of
from learners.mab.engine import PULL_OPERATIONS
from learners.mab.engine import footprint as mab_footprint
from learners.protocols import Protocol
from learners.schema import MAX_ARMS, MAX_CURVE_POINTS, WHY_ARMS, Field, Section

_DEFAULT_CONCENTRATION = 10.0

#: The largest variance of an aggregate's noise a run draws: the samplers draw int64 values, and
#: numpy's Poisson (behind Skellam, two rates of half the variance) takes rates below 9.2e18.
MAX_NOISE_VARIANCE = 1.8e19


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


# ---------------------------------------------------------------------------------------
# The keys: [instance] of each kind, and params
# ---------------------------------------------------------------------------------------

_ARMS = Field("arms", "integer", default=10, low=2, high=MAX_ARMS, why=WHY_ARMS)
_GIVEN_ARMS = replace(_ARMS, default_doc="10 or the number of `means`")
_SYNTHETIC = "rewards N(μ, 0.1²) clipped to [0, 1] (Chowdhury & Zhou 2023, Section 7)"

#: The MAB family's instance kinds.
SECTIONS: dict[str, Section] = {
    "gaussian-easy": Section(
        "gaussian-easy",
        (_ARMS,),
        f"K arms, means i.i.d. Uniform[0.25, 0.75] drawn per repetition, {_SYNTHETIC}",
    ),
    "gaussian-hard": Section("gaussian-hard", (_ARMS,), "the same with means Uniform[0.45, 0.55]"),
    "bernoulli": Section(
        "bernoulli",
        (_GIVEN_ARMS, MEANS),
        "Bernoulli rewards; given `means` are shared by every repetition, else means Uniform[0.25, 0.75] "
        "per repetition; with `means`, the `ldp` family's algorithms run it as `ldp-bernoulli`",
    ),
    "beta": Section(
        "beta",
        (
            _GIVEN_ARMS,
            replace(MEANS, refusal="", low_open=True, high_open=True),
            Field("concentration", "number", default=_DEFAULT_CONCENTRATION, low=0.0, low_open=True),
        ),
        "Beta(μc, (1 − μ)c) rewards with mean μ",
    ),
    "mslr": Section(
        "mslr",
        (
            Field(
                "path",
                "path",
                default=None,
                refusal="an existing MSLR-WEB10K-format file",
                default_doc="none: the stand-in",
            ),
            Field("clusters", "integer", default=50, low=2, high=MAX_ARMS, why=WHY_ARMS),
            Field(
                "cluster_seed", "integer", default=0, low=0, high=2**32 - 1, why="K-means seeds are 32-bit"
            ),
        ),
        "real data: K-means clusters of an MSLR-WEB10K-format file (one fold's train + vali + test "
        "concatenated; a relative `path` is taken from the config's folder), K = `clusters` (Chowdhury & "
        "Zhou 2023, Section 7); without `path`, an offline stand-in built the same way from scikit-learn's "
        'diabetes data (not MSLR-WEB10K: `run`/`reproduce` say so on stderr, captions say "stand-in")',
    ),
}

#: ``params`` of the MAB family: the keywords of :func:`learners.mab.make_learner`.
PARAMS = Section(
    "mab",
    (
        Field(
            "scaling",
            "number",
            "the scaling factor s of the Skellam / discrete Gaussian shares (Chowdhury & Zhou 2023, "
            "Theorems 2, 4)",
            default=None,
            default_doc="required by `dist-rdp-se` and `dist-cdp-se`; refused by the others",
            valid_doc="≥ 1",
            algorithms=("dist-rdp-se", "dist-cdp-se"),
            bad=(0.5, "ten"),
        ),
        Field(
            "growth",
            "integer",
            "η of the batch sizes l(b) = η^b (for `dp-se`, the dc of Δ_e = dc^−e)",
            default=4,
            default_doc="4; 2 for `dp-se`",
            valid_doc="2 or 4",
            bad=(3, 2.5),
        ),
        Field(
            "forgetting",
            "boolean",
            "estimate from the current batch only (Algorithm 1); `false` pools all past batches of the arm",
            default=True,
            valid_doc="`true`, `false`",
            bad=("yes",),
        ),
        Field(
            "p_beta",
            "number",
            "p in the confidence radius β of eq. (2)",
            default=0.1,
            valid_doc="(0, 1]",
            bad=(0, 1.5),
        ),
        Field(
            "p_tau",
            "number",
            "p in the analyzer's accuracy τ (the protocol variants; the authors' code uses 0.1)",
            default=None,
            default_doc="1/T",
            valid_doc="(0, 1]",
            algorithms=("dist-dp-se",),
            bad=(0, 1.5),
        ),
        Field(
            "radius_scale",
            "number",
            "multiplier of the confidence radius",
            default=1.0,
            valid_doc="> 0",
            bad=(0, -1),
        ),
        Field(
            "noise",
            "string",
            "`total` draws each aggregate's total noise at once (fast, equal in distribution); `shares` "
            "runs the user-level protocol (every share, secure aggregation or the shuffler); the protocol "
            "variants only (`dp-se`, `se` ignore it)",
            default="total",
            choices=("total", "shares"),
            algorithms=("dist-dp-se",),
            bad=("half",),
        ),
        Field(
            "exact",
            "boolean",
            "draw the noise with the exact integer samplers (slow)",
            default=False,
            valid_doc='`true` only with `noise = "shares"`',
            algorithms=("dist-dp-se",),
            bad=(True,),
        ),
        Field(
            "dropout",
            "number",
            "the fraction of each aggregate's users whose message is lost; the survivors top up the noise",
            default=0,
            valid_doc='[0, 1/2), non-zero only with `noise = "shares"`',
            algorithms=("dist-dp-se",),
            bad=(0.1, -0.1),
        ),
    ),
    "each checked by `make_learner` at every ε of every panel, with the protocol parameters of the first "
    "and last batch",
)


class MABFamily(Family):
    """The distributed MAB paper's learners (Chowdhury & Zhou 2023; :mod:`learners.mab`)."""

    name = "mab"
    engine: ClassVar[ModuleType] = mab
    algorithms: ClassVar[Mapping[str, bool]] = algorithms_of(mab)
    instance_sections: ClassVar[Mapping[str, Section]] = SECTIONS
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]] = keys_of(SECTIONS)
    params = keywords_of(mab.Learner)
    params_section = PARAMS
    old_params = mab.OLD_PARAMS
    unit_arrays = ("released", "final_arms")
    regret_label = ("pseudo-regret", "Reg(t)")
    builds_on_load = False  # a synthetic instance is drawn per repetition, a real one built by the run
    table_note = (
        "Claimed: the guarantee of the variant's theorem (— where its hypotheses do not hold). Exact: the "
        "certified guarantee of the run's saved ledgers (ledgers/), worst over the released batch sizes, and "
        "the accountant route that answered it. Every ε is a certified upper bound, rounded up. Regret: the "
        "final time-average pseudo-regret Reg(T)/T, mean ± 95% CI half-width."
    )

    def instance_spec(
        self, where: str, kind: str, values: dict[str, Any], table: Mapping[str, Any]
    ) -> InstanceSpec:
        """The spec; given ``means`` fix ``K`` (``arms``, if given, must be their number)."""
        if kind == "mslr":
            if values["path"] is not None:
                # the file is read (and clustered) by the run; its rows are counted now, so that a
                # file that is not one, or fewer rows than clusters, is refused with the config
                try:
                    rows = letor_rows(values["path"])
                except (ParameterError, ParameterTypeError) as err:
                    raise ConfigError(f"{where}.path", table.get("path"), err.valid) from None
                if values["clusters"] > rows:
                    raise ConfigError(
                        f"{where}.clusters",
                        values["clusters"],
                        f"at most the number of rows of the file {table.get('path')!r} ({rows}): one "
                        "K-means cluster per arm",
                    )
            return InstanceSpec(
                kind, values["clusters"], path=values["path"], cluster_seed=values["cluster_seed"]
            )
        means, arms = values.get("means"), values["arms"]
        if means is not None and "arms" not in table:
            arms = self.instance_sections[kind]["arms"].parse(f"{where}.arms", len(means))
        elif means is not None and arms != len(means):
            raise ConfigError(f"{where}.arms", arms, f"the number of means, {len(means)}")
        return InstanceSpec(kind, arms, means=means, concentration=values.get("concentration"))

    def check_panel(
        self, instance: Any, *, where: str, horizon: int, horizon_where: str, repetitions: int, chunk: int
    ) -> None:
        if horizon < instance.arms:
            raise ConfigError(horizon_where, horizon, f"a horizon T >= K = {instance.arms} (K of {where})")
        if repetitions * instance.arms > MAX_CURVE_POINTS:
            raise ConfigError(
                "repetitions",
                repetitions,
                f"repetitions x arms <= {MAX_CURVE_POINTS:.0e} (= {repetitions} x {instance.arms} here: "
                "the learner keeps per-arm statistics of every repetition in memory)",
            )

    def check(self, learner: Any, panel: PanelView, algorithm: int, epsilon_where: str) -> None:
        """The protocol parameters of the first and the last full batch, computed now: a setting they
        cannot take (a noise beyond the samplers, an encoding beyond 2^53) is a config error before
        anything runs, naming the setting, not a failure in the middle of the run."""
        if learner.variant is None or learner.epsilon is None:
            return
        horizon = panel.horizon
        where = f"algorithms[{algorithm}]"
        sizes = {learner.eta}
        while max(sizes) * learner.eta <= horizon:
            sizes.add(max(sizes) * learner.eta)
        variance = 0.0
        try:
            for n in (min(sizes), max(sizes)):
                par = protocol_parameters(
                    learner.variant, learner.epsilon, n, horizon, scaling=learner.scaling, p=learner.p_tau
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
            field = f"{where}.params.{err.name}" if err.name in ("scaling", "p") else epsilon_where
            if err.name == "g" and learner.scaling is not None:
                field = f"{where}.params.scaling"
            value = learner.scaling if field.endswith("scaling") else learner.epsilon
            raise ConfigError(field, value, f"settings the protocol can take ({err})") from None
        if not variance <= MAX_NOISE_VARIANCE:
            field = f"{where}.params.scaling" if learner.scaling is not None else epsilon_where
            raise ConfigError(
                field,
                learner.scaling if learner.scaling is not None else learner.epsilon,
                f"a Skellam protocol noise of variance at most {MAX_NOISE_VARIANCE:g} per aggregate (this "
                f"one has {variance:.3g}: numpy's Poisson sampler takes rates below 9.2e18)",
            )

    def cost(self, learner: Any, panel: PanelView, repetitions: int, checkpoints: int) -> Cost:
        """:func:`learners.mab.engine.footprint`: per-arm statistics, and every user's value of a
        batch with ``noise = "shares"``; ``T R`` simulated pulls."""
        K, T = panel.instance.arms, panel.horizon
        shapes, work = mab_footprint(learner, repetitions, K, T, checkpoints)
        formula = f"T x R pulls of {PULL_OPERATIONS} operations = {T} x {repetitions} x {PULL_OPERATIONS}"
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
    ) -> mab.RunResult:
        return mab.run(
            learner, instances, horizon, tapes=tapes, rng=rng, checkpoints=checkpoints, delta=delta
        )

    def unit_meta(
        self, learner: Any, result: Any, *, instances: Any, horizon: int, repetitions: int
    ) -> dict[str, Any]:
        return {
            "releases": {str(n): int(k) for n, k in result.releases.items()},
            "bits": int(result.bits),
            "batch_sizes": [int(n) for n in result.batch_sizes],
        }

    def summary(
        self,
        learner: Any,
        panel: PanelView,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        return {
            "bits_per_user_per_batch": max(int(m["bits"]) for m in metas),
            "batch_sizes": sorted({int(n) for m in metas for n in m["batch_sizes"]}),
            "released_mean": float(arrays["released"].mean()),
            "final_arms_mean": float(arrays["final_arms"].mean()),
        }

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
        """The privacy of a (panel, algorithm, ε): its merged ledgers (saved as ``files``), answered.

        ``epsilon``, ``delta``, ``batches``, ... are :func:`learners.mab.privacy_of` by the config's
        ``route``; ``claimed`` is the variant's theorem (Chowdhury & Zhou 2023, Theorems 1-6);
        ``exact`` is :func:`learners.mab.exact_privacy` by the ``exact`` mode (under
        :data:`learners.privacy.EXACT_BUDGET`, unless both ask for ``"auto"``: exact answers at any
        cost, which :func:`learners.mab.privacy_of` computes anyway).
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


__all__ = ["MAX_NOISE_VARIANCE", "PARAMS", "SECTIONS", "InstanceSpec", "MABFamily"]
