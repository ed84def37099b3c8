"""Tests of :mod:`accounting.conversion` beyond Lemma 10 over given orders (test_conversion.py).

Each test cites the result its function implements. Reference values are computed here
independently (closed-form stationary points, direct sums over randomized response), never
taken from the code under test.
"""

from __future__ import annotations

import math
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import bounds
from accounting.certified import float_up
from accounting.conversion import (
    optimize_rdp_order,
    optimize_rdp_order_delta,
    pure_to_rdp,
    pure_to_zcdp,
    rdp_to_delta,
    rdp_to_dp,
    rdp_to_dp_mironov,
    zcdp_delta_cks,
    zcdp_to_dp_bun_steinke,
    zcdp_to_dp_cks,
)
from accounting.errors import ParameterError, ParameterTypeError
from accounting.papers.distributed_dp_mab import skellam_rdp_theorem2_lemma3

FAST = settings(max_examples=25, deadline=None)

rhos = st.floats(1e-4, 50)
deltas = st.floats(1e-12, 0.5)


def _gaussian_1000(alpha: float) -> float:
    """RDP of 1000 Gaussian mechanisms with σ = 1 (Mironov 2017 Prop. 7), rounded up."""
    with mp.workdps(50):
        return float_up(mp.mpf(alpha) * 1000 / 2)


def _lemma10_zcdp_min(rho: float, delta: float) -> mp.mpf:
    """inf_α of Lemma 10 on αρ, from the stationary point ρ(α-1)² = ln(1/δ) - ln α (mp.findroot)."""
    with mp.workdps(60):
        r, L = mp.mpf(rho), -mp.log(mp.mpf(delta))
        a = mp.findroot(
            lambda x: r * (x - 1) ** 2 - L + mp.log(x), (1 + 1e-9, 2 + mp.sqrt(L / r)), solver="anderson"
        )
        return r * a + (L - mp.log(a)) / (a - 1) + mp.log(1 - 1 / a)


# ---------------------------------------------------------------------------------------------
# Acceptance (issue 3): Gaussian σ = 1 composed 1000 times, δ = 1e-5, RDP route over real α
# ---------------------------------------------------------------------------------------------


def test_acceptance_gaussian_1000_rdp_route_real_orders() -> None:
    """Issue 3: Lemma 10 (spec §3.4) on α·1000/(2σ²), optimised over real α, gives 648.78198593."""
    eps, alpha = optimize_rdp_order(_gaussian_1000, 1e-5)
    assert eps == pytest.approx(648.78198593, rel=1e-9)
    exact = _lemma10_zcdp_min(500, 1e-5)
    assert mp.mpf(eps) >= exact  # never optimistic
    assert eps == pytest.approx(float(exact), rel=1e-14)
    assert alpha == pytest.approx(1.15081416, rel=1e-6)


def test_acceptance_gaussian_1000_zcdp_cks_is_the_same_number() -> None:
    """The zCDP route (ρ = 1000/2, CKS conversion) is the same curve, so the same number."""
    eps = zcdp_to_dp_cks(500, 1e-5)
    assert eps == pytest.approx(648.78198593, rel=1e-9)
    assert mp.mpf(eps) >= _lemma10_zcdp_min(500, 1e-5)
    assert eps == pytest.approx(optimize_rdp_order(_gaussian_1000, 1e-5)[0], rel=1e-14)


def test_integer_orders_are_no_better_than_real_orders() -> None:
    real, _ = optimize_rdp_order(_gaussian_1000, 1e-5)
    integer, alpha = optimize_rdp_order(_gaussian_1000, 1e-5, integer=True)
    assert alpha == 2.0
    assert integer > real


# ---------------------------------------------------------------------------------------------
# Integer orders: the Skellam vector of spec §3.4
# ---------------------------------------------------------------------------------------------


def test_integer_search_reproduces_spec_3_4_skellam_vector() -> None:
    """Spec §3.4: Lemma 3 with g = 320, integer α in 2..2000, δ = 1e-6 gives ε' = 5.2225."""
    fn = partial(skellam_rdp_theorem2_lemma3, epsilon=1.0, scaling=10, users=1024)
    eps, alpha = optimize_rdp_order(fn, 1e-6, alpha_min=2, alpha_max=2000, integer=True)
    assert alpha.is_integer()
    assert eps == pytest.approx(5.2225, abs=5e-5)
    # The search visits only some orders; it must find the same minimum as all of them.
    neighbourhood = [(a, fn(a)) for a in range(max(2, int(alpha) - 20), int(alpha) + 21)]
    assert eps == rdp_to_dp(neighbourhood, 1e-6)


# ---------------------------------------------------------------------------------------------
# Mironov 2017 Prop. 3 versus Lemma 10
# ---------------------------------------------------------------------------------------------


@FAST
@given(rho=rhos, delta=deltas, alpha=st.floats(1.001, 1e4))
def test_mironov_is_never_tighter_than_lemma10(rho: float, delta: float, alpha: float) -> None:
    """Lemma 10 improves each order's term by ln(1 - 1/α) - ln(α)/(α-1) < 0 (Mironov 2017 Prop. 3)."""
    pair = [(alpha, alpha * rho)]
    assert rdp_to_dp_mironov(pair, delta) >= rdp_to_dp(pair, delta)
    with mp.workdps(50):
        a, L = mp.mpf(alpha), -mp.log(mp.mpf(delta))
        expected = mp.mpf(alpha * rho) + L / (a - 1)
    assert rdp_to_dp_mironov(pair, delta) == pytest.approx(float(expected), rel=1e-14)


@pytest.mark.slow
@FAST
@given(rho=rhos, delta=deltas)
def test_mironov_optimised_is_never_tighter(rho: float, delta: float) -> None:
    fn = partial(bounds.gaussian_rdp, sigma=math.sqrt(0.5 / rho))
    assert optimize_rdp_order(fn, delta, conversion="mironov")[0] >= optimize_rdp_order(fn, delta)[0]


# ---------------------------------------------------------------------------------------------
# The δ form (CKS 2020 Prop. 12) and its inverse relation with the ε form (Lemma 10)
# ---------------------------------------------------------------------------------------------


@FAST
@given(alpha=st.floats(1.01, 500), rdp=st.floats(0.0, 20), delta=st.floats(1e-15, 0.1))
def test_delta_and_epsilon_forms_are_inverse(alpha: float, rdp: float, delta: float) -> None:
    """CKS 2020 Prop. 12 solved for ε is Lemma 10 (spec §3.4): round trip at a fixed order."""
    pair = [(alpha, rdp)]
    eps = rdp_to_dp(pair, delta)
    if eps == 0:  # Lemma 10 clipped at 0: the order alone already gives (0, δ)
        assert rdp_to_delta(pair, 0.0) <= delta * (1 + 1e-12)
        return
    back = rdp_to_delta(pair, eps)
    assert back <= delta * (1 + 1e-12)  # eps is rounded up, so δ at eps is at most δ
    assert back == pytest.approx(delta, rel=1e-10)


@pytest.mark.parametrize(("alpha", "rdp", "epsilon"), [(2.0, 0.5, 1.0), (1.5, 0.01, 0.2), (37.5, 3.0, 4.0)])
def test_delta_form_matches_both_published_spellings(alpha: float, rdp: float, epsilon: float) -> None:
    """exp((α-1)(τ-ε)) (1-1/α)^α/(α-1) = exp((α-1)(τ-ε)) (1-1/α)^{α-1}/α (the same number)."""
    with mp.workdps(50):
        a, t, e = mp.mpf(alpha), mp.mpf(rdp), mp.mpf(epsilon)
        first = mp.exp((a - 1) * (t - e)) * (1 - 1 / a) ** a / (a - 1)
        second = mp.exp((a - 1) * (t - e)) * (1 - 1 / a) ** (a - 1) / a
        assert abs(first - second) < mp.mpf(10) ** -45 * first
    assert rdp_to_delta([(alpha, rdp)], epsilon) == pytest.approx(float(first), rel=1e-14)


@FAST
@given(rho=rhos, delta=deltas)
def test_zcdp_cks_round_trip(rho: float, delta: float) -> None:
    """CKS 2020 §2.3 on αρ: the δ form at the ε form's answer gives back δ."""
    eps = zcdp_to_dp_cks(rho, delta)
    back = zcdp_delta_cks(rho, eps)
    assert back <= delta * (1 + 1e-12)
    if eps > 0:  # at ε = 0 (Lemma 10 clipped, e.g. ρ = 1/4, δ = 1/2) δ(0) may be smaller still
        assert back == pytest.approx(delta, rel=1e-9)


@FAST
@given(rho=st.floats(1e-3, 5), epsilon=st.floats(0.0, 30))
def test_optimised_delta_matches_zcdp_delta(rho: float, epsilon: float) -> None:
    fn = partial(bounds.gaussian_rdp, sigma=math.sqrt(0.5 / rho))
    dlt, _ = optimize_rdp_order_delta(fn, epsilon)
    exact = zcdp_delta_cks(rho, epsilon)
    assert dlt >= exact * (1 - 1e-12)
    assert dlt == pytest.approx(exact, rel=1e-8, abs=1e-300)


# ---------------------------------------------------------------------------------------------
# zCDP conversions
# ---------------------------------------------------------------------------------------------


@FAST
@given(rho=rhos, delta=deltas)
def test_zcdp_cks_against_independent_minimum_and_bun_steinke(rho: float, delta: float) -> None:
    """CKS (Lemma 10 on αρ) <= Bun–Steinke 2016 Prop. 1.3, and equals the stationary-point value."""
    cks = zcdp_to_dp_cks(rho, delta)
    exact = max(mp.zero, _lemma10_zcdp_min(rho, delta))  # ε is clipped at 0 (e.g. ρ = 1/4, δ = 1/2)
    assert mp.mpf(cks) >= exact
    assert cks == pytest.approx(float(exact), rel=1e-13, abs=1e-300)
    bs = zcdp_to_dp_bun_steinke(rho, delta)
    assert bs == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-14)
    assert cks <= bs


@pytest.mark.slow
@FAST
@given(rho=rhos, d1=deltas, d2=deltas)
def test_zcdp_epsilon_decreases_in_delta(rho: float, d1: float, d2: float) -> None:
    lo, hi = sorted((d1, d2))
    assert zcdp_to_dp_cks(rho, hi) <= zcdp_to_dp_cks(rho, lo)
    assert zcdp_to_dp_bun_steinke(rho, hi) <= zcdp_to_dp_bun_steinke(rho, lo)
    fn = partial(bounds.gaussian_rdp, sigma=math.sqrt(0.5 / rho))
    assert optimize_rdp_order(fn, hi)[0] <= optimize_rdp_order(fn, lo)[0] * (1 + 1e-12)


@FAST
@given(r1=rhos, r2=rhos, delta=deltas, epsilon=st.floats(0, 20))
def test_zcdp_monotone_in_rho(r1: float, r2: float, delta: float, epsilon: float) -> None:
    lo, hi = sorted((r1, r2))
    assert zcdp_to_dp_cks(lo, delta) <= zcdp_to_dp_cks(hi, delta)
    assert zcdp_delta_cks(lo, epsilon) <= zcdp_delta_cks(hi, epsilon)


def test_zcdp_zero_rho() -> None:
    assert zcdp_to_dp_cks(0, 1e-5) == 0.0
    assert zcdp_delta_cks(0.0, 0.0) == 0.0
    assert zcdp_to_dp_bun_steinke(0.0, 1e-5) == 0.0


# ---------------------------------------------------------------------------------------------
# Pure DP → zCDP / RDP
# ---------------------------------------------------------------------------------------------


def _randomized_response_renyi(epsilon: float, alpha: float) -> mp.mpf:
    """D_α(P||Q) for P = (e^ε, 1)/(1+e^ε), Q = (1, e^ε)/(1+e^ε), by the definition (direct sum)."""
    with mp.workdps(80):
        e, a = mp.mpf(epsilon), mp.mpf(alpha)
        p = [mp.exp(e) / (1 + mp.exp(e)), 1 / (1 + mp.exp(e))]
        q = [p[1], p[0]]
        return mp.log(sum(pi**a * qi ** (1 - a) for pi, qi in zip(p, q, strict=True))) / (a - 1)


@FAST
@given(epsilon=st.floats(1e-6, 20), alpha=st.floats(1.0001, 1e3))
def test_pure_to_rdp_is_the_randomized_response_divergence(epsilon: float, alpha: float) -> None:
    """The tight pure-DP curve (Steinke 2024 Thm 4; attained by randomized response)."""
    value = pure_to_rdp(epsilon, alpha)
    exact = _randomized_response_renyi(epsilon, alpha)
    assert mp.mpf(value) >= exact
    assert value == pytest.approx(float(exact), rel=1e-13)


@FAST
@given(epsilon=st.floats(1e-12, 50), alpha=st.floats(1 + 1e-9, 1e12))
def test_pure_to_rdp_below_pure_and_bun_steinke(epsilon: float, alpha: float) -> None:
    """D_α <= min(ε, αε²/2): the latter is Bun–Steinke 2016 Prop. 3.3 (spec §3.4)."""
    value = pure_to_rdp(epsilon, alpha)
    assert value <= epsilon
    with mp.workdps(50):
        assert value <= float_up(mp.mpf(alpha) * mp.mpf(epsilon) ** 2 / 2)
    assert value > 0


@FAST
@given(epsilon=st.floats(1e-3, 10), a1=st.floats(1.001, 1e4), a2=st.floats(1.001, 1e4))
def test_pure_to_rdp_nondecreasing_in_alpha(epsilon: float, a1: float, a2: float) -> None:
    lo, hi = sorted((a1, a2))
    assert pure_to_rdp(epsilon, lo) <= pure_to_rdp(epsilon, hi)


def test_pure_to_rdp_edges_and_pure_to_zcdp() -> None:
    assert pure_to_rdp(1.5, math.inf) == 1.5
    assert pure_to_rdp(0.0, 3.0) == 0.0
    assert pure_to_rdp(2.0, 1e300) == pytest.approx(2.0, rel=1e-15)
    # Small ε: the curve approaches αε²/2 (the two agree to second order).
    assert pure_to_rdp(1e-8, 3.0) == pytest.approx(3 * 1e-16 / 2, rel=1e-6)
    assert pure_to_zcdp(1.0) == 0.5
    assert pure_to_zcdp(0.1) >= 0.1**2 / 2
    with mp.workdps(50):
        assert mp.mpf(pure_to_zcdp(0.1)) >= mp.mpf(0.1) ** 2 / 2


# ---------------------------------------------------------------------------------------------
# Bad input names the parameter
# ---------------------------------------------------------------------------------------------


def _gauss(alpha: float) -> float:
    return bounds.gaussian_rdp(alpha, 1.0)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: zcdp_to_dp_cks(-1.0, 1e-5), "rho"),
        (lambda: zcdp_to_dp_cks(1.0, 1.0), "delta"),
        (lambda: zcdp_to_dp_bun_steinke(math.nan, 1e-5), "rho"),
        (lambda: zcdp_delta_cks(1.0, -0.5), "epsilon"),
        (lambda: pure_to_zcdp(math.inf), "epsilon"),
        (lambda: pure_to_rdp(1.0, 1.0), "alpha"),
        (lambda: pure_to_rdp(-1.0, 2.0), "epsilon"),
        (lambda: rdp_to_dp_mironov([(2.0, 0.1)], 0.0), "delta"),
        (lambda: rdp_to_dp_mironov([], 1e-5), "curve"),
        (lambda: rdp_to_delta([(0.5, 0.1)], 1.0), "alpha"),
        (lambda: rdp_to_delta([(2.0, -0.1)], 1.0), "rdp"),
        (lambda: rdp_to_delta([(2.0, 0.1)], -1.0), "epsilon"),
        (lambda: optimize_rdp_order(_gauss, 0.0), "delta"),
        (lambda: optimize_rdp_order(_gauss, 1e-5, alpha_min=1.0), "alpha_min"),
        (lambda: optimize_rdp_order(_gauss, 1e-5, alpha_min=5.0, alpha_max=3.0), "alpha_max"),
        (lambda: optimize_rdp_order(_gauss, 1e-5, alpha_min=2.2, alpha_max=2.8, integer=True), "alpha_max"),
        (lambda: optimize_rdp_order(_gauss, 1e-5, conversion="nope"), "conversion"),  # type: ignore[arg-type]
        (lambda: optimize_rdp_order(lambda a: math.nan, 1e-5), "rdp_fn"),
        (lambda: optimize_rdp_order_delta(_gauss, -1.0), "epsilon"),
    ],
)
def test_bad_input_names_the_parameter(call: object, name: str) -> None:
    with pytest.raises(ParameterError) as err:
        call()  # type: ignore[operator]
    assert err.value.name == name


def test_bad_types_raise_type_errors() -> None:
    with pytest.raises(ParameterTypeError) as err:
        zcdp_to_dp_cks("1", 1e-5)  # type: ignore[arg-type]
    assert err.value.name == "rho"
    with pytest.raises(ParameterTypeError):
        pure_to_rdp(1.0, True)


def test_infinite_curve_gives_no_guarantee() -> None:
    assert optimize_rdp_order(lambda a: math.inf, 1e-5) == (math.inf, math.inf)
    assert optimize_rdp_order_delta(lambda a: math.inf, 1.0) == (1.0, math.inf)
    assert rdp_to_dp_mironov([(2.0, math.inf)], 1e-5) == math.inf
    assert rdp_to_delta([(2.0, math.inf)], 1.0) == 1.0
