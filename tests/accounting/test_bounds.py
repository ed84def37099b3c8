"""Tests of :mod:`accounting.bounds`: the published closed forms.

Each test cites the same result as the function it checks (names as in
``papers/distributed-dp-mab.md``, "the spec"). Reference values are either the spec's own
test vectors or independent computations in this file (numerical integration, brute-force
lattice sums, direct summation), never outputs of the code under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import bounds
from accounting.errors import ParameterError, ParameterTypeError

FAST = settings(max_examples=25, deadline=None)

# ---------------------------------------------------------------------------------------------
# Spec test vectors: Theorem 2 (Skellam), spec §3.2
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("epsilon", "scale", "users", "g"),
    [(1, 10, 2, 15), (1, 10, 1024, 320), (0.5, 10, 1024, 160), (0.1, 10, 2, 2), (0.2, 2, 2, 1)],
)
def test_theorem2_g_spec_values(epsilon: float, scale: float, users: int, g: int) -> None:
    """Spec §3.2 quotes g = 15 and g = 320 for ε = 1, s = 10; g = 2 for ε = 0.1, n = 2, s = 10."""
    assert bounds.theorem2_g(epsilon, scale, users) == g


@pytest.mark.parametrize(
    ("epsilon", "scale", "users", "g"),
    # s ε sqrt(n) is an integer on paper: a float product would give 10.000000000000002 etc.
    [(0.5, 10, 4, 10), (0.1, 10, 1, 1), (0.1, 30, 100, 30), (0.3, 10, 9, 9), (0.7, 10, 49, 49)],
)
def test_theorem2_g_exact_integer_cases(epsilon: float, scale: float, users: int, g: int) -> None:
    assert bounds.theorem2_g(epsilon, scale, users) == g


@given(
    num=st.integers(1, 10**6),
    den=st.integers(1, 10**6),
    users=st.integers(1, 2**40),
)
@FAST
def test_theorem2_g_is_the_exact_ceiling(num: int, den: int, users: int) -> None:
    """g is the least integer >= x sqrt(n), checked by exact squares (x = s ε rational)."""
    x = Fraction(num, den)
    g = bounds.theorem2_g(x, 1, users)
    assert g >= 1
    assert Fraction(g) ** 2 >= x**2 * users
    assert g == 1 or Fraction(g - 1) ** 2 < x**2 * users


def test_theorem2_lemma3_spec_vectors() -> None:
    """Spec §3.2 test vectors at α = 2 (exact Lemma 3 with the actual g)."""
    assert bounds.skellam_rdp_theorem2_lemma3(2, 1, 10, 2) == pytest.approx(1.00378, abs=5e-6)
    assert bounds.skellam_rdp_theorem2_lemma3(2, 1, 10, 1024) == pytest.approx(1.00001, abs=5e-6)
    assert bounds.skellam_rdp_theorem2_headline(2, 1, 10) == pytest.approx(1.00900, abs=5e-6)
    assert bounds.skellam_rdp_theorem2_lemma3(2, 0.5, 10, 1024) == pytest.approx(0.25000, abs=5e-6)
    # The exact closed form is 0.252625; the spec prints it truncated to 0.25262.
    assert 0.25262 <= bounds.skellam_rdp_theorem2_headline(2, 0.5, 10) < 0.25263


def _lemma3_exact(alpha: int, variance: Fraction, delta: int) -> Fraction:
    """Lemma 3 (AKL 2021 Thm 3.5) in exact rational arithmetic, as printed in spec §3.2."""
    gauss = Fraction(alpha * delta**2) / (2 * variance)
    first = Fraction((2 * alpha - 1) * delta**2 + 6 * delta) / (4 * variance**2)
    second = Fraction(3 * delta) / (2 * variance)
    return gauss + min(first, second)


@given(
    alpha=st.integers(2, 2000),
    variance=st.fractions(Fraction(1, 100), Fraction(10**6)),
    delta=st.integers(1, 100),
)
@FAST
def test_skellam_akl_matches_exact_rational_formula(alpha: int, variance: Fraction, delta: int) -> None:
    exact = _lemma3_exact(alpha, variance, delta)
    got = bounds.skellam_rdp_akl(alpha, variance, delta)
    # Rounded up, and within a few ulps (the float variance is the nearest float to the Fraction).
    assert Fraction(got) >= exact * (1 - Fraction(1, 10**15))
    assert got == pytest.approx(float(exact), rel=1e-14)


def test_theorem2_headline_understates_lemma3_at_spec_point() -> None:
    """Spec §3.2 [RECON]: α = 100, ε = 0.2, s = 2, n = 2 (g = 1) is understated by ~1.5%.

    The Lemma-3 value is recomputed here exactly: g = 1, σ² = 1/ε² = 25.
    """
    lemma3 = _lemma3_exact(100, Fraction(25), 1)
    assert float(lemma3) == pytest.approx(2.06)
    assert bounds.skellam_rdp_theorem2_lemma3(100, 0.2, 2, 2) == pytest.approx(float(lemma3), rel=1e-15)
    assert bounds.skellam_rdp_theorem2_headline(100, 0.2, 2) < float(lemma3)
    assert bounds.theorem2_discrepancy(100, 0.2, 2, 2) == pytest.approx(2.03 / 2.06, rel=1e-12)


def test_theorem2_understatement_exceeds_the_spec_claim() -> None:
    """The spec's "up to 1.5%" is too small: 2.0% at its own point (α = 72), 6.0% at ε = 0.3535.

    Both points are inside the spec's grid ranges (s = 2, n = 2, ε in [0.01, 10], α <= 1000).
    Lemma 3 is recomputed exactly with g = 1 and σ² = 1/ε².
    """
    worst_at_spec_point = min(bounds.theorem2_discrepancy(a, 0.2, 2, 2) for a in range(2, 1001))
    assert worst_at_spec_point < 0.9803
    eps = Fraction("0.3535")
    assert bounds.theorem2_g(0.3535, 2, 2) == 1
    lemma3 = _lemma3_exact(21, 1 / eps**2, 1)
    headline = bounds.skellam_rdp_theorem2_headline(21, 0.3535, 2)
    assert headline / float(lemma3) < 0.9400
    assert bounds.theorem2_discrepancy(21, 0.3535, 2, 2) == pytest.approx(headline / float(lemma3), rel=1e-12)


@given(
    alpha=st.integers(2, 1000),
    epsilon=st.floats(0.01, 10),
    scale=st.sampled_from([1, 2, 5, 10, 100]),
    log2_users=st.integers(1, 21),
)
@FAST
def test_theorem2_paper_per_batch_is_lemma3_without_ceiling_except_second_term(
    alpha: int, epsilon: float, scale: int, log2_users: int
) -> None:
    """Spec §3.2: the per-batch statement's first min-argument is Lemma 3's at g = sε√n."""
    n = 2**log2_users
    g = scale * epsilon * math.sqrt(n)
    first_lemma3 = ((2 * alpha - 1) * g**2 + 6 * g) * epsilon**4 / (4 * g**4)
    second_paper = 3 * epsilon**2 / (2 * scale * math.sqrt(n))
    expected = alpha * epsilon**2 / 2 + min(first_lemma3, second_paper)
    assert bounds.skellam_rdp_theorem2_paper(alpha, epsilon, scale, n) == pytest.approx(expected, rel=1e-12)


def _skellam_renyi_exact(alpha: int, variance: float, delta: int) -> Any:
    """D_α(Sk(Δ, σ²) || Sk(0, σ²)) by direct summation of PMFs e^{-σ²} I_x(σ²) (spec §2.4)."""
    with mp.workdps(30):
        mu = mp.mpf(variance)
        half_width = int(variance + 40 * math.sqrt(variance) + 60)
        bessel = {k: mp.besseli(k, mu) for k in range(0, half_width + delta + 1)}

        def pmf(k: int) -> Any:
            return mp.exp(-mu) * bessel[abs(k)]

        total = mp.fsum(
            pmf(x - delta) ** alpha * pmf(x) ** (1 - alpha) for x in range(-half_width, half_width + 1)
        )
        return mp.log(total) / (alpha - 1)


@pytest.mark.parametrize(
    ("alpha", "variance", "delta"), [(2, 2.0, 1), (3, 5.0, 1), (5, 10.0, 2), (8, 30.0, 1), (2, 0.7, 1)]
)
def test_skellam_akl_dominates_exact_renyi_divergence(alpha: int, variance: float, delta: int) -> None:
    """AKL 2021 Thm 3.5 (spec Lemma 3) must upper-bound the exact Skellam Rényi divergence."""
    exact = _skellam_renyi_exact(alpha, variance, delta)
    bound = bounds.skellam_rdp_akl(alpha, variance, delta)
    assert bound >= exact
    # And it is not vacuous: at least the Gaussian term, which the exact value approaches.
    assert exact >= 0.5 * alpha * delta**2 / (2 * variance)


@given(variance=st.floats(0.1, 1e6), delta=st.integers(1, 20), alpha=st.integers(2, 500))
@FAST
def test_skellam_akl_nondecreasing_in_alpha_and_decreasing_in_variance(
    variance: float, delta: int, alpha: int
) -> None:
    assert bounds.skellam_rdp_akl(alpha, variance, delta) <= bounds.skellam_rdp_akl(
        alpha + 1, variance, delta
    )
    assert bounds.skellam_rdp_akl(alpha, 2 * variance, delta) <= bounds.skellam_rdp_akl(
        alpha, variance, delta
    )


# ---------------------------------------------------------------------------------------------
# Theorem 4 and Lemma 4 (sum of discrete Gaussians), spec §3.3
# ---------------------------------------------------------------------------------------------


def _xi_float64(scale: float, last_k: int) -> float:
    """10 Σ_{k=1}^{K} exp(-2π²s² k/(k+1)) by a vectorised float64 sum (relative error ~1e-13)."""
    k = np.arange(1, last_k + 1, dtype=np.float64)
    return float(10.0 * np.sum(np.exp(-2.0 * math.pi**2 * scale**2 * k / (k + 1.0))))


def test_theorem4_spec_numbers() -> None:
    """Spec §3.3 numbers at T = 1e6, ε = 1: s = 1 gives ξ = 0.01393, ε̂ = 1.00348; s = 2 ξ = 7.2e-17."""
    xi = bounds.theorem4_xi(1, 10**6)
    assert xi == pytest.approx(0.01393, abs=5e-6)
    assert bounds.theorem4_epsilon(1, 1, 10**6) == pytest.approx(1.00348, abs=5e-6)
    assert bounds.theorem4_xi(2, 10**6) == pytest.approx(7.2e-17, rel=1e-2)
    # "xi = 0 in double precision" for s = 10: the certified upper bound is the least positive float.
    assert 0 < bounds.theorem4_xi(10, 10**6) <= 5e-324


@pytest.mark.parametrize("scale", [0.5, 0.8, 1.0, 1.5, 3.0])
@pytest.mark.parametrize("horizon", [2, 3, 10, 101, 5000, 10**6])
def test_theorem4_xi_matches_direct_summation(scale: float, horizon: int) -> None:
    """The series-with-tail-bound evaluation agrees with a plain float64 sum of all terms."""
    direct = _xi_float64(scale, horizon // 2 - 1)
    got = bounds.theorem4_xi(scale, horizon)
    assert got >= direct * (1 - 1e-12)
    assert got == pytest.approx(direct, rel=1e-11, abs=1e-300)


@given(
    sigma=st.floats(0.5, 4),
    count=st.integers(1, 300),
    delta=st.integers(1, 50),
)
@FAST
def test_kls_matches_brute_force_formula(sigma: float, count: int, delta: int) -> None:
    """KLS 2021 Prop. 13 (spec Lemma 4) recomputed term by term at high precision."""
    with mp.workdps(40):
        s = mp.mpf(sigma)
        xi = 10 * mp.fsum(mp.exp(-2 * mp.pi**2 * s**2 * k / (k + 1)) for k in range(1, count))
        base = mp.mpf(delta) ** 2 / (count * s**2)
        expected = min(mp.sqrt(base + xi / 2), mp.sqrt(base) + xi)
        got = bounds.sum_discrete_gaussians_epsilon_kls(sigma, count, delta)
        assert mp.mpf(got) >= expected
        assert got == pytest.approx(float(expected), rel=1e-14)
        rho = bounds.sum_discrete_gaussians_rho_kls(sigma, count, delta)
        assert mp.mpf(rho) >= expected**2 / 2
        assert rho == pytest.approx(float(expected**2 / 2), rel=1e-14)


def test_kls_with_theorem4_parameters_uses_the_same_xi() -> None:
    """Lemma 4 with n = T/2 and σ = s carries Theorem 4's ξ (spec §3.3)."""
    xi = bounds.theorem4_xi(1, 10**6)
    n, delta = 500_000, 707
    base = delta**2 / n
    expected = min(math.sqrt(base + xi / 2), math.sqrt(base) + xi)
    assert bounds.sum_discrete_gaussians_epsilon_kls(1, n, delta) == pytest.approx(expected, rel=1e-12)


@given(sigma=st.floats(0.5, 20), count=st.integers(1, 10**7), delta=st.integers(1, 10))
@FAST
def test_kls_epsilon_decreases_with_noise(sigma: float, count: int, delta: int) -> None:
    eps = bounds.sum_discrete_gaussians_epsilon_kls(sigma, count, delta)
    assert bounds.sum_discrete_gaussians_epsilon_kls(1.25 * sigma, count, delta) <= eps
    # Never below the continuous-Gaussian value Δ/(√n σ) of the same total variance.
    assert eps >= delta / (math.sqrt(count) * sigma) * (1 - 1e-15)


# ---------------------------------------------------------------------------------------------
# Laplace and discrete Laplace
# ---------------------------------------------------------------------------------------------


def test_pure_epsilons() -> None:
    """Fact 3 (spec §3.1) and Dwork et al. 2006: ε = Δ/b, rounded up."""
    assert bounds.discrete_laplace_pure_epsilon(8, 4) == 0.5
    assert bounds.discrete_laplace_pure_epsilon(3) >= 1 / 3
    assert Fraction(bounds.discrete_laplace_pure_epsilon(3)) > Fraction(1, 3)
    assert Fraction(bounds.laplace_pure_epsilon(0.3, 0.1)) >= Fraction(0.1) / Fraction(0.3)


def _laplace_hockey_stick_by_quadrature(scale: float, epsilon: float, delta: float) -> Any:
    """∫ max(0, p - e^ε q) for p = Lap(Δ, b), q = Lap(0, b), by mp.quad.

    The crossing point where p = e^ε q is located numerically, not from the closed form, and
    used as a breakpoint so the integrand is smooth on every piece.
    """
    with mp.workdps(30):
        b, d, e = mp.mpf(scale), mp.mpf(delta), mp.mpf(epsilon)

        def p(x: Any) -> Any:
            return mp.exp(-abs(x - d) / b) / (2 * b)

        def q(x: Any) -> Any:
            return mp.exp(-abs(x) / b) / (2 * b)

        def f(x: Any) -> Any:
            return p(x) - mp.exp(e) * q(x)

        if f(d) <= 0:
            # p/q is largest (= e^{Δ/b}) from x = Δ on, so no mass exceeds e^ε q.
            return mp.zero
        crossing = mp.findroot(f, (mp.zero, d), solver="bisect")
        return mp.quad(f, [crossing, d]) + mp.quad(f, [d, mp.inf])


@pytest.mark.parametrize(
    ("scale", "epsilon", "delta"),
    [(1.0, 0.0, 1.0), (1.0, 0.5, 1.0), (2.0, 0.1, 1.0), (0.5, 1.9, 1.0), (3.0, 0.2, 2.5), (1.0, 1.0, 1.0)],
)
def test_laplace_delta_matches_numerical_integration(scale: float, epsilon: float, delta: float) -> None:
    expected = _laplace_hockey_stick_by_quadrature(scale, epsilon, delta)
    got = bounds.laplace_delta(scale, epsilon, delta)
    assert got == pytest.approx(float(expected), rel=1e-12, abs=1e-300)
    assert got >= float(expected) * (1 - 1e-15)


@given(scale=st.floats(0.05, 50), epsilon=st.floats(0, 5), delta=st.floats(0.1, 5))
@FAST
def test_laplace_delta_decreases_in_epsilon_and_noise(scale: float, epsilon: float, delta: float) -> None:
    d0 = bounds.laplace_delta(scale, epsilon, delta)
    assert 0 <= d0 <= 1  # 1 - e^{-40} rounds up to 1.0
    assert bounds.laplace_delta(scale, epsilon + 0.1, delta) <= d0
    assert bounds.laplace_delta(2 * scale, epsilon, delta) <= d0
    if epsilon >= delta / scale * (1 + 1e-12):
        assert d0 == 0.0


def _laplace_renyi_by_quadrature(alpha: float, scale: float, delta: float) -> Any:
    """D_α(Lap(Δ, b) || Lap(0, b)) = 1/(α-1) ln ∫ p^α q^{1-α}, by mp.quad."""
    with mp.workdps(30):
        a, b, d = mp.mpf(alpha), mp.mpf(scale), mp.mpf(delta)

        def integrand(x: Any) -> Any:
            log_p = -abs(x - d) / b - mp.log(2 * b)
            log_q = -abs(x) / b - mp.log(2 * b)
            return mp.exp(a * log_p + (1 - a) * log_q)

        return mp.log(mp.quad(integrand, [-mp.inf, 0, d, mp.inf])) / (a - 1)


@pytest.mark.parametrize(
    ("alpha", "scale", "delta"), [(2.0, 1.0, 1.0), (1.5, 2.0, 1.0), (10.0, 3.0, 1.0), (4.5, 0.7, 2.0)]
)
def test_laplace_rdp_matches_numerical_integration(alpha: float, scale: float, delta: float) -> None:
    """Mironov 2017 Table II (Laplace) against the defining integral."""
    expected = _laplace_renyi_by_quadrature(alpha, scale, delta)
    assert bounds.laplace_rdp(alpha, scale, delta) == pytest.approx(float(expected), rel=1e-12)


@given(alpha=st.floats(1.0001, 1e4), scale=st.floats(0.05, 100), delta=st.floats(0.1, 10))
@FAST
def test_laplace_rdp_monotone_and_capped(alpha: float, scale: float, delta: float) -> None:
    r = bounds.laplace_rdp(alpha, scale, delta)
    assert r <= bounds.laplace_rdp(alpha * 1.5, scale, delta) * (1 + 1e-15)
    assert r <= bounds.laplace_rdp(math.inf, scale, delta) * (1 + 1e-15)
    assert bounds.laplace_rdp(alpha, 2 * scale, delta) <= r


def test_laplace_rdp_limits() -> None:
    """α = ∞ gives Δ/b; α → 1 gives the KL divergence 1/λ + e^{-1/λ} - 1 (Mironov 2017)."""
    assert bounds.laplace_rdp(math.inf, 2.0, 1.0) == 0.5
    kl = 0.5 + math.exp(-0.5) - 1
    assert bounds.laplace_rdp(1 + 1e-9, 2.0, 1.0) == pytest.approx(kl, rel=1e-7)


# ---------------------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------------------


def _bw_delta(sigma: float, epsilon: float, delta: float = 1.0, dps: int = 120) -> Any:
    """Balle–Wang 2018 Thm 8 at very high precision, written out independently."""
    with mp.workdps(dps):
        s, e, d = mp.mpf(sigma), mp.mpf(epsilon), mp.mpf(delta)
        return mp.ncdf(d / (2 * s) - e * s / d) - mp.exp(e) * mp.ncdf(-d / (2 * s) - e * s / d)


def test_gaussian_rdp_formula() -> None:
    """Mironov 2017: α Δ² / (2σ²); infinite at α = ∞."""
    assert bounds.gaussian_rdp(2, 1.0) == 1.0
    assert bounds.gaussian_rdp(3, 2.0, 2.0) == 1.5
    assert Fraction(bounds.gaussian_rdp(2, 3.0)) >= Fraction(1, 9)
    assert bounds.gaussian_rdp(math.inf, 1.0) == math.inf


def test_gaussian_delta_known_value_and_cancellation() -> None:
    """δ(1) at σ = 1 (Balle–Wang 2018) and the ε = 0, σ ≫ Δ case where the terms cancel."""
    assert bounds.gaussian_delta_analytic(1.0, 1.0) == pytest.approx(float(_bw_delta(1.0, 1.0)), rel=1e-14)
    # ε = 0: δ = 2Φ(Δ/(2σ)) - 1 = erf(Δ/(2√2 σ)), about 4e-9 here; naive float64 gives ~7 digits.
    with mp.workdps(50):
        exact = mp.erf(1 / (2 * mp.sqrt(2) * mp.mpf(1e8)))
    got = bounds.gaussian_delta_analytic(1e8, 0.0)
    assert got == pytest.approx(float(exact), rel=1e-14)
    assert mp.mpf(got) >= exact * (1 - mp.mpf(10) ** -30)
    got_eps = bounds.gaussian_delta_analytic(1e6, 1e-3)
    assert got_eps == pytest.approx(float(_bw_delta(1e6, 1e-3, dps=200)), rel=1e-13)


@given(sigma=st.floats(0.1, 100), epsilon=st.floats(0, 20))
@FAST
def test_gaussian_delta_is_rounded_up_and_monotone(sigma: float, epsilon: float) -> None:
    got = bounds.gaussian_delta_analytic(sigma, epsilon)
    exact = _bw_delta(sigma, epsilon)
    with mp.workdps(120):
        assert mp.mpf(got) >= exact
    assert bounds.gaussian_delta_analytic(sigma, epsilon + 0.1) <= got
    assert bounds.gaussian_delta_analytic(sigma * 1.1, epsilon) <= got


@given(
    epsilon=st.floats(0.01, 10),
    delta=st.floats(1e-12, 0.5),
    sensitivity=st.floats(0.1, 10),
)
@settings(max_examples=15, deadline=None)
def test_gaussian_sigma_analytic_is_the_smallest_valid_float(
    epsilon: float, delta: float, sensitivity: float
) -> None:
    """Balle–Wang: δ at the returned σ <= target, and at the previous float > target."""
    sigma = bounds.gaussian_sigma_analytic(epsilon, delta, sensitivity)
    with mp.workdps(120):
        assert _bw_delta(sigma, epsilon, sensitivity) <= mp.mpf(delta)
        previous = math.nextafter(sigma, 0)
        assert _bw_delta(previous, epsilon, sensitivity) > mp.mpf(delta) * (1 - mp.mpf("1e-24"))
    if epsilon < 1:
        # The classic calibration (Dwork–Roth Thm A.1) is valid, hence never below the optimum.
        assert bounds.gaussian_sigma_classic(epsilon, delta, sensitivity) >= sigma


@given(sigma=st.floats(0.2, 1000), delta=st.floats(1e-12, 0.5))
@settings(max_examples=15, deadline=None)
def test_gaussian_epsilon_analytic_is_the_smallest_valid_float(sigma: float, delta: float) -> None:
    eps = bounds.gaussian_epsilon_analytic(sigma, delta)
    with mp.workdps(120):
        assert _bw_delta(sigma, eps) <= mp.mpf(delta)
        if eps > 0:
            assert _bw_delta(sigma, math.nextafter(eps, 0)) > mp.mpf(delta) * (1 - mp.mpf("1e-24"))
    # ε decreases as the noise grows.
    assert bounds.gaussian_epsilon_analytic(2 * sigma, delta) <= eps


def test_gaussian_epsilon_analytic_zero_when_already_private() -> None:
    """With σ huge, δ(0) = erf(1/(2√2σ)) is below the target, so ε = 0."""
    assert bounds.gaussian_epsilon_analytic(1e9, 1e-6) == 0.0


def test_gaussian_sigma_classic_formula() -> None:
    """Dwork–Roth 2014 Thm A.1: σ = Δ sqrt(2 ln(1.25/δ))/ε, rounded up."""
    expected = 2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    got = bounds.gaussian_sigma_classic(0.5, 1e-5, 2.0)
    assert got == pytest.approx(expected, rel=1e-14)
    with mp.workdps(60):
        assert mp.mpf(got) >= 2 * mp.sqrt(2 * mp.log(mp.mpf("1.25") / mp.mpf(1e-5))) / mp.mpf(0.5)


# ---------------------------------------------------------------------------------------------
# Discrete Gaussian
# ---------------------------------------------------------------------------------------------


def _dg_hockey_stick_brute_force(sigma: float, epsilon: float, delta: int, width: int = 60) -> Any:
    """Σ_x max(0, P(x) - e^ε Q(x)) for P = N_Z(Δ, σ²), Q = N_Z(0, σ²), summed over a wide window.

    The window extends ``width`` σ + 30 beyond both centres: the neglected mass is below
    e^{-width²/2} (e^{-1800} by default, e^{-72} at ``width = 12``).
    """
    with mp.workdps(60):
        s2 = mp.mpf(sigma) ** 2
        half = int(width * sigma) + 30
        xs = range(-half, delta + half + 1)
        norm = mp.fsum(mp.exp(-(mp.mpf(x) ** 2) / (2 * s2)) for x in range(-half - delta, half + delta + 1))
        e = mp.exp(mp.mpf(epsilon))
        return (
            mp.fsum(
                max(
                    mp.zero,
                    (mp.exp(-(mp.mpf(x - delta) ** 2) / (2 * s2)) - e * mp.exp(-(mp.mpf(x) ** 2) / (2 * s2))),
                )
                for x in xs
            )
            / norm
        )


def _cks_theorem7_two_tails(sigma: float, epsilon: float, delta: int) -> Any:
    """CKS 2020 Thm 7 as printed: P[Y > εσ²/Δ - Δ/2] - e^ε P[Y > εσ²/Δ + Δ/2], by summation."""
    with mp.workdps(60):
        s2 = mp.mpf(sigma) ** 2
        half = int(60 * sigma) + 30 + delta + int(epsilon * sigma**2 / delta)
        w = {x: mp.exp(-(mp.mpf(x) ** 2) / (2 * s2)) for x in range(-half, half + 1)}
        norm = mp.fsum(w.values())
        centre = mp.mpf(epsilon) * s2 / delta

        def tail(t: Any) -> Any:
            return mp.fsum(val for x, val in w.items() if x > t) / norm

        return tail(centre - mp.mpf(delta) / 2) - mp.exp(mp.mpf(epsilon)) * tail(centre + mp.mpf(delta) / 2)


@given(sigma=st.floats(0.2, 6), epsilon=st.floats(0, 4), delta=st.integers(1, 4))
@settings(max_examples=20, deadline=None)
def test_discrete_gaussian_delta_matches_brute_force(sigma: float, epsilon: float, delta: int) -> None:
    brute = _dg_hockey_stick_brute_force(sigma, epsilon, delta)
    got = bounds.discrete_gaussian_delta_cks(sigma, epsilon, delta)
    with mp.workdps(60):
        assert mp.mpf(got) >= brute * (1 - mp.mpf(10) ** -25)
        assert abs(mp.mpf(got) - brute) <= brute * mp.mpf("1e-13") + mp.mpf(10) ** -300


@pytest.mark.parametrize(
    ("sigma", "epsilon", "delta"), [(1.0, 1.0, 1), (0.7, 0.3, 2), (3.0, 0.5, 1), (2.0, 2.0, 3), (5.0, 0.0, 1)]
)
def test_discrete_gaussian_theorem7_two_tail_form_is_the_hockey_stick(
    sigma: float, epsilon: float, delta: int
) -> None:
    """CKS 2020 Thm 7 (two tails) equals the brute-force hockey-stick sum, and our value."""
    two_tails = _cks_theorem7_two_tails(sigma, epsilon, delta)
    brute = _dg_hockey_stick_brute_force(sigma, epsilon, delta)
    with mp.workdps(60):
        assert abs(two_tails - brute) <= brute * mp.mpf("1e-40")
    assert bounds.discrete_gaussian_delta_cks(sigma, epsilon, delta) == pytest.approx(float(brute), rel=1e-13)


def test_discrete_gaussian_large_sigma() -> None:
    """σ = 150 walks ~2000 terms by recurrence: still equal to the brute-force sum, and close to
    the continuous Balle–Wang δ (the lattice changes δ by a relative O(Δ/σ²)-type amount)."""
    brute = _dg_hockey_stick_brute_force(150.0, 0.02, 1, width=12)
    got = bounds.discrete_gaussian_delta_cks(150.0, 0.02)
    assert got == pytest.approx(float(brute), rel=1e-13)
    assert got == pytest.approx(float(_bw_delta(150.0, 0.02)), rel=1e-4)


@given(sigma=st.floats(0.3, 30), delta=st.floats(1e-10, 0.5), sensitivity=st.integers(1, 3))
@settings(max_examples=15, deadline=None)
def test_discrete_gaussian_zcdp_conversion_is_valid(sigma: float, delta: float, sensitivity: int) -> None:
    """Bun–Steinke Prop 1.3 with CKS's ρ: the tight δ at the converted ε is at most δ."""
    eps = bounds.discrete_gaussian_epsilon_zcdp(sigma, delta, sensitivity)
    rho = bounds.discrete_gaussian_rho_cks(sigma, sensitivity)
    assert rho == pytest.approx(sensitivity**2 / (2 * sigma**2), rel=1e-15)
    assert eps >= rho
    assert bounds.discrete_gaussian_delta_cks(sigma, eps, sensitivity) <= delta
    assert bounds.discrete_gaussian_epsilon_zcdp(2 * sigma, delta, sensitivity) <= eps


@given(sigma=st.floats(0.2, 20), epsilon=st.floats(0, 5))
@FAST
def test_discrete_gaussian_delta_decreases_in_epsilon(sigma: float, epsilon: float) -> None:
    d0 = bounds.discrete_gaussian_delta_cks(sigma, epsilon)
    assert 0 <= d0 <= 1
    assert bounds.discrete_gaussian_delta_cks(sigma, epsilon + 0.1) <= d0


def test_discrete_gaussian_delta_is_not_monotone_in_sigma() -> None:
    """Unlike the continuous Gaussian, more discrete-Gaussian noise can *raise* δ(ε).

    N_Z(0, σ₂²) is not N_Z(0, σ₁²) plus independent noise, so there is no post-processing
    argument. At ε = 4: σ = 0.375 gives δ ≈ 0.027 but σ = 0.5625 gives δ ≈ 0.077 (both
    confirmed by brute force). Calibration must therefore search, not assume monotonicity.
    """
    small = bounds.discrete_gaussian_delta_cks(0.375, 4.0)
    large = bounds.discrete_gaussian_delta_cks(0.5625, 4.0)
    assert small == pytest.approx(float(_dg_hockey_stick_brute_force(0.375, 4.0, 1)), rel=1e-13)
    assert large == pytest.approx(float(_dg_hockey_stick_brute_force(0.5625, 4.0, 1)), rel=1e-13)
    assert large > 2 * small


# ---------------------------------------------------------------------------------------------
# Validation: every bad input raises an error naming the parameter
# ---------------------------------------------------------------------------------------------

BAD_INPUTS: list[tuple[Callable[..., object], dict[str, object], str, type[Exception]]] = [
    (bounds.discrete_laplace_pure_epsilon, {"scale": 0.0}, "scale", ParameterError),
    (bounds.discrete_laplace_pure_epsilon, {"scale": 1.0, "sensitivity": 1.5}, "sensitivity", ParameterError),
    (bounds.discrete_laplace_pure_epsilon, {"scale": 1.0, "sensitivity": 0}, "sensitivity", ParameterError),
    (bounds.laplace_pure_epsilon, {"scale": math.nan}, "scale", ParameterError),
    (bounds.laplace_pure_epsilon, {"scale": 1.0, "sensitivity": -1.0}, "sensitivity", ParameterError),
    (bounds.laplace_delta, {"scale": 1.0, "epsilon": -0.1}, "epsilon", ParameterError),
    (bounds.laplace_delta, {"scale": math.inf, "epsilon": 0.1}, "scale", ParameterError),
    (bounds.laplace_rdp, {"alpha": 1.0, "scale": 1.0}, "alpha", ParameterError),
    (bounds.laplace_rdp, {"alpha": math.nan, "scale": 1.0}, "alpha", ParameterError),
    (bounds.laplace_rdp, {"alpha": "2", "scale": 1.0}, "alpha", ParameterTypeError),
    (bounds.gaussian_rdp, {"alpha": 0.5, "sigma": 1.0}, "alpha", ParameterError),
    (bounds.gaussian_rdp, {"alpha": 2, "sigma": -1.0}, "sigma", ParameterError),
    (bounds.gaussian_sigma_classic, {"epsilon": 1.0, "delta": 1e-5}, "epsilon", ParameterError),
    (bounds.gaussian_sigma_classic, {"epsilon": 0.5, "delta": 1.0}, "delta", ParameterError),
    (bounds.gaussian_sigma_classic, {"epsilon": 0.5, "delta": 0.0}, "delta", ParameterError),
    (bounds.gaussian_delta_analytic, {"sigma": 0.0, "epsilon": 1.0}, "sigma", ParameterError),
    (bounds.gaussian_delta_analytic, {"sigma": 1.0, "epsilon": math.inf}, "epsilon", ParameterError),
    (bounds.gaussian_epsilon_analytic, {"sigma": 1.0, "delta": 1.5}, "delta", ParameterError),
    (bounds.gaussian_epsilon_analytic, {"sigma": 1.0, "delta": math.nan}, "delta", ParameterError),
    (bounds.gaussian_sigma_analytic, {"epsilon": -1.0, "delta": 0.1}, "epsilon", ParameterError),
    (
        bounds.gaussian_sigma_analytic,
        {"epsilon": 1.0, "delta": 0.1, "sensitivity": 0},
        "sensitivity",
        ParameterError,
    ),
    (bounds.discrete_gaussian_rho_cks, {"sigma": 1.0, "sensitivity": 0.5}, "sensitivity", ParameterError),
    (
        bounds.discrete_gaussian_rho_cks,
        {"sigma": 1.0, "sensitivity": True},
        "sensitivity",
        ParameterTypeError,
    ),
    (
        bounds.discrete_gaussian_delta_cks,
        {"sigma": 1.0, "epsilon": 1.0, "sensitivity": 2.5},
        "sensitivity",
        ParameterError,
    ),
    (bounds.discrete_gaussian_delta_cks, {"sigma": math.nan, "epsilon": 1.0}, "sigma", ParameterError),
    (bounds.discrete_gaussian_epsilon_zcdp, {"sigma": 1.0, "delta": 0.0}, "delta", ParameterError),
    (bounds.skellam_rdp_akl, {"alpha": 2.5, "variance": 1.0}, "alpha", ParameterError),
    (bounds.skellam_rdp_akl, {"alpha": math.inf, "variance": 1.0}, "alpha", ParameterError),
    (bounds.skellam_rdp_akl, {"alpha": 1, "variance": 1.0}, "alpha", ParameterError),
    (bounds.skellam_rdp_akl, {"alpha": 2, "variance": 0.0}, "variance", ParameterError),
    (
        bounds.skellam_rdp_akl,
        {"alpha": 2, "variance": 1.0, "sensitivity": 1.5},
        "sensitivity",
        ParameterError,
    ),
    (bounds.theorem2_g, {"epsilon": 0.0, "scale": 10, "users": 2}, "epsilon", ParameterError),
    (bounds.theorem2_g, {"epsilon": 1.0, "scale": 10, "users": 0}, "users", ParameterError),
    (bounds.theorem2_g, {"epsilon": 1.0, "scale": None, "users": 2}, "scale", ParameterTypeError),
    (
        bounds.skellam_rdp_theorem2_paper,
        {"alpha": 2.5, "epsilon": 1, "scale": 10, "users": 2},
        "alpha",
        ParameterError,
    ),
    (bounds.skellam_rdp_theorem2_headline, {"alpha": 2, "epsilon": 1, "scale": -1}, "scale", ParameterError),
    (
        bounds.skellam_rdp_theorem2_lemma3,
        {"alpha": 2, "epsilon": 1, "scale": 10, "users": 1.5},
        "users",
        ParameterError,
    ),
    (
        bounds.theorem2_discrepancy,
        {"alpha": 2, "epsilon": math.nan, "scale": 10, "users": 2},
        "epsilon",
        ParameterError,
    ),
    (bounds.sum_discrete_gaussians_epsilon_kls, {"sigma": 0.4, "count": 2}, "sigma", ParameterError),
    (bounds.sum_discrete_gaussians_epsilon_kls, {"sigma": 1.0, "count": 0}, "count", ParameterError),
    (
        bounds.sum_discrete_gaussians_rho_kls,
        {"sigma": 1.0, "count": 2, "sensitivity": 0.5},
        "sensitivity",
        ParameterError,
    ),
    (bounds.theorem4_xi, {"scale": 0.1, "horizon": 100}, "scale", ParameterError),
    (bounds.theorem4_xi, {"scale": 1.0, "horizon": 1}, "horizon", ParameterError),
    (bounds.theorem4_epsilon, {"epsilon": 0.0, "scale": 1.0, "horizon": 100}, "epsilon", ParameterError),
]


@pytest.mark.parametrize(
    ("func", "kwargs", "name", "error"), BAD_INPUTS, ids=[f"{f.__name__}-{n}" for f, _, n, _ in BAD_INPUTS]
)
def test_bad_input_raises_naming_the_parameter(
    func: Callable[..., object], kwargs: dict[str, object], name: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as info:
        func(**kwargs)
    assert getattr(info.value, "name", None) == name
    assert name in str(info.value)


def test_skellam_non_integer_order_message_explains_why() -> None:
    with pytest.raises(ParameterError, match="integer orders"):
        bounds.skellam_rdp_akl(2.5, 1.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: bounds.laplace_rdp(1 + 1e-15, 1e-3, 1e3),
        lambda: bounds.laplace_rdp(1e300, 1e-3, 1e3),
        lambda: bounds.gaussian_delta_analytic(1e-300, 1e300),
        lambda: bounds.gaussian_delta_analytic(1e300, 0.0),
        lambda: bounds.discrete_gaussian_delta_cks(1e-3, 1e6, 10**6),
        lambda: bounds.skellam_rdp_akl(10**12, 1e-300),
        lambda: bounds.sum_discrete_gaussians_epsilon_kls(1e6, 10**15),
    ],
)
def test_extreme_inputs_give_numbers_not_nan(call: Callable[[], float]) -> None:
    value = call()
    assert not math.isnan(value)
    assert value >= 0


def test_gaussian_epsilon_beyond_the_floats_is_inf() -> None:
    """σ = 7e-155 needs ε above the largest float at δ = 1e-300: the doubling search reached inf
    and handed the bracket [0, inf] to the search (dp-account calibrate at ε = 1e308 failed)."""
    from accounting.bounds import gaussian_epsilon_analytic

    assert gaussian_epsilon_analytic(7e-155, 1e-300) == math.inf
    assert math.isfinite(gaussian_epsilon_analytic(1e-150, 1e-300))
