"""Tests of :mod:`accounting.papers.distributed_dp_mab`: the recipes of Chowdhury & Zhou 2023.

Each test cites the same result as the function it checks (the paper's theorems, lemmas and
appendices). Reference values are either the test vectors of our notes on the paper
(``papers/distributed-dp-mab.md``) or independent computations in this file (exact rational
arithmetic, direct summation), never outputs of the code under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting import DistributedSum, Polya, bounds
from accounting.errors import ParameterError, ParameterTypeError
from accounting.papers import distributed_dp_mab as paper
from accounting.papers.distributed_dp_mab import Variant, protocol_parameters, relaxed_secagg_split
from accounting.validate import SpellingNote

FAST = settings(max_examples=25, deadline=None)

# ---------------------------------------------------------------------------------------------
# Theorem 2 (Skellam shares; §5, Appendix E.2): the precision g and the closed forms
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("epsilon", "scale", "users", "g"),
    [(1, 10, 2, 15), (1, 10, 1024, 320), (0.5, 10, 1024, 160), (0.1, 10, 2, 2), (0.2, 2, 2, 1)],
)
def test_theorem2_g_notes_values(epsilon: float, scale: float, users: int, g: int) -> None:
    """Our notes quote g = 15 and g = 320 for ε = 1, s = 10; g = 2 for ε = 0.1, n = 2, s = 10."""
    assert paper.theorem2_g(epsilon, scale, users) == g


@pytest.mark.parametrize(
    ("epsilon", "scale", "users", "g"),
    # s ε sqrt(n) is an integer on paper: a float product would give 10.000000000000002 etc.
    [(0.5, 10, 4, 10), (0.1, 10, 1, 1), (0.1, 30, 100, 30), (0.3, 10, 9, 9), (0.7, 10, 49, 49)],
)
def test_theorem2_g_exact_integer_cases(epsilon: float, scale: float, users: int, g: int) -> None:
    assert paper.theorem2_g(epsilon, scale, users) == g


@given(
    num=st.integers(1, 10**6),
    den=st.integers(1, 10**6),
    users=st.integers(1, 2**40),
)
@FAST
def test_theorem2_g_is_the_exact_ceiling(num: int, den: int, users: int) -> None:
    """g is the least integer >= x sqrt(n), checked by exact squares (x = s ε rational)."""
    x = Fraction(num, den)
    # theorem2_g documents a Fraction epsilon as exact, but its signature says float.
    g = paper.theorem2_g(x, 1, users)
    assert g >= 1
    assert Fraction(g) ** 2 >= x**2 * users
    assert g == 1 or Fraction(g - 1) ** 2 < x**2 * users


def test_theorem2_lemma3_notes_vectors() -> None:
    """The test vectors of our notes at α = 2 (exact Lemma 3 with the actual g)."""
    assert paper.skellam_rdp_theorem2_lemma3(2, 1, 10, 2) == pytest.approx(1.00378, abs=5e-6)
    assert paper.skellam_rdp_theorem2_lemma3(2, 1, 10, 1024) == pytest.approx(1.00001, abs=5e-6)
    assert paper.skellam_rdp_theorem2_headline(2, 1, 10) == pytest.approx(1.00900, abs=5e-6)
    assert paper.skellam_rdp_theorem2_lemma3(2, 0.5, 10, 1024) == pytest.approx(0.25000, abs=5e-6)
    # The exact closed form is 0.252625; our notes print it truncated to 0.25262.
    assert 0.25262 <= paper.skellam_rdp_theorem2_headline(2, 0.5, 10) < 0.25263


def _lemma3_exact(alpha: int, variance: Fraction, delta: int) -> Fraction:
    """Lemma 3 (AKL 2021 Thm 3.5) in exact rational arithmetic, as Chowdhury & Zhou 2023 print it."""
    gauss = Fraction(alpha * delta**2) / (2 * variance)
    first = Fraction((2 * alpha - 1) * delta**2 + 6 * delta) / (4 * variance**2)
    second = Fraction(3 * delta) / (2 * variance)
    return gauss + min(first, second)


def test_theorem2_headline_understates_lemma3_at_notes_point() -> None:
    """Our notes' reading: α = 100, ε = 0.2, s = 2, n = 2 (g = 1) is understated by ~1.5%.

    The Lemma-3 value is recomputed here exactly: g = 1, σ² = 1/ε² = 25.
    """
    lemma3 = _lemma3_exact(100, Fraction(25), 1)
    assert float(lemma3) == pytest.approx(2.06)
    assert paper.skellam_rdp_theorem2_lemma3(100, 0.2, 2, 2) == pytest.approx(float(lemma3), rel=1e-15)
    assert paper.skellam_rdp_theorem2_headline(100, 0.2, 2) < float(lemma3)
    assert paper.theorem2_discrepancy(100, 0.2, 2, 2) == pytest.approx(2.03 / 2.06, rel=1e-12)


def test_theorem2_understatement_exceeds_the_notes_claim() -> None:
    """Our notes' "up to 1.5%" is too small: 2.0% at its own point (α = 72), 6.0% at ε = 0.3535.

    Both points are inside the notes' grid ranges (s = 2, n = 2, ε in [0.01, 10], α <= 1000).
    Lemma 3 is recomputed exactly with g = 1 and σ² = 1/ε².
    """
    worst_at_notes_point = min(paper.theorem2_discrepancy(a, 0.2, 2, 2) for a in range(2, 1001))
    assert worst_at_notes_point < 0.9803
    eps = Fraction("0.3535")
    assert paper.theorem2_g(0.3535, 2, 2) == 1
    lemma3 = _lemma3_exact(21, 1 / eps**2, 1)
    headline = paper.skellam_rdp_theorem2_headline(21, 0.3535, 2)
    assert headline / float(lemma3) < 0.9400
    assert paper.theorem2_discrepancy(21, 0.3535, 2, 2) == pytest.approx(headline / float(lemma3), rel=1e-12)


@given(
    alpha=st.integers(2, 1000),
    epsilon=st.floats(0.01, 10),
    scale=st.sampled_from([1, 2, 5, 10, 100]),
    log2_users=st.integers(1, 21),
)
@FAST
def test_theorem2_paper_per_batch_is_lemma3_without_ceiling_except_second_term(
    alpha: int, epsilon: float, scale: int, log2_users: int
) -> None:
    """Appendix E.2: the per-batch statement's first min-argument is Lemma 3's at g = sε√n."""
    n = 2**log2_users
    g = scale * epsilon * math.sqrt(n)
    first_lemma3 = ((2 * alpha - 1) * g**2 + 6 * g) * epsilon**4 / (4 * g**4)
    second_paper = 3 * epsilon**2 / (2 * scale * math.sqrt(n))
    expected = alpha * epsilon**2 / 2 + min(first_lemma3, second_paper)
    assert paper.skellam_rdp_theorem2_paper(alpha, epsilon, scale, n) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Theorem 4 (discrete Gaussian shares; Appendix F) and Lemma 4 (KLS 2021 Prop. 13)
# ---------------------------------------------------------------------------------------------


def _xi_float64(scale: float, last_k: int) -> float:
    """10 Σ_{k=1}^{K} exp(-2π²s² k/(k+1)) by a vectorised float64 sum (relative error ~1e-13)."""
    k = np.arange(1, last_k + 1, dtype=np.float64)
    return float(10.0 * np.sum(np.exp(-2.0 * math.pi**2 * scale**2 * k / (k + 1.0))))


def test_theorem4_notes_numbers() -> None:
    """Our notes' numbers at T = 1e6, ε = 1: s = 1 gives ξ = 0.01393, ε̂ = 1.00348; s = 2 ξ = 7.2e-17."""
    xi = paper.theorem4_xi(1, 10**6)
    assert xi == pytest.approx(0.01393, abs=5e-6)
    assert paper.theorem4_epsilon(1, 1, 10**6) == pytest.approx(1.00348, abs=5e-6)
    assert paper.theorem4_xi(2, 10**6) == pytest.approx(7.2e-17, rel=1e-2)
    # "xi = 0 in double precision" for s = 10: the certified upper bound is the least positive float.
    assert 0 < paper.theorem4_xi(10, 10**6) <= 5e-324


@pytest.mark.parametrize("scale", [0.5, 0.8, 1.0, 1.5, 3.0])
@pytest.mark.parametrize("horizon", [2, 3, 10, 101, 5000, 10**6])
def test_theorem4_xi_matches_direct_summation(scale: float, horizon: int) -> None:
    """The series-with-tail-bound evaluation agrees with a plain float64 sum of all terms."""
    direct = _xi_float64(scale, horizon // 2 - 1)
    got = paper.theorem4_xi(scale, horizon)
    assert got >= direct * (1 - 1e-12)
    assert got == pytest.approx(direct, rel=1e-11, abs=1e-300)


def test_kls_with_theorem4_parameters_uses_the_same_xi() -> None:
    """Lemma 4 with n = T/2 and σ = s carries Theorem 4's ξ (Appendix F)."""
    xi = paper.theorem4_xi(1, 10**6)
    n, delta = 500_000, 707
    base = delta**2 / n
    expected = min(math.sqrt(base + xi / 2), math.sqrt(base) + xi)
    assert bounds.sum_discrete_gaussians_epsilon_kls(1, n, delta) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# The protocol variants of Theorems 1–6 and their per-batch parameters
# ---------------------------------------------------------------------------------------------

# Test vectors of our notes (T = 1e6): g / tau / m / bits for Theorems 1, 2 (s = 10) and 4 (s = 10).
_TABLE = {
    (0.1, 2): ("1/146/295/9", "2/173/351/9", "2/108/221/8"),
    (0.1, 16): ("1/146/309/9", "4/326/717/10", "4/216/497/9"),
    (0.1, 1024): ("4/581/5259/13", "32/2459/37687/16", "32/1724/36217/16"),
    (0.1, 524288): ("73/10592/38294209/26", "725/55252/380219305/29", "725/39055/380186911/29"),
    (1.0, 2): ("2/30/65/7", "15/135/301/9", "15/81/193/8"),
    (1.0, 1024): ("32/465/33699/16", "320/2459/332599/19", "320/1724/331129/19"),
    (1.0, 524288): ("725/10519/380129839/29", "7241/55183/3796479775/32", "7241/39006/3796447421/32"),
}


@pytest.mark.parametrize(("key", "cells"), list(_TABLE.items()))
def test_protocol_parameters_match_notes_table(key: tuple[float, int], cells: tuple[str, str, str]) -> None:
    eps, n = key
    variants = (Variant.POLYA_SHARES, Variant.SKELLAM_SHARES, Variant.DISCRETE_GAUSSIAN_SHARES)
    for variant, cell in zip(variants, cells, strict=True):
        p = protocol_parameters(variant, eps, n, 10**6, scaling=10 if variant.scaled else None)
        assert f"{p.g}/{p.tau}/{p.m}/{p.bits}" == cell
        assert p.m == n * p.g + 2 * p.tau + 1
        assert 2 ** (p.bits - 1) < p.m <= 2**p.bits


def test_protocol_privacy_of_theorem_1_is_exact() -> None:
    """Theorem 1's Pólya shares sum to Lap_Z(g/ε): the distributed sum is ε-DP (up to rounding of β)."""
    p = protocol_parameters(Variant.POLYA_SHARES, 0.5, 64, 10**6)
    assert p.share is not None
    mech = DistributedSum(p.share, 64, p.g)
    assert float(mech.pure_epsilon()) == pytest.approx(0.5, rel=1e-12)


def test_protocol_bad_input() -> None:
    with pytest.raises(ParameterError) as err:
        protocol_parameters(Variant.SKELLAM_SHARES, 1.0, 16, 1000)
    assert err.value.name == "scaling"
    with pytest.raises(ParameterError) as err:
        protocol_parameters("skellam", 1.0, 16, 1000)
    assert err.value.name == "variant"
    # A theorem number is a citation, not a type tag: it is refused, and the message says how to
    # get the variant of a theorem.
    with pytest.raises(ParameterTypeError, match=r"Variant\.from_theorem") as terr:
        protocol_parameters(2, 1.0, 16, 1000, scaling=10)  # type: ignore[arg-type]
    assert terr.value.name == "variant"
    with pytest.raises(ParameterError) as err:
        Variant.from_theorem(7)
    assert err.value.name == "theorem"


def test_variants_cite_their_theorems() -> None:
    """Which noise each theorem of Chowdhury & Zhou 2023 places, and its guarantee."""
    cited = {
        Variant.POLYA_SHARES: (1, "pure", False, False),
        Variant.SKELLAM_SHARES: (2, "rdp", True, False),
        Variant.SHUFFLED_POLYA: (3, "pure", False, False),
        Variant.DISCRETE_GAUSSIAN_SHARES: (4, "zcdp", True, True),
        Variant.CENTRAL_LAPLACE: (5, "pure", False, True),
        Variant.LOCAL_LAPLACE: (6, "pure", False, True),
    }
    for variant, (theorem, notion, scaled, below_one) in cited.items():
        assert variant.theorem == theorem
        assert variant.notion == notion
        assert variant.scaled is scaled
        assert variant.epsilon_below_one is below_one
        assert Variant.from_theorem(theorem) is variant
        assert Variant.parse(variant.value) is variant
        # Theorems 4-6 assume ε in (0, 1) (Appendices F, H); Theorems 1-3 hold for every ε > 0
        assert variant.hypotheses_hold(0.5)
        assert variant.hypotheses_hold(1.0) is not below_one
    # the parameters themselves exist at any ε > 0 (the ledger accounts them; the theorem may not)
    p = protocol_parameters(Variant.CENTRAL_LAPLACE, 4.0, 64, 1000)
    assert p.g == math.ceil(4.0 * 8)
    assert "Theorem 5 assumes ε < 1" in p.privacy
    assert "assumes" not in protocol_parameters(Variant.CENTRAL_LAPLACE, 0.5, 64, 1000).privacy
    assert "assumes" not in protocol_parameters(Variant.POLYA_SHARES, 4.0, 64, 1000).privacy


# ---------------------------------------------------------------------------------------------
# Theorem 3 (Appendix D.2): the relaxed SecAgg split
# ---------------------------------------------------------------------------------------------


def test_relaxed_secagg_split_matches_the_protocol() -> None:
    split = relaxed_secagg_split(1.0, horizon=1000)
    assert (split.epsilon_hat, split.epsilon_sum, split.q_hat) == (0.25, 0.5, 1 / 2000)
    assert 2 * split.epsilon_hat + split.epsilon_sum == split.epsilon
    # Theorem 3's calibration uses ε' = ε/2 for the sum: g = ceil(ε' sqrt(n)), shares Pólya(1/n, e^{-ε'/g})
    params = protocol_parameters(Variant.SHUFFLED_POLYA, 1.0, 1024, 1000)
    assert params.g == math.ceil(split.epsilon_sum * math.sqrt(1024))
    assert params.share is not None
    assert isinstance(params.share, Polya)
    assert float(params.share.beta) == pytest.approx(math.exp(-split.epsilon_sum / params.g), rel=1e-15)
    assert relaxed_secagg_split(0.3).q_hat is None


# ---------------------------------------------------------------------------------------------
# Validation: every bad input raises an error naming the parameter
# ---------------------------------------------------------------------------------------------

BAD_INPUTS: list[tuple[Callable[..., object], dict[str, object], str, type[Exception]]] = [
    (paper.theorem2_g, {"epsilon": 0.0, "scaling": 10, "users": 2}, "epsilon", ParameterError),
    (paper.theorem2_g, {"epsilon": 1.0, "scaling": 10, "users": 0}, "users", ParameterError),
    (paper.theorem2_g, {"epsilon": 1.0, "scaling": None, "users": 2}, "scaling", ParameterTypeError),
    (
        paper.skellam_rdp_theorem2_paper,
        {"alpha": 2.5, "epsilon": 1, "scaling": 10, "users": 2},
        "alpha",
        ParameterError,
    ),
    (
        paper.skellam_rdp_theorem2_headline,
        {"alpha": 2, "epsilon": 1, "scaling": -1},
        "scaling",
        ParameterError,
    ),
    (
        paper.skellam_rdp_theorem2_lemma3,
        {"alpha": 2, "epsilon": 1, "scaling": 10, "users": 1.5},
        "users",
        ParameterError,
    ),
    (
        paper.theorem2_discrepancy,
        {"alpha": 2, "epsilon": math.nan, "scaling": 10, "users": 2},
        "epsilon",
        ParameterError,
    ),
    (paper.theorem4_xi, {"scaling": 0.1, "horizon": 100}, "scaling", ParameterError),
    (paper.theorem4_xi, {"scaling": 1.0, "horizon": 1}, "horizon", ParameterError),
    (paper.theorem4_epsilon, {"epsilon": 0.0, "scaling": 1.0, "horizon": 100}, "epsilon", ParameterError),
    (relaxed_secagg_split, {"epsilon": 0}, "epsilon", ParameterError),
]


@pytest.mark.parametrize(
    ("func", "kwargs", "name", "error"), BAD_INPUTS, ids=[f"{f.__name__}-{n}" for f, _, n, _ in BAD_INPUTS]
)
def test_bad_input_raises_naming_the_parameter(
    func: Callable[..., object], kwargs: dict[str, object], name: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as info:
        func(**kwargs)
    assert getattr(info.value, "name", None) == name
    assert name in str(info.value)


def test_scale_is_the_old_keyword_of_scaling() -> None:
    """The paper's ``s`` was the keyword ``scale``: still accepted, with a note."""
    with pytest.warns(
        SpellingNote, match="protocol_parameters\\(\\)'s keyword 'scale' is now spelled 'scaling'"
    ):
        old = protocol_parameters(Variant.SKELLAM_SHARES, 1.0, 1024, 10**6, scale=10)  # type: ignore[call-arg]
    assert old == protocol_parameters(Variant.SKELLAM_SHARES, 1.0, 1024, 10**6, scaling=10)
    with pytest.warns(SpellingNote):
        old_g = paper.theorem2_g(1.0, users=1024, scale=10)  # type: ignore[call-arg]
    assert old_g == paper.theorem2_g(1.0, 10, 1024)
