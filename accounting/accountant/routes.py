"""The routes of the :class:`~accounting.accountant.Accountant`: their names and what each answers.

Each route turns the ledger's sums (pure ε, ρ, an RDP curve) into an answer, as
:meth:`Accountant.epsilon <accounting.accountant.Accountant.epsilon>` explains;
:class:`SampledView` lets a release on a sampled batch answer as a mechanism under one relation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from mpmath import mp

from accounting import composition, conversion
from accounting import validate as v
from accounting.accountant.published import PUBLISHED, PublishedBound
from accounting.certified import DEFAULT_DPS, Enclosure, float_down
from accounting.composition import RdpCurve
from accounting.errors import ParameterError, UnsupportedError, UnsupportedEventError
from accounting.mechanisms import AdditiveNoise, ApproxDP, Mechanism, PureDP
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    TAIL_SUM_SIGMA,
    DiscreteGaussian,
    Gaussian,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
)
from accounting.subsampling import PoissonSampled, SampledWithoutReplacement

__all__ = [
    "ROUTES",
    "PublishedRdp",
    "RdpOf",
    "SampledView",
    "closed_form",
    "kov",
    "noise_of",
    "pure_answer",
    "rdp_answer",
    "route_name",
    "subtract_down",
    "symmetric_lattice",
    "zcdp_answer",
]

ROUTES = ("auto", "pld", "rdp", "zcdp", "pure", "published")
"""The routes; ``"published:<name>"`` selects one bound of :data:`PUBLISHED`."""


def route_name(route: object) -> str:
    """``route`` if it names a route of :meth:`Accountant.epsilon` (:data:`ROUTES` or
    ``"published:<name>"``), else a :class:`ParameterError` naming ``route`` and the valid ones."""
    if isinstance(route, str):
        if route in ROUTES:
            return route
        if route.startswith("published:") and route.split(":", 1)[1] in PUBLISHED:
            return route
    valid = ", ".join(ROUTES) + ", or published:<" + "|".join(PUBLISHED) + ">"
    raise ParameterError("route", route, "one of " + valid)


@dataclass(frozen=True)
class SampledView(Mechanism):
    """A release on a sampled batch, answering as a :class:`Mechanism` under one relation.

    Its pairs are the subsampled event's dominating pairs (:mod:`accounting.subsampling`); an
    event with none under the relation is refused when the view is made (up front).
    """

    release: PoissonSampled | SampledWithoutReplacement
    neighbouring: Neighbouring

    def __post_init__(self) -> None:
        self.release.dominating_pairs(self.neighbouring)  # raises UnsupportedEventError

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.release.epsilon(delta, self.neighbouring, dps)

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.release.delta(epsilon, self.neighbouring, dps)

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.release.rdp(alpha, self.neighbouring, dps)

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.release.pure_epsilon(self.neighbouring, dps)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``∞`` unless the release has a pure ε (a subsampled ρ is not computed here)."""
        v.positive("rtol", rtol)
        pure = self.pure_epsilon(dps)
        if mp.isinf(pure.hi):
            return Enclosure(mp.inf, mp.inf)
        return Enclosure(mp.zero, mp.mpf(conversion.pure_to_zcdp(pure.upper)))


def closed_form(m: Mechanism) -> bool:
    """Whether the PLD route answers ``m`` released once by a closed form."""
    noise = noise_of(m)
    if isinstance(noise, DiscreteGaussian):
        return Fraction(noise.sigma) >= TAIL_SUM_SIGMA
    return isinstance(noise, Gaussian | Laplace)


def noise_of(m: Mechanism) -> NoiseDistribution | None:
    """The noise of an additive-noise mechanism (``None`` for any other)."""
    return m.noise if isinstance(m, AdditiveNoise) else None


def symmetric_lattice(m: Mechanism) -> bool:
    """Whether ``m`` adds symmetric log-concave lattice noise (its grid PLD has closed-form atoms)."""
    noise = noise_of(m)
    return isinstance(noise, LatticeNoise) and noise.symmetric and noise.log_concave


def subtract_down(a: float, b: float) -> float:
    """``a - b`` rounded down (what is left of a budget: never more than there is)."""
    return float_down(mp.mpf(a) - mp.mpf(b)) if a != b else 0.0


def kov(m: PureDP | ApproxDP, k: int, at: float, want_epsilon: bool) -> Enclosure:
    """``k`` runs of one cited ``(ε, δ)`` guarantee, exactly: Kairouz, Oh & Viswanath 2015 Thm 3.3
    (:func:`accounting.composition.advanced_composition_kov`, the optimal composition)."""
    eps, dlt = m.eps, (m.dlt if isinstance(m, ApproxDP) else 0.0)
    if want_epsilon:
        try:
            return Enclosure.from_rounded_up(composition.advanced_composition_kov(eps, dlt, k, at))
        except ParameterError:  # δ below 1 - (1 - δ_i)^k: no finite ε
            return Enclosure(mp.inf, mp.inf)
    return Enclosure.from_rounded_up(composition.advanced_composition_kov_delta(eps, dlt, k, at))


def pure_answer(total: float, at: float, want_epsilon: bool) -> Enclosure:
    """The pure route's answer from the ledger's total pure ε ``total``."""
    if want_epsilon:
        return Enclosure(mp.zero, mp.mpf(total)) if total else Enclosure.exact(0)
    if total <= at:
        return Enclosure.exact(0)
    raise UnsupportedError(f"the pure route certifies δ = 0 only for ε >= {total!r}")


def zcdp_answer(rho: float, at: float, want_epsilon: bool) -> Enclosure:
    """The zCDP route's answer from the ledger's total ρ (the CKS optimal conversion)."""
    value = conversion.zcdp_to_dp_cks(rho, at) if want_epsilon else conversion.zcdp_delta_cks(rho, at)
    return Enclosure(mp.zero, mp.mpf(value))


def rdp_answer(curve: RdpCurve, at: float, want_epsilon: bool, search: dict[str, Any]) -> Enclosure:
    """The RDP route's answer from the ledger's curve, optimised over orders as ``search`` says."""
    value = curve.epsilon(at, **search) if want_epsilon else curve.delta(at, **search)
    return Enclosure(mp.zero, mp.mpf(value))


@dataclass(frozen=True)
class RdpOf:
    """One event's exact RDP at an order, rounded up.

    Where the exact sum is refused at an order (``UnsupportedError``) the value is ``inf``, so that
    the optimiser moves to other orders, and the reason is kept in ``refused``: a route whose
    every order was refused says why instead of answering ``∞`` (``strict`` raises at once).
    """

    mechanism: Mechanism
    dps: int
    strict: bool = False
    refused: list[str] = field(default_factory=list, compare=False, hash=False)

    def __call__(self, alpha: float) -> float:
        try:
            return self.mechanism.rdp(alpha, self.dps).upper
        except UnsupportedEventError:
            raise
        except UnsupportedError as err:
            if self.strict:
                raise
            if len(self.refused) < 4:
                self.refused.append(f"{self.mechanism!r}: {err}")
            return math.inf  # an order too large to sum exactly: the optimiser moves elsewhere


@dataclass(frozen=True)
class PublishedRdp:
    """A published RDP bound of a mechanism as a function of the (integer) order."""

    bound: PublishedBound
    mechanism: Mechanism

    def __call__(self, alpha: float) -> float:
        return self.bound.value(self.mechanism, int(alpha))
