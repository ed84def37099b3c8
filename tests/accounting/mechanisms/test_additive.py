"""Tests of :mod:`accounting.mechanisms.additive`: ``AdditiveNoise``, the exact answers of one release.

The exact (certified) answers are checked against the published closed forms they must never
exceed (Agarwal, Kairouz & Liu 2021 Thm 3.5; Canonne, Kamath & Steinke 2020; Kairouz, Liu &
Steinke 2021 Prop. 13), against exact identities derived in the docstrings, and against
brute-force sums (``test_divergence.py``); the Laplace baseline against closed forms recomputed
here in :mod:`mpmath`. Expected values are never outputs of the code under test.
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
    DiscreteGaussian,
    DiscreteLaplace,
    DistributedSum,
    Laplace,
    LatticeNoise,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
    UnsupportedError,
    bounds,
)
from tests.accounting.mechanisms.support import DPS, FAST, Mpf, overlap
from tests.accounting.noise.reference import REF_DPS, assert_encloses
from tests.accounting.test_divergence import brute_hockey, brute_renyi, float_above

# ---------------------------------------------------------------------------------------------
# Exact values never exceed the published closed forms
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@given(variance=st.floats(0.5, 60), sensitivity=st.integers(1, 3), alpha=st.integers(2, 8))
@FAST
def test_skellam_rdp_is_below_lemma3(variance: float, sensitivity: int, alpha: int) -> None:
    """Spec §3.2, Lemma 3 (AKL 2021 Thm 3.5) bounds the exact Skellam RDP at integer orders."""
    exact = AdditiveNoise(Skellam(variance), sensitivity).rdp(alpha, DPS)
    bound = bounds.skellam_rdp_akl(alpha, variance, sensitivity)
    assert exact.hi <= bound
    # The exact value is what it claims to be (brute force), so the comparison is not vacuous.
    noise = Skellam(variance)
    assert_encloses(exact.lo, exact.hi, brute_renyi(Shifted(noise, sensitivity), noise, alpha), rel=1e-30)


@given(
    variance=st.floats(0.5, 40),
    users=st.integers(2, 50),
    sensitivity=st.integers(1, 3),
    alpha=st.integers(2, 6),
)
@FAST
def test_distributed_skellam_rdp_is_below_lemma3_with_total_variance(
    variance: float, users: int, sensitivity: int, alpha: int
) -> None:
    """Spec §3.2: n users adding Sk(0, σ²/n) each is Sk(0, σ²); Lemma 3 uses the total σ²."""
    share = Fraction(variance) / users
    exact = DistributedSum(Skellam(share), users, sensitivity).rdp(alpha, DPS)
    assert exact.hi <= bounds.skellam_rdp_akl(alpha, variance, sensitivity)


@given(sigma=st.floats(0.3, 5), sensitivity=st.integers(1, 3), alpha=st.floats(1.1, 10))
@FAST
def test_discrete_gaussian_rdp_is_below_cks(sigma: float, sensitivity: int, alpha: float) -> None:
    """CKS 2020 (spec §2.5 Fact 2): D_α(N_Z(Δ, σ²) || N_Z(0, σ²)) <= αΔ²/(2σ²) for every α > 1."""
    exact = AdditiveNoise(DiscreteGaussian(sigma), sensitivity).rdp(alpha, DPS)
    with mp.workdps(REF_DPS):  # α·ρ exactly: a float product could round below the bound
        assert exact.lo <= mp.mpf(alpha) * bounds.discrete_gaussian_rho_cks(sigma, sensitivity)


@given(sigma=st.floats(0.3, 5), sensitivity=st.integers(1, 3), alpha=st.integers(2, 9))
@FAST
def test_discrete_gaussian_rdp_at_integer_orders_is_exactly_the_gaussian_value(
    sigma: float, sensitivity: int, alpha: int
) -> None:
    """At integer α the CKS bound is attained: D_α = αΔ²/(2σ²) exactly.

    Σ_x P(x-Δ)^α P(x)^{1-α} = e^{α(α-1)Δ²/(2σ²)} Σ_x e^{-(x-αΔ)²/(2σ²)} / Z, and for integer
    αΔ the shifted theta sum equals Z, the normalizer.
    """
    exact = AdditiveNoise(DiscreteGaussian(sigma), sensitivity).rdp(alpha, DPS)
    with mp.workdps(REF_DPS):
        assert_encloses(exact.lo, exact.hi, alpha * mp.mpf(sensitivity) ** 2 / (2 * mp.mpf(sigma) ** 2))
    assert exact.hi - exact.lo <= 1e-12 * exact.hi


@given(
    sigma=st.floats(0.5, 2),
    users=st.integers(2, 4),
    sensitivity=st.integers(1, 2),
    alpha=st.floats(1.2, 6),
)
@FAST
def test_sum_of_discrete_gaussians_rdp_is_below_lemma4(
    sigma: float, users: int, sensitivity: int, alpha: float
) -> None:
    """Spec §3.3, Lemma 4 (KLS 2021 Prop. 13, σ >= 1/2): D_α <= α ε²/2 with ε from ξ."""
    exact = DistributedSum(DiscreteGaussian(sigma), users, sensitivity).rdp(alpha, DPS)
    with mp.workdps(REF_DPS):
        assert exact.lo <= mp.mpf(alpha) * bounds.sum_discrete_gaussians_rho_kls(sigma, users, sensitivity)
    assert exact.hi - exact.lo <= 1e-10 * exact.hi  # and the comparison is not vacuous


@given(scale=st.floats(0.05, 100), sensitivity=st.integers(1, 5))
@FAST
def test_discrete_laplace_pure_epsilon_is_fact3(scale: float, sensitivity: int) -> None:
    """Spec §3.1, Fact 3: Lap_Z(b) noise is (Δ/b, 0)-DP, and no smaller ε works."""
    pure = AdditiveNoise(DiscreteLaplace(scale), sensitivity).pure_epsilon(DPS)
    closed = bounds.discrete_laplace_pure_epsilon(scale, sensitivity)  # rounded up
    assert pure.lo <= closed <= float_above(pure.hi)
    with mp.workdps(REF_DPS):
        assert_encloses(pure.lo, pure.hi, mp.mpf(sensitivity) / mp.mpf(scale))


# ---------------------------------------------------------------------------------------------
# The continuous baselines: exact closed forms
# ---------------------------------------------------------------------------------------------


def _laplace_delta(scale: float, epsilon: float, sensitivity: float) -> Mpf:
    """P(Y + Δ > c) - e^ε P(Y > c), Y ~ Lap(0, b), c = (εb + Δ)/2 where the loss crosses ε."""
    with mp.workdps(REF_DPS):
        b, e, d = mp.mpf(scale), mp.mpf(epsilon), mp.mpf(sensitivity)
        if e >= d / b:
            return mp.zero  # the loss never exceeds Δ/b

        def survival(t: Mpf) -> Mpf:
            return mp.exp(-t / b) / 2 if t >= 0 else 1 - mp.exp(t / b) / 2

        c = (e * b + d) / 2
        return survival(c - d) - mp.exp(e) * survival(c)


def _laplace_rdp(alpha: float, scale: float, sensitivity: float) -> Mpf:
    """Mironov 2017 Table II with λ = b/Δ."""
    with mp.workdps(REF_DPS):
        a, r = mp.mpf(alpha), mp.mpf(sensitivity) / mp.mpf(scale)
        inner = a / (2 * a - 1) * mp.exp((a - 1) * r) + (a - 1) / (2 * a - 1) * mp.exp(-a * r)
        return mp.log(inner) / (a - 1)


@pytest.mark.parametrize(
    ("scale", "epsilon", "sensitivity"), [(1.0, 0.5, 1.0), (2.0, 0.1, 1.0), (0.5, 1.9, 1.0), (3.0, 1.0, 2.5)]
)
def test_laplace_mechanism_matches_closed_forms(scale: float, epsilon: float, sensitivity: float) -> None:
    """The Laplace baseline (spec §2.6): δ(ε) by the CDF, RDP by Mironov 2017 Table II, ε₀ = Δ/b."""
    mech = AdditiveNoise(Laplace(scale), sensitivity)
    delta = mech.delta(epsilon)
    assert_encloses(delta.lo, delta.hi, _laplace_delta(scale, epsilon, sensitivity), rel=1e-30)
    target = 1e-3
    eps = mech.epsilon(target)
    assert _laplace_delta(scale, float_above(eps.hi), sensitivity) <= target
    if eps.lo > 0:
        assert _laplace_delta(scale, float(eps.lo) * (1 - 1e-9), sensitivity) > target
    rdp = mech.rdp(3.5)
    assert_encloses(rdp.lo, rdp.hi, _laplace_rdp(3.5, scale, sensitivity), rel=1e-30)
    pure = mech.pure_epsilon()
    with mp.workdps(REF_DPS):
        assert_encloses(pure.lo, pure.hi, mp.mpf(sensitivity) / mp.mpf(scale), rel=1e-30)


# ---------------------------------------------------------------------------------------------
# More noise, more privacy
# ---------------------------------------------------------------------------------------------


@given(
    variance=st.floats(0.5, 50),
    factor=st.floats(1.05, 4),
    sensitivity=st.integers(1, 3),
    log_delta=st.floats(-10, -2),
)
@FAST
def test_skellam_epsilon_decreases_with_variance(
    variance: float, factor: float, sensitivity: int, log_delta: float
) -> None:
    """Sk(0, fv) = Sk(0, v) + independent Sk(0, (f-1)v) (spec §2.4): post-processing."""
    delta = 10.0**log_delta
    small = AdditiveNoise(Skellam(variance), sensitivity).epsilon(delta, DPS)
    large = AdditiveNoise(Skellam(variance * factor), sensitivity).epsilon(delta, DPS)
    assert large.lo <= small.hi


@pytest.mark.slow
@given(
    scale=st.floats(0.2, 8),
    factor=st.floats(1.05, 3),
    sensitivity=st.integers(1, 3),
    log_delta=st.floats(-10, -2),
)
@FAST
def test_discrete_laplace_epsilon_decreases_with_scale(
    scale: float, factor: float, sensitivity: int, log_delta: float
) -> None:
    """More discrete Laplace noise gives a smaller ε(δ) and a strictly smaller pure ε (spec §3.1)."""
    delta = 10.0**log_delta
    small = AdditiveNoise(DiscreteLaplace(scale), sensitivity).epsilon(delta, DPS)
    large = AdditiveNoise(DiscreteLaplace(scale * factor), sensitivity).epsilon(delta, DPS)
    assert large.lo <= small.hi
    assert AdditiveNoise(DiscreteLaplace(scale * factor), sensitivity).pure_epsilon(DPS).hi < (
        AdditiveNoise(DiscreteLaplace(scale), sensitivity).pure_epsilon(DPS).lo
    )


@given(
    sigma=st.floats(1, 4),
    factor=st.floats(1.05, 1.6),
    sensitivity=st.integers(1, 3),
    ratio=st.floats(0, 0.75),
)
@FAST
def test_discrete_gaussian_delta_decreases_with_sigma_where_the_lattice_is_fine(
    sigma: float, factor: float, sensitivity: int, ratio: float
) -> None:
    """δ(ε) decreases in σ for σ >= 1 and ε <= 0.75Δ; *not* in general (see the next test).

    N_Z(0, σ₂²) is not N_Z(0, σ₁²) plus independent noise, so there is no post-processing
    argument, and δ(ε) is a sum over the lattice points beyond εσ²/Δ + Δ/2, where consecutive
    terms shrink by about e^{-ε/Δ}. Only while ε/Δ is small does that sum behave like the
    continuous Gaussian integral, which is monotone. The regime is empirical: a scan of
    bounds.discrete_gaussian_delta_cks over σ in [1, 6.5] (step 0.002), ε <= Δ and Δ <= 3
    found no increase, while ε = 1.4Δ (Δ = 1) already has some (σ = 1.06, 1.35).
    """
    epsilon = ratio * sensitivity
    small = AdditiveNoise(DiscreteGaussian(sigma), sensitivity).delta(epsilon, DPS)
    large = AdditiveNoise(DiscreteGaussian(sigma * factor), sensitivity).delta(epsilon, DPS)
    assert large.lo <= small.hi


def test_discrete_gaussian_privacy_is_not_monotone_in_sigma() -> None:
    """A lattice effect: more discrete-Gaussian noise can give *less* privacy.

    At ε = 4, σ = 0.375 gives δ ≈ 0.027 but σ = 0.5625 gives δ ≈ 0.077 (also documented at
    bounds.discrete_gaussian_delta_cks). Nor does σ >= 1 cure it: at δ = 1e-10,
    σ = 1.0625 gives ε ≈ 5.757 but σ = 1.0625² gives ε ≈ 5.821 (at ε = 5.79 the first is
    (ε, 1e-10)-DP and the second is not). All values are confirmed by brute force.
    """
    small = AdditiveNoise(DiscreteGaussian(0.375)).delta(4.0, DPS)
    large = AdditiveNoise(DiscreteGaussian(0.5625)).delta(4.0, DPS)
    for sigma, enclosure in ((0.375, small), (0.5625, large)):
        noise = DiscreteGaussian(sigma)
        assert_encloses(enclosure.lo, enclosure.hi, brute_hockey(Shifted(noise, 1), noise, 4.0), rel=1e-30)
    assert small.hi < 0.03 < 0.07 < large.lo

    less, more = DiscreteGaussian(1.0625), DiscreteGaussian(1.0625**2)
    eps_less = AdditiveNoise(less).epsilon(1e-10, DPS)
    eps_more = AdditiveNoise(more).epsilon(1e-10, DPS)
    assert eps_less.hi < 5.76 < 5.82 < eps_more.lo
    assert brute_hockey(Shifted(less, 1), less, 5.79) < 1e-10 < brute_hockey(Shifted(more, 1), more, 5.79)


# ---------------------------------------------------------------------------------------------
# Sensitivity > 1 and both directions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("noise", "sensitivity"),
    [
        (Skellam.from_rates(3, 1, 2), 2),
        (DiscreteLaplace(1.5), 3),
        (DiscreteGaussian(0.9), 2),
        (Polya(2, 0.4), 1),
    ],
    ids=repr,
)
@pytest.mark.parametrize("epsilon", [0.2, 1.0])
def test_delta_is_the_worst_neighbouring_pair(noise: LatticeNoise, sensitivity: int, epsilon: float) -> None:
    """δ(ε) = max over shifts 0 < |k| <= Δ of both directions (spec §1.2, replace-one).

    The library computes only k = ±Δ (log-concave noise); brute force tries every k.
    """
    shifts = [k for k in range(-sensitivity, sensitivity + 1) if k]
    worst = max(brute_hockey(Shifted(noise, k), noise, epsilon) for k in shifts)
    got = AdditiveNoise(noise, sensitivity).delta(epsilon, DPS)
    assert_encloses(got.lo, got.hi, worst, rel=1e-30, abs_tol=1e-30)


# ---------------------------------------------------------------------------------------------
# zCDP
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("sigma", "sensitivity"), [(1.1, 1), (5.0, 1), (0.7, 2)])
def test_discrete_gaussian_zcdp_rho_is_cks(sigma: float, sensitivity: int) -> None:
    """CKS 2020: sup_α D_α/α = Δ²/(2σ²), attained at integer α (see above).

    Since the supremum is attained, the lower end D_α.lo/α must be rounded *down*: rounded
    to nearest it exceeds Δ²/(2σ²) for σ = 1.1 and σ = 5.
    """
    rho = AdditiveNoise(DiscreteGaussian(sigma), sensitivity).zcdp_rho(dps=15)
    with mp.workdps(REF_DPS):
        assert_encloses(rho.lo, rho.hi, mp.mpf(sensitivity) ** 2 / (2 * mp.mpf(sigma) ** 2))
    assert rho.hi <= 1.02 * rho.lo  # the default rtol is 1%


def test_discrete_laplace_zcdp_rho_respects_pure_dp() -> None:
    """ε-DP implies (ε²/2)-zCDP (Bun-Steinke 2016 Prop. 3.3): Lap_Z(2) with Δ = 1 has ρ <= 1/8."""
    rho = AdditiveNoise(DiscreteLaplace(2.0)).zcdp_rho(dps=15)
    assert rho.lo <= 0.125
    assert rho.lo > 0.1  # D_α/α at a single order already gives most of it


# ---------------------------------------------------------------------------------------------
# Issue 15 §2: heavy accounting at realistic sizes
# ---------------------------------------------------------------------------------------------


def _sum_of_discrete_gaussians_pmf(sigma: float, count: int, reach: int) -> dict[int, Mpf]:
    """``P(Z = z)`` for ``count`` discrete Gaussians by direct convolution in mpmath (REF_DPS)."""
    s2 = mp.mpf(sigma) ** 2
    width = reach
    weights = {x: mp.exp(-mp.mpf(x * x) / (2 * s2)) for x in range(-width, width + 1)}
    total = mp.fsum(weights.values())
    single = {x: w / total for x, w in weights.items()}
    out = {0: mp.one}
    for _ in range(count):
        nxt: dict[int, Mpf] = {}
        for z, pz in out.items():
            for x, px in single.items():
                if abs(z + x) <= reach:
                    nxt[z + x] = nxt.get(z + x, mp.zero) + pz * px
        out = nxt
    return out


def test_sum_of_discrete_gaussians_rdp_orders_share_one_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 15 §2.2: the Rényi sums at many orders reuse one convolution table (it was rebuilt
    per order: the RDP route took over a minute for 10 shares of σ = 2), and each order still
    encloses the brute-force D_α of three shares of σ = 1.5 summed in mpmath at 60 digits."""
    from accounting.noise import sum_of_discrete_gaussians as module

    builds: list[int] = []
    original = module._build_sum_table

    def counted(sigma: Any, n: int, reach: int, prec: int) -> Any:
        builds.append(reach)
        return original(sigma, n, reach, prec)

    monkeypatch.setattr(module, "_build_sum_table", counted)
    module._SUM_TABLES.clear()
    mech = AdditiveNoise(SumOfDiscreteGaussians(1.5, 3), 1)
    orders = [2, 3.5, 8, 20, 40]
    got = {a: mech.rdp(a, 20) for a in orders}
    assert len(builds) <= 3, builds
    with mp.workdps(REF_DPS):
        pmf = _sum_of_discrete_gaussians_pmf(1.5, 3, 160)
        for a in orders:
            alpha = mp.mpf(a)
            total = mp.fsum(pmf[x - 1] ** alpha * pmf[x] ** (1 - alpha) for x in range(-159, 160))
            exact = mp.log(total) / (alpha - 1)
            assert got[a].lo <= exact <= got[a].hi, (a, got[a], exact)
            assert got[a].relative_width < mp.mpf(10) ** -15


@pytest.mark.slow
def test_discrete_gaussian_of_any_sigma_by_its_tails() -> None:
    """Issue 15 §2.6: from σ = 1000 the single-release ε and δ of the discrete Gaussian come
    from two tail masses (CKS 2020 Thm 7; Euler–Maclaurin tails), no window: they agree with
    the window sums (an independent code path) at σ = 1000, and at σ = 2e4, whose window sum was
    refused (about 5e5 lattice points), with the continuous Gaussian's Balle–Wang ε to 1e-6."""
    from accounting.divergence import epsilon_for_delta, hockey_stick

    noise = DiscreteGaussian(1000.0)
    mech = AdditiveNoise(noise, 1)
    by_tails = mech.epsilon(1e-6)
    by_window = epsilon_for_delta(Shifted(noise, 1), noise, 1e-6, 20)
    assert overlap(by_tails, by_window)
    assert by_tails.relative_width < mp.mpf(10) ** -15
    eps = float(by_tails.hi) / 3
    assert overlap(mech.delta(eps), hockey_stick(Shifted(noise, 1), noise, eps, 20))
    wide = AdditiveNoise(DiscreteGaussian(2e4), 1)
    got = wide.epsilon(1e-6)
    continuous = bounds.gaussian_epsilon_analytic(2e4, 1e-6, 1.0)
    assert float(got.hi) == pytest.approx(continuous, rel=1e-6)
    back = wide.delta(got.upper)
    assert back.lo <= 1e-6
    assert wide.delta(float(got.lo) * (1 - 1e-9)).hi > 1e-6


def test_a_refused_window_names_the_routes_that_can_answer() -> None:
    """The refusal of a too-wide window says what can answer it (it spoke of compositions of
    discrete Laplace noise whatever the noise), and that route does answer."""
    from accounting import Accountant

    mech = AdditiveNoise(Skellam(1e12), 1)
    with pytest.raises(UnsupportedError, match="route='published'") as refused:
        mech.epsilon(1e-6)
    assert "discrete Laplace" not in str(refused.value)
    with pytest.raises(UnsupportedError, match="route='published'"):
        mech.rdp(4.0)
    answer = Accountant().compose(mech, 3).epsilon(1e-6, route="published")
    assert 0 < float(answer) < 1e-2
