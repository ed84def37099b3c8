"""What a closed-form check is: its parameters, its search space, and the spec that registers it.

A :class:`BoundSpec` pairs a published closed form with the exact value it claims to bound, a
default grid, a quick grid and a search space of :class:`Dimension` s (see
:mod:`verification.exactness`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from accounting.certified import Enclosure, Mpf

__all__ = ["BoundSpec", "Dimension", "Evaluate", "Params", "Point", "always", "fmt"]

#: A parameter point: names to values, e.g. ``{"alpha": 2, "variance": 10.0, "sensitivity": 1}``.
Params = Mapping[str, float]
#: A parameter point as stored in results (hashable, ordered as the :class:`BoundSpec`'s parameters).
Point = tuple[tuple[str, float], ...]


def fmt(x: float) -> str:
    """A parameter value as reports print it (``%g`` for floats)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def always(_: dict[str, Any]) -> bool:
    """The feasibility of a check whose whole search space is cheap to compute exactly."""
    return True


@dataclass(frozen=True)
class Dimension:
    """One parameter of a search space.

    ``kind`` is ``"int"`` (uniform integers in ``[low, high]``), ``"real"`` (uniform reals),
    ``"log"`` (reals log-uniform in ``[low, high]``), ``"power2"`` (``2^k`` for integer ``k`` in
    ``[low, high]``) or ``"choice"`` (one of ``choices``).
    """

    name: str
    kind: str
    low: float = 0.0
    high: float = 0.0
    choices: tuple[float, ...] = ()

    def describe(self) -> str:
        """``alpha in 2..64 (integers)`` and the like."""
        if self.kind == "choice":
            return f"{self.name} in {{{', '.join(fmt(c) for c in self.choices)}}}"
        if self.kind == "power2":
            return f"{self.name} = 2^k, k in {int(self.low)}..{int(self.high)}"
        if self.kind == "int":
            return f"{self.name} in {int(self.low)}..{int(self.high)}"
        spacing = "log-uniform" if self.kind == "log" else "uniform"
        return f"{self.name} in [{fmt(self.low)}, {fmt(self.high)}] ({spacing})"


#: ``evaluate(params, dps) -> (bound, exact)``: the bound as an exact mpf, the exact value certified.
Evaluate = Callable[[dict[str, Any], int], tuple[Mpf, Enclosure]]


@dataclass(frozen=True)
class BoundSpec:
    """A closed form to check: what it is, what it is compared with, and where.

    Attributes
    ----------
    name : str
        The registry key.
    description : str
        What the closed form states.
    citation : str
        Paper and theorem (authors, year, result), as printed by the reports.
    reference : str
        The exact (or, for the Lemma-3 cross-checks, the derived) value it is compared with.
    parameters : tuple of str
        Parameter names, in display order.
    evaluate : callable
        ``evaluate(params, dps) -> (bound, exact enclosure)``.
    grid, quick_grid : tuple of Point
        The default grid (a few seconds) and a small one for tests.
    space : tuple of Dimension
        The search space of :func:`search_counterexamples`.
    feasible : callable
        Which points of ``space`` are in the bound's domain and cheap enough to compute exactly.
    family : str
        The noise it is about, as ``dp-audit bounds --noise`` names it (``"theorem2"`` for the
        cross-checks of the distributed MAB paper's Theorem 2 against Lemma 3).
    proved : bool
        Whether the closed form is a theorem (expected to dominate) or a known slip.
    """

    name: str
    description: str
    citation: str
    reference: str
    parameters: tuple[str, ...]
    evaluate: Evaluate
    grid: tuple[Point, ...]
    quick_grid: tuple[Point, ...]
    space: tuple[Dimension, ...]
    feasible: Callable[[dict[str, Any]], bool]
    family: str
    proved: bool = True
