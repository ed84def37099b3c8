"""Benchmarks of issue 4 (``make bench``): the empirical auditor.

Target on the 2-core reference machine: the discrete Laplace audit (scale 10, ε = 0.1, 10⁶ samples
per side, 95%) in <= 5 s with a lower bound >= 0.09 (the public privacy-estimates tool: 0.097 in
11 s). 10⁸ samples per side run in chunks of 10⁶, so memory stays that of one chunk.
"""

from __future__ import annotations

import resource

import pytest

from accounting import DiscreteLaplace
from verification.audit import additive_pair, audit


def test_discrete_laplace_audit_1e6(benchmark: pytest.FixtureRequest) -> None:
    result = benchmark.pedantic(  # type: ignore[attr-defined]
        lambda: audit(additive_pair(DiscreteLaplace(10)), claimed_epsilon=0.1, samples=10**6, seed=1),
        rounds=3,
        iterations=1,
    )
    assert result.epsilon_lower >= 0.09
    assert result.verdict == "consistent"


def test_discrete_laplace_audit_1e8_bounded_memory(benchmark: pytest.FixtureRequest) -> None:
    result = benchmark.pedantic(  # type: ignore[attr-defined]
        lambda: audit(additive_pair(DiscreteLaplace(10)), claimed_epsilon=0.1, samples=10**8, seed=2),
        rounds=1,
        iterations=1,
    )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    benchmark.extra_info["peak_rss_mb"] = peak_mb  # type: ignore[attr-defined]
    assert result.epsilon_lower >= 0.095
    assert peak_mb < 2048
