"""Amplification by shuffling (:mod:`accounting.amplification`, and ``dp-account shuffle``).

Each bound is checked against the ground truth it must dominate — the exact privacy curve of
shuffled binary randomized response, an ``ε0``-LDP randomizer — and the certified numerical
bound of Feldman–McMillan–Talwar against an independent brute-force sum of its own reduction.
"""

from __future__ import annotations

import json
import math
import shlex

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from accounting import amplification
from accounting.amplification import (
    amplify,
    blanket_generic,
    blanket_randomized_response,
    efmrtt,
    fmt_closed,
    fmt_delta,
    fmt_numerical,
    randomized_response_exact,
)
from accounting.cli import main
from accounting.errors import ParameterError, ParameterTypeError

# --------------------------------------------------------------------------------------------
# Published values (FMT 2021, n = 1e5, ε0 = 4, δ = 1e-6)
# --------------------------------------------------------------------------------------------


def test_fmt_published_example() -> None:
    """FMT 2021: the closed form (Theorem 3.1) and the numerical bound at their running example."""
    closed = fmt_closed(4, 100_000, 1e-6)
    assert closed.valid
    assert closed.epsilon == pytest.approx(0.5346339916517, rel=1e-12)
    # The "about 0.538" often quoted is the public script's variant of the closed form (coefficient
    # (1 - e^-ε0)/(1 + e^(-ε0-ε')) instead of (e^ε0 - 1)/(e^ε0 + 1)); both dominate the numerics.
    a = 8 * math.sqrt(math.exp(4) * math.log(4e6) / 1e5) + 8 * math.exp(4) / 1e5
    script = math.log1p((1 - math.exp(-4)) / (1 + math.exp(-4 - math.log1p(a))) * a)
    assert script == pytest.approx(0.5378, abs=5e-5)
    numerical = fmt_numerical(4, 100_000, 1e-6)
    assert 0.1675 <= numerical.epsilon <= 0.1728  # the published range
    assert numerical.lower is not None
    assert numerical.lower <= numerical.epsilon <= numerical.lower * (1 + 1e-10)
    assert numerical.epsilon == pytest.approx(0.16976974725, rel=1e-10)
    assert numerical.epsilon <= closed.epsilon <= script


def test_numerical_is_certified_at_both_ends() -> None:
    """δ_hi(epsilon) <= δ < δ_lo(lower): the exact ε of the analysis lies in [lower, epsilon]."""
    for e0, n, dl in [(4, 100_000, 1e-6), (1, 3000, 1e-8), (0.3, 40, 1e-3)]:
        r = fmt_numerical(e0, n, dl)
        assert r.lower is not None
        assert 0 < r.lower < r.epsilon
        assert fmt_delta(e0, n, r.epsilon).hi <= dl
        assert fmt_delta(e0, n, r.lower).lo > dl


# --------------------------------------------------------------------------------------------
# The certified δ(ε) of the clone reduction against brute force
# --------------------------------------------------------------------------------------------


def _brute_delta(e0: float, n: int, eps: float) -> mp.mpf:
    """δ(ε) of FMT's pair P, Q summed term by term from its definition, at 40 digits."""
    with mp.workdps(40):
        x0 = mp.exp(mp.mpf(e0))
        p, a, b, big = 1 / x0, x0 / (x0 + 1), 1 / (x0 + 1), mp.exp(mp.mpf(eps))
        total = mp.zero
        for c in range(n):
            w = mp.binomial(n - 1, c) * p**c * (1 - p) ** (n - 1 - c)
            pmf = [mp.binomial(c, k) / mp.mpf(2) ** c for k in range(c + 1)] + [mp.zero]
            for k in range(c + 2):
                prev = pmf[k - 1] if k else mp.zero
                total += w * max(mp.zero, a * prev + b * pmf[k] - big * (b * prev + a * pmf[k]))
        return total


@pytest.mark.parametrize(("e0", "n"), [(0.5, 1), (1.0, 2), (2.0, 17), (0.3, 60), (4.0, 45)])
def test_fmt_delta_encloses_the_brute_force_sum(e0: float, n: int) -> None:
    for eps in (0.0, 0.01 * e0, 0.3 * e0, 0.9 * e0):
        enc = fmt_delta(e0, n, eps)
        assert _brute_delta(e0, n, eps) in enc
        assert enc.relative_width < 1e-10


def test_fmt_delta_matches_an_independent_float_sum_at_large_n() -> None:
    """n = 20000 uses the Chernoff window and chunked recurrences; scipy sums P - e^ε Q directly."""
    from scipy import stats

    e0, n, eps = 2.0, 20_000, 0.12
    x0 = math.exp(e0)
    a, b, big = x0 / (x0 + 1), 1 / (x0 + 1), math.exp(eps)
    cs = np.arange(n)
    w = stats.binom.pmf(cs, n - 1, math.exp(-e0))
    total = 0.0
    for c in cs[w > 1e-25]:
        k = np.arange(int(c) + 2)
        prev, cur = stats.binom.pmf(k - 1, c, 0.5), stats.binom.pmf(k, c, 0.5)
        total += w[c] * np.maximum(a * prev + b * cur - big * (b * prev + a * cur), 0).sum()
    enc = fmt_delta(e0, n, eps)
    assert float(enc.hi) == pytest.approx(total, rel=1e-7)


# --------------------------------------------------------------------------------------------
# Every bound dominates the exact shuffled randomized response; numerical <= closed form
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 5, 12, 30])
@pytest.mark.parametrize("e0", [0.25, 1.0, 3.0])
@pytest.mark.parametrize("dl", [0.3, 1e-3, 1e-7])
def test_generic_bounds_dominate_exact_shuffled_rr(n: int, e0: float, dl: float) -> None:
    exact = randomized_response_exact(e0, n, dl)
    assert exact.lower is not None
    assert exact.lower <= exact.epsilon <= e0
    numerical = fmt_numerical(e0, n, dl, lower=False)
    assert exact.epsilon <= numerical.epsilon <= e0
    for bound in (fmt_closed, blanket_generic, efmrtt):
        assert exact.epsilon <= bound(e0, n, dl).epsilon


@pytest.mark.slow
@pytest.mark.parametrize(("e0", "n", "dl"), [(0.4, 2000, 1e-3), (0.2, 5000, 1e-6), (1.0, 4000, 1e-6)])
def test_bounds_dominate_exact_rr_at_moderate_n(e0: float, n: int, dl: float) -> None:
    """With all other bits 0 (one configuration: a lower bound on the RR's exact ε)."""
    exact = randomized_response_exact(e0, n, dl, ones=0)
    numerical = fmt_numerical(e0, n, dl, lower=False)
    assert exact.epsilon <= numerical.epsilon
    for bound in (blanket_generic, efmrtt, fmt_closed):
        assert numerical.epsilon <= bound(e0, n, dl).epsilon
    rr = blanket_randomized_response(e0, n, dl)
    assert exact.epsilon <= rr.epsilon


def test_exact_rr_worst_case_covers_every_configuration() -> None:
    worst = randomized_response_exact(1.0, 9, 1e-3)
    for ones in range(9):
        assert randomized_response_exact(1.0, 9, 1e-3, ones=ones).epsilon <= worst.epsilon


@settings(max_examples=40)
@given(
    e0=st.floats(0.05, 6.0),
    n=st.integers(1, 3_000_000),
    dl=st.floats(1e-12, 0.5),
)
def test_numerical_never_above_closed_form(e0: float, n: int, dl: float) -> None:
    closed = fmt_closed(e0, n, dl)
    if closed.valid:
        assert fmt_numerical(e0, n, dl, lower=False).epsilon <= closed.epsilon


# --------------------------------------------------------------------------------------------
# Monotonicity (hypothesis)
# --------------------------------------------------------------------------------------------

_CHEAP = (fmt_closed, blanket_generic, efmrtt)


@pytest.mark.slow
@settings(max_examples=25)
@given(e0=st.floats(0.05, 5.0), n=st.integers(1, 5000), extra=st.integers(1, 5000), dl=st.floats(1e-10, 0.5))
def test_epsilon_decreases_in_users(e0: float, n: int, extra: int, dl: float) -> None:
    more = fmt_numerical(e0, n + extra, dl, lower=False)
    assert more.epsilon <= fmt_numerical(e0, n, dl, lower=False).epsilon
    for bound in _CHEAP:
        assert bound(e0, n + extra, dl).epsilon <= bound(e0, n, dl).epsilon


@pytest.mark.slow
@settings(max_examples=25)
@given(e0=st.floats(0.05, 5.0), grow=st.floats(0.01, 1.0), n=st.integers(1, 5000), dl=st.floats(1e-10, 0.5))
def test_epsilon_increases_in_epsilon0(e0: float, grow: float, n: int, dl: float) -> None:
    e1 = e0 * (1 + grow)
    assert fmt_numerical(e0, n, dl, lower=False).epsilon <= fmt_numerical(e1, n, dl, lower=False).epsilon
    for bound in _CHEAP:
        assert bound(e0, n, dl).epsilon <= bound(e1, n, dl).epsilon


@pytest.mark.slow
@settings(max_examples=25)
@given(e0=st.floats(0.05, 5.0), n=st.integers(1, 5000), dl=st.floats(1e-10, 0.4), factor=st.floats(1.01, 100))
def test_epsilon_decreases_in_delta(e0: float, n: int, dl: float, factor: float) -> None:
    d1 = min(dl * factor, 0.9)
    assert fmt_numerical(e0, n, d1, lower=False).epsilon <= fmt_numerical(e0, n, dl, lower=False).epsilon
    for bound in _CHEAP:
        assert bound(e0, n, d1).epsilon <= bound(e0, n, dl).epsilon


# --------------------------------------------------------------------------------------------
# Hypotheses of each theorem: outside them, the trivial bound and valid=False
# --------------------------------------------------------------------------------------------


def test_closed_forms_outside_their_hypotheses() -> None:
    closed = fmt_closed(7, 100_000, 1e-6)  # ε0 > ln(n/(16 ln(2/δ))) = 6.07
    assert not closed.valid
    assert closed.epsilon == 7
    assert "6.06" in closed.conditions
    assert not efmrtt(0.5, 5000, 1e-6).valid  # needs ε0 < 1/2
    assert not efmrtt(0.4, 1000, 1e-6).valid  # needs n > 1000
    assert not efmrtt(0.4, 5000, 0.01).valid  # needs δ < 1/100
    assert efmrtt(0.4, 5000, 1e-6).epsilon == pytest.approx(12 * 0.4 * math.sqrt(math.log(1e6) / 5000))
    assert not blanket_randomized_response(1.0, 20, 0.1).valid  # ε would exceed 1
    assert not blanket_generic(4, 100_000, 1e-6).valid  # Hoeffding never reaches δ below ε0


def test_trivial_bound_at_extremes() -> None:
    assert fmt_numerical(1.0, 1, 1e-100).epsilon <= 1.0
    one_user = fmt_numerical(1.0, 1, 0.1)
    # n = 1: no clones; δ(ε) = (e^ε0 - e^ε)/(e^ε0 + 1), so ε = ln(e - 0.1 (e + 1))
    assert one_user.epsilon == pytest.approx(math.log(math.e - 0.1 * (math.e + 1)), rel=1e-10)
    assert fmt_numerical(2.0, 10, 0.999).epsilon == 0.0


# --------------------------------------------------------------------------------------------
# Bad input names the parameter
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: fmt_numerical(0, 10, 1e-6), "epsilon0"),
        (lambda: fmt_numerical(1, 0, 1e-6), "users"),
        (lambda: fmt_numerical(1, 10, 1.0), "delta"),
        (lambda: fmt_numerical(1, 10, 1e-200), "delta"),
        (lambda: fmt_numerical(1, 2 * 10**9, 1e-6), "users"),
        (lambda: fmt_closed(float("nan"), 10, 1e-6), "epsilon0"),
        (lambda: fmt_delta(1, 10, -0.1), "epsilon"),
        (lambda: blanket_randomized_response(1, 10, 1e-6, k=1), "k"),
        (lambda: randomized_response_exact(1, 65, 1e-3), "users"),
        (lambda: randomized_response_exact(1, 10, 1e-3, ones=10), "ones"),
        (lambda: amplify(1, 10, 1e-6, "magic"), "bound"),
    ],
)
def test_bad_input_names_the_parameter(call: object, name: str) -> None:
    with pytest.raises(ParameterError) as err:
        call()  # type: ignore[operator]
    assert err.value.name == name
    assert name in str(err.value)


def test_wrong_type_names_the_parameter() -> None:
    with pytest.raises(ParameterTypeError, match="users"):
        fmt_numerical(1.0, "10", 1e-6)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="users"):
        fmt_closed(1.0, 10.5, 1e-6)  # type: ignore[arg-type]


def test_amplify_dispatches() -> None:
    assert amplification.BOUNDS == ("fmt-numerical", "fmt-closed", "blanket", "efmrtt")
    for name in amplification.BOUNDS:
        result = amplify(0.4, 5000, 1e-6, name)
        assert result.bound == name
        assert result.valid
    assert amplify(0.4, 5000, 1e-6).bound == "fmt-numerical"


# dp-account shuffle
# --------------------------------------------------------------------------------------------


def _json(capsys: pytest.CaptureFixture[str], argv: str) -> dict[str, object]:
    assert main([*shlex.split(argv), "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_cli_running_example(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, "shuffle --epsilon0 4 --users 100000 --delta 1e-6")
    assert out["bound"] == "fmt-numerical"
    assert out["valid"] is True
    assert out["epsilon"] == fmt_numerical(4, 100_000, 1e-6).epsilon
    assert out["epsilon_lower"] <= out["epsilon"]  # type: ignore[operator]
    assert out["inputs"] == {"epsilon0": 4.0, "users": 100000, "delta": 1e-6, "bound": "fmt-numerical"}
    closed = _json(capsys, "shuffle --epsilon0 4 --users 100000 --delta 1e-6 --bound fmt-closed")
    assert closed["epsilon"] == pytest.approx(0.5346339916517, rel=1e-12)
    assert closed["epsilon_lower"] is None
    assert "Theorem 3.1" in str(closed["theorem"])


def test_cli_all_bounds_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, "shuffle --epsilon0 0.4 --users 5000 --delta 1e-6 --bound all")
    results = out["results"]
    assert isinstance(results, list)
    assert [r["bound"] for r in results] == list(amplification.BOUNDS)
    assert results[0]["epsilon"] == min(r["epsilon"] for r in results)
    assert main(shlex.split("shuffle --epsilon0 4 --users 100000 --delta 1e-6 --bound efmrtt")) == 0
    text = capsys.readouterr().out
    assert "efmrtt: does not apply" in text
    assert "epsilon = 4.0" in text
    assert main(shlex.split("shuffle --epsilon0 4 --users 100000 --delta 1e-6")) == 0
    assert "the analysis's exact epsilon lies in [0.16976974" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ("shuffle --epsilon0 0 --users 10 --delta 1e-6", "--epsilon0"),
        ("shuffle --epsilon0 1 --users 0 --delta 1e-6", "--users"),
        ("shuffle --epsilon0 1 --users 10 --delta 1", "--delta"),
        ("shuffle --epsilon0 1 --users 10 --delta 1e-6 --bound magic", "--bound"),
        ("shuffle --users 10 --delta 1e-6", "--epsilon0"),
        ("shuffle --epsilon0 1 --users 2000000000 --delta 1e-6", "users"),
        ("shuffle --epsilon0 1 --users 10 --delta 1e-200", "delta"),
    ],
)
def test_cli_invalid_input_exits_2(argv: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(shlex.split(argv))
    except SystemExit as err:
        code = int(err.code or 0)
    assert code == 2
    err_text = capsys.readouterr().err.strip()
    assert len(err_text.splitlines()) == 1
    assert needle in err_text
    assert "Traceback" not in err_text
