"""Published closed forms against exact values: does each bound dominate, and how tightly?

Every closed form in :mod:`accounting.bounds` that claims to bound a privacy quantity is
compared, over a grid of parameters, with the exact value the library certifies
(:mod:`accounting.mechanisms`, i.e. :mod:`accounting.divergence`). The exact value is an
enclosure ``[lo, hi]`` of the true one, so at each point the bound

* **dominates** when ``bound >= hi`` (so ``bound >= true``),
* **violates** when ``bound < lo`` (a counterexample: the closed form understates the loss),
* is **undecided** otherwise. The precision is raised (``dps``, ``2 dps``, then enough digits
  to resolve the bound itself) before a point is left undecided; what remains are points
  where the bound *equals* the exact value (Fact 3's ``ε = Δ/b`` when ``Δ/b`` is a float,
  CKS's ``αρ`` when ``αΔ`` is an integer), which no finite precision separates.

The tightness ratio is ``bound / exact`` (at the enclosure's midpoint); the worst is the
smallest one. :data:`BOUNDS` registers each check with its citation, what it is compared
with, a default grid (a few seconds), a quick grid (for tests) and a search space for
:func:`search_counterexamples`, which runs a hypothesis search (targeted at the smallest
ratio) over that space.

Search ranges (:attr:`BoundSpec.space`, printed by :attr:`SearchReport.space`): orders up to
64 (16 for sums of discrete Gaussians and Theorem 4, 200 for the exact Theorem-2 checks, 1000
for the Lemma-3 cross-checks); σ from 0.2 to 50, Skellam variances from 0.5 to 5000, ε from
0.01 to 10 and s from 1 to 100 (log-uniform), n up to 2^21 for the closed-form-only checks;
each restricted to the bound's domain and to points whose exact value costs about a second
(:attr:`BoundSpec.feasible`).

The Theorem-2 closed forms of the distributed MAB paper (spec §3.2) are checked twice:
against the exact per-batch Rényi divergence of the Skellam noise the protocol adds, and
against the Lemma-3 value they were derived from. The second comparison is where they fail
(spec §3.2 [RECON], §10 item 1): the library accounts with exact values, never with them.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from mpmath import mp

from accounting import bounds
from accounting import validate as v
from accounting.certified import DEFAULT_DPS, Enclosure, Mpf, float_down, float_up
from accounting.errors import UnsupportedError
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.noise import DiscreteGaussian, DiscreteLaplace, Skellam
from accounting.papers import distributed_dp_mab as dmab
from verification.errors import ParameterError, ParameterTypeError

__all__ = [
    "BOUNDS",
    "BoundReport",
    "BoundSpec",
    "Dimension",
    "PointResult",
    "SearchReport",
    "check_all",
    "check_bound",
    "search_counterexamples",
]

#: A parameter point: names to values, e.g. ``{"alpha": 2, "variance": 10.0, "sensitivity": 1}``.
Params = Mapping[str, float]
#: A parameter point as stored in results (hashable, ordered as the spec's parameters).
Point = tuple[tuple[str, float], ...]

#: The highest precision (decimal digits) an undecided point is retried at.
_MAX_DPS = 300


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------


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
        where = ", ".join(f"{k}={_fmt(x)}" for k, x in self.params)
        relation = {"dominates": ">=", "violates": "<", "undecided": "~"}[self.status]
        exact = (
            f"{self.exact_lo:.10g}"
            if self.exact_lo == self.exact_hi
            else f"[{self.exact_lo:.10g}, {self.exact_hi:.10g}]"
        )
        return f"{where}: bound {self.bound:.10g} {relation} exact {exact} (ratio {self.ratio:.6g})"


def _fmt(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


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


# ---------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------


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
            return f"{self.name} in {{{', '.join(_fmt(c) for c in self.choices)}}}"
        if self.kind == "power2":
            return f"{self.name} = 2^k, k in {int(self.low)}..{int(self.high)}"
        if self.kind == "int":
            return f"{self.name} in {int(self.low)}..{int(self.high)}"
        spacing = "log-uniform" if self.kind == "log" else "uniform"
        return f"{self.name} in [{_fmt(self.low)}, {_fmt(self.high)}] ({spacing})"


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
        Paper and theorem (names as in ``papers/``).
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
    proved: bool = True


def _product(**axes: Sequence[float]) -> tuple[Point, ...]:
    names = list(axes)
    return tuple(tuple(zip(names, values, strict=True)) for values in itertools.product(*axes.values()))


def _always(_: dict[str, Any]) -> bool:
    return True


def _times(alpha: float, value: float) -> Mpf:
    """``α · value`` exactly (two doubles multiply exactly in 106 bits)."""
    with mp.workprec(128):
        return mp.mpf(alpha) * mp.mpf(value)


def _binary(x: float) -> Fraction:
    """The exact value of a float (or int) parameter.

    The closed forms evaluate ``mp.mpf(ε)``, the binary value of the float, so the exact side
    uses the same number (``g`` itself follows :func:`accounting.papers.distributed_dp_mab.theorem2_g`,
    which reads the decimal the float prints as; only the integer it returns matters).
    """
    return Fraction(x)


# -- the individual checks --------------------------------------------------------------


def _int(p: dict[str, Any], name: str, minimum: int = 1) -> int:
    """An integer parameter of a point (``2.0`` is accepted, ``2.5`` names the parameter)."""
    return v.integer(name, p[name], minimum=minimum)


def _skellam_akl(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    a, var, d = _int(p, "alpha", 2), p["variance"], _int(p, "sensitivity")
    bound = mp.mpf(bounds.skellam_rdp_akl(a, var, d))
    return bound, AdditiveNoise(Skellam(var), d).rdp(a, dps)


def _dg_rdp(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    a, sigma, d = p["alpha"], p["sigma"], _int(p, "sensitivity")
    bound = _times(a, bounds.discrete_gaussian_rho_cks(sigma, d))
    return bound, AdditiveNoise(DiscreteGaussian(sigma), d).rdp(a, dps)


def _dg_delta(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    sigma, eps, d = p["sigma"], p["epsilon"], _int(p, "sensitivity")
    bound = mp.mpf(bounds.discrete_gaussian_delta_cks(sigma, eps, d))
    return bound, AdditiveNoise(DiscreteGaussian(sigma), d).delta(eps, dps)


def _dg_epsilon(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    sigma, delta, d = p["sigma"], p["delta"], _int(p, "sensitivity")
    bound = mp.mpf(bounds.discrete_gaussian_epsilon_zcdp(sigma, delta, d))
    return bound, AdditiveNoise(DiscreteGaussian(sigma), d).epsilon(delta, dps)


def _sum_dg_rdp(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    a, sigma, n, d = p["alpha"], p["sigma"], _int(p, "users"), _int(p, "sensitivity")
    bound = _times(a, bounds.sum_discrete_gaussians_rho_kls(sigma, n, d))
    return bound, DistributedSum(DiscreteGaussian(sigma), n, d).rdp(a, dps)


def _dl_pure(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    b, d = p["scale"], _int(p, "sensitivity")
    bound = mp.mpf(bounds.discrete_laplace_pure_epsilon(b, d))
    return bound, AdditiveNoise(DiscreteLaplace(b), d).pure_epsilon(dps)


def _theorem4_sigma(p: dict[str, Any]) -> tuple[int, Fraction | float]:
    """``g = ceil(sε√n)`` and the per-user ``σ = g/(ε√n)`` of Theorem 4.

    Exact (a Fraction) when ``n`` is a perfect square; otherwise rounded *up* to a float, so
    the mechanism checked adds at least the protocol's noise and a rounding of σ cannot pose
    as a counterexample (rounding to nearest did, at the 1e-16 level).
    """
    eps, s, n = p["epsilon"], p["scale"], _int(p, "users")
    g = dmab.theorem2_g(eps, s, n)
    root = math.isqrt(n)
    if root * root == n:
        return g, Fraction(g) / (_binary(eps) * root)
    with mp.workdps(40):
        return g, float_up(mp.mpf(g) / (mp.mpf(eps) * mp.sqrt(n)))


def _theorem4(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    a, eps, s, horizon, n = p["alpha"], p["epsilon"], p["scale"], _int(p, "horizon"), _int(p, "users")
    e_hat = dmab.theorem4_epsilon(eps, s, horizon)
    with mp.workprec(256):
        bound = mp.mpf(a) * mp.mpf(e_hat) ** 2 / 2  # exact: 53-bit operands
    g, sigma = _theorem4_sigma(p)
    return bound, DistributedSum(DiscreteGaussian(sigma), n, g).rdp(a, dps)


def _theorem2_exact(p: dict[str, Any], dps: int) -> Enclosure:
    """Exact per-batch RDP of Theorem 2's protocol: ``Sk(0, g²/ε²)`` total noise, sensitivity ``g``."""
    return _theorem2_exact_at(
        _int(p, "alpha", 2), float(p["epsilon"]), float(p["scale"]), _int(p, "users"), dps
    )


@lru_cache(maxsize=1024)
def _theorem2_exact_at(alpha: int, eps: float, scale: float, users: int, dps: int) -> Enclosure:
    # Cached: the three Theorem-2 checks compare three closed forms with the same exact values.
    g = dmab.theorem2_g(eps, scale, users)
    variance = Fraction(g) ** 2 / _binary(eps) ** 2
    return AdditiveNoise(Skellam(variance), g).rdp(alpha, dps)


def _theorem2_headline(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_headline(_int(p, "alpha", 2), p["epsilon"], p["scale"])
    return mp.mpf(bound), _theorem2_exact(p, dps)


def _theorem2_paper(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_paper(_int(p, "alpha", 2), p["epsilon"], p["scale"], _int(p, "users"))
    return mp.mpf(bound), _theorem2_exact(p, dps)


def _theorem2_lemma3(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_lemma3(_int(p, "alpha", 2), p["epsilon"], p["scale"], _int(p, "users"))
    return mp.mpf(bound), _theorem2_exact(p, dps)


def _lemma3_reference(p: dict[str, Any]) -> Enclosure:
    value = dmab.skellam_rdp_theorem2_lemma3(_int(p, "alpha", 2), p["epsilon"], p["scale"], _int(p, "users"))
    return Enclosure.from_rounded_up(value)


def _headline_vs_lemma3(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_headline(_int(p, "alpha", 2), p["epsilon"], p["scale"])
    return mp.mpf(bound), _lemma3_reference(p)


def _paper_vs_lemma3(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_paper(_int(p, "alpha", 2), p["epsilon"], p["scale"], _int(p, "users"))
    return mp.mpf(bound), _lemma3_reference(p)


def _theorem2_feasible(p: dict[str, Any]) -> bool:
    """σ = g/ε <= 120, αg <= 2000 and αε <= 25: exact Skellam RDP in about a second at most.

    The cost of the exact Rényi sum grows with the total noise's σ = g/ε (the table), with
    ``αg`` (the window) and with ``αε`` (the tail bound at order 2α is about ``α²ε²``):
    ``σ <= 120``, ``αg <= 2000`` and ``αε <= 25`` keep it small.
    """
    eps, alpha = float(p["epsilon"]), _int(p, "alpha", 2)
    g = dmab.theorem2_g(p["epsilon"], p["scale"], _int(p, "users"))
    return g / eps <= 120 and alpha * g <= 2000 and alpha * eps <= 25


def _theorem4_feasible(p: dict[str, Any]) -> bool:
    """n <= T/2 (Theorem 4's proof), g <= 8 and σ√n <= 40 (exact sums of discrete Gaussians stay cheap)."""
    n, horizon = _int(p, "users"), _int(p, "horizon")
    if n > horizon // 2:
        return False
    g, sigma = _theorem4_sigma(p)
    return g <= 8 and float(sigma) * math.sqrt(n) <= 40


def _dg_delta_feasible(p: dict[str, Any]) -> bool:
    """εσ <= 12Δ: δ stays above about e^-75, small enough to resolve at moderate precision."""
    return float(p["epsilon"]) * float(p["sigma"]) <= 12 * _int(p, "sensitivity")


def _sum_dg_feasible(p: dict[str, Any]) -> bool:
    """αΔ <= 24σ: the exact Rényi window grows fast with αΔ/σ (60 s at 94, with 16 users)."""
    return float(p["alpha"]) * _int(p, "sensitivity") <= 24 * float(p["sigma"])


def _skellam_feasible(p: dict[str, Any]) -> bool:
    """αΔ <= 40 max(1, σ) + 40: the exact Rényi window grows with αΔ/σ (kept under ~50 000 points)."""
    return float(p["alpha"]) * _int(p, "sensitivity") <= 40 * math.sqrt(max(1.0, float(p["variance"]))) + 40


_THEOREM2_GRID = tuple(
    p
    for p in _product(
        alpha=[2, 21, 100], epsilon=[0.1, 0.2, 0.3535, 1.0, 5.0], scale=[1, 2, 10], users=[2, 32, 256]
    )
    if _theorem2_feasible(dict(p))
)
_THEOREM2_QUICK = _product(alpha=[2, 21], epsilon=[0.2, 0.3535, 1.0], scale=[2], users=[2, 32])
#: The spec's grid (§3.2: ε in [0.01, 10], s in {1, 2, 5, 10, 100}, n = 2..2^21, α = 2..1000),
#: thinned; the closed forms only, so it is cheap.
_LEMMA3_GRID = _product(
    alpha=[2, 3, 5, 10, 21, 50, 72, 100, 200, 500, 1000],
    epsilon=[0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.3535, 0.5, 0.7, 1.0, 2.0, 5.0, 10.0],
    scale=[1, 2, 5, 10, 100],
    users=[2, 4, 8, 32, 256, 2**11, 2**16, 2**21],
)
_LEMMA3_QUICK = _product(alpha=[2, 21, 100], epsilon=[0.2, 0.3535, 1.0], scale=[2, 10], users=[2, 1024])
_THEOREM2_SPACE = (
    Dimension("alpha", "int", 2, 200),
    Dimension("epsilon", "log", 0.01, 10.0),
    Dimension("scale", "log", 1.0, 100.0),
    Dimension("users", "power2", 0, 12),
)
_LEMMA3_SPACE = (
    Dimension("alpha", "int", 2, 1000),
    Dimension("epsilon", "log", 0.01, 10.0),
    Dimension("scale", "log", 1.0, 100.0),
    Dimension("users", "power2", 0, 21),
)
_THEOREM2_PARAMS = ("alpha", "epsilon", "scale", "users")
_SPEC32 = "Chowdhury & Zhou 2023, Theorem 2 (spec §3.2)"
_EXACT_T2 = "exact D_α of Sk(0, g²/ε²) shifted by g, g = ceil(sε√n) (AdditiveNoise(Skellam).rdp)"

_SPECS: tuple[BoundSpec, ...] = (
    BoundSpec(
        name="skellam_rdp_akl",
        description="RDP of Skellam noise: αΔ²/(2σ²) + min{((2α-1)Δ² + 6Δ)/(4σ⁴), 3Δ/(2σ²)}",
        citation="Agarwal, Kairouz & Liu 2021, Thm 3.5 = spec Lemma 3 (§3.2)",
        reference="AdditiveNoise(Skellam(σ²), Δ).rdp(α) at integer α",
        parameters=("alpha", "variance", "sensitivity"),
        evaluate=_skellam_akl,
        grid=_product(alpha=[2, 3, 8, 32], variance=[1.0, 4.0, 20.0, 100.0, 1000.0], sensitivity=[1, 2, 5]),
        quick_grid=_product(alpha=[2, 16], variance=[2.0, 50.0], sensitivity=[1, 3]),
        space=(
            Dimension("alpha", "int", 2, 64),
            Dimension("variance", "log", 0.5, 5000.0),
            Dimension("sensitivity", "int", 1, 8),
        ),
        feasible=_skellam_feasible,
    ),
    BoundSpec(
        name="discrete_gaussian_rdp_cks",
        description="RDP of the discrete Gaussian: α·ρ with ρ = Δ²/(2σ²)",
        citation="Canonne, Kamath & Steinke 2020, Thm 4 (spec Fact 2, §2.5)",
        reference="AdditiveNoise(DiscreteGaussian(σ), Δ).rdp(α)",
        parameters=("alpha", "sigma", "sensitivity"),
        evaluate=_dg_rdp,
        grid=_product(
            alpha=[1.5, 2, 3.25, 5.5, 16], sigma=[0.3, 0.5, 1.0, 2.0, 5.0, 20.0], sensitivity=[1, 3]
        ),
        quick_grid=_product(alpha=[1.5, 3.25], sigma=[0.5, 2.0], sensitivity=[1, 2]),
        space=(
            Dimension("alpha", "real", 1.01, 64.0),
            Dimension("sigma", "log", 0.2, 50.0),
            Dimension("sensitivity", "int", 1, 5),
        ),
        feasible=_always,
    ),
    BoundSpec(
        name="discrete_gaussian_delta_cks",
        description="tight δ(ε) of the discrete Gaussian: P[Y > εσ²/Δ - Δ/2] - e^ε P[Y > εσ²/Δ + Δ/2]",
        citation="Canonne, Kamath & Steinke 2020, Thm 7",
        reference="AdditiveNoise(DiscreteGaussian(σ), Δ).delta(ε)",
        parameters=("sigma", "epsilon", "sensitivity"),
        evaluate=_dg_delta,
        grid=tuple(
            p
            for p in _product(
                sigma=[0.3, 0.5, 1.0, 2.0, 5.0, 20.0], epsilon=[0.0, 0.1, 0.5, 1.0, 2.0], sensitivity=[1, 3]
            )
            if _dg_delta_feasible(dict(p))
        ),
        quick_grid=_product(sigma=[0.5, 2.0], epsilon=[0.0, 1.0], sensitivity=[1, 2]),
        space=(
            Dimension("sigma", "log", 0.2, 50.0),
            Dimension("epsilon", "real", 0.0, 6.0),
            Dimension("sensitivity", "int", 1, 5),
        ),
        feasible=_dg_delta_feasible,
    ),
    BoundSpec(
        name="discrete_gaussian_epsilon_zcdp",
        description="ε(δ) of the discrete Gaussian through zCDP: ρ + 2 sqrt(ρ ln(1/δ))",
        citation="Bun & Steinke 2016, Prop. 1.3, with ρ of Canonne, Kamath & Steinke 2020",
        reference="AdditiveNoise(DiscreteGaussian(σ), Δ).epsilon(δ)",
        parameters=("sigma", "delta", "sensitivity"),
        evaluate=_dg_epsilon,
        grid=_product(sigma=[0.5, 1.0, 2.0, 5.0, 20.0], delta=[1e-3, 1e-6, 1e-10], sensitivity=[1, 2]),
        quick_grid=_product(sigma=[1.0, 5.0], delta=[1e-3, 1e-6], sensitivity=[1]),
        space=(
            Dimension("sigma", "log", 0.3, 30.0),
            Dimension("delta", "log", 1e-12, 0.1),
            Dimension("sensitivity", "int", 1, 3),
        ),
        feasible=_always,
    ),
    BoundSpec(
        name="sum_discrete_gaussians_rdp_kls",
        description=(
            "RDP of a sum of n discrete Gaussians: α·ε²/2 with ε = min{sqrt(Δ²/(nσ²) + ξ/2), Δ/(√nσ) + ξ}"
        ),
        citation="Kairouz, Liu & Steinke 2021, Prop. 13 = spec Lemma 4 (§3.3)",
        reference="DistributedSum(DiscreteGaussian(σ), n, Δ).rdp(α)",
        parameters=("alpha", "sigma", "users", "sensitivity"),
        evaluate=_sum_dg_rdp,
        grid=_product(
            alpha=[1.5, 2, 8], sigma=[0.5, 0.75, 1.0, 2.0], users=[1, 2, 4, 16], sensitivity=[1, 2]
        ),
        quick_grid=_product(alpha=[2, 8], sigma=[0.5, 1.0], users=[2, 4], sensitivity=[1]),
        space=(
            Dimension("alpha", "real", 1.01, 16.0),
            Dimension("sigma", "real", 0.5, 3.0),
            Dimension("users", "int", 1, 16),
            Dimension("sensitivity", "int", 1, 3),
        ),
        feasible=_sum_dg_feasible,
    ),
    BoundSpec(
        name="discrete_laplace_pure_epsilon",
        description="pure ε of the discrete Laplace mechanism: Δ/b",
        citation="Chowdhury & Zhou 2023, Fact 3 (spec §3.1)",
        reference="AdditiveNoise(DiscreteLaplace(b), Δ).pure_epsilon()",
        parameters=("scale", "sensitivity"),
        evaluate=_dl_pure,
        grid=_product(scale=[0.5, 0.7, 1.0, 3.0, 8.0, 10.0, 1000.0], sensitivity=[1, 2, 3, 10]),
        quick_grid=_product(scale=[0.7, 3.0, 10.0], sensitivity=[1, 3]),
        space=(Dimension("scale", "log", 0.05, 1e4), Dimension("sensitivity", "int", 1, 100)),
        feasible=_always,
    ),
    BoundSpec(
        name="theorem4_epsilon",
        description="per-batch zCDP of Dist-CDP-SE: ε̂ = min{sqrt(ε² + ξ/2), ε + ξ}, ξ over k < T/2",
        citation="Chowdhury & Zhou 2023, Theorem 4 (spec §3.3)",
        reference="DistributedSum(DiscreteGaussian(g/(ε√n)), n, g).rdp(α), g = ceil(sε√n), n <= T/2",
        parameters=("alpha", "epsilon", "scale", "horizon", "users"),
        evaluate=_theorem4,
        grid=tuple(
            p
            for p in _product(
                alpha=[2, 8], epsilon=[0.1, 0.5, 0.9], scale=[1, 2], horizon=[32], users=[1, 4, 16]
            )
            if _theorem4_feasible(dict(p))
        ),
        quick_grid=_product(alpha=[2], epsilon=[0.5], scale=[1], horizon=[8], users=[1, 4]),
        space=(
            Dimension("alpha", "real", 1.01, 16.0),
            Dimension("epsilon", "real", 0.01, 0.99),
            Dimension("scale", "real", 1.0, 4.0),
            Dimension("horizon", "int", 2, 64),
            Dimension("users", "int", 1, 32),
        ),
        feasible=_theorem4_feasible,
    ),
    BoundSpec(
        name="skellam_rdp_theorem2_headline",
        description="Theorem 2 headline: αε²/2 + min{(2α-1)ε²/(4s²) + 3ε/(2s³), 3ε²/(2s)}",
        citation=_SPEC32,
        reference=_EXACT_T2,
        parameters=_THEOREM2_PARAMS,
        evaluate=_theorem2_headline,
        grid=_THEOREM2_GRID,
        quick_grid=_THEOREM2_QUICK,
        space=_THEOREM2_SPACE,
        feasible=_theorem2_feasible,
    ),
    BoundSpec(
        name="skellam_rdp_theorem2_paper",
        description=(
            "Theorem 2 per batch, as printed: αε²/2 + min{(2α-1)ε²/(4s²n) + 3ε/(2s³n^1.5), 3ε²/(2s√n)}"
        ),
        citation=_SPEC32 + ", proof",
        reference=_EXACT_T2,
        parameters=_THEOREM2_PARAMS,
        evaluate=_theorem2_paper,
        grid=_THEOREM2_GRID,
        quick_grid=_THEOREM2_QUICK,
        space=_THEOREM2_SPACE,
        feasible=_theorem2_feasible,
    ),
    BoundSpec(
        name="skellam_rdp_theorem2_lemma3",
        description="Theorem 2 per batch from Lemma 3 with the actual integers g and n",
        citation=_SPEC32 + ", implementation rule; Agarwal, Kairouz & Liu 2021, Thm 3.5",
        reference=_EXACT_T2,
        parameters=_THEOREM2_PARAMS,
        evaluate=_theorem2_lemma3,
        grid=_THEOREM2_GRID,
        quick_grid=_THEOREM2_QUICK,
        space=_THEOREM2_SPACE,
        feasible=_theorem2_feasible,
    ),
    BoundSpec(
        name="theorem2_headline_vs_lemma3",
        description="Theorem 2 headline against the Lemma-3 value it is derived from",
        citation=_SPEC32 + " [RECON] discrepancy; §10 item 1",
        reference="skellam_rdp_theorem2_lemma3(α, ε, s, n) (Lemma 3 with g = ceil(sε√n), σ² = g²/ε²)",
        parameters=_THEOREM2_PARAMS,
        evaluate=_headline_vs_lemma3,
        grid=_LEMMA3_GRID,
        quick_grid=_LEMMA3_QUICK,
        space=_LEMMA3_SPACE,
        feasible=_always,
        proved=False,
    ),
    BoundSpec(
        name="theorem2_paper_vs_lemma3",
        description="Theorem 2 per-batch statement as printed against the Lemma-3 value",
        citation=_SPEC32 + " [RECON]: 3ε²/(2s√n) printed for 3ε/(2s√n)",
        reference="skellam_rdp_theorem2_lemma3(α, ε, s, n) (Lemma 3 with g = ceil(sε√n), σ² = g²/ε²)",
        parameters=_THEOREM2_PARAMS,
        evaluate=_paper_vs_lemma3,
        grid=_LEMMA3_GRID,
        quick_grid=_LEMMA3_QUICK,
        space=_LEMMA3_SPACE,
        feasible=_always,
        proved=False,
    ),
)

#: Every closed-form check, by name. See :class:`BoundSpec`.
BOUNDS: dict[str, BoundSpec] = {spec.name: spec for spec in _SPECS}


# ---------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------


def _spec(name: object) -> BoundSpec:
    if not isinstance(name, str) or name not in BOUNDS:
        raise ParameterError("name", name, f"one of {', '.join(BOUNDS)}")
    return BOUNDS[name]


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


def _point(spec: BoundSpec, params: dict[str, Any], dps: int) -> PointResult:
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


def _ratio_key(r: PointResult) -> float:
    return math.inf if math.isnan(r.ratio) else r.ratio


def _worst(results: Sequence[PointResult]) -> PointResult | None:
    """The point with the smallest ratio; a violation first if the ratio of none is known."""
    rated = [r for r in results if not math.isnan(r.ratio)]
    if rated:
        return min(rated, key=lambda r: r.ratio)
    bad = [r for r in results if r.status == "violates"]
    return bad[0] if bad else None


def _report(spec: BoundSpec, results: list[PointResult], seconds: float) -> BoundReport:
    worst = _worst(results)
    bad = tuple(r for r in results if r.status == "violates")
    return BoundReport(
        name=spec.name,
        citation=spec.citation,
        reference=spec.reference,
        proved=spec.proved,
        points=len(results),
        worst_ratio=worst.ratio if worst is not None else math.nan,
        worst=worst,
        counterexamples=tuple(sorted(bad, key=_ratio_key)),
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
    spec = _spec(name)
    level = v.dps("dps", dps)
    points = _grid(spec, grid, quick)
    started = time.perf_counter()
    results = [_point(spec, p, level) for p in points]
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
    chosen = list(BOUNDS) if names is None else [_spec(n).name for n in names]
    return tuple(check_bound(n, dps=dps, quick=quick) for n in chosen)


# ---------------------------------------------------------------------------------------
# Hypothesis search
# ---------------------------------------------------------------------------------------


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
    if spec.feasible is _always or not spec.feasible.__doc__:
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

    spec = _spec(name)
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
            result = _point(spec, params, level)
        except UnsupportedError:
            reject()
        results.append(result)
        if math.isfinite(result.ratio):  # NaN (enclosure too wide) or inf (exact value 0): no target
            target(-result.ratio, label="-(bound/exact)")

    run()
    worst = _worst(results)
    bad = {r.params: r for r in results if r.status == "violates"}
    return SearchReport(
        name=spec.name,
        examples=len(results),
        counterexamples=tuple(sorted(bad.values(), key=_ratio_key)),
        worst=worst,
        worst_ratio=worst.ratio if worst is not None else math.nan,
        space=_describe_space(spec),
    )
