"""Published closed forms as routes (:mod:`accounting.accountant.published`): each answers what its
paper's bound gives by hand, and refuses what it does not cover."""

from __future__ import annotations

from fractions import Fraction

import pytest

from accounting import (
    AdditiveNoise,
    DiscreteGaussian,
    DistributedSum,
    Gaussian,
    ParameterError,
    Skellam,
    UnsupportedError,
    bounds,
)
from accounting.accountant import PUBLISHED, Accountant
from accounting.composition import sum_up
from accounting.conversion import optimize_rdp_order


def test_published_skellam_route_is_lemma3_by_hand() -> None:
    """route="published:skellam-akl" is the AKL bound at integer orders converted by Lemma 10."""
    share = Skellam(Fraction(1000, 16))
    mech = DistributedSum(share, users=16, sensitivity=3)
    answer = Accountant().compose(mech).epsilon(1e-6, route="published:skellam-akl")
    by_hand, _ = optimize_rdp_order(
        lambda a: bounds.skellam_rdp_akl(int(a), 1000.0, 3), 1e-6, alpha_min=2, integer=True
    )
    assert float(answer) == by_hand
    assert answer.hi >= Accountant().compose(mech).epsilon(1e-6, route="pld").lo
    assert answer.route == "published:skellam-akl"


def test_published_kls_route_is_lemma4_by_hand() -> None:
    from accounting.conversion import zcdp_to_dp_cks

    mech = DistributedSum(DiscreteGaussian(2.0), users=8, sensitivity=2)
    answer = Accountant().compose(mech, 5).epsilon(1e-6, route="published:ddg-kls")
    rho = bounds.sum_discrete_gaussians_rho_kls(2.0, 8, 2)
    assert float(answer) == zcdp_to_dp_cks(sum_up([(5, rho)]), 1e-6)


def test_published_route_refuses_what_it_does_not_cover() -> None:
    acc = Accountant().compose(AdditiveNoise(Gaussian(1.0)))
    with pytest.raises(UnsupportedError, match="skellam-akl"):
        acc.epsilon(1e-6, route="published:skellam-akl")
    with pytest.raises(ParameterError) as err:
        acc.epsilon(1e-6, route="published:nonesuch")
    assert err.value.name == "route"
    assert set(PUBLISHED) >= {"skellam-akl", "ddg-kls", "discrete-gaussian-cks", "gaussian", "laplace"}
