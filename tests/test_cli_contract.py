"""The contract of the three command lines (issue 15 §1), over generated bad input.

Every bad input — a wrong type, NaN, an infinity, a negative or huge number, a missing or
conflicting option, a size no computation finishes, a malformed file — must end with status 2 and
one line on stderr that names the option (or the file or config field), no traceback, nothing on
stdout, and within a bounded time. Each invocation runs in-process under a 20 s watchdog (a
``SIGALRM`` whose expiry fails the example; it is a guard, not a timed assertion). The examples are
derandomized (``tests/conftest.py``) and each test has a fixed budget, so the file adds well under a
minute.

Valid commands whose answers are unbounded check the one convention for infinities: ``--json`` is
strict JSON with ``"inf"`` for ``+inf``, and the text says "unbounded".
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounting.cli import main as account_main
from learners.cli import main as regret_main
from verification.cli import main as audit_main

Main = Callable[[Sequence[str] | None], int]

#: The watchdog of one invocation (seconds): its expiry is a failure ("a hang").
WATCHDOG = 20.0


class Hang(BaseException):
    """Raised by the watchdog (a BaseException, so no ``except Exception`` in the CLI swallows it)."""


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def invoke(main: Main, argv: Sequence[str]) -> Outcome:
    """Run a command line in-process under the watchdog; argparse's SystemExit is its status."""
    out, err = io.StringIO(), io.StringIO()
    with watchdog(WATCHDOG), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return Outcome(code, out.getvalue(), err.getvalue())


def assert_refused(outcome: Outcome, prog: str, *names: str) -> None:
    """Status 2, one line on stderr starting ``prog`` and naming one of ``names``; no answer."""
    err = outcome.err.strip()
    assert outcome.code == 2, (outcome.code, err, outcome.out[-300:])
    assert "Traceback" not in outcome.err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"{prog}"), err
    assert "error:" in err, err
    assert any(name in err for name in names), (names, err)
    assert outcome.out == "", outcome.out[-300:]


# -- bad values, by the kind of option ------------------------------------------------------------

POSITIVE = ["0", "-1", "-0.5", "nan", "inf", "-inf", "1e400", "5e-324", "abc", "", "0x1p3", "1,5"]
UNIT = ["0", "1", "2", "-0.5", "nan", "inf", "abc", "1e-400", ""]
NONNEGATIVE = ["-1", "nan", "inf", "abc", "1e400", ""]
COUNT = ["0", "-3", "2.5", "1e30", "1" + "0" * 30, "9" * 400, "abc", "nan", "inf", "1e400", ""]
DPS = ["4", "1001", "2.5", "abc", "1e9", "-20"]
ORDER = ["1", "0.5", "-2", "nan", "abc", ""]
RATE = ["0", "1.5", "-0.1", "nan", "abc"]
CHOICE = ["bogus", "", "GAUSSIAN", "published:nope"]

# Sizes that are well-formed numbers but that no computation finishes: refused before any work.
TOO_BIG_LATTICE_VARIANCE = ["1e31", "1e300", "1.7e308"]
TOO_BIG_LATTICE_SIGMA = ["1e16", "1e200", "1e308"]
TOO_BIG_LATTICE_SCALE = ["1e16", "1e300"]
TOO_BIG_SENSITIVITY = ["262145", "1e16", "1e300"]


@dataclass(frozen=True)
class Case:
    """A valid command, an option of it and the bad values that option must refuse."""

    argv: tuple[str, ...]
    option: str
    bad: tuple[str, ...]


def _cases(base: str, table: dict[str, Sequence[str]]) -> list[Case]:
    return [Case(tuple(base.split()), option, tuple(bad)) for option, bad in table.items()]


SKELLAM = "--noise skellam --variance 10"
TREE = "--sigma 2 --horizon 10000 --batch 25 --epsilon 1 --delta 1e-6"
TREE_CALIBRATE = "--calibrate --epsilon 5 --delta 0.1 --horizon 10000 --batch 25 --sensitivity add-remove"
ACCOUNT_CASES = [
    *_cases(
        f"epsilon {SKELLAM} --delta 1e-5",
        {
            "--variance": POSITIVE + TOO_BIG_LATTICE_VARIANCE,
            "--delta": UNIT,
            "--sensitivity": [*POSITIVE, "1.5", *TOO_BIG_SENSITIVITY],
            "--compositions": COUNT,
            "--users": COUNT,
            "--dps": DPS,
            "--route": CHOICE,
            "--neighbouring": CHOICE,
            "--noise": CHOICE,
            "--sampling-rate": RATE,
        },
    ),
    *_cases(
        "epsilon --noise discrete-gaussian --sigma 2 --delta 1e-5",
        {"--sigma": POSITIVE + TOO_BIG_LATTICE_SIGMA},
    ),
    *_cases(
        "epsilon --noise discrete-laplace --scale 2 --delta 1e-5",
        {"--scale": POSITIVE + TOO_BIG_LATTICE_SCALE},
    ),
    *_cases(
        "epsilon --noise gaussian --sigma 2 --delta 1e-5", {"--sigma": POSITIVE, "--sensitivity": POSITIVE}
    ),
    *_cases("epsilon --noise polya --beta 0.5 --users 4 --delta 1e-5", {"--beta": UNIT}),
    *_cases("epsilon --noise binomial --trials 100 --delta 1e-5", {"--trials": COUNT}),
    *_cases(f"delta {SKELLAM} --epsilon 1", {"--epsilon": NONNEGATIVE}),
    *_cases(f"rdp {SKELLAM} --alpha 2", {"--alpha": ORDER}),
    *_cases(
        "calibrate --noise gaussian --epsilon 1 --delta 1e-5",
        {
            "--epsilon": POSITIVE,
            "--delta": UNIT,
            "--compositions": COUNT,
            "--users": COUNT,
            "--noise": CHOICE,
            "--sensitivity": POSITIVE,
            "--dps": DPS,
        },
    ),
    *_cases(
        "protocol --theorem 1 --epsilon 1 --users 16 --horizon 1000",
        {
            "--theorem": ["0", "7", "1.5", "abc", "1e30"],
            "--epsilon": POSITIVE,
            "--users": COUNT,
            "--horizon": COUNT,
            "--p": UNIT,
        },
    ),
    *_cases(
        "shuffle --epsilon0 1 --users 1000 --delta 1e-6",
        {"--epsilon0": [*POSITIVE, "101", "1e-300"], "--users": COUNT, "--delta": UNIT, "--bound": CHOICE},
    ),
    *_cases(
        "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 1000",
        {
            "--protocol": CHOICE,
            "--epsilon": POSITIVE,
            "--delta": UNIT,
            "--users": COUNT,
            "--dimension": COUNT,
            "--bound": POSITIVE,
        },
    ),
    *_cases(
        "demo --epsilons 1",
        {"--epsilons": POSITIVE, "--delta": UNIT, "--users": COUNT, "--dps": DPS},
    ),
    *_cases(
        f"tree {TREE}",
        {
            "--sigma": [*POSITIVE, "1e-101"],  # sensitivity/sigma at most 1e100
            "--horizon": [*COUNT, str(2**62 * 25 + 25)],  # K = T/B at most 2^62
            "--batch": [*COUNT, "10001"],  # at most the horizon
            "--epsilon": NONNEGATIVE,
            "--delta": UNIT,
            "--sensitivity": [*CHOICE, "add-remove", "1"],
        },
    ),
    *_cases(
        f"tree {TREE_CALIBRATE}",
        {"--epsilon": [*POSITIVE, "1e-31", "1e31"], "--delta": UNIT, "--horizon": COUNT, "--batch": COUNT},
    ),
]

AUDIT_CASES = [
    *_cases(
        "sampler --noise skellam --variance 10 --samples 1000",
        {
            "--variance": [*POSITIVE, "1e8", "1e30"],
            "--samples": [*COUNT, "99", "1000000000000"],
            "--seed": ["-1", "abc", "2.5", "1" + "0" * 40],
            "--alpha": UNIT,
            "--users": COUNT,
            "--noise": CHOICE,
        },
    ),
    *_cases("sampler --noise binomial --trials 10 --samples 1000", {"--trials": [*COUNT, "100000000"]}),
    *_cases(
        "mechanism --noise discrete-laplace --scale 10 --samples 1000",
        {
            "--scale": [*POSITIVE, "1e17"],
            "--sensitivity": ["0", "-1", "1.5", "abc", "1e30", "262145"],
            "--claimed-epsilon": ["-1", "nan", "abc", ""],
            "--delta": ["-0.1", "1", "nan", "abc"],
            "--confidence": UNIT,
            "--samples": [*COUNT, "10000000000000"],
            "--scheduler": [
                "nonsense",
                "tcp://127.0.0.1:1",
                "tcp://[::1",
                "tcp://host:99999",
                "bogus://x:1",
                "",
            ],
        },
    ),
    *_cases("broken --samples 1000", {"--samples": COUNT, "--seed": ["-1", "abc"]}),
    *_cases("bounds --noise skellam --quick", {"--dps": DPS, "--noise": CHOICE}),
]

# Options dropped (required), and options that conflict with the rest.
MISSING = [
    (account_main, "dp-account", "epsilon --noise skellam --variance 10 --delta 1e-5", "--delta"),
    (account_main, "dp-account", "epsilon --noise skellam --variance 10 --delta 1e-5", "--variance"),
    (account_main, "dp-account", "epsilon --noise skellam --variance 10 --delta 1e-5", "--noise"),
    (account_main, "dp-account", "calibrate --noise gaussian --epsilon 1 --delta 1e-5", "--epsilon"),
    (
        account_main,
        "dp-account",
        "protocol --theorem 2 --epsilon 1 --users 16 --horizon 100 --scaling 10",
        "--scaling",
    ),
    (account_main, "dp-account", "shuffle --epsilon0 1 --users 1000 --delta 1e-6", "--users"),
    (account_main, "dp-account", "tree --sigma 2 --horizon 10000 --batch 25 --epsilon 1", "--sigma"),
    (account_main, "dp-account", "tree --sigma 2 --horizon 10000 --batch 25 --epsilon 1", "--epsilon"),
    (account_main, "dp-account", "tree --sigma 2 --horizon 10000 --batch 25 --epsilon 1", "--horizon"),
    (account_main, "dp-account", f"tree {TREE_CALIBRATE}", "--delta"),
    (account_main, "dp-account", f"tree {TREE_CALIBRATE}", "--epsilon"),
    (account_main, "dp-account", f"tree {TREE_CALIBRATE}", "--batch"),
    (audit_main, "dp-audit", "sampler --noise skellam --variance 10 --samples 1000", "--variance"),
    (audit_main, "dp-audit", "mechanism --noise discrete-laplace --scale 10 --samples 1000", "--noise"),
]
CONFLICTS = [
    (account_main, "dp-account", f"epsilon {SKELLAM} --delta 1e-5 --sigma 3", "--sigma"),
    (account_main, "dp-account", f"epsilon {SKELLAM} --delta 1e-5 --scale 3", "--scale"),
    (account_main, "dp-account", f"epsilon {SKELLAM} --delta 1e-5 --beta 0.5", "--beta"),
    (
        account_main,
        "dp-account",
        "epsilon --noise gaussian --sigma 1 --delta 1e-5 --variance 3",
        "--variance",
    ),
    (account_main, "dp-account", "epsilon --noise gaussian --sigma 1 --delta 1e-5 --trials 3", "--trials"),
    (account_main, "dp-account", f"epsilon {SKELLAM} --delta 1e-5 --sampling fixed", "--sampling"),
    (
        account_main,
        "dp-account",
        "epsilon --noise gaussian --sigma 1 --users 4 --delta 1e-5 --neighbouring add-remove",
        "--noise gaussian",
    ),
    (account_main, "dp-account", f"rdp {SKELLAM} --alpha 2 --delta 1e-5", "--delta"),
    (account_main, "dp-account", f"tree {TREE_CALIBRATE} --sigma 2", "--sigma"),
    (audit_main, "dp-audit", "sampler --noise skellam --variance 10 --sigma 3", "--sigma"),
    (audit_main, "dp-audit", "mechanism --noise gaussian --sigma 3 --users 4", "--users"),
]


def _with(argv: Sequence[str], option: str, value: str) -> list[str]:
    """``argv`` with ``option`` set to ``value`` as one word ``option=value`` (so a value such as
    ``-1`` is read as the value), replacing the option where given, appended otherwise."""
    out = list(argv)
    if option in out:
        i = out.index(option)
        out[i : i + 2] = [f"{option}={value}"]
    else:
        out.append(f"{option}={value}")
    return out


def test_with_sets_the_option_once() -> None:
    argv = ["epsilon", "--delta", "1e-6", "--json"]
    assert _with(argv, "--delta", "-1") == ["epsilon", "--delta=-1", "--json"]
    assert _with(["epsilon"], "--sigma", "0") == ["epsilon", "--sigma=0"]


def _without(argv: Sequence[str], option: str) -> list[str]:
    out = list(argv)
    i = out.index(option)
    del out[i : i + 2]
    return out


@pytest.mark.slow
@settings(max_examples=160, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_dp_account_bad_values_are_refused_in_one_line(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(ACCOUNT_CASES), label="case")
    value = data.draw(st.sampled_from(case.bad), label="value")
    argv = _with(case.argv, case.option, value)
    assert_refused(invoke(account_main, argv), "dp-account", case.option)


@settings(max_examples=70, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_dp_audit_bad_values_are_refused_in_one_line(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(AUDIT_CASES), label="case")
    value = data.draw(st.sampled_from(case.bad), label="value")
    argv = _with(case.argv, case.option, value)
    assert_refused(invoke(audit_main, argv), "dp-audit", case.option)


@pytest.mark.parametrize(("main", "prog", "argv", "option"), MISSING)
def test_missing_options_are_named(main: Main, prog: str, argv: str, option: str) -> None:
    assert_refused(invoke(main, _without(argv.split(), option)), prog, option)


@pytest.mark.parametrize(("main", "prog", "argv", "option"), CONFLICTS)
def test_conflicting_options_are_errors_not_ignored(main: Main, prog: str, argv: str, option: str) -> None:
    assert_refused(invoke(main, argv.split()), prog, option)


@settings(max_examples=40)
@given(
    st.lists(
        st.sampled_from(["--json", "--noise", "--sigma", "1", "x", "--delta", "-", "--", "=", "epsilon"])
    )
)
def test_dp_account_garbled_command_lines(argv: list[str]) -> None:
    """Any shuffle of option-like words ends in one line with status 2 (or is a valid command)."""
    outcome = invoke(account_main, argv)
    assert "Traceback" not in outcome.err
    if outcome.code != 0:
        assert outcome.code == 2
        assert len(outcome.err.strip().splitlines()) == 1


# -- files ------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)


def _valid_ledger() -> dict[str, Any]:
    from accounting import Accountant, AdditiveNoise, DistributedSum, Gaussian, Skellam

    acc = Accountant().compose(AdditiveNoise(Gaussian(2.0)), 10).compose(DistributedSum(Skellam(10), 4), 3)
    return acc.to_dict()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


LEDGER = _valid_ledger()
LEDGER_PATHS = _paths(LEDGER)


@pytest.mark.slow
@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(LEDGER_PATHS), new=json_values)
def test_edited_ledgers_are_refused_naming_the_file(path: tuple[Any, ...], new: Any, tmp_path: Path) -> None:
    """A saved ledger with any one field replaced by any JSON value: refused, naming the file."""
    edited = _replace(LEDGER, path, new)
    file = tmp_path / "ledger.json"
    file.write_text(json.dumps(edited))
    outcome = invoke(account_main, ["ledger", str(file), "--delta", "1e-6"])
    if edited == LEDGER:
        assert outcome.code == 0
        return
    assert_refused(outcome, "dp-account", str(file))


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_garbage_ledger_files_are_refused(content: bytes, tmp_path: Path) -> None:
    file = tmp_path / "ledger.json"
    file.write_bytes(content)
    assert_refused(invoke(account_main, ["ledger", str(file), "--delta", "1e-6"]), "dp-account", str(file))


TINY = {
    "name": "tiny",
    "seed": "7",
    "horizon": "1000",
    "repetitions": "2",
    "epsilons": "[0.5]",
    "checkpoints": "20",
    "chunk": "2",
    "delta": "1e-6",
    "privacy_route": '"published"',
}
INSTANCE = {"kind": '"gaussian-easy"', "arms": "4"}
ALGORITHM = '[[algorithms]]\nname = "dist-dp-se"\n'
BAD_FIELDS: dict[str, list[str]] = {
    "seed": ["-1", "1.5", '"x"', "true", "inf", "1" + "0" * 40],
    "repetitions": ["0", "-1", "1.5", "1" + "0" * 30, '"x"', "nan", "[1]"],
    "horizon": ["1", "1e6", "1" + "0" * 30, "-5", "inf", "{}"],
    "epsilons": ["[0]", "[-1]", "[nan]", "[inf]", "[1e-300]", "[1e300]", "0.5", '["a"]', "[0.5, 0.5]", "[]"],
    "checkpoints": ["0", "1" + "0" * 18, "0.5"],
    "chunk": ["0", "1.5", "-2"],
    "delta": ["0", "1", "2", "nan", '"x"'],
    "privacy_route": ['"bogus"', "1"],
    "instance.arms": ["1", "1" + "0" * 12, "2.5", '"x"'],
    "instance.kind": ['"bogus"', "1"],
}


def _config(field: str | None = None, value: str | None = None) -> str:
    top = dict(TINY)
    inst = dict(INSTANCE)
    if field is not None and value is not None:
        if field.startswith("instance."):
            inst[field.split(".", 1)[1]] = value
        else:
            top[field] = value
    lines = [f'name = "{top.pop("name")}"'] + [f"{k} = {v}" for k, v in top.items()]
    lines += ["[instance]"] + [f"{k} = {v}" for k, v in inst.items()]
    return "\n".join(lines) + "\n" + ALGORITHM


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_dp_regret_bad_config_fields_are_refused(data: st.DataObject, tmp_path: Path) -> None:
    field = data.draw(st.sampled_from(sorted(BAD_FIELDS)), label="field")
    value = data.draw(st.sampled_from(BAD_FIELDS[field]), label="value")
    config = tmp_path / "bad.toml"
    config.write_text(_config(field, value))
    out = tmp_path / "out"
    outcome = invoke(regret_main, ["run", str(config), "--out", str(out), "--no-progress"])
    assert_refused(outcome, "dp-regret", field.split(".")[-1], "config=")
    assert not out.exists()  # nothing written


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=120) | st.text(max_size=120).map(str.encode))
def test_dp_regret_garbage_configs_are_refused(content: bytes, tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_bytes(content)
    outcome = invoke(regret_main, ["run", str(config), "--out", str(tmp_path / "out"), "--no-progress"])
    assert_refused(outcome, "dp-regret", str(config))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny finished results folder (about a second)."""
    root = tmp_path_factory.mktemp("contract")
    config = root / "tiny.toml"
    config.write_text(_config())
    out = root / "res"
    assert invoke(regret_main, ["run", str(config), "--out", str(out), "--no-progress"]).code == 0
    return out


csv_rows = st.lists(
    st.lists(
        st.sampled_from(["p", "a", "", "0.5", "0", "1", "-1", "nan", "inf", "x", '"', "2.5", "1e400"]),
        max_size=9,
    ).map(",".join),
    max_size=4,
)


@pytest.mark.slow
@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=csv_rows, keep_header=st.booleans())
def test_plot_of_malformed_regret_csv(
    rows: list[str], keep_header: bool, results: Path, tmp_path: Path
) -> None:
    """Any garbled regret.csv: redrawn if it happens to be valid, else refused naming the folder."""
    folder = tmp_path / "res"
    folder.mkdir(exist_ok=True)
    (folder / "summary.json").write_text((results / "summary.json").read_text())
    header = (results / "regret.csv").read_text().splitlines()[0] if keep_header else "x,y"
    (folder / "regret.csv").write_text("\n".join([header, *rows]) + "\n")
    outcome = invoke(regret_main, ["plot", str(folder), "--formats", "png"])
    assert "Traceback" not in outcome.err
    if outcome.code != 0:
        assert_refused(outcome, "dp-regret", "results=")


@pytest.mark.slow
@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(summary=json_values)
def test_plot_of_malformed_summary_json(summary: Any, results: Path, tmp_path: Path) -> None:
    folder = tmp_path / "res"
    folder.mkdir(exist_ok=True)
    (folder / "regret.csv").write_text((results / "regret.csv").read_text())
    (folder / "summary.json").write_text(json.dumps(summary))
    outcome = invoke(regret_main, ["plot", str(folder), "--formats", "png"])
    assert "Traceback" not in outcome.err
    if outcome.code != 0:
        assert_refused(outcome, "dp-regret", "summary.json")


def test_dp_regret_scheduler_unreachable_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(_config())
    for address in ("tcp://127.0.0.1:1", "nonsense", "tcp://[::1", "tls://127.0.0.1:1"):
        out = tmp_path / "out"
        outcome = invoke(regret_main, ["run", str(config), "--out", str(out), "--scheduler", address])
        assert_refused(outcome, "dp-regret", "--scheduler")
        assert not out.exists()


# -- infinities, pipes, versions --------------------------------------------------------------------


def _strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("main", "argv", "key"),
    [
        (account_main, "rdp --noise gaussian --sigma 1 --alpha inf 2", ("rdp", "inf")),
        (account_main, "epsilon --noise binomial --trials 1 --delta 1e-5", ("epsilon",)),
        (account_main, "rdp --noise binomial --trials 1 --alpha 2", ("rdp", "2.0")),
    ],
)
def test_unbounded_answers_follow_the_one_convention(main: Main, argv: str, key: tuple[str, ...]) -> None:
    """+inf is the string "inf" in JSON (strict: no Infinity), and "unbounded" in words in text."""
    outcome = invoke(main, [*argv.split(), "--json"])
    assert outcome.code == 0, outcome.err
    value: Any = _strict_json(outcome.out)
    for k in key:
        value = value[k]
    assert value == "inf"
    text = invoke(main, argv.split())
    assert text.code == 0
    assert "unbounded" in text.out


@pytest.mark.slow
def test_json_of_every_cli_is_strict() -> None:
    for main, argv in (
        (account_main, "shuffle --epsilon0 4 --users 1000 --delta 1e-6 --bound all --json"),
        (account_main, "calibrate --noise gaussian --epsilon 1 --delta 1e-5 --json"),
        (account_main, f"tree {TREE} --json"),
        (account_main, f"tree {TREE_CALIBRATE} --json"),
        (
            audit_main,
            "mechanism --noise discrete-laplace --scale 10 --samples 1000 --claimed-epsilon inf --json",
        ),
        (audit_main, "mechanism --noise gaussian --sigma 3 --samples 1000 --json"),
    ):
        outcome = invoke(main, argv.split())
        assert outcome.code in (0, 1), outcome.err
        _strict_json(outcome.out)


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``dp-account ... | head``: stdout closed before the answer is written, no traceback."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "accounting",
                "rdp",
                "--noise",
                "gaussian",
                "--sigma",
                "1",
                "--alpha",
                "2",
            ],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,  # a hang guard, not a speed target
            check=False,
        )
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr
    assert done.stderr.strip() == ""
    assert done.returncode == 141


def test_a_broken_pipe_in_process_is_status_141(monkeypatch: pytest.MonkeyPatch) -> None:
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert account_main(["rdp", "--noise", "gaussian", "--sigma", "1", "--alpha", "2"]) == 141
    assert err.getvalue() == ""


@pytest.mark.parametrize(
    ("main", "prog"), [(account_main, "dp-account"), (audit_main, "dp-audit"), (regret_main, "dp-regret")]
)
def test_version(main: Main, prog: str) -> None:
    from importlib import metadata

    outcome = invoke(main, ["--version"])
    assert outcome.code == 0
    assert outcome.out.strip() == f"{prog} {metadata.version('dpcert')}"


# -- issue 15 §2: dp-account curve, shuffle-protocol's limits, --no-progress ---------------------


def _set(argv: Sequence[str], option: str, value: str) -> list[str]:
    """``argv`` with ``option`` given once, as ``option=value`` (so "-1" or "" is its value)."""
    out = list(argv)
    if option in out:
        i = out.index(option)
        del out[i : i + 2]
    return [*out, f"{option}={value}"]


CURVE = "curve --noise gaussian --sigma-range 1 2 --points 2 --delta 1e-5 --no-progress"
CURVE_CASES = [
    *_cases(
        CURVE,
        {
            "--delta": UNIT,
            "--points": ["1", "0", "-3", "201", "2.5", "1e30", "abc", "nan", ""],
            "--dps": DPS,
            "--route": CHOICE,
            "--neighbouring": CHOICE,
            "--noise": CHOICE,
            "--spacing": CHOICE,
            "--format": ["gif", "", "PNG"],
            "--out": ["/nonexistent/dir/c", "", "/"],
            "--sensitivity": POSITIVE,
            "--users": COUNT,
            "--sampling-rate": RATE,
        },
    ),
    *_cases(
        "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 1000",
        {"--epsilon": ["1e-300", "1e-51", "5e-324"], "--bound": ["1e308", "1e51", "1e-300", "1e-51"]},
    ),
]

# A range option with its two values (LO HI), each pair bad.
CURVE_RANGES = [
    ("curve --noise gaussian --delta 1e-5", "--sigma-range",
     [("0", "1"), ("nan", "1"), ("2", "1"), ("1", "1"), ("1e-300", "1"), ("1", "inf"), ("1", "1e400")]),
    ("curve --noise skellam --delta 1e-5", "--variance-range", [("1", "1e31"), ("-1", "1")]),
    ("curve --noise discrete-gaussian --delta 1e-5", "--sigma-range", [("1", "1e16")]),
    ("curve --noise binomial --delta 1e-5", "--trials-range", [("1", "10000000"), ("1.5", "3")]),
    ("curve --noise polya --users 4 --delta 1e-5", "--beta-range", [("0.5", "1"), ("0", "0.5")]),
    ("curve --noise skellam --variance 9 --delta 1e-5", "--compositions-range",
     [("0", "5"), ("5", "1"), ("1", "1000000000000"), ("1", "1e30"), ("2.5", "3")]),
    ("curve --noise gaussian --sigma 1", "--epsilon-range",
     [("0", "1"), ("-1", "1"), ("2", "1"), ("nan", "1"), ("1", "1e400")]),
    ("curve --noise skellam --variance 9 --delta 1e-5", "--sigma-range", [("1", "2")]),
]  # fmt: skip


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_dp_account_curve_and_limits_are_refused_in_one_line(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CURVE_CASES), label="case")
    value = data.draw(st.sampled_from(case.bad), label="value")
    assert_refused(invoke(account_main, _set(case.argv, case.option, value)), "dp-account", case.option)


@pytest.mark.parametrize(
    ("base", "option", "pair"),
    [(base, option, pair) for base, option, pairs in CURVE_RANGES for pair in pairs],
)
def test_dp_account_curve_bad_ranges_are_refused(base: str, option: str, pair: tuple[str, str]) -> None:
    argv = [*base.split(), option, *pair, "--no-progress"]
    assert_refused(invoke(account_main, argv), "dp-account", option)


@pytest.mark.parametrize(
    "argv",
    [
        "epsilon --noise gaussian --sigma 2 --delta 1e-5",
        "delta --noise gaussian --sigma 2 --epsilon 1",
        "rdp --noise gaussian --sigma 2 --alpha 2",
        "calibrate --noise gaussian --epsilon 1 --delta 1e-5",
        "curve --noise gaussian --sigma-range 1 2 --points 2 --delta 1e-5",
        f"tree {TREE}",
        f"tree {TREE_CALIBRATE}",
    ],
)
def test_dp_account_no_progress_is_accepted_and_quiet(argv: str) -> None:
    outcome = invoke(account_main, [*argv.split(), "--no-progress", "--json"])
    assert outcome.code == 0, outcome.err
    assert outcome.err == ""
    _strict_json(outcome.out)
