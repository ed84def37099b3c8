"""Instances of the LDP bandits paper's learners: :mod:`learners.ldp.instances`.

Kept so that ``learners.ldp_instances`` still names them; the module is
:mod:`learners.ldp.instances`.
"""

from __future__ import annotations

from learners.ldp.instances import (
    LINKS,
    MOVIELENS_ITEMS,
    MOVIELENS_USERS,
    BernoulliArms,
    ContextualInstance,
    Losses,
    QuadraticLoss,
    apply_link,
    convex_quadratic,
    glm_bandit,
    link_constants,
    load_ratings,
    movielens_instance,
    project_ball,
    standin_ratings,
    strongly_convex_quadratic,
    synthetic_linear,
    unit_sphere,
)
from learners.ldp.instances import FloatArray as FloatArray
from learners.ldp.instances import IntArray as IntArray

__all__ = [
    "LINKS",
    "MOVIELENS_ITEMS",
    "MOVIELENS_USERS",
    "BernoulliArms",
    "ContextualInstance",
    "Losses",
    "QuadraticLoss",
    "apply_link",
    "convex_quadratic",
    "glm_bandit",
    "link_constants",
    "load_ratings",
    "movielens_instance",
    "project_ball",
    "standin_ratings",
    "strongly_convex_quadratic",
    "synthetic_linear",
    "unit_sphere",
]
