"""The population model of DP-DPE and its synthetic instance: :mod:`learners.phased.instances`.

Kept so that ``learners.phased_instances`` still names them; the module is
:mod:`learners.phased.instances`.
"""

from __future__ import annotations

from learners.phased.instances import (
    PAPER_ARMS,
    PAPER_CLIENT_SD,
    PAPER_DIM,
    PAPER_HORIZON,
    PAPER_POPULATION,
    PhasedInstance,
    draw_instance,
)
from learners.phased.instances import FloatArray as FloatArray

__all__ = [
    "PAPER_ARMS",
    "PAPER_CLIENT_SD",
    "PAPER_DIM",
    "PAPER_HORIZON",
    "PAPER_POPULATION",
    "PhasedInstance",
    "draw_instance",
]
