"""Published closed form for Skellam noise: Agarwal, Kairouz & Liu 2021, Theorem 3.5.

Part of :mod:`accounting.bounds` (its conventions apply: arguments validated, arithmetic at 50
digits, every privacy quantity rounded *up*).
"""

from __future__ import annotations

import math

from mpmath import mp

from accounting import validate as v
from accounting.bounds.lattice import lattice_shift
from accounting.certified import float_up
from accounting.errors import ParameterError
from accounting.noise.skellam import akl_rdp

__all__ = ["integer_order", "skellam_rdp_akl"]

_DPS = 50
"""Working precision (decimal digits) of every formula in this module."""


def integer_order(value: object) -> int:
    """An integer Rényi order ``α >= 2`` (for bounds proved only at integer orders)."""
    a = v.order("alpha", value, allow_inf=True)
    if math.isinf(a) or not a.is_integer():
        raise ParameterError(
            "alpha",
            value,
            "an integer >= 2: the Skellam bound of Agarwal–Kairouz–Liu 2021 Thm 3.5 "
            "(Lemma 3 of Chowdhury & Zhou 2023) is proved only for integer orders",
        )
    return int(a)


def skellam_rdp_akl(
    alpha: int,
    variance: float,
    sensitivity: float = 1,
    *,
    dimension: int = 1,
    l1: float | None = None,
) -> float:
    """RDP of adding Skellam noise ``Sk(0, σ²)`` (total variance σ² per coordinate) to an integer query.

    Agarwal, Kairouz & Liu 2021, "The Skellam Mechanism for Differentially Private Federated
    Learning", Theorem 3.5 (Lemma 3 of Chowdhury & Zhou 2023). For a query in ``Z^d`` whose change
    ``v`` has ``‖v‖₂ <= Δ2`` and ``‖v‖₁ <= Δ1``, with i.i.d. ``Sk(0, σ²)`` noise on every
    coordinate::

        ε(α) <= αΔ2²/(2σ²) + min{ ((2α-1)Δ2² + 6Δ1) / (4σ⁴),  3Δ1/(2σ²) }.

    In one dimension ``Δ1 = Δ2 = Δ``, Chowdhury & Zhou's Lemma 3. AKL parametrise by the Poisson
    rate μ of each of the two Poisson variables; here σ² = 2μ is the *total* variance, as in Lemma 3
    (their multi-dimensional statement has the same form, in the variance; their accounting
    code, google-research/federated ``distributed_dp/accounting_utils.py``, evaluates it so).
    The theorem is proved only for integer orders ``α >= 2``; other orders raise
    :class:`ParameterError`.

    **The d-dimensional form from the 1-D one.** Independent coordinates make the noise a
    product law, whose Rényi divergence is the sum of the coordinates' (tensorization). Each
    coordinate ``i`` gives the 1-D bound at ``Δ = |v_i|`` (0 for ``v_i = 0``), and a sum of minima
    is at most the minimum of the sums, so the total is at most the formula above with
    ``Σ v_i² = ‖v‖₂²`` and ``Σ |v_i| = ‖v‖₁``: increasing in both, hence bounded at ``(Δ2², Δ1)``.

    **Integer vectors.** ``‖v‖₂²`` and ``‖v‖₁`` are integers, so ``Δ2²`` is taken as ``⌊Δ2²⌋``
    and ``Δ1`` as ``min(⌊Δ1⌋, ⌊√d Δ2⌋, ⌊Δ2²⌋)``: ``‖v‖₁ <= √d ‖v‖₂`` (Cauchy–Schwarz) and
    ``‖v‖₁ <= ‖v‖₂²`` (``|v_i| <= v_i²`` for integers). Without ``l1`` the smaller of the two
    applies (see ``lattice_shift``).

    Parameters
    ----------
    alpha : int
        Integer order ``α >= 2``.
    variance : float
        Total variance ``σ² > 0`` of the Skellam noise on each coordinate.
    sensitivity : int or float
        The ℓ2 sensitivity ``Δ2``: in one dimension the integer ``Δ >= 1``; for a vector any
        real ``>= 1``.
    dimension : int
        ``d >= 1``, the coordinates of the query.
    l1 : float, optional
        An ℓ1 sensitivity ``Δ1 >= 1`` (default: implied by ``Δ2`` and ``d`` as above).

    Returns
    -------
    float
        The RDP bound, rounded up.
    """
    a = integer_order(alpha)
    var = v.positive("variance", variance)
    l2_squared, ell1, _ = lattice_shift(sensitivity, dimension, l1)
    with mp.workdps(_DPS):
        return float_up(akl_rdp(a, mp.mpf(var), mp.mpf(l2_squared), mp.mpf(ell1)))
