"""Private batched successive elimination for multi-armed bandits, in every trust model.

Algorithm 1 of the distributed MAB paper (Chowdhury & Zhou 2023; spec §4.1): batch ``b`` pulls each
active arm ``l(b) = η^b`` times (``η`` = ``growth``, 2 or 4), one new user per pull; the ``l(b)``
rewards of an arm go through the protocol of the variant's theorem (:mod:`learners.protocols`,
parameters from :func:`accounting.calibration.protocol_parameters`); the analyzer's estimate
``μ̂ = z / l(b)`` and the radius ``β(b)`` of eq. (2) eliminate every arm whose UCB is below the
largest LCB (non-strict, so the empirical best arm survives). The last, partial batch is never
aggregated nor released (spec §4.1, §9.5).

Variants (:data:`ALGORITHMS`):

======================  ==========  ====================================================
name                    theorem     noise
======================  ==========  ====================================================
``dist-dp-se``          1           Pólya shares, secure aggregation, ε-DP
``dist-rdp-se``         2           Skellam shares (scale ``s``), RDP
``shuffle-dp-se``       3           Pólya shares at ε/2, shuffling, ε-DP
``dist-cdp-se``         4           discrete Gaussian shares (scale ``s``), zCDP
``cdp-se``              5           discrete Laplace at a trusted server (central DP)
``ldp-se``              6           discrete Laplace at every user (local DP)
``dp-se``               —           Sajed & Sheffet 2019 as the experiments run it (§4.7)
``se``                  —           no privacy (§4.8)
======================  ==========  ====================================================

**Vectorization.** The state of all ``R`` repetitions is held in arrays with a leading axis ``R``
(active sets ``(R, K)``, estimates, radii); the noise of a batch is one draw of shape ``(R, K)``.
The pulls of a batch are one array operation per repetition — each repetition reads its own
reward tape (common random numbers, :mod:`learners.environments`) — in chunks of at most
:data:`CHUNK` rounds, so memory stays bounded for any horizon. No Python loop runs over users
or rounds.

**Noise paths.** ``noise="total"`` (the default, fast) draws each aggregate's *total* noise directly
(equal in distribution: ``n`` Pólya(1/n, β) differences sum to ``Lap_Z`` with decay ``β``; Skellam
shares to the Skellam with ``n`` times the rates; local discrete Laplace shares to a difference of
negative binomials; discrete Gaussian shares are summed) and releases ``y = (Σ x̂ + η) mod m`` to
the analyzer; ``noise="shares"`` runs :class:`learners.protocols.Protocol` user by user (every
share, secure aggregation, the shuffler, dropouts with top-up). Both encode every reward with
randomized rounding (``x̂_i``) and decode with the analyzer's ``τ`` rule, so decoding failures
happen as they would in deployment.

**Privacy.** Every user takes part in one batch of one arm, so the run's privacy is that of a
single release (parallel composition, spec §3.5): :attr:`RunResult.privacy` gives, per released
batch size, the guarantee of its theorem — ε of pure DP (Theorems 1, 3, 5, 6; Laplace for DP-SE),
the RDP curve of Lemma 3 converted to ``(ε, δ)`` (Theorem 2), ``ρ``-zCDP (Theorem 4) — and the
worst over the run. :meth:`RunResult.ledger` gives the :class:`~accounting.accountant.Accountant`
of one user of a batch (that batch's release events), for any other question about it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import bounds, conversion
from accounting.accountant import Accountant, Event
from accounting.calibration import ProtocolParameters, protocol_parameters
from accounting.calibration import Variant as _CalVariant
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism
from accounting.noise import (
    DiscreteGaussian,
    DiscreteLaplace,
    Laplace,
    Polya,
    Skellam,
)
from learners.environments import MABInstance
from learners.errors import ParameterError, ParameterTypeError
from learners.protocols import BIG_MODULUS, Protocol, _integer, analyze, encode, release_mechanisms

__all__ = [
    "ALGORITHMS",
    "CHUNK",
    "NOISE_PATHS",
    "Learner",
    "Privacy",
    "RunResult",
    "Variant",
    "confidence_radius",
    "make_learner",
    "run",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

#: Rounds of one repetition processed at once (bounds the memory of a batch: ~10 arrays of this).
CHUNK = 2**21


@dataclass(frozen=True)
class Variant:
    """An entry of :data:`ALGORITHMS`."""

    #: The theorem of the distributed MAB paper (``None`` for ``dp-se`` and ``se``).
    theorem: int | None
    #: The display label of the paper's figures.
    label: str
    #: Whether the variant takes an ε (every one but ``se``).
    private: bool = True
    #: Whether it takes a scaling factor ``s`` (Theorems 2 and 4).
    scaled: bool = False


#: The variants: name -> (theorem, display label, ...).
ALGORITHMS: dict[str, Variant] = {
    "dist-dp-se": Variant(1, "Dist-DP-SE"),
    "dist-rdp-se": Variant(2, "Dist-RDP-SE", scaled=True),
    "shuffle-dp-se": Variant(3, "Shuffle-DP-SE"),
    "dist-cdp-se": Variant(4, "Dist-CDP-SE", scaled=True),
    "cdp-se": Variant(5, "CDP-SE"),
    "ldp-se": Variant(6, "LDP-SE"),
    "dp-se": Variant(None, "DP-SE"),
    "se": Variant(None, "SE", private=False),
}

#: ``"total"``: each aggregate's total noise in one draw; ``"shares"``: the user-level protocol.
NOISE_PATHS = ("total", "shares")


def _real(name: str, value: object, low: float, high: float = math.inf, *, open_low: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ParameterTypeError(name, value, "a real number")
    x = float(value)
    ok = (x > low if open_low else x >= low) and x <= high and math.isfinite(x)
    if not ok:
        lo = "(" if open_low else "["
        hi = f"{high:g}]" if math.isfinite(high) else "inf)"
        raise ParameterError(name, value, f"a real number in {lo}{low:g}, {hi}")
    return x


@dataclass(frozen=True)
class Learner:
    """One algorithm with all its settings (a value; build it with :func:`make_learner`).

    Attributes
    ----------
    name : str
        A key of :data:`ALGORITHMS`.
    epsilon : float or None
        The privacy level ε (``None`` only for ``"se"``).
    scale : float or None
        The scaling factor ``s >= 1`` of Theorems 2 and 4 (``None`` otherwise).
    growth : int or None
        ``η`` in ``l(b) = η^b`` (2 or 4; Figures 1–3, 5 use 4, Figure 4 uses 2). For ``dp-se`` it is
        the ``dc`` of ``Δ_e = dc^{-e}`` (spec §4.7 uses 2 in every figure). ``None``: 4, and 2 for
        ``dp-se``.
    forgetting : bool
        Estimate from the current batch only (Algorithm 1). ``False`` uses all past batches of the
        arm: ``μ̂ = Σ_b z_b / Σ_b l(b)`` with radius ``sqrt(ln(4|Φ|b²/p)/(2L)) + Σ_b N_b / L``.
    p_beta : float
        ``p`` in the radius β of eq. (2) (experiments: 0.1).
    p_tau : float or None
        ``p`` in the analyzer's accuracy ``τ`` (``None``: the theory's ``1/T``; the released code
        uses 0.1).
    crs : float
        Multiplier of the confidence radius (experiments: 1).
    noise : {"total", "shares"}
        See the module docstring.
    exact : bool
        Draw noise with the exact integer samplers (slow; for the ``"shares"`` path and audits).
    dropout : float
        With ``noise="shares"``: the fraction of each aggregate's users (rounded down, chosen at
        random) whose message never arrives; the survivors top the noise up
        (:class:`~learners.protocols.Protocol`). Below 1/2, so secure aggregation's majority
        threshold can always recover the dropped users' masks.
    """

    name: str
    epsilon: float | None = None
    scale: float | None = None
    growth: int | None = None
    forgetting: bool = True
    p_beta: float = 0.1
    p_tau: float | None = None
    crs: float = 1.0
    noise: str = "total"
    exact: bool = False
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if self.name not in ALGORITHMS:
            raise ParameterError("algorithm", self.name, "one of " + ", ".join(ALGORITHMS))
        variant = ALGORITHMS[self.name]
        if variant.private:
            if self.epsilon is None:
                raise ParameterError("epsilon", None, f"a privacy level ε > 0 (required by '{self.name}')")
            object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon, 0.0))
        elif self.epsilon is not None:
            raise ParameterError("epsilon", self.epsilon, f"None for the non-private '{self.name}'")
        if variant.scaled:
            if self.scale is None:
                raise ParameterError("scale", None, f"a scaling factor s >= 1 (required by '{self.name}')")
            object.__setattr__(self, "scale", _real("scale", self.scale, 1.0, open_low=False))
        elif self.scale is not None:
            raise ParameterError("scale", self.scale, f"None ('{self.name}' has no scaling factor s)")
        if self.growth is None:
            object.__setattr__(self, "growth", 2 if self.name == "dp-se" else 4)
        if self.growth not in (2, 4) or isinstance(self.growth, bool):
            raise ParameterError("growth", self.growth, "2 or 4 (batch size l(b) = growth**b)")
        if not isinstance(self.forgetting, bool):
            raise ParameterTypeError("forgetting", self.forgetting, "a bool")
        object.__setattr__(self, "p_beta", _real("p_beta", self.p_beta, 0.0, 1.0))
        if self.p_tau is not None:
            object.__setattr__(self, "p_tau", _real("p_tau", self.p_tau, 0.0, 1.0))
        object.__setattr__(self, "crs", _real("crs", self.crs, 0.0))
        if self.noise not in NOISE_PATHS:
            raise ParameterError("noise", self.noise, "one of " + ", ".join(NOISE_PATHS))
        if not isinstance(self.exact, bool):
            raise ParameterTypeError("exact", self.exact, "a bool")
        if self.exact and self.noise != "shares":
            raise ParameterError(
                "exact", self.exact, "False unless noise='shares' (exact samplers draw shares)"
            )
        object.__setattr__(self, "dropout", _real("dropout", self.dropout, 0.0, 0.5, open_low=False))
        if self.dropout >= 0.5:
            raise ParameterError("dropout", self.dropout, "a fraction in [0, 1/2)")
        if self.dropout and self.noise != "shares":
            raise ParameterError("dropout", self.dropout, "0 unless noise='shares' (dropouts are user-level)")

    @property
    def theorem(self) -> int | None:
        """The theorem of the distributed MAB paper (``None`` for ``dp-se`` and ``se``)."""
        return ALGORITHMS[self.name].theorem

    @property
    def eta(self) -> int:
        """The resolved ``growth``."""
        assert self.growth is not None
        return self.growth

    @property
    def label(self) -> str:
        """A display label such as ``Dist-RDP-SE(s=10)``."""
        base = ALGORITHMS[self.name].label
        return f"{base}(s={self.scale:g})" if self.scale is not None else base


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them."""
    known = set(Learner.__dataclass_fields__) - {"name", "epsilon"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ParameterError(unknown[0], params[unknown[0]], "one of " + ", ".join(sorted(known)))
    return Learner(name, epsilon, **params)


@dataclass(frozen=True)
class Privacy:
    """What a run spent: the guarantee of its theorem for each released batch size, and the worst.

    Attributes
    ----------
    model : str
        ``"distributed"``, ``"shuffle"``, ``"central"``, ``"local"`` or ``"none"``.
    notion : str
        ``"pure"`` (ε-DP, ``delta == 0``), ``"rdp"`` (Lemma 3 converted to ``(ε, δ)``), ``"zcdp"``
        (``ρ``-zCDP converted to ``(ε, δ)``) or ``"none"``.
    epsilon : float
        The certified ε of the run (the worst single release; ``inf`` for ``"se"``; 0 if nothing
        was released).
    delta : float
        The δ that goes with ``epsilon`` (0 for pure DP).
    rho : float or None
        The worst ``ρ`` (zCDP) for Theorem 4.
    batches : tuple of (int, float)
        ``(n, ε)`` for each distinct released batch size ``n``.
    statement : str
        The theorem and what it says.
    """

    model: str
    notion: str
    epsilon: float
    delta: float
    rho: float | None
    batches: tuple[tuple[int, float], ...]
    statement: str


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of :func:`run` for ``R`` repetitions (arrays read-only).

    Attributes
    ----------
    learner : Learner
    horizon : int
    rounds : numpy.ndarray of int64, shape (C,)
        Checkpoints: regret after this many rounds.
    pseudo_regret : numpy.ndarray of float64, shape (R, C)
        ``Σ_{s <= t} Δ_{a_s}``.
    realized_regret : numpy.ndarray of float64, shape (R, C)
        ``Σ_{s <= t} r_s(a*) - r_s(a_s)`` from the same reward tape.
    released : numpy.ndarray of int64, shape (R,)
        Aggregates released per repetition.
    final_arms : numpy.ndarray of int64, shape (R,)
        Active arms left at the end.
    batch_sizes : tuple of int
        The distinct batch sizes released in some repetition.
    bits : int
        Bits each user sends (the largest over released batches; 0 without a protocol).
    privacy : Privacy
    """

    learner: Learner
    horizon: int
    rounds: IntArray
    pseudo_regret: FloatArray
    realized_regret: FloatArray
    released: IntArray
    final_arms: IntArray
    batch_sizes: tuple[int, ...]
    bits: int
    privacy: Privacy

    dropped: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    topped_up: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def ledger(self, batch_size: int) -> Accountant:
        """The ledger of one user of a released batch of ``batch_size``: the events of that one
        release (each user is in one batch of one arm, so this is all that user's privacy)."""
        n = _integer("batch_size", batch_size, 1)
        accountant = Accountant()
        for mechanism in _release_mechanisms(self.learner, n, self.horizon):
            accountant.compose(Event(mechanism, 1))
        return accountant


# ---------------------------------------------------------------------------------------
# Parameters and privacy of one batch
# ---------------------------------------------------------------------------------------


@cache
def _params(learner: Learner, n: int, horizon: int) -> ProtocolParameters:
    theorem = learner.theorem
    assert theorem is not None
    assert learner.epsilon is not None
    variant = _CalVariant.from_theorem(theorem)  # (transitional: replaced by the variant itself)
    return protocol_parameters(variant, learner.epsilon, n, horizon, scale=learner.scale, p=learner.p_tau)


def _release_mechanisms(learner: Learner, n: int, horizon: int) -> tuple[Mechanism, ...]:
    if learner.theorem is not None:
        return release_mechanisms(_params(learner, n, horizon))
    if learner.name == "dp-se":
        assert learner.epsilon is not None
        return (AdditiveNoise(Laplace(1 / Fraction(learner.epsilon)), 1.0),)
    return ()


def _float_down(value: Fraction) -> float:
    f = float(value)
    return math.nextafter(f, 0.0) if Fraction(f) > value else f


_MODELS = {1: "distributed", 2: "distributed", 3: "shuffle", 4: "distributed", 5: "central", 6: "local"}


@cache
def _batch_privacy(learner: Learner, n: int, horizon: int, delta: float) -> tuple[float, float | None]:
    """``(ε, ρ)`` of one release of a batch of ``n`` users, by the variant's theorem."""
    theorem = learner.theorem
    if theorem == 2:
        # Lemma 3 (AKL 2021 Thm 3.5) at integer orders, with the actual g and the exact total
        # variance n·Var(share) rounded down; converted by Lemma 10 (CKS Prop. 12).
        p = _params(learner, n, horizon)
        assert isinstance(p.share, Skellam)
        variance = _float_down(n * (Fraction(p.share.mu1) + Fraction(p.share.mu2)))
        eps, _ = conversion.optimize_rdp_order(
            lambda a: bounds.skellam_rdp_akl(int(a), variance, p.g), delta, alpha_min=2, integer=True
        )
        return eps, None
    if theorem == 4:
        # Lemma 4 (Kairouz-Liu-Steinke 2021 Prop. 13) with σ rounded down; CKS 2020 conversion.
        p = _params(learner, n, horizon)
        assert isinstance(p.share, DiscreteGaussian)
        rho = bounds.sum_discrete_gaussians_rho_kls(_float_down(Fraction(p.share.sigma)), n, p.g)
        return conversion.zcdp_to_dp_cks(rho, delta), rho
    accountant = Accountant()
    for mechanism in _release_mechanisms(learner, n, horizon):
        accountant.compose(mechanism)
    return float(accountant.epsilon(delta, route="pure").value.upper), None


_STATEMENTS = {
    1: "Theorem 1: (ε, 0)-DP; Pólya shares sum to Lap_Z(g/ε) under secure aggregation",
    2: "Theorem 2: RDP of the Skellam sum by Lemma 3 (integer orders, actual g), "
    "converted to (ε, δ) by Lemma 10",
    3: "Theorem 3: (ε, 0)-DP via shuffling; ε/2 for the modular sum plus ε/2 for relaxed SecAgg",
    4: "Theorem 4: ρ-zCDP of the discrete Gaussian sum by Lemma 4, converted to (ε, δ) (CKS 2020)",
    5: "Theorem 5: (ε, 0) central DP; the trusted server adds Lap_Z(g/ε)",
    6: "Theorem 6: (ε, 0) local DP; every message carries Lap_Z(g/ε)",
}


def privacy_of(learner: Learner, batch_sizes: Sequence[int], horizon: int, delta: float = 1e-6) -> Privacy:
    """The privacy of a run that released batches of these sizes (parallel composition: the worst)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.mab.Learner")
    d = _real("delta", delta, 0.0, 1.0)
    if d >= 1:
        raise ParameterError("delta", delta, "a probability in (0, 1)")
    sizes = tuple(sorted({_integer("batch_sizes", n, 1) for n in batch_sizes}))
    theorem = learner.theorem
    if learner.name == "se":
        return Privacy("none", "none", math.inf, 0.0, None, (), "no privacy (non-private elimination)")
    per = [(n, *_batch_privacy(learner, n, horizon, d)) for n in sizes]
    worst = max((e for _, e, _ in per), default=0.0)
    rhos = [r for _, _, r in per if r is not None]
    notion = {2: "rdp", 4: "zcdp"}.get(theorem or 0, "pure")
    model = _MODELS[theorem] if theorem is not None else "central"
    statement = (
        _STATEMENTS[theorem]
        if theorem is not None
        else "DP-SE (Sajed & Sheffet 2019): (ε, 0) central DP, Laplace(1/ε) on each sum of rewards"
    )
    return Privacy(
        model,
        notion,
        worst,
        d if notion != "pure" else 0.0,
        max(rhos) if rhos else None,
        tuple((n, e) for n, e, _ in per),
        statement,
    )


# ---------------------------------------------------------------------------------------
# Confidence radii
# ---------------------------------------------------------------------------------------


def _noise_bound(learner: Learner, log2: FloatArray, n: int, horizon: int) -> FloatArray:
    """``N``: a ``1 - 2q`` bound on ``|n_a(b)|`` (noise + rounding error of the sum, in reward
    units), with ``log2 = ln(2/q)`` (spec §4.3 table; ``g`` is the actual precision)."""
    eps = learner.epsilon
    theorem = learner.theorem
    if theorem is None or eps is None:
        return np.zeros_like(log2)
    if theorem == 3:
        eps = eps / 2
    root = np.sqrt(log2)
    if theorem in (1, 3, 5):
        return np.asarray(math.sqrt(2) / eps * root + log2 / eps, dtype=np.float64)
    if theorem == 2:
        g = _params(learner, n, horizon).g
        assert learner.scale is not None
        return np.asarray((2 / eps + math.sqrt(2) / (learner.scale * eps)) * root + math.sqrt(2) / g * log2)
    if theorem == 4:
        assert learner.scale is not None
        return np.asarray(math.sqrt(2) * (1 + 1 / learner.scale) / eps * root, dtype=np.float64)
    # Theorem 6 (Lemma 5 with c = 1.6, spec §4.3, §4.6)
    local = 1.6 / eps * np.maximum(np.sqrt(2 * n * log2), 2 * log2)
    return np.asarray(math.sqrt(2) / eps * root + local, dtype=np.float64)


def confidence_radius(learner: Learner, active: ArrayLike, batch: int, size: int, horizon: int) -> FloatArray:
    """``β(b)`` of eq. (2) (spec §4.3) with forgetting, for ``active`` arms ``|Φ(b)|`` (an array).

    ``crs·( sqrt(ln(4|Φ|b²/p)/(2l)) + N(p/(|Φ|b²))/l )`` with ``N`` from the variant's theorem; for
    ``dp-se`` the radius of spec §4.7 (with ``R_e = size``).
    """
    k = np.asarray(active, dtype=np.float64)
    pulls = _integer("size", size, 1)
    hoeffding, noise = _radius_terms(learner, k, _integer("batch", batch, 1), pulls, horizon)
    return _radius(learner.crs, hoeffding, noise, np.float64(pulls))


def _radius(crs: float, hoeffding: FloatArray, noise: FloatArray, pulls: Any) -> FloatArray:
    """``crs·( sqrt(L/(2 l)) + N/l )`` for ``l`` pulls with Hoeffding log term ``L`` and noise bound ``N``."""
    return np.asarray(crs * (np.sqrt(hoeffding / (2 * pulls)) + noise / pulls), dtype=np.float64)


def _radius_terms(
    learner: Learner, k: FloatArray, b: int, size: int, horizon: int
) -> tuple[FloatArray, FloatArray]:
    """``(L, N)``: the log term of Hoeffding and the noise bound of batch ``b`` of ``size`` pulls."""
    p = learner.p_beta
    if learner.name == "dp-se":
        assert learner.epsilon is not None
        return np.log(8 * k * b * b / p), np.log(4 * k * b * b / p) / learner.epsilon
    return np.log(4 * k * b * b / p), _noise_bound(learner, np.log(2 * k * b * b / p), size, horizon)


def _dpse_size(learner: Learner, k: FloatArray, e: int) -> IntArray:
    """``R_e`` of DP-SE (spec §4.7): pulls per arm in epoch ``e``, ``Δ_e = dc^{-e}``."""
    assert learner.epsilon is not None
    p = learner.p_beta
    gap = float(learner.eta) ** -e
    hoeffding = 32 * np.log(8 * k * e * e / p) / gap**2
    privacy = 8 * np.log(4 * k * e * e / p) / (gap * learner.epsilon)
    return (1 + np.maximum(hoeffding, privacy).astype(np.int64)).astype(np.int64)


# ---------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------


@dataclass
class _Segment:
    """The pulls of one repetition in one batch: per-arm sums and the realized regret."""

    sum_x: FloatArray
    sum_xhat: IntArray | None
    values: FloatArray | None
    realized_at: FloatArray  # realized regret of the segment after each requested offset
    realized: float  # over the whole segment


def _segment(
    instance: MABInstance,
    tape: np.random.Generator,
    arms: IntArray,
    size: int,
    pulls: int,
    best: int,
    offsets: IntArray,
    g: int | None,
    rng: np.random.Generator,
    keep: bool,
) -> _Segment:
    """Pull ``arms`` in blocks of ``size`` (block ``j`` is arm ``arms[j]``) for ``pulls`` rounds.

    The rewards are read from the repetition's tape in round order, :data:`CHUNK` rounds at a
    time; with ``g`` every reward is also encoded (randomized rounding from ``rng``).
    """
    k = arms.size
    sum_x = np.zeros(k)
    sum_xhat = np.zeros(k, dtype=np.int64) if g is not None else None
    values = np.zeros((k, size)) if keep else None
    realized_at = np.zeros(offsets.size)
    running = 0.0
    for c0 in range(0, pulls, CHUNK):
        c1 = min(c0 + CHUNK, pulls)
        first, last = c0 // size, (c1 - 1) // size
        blocks = np.arange(first, last + 1)
        counts = np.minimum(c1, (blocks + 1) * size) - np.maximum(c0, blocks * size)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        u = instance.tape(tape, c1 - c0)
        x = instance.reward(np.repeat(arms[blocks], counts), u)
        sum_x[blocks] += np.add.reduceat(x, starts)
        if sum_xhat is not None:
            assert g is not None
            sum_xhat[blocks] += np.add.reduceat(encode(x, g, rng), starts)
        if values is not None:
            values.reshape(-1)[c0:c1] = x
        diff = instance.reward(np.asarray(best), u)
        diff -= x
        cum = np.cumsum(diff)
        inside = (offsets > c0) & (offsets <= c1)
        realized_at[inside] = running + cum[offsets[inside] - c0 - 1]
        running += float(cum[-1])
    return _Segment(sum_x, sum_xhat, values, realized_at, running)


def _pseudo(gaps: FloatArray, size: int, offsets: IntArray) -> FloatArray:
    """Pseudo-regret after ``offsets`` rounds of blocks of ``size`` pulls with these ``gaps``."""
    k = gaps.size
    cum = np.concatenate(([0.0], np.cumsum(gaps * size)))
    j = offsets // size
    return np.asarray(cum[j] + gaps[np.minimum(j, k - 1)] * (offsets - j * size), dtype=np.float64)


def _total_noise(learner: Learner, p: ProtocolParameters, rng: np.random.Generator, count: int) -> IntArray:
    """``count`` draws of one aggregate's total noise (equal in law to the sum of all shares)."""
    if learner.theorem == 5:
        assert p.server_noise is not None
        return np.asarray(p.server_noise.sample(rng, count), dtype=np.int64)
    assert p.share is not None
    if learner.theorem == 6:
        # n i.i.d. Lap_Z shares: each a difference of geometrics, so the sum is NB(n) - NB(n).
        assert isinstance(p.share, DiscreteLaplace)
        nb = Polya(p.users, math.exp(-1 / float(p.share.scale)))
        return np.asarray(nb.sample(rng, count) - nb.sample(rng, count), dtype=np.int64)
    # Pólya(1/n, β) differences sum to Lap_Z with decay β (Fact 1), Skellam shares to the Skellam
    # with n times the rates, discrete Gaussian shares to their n-fold sum: DistributedSum's law.
    total = DistributedSum(p.share, p.users, p.g).total_noise
    return np.asarray(total.sample(rng, count), dtype=np.int64)


class _State:
    """The learner's state for all repetitions (leading axis ``R``)."""

    def __init__(self, learner: Learner, means: FloatArray, horizon: int, rounds: IntArray) -> None:
        R, K = means.shape
        self.learner = learner
        self.horizon = horizon
        self.rounds = rounds
        self.gaps = means.max(axis=1, keepdims=True) - means
        self.best = np.argmax(means, axis=1)
        self.active = np.ones((R, K), dtype=bool)
        self.t = np.zeros(R, dtype=np.int64)
        self.pseudo_total = np.zeros(R)
        self.realized_total = np.zeros(R)
        self.pseudo = np.zeros((R, rounds.size))
        self.realized = np.zeros((R, rounds.size))
        self.done = np.zeros(R, dtype=bool)
        self.released = np.zeros(R, dtype=np.int64)
        self.dropped = np.zeros(R, dtype=np.int64)
        self.topped_up = np.zeros(R, dtype=np.int64)
        self.sizes: set[int] = set()
        self.bits = 0
        # cumulative estimates (forgetting=False)
        self.z_sum = np.zeros((R, K))
        self.pulls_sum = np.zeros(R)
        self.noise_sum = np.zeros(R)

    def offsets(self, r: int, pulls: int) -> tuple[IntArray, IntArray]:
        """Checkpoint indices inside the next ``pulls`` rounds of repetition ``r``, and their offsets."""
        t0 = int(self.t[r])
        lo, hi = np.searchsorted(self.rounds, [t0 + 1, t0 + pulls + 1])
        idx = np.arange(lo, hi)
        return idx, (self.rounds[idx] - t0).astype(np.int64)

    def advance(
        self, r: int, arms: IntArray, size: int, pulls: int, seg: _Segment, idx: IntArray, offsets: IntArray
    ) -> None:
        """Record ``pulls`` rounds of blocks of ``size`` (checkpoints ``idx`` at ``offsets``)."""
        pseudo = _pseudo(self.gaps[r, arms], size, np.append(offsets, pulls))
        self.pseudo[r, idx] = self.pseudo_total[r] + pseudo[:-1]
        self.realized[r, idx] = self.realized_total[r] + seg.realized_at
        self.pseudo_total[r] += float(pseudo[-1])
        self.realized_total[r] += seg.realized
        self.t[r] += pulls


def _check_run(
    learner: object,
    instances: object,
    horizon: object,
    tapes: object,
    rng: object,
    checkpoints: object,
) -> tuple[list[MABInstance], int, list[np.random.Generator], IntArray]:
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.mab.Learner (see make_learner)")
    if not isinstance(tapes, Sequence) or not tapes:
        raise ParameterError("tapes", tapes, "a non-empty sequence of numpy Generators (one per repetition)")
    for i, gen in enumerate(tapes):
        if not isinstance(gen, np.random.Generator):
            raise ParameterTypeError(f"tapes[{i}]", gen, "a numpy.random.Generator")
    R = len(tapes)
    if isinstance(instances, MABInstance):
        insts = [instances] * R
    elif isinstance(instances, Sequence) and len(instances) == R:
        insts = list(instances)
        for i, inst in enumerate(insts):
            if not isinstance(inst, MABInstance):
                raise ParameterTypeError(f"instances[{i}]", inst, "a learners.environments.MABInstance")
    else:
        raise ParameterError("instances", instances, f"one MABInstance or a sequence of R={R} of them")
    K = insts[0].arms
    if any(inst.arms != K for inst in insts):
        raise ParameterError("instances", [i.arms for i in insts], "instances with the same number of arms")
    T = _integer("horizon", horizon, 2)
    if T < K:
        raise ParameterError("horizon", horizon, f"an integer >= K = {K} (every arm is pulled once)")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    C = _integer("checkpoints", checkpoints, 1)
    rounds = np.unique(-(-np.arange(1, min(C, T) + 1, dtype=np.int64) * T // min(C, T)))
    return insts, T, list(tapes), rounds


def run(
    learner: Learner,
    instances: MABInstance | Sequence[MABInstance],
    horizon: int,
    *,
    tapes: Sequence[np.random.Generator],
    rng: np.random.Generator,
    checkpoints: int = 1000,
    delta: float = 1e-6,
) -> RunResult:
    """Run ``learner`` for ``R = len(tapes)`` repetitions of ``horizon`` rounds.

    Parameters
    ----------
    learner : Learner
        The algorithm and its settings (:func:`make_learner`).
    instances : MABInstance or sequence of MABInstance
        One instance for every repetition, or one per repetition (same ``K``).
    horizon : int
        ``T >= K``.
    tapes : sequence of numpy.random.Generator
        The reward tape of each repetition (common random numbers: give every algorithm a fresh
        generator from the same seed to compare them on the same rewards).
    rng : numpy.random.Generator
        The randomness of the protocol (rounding, noise, masks, dropouts) for all repetitions.
    checkpoints : int
        Regret is recorded after ``ceil(c T / C)`` rounds, ``c = 1..C``.
    delta : float
        δ of the ``(ε, δ)`` report of the RDP and zCDP variants.

    Returns
    -------
    RunResult
    """
    insts, T, gens, rounds = _check_run(learner, instances, horizon, tapes, rng, checkpoints)
    means = np.stack([np.asarray(inst.means, dtype=np.float64) for inst in insts])
    st = _State(learner, means, T, rounds)
    protocol = learner.theorem is not None
    b = 0
    while not st.done.all():
        b += 1
        k = st.active.sum(axis=1)
        for last in np.flatnonzero(~st.done & (k == 1)).tolist():
            _finish(st, last, insts[last], gens[last], rng)
        live = np.flatnonzero(~st.done)
        if not live.size:
            break
        if learner.name == "dp-se":
            sizes = _dpse_size(learner, k[live].astype(np.float64), b)
        else:
            sizes = np.full(live.size, learner.eta**b, dtype=np.int64)
        g = _params(learner, int(sizes[0]), T).g if protocol else None
        complete: list[int] = []
        segments: dict[int, _Segment] = {}
        for i, r in enumerate(live.tolist()):
            arms = np.flatnonzero(st.active[r])
            size = int(sizes[i])
            want = arms.size * size
            pulls = int(min(want, T - st.t[r]))
            idx, offsets = st.offsets(r, pulls)
            seg = _segment(
                insts[r], gens[r], arms, size, pulls, int(st.best[r]), offsets, g, rng,
                keep=learner.noise == "shares" and pulls == want,
            )  # fmt: skip
            st.advance(r, arms, size, pulls, seg, idx, offsets)
            if pulls < want:
                st.done[r] = True  # the partial last batch: never aggregated, never released
            else:
                complete.append(r)
                segments[r] = seg
        if complete:
            _release(st, b, np.array(complete), sizes[np.searchsorted(live, complete)], segments, rng)
        st.done |= st.t >= T
    batch_sizes = tuple(sorted(st.sizes))

    def frozen(a: NDArray[Any]) -> NDArray[Any]:
        a.setflags(write=False)
        return a

    return RunResult(
        learner=learner,
        horizon=T,
        rounds=frozen(rounds),
        pseudo_regret=frozen(st.pseudo),
        realized_regret=frozen(st.realized),
        released=frozen(st.released),
        final_arms=frozen(st.active.sum(axis=1).astype(np.int64)),
        batch_sizes=batch_sizes,
        bits=st.bits,
        privacy=privacy_of(learner, batch_sizes, T, delta),
        dropped=frozen(st.dropped),
        topped_up=frozen(st.topped_up),
    )


def _finish(
    st: _State, r: int, instance: MABInstance, tape: np.random.Generator, rng: np.random.Generator
) -> None:
    """One arm left: pull it until ``T`` (nothing is released: no decision depends on it)."""
    arm = np.flatnonzero(st.active[r])
    remaining = int(st.horizon - st.t[r])
    idx, offsets = st.offsets(r, remaining)
    if arm[0] == st.best[r]:
        seg = _Segment(np.zeros(1), None, None, np.zeros(offsets.size), 0.0)
    else:
        seg = _segment(instance, tape, arm, remaining, remaining, int(st.best[r]), offsets, None, rng, False)
    st.advance(r, arm, remaining, remaining, seg, idx, offsets)
    st.done[r] = True


def _dropouts(rng: np.random.Generator, shape: tuple[int, ...], fraction: float) -> BoolArray:
    """``floor(fraction · n)`` random users of each of the ``shape[0]`` aggregates drop out."""
    order = np.argsort(rng.random(shape), axis=1)
    return np.asarray(order < math.floor(fraction * shape[1]), dtype=np.bool_)


def _release(
    st: _State,
    b: int,
    reps: IntArray,
    sizes: IntArray,
    segments: dict[int, _Segment],
    rng: np.random.Generator,
) -> None:
    """Aggregate, estimate and eliminate for the repetitions ``reps`` that finished batch ``b``."""
    learner = st.learner
    active = st.active[reps]
    k = active.sum(axis=1).astype(np.float64)
    z = np.zeros(active.shape)
    sum_x = np.zeros(active.shape)
    for i, r in enumerate(reps.tolist()):
        sum_x[i, active[i]] = segments[r].sum_x
    if learner.name == "se":
        z = sum_x
    elif learner.name == "dp-se":
        assert learner.epsilon is not None
        z[active] = sum_x[active] + Laplace(1 / Fraction(learner.epsilon)).sample(rng, int(active.sum()))
        st.sizes.update(int(n) for n in sizes)
    else:
        n = int(sizes[0])
        p = _params(learner, n, st.horizon)
        st.sizes.add(n)
        st.bits = max(st.bits, p.bits)
        if learner.noise == "total":
            xhat = np.zeros(active.shape, dtype=np.int64)
            for i, r in enumerate(reps.tolist()):
                seg_xhat = segments[r].sum_xhat
                assert seg_xhat is not None
                xhat[i, active[i]] = seg_xhat
            noisy = xhat[active] + _total_noise(learner, p, rng, int(active.sum()))
            if p.m >= BIG_MODULUS:  # residues of a modulus this large need Python integers
                noisy = noisy.astype(object)
            z[active] = analyze(np.mod(noisy, p.m), n, p.g, p.tau, p.m)
        else:
            proto = Protocol(p, exact=learner.exact)
            for i, r in enumerate(reps.tolist()):
                values = segments[r].values
                assert values is not None
                dropped = _dropouts(rng, values.shape, learner.dropout) if learner.dropout else None
                rel = proto.release(values, rng, dropped=dropped)
                z[i, active[i]] = rel.estimate
                st.dropped[r] += int(rel.dropped.sum())
                st.topped_up[r] += int(rel.topped_up.sum())
    st.released[reps] += active.sum(axis=1)
    size = sizes.astype(np.float64)
    hoeffding, noise = _radius_terms(learner, k, b, int(sizes[0]), st.horizon)
    if learner.forgetting:
        sums, pulls, bound = z, size, noise
    else:
        st.z_sum[reps] += z
        st.pulls_sum[reps] += size
        st.noise_sum[reps] += noise
        sums, pulls, bound = st.z_sum[reps], st.pulls_sum[reps], st.noise_sum[reps]
    mu = sums / pulls[:, None]
    beta = _radius(learner.crs, hoeffding, bound, pulls)
    lcb = np.where(active, mu - beta[:, None], -np.inf)
    keep = active & (mu + beta[:, None] >= lcb.max(axis=1, keepdims=True))
    st.active[reps] = keep
