"""Tests of :mod:`verification.goodness_of_fit`: samplers against exact PMFs.

Names of results are as in ``papers/distributed-dp-mab.md`` ("the spec"). Every sampler of
the project must pass (fixed seeds, so the outcome is reproducible); the Pólya sampler of the
paper's released code (Gamma scale ``(1-β)/β``, spec §9.1) and a discrete Gaussian sampled
with ``σ√2`` must fail, as must samplers whose variance is 3% off. The statistics themselves
are checked against hand computations (a three-point distribution with closed-form p-values).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting import CenteredBinomial, DiscreteGaussian, DiscreteLaplace, Gaussian, Polya, Skellam
from verification.errors import ParameterError, ParameterTypeError, VerificationError
from verification.goodness_of_fit import (
    EXACT_SAMPLERS,
    SAMPLERS,
    SIZE,
    Bin,
    SamplerCase,
    buggy_polya_sample,
    check_sampler,
    chi_square_test,
    g_test,
    moment_test,
    polya_difference_sampler,
    polya_sample,
)

#: One spawned stream per sampler case: independent, and reproducible.
STREAMS = np.random.SeedSequence(20240611).spawn(64)


def rng(i: int) -> np.random.Generator:
    return np.random.default_rng(STREAMS[i])


# ---------------------------------------------------------------------------------------------
# Every sampler of the project passes
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(SAMPLERS)), ids=[c.name for c in SAMPLERS])
def test_every_sampler_passes(index: int) -> None:
    case = SAMPLERS[index]
    report = case.check(rng(index))
    assert report.passed, report.summary()
    assert report.verdict == "pass"
    # Pooled bins are valid, and the library's closed-form variance matches the PMF's.
    assert all(b.expected >= 5 for b in report.chi_square.bins)
    assert report.moments.table_variance == pytest.approx(report.moments.expected_variance, rel=1e-7)
    assert report.samples_per_second > 0


def test_samplers_cover_every_distribution() -> None:
    """The catalogue names each sampler of the project (issue 4 §1)."""
    kinds = {type(case.noise).__name__ for case in SAMPLERS}
    assert kinds >= {
        "DiscreteLaplace",
        "Geometric",
        "Polya",
        "Skellam",
        "DiscreteGaussian",
        "SumOfDiscreteGaussians",
        "CenteredBinomial",
    }
    assert any(case.sampler is not None for case in SAMPLERS)  # the Pólya-difference construction
    skellams = [c.noise for c in SAMPLERS if isinstance(c.noise, Skellam)]
    assert any(s.symmetric for s in skellams)
    assert any(not s.symmetric for s in skellams)
    sigmas = [float(c.noise.sigma) for c in SAMPLERS if type(c.noise) is DiscreteGaussian]
    assert min(sigmas) < 0.5 < 100 < max(sigmas)


# ---------------------------------------------------------------------------------------------
# Known-wrong samplers fail
# ---------------------------------------------------------------------------------------------

BETA = math.exp(-1 / 8)  # spec §9.1: n = 64, ε = 0.5, g = 4, so Lap_Z(8)


def test_polya_scale_bug_fails_in_the_users_sum() -> None:
    """Spec §9.1: with Gamma scale (1-β)/β the total of 64 users has variance 0.30, not 127.8."""
    target = DiscreteLaplace(decay=BETA)
    buggy = polya_difference_sampler(64, BETA, buggy_polya_sample)
    report = check_sampler(target, rng(20), 50_000, buggy)
    assert not report.passed
    assert report.chi_square.p_value < 1e-300
    assert report.chi_square.log10_p < -1000
    assert report.moments.variance == pytest.approx(0.30, abs=0.02)
    assert report.moments.expected_variance == pytest.approx(127.83, abs=0.01)


def test_polya_scale_bug_fails_for_one_draw() -> None:
    """The bug samples Polya(r, 1-β) instead of Polya(r, β) (spec §9.1)."""
    report = check_sampler(Polya(2.5, 0.7), rng(21), SIZE, buggy_polya_sample(2.5, 0.7))
    assert not report.passed
    assert report.g.p_value < 1e-300
    assert report.moments.mean == pytest.approx(2.5 * 0.3 / 0.7, rel=0.02)  # the mean of Polya(2.5, 0.3)


def test_correct_polya_sampler_passes() -> None:
    report = check_sampler(Polya(2.5, 0.7), rng(22), SIZE, polya_sample(2.5, 0.7))
    assert report.passed, report.summary()


@pytest.mark.parametrize("sigma", [0.4, 150.0])
def test_discrete_gaussian_off_by_sqrt2_fails(sigma: float) -> None:
    """A discrete Gaussian sampled with σ√2 (issue 4 §5) fails at the catalogue's size."""
    wrong = DiscreteGaussian(sigma * math.sqrt(2))
    report = check_sampler(DiscreteGaussian(sigma), rng(23), SIZE, wrong.sample)
    assert not report.passed
    assert report.moments.variance_z > 10


@pytest.mark.parametrize(
    ("claimed", "actual"),
    [
        (Skellam(50.0), Skellam(51.5)),
        (DiscreteLaplace(8.0), DiscreteLaplace(8.0 * math.sqrt(1.03))),
        (DiscreteGaussian(150.0), DiscreteGaussian(150.0 * math.sqrt(1.03))),
    ],
    ids=["skellam", "discrete-laplace", "discrete-gaussian"],
)
def test_three_percent_wrong_variance_fails(claimed: object, actual: object) -> None:
    """SIZE is chosen so that a 3% error in the variance is caught (see SIZE's comment)."""
    assert isinstance(actual, DiscreteGaussian | DiscreteLaplace | Skellam)
    report = check_sampler(claimed, rng(24), SIZE, actual.sample)  # type: ignore[arg-type]
    assert not report.passed
    assert abs(report.moments.variance_z) > 4


# ---------------------------------------------------------------------------------------------
# The statistics, against hand computations
# ---------------------------------------------------------------------------------------------


def three_point_samples() -> np.ndarray:
    """100 samples of CenteredBinomial(2) (P = 1/4, 1/2, 1/4 on -1, 0, 1): counts 30, 40, 30."""
    return np.array([-1] * 30 + [0] * 40 + [1] * 30)


def test_chi_square_by_hand() -> None:
    """Expected 25, 50, 25: X² = 25/25 + 100/50 + 25/25 = 4 on 2 dof, p = e^{-2}."""
    result = chi_square_test(CenteredBinomial(2), three_point_samples())
    assert [b.observed for b in result.bins] == [30, 40, 30]
    assert [b.expected for b in result.bins] == pytest.approx([25, 50, 25], rel=1e-12)
    assert result.statistic == pytest.approx(4.0, rel=1e-12)
    assert result.dof == 2
    assert result.p_value == pytest.approx(math.exp(-2), rel=1e-10)
    assert result.passed


def test_g_test_by_hand() -> None:
    """G = 2 (60 ln(30/25) + 40 ln(40/50)), p = e^{-G/2} on 2 dof."""
    result = g_test(CenteredBinomial(2), three_point_samples())
    g = 2 * (60 * math.log(1.2) + 40 * math.log(0.8))
    assert result.statistic == pytest.approx(g, rel=1e-12)
    assert result.p_value == pytest.approx(math.exp(-g / 2), rel=1e-10)
    assert result.log10_p == pytest.approx(-g / 2 / math.log(10), rel=1e-10)


def test_moment_test_by_hand() -> None:
    """Mean 0, variance 1/2, μ4 = 1/2 for CenteredBinomial(2); 60 of 100 samples at ±1."""
    result = moment_test(CenteredBinomial(2), three_point_samples())
    assert result.expected_mean == pytest.approx(0.0, abs=1e-15)
    assert result.expected_variance == 0.5
    assert result.fourth_moment == pytest.approx(0.5, rel=1e-12)
    assert result.mean_z == pytest.approx(0.0, abs=1e-12)
    # v = 0.6, SE = sqrt((1/2 - 1/4)/100) = 0.05, z = 2.
    assert result.variance_z == pytest.approx(2.0, rel=1e-9)
    assert result.p_value == pytest.approx(min(1.0, 2 * math.erfc(2 / math.sqrt(2))), rel=1e-9)


def test_moment_test_uses_the_exact_mean() -> None:
    """Asymmetric Skellam: mean offset + μ1 - μ2 (spec §2.4), from the PMF table."""
    noise = Skellam.from_rates(3.5, 1.25, 2)
    result = moment_test(noise, noise.sample(rng(25), 20_000))
    assert result.expected_mean == pytest.approx(4.25, rel=1e-10)
    assert result.expected_variance == 4.75
    assert result.passed


@given(st.integers(min_value=500, max_value=5000), st.floats(min_value=1, max_value=20))
@settings(max_examples=15, deadline=None)
def test_pooled_bins_partition_the_line(size: int, min_expected: float) -> None:
    """Bins are contiguous, cover (-inf, inf), hold every sample, and expect >= min_expected each."""
    noise = DiscreteLaplace(3.0)
    samples = noise.sample(np.random.default_rng(size), size)
    result = chi_square_test(noise, samples, min_expected)
    bins = result.bins
    assert bins[0].lo == -math.inf
    assert bins[-1].hi == math.inf
    assert all(b.hi + 1 == c.lo for b, c in itertools.pairwise(bins))
    assert sum(b.observed for b in bins) == size
    assert sum(b.expected for b in bins) == pytest.approx(size, abs=1.1e-6)  # <= 1e-6 counts left out
    assert min(b.expected for b in bins) >= min_expected
    assert result.dof == len(bins) - 1


def test_samples_outside_the_support_fail() -> None:
    """A value the distribution cannot take fails outright, however few there are."""
    noise = Polya(2.5, 0.7)
    samples = noise.sample(rng(26), 10_000)
    samples[0] = -1
    for result in (chi_square_test(noise, samples), g_test(noise, samples)):
        assert not result.passed
        assert result.outside_support == 1
        assert result.p_value == 0.0
    binomial = np.array([0] * 50 + [1] * 30 + [-1] * 30 + [3])  # support of CenteredBinomial(2) is -1..1
    assert chi_square_test(CenteredBinomial(2), binomial).outside_support == 1


def test_summaries_are_readable() -> None:
    report = check_sampler(DiscreteLaplace(8.0), rng(27), 20_000, name="dlap")
    text = report.summary()
    assert text.startswith("dlap: pass")
    assert "chi-square test" in text
    assert "G test" in text
    assert "moment test" in text
    assert "samples/s" in text


def test_bin_labels() -> None:
    assert Bin(-math.inf, -3, 1, 1.0).label == "x <= -3"
    assert Bin(4, math.inf, 1, 1.0).label == "x >= 4"
    assert Bin(2, 2, 1, 1.0).label == "x = 2"
    assert Bin(2, 5, 1, 1.0).label == "2..5"


def test_case_with_custom_sampler_runs() -> None:
    case = SamplerCase("two users", DiscreteLaplace(decay=0.5), 20_000, polya_difference_sampler(2, 0.5))
    assert case.check(rng(28)).passed


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


def test_bad_parameters_name_the_parameter() -> None:
    noise = DiscreteLaplace(2.0)
    good = noise.sample(rng(29), 1000)
    cases: list[tuple[str, type[Exception], object]] = [
        ("noise", ParameterTypeError, lambda: chi_square_test(Gaussian(1.0), good)),  # type: ignore[arg-type]
        ("samples", ParameterError, lambda: chi_square_test(noise, np.array([0.5, 1.0]))),
        ("samples", ParameterError, lambda: g_test(noise, np.array([], dtype=np.int64))),
        ("min_expected", ParameterError, lambda: chi_square_test(noise, good, 0)),
        ("alpha", ParameterError, lambda: chi_square_test(noise, good, alpha=1.5)),
        ("alpha", ParameterError, lambda: moment_test(noise, good, alpha=0.0)),
        ("size", ParameterError, lambda: check_sampler(noise, rng(0), 1)),
        ("rng", ParameterTypeError, lambda: check_sampler(noise, 42, 100)),  # type: ignore[arg-type]
        ("sampler", ParameterTypeError, lambda: check_sampler(noise, rng(0), 100, 3)),  # type: ignore[arg-type]
        ("beta", ParameterError, lambda: buggy_polya_sample(1.0, 1.0)),
        ("r", ParameterError, lambda: polya_sample(0, 0.5)),
        ("users", ParameterError, lambda: polya_difference_sampler(0, 0.5)),
    ]
    for name, error, call in cases:
        assert callable(call)
        with pytest.raises(error) as info:
            call()
        assert info.value.name == name  # type: ignore[attr-defined]


def test_too_few_samples_for_two_bins() -> None:
    with pytest.raises(VerificationError, match="fewer than two bins"):
        chi_square_test(DiscreteLaplace(2.0), np.array([0, 1, -1]))


def test_float_samples_that_are_integers_are_accepted() -> None:
    result = chi_square_test(CenteredBinomial(2), three_point_samples().astype(np.float64))
    assert result.statistic == pytest.approx(4.0)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(EXACT_SAMPLERS)), ids=[c.name for c in EXACT_SAMPLERS])
def test_every_exact_sampler_passes(index: int) -> None:
    case = EXACT_SAMPLERS[index]
    report = case.check(np.random.default_rng(np.random.SeedSequence(7_000 + index)))
    assert report.passed, report.summary()


def test_exact_samplers_cover_every_lattice_distribution() -> None:
    kinds = {type(case.noise).__name__ for case in EXACT_SAMPLERS}
    assert kinds >= {
        "DiscreteLaplace",
        "Geometric",
        "Polya",
        "Skellam",
        "DiscreteGaussian",
        "SumOfDiscreteGaussians",
        "CenteredBinomial",
    }


def test_exact_polya_scale_bug_still_caught() -> None:
    # The released code's scale bug, with exact shares elsewhere: the users' sum must fail.
    from verification.goodness_of_fit import buggy_polya_sample, polya_difference_sampler

    beta = math.exp(-1 / 8)
    report = check_sampler(
        DiscreteLaplace(decay=beta),
        np.random.default_rng(3),
        50_000,
        polya_difference_sampler(64, beta, share=buggy_polya_sample),
    )
    assert not report.passed
