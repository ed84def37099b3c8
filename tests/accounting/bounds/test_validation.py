"""Every function of :mod:`accounting.bounds` names the parameter it refuses, and answers a number
(never NaN) at the extremes of its domain."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import settings

from accounting import bounds
from accounting.errors import ParameterError, ParameterTypeError

FAST = settings(max_examples=25, deadline=None)


# ---------------------------------------------------------------------------------------------
# Validation: every bad input raises an error naming the parameter
# ---------------------------------------------------------------------------------------------

BAD_INPUTS: list[tuple[Callable[..., object], dict[str, object], str, type[Exception]]] = [
    (bounds.discrete_laplace_pure_epsilon, {"scale": 0.0}, "scale", ParameterError),
    (bounds.discrete_laplace_pure_epsilon, {"scale": 1.0, "sensitivity": 1.5}, "sensitivity", ParameterError),
    (bounds.discrete_laplace_pure_epsilon, {"scale": 1.0, "sensitivity": 0}, "sensitivity", ParameterError),
    (bounds.laplace_pure_epsilon, {"scale": math.nan}, "scale", ParameterError),
    (bounds.laplace_pure_epsilon, {"scale": 1.0, "sensitivity": -1.0}, "sensitivity", ParameterError),
    (bounds.laplace_delta, {"scale": 1.0, "epsilon": -0.1}, "epsilon", ParameterError),
    (bounds.laplace_delta, {"scale": math.inf, "epsilon": 0.1}, "scale", ParameterError),
    (bounds.laplace_rdp, {"alpha": 1.0, "scale": 1.0}, "alpha", ParameterError),
    (bounds.laplace_rdp, {"alpha": math.nan, "scale": 1.0}, "alpha", ParameterError),
    (bounds.laplace_rdp, {"alpha": "2", "scale": 1.0}, "alpha", ParameterTypeError),
    (bounds.gaussian_rdp, {"alpha": 0.5, "sigma": 1.0}, "alpha", ParameterError),
    (bounds.gaussian_rdp, {"alpha": 2, "sigma": -1.0}, "sigma", ParameterError),
    (bounds.gaussian_sigma_classic, {"epsilon": 1.0, "delta": 1e-5}, "epsilon", ParameterError),
    (bounds.gaussian_sigma_classic, {"epsilon": 0.5, "delta": 1.0}, "delta", ParameterError),
    (bounds.gaussian_sigma_classic, {"epsilon": 0.5, "delta": 0.0}, "delta", ParameterError),
    (bounds.gaussian_delta_analytic, {"sigma": 0.0, "epsilon": 1.0}, "sigma", ParameterError),
    (bounds.gaussian_delta_analytic, {"sigma": 1.0, "epsilon": math.inf}, "epsilon", ParameterError),
    (bounds.gaussian_epsilon_analytic, {"sigma": 1.0, "delta": 1.5}, "delta", ParameterError),
    (bounds.gaussian_epsilon_analytic, {"sigma": 1.0, "delta": math.nan}, "delta", ParameterError),
    (bounds.gaussian_sigma_analytic, {"epsilon": -1.0, "delta": 0.1}, "epsilon", ParameterError),
    (
        bounds.gaussian_sigma_analytic,
        {"epsilon": 1.0, "delta": 0.1, "sensitivity": 0},
        "sensitivity",
        ParameterError,
    ),
    (bounds.discrete_gaussian_rho_cks, {"sigma": 1.0, "sensitivity": 0.5}, "sensitivity", ParameterError),
    (
        bounds.discrete_gaussian_rho_cks,
        {"sigma": 1.0, "sensitivity": True},
        "sensitivity",
        ParameterTypeError,
    ),
    (
        bounds.discrete_gaussian_delta_cks,
        {"sigma": 1.0, "epsilon": 1.0, "sensitivity": 2.5},
        "sensitivity",
        ParameterError,
    ),
    (bounds.discrete_gaussian_delta_cks, {"sigma": math.nan, "epsilon": 1.0}, "sigma", ParameterError),
    (bounds.discrete_gaussian_epsilon_zcdp, {"sigma": 1.0, "delta": 0.0}, "delta", ParameterError),
    (bounds.skellam_rdp_akl, {"alpha": 2.5, "variance": 1.0}, "alpha", ParameterError),
    (bounds.skellam_rdp_akl, {"alpha": math.inf, "variance": 1.0}, "alpha", ParameterError),
    (bounds.skellam_rdp_akl, {"alpha": 1, "variance": 1.0}, "alpha", ParameterError),
    (bounds.skellam_rdp_akl, {"alpha": 2, "variance": 0.0}, "variance", ParameterError),
    (
        bounds.skellam_rdp_akl,
        {"alpha": 2, "variance": 1.0, "sensitivity": 1.5},
        "sensitivity",
        ParameterError,
    ),
    (bounds.sum_discrete_gaussians_epsilon_kls, {"sigma": 0.4, "count": 2}, "sigma", ParameterError),
    (bounds.sum_discrete_gaussians_epsilon_kls, {"sigma": 1.0, "count": 0}, "count", ParameterError),
    (
        bounds.sum_discrete_gaussians_rho_kls,
        {"sigma": 1.0, "count": 2, "sensitivity": 0.5},
        "sensitivity",
        ParameterError,
    ),
]


@pytest.mark.parametrize(
    ("func", "kwargs", "name", "error"), BAD_INPUTS, ids=[f"{f.__name__}-{n}" for f, _, n, _ in BAD_INPUTS]
)
def test_bad_input_raises_naming_the_parameter(
    func: Callable[..., object], kwargs: dict[str, object], name: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as info:
        func(**kwargs)
    assert getattr(info.value, "name", None) == name
    assert name in str(info.value)


def test_skellam_non_integer_order_message_explains_why() -> None:
    with pytest.raises(ParameterError, match="integer orders"):
        bounds.skellam_rdp_akl(2.5, 1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "call",
    [
        lambda: bounds.laplace_rdp(1 + 1e-15, 1e-3, 1e3),
        lambda: bounds.laplace_rdp(1e300, 1e-3, 1e3),
        lambda: bounds.gaussian_delta_analytic(1e-300, 1e300),
        lambda: bounds.gaussian_delta_analytic(1e300, 0.0),
        lambda: bounds.discrete_gaussian_delta_cks(1e-3, 1e6, 10**6),
        lambda: bounds.skellam_rdp_akl(10**12, 1e-300),
        lambda: bounds.sum_discrete_gaussians_epsilon_kls(1e6, 10**15),
    ],
)
def test_extreme_inputs_give_numbers_not_nan(call: Callable[[], float]) -> None:
    value = call()
    assert not math.isnan(value)
    assert value >= 0
