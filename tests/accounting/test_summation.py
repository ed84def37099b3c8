"""The shuffle summation protocols (:mod:`accounting.summation`): their cited parameters, and their
exact privacy.

The references are brute force on the protocol itself, independent of the code under test: the
exact law of the count of ones (each user's randomized rounding convolved with ``Bin(b n, p)``,
in :class:`fractions.Fraction` from ``math.comb``) and ``δ(ε) = Σ max(0, P - e^ε Q)`` summed at
60 digits, over neighbouring datasets (scalars) or over every shift ``k ∈ [-levels, levels]^D``
(vectors, inputs bounded per coordinate). The accounting must enclose the exact value where it
claims to be exact, and never fall below it anywhere.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import shlex
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp
from scipy import stats

from accounting import summation
from accounting.certified import Mpf
from accounting.cli import main
from accounting.errors import ParameterError, ParameterTypeError
from accounting.mechanisms import AdditiveNoise
from accounting.noise import Binomial, CenteredBinomial
from accounting.summation import ShuffleSumParameters, shuffle_sum_parameters

Law = dict[int, Fraction]


def params(users: int, levels: int, b: int, p: float, dimension: int = 1) -> ShuffleSumParameters:
    """A protocol with small, chosen parameters (the cited recipes give huge ``b``)."""
    return ShuffleSumParameters(
        protocol="dpdpe-scalar" if dimension == 1 else "dpdpe-vector",
        epsilon=1.0,
        delta=1e-3,
        users=users,
        dimension=dimension,
        bound=1.0,
        g=levels,
        levels=levels,
        b=b,
        p=p,
        bits=dimension * (levels + b),
        theorem="test",
    )


def binomial_law(n: int, p: Fraction) -> Law:
    return {k: math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}


def convolve(a: Law, b: Law) -> Law:
    out: Law = {}
    for x, px in a.items():
        for y, py in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + px * py
    return out


def rounding_law(x: Fraction, levels: int, bound: Fraction) -> Law:
    """The encoding of ``x ∈ [-B, B]``: ``w = (x + B) levels / (2B)``, then randomized rounding."""
    w = (x + bound) * levels / (2 * bound)
    low = math.floor(w)
    frac = w - low
    return {low: 1 - frac, low + 1: frac} if frac else {low: Fraction(1)}


def count_law(inputs: list[Fraction], par: ShuffleSumParameters) -> Law:
    """The exact law of the count of ones of one coordinate: every user's encoding plus Bin(b n, p)."""
    law = binomial_law(par.b * par.users, Fraction(par.p))
    for x in inputs:
        law = convolve(law, rounding_law(x, par.levels, Fraction(par.bound)))
    return law


def hockey(p: dict[object, Fraction], q: dict[object, Fraction], eps: float) -> Mpf:
    """``Σ max(0, P - e^ε Q)`` at 60 digits."""
    with mp.workdps(60):
        e = mp.exp(mp.mpf(eps))
        total = mp.zero
        for x in set(p) | set(q):
            px, qx = p.get(x, Fraction(0)), q.get(x, Fraction(0))
            term = mp.mpf(px.numerator) / px.denominator - e * mp.mpf(qx.numerator) / qx.denominator
            if term > 0:
                total += term
        return total


def hockey_60(p: dict[object, Mpf], q: dict[object, Mpf], eps: float) -> Mpf:
    """:func:`hockey` of laws already at 60 digits (products of many exact values)."""
    with mp.workdps(60):
        e = mp.exp(mp.mpf(eps))
        total = mp.zero
        for x in set(p) | set(q):
            term = p.get(x, mp.zero) - e * q.get(x, mp.zero)
            if term > 0:
                total += term
        return total


def shifted(law: Law, k: int) -> Law:
    return {x + k: v for x, v in law.items()}


def product(laws: list[dict[int, Mpf]]) -> dict[object, Mpf]:
    """The law of independent coordinates, at 60 digits (each exact value rounded once)."""
    out: dict[object, Mpf] = {}
    with mp.workdps(60):
        for cells in itertools.product(*(law.items() for law in laws)):
            value = mp.one
            for _, v in cells:
                value *= v
            out[tuple(x for x, _ in cells)] = value
    return out


def vector_brute(par: ShuffleSumParameters, eps: float) -> Mpf:
    """``max over k ∈ [-levels, levels]^D`` of ``δ(⊗(X + k_j) || ⊗ X)``: every neighbouring pair of
    inputs bounded per coordinate (both directions: ``-k`` is the reverse pair moved)."""
    with mp.workdps(60):
        noise = {
            x: mp.mpf(v.numerator) / v.denominator
            for x, v in binomial_law(par.b * par.users, Fraction(par.p)).items()
        }
    base = product([noise] * par.dimension)
    span = range(-par.levels, par.levels + 1)
    return max(
        hockey_60(product([{x + k: v for x, v in noise.items()} for k in ks]), base, eps)
        for ks in itertools.product(span, repeat=par.dimension)
    )


def within(value: Mpf, lo: Mpf, hi: Mpf, slack: float = 1e-25) -> bool:
    with mp.workdps(60):
        return bool(lo - slack <= value <= hi + slack)


# -- the scalar protocol: the view is the count plus Bin(bn, p), exactly ------------------------


def test_scalar_protocol_is_the_count_plus_binomial_noise() -> None:
    """Every neighbouring pair of datasets (others' inputs fixed, one user's input replaced) has a
    δ(ε) at most the accounting's, and x = -B against x' = B attains it (both directions) when the
    others' encodings need no rounding (rounding them adds noise)."""
    par = params(users=3, levels=2, b=2, p=0.3)  # 6 trials in all, p != 1/2: the shifts differ
    rng = np.random.default_rng(17)
    pairs = [(Fraction(-1), Fraction(1), [Fraction(0), Fraction(1)])]
    for _ in range(6):
        x, y, *others = (Fraction(int(v), 64) for v in rng.integers(-64, 65, size=4))
        pairs.append((x, y, others))
    for eps in (0.0, 0.4, 1.5):
        certified = summation.shuffle_sum_delta(par, eps)
        worst = mp.zero
        for x, y, others in pairs:
            p_law, q_law = count_law([x, *others], par), count_law([y, *others], par)
            for value in (hockey(p_law, q_law, eps), hockey(q_law, p_law, eps)):  # type: ignore[arg-type]
                assert within(value, mp.zero, certified.hi)
                worst = max(worst, value)
        assert within(worst, certified.lo, certified.hi)  # the extreme pair is the worst: exact


@pytest.mark.parametrize("p", [0.3, 0.5, 0.85])
def test_scalar_epsilon_is_exact_and_never_below(p: float) -> None:
    par = params(users=4, levels=3, b=5, p=p)
    noise = binomial_law(20, Fraction(p))
    for delta in (0.05, 1e-3):
        got = summation.shuffle_sum_epsilon(par, delta)
        assert got.route == "pld"
        assert summation.shuffle_sum_exact(par)
        if math.isinf(got.upper):
            continue

        def brute(eps: float) -> Mpf:
            return max(hockey(shifted(noise, k), noise, eps) for k in (3, -3))  # type: ignore[arg-type]

        assert within(brute(got.upper), mp.zero, mp.mpf(delta))  # the ε reported is at least the true one
        if got.lower > 0:
            assert brute(got.lower * (1 - 1e-9)) > delta  # and tight
        assert got.upper - got.lower <= 1e-12 * got.upper


def test_scalar_noise_is_binomial_and_centered_at_one_half() -> None:
    assert summation.shuffle_sum_noise(params(5, 2, 3, 0.3)) == Binomial(15, 0.3)
    assert summation.shuffle_sum_noise(params(5, 2, 3, 0.5)) == CenteredBinomial(15)
    assert summation.shuffle_sum_rdp(params(5, 2, 3, 0.3), 2) == math.inf  # finite support: no RDP
    assert summation.shuffle_sum_rdp(params(5, 2, 3, 0.5, dimension=3), math.inf) == math.inf


# -- the vector protocol --------------------------------------------------------------------------


@pytest.mark.slow
def test_vector_ledger_is_exact_at_one_half() -> None:
    """p = 1/2 and b n even: the D coordinates composed by PLD enclose the brute force over every shift."""
    par = params(users=4, levels=1, b=5, p=0.5, dimension=2)
    assert summation.shuffle_sum_exact(par)
    for eps in (0.2, 1.0):
        got = summation.shuffle_sum_delta(par, eps)
        assert got.route == "pld"
        assert within(vector_brute(par, eps), got.lo, got.hi, 1e-15)


@pytest.mark.slow
@pytest.mark.parametrize(("p", "b"), [(0.45, 10), (0.6, 15)])
def test_vector_thinning_ledger_is_never_below(p: float, b: int) -> None:
    """p != 1/2: the two shifts differ and the ledger is the thinning bound: never below the brute
    force over every shift, mixed signs included."""
    par = params(users=4, levels=1, b=b, p=p, dimension=2)
    assert not summation.shuffle_sum_exact(par)
    for eps in (0.6,):
        brute = vector_brute(par, eps)
        got = summation.shuffle_sum_delta(par, eps)
        assert within(brute, mp.zero, got.hi)
        assert within(brute, mp.zero, summation.shuffle_sum_ledger(par, tail=1e-3).delta(eps).hi)


@pytest.mark.slow
def test_vector_thinning_ledger_is_tight_for_the_protocols_p() -> None:
    """At a protocol's p (within 1/(2b) of 1/2) the thinning costs a fraction of a percent: against a
    float64 brute force over the four sign patterns of two coordinates."""
    n, b, levels = 100, 400, 3
    p = 0.5 - 0.25 / b
    par = params(users=n, levels=levels, b=b, p=p, dimension=2)
    trials = n * b
    xs = np.arange(trials // 2 - 1400, trials // 2 + 1400)
    pmf = stats.binom.pmf(xs, trials, p)
    up, down = stats.binom.pmf(xs - levels, trials, p), stats.binom.pmf(xs + levels, trials, p)
    eps = 0.1  # δ near 10^-3 (far below, the thinning's τ = 10^-30 would dominate)
    brute = 0.0
    for a, c in itertools.product((up, down), repeat=2):
        brute = max(brute, float(np.maximum(np.outer(a, c) - math.exp(eps) * np.outer(pmf, pmf), 0).sum()))
    got = summation.shuffle_sum_delta(par, eps)
    assert brute <= float(got.hi) * (1 + 1e-9)
    assert float(got.hi) <= brute * 1.02


# -- calibration ---------------------------------------------------------------------------------


def test_scalar_calibration_is_the_least_b_and_saves_bits() -> None:
    cal = summation.shuffle_sum_calibration("dpdpe-scalar", 5.0, 0.01, 20)
    cited, best = cal.cited, cal.exact
    assert cited == shuffle_sum_parameters("dpdpe-scalar", 5.0, 0.01, 20)
    assert (best.g, best.levels, best.p) == (cited.g, cited.levels, 0.5)
    assert best.bits == best.levels + best.b
    assert cal.saved_bits == cited.bits - best.bits > 0
    assert cal.exact_accounting
    # re-checked by the library and by brute force on the count: b meets (5, 0.01), b - 1 does not
    assert summation.shuffle_sum_epsilon(best, 0.01).upper <= 5.0
    assert cal.epsilon.upper <= 5.0
    assert best.epsilon == cal.epsilon.upper
    fewer = dataclasses.replace(best, b=best.b - 1)
    assert summation.shuffle_sum_epsilon(fewer, 0.01).upper > 5.0
    for trials, meets in ((best.b * 20, True), ((best.b - 1) * 20, False)):
        noise = binomial_law(trials, Fraction(1, 2))
        brute = max(hockey(shifted(noise, k), noise, 5.0) for k in (cited.levels, -cited.levels))  # type: ignore[arg-type]
        assert (brute <= 0.01) == meets
    # the cited parameters are private too, far more than the theorem says
    exact_cited = summation.shuffle_sum_epsilon(cited, 0.01)
    assert exact_cited.upper < cited.epsilon


@pytest.mark.slow
def test_vector_calibration_meets_the_target_when_rechecked() -> None:
    cal = summation.shuffle_sum_calibration("dpdpe-vector", 5.0, 0.01, 50, dimension=3)
    best = cal.exact
    assert best.dimension == 3
    assert best.bits == 3 * (best.levels + best.b)
    assert summation.shuffle_sum_epsilon(best, 0.01).upper <= 5.0
    if best.b > 1:
        assert summation.shuffle_sum_epsilon(dataclasses.replace(best, b=best.b - 1), 0.01).upper > 5.0
    assert cal.saved_fraction > 0.5


def test_calibration_at_another_p_needs_more_trials() -> None:
    half = summation.shuffle_sum_calibration("dpdpe-scalar", 5.0, 0.01, 20)
    third = summation.shuffle_sum_calibration("dpdpe-scalar", 5.0, 0.01, 20, p=0.3)
    assert third.exact.p == 0.3
    assert third.exact.b > half.exact.b  # less variance per trial
    assert summation.shuffle_sum_epsilon(third.exact, 0.01).upper <= 5.0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"p": 0.0}, "p"),
        ({"p": 1.0}, "p"),
        ({"p": math.nan}, "p"),
        ({"protocol": "vec"}, "protocol"),
        ({"epsilon": 30.0}, "epsilon"),
        ({"users": 0}, "users"),
        ({"dps": 2}, "dps"),
    ],
)
def test_calibration_bad_input_is_named(kwargs: dict[str, object], name: str) -> None:
    args: dict[str, object] = {"protocol": "dpdpe-scalar", "epsilon": 1.0, "delta": 1e-6, "users": 100}
    with pytest.raises(ParameterError) as info:
        summation.shuffle_sum_calibration(**(args | kwargs))  # type: ignore[arg-type]
    assert info.value.name == name


def test_ledger_bad_input_is_named() -> None:
    with pytest.raises(ParameterTypeError) as info:
        summation.shuffle_sum_ledger(AdditiveNoise(Binomial(3, 0.5)))  # type: ignore[arg-type]
    assert info.value.name == "params"
    with pytest.raises(ParameterError) as err:
        summation.shuffle_sum_ledger(params(4, 1, 5, 0.3, dimension=2), tail=0.0)
    assert err.value.name == "tail"
    with pytest.raises(ParameterError) as err:
        summation.shuffle_sum_epsilon(params(4, 1, 5, 0.3), 1.5)
    assert err.value.name == "delta"


# -- the command line ----------------------------------------------------------------------------


def cli(argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(shlex.split(argv))
    except SystemExit as err:
        code = int(err.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_shuffle_protocol_exact_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    argv = "shuffle-protocol --protocol dpdpe-scalar --epsilon 5 --delta 0.01 --users 20 --exact"
    code, out, _ = cli(argv + " --json", capsys)
    assert code == 0
    record = json.loads(out)
    cited = shuffle_sum_parameters("dpdpe-scalar", 5.0, 0.01, 20)
    cal = summation.shuffle_sum_calibration("dpdpe-scalar", 5.0, 0.01, 20)
    assert record["b"] == cited.b
    assert record["exact"]["epsilon"] == summation.shuffle_sum_epsilon(cited, 0.01).upper
    assert record["exact"]["exact"] is True
    assert record["calibrated"]["b"] == cal.exact.b
    assert record["calibrated"]["bits_per_user"] == cal.exact.bits
    assert record["calibrated"]["epsilon"] == cal.epsilon.upper <= 5.0
    assert record["saved_bits"] == cal.saved_bits
    code, out, _ = cli(argv, capsys)
    assert code == 0
    assert f"bits per user: {cal.exact.bits} by exact accounting, {cited.bits} by the cited constants" in out
    assert "where the cited theorem gives 5" in out


@pytest.mark.slow
def test_shuffle_protocol_exact_says_when_the_cited_noise_is_too_wide(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = (
        "shuffle-protocol --protocol dpdpe-vector --epsilon 1 --delta 1e-6 --users 1000 --dimension 5 --exact"
    )
    code, out, _ = cli(argv + " --json", capsys)
    assert code == 0
    record = json.loads(out)
    assert record["exact"]["epsilon"] is None
    assert "lattice points" in record["exact"]["refused"]
    assert record["calibrated"]["epsilon"] <= 1.0
    assert record["calibrated"]["bits_per_user"] < record["bits_per_user"]


def test_epsilon_with_a_probability_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        "epsilon --noise binomial --trials 300 --probability 0.3 --sensitivity 2 --delta 1e-4 --json", capsys
    )
    assert code == 0
    record = json.loads(out)
    assert record["epsilon"] == AdditiveNoise(Binomial(300, 0.3), 2).epsilon(1e-4).upper
    assert record["inputs"]["probability"] == 0.3
    code, out, _ = cli(
        "delta --noise binomial --trials 300 --probability 0.3 --sensitivity 2 --epsilon 1", capsys
    )
    assert code == 0
    assert repr(AdditiveNoise(Binomial(300, 0.3), 2).delta(1.0).upper) in out
    # p = 1/2, given or not, is the centered binomial, with the value it always had
    for extra in ("", " --probability 0.5"):
        code, out, _ = cli(
            f"epsilon --noise binomial --trials 40 --sensitivity 3 --delta 1e-3{extra}", capsys
        )
        assert code == 0
        assert "epsilon = 3.1904642491084316" in out


@pytest.mark.parametrize(
    "argv",
    [
        *(
            f"epsilon --noise binomial --trials 40 --delta 1e-3 --probability {p}"
            for p in ("0", "1", "-0.2", "1.5", "nan", "abc", "inf")
        ),
        "epsilon --noise skellam --variance 4 --delta 1e-3 --probability 0.3",
        "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 100 --probability 0.3",
        "shuffle-protocol --protocol dpdpe-scalar --epsilon 1 --delta 1e-6 --users 9 --exact --probability 1",
    ],
)
def test_bad_probability_exits_2_naming_it(argv: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(argv, capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "--probability" in err
    assert "Traceback" not in err


# -- the cited parameters: Li, Zhou & Ji 2022 (Algorithms 2 and 4), Zhou & Chowdhury 2024 §5.3 ----


def test_dpdpe_scalar_parameters_follow_algorithm_4_at_half_epsilon() -> None:
    eps, delta, n, bound = 1.0, 1e-6, 1000, 1.0
    p = shuffle_sum_parameters("dpdpe-scalar", eps, delta, n, bound=bound)
    assert p.g == math.ceil(2 * bound * math.sqrt(n))
    threshold = 180 * p.g**2 * math.log(2 / delta) / ((eps / 2) ** 2 * n)
    assert threshold < p.b <= threshold + 1  # the least integer strictly above (Lemma C.5)
    assert p.p == pytest.approx(90 * p.g**2 * math.log(2 / delta) / (p.b * (eps / 2) ** 2 * n), rel=1e-12)
    assert 0 < p.p <= 0.5
    assert p.levels == p.g
    assert p.bits == p.levels + p.b


def test_dpdpe_vector_parameters_follow_equation_22() -> None:
    eps, delta, n, dim = 2.0, 1e-5, 10**6, 9
    p = shuffle_sum_parameters("dpdpe-vector", eps, delta, n, dim, bound=3.0)
    hat = eps / (18 * math.sqrt(math.log(2 / delta)))
    log_term = math.log(4 * dim / delta)
    g = max(math.ceil(hat * math.sqrt(n) / (6 * math.sqrt(5 * log_term))), 3, 10)
    assert p.g == g
    assert 180 * g**2 * log_term / (hat**2 * n) < p.b
    assert p.p <= 0.5
    assert p.bits == dim * (p.g + p.b)


def test_cheu_vector_parameters_of_the_federated_paper() -> None:
    eps, delta, n, dim = 1.0, 1e-4, 400, 5
    p = shuffle_sum_parameters("cheu-vector", eps, delta, n, dim)
    assert p.g == max(math.ceil(2 * math.sqrt(n)), dim, 4) == 40
    assert p.p == 0.25
    assert p.levels == 2 * p.g
    assert p.b == math.ceil(24e4 * p.g**2 * math.log(4 * (dim + 1) / delta) ** 2 / (eps**2 * n))


@given(st.floats(0.05, 10.0), st.integers(1, 10**6))
@settings(max_examples=40)
def test_more_privacy_never_means_less_binomial_noise(eps: float, n: int) -> None:
    """The noise variance (in input units) grows as ε shrinks."""
    tight = shuffle_sum_parameters("dpdpe-scalar", eps / 2, 1e-6, n)
    loose = shuffle_sum_parameters("dpdpe-scalar", eps, 1e-6, n)
    assert tight.variance() >= loose.variance() * (1 - 1e-9)


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("secagg", 1.0, 1e-6, 10), "protocol"),
        (("dpdpe-scalar", 30.0, 1e-6, 10), "epsilon"),
        (("dpdpe-scalar", 1.0, 0.5, 10), "delta"),
        (("dpdpe-scalar", 1.0, 1e-6, 10, 2), "dimension"),
        (("dpdpe-vector", 15.0, 1e-6, 10, 2), "epsilon"),
        (("cheu-vector", 16.0, 1e-6, 10, 2), "epsilon"),
        (("cheu-vector", 1.0, 1e-6, 0, 2), "users"),
        (("cheu-vector", 1.0, 1e-6, 10, 2, -1.0), "bound"),
    ],
)
def test_shuffle_sum_bad_input_names_the_parameter(args: tuple[object, ...], name: str) -> None:
    with pytest.raises(ParameterError) as err:
        shuffle_sum_parameters(*args)  # type: ignore[arg-type]
    assert err.value.name == name
