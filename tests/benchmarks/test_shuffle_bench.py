"""Benchmark of issue 7 (run by ``make bench``, never by CI's test run).

Target on the 2-core reference machine: the certified Feldman–McMillan–Talwar numerical bound
for ``n = 1e6``, ``ε0 = 1``, ``δ = 1e-8`` in <= 2 s (the public float script takes about 7 s),
both ends certified (``lower`` included), about ten significant digits apart.
"""

from __future__ import annotations

import pytest

from accounting.shuffle import AmplificationBound, fmt_numerical


def test_fmt_numerical_million_users(benchmark: pytest.FixtureRequest) -> None:
    result: AmplificationBound = benchmark.pedantic(  # type: ignore[attr-defined]
        fmt_numerical, args=(1.0, 10**6, 1e-8), rounds=5, iterations=1, warmup_rounds=1
    )
    assert result.lower is not None
    assert result.lower <= result.epsilon <= result.lower * (1 + 1e-9)
    assert result.epsilon == pytest.approx(0.0061254764616, rel=1e-9)


def test_fmt_numerical_published_example(benchmark: pytest.FixtureRequest) -> None:
    result: AmplificationBound = benchmark.pedantic(  # type: ignore[attr-defined]
        fmt_numerical, args=(4.0, 10**5, 1e-6), rounds=5, iterations=1, warmup_rounds=1
    )
    assert 0.1675 <= result.epsilon <= 0.1728
