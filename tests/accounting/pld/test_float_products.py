"""Float products in compositions (accounting.pld.products.compose_rows): what the FFT's error is made
good by, checked exactly against the exact integer product of the same sides.

The pessimistic side must dominate the exact product in every upper tail ``P(L > t)`` (its
``+inf`` included), the optimistic side be dominated by it in every one, and both differ from it
by no more than the slack they report.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from accounting import Accountant, AdditiveNoise, DiscreteLaplace, Gaussian, convolution
from accounting.convolution import fft_error
from accounting.neighbouring import Neighbouring
from accounting.pld import (
    SLACK_SHARE,
    ComposedPLD,
    PrivacyLossDistribution,
    compose_events,
    dominating_pairs,
    exact_products,
)
from accounting.pld import ledger as ledger_module
from accounting.pld import products as products_module
from accounting.pld.grid import Rows
from accounting.pld.products import compose_rows, fixed_masses, float_masses
from accounting.subsampling import MixturePair, PoissonSampled

BITS = 96


def side(masses: np.ndarray, start: int = 0, infinite: float = 0.0) -> Rows:
    """A side of fixed-point masses (each probability rounded down to BITS bits)."""
    ints = np.array([int(m * 2.0**BITS) for m in masses], dtype=object)
    return Rows.of_ints(start, ints, int(infinite * 2.0**BITS), BITS)


def upper_tails(rows: Rows, lo: int, hi: int) -> list[int]:
    """``mass(L > t) + mass(+inf)`` for every grid index ``t`` in ``[lo, hi)``, exactly."""
    ints = rows.ints().tolist()
    suffix = [rows.infinite]
    for m in reversed(ints):
        suffix.append(suffix[-1] + m)
    suffix.reverse()  # suffix[j] = infinite + Σ ints[j:]
    return [suffix[min(len(ints), max(0, t + 1 - rows.start))] for t in range(lo, hi)]


def shapes() -> list[np.ndarray]:
    x = np.linspace(-6, 6, 1500)
    gaussian = np.exp(-x * x / 2)
    skewed = np.concatenate([[0.99 * 1500], np.exp(-np.linspace(0, 40, 1499))])
    return [gaussian / gaussian.sum(), skewed / skewed.sum()]


@pytest.mark.parametrize("same", [True, False])
def test_float_products_bound_the_exact_product_on_each_side(same: bool) -> None:
    first, second = shapes()
    a = side(first, start=-700, infinite=1e-9)
    b = a if same else side(second, start=3)
    lo = a.start + b.start - 1
    hi = lo + len(a.rows) + len(b.rows) + 1
    for up in (True, False):
        exact = compose_rows(a, b, BITS, up, same)  # allowance 0: the exact product
        fast = compose_rows(a, b, BITS, up, same, allowance=1.0)
        assert exact.slack == 0.0
        assert 0 < fast.slack < 1e-13
        tails_exact, tails_fast = upper_tails(exact, lo, hi), upper_tails(fast, lo, hi)
        gaps = [f - e for f, e in zip(tails_fast, tails_exact, strict=True)]
        if up:
            assert min(gaps) >= 0  # every upper tail at least the exact one's
        else:
            assert max(gaps) <= 0  # every upper tail at most the exact one's
        assert max(abs(g) for g in gaps) <= fast.slack * 2.0**BITS


def test_float_products_are_taken_only_within_their_allowance() -> None:
    a = side(shapes()[0])
    assert compose_rows(a, a, BITS, True, True, allowance=1e-30).slack == 0.0
    assert compose_rows(a, a, BITS, True, True, allowance=1.0).slack > 0.0
    with exact_products():
        assert compose_rows(a, a, BITS, True, True, allowance=1.0).slack == 0.0
    # wider fixed point than floats resolve: always exact
    wide = Rows.of_ints(0, a.ints() << 40, 0, BITS + 40)
    assert compose_rows(wide, wide, BITS + 40, True, True, allowance=1.0).slack == 0.0


def test_float_masses_round_in_the_direction_asked() -> None:
    rng = np.random.default_rng(1)
    ints = [int(x) for x in rng.integers(0, 2**62, 200)] + [2**100 - 1, 1, 0, 2**96]
    rows = Rows.of_ints(0, np.array([x << 35 for x in ints[:-4]] + ints[-4:], dtype=object), 0, BITS).rows
    exact = [int.from_bytes(r.tobytes(), "little") for r in rows]
    up, down = float_masses(rows, BITS, True), float_masses(rows, BITS, False)
    for e, u, d in zip(exact, up, down, strict=True):
        scaled = Fraction(e, 2**BITS)
        assert Fraction(*d.as_integer_ratio()) <= scaled <= Fraction(*u.as_integer_ratio())
        assert Fraction(*(u - d).as_integer_ratio()) <= Fraction(1, 2**58) * scaled
    back_up = fixed_masses(up, BITS, True, rows.shape[1])
    back_down = fixed_masses(down, BITS, False, rows.shape[1])
    for e, r_up, r_down in zip(exact, back_up, back_down, strict=True):
        assert int.from_bytes(r_down.tobytes(), "little") <= e <= int.from_bytes(r_up.tobytes(), "little")


def test_a_long_composition_is_as_tight_and_says_where_slack_matters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """10^3 Poisson-sampled Gaussians: the float products' slack is far below δ = 1e-5 and the
    enclosure's ends are the exact products' to within 1e-6; at a δ the slack would loosen,
    :meth:`ComposedPLD.loose_at` says so."""
    monkeypatch.setattr(products_module, "FFT_MIN_POINTS", 64)
    event = PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.01)
    pair = dominating_pairs(event, "add-remove")["remove"]
    assert isinstance(pair, MixturePair)
    one = PrivacyLossDistribution.from_pair(pair)
    fast = one.self_compose(1000)
    with exact_products():
        exact = one.self_compose(1000)
    assert exact.slack < 1e-40  # only the tails the window leaves (2^-104 of each end, certified)
    assert 0 < fast.slack < 1e-13
    composed = ComposedPLD(Neighbouring.ADD_REMOVE, {"remove": fast})
    assert not composed.loose_at(1e-5)
    assert composed.loose_at(fast.slack / SLACK_SHARE / 2)
    a, b = fast.epsilon(1e-5), exact.epsilon(1e-5)
    # to a millionth: the two may coarsen after different squarings (float products cut tails
    # that exact ones keep), and the optimistic merges then differ
    assert abs(float(a.hi) - float(b.hi)) < 1e-6
    assert abs(float(a.lo) - float(b.lo)) < 1e-6


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_the_accountant_composes_exactly_where_the_slack_would_loosen_its_answer(
    monkeypatch: pytest.MonkeyPatch, share: float
) -> None:
    """δ(ε) is composed with FLOAT_SLACK (here 1: float products wherever they fit); where the
    slack is more than a share of the δ found (every δ, with a share of 0) the Accountant composes
    again with exact products, and with a share of 1 it keeps the float products' answer."""
    monkeypatch.setattr(products_module, "FFT_MIN_POINTS", 16)
    monkeypatch.setattr("accounting.pld.FLOAT_SLACK", 1.0)
    monkeypatch.setattr(ledger_module, "SLACK_SHARE", share)
    event = AdditiveNoise(DiscreteLaplace(beta=0.8), 1)
    accountant = Accountant("replace-one")
    accountant.compose(event, 300)
    answer = accountant.delta(20.0, route="pld")
    fast = compose_events([(event, 300)], "replace-one", slack=1.0)
    exact = compose_events([(event, 300)], "replace-one", slack=0.0)
    assert fast.slack > 0
    assert fast.delta(20.0) != exact.delta(20.0)
    assert answer == (exact if share == 0.0 else fast).delta(20.0)


def off_by(values: np.ndarray, bound: float, up: bool, keep: float) -> np.ndarray:
    """``values`` off by 0.9 of ``bound`` in the worst place for a side: mass missing from the top
    (pessimistic) or extra at the highest entry with more than ``keep·bound`` above it (optimistic:
    where no tail cut would drop it)."""
    c = values.copy()
    if up:
        take = 0.9 * bound
        for j in range(len(c) - 1, -1, -1):
            used = min(float(c[j]), take)
            c[j] -= used
            take -= used
            if take <= 0:
                break
    else:
        suffix = np.cumsum(c[::-1])[::-1]
        inside = np.flatnonzero(suffix > keep * bound)
        c[int(inside[-1]) if len(inside) else int(np.argmax(c))] += 0.9 * bound
    return c


def concentrated() -> np.ndarray:
    """As one step of a subsampled release: 99% of the mass on four points, a thin tail (flat, so
    that no product of it has a negligible top tail to cut)."""
    masses = np.full(20000, 0.01 / 20000)
    masses[10:14] += 0.99 / 4
    return masses


@pytest.mark.parametrize("up", [True, False])
@pytest.mark.parametrize("shape", ["smooth", "box", "concentrated"])
def test_an_fft_error_as_large_as_its_bound_still_leaves_each_side_on_its_side(
    monkeypatch: pytest.MonkeyPatch, up: bool, shape: str
) -> None:
    """The FFT's real errors are far below its bound, so the test above cannot tell whether the
    bound is made good. Here the product is off by 0.9 of the bound in the worst place: mass
    missing from the top (the pessimistic side's danger) or extra at the top (the optimistic's),
    on a smooth law and on a box, whose product has no negligible tail to cut."""
    real = convolution.fft_convolve

    def adversarial(a: np.ndarray, b: np.ndarray, same: bool = False) -> np.ndarray:
        return off_by(real(a, b, same), convolution.fft_error(a, b, same), up, 3)

    monkeypatch.setattr("accounting.pld.products.fft_convolve", adversarial)
    laws = {"smooth": shapes()[0], "box": np.full(1500, 1 / 1500), "concentrated": concentrated()}
    a = side(laws[shape])  # a box's product has no tail to cut; a concentrated one takes the split
    fa = float_masses(a.rows, BITS, up)
    allowance = fft_error(fa, fa, True) / 10 if shape == "concentrated" else 1.0
    exact = compose_rows(a, a, BITS, up, True)
    fast = compose_rows(a, a, BITS, up, True, allowance=allowance)
    assert fast.slack > 0
    lo, hi = 2 * a.start - 1, 2 * a.start + 2 * len(a.rows)
    gaps = [f - e for f, e in zip(upper_tails(fast, lo, hi), upper_tails(exact, lo, hi), strict=True)]
    assert (min(gaps) >= 0) if up else (max(gaps) <= 0)


@pytest.mark.parametrize("up", [True, False])
def test_a_concentrated_side_takes_the_split_product_and_stays_on_its_side(up: bool) -> None:
    """One step of a subsampled release (:func:`concentrated`). The plain FFT's bound (which
    scales with ‖a‖_2) is refused; the bulk is multiplied exactly and only the
    thin rest by FFT, with a bound dozens of times smaller."""
    a = side(concentrated(), start=-20)
    fa = float_masses(a.rows, BITS, up)
    plain = fft_error(fa, fa, True)
    exact = compose_rows(a, a, BITS, up, True)
    split = compose_rows(a, a, BITS, up, True, allowance=plain / 10)
    assert 0 < split.slack < plain / 20
    lo, hi = 2 * a.start - 1, 2 * a.start + 2 * len(a.rows)
    gaps = [f - e for f, e in zip(upper_tails(split, lo, hi), upper_tails(exact, lo, hi), strict=True)]
    assert (min(gaps) >= 0) if up else (max(gaps) <= 0)
    assert max(abs(g) for g in gaps) <= split.slack * 2.0**BITS


@pytest.mark.parametrize("dtype", [np.float64, np.longdouble])
def test_fixed_masses_round_exactly_across_the_limbs(dtype: type) -> None:
    """``⌈v·2^bits⌉`` and ``⌊v·2^bits⌋`` exactly, at the edges of the two 64-bit limbs."""
    two = dtype(2)
    scaled = [dtype(x) for x in (0.0, 0.25, 1.0, 1.5)]
    scaled += [two**63, two**64 - two**11, two**64 + two**12, two**90 + two**40, two**103]
    if np.finfo(dtype).nmant >= 63:  # x87 long double: fractions just below a limb's edge
        scaled += [two**63 - dtype(0.5), two**62 + dtype(0.25)]
    values: np.ndarray = np.array([x * two ** (-BITS) for x in scaled], dtype=dtype)
    for up in (True, False):
        rows = fixed_masses(values, BITS, up, 13)
        got = [int.from_bytes(r.tobytes(), "little") for r in rows]
        exact = [Fraction(*x.as_integer_ratio()) for x in scaled]
        want = [math.ceil(x) if up else math.floor(x) for x in exact]
        assert got == want


def test_the_looseness_of_an_epsilon_bounds_what_the_slack_cost() -> None:
    """``ComposedPLD.epsilon_looseness`` bounds how much the float products and windows raised the
    upper end of ε(δ): the exact composition's upper end is at most that much lower."""
    event = PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.05)
    fast = compose_events([(event, 200)], "add-remove", slack=1e-9)
    with exact_products():  # the same windows (they depend on the slack), exact products
        exact = compose_events([(event, 200)], "add-remove", slack=1e-9)
    loose = fast.epsilon_looseness(1e-5)
    assert fast.slack > exact.slack > 0  # the exact composition's: what its windows leave
    assert loose > 0
    assert exact.epsilon(1e-5).hi <= fast.epsilon(1e-5).hi <= exact.epsilon(1e-5).hi + loose


@pytest.mark.parametrize("rtol", [0.0, 1.0])
def test_the_accountant_narrows_the_slack_of_an_epsilon_until_it_costs_little(
    monkeypatch: pytest.MonkeyPatch, rtol: float
) -> None:
    """ε(δ) is composed with a share of δ as slack; where what it costs in ε is over EPSILON_RTOL of
    it (every slack, with a tolerance of 0) the Accountant composes again with a narrower share
    and then exactly; with a tolerance of 1 it keeps the first answer."""
    monkeypatch.setattr("accounting.pld.EPSILON_RTOL", rtol)
    event = PoissonSampled(AdditiveNoise(Gaussian(1.0), 1.0), 0.05)
    accountant = Accountant("add-remove")
    accountant.compose(event, 200)
    answer = accountant.epsilon(1e-5, route="pld")
    first = compose_events([(event, 200)], "add-remove", slack=1e-5 * 2.0**-12)
    with exact_products():
        exact = compose_events([(event, 200)], "add-remove", slack=1e-5 * SLACK_SHARE)
    assert first.slack > 0
    assert answer == (exact if rtol == 0.0 else first).epsilon(1e-5)
