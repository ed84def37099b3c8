"""The vectorized run of DP-DPE and DP-PE (:mod:`learners.phased.engine`; Li, Zhou & Ji 2022,
Algorithms 1 and 3): the width of eq. (3) as we rebuilt it, checked numerically term by term,
unbiased estimates, communication (eq. 2), the sanity run of §7, modes and reproducibility."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from learners.phased import (
    ALGORITHMS,
    RunResult,
    fixed_clients,
    make_learner,
    phase_clients,
    run,
    sdp_dpe_parameters,
)
from learners.phased_instances import PhasedInstance, draw_instance
from tests.learners.phased.support import ARMS, DELTA, EPS, coords, go, tapes

# ------------------------------------------------------------------------------------------
# Estimates and widths (eq. 3, as we rebuilt it from the proofs of Li, Zhou & Ji 2022)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "mode"),
    [("dpe", "faithful"), ("cdp-dpe", "faithful"), ("ldp-dpe", "practical"), ("sdp-dpe", "practical")],
)
def test_concentration_of_the_width(inst: PhasedInstance, name: str, mode: str) -> None:
    """max_{x∈D_l} |⟨θ̂_l - θ*, x⟩| > W_l happens with frequency at most 2kβ (3kβ private);
    eq. (3) as rebuilt: the empirical sd of ⟨θ̂_l - θ*, x⟩ is below the sub-Gaussian scale
    W_l / sqrt(2 ln(1/β)) the width assumes (term by term, in the non-private run)."""
    eps = None if name == "dpe" else 4.0
    kw = {} if eps is None else {"delta": DELTA}
    res, records = go(make_learner(name, eps, mode=mode, **kw), inst, 2**11, reps=60)
    beta = res.beta
    misses = trials = 0
    for rec in records:
        dev = np.einsum("kd,nd->nk", inst.actions, rec.theta_hat - inst.theta)
        worst = np.where(rec.active, np.abs(dev), 0).max(axis=1)
        misses += int((worst > rec.width).sum())
        trials += rec.reps.size
        if name == "dpe" and rec.reps.size == 60:
            sd = dev.std(axis=0)[rec.active.all(axis=0)]
            scale = rec.width.min() / math.sqrt(2 * math.log(1 / beta))
            assert sd.max() <= scale
    assert trials > 300
    assert misses <= max(1, 3 * ARMS * beta * trials)


@pytest.mark.parametrize("name", ["cdp-dpe", "sdp-dpe", "cdp-pe"])
def test_released_estimates_are_unbiased(inst: PhasedInstance, name: str) -> None:
    """Without clipping bias (B far above the rewards) the released ỹ_l(x) is unbiased for
    ⟨θ*, x⟩ (DP-DPE, an average) or T_l(x)⟨θ*, x⟩ (DP-PE, a sum): pooled z-scores over phases,
    repetitions and actions against the expectation."""
    learner = make_learner(name, 10.0 if name == "sdp-dpe" else 2.0, delta=DELTA, bound=50.0)
    _res, records = go(learner, inst, 2**10, reps=20)
    zs = []
    for rec in records:
        valid = coords(rec)
        mean = inst.means[np.maximum(rec.support, 0)]
        if ALGORITHMS[name].setting == "single":
            mean = mean * rec.counts
            var = np.maximum(rec.counts * inst.noise_sd**2 + rec.noise_sd**2, 1e-300)
        else:
            s = valid.sum(axis=1, keepdims=True)
            priv = rec.noise_sd if name == "cdp-dpe" else rec.noise_sd.max(axis=1, keepdims=True) + 0 * s
            var = (inst.client_sd**2 + inst.noise_sd**2 / np.maximum(rec.counts, 1)) / rec.clients + priv**2
        zs.append(((rec.released - mean) / np.sqrt(var))[valid])
    z = np.concatenate(zs)
    assert z.size > 500
    assert abs(z.mean()) < 4 / math.sqrt(z.size)


# ------------------------------------------------------------------------------------------
# Communication (Li, Zhou & Ji 2022, eq. 2)
# ------------------------------------------------------------------------------------------


def test_communication_counter(inst: PhasedInstance) -> None:
    """Eq. (2): C(T) = Σ_l s_l |U_l| reals (DPE, CDP, LDP), Σ_l (g + b) s_l |U_l| bits (SDP); DP-PE one
    real per client; DPE-FixedU samples L U clients, DPE's Σ_l |U_l| up to rounding U."""
    T = 2**11
    for name in ("dpe", "cdp-dpe", "ldp-dpe"):
        eps = None if name == "dpe" else EPS
        res, records = go(make_learner(name, eps, **({} if eps is None else {"delta": DELTA})), inst, T)
        total = np.zeros(2, dtype=np.int64)
        for rec in records:
            assert np.array_equal(rec.messages, coords(rec).sum(axis=1) * rec.clients)
            total[rec.reps] += rec.messages
        assert np.array_equal(res.reals, total)
        assert np.array_equal(res.bits, 64 * total)
        assert res.unit == "reals"
        assert np.array_equal(res.communication, res.reals)
    res, records = go(make_learner("sdp-dpe", 10.0, delta=DELTA), inst, T)
    total = np.zeros(2, dtype=np.int64)
    for rec in records:
        s = coords(rec).sum(axis=1)
        for j, r in enumerate(rec.reps):
            params = sdp_dpe_parameters(10.0, DELTA, rec.clients, int(s[j]), 1.0)
            assert rec.messages[j] == (params.g + params.b) * s[j] * rec.clients
            total[r] += rec.messages[j]
    assert res.unit == "bits"
    assert np.array_equal(res.bits, total)
    assert not res.reals.any()
    res, records = go(make_learner("pe"), inst, T)
    assert np.array_equal(res.reals, res.clients)
    assert res.clients.sum() == sum(int(r.counts.sum()) for r in records)
    # DPE-FixedU: U is the mean of ⌈2^{αl}⌉ over the L phases that can finish (h_l = 2^l <= T_l)
    T = 3000
    L = max(j for j in range(1, 40) if 2 ** (j + 1) - 2 <= T)
    dpe, _ = go(make_learner("dpe"), inst, T)
    fixed, records = go(make_learner("dpe-fixedu"), inst, T)
    U = fixed_clients(0.8, T)
    assert all(r.clients == U for r in records)
    assert np.array_equal(fixed.clients, fixed.phases * U)
    assert (fixed.phases == L).all()
    assert (dpe.phases == L).all()
    by_schedule = sum(phase_clients(0.8, j) for j in range(1, L + 1))
    assert abs(L * U - by_schedule) <= L / 2
    assert (dpe.clients == by_schedule).all()


# ------------------------------------------------------------------------------------------
# Sanity run, modes, reproducibility
# ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_sanity_run_on_the_section_7_instance() -> None:
    """On the instance of Li, Zhou & Ji (2022), §7 (k = 1000, d = 20) at T = 2^16: DPE's R(t)/t falls
    and it eliminates down to a few arms; CDP-DPE at a huge ε is DPE (clipped alike); LDP-DPE is the
    worst (practical mode, where the private variants eliminate at all); faithful CDP-DPE is above
    DPE."""
    inst = draw_instance(np.random.default_rng(0))
    T, R = 2**16, 3

    def final(name: str, eps: float | None, **kw: Any) -> RunResult:
        params = kw if eps is None else {"delta": 0.25, **kw}
        return run(
            make_learner(name, eps, **params), inst, T, tapes=tapes(R, 50), rng=np.random.default_rng(1),
            checkpoints=16,
        )  # fmt: skip

    dpe = final("dpe", None)
    per_round = dpe.pseudo_regret / dpe.rounds
    assert (np.diff(per_round.mean(axis=0))[3:] < 0).all()
    assert (dpe.final_arms <= 10).all()
    # the same clients (tapes), clipped as the private learners clip: only the noise differs
    clipped = final("dpe", None, clipped=True)
    # the Gaussian multiplier falls as 1/sqrt(2ε) at large ε (not the classic 1/ε): 7e-5 at ε = 1e8
    huge = final("cdp-dpe", 1e8, mode="practical")
    assert huge.noise.multiplier < 1e-4
    assert np.allclose(huge.pseudo_regret, clipped.pseudo_regret, rtol=0.01)
    regret = {}
    for eps in (2.0, 10.0):
        for name in ("cdp-dpe", "ldp-dpe", "sdp-dpe"):
            regret[name, eps] = final(name, eps, mode="practical").pseudo_regret[:, -1].mean()
        assert regret["ldp-dpe", eps] > max(regret["cdp-dpe", eps], regret["sdp-dpe", eps])
    assert regret["ldp-dpe", 10.0] < regret["ldp-dpe", 2.0]
    faithful = final("cdp-dpe", 10.0)
    assert faithful.pseudo_regret[:, -1].mean() > dpe.pseudo_regret[:, -1].mean()


def test_modes_are_labelled(inst: PhasedInstance) -> None:
    for mode in ("faithful", "practical"):
        learner = make_learner("cdp-dpe", EPS, delta=DELTA, mode=mode)
        assert learner.label == f"CDP-DPE(ε=1, {mode})"
        res, _ = go(learner, inst, 256)
        assert res.mode == mode
        assert res.privacy.mode == mode
    assert make_learner("dpe").label == "DPE(faithful)"


def test_seeded_runs_reproduce(inst: PhasedInstance) -> None:
    """The same seeds give the same arrays; a repetition's run does not depend on the repetitions
    beside it (its streams are its own; the batched design agrees with a lone one to rounding)."""
    for name, eps in (("cdp-dpe", EPS), ("sdp-pe", EPS)):
        learner = make_learner(name, eps, delta=DELTA)
        a, _ = go(learner, inst, 2**10, reps=3, rng=np.random.default_rng(5))
        b, _ = go(learner, inst, 2**10, reps=3, rng=np.random.default_rng(5))
        for field in ("pseudo_regret", "realized_regret", "phases", "clients", "reals", "bits", "final_arms"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), field
        alone, _ = go(learner, inst, 2**10, tapes=tapes(1), rng=np.random.default_rng(5))
        assert np.allclose(alone.pseudo_regret[0], a.pseudo_regret[0], rtol=1e-9)
        assert alone.final_arms[0] == a.final_arms[0]


def test_per_repetition_instances_and_regret_bookkeeping() -> None:
    """One instance per repetition; the pseudo-regret at T equals Σ_t gap(x_t) recomputed from the
    phases' pulls; the realized regret of DP-PE is T μ* minus the observed rewards (mean 0 apart)."""
    insts = [draw_instance(np.random.default_rng(s), arms=15, dim=3) for s in (7, 8)]
    T = 3000
    res, records = go(make_learner("dpe"), insts, T, checkpoints=T)
    assert res.rounds[-1] == T
    assert res.pseudo_regret.shape == (2, res.rounds.size)
    assert (np.diff(res.pseudo_regret, axis=1) >= -1e-12).all()
    for r in range(2):
        played = [(rec.support[j], rec.counts[j]) for rec in records for j in np.flatnonzero(rec.reps == r)]
        t = sum(int(c.sum()) for _, c in played)
        regret = sum(float((insts[r].gaps[np.maximum(s, 0)] * c).sum()) for s, c in played)
        assert res.pseudo_regret[r, t - 1] == pytest.approx(regret)


@pytest.mark.slow
def test_faithful_widths_reproduce_an_independent_computation() -> None:
    """Reference widths of the paper's formulas taken literally (faithful mode, the paper's classic σ,
    B = 1, ε = 10, δ = 0.25, S = 104, T = 10^6, on the instance of §7 where s_l = 33): W at l = 10
    is 0.120 (DPE), 4.85 (CDP), 75.8 (LDP), 1625 (SDP), and at l = 15 18.9 (LDP), 102 (SDP); the
    widths are an independent computation, the designs here have s_l = 33 at those phases."""
    inst = draw_instance(np.random.default_rng(0))
    table: dict[str, dict[int, float]] = {
        "dpe": {10: 0.120},
        "cdp-dpe": {10: 4.85},
        "ldp-dpe": {10: 75.8, 15: 18.9},
        "sdp-dpe": {10: 1625, 15: 102},
    }
    for name, rows in table.items():
        records: list[Any] = []
        kw: dict[str, Any] = {} if name == "dpe" else {"delta": 0.25, "calibration": "classic"}
        learner = make_learner(name, None if name == "dpe" else 10.0, **kw)
        run(
            learner,
            inst,
            10**6,
            tapes=[np.random.default_rng(0)],
            rng=np.random.default_rng(1),
            observer=records.append,
        )
        widths = {r.phase: float(np.asarray(r.width).ravel()[0]) for r in records}
        for phase, expected in rows.items():
            assert widths[phase] == pytest.approx(expected, rel=0.01), (name, phase)
