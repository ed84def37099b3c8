"""The vectorized engine of DP-DPE and DP-PE (Li, Zhou & Ji 2022, Algorithms 1 and 3).

**Communication** (eq. 2, Li, Zhou & Ji 2022, §2.2): ``Σ_l s_l |U_l|`` reals (DPE, CDP, LDP, DPE-FixedU),
``Σ_l (g_l + b_l) s_l |U_l|`` bits (SDP); DP-PE: one real, or ``g + b`` bits, per client. Only
phases that finish before ``T`` report: a phase cut off by the horizon is never aggregated (its
clients are not sampled, line 7 follows line 6), and is not counted.

**Regret.** ``pseudo_regret`` is the paper's (eq. 1), against ``θ*``, exact per round: within a
phase the support is played in increasing action index, ``T_l(x)`` times each. ``realized_regret``
is, for DP-DPE, the regret on the mean parameter of the phase's clients, ``Σ_t ⟨θ̄_{U_l}, x* -
x_t⟩`` (the sample the server learns from; not the paper's measure, eq. 1; equal to the
pseudo-regret in a phase without clients); for DP-PE, ``T⟨θ*, x*⟩ - Σ_t y_t`` with the rewards
the clients observed (unclipped). Once a single action remains (Remark 3.2) it is played to ``T`` with no
further clients, and both curves add its gap per round.

**Vectorization and randomness.** Repetitions (leading axis ``R``), clients and actions are array
axes; phases loop. Repetition ``r`` draws its clients and rewards from streams seeded by four words
of ``tapes[r]`` (a fresh generator of the same seed gives every algorithm the same clients while
the designs agree), its design directions from another, and its privacy noise from a stream seeded
by the ``r``-th four words drawn from ``rng``: the only per-repetition Python loops draw random
numbers (and call the shuffle protocol, whose parameters depend on the repetition's ``s_l``), so a
repetition's numbers do not depend on how many run beside it.

**Measured** (``tests/benchmarks/test_phased_bench.py``): see that module's docstring.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.accountant import Accountant, Event
from accounting.mechanisms import AdditiveNoise, ApproxDP
from accounting.neighbouring import Neighbouring
from accounting.noise import Gaussian
from learners.design import (
    MAX_ITERATIONS,
    DesignWarning,
    design_shapes,
    g_optimal_design,
    pull_counts,
    support_bound,
)
from learners.errors import ParameterError, ParameterTypeError
from learners.phased.instances import PhasedInstance
from learners.phased.noise import (
    SIGMA_UP,
    noise_of,
    released_event,
    sdp_average,
    sdp_dpe_parameters,
    sdp_pe_parameters,
    theorem_a2_sd,
)
from learners.phased.record import PhaseRecord, RunResult
from learners.phased.spec import (
    FLOAT_BITS,
    MAX_HORIZON,
    Learner,
    clients_needed,
    completable_phases,
    fixed_clients,
    phase_clients,
)
from learners.protocols import shuffle_sum
from learners.runs import checkpoint_rounds, read_only, report_delta

__all__ = ["footprint", "run"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


# ---------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------


def footprint(
    learner: Learner, R: int, k: int, d: int, T: int, checkpoints: int
) -> tuple[dict[str, tuple[int, ...]], int]:
    """The float64 arrays a :func:`run` of ``R`` repetitions on ``k`` actions in ``R^d`` holds at
    its peak, by name and shape, and its work (multiply-adds): at most
    :data:`~learners.design.MAX_ITERATIONS` Frank–Wolfe steps of ``2 R k d²`` in each of the
    ``L`` phases, and the clients' reports.

    The per-repetition means, gaps and active sets (:class:`_Run`), the design's arrays
    (:func:`learners.design.design_shapes`) and the actions it and the regret gather, and the
    largest phase's reports: DP-DPE's clients ``ξ``, ``z`` and ``Y`` of ``(R, |U_l|, s)``, the
    support ``s`` at most ``max(S, d(d+1)/2 + 1)`` actions (:meth:`_Run.distributed_phase`), or
    DP-PE's rewards of every pull of a phase (:meth:`_Run.single_phase`).
    """
    L = max(1, completable_phases(T))
    width = min(k, max(support_bound(d), d * (d + 1) // 2 + 1))
    out = {f"design.{name}": shape for name, shape in design_shapes(R, k, d).items()}
    out.update({"state": (3, R, k), "actions": (R, k, d), "curves": (2, R, min(checkpoints, T))})
    if learner.single:
        out["phase.rewards"] = (2, R, T)
        reports = R * T * d
    else:
        if learner.algorithm.fixed_clients:
            n = learner.clients if learner.clients is not None else fixed_clients(learner.alpha, T)
        else:
            n = max(phase_clients(learner.alpha, j) for j in range(1, L + 1))
        out.update({"phase.xi": (R, n, d), "phase.reports": (2, R, n, width)})
        reports = L * R * n * width * d
    return out, L * MAX_ITERATIONS * 2 * R * k * d * d + reports


def _check_run(
    learner: object, instances: object, horizon: object, tapes: object, rng: object, checkpoints: object
) -> tuple[list[PhasedInstance], int, list[np.random.Generator], IntArray]:
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.phased.Learner (see make_learner)")
    if not isinstance(tapes, Sequence) or isinstance(tapes, str) or not tapes:
        raise ParameterError("tapes", tapes, "a non-empty sequence of numpy Generators (one per repetition)")
    for i, gen in enumerate(tapes):
        if not isinstance(gen, np.random.Generator):
            raise ParameterTypeError(f"tapes[{i}]", gen, "a numpy.random.Generator")
    R = len(tapes)
    insts: list[PhasedInstance]
    if isinstance(instances, PhasedInstance):
        insts = [instances] * R
    elif isinstance(instances, Sequence) and not isinstance(instances, str) and len(instances) == R:
        insts = list(instances)
        for i, inst in enumerate(insts):
            if not isinstance(inst, PhasedInstance):
                raise ParameterTypeError(
                    f"instances[{i}]", inst, "a learners.phased_instances.PhasedInstance"
                )
    else:
        raise ParameterError(
            "instances", instances, f"one PhasedInstance or a sequence of R={R} of them (one per tape)"
        )
    shape = (insts[0].arms, insts[0].dim)
    if any((i.arms, i.dim) != shape for i in insts):
        raise ParameterError(
            "instances", [(i.arms, i.dim) for i in insts], "one (arms, dim) for every repetition"
        )
    T = v.integer("horizon", horizon, minimum=1, maximum=MAX_HORIZON, why="h_l must be rounded exactly")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    C = v.integer("checkpoints", checkpoints, minimum=1)
    need = clients_needed(learner, T)
    small = min(inst.population for inst in insts)
    if small < need:
        raise ParameterError(
            "population",
            small,
            f"at least {need} users: '{learner.name}' over T = {T} rounds samples up to {need} fresh clients "
            "and never reuses one (each client reports in one phase: parallel composition)",
        )
    rounds = checkpoint_rounds(T, C)
    return insts, T, list(tapes), rounds


def _streams(gen: np.random.Generator, count: int) -> list[np.random.Generator]:
    """``count`` independent generators seeded by four words drawn from ``gen``."""
    words = gen.integers(0, 2**63, size=4, dtype=np.int64).tolist()
    return [np.random.default_rng(s) for s in np.random.SeedSequence(words).spawn(count)]


def _blocks(counts: IntArray, gaps: FloatArray) -> Callable[[IntArray, IntArray], FloatArray]:
    """``(i, m) -> Σ_j gaps[i, j] · min(max(m - before_j, 0), counts[i, j])``: the sum of ``gaps`` over
    the first ``m`` rounds of repetition ``i``'s segment, blocks of ``counts[i, j]`` rounds in order."""
    before = np.cumsum(counts, axis=1) - counts

    def at(i: IntArray, m: IntArray) -> FloatArray:
        played = np.clip(m[:, None] - before[i], 0, counts[i])
        return np.asarray((played * gaps[i]).sum(axis=1), dtype=np.float64)

    return at


class _Engine:
    """All repetitions' state (leading axis ``R``), the regret curves and the ledgers."""

    def __init__(
        self,
        learner: Learner,
        insts: list[PhasedInstance],
        T: int,
        tapes: list[np.random.Generator],
        rng: np.random.Generator,
        rounds: IntArray,
        observer: Callable[[PhaseRecord], None] | None,
    ) -> None:
        self.learner, self.T, self.rounds, self.observer = learner, T, rounds, observer
        R = len(tapes)
        inst0 = insts[0]
        self.R, self.k, self.d = R, inst0.arms, inst0.dim
        self.shared = all(inst is inst0 for inst in insts)
        if self.shared:
            self.X = np.broadcast_to(inst0.actions, (R, self.k, self.d))
            self.theta = np.broadcast_to(inst0.theta, (R, self.d))
        else:
            self.X = np.stack([inst.actions for inst in insts])
            self.theta = np.stack([inst.theta for inst in insts])
        self.means = np.einsum("rkd,rd->rk", self.X, self.theta)
        self.best = self.means.argmax(axis=1)
        self.gaps = self.means[np.arange(R), self.best][:, None] - self.means
        self.client_sd = np.array([inst.client_sd for inst in insts])
        self.noise_sd = np.array([inst.noise_sd for inst in insts])
        self.width_sd = (
            np.full(R, learner.client_sd) if learner.client_sd is not None else self.client_sd.copy()
        )
        env = [_streams(tape, 2) for tape in tapes]
        self.env = [e[0] for e in env]
        self.design_rng = [e[1] for e in env]
        self.private_rng = [_streams(rng, 1)[0] for _ in range(R)] if learner.private else []
        self.noise = noise_of(learner)
        self.beta = learner.beta if learner.beta is not None else 1.0 / (self.k * T)
        self.log_term = math.sqrt(2 * math.log(1 / self.beta))
        self.S = learner.support_constant if learner.support_constant is not None else support_bound(self.d)
        self.fixed_u = (
            (learner.clients if learner.clients is not None else fixed_clients(learner.alpha, T))
            if learner.algorithm.fixed_clients
            else 0
        )
        self.active = np.ones((R, self.k), dtype=np.bool_)
        self.next_t = np.ones(R, dtype=np.int64)
        self.done = np.zeros(R, dtype=np.bool_)
        self.pseudo = np.zeros((R, rounds.size))
        self.realized = np.zeros((R, rounds.size))
        self.pseudo_base = np.zeros(R)
        self.realized_base = np.zeros(R)
        self.phases = np.zeros(R, dtype=np.int64)
        self.clients = np.zeros(R, dtype=np.int64)
        self.reals = np.zeros(R, dtype=np.int64)
        self.bits = np.zeros(R, dtype=np.int64)
        self.ledgers: dict[int, Accountant] = {}

    # -- regret --------------------------------------------------------------------------
    def segment(
        self,
        reps: IntArray,
        start: IntArray,
        length: IntArray,
        pseudo: Callable[[IntArray, IntArray], FloatArray],
        realized: Callable[[IntArray, IntArray], FloatArray],
    ) -> IntArray:
        """Record the checkpoints in rounds ``[start, start + length)`` cut at ``T`` of ``reps``;
        ``pseudo(i, m)`` / ``realized(i, m)`` give the regret of the segment's first ``m`` rounds of
        ``reps[i]``. Returns the rounds played."""
        end = np.minimum(start + length - 1, self.T)
        lo = np.searchsorted(self.rounds, start, "left")
        hi = np.searchsorted(self.rounds, end, "right")
        cnt = np.maximum(hi - lo, 0)
        total = int(cnt.sum())
        if total:
            i = np.repeat(np.arange(reps.size), cnt)
            c = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt) + np.repeat(lo, cnt)
            m = self.rounds[c] - start[i] + 1
            self.pseudo[reps[i], c] = self.pseudo_base[reps[i]] + pseudo(i, m)
            self.realized[reps[i], c] = self.realized_base[reps[i]] + realized(i, m)
        played = np.asarray(end - start + 1, dtype=np.int64)
        every = np.arange(reps.size)
        self.pseudo_base[reps] += pseudo(every, played)
        self.realized_base[reps] += realized(every, played)
        self.next_t[reps] = start + played
        return played

    def finish_single_arm(self, reps: IntArray) -> None:
        """Repetitions with one active action play it to ``T`` (Remark 3.2)."""
        arm = self.active[reps].argmax(axis=1)
        gap = self.gaps[reps, arm][:, None]
        rest = (self.T - self.next_t[reps] + 1)[:, None]
        at = _blocks(rest, gap)
        self.segment(reps, self.next_t[reps], rest[:, 0], at, at)
        self.done[reps] = True

    # -- one phase -----------------------------------------------------------------------
    def design(self, reps: IntArray, h: float) -> tuple[IntArray, IntArray, IntArray]:
        """The support (play order, padded with -1), the counts ``T_l(x)`` and ``s_l`` of ``reps``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DesignWarning)  # a support above S: S_eff = max(S, s_l) in σ_n
            design = g_optimal_design(
                self.X[reps],
                rng=[self.design_rng[r] for r in reps.tolist()],
                c=self.learner.design_c,
                mask=self.active[reps],
            )
        if not design.converged.all():
            warnings.warn(
                f"G-optimal design: {int((~design.converged).sum())} repetitions did not reach "
                "g <= (1 + c) d'",
                DesignWarning,
                stacklevel=3,
            )
        counts = pull_counts(design.weights, h)
        s = (counts > 0).sum(axis=1)
        width = int(s.max())
        order = np.argsort(counts == 0, axis=1, kind="stable")[:, :width]  # support first, index order
        pad = np.arange(width)[None, :] >= s[:, None]
        support = np.where(pad, -1, order)
        Tx = np.where(pad, 0, np.take_along_axis(counts, order, axis=1))
        return support, Tx, s

    def run_phase(self, phase: int) -> None:
        learner = self.learner
        reps = np.flatnonzero(~self.done)
        single = self.active[reps].sum(axis=1) == 1
        if single.any():
            self.finish_single_arm(reps[single])
            reps = reps[~single]
        if reps.size == 0:
            return
        h = 2.0**phase if not learner.single else self.S * 2.0 ** (phase - 1)
        support, Tx, s = self.design(reps, h)
        safe = np.maximum(support, 0)
        rows = reps[:, None]
        start = self.next_t[reps]
        total = Tx.sum(axis=1)
        complete = start + total - 1 <= self.T
        gaps = np.where(support >= 0, self.gaps[rows, safe], 0.0)
        pseudo = _blocks(Tx, gaps)
        if learner.single:
            self.single_phase(phase, h, reps, start, support, Tx, s, complete, pseudo)
        else:
            self.distributed_phase(phase, h, reps, start, support, Tx, s, complete, pseudo)
        self.done[reps[~complete]] = True
        self.done[self.next_t > self.T] = True

    # -- DP-DPE ----------------------------------------------------------------------------
    def distributed_phase(
        self,
        phase: int,
        h: float,
        reps: IntArray,
        start: IntArray,
        support: IntArray,
        Tx: IntArray,
        s: IntArray,
        complete: BoolArray,
        pseudo: Callable[[IntArray, IntArray], FloatArray],
    ) -> None:
        learner = self.learner
        cut = np.flatnonzero(~complete)
        if cut.size:  # the last phase, cut by T: no clients (line 7 follows line 6), regret only
            self.segment(reps[cut], start[cut], Tx[cut].sum(axis=1), _sub(pseudo, cut), _sub(pseudo, cut))
        done = np.flatnonzero(complete)
        if done.size == 0:
            return
        rr, sup, cnt, ss = reps[done], support[done], Tx[done], s[done]
        n = self.fixed_u if learner.algorithm.fixed_clients else phase_clients(learner.alpha, phase)
        B = learner.bound
        width = sup.shape[1]
        valid = sup >= 0
        safe = np.maximum(sup, 0)
        X = self.X[rr[:, None], safe]  # (m, s, d)
        mu = np.where(valid, self.means[rr[:, None], safe], 0.0)
        # clients: ξ_u ~ N(0, σ² I) and local averages ⟨θ_u, x⟩ + noise_sd N(0, 1/T(x)), their exact law
        m = rr.size
        xi = np.empty((m, n, self.d))
        z = np.zeros((m, n, width))
        for j, r in enumerate(rr.tolist()):
            gen = self.env[r]
            xi[j] = gen.standard_normal((n, self.d))
            z[j, :, : ss[j]] = gen.standard_normal((n, int(ss[j])))
        xi *= self.client_sd[rr][:, None, None]
        inv = np.where(valid, 1.0 / np.sqrt(np.maximum(cnt, 1)), 0.0) * self.noise_sd[rr][:, None]
        Y = xi @ X.swapaxes(1, 2)
        Y += mu[:, None, :]
        z *= inv[:, None, :]
        Y += z
        del z
        theta_bar = self.theta[rr] + xi.mean(axis=1)
        del xi
        if learner.clipped:
            np.clip(Y, -B, B, out=Y)
        Y *= valid[:, None, :]
        avg = Y.mean(axis=1)
        # regret: pseudo against θ*, realized against the clients' mean parameter θ̄
        means_bar = np.einsum("mkd,md->mk", self.X[rr], theta_bar)
        best = self.best[rr]
        gaps_bar = means_bar[np.arange(m), best][:, None] - np.where(
            valid, means_bar[np.arange(m)[:, None], safe], 0.0
        )
        gaps_bar = np.where(valid, gaps_bar, 0.0)
        self.segment(rr, start[done], cnt.sum(axis=1), _sub(pseudo, done), _blocks(cnt, gaps_bar))
        # the privatizer
        released, sd, messages, sigma_n = self.privatize_average(phase, rr, Y, avg, ss, n, valid)
        del Y
        # the estimate and the elimination
        theta_hat, V_pinv = _least_squares(X, cnt, cnt * released)
        term_a = math.sqrt(2 * self.d / (h * n))
        term_c = self.width_sd[rr] / math.sqrt(n)
        if learner.mode == "practical" and learner.private:
            sigma_n = _privacy_sd(self.X[rr], self.active[rr], V_pinv, X, cnt.astype(np.float64) * sd)
        W = (term_a + term_c + sigma_n) * self.log_term
        self.eliminate(
            phase, h, rr, start[done], n, sup, cnt, avg, released, sd, sigma_n, W, theta_hat, messages
        )
        self.clients[rr] += n

    def privatize_average(
        self, phase: int, rr: IntArray, Y: FloatArray, avg: FloatArray, s: IntArray, n: int, valid: BoolArray
    ) -> tuple[FloatArray, FloatArray, IntArray, FloatArray]:
        """ỹ_l of DP-DPE: the released average, its per-coordinate noise sd (or variance bound),
        the communication of the phase and the faithful ``σ_n`` of Table 3."""
        learner, noise = self.learner, self.noise
        m = avg.shape[0]
        B = learner.bound
        S_eff = np.maximum(self.S, s).astype(np.float64)
        reals = (s * n).astype(np.int64)
        zero = np.zeros(m)
        if noise.kind == "none":
            return avg, np.zeros_like(avg), reals, zero
        eps, delta = learner.epsilon, learner.delta
        assert eps is not None
        assert delta is not None
        root_s = np.sqrt(s.astype(np.float64))
        if noise.kind == "protocol":
            released = np.zeros_like(avg)
            sd = np.zeros(m)
            bits = np.zeros(m, dtype=np.int64)
            for j, r in enumerate(rr.tolist()):
                params = sdp_dpe_parameters(eps, delta, n, int(s[j]), B)
                released[j, : s[j]] = sdp_average(Y[j : j + 1, :, : s[j]], params, self.private_rng[r])[0]
                sd[j] = theorem_a2_sd(params)
                bits[j] = n * params.bits
            self.account(phase, Event(sdp_dpe_parameters(eps, delta, n, int(s[0]), B).event()))
            sigma_n = 2 * sd * np.sqrt(S_eff * self.d)
            return released, sd[:, None] * valid, bits, sigma_n
        if noise.kind == "surrogate":
            sd = B * root_s * np.log(s / delta) / (eps * n)
            sigma_n = 2 * sd * np.sqrt(S_eff * self.d)  # unused: practical widths are data-dependent
        else:
            z = noise.multiplier
            # ℓ2 sensitivities under replace-one (Li, Zhou & Ji 2022, §4.1): a client's clipped
            # report ȳ ∈ [-B, B]^{s_l} moves by ‖ȳ - ȳ'‖₂ <= 2B√s_l (eq. 21), the clients' average
            # by 2B√s_l/|U_l| (eq. 19)
            report = 2 * B * root_s
            squared = [4 * Fraction(B) ** 2 * k for k in s.tolist()]  # Δ² exactly: √s_l is irrational
            if learner.model == "central":
                sens = report / n
                sigma = sens * z * SIGMA_UP  # σ_nc = zΔ, eq. (5): the server's noise on the average
                sd = sigma
                sigma_n = 2 * sd * np.sqrt(S_eff * self.d)
                squared = [q / n**2 for q in squared]
            else:
                sigma = report * z * SIGMA_UP  # σ_nl = zΔ, eq. (7): each client's noise on its report
                sd = sigma / math.sqrt(n)  # the average of n clients' independent noise
                sigma_n = 2 * sigma * np.sqrt(S_eff * self.d / n)
            # the ledger from the σ that scales the draw below, never from z beside it (halving the drawn
            # noise must change the ledger)
            self.account(phase, released_event(sigma, squared, z))
        gauss = np.zeros_like(avg)
        for j, r in enumerate(rr.tolist()):
            gauss[j, : s[j]] = self.private_rng[r].standard_normal(int(s[j]))
        sd2 = sd[:, None] * valid
        return avg + gauss * sd2, sd2, reals, sigma_n

    def account(self, phase: int, event: Event) -> None:
        """Phase ``l`` released: its clients' ledger (one release each; a phase releases once, for
        all its repetitions, so there is one event per phase)."""
        if phase not in self.ledgers:
            self.ledgers[phase] = Accountant(Neighbouring.REPLACE_ONE).compose(event)

    def eliminate(
        self,
        phase: int,
        h: float,
        rr: IntArray,
        start: IntArray,
        n: int,
        sup: IntArray,
        cnt: IntArray,
        avg: FloatArray,
        released: FloatArray,
        sd: FloatArray,
        sigma_n: FloatArray,
        W: FloatArray,
        theta_hat: FloatArray,
        messages: IntArray,
    ) -> None:
        """Line 18: drop every active action more than ``2 W_l`` below the best estimate (strictly)."""
        est = np.einsum("mkd,md->mk", self.X[rr], theta_hat)
        active = self.active[rr]
        top = np.where(active, est, -np.inf).max(axis=1)
        out = active & (top[:, None] - est > 2 * W[:, None])
        before = active.copy()
        self.active[rr] = active & ~out
        self.phases[rr] += 1
        if self.noise.kind == "protocol":
            self.bits[rr] += messages
        else:
            self.reals[rr] += messages
            self.bits[rr] += messages * FLOAT_BITS
        if self.observer is not None:
            self.observer(
                PhaseRecord(
                    phase=phase, h=h, reps=rr.copy(), start=start.copy(), clients=n, support=sup.copy(),
                    counts=cnt.copy(), average=avg, released=released, noise_sd=sd,
                    sigma_n=np.asarray(sigma_n), width=W, theta_hat=theta_hat, active=before, eliminated=out,
                    messages=messages,
                )
            )  # fmt: skip

    # -- DP-PE ---------------------------------------------------------------------------
    def single_phase(
        self,
        phase: int,
        h: float,
        reps: IntArray,
        start: IntArray,
        support: IntArray,
        Tx: IntArray,
        s: IntArray,
        complete: BoolArray,
        pseudo: Callable[[IntArray, IntArray], FloatArray],
    ) -> None:
        learner = self.learner
        B = learner.bound
        m, width = support.shape
        valid = support >= 0
        safe = np.maximum(support, 0)
        mu = np.where(valid, self.means[reps[:, None], safe], 0.0)
        played = np.minimum(Tx.sum(axis=1), self.T - start + 1)
        top = int(played.max())
        # one client per pull: rewards ⟨θ*, x⟩ + noise, in play order (blocks of T(x))
        y = np.zeros((m, top))
        block = np.zeros((m, top), dtype=np.int64)
        for j, r in enumerate(reps.tolist()):
            p = int(played[j])
            block[j, :p] = np.repeat(np.arange(width), Tx[j])[:p]
            y[j, :p] = self.env[r].standard_normal(p)
        y *= self.noise_sd[reps][:, None]
        y += np.take_along_axis(mu, block, axis=1)
        inside = np.arange(top)[None, :] < played[:, None]
        y *= inside
        cum = np.cumsum(y, axis=1)
        best_mean = self.means[reps, self.best[reps]]

        def realized(i: IntArray, k: IntArray) -> FloatArray:
            got = np.where(k > 0, cum[i, np.maximum(k, 1) - 1], 0.0)
            return np.asarray(k * best_mean[i] - got, dtype=np.float64)

        self.segment(reps, start, Tx.sum(axis=1), pseudo, realized)
        done = np.flatnonzero(complete)
        if done.size == 0:
            return
        rr, sup, cnt, ss = reps[done], support[done], Tx[done], s[done]
        yc = np.clip(y[done], -B, B) if learner.clipped else y[done]
        yc *= inside[done]
        flat = (np.arange(done.size)[:, None] * width + block[done]).ravel()
        totals = np.bincount(flat, weights=yc.ravel(), minlength=done.size * width)
        sums: FloatArray = np.asarray(totals, dtype=np.float64).reshape(done.size, width) * valid[done]
        released, sd, messages, sigma_n = self.privatize_sums(
            phase, h, rr, yc, block[done], sums, cnt, ss, valid[done]
        )
        X = self.X[rr[:, None], np.maximum(sup, 0)]
        theta_hat, V_pinv = _least_squares(X, cnt, released)
        if learner.mode == "practical" and learner.private:
            sigma_n = _privacy_sd(self.X[rr], self.active[rr], V_pinv, X, sd)
        W = (math.sqrt(2 * self.d / h) + sigma_n) * self.log_term
        self.eliminate(
            phase, h, rr, start[done], 0, sup, cnt, sums, released, sd, sigma_n, W, theta_hat, messages
        )
        self.clients[rr] += cnt.sum(axis=1)

    def privatize_sums(
        self,
        phase: int,
        h: float,
        rr: IntArray,
        yc: FloatArray,
        block: IntArray,
        sums: FloatArray,
        cnt: IntArray,
        s: IntArray,
        valid: BoolArray,
    ) -> tuple[FloatArray, FloatArray, IntArray, FloatArray]:
        """ỹ_l of DP-PE (Table 4): the released sums, their noise sd per action, the communication and
        the faithful ``σ_n``."""
        learner, noise = self.learner, self.noise
        m = sums.shape[0]
        B = learner.bound
        reals = cnt.sum(axis=1).astype(np.int64)
        if noise.kind == "none":
            return sums, np.zeros_like(sums), reals, np.zeros(m)
        eps, delta = learner.epsilon, learner.delta
        assert eps is not None
        assert delta is not None
        root_s = np.sqrt(s.astype(np.float64))
        d = self.d
        if noise.kind == "protocol":
            released = np.zeros_like(sums)
            sd = np.zeros_like(sums)
            bits = np.zeros(m, dtype=np.int64)
            before = np.cumsum(cnt, axis=1) - cnt
            for j, r in enumerate(rr.tolist()):
                for a in range(int(s[j])):
                    count = int(cnt[j, a])
                    params = sdp_pe_parameters(eps, delta, count, B)
                    chunk = yc[j : j + 1, before[j, a] : before[j, a] + count]
                    released[j, a] = shuffle_sum(chunk, params, self.private_rng[r])[0]
                    sd[j, a] = math.sqrt(params.variance())
                    bits[j] += count * params.bits
            self.account(phase, Event(ApproxDP(eps, delta, sdp_pe_parameters(eps, delta, 1, B).theorem)))
            sigma_n = 2 * d * sd.max(axis=1) * root_s / h
            return released, sd, bits, sigma_n
        z = noise.multiplier
        # each client adds one reward in [-B, B] to one action's sum (App. C.2): replacing it moves the
        # vector of sums by at most 2B in ℓ2, in every repetition and phase
        sens = 2 * B
        sigma = sens * z * SIGMA_UP  # σ_nc = σ_nl = zΔ (classic: 2B sqrt(2 ln(1.25/δ))/ε), Table 4
        if learner.model == "central":
            sd = np.full(sums.shape, sigma)
            sigma_n = 2 * d * sigma * root_s / h
        else:
            sd = sigma * np.sqrt(cnt.astype(np.float64))  # the sum of T(x) clients' noise
            sigma_n = 2 * d * sigma * np.sqrt(2 * s / h)
        # the release as it is (the same σ and Δ in every repetition): the server's noise on the sums
        # (central) or each client's on its reward (local), the σ that scales the draw below
        self.account(phase, Event(AdditiveNoise(Gaussian(sigma), sens)))
        gauss = np.zeros_like(sums)
        for j, r in enumerate(rr.tolist()):
            gauss[j, : s[j]] = self.private_rng[r].standard_normal(int(s[j]))
        sd = sd * valid
        return sums + gauss * sd, sd, reals, sigma_n


def _sub(
    fn: Callable[[IntArray, IntArray], FloatArray], index: IntArray
) -> Callable[[IntArray, IntArray], FloatArray]:
    """``fn`` restricted to the rows ``index`` (``i`` indexes ``index``)."""
    return lambda i, m: fn(index[i], m)


def _least_squares(X: FloatArray, counts: IntArray, weighted: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``θ̂ = V⁺ Σ_x x w(x)`` with ``V = Σ_x T(x) x xᵀ`` over the support (line 17; eq. 53 for DP-PE),
    and ``V⁺`` (the pseudo-inverse on the span of the support, Remark 3.2; relative cut ``1e-10``)."""
    V = np.einsum("ms,msd,mse->mde", counts.astype(np.float64), X, X)
    P = np.linalg.pinv(V, rcond=1e-10, hermitian=True)
    G = np.einsum("ms,msd->md", weighted, X)
    return np.einsum("mde,me->md", P, G), P


def _privacy_sd(
    actions: FloatArray, active: BoolArray, V_pinv: FloatArray, X: FloatArray, scale: FloatArray
) -> FloatArray:
    """Practical mode's ``σ_n``: ``max_{x' ∈ D_l} sqrt(Σ_x ⟨x', V⁺ x⟩² scale(x)²)``, the exact standard
    deviation of the privacy term of ``⟨θ̂, x'⟩`` (``scale = T(x) σ`` for DP-DPE, ``σ_x`` for DP-PE)."""
    A = actions @ V_pinv @ X.swapaxes(1, 2)  # (m, k, s): ⟨x', V⁺ x⟩
    var = np.einsum("mks,ms->mk", A * A, scale * scale)
    return np.asarray(np.sqrt(np.where(active, var, 0.0).max(axis=1)), dtype=np.float64)


def run(
    learner: Learner,
    instances: PhasedInstance | Sequence[PhasedInstance],
    horizon: int,
    *,
    tapes: Sequence[np.random.Generator],
    rng: np.random.Generator,
    checkpoints: int = 1000,
    delta: float | None = None,
    observer: Callable[[PhaseRecord], None] | None = None,
) -> RunResult:
    """Run ``learner`` for ``R = len(tapes)`` repetitions of ``horizon`` rounds.

    Parameters
    ----------
    learner : Learner
        From :func:`make_learner`.
    instances : PhasedInstance or sequence of them
        One instance for every repetition, or one per repetition (same ``k`` and ``d``).
    horizon : int
        ``T`` (at most ``2^40``).
    tapes : sequence of numpy.random.Generator
        Repetition ``r``'s clients, rewards and design directions come from streams seeded by
        ``tapes[r]`` (a fresh generator of the same seed gives every algorithm the same clients).
    rng : numpy.random.Generator
        The privacy noise (one stream per repetition, seeded in order).
    checkpoints : int
        Regret is recorded after ``ceil(c T / C)`` rounds, ``c = 1..C``.
    delta : float or None
        δ of the privacy report (``None``: the learner's δ, or 1e-6 without privacy).
    observer : callable or None
        Called with a :class:`PhaseRecord` after every phase that released (for audits and tests).

    Returns
    -------
    RunResult
    """
    insts, T, gens, rounds = _check_run(learner, instances, horizon, tapes, rng, checkpoints)
    d_report = report_delta(learner.delta, delta)
    if observer is not None and not callable(observer):
        raise ParameterTypeError("observer", observer, "a callable taking a PhaseRecord, or None")
    engine = _Engine(learner, insts, T, gens, rng, rounds, observer)
    phase = 0
    while not engine.done.all():
        phase += 1
        engine.run_phase(phase)

    return RunResult(
        learner=learner,
        mode=learner.mode,
        horizon=T,
        rounds=read_only(rounds),
        pseudo_regret=read_only(engine.pseudo),
        realized_regret=read_only(engine.realized),
        phases=read_only(engine.phases),
        clients=read_only(engine.clients),
        reals=read_only(engine.reals),
        bits=read_only(engine.bits),
        final_arms=read_only(engine.active.sum(axis=1).astype(np.int64)),
        noise=engine.noise,
        beta=engine.beta,
        delta=d_report,
        _ledgers=engine.ledgers,
    )
