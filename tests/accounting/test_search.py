"""The one monotone search (accounting.search): exact float resolution, certified ends."""

from __future__ import annotations

import bisect
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mpmath import mp

from accounting.search import expand, largest, narrow, smallest, smallest_integer


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


def test_expand_walks_a_running_sum_from_the_start() -> None:
    seen: list[float] = []

    def holds(x: float) -> bool:
        seen.append(x)
        return x <= -10.0

    assert expand(holds, 0.0, -1.0) == (-7.0, -15.0)
    assert seen == [0.0, -1.0, -3.0, -7.0, -15.0]
    assert expand(lambda x: True, 5.0, 1.0) == (None, 5.0)  # the start is evaluated first
    assert expand(lambda x: x >= 100, 1, 4, growth=4) == (85, 341)


def test_expand_anchored_steps_from_the_anchor_and_stops_at_the_limit() -> None:
    seen: list[int] = []

    def holds(x: int) -> bool:
        seen.append(x)
        return x >= 13

    assert expand(holds, 0, 1, anchored=True) == (8, 16)
    assert seen == [1, 2, 4, 8, 16]  # the anchor itself is not evaluated
    assert expand(lambda x: False, 0, -1, anchored=True, limit=-5) == (-4, -5)
    assert expand(lambda x: True, 0, 1, anchored=True) == (0, 1)


def test_expand_keeps_the_callers_mpf_arithmetic() -> None:
    with mp.workdps(30):
        start, step = mp.mpf(1) / 3, mp.mpf("1e-20")
        before, at = expand(lambda x: x > start + mp.mpf("1e-15"), start, step)
        x, s = start, step
        while not x > start + mp.mpf("1e-15"):
            before_loop, x, s = x, x + s, s * 2
        assert (before, at) == (before_loop, x)


def test_narrow_bisects_midpoints_to_the_width_and_reports_an_undecided_point() -> None:
    with mp.workdps(40):
        root = mp.sqrt(2)
        lo, hi, undecided = narrow(lambda x: x * x >= 2, mp.mpf(1), mp.mpf(2), width=mp.mpf("1e-30"))
        assert undecided is None
        assert lo < root <= hi
        assert hi - lo <= mp.mpf("1e-30")
        lo, hi, undecided = narrow(lambda x: None if abs(x - root) < 0.1 else x > root, 0.0, 8.0, width=0.0)
        assert undecided is not None
        assert abs(undecided - root) < 0.1
        assert lo < root < hi
    lo, hi, _ = narrow(lambda x: x > 1, 0.0, 1024.0, width=lambda a, b: 0.0, max_steps=3)
    assert (lo, hi) == (0.0, 128.0)


@given(st.lists(st.booleans()), st.integers(min_value=0, max_value=40))
def test_smallest_integer_is_bisect_left(flags: list[bool], cut: int) -> None:
    values = sorted(flags)  # false, then true
    seen: list[int] = []

    def holds(i: int) -> bool:
        seen.append(i)
        return values[i]

    assert smallest_integer(holds, 0, len(values)) == bisect.bisect_left(values, True)
    seen_bisect: list[int] = []

    def key(i: int) -> bool:
        seen_bisect.append(i)
        return values[i]

    bisect.bisect_left(range(len(values)), True, key=key)
    assert seen == seen_bisect
    assert smallest_integer(lambda i: i >= cut, -3, 50) == max(-3, cut)
