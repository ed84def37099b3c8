"""What every mechanism answers (:class:`Mechanism`), and the two helpers its answers share."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from fractions import Fraction

import mpmath

from accounting.certified import Enclosure, float_up
from accounting.neighbouring import Neighbouring
from accounting.noise import DEFAULT_DPS

__all__ = ["Mechanism", "float_at_least", "max_enclosure"]


def max_enclosure(enclosures: list[Enclosure]) -> Enclosure:
    """The enclosure of the maximum of several certified values."""
    return Enclosure(max(e.lo for e in enclosures), max(e.hi for e in enclosures))


class Mechanism(ABC):
    """What a mechanism can answer. Every answer is a certified :class:`Enclosure`."""

    @abstractmethod
    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The smallest ε with the mechanism ``(ε, δ)``-DP."""

    @abstractmethod
    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The smallest δ with the mechanism ``(ε, δ)``-DP."""

    @abstractmethod
    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The exact Rényi DP curve at order ``α`` (real ``> 1`` or ``inf``)."""

    @abstractmethod
    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """The pure-DP ε (``D_∞``); ``inf`` when the mechanism has none."""

    @abstractmethod
    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``ρ = sup_{α > 1} D_α / α`` (zero-concentrated DP), ``inf`` where unbounded."""

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        """The mechanism whose answers are this one's under ``neighbouring``.

        Itself where the relation does not change the worst pair (additive noise, whose
        sensitivity is stated for the relation); a view with the relation's own pairs where it
        does (a distributed sum under add-remove); a cited guarantee refuses a relation other than
        its theorem's with :class:`~accounting.errors.UnsupportedEventError`.
        """
        Neighbouring.parse(neighbouring)
        return self


def float_at_least(value: object) -> float:
    """The smallest float ``>= value`` (a finite real already validated), compared exactly."""
    if isinstance(value, mpmath.mpf):
        return float_up(value)
    f = float(value)  # type: ignore[arg-type]
    as_ratio = getattr(value, "as_integer_ratio", None)
    if as_ratio is not None and Fraction(f) < Fraction(*as_ratio()):
        f = math.nextafter(f, math.inf)
    return f
