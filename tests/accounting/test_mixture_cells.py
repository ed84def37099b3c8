"""The cells of Gaussian mixture pairs in Arb balls (accounting.mixture_cells), held against mpmath.

Every ball must contain the value mpmath computes at 60 digits from the definition (the tails by
``mpmath.erfc``, the loss by ``ln`` of the two mixture densities), and be tight; the public
``MixturePair.masses``/``losses`` (intervals) must contain the balls' values too.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from mpmath import iv, mp

from accounting import AdditiveNoise, Gaussian
from accounting.balls import arb, ball, ball_of, ball_precision, interval_of, lower_of, upper_of
from accounting.certified import lower, precision, upper
from accounting.mixture_cells import gaussian_losses, gaussian_masses
from accounting.pld import dominating_pairs
from accounting.subsampling import MixturePair, PoissonSampled, SampledWithoutReplacement


def pairs() -> list[MixturePair]:
    out = [MixturePair(Gaussian(1.7), Fraction(1), 2.0)]  # the plain shift pair
    for event in (
        PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.01),
        PoissonSampled(AdditiveNoise(Gaussian(0.6), 2.0), 0.3),
        SampledWithoutReplacement(AdditiveNoise(Gaussian(2.5), 1.0), 0.05),
    ):
        for relation in ("add-remove", "replace-one"):
            for pair in dominating_pairs(event, relation).values():
                assert isinstance(pair, MixturePair)
                out.append(pair)
    return out


def reference(pair: MixturePair, a: mp.mpf, b: mp.mpf) -> tuple[mp.mpf, mp.mpf, mp.mpf]:
    """``P(a < X <= b)``, ``Q(a < X <= b)`` and ``L(b)`` at the ambient (60-digit) precision,
    each tail on its small side (``a``, ``b`` may be infinite)."""
    sigma = mp.mpf(pair.noise.sigma)  # type: ignore[attr-defined]
    scale = sigma * mp.sqrt(2)

    def between(loc: float) -> mp.mpf:
        u, v = (a - loc) / scale, (b - loc) / scale
        if u >= 0:
            return (mp.erfc(u) - mp.erfc(v)) / 2
        if v <= 0:
            return (mp.erfc(-v) - mp.erfc(-u)) / 2
        return 1 - (mp.erfc(-u) + mp.erfc(v)) / 2

    def density(loc: float) -> mp.mpf:
        return mp.exp(-((b - loc) ** 2) / (2 * sigma**2))

    def mix(f: Callable[[float], mp.mpf], in_p: bool) -> mp.mpf:
        weights = [
            (mp.mpf(w.numerator) / w.denominator, loc) for w, loc, side in pair.components() if side == in_p
        ]
        return sum((w * f(loc) for w, loc in weights), mp.zero)

    loss = mp.log(mix(density, True)) - mp.log(mix(density, False)) if mp.isfinite(b) else mp.nan
    return mix(between, True), mix(between, False), loss


@pytest.mark.parametrize("pair", pairs(), ids=repr)
def test_balls_contain_the_60_digit_values(pair: MixturePair) -> None:
    rng = np.random.default_rng(7)
    xs = sorted({float(x) for x in rng.normal(0.5, 4.0, 60)} | {-30.0, -9.5, 0.0, 0.5, 1.0, 12.0, 35.0})
    with precision(30):
        losses = gaussian_losses(pair, xs)
        masses = gaussian_masses(pair, xs)
    assert len(masses) == len(xs) + 1
    with mp.workdps(60):
        ends = [-mp.inf, *(mp.mpf(x) for x in xs), mp.inf]
        for i, (a, b) in enumerate(itertools.pairwise(ends)):
            true_p, true_q, loss = reference(pair, a, b)
            cell_p, cell_q = masses[i]  # the cell (x_{i-1}, x_i]
            assert lower_of(cell_p) <= true_p <= upper_of(cell_p), (float(b), true_p, cell_p)
            assert lower_of(cell_q) <= true_q <= upper_of(cell_q), (float(b), true_q, cell_q)
            assert float(cell_p.rad()) <= 1e-20 * float(true_p) + 1e-300
            if i < len(xs):
                ball_loss = losses[i]
                assert lower_of(ball_loss) <= loss <= upper_of(ball_loss)
                assert float(ball_loss.rad()) <= 1e-25 * max(1.0, abs(float(loss)))


@pytest.mark.parametrize("pair", pairs()[:3], ids=repr)
def test_the_interval_methods_agree_with_mpmaths_own_evaluation(pair: MixturePair) -> None:
    """``MixturePair.masses``/``losses`` take the balls at float points and mpmath's intervals
    (:func:`accounting.special.erfc`) at mpf points: the two must overlap everywhere."""
    xs = [-4.0, -0.25, 0.3, 1.0, 2.75, 8.0]
    with precision(30):
        fast_m, fast_l = pair.masses(xs), pair.losses(xs)
        slow_m, slow_l = pair.masses([mp.mpf(x) for x in xs]), pair.losses([iv.mpf(x) for x in xs])
    for a, b in zip(fast_l, slow_l, strict=True):
        assert lower(a) <= upper(b)
        assert lower(b) <= upper(a)
    for (ap, aq), (bp, bq) in zip(fast_m, slow_m, strict=True):
        assert lower(ap) <= upper(bp)
        assert lower(bp) <= upper(ap)
        assert lower(aq) <= upper(bq)
        assert lower(bq) <= upper(aq)


def test_balls_and_intervals_convert_outward() -> None:
    with precision(30), ball_precision(iv.prec):
        for value in (
            iv.sqrt(2) / 3,
            iv.mpf([-1.5, 2.0]),
            iv.mpf(0),
            iv.mpf("1e-300") / 7,
            -iv.exp(iv.mpf(40)),
        ):
            b = ball_of(value)
            assert lower_of(b) <= lower(value)
            assert upper(value) <= upper_of(b)
            back = interval_of(b)
            assert lower(back) <= lower_of(b)
            assert upper_of(b) <= upper(back)
        third = ball(Fraction(1, 3))
        assert lower_of(third) < mp.mpf(1) / 3 < upper_of(third)
        assert ball(0.1) == arb(0.1)
        assert lower_of(ball(mp.mpf("0.1"))) == upper_of(ball(mp.mpf("0.1")))
