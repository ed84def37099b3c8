"""The ``dp-regret`` command line: list, run, reproduce, plot; exit codes and messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from learners.cli import main
from learners.config import _dump_toml
from learners.experiment import CSV_COLUMNS
from tests.learners.test_experiment import tiny


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(_dump_toml(tiny()))
    return path


@pytest.mark.slow
def test_list_shows_every_shipped_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for i in range(1, 6):
        assert any(line.startswith(f"figure{i} ") and f"  Figure {i}" in line for line in lines)
    for panel in ("2a", "2b", "2c", "3a", "3b", "3c", "3d"):
        assert any(line.startswith(f"fedlcb-figure{panel}  Zhou & Chowdhury") for line in lines), panel


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_plot_redraws_the_pngs(config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "res"
    main(["run", str(config_file), "--out", str(out_dir), "--no-progress"])
    (out_dir / "regret-tiny.png").unlink()
    capsys.readouterr()
    assert main(["plot", str(out_dir)]) == 0
    written = capsys.readouterr().out.split()
    assert written == [str(out_dir / f"regret-tiny.{fmt}") for fmt in ("png", "pdf", "svg")]
    assert (out_dir / "regret-tiny.png").stat().st_size > 0
    for fmt in ("png", "pdf", "svg"):
        (out_dir / f"regret-tiny.{fmt}").unlink()
    assert main(["plot", str(out_dir), "--formats", "svg", "png", "svg"]) == 0
    assert capsys.readouterr().out.split() == [str(out_dir / f"regret-tiny.{fmt}") for fmt in ("svg", "png")]
    assert not (out_dir / "regret-tiny.pdf").exists()


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


@pytest.mark.slow
def test_a_folder_of_another_config_exits_2(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "res"
    assert main(["run", str(config_file), "--out", str(out_dir), "--no-progress"]) == 0
    other = tmp_path / "other.toml"
    other.write_text(_dump_toml(tiny(seed=99)))
    assert main(["run", str(other), "--out", str(out_dir), "--no-progress"]) == 2
    assert "--out=" in capsys.readouterr().err
    assert main(["run", str(other), "--out", str(out_dir), "--no-progress", "--force"]) == 0


@pytest.mark.slow
def test_python_dash_m_learners() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "learners", "list"], capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert "figure1" in done.stdout


def _fails_in_one_line(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    return err


def test_out_below_a_file_or_a_file_exits_2(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    _fails_in_one_line(
        ["run", str(config_file), "--out", str(blocker / "sub"), "--no-progress"], capsys, "--out"
    )
    _fails_in_one_line(["run", str(config_file), "--out", str(blocker), "--no-progress"], capsys, "--out")
    assert blocker.read_text() == "x"


@pytest.mark.slow
def test_a_locked_folder_names_its_holder(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs on one --out: the second is refused at once, naming the run that holds the lock."""
    from learners.runner import _FolderLock

    out_dir = tmp_path / "res"
    out_dir.mkdir()
    with _FolderLock(out_dir):
        _fails_in_one_line(
            ["run", str(config_file), "--out", str(out_dir), "--no-progress"],
            capsys,
            "locked by dp-regret pid",
        )
    assert main(["run", str(config_file), "--out", str(out_dir), "--no-progress"]) == 0  # released


@pytest.mark.slow
def test_a_second_process_on_the_same_folder_is_refused(config_file: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "res"
    code = (
        "import sys, time; from pathlib import Path; from learners.runner import _FolderLock\n"
        f"with _FolderLock(Path({str(out_dir)!r})):\n"
        "    print('locked', flush=True); time.sleep(3600)\n"  # killed below, however slow the run
    )
    out_dir.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "learners",
                "run",
                str(config_file),
                "--out",
                str(out_dir),
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            timeout=600,  # a hang guard, not a speed target
            check=False,
        )
        assert done.returncode == 2
        assert f"pid {holder.pid}" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
def test_checkpoints_edited_or_replaced_are_refused(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import numpy as np

    out_dir = tmp_path / "res"
    assert main(["run", str(config_file), "--out", str(out_dir), "--no-progress"]) == 0
    capsys.readouterr()
    unit = sorted((out_dir / "units").glob("*.npz"))[0]
    with np.load(unit) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["pseudo"] = arrays["pseudo"] * 0.5  # a hand edit: regret halved, hash kept
    with unit.open("wb") as f:
        np.savez(f, **arrays)
    _fails_in_one_line(
        ["run", str(config_file), "--out", str(out_dir), "--no-progress"], capsys, unit.name, "hash"
    )
    unit.unlink()
    unit.mkdir()  # a checkpoint replaced by a directory
    _fails_in_one_line(["run", str(config_file), "--out", str(out_dir), "--no-progress"], capsys, unit.name)
    unit.rmdir()
    assert main(["run", str(config_file), "--out", str(out_dir), "--no-progress"]) == 0  # recomputed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("regret.csv", "garbage\n", "header"),
        ("regret.csv", ",".join(CSV_COLUMNS) + "\np,a,l,0.5,0,1\n", "fields"),
        ("regret.csv", ",".join(CSV_COLUMNS) + "\np,a,l,0.5,zero,1,0.1,0.1\n", "line 2"),
        ("regret.csv", ",".join(CSV_COLUMNS) + "\np,a,l,0.5,0,0,0.1,0.1\n", "round < 1"),
        ("regret.csv", ",".join(CSV_COLUMNS) + "\np,a,l,0.5,0,1,nan,0.1\n", "non-finite"),
        ("regret.csv", ",".join(CSV_COLUMNS) + "\np,a,l,,0,1,0.1,0.1\np,a,l,,1,2,0.1,0.1\n", "checkpoints"),
        ("summary.json", "{not json", "summary.json"),
        ("summary.json", '{"panels": [{"name": "p"}]}', "summary.json"),
        ("summary.json", '{"name": "a", "name": "b"}', "twice"),
    ],
)
def test_plot_of_malformed_files_exits_2(
    name: str, text: str, needle: str, config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "res"
    assert main(["run", str(config_file), "--out", str(out_dir), "--no-progress"]) == 0
    capsys.readouterr()
    (out_dir / name).write_text(text)
    _fails_in_one_line(["plot", str(out_dir)], capsys, "results=", needle)


def test_unreadable_config_and_read_only_folders_exit_2(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Permission errors (simulated: the tests may run as root, who reads everything)."""
    real_open = os.open

    def refuse_config(path: Any, *args: Any, **kwargs: Any) -> int:
        if Path(path) == config_file:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(os, "open", refuse_config)
        _fails_in_one_line(
            ["run", str(config_file), "--out", str(tmp_path / "r")], capsys, "Permission denied"
        )

    real_mkdir = Path.mkdir

    def refuse_mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if tmp_path / "ro" in (self, *self.parents):
            raise PermissionError(13, "Permission denied", str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(Path, "mkdir", refuse_mkdir)
        _fails_in_one_line(
            ["run", str(config_file), "--out", str(tmp_path / "ro" / "out"), "--no-progress"],
            capsys,
            "--out",
            "Permission denied",
        )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"dp-regret {metadata.version('dpcert')}"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ('name = "dist-rdp-se"\nparams = { scaling = 1e15 }', "algorithms[0].params.scaling"),
        ('name = "dist-cdp-se"\nparams = { scaling = 1e300 }', "algorithms[0].params.scaling"),
        ('name = "dist-dp-se"\nparams = { p_tau = 0.0 }', "algorithms[0].params.p_tau"),
    ],
)
def test_settings_the_protocol_cannot_take_are_config_errors(
    params: str, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checked with the config, before anything is written (they used to fail mid-run)."""
    path = tmp_path / "p.toml"
    path.write_text(
        HEAD + 'epsilons = [1.0]\n[instance]\nkind = "gaussian-easy"\n[[algorithms]]\n' + params + "\n"
    )
    out_dir = tmp_path / "res"
    _fails_in_one_line(["run", str(path), "--out", str(out_dir), "--no-progress"], capsys, field)
    assert not out_dir.exists()


def test_the_windows_lock_path_with_a_stand_in_msvcrt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The msvcrt branch of the folder lock (CI runs on Linux): a stand-in module with the
    semantics of ``msvcrt.locking`` (a byte locked by one handle refuses another with EACCES)."""
    import os
    import types

    from learners.errors import ParameterError
    from learners.runner import _FolderLock

    held: dict[tuple[int, int], int] = {}

    def locking(fd: int, mode: int, nbytes: int) -> None:
        key = (os.fstat(fd).st_ino, os.lseek(fd, 0, os.SEEK_CUR))
        if mode == fake.LK_NBLCK:
            if key in held:
                raise PermissionError(13, "Permission denied")
            held[key] = fd
        else:
            assert held.pop(key) == fd

    fake = types.SimpleNamespace(LK_NBLCK=2, LK_UNLCK=0, locking=locking)
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.setattr(sys, "platform", "win32")
    out_dir = tmp_path / "res"
    out_dir.mkdir()
    with _FolderLock(out_dir) as lock:
        assert held
        assert "dp-regret pid" in lock.path.read_text()
        with pytest.raises(ParameterError, match="locked by dp-regret pid"):
            _FolderLock(out_dir).__enter__()
    assert not held
    assert not (out_dir / ".dp-regret.lock").exists()
    with _FolderLock(out_dir):  # released: taken again
        assert held


# ---------------------------------------------------------------------------------------
# The README's steps and its config reference (issue 15 §4)
# ---------------------------------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_config_reference_names_every_key_the_validator_accepts() -> None:
    """Generated-checked: a key added to learners/config.py (or a learner's keyword added to
    make_learner) without a line in the README's reference fails here."""
    import learners.config as config_module
    from learners import linear, mab
    from learners.families import FAMILIES

    section = _readme_section("Experiment config reference")
    keys = set(config_module._TOP_KEYS) | set(config_module._PANEL_KEYS)
    keys |= set(config_module._ALGORITHM_KEYS) | set(config_module._QUICK_KEYS)
    for family in FAMILIES.values():
        assert f"`{family.name}`" in section, family.name
        for kind, instance_keys in family.instance_keys.items():
            keys |= set(instance_keys)
            assert f"`{kind}`" in section, kind
        keys |= set(family.params)
        for name in family.algorithms:
            assert f"`{name}`" in section, name
    # the params of each family's make_learner, from the learners themselves
    for module in (mab, linear):
        assert set(module.Learner.__dataclass_fields__) - {"name", "epsilon"} <= keys
    missing = sorted(key for key in keys if f"`{key}`" not in section)
    assert not missing, f"keys missing from the README's config reference: {missing}"
    for bands in config_module.BANDS:
        assert f"`{bands}`" in section, bands


@pytest.mark.slow
def test_the_readme_steps_of_dp_regret_work_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dp-regret show figure2 > my-experiment.toml`, then `dp-regret run my-experiment.toml --out
    results/mine` (here with --quick and a smaller [quick], for time) and `dp-regret plot`."""
    section = _readme_section("`dp-regret` (also `python -m learners`)")
    assert "dp-regret show figure2 > my-experiment.toml" in section
    assert "dp-regret run my-experiment.toml --out results/mine" in section
    monkeypatch.chdir(tmp_path)
    assert main(["show", "figure2"]) == 0
    text = capsys.readouterr().out
    assert text == (Path(__file__).resolve().parents[2] / "learners/configs/figure2.toml").read_text()
    # a user's edit, for time: a smaller [quick], one ε, the two pure-DP algorithms (whose exact
    # guarantee is instant)
    text = text.replace("horizon = 100_000", "horizon = 5_000").replace("repetitions = 4", "repetitions = 2")
    text = text.replace("epsilons = [0.1, 0.5, 1.0]", "epsilons = [1.0]")
    head, rdp = text.split('[[algorithms]]\nname = "dist-rdp-se"', 1)
    Path("my-experiment.toml").write_text(head + "[quick]" + rdp.split("[quick]")[1])
    args = ["run", "my-experiment.toml", "--out", "results/mine", "--quick", "--no-progress"]
    assert main(args) == 0
    assert Path("results/mine/regret-figure2.png").is_file()
    assert not Path("results/mine/regret-figure2.pdf").exists()  # a quick run draws PNG only
    capsys.readouterr()
    assert main(["plot", "results/mine", "--bands", "se"]) == 0
    assert "results/mine/regret-figure2.svg" in capsys.readouterr().out
    assert Path("results/mine/regret-figure2.pdf").is_file()


def test_a_missing_config_says_how_to_start_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "my-experiment.toml"
    err = _fails_in_one_line(["run", str(missing), "--out", str(tmp_path / "r")], capsys, "config=")
    assert f"dp-regret show figure2 > {missing}" in err


def test_run_of_a_shipped_name_points_to_reproduce(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no file of that name here
    err = _fails_in_one_line(["run", "fedlcb-figure2a", "--out", str(tmp_path / "r")], capsys, "config=")
    assert "dp-regret reproduce fedlcb-figure2a" in err
