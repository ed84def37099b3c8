"""A4: exact accounting of the Gaussian tree at a ``σ0`` rule, against the claimed ``(ε, δ)``.

Silo ``i``'s transcript is a Gaussian vector whose mean moves in the ``κ`` nodes holding the changed
user, so the release is exactly ``μ``-GDP and ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)`` (Dong,
Roth & Su 2022, Corollary 2.13; :mod:`accounting.tree`). :func:`gdp_check` evaluates it at the
authors' code ``σ0``, at Theorem 5.1's (Zhou & Chowdhury 2024, Section 5.1) and at the exactly
calibrated one: the code's misses ``(5, 0.1)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from accounting import validate as v
from accounting.tree import Sensitivities, Tree, calibrate_sigma, code_sigma, levels, paper_sigma
from verification.errors import ParameterError
from verification.federated.rows import CheckRow

__all__ = ["GDPCheck", "gdp_check", "gdp_row"]


@dataclass(frozen=True)
class GDPCheck:
    """``δ(ε)`` of the tree release at a ``σ0`` rule, against the claimed ``δ`` (Dong, Roth & Su 2022).

    ``delta_at_epsilon`` is the upper end of the certified enclosure (a claim is met only if even
    that is at most ``delta``); ``mu`` is the GDP parameter ``√(κ(Δ_bias² + Δ_cov²))/σ0``.
    """

    rule: str
    epsilon: float
    delta: float
    horizon: int
    batch: int
    kappa: int
    sensitivity: str
    sigma0: float
    mu: float
    delta_at_epsilon: float

    @property
    def meets(self) -> bool:
        return self.delta_at_epsilon <= self.delta


def gdp_check(
    rule: Literal["code", "paper", "exact"],
    epsilon: float = 5.0,
    delta: float = 0.1,
    horizon: int = 10_000,
    batch: int = 25,
    sensitivity: Sensitivities | Literal["replace-one", "paper"] = "paper",
) -> GDPCheck:
    """Exact ``δ(ε)`` of the Gaussian tree at the ``σ0`` of ``rule`` (:mod:`accounting.tree`).

    ``"code"`` is the authors' ``σ0 = √(κ(log(1/δ) + ε))/ε`` (:func:`accounting.tree.code_sigma`),
    ``"paper"`` that of Zhou & Chowdhury 2024, Theorem 5.1 (:func:`~accounting.tree.paper_sigma`,
    ``σ0² = 8κ(log(2/δ) + ε)/ε²``), ``"exact"`` the least ``σ0``
    meeting the claim (:func:`~accounting.tree.calibrate_sigma`). At the defaults (``T = 10⁴``,
    ``B = 25``, ``κ = 9``, ``L = 1``) the code's ``δ(5) = 0.178 > 0.1`` (0.82 under replace-one).
    """
    if rule not in ("code", "paper", "exact"):
        raise ParameterError("rule", rule, "'code', 'paper' or 'exact'")
    kappa = levels(v.integer("horizon", horizon, minimum=1) // v.integer("batch", batch, minimum=1))
    if rule == "code":
        sigma = code_sigma(epsilon, delta, kappa)
    elif rule == "paper":
        sigma = paper_sigma(epsilon, delta, kappa)
    else:
        sigma = calibrate_sigma(epsilon, delta, horizon, batch, sensitivity).value
    tree = Tree(sigma, horizon, batch, sensitivity)
    return GDPCheck(
        rule=rule,
        epsilon=float(epsilon),
        delta=float(delta),
        horizon=horizon,
        batch=batch,
        kappa=tree.kappa,
        sensitivity=tree.sensitivities.name,
        sigma0=sigma,
        mu=tree.mu(),
        delta_at_epsilon=float(tree.delta(epsilon).upper),
    )


def gdp_row(name: str, broken: bool, check: GDPCheck) -> CheckRow:
    """The A4 row of :func:`~verification.federated.checks.run_checks`: flagged when the claim is missed."""
    return CheckRow(
        name=name,
        audit="A4",
        broken=broken,
        claim=(
            f"({check.epsilon:g}, {check.delta:g}) at {check.rule} σ0 = {check.sigma0:.4g} "
            f"({check.sensitivity}, T = {check.horizon}, B = {check.batch}, κ = {check.kappa})"
        ),
        finding=f"exact δ({check.epsilon:g}) = {check.delta_at_epsilon:.3g}, μ = {check.mu:.4g}",
        flagged=not check.meets,
        values={
            "sigma0": check.sigma0,
            "mu": check.mu,
            "delta_at_epsilon": check.delta_at_epsilon,
            "claimed_delta": check.delta,
        },
        reference="papers/federated-lcb.md §7.5 A4, §10.3, §5.1 (Theorem 5.1; the authors' code)",
    )
