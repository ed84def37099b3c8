"""Exact samplers (``sample_exact`` and :mod:`accounting._exact`): distributions, exact paths, errors.

The goodness of fit of every exact sampler against its exact PMF is in
``tests/verification/test_goodness_of_fit.py`` (``EXACT_SAMPLERS``); here: the primitives'
probabilities, the int64 and Python-integer paths agreeing, the OS CSPRNG, shapes, seeds and errors.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from accounting import _exact
from accounting.errors import ParameterTypeError, UnsupportedError
from accounting.noise import (
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Geometric,
    Laplace,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
    SystemRandomness,
    bernoulli_exp,
)
from verification.goodness_of_fit import check_sampler

SEEDS = np.random.SeedSequence(20261123).spawn(32)


def rng(i: int) -> np.random.Generator:
    return np.random.default_rng(SEEDS[i])


def binomial_ok(hits: int, trials: int, p: float, alpha: float = 1e-4) -> bool:
    """Two-sided exact binomial test: is ``hits`` plausible for Binomial(trials, p)?"""
    return bool(stats.binomtest(hits, trials, p).pvalue > alpha)


@pytest.mark.parametrize(
    "gamma", [Fraction(0), Fraction(1, 7), Fraction(1), Fraction(5, 2), Fraction(31, 10), Fraction(9)]
)
def test_bernoulli_exp_has_probability_exp_minus_gamma(gamma: Fraction) -> None:
    n = 400_000
    num = np.full(n, gamma.numerator, dtype=np.int64)
    hits = int(bernoulli_exp(rng(0), num, gamma.denominator).sum())
    assert binomial_ok(hits, n, math.exp(-gamma))


def test_bernoulli_exp_python_integer_path() -> None:
    # γ = 3/2 with a denominator beyond int64: the object-array path must give the same law.
    big = 3 * 2**70
    n = 20_000
    num = np.array([3 * big // 2] * n, dtype=object)
    den = np.array([big] * n, dtype=object)
    hits = int(bernoulli_exp(rng(1), num, den).sum())
    assert binomial_ok(hits, n, math.exp(-1.5))


def test_bernoulli_exp_mixed_gammas_elementwise() -> None:
    n = 200_000
    num = np.tile(np.array([0, 1, 3, 10], dtype=np.int64), n // 4)
    out = bernoulli_exp(rng(2), num, 4)
    for j, g in enumerate([0, 0.25, 0.75, 2.5]):
        assert binomial_ok(int(out[j::4].sum()), n // 4, math.exp(-g))


@pytest.mark.parametrize("source", ["generator", "system"])
def test_uniform_below_is_uniform(source: str) -> None:
    r: _exact.Randomness = rng(3) if source == "generator" else SystemRandomness()
    high = np.array([7, 2**40 + 3, 1, 1000] * 25_000, dtype=np.int64)
    u = _exact.uniform_below(r, high)
    assert u.dtype == np.int64
    assert np.all((u >= 0) & (u < high))
    counts = np.bincount(u[0::4], minlength=7)
    assert stats.chisquare(counts).pvalue > 1e-4
    assert np.all(u[2::4] == 0)
    # The 2^40+3 bound: the top bit is set about half the time (a modulo bias would not show here,
    # but a truncation to 32 bits would).
    assert binomial_ok(int((u[1::4] >= 2**39).sum()), 25_000, (2**40 + 3 - 2**39) / (2**40 + 3))


def test_big_uniform_is_in_range_and_covers_the_top() -> None:
    bound = 3 * 2**100 + 1
    r = rng(4)
    draws = [_exact._big_uniform(r, bound) for _ in range(4000)]
    assert all(0 <= d < bound for d in draws)
    assert binomial_ok(sum(d >= 2 * 2**100 for d in draws), 4000, (bound - 2 * 2**100) / bound)


def test_exact_discrete_gaussian_int64_and_python_paths_agree() -> None:
    # σ = 3.7 as a float is a 52-bit dyadic rational (Python-integer path); σ = 37/10 is short (int64).
    slow = check_sampler(DiscreteGaussian(3.7), rng(5), 20_000, DiscreteGaussian(3.7).sample_exact)
    fast = check_sampler(
        DiscreteGaussian(Fraction(37, 10)), rng(6), 200_000, DiscreteGaussian(Fraction(37, 10)).sample_exact
    )
    assert slow.passed, slow.summary()
    assert fast.passed, fast.summary()


def test_exact_discrete_laplace_with_huge_rational_scale() -> None:
    scale = Fraction(2**64 + 1, 2**61)  # t beyond int64: exact Python integers throughout
    noise = DiscreteLaplace(scale)
    report = check_sampler(noise, rng(7), 5_000, noise.sample_exact)
    assert report.passed, report.summary()


def test_exact_samplers_accept_the_system_csprng() -> None:
    noise = DiscreteLaplace(Fraction(5, 2))
    report = check_sampler(noise, rng(8), 100_000, lambda _r, n: noise.sample_exact(SystemRandomness(), n))
    assert report.passed, report.summary()
    assert Polya(Fraction(1, 8), 0.8).sample_exact(SystemRandomness(), (3, 8)).shape == (3, 8)


@pytest.mark.slow
def test_polya_partial_blocks_and_large_denominators() -> None:
    # r = 1/1000 with fewer draws than one block, over many calls: the kept slots are i.i.d. Pólya.
    noise = Polya(Fraction(1, 1000), 0.99)
    r = rng(9)
    draws = np.concatenate([noise.sample_exact(r, 7) for _ in range(4_000)])
    report = check_sampler(noise, rng(10), draws.size, lambda _r, n: draws[:n])
    assert report.passed, report.summary()


def test_polya_rows_of_users_sum_to_a_discrete_laplace() -> None:
    # The protocol's layout: (R, n) shares, each row one batch of n users (Fact 1).
    users, beta = 50, math.exp(-1 / 6)
    share = Polya(Fraction(1, users), beta)
    total = DiscreteLaplace(beta=beta)

    def draw(r: np.random.Generator, n: int) -> np.ndarray:
        plus = share.sample_exact(r, (n, users)).sum(axis=1)
        minus = share.sample_exact(r, (n, users)).sum(axis=1)
        difference: np.ndarray = plus - minus
        return difference

    report = check_sampler(total, rng(11), 100_000, draw)
    assert report.passed, report.summary()


def test_shapes_dtypes_and_seeds() -> None:
    cases = [
        DiscreteLaplace(3.0),
        DiscreteLaplace(beta=0.5),
        Geometric(0.3),
        Polya(Fraction(1, 4), 0.5),
        Skellam(4.0),
        DiscreteGaussian(2.0),
        SumOfDiscreteGaussians(1.0, 3),
        CenteredBinomial(70),
        Shifted(DiscreteLaplace(2.0), -4),
    ]
    for noise in cases:
        a = noise.sample_exact(np.random.default_rng(1), (4, 5))
        b = noise.sample_exact(np.random.default_rng(1), (4, 5))
        assert a.shape == (4, 5), noise
        assert a.dtype == np.int64, noise
        assert np.array_equal(a, b), noise
        assert noise.sample_exact(np.random.default_rng(1), 0).shape == (0,)


def test_centered_binomial_bits_beyond_one_word() -> None:
    noise = CenteredBinomial(131)  # three words, the last one partly used
    report = check_sampler(noise, rng(12), 100_000, noise.sample_exact)
    assert report.passed, report.summary()
    assert noise.sample_exact(rng(13), 10_000).max() <= 131 - 131 // 2


def test_poisson_and_skellam_small_rational_rates() -> None:
    values = _exact.poisson(rng(14), Fraction(1, 3), 300_000)
    counts = np.bincount(values)
    expected = stats.poisson.pmf(np.arange(counts.size), 1 / 3) * values.size
    keep = expected > 5
    scaled = expected[keep] * counts[keep].sum() / expected[keep].sum()
    assert stats.chisquare(counts[keep], scaled).pvalue > 1e-4
    assert np.all(_exact.poisson(rng(15), Fraction(0), 10) == 0)


def test_continuous_noise_has_no_exact_sampler() -> None:
    for noise in (Laplace(1.0), Gaussian(1.0)):
        with pytest.raises(UnsupportedError, match="continuous"):
            noise.sample_exact(rng(16), 3)


def test_bad_randomness_and_sizes_are_named() -> None:
    with pytest.raises(ParameterTypeError, match="rng"):
        DiscreteLaplace(1.0).sample_exact(42, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="size"):
        DiscreteLaplace(1.0).sample_exact(rng(17), -1)


def test_polya_with_a_long_numerator_is_refused_not_approximated() -> None:
    with pytest.raises(UnsupportedError, match="Fraction"):
        Polya(0.3, 0.5).sample_exact(rng(18), 3)
