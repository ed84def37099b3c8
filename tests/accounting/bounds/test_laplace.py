"""Tests of :mod:`accounting.bounds.laplace`: pure ε, ``δ(ε)`` and RDP of the Laplace mechanisms,
against numerical integration."""

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
# Laplace and discrete Laplace
# ---------------------------------------------------------------------------------------------


def test_pure_epsilons() -> None:
    """Fact 3 of Chowdhury & Zhou 2023 and Dwork et al. 2006: ε = Δ/b, rounded up."""
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
