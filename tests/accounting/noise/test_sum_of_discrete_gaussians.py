"""Sums of discrete Gaussians (:mod:`accounting.noise.sum_of_discrete_gaussians`): the a-priori zCDP
bound of Kairouz, Liu & Steinke 2021, Proposition 13."""

from __future__ import annotations

import pytest
from mpmath import mp

from accounting import DiscreteGaussian, SumOfDiscreteGaussians
from accounting.bounds import sum_discrete_gaussians_rho_kls


@pytest.mark.parametrize(
    ("sigma", "count", "shift"), [(0.5, 2, 1), (2.0, 10, 3), (1.5, 4, 1), (7.3, 100, 20)]
)
def test_rho_tail_is_the_kls_bound_where_it_applies(sigma: float, count: int, shift: int) -> None:
    """For σ >= 1/2, rho_tail is the smaller of one summand's CKS ρ and KLS Prop. 13 (the value of
    :func:`accounting.bounds.sum_discrete_gaussians_rho_kls`)."""
    noise = SumOfDiscreteGaussians(sigma, count)
    single = DiscreteGaussian(sigma).rho_tail(shift, 2.0)
    kls = mp.mpf(sum_discrete_gaussians_rho_kls(sigma, count, shift))
    assert noise.rho_tail(shift, 2.0) == min(single, kls)
    assert noise.rho_tail(0, 2.0) == 0


def test_below_one_half_only_the_single_summand_bound_applies() -> None:
    noise = SumOfDiscreteGaussians(0.4, 3)
    assert noise.rho_tail(2, 3.0) == DiscreteGaussian(0.4).rho_tail(2, 3.0)
