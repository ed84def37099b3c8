"""Calibration (:mod:`accounting.calibration`): the least noise meeting a target, certified."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting import (
    AdditiveNoise,
    DistributedSum,
    Enclosure,
    Gaussian,
    ParameterError,
    Skellam,
    UnsupportedError,
    bounds,
)
from accounting.accountant import Accountant
from accounting.calibration import Calibration, calibrate
from accounting.subsampling import PoissonSampled


@pytest.mark.slow
def test_gaussian_1000_compositions_acceptance() -> None:
    """σ within 1e-9 relative of 117.97293077095892, never below it."""
    cal = calibrate("gaussian", 1.0, 1e-5, compositions=1000)
    assert cal.value >= 117.97293077095892
    assert cal.value == pytest.approx(117.97293077095892, rel=1e-9)
    assert cal.epsilon.upper <= 1.0
    # One ulp less noise no longer meets the target.
    smaller = math.nextafter(cal.value, 0)
    again = calibrate("gaussian", 1.0, 1e-5, compositions=1000)
    assert again.value == cal.value
    from accounting import AdditiveNoise, Gaussian

    acc = Accountant().compose(AdditiveNoise(Gaussian(smaller)), 1000)
    assert float(acc.epsilon(1e-5)) > 1.0


def test_skellam_with_users_gives_exact_shares() -> None:
    cal = calibrate("skellam", 1.0, 1e-6, users=4096)
    assert isinstance(cal.mechanism, DistributedSum)
    assert isinstance(cal.share, Skellam)
    total = cal.mechanism.total_noise
    assert isinstance(total, Skellam)
    # The shares sum to exactly the calibrated variance.
    assert float(total.mu1 + total.mu2) == cal.value
    assert cal.epsilon.upper <= 1.0


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(
    family=st.sampled_from(["gaussian", "discrete-laplace", "skellam", "discrete-gaussian"]),
    epsilon=st.floats(0.3, 3.0),
    log_delta=st.integers(-9, -4),
    compositions=st.integers(1, 3),
)
def test_round_trip(family: str, epsilon: float, log_delta: int, compositions: int) -> None:
    """The calibrated noise meets the target, and 1e-6 relative less noise does not."""
    delta = 10.0**log_delta
    cal = calibrate(family, epsilon, delta, compositions=compositions)
    assert cal.epsilon.upper <= epsilon
    from accounting.calibration import _builder

    _, build = _builder(family, 1, 1)
    less = Accountant(dps=15).compose(build(cal.value * (1 - 1e-6)), compositions).epsilon(delta)
    if family == "discrete-gaussian" and cal.value < 1.5:
        return  # lattice effects: δ(ε) of the discrete Gaussian is not monotone in σ there
    assert less.hi > epsilon


def test_distributed_families() -> None:
    dl = calibrate("discrete-laplace", 1.0, 1e-6, users=16)
    assert dl.share is not None
    assert dl.epsilon.upper <= 1.0
    dg = calibrate("discrete-gaussian", 1.0, 1e-6, users=16)
    assert dg.parameter == "sigma per user"
    assert dg.epsilon.upper <= 1.0
    with pytest.raises(UnsupportedError):
        calibrate("laplace", 1.0, 1e-6, users=4)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"noise_family": "cauchy"}, "noise_family"),
        ({"epsilon": 0}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"sensitivity": 1.5, "noise_family": "skellam"}, "sensitivity"),
        ({"compositions": 0}, "compositions"),
        ({"users": 0}, "users"),
        ({"route": "best"}, "route"),
    ],
)
def test_bad_input(kwargs: dict[str, object], name: str) -> None:
    args: dict[str, object] = {"noise_family": "gaussian", "epsilon": 1.0, "delta": 1e-6} | kwargs
    with pytest.raises(ParameterError) as err:
        calibrate(**args)  # type: ignore[arg-type]
    assert err.value.name == name


def test_search_does_not_stall_on_a_value_exactly_at_the_target() -> None:
    """Regression (found by the round-trip property in CI): discrete Laplace (2.5, 1e-7) twice.

    A probe landed where ε equals the target to the last digit; the secant step then stalled on
    the bracket's end and the search returned its starting value (25% too much noise).
    """
    cal = calibrate("discrete-laplace", 2.5, 1e-7, compositions=2)
    assert cal.epsilon.upper <= 2.5
    assert cal.value == pytest.approx(0.8, rel=1e-6)


@pytest.mark.slow
def test_skellam_calibration_over_compositions_needs_few_evaluations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: from the analytic Gaussian's guess the bracket is narrow and regula falsi
    starts from both ends (it bisected from a factor-2 bracket: 27 whole PLD compositions for
    10^4 releases, 2.5 min). The variance is within 1% of the continuous Gaussian's σ² for the
    same ledger (Balle–Wang, independent of the PLD), meets the target, and one rtol less noise
    does not (the optimistic end of the PLD is above the target there)."""
    from accounting import Accountant

    calls: list[float] = []
    original = Accountant.epsilon

    def counted(self: Accountant, delta: float, route: str = "auto") -> Enclosure:
        answer = original(self, delta, route)
        calls.append(float(answer.hi))
        return answer

    monkeypatch.setattr(Accountant, "epsilon", counted)
    got = calibrate("skellam", 1.0, 1e-6, compositions=300, rtol=1e-6)
    assert len(calls) <= 6, calls
    assert got.epsilon.upper <= 1.0
    sigma = bounds.gaussian_sigma_analytic(1.0, 1e-6) * math.sqrt(300)
    assert got.value == pytest.approx(sigma**2, rel=1e-2)
    less = Accountant().compose(AdditiveNoise(Skellam(got.value * (1 - 2e-6))), 300).epsilon(1e-6)
    assert less.lo > 1.0 - 1e-5  # within the enclosure's width of failing


@pytest.mark.slow
@pytest.mark.parametrize("family", ["discrete-laplace", "skellam", "gaussian"])
def test_max_evaluations_stops_the_search_with_a_certified_answer(family: str) -> None:
    """``max_evaluations`` bounds the work deterministically. Once that many levels are
    accounted the search returns the least level known to meet the target: certified, never below
    the least noise, and it says it did not converge; a larger budget only narrows the bracket."""
    full = calibrate(family, 1.0, 1e-6, compositions=10)
    assert full.converged
    first = 0  # the levels accounted until one met the target: max_evaluations=1 stops there
    previous = None
    for k in (1, 3, full.evaluations):
        quick = calibrate(family, 1.0, 1e-6, compositions=10, max_evaluations=k)
        first = first or quick.evaluations
        assert quick.epsilon.hi <= 1.0
        assert quick.value >= full.value
        assert quick.evaluations == min(max(k, first), full.evaluations)
        assert quick.converged == (quick.value == full.value and quick.not_met == full.not_met)
        if quick.not_met > 0:  # a level that was accounted and missed: below the least noise
            assert quick.not_met < full.value
            assert calibrate_epsilon(family, quick.not_met) > 1.0
        if previous is not None:  # the same path, further: the bracket only narrows
            assert quick.value <= previous.value
            assert quick.not_met >= previous.not_met
        previous = quick
    assert previous is not None
    assert (previous.value, previous.not_met, previous.converged) == (full.value, full.not_met, True)


def _answer(cal: Calibration) -> tuple[object, ...]:
    return (cal.value, cal.not_met, cal.converged, cal.evaluations, cal.epsilon.lo, cal.epsilon.hi, cal.route)


def test_the_default_calibration_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """By default the answer depends on the arguments only. A clock that jumps an hour at
    every reading (a machine under any load) is never read and changes nothing; the same clock
    stops an explicit ``time_limit`` at the first chance, which is exactly ``max_evaluations=1``."""
    quiet = calibrate("discrete-laplace", 1.0, 1e-6, compositions=10)
    one = calibrate("discrete-laplace", 1.0, 1e-6, compositions=10, max_evaluations=1)
    readings: list[float] = []

    def busy() -> float:
        readings.append(3600.0 * (len(readings) + 1))
        return readings[-1]

    monkeypatch.setattr(time, "monotonic", busy)
    target = ("discrete-laplace", 1.0, 1e-6)
    assert _answer(calibrate(*target, compositions=10)) == _answer(quiet)
    assert _answer(calibrate(*target, compositions=10, max_evaluations=1)) == _answer(one)
    assert readings == []
    limited = calibrate(*target, compositions=10, time_limit=8.0)
    assert readings  # the patched clock is the one a time limit reads
    assert _answer(limited) == _answer(one)
    assert not limited.converged
    assert limited.value > quiet.value
    assert limited.epsilon.hi <= 1.0


@pytest.mark.parametrize(
    ("name", "value"), [("max_evaluations", 0), ("max_evaluations", 2.5), ("time_limit", 0.0)]
)
def test_search_budgets_are_validated(name: str, value: object) -> None:
    with pytest.raises(ParameterError) as err:
        calibrate("gaussian", 1.0, 1e-6, **{name: value})  # type: ignore[arg-type]
    assert err.value.name == name


def calibrate_epsilon(family: str, theta: float) -> float:
    """ε(1e-6) of 10 compositions at parameter θ, from the Accountant directly."""
    from accounting import Accountant, AdditiveNoise, DiscreteLaplace, Gaussian, Skellam

    noise = {"discrete-laplace": DiscreteLaplace, "skellam": Skellam, "gaussian": Gaussian}[family](theta)
    return float(Accountant().compose(AdditiveNoise(noise, 1), 10).epsilon(1e-6).hi)


@pytest.mark.slow
def test_sampled_releases_are_calibrated_against_an_independent_accountant() -> None:
    """``sampling_rate=`` calibrates DP-SGD's noise multiplier: the σ returned is certified (the
    Accountant's ε at it meets the target) and near the least, judged by Google's dp_accounting
    PLD accountant (float; an independent implementation): it puts ε at σ at or just below the
    target, and above the target 2% below σ."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    q, k, eps, delta = 0.1, 20, 1.0, 1e-5
    cal = calibrate(
        "gaussian", eps, delta, compositions=k, sampling_rate=q, neighbouring="add-remove", rtol=1e-3
    )
    assert (cal.sampling_rate, cal.sampling) == (q, "poisson")
    ledger = Accountant("add-remove").compose(PoissonSampled(AdditiveNoise(Gaussian(cal.value), 1), q), k)
    assert ledger.epsilon(delta).upper <= eps

    def google(sigma: float) -> float:
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-5)
        acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), k)
        return float(acc.get_epsilon(delta))

    assert google(cal.value) <= eps * (1 + 1e-3)
    assert google(cal.value * 0.98) > eps
    # A sampled Gaussian has no closed form: the search stops at rtol, not at the smallest float
    # (which took 19 PLD compositions for a DP-SGD run where 7 reach rtol = 1e-6).
    assert cal.converged
    assert cal.value - cal.not_met <= 1e-3 * cal.value
    assert math.nextafter(cal.not_met, math.inf) < cal.value


def test_sampling_is_refused_for_a_constructor_and_validated() -> None:
    with pytest.raises(ParameterError, match="sampling_rate"):
        calibrate(lambda s: AdditiveNoise(Gaussian(s), 1), 1.0, 1e-5, sampling_rate=0.1)
    with pytest.raises(ParameterError, match="sampling_rate"):
        calibrate("gaussian", 1.0, 1e-5, sampling_rate=1.5)
    with pytest.raises(ParameterError, match="sampling"):
        calibrate("gaussian", 1.0, 1e-5, sampling_rate=0.1, sampling="shuffled")
