"""Tests of :mod:`verification.audit.auditor`, the black-box empirical auditor.

The acceptance audit: for the discrete Laplace mechanism with scale 10 (ε = 0.1, Chowdhury & Zhou
2023, Definition 4 and Fact 3) and 10^6 samples per side, the 95% lower bound is at least 0.09, in
at most 5 s. The validity of the whole procedure (false alarms at most at the stated level) is
checked on a mechanism whose ε the auditor can reach: randomized response (Warner 1965). Then
real outputs (quantile bins), chunks, seeds and Dask, and the validation of every parameter.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from accounting import (
    AdditiveNoise,
    DiscreteGaussian,
    DiscreteLaplace,
    Laplace,
    ParameterError,
    ParameterTypeError,
    Skellam,
)
from verification.audit import (
    AdditivePair,
    AuditResult,
    additive_pair,
    audit,
    epsilon_lower_bound,
)
from verification.errors import VerificationError

Pair = tuple[NDArray[Any], NDArray[Any]]


def randomized_response(epsilon: float) -> Any:
    """Binary randomized response on a bit 1 (D) versus 0 (D'): exactly ε-DP, and tight.

    The event {output = 1} has probability ratio e^ε, so the auditor can come close to ε;
    that makes it the right mechanism to measure false alarms on.
    """
    p = math.exp(epsilon) / (1 + math.exp(epsilon))

    def sample_pair(rng: np.random.Generator, size: int) -> Pair:
        return (rng.random(size) < p).astype(np.int64), (rng.random(size) < 1 - p).astype(np.int64)

    return sample_pair


# ---------------------------------------------------------------------------------------
# The acceptance audit and the result
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dlap_audit() -> AuditResult:
    """The acceptance audit: Lap_Z(10), Δ = 1, claimed ε = 0.1, 10^6 samples per side."""
    return audit(additive_pair(DiscreteLaplace(10), 1), claimed_epsilon=0.1, samples=10**6, seed=20240)


def test_discrete_laplace_acceptance(dlap_audit: AuditResult) -> None:
    r = dlap_audit
    assert 0.09 <= r.epsilon_lower <= 0.1  # ε = Δ/b = 0.1 (Fact 3): the bound must not exceed it
    assert r.verdict == "consistent"
    assert not r.violation
    assert r.seconds <= 5.0
    assert r.samples == 10**6
    assert r.selection_samples + r.estimation_samples == 10**6
    assert r.counts.trials == r.estimation_samples == 500_000
    assert r.confidence == 0.95


def test_the_reported_bound_is_recomputable_from_the_counts(dlap_audit: AuditResult) -> None:
    c = dlap_audit.counts
    assert dlap_audit.epsilon_lower == epsilon_lower_bound(c.first, c.second, c.trials, delta=0.0)
    # The evidence is the level where the bound crosses the claim: below 0.95 for a consistent result.
    assert dlap_audit.evidence is not None
    assert dlap_audit.evidence < 0.95


def test_the_chosen_event_is_a_threshold_or_ratio_set(dlap_audit: AuditResult) -> None:
    # For Lap_Z the likelihood ratio of X+1 vs X is e^{±0.1} on either side of 1/2.
    assert dlap_audit.event.startswith("x ")
    assert dlap_audit.direction in ("D/D'", "D'/D")
    assert dlap_audit.statistic == "x"


def test_plug_in_pld_of_discrete_laplace(dlap_audit: AuditResult) -> None:
    pld = dlap_audit.plug_in_pld
    assert pld is not None
    # KL(Lap_Z(10) || Lap_Z(10) + 1), summed here from the exact PMF.
    noise = DiscreteLaplace(10)
    xs = np.arange(-400, 401)
    p, q = noise.pmf(xs), noise.pmf(xs - 1)
    kl = float(np.sum(p * np.log(p / q)))
    assert pld.mean_loss == pytest.approx(kl, abs=1e-3)
    assert pld.mean_loss_reverse == pytest.approx(kl, abs=1e-3)
    assert pld.shared > 150
    assert pld.mass_first_only < 1e-4
    assert pld.mass_second_only < 1e-4
    assert 0.1 <= pld.max_abs_loss < 1.0  # noisy in the tails: a diagnostic, not a bound
    assert pld.delta_at_claimed is not None
    assert 0 <= pld.delta_at_claimed < 0.01


def test_result_serializes_to_json(dlap_audit: AuditResult) -> None:
    d = json.loads(json.dumps(dlap_audit.to_dict()))
    assert d["epsilon_lower"] == dlap_audit.epsilon_lower
    assert d["counts"]["trials"] == 500_000
    assert int(d["seed"]) == dlap_audit.seed


def test_a_false_claim_is_a_violation_with_its_confidence() -> None:
    # Lap_Z(2) is 0.5-DP; claiming 0.1 is false and plainly visible at 10^5 samples.
    r = audit(additive_pair(DiscreteLaplace(2)), claimed_epsilon=0.1, samples=100_000, seed=5)
    assert r.verdict == "violation"
    assert 0.1 < r.epsilon_lower <= 0.5
    assert r.evidence is not None
    assert r.evidence >= 0.95
    assert r.evidence == pytest.approx(1.0, abs=1e-6)


def test_without_a_claim_there_is_no_verdict() -> None:
    r = audit(additive_pair(DiscreteLaplace(2)), samples=10_000, seed=1)
    assert r.verdict == "no claim"
    assert r.evidence is None
    assert r.plug_in_pld is not None
    assert r.plug_in_pld.delta_at_claimed is None


def test_delta_lowers_the_bound() -> None:
    pair = additive_pair(DiscreteGaussian(3.0), 3)
    r0 = audit(pair, delta=0.0, samples=100_000, seed=3)
    r1 = audit(pair, delta=0.01, samples=100_000, seed=3)
    assert r1.epsilon_lower < r0.epsilon_lower
    claim = float(AdditiveNoise(DiscreteGaussian(3.0), 3).epsilon(0.01))
    assert r1.epsilon_lower <= claim


# ---------------------------------------------------------------------------------------
# Validity: false alarms at most at the stated level
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_false_alarms_stay_below_the_stated_level() -> None:
    """200 audits of randomized response at its true ε: at most 5% may claim a violation.

    The auditor can nearly reach ε here (the event {1} has ratio exactly e^ε), so this is
    the hard case for validity. Clopper–Pearson and the union bound are conservative: the
    observed rate is far below 5% (0 of 200 with these seeds).
    """
    pair = randomized_response(1.0)
    seeds = np.random.SeedSequence(123).spawn(200)
    results = [audit(pair, claimed_epsilon=1.0, samples=2_000, pilot=500, seed=s) for s in seeds]
    alarms = sum(r.violation for r in results)
    assert alarms <= 0.05 * len(results)
    # And the auditor is not vacuous: the bounds come close to ε.
    assert np.mean([r.epsilon_lower for r in results]) > 0.8


def test_identical_outputs_give_no_privacy_loss() -> None:
    def same(rng: np.random.Generator, size: int) -> Pair:
        return rng.integers(0, 7, size), rng.integers(0, 7, size)

    seeds = np.random.SeedSequence(7).spawn(20)
    results = [audit(same, claimed_epsilon=0.0, samples=5_000, pilot=500, seed=s) for s in seeds]
    assert sum(r.violation for r in results) <= 1


# ---------------------------------------------------------------------------------------
# Real and vector outputs, statistics
# ---------------------------------------------------------------------------------------


def test_continuous_laplace_with_quantile_bins() -> None:
    noise = Laplace(10.0)
    r = audit(additive_pair(noise, 1.0), claimed_epsilon=0.1, samples=400_000, seed=9)
    assert r.verdict == "consistent"
    assert 0.05 < r.epsilon_lower <= 0.1
    assert r.plug_in_pld is None  # real outputs: no plug-in PLD
    assert r.bins <= 1025


def test_wide_integer_ranges_are_binned_in_equal_widths() -> None:
    r = audit(additive_pair(DiscreteLaplace(10**6), 1), samples=20_000, seed=1, max_bins=1000)
    assert r.bins <= 1000
    assert r.epsilon_lower <= 1e-6


# ---------------------------------------------------------------------------------------
# Chunks, seeds and Dask
# ---------------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_result() -> None:
    pair = additive_pair(Skellam(8), 2)
    a = audit(pair, samples=30_000, chunk=7_000, seed=42)
    b = audit(pair, samples=30_000, chunk=7_000, seed=42)
    c = audit(pair, samples=30_000, chunk=7_000, seed=43)
    assert (a.epsilon_lower, a.event, a.counts) == (b.epsilon_lower, b.event, b.counts)
    assert a.counts != c.counts
    assert a.chunks == 5
    # A result's seed reproduces it when no seed was given.
    d = audit(pair, samples=30_000, chunk=7_000)
    e = audit(pair, samples=30_000, chunk=7_000, seed=d.seed)
    assert d.counts == e.counts


class Recording:
    """A sample pair that records the sizes asked for (to check chunking)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.pair: AdditivePair = additive_pair(DiscreteLaplace(3))

    def __call__(self, rng: np.random.Generator, size: int) -> Pair:
        self.sizes.append(size)
        return self.pair(rng, size)


def test_samples_are_drawn_in_bounded_chunks() -> None:
    rec = Recording()
    r = audit(rec, samples=2_000_000, chunk=100_000, pilot=1_000, seed=0)
    assert rec.sizes[0] == 1_000  # the pilot
    assert rec.sizes[1:] == [100_000] * 20
    assert r.chunks == 20
    assert r.selection_samples + r.estimation_samples == 2_000_000


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_dask_gives_the_local_result(dask_client: Any) -> None:
    pair = additive_pair(DiscreteLaplace(5))
    local = audit(pair, claimed_epsilon=0.2, samples=60_000, chunk=15_000, seed=11)
    remote = audit(pair, claimed_epsilon=0.2, samples=60_000, chunk=15_000, seed=11, scheduler=dask_client)
    assert remote.scheduler != "local"
    assert local.scheduler == "local"
    assert remote.chunks == 4
    assert remote.epsilon_lower == local.epsilon_lower
    assert (remote.event, remote.counts) == (local.event, local.counts)


def test_dask_by_scheduler_address(dask_client: Any) -> None:
    address = dask_client.scheduler.address
    r = audit(additive_pair(DiscreteLaplace(5)), samples=20_000, chunk=10_000, seed=1, scheduler=address)
    assert r.scheduler == address
    assert r.chunks == 2


# ---------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------

PAIR = additive_pair(DiscreteLaplace(2))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"delta": 1.0}, "delta"),
        ({"delta": -0.1}, "delta"),
        ({"claimed_epsilon": -1.0}, "claimed_epsilon"),
        ({"claimed_epsilon": math.nan}, "claimed_epsilon"),
        ({"samples": 10}, "samples"),
        ({"confidence": 1.0}, "confidence"),
        ({"chunk": 0}, "chunk"),
        ({"seed": -1}, "seed"),
        ({"selection_fraction": 0.0}, "selection_fraction"),
        ({"pilot": 5}, "pilot"),
        ({"max_bins": 1}, "max_bins"),
        ({"scheduler": ""}, "scheduler"),
    ],
)
def test_audit_validates_its_parameters(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(ParameterError) as info:
        audit(PAIR, **kwargs)
    assert info.value.name == name


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"scheduler": 123}, "scheduler"),
        ({"statistic": "x"}, "statistic"),
        ({"claimed_epsilon": "0.1"}, "claimed_epsilon"),
        ({"samples": 1e6 + 0.5}, "samples"),
    ],
)
def test_audit_validates_parameter_types(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises((ParameterTypeError, ParameterError)) as info:
        audit(PAIR, **kwargs)
    assert getattr(info.value, "name", None) == name


def test_audit_needs_a_callable() -> None:
    with pytest.raises(ParameterTypeError) as info:
        audit("not a sampler")  # type: ignore[arg-type]
    assert info.value.name == "sample_pair"


def test_badly_shaped_outputs_are_reported() -> None:
    def short(rng: np.random.Generator, size: int) -> Pair:
        return np.zeros(size), np.zeros(size - 1)

    def single(rng: np.random.Generator, size: int) -> Any:
        return np.zeros(size)

    with pytest.raises(VerificationError, match="shape"):
        audit(short, samples=1_000)
    with pytest.raises(VerificationError, match="pair"):
        audit(single, samples=1_000)


def test_a_constant_statistic_cannot_distinguish() -> None:
    def constant(x: NDArray[Any]) -> NDArray[np.int64]:
        return np.zeros(x.shape[0], dtype=np.int64)

    r = audit(PAIR, samples=1_000, pilot=200, statistic=constant, seed=0)
    assert r.epsilon_lower == 0.0
