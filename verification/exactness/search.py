"""A hypothesis search for counterexamples over a closed form's documented parameter space."""

from __future__ import annotations

import math
from typing import Any

from accounting import validate as v
from accounting.certified import DEFAULT_DPS
from accounting.errors import UnsupportedError
from verification.exactness.checking import evaluate_point, ratio_key, worst_point
from verification.exactness.registry import spec_named
from verification.exactness.reports import PointResult, SearchReport
from verification.exactness.spec import BoundSpec, Dimension, always

__all__ = ["search_counterexamples"]


def _strategy(dim: Dimension) -> Any:
    from hypothesis import strategies as st

    if dim.kind == "int":
        return st.integers(int(dim.low), int(dim.high))
    if dim.kind == "real":
        return st.floats(dim.low, dim.high, allow_nan=False, allow_infinity=False)
    if dim.kind == "log":
        lo, hi = math.log10(dim.low), math.log10(dim.high)
        return st.floats(lo, hi, allow_nan=False).map(lambda e: min(dim.high, max(dim.low, float(10**e))))
    if dim.kind == "power2":
        return st.integers(int(dim.low), int(dim.high)).map(lambda k: 2**k)
    if dim.kind == "choice":
        return st.sampled_from(dim.choices)
    raise ValueError(f"unknown dimension kind {dim.kind!r}")


def _describe_space(spec: BoundSpec) -> str:
    ranges = "; ".join(d.describe() for d in spec.space)
    if spec.feasible is always or not spec.feasible.__doc__:
        return ranges
    return f"{ranges}; restricted to: {spec.feasible.__doc__.strip().splitlines()[0]}"


def search_counterexamples(
    name: str, max_examples: int = 100, *, dps: int = DEFAULT_DPS, seed: int = 0
) -> SearchReport:
    """Search the bound's parameter space for points where it fails to dominate.

    A hypothesis ``@given`` runner over :attr:`BoundSpec.space` (each bound's documented
    ranges; see ``Dimension.describe``) that evaluates the bound and the exact value at every
    example, records every counterexample, and steers generation with
    ``hypothesis.target`` towards the smallest ratio ``bound/exact``. Points outside the
    bound's domain, or too expensive to compute exactly (:attr:`BoundSpec.feasible`,
    :class:`~accounting.errors.UnsupportedError`), are rejected. Deterministic for a given
    ``seed`` (no example database).

    Parameters
    ----------
    name : str
        A key of :data:`BOUNDS`.
    max_examples : int
        Number of valid examples hypothesis runs, ``>= 1``.
    dps : int
        Working precision of the exact values.
    seed : int
        The hypothesis seed.

    Returns
    -------
    SearchReport
    """
    from hypothesis import HealthCheck, Phase, given, reject, settings, target
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    spec = spec_named(name)
    count = v.integer("max_examples", max_examples, minimum=1)
    level = v.dps("dps", dps)
    seed_value = v.integer("seed", seed, minimum=0)
    results: list[PointResult] = []
    strategy = st.fixed_dictionaries({d.name: _strategy(d) for d in spec.space})

    @hypothesis_seed(seed_value)
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate, Phase.target],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(strategy)
    def run(params: dict[str, Any]) -> None:
        if not spec.feasible(params):
            reject()
        try:
            result = evaluate_point(spec, params, level)
        except UnsupportedError:
            reject()
        results.append(result)
        if math.isfinite(result.ratio):  # NaN (enclosure too wide) or inf (exact value 0): no target
            target(-result.ratio, label="-(bound/exact)")

    run()
    worst = worst_point(results)
    bad = {r.params: r for r in results if r.status == "violates"}
    return SearchReport(
        name=spec.name,
        examples=len(results),
        counterexamples=tuple(sorted(bad.values(), key=ratio_key)),
        worst=worst,
        worst_ratio=worst.ratio if worst is not None else math.nan,
        space=_describe_space(spec),
    )
