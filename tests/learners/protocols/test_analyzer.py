"""Tests of :mod:`learners.protocols.analyzer`: decoding with the underflow correction.

The decoding lemma of the proof of Theorem 1 of Chowdhury & Zhou (2023): every noisy sum in
``[-τ, n g + τ]`` is recovered from its residue mod ``m = n g + 2τ + 1``, with the strict
threshold ``yhat > n g + τ``; a shuffled multiset is summed mod ``m`` first (footnote 6).
Expected values are computed here independently (Python integers, closed forms), never by the
code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounting.papers.distributed_dp_mab import Variant, protocol_parameters
from learners.errors import ParameterError, ParameterTypeError
from learners.protocols import analyze, decode, encode
from tests.learners.protocols.helpers import FAST, rng


def test_decode_exhaustive_small_grid() -> None:
    """Every S in [-τ, ng+τ] is recovered from S mod m; the two neighbours outside are not."""
    for n in range(1, 5):
        for g in range(1, 5):
            for tau in range(6):
                m = n * g + 2 * tau + 1
                s = np.arange(-tau, n * g + tau + 1)
                assert np.array_equal(decode(s % m, n, g, tau, m), s)
                assert np.array_equal(analyze(s % m, n, g, tau, m), s / g)
                outside = np.array([-tau - 1, n * g + tau + 1])
                assert np.all(decode(outside % m, n, g, tau, m) != outside)


@FAST
@given(
    n=st.integers(1, 10**6),
    g=st.integers(1, 10**4),
    tau=st.integers(0, 10**9),
    where=st.floats(0, 1),
)
def test_decode_large(n: int, g: int, tau: int, where: float) -> None:
    m = n * g + 2 * tau + 1
    inside = [-tau, -min(tau, 1), 0, n * g, n * g + tau, -tau + round(where * (n * g + 2 * tau))]
    s = np.array(inside, dtype=np.int64)
    assert decode(s % m, n, g, tau, m).tolist() == inside
    assert analyze(s % m, n, g, tau, m).tolist() == [v / g for v in inside]
    outside = np.array([-tau - 1, n * g + tau + 1], dtype=np.int64)
    assert np.all(decode(outside % m, n, g, tau, m) != outside)


def test_decode_threshold_is_strict() -> None:
    n, g, tau = 3, 2, 4
    m = n * g + 2 * tau + 1
    assert int(decode(n * g + tau, n, g, tau, m)) == n * g + tau
    assert int(decode(n * g + tau + 1, n, g, tau, m)) == -tau


def test_decode_big_modulus_uses_python_integers() -> None:
    n, g, tau = 5, 3, 2**70
    m = n * g + 2 * tau + 1
    s = [-tau, -1, 0, n * g + tau]
    view = np.array([v % m for v in s], dtype=object)
    out = decode(view, n, g, tau, m)
    assert out.dtype == object
    assert out.tolist() == s
    assert analyze(view, n, g, tau, m).tolist() == [v / g for v in s]


def test_decode_validation() -> None:
    with pytest.raises(ParameterError, match=r"m=10 is invalid.*>= n\*g \+ 2\*tau \+ 1 = 11"):
        decode(0, 2, 3, 2, 10)
    with pytest.raises(ParameterError, match="yhat"):
        decode([11], 2, 3, 2, 11)
    with pytest.raises(ParameterError, match="yhat"):
        decode([-1], 2, 3, 2, 11)
    with pytest.raises(ParameterTypeError, match="yhat"):
        decode([1.5], 2, 3, 2, 11)
    with pytest.raises(ParameterError, match="tau"):
        decode([1], 2, 3, 2.5, 11)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="tau"):
        decode([1], 2, 3, "2", 11)  # type: ignore[arg-type]


def test_integers_are_validated_as_accounting_validates_them() -> None:
    """One validator for dpcert: an integral float is the integer, here as in accounting."""
    assert decode([5], 2.0, 3, 2, 11).tolist() == decode([5], 2, 3, 2, 11).tolist()  # type: ignore[arg-type]
    x = rng(1).random((2, 4))
    assert np.array_equal(encode(x, 4.0, rng(2)), encode(x, 4, rng(2)))  # type: ignore[arg-type]
    assert protocol_parameters(Variant.POLYA_SHARES, 1.0, 4.0, 100).users == 4  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"n=4\.5"):
        decode([5], 4.5, 3, 2, 11)  # type: ignore[arg-type]


def test_analyze_multiset_sums_first() -> None:
    n, g, tau = 4, 2, 3
    m = n * g + 2 * tau + 1
    messages = np.array([[m - 1, m - 1, 0, 1], [2, 2, 2, 2]])  # sums -1 and 8
    assert analyze(messages, n, g, tau, m, multiset=True).tolist() == [-0.5, 4.0]
