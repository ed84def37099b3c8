"""The fixtures of the tests of :mod:`learners.phased`: a small instance."""

from __future__ import annotations

import numpy as np
import pytest

from learners.phased_instances import PhasedInstance, draw_instance
from tests.learners.phased.support import ARMS, DIM


@pytest.fixture(scope="module")
def inst() -> PhasedInstance:
    return draw_instance(np.random.default_rng(3), arms=ARMS, dim=DIM)
