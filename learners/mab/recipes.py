"""The noise of one batch of the distributed MAB paper's algorithms (Chowdhury & Zhou 2023).

:func:`batch_parameters` and :func:`batch_protocol`: the protocol of a batch of ``n`` users of the
learner's :class:`~accounting.papers.distributed_dp_mab.Variant` (Theorems 1-6; parameters from
:func:`accounting.papers.distributed_dp_mab.protocol_parameters`), memoized. :func:`total_noise`: the fast
path's draw of one aggregate's *total* noise, equal in law to the sum of all users' shares.
:func:`dpse_noise` and :func:`dpse_event`: DP-SE's Laplace noise (Sajed & Sheffet 2019, as the
paper's experiments run it, Chowdhury & Zhou 2023, §7) and the event its release composes.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
from numpy.typing import NDArray

from accounting.accountant import Event
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.noise import DiscreteLaplace, Laplace, Polya
from accounting.papers.distributed_dp_mab import ProtocolParameters, Variant, protocol_parameters
from learners.mab.spec import Learner
from learners.protocols import Protocol

__all__ = ["batch_parameters", "batch_protocol", "dpse_event", "dpse_noise", "total_noise"]

IntArray = NDArray[np.int64]


def _variant(learner: Learner) -> Variant:
    variant = learner.variant
    assert variant is not None
    return variant


@cache
def batch_parameters(learner: Learner, n: int, horizon: int) -> ProtocolParameters:
    """The parameters of a batch of ``n`` users over ``horizon`` rounds (the variant's theorem)."""
    assert learner.epsilon is not None
    return protocol_parameters(
        _variant(learner), learner.epsilon, n, horizon, scaling=learner.scaling, p=learner.p_tau
    )


@cache
def batch_protocol(learner: Learner, n: int, horizon: int) -> Protocol:
    """The protocol that releases the aggregates of a batch of ``n`` users (:func:`batch_parameters`)."""
    return Protocol(batch_parameters(learner, n, horizon), exact=learner.exact)


def dpse_noise(learner: Learner) -> Laplace:
    """DP-SE's noise on a sum of rewards in ``[0, 1]``: ``Laplace(1/ε)`` (Sajed & Sheffet 2019, as
    Chowdhury & Zhou (2023), §7, run it), the scale exact."""
    assert learner.epsilon is not None
    return Laplace(1 / Fraction(learner.epsilon))


def dpse_event(noise: Laplace) -> Event:
    """DP-SE's release: the sum of rewards (sensitivity 1: one user's reward in ``[0, 1]``) plus
    ``noise``, the very law the release drew from (Sajed & Sheffet 2019, as the authors' code runs it; the
    ledger holds what was drawn, never a stand-in)."""
    return Event(AdditiveNoise(noise, 1.0))


def total_noise(learner: Learner, p: ProtocolParameters, rng: np.random.Generator, count: int) -> IntArray:
    """``count`` draws of one aggregate's total noise (equal in law to the sum of all shares)."""
    if learner.variant is Variant.CENTRAL_LAPLACE:
        assert p.server_noise is not None
        return np.asarray(p.server_noise.sample(rng, count), dtype=np.int64)
    assert p.share is not None
    if learner.variant is Variant.LOCAL_LAPLACE:
        # n i.i.d. Lap_Z shares: each a difference of geometrics, so the sum is NB(n) - NB(n).
        assert isinstance(p.share, DiscreteLaplace)
        nb = Polya(p.users, math.exp(-1 / float(p.share.scale)))
        return np.asarray(nb.sample(rng, count) - nb.sample(rng, count), dtype=np.int64)
    # Pólya(1/n, β) differences sum to Lap_Z with decay β (Fact 1), Skellam shares to the Skellam
    # with n times the rates, discrete Gaussian shares to their n-fold sum: DistributedSum's law.
    total = DistributedSum(p.share, p.users, p.g).total_noise
    return np.asarray(total.sample(rng, count), dtype=np.int64)
