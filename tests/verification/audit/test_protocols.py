"""End-to-end audit of the protocols: the auditor on the server's view of one batch.

For Pólya, Skellam and discrete Gaussian shares (Chowdhury & Zhou 2023, Theorems 1, 2 and 4,
parameters from ``accounting.calibration.protocol_parameters``), the auditor finds no violation of
the ε the Accountant reports for the release; with the Pólya scale bug of the paper's released code
injected into the users' shares (``MABPrivate.py`` draws ``Gamma(r, (1-β)/β)`` where footnote 3 of
Section 4 has ``Gamma(r, β/(1-β))``) it finds one.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.typing import NDArray

from accounting.accountant import Accountant
from accounting.papers.distributed_dp_mab import Variant, protocol_parameters
from learners.protocols import Protocol
from verification.audit import audit, protocol_pair
from verification.goodness_of_fit import buggy_polya_sample

USERS = 16
SAMPLES = 200_000


def _claimed(protocol: Protocol, delta: float) -> float:
    acc = Accountant()
    for event in protocol.events():
        acc.compose(event)
    return float(acc.epsilon(delta) if delta > 0 else acc.epsilon(1e-12, route="pure"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variant", "scale", "delta"),
    [
        (Variant.POLYA_SHARES, None, 0.0),
        (Variant.SKELLAM_SHARES, 1.0, 1e-6),
        (Variant.DISCRETE_GAUSSIAN_SHARES, 1.0, 1e-6),
    ],
    ids=lambda x: x.value if isinstance(x, Variant) else None,
)
def test_no_violation_of_the_accounted_epsilon(variant: Variant, scale: float | None, delta: float) -> None:
    params = protocol_parameters(variant, 1.0, USERS, 1000, scaling=scale)
    protocol = Protocol(params)
    claimed = _claimed(protocol, delta)
    if variant is Variant.POLYA_SHARES:
        assert 0.99 < claimed <= 1.0 + 1e-12  # Theorem 1: (ε, 0)-DP with ε = 1
    result = audit(protocol_pair(protocol), delta, claimed, samples=SAMPLES, seed=variant.theorem)
    assert result.verdict == "consistent", result.summary()
    # The audit has power: the lower bound is a sizeable part of the claim.
    assert result.epsilon_lower > 0.3 * claimed, result.summary()


@pytest.mark.slow
def test_polya_scale_bug_is_found() -> None:
    params = protocol_parameters(Variant.POLYA_SHARES, 1.0, USERS, 1000)
    assert params.share is not None
    beta = params.share.beta  # type: ignore[attr-defined]
    buggy = buggy_polya_sample(Fraction(1, USERS), beta)

    def share_sampler(rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.int64]:
        # Each user's share γ⁺ - γ⁻, both from the released code's Gamma–Poisson draw.
        size = math.prod(shape)
        return (buggy(rng, size) - buggy(rng, size)).reshape(shape)

    protocol = Protocol(params, share_sampler=share_sampler)
    claimed = _claimed(Protocol(params), 0.0)
    result = audit(protocol_pair(protocol), 0.0, claimed, samples=SAMPLES, seed=11)
    assert result.verdict == "violation", result.summary()
    assert result.epsilon_lower > 2 * claimed
