"""The kernel's files (accounting.storage): atomic writes, strict JSON, the canonical digest, figures."""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from accounting import storage
from accounting.accountant import Accountant
from accounting.errors import ParameterError
from accounting.mechanisms import AdditiveNoise
from accounting.noise import Gaussian


def test_write_atomic_writes_text_and_bytes_and_leaves_no_temporary(tmp_path: Path) -> None:
    storage.write_atomic(tmp_path / "a.json", "{}\n")
    storage.write_atomic(tmp_path / "b.bin", b"\x00\x01")
    storage.write_atomic(tmp_path / "a.json", "[1]\n")  # replaces the old file
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == "[1]\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n", encoding="utf-8")

    def interrupted() -> None:
        with storage.atomic_path(target) as tmp, tmp.open("w", encoding="utf-8") as handle:
            handle.write("new, half")
            handle.flush()
            raise RuntimeError("mid-write")

    with pytest.raises(RuntimeError, match="mid-write"):
        interrupted()
    assert target.read_text(encoding="utf-8") == "old\n"  # never a partial file
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_a_failed_first_write_creates_nothing(tmp_path: Path) -> None:
    def interrupted() -> None:
        with storage.atomic_path(tmp_path / "new.txt") as tmp:
            tmp.write_text("partial", encoding="utf-8")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        interrupted()
    assert list(tmp_path.iterdir()) == []


def test_strict_json_refuses_a_key_given_twice_naming_it() -> None:
    assert storage.strict_json_loads('{"a": 1, "b": {"c": 2}}') == {"a": 1, "b": {"c": 2}}
    with pytest.raises(ParameterError, match=r"^epsilon=2 is invalid") as err:
        storage.strict_json_loads('{"x": {"epsilon": 1, "epsilon": 2}}')
    assert err.value.name == "epsilon"
    with pytest.raises(ValueError, match="the key 'k' appears twice"):
        storage.strict_json_loads('{"k": 1, "k": 1}', lambda k, v: ValueError(f"the key {k!r} appears twice"))


def test_digest_is_stable_and_ignores_key_order() -> None:
    a = {"b": [1, 2.5, None], "a": {"y": "z", "x": True}}
    b = {"a": {"x": True, "y": "z"}, "b": [1, 2.5, None]}
    assert storage.canonical_json(a) == '{"a":{"x":true,"y":"z"},"b":[1,2.5,null]}'
    assert storage.digest(a) == storage.digest(b)
    assert storage.digest(a) == "sha256:" + hashlib.sha256(storage.canonical_json(a).encode()).hexdigest()
    assert storage.digest(a) != storage.digest({**a, "c": 0})


def test_digest_is_the_ledgers_sha256() -> None:
    acc = Accountant()
    acc.compose(AdditiveNoise(Gaussian(2.0)), 3)
    data = acc.to_dict()
    body = {k: v for k, v in data.items() if k != "sha256"}
    assert data["sha256"] == storage.digest(body)
    assert Accountant.from_json(acc.to_json()) == acc


def test_json_text_nan_rules() -> None:
    record: dict[str, Any] = {"up": math.inf, "down": -math.inf, "x": (1, 0.5)}
    assert json.loads(storage.json_text(record)) == {"up": "inf", "down": "-inf", "x": [1, 0.5]}
    # the command lines: a NaN is a bug, never printed
    with pytest.raises(ValueError, match="Out of range float"):
        storage.json_text({"x": math.nan})
    assert json.loads(storage.json_text({"x": math.nan}, nan="string")) == {"x": "nan"}  # summary.json


def test_save_figure_is_reproducible_and_atomic(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    def draw() -> Figure:
        fig = Figure(figsize=(2, 2))
        fig.add_subplot().plot([0, 1], [1, 0], label="line")
        return fig

    names = ["f.png", "f.pdf", "f.svg"]
    written = storage.save_figure(draw(), [tmp_path / n for n in names], dpi=100)
    assert written == [tmp_path / n for n in names]
    first = {n: (tmp_path / n).read_bytes() for n in names}
    storage.save_figure(draw(), [tmp_path / n for n in names], dpi=100)  # no dates, fixed ids: same bytes
    assert first == {n: (tmp_path / n).read_bytes() for n in names}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)


def test_open_regular_streams_a_regular_file_and_refuses_the_rest(tmp_path: Path) -> None:
    data = tmp_path / "data.txt"
    data.write_bytes(b"1 qid:1 1:0.5\n")
    with storage.open_regular(data, "path") as handle:
        assert handle.read() == b"1 qid:1 1:0.5\n"
    with pytest.raises(ParameterError, match="at most 4 bytes"):
        storage.open_regular(data, "path", limit=4)
    with pytest.raises(ParameterError, match="a regular data file"):
        storage.open_regular(tmp_path, "instance.path", what="data file")
    with pytest.raises(ParameterError, match="readable"):
        storage.open_regular(tmp_path / "missing", "path")
    if hasattr(os, "mkfifo"):  # a FIFO without a writer: refused without blocking
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        with pytest.raises(ParameterError, match="not a folder, pipe or device"):
            storage.open_regular(fifo, "path")
