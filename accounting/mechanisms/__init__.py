"""Mechanisms users ask about: additive noise, distributed sums of noise shares, and cited guarantees.

* :class:`AdditiveNoise` — ``q(D) + X`` for a query of sensitivity ``Δ`` (an integer for lattice
  noise) (:mod:`accounting.mechanisms.additive`; the Gaussian in closed form,
  :mod:`accounting.mechanisms.gaussian`).
* :class:`DistributedSum` — ``n`` users each add an independent share; the released sum carries
  the ``n``-fold convolution: Pólya ``(1/n, β)`` differences make a discrete Laplace exactly
  (Goryczka & Xiong 2015), Skellam shares a Skellam, discrete Gaussian shares a sum of discrete
  Gaussians. Under add-remove it is :class:`AddRemoveSum`; a vector query bounded in ℓ2 is
  :class:`DistributedVectorSum` (:mod:`accounting.mechanisms.distributed`).
* :class:`PureDP` and :class:`ApproxDP` — a mechanism known (by a cited theorem) to be ``ε``-DP or
  ``(ε, δ)``-DP and nothing more, such as the relaxed secure aggregation of Cheu & Yan whose
  ``2ε̂`` term Theorem 3 of the distributed MAB paper adds. It answers for the worst case over all
  such mechanisms: binary randomized response (Kairouz, Oh & Viswanath 2015)
  (:mod:`accounting.mechanisms.cited`).

All of them answer ``epsilon(delta)``, ``delta(epsilon)``, ``rdp(alpha)``, ``pure_epsilon()`` and
``zcdp_rho()`` with certified enclosures (``float(result)`` is the upper end rounded up)
(:class:`Mechanism`, :mod:`accounting.mechanisms.base`). A mechanism is the description of a
release and its exact answers; composing a ledger of them by privacy-loss distributions is
:mod:`accounting.pld`, which builds on this package.
"""

from __future__ import annotations

from accounting.mechanisms.additive import AdditiveNoise
from accounting.mechanisms.base import Mechanism, float_at_least
from accounting.mechanisms.cited import ApproxDP, PureDP
from accounting.mechanisms.distributed import (
    MAX_ADD_REMOVE_PAIRS,
    AddRemoveSum,
    DistributedSum,
    DistributedVectorSum,
)

__all__ = [
    "MAX_ADD_REMOVE_PAIRS",
    "AddRemoveSum",
    "AdditiveNoise",
    "ApproxDP",
    "DistributedSum",
    "DistributedVectorSum",
    "Mechanism",
    "PureDP",
    "float_at_least",
]
