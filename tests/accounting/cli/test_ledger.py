"""``dp-account ledger``: re-accounting a saved ledger, and refusing a malformed or edited one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accounting.cli import main
from tests.accounting.cli.helpers import exit_2_one_line, json_of, on_a_terminal


def test_ledger_subcommand_reaccounts_a_saved_ledger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from accounting import Accountant, DistributedSum, Skellam

    acc = Accountant("add-remove").compose(DistributedSum(Skellam(10), users=10))
    path = tmp_path / "ledger.json"
    path.write_text(acc.to_json())
    data = json_of(capsys, ["ledger", str(path), "--delta", "1e-6"])
    assert data["epsilon"] == float(acc.epsilon(1e-6))
    assert data["neighbouring"] == "add-remove"
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"format": "dpcert-ledger/1", "neighbouring": "replace-one", "events": [{"count": 0, '
        '"mechanism": {"type": "PureDP", "epsilon": 1, "source": "x"}}]}'
    )
    for argv in (
        ["ledger", str(bad), "--delta", "1e-6"],
        ["ledger", str(path)],
        ["ledger", str(tmp_path / "missing.json"), "--delta", "1e-6"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "error:" in err
        assert "Traceback" not in err


def test_a_ledger_edited_by_hand_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A saved ledger carries a hash of its content: a changed σ, ε or count is detected."""
    from accounting import Accountant, AdditiveNoise, Gaussian, PureDP

    acc = Accountant().compose(AdditiveNoise(Gaussian(2.0)), 10).compose(PureDP(0.5, "cited"), 2)
    text = acc.to_json()
    assert '"sha256": "sha256:' in text
    path = tmp_path / "ledger.json"
    for old, new in (('"sigma": 2.0', '"sigma": 20.0'), ('"epsilon": 0.5', '"epsilon": 0.05'),
                     ('"count": 10', '"count": 1')):  # fmt: skip
        assert old in text
        path.write_text(text.replace(old, new))
        exit_2_one_line(["ledger", str(path), "--delta", "1e-6"], capsys, str(path), "sha256", "changed")
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
    text: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ledger.json"
    if text.startswith("\xff"):
        path.write_bytes(b"\xff\xfe not utf-8")
    else:
        path.write_text(text)
    exit_2_one_line(["ledger", str(path), "--delta", "1e-6"], capsys, needle)


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


def test_ledger_takes_no_progress(tmp_path: Path) -> None:
    from accounting import Accountant, AdditiveNoise, Skellam

    path = tmp_path / "ledger.json"
    path.write_text(Accountant().compose(AdditiveNoise(Skellam(10)), 3).to_json())
    code, out, err = on_a_terminal(["ledger", str(path), "--delta", "1e-5", "--no-progress"])
    assert (code, err) == (0, "")
    assert "epsilon =" in out
