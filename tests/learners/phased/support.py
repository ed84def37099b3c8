"""Helpers of the tests of :mod:`learners.phased`: a small instance's sizes, a privacy setting, runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from learners.phased import (
    Learner,
    PhaseRecord,
    RunResult,
    run,
)
from learners.phased_instances import PhasedInstance

# a small instance for most tests (the paper's k = 1000, d = 20 only in the sanity run)
ARMS, DIM = 40, 4
EPS, DELTA = 1.0, 0.25


def tapes(n: int, base: int = 0) -> list[np.random.Generator]:
    return [np.random.default_rng(base + s) for s in range(n)]


def go(
    learner: Learner,
    inst: PhasedInstance | Sequence[PhasedInstance],
    horizon: int = 2**12,
    reps: int = 2,
    **kw: Any,
) -> tuple[RunResult, list[PhaseRecord]]:
    records: list[PhaseRecord] = []
    kw.setdefault("rng", np.random.default_rng(11))
    kw.setdefault("checkpoints", 64)
    res = run(learner, inst, horizon, tapes=kw.pop("tapes", tapes(reps)), observer=records.append, **kw)
    return res, records


def coords(rec: PhaseRecord) -> np.ndarray[Any, np.dtype[np.bool_]]:
    return np.asarray(rec.support >= 0)
