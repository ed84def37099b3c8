"""A2: the aggregate noise of the tree protocol, measured against a claimed variance.

Each of the ``M`` silos adds its own Gaussian noise to every node it releases, so the server's prefix
sum over ``popcount(k)`` nodes carries variance ``M · popcount(k) · σ0²`` per coordinate (Zhou &
Chowdhury 2024, Section 4, Algorithm 2), not the ``popcount(k) σ0²`` of Dubey & Pentland's analysis
(Zhou & Chowdhury 2024, Section 3: "variance of total noise needs to be Mσ² rather than σ²").
:func:`measure_tree_noise` records the server's prefix sums minus the exact sums through ``run``'s
observer (:class:`learners.linear.SyncRecord`) and puts a chi-square interval on the ratio.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from accounting import validate as v
from learners import linear
from verification.errors import ParameterError
from verification.federated.rows import CheckRow

__all__ = ["NoiseMeasurement", "measure_tree_noise", "noise_row"]


@dataclass(frozen=True)
class NoiseMeasurement:
    """The server's aggregate noise at each repetition's last sync, against a claimed variance.

    Every coordinate of ``prefix - exact`` (the bias vector and the upper triangle of the
    covariance, off-diagonal entries counted at half variance: the authors' code symmetrizes the matrix
    noise as ``(N + Nᵀ)/2``) is divided by the claimed
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
    that it syncs) on a synthetic instance (that of Zhou & Chowdhury 2024, Section 6, at ``d = 2``
    with 4 arms) with ``B = 1``, records at
    every sync ``prefix - exact`` through :class:`learners.linear.SyncRecord` and keeps each
    repetition's last (independent across repetitions). With ``horizon = 2^j - 1`` a fixed-batch
    run's last prefix sums ``κ`` nodes: the variance ``M κ σ0²`` of Algorithm 2 (Section 4).

    Parameters
    ----------
    claimed_copies : int or None
        Noises per node in the claim (default ``M``, protocol P's; 1 is Dubey & Pentland's ``σ²``
        in place of ``Mσ²``, Zhou & Chowdhury 2024, Section 3).
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
    half = np.where(upper[0] == upper[1], 1.0, 0.5)  # off-diagonal entries: σ0²/2 ((N + Nᵀ)/2)
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


def noise_row(name: str, broken: bool, measured: NoiseMeasurement) -> CheckRow:
    """The A2 row of :func:`~verification.federated.checks.run_checks`: flagged when the claim is refuted."""
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
