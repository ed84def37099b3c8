"""DP-SGD accounting side by side (``make bench``, not CI): dpcert against the float accountants.

The Poisson-subsampled Gaussian at (q, σ) = (0.01, 1), (0.001, 0.8), (0.1, 2), δ = 1e-5, composed
10^3 to 10^6 times, under add-remove (every accountant) and replace-one (dpcert and dp_accounting's
PLD accountant, the others hold add-remove only). Each accountant runs in this process, one after
the other, its import not timed: Google's dp_accounting PLD (its default discretization 1e-4) and
RDP accountants, Microsoft's prv-accountant (``eps_error=0.01``), and Opacus's PRV and RDP
accountants when ``opacus`` is importable (it needs torch; the table says so when it is not). An
accountant that took more than :data:`CAP` seconds on one row is not run on the longer ones of
that case. dpcert's cell is its certified enclosure ``[lo, hi]``; the others' their float ε.

The table is printed and written to ``dpsgd_table.md`` beside this file (not kept in git). The
truth at (0.01, 1) and 10^4 steps, add-remove, computed independently at 40 digits, is 6.18771239.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accounting import dpsgd

CASES = ((0.01, 1.0), (0.001, 0.8), (0.1, 2.0))
DELTA = 1e-5
STEPS = tuple(int(s) for s in os.environ.get("DPSGD_BENCH_STEPS", "1000,10000,100000,1000000").split(","))
RELATIONS = ("add-remove", "replace-one")
#: Seconds after which an accountant is not run on the longer rows of a case.
CAP = float(os.environ.get("DPSGD_BENCH_CAP", "30"))

Run = Callable[[float, float, int, str], str]


def _dpcert(q: float, sigma: float, steps: int, relation: str) -> str:
    e = dpsgd.epsilon(sigma, q, steps, DELTA, neighbouring=relation)
    return f"[{float(e.lower):.6f}, {float(e.upper):.6f}]"


def _dp_accounting(kind: str) -> Run:
    def run(q: float, sigma: float, steps: int, relation: str) -> str:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant

        neighbouring = (
            dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
            if relation == "add-remove"
            else dp_accounting.NeighboringRelation.REPLACE_ONE
        )
        accountant: Any = (
            pld_privacy_accountant.PLDAccountant(neighboring_relation=neighbouring)
            if kind == "pld"
            else rdp_privacy_accountant.RdpAccountant(neighboring_relation=neighbouring)
        )
        event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
        accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
        return f"{accountant.get_epsilon(DELTA):.6f}"

    return run


def _prv(q: float, sigma: float, steps: int, relation: str) -> str:
    from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant

    mech = PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q)
    accountant = PRVAccountant(prvs=[mech], max_self_compositions=[steps], eps_error=0.01, delta_error=1e-9)
    _, estimate, _ = accountant.compute_epsilon(delta=DELTA, num_self_compositions=[steps])
    return f"{estimate:.6f}"


def _opacus(kind: str) -> Run:
    def run(q: float, sigma: float, steps: int, relation: str) -> str:
        from opacus.accountants import PRVAccountant, RDPAccountant

        accountant = PRVAccountant() if kind == "prv" else RDPAccountant()
        accountant.history = [(sigma, q, steps)]
        return f"{accountant.get_epsilon(DELTA):.6f}"

    return run


#: (name, module, run, relations it holds)
ACCOUNTANTS: list[tuple[str, str, Run, tuple[str, ...]]] = [
    ("dpcert (certified)", "accounting", _dpcert, RELATIONS),
    ("dp_accounting PLD", "dp_accounting", _dp_accounting("pld"), RELATIONS),
    ("dp_accounting RDP", "dp_accounting", _dp_accounting("rdp"), ("add-remove",)),
    ("prv-accountant", "prv_accountant", _prv, ("add-remove",)),
    ("Opacus PRV", "opacus", _opacus("prv"), ("add-remove",)),
    ("Opacus RDP", "opacus", _opacus("rdp"), ("add-remove",)),
]


def _cell(run: Run, q: float, sigma: float, steps: int, relation: str) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        value = run(q, sigma, steps, relation)
    except Exception as err:  # a peer's refusal is a finding, not a failure of the table
        value = f"error: {type(err).__name__}"
    seconds = time.perf_counter() - start
    return f"{value} ({seconds:.2f} s)", seconds


def table() -> str:
    """The markdown table: a row per (q, σ), relation and number of steps; a column per accountant."""
    names = [name for name, *_ in ACCOUNTANTS]
    rows = ["| q, σ | relation | steps | " + " | ".join(names) + " |", "|---" * (len(names) + 3) + "|"]
    for _, module, *_ in ACCOUNTANTS:
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)  # timed: the accounting, not the import
    for q, sigma in CASES:
        for relation in RELATIONS:
            over: set[str] = set()
            for steps in STEPS:
                cells = []
                for name, module, run, relations in ACCOUNTANTS:
                    if relation not in relations:
                        cells.append("—")
                    elif importlib.util.find_spec(module) is None:
                        cells.append("not installed")
                    elif name in over:
                        cells.append(f"not run (> {CAP:g} s on fewer steps)")
                    else:
                        text, seconds = _cell(run, q, sigma, steps, relation)
                        cells.append(text)
                        if seconds > CAP:
                            over.add(name)
                rows.append(f"| {q}, {sigma} | {relation} | {steps:,} | " + " | ".join(cells) + " |")
                print(rows[-1], flush=True)
    return "\n".join(rows)


def test_dpsgd_side_by_side(benchmark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Times dpcert's 10^4 steps at (0.01, 1) as the benchmark, and prints and writes the table."""
    answer = benchmark.pedantic(lambda: dpsgd.epsilon(1.0, 0.01, 10_000, DELTA), rounds=1)
    assert answer.lower <= 6.18771239 <= answer.upper
    with capsys.disabled():
        text = table()
    Path(__file__).with_name("dpsgd_table.md").write_text(text + "\n", encoding="utf-8")
    with capsys.disabled():
        print("\n" + text)
