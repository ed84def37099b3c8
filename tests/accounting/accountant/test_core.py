"""The Accountant (issue 3 §3): routes, acceptance numbers, the JSON ledger, and bad input."""

from __future__ import annotations

import math
from typing import Any

import pytest
from mpmath import mp

from accounting import (
    AdditiveNoise,
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    ParameterError,
    Skellam,
    UnsupportedError,
    bounds,
)
from accounting.accountant import Accountant


def test_gaussian_1000_fold_tightest_route() -> None:
    """Issue 3: σ = 1 composed 1000 times, δ = 1e-5: ε within 1e-9 of 633.9298513356146."""
    answer = Accountant().compose(AdditiveNoise(Gaussian(1.0)), 1000).epsilon(1e-5)
    assert answer.route == "pld"
    assert float(answer) == pytest.approx(633.9298513356146, rel=1e-9)
    assert answer.lo <= 633.9298513356146 <= answer.hi * (1 + 1e-15)


def test_gaussian_1000_fold_rdp_route() -> None:
    """Issue 3: by the RDP route (real α): 648.78198593."""
    answer = Accountant().compose(AdditiveNoise(Gaussian(1.0)), 1000).epsilon(1e-5, route="rdp")
    assert answer.route == "rdp"
    assert float(answer) == pytest.approx(648.78198593, rel=1e-9)


def test_zcdp_and_pure_routes() -> None:
    acc = Accountant().compose(AdditiveNoise(Gaussian(1.0)), 1000)
    # zCDP: ρ = 500, the same curve as RDP for the Gaussian.
    assert float(acc.epsilon(1e-5, route="zcdp")) == pytest.approx(648.78198593, rel=1e-9)
    with pytest.raises(UnsupportedError):
        acc.epsilon(1e-5, route="pure")
    lap = Accountant().compose(AdditiveNoise(DiscreteLaplace(10)), 7)
    pure = float(lap.epsilon(1e-5, route="pure"))
    assert 0.7 <= pure <= 0.7 * (1 + 1e-12)  # 7 × (1/10), rounded up
    assert float(lap.delta(pure, route="pure")) == 0.0
    with pytest.raises(UnsupportedError):
        lap.delta(0.69, route="pure")


def test_auto_is_the_tightest_route_tried() -> None:
    acc = Accountant().compose(AdditiveNoise(DiscreteLaplace(10)), 100)
    answer = acc.epsilon(1e-5)
    assert answer.route in answer.candidates
    assert float(answer) == min(answer.candidates.values())
    # Exact composition beats pure composition (ε = 10) by a wide margin here.
    assert float(answer) < 0.5 * 10


def test_single_event_is_answered_exactly() -> None:
    mech = AdditiveNoise(Skellam(100))
    answer = Accountant().compose(mech).epsilon(1e-5)
    assert answer.route == "pld"
    assert float(answer) == mech.epsilon(1e-5, 20).upper


@pytest.mark.slow
def test_rdp_route_dominates_exact_for_lattice_noise() -> None:
    """Every route is an upper bound: RDP (Lemma 10) >= the exact ε of one Skellam release."""
    mech = AdditiveNoise(Skellam(100))
    exact = mech.epsilon(1e-5, 20)
    rdp = Accountant().compose(mech).epsilon(1e-5, route="rdp")
    assert float(rdp) >= exact.hi


def test_heterogeneous_gaussians_compose_to_one_gaussian() -> None:
    acc = Accountant().compose(AdditiveNoise(Gaussian(2.0)), 3).compose(AdditiveNoise(Gaussian(1.0), 2.0), 1)
    # μ² = 3/4 + 4 = 4.75: one Gaussian with σ = 1/sqrt(4.75).
    expected = bounds.gaussian_epsilon_analytic(1 / math.sqrt(4.75), 1e-6)
    assert float(acc.epsilon(1e-6)) == pytest.approx(expected, rel=1e-12)


def test_delta_and_epsilon_are_consistent() -> None:
    acc = Accountant().compose(AdditiveNoise(DiscreteGaussian(3.0)), 4)
    eps = float(acc.epsilon(1e-6))
    assert float(acc.delta(eps)) <= 1e-6 * (1 + 1e-9)
    assert float(acc.delta(eps * 0.99)) > 1e-6


@pytest.mark.slow
def test_asymmetric_noise_falls_back_to_rdp() -> None:
    acc = Accountant().compose(AdditiveNoise(Skellam.from_rates(40, 60)), 3)
    answer = acc.epsilon(1e-5)
    assert answer.route == "rdp"
    with pytest.raises(UnsupportedError):
        acc.epsilon(1e-5, route="pld")


def test_empty_ledger_spends_nothing() -> None:
    assert float(Accountant().epsilon(1e-6)) == 0.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: Accountant().epsilon(0), "delta"),
        (lambda: Accountant().epsilon(1.5), "delta"),
        (lambda: Accountant().delta(-1), "epsilon"),
        (lambda: Accountant().epsilon(1e-5, route="fast"), "route"),
        (lambda: Accountant().compose(AdditiveNoise(Gaussian(1.0)), 0), "count"),
        (lambda: Accountant(dps=2), "dps"),
        (lambda: Accountant("sideways"), "neighbouring"),
        (lambda: Accountant.from_dict({"format": "other"}), "format"),
    ],
)
def test_bad_input_names_the_parameter(call: object, name: str) -> None:
    with pytest.raises(ParameterError) as err:
        call()  # type: ignore[operator]
    assert err.value.name == name


@pytest.mark.slow
def test_too_wide_single_event_falls_back_to_the_grid_pld() -> None:
    """A discrete Laplace of scale 1e5 needs ~1.9e7 lattice points for the exact single-shot sum:
    the mechanism refuses it (UnsupportedError, not an out-of-memory), the Accountant uses the grid
    PLD (closed-form atoms). Its total variation is tanh(1/(2b)) ≈ 5e-6 <= δ = 1e-5, so ε(1e-5) = 0,
    and at δ = 1e-6 it agrees with the pure bound's order of magnitude."""
    mech = AdditiveNoise(DiscreteLaplace(1e5))
    with pytest.raises(UnsupportedError):
        mech.epsilon(1e-5)
    answer = Accountant().compose(mech).epsilon(1e-5)
    assert answer.route == "pld"
    assert float(answer) == 0.0
    tighter = Accountant().compose(mech).epsilon(1e-6)
    assert 0 < float(tighter) <= 1e-5
    # The same question at a scale the exact sum can take agrees with the grid PLD.
    small = AdditiveNoise(DiscreteLaplace(1e3))
    exact = small.epsilon(1e-5, 20)
    from accounting.pld import PrivacyLossDistribution

    grid = PrivacyLossDistribution.from_mechanism(small).epsilon(1e-5)
    assert grid.lo <= exact.hi
    assert exact.lo <= grid.hi


# -- issue 15 §2: the RDP route never answers ∞ by default; tiny Skellam noise ---------------


def _skellam_pmf(variance: float, x: int) -> Any:
    """P(X = x) of the symmetric Skellam by mpmath's Bessel function (independent of the code)."""
    mu = mp.mpf(variance) / 2
    return mp.exp(-2 * mu) * mp.besseli(abs(x), 2 * mu)


def test_tiny_skellam_epsilon_is_finite_and_exact() -> None:
    """Skellam of variance 1e-300: P(X = ±1) ≈ 5e-301 was enclosed in [0, 3e-81] (the Bessel
    recurrence shifted J_1 away with J_0's scale), so ε(1e-6) came out ∞; it is
    ln((P(X=0) - δ)/P(X=1)) = 691.4686... (the set S = {1} of (X + 1, X), at 60 digits)."""
    noise = Skellam(1e-300)
    with mp.workdps(60):
        p0, p1 = _skellam_pmf(1e-300, 0), _skellam_pmf(1e-300, 1)
        exact = mp.log((p0 - mp.mpf(1e-6)) / p1)
        (got_p1,) = noise.pmf_intervals(1, 1, 20)
        assert mp.mpf(got_p1.a) <= p1 <= mp.mpf(got_p1.b)
        assert (mp.mpf(got_p1.b) - mp.mpf(got_p1.a)) < p1 * mp.mpf(10) ** -18
    got = AdditiveNoise(noise).epsilon(1e-6)
    assert got.lo <= exact <= got.hi
    assert float(got.hi) == pytest.approx(float(exact), rel=1e-14)
    answer = Accountant().compose(AdditiveNoise(noise), 1).epsilon(1e-6)
    assert math.isfinite(float(answer))


@pytest.mark.slow
def test_rdp_route_bounds_tiny_skellam_compositions() -> None:
    """Two releases of Skellam(1e-300): the RDP route is finite (a Poisson-shift prior bounds the
    Rényi tails; the AKL prior, about 1e300, made every order's window refused and the route
    answer ∞), and above the exact ε of the product pair (atoms of S ⊂ {0, 1, 2}², 60 digits)."""
    mech = AdditiveNoise(Skellam(1e-300))
    rdp = Accountant().compose(mech, 2).epsilon(1e-6, route="rdp")
    with mp.workdps(60):
        single = {x: _skellam_pmf(1e-300, x) for x in range(-3, 4)}
        atoms = []
        for a in range(-2, 4):
            for b in range(-2, 4):
                p = single[a - 1] * single[b - 1]
                q = single[a] * single[b]
                atoms.append((p, q))
        atoms.sort(key=lambda pq: pq[0] / pq[1], reverse=True)
        best, sp, sq = mp.zero, mp.zero, mp.zero
        for p, q in atoms:
            sp, sq = sp + p, sq + q
            if sp > 1e-6:
                best = max(best, mp.log((sp - mp.mpf(1e-6)) / sq))
    assert best <= rdp.hi < best * (1 + 1e-3)
    auto = Accountant().compose(mech, 2).epsilon(1e-6)
    assert auto.lo <= best <= auto.hi


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mechanism", "match"),
    [
        (AdditiveNoise(Skellam(1e12)), "refused at every order.*route='published'"),
        (AdditiveNoise(CenteredBinomial(8)), "infinite at every order"),
    ],
    ids=["window too wide", "finite support"],
)
def test_rdp_route_refuses_instead_of_answering_infinity(mechanism: Any, match: str) -> None:
    """Where no order can be summed (Skellam of variance 1e12: 2.4e7 lattice points an order) or
    every divergence is infinite (finite support), the RDP route says why instead of ∞."""
    ledger = Accountant().compose(mechanism, 3)
    with pytest.raises(UnsupportedError, match=match):
        ledger.epsilon(1e-6, route="rdp")
    with pytest.raises(UnsupportedError, match=match):
        ledger.delta(1.0, route="rdp")


# -- issue 15 §2.4: auto never settles for ∞, and picks by cost ------------------------------


def _discrete_gaussian_sum(sigma: float, count: int, reach: int) -> dict[int, Any]:
    s2 = mp.mpf(sigma) ** 2
    weights = {x: mp.exp(-mp.mpf(x * x) / (2 * s2)) for x in range(-reach, reach + 1)}
    norm = mp.fsum(weights.values())
    single = {x: w / norm for x, w in weights.items()}
    out = {0: mp.one}
    for _ in range(count):
        nxt: dict[int, Any] = {}
        for z, pz in out.items():
            for x, px in single.items():
                nxt[z + x] = nxt.get(z + x, mp.zero) + pz * px
        out = {z: p for z, p in nxt.items() if abs(z) <= count * reach}
    return out


@pytest.mark.slow
def test_auto_resolves_a_delta_below_the_default_precision() -> None:
    """4 discrete Gaussians of σ = 3 at δ = 1e-50: the PLD at 20 digits answered ∞ (its window
    tails alone are 2^-96) and so did auto. Exact reference: the composition is the pair
    (Z + 4, Z) with Z the sum of the four noises (its loss is affine in Z), ε(δ) the best
    threshold set, summed in mpmath at 80 digits."""
    mech = AdditiveNoise(DiscreteGaussian(3.0))
    answer = Accountant().compose(mech, 4).epsilon(1e-50)
    assert answer.route == "pld"
    assert math.isfinite(float(answer))
    with mp.workdps(80):
        z = _discrete_gaussian_sum(3.0, 4, 60)
        delta = mp.mpf(1e-50)
        best = mp.zero
        for t in range(-240, 241):
            p_set = mp.fsum(p for x, p in z.items() if x + 4 >= t)
            q_set = mp.fsum(p for x, p in z.items() if x >= t)
            if p_set > delta and q_set > 0:
                best = max(best, mp.log((p_set - delta) / q_set))
    assert answer.lo <= best <= answer.hi
    assert answer.relative_width < 1e-12
    rdp = Accountant().compose(mech, 4).epsilon(1e-50, route="rdp")
    assert best < rdp.hi  # the RDP route is finite too, and looser
    tiny = Accountant().compose(mech, 4).delta(float(best))
    assert 0 < tiny.lo <= 1e-50 <= tiny.hi < 1.001e-50


@pytest.mark.slow
def test_auto_skips_what_cannot_win_and_what_costs_too_much(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule of Accountant._answer: a tight PLD enclosure settles it (no RDP); a margin of 0
    makes auto try the RDP route too; a PLD over budget is skipped when the RDP route answers."""
    from accounting.accountant import core as module

    ledger = Accountant().compose(AdditiveNoise(DiscreteLaplace(3.0)), 30)
    settled = ledger.epsilon(1e-6)
    assert settled.route == "pld"
    assert "rdp" not in settled.candidates
    monkeypatch.setattr(module, "AUTO_MARGIN", 0.0)
    both = ledger.epsilon(1e-6)
    assert {"pld", "rdp"} <= set(both.candidates)
    assert both.route == "pld"
    assert both.candidates["pld"] < both.candidates["rdp"]
    monkeypatch.setattr(module, "AUTO_PLD_BUDGET", 0.0)
    cheap = ledger.epsilon(1e-6)
    assert cheap.route == "rdp"
    assert "pld" not in cheap.candidates
    assert float(cheap) == both.candidates["rdp"]


def test_auto_takes_the_continuous_laplace_pld() -> None:
    """Issue 15 §2.8: 100 Laplace(10) releases by auto: the PLD route, ε(1e-5) ≈ 4.2203 (the RDP
    route's 4.53 was the answer before), between dp_accounting's optimistic and pessimistic PLD
    estimates (another library, discretisation 1e-4)."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    answer = Accountant().compose(AdditiveNoise(Laplace(10.0)), 100).epsilon(1e-5)
    assert answer.route == "pld"
    assert float(answer) == pytest.approx(4.2203, abs=2e-4)
    assert answer.relative_width < 5e-5
    estimates = [
        pld_lib.from_laplace_mechanism(10.0, value_discretization_interval=1e-4, pessimistic_estimate=side)
        .self_compose(100)
        .get_epsilon_for_delta(1e-5)
        for side in (False, True)
    ]
    assert answer.lo <= max(estimates)
    assert min(estimates) <= answer.hi


def test_copy_is_an_independent_ledger_with_the_same_answers() -> None:
    from accounting import AdditiveNoise, Gaussian
    from accounting.accountant import Accountant

    original = Accountant("add-remove", dps=30).compose(AdditiveNoise(Gaussian(2.0)), 3)
    twin = original.copy()
    assert (twin.neighbouring, twin.dps) == (original.neighbouring, original.dps)
    assert twin.ledger == original.ledger
    assert twin.epsilon(1e-5).hi == original.epsilon(1e-5).hi
    twin.compose(AdditiveNoise(Gaussian(1.0)))
    assert len(original.ledger) == 1
    assert len(twin.ledger) == 2
