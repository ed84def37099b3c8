"""Tests of :mod:`accounting.pld.distribution`: the PLD of one mechanism and its compositions.

One mechanism against the exact single-shot values of :mod:`accounting.divergence`; ``k``-fold
compositions against independent exact values (the binomial law of the discrete Laplace's loss,
the discrete Gaussian as one mechanism with summed noise, brute-force sums over product spaces);
the structure of composition (monotone, commutative, associative up to rounding).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mpmath import mp

from accounting import (
    AdditiveNoise,
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    DistributedSum,
    Geometric,
    ParameterError,
    ParameterTypeError,
    Polya,
    Skellam,
    SumOfDiscreteGaussians,
    UnsupportedError,
)
from accounting.pld import (
    compose_mechanisms,
    gaussian_composition_epsilon,
)
from tests.accounting.pld.references import (
    FAST,
    REF_DPS,
    assert_in,
    binomial_atoms,
    binomial_table,
    brute_delta,
    brute_epsilon,
    overlaps,
    pld,
    product_atoms,
    skellam_table,
)

# ---------------------------------------------------------------------------------------------
# One mechanism: the PLD encloses the exact single-shot values
# ---------------------------------------------------------------------------------------------

SINGLE = [
    AdditiveNoise(DiscreteLaplace(3.0), 1),
    AdditiveNoise(DiscreteLaplace(Fraction(5, 2)), 2),
    AdditiveNoise(DiscreteLaplace(beta=0.7), 1),
    AdditiveNoise(DiscreteGaussian(1.5), 1),
    AdditiveNoise(DiscreteGaussian(3.0), 2),
    AdditiveNoise(Skellam(20), 1),
    AdditiveNoise(Skellam(50), 3),
    AdditiveNoise(CenteredBinomial(16), 1),
    DistributedSum(DiscreteGaussian(2.0), 3),
]


@pytest.mark.parametrize("mechanism", SINGLE, ids=repr)
def test_single_mechanism_encloses_the_exact_values(mechanism: Any) -> None:
    dist = pld(mechanism, dps=20)
    for eps in (0.0, 0.1, 0.5, 1.5):
        exact = mechanism.delta(eps, 20)
        got = dist.delta(eps)
        assert overlaps(got, exact), (eps, got, exact)
        # The pessimistic end is tight: exact lattices to the working precision, rounded grids
        # to second order in the spacing.
        assert got.hi <= exact.hi + mp.mpf(10) ** -15 + exact.hi * 1e-6
    for delta in (1e-2, 1e-5):
        exact = mechanism.epsilon(delta, 20)
        got = dist.epsilon(delta)
        assert overlaps(got, exact), (delta, got, exact)
        assert got.hi <= exact.hi * (1 + 1e-6) + mp.mpf(10) ** -15


@pytest.mark.parametrize(
    "mechanism", [AdditiveNoise(DiscreteLaplace(4.0), 1), AdditiveNoise(DiscreteGaussian(2.5), 1)], ids=repr
)
def test_exact_lattices_are_detected_and_tight(mechanism: Any) -> None:
    dist = pld(mechanism)
    assert dist.exact_grid
    for eps in (0.0, 0.2):
        got = dist.delta(eps)
        assert got.relative_width < 1e-25
        assert overlaps(mechanism.delta(eps), got)


def test_discrete_laplace_lattice_is_the_two_point_loss() -> None:
    dist = pld(AdditiveNoise(DiscreteLaplace(10.0), 1))
    assert dist.grid_points == 2
    assert float(dist.spacing.lo) == pytest.approx(0.2, rel=1e-15)
    lo, hi = dist.loss_range
    assert lo == pytest.approx(-0.1, rel=1e-14)
    assert hi == pytest.approx(0.1, rel=1e-14)


def test_discrete_laplace_on_a_chosen_grid_encloses_the_binomial() -> None:
    """With a ``spacing``, the closed-form atoms are split onto that grid (no window needed)."""
    dist = pld(AdditiveNoise(DiscreteLaplace(1000.0), 1), spacing=2.0**-12).self_compose(30)
    assert not dist.exact_grid
    assert dist.infinite_mass.hi < 1e-30  # only truncated rounding dust: no window tails
    with mp.workdps(REF_DPS):
        atoms = binomial_atoms(1000.0, 30)
        for eps in (0.0, 0.01, 0.03):
            assert_in(brute_delta(atoms, eps), dist.delta(eps))
        assert_in(brute_epsilon(atoms, 1e-3), dist.epsilon(1e-3))


def test_polya_shares_give_the_discrete_laplace_lattice() -> None:
    beta = 0.9
    shares = DistributedSum(Polya(Fraction(1, 8), beta), 8)
    direct = AdditiveNoise(DiscreteLaplace(beta=beta), 1)
    assert pld(shares) == pld(direct)


def test_centered_binomial_has_infinite_loss_mass() -> None:
    dist = pld(AdditiveNoise(CenteredBinomial(10), 1))
    exact = mp.mpf(1) / 2**10  # P(X + 1 = 6) where X <= 5: the top binomial atom
    assert_in(exact, dist.infinite_mass)
    with mp.workdps(40):
        assert dist.delta(50.0).lo >= exact * (1 - mp.mpf(10) ** -20)


# ---------------------------------------------------------------------------------------------
# Compositions against independent exact values
# ---------------------------------------------------------------------------------------------


def test_hundred_fold_discrete_laplace_to_twelve_digits() -> None:
    """Issue 3: 100-fold discrete Laplace answered to 12+ significant digits (we get ~25)."""
    dist = pld(AdditiveNoise(DiscreteLaplace(10.0), 1)).self_compose(100)
    with mp.workdps(REF_DPS):
        atoms = binomial_atoms(10.0, 100)
        for eps in (0.0, 0.5, 1.0, 2.0, 4.0, 6.0):
            got = dist.delta(eps)
            assert_in(brute_delta(atoms, eps), got)
            assert got.digits() >= 12
        for delta in (1e-3, 1e-6, 1e-10):
            got = dist.epsilon(delta)
            assert_in(brute_epsilon(atoms, delta), got)
            assert got.digits() >= 12


@given(scale=st.floats(0.5, 20.0), count=st.integers(1, 40), eps=st.floats(0.0, 5.0))
@FAST
def test_k_fold_discrete_laplace_is_binomial(scale: float, count: int, eps: float) -> None:
    dist = pld(AdditiveNoise(DiscreteLaplace(scale), 1), dps=20).self_compose(count)
    with mp.workdps(REF_DPS):
        got = dist.delta(eps)
        assert_in(brute_delta(binomial_atoms(scale, count), eps), got)
        assert got.hi - got.lo <= mp.mpf(10) ** -18


@given(
    sigma=st.sampled_from([1.0, 1.5, 2.0, 3.25]),
    sensitivity=st.integers(1, 2),
    count=st.integers(2, 9),
    eps=st.floats(0.0, 4.0),
)
@FAST
def test_k_fold_discrete_gaussian_is_one_mechanism_with_summed_noise(
    sigma: float, sensitivity: int, count: int, eps: float
) -> None:
    dist = pld(AdditiveNoise(DiscreteGaussian(sigma), sensitivity), dps=20).self_compose(count)
    assert dist.exact_grid
    summed = AdditiveNoise(SumOfDiscreteGaussians(sigma, count), count * sensitivity)
    got = dist.delta(eps)
    exact = summed.delta(eps, 20)
    assert overlaps(got, exact), (got, exact)
    assert got.hi - got.lo <= mp.mpf(10) ** -18


def test_k_fold_discrete_gaussian_epsilon_matches_summed_noise() -> None:
    dist = pld(AdditiveNoise(DiscreteGaussian(2.0), 1)).self_compose(10)
    summed = AdditiveNoise(SumOfDiscreteGaussians(2.0, 10), 10)
    for delta in (1e-3, 1e-5, 1e-9):
        got, exact = dist.epsilon(delta), summed.epsilon(delta)
        assert overlaps(got, exact)
        assert got.digits() >= 20


def test_centered_binomial_composition_brute_force() -> None:
    """A rounded grid with infinite losses, against the product space enumerated exactly."""
    mechanism = AdditiveNoise(CenteredBinomial(6), 1)
    dist = pld(mechanism, dps=20).self_compose(3)
    assert not dist.exact_grid
    with mp.workdps(REF_DPS):
        atoms = product_atoms(binomial_table(6), 1, 3)
        for eps in (0.0, 0.3, 1.0, 2.0):
            assert_in(brute_delta(atoms, eps), dist.delta(eps))
        for delta in (0.05, 0.02):
            assert_in(brute_epsilon(atoms, delta), dist.epsilon(delta))


@pytest.mark.slow
def test_skellam_two_fold_brute_force_and_tight_upper_end() -> None:
    mechanism = AdditiveNoise(Skellam(4), 1)
    with mp.workdps(REF_DPS):
        atoms = product_atoms(skellam_table(4, 60), 1, 2)
        for spacing in (2.0**-8, 2.0**-11):
            dist = pld(mechanism, spacing=spacing, dps=20).self_compose(2)
            for eps in (0.0, 0.5, 1.0):
                exact = brute_delta(atoms, eps)
                got = dist.delta(eps)
                assert_in(exact, got)
                # Connect-the-dots: the split is exact wherever ε is not inside a split cell, so the
                # upper end is far tighter than one grid step (the lower end is about one step).
                assert got.hi - exact <= spacing / 4 * exact + mp.mpf(10) ** -18
            exact_eps = brute_epsilon(atoms, 1e-4)
            assert_in(exact_eps, dist.epsilon(1e-4))


def test_skellam_composition_shrinks_with_the_spacing() -> None:
    mechanism = AdditiveNoise(Skellam(100), 1)
    coarse = pld(mechanism, spacing=2.0**-9).self_compose(8)
    fine = pld(mechanism, spacing=2.0**-12).self_compose(8)
    for eps in (0.5, 1.5):
        a, b = coarse.delta(eps), fine.delta(eps)
        assert overlaps(a, b)
        assert b.hi - b.lo < (a.hi - a.lo) / 4
    a, b = coarse.epsilon(1e-6), fine.epsilon(1e-6)
    assert overlaps(a, b)
    assert b.relative_width < 2e-3


# ---------------------------------------------------------------------------------------------


# Structure: monotonicity, commutativity, associativity
# ---------------------------------------------------------------------------------------------


# One exact-lattice and one rounded-grid composition, shared by the structural tests.
_DLAP_20 = pld(AdditiveNoise(DiscreteLaplace(3.0), 1), dps=20).self_compose(20)
_SKELLAM_5 = pld(AdditiveNoise(Skellam(30), 1), dps=20).self_compose(5)


@given(e1=st.floats(0.0, 6.0), e2=st.floats(0.0, 6.0))
@FAST
def test_delta_is_nonincreasing_in_epsilon(e1: float, e2: float) -> None:
    a, b = min(e1, e2), max(e1, e2)
    for dist in (_DLAP_20, _SKELLAM_5):
        da, db = dist.delta(a), dist.delta(b)
        assert db.lo <= da.hi
        with mp.workdps(40):
            assert db.hi <= da.hi * (1 + mp.mpf(10) ** -20) + mp.mpf(10) ** -30


@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_epsilon_increases_with_the_number_of_compositions(delta: float) -> None:
    base = pld(AdditiveNoise(DiscreteGaussian(3.0), 1), dps=20)
    values = [base.self_compose(k).epsilon(delta) for k in (1, 2, 3, 5, 8)]
    for smaller, larger in itertools.pairwise(values):
        assert smaller.hi < larger.lo


def test_epsilon_inverts_delta() -> None:
    for dist in (_DLAP_20, _SKELLAM_5):
        for delta in (1e-2, 1e-4, 1e-7):
            eps = dist.epsilon(delta)
            assert dist.delta(float(eps.hi)).hi <= delta * (1 + 1e-12)
            if eps.lo > 0.01:
                below = float(eps.lo) - 0.01
                assert dist.delta(below).lo > delta


def test_composition_is_commutative_exactly() -> None:
    a = pld(AdditiveNoise(Skellam(30), 1), spacing=2.0**-10)
    b = pld(AdditiveNoise(DiscreteGaussian(4.0), 1), spacing=2.0**-10)
    assert a.compose(b) == b.compose(a)


def test_composition_is_associative_up_to_rounding() -> None:
    a = pld(AdditiveNoise(DiscreteLaplace(2.0), 1))
    b = pld(AdditiveNoise(DiscreteLaplace(2.0), 1)).self_compose(3)
    c = pld(AdditiveNoise(DiscreteLaplace(2.0), 1)).self_compose(2)
    left, right = a.compose(b).compose(c), a.compose(b.compose(c))
    assert left.grid_points == right.grid_points
    for eps in (0.0, 1.0, 2.5):
        x, y = left.delta(eps), right.delta(eps)
        assert overlaps(x, y)
        assert abs(x.hi - y.hi) <= mp.mpf(10) ** -28
    assert overlaps(left.epsilon(1e-5), right.epsilon(1e-5))
    # Repeated squaring and one-at-a-time composition agree too.
    one = pld(AdditiveNoise(DiscreteLaplace(2.0), 1))
    assert overlaps(one.self_compose(6).delta(1.0), left.delta(1.0))


def test_compose_mechanisms_heterogeneous() -> None:
    dlap = AdditiveNoise(DiscreteLaplace(5.0), 1)
    dg = AdditiveNoise(DiscreteGaussian(3.0), 1)
    same = compose_mechanisms([(dlap, 3), (dlap, 2)], dps=30)
    assert same.exact_grid
    five = pld(dlap).self_compose(5)
    assert same.spacing == five.spacing
    for eps in (0.0, 0.5):
        assert overlaps(same.delta(eps), five.delta(eps))
        assert same.delta(eps).digits() > 25
    mixed = compose_mechanisms([(dlap, 3), (dg, 2)])
    assert not mixed.exact_grid
    # Against the exact lattices composed in another order: no exact joint grid exists, so
    # check both against a fine common grid.
    fine = compose_mechanisms([(dg, 2), (dlap, 3)], spacing=2.0**-13)
    for eps in (0.0, 1.0, 2.0):
        assert overlaps(mixed.delta(eps), fine.delta(eps))


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mechanism",
    [
        AdditiveNoise(Skellam.from_rates(3, 5), 1),
        AdditiveNoise(Geometric(0.5), 1),
        AdditiveNoise(CenteredBinomial(7), 1),
    ],
    ids=repr,
)
def test_unsupported_mechanisms(mechanism: Any) -> None:
    with pytest.raises(UnsupportedError):
        pld(mechanism)


def test_parameter_errors() -> None:
    dlap = AdditiveNoise(DiscreteLaplace(5.0), 1)
    with pytest.raises(ParameterError, match="spacing"):
        pld(dlap, spacing=0.0)
    with pytest.raises(ParameterError, match="count"):
        pld(dlap).self_compose(0)
    with pytest.raises(ParameterError, match="other"):
        pld(dlap).compose(pld(AdditiveNoise(DiscreteLaplace(3.0), 1)))
    with pytest.raises(ParameterTypeError):
        pld(dlap).compose(dlap)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError):
        pld("not a mechanism")
    with pytest.raises(ParameterError):
        compose_mechanisms([])
    with pytest.raises(ParameterError, match="delta"):
        pld(dlap).epsilon(0.0)
    with pytest.raises(ParameterError, match="epsilon"):
        pld(dlap).delta(-1.0)
    with pytest.raises(ParameterError, match="count"):
        gaussian_composition_epsilon(1.0, 1.0, 0, 1e-5)
