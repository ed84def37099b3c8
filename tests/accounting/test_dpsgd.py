"""DP-SGD's questions (:mod:`accounting.dpsgd`): ε after a run, the noise multiplier for a target,
a curve over steps, schedules of phases, and an Opacus accountant's history certified.

The single step is checked against an independent reference: the Poisson-sampled Gaussian's
``δ(ε)`` in closed form by its tails (the loss is monotone), at 50 digits in mpmath.
"""

from __future__ import annotations

from typing import Any

import pytest
from mpmath import mp

from accounting import AdditiveNoise, Gaussian, ParameterError, ParameterTypeError
from accounting.accountant import Accountant
from accounting.dpsgd import (
    Phase,
    certify_opacus,
    epsilon,
    epsilon_curve,
    ledger,
    noise_multiplier,
    opacus_schedule,
    schedule_epsilon,
)
from accounting.subsampling import PoissonSampled


def _one_step_delta(sigma: float, q: float, eps: float) -> Any:
    """``δ(ε)`` of one Poisson-sampled Gaussian step under add-remove, the worse direction.

    Remove: ``P = (1-q) N(0, σ²) + q N(1, σ²)`` against ``Q = N(0, σ²)``; add: the reverse. The
    loss ``ln P/Q`` is increasing in the output, so ``δ = P(X > t) - e^ε Q(X > t)`` at the
    crossing ``t`` (remove) and ``δ = Q'(X < t) - e^ε P'(X < t)`` (add), each found by bisection.
    """
    with mp.workdps(50):
        s, qq, e = mp.mpf(sigma), mp.mpf(q), mp.mpf(eps)

        def sf(x: Any, mean: Any) -> Any:
            return mp.erfc((x - mean) / (s * mp.sqrt(2))) / 2

        def ratio(x: Any) -> Any:  # P/Q of the remove direction, increasing in x
            return (1 - qq) + qq * mp.exp((2 * x - 1) / (2 * s * s))

        # remove: loss ln ratio > ε beyond t
        t = (
            mp.findroot(lambda x: mp.log(ratio(x)) - e, (-50, 50), solver="bisect")
            if e < mp.log(ratio(mp.mpf(60)))
            else mp.mpf(60)
        )
        remove = ((1 - qq) * sf(t, 0) + qq * sf(t, 1)) - mp.exp(e) * sf(t, 0)
        # add: P = N(0), Q = mixture; the loss -ln ratio > ε below u
        lower_limit = -mp.log(1 - qq)
        if e >= lower_limit:
            add = mp.zero
        else:
            u = mp.findroot(lambda x: -mp.log(ratio(x)) - e, (-60, 50), solver="bisect")
            add = (1 - sf(u, 0)) - mp.exp(e) * ((1 - qq) * (1 - sf(u, 0)) + qq * (1 - sf(u, 1)))
        return max(remove, add)


@pytest.mark.parametrize(("sigma", "q"), [(1.0, 0.01), (0.8, 0.001), (2.0, 0.1)])
def test_one_step_encloses_the_closed_form(sigma: float, q: float) -> None:
    delta = 1e-6 if q > 0.01 else 1e-9
    answer = epsilon(sigma, q, 1, delta)
    assert answer.lo <= answer.hi
    assert _one_step_delta(sigma, q, float(answer.hi)) <= delta * (1 + 1e-12)
    if answer.lo > 0:
        assert _one_step_delta(sigma, q, float(answer.lo)) >= delta * (1 - 1e-12)


@pytest.mark.slow
def test_a_run_is_the_ledger_of_its_steps_and_add_remove_is_the_default() -> None:
    run = epsilon(1.0, 0.01, 200, 1e-5)
    by_hand = Accountant("add-remove").compose(PoissonSampled(AdditiveNoise(Gaussian(1.0), 1), 0.01), 200)
    assert run == by_hand.epsilon(1e-5)
    assert epsilon(1.0, 0.01, 200, 1e-5, neighbouring="replace-one").hi >= run.hi


def test_a_schedule_composes_its_phases_in_one_ledger() -> None:
    phases = [Phase(0.01, 1.2, 50), (0.02, 0.9, 30), Phase(0.5, 1.0, 0)]
    acc = ledger(phases)
    assert [e.count for e in acc.ledger] == [50, 30]
    both = schedule_epsilon(phases, 1e-5, route="rdp")
    assert both == acc.epsilon(1e-5, "rdp")
    first = schedule_epsilon(phases[:1], 1e-5, route="rdp")
    assert first.hi < both.hi


def test_the_curve_rises_with_the_steps() -> None:
    curve = epsilon_curve(1.0, 0.01, [10, 100, 400], 1e-5, route="rdp")
    assert [s for s, _ in curve] == [10, 100, 400]
    highs = [e.hi for _, e in curve]
    assert highs == sorted(highs)


@pytest.mark.slow
def test_the_noise_multiplier_meets_its_target() -> None:
    cal = noise_multiplier(1.0, 1e-5, 0.1, 10, route="rdp", rtol=1e-4)
    assert cal.epsilon.upper <= 1.0
    assert epsilon(cal.value, 0.1, 10, 1e-5, route="rdp").upper <= 1.0
    assert epsilon(cal.value * 0.99, 0.1, 10, 1e-5, route="rdp").upper > 1.0


class _RecordedOpacus:
    """An Opacus accountant as the adapter sees it: ``history`` and ``get_epsilon``."""

    def __init__(self, history: list[tuple[float, float, int]], says: float) -> None:
        self.history = history
        self.says = says

    def get_epsilon(self, delta: float) -> float:
        return self.says


@pytest.mark.slow
def test_an_opacus_history_is_certified_and_its_answer_placed() -> None:
    history = [(1.1, 0.05, 20), (0.9, 0.1, 10)]  # Opacus's (noise_multiplier, sample_rate, steps)
    phases = opacus_schedule(history)
    assert phases == [Phase(0.05, 1.1, 20), Phase(0.1, 0.9, 10)]
    bare = certify_opacus(history, 1e-5)
    assert bare.theirs is None
    assert bare.certified == schedule_epsilon(phases, 1e-5)
    low, high = float(bare.certified.lo), bare.certified.upper
    assert low > 0
    below = certify_opacus(_RecordedOpacus(history, low * 0.9), 1e-5)
    assert below.verdict == "optimistic"
    above = certify_opacus(_RecordedOpacus(history, high * 1.1), 1e-5)
    assert above.verdict == "loose"
    assert "safe, but looser" in str(above)


@pytest.mark.parametrize(
    ("call", "name", "error"),
    [
        (lambda: epsilon(1.0, 1.5, 10, 1e-5), "sample_rate", ParameterError),
        (lambda: epsilon(1.0, 0.0, 10, 1e-5), "sample_rate", ParameterError),
        (lambda: epsilon(-1.0, 0.1, 10, 1e-5), "noise_multiplier", ParameterError),
        (lambda: schedule_epsilon([(0.1, 1.0, -5)], 1e-5), "schedule[0].steps", ParameterError),
        (lambda: schedule_epsilon([(0.1, 1.0)], 1e-5), "schedule[0]", ParameterTypeError),
        (lambda: schedule_epsilon([(0.1, 1.0, 0)], 1e-5), "schedule", ParameterError),
        (lambda: opacus_schedule([(1.0, 0.1)]), "history[0]", ParameterTypeError),
        (lambda: opacus_schedule([(1.0, 2.0, 5)]), "history[0].sample_rate", ParameterError),
        (lambda: epsilon_curve(1.0, 0.1, [], 1e-5), "steps", ParameterTypeError),
        (lambda: epsilon(1.0, 0.1, 10, 1e-5, sampling="shuffled"), "sampling", ParameterError),
    ],
)
def test_bad_input_names_the_field(call: Any, name: str, error: type[Exception]) -> None:
    with pytest.raises(error) as err:
        call()
    assert getattr(err.value, "name", None) == name


@pytest.mark.slow
def test_a_small_sampling_rate_takes_the_pld_route() -> None:
    """At q = 3e-5 the PLD route used to refuse (the loss's spread is about q, its window's span
    about 6), and auto answered by RDP, 0.383: now the grid is as fine as the cells allow and the
    PLD answers, holding Google's dp_accounting PLD value (0.00273 at a 1e-6 grid)."""
    from dp_accounting import dp_event as de
    from dp_accounting.pld import pld_privacy_accountant

    answer = epsilon(1.0, 3e-5, 1000, 1e-5)
    assert answer.route == "pld"
    theirs = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-6)
    theirs.compose(de.PoissonSampledDpEvent(3e-5, de.GaussianDpEvent(1.0)), 1000)
    assert answer.lo <= theirs.get_epsilon(1e-5) <= answer.hi
    assert answer.hi < 0.383 / 100
