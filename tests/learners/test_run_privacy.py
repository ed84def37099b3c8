"""The privacy a run spent, in its results folder: claimed and exact, saved ledgers, summary.md.

The exact ε of a run is checked against computations that do not go through the run: the Skellam
sum's privacy loss summed in floats with scipy (the hockey-stick divergence of two shifted
Skellam laws), the ledger rebuilt from the calibration directly, and ``dp-account ledger`` on the
saved files.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import optimize, stats

from accounting import cli as account_cli
from accounting.accountant import Accountant
from accounting.errors import ParameterError as AccountingParameterError
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.noise import Laplace, Polya, Skellam
from accounting.papers.distributed_dp_mab import Variant, protocol_parameters
from learners import mab, runner
from learners.experiment import load_config, run_experiment
from learners.results import LEDGERS_DIR, SUMMARY_TABLE_FILE, summary_table
from tests.learners.test_experiment import tiny

DELTA = 1e-6
HORIZON = 3000
EPSILONS = (0.5, 1.0)
PURE = ("dp-se", "dist-dp-se", "cdp-se")


def config() -> dict[str, Any]:
    """K = 4, T = 3000, R = 2 in two chunks (the ledgers are merged over chunks); published route."""
    return tiny(
        horizon=HORIZON,
        repetitions=2,
        chunk=1,
        epsilons=list(EPSILONS),
        delta=DELTA,
        privacy_route="published",
        algorithms=[
            {"name": "dp-se", "params": {"growth": 2}},
            {"name": "dist-dp-se", "params": {"growth": 2}},
            {"name": "dist-rdp-se", "params": {"scaling": 10, "growth": 2}},
            {"name": "cdp-se", "params": {"growth": 2}},
            {"name": "se"},
        ],
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_experiment(load_config(config()), tmp_path_factory.mktemp("run") / "out", progress=False)


@pytest.fixture(scope="module")
def results(folder: Path) -> list[dict[str, Any]]:
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    out: list[dict[str, Any]] = summary["results"]
    return out


def private(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["epsilon"] is not None]


def account(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any] | str]:
    """``dp-account`` in this process: its status and its JSON (or its error line)."""
    code = account_cli.main(argv)
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else captured.err)


# ---------------------------------------------------------------------------------------
# summary.json: claimed and exact
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_private_result_has_claimed_and_exact(folder: Path, results: list[dict[str, Any]]) -> None:
    assert len(private(results)) == 4 * len(EPSILONS)
    for r in private(results):
        claimed, exact = r["privacy"]["claimed"], r["privacy"]["exact"]
        assert set(claimed) == {"epsilon", "delta", "statement", "holds"}
        assert {"epsilon", "delta", "route", "ledgers"} <= set(exact)
        assert isinstance(claimed["statement"], str)
        assert claimed["statement"]
        assert isinstance(claimed["holds"], bool)
        assert isinstance(exact["epsilon"], float)
        assert 0 < exact["epsilon"] < math.inf
        assert isinstance(exact["route"], str)
        # one saved ledger per released batch size, named by the indices and the size
        assert len(exact["ledgers"]) == len(r["batch_sizes"])
        for name, n in zip(exact["ledgers"], r["batch_sizes"], strict=True):
            assert name.startswith(f"{LEDGERS_DIR}/")
            assert name.endswith(f"__n{n}.json")
            assert (folder / name).is_file()
        name = r["algorithm"]
        if name in PURE:
            assert (exact["route"], exact["delta"], claimed["delta"]) == ("pure", 0.0, 0.0)
        else:
            assert exact["route"] == "pld"  # these small Skellam sums: the exact PLD, within budget
            assert exact["delta"] == claimed["delta"] == DELTA
            assert exact["message"] == ""
    # the keys that were there stay: the top-level ε is still the config's privacy_route
    rdp = [r for r in results if r["algorithm"] == "dist-rdp-se"]
    assert all({b[2] for b in r["privacy"]["batches"]} == {"published"} for r in rdp)
    se = next(r for r in results if r["epsilon"] is None)
    assert se["privacy"]["exact"]["epsilon"] == "inf"
    assert se["privacy"]["exact"]["ledgers"] == []
    assert se["privacy"]["claimed"]["epsilon"] is None


def test_claimed_is_the_theorem_where_its_hypotheses_hold(results: list[dict[str, Any]]) -> None:
    for r in private(results):
        claimed = r["privacy"]["claimed"]
        if r["algorithm"] == "cdp-se" and r["epsilon"] >= 1:  # Theorem 5 assumes ε < 1
            assert claimed["holds"] is False
            assert claimed["epsilon"] is None
            assert "Theorem 5" in claimed["statement"]
        elif r["algorithm"] in PURE:
            assert claimed["holds"] is True
            assert claimed["epsilon"] == r["epsilon"]
        else:  # Theorem 2 holds at every ε: Lemma 3 at the actual g, converted by Lemma 10
            assert claimed["holds"] is True
            assert claimed["epsilon"] == r["privacy"]["theorem_epsilon"]
            assert "Theorem 2" in claimed["statement"]


def test_exact_is_at_most_the_published_and_the_claimed_bound(results: list[dict[str, Any]]) -> None:
    for r in private(results):
        privacy = r["privacy"]
        exact, claimed = privacy["exact"]["epsilon"], privacy["claimed"]["epsilon"]
        if r["algorithm"] in PURE:
            # (ε, 0)-DP answered by the pure route: the nominal ε, rounded up by at most an ulp or so
            assert exact == pytest.approx(r["epsilon"], rel=1e-12)
            assert exact <= r["epsilon"] * (1 + 1e-12)
        else:
            published = privacy["epsilon"]  # privacy_route = "published": Lemma 3 on the released sum
            assert exact < published
            assert exact < claimed
            # worst over batch sizes, each below its own published bound
            by_size = {n: e for n, e, _ in privacy["batches"]}
            for n, e, route in privacy["exact"]["batches"]:
                assert route == "pld"
                assert e < by_size[n]
            assert exact == max(e for _, e, _ in privacy["exact"]["batches"])


# ---------------------------------------------------------------------------------------
# The exact ε against independent computations
# ---------------------------------------------------------------------------------------


def skellam_epsilon(mu: float, shift: int, delta: float) -> float:
    """ε(δ) of ``k + Skellam(mu, mu)`` for ``|k|`` moving by ``shift``, in floats (scipy).

    ``δ(ε) = Σ_k max(0, P(k) - e^ε P(k - shift))`` (the hockey-stick divergence; the pair is
    symmetric, and for this log-concave noise the largest shift is the worst).
    """
    sd = math.sqrt(2 * mu)
    k = np.arange(-math.ceil(60 * sd) - shift, math.ceil(60 * sd) + 2 * shift + 1)
    p = stats.skellam.pmf(k, mu, mu)
    q = stats.skellam.pmf(k - shift, mu, mu)

    def excess(eps: float) -> float:
        return float(np.maximum(p - math.exp(eps) * q, 0.0).sum()) - delta

    return float(optimize.brentq(excess, 1e-6, 50.0, xtol=1e-13, rtol=1e-13))


@pytest.mark.slow
def test_the_exact_epsilon_of_dist_rdp_se_is_the_skellam_sums_by_scipy(results: list[dict[str, Any]]) -> None:
    for r in [r for r in results if r["algorithm"] == "dist-rdp-se"]:
        floats = []
        for n in r["batch_sizes"]:
            # the parameters the protocol uses, from the calibration (not from the run's files)
            p = protocol_parameters(Variant.SKELLAM_SHARES, r["epsilon"], n, HORIZON, scaling=10.0)
            assert isinstance(p.share, Skellam)
            assert p.share.mu1 == p.share.mu2
            floats.append(skellam_epsilon(float(n * Fraction(p.share.mu1)), p.g, DELTA))
        exact = r["privacy"]["exact"]["epsilon"]
        # a certified upper bound, and the PLD's enclosure is tight: the float sum to ~1e-14
        assert exact == pytest.approx(max(floats), rel=1e-9)


def test_the_saved_ledgers_are_the_mechanisms_of_the_calibration(
    folder: Path, results: list[dict[str, Any]]
) -> None:
    for r in private(results):
        eps = r["epsilon"]
        for name, n in zip(r["privacy"]["exact"]["ledgers"], r["batch_sizes"], strict=True):
            saved = Accountant.from_json((folder / name).read_text(encoding="utf-8"))
            if r["algorithm"] == "dp-se":  # Laplace(1/ε) on a sum of sensitivity 1
                expected = Accountant().compose(AdditiveNoise(Laplace(1 / Fraction(eps)), 1.0))
            else:
                variant = {
                    "dist-dp-se": Variant.POLYA_SHARES,
                    "dist-rdp-se": Variant.SKELLAM_SHARES,
                    "cdp-se": Variant.CENTRAL_LAPLACE,
                }[r["algorithm"]]
                scale = 10.0 if variant is Variant.SKELLAM_SHARES else None
                p = protocol_parameters(variant, eps, n, HORIZON, scaling=scale)
                mechanism: AdditiveNoise | DistributedSum
                if variant is Variant.CENTRAL_LAPLACE:
                    assert p.server_noise is not None
                    mechanism = AdditiveNoise(p.server_noise, sensitivity=p.g)
                else:
                    assert p.share is not None
                    mechanism = DistributedSum(p.share, users=n, sensitivity=p.g)
                expected = Accountant().compose(mechanism)
                if variant is Variant.POLYA_SHARES:
                    # Pólya(1/n, β) shares sum to Lap_Z with decay β: pure ε = g ln(1/β) (Theorem 1)
                    assert isinstance(p.share, Polya)
                    pure = p.g * -math.log(float(p.share.beta))
                    assert pure == pytest.approx(eps, rel=1e-9)
            assert saved == expected, name
            assert saved.ledger == expected.ledger


# ---------------------------------------------------------------------------------------
# dp-account ledger reproduces the exact ε; a tampered ledger is refused
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_dp_account_ledger_reproduces_the_exact_epsilon(
    folder: Path, results: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    for r in private(results):
        exact = r["privacy"]["exact"]
        answers = []
        for name, (_n, eps, route) in zip(exact["ledgers"], exact["batches"], strict=True):
            code, out = account(
                ["ledger", str(folder / name), "--delta", repr(DELTA), "--route", route, "--json"], capsys
            )
            assert code == 0, out
            assert isinstance(out, dict)
            assert out["epsilon"] == eps, (name, route)  # to the float
            answers.append(out["epsilon"])
            if route == "pld":  # the route auto chose: auto, the default, gives the same number
                code, auto = account(["ledger", str(folder / name), "--delta", repr(DELTA), "--json"], capsys)
                assert code == 0
                assert isinstance(auto, dict)
                assert (auto["epsilon"], auto["route"]) == (eps, "pld")
        assert max(answers) == exact["epsilon"]


def test_the_dp_account_command_reproduces_a_ledger(folder: Path, results: list[dict[str, Any]]) -> None:
    r = next(r for r in results if r["algorithm"] == "dist-rdp-se")
    name, (_, eps, _) = r["privacy"]["exact"]["ledgers"][-1], r["privacy"]["exact"]["batches"][-1]
    dp_account = Path(sys.executable).with_name("dp-account")
    done = subprocess.run(
        [str(dp_account), "ledger", str(folder / name), "--delta", repr(DELTA), "--json", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed target
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["epsilon"] == eps


def test_a_tampered_ledger_is_refused(
    folder: Path, results: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r = next(r for r in results if r["algorithm"] == "dist-rdp-se")
    source = folder / r["privacy"]["exact"]["ledgers"][0]
    data = json.loads(source.read_text(encoding="utf-8"))
    data["events"][0]["mechanism"]["users"] *= 10  # ten times the noise, the hash left as it was
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(AccountingParameterError, match="sha256"):
        Accountant.from_json(tampered.read_text(encoding="utf-8"))
    code, err = account(["ledger", str(tampered), "--delta", repr(DELTA), "--json"], capsys)
    assert code == 2
    assert isinstance(err, str)
    assert "sha256" in err
    assert "changed after it was written" in err


# ---------------------------------------------------------------------------------------
# summary.md, the budget, --force
# ---------------------------------------------------------------------------------------


def test_summary_md_lists_every_algorithm_with_claimed_and_exact(
    folder: Path, results: list[dict[str, Any]]
) -> None:
    text = (folder / SUMMARY_TABLE_FILE).read_text(encoding="utf-8")
    assert text == summary_table(folder)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| panel | algorithm | nominal ε | claimed (ε, δ) | exact (ε, δ) | route |")
    assert len(rows) == 1 + len(results)
    for r in results:
        assert any(f"| {r['label']} |" in row for row in rows), r["label"]
    rdp = next(r for r in results if r["algorithm"] == "dist-rdp-se" and r["epsilon"] == 0.5)
    row = next(row for row in rows if "| Dist-RDP-SE(s=10) | 0.5 |" in row)
    cells = [c.strip() for c in row.strip("|").split("|")]
    # rounded up to 4 significant digits: still an upper bound
    exact_text = cells[4].strip("()").split(",")[0]
    assert float(exact_text) >= rdp["privacy"]["exact"]["epsilon"]
    assert float(exact_text) <= rdp["privacy"]["exact"]["epsilon"] * (1 + 1e-3)
    assert cells[5] == "pld"
    cdp = next(row for row in rows if "| CDP-SE | 1 |" in row)
    assert "hypotheses fail" in cdp


def test_over_the_budget_or_too_wide_the_published_bound_answers_and_says_so() -> None:
    learner = mab.make_learner("dist-rdp-se", 0.5, scaling=10, growth=2)
    ledger = Accountant()
    mab.batch_protocol(learner, 8, HORIZON).account(ledger)
    exact = mab.exact_privacy(learner, {8: ledger}, DELTA)
    assert exact.route == "pld"
    assert exact.message == ""
    costly = mab.exact_privacy(learner, {8: ledger}, DELTA, budget=0.0)
    published = ledger.epsilon(DELTA, route="published:skellam-akl")
    assert (costly.epsilon, costly.route) == (published.upper, "published:skellam-akl")
    assert "estimated to cost more than 0" in costly.message
    assert exact.epsilon < costly.epsilon
    # a Skellam sum too wide for the exact sums (s = 100, 16384 users): refused, then published
    wide_learner = mab.make_learner("dist-rdp-se", 0.5, scaling=100, growth=4)
    wide = Accountant()
    mab.batch_protocol(wide_learner, 16384, 10**5).account(wide)
    refused = mab.exact_privacy(wide_learner, {8: ledger, 16384: wide}, DELTA, budget=None)
    assert refused.route == "pld+published:skellam-akl"
    assert "no exact route" in refused.message
    assert "16384" in refused.message
    assert refused.epsilon == wide.epsilon(DELTA, route="published:skellam-akl").upper


@pytest.mark.slow
def test_force_clears_the_ledgers_and_the_table(folder: Path, tmp_path: Path) -> None:
    ours = {p.relative_to(folder).as_posix() for p in runner._our_files(folder)}
    assert SUMMARY_TABLE_FILE in ours
    saved = {p.relative_to(folder).as_posix() for p in (folder / LEDGERS_DIR).iterdir()}
    assert saved
    assert saved <= ours
    # a config without the Skellam variant, forced into a copy of a folder of the full one
    out = Path(shutil.copytree(folder, tmp_path / "out"))
    smaller = config()
    smaller["algorithms"] = [{"name": "dp-se", "params": {"growth": 2}}, {"name": "se"}]
    run_experiment(load_config(smaller), out, progress=False, force=True)
    left = sorted(p.name for p in (out / LEDGERS_DIR).iterdir())
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    named = sorted(Path(f).name for r in summary["results"] for f in r["privacy"]["exact"]["ledgers"])
    assert left == named
    assert all(n.startswith("0__0__") for n in left)
