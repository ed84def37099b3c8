"""DP-SGD accounting side by side (``make bench``, not CI): dpcert against the float accountants.

The Poisson-subsampled Gaussian (q = 0.01, σ = 1, add-remove, δ = 1e-5) composed 10^3 to 10^5
times, each accountant timed in this process on its own, cold, and its ε printed beside dpcert's
certified enclosure: Google's dp_accounting PLD accountant (its default discretization 1e-4) and
RDP accountant, Microsoft's prv-accountant (``eps_error=0.01``), and Opacus's PRV and RDP
accountants when ``opacus`` is importable (it needs torch; the table says so when it is not).
The table is printed and written to ``dpsgd_table.md`` beside this file (not kept in git). The
truth at 10^4 steps, computed independently at 40 digits, is 6.18771239.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accounting import dpsgd

Q, SIGMA, DELTA = 0.01, 1.0, 1e-5
STEPS = (1_000, 10_000, 100_000)


def _dpcert(steps: int) -> str:
    e = dpsgd.epsilon(SIGMA, Q, steps, DELTA)
    return f"[{float(e.lower):.6f}, {float(e.upper):.6f}]"


def _dp_accounting(kind: str) -> Callable[[int], str]:
    def run(steps: int) -> str:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant

        relation = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
        accountant: Any = (
            pld_privacy_accountant.PLDAccountant(neighboring_relation=relation)
            if kind == "pld"
            else rdp_privacy_accountant.RdpAccountant(neighboring_relation=relation)
        )
        event = dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(SIGMA))
        accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
        return f"{accountant.get_epsilon(DELTA):.6f}"

    return run


def _prv(steps: int) -> str:
    from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant

    mech = PoissonSubsampledGaussianMechanism(noise_multiplier=SIGMA, sampling_probability=Q)
    accountant = PRVAccountant(prvs=[mech], max_self_compositions=[steps], eps_error=0.01, delta_error=1e-9)
    low, estimate, high = accountant.compute_epsilon(delta=DELTA, num_self_compositions=[steps])
    return f"{estimate:.6f} [{low:.4f}, {high:.4f}]"


def _opacus(kind: str) -> Callable[[int], str]:
    def run(steps: int) -> str:
        from opacus.accountants import PRVAccountant, RDPAccountant

        accountant = PRVAccountant() if kind == "prv" else RDPAccountant()
        accountant.history = [(SIGMA, Q, steps)]
        return f"{accountant.get_epsilon(DELTA):.6f}"

    return run


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


ACCOUNTANTS: list[tuple[str, str, Callable[[int], str]]] = [
    ("dpcert (certified)", "accounting", _dpcert),
    ("dp_accounting PLD", "dp_accounting", _dp_accounting("pld")),
    ("dp_accounting RDP", "dp_accounting", _dp_accounting("rdp")),
    ("prv-accountant", "prv_accountant", _prv),
    ("Opacus PRV", "opacus", _opacus("prv")),
    ("Opacus RDP", "opacus", _opacus("rdp")),
]


def table() -> str:
    """The markdown table: one row per accountant, ``ε (seconds)`` per number of steps."""
    rows = ["| accountant | " + " | ".join(f"{s:,} steps" for s in STEPS) + " |"]
    rows.append("|---" * (len(STEPS) + 1) + "|")
    for name, module, run in ACCOUNTANTS:
        if not _available(module):
            rows.append(f"| {name} | " + " | ".join("not installed" for _ in STEPS) + " |")
            continue
        importlib.import_module(module)  # timed: the accounting, not the import
        cells = []
        for steps in STEPS:
            start = time.perf_counter()
            value = run(steps)
            cells.append(f"{value} ({time.perf_counter() - start:.2f} s)")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def test_dpsgd_side_by_side(benchmark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Times dpcert's 10^4 steps as the benchmark, and prints and writes the whole table."""
    answer = benchmark.pedantic(lambda: dpsgd.epsilon(SIGMA, Q, 10_000, DELTA), rounds=1)
    assert answer.lower <= 6.18771239 <= answer.upper
    text = table()
    Path(__file__).with_name("dpsgd_table.md").write_text(text + "\n", encoding="utf-8")
    with capsys.disabled():
        print("\n" + text)
