"""``dp-account curve``: ε against the noise or the compositions, δ against ε.

Every point of the table, the CSV and the figure is the upper end of the Accountant's certified
answer for the same options: the tests recompute a few points by independent Accountant calls and
compare them exactly, and check the shape the mathematics gives each curve (ε falls with σ and
rises with the compositions; δ falls with ε).
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from accounting import Accountant, AdditiveNoise, DiscreteLaplace, Gaussian, Skellam
from accounting.cli import main
from accounting.cli.curve import MAX_CURVE_POINTS
from accounting.curves import curve_grid


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _curve(args: str, tmp_path: Path, *extra: str) -> tuple[dict[str, object], list[dict[str, str]]]:
    """Run ``curve args --out tmp/c --json``: the JSON record and the CSV rows."""
    prefix = tmp_path / "c"
    code, out, err = _run(["curve", *shlex.split(args), "--out", str(prefix), "--json", *extra])
    assert code == 0, err
    record: dict[str, object] = json.loads(out)
    with open(f"{prefix}.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return record, rows


@pytest.mark.slow
def test_sigma_curve_is_the_accountants_epsilon_at_each_point(tmp_path: Path) -> None:
    record, rows = _curve("--noise gaussian --sigma-range 0.5 8 --points 6 --delta 1e-5", tmp_path)
    assert list(rows[0]) == ["sigma", "delta", "epsilon", "epsilon_lower", "route"]
    assert record["columns"] == list(rows[0])
    assert (record["x"], record["y"]) == ("sigma", "epsilon")
    assert [float(r["sigma"]) for r in rows] == list(curve_grid(0.5, 8.0, 6, "log", integer=False))
    assert (rows[0]["sigma"], rows[-1]["sigma"]) == ("0.5", "8.0")  # the ends as given
    for row in rows[::2]:
        sigma = float(row["sigma"])
        answer = Accountant().compose(AdditiveNoise(Gaussian(sigma))).epsilon(1e-5)
        assert float(row["epsilon"]) == answer.upper
        assert float(row["epsilon_lower"]) == answer.lower
        assert row["route"] == answer.route
    assert record["rows"] == [
        {k: (v if k == "route" else float(v)) for k, v in row.items()} for row in rows
    ]  # the JSON table is the CSV
    epsilons = [float(r["epsilon"]) for r in rows]
    assert all(a > b for a, b in itertools.pairwise(epsilons))  # less ε with more noise


@pytest.mark.slow
def test_compositions_curve_is_log_spaced_integers_and_increasing(tmp_path: Path) -> None:
    record, rows = _curve(
        "--noise skellam --variance 50 --compositions-range 1 20 --points 4 --delta 1e-5", tmp_path
    )
    assert list(rows[0]) == ["compositions", "delta", "epsilon", "epsilon_lower", "route"]
    counts = [int(r["compositions"]) for r in rows]
    assert counts == [1, 3, 7, 20]
    for row in (rows[0], rows[-1]):
        acc = Accountant().compose(AdditiveNoise(Skellam(50.0)), int(row["compositions"]))
        assert float(row["epsilon"]) == acc.epsilon(1e-5).upper
    epsilons = [float(r["epsilon"]) for r in rows]
    assert all(a < b for a, b in itertools.pairwise(epsilons))  # more ε with more releases
    assert record["files"] == [f"{tmp_path / 'c'}.csv", f"{tmp_path / 'c'}.png"]


def test_delta_curve_over_epsilon_is_decreasing(tmp_path: Path) -> None:
    record, rows = _curve("--noise discrete-laplace --scale 5 --epsilon-range 0.01 0.15 --points 5", tmp_path)
    assert list(rows[0]) == ["epsilon", "delta", "delta_lower", "route"]
    assert (record["x"], record["y"]) == ("epsilon", "delta")
    acc = Accountant().compose(AdditiveNoise(DiscreteLaplace(5.0)))
    for row in rows[::2]:
        assert float(row["delta"]) == acc.delta(float(row["epsilon"])).upper
    deltas = [float(r["delta"]) for r in rows]
    assert all(a > b for a, b in itertools.pairwise(deltas))


def test_linear_spacing_and_a_gaussian_delta_curve(tmp_path: Path) -> None:
    _, rows = _curve(
        "--noise gaussian --sigma 2 --compositions 3 --epsilon-range 0 4 --points 5 --spacing linear",
        tmp_path,
    )
    assert [float(r["epsilon"]) for r in rows] == [0.0, 1.0, 2.0, 3.0, 4.0]
    acc = Accountant().compose(AdditiveNoise(Gaussian(2.0)), 3)
    assert [float(r["delta"]) for r in rows] == [acc.delta(e).upper for e in (0.0, 1.0, 2.0, 3.0, 4.0)]
    deltas = [float(r["delta"]) for r in rows]
    assert all(a > b for a, b in itertools.pairwise(deltas))


@pytest.mark.slow
def test_figures_in_each_format_and_the_text_table(tmp_path: Path) -> None:
    prefix = tmp_path / "fig"
    argv = shlex.split(
        "curve --noise gaussian --sigma-range 1 4 --points 3 --delta 1e-6 --format png svg pdf"
    )
    code, out, err = _run([*argv, "--out", str(prefix)])
    assert (code, err) == (0, "")
    assert Path(f"{prefix}.png").read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in Path(f"{prefix}.svg").read_bytes()[:2000]
    assert Path(f"{prefix}.pdf").read_bytes().startswith(b"%PDF")
    lines = out.splitlines()
    assert lines[0].startswith("certified epsilon at delta = 1e-06 against sigma (gaussian)")
    assert lines[-1] == f"wrote {prefix}.csv, {prefix}.png, {prefix}.svg, {prefix}.pdf"
    assert not list(tmp_path.glob(".*.tmp"))  # written through temporary files, none left


def test_without_out_only_the_table_is_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(
        shlex.split("curve --noise gaussian --sigma-range 1 4 --points 3 --delta 1e-6 --json")
    )
    assert code == 0
    record = json.loads(out)
    assert record["files"] == []
    assert len(record["rows"]) == 3
    assert list(tmp_path.iterdir()) == []


def test_unbounded_points_are_inf_in_strict_json(tmp_path: Path) -> None:
    record, rows = _curve("--noise binomial --trials-range 1 2 --delta 1e-5", tmp_path)
    assert rows[0]["epsilon"] == "inf"
    assert record["rows"][0]["epsilon"] == "inf"  # type: ignore[index]


def test_no_progress_on_a_terminal(tmp_path: Path) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    argv = shlex.split("curve --noise gaussian --sigma-range 1 4 --points 3 --delta 1e-6 --json")
    for extra, drawn in (([], True), (["--no-progress"], False)):
        out, err = io.StringIO(), Terminal()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main([*argv, *extra]) == 0
        json.loads(out.getvalue())  # only the answer on stdout
        assert ("curve points" in err.getvalue()) is drawn


@pytest.mark.slow
def test_no_pyplot_state() -> None:
    """The figure is drawn by matplotlib.figure.Figure: pyplot (global state) is never imported."""
    code = (
        "import sys, tempfile, os\n"
        "from accounting.cli import main\n"
        "d = tempfile.mkdtemp()\n"
        "assert main(['curve', '--noise', 'gaussian', '--sigma-range', '1', '2', '--points', '2',"
        " '--delta', '1e-5', '--out', os.path.join(d, 'c'), '--no-progress']) == 0\n"
        "assert 'matplotlib.figure' in sys.modules\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        ("--noise gaussian --sigma-range 5 1 --delta 1e-5", "--sigma-range"),
        ("--noise gaussian --sigma-range 1 1 --delta 1e-5", "--sigma-range"),
        ("--noise gaussian --sigma-range 0 1 --delta 1e-5", "--sigma-range"),
        ("--noise gaussian --sigma-range nan 1 --delta 1e-5", "--sigma-range"),
        ("--noise gaussian --sigma-range 1 --delta 1e-5", "--sigma-range"),
        ("--noise gaussian --sigma-range 1e-300 1 --delta 1e-5", "--sigma-range"),
        ("--noise skellam --variance-range 1 1e40 --delta 1e-5", "--variance-range"),
        ("--noise polya --users 4 --beta-range 0.5 1 --delta 1e-5", "--beta-range"),
        ("--noise skellam --sigma-range 1 5 --delta 1e-5", "--sigma-range"),
        ("--noise gaussian --sigma-range 1 5 --sigma 2 --delta 1e-5", "--sigma"),
        ("--noise gaussian --delta 1e-5", "--sigma-range"),
        ("--noise gaussian --sigma-range 1 5", "--delta"),
        ("--noise gaussian --sigma 1 --compositions-range 4 2 --delta 1e-5", "--compositions-range"),
        ("--noise gaussian --sigma 1 --compositions-range 0 2 --delta 1e-5", "--compositions-range"),
        ("--noise gaussian --sigma 1 --compositions-range 1 2.5 --delta 1e-5", "--compositions-range"),
        ("--noise skellam --variance 9 --compositions-range 1 1e12 --delta 1e-5", "--compositions-range"),
        (
            "--noise gaussian --sigma 1 --compositions-range 1 5 --compositions 3 --delta 1e-5",
            "--compositions",
        ),
        ("--noise gaussian --sigma-range 1 5 --compositions-range 1 5 --delta 1e-5", "--compositions-range"),
        ("--noise gaussian --sigma 1 --epsilon-range 0 5", "--epsilon-range"),
        ("--noise gaussian --sigma 1 --epsilon-range 2 1", "--epsilon-range"),
        ("--noise gaussian --sigma 1 --epsilon-range -1 1 --spacing linear", "--epsilon-range"),
        ("--noise gaussian --sigma 1 --epsilon-range 0.1 1 --delta 1e-5", "--delta"),
        ("--noise gaussian --sigma-range 1 5 --delta 1e-5 --points 1", "--points"),
        (f"--noise gaussian --sigma-range 1 5 --delta 1e-5 --points {MAX_CURVE_POINTS + 1}", "--points"),
        ("--noise gaussian --sigma-range 1 5 --delta 1e-5 --points 2.5", "--points"),
        ("--noise gaussian --sigma-range 1 5 --delta 1e-5 --format gif", "--format"),
        ("--noise gaussian --sigma-range 1 5 --delta 1e-5 --out /nonexistent/dir/c", "--out"),
        ("--noise gaussian --sigma-range 1 5 --delta 1e-5 --spacing cubic", "--spacing"),
    ],
)
def test_bad_ranges_and_options_exit_2_naming_the_option(argv: str, option: str) -> None:
    code, out, err = _run(["curve", *shlex.split(argv)])
    assert code == 2, err
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert option in err, err
