"""Tests of :mod:`accounting.bounds.gaussian`: the Gaussian mechanism's RDP, the classic σ of Dwork
& Roth and the analytic Gaussian of Balle & Wang 2018, against independent high-precision values."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import bounds

FAST = settings(max_examples=25, deadline=None)


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


def test_gaussian_epsilon_beyond_the_floats_is_inf() -> None:
    """σ = 7e-155 needs ε above the largest float at δ = 1e-300: the doubling search reached inf
    and handed the bracket [0, inf] to the search (dp-account calibrate at ε = 1e308 failed)."""
    from accounting.bounds import gaussian_epsilon_analytic

    assert gaussian_epsilon_analytic(7e-155, 1e-300) == math.inf
    assert math.isfinite(gaussian_epsilon_analytic(1e-150, 1e-300))


@pytest.mark.parametrize(("sigma", "delta"), [(1.0, 1e-5), (20.0, 1e-5), (0.3, 1e-10), (500.0, 0.1)])
def test_the_smallest_float_is_found_by_secant_steps_not_by_bisecting_its_bits(
    monkeypatch: pytest.MonkeyPatch, sigma: float, delta: float
) -> None:
    """The searches read the excess ``ln(δ/target)`` and step to the neighbouring float where regula
    falsi rounds onto an end: at most 30 evaluations of δ (bisecting the bits of a float took
    about 70 per search), to the same smallest float."""
    calls = []
    real = bounds.gaussian.gaussian_delta_mp

    def counted(*args: object) -> object:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(bounds.gaussian, "gaussian_delta_mp", counted)
    eps = bounds.gaussian_epsilon_analytic(sigma, delta)
    assert len(calls) <= 30
    with mp.workdps(120):
        assert _bw_delta(sigma, eps) <= mp.mpf(delta)
        if eps > 0:
            assert _bw_delta(sigma, math.nextafter(eps, 0)) > mp.mpf(delta) * (1 - mp.mpf("1e-24"))
    calls.clear()
    bounds.gaussian_sigma_analytic(eps, delta)
    assert len(calls) <= 30
