"""Plots of a results folder: regret curves against the round, one figure per panel.

Each figure is written as PNG (screens), PDF and SVG (print: vector, fonts embedded as TrueType
in the PDF, no timestamps, so the same results give the same files).

**Colours and line styles.** Curves take the colour-blind-safe palette of Okabe & Ito (2008)
(:data:`OKABE_ITO`; its yellow is left out, too light for a thin line on white), each with a line
style and a marker, so that curves stay apart in greyscale and for colour-blind readers: the
``i``-th label takes line style ``i mod 4`` and the first colour in palette order whose pair with
that style is free, giving 7 × 4 = 28 distinct (colour, line style) pairs before any repeats. The
paper's colours (:data:`PAPER_COLORS`, the legends of Chowdhury & Zhou 2023, Figures 1-4: DP-SE
black, Dist-DP-SE blue, Dist-RDP-SE(s=10) red, ...) are kept as hues, mapped onto the safe palette
(red → vermillion, green → bluish green, cyan → sky blue: the paper's red and green are the pair
deuteranopes cannot tell apart), so the figures read like the paper's.

**Bands.** Around each mean curve, ``"ci95"`` (default) draws the 95% Student-t interval
``mean ± t_{0.975, R-1} sd / sqrt(R)`` and ``"se"`` ±1 standard error ``sd / sqrt(R)``, the
papers' bands (:func:`band_half_width`). The choice is the config's ``bands`` key (read from the
folder's ``config.toml``), or the ``bands`` argument (``dp-regret plot --bands``); the y-label and
the figure title say which band is drawn.

**Regret.** The y-axis is the time-average regret of the folder's learner family, as
``summary.json`` names it (``regret_label``): the pseudo-regret ``Reg(t)/t`` (MAB), the group
pseudo-regret ``R_M(t)/t`` summed over the silos (federated LinUCB). A panel's ``y_axis``
(:data:`~learners.config.Y_AXES`) may ask for the cumulative regret ``Reg(t)`` (figure
``regret-<panel>-cumulative``) or ``Reg(t)/√t`` (``regret-<panel>-sqrt``) as well or instead,
as the official LDP-LinUCB figures plot it.

**Legends.** Where ``summary.json`` gives a private algorithm's ``privacy.exact`` guarantee (and
``privacy.claimed``, the paper's), its legend entry says both, e.g.
``Dist-RDP-SE(s=10): exact ε=2.24 (claimed 2.42), δ=1e-6``; folders without them get the labels.
"""

from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accounting.storage import save_figure
from learners.config import (
    BANDS,
    DEFAULT_BANDS,
    DEFAULT_X_AXIS,
    DEFAULT_Y_AXES,
    X_AXES,
    bands_name,
    y_axes_names,
)
from learners.config_files import read_toml
from learners.errors import ConfigError, ParameterError
from learners.results import (
    CONFIG_FILE,
    CSV_FILE,
    SUMMARY_FILE,
    Curve,
    load_summary,
    read_curves,
    summary_captions,
    t_quantile,
)
from learners.run_ledgers import check_run

FloatArray = NDArray[np.float64]

#: The formats each figure is written in, next to each other (``regret-<panel>.png``, ``.pdf``, ``.svg``).
FORMATS = ("png", "pdf", "svg")

#: The colour-blind-safe palette of Okabe & Ito (2008), "Color Universal Design", without its
#: yellow (#F0E442: too light for lines on white), in the order curves take it.
OKABE_ITO = {
    "black": "#000000",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "bluish green": "#009E73",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "reddish purple": "#CC79A7",
}
#: Line styles, combined with the colours: 4 is coprime to the 7 colours.
LINESTYLES = ("-", "--", "-.", ":")
#: Markers (every tenth of the curve), a third cue for readers of a greyscale print.
MARKERS = ("o", "s", "^", "D", "v")

#: The colours of the paper's figures (Chowdhury & Zhou 2023, Figures 1-4), by label; drawn as
#: :data:`PAPER_HUES` of them.
PAPER_COLORS = {
    "DP-SE": "black",
    "Dist-DP-SE": "blue",
    "Dist-RDP-SE(s=10)": "red",
    "Dist-RDP-SE(s=100)": "green",
    "CDP-SE": "black",
    "LDP-SE": "cyan",
}
_PAPER_PREFIX_COLORS = (("Dist-CDP-SE", "green"),)
#: The paper's colours mapped onto the safe palette (the nearest hue).
PAPER_HUES = {
    "black": OKABE_ITO["black"],
    "blue": OKABE_ITO["blue"],
    "red": OKABE_ITO["vermillion"],
    "green": OKABE_ITO["bluish green"],
    "cyan": OKABE_ITO["sky blue"],
}

#: How the regret is named when ``summary.json`` does not say (its ``regret_label``: the learner
#: family's, e.g. ``["group pseudo-regret", "R_M(t)"]`` for federated LinUCB): (name, symbol).
DEFAULT_REGRET = ("pseudo-regret", "Reg(t)")

#: Labels at most this long stay inside the axes; longer legends go below them.
_SHORT_LABEL = 28
#: How the figures name each band: (y-label, title).
_BAND_TEXT = {
    "ci95": ("mean ± 95% CI", "95% t-interval"),
    "se": ("mean ± 1 SE", "1 standard error"),
}


@dataclass(frozen=True)
class Style:
    """How one label's curves are drawn."""

    color: str
    linestyle: str
    marker: str


def styles(labels: Sequence[str]) -> dict[str, Style]:
    """A distinct (colour, line style) pair for each of ``labels`` (up to 28; then pairs repeat,
    with other markers), the paper's hue where the label has one (once per figure)."""
    palette = tuple(OKABE_ITO.values())
    out: dict[str, Style] = {}
    taken: set[tuple[str, str]] = set()
    used: set[str] = set()
    for i, label in enumerate(dict.fromkeys(labels)):
        linestyle = LINESTYLES[i % len(LINESTYLES)]
        wanted = _paper_hue(label)
        candidates = [wanted] if wanted is not None and wanted not in used else []
        candidates += [c for c in palette if c not in used] + list(palette)
        color = next((c for c in candidates if (c, linestyle) not in taken), palette[i % len(palette)])
        taken.add((color, linestyle))
        used.add(color)
        out[label] = Style(color, linestyle, MARKERS[i % len(MARKERS)])
    return out


def _paper_hue(label: str) -> str | None:
    name = PAPER_COLORS.get(label)
    if name is None:
        name = next((c for prefix, c in _PAPER_PREFIX_COLORS if label.startswith(prefix)), None)
    return PAPER_HUES[name] if name is not None else None


def band_half_width(values: FloatArray, bands: str) -> FloatArray | None:
    """The half-width of the band around the mean of each column of ``values`` (repetitions × points).

    ``"se"``: one standard error ``sd / sqrt(R)``; ``"ci95"``: ``t_{0.975, R-1} sd / sqrt(R)``,
    the 95% Student-t interval (sample sd, ``ddof=1``). ``None`` for a single repetition.
    """
    bands = bands_name("bands", bands)
    r = values.shape[0]
    if r < 2:
        return None
    se: FloatArray = values.std(axis=0, ddof=1) / math.sqrt(r)
    return se if bands == "se" else t_quantile(r) * se


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if value in ("inf", "Infinity"):
        return math.inf
    return None


def _short(x: float) -> str:
    """``2.24``, ``1e-6`` (not ``1e-06``), ``∞``."""
    if math.isinf(x):
        return "∞"
    return re.sub(r"e([+-])0*(\d)", lambda m: f"e{m[1].replace('+', '')}{m[2]}", f"{x:.3g}")


def privacy_text(privacy: Mapping[str, Any]) -> str | None:
    """The guarantee of a ``summary.json`` ``privacy`` entry for a legend, e.g.
    ``exact ε=2.24 (claimed 2.42), δ=1e-6``; ``None`` without a ``privacy.exact`` ε (older folders).
    """
    exact = privacy.get("exact")
    if not isinstance(exact, Mapping):
        return None
    epsilon = _number(exact.get("epsilon"))
    if epsilon is None:
        return None
    text = f"exact ε={_short(epsilon)}"
    claimed = privacy.get("claimed")
    if isinstance(claimed, Mapping):
        claim = _number(claimed.get("epsilon"))
        fails = claimed.get("holds") is False  # the theorem's hypotheses fail at this ε
        if claim is not None:
            text += f" (claimed {_short(claim)}{', does not hold' if fails else ''})"
        elif fails:
            text += " (no claim: hypotheses fail)"
    delta = _number(exact.get("delta"))
    if delta:
        text += f", δ={_short(delta)}"
    return text


def _read_privacy(data: Mapping[str, Any]) -> dict[tuple[str, str, float], str]:
    """``(panel, label, ε) -> privacy_text`` of the private results of a ``summary.json``'s content.

    Tolerant: an entry without the keys (a folder of an older version) is left out, and its legend
    shows the label alone. (A malformed file is refused by ``load_summary``, which read it.)
    """
    results = data.get("results") if isinstance(data, Mapping) else None
    out: dict[tuple[str, str, float], str] = {}
    for entry in results if isinstance(results, list) else []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("privacy"), Mapping):
            continue
        epsilon = _number(entry.get("epsilon"))
        text = privacy_text(entry["privacy"])
        if epsilon is not None and text is not None:
            out[(str(entry.get("panel")), str(entry.get("label")), epsilon)] = text
    return out


def _read_regret_label(data: Mapping[str, Any]) -> tuple[str, str]:
    """The ``regret_label`` of a ``summary.json``'s content (name, symbol); :data:`DEFAULT_REGRET`
    without one."""
    label = data.get("regret_label") if isinstance(data, Mapping) else None
    if isinstance(label, list) and len(label) == 2 and all(isinstance(x, str) for x in label):
        return label[0], label[1]
    return DEFAULT_REGRET


def _draw(
    cells: Sequence[tuple[str, float | None]],
    curves: Sequence[Curve],
    captions: Mapping[str, str],
    privacy: Mapping[tuple[str, str, float], str],
    title: str,
    path: Path,
    columns: int,
    bands: str,
    overview: bool,
    regret: tuple[str, str] = DEFAULT_REGRET,
    y_axis: str = "average",
) -> list[Path]:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    # Reg(t)/t, Reg(t) or Reg(t)/√t: the power of t dividing the cumulative regret, its label, its name
    power, suffix, what = {
        "average": (1.0, "/t", "time-average"),
        "cumulative": (0.0, "", "cumulative"),
        "sqrt": (0.5, "/√t", "cumulative"),
    }[y_axis]

    # The curves of each cell and their legend entries (with the guarantee where summary.json has it).
    entries: list[list[tuple[Curve, str]]] = []
    for panel, eps in cells:
        entries.append([])
        for curve in curves:
            if curve.panel != panel or (curve.epsilon is not None and curve.epsilon != eps):
                continue
            guarantee = (
                privacy.get((panel, curve.label, curve.epsilon)) if curve.epsilon is not None else None
            )
            entries[-1].append((curve, f"{curve.label}: {guarantee}" if guarantee else curve.label))
    # Long entries go below the axes (where they cover no curve), in room made for them.
    below = any(len(text) > _SHORT_LABEL for cell in entries for _, text in cell)
    legend_height = 0.35 + 0.16 * max(map(len, entries)) if below else 0.0

    rows = math.ceil(len(cells) / columns)
    cols = min(columns, len(cells))
    fig = Figure(figsize=(5.0 * cols, (3.8 + legend_height) * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    look = styles([c.label for c in curves])
    order = list(look)
    y_band, title_band = _BAND_TEXT[bands]
    for ax in axes.flat[len(cells) :]:
        ax.set_visible(False)
    runs: set[int] = set()
    for ax, (panel, eps), cell in zip(axes.flat, cells, entries, strict=False):
        for curve, text in cell:
            t = curve.rounds.astype(np.float64)
            average = curve.pseudo / t**power
            mean = average.mean(axis=0)
            style = look[curve.label]
            ax.plot(
                t,
                mean,
                color=style.color,
                linestyle=style.linestyle,
                marker=style.marker,
                # markers every tenth of the width, staggered so that curves do not hide each other's
                markevery=(0.02 * (order.index(curve.label) % 5), 0.1),
                markersize=4,
                label=text,
                linewidth=1.4,
            )
            runs.add(average.shape[0])
            half = band_half_width(average, bands)
            if half is not None:
                ax.fill_between(t, mean - half, mean + half, color=style.color, alpha=0.18, linewidth=0)
        eps_text = f"ε = {eps:g}" if eps is not None else "non-private"
        if overview:
            caption = captions.get(panel, "")
            ax.set_title(f"{panel}: {eps_text}" + (f"\n{caption}" if caption else ""), fontsize=9)
        else:
            ax.set_title(eps_text, fontsize=10)
        ax.set_xlabel("round t", fontsize=9)
        ax.set_ylabel(f"{regret[1]}{suffix} ({y_band})", fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4), useMathText=True)
        ax.tick_params(labelsize=8)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if below:
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
        else:
            ax.legend(fontsize=7, loc="upper right", framealpha=0.85)
    if not overview and captions.get(cells[0][0]):
        title = f"{title}: {captions[cells[0][0]]}"
    r_text = f"R = {next(iter(runs))}" if len(runs) == 1 else "R = " + "/".join(map(str, sorted(runs)))
    text = f"{title}\n{what} {regret[0]} {regret[1]}{suffix}, mean of {r_text} runs ± {title_band}"
    width = 52 * cols  # characters of 11 pt text across 5 inches per column: no line is cut off
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in text.split("\n")), fontsize=11)
    return _save(fig, path)


#: The formats :func:`plot_results` is writing (its ``formats``), read by :func:`_save`.
_WRITING: ContextVar[tuple[str, ...]] = ContextVar("formats", default=FORMATS)


def _save(fig: Any, path: Path) -> list[Path]:
    """``fig`` as ``path`` in every format :func:`plot_results` asked for, each written atomically."""
    # The kernel's saver: TrueType fonts in the PDF, no dates or random ids, so the same results give
    # the same files. "tight": nothing outside the axes (a legend below them) is cut off at the edge.
    targets = [path.with_suffix(f".{fmt}") for fmt in _WRITING.get()]
    return save_figure(fig, targets, dpi=150, bbox_inches="tight", pad_inches=0.08)


def plot_results(
    out_dir: str | os.PathLike[str],
    bands: str | None = None,
    formats: Sequence[str] = FORMATS,
    check_ledgers: bool = True,
) -> list[Path]:
    """Draw the time-average pseudo-regret ``Reg(t)/t`` of a results folder from its ``regret.csv``
    (the group pseudo-regret for the linear family: ``summary.json``'s ``regret_label``).

    One figure per panel (``regret-<panel>``: a subplot per ε, a line per algorithm with its band;
    non-private algorithms appear in every subplot; a panel with ``x_axis = "epsilon"`` is instead
    its final regret ``Reg(T)`` against ε, :func:`_draw_final`; the panels with ``x_axis = "horizon"``
    are drawn together as ``regret-horizon``, each algorithm's final regret ``Reg(T)`` against the
    panels' T on log-log axes with the least-squares slope in the legend, :func:`horizon_lines`),
    and for several panels an overview ``regret``
    with every panel and ε (Figure 1 of the paper is such a 2×3 grid), each as PNG, PDF and SVG.
    Colours, line styles and legends: see the module docstring.

    Parameters
    ----------
    out_dir : str or os.PathLike
        A results folder of :func:`run_experiment`.
    bands : {"ci95", "se"}, optional
        The band around each mean: the 95% t-interval or ±1 standard error. Default: the ``bands``
        of the folder's ``config.toml``, else ``"ci95"``.
    formats : sequence of str, optional
        The formats to write, some of :data:`FORMATS` (all by default; a quick run of
        :func:`~learners.runner.run_experiment` writes PNG only).
    check_ledgers : bool, optional
        Check the folder's ledgers and the exact ε of its summary against them
        (:func:`learners.run_ledgers.check_run`) before drawing; the run that has just written
        them draws without (it answered those questions itself, perhaps in worker processes).

    Returns
    -------
    list of pathlib.Path
        The files written: for each figure one per format.
    """
    out = Path(out_dir)
    wanted = tuple(formats) if isinstance(formats, list | tuple) else None
    if not wanted or any(f not in FORMATS for f in wanted) or len(set(wanted)) != len(wanted):
        raise ParameterError("formats", formats, "some of " + ", ".join(FORMATS) + ", each once")
    if bands is not None:
        try:
            bands = bands_name("bands", bands)
        except ConfigError as err:
            raise ParameterError("bands", bands, err.valid) from None
    token = _WRITING.set(wanted)
    try:
        return _plot(out, bands, check_ledgers)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        valid = f"a readable and writable results folder ({where}{exc.strerror or exc})"
        raise ParameterError("results_dir", str(out), valid) from None
    finally:
        _WRITING.reset(token)


def _configured(out: Path) -> tuple[str, dict[str, str], dict[str, tuple[str, ...]]]:
    """The ``bands`` and each panel's ``x_axis`` and ``y_axis`` of the folder's resolved config
    (older folders have none: the defaults)."""
    path = out / CONFIG_FILE
    if not path.exists():
        return DEFAULT_BANDS, {}, {}
    try:
        data = read_toml(path, "results_dir")  # refuses a folder, a pipe or a device by that name
        bands = bands_name("bands", data.get("bands", DEFAULT_BANDS))
        panels = data.get("panels", [])
        if not isinstance(panels, list) or not all(isinstance(p, dict) for p in panels):
            raise ConfigError("panels", panels, "an array of tables")
        axes = {str(p.get("name")): p.get("x_axis", DEFAULT_X_AXIS) for p in panels}
        for name, axis in axes.items():
            if axis not in X_AXES:
                raise ConfigError(f"panels[{name}].x_axis", axis, f"one of {X_AXES}")
        y_axes: dict[str, tuple[str, ...]] = {}
        for p in panels:
            name = str(p.get("name"))
            y_axes[name] = y_axes_names(f"panels[{name}].y_axis", p.get("y_axis", list(DEFAULT_Y_AXES)))
        return bands, axes, y_axes
    except ConfigError as exc:
        detail = " ".join(str(exc).split())[:200]
        raise ParameterError(
            "results_dir", str(path), f"a {CONFIG_FILE} written by dp-regret ({detail})"
        ) from None


def _draw_final(
    panel: str,
    curves: Sequence[Curve],
    caption: str,
    title: str,
    path: Path,
    bands: str,
    regret: tuple[str, str] = DEFAULT_REGRET,
) -> list[Path]:
    """A panel plotted against ε: the final regret ``Reg(T)`` (the last checkpoint) of each private
    algorithm at every ε of the panel (log scale), with its band, and each non-private algorithm
    as a horizontal line with its band."""
    from matplotlib.figure import Figure

    mine = [c for c in curves if c.panel == panel]
    look = styles([c.label for c in mine])
    y_band, title_band = _BAND_TEXT[bands]
    fig = Figure(figsize=(6.4, 4.6), layout="constrained")
    ax = fig.add_subplot()
    eps_all = sorted({c.epsilon for c in mine if c.epsilon is not None})
    runs: set[int] = set()
    for label in dict.fromkeys(c.label for c in mine):
        style = look[label]
        of = [c for c in mine if c.label == label]
        finals = [(c.epsilon, c.pseudo[:, -1]) for c in of]
        runs.update(v.shape[0] for _, v in finals)
        if of[0].epsilon is None:  # non-private: one run, a line across every ε
            values = finals[0][1]
            mean = float(values.mean())
            ax.axhline(mean, color=style.color, linestyle=style.linestyle, linewidth=1.4, label=label)
            half = band_half_width(values[:, None], bands)
            if half is not None and eps_all:
                lo, hi = mean - float(half[0]), mean + float(half[0])
                ax.fill_between(eps_all, lo, hi, color=style.color, alpha=0.12, linewidth=0)
            continue
        finals.sort(key=lambda item: float(item[0] or 0.0))
        x = np.array([float(e or 0.0) for e, _ in finals])
        table = np.stack([v for _, v in finals], axis=1)  # repetitions × ε (equal counts per unit)
        mean = table.mean(axis=0)
        ax.plot(x, mean, color=style.color, linestyle=style.linestyle, marker=style.marker, label=label)
        half = band_half_width(table, bands)
        if half is not None:
            ax.fill_between(x, mean - half, mean + half, color=style.color, alpha=0.18, linewidth=0)
    ax.set_xscale("log")
    ax.set_xlabel("privacy level ε", fontsize=9)
    ax.set_ylabel(f"final {regret[1].replace('(t)', '(T)')} ({y_band})", fontsize=9)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3, which="both")
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7, loc="upper right", framealpha=0.85)
    r_text = "R = " + "/".join(map(str, sorted(runs)))
    head = f"{title}: {caption}" if caption else title
    text = f"{head}\nfinal {regret[0]} against ε, mean of {r_text} runs ± {title_band}"
    fig.suptitle("\n".join(textwrap.fill(line, 64) for line in text.split("\n")), fontsize=11)
    return _save(fig, path)


@dataclass(frozen=True)
class HorizonLine:
    """One line of the ``regret-horizon`` figure: an algorithm at one ε (``None``: non-private)
    over the ``x_axis = "horizon"`` panels.

    ``horizons`` are the panels' T (their last checkpoint), ``finals`` the mean final regret
    Reg(T) over the repetitions, and ``slope`` the least-squares slope of ``log Reg(T)`` on
    ``log T`` (``None`` with fewer than two horizons or a final regret <= 0, which has no log).
    """

    label: str
    epsilon: float | None
    panels: tuple[str, ...]
    horizons: FloatArray
    finals: FloatArray
    slope: float | None


def horizon_lines(curves: Sequence[Curve], panels: Sequence[str]) -> list[HorizonLine]:
    """The lines of the ``regret-horizon`` figure from the curves of ``panels`` (module docstring
    of :func:`plot_results`), sorted by T within each line."""
    keys = list(dict.fromkeys((c.label, c.epsilon) for c in curves if c.panel in panels))
    out = []
    for label, eps in keys:
        points = sorted(
            (float(c.rounds[-1]), float(c.pseudo[:, -1].mean()), c.panel)
            for c in curves
            if c.panel in panels and c.label == label and c.epsilon == eps
        )
        horizons = np.array([t for t, _, _ in points])
        finals = np.array([r for _, r, _ in points])
        slope = None
        if len(set(horizons.tolist())) >= 2 and bool((finals > 0).all()):
            slope = float(np.polyfit(np.log(horizons), np.log(finals), 1)[0])
        out.append(HorizonLine(label, eps, tuple(p for _, _, p in points), horizons, finals, slope))
    return out


def _draw_horizon(
    panels: Sequence[str],
    curves: Sequence[Curve],
    title: str,
    path: Path,
    bands: str,
    regret: tuple[str, str] = DEFAULT_REGRET,
) -> list[Path]:
    """The ``x_axis = "horizon"`` panels as one figure: each algorithm's (and ε's) final regret
    Reg(T) against the panel's T on log-log axes, with its band and, in the legend, the
    least-squares slope of log Reg(T) on log T (the regret exponent: 3/4 for T^{3/4}, ...)."""
    from matplotlib.figure import Figure

    lines = horizon_lines(curves, panels)
    look = styles([f"{line.label}" for line in lines])
    y_band, title_band = _BAND_TEXT[bands]
    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.add_subplot()
    runs: set[int] = set()
    for line in lines:
        style = look[line.label]
        eps = "" if line.epsilon is None else f", ε={_short(line.epsilon)}"
        slope = "n/a" if line.slope is None else f"{line.slope:.3f}"
        ax.plot(
            line.horizons,
            line.finals,
            color=style.color,
            linestyle=style.linestyle,
            marker=style.marker,
            label=f"{line.label}{eps}: slope {slope}",
        )
        finals = [
            c.pseudo[:, -1]
            for p in line.panels
            for c in curves
            if c.panel == p and c.label == line.label and c.epsilon == line.epsilon
        ]
        runs.update(len(v) for v in finals)
        if len({len(v) for v in finals}) == 1:
            half = band_half_width(np.stack(finals, axis=1), bands)
            if half is not None:
                low = np.maximum(line.finals - half, line.finals * 1e-3)  # a log axis: keep it > 0
                ax.fill_between(line.horizons, low, line.finals + half, color=style.color, alpha=0.18, lw=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("horizon T", fontsize=9)
    ax.set_ylabel(f"final {regret[1].replace('(t)', '(T)')} ({y_band})", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7, loc="upper left", framealpha=0.85)
    r_text = "R = " + "/".join(map(str, sorted(runs)))
    text = (
        f"{title}: final {regret[0]} against the horizon (log-log; slope: least squares of "
        f"log Reg(T) on log T)\nmean of {r_text} runs ± {title_band}"
    )
    fig.suptitle("\n".join(textwrap.fill(line, 64) for line in text.split("\n")), fontsize=11)
    return _save(fig, path)


def _plot(out: Path, bands: str | None, check_ledgers: bool) -> list[Path]:
    csv_path = out / CSV_FILE
    if not csv_path.is_file():
        raise ParameterError("results_dir", str(out), f"a results folder of dp-regret run (with {CSV_FILE})")
    curves = read_curves(csv_path)
    if not curves:
        raise ParameterError("results_dir", str(out), f"a {CSV_FILE} with at least one row")
    configured, axes, y_axes = _configured(out)
    if bands is None:
        bands = configured
    captions: dict[str, str] = {}
    privacy: dict[tuple[str, str, float], str] = {}
    regret = DEFAULT_REGRET
    title = out.name
    summary = out / SUMMARY_FILE
    if summary.exists():
        data = load_summary(summary)
        named, captions = summary_captions(data)
        privacy = _read_privacy(data)
        regret = _read_regret_label(data)
        if check_ledgers:
            check_run(out, data, SUMMARY_FILE)  # its ledgers as the run wrote them, its ε theirs
        unknown = sorted({c.panel for c in curves} - {str(p["name"]) for p in data["panels"]})
        if unknown:
            valid = f"a {CSV_FILE} of the panels its {SUMMARY_FILE} names (it has {unknown[0]!r})"
            raise ParameterError("results_dir", str(out / CSV_FILE), valid)
        title = named or title
    panels = list(dict.fromkeys(c.panel for c in curves))
    cells_of: dict[str, list[tuple[str, float | None]]] = {}
    for panel in panels:
        eps = list(dict.fromkeys(c.epsilon for c in curves if c.panel == panel and c.epsilon is not None))
        cells_of[panel] = [(panel, e) for e in eps] or [(panel, None)]
    written: list[Path] = []
    by_horizon = [p for p in panels if axes.get(p) == "horizon"]
    if by_horizon:
        written += _draw_horizon(by_horizon, curves, title, out / "regret-horizon.png", bands, regret)
    for panel, cells in cells_of.items():
        if panel in by_horizon:  # a point of regret-horizon
            continue
        name = title if panel == title else f"{title}, panel {panel}"
        path = out / f"regret-{panel}.png"
        if axes.get(panel, DEFAULT_X_AXIS) == "epsilon":
            caption = captions.get(panel, "")
            written += _draw_final(panel, curves, caption, name, path, bands, regret)
            continue
        for y_axis in y_axes.get(panel, DEFAULT_Y_AXES):
            at = path if y_axis == "average" else path.with_name(f"regret-{panel}-{y_axis}.png")
            written += _draw(
                cells,
                curves,
                captions,
                privacy,
                name,
                at,
                len(cells),
                bands,
                overview=False,
                regret=regret,
                y_axis=y_axis,
            )
    if len(panels) > 1:
        every = [cell for panel in panels for cell in cells_of[panel]]
        path = out / "regret.png"
        written += _draw(
            every, curves, captions, privacy, title, path, 3, bands, overview=True, regret=regret
        )
    return written


__all__ = [
    "BANDS",
    "FORMATS",
    "LINESTYLES",
    "MARKERS",
    "OKABE_ITO",
    "PAPER_COLORS",
    "PAPER_HUES",
    "HorizonLine",
    "Style",
    "band_half_width",
    "horizon_lines",
    "plot_results",
    "privacy_text",
    "styles",
]
