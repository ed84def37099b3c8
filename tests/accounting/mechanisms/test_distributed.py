"""Tests of :mod:`accounting.mechanisms.distributed`: ``DistributedSum``, the total noise of ``n`` shares.

Each sum of shares is checked against the mechanism of its exact total noise (Pólya differences to
the discrete Laplace, Goryczka & Xiong 2015; Skellam; discrete Gaussians; centered binomials) and
against brute-force sums (``test_divergence.py``).
"""

from __future__ import annotations

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
    Gaussian,
    Geometric,
    Laplace,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
    UnsupportedError,
)
from tests.accounting.mechanisms.support import DPS, FAST, answers, overlap
from tests.accounting.noise.reference import REF_DPS, as_mpf, assert_encloses

# ---------------------------------------------------------------------------------------------
# Distributed sums: the total noise of n shares
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@given(
    users=st.integers(1, 64),
    beta=st.one_of(st.floats(0.2, 0.95), st.integers(2, 19).map(lambda k: Fraction(k, 20))),
    sensitivity=st.integers(1, 3),
    epsilon=st.floats(0, 2),
)
@FAST
def test_polya_shares_are_the_discrete_laplace_mechanism(
    users: int, beta: float | Fraction, sensitivity: int, epsilon: float
) -> None:
    """Fact 1 (spec §2.3): n Polya(1/n, β) differences sum to Lap_Z with e^{-1/b} = β."""
    distributed = DistributedSum(Polya(Fraction(1, users), beta), users, sensitivity)
    central = AdditiveNoise(DiscreteLaplace(beta=beta), sensitivity)
    pairs = zip(answers(distributed, epsilon, 1e-6, 2), answers(central, epsilon, 1e-6, 2), strict=True)
    for a, b in pairs:
        assert overlap(a, b)
    pure = distributed.pure_epsilon(DPS)  # Fact 3 with Δ/b = -Δ ln β
    with mp.workdps(REF_DPS):
        assert_encloses(pure.lo, pure.hi, -sensitivity * mp.log(as_mpf(beta)))


def test_polya_shares_with_float_r() -> None:
    """r = 0.25 is exactly 1/4 in binary, so four users make a discrete Laplace too."""
    assert overlap(
        DistributedSum(Polya(0.25, 0.5), 4).epsilon(1e-6, DPS),
        AdditiveNoise(DiscreteLaplace(beta=0.5)).epsilon(1e-6, DPS),
    )
    assert DistributedSum(Geometric(0.5), 1).total_noise == DiscreteLaplace(beta=0.5)


@pytest.mark.slow
@given(
    eighths=st.integers(1, 200),
    users=st.integers(1, 40),
    sensitivity=st.integers(1, 3),
    epsilon=st.floats(0, 2),
)
@FAST
def test_skellam_shares_are_a_skellam_mechanism(
    eighths: int, users: int, sensitivity: int, epsilon: float
) -> None:
    """Spec §2.4 closure: n shares Sk(0, v) make Sk(0, nv)."""
    share = Fraction(eighths, 8)
    distributed = DistributedSum(Skellam(share), users, sensitivity)
    central = AdditiveNoise(Skellam(share * users), sensitivity)
    pairs = zip(answers(distributed, epsilon, 1e-6, 3), answers(central, epsilon, 1e-6, 3), strict=True)
    for a, b in pairs:
        assert overlap(a, b)


def test_asymmetric_skellam_shares_and_the_offset() -> None:
    """Shares offset + Poisson(μ1) - Poisson(μ2) sum to n·offset + Poisson(nμ1) - Poisson(nμ2).

    An offset is public and cannot change the privacy of the mechanism.
    """
    distributed = DistributedSum(Skellam.from_rates(1.5, 0.5, 3), 4, 2)
    central = AdditiveNoise(Skellam.from_rates(6, 2, 0), 2)
    for a, b in zip(answers(distributed, 0.7, 1e-6, 2.5), answers(central, 0.7, 1e-6, 2.5), strict=True):
        assert overlap(a, b)


@pytest.mark.parametrize(("sigma", "users"), [(0.8, 1), (0.4, 1), (1.3, 3)])
def test_discrete_gaussian_shares(sigma: float, users: int) -> None:
    """Spec §3.3: the sum of n discrete Gaussians; for n = 1 the fixed-point convolution code
    (SumOfDiscreteGaussians) must agree with the direct discrete Gaussian tables."""
    distributed = DistributedSum(DiscreteGaussian(sigma), users)
    central = AdditiveNoise(DiscreteGaussian(sigma) if users == 1 else SumOfDiscreteGaussians(sigma, users))
    assert isinstance(distributed.total_noise, SumOfDiscreteGaussians)
    for a, b in zip(answers(distributed, 0.5, 1e-6, 2.5), answers(central, 0.5, 1e-6, 2.5), strict=True):
        assert overlap(a, b)


def test_binomial_shares() -> None:
    """Even-trial centered binomial shares sum to a centered binomial (spec §2.7)."""
    distributed = DistributedSum(CenteredBinomial(4), 3)
    central = AdditiveNoise(CenteredBinomial(12))
    for a, b in zip(answers(distributed, 0.5, 1e-3, 2.5), answers(central, 0.5, 1e-3, 2.5), strict=True):
        assert overlap(a, b)
    # X + 1 puts 2^-12 of mass outside the support of X: no Rényi DP, and δ(ε) >= 2^-12.
    assert mp.isinf(distributed.rdp(2, DPS).lo)
    assert distributed.delta(30.0, DPS).lo >= mp.mpf(2) ** -12 * (1 - mp.mpf(10) ** -12)


@pytest.mark.parametrize(
    ("share", "users"),
    [
        (Polya(0.3, 0.5), 3),  # r·n != 1 (0.3 is not 1/3)
        (Polya(Fraction(1, 3), 0.5), 4),
        (Geometric(0.5), 2),
        (DiscreteLaplace(2.0), 3),
        (CenteredBinomial(3), 2),  # odd trials: the shares' means do not cancel
        (Gaussian(1.0), 3),
        (Laplace(1.0), 3),
        (Shifted(Skellam(1), 2), 3),
    ],
    ids=repr,
)
def test_unsupported_shares_raise(share: Any, users: int) -> None:
    """A share whose n-fold sum has no exact form here is refused, not approximated (spec §9.5)."""
    with pytest.raises(UnsupportedError) as info:
        DistributedSum(share, users)
    assert isinstance(info.value, ValueError)
