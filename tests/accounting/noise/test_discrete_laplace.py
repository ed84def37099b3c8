"""The discrete Laplace (:mod:`accounting.noise.discrete_laplace`): Fact 3 of Chowdhury & Zhou 2023
(its exact tail) and its variance."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import DiscreteLaplace
from tests.accounting.noise.reference import (
    FAST,
    REF_DPS,
    Mpf,
    reference_moments,
    reference_table,
    reference_window,
)


def _fact3_tail(epsilon: Mpf, sensitivity: Mpf, m: int) -> Mpf:
    """Fact 3 (spec §2.3): P[Y > m] = e^{-εm/Δ} / (e^{ε/Δ} + 1) for Y ~ Lap_Z(Δ/ε)."""
    return mp.exp(-epsilon * m / sensitivity) / (mp.exp(epsilon / sensitivity) + 1)


def test_fact3_tail_spec_vector() -> None:
    """Spec §2.3, Fact 3: g = 4, ε = 0.5, m = 10 gives P[Y > 10] = 0.134311 = sf_bound(11)."""
    noise = DiscreteLaplace(8)  # Δ/ε = g/ε = 8
    with mp.workdps(REF_DPS):
        closed = _fact3_tail(mp.mpf("0.5"), mp.mpf(4), 10)
        _, hi = reference_window(noise)
        by_sum = mp.fsum(reference_table(noise, 11, hi))
        assert abs(closed - by_sum) < mp.mpf(10) ** -30  # the PMF sum agrees with the identity
    assert float(closed) == pytest.approx(0.134311, abs=5e-7)
    for bound in (noise.sf_bound(11), noise.cdf_bound(-11)):  # P[Y > m] = P[Y < -m]
        with mp.workdps(REF_DPS):
            assert bound >= closed
            assert (bound - closed) / closed < mp.mpf(10) ** -28  # exact for the discrete Laplace


@given(scale=st.floats(0.1, 200), m=st.integers(0, 400), decay_form=st.booleans())
@FAST
def test_discrete_laplace_tail_is_fact3_exactly(scale: float, m: int, decay_form: bool) -> None:
    """Fact 3 (spec §2.3) at any scale: sf_bound(m + 1) is the exact tail, certified from above."""
    with mp.workdps(REF_DPS):
        b = mp.mpf(scale)
        closed = _fact3_tail(1 / b, mp.one, m)
        if decay_form:
            decay = math.exp(-1 / scale)
            noise = DiscreteLaplace(beta=decay)
            q = mp.mpf(decay)
            closed = q ** (m + 1) / (1 + q)  # the same identity with e^{-1/b} = β exactly
        else:
            noise = DiscreteLaplace(scale)
    for bound in (noise.sf_bound(m + 1, dps=25), noise.cdf_bound(-m - 1, dps=25)):
        with mp.workdps(REF_DPS):
            assert bound >= closed
            assert (bound - closed) / closed < mp.mpf(10) ** -23


@given(scale=st.floats(0.1, 50), t=st.integers(1, 60))
@settings(max_examples=60, deadline=None)
def test_discrete_laplace_two_sided_tail_bound_is_rounded_up(scale: float, t: int) -> None:
    """tail_bound(t) >= P(|X| >= t) = 2e^{-t/b}/(1 + e^{-1/b}) exactly (Fact 3), as a float.

    The sum of the two exact one-sided tails must be rounded up, also when the caller runs at
    mpmath's default 53-bit precision (a sum rounded to nearest there fails half the time).
    """
    bound = DiscreteLaplace(scale).tail_bound(t)
    with mp.workdps(REF_DPS):
        q = mp.exp(-1 / mp.mpf(scale))
        assert mp.mpf(bound) >= 2 * q**t / (1 + q)


def test_discrete_laplace_variance_spec_value() -> None:
    """Spec §2.3: Var Lap_Z(b) = 2e^{-1/b}/(1 - e^{-1/b})²; b = 8 gives 127.83 (spec §9.1)."""
    q = math.exp(-1 / 8)
    assert 2 * q / (1 - q) ** 2 == pytest.approx(127.83, abs=5e-3)
    assert DiscreteLaplace(8).variance() == pytest.approx(127.83, abs=5e-3)
    assert DiscreteLaplace(beta=q).variance() == pytest.approx(127.83, abs=5e-3)
    _, var, _ = reference_moments(DiscreteLaplace(8))
    assert DiscreteLaplace(8).variance() == pytest.approx(var, rel=1e-12)
