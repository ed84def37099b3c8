"""Benchmarks of the main job (``make bench``): ``make demo`` and ``figure2 --quick``, cold and warm.

Targets on a quiet 2-core machine (issue 24): ``dp-regret reproduce figure1 --quick`` (what
``make demo`` runs after the install) <= 60 s wall with an empty answer cache and <= 15 s when run
again (the cache warm), still printing claimed and exact privacy; ``dp-regret reproduce figure2
--quick`` <= 60 s. Before issue 24 the demo took 308 s of CPU and figure2 --quick 634 s (87 % of it
exact answers of Dist-RDP-SE ledgers by the ``auto`` route, computed serially after the units).

Each command runs as a user runs it: a fresh process, its own cache folder (``DPCERT_CACHE_DIR``).
The wall time is what pytest-benchmark reports (one round: a second round would be warm).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _reproduce(name: str, out: Path, cache: Path) -> str:
    env = {**os.environ, "DPCERT_CACHE_DIR": str(cache)}
    env.pop("DPCERT_NO_CACHE", None)
    command = [sys.executable, "-m", "learners", "reproduce", name, "--quick", "--no-progress"]
    command += ["--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("name", ["figure1", "figure2"])
def test_quick_reproduction_cold_cache(benchmark: pytest.FixtureRequest, tmp_path: Path, name: str) -> None:
    cache = tmp_path / "cache"
    runs = iter(range(100))

    def once() -> str:
        return _reproduce(name, tmp_path / f"out{next(runs)}", cache / str(next(runs)))

    out = benchmark.pedantic(once, rounds=1, iterations=1)  # type: ignore[attr-defined]
    assert "claimed (ε, δ) | exact (ε, δ)" in out


def test_demo_warm_cache(benchmark: pytest.FixtureRequest, tmp_path: Path) -> None:
    """``make demo`` run a second time: its answers come from the cache."""
    cache = tmp_path / "cache"
    _reproduce("figure1", tmp_path / "first", cache)
    runs = iter(range(100))
    out = benchmark.pedantic(  # type: ignore[attr-defined]
        lambda: _reproduce("figure1", tmp_path / f"again{next(runs)}", cache), rounds=1, iterations=1
    )
    assert "claimed (ε, δ) | exact (ε, δ)" in out
