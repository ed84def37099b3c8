"""Tests of :mod:`accounting.bounds.discrete_gaussian`: Canonne, Kamath & Steinke 2020 (one discrete
Gaussian) and Kairouz, Liu & Steinke 2021, Proposition 13 (a sum of discrete Gaussians), against
brute-force lattice sums and the formulas recomputed term by term."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import bounds

FAST = settings(max_examples=25, deadline=None)


def _bw_delta(sigma: float, epsilon: float, delta: float = 1.0, dps: int = 120) -> Any:
    """Balle–Wang 2018 Thm 8 at very high precision, written out independently."""
    with mp.workdps(dps):
        s, e, d = mp.mpf(sigma), mp.mpf(epsilon), mp.mpf(delta)
        return mp.ncdf(d / (2 * s) - e * s / d) - mp.exp(e) * mp.ncdf(-d / (2 * s) - e * s / d)


@given(
    sigma=st.floats(0.5, 4),
    count=st.integers(1, 300),
    delta=st.integers(1, 50),
)
@FAST
def test_kls_matches_brute_force_formula(sigma: float, count: int, delta: int) -> None:
    """KLS 2021 Prop. 13 (Lemma 4 of Chowdhury & Zhou 2023) recomputed term by term at high precision."""
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


@given(sigma=st.floats(0.5, 20), count=st.integers(1, 10**7), delta=st.integers(1, 10))
@FAST
def test_kls_epsilon_decreases_with_noise(sigma: float, count: int, delta: int) -> None:
    eps = bounds.sum_discrete_gaussians_epsilon_kls(sigma, count, delta)
    assert bounds.sum_discrete_gaussians_epsilon_kls(1.25 * sigma, count, delta) <= eps
    # Never below the continuous-Gaussian value Δ/(√n σ) of the same total variance.
    assert eps >= delta / (math.sqrt(count) * sigma) * (1 - 1e-15)


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
