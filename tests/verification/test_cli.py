"""``dp-audit``: each subcommand runs, reports JSON, and fails with status 1 or 2 when it should."""

from __future__ import annotations

import json
import shlex

import pytest

from verification.cli import main


def _run(argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main([*shlex.split(argv), "--json"])
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return code, data


def test_sampler_passes_for_a_correct_sampler(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _run("sampler --noise skellam --variance 50 --samples 200000", capsys)
    assert code == 0
    assert data["passed"] is True


def test_sampler_of_polya_shares_is_the_discrete_laplace(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _run("sampler --noise polya --beta 0.9 --users 8 --samples 100000", capsys)
    assert code == 0
    assert "DiscreteLaplace" in str(data["noise"])


def test_bounds_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _run("bounds --noise skellam --quick", capsys)
    assert code == 0
    reports = data["reports"]
    assert isinstance(reports, list)
    assert reports


def test_mechanism_consistent_and_violation(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 4's example: discrete Laplace of scale 10 claims ε = 0.1 (consistent); 0.05 is refuted."""
    code, data = _run(
        "mechanism --noise discrete-laplace --scale 10 --claimed-epsilon 0.1 --samples 1000000", capsys
    )
    assert code == 0
    result = data["result"]
    assert isinstance(result, dict)
    assert result["epsilon_lower"] >= 0.09
    code, data = _run(
        "mechanism --noise discrete-laplace --scale 10 --claimed-epsilon 0.05 --samples 1000000", capsys
    )
    assert code == 1


@pytest.mark.slow
def test_proofs(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _run("proofs", capsys)
    assert code == 0
    proofs = data["proofs"]
    assert isinstance(proofs, dict)
    assert all(p["holds"] for p in proofs.values())


def test_broken_entry_shows_the_ldp_linucb_code_missing_its_claim(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 18: ``broken --entry`` audits only the named entries (here at 10^5 samples a side): the
    official LDP-LinUCB code's σ is flagged at its stated (4, 0.1), the exactly calibrated σ is not."""
    code, data = _run(
        "broken --entry ldp-linucb-code-sigma --entry ldp-linucb-exact-sigma --samples 100000", capsys
    )
    assert code == 0  # every verdict as expected
    assert data["passed"] is True
    assert data["checks"] == []  # the federated checks are no entries
    rows = data["rows"]
    assert isinstance(rows, list)
    verdicts = {row["name"]: (row["broken"], row["flagged"], row["claimed_epsilon"]) for row in rows}
    assert verdicts == {
        "ldp-linucb-code-sigma": (True, True, 4.0),
        "ldp-linucb-exact-sigma": (False, False, 4.0),
    }
    assert rows[0]["epsilon_lower"] > 4.5
    assert main(shlex.split("broken --entry ldp-linucb-code-sigma --samples 100000")) == 0
    text = capsys.readouterr().out
    assert "ldp-linucb-code-sigma" in text
    assert "flagged      ok" in text
    assert "federated LinUCB, not sampled" not in text


@pytest.mark.parametrize(
    "argv",
    [
        "sampler --noise skellam --samples 10",
        "mechanism --noise skellam --delta 2",
        "sampler --noise gaussian --sigma 1",
    ],
)
def test_invalid_input_exits_2(argv: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(shlex.split(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "noise",
    [
        "--noise discrete-gaussian --sigma 4",
        "--noise discrete-laplace --scale 2.5",
        "--noise skellam --variance 6",
        "--noise polya --beta 0.9 --users 16",
        "--noise discrete-gaussian --sigma 2 --users 5",
    ],
)
def test_sampler_exact_reports_fit_and_speed(noise: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _run(f"sampler {noise} --exact --samples 100000", capsys)
    assert code == 0, data
    assert data["exact"] is True
    report = data["report"]
    assert isinstance(report, dict)
    assert report["passed"] is True
    assert report["samples_per_second"] > 0
    assert str(report["name"]).startswith("exact sampler")


def test_sampler_exact_of_a_continuous_noise_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sampler", "--noise", "laplace", "--scale", "1", "--exact"]) == 2
    assert "integers" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ("sampler --noise skellam --variance 1e30 --samples 1000", "--variance"),
        ("sampler --noise discrete-laplace --scale 1e17 --samples 1000", "--scale"),
        ("sampler --noise binomial --trials 100000000 --samples 1000", "--trials"),
        ("sampler --noise skellam --variance 10 --samples 1000000000000", "--samples"),
        ("sampler --noise skellam --variance 10 --sigma 3", "--sigma"),
        ("sampler --noise skellam --variance 10 --seed -1", "--seed"),
        ("mechanism --noise skellam --variance 1e30 --samples 1000", "--variance"),
        (
            "mechanism --noise discrete-laplace --scale 10 --sensitivity 100000000000000000000000",
            "--sensitivity",
        ),
        ("mechanism --noise discrete-laplace --scale 10 --samples 1000 --scheduler nonsense", "--scheduler"),
        (
            "mechanism --noise discrete-laplace --scale 10 --samples 1000 --scheduler tcp://127.0.0.1:1",
            "--scheduler",
        ),
        ("broken --samples 1000000000000000000000", "--samples"),
        ("broken --entry no-such-entry --samples 1000", "--entry"),
        # discrete Gaussian sums: the exact PMF of 10^6 shares and 4e9 share draws hung
        ("sampler --noise discrete-gaussian --sigma 3 --users 1000000 --samples 2000", "--users"),
        ("sampler --noise discrete-gaussian --sigma 3 --users 10000 --samples 100000", "--users"),
        ("mechanism --noise discrete-gaussian --sigma 3 --users 1000000 --samples 2000", "--users"),
        # legal sizes over the default budgets: refused before any draw, with the count
        ("sampler --noise skellam --variance 10 --samples 100000000", "20,000,000"),
        ("sampler --noise skellam --variance 10 --exact --samples 10000000", "x 10 for exact draws"),
        ("sampler --noise skellam --variance 10 --samples 1000 --max-draws 999", "--samples"),
        ("mechanism --noise skellam --variance 10 --samples 1000000000", "--max-draws"),
        ("broken --entry ldp-linucb-code-sigma --samples 1000000000000", "--max-draws"),
        ("broken --samples 100000000", "16 entries"),
        ("broken --entry polya-scale-bug --max-draws 0", "--max-draws"),
        ("bounds --dps 300", "--dps"),
    ],
)
def test_bad_input_is_one_line_status_2(argv: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(shlex.split(argv))
    except SystemExit as err:
        code = int(err.code or 0)
    err_text = capsys.readouterr().err
    assert code == 2, err_text
    assert len(err_text.strip().splitlines()) == 1, err_text
    assert needle in err_text
