"""The auditor on the shuffled outputs of randomized response, at the ε the amplification bound
accounts (the numerical bound of Feldman, McMillan & Talwar 2021, "Hiding among the clones")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from accounting.shuffle import fmt_numerical
from verification.audit import audit


@dataclass(frozen=True)
class ShuffledRandomizedResponse:
    """``n`` users run binary randomized response with ``ε0``; the shuffler reveals the multiset,
    i.e. the count of ones. Neighbours: user 1 holds 0 (``D``) or 1 (``D'``); the others hold 0."""

    epsilon0: float
    users: int

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        keep = math.exp(self.epsilon0) / (math.exp(self.epsilon0) + 1)
        others = self.users - 1
        first = rng.binomial(others, 1 - keep, size) + rng.binomial(1, 1 - keep, size)
        second = rng.binomial(others, 1 - keep, size) + rng.binomial(1, keep, size)
        return first.astype(np.int64), second.astype(np.int64)


def test_auditor_finds_no_violation_of_the_amplified_epsilon() -> None:
    epsilon0, users, delta = 3.0, 200, 1e-3
    bound = fmt_numerical(epsilon0, users, delta)
    assert bound.valid
    assert bound.epsilon < epsilon0  # amplification happened
    result = audit(
        ShuffledRandomizedResponse(epsilon0, users),
        delta,
        bound.epsilon,
        samples=400_000,
        chunk=200_000,
        seed=5,
    )
    assert result.verdict != "violation"
    assert result.epsilon_lower <= bound.epsilon


def test_auditor_refutes_a_claim_below_the_truth() -> None:
    """The same instance claimed at a tenth of its local ε0 with δ = 0 is caught."""
    result = audit(ShuffledRandomizedResponse(3.0, 2), 0.0, 0.3, samples=400_000, chunk=200_000, seed=6)
    assert result.verdict == "violation"
