"""Cells of a continuous pair split in floating point (:class:`~accounting.pld.discretization._FloatCells`).

Each float is an outward bound of an Arb ball (exact comparisons), the grids agree with the all-Arb
path to rounding, and so do the certified answers of a long composition.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from mpmath import mp

from accounting import AdditiveNoise, Gaussian, Laplace
from accounting.balls import arb, ball_precision, lower_of, upper_of
from accounting.pld import discretization
from accounting.pld.atoms import pair_atoms
from accounting.pld.distribution import PrivacyLossDistribution, pair_distribution
from accounting.pld.grid import probability_bits
from accounting.pld.pairs import dominating_pairs
from accounting.subsampling import PoissonSampled

DPS = 20


def _pair(kind: str) -> object:
    noise = Gaussian(1.0) if kind == "gaussian" else Laplace(1.0)
    pairs = dominating_pairs(PoissonSampled(AdditiveNoise(noise, 1.0), 0.01), "add-remove")
    return pairs["remove"]


def _arb_only(pair: object, h: float, monkeypatch: pytest.MonkeyPatch) -> PrivacyLossDistribution:
    with monkeypatch.context() as m:
        m.setattr(discretization, "_FLOAT_GAP", math.inf)
        return pair_distribution(pair, h, DPS, {}, 1e-14)  # type: ignore[arg-type]


def _both_paths(
    pair: object, h: float, relative: float, absolute: float, monkeypatch: pytest.MonkeyPatch
) -> tuple[PrivacyLossDistribution, PrivacyLossDistribution]:
    """The PLD of ``pair`` by the float path and by the all-Arb one, their pessimistic masses
    checked equal point by point within ``relative`` of a mass plus ``absolute``."""
    fast = pair_distribution(pair, h, DPS, {}, 1e-14)  # type: ignore[arg-type]
    slow = _arb_only(pair, h, monkeypatch)
    a, b = fast.pessimistic, slow.pessimistic
    assert (a.start, a.size, a.infinite) == (b.start, b.size, b.infinite)
    for x, y in zip(a.masses, b.masses, strict=True):
        assert abs(x - y) <= relative * max(x, y) + absolute * 2.0**fast.bits
    return fast, slow


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_float_splits_bound_the_arb_balls(kind: str) -> None:
    """``p_a``, ``p_b`` are at least the upper ends of their Arb balls (and not far above); the
    optimistic reads (``P``, ``Q``, ``e^{-l_a}``, ``l_a``) at most the lower ends."""
    pair = _pair(kind)
    h = 2.0**-10
    atoms = pair_atoms(pair, h, probability_bits(DPS), DPS, {}, 1e-14)  # type: ignore[arg-type]
    table = atoms.table
    assert table is not None
    with ball_precision(200):
        ends = [table.bottom, *table.losses, table.top]
        exps = [None if e is None else ((-e.lower()).exp(), (-e.upper()).exp()) for e in ends]
        cells = discretization._FloatCells(table, ends, exps, h)
        assert len(cells.idx) > 0.8 * len(table.masses)  # the bulk goes the float way
        for c, i in enumerate(cells.idx.tolist()):
            p, q = table.masses[i]
            ea, eb = exps[i][0], exps[i + 1][1]  # type: ignore[index]
            gap = ea - eb
            for got, ball in ((cells.p_a[c], (q - p * eb) / gap), (cells.p_b[c], (p * ea - q) / gap)):
                exact = min(upper_of(p), max(mp.zero, upper_of(ball)))
                assert mp.mpf(float(got)) >= exact
                assert mp.mpf(float(got)) <= exact * (1 + 2.0**-50) + mp.mpf(2) ** -1070
            assert mp.mpf(float(cells.p_lo[c])) <= lower_of(p)
            assert mp.mpf(float(cells.q_lo[c])) <= lower_of(q)
            assert mp.mpf(float(cells.q_hi[c])) >= upper_of(q)
            assert mp.mpf(float(cells.ea_lo[c])) <= lower_of(ea)
            assert mp.mpf(float(cells.la_lo[c])) <= lower_of(ends[i])  # type: ignore[arg-type]
        # the optimistic atoms: Q-mass, loss (in 2^-64 grid steps) and P/Q, each at most the truth
        q_bits = probability_bits(DPS) + 40
        merged: list[discretization.Atom] = []
        cells.atoms(q_bits, Fraction(h), merged, table)
        assert len(merged) == len(cells.idx)
        scale = mp.mpf(2) ** discretization._LOSS_BITS / mp.mpf(h)
        for (steps, m, ratio), i in zip(merged, cells.idx.tolist(), strict=True):  # type: ignore[misc]
            p, q = table.masses[i]
            assert m <= lower_of(q) * mp.mpf(2) ** q_bits
            assert ratio <= lower_of(p / q) * mp.mpf(2) ** discretization._RATIO_BITS
            assert steps <= lower_of((p / q).log()) * scale
            assert steps >= lower_of(ends[i]) * scale - 2**12  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_float_and_arb_grids_agree(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pessimistic masses point by point to rounding (1e-11 of the mass, 1e-12 absolute), totals to
    3e-14; after 1000 compositions the upper ends of ε agree to 1e-12 and the float path's
    enclosure is no wider than the Arb one's by more than 1e-9 of ε."""
    # a float end lies an ulp or two above the exact one: up to ~1e-12 of a mass moves a step
    fast, slow = _both_paths(_pair(kind), 2.0**-12, 1e-11, 2.0**-40, monkeypatch)
    bits = fast.bits
    a, b = fast.pessimistic, slow.pessimistic
    assert abs(sum(a.masses) - sum(b.masses)) <= 2.0 ** (bits - 45)
    total_o = sum(fast.optimistic.masses)
    assert abs(total_o - sum(slow.optimistic.masses)) <= 2.0 ** (bits - 45)  # float P/Q: 1e-16 each
    e_fast = fast.self_compose(1000).epsilon(1e-5)
    e_slow = slow.self_compose(1000).epsilon(1e-5)
    assert abs(e_fast.hi - e_slow.hi) <= 1e-12 * e_slow.hi
    assert e_fast.hi - e_fast.lo <= (e_slow.hi - e_slow.lo) + 1e-9 * e_slow.hi


def test_put_rounds_every_grid_mass_up() -> None:
    """Masses at ends whose float bounds are grid points: every suffix of the grid holds at least
    the exact sum of the floats put at or above it, scaled to fixed point (tiny, inexact sums: a
    rounding down would show), and not more than rounding above it."""
    h = 2.0**-10
    bits = 96
    cells = object.__new__(discretization._FloatCells)
    cells.idx = np.array([0, 1, 2, 3, 4], dtype=np.int64)
    cells.p_a = np.array([1e-20, 3e-21, 7.7e-21, 0.1, 1.3e-21])
    cells.p_b = np.array([2e-20, 1.1e-20, 5e-22, 0.2, 9e-21])
    cells.h = h
    with ball_precision(100):
        # losses an ulp below grid points: their float upper bounds (an ulp outward) are on them
        ends = [arb(math.nextafter(k * h, 0.0)) for k in (3, 4, 4, 5, 5, 6)]  # two cells a point

        def no_rule(k: int) -> discretization._SplitRule:
            raise AssertionError("ends on grid points need no split rule")

        pess: dict[int, int] = {}
        cells.put(bits, pess, no_rule, ends)  # type: ignore[arg-type]
    exact: dict[int, Fraction] = {}
    for c in range(5):
        for end, mass in ((c, cells.p_a[c]), (c + 1, cells.p_b[c])):
            j = round(float(ends[end].mid()) / h)  # the grid point above
            exact[j] = exact.get(j, Fraction(0)) + Fraction(float(mass))
    for j in range(3, 9):
        held = sum(m for i, m in pess.items() if i >= j)
        due = sum(m for i, m in exact.items() if i >= j)
        assert held >= due * 2**bits
        assert held <= due * 2**bits * (1 + 2.0**-48) + 2


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_a_spacing_not_a_power_of_two_gives_the_arb_grids(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Losses over such a spacing are rounded in floats, so every end takes its exact rule
    (:func:`~accounting.pld.discretization._split_rule`, from the Arb ball): the grids agree with
    the all-Arb path to the floats' own rounding (1e-13 of a mass). The shortcuts' error from a
    rounded quotient would be about 1e-12 of a mass at most, which this comparison cannot see: the
    rule is the module's, not the test's."""
    _both_paths(_pair(kind), 3 * 2.0**-14, 1e-13, 2.0**-60, monkeypatch)
