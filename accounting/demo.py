"""Exact accounting against the published closed forms, for noise sized by the classic recipes.

The table of ``dp-account demo`` (:func:`demo_rows`): for a few target ε at one δ, the exact ε(δ)
of discrete noise sized by the classic recipes next to what the best published closed form claims
for the same noise, so one sees how much exact accounting saves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from accounting import bounds
from accounting import validate as v
from accounting.certified import DEFAULT_DPS
from accounting.conversion import rdp_to_dp, zcdp_to_dp_cks
from accounting.errors import AccountingError, ParameterError
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism
from accounting.noise import DiscreteGaussian, DiscreteLaplace, Skellam

_INTEGER_ORDERS = range(2, 2001)


@dataclass(frozen=True)
class DemoRow:
    """One line of the demo table."""

    target_epsilon: float
    noise: str
    bound_name: str
    bound_epsilon: float
    exact_epsilon: float
    exact_digits: float

    @property
    def saving(self) -> float:
        """How much smaller the exact ε is than the bound's, as a fraction of the bound."""
        if not math.isfinite(self.bound_epsilon) or self.bound_epsilon == 0:
            return 0.0
        return 1 - self.exact_epsilon / self.bound_epsilon


def demo_rows(
    epsilons: Sequence[float], delta: float, users: int = 10, dps: int = DEFAULT_DPS
) -> list[DemoRow]:
    """The rows of ``dp-account demo`` (sensitivity 1).

    Noise is sized by the classic recipes for a target ε: ``b = 1/ε`` for the discrete
    Laplace (Chowdhury & Zhou 2023, Fact 3) and the Gaussian ``σ = sqrt(2 ln(1.25/δ))/ε``
    (Dwork & Roth 2014, Theorem A.1, used here for every ε only as a size) for the Skellam
    variance, the discrete Gaussian and, split over ``users`` shares, the sum of discrete Gaussians.
    The published routes: Agarwal, Kairouz & Liu 2021 (AKL21), Theorem 3.5, for the Skellam;
    Canonne, Kamath & Steinke 2020 (CKS20) for the discrete Gaussian; Kairouz, Liu & Steinke 2021
    (KLS21), Proposition 13, for the sum of discrete Gaussians; each converted to ``(ε, δ)`` by
    Lemma 10 of the distributed MAB paper (Chowdhury & Zhou 2023).
    """
    n = v.count("users", users)
    d = v.open_unit("delta", delta)
    rows: list[DemoRow] = []
    for eps in epsilons:
        try:
            rows += _demo_rows_at(v.positive("epsilons", eps), d, n, dps)
        except AccountingError as err:
            # The recipes size noise from ε: an ε far from 1 sizes noise no route can account.
            valid = f"a target ε whose recipe noise can be accounted ({err})"
            raise ParameterError("epsilons", eps, valid) from None
    return rows


def _demo_rows_at(eps: float, delta: float, users: int, dps: int) -> list[DemoRow]:
    rows: list[DemoRow] = []
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / eps
    variance = sigma * sigma  # inf (refused by Skellam) where ** would raise OverflowError
    share = sigma / math.sqrt(users)
    if share >= 0.5:
        kls_name = "KLS21 Prop 13 + Lemma 10"
        kls_rho = bounds.sum_discrete_gaussians_rho_kls(share, users)
    else:  # KLS needs σ >= 1/2: fall back on one share's CKS bound (post-processing)
        kls_name = "CKS20, one share + Lemma 10"
        kls_rho = bounds.discrete_gaussian_rho_cks(share)
    skellam_curve = ((a, bounds.skellam_rdp_akl(a, variance)) for a in _INTEGER_ORDERS)
    cases: list[tuple[str, Mechanism, str, float]] = [
        (
            f"DiscreteLaplace(scale={1 / eps:.4g})",
            AdditiveNoise(DiscreteLaplace(1 / eps)),
            "pure ε (Fact 3)",
            bounds.discrete_laplace_pure_epsilon(1 / eps),
        ),
        (
            f"Skellam(variance={variance:.4g})",
            AdditiveNoise(Skellam(variance)),
            "AKL21 Thm 3.5 + Lemma 10",
            rdp_to_dp(skellam_curve, delta),
        ),
        (
            f"DiscreteGaussian(sigma={sigma:.4g})",
            AdditiveNoise(DiscreteGaussian(sigma)),
            "CKS20 zCDP + Lemma 10",
            zcdp_to_dp_cks(bounds.discrete_gaussian_rho_cks(sigma), delta),
        ),
        (
            f"{users} x DiscreteGaussian(sigma={share:.4g})",
            DistributedSum(DiscreteGaussian(share), users),
            kls_name,
            zcdp_to_dp_cks(kls_rho, delta),
        ),
    ]
    for name, mech, bound_name, bound_eps in cases:
        exact = mech.epsilon(delta, dps)
        if not math.isfinite(exact.upper):
            raise AccountingError(f"the exact ε of {name} is not finite")
        rows.append(DemoRow(eps, name, bound_name, bound_eps, exact.upper, exact.digits()))
    return rows
