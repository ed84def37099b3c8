"""Tests of :mod:`verification.exactness`: published closed forms against exact values.

Names of results are as in ``papers/distributed-dp-mab.md`` ("the spec"). Every proved bound
must dominate the library's exact value on its quick grid; the paper's Theorem-2 closed forms
must be reported as failing against the Lemma-3 value they were derived from (spec §3.2
[RECON], §10 item 1), with the counterexample documented in :mod:`accounting.bounds`. Reference
numbers are computed in this file from the formulas (mpmath, Bessel functions), not taken from
the code under test.
"""

from __future__ import annotations

import math

import pytest
from mpmath import mp

from verification.errors import ParameterError, ParameterTypeError
from verification.exactness import BOUNDS, check_all, check_bound, search_counterexamples

PROVED = [name for name, spec in BOUNDS.items() if spec.proved]
SLIPS = [name for name, spec in BOUNDS.items() if not spec.proved]


def test_registry_covers_the_published_closed_forms() -> None:
    """Issue 4 §2: Skellam (Lemma 3), discrete Gaussian (ρ and δ), KLS, Fact 3, Theorem 2."""
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
    """Spec §3.2: the paper's Theorem-2 forms understate Lemma 3 when g = ceil(sε√n) < s."""
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


def lemma3_by_hand(alpha: int, eps: float, g: int) -> float:
    """Lemma 3 (AKL 2021 Thm 3.5) with Δ = g and σ² = g²/ε², in mpmath."""
    with mp.workdps(40):
        d, var = mp.mpf(g), mp.mpf(g) ** 2 / mp.mpf(eps) ** 2
        extra = min(((2 * alpha - 1) * d**2 + 6 * d) / (4 * var**2), 3 * d / (2 * var))
        return float(alpha * d**2 / (2 * var) + extra)


def headline_by_hand(alpha: int, eps: float, s: float) -> float:
    """Theorem 2's headline αε²/2 + min{(2α-1)ε²/(4s²) + 3ε/(2s³), 3ε²/(2s)}, in mpmath."""
    with mp.workdps(40):
        e, sm = mp.mpf(eps), mp.mpf(s)
        return float(
            alpha * e**2 / 2
            + min((2 * alpha - 1) * e**2 / (4 * sm**2) + 3 * e / (2 * sm**3), 3 * e**2 / (2 * sm))
        )


@pytest.mark.slow
def test_headline_counterexample_against_lemma3() -> None:
    """At α = 21, ε = 0.3535, s = 2, n = 2 the headline is 6% below Lemma 3 (bounds docstring)."""
    point = {"alpha": ALPHA, "epsilon": EPS, "scale": SCALE, "users": USERS}
    report = check_bound("theorem2_headline_vs_lemma3", grid=[point])
    (bad,) = report.counterexamples
    lemma3, headline = lemma3_by_hand(ALPHA, EPS, 1), headline_by_hand(ALPHA, EPS, SCALE)
    assert bad.bound == pytest.approx(headline, rel=1e-14)
    assert bad.exact_hi == pytest.approx(lemma3, rel=1e-14)
    assert bad.ratio == pytest.approx(headline / lemma3, rel=1e-12)
    assert bad.ratio == pytest.approx(0.93998, abs=1e-5)
    # It is the worst point of the (thinned) spec grid as well.
    full = check_bound("theorem2_headline_vs_lemma3")
    assert full.worst is not None
    assert full.worst.as_dict == point
    assert full.worst_ratio == pytest.approx(0.93998, abs=1e-5)


def test_headline_dominates_the_exact_skellam_rdp_there() -> None:
    """The exact per-batch RDP (0.846) is far below both closed forms: Lemma 3 is loose here."""
    point = {"alpha": ALPHA, "epsilon": EPS, "scale": SCALE, "users": USERS}
    report = check_bound("skellam_rdp_theorem2_headline", grid=[point])
    assert report.dominates
    assert report.worst is not None
    assert report.worst.exact_hi == pytest.approx(0.84644, abs=1e-5)


def test_paper_per_batch_counterexample() -> None:
    """α = 10, ε = 1/2, s = 1, n = 4 (g = 1, σ² = 4): printed 1.4375 against Lemma 3's 1.625."""
    point = {"alpha": 10, "epsilon": 0.5, "scale": 1, "users": 4}
    (bad,) = check_bound("theorem2_paper_vs_lemma3", grid=[point]).counterexamples
    assert bad.bound == 1.4375
    assert bad.exact_hi == pytest.approx(1.625, rel=1e-15)


# ---------------------------------------------------------------------------------------------
# Exact values against independent computations
# ---------------------------------------------------------------------------------------------


def skellam_d2_by_hand(variance: float) -> float:
    """``D_2(Sk + 1 || Sk) = ln Σ_k P(k-1)²/P(k)`` with ``P(k) = e^{-v} I_k(v)`` (spec §2.4)."""
    with mp.workdps(40):
        v = mp.mpf(variance)
        total = mp.fsum(
            (mp.exp(-v) * mp.besseli(k - 1, v)) ** 2 / (mp.exp(-v) * mp.besseli(k, v)) for k in range(-45, 47)
        )
        return float(mp.log(total))


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


def test_equal_values_are_undecided_not_counterexamples() -> None:
    """Fact 3 is exact: ε = Δ/b. At b = 2 the float bound equals it, so no precision decides."""
    report = check_bound("discrete_laplace_pure_epsilon", grid=[{"scale": 2.0, "sensitivity": 1}])
    assert report.dominates
    (tie,) = report.undecided
    assert tie.status == "undecided"
    assert tie.bound == 0.5
    assert tie.ratio == pytest.approx(1.0)
    # At b = 3 the float 1/3 is rounded up, strictly above the exact value.
    strict = check_bound("discrete_laplace_pure_epsilon", grid=[{"scale": 3.0, "sensitivity": 1}])
    assert not strict.undecided
    assert strict.worst is not None
    assert strict.worst.status == "dominates"


def test_cks_rho_is_attained_at_integer_alpha_delta() -> None:
    """D_α(N_Z(Δ) || N_Z(0)) = αΔ²/(2σ²) exactly when αΔ is an integer (theta shift by a lattice point)."""
    report = check_bound("discrete_gaussian_rdp_cks", grid=[{"alpha": 3, "sigma": 2.0, "sensitivity": 1}])
    assert report.dominates
    assert len(report.undecided) == 1
    assert report.undecided[0].exact_lo <= 3 / 8 <= report.undecided[0].exact_hi


def test_check_all_quick() -> None:
    reports = check_all(quick=True)
    assert [r.name for r in reports] == list(BOUNDS)
    assert all(r.as_expected for r in reports), "\n".join(r.summary() for r in reports if not r.as_expected)
    subset = check_all(quick=True, names=["discrete_laplace_pure_epsilon"])
    assert len(subset) == 1


# ---------------------------------------------------------------------------------------------
# Hypothesis search
# ---------------------------------------------------------------------------------------------


def test_search_finds_the_theorem2_discrepancy() -> None:
    report = search_counterexamples("theorem2_headline_vs_lemma3", max_examples=60, seed=1)
    assert not report.dominates
    assert report.counterexamples
    assert report.worst_ratio < 1
    for c in report.counterexamples:
        d = c.as_dict
        g = math.ceil(d["scale"] * d["epsilon"] * math.sqrt(d["users"]) - 1e-12)
        assert c.bound < lemma3_by_hand(int(d["alpha"]), d["epsilon"], max(g, 1)) * (1 - 1e-12)
    assert "alpha in 2..1000" in report.space
    assert "counterexamples" in report.summary()


def test_search_is_deterministic() -> None:
    first = search_counterexamples("theorem2_paper_vs_lemma3", max_examples=20, seed=3)
    second = search_counterexamples("theorem2_paper_vs_lemma3", max_examples=20, seed=3)
    assert first == second


@pytest.mark.slow
def test_search_finds_nothing_for_a_proved_bound() -> None:
    report = search_counterexamples("skellam_rdp_akl", max_examples=15, seed=0)
    assert report.dominates
    assert report.examples >= 1
    assert report.worst_ratio >= 1


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


def test_bad_parameters_name_the_parameter() -> None:
    cases: list[tuple[str, type[Exception], object]] = [
        ("name", ParameterError, lambda: check_bound("no_such_bound")),
        ("grid", ParameterError, lambda: check_bound("skellam_rdp_akl", grid=[{"alpha": 2}])),
        ("grid", ParameterError, lambda: check_bound("skellam_rdp_akl", grid=[])),
        ("grid", ParameterTypeError, lambda: check_bound("skellam_rdp_akl", grid=[(2, 10.0, 1)])),  # type: ignore[list-item]
        ("dps", ParameterError, lambda: check_bound("skellam_rdp_akl", dps=2, quick=True)),
        ("name", ParameterError, lambda: check_all(names=["nope"])),
        ("max_examples", ParameterError, lambda: search_counterexamples("skellam_rdp_akl", 0)),
        ("seed", ParameterError, lambda: search_counterexamples("skellam_rdp_akl", 5, seed=-1)),
    ]
    for name, error, call in cases:
        assert callable(call)
        with pytest.raises(error) as info:
            call()
        assert info.value.name == name  # type: ignore[attr-defined]


def test_point_parameters_are_validated_by_the_closed_forms() -> None:
    """A non-integer order for the Skellam bound (proved only at integer α) names ``alpha``."""
    with pytest.raises(ParameterError) as info:
        check_bound("skellam_rdp_akl", grid=[{"alpha": 2.5, "variance": 10.0, "sensitivity": 1}])
    assert info.value.name == "alpha"
