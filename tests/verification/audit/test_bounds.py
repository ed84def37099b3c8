"""Tests of :mod:`verification.audit.bounds`: one-sided Clopper–Pearson intervals and the ε bound.

The Clopper–Pearson bounds (Clopper & Pearson 1934) are checked against the binomial tail they
invert, computed independently by scipy; the bound ``ln((p_lo - δ)/q_hi)`` against its formula and
its monotonicity (Jagielski, Ullman & Oprea 2020).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from accounting import ParameterError
from verification.audit import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound


@pytest.mark.parametrize(
    ("k", "n", "alpha"), [(1, 10, 0.05), (7, 40, 0.025), (500, 1000, 0.01), (3, 10**6, 0.1)]
)
def test_clopper_pearson_inverts_the_binomial_tail(k: int, n: int, alpha: float) -> None:
    lo = clopper_pearson_lower(k, n, alpha)
    hi = clopper_pearson_upper(k, n, alpha)
    # The lower end is the p with P[Bin(n, p) >= k] = α, the upper the p with P[Bin(n, p) <= k] = α.
    assert stats.binom.sf(k - 1, n, lo) == pytest.approx(alpha, rel=1e-8)
    assert stats.binom.cdf(k, n, hi) == pytest.approx(alpha, rel=1e-8)
    assert lo < k / n < hi


def test_clopper_pearson_at_the_ends_has_closed_forms() -> None:
    n, alpha = 1000, 0.025
    assert clopper_pearson_lower(0, n, alpha) == 0.0
    assert clopper_pearson_upper(n, n, alpha) == 1.0
    # k = 0: (1 - p)^n = α; k = n: p^n = α.
    assert clopper_pearson_upper(0, n, alpha) == pytest.approx(1 - alpha ** (1 / n), rel=1e-10)
    assert clopper_pearson_lower(n, n, alpha) == pytest.approx(alpha ** (1 / n), rel=1e-10)


def test_epsilon_lower_bound_is_the_formula() -> None:
    k1, k2, n, delta, conf = 4000, 1000, 100_000, 0.001, 0.9
    p_lo = clopper_pearson_lower(k1, n, 0.05)
    q_hi = clopper_pearson_upper(k2, n, 0.05)
    expected = math.log((p_lo - delta) / q_hi)
    got = epsilon_lower_bound(k1, k2, n, delta=delta, confidence=conf)
    assert got <= expected
    assert got == pytest.approx(expected, rel=1e-14)


def test_epsilon_lower_bound_clips_at_zero() -> None:
    assert epsilon_lower_bound(10, 1000, 10_000) == 0.0  # p << q
    assert epsilon_lower_bound(5, 0, 10_000, delta=0.01) == 0.0  # p_lo <= δ
    assert epsilon_lower_bound(0, 0, 10_000) == 0.0


counts = st.integers(min_value=0, max_value=10_000)


@settings(max_examples=60, deadline=None)
@given(k1=counts, k2=counts, extra=st.integers(0, 5), conf=st.floats(0.5, 0.999), delta=st.floats(0, 0.1))
def test_epsilon_lower_bound_is_monotone(k1: int, k2: int, extra: int, conf: float, delta: float) -> None:
    n = 10_000
    e = epsilon_lower_bound(k1, k2, n, delta=delta, confidence=conf)
    assert e >= 0
    # More hits on the numerator side, fewer on the denominator side, lower confidence or
    # smaller δ can only raise the bound.
    assert epsilon_lower_bound(min(n, k1 + extra), k2, n, delta=delta, confidence=conf) >= e
    assert epsilon_lower_bound(k1, max(0, k2 - extra), n, delta=delta, confidence=conf) >= e
    assert epsilon_lower_bound(k1, k2, n, delta=delta, confidence=conf / 2) >= e
    assert epsilon_lower_bound(k1, k2, n, delta=delta / 2, confidence=conf) >= e


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"first_hits": 11, "second_hits": 0, "trials": 10}, "first_hits"),
        ({"first_hits": 1, "second_hits": -1, "trials": 10}, "second_hits"),
        ({"first_hits": 1, "second_hits": 1, "trials": 0}, "trials"),
        ({"first_hits": 1, "second_hits": 1, "trials": 10, "delta": 1.0}, "delta"),
        ({"first_hits": 1, "second_hits": 1, "trials": 10, "confidence": 1.0}, "confidence"),
    ],
)
def test_epsilon_lower_bound_validates(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(ParameterError) as info:
        epsilon_lower_bound(**kwargs)
    assert info.value.name == name
