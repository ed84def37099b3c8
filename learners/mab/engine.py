"""The vectorized engine of the distributed MAB paper's elimination (Chowdhury & Zhou 2023, Algorithm 1).

Batch ``b`` pulls each active arm ``l(b)`` times, one new user per pull; the analyzer's estimate
``μ̂ = z / l(b)`` and the radius ``β(b)`` of eq. (2) (:mod:`learners.mab.radius`) eliminate every
arm whose UCB is below the largest LCB (non-strict, so the empirical best arm survives). The
last, partial batch is never aggregated nor released: Algorithm 1 exits at ``T`` without
aggregating, since a partial batch carries too little noise.

**Vectorization.** The state of all ``R`` repetitions is held in arrays with a leading axis ``R``
(active sets ``(R, K)``, estimates, radii); the noise of a batch is one draw for all its
aggregates, and the user-level protocol releases all of a batch's aggregates in one call. The
pulls of a batch are array operations per repetition and arm block, reading the repetition's
reward table (:class:`learners.environments.RewardTable`) :data:`CHUNK` rounds at a time, so
memory stays bounded for any horizon. No Python loop runs over users or rounds.

**Rewards and regret.** Repetition ``r`` reads the table keyed by ``tapes[r]``: independent rewards
per arm and round, as the authors' released code draws them (Chowdhury & Zhou 2023, §7 and
App. J), and the same table for every algorithm given a fresh generator of the same seed (common
random numbers across algorithms). The pseudo-regret ``Σ_t Δ_{a_t}`` is exact; the realized
regret ``Σ_t r_t(a*) - r_t(a_t)`` reads the best arm's column of the same table.

**Noise paths.** ``noise="total"`` (the default, fast) draws each aggregate's *total* noise directly
(:func:`learners.mab.recipes.total_noise`; equal in distribution: ``n`` Pólya(1/n, β) differences
sum to ``Lap_Z`` with decay ``β``; Skellam shares to the Skellam with ``n`` times the rates; local
discrete Laplace shares to a difference of negative binomials; discrete Gaussian shares are
summed) and releases ``y = (Σ x̂ + η) mod m`` to the analyzer; ``noise="shares"`` runs
:class:`learners.protocols.Protocol` user by user (every share, secure aggregation, the shuffler,
dropouts with top-up). Both encode every reward with randomized rounding (``x̂_i``) and decode
with the analyzer's ``τ`` rule, so decoding failures happen as they would in deployment.

**Dropouts** (``noise="shares"``, deviation from the paper, which has none). The survivors of a
batch top up the noise of the users who dropped out, so the release carries exactly the noise that
was accounted; its sum holds the rewards of the ``n'`` survivors only, so the estimate is
``μ̂ = z / n'`` and the radius of eq. (2) is taken with ``n'`` users (Hoeffding over ``n'``
rewards, the noise bound ``N`` over ``n'``), per arm. Dividing by ``l(b)`` would bias every
estimate by the dropout fraction.

**Privacy: the ledger is written while the run runs.** Each release composes its events into an
:class:`~accounting.accountant.Accountant` at the moment it is made (:meth:`Protocol.release`, or
:meth:`Protocol.account` on the fast path; DP-SE's Laplace event likewise). The run keeps one
ledger per released batch size, with the number of releases of that size
(:attr:`RunResult.ledgers`); :attr:`RunResult.privacy` answers them (:mod:`learners.mab.privacy`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.accountant import Accountant
from learners.environments import MABInstance, RewardTable
from learners.errors import ParameterError, ParameterTypeError, ProtocolError
from learners.mab.privacy import Privacy, privacy_of, route_name
from learners.mab.radius import dpse_size, radius, radius_terms
from learners.mab.recipes import batch_parameters, batch_protocol, dpse_event, dpse_noise, total_noise
from learners.mab.spec import Learner, real_in
from learners.protocols import BIG_MODULUS, analyze, encode
from learners.runs import checkpoint_rounds, read_only

__all__ = ["CHUNK", "PULL_OPERATIONS", "RunResult", "footprint", "run"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

#: Rounds of one repetition processed at once (bounds the memory of a batch: ~10 arrays of this).
CHUNK = 2**21


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of :func:`run` for ``R`` repetitions (arrays read-only).

    Attributes
    ----------
    learner : Learner
    horizon : int
    rounds : numpy.ndarray of int64, shape (C,)
        Checkpoints: regret after this many rounds.
    pseudo_regret : numpy.ndarray of float64, shape (R, C)
        ``Σ_{s <= t} Δ_{a_s}``.
    realized_regret : numpy.ndarray of float64, shape (R, C)
        ``Σ_{s <= t} r_s(a*) - r_s(a_s)``, with the rewards of every arm drawn independently at
        every round (the repetition's :class:`~learners.environments.RewardTable`).
    released : numpy.ndarray of int64, shape (R,)
        Aggregates released per repetition.
    final_arms : numpy.ndarray of int64, shape (R,)
        Active arms left at the end.
    estimates : numpy.ndarray of float64, shape (R, K)
        The last released estimate ``μ̂`` of each arm (``nan`` for an arm never released).
    batch_sizes : tuple of int
        The distinct batch sizes released in some repetition.
    releases : mapping of int to int
        Aggregates released of each batch size (over arms and repetitions).
    bits : int
        Bits each user sends (the largest over released batches; 0 without a protocol).
    delta : float
        The δ of :attr:`privacy`.
    route : str
        The accountant route :attr:`privacy` answers the RDP and zCDP ledgers by.
    dropped, topped_up : numpy.ndarray of int64, shape (R,)
        Users who dropped out, and shares the survivors drew for them (``noise="shares"``).
    """

    learner: Learner
    horizon: int
    rounds: IntArray
    pseudo_regret: FloatArray
    realized_regret: FloatArray
    released: IntArray
    final_arms: IntArray
    estimates: FloatArray
    batch_sizes: tuple[int, ...]
    releases: Mapping[int, int]
    bits: int
    delta: float
    route: str
    dropped: IntArray
    topped_up: IntArray
    _ledgers: Mapping[int, Accountant] = field(repr=False)

    @property
    def ledgers(self) -> dict[int, Accountant]:
        """The ledger of one user of each released batch size (copies: the run's own are its record).

        Written while the run ran: each release composed its events into the ledger of its batch
        size when it was made. Releases of one size are identical (same parameters), so one
        ledger per size holds all a user of such a batch spent; :attr:`releases` counts them.
        """
        return {n: acc.copy() for n, acc in self._ledgers.items()}

    def ledger(self, batch_size: int) -> Accountant:
        """The ledger of one user of a released batch of ``batch_size`` (a copy)."""
        n = v.integer("batch_size", batch_size, minimum=1)
        if n not in self._ledgers:
            raise ParameterError(
                "batch_size",
                batch_size,
                "a released batch size: one of " + ", ".join(map(str, self.batch_sizes)),
            )
        return self._ledgers[n].copy()

    @cached_property
    def privacy(self) -> Privacy:
        """What the run spent (:func:`privacy_of` on its ledgers), computed on first access.

        Answering a ledger exactly can take long for a wide lattice (a Skellam or discrete Gaussian
        sum over a large batch); answers are memoized per process, so a ledger is answered once.
        """
        return privacy_of(self.learner, self._ledgers, self.delta, self.route)


@dataclass
class _Segment:
    """The pulls of one repetition in one batch: per-arm sums and the realized regret."""

    sum_x: FloatArray
    sum_xhat: IntArray | None
    values: FloatArray | None
    realized_at: FloatArray  # realized regret of the segment after each requested offset
    realized: float  # over the whole segment


def _segment(
    table: RewardTable,
    start: int,
    arms: IntArray,
    size: int,
    pulls: int,
    best: int,
    offsets: IntArray,
    g: int | None,
    rng: np.random.Generator,
    keep: bool,
) -> _Segment:
    """Pull ``arms`` in blocks of ``size`` (block ``j`` is arm ``arms[j]``) for ``pulls`` rounds.

    Round ``i`` of the segment is round ``start + i`` of the repetition: its reward is read from the
    table's column of the arm pulled, and the best arm's column gives the realized regret, at most
    :data:`CHUNK` rounds at a time; with ``g`` every reward is also encoded (randomized rounding
    from ``rng``).
    """
    k = arms.size
    sum_x = np.zeros(k)
    sum_xhat = np.zeros(k, dtype=np.int64) if g is not None else None
    values = np.zeros((k, size)) if keep else None
    realized_at = np.zeros(offsets.size)
    running = 0.0
    for c0 in range(0, pulls, CHUNK):
        c1 = min(c0 + CHUNK, pulls)
        blocks = np.arange(c0 // size, (c1 - 1) // size + 1)
        lo = np.maximum(c0, blocks * size)
        hi = np.minimum(c1, (blocks + 1) * size)
        x = np.empty(c1 - c0)
        diff = np.zeros(c1 - c0)
        for j, a0, a1 in zip(blocks.tolist(), lo.tolist(), hi.tolist(), strict=True):
            arm = int(arms[j])
            rewards = table.rewards(arm, start + a0, start + a1)
            x[a0 - c0 : a1 - c0] = rewards
            if arm != best:  # r_t(a*) - r_t(a*) = 0 on the best arm's own blocks
                diff[a0 - c0 : a1 - c0] = table.rewards(best, start + a0, start + a1) - rewards
        starts = lo - c0
        sum_x[blocks] += np.add.reduceat(x, starts)
        if sum_xhat is not None:
            assert g is not None
            sum_xhat[blocks] += np.add.reduceat(encode(x, g, rng), starts)
        if values is not None:
            values.reshape(-1)[c0:c1] = x
        cum = np.cumsum(diff)
        inside = (offsets > c0) & (offsets <= c1)
        realized_at[inside] = running + cum[offsets[inside] - c0 - 1]
        running += float(cum[-1])
    return _Segment(sum_x, sum_xhat, values, realized_at, running)


def _pseudo(gaps: FloatArray, size: int, offsets: IntArray) -> FloatArray:
    """Pseudo-regret after ``offsets`` rounds of blocks of ``size`` pulls with these ``gaps``."""
    k = gaps.size
    cum = np.concatenate(([0.0], np.cumsum(gaps * size)))
    j = offsets // size
    return np.asarray(cum[j] + gaps[np.minimum(j, k - 1)] * (offsets - j * size), dtype=np.float64)


class _State:
    """The learner's state for all repetitions (leading axis ``R``), and the run's ledgers."""

    def __init__(
        self, learner: Learner, means: FloatArray, horizon: int, rounds: IntArray, tables: list[RewardTable]
    ) -> None:
        R, K = means.shape
        self.learner = learner
        self.horizon = horizon
        self.rounds = rounds
        self.tables = tables
        self.gaps = means.max(axis=1, keepdims=True) - means
        self.best = np.argmax(means, axis=1)
        self.active = np.ones((R, K), dtype=bool)
        self.t = np.zeros(R, dtype=np.int64)
        self.pseudo_total = np.zeros(R)
        self.realized_total = np.zeros(R)
        self.pseudo = np.zeros((R, rounds.size))
        self.realized = np.zeros((R, rounds.size))
        self.done = np.zeros(R, dtype=bool)
        self.released = np.zeros(R, dtype=np.int64)
        self.dropped = np.zeros(R, dtype=np.int64)
        self.topped_up = np.zeros(R, dtype=np.int64)
        self.estimates = np.full((R, K), np.nan)
        self.bits = 0
        # one ledger per released batch size, written at release time, and the releases it covers
        self.ledgers: dict[int, Accountant] = {}
        self.releases: dict[int, int] = {}
        # cumulative estimates (forgetting=False): per-arm sums and users, per-repetition noise bound
        self.z_sum = np.zeros((R, K))
        self.pulls_sum = np.zeros((R, K))
        self.noise_sum = np.zeros(R)

    def offsets(self, r: int, pulls: int) -> tuple[IntArray, IntArray]:
        """Checkpoint indices inside the next ``pulls`` rounds of repetition ``r``, and their offsets."""
        t0 = int(self.t[r])
        lo, hi = np.searchsorted(self.rounds, [t0 + 1, t0 + pulls + 1])
        idx = np.arange(lo, hi)
        return idx, (self.rounds[idx] - t0).astype(np.int64)

    def advance(
        self, r: int, arms: IntArray, size: int, pulls: int, seg: _Segment, idx: IntArray, offsets: IntArray
    ) -> None:
        """Record ``pulls`` rounds of blocks of ``size`` (checkpoints ``idx`` at ``offsets``)."""
        pseudo = _pseudo(self.gaps[r, arms], size, np.append(offsets, pulls))
        self.pseudo[r, idx] = self.pseudo_total[r] + pseudo[:-1]
        self.realized[r, idx] = self.realized_total[r] + seg.realized_at
        self.pseudo_total[r] += float(pseudo[-1])
        self.realized_total[r] += seg.realized
        self.t[r] += pulls

    def record(self, n: int, ledger: Accountant, releases: int) -> None:
        """Keep the ledger of a batch-release of size ``n`` that released ``releases`` aggregates.

        Every release of size ``n`` has the same parameters, hence the same events: the first one
        is the ledger of a user of any of them, and later ones are checked against it.
        """
        known = self.ledgers.get(n)
        if known is None:
            self.ledgers[n] = ledger
        elif known.ledger != ledger.ledger:  # pragma: no cover - parameters depend on n only
            raise ProtocolError(f"two releases of batches of {n} users composed different events")
        self.releases[n] = self.releases.get(n, 0) + releases


def _check_run(
    learner: object,
    instances: object,
    horizon: object,
    tapes: object,
    rng: object,
    checkpoints: object,
) -> tuple[list[MABInstance], int, list[np.random.Generator], IntArray]:
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.mab.Learner (see make_learner)")
    if not isinstance(tapes, Sequence) or not tapes:
        raise ParameterError("tapes", tapes, "a non-empty sequence of numpy Generators (one per repetition)")
    for i, gen in enumerate(tapes):
        if not isinstance(gen, np.random.Generator):
            raise ParameterTypeError(f"tapes[{i}]", gen, "a numpy.random.Generator")
    R = len(tapes)
    if isinstance(instances, MABInstance):
        insts = [instances] * R
    elif isinstance(instances, Sequence) and len(instances) == R:
        insts = list(instances)
        for i, inst in enumerate(insts):
            if not isinstance(inst, MABInstance):
                raise ParameterTypeError(f"instances[{i}]", inst, "a learners.environments.MABInstance")
    else:
        raise ParameterError("instances", instances, f"one MABInstance or a sequence of R={R} of them")
    K = insts[0].arms
    if any(inst.arms != K for inst in insts):
        raise ParameterError("instances", [i.arms for i in insts], "instances with the same number of arms")
    T = v.integer("horizon", horizon, minimum=2)
    if T < K:
        raise ParameterError("horizon", horizon, f"an integer >= K = {K} (every arm is pulled once)")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    C = v.integer("checkpoints", checkpoints, minimum=1)
    rounds = checkpoint_rounds(T, C)
    return insts, T, list(tapes), rounds


#: The operations a simulated pull counts for in a work estimate (:mod:`learners.budget`): pulls
#: run at about 3e7 a second a core (:data:`learners.schema.MAX_HORIZON`), multiply-adds at ~1e9.
PULL_OPERATIONS = 32

#: The arrays of the values' shape a ``noise = "shares"`` release holds at once: the batch's
#: values, their encoding, ring residues, the shares' noise, their sum and the shuffled or masked
#: copy (:meth:`learners.protocols.template.Protocol.release`).
_SHARE_COPIES = 6


def footprint(
    learner: Learner, R: int, K: int, T: int, checkpoints: int
) -> tuple[dict[str, tuple[int, ...]], int]:
    """The arrays (8-byte items) a :func:`run` of ``R`` repetitions of ``K`` arms holds at its peak,
    by name and shape, and its work: ``T R`` pulls of :data:`PULL_OPERATIONS` operations.

    The state's per-arm statistics and curves (:class:`_State`), a segment's buffers of
    :data:`CHUNK` rounds (:func:`_segment`), a release's per-arm sums (:func:`_release`) and, with
    ``noise = "shares"``, every user's value of the largest complete batch of all repetitions (the
    batch ``l(b)`` of ``K`` arms that fits in ``T``, :func:`_batch`), in :data:`_SHARE_COPIES`.
    """
    out: dict[str, tuple[int, ...]] = {
        "state.per_arm": (5, R, K),  # gaps, estimates, z_sum, pulls_sum, active (a byte each, counted 8)
        "state.curves": (2, R, min(checkpoints, T)),
        "segment": (2, min(CHUNK, T)),
        "release.per_arm": (3, R, K),
    }
    if learner.noise == "shares":
        sizes = [learner.eta**b for b in range(1, T.bit_length()) if 2 * learner.eta**b <= T]
        users = max((min(K, T // n) * n for n in sizes), default=0)
        out["release.shares"] = (_SHARE_COPIES, R, users)
    return out, T * R * PULL_OPERATIONS


def run(
    learner: Learner,
    instances: MABInstance | Sequence[MABInstance],
    horizon: int,
    *,
    tapes: Sequence[np.random.Generator],
    rng: np.random.Generator,
    checkpoints: int = 1000,
    delta: float = 1e-6,
    route: str = "auto",
) -> RunResult:
    """Run ``learner`` for ``R = len(tapes)`` repetitions of ``horizon`` rounds.

    Parameters
    ----------
    learner : Learner
        The algorithm and its settings (:func:`make_learner`).
    instances : MABInstance or sequence of MABInstance
        One instance for every repetition, or one per repetition (same ``K``).
    horizon : int
        ``T >= K``.
    tapes : sequence of numpy.random.Generator
        Repetition ``r`` reads the reward table keyed by two words drawn from ``tapes[r]``
        (:meth:`~learners.environments.RewardTable.draw`): give every algorithm a fresh generator
        from the same seed and they see the same rewards (common random numbers).
    rng : numpy.random.Generator
        The randomness of the protocol (rounding, noise, masks, dropouts) for all repetitions.
    checkpoints : int
        Regret is recorded after ``ceil(c T / C)`` rounds, ``c = 1..C``.
    delta : float
        δ in ``(0, 1)`` of the ``(ε, δ)`` report of the RDP and zCDP variants.
    route : str
        The accountant route :attr:`RunResult.privacy` answers the RDP and zCDP ledgers by (see
        :func:`privacy_of`; the pure variants are answered by the pure route).

    Returns
    -------
    RunResult
    """
    insts, T, gens, rounds = _check_run(learner, instances, horizon, tapes, rng, checkpoints)
    d = real_in("delta", delta, 0.0, 1.0)
    if d >= 1:
        raise ParameterError("delta", delta, "a probability in (0, 1)")
    how = route_name(route)
    means = np.stack([np.asarray(inst.means, dtype=np.float64) for inst in insts])
    tables = [RewardTable.draw(inst, gen) for inst, gen in zip(insts, gens, strict=True)]
    st = _State(learner, means, T, rounds, tables)
    b = 0
    while not st.done.all():
        b += 1
        if not _batch(st, b, rng):
            break
    return RunResult(
        learner=learner,
        horizon=T,
        rounds=read_only(rounds),
        pseudo_regret=read_only(st.pseudo),
        realized_regret=read_only(st.realized),
        released=read_only(st.released),
        final_arms=read_only(st.active.sum(axis=1).astype(np.int64)),
        estimates=read_only(st.estimates),
        batch_sizes=tuple(sorted(st.releases)),
        releases=MappingProxyType(dict(sorted(st.releases.items()))),
        bits=st.bits,
        delta=d,
        route=how,
        dropped=read_only(st.dropped),
        topped_up=read_only(st.topped_up),
        _ledgers=MappingProxyType(dict(sorted(st.ledgers.items()))),
    )


def _batch(st: _State, b: int, rng: np.random.Generator) -> bool:
    """Batch ``b`` of every repetition still running: repetitions with one arm left play it to ``T``,
    the others pull their active arms ``l(b)`` times each and release the batch if it is complete.
    ``False`` when no repetition is left to play."""
    learner, T = st.learner, st.horizon
    k = st.active.sum(axis=1)
    for last in np.flatnonzero(~st.done & (k == 1)).tolist():
        _finish(st, last, rng)
    live = np.flatnonzero(~st.done)
    if not live.size:
        return False
    if learner.name == "dp-se":
        sizes = dpse_size(learner, k[live].astype(np.float64), b)
    else:
        sizes = np.full(live.size, learner.eta**b, dtype=np.int64)
    g = batch_parameters(learner, int(sizes[0]), T).g if learner.variant is not None else None
    complete: list[int] = []
    segments: dict[int, _Segment] = {}
    for i, r in enumerate(live.tolist()):
        arms = np.flatnonzero(st.active[r])
        size = int(sizes[i])
        want = arms.size * size
        pulls = int(min(want, T - st.t[r]))
        idx, offsets = st.offsets(r, pulls)
        seg = _segment(
            st.tables[r], int(st.t[r]), arms, size, pulls, int(st.best[r]), offsets, g, rng,
            keep=learner.noise == "shares" and pulls == want,
        )  # fmt: skip
        st.advance(r, arms, size, pulls, seg, idx, offsets)
        if pulls < want:
            st.done[r] = True  # the partial last batch: never aggregated, never released
        else:
            complete.append(r)
            segments[r] = seg
    if complete:
        _release(st, b, np.array(complete), sizes[np.searchsorted(live, complete)], segments, rng)
    st.done |= st.t >= T
    return True


def _finish(st: _State, r: int, rng: np.random.Generator) -> None:
    """One arm left: pull it until ``T`` (nothing is released: no decision depends on it)."""
    arm = np.flatnonzero(st.active[r])
    remaining = int(st.horizon - st.t[r])
    idx, offsets = st.offsets(r, remaining)
    if arm[0] == st.best[r]:
        seg = _Segment(np.zeros(1), None, None, np.zeros(offsets.size), 0.0)
    else:
        table, start, best = st.tables[r], int(st.t[r]), int(st.best[r])
        seg = _segment(table, start, arm, remaining, remaining, best, offsets, None, rng, False)
    st.advance(r, arm, remaining, remaining, seg, idx, offsets)
    st.done[r] = True


def _dropouts(rng: np.random.Generator, shape: tuple[int, ...], fraction: float) -> BoolArray:
    """``floor(fraction · n)`` random users of each of the ``shape[0]`` aggregates drop out."""
    order = np.argsort(rng.random(shape), axis=1)
    return np.asarray(order < math.floor(fraction * shape[1]), dtype=np.bool_)


def _release(
    st: _State,
    b: int,
    reps: IntArray,
    sizes: IntArray,
    segments: dict[int, _Segment],
    rng: np.random.Generator,
) -> None:
    """Aggregate, account, estimate and eliminate for the repetitions ``reps`` that finished batch ``b``.

    Each released aggregate's events are composed into a ledger here, as it is released: one
    ledger per batch-release (all its aggregates, over arms and repetitions, have the same
    parameters; a user is in one of them), kept per batch size by :meth:`_State.record`.
    """
    learner = st.learner
    active = st.active[reps]
    k = active.sum(axis=1).astype(np.float64)
    per_rep = active.sum(axis=1)
    z = np.zeros(active.shape)
    sum_x = np.zeros(active.shape)
    for i, r in enumerate(reps.tolist()):
        sum_x[i, active[i]] = segments[r].sum_x
    # users whose rewards each estimate holds: l(b), or the survivors of a batch with dropouts
    users = np.where(active, sizes[:, None], 0).astype(np.float64)
    if learner.name == "se":
        z = sum_x
    elif learner.name == "dp-se":
        # one law, built once: it draws the released noise and is the ledger's event
        law = dpse_noise(learner)
        z[active] = sum_x[active] + law.sample(rng, int(active.sum()))
        for n in np.unique(sizes).tolist():
            st.record(int(n), Accountant().compose(dpse_event(law)), int(per_rep[sizes == n].sum()))
    else:
        n = int(sizes[0])
        protocol = batch_protocol(learner, n, st.horizon)
        # the protocol's own parameters: the fast path's total noise is drawn from the very object
        # whose mechanisms protocol.account composes into the ledger
        p = protocol.params
        st.bits = max(st.bits, p.bits)
        ledger = Accountant()
        if learner.noise == "total":
            xhat = np.zeros(active.shape, dtype=np.int64)
            for i, r in enumerate(reps.tolist()):
                seg_xhat = segments[r].sum_xhat
                assert seg_xhat is not None
                xhat[i, active[i]] = seg_xhat
            noisy = xhat[active] + total_noise(learner, p, rng, int(active.sum()))
            if p.m >= BIG_MODULUS:  # residues of a modulus this large need Python integers
                noisy = noisy.astype(object)
            z[active] = analyze(np.mod(noisy, p.m), n, p.g, p.tau, p.m)
            protocol.account(ledger)  # the release just made: what the protocol would compose
        else:
            # every aggregate of the batch, over repetitions and arms, in one protocol release
            blocks = [segments[r].values for r in reps.tolist()]
            values = np.concatenate([x for x in blocks if x is not None])
            dropped = _dropouts(rng, values.shape, learner.dropout) if learner.dropout else None
            rel = protocol.release(values, rng, accountant=ledger, dropped=dropped)
            z[active] = rel.estimate
            users[active] = n - rel.dropped
            first = np.concatenate(([0], np.cumsum(per_rep)[:-1]))
            st.dropped[reps] += np.add.reduceat(rel.dropped, first)
            st.topped_up[reps] += np.add.reduceat(rel.topped_up.sum(axis=1), first)
        st.record(n, ledger, int(active.sum()))
    st.released[reps] += per_rep
    hoeffding, noise = radius_terms(learner, k, b, int(sizes[0]), st.horizon)
    if learner.forgetting:
        sums, pulls, bound = z, users, noise
    else:
        st.z_sum[reps] += z
        st.pulls_sum[reps] += users
        st.noise_sum[reps] += noise
        sums, pulls, bound = st.z_sum[reps], st.pulls_sum[reps], st.noise_sum[reps]
    pulls = np.where(active, pulls, 1.0)  # inactive arms: no estimate (avoid 0/0)
    mu = sums / pulls
    beta = radius(learner.radius_scale, hoeffding[:, None], bound[:, None], pulls)
    lcb = np.where(active, mu - beta, -np.inf)
    keep = active & (mu + beta >= lcb.max(axis=1, keepdims=True))
    st.estimates[reps] = np.where(active, mu, st.estimates[reps])
    st.active[reps] = keep
