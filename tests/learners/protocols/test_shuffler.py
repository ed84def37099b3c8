"""Tests of :mod:`learners.protocols.shuffler`: the shuffler's uniform permutation per repetition.

(The shuffle summation protocols, :func:`learners.protocols.shuffle_sum`, are tested in
``tests/learners/test_shuffle_sum.py``.)
"""

from __future__ import annotations

import math

import numpy as np

from learners.protocols import shuffle
from tests.learners.protocols.helpers import rng


def test_shuffle_permutes_each_repetition_independently() -> None:
    R, n = 3000, 3
    y = np.tile(np.arange(n), (R, 1))
    out = shuffle(y, rng(12))
    assert np.array_equal(np.sort(out, axis=1), y)
    codes = out[:, 0] * 9 + out[:, 1] * 3 + out[:, 2]
    _, counts = np.unique(codes, return_counts=True)
    assert counts.size == 6  # all 3! permutations occur, about equally often
    assert np.all(np.abs(counts - R / 6) < 5 * math.sqrt(R / 6))


def test_shuffle_moves_vector_messages_as_units() -> None:
    R, n, d = 5, 30, 4
    y = np.arange(R * n)[:, None].reshape(R, n, 1) * 10 + np.arange(d)
    out = shuffle(y, rng(13))
    assert np.array_equal(out - out[:, :, :1], np.broadcast_to(np.arange(d), (R, n, d)))
    assert not np.array_equal(out, y)
    assert np.array_equal(np.sort(out[:, :, 0], axis=1), y[:, :, 0])
