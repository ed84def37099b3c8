"""Samplers of the users' noise: the Pólya share, the released code's bug, and the users' sums.

The Pólya sampler is the Gamma–Poisson mixture of Chowdhury & Zhou 2023, footnote 3 (Section 4,
after Goryczka & Xiong 2015); the users' sum of Pólya differences is a discrete Laplace by their
Fact 1 (Goryczka & Xiong 2015, Theorem 5.1). The paper's released code (``MABPrivate.py``, the
repository its footnote 5 cites) draws the Gamma with scale ``(1-β)/β`` instead of ``β/(1-β)``:
:func:`buggy_polya_sample` keeps that bug so that the tests can be shown to catch it.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.noise import LatticeNoise, Polya
from verification.goodness_of_fit.pooling import lattice

__all__ = [
    "Sampler",
    "SomeUsers",
    "buggy_polya_sample",
    "exact_share_sum_sampler",
    "polya_difference_sampler",
    "polya_sample",
    "summed_over_users",
]

#: A sampler: ``sampler(rng, size)`` returns ``size`` integer draws as a 1-d array.
Sampler = Callable[[np.random.Generator, int], NDArray[np.integer]]


def _polya_params(r: object, beta: object) -> tuple[float, float]:
    shape = v.positive("r", r)
    b = v.open_unit("beta", beta)
    return shape, b


def polya_sample(r: float | Fraction, beta: float | Fraction) -> Sampler:
    """The Gamma–Poisson sampler of ``Polya(r, β)``: ``λ ~ Gamma(r, scale = β/(1-β))``, ``X ~ Poisson(λ)``.

    Chowdhury & Zhou 2023, footnote 3 (Section 4, via Goryczka & Xiong 2015); the same draw as
    :meth:`accounting.noise.Polya.sample`.

    Parameters
    ----------
    r : float or Fraction
        Shape ``r > 0``.
    beta : float or Fraction
        ``β`` in (0, 1).

    Returns
    -------
    Sampler
    """
    shape, b = _polya_params(r, beta)

    def draw(rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        return rng.poisson(rng.gamma(shape=shape, scale=b / (1 - b), size=size)).astype(np.int64)

    return draw


def buggy_polya_sample(r: float | Fraction, beta: float | Fraction) -> Sampler:
    """The Pólya sampler of the paper's released code: Gamma scale ``(1-β)/β`` (a bug).

    ``MABPrivate.py`` (the released code of Chowdhury & Zhou 2023) draws
    ``λ ~ Gamma(r, scale = (1-p)/p)`` with ``p = β``, which samples ``Polya(r, 1-β)`` instead of
    the ``Polya(r, β)`` of the paper's footnote 3. With ``n = 64``, ``ε = 0.5``,
    ``g = 4`` the users' total noise has variance 0.30 instead of 127.8. Kept here so that
    the goodness-of-fit tests can be shown to catch it.

    Parameters
    ----------
    r : float or Fraction
        Shape ``r > 0``.
    beta : float or Fraction
        The ``β`` the caller asked for, in (0, 1).

    Returns
    -------
    Sampler
    """
    shape, b = _polya_params(r, beta)

    def draw(rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        return rng.poisson(rng.gamma(shape=shape, scale=(1 - b) / b, size=size)).astype(np.int64)

    return draw


def polya_difference_sampler(
    users: int,
    beta: float | Fraction,
    share: Callable[[float | Fraction, float | Fraction], Sampler] = polya_sample,
) -> Sampler:
    """The total noise of ``users`` users, each adding ``γ⁺ - γ⁻`` with ``γ^± ~ Polya(1/n, β)``.

    Chowdhury & Zhou 2023, Fact 1 (Goryczka & Xiong 2015, Theorem 5.1): the sum is ``Lap_Z`` with
    ``e^{-1/b} = β``, i.e. ``DiscreteLaplace(beta=β)``. ``share(r, β)`` makes the per-draw
    sampler (:func:`polya_sample`, or :func:`buggy_polya_sample` to reproduce the released code).
    Users are drawn in blocks, so memory stays ``O(size)`` for any number of users.

    Parameters
    ----------
    users : int
        The number of users ``n >= 1``.
    beta : float or Fraction
        ``β`` in (0, 1).
    share : callable
        ``share(r, β)`` returning a :data:`Sampler` of ``Polya(r, β)``.

    Returns
    -------
    Sampler
    """
    n = v.integer("users", users, minimum=1)
    v.open_unit("beta", beta)
    one = share(Fraction(1, n), beta)

    def some_users(rng: np.random.Generator, k: int, size: int) -> NDArray[np.int64]:
        plus = one(rng, k * size).reshape(k, size)
        minus = one(rng, k * size).reshape(k, size)
        return np.asarray((plus - minus).sum(axis=0), dtype=np.int64)

    return summed_over_users(n, some_users)


#: ``some_users(rng, k, size)``: the sum of ``k`` users' noise, ``size`` draws of it.
SomeUsers = Callable[[np.random.Generator, int, int], NDArray[np.int64]]


def summed_over_users(n: int, some_users: SomeUsers) -> Sampler:
    """A sampler of the sum over ``n`` users, drawn ``k`` at a time (``some_users(rng, k, size)``).

    Memory stays about ``2^22`` draws whatever ``n`` is.
    """

    def draw(rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        total = np.zeros(size, dtype=np.int64)
        block = max(1, 2**22 // max(size, 1))
        done = 0
        while done < n:
            k = min(block, n - done)
            total += some_users(rng, k, size)
            done += k
        return total

    return draw


def exact_share_sum_sampler(share: LatticeNoise, users: int) -> Sampler:
    """The users' total noise with every share drawn by its exact sampler (``sample_exact``).

    Pólya shares are added as differences ``γ⁺ - γ⁻`` (Fact 1), every other share as it is, so the
    draw has the distribution of :attr:`accounting.mechanisms.DistributedSum.total_noise`. Users are
    drawn in blocks so memory stays bounded.

    Parameters
    ----------
    share : LatticeNoise
        One user's share.
    users : int
        The number of users ``n >= 1``.

    Returns
    -------
    Sampler
    """
    dist = lattice(share)
    n = v.integer("users", users, minimum=1)
    signed = isinstance(dist, Polya)

    def some_users(rng: np.random.Generator, k: int, size: int) -> NDArray[np.int64]:
        part = dist.sample_exact(rng, (size, k)).sum(axis=1)
        if signed:
            part = part - dist.sample_exact(rng, (size, k)).sum(axis=1)
        return np.asarray(part, dtype=np.int64)

    return summed_over_users(n, some_users)


def _exact_polya_share(r: float | Fraction, beta: float | Fraction) -> Sampler:
    """The exact Pólya sampler (:meth:`accounting.noise.Polya.sample_exact`) as a share sampler."""
    return Polya(r, beta).sample_exact
