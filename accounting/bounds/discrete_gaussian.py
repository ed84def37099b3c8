"""Published closed forms for discrete Gaussian noise: one discrete Gaussian (Canonne, Kamath &
Steinke 2020) and a sum of ``n`` of them (Kairouz, Liu & Steinke 2021).

Part of :mod:`accounting.bounds` (its conventions apply: arguments validated, arithmetic at 50
digits, every privacy quantity rounded *up*; truncated series end with a certified remainder).
"""

from __future__ import annotations

from mpmath import mp

from accounting import validate as v
from accounting.bounds.lattice import lattice_shift
from accounting.certified import float_up
from accounting.divergence import discrete_gaussian_delta
from accounting.errors import ParameterError
from accounting.noise.discrete_gaussian import DiscreteGaussian
from accounting.noise.sum_of_discrete_gaussians import kls_epsilon

__all__ = [
    "discrete_gaussian_delta_cks",
    "discrete_gaussian_epsilon_zcdp",
    "discrete_gaussian_rho_cks",
    "sum_discrete_gaussians_epsilon_kls",
    "sum_discrete_gaussians_rho_kls",
]

_DPS = 50
"""Working precision (decimal digits) of every formula in this module."""


def discrete_gaussian_rho_cks(sigma: float, sensitivity: int = 1) -> float:
    """zCDP ρ of the discrete Gaussian mechanism: ``ρ = Δ² / (2σ²)``.

    Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy",
    Theorem 4 (Fact 2 of Chowdhury & Zhou 2023: ``N_Z(0, Δ²/ε²)`` gives ``(1/2)ε²``-CDP).

    Parameters
    ----------
    sigma : float
        The parameter ``σ > 0`` of ``N_Z(0, σ²)``.
    sensitivity : int
        The integer sensitivity ``Δ >= 1``.

    Returns
    -------
    float
        ``ρ``, rounded up.
    """
    s = v.positive("sigma", sigma)
    d = v.integer("sensitivity", sensitivity, minimum=1)
    with mp.workdps(_DPS):
        return float_up(mp.mpf(d) ** 2 / (2 * mp.mpf(s) ** 2))


def discrete_gaussian_delta_cks(sigma: float, epsilon: float, sensitivity: int = 1) -> float:
    """Tight ``δ(ε)`` of the discrete Gaussian mechanism, as a float rounded up.

    Canonne, Kamath & Steinke 2020, Theorem 7: with ``Y ~ N_Z(0, σ²)``::

        δ = P[Y > εσ²/Δ - Δ/2] - e^ε P[Y > εσ²/Δ + Δ/2].

    This equals the hockey-stick divergence ``Σ_x max(0, P(x) - e^ε Q(x))`` for
    ``P = N_Z(Δ, σ²)``, ``Q = N_Z(0, σ²)`` (the loss ``ln P/Q = (2xΔ - Δ²)/(2σ²)`` exceeds ε
    exactly on ``x > εσ²/Δ + Δ/2``; the reverse divergence is the same by the reflection
    ``x ↦ Δ - x``). The value is the upper end of the project's certified enclosure of the theorem,
    :func:`accounting.divergence.discrete_gaussian_delta` at 50 digits, rounded up: this module only
    validates and rounds.

    Unlike the continuous case, ``δ(ε)`` is *not* monotone in σ for small σ (at ``ε = 4``,
    ``σ = 0.375`` gives 0.027 but ``σ = 0.5625`` gives 0.077): ``N_Z(0, σ₂²)`` is not
    ``N_Z(0, σ₁²)`` plus independent noise, so there is no post-processing argument.

    Parameters
    ----------
    sigma : float
        The parameter ``σ > 0`` of ``N_Z(0, σ²)``.
    epsilon : float
        ``ε >= 0``.
    sensitivity : int
        The integer sensitivity ``Δ >= 1``.

    Returns
    -------
    float
        ``δ(ε)``, rounded up.
    """
    s = v.positive("sigma", sigma)
    eps = v.nonnegative("epsilon", epsilon)
    d = v.integer("sensitivity", sensitivity, minimum=1)
    enclosure = discrete_gaussian_delta(DiscreteGaussian(s), d, eps, _DPS)
    with mp.workdps(_DPS):
        return float_up(enclosure.hi)


def discrete_gaussian_epsilon_zcdp(sigma: float, delta: float, sensitivity: int = 1) -> float:
    """ε at a given δ for the discrete Gaussian, through zCDP: ``ε = ρ + 2 sqrt(ρ ln(1/δ))``.

    Bun & Steinke 2016, "Concentrated Differential Privacy", Proposition 1.3, applied to
    ``ρ = Δ²/(2σ²)`` of :func:`discrete_gaussian_rho_cks` (CKS 2020). Looser than
    :func:`discrete_gaussian_delta_cks`, which is tight.

    Parameters
    ----------
    sigma : float
        ``σ > 0``.
    delta : float
        ``δ ∈ (0, 1)``.
    sensitivity : int
        The integer sensitivity ``Δ >= 1``.

    Returns
    -------
    float
        ε, rounded up.
    """
    s = v.positive("sigma", sigma)
    dl = v.open_unit("delta", delta)
    d = v.integer("sensitivity", sensitivity, minimum=1)
    with mp.workdps(_DPS):
        rho = mp.mpf(d) ** 2 / (2 * mp.mpf(s) ** 2)
        return float_up(rho + 2 * mp.sqrt(rho * mp.log(1 / mp.mpf(dl))))


# --------------------------------------------------------------------------------------------
# Sum of discrete Gaussians (Kairouz, Liu & Steinke 2021, Proposition 13)
# --------------------------------------------------------------------------------------------


def _kls_inputs(
    sigma: object, count: object, sensitivity: object, dimension: object, l1: object
) -> tuple[float, int, int, int]:
    """Validated ``(σ, n, S2, m)`` for Prop. 13, which needs ``σ >= 1/2`` (see ``lattice_shift``)."""
    s = v.positive("sigma", sigma)
    if s < 0.5:
        raise ParameterError("sigma", sigma, "a real number >= 1/2 (Kairouz–Liu–Steinke 2021 Prop. 13)")
    n = v.integer("count", count, minimum=1)
    l2_squared, _, moving = lattice_shift(sensitivity, dimension, l1)
    return s, n, l2_squared, moving


def sum_discrete_gaussians_epsilon_kls(
    sigma: float,
    count: int,
    sensitivity: float = 1,
    *,
    dimension: int = 1,
    l1: float | None = None,
) -> float:
    """ε such that adding a sum of ``count`` discrete Gaussians is ``(1/2)ε²``-zCDP.

    Kairouz, Liu & Steinke 2021, "The Distributed Discrete Gaussian Mechanism for Federated
    Learning with Secure Aggregation", Proposition 13 (Lemma 4 of Chowdhury & Zhou 2023). With
    ``X_i ~ N_Z(0, σ²)`` i.i.d. (σ is the *per-user* parameter) and ``Z_n = Σ_{i≤n} X_i``, adding
    ``Z_n`` to a query of integer sensitivity ``Δ`` is ``(1/2)ε²``-zCDP with::

        ε = min{ sqrt(Δ²/(nσ²) + ξ/2),  Δ/(√n σ) + ξ },
        ξ = 10 Σ_{k=1}^{n-1} exp(-2π²σ² k/(k+1)).

    **d dimensions** (i.i.d. sums on every coordinate, a change ``v ∈ Z^d`` with
    ``‖v‖₂ <= Δ2``)::

        ε = min{ sqrt(Δ2²/(nσ²) + m ξ/2),  Δ2/(√n σ) + √m ξ },

    with ``m <= d`` the nonzero coordinates of ``v`` (``m = min(d, ⌊Δ1⌋, ⌊√d Δ2⌋, ⌊Δ2²⌋)``,
    see ``lattice_shift``; ``Δ2²`` is taken as ``⌊Δ2²⌋``, ``‖v‖₂²`` being an integer). Derived
    here from the 1-D statement: zCDP of independent coordinates adds (the Rényi divergence of
    a product law is the sum of the coordinates'), coordinate ``i`` contributes ``ε_i²/2`` at
    ``Δ = |v_i|`` (nothing where ``v_i = 0``), and either form summed over the moving
    coordinates gives ``Σ(v_i²/(nσ²) + ξ/2) <= Δ2²/(nσ²) + mξ/2``, respectively
    ``Σ(|v_i|/(√nσ) + ξ)² = ‖v‖₂²/(nσ²) + 2ξ‖v‖₁/(√nσ) + mξ² <= (Δ2/(√nσ) + √m ξ)²``
    (``‖v‖₁ <= √m ‖v‖₂``). The second form is KLS's d-dimensional one, which has ``τ√d``
    (the authors' accounting code, google-research/federated
    ``distributed_dp/accounting_utils.py``, evaluates ``(α/2)(Δ2/(√nσ) + √d τ)²`` for
    their Prop. 14); ``d ξ`` there, as sometimes quoted, is also valid but looser.

    ξ is summed with a certified tail bound (see ``xi_sum_upper``) in ``O(1)`` special
    function calls beyond the first few terms, so large ``n`` is cheap. Requires ``σ >= 1/2``.

    Parameters
    ----------
    sigma : float
        Per-user parameter ``σ >= 1/2``.
    count : int
        Number of summands ``n >= 1``.
    sensitivity : int or float
        The ℓ2 sensitivity: in one dimension the integer ``Δ >= 1``; for a vector any real ``>= 1``.
    dimension : int
        ``d >= 1``, the coordinates of the query.
    l1 : float, optional
        An ℓ1 sensitivity ``Δ1 >= 1`` (it only bounds ``m``).

    Returns
    -------
    float
        ε, rounded up.
    """
    s, n, l2_squared, moving = _kls_inputs(sigma, count, sensitivity, dimension, l1)
    with mp.workdps(_DPS):
        return float_up(kls_epsilon(mp.mpf(s), n, l2_squared, moving))


def sum_discrete_gaussians_rho_kls(
    sigma: float,
    count: int,
    sensitivity: float = 1,
    *,
    dimension: int = 1,
    l1: float | None = None,
) -> float:
    """zCDP ``ρ = ε²/2`` for :func:`sum_discrete_gaussians_epsilon_kls` (KLS 2021 Prop. 13, and
    its d-dimensional form there).

    Parameters
    ----------
    sigma : float
        Per-user parameter ``σ >= 1/2``.
    count : int
        Number of summands ``n >= 1``.
    sensitivity : int or float
        The ℓ2 sensitivity: in one dimension the integer ``Δ >= 1``; for a vector any real ``>= 1``.
    dimension : int
        ``d >= 1``, the coordinates of the query.
    l1 : float, optional
        An ℓ1 sensitivity ``Δ1 >= 1``.

    Returns
    -------
    float
        ρ, rounded up.
    """
    s, n, l2_squared, moving = _kls_inputs(sigma, count, sensitivity, dimension, l1)
    with mp.workdps(_DPS):
        return float_up(kls_epsilon(mp.mpf(s), n, l2_squared, moving) ** 2 / 2)
