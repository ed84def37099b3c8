"""The shuffler: a uniform permutation of the messages, and the shuffle summation protocols.

:func:`shuffle` is the shuffler of the shuffle model of Chowdhury & Zhou (2023, Theorem 3);
:func:`shuffle_sum` runs a whole summation protocol of bits with binomial noise in the shuffle
model (Cheu, Joseph, Mao & Peng 2021), as the federated and phased linear learners use it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting.calibration import ShuffleSumParameters
from learners.errors import ParameterError, ParameterTypeError
from learners.protocols.arithmetic import FloatArray, describe, generator, reals
from learners.protocols.randomizer import encode

__all__ = ["SHUFFLE_MESSAGE_LIMIT", "shuffle", "shuffle_sum"]


#: The most one-bit messages the message-level simulation of :func:`shuffle_sum` materializes.
SHUFFLE_MESSAGE_LIMIT = 2**26


def shuffle(y: ArrayLike, rng: np.random.Generator) -> NDArray[Any]:
    """The shuffler: a uniform permutation of the messages along the user axis 1, per repetition.

    Each repetition (axis 0) gets an independent permutation; a user's message (the trailing axes)
    moves as one unit.

    Parameters
    ----------
    y : array_like
        Messages, shape ``(R, n)`` or ``(R, n, d)``.
    rng : numpy.random.Generator
        Randomness of the permutations.

    Returns
    -------
    numpy.ndarray
        The permuted messages, the shape of ``y``.
    """
    gen = generator("rng", rng)
    a = np.asarray(y)
    if a.ndim < 2:
        raise ParameterError("y", describe(a), "messages of shape (R, n) or (R, n, d)")
    if a.ndim == 2:
        return gen.permuted(a, axis=1)
    order = np.argsort(gen.random(a.shape[:2]), axis=1)
    return np.take_along_axis(a, order.reshape(order.shape + (1,) * (a.ndim - 2)), axis=1)


def shuffle_sum(
    x: ArrayLike, params: ShuffleSumParameters, rng: np.random.Generator, *, messages: bool = False
) -> FloatArray:
    """Run a shuffle summation protocol (bits with binomial noise) and return the estimate of ``Σ x``.

    The protocols of Cheu, Joseph, Mao & Peng (2021, Lemma 3.1) as the linear bandit papers run
    them: Li, Zhou & Ji (2022), Algorithm 2 (vectors, Theorem 4.6) and Algorithm 4 (scalars,
    Lemma C.5); Zhou & Chowdhury (2024), Algorithm 6 (``P_Vec``). Randomizer: every coordinate
    ``x ∈ [-B, B]`` is shifted to ``[0, 2B]`` and encoded by :func:`encode` at ``levels`` (so
    ``x̂ ∈ {0, ..., levels}``, ``E[x̂] = (x + B)·scale``); the user adds ``Bin(b, p)`` and sends that
    many ones among ``levels + b`` bits labelled with the coordinate. Shuffler: a uniform
    permutation of all bits of a coordinate. Analyzer: with ``c`` the ones of a coordinate,
    ``(c - n b p)/scale - n B``.

    ``messages=True`` materializes every bit and permutes it (at most
    :data:`SHUFFLE_MESSAGE_LIMIT` bits); the default counts directly, ``c = Σ x̂ + Bin(b n, p)``,
    which has the same law: the shuffled bits of a coordinate are exchangeable, so their count is
    all they carry, and the users' ``Bin(b, p)`` sum to ``Bin(b n, p)``.

    Parameters
    ----------
    x : array_like of float
        The users' inputs, shape ``(R, n)`` (scalar protocol) or ``(R, n, D)``: coordinates in
        ``[-B, B]``, and for the vector protocols ``‖x_i‖₂ <= B`` (what the privacy theorem needs).
    params : accounting.calibration.ShuffleSumParameters
        From :func:`accounting.calibration.shuffle_sum_parameters`.
    rng : numpy.random.Generator
        Randomness of the rounding, the binomials and the shuffler.
    messages : bool
        Simulate every message (for tests and audits).

    Returns
    -------
    numpy.ndarray of float64
        The estimates of ``Σ_i x_i``: shape ``(R,)`` or ``(R, D)``.
    """
    if not isinstance(params, ShuffleSumParameters):
        raise ParameterTypeError("params", params, "accounting.calibration.ShuffleSumParameters")
    gen = generator("rng", rng)
    xs = reals("x", x, "an array of reals")
    n, d, bound = params.users, params.dimension, params.bound
    vector = xs.ndim == 3
    shape = f"(R, n={n})" if d == 1 else f"(R, n={n}, D={d})"
    if xs.ndim not in (2, 3) or xs.shape[1] != n or (vector and xs.shape[2] != d) or (not vector and d != 1):
        raise ParameterError("x", describe(xs), f"inputs of shape {shape}")
    inside = np.isfinite(xs) & (np.abs(xs) <= bound)
    if not inside.all():
        where = tuple(int(i) for i in np.argwhere(~inside)[0])
        raise ParameterError(
            "x", f"{float(xs[where])!r} at index {where}", f"coordinates in [-{bound:g}, {bound:g}]"
        )
    if params.protocol != "dpdpe-scalar" and vector:
        norms = np.sqrt((xs**2).sum(axis=2))
        outside = norms > bound * (1 + 1e-12)
        if outside.any():
            where = tuple(int(i) for i in np.argwhere(outside)[0])
            raise ParameterError(
                "x", f"a vector of norm {float(norms[where])!r} at {where}", f"||x||_2 <= {bound:g}"
            )
    cube = xs if vector else xs[:, :, None]  # (R, n, D)
    # (x + B)/(2B) in [0, 1]; clipped so rounding cannot leave the interval
    xhat = encode(np.clip((cube + bound) / (2 * bound), 0.0, 1.0), params.levels, gen)
    b, p = params.b, params.p
    if messages:
        repetitions = cube.shape[0]
        width = params.levels + b
        total_bits = repetitions * d * n * width
        if total_bits > SHUFFLE_MESSAGE_LIMIT:
            raise ParameterError(
                "messages",
                f"True with {total_bits} bits",
                f"at most {SHUFFLE_MESSAGE_LIMIT} bits (use messages=False)",
            )
        ones = np.moveaxis(xhat + gen.binomial(b, p, size=xhat.shape), 1, 2)  # (R, D, n)
        bits = (np.arange(width) < ones[..., None]).reshape(repetitions, d, n * width)
        count = gen.permuted(bits, axis=2).sum(axis=2, dtype=np.int64)
    else:
        count = xhat.sum(axis=1, dtype=np.int64) + gen.binomial(b * n, p, size=xhat.shape[::2])
    estimate = (count - n * b * p) / params.scale - n * bound
    return np.asarray(estimate if vector else estimate[:, 0], dtype=np.float64)
