"""Figures a paper can print: formats, palette (Okabe & Ito 2008), bands, legends, the stand-in note."""

from __future__ import annotations

import copy
import csv
import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from accounting.integrity import RUN_DIGESTS
from learners import plotting
from learners.cli import main
from learners.config import _dump_toml
from learners.errors import ConfigError, ParameterError
from learners.experiment import load_config, plot_results, run_experiment
from tests.learners.test_experiment import tiny


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny run shared by the tests that only read or redraw it."""
    out = tmp_path_factory.mktemp("plots") / "res"
    return run_experiment(load_config(tiny()), out, progress=False)


@pytest.mark.slow
def test_every_figure_is_written_as_png_pdf_and_svg(results: Path) -> None:
    written = plot_results(results)
    assert [p.name for p in written] == ["regret-tiny.png", "regret-tiny.pdf", "regret-tiny.svg"]
    assert written[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert written[1].read_bytes()[:5] == b"%PDF-"
    assert b"<svg" in written[2].read_bytes()[:1000]
    assert not list(results.glob(".*.tmp"))  # written atomically, nothing left behind


@pytest.mark.slow
def test_the_same_results_give_the_same_vector_files(results: Path) -> None:
    """No dates or random ids in the PDF and SVG: a redraw is byte for byte the same."""
    first = {p.name: p.read_bytes() for p in plot_results(results) if p.suffix != ".png"}
    second = {p.name: p.read_bytes() for p in plot_results(results) if p.suffix != ".png"}
    assert first == second


def test_ten_and_more_labels_get_distinct_colour_and_line_style_pairs() -> None:
    for n in (10, 28):
        labels = [f"algorithm {i}" for i in range(n)]
        look = plotting.styles(labels)
        pairs = {(s.color, s.linestyle) for s in look.values()}
        assert len(pairs) == n
        assert {s.color for s in look.values()} <= set(plotting.OKABE_ITO.values())
    # neighbours differ in both colour and line style: apart in greyscale too
    look = plotting.styles([f"a{i}" for i in range(10)])
    styles = list(look.values())
    for a, b in itertools.pairwise(styles):
        assert a.linestyle != b.linestyle
    # beyond 28 labels the pairs repeat, but every label is still drawn
    assert len(plotting.styles([f"a{i}" for i in range(40)])) == 40


def test_the_paper_colours_are_kept_as_safe_hues() -> None:
    look = plotting.styles(["DP-SE", "Dist-DP-SE", "Dist-RDP-SE(s=10)", "Dist-RDP-SE(s=100)"])
    assert [s.color for s in look.values()] == [
        plotting.OKABE_ITO["black"],
        plotting.OKABE_ITO["blue"],
        plotting.OKABE_ITO["vermillion"],
        plotting.OKABE_ITO["bluish green"],
    ]
    assert len({s.linestyle for s in look.values()}) == 4


def test_band_half_widths_against_numpy_and_scipy() -> None:
    """``se``: sd/sqrt(R) (the papers' ±1 SE); ``ci95``: t_{0.975, R-1} sd/sqrt(R)."""
    rng = np.random.default_rng(3)
    values = rng.normal(size=(7, 50))
    sd = np.std(values, axis=0, ddof=1)
    se = plotting.band_half_width(values, "se")
    ci = plotting.band_half_width(values, "ci95")
    assert se is not None
    assert ci is not None
    np.testing.assert_allclose(se, sd / math.sqrt(7), rtol=1e-12)
    np.testing.assert_allclose(ci, stats.t.ppf(0.975, 6) * sd / math.sqrt(7), rtol=1e-12)
    # a known curve: repetitions 0, 1, 2, 3 at every point: sd = sqrt(5/3), R = 4
    known = np.tile(np.arange(4.0)[:, None], (1, 3))
    half = plotting.band_half_width(known, "se")
    assert half is not None
    np.testing.assert_allclose(half, math.sqrt(5 / 3) / 2)
    assert plotting.band_half_width(values[:1], "se") is None  # one repetition: no band
    with pytest.raises(ConfigError):
        plotting.band_half_width(values, "sd")


@pytest.mark.slow
def test_the_drawn_band_is_the_chosen_one(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The polygon filled around a curve spans mean ± band_half_width (checked on its vertices)."""
    from matplotlib.axes import Axes

    fills: list[Any] = []
    original = Axes.fill_between

    def spy(self: Axes, *args: Any, **kwargs: Any) -> Any:
        poly = original(self, *args, **kwargs)
        fills.append(poly)
        return poly

    monkeypatch.setattr(Axes, "fill_between", spy)
    plot_results(results, bands="se")
    rows = json.loads((results / "summary.json").read_text())["results"]
    assert len(fills) == len(rows) + 1  # a band per curve; the non-private SE is in both ε's subplots
    from learners.results import read_curves

    curve = read_curves(results / "regret.csv")[0]
    average = curve.pseudo / curve.rounds
    mean = average.mean(axis=0)
    half = np.std(average, axis=0, ddof=1) / math.sqrt(average.shape[0])
    spans: dict[float, list[float]] = {}
    for x, y in fills[0].get_paths()[0].vertices:
        spans.setdefault(float(x), []).append(float(y))
    for t, m, h in zip(curve.rounds.tolist(), mean, half, strict=True):
        assert min(spans[t]) == pytest.approx(m - h, abs=1e-12)
        assert max(spans[t]) == pytest.approx(m + h, abs=1e-12)


@pytest.mark.slow
def test_bands_come_from_the_config_unless_overridden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run_experiment(load_config(tiny(bands="se")), tmp_path / "res", progress=False)
    assert 'bands = "se"' in (out / "config.toml").read_text()
    seen: list[str] = []
    real = plotting.band_half_width

    def spy(values: Any, bands: str) -> Any:
        seen.append(bands)
        return real(values, bands)

    monkeypatch.setattr(plotting, "band_half_width", spy)
    plot_results(out)
    assert set(seen) == {"se"}
    seen.clear()
    plot_results(out, bands="ci95")
    assert set(seen) == {"ci95"}
    with pytest.raises(ParameterError) as info:
        plot_results(out, bands="sd")
    assert info.value.name == "bands"


def test_bands_is_validated_and_kept_out_of_the_fingerprint() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tiny(bands="sd"))
    assert info.value.name == "bands"
    assert '"ci95"' in str(info.value)
    assert '"se"' in str(info.value)
    with pytest.raises(ConfigError) as info:
        load_config(tiny(bands=1))
    assert info.value.name == "bands"
    default, se = load_config(tiny()), load_config(tiny(bands="se"))
    assert (default.bands, se.bands) == ("ci95", "se")
    assert default.fingerprint == se.fingerprint  # plots only: the same results folder
    assert se.to_dict()["bands"] == "se"


def test_bands_round_trips_through_the_resolved_config(tmp_path: Path) -> None:
    path = tmp_path / "resolved.toml"
    path.write_text(load_config(tiny(bands="se")).to_toml())
    assert load_config(path).bands == "se"


@pytest.mark.slow
def test_bad_bands_option_exits_2_naming_it(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["plot", str(results), "--bands", "sd"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --bands: invalid choice: 'sd'" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["plot", str(results), "--bands", "se"]) == 0


def test_legend_text_of_the_exact_and_claimed_guarantees() -> None:
    privacy = {
        "exact": {"epsilon": 2.2371, "delta": 1e-6, "route": "pld", "ledgers": 3},
        "claimed": {"epsilon": 2.4189, "delta": 1e-6, "statement": "Theorem 2", "holds": True},
    }
    assert plotting.privacy_text(privacy) == "exact ε=2.24 (claimed 2.42), δ=1e-6"
    pure = {"exact": {"epsilon": 0.5, "delta": 0.0}, "claimed": {"epsilon": 0.5, "holds": True}}
    assert plotting.privacy_text(pure) == "exact ε=0.5 (claimed 0.5)"
    failing = {"exact": {"epsilon": 3.0, "delta": 1e-6}, "claimed": {"epsilon": 2.0, "holds": False}}
    assert plotting.privacy_text(failing) == "exact ε=3 (claimed 2, does not hold), δ=1e-6"
    assert plotting.privacy_text({"exact": {"epsilon": "inf", "delta": 0}}) == "exact ε=∞"
    no_claim = {"exact": {"epsilon": 1.5, "delta": 1e-6}, "claimed": {"epsilon": None, "holds": False}}
    assert plotting.privacy_text(no_claim) == "exact ε=1.5 (no claim: hypotheses fail), δ=1e-6"
    assert plotting.privacy_text({"epsilon": 0.5, "delta": 0.0}) is None  # an older folder


@pytest.mark.slow
def test_legends_show_the_guarantees_when_summary_has_them(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.axes import Axes

    summary = results / "summary.json"
    original_text = summary.read_text()
    data = json.loads(original_text)
    older = copy.deepcopy(data)
    for entry in older["results"]:  # a folder of an older version: no claimed/exact guarantees
        entry["privacy"].pop("claimed", None)
        entry["privacy"].pop("exact", None)
    # hand-made guarantees: without the run's record of its ledgers (which would refuse them,
    # tests/test_ledger_integrity.py), as in a folder of an older version
    data.pop(RUN_DIGESTS)
    for entry in data["results"]:
        if entry["epsilon"] is not None:
            entry["privacy"]["exact"] = {"epsilon": 2.2371, "delta": 1e-6, "route": "pld", "ledgers": []}
            entry["privacy"]["claimed"] = {"epsilon": 2.4189, "delta": 1e-6, "statement": "", "holds": True}
    labels: list[str] = []
    original = Axes.legend

    def spy(self: Axes, *args: Any, **kwargs: Any) -> Any:
        labels.extend(self.get_legend_handles_labels()[1])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Axes, "legend", spy)
    try:
        summary.write_text(json.dumps(data))
        with pytest.warns(UserWarning, match="records no ledger digests"):
            plot_results(results)
        assert "Dist-RDP-SE(s=10): exact ε=2.24 (claimed 2.42), δ=1e-6" in labels
        assert "SE" in labels  # the non-private algorithm: its label alone
        labels.clear()
        summary.write_text(json.dumps(older))
        plot_results(results)
        assert sorted(set(labels)) == ["DP-SE", "Dist-RDP-SE(s=10)", "SE"]
    finally:
        summary.write_text(original_text)


def _mslr_config(path: Path, **instance: Any) -> Path:
    config = tiny(
        instance={"kind": "mslr", "clusters": 4, **instance},
        epsilons=[1.0],
        algorithms=[{"name": "dist-dp-se", "params": {"growth": 2}}],
    )
    path.write_text(_dump_toml(config))
    return path


@pytest.mark.slow
def test_a_stand_in_panel_is_noted_on_stderr_and_in_the_caption(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _mslr_config(tmp_path / "real.toml")
    out_dir = tmp_path / "res"
    assert main(["run", str(config), "--out", str(out_dir), "--no-progress"]) == 0
    err = capsys.readouterr().err
    note = [line for line in err.splitlines() if "stand-in" in line]
    assert len(note) == 1
    assert "not MSLR-WEB10K" in note[0]
    assert 'add path = "..." (a local MSLR-WEB10K-format file) to instance' in note[0]
    caption = json.loads((out_dir / "summary.json").read_text())["panels"][0]["caption"]
    assert "stand-in" in caption


@pytest.mark.slow
def test_no_stand_in_note_for_synthetic_instances(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(_dump_toml(tiny()))
    assert main(["run", str(path), "--out", str(tmp_path / "res"), "--no-progress"]) == 0
    assert "stand-in" not in capsys.readouterr().err


def test_reproduce_notes_the_stand_in_before_running(capsys: pytest.CaptureFixture[str]) -> None:
    """figure1's panels d-f: the note says how to copy the shipped config and give the file."""
    from learners import cli
    from learners.experiment import shipped_configs

    config = load_config(shipped_configs()["figure1"], quick=True)
    cli._note_stand_in(config, "figure1")
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "panel(s) d, e, f" in err
    assert "dp-regret show figure1 > figure1.toml" in err
    assert "panels[3].instance, panels[4].instance, panels[5].instance" in err


# ------------------------------------------------------------------------------------------
# x_axis = "epsilon": a panel plotted against ε
# ------------------------------------------------------------------------------------------


def test_x_axis_is_validated_and_kept_out_of_the_fingerprint(tmp_path: Path) -> None:
    for bad in ("eps", 1):
        with pytest.raises(ConfigError) as info:
            load_config(tiny(x_axis=bad))
        assert info.value.name == "x_axis"
    non_private = tiny(x_axis="epsilon", algorithms=[{"name": "se"}])
    with pytest.raises(ConfigError, match="no algorithm of the config is private") as info:
        load_config(non_private)
    assert info.value.name == "x_axis"
    panel = tiny(panels=[{"name": "p", "x_axis": "sideways"}])
    with pytest.raises(ConfigError) as info:
        load_config(panel)
    assert info.value.name == "panels[0].x_axis"
    default, by_eps = load_config(tiny()), load_config(tiny(x_axis="epsilon"))
    assert by_eps.panels[0].x_axis == "epsilon"
    assert default.fingerprint == by_eps.fingerprint  # plots only: the same results folder
    path = tmp_path / "resolved.toml"
    path.write_text(by_eps.to_toml())
    assert load_config(path).panels[0].x_axis == "epsilon"
    assert "x_axis" not in default.to_dict()["panels"][0]  # older resolved configs are unchanged


@pytest.mark.slow
def test_a_panel_against_epsilon_plots_the_final_regret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each private algorithm's line is the mean final regret Reg(T) at each ε (read back from
    regret.csv by hand), the non-private one a horizontal line at its own mean."""
    out = run_experiment(load_config(tiny(x_axis="epsilon")), tmp_path / "res", progress=False)
    figures: list[Any] = []

    def save(fig: Any, path: Path) -> list[Path]:
        figures.append(fig)
        return [path]

    monkeypatch.setattr(plotting, "_save", save)
    plot_results(out)
    (fig,) = figures
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    final: dict[tuple[str, str], list[float]] = {}
    rows = list(csv.DictReader((out / "regret.csv").open()))
    last = max(int(r["round"]) for r in rows)
    for r in rows:
        if int(r["round"]) == last:
            final.setdefault((r["label"], r["epsilon"]), []).append(float(r["pseudo_regret"]))
    lines = {line.get_label(): line for line in ax.get_lines()}
    for label in ("DP-SE", "Dist-RDP-SE(s=10)"):
        line = lines[label]
        np.testing.assert_allclose(line.get_xdata(), [0.5, 1.0])
        expected = [np.mean(final[(label, e)]) for e in ("0.5", "1.0")]
        np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-12)
    (se,) = [v for (a, _), v in final.items() if a == "SE"]
    np.testing.assert_allclose(lines["SE"].get_ydata(), [np.mean(se)] * 2, rtol=1e-12)
