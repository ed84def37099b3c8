"""Tests of :mod:`verification.audit.pairs`: neighbouring pairs and the statistics of vector outputs.

The shared-noise pair is the ``dp-se-shared-noise`` entry of :mod:`verification.broken` in small:
DP-SE (Sajed & Sheffet 2019) with one Laplace draw added to every arm's sum, which cancels in the
difference of two arms (found by a fixed statistic or by Fisher's discriminant fitted on the pilot).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from accounting import DiscreteLaplace, ParameterError, ParameterTypeError
from verification.audit import CoordinateDifference, Projection, additive_pair, audit, protocol_pair
from verification.errors import VerificationError

Pair = tuple[NDArray[Any], NDArray[Any]]


def shared_noise_pair(rng: np.random.Generator, size: int) -> Pair:
    """Three arm sums (5, 3, 4) plus one shared Laplace draw; D' adds 1 to arm 0."""
    noise = rng.laplace(0.0, 1.0, (size, 1))
    base = np.array([5.0, 3.0, 4.0])
    return base + noise, base + np.array([1.0, 0.0, 0.0]) + rng.laplace(0.0, 1.0, (size, 1))


@pytest.mark.parametrize("statistic", [CoordinateDifference(0, 1), Projection((1.0, -1.0, 0.0)), None])
def test_vector_outputs_with_a_statistic(statistic: Any) -> None:
    # The shared noise cancels in x[0] - x[1]; the default (a linear discriminant fitted on
    # the pilot) finds such a direction by itself.
    r = audit(shared_noise_pair, claimed_epsilon=1.0, samples=20_000, seed=2, statistic=statistic)
    assert r.verdict == "violation"
    # Perfect separation: p_lo = (α/2)^(1/n), q_hi = 1 - (α/2)^(1/n), so ε_lb ≈ ln(n / ln(2/α)) = 7.9
    # at n = 10^4 per half: the most 2·10^4 samples per side can show.
    assert r.epsilon_lower == pytest.approx(math.log(10_000 / math.log(40)), abs=0.01)
    assert r.counts.second == 0


def test_coordinate_statistics_name_themselves() -> None:
    assert str(CoordinateDifference(2, 0)) == "x[2] - x[0]"
    assert str(Projection((1.0, -1.0))) == "<(1, -1), x>"
    with pytest.raises(ParameterError):
        CoordinateDifference(1, 1)
    with pytest.raises(VerificationError):
        CoordinateDifference(0, 5)(np.zeros((3, 2)))
    with pytest.raises(VerificationError):
        Projection((1.0, 2.0))(np.zeros((3, 3)))


def test_a_custom_integer_statistic() -> None:
    # Parity of Lap_Z(1) + {0, 1}: a non-monotone statistic, integer-binned.
    def parity(x: NDArray[Any]) -> NDArray[np.int64]:
        return np.asarray(x % 2, dtype=np.int64)

    r = audit(
        additive_pair(DiscreteLaplace(1)), claimed_epsilon=1.0, samples=50_000, seed=4, statistic=parity
    )
    assert r.statistic == "parity(x)"
    assert r.verdict == "consistent"
    # P(X even) = tanh(1/2)(1 + 2e^-2/(1 - e^-2)) = 0.607 for Lap_Z(1): the ratio is ln(0.607/0.393) = 0.43.
    assert 0.3 < r.epsilon_lower <= 0.44


def test_additive_pair_validates() -> None:
    with pytest.raises(ParameterError) as info:
        additive_pair("laplace", 1)  # type: ignore[arg-type]
    assert info.value.name == "noise"
    with pytest.raises(ParameterError) as info:
        additive_pair(DiscreteLaplace(2), Fraction(3, 2))  # type: ignore[arg-type]
    assert info.value.name == "sensitivity"
    pair = additive_pair(DiscreteLaplace(2), 3)
    a, b = pair(np.random.default_rng(0), 1000)
    assert a.dtype == b.dtype == np.int64
    assert abs(float(b.mean() - a.mean()) - 3) < 0.5


def test_protocol_pair_validates() -> None:
    with pytest.raises(ParameterTypeError, match="protocol"):
        protocol_pair("not a protocol")  # type: ignore[arg-type]
