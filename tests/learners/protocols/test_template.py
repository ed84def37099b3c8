"""Tests of :mod:`learners.protocols.template`: the R / S / A template of the distributed MAB paper.

Chowdhury & Zhou (2023): the trust model of each theorem (shares under secure aggregation,
Theorems 1, 2, 4; shuffled, Theorem 3 with the relaxed secure aggregation of App. D.2; central and
local discrete Laplace, Theorems 5, 6 and App. H.1, H.2), the events each release composes
(sensitivity ``g``), the end-to-end accuracy, and dropouts and partial batches: the proofs need all
``n`` shares, and Algorithm 1 never aggregates a partial batch.
Expected values are computed here independently (Python integers, closed forms), never by the
code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

from accounting.accountant import Accountant, Event
from accounting.mechanisms import AdditiveNoise, DistributedSum, PureDP
from accounting.noise import Polya, SystemRandomness
from accounting.papers.distributed_dp_mab import Variant, protocol_parameters
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
from learners.protocols import BIG_MODULUS, Protocol, TrustModel, release_mechanisms, trust_model
from tests.learners.protocols.helpers import big_params, constant_sampler, params, rng


def test_trust_models() -> None:
    """Shares under SecAgg (Theorems 1, 2, 4), shuffled (Theorem 3), central (5), local (6)."""
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
    """|z - Σx| <= τ/g + rounding for nearly all reps: the noise within τ (Term (i), decoded exactly) and
    the rounding error, (n/g²)-sub-Gaussian (Term (ii)), of the proof of Theorem 1."""
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
# Dropouts and partial batches: never an under-noised release
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
    """With real Pólya shares, k dropouts plus top-up leave the total Lap_Z(g/ε) variance (Theorem 1)."""
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
    """The authors' released code (Chowdhury & Zhou 2023, footnote 5) draws the Pólya share's Gamma with
    scale (1-β)/β, not footnote 3's β/(1-β): far too little noise, visible through the sampler."""
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
