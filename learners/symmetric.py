"""Symmetric matrices kept as their packed upper triangle (the diagonal included).

The federated LinUCB engine (:mod:`learners.linear`) keeps its covariance statistics packed, and
the LDP users (:mod:`learners.ldp`) release the upper triangle of ``x xᵀ + B_t`` (Zheng et al.
2020, Algorithms 3 and 5): both restore the matrices by :func:`mirror`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["mirror"]


def mirror(packed: NDArray[np.float64], dim: int) -> NDArray[np.float64]:
    """The symmetric matrices ``(..., d, d)`` whose upper triangles, in :func:`numpy.triu_indices`
    order, are ``packed`` ``(..., d(d+1)/2)``."""
    iu, ju = np.triu_indices(dim)
    out = np.empty((*packed.shape[:-1], dim, dim))
    out[..., iu, ju] = packed
    out[..., ju, iu] = packed
    return out
