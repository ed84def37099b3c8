"""What the mechanism tests share: the hypothesis settings, the working precision, and the checks
on enclosures."""

from __future__ import annotations

from typing import Any

from hypothesis import settings

from accounting import Enclosure, Mechanism

FAST = settings(max_examples=12, deadline=None)
DPS = 15

Mpf = Any


def overlap(a: Enclosure, b: Enclosure) -> bool:
    """Whether two enclosures of the same number can both be right."""
    return bool(a.lo <= b.hi and b.lo <= a.hi)


def answers(mech: Mechanism, epsilon: float, delta: float, alpha: float) -> list[Enclosure]:
    """The four answers of a mechanism: δ(ε), ε(δ), the Rényi divergence at ``alpha``, pure ε."""
    return [
        mech.delta(epsilon, DPS),
        mech.epsilon(delta, DPS),
        mech.rdp(alpha, DPS),
        mech.pure_epsilon(DPS),
    ]
