"""Checking a closed form on a grid: at each point, does the bound dominate the certified exact value?

At each point the bound **dominates** when ``bound >= exact.hi``, **violates** when
``bound < exact.lo``, and is **undecided** otherwise; the precision is raised (``dps``, ``2 dps``,
then enough digits to resolve the bound itself) before a point is left undecided.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mpmath import mp

from accounting import validate as v
from accounting.certified import DEFAULT_DPS, Enclosure, Mpf, float_down, float_up
from accounting.progress import report
from verification.errors import ParameterError, ParameterTypeError
from verification.exactness.registry import BOUNDS, spec_named
from verification.exactness.reports import BoundReport, PointResult
from verification.exactness.spec import BoundSpec, Params

__all__ = ["check_all", "check_bound", "evaluate_point", "ratio_key", "worst_point"]

#: The highest precision (decimal digits) an undecided point is retried at.
_MAX_DPS = 300


def _classify(bound: Mpf, exact: Enclosure) -> str:
    if bound >= exact.hi:
        return "dominates"
    if bound < exact.lo:
        return "violates"
    return "undecided"


#: A ratio is reported only where the exact value is known to this relative accuracy.
_RATIO_RTOL = mp.mpf("1e-6")


def _ratio(bound: Mpf, exact: Enclosure) -> float:
    """``bound / exact`` at the midpoint; NaN where the enclosure is too wide for a ratio."""
    with mp.workdps(30):
        if exact.relative_width > _RATIO_RTOL:
            return math.nan
        mid = exact.mid
        if mid == 0 or mp.isinf(mid):
            return 1.0 if bound == mid else (math.inf if mid == 0 else 0.0)
        return float(bound / mid)


def _levels(dps: int, bound: Mpf) -> list[int]:
    """Precisions to try: ``dps``, ``2 dps``, then enough digits to resolve ``bound`` itself."""
    levels = [dps, min(_MAX_DPS, 2 * dps)]
    if bound > 0:
        with mp.workdps(20):
            needed = dps + max(0, math.ceil(float(-mp.log10(bound))))
        levels.append(min(_MAX_DPS, max(4 * dps, needed)))
    return sorted(set(levels))


def evaluate_point(spec: BoundSpec, params: dict[str, Any], dps: int) -> PointResult:
    bound, exact = spec.evaluate(params, dps)
    used = dps
    status = _classify(bound, exact)
    if status == "undecided":
        for level in _levels(dps, bound)[1:]:
            bound, exact = spec.evaluate(params, level)
            used = level
            status = _classify(bound, exact)
            if status != "undecided":
                break
    with mp.workdps(40):
        b = float_up(bound)
    return PointResult(
        params=tuple((k, params[k]) for k in spec.parameters),
        bound=b,
        exact_lo=float_down(exact.lo),
        exact_hi=float_up(exact.hi),
        ratio=_ratio(bound, exact),
        status=status,
        dps=used,
    )


def _grid(spec: BoundSpec, grid: Iterable[Params] | None, quick: bool) -> list[dict[str, Any]]:
    if grid is None:
        return [dict(p) for p in (spec.quick_grid if quick else spec.grid)]
    points: list[dict[str, Any]] = []
    for p in grid:
        if not isinstance(p, Mapping):
            raise ParameterTypeError("grid", p, "an iterable of mappings from parameter names to values")
        if set(p) != set(spec.parameters):
            raise ParameterError(
                "grid", dict(p), f"points with exactly the parameters {', '.join(spec.parameters)}"
            )
        points.append(dict(p))
    if not points:
        raise ParameterError("grid", [], "at least one point")
    return points


def ratio_key(r: PointResult) -> float:
    return math.inf if math.isnan(r.ratio) else r.ratio


def worst_point(results: Sequence[PointResult]) -> PointResult | None:
    """The point with the smallest ratio; a violation first if the ratio of none is known."""
    rated = [r for r in results if not math.isnan(r.ratio)]
    if rated:
        return min(rated, key=lambda r: r.ratio)
    bad = [r for r in results if r.status == "violates"]
    return bad[0] if bad else None


def _report(spec: BoundSpec, results: list[PointResult], seconds: float) -> BoundReport:
    worst = worst_point(results)
    bad = tuple(r for r in results if r.status == "violates")
    return BoundReport(
        name=spec.name,
        citation=spec.citation,
        reference=spec.reference,
        proved=spec.proved,
        points=len(results),
        worst_ratio=worst.ratio if worst is not None else math.nan,
        worst=worst,
        counterexamples=tuple(sorted(bad, key=ratio_key)),
        undecided=tuple(r for r in results if r.status == "undecided"),
        dominates=not bad,
        seconds=seconds,
    )


def check_bound(
    name: str, grid: Iterable[Params] | None = None, dps: int = DEFAULT_DPS, *, quick: bool = False
) -> BoundReport:
    """Check that the closed form ``name`` dominates the exact value at every point of a grid.

    Parameters
    ----------
    name : str
        A key of :data:`BOUNDS`.
    grid : iterable of mappings, optional
        Parameter points (each with exactly the bound's parameters); the registered default
        grid (or the quick one) when omitted.
    dps : int
        Working precision of the exact values, in decimal digits (raised automatically at
        undecided points, up to 300).
    quick : bool
        Use the small registered grid (for tests; about a second).

    Returns
    -------
    BoundReport
        With every counterexample (``bound < exact.lo``) and the worst ratio ``bound/exact``.
    """
    spec = spec_named(name)
    level = v.dps("dps", dps)
    points = _grid(spec, grid, quick)
    started = time.perf_counter()
    results = [evaluate_point(spec, p, level) for p in points]
    return _report(spec, results, time.perf_counter() - started)


def check_all(
    quick: bool = False, dps: int = DEFAULT_DPS, names: Iterable[str] | None = None
) -> tuple[BoundReport, ...]:
    """:func:`check_bound` for every registered closed form (or the given ``names``), default grids.

    Parameters
    ----------
    quick : bool
        Use the quick grids.
    dps : int
        Working precision of the exact values.
    names : iterable of str, optional
        A subset of :data:`BOUNDS` (all when omitted).

    Returns
    -------
    tuple of BoundReport
    """
    chosen = list(BOUNDS) if names is None else [spec_named(n).name for n in names]
    reports = []
    for i, name in enumerate(chosen):
        reports.append(check_bound(name, dps=dps, quick=quick))
        report(i + 1, len(chosen))  # to the caller's progress bar (accounting.progress), if any
    return tuple(reports)
