"""The R / S / A template for one batch, with the noise placed by the trust model.

:class:`Protocol` runs the randomizer (:mod:`~learners.protocols.randomizer`), secure aggregation
(:mod:`~learners.protocols.aggregation`) or the shuffler (:mod:`~learners.protocols.shuffler`)
and the analyzer (:mod:`~learners.protocols.analyzer`) for one
:class:`~accounting.papers.distributed_dp_mab.ProtocolParameters`, placing the noise where the
trust model of its :class:`~accounting.papers.distributed_dp_mab.Variant` says
(:class:`TrustModel`; Chowdhury & Zhou 2023,
Theorems 1-6 and App. H), and reports each release's mechanisms (:func:`release_mechanisms`) to
an optional :class:`~accounting.accountant.Accountant`.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accounting import validate as v
from accounting.accountant import Accountant, Event
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism, PureDP
from accounting.noise import LatticeNoise, Randomness, check_randomness
from accounting.papers.distributed_dp_mab import ProtocolParameters, Variant
from learners.errors import (
    DropoutError,
    ParameterError,
    ParameterTypeError,
    PartialBatchError,
    ProtocolError,
    RecoveryError,
)
from learners.protocols.aggregation import (
    PAIRWISE_MAX_USERS,
    SECURE_AGGREGATIONS,
    alive_mask,
    expand_mask,
    masked_sum,
    modular_sum,
)
from learners.protocols.analyzer import decode, divide
from learners.protocols.arithmetic import FloatArray, IntArray, add_mod, describe, generator, reals, ring
from learners.protocols.randomizer import ShareSampler, draw_shares, encode, sampled_shares
from learners.protocols.shuffler import shuffle

__all__ = ["DROPOUT_POLICIES", "Protocol", "Release", "TrustModel", "release_mechanisms", "trust_model"]


#: What to do when users drop out of a batch whose noise is split among them.
DROPOUT_POLICIES = ("top-up", "refuse")

_RELAXED_SECAGG = "relaxed SecAgg (Cheu & Yan), Theorem 3: 2 eps_hat = eps/2"


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
    """Where a :class:`~accounting.papers.distributed_dp_mab.Variant` of the distributed MAB paper
    adds its noise."""
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
        raise ParameterTypeError("params", params, "accounting.papers.distributed_dp_mab.ProtocolParameters")
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
    params : accounting.papers.distributed_dp_mab.ProtocolParameters
        From :func:`accounting.papers.distributed_dp_mab.protocol_parameters`: ``n, g, τ, m`` and the noise.
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
        threshold = (
            n // 2 + 1 if self.threshold is None else v.integer("threshold", self.threshold, minimum=1)
        )
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
        count = v.integer("coordinates", coordinates, minimum=1)
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
            raw = sampled_shares(self.share_sampler, rng, shape)
        else:
            raw = draw_shares(self.noise, rng, shape, exact=self.exact)
        return ring(raw, self.params.m, "noise")

    def _top_up(self, counts: NDArray[np.int64], rng: Randomness, shape: tuple[int, ...]) -> IntArray:
        """Each survivor's recovery-round contribution: the sum of ``counts`` fresh shares, mod ``m``."""
        m = self.params.m
        total = ring(np.zeros(shape, dtype=np.int64), m)
        for level in range(int(counts.max())):  # usually one level: k <= n - threshold < survivors
            drawing = counts > level
            total[drawing] = add_mod(total[drawing], self._draw(rng, (int(drawing.sum()), *shape[2:])), m)
        return total

    def _secure_sum(
        self, y: IntArray, rng: np.random.Generator, alive: NDArray[np.bool_], recovery: IntArray | None
    ) -> IntArray:
        m = self.params.m
        if self.secure_aggregation == "modular":
            arrives = expand_mask(alive, y.ndim)
            total = modular_sum(np.where(arrives, y, 0), m)
            if recovery is not None:
                total = add_mod(total, modular_sum(np.where(arrives, recovery, 0), m), m)
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
        gen = generator("rng", rng)
        source: Randomness = gen if noise_rng is None else check_randomness(noise_rng, "noise_rng")
        if accountant is not None and not isinstance(accountant, Accountant):
            raise ParameterTypeError("accountant", accountant, "an accounting.accountant.Accountant or None")
        xs = reals("x", x, "an array of reals in [0, 1]")
        if xs.ndim not in (2, 3):
            raise ParameterError("x", describe(xs), "values of shape (R, n) or (R, n, d)")
        users = xs.shape[1]
        if users < p.users:
            raise PartialBatchError(users, p.users)
        if users > p.users:
            raise ParameterError("x", describe(xs), f"a batch of exactly n={p.users} users (axis 1)")
        alive, missing = self._survivors(dropped, xs.shape[0])

        xhat = encode(xs, p.g, gen)
        view, topped_up = self._aggregate(xhat, gen, source, alive, missing)
        decoded = decode(view, p.users, p.g, p.tau, p.m)
        events = self.account(accountant, math.prod(xhat.shape[2:]))
        return Release(
            model=self.model,
            estimate=_readonly(divide(decoded, p.g)),
            decoded=_readonly(decoded),
            view=_readonly(view),
            dropped=_readonly(missing),
            topped_up=_readonly(topped_up),
            events=events,
        )

    def _survivors(
        self, dropped: ArrayLike | None, repetitions: int
    ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
        """The users whose messages arrive, ``(R, n)``, and the number missing in each repetition;
        a dropout this protocol cannot release through is refused (:meth:`release` says which
        error when)."""
        n = self.params.users
        alive = alive_mask(dropped, repetitions, n)
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
        return alive, missing

    def _aggregate(
        self,
        xhat: NDArray[np.int64],
        gen: np.random.Generator,
        source: Randomness,
        alive: NDArray[np.bool_],
        missing: NDArray[np.int64],
    ) -> tuple[IntArray, NDArray[np.int64]]:
        """The noise placed by the trust model and the server's view ``yhat`` of the encodings
        ``xhat``, with the shares each survivor drew in the recovery round (``topped_up``)."""
        m = self.params.m
        model = self.model
        shape = xhat.shape
        repetitions, n = shape[:2]
        y = ring(xhat, m)
        if model is not TrustModel.CENTRAL:
            y = add_mod(y, self._draw(source, shape), m)
        topping = model in (TrustModel.DISTRIBUTED, TrustModel.SHUFFLE) and bool(missing.any())
        topped_up = _round_robin(alive) if topping else np.zeros((repetitions, n), dtype=np.int64)

        if model is TrustModel.SHUFFLE:
            if topping:
                # The k extra messages (fresh shares) take the dropped users' slots; the shuffle
                # makes slots meaningless, and topped_up records who sent them.
                y = y.copy()
                y[~alive] = self._draw(source, (int(missing.sum()), *shape[2:]))
            view = modular_sum(shuffle(y, gen), m)  # the analyzer sums the multiset mod m first
        elif model is TrustModel.LOCAL:
            view = modular_sum(np.where(expand_mask(alive, y.ndim), y, 0), m)
        else:
            recovery = self._top_up(topped_up, source, shape) if topping else None
            view = self._secure_sum(y, gen, alive, recovery)
            if model is TrustModel.CENTRAL:
                view = add_mod(view, self._draw(source, (repetitions, *shape[2:])), m)
        return view, topped_up
