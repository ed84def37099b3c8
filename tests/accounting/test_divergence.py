"""Tests of :mod:`accounting.divergence`: hockey-stick δ(ε), ε(δ) and Rényi divergences.

The pairs are mostly ``(X + Δ, X)`` (:class:`~accounting.noise.Shifted`), the outputs of an
additive-noise mechanism on two neighbouring inputs (spec §1.2, §3.1-§3.3). Every enclosure
is compared with a brute-force sum in :mod:`mpmath` at 50 digits over a window whose
left-out mass is below 10^-30, built from the independent reference PMFs of
``noise/reference.py`` (never from the library's own tables); the library runs at 15-20 digits.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import (
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Enclosure,
    Geometric,
    LatticeNoise,
    ParameterError,
    ParameterTypeError,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
    UnsupportedError,
    bounds,
    epsilon_for_delta,
    hockey_stick,
    renyi,
)
from accounting.divergence import discrete_gaussian_delta
from tests.accounting.noise.reference import (
    REF_DPS,
    as_mpf,
    assert_encloses,
    reference_table,
    reference_window,
)

FAST = settings(max_examples=20, deadline=None)
DPS = 18

Mpf = Any

# ---------------------------------------------------------------------------------------------
# Brute force
# ---------------------------------------------------------------------------------------------


def _tables(p: LatticeNoise, q: LatticeNoise, extra: int = 0) -> tuple[list[Mpf], list[Mpf]]:
    """Reference PMFs of P and Q on the union of their reference windows (widened by ``extra``)."""
    ap, bp = reference_window(p, extra)
    aq, bq = reference_window(q, extra)
    a, b = min(ap, aq), max(bp, bq)
    with mp.workdps(REF_DPS):
        return reference_table(p, a, b), reference_table(q, a, b)


def brute_hockey(p: LatticeNoise, q: LatticeNoise, epsilon: float | Mpf) -> Mpf:
    """Σ_x max(0, P(x) - e^ε Q(x)), term by term."""
    ps, qs = _tables(p, q)
    with mp.workdps(REF_DPS):
        e = mp.exp(mp.mpf(epsilon))
        return mp.fsum(max(mp.zero, px - e * qx) for px, qx in zip(ps, qs, strict=True))


def brute_total_variation(p: LatticeNoise, q: LatticeNoise) -> Mpf:
    """½ Σ |P(x) - Q(x)| (= δ(0), by a different formula)."""
    ps, qs = _tables(p, q)
    with mp.workdps(REF_DPS):
        return mp.fsum(abs(px - qx) for px, qx in zip(ps, qs, strict=True)) / 2


def brute_renyi(p: LatticeNoise, q: LatticeNoise, alpha: float) -> Mpf:
    """ln(Σ P^α Q^{1-α})/(α-1), or ``inf`` when P has mass where Q has none.

    The windows are widened by about αΔ: the tilted terms are centred near αΔ. The terms at
    the window's ends are checked to be negligible, so a too-small window fails loudly.
    """
    ps, qs = _tables(p, q, extra=math.ceil(alpha * 4) + 5)
    with mp.workdps(REF_DPS):
        a = mp.mpf(alpha)
        terms = []
        for px, qx in zip(ps, qs, strict=True):
            if px == 0:
                terms.append(mp.zero)
            elif qx == 0:
                return mp.inf
            else:
                terms.append(px**a * qx ** (1 - a))
        total = mp.fsum(terms)
        assert max(terms[0], terms[-1]) <= total * mp.mpf(10) ** -35, "reference window too small"
        return mp.log(total) / (a - 1)


def brute_max_loss(p: LatticeNoise, q: LatticeNoise) -> Mpf:
    """max_x ln(P(x)/Q(x)) over the window (``inf`` when P has mass where Q has none)."""
    ps, qs = _tables(p, q)
    with mp.workdps(REF_DPS):
        best = mp.ninf
        for px, qx in zip(ps, qs, strict=True):
            if px > 0:
                if qx == 0:
                    return mp.inf
                best = max(best, mp.log(px / qx))
        return best


def _mass_where_q_vanishes(p: LatticeNoise, q: LatticeNoise) -> Mpf:
    ps, qs = _tables(p, q)
    with mp.workdps(REF_DPS):
        return mp.fsum(px for px, qx in zip(ps, qs, strict=True) if qx == 0)


def float_above(x: Mpf) -> float:
    """The smallest float >= ``x``, by an exact comparison (``mp.mpf`` of a float is exact).

    Written out here so that the checks do not rely on the rounding code under test
    (``Enclosure.upper``, checked in ``test_mechanisms.py``).
    """
    f = float(x)
    if mp.mpf(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def _shift_pair(noise: LatticeNoise, shift: int) -> tuple[LatticeNoise, LatticeNoise]:
    return Shifted(noise, shift), noise


# ---------------------------------------------------------------------------------------------
# Strategies: every lattice family, small parameters (each example well under a second)
# ---------------------------------------------------------------------------------------------


def noises() -> st.SearchStrategy[LatticeNoise]:
    return st.one_of(
        st.floats(0.3, 6).map(DiscreteLaplace),
        st.floats(0.1, 0.9).map(lambda q: DiscreteLaplace(beta=q)),
        st.floats(0.1, 0.8).map(Geometric),
        st.builds(Polya, st.floats(0.2, 4), st.floats(0.1, 0.8)),
        st.builds(Skellam, st.floats(0.3, 30)),
        st.builds(Skellam.from_rates, st.floats(0.2, 15), st.floats(0.2, 15), st.integers(-3, 3)),
        st.floats(0.3, 5).map(DiscreteGaussian),
        st.builds(SumOfDiscreteGaussians, st.floats(0.3, 1.5), st.integers(2, 3)),
        st.integers(1, 40).map(CenteredBinomial),
    )


shifts = st.integers(-3, 3).filter(lambda k: k != 0)
orders = st.one_of(st.integers(2, 6).map(float), st.floats(1.05, 8))


# ---------------------------------------------------------------------------------------------
# Hockey-stick divergence δ(ε)
# ---------------------------------------------------------------------------------------------


@given(noise=noises(), shift=shifts, epsilon=st.floats(0, 3))
@FAST
def test_hockey_stick_encloses_brute_force(noise: LatticeNoise, shift: int, epsilon: float) -> None:
    """δ(ε) of (X + Δ, X) (spec §1.2: the (ε, δ)-DP profile) contains the brute-force sum."""
    p, q = _shift_pair(noise, shift)
    enclosure = hockey_stick(p, q, epsilon, dps=DPS)
    reference = brute_hockey(p, q, epsilon)
    assert_encloses(enclosure.lo, enclosure.hi, reference, rel=1e-35, abs_tol=1e-30)
    # Relative to δ, plus an absolute 10^-(dps+5): where P = e^ε Q exactly (δ = 0 at ε = Δ/b for
    # the discrete Laplace) the interval differences straddle 0 and cannot cancel.
    assert enclosure.hi - enclosure.lo <= mp.mpf(10) ** -(DPS - 3) * reference + mp.mpf(10) ** -(DPS + 5)


GENERAL_PAIRS: list[tuple[LatticeNoise, LatticeNoise]] = [
    (DiscreteLaplace(2), DiscreteGaussian(1.5)),
    (Skellam(3), DiscreteLaplace(1.2)),
    (CenteredBinomial(6), CenteredBinomial(8)),
    (CenteredBinomial(8), CenteredBinomial(6)),  # P has mass outside Q's support
    (Shifted(Skellam(4), 2), Shifted(Skellam(4), 5)),
    (Polya(2, 0.5), Geometric(0.5)),
    (DiscreteGaussian(2), SumOfDiscreteGaussians(1.0, 4)),
    (Skellam.from_rates(2, 1, 1), Skellam.from_rates(1, 2, -1)),
]


@pytest.mark.parametrize(("p", "q"), GENERAL_PAIRS, ids=repr)
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.5])
def test_hockey_stick_general_pairs(p: LatticeNoise, q: LatticeNoise, epsilon: float) -> None:
    """Any two lattice distributions, not only shifts; δ(0) is the total variation distance."""
    enclosure = hockey_stick(p, q, epsilon, dps=DPS)
    assert_encloses(enclosure.lo, enclosure.hi, brute_hockey(p, q, epsilon), rel=1e-35, abs_tol=1e-30)
    if epsilon == 0:
        assert_encloses(enclosure.lo, enclosure.hi, brute_total_variation(p, q), rel=1e-35, abs_tol=1e-30)


@given(noise=noises(), shift=shifts, e1=st.floats(0, 4), e2=st.floats(0, 4))
@FAST
def test_hockey_stick_nonincreasing_in_epsilon(noise: LatticeNoise, shift: int, e1: float, e2: float) -> None:
    """(ε, δ)-DP (spec §1.2) is monotone: δ(ε) = Σ max(0, P - e^ε Q) cannot grow with ε."""
    small, large = sorted((e1, e2))
    p, q = _shift_pair(noise, shift)
    # δ(large) <= δ(small) for the true values, so the enclosures must allow it.
    assert hockey_stick(p, q, large, dps=DPS).lo <= hockey_stick(p, q, small, dps=DPS).hi


@pytest.mark.slow
@given(sigma=st.floats(0.3, 6), epsilon=st.floats(0, 5), sensitivity=st.integers(1, 4))
@FAST
def test_discrete_gaussian_delta_agrees_with_cks_theorem7(
    sigma: float, epsilon: float, sensitivity: int
) -> None:
    """CKS 2020 Thm 7 (bounds.discrete_gaussian_delta_cks: the term-by-term walk, rounded up) is the
    generic window sum of :func:`hockey_stick` in both directions (two methods, one number)."""
    noise = DiscreteGaussian(sigma)
    cks = bounds.discrete_gaussian_delta_cks(sigma, epsilon, sensitivity)
    for shift in (sensitivity, -sensitivity):  # the reverse pair has the same δ (reflection)
        enclosure = hockey_stick(Shifted(noise, shift), noise, epsilon, dps=DPS)
        with mp.workdps(REF_DPS):
            assert enclosure.lo <= cks  # CKS's value is rounded up
            assert mp.mpf(cks) <= enclosure.hi * (1 + mp.mpf(10) ** -15) + mp.mpf(10) ** -300


def _theorem7_brute_force(sigma: float, epsilon: float, shift: int) -> Mpf:
    """``Σ_{x > c} [w(x - Δ) - e^ε w(x)] / Σ_x w(x)``, ``w(u) = e^{-u²/(2σ²)}``, at 60 digits over
    windows 40σ + 30 wide around 0, ``Δ`` and the threshold ``c = εσ²/Δ + Δ/2``."""
    with mp.workdps(60):
        s2 = mp.mpf(sigma) ** 2
        width = int(40 * sigma) + 30
        c = mp.mpf(epsilon) * s2 / shift + mp.mpf(shift) / 2
        first = int(mp.floor(c)) + 1
        e = mp.exp(mp.mpf(epsilon))

        def w(u: int) -> Mpf:
            return mp.exp(-(mp.mpf(u) ** 2) / (2 * s2))

        # Terms fall away from Δ (and from 0): past these windows each is below e^{-800} of the
        # largest term, which is the one at Δ, or the first one when the threshold is beyond Δ.
        start = max(first, shift)
        near = {
            *range(-width, width + 1),
            *range(shift - width, shift + width + 1),
            *range(start, start + width),
        }
        top = mp.fsum(w(x - shift) - e * w(x) for x in near if x >= first)
        return top / mp.fsum(w(x) for x in range(-width, width + 1))


@given(sigma=st.floats(0.2, 40), epsilon=st.floats(0, 6), shift=st.sampled_from([1, 2, 3, 7, 10**6]))
@FAST
def test_discrete_gaussian_delta_by_theorem7_encloses_brute_force(
    sigma: float, epsilon: float, shift: int
) -> None:
    """The one CKS 2020 Thm 7 (below TAIL_SUM_SIGMA: the term-by-term walk) encloses the theorem's
    sum at 60 digits, with relative width 1e-15 even where δ is 1e-300 (where a window sum's
    absolute truncation would swamp it), and a shift of 10^6 lattice points (no window at all)."""
    enclosure = discrete_gaussian_delta(DiscreteGaussian(sigma), shift, epsilon, dps=DPS)
    brute = _theorem7_brute_force(sigma, epsilon, shift)
    assert_encloses(enclosure.lo, enclosure.hi, brute, rel=1e-50, abs_tol=1e-5000)
    with mp.workdps(REF_DPS):
        assert enclosure.hi - enclosure.lo <= brute * mp.mpf(10) ** -15
    assert bounds.discrete_gaussian_delta_cks(sigma, epsilon, shift) >= float(brute)


# ---------------------------------------------------------------------------------------------
# ε(δ)
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@given(noise=noises(), shift=shifts, log_delta=st.floats(-12, -0.5))
@settings(max_examples=30, deadline=None)
def test_epsilon_for_delta_is_consistent_with_delta_of_epsilon(
    noise: LatticeNoise, shift: int, log_delta: float
) -> None:
    """ε(δ) = inf{ε : δ(ε) <= δ}: δ(ε_hi) <= δ, and δ(ε) > δ just below ε_lo.

    Checked against the library's δ(ε) at higher precision and against brute force.
    """
    delta = 10.0**log_delta
    p, q = _shift_pair(noise, shift)
    enclosure = epsilon_for_delta(p, q, delta, dps=DPS)
    if mp.isinf(enclosure.hi):
        # Only when more than δ of P's mass sits where Q has none (every ε then fails).
        assert _mass_where_q_vanishes(p, q) >= delta * (1 - 1e-20)
        return
    assert enclosure.hi - enclosure.lo <= mp.mpf(10) ** -(DPS - 4) * max(mp.one, enclosure.hi)
    eps_up = float_above(enclosure.hi)  # so δ there is <= δ(ε_hi)
    assert hockey_stick(p, q, eps_up, dps=30).hi <= delta
    with mp.workdps(REF_DPS):
        assert brute_hockey(p, q, eps_up) <= mp.mpf(delta) * (1 + mp.mpf(10) ** -25)
    if enclosure.lo > 0:
        below = float(enclosure.lo) - 1e-8 * max(1.0, float(enclosure.lo))
        if below >= 0:
            assert hockey_stick(p, q, below, dps=DPS).lo > delta
            assert brute_hockey(p, q, below) > delta
    elif enclosure.hi == 0:
        assert brute_hockey(p, q, 0) <= delta * (1 + 1e-20)


def test_epsilon_for_delta_of_discrete_laplace_is_pure_epsilon_for_small_delta() -> None:
    """For Lap_Z(b) the loss is at most Δ/b (Fact 3, spec §3.1); at tiny δ, ε(δ) is almost Δ/b.

    Exactly: with S = {x >= Δ} (loss Δ/b), δ(ε) = P(S)(1 - e^{ε - Δ/b}) for ε in the top
    interval, so ε(δ) = Δ/b + ln(1 - δ/P(S)), P(S) = P(X >= 0) = 1/(1 + e^{-1/b}).
    """
    b, sensitivity, delta = 2.5, 2, 1e-6
    noise = DiscreteLaplace(b)
    enclosure = epsilon_for_delta(Shifted(noise, sensitivity), noise, delta, dps=DPS)
    with mp.workdps(REF_DPS):
        mass = 1 / (1 + mp.exp(-1 / mp.mpf(b)))
        expected = sensitivity / mp.mpf(b) + mp.log(1 - delta / mass)
    assert_encloses(enclosure.lo, enclosure.hi, expected, rel=1e-30)


# ---------------------------------------------------------------------------------------------
# Rényi divergence
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@given(noise=noises(), shift=shifts, alpha=orders)
@settings(max_examples=30, deadline=None)
def test_renyi_encloses_brute_force(noise: LatticeNoise, shift: int, alpha: float) -> None:
    """D_α(X + Δ || X) (spec §1.2 Def. 2, §3.2, §3.3) contains the brute-force sum."""
    p, q = _shift_pair(noise, shift)
    enclosure = renyi(p, q, alpha, dps=DPS)
    reference = brute_renyi(p, q, alpha)
    if mp.isinf(reference):
        assert mp.isinf(enclosure.lo)
        return
    assert_encloses(enclosure.lo, enclosure.hi, reference, rel=1e-30, abs_tol=1e-30)
    assert enclosure.hi - enclosure.lo <= mp.mpf(10) ** -(DPS - 4) * max(mp.one, reference)


@given(noise=noises(), shift=shifts, a1=orders, a2=orders)
@FAST
def test_renyi_nondecreasing_in_alpha(noise: LatticeNoise, shift: int, a1: float, a2: float) -> None:
    """Rényi divergences grow with the order (van Erven & Harremoës 2014, Thm 3; spec §1.2 Def. 2)."""
    small, large = sorted((a1, a2))
    p, q = _shift_pair(noise, shift)
    # D_small <= D_large for the true values: the lower end of the smaller order cannot
    # exceed the upper end of the larger one.
    assert renyi(p, q, small, dps=DPS).lo <= renyi(p, q, large, dps=DPS).hi


@pytest.mark.parametrize(
    "noise",
    [DiscreteLaplace(2), Skellam(3), DiscreteGaussian(0.7), CenteredBinomial(5), Polya(0.5, 0.4)],
    ids=repr,
)
def test_renyi_of_identical_distributions_is_zero(noise: LatticeNoise) -> None:
    """D_α(X || X) = 0 at every order, including ∞ (the zero shift)."""
    for alpha in (1.5, 2, math.inf):
        enclosure = renyi(Shifted(noise, 0), noise, alpha, dps=DPS)
        assert enclosure.lo == 0
        assert enclosure.hi <= mp.mpf(10) ** -(DPS - 2)


@pytest.mark.parametrize(
    ("noise", "shift", "exact"),
    [
        (DiscreteLaplace(2.5), 1, Fraction(1) / Fraction(2.5)),
        (DiscreteLaplace(2.5), -3, Fraction(3) / Fraction(2.5)),
        (DiscreteLaplace(Fraction(8, 3)), 2, Fraction(3, 4)),
        (DiscreteLaplace(0.3), 1, Fraction(1) / Fraction(0.3)),
    ],
    ids=repr,
)
def test_renyi_infinite_order_of_discrete_laplace_is_sensitivity_over_scale(
    noise: DiscreteLaplace, shift: int, exact: Fraction
) -> None:
    """Fact 3 (spec §3.1): D_∞(Lap_Z(b) + Δ || Lap_Z(b)) = |Δ|/b, attained (brute force agrees)."""
    enclosure = renyi(Shifted(noise, shift), noise, math.inf, dps=DPS)
    with mp.workdps(REF_DPS):
        assert_encloses(enclosure.lo, enclosure.hi, as_mpf(exact))
        assert_encloses(enclosure.lo, enclosure.hi, brute_max_loss(Shifted(noise, shift), noise), rel=1e-35)


def test_renyi_infinite_order_of_discrete_laplace_decay_form() -> None:
    """With the decay β = e^{-1/b} given, D_∞ = -Δ ln β (spec §2.3)."""
    noise = DiscreteLaplace(beta=Fraction(4, 5))
    enclosure = renyi(Shifted(noise, 2), noise, math.inf, dps=DPS)
    with mp.workdps(REF_DPS):
        assert_encloses(enclosure.lo, enclosure.hi, -2 * mp.log(mp.mpf(4) / 5))


@pytest.mark.parametrize(
    ("noise", "shift"),
    [
        (Skellam(5), 1),
        (Skellam.from_rates(3, 1), -2),
        (DiscreteGaussian(2), 1),
        (SumOfDiscreteGaussians(1.0, 3), 2),
        (CenteredBinomial(6), 1),  # mismatched supports
        (Geometric(0.5), -1),  # X - 1 puts mass at -1, where X has none
        (Polya(2.5, 0.5), -2),
    ],
    ids=repr,
)
def test_renyi_infinite_order_is_infinite_without_pure_dp(noise: LatticeNoise, shift: int) -> None:
    """Skellam and (sums of) discrete Gaussians have unbounded privacy loss (spec §3.2, §3.3)."""
    p, q = _shift_pair(noise, shift)
    enclosure = renyi(p, q, math.inf, dps=DPS)
    assert mp.isinf(enclosure.lo)
    assert mp.isinf(enclosure.hi)
    # The brute-force loss keeps growing across the window (or is infinite outright).
    loss = brute_max_loss(p, q)
    assert loss > 3 * abs(shift) or mp.isinf(loss)


@pytest.mark.parametrize(("r", "beta", "shift"), [(0.3, 0.6, 1), (0.5, 0.2, 3), (Fraction(1, 8), 0.9, 2)])
def test_renyi_infinite_order_of_polya_with_small_r(r: float | Fraction, beta: float, shift: int) -> None:
    """For r < 1 the loss P(x-Δ)/P(x) peaks at x = Δ: Γ(Δ+1)Γ(r)/(Γ(Δ+r)β^Δ) (attained)."""
    noise = Polya(r, beta)
    enclosure = renyi(Shifted(noise, shift), noise, math.inf, dps=DPS)
    with mp.workdps(REF_DPS):
        rr, bb = as_mpf(r), mp.mpf(beta)
        exact = mp.log(mp.factorial(shift) / (mp.rf(rr, shift) * bb**shift))
        assert_encloses(enclosure.lo, enclosure.hi, exact, rel=1e-30)
        assert_encloses(enclosure.lo, enclosure.hi, brute_max_loss(Shifted(noise, shift), noise), rel=1e-30)


@pytest.mark.parametrize(("r", "beta", "shift"), [(1, 0.6, 1), (2.5, 0.3, 2)])
def test_renyi_infinite_order_of_polya_with_large_r(r: float, beta: float, shift: int) -> None:
    """For r >= 1 the loss increases towards its limit β^-Δ, never attained: D_∞ = -Δ ln β."""
    noise = Polya(r, beta)
    enclosure = renyi(Shifted(noise, shift), noise, math.inf, dps=DPS)
    with mp.workdps(REF_DPS):
        assert_encloses(enclosure.lo, enclosure.hi, -shift * mp.log(mp.mpf(beta)), rel=1e-30)
        assert brute_max_loss(Shifted(noise, shift), noise) <= enclosure.hi


def test_renyi_of_finite_support_pairs() -> None:
    """Binomial noise (spec §2.7): D_α and D_∞ of CB(4) against CB(6), by exact rational sums."""
    p, q = CenteredBinomial(4), CenteredBinomial(6)
    for alpha in (1.5, 2.0, 3.0, 7.25):
        assert_encloses(*_ends(renyi(p, q, alpha, dps=DPS)), brute_renyi(p, q, alpha), rel=1e-30)
    assert_encloses(*_ends(renyi(p, q, math.inf, dps=DPS)), brute_max_loss(p, q), rel=1e-30)
    # Reversed, P = CB(6) has mass at ±3 where CB(4) has none.
    assert mp.isinf(renyi(q, p, 2, dps=DPS).lo)


def _ends(enclosure: Enclosure) -> tuple[Mpf, Mpf]:
    return enclosure.lo, enclosure.hi


@pytest.mark.parametrize("alpha", [1.5, 2, 10, math.inf])
def test_mismatched_supports_give_infinite_renyi(alpha: float) -> None:
    """CB(6) + 1 puts mass 1/64 at 4, outside CB(6)'s support [-3, 3]: D_α = ∞ for every α."""
    noise = CenteredBinomial(6)
    enclosure = renyi(Shifted(noise, 1), noise, alpha, dps=DPS)
    assert mp.isinf(enclosure.lo)


def test_mismatched_supports_hockey_stick_and_epsilon() -> None:
    """The 1/64 of mass where Q vanishes counts for every ε: δ(ε) >= 1/64, ε(δ) = ∞ for δ < 1/64."""
    noise = CenteredBinomial(6)
    p, q = Shifted(noise, 1), noise
    for epsilon in (0.0, 1.0, 10.0, 50.0):
        enclosure = hockey_stick(p, q, epsilon, dps=DPS)
        assert_encloses(enclosure.lo, enclosure.hi, brute_hockey(p, q, epsilon), rel=1e-35)
        assert enclosure.lo >= mp.mpf(1) / 64 * (1 - mp.mpf(10) ** -(DPS - 2))
    assert mp.isinf(epsilon_for_delta(p, q, 0.01, dps=DPS).hi)
    finite = epsilon_for_delta(p, q, 0.05, dps=DPS)
    assert math.isfinite(finite.hi)
    assert brute_hockey(p, q, float_above(finite.hi)) <= 0.05


def test_unsupported_pairs_raise() -> None:
    """No certified Rényi tail bound for two unrelated noises with infinite support."""
    for alpha in (2, math.inf):
        with pytest.raises(UnsupportedError) as info:
            renyi(DiscreteLaplace(2), DiscreteGaussian(1), alpha)
        assert isinstance(info.value, ValueError)


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------

PAIR = (Shifted(Skellam(2), 1), Skellam(2))


@pytest.mark.parametrize("alpha", [1, 1.0, 0.5, -2, math.nan, -math.inf])
def test_renyi_order_must_exceed_one(alpha: float) -> None:
    """Rényi DP (spec §1.2 Def. 2) is defined for α > 1 only."""
    with pytest.raises(ParameterError) as info:
        renyi(*PAIR, alpha)
    assert info.value.name == "alpha"


def test_renyi_order_type() -> None:
    """A string order is a type error, naming the parameter."""
    with pytest.raises(ParameterTypeError) as info:
        renyi(*PAIR, "2")  # type: ignore[arg-type]
    assert info.value.name == "alpha"


@pytest.mark.parametrize("delta", [0, 1, -1, 1.5, math.nan, math.inf])
def test_delta_must_be_in_the_open_unit_interval(delta: float) -> None:
    """(ε, δ)-DP needs δ in (0, 1): 0, 1, negative, NaN, ∞ are refused."""
    with pytest.raises(ParameterError) as info:
        epsilon_for_delta(*PAIR, delta)
    assert info.value.name == "delta"


@pytest.mark.parametrize("epsilon", [-0.1, math.nan, math.inf])
def test_epsilon_must_be_finite_and_nonnegative(epsilon: float) -> None:
    """ε >= 0 and finite."""
    with pytest.raises(ParameterError) as info:
        hockey_stick(*PAIR, epsilon)
    assert info.value.name == "epsilon"


@pytest.mark.parametrize(
    "call",
    [
        lambda: hockey_stick(*PAIR, 1.0, dps=4),
        lambda: epsilon_for_delta(*PAIR, 1e-5, dps=2000),
        lambda: renyi(*PAIR, 2, dps=1.5),  # type: ignore[arg-type]
    ],
)
def test_precision_is_validated(call: Any) -> None:
    """dps must be an integer in [5, 1000]."""
    with pytest.raises(ParameterError) as info:
        call()
    assert info.value.name == "dps"
