"""Shared by the goodness-of-fit tests: one spawned stream per check, and a three-point sample."""

from __future__ import annotations

import numpy as np

#: One spawned stream per sampler case: independent, and reproducible.
STREAMS = np.random.SeedSequence(20240611).spawn(64)


def rng(i: int) -> np.random.Generator:
    """The ``i``-th spawned stream."""
    return np.random.default_rng(STREAMS[i])


def three_point_samples() -> np.ndarray:
    """100 samples of CenteredBinomial(2) (P = 1/4, 1/2, 1/4 on -1, 0, 1): counts 30, 40, 30."""
    return np.array([-1] * 30 + [0] * 40 + [1] * 30)
