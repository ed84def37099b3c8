"""``dp-account`` at extreme and bad inputs: each ends with a finite answer or status 2 and one line
naming the option and its valid range (never a hang, a traceback or an OverflowError).

One test per failure found (item by item): the shuffle protocols' exact calibration (a cost estimate
and ``--max-cost``; ``--probability`` in a range), their sizes (at most 10^18 one-bit messages per
call), the tree's horizon and batch (counts, at most 10^18), the DP-SGD calibration's target and the
project's one search (:func:`accounting.search.bracket_and_search`), and a ledger's pure route.
"""

from __future__ import annotations

import math
import shlex
from pathlib import Path

import pytest

from accounting import Accountant, AdditiveNoise, Gaussian, Laplace
from accounting.cli import main as account_main  # what tests.test_cli_contract imports as account_main
from accounting.search import bracket_and_search
from tests.test_cli_contract import assert_refused, invoke

SCALAR = "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 1000"


def _refused(argv: str, *names: str) -> str:
    outcome = invoke(account_main, shlex.split(argv))
    assert_refused(outcome, "dp-account", *names)
    return outcome.err


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (f"{SCALAR} --exact --probability 0.9999999999999999", "--probability"),
        (f"{SCALAR} --exact --probability 1e-300", "--probability"),
        (SCALAR.replace("1e-6", "1e-300") + " --exact", "--max-cost"),
        (f"{SCALAR} --exact --max-cost 1", "--max-cost"),
        (f"{SCALAR} --max-cost 100", "--max-cost"),  # only with --exact
    ],
)
def test_shuffle_exact_is_refused_up_front_beyond_its_budget(argv: str, option: str) -> None:
    """Item 1: the exact calibration's cost is estimated from the windows its sums take, and refused
    above ``--max-cost`` with the estimate; a ``p`` the calibration cannot reach is out of range."""
    err = _refused(argv, option)
    if option == "--max-cost" and "--exact" in argv:
        assert "estimated at" in err


@pytest.mark.parametrize(
    ("protocol", "extra", "option"),
    [
        ("dpdpe-scalar", "--epsilon 1 --users 1000000000000", "--users"),
        ("dpdpe-scalar", "--epsilon 1e-50 --users 1000", "--epsilon"),
        ("dpdpe-vector", "--epsilon 1e-50 --users 1000", "--epsilon"),
        ("cheu-vector", "--epsilon 1e-50 --users 1000", "--epsilon"),
        ("dpdpe-vector", "--epsilon 1 --users 1000 --dimension 1000000000000", "--dimension"),
        ("cheu-vector", "--epsilon 1e-50 --users 1000 --dimension 1000000000000", "--epsilon"),
    ],
)
def test_shuffle_sizes_beyond_the_message_limit_are_refused(protocol: str, extra: str, option: str) -> None:
    """Item 2: more than 10^18 one-bit messages per call is refused, naming the option to change."""
    err = _refused(f"shuffle-protocol --protocol {protocol} --delta 1e-6 {extra}", option)
    assert "one-bit messages" in err


def test_shuffle_within_the_limits_answers() -> None:
    outcome = invoke(account_main, [*shlex.split(SCALAR), "--epsilon", "1e-3", "--users", "100000"])
    assert outcome.code == 0, outcome.err
    assert "one-bit messages" in outcome.out


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        ("--horizon 10000000000000000000 --batch 10", "--horizon"),
        ("--horizon 1e19 --batch 1", "--horizon"),
        ("--horizon 100 --batch 1e19", "--batch"),
        ("--horizon 100 --batch 101", "--batch"),
    ],
)
def test_tree_counts_beyond_1e18_are_refused(extra: str, option: str) -> None:
    """Item 3: ``--horizon`` and ``--batch`` are counts of rounds, at most 10^18."""
    err = _refused(f"tree {extra} --sigma 1 --delta 1e-5", option)
    assert "1000000000000000000" in err or "--horizon" in err


def test_tree_at_the_largest_horizon_answers() -> None:
    outcome = invoke(account_main, shlex.split("tree --horizon 1e18 --batch 10 --sigma 1 --delta 1e-5"))
    assert outcome.code == 0, outcome.err
    assert "epsilon =" in outcome.out


@pytest.mark.parametrize("epsilon", ["1e30", "1e308", "100.5", "0", "-1", "nan", "inf", "1e400"])
def test_dpsgd_calibration_target_has_a_range(epsilon: str) -> None:
    """Item 4: a target ε beyond 100 (or not a real > 0) is refused before any search."""
    _refused(
        f"dpsgd --epsilon {epsilon} --sample-rate 0.01 --steps 1000 --delta 1e-5 --no-progress", "--epsilon"
    )


@pytest.mark.parametrize("first", [1e-3, 1.0, 1e200])
def test_bracket_and_search_never_overflows(first: float) -> None:
    """Item 4: a target no level up to 1e300 meets ends with UnsupportedError, not OverflowError
    (the doubled step passed e^709 before the ceiling was tested)."""
    from accounting.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="1e300"):
        bracket_and_search(lambda theta: math.inf, first, 0.0)


def test_bracket_and_search_a_target_met_everywhere_ends() -> None:
    """Walking down from a level that meets the target stops before 1e-300 (no underflow loop)."""
    assert bracket_and_search(lambda theta: -math.inf, 1.0, 0.0) > 0


@pytest.mark.parametrize("asked", ["--delta 1e-5", "--epsilon 1"])
def test_ledger_pure_route_names_the_event_and_the_option(asked: str, tmp_path: Path) -> None:
    """Item 6: the pure route refuses a Gaussian event by its index and description, naming --route."""
    ledger = Accountant().compose(AdditiveNoise(Laplace(1.0)), 3).compose(AdditiveNoise(Gaussian(2.0)), 5)
    path = tmp_path / "ledger.json"
    path.write_text(ledger.to_json())
    # Asked for ε the answer goes through accounting.answers, which reports the library's name, route.
    err = _refused(f"ledger {path} --route pure {asked}", "--route", "route='pure'")
    assert "event 1" in err
    assert "Gaussian" in err


@pytest.mark.parametrize(
    "argv",
    [
        "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 10 --max-cost 0",
        "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 10 --max-cost nan",
        "tree --horizon 1e18 --batch 0 --sigma 1 --delta 1e-5",
        "dpsgd --epsilon 1 --sample-rate 0 --steps 10 --delta 1e-5 --no-progress",
        "dpsgd --epsilon 1 --sample-rate 0.01 --steps 1e30 --delta 1e-5 --no-progress",
    ],
)
def test_other_extremes_end_cleanly(argv: str) -> None:
    """Item 7: other extremes found by generating inputs: status 2, one line."""
    outcome = invoke(account_main, shlex.split(argv))
    assert_refused(outcome, "dp-account", "--")


@pytest.mark.parametrize(
    "argv",
    [
        "curve --noise skellam --variance 100 --compositions-range 1 1e9 --points 200 --delta 1e-5",
        "curve --noise gaussian --sigma 1 --sampling-rate 0.01 --compositions-range 1 1e5 --points 200 "
        "--delta 1e-5",
        "curve --noise discrete-gaussian --sigma 1 --users 10000 --compositions-range 1 1e4 --points 200 "
        "--delta 1e-5",
        "epsilon --noise skellam --variance 1e6 --compositions 10 --delta 1e-5 --route rdp",
        "epsilon --noise discrete-laplace --scale 100 --compositions 10 --delta 1e-5 --route zcdp",
    ],
)
def test_heavy_accounting_is_refused_up_front_beyond_max_cost(argv: str) -> None:
    """A curve of heavy points, or one release whose RDP route sums a wide lattice window, is
    estimated from the PLD route's grids (``Accountant.pld_cost``) and the noise's window, and
    refused above ``--max-cost`` with the estimate, before any accounting."""
    err = _refused(f"{argv} --no-progress", "--max-cost")
    assert "estimated at" in err


def test_a_cheap_curve_answers_within_the_default_budget() -> None:
    outcome = invoke(
        account_main,
        shlex.split("curve --noise skellam --variance-range 10 1000 --points 3 --delta 1e-5 --no-progress"),
    )
    assert outcome.code == 0, outcome.err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "abc"])
def test_max_cost_is_a_positive_number(value: str) -> None:
    _refused(f"epsilon --noise gaussian --sigma 1 --delta 1e-5 --max-cost {value}", "--max-cost")


def test_dpsgd_tiny_noise_multiplier_on_the_pld_route_is_refused() -> None:
    """A sampled run at σ = 0.001 took minutes on the PLD route; it is refused naming
    ``--noise-multiplier`` and the RDP route that answers it."""
    argv = "dpsgd --noise-multiplier 0.001 --sample-rate 0.01 --steps 1000 --delta 1e-5 --no-progress"
    err = _refused(argv, "--noise-multiplier")
    assert "--route rdp" in err
    outcome = invoke(account_main, [*shlex.split(argv), "--route", "rdp"])
    assert outcome.code == 0, outcome.err


@pytest.mark.parametrize("command", ["epsilon --delta 1e-5", "delta --epsilon 1", "curve --delta 1e-5"])
def test_a_tiny_sampled_gaussian_on_the_pld_route_is_refused_by_its_cost(command: str) -> None:
    """The sampled Gaussian's discretization grows as σ^-3 below MIN_PLD_NOISE_MULTIPLIER (minutes
    at σ = 0.001): refused up front, naming --max-cost; the RDP route answers ε at once."""
    sub, *question = command.split()
    base = f"{sub} --noise gaussian --sampling-rate 0.01 --neighbouring add-remove {' '.join(question)}"
    sized = (
        "--sigma-range 0.001 0.01 --compositions 100"
        if sub == "curve"
        else "--sigma 0.001 --compositions 1000"
    )
    assert_refused(invoke(account_main, shlex.split(f"{base} {sized}")), "dp-account", "--max-cost")
    if sub == "epsilon":  # (δ at ε = 1 is 1 here: no route certifies less)
        outcome = invoke(account_main, shlex.split(f"{base} {sized} --route rdp"))
        assert outcome.code == 0, outcome.err


def test_a_guarantee_no_route_certifies_names_the_options_that_asked() -> None:
    argv = "epsilon --noise binomial --trials 100 --probability 0.999999999 --compositions 10 --delta 1e-5"
    outcome = invoke(account_main, shlex.split(argv + " --route rdp"))
    assert_refused(outcome, "dp-account", "--probability 0.999999999")
    assert "certifies nothing" in outcome.err
    # by the PLD route its losses (variance 1e-7) make the discretization's masses too wide: refused
    assert_refused(invoke(account_main, shlex.split(argv)), "dp-account", "--max-cost")


@pytest.mark.parametrize(
    "argv",
    [
        "epsilon --noise skellam --variance 100 --sensitivity 1e5 --compositions 100 --delta 1e-5",
        "epsilon --noise discrete-gaussian --sigma 0.01 --sensitivity 100 --compositions 10 --delta 1e-5",
    ],
)
def test_losses_too_large_to_discretize_are_refused_by_their_cost(argv: str) -> None:
    """A loss of (Δ/sd)^2/2 = 5·10^7 gives the discretization's exact masses about 7·10^7 bits
    (more than a minute): refused up front, naming --max-cost."""
    assert_refused(invoke(account_main, shlex.split(argv)), "dp-account", "--max-cost")
