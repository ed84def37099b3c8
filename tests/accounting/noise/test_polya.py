"""Pólya and geometric noise (:mod:`accounting.noise.polya`): the geometric tail, and Fact 1 of
Chowdhury & Zhou 2023 (Pólya shares add up to the discrete Laplace), exactly and by sampling."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from mpmath import mp

from accounting import DiscreteLaplace, Geometric, Polya
from tests.accounting.noise.reference import (
    REF_DPS,
    as_mpf,
    assert_close,
    chi_square_pvalue,
    moments_consistent,
    reference_moments,
    reference_pmf,
    reference_window,
)


@pytest.mark.parametrize("beta", [0.1, 0.5, Fraction(9, 10)])
def test_geometric_tail_is_exact(beta: float | Fraction) -> None:
    """Spec §2.2: P(X >= t) = β^t for Geometric(β) = Polya(1, β)."""
    noise = Geometric(beta)
    for t in (1, 2, 10, 50):
        bound = noise.sf_bound(t, dps=25)
        with mp.workdps(REF_DPS):
            exact = as_mpf(beta) ** t
            assert exact <= bound <= exact * (1 + mp.mpf(10) ** -23)


@pytest.mark.slow
def test_polya_shares_add_up_to_the_discrete_laplace() -> None:
    """Fact 1 (spec §2.3): Σ_{i<=n} (γ_i⁺ - γ_i⁻) with γ ~ Polya(1/n, β) is Lap_Z with e^{-1/b} = β.

    The n-fold convolution is computed from the library's own Pólya PMF enclosures (in
    interval arithmetic, so the result is again an enclosure) and compared with the
    library's discrete Laplace PMF, and with the closed form of Definition 4.
    """
    n, beta = 4, Fraction(4, 5)
    share = Polya(Fraction(1, n), beta)
    width = 300  # β^300 < 1e-29: the left-out mass is negligible next to the checked values
    with mp.workdps(60):
        one = [share.pmf_exact(x, dps=40).lo for x in range(width)]
        total = [mp.one] + [mp.zero] * (width - 1)
        for _ in range(n):  # the n-fold convolution of the one-sided share, exact below `width`
            total = [mp.fsum(total[j] * one[k - j] for j in range(k + 1)) for k in range(width)]
        q = as_mpf(beta)
        for k in range(12):  # ... is Polya(1, β), the geometric distribution (spec §2.2)
            assert_close(total[k], q**k * (1 - q), rel=1e-30)
        for x in range(-6, 7):  # ... and the difference of two of them is Lap_Z
            difference = mp.fsum(total[j + x] * total[j] for j in range(max(0, -x), width - max(x, 0)))
            laplace = DiscreteLaplace(beta=beta).pmf_exact(x, dps=40)
            assert_close(difference, laplace.mid, rel=1e-25)
            assert_close(difference, reference_pmf(DiscreteLaplace(beta=beta), x), rel=1e-25)


def _polya_sum_differences(
    rng: np.random.Generator, users: int, beta: float, size: int, gamma_scale: float
) -> np.ndarray:
    """Σ_i (γ_i⁺ - γ_i⁻), γ ~ Gamma-Poisson with shape 1/users and the given Gamma scale."""

    def draw() -> np.ndarray:
        lam = rng.gamma(shape=1 / users, scale=gamma_scale, size=(users, size))
        return np.asarray(rng.poisson(lam).sum(axis=0))

    plus, minus = draw(), draw()
    return np.asarray(plus - minus)


@pytest.mark.slow
def test_polya_difference_sum_is_discrete_laplace_spec_9_1() -> None:
    """Spec §9.1: n = 64 users, ε = 0.5, g = 4: Σ (Polya(1/64, e^{-ε/g}) differences) ~ Lap_Z(8).

    The library's sampler must give variance 127.83 and pass a chi-square test against
    Lap_Z(8). The released code's Gamma scale (1-β)/β samples Polya(r, 1-β): the same
    moment check must reject it (its variance is about 0.30).
    """
    users, beta = 64, math.exp(-0.5 / 4)
    target = DiscreteLaplace(8)
    mean, var, m4 = reference_moments(target)
    assert var == pytest.approx(127.83, abs=5e-3)
    rng = np.random.default_rng(91)
    size = 100_000
    share = Polya(Fraction(1, users), beta)
    total = share.sample(rng, (users, size)).sum(axis=0) - share.sample(rng, (users, size)).sum(axis=0)
    assert moments_consistent(total, mean, var, m4)
    a, b = reference_window(target)
    assert chi_square_pvalue(total, target.pmf, a, b) > 1e-4

    # The same check catches the scale bug of the released code.
    buggy = _polya_sum_differences(rng, users, beta, size, gamma_scale=(1 - beta) / beta)
    assert not moments_consistent(buggy, mean, var, m4)
    assert buggy.var() == pytest.approx(0.30, abs=0.01)
    # ... and a hand-written sampler with the paper's scale β/(1-β) passes it, as a control.
    correct = _polya_sum_differences(rng, users, beta, size, gamma_scale=beta / (1 - beta))
    assert moments_consistent(correct, mean, var, m4)
