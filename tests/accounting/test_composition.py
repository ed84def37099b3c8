"""Tests of :mod:`accounting.composition`.

Each test cites the result its function implements. References are computed here: the
Kairouz–Oh–Viswanath bound is checked against a brute-force enumeration of the k-fold composition
of the canonical (ε, δ) mechanism, and against the theorem's corner formula typed in from the paper.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import bounds
from accounting.composition import (
    RdpCurve,
    advanced_composition_drv,
    advanced_composition_kov,
    advanced_composition_kov_delta,
    compose_approx,
    compose_pure,
    compose_rdp,
    compose_zcdp,
    returning_users_approx_dp,
    returning_users_rdp,
)
from accounting.conversion import pure_to_rdp, rdp_to_dp, zcdp_to_dp_cks
from accounting.errors import ParameterError
from accounting.papers.distributed_dp_mab import skellam_rdp_theorem2_lemma3

FAST = settings(max_examples=25, deadline=None)

small_eps = st.floats(0.01, 1.0)
small_delta = st.one_of(st.just(0.0), st.floats(1e-10, 1e-4))


# ---------------------------------------------------------------------------------------------
# Acceptance (issue 3): Gaussian σ = 1 composed 1000 times, δ = 1e-5
# ---------------------------------------------------------------------------------------------


def test_acceptance_rdp_route_by_composing_curves() -> None:
    """Issue 3: 1000 Gaussian curves (Mironov 2017 Prop. 7) added, Lemma 10 over real α: 648.78198593."""
    one = RdpCurve.from_function(partial(bounds.gaussian_rdp, sigma=1.0))
    curve = one.scale(1000)
    assert not curve.integer_only
    assert curve.epsilon(1e-5) == pytest.approx(648.78198593, rel=1e-9)
    # The same curve reached as a zCDP event, and as zCDP composition then CKS conversion.
    assert RdpCurve.from_zcdp(0.5).scale(1000).epsilon(1e-5) == pytest.approx(648.78198593, rel=1e-9)
    assert zcdp_to_dp_cks(compose_zcdp([0.5] * 1000), 1e-5) == pytest.approx(648.78198593, rel=1e-9)


def test_acceptance_tightest_route_is_one_gaussian() -> None:
    """Issue 3: 1000 Gaussians with σ = 1 are one Gaussian with Δ/σ = sqrt(1000) (Balle–Wang 2018 Thm 8)."""
    sensitivity = math.nextafter(math.sqrt(1000), math.inf)  # rounded toward more privacy loss
    eps = bounds.gaussian_epsilon_analytic(1.0, 1e-5, sensitivity=sensitivity)
    assert eps == pytest.approx(633.9298513356146, rel=1e-9)
    assert eps < RdpCurve.from_zcdp(0.5).scale(1000).epsilon(1e-5)


# ---------------------------------------------------------------------------------------------
# Pure, basic and zCDP composition
# ---------------------------------------------------------------------------------------------


def test_compose_pure_rounds_up() -> None:
    """Pure DP composes additively (spec §3.5 Remark 9); the float sum is rounded up."""
    total = compose_pure([0.1] * 10)
    assert Fraction(total) >= 10 * Fraction(0.1)
    assert total == pytest.approx(1.0, rel=1e-15)
    assert compose_pure([]) == 0.0


def test_compose_approx_and_zcdp() -> None:
    """Basic composition (Dwork & Roth 2014 Thm 3.16) and zCDP composition (Bun–Steinke Lemma 2.3)."""
    eps, dlt = compose_approx([(0.5, 1e-6), (0.25, 2e-6), (1.0, 0.0)])
    assert eps == 1.75
    assert Fraction(dlt) >= Fraction(1e-6) + Fraction(2e-6)
    assert dlt == pytest.approx(3e-6, rel=1e-15)
    assert compose_approx([(1.0, 0.7), (1.0, 0.7)])[1] == 1.0
    assert compose_zcdp([0.125, 0.25]) == 0.375


@FAST
@given(rhos=st.lists(st.floats(0, 10), min_size=1, max_size=20))
def test_compose_zcdp_is_never_below_the_exact_sum(rhos: list[float]) -> None:
    assert Fraction(compose_zcdp(rhos)) >= sum(Fraction(r) for r in rhos)


# ---------------------------------------------------------------------------------------------
# Dwork–Rothblum–Vadhan
# ---------------------------------------------------------------------------------------------


@FAST
@given(eps=small_eps, delta=small_delta, k=st.integers(1, 500), delta_prime=st.floats(1e-10, 0.1))
def test_drv_formula(eps: float, delta: float, k: int, delta_prime: float) -> None:
    """Dwork & Roth 2014 Thm 3.20: ε' = sqrt(2k ln(1/δ')) ε + k ε (e^ε - 1), δ_total = kδ + δ'."""
    total_eps, total_delta = advanced_composition_drv(eps, delta, k, delta_prime)
    expected = math.sqrt(2 * k * math.log(1 / delta_prime)) * eps + k * eps * math.expm1(eps)
    assert total_eps == pytest.approx(expected, rel=1e-12)
    assert total_delta == pytest.approx(k * delta + delta_prime, rel=1e-12)
    assert total_delta >= k * delta + delta_prime * (1 - 1e-15)


@FAST
@given(eps=small_eps, k=st.integers(1, 500), d1=st.floats(1e-10, 0.5), d2=st.floats(1e-10, 0.5))
def test_drv_monotone(eps: float, k: int, d1: float, d2: float) -> None:
    lo, hi = sorted((d1, d2))
    assert advanced_composition_drv(eps, 0, k, hi)[0] <= advanced_composition_drv(eps, 0, k, lo)[0]
    assert advanced_composition_drv(eps, 0, k, lo)[0] <= advanced_composition_drv(eps, 0, k + 1, lo)[0]


# ---------------------------------------------------------------------------------------------
# Kairouz–Oh–Viswanath 2015, Theorem 3.3
# ---------------------------------------------------------------------------------------------


def _canonical_composition_delta(eps: float, delta: float, k: int, eps_total: float) -> mp.mpf:
    """δ(ε_total) of k-fold M̃_{ε,δ} (KOV 2015 §3) by enumerating all 4^k outcomes."""
    with mp.workdps(60):
        e, d = mp.mpf(eps), mp.mpf(delta)
        p, q = mp.exp(e) / (1 + mp.exp(e)), 1 / (1 + mp.exp(e))
        P = [d, (1 - d) * p, (1 - d) * q, mp.zero]
        Q = [mp.zero, (1 - d) * q, (1 - d) * p, d]
        x = mp.exp(mp.mpf(eps_total))
        total = mp.zero
        for outcome in itertools.product(range(4), repeat=k):
            pp = mp.fprod(P[o] for o in outcome)
            qq = mp.fprod(Q[o] for o in outcome)
            total += max(mp.zero, pp - x * qq)
        return total


def _theorem_corner_delta(eps: float, delta: float, k: int, i: int) -> mp.mpf:
    """KOV 2015 Thm 3.3: 1 - (1-δ)^k (1 - δ_i), δ_i = Σ_{l<i} C(k,l)(e^{(k-l)ε} - e^{(k-2i+l)ε})/(1+e^ε)^k."""
    with mp.workdps(60):
        e, d = mp.mpf(eps), mp.mpf(delta)
        di = (
            mp.fsum(
                math.comb(k, ell) * (mp.exp((k - ell) * e) - mp.exp((k - 2 * i + ell) * e))
                for ell in range(i)
            )
            / (1 + mp.exp(e)) ** k
        )
        return 1 - (1 - d) ** k * (1 - di)


@pytest.mark.parametrize(
    ("eps", "delta", "k"), [(0.5, 0.0, 1), (0.3, 1e-3, 3), (1.0, 1e-2, 5), (0.2, 0.0, 6)]
)
def test_kov_delta_against_brute_force_composition(eps: float, delta: float, k: int) -> None:
    """The δ curve of k-fold composition of the canonical mechanism, at corners and between them."""
    points = sorted({(k - 2 * i) * eps for i in range(k // 2 + 1)} | {0.0, 0.37 * eps, (k - 0.5) * eps})
    for et in points:
        exact = _canonical_composition_delta(eps, delta, k, et)
        got = advanced_composition_kov_delta(eps, delta, k, et)
        assert mp.mpf(got) >= exact - mp.mpf(10) ** -50  # the enumeration's own rounding
        assert got == pytest.approx(float(exact), rel=1e-13, abs=1e-50)


@pytest.mark.parametrize(("eps", "delta", "k"), [(0.1, 1e-6, 10), (0.5, 0.0, 7), (0.05, 1e-8, 40)])
def test_kov_delta_matches_theorem_corners(eps: float, delta: float, k: int) -> None:
    for i in range(k // 2 + 1):
        expected = _theorem_corner_delta(eps, delta, k, i)
        assert advanced_composition_kov_delta(eps, delta, k, (k - 2 * i) * eps) == pytest.approx(
            float(expected), rel=1e-12
        )


@pytest.mark.parametrize(
    ("eps", "delta", "k", "target"), [(0.3, 1e-3, 3, 0.01), (1.0, 1e-2, 5, 0.2), (0.2, 0, 6, 1e-3)]
)
def test_kov_epsilon_is_the_smallest_against_brute_force(
    eps: float, delta: float, k: int, target: float
) -> None:
    """At the returned ε the brute-force δ meets the target; slightly below it does not."""
    et = advanced_composition_kov(eps, delta, k, target)
    assert _canonical_composition_delta(eps, delta, k, et) <= target
    assert _canonical_composition_delta(eps, delta, k, et * (1 - 1e-9)) > target


@FAST
@given(eps=small_eps, delta=small_delta, k=st.integers(1, 200), slack=st.floats(1e-10, 0.1))
def test_kov_is_never_worse_than_drv(eps: float, delta: float, k: int, slack: float) -> None:
    """KOV 2015 Thm 3.3 is optimal, so at DRV's total δ it never exceeds DRV's ε (Dwork–Roth Thm 3.20)."""
    drv_eps, drv_delta = advanced_composition_drv(eps, delta, k, slack)
    kov = advanced_composition_kov(eps, delta, k, drv_delta)
    corners = advanced_composition_kov(eps, delta, k, drv_delta, corners_only=True)
    assert kov <= drv_eps
    assert kov <= corners <= k * eps * (1 + 1e-15)  # the exact curve is below its corners


@FAST
@given(eps=small_eps, delta=small_delta, k=st.integers(1, 100), extra=st.floats(1e-3, 0.5))
def test_kov_round_trip(eps: float, delta: float, k: int, extra: float) -> None:
    """The ε form at a reachable target, fed back to the δ form, meets the target."""
    target = -math.expm1(k * math.log1p(-delta)) + extra  # above the leak 1 - (1-δ)^k
    et = advanced_composition_kov(eps, delta, k, target)
    assert advanced_composition_kov_delta(eps, delta, k, et) <= target * (1 + 1e-12)


@FAST
@given(eps=small_eps, k=st.integers(1, 100), t1=st.floats(1e-8, 0.5), t2=st.floats(1e-8, 0.5))
def test_kov_monotone(eps: float, k: int, t1: float, t2: float) -> None:
    """ε_total decreases in the target δ and increases in k."""
    lo, hi = sorted((t1, t2))
    assert advanced_composition_kov(eps, 0, k, hi) <= advanced_composition_kov(eps, 0, k, lo)
    assert advanced_composition_kov(eps, 0, k, lo) <= advanced_composition_kov(eps, 0, k + 1, lo)


def test_kov_single_mechanism() -> None:
    """k = 1: Theorem 3.3 (corners) gives ε; the exact curve is randomized response's ε(δ)."""
    assert advanced_composition_kov(0.7, 1e-6, 1, 1e-5, corners_only=True) == 0.7
    assert advanced_composition_kov(0.7, 0.0, 1, 1e-5, corners_only=True) == 0.7
    # RR: δ(x) = (e^ε - e^x)/(1 + e^ε), so ε(δ) = ln(e^ε - δ(1 + e^ε)).
    with mp.workdps(50):
        e = mp.mpf(0.7)
        expected = mp.log(mp.exp(e) - mp.mpf(1e-5) * (1 + mp.exp(e)))
    got = advanced_composition_kov(0.7, 0.0, 1, 1e-5)
    assert mp.mpf(got) >= expected
    assert got == pytest.approx(float(expected), rel=1e-14)


def test_kov_large_k_is_fast_enough_and_below_drv() -> None:
    drv_eps, drv_delta = advanced_composition_drv(0.01, 1e-9, 2000, 1e-6)
    assert advanced_composition_kov(0.01, 1e-9, 2000, drv_delta) < drv_eps


def test_kov_unreachable_target_delta() -> None:
    """No ε removes the δ-leak: target δ below 1 - (1-δ)^k is refused, naming target_delta."""
    with pytest.raises(ParameterError) as err:
        advanced_composition_kov(0.1, 1e-4, 100, 1e-3)
    assert err.value.name == "target_delta"


# ---------------------------------------------------------------------------------------------
# RDP curves
# ---------------------------------------------------------------------------------------------


def test_curves_add_and_scale() -> None:
    """Mironov 2017 Prop. 1: RDP adds order by order under composition."""
    g = RdpCurve.from_function(partial(bounds.gaussian_rdp, sigma=2.0))
    lap = RdpCurve.from_function(partial(bounds.laplace_rdp, scale=3.0))
    both = g + lap.scale(3)
    for a in (1.5, 2.0, 7.25, 100.0):
        expected = Fraction(bounds.gaussian_rdp(a, 2.0)) + 3 * Fraction(bounds.laplace_rdp(a, 3.0))
        assert Fraction(both.at(a)) >= expected
        assert both.at(a) == pytest.approx(float(expected), rel=1e-15)
    assert (g + g).at(3.0) == g.scale(2).at(3.0)
    assert len((g + g + g).terms) == 1  # the same event merges into one term with a count
    assert compose_rdp([g, lap, g]).at(2.0) == (g.scale(2) + lap).at(2.0)


def test_epsilon_monotone_in_compositions_and_delta() -> None:
    one = RdpCurve.from_zcdp(0.01)
    eps = [one.scale(k).epsilon(1e-6) for k in (1, 2, 10, 100)]
    assert eps == sorted(eps)
    assert one.scale(10).epsilon(1e-3) < one.scale(10).epsilon(1e-6)
    assert one.scale(10).delta(1.0) < one.scale(10).delta(0.5)


def test_mironov_route_is_looser_on_curves() -> None:
    curve = RdpCurve.from_zcdp(0.05).scale(40)
    assert curve.epsilon(1e-6, conversion="mironov") > curve.epsilon(1e-6)


def test_table_curves_are_integer_only() -> None:
    """A table (e.g. the Skellam bound of spec Lemma 3) holds only at integer orders."""
    fn = partial(bounds.skellam_rdp_akl, variance=400.0, sensitivity=3)
    table = {a: fn(a) for a in range(2, 201)}
    curve = RdpCurve.from_table(table)
    assert curve.integer_only
    assert curve.max_order == 200
    assert curve.at(17) == table[17]
    with pytest.raises(ParameterError) as err:
        curve.at(2.5)
    assert err.value.name == "alpha"
    assert curve.at(201) == math.inf
    # Rényi divergence is nondecreasing in α: a missing order takes the next tabulated value.
    sparse = RdpCurve.from_table({2: 0.1, 10: 0.4})
    assert sparse.at(5) == 0.4
    # The optimised conversion agrees with Lemma 10 over all tabulated orders.
    assert curve.epsilon(1e-6) == rdp_to_dp(table.items(), 1e-6)
    # Adding a real-order curve keeps the sum integer-only, and 5-fold composition adds up.
    mixed = curve.scale(5) + RdpCurve.from_zcdp(0.001)
    assert mixed.integer_only
    assert mixed.at(10) >= 5 * table[10] + 0.01


def test_integer_only_function_curve() -> None:
    fn = partial(skellam_rdp_theorem2_lemma3, epsilon=1.0, scaling=10, users=1024)
    curve = RdpCurve.from_function(fn, integer_only=True)
    assert curve.integer_only
    assert curve.epsilon(1e-6, alpha_max=2000) == pytest.approx(5.2225, abs=5e-5)


def test_pure_curve_is_the_tight_one() -> None:
    curve = RdpCurve.from_pure(0.5).scale(10)
    assert curve.at(3.0) == pytest.approx(10 * pure_to_rdp(0.5, 3.0), rel=1e-15)
    assert curve.epsilon(1e-6) < compose_pure([0.5] * 10)  # below basic composition
    assert curve.epsilon(1e-6) <= RdpCurve.from_zcdp(0.125).scale(10).epsilon(1e-6)


def test_rdp_curve_bad_input() -> None:
    with pytest.raises(ParameterError) as err:
        RdpCurve.from_table({1: 0.1})
    assert err.value.name == "alpha"
    with pytest.raises(ParameterError) as err:
        RdpCurve.from_table({2: -0.1})
    assert err.value.name == "rdp_fn"
    with pytest.raises(ParameterError) as err:
        RdpCurve.from_zcdp(-1.0)
    assert err.value.name == "rho"
    with pytest.raises(ParameterError) as err:
        RdpCurve.from_zcdp(1.0).scale(0)
    assert err.value.name == "k"
    with pytest.raises(ParameterError) as err:
        RdpCurve.from_zcdp(1.0).epsilon(2.0)
    assert err.value.name == "delta"
    with pytest.raises(ParameterError) as err:
        compose_rdp([])
    assert err.value.name == "curves"


# ---------------------------------------------------------------------------------------------
# Returning users (spec §3.5, Appendix I)
# ---------------------------------------------------------------------------------------------


@FAST
@given(eps=st.floats(0.01, 0.99), delta=st.floats(1e-10, 0.1), batches=st.integers(1, 10_000))
def test_returning_users_approx_dp(eps: float, delta: float, batches: int) -> None:
    """Spec §3.5: ε_i = ε/(2 sqrt(2B ln(1/δ'))), δ_i = δ/(2B), δ' = δ/2 meet (ε, δ) by Theorem 7."""
    eps_i, delta_i = returning_users_approx_dp(eps, delta, batches)
    assert eps_i == pytest.approx(eps / (2 * math.sqrt(2 * batches * math.log(2 / delta))), rel=1e-12)
    assert delta_i == pytest.approx(delta / (2 * batches), rel=1e-12)
    assert Fraction(delta_i) <= Fraction(delta) / (2 * batches)  # a budget is rounded down
    total_eps, total_delta = advanced_composition_drv(eps_i, delta_i, batches, delta / 2)
    assert total_eps <= eps
    assert total_delta <= delta


def test_returning_users_approx_dp_refuses_a_split_that_fails() -> None:
    """Beyond Theorem 7's ε < 1 the split is checked with DRV; here it would overshoot."""
    assert returning_users_approx_dp(3.0, 1e-5, 4)[0] > 0  # still fine: DRV confirms it
    with pytest.raises(ParameterError) as err:
        returning_users_approx_dp(10.0, 0.5, 1)
    assert err.value.name == "epsilon"


def test_returning_users_rdp() -> None:
    """Spec §3.5 RDP route: B-fold zCDP composition (Bρ) and Lemma 10 over real α."""
    eps = returning_users_rdp(1 / 64, 64, 1e-6)
    assert eps == zcdp_to_dp_cks(1.0, 1e-6)
    assert eps == pytest.approx(RdpCurve.from_zcdp(1 / 64).scale(64).epsilon(1e-6), rel=1e-12)
    assert returning_users_rdp(1 / 64, 65, 1e-6) > eps
    with pytest.raises(ParameterError) as err:
        returning_users_rdp(0.02, 0, 1e-6)
    assert err.value.name == "batches"


def test_rdp_route_needs_less_noise_than_approx_route() -> None:
    """Spec §3.5: for B returning users the RDP route beats advanced composition (Remark 8).

    With the approximate-DP budget per batch met by a Gaussian (analytic calibration), B-fold
    composition by zCDP gives a smaller overall ε than the target the DRV split was built for.
    """
    eps, delta, batches = 1.0, 1e-6, 100
    eps_i, delta_i = returning_users_approx_dp(eps, delta, batches)
    sigma = bounds.gaussian_sigma_analytic(eps_i, delta_i)
    rho = bounds.gaussian_rdp(2.0, sigma) / 2
    assert returning_users_rdp(rho, batches, delta) < eps


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: compose_pure([0.1, -0.1]), "epsilons[1]"),
        (lambda: compose_approx([(0.1, 1.5)]), "pairs[0].delta"),
        (lambda: compose_approx([(0.1,)]), "pairs[0]"),  # type: ignore[list-item]
        (lambda: compose_zcdp([math.nan]), "rhos[0]"),
        (lambda: advanced_composition_drv(0.1, 1e-6, 0, 1e-6), "k"),
        (lambda: advanced_composition_drv(0.1, 1e-6, 10, 0.0), "delta_prime"),
        (lambda: advanced_composition_drv(-0.1, 1e-6, 10, 1e-6), "epsilon"),
        (lambda: advanced_composition_kov(0.1, 1.0, 10, 1e-6), "delta"),
        (lambda: advanced_composition_kov(0.1, 0.0, 10, 0.0), "target_delta"),
        (lambda: advanced_composition_kov_delta(0.1, 0.0, 10, -1.0), "epsilon_total"),
        (lambda: returning_users_approx_dp(0.0, 1e-6, 10), "epsilon"),
        (lambda: returning_users_approx_dp(0.5, 1e-6, 0), "batches"),
        (lambda: returning_users_rdp(-1.0, 3, 1e-6), "per_batch_rho"),
    ],
)
def test_bad_input_names_the_parameter(call: object, name: str) -> None:
    with pytest.raises(ParameterError) as err:
        call()  # type: ignore[operator]
    assert err.value.name == name
