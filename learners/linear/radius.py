"""LinUCB's regularizer ``λ`` and confidence radius ``β_t`` in the federated LinUCB paper.

Zhou & Chowdhury (2024): :func:`regularizer_of` is the authors' code's ``λ`` (the paper's Lemma C.4
states it only up to ``Θ(·)``), :func:`radius` the code's ``β_t`` or Lemma C.4's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from accounting import validate as v
from learners.linear.noise import Noise
from learners.linear.spec import Learner

__all__ = ["radius", "regularizer_of"]


def regularizer_of(learner: Learner, noise: Noise, agents: int, dim: int) -> float:
    """``λ``: the learner's own, or the code's ``√M`` / ``√(Mκ) σ0 (√(κ + log(1/α)) + √d)``."""
    if learner.regularizer is not None:
        return learner.regularizer
    m = v.integer("agents", agents, minimum=1)
    d = v.integer("dim", dim, minimum=1)
    if noise.sigma0 <= 0:
        return math.sqrt(m)
    k = noise.kappa
    sigma = noise.sigma0
    if noise.vector is not None and learner.sigma_mode == "code" and learner.delta is not None:
        # the code's "noise level" of the vector-sum variant (Theorem 5.5's σ̂), used only for λ
        assert learner.epsilon is not None
        delta = learner.delta
        sigma = math.sqrt(k * math.log(1 / delta)) * math.log(k * d * d / delta) / learner.epsilon
    return (
        math.sqrt(noise.copies(m) * k) * sigma * (math.sqrt(k + math.log(1 / learner.alpha)) + math.sqrt(d))
    )


def radius(
    learner: Learner, noise: Noise, lam: float, agents: int, dim: int, scale: float
) -> Callable[[int], float]:
    """``t -> β_t``: the code's ``radius_scale (√λ S + R √(d log(1 + t M/(dλ)) + log(1/α)))`` with ``S = √d``
    and ``R = scale``, or (``radius="theory"``) Lemma C.4's
    ``√(2 log(2/α) + d log(1 + Mt/(dλ_min))) + √λ_max + ν``, ``λ_min = λ/2``, ``λ_max = 3λ/2``."""
    a, m, d = learner.alpha, agents, dim
    if learner.radius == "code":
        s = math.sqrt(d)

        def code(t: int) -> float:
            return learner.radius_scale * (
                math.sqrt(lam) * s + scale * math.sqrt(d * math.log1p(t * m / (d * lam)) + math.log(1 / a))
            )

        return code
    if noise.sigma0 > 0:
        lo, hi = lam / 2, 3 * lam / 2
        total = math.sqrt(noise.copies(m) * noise.kappa) * noise.sigma0
        nu = total * (math.sqrt(d) + math.sqrt(2 * math.log(4 * noise.syncs / a))) / math.sqrt(lo)
    else:
        lo = hi = lam
        nu = 0.0

    def theory(t: int) -> float:
        return learner.radius_scale * (
            math.sqrt(2 * math.log(2 / a) + d * math.log1p(m * t / (d * lo))) + math.sqrt(hi) + nu
        )

    return theory
