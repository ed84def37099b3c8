"""``dp-account epsilon``, ``delta`` and ``rdp``: the certified answers of the mechanism the options name."""

from __future__ import annotations

import shlex

import pytest

from accounting.cli import main
from tests.accounting.cli.helpers import json_of


def test_readme_examples_epsilon(capsys: pytest.CaptureFixture[str]) -> None:
    """The ``dp-account epsilon`` examples (Skellam, a sum of discrete Gaussians, the Gaussian over
    1000 compositions by RDP) give the certified answers."""
    sk = json_of(capsys, shlex.split("epsilon --noise skellam --variance 100 --sensitivity 1 --delta 1e-5"))
    assert sk["route"] == "pld"
    assert sk["epsilon"] == pytest.approx(0.3360744278278553, rel=1e-12)
    dg = json_of(capsys, shlex.split("epsilon --noise discrete-gaussian --sigma 2 --users 10 --delta 1e-5"))
    assert dg["total_noise"] == {"type": "SumOfDiscreteGaussians", "sigma": 2.0, "count": 10}
    assert dg["epsilon_lower"] <= dg["epsilon"]  # type: ignore[operator]
    g = json_of(
        capsys, shlex.split("epsilon --noise gaussian --sigma 1 --compositions 1000 --delta 1e-5 --route rdp")
    )
    assert g["route"] == "rdp"
    assert g["epsilon"] == pytest.approx(648.78198593, rel=1e-9)
    assert g["dps"] == 20


def test_delta_and_rdp_commands(capsys: pytest.CaptureFixture[str]) -> None:
    d = json_of(capsys, shlex.split("delta --noise discrete-laplace --scale 10 --epsilon 0.05"))
    assert 0 < d["delta"] < 1  # type: ignore[operator]
    r = json_of(capsys, shlex.split("rdp --noise discrete-laplace --scale 10 --alpha 2 inf"))
    assert r["rdp"]["inf"] == pytest.approx(0.1, rel=1e-12)  # type: ignore[index]
    assert r["rdp"]["2.0"] < 0.1  # type: ignore[index]
    assert main(shlex.split("epsilon --noise polya --beta 0.9 --users 4 --sensitivity 2 --delta 1e-6")) == 0
    assert "total noise of 4 users" in capsys.readouterr().out


def test_neighbouring_relation_option(capsys: pytest.CaptureFixture[str]) -> None:
    """--neighbouring add-remove changes a distributed sum's answer (the removed share)."""
    base = ["epsilon", "--noise", "skellam", "--variance", "10", "--users", "10", "--delta", "1e-6", "--json"]
    replace = json_of(capsys, base)
    add_remove = json_of(capsys, [*base, "--neighbouring", "add-remove"])
    assert replace["neighbouring"] == "replace-one"
    assert add_remove["neighbouring"] == "add-remove"
    assert float(replace["epsilon"]) == pytest.approx(0.3895, abs=1e-4)  # type: ignore[arg-type]
    assert float(add_remove["epsilon"]) == pytest.approx(1.4074, abs=1e-4)  # type: ignore[arg-type]


def test_published_route_option(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["epsilon", "--noise", "skellam", "--variance", "100", "--delta", "1e-6", "--json"]
    exact = json_of(capsys, base)
    published = json_of(capsys, [*base, "--route", "published:skellam-akl"])
    assert published["route"] == "published:skellam-akl"
    assert float(published["epsilon"]) >= float(exact["epsilon"])  # type: ignore[arg-type]


def test_rdp_goes_through_the_ledger(capsys: pytest.CaptureFixture[str]) -> None:
    data = json_of(
        capsys,
        ["rdp", "--noise", "gaussian", "--sigma", "2", "--alpha", "2", "10", "--compositions", "3", "--json"],
    )
    assert data["rdp"] == {"2.0": 0.75, "10.0": 3.75}  # 3 × α/(2σ²), exact


def test_distributed_totals_are_printed_in_decimals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(shlex.split("epsilon --noise skellam --variance 0.1 --users 3 --delta 1e-5")) == 0
    text = capsys.readouterr().out
    assert "total noise of 3 users: Skellam(variance=0.30000000000000004)" in text
    assert "Fraction" not in text


@pytest.mark.slow
def test_counts_beyond_the_pld_limit_take_a_scaling_route(capsys: pytest.CaptureFixture[str]) -> None:
    """10^18 compositions: refused on the exact PLD route, answered at once by the RDP route or, for
    the Gaussian mechanism, by its closed form."""
    big = "1000000000000000000"
    rdp = json_of(
        capsys,
        shlex.split(f"epsilon --noise skellam --variance 1 --compositions {big} --delta 1e-5 --route rdp"),
    )
    assert rdp["route"] == "rdp"
    assert 1e17 < float(rdp["epsilon"]) < 1e18  # type: ignore[arg-type]
    gauss = json_of(
        capsys, shlex.split(f"epsilon --noise gaussian --sigma 1 --compositions {big} --delta 1e-5")
    )
    assert float(gauss["epsilon"]) == pytest.approx(5e17, rel=1e-6)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("epsilon", "delta", "exact"),
    [(4.0, 0.1, 5.599336490515581), (1.0, 1e-5, 1.098212911762611)],
)
def test_epsilon_shows_the_ldp_linucb_code_sigma_missing_its_claim(
    epsilon: float, delta: float, exact: float, capsys: pytest.CaptureFixture[str]
) -> None:
    """The official code of LDP-LinUCB (Zheng et al., NeurIPS 2020): ``dp-account epsilon`` of the
    code's σ = 4 sqrt(ln(1.25/δ))/ε at its stated sensitivity 2 + 2Y = 4 prints an ε above the stated
    one; ``calibrate`` gives the least σ for the claim, above the code's. (The test may use learners;
    accounting does not.)"""
    from learners.ldp import code_mode_check, code_sigma

    sigma = code_sigma(epsilon, delta)
    argv = ["epsilon", "--noise", "gaussian", "--sigma", repr(sigma), "--sensitivity", "4"]
    data = json_of(capsys, [*argv, "--delta", repr(delta), "--no-progress"])
    assert data["epsilon"] > epsilon  # type: ignore[operator]
    assert data["epsilon"] == pytest.approx(exact, rel=1e-12)
    assert data["epsilon"] == code_mode_check(epsilon, delta).epsilon_stated  # one accounting, two doors
    target = ["--epsilon", repr(epsilon), "--delta", repr(delta), "--sensitivity", "4", "--no-progress"]
    cal = json_of(capsys, ["calibrate", "--noise", "gaussian", *target])
    assert cal["epsilon_certified"] <= epsilon  # type: ignore[operator]
    assert cal["sigma"] > sigma * 1.05  # type: ignore[operator]
