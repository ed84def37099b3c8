"""Progress reports of long accounting (issue 15 §2.9): the hook a command line's bar uses."""

from __future__ import annotations

import pytest

from accounting import AdditiveNoise, DiscreteLaplace
from accounting.accountant import Accountant
from accounting.calibration import calibrate
from accounting.pld import compose_events
from accounting.progress import bar, report, reporting


def test_a_composition_reports_each_squaring_up_to_its_total() -> None:
    """1000 = 0b1111101000 releases: ten squaring steps, reported in order up to 10 of 10."""
    seen: list[tuple[int, int]] = []
    compose_events(
        [(AdditiveNoise(DiscreteLaplace(5.0)), 1000)],
        "replace-one",
        progress=lambda d, t: seen.append((d, t)),
    )
    assert seen == [(i, 10) for i in range(1, 11)]


def test_the_accountant_reports_through_the_context() -> None:
    """No parameter to pass down: the callback of the context reaches the PLD route's loops."""
    seen: list[tuple[int, int]] = []
    with reporting(lambda d, t: seen.append((d, t))):
        Accountant().compose(AdditiveNoise(DiscreteLaplace(5.0)), 300).epsilon(1e-6)
    assert seen
    assert seen[-1][0] == seen[-1][1]
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    seen.clear()
    Accountant().compose(AdditiveNoise(DiscreteLaplace(5.0)), 300).epsilon(1e-6)  # outside: nothing
    assert not seen


def test_calibration_reports_its_evaluations_only() -> None:
    seen: list[tuple[int, int]] = []
    got = calibrate("discrete-laplace", 1.0, 1e-6, compositions=20, progress=lambda d, t: seen.append((d, t)))
    assert got.epsilon.upper <= 1.0
    assert [d for d, _ in seen] == list(range(1, len(seen) + 1))
    assert all(t == d + 1 for d, t in seen)


def test_bar_disabled_reports_to_nobody(capsys: pytest.CaptureFixture[str]) -> None:
    with bar("accounting", enabled=False) as callback:
        assert callback is None
        report(1, 2)  # nobody listens
        Accountant().compose(AdditiveNoise(DiscreteLaplace(5.0)), 100).epsilon(1e-6)
    assert capsys.readouterr().err == ""
    with bar("accounting") as shown:
        assert shown is not None
        Accountant().compose(AdditiveNoise(DiscreteLaplace(5.0)), 100).epsilon(1e-6)
