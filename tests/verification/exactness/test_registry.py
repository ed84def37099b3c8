"""Tests of :mod:`verification.exactness.registry`: each published closed form against the exact value.

Results are named as in Chowdhury & Zhou 2023 (Lemma 3 = Agarwal, Kairouz & Liu 2021, Theorem 3.5;
Lemma 4 = Kairouz, Liu & Steinke 2021, Proposition 13; Fact 3; Theorems 2 and 4). Every proved bound
must dominate the library's exact value on its quick grid; the paper's Theorem-2 closed forms must be
reported as failing against the Lemma-3 value they were derived from (Theorem 2 prints
``3ε²/(2s√n)`` where Lemma 3 gives ``3ε/(2s√n)``), with the counterexample documented in
:mod:`accounting.bounds`. Reference numbers come from :mod:`tests.verification.exactness.formulas`.
"""

from __future__ import annotations

import pytest

from verification.errors import ParameterError
from verification.exactness import BOUNDS, check_bound

from .formulas import headline_by_hand, lemma3_by_hand, skellam_d2_by_hand

PROVED = [name for name, spec in BOUNDS.items() if spec.proved]
SLIPS = [name for name, spec in BOUNDS.items() if not spec.proved]


def test_registry_covers_the_published_closed_forms() -> None:
    """Skellam (Lemma 3), discrete Gaussian (ρ and δ), the sum of discrete Gaussians, Fact 3, Theorem 2."""
    assert set(BOUNDS) >= {
        "skellam_rdp_akl",
        "discrete_gaussian_rdp_cks",
        "discrete_gaussian_delta_cks",
        "sum_discrete_gaussians_rdp_kls",
        "discrete_laplace_pure_epsilon",
        "skellam_rdp_theorem2_headline",
        "theorem2_headline_vs_lemma3",
    }
    for spec in BOUNDS.values():
        assert spec.citation
        assert spec.reference
        assert spec.description
        assert spec.quick_grid
        assert spec.grid
        assert spec.space
        for grid in (spec.grid, spec.quick_grid):
            assert all(tuple(k for k, _ in point) == spec.parameters for point in grid)
        assert [d.name for d in spec.space] == list(spec.parameters)


@pytest.mark.parametrize("name", PROVED)
def test_proved_bounds_dominate_on_the_quick_grid(name: str) -> None:
    report = check_bound(name, quick=True)
    assert report.dominates, report.summary()
    assert report.as_expected
    assert not report.counterexamples
    assert report.points == len(BOUNDS[name].quick_grid)
    # A bound is at least the exact value wherever the ratio is known.
    assert report.worst_ratio >= 1 - 1e-12


@pytest.mark.parametrize("name", SLIPS)
def test_theorem2_closed_forms_fail_against_lemma3(name: str) -> None:
    """Chowdhury & Zhou 2023, Theorem 2 (per batch, Appendix E.2) understates Lemma 3 when g < s."""
    report = check_bound(name, quick=True)
    assert not report.dominates
    assert report.as_expected
    assert report.counterexamples
    assert all(c.bound < c.exact_lo for c in report.counterexamples)
    assert report.worst_ratio < 1
    assert "counterexample:" in report.summary()


# ---------------------------------------------------------------------------------------------
# The Theorem-2 counterexample, by hand
# ---------------------------------------------------------------------------------------------

ALPHA, EPS, SCALE, USERS = 21, 0.3535, 2, 2  # g = ceil(2 · 0.3535 · √2) = ceil(0.99985) = 1


@pytest.mark.slow
def test_headline_counterexample_against_lemma3() -> None:
    """At α = 21, ε = 0.3535, s = 2, n = 2 the headline is 6% below Lemma 3 (bounds docstring)."""
    point = {"alpha": ALPHA, "epsilon": EPS, "scaling": SCALE, "users": USERS}
    report = check_bound("theorem2_headline_vs_lemma3", grid=[point])
    (bad,) = report.counterexamples
    lemma3, headline = lemma3_by_hand(ALPHA, EPS, 1), headline_by_hand(ALPHA, EPS, SCALE)
    assert bad.bound == pytest.approx(headline, rel=1e-14)
    assert bad.exact_hi == pytest.approx(lemma3, rel=1e-14)
    assert bad.ratio == pytest.approx(headline / lemma3, rel=1e-12)
    assert bad.ratio == pytest.approx(0.93998, abs=1e-5)
    # It is the worst point of the (thinned) default grid as well.
    full = check_bound("theorem2_headline_vs_lemma3")
    assert full.worst is not None
    assert full.worst.as_dict == point
    assert full.worst_ratio == pytest.approx(0.93998, abs=1e-5)


def test_headline_dominates_the_exact_skellam_rdp_there() -> None:
    """The exact per-batch RDP (0.846) is far below both closed forms: Lemma 3 is loose here."""
    point = {"alpha": ALPHA, "epsilon": EPS, "scaling": SCALE, "users": USERS}
    report = check_bound("skellam_rdp_theorem2_headline", grid=[point])
    assert report.dominates
    assert report.worst is not None
    assert report.worst.exact_hi == pytest.approx(0.84644, abs=1e-5)


def test_paper_per_batch_counterexample() -> None:
    """α = 10, ε = 1/2, s = 1, n = 4 (g = 1, σ² = 4): printed 1.4375 against Lemma 3's 1.625."""
    point = {"alpha": 10, "epsilon": 0.5, "scaling": 1, "users": 4}
    (bad,) = check_bound("theorem2_paper_vs_lemma3", grid=[point]).counterexamples
    assert bad.bound == 1.4375
    assert bad.exact_hi == pytest.approx(1.625, rel=1e-15)


# ---------------------------------------------------------------------------------------------
# Exact values against independent computations
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_akl_ratio_against_a_bessel_sum() -> None:
    point = {"alpha": 2, "variance": 10.0, "sensitivity": 1}
    report = check_bound("skellam_rdp_akl", grid=[point])
    exact = skellam_d2_by_hand(10.0)
    assert report.worst is not None
    assert report.worst.exact_lo <= exact * (1 + 1e-14)
    assert exact * (1 - 1e-14) <= report.worst.exact_hi
    # AKL: 2/20 + min((3 + 6)/400, 3/20) = 0.1225.
    assert report.worst.bound == pytest.approx(0.1225, rel=1e-15)
    assert report.worst_ratio == pytest.approx(0.1225 / exact, rel=1e-12)


def test_cks_rho_is_attained_at_integer_alpha_delta() -> None:
    """D_α(N_Z(Δ) || N_Z(0)) = αΔ²/(2σ²) exactly when αΔ is an integer (theta shift by a lattice point)."""
    report = check_bound("discrete_gaussian_rdp_cks", grid=[{"alpha": 3, "sigma": 2.0, "sensitivity": 1}])
    assert report.dominates
    assert len(report.undecided) == 1
    assert report.undecided[0].exact_lo <= 3 / 8 <= report.undecided[0].exact_hi


def test_point_parameters_are_validated_by_the_closed_forms() -> None:
    """A non-integer order for the Skellam bound (proved only at integer α) names ``alpha``."""
    with pytest.raises(ParameterError) as info:
        check_bound("skellam_rdp_akl", grid=[{"alpha": 2.5, "variance": 10.0, "sensitivity": 1}])
    assert info.value.name == "alpha"
