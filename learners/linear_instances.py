"""Linear contextual bandit instances of the federated LinUCB paper: :mod:`learners.linear.instances`.

Kept so that ``learners.linear_instances`` still names them; the module is
:mod:`learners.linear.instances`.
"""

from __future__ import annotations

from learners.linear.instances import (
    CHUNK,
    LinearInstance,
    NoiseTape,
    QueryInstance,
    SyntheticInstance,
    draw_synthetic,
    keyed_stream,
)
from learners.linear.instances import MAX_BLOCK as MAX_BLOCK
from learners.linear.instances import FloatArray as FloatArray
from learners.linear.instances import IntArray as IntArray

__all__ = [
    "CHUNK",
    "LinearInstance",
    "NoiseTape",
    "QueryInstance",
    "SyntheticInstance",
    "draw_synthetic",
    "keyed_stream",
]
