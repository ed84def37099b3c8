"""Plots of a results folder: regret curves against the round, one figure per panel."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from learners.errors import ParameterError
from learners.results import CSV_FILE, SUMMARY_FILE, _Curve, _read_curves, _read_summary, _t_quantile

if TYPE_CHECKING:
    pass

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The colours of the paper's figures (spec §7.1), by label; other labels cycle through tab10.
PAPER_COLORS = {
    "DP-SE": "black",
    "Dist-DP-SE": "blue",
    "Dist-RDP-SE(s=10)": "red",
    "Dist-RDP-SE(s=100)": "green",
    "CDP-SE": "black",
    "LDP-SE": "cyan",
}
_PAPER_PREFIX_COLORS = (("Dist-CDP-SE", "green"),)


def _colors(labels: Sequence[str]) -> dict[str, str]:
    """The paper's colour for each label where it has one (once per figure); tab10 otherwise."""
    wanted: dict[str, str | None] = {}
    for label in labels:
        color = PAPER_COLORS.get(label)
        if color is None:
            color = next((c for prefix, c in _PAPER_PREFIX_COLORS if label.startswith(prefix)), None)
        wanted[label] = color
    taken: set[str] = set()
    out: dict[str, str] = {}
    for label, color in wanted.items():
        if color is not None and color not in taken:
            out[label] = color
            taken.add(color)
    palette = [f"C{i}" for i in range(10)]  # matplotlib's tab10 cycle
    for n, label in enumerate(label for label in wanted if label not in out):
        free = [c for c in palette if c not in taken]
        out[label] = free[0] if free else palette[n % len(palette)]
        taken.add(out[label])
    return out


def _draw(
    cells: Sequence[tuple[str, float | None]],
    curves: Sequence[_Curve],
    captions: Mapping[str, str],
    title: str,
    path: Path,
    columns: int,
) -> Path:
    from matplotlib.figure import Figure

    rows = math.ceil(len(cells) / columns)
    cols = min(columns, len(cells))
    fig = Figure(figsize=(4.6 * cols, 3.6 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    colors = _colors(list(dict.fromkeys(c.label for c in curves)))
    for ax in axes.flat[len(cells) :]:
        ax.set_visible(False)
    for ax, (panel, eps) in zip(axes.flat, cells, strict=False):
        for curve in curves:
            if curve.panel != panel or (curve.epsilon is not None and curve.epsilon != eps):
                continue
            t = curve.rounds.astype(np.float64)
            average = curve.pseudo / t
            mean = average.mean(axis=0)
            color = colors[curve.label]
            ax.plot(t, mean, color=color, label=curve.label, linewidth=1.3)
            r = average.shape[0]
            if r > 1:
                half = _t_quantile(r) * average.std(axis=0, ddof=1) / math.sqrt(r)
                ax.fill_between(t, mean - half, mean + half, color=color, alpha=0.2, linewidth=0)
        caption = captions.get(panel, "")
        eps_text = f"ε = {eps:g}" if eps is not None else "non-private"
        ax.set_title(f"{panel}: {caption + ', ' if caption else ''}{eps_text}", fontsize=9)
        ax.set_xlabel("Round")
        ax.set_ylabel("Time-average regret")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"{title}: mean Reg(t)/t with 95% confidence bands", fontsize=10)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fig.savefig(tmp, format="png", dpi=110)
    os.replace(tmp, path)
    return path


def plot_results(out_dir: str | os.PathLike[str]) -> list[Path]:
    """Draw the time-average pseudo-regret ``Reg(t)/t`` of a results folder from its ``regret.csv``.

    One PNG per panel (``regret-<panel>.png``: a subplot per ε, a line per algorithm with its 95%
    confidence band ``mean ± t_{0.975, R-1} sd / sqrt(R)``; non-private algorithms appear in every
    subplot), and for several panels an overview ``regret.png`` with every panel and ε (Figure 1 of
    the paper is such a 2×3 grid). Colours are the paper's (spec §7.1).

    Parameters
    ----------
    out_dir : str or os.PathLike
        A results folder of :func:`run_experiment`.

    Returns
    -------
    list of pathlib.Path
        The PNG files written.
    """
    out = Path(out_dir)
    try:
        return _plot(out)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        valid = f"a readable and writable results folder ({where}{exc.strerror or exc})"
        raise ParameterError("results_dir", str(out), valid) from None


def _plot(out: Path) -> list[Path]:
    csv_path = out / CSV_FILE
    if not csv_path.is_file():
        raise ParameterError("results_dir", str(out), f"a results folder of dp-regret run (with {CSV_FILE})")
    curves = _read_curves(csv_path)
    if not curves:
        raise ParameterError("results_dir", str(out), f"a {CSV_FILE} with at least one row")
    captions: dict[str, str] = {}
    title = out.name
    summary = out / SUMMARY_FILE
    if summary.exists():
        named, captions = _read_summary(summary)
        title = named or title
    panels = list(dict.fromkeys(c.panel for c in curves))
    cells_of: dict[str, list[tuple[str, float | None]]] = {}
    for panel in panels:
        eps = list(dict.fromkeys(c.epsilon for c in curves if c.panel == panel and c.epsilon is not None))
        cells_of[panel] = [(panel, e) for e in eps] or [(panel, None)]
    written = [
        _draw(cells, curves, captions, f"{title} {panel}", out / f"regret-{panel}.png", len(cells))
        for panel, cells in cells_of.items()
    ]
    if len(panels) > 1:
        every = [cell for panel in panels for cell in cells_of[panel]]
        written.append(_draw(every, curves, captions, title, out / "regret.png", 3))
    return written
