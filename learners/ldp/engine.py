"""The vectorized engines of the LDP bandits paper's learners (Zheng et al. 2020).

Every round a **new user** arrives, takes part once and sends the server locally privatized
messages only (:mod:`learners.ldp.randomizers`); the server runs a bandit learner on them: the
black-box reduction of Algorithm 1 around a one-point base (:mod:`learners.ldp.bases`), the
two-point descent of Algorithm 2, and the contextual Algorithms 5 and 3.

**Algorithm 5** (``ldp-linucb``, Zheng et al. 2020, §4.1 and App. D).
``Υ_t = σ√t (4√d + 2 ln(2T/α))``, ``c_t = 2Υ_t``, ``Ṽ_t = V_t + c_t I``, ``θ̃_t = Ṽ_t^{-1} u_t``; at
round ``t`` the user plays ``argmax ⟨θ̃_{t-1}, x⟩ + β_{t-1} ‖x‖_{Ṽ_{t-1}^{-1}}`` (lowest index on
ties, as the official code's ``np.argmax``). ``radius="code"`` (the default of ``mode="code"``): the
official code's ``β_t = 2σ sqrt(d ln T) + (sqrt(3Υ_t) + σ sqrt(dt/Υ_t)) d ln T`` (the official code,
the only available source of the appendix's formula); ``radius="derived"`` (the default of
``mode="paper"``): a first-principles radius derived here (self-normalized bound plus the noise
terms) (the code's ``β`` with the paper's square-root bonus over-explores: linear regret up to
``T = 32000`` on the synthetic instance). Round 1 (``Υ_0 = 0`` would make ``Ṽ_0`` singular):
``Ṽ_0 = c_1 I``, ``θ̃_0 = 0`` and ``β_0 := β_1``. ``Ṽ`` can be indefinite (with probability at most
``α``, or at small ``t``): the quadratic form is clamped at 0 before the square root and the rounds
where that happened are counted (:attr:`RunResult.indefinite`). ``Ṽ^{-1}`` is a fresh inverse every
round (``c_t`` changes every round, so Sherman–Morrison does not apply).

**Algorithm 3** (``ldp-glm``, Zheng et al. 2020, §4.2): ``θ̂_1 = 0``, ``ζ = 1/√T`` (``step``),
``β_t = sqrt(κ C σ sqrt(d t)/μ)`` (``κ = radius_scale``; our reconstruction of the paper's truncated
``β_t² = O(Cσ sqrt(dt)/μ)``), ``μ, C`` of the link (:func:`learners.ldp.instances.link_constants`:
logistic ``0.19661, 1``; Poisson ``e^{-1}, e``); the user clips ``g(xᵀθ̂) − y`` to ``[-C, C]`` (the
``r_t`` of Algorithm 3 is calibrated to sensitivity ``2C``, which needs the clip for the Poisson
link), and ``θ̂_{t+1} = Π_W(θ̂_t − ζ(∇ℓ_t(θ̂_t) + r_t))`` on the unit ball ``W``.

**Regret.** ``pseudo_regret``: Algorithms 1, 2: ``Σ_t f(x_t) − f(x*)`` on the mean loss (the mean
of the two points for Algorithm 2); contextual: ``Σ_t g(x_{t,*}ᵀθ*) − g(x_tᵀθ*)`` (Zheng et al. 2020, §4).
``realized_regret``: ``Σ_t f_t(x_t) − f_t(x*)`` (MAB: ``Σ_t f_t(a_t) − μ*``), contextual
``Σ_t g(x_{t,*}ᵀθ*) − y_t`` with the rewards observed (unclipped).

**Vectorization.** Repetitions are the leading axis ``R`` of every array; rounds loop. The
contextual learners draw a chunk of :data:`CHUNK` rounds of contexts and noise at once, and the
running noise sums ``Σ B_s`` and ``Σ ξ_s`` of a chunk by one cumulative sum. Streams: the
privacy noise comes from ``rng``, the base learners' and Algorithm 2's directions from a stream
spawned from it, and the environment (contexts, losses, rewards) from ``env_rng`` (default:
spawned from ``rng``), so several learners given the same ``env_rng`` seed see the same users.

**Deviations from the official code** beyond the modes: float64 instead of float32; contexts and
privacy noise from explicit generators, so its exact numbers are not reproduced.

**Measured** (``tests/benchmarks/test_ldp_bench.py``): see that module's docstring.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.accountant import Accountant
from learners.errors import ParameterError, ParameterTypeError
from learners.ldp.bases import Feedback, two_point_gradient
from learners.ldp.instances import (
    BernoulliArms,
    ContextualInstance,
    QuadraticLoss,
    apply_link,
    project_ball,
    unit_sphere,
)
from learners.ldp.noise import (
    Message,
    Noise,
    glm_constants,
    lipschitz_of,
    loss_bound,
    noise_of,
    rr_outputs,
    two_point_rho,
)
from learners.ldp.privacy import Privacy, privacy_of
from learners.ldp.randomizers import packed_noise, privatize_difference, privatize_loss
from learners.ldp.recipes import MATRIX_SENSITIVITY, upsilon
from learners.ldp.spec import MAX_HORIZON, Learner
from learners.runs import checkpoint_rounds, read_only, report_delta
from learners.symmetric import mirror

__all__ = ["CHUNK", "ContextualRecord", "RunResult", "footprint", "run"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Rounds of contexts and noise drawn at once by the contextual learners.
CHUNK = 1024


def _contextual_shapes(n: int, R: int, K: int, d: int) -> dict[str, tuple[int, ...]]:
    """The float64 arrays :func:`_run_contextual` holds for a block of ``n`` rounds of ``R``
    repetitions with ``K`` contexts in ``R^d``: the contexts and ``xᵀθ*``, the users' matrix noise
    (packed, then mirrored) and vector noise, and per round the products with ``Ṽ⁻¹``."""
    D = d * (d + 1) // 2
    return {
        "contexts": (n, R, K, d),
        "linear": (n, R, K),
        "matrix_noise": (2, n, R, D),
        "matrix_noise_full": (n, R, d, d),
        "vector_noise": (3, n, R, d),
        "round": (2, R, K, d),
        "statistics": (3, R, d, d),
    }


def footprint(
    learner: Learner, R: int, K: int, d: int, T: int, checkpoints: int
) -> tuple[dict[str, tuple[int, ...]], int]:
    """The float64 arrays a :func:`run` of ``R`` repetitions holds at its peak, by name and shape,
    and its work (multiply-adds): the contextual learners' blocks of :data:`CHUNK` rounds
    (:func:`_contextual_shapes`; ``T R K d²`` for the scores ``xᵀṼ⁻¹x``), the others' points
    and losses, ``T R d``."""
    out: dict[str, tuple[int, ...]] = {"curves": (2, R, min(checkpoints, T))}
    if learner.name in ("ldp-linucb", "ldp-glm"):
        out.update(_contextual_shapes(min(CHUNK, T), R, K, d))
        return out, T * R * K * d * d
    out["points"] = (8, R, max(K, 2), d)
    return out, T * R * max(K, 2) * d


@dataclass(frozen=True, eq=False)
class ContextualRecord:
    """What the server of ``ldp-linucb`` (Algorithm 5) or ``ldp-glm`` (Algorithm 3) received by round
    ``t``, and the same without the users' noise (Zheng et al. 2020, §4.1 and §4.2); passed to
    :func:`run`'s ``observer`` after every round, for audits and tests.

    The server keeps the users' matrices and vectors summed: round ``t``'s own messages are the
    differences between consecutive records' sums.

    Attributes
    ----------
    round : int
        ``t``.
    matrix : numpy.ndarray, shape (R, d, d)
        ``Σ_{s<=t} (x_s x_sᵀ + B_s)``, the sum of the released matrices (mirrored upper triangles),
        before the ridge ``c_t I``.
    vector : numpy.ndarray, shape (R, d)
        ``Σ_{s<=t} (clip(y_s, ±Y) x_s + ξ_s)`` (Algorithm 5) or ``Σ_{s<=t} (z_s x_s + ξ_s)``
        (Algorithm 3), the sum of the released vectors.
    gradient : numpy.ndarray, shape (R, d), or None
        ``ldp-glm``: round ``t``'s released gradient ``∇ℓ_t(θ̂_t) + r_t`` (its OGD step uses it alone).
    exact_matrix, exact_vector, exact_gradient : numpy.ndarray or None
        The same without noise: ``Σ x_s x_sᵀ``, ``Σ clip(y_s, ±Y) x_s`` or ``Σ z_s x_s``, and
        ``clip(g(x_tᵀθ̂_t) − y_t, ±C) x_t``.
    """

    round: int
    matrix: FloatArray
    vector: FloatArray
    gradient: FloatArray | None
    exact_matrix: FloatArray
    exact_vector: FloatArray
    exact_gradient: FloatArray | None


@dataclass(frozen=True, eq=False)
class RunResult:
    """The outcome of :func:`run` for ``R`` repetitions (arrays read-only).

    Attributes
    ----------
    learner : Learner
    mode : str
    horizon : int
    rounds : numpy.ndarray of int64, shape (C,)
        The checkpoints ``ceil(cT/C)``.
    pseudo_regret, realized_regret : numpy.ndarray, shape (R, C)
        Cumulative regrets at :attr:`rounds` (module docstring).
    noise : Noise
    delta : float
        The δ of :attr:`privacy`.
    indefinite : numpy.ndarray of int64, shape (R,)
        Contextual: rounds whose ``Ṽ_{t-1}`` gave a negative quadratic form on an arm (clamped at 0).
    theta_hat_norm : numpy.ndarray, shape (R,)
        ``ldp-glm``: the largest ``‖θ̂_t‖`` of the run (``<= 1``: the projection); else 0.
    final_estimate : numpy.ndarray, shape (R, d)
        The last ``θ̃`` (contextual) or the last played point's centre ``y`` (continuous BCO), else empty.
    """

    learner: Learner
    mode: str
    horizon: int
    rounds: IntArray
    pseudo_regret: FloatArray
    realized_regret: FloatArray
    noise: Noise
    delta: float
    indefinite: IntArray
    theta_hat_norm: FloatArray
    final_estimate: FloatArray
    _ledgers: dict[int, Accountant] = field(repr=False)

    @property
    def ledgers(self) -> dict[int, Accountant]:
        """One user's ledger (key 1; every round's user has the same one), a copy."""
        return {k: acc.copy() for k, acc in self._ledgers.items()}

    @cached_property
    def privacy(self) -> Privacy:
        """:func:`privacy_of` the run's ledgers at :attr:`delta`."""
        return privacy_of(self.learner, self.noise, self._ledgers, self.delta)


class _Curves:
    """Cumulative regrets, recorded at the checkpoints."""

    def __init__(self, R: int, rounds: IntArray) -> None:
        self.rounds = rounds
        self.pseudo = np.zeros((R, rounds.size))
        self.realized = np.zeros((R, rounds.size))
        self.cum_p = np.zeros(R)
        self.cum_r = np.zeros(R)
        self.k = 0

    def add(self, t: int, pseudo: FloatArray, realized: FloatArray) -> None:
        self.cum_p += pseudo
        self.cum_r += realized
        if self.k < self.rounds.size and t == self.rounds[self.k]:
            self.pseudo[:, self.k] = self.cum_p
            self.realized[:, self.k] = self.cum_r
            self.k += 1


def _virtual_range(bound: float, noise: Noise, horizon: int, delta: float | None) -> float:
    """``B' = B + σ sqrt(2 ln(2T/δ))`` (the proof of Theorem 3; Laplace: ``B + b ln(2T)``, the value exceeded
    with probability ``1/(2T)`` a round)."""
    if noise.kind == "none":
        return bound
    if noise.kind == "randomized-response":  # the decoded values are bounded: no tail to cut
        assert noise.loss_range is not None
        return max(abs(x) for x in rr_outputs(*noise.loss_range, noise.messages[0].epsilon))
    sd = noise.messages[0].sd
    if noise.kind == "laplace" or delta is None:
        return bound + sd * math.log(2 * horizon)
    return bound + sd * math.sqrt(2 * math.log(2 * horizon / delta))


def _run_one_point(
    learner: Learner, instance: object, T: int, R: int, noise: Noise, gens: tuple[np.random.Generator, ...],
    curves: _Curves,
) -> FloatArray:  # fmt: skip
    noise_rng, learner_rng, env = gens
    base = learner.base
    assert base is not None
    B = loss_bound(learner, instance)
    if base.domain == "arms":
        if not isinstance(instance, BernoulliArms):
            raise ParameterTypeError(
                "instance", instance, f"a BernoulliArms instance for the MAB base '{base.name}'"
            )
        dim, G = instance.arms, 0.0
    else:
        if not isinstance(instance, QuadraticLoss):
            raise ParameterTypeError(
                "instance", instance, f"a QuadraticLoss instance for the base '{base.name}'"
            )
        dim, G = instance.dim, lipschitz_of(learner, instance)
    sd = noise.messages[0].sd if noise.messages else 0.0
    if noise.kind == "laplace":
        sd *= math.sqrt(2)
    feedback = Feedback(dim, T, B, sd, _virtual_range(B, noise, T, learner.delta), G)
    state = base.start(R, feedback, learner_rng)
    for t in range(1, T + 1):
        points = state.propose()
        losses = instance.evaluate(points[:, None, ...], env)
        state.observe(privatize_loss(losses.values[:, 0], B, noise, noise_rng))
        curves.add(t, losses.means[:, 0] - losses.best_mean, losses.values[:, 0] - losses.best_values)
    y = getattr(state, "y", None)
    return np.asarray(y, dtype=np.float64) if y is not None else np.zeros((R, 0))


def _run_two_point(
    learner: Learner, instance: object, T: int, R: int, noise: Noise, gens: tuple[np.random.Generator, ...],
    curves: _Curves,
) -> FloatArray:  # fmt: skip
    noise_rng, learner_rng, env = gens
    if not isinstance(instance, QuadraticLoss):
        raise ParameterTypeError("instance", instance, "a QuadraticLoss instance for 'two-point'")
    d = instance.dim
    G = lipschitz_of(learner, instance)
    rho = two_point_rho(learner, T)
    xi = rho  # ξ = ρ/r with r = 1: y ± ρu stays in the unit ball
    mu = learner.strong_convexity
    y = np.zeros((R, d))
    for t in range(1, T + 1):
        u = unit_sphere(learner_rng, (R,), d)
        points = np.stack([y + rho * u, y - rho * u], axis=1)  # (R, 2, d)
        losses = instance.evaluate(points, env)
        difference = losses.values[:, 0] - losses.values[:, 1]
        m = privatize_difference(difference, 2 * rho * u, 2 * rho * G, noise, noise_rng)
        eta = (
            learner.eta if learner.eta is not None else (1 / (mu * t) if mu is not None else 1 / math.sqrt(T))
        )
        y = project_ball(y - eta * two_point_gradient(m, u, rho), 1.0 - xi)
        curves.add(
            t, losses.means.mean(axis=1) - losses.best_mean, losses.values.mean(axis=1) - losses.best_values
        )
    return y


def _linucb_beta(learner: Learner, sigma: float, t: int, d: int, T: int) -> float:
    """``β_t`` of Algorithm 5 (``radius``; module docstring)."""
    ups = upsilon(sigma, t, d, T, learner.alpha)
    if learner.radius == "code":
        lnT = math.log(T)
        beta = (
            2 * sigma * math.sqrt(d * lnT) + (math.sqrt(3 * ups) + sigma * math.sqrt(d * t / ups)) * d * lnT
        )
    else:
        a = learner.alpha
        beta = (
            math.sqrt(2 * math.log(2 / a) + d * math.log(1 + t / (d * ups)))
            + math.sqrt(3 * ups)
            + sigma * math.sqrt(t) * (math.sqrt(d) + math.sqrt(2 * math.log(2 * T / a))) / math.sqrt(ups)
        )
    return learner.radius_scale * beta


def _run_contextual(
    learner: Learner, instance: ContextualInstance, T: int, R: int, noise: Noise,
    gens: tuple[np.random.Generator, ...], curves: _Curves,
    observer: Callable[[ContextualRecord], None] | None = None,
) -> tuple[FloatArray, IntArray, FloatArray]:  # fmt: skip
    """Algorithms 5 (``ldp-linucb``) and 3 (``ldp-glm``): the server's ridge regression on the
    users' released sums, LinUCB on it, and for the GLM the noisy OGD estimate ``θ̂``; returns the
    last ``θ̃``, the rounds with an indefinite ``Ṽ`` and the largest ``‖θ̂‖`` of each repetition."""
    noise_rng, _, env = gens
    d = instance.dim
    glm = learner.name == "ldp-glm"
    code = learner.mode == "code"
    sigma = noise.sigma  # the paper's σ, in Υ_t and β_t (the server's widths, not the draws)
    link = instance.link
    matrix, vector, gradient, mu, C, zeta = _contextual_messages(learner, instance, noise, T)
    Y = learner.reward_bound
    rows = np.arange(R)
    eye = np.eye(d)
    XX = np.zeros((R, d, d))
    XY = np.zeros((R, d))
    N_packed = np.zeros((R, d * (d + 1) // 2))
    xi_sum = np.zeros((R, d))
    theta_hat = np.zeros((R, d))
    hat_norm = np.zeros(R)
    indefinite = np.zeros(R, dtype=np.int64)

    def radius(t: int) -> float:
        if glm:
            return math.sqrt(learner.radius_scale * C * sigma * math.sqrt(d * t) / mu)
        return _linucb_beta(learner, sigma, t, d, T)

    # Ṽ_0 (Υ_0 = 0 would make it singular): c_1 I in the paper's mode, 0.1 I in the code's
    c0 = 0.1 if code else 2 * upsilon(sigma, 1, d, T, learner.alpha)
    V_inv = np.broadcast_to(eye / c0, (R, d, d)).copy()
    theta = np.zeros((R, d))
    beta_prev = radius(1)
    for start in range(0, T, CHUNK):
        n = min(CHUNK, T - start)
        ctx = instance.contexts(env, *_contextual_shapes(n, R, instance.arms, d)["contexts"][:2])
        lin_all = ctx @ instance.theta  # (n, R, K): xᵀθ*
        best = instance.mean(lin_all.max(axis=2))  # (n, R): g increasing
        N_cum = np.cumsum(packed_noise(noise_rng, (n, R), d, matrix.draw_sd), axis=0) + N_packed
        N_full = mirror(N_cum, d)
        xi_cum = np.cumsum(noise_rng.standard_normal((n, R, d)) * vector.draw_sd, axis=0) + xi_sum
        N_packed, xi_sum = N_cum[-1], xi_cum[-1]
        if gradient is not None:
            grad_noise = noise_rng.standard_normal((n, R, d)) * gradient.draw_sd
        for i in range(n):
            t = start + i + 1
            X = ctx[i]
            beta = radius(t) if code else beta_prev
            q = np.einsum("rkd,rkd->rk", X @ V_inv, X)
            negative = (q < 0).any(axis=1)
            if negative.any():
                indefinite += negative
                q = np.maximum(q, 0.0)
            bonus = q if code else np.sqrt(q)
            scores = (X @ theta[:, :, None])[:, :, 0] + beta * bonus
            a = np.argmax(scores, axis=1)
            x = X[rows, a]
            lin = lin_all[i, rows, a]
            y = instance.reward(lin, env)
            curves.add(t, best[i] - instance.mean(lin), best[i] - y)
            XX += x[:, :, None] * x[:, None, :]
            released_gradient = exact_gradient = None
            if glm:
                z = np.einsum("ri,ri->r", x, theta_hat)
                XY += z[:, None] * x
                residual = np.clip(apply_link(link, z) - y, -C, C)
                exact_gradient = residual[:, None] * x
                released_gradient = exact_gradient + grad_noise[i]  # the user's third message
                theta_hat = project_ball(theta_hat - zeta * released_gradient)
                hat_norm = np.maximum(hat_norm, np.linalg.norm(theta_hat, axis=1))
            else:
                XY += np.clip(y, -Y, Y)[:, None] * x
            c = 2 * upsilon(sigma, t, d, T, learner.alpha)
            V = XX + N_full[i]  # the sum of the released matrices x_s x_sᵀ + B_s, s <= t
            if observer is not None:
                released_matrix = V.copy()
            V += c * eye
            V_inv = np.linalg.inv(V)
            released_vector = XY + xi_cum[i]  # the sum of the released vectors
            theta = (V_inv @ released_vector[:, :, None])[:, :, 0]
            if not code:
                beta_prev = radius(t)
            if observer is not None:
                observer(
                    ContextualRecord(
                        t, released_matrix, released_vector, released_gradient,  # fresh arrays
                        XX.copy(), XY.copy(), exact_gradient,
                    )
                )  # fmt: skip
    return theta, indefinite, hat_norm


def _contextual_messages(
    learner: Learner, instance: ContextualInstance, noise: Noise, T: int
) -> tuple[Message, Message, Message | None, float, float, float]:
    """The blocks of a contextual user's release (matrix, vector, and the GLM's gradient) and the
    GLM's ``μ``, ``C`` and step ``ζ`` (0 for LinUCB), checked against the instance's link.

    The users draw every block's noise at its message's ``draw_sd``, the number the ledger's event
    is built from (:meth:`Noise.ledger`: the ledger holds what was drawn); each message's
    sensitivity is its clip's.
    """
    glm = learner.name == "ldp-glm"
    link = instance.link
    mu = C = zeta = 0.0
    if glm:
        if link == "identity":
            raise ParameterError(
                "link", link, "'logistic' or 'poisson' for 'ldp-glm' (use 'ldp-linucb' for linear)"
            )
        mu, C = glm_constants(learner, instance)
        zeta = learner.step if learner.step is not None else 1 / math.sqrt(T)
    elif link != "identity":
        raise ParameterError("link", link, "'identity' for 'ldp-linucb' (use 'ldp-glm' for a GLM)")
    Y = learner.reward_bound
    blocks = {m.name: m for m in noise.messages}
    matrix, vector = blocks["matrix"], blocks["vector"]
    assert matrix.spread == vector.spread == 1.0
    assert matrix.sensitivity == MATRIX_SENSITIVITY
    assert vector.sensitivity == (2.0 if glm else 2 * Y)  # |z| <= ‖x‖‖θ̂‖ <= 1; y clipped to ±Y
    gradient = None
    if glm:
        gradient = blocks["gradient"]
        assert gradient.spread == 1.0
        assert gradient.sensitivity == 2 * C  # the residual clipped to ±C, times ‖x‖ <= 1
    return matrix, vector, gradient, mu, C, zeta


def run(
    learner: Learner,
    instance: QuadraticLoss | BernoulliArms | ContextualInstance,
    horizon: int,
    *,
    rng: np.random.Generator,
    repetitions: int = 1,
    env_rng: np.random.Generator | None = None,
    checkpoints: int = 1000,
    delta: float | None = None,
    observer: Callable[[ContextualRecord], None] | None = None,
) -> RunResult:
    """Run ``learner`` on ``instance`` for ``repetitions`` runs of ``horizon`` rounds (vectorized).

    Parameters
    ----------
    learner : Learner
        From :func:`make_learner`.
    instance : QuadraticLoss, BernoulliArms or ContextualInstance
        Algorithms 1 (continuous bases) and 2: :class:`~learners.ldp_instances.QuadraticLoss`;
        Algorithm 1 with :class:`UCB`: :class:`~learners.ldp_instances.BernoulliArms`; Algorithms
        3 and 5: :class:`~learners.ldp_instances.ContextualInstance` (``ldp-glm``: a logistic or
        Poisson link; ``ldp-linucb``: the identity).
    horizon : int
        ``T``.
    rng : numpy.random.Generator
        The privacy noise (and, by spawned streams, the learners' own randomness).
    repetitions : int
        ``R``.
    env_rng : numpy.random.Generator or None
        The environment (contexts, losses, rewards); ``None``: spawned from ``rng``.
    checkpoints : int
        Regret is recorded after ``ceil(cT/C)`` rounds, ``c = 1..C``.
    delta : float or None
        δ of the privacy report (``None``: the learner's, or 1e-6).
    observer : callable or None
        ``ldp-linucb`` and ``ldp-glm`` only: called with a :class:`ContextualRecord` after every
        round (for audits and tests; the run's numbers do not depend on it).
    """
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.ldp.Learner (see make_learner)")
    if observer is not None:
        if not callable(observer):
            raise ParameterTypeError("observer", observer, "a callable taking a ContextualRecord, or None")
        if learner.name not in ("ldp-linucb", "ldp-glm"):
            raise ParameterError(
                "observer", observer, f"None for '{learner.name}' (contextual learners only)"
            )
    T = v.integer("horizon", horizon, minimum=1, maximum=MAX_HORIZON)
    if learner.name in ("ldp-linucb", "ldp-glm") and T < 2:
        raise ParameterError("horizon", horizon, "an integer >= 2 (β_t uses ln T)")
    R = v.count("repetitions", repetitions, maximum=100_000)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    if env_rng is not None and not isinstance(env_rng, np.random.Generator):
        raise ParameterTypeError("env_rng", env_rng, "a numpy.random.Generator or None")
    C = v.integer("checkpoints", checkpoints, minimum=1)
    d_report = report_delta(learner.delta, delta)
    noise = noise_of(learner, instance, T)
    learner_rng, env_default = rng.spawn(2)
    gens = (rng, learner_rng, env_rng if env_rng is not None else env_default)
    rounds = checkpoint_rounds(T, C)
    curves = _Curves(R, rounds)
    indefinite = np.zeros(R, dtype=np.int64)
    hat_norm = np.zeros(R)
    if learner.name == "one-point":
        final = _run_one_point(learner, instance, T, R, noise, gens, curves)
    elif learner.name == "two-point":
        final = _run_two_point(learner, instance, T, R, noise, gens, curves)
    else:
        if not isinstance(instance, ContextualInstance):
            raise ParameterTypeError("instance", instance, "a learners.ldp_instances.ContextualInstance")
        final, indefinite, hat_norm = _run_contextual(learner, instance, T, R, noise, gens, curves, observer)
    ledgers = {1: noise.ledger()} if noise.kind != "none" else {}

    return RunResult(
        learner=learner,
        mode=learner.mode,
        horizon=T,
        rounds=read_only(rounds),
        pseudo_regret=read_only(curves.pseudo),
        realized_regret=read_only(curves.realized),
        noise=noise,
        delta=d_report,
        indefinite=read_only(indefinite),
        theta_hat_norm=read_only(hat_norm),
        final_estimate=read_only(np.array(final, dtype=np.float64)),
        _ledgers=ledgers,
    )
