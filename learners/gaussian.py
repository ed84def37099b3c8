"""The Gaussian mechanism's noise multiplier, as the LDP and phased families calibrate it.

``z`` such that ``N(0, (zΔ)²)`` added to a query of ℓ2 sensitivity ``Δ`` is ``(ε, δ)``-DP:

* :func:`gaussian_multiplier`, the exact one: the least ``z`` the
  :class:`~accounting.accountant.Accountant` certifies (:func:`accounting.calibration.calibrate`
  ``("gaussian", ε, δ)``; the analytic Gaussian mechanism of Balle & Wang 2018, accounted exactly),
  valid for every ε;
* :func:`classic_sigma`, the classic one: Dwork & Roth (2014), Theorem A.1,
  ``σ = Δ sqrt(2 ln(1.25/δ))/ε``, which both papers use (Zheng et al. 2020, Preliminaries; Li,
  Zhou & Ji 2022, eqs. 5 and 7) and which is proved only for ``ε < 1``.

:func:`releases_epsilon` answers what a release of such noise spends.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

from accounting import validate as v
from accounting.accountant import Event
from accounting.answers import ledger_epsilon
from accounting.bounds import gaussian_sigma_classic
from accounting.calibration import calibrate
from accounting.mechanisms import Mechanism

__all__ = ["classic_sigma", "gaussian_multiplier", "releases_epsilon"]


@cache
def gaussian_multiplier(epsilon: float, delta: float) -> float:
    """The least ``z`` with ``N(0, z²)`` on a sensitivity-1 query ``(ε, δ)``-DP, certified
    (:func:`accounting.calibration.calibrate` ``("gaussian", ε, δ)``)."""
    eps = v.positive("epsilon", epsilon)
    d = v.open_unit("delta", delta)
    return float(calibrate("gaussian", eps, d, sensitivity=1.0).value)


@cache
def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Dwork & Roth (2014), Theorem A.1: ``σ = Δ sqrt(2 ln(1.25/δ))/ε``, rounded up.

    :func:`accounting.bounds.gaussian_sigma_classic` refuses ``ε >= 1`` (the theorem's range);
    both papers use the formula beyond it (Li, Zhou & Ji 2022, §7: ``ε = 10``), so it is
    evaluated there through the homogeneity ``σ(ε, δ, Δ) = σ(ε/2^m, δ, Δ/2^m)`` with ``2^m > ε``
    (exact divisions by a power of two): the number is the formula's, a guarantee only where the
    run's ledger says so.
    """
    eps = v.positive("epsilon", epsilon)
    d = v.open_unit("delta", delta)
    sens = v.positive("sensitivity", sensitivity)
    scale = 2.0 ** max(0, math.frexp(eps)[1])
    return float(gaussian_sigma_classic(eps / scale, d, sens / scale))


def releases_epsilon(releases: Sequence[Mechanism], delta: float) -> float:
    """The certified ε at ``delta`` of one user's ``releases`` composed (replace-one)."""
    return ledger_epsilon(tuple(Event(r) for r in releases), delta)
