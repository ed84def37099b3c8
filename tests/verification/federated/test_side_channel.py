"""Tests of :mod:`verification.federated.side_channel` and the federated catalogue entries (A1).

Dubey & Pentland 2020's schedule side channel: Zhou & Chowdhury 2024, Section 3, Example 3.1 (silo-level
LDP fails) and Appendix B.2 (Fed-DP fails too); the fixed-batch schedule of their Algorithm 1
(Section 4) and the lazy Algorithm 8 (Appendix G.3) are the controls.
"""

from __future__ import annotations

import math
import pickle
from typing import Any

import numpy as np
import pytest

from learners.linear_instances import LinearInstance
from verification.audit import AuditResult, SamplePair, audit
from verification.broken import (
    BROKEN,
    CORRECT,
    FEDERATED_SAMPLES,
    BrokenMechanism,
    federated_catalogue,
    run_catalogue,
)
from verification.errors import ParameterError
from verification.federated import (
    A1_REGULARIZER,
    A1_THRESHOLD,
    SideChannelPair,
    side_channel_instance,
)


def test_the_a1_pair_is_the_example_pair() -> None:
    """Example 3.1: C = λ(e^D - 1) <= 1/2; Alice ‖x‖² = C/2, Tracy 2C, Bob (silo j) C/2; one user differs."""
    c = A1_REGULARIZER * math.expm1(A1_THRESHOLD)
    assert c == pytest.approx(0.5)
    alice, tracy = side_channel_instance(False), side_channel_instance(True)
    assert (alice.rounds, alice.agents, alice.arms, alice.dim) == (2, 2, 2, 2)
    assert np.sum(alice.features[0, 0, 0] ** 2) == pytest.approx(c / 2)
    assert np.sum(tracy.features[0, 0, 0] ** 2) == pytest.approx(2 * c)
    assert np.sum(alice.features[0, 1, 0] ** 2) == pytest.approx(c / 2)
    differs = np.any(alice.features != tracy.features, axis=(2, 3)) | np.any(
        alice.means != tracy.means, axis=2
    )
    assert differs.sum() == 1
    assert differs[0, 0]  # silo i's first user only
    assert np.array_equal(alice.means, tracy.means)  # the same rewards
    assert isinstance(alice, LinearInstance)
    with pytest.raises(ParameterError):
        side_channel_instance(True, threshold=1.0)  # C = e - 1 > 1/2: Tracy infeasible


def test_dubey_pentland_syncs_iff_tracy() -> None:
    """Example 3.1: the sync after round 1 is a deterministic function of silo i's first user."""
    pair = SideChannelPair("dubey-pentland", 1.0, 0.01, "transcript")
    alice, tracy = pair(np.random.default_rng(0), 2000)
    assert set(np.unique(alice)) == {0}  # no sync, and silo j's own data picks arm 0
    assert set(np.unique(tracy)) == {2, 3}  # always a sync; the noisy synced sums pick the arm
    assert 0.2 < np.mean(tracy == 3) < 0.8
    action = SideChannelPair("dubey-pentland", 1.0, 0.01, "action")
    a, b = action(np.random.default_rng(1), 2000)
    assert set(np.unique(a)) == {0}
    assert 0.2 < b.mean() < 0.8


def test_the_fixed_schedule_is_public() -> None:
    pair = SideChannelPair("ldp-fedlinucb", 1.0, 0.01, "transcript", batch=1, sensitivity="batch")
    alice, tracy = pair(np.random.default_rng(2), 2000)
    assert set(np.unique(alice)) <= {2, 3}  # always a sync
    assert set(np.unique(tracy)) <= {2, 3}
    assert abs(np.mean(alice == 3) - np.mean(tracy == 3)) < 0.1


@pytest.fixture(scope="module")
def a1_results() -> dict[str, tuple[bool, float, AuditResult]]:
    """Each A1 entry audited as the catalogue audits it (its own sample and pilot sizes)."""
    broken, correct = federated_catalogue()
    seeds = np.random.SeedSequence(0).spawn(4)
    out = {}
    for (m, bad), s in zip([(m, True) for m in broken] + [(m, False) for m in correct], seeds, strict=True):
        result = audit(
            m.sample_pair, m.delta, m.claimed_epsilon, samples=m.samples or 0, pilot=m.pilot or 0, seed=s
        )
        out[m.name] = (bad, m.claimed_epsilon, result)
    return out


@pytest.mark.slow
def test_a1_flags_dubey_pentland_and_not_the_controls(
    a1_results: dict[str, tuple[bool, float, AuditResult]],
) -> None:
    assert list(a1_results) == [
        "dubey-pentland-schedule",
        "dubey-pentland-action",
        "fedlinucb-fixed-schedule",
        "fedlinucb-lazy-fixed-schedule",
    ]
    for name, (bad, claim, result) in a1_results.items():
        assert result.violation == bad, (name, result.summary())
        assert result.samples == FEDERATED_SAMPLES
        if not bad:
            assert result.epsilon_lower <= claim
    # One side never shows the event the other always does: ε_lb ≈ ln(0.99 n/3.7) for n = 2000
    # estimation samples, far above the claim of 1, and it grows with the samples (δ >= 1 needed).
    assert a1_results["dubey-pentland-schedule"][2].epsilon_lower > 6
    assert a1_results["dubey-pentland-schedule"][1] <= 1.0
    assert a1_results["dubey-pentland-action"][2].epsilon_lower > 5
    assert a1_results["dubey-pentland-schedule"][2].evidence is not None


def test_the_a1_bound_grows_with_the_runs() -> None:
    pair = SideChannelPair("dubey-pentland", 1.0, 0.01, "transcript")
    small = audit(pair, 0.01, 1.0, samples=400, pilot=200, seed=3)
    large = audit(pair, 0.01, 1.0, samples=4000, pilot=200, seed=3)
    assert small.epsilon_lower < large.epsilon_lower
    assert large.epsilon_lower - small.epsilon_lower == pytest.approx(math.log(10), abs=0.1)


def test_a1_claims_are_the_exact_epsilon_of_the_content_noise() -> None:
    broken, correct = federated_catalogue()
    for m in (*broken, *correct):
        assert isinstance(m, BrokenMechanism)
        assert isinstance(m.sample_pair, SideChannelPair)
        assert m.claimed_epsilon == pytest.approx(1.0, rel=1e-6)  # calibrated exactly to ε = 1
        assert m.delta == 0.01
        pair = pickle.loads(pickle.dumps(m.sample_pair))
        a, b = pair(np.random.default_rng(0), 10)
        assert a.shape == b.shape == (10,)


def test_the_catalogue_without_federated_entries_is_unchanged() -> None:
    calls: list[int] = []

    def count(sample_pair: SamplePair, **kwargs: Any) -> AuditResult:
        calls.append(1)
        return audit(sample_pair, **{**kwargs, "samples": 200, "pilot": 100})

    assert len(run_catalogue(samples=200, seed=0, audit_fn=count)) == len(BROKEN) + len(CORRECT)
    rows = run_catalogue(samples=200, seed=0, audit_fn=count, federated=True, include_correct=False)
    assert [r.name for r in rows[len(BROKEN) :]] == ["dubey-pentland-schedule", "dubey-pentland-action"]


def test_an_entry_caps_the_catalogue_samples_and_pilot() -> None:
    seen: list[dict[str, object]] = []

    def spy(sample_pair: SamplePair, **kwargs: Any) -> AuditResult:
        seen.append(kwargs)
        return audit(sample_pair, **{**kwargs, "samples": 200, "pilot": 100})

    run_catalogue(samples=10**6, seed=0, audit_fn=spy, federated=True, pilot=500)
    others = len(BROKEN) + len(CORRECT)
    fed = seen[others:]
    assert len(fed) == 4
    assert all(k["samples"] == FEDERATED_SAMPLES and k["pilot"] == 500 for k in fed)
    assert all(k["samples"] == 10**6 and k["pilot"] == 500 for k in seen[:others])
