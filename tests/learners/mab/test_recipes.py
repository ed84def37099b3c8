"""The noise of a batch (:mod:`learners.mab.recipes`): the fast path's total noise has the law of the
summed shares."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting.mechanisms import DistributedSum
from accounting.papers.distributed_dp_mab import Variant, protocol_parameters
from learners.mab import (
    make_learner,
)
from learners.mab.recipes import total_noise
from tests.learners.mab.support import protocol_params


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("dist-dp-se", {}), ("dist-rdp-se", {"scaling": 10}), ("dist-cdp-se", {"scaling": 3})],
)
def test_total_noise_has_the_law_of_the_summed_shares(name: str, kwargs: dict[str, float]) -> None:
    """The fast path draws the total; its law is the n-fold convolution of the share (Fact 1)."""
    learner = make_learner(name, 0.5, **kwargs)
    n = 64
    p = protocol_params(learner, n, 10**4)
    assert p.share is not None
    draws = total_noise(learner, p, np.random.default_rng(3), 40_000).astype(np.float64)
    variance = DistributedSum(p.share, n, p.g).total_noise.variance()
    assert abs(draws.mean()) < 5 * math.sqrt(variance / draws.size)
    # the sample variance is within 5 standard errors (kurtosis <= 6 for these laws)
    assert draws.var() == pytest.approx(variance, rel=5 * math.sqrt(8 / draws.size))


def test_local_total_noise_is_n_discrete_laplace_shares() -> None:
    learner = make_learner("ldp-se", 0.5)
    n = 50
    p = protocol_parameters(Variant.LOCAL_LAPLACE, 0.5, n, 10**4)
    assert p.share is not None
    draws = total_noise(learner, p, np.random.default_rng(4), 40_000).astype(np.float64)
    shares = p.share.sample(np.random.default_rng(5), (4_000, n)).sum(axis=1).astype(np.float64)
    assert draws.var() == pytest.approx(n * p.share.variance(), rel=0.05)
    assert shares.var() == pytest.approx(n * p.share.variance(), rel=0.15)
