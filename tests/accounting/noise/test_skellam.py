"""Skellam noise (:mod:`accounting.noise.skellam`): spec values, the Bessel reference, closure under
sums and the a-priori Rényi bounds (Agarwal, Kairouz & Liu 2021, Theorem 3.5)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from mpmath import mp

from accounting import Skellam
from accounting.bounds import skellam_rdp_akl
from accounting.noise.skellam import akl_rdp
from tests.accounting.noise.reference import (
    REF_DPS,
    as_mpf,
    assert_close,
    assert_encloses,
    bessel_i,
    reference_table,
    reference_window,
)

# ---------------------------------------------------------------------------------------------
# Spec test vectors (§2.3, §2.4, §2.5, Fact 3)
# ---------------------------------------------------------------------------------------------


def test_skellam_spec_vector() -> None:
    """Spec §2.4: Sk(0, 2) has P = 0.308508, 0.215269, 0.093239, 0.028791 at x = 0..3 (symmetric)."""
    noise = Skellam(2)
    for x, expected in enumerate([0.308508, 0.215269, 0.093239, 0.028791]):
        assert float(noise.pmf_exact(x).mid) == pytest.approx(expected, abs=5e-7)
        assert noise.pmf_exact(-x) == noise.pmf_exact(x)


@pytest.mark.parametrize(
    ("k", "z"), [(0, "2"), (3, "2"), (-3, "2"), (0, "0.05"), (7, "37.3"), (40, "37.3"), (12, "0.7")]
)
def test_bessel_series_matches_mpmath(k: int, z: str) -> None:
    """The reference Skellam PMF's Bessel series agrees with ``mp.besseli`` (spec §2.4)."""
    with mp.workdps(REF_DPS):
        assert_close(bessel_i(k, mp.mpf(z)), mp.besseli(k, mp.mpf(z)), rel=1e-45)


def test_skellam_shares_add_up_to_a_skellam() -> None:
    """Spec §2.4 closure: Sk(0, v) + Sk(0, v) + Sk(0, v) = Sk(0, 3v), by direct convolution."""
    share, total = Skellam(Fraction(5, 4)), Skellam(Fraction(15, 4))
    with mp.workdps(REF_DPS):
        a, b = reference_window(share)
        one = dict(zip(range(a, b + 1), reference_table(share, a, b), strict=True))
        two = {x: mp.fsum(one[y] * one[x - y] for y in one if x - y in one) for x in range(2 * a, 2 * b + 1)}
        for x in range(-8, 9):
            three = mp.fsum(two[y] * one[x - y] for y in two if x - y in one)
            enclosure = total.pmf_exact(x, dps=30)
            assert_encloses(enclosure.lo, enclosure.hi, three, rel=1e-35)


def test_skellam_renyi_prior_of_a_wide_shift_skips_the_poisson_bound() -> None:
    """A shift of 10^6 (dp-regret's Dist-RDP-SE at scale 10^6) computed 10^6! and stalled for
    seconds per call (minutes at 10^7): beyond 1000 the Poisson shift bound exceeds e^250 and the
    AKL bound answers alone."""
    from accounting.noise.skellam import _POISSON_SHIFT_MAX

    noise = Skellam(1e6)
    prior = noise.renyi_prior(10**7, 3.0)
    assert prior.bound == mp.mpf(skellam_rdp_akl(int(prior.beta), 2 * min(noise.mu1, noise.mu2), 10**7))
    assert noise._poisson_shift_prior(_POISSON_SHIFT_MAX + 1, 2) == mp.inf
    # below the cut-off the Poisson bound is still used where it wins (a tiny rate)
    small = Skellam(1e-300)
    assert small.renyi_prior(1, 1.0).bound < mp.mpf(skellam_rdp_akl(2, 2 * min(small.mu1, small.mu2), 1))


@pytest.mark.parametrize(
    ("variance", "shift", "alpha"), [(2, 1, 1.5), (37.3, 3, 7.0), (Fraction(1, 3), 2, 2.0)]
)
def test_a_priori_bounds_are_the_akl_closed_form(
    variance: float | Fraction, shift: int, alpha: float
) -> None:
    """rho_tail and renyi_prior bound by Agarwal, Kairouz & Liu 2021 Thm 3.5, the value of
    :func:`accounting.bounds.skellam_rdp_akl` (one formula: :func:`accounting.noise.skellam.akl_rdp`)."""
    noise = Skellam(variance)
    v = 2 * min(noise.mu1, noise.mu2)
    k = max(2, math.ceil(alpha))
    first = mp.mpf(skellam_rdp_akl(k, v, shift)) / max(k - 1, alpha)
    assert noise.rho_tail(shift, alpha) == max(first, mp.mpf(skellam_rdp_akl(k + 1, v, shift)) / k)
    prior = noise.renyi_prior(shift, alpha)
    assert prior.bound <= mp.mpf(skellam_rdp_akl(int(prior.beta), v, shift))
    with mp.workdps(REF_DPS):
        by_hand = int(prior.beta) * shift**2 / (2 * as_mpf(v)) + min(
            ((2 * int(prior.beta) - 1) * shift**2 + 6 * shift) / (4 * as_mpf(v) ** 2),
            3 * shift / (2 * as_mpf(v)),
        )
        assert (
            abs(akl_rdp(int(prior.beta), as_mpf(v), mp.mpf(shift**2), mp.mpf(shift)) - by_hand)
            < 1e-40 * by_hand
        )
