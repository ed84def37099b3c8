"""What the tests of :mod:`learners.protocols` share: protocol parameters, seeded generators, the
Python-integer reference sum and injected samplers."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import settings
from numpy.typing import NDArray

from accounting.noise import Polya
from accounting.papers.distributed_dp_mab import ProtocolParameters, Variant, protocol_parameters
from learners import protocols

FAST = settings(max_examples=40, deadline=None)

SETTINGS: dict[Variant, dict[str, Any]] = {
    Variant.POLYA_SHARES: {"epsilon": 1.0},
    Variant.SKELLAM_SHARES: {"epsilon": 1.0, "scaling": 2.0},
    Variant.SHUFFLED_POLYA: {"epsilon": 1.0},
    Variant.DISCRETE_GAUSSIAN_SHARES: {"epsilon": 0.5, "scaling": 2.0},
    Variant.CENTRAL_LAPLACE: {"epsilon": 0.5},
    Variant.LOCAL_LAPLACE: {"epsilon": 0.5},
}


def params(variant: Variant, users: int = 64, horizon: int = 10**4) -> ProtocolParameters:
    return protocol_parameters(variant, users=users, horizon=horizon, **SETTINGS[variant])


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def python_sum_mod(rows: NDArray[Any], m: int) -> list[int]:
    """The reference: Python-integer sums mod m, row by row."""
    return [sum(int(v) for v in row) % m for row in rows]


def constant_sampler(value: int) -> protocols.ShareSampler:
    """Every share equals ``value``: the total noise then counts the shares drawn."""
    return lambda _rng, shape: np.full(shape, value, dtype=np.int64)


def big_params(n: int = 8, g: int = 4) -> ProtocolParameters:
    """Theorem-1 parameters with a modulus >= 2**62 (decoding allows m >= n g + 2 tau + 1)."""
    tau = 2**61
    m = n * g + 2 * tau + 1
    share = Polya(Fraction(1, n), math.exp(-1 / g))
    bits = (m - 1).bit_length()
    return ProtocolParameters(Variant.POLYA_SHARES, 1.0, n, 100, None, g, tau, m, bits, share, None, "test")
