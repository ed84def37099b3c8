"""Privacy protocols: the randomizer / secure aggregator / shuffler / analyzer template (R, S, A).

The template ``(R, S, A)`` of the distributed MAB paper (Chowdhury & Zhou 2023, §3), shared by every
learner, for one batch of
``n`` users and ``R`` independent repetitions at once (leading axis ``R``; an optional last axis
of ``d`` coordinates for vector or flattened matrix statistics):

* **R**, the randomizer (:func:`encode`, :func:`randomize`): fixed-point encoding at precision ``g``
  with unbiased randomized rounding (the paper's ``R``), a noise share, reduction mod ``m``;
* **S**, secure aggregation (:func:`modular_sum`, the ideal black box; :func:`masked_sum`, a
  simulation of additive-mask aggregation of Bonawitz et al. 2017 with dropouts), or the shuffler
  (:func:`shuffle`);
* **A**, the analyzer (:func:`decode`, :func:`analyze`): the underflow correction at ``τ``.

:class:`Protocol` runs the whole template for one :class:`~accounting.calibration.ProtocolParameters`
and places the noise as the trust model of its :class:`~accounting.calibration.Variant` says
(:class:`TrustModel`: Pólya, Skellam and discrete Gaussian shares distributed — Theorems 1, 2,
4 —, shuffled Pólya shares in the shuffle model — Theorem 3 —, central and local discrete
Laplace — Theorems 5, 6, App. H). Every parameter comes from
:func:`accounting.calibration.protocol_parameters`; nothing here computes a noise level. Each
release reports its mechanisms to an optional :class:`~accounting.accountant.Accountant`.

Arithmetic (exact, against floating-point attacks such as Mironov 2012's). Everything on the privacy path is
integer: ``int64`` with a
reduction mod ``m`` after every step while ``m < 2**62`` (so the sum of two residues fits), and
Python integers (``dtype=object``) when ``m >= 2**62``. Sums over users are taken in chunks small
enough never to overflow (:func:`modular_sum`); nothing is ever accumulated in floating point.
Only the final division ``z = S/g`` is a float (post-processing). Noise comes from the exact
integer samplers (``sample_exact``) unless ``exact=False``.
"""

from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.accountant import Accountant, Event
from accounting.calibration import ShuffleSumParameters
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism, PureDP
from accounting.noise import (
    LatticeNoise,
    NoiseDistribution,
    Polya,
    Randomness,
    check_randomness,
    uniform_below,
)
from accounting.papers.distributed_dp_mab import ProtocolParameters, Variant
from learners.errors import (
    DropoutError,
    ParameterError,
    ParameterTypeError,
    PartialBatchError,
    ProtocolError,
    RecoveryError,
)

__all__ = [
    "BIG_MODULUS",
    "DROPOUT_POLICIES",
    "PAIRWISE_MAX_USERS",
    "SECURE_AGGREGATIONS",
    "SHUFFLE_MESSAGE_LIMIT",
    "Protocol",
    "Release",
    "TrustModel",
    "analyze",
    "decode",
    "draw_shares",
    "encode",
    "masked_sum",
    "modular_sum",
    "randomize",
    "release_mechanisms",
    "shuffle",
    "shuffle_sum",
    "trust_model",
]

#: From this modulus on, residues are Python integers (``dtype=object``): below it the sum of
#: two residues fits in int64.
BIG_MODULUS = 2**62

#: The largest batch the explicit pairwise-mask simulation accepts (it draws ``n(n-1)/2`` masks).
PAIRWISE_MAX_USERS = 2000

#: The most one-bit messages the message-level simulation of :func:`shuffle_sum` materializes.
SHUFFLE_MESSAGE_LIMIT = 2**26

#: Secure aggregation: the ideal modular sum, zero-sum masks, or explicit pairwise masks.
SECURE_AGGREGATIONS = ("modular", "masked", "pairwise")

#: What to do when users drop out of a batch whose noise is split among them.
DROPOUT_POLICIES = ("top-up", "refuse")

_INT64_MAX = 2**63 - 1
_PAIRWISE_BLOCK = 2**22  # masks drawn at once by the pairwise simulation
_RELAXED_SECAGG = "relaxed SecAgg (Cheu & Yan), Theorem 3: 2 eps_hat = eps/2"

#: An integer array: int64, or object (Python integers) when the modulus is ``>= BIG_MODULUS``.
IntArray = NDArray[Any]
FloatArray = NDArray[np.float64]
#: A custom noise sampler ``(rng, shape) -> shares``: each entry one user's whole share.
ShareSampler = Callable[[np.random.Generator, tuple[int, ...]], NDArray[np.int64]]


# ---------------------------------------------------------------------------------------
# Validation (the public boundary)
# ---------------------------------------------------------------------------------------


def _integer(name: str, value: object, minimum: int) -> int:
    """accounting's integer validator (one set for dpcert: ``4.0`` is the integer 4 everywhere)."""
    return v.integer(name, value, minimum=minimum)


def _generator(name: str, rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(name, rng, "a numpy.random.Generator")
    return rng


def _reals(name: str, x: object, valid: str) -> FloatArray:
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(name, x, valid) from exc


def _describe(a: NDArray[Any]) -> str:
    return f"<array of shape {a.shape}, dtype {a.dtype}>"


def _integral(name: str, values: ArrayLike) -> NDArray[Any]:
    """``values`` as an integer array (a numpy integer dtype, or object holding Python integers)."""
    a = np.asarray(values)
    if a.dtype == object:
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in a.flat):
            raise ParameterTypeError(name, _describe(a), "an array of integers")
        return a
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise ParameterTypeError(name, _describe(a), "an array of integers")
    return a


def _ring(values: ArrayLike, m: int, name: str = "y") -> IntArray:
    """Reduce integers into ``[0, m-1]`` (mathematical modulo): int64, or object when ``m >= 2**62``."""
    a = _integral(name, values)
    if m >= BIG_MODULUS:
        return np.asarray(np.mod(a.astype(object), m), dtype=object)
    if a.dtype == object:
        return np.asarray(np.mod(a, m), dtype=object).astype(np.int64)
    if a.dtype == np.uint64:
        return np.asarray(np.mod(a, np.uint64(m)), dtype=np.int64)
    return np.asarray(np.mod(a.astype(np.int64, copy=False), m), dtype=np.int64)


def _addmod(a: IntArray, b: IntArray, m: int) -> IntArray:
    """``(a + b) mod m`` for residues ``a, b`` (no overflow: ``2(m-1) < 2**63`` in the int64 case)."""
    return np.asarray(np.mod(a + b, m))


def _submod(a: IntArray, b: IntArray, m: int) -> IntArray:
    return np.asarray(np.mod(a - b, m))


def _alive(dropped: ArrayLike | None, repetitions: int, users: int) -> NDArray[np.bool_]:
    """The users whose messages arrive, shape ``(R, n)``, from a dropout mask ``(n,)`` or ``(R, n)``."""
    if dropped is None:
        return np.ones((repetitions, users), dtype=bool)
    d = np.asarray(dropped)
    if d.dtype != np.bool_:
        raise ParameterTypeError(
            "dropped", _describe(d), "a boolean mask (True = the user's message never arrives)"
        )
    if d.shape not in ((users,), (repetitions, users)):
        raise ParameterError(
            "dropped", _describe(d), f"a boolean mask of shape ({users},) or ({repetitions}, {users})"
        )
    return np.broadcast_to(~d, (repetitions, users))


def _expand(mask: NDArray[np.bool_], ndim: int) -> NDArray[np.bool_]:
    """A ``(R, n)`` mask broadcastable against an ``(R, n, ...)`` array."""
    return mask.reshape(mask.shape + (1,) * (ndim - 2))


def _uniform(rng: np.random.Generator, m: int, shape: tuple[int, ...]) -> IntArray:
    """Uniform residues in ``Z_m``: int64, or Python integers when ``m >= 2**62``."""
    u = uniform_below(rng, m, math.prod(shape)).reshape(shape)
    return u.astype(object) if m >= BIG_MODULUS else u


# ---------------------------------------------------------------------------------------
# R: the randomizer
# ---------------------------------------------------------------------------------------


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
    precision = _integer("g", g, 1)
    if precision > 2**53:
        raise ParameterError("g", g, "an integer in [1, 2**53] (x*g must be exact enough to round)")
    gen = _generator("rng", rng)
    a = _reals("x", x, "an array of reals in [0, 1]")
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
    dims = tuple(_integer("shape", s, 0) for s in shape)
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
    mod = _integer("m", m, 1)
    xhat = encode(x, g, rng)
    y = _ring(xhat, mod)
    source = rng if noise_rng is None else check_randomness(noise_rng, "noise_rng")
    if share_sampler is not None:
        return _addmod(y, _ring(_sampled(share_sampler, source, xhat.shape), mod, "share_sampler"), mod)
    if share is None:
        return y
    return _addmod(y, _ring(draw_shares(share, source, xhat.shape, exact=exact), mod, "share"), mod)


def _sampled(sampler: ShareSampler, rng: Randomness, shape: tuple[int, ...]) -> NDArray[Any]:
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(
            "noise_rng", rng, "a numpy.random.Generator (a share_sampler draws with numpy)"
        )
    out = np.asarray(sampler(rng, shape))
    if out.shape != shape:
        raise ParameterError("share_sampler", _describe(out), f"shares of shape {shape}")
    return out


# ---------------------------------------------------------------------------------------
# S: secure aggregation and the shuffler
# ---------------------------------------------------------------------------------------


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
    mod = _integer("m", m, 1)
    a = _ring(y, mod)
    if a.ndim == 0:
        raise ParameterError("y", _describe(a), "an array with at least one axis")
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


def _zero_sum_masks(rng: np.random.Generator, m: int, shape: tuple[int, ...]) -> IntArray:
    """Masks uniform on ``{r in Z_m^n : Σ r = 0}``: ``n - 1`` uniform, the last closing the sum.

    These have the joint law of the pairwise masks' per-user totals (below) whenever ``n >= 2``:
    both are uniform on the zero-sum subgroup, which is all the server can observe.
    """
    repetitions, users = shape[:2]
    if users == 0:
        return _ring(np.zeros(shape, dtype=np.int64), m)
    free = _uniform(rng, m, (repetitions, users - 1, *shape[2:]))
    last = np.mod(-modular_sum(free, m, axis=1), m)
    return np.concatenate([free, last[:, None]], axis=1)


def _pairwise_masks(rng: np.random.Generator, m: int, shape: tuple[int, ...]) -> IntArray:
    """Bonawitz et al. 2017: user ``i`` adds ``Σ_{j>i} r_ij - Σ_{j<i} r_ji`` with ``r_ij ~ U(Z_m)``."""
    repetitions, users = shape[:2]
    rest = shape[2:]
    masks = _ring(np.zeros(shape, dtype=np.int64), m)
    width = max(1, repetitions * users * math.prod(rest))
    block = max(1, _PAIRWISE_BLOCK // width)
    for start in range(0, users, block):  # fixed-size blocks of rows of the mask matrix
        stop = min(users, start + block)
        r = _uniform(rng, m, (repetitions, stop - start, users, *rest))  # r[:, i - start, j] = r_ij
        upper = np.arange(users)[None, :] > np.arange(start, stop)[:, None]  # only pairs i < j
        r = np.where(upper.reshape((1, *upper.shape) + (1,) * len(rest)), r, 0)
        masks[:, start:stop] = _addmod(masks[:, start:stop], modular_sum(r, m, axis=2), m)
        masks = _submod(masks, modular_sum(r, m, axis=1), m)
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
    mod = _integer("m", m, 1)
    gen = _generator("rng", rng)
    a = _ring(y, mod)
    if a.ndim < 2:
        raise ParameterError("y", _describe(a), "messages of shape (R, n) or (R, n, d)")
    repetitions, users = a.shape[:2]
    need = _integer("threshold", threshold, 1)
    alive = _alive(dropped, repetitions, users)
    survivors = alive.sum(axis=1)
    if survivors.size and int(survivors.min()) < need:
        raise RecoveryError(int(survivors.min()), need, users)
    if pairwise:
        if users > PAIRWISE_MAX_USERS:
            raise ParameterError("pairwise", f"True with n={users} users", f"n <= {PAIRWISE_MAX_USERS}")
        masks = _pairwise_masks(gen, mod, a.shape)
    else:
        masks = _zero_sum_masks(gen, mod, a.shape)
    arrives = _expand(alive, a.ndim)
    received = modular_sum(np.where(arrives, _addmod(a, masks, mod), 0), mod)
    recovered = modular_sum(np.where(arrives, 0, masks), mod)  # the dropped users' masks
    total = _addmod(received, recovered, mod)
    if recovery is not None:
        extra = _ring(recovery, mod, "recovery")
        if extra.shape != a.shape:
            raise ParameterError("recovery", _describe(extra), f"contributions of shape {a.shape}")
        total = _addmod(total, modular_sum(np.where(arrives, extra, 0), mod), mod)
    return total


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
    gen = _generator("rng", rng)
    a = np.asarray(y)
    if a.ndim < 2:
        raise ParameterError("y", _describe(a), "messages of shape (R, n) or (R, n, d)")
    if a.ndim == 2:
        return gen.permuted(a, axis=1)
    order = np.argsort(gen.random(a.shape[:2]), axis=1)
    return np.take_along_axis(a, order.reshape(order.shape + (1,) * (a.ndim - 2)), axis=1)


def shuffle_sum(
    x: ArrayLike, params: ShuffleSumParameters, rng: np.random.Generator, *, messages: bool = False
) -> FloatArray:
    """Run a shuffle summation protocol (bits with binomial noise) and return the estimate of ``Σ x``.

    Randomizer (spec ``dp-dpe.md`` §3.3–§3.4, ``federated-lcb.md`` §5.3.2): every coordinate
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
    gen = _generator("rng", rng)
    xs = _reals("x", x, "an array of reals")
    n, d, bound = params.users, params.dimension, params.bound
    vector = xs.ndim == 3
    shape = f"(R, n={n})" if d == 1 else f"(R, n={n}, D={d})"
    if xs.ndim not in (2, 3) or xs.shape[1] != n or (vector and xs.shape[2] != d) or (not vector and d != 1):
        raise ParameterError("x", _describe(xs), f"inputs of shape {shape}")
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


# ---------------------------------------------------------------------------------------
# A: the analyzer
# ---------------------------------------------------------------------------------------


def decode(yhat: ArrayLike, n: int, g: int, tau: int, m: int) -> IntArray:
    """The analyzer's integer decoding with the underflow correction (Chowdhury & Zhou 2023, ``A``; proof of
    Theorem 1).

    ``S = yhat - m`` if ``yhat > n g + τ`` (strict), else ``S = yhat``. By the decoding lemma,
    every noisy sum ``S_true`` in ``[-τ, n g + τ]`` is recovered exactly from ``S_true mod m``
    when ``m >= n g + 2τ + 1`` (the paper's ``m`` is equality); outside that range decoding fails.

    Parameters
    ----------
    yhat : array_like of int
        The server's view, residues in ``[0, m-1]``.
    n, g, tau, m : int
        Users, precision, accuracy level and modulus, with ``m >= n g + 2 tau + 1``.

    Returns
    -------
    numpy.ndarray
        ``S``: int64 (object when ``m >= 2**62``), the shape of ``yhat``.
    """
    users = _integer("n", n, 1)
    precision = _integer("g", g, 1)
    accuracy = _integer("tau", tau, 0)
    mod = _integer("m", m, 1)
    if mod < users * precision + 2 * accuracy + 1:
        raise ParameterError("m", m, f"a modulus >= n*g + 2*tau + 1 = {users * precision + 2 * accuracy + 1}")
    a = _integral("yhat", yhat)
    a = a.astype(object) if mod >= BIG_MODULUS else a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= mod):
        raise ParameterError("yhat", _describe(a), f"residues in [0, {mod - 1}]")
    return np.where(a > users * precision + accuracy, a - mod, a)


def _divide(sums: IntArray, g: int) -> FloatArray:
    """``S / g`` as floats (post-processing); Python integers divide with one correct rounding."""
    if sums.dtype == object:
        return np.array([s / g for s in sums.flat], dtype=np.float64).reshape(sums.shape)
    return np.asarray(sums / g, dtype=np.float64)


def analyze(yhat: ArrayLike, n: int, g: int, tau: int, m: int, *, multiset: bool = False) -> FloatArray:
    """The analyzer ``A``: the estimate ``z = S/g`` of ``Σ x_i`` (Chowdhury & Zhou 2023, §3; Algorithms 3, 5).

    Parameters
    ----------
    yhat : array_like of int
        The server's view: the modular sum, or with ``multiset=True`` the shuffled messages
        ``(R, n[, d])``, whose sum mod ``m`` is taken first (Chowdhury & Zhou 2023, footnote 6).
    n, g, tau, m : int
        As in :func:`decode`.
    multiset : bool
        Whether ``yhat`` is the shuffler's output.

    Returns
    -------
    numpy.ndarray of float64
        ``z = decode(yhat) / g``.
    """
    view = modular_sum(yhat, m, axis=1) if multiset else yhat
    return _divide(decode(view, n, g, tau, m), _integer("g", g, 1))


# ---------------------------------------------------------------------------------------
# Trust models, accounting and the protocol
# ---------------------------------------------------------------------------------------


class TrustModel(enum.Enum):
    """Where the noise is added (Chowdhury & Zhou 2023: Theorems 1-4; App. H.1, H.2)."""

    #: Users send ``xhat mod m``; the trusted server adds one draw of the noise (Theorem 5).
    CENTRAL = "central"
    #: Each user adds the full noise; every message is ε-LDP (Theorem 6).
    LOCAL = "local"
    #: Users add noise shares; the shuffler permutes the messages (Theorem 3).
    SHUFFLE = "shuffle"
    #: Users add noise shares; secure aggregation reveals only the modular sum (Theorems 1, 2, 4).
    DISTRIBUTED = "distributed"


_MODELS = {
    Variant.POLYA_SHARES: TrustModel.DISTRIBUTED,
    Variant.SKELLAM_SHARES: TrustModel.DISTRIBUTED,
    Variant.SHUFFLED_POLYA: TrustModel.SHUFFLE,
    Variant.DISCRETE_GAUSSIAN_SHARES: TrustModel.DISTRIBUTED,
    Variant.CENTRAL_LAPLACE: TrustModel.CENTRAL,
    Variant.LOCAL_LAPLACE: TrustModel.LOCAL,
}


def trust_model(variant: Variant | str) -> TrustModel:
    """Where a :class:`~accounting.calibration.Variant` of the distributed MAB paper adds its noise."""
    return _MODELS[Variant.parse(variant)]


def release_mechanisms(params: ProtocolParameters) -> tuple[Mechanism, ...]:
    """What one release of one coordinate composes into the accountant (Chowdhury & Zhou 2023, App. D.2, H).

    The query is ``Σ xhat_i``, of sensitivity ``g`` (one user's ``x`` in ``[0, 1]`` moves it by at
    most ``g``).

    * distributed: ``DistributedSum(share, n, g)`` — the shares sum to the accounted total noise;
    * central: ``AdditiveNoise(server_noise, g)``;
    * local: ``AdditiveNoise(share, g)``, the guarantee of *each user's message* (ε-LDP); the
      aggregate, a post-processing of the messages, has at least this guarantee too;
    * shuffle (Theorem 3): ``DistributedSum(share, n, g)`` for the ``ε'`` of the modular sum, and
      ``PureDP(ε/2)`` for the relaxed secure aggregation's ``2 ε̂ = ε/2``.
    """
    if not isinstance(params, ProtocolParameters):
        raise ParameterTypeError("params", params, "accounting.calibration.ProtocolParameters")
    model = trust_model(params.variant)
    if model is TrustModel.CENTRAL:
        if not isinstance(params.server_noise, LatticeNoise):
            raise ParameterError("params.server_noise", params.server_noise, "lattice noise (central model)")
        return (AdditiveNoise(params.server_noise, sensitivity=params.g),)
    if not isinstance(params.share, LatticeNoise):
        raise ParameterError("params.share", params.share, f"a lattice noise share ({model.value} model)")
    if model is TrustModel.LOCAL:
        return (AdditiveNoise(params.share, sensitivity=params.g),)
    summed = DistributedSum(params.share, users=params.users, sensitivity=params.g)
    if model is TrustModel.SHUFFLE:
        return (summed, PureDP(params.epsilon / 2, source=_RELAXED_SECAGG))
    return (summed,)


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a = np.array(a)  # an own copy, so freezing it cannot affect an array the caller holds
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Release:
    """One released batch aggregate, for ``R`` repetitions (arrays are read-only).

    Attributes
    ----------
    model : TrustModel
        Where the noise was added.
    estimate : numpy.ndarray of float64
        ``z``, the estimate of ``Σ x_i``: shape ``(R,)`` or ``(R, d)``.
    decoded : numpy.ndarray
        ``S``, the decoded noisy integer sums (int64, or object when ``m >= 2**62``).
    view : numpy.ndarray
        ``yhat``, the modular sum the analyzer decodes: for secure aggregation, all the server
        learns; for the shuffle model, the sum of the shuffled multiset (the server sees the
        multiset); for the local model, the sum of the messages (the server sees each one).
    dropped : numpy.ndarray of int64
        Users whose message never arrived, per repetition: shape ``(R,)``.
    topped_up : numpy.ndarray of int64
        Shares each user drew in the recovery round, shape ``(R, n)``; row ``r`` sums to
        ``dropped[r]`` when the noise is split among users, and is 0 otherwise.
    events : tuple of accounting.accountant.Event
        What the release composed into the accountant.
    """

    model: TrustModel
    estimate: FloatArray
    decoded: IntArray
    view: IntArray
    dropped: NDArray[np.int64]
    topped_up: NDArray[np.int64]
    events: tuple[Event, ...]


def _round_robin(alive: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Missing shares dealt to the survivors in order: survivor of rank ``s`` draws
    ``k // a + (s < k % a)`` of the ``k`` missing ones (``a`` survivors)."""
    survivors = alive.sum(axis=1)
    missing = alive.shape[1] - survivors
    rank = np.cumsum(alive, axis=1) - 1
    base = (missing // survivors)[:, None]
    extra = rank < (missing % survivors)[:, None]
    return np.where(alive, base + extra, 0).astype(np.int64)


@dataclass(frozen=True)
class Protocol:
    """The R / S / A template for one batch, with the noise placed by its variant's trust model.

    Parameters
    ----------
    params : accounting.calibration.ProtocolParameters
        From :func:`accounting.calibration.protocol_parameters`: ``n, g, τ, m`` and the noise.
    exact : bool
        Draw noise with the exact integer samplers (``sample_exact``; Canonne, Kamath & Steinke 2020);
        ``False`` uses
        the fast floating-point ``sample``.
    secure_aggregation : {"modular", "masked", "pairwise"}
        The ideal modular sum, or the simulated additive-mask protocol with zero-sum masks or
        explicit pairwise masks (:func:`masked_sum`). Used by the distributed and central models
        (in the central model the users' unnoised encodings go through secure aggregation to the
        trusted server, Algorithm 3).
    dropout_policy : {"top-up", "refuse"}
        When users drop out of a batch whose noise is split among them (distributed, shuffle),
        the survivors' shares sum to less noise than was accounted (the proofs need all ``n`` shares).
        ``"top-up"``:
        the survivors draw the ``k`` missing shares in a recovery round, dealt round-robin, each a
        fresh draw of the same share, so the total is again ``n`` i.i.d. shares — exactly what
        was accounted. ``"refuse"``: raise :class:`~learners.errors.DropoutError`. In the central
        and local models the noise does not depend on who arrives, and dropouts need no top-up.
    threshold : int or None
        The least number of survivors secure aggregation needs to recover dropped users' masks
        (default: a majority, ``n // 2 + 1``).
    share_sampler : callable or None
        Replaces the noise sampler (the per-user share, or the server's noise in the central
        model): ``share_sampler(rng, shape)`` returns whole shares. The events still describe
        the calibrated noise — which is how a broken sampler is caught by an audit.

    Notes
    -----
    The shuffle model permutes whole messages: the extra randomizer of Cheu & Yan's relaxed
    secure aggregation (which splits each message into bits before shuffling; left unspecified
    by the paper, App. D.2; see Cheu & Yan 2021) is not simulated, and its ``2ε̂ = ε/2`` enters the
    accounting as a
    :class:`~accounting.mechanisms.PureDP` event. Masks and permutations come from ``rng``, a
    seeded simulation generator, not a cryptographic one.
    """

    params: ProtocolParameters
    exact: bool = True
    secure_aggregation: str = "modular"
    dropout_policy: str = "top-up"
    threshold: int | None = None
    share_sampler: ShareSampler | None = None
    _mechanisms: tuple[Mechanism, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        mechanisms = release_mechanisms(self.params)  # validates params and its noise
        if not isinstance(self.exact, bool):
            raise ParameterTypeError("exact", self.exact, "a bool")
        if self.secure_aggregation not in SECURE_AGGREGATIONS:
            raise ParameterError(
                "secure_aggregation", self.secure_aggregation, "one of " + ", ".join(SECURE_AGGREGATIONS)
            )
        if self.dropout_policy not in DROPOUT_POLICIES:
            raise ParameterError(
                "dropout_policy", self.dropout_policy, "one of " + ", ".join(DROPOUT_POLICIES)
            )
        n = self.params.users
        if self.secure_aggregation == "pairwise" and n > PAIRWISE_MAX_USERS:
            raise ParameterError(
                "secure_aggregation",
                f"'pairwise' with n={n} users",
                f"n <= {PAIRWISE_MAX_USERS} for pairwise masks",
            )
        threshold = n // 2 + 1 if self.threshold is None else _integer("threshold", self.threshold, 1)
        if threshold > n:
            raise ParameterError("threshold", self.threshold, f"an integer in [1, n={n}]")
        if self.share_sampler is not None and not callable(self.share_sampler):
            raise ParameterTypeError(
                "share_sampler", self.share_sampler, "a callable (rng, shape) -> shares, or None"
            )
        object.__setattr__(self, "threshold", threshold)
        object.__setattr__(self, "_mechanisms", mechanisms)

    @property
    def model(self) -> TrustModel:
        """The trust model of ``params.variant``."""
        return trust_model(self.params.variant)

    @property
    def noise(self) -> LatticeNoise:
        """The distribution sampled: each user's share, or the server's noise (central)."""
        noise = self.params.server_noise if self.model is TrustModel.CENTRAL else self.params.share
        assert isinstance(noise, LatticeNoise)  # checked by release_mechanisms
        return noise

    def events(self, coordinates: int = 1) -> tuple[Event, ...]:
        """The events of one release of ``coordinates`` coordinates (each its own aggregate)."""
        count = _integer("coordinates", coordinates, 1)
        return tuple(Event(mechanism, count) for mechanism in self._mechanisms)

    def account(self, accountant: Accountant | None, coordinates: int = 1) -> tuple[Event, ...]:
        """Compose the events of one release into ``accountant`` (if any) and return them.

        :meth:`release` calls this for every release it makes; a caller that draws an equivalent
        release itself (the learners' fast path, which draws the total noise of the shares in
        one draw) calls it at the moment of that release, so its ledger is the same record.
        """
        if accountant is not None and not isinstance(accountant, Accountant):
            raise ParameterTypeError("accountant", accountant, "an accounting.accountant.Accountant or None")
        events = self.events(coordinates)
        if accountant is not None:
            for event in events:
                accountant.compose(event)
        return events

    def _draw(self, rng: Randomness, shape: tuple[int, ...]) -> IntArray:
        if self.share_sampler is not None:
            raw = _sampled(self.share_sampler, rng, shape)
        else:
            raw = draw_shares(self.noise, rng, shape, exact=self.exact)
        return _ring(raw, self.params.m, "noise")

    def _top_up(self, counts: NDArray[np.int64], rng: Randomness, shape: tuple[int, ...]) -> IntArray:
        """Each survivor's recovery-round contribution: the sum of ``counts`` fresh shares, mod ``m``."""
        m = self.params.m
        total = _ring(np.zeros(shape, dtype=np.int64), m)
        for level in range(int(counts.max())):  # usually one level: k <= n - threshold < survivors
            drawing = counts > level
            total[drawing] = _addmod(total[drawing], self._draw(rng, (int(drawing.sum()), *shape[2:])), m)
        return total

    def _secure_sum(
        self, y: IntArray, rng: np.random.Generator, alive: NDArray[np.bool_], recovery: IntArray | None
    ) -> IntArray:
        m = self.params.m
        if self.secure_aggregation == "modular":
            arrives = _expand(alive, y.ndim)
            total = modular_sum(np.where(arrives, y, 0), m)
            if recovery is not None:
                total = _addmod(total, modular_sum(np.where(arrives, recovery, 0), m), m)
            return total
        assert isinstance(self.threshold, int)
        return masked_sum(
            y,
            m,
            rng,
            dropped=~alive,
            threshold=self.threshold,
            pairwise=self.secure_aggregation == "pairwise",
            recovery=recovery,
        )

    def release(
        self,
        x: ArrayLike,
        rng: np.random.Generator,
        accountant: Accountant | None = None,
        dropped: ArrayLike | None = None,
        noise_rng: Randomness | None = None,
    ) -> Release:
        """Run R, S and A on one full batch, for every repetition at once.

        Parameters
        ----------
        x : array_like of float
            The users' values in ``[0, 1]``: shape ``(R, n)``, or ``(R, n, d)`` for ``d``
            coordinates (each coordinate its own aggregate with its own noise).
        rng : numpy.random.Generator
            Randomness of the rounding, the masks and the shuffler (and of the noise unless
            ``noise_rng`` is given).
        accountant : accounting.accountant.Accountant or None
            Receives the release's events (once per release: the ``R`` repetitions are
            independent runs, each spending the same privacy; ``d`` coordinates count ``d``).
        dropped : array_like of bool or None
            Users whose messages never arrive: shape ``(n,)`` or ``(R, n)``.
        noise_rng : numpy.random.Generator or accounting.noise.SystemRandomness or None
            Randomness of the noise (``SystemRandomness`` needs ``exact=True``).

        Returns
        -------
        Release

        Raises
        ------
        PartialBatchError
            If ``x`` holds fewer than ``n`` users (never released: Algorithm 1 does not aggregate a partial
            batch).
        DropoutError
            If users dropped out of a split-noise batch and the policy is ``"refuse"``.
        RecoveryError
            If fewer than ``threshold`` users survive secure aggregation (distributed, central).
        ProtocolError
            If every user dropped out of some repetition (any model).
        """
        p = self.params
        n, g, tau, m = p.users, p.g, p.tau, p.m
        gen = _generator("rng", rng)
        source: Randomness = gen if noise_rng is None else check_randomness(noise_rng, "noise_rng")
        if accountant is not None and not isinstance(accountant, Accountant):
            raise ParameterTypeError("accountant", accountant, "an accounting.accountant.Accountant or None")
        xs = _reals("x", x, "an array of reals in [0, 1]")
        if xs.ndim not in (2, 3):
            raise ParameterError("x", _describe(xs), "values of shape (R, n) or (R, n, d)")
        repetitions, users = xs.shape[:2]
        if users < n:
            raise PartialBatchError(users, n)
        if users > n:
            raise ParameterError("x", _describe(xs), f"a batch of exactly n={n} users (axis 1)")
        alive = _alive(dropped, repetitions, n)
        missing = (n - alive.sum(axis=1)).astype(np.int64)
        model = self.model
        split = model in (TrustModel.DISTRIBUTED, TrustModel.SHUFFLE)
        if split and missing.any() and self.dropout_policy == "refuse":
            raise DropoutError(int(missing.max()), n)
        fewest = n - int(missing.max()) if repetitions else n
        assert isinstance(self.threshold, int)
        if model in (TrustModel.DISTRIBUTED, TrustModel.CENTRAL) and fewest < self.threshold:
            raise RecoveryError(fewest, self.threshold, n)
        if fewest == 0:
            raise ProtocolError(f"all {n} users dropped out of a repetition: there is nothing to release")

        xhat = encode(xs, g, gen)
        shape = xhat.shape
        y = _ring(xhat, m)
        if model is not TrustModel.CENTRAL:
            y = _addmod(y, self._draw(source, shape), m)
        topping = split and bool(missing.any())
        topped_up = _round_robin(alive) if topping else np.zeros((repetitions, n), dtype=np.int64)

        if model is TrustModel.SHUFFLE:
            if topping:
                # The k extra messages (fresh shares) take the dropped users' slots; the shuffle
                # makes slots meaningless, and topped_up records who sent them.
                y = y.copy()
                y[~alive] = self._draw(source, (int(missing.sum()), *shape[2:]))
            view = modular_sum(shuffle(y, gen), m)  # the analyzer sums the multiset mod m first
        elif model is TrustModel.LOCAL:
            view = modular_sum(np.where(_expand(alive, y.ndim), y, 0), m)
        else:
            recovery = self._top_up(topped_up, source, shape) if topping else None
            view = self._secure_sum(y, gen, alive, recovery)
            if model is TrustModel.CENTRAL:
                view = _addmod(view, self._draw(source, (repetitions, *shape[2:])), m)

        decoded = decode(view, n, g, tau, m)
        events = self.account(accountant, math.prod(shape[2:]))
        return Release(
            model=model,
            estimate=_readonly(_divide(decoded, g)),
            decoded=_readonly(decoded),
            view=_readonly(view),
            dropped=_readonly(missing),
            topped_up=_readonly(topped_up),
            events=events,
        )
