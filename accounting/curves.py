"""Curves of certified answers: the grid of points, the CSV and the figure.

``dp-account curve`` tabulates the certified ε at a δ against the noise parameter or the number
of compositions, or the certified δ against ε; this module holds what does not depend on the
command line: the points of the x axis (:func:`curve_grid`), the table as CSV (:func:`write_csv`,
every float by ``repr`` so that a value read back is the one certified) and the figure
(:func:`draw_curve`, matplotlib's object API, no pyplot state, no dates: the same curve gives the
same files).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence

import numpy as np

from accounting import storage


def curve_grid(lo: float, hi: float, points: int, spacing: str, integer: bool) -> tuple[float | int, ...]:
    """``points`` values from ``lo`` to ``hi`` (both included), evenly in ``ln x`` (``log``) or in
    ``x`` (``linear``); integers are rounded and repeated ones dropped (so fewer may remain)."""
    xs = np.geomspace(lo, hi, points) if spacing == "log" else np.linspace(lo, hi, points)
    values = [float(x) for x in xs]
    values[0], values[-1] = float(lo), float(hi)  # the ends exactly as given
    if integer:
        return tuple(sorted({round(x) for x in values}))
    return tuple(dict.fromkeys(values))


def write_csv(path: str, columns: Sequence[str], rows: Sequence[Mapping[str, object]]) -> None:
    """``rows`` as CSV at ``path`` (written atomically): a header of ``columns``, then one line per
    row, floats by ``repr``."""
    with storage.atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(columns)
        for row in rows:  # floats by repr: every value read back is the one certified
            out.writerow([repr(row[c]) if isinstance(row[c], float) else row[c] for c in columns])


def draw_curve(
    paths: Sequence[str], rows: Sequence[Mapping[str, object]], x: str, y: str, title: str, log_x: bool
) -> None:
    """Column ``y`` of ``rows`` against column ``x`` as figures at ``paths`` (one per format).

    The y axis is logarithmic when the positive values span more than a factor 100; points whose
    value is 0 or unbounded are then left out of it, and the title says how many.
    """
    from matplotlib.figure import Figure

    xs = [float(r[x]) for r in rows]  # type: ignore[arg-type]
    ys = [float(r[y]) for r in rows]  # type: ignore[arg-type]
    finite = [(a, b) for a, b in zip(xs, ys, strict=True) if math.isfinite(b)]
    positive = [b for _, b in finite if b > 0]
    log_y = len(positive) >= 2 and max(positive) > 100 * min(positive)
    shown = [(a, b) for a, b in finite if b > 0 or not log_y]
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    if shown:
        ax.plot(*zip(*shown, strict=True), marker="o", markersize=3, linewidth=1.3)
    from matplotlib.ticker import FuncFormatter, LogFormatter

    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    for log, axis in ((log_x, ax.xaxis), (log_y, ax.yaxis)):
        if log:  # 0.5, 2, 1000 rather than 5x10^-1 (minor ticks labelled on narrow ranges only)
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))
    ax.set_xlabel(x)
    ax.set_ylabel(f"certified {y} (upper bound)")
    left_out = len(rows) - len(shown)
    note = f"\n({left_out} point(s) at 0 or unbounded not drawn)" if left_out else ""
    ax.set_title(title + note, fontsize=9)
    ax.grid(alpha=0.3, which="both")
    storage.save_figure(fig, paths, dpi=120)  # no dates: the same curve gives the same files
