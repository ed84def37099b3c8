"""Published closed-form privacy bounds of the noise families, one formula per function.

Every function here implements one published statement, cited in its docstring (authors, year,
theorem or equation). These are *bounds*, not exact divergences: the exact accounting of lattice
noise lives elsewhere; this package is what the exact numbers are cross-checked against. One
module per noise family:

* :mod:`accounting.bounds.laplace` — Laplace and discrete Laplace (pure ε, ``δ(ε)``, RDP);
* :mod:`accounting.bounds.gaussian` — the Gaussian mechanism (RDP, the classic σ of Dwork & Roth,
  the analytic Gaussian of Balle & Wang);
* :mod:`accounting.bounds.discrete_gaussian` — one discrete Gaussian (Canonne, Kamath & Steinke
  2020) and a sum of discrete Gaussians (Kairouz, Liu & Steinke 2021, Proposition 13);
* :mod:`accounting.bounds.skellam` — Skellam noise (Agarwal, Kairouz & Liu 2021, Theorem 3.5);
* :mod:`accounting.bounds.lattice` — the integer shifts of a vector query those lattice bounds
  are stated in.

The closed forms one paper states for its own protocols (Theorems 2 and 4 of Chowdhury & Zhou
2023, and the precision ``g`` they use) are that paper's recipes:
:mod:`accounting.papers.distributed_dp_mab`, re-exported by :mod:`accounting`.

Conventions
-----------
- Public parameters are validated with :mod:`accounting.validate`; a bad value raises
  :class:`~accounting.errors.ParameterError` or :class:`~accounting.errors.ParameterTypeError`
  naming the parameter. No function returns NaN; a value beyond the float range is returned
  as ``inf`` (the rounded-up answer).
- Arithmetic is done in :mod:`mpmath` at 50 significant digits (more where a formula cancels),
  and every privacy quantity (ε, δ, ρ, an RDP value) and every calibrated noise scale is returned
  as a float rounded *up* with :func:`~accounting.certified.float_up`: a larger loss or a larger
  noise is the safe direction. ``float_up`` is always called inside the precision context in
  which its argument was computed, because converting a 50-digit number at the default 15-digit
  precision would round it to nearest first.
- "scale" is the Laplace/discrete-Laplace parameter ``b``; "sigma" a standard deviation;
  "variance" a variance; "sensitivity" the ``Δ`` of the query (an integer where the noise lives
  on the integer lattice).
"""

from __future__ import annotations

from accounting.bounds.discrete_gaussian import (
    discrete_gaussian_delta_cks,
    discrete_gaussian_epsilon_zcdp,
    discrete_gaussian_rho_cks,
    sum_discrete_gaussians_epsilon_kls,
    sum_discrete_gaussians_rho_kls,
)
from accounting.bounds.gaussian import (
    gaussian_delta_analytic,
    gaussian_delta_mp,
    gaussian_epsilon_analytic,
    gaussian_rdp,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
)
from accounting.bounds.laplace import (
    discrete_laplace_pure_epsilon,
    laplace_delta,
    laplace_pure_epsilon,
    laplace_rdp,
)
from accounting.bounds.skellam import skellam_rdp_akl

__all__ = [
    "discrete_gaussian_delta_cks",
    "discrete_gaussian_epsilon_zcdp",
    "discrete_gaussian_rho_cks",
    "discrete_laplace_pure_epsilon",
    "gaussian_delta_analytic",
    "gaussian_delta_mp",
    "gaussian_epsilon_analytic",
    "gaussian_rdp",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "laplace_delta",
    "laplace_pure_epsilon",
    "laplace_rdp",
    "skellam_rdp_akl",
    "sum_discrete_gaussians_epsilon_kls",
    "sum_discrete_gaussians_rho_kls",
]
