"""Lemma 10 (RDP → (ε, δ)) against the test vectors of spec §3.4."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting import ParameterError, bounds
from accounting.conversion import rdp_to_dp
from accounting.papers.distributed_dp_mab import theorem2_g


def _skellam_theorem2_curve(epsilon: float, scale: float, users: int) -> list[tuple[float, float]]:
    g = theorem2_g(epsilon, scale, users)
    variance = g**2 / epsilon**2
    return [(a, bounds.skellam_rdp_akl(a, variance, g)) for a in range(2, 2001)]


def test_spec_3_4_vector_eps1_s10_n1024() -> None:
    """Spec §3.4: exact Lemma 3 (actual g = 320), integer α in 2..2000, δ = 1e-6 → ε' = 5.2225."""
    assert rdp_to_dp(_skellam_theorem2_curve(1.0, 10, 1024), 1e-6) == pytest.approx(5.2225, abs=5e-5)


@pytest.mark.parametrize("users", [1, 16, 1024])
def test_spec_3_4_vector_eps01_s100_any_n(users: int) -> None:
    """Spec §3.4: ε = 0.1, s = 100 gives ε' = 0.4300 for any n."""
    assert rdp_to_dp(_skellam_theorem2_curve(0.1, 100, users), 1e-6) == pytest.approx(0.4300, abs=5e-5)


@settings(max_examples=30, deadline=None)
@given(rho=st.floats(1e-4, 10), delta=st.floats(1e-12, 0.5))
def test_zcdp_curve_beats_bun_steinke(rho: float, delta: float) -> None:
    """Lemma 10 on the curve α ρ is never worse than Bun–Steinke's ρ + 2 sqrt(ρ ln(1/δ))."""
    orders = [1 + 10 ** (k / 20) for k in range(-60, 81)]
    eps = rdp_to_dp(((a, a * rho) for a in orders), delta)
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-12
    assert eps >= 0


def test_infinite_orders_are_skipped_and_bad_input_rejected() -> None:
    assert math.isfinite(rdp_to_dp([(2, math.inf), (3, 0.1)], 1e-5))
    with pytest.raises(ParameterError) as err:
        rdp_to_dp([(2, 0.1)], 0)
    assert err.value.name == "delta"
    with pytest.raises(ParameterError) as err:
        rdp_to_dp([(1, 0.1)], 1e-5)
    assert err.value.name == "alpha"
    with pytest.raises(ParameterError) as err:
        rdp_to_dp([(2, math.nan)], 1e-5)
    assert err.value.name == "rdp"
    with pytest.raises(ParameterError) as err:
        rdp_to_dp([], 1e-5)
    assert err.value.name == "curve"
