"""Benchmarks of issue 15 §2 (``make bench``, not CI): heavy accounting at realistic sizes.

Targets on the 2-core reference machine: each at most 10 s, certified as before. Measured with
the machine shared (load about 2), cold caches; "before" is the code of issue 15's report.

* ε(1e-5) of 10^6 × Skellam(100), auto (PLD): [5425.4672, 5425.5491] in 4.5 s; before: no
  answer in 180 s (10^5 took 190 s).
* ε(1e-5) of DistributedSum(DiscreteGaussian(2), users=10), route="rdp": 0.61574239359773 in
  0.83 s; before: the same value in over 60 s.
* calibrate("skellam", 1, 1e-6, compositions=10^4): variance 178479.22747 (ε <= 1) in 9.0 s,
  4 accounted levels; before: 178479.22740 (within rtol 1e-8) in 2.5 min, 27 levels.
* ε(1e-50) of 10 × DiscreteGaussian(3), auto: [16.1011415336587, 16.1011415336587] (PLD at raised
  precision) in 18 ms; before: ∞ (the RDP route says 16.29).
* ε(1e-6) of 1000 × Skellam(10^4), auto: [1.36756542, 1.36757150] in 1.7 s.
* ε(1e-6) of Skellam(1e-300), one release: 691.46867407877 in 1 ms; before: ∞ (RDP route of two
  releases: 1382.9659, before ∞ after 16 s).
* ε(1e-6) of DiscreteGaussian(2·10^4), one release, by its tails: 8.3153410538631179e-5 (16
  digits) in 12 ms; before: refused (a window of 5·10^5 points, with a hint about discrete Laplace).
* ε(1e-5) of 10^6 × Gaussian(1): [504263.89292065398, 504263.89292065433] in 24 ms.
* ε(1e-5) of 100 × Laplace(10), auto: [4.2202813, 4.2203784] by the PLD (RDP: 4.53) in 31 ms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounting import AdditiveNoise, DiscreteGaussian, DistributedSum, Gaussian, Laplace, Skellam, pld
from accounting.accountant import Accountant
from accounting.calibration import calibrate
from accounting.noise import sum_of_discrete_gaussians as noise_module
from accounting.noise.base import _cached_table


def _cold() -> None:
    _cached_table.cache_clear()
    pld.atoms.lattice_atoms.cache_clear()
    noise_module._SUM_TABLES.clear()


def _once(benchmark: Any, run: Callable[[], Any], rounds: int = 1) -> Any:
    return benchmark.pedantic(run, setup=_cold, rounds=rounds, iterations=1)


def test_million_skellam_releases(benchmark: pytest.FixtureRequest) -> None:
    answer = _once(benchmark, lambda: Accountant().compose(AdditiveNoise(Skellam(100)), 10**6).epsilon(1e-5))
    assert answer.route == "pld"
    assert answer.relative_width < 1e-4


def test_sum_of_discrete_gaussians_rdp_route(benchmark: pytest.FixtureRequest) -> None:
    mech = DistributedSum(DiscreteGaussian(2), users=10)
    answer = _once(benchmark, lambda: Accountant().compose(mech).epsilon(1e-5, route="rdp"), rounds=3)
    assert float(answer) == pytest.approx(0.61574239359773, rel=1e-9)


def test_skellam_calibration_over_ten_thousand_compositions(benchmark: pytest.FixtureRequest) -> None:
    cal = _once(benchmark, lambda: calibrate("skellam", 1.0, 1e-6, compositions=10_000))
    assert cal.epsilon.upper <= 1.0
    assert cal.value == pytest.approx(178479.2274, rel=1e-6)


def test_auto_at_a_tiny_delta(benchmark: pytest.FixtureRequest) -> None:
    ledger = Accountant().compose(AdditiveNoise(DiscreteGaussian(3.0)), 10)
    answer = _once(benchmark, lambda: ledger.epsilon(1e-50), rounds=5)
    assert answer.route == "pld"
    assert float(answer) == pytest.approx(16.10114153, rel=1e-8)


def test_auto_for_skellam_compositions(benchmark: pytest.FixtureRequest) -> None:
    ledger = Accountant().compose(AdditiveNoise(Skellam(1e4)), 1000)
    answer = _once(benchmark, lambda: ledger.epsilon(1e-6), rounds=3)
    assert answer.relative_width < 1e-4


def test_tiny_skellam(benchmark: pytest.FixtureRequest) -> None:
    mech = AdditiveNoise(Skellam(1e-300))
    single = _once(benchmark, lambda: mech.epsilon(1e-6), rounds=5)
    assert float(single) == pytest.approx(691.46867407877, rel=1e-12)
    assert float(Accountant().compose(mech, 2).epsilon(1e-6, route="rdp")) < 1383.0


def test_wide_discrete_gaussian_single_release(benchmark: pytest.FixtureRequest) -> None:
    mech = AdditiveNoise(DiscreteGaussian(2e4))
    answer = _once(benchmark, lambda: mech.epsilon(1e-6), rounds=5)
    assert answer.relative_width < 1e-15


def test_million_gaussian_releases_closed_form(benchmark: pytest.FixtureRequest) -> None:
    ledger = Accountant().compose(AdditiveNoise(Gaussian(1.0)), 10**6)
    answer = _once(benchmark, lambda: ledger.epsilon(1e-5), rounds=5)
    assert answer.lo <= 504263.89292065408 <= answer.hi


def test_laplace_ledger_by_auto(benchmark: pytest.FixtureRequest) -> None:
    ledger = Accountant().compose(AdditiveNoise(Laplace(10.0)), 100)
    answer = _once(benchmark, lambda: ledger.epsilon(1e-5), rounds=5)
    assert answer.route == "pld"
    assert float(answer) == pytest.approx(4.2203, abs=2e-4)
