"""Issue 15, hardening: no traceback or hang on any input of the library.

Hang regressions run in a subprocess with a generous ``timeout`` as a guard only (a hang fails
the test instead of stalling the suite); what they assert is the answer, never the time taken.
"""

from __future__ import annotations

import math
import subprocess
import sys

import mpmath
import pytest

from accounting import (
    AdditiveNoise,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    ParameterError,
    Skellam,
    UnsupportedError,
)
from accounting import pld as pld_module
from accounting.accountant import AUTO_PLD_BUDGET, Accountant
from accounting.calibration import MAX_STEP, calibrate
from accounting.papers.distributed_dp_mab import protocol_parameters

GUARD = 900  # seconds: a hang guard for subprocesses (on a loaded machine), not a speed target


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=GUARD, check=True
    )
    return done.stdout


# -- 1. calibration at a tiny target ε ------------------------------------------------------------


@pytest.mark.slow
def test_calibration_bracket_does_not_jump_by_e64() -> None:
    """Regression (03f1d16): from a guess whose ε is 1e-6, a target of 1e-20 is an excess of 32 in
    ln ε, and the bracket stepped by e^64 to a discrete Laplace scale of 1.7e33. The crossing is
    within a factor 2 (ε reaches 0 once δ covers the total variation, near b = 5e5): no noise level
    evaluated may be more than the first step (e^MAX_STEP) beyond the answer."""
    seen: list[float] = []

    def laplace(b: float) -> AdditiveNoise:
        seen.append(b)
        return AdditiveNoise(DiscreteLaplace(b), 1)

    cal = calibrate(laplace, 1e-20, 1e-6, guess=282094.7917738029)
    assert cal.epsilon.upper <= 1e-20
    assert 4.9e5 < cal.value < 5.1e5  # TV of Lap_Z(b) at Δ = 1 is about 1/(2b)
    assert max(seen) <= cal.value * math.exp(MAX_STEP)
    # Less noise by 1e-6 relative no longer meets the target: the answer is near the least.
    below = Accountant().compose(AdditiveNoise(DiscreteLaplace(cal.value * (1 - 1e-6)), 1))
    assert below.epsilon(1e-6).upper > 1e-20


@pytest.mark.slow
@pytest.mark.parametrize("family", ["discrete-laplace", "discrete-gaussian"])
@pytest.mark.parametrize("epsilon", [1e-20, 1e-300])
def test_calibrate_tiny_epsilon_answers(family: str, epsilon: float) -> None:
    """``calibrate --noise discrete-laplace/-gaussian --epsilon 1e-20`` (or 1e-300) hung."""
    out = _run(
        "from accounting.calibration import calibrate\n"
        f"c = calibrate({family!r}, {epsilon!r}, 1e-6, dps=15)\n"
        "print(c.value, float(c.epsilon.upper))\n"
    )
    value, eps = map(float, out.split())
    assert eps <= epsilon
    # The total variation of the noise must be at most δ: σ (or b) about 1/(√(2π) δ) or 1/(2δ).
    expected = 1 / (math.sqrt(2 * math.pi) * 1e-6) if family == "discrete-gaussian" else 1 / 2e-6
    assert value == pytest.approx(expected, rel=1e-3)


@pytest.mark.slow
def test_cli_calibrate_tiny_epsilon_exits_zero() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "accounting", "calibrate", "--noise", "discrete-laplace",
         "--epsilon", "1e-300", "--delta", "1e-6"],
        capture_output=True, text=True, timeout=GUARD,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "scale = 500000.00" in done.stdout


def test_calibration_moves_past_levels_a_route_cannot_account() -> None:
    """A level the route refuses (KLS needs σ >= 1/2) is not met: the search moves to more noise
    instead of failing at a first guess of σ = 0.42 per user."""
    cal = calibrate("discrete-gaussian", 1.0, 1e-6, users=100, route="published")
    assert cal.value >= 0.5
    assert cal.epsilon.upper <= 1.0


def test_calibration_that_no_level_can_account_says_why() -> None:
    def refused(theta: float) -> AdditiveNoise:
        raise ParameterError("theta", theta, "nothing (this constructor refuses every level)")

    with pytest.raises(ParameterError, match="refuses every level"):
        calibrate(refused, 1.0, 1e-6)


# -- 2. auto: the PLD route's estimated cost -------------------------------------------------------


def test_auto_budget_fits_a_20_second_contract() -> None:
    assert AUTO_PLD_BUDGET <= 10


def test_single_closed_form_release_costs_nothing() -> None:
    """A discrete Gaussian of σ >= 1000 is answered from two tail masses; its window estimate
    (24σ points, 240 'seconds' at σ = 5e5) sent auto to the RDP route first, 3 s per call."""
    for noise in (DiscreteGaussian(5e5), Gaussian(1.0), Laplace(1.0)):
        acc = Accountant().compose(AdditiveNoise(noise, 1))
        assert acc.pld_cost() == 0
    assert Accountant().compose(AdditiveNoise(Gaussian(3.0), 1), 10**30).pld_cost() == 0


def testpld_cost_of_long_compositions_exceeds_the_budget() -> None:
    """10^12 Skellam(100) compositions took 28 s on the PLD route (discrete Laplace 18 s), estimated
    5.2 units: within the old budget of 60, so auto ran them before the RDP route."""
    for noise in (DiscreteGaussian(3), Skellam(100), DiscreteLaplace(10)):
        acc = Accountant().compose(AdditiveNoise(noise, 1), 10**12)
        assert acc.pld_cost() > AUTO_PLD_BUDGET


def testpld_cost_is_infinite_beyond_the_pld_limit() -> None:
    acc = Accountant().compose(AdditiveNoise(DiscreteLaplace(10), 1), pld_module.MAX_COMPOSITIONS + 1)
    assert acc.pld_cost() == math.inf


# -- 4. astronomically many compositions ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("noise", [DiscreteLaplace(10), Skellam(100), Laplace(10)])
def test_huge_count_answered_by_a_route_that_multiplies(noise: object) -> None:
    """10^30 compositions: auto answers by the RDP route (it tried the PLD route first, which
    squares once per binary digit and did not finish); the PLD route refuses, naming the others."""
    acc = Accountant().compose(AdditiveNoise(noise, 1), 10**30)  # type: ignore[arg-type]
    answer = acc.epsilon(1e-6)
    assert answer.route == "rdp"
    assert 1e26 < answer.upper < math.inf
    with pytest.raises(UnsupportedError, match="'rdp', 'zcdp', 'pure' and 'published'"):
        acc.epsilon(1e-6, "pld")


def test_gaussian_compositions_have_no_count_limit() -> None:
    acc = Accountant().compose(AdditiveNoise(Gaussian(3.0), 1), 10**30)
    answer = acc.epsilon(1e-6, "pld")
    assert answer.upper == pytest.approx(10**30 / 18, rel=1e-6)  # ε ≈ kΔ²/(2σ²) for huge k


def test_self_compose_refuses_counts_beyond_the_limit() -> None:
    dist = pld_module.compose_events([(AdditiveNoise(DiscreteLaplace(10), 1), 1)], "replace-one")
    single = dist.directions[next(iter(dist.directions))]
    with pytest.raises(ParameterError, match="count"):
        single.self_compose(10**30)


# -- lattice windows ---------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.7e33, 1e300])
def test_window_of_a_discrete_laplace_too_wide_for_its_precision(scale: float) -> None:
    """At scale 1.7e33, e^{-1/b} rounds to 1 at the working precision and the window's doubling
    search never ended; now it is refused, and the accountant answers by closed-form atoms."""
    with pytest.raises(UnsupportedError, match="too wide"):
        DiscreteLaplace(scale).window(mpmath.mpf("1e-20"))
    answer = Accountant().compose(AdditiveNoise(DiscreteLaplace(scale), 1)).epsilon(1e-6)
    assert answer.upper == 0  # its total variation, about 1/(2b), is far below δ


# -- 3. tiny and huge parameters ---------------------------------------------------------------------


def test_local_laplace_protocol_at_a_huge_epsilon() -> None:
    """τ = ⌈1.6 g/ε · width⌉ multiplied the float 1.6 by g = 10^309: OverflowError."""
    par = protocol_parameters("local-laplace", 1e308, 100, 1000)
    assert par.g == 10**309
    assert par.tau >= 1
    assert par.bits == (par.m - 1).bit_length()


@pytest.mark.parametrize("sigma", [1e-300, 1e-10])
def test_sum_of_discrete_gaussians_too_fine_for_a_table_names_sigma(sigma: float) -> None:
    """σ = 1e-300 divided by σ² = 0 (ZeroDivisionError); now refused naming ``sigma``."""
    from accounting import DistributedSum, SumOfDiscreteGaussians

    with pytest.raises(ParameterError, match="sigma="):
        SumOfDiscreteGaussians(sigma, 10).pmf_exact(1)
    with pytest.raises(ParameterError, match="sigma="):
        Accountant().compose(DistributedSum(DiscreteGaussian(sigma), 10, 1)).epsilon(1e-6)


@pytest.mark.slow
def test_sum_of_discrete_gaussians_below_sigma_one_has_no_zero_values() -> None:
    """10^4 shares of σ = 0.042: the Gaussian estimate of the table's bits (35 nats at the edge, the
    truth about e^{-9600}) left values at 0 (AssertionError: 'a PMF enclosure touches zero'). Each
    share is ±1 with probability about e^{-283}, so ε is about 283 - ln(10^4)."""
    from accounting import DistributedSum

    answer = Accountant().compose(DistributedSum(DiscreteGaussian(0.042), 10**4, 1)).epsilon(1e-6)
    assert 270 < answer.upper < 283


def test_calibrate_many_discrete_gaussian_shares() -> None:
    """10^6 users hung (each level a table of 10^6 convolved shares at σ far below 1): refused on the
    exact routes naming the limit and route='published', which answers."""
    with pytest.raises(ParameterError, match=r"users=1000000 .*route='published'"):
        calibrate("discrete-gaussian", 1.0, 1e-6, users=10**6)
    cal = calibrate("discrete-gaussian", 1.0, 1e-6, users=10**6, route="published")
    assert cal.value >= 0.5
    assert cal.epsilon.upper <= 1.0
