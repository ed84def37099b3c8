"""The ``dp-regret`` command line: list, run, reproduce, plot; exit codes and messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from learners.cli import main
from learners.experiment import _dump_toml
from tests.learners.test_experiment import tiny


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(_dump_toml(tiny()))
    return path


def test_list_shows_every_shipped_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for i in range(1, 6):
        assert f"figure{i}  Figure {i}" in out


def test_run_writes_results_and_says_where(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "res"
    assert main(["run", str(config_file), "--out", str(out_dir), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"results: {out_dir}" in out
    assert str(out_dir / "regret-tiny.png") in out
    assert "tiny: 10 unit(s) computed" in out
    for shown in ("DP-SE", "ε=0.5", "non-private"):
        assert shown in out
    for name in ("regret.csv", "summary.json", "config.toml", "versions.json", "regret-tiny.png"):
        assert (out_dir / name).is_file()

    # a second run finds everything finished
    assert main(["run", str(config_file), "--out", str(out_dir), "--no-progress"]) == 0
    assert "tiny: 0 unit(s) computed, 10 found finished" in capsys.readouterr().out


def test_run_quick_defaults_to_results_name_quick(
    config_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(config_file), "--quick", "--no-progress", "--workers", "2"]) == 0
    assert (tmp_path / "results" / "tiny-quick" / "regret.csv").is_file()
    assert "T=1000, R=2" in capsys.readouterr().out


def test_reproduce_quick_runs_a_shipped_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "figure2", "--quick", "--no-progress"]) == 0
    out_dir = Path("results") / "figure2-quick"
    assert (tmp_path / out_dir / "regret-figure2.png").is_file()
    out = capsys.readouterr().out
    assert f"results: {out_dir}" in out
    assert "Dist-RDP-SE(s=100)" in out


def test_plot_redraws_the_pngs(config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "res"
    main(["run", str(config_file), "--out", str(out_dir), "--no-progress"])
    (out_dir / "regret-tiny.png").unlink()
    capsys.readouterr()
    assert main(["plot", str(out_dir)]) == 0
    assert capsys.readouterr().out.strip() == str(out_dir / "regret-tiny.png")
    assert (out_dir / "regret-tiny.png").stat().st_size > 0


HEAD = 'name = "x"\nseed = 1\nrepetitions = 1\nhorizon = 100\n'
DP_SE = '[[algorithms]]\nname = "dp-se"\n'


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (HEAD + 'epsilons = [0.5]\n[instance]\nkind = "gaussian-easy"\n[[algorithms]]\nname = "dp-sx"\n',
         "algorithms[0].name"),
        (HEAD + 'epsilons = [0.5, 0]\n[instance]\nkind = "gaussian-easy"\n' + DP_SE, "epsilons[1]"),
        (HEAD + 'epsilons = [0.5]\n[instance]\nkind = "mslr"\npath = "missing.txt"\n' + DP_SE,
         "instance.path"),
        ('name = "x"\nseeds = 1\n', "seeds"),
        ('name = "x\n', "config"),
    ],
)  # fmt: skip
def test_bad_config_exits_2_naming_the_field_and_writes_nothing(
    text: str, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out_dir = tmp_path / "res"
    assert main(["run", str(path), "--out", str(out_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dp-regret: error: {path}: {field}")
    assert len(err.strip().splitlines()) == 1
    assert not out_dir.exists()


def test_bad_options_exit_2(config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "res"
    with pytest.raises(SystemExit) as info:
        main(["run", str(config_file), "--out", str(out_dir), "--workers", "0"])
    assert info.value.code == 2
    assert "--workers" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["reproduce", "figure9"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.toml"), "--out", str(out_dir)]) == 2
    assert "config=" in capsys.readouterr().err
    assert main(["plot", str(tmp_path)]) == 2
    assert "results=" in capsys.readouterr().err
    assert not out_dir.exists()


def test_a_folder_of_another_config_exits_2(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "res"
    assert main(["run", str(config_file), "--out", str(out_dir), "--no-progress"]) == 0
    other = tmp_path / "other.toml"
    other.write_text(_dump_toml(tiny(seed=99)))
    assert main(["run", str(other), "--out", str(out_dir), "--no-progress"]) == 2
    assert "out_dir" in capsys.readouterr().err
    assert main(["run", str(other), "--out", str(out_dir), "--no-progress", "--force"]) == 0


def test_python_dash_m_learners() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "learners", "list"], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "figure1" in done.stdout
