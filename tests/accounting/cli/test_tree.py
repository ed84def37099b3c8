"""``dp-account tree``: the tree release of federated LinUCB from the command line.

Every number printed is :mod:`accounting.tree`'s for the same options (compared exactly), and the
table of the federated LinUCB paper's release (Zhou & Chowdhury, ICLR 2024: T = 10⁴, B = 25,
κ = 9) comes out through the command: the authors' code σ0 at (ε, δ) = (5, 0.1) gives
δ(5) ≈ 0.178 and misses its claim (status 0, ``"meets": false``); the paper's σ0 at (1, 0.1) under
L = 1 gives δ(1) ≈ 3e-6 and meets it.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from typing import Any

import numpy as np
import pytest

from accounting import tree
from accounting import validate as v
from accounting.claims import check_claim
from accounting.cli import main
from accounting.cli.tree import MAX_TREE_EPSILON, MIN_TREE_EPSILON
from accounting.errors import ParameterError

A4 = "--horizon 10000 --batch 25"


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _tree(args: str) -> dict[str, Any]:
    code, out, err = _run(["tree", *shlex.split(args), "--json", "--no-progress"])
    assert code == 0, err
    assert err == ""
    record: dict[str, Any] = _strict(out)
    return record


def test_a4_code_sigma_misses_its_claim_at_epsilon_5() -> None:
    """The authors' code's σ0 at (5, 0.1), L = 1: δ(5) = 0.178 > 0.1."""
    sigma = tree.code_sigma(5, 0.1, 9)
    args = f"--sigma {sigma!r} {A4} --sensitivity add-remove --epsilon 5 --delta 0.1"
    record = _tree(args)
    assert (record["syncs"], record["kappa"]) == (400, 9)
    assert record["neighbouring"] == "add-remove"
    assert record["sensitivity"] == {"name": "add-remove", "bias": 1.0, "covariance": 1.0}
    assert record["delta"] == pytest.approx(0.178, abs=5e-4)
    assert record["meets"] is False
    assert record["verdict"] == "misses"
    assert record["claim"] == {"epsilon": 5.0, "delta": 0.1}
    release = tree.Tree(sigma, 10_000, 25, "add-remove")
    assert record["delta"] == release.delta(5).upper
    assert record["mu"] == release.mu()
    code, out, err = _run(["tree", *shlex.split(args)])
    assert code == 0, err  # a claim missed is an answer, not an error
    assert "MISSES the claim" in out
    assert "kappa = 9" in out
    assert "K = floor(T/B) = 400" in out


def test_a4_paper_sigma_meets_its_claim() -> None:
    """Theorem 5.1: the paper's σ0 at (1, 0.1), L = 1: δ(1) ≈ 3e-6 <= 0.1; replace-one 2.5e-3."""
    sigma = tree.paper_sigma(1, 0.1, 9)
    record = _tree(f"--sigma {sigma!r} {A4} --sensitivity add-remove --epsilon 1 --delta 0.1")
    assert record["delta"] == pytest.approx(3e-6, rel=0.1)
    assert record["meets"] is True
    replace = _tree(f"--sigma {sigma!r} {A4} --epsilon 1 --delta 0.1")  # the default relation
    assert replace["sensitivity"]["name"] == "replace-one"
    assert replace["neighbouring"] == "replace-one"
    assert replace["delta"] == pytest.approx(2.5e-3, rel=0.05)
    assert replace["meets"] is True
    code, out, _ = _run(["tree", *shlex.split(f"--sigma {sigma!r} {A4} --epsilon 1 --delta 0.1")])
    assert code == 0
    assert "meets the claim" in out
    assert "MISSES" not in out


@pytest.mark.parametrize("sensitivity", ["add-remove", "replace-one"])
def test_delta_and_epsilon_are_the_libraries(sensitivity: str) -> None:
    release = tree.Tree(3.0, 10_000, 25, sensitivity)  # type: ignore[arg-type]
    at_eps = _tree(f"--sigma 3 {A4} --sensitivity {sensitivity} --epsilon 2")
    want = release.delta(2)
    assert (at_eps["delta"], at_eps["delta_lower"]) == (want.upper, want.lower)
    assert at_eps["meets"] is None
    assert at_eps["claim"] is None
    at_delta = _tree(f"--sigma 3 {A4} --sensitivity {sensitivity} --delta 1e-6")
    want = release.epsilon(1e-6)
    assert (at_delta["epsilon"], at_delta["epsilon_lower"]) == (want.upper, want.lower)
    assert at_delta["route"] == want.route
    s = release.sensitivities
    assert at_delta["sensitivity"] == {"name": sensitivity, "bias": s.bias, "covariance": s.covariance}


@pytest.mark.slow
def test_calibrate_gives_the_least_sigma_beside_the_paper_and_the_code() -> None:
    """(5, 0.1) at L = 1: the least σ0 is calibrate_sigma's and below Theorem 5.1's; the code's
    σ0 is below the least and misses (δ(5) ≈ 0.178), the paper's meets."""
    record = _tree(f"--calibrate --epsilon 5 --delta 0.1 {A4} --sensitivity add-remove")
    least = tree.calibrate_sigma(5, 0.1, 10_000, 25, "add-remove").value
    sigmas = record["sigmas"]
    assert record["sigma"] == sigmas["exact"]["sigma"] == least
    assert sigmas["paper"]["sigma"] == tree.paper_sigma(5, 0.1, 9)
    assert sigmas["code"]["sigma"] == tree.code_sigma(5, 0.1, 9)
    assert least <= sigmas["paper"]["sigma"]
    assert [sigmas[k]["meets"] for k in ("exact", "paper", "code")] == [True, True, False]
    assert sigmas["code"]["delta"] == pytest.approx(0.178, abs=5e-4)
    assert sigmas["exact"]["delta"] <= 0.1
    assert record["epsilon_certified"] <= 5
    code, out, _ = _run(
        ["tree", *shlex.split(f"--calibrate --epsilon 5 --delta 0.1 {A4} --sensitivity add-remove")]
    )
    assert code == 0
    assert "MISSES" in out.splitlines()[-5]  # the code's row


@pytest.mark.slow
def test_calibrate_under_replace_one_needs_more_noise_than_the_paper_sensitivity() -> None:
    paper = _tree(f"--calibrate --epsilon 1 --delta 0.1 {A4} --sensitivity add-remove")
    replace = _tree(f"--calibrate --epsilon 1 --delta 0.1 {A4}")
    assert replace["sigma"] == tree.calibrate_sigma(1, 0.1, 10_000, 25).value
    assert paper["sigma"] < replace["sigma"]
    # δ(1) of the least σ0 sits at the claim: its direct enclosure may end a hair above 0.1, and
    # ε(0.1) <= 1 then certifies δ(1) <= 0.1 (the verdict is "meets", the δ shown at most 0.1)
    assert replace["sigmas"]["exact"]["meets"] is True
    assert replace["sigmas"]["exact"]["delta"] <= 0.1
    below = float(np.nextafter(replace["sigma"], 0))
    assert check_claim(tree.Tree(below, 10_000, 25), 1, 0.1).verdict != "meets"
    # the code's σ0 (L = 1) under replace-one: δ(1) ≈ 0.26 (the table's bold entry)
    assert replace["sigmas"]["code"]["delta"] == pytest.approx(0.26, abs=5e-3)
    assert replace["sigmas"]["code"]["meets"] is False


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (f"--sigma 0 {A4} --epsilon 1", "--sigma"),
        (f"--sigma nan {A4} --epsilon 1", "--sigma"),
        (f"--sigma 1e-101 {A4} --epsilon 1", "--sigma"),  # sensitivity/σ beyond 1e100
        (f"{A4} --epsilon 1", "--sigma"),  # neither --sigma nor --calibrate
        (f"--sigma 1 {A4}", "--epsilon"),  # nothing asked
        (f"--sigma 1 {A4} --calibrate --epsilon 1 --delta 0.1", "--sigma"),
        (f"{A4} --calibrate --epsilon 1", "--delta"),
        (f"{A4} --calibrate --delta 0.1", "--epsilon"),
        (f"{A4} --calibrate --epsilon {MIN_TREE_EPSILON / 10!r} --delta 0.1", "--epsilon"),
        (f"{A4} --calibrate --epsilon {MAX_TREE_EPSILON * 10!r} --delta 0.1", "--epsilon"),
        ("--sigma 1 --horizon 10 --batch 11 --epsilon 1", "--batch"),
        ("--sigma 1 --horizon 0 --batch 1 --epsilon 1", "--horizon"),
        ("--sigma 1 --horizon 2.5 --batch 1 --epsilon 1", "--horizon"),
        (f"--sigma 1 --horizon {2**62 * 3} --batch 2 --epsilon 1", "--horizon"),  # K > 2^62
        (f"--sigma 1 --horizon 1{'0' * 80} --batch 1 --epsilon 1", "--horizon"),
        (f"--sigma 1 {A4} --sensitivity batch --epsilon 1", "--sensitivity"),
        (f"--sigma 1 {A4} --epsilon -1", "--epsilon"),
        (f"--sigma 1 {A4} --delta 1", "--delta"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(args: str, option: str) -> None:
    code, out, err = _run(["tree", *args.split(), "--json"])
    assert code == 2, (out, err)
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("dp-account")
    assert option in err, err
    assert len(err) < 400  # a huge horizon is shown by its size, not its digits


def test_the_largest_tree_accounts_at_once() -> None:
    """The largest horizon, 10^18 rounds (K = 10^18 synchronisations, κ = 60), and a σ0 at the size
    limit: answered, not refused."""
    record = _tree(f"--sigma 1e-99 --horizon {10**18} --batch 1 --epsilon 1e300")
    assert record["kappa"] == 60
    assert record["delta"] >= 0
    record = _tree(f"--sigma 1e300 --horizon {10**18} --batch 1 --delta 1e-300")
    assert 0 <= record["epsilon"] < 1e-290


def test_the_old_spelling_paper_still_works_with_a_one_line_note() -> None:
    """``--sensitivity paper`` (the old name of add-remove's L = 1) answers as ``add-remove`` does,
    with one note on stderr naming the new spelling; the library takes it too, with a SpellingNote."""
    new = f"--sigma 1.62 {A4} --sensitivity add-remove --epsilon 5 --json --no-progress"
    code, out, err = _run(["tree", *shlex.split(new.replace("add-remove", "paper"))])
    assert (code, out) == _run(["tree", *shlex.split(new)])[:2]
    note = "--sensitivity 'paper' is now spelled 'add-remove'; the old spelling still works"
    assert err == f"dp-account: note: {note}\n"
    with pytest.warns(v.SpellingNote, match="'paper' is now spelled 'add-remove'"):
        old = tree.Tree(1.62, 10_000, 25, "paper")
    assert old.sensitivities is tree.ADD_REMOVE


def test_both_spellings_of_one_key_are_refused() -> None:
    why = r"scale=10 is invalid: expected one spelling of the name \('scaling', the new one, is given too\)"
    with pytest.raises(ParameterError, match=why):
        v.renamed("params", {"scale": 10, "scaling": 10}, {"scale": "scaling"})
