"""Tests of :mod:`accounting.pld.coarsening`: long compositions keep a bounded grid.

A side forced to coarsen (a small ``MAX_GRID_POINTS``) still encloses the exact binomial and
closed-form values; grids of different spacings meet on the coarser one.
"""

from __future__ import annotations

import pytest
from mpmath import mp

from accounting import (
    AdditiveNoise,
    DiscreteLaplace,
    Gaussian,
    ParameterError,
    Skellam,
)
from accounting.pld import (
    PrivacyLossDistribution,
    compose_events,
    gaussian_composition_epsilon,
)
from tests.accounting.pld.references import (
    REF_DPS,
    assert_in,
    binomial_atoms,
    brute_delta,
    brute_epsilon,
    overlaps,
    pld,
)

# Coarsening: long compositions keep a bounded grid (issue 15 §2.1)
# ---------------------------------------------------------------------------------------------


def test_coarsened_discrete_laplace_encloses_the_binomial(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forced to coarsen from 2^-12, 300 discrete Laplace releases still enclose the exact
    binomial ε (60 digits) and δ. The binomial lattice (steps of 2/b, 27 grid steps) is a comb
    that no coarsening smooths: it is postponed to 4 MAX_GRID_POINTS, then done regardless, and
    the width is first order there (rounding every loss down would cost 300 h = 0.07)."""
    import accounting.pld.coarsening as module

    monkeypatch.setattr(module, "MAX_GRID_POINTS", 2**8)
    dist = pld(AdditiveNoise(DiscreteLaplace(300.0), 1), spacing=2.0**-12, dps=20).self_compose(300)
    assert dist.grid_points <= 4 * 2**8
    assert float(dist.spacing.hi) >= 2.0**-10  # coarsened twice
    atoms = binomial_atoms(300.0, 300)
    with mp.workdps(REF_DPS):
        exact = brute_epsilon(atoms, 1e-6)
        exact_delta = brute_delta(atoms, 0.5)
    got = dist.epsilon(1e-6)
    assert_in(exact, got)
    assert got.relative_width < 3e-2
    assert_in(exact_delta, dist.delta(0.5))


def test_coarsened_gaussian_cells_enclose_the_closed_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """Continuous Gaussian cells composed 10^4 times on a grid held to 2^12 points: Balle–Wang."""
    import accounting.pld.coarsening as module

    monkeypatch.setattr(module, "MAX_GRID_POINTS", 2**12)
    event = AdditiveNoise(Gaussian(40.0), 1.0)
    dist = PrivacyLossDistribution.from_mechanism(event, spacing=2.0**-12, dps=20).self_compose(10**4)
    assert dist.grid_points <= 2**12
    assert float(dist.spacing.hi) >= 2.0**-6
    exact = gaussian_composition_epsilon(40.0, 1.0, 10**4, 1e-5)
    got = dist.epsilon(1e-5)
    assert overlaps(got, exact), (got, exact)
    assert got.relative_width < 3e-4  # uncoarsened (2 s, 2e5 points): 3.6e-5


def test_heterogeneous_grids_meet_on_the_coarser_spacing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A coarsened composition composes with an uncoarsened one (spacings a power of two apart):
    the discrete Laplace binomial again, split 200 + 3."""
    import accounting.pld.coarsening as module

    monkeypatch.setattr(module, "MAX_GRID_POINTS", 2**8)
    one = pld(AdditiveNoise(DiscreteLaplace(300.0), 1), spacing=2.0**-12, dps=20)
    many, few = one.self_compose(200), one.self_compose(3)
    assert many.spacing != few.spacing
    both = many.compose(few)
    with mp.workdps(REF_DPS):
        exact = brute_epsilon(binomial_atoms(300.0, 203), 1e-6)
    assert_in(exact, both.epsilon(1e-6))
    with pytest.raises(ParameterError, match="power of two"):
        few.compose(pld(AdditiveNoise(DiscreteLaplace(300.0), 1), spacing=3 * 2.0**-12, dps=20))


@pytest.mark.slow
def test_long_skellam_composition_stays_on_a_bounded_grid() -> None:
    """10^4 Skellam(100) releases (10^6 is the benchmark): uncoarsened the grid would hold about
    1.6·10^6 points per side; coarsened it holds at most MAX_GRID_POINTS, the enclosure stays
    within 2e-5 of ε, and the RDP route (an independent certified upper bound) lies above it."""
    from accounting import Accountant
    from accounting.pld import MAX_GRID_POINTS

    event = AdditiveNoise(Skellam(100), 1)
    dist = compose_events([(event, 10**4)], "replace-one").directions["replace-one"]
    assert dist.grid_points <= MAX_GRID_POINTS
    got = dist.epsilon(1e-5)
    assert got.relative_width < 2e-5
    rdp = Accountant().compose(event, 10**4).epsilon(1e-5, route="rdp")
    assert got.hi < rdp.hi < 1.1 * got.hi


# ---------------------------------------------------------------------------------------------
