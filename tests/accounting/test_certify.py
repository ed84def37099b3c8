"""The certify-upward step (:func:`accounting.search.certify_upward`) and the four ε(δ) solvers on it.

A proposed upper end of ``ε(δ)`` usually passes its check at once, so a round trip cannot tell
whether the check reads the *upper* end of the certified ``δ`` (or the pessimistic grid) or the
lower end (the optimistic grid). The solver tests below make the first candidates fail on
purpose, in one of two ways:

* the certified ``δ`` the check reads is widened to ``[0, δ_hi + m]`` (still an enclosure of
  ``δ``, only looser): the proposal solves ``δ = target`` and so fails by about ``m`` on the
  upper end, while a check on the lower end (0) would pass at once;
* the proposal is moved below the answer (the PLD, whose optimistic grid lies a grid spacing
  below its pessimistic one, so that a check on the optimistic grid passes there).

Each then checks the returned upper end ``hi`` independently: the ``δ`` at ``hi`` (brute force at
50 digits from the reference PMFs of ``noise/reference.py``, the Balle–Wang closed form, or the PLD's
pessimistic ``δ`` at higher precision), plus the margin ``m``, is at most the target.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from mpmath import iv, mp

from accounting import divergence
from accounting.certified import Enclosure, float_up, precision, upper
from accounting.divergence import discrete_gaussian_epsilon, epsilon_for_delta
from accounting.mechanisms import AdditiveNoise
from accounting.noise import DiscreteGaussian, Gaussian, Shifted
from accounting.pld import PrivacyLossDistribution
from accounting.pld.grid import EXTRA_DPS
from accounting.search import certify_upward
from accounting.subsampling import MixturePair
from tests.accounting.noise.reference import REF_DPS
from tests.accounting.test_divergence import brute_hockey

Mpf = Any


class Refuses:
    """A predicate refusing its first ``k`` arguments (``k = None``: all), recording them."""

    def __init__(self, k: int | None) -> None:
        self.k = k
        self.seen: list[Any] = []

    def __call__(self, candidate: Any) -> bool:
        self.seen.append(candidate)
        return self.k is not None and len(self.seen) > self.k


# ---------------------------------------------------------------------------------------------
# The step itself
# ---------------------------------------------------------------------------------------------

PREC = 100


def mpf_sequence(start: Mpf, count: int, growth: int = 2) -> list[Mpf]:
    """``start + n (growth^i - 1)/(growth - 1)``, ``n = max(1, start) 2^(16 - PREC)``, in closed
    form at a higher precision (exact for these starts: the step's rounded sums are exact too)."""
    with mp.workprec(4 * PREC):
        n = mp.ldexp(max(mp.one, start), 16 - PREC)
        return [start + n * (growth**i - 1) / (growth - 1) for i in range(count)]


@pytest.mark.parametrize("start", [mp.zero, mp.mpf(0.75), mp.mpf(5)])
@pytest.mark.parametrize("k", [0, 1, 5])
def test_certify_upward_returns_the_first_certified_candidate(start: Mpf, k: int) -> None:
    expected = mpf_sequence(start, k + 1)
    certified = Refuses(k)
    with mp.workprec(PREC):
        got = certify_upward(start, certified)
    assert got == expected[k]
    assert got._mpf_ == expected[k]._mpf_
    assert certified.seen == expected
    assert len(certified.seen) == k + 1


def test_certify_upward_raises_after_its_bound() -> None:
    certified = Refuses(None)
    with mp.workprec(PREC), pytest.raises(AssertionError, match="could not certify the upper end"):
        certify_upward(mp.mpf(2), certified)
    assert len(certified.seen) == 200
    # The first 100 sums fit in PREC bits (later ones round, as they should).
    assert certified.seen[:100] == mpf_sequence(mp.mpf(2), 100)
    certified = Refuses(None)
    with mp.workprec(PREC), pytest.raises(AssertionError, match="could not certify x in 7 tries"):
        certify_upward(mp.mpf(2), certified, max_tries=7, what="x")
    assert len(certified.seen) == 7


@pytest.mark.parametrize("k", [0, 1, 5])
def test_certify_upward_on_floats_stays_in_float_arithmetic(k: int) -> None:
    start = 3.0
    certified = Refuses(k)
    got = certify_upward(start, certified, nudge_exponent=-44)
    nudge = 3.0 * 2.0**-44
    expected = [start + nudge * (2**i - 1) for i in range(k + 1)]  # exact: few bits
    assert isinstance(got, float)
    assert got == expected[k]
    assert certified.seen == expected


def test_certify_upward_grows_by_the_given_factor() -> None:
    certified = Refuses(5)
    with mp.workprec(PREC):
        got = certify_upward(mp.mpf(0.75), certified, growth=4)
    assert certified.seen == mpf_sequence(mp.mpf(0.75), 6, growth=4)
    assert got == certified.seen[-1]


def test_certify_upward_stops_at_a_ceiling() -> None:
    """A candidate at or above the ceiling is not evaluated; the ceiling is returned instead,
    also when the tries run out (the PLD: its grid loss is certified by an exact sum)."""
    with mp.workprec(PREC):
        sequence = mpf_sequence(mp.mpf(0.75), 6)
        ceiling = (sequence[3] + sequence[4]) / 2
        certified = Refuses(None)
        assert certify_upward(mp.mpf(0.75), certified, ceiling=ceiling) == ceiling
        assert certified.seen == sequence[:4]
        certified = Refuses(None)
        assert certify_upward(mp.mpf(0.75), certified, max_tries=3, ceiling=ceiling) == ceiling
        assert len(certified.seen) == 3
        certified = Refuses(None)
        assert certify_upward(mp.mpf(0.75), certified, ceiling=sequence[3]) == sequence[3]
        assert certified.seen == sequence[:3]  # a candidate equal to the ceiling is not evaluated
        certified = Refuses(None)
        assert certify_upward(mp.mpf(0.75), certified, ceiling=mp.mpf(0.5)) == mp.mpf(0.5)
        assert certified.seen == []
        # A certified candidate below the ceiling is returned as usual.
        assert certify_upward(mp.mpf(0.75), Refuses(2), ceiling=ceiling) == sequence[2]


# ---------------------------------------------------------------------------------------------
# The four solvers: the check must read the upper end of δ (the pessimistic grid)
# ---------------------------------------------------------------------------------------------

#: The relative widening of the certified δ: far above the solvers' rounding (10^-20), far below δ.
MARGIN = mp.mpf(10) ** -6


class Widened:
    """Wraps a function returning an interval ``δ``: returns ``[0, δ_hi + margin]`` and counts calls."""

    def __init__(self, function: Any, margin: Mpf) -> None:
        self.function = function
        self.margin = margin
        self.calls = 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        value = self.function(*args)
        return iv.mpf([0, upper(value + iv.mpf(self.margin))])


def test_epsilon_for_delta_certifies_the_upper_end_of_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    noise = DiscreteGaussian(3.0)
    p, q, delta = Shifted(noise, 1), noise, 1e-3
    margin = MARGIN * delta
    widened = Widened(divergence._envelope, margin)
    monkeypatch.setattr(divergence, "_envelope", widened)
    got = epsilon_for_delta(p, q, delta, dps=20)
    with mp.workdps(REF_DPS):
        assert brute_hockey(p, q, got.hi) + margin <= delta
        # ... and the answer is not far above: δ is at least the target two margins below it.
        assert brute_hockey(p, q, got.lo) + 2 * margin > delta
    assert widened.calls > 1, "the first candidate was not refused: the test checks nothing"


def test_discrete_gaussian_epsilon_certifies_the_upper_end_of_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    noise, shift, delta = DiscreteGaussian(3.0), 1, 1e-3
    margin = MARGIN * delta
    widened = Widened(divergence._dg_delta, margin)
    monkeypatch.setattr(divergence, "_dg_delta", widened)
    got = discrete_gaussian_epsilon(noise, shift, delta, dps=20)
    with mp.workdps(REF_DPS):
        assert brute_hockey(Shifted(noise, shift), noise, got.hi) + margin <= delta
    assert widened.calls > 2, "the first candidate was not refused (one call is at ε = 0)"


def gaussian_delta_reference(sigma: float, epsilon: Mpf) -> Mpf:
    """Balle & Wang 2018, Theorem 8, for sensitivity 1, at 50 digits:
    ``δ(ε) = Φ(1/(2σ) - εσ) - e^ε Φ(-1/(2σ) - εσ)``."""
    with mp.workdps(REF_DPS):
        s = mp.mpf(sigma)
        return mp.ncdf(1 / (2 * s) - epsilon * s) - mp.exp(epsilon) * mp.ncdf(-1 / (2 * s) - epsilon * s)


def test_mixture_pair_epsilon_certifies_the_upper_end_of_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    pair = MixturePair(Gaussian(1.0), Fraction(1), 1.0)  # the Gaussian mechanism, continuous
    delta = 1e-3
    margin = MARGIN * delta
    real = MixturePair.delta
    calls = []

    def widened(self: MixturePair, epsilon: float, dps: int = 20) -> Enclosure:
        calls.append(epsilon)
        value = real(self, epsilon, dps)
        with mp.workdps(REF_DPS):
            return Enclosure(mp.zero, value.hi + margin)

    monkeypatch.setattr(MixturePair, "delta", widened)
    got = pair.epsilon(delta, dps=20)
    assert gaussian_delta_reference(1.0, got.hi) + margin <= delta
    assert len(calls) > 2, "the first candidate was not refused (one call is at ε = 0)"


def test_mixture_pair_epsilon_gives_up_after_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A δ that never falls to the target ends in an error after 200 tries (it used to loop)."""
    calls = []

    def never(self: MixturePair, epsilon: float, dps: int = 20) -> Enclosure:
        calls.append(epsilon)
        return Enclosure(mp.zero, mp.one)

    monkeypatch.setattr(MixturePair, "delta", never)
    with pytest.raises(AssertionError, match="could not certify the mixture's ε"):
        MixturePair(Gaussian(1.0), Fraction(1), 1.0).epsilon(1e-3, dps=20)
    assert len(calls) == 1 + 200


@pytest.mark.parametrize("below", [20, 100], ids=["nudged-up", "tries-exhausted"])
def test_pld_epsilon_certifies_on_the_pessimistic_grid(monkeypatch: pytest.MonkeyPatch, below: int) -> None:
    """The proposal is moved down by ``2^below`` first nudges: with 20 the nudges reach the answer
    again (about ten tries); with 100 they cannot in 24 tries and the grid loss is returned.
    The optimistic grid's ε lies about a grid spacing lower, so it passes at the moved proposal."""

    def made() -> PrivacyLossDistribution:
        return PrivacyLossDistribution.from_mechanism(
            AdditiveNoise(Gaussian(2.0), 1), spacing=2.0**-8, dps=20
        )

    dist = made()
    delta = 1e-3
    exact = made().epsilon(delta)  # another PLD: a PLD keeps the ε it was asked
    assert exact.hi - exact.lo > 1e-6, "the grids must differ for the test to mean anything"
    real = PrivacyLossDistribution._segment_epsilon
    real_side = PrivacyLossDistribution._delta_side
    proposed: list[Mpf] = []
    checked: list[Mpf] = []

    def lowered(self: PrivacyLossDistribution, grid: Any, *args: Any) -> Any:
        value = real(self, grid, *args)
        if value is None or grid is not self.pessimistic:
            return value  # the lower end (optimistic grid) is left alone
        shift = mp.ldexp(max(mp.one, upper(value)), 16 - mp.prec + below)
        proposed.append(upper(value) - shift)
        return value - iv.mpf(shift)

    def side(self: PrivacyLossDistribution, epsilon: Mpf, pessimistic: bool) -> Mpf:
        checked.append(epsilon)
        return real_side(self, epsilon, pessimistic)

    monkeypatch.setattr(PrivacyLossDistribution, "_segment_epsilon", lowered)
    monkeypatch.setattr(PrivacyLossDistribution, "_delta_side", side)
    got = dist.epsilon(delta)
    monkeypatch.undo()
    with precision(dist.dps + EXTRA_DPS + 60):
        assert dist._delta_side(got.hi, pessimistic=True) <= delta
    assert dist.delta(float_up(got.hi)).hi <= delta
    assert len(checked) > 2, "the first candidate was not refused (one call is at ε = 0)"
    assert got.hi > proposed[0]
    if below == 20:
        assert got.hi < exact.hi + mp.mpf(10) ** -30  # nudged, not the grid loss
