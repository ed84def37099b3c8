"""Benchmarks of DP-DPE (``make bench``): Figure 2(b) of Li, Zhou & Ji at full scale.

Spec ``dp-dpe.md`` §7.1-§7.3: the §7.2 instance (k = 1000 arms uniform on the unit sphere of
R^20, θ* on the sphere, σ = 0.1, η ~ N(0, 1), |𝒰| = 10^6), α = 0.8, B = 1, T = 10^6, 20
repetitions, and the figure's four curves: DPE, CDP-DPE, LDP-DPE and SDP-DPE at ε = 10,
δ = 0.25, in each mode of :mod:`learners.phased` (faithful: the paper's constants, the exact
Gaussian calibration; practical: §7.4's data-dependent widths and SDP surrogate).

Target on the 2-core reference machine (issue 17 §2): the figure (four curves, 20 repetitions,
T = 10^6) in <= 2 minutes and <= 4 GB.

Measured when written (one pytest process, ``learners.phased.run`` directly, the machine shared
with other engineers' jobs; load = 1-minute load average of the 2 cores):

* faithful: **13 s** at load 1-2 (DPE 0.7 s, CDP-DPE 4.5 s, LDP-DPE 3.7 s, SDP-DPE 4.3 s, the
  first calibration at ε = 10 included, ~1 s) and **18 s** at load 3.9; peak resident memory
  **390-400 MiB**;
* practical: **14 s** at load 1-2 (DPE 0.6 s, CDP-DPE 3.7 s, LDP-DPE 7.6 s, SDP-DPE 2.4 s) and
  **18 s** at load 3.9; **380-400 MiB**;
* small variant (practical, T = 2^16, 5 repetitions): 2.5 s at load 3.9.

Both targets are met, by 6-9x (time) and 10x (memory). Per-round regret R(T)/T, mean ± sd over the
20 repetitions: faithful DPE 0.00246 ± 0.00009, CDP-DPE 0.234 ± 0.004 (eliminates only in the
last phases), LDP-DPE and SDP-DPE 0.688 ± 0.019 (never eliminate: uniform exploration of the
design); practical DPE 0.00246, CDP-DPE 0.0037 ± 0.0004, SDP-DPE 0.0036 ± 0.0003, LDP-DPE
0.301 ± 0.009 — the paper's Figure 2(b) ordering (LDP clearly worst, CDP and SDP close to DPE)
appears in the practical mode only, as spec §7.4 predicts. The faithful widths at ``s_l = 33``
reproduce §7.4's table with the classic σ (W_CDP 4.85, W_LDP 75.8, W_SDP 1625 at l = 10) and
are 1.38 times larger with the exact one for CDP and LDP (6.63, 104.3). DPE completes 14 phases
and plays a single arm from then on; the private runs complete 18 phases (the 19th is cut by T).
Where the time goes: the clients' local averages of the last phases (|U_18| = 21619 clients × ~33
actions × 20 repetitions, drawn and clipped), and for SDP-DPE the protocol's randomized
rounding of the same array; the designs are about 60 ms per phase for the 20 repetitions.
"""

from __future__ import annotations

import resource
import time

import numpy as np
import pytest

from learners.phased import make_learner, run
from learners.phased_instances import draw_instance

EPSILON, DELTA = 10.0, 0.25
CURVES = (("dpe", None), ("cdp-dpe", EPSILON), ("ldp-dpe", EPSILON), ("sdp-dpe", EPSILON))


def _figure2b(mode: str, horizon: int, reps: int) -> dict[str, float]:
    """Final per-round pseudo-regret R(T)/T, mean over repetitions, per curve (and seconds per curve)."""
    instance = draw_instance(np.random.default_rng(0))
    out: dict[str, float] = {}
    for name, eps in CURVES:
        params = {"mode": mode} if eps is None else {"mode": mode, "delta": DELTA}
        learner = make_learner(name, eps, **params)
        tapes = [np.random.default_rng(np.random.SeedSequence(7, spawn_key=(r,))) for r in range(reps)]
        start = time.perf_counter()
        res = run(learner, instance, horizon, tapes=tapes, rng=np.random.default_rng(11), checkpoints=1000)
        out[f"{name} seconds"] = time.perf_counter() - start
        out[name] = float(res.pseudo_regret[:, -1].mean() / horizon)
        assert res.mode == mode
    print(f"\n{mode}: " + ", ".join(f"{k} {v:.4g}" for k, v in out.items()))
    return out


def _check(got: dict[str, float], mode: str) -> None:
    for name, _ in CURVES:
        assert 0 <= got[name] <= 2, (name, got[name])  # gaps are at most ‖x* - x‖ <= 2
    assert got["dpe"] <= min(got[n] for n, _ in CURVES)  # privacy never helps (same clients)
    if mode == "practical":  # §7.3's Figure 2(b) findings
        assert got["ldp-dpe"] > 5 * max(got["cdp-dpe"], got["sdp-dpe"])


@pytest.mark.parametrize("mode", ["faithful", "practical"])
def test_figure2b_at_full_scale(benchmark: pytest.FixtureRequest, mode: str) -> None:
    got = benchmark.pedantic(_figure2b, args=(mode, 10**6, 20), rounds=1, iterations=1)  # type: ignore[attr-defined]
    _check(got, mode)
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak RSS {peak_gb * 1024:.0f} MiB")
    assert peak_gb <= 4.0


def test_figure2b_small(benchmark: pytest.FixtureRequest) -> None:
    """The practical curves at T = 2^16 with 5 repetitions (about a second)."""
    got = benchmark.pedantic(_figure2b, args=("practical", 2**16, 5), rounds=1, iterations=1)  # type: ignore[attr-defined]
    _check(got, "practical")


def _figure2c(horizon: int, reps: int, clients: int) -> dict[str, float]:
    """DPE against DPE-FixedU at ``clients`` per phase: R(T)/T and reals sent per run, each."""
    instance = draw_instance(np.random.default_rng(0))
    out: dict[str, float] = {}
    for name, params in (("dpe", {}), ("dpe-fixedu", {"clients": clients})):
        tapes = [np.random.default_rng(np.random.SeedSequence(7, spawn_key=(r,))) for r in range(reps)]
        res = run(make_learner(name, **params), instance, horizon, tapes=tapes, rng=np.random.default_rng(11))
        out[name] = float(res.pseudo_regret[:, -1].mean() / horizon)
        out[f"{name} reals"] = float(res.reals.mean())
    print("\n" + ", ".join(f"{k} {v:.4g}" for k, v in out.items()))
    return out


def test_figure2c_at_full_scale(benchmark: pytest.FixtureRequest) -> None:
    """§7.3's Figure 2(c) finding at T = 10^6, 20 runs: at equal communication (U = 84, the shipped
    config's: within 5% of DPE's reals) DPE's regret is far below DPE-FixedU's. (Measured: 0.0024
    against 0.10 per round, 40788 and 40408 reals, about 7 s.)"""
    got = benchmark.pedantic(_figure2c, args=(10**6, 20, 84), rounds=1, iterations=1)  # type: ignore[attr-defined]
    assert abs(got["dpe-fixedu reals"] / got["dpe reals"] - 1) < 0.05
    assert got["dpe"] < got["dpe-fixedu"] / 10
