"""Audits of federated linear contextual bandits: spec ``federated-lcb.md`` §7.5 (A1, A2, A4, A5).

The federated LinUCB paper (Zhou & Chowdhury, ICLR 2024) criticizes Dubey & Pentland 2020 and
states privacy for its own Algorithm 1; this module checks those statements on the project's own
implementation (:mod:`learners.linear`), each with a broken case that must be flagged and a
correct one that must not:

* **A1, the schedule side channel** (§7.2, Example 3.1, App. B): Dubey & Pentland sync when a
  silo's non-private ``log det`` increment passes ``D/(t - t_last)``; with ``Z = 0`` a sync after
  round 1 happens iff some first user has ``‖x‖² > C = λ(e^D - 1)``. :class:`SideChannelPair`
  runs :func:`learners.linear.run` on the neighbouring pair of §7.5 A1 (``M = d = 2``, silo ``i``'s
  first user Alice with ``‖x‖² = C/2`` or Tracy with ``2C``) and returns what silo ``j`` sees;
  :mod:`verification.broken` hands it to the empirical auditor (the catalogue entries
  ``dubey-pentland-*``, and the fixed-batch controls);
* **A2, the aggregate noise** (§7.3, §4.2): the server's prefix sums minus the exact sums, recorded
  by ``run``'s observer (:class:`learners.linear.SyncRecord`), have per-coordinate variance
  ``M · popcount(k) · σ0²`` (``M κ σ0²`` at a full prefix), not the ``popcount(k) σ0²`` of Dubey &
  Pentland's analysis: :func:`measure_tree_noise` with a chi-square interval;
* **A4, exact GDP accounting of the tree** (§7.5 A4, §10.3): :func:`gdp_check`, ``δ(ε)`` of the
  Gaussian tree at the authors' code ``σ0`` (misses ``(5, 0.1)``), Theorem 5.1's and the exactly
  calibrated one (:mod:`accounting.tree`);
* **A5, within-batch adaptivity** (§10.1, §7.5 A5): :func:`adaptivity_search` searches contexts
  with near-tied arms for which changing the first user of a batch flips the later actions of the
  same batch under Algorithm 1, and reports the largest ``‖Δγ_bias‖`` and ``‖Δγ_cov‖_F`` found
  (far above the per-user 2 and √2), and the ``δ(ε)`` of Theorem 5.1's ``σ0`` with them.

:func:`run_checks` runs A2, A4 and A5 as :class:`CheckRow` values (``dp-audit broken`` prints
them after the sampled catalogue).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from mpmath import mp
from numpy.typing import NDArray

from accounting import validate as v
from accounting.certified import float_up
from accounting.neighbouring import Neighbouring
from accounting.tree import (
    PAPER,
    REPLACE_ONE,
    Sensitivities,
    Tree,
    calibrate_sigma,
    code_sigma,
    levels,
    paper_sigma,
)
from learners import linear
from learners.linear_instances import CHUNK
from verification.errors import ParameterError

__all__ = [
    "AdaptivityResult",
    "CheckRow",
    "GDPCheck",
    "NoiseMeasurement",
    "ScriptedInstance",
    "SideChannelPair",
    "adaptivity_search",
    "gdp_check",
    "measure_tree_noise",
    "run_checks",
    "side_channel_claim",
    "side_channel_instance",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


# ---------------------------------------------------------------------------------------
# A scripted instance: every context and reward given (adversarial contexts, §1.1)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ScriptedInstance:
    """A :class:`learners.linear_instances.LinearInstance` whose contexts and rewards are given.

    Contexts may be arbitrary (adversarial, spec §1.1), which is what the audits need: the
    neighbouring datasets of §7.5 are fixed sequences of users. Rewards are noise-free (a user's
    potential outcomes are part of her data, §2.1), so ``noise_sd = 0`` and no tape is drawn.

    Attributes
    ----------
    features : numpy.ndarray, shape (T, M, K, d)
        The arms each silo sees in each round (norms at most 1, Assumption 4.1).
    means : numpy.ndarray, shape (T, M, K)
        The reward of each arm.
    reward_scale : float
        The code radius's ``R``.
    """

    features: FloatArray
    means: FloatArray
    reward_scale: float = 1.0

    def __post_init__(self) -> None:
        x = np.array(self.features, dtype=np.float64)
        m = np.array(self.means, dtype=np.float64)
        if x.ndim != 4 or min(x.shape) < 1:
            raise ParameterError("features", getattr(x, "shape", None), "an array of shape (T, M, K, d)")
        if m.shape != x.shape[:3]:
            raise ParameterError("means", m.shape, f"an array of shape (T, M, K) = {x.shape[:3]}")
        if not (np.isfinite(x).all() and np.isfinite(m).all()):
            raise ParameterError("features", "non-finite values", "finite features and means")
        if float(np.linalg.norm(x, axis=-1).max()) > 1 + 1e-12:
            raise ParameterError("features", "an arm of norm > 1", "arms of norm at most 1 (Assumption 4.1)")
        x.setflags(write=False)
        m.setflags(write=False)
        object.__setattr__(self, "features", x)
        object.__setattr__(self, "means", m)
        object.__setattr__(self, "reward_scale", v.nonnegative("reward_scale", self.reward_scale))

    @property
    def dim(self) -> int:
        return int(self.features.shape[3])

    @property
    def arms(self) -> int:
        return int(self.features.shape[2])

    @property
    def agents(self) -> int:
        return int(self.features.shape[1])

    @property
    def rounds(self) -> int:
        return int(self.features.shape[0])

    @property
    def noise_sd(self) -> float:
        return 0.0

    def block(self, chunk: int) -> tuple[FloatArray, FloatArray]:
        """Rounds ``[CHUNK·chunk, CHUNK·(chunk + 1))``; past the script, zero arms (never played)."""
        c = v.integer("chunk", chunk, minimum=0)
        features = np.zeros((CHUNK, *self.features.shape[1:]))
        means = np.zeros((CHUNK, *self.means.shape[1:]))
        lo, hi = c * CHUNK, min(self.rounds, (c + 1) * CHUNK)
        if hi > lo:
            features[: hi - lo] = self.features[lo:hi]
            means[: hi - lo] = self.means[lo:hi]
        return features, means


# ---------------------------------------------------------------------------------------
# A1: the schedule side channel of Dubey & Pentland (spec §7.2, §7.5 A1)
# ---------------------------------------------------------------------------------------

#: The A1 setting: λ = 1 and D = ln 1.5, so C = λ(e^D - 1) = 1/2 (both users feasible, ‖x‖ <= 1).
A1_REGULARIZER = 1.0
A1_THRESHOLD = math.log(1.5)
#: Silo j's two arms at round 2: at angle ±A1_ANGLE from the first user's axis, so that without a
#: sync they have equal widths and silo j's own first user decides (arm 0, deterministically).
A1_ANGLE = 0.3


def side_channel_instance(
    tracy: bool, threshold: float = A1_THRESHOLD, regularizer: float = A1_REGULARIZER
) -> ScriptedInstance:
    """The neighbouring pair of spec §7.5 A1, for ``M = 2`` silos (``i = 0``, ``j = 1``), ``d = 2``.

    Round 1: silo ``i``'s first user is Alice (``x = (-√(C/2), 0)``, ``‖x‖² = C/2``) or, in the
    neighbour, Tracy (``x = (-√(2C), 0)``, ``‖x‖² = 2C``), ``C = λ(e^D - 1)``; silo ``j``'s first
    user Bob has ``x = (√(C/2), 0)``; each user's two arms are the same vector (the action is
    forced) and every reward is 1 (the same potential outcomes: one user differs, in her context).
    Round 2: both silos see the arms ``(cos a, sin a)`` and ``(-cos a, sin a)``; silo ``j``'s pay 1
    and 0 (so its pseudo-regret in round 2 is its action), silo ``i``'s pay 1/2 each.

    Without a sync silo ``j`` decides from its own Bob only: the arms have equal widths under
    ``V = λI + x xᵀ`` and Bob's reward favours arm 0, always. With a sync (Tracy) it decides from
    the noisy synced statistics, which hold Tracy's ``x y = (-√(2C), 0)``: arm 1 about half the time.
    """
    lam = v.positive("regularizer", regularizer)
    d_threshold = v.positive("threshold", threshold)
    c = lam * math.expm1(d_threshold)
    if not 2 * c <= 1:
        raise ParameterError(
            "threshold", threshold, f"D with C = λ(e^D - 1) <= 1/2 (here C = {c:g}: Tracy's ‖x‖² = 2C > 1)"
        )
    features = np.zeros((2, 2, 2, 2))
    means = np.ones((2, 2, 2))
    features[0, 0, :] = (-math.sqrt(2 * c if tracy else c / 2), 0.0)
    features[0, 1, :] = (math.sqrt(c / 2), 0.0)
    features[1, :, 0] = (math.cos(A1_ANGLE), math.sin(A1_ANGLE))
    features[1, :, 1] = (-math.cos(A1_ANGLE), math.sin(A1_ANGLE))
    means[1, 0, :] = 0.5
    means[1, 1, :] = (1.0, 0.0)
    return ScriptedInstance(features, means)


View = Literal["transcript", "action"]


@dataclass(frozen=True)
class SideChannelPair:
    """What silo ``j`` sees of a federated LinUCB run on the A1 pair (Alice on ``D``, Tracy on ``D'``).

    Each call runs :func:`learners.linear.run` for ``size`` repetitions of 2 rounds on each
    dataset (vectorized over the repetitions; the privacy noise from ``rng``) and reduces each to

    * ``view="transcript"``: ``2·1{sync after round 1} + a_{2,j}`` — the schedule (§7.2: silo-level
      LDP covers the transcript's timing) and silo ``j``'s own action at ``t = 2``;
    * ``view="action"``: ``a_{2,j}`` alone (the Fed-DP variant, App. B.2: the action of another
      silo must not reveal the user).

    The sync is read from ``run``'s observer (a :class:`~learners.linear.SyncRecord` at round 1),
    the action from the pseudo-regret of round 2 (silo ``j``'s arms pay 1 and 0, silo ``i``'s the
    same for both, :func:`side_channel_instance`).

    Attributes
    ----------
    algorithm : str
        A key of :data:`learners.linear.ALGORITHMS` (``"dubey-pentland"`` or a fixed-batch one).
    epsilon, delta : float
        The learner's claimed ``(ε, δ)`` (its noise is calibrated to it).
    view : {"transcript", "action"}
    batch : int or None
        ``B`` of a fixed schedule (``None`` for Dubey & Pentland).
    sensitivity : str
        The learner's sensitivities (``"batch"`` certifies Algorithm 1, with ``B = 1`` equal to
        the per-user ones).
    """

    algorithm: str
    epsilon: float
    delta: float
    view: View = "transcript"
    batch: int | None = None
    sensitivity: str = "replace-one"

    def __post_init__(self) -> None:
        if self.view not in ("transcript", "action"):
            raise ParameterError("view", self.view, "'transcript' or 'action'")
        self.learner()  # validates the rest

    def learner(self) -> linear.Learner:
        """The learner run on each side."""
        threshold = A1_THRESHOLD if self.algorithm == "dubey-pentland" else None
        return linear.make_learner(
            self.algorithm,
            self.epsilon,
            delta=self.delta,
            batch=self.batch,
            sensitivity=self.sensitivity,
            regularizer=A1_REGULARIZER,
            threshold=threshold,
        )

    def _side(self, tracy: bool, rng: np.random.Generator, size: int) -> IntArray:
        synced = np.zeros(size, dtype=bool)

        def observe(record: linear.SyncRecord) -> None:
            if record.round == 1:
                synced[record.reps] = True

        result = linear.run(
            self.learner(),
            side_channel_instance(tracy),
            2,
            tapes=[rng] * size,  # noise-free rewards: the tapes are never read
            rng=rng,
            checkpoints=2,
            observer=observe,
        )
        action = np.rint(result.pseudo_regret[:, 1] - result.pseudo_regret[:, 0]).astype(np.int64)
        if self.view == "action":
            return action
        return 2 * synced.astype(np.int64) + action

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        return self._side(False, rng, size), self._side(True, rng, size)


def side_channel_claim(pair: SideChannelPair) -> float:
    """The ε the pair's learner claims at its δ: the exact ε of its node releases (rounded up).

    For the fixed schedules this is the run's certified ledger (``κ`` nodes per stream for the
    first batch, :class:`accounting.tree.Tree`); for Dubey & Pentland it is what its content
    noise would give were the schedule public (:attr:`learners.linear.Privacy.content_epsilon`),
    which is all its privacy argument accounts for.
    """
    learner = pair.learner()
    noise = linear.noise_of(learner, 2, 2, dim=2)
    tree = noise.tree
    assert tree is not None
    return float(tree.epsilon(pair.delta).upper)


# ---------------------------------------------------------------------------------------
# Check rows (A2, A4, A5): a claim, what was found, flagged or not
# ---------------------------------------------------------------------------------------


class Verdict:
    """What a catalogue row or a check says: ``flagged`` (the verdict) against ``broken`` (whether
    the entry is a known defect, so should be flagged)."""

    broken: bool
    flagged: bool

    @property
    def expected(self) -> bool:
        return self.broken

    @property
    def ok(self) -> bool:
        return self.flagged == self.broken

    @property
    def as_expected(self) -> bool:
        """Same as :attr:`ok` (the name the other verification reports use)."""
        return self.ok


@dataclass(frozen=True)
class CheckRow(Verdict):
    """One check of :func:`run_checks`: a claim, what was measured or computed, and the verdict.

    ``broken`` says whether the claim is a known defect (it should be flagged); ``ok`` whether
    the verdict agrees.
    """

    name: str
    audit: str
    broken: bool
    claim: str
    finding: str
    flagged: bool
    values: dict[str, float] = field(default_factory=dict)
    reference: str = ""

    def summary(self) -> str:
        """Three human-readable lines: the verdict, the claim, the finding."""
        kind = "broken " if self.broken else "correct"
        verdict = "flagged" if self.flagged else "not flagged"
        return (
            f"{kind} {self.name:29s} [{self.audit}] {verdict:12s} {'ok' if self.ok else 'UNEXPECTED'}\n"
            f"        claim: {self.claim}\n        found: {self.finding}"
        )


# ---------------------------------------------------------------------------------------
# A2: the aggregate noise of the tree protocol (spec §4.2, §7.3)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseMeasurement:
    """The server's aggregate noise at each repetition's last sync, against a claimed variance.

    Every coordinate of ``prefix - exact`` (the bias vector and the upper triangle of the
    covariance, off-diagonal entries counted at half variance, §4.3) is divided by the claimed
    standard deviation ``√(copies · popcount(k)) σ0``; under the claim the ``n`` values are i.i.d.
    ``N(0, 1)`` and their mean square ``ratio`` is ``χ²_n/n``.

    Attributes
    ----------
    algorithm : str
    agents : int
        ``M``.
    sigma0 : float
    copies : int
        The noises per node the claim counts (``M`` for protocol P; 1 for Dubey & Pentland's analysis).
    values : int
        ``n``, the standardized values.
    ratio : float
        Measured variance / claimed variance.
    low, high : float
        Its two-sided chi-square interval at ``confidence``.
    confidence : float
    """

    algorithm: str
    agents: int
    sigma0: float
    copies: int
    values: int
    ratio: float
    low: float
    high: float
    confidence: float

    @property
    def refuted(self) -> bool:
        """The claimed variance lies outside the interval."""
        return not self.low <= 1.0 <= self.high


def measure_tree_noise(
    algorithm: str = "ldp-fedlinucb",
    agents: int = 8,
    horizon: int = 7,
    repetitions: int = 2000,
    seed: int = 0,
    *,
    claimed_copies: int | None = None,
    confidence: float = 0.999,
) -> NoiseMeasurement:
    """Measure the variance of the aggregate noise of a run against ``copies · popcount(k) · σ0²``.

    Runs ``algorithm`` (a Gaussian-tree variant, or ``"dubey-pentland"`` with a low threshold so
    that it syncs) on a synthetic instance (``d = 2``, 4 arms, spec §8.2) with ``B = 1``, records at
    every sync ``prefix - exact`` through :class:`learners.linear.SyncRecord` and keeps each
    repetition's last (independent across repetitions). With ``horizon = 2^j - 1`` a fixed-batch
    run's last prefix sums ``κ`` nodes: the variance ``M κ σ0²`` of spec §4.2.

    Parameters
    ----------
    claimed_copies : int or None
        Noises per node in the claim (default ``M``, protocol P's; 1 is Dubey & Pentland's ``σ²``
        in place of ``Mσ²``, §7.3).
    """
    from scipy import stats

    from learners.linear_instances import draw_synthetic

    m = v.integer("agents", agents, minimum=1)
    t = v.integer("horizon", horizon, minimum=1)
    reps = v.integer("repetitions", repetitions, minimum=2)
    copies = m if claimed_copies is None else v.integer("claimed_copies", claimed_copies, minimum=1)
    level = v.open_unit("confidence", confidence)
    root = np.random.SeedSequence(v.integer("seed", seed, minimum=0))
    instance_seed, noise_seed, *tape_seeds = root.spawn(2 + reps)
    params: dict[str, Any] = {"sigma_mode": "paper"}
    if algorithm == "dubey-pentland":
        params["threshold"] = 0.05  # sync every few rounds: the noise, not the schedule, is measured here
    else:
        params["batch"] = 1
    learner = linear.make_learner(algorithm, 1.0, delta=0.1, **params)
    d = 2
    upper = np.triu_indices(d)
    half = np.where(upper[0] == upper[1], 1.0, 0.5)  # off-diagonal entries: σ0²/2 (§4.3)
    z = np.full((reps, d + half.size), np.nan)
    nodes = np.zeros(reps, dtype=np.int64)

    def observe(record: linear.SyncRecord) -> None:
        bias = record.prefix_bias - record.exact_bias
        cov = (record.prefix_cov - record.exact_cov)[:, upper[0], upper[1]] / np.sqrt(half)
        z[record.reps] = np.concatenate([bias, cov], axis=1)
        nodes[record.reps] = record.nodes

    instance = draw_synthetic(np.random.default_rng(instance_seed), dim=d, arms=4, agents=m)
    result = linear.run(
        learner,
        instance,
        t,
        tapes=[np.random.default_rng(s) for s in tape_seeds],
        rng=np.random.default_rng(noise_seed),
        checkpoints=1,
        observer=observe,
    )
    kept = nodes > 0  # repetitions that synced at least once
    if not kept.any():
        raise ParameterError("horizon", horizon, "a horizon at which the algorithm syncs")
    sigma0 = result.noise.sigma0
    standard = z[kept] / np.sqrt(copies * nodes[kept, None] * sigma0**2)
    n = int(standard.size)
    total = float((standard**2).sum())
    alpha = 1 - level
    return NoiseMeasurement(
        algorithm=algorithm,
        agents=m,
        sigma0=sigma0,
        copies=copies,
        values=n,
        ratio=total / n,
        low=total / float(stats.chi2.isf(alpha / 2, n)),
        high=total / float(stats.chi2.ppf(alpha / 2, n)),
        confidence=level,
    )


def _noise_row(name: str, broken: bool, measured: NoiseMeasurement) -> CheckRow:
    claim = (
        f"aggregate variance popcount(k)·σ0² (one silo's noise; D&P's analysis), σ0 = {measured.sigma0:.4g}"
        if measured.copies == 1
        else f"aggregate variance M·popcount(k)·σ0², M = {measured.copies}, σ0 = {measured.sigma0:.4g}"
    )
    finding = (
        f"measured/claimed = {measured.ratio:.4g} (CI [{measured.low:.4g}, {measured.high:.4g}] at "
        f"{measured.confidence:.1%}, {measured.values} values, M = {measured.agents})"
    )
    return CheckRow(
        name=name,
        audit="A2",
        broken=broken,
        claim=claim,
        finding=finding,
        flagged=measured.refuted,
        values={
            "ratio": measured.ratio,
            "low": measured.low,
            "high": measured.high,
            "sigma0": measured.sigma0,
            "agents": float(measured.agents),
            "copies": float(measured.copies),
        },
        reference="papers/federated-lcb.md §7.3 (Issue 2), §4.2, §7.5 A2",
    )


# ---------------------------------------------------------------------------------------
# A4: exact GDP accounting of the Gaussian tree (spec §7.5 A4, §10.3)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GDPCheck:
    """``δ(ε)`` of the tree release at a ``σ0`` rule, against the claimed ``δ`` (spec §7.5 A4).

    ``delta_at_epsilon`` is the upper end of the certified enclosure (a claim is met only if even
    that is at most ``delta``); ``mu`` is the GDP parameter ``√(κ(Δ_bias² + Δ_cov²))/σ0``.
    """

    rule: str
    epsilon: float
    delta: float
    horizon: int
    batch: int
    kappa: int
    sensitivity: str
    sigma0: float
    mu: float
    delta_at_epsilon: float

    @property
    def meets(self) -> bool:
        return self.delta_at_epsilon <= self.delta


def gdp_check(
    rule: Literal["code", "paper", "exact"],
    epsilon: float = 5.0,
    delta: float = 0.1,
    horizon: int = 10_000,
    batch: int = 25,
    sensitivity: Sensitivities | Literal["replace-one", "paper"] = "paper",
) -> GDPCheck:
    """Exact ``δ(ε)`` of the Gaussian tree at the ``σ0`` of ``rule`` (:mod:`accounting.tree`).

    ``"code"`` is the authors' ``σ0 = √(κ(log(1/δ) + ε))/ε`` (:func:`accounting.tree.code_sigma`),
    ``"paper"`` Theorem 5.1's (:func:`~accounting.tree.paper_sigma`), ``"exact"`` the least ``σ0``
    meeting the claim (:func:`~accounting.tree.calibrate_sigma`). At the defaults (``T = 10⁴``,
    ``B = 25``, ``κ = 9``, ``L = 1``) the code's ``δ(5) = 0.178 > 0.1`` (0.82 under replace-one).
    """
    if rule not in ("code", "paper", "exact"):
        raise ParameterError("rule", rule, "'code', 'paper' or 'exact'")
    kappa = levels(v.integer("horizon", horizon, minimum=1) // v.integer("batch", batch, minimum=1))
    if rule == "code":
        sigma = code_sigma(epsilon, delta, kappa)
    elif rule == "paper":
        sigma = paper_sigma(epsilon, delta, kappa)
    else:
        sigma = calibrate_sigma(epsilon, delta, horizon, batch, sensitivity).value
    tree = Tree(sigma, horizon, batch, sensitivity)
    return GDPCheck(
        rule=rule,
        epsilon=float(epsilon),
        delta=float(delta),
        horizon=horizon,
        batch=batch,
        kappa=tree.kappa,
        sensitivity=tree.sensitivities.name,
        sigma0=sigma,
        mu=tree.mu(),
        delta_at_epsilon=float(tree.delta(epsilon).upper),
    )


def _gdp_row(name: str, broken: bool, check: GDPCheck) -> CheckRow:
    return CheckRow(
        name=name,
        audit="A4",
        broken=broken,
        claim=(
            f"({check.epsilon:g}, {check.delta:g}) at {check.rule} σ0 = {check.sigma0:.4g} "
            f"({check.sensitivity}, T = {check.horizon}, B = {check.batch}, κ = {check.kappa})"
        ),
        finding=f"exact δ({check.epsilon:g}) = {check.delta_at_epsilon:.3g}, μ = {check.mu:.4g}",
        flagged=not check.meets,
        values={
            "sigma0": check.sigma0,
            "mu": check.mu,
            "delta_at_epsilon": check.delta_at_epsilon,
            "claimed_delta": check.delta,
        },
        reference="papers/federated-lcb.md §7.5 A4, §10.3, §5.1 (Theorem 5.1; the authors' code)",
    )


# ---------------------------------------------------------------------------------------
# A5: within-batch adaptivity (spec §10.1, §7.5 A5)
# ---------------------------------------------------------------------------------------

#: A candidate's parameters, one row each: the first user's (angle, norm, reward) on ``D`` and on
#: ``D'``, then the later users' two arms' angles and rewards (the same for every later user).
A5_PARAMETERS = ("phi1", "r1", "y1", "phi1'", "r1'", "y1'", "phi_a", "phi_b", "y_a", "y_b")
_LOW = np.array([-np.pi, 0, 0, -np.pi, 0, 0, -np.pi, -np.pi, 0, 0])
_HIGH = np.array([np.pi, 1, 1, np.pi, 1, 1, np.pi, np.pi, 1, 1])


def _a5_instance(row: FloatArray, batch: int, neighbour: bool) -> ScriptedInstance:
    """One silo, ``d = 2``: round 1 the changed user (one forced arm), rounds 2..B the same two arms."""
    phi, r, y = (row[3], row[4], row[5]) if neighbour else (row[0], row[1], row[2])
    features = np.zeros((batch, 1, 2, 2))
    means = np.zeros((batch, 1, 2))
    features[0, 0, :] = (r * math.cos(phi), r * math.sin(phi))
    means[0, 0, :] = y
    features[1:, 0, 0] = (math.cos(row[6]), math.sin(row[6]))
    features[1:, 0, 1] = (math.cos(row[7]), math.sin(row[7]))
    means[1:, 0, 0] = row[8]
    means[1:, 0, 1] = row[9]
    return ScriptedInstance(features, means)


@dataclass(frozen=True)
class AdaptivityResult:
    """The worst stream-element differences found by :func:`adaptivity_search`.

    Attributes
    ----------
    algorithm : str
    batch : int
        ``B``; the per-user bounds are 2 (bias) and √2 (covariance), Algorithm 1's worst case
        ``2B`` and ``√2 B`` (§10.1).
    candidates : int
        Neighbouring pairs evaluated.
    bias, cov : float
        The largest ``‖Δγ_bias‖`` and ``‖Δγ_cov‖_F`` found (each over all candidates).
    worst : tuple of float
        ``(‖Δγ_bias‖, ‖Δγ_cov‖_F)`` of the candidate with the largest ``Δ_bias² + Δ_cov²`` (the GDP
        parameter's; one neighbouring pair, so both shifts happen together).
    worst_parameters : tuple of float
        That candidate (:data:`A5_PARAMETERS`).
    epsilon, delta : float
        The claim ``δ_at_epsilon`` is computed at.
    sigma0 : float
        Theorem 5.1's ``σ0`` at ``(ε, δ)`` and ``κ`` of ``T = horizon``.
    horizon : int
    delta_at_epsilon : float
        The exact ``δ(ε)`` of the tree at ``sigma0`` with the sensitivities ``worst`` (at least the
        per-user ones), certified upper end: near 1 is a vacuous guarantee.
    """

    algorithm: str
    batch: int
    candidates: int
    bias: float
    cov: float
    worst: tuple[float, float]
    worst_parameters: tuple[float, ...]
    epsilon: float
    delta: float
    sigma0: float
    horizon: int
    delta_at_epsilon: float

    @property
    def within_per_user(self) -> bool:
        """Both differences within the per-user sensitivities 2 and √2 (to rounding)."""
        return self.bias <= 2 * (1 + 1e-9) and self.cov <= math.sqrt(2) * (1 + 1e-9)


def _a5_evaluate(learner: linear.Learner, params: FloatArray, batch: int) -> tuple[FloatArray, FloatArray]:
    """``‖Δγ_bias‖`` and ``‖Δγ_cov‖_F`` of the first batch for each candidate (one run, 2N repetitions)."""
    n = params.shape[0]
    instances = [_a5_instance(row, batch, False) for row in params] + [
        _a5_instance(row, batch, True) for row in params
    ]
    first: dict[str, FloatArray] = {}

    def observe(record: linear.SyncRecord) -> None:
        if int(record.step[0]) == 1:  # the first batch's p-sum is γ_1 itself
            assert record.psums_bias is not None
            assert record.psums_cov is not None
            first["bias"] = record.psums_bias[:, 0]
            first["cov"] = record.psums_cov[:, 0]

    gen = np.random.default_rng(0)  # noise-free rewards, and γ_1 is released before any noise is used
    linear.run(learner, instances, batch, tapes=[gen] * (2 * n), rng=gen, checkpoints=1, observer=observe)
    bias = np.linalg.norm(first["bias"][:n] - first["bias"][n:], axis=-1)
    cov = np.linalg.norm(first["cov"][:n] - first["cov"][n:], axis=(-2, -1))
    return bias, cov


def adaptivity_search(
    algorithm: str = "ldp-fedlinucb",
    batch: int = 25,
    *,
    epsilon: float = 1.0,
    delta: float = 0.1,
    horizon: int = 10_000,
    candidates: int = 512,
    rounds: int = 6,
    seed: int = 0,
) -> AdaptivityResult:
    """Search neighbouring first batches for the largest change of the released ``γ_1`` (spec §7.5 A5).

    The learner is ``algorithm`` at Theorem 5.1's ``σ0`` for ``(ε, δ)`` and ``κ`` of
    ``T = horizon``, ``B = batch``, with its regularizer ``λ`` for that setting (``M = 1``,
    ``d = 2``); only the first batch is run, which is where the changed user's influence on the
    actions lies (§10.1: later batches see her only through released, noisy sums). A candidate is
    :data:`A5_PARAMETERS`: the changed user at round 1 (her one arm and reward on ``D`` and on
    ``D'``) and two arms with fixed rewards for every later user of the batch. A random search
    over ``candidates`` pairs is followed by ``rounds`` of local perturbation of the best ones for
    each objective (``Δ_bias``, ``Δ_cov``, ``Δ_bias² + Δ_cov²``).

    Near-tied arms are the point: with the arms ``±x`` (or orthogonal ones) and the first user's
    reward tilting ``θ̂``, Algorithm 1's later users all follow her and each contributes up to 2 to
    ``‖Δγ_bias‖`` (√2 to ``‖Δγ_cov‖_F``). The lazy variant decides from synced data only, so its
    ``Δγ`` is the first user's own term.
    """
    b = v.integer("batch", batch, minimum=2)
    n = v.integer("candidates", candidates, minimum=2)
    steps = v.integer("rounds", rounds, minimum=0)
    t = v.integer("horizon", horizon, minimum=b)
    rng = np.random.default_rng(v.integer("seed", seed, minimum=0))
    base = linear.make_learner(algorithm, epsilon, delta=delta, batch=b, sigma_mode="paper")
    noise = linear.noise_of(base, t, 1, dim=2)
    lam = linear.regularizer_of(base, noise, 1, 2)
    learner = linear.make_learner(
        algorithm, epsilon, delta=delta, batch=b, sigma_mode="paper", regularizer=lam
    )

    params = rng.uniform(_LOW, _HIGH, size=(n, _LOW.size))
    bias, cov = _a5_evaluate(learner, params, b)
    per_round = max(n // 4, 2)
    for _ in range(steps):
        parents = []
        for score in (bias, cov, bias**2 + cov**2):
            parents.extend(np.argsort(-score)[:4].tolist())
        picks = params[rng.choice(parents, size=per_round)]
        width = rng.choice([0.02, 0.1, 0.3], size=(per_round, 1)) * (_HIGH - _LOW)
        children = np.clip(picks + width * rng.standard_normal(picks.shape), _LOW, _HIGH)
        cb, cc = _a5_evaluate(learner, children, b)
        params = np.concatenate([params, children])
        bias, cov = np.concatenate([bias, cb]), np.concatenate([cov, cc])

    best = int(np.argmax(bias**2 + cov**2))
    worst = (float(bias[best]), float(cov[best]))
    sigma = noise.sigma0
    with mp.workdps(30):
        sens = Sensitivities(
            float_up(max(mp.mpf(worst[0]), 2)),
            float_up(max(mp.mpf(worst[1]), mp.sqrt(2))),
            Neighbouring.REPLACE_ONE,
            "found by the A5 search",
        )
    tree = Tree(sigma, t, b, sens)
    return AdaptivityResult(
        algorithm=algorithm,
        batch=b,
        candidates=int(params.shape[0]),
        bias=float(bias.max()),
        cov=float(cov.max()),
        worst=worst,
        worst_parameters=tuple(float(x) for x in params[best]),
        epsilon=float(epsilon),
        delta=float(delta),
        sigma0=sigma,
        horizon=t,
        delta_at_epsilon=float(tree.delta(epsilon).upper),
    )


def _adaptivity_row(name: str, broken: bool, found: AdaptivityResult) -> CheckRow:
    return CheckRow(
        name=name,
        audit="A5",
        broken=broken,
        claim=f"{found.algorithm}: per-user ‖Δγ_bias‖ <= 2, ‖Δγ_cov‖_F <= √2 (B = {found.batch})",
        finding=(
            f"worst found ‖Δγ_bias‖ = {found.bias:.4g}, ‖Δγ_cov‖_F = {found.cov:.4g} "
            f"({found.candidates} pairs); paper σ0 = {found.sigma0:.4g} at these Δ: "
            f"δ({found.epsilon:g}) = {found.delta_at_epsilon:.3g} (claimed {found.delta:g})"
        ),
        flagged=not found.within_per_user,
        values={
            "bias": found.bias,
            "cov": found.cov,
            "worst_bias": found.worst[0],
            "worst_cov": found.worst[1],
            "sigma0": found.sigma0,
            "delta_at_epsilon": found.delta_at_epsilon,
        },
        reference="papers/federated-lcb.md §10.1 (★), §10.2, §7.5 A5, §11.1 (Algorithm 8)",
    )


# ---------------------------------------------------------------------------------------
# All of them
# ---------------------------------------------------------------------------------------


def run_checks(seed: int | None = 0) -> list[CheckRow]:
    """A2, A4 and A5 as check rows, broken then correct within each audit (a few seconds)."""
    s = 0 if seed is None else v.integer("seed", seed, minimum=0)
    a2_seed, a5_seed = (int(c.generate_state(1)[0]) for c in np.random.SeedSequence(s).spawn(2))
    rows: list[CheckRow] = []
    dp = measure_tree_noise("dubey-pentland", horizon=16, seed=a2_seed, claimed_copies=1)
    tree = measure_tree_noise("ldp-fedlinucb", horizon=7, seed=a2_seed)
    rows += [
        _noise_row("dubey-pentland-noise-scale", True, dp),
        _noise_row("tree-noise-variance", False, tree),
    ]
    rows += [
        _gdp_row("tree-code-sigma", True, gdp_check("code", sensitivity=PAPER)),
        _gdp_row("tree-code-sigma-replace-one", True, gdp_check("code", sensitivity=REPLACE_ONE)),
        _gdp_row("tree-paper-sigma", False, gdp_check("paper", sensitivity=REPLACE_ONE)),
        _gdp_row("tree-exact-sigma", False, gdp_check("exact", sensitivity=REPLACE_ONE)),
    ]
    rows += [
        _adaptivity_row("fedlinucb-within-batch", True, adaptivity_search("ldp-fedlinucb", seed=a5_seed)),
        _adaptivity_row(
            "fedlinucb-lazy-within-batch", False, adaptivity_search("ldp-fedlinucb-lazy", seed=a5_seed)
        ),
    ]
    return rows
