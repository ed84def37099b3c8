"""The family of the locally private bandits of Zheng, Cai, Huang, Li & Wang (2020; :mod:`learners.ldp`).

Instance kinds (:class:`LDPInstanceSpec`, each shared by the repetitions): ``ldp-quadratic``
(losses on the unit ball, for Algorithm 1 with a continuous base and Algorithm 2),
``ldp-bernoulli`` (Algorithm 1 with the UCB base), ``ldp-linear`` and ``ldp-movielens``
(Algorithm 5, LDP-LinUCB; MovieLens-100K as the official code's experiment, the paper having
none), ``ldp-glm`` (Algorithm 3, LDP-GLM). The regret is the pseudo-regret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Accountant
from learners import ldp, ldp_instances
from learners.budget import Cost, nbytes
from learners.errors import ConfigError, ParameterError, ParameterTypeError
from learners.families.base import MEANS, Answer, Family, PanelView, keys_of, keywords_of
from learners.ldp.engine import footprint as ldp_footprint
from learners.schema import MAX_SEED, REQUIRED, Field, Section

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
_ALGORITHMS: dict[str, tuple[str, bool]] = {
    "one-point": ("one-point", True),
    "two-point": ("two-point", True),
    "ldp-linucb": ("ldp-linucb", True),
    "ldp-glm": ("ldp-glm", True),
    "one-point-nonprivate": ("one-point", False),
    "two-point-nonprivate": ("two-point", False),
}
#: The instance kinds each ``learners.ldp`` algorithm runs on (``one-point``: by its base).
_KINDS = {
    "one-point": ("ldp-quadratic",),
    "one-point/ucb": ("ldp-bernoulli",),
    "two-point": ("ldp-quadratic",),
    "ldp-linucb": ("ldp-linear", "ldp-movielens"),
    "ldp-glm": ("ldp-glm",),
}

# ---------------------------------------------------------------------------------------
# The keys of [instance]: the synthetic instances of d = 5, K = 10 this project tests the
# learners on (Zheng et al. 2020 has no experiments), and the official code's MovieLens
# experiment (20 movies, rank 20)
# ---------------------------------------------------------------------------------------

_DIM = Field("dim", "integer", default=5, low=1, high=10_000, why="d x d matrices per repetition")
_ARMS = Field("arms", "integer", default=10, low=1, high=100_000)
_SEED = Field("instance_seed", "integer", default=0, low=0, high=MAX_SEED, why="numpy seeds are non-negative")
_PATH_WHAT = "an existing MovieLens-100K 'ua.base'-format file"

#: The LDP family's instance kinds.
SECTIONS: dict[str, Section] = {
    "ldp-quadratic": Section(
        "ldp-quadratic",
        (
            Field("convexity", "string", default="convex", choices=CONVEXITIES),
            _DIM,
            Field("mu", "number", default=1.0, low=0.0, low_open=True, when=("convexity", "strongly-convex")),
            Field(
                "minimizer",
                "numbers",
                default=None,
                low=-1.0,
                high=1.0,
                low_open=True,
                high_open=True,
                default_doc="(0.5/√d)(1, …, 1)",
                valid_doc="`dim` numbers, norm < 1",
            ),
            Field("perturbation", "number", default=0.0, low=0.0),
        ),
        "losses f_t(x) = ½(x − x*)ᵀdiag(a)(x − x*) + ⟨ζ_t, x − x*⟩ on the unit ball "
        "(`learners.ldp_instances`): `convex`, a = (1, …, 0) evenly spaced (not strongly convex); "
        "`strongly-convex`, a = μ (μ-strongly convex and μ-smooth); x* = `minimizer`, ζ_t uniform in the "
        "ball of radius `perturbation`; for `one-point` (continuous bases) and `two-point` (Zheng et al. "
        "2020, Algorithms 1, 2); shared by every repetition",
    ),
    "ldp-linear": Section(
        "ldp-linear",
        (
            _DIM,
            _ARMS,
            Field("noise", "number", default=0.1, low=0.0, high=1.0),
            _SEED,
        ),
        "a synthetic linear bandit (the model of Zheng et al. 2020, Section 4): K contexts uniform on the "
        "unit sphere each round, ‖θ*‖ = 1 (drawn from `instance_seed`), rewards xᵀθ* + U[−`noise`, "
        "`noise`]; for `ldp-linucb`",
    ),
    "ldp-glm": Section(
        "ldp-glm",
        (
            Field(
                "link",
                "string",
                default="logistic",
                choices=("logistic", "poisson"),
                refusal='one of "logistic", "poisson"',
            ),
            _DIM,
            _ARMS,
            _SEED,
        ),
        "a generalized linear bandit, y ~ Bernoulli(σ(xᵀθ*)) or Poisson(exp(xᵀθ*)); for `ldp-glm`",
    ),
    "ldp-movielens": Section(
        "ldp-movielens",
        (
            Field(
                "path",
                "path",
                default=None,
                refusal=_PATH_WHAT,
                default_doc="none: the stand-in",
            ),
            replace(_ARMS, default=20),
            Field(
                "rank",
                "integer",
                default=20,
                low=1,
                high=10_000,
                why="the SVD's rank is d",
                valid_doc="1 … `arms`: d",
            ),
        ),
        "the MovieLens-100K environment of the official code of Zheng et al. (2020): a `ua.base`-format file "
        "(user, item, rating, timestamp), its first `arms` movies, users with a rating among them, R ← 0.4(R "
        "− 2.5), the rank-`rank` SVD features, θ* = the singular values, a random user per round, noise-free "
        "rewards; without `path`, a deterministic synthetic stand-in of the same shape (not "
        'MovieLens; captions say "stand-in"); a missing or malformed file is an error naming `path` (the '
        "line); for `ldp-linucb`",
    ),
    "ldp-bernoulli": Section(
        "ldp-bernoulli",
        (
            replace(
                MEANS,
                default=REQUIRED,
                missing="the arms' reward means (K >= 2 numbers in [0, 1])",
                default_doc="",
            ),
        ),
        "Bernoulli arms with these *reward* means (as `bernoulli`); the learner minimizes the loss 1 − "
        "reward (the same pseudo-regret), a bit: each message clips it to [0, 1] (sensitivity 1); for "
        '`one-point` with `base = "ucb"`; the `mab` family\'s algorithms run it as `bernoulli` with these '
        "means (one config, both families)",
    ),
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
        for key in SECTIONS[self.kind].names():
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


def _ldp(panel: PanelView) -> LDPInstanceSpec:
    assert isinstance(panel.instance, LDPInstanceSpec), panel.instance
    return panel.instance


def _ldp_dim(spec: LDPInstanceSpec) -> int:
    """``d`` of an LDP instance (a Bernoulli instance's: 1, one loss per user)."""
    return spec.dim if spec.dim is not None else 1


def _statement(learner: ldp.Learner) -> str:
    """The claim of a private LDP learner, as Zheng et al. (2020) state it (Theorems 2, 5, 7, 9)."""
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


def _base_field(key: str, meaning: str, required_by: str = "", valid: str = "> 0") -> Field:
    default = f"required by {required_by}" if required_by else "the base's tuning"
    return Field(
        f"base_{key}",
        "integer" if key == "arms" else "number",
        meaning,
        default=None,
        default_doc=default,
        valid_doc=valid,
        algorithms=("one-point",),
        bad=("many", -1.0),
    )


#: ``params`` of the LDP family: the keywords of :func:`learners.ldp.make_learner`, and of the base
#: learner of Algorithm 1 (``base_<key>``).
PARAMS = Section(
    "ldp",
    (
        Field(
            "delta",
            "number",
            "the δ of the learner's (ε, δ)-LDP claim",
            default=None,
            default_doc='the top-level `delta` (private algorithms; none with `mechanism = "laplace"` or '
            '`"randomized-response"`)',
            valid_doc="(0, 1)",
            bad=(1.5, 0),
        ),
        Field(
            "mechanism",
            "string",
            "the users' randomizer: the Gaussian mechanism at (ε, δ), the Laplace mechanism (pure ε-LDP), "
            "or randomized response (pure ε-LDP: the loss rounded to a bit of its range — on "
            "`ldp-bernoulli` the loss bit itself — flipped with probability 1/(1 + e^ε) and decoded "
            "unbiasedly; the ledger holds `PureDP(ε)`, whose worst case is exactly this)",
            default="gaussian",
            valid_doc="`gaussian`, `laplace` (`one-point`, `two-point` only), `randomized-response` "
            "(`one-point` only)",
            algorithms=("one-point",),
            bad=("exponential",),
        ),
        Field(
            "mode",
            "string",
            "the paper's constants, or the official code's (σ = 4√(ln(1.25/δ))/ε at Y = 1, a factor √2 "
            "short of its stated (ε, δ); the bonus without the square root): `exact.epsilon` shows what it "
            "spends",
            default="paper",
            valid_doc="`paper`, `code` (`ldp-linucb` only)",
            algorithms=("ldp-linucb",),
            bad=("fast",),
        ),
        Field(
            "calibration",
            "string",
            "σ: the least multiplier the accountant certifies, or the paper's Dwork–Roth formula (proved "
            "only for ε < 1)",
            default="exact",
            choices=("exact", "classic"),
            bad=("loose",),
        ),
        Field(
            "base",
            "string",
            "Algorithm 1's black box: FKM (convex), Agarwal–Dekel–Xiao one-point (strongly convex), "
            "Saha–Tewari (convex, smooth), Hazan–Levy (strongly convex, smooth), UCB (stochastic MAB, on "
            "`ldp-bernoulli`)",
            default="fkm",
            default_doc='`"fkm"` (`one-point` only)',
            choices=tuple(LDP_BASES),
            algorithms=("one-point",),
            bad=("sgd",),
        ),
        _base_field("mu", "the base's strong convexity μ", "`adx`, `hazan-levy`"),
        _base_field("smoothness", "the base's smoothness β", "`saha-tewari`, `hazan-levy`"),
        _base_field("arms", "the UCB base's arms", "`ucb`", "the instance's K"),
        _base_field("rho", "overrides the base's ρ (`fkm`, `adx`)", valid="(0, 1)"),
        _base_field("eta", "overrides the base's η (`fkm`; the barrier bases)"),
        _base_field("rho0", "overrides the base's ρ_0 (`fkm`, `adx`)"),
        Field(
            "alpha",
            "number",
            "the failure probability α of Υ_t, β_t (contextual)",
            default=0.1,
            valid_doc="(0, 1)",
            algorithms=("ldp-linucb",),
            bad=(0, 1),
        ),
        Field(
            "bound",
            "number",
            "B: losses clipped to [−B, B]",
            default=None,
            default_doc="the instance's",
            valid_doc="> 0",
            algorithms=("one-point",),
            bad=(0, -1),
        ),
        Field(
            "lipschitz",
            "number",
            "G, the losses' Lipschitz constant",
            default=None,
            default_doc="the instance's",
            valid_doc="> 0",
            algorithms=("one-point",),
            bad=(0, -1),
        ),
        Field(
            "strong_convexity",
            "number",
            "`two-point`: μ for η_t = 1/(μt) (none: η = 1/√T)",
            default=None,
            valid_doc="> 0",
            algorithms=("two-point",),
            bad=(0, -1),
        ),
        Field(
            "eta",
            "number",
            "`two-point`: overrides η",
            default=None,
            default_doc="Theorem 6's choice",
            valid_doc="> 0",
            algorithms=("two-point",),
            bad=(0, -1),
        ),
        Field(
            "rho",
            "number",
            "`two-point`: overrides ρ",
            default=None,
            default_doc="Theorem 6's choice",
            valid_doc="(0, 1)",
            algorithms=("two-point",),
            bad=(0, 1.5),
        ),
        Field(
            "reward_bound",
            "number",
            "`ldp-linucb`: Y, rewards clipped to [−Y, Y] by the user (the code: 1)",
            default=2.0,
            valid_doc="> 0",
            algorithms=("ldp-linucb",),
            bad=(0, -1),
        ),
        Field(
            "gradient_bound",
            "number",
            "`ldp-glm`: C",
            default=None,
            default_doc="the link's C",
            valid_doc="> 0",
            algorithms=("ldp-glm",),
            bad=(0, -1),
        ),
        Field(
            "step",
            "number",
            "`ldp-glm`: ζ",
            default=None,
            default_doc="1/√T",
            valid_doc="> 0",
            algorithms=("ldp-glm",),
            bad=(0, -1),
        ),
        Field(
            "radius",
            "string",
            "`ldp-linucb`'s β_t: a radius derived from first principles (Zheng et al. 2020, Section 4), or "
            "the official code's",
            default=None,
            default_doc='`"code"` with `mode = "code"`, else `"derived"`',
            choices=("derived", "code"),
            algorithms=("ldp-linucb",),
            bad=("wide",),
        ),
        Field(
            "radius_scale",
            "number",
            "a factor on β_t (`ldp-glm`: κ)",
            default=1.0,
            valid_doc="> 0",
            algorithms=("ldp-linucb",),
            bad=(0, -1),
        ),
    ),
    "`learners.ldp.make_learner`, checked at every ε of every panel with the instance: the instance kind "
    "must be one the algorithm runs on, else `instance.kind` is refused",
)


class LDPFamily(Family):
    """The locally private bandit learners of Zheng, Cai, Huang, Li & Wang (2020), :mod:`learners.ldp`.

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

    **Streams** (:meth:`simulate`). :func:`learners.ldp.run` takes one generator for the privacy
    noise (``rng``, from which it spawns the learners' own stream) and one for the environment
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
    engine: ClassVar[ModuleType] = ldp
    algorithms: ClassVar[Mapping[str, bool]] = {n: p for n, (_, p) in _ALGORITHMS.items()}
    instance_sections: ClassVar[Mapping[str, Section]] = SECTIONS
    instance_keys: ClassVar[Mapping[str, tuple[str, ...]]] = keys_of(SECTIONS)
    params = (*keywords_of(ldp.Learner), *(f"base_{k}" for k in _BASE_KEYS))
    params_section = PARAMS
    unit_arrays = ("indefinite",)
    regret_label = ("pseudo-regret", "Reg(t)")
    learner_delta = True
    table_note = (
        "Claimed: the learner's (ε, δ)-LDP (ε-LDP with the Laplace mechanism or randomized response; holds: "
        "whether the run certifies it — mode 'code', the official code's σ, does not). Exact: the certified "
        "guarantee of the saved ledger (ledgers/: one user's release; each user reports once, so the run is "
        "as private as one release), by the accountant route named. Every ε is a certified upper bound, "
        "rounded up. Regret: the final time-average pseudo-regret Reg(T)/T, mean ± 95% CI half-width."
    )

    def params_of(self, name: str, params: dict[str, Any], delta: float) -> dict[str, Any]:
        """A private learner's ``delta`` defaults to the config's, unless its mechanism is pure
        (``params.mechanism = "laplace"`` or ``"randomized-response"``: no δ)."""
        if params.get("mechanism") in ldp.PURE_MECHANISMS:
            return params
        return super().params_of(name, params, delta)

    def instance_spec(
        self, where: str, kind: str, values: dict[str, Any], table: Mapping[str, Any]
    ) -> LDPInstanceSpec:
        """The spec (``ldp-movielens``: its ``rank`` is ``d``); a ``minimizer`` must be a point of
        dimension ``d``."""
        fields = dict(values)
        if kind == "ldp-movielens":
            fields["dim"] = fields.pop("rank")
        minimizer = fields.get("minimizer")
        if minimizer is not None and len(minimizer) != fields["dim"]:
            raise ConfigError(
                f"{where}.minimizer", table["minimizer"], f"a point of dimension d = {fields['dim']}"
            )
        return LDPInstanceSpec(kind, **fields)

    def instance_error_key(self, kind: str, name: str, table: Mapping[str, Any]) -> str:
        """The key a builder's parameter is given by (``d``, ``theta``: ``dim``; ``curvature``:
        ``mu``; MovieLens: the file, or its ``arms``), else ``dim`` (``means``)."""
        key = {"d": "dim", "theta": "dim", "curvature": "mu", "pool": "path"}.get(name, name)
        if kind == "ldp-movielens" and key not in ("arms", "rank"):
            key = "path" if "path" in table else "arms"
        keys = self.instance_sections[kind].names()
        if key not in keys:
            key = "dim" if "dim" in keys else "means"
        return key

    def learner(self, name: str, epsilon: float | None, params: Mapping[str, Any]) -> ldp.Learner:
        algorithm, _ = _ALGORITHMS[name]
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
            try:
                given["base"] = cls(**base_keys)
            except ParameterError as err:  # the base's own check (learners.ldp.bases), as params names it
                raise ParameterError(f"base_{err.name}", err.value, err.valid) from None
            except ParameterTypeError as err:
                raise ParameterTypeError(f"base_{err.name}", err.value, err.valid) from None
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

    def check(self, learner: Any, panel: PanelView, algorithm: int, epsilon_where: str) -> None:
        """The instance kind must be one the algorithm runs on (its base, for Algorithm 1; the UCB
        base's ``base_arms`` must be the instance's K), and its noise computed now: a setting it
        refuses is a config error before anything runs."""
        spec = _ldp(panel)
        where = f"algorithms[{algorithm}]"
        key = learner.name
        if key == "one-point" and isinstance(learner.base, ldp.UCB):
            key = "one-point/ucb"
        kinds = _KINDS[key]
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

    def cost(self, learner: Any, panel: PanelView, repetitions: int, checkpoints: int) -> Cost:
        """:func:`learners.ldp.engine.footprint`: the contextual learners' blocks of rounds
        (``T R K d²`` multiply-adds), the others' ``T R d``."""
        spec = _ldp(panel)
        K = spec.arms if spec.arms is not None else len(spec.means or ()) or 1
        d, T = _ldp_dim(spec), panel.horizon
        shapes, work = ldp_footprint(learner, repetitions, K, d, T, checkpoints)
        contextual = learner.name in ("ldp-linucb", "ldp-glm")
        formula = (
            f"T x R x K x d² = {T} x {repetitions} x {K} x {d}²"
            if contextual
            else f"T x R x d = {T} x {repetitions} x {d}"
        )
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
    ) -> ldp.RunResult:
        # the environment of the chunk: one draw from each repetition's tape (class docstring)
        words = [int(tape.integers(0, 2**63)) for tape in tapes]
        env = np.random.default_rng(np.random.SeedSequence(words))
        return ldp.run(
            learner,
            instances,
            horizon,
            rng=rng,
            repetitions=len(tapes),
            env_rng=env,
            checkpoints=checkpoints,
            delta=learner.delta if learner.delta is not None else delta,
        )

    def unit_meta(
        self, learner: Any, result: Any, *, instances: Any, horizon: int, repetitions: int
    ) -> dict[str, Any]:
        noise = result.noise
        return {
            "base": learner.base.name if learner.base is not None else None,
            "noise": {
                "kind": noise.kind,
                "calibration": noise.calibration,
                "sigma": noise.sigma,
                "multiplier": noise.multiplier,
                "messages": [asdict(m) for m in noise.messages],
            },
            "releases": {str(n): horizon * repetitions for n in result.ledgers},
            "mode": result.mode,
            "theta_hat_norm_max": float(result.theta_hat_norm.max()),
            "instance": getattr(instances, "name", type(instances).__name__),
        }

    def summary(
        self,
        learner: Any,
        panel: PanelView,
        arrays: Mapping[str, NDArray[Any]],
        metas: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        dim = _ldp_dim(_ldp(panel))
        reals = {"one-point": 1, "two-point": 1, "ldp-linucb": dim * (dim + 1) // 2 + dim}
        per_user = reals.get(learner.name, dim * (dim + 1) // 2 + 2 * dim)
        return {
            "communication": {"messages_per_user": 1, "reals_per_user": per_user},
            "indefinite_mean": float(arrays["indefinite"].mean()),
            "theta_hat_norm_max": max(float(m["theta_hat_norm_max"]) for m in metas),
            "mode": metas[0]["mode"],
            "base": metas[0]["base"],
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
        """:func:`learners.ldp.privacy_of` the ledger (one user's release) by ``route``; the exact
        block answers it as a pure ε where the mechanism is pure (Laplace, randomized response)."""
        noise = ldp.noise_of(learner, _ldp(panel).build_shared(), panel.horizon)
        account = ldp.privacy_of(learner, noise, dict(ledgers), delta, route)
        return Answer(
            account,
            extra={"users": int(sum(releases.values()))},
            exact={"pure": noise.kind in ldp.PURE_MECHANISMS, "what": "users"},
            exact_extra={"certified": account.certified},
            statement=_statement(learner) if learner.private else "",
        )


__all__ = ["CONVEXITIES", "LDP_BASES", "PARAMS", "SECTIONS", "LDPFamily", "LDPInstanceSpec"]
