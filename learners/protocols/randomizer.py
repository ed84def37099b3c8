"""The randomizer ``R``: fixed-point encoding with randomized rounding, and noise shares.

The local randomizer of Chowdhury & Zhou (2023, §3): each user encodes ``x`` in ``[0, 1]`` at
precision ``g`` with unbiased randomized rounding (:func:`encode`), adds a noise share
(:func:`draw_shares`, the laws of Theorems 1-6) and reduces mod ``m`` (:func:`randomize`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.noise import LatticeNoise, NoiseDistribution, Polya, Randomness, check_randomness
from learners.errors import ParameterError, ParameterTypeError
from learners.protocols.arithmetic import IntArray, add_mod, describe, generator, reals, ring

__all__ = ["ShareSampler", "draw_shares", "encode", "randomize", "sampled_shares"]


#: A custom noise sampler ``(rng, shape) -> shares``: each entry one user's whole share.
ShareSampler = Callable[[np.random.Generator, tuple[int, ...]], NDArray[np.int64]]


def encode(x: ArrayLike, g: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Fixed-point encoding at precision ``g`` with unbiased randomized rounding (Chowdhury & Zhou 2023,
    ``R``).

    ``xhat = floor(x g) + Bernoulli(x g - floor(x g))``, elementwise, so ``xhat`` is
    ``floor(x g)`` or ``floor(x g) + 1``, ``E[xhat] = x g``, and ``x = 1`` gives ``g``. Changing
    one ``x`` in ``[0, 1]`` moves a sum of encodings by at most ``g``: the sensitivity every
    protocol event carries. Rounding happens before any privacy noise, so the float
    arithmetic here affects utility only.

    Parameters
    ----------
    x : array_like of float
        Values in ``[0, 1]``, any shape.
    g : int
        The precision, ``1 <= g <= 2**53``.
    rng : numpy.random.Generator
        Randomness of the rounding.

    Returns
    -------
    numpy.ndarray of int64
        ``xhat``, the shape of ``x``, values in ``{0, ..., g}``.
    """
    precision = v.integer("g", g, minimum=1)
    if precision > 2**53:
        raise ParameterError("g", g, "an integer in [1, 2**53] (x*g must be exact enough to round)")
    gen = generator("rng", rng)
    a = reals("x", x, "an array of reals in [0, 1]")
    bad = ~((a >= 0) & (a <= 1))  # NaN fails both comparisons
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ParameterError(
            "x", f"{float(a[where])!r} at index {where}", "values in [0, 1] (finite, no NaN)"
        )
    scaled = a * precision
    low = np.floor(scaled)
    return low.astype(np.int64) + (gen.random(a.shape) < scaled - low)


def draw_shares(
    noise: NoiseDistribution, rng: Randomness, shape: tuple[int, ...], *, exact: bool = True
) -> IntArray:
    """Independent noise shares, one per entry of ``shape`` (the law of Theorems 1-6).

    A Pólya share (Theorems 1 and 3) is the difference ``γ⁺ - γ⁻`` of two independent
    ``Polya(1/n, β)`` draws, which is what :class:`~accounting.mechanisms.DistributedSum` accounts
    (``n`` of them sum to ``Lap_Z``); any other distribution is a single draw.

    Parameters
    ----------
    noise : accounting.noise.LatticeNoise
        The share (or, in the central model, the server's noise).
    rng : numpy.random.Generator or accounting.noise.SystemRandomness
        Randomness of the noise; ``SystemRandomness`` only with ``exact=True``.
    shape : tuple of int
        The shape of the result.
    exact : bool
        Draw with ``noise.sample_exact`` (integer and rational arithmetic only; Canonne, Kamath & Steinke
        2020);
        otherwise with the fast floating-point ``noise.sample``.

    Returns
    -------
    numpy.ndarray
        Integer shares (int64, or object if the sampler needed Python integers).
    """
    if not isinstance(noise, LatticeNoise):
        raise ParameterTypeError("noise", noise, "a lattice distribution from accounting.noise")
    source = check_randomness(rng, "rng")
    dims = tuple(v.integer("shape", s, minimum=0) for s in shape)
    sides = (2, *dims) if isinstance(noise, Polya) else dims
    if exact:
        draws = np.asarray(noise.sample_exact(source, sides))
    elif isinstance(source, np.random.Generator):
        draws = np.asarray(noise.sample(source, sides))
    else:
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator (the fast sampler, exact=False)")
    if isinstance(noise, Polya):
        return np.asarray(draws[0] - draws[1])
    return draws


def randomize(
    x: ArrayLike,
    g: int,
    m: int,
    rng: np.random.Generator,
    share: NoiseDistribution | None = None,
    *,
    exact: bool = True,
    share_sampler: ShareSampler | None = None,
    noise_rng: Randomness | None = None,
) -> IntArray:
    """The local randomizer ``R`` (Chowdhury & Zhou 2023, §3; App. H's Algorithm 2 without noise, Algorithm
    4 with full noise).

    ``y = (xhat + η) mod m`` with ``xhat`` from :func:`encode` and ``η`` a fresh share per entry
    (none when ``share`` and ``share_sampler`` are both ``None``, as in the central model).

    Parameters
    ----------
    x : array_like of float
        Values in ``[0, 1]``; noise is drawn elementwise.
    g, m : int
        Precision and modulus.
    rng : numpy.random.Generator
        Randomness of the rounding (and of the noise unless ``noise_rng`` is given).
    share : accounting.noise.LatticeNoise or None
        The per-user noise share.
    exact : bool
        Exact integer sampling (see :func:`draw_shares`).
    share_sampler : callable or None
        Replaces the sampler: ``share_sampler(rng, shape)`` returns whole shares (tests inject
        broken samplers, e.g. the Pólya scale bug of the authors' released code).
    noise_rng : numpy.random.Generator or accounting.noise.SystemRandomness or None
        Randomness of the noise (default ``rng``).

    Returns
    -------
    numpy.ndarray
        ``y`` in ``[0, m-1]``, the shape of ``x`` (int64; object when ``m >= 2**62``).
    """
    mod = v.integer("m", m, minimum=1)
    xhat = encode(x, g, rng)
    y = ring(xhat, mod)
    source = rng if noise_rng is None else check_randomness(noise_rng, "noise_rng")
    if share_sampler is not None:
        return add_mod(y, ring(sampled_shares(share_sampler, source, xhat.shape), mod, "share_sampler"), mod)
    if share is None:
        return y
    return add_mod(y, ring(draw_shares(share, source, xhat.shape, exact=exact), mod, "share"), mod)


def sampled_shares(sampler: ShareSampler, rng: Randomness, shape: tuple[int, ...]) -> NDArray[Any]:
    """The shares a custom ``sampler`` draws for ``shape`` (a numpy generator only; the shape checked)."""
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(
            "noise_rng", rng, "a numpy.random.Generator (a share_sampler draws with numpy)"
        )
    out = np.asarray(sampler(rng, shape))
    if out.shape != shape:
        raise ParameterError("share_sampler", describe(out), f"shares of shape {shape}")
    return out
