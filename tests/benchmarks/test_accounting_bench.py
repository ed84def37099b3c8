"""Benchmarks of issue 2 (run by ``make bench``, never by CI's test run).

Targets on the 2-core reference machine: ε(δ=1e-5) certified to 15 significant digits for
Skellam of variance 100 in <= 0.2 s and for a sum of 10 discrete Gaussians with σ = 2 in
<= 0.4 s; rdp(α) of Skellam with variance 1e4 at 30 digits in <= 0.2 s. Each round starts
with a cold PMF-table cache, so the numbers include building the exact tables.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from accounting import AdditiveNoise, DiscreteGaussian, DistributedSum, Enclosure, Skellam
from accounting.noise.base import _cached_table


def _cold(benchmark: pytest.FixtureRequest, run: Callable[[], Enclosure]) -> Enclosure:
    result: Enclosure = benchmark.pedantic(  # type: ignore[attr-defined]
        run, setup=_cached_table.cache_clear, rounds=10, iterations=1, warmup_rounds=1
    )
    return result


def test_skellam_epsilon(benchmark: pytest.FixtureRequest) -> None:
    mech = AdditiveNoise(Skellam(100), sensitivity=1)
    result = _cold(benchmark, lambda: mech.epsilon(1e-5, dps=15))
    assert result.digits() >= 15


def test_sum_of_discrete_gaussians_epsilon(benchmark: pytest.FixtureRequest) -> None:
    mech = DistributedSum(DiscreteGaussian(2), users=10)
    result = _cold(benchmark, lambda: mech.epsilon(1e-5, dps=15))
    assert result.digits() >= 15


@pytest.mark.parametrize("alpha", [4, 2.5])
def test_skellam_rdp_large_variance(benchmark: pytest.FixtureRequest, alpha: float) -> None:
    mech = AdditiveNoise(Skellam(10_000), sensitivity=1)
    result = _cold(benchmark, lambda: mech.rdp(alpha, dps=30))
    assert result.digits() >= 30
