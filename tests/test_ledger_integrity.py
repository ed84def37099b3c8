"""Ledger integrity: a run's digests, keyed signatures, unverified ledgers, special files.

Every kind of edit a user might make to a saved ledger (a noise parameter ×10 or ÷10, a count, a
sensitivity, the relation, an event removed), with the ledger's own ``sha256`` left, recomputed or
deleted: refused by ``dp-regret plot`` and ``dp-account ledger`` when the ledger belongs to a run
(its summary records the digest), refused when signed and checked with the key, and answered with
a one-line "unverified" note when nothing can check it. A summary whose exact ε was changed by
hand is refused by ``plot``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accounting import Accountant, AdditiveNoise, Gaussian
from accounting.cli import main as account_main
from accounting.errors import ParameterError
from accounting.integrity import (
    KEY_ENV,
    KEY_FILE_ENV,
    RUN_DIGESTS,
    Evidence,
    ledger_digest,
    read_key,
    sign,
    signature,
    verify,
)
from accounting.storage import read_text
from accounting.subsampling import PoissonSampled
from learners.cli import main as regret_main
from tests.test_cli_contract import _config, assert_refused, invoke

KEY = b"a-secret-key-of-32-bytes-or-so!!"

Data = dict[str, Any]


def _sampled_ledger() -> Data:
    acc = Accountant("add-remove")
    acc.compose(PoissonSampled(AdditiveNoise(Gaussian(1.1), 1.0), 0.01), 100)
    acc.compose(AdditiveNoise(Gaussian(5.0), 2.0), 3)
    return acc.to_dict()


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every number inside ``node`` (a JSON value)."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _leaves(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaves(v, (*path, i))]
    if isinstance(node, int | float) and not isinstance(node, bool):
        return [path]
    return []


def _get(data: Data, path: tuple[Any, ...]) -> Any:
    node: Any = data
    for k in path:
        node = node[k]
    return node


def _set(data: Data, path: tuple[Any, ...], change: Callable[[Any], Any]) -> Data:
    out: Data = json.loads(json.dumps(data))
    node: Any = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = change(node[path[-1]])
    return out


def _edits(data: Data) -> dict[str, Data]:
    """Each edit of the issue's list applicable to ``data``, by name."""
    edits: dict[str, Data] = {}
    for path in _leaves(data["events"], ("events",)):
        name = ".".join(map(str, path))
        edits[f"{name} x10"] = _set(data, path, lambda x: x * 10)
        if isinstance(_get(data, path), float):
            edits[f"{name} /10"] = _set(data, path, lambda x: x / 10)
        if path[-1] == "count":
            edits[f"{name} to 1"] = _set(data, path, lambda x: 1 if x != 1 else 2)
    for path in _fractions(data["events"], ("events",)):
        edits[".".join(map(str, path)) + " /10"] = _set(data, path, _divide_fraction)
    other = "add-remove" if data["neighbouring"] != "add-remove" else "replace-one"
    edits["relation switched"] = {**data, "neighbouring": other}
    if len(data["events"]) > 1:
        edits["event removed"] = {**data, "events": data["events"][1:]}
    return {name: e for name, e in edits.items() if e != data}  # (0 x10 is no edit)


def _fractions(node: Any, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        if set(node) == {"fraction"}:
            return [path]
        return [p for k, v in node.items() for p in _fractions(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _fractions(v, (*path, i))]
    return []


def _divide_fraction(value: dict[str, str]) -> dict[str, str]:
    p, q = value["fraction"].split("/")
    return {"fraction": f"{p}/{int(q) * 10}"}


def _with_digest(data: Data, how: str) -> Data:
    """The edited ledger with its own sha256 left as it was, recomputed, or deleted."""
    if how == "recomputed":
        return {**data, "sha256": ledger_digest(data)}
    if how == "deleted":
        return {k: v for k, v in data.items() if k != "sha256"}
    return data


SAMPLED = _sampled_ledger()
SAMPLED_EDITS = _edits(SAMPLED)


# -- the Python API -----------------------------------------------------------------------------


def test_the_edits_cover_the_kinds_of_the_issue() -> None:
    for kind in (
        "sigma x10",
        "count to 1",
        "sensitivity /10",
        "rate /10",
        "relation switched",
        "event removed",
    ):
        assert any(name.endswith(kind) for name in SAMPLED_EDITS), kind


def test_signing_round_trips_and_leaves_the_digest() -> None:
    acc = Accountant.from_dict(SAMPLED)
    signed = acc.to_dict(KEY)
    assert signed["sha256"] == SAMPLED["sha256"] == ledger_digest(signed)
    assert signed["hmac"] == signature(SAMPLED, KEY) != signature(SAMPLED, KEY[::-1])
    assert Accountant.from_dict(signed, KEY) == acc
    assert Accountant.from_json(acc.to_json(key=KEY), KEY) == acc
    assert verify(signed, key=KEY) is Evidence.SIGNED
    assert verify(SAMPLED) is Evidence.DIGEST
    assert verify(_with_digest(SAMPLED, "deleted")) is Evidence.NONE


@pytest.mark.parametrize("how", ["recomputed", "deleted"])
@pytest.mark.parametrize("edit", sorted(SAMPLED_EDITS))
def test_a_signed_ledger_edited_is_refused_with_the_key(edit: str, how: str) -> None:
    signed = sign(SAMPLED, KEY)
    edited = _with_digest({**SAMPLED_EDITS[edit], "hmac": signed["hmac"]}, how)
    Accountant.from_dict(edited)  # a valid ledger without the key (the edit is well-formed)
    with pytest.raises(ParameterError, match="hmac"):
        Accountant.from_dict(edited, KEY)


def test_unsigned_or_other_key_is_refused() -> None:
    with pytest.raises(ParameterError, match="carries no hmac"):
        Accountant.from_dict(SAMPLED, KEY)
    with pytest.raises(ParameterError, match="another key"):
        Accountant.from_dict(sign(SAMPLED, KEY[::-1]), KEY)
    for odd in ("é", "\ud800", "hmac-sha256:" + "é" * 64):  # any character: refused, never a TypeError
        with pytest.raises(ParameterError, match="another key"):
            Accountant.from_dict({**SAMPLED, "hmac": odd}, KEY)


def test_keys_come_from_a_file_or_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)
    assert read_key() is None
    key_file = tmp_path / "key"
    key_file.write_text(KEY.decode() + "\n")
    assert read_key(key_file) == KEY
    monkeypatch.setenv(KEY_FILE_ENV, str(key_file))
    assert read_key() == KEY
    monkeypatch.delenv(KEY_FILE_ENV)
    monkeypatch.setenv(KEY_ENV, KEY.decode())
    assert read_key() == KEY
    monkeypatch.setenv(KEY_ENV, "short")
    with pytest.raises(ParameterError, match=f"{KEY_ENV}.*at least 16 bytes"):
        read_key()
    with pytest.raises(ParameterError, match="--key-file"):
        read_key(tmp_path)


# -- special files --------------------------------------------------------------------------------


def test_special_files_are_refused_before_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(ParameterError, match="regular"):
            read_text(path, "FILE")
        assert_refused(invoke(account_main, ["ledger", str(path), "--delta", "1e-6"]), "dp-account", "FILE")
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(2**25)  # sparse: 32 MiB of NULs, never read
    with pytest.raises(ParameterError, match="at most"):
        read_text(big, "FILE")


# -- the command line -------------------------------------------------------------------------------


def _write(path: Path, data: Data) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_cli_unverified_ledgers_get_a_note(tmp_path: Path) -> None:
    bare = _write(tmp_path / "bare.json", _with_digest(SAMPLED, "deleted"))
    outcome = invoke(account_main, ["ledger", str(bare), "--delta", "1e-5", "--json"])
    assert outcome.code == 0
    assert json.loads(outcome.out)["integrity"] == "unverified"
    assert outcome.err.count("\n") == 1
    assert "note:" in outcome.err
    assert "unverified" in outcome.err
    digested = _write(tmp_path / "digested.json", SAMPLED)
    outcome = invoke(account_main, ["ledger", str(digested), "--delta", "1e-5", "--json"])
    assert (outcome.code, json.loads(outcome.out)["integrity"], outcome.err) == (0, "sha256", "")


def test_cli_signs_and_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)
    key_file = tmp_path / "key"
    key_file.write_text(KEY.decode())
    file = _write(tmp_path / "ledger.json", SAMPLED)
    assert_refused(invoke(account_main, ["ledger", str(file), "--sign"]), "dp-account", "--sign")
    signing = ["ledger", str(file), "--sign", "--key-file", str(key_file)]
    assert_refused(invoke(account_main, [*signing, "--delta", "1e-5"]), "dp-account", "--sign")
    assert invoke(account_main, signing).code == 0
    assert json.loads(file.read_text())["hmac"] == signature(SAMPLED, KEY)
    asked = ["ledger", str(file), "--delta", "1e-5", "--json"]
    outcome = invoke(account_main, [*asked, "--key-file", str(key_file)])
    assert (outcome.code, json.loads(outcome.out)["integrity"]) == (0, "signed")
    outcome = invoke(account_main, asked)  # no key: answered, with a note that nothing checked it
    assert outcome.code == 0
    assert "no key" in outcome.err
    for edit in ("events.0.count to 1", "relation switched", "event removed"):
        edited = _with_digest({**SAMPLED_EDITS[edit], "hmac": signature(SAMPLED, KEY)}, "recomputed")
        _write(file, edited)
        assert_refused(invoke(account_main, [*asked, "--key-file", str(key_file)]), "dp-account", "hmac")
        monkeypatch.setenv(KEY_ENV, KEY.decode())
        assert_refused(invoke(account_main, asked), "dp-account", "hmac")
        monkeypatch.delenv(KEY_ENV)


# -- a run's ledgers ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny finished results folder."""
    root = tmp_path_factory.mktemp("integrity")
    config = root / "tiny.toml"
    config.write_text(_config().replace('privacy_route = "published"', 'privacy_route = "auto"'))
    out = root / "res"
    assert invoke(regret_main, ["run", str(config), "--out", str(out), "--no-progress"]).code == 0
    return out


def _copy(run: Path, tmp_path: Path) -> tuple[Path, Data, Path]:
    out = tmp_path / "res"
    shutil.copytree(run, out)
    summary = json.loads((out / "summary.json").read_text())
    return out, summary, out / sorted(summary[RUN_DIGESTS])[0]


def test_a_run_records_the_digest_of_every_ledger(run: Path) -> None:
    summary = json.loads((run / "summary.json").read_text())
    files = sorted(str(p.relative_to(run)) for p in (run / "ledgers").glob("*.json"))
    assert sorted(summary[RUN_DIGESTS]) == files
    assert files
    for name, stated in summary[RUN_DIGESTS].items():
        assert stated == ledger_digest(json.loads((run / name).read_text()))
        outcome = invoke(account_main, ["ledger", str(run / name), "--delta", "1e-6", "--json"])
        assert (outcome.code, json.loads(outcome.out)["integrity"]) == (0, "run")


@pytest.mark.parametrize("how", ["left", "recomputed", "deleted"])
def test_a_run_ledger_edited_is_refused(run: Path, tmp_path: Path, how: str) -> None:
    out, _, file = _copy(run, tmp_path)
    original = json.loads(file.read_text())
    edits = _edits(original)
    assert len(edits) >= 4
    for edited in edits.values():
        _write(file, _with_digest(edited, how))
        outcome = invoke(account_main, ["ledger", str(file), "--delta", "1e-6"])
        assert_refused(outcome, "dp-account", str(file))
        assert_refused(invoke(regret_main, ["plot", str(out)]), "dp-regret", file.name)
    file.unlink()
    assert_refused(invoke(regret_main, ["plot", str(out)]), "dp-regret", file.name)


def test_a_summary_whose_epsilon_was_edited_is_refused(run: Path, tmp_path: Path) -> None:
    out, summary, _ = _copy(run, tmp_path)
    assert invoke(regret_main, ["plot", str(out)]).code == 0
    exact = next(
        r["privacy"]["exact"] for r in summary["results"] if r["privacy"]["exact"]["route"] not in ("none",)
    )
    for field in ("epsilon", "batches"):
        edited = json.loads(json.dumps(summary))
        target = next(r["privacy"]["exact"] for r in edited["results"] if r["privacy"]["exact"] == exact)
        if field == "epsilon":
            target["epsilon"] = float(target["epsilon"]) / 2
        else:
            target["batches"][0][1] = float(target["batches"][0][1]) / 2
        (out / "summary.json").write_text(json.dumps(edited))
        assert_refused(invoke(regret_main, ["plot", str(out)]), "dp-regret", "privacy.exact")
    edited = {**summary, RUN_DIGESTS: {**summary[RUN_DIGESTS], "ledgers/extra__n1.json": "sha256:0"}}
    (out / "summary.json").write_text(json.dumps(edited))
    assert_refused(invoke(regret_main, ["plot", str(out)]), "dp-regret", "extra__n1.json")


# -- dp-regret plot reads a folder as strictly as run writes it ---------------------------------------


def _summary_edit(change: Callable[[Data], None]) -> Callable[[Path], None]:
    def edit(out: Path) -> None:
        data = json.loads((out / "summary.json").read_text())
        change(data)
        (out / "summary.json").write_text(json.dumps(data))

    return edit


def _csv_edit(out: Path) -> None:
    lines = (out / "regret.csv").read_text().splitlines()
    lines[1] = "," + lines[1].split(",", 1)[1]  # an empty panel name
    (out / "regret.csv").write_text("\n".join(lines) + "\n")


def _config_folder(out: Path) -> None:
    (out / "config.toml").unlink()
    (out / "config.toml").mkdir()


PLOT_EDITS: dict[str, Callable[[Path], None]] = {
    "results a string": _summary_edit(lambda d: d.update(results="none")),
    "a result of no panel": _summary_edit(lambda d: d["results"][0].update(panel="elsewhere")),
    "an empty label": _summary_edit(lambda d: d["results"][0].update(label="")),
    "a negative ε": _summary_edit(lambda d: d["results"][-1].update(epsilon=-1.0)),
    "panels a number": _summary_edit(lambda d: d.update(panels=3)),
    "a ledger outside ledgers/": _summary_edit(lambda d: d["ledger_sha256"].update({"/dev/zero": "x"})),
    "a digest of odd characters": _summary_edit(
        lambda d: d["ledger_sha256"].update(dict.fromkeys(d["ledger_sha256"], "é\ud800"))
    ),
    "config.toml a folder": _config_folder,
    "regret.csv with an empty panel": _csv_edit,
}


@pytest.mark.parametrize("edit", sorted(PLOT_EDITS))
def test_plot_refuses_a_folder_run_did_not_write(run: Path, tmp_path: Path, edit: str) -> None:
    out, _, _ = _copy(run, tmp_path)
    PLOT_EDITS[edit](out)
    assert_refused(
        invoke(regret_main, ["plot", str(out)]), "dp-regret", "results=", "ledger_sha256", "ledgers/"
    )


def test_a_run_signs_its_ledgers_with_the_environments_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With $DPCERT_LEDGER_KEY a run signs every ledger; plot then refuses a ledger edited together
    with its digest in summary.json (which the digests alone cannot see), naming the hmac."""
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)
    monkeypatch.setenv(KEY_ENV, KEY.decode())
    config = tmp_path / "tiny.toml"
    config.write_text(_config())
    out = tmp_path / "res"
    assert invoke(regret_main, ["run", str(config), "--out", str(out), "--no-progress"]).code == 0
    summary = json.loads((out / "summary.json").read_text())
    name = sorted(summary[RUN_DIGESTS])[0]
    data = json.loads((out / name).read_text())
    assert data["hmac"] == signature(data, KEY)
    outcome = invoke(account_main, ["ledger", str(out / name), "--delta", "1e-6", "--json"])
    assert (outcome.code, json.loads(outcome.out)["integrity"]) == (0, "signed")
    edited = _with_digest(_set(data, ("events", 0, "count"), lambda c: c + 1), "recomputed")
    _write(out / name, edited)
    summary[RUN_DIGESTS][name] = ledger_digest(edited)
    (out / "summary.json").write_text(json.dumps(summary))
    assert_refused(invoke(regret_main, ["plot", str(out)]), "dp-regret", "hmac")
    monkeypatch.setenv(KEY_ENV, "short")
    assert_refused(
        invoke(regret_main, ["run", str(config), "--out", str(tmp_path / "r2")]), "dp-regret", KEY_ENV
    )
