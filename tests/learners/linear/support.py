"""Helpers of the tests of :mod:`learners.linear`: a small instance's sizes, a privacy setting, runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from learners.linear import (
    Learner,
    RunResult,
    run,
)
from learners.linear_instances import LinearInstance

# one small instance and one privacy setting for the whole module (calibrations are memoized)
DIM, ARMS, AGENTS = 4, 10, 4
BATCH, HORIZON = 5, 320  # K = 64 syncs, κ = 7
EPS, DELTA = 1.0, 0.1


def tapes(n: int, base: int = 0) -> list[np.random.Generator]:
    return [np.random.default_rng(base + s) for s in range(n)]


def go(
    learner: Learner,
    inst: LinearInstance | Sequence[LinearInstance],
    horizon: int = HORIZON,
    reps: int = 2,
    **kw: Any,
) -> RunResult:
    kw.setdefault("rng", np.random.default_rng(11))
    kw.setdefault("checkpoints", horizon)
    return run(learner, inst, horizon, tapes=kw.pop("tapes", tapes(reps)), **kw)
