"""Tests of :mod:`learners.protocols.aggregation`: the modular sum and simulated secure aggregation.

The ideal secure aggregation of Chowdhury & Zhou (2023, §3), exact near int64 overflow and for
moduli of Python integers; the additive masks of Bonawitz et al. (2017) cancel, with dropped users'
masks recovered (the modular-sum invariance of the proof of Theorem 1).
Expected values are computed here independently (Python integers, closed forms), never by the
code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from learners import protocols
from learners.errors import ParameterError, ParameterTypeError, RecoveryError
from learners.protocols import masked_sum, modular_sum
from learners.protocols.aggregation import pairwise_masks, zero_sum_masks
from learners.protocols.arithmetic import uniform_residues
from tests.learners.protocols.helpers import FAST, python_sum_mod, rng


@pytest.mark.parametrize("m", [2, 1000003, 2**40 + 15, 2**61 + 1, 2**62 - 1])
def test_modular_sum_matches_python_integers(m: int) -> None:
    y = rng(1).integers(0, m, size=(3, 1001), dtype=np.int64)
    if m > 2**40:
        y[:, :500] = m - 1  # as close to overflow as residues get
    out = modular_sum(y, m)
    assert out.dtype == np.int64
    assert out.tolist() == python_sum_mod(y, m)


def test_modular_sum_reduces_representatives_mathematically() -> None:
    y = np.array([[-1, -1, -7], [2**62, -(2**62), 3]], dtype=np.int64)
    m = 5
    assert modular_sum(y, m).tolist() == [(-9) % 5, 3 % 5]
    assert modular_sum(y, m, axis=0).tolist() == [(2**62 - 1) % 5, (-(2**62) - 1) % 5, (-4) % 5]


@pytest.mark.parametrize("m", [2**62, 2**62 + 1, 2**64 + 13, 3**50])
def test_modular_sum_big_modulus_uses_python_integers(m: int) -> None:
    gen = rng(2)
    y = np.array(
        [[int(v) * (m // 2**40) + 7 for v in gen.integers(0, 2**40, 50)] for _ in range(3)], dtype=object
    )
    out = modular_sum(y, m)
    assert out.dtype == object
    assert out.tolist() == python_sum_mod(y, m)


@FAST
@given(m=st.integers(1, 2**62 - 1), data=st.data())
def test_modular_sum_property(m: int, data: st.DataObject) -> None:
    values = data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=0, max_size=40))
    y = np.array([values], dtype=np.int64).reshape(1, len(values))
    assert modular_sum(y, m).tolist() == [sum(values) % m]


def test_modular_sum_refuses_floats() -> None:
    with pytest.raises(ParameterTypeError, match="an array of integers"):
        modular_sum(np.ones((2, 3)), 7)
    with pytest.raises(ParameterError, match="axis"):
        modular_sum(np.ones((2, 3), dtype=np.int64), 7, axis=2)


# ---------------------------------------------------------------------------------------------
# Simulated additive-mask secure aggregation (Bonawitz et al. 2017)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 50), (3, 17, 5)])
@pytest.mark.parametrize("m", [97, 2**62 - 1, 2**62 + 3])
def test_masked_sum_is_the_modular_sum(shape: tuple[int, ...], m: int) -> None:
    """Modular-sum invariance (proof of Theorem 1): masks cancel; pairwise and zero-sum paths agree."""
    y = uniform_residues(rng(3), m, shape)
    expected = modular_sum(y, m)
    fast = masked_sum(y, m, rng(4))
    pairwise = masked_sum(y, m, rng(5), pairwise=True)
    assert fast.tolist() == pairwise.tolist() == expected.tolist()
    flat = y.reshape(shape[0], shape[1], -1)
    for k in range(flat.shape[2]):
        assert np.asarray(expected).reshape(shape[0], -1)[:, k].tolist() == python_sum_mod(flat[:, :, k], m)


@pytest.mark.parametrize("pairwise", [False, True])
def test_masked_sum_with_dropouts_is_the_survivors_sum(pairwise: bool) -> None:
    m, R, n = 1009, 6, 40
    y = rng(6).integers(0, m, (R, n))
    dropped = rng(7).random((R, n)) < 0.3
    recovery = rng(8).integers(0, m, (R, n))
    out = masked_sum(y, m, rng(9), dropped=dropped, threshold=20, pairwise=pairwise, recovery=recovery)
    expected = [
        (sum(int(v) for v in y[r][~dropped[r]]) + sum(int(v) for v in recovery[r][~dropped[r]])) % m
        for r in range(R)
    ]
    assert out.tolist() == expected


def test_masks_are_zero_sum_and_uniform() -> None:
    """Both mask constructions sum to 0 mod m, and each user's mask is uniform on Z_m."""
    m, R, n = 5, 20000, 3
    for masks in (
        zero_sum_masks(rng(10), m, (R, n)),
        pairwise_masks(rng(11), m, (R, n)),
    ):
        assert np.all(masks.sum(axis=1) % m == 0)
        for user in range(n):
            counts = np.bincount(masks[:, user], minlength=m)
            assert np.all(np.abs(counts - R / m) < 5 * math.sqrt(R / m))


def test_masked_sum_threshold_and_limits() -> None:
    y = np.zeros((2, 10), dtype=np.int64)
    dropped = np.zeros((2, 10), dtype=bool)
    dropped[1, :6] = True
    with pytest.raises(
        RecoveryError, match="only 4 of 10 users survived, below the secure-aggregation threshold 5"
    ):
        masked_sum(y, 7, rng(0), dropped=dropped, threshold=5)
    with pytest.raises(ParameterError, match="pairwise"):
        masked_sum(np.zeros((1, protocols.PAIRWISE_MAX_USERS + 1), dtype=np.int64), 7, rng(0), pairwise=True)
    with pytest.raises(ParameterError, match="dropped"):
        masked_sum(y, 7, rng(0), dropped=np.zeros(9, dtype=bool))
    with pytest.raises(ParameterTypeError, match="dropped"):
        masked_sum(y, 7, rng(0), dropped=np.zeros(10, dtype=int))
