"""Tests of :class:`accounting.mechanisms.PureDP` and of its accounting in the :class:`Accountant`.

A ``PureDP`` answers for the worst case over all ``ε``-DP mechanisms, binary randomized response
(Kairouz, Oh & Viswanath 2015). Expected values are recomputed here in :mod:`mpmath` from the two
output probabilities of randomized response, never taken from the code under test; the RDP curve
is checked against Bun & Steinke 2016 Prop. 3.3 (``D_α <= αε²/2``) and ``D_α <= D_∞ = ε``; the
composed answers against the exact optimal composition of Kairouz, Oh & Viswanath 2015 Thm 3.3.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import (
    AdditiveNoise,
    DiscreteLaplace,
    DistributedSum,
    Enclosure,
    Gaussian,
    ParameterError,
    ParameterTypeError,
    PureDP,
)
from accounting.accountant import Accountant, Event, mechanism_from_dict, mechanism_to_dict
from accounting.certified import float_down, float_up
from accounting.composition import advanced_composition_kov, advanced_composition_kov_delta
from accounting.papers.distributed_dp_mab import Variant, protocol_parameters

Mpf = Any
REF_DPS = 80
SOURCE = "Cheu & Yan, relaxed secure aggregation (Theorem 3's 2ε̂ term)"
EPSILONS = [0.01, 0.3, 1.0, 5.0]


def rr(eps: float) -> tuple[Mpf, Mpf]:
    """The two probabilities ``P(1) = e^ε/(1+e^ε)`` and ``Q(1) = 1/(1+e^ε)`` of randomized response."""
    e = mp.exp(mp.mpf(eps))
    return e / (1 + e), 1 / (1 + e)


def rr_delta(eps: float, eps_prime: float) -> Mpf:
    """Hockey-stick divergence of randomized response: ``Σ_x [P(x) - e^{ε'} Q(x)]_+`` over both outputs."""
    p, q = rr(eps)
    ratio = mp.exp(mp.mpf(eps_prime))
    return max(mp.zero, p - ratio * q) + max(mp.zero, q - ratio * p)


def rr_epsilon(eps: float, delta: float) -> Mpf:
    """The smallest ``ε' >= 0`` with ``rr_delta(ε') <= δ``, solved from the first output alone."""
    p, q = rr(eps)
    return max(mp.zero, mp.log((p - mp.mpf(delta)) / q)) if p > delta else mp.zero


def rr_renyi(eps: float, alpha: float) -> Mpf:
    """``D_α(P || Q) = 1/(α-1) ln Σ_x P(x)^α Q(x)^{1-α}`` of randomized response."""
    p, q = rr(eps)
    a = mp.mpf(alpha)
    return mp.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)


# -- the mechanism ------------------------------------------------------------------------


@pytest.mark.parametrize("eps", EPSILONS)
def test_delta_is_the_randomized_response_profile(eps: float) -> None:
    mech = PureDP(eps, SOURCE)
    for eps_prime in [0.0, eps / 1000, eps / 3, eps * 0.999, eps, 2 * eps]:
        got = mech.delta(eps_prime)
        with mp.workdps(REF_DPS):
            ref = rr_delta(eps, eps_prime)
        if eps_prime >= eps:
            # Randomized response is ε-DP: exactly 0 (the reference is 0 up to its rounding).
            assert got == Enclosure.exact(0)
            assert ref < mp.mpf(10) ** (10 - REF_DPS)
        else:
            assert ref in got
            assert got.digits() > 25
    # At ε' = 0 it is the total variation, tanh(ε/2).
    with mp.workdps(REF_DPS):
        assert mp.tanh(mp.mpf(eps) / 2) in mech.delta(0.0)


@pytest.mark.parametrize("eps", EPSILONS)
def test_epsilon_is_the_smallest_with_delta_below(eps: float) -> None:
    mech = PureDP(eps, SOURCE)
    for delta in [1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.99]:
        got = mech.epsilon(delta)
        with mp.workdps(REF_DPS):
            ref = rr_epsilon(eps, delta)
        assert ref in got
        # Valid: δ at the reported ε is at most the target ...
        assert mech.delta(got.upper).hi <= delta
        # ... and smallest: a little less ε no longer meets it.
        if got.hi > 0:
            assert mech.delta(float_down(got.lo) * (1 - 1e-9)).lo > delta
        else:
            assert mech.delta(0.0).hi <= delta


@settings(max_examples=60, deadline=None)
@given(
    eps=st.floats(1e-4, 30.0),
    d1=st.floats(1e-15, 0.999),
    d2=st.floats(1e-15, 0.999),
)
def test_profile_round_trip_and_monotone(eps: float, d1: float, d2: float) -> None:
    mech = PureDP(eps, SOURCE)
    lo_d, hi_d = sorted((d1, d2))
    e_lo_d, e_hi_d = mech.epsilon(lo_d), mech.epsilon(hi_d)
    assert mech.delta(e_lo_d.upper).hi <= lo_d
    assert mech.delta(e_hi_d.upper).hi <= hi_d
    # ε(δ) is nonincreasing in δ, δ(ε') nonincreasing in ε'.
    assert e_hi_d.lo <= e_lo_d.hi
    small, large = sorted((e_lo_d.upper, e_hi_d.upper))
    assert mech.delta(large).lo <= mech.delta(small).hi
    assert e_lo_d.lo >= 0
    assert e_lo_d.hi <= eps


@pytest.mark.parametrize("eps", EPSILONS)
def test_rdp_is_the_randomized_response_divergence_and_below_the_classic_bounds(eps: float) -> None:
    mech = PureDP(eps, SOURCE)
    previous = mp.zero
    for alpha in [1 + 1e-5, 1.001, 1.5, 2.0, 10.0, 100.0, 1e4]:
        got = mech.rdp(alpha)
        with mp.workdps(REF_DPS):
            ref = rr_renyi(eps, alpha)
            classic = min(mp.mpf(eps), mp.mpf(alpha) * mp.mpf(eps) ** 2 / 2)  # Bun–Steinke Prop. 3.3
        assert ref in got
        assert got.hi <= classic
        assert got.hi >= previous  # nondecreasing in α
        previous = got.lo
    assert mech.rdp(math.inf) == Enclosure.exact(eps)


@pytest.mark.parametrize("eps", EPSILONS)
def test_pure_epsilon_and_zcdp(eps: float) -> None:
    mech = PureDP(eps, SOURCE)
    assert mech.pure_epsilon() == Enclosure.exact(eps)
    rho = mech.zcdp_rho()
    assert rho.upper == float_up(mp.mpf(eps) ** 2 / 2)  # exact, Bun–Steinke Prop. 3.3
    with mp.workdps(REF_DPS):
        assert mp.mpf(eps) * mp.tanh(mp.mpf(eps) / 2) in rho  # the KL divergence, lim D_α/α
    # ρ bounds D_α/α at every order.
    for alpha in [1.01, 2.0, 7.0, 50.0]:
        assert mech.rdp(alpha).lo / alpha <= rho.hi


def test_worst_case_dominates_a_real_epsilon_dp_mechanism() -> None:
    """Discrete Laplace of scale 2 is 0.5-DP: its exact answers never exceed PureDP(0.5)'s."""
    lap = AdditiveNoise(DiscreteLaplace(2.0))
    worst = PureDP(lap.pure_epsilon().upper, "discrete Laplace, Fact 3")
    for eps_prime in [0.0, 0.1, 0.3, 0.49]:
        assert lap.delta(eps_prime).lo <= worst.delta(eps_prime).hi
    for delta in [1e-6, 1e-3, 0.1]:
        assert lap.epsilon(delta).lo <= worst.epsilon(delta).hi
    for alpha in [1.5, 4.0, 32.0]:
        assert lap.rdp(alpha).lo <= worst.rdp(alpha).hi


def test_non_float_epsilon_is_rounded_up() -> None:
    third = PureDP(Fraction(1, 3), SOURCE)
    assert Fraction(third.eps) >= Fraction(1, 3)
    assert third.eps == math.nextafter(1 / 3, math.inf)  # 1/3 as a float is below 1/3
    with mp.workdps(50):
        assert PureDP(mp.mpf(1) / 3, SOURCE).eps == third.eps
    assert PureDP(2, SOURCE).eps == 2.0


# -- in the Accountant --------------------------------------------------------------------


def test_composition_with_a_distributed_sum_by_the_pure_route() -> None:
    """PureDP(0.3) twice plus the 0.5-DP Pólya distributed sum of Theorem 1: ε = 0.6 + 0.5."""
    p = protocol_parameters(Variant.POLYA_SHARES, 0.5, 64, 10**6)
    assert p.share is not None
    dsum = DistributedSum(p.share, 64, p.g)
    acc = Accountant().compose(PureDP(0.3, SOURCE), 2).compose(dsum)
    answer = acc.epsilon(1e-6, route="pure")
    assert answer.route == "pure"
    assert float(answer) == pytest.approx(1.1, abs=1e-12)
    with mp.workdps(50):
        exact_sum = 2 * mp.mpf(0.3) + dsum.pure_epsilon().hi
    assert float(answer) == float_up(exact_sum)  # the sum, rounded up
    assert float(acc.delta(float(answer), route="pure")) == 0.0
    # The PLD route composes a PureDP with the lattice release (its worst-case pair, issue 14):
    # its enclosure reaches below the pure sum (up to the grid's pessimism above it); auto takes
    # the best tried.
    pld = acc.epsilon(1e-6, route="pld")
    assert pld.lo <= float(answer) <= pld.hi * (1 + 1e-3)
    auto = acc.epsilon(1e-6)
    assert set(auto.candidates) == {"pld", "pure"}
    assert float(auto) == min(auto.candidates.values())


def test_single_pure_dp_is_answered_by_its_own_profile() -> None:
    mech = PureDP(1.0, SOURCE)
    acc = Accountant().compose(mech)
    answer = acc.epsilon(1e-5)
    assert answer.route == "pld"
    assert answer == mech.epsilon(1e-5, acc.dps)
    assert acc.delta(0.5) == mech.delta(0.5, acc.dps)
    # The RDP route is a valid upper bound: never below the exact randomized-response ε.
    rdp = acc.epsilon(1e-5, route="rdp")
    with mp.workdps(REF_DPS):
        assert float(rdp) >= rr_epsilon(1.0, 1e-5)
    assert float(acc.epsilon(1e-5, route="zcdp")) >= float(rdp)


def test_repeated_pure_dp_is_never_below_the_optimal_composition() -> None:
    """Kairouz–Oh–Viswanath Thm 3.3 is exact for k-fold ε-DP: the RDP route may not beat it."""
    acc = Accountant().compose(PureDP(0.3, SOURCE), 10)
    # The PLD route answers k runs of one cited guarantee by KOV itself (exact).
    kov = acc.epsilon(1e-5, route="pld")
    assert kov.lo <= advanced_composition_kov(0.3, 0.0, 10, 1e-5) <= kov.hi
    eps = acc.epsilon(1e-5, route="rdp")
    assert float(eps) >= advanced_composition_kov(0.3, 0.0, 10, 1e-5) * (1 - 1e-12)
    assert advanced_composition_kov_delta(0.3, 0.0, 10, float(eps)) <= 1e-5
    delta = acc.delta(2.0, route="rdp")
    assert float(delta) >= advanced_composition_kov_delta(0.3, 0.0, 10, 2.0) * (1 - 1e-12)


def test_auto_prefers_the_optimal_composition_for_a_long_composition() -> None:
    acc = Accountant().compose(PureDP(0.1, SOURCE), 1000)
    answer = acc.epsilon(1e-6)
    assert answer.route == "pld"  # KOV's optimal composition, exactly
    assert float(answer) == advanced_composition_kov(0.1, 0.0, 1000, 1e-6)
    assert float(answer) < float(acc.epsilon(1e-6, route="rdp")) < 100.0
    assert answer.candidates["pure"] == pytest.approx(100.0)


def test_ledger_round_trip() -> None:
    mech = PureDP(0.3, SOURCE)
    assert mechanism_to_dict(mech) == {
        "type": "PureDP",
        "epsilon": 0.3,
        "source": SOURCE,
        "neighbouring": "replace-one",
    }
    assert mechanism_from_dict(mechanism_to_dict(mech)) == mech
    acc = Accountant().compose(mech, 2).compose(AdditiveNoise(Gaussian(3.0))).compose(Event(PureDP(1.0, "x")))
    back = Accountant.from_json(acc.to_json())
    assert back == acc
    assert back.ledger[0].mechanism == mech
    assert float(back.epsilon(1e-6, route="rdp")) == float(acc.epsilon(1e-6, route="rdp"))


@pytest.mark.parametrize(
    ("call", "name", "error"),
    [
        (lambda: PureDP(0.0, SOURCE), "epsilon", ParameterError),
        (lambda: PureDP(-0.5, SOURCE), "epsilon", ParameterError),
        (lambda: PureDP(math.inf, SOURCE), "epsilon", ParameterError),
        (lambda: PureDP(math.nan, SOURCE), "epsilon", ParameterError),
        (lambda: PureDP("0.3", SOURCE), "epsilon", ParameterTypeError),  # type: ignore[arg-type]
        (lambda: PureDP(0.3, ""), "source", ParameterError),
        (lambda: PureDP(0.3, "   "), "source", ParameterError),
        (lambda: PureDP(0.3, None), "source", ParameterTypeError),  # type: ignore[arg-type]
        (lambda: PureDP(0.3, SOURCE).epsilon(0.0), "delta", ParameterError),
        (lambda: PureDP(0.3, SOURCE).epsilon(1.0), "delta", ParameterError),
        (lambda: PureDP(0.3, SOURCE).delta(-1.0), "epsilon", ParameterError),
        (lambda: PureDP(0.3, SOURCE).rdp(1.0), "alpha", ParameterError),
        (lambda: mechanism_from_dict({"type": "PureDP", "epsilon": 0.3}), "mechanism", ParameterError),
        (
            lambda: mechanism_from_dict({"type": "PureDP", "epsilon": -1, "source": "x"}),
            "epsilon",
            ParameterError,
        ),
        (lambda: mechanism_from_dict({"type": "Pure"}), "type", ParameterError),
    ],
)
def test_bad_input_names_the_parameter(call: Callable[[], object], name: str, error: type[Exception]) -> None:
    with pytest.raises(error) as err:
        call()
    assert getattr(err.value, "name", None) == name
    assert name in str(err.value)
