"""The one exact convolution (accounting.convolution): Kronecker substitution against the schoolbook sum."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounting.convolution import convolve, convolve_rows, fft_convolve, fft_error

BIG = st.integers(min_value=0, max_value=2**300)


def schoolbook(a: list[int], b: list[int]) -> list[int]:
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


@given(st.lists(BIG, min_size=1, max_size=40), st.lists(BIG, min_size=1, max_size=40))
def test_convolve_is_the_exact_sum_of_products(a: list[int], b: list[int]) -> None:
    assert convolve(a, b) == schoolbook(a, b)
    assert convolve(a, a) == schoolbook(a, a)  # the squaring


@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), min_size=1, max_size=30))
def test_byte_rows_hold_the_same_product(values: list[int]) -> None:
    rows = np.frombuffer(b"".join(x.to_bytes(9, "little") for x in values), dtype=np.uint8).reshape(-1, 9)
    product = convolve_rows(rows, rows, same=True)
    assert [int.from_bytes(r.tobytes(), "little") for r in product] == schoolbook(values, values)
    other = convolve_rows(rows, rows[::-1].copy())
    assert [int.from_bytes(r.tobytes(), "little") for r in other] == schoolbook(values, values[::-1])


# ---------------------------------------------------------------------------------------
# Float products: the FFT's certified ℓ1 error bound
# ---------------------------------------------------------------------------------------

SCALE = 2**80  # the float inputs below are multiples of 2^-80: exact integers at this scale


def dyadic(values: np.ndarray) -> np.ndarray:
    return np.asarray(np.ldexp(np.floor(np.ldexp(values, 80)), -80), dtype=np.float64)


def shapes(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Probability vectors a long composition meets: smooth, spiky, decaying over 30 decades, sparse."""
    x = np.linspace(-8, 8, n)
    sparse = np.zeros(n)
    sparse[:: max(1, n // 7)] = rng.random(len(sparse[:: max(1, n // 7)]))
    out = {
        "gaussian": np.exp(-x * x / 2),
        "one atom": np.eye(1, n, n // 3)[0] + 1e-30,
        "decades": np.exp(-np.linspace(0, 69, n)),
        "random": rng.random(n) ** 12,
        "sparse": sparse,
        "atom and tail": np.concatenate([[0.99], np.full(n - 1, 0.01 / (n - 1))]),
    }
    return {k: dyadic(v / v.sum()) for k, v in out.items()}


def exact_l1(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> Fraction:
    """Σ |c - a*b| exactly (the float c read exactly, a*b by the exact integer convolution)."""
    exact = convolve([int(v * SCALE) for v in a], [int(v * SCALE) for v in b])
    return sum(
        (
            abs(Fraction(*ci.as_integer_ratio()) - Fraction(e, SCALE * SCALE))
            for ci, e in zip(c, exact, strict=True)
        ),
        Fraction(0),
    )


@pytest.mark.parametrize("n", [64, 1000, 5000])
def test_fft_products_stay_within_their_certified_error(n: int) -> None:
    rng = np.random.default_rng(n)
    vectors = shapes(rng, n)
    pairs = [(x, x) for x in vectors] + [(x, "gaussian") for x in vectors if x != "gaussian"]
    for name_a, name_b in pairs:
        a, b = vectors[name_a], vectors[name_b]
        same = name_a == name_b
        c, bound = fft_convolve(a, b, same), fft_error(a, b, same)
        assert len(c) == 2 * n - 1
        assert np.all(c >= 0)
        error = exact_l1(c, a, b)
        assert error <= bound, (name_a, name_b, float(error), bound)
        assert bound < 1e-13  # not vacuous: far below any δ asked of a composition
