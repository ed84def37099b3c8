"""Powers by one transform (accounting.pld.powers.power_rows), checked exactly against the exact
integer composition of the same sides.

As for float products (test_float_products.py): the pessimistic side must dominate the exact
composition in every upper tail ``P(L > t)`` (``+inf`` included), the optimistic side be dominated
by it in every one, and both be within the slack they report; and that must survive a rounding
error as large as the bound and a window that cuts real mass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting import AdditiveNoise, Gaussian
from accounting.errors import ParameterError
from accounting.pld import PrivacyLossDistribution, dominating_pairs, exact_products
from accounting.pld import powers as powers_module
from accounting.pld.grid import Rows
from accounting.pld.powers import log_mgf_bound, power_rows, power_sides
from accounting.pld.products import Made, compose_rows, made_good
from accounting.subsampling import MixturePair, PoissonSampled

from .test_float_products import BITS, concentrated, off_by, shapes, side, upper_tails


def exact_power(a: Rows, n: int, up: bool, extra: Rows | None = None) -> Rows:
    """``a^n (* extra)`` by exact integer products (binary powering)."""
    result, base = extra, a
    while True:
        if n & 1:
            result = base if result is None else compose_rows(result, base, BITS, up)
        n >>= 1
        if not n:
            break
        base = compose_rows(base, base, BITS, up, True)
    assert result is not None
    return result


def laws() -> dict[str, Rows]:
    smooth, skewed = shapes()
    return {
        "smooth": side(smooth, start=-700),
        "skewed, with mass at +inf": side(skewed * (1 - 1e-6), start=3, infinite=1e-6),
        "box": side(np.full(400, 1 / 400)),
        "concentrated": side(concentrated()[:3000] / concentrated()[:3000].sum(), start=-5),
    }


def gaps(fast: Rows, exact: Rows) -> list[int]:
    lo = min(fast.start, exact.start) - 1
    hi = max(fast.start + len(fast.rows), exact.start + len(exact.rows)) + 1
    return [f - e for f, e in zip(upper_tails(fast, lo, hi), upper_tails(exact, lo, hi), strict=True)]


def on_its_side(fast: Rows, exact: Rows, up: bool) -> list[int]:
    found = gaps(fast, exact)
    assert (min(found) >= 0) if up else (max(found) <= 0)
    return found


@pytest.mark.parametrize("up", [True, False])
@pytest.mark.parametrize("name", list(laws()))
@pytest.mark.parametrize("count", [5, 40])
def test_a_power_bounds_the_exact_composition_on_each_side(up: bool, name: str, count: int) -> None:
    a = laws()[name]
    fast = power_rows([(a, count)], BITS, up, allowance=1e-6)
    assert fast is not None
    exact = exact_power(a, count, up)
    found = on_its_side(fast, exact, up)
    assert 0 < fast.slack < 1e-6
    assert max(abs(g) for g in found) <= fast.slack * 2.0**BITS
    total = exact.total() + exact.infinite
    assert abs(fast.total() + fast.infinite - total) <= fast.slack * 2.0**BITS


@pytest.mark.parametrize("up", [True, False])
def test_a_power_times_another_side_bounds_the_exact_product(up: bool) -> None:
    smooth, skewed = shapes()
    a, b = side(smooth, start=-700, infinite=0.0), side(skewed * (1 - 1e-9), start=40, infinite=1e-9)
    fast = power_rows([(a, 24), (b, 1)], BITS, up, allowance=1e-8)
    assert fast is not None
    on_its_side(fast, exact_power(a, 24, up, extra=b), up)


@pytest.mark.parametrize("up", [True, False])
@pytest.mark.parametrize("name", ["smooth", "skewed, with mass at +inf", "long"])
def test_a_window_that_cuts_real_mass_still_leaves_each_side_on_its_side(up: bool, name: str) -> None:
    """A large allowance makes the window narrow: the tails beyond it (up to allowance/16 each)
    wrap around into it, and each side must still stand where it must. The long law (20,000
    points, a long flat tail) has its moment generating function bounded over blocks of points."""
    a = side(concentrated(), start=-5) if name == "long" else laws()[name]
    fast = power_rows([(a, 30)], BITS, up, allowance=1e-2)
    assert fast is not None
    exact = exact_power(a, 30, up)
    assert len(fast.rows) < len(exact.rows)  # the window did cut
    found = on_its_side(fast, exact, up)
    assert max(abs(g) for g in found) <= fast.slack * 2.0**BITS


@pytest.mark.parametrize("up", [True, False])
@pytest.mark.parametrize("name", ["smooth", "box", "concentrated", "top-heavy"])
def test_a_rounding_error_as_large_as_its_bound_still_leaves_each_side_on_its_side(
    monkeypatch: pytest.MonkeyPatch, up: bool, name: str
) -> None:
    """The transforms' real errors are far below their bound; here the power is off by 0.9 of it
    in the worst place: mass missing from the top (the pessimistic side's danger) or extra near
    the top (the optimistic's). On a law heavy at its top no tail is light enough to cut, so
    only what is taken off the top makes the optimistic side good."""

    def adversarial(
        values: np.ndarray, error: float, above: float, below: float, bits: int, up: bool
    ) -> Made:
        # extra mass only where more than the error and the tails lie above it
        keep = 3 * (error + above + below) / error
        c = off_by(values, error, up, keep)
        return made_good(c, error, above, below, bits, up)

    monkeypatch.setattr(powers_module, "made_good", adversarial)
    # top-heavy: most of the mass at the top, where no tail is light enough to cut
    head = concentrated()[:3000]
    a = side(head[::-1] / head.sum()) if name == "top-heavy" else laws()[name]
    fast = power_rows([(a, 12)], BITS, up, allowance=1e-9)
    assert fast is not None
    on_its_side(fast, exact_power(a, 12, up), up)


def test_a_power_declines_where_it_cannot_keep_its_allowance_or_is_not_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a = laws()["smooth"]
    assert power_rows([(a, 40)], BITS, True, allowance=1e-9) is not None
    assert power_rows([(a, 40)], BITS, True, allowance=1e-22) is None  # the rounding alone is more
    assert power_rows([(a, 40)], 128, True, allowance=1e-9) is None  # wider than long doubles
    with exact_products():
        assert power_rows([(a, 40)], BITS, True, allowance=1e-9) is None
    monkeypatch.setattr(powers_module, "MAX_POWER_POINTS", 1024)
    assert power_rows([(a, 40)], BITS, True, allowance=1e-9) is None  # its window is wider
    for bad in (-1e-9, math.inf, math.nan):
        with pytest.raises(ParameterError, match="allowance"):
            power_rows([(a, 40)], BITS, True, allowance=bad)


def test_a_self_composition_by_one_transform_matches_the_exact_one() -> None:
    """200 Poisson-sampled Gaussian steps (q = 0.05, σ = 1): ``self_compose`` powers the spectrum
    at once; its enclosures of ε(10^-5) agree with the exact products' to 1e-9 and contain them."""
    pair = dominating_pairs(PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.05), "add-remove")["remove"]
    assert isinstance(pair, MixturePair)
    one = PrivacyLossDistribution.from_pair(pair)
    fast = one.self_compose(200)
    with exact_products():
        exact = one.self_compose(200)
    assert 0 < fast.slack < 1e-13
    assert fast.spacing == one.spacing  # one transform: no coarsening
    a, b = fast.epsilon(1e-5), exact.epsilon(1e-5)
    assert b.hi <= a.hi < b.hi + 1e-9
    assert b.lo - 1e-9 < a.lo <= b.lo


def test_the_rounding_bound_grows_with_the_count_as_the_transforms_error_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each spectral coefficient is within ``ε_N ‖a‖_1`` of the exact one (``ε_N = tη/(1 - tη)`` for
    ``N = 2^t`` points and ``η = 20u``), and its ``n``-th power within ``n`` times that near the
    origin, where ``|â| ≈ 1``: the bound is at least the origin's term ``n ε_N ‖a‖_1^n``."""
    seen: list[tuple[float, int]] = []

    def spy(values: np.ndarray, error: float, above: float, below: float, bits: int, up: bool) -> Made:
        seen.append((error, len(values)))
        return made_good(values, error, above, below, bits, up)

    monkeypatch.setattr(powers_module, "made_good", spy)
    a = laws()["smooth"]
    mass = (a.total() + 0.0) / 2.0**BITS
    unit = float(np.finfo(np.longdouble).eps) / 2
    for count in (10, 1000):
        assert power_rows([(a, count)], BITS, True, allowance=1e-6) is not None
        error, size = seen[-1]
        levels = size.bit_length() - 1
        eps = levels * 20 * unit / (1 - levels * 20 * unit)
        assert error >= count * eps * mass**count


@pytest.mark.parametrize("lam", [-0.7, -1e-3, 1e-3, 0.7])
@pytest.mark.parametrize("block", [1, 5, 64])
def test_the_moment_generating_function_is_bounded_above_over_blocks(lam: float, block: int) -> None:
    """``ln Σ v_i e^{λ(i - c)}`` for 20,000 masses, against 40 digits: an upper bound over blocks
    of any size (the chord of ``e^{λi}`` over each), and within ``λ²(size - 1)²/8`` of the truth."""
    import mpmath

    values = concentrated()
    centre = 11
    bound = float(log_mgf_bound(values, centre, np.array([lam]), block)[0])
    with mpmath.workdps(40):
        exact = mpmath.log(
            mpmath.fsum(mpmath.mpf(float(v)) * mpmath.exp(lam * (i - centre)) for i, v in enumerate(values))
        )
    assert bound >= exact
    assert bound <= exact + lam * lam * (block - 1) ** 2 / 8 + 1e-6


def test_a_window_too_wide_is_coarsened_once_enough_steps_are_composed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With transforms capped at 4,096 points, 2,000 steps square until 2^8 steps are composed, then
    coarsen the base to fit and take the rest at once: a coarser grid, and an enclosure that still
    overlaps the exact products' (both certified) and is nearly as tight."""
    monkeypatch.setattr(powers_module, "MAX_POWER_POINTS", 4096)
    pair = dominating_pairs(PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.05), "add-remove")["remove"]
    assert isinstance(pair, MixturePair)
    one = PrivacyLossDistribution.from_pair(pair, spacing=2.0**-9)
    fast = one.self_compose(2000, slack=1e-9)
    with exact_products():
        exact = one.self_compose(2000, slack=0.0)
    assert fast.spacing.hi > one.spacing.hi
    assert fast.grid_points <= 4096
    a, b = fast.epsilon(1e-5), exact.epsilon(1e-5)
    assert a.lo <= b.hi
    assert b.lo <= a.hi
    assert a.hi - b.hi < 1e-3 * b.hi


def test_sides_taken_together_are_the_sides_taken_one_by_one() -> None:
    """:func:`~accounting.pld.powers.power_sides` stacks the transforms of sides of one window
    length (zero-padded to the longest) and runs them on two threads: byte for byte the results
    of :func:`power_rows` on each, including a side whose power declines."""
    named = laws()
    jobs = [
        ([(named["smooth"], 12)], True, None),
        ([(named["skewed, with mass at +inf"], 12), (named["box"], 1)], False, None),
        ([(named["box"], 40)], True, None),
        ([(named["smooth"], 12)], False, None),
    ]
    together = power_sides(jobs, BITS, 1e-6)
    alone = [power_rows(parts, BITS, up, 1e-6) for parts, up, _ in jobs]
    assert all(side is not None for side in together)
    for a, b in zip(together, alone, strict=True):
        assert a is not None
        assert b is not None
        assert (a.start, a.infinite, a.slack) == (b.start, b.infinite, b.slack)
        assert np.array_equal(a.rows, b.rows)
    declined = power_sides([*jobs[:1], ([(named["smooth"], 12)], True, None)], BITS, 1e-40)
    assert declined == [None, None]
