"""Tests of :mod:`accounting.monotone`: thresholds of a pair with a nondecreasing privacy loss.

The certified threshold bracket really brackets ``ε`` (the loss checked here in interval
arithmetic at both ends), the float window really holds the tails, and ``δ(ε)`` of the Gaussian
mechanism pair ``(N(Δ, σ²), N(0, σ²))`` encloses Balle & Wang 2018 Theorem 8 recomputed here.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from mpmath import iv, mp

from accounting import Gaussian, Laplace
from accounting.certified import lower, precision, upper
from accounting.monotone import _threshold, float_window, inverse_float, threshold_delta, threshold_epsilon
from accounting.subsampling import MixturePair

PAIRS = [
    MixturePair(Gaussian(1.0), Fraction(1), 1.0),
    MixturePair(Gaussian(2.0), Fraction(1, 10), 1.0),
    MixturePair(Laplace(1.0), Fraction(1, 2), 2.0, Fraction(1, 2), -2.0),
    MixturePair(Gaussian(0.5), Fraction(0), 0.0, Fraction(3, 10), -1.0),
]


@pytest.mark.parametrize("pair", PAIRS, ids=repr)
@pytest.mark.parametrize("eps", [0.0, 0.05, 0.6, 1.9])
def test_threshold_brackets_epsilon_with_certified_ends(pair: MixturePair, eps: float) -> None:
    with precision(20):
        a, b = _threshold(pair, mp.mpf(eps))
        assert a <= b
        if mp.isfinite(a):
            assert upper(pair.loss(iv.mpf(a))) <= eps
        if mp.isfinite(b):
            assert lower(pair.loss(iv.mpf(b))) >= eps
            assert b - a <= mp.ldexp(max(mp.one, abs(a), abs(b)), -iv.prec + 26)


@pytest.mark.parametrize("pair", PAIRS, ids=repr)
def test_float_window_holds_the_tails(pair: MixturePair) -> None:
    log_mass = -30.0
    lo, hi = float_window(pair.log_tails_float, pair.centers(), 1.0, log_mass)
    p_low, _, q_low, _ = pair.log_tails_float(np.array([lo]))
    _, p_high, _, q_high = pair.log_tails_float(np.array([hi]))
    assert np.logaddexp(p_low, q_low)[0] <= log_mass
    assert np.logaddexp(p_high, q_high)[0] <= log_mass


def test_inverse_float_inverts_an_increasing_function() -> None:
    targets = np.array([-3.0, 0.0, 0.5, 7.0])
    xs = inverse_float(lambda x: np.asarray(x**3, dtype=np.float64), targets, -10.0, 10.0)
    assert np.allclose(xs**3, targets, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("sigma", "eps"), [(1.0, 0.5), (3.0, 0.1), (0.7, 2.0)])
def test_gaussian_pair_is_balle_wang(sigma: float, eps: float) -> None:
    """δ = Φ(1/(2σ) - εσ) - e^ε Φ(-1/(2σ) - εσ) at Δ = 1 (Balle & Wang 2018, Theorem 8)."""
    pair = MixturePair(Gaussian(sigma), Fraction(1), 1.0)
    with mp.workdps(60):
        s, e = mp.mpf(sigma), mp.mpf(eps)
        exact = mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)
    got = threshold_delta(pair, eps, 30)
    assert got.lo <= exact <= got.hi
    assert got.relative_width < 1e-20
    target = float(exact)
    inverse = threshold_epsilon(pair, target, 30)
    assert inverse.lo <= eps * (1 + 1e-12)
    assert threshold_delta(pair, float(inverse.hi), 30).hi <= target
    assert math.isfinite(float(inverse.hi))
