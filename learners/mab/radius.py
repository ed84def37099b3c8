"""The confidence radius of the distributed MAB paper's elimination, and DP-SE's batch sizes.

``β(b)`` of eq. (2) (Chowdhury & Zhou 2023, §3, Lemma 2): a Hoeffding term for the rewards plus
the bound ``N`` on the noise and rounding error of the sum from the proof of the variant's
theorem (App. D-H); DP-SE's radius and its epoch lengths ``R_e`` as the authors' code computes
them (Sajed & Sheffet 2019).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.papers.distributed_dp_mab import Variant
from learners.mab.recipes import batch_parameters
from learners.mab.spec import Learner

__all__ = ["confidence_radius", "dpse_size", "noise_bound", "radius", "radius_terms"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def noise_bound(learner: Learner, log2: FloatArray, n: int, horizon: int) -> FloatArray:
    """``N``: a ``1 - 2q`` bound on ``|n_a(b)|`` (noise + rounding error of the sum, in reward
    units), with ``log2 = ln(2/q)`` (the noise and rounding terms of the theorems' proofs,
    Chowdhury & Zhou (2023), App. D-H, some constants our reconstruction; ``g`` is the actual
    precision)."""
    eps = learner.epsilon
    variant = learner.variant
    if variant is None or eps is None:
        return np.zeros_like(log2)
    if variant is Variant.SHUFFLED_POLYA:
        eps = eps / 2
    root = np.sqrt(log2)
    if variant in (Variant.POLYA_SHARES, Variant.SHUFFLED_POLYA, Variant.CENTRAL_LAPLACE):
        return np.asarray(math.sqrt(2) / eps * root + log2 / eps, dtype=np.float64)
    if variant is Variant.SKELLAM_SHARES:
        g = batch_parameters(learner, n, horizon).g
        assert learner.scaling is not None
        return np.asarray((2 / eps + math.sqrt(2) / (learner.scaling * eps)) * root + math.sqrt(2) / g * log2)
    if variant is Variant.DISCRETE_GAUSSIAN_SHARES:
        assert learner.scaling is not None
        return np.asarray(math.sqrt(2) * (1 + 1 / learner.scaling) / eps * root, dtype=np.float64)
    # Theorem 6, local discrete Laplace (Lemma 5 with c = 1.6, Chowdhury & Zhou (2023), App. H.2)
    local = 1.6 / eps * np.maximum(np.sqrt(2 * n * log2), 2 * log2)
    return np.asarray(math.sqrt(2) / eps * root + local, dtype=np.float64)


def confidence_radius(learner: Learner, active: ArrayLike, batch: int, size: int, horizon: int) -> FloatArray:
    """``β(b)`` of eq. (2) (Chowdhury & Zhou (2023), §3, Lemma 2) with forgetting, for ``active`` arms
    ``|Φ(b)|`` (an array).

    ``radius_scale·( sqrt(ln(4|Φ|b²/p)/(2l)) + N(p/(|Φ|b²))/l )`` with ``N`` from the variant's theorem; for
    ``dp-se`` DP-SE's radius as the authors' code computes it (with ``R_e = size``). ``size`` is the number
    of users whose rewards the estimate holds (``l(b)``, or the survivors of a batch with dropouts).
    """
    k = np.asarray(active, dtype=np.float64)
    pulls = v.integer("size", size, minimum=1)
    b = v.integer("batch", batch, minimum=1)
    hoeffding, noise = radius_terms(learner, k, b, pulls, v.integer("horizon", horizon, minimum=2))
    return radius(learner.radius_scale, hoeffding, noise, np.float64(pulls))


def radius(radius_scale: float, hoeffding: FloatArray, noise: FloatArray, pulls: Any) -> FloatArray:
    """``radius_scale·( sqrt(L/(2 l)) + N/l )`` for ``l`` pulls with Hoeffding log term ``L`` and
    noise bound ``N``."""
    return np.asarray(radius_scale * (np.sqrt(hoeffding / (2 * pulls)) + noise / pulls), dtype=np.float64)


def radius_terms(
    learner: Learner, k: FloatArray, b: int, size: int, horizon: int
) -> tuple[FloatArray, FloatArray]:
    """``(L, N)``: the log term of Hoeffding and the noise bound of batch ``b`` of ``size`` pulls."""
    p = learner.p_beta
    if learner.name == "dp-se":
        assert learner.epsilon is not None
        return np.log(8 * k * b * b / p), np.log(4 * k * b * b / p) / learner.epsilon
    return np.log(4 * k * b * b / p), noise_bound(learner, np.log(2 * k * b * b / p), size, horizon)


def dpse_size(learner: Learner, k: FloatArray, e: int) -> IntArray:
    """``R_e`` of DP-SE (Sajed & Sheffet 2019, in the authors' code's form): pulls per arm in epoch ``e``,
    ``Δ_e = dc^{-e}``."""
    assert learner.epsilon is not None
    p = learner.p_beta
    gap = float(learner.eta) ** -e
    hoeffding = 32 * np.log(8 * k * e * e / p) / gap**2
    privacy = 8 * np.log(4 * k * e * e / p) / (gap * learner.epsilon)
    # A tiny ε or p_beta makes R_e overflow int64 (even inf): no run has 2^62 rounds, so cap it there.
    return (1 + np.minimum(np.maximum(hoeffding, privacy), 2.0**62).astype(np.int64)).astype(np.int64)
