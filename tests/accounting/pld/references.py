"""Independent references shared by the tests of :mod:`accounting.pld`.

Every reference is computed independently of the code under test:

* one mechanism: the exact single-shot ``δ(ε)`` / ``ε(δ)`` of :mod:`accounting.divergence`
  (a direct sum over outputs, not over losses);
* ``k``-fold discrete Laplace: the loss of ``Lap_Z(b)`` under ``(X + 1, X)`` is ``±1/b`` with
  ``P(+1/b) = P(X >= 0) = 1/(1 + e^{-1/b})``, so the composed loss is ``(2K - k)/b`` with
  ``K ~ Binomial(k, 1/(1 + e^{-1/b}))``: ``δ(ε)`` and ``ε(δ)`` in :mod:`mpmath` at 60 digits
  (:func:`binomial_atoms`);
* small compositions of centred binomials and Skellams: brute-force hockey-stick sums over the
  product space (:func:`product_atoms`), with PMFs from :func:`math.comb` and
  :func:`mpmath.besseli`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from hypothesis import settings
from mpmath import mp

from accounting import (
    Enclosure,
)
from accounting.pld import (
    PrivacyLossDistribution,
)

Mpf = Any
REF_DPS = 60
FAST = settings(max_examples=12, deadline=None)


def pld(mechanism: Any, spacing: float | None = None, dps: int = 30) -> PrivacyLossDistribution:
    return PrivacyLossDistribution.from_mechanism(mechanism, spacing=spacing, dps=dps)


def overlaps(a: Enclosure, b: Enclosure) -> bool:
    return bool(a.lo <= b.hi and b.lo <= a.hi)


def assert_in(value: Mpf, enclosure: Enclosure) -> None:
    assert enclosure.lo <= value <= enclosure.hi, (value, enclosure)


# ---------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------


def brute_delta(atoms: list[tuple[Mpf, Mpf]], epsilon: float) -> Mpf:
    """Σ max(0, p - e^ε q) over (P-mass, Q-mass) atoms of a pair."""
    e = mp.exp(mp.mpf(epsilon))
    return mp.fsum(max(mp.zero, p - e * q) for p, q in atoms)


def brute_epsilon(atoms: list[tuple[Mpf, Mpf]], delta: float) -> Mpf:
    """``max(0, max_S ln((P(S) - δ)/Q(S)))`` over the top sets of atoms sorted by loss."""
    ordered = sorted(atoms, key=lambda pq: mp.inf if pq[1] == 0 else pq[0] / pq[1], reverse=True)
    best, a, b = mp.zero, mp.zero, mp.zero
    for p, q in ordered:
        a += p
        b += q
        if a > delta and b > 0:
            best = max(best, mp.log((a - delta) / b))
        elif a > delta:
            return mp.inf
    return best


def binomial_atoms(scale: float, count: int) -> list[tuple[Mpf, Mpf]]:
    """The ``count``-fold discrete Laplace pair as (P-mass, Q-mass) atoms of its loss."""
    b = mp.mpf(scale)
    up = 1 / (1 + mp.exp(-1 / b))
    atoms = []
    for k in range(count + 1):
        p = mp.binomial(count, k) * up**k * (1 - up) ** (count - k)
        atoms.append((p, p * mp.exp(-(2 * k - count) / b)))
    return atoms


def product_atoms(table: dict[int, Mpf], shift: int, count: int) -> list[tuple[Mpf, Mpf]]:
    """Atoms of ``(X + Δ)^{⊗k}`` vs ``X^{⊗k}`` by enumerating the product space."""
    support = sorted(set(table) | {x + shift for x in table})
    single = [(table.get(x - shift, mp.zero), table.get(x, mp.zero)) for x in support]
    atoms = []
    for combo in itertools.product(single, repeat=count):
        p = mp.fprod(c[0] for c in combo)
        q = mp.fprod(c[1] for c in combo)
        if p or q:
            atoms.append((p, q))
    return atoms


def binomial_table(trials: int) -> dict[int, Mpf]:
    half = trials // 2
    return {k - half: mp.mpf(math.comb(trials, k)) / 2**trials for k in range(trials + 1)}


def skellam_table(variance: float, reach: int) -> dict[int, Mpf]:
    mu = mp.mpf(variance) / 2
    return {k: mp.exp(-2 * mu) * mp.besseli(abs(k), 2 * mu) for k in range(-reach, reach + 1)}
