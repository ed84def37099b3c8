"""The vectorized engine of the federated LinUCB paper's algorithms (Zhou & Chowdhury 2024).

``M`` silos each serve one user per round; every silo plays LinUCB on ``V = λI + W̃_syn (+ W_i)``
and ``θ̂ = V^{-1}(Ũ_syn (+ U_i))`` and, at synchronisations, sends its batch's ``U_i = Σ x y`` and
``W_i = Σ x xᵀ`` through a privacy protocol to the server (:mod:`learners.linear.state`), whose
noisy *prefix sums* replace ``Ũ_syn`` and ``W̃_syn`` (Algorithms 1 and 2).

**Deviations from the paper and its code** (documented choices):

* rewards enter the statistics clipped to ``[-c, c]`` in the private variants (the synthetic
  rewards are Gaussian and unbounded, so Assumption 4.1 and any finite sensitivity fail without
  it; the code does not clip); the non-private variants do not clip unless ``clip`` is given;
* ``V`` is made positive definite at each sync by clipping the eigenvalues of ``λI + W̃_syn`` at
  ``eig_floor · λ`` (the nearest such symmetric matrix in Frobenius norm; counted per repetition,
  :attr:`RunResult.clipped`); the paper has no safeguard and relies on ``λ`` making ``V`` definite
  with high probability (``λ = 2Σ_N`` in the proof of Lemma C.4, Zhou & Chowdhury (2024), App. C),
  which fails now and then at large ``d``. Between syncs ``V_{t,i}`` only gains PSD terms, so it
  stays definite;
* ``V^{-1}`` is obtained by ``numpy.linalg.solve`` at each sync and updated by Sherman–Morrison
  rank-one updates for the silo's own rounds (recomputed from scratch at every sync);
* the radius and ``λ`` default to the code's constants (``radius="code"``, ``regularizer=None``):
  ``β_t = radius_scale (√λ S + R √(d log(1 + t M/(dλ)) + log(1/α)))`` with ``S = √d``, ``R`` the reward noise
  scale; ``λ = √M`` without privacy, ``λ = √(Mκ) σ0 (√(κ + log(1/α)) + √d)`` with it.
  ``radius="theory"`` is Lemma C.4's ``√(2 log(2/α) + d log(1 + Mt/(dλ_min))) + √λ_max + ν`` with
  ``λ_min = λ/2``, ``λ_max = 3λ/2``, ``ν = σ_tot(√d + √(2 log(4K/α)))/√λ_min`` (our reconstruction
  of the lemma, constants 1);
* Dubey & Pentland's threshold defaults to ``D = T log(MT)/(dM)`` (Wang et al. 2020's choice,
  override with ``threshold``), their privatizer is protocol P's tree over at most ``T`` syncs, at
  the same ``σ0`` rule with ``B = 1``; the sync rule uses the exact local ``log det`` increment
  (matrix determinant lemma), as in line 9 of the paper's Algorithm 3.

**Vectorization.** ``R`` repetitions × ``M`` silos are arrays; rounds loop. A round's scores
``⟨x, θ⟩`` and ``xᵀPx`` of all ``K`` arms are two matrix products per silo for all repetitions at
once: ``xᵀPx = c(P) · triu(x xᵀ)`` with ``c(P)`` the packed upper triangle of ``P`` (off-diagonal
entries doubled) and the arms' quadratic features ``triu(x xᵀ)`` (``d(d+1)/2`` of them, shared by
the repetitions) formed in the drawing thread;
``W`` is kept packed, ``V^{-1}`` has a rank-one update of ``(R, M, d, d)``. The arms of a round
come from the instance's keyed stream (:mod:`learners.linear.instances`), the reward noise from
each repetition's tape, and the privacy noise of repetition ``r`` from a Philox stream keyed by
two words drawn from ``rng`` (the ``r``-th pair), so a repetition's run has the same law however
many run beside it; its trajectory agrees with its run alone up to rounding (BLAS blocks the rows
of a product by the batch size, and a rounding difference can decide an exact tie, such as the
first round's, where all unit-norm arms score alike).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from accounting import validate as v
from accounting.accountant import Accountant
from learners.errors import ParameterError, ParameterTypeError, ProtocolError
from learners.linear.instances import CHUNK, LinearInstance, NoiseTape
from learners.linear.noise import Noise, noise_of
from learners.linear.privacy import Privacy, privacy_of
from learners.linear.radius import radius, regularizer_of
from learners.linear.spec import FLOAT_BITS, Learner
from learners.linear.state import State, SyncRecord, state_shapes
from learners.runs import checkpoint_rounds, read_only, report_delta

__all__ = ["QUADRATIC_BUDGET", "RunResult", "footprint", "run"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of :func:`run` for ``R`` repetitions (arrays read-only).

    Attributes
    ----------
    learner : Learner
    horizon : int
    rounds : numpy.ndarray of int64, shape (C,)
    pseudo_regret : numpy.ndarray, shape (R, C)
        Group pseudo-regret ``Σ_i Σ_{s<=t} max_a μ - μ_{a_s,i}`` (Zhou & Chowdhury (2024)'s ``R_M(T)``).
    realized_regret : numpy.ndarray, shape (R, C)
        ``Σ_i Σ_{s<=t} r(best) - r(a_s,i)`` with ``best`` the mean-best arm (the authors' code's
        measure of the paper's Figures 2-3).
    syncs : numpy.ndarray of int64, shape (R,)
        Synchronisations (communication rounds).
    reals : numpy.ndarray of int64, shape (R,)
        Reals each silo sent: ``syncs · (d + d(d+1)/2)``.
    bits : numpy.ndarray of int64, shape (R,)
        ``64 · reals``.
    clipped : numpy.ndarray of int64, shape (R,)
        Syncs at which ``λI + W̃_syn`` had an eigenvalue below the floor and was clipped.
    noise : Noise
    regularizer : float
        ``λ``.
    delta : float
        The δ of :attr:`privacy`.
    """

    learner: Learner
    horizon: int
    rounds: IntArray
    pseudo_regret: FloatArray
    realized_regret: FloatArray
    syncs: IntArray
    reals: IntArray
    bits: IntArray
    clipped: IntArray
    noise: Noise
    regularizer: float
    delta: float
    _ledgers: Mapping[int, Accountant] = field(repr=False)

    @property
    def released(self) -> IntArray:
        """Node releases per stream per silo (one per sync)."""
        return self.syncs

    @property
    def ledgers(self) -> dict[int, Accountant]:
        """The ledger of one user of each kind of batch, keyed by the nodes per stream it entered (copies)."""
        return {n: acc.copy() for n, acc in self._ledgers.items()}

    @cached_property
    def privacy(self) -> Privacy:
        """:func:`privacy_of` the run's ledgers at :attr:`delta` (memoized per ledger)."""
        return privacy_of(self.learner, self.noise, self._ledgers, self.delta)


def _check_run(
    learner: object, instances: object, horizon: object, tapes: object, rng: object, checkpoints: object
) -> tuple[list[LinearInstance], int, list[np.random.Generator], IntArray]:
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.linear.Learner (see make_learner)")
    if not isinstance(tapes, Sequence) or not tapes:
        raise ParameterError("tapes", tapes, "a non-empty sequence of numpy Generators (one per repetition)")
    for i, gen in enumerate(tapes):
        if not isinstance(gen, np.random.Generator):
            raise ParameterTypeError(f"tapes[{i}]", gen, "a numpy.random.Generator")
    R = len(tapes)
    insts: list[LinearInstance]
    if isinstance(instances, LinearInstance):
        insts = [instances] * R
    elif isinstance(instances, Sequence) and not isinstance(instances, str) and len(instances) == R:
        insts = list(instances)
        for i, inst in enumerate(insts):
            if not isinstance(inst, LinearInstance):
                raise ParameterTypeError(
                    f"instances[{i}]",
                    inst,
                    "a linear instance (learners.linear_instances.SyntheticInstance or QueryInstance)",
                )
    else:
        raise ParameterError(
            "instances", instances, f"one linear instance or a sequence of R={R} of them (LinearInstance)"
        )
    shape = (insts[0].dim, insts[0].arms, insts[0].agents)
    if any((i.dim, i.arms, i.agents) != shape for i in insts):
        raise ParameterError(
            "instances", [(i.dim, i.arms, i.agents) for i in insts], "one (dim, arms, agents)"
        )
    T = v.integer("horizon", horizon, minimum=1)
    if learner.batch is not None and learner.batch > T:
        raise ParameterError("horizon", horizon, f"an integer >= batch = {learner.batch}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    C = v.integer("checkpoints", checkpoints, minimum=1)
    rounds = checkpoint_rounds(T, C)
    return insts, T, list(tapes), rounds


QUADRATIC_BUDGET = 2**28


class _Slots:
    """Two sets of reusable arrays, one for the chunk being played and one for the chunk being
    drawn: fresh arrays of tens of MB a chunk would cost a page fault per 4 kB on every use."""

    def __init__(self) -> None:
        self.arrays: dict[tuple[int, str], FloatArray] = {}

    def get(self, c: int, name: str, shape: tuple[int, ...]) -> FloatArray:
        """The array ``name`` of chunk ``c``'s slot with this shape (reallocated if it changed)."""
        key = (c % 2, name)
        out = self.arrays.get(key)
        if out is None or out.shape != shape:
            out = self.arrays[key] = np.empty(shape)
        return out


def _chunk(
    insts: list[LinearInstance], shared: bool, tapes: list[NoiseTape], c: int, slots: _Slots
) -> tuple[FloatArray, FloatArray | None, FloatArray, FloatArray]:
    """Arms ``(1|R, CHUNK, M, d, K_c)`` (features last-but-one), their :func:`_quadratic_features`
    (or ``None`` above :data:`QUADRATIC_BUDGET`: computed round by round), means
    ``(1|R, CHUNK, M, K_c)``, noise ``(CHUNK, M, R, 2)``.

    ``K_c <= arms`` is the block's own arm count (the real-data instance pads a block to its
    largest query only); blocks of different repetitions are padded to the largest by cyclic
    repetition of their arms, which adds copies of existing arms only (ties go to the first copy).
    The features come transposed, ``(..., d, K)``, the layout the round's products and
    :func:`_quadratic_features` read contiguously.
    """
    inst0 = insts[0]
    if shared:
        feats, means = inst0.block(c)
        feats, means = feats[None], means[None]
    else:
        blocks = [inst.block(c) for inst in insts]
        k = max(b[1].shape[-1] for b in blocks)
        feats = np.stack([np.take(b[0], np.arange(k) % b[0].shape[-2], axis=-2) for b in blocks])
        means = np.stack([np.take(b[1], np.arange(k) % b[1].shape[-1], axis=-1) for b in blocks])
    if inst0.noise_sd == 0:  # noise-free rewards (real data): no tape to draw
        xi = np.zeros((CHUNK, inst0.agents, len(tapes), 2))
    else:
        xi = np.stack([tape.block(c, inst0.agents) for tape in tapes], axis=2) * inst0.noise_sd
    X = slots.get(c, "X", feats.swapaxes(-1, -2).shape)
    np.copyto(X, feats.swapaxes(-1, -2))
    shape = _quadratic_shape(X.shape)
    if not _quadratic_fits(shape):
        return X, None, means, xi
    return X, _quadratic_features(X, slots.get(c, "XX", shape)), means, xi


def _quadratic_shape(arms: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of :func:`_quadratic_features` of arms of shape ``(..., d, K)``."""
    d, k = arms[-2:]
    return (*arms[:-2], d * (d + 1) // 2, k)


def _quadratic_fits(shape: tuple[int, ...]) -> bool:
    """Whether a chunk's quadratic features of this shape are precomputed (under :data:`QUADRATIC_BUDGET`)."""
    return math.prod(shape) * 8 <= QUADRATIC_BUDGET


def footprint(
    learner: Learner, R: int, M: int, d: int, K: int, T: int, checkpoints: int, *, shared: bool
) -> tuple[dict[str, tuple[int, ...]], int]:
    """The float64 arrays a :func:`run` of ``R`` repetitions holds at its peak, by name and shape,
    and its work: the score products of every round, ``T R M K d(d+1)/2`` multiply-adds.

    The arrays are :func:`learners.linear.state.state_shapes` (the statistics and protocol P's
    tree), the two slots of arms a chunk of :data:`CHUNK` rounds is played and drawn in
    (:func:`_chunk`: the instance's block, its transposed copy, its quadratic features or the
    round's buffer), the rewards' noise and the regret curves.
    """
    kappa = (T // (learner.batch or 1)).bit_length()
    vector = learner.private and learner.algorithm.release == "vector-sum"
    out = {f"state.{k}": v for k, v in state_shapes(learner, kappa, R, M, d, vector=vector).items()}
    n = 1 if shared else R
    arms = (n, CHUNK, M, d, K)
    quadratic = _quadratic_shape(arms)
    out.update(
        {
            "block.features": (CHUNK, M, K, d),
            "block.u": (CHUNK, M, K, d - 1),
            "X": arms,
            "X.next": arms,
            "means": (n, CHUNK, M, K),
            "xi": (CHUNK, M, R, 2),
            "curves": (2, R, min(checkpoints, T)),
        }
    )
    if _quadratic_fits(quadratic):
        out.update({"XX": quadratic, "XX.next": quadratic})
    else:
        out["buffer"] = (n, M, d * (d + 1) // 2, K)
    return out, T * R * M * K * (d * (d + 1) // 2)


def _quadratic_features(X: FloatArray, out: FloatArray) -> FloatArray:
    """``triu(x xᵀ)`` of the arms ``X`` of shape ``(..., d, K)`` into ``out`` ``(..., d(d+1)/2, K)``.

    Rows in :func:`numpy.triu_indices` order, so that ``xᵀPx`` of every arm is one product with
    the packed coefficients of ``P`` (:meth:`learners.linear.state.State.packed`): a product of
    shape ``(R, d(d+1)/2) @ (d(d+1)/2, K)`` per silo instead of ``R`` products ``(K, d) @ (d, d)``
    and a contraction. Built row block by row block, each a contiguous broadcast product.
    """
    d, o = X.shape[-2], 0
    for i in range(d):
        np.multiply(X[..., i : i + 1, :], X[..., i:, :], out=out[..., o : o + d - i, :])
        o += d - i
    return out


def _scores(
    X: FloatArray, XX: FloatArray, theta: FloatArray, coef: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``⟨x, θ⟩`` and ``xᵀPx`` of every arm, both of shape ``(M, R, K)``.

    ``X`` ``(1|R, M, d, K)``, ``XX`` its :func:`_quadratic_features`, ``theta`` ``(1|M, R, d)``, and
    ``coef`` ``(1|M, R, d(d+1)/2)`` the packed ``P`` of each repetition (and silo), any strides. On
    a shared instance a silo's arms are multiplied by all repetitions' coefficients at once.
    """
    if X.shape[0] == 1:
        if theta.shape[1] == 1:
            # BLAS takes its matrix-vector path for a single row, which rounds its sums differently
            # from the matrix product's: with two equal rows, a repetition alone is scored by the
            # same kernel as in a batch
            est, quad = _scores(X, XX, np.concatenate([theta, theta], 1), np.concatenate([coef, coef], 1))
            return est[:, :1], quad[:, :1]
        return theta @ X[0], coef @ XX[0]
    # one instance per repetition: a product per repetition and silo, of two equal rows (see above)
    th, co = theta.swapaxes(0, 1), coef.swapaxes(0, 1)
    est = (np.stack([th, th], axis=-2) @ X)[:, :, 0].swapaxes(0, 1)
    quad = (np.stack([co, co], axis=-2) @ XX)[:, :, 0].swapaxes(0, 1)
    return est, quad


def _blocks(
    insts: list[LinearInstance], shared: bool, tapes: list[NoiseTape], chunks: int
) -> Iterator[tuple[FloatArray, FloatArray | None, FloatArray, FloatArray]]:
    """The chunks in order, the next one drawn in a worker thread while this one is played.

    Every block comes from its own keyed stream, so drawing ahead changes no number; numpy's
    generators release the GIL while drawing, which hides most of the cost of the arms. A chunk's
    arrays are reused two chunks later: the caller is done with chunk ``c`` when it asks for
    ``c + 1``, which is when ``c + 2`` starts being drawn.
    """
    slots = _Slots()
    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead = pool.submit(_chunk, insts, shared, tapes, 0, slots)
        for c in range(chunks):
            current = ahead.result()
            if c + 1 < chunks:
                ahead = pool.submit(_chunk, insts, shared, tapes, c + 1, slots)
            yield current


def run(
    learner: Learner,
    instances: LinearInstance | Sequence[LinearInstance],
    horizon: int,
    *,
    tapes: Sequence[np.random.Generator],
    rng: np.random.Generator,
    checkpoints: int = 1000,
    delta: float | None = None,
    observer: Callable[[SyncRecord], None] | None = None,
) -> RunResult:
    """Run ``learner`` for ``R = len(tapes)`` repetitions of ``horizon`` rounds on every silo.

    Parameters
    ----------
    learner : Learner
        From :func:`make_learner`.
    instances : LinearInstance or sequence of them
        A :class:`~learners.linear.instances.SyntheticInstance` (Zhou & Chowdhury (2024), §6) or a
        real-data :class:`~learners.linear.instances.QueryInstance` (§6 and App. H; anything with
        the :class:`~learners.linear.instances.LinearInstance` interface): one instance for every
        repetition (the paper's setting: the instance is fixed across runs), or one per repetition
        (same ``d``, ``K``, ``M``).
    horizon : int
        ``T >= B``.
    tapes : sequence of numpy.random.Generator
        Repetition ``r``'s reward noise is keyed by two words drawn from ``tapes[r]`` (a fresh
        generator from the same seed gives every algorithm the same noise).
    rng : numpy.random.Generator
        The privacy noise: repetition ``r`` uses a stream keyed by the ``r``-th pair of words drawn.
    checkpoints : int
        Regret is recorded after ``ceil(c T / C)`` rounds, ``c = 1..C``.
    delta : float or None
        δ of the privacy report (``None``: the learner's δ, or 1e-6 without privacy).
    observer : callable or None
        Called with a :class:`SyncRecord` after every sync (for audits and tests).

    Returns
    -------
    RunResult
    """
    insts, T, gens, rounds = _check_run(learner, instances, horizon, tapes, rng, checkpoints)
    d_report = report_delta(learner.delta, delta)
    if observer is not None and not callable(observer):
        raise ParameterTypeError("observer", observer, "a callable taking a SyncRecord, or None")
    R = len(gens)
    inst0 = insts[0]
    d, M = inst0.dim, inst0.agents
    shared = all(inst == inst0 for inst in insts)
    noise = noise_of(learner, T, M, dim=d)
    if not noise.feasible:
        raise ProtocolError(
            f"'{learner.name}' at (ε, δ) = ({learner.epsilon:g}, {learner.delta:g}), M = {M}, T = {T}: "
            f"Theorem 5.3 is infeasible ({noise.conditions}: Lemma F.2's hypotheses fail); "
            "sigma_mode='code' runs the "
            "authors' uncertified σ0"
        )
    lam = regularizer_of(learner, noise, M, d)
    scale = learner.noise_scale if learner.noise_scale is not None else inst0.reward_scale
    beta = radius(learner, noise, lam, M, d, scale)
    tape_list = [NoiseTape.draw(g) for g in gens]
    keys = rng.integers(0, 2**64, size=(R, 2), dtype=np.uint64, endpoint=False) if learner.private else None
    st = State(learner, noise, lam, R, M, d, keys)
    pseudo, realized = _play(st, insts, shared, tape_list, T, rounds, beta, observer)
    per_sync = d + d * (d + 1) // 2
    reals = st.step * per_sync
    return RunResult(
        learner=learner,
        horizon=T,
        rounds=read_only(rounds),
        pseudo_regret=read_only(pseudo),
        realized_regret=read_only(realized),
        syncs=read_only(st.step.copy()),
        reals=read_only(reals),
        bits=read_only(reals * FLOAT_BITS),
        clipped=read_only(st.clipped),
        noise=noise,
        regularizer=lam,
        delta=d_report,
        _ledgers=MappingProxyType(st.ledgers()),
    )


def _play(
    st: State,
    insts: list[LinearInstance],
    shared: bool,
    tapes: list[NoiseTape],
    T: int,
    rounds: IntArray,
    beta: Callable[[int], float],
    observer: Callable[[SyncRecord], None] | None,
) -> tuple[FloatArray, FloatArray]:
    """Play the ``T`` rounds of every repetition and silo, syncing on the learner's schedule: the
    pseudo- and realized regret at the checkpoints ``rounds``, each ``(R, C)``."""
    learner, R, M, d = st.learner, st.R, st.M, st.d
    adaptive = learner.algorithm.schedule == "adaptive"
    threshold = learner.threshold if learner.threshold is not None else T * math.log(M * T) / (d * M)
    clip = learner.bound
    pseudo_total = np.zeros(R)
    realized_total = np.zeros(R)
    pseudo = np.zeros((R, rounds.size))
    realized = np.zeros((R, rounds.size))
    next_cp = 0
    all_reps = np.arange(R)
    mm = np.arange(M)[:, None]
    r0 = np.zeros((1, R), dtype=np.intp) if shared else np.arange(R)[None, :]  # each repetition's instance
    # BLAS on one thread: a round is a batch of small products and factorizations, where OpenBLAS's
    # threads only contend (measured on 2 busy cores: eigh of (4, 65, 65) 84 ms threaded, 1.8 ms not;
    # a run 6-10x faster)
    with threadpool_limits(1):
        for c, (feats, quadratic, means, xi) in enumerate(_blocks(insts, shared, tapes, -(-T // CHUNK))):
            best = means.argmax(axis=-1)  # (1|R, CHUNK, M)
            top = np.take_along_axis(means, best[..., None], axis=-1)[..., 0]
            if quadratic is None:
                buffer = np.empty((feats.shape[0], M, st.W.shape[0], feats.shape[-1]))
            for j in range(min(CHUNK, T - c * CHUNK)):
                t = c * CHUNK + j + 1
                X = feats[:, j]  # (1|R, M, d, K)
                XX = _quadratic_features(X, buffer) if quadratic is None else quadratic[:, j]
                arm = _choose(st, X, XX, beta(t))  # (M, R)
                x = np.ascontiguousarray(X[r0, mm, :, arm].transpose(2, 0, 1))  # (d, M, R)
                xx = _quadratic_features(x.reshape(d, M * R), np.empty((st.W.shape[0], M * R)))
                xx = xx.reshape(-1, M, R)  # (d(d+1)/2, M, R): the same floats as XX's column
                mu_a = means[r0, j, mm, arm]  # (M, R)
                top_j = top[:, j].T  # (M, 1|R)
                xi_t = xi[j]  # (M, R, 2): the best arm's noise, another arm's
                y = mu_a + np.where(arm == best[r0, j, mm], xi_t[..., 0], xi_t[..., 1])
                pseudo_total += (top_j - mu_a).sum(axis=0)
                realized_total += (top_j + xi_t[..., 0] - y).sum(axis=0)
                yc = np.clip(y, -clip, clip) if clip is not None else y
                _update(st, t, x, xx, yc)
                while next_cp < rounds.size and rounds[next_cp] == t:
                    pseudo[:, next_cp] = pseudo_total
                    realized[:, next_cp] = realized_total
                    next_cp += 1
                if adaptive:
                    fire = ((t - st.t_last) * st.logdet > threshold).any(axis=0)
                    if fire.any():
                        st.sync(np.flatnonzero(fire), t, observer)
                elif t % (learner.batch or 1) == 0:
                    st.sync(all_reps, t, observer)
    return pseudo, realized


def _choose(st: State, X: FloatArray, XX: FloatArray, beta_t: float) -> IntArray:
    """Every silo's LinUCB arm of the round, ``(M, R)``: the largest ``⟨x, θ⟩ + β_t sqrt(xᵀPx)``
    (the synced statistics only for the lazy variants, Algorithm 8; with the silo's own rounds since
    the sync for Algorithm 1)."""
    if st.learner.lazy:
        theta, coef = st.theta, st.coef
    elif st.low_rank:
        theta, coef = st.apply(st.b + st.U), st.coef
    else:
        theta = np.einsum("ijmr,jmr->imr", st.P, st.b + st.U)  # (d, M, R)
        coef = st.packed(st.P)
    est, quad = _scores(X, XX, theta.transpose(1, 2, 0), coef.transpose(1, 2, 0))  # (M, R, K)
    if st.low_rank and (less := st.correction(X)) is not None:
        quad -= less
    ucb = np.sqrt(np.maximum(quad, 0.0, out=quad), out=quad)  # in place: 250k entries
    ucb *= beta_t
    ucb += est
    arm: IntArray = ucb.argmax(axis=-1)
    return arm


def _update(st: State, t: int, x: FloatArray, xx: FloatArray, yc: FloatArray) -> None:
    """The silos' statistics after round ``t``: ``U += x y``, ``W += triu(x xᵀ)``, the vector-sum
    variants' data points, and Algorithm 1's Sherman-Morrison update of ``V^{-1}`` with the
    ``log det`` increment (matrix determinant lemma) the adaptive rule reads."""
    learner = st.learner
    if st.vector is not None:
        st.record_point((t - 1) % (learner.batch or 1), x.T, yc.T, xx.T)
    st.U += x * yc
    st.W += xx
    if st.low_rank:
        st.logdet += np.log(st.add_term(x))
    elif not learner.lazy:
        assert st.outer is not None
        Px = np.einsum("ijmr,jmr->imr", st.P, x)
        den = 1.0 + np.einsum("imr,imr->mr", x, Px)
        u = Px / np.sqrt(den)
        st.P -= np.multiply(u[:, None], u[None, :], out=st.outer)  # bitwise symmetric
        st.logdet += np.log(den)
