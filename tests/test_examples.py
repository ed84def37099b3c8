"""The runnable examples of ``examples/`` (issue 15 §4) run as written and print what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _run(name: str, *args: str) -> str:
    command = [sys.executable, str(EXAMPLES / name), *args]
    # the timeout is a hang guard on a loaded machine, not a speed target
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_noise_for_target() -> None:
    out = _run("noise_for_target.py")
    assert "certified ε" in out
    assert "add-remove: ε = 0.6" in out  # the removed share's variance change, far above replace-one
    assert "DP-SGD (q = 0.01, 1000 steps): σ = 1.41" in out


@pytest.mark.slow
def test_audit_a_mechanism() -> None:
    out = _run("audit_a_mechanism.py")
    assert "consistent" in out
    assert "violation" in out


@pytest.mark.slow
def test_custom_experiment(tmp_path: Path) -> None:
    out = _run("custom_experiment.py", str(tmp_path / "out"))
    assert (tmp_path / "out" / "summary.json").is_file()
    assert (tmp_path / "out" / "regret.csv").is_file()
    assert "regret-my-experiment.png" in out
