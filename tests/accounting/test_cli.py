"""The ``dp-account`` command line: the demo table, its JSON, and errors."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shlex
import subprocess
import sys

import pytest

from accounting.cli import demo_rows, main


def test_demo_rows_exact_never_above_published() -> None:
    """Every published route is an upper bound, so the exact ε must not exceed it."""
    rows = demo_rows([1.0], 1e-6, users=4, dps=15)
    assert len(rows) == 4
    for row in rows:
        assert 0 < row.exact_epsilon <= row.bound_epsilon
        assert row.exact_digits >= 15


def test_demo_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--epsilons", "2", "--delta", "1e-5", "--dps", "15", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["delta"] == 1e-5
    assert {r["noise"].split("(")[0] for r in data["rows"]} >= {"DiscreteLaplace", "Skellam"}
    for r in data["rows"]:
        assert r["exact_epsilon"] <= r["bound_epsilon"]


def test_demo_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--epsilons", "0.5", "--dps", "15"]) == 0
    out = capsys.readouterr().out
    assert "Skellam(variance=" in out
    assert "certified to at least" in out


@pytest.mark.parametrize(
    "bad", [["demo", "--delta", "0"], ["demo", "--delta", "2"], ["demo", "--epsilons", "nan"]]
)
def test_bad_arguments_exit_with_a_message(bad: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(bad)
    assert err.value.code == 2
    err_text = capsys.readouterr().err
    assert f"argument {bad[1]}" in err_text
    assert "is invalid: expected" in err_text


def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "accounting", "demo", "--epsilons", "5", "--dps", "15", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["rows"]


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, object]:
    assert main([*argv, "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_issue_examples_epsilon(capsys: pytest.CaptureFixture[str]) -> None:
    """The `dp-account epsilon` examples of issue 3 work as written."""
    sk = _json(capsys, shlex.split("epsilon --noise skellam --variance 100 --sensitivity 1 --delta 1e-5"))
    assert sk["route"] == "pld"
    assert sk["epsilon"] == pytest.approx(0.3360744278278553, rel=1e-12)
    dg = _json(capsys, shlex.split("epsilon --noise discrete-gaussian --sigma 2 --users 10 --delta 1e-5"))
    assert dg["total_noise"] == {"type": "SumOfDiscreteGaussians", "sigma": 2.0, "count": 10}
    assert dg["epsilon_lower"] <= dg["epsilon"]  # type: ignore[operator]
    g = _json(
        capsys, shlex.split("epsilon --noise gaussian --sigma 1 --compositions 1000 --delta 1e-5 --route rdp")
    )
    assert g["route"] == "rdp"
    assert g["epsilon"] == pytest.approx(648.78198593, rel=1e-9)
    assert g["dps"] == 20


def test_issue_examples_calibrate_and_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    cal = _json(capsys, shlex.split("calibrate --noise skellam --epsilon 1 --delta 1e-6 --users 4096"))
    assert cal["parameter"] == "variance"
    assert cal["epsilon_certified"] <= 1  # type: ignore[operator]
    assert cal["share"]["type"] == "Skellam"  # type: ignore[index]
    proto = _json(
        capsys, shlex.split("protocol --theorem 2 --epsilon 1 --users 1024 --horizon 1000000 --scale 10")
    )
    assert (proto["g"], proto["tau"], proto["m"], proto["bits_per_user"]) == (320, 2459, 332599, 19)


def test_delta_and_rdp_commands(capsys: pytest.CaptureFixture[str]) -> None:
    d = _json(capsys, shlex.split("delta --noise discrete-laplace --scale 10 --epsilon 0.05"))
    assert 0 < d["delta"] < 1  # type: ignore[operator]
    r = _json(capsys, shlex.split("rdp --noise discrete-laplace --scale 10 --alpha 2 inf"))
    assert r["rdp"]["inf"] == pytest.approx(0.1, rel=1e-12)  # type: ignore[index]
    assert r["rdp"]["2.0"] < 0.1  # type: ignore[index]
    assert main(shlex.split("epsilon --noise polya --beta 0.9 --users 4 --sensitivity 2 --delta 1e-6")) == 0
    assert "total noise of 4 users" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ("epsilon --noise skellam --delta 1e-5", "--variance"),
        ("epsilon --noise skellam --variance 0 --delta 1e-5", "--variance"),
        ("epsilon --noise skellam --variance 10 --delta 1e-5 --sensitivity 1.5", "sensitivity"),
        ("calibrate --noise laplace --epsilon 1 --delta 1e-6 --users 3", "Laplace"),
        ("protocol --theorem 2 --epsilon 1 --users 16 --horizon 100", "scale"),
        ("epsilon --noise cauchy --delta 1e-5", "--noise"),
    ],
)
def test_invalid_input_is_one_line_and_status_2(
    argv: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(shlex.split(argv))
    except SystemExit as err:
        code = int(err.code or 0)
    assert code == 2
    err_text = capsys.readouterr().err.strip()
    assert len(err_text.splitlines()) == 1
    assert needle in err_text
    assert "Traceback" not in err_text


def test_shuffle_protocol_json_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    from accounting.calibration import shuffle_sum_parameters

    argv = "shuffle-protocol --protocol dpdpe-vector --epsilon 2 --delta 1e-5 --users 100000 --dimension 4"
    assert main([*shlex.split(argv), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    par = shuffle_sum_parameters("dpdpe-vector", 2.0, 1e-5, 100_000, 4)
    assert (record["g"], record["b"], record["p"], record["bits_per_user"]) == (par.g, par.b, par.p, par.bits)
    assert record["variance_bound"] == par.variance()
    assert main(shlex.split(argv)) == 0
    assert "one-bit messages" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ("shuffle-protocol --protocol vec --epsilon 1 --delta 1e-6 --users 10", "--protocol"),
        ("shuffle-protocol --protocol cheu-vector --epsilon 16 --delta 1e-6 --users 10", "epsilon"),
        (
            "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 10 --dimension 2",
            "dimension",
        ),
        ("shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 2 --users 10", "--delta"),
    ],
)
def test_shuffle_protocol_bad_input_exits_2(
    argv: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:  # argparse exits for bad syntax; library errors return 2
        code = main(shlex.split(argv))
    except SystemExit as err:
        code = int(err.code or 0)
    assert code == 2
    assert needle in capsys.readouterr().err


def test_neighbouring_relation_option(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14: --neighbouring add-remove changes a distributed sum's answer (the removed share)."""
    base = ["epsilon", "--noise", "skellam", "--variance", "10", "--users", "10", "--delta", "1e-6", "--json"]
    replace = _json(capsys, base)
    add_remove = _json(capsys, [*base, "--neighbouring", "add-remove"])
    assert replace["neighbouring"] == "replace-one"
    assert add_remove["neighbouring"] == "add-remove"
    assert float(replace["epsilon"]) == pytest.approx(0.3895, abs=1e-4)  # type: ignore[arg-type]
    assert float(add_remove["epsilon"]) == pytest.approx(1.4074, abs=1e-4)  # type: ignore[arg-type]


def test_published_route_option(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["epsilon", "--noise", "skellam", "--variance", "100", "--delta", "1e-6", "--json"]
    exact = _json(capsys, base)
    published = _json(capsys, [*base, "--route", "published:skellam-akl"])
    assert published["route"] == "published:skellam-akl"
    assert float(published["epsilon"]) >= float(exact["epsilon"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (
            [
                "epsilon",
                "--noise",
                "gaussian",
                "--sigma",
                "1",
                "--users",
                "4",
                "--delta",
                "1e-5",
                "--neighbouring",
                "add-remove",
            ],
            "add-remove",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--neighbouring", "both"],
            "--neighbouring",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--sampling-rate", "0"],
            "--sampling-rate",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--sampling-rate", "1.5"],
            "--sampling-rate",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--sampling", "fixed"],
            "--sampling",
        ),
        (
            ["epsilon", "--noise", "gaussian", "--sigma", "1", "--delta", "1e-5", "--route", "published:x"],
            "--route",
        ),
    ],
)
def test_relation_and_sampling_errors_exit_2(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as err:
        code = int(err.code or 0)
    assert code == 2
    err_text = capsys.readouterr().err
    assert option in err_text
    assert "Traceback" not in err_text
    assert len(err_text.strip().splitlines()) <= 2


def test_rdp_goes_through_the_ledger(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys,
        ["rdp", "--noise", "gaussian", "--sigma", "2", "--alpha", "2", "10", "--compositions", "3", "--json"],
    )
    assert data["rdp"] == {"2.0": 0.75, "10.0": 3.75}  # 3 × α/(2σ²), exact


def test_ledger_subcommand_reaccounts_a_saved_ledger(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    from accounting import Accountant, DistributedSum, Skellam

    acc = Accountant("add-remove").compose(DistributedSum(Skellam(10), users=10))
    path = tmp_path / "ledger.json"  # type: ignore[operator]
    path.write_text(acc.to_json())
    data = _json(capsys, ["ledger", str(path), "--delta", "1e-6"])
    assert data["epsilon"] == float(acc.epsilon(1e-6))
    assert data["neighbouring"] == "add-remove"
    bad = tmp_path / "bad.json"  # type: ignore[operator]
    bad.write_text(
        '{"format": "dpcert-ledger/1", "neighbouring": "replace-one", "events": [{"count": 0, '
        '"mechanism": {"type": "PureDP", "epsilon": 1, "source": "x"}}]}'
    )
    for argv in (
        ["ledger", str(bad), "--delta", "1e-6"],
        ["ledger", str(path)],
        ["ledger", str(tmp_path / "missing.json"), "--delta", "1e-6"],
    ):  # type: ignore[operator]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "error:" in err
        assert "Traceback" not in err


def _exit_2_one_line(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> None:
    try:
        code = main(argv)
    except SystemExit as err:
        code = int(err.code or 0)
    err_text = capsys.readouterr().err
    assert code == 2, err_text
    assert len(err_text.strip().splitlines()) == 1, err_text
    assert "Traceback" not in err_text
    for needle in needles:
        assert needle in err_text, err_text


def test_a_ledger_edited_by_hand_is_refused(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """A saved ledger carries a hash of its content: a changed σ, ε or count is detected."""
    from accounting import Accountant, AdditiveNoise, Gaussian, PureDP

    acc = Accountant().compose(AdditiveNoise(Gaussian(2.0)), 10).compose(PureDP(0.5, "cited"), 2)
    text = acc.to_json()
    assert '"sha256": "sha256:' in text
    path = tmp_path / "ledger.json"  # type: ignore[operator]
    for old, new in (('"sigma": 2.0', '"sigma": 20.0'), ('"epsilon": 0.5', '"epsilon": 0.05'),
                     ('"count": 10', '"count": 1')):  # fmt: skip
        assert old in text
        path.write_text(text.replace(old, new))
        _exit_2_one_line(["ledger", str(path), "--delta", "1e-6"], capsys, str(path), "sha256", "changed")
    # without the hash (an older ledger, or one written by hand) it is accounted as it stands
    data = json.loads(text)
    del data["sha256"]
    path.write_text(json.dumps(data))
    assert main(["ledger", str(path), "--delta", "1e-6"]) == 0
    assert "epsilon =" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"format": "dpcert-ledger/1", "format": "dpcert-ledger/1", "neighbouring": "replace-one", '
         '"events": []}', "twice"),
        ('{"format": "dpcert-ledger/1", "neighbouring": "replace-one", "events": [], "extra": 1}', "extra"),
        ('{"format": "dpcert-ledger/1", "neighbouring": "replace-one", "events": [{"count": 1e30, '
         '"mechanism": {"type": "PureDP", "epsilon": 1, "source": "x"}}]}', "count"),
        ('{"format": "dpcert-ledger/1", "neighbouring": "replace-one", "events": [{"count": 2.5, '
         '"mechanism": {"type": "PureDP", "epsilon": 1, "source": "x"}}]}', "count"),
        ("[" * 100_000, "JSON"),
        ('{"format": "dpcert-ledger/1", "neighbouring": "replace-one", "events": [{"count": 1, "mechanism": '
         + '{"type": "PoissonSampled", "rate": 0.5, "mechanism": ' * 3000 + "{}" + "}" * 3000 + "}]}",
         "ledger"),
        ("\xff\xfe not utf-8", "UTF-8"),
    ],
)  # fmt: skip
def test_malformed_ledger_files_exit_2(
    text: str, needle: str, tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ledger.json"  # type: ignore[operator]
    if text.startswith("\xff"):
        path.write_bytes(b"\xff\xfe not utf-8")
    else:
        path.write_text(text)
    _exit_2_one_line(["ledger", str(path), "--delta", "1e-6"], capsys, needle)


def test_ledger_loading_never_raises_key_or_recursion_errors() -> None:
    from accounting import Accountant

    deep: dict[str, object] = {}
    for _ in range(5000):
        deep = {"type": "PoissonSampled", "rate": 0.5, "mechanism": deep}
    head = {"format": "dpcert-ledger/1", "neighbouring": "replace-one"}
    gaussian = {"type": "AdditiveNoise", "noise": {"type": "Gaussian"}, "sensitivity": 1}
    skellam = {"type": "AdditiveNoise", "noise": {"type": "Skellam", "mu1": 1}, "sensitivity": 1}
    for data in (
        head | {"events": [{"count": 1, "mechanism": deep}]},
        head | {"events": [{"count": 1, "mechanism": gaussian}]},
        head | {"events": [{"count": 1, "mechanism": skellam}]},
    ):
        with pytest.raises((ValueError, TypeError)) as err:
            Accountant.from_dict(data)
        assert not isinstance(err.value, KeyError | RecursionError)
        assert hasattr(err.value, "name")


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        ("epsilon --noise gaussian --sigma 1e-300 --delta 1e-5", "--sigma"),
        ("epsilon --noise laplace --scale 1e-300 --delta 1e-5", "--scale"),
        ("epsilon --noise discrete-gaussian --sigma 1e-300 --users 10 --delta 1e-5", "--sigma"),
        ("epsilon --noise skellam --variance 1e31 --delta 1e-5", "--variance"),
        ("epsilon --noise skellam --variance 10 --users 1000000000000000000000 --delta 1e-5", "--users"),
        (
            "epsilon --noise gaussian --sigma 1 --compositions 1000000000000000000000 --delta 1e-5",
            "--compositions",
        ),
        ("epsilon --noise discrete-laplace --scale 1 --sensitivity 1e6 --delta 1e-5", "--sensitivity"),
        ("epsilon --noise skellam --variance 1 --compositions 1000000000000 --delta 1e-5", "--compositions"),
        ("calibrate --noise laplace --epsilon 1 --delta 1e-6 --compositions 1000000000000", "--compositions"),
        ("epsilon --noise gaussian --sigma 1 --sensitivity 1e308 --delta 1e-5", "--sensitivity"),
        ("rdp --noise discrete-gaussian --sigma 3 --alpha 1e308", "--alpha"),
        ("rdp --noise gaussian --sigma 1e-99 --alpha 1e300", "--alpha"),
        ("calibrate --noise skellam --epsilon 1 --delta 1e-6 --sensitivity 1e9", "--sensitivity"),
        ("calibrate --noise gaussian --epsilon 1e-320 --delta 1e-6", "--epsilon"),
        ("shuffle --epsilon0 1e-300 --users 100 --delta 1e-6", "--epsilon0"),
        ("protocol --theorem 1 --epsilon 1e-300 --users 1024 --horizon 100", "--epsilon"),
    ],
)
def test_sizes_that_cannot_finish_are_refused_at_once(
    argv: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any work, naming the option (the message gives the limit and the reason)."""
    _exit_2_one_line(shlex.split(argv), capsys, option)


@pytest.mark.slow
def test_counts_beyond_the_pld_limit_take_a_scaling_route(capsys: pytest.CaptureFixture[str]) -> None:
    """10^18 compositions: refused on the exact PLD route, answered at once by the RDP route or, for
    the Gaussian mechanism, by its closed form."""
    big = "1000000000000000000"
    rdp = _json(
        capsys,
        shlex.split(f"epsilon --noise skellam --variance 1 --compositions {big} --delta 1e-5 --route rdp"),
    )
    assert rdp["route"] == "rdp"
    assert 1e17 < float(rdp["epsilon"]) < 1e18  # type: ignore[arg-type]
    gauss = _json(
        capsys, shlex.split(f"epsilon --noise gaussian --sigma 1 --compositions {big} --delta 1e-5")
    )
    assert float(gauss["epsilon"]) == pytest.approx(5e17, rel=1e-6)  # type: ignore[arg-type]


# -- issue 15 §2: --no-progress, and shuffle-protocol's limits --------------------------------


class _Terminal(io.StringIO):
    """A standard error that says it is a terminal, where the progress bar is shown."""

    def isatty(self) -> bool:
        return True


def _on_a_terminal(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), _Terminal()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


#: Commands with a loop to report, on inputs that answer in about a second (a test of the bar, not
#: of the answer: 20 Skellam compositions took 10 s here).
LONG = {
    "epsilon": "epsilon --noise skellam --variance 10 --compositions 3 --delta 1e-5",
    "delta": "delta --noise discrete-laplace --scale 5 --compositions 3 --epsilon 1",
    "rdp": "rdp --noise skellam --variance 10 --compositions 3 --alpha 2",
    "calibrate": "calibrate --noise discrete-laplace --epsilon 1 --delta 1e-6 --compositions 3",
}


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(LONG))
def test_no_progress_hides_the_bar_and_keeps_the_answer(command: str) -> None:
    """On a terminal the bar is drawn on standard error (never on stdout, so --json stays JSON);
    --no-progress draws nothing at all."""
    argv = [*shlex.split(LONG[command]), "--json"]
    code, out, err = _on_a_terminal(argv)
    assert code == 0
    answer = json.loads(out)  # nothing but the JSON on stdout
    if command != "rdp":  # the RDP sum has no long loop to report
        assert "step" in err
    code, quiet_out, quiet_err = _on_a_terminal([*argv, "--no-progress"])
    assert code == 0
    assert quiet_err == ""
    assert json.loads(quiet_out) == answer


def test_no_bar_when_standard_error_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(shlex.split(LONG["epsilon"])) == 0
    assert capsys.readouterr().err == ""


def test_ledger_takes_no_progress(tmp_path: pytest.TempPathFactory) -> None:
    from accounting import Accountant, AdditiveNoise, Skellam

    path = tmp_path / "ledger.json"  # type: ignore[operator]
    path.write_text(Accountant().compose(AdditiveNoise(Skellam(10)), 3).to_json())
    code, out, err = _on_a_terminal(["ledger", str(path), "--delta", "1e-5", "--no-progress"])
    assert (code, err) == (0, "")
    assert "epsilon =" in out


@pytest.mark.parametrize(
    ("option", "value"),
    [("--epsilon", "1e-300"), ("--epsilon", "1e-51"), ("--bound", "1e308"), ("--bound", "1e51"),
     ("--bound", "1e-300")],
)  # fmt: skip
@pytest.mark.parametrize("protocol", ["dpdpe-scalar", "dpdpe-vector", "cheu-vector"])
def test_shuffle_protocol_refuses_sizes_beyond_the_float_range(
    protocol: str, option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused by the option's own check, with the limit and the reason (no generic fallback)."""
    argv = ["shuffle-protocol", "--protocol", protocol, "--epsilon", "1", "--delta", "1e-6", "--users", "10"]
    _exit_2_one_line([*argv, option, value], capsys, option, "float range")
    assert "cannot compute" not in capsys.readouterr().err


def test_shuffle_protocol_at_its_limits_is_finite(capsys: pytest.CaptureFixture[str]) -> None:
    """At the extremes of every option the answer is a finite, positive variance bound."""
    for protocol, bound in (("dpdpe-scalar", "1e50"), ("dpdpe-vector", "1e50"), ("cheu-vector", "1e-50")):
        dimension = "1" if protocol == "dpdpe-scalar" else "1000000000000000000"
        record = _json(
            capsys,
            ["shuffle-protocol", "--protocol", protocol, "--epsilon", "1e-50", "--bound", bound,
             "--delta", "5e-324", "--users", "1000000000000000000", "--dimension", dimension],
        )  # fmt: skip
        assert 0 < float(record["variance_bound"]) < math.inf  # type: ignore[arg-type]
        assert 0 < float(record["p"]) <= 0.5  # type: ignore[arg-type]


# -- issue 15 §2: calibrate reports one unit per family, total and per user -----------------

UNITS = {
    "gaussian": "sigma",
    "laplace": "scale",
    "discrete-laplace": "scale",
    "discrete-gaussian": "sigma",
    "skellam": "variance",
}


@pytest.mark.slow
@pytest.mark.parametrize(("family", "users"), [(f, 1 if f == "laplace" else 4) for f in UNITS])
def test_calibrate_reports_total_and_per_user_in_one_unit(
    family: str, users: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from accounting.calibration import calibrate

    argv = ["calibrate", "--noise", family, "--epsilon", "1", "--delta", "1e-6", "--users", str(users)]
    data = _json(capsys, argv)
    noise = data["noise"]
    assert isinstance(noise, dict)
    assert set(noise) == {"unit", "total", "per_user", "users", "calibrated", "combine"}
    unit, total, per_user = noise["unit"], noise["total"], noise["per_user"]
    assert unit == UNITS[family] == data["parameter"]
    assert data[unit] == total
    assert noise["users"] == users
    assert isinstance(total, float)
    assert isinstance(per_user, float)
    cal = calibrate(family, 1.0, 1e-6, users=users)  # the library's defaults, precision included
    calibrated = noise["calibrated"]
    assert calibrated == ("per_user" if family == "discrete-gaussian" else "total")
    assert noise[calibrated] == cal.value
    # the users' shares make the total (each derived value rounded toward more noise)
    if unit == "sigma":  # σ² adds
        assert total**2 == pytest.approx(users * per_user**2, rel=1e-14)
        derived_up = users * per_user**2 if calibrated == "total" else total**2  # the derived side
        assert derived_up >= (users * per_user**2 + total**2) / 2 * (1 - 1e-15)
    elif unit == "variance":  # variances add
        assert users * per_user == pytest.approx(total, rel=1e-15)
        assert per_user >= total / users
    elif family == "discrete-laplace":  # the same scale in every share, shapes 1/users add to 1
        assert per_user == total
        share = data["share"]
        assert isinstance(share, dict)
        assert share["type"] == "Polya"
        assert "exp(-1/scale)" in str(noise["combine"])
    else:
        assert per_user == total
    # the text says the same, in decimals
    assert main(argv) == 0
    text = capsys.readouterr().out
    head = text.splitlines()[0]
    assert head.startswith(f"{family}: {unit} = {total!r}")
    if users > 1:
        assert f"{per_user!r} per user" in head
        assert f"each of {users} users adds" in text
    assert "Fraction" not in text
    assert "mpf" not in text


def test_distributed_totals_are_printed_in_decimals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(shlex.split("epsilon --noise skellam --variance 0.1 --users 3 --delta 1e-5")) == 0
    text = capsys.readouterr().out
    assert "total noise of 3 users: Skellam(variance=0.30000000000000004)" in text
    assert "Fraction" not in text


@pytest.mark.slow
def test_calibrate_stops_at_max_evaluations(capsys: pytest.CaptureFixture[str]) -> None:
    """--max-evaluations: the search stops refining once that many levels are accounted and one
    meets the target; the answer is certified, the output gives the bracket of the least noise, and
    the same command prints the same bytes again."""
    argv = ["calibrate", "--noise", "skellam", "--epsilon", "1", "--delta", "1e-6", "--compositions", "10"]
    full = _json(capsys, [*argv, "--no-progress"])
    assert full["converged"] is True
    assert isinstance(full["evaluations"], int)
    assert full["evaluations"] > 2
    quick = _json(capsys, [*argv, "--max-evaluations", "2", "--no-progress"])
    assert quick["evaluations"] == 2
    assert quick["converged"] is False
    assert quick["epsilon_certified"] <= 1  # type: ignore[operator]
    assert quick["not_met"] < full["variance"] < quick["variance"]  # type: ignore[operator]
    assert main([*argv, "--max-evaluations", "2", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "the search stopped at --max-evaluations 2 (2 noise levels accounted)" in text
    assert f"lies in ({quick['not_met']!r}, {quick['variance']!r}]" in text
    assert "a larger --max-evaluations narrows it" in text
    assert main([*argv, "--max-evaluations", "2", "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == quick
    with pytest.raises(SystemExit):
        main([*argv, "--max-evaluations", "0"])
    assert "--max-evaluations" in capsys.readouterr().err


@pytest.mark.slow
def test_calibrate_answer_does_not_depend_on_the_clock(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 24: ``calibrate --noise discrete-laplace --epsilon 1e-300 --delta 1e-6`` printed
    500000.00 on a quiet machine and 500499.04 on a busy one (an 8 s default time limit). A clock
    that jumps an hour at every reading now changes no byte of the default answer and is never
    read; it still stops an explicit --time-limit, which is what makes this test able to fail."""
    import time

    from accounting import DEFAULT_DPS

    argv = ["calibrate", "--noise", "discrete-laplace", "--epsilon", "1e-300", "--delta", "1e-6"]
    argv += ["--json", "--no-progress"]
    assert main(argv) == 0
    quiet = capsys.readouterr().out
    readings: list[float] = []

    def busy() -> float:
        readings.append(3600.0 * (len(readings) + 1))
        return readings[-1]

    monkeypatch.setattr(time, "monotonic", busy)
    assert main(argv) == 0
    assert capsys.readouterr().out == quiet
    assert readings == []
    least = json.loads(quiet)
    assert least["converged"] is True
    assert least["dps"] == DEFAULT_DPS  # the library's precision
    assert main([*argv, "--time-limit", "8"]) == 0
    limited = json.loads(capsys.readouterr().out)
    assert readings
    assert limited["converged"] is False
    assert limited["epsilon_certified"] <= 1e-300
    assert limited["not_met"] < least["scale"] < limited["scale"]


def test_cli_precision_defaults_are_the_library_s() -> None:
    """One default precision: every ``--dps`` of ``dp-account`` (calibrate's was 15) is DEFAULT_DPS."""
    import argparse

    from accounting import DEFAULT_DPS
    from accounting.cli import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    with_dps = {
        name: sub.get_default("dps")
        for name, sub in commands.choices.items()
        if any("--dps" in a.option_strings for a in sub._actions)
    }
    assert {"calibrate", "epsilon", "delta", "rdp", "demo", "shuffle-protocol"} <= set(with_dps)
    assert set(with_dps.values()) == {DEFAULT_DPS}
    args = parser.parse_args(["calibrate", "--noise", "skellam", "--epsilon", "1", "--delta", "1e-6"])
    assert args.dps == DEFAULT_DPS
    assert args.time_limit is None
    assert args.max_evaluations is None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("epsilon", "delta", "exact"),
    [(4.0, 0.1, 5.599336490515581), (1.0, 1e-5, 1.098212911762611)],
)
def test_epsilon_shows_the_ldp_linucb_code_sigma_missing_its_claim(
    epsilon: float, delta: float, exact: float, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 18 (papers/ldp-bandits.md §6.2, §8 P6(i)): ``dp-account epsilon`` of the official LDP-LinUCB
    code's σ = 4 sqrt(ln(1.25/δ))/ε at its stated sensitivity 2 + 2Y = 4 prints an ε above the stated
    one; ``calibrate`` gives the least σ for the claim, above the code's. (The test may use learners;
    accounting does not.)"""
    from learners.ldp import code_mode_check, code_sigma

    sigma = code_sigma(epsilon, delta)
    argv = ["epsilon", "--noise", "gaussian", "--sigma", repr(sigma), "--sensitivity", "4"]
    data = _json(capsys, [*argv, "--delta", repr(delta), "--no-progress"])
    assert data["epsilon"] > epsilon  # type: ignore[operator]
    assert data["epsilon"] == pytest.approx(exact, rel=1e-12)
    assert data["epsilon"] == code_mode_check(epsilon, delta).epsilon_stated  # one accounting, two doors
    target = ["--epsilon", repr(epsilon), "--delta", repr(delta), "--sensitivity", "4", "--no-progress"]
    cal = _json(capsys, ["calibrate", "--noise", "gaussian", *target])
    assert cal["epsilon_certified"] <= epsilon  # type: ignore[operator]
    assert cal["sigma"] > sigma * 1.05  # type: ignore[operator]
