"""What a check reports: the comparison at one point, over a grid, and over a hypothesis search."""

from __future__ import annotations

from dataclasses import dataclass

from verification.exactness.spec import Point, fmt

__all__ = ["BoundReport", "PointResult", "SearchReport"]


@dataclass(frozen=True)
class PointResult:
    """The comparison at one parameter point.

    Attributes
    ----------
    params : tuple of (name, value)
        The point.
    bound : float
        The closed form's value (as the library returns it: rounded up).
    exact_lo, exact_hi : float
        The certified enclosure of the exact value, rounded outward to floats.
    ratio : float
        ``bound / exact`` at the enclosure's midpoint (``inf`` when the exact value is 0).
    status : str
        ``"dominates"``, ``"violates"`` or ``"undecided"`` (see the module docstring).
    dps : int
        The precision at which the status was decided.
    """

    params: Point
    bound: float
    exact_lo: float
    exact_hi: float
    ratio: float
    status: str
    dps: int

    @property
    def as_dict(self) -> dict[str, float]:
        """The parameters as a dict."""
        return dict(self.params)

    def describe(self) -> str:
        """``alpha=21, epsilon=0.3535, ...: bound 1.4058 < exact [1.4956, 1.4956] (ratio 0.94)``."""
        where = ", ".join(f"{k}={fmt(x)}" for k, x in self.params)
        relation = {"dominates": ">=", "violates": "<", "undecided": "~"}[self.status]
        exact = (
            f"{self.exact_lo:.10g}"
            if self.exact_lo == self.exact_hi
            else f"[{self.exact_lo:.10g}, {self.exact_hi:.10g}]"
        )
        return f"{where}: bound {self.bound:.10g} {relation} exact {exact} (ratio {self.ratio:.6g})"


@dataclass(frozen=True)
class BoundReport:
    """The check of one closed form over a grid.

    ``dominates`` is true when no point violates; ``undecided`` lists the points where the
    bound equals the exact value to every precision tried (not counterexamples).
    """

    name: str
    citation: str
    reference: str
    proved: bool
    points: int
    worst_ratio: float
    worst: PointResult | None
    counterexamples: tuple[PointResult, ...]
    undecided: tuple[PointResult, ...]
    dominates: bool
    seconds: float

    @property
    def as_expected(self) -> bool:
        """Whether the outcome matches the citation: proved bounds dominate, known slips do not."""
        return self.dominates == self.proved

    def summary(self) -> str:
        """A few readable lines: verdict, tightness, counterexamples."""
        verdict = "dominates" if self.dominates else f"VIOLATED at {len(self.counterexamples)} points"
        lines = [
            f"{self.name}: {verdict} on {self.points} points ({self.seconds:.2f} s); "
            f"worst ratio bound/exact {self.worst_ratio:.6g}",
            f"  {self.citation}; compared with {self.reference}",
        ]
        if self.worst is not None:
            lines.append(f"  tightest: {self.worst.describe()}")
        for c in self.counterexamples[:5]:
            lines.append(f"  counterexample: {c.describe()}")
        if len(self.counterexamples) > 5:
            lines.append(f"  ... and {len(self.counterexamples) - 5} more")
        if self.undecided:
            lines.append(f"  {len(self.undecided)} points where the bound equals the exact value (undecided)")
        return "\n".join(lines)


@dataclass(frozen=True)
class SearchReport:
    """A hypothesis search for counterexamples over a bound's parameter space."""

    name: str
    examples: int
    counterexamples: tuple[PointResult, ...]
    worst: PointResult | None
    worst_ratio: float
    space: str

    @property
    def dominates(self) -> bool:
        """No counterexample found (which is evidence, not proof)."""
        return not self.counterexamples

    def summary(self) -> str:
        """A few readable lines."""
        found = (
            f"{len(self.counterexamples)} counterexamples" if self.counterexamples else "no counterexample"
        )
        lines = [f"{self.name}: {found} in {self.examples} examples; worst ratio {self.worst_ratio:.6g}"]
        lines.append(f"  space: {self.space}")
        if self.worst is not None:
            lines.append(f"  worst: {self.worst.describe()}")
        return "\n".join(lines)
