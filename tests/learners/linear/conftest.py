"""The fixtures of the tests of :mod:`learners.linear`: one small instance, and one recorded run."""

from __future__ import annotations

import numpy as np
import pytest

from learners.linear import RunResult, SyncRecord, make_learner
from learners.linear_instances import SyntheticInstance, draw_synthetic
from tests.learners.linear.support import AGENTS, ARMS, BATCH, DELTA, DIM, EPS, go


@pytest.fixture(scope="module")
def inst() -> SyntheticInstance:
    return draw_synthetic(np.random.default_rng(2), dim=DIM, arms=ARMS, agents=AGENTS)


@pytest.fixture(scope="module")
def recorded(inst: SyntheticInstance) -> tuple[RunResult, list[SyncRecord]]:
    records: list[SyncRecord] = []
    learner = make_learner("ldp-fedlinucb-lazy", EPS, delta=DELTA, batch=BATCH)
    result = go(learner, inst, reps=4, observer=records.append)
    return result, records
