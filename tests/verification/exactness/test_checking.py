"""Tests of :mod:`verification.exactness.checking`: dominates / violates / undecided, grids, bad input."""

from __future__ import annotations

import pytest

from verification.errors import ParameterError, ParameterTypeError
from verification.exactness import BOUNDS, check_all, check_bound


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


def test_check_all_quick() -> None:
    reports = check_all(quick=True)
    assert [r.name for r in reports] == list(BOUNDS)
    assert all(r.as_expected for r in reports), "\n".join(r.summary() for r in reports if not r.as_expected)
    subset = check_all(quick=True, names=["discrete_laplace_pure_epsilon"])
    assert len(subset) == 1


def test_bad_parameters_name_the_parameter() -> None:
    cases: list[tuple[str, type[Exception], object]] = [
        ("name", ParameterError, lambda: check_bound("no_such_bound")),
        ("grid", ParameterError, lambda: check_bound("skellam_rdp_akl", grid=[{"alpha": 2}])),
        ("grid", ParameterError, lambda: check_bound("skellam_rdp_akl", grid=[])),
        ("grid", ParameterTypeError, lambda: check_bound("skellam_rdp_akl", grid=[(2, 10.0, 1)])),  # type: ignore[list-item]
        ("dps", ParameterError, lambda: check_bound("skellam_rdp_akl", dps=2, quick=True)),
        ("name", ParameterError, lambda: check_all(names=["nope"])),
    ]
    for name, error, call in cases:
        assert callable(call)
        with pytest.raises(error) as info:
            call()
        assert info.value.name == name  # type: ignore[attr-defined]
