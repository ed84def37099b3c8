"""Tests of :mod:`learners.protocols`: the R / S / A template of the distributed MAB paper.

Sections of ``papers/distributed-dp-mab.md`` ("the spec"): randomized rounding §2.1; the
privacy argument §3.7 (modular-sum invariance, sensitivity ``g``); R, S, A §4.2; the central
and local models §4.5, §4.6; pitfalls §9.2 (exact integer sums), §9.3 (modular edge cases,
the strict analyzer threshold), §9.5 (dropouts, partial batches), §9.7 (testing checklist).
Expected values are computed here independently (Python integers, closed forms), never by the
code under test.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from accounting.accountant import Accountant, Event
from accounting.mechanisms import AdditiveNoise, DistributedSum, PureDP
from accounting.noise import Polya, SystemRandomness
from accounting.papers.distributed_dp_mab import ProtocolParameters, Variant, protocol_parameters
from learners import protocols
from learners.errors import (
    DropoutError,
    LearnerError,
    ParameterError,
    ParameterTypeError,
    PartialBatchError,
    ProtocolError,
    RecoveryError,
)
from learners.protocols import (
    BIG_MODULUS,
    Protocol,
    TrustModel,
    analyze,
    decode,
    encode,
    masked_sum,
    modular_sum,
    randomize,
    release_mechanisms,
    shuffle,
    trust_model,
)

FAST = settings(max_examples=40, deadline=None)

SETTINGS: dict[Variant, dict[str, Any]] = {
    Variant.POLYA_SHARES: {"epsilon": 1.0},
    Variant.SKELLAM_SHARES: {"epsilon": 1.0, "scale": 2.0},
    Variant.SHUFFLED_POLYA: {"epsilon": 1.0},
    Variant.DISCRETE_GAUSSIAN_SHARES: {"epsilon": 0.5, "scale": 2.0},
    Variant.CENTRAL_LAPLACE: {"epsilon": 0.5},
    Variant.LOCAL_LAPLACE: {"epsilon": 0.5},
}


def params(variant: Variant, users: int = 64, horizon: int = 10**4) -> ProtocolParameters:
    return protocol_parameters(variant, users=users, horizon=horizon, **SETTINGS[variant])


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def python_sum_mod(rows: NDArray[Any], m: int) -> list[int]:
    """The reference: Python-integer sums mod m, row by row."""
    return [sum(int(v) for v in row) % m for row in rows]


def constant_sampler(value: int) -> protocols.ShareSampler:
    """Every share equals ``value``: the total noise then counts the shares drawn."""
    return lambda _rng, shape: np.full(shape, value, dtype=np.int64)


def big_params(n: int = 8, g: int = 4) -> ProtocolParameters:
    """Theorem-1 parameters with a modulus >= 2**62 (decoding allows m >= n g + 2 tau + 1)."""
    tau = 2**61
    m = n * g + 2 * tau + 1
    share = Polya(Fraction(1, n), math.exp(-1 / g))
    bits = (m - 1).bit_length()
    return ProtocolParameters(Variant.POLYA_SHARES, 1.0, n, 100, None, g, tau, m, bits, share, None, "test")


# ---------------------------------------------------------------------------------------------
# A: decoding (spec §4.2 decoding lemma, §9.3 strict threshold, §9.7)
# ---------------------------------------------------------------------------------------------


def test_decode_exhaustive_small_grid() -> None:
    """Every S in [-τ, ng+τ] is recovered from S mod m; the two neighbours outside are not."""
    for n in range(1, 5):
        for g in range(1, 5):
            for tau in range(6):
                m = n * g + 2 * tau + 1
                s = np.arange(-tau, n * g + tau + 1)
                assert np.array_equal(decode(s % m, n, g, tau, m), s)
                assert np.array_equal(analyze(s % m, n, g, tau, m), s / g)
                outside = np.array([-tau - 1, n * g + tau + 1])
                assert np.all(decode(outside % m, n, g, tau, m) != outside)


@FAST
@given(
    n=st.integers(1, 10**6),
    g=st.integers(1, 10**4),
    tau=st.integers(0, 10**9),
    where=st.floats(0, 1),
)
def test_decode_large(n: int, g: int, tau: int, where: float) -> None:
    m = n * g + 2 * tau + 1
    inside = [-tau, -min(tau, 1), 0, n * g, n * g + tau, -tau + round(where * (n * g + 2 * tau))]
    s = np.array(inside, dtype=np.int64)
    assert decode(s % m, n, g, tau, m).tolist() == inside
    assert analyze(s % m, n, g, tau, m).tolist() == [v / g for v in inside]
    outside = np.array([-tau - 1, n * g + tau + 1], dtype=np.int64)
    assert np.all(decode(outside % m, n, g, tau, m) != outside)


def test_decode_threshold_is_strict() -> None:
    n, g, tau = 3, 2, 4
    m = n * g + 2 * tau + 1
    assert int(decode(n * g + tau, n, g, tau, m)) == n * g + tau
    assert int(decode(n * g + tau + 1, n, g, tau, m)) == -tau


def test_decode_big_modulus_uses_python_integers() -> None:
    n, g, tau = 5, 3, 2**70
    m = n * g + 2 * tau + 1
    s = [-tau, -1, 0, n * g + tau]
    view = np.array([v % m for v in s], dtype=object)
    out = decode(view, n, g, tau, m)
    assert out.dtype == object
    assert out.tolist() == s
    assert analyze(view, n, g, tau, m).tolist() == [v / g for v in s]


def test_decode_validation() -> None:
    with pytest.raises(ParameterError, match=r"m=10 is invalid.*>= n\*g \+ 2\*tau \+ 1 = 11"):
        decode(0, 2, 3, 2, 10)
    with pytest.raises(ParameterError, match="yhat"):
        decode([11], 2, 3, 2, 11)
    with pytest.raises(ParameterError, match="yhat"):
        decode([-1], 2, 3, 2, 11)
    with pytest.raises(ParameterTypeError, match="yhat"):
        decode([1.5], 2, 3, 2, 11)
    with pytest.raises(ParameterError, match="tau"):
        decode([1], 2, 3, 2.5, 11)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="tau"):
        decode([1], 2, 3, "2", 11)  # type: ignore[arg-type]


def test_integers_are_validated_as_accounting_validates_them() -> None:
    """One validator for dpcert: an integral float is the integer, here as in accounting."""
    assert decode([5], 2.0, 3, 2, 11).tolist() == decode([5], 2, 3, 2, 11).tolist()  # type: ignore[arg-type]
    x = rng(1).random((2, 4))
    assert np.array_equal(encode(x, 4.0, rng(2)), encode(x, 4, rng(2)))  # type: ignore[arg-type]
    assert protocol_parameters(Variant.POLYA_SHARES, 1.0, 4.0, 100).users == 4  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"n=4\.5"):
        decode([5], 4.5, 3, 2, 11)  # type: ignore[arg-type]


def test_analyze_multiset_sums_first() -> None:
    n, g, tau = 4, 2, 3
    m = n * g + 2 * tau + 1
    messages = np.array([[m - 1, m - 1, 0, 1], [2, 2, 2, 2]])  # sums -1 and 8
    assert analyze(messages, n, g, tau, m, multiset=True).tolist() == [-0.5, 4.0]


# ---------------------------------------------------------------------------------------------
# S: the modular sum, exact near overflow (spec §9.2, §9.3)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [2, 1000003, 2**40 + 15, 2**61 + 1, 2**62 - 1])
def test_modular_sum_matches_python_integers(m: int) -> None:
    y = rng(1).integers(0, m, size=(3, 1001), dtype=np.int64)
    if m > 2**40:
        y[:, :500] = m - 1  # as close to overflow as residues get
    out = modular_sum(y, m)
    assert out.dtype == np.int64
    assert out.tolist() == python_sum_mod(y, m)


def test_modular_sum_reduces_representatives_mathematically() -> None:
    y = np.array([[-1, -1, -7], [2**62, -(2**62), 3]], dtype=np.int64)
    m = 5
    assert modular_sum(y, m).tolist() == [(-9) % 5, 3 % 5]
    assert modular_sum(y, m, axis=0).tolist() == [(2**62 - 1) % 5, (-(2**62) - 1) % 5, (-4) % 5]


@pytest.mark.parametrize("m", [2**62, 2**62 + 1, 2**64 + 13, 3**50])
def test_modular_sum_big_modulus_uses_python_integers(m: int) -> None:
    gen = rng(2)
    y = np.array(
        [[int(v) * (m // 2**40) + 7 for v in gen.integers(0, 2**40, 50)] for _ in range(3)], dtype=object
    )
    out = modular_sum(y, m)
    assert out.dtype == object
    assert out.tolist() == python_sum_mod(y, m)


@FAST
@given(m=st.integers(1, 2**62 - 1), data=st.data())
def test_modular_sum_property(m: int, data: st.DataObject) -> None:
    values = data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=0, max_size=40))
    y = np.array([values], dtype=np.int64).reshape(1, len(values))
    assert modular_sum(y, m).tolist() == [sum(values) % m]


def test_modular_sum_refuses_floats() -> None:
    with pytest.raises(ParameterTypeError, match="an array of integers"):
        modular_sum(np.ones((2, 3)), 7)
    with pytest.raises(ParameterError, match="axis"):
        modular_sum(np.ones((2, 3), dtype=np.int64), 7, axis=2)


# ---------------------------------------------------------------------------------------------
# S: simulated additive-mask secure aggregation (Bonawitz et al. 2017)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 50), (3, 17, 5)])
@pytest.mark.parametrize("m", [97, 2**62 - 1, 2**62 + 3])
def test_masked_sum_is_the_modular_sum(shape: tuple[int, ...], m: int) -> None:
    """Modular-sum invariance (§3.7, §9.7): masks cancel; pairwise and zero-sum paths agree."""
    y = protocols._uniform(rng(3), m, shape)
    expected = modular_sum(y, m)
    fast = masked_sum(y, m, rng(4))
    pairwise = masked_sum(y, m, rng(5), pairwise=True)
    assert fast.tolist() == pairwise.tolist() == expected.tolist()
    flat = y.reshape(shape[0], shape[1], -1)
    for k in range(flat.shape[2]):
        assert np.asarray(expected).reshape(shape[0], -1)[:, k].tolist() == python_sum_mod(flat[:, :, k], m)


@pytest.mark.parametrize("pairwise", [False, True])
def test_masked_sum_with_dropouts_is_the_survivors_sum(pairwise: bool) -> None:
    m, R, n = 1009, 6, 40
    y = rng(6).integers(0, m, (R, n))
    dropped = rng(7).random((R, n)) < 0.3
    recovery = rng(8).integers(0, m, (R, n))
    out = masked_sum(y, m, rng(9), dropped=dropped, threshold=20, pairwise=pairwise, recovery=recovery)
    expected = [
        (sum(int(v) for v in y[r][~dropped[r]]) + sum(int(v) for v in recovery[r][~dropped[r]])) % m
        for r in range(R)
    ]
    assert out.tolist() == expected


def test_masks_are_zero_sum_and_uniform() -> None:
    """Both mask constructions sum to 0 mod m, and each user's mask is uniform on Z_m."""
    m, R, n = 5, 20000, 3
    for masks in (
        protocols._zero_sum_masks(rng(10), m, (R, n)),
        protocols._pairwise_masks(rng(11), m, (R, n)),
    ):
        assert np.all(masks.sum(axis=1) % m == 0)
        for user in range(n):
            counts = np.bincount(masks[:, user], minlength=m)
            assert np.all(np.abs(counts - R / m) < 5 * math.sqrt(R / m))


def test_masked_sum_threshold_and_limits() -> None:
    y = np.zeros((2, 10), dtype=np.int64)
    dropped = np.zeros((2, 10), dtype=bool)
    dropped[1, :6] = True
    with pytest.raises(
        RecoveryError, match="only 4 of 10 users survived, below the secure-aggregation threshold 5"
    ):
        masked_sum(y, 7, rng(0), dropped=dropped, threshold=5)
    with pytest.raises(ParameterError, match="pairwise"):
        masked_sum(np.zeros((1, protocols.PAIRWISE_MAX_USERS + 1), dtype=np.int64), 7, rng(0), pairwise=True)
    with pytest.raises(ParameterError, match="dropped"):
        masked_sum(y, 7, rng(0), dropped=np.zeros(9, dtype=bool))
    with pytest.raises(ParameterTypeError, match="dropped"):
        masked_sum(y, 7, rng(0), dropped=np.zeros(10, dtype=int))


# ---------------------------------------------------------------------------------------------
# S: the shuffler
# ---------------------------------------------------------------------------------------------


def test_shuffle_permutes_each_repetition_independently() -> None:
    R, n = 3000, 3
    y = np.tile(np.arange(n), (R, 1))
    out = shuffle(y, rng(12))
    assert np.array_equal(np.sort(out, axis=1), y)
    codes = out[:, 0] * 9 + out[:, 1] * 3 + out[:, 2]
    _, counts = np.unique(codes, return_counts=True)
    assert counts.size == 6  # all 3! permutations occur, about equally often
    assert np.all(np.abs(counts - R / 6) < 5 * math.sqrt(R / 6))


def test_shuffle_moves_vector_messages_as_units() -> None:
    R, n, d = 5, 30, 4
    y = np.arange(R * n)[:, None].reshape(R, n, 1) * 10 + np.arange(d)
    out = shuffle(y, rng(13))
    assert np.array_equal(out - out[:, :, :1], np.broadcast_to(np.arange(d), (R, n, d)))
    assert not np.array_equal(out, y)
    assert np.array_equal(np.sort(out[:, :, 0], axis=1), y[:, :, 0])


# ---------------------------------------------------------------------------------------------
# R: randomized rounding (spec §2.1) and the randomizer
# ---------------------------------------------------------------------------------------------


@FAST
@given(x=st.floats(0, 1), g=st.integers(1, 10**6))
def test_rounding_is_floor_or_next(x: float, g: int) -> None:
    out = encode(np.full(50, x), g, rng(14))
    low = math.floor(x * g)
    assert set(out.tolist()) <= {low, low + 1}
    if x * g == low:
        assert np.all(out == low)


def test_rounding_endpoints() -> None:
    assert encode([0.0, 1.0], 7, rng(0)).tolist() == [0, 7]


@pytest.mark.parametrize(("x", "g"), [(0.3, 1), (0.123456, 7), (0.5, 3), (0.999, 1000), (1 / 3, 10)])
def test_rounding_is_unbiased(x: float, g: int) -> None:
    draws = 400_000
    out = encode(np.full(draws, x), g, rng(15))
    frac = x * g - math.floor(x * g)
    se = math.sqrt(frac * (1 - frac) / draws)
    assert abs(out.mean() - x * g) <= 5 * se


@pytest.mark.parametrize("bad", [-0.1, 1.0000001, math.nan, math.inf])
def test_rounding_refuses_values_outside_unit_interval(bad: float) -> None:
    with pytest.raises(ParameterError, match=r"x=.*values in \[0, 1\]"):
        encode([0.5, bad], 4, rng(0))


def test_randomize_reduces_into_ring() -> None:
    m = 11
    y = randomize(np.zeros((4, 100)), 3, m, rng(0), share_sampler=constant_sampler(-3))
    assert np.all(y == m - 3)
    big = randomize(np.ones((2, 3)), 3, 2**64, rng(0), share_sampler=constant_sampler(-5))
    assert big.dtype == object
    assert big.tolist() == [[2**64 - 2] * 3] * 2
    assert np.all(randomize(np.full((2, 3), 0.5), 4, 5, rng(0)) == 2)  # no noise: central model


# ---------------------------------------------------------------------------------------------
# The protocol: trust models, events and accounting (spec §3.6, §3.7, §4.4-§4.6)
# ---------------------------------------------------------------------------------------------


def test_trust_models() -> None:
    """Spec §4.4-§4.6: shares under SecAgg (Thms 1, 2, 4), shuffled (Thm 3), central (5), local (6)."""
    assert [trust_model(Variant.from_theorem(t)) for t in range(1, 7)] == [
        TrustModel.DISTRIBUTED,
        TrustModel.DISTRIBUTED,
        TrustModel.SHUFFLE,
        TrustModel.DISTRIBUTED,
        TrustModel.CENTRAL,
        TrustModel.LOCAL,
    ]
    assert trust_model("shuffled-polya") is TrustModel.SHUFFLE
    with pytest.raises(ParameterError, match="variant='polya'"):
        trust_model("polya")
    with pytest.raises(ParameterTypeError, match="variant=3"):
        trust_model(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", list(Variant))
def test_release_events(variant: Variant) -> None:
    p = params(variant)
    acc = Accountant()
    release = Protocol(p, exact=False).release(rng(16).random((3, p.users, 2)), rng(17), accountant=acc)
    assert acc.ledger == release.events
    assert all(e.count == 2 for e in release.events)  # two coordinates: two aggregates
    mechanisms = [e.mechanism for e in release.events]
    model = trust_model(variant)
    if model is TrustModel.DISTRIBUTED:
        assert mechanisms == [DistributedSum(p.share, users=p.users, sensitivity=p.g)]  # type: ignore[arg-type]
    elif model is TrustModel.CENTRAL:
        assert mechanisms == [AdditiveNoise(p.server_noise, sensitivity=p.g)]  # type: ignore[arg-type]
    elif model is TrustModel.LOCAL:
        assert mechanisms == [AdditiveNoise(p.share, sensitivity=p.g)]  # type: ignore[arg-type]
    else:
        summed, relaxed = mechanisms
        assert summed == DistributedSum(p.share, users=p.users, sensitivity=p.g)  # type: ignore[arg-type]
        assert isinstance(relaxed, PureDP)
        assert relaxed.eps == p.epsilon / 2
        assert "Cheu & Yan" in relaxed.source
    assert release_mechanisms(p) == tuple(mechanisms)


@pytest.mark.parametrize(
    "variant", [Variant.POLYA_SHARES, Variant.SHUFFLED_POLYA, Variant.CENTRAL_LAPLACE, Variant.LOCAL_LAPLACE]
)
def test_accounted_epsilon_is_the_theorems(variant: Variant) -> None:
    """Pure route: Theorems 1, 5 (central) and 3 (ε' + 2ε̂) spend ε; Theorem 6 is ε-LDP per message."""
    p = params(variant)
    acc = Accountant()
    Protocol(p, exact=False).release(rng(18).random((2, p.users)), rng(19), accountant=acc)
    answer = acc.epsilon(1e-6, route="pure")
    assert float(answer) == pytest.approx(p.epsilon, rel=1e-12)


def test_theorem1_event_alone_equals_epsilon() -> None:
    p = params(Variant.POLYA_SHARES)
    (event,) = Protocol(p).events()
    assert event == Event(DistributedSum(p.share, users=p.users, sensitivity=p.g))  # type: ignore[arg-type]
    assert float(Accountant().compose(event).epsilon(1e-6, route="pure")) == pytest.approx(
        p.epsilon, rel=1e-12
    )


@pytest.mark.parametrize("variant", list(Variant))
@pytest.mark.parametrize("exact", [True, False])
def test_end_to_end_accuracy(variant: Variant, exact: bool) -> None:
    """|z - Σx| <= τ/g + rounding (Term (i) + Term (ii), spec §2.1, §4.3) for nearly all reps."""
    p = params(variant)
    R, n = 2000, p.users
    x = rng(20 + variant.theorem).random((R, n))
    release = Protocol(p, exact=exact).release(x, rng(30 + variant.theorem))
    error = release.estimate - x.sum(axis=1)
    rounding = math.sqrt(2 * n * math.log(2 / 1e-3)) / p.g  # P[Term (ii) exceeds it] <= 1e-3
    assert np.mean(np.abs(error) <= p.tau / p.g + rounding) >= 0.995
    assert abs(error.mean()) <= 5 * error.std() / math.sqrt(R)  # unbiased
    assert np.array_equal(release.estimate, release.decoded / p.g)
    assert release.model is trust_model(variant)


def test_theorem1_end_to_end_n64() -> None:
    """The brief's case: Theorem 1, n = 64, ε = 1, horizon 10^4, R = 2000, exact noise."""
    p = protocol_parameters(Variant.POLYA_SHARES, 1.0, 64, 10**4)
    x = rng(40).random((2000, 64))
    release = Protocol(p, secure_aggregation="masked").release(x, rng(41))
    error = np.abs(release.estimate - x.sum(axis=1))
    assert np.mean(error <= p.tau / p.g + math.sqrt(2 * 64 * math.log(2e3)) / p.g) >= 0.995
    assert release.estimate.shape == (2000,)


def test_system_randomness_for_exact_noise() -> None:
    p = params(Variant.POLYA_SHARES)
    x = rng(42).random((50, p.users))
    release = Protocol(p).release(x, rng(43), noise_rng=SystemRandomness())
    assert np.mean(np.abs(release.estimate - x.sum(axis=1)) <= p.tau / p.g + 4) >= 0.9
    with pytest.raises(ParameterTypeError, match="rng="):
        Protocol(p, exact=False).release(x, rng(43), noise_rng=SystemRandomness())


def test_vector_release_shapes_and_readonly() -> None:
    p = params(Variant.POLYA_SHARES)
    x = rng(44).random((7, p.users, 3))
    release = Protocol(p, secure_aggregation="pairwise").release(x, rng(45))
    assert release.estimate.shape == release.decoded.shape == release.view.shape == (7, 3)
    assert release.dropped.shape == (7,)
    assert release.topped_up.shape == (7, p.users)
    with pytest.raises(ValueError, match="read-only"):
        release.estimate[0, 0] = 0.0


@pytest.mark.parametrize("secure", ["modular", "masked", "pairwise"])
@pytest.mark.parametrize(
    "variant", [Variant.POLYA_SHARES, Variant.SHUFFLED_POLYA, Variant.CENTRAL_LAPLACE, Variant.LOCAL_LAPLACE]
)
def test_underflow_through_the_whole_protocol(secure: str, variant: Variant) -> None:
    """x = 0 and every noise draw -1: the noisy sum is negative and must decode exactly."""
    p = params(variant, users=16)
    protocol = Protocol(p, secure_aggregation=secure, share_sampler=constant_sampler(-1))
    release = protocol.release(np.zeros((3, 16)), rng(46))
    expected = -1 if variant is Variant.CENTRAL_LAPLACE else -16  # one server draw, or one share per user
    assert release.decoded.tolist() == [expected] * 3
    assert release.view.tolist() == [p.m + expected] * 3


@pytest.mark.parametrize("secure", ["modular", "masked", "pairwise"])
def test_big_modulus_protocol(secure: str) -> None:
    p = big_params()
    assert p.m >= BIG_MODULUS
    protocol = Protocol(p, secure_aggregation=secure, share_sampler=constant_sampler(-3))
    dropped = np.zeros(8, dtype=bool)
    dropped[2] = True
    release = protocol.release(np.full((2, 8), 0.5), rng(47), dropped=dropped)
    assert release.view.dtype == object
    assert release.decoded.tolist() == [7 * 2 - 3 * 8] * 2  # xhat = 2 for each of 7 survivors; 8 shares
    assert release.estimate.tolist() == [(14 - 24) / 4] * 2
    exact = Protocol(p, secure_aggregation=secure).release(np.full((2, 8), 0.5), rng(48))
    assert np.all(np.abs(exact.estimate - 4.0) < 40)


# ---------------------------------------------------------------------------------------------
# Dropouts and partial batches: never an under-noised release (spec §9.5)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("secure", ["modular", "masked", "pairwise"])
@pytest.mark.parametrize("variant", [Variant.POLYA_SHARES, Variant.SKELLAM_SHARES, Variant.SHUFFLED_POLYA])
def test_top_up_restores_all_n_shares(secure: str, variant: Variant) -> None:
    p = params(variant, users=64)
    n, R = p.users, 5
    dropped = np.zeros((R, n), dtype=bool)
    for r, k in enumerate([0, 1, 5, 20, 31]):
        dropped[r, rng(r).choice(n, k, replace=False)] = True
    protocol = Protocol(p, secure_aggregation=secure, share_sampler=constant_sampler(1), threshold=33)
    release = protocol.release(np.zeros((R, n)), rng(49), dropped=dropped)
    assert release.decoded.tolist() == [n] * R  # every release carries exactly n shares
    assert release.dropped.tolist() == [0, 1, 5, 20, 31]
    assert np.array_equal(release.topped_up.sum(axis=1), release.dropped)
    assert np.all(release.topped_up[dropped] == 0)  # only survivors draw
    for r in range(R):
        survivors = release.topped_up[r][~dropped[r]]
        assert survivors.max() - survivors.min() <= 1  # round-robin


def test_top_up_more_shares_than_survivors() -> None:
    p = params(Variant.POLYA_SHARES, users=10)
    dropped = np.array([True] * 7 + [False] * 3)
    protocol = Protocol(p, share_sampler=constant_sampler(1), threshold=3)
    release = protocol.release(np.zeros((2, 10)), rng(50), dropped=dropped)
    assert release.decoded.tolist() == [10, 10]
    assert release.topped_up[0].tolist() == [0] * 7 + [3, 2, 2]


def test_top_up_noise_has_the_accounted_variance() -> None:
    """With real Pólya shares, k dropouts plus top-up leave the total Lap_Z(g/ε) variance (§9.1)."""
    p = params(Variant.POLYA_SHARES, users=16)  # g = 4, β = e^{-1/4}
    n, R = p.users, 6000
    dropped = np.zeros(n, dtype=bool)
    dropped[:7] = True
    release = Protocol(p, threshold=9).release(np.full((R, n), 0.5), rng(51), dropped=dropped)
    noise = release.decoded - n * p.g // 2  # x g = 2 exactly: no rounding noise
    beta = float(p.share.beta)  # type: ignore[union-attr]
    accounted = 2 * beta / (1 - beta) ** 2
    assert noise.var() == pytest.approx(accounted, rel=0.12)
    assert abs(noise.var() - accounted * (n - 7) / n) > 0.3 * accounted  # what no top-up would give


@pytest.mark.parametrize("variant", [Variant.POLYA_SHARES, Variant.SHUFFLED_POLYA])
def test_refuse_policy_raises(variant: Variant) -> None:
    p = params(variant, users=16)
    dropped = np.zeros((2, 16), dtype=bool)
    dropped[1, :3] = True
    protocol = Protocol(p, dropout_policy="refuse")
    with pytest.raises(DropoutError, match="3 of 16 users dropped out") as info:
        protocol.release(np.zeros((2, 16)), rng(52), dropped=dropped)
    assert isinstance(info.value, ProtocolError)
    assert isinstance(info.value, ValueError)
    assert info.value.dropped == 3
    assert protocol.release(np.zeros((2, 16)), rng(52)).dropped.tolist() == [0, 0]


@pytest.mark.parametrize("variant", [Variant.CENTRAL_LAPLACE, Variant.LOCAL_LAPLACE])
def test_central_and_local_need_no_top_up(variant: Variant) -> None:
    p = params(variant, users=16)
    dropped = np.zeros(16, dtype=bool)
    dropped[:5] = True
    protocol = Protocol(p, dropout_policy="refuse", share_sampler=constant_sampler(1))
    release = protocol.release(np.zeros((2, 16)), rng(53), dropped=dropped)
    assert release.decoded.tolist() == ([1, 1] if variant is Variant.CENTRAL_LAPLACE else [11, 11])
    assert not release.topped_up.any()


def test_too_few_survivors_raise() -> None:
    p = params(Variant.POLYA_SHARES, users=16)
    dropped = np.zeros(16, dtype=bool)
    dropped[:8] = True  # 8 survivors < default threshold 9
    with pytest.raises(RecoveryError, match="only 8 of 16 users survived"):
        Protocol(p).release(np.zeros((1, 16)), rng(54), dropped=dropped)


def test_no_survivor_no_release() -> None:
    p = params(Variant.LOCAL_LAPLACE, users=16)
    with pytest.raises(ProtocolError, match="all 16 users dropped out"):
        Protocol(p).release(np.zeros((2, 16)), rng(54), dropped=np.ones(16, dtype=bool))


def test_partial_batch_is_never_released() -> None:
    p = params(Variant.POLYA_SHARES, users=16)
    with pytest.raises(PartialBatchError, match="a batch of 15 users is partial") as info:
        Protocol(p).release(np.zeros((2, 15)), rng(55))
    assert isinstance(info.value, ProtocolError)
    with pytest.raises(ParameterError, match="exactly n=16"):
        Protocol(p).release(np.zeros((2, 17)), rng(55))


def test_polya_scale_bug_is_visible_through_the_injected_sampler() -> None:
    """Spec §9.1: the released code's Gamma scale (1-β)/β gives far too little noise."""
    p = params(Variant.POLYA_SHARES, users=64)
    share = p.share
    assert isinstance(share, Polya)
    beta = float(share.beta)

    def buggy(gen: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.int64]:
        lam = gen.gamma(shape=1 / 64, scale=(1 - beta) / beta, size=(2, *shape))
        draws = gen.poisson(lam)
        return np.asarray(draws[0] - draws[1], dtype=np.int64)

    x = np.full((3000, 64), 0.5)  # g = 8: x g = 4 exactly
    accounted = 2 * beta / (1 - beta) ** 2
    right = Protocol(p).release(x, rng(56)).decoded - 64 * 4
    wrong = Protocol(p, share_sampler=buggy).release(x, rng(56)).decoded - 64 * 4
    assert right.var() == pytest.approx(accounted, rel=0.15)
    assert wrong.var() < 0.05 * accounted


# ---------------------------------------------------------------------------------------------
# Validation at the public boundary
# ---------------------------------------------------------------------------------------------


def test_protocol_validation() -> None:
    p = params(Variant.POLYA_SHARES)
    with pytest.raises(
        ParameterError, match=r"secure_aggregation=.sum. is invalid.*modular, masked, pairwise"
    ):
        Protocol(p, secure_aggregation="sum")
    with pytest.raises(ParameterError, match="dropout_policy"):
        Protocol(p, dropout_policy="ignore")
    with pytest.raises(ParameterError, match=r"threshold=65 is invalid.*\[1, n=64\]"):
        Protocol(p, threshold=65)
    with pytest.raises(ParameterTypeError, match="exact"):
        Protocol(p, exact=1)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="params"):
        Protocol("theorem 1")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="pairwise"):
        Protocol(
            params(Variant.POLYA_SHARES, users=protocols.PAIRWISE_MAX_USERS + 1),
            secure_aggregation="pairwise",
        )
    assert Protocol(p).threshold == 33
    protocol = Protocol(p)
    with pytest.raises(ParameterError, match=r"x=.*shape \(R, n\) or \(R, n, d\)"):
        protocol.release(np.zeros(64), rng(0))
    with pytest.raises(ParameterTypeError, match="rng"):
        protocol.release(np.zeros((1, 64)), 0)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="accountant"):
        protocol.release(np.zeros((1, 64)), rng(0), accountant=object())  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="x="):
        protocol.release(np.full((1, 64), 2.0), rng(0))
    sampler = Protocol(p, share_sampler=lambda _g, _s: np.zeros(3, dtype=np.int64))
    with pytest.raises(ParameterError, match="share_sampler"):
        sampler.release(np.zeros((1, 64)), rng(0))


def test_errors_are_value_errors() -> None:
    assert issubclass(ProtocolError, LearnerError)
    assert issubclass(LearnerError, ValueError)
    for cls in (DropoutError, RecoveryError, PartialBatchError):
        assert issubclass(cls, ProtocolError)
