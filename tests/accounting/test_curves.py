"""Curves of certified answers (:mod:`accounting.curves`): the grid, the CSV and the figure."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from accounting.curves import curve_grid, draw_curve, write_csv


def test_grid() -> None:
    assert curve_grid(1, 1000, 4, "log", integer=False) == (1.0, 10.0, 100.0, 1000.0)
    assert curve_grid(1, 5, 20, "log", integer=True) == (1, 2, 3, 4, 5)  # repeated integers dropped
    assert curve_grid(0, 1, 3, "linear", integer=False) == (0.0, 0.5, 1.0)


def test_csv_holds_every_float_as_written(tmp_path: Path) -> None:
    """Floats by ``repr``: a value read back is the one certified, to the last bit."""
    rows = [
        {"sigma": 0.1 + 0.2, "epsilon": 1 / 3, "route": "pld"},
        {"sigma": 2.0, "epsilon": math.inf, "route": "x"},
    ]
    path = tmp_path / "c.csv"
    write_csv(str(path), ["sigma", "epsilon", "route"], rows)
    with open(path, encoding="utf-8", newline="") as handle:
        back = list(csv.DictReader(handle))
    assert [float(r["sigma"]) for r in back] == [0.1 + 0.2, 2.0]
    assert [float(r["epsilon"]) for r in back] == [1 / 3, math.inf]
    assert [r["route"] for r in back] == ["pld", "x"]


def test_the_figure_is_written_in_each_format_and_the_same_twice(tmp_path: Path) -> None:
    """One file per path; no date in them, so the same curve gives the same bytes."""
    rows = [{"epsilon": e, "delta": d} for e, d in ((0.1, 0.5), (1.0, 1e-3), (5.0, 0.0), (9.0, 1e-9))]
    for name in ("a", "b"):
        paths = [str(tmp_path / f"{name}.png"), str(tmp_path / f"{name}.svg")]
        draw_curve(paths, rows, "epsilon", "delta", "certified delta against epsilon", log_x=False)
        assert all(Path(p).stat().st_size > 0 for p in paths)
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
