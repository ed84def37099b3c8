"""The one exact convolution (accounting.convolution): Kronecker substitution against the schoolbook sum."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from accounting.convolution import convolve, convolve_rows

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
