"""Benchmarks of federated LinUCB (``make bench``): Figure 2(a) of Zhou & Chowdhury at full scale.

Spec ``federated-lcb.md`` §8.1, §8.2, §8.5: the synthetic instance with M = 100 silos, K = 100
arms, d = 10, T = 10^4 rounds, B = 25, δ = 1e-4, 25 repetitions, and the figure's four curves:
SDP-FedLinUCB (amplification variant) and LDP-FedLinUCB at ε ∈ {1e-4, 1e-3}.

The amplification variant runs with ``sigma_mode="code"``, the authors' σ0, which is what the
paper's figure used and is **uncertified**: ``learners.linear`` refuses its exact mode here because
Lemma F.2's hypotheses fail at M = 100 (it needs M > 16 ln(2/δ_lemma)). LDP-FedLinUCB runs with the
library's default, the exact (certified) calibration.

Targets on the 2-core reference machine (issue 16): the whole figure in <= 3 minutes, peak
memory <= 4 GB.

Measured (one pytest process, ``learners.linear.run`` directly, the machine shared with other
engineers' jobs; load = 1-minute load average of the 2 cores):

* full scale: **134 s** (2 min 14 s) with nothing else running (load 1.4 → 1.8, this run's two
  threads), peak resident memory **314 MiB**: both targets met (3 min, 4 GB). 188 s at load 2-4
  (two other engineers' test jobs on the 2 cores), 332 MiB. Before the packed-features rewrite
  (issue 16, second session): 387 s at load 1.1-1.7. Per round and curve (R = 25, M = K = 100,
  d = 10), at load about 1-1.5: 3.2-4.0 ms of wall time, of which the main thread's CPU is
  2.5-3.3 ms and the drawing thread's (arms and their quadratic features) 3.1-3.5 ms, so the run
  keeps both cores busy;
* small variant (M = 10, T = 2000, 5 repetitions): 3.1 s.

Where the time goes now (line profile of one Algorithm 1 curve): the two score products per silo
for all repetitions (``⟨x, θ⟩`` and ``c(P)·triu(x xᵀ)``, BLAS) about 1.1 ms a round, the
in-place UCB and ``argmax`` 0.5 ms, the synchronisations (the tree's noise and registers, eigh,
solve) 0.5 ms a round on average, the Sherman-Morrison update 0.3 ms; in the drawing thread the
arms' normals about 0.8-1.6 ms and their quadratic features 0.8 ms a round. The previous version's
operators: ``X @ P`` of (25, 100, 100, 10) by (25, 100, 10, 10) about 2.2 ms a round and the
quadratic-form ``einsum`` 1.6-3 ms; the reward noise of all K arms 3.7 ms in the drawing thread,
now 2 normals per silo and round (the same law, :mod:`learners.linear_instances`).

The authors' code (as republished in the public repository ``Alphasxd/DPLCB``: ``LDPFedLinUCB``,
``FedLinUCB``, a Python loop over silos) at M = 100, T = 2000, K = 100, d = 10 (LDP at ε = 1,
δ = 0.1), measured back to back with ours at load 3.7-4: 12.0 s to build the instance and 10.5 s
per repetition (1.6 GB for the instance it materializes; 8 GB at T = 10^4); here 9.9 s for 2
repetitions, 11.2 s for 5 and 19.9 s for 25 (the drawing thread's cost does not grow with R):
3.3x at 2 repetitions, 5.8x at 5, 14x at 25, whose Figure 2(a) would need about 1 hour.
"""

from __future__ import annotations

import math
import resource

import numpy as np
import pytest

from learners.errors import ProtocolError
from learners.linear import make_learner, noise_of, run
from learners.linear_instances import draw_synthetic

DELTA = 1e-4
EPSILONS = (1e-4, 1e-3)


def _figure2a(agents: int, horizon: int, reps: int) -> dict[str, float]:
    """Final time-average group regret (realized, spec §8.4), mean over repetitions, per curve."""
    instance = draw_synthetic(np.random.default_rng(2), dim=10, arms=100, agents=agents)
    curves = [
        make_learner("sdp-fedlinucb-amp", eps, delta=DELTA, batch=25, sigma_mode="code") for eps in EPSILONS
    ]
    curves += [make_learner("ldp-fedlinucb", eps, delta=DELTA, batch=25) for eps in EPSILONS]
    out = {}
    for learner in curves:
        tapes = [np.random.default_rng(np.random.SeedSequence(7, spawn_key=(r,))) for r in range(reps)]
        res = run(
            learner, instance, horizon, tapes=tapes, rng=np.random.default_rng(11), checkpoints=horizon // 10
        )
        out[learner.label] = float(res.realized_regret[:, -1].mean() / horizon)
    return out


def _check(got: dict[str, float], agents: int) -> None:
    assert len(got) == 4
    # Group regret per round is at most M times the largest gap of the instance (means lie in
    # [-1, 1.2] for ‖θ*‖ = 1/√2 and ‖x‖ <= √2), so a broken run (nan, inf, a sign error) shows.
    for label, value in got.items():
        assert math.isfinite(value), label
        assert 0 < value < 3 * agents, (label, value)


def _amplification_refused(agents: int, horizon: int) -> None:
    exact = make_learner("sdp-fedlinucb-amp", EPSILONS[0], delta=DELTA, batch=25)
    assert not noise_of(exact, horizon, agents).feasible
    instance = draw_synthetic(np.random.default_rng(2), dim=10, arms=100, agents=agents)
    with pytest.raises(ProtocolError):
        run(exact, instance, horizon, tapes=[np.random.default_rng(0)], rng=np.random.default_rng(1))


def test_figure2a_at_full_scale(benchmark: pytest.FixtureRequest) -> None:
    _amplification_refused(100, 10**4)
    got = benchmark.pedantic(_figure2a, args=(100, 10**4, 25), rounds=1, iterations=1)  # type: ignore[attr-defined]
    _check(got, 100)
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    assert peak_gb <= 4.0


def test_figure2a_small(benchmark: pytest.FixtureRequest) -> None:
    """The same four curves on M = 10 silos, T = 2000, 5 repetitions (seconds, always runnable)."""
    _amplification_refused(10, 2000)
    got = benchmark.pedantic(_figure2a, args=(10, 2000, 5), rounds=1, iterations=1)  # type: ignore[attr-defined]
    _check(got, 10)
