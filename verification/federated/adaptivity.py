"""A5: within-batch adaptivity of Algorithm 1, searched for the largest change of a released sum.

In Algorithm 1 of Zhou & Chowdhury 2024 (Section 4) a silo chooses actions from its non-private
local sums, which hold the earlier users of the same batch; changing the first user of a batch can
therefore change every later action of that batch, and the batch's stream element ``γ_k`` by up to
``2B`` (bias) and ``√2 B`` (covariance), where the proof of Theorem 5.1 (Appendix E.1) counts each
user in one term (per-user 2 and √2 under replace-one). :func:`adaptivity_search` searches
contexts with near-tied arms for such flips; the lazy variant (Algorithm 8, Appendix G.3) decides
from synced data only and must stay within the per-user sensitivities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mpmath import mp

from accounting import validate as v
from accounting.certified import float_up
from accounting.neighbouring import Neighbouring
from accounting.tree import Sensitivities, Tree
from learners import linear
from verification.federated.rows import CheckRow
from verification.federated.scripted import FloatArray, ScriptedInstance

__all__ = ["A5_PARAMETERS", "AdaptivityResult", "adaptivity_row", "adaptivity_search"]

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
        ``2B`` and ``√2 B`` (every later user of the batch follows the first).
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
    """Search neighbouring first batches for the largest change of the released ``γ_1``.

    The learner is ``algorithm`` at Theorem 5.1's ``σ0`` for ``(ε, δ)`` and ``κ`` of
    ``T = horizon``, ``B = batch``, with its regularizer ``λ`` for that setting (``M = 1``,
    ``d = 2``); only the first batch is run, which is where the changed user's influence on the
    actions lies (later batches see her only through released, noisy sums, which the adaptive
    composition of the proof of Theorem 5.1 covers). A candidate is
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


def adaptivity_row(name: str, broken: bool, found: AdaptivityResult) -> CheckRow:
    """The A5 row of :func:`~verification.federated.checks.run_checks`: flagged beyond the per-user Δ."""
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
