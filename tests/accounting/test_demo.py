"""The table of ``dp-account demo`` as a library function (:func:`accounting.demo.demo_rows`)."""

from __future__ import annotations

from accounting.demo import demo_rows


def test_demo_rows_exact_never_above_published() -> None:
    """Every published route is an upper bound, so the exact ε must not exceed it."""
    rows = demo_rows([1.0], 1e-6, users=4, dps=15)
    assert len(rows) == 4
    for row in rows:
        assert 0 < row.exact_epsilon <= row.bound_epsilon
        assert row.exact_digits >= 15
