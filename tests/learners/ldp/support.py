"""Helpers of the tests of :mod:`learners.ldp`: sample sizes, the classic σ, and checks."""

from __future__ import annotations

import math

import numpy as np

from learners.ldp_instances import (
    strongly_convex_quadratic,
)

DELTA = 1e-3
N = 200_000  # samples for the std checks: relative sd of a sample std ~ 1/sqrt(2N) = 0.0016


def classic(eps: float, delta: float, sens: float) -> float:
    return sens * math.sqrt(2 * math.log(1.25 / delta)) / eps


def std_close(samples: np.ndarray, sd: float, tol: float = 0.01) -> None:
    assert abs(float(np.std(samples)) / sd - 1) < tol


def slope(horizons: list[int], regrets: list[float]) -> float:
    return float(np.polyfit(np.log(horizons), np.log(regrets), 1)[0])


QUAD = strongly_convex_quadratic(3, np.array([0.6, 0.3, 0.0]))
