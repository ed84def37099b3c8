"""ℓ2-bounded integer vectors under distributed lattice noise: the d-dimensional closed forms
(Agarwal–Kairouz–Liu 2021 Thm 3.5 for Skellam; Kairouz–Liu–Steinke 2021, Prop. 13 in d
dimensions, for sums of discrete Gaussians), :class:`~accounting.mechanisms.DistributedVectorSum`
in the Accountant, and ℓ2 streams of :class:`~accounting.tree.IntegerTree`.

The reference for "certified" is computed independently of the closed forms: the noise is i.i.d.
on the coordinates, so the Rényi divergence of a shift ``v ∈ Z^d`` is the sum over coordinates of
the exact 1-D divergences at ``|v_i|`` (:func:`accounting.divergence.renyi`, certified
enclosures), for every integer vector in the ℓ2 ball (up to signs and order).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction

import pytest
from mpmath import mp

from accounting import Accountant, DiscreteGaussian, Skellam, SumOfDiscreteGaussians, bounds, tree
from accounting.accountant import Event
from accounting.certified import float_up
from accounting.divergence import renyi
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError, UnsupportedEventError
from accounting.mechanisms import DistributedSum, DistributedVectorSum
from accounting.noise import CenteredBinomial, LatticeNoise, Shifted


def _magnitudes(l2_squared: int, dimension: int, largest: int | None = None) -> Iterator[tuple[int, ...]]:
    """Every nonzero integer vector with ``‖v‖₂² <= l2_squared`` in ``dimension`` coordinates, as
    its nonincreasing absolute values (signs and order do not change a symmetric product law's
    divergence)."""
    top = math.isqrt(l2_squared) if largest is None else min(largest, math.isqrt(l2_squared))
    for k in range(top, 0, -1):
        yield (k,)
        if dimension > 1:
            for rest in _magnitudes(l2_squared - k * k, dimension - 1, k):
                yield (k, *rest)


def _exact_vector_renyi(
    noise: LatticeNoise, shift: tuple[int, ...], alpha: float, cache: dict[int, float]
) -> float:
    """An upper bound on the exact ``D_α`` of the product law shifted by ``shift``: the sum of the
    coordinates' certified upper ends (the truth is below it)."""
    for k in set(shift):
        if k not in cache:
            cache[k] = float(renyi(Shifted(noise, k), noise, alpha).hi)
    return sum(cache[k] for k in shift)


# -- the closed forms at d = 1 are the 1-D ones ------------------------------------------------


def _akl_1d_reference(alpha: int, variance: float, delta: int) -> float:
    """The spec's Lemma 3 (AKL Thm 3.5 in one dimension), written out here independently."""
    with mp.workdps(50):
        a, var, d = mp.mpf(alpha), mp.mpf(variance), mp.mpf(delta)
        value = a * d**2 / (2 * var) + min(((2 * a - 1) * d**2 + 6 * d) / (4 * var**2), 3 * d / (2 * var))
        return float_up(value)


@pytest.mark.parametrize(
    ("alpha", "variance", "delta"),
    [(2, 1.5, 1), (2, 100.0, 3), (7, 12.25, 2), (64, 1e4, 20), (1000, 3e6, 7)],
)
def test_skellam_bound_in_one_dimension_is_the_1d_bound(alpha: int, variance: float, delta: int) -> None:
    one = bounds.skellam_rdp_akl(alpha, variance, delta)
    assert bounds.skellam_rdp_akl(alpha, variance, delta, dimension=1) == one
    assert bounds.skellam_rdp_akl(alpha, variance, delta, dimension=1, l1=delta) == one
    # a vector whose change lies on one coordinate (ℓ1 = ℓ2 = Δ) is the scalar release
    assert bounds.skellam_rdp_akl(alpha, variance, delta, dimension=10, l1=delta) == one
    assert one == pytest.approx(_akl_1d_reference(alpha, variance, delta), rel=1e-15)


@pytest.mark.parametrize(("sigma", "count", "delta"), [(0.5, 2, 1), (1.0, 100, 3), (2.5, 10**6, 20)])
def test_kls_bound_in_one_dimension_is_the_1d_bound(sigma: float, count: int, delta: int) -> None:
    eps = bounds.sum_discrete_gaussians_epsilon_kls(sigma, count, delta)
    rho = bounds.sum_discrete_gaussians_rho_kls(sigma, count, delta)
    assert bounds.sum_discrete_gaussians_epsilon_kls(sigma, count, delta, dimension=1) == eps
    assert bounds.sum_discrete_gaussians_rho_kls(sigma, count, delta, dimension=1, l1=delta) == rho
    # Δ = 1 in d coordinates: a single coordinate moves by 1, the scalar release
    if delta == 1:
        assert bounds.sum_discrete_gaussians_rho_kls(sigma, count, 1, dimension=10) == rho


def test_vector_bounds_grow_with_the_l2_bound_and_use_the_integer_l1() -> None:
    """``Δ2²`` is floored (‖v‖₂² is an integer), ``Δ1 <= min(√d Δ2, Δ2²)`` by default, and a
    given ℓ1 can only lower the bound."""
    root2_up = float_up(mp.sqrt(2))  # 1.4142135623730951 > √2: ⌊Δ2²⌋ = 2
    assert bounds.skellam_rdp_akl(3, 50.0, root2_up, dimension=10) == bounds.skellam_rdp_akl(
        3, 50.0, 1.5, dimension=10
    )
    # Δ2 = 2, d = 10: Δ2² = 4 < √10·2, so Δ1 = 4; at d = 2 it is ⌊√8⌋ = 2
    with mp.workdps(50):
        want = float_up(3 * mp.mpf(4) / 100 + min((5 * mp.mpf(4) + 24) / 10**4, mp.mpf(12) / 100))
        want2 = float_up(3 * mp.mpf(4) / 100 + min((5 * mp.mpf(4) + 12) / 10**4, mp.mpf(6) / 100))
    assert bounds.skellam_rdp_akl(3, 50.0, 2.0, dimension=10) == want
    assert bounds.skellam_rdp_akl(3, 50.0, 2.0, dimension=2) == want2
    values = [bounds.skellam_rdp_akl(5, 80.0, l2, dimension=55) for l2 in (1.0, 2.5, 7.0, 30.0)]
    assert values == sorted(values)
    assert bounds.skellam_rdp_akl(5, 2.0, 30.0, dimension=55, l1=40) < bounds.skellam_rdp_akl(
        5, 2.0, 30.0, dimension=55
    )
    kls = [bounds.sum_discrete_gaussians_rho_kls(0.6, 50, l2, dimension=55) for l2 in (1.0, 2.5, 7.0, 30.0)]
    assert kls == sorted(kls)


# -- certified: the closed forms dominate the exact divergence of every shift in the ball ------


@pytest.mark.parametrize(("variance", "l2", "dimension"), [(1.5, 3.0, 10), (6.0, 3.0, 10), (30.0, 3.2, 4)])
def test_skellam_vector_bound_dominates_the_exact_divergence_of_every_shift(
    variance: float, l2: float, dimension: int
) -> None:
    """AKL's d-dimensional bound against the exact Rényi divergence of the product law for every
    integer shift with ‖v‖₂ <= l2 (variance 1.5: the min's second argument is the active one)."""
    noise = Skellam(variance)
    l2_squared = math.floor(Fraction(l2) ** 2)
    shifts = list(_magnitudes(l2_squared, dimension))
    assert (1,) * min(dimension, l2_squared) in shifts
    assert (math.isqrt(l2_squared),) in shifts
    for alpha in (2, 3, 8, 20):
        cache: dict[int, float] = {}
        bound = bounds.skellam_rdp_akl(alpha, variance, l2, dimension=dimension)
        worst = max(_exact_vector_renyi(noise, v, alpha, cache) for v in shifts)
        assert worst <= bound, (alpha, worst, bound)
        assert worst > bound / 5  # and not vacuous (the bound is 4.2 times the truth at variance 1.5, α = 20)


@pytest.mark.parametrize(
    ("sigma", "users", "l2", "dimension"), [(0.5, 2, 3.0, 10), (1.0, 3, 3.0, 10), (0.75, 4, 2.3, 3)]
)
def test_kls_vector_bound_dominates_the_exact_divergence_of_every_shift(
    sigma: float, users: int, l2: float, dimension: int
) -> None:
    """KLS's d-dimensional zCDP (α ρ at every order) against the exact Rényi divergence of the
    sum of discrete Gaussians (the project's SumOfDiscreteGaussians) on each coordinate."""
    noise = SumOfDiscreteGaussians(sigma, users)
    shifts = list(_magnitudes(math.floor(Fraction(l2) ** 2), dimension))
    rho = bounds.sum_discrete_gaussians_rho_kls(sigma, users, l2, dimension=dimension)
    for alpha in (1.5, 2, 5.5, 20):
        cache: dict[int, float] = {}
        worst = max(_exact_vector_renyi(noise, v, alpha, cache) for v in shifts)
        assert worst <= alpha * rho, (alpha, worst, alpha * rho)


def test_the_mechanism_answers_the_closed_forms() -> None:
    m = DistributedVectorSum(Skellam(0.5), 40, 10, 3.0)  # total variance 20 per coordinate
    assert m.total_noise == Skellam(20.0)
    akl = {a: bounds.skellam_rdp_akl(a, 20.0, 3.0, dimension=10) for a in range(2, 19)}
    for a in (2, 3, 17):
        assert m.rdp(a).upper == akl[a]
    assert m.rdp(1.01).upper == m.rdp(1.5).upper == akl[2]
    # between integers, the chord of (α - 1) D_α: below AKL at the next integer, continuous
    for order in (2.5, 3.25, 17.9):
        k = math.ceil(order)
        want = ((k - order) * (k - 2) * akl[k - 1] + (order - k + 1) * (k - 1) * akl[k]) / (order - 1)
        assert m.rdp(order).upper == pytest.approx(want, rel=1e-14)
        assert m.rdp(order).upper <= akl[k]
    assert m.rdp(2 + 1e-9).upper == pytest.approx(akl[2], rel=1e-7)
    assert m.rdp(17 - 1e-9).upper == pytest.approx(akl[17], rel=1e-7)
    assert mp.isinf(m.rdp(math.inf).hi)
    assert mp.isinf(m.pure_epsilon().hi)
    # sup_α D_α/α is bounded by AKL(2), and no order's ratio exceeds it
    rho = m.zcdp_rho().upper
    assert rho == bounds.skellam_rdp_akl(2, 20.0, 3.0, dimension=10)
    assert all(m.rdp(a).upper / (a - 1) <= rho for a in range(2, 50))
    g = DistributedVectorSum(DiscreteGaussian(Fraction(3, 4)), 4, 3, 2.3)
    kls = bounds.sum_discrete_gaussians_rho_kls(0.75, 4, 2.3, dimension=3)
    assert g.zcdp_rho().upper == kls
    assert g.rdp(7.5).upper >= 7.5 * kls
    # an asymmetric Skellam is a symmetric one of variance 2 min(μ1, μ2) plus independent noise
    asym = DistributedVectorSum(Skellam.from_rates(3, 5, 2), 1, 10, 3.0)
    assert asym.rdp(4).upper == bounds.skellam_rdp_akl(4, 6.0, 3.0, dimension=10)
    # in one dimension the ℓ2 bound is the integer ⌊l2⌋
    assert DistributedVectorSum(Skellam(20.0), 1, 1, 2.9).rdp(3).upper == bounds.skellam_rdp_akl(3, 20.0, 2)


# -- the accountant -----------------------------------------------------------------------------


@pytest.mark.slow
def test_accountant_composes_by_rdp_and_refuses_pld_and_add_remove() -> None:
    m = DistributedVectorSum(Skellam(50.0), 100, 10, 40.0)
    acc = Accountant().compose(m, 9)
    auto = acc.epsilon(1e-5)
    assert auto.route == "rdp"
    assert "pld" not in auto.candidates
    assert auto.hi == acc.epsilon(1e-5, route="rdp").hi
    assert acc.rdp(5) == pytest.approx(9 * bounds.skellam_rdp_akl(5, 5000.0, 40.0, dimension=10), rel=1e-15)
    assert acc.rdp(5) >= 9 * bounds.skellam_rdp_akl(5, 5000.0, 40.0, dimension=10)
    published = acc.epsilon(1e-5, route="published:skellam-akl")
    assert published.upper == pytest.approx(auto.upper, rel=1e-6)
    assert acc.delta(auto.upper).upper <= 1e-5 * (1 + 1e-6)
    with pytest.raises(UnsupportedEventError, match="no privacy-loss distribution"):
        acc.epsilon(1e-5, route="pld")
    with pytest.raises(UnsupportedError, match="pure"):
        acc.epsilon(1e-5, route="pure")
    single = Accountant().compose(m)
    assert single.epsilon(1e-5).route == "rdp"
    with pytest.raises(UnsupportedError, match="dominating pair"):
        single.epsilon(1e-5, route="pld")
    with pytest.raises(UnsupportedError, match="dominating pair"):
        m.epsilon(1e-5)
    with pytest.raises(UnsupportedError, match="dominating pair"):
        m.delta(1.0)
    assert not Accountant("add-remove").supports(m)
    with pytest.raises(UnsupportedEventError, match="add-remove"):
        Accountant("add-remove").compose(m)
    # beside exact scalar releases: the vector term adds its RDP curve
    small = DistributedVectorSum(Skellam(0.5), 100, 10, 4.0)
    alone = Accountant().compose(small, 9).epsilon(1e-5)
    mixed = Accountant().compose(small, 9).compose(DistributedSum(Skellam(0.5), 100, 1), 9).epsilon(1e-5)
    assert mixed.route == "rdp"
    assert mixed.hi > alone.hi
    ddg = Accountant().compose(DistributedVectorSum(DiscreteGaussian(1.0), 100, 10, 40.0), 9)
    rho = 9 * bounds.sum_discrete_gaussians_rho_kls(1.0, 100, 40.0, dimension=10)
    assert ddg.rho() == pytest.approx(rho, rel=1e-15)
    assert ddg.rho() >= rho
    assert ddg.epsilon(1e-5).upper == pytest.approx(
        ddg.epsilon(1e-5, route="published:ddg-kls").upper, rel=1e-9
    )


@pytest.mark.slow
def test_a_ledger_with_vector_sums_round_trips() -> None:
    acc = (
        Accountant()
        .compose(DistributedVectorSum(Skellam(Fraction(1, 3)), 100, 10, 23.16227766016838), 9)
        .compose(DistributedVectorSum(DiscreteGaussian(1.5), 7, 55, 21.6, l1=100), 9)
        .compose(DistributedSum(Skellam(0.02), 100, 1), 9)
    )
    data = acc.to_dict()
    assert [e["mechanism"]["type"] for e in data["events"]] == [
        "DistributedVectorSum",
        "DistributedVectorSum",
        "DistributedSum",
    ]
    again = Accountant.from_dict(data)
    assert again == acc
    assert again.to_dict() == data
    assert Accountant.from_json(acc.to_json()) == acc
    assert again.epsilon(1e-5).hi == acc.epsilon(1e-5).hi
    # a hand-written entry may leave out l1 (no sha256: accepted as it stands)
    written = {k: v for k, v in data.items() if k != "sha256"}
    written["events"] = [dict(written["events"][0])]
    written["events"][0]["mechanism"] = {k: v for k, v in data["events"][0]["mechanism"].items() if k != "l1"}
    assert Accountant.from_dict(written).ledger[0].mechanism == acc.ledger[0].mechanism
    tampered = dict(data, events=[dict(data["events"][0], count=1), *data["events"][1:]])
    with pytest.raises(ParameterError, match="sha256"):
        Accountant.from_dict(tampered)
    bad = dict(written, events=[{"count": 1, "mechanism": dict(written["events"][0]["mechanism"], l2=0.5)}])
    with pytest.raises(ParameterError, match="l2"):
        Accountant.from_dict(bad)


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: DistributedVectorSum(Skellam(2.0), 10, 10, 0.0), "l2"),
        (lambda: DistributedVectorSum(Skellam(2.0), 10, 10, -3.0), "l2"),
        (lambda: DistributedVectorSum(Skellam(2.0), 10, 10, 0.5), "l2"),
        (lambda: DistributedVectorSum(Skellam(2.0), 10, 10, math.nan), "l2"),
        (lambda: DistributedVectorSum(Skellam(2.0), 10, 0, 3.0), "dimension"),
        (lambda: DistributedVectorSum(Skellam(2.0), 10, 2.5, 3.0), "dimension"),  # type: ignore[arg-type]
        (lambda: DistributedVectorSum(Skellam(2.0), 0, 10, 3.0), "users"),
        (lambda: DistributedVectorSum(Skellam(2.0), 10, 10, 3.0, l1=0.0), "l1"),
        (lambda: DistributedVectorSum(DiscreteGaussian(0.4), 10, 10, 3.0), "share"),
        (lambda: DistributedVectorSum(Skellam(2.0), 10, 10, 3.0).rdp(1.0), "alpha"),
        (lambda: bounds.skellam_rdp_akl(1, 2.0, 3.0, dimension=10), "alpha"),
        (lambda: bounds.skellam_rdp_akl(1.5, 2.0, 3.0, dimension=10), "alpha"),  # type: ignore[arg-type]
        (lambda: bounds.skellam_rdp_akl(2, 2.0, 0.0, dimension=10), "sensitivity"),
        (lambda: bounds.skellam_rdp_akl(2, 2.0, 3.0, dimension=0), "dimension"),
        (lambda: bounds.skellam_rdp_akl(2, 2.0, 3.0, dimension=10, l1=-1), "l1"),
        (lambda: bounds.sum_discrete_gaussians_rho_kls(1.0, 3, 0.0, dimension=10), "sensitivity"),
        (lambda: bounds.sum_discrete_gaussians_epsilon_kls(1.0, 3, 3.0, dimension=-2), "dimension"),
        (lambda: tree.Stream(10, 2, l2=0.0), "l2"),
        (lambda: tree.Stream(10, 2, l2=3.0, l1=0.5), "l1"),
    ],
)
def test_bad_input_names_the_field(call: object, name: str) -> None:
    with pytest.raises(ParameterError) as info:
        call()  # type: ignore[operator]
    assert info.value.name == name
    assert name in str(info.value)


def test_shares_without_a_vector_bound_are_refused() -> None:
    with pytest.raises(UnsupportedError, match="Skellam and discrete Gaussian"):
        DistributedVectorSum(CenteredBinomial(8), 10, 10, 3.0)
    with pytest.raises(ParameterTypeError, match="share"):
        DistributedVectorSum(1.0, 10, 10, 3.0)  # type: ignore[arg-type]


# -- the tree ---------------------------------------------------------------------------------------


def test_stream_release_uses_the_l2_bound_where_it_says_more() -> None:
    share = Skellam(4.0)
    vector, count = tree.Stream(10, 2, l2=3.0).release(share, 5)
    assert count == 1
    assert vector == DistributedVectorSum(share, 5, 10, 3.0, l1=20)
    assert tree.Stream(10, 2, l2=3.0, l1=7).release(share, 5)[0] == DistributedVectorSum(share, 5, 10, 3.0, 7)
    # ⌊l2²⌋ >= d c²: the ℓ2 bound says nothing more, the coordinates stay exact
    assert tree.Stream(4, 1, l2=2.0).release(share, 5) == (DistributedSum(share, 5, 1), 4)
    assert tree.Stream(10, 2).release(share, 5) == (DistributedSum(share, 5, 2), 10)
    # a scalar stays exact, at the smaller sensitivity
    assert tree.Stream(1, 5, l2=3.7).release(share, 5) == (DistributedSum(share, 5, 3), 1)
    assert tree.Stream(1, 5, l1=2).release(share, 5) == (DistributedSum(share, 5, 2), 1)


@pytest.mark.slow
def test_integer_tree_with_an_l2_stream_beats_the_per_coordinate_composition() -> None:
    """d = 10 coordinates, each moving by at most 2, with ‖Δ‖₂ <= 3: κ = 6 nodes of M = 4 silos'
    Skellam shares. Per coordinate the ledger is 60 exact secure sums at Δ = 2 (the Gaussian sees
    Σ Δ_i² = 40 per node); as vectors it is 6 releases at ‖Δ‖₂² <= 9."""
    per_coordinate = tree.IntegerTree(Skellam(25.0), 4, 1000, 25, (tree.Stream(10, 2),))
    vector = tree.IntegerTree(Skellam(25.0), 4, 1000, 25, (tree.Stream(10, 2, l2=3.0),))
    assert vector.kappa == 6
    assert vector.event.events[0] == Event(DistributedVectorSum(Skellam(25.0), 4, 10, 3.0, 20), 6)
    loose, tight = per_coordinate.epsilon(1e-5), vector.epsilon(1e-5)
    assert tight.route == "rdp"
    assert tight.hi < loose.hi / 2  # measured: ε(1e-5) = 3.356 against 7.326 (the PLD route)
    # discrete Gaussian shares of the same variance (their per-coordinate accounting takes ~30 s: not run)
    dg = tree.IntegerTree(DiscreteGaussian(5.0), 4, 1000, 25, (tree.Stream(10, 2, l2=3.0),))  # variance 25
    assert dg.event.events[0].mechanism.total_noise == SumOfDiscreteGaussians(5.0, 4)  # type: ignore[union-attr]
    assert dg.epsilon(1e-5).hi < loose.hi
    ledger = vector.accountant()
    assert Accountant.from_json(ledger.to_json()) == ledger
    with pytest.raises(UnsupportedEventError, match="add-remove"):
        tree.IntegerTree(Skellam(25.0), 4, 1000, 25, (tree.Stream(10, 2, l2=3.0),), "add-remove").accountant()


def test_magnitudes_enumerates_the_ball() -> None:
    got = set(_magnitudes(9, 10))
    brute = {
        tuple(sorted((abs(x) for x in v if x), reverse=True))
        for v in itertools.product(range(-3, 4), repeat=4)
        if 0 < sum(x * x for x in v) <= 9
    }
    assert {m for m in got if len(m) <= 4} == brute
    assert (1,) * 9 in got
    assert len(max(got, key=len)) == 9
