"""The secure aggregator ``S``: the modular sum, and additive-mask aggregation with dropouts.

The ideal secure aggregation of Chowdhury & Zhou (2023, §3) reveals only ``(Σ y_i) mod m``
(:func:`modular_sum`); :func:`masked_sum` simulates the additive-mask protocol of Bonawitz et al.
(2017), zero-sum or explicit pairwise masks, with users who drop out and the recovery of their masks.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from learners.errors import ParameterError, ParameterTypeError, RecoveryError
from learners.protocols.arithmetic import (
    IntArray,
    add_mod,
    describe,
    generator,
    ring,
    sub_mod,
    uniform_residues,
)

__all__ = [
    "PAIRWISE_MAX_USERS",
    "SECURE_AGGREGATIONS",
    "alive_mask",
    "expand_mask",
    "masked_sum",
    "modular_sum",
    "pairwise_masks",
    "zero_sum_masks",
]


#: The largest batch the explicit pairwise-mask simulation accepts (it draws ``n(n-1)/2`` masks).
PAIRWISE_MAX_USERS = 2000

#: Secure aggregation: the ideal modular sum, zero-sum masks, or explicit pairwise masks.
SECURE_AGGREGATIONS = ("modular", "masked", "pairwise")

_INT64_MAX = 2**63 - 1
_PAIRWISE_BLOCK = 2**22  # masks drawn at once by the pairwise simulation


def alive_mask(dropped: ArrayLike | None, repetitions: int, users: int) -> NDArray[np.bool_]:
    """The users whose messages arrive, shape ``(R, n)``, from a dropout mask ``(n,)`` or ``(R, n)``."""
    if dropped is None:
        return np.ones((repetitions, users), dtype=bool)
    d = np.asarray(dropped)
    if d.dtype != np.bool_:
        raise ParameterTypeError(
            "dropped", describe(d), "a boolean mask (True = the user's message never arrives)"
        )
    if d.shape not in ((users,), (repetitions, users)):
        raise ParameterError(
            "dropped", describe(d), f"a boolean mask of shape ({users},) or ({repetitions}, {users})"
        )
    return np.broadcast_to(~d, (repetitions, users))


def expand_mask(mask: NDArray[np.bool_], ndim: int) -> NDArray[np.bool_]:
    """A ``(R, n)`` mask broadcastable against an ``(R, n, ...)`` array."""
    return mask.reshape(mask.shape + (1,) * (ndim - 2))


def modular_sum(y: ArrayLike, m: int, axis: int = 1) -> IntArray:
    """``(Σ y) mod m`` along ``axis``, exactly: the ideal secure aggregation (Chowdhury & Zhou 2023, ``S``).

    The sum is taken in chunks of ``c = floor((2**63 - 1)/(m - 1))`` residues, so no partial sum
    can overflow int64 (``c (m-1) < 2**63``), reducing mod ``m`` after each chunk; the chunk sums
    are summed the same way, so a small ``c`` costs ``log_c n`` vectorized passes, not a loop over
    users. For ``m >= 2**62`` the sum is over Python integers. Never a float sum.

    Parameters
    ----------
    y : array_like of int
        Integers (reduced mod ``m`` first, so any representatives will do).
    m : int
        The modulus, ``>= 1``.
    axis : int
        The user axis (``1`` for the ``(R, n, ...)`` arrays of a protocol).

    Returns
    -------
    numpy.ndarray
        The residues in ``[0, m-1]``, with ``axis`` removed.
    """
    mod = v.integer("m", m, minimum=1)
    a = ring(y, mod)
    if a.ndim == 0:
        raise ParameterError("y", describe(a), "an array with at least one axis")
    if not -a.ndim <= axis < a.ndim:
        raise ParameterError("axis", axis, f"an axis of an array with {a.ndim} dimensions")
    if a.dtype == object:
        return np.asarray(np.mod(np.sum(a, axis=axis), mod), dtype=object)
    a = np.moveaxis(a, axis, -1)
    chunk = _INT64_MAX // (mod - 1) if mod > 1 else max(a.shape[-1], 1)
    while a.shape[-1] > chunk:
        groups = -(-a.shape[-1] // chunk)
        pad = groups * chunk - a.shape[-1]
        if pad:
            a = np.concatenate([a, np.zeros((*a.shape[:-1], pad), dtype=np.int64)], axis=-1)
        a = np.mod(a.reshape(*a.shape[:-1], groups, chunk).sum(axis=-1), mod)
    return np.asarray(np.mod(a.sum(axis=-1), mod), dtype=np.int64)


def zero_sum_masks(rng: np.random.Generator, m: int, shape: tuple[int, ...]) -> IntArray:
    """Masks uniform on ``{r in Z_m^n : Σ r = 0}``: ``n - 1`` uniform, the last closing the sum.

    These have the joint law of the pairwise masks' per-user totals (below) whenever ``n >= 2``:
    both are uniform on the zero-sum subgroup, which is all the server can observe.
    """
    repetitions, users = shape[:2]
    if users == 0:
        return ring(np.zeros(shape, dtype=np.int64), m)
    free = uniform_residues(rng, m, (repetitions, users - 1, *shape[2:]))
    last = np.mod(-modular_sum(free, m, axis=1), m)
    return np.concatenate([free, last[:, None]], axis=1)


def pairwise_masks(rng: np.random.Generator, m: int, shape: tuple[int, ...]) -> IntArray:
    """Bonawitz et al. 2017: user ``i`` adds ``Σ_{j>i} r_ij - Σ_{j<i} r_ji`` with ``r_ij ~ U(Z_m)``."""
    repetitions, users = shape[:2]
    rest = shape[2:]
    masks = ring(np.zeros(shape, dtype=np.int64), m)
    width = max(1, repetitions * users * math.prod(rest))
    block = max(1, _PAIRWISE_BLOCK // width)
    for start in range(0, users, block):  # fixed-size blocks of rows of the mask matrix
        stop = min(users, start + block)
        r = uniform_residues(rng, m, (repetitions, stop - start, users, *rest))  # r[:, i - start, j] = r_ij
        upper = np.arange(users)[None, :] > np.arange(start, stop)[:, None]  # only pairs i < j
        r = np.where(upper.reshape((1, *upper.shape) + (1,) * len(rest)), r, 0)
        masks[:, start:stop] = add_mod(masks[:, start:stop], modular_sum(r, m, axis=2), m)
        masks = sub_mod(masks, modular_sum(r, m, axis=1), m)
    return masks


def masked_sum(
    y: ArrayLike,
    m: int,
    rng: np.random.Generator,
    *,
    dropped: ArrayLike | None = None,
    threshold: int = 1,
    pairwise: bool = False,
    recovery: ArrayLike | None = None,
) -> IntArray:
    """Simulated additive-mask secure aggregation (Bonawitz et al. 2017) over users (axis 1).

    Each user sends ``y_i + s_i mod m`` where the masks ``s`` sum to ``0 mod m``; the server adds
    the messages that arrive. With ``pairwise=True`` the masks are the explicit pairwise ones
    (``s_i = Σ_{j>i} r_ij - Σ_{j<i} r_ji``, ``r_ij`` uniform in ``Z_m``; at most
    :data:`PAIRWISE_MAX_USERS` users); otherwise a uniform zero-sum vector (``n - 1`` uniform
    masks and a last one closing the sum), which has the same law on the zero-sum subgroup — all
    the server sees — and costs ``O(n)``.

    Dropped users' messages never arrive; the server recovers their masks (in the real protocol
    by reconstructing their seeds from the Shamir shares of at least ``threshold`` survivors) and
    adds them, which cancels the survivors' masks: the result is exactly
    ``(Σ_{survivors} y_i) mod m``. ``recovery`` is what survivors contribute in the recovery
    round (the noise top-up of :class:`Protocol`); it is added for survivors only. A deployment
    must deliver the recovery information only together with the top-up, so the server never
    holds the under-noised survivors' sum on its own; the simulation returns only the total.

    Parameters
    ----------
    y : array_like of int
        Messages, shape ``(R, n)`` or ``(R, n, d)``.
    m : int
        The modulus.
    rng : numpy.random.Generator
        Randomness of the masks.
    dropped : array_like of bool or None
        Which users' messages never arrive, shape ``(n,)`` or ``(R, n)``.
    threshold : int
        The least number of survivors that can recover the dropped users' masks.
    pairwise : bool
        Use the explicit pairwise masks.
    recovery : array_like of int or None
        The survivors' recovery-round contributions, the shape of ``y``.

    Returns
    -------
    numpy.ndarray
        ``(Σ_{survivors} (y_i + recovery_i)) mod m``, shape ``(R,)`` or ``(R, d)``.

    Raises
    ------
    RecoveryError
        If fewer than ``threshold`` users survive in some repetition.
    """
    mod = v.integer("m", m, minimum=1)
    gen = generator("rng", rng)
    a = ring(y, mod)
    if a.ndim < 2:
        raise ParameterError("y", describe(a), "messages of shape (R, n) or (R, n, d)")
    repetitions, users = a.shape[:2]
    need = v.integer("threshold", threshold, minimum=1)
    alive = alive_mask(dropped, repetitions, users)
    survivors = alive.sum(axis=1)
    if survivors.size and int(survivors.min()) < need:
        raise RecoveryError(int(survivors.min()), need, users)
    if pairwise:
        if users > PAIRWISE_MAX_USERS:
            raise ParameterError("pairwise", f"True with n={users} users", f"n <= {PAIRWISE_MAX_USERS}")
        masks = pairwise_masks(gen, mod, a.shape)
    else:
        masks = zero_sum_masks(gen, mod, a.shape)
    arrives = expand_mask(alive, a.ndim)
    received = modular_sum(np.where(arrives, add_mod(a, masks, mod), 0), mod)
    recovered = modular_sum(np.where(arrives, 0, masks), mod)  # the dropped users' masks
    total = add_mod(received, recovered, mod)
    if recovery is not None:
        extra = ring(recovery, mod, "recovery")
        if extra.shape != a.shape:
            raise ParameterError("recovery", describe(extra), f"contributions of shape {a.shape}")
        total = add_mod(total, modular_sum(np.where(arrives, extra, 0), mod), mod)
    return total
