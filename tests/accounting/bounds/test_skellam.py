"""Tests of :mod:`accounting.bounds.skellam`: Agarwal, Kairouz & Liu 2021, Theorem 3.5 (Lemma 3 of
Chowdhury & Zhou 2023), against exact rational arithmetic and the exact Rényi divergence."""

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


def _lemma3_exact(alpha: int, variance: Fraction, delta: int) -> Fraction:
    """Lemma 3 (AKL 2021 Thm 3.5) in exact rational arithmetic, as Chowdhury & Zhou 2023 print it."""
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
    got = bounds.skellam_rdp_akl(alpha, float(variance), delta)
    # Rounded up, and within a few ulps (the float variance is the nearest float to the Fraction).
    assert Fraction(got) >= exact * (1 - Fraction(1, 10**15))
    assert got == pytest.approx(float(exact), rel=1e-14)


def _skellam_renyi_exact(alpha: int, variance: float, delta: int) -> Any:
    """D_α(Sk(Δ, σ²) || Sk(0, σ²)) by direct summation of PMFs e^{-σ²} I_x(σ²) (Skellam 1946)."""
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
    """AKL 2021 Thm 3.5 (Lemma 3 of Chowdhury & Zhou 2023) upper-bounds the exact Rényi divergence."""
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
