"""Tests of :mod:`learners.cluster`: the optional Dask import and the connection to a scheduler.

(Runs on a real ``LocalCluster`` are in ``tests/learners/test_experiment.py``; the command lines'
one-line refusals of an unreachable ``--scheduler`` in ``tests/test_cli_contract.py``.)
"""

from __future__ import annotations

import sys

import pytest

from learners import runner
from learners.cluster import CONNECT_TIMEOUT, connect, import_distributed
from learners.errors import LearnerError, ParameterError


def test_import_distributed_is_the_module() -> None:
    distributed = pytest.importorskip("distributed")
    assert import_distributed() is distributed


def test_a_missing_dask_extra_is_one_error_of_the_callers_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # ``import distributed`` raises ImportError
    missing = r"dask\.distributed is not installed \(pip install 'dpcert\[dask\]'\)"
    with pytest.raises(LearnerError, match=missing):
        import_distributed()

    class TheirError(ValueError):
        pass

    with pytest.raises(TheirError, match=missing):
        import_distributed(TheirError)


@pytest.mark.parametrize("address", ["", "nonsense", "tcp://host:99999", "tcp://127.0.0.1:1"])
def test_connect_refuses_naming_the_option(address: str) -> None:
    pytest.importorskip("distributed")
    with pytest.raises(ParameterError, match="--scheduler"):
        connect(address, "--scheduler", timeout=1.0)


def test_the_runner_still_exports_connect() -> None:
    assert runner.connect is connect
    assert runner.CONNECT_TIMEOUT == CONNECT_TIMEOUT
