"""Linear contextual bandit instances of the federated LinUCB paper, computed round by round.

The synthetic instance of Zhou & Chowdhury (ICLR 2024), §6, as the authors' code builds it
(``synth_env``): at every round ``t`` and silo ``i`` there are ``K`` arms,

* ``x = [u, 1]`` with ``u`` uniform on the unit sphere of ``R^{d-1}`` (a Gaussian, normalized),
  so ``‖x‖ = √2``;
* the first ``d`` arms are then overwritten by the rows of ``basis = I_d`` with its last column
  set to 1: rows ``j < d - 1`` are ``e_j + e_d``, row ``d - 1`` is ``e_d``;
* ``θ* = [0.5 v/‖v‖, 0.5]`` with ``v ~ N(0, I_{d-1})`` (``‖θ*‖ = 1/√2``);
* the mean reward of an arm is ``μ = ⟨x, θ*⟩`` on the *raw* features, and the learner sees the
  normalized features ``x/‖x‖`` (so the model is exactly linear in them with parameter ``√2 θ*``
  for every arm of norm ``√2``, and mis-specified for the single arm ``e_d``: our observation);
* the reward is ``r = μ + σ ξ`` with ``ξ ~ N(0, 1)`` i.i.d. per arm, silo and round (``σ = 0.5``).

**Only the noise that is used is drawn.** A silo plays one arm per round, and the realized regret
compares it with the best arm: of the ``K`` noises of a round only ``ξ_a`` (the played arm) and
``ξ*`` (the best arm) ever matter. The tape draws two i.i.d. ``N(0, 1)`` per round and silo,
``ξ*`` and ``ξ'``, and the played arm's noise is ``ξ*`` if it is the best arm and ``ξ'`` otherwise.
The arm is chosen before the round's noise is seen, so every run has exactly the law it has with
``K`` independent noises (the pair ``(ξ_a, ξ*)`` is the same variable on the best arm, and two
independent ``N(0, 1)`` otherwise); only the coupling *between* algorithms differs (two
algorithms playing different non-best arms see the same ``ξ'``), which common random numbers
allow. It draws 2 numbers instead of ``K`` (at ``K = 100``, ``M = 100``, 25 repetitions: 5000
instead of 250000 normals a round).

**Never materialized.** ``M × T × K × d`` floats (10^9 at the paper's size) are not stored: the arms
of rounds ``[CHUNK c, CHUNK (c + 1))`` are the output of a Philox generator keyed by the instance's
two words with counter ``(0, c, 0, 0)`` (:meth:`SyntheticInstance.block`), and the reward noise of
a repetition is the output keyed by the repetition's tape words with counter ``(0, c, 1, 0)``
(:meth:`NoiseTape.block`). Any block is computed on demand, identically whoever asks, so a run is
reproducible from its seeds and every algorithm given the same instance and tape generator sees
the same contexts and the same noise (common random numbers).

**Deviation from the code** (of Zhou & Chowdhury (2024), §6): the authors fix the instance with
``np.random.seed(2)`` and draw every arm up front from the global stream; here the instance is
drawn from an explicit generator (:func:`draw_synthetic`; seed it with 2 for the paper's
setting), so the numbers differ from the authors' though the law is the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from learners.errors import ParameterError, ParameterTypeError

__all__ = [
    "CHUNK",
    "LinearInstance",
    "NoiseTape",
    "QueryInstance",
    "SyntheticInstance",
    "draw_synthetic",
    "keyed_stream",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Rounds per generated block (fixed, so that a block's numbers do not depend on who reads it).
CHUNK = 16

#: Dimension, arms and silos above which one block would not fit in memory (~1 GB of floats).
MAX_BLOCK = 2**27

_HALF_SQRT2 = 1 / math.sqrt(2)


def _key(name: str, key: object) -> tuple[int, int]:
    words = tuple(key) if isinstance(key, tuple | list) else ()
    if len(words) != 2 or not all(
        isinstance(k, int | np.integer) and not isinstance(k, bool) and 0 <= k < 2**64 for k in words
    ):
        raise ParameterError(name, key, "two integers in [0, 2**64)")
    return int(words[0]), int(words[1])


def _words(rng: object) -> tuple[int, int]:
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    w = rng.integers(0, 2**64, size=2, dtype=np.uint64, endpoint=False)
    return int(w[0]), int(w[1])


def keyed_stream(key: tuple[int, int], chunk: int, purpose: int) -> np.random.Generator:
    """The Philox stream keyed by ``key`` at counter ``(0, chunk, purpose, 0)``: block ``chunk`` of
    stream ``purpose`` (0 arms, 1 reward noise, 2 privacy noise), independent of every other block."""
    bits = np.random.Philox(key=np.array(key, dtype=np.uint64), counter=[0, chunk, purpose, 0])
    return np.random.Generator(bits)


@runtime_checkable
class LinearInstance(Protocol):
    """What :func:`learners.linear.run` needs of an instance (duck-typed; checked at run time).

    ``block(c)`` gives the arms of rounds ``[CHUNK·c, CHUNK·(c + 1))``: ``features`` of shape
    ``(CHUNK, M, K_c, d)`` (what the learner sees) and ``means`` of shape ``(CHUNK, M, K_c)`` (the
    mean reward of every arm), with ``K_c <= arms``; it must be a pure function of ``c`` (any
    block computed on demand, identically whoever asks). The reward of a played arm is its mean
    plus ``noise_sd`` times the repetition's tape value. ``reward_scale`` is the sub-Gaussian scale
    ``R`` the learner's code radius assumes by default (``noise_sd`` for the synthetic instance,
    the authors' ``R = 1`` for the noise-free real-data instance).
    """

    @property
    def dim(self) -> int: ...

    @property
    def arms(self) -> int: ...

    @property
    def agents(self) -> int: ...

    @property
    def noise_sd(self) -> float: ...

    @property
    def reward_scale(self) -> float: ...

    def block(self, chunk: int) -> tuple[FloatArray, FloatArray]: ...


@dataclass(frozen=True)
class SyntheticInstance:
    """The synthetic instance of Zhou & Chowdhury (2024), §6 (a value: ``θ*`` and the key of its arm stream).

    Attributes
    ----------
    dim : int
        ``d >= 2`` (the paper: 10).
    arms : int
        ``K >= d`` arms per silo and round (the first ``d`` are the basis arms; the paper: 100).
    agents : int
        ``M >= 1`` silos (the paper: 100).
    theta : tuple of float
        ``θ*`` in raw feature coordinates (``‖θ*‖ = 1/√2``).
    noise_sd : float
        Standard deviation of the reward noise (the paper: 0.5).
    key : tuple of int
        Two 64-bit words keying the arm stream.
    """

    dim: int
    arms: int
    agents: int
    theta: tuple[float, ...]
    noise_sd: float
    key: tuple[int, int]

    def __post_init__(self) -> None:
        d = v.integer("dim", self.dim, minimum=2)
        k = v.integer("arms", self.arms, minimum=d, why="the first d arms are the basis arms")
        m = v.integer("agents", self.agents, minimum=1)
        if CHUNK * m * k * d > MAX_BLOCK:
            raise ParameterError(
                "agents", self.agents, f"agents x arms x dim <= {MAX_BLOCK // CHUNK} (one block's memory)"
            )
        theta = tuple(v.real(f"theta[{i}]", x) for i, x in enumerate(self.theta))
        if len(theta) != d:
            raise ParameterError("theta", self.theta, f"a vector of dim = {d} reals")
        object.__setattr__(self, "dim", d)
        object.__setattr__(self, "arms", k)
        object.__setattr__(self, "agents", m)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "noise_sd", v.nonnegative("noise_sd", self.noise_sd))
        object.__setattr__(self, "key", _key("key", self.key))

    @property
    def theta_array(self) -> FloatArray:
        """``θ*`` as an array of shape ``(d,)``."""
        return np.asarray(self.theta, dtype=np.float64)

    @property
    def reward_scale(self) -> float:
        """The code radius's ``R``: the reward noise sd."""
        return self.noise_sd

    def block(self, chunk: int) -> tuple[FloatArray, FloatArray]:
        """The arms of rounds ``[CHUNK·chunk, CHUNK·(chunk + 1))`` (0-based).

        Returns
        -------
        features : numpy.ndarray, shape (CHUNK, M, K, d)
            The normalized features ``x/‖x‖`` the learner sees.
        means : numpy.ndarray, shape (CHUNK, M, K)
            ``⟨x, θ*⟩`` on the raw features.
        """
        c = v.integer("chunk", chunk, minimum=0)
        d, k, m = self.dim, self.arms, self.agents
        gen = keyed_stream(self.key, c, 0)
        u = gen.standard_normal((CHUNK, m, k, d - 1))
        u /= np.sqrt(np.einsum("...i,...i->...", u, u))[..., None]
        theta = self.theta_array
        # raw arms [u, 1] have norm √2 exactly: normalizing is dividing by √2
        features = np.empty((CHUNK, m, k, d))
        features[..., : d - 1] = u
        features[..., d - 1] = 1.0
        means = u @ theta[: d - 1] + theta[d - 1]
        basis = np.eye(d)
        basis[:, d - 1] = 1.0
        means[:, :, :d] = basis @ theta
        features[:, :, :d, :] = basis
        features *= _HALF_SQRT2
        features[:, :, d - 1, :] = np.eye(d)[d - 1]  # the basis arm e_d has norm 1
        return features, means


@dataclass(frozen=True, eq=False)
class QueryInstance:
    """A real-data instance: contexts are queries, arms their documents (Zhou & Chowdhury (2024), §6).

    Built by :func:`learners.datasets.mslr_linear_instance` (an MSLR-WEB10K file) or
    :func:`learners.datasets.default_linear_instance` (the offline stand-in). The ``Q = M·q``
    queries are stored in ``M`` contiguous blocks of ``q`` queries, block ``i`` belonging to silo
    ``i``; query ``j``'s documents are rows ``offsets[j]:offsets[j + 1]``. In every round each
    silo draws one query of its block uniformly at random (the authors' code's ``randint``); its arms
    are that query's documents, the learner sees their ``features`` and a played document pays its
    ``means`` entry, with no noise.

    **Varying arm counts.** Queries have different numbers of documents (MSLR-WEB10K: 1 to 908);
    a block is padded to its largest query, ``K_c``, by repeating each query's documents
    cyclically. A repeated document is the same arm (same features, same reward, and ties in
    ``argmax`` go to its first copy), so padding changes no decision and no regret.

    **Common random numbers.** The queries of rounds ``[CHUNK c, CHUNK (c + 1))`` are drawn from
    the Philox stream keyed by ``key`` at counter ``(0, c, 0, 0)``: every algorithm run on this
    instance sees the same query sequence. The authors' code redraws the sequence per run
    (``reset_random(seed)``); to do that, give each repetition its own instance
    (:meth:`reseeded`), which shares the data arrays.

    Attributes
    ----------
    features : numpy.ndarray, shape (N, d)
        What the learner sees for each document (row-normalized, as in the authors' code; read-only).
    means : numpy.ndarray, shape (N,)
        The (noise-free) reward of each document (read-only).
    offsets : numpy.ndarray of int64, shape (Q + 1,)
        Query boundaries: ``0 = offsets[0] < ... < offsets[Q] = N``, ``Q`` a multiple of ``agents``.
    agents : int
        ``M >= 1`` silos.
    theta : numpy.ndarray, shape (d,)
        The fitted ``θ*`` (raw feature coordinates; read-only).
    key : tuple of int
        Two 64-bit words keying the query stream.
    reward_scale : float
        The code radius's ``R`` (the authors use 1 on real data).
    source : str
        Where the instance came from.
    """

    features: FloatArray
    means: FloatArray
    offsets: IntArray
    agents: int
    theta: FloatArray
    key: tuple[int, int]
    reward_scale: float = 1.0
    source: str = ""
    _sizes: IntArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        x = np.asarray(self.features, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
            raise ParameterError("features", getattr(x, "shape", None), "a 2-d (N, d) array")
        if not np.isfinite(x).all():
            raise ParameterError("features", "non-finite entries", "finite features")
        n, d = x.shape
        mu = np.asarray(self.means, dtype=np.float64)
        if mu.shape != (n,) or not np.isfinite(mu).all():
            raise ParameterError("means", mu.shape, f"{n} finite rewards, one per row")
        o = np.asarray(self.offsets)
        if not np.issubdtype(o.dtype, np.integer) or o.ndim != 1 or o.size < 2:
            raise ParameterError("offsets", self.offsets, "a 1-d integer array of Q + 1 >= 2 boundaries")
        o = o.astype(np.int64)
        sizes = np.diff(o)
        if o[0] != 0 or o[-1] != n or (sizes <= 0).any():
            raise ParameterError("offsets", self.offsets, f"strictly increasing boundaries from 0 to N={n}")
        m = v.integer("agents", self.agents, minimum=1)
        if sizes.size % m:
            raise ParameterError(
                "agents", self.agents, f"a divisor of the number of queries Q = {sizes.size} (equal blocks)"
            )
        theta = np.asarray(self.theta, dtype=np.float64)
        if theta.shape != (d,) or not np.isfinite(theta).all():
            raise ParameterError("theta", theta.shape, f"a finite vector of dim = {d} reals")
        k = int(sizes.max())
        if CHUNK * m * k * d > MAX_BLOCK:
            raise ParameterError(
                "agents", self.agents, f"agents x arms x dim <= {MAX_BLOCK // CHUNK} (one block's memory)"
            )
        for a in (x, mu, o, theta, sizes):
            a.setflags(write=False)
        object.__setattr__(self, "features", x)
        object.__setattr__(self, "means", mu)
        object.__setattr__(self, "offsets", o)
        object.__setattr__(self, "agents", m)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "key", _key("key", self.key))
        object.__setattr__(self, "reward_scale", v.nonnegative("reward_scale", self.reward_scale))
        object.__setattr__(self, "_sizes", sizes)

    def __repr__(self) -> str:
        src = f", source={self.source!r}" if self.source else ""
        return (
            f"QueryInstance(d={self.dim}, M={self.agents}, queries={self.queries}, "
            f"docs={self.features.shape[0]}, max arms={self.arms}{src})"
        )

    @property
    def dim(self) -> int:
        """``d``, the feature dimension."""
        return int(self.features.shape[1])

    @property
    def arms(self) -> int:
        """The most documents of one query (a block has at most this many arms)."""
        return int(self._sizes.max())

    @property
    def queries(self) -> int:
        """``Q``, the number of queries (``M`` blocks of :attr:`queries_per_agent`)."""
        return int(self._sizes.size)

    @property
    def queries_per_agent(self) -> int:
        return self.queries // self.agents

    @property
    def sizes(self) -> IntArray:
        """Documents per query, shape ``(Q,)`` (read-only)."""
        return self._sizes

    @property
    def noise_sd(self) -> float:
        """0: real-data rewards are noise-free (as in the authors' code)."""
        return 0.0

    def reseeded(self, rng: np.random.Generator) -> QueryInstance:
        """The same data with a query stream keyed by two words drawn from ``rng``."""
        return QueryInstance(
            self.features, self.means, self.offsets, self.agents, self.theta, _words(rng),
            self.reward_scale, self.source,
        )  # fmt: skip

    def query_block(self, chunk: int) -> IntArray:
        """The queries of rounds ``[CHUNK·chunk, CHUNK·(chunk + 1))``, shape ``(CHUNK, M)``: silo ``i``'s
        are in ``[i q, (i + 1) q)``."""
        c = v.integer("chunk", chunk, minimum=0)
        per, m = self.queries_per_agent, self.agents
        drawn = keyed_stream(self.key, c, 0).integers(0, per, size=(CHUNK, m), dtype=np.int64)
        out: IntArray = drawn + per * np.arange(m, dtype=np.int64)
        return out

    def block(self, chunk: int) -> tuple[FloatArray, FloatArray]:
        """The arms of rounds ``[CHUNK·chunk, CHUNK·(chunk + 1))`` (0-based).

        Returns
        -------
        features : numpy.ndarray, shape (CHUNK, M, K_c, d)
            The drawn queries' documents as the learner sees them, padded to ``K_c`` (the largest
            drawn query) by cyclic repetition.
        means : numpy.ndarray, shape (CHUNK, M, K_c)
            Their rewards.
        """
        q = self.query_block(chunk)
        start, size = self.offsets[q], self._sizes[q]
        k = int(size.max())
        rows = start[..., None] + np.arange(k, dtype=np.int64) % size[..., None]
        return self.features[rows], self.means[rows]


@dataclass(frozen=True)
class NoiseTape:
    """The reward noise of one repetition: ``(ξ*, ξ')`` i.i.d. ``N(0, 1)`` per round and silo.

    ``ξ*`` is the noise of the best arm and ``ξ'`` that of any other played arm (module docstring).
    """

    key: tuple[int, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", _key("key", self.key))

    @classmethod
    def draw(cls, rng: np.random.Generator) -> NoiseTape:
        """The tape keyed by two words drawn from ``rng`` (same seed, same noise)."""
        return cls(_words(rng))

    def block(self, chunk: int, agents: int) -> FloatArray:
        """``(ξ*, ξ')`` of rounds ``[CHUNK·chunk, CHUNK·(chunk + 1))``, shape ``(CHUNK, M, 2)``."""
        c = v.integer("chunk", chunk, minimum=0)
        m = v.integer("agents", agents, minimum=1)
        return keyed_stream(self.key, c, 1).standard_normal((CHUNK, m, 2))


def draw_synthetic(
    rng: np.random.Generator, dim: int = 10, arms: int = 100, agents: int = 100, noise_sd: float = 0.5
) -> SyntheticInstance:
    """Zhou & Chowdhury (2024), §6's synthetic instance: ``θ* = [0.5 v/‖v‖, 0.5]``, a stream key from ``rng``.

    Defaults are the paper's (``d = 10``, ``K = 100``, ``M = 100``, ``σ = 0.5``); the paper fixes the
    instance across runs (its code seeds 2), and so does passing one instance to every repetition.
    """
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    d = v.integer("dim", dim, minimum=2)
    vec = rng.standard_normal(d - 1)
    norm = float(np.linalg.norm(vec))
    while not norm > 0 or not math.isfinite(norm):  # pragma: no cover - probability 0
        vec = rng.standard_normal(d - 1)
        norm = float(np.linalg.norm(vec))
    theta = np.append(0.5 * vec / norm, 0.5)
    return SyntheticInstance(d, arms, agents, tuple(float(x) for x in theta), noise_sd, _words(rng))
