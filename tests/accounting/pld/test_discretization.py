"""Tests of :mod:`accounting.pld.discretization`: from loss atoms to the two grids.

The optimistic side is a mean-preserving contraction whose error is second order in the spacing;
continuous noise (Gaussian, Laplace) by cells of the output axis, against closed forms, quadrature
and ``dp_accounting``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mpmath import mp

from accounting import (
    AdditiveNoise,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    PureDP,
    Skellam,
    SumOfDiscreteGaussians,
)
from accounting.pld import (
    compose_events,
    gaussian_composition_delta,
    gaussian_composition_epsilon,
)
from accounting.pld.discretization import _contract
from tests.accounting.pld.references import (
    FAST,
    REF_DPS,
    Mpf,
    assert_in,
    binomial_atoms,
    brute_epsilon,
    overlaps,
    pld,
)

# ---------------------------------------------------------------------------------------------
# The second-order optimistic side: a mean-preserving contraction onto the grid
# ---------------------------------------------------------------------------------------------

ATOMS = st.lists(st.tuples(st.integers(-3000, 3000), st.integers(1, 10**9)), min_size=1, max_size=30)


@given(atoms=ATOMS, threshold=st.floats(-20.0, 20.0))
@FAST
def test_contraction_lowers_every_convex_nondecreasing_expectation(
    atoms: list[tuple[int, int]], threshold: float
) -> None:
    """``Σ q_g f(g h) <= Σ q f(l)`` for ``f(s) = (e^s - e^c)_+`` (conditional Jensen; blocks below means)."""
    frac, h = 8, mp.mpf("0.01")
    out = _contract(atoms, frac)
    assert sum(out.values()) == sum(m for _, m in atoms)  # the pieces partition the mass
    with mp.workdps(40):
        e_c = mp.exp(threshold)

        def f(s: Mpf) -> Mpf:
            return max(mp.zero, mp.exp(s) - e_c)

        before = mp.fsum(m * f(mp.mpf(t) / 2**frac * h) for t, m in atoms)
        after = mp.fsum(m * f(g * h) for g, m in out.items())
        assert after <= before * (1 + mp.mpf(10) ** -30)
        # and the mean moves down by less than one grid step
        mean_before = mp.fsum(mp.mpf(t) * m for t, m in atoms) / 2**frac
        mean_after = mp.fsum(g * m for g, m in out.items())
        total = sum(m for _, m in atoms)
        assert mean_before - total <= mean_after <= mean_before


def test_contraction_keeps_atoms_on_the_grid_and_piles_at_either_end() -> None:
    unit = 1 << 8
    assert _contract([(3 * unit, 5), (7 * unit, 2)], 8) == {3: 5, 7: 2}
    # A pile against the top end (mass 10 at 9.5 steps) is contracted from the inside:
    # nothing of it is rounded down by a whole step.
    atoms = [(int((k + 0.5) * unit), 1) for k in range(9)] + [(int(9.5 * unit), 10)]
    out = _contract(atoms, 8)
    mean_before = sum(t * m for t, m in atoms) / unit
    mean_after = sum(g * m for g, m in out.items())
    assert mean_before - mean_after < 1.0


def test_optimistic_end_is_second_order_for_skellam() -> None:
    """100 × Skellam(100) at δ = 1e-5: the first-order lower end was 4.36953 even at h = 2^-13."""
    dist = pld(AdditiveNoise(Skellam(100), 1), spacing=2.0**-11, dps=20).self_compose(100)
    got = dist.epsilon(1e-5)
    assert got.lo > 4.375
    assert got.hi - got.lo < 1e-3  # 100 steps of h/2 would be 2.4e-2


@pytest.mark.slow
def test_hundred_skellams_on_the_default_grid() -> None:
    """The ledger's default grid (refined for 100 sparse atoms, coarsened as it grows) is tighter
    than a single mechanism's default grid was uncoarsened: [4.37591, 4.37609]."""
    got = compose_events([(AdditiveNoise(Skellam(100), 1), 100)], "replace-one").epsilon(1e-5)
    assert got.lo > 4.37598
    assert got.hi < 4.376088
    assert got.hi - got.lo < 1.1e-4  # first-order rounding gave [4.36953, 4.37609]
    # One mechanism's own default grid, coarsened beyond MAX_GRID_POINTS: still second order.
    coarsened = pld(AdditiveNoise(Skellam(100), 1), dps=20).self_compose(100).epsilon(1e-5)
    assert coarsened.lo > 4.37589
    assert coarsened.hi < 4.37609


def test_rounded_grid_lower_end_below_the_exact_discrete_gaussian() -> None:
    """Atoms 256 grid steps apart (``Δ/σ² = 1/4``): a contraction merges neighbours that far apart,
    so the width is of order ``h·Δ/σ²`` per step rather than ``h²`` (still far below ``h``)."""
    dist = pld(AdditiveNoise(DiscreteGaussian(2.0), 1), spacing=2.0**-10, dps=20).self_compose(10)
    assert not dist.exact_grid
    summed = AdditiveNoise(SumOfDiscreteGaussians(2.0, 10), 10)
    for eps in (0.0, 1.0, 3.0):
        exact = summed.delta(eps, 20)
        got = dist.delta(eps)
        assert got.lo <= exact.hi
        assert exact.lo <= got.hi
        assert got.hi - got.lo < 4e-3 * got.hi
    got_eps, exact_eps = dist.epsilon(1e-6), summed.epsilon(1e-6, 20)
    assert overlaps(got_eps, exact_eps)
    assert got_eps.relative_width < 2e-3


def test_rounded_grid_discrete_laplace_width_is_second_order() -> None:
    h = 2.0**-12
    dist = pld(AdditiveNoise(DiscreteLaplace(1000.0), 1), spacing=h).self_compose(30)
    with mp.workdps(REF_DPS):
        exact = brute_epsilon(binomial_atoms(1000.0, 30), 1e-3)
    got = dist.epsilon(1e-3)
    assert_in(exact, got)
    assert got.hi - got.lo < 30 * h / 5  # rounding each loss down would cost up to 30 h


# ---------------------------------------------------------------------------------------------


# Continuous noise by cells of the output axis
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("sigma", "count"), [(2.0, 1), (2.0, 10), (5.0, 200)])
def test_continuous_gaussian_cells_enclose_the_closed_form(sigma: float, count: int) -> None:
    dist = pld(AdditiveNoise(Gaussian(sigma), 1.0), spacing=2.0**-10, dps=20).self_compose(count)
    exact = gaussian_composition_epsilon(sigma, 1.0, count, 1e-5)
    got = dist.epsilon(1e-5)
    assert overlaps(got, exact), (got, exact)
    assert got.relative_width < 3e-5
    for eps in (0.0, 0.5, 2.0):
        assert overlaps(dist.delta(eps), gaussian_composition_delta(sigma, 1.0, count, eps))


def _laplace_two_fold_delta(a: Mpf, eps: Mpf) -> Mpf:
    """``δ(ε)`` of two Laplace mechanisms from the law of the loss (module docstring)."""
    atoms = [(a, mp.mpf(1) / 2), (-a, mp.exp(-a) / 2)]

    def density(x: Mpf) -> Mpf:
        return mp.exp((x - a) / 2) / 4

    def g(s: Mpf) -> Mpf:
        return max(mp.zero, 1 - mp.exp(eps - s))

    def against_density(shift: Mpf) -> Mpf:
        """``∫_{-a}^{a} f(l) (1 - e^{ε - shift - l})_+ dl`` in closed form."""
        u = max(-a, eps - shift)
        if u >= a:
            return mp.zero
        first = (1 - mp.exp((u - a) / 2)) / 2
        second = mp.exp(eps - shift - a / 2) / 2 * (mp.exp(-u / 2) - mp.exp(-a / 2))
        return first - second

    total = mp.fsum(p1 * p2 * g(l1 + l2) for l1, p1 in atoms for l2, p2 in atoms)
    total += 2 * mp.fsum(p * against_density(loss) for loss, p in atoms)
    breaks = sorted({-a, a, *(x for x in (eps - a, eps + a) if -a < x < a)})
    total += mp.quad(lambda l1: density(l1) * against_density(l1), breaks)
    return total


@pytest.mark.slow
def test_continuous_laplace_two_fold_against_quadrature() -> None:
    b = 2.0
    dist = pld(AdditiveNoise(Laplace(b), 1.0), spacing=2.0**-12, dps=20)
    two = dist.self_compose(2)
    with mp.workdps(30):
        a = 1 / mp.mpf(b)
        for eps in (0.0, 0.2, 0.6, 0.9):
            exact = _laplace_two_fold_delta(a, mp.mpf(eps))
            got = two.delta(eps)
            assert got.lo <= exact <= got.hi, (eps, got, exact)
            assert overlaps(AdditiveNoise(Laplace(b), 1.0).delta(eps), dist.delta(eps))


def test_continuous_laplace_ledger_is_tight_on_the_default_grid() -> None:
    """The heavy end atoms ``±Δ/b`` sit on grid points (offset and spacing chosen for them)."""
    ledger = compose_events([(AdditiveNoise(Laplace(10.0), 1.0), 100)], "add-remove")
    got = ledger.epsilon(1e-5)
    assert got.relative_width < 1e-4
    assert got.lo < 4.53  # the RDP route's answer
    mixed = compose_events(
        [(AdditiveNoise(Laplace(10.0), 1.0), 50), (PureDP(0.05, "thm", "add-remove"), 20)], "add-remove"
    )
    assert mixed.epsilon(1e-5).relative_width < 1e-3


def test_continuous_laplace_against_dp_accounting() -> None:
    """The ledger that fell back to RDP (4.53) now has a PLD route: dp_accounting's PLD says 4.2203."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    ours = compose_events([(AdditiveNoise(Laplace(10.0), 1.0), 100)], "add-remove").epsilon(1e-5)
    theirs = pld_lib.from_laplace_mechanism(10.0, value_discretization_interval=1e-4).self_compose(100)
    pessimistic = theirs.get_epsilon_for_delta(1e-5)
    assert ours.hi >= 4.2201  # dp_accounting's optimistic estimate
    assert abs(float(ours.hi) - pessimistic) < 2e-3 * pessimistic
    assert ours.hi < 4.53


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0.0, 1e-15, 3e-13, 0.25, 0.5, 1 - 1e-13, 1 - 1e-16])
@pytest.mark.parametrize("h", [2.0**-13, 0.3, 1.0])
def test_the_split_share_bounds_connect_the_dots_from_above(offset: float, h: float) -> None:
    """The share at the upper grid point is at least ``w = (1 - e^{-d})/(1 - e^{-h})`` (60 digits)
    and within 2^-29 of it, near a grid point (the exact bounds without Arb, which give up at
    most 2^-30) and away from one."""
    from fractions import Fraction

    from accounting.certified import precision
    from accounting.pld.discretization import _split_rule

    for j in (-3, 0, 7, 12345):
        with mp.workprec(400):
            top = mp.mpf(j) * h + mp.mpf(offset) * h  # exact at this precision
        with precision(30):
            rule = _split_rule(top, h)
        if offset == 0:
            assert rule.j_lo == rule.j_hi == j  # on the grid: no split
            continue
        assert rule.j_hi == rule.j_lo + 1
        share = Fraction(rule.numerator, rule.denominator)
        with mp.workdps(60):
            d = top - rule.j_lo * mp.mpf(h)
            w = (1 - mp.exp(-d)) / (1 - mp.exp(-mp.mpf(h)))
            got = mp.mpf(share.numerator) / share.denominator
            assert 0 <= d < h
            assert w <= got <= w + mp.mpf(2) ** -29
