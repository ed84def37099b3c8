"""The confidence radius ``β(b)`` of eq. (2) (Chowdhury & Zhou 2023, §3, Lemma 2) and DP-SE's batch sizes
(:mod:`learners.mab.radius`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from learners.mab import (
    confidence_radius,
    make_learner,
)
from learners.mab.radius import dpse_size
from tests.learners.mab.support import PRIVATE, protocol_params

# -- formulas ----------------------------------------------------------------------------------


def test_dpse_epoch_length_matches_the_authors_code() -> None:
    # DP-SE's R_e as the authors' code computes it (Chowdhury & Zhou 2023, §7): K = 10, ε = 0.1, δ =
    # 0.1, epoch 1: R_1 = 1 + int(max(855.6, 958.6)) = 959.
    learner = make_learner("dp-se", 0.1)
    assert dpse_size(learner, np.array([10.0]), 1).tolist() == [959]


@pytest.mark.parametrize(("name", "kwargs"), [p for p in PRIVATE if p[0] != "dp-se"])
def test_confidence_radius_is_equation_2(name: str, kwargs: dict[str, float]) -> None:
    """β(b) of eq. (2) with the (σ, h) of each theorem (Chowdhury & Zhou 2023, App. D-H),
    recomputed by hand."""
    eps, n, b, k, p, T = 0.5, 4**5, 5, 7, 0.1, 10**6
    learner = make_learner(name, eps, **kwargs)
    l4, l2 = math.log(4 * k * b * b / p), math.log(2 * k * b * b / p)
    g = protocol_params(learner, n, T).g
    e = eps / 2 if name == "shuffle-dp-se" else eps
    noise = {
        "dist-dp-se": math.sqrt(2) / e * math.sqrt(l2) + l2 / e,
        "shuffle-dp-se": math.sqrt(2) / e * math.sqrt(l2) + l2 / e,
        "cdp-se": math.sqrt(2) / e * math.sqrt(l2) + l2 / e,
        "dist-rdp-se": (2 / e + math.sqrt(2) / (10 * e)) * math.sqrt(l2) + math.sqrt(2) / g * l2,
        "dist-cdp-se": math.sqrt(2) * (1 + 1 / 10) / e * math.sqrt(l2),
        "ldp-se": math.sqrt(2) / e * math.sqrt(l2) + 1.6 / e * max(math.sqrt(2 * n * l2), 2 * l2),
    }[name]
    expected = math.sqrt(l4 / (2 * n)) + noise / n
    assert confidence_radius(learner, [k], b, n, T)[0] == pytest.approx(expected, rel=1e-12)


def test_non_private_radius_is_hoeffding() -> None:
    learner = make_learner("se", radius_scale=2.0)
    got = confidence_radius(learner, [3], 2, 16, 1000)[0]
    assert got == pytest.approx(2 * math.sqrt(math.log(4 * 3 * 4 / 0.1) / 32))
