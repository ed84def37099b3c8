"""The result every amplification bound returns, and the checks they share.

Part of :mod:`accounting.amplification` (its conventions apply).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from accounting import validate as v
from accounting.errors import ParameterError
from accounting.mechanisms import ApproxDP

__all__ = ["DPS", "IV_DPS", "TRIVIAL", "AmplificationBound", "local_epsilon", "trivial_bound", "user_count"]

DPS: Final = 50
"""Working precision (decimal digits) of the closed forms."""

IV_DPS: Final = 30
"""Decimal digits of the interval arithmetic behind the numerical bound's anchors and the exact
shuffled randomized response."""

TRIVIAL: Final = "the trivial bound: shuffling is post-processing of the ε0-LDP reports, so (ε0, 0)-DP"
"""What a bound reports when its theorem does not apply."""


@dataclass(frozen=True)
class AmplificationBound:
    """A shuffled ``(ε, δ)`` guarantee and where it comes from.

    Attributes
    ----------
    epsilon : float
        The certified ε, rounded up. When ``valid`` is False this is the trivial guarantee
        (``ε0``, or ``ε0`` of the local mechanism), not the theorem's formula.
    delta : float
        The δ the guarantee holds with (the requested δ, or the δ the theorem produces).
    bound : str
        The short name (``"fmt-numerical"``, ``"fmt-closed"``, ``"blanket"``, ...).
    theorem : str
        The paper and theorem it implements.
    lower : float or None
        For the numerical bound: the largest ε (rounded down) at which the analysis's own δ is
        certainly above the target — no refinement of the computation can go below it, so
        ``[lower, epsilon]`` is the gap. For
        :func:`~accounting.amplification.randomized_response_exact`, the lower end of
        the exact value's enclosure. ``None`` for closed forms.
    valid : bool
        Whether the number is the theorem's: False when a hypothesis fails (or the theorem
        certifies nothing below the trivial bound), and ``epsilon`` is then the trivial one.
    conditions : str
        The hypotheses and how they were checked (or which one fails).
    """

    epsilon: float
    delta: float
    bound: str
    theorem: str
    lower: float | None
    valid: bool
    conditions: str

    def event(self) -> ApproxDP:
        """This guarantee as an event an :class:`~accounting.accountant.Accountant` composes
        (for the replace-one relation of the shuffle model's theorems)."""
        return ApproxDP(self.epsilon, self.delta, f"{self.bound}: {self.theorem}")


def local_epsilon(value: object, name: str = "epsilon0") -> float:
    """A local randomizer's ``ε0``, validated: a real in ``(0, 100]``."""
    e0 = v.positive(name, value)
    if e0 > 100:
        raise ParameterError(name, value, "a local ε0 in (0, 100]")
    return e0


def user_count(value: object, name: str = "users") -> int:
    """The number ``n >= 1`` of shuffled reports, validated."""
    return v.integer(name, value, minimum=1)


def trivial_bound(e0: float, dl: float, bound: str, theorem: str, why: str) -> AmplificationBound:
    """The trivial guarantee ``(ε0, 0)`` (with the requested ``δ``), ``valid=False``, saying ``why``
    the theorem named does not apply."""
    return AmplificationBound(e0, dl, bound, theorem, None, False, f"{why}; reporting {TRIVIAL}")
