"""The registered closed-form checks: each published bound, the exact value it is compared with, where.

:data:`BOUNDS` holds one :class:`~verification.exactness.spec.BoundSpec` per closed form of
:mod:`accounting.bounds` that claims to bound a privacy quantity: the Skellam RDP of Agarwal,
Kairouz & Liu 2021 (Theorem 3.5, Lemma 3 of Chowdhury & Zhou 2023); the discrete Gaussian's ρ and
tight δ(ε) of Canonne, Kamath & Steinke 2020 (Theorems 4 and 7) and its ε(δ) through zCDP (Bun &
Steinke 2016, Proposition 1.3); the sum of discrete Gaussians of Kairouz, Liu & Steinke 2021
(Proposition 13, Lemma 4 of Chowdhury & Zhou 2023); and Chowdhury & Zhou 2023's Fact 3, Theorem 4
and three readings of Theorem 2 (Section 5; per batch in the proof, Appendix E.2), the last two
also against the Lemma-3 value they were derived from, where they are known to slip.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

from mpmath import mp

from accounting import bounds
from accounting import validate as v
from accounting.certified import Enclosure, Mpf, exact_fraction, float_up
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.noise import DiscreteGaussian, DiscreteLaplace, Skellam
from accounting.papers import distributed_dp_mab as dmab
from verification.errors import ParameterError
from verification.exactness.spec import BoundSpec, Dimension, Point, always

__all__ = ["BOUNDS", "spec_named"]


def _product(**axes: Sequence[float]) -> tuple[Point, ...]:
    names = list(axes)
    return tuple(tuple(zip(names, values, strict=True)) for values in itertools.product(*axes.values()))


def _times(alpha: float, value: float) -> Mpf:
    """``α · value`` exactly (two doubles multiply exactly in 106 bits)."""
    with mp.workprec(128):
        return mp.mpf(alpha) * mp.mpf(value)


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
    eps, s, n = p["epsilon"], p["scaling"], _int(p, "users")
    g = dmab.theorem2_g(eps, s, n)
    root = math.isqrt(n)
    if root * root == n:
        return g, Fraction(g) / (exact_fraction(eps, "epsilon") * root)
    with mp.workdps(40):
        return g, float_up(mp.mpf(g) / (mp.mpf(eps) * mp.sqrt(n)))


def _theorem4(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    a, eps, s, horizon, n = p["alpha"], p["epsilon"], p["scaling"], _int(p, "horizon"), _int(p, "users")
    e_hat = dmab.theorem4_epsilon(eps, s, horizon)
    with mp.workprec(256):
        bound = mp.mpf(a) * mp.mpf(e_hat) ** 2 / 2  # exact: 53-bit operands
    g, sigma = _theorem4_sigma(p)
    return bound, DistributedSum(DiscreteGaussian(sigma), n, g).rdp(a, dps)


def _theorem2_exact(p: dict[str, Any], dps: int) -> Enclosure:
    """Exact per-batch RDP of Theorem 2's protocol: ``Sk(0, g²/ε²)`` total noise, sensitivity ``g``."""
    return _theorem2_exact_at(
        _int(p, "alpha", 2), float(p["epsilon"]), float(p["scaling"]), _int(p, "users"), dps
    )


@lru_cache(maxsize=1024)
def _theorem2_exact_at(alpha: int, eps: float, scaling: float, users: int, dps: int) -> Enclosure:
    # Cached: the three Theorem-2 checks compare three closed forms with the same exact values.
    g = dmab.theorem2_g(eps, scaling, users)
    variance = Fraction(g) ** 2 / exact_fraction(eps, "epsilon") ** 2
    return AdditiveNoise(Skellam(variance), g).rdp(alpha, dps)


def _theorem2_headline(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_headline(_int(p, "alpha", 2), p["epsilon"], p["scaling"])
    return mp.mpf(bound), _theorem2_exact(p, dps)


def _theorem2_paper(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_paper(_int(p, "alpha", 2), p["epsilon"], p["scaling"], _int(p, "users"))
    return mp.mpf(bound), _theorem2_exact(p, dps)


def _theorem2_lemma3(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_lemma3(
        _int(p, "alpha", 2), p["epsilon"], p["scaling"], _int(p, "users")
    )
    return mp.mpf(bound), _theorem2_exact(p, dps)


def _lemma3_reference(p: dict[str, Any]) -> Enclosure:
    value = dmab.skellam_rdp_theorem2_lemma3(
        _int(p, "alpha", 2), p["epsilon"], p["scaling"], _int(p, "users")
    )
    return Enclosure.from_rounded_up(value)


def _headline_vs_lemma3(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_headline(_int(p, "alpha", 2), p["epsilon"], p["scaling"])
    return mp.mpf(bound), _lemma3_reference(p)


def _paper_vs_lemma3(p: dict[str, Any], dps: int) -> tuple[Mpf, Enclosure]:
    bound = dmab.skellam_rdp_theorem2_paper(_int(p, "alpha", 2), p["epsilon"], p["scaling"], _int(p, "users"))
    return mp.mpf(bound), _lemma3_reference(p)


def _theorem2_feasible(p: dict[str, Any]) -> bool:
    """σ = g/ε <= 120, αg <= 2000 and αε <= 25: exact Skellam RDP in about a second at most.

    The cost of the exact Rényi sum grows with the total noise's σ = g/ε (the table), with
    ``αg`` (the window) and with ``αε`` (the tail bound at order 2α is about ``α²ε²``):
    ``σ <= 120``, ``αg <= 2000`` and ``αε <= 25`` keep it small.
    """
    eps, alpha = float(p["epsilon"]), _int(p, "alpha", 2)
    g = dmab.theorem2_g(p["epsilon"], p["scaling"], _int(p, "users"))
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
        alpha=[2, 21, 100], epsilon=[0.1, 0.2, 0.3535, 1.0, 5.0], scaling=[1, 2, 10], users=[2, 32, 256]
    )
    if _theorem2_feasible(dict(p))
)
_THEOREM2_QUICK = _product(alpha=[2, 21], epsilon=[0.2, 0.3535, 1.0], scaling=[2], users=[2, 32])
#: The grid on which the Theorem-2 closed forms were compared with Lemma 3 (ε in [0.01, 10], s in
#: {1, 2, 5, 10, 100}, n = 2..2^21, α = 2..1000), thinned; the closed forms only, so it is cheap.
_LEMMA3_GRID = _product(
    alpha=[2, 3, 5, 10, 21, 50, 72, 100, 200, 500, 1000],
    epsilon=[0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.3535, 0.5, 0.7, 1.0, 2.0, 5.0, 10.0],
    scaling=[1, 2, 5, 10, 100],
    users=[2, 4, 8, 32, 256, 2**11, 2**16, 2**21],
)
_LEMMA3_QUICK = _product(alpha=[2, 21, 100], epsilon=[0.2, 0.3535, 1.0], scaling=[2, 10], users=[2, 1024])
_THEOREM2_SPACE = (
    Dimension("alpha", "int", 2, 200),
    Dimension("epsilon", "log", 0.01, 10.0),
    Dimension("scaling", "log", 1.0, 100.0),
    Dimension("users", "power2", 0, 12),
)
_LEMMA3_SPACE = (
    Dimension("alpha", "int", 2, 1000),
    Dimension("epsilon", "log", 0.01, 10.0),
    Dimension("scaling", "log", 1.0, 100.0),
    Dimension("users", "power2", 0, 21),
)
_THEOREM2_PARAMS = ("alpha", "epsilon", "scaling", "users")
# The citations are printed by ``dp-audit bounds`` (their parenthesised section numbers name the
# project's reconstruction notes of the papers, not the papers): output, kept byte-identical.
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
        family="skellam",
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
        feasible=always,
        family="discrete-gaussian",
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
        family="discrete-gaussian",
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
        feasible=always,
        family="discrete-gaussian",
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
        family="discrete-gaussian",
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
        feasible=always,
        family="discrete-laplace",
    ),
    BoundSpec(
        name="theorem4_epsilon",
        description="per-batch zCDP of Dist-CDP-SE: ε̂ = min{sqrt(ε² + ξ/2), ε + ξ}, ξ over k < T/2",
        citation="Chowdhury & Zhou 2023, Theorem 4 (spec §3.3)",
        reference="DistributedSum(DiscreteGaussian(g/(ε√n)), n, g).rdp(α), g = ceil(sε√n), n <= T/2",
        parameters=("alpha", "epsilon", "scaling", "horizon", "users"),
        evaluate=_theorem4,
        grid=tuple(
            p
            for p in _product(
                alpha=[2, 8], epsilon=[0.1, 0.5, 0.9], scaling=[1, 2], horizon=[32], users=[1, 4, 16]
            )
            if _theorem4_feasible(dict(p))
        ),
        quick_grid=_product(alpha=[2], epsilon=[0.5], scaling=[1], horizon=[8], users=[1, 4]),
        space=(
            Dimension("alpha", "real", 1.01, 16.0),
            Dimension("epsilon", "real", 0.01, 0.99),
            Dimension("scaling", "real", 1.0, 4.0),
            Dimension("horizon", "int", 2, 64),
            Dimension("users", "int", 1, 32),
        ),
        feasible=_theorem4_feasible,
        family="discrete-gaussian",
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
        family="skellam",
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
        family="skellam",
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
        family="skellam",
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
        feasible=always,
        family="theorem2",
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
        feasible=always,
        family="theorem2",
        proved=False,
    ),
)

#: Every closed-form check, by name. See :class:`BoundSpec`.
BOUNDS: dict[str, BoundSpec] = {spec.name: spec for spec in _SPECS}


def spec_named(name: object) -> BoundSpec:
    """The registered check ``name``, or an error naming the parameter and the registered names."""
    if not isinstance(name, str) or name not in BOUNDS:
        raise ParameterError("name", name, f"one of {', '.join(BOUNDS)}")
    return BOUNDS[name]
