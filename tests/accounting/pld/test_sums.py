"""The blocked suffix sums of a grid (:mod:`accounting.pld.sums`) against exact rationals.

``M(i)`` must be exact; ``H(i) = Σ_{j >= i} m_j r^{j-i}`` (``r`` the fixed-point ratio read as an
exact rational) must be bounded from below on the pessimistic side and from above on the
optimistic one, within a few units per block, for grids held as integers or as byte rows, at
lengths around the block size, and at every index asked in any order.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from accounting.pld.grid import Grid, Rows, add_rows
from accounting.pld.sums import BLOCK, GUARD_BITS, SuffixSums

BITS = 96
FRAC = BITS + 2 * GUARD_BITS


def _exact(masses: tuple[int, ...], r: Fraction) -> list[tuple[int, Fraction]]:
    """``(M(i), H(i) 2^G)`` for every ``i``, by the point-by-point recurrence in rationals."""
    out: list[tuple[int, Fraction]] = []
    m, h = 0, Fraction(0)
    for x in reversed(masses):
        m, h = m + x, x + r * h
        out.append((m, h * 2**GUARD_BITS))
    return out[::-1]


@pytest.mark.parametrize("n", [1, 7, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 17])
@pytest.mark.parametrize("held", ["ints", "rows"])
@pytest.mark.parametrize("up", [False, True])
@pytest.mark.parametrize(("bits", "frac"), [(BITS, FRAC), (8, 8 + 2 * GUARD_BITS), (40, GUARD_BITS + 1)])
def test_suffix_sums_bound_the_exact_sums(n: int, held: str, up: bool, bits: int, frac: int) -> None:
    """With few fractional bits (8; or a ratio and powers of G + 1 bits) each rounding shows:
    one in the wrong direction fails."""
    rng = random.Random(n)
    # masses of all sizes, with runs of zeros (a grid's empty stretches)
    masses = tuple(
        0 if rng.random() < 0.2 else rng.getrandbits(rng.choice([1, bits // 2, bits])) for _ in range(n)
    )
    # r = e^{-h} near 1 (h small), so that blocks far above still count
    ratio = (1 << frac) - rng.getrandbits(frac - 8) - 1
    grid = Grid(5, masses, 3)
    if held == "rows":
        grid = Rows.of(grid, bits).grid()
        assert not isinstance(grid.held, tuple)
    sums = SuffixSums(grid, ratio, frac, up)
    exact = _exact(masses, Fraction(ratio, 1 << frac))
    order = list(range(n + 1))
    rng.shuffle(order)
    # units of 2^-(bits + G): one per block and per power (powers of few bits: the powers' own)
    allowed = (
        4 * (n // BLOCK + 2) if frac > bits + GUARD_BITS else (n + 2) * (1 << (bits + GUARD_BITS - frac + 9))
    )
    for i in order:
        if i == n:
            assert (sums.mass(i), sums.horner(i)) == (0, 0)
            continue
        mass, horner = exact[i]
        assert sums.mass(i) == mass
        assert sums.at(i) == masses[i]
        gap = sums.horner(i) - horner if up else horner - sums.horner(i)
        assert 0 <= gap < allowed


def test_an_empty_grid_has_empty_sums() -> None:
    sums = SuffixSums(Grid(0, (), 0), 1 << (FRAC - 1), FRAC, False)
    assert (sums.mass(0), sums.horner(0)) == (0, 0)


def test_grids_held_either_way_are_equal() -> None:
    masses = (0, 5, 1 << 90, 7)
    as_ints = Grid(2, masses, 11, 0.5)
    as_rows = Rows.of(as_ints, BITS).grid()
    assert as_rows == as_ints
    assert as_rows.masses == masses
    assert as_rows.size == 4
    assert as_rows != Grid(3, masses, 11, 0.5)


@pytest.mark.parametrize("width", [1, 3, 4, 13, 17])
def test_byte_rows_add_exactly_with_carries(width: int) -> None:
    """:func:`~accounting.pld.grid.add_rows` against Python integers: all-ones rows (a carry through
    every limb), zeros, random values; a sum wider than the rows is refused."""
    rng = random.Random(width)
    top = (1 << (8 * width)) - 1
    pairs = [(top // 2, top // 2 + 1), (0, 0), (top, 0), (1, top - 1)]
    pairs += [(x, rng.randrange(top + 1 - x)) for x in (rng.randrange(top + 1) for _ in range(200))]
    a = Rows.of_ints(0, np.array([x for x, _ in pairs], dtype=object), 0, 8 * width - 8).rows
    b = Rows.of_ints(0, np.array([y for _, y in pairs], dtype=object), 0, 8 * width - 8).rows
    got = Rows(0, add_rows(a, b), 0).ints().tolist()
    assert got == [x + y for x, y in pairs]
    with pytest.raises(AssertionError, match="exceeds"):
        add_rows(a[:1], Rows.of_ints(0, np.array([top // 2 + 2], dtype=object), 0, 8 * width - 8).rows)
