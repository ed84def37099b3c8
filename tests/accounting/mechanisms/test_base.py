"""Tests of :mod:`accounting.mechanisms.base`: what every mechanism answers, and how it refuses.

Reported floats are never below the certified upper end; every constructor and every answer names
the parameter it refuses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from mpmath import mp

from accounting import (
    AdditiveNoise,
    DiscreteGaussian,
    DiscreteLaplace,
    DistributedSum,
    Gaussian,
    Laplace,
    Mechanism,
    ParameterError,
    ParameterTypeError,
    Skellam,
)

# ---------------------------------------------------------------------------------------------
# Reported floats
# ---------------------------------------------------------------------------------------------


def test_float_of_an_enclosure_is_never_below_its_upper_end() -> None:
    """The package docstring: ``float(result)`` is the upper end rounded up, never optimistic."""
    eps = AdditiveNoise(DiscreteLaplace(1.0)).epsilon(1e-3)
    assert mp.mpf(float(eps)) >= eps.hi  # mp.mpf of a float is exact: an exact comparison


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------

nan = math.nan

BAD_MECHANISMS: list[tuple[str, Any, str, type[Exception]]] = [
    ("lattice-frac-sensitivity", lambda: AdditiveNoise(Skellam(1), 1.5), "sensitivity", ParameterError),
    ("lattice-zero-sensitivity", lambda: AdditiveNoise(Skellam(1), 0), "sensitivity", ParameterError),
    ("lattice-negative-sensitivity", lambda: AdditiveNoise(Skellam(1), -2), "sensitivity", ParameterError),
    ("lattice-nan-sensitivity", lambda: AdditiveNoise(Skellam(1), nan), "sensitivity", ParameterError),
    ("lattice-bool-sensitivity", lambda: AdditiveNoise(Skellam(1), True), "sensitivity", ParameterTypeError),
    ("continuous-zero-sensitivity", lambda: AdditiveNoise(Laplace(1), 0), "sensitivity", ParameterError),
    ("continuous-nan-sensitivity", lambda: AdditiveNoise(Gaussian(1), nan), "sensitivity", ParameterError),
    ("not-a-noise", lambda: AdditiveNoise("gaussian"), "noise", ParameterError),  # type: ignore[arg-type]
    ("zero-users", lambda: DistributedSum(Skellam(1), 0), "users", ParameterError),
    ("frac-users", lambda: DistributedSum(Skellam(1), 2.5), "users", ParameterError),  # type: ignore[arg-type]
    (
        "distributed-sensitivity",
        lambda: DistributedSum(Skellam(1), 2, 1.5),  # type: ignore[arg-type]
        "sensitivity",
        ParameterError,
    ),
]


@pytest.mark.parametrize(
    ("build", "name", "error"), [c[1:] for c in BAD_MECHANISMS], ids=[c[0] for c in BAD_MECHANISMS]
)
def test_bad_mechanism_parameters_raise(build: Any, name: str, error: type[Exception]) -> None:
    """Lattice noise needs an integer sensitivity >= 1 (1.5 is refused); users >= 1."""
    with pytest.raises(error) as info:
        build()
    assert getattr(info.value, "name", None) == name
    assert name in str(info.value)


MECHANISMS = [
    AdditiveNoise(Skellam(4)),
    AdditiveNoise(Gaussian(1.0)),
    AdditiveNoise(Laplace(1.0)),
    DistributedSum(DiscreteGaussian(1.0), 3),
]


@pytest.mark.parametrize("mech", MECHANISMS, ids=repr)
@pytest.mark.parametrize("delta", [0, 1, -1, nan, 2.0])
def test_delta_outside_the_open_unit_interval_raises(mech: Mechanism, delta: float) -> None:
    """δ must lie in (0, 1), for lattice and continuous noise alike."""
    with pytest.raises(ParameterError) as info:
        mech.epsilon(delta)
    assert info.value.name == "delta"


@pytest.mark.parametrize("mech", MECHANISMS, ids=repr)
@pytest.mark.parametrize("alpha", [1, 0.5, -3, nan])
def test_order_at_most_one_raises(mech: Mechanism, alpha: float) -> None:
    """Rényi orders α <= 1 (and NaN) are refused."""
    with pytest.raises(ParameterError) as info:
        mech.rdp(alpha)
    assert info.value.name == "alpha"


@pytest.mark.parametrize("mech", MECHANISMS, ids=repr)
def test_other_bad_arguments_raise(mech: Mechanism) -> None:
    """Negative or NaN ε, rtol = 0 and an out-of-range precision are refused."""
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: mech.delta(-0.5), "epsilon"),
        (lambda: mech.delta(nan), "epsilon"),
        (lambda: mech.zcdp_rho(rtol=0), "rtol"),
        (lambda: mech.epsilon(1e-5, dps=3), "dps"),
    ]
    for call, name in cases:
        with pytest.raises(ParameterError) as info:
            call()
        assert info.value.name == name
