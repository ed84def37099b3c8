"""The lattice protocol of :mod:`accounting.noise.base`, checked for every family: exact PMFs that
enclose the references, certified tails, moments, samplers, and errors naming the parameter."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import (
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Geometric,
    Laplace,
    LatticeNoise,
    ParameterError,
    ParameterTypeError,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
)
from tests.accounting.noise.reference import (
    FAST,
    REF_DPS,
    assert_encloses,
    chi_square_pvalue,
    moments_consistent,
    reference_moments,
    reference_pmf,
    reference_table,
    reference_window,
)

# ---------------------------------------------------------------------------------------------
# The distributions under test
# ---------------------------------------------------------------------------------------------

NOISES: list[LatticeNoise] = [
    DiscreteLaplace(3.7),
    DiscreteLaplace(Fraction(8, 3)),
    DiscreteLaplace(beta=0.8),
    DiscreteLaplace(beta=Fraction(7, 9)),
    Geometric(0.3),
    Geometric(Fraction(2, 3)),
    Polya(0.37, 0.6),
    Polya(Fraction(1, 64), math.exp(-0.5 / 4)),  # one user's share in spec §9.1
    Polya(3.5, 0.9),
    Skellam(2),
    Skellam(37.3),
    Skellam(Fraction(1, 20)),
    Skellam(6, offset=-3),
    Skellam.from_rates(1.5, 0.25, 3),
    Skellam.from_rates(20, 3.3, -2),
    DiscreteGaussian(0.3),  # direct-sum normalizer (σ < 1/2)
    DiscreteGaussian(0.49),
    DiscreteGaussian(0.5),  # Poisson-summation normalizer (σ >= 1/2)
    DiscreteGaussian(7.3),
    DiscreteGaussian(Fraction(5, 2)),
    SumOfDiscreteGaussians(0.4, 2),
    SumOfDiscreteGaussians(0.7, 3),
    SumOfDiscreteGaussians(1.5, 4),
    CenteredBinomial(1),
    CenteredBinomial(7),
    CenteredBinomial(40),
]


def _probe_points(noise: LatticeNoise) -> list[int]:
    """Points in the bulk, in the tails and just outside the support (where it is bounded)."""
    mean, var, _ = reference_moments(noise)
    sd = math.sqrt(var)
    points = {round(mean + k * sd) for k in (-6, -3, -1.5, -1, 0, 0.5, 1, 2, 4, 7)}
    lo, hi = noise.support()
    if math.isfinite(lo):
        points.add(int(lo) - 1)
    if math.isfinite(hi):
        points.add(int(hi) + 1)
    return sorted(points)


# ---------------------------------------------------------------------------------------------
# Exact PMFs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", NOISES, ids=repr)
@pytest.mark.parametrize("dps", [15, 30])
def test_pmf_exact_encloses_reference_and_is_tight(noise: LatticeNoise, dps: int) -> None:
    """Every enclosure contains the textbook value (spec §2.2-§2.5, §2.7) to ~dps digits."""
    for x in _probe_points(noise):
        enclosure = noise.pmf_exact(x, dps=dps)
        with mp.workdps(REF_DPS):
            reference = reference_pmf(noise, x)
        assert_encloses(enclosure.lo, enclosure.hi, reference)
        if reference == 0:
            assert enclosure.hi == 0
        else:
            assert enclosure.digits() >= dps - 3, (x, enclosure)


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_pmf_intervals_agree_with_reference_on_a_window(noise: LatticeNoise) -> None:
    """The table form (what the divergences consume) encloses the same values (spec §2.2-§2.7)."""
    mean, var, _ = reference_moments(noise)
    a = round(mean - 4 * math.sqrt(var)) - 2
    table = noise.pmf_intervals(a, a + 30, dps=20)
    assert len(table) == 31
    with mp.workdps(REF_DPS):
        for x, value in zip(range(a, a + 31), table, strict=True):
            lo, hi = mp.make_mpf(value._mpi_[0]), mp.make_mpf(value._mpi_[1])
            assert_encloses(lo, hi, reference_pmf(noise, x))


def _noise_strategy() -> st.SearchStrategy[LatticeNoise]:
    """Random members of every lattice family, with parameters where references are quick."""
    pos = st.floats(0.05, 40)
    unit = st.floats(0.02, 0.95)
    return st.one_of(
        pos.map(DiscreteLaplace),
        unit.map(lambda q: DiscreteLaplace(beta=q)),
        unit.map(Geometric),
        st.builds(Polya, st.floats(0.01, 8), st.floats(0.02, 0.9)),
        st.builds(Polya, st.integers(1, 200).map(lambda n: Fraction(1, n)), unit),
        st.builds(Skellam, st.floats(0.01, 80), st.integers(-5, 5)),
        st.builds(Skellam.from_rates, st.floats(0.01, 30), st.floats(0.01, 30), st.integers(-5, 5)),
        st.floats(0.1, 15).map(DiscreteGaussian),
        st.builds(SumOfDiscreteGaussians, st.floats(0.2, 2), st.integers(1, 4)),
        st.integers(1, 300).map(CenteredBinomial),
    )


@pytest.mark.slow
@given(noise=_noise_strategy(), where=st.floats(-6, 6))
@settings(max_examples=30, deadline=None)
def test_pmf_exact_encloses_reference_random_parameters(noise: LatticeNoise, where: float) -> None:
    """Property form of the test above, over every family and random parameters."""
    mean, var, _ = reference_moments(noise)
    x = round(mean + where * math.sqrt(var))
    enclosure = noise.pmf_exact(x, dps=20)
    with mp.workdps(REF_DPS):
        reference = reference_pmf(noise, x)
    assert_encloses(enclosure.lo, enclosure.hi, reference)
    assert reference == 0 or enclosure.digits() >= 17


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_pmf_sums_to_one_within_certified_error(noise: LatticeNoise) -> None:
    """Σ lower ends <= 1 <= Σ upper ends + certified mass outside the window (sf/cdf bounds).

    And the gap 1 - Σ lower ends is no more than that outside mass plus the working precision.
    """
    dps = 20
    a, b = noise.window(mp.mpf(10) ** -25, dps)
    outside = noise.cdf_bound(a - 1, dps) + noise.sf_bound(b + 1, dps)
    assert outside <= mp.mpf(10) ** -24
    table = noise.pmf_intervals(a, b, dps)
    with mp.workdps(200):  # exact enough that the sums' own rounding is irrelevant
        total_lo = mp.fsum(mp.make_mpf(x._mpi_[0]) for x in table)
        total_hi = mp.fsum(mp.make_mpf(x._mpi_[1]) for x in table)
        assert total_lo <= 1
        assert total_hi + outside >= 1
        assert 1 - total_lo <= outside + mp.mpf(10) ** -(dps - 2)


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_float_pmf_agrees_with_exact(noise: LatticeNoise) -> None:
    """The float64 PMF (numpy/scipy, for statistics) matches the exact one to 1e-12 relative."""
    a, b = reference_window(noise)
    xs = np.arange(max(a, -400), min(b, 400) + 1)
    floats = noise.pmf(xs)
    exact = noise.pmf_intervals(int(xs[0]), int(xs[-1]), dps=20)
    checked = 0
    for f, value in zip(floats, exact, strict=True):
        mid = float(mp.make_mpf(value._mpi_[1]))
        if mid > 1e-30:
            assert f == pytest.approx(mid, rel=1e-12)
            checked += 1
        else:
            assert f <= 1e-29
    assert checked >= 2


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_tail_bounds_dominate_exact_tails(noise: LatticeNoise) -> None:
    """sf_bound(t) >= P(X >= t), cdf_bound(t) >= P(X <= t), tail_bound(t) >= P(|X| >= t).

    The bounds are Fact 3 (spec §2.3, exact), β^t (§2.2, exact), Chernoff (Pólya, Skellam),
    sub-Gaussianity (§2.5) and Hoeffding (binomial); the tails are summed from the references.
    """
    mean, var, _ = reference_moments(noise)
    sd = math.sqrt(var)
    a, b = reference_window(noise)
    with mp.workdps(REF_DPS):
        table = dict(zip(range(a, b + 1), reference_table(noise, a, b), strict=True))
    for k in (-8, -4, -2, -1, 0, 1, 2, 4, 8):
        t = round(mean + k * sd)
        with mp.workdps(REF_DPS):
            upper_tail = mp.fsum(p for x, p in table.items() if x >= t)
            lower_tail = mp.fsum(p for x, p in table.items() if x <= t)
            abs_tail = mp.fsum(p for x, p in table.items() if abs(x) >= abs(t))
        sf = noise.sf_bound(t, dps=20)
        cdf = noise.cdf_bound(t, dps=20)
        assert 0 <= sf <= 1
        assert 0 <= cdf <= 1
        with mp.workdps(REF_DPS):
            assert sf >= upper_tail * (1 - mp.mpf(10) ** -30)
            assert cdf >= lower_tail * (1 - mp.mpf(10) ** -30)
            # A float rounded up: compared exactly (mp.mpf of a float is exact).
            assert mp.mpf(noise.tail_bound(abs(t))) >= abs_tail * (1 - mp.mpf(10) ** -30)


# ---------------------------------------------------------------------------------------------
# Moments
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_variance_matches_direct_summation(noise: LatticeNoise) -> None:
    """variance() (closed forms: spec §2.2-§2.5) equals Σ (x - mean)² P(x)."""
    _, var, _ = reference_moments(noise)
    assert noise.variance() == pytest.approx(var, rel=1e-12)


@given(noise=_noise_strategy())
@FAST
def test_variance_matches_direct_summation_random_parameters(noise: LatticeNoise) -> None:
    """As above, over every family with random parameters (spec §2.2-§2.5, §2.7)."""
    _, var, _ = reference_moments(noise)
    assert noise.variance() == pytest.approx(var, rel=1e-11)


# ---------------------------------------------------------------------------------------------
# Samplers
# ---------------------------------------------------------------------------------------------

SAMPLES = 100_000

SAMPLED: list[LatticeNoise] = [
    DiscreteLaplace(3.7),
    DiscreteLaplace(beta=0.8),
    Geometric(0.3),
    Polya(0.37, 0.6),
    Polya(3.5, 0.9),
    Skellam(2),
    Skellam(37.3),
    Skellam.from_rates(1.5, 0.25, 3),
    Shifted(Skellam(5), -4),
    DiscreteGaussian(0.3),
    DiscreteGaussian(0.5),
    DiscreteGaussian(7.3),
    SumOfDiscreteGaussians(0.7, 3),
    SumOfDiscreteGaussians(1.5, 4),
    CenteredBinomial(7),
    CenteredBinomial(40),
]


@pytest.mark.parametrize("noise", SAMPLED, ids=repr)
def test_sampler_moments_and_goodness_of_fit(noise: LatticeNoise) -> None:
    """The fast samplers (spec §2.2 Gamma-Poisson, §2.4 Poisson difference, §2.5 CKS rejection)."""
    rng = np.random.default_rng(20230501)
    samples = noise.sample(rng, SAMPLES)
    assert samples.shape == (SAMPLES,)
    assert np.issubdtype(samples.dtype, np.integer)
    mean, var, m4 = reference_moments(noise)
    assert moments_consistent(samples, mean, var, m4)
    a, b = reference_window(noise)
    assert chi_square_pvalue(samples, noise.pmf, a, b) > 1e-4


def test_sampler_shapes_and_seeding() -> None:
    """Randomness is an explicit Generator: the same seed gives the same draws (STYLE.md)."""
    noise = Skellam(3)
    draws = noise.sample(np.random.default_rng(7), (3, 4))
    assert draws.shape == (3, 4)
    assert np.array_equal(draws, noise.sample(np.random.default_rng(7), (3, 4)))
    assert noise.sample(np.random.default_rng(7), 0).shape == (0,)


# ---------------------------------------------------------------------------------------------
# Validation: every bad parameter raises an error naming it
# ---------------------------------------------------------------------------------------------

nan, inf = math.nan, math.inf

BAD_CONSTRUCTIONS: list[tuple[str, Callable[[], object], str, type[Exception]]] = [
    ("dlap-zero", lambda: DiscreteLaplace(0), "scale", ParameterError),
    ("dlap-negative", lambda: DiscreteLaplace(-1.0), "scale", ParameterError),
    ("dlap-nan", lambda: DiscreteLaplace(nan), "scale", ParameterError),
    ("dlap-inf", lambda: DiscreteLaplace(inf), "scale", ParameterError),
    ("dlap-string", lambda: DiscreteLaplace("2"), "scale", ParameterTypeError),  # type: ignore[arg-type]
    ("dlap-neither", lambda: DiscreteLaplace(), "scale", ParameterError),
    ("dlap-both", lambda: DiscreteLaplace(2.0, beta=0.5), "scale", ParameterError),
    ("dlap-beta-zero", lambda: DiscreteLaplace(beta=0), "beta", ParameterError),
    ("dlap-beta-one", lambda: DiscreteLaplace(beta=1), "beta", ParameterError),
    ("dlap-beta-big", lambda: DiscreteLaplace(beta=1.5), "beta", ParameterError),
    ("dlap-beta-nan", lambda: DiscreteLaplace(beta=nan), "beta", ParameterError),
    ("polya-r-zero", lambda: Polya(0, 0.5), "r", ParameterError),
    ("polya-r-negative", lambda: Polya(-1, 0.5), "r", ParameterError),
    ("polya-r-nan", lambda: Polya(nan, 0.5), "r", ParameterError),
    ("polya-r-inf", lambda: Polya(inf, 0.5), "r", ParameterError),
    ("polya-beta-zero", lambda: Polya(1, 0), "beta", ParameterError),
    ("polya-beta-one", lambda: Polya(1, 1), "beta", ParameterError),
    ("polya-beta-nan", lambda: Polya(1, nan), "beta", ParameterError),
    ("polya-beta-inf", lambda: Polya(1, inf), "beta", ParameterError),
    ("geometric-zero", lambda: Geometric(0), "beta", ParameterError),
    ("geometric-one", lambda: Geometric(1.0), "beta", ParameterError),
    ("geometric-nan", lambda: Geometric(nan), "beta", ParameterError),
    ("skellam-zero", lambda: Skellam(0), "variance", ParameterError),
    ("skellam-negative", lambda: Skellam(-2.0), "variance", ParameterError),
    ("skellam-nan", lambda: Skellam(nan), "variance", ParameterError),
    ("skellam-inf", lambda: Skellam(inf), "variance", ParameterError),
    ("skellam-offset", lambda: Skellam(2, offset=0.5), "offset", ParameterError),  # type: ignore[arg-type]
    ("skellam-mu1", lambda: Skellam.from_rates(0, 1), "mu1", ParameterError),
    ("skellam-mu2", lambda: Skellam.from_rates(1, -1), "mu2", ParameterError),
    ("skellam-mu1-nan", lambda: Skellam.from_rates(nan, 1), "mu1", ParameterError),
    ("skellam-mu2-inf", lambda: Skellam.from_rates(1, inf), "mu2", ParameterError),
    ("skellam-offset", lambda: Skellam.from_rates(1, 1, 0.5), "offset", ParameterError),  # type: ignore[arg-type]
    ("dg-zero", lambda: DiscreteGaussian(0), "sigma", ParameterError),
    ("dg-negative", lambda: DiscreteGaussian(-1), "sigma", ParameterError),
    ("dg-nan", lambda: DiscreteGaussian(nan), "sigma", ParameterError),
    ("dg-inf", lambda: DiscreteGaussian(inf), "sigma", ParameterError),
    ("sum-dg-sigma", lambda: SumOfDiscreteGaussians(0, 2), "sigma", ParameterError),
    ("sum-dg-sigma-nan", lambda: SumOfDiscreteGaussians(nan, 2), "sigma", ParameterError),
    ("sum-dg-count-zero", lambda: SumOfDiscreteGaussians(1, 0), "count", ParameterError),
    ("sum-dg-count-frac", lambda: SumOfDiscreteGaussians(1, 1.5), "count", ParameterError),  # type: ignore[arg-type]
    ("binomial-zero", lambda: CenteredBinomial(0), "trials", ParameterError),
    ("binomial-negative", lambda: CenteredBinomial(-3), "trials", ParameterError),
    ("binomial-frac", lambda: CenteredBinomial(2.5), "trials", ParameterError),  # type: ignore[arg-type]
    ("binomial-nan", lambda: CenteredBinomial(nan), "trials", ParameterError),  # type: ignore[arg-type]
    ("laplace-zero", lambda: Laplace(0), "scale", ParameterError),
    ("laplace-inf", lambda: Laplace(inf), "scale", ParameterError),
    ("laplace-negative", lambda: Laplace(-2.0), "scale", ParameterError),
    ("laplace-nan", lambda: Laplace(nan), "scale", ParameterError),
    ("gaussian-zero", lambda: Gaussian(0), "sigma", ParameterError),
    ("gaussian-inf", lambda: Gaussian(inf), "sigma", ParameterError),
    ("gaussian-nan", lambda: Gaussian(nan), "sigma", ParameterError),
    ("gaussian-negative", lambda: Gaussian(-1), "sigma", ParameterError),
    ("shifted-frac", lambda: Shifted(Skellam(1), 1.5), "shift", ParameterError),  # type: ignore[arg-type]
    ("shifted-continuous", lambda: Shifted(Laplace(1), 1), "base", ParameterError),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(
    ("build", "name", "error"),
    [case[1:] for case in BAD_CONSTRUCTIONS],
    ids=[case[0] for case in BAD_CONSTRUCTIONS],
)
def test_bad_parameters_raise_naming_the_parameter(
    build: Callable[[], object], name: str, error: type[Exception]
) -> None:
    """Zero, negative, NaN and infinite parameters raise (never NaN later), naming the parameter."""
    with pytest.raises(error) as info:
        build()
    assert getattr(info.value, "name", None) == name
    assert name in str(info.value)
    # The hierarchy: ParameterError is a ValueError, ParameterTypeError a TypeError.
    assert isinstance(info.value, ValueError if error is ParameterError else TypeError)


BAD_CALLS: list[tuple[str, Callable[[], object], str]] = [
    ("pmf-exact-frac", lambda: Skellam(2).pmf_exact(1.5), "x"),  # type: ignore[arg-type]
    ("pmf-exact-dps-low", lambda: Skellam(2).pmf_exact(0, dps=2), "dps"),
    ("pmf-exact-dps-high", lambda: Skellam(2).pmf_exact(0, dps=5000), "dps"),
    ("pmf-intervals-order", lambda: DiscreteGaussian(1).pmf_intervals(3, 1), "hi"),
    ("sf-bound-frac", lambda: DiscreteLaplace(1).sf_bound(0.5), "t"),  # type: ignore[arg-type]
    ("cdf-bound-nan", lambda: DiscreteLaplace(1).cdf_bound(nan), "t"),  # type: ignore[arg-type]
    ("tail-bound-negative", lambda: DiscreteLaplace(1).tail_bound(-1), "t"),
    ("tail-bound-nan", lambda: Skellam(1).tail_bound(nan), "t"),
    ("sample-negative", lambda: Skellam(1).sample(np.random.default_rng(0), -1), "size"),
    ("gaussian-tail-negative", lambda: Gaussian(1).tail_bound(-0.5), "t"),
]


@pytest.mark.parametrize(("call", "name"), [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS])
def test_bad_arguments_raise_naming_the_parameter(call: Callable[[], object], name: str) -> None:
    """Bad method arguments (non-integer points, precision out of range, ...) raise too."""
    with pytest.raises((ParameterError, ParameterTypeError)) as info:
        call()
    assert getattr(info.value, "name", None) == name


@pytest.mark.parametrize(
    "noise",
    [
        DiscreteLaplace(1e-3),
        DiscreteLaplace(1e6),
        Skellam(1e-6),
        Skellam(1e4),
        Polya(1e-6, 0.999),
        DiscreteGaussian(1e-3),
        DiscreteGaussian(1e4),
        CenteredBinomial(10**5),
    ],
    ids=repr,
)
def test_extreme_parameters_give_numbers_not_nan(noise: LatticeNoise) -> None:
    """Valid but extreme parameters give probabilities in [0, 1], never NaN."""
    for value in noise.pmf_intervals(0, 5, dps=15):
        lo, hi = mp.make_mpf(value._mpi_[0]), mp.make_mpf(value._mpi_[1])
        assert not mp.isnan(lo)
        assert not mp.isnan(hi)
        assert 0 <= lo <= hi <= 1
    assert not math.isnan(noise.variance())
    assert 0 <= noise.tail_bound(3) <= 1


@pytest.mark.parametrize(
    ("noise", "name"),
    [
        (DiscreteLaplace(1e30), "scale"),
        (DiscreteGaussian(1e30), "sigma"),
        (Skellam(1e19), "variance"),
        (Polya(0.5, 1 - 1e-15 / 4), "mean"),
    ],
)
def test_float_samplers_refuse_noise_they_cannot_draw(noise: Any, name: str) -> None:
    """numpy returned zeros for DiscreteLaplace(1e30) and DiscreteGaussian(1e30), and a Poisson
    rate past 9.2e18 was numpy's 'lam value too large'."""
    with pytest.raises(ParameterError, match=name):
        noise.sample(np.random.default_rng(0), 3)


@pytest.mark.parametrize(
    ("noise", "name"),
    [(DiscreteLaplace(1e30), "scale"), (DiscreteGaussian(1e30), "sigma"), (Skellam(1e9), "rate")],
)
def test_exact_samplers_refuse_work_they_cannot_finish(noise: Any, name: str) -> None:
    """DiscreteLaplace(1e30).sample_exact overflowed int64; Skellam(1e9) needs ~10^9 geometric
    draws per variate (it ran for minutes); both are refused up front, naming the parameter."""
    with pytest.raises(ParameterError, match=name):
        noise.sample_exact(np.random.default_rng(0), 3)


def test_samplers_at_their_limits_still_draw() -> None:
    rng = np.random.default_rng(1)
    assert DiscreteLaplace(1e15).sample(rng, 4).dtype == np.int64
    assert np.all(np.abs(DiscreteGaussian(1e17).sample_exact(rng, 4)) < 2**62)
    assert Skellam(1e6).sample_exact(rng, 2).shape == (2,)
