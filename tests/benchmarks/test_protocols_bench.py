"""Benchmarks of the R / S / A protocol (``make bench``): one batch of 10^6 users.

Target on the 2-core reference machine: one batch of 10^6 users through randomizer, secure
aggregation and analyzer (Theorem 1 or 2 parameters, exact integer noise) in <= 1 s. Measured
when written (median): Theorem 1 about 0.025 s with the ideal modular sum and 0.045 s with simulated
zero-sum masks; Theorem 2 (exact Skellam shares) about 0.12 s.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting.papers.distributed_dp_mab import Variant, protocol_parameters
from learners.protocols import Protocol

USERS = 10**6


@pytest.mark.parametrize(
    ("variant", "scale", "secure"),
    [
        (Variant.POLYA_SHARES, None, "modular"),
        (Variant.POLYA_SHARES, None, "masked"),
        (Variant.SKELLAM_SHARES, 1.0, "modular"),
    ],
)
def test_one_batch_of_a_million_users(
    benchmark: pytest.FixtureRequest, variant: Variant, scale: float | None, secure: str
) -> None:
    params = protocol_parameters(variant, 1.0, USERS, 10**4, scaling=scale)
    protocol = Protocol(params, exact=True, secure_aggregation=secure)
    x = np.random.default_rng(0).random((1, USERS))
    rng = np.random.default_rng(1)
    release = benchmark(lambda: protocol.release(x, rng))  # type: ignore[operator]
    rounding = math.sqrt(2 * USERS * math.log(2e6)) / params.g
    assert abs(float(release.estimate[0]) - float(x.sum())) <= params.tau / params.g + rounding
