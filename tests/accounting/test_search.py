"""The one monotone search (accounting.search): exact float resolution, certified ends."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounting.search import largest, smallest


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_predicate_search_finds_the_exact_float(t: float) -> None:
    lo, hi = -2e6, 2e6
    x = smallest(lambda y: y >= t, lo, hi)
    assert x >= t
    assert math.nextafter(x, -math.inf) < t
    y = largest(lambda z: z <= t, lo, hi)
    assert y <= t
    assert math.nextafter(y, math.inf) > t


@pytest.mark.parametrize("target", [2.0, 3.0, 1e-20, 1e20])
def test_excess_search_is_certified_and_adjacent(target: float) -> None:
    """Illinois on an excess: the answer holds where evaluated and the float below does not."""
    calls = []

    def excess(x: float) -> float:
        calls.append(x)
        return target - x * x

    x = smallest(excess, 0.0, max(2.0, 2 * target), log=False)
    assert x * x >= target
    below = math.nextafter(x, 0.0)
    assert below * below < target
    assert len(calls) < 400


def test_relative_tolerance_stops_early_on_the_safe_side() -> None:
    x = smallest(lambda s: 1.0 / s - 0.5, 0.5, 100.0, rtol=1e-6, log=True)
    assert 1.0 / x <= 0.5
    assert x <= 2.0 * (1 + 1e-6)


def test_bad_brackets_are_refused() -> None:
    with pytest.raises(ValueError, match="bracket"):
        smallest(lambda x: x > 1, 2.0, 1.0)
    with pytest.raises(ValueError, match="bracket"):
        smallest(lambda x: x > 1, 0.0, 1.0, log=True)
    with pytest.raises(ValueError, match="bracket"):
        largest(lambda x: x < 1, 0.0, math.inf)


def test_stop_returns_the_bracket_as_reached() -> None:
    """``stop`` is the caller's budget: asked before each evaluation, it ends the search at the end
    last evaluated to hold (certified, only less tight); the search itself reads no clock."""
    calls: list[float] = []

    def excess(x: float) -> float:
        calls.append(x)
        return 2.0 - x * x

    exact = smallest(excess, 1.0, 4.0)
    total = len(calls)
    calls.clear()
    x = smallest(excess, 1.0, 4.0, stop=lambda: len(calls) >= 3)
    assert len(calls) == 3 < total
    assert x * x >= 2.0
    assert x > exact
    assert x in calls  # evaluated to hold, never interpolated
    calls.clear()
    assert smallest(excess, 1.0, 4.0, stop=lambda: False) == exact
    assert len(calls) == total
    assert smallest(excess, 1.0, 4.0, stop=lambda: True) == 4.0  # nothing evaluated: the given hi
