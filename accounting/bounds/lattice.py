"""The integer shifts of a vector query: the sensitivities the lattice bounds take.

A query with values in ``Z^d`` changes by an integer vector ``v``; the Skellam bound
(:mod:`accounting.bounds.skellam`) and the sum of discrete Gaussians
(:mod:`accounting.bounds.discrete_gaussian`) are stated in ``‖v‖₂²``, ``‖v‖₁`` and the number of
nonzero coordinates of ``v``, which :func:`lattice_shift` bounds from the ℓ2 (and ℓ1) sensitivity.
"""

from __future__ import annotations

import math

from accounting import validate as v
from accounting.certified import exact_fraction

__all__ = ["lattice_shift"]


def lattice_shift(sensitivity: object, dimension: object, l1: object) -> tuple[int, int, int]:
    """``(S2, S1, m)``: integer bounds on ``‖v‖₂²``, on ``‖v‖₁`` and on the number of nonzero
    coordinates of every shift ``v ∈ Z^d`` of an integer query.

    In one dimension (``dimension = 1``) ``sensitivity`` is the integer ``Δ >= 1``, and
    ``(S2, S1, m) = (Δ², Δ, 1)``. For a vector, ``sensitivity`` is the ℓ2 bound ``Δ2`` (any real
    ``>= 1``: a nonzero integer vector has norm at least 1) and ``l1`` an optional ℓ1 bound
    ``Δ1``. Because ``v`` has integer coordinates:

    * ``‖v‖₂²`` is an integer ``<= Δ2²``, so ``S2 = ⌊Δ2²⌋`` (exact rational arithmetic);
    * ``‖v‖₁ <= √d ‖v‖₂`` (Cauchy–Schwarz against the all-ones vector), and ``|v_i| <= v_i²``
      for every integer ``v_i`` (equality at 0 and ±1, and ``|v_i| >= 2`` otherwise), so
      ``‖v‖₁ <= ‖v‖₂²``. ``‖v‖₁`` is an integer, so
      ``S1 = min(⌊Δ1⌋, ⌊√(d·S2)⌋, S2)`` — the smaller of ``√d·Δ2`` and ``Δ2²`` when ``Δ1``
      is not given;
    * every nonzero coordinate adds at least 1 to ``‖v‖₁``: ``m = min(d, S1)``.
    """
    d = v.integer("dimension", dimension, minimum=1)
    if d == 1:
        s = v.integer("sensitivity", sensitivity, minimum=1)
        if l1 is not None:
            v.interval("l1", l1, 1, math.inf, low_open=False, why="a nonzero integer shift has |v| >= 1")
            s = min(s, math.floor(exact_fraction(l1, "l1")))
        return s * s, s, 1
    why = "a nonzero integer vector has ℓ2 norm >= 1"
    v.interval("sensitivity", sensitivity, 1, math.inf, low_open=False, why=why)
    s2 = math.floor(exact_fraction(sensitivity, "sensitivity") ** 2)
    s1 = min(math.isqrt(d * s2), s2)
    if l1 is not None:
        v.interval("l1", l1, 1, math.inf, low_open=False, why="a nonzero integer vector has ℓ1 norm >= 1")
        s1 = min(s1, math.floor(exact_fraction(l1, "l1")))
    return s2, s1, min(d, s1)
