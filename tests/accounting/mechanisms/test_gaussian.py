"""Tests of :mod:`accounting.mechanisms.gaussian`: the Gaussian mechanism in closed form.

One release against Balle & Wang 2018 Theorem 8 recomputed here in :mod:`mpmath`; compositions
against the equivalent single Gaussian (Dong, Roth & Su 2019, Corollary 3.3).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mpmath import mp

from accounting import AdditiveNoise, Gaussian
from accounting.pld import compose_events, gaussian_composition_delta, gaussian_composition_epsilon
from tests.accounting.mechanisms.support import FAST, Mpf
from tests.accounting.noise.reference import REF_DPS, assert_encloses
from tests.accounting.pld.references import assert_in, overlaps
from tests.accounting.test_divergence import float_above

# ---------------------------------------------------------------------------------------------
# One release: Balle & Wang 2018, Theorem 8
# ---------------------------------------------------------------------------------------------


def _gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> Mpf:
    """Balle & Wang 2018 Thm 8: δ = Φ(Δ/(2σ) - εσ/Δ) - e^ε Φ(-Δ/(2σ) - εσ/Δ)."""
    with mp.workdps(REF_DPS):
        s, e, d = mp.mpf(sigma), mp.mpf(epsilon), mp.mpf(sensitivity)
        return mp.ncdf(d / (2 * s) - e * s / d) - mp.exp(e) * mp.ncdf(-d / (2 * s) - e * s / d)


@pytest.mark.parametrize(
    ("sigma", "epsilon", "sensitivity"), [(1.0, 0.5, 1.0), (3.0, 1.0, 2.0), (0.7, 2.0, 1.0), (10.0, 0.1, 1.0)]
)
def test_gaussian_mechanism_matches_balle_wang(sigma: float, epsilon: float, sensitivity: float) -> None:
    """The Gaussian baseline: δ(ε) is Balle-Wang Thm 8, ε(δ) its inverse, D_α = αΔ²/(2σ²)."""
    mech = AdditiveNoise(Gaussian(sigma), sensitivity)
    delta = mech.delta(epsilon)
    assert_encloses(delta.lo, delta.hi, _gaussian_delta(sigma, epsilon, sensitivity), rel=1e-30)
    # ε(δ) inverts δ(ε): δ at the upper end is <= δ, and above δ just below the lower end.
    target = 1e-5
    eps = mech.epsilon(target)
    assert _gaussian_delta(sigma, float_above(eps.hi), sensitivity) <= target
    assert _gaussian_delta(sigma, float(eps.lo) * (1 - 1e-9), sensitivity) > target
    with mp.workdps(REF_DPS):
        rdp = mech.rdp(2.5)
        assert_encloses(rdp.lo, rdp.hi, mp.mpf("2.5") * mp.mpf(sensitivity) ** 2 / (2 * mp.mpf(sigma) ** 2))
    assert mp.isinf(mech.pure_epsilon().lo)


@pytest.mark.parametrize("sigma", [3.0, 0.7, 1 / 3])
def test_gaussian_zcdp_rho_encloses_the_exact_value(sigma: float) -> None:
    """ρ = Δ²/(2σ²) (Bun-Steinke 2016) must be enclosed, not rounded to nearest (1/18 is not a float)."""
    rho = AdditiveNoise(Gaussian(sigma), 1).zcdp_rho()
    with mp.workdps(REF_DPS):
        assert_encloses(rho.lo, rho.hi, 1 / (2 * mp.mpf(sigma) ** 2))


# ---------------------------------------------------------------------------------------------
# The continuous Gaussian baseline (issue 3 acceptance)
# ---------------------------------------------------------------------------------------------


def test_gaussian_composition_acceptance_number() -> None:
    result = gaussian_composition_epsilon(1.0, 1.0, 1000, 1e-5)
    assert abs(float(result) - 633.9298513356146) <= 1e-9 * 633.9298513356146
    assert_in(mp.mpf(633.9298513356146), result)
    assert result.relative_width < 1e-14


@pytest.mark.slow
@given(sigma=st.floats(0.5, 20.0), count=st.integers(1, 500), delta=st.floats(1e-10, 1e-2))
@FAST
def test_gaussian_composition_round_trip(sigma: float, count: int, delta: float) -> None:
    eps = gaussian_composition_epsilon(sigma, 1.0, count, delta)
    assert gaussian_composition_delta(sigma, 1.0, count, float(eps)).hi <= delta * (1 + 1e-12)
    single = gaussian_composition_epsilon(sigma / math.sqrt(count), 1.0, 1, delta)
    assert overlaps(eps, single) or abs(eps.hi - single.hi) <= 1e-12 * single.hi


# The Gaussian closed form: both ends certified (issue 15 §2.7)
# ---------------------------------------------------------------------------------------------


def _balle_wang_epsilon(sigma: Mpf, delta: Mpf) -> Mpf:
    """ε(δ) of the Gaussian mechanism (sensitivity 1) by bisection on Balle–Wang's δ(ε) at 80 digits."""
    with mp.workdps(80):

        def dlt(e: Mpf) -> Mpf:
            return mp.ncdf(1 / (2 * sigma) - e * sigma) - mp.exp(e) * mp.ncdf(-1 / (2 * sigma) - e * sigma)

        if dlt(0) <= delta:
            return mp.zero
        lo, hi = mp.zero, mp.one
        while dlt(hi) > delta:
            hi *= 2
        for _ in range(300):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
        return hi


@pytest.mark.parametrize(
    ("sigma", "count", "delta"),
    [
        (Fraction(1, 1000001), 1, 1e-5),  # float(σ) rounded up: both ends were below the truth
        (Fraction(3, 13), 1, 1e-5),
        (Fraction(1, 250), 1, 1e-5),
        (1.0, 10**6, 1e-5),  # the example: σ_eff = 1e-3
        (10.0, 1, "flat"),  # δ nearly δ(0): δ barely moves across floats of ε
        (1000.0, 1, "flat"),
    ],
)
def test_gaussian_enclosure_contains_the_sixty_digit_truth(sigma: Any, count: int, delta: Any) -> None:
    """Issue 15 §2.7: the lower end was ``from_rounded_up``'s two floats below an answer that was
    itself a float search with a 1e-25 margin on δ, and a Fraction σ went through float(σ); where
    δ is flat in ε (ε ~ 1e-14) or σ was rounded up, [lo, hi] excluded the truth."""
    with mp.workdps(80):
        s = mp.mpf(sigma.numerator) / sigma.denominator if isinstance(sigma, Fraction) else mp.mpf(sigma)
        s_eff = s / mp.sqrt(count)
        if delta == "flat":
            delta = float((mp.ncdf(1 / (2 * s_eff)) - mp.ncdf(-1 / (2 * s_eff))) * (1 - mp.mpf(1e-12)))
        exact = _balle_wang_epsilon(s_eff, mp.mpf(delta))
    got = (
        AdditiveNoise(Gaussian(sigma), 1.0).epsilon(delta)
        if count == 1
        else gaussian_composition_epsilon(sigma, 1.0, count, delta)
    )
    assert_in(exact, got)
    if count == 1:
        ledger = compose_events([(AdditiveNoise(Gaussian(sigma), 1.0), 1)], "replace-one")
        assert_in(exact, ledger.epsilon(delta))
