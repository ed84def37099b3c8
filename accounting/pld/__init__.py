"""Certified composition of privacy-loss distributions (PLDs): lattice, continuous, subsampled, cited.

The privacy loss of a pair ``(P, Q)`` is ``L(x) = ln(P(x)/Q(x))`` with ``x ~ P`` (``+inf`` where
``Q(x) = 0``), and

    δ(ε) = E_P[(1 - e^{ε - L})_+] = E_Q[(e^{L} - e^{ε})_+] + P(L = +inf)      (hockey stick)

(Meiser–Mohammadi 2018; Sommer–Meiser–Mohammadi 2019). The losses of independent mechanisms add,
so a composition is a convolution of PLDs. What is composed is a *dominating pair* of each
mechanism (Zhu, Dong & Wang 2022), and under add-remove the two directions of the relation are
composed separately over the whole ledger and the worse one is the answer.

Every PLD is a *pair* of grids of losses ``offset + j·h`` with exact fixed-point probabilities: a
pessimistic one (connect the dots, Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022) and an
optimistic one (a mean-preserving contraction of the loss), so that every answer is an
:class:`~accounting.certified.Enclosure` ``[optimistic, pessimistic]``.

The package, from the bottom up (each module builds on the ones before it):

* :mod:`~accounting.pld.grid` — one side: a fixed-point measure on the grid;
* :mod:`~accounting.pld.products` — the product of two sides: exact (:mod:`accounting.convolution`),
  by FFT with a certified error, or both (:func:`exact_products` turns the FFT off);
* :mod:`~accounting.pld.powers` — a side's ``n``-fold product by one transform each way (the
  spectrum's ``n``-th power), with a certified error and a window from Chernoff's bound;
* :mod:`~accounting.pld.coarsening` — a side moved onto twice the spacing (:data:`MAX_GRID_POINTS`);
* :mod:`~accounting.pld.pairs` — the dominating pairs of each event (:func:`dominating_pairs`);
* :mod:`~accounting.pld.atoms` — the loss atoms (points or cells) of one pair;
* :mod:`~accounting.pld.spacing` — the grid spacing when none is given (:func:`default_spacing`);
* :mod:`~accounting.pld.discretization` — from atoms to the two grids;
* :mod:`~accounting.pld.distribution` — the PLD value (:class:`PrivacyLossDistribution`): its
  compositions and its certified ``δ(ε)`` and ``ε(δ)``;
* :mod:`~accounting.pld.ledger` — a ledger of events composed per direction (:func:`compose_events`,
  :class:`ComposedPLD`; one release per direction, :func:`event_distributions`).

A ledger of Gaussian mechanisms only is one Gaussian mechanism and is answered in closed form
(Balle & Wang 2018, Theorem 8): :mod:`accounting.mechanisms.gaussian`, whose functions are
re-exported here.
"""

from __future__ import annotations

from accounting.mechanisms.gaussian import (
    gaussian_composition_delta,
    gaussian_composition_epsilon,
    gaussian_equivalent_sigma,
)
from accounting.pld.coarsening import MAX_GRID_POINTS
from accounting.pld.distribution import MAX_COMPOSITIONS, PrivacyLossDistribution
from accounting.pld.ledger import (
    EPSILON_RTOL,
    EPSILON_SLACK_SHARE,
    SLACK_SHARE,
    ComposedPLD,
    compose_events,
    compose_mechanisms,
    event_distributions,
)
from accounting.pld.pairs import dominating_pairs
from accounting.pld.products import FLOAT_SLACK, exact_products
from accounting.pld.spacing import default_spacing

__all__ = [
    "EPSILON_RTOL",
    "EPSILON_SLACK_SHARE",
    "FLOAT_SLACK",
    "MAX_COMPOSITIONS",
    "MAX_GRID_POINTS",
    "SLACK_SHARE",
    "ComposedPLD",
    "PrivacyLossDistribution",
    "compose_events",
    "compose_mechanisms",
    "default_spacing",
    "dominating_pairs",
    "event_distributions",
    "exact_products",
    "gaussian_composition_delta",
    "gaussian_composition_epsilon",
    "gaussian_equivalent_sigma",
]
