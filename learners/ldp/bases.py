"""Algorithm 1's black boxes and Algorithm 2's estimator in the LDP bandits paper (Zheng et al. 2020).

**Algorithm 1** (Zheng et al. 2020, §3.1; :func:`learners.ldp.run` with ``one-point``). The base
learner is told the virtual range ``B' = B + σ sqrt(2 ln(2T/δ))`` (Laplace: ``B + b ln(2T)``; the
virtual range of the proof of Theorem 3, our reconstruction: the bound's display is lost) and tunes
its steps for it. Bases (written from the cited papers' algorithms; the tunings derived here,
overridable):

* :class:`FKM` (convex, Lipschitz; Flaxman–Kalai–McMahan 2005): ``x_t = y_t + ρu_t``,
  ``g_t = (d/ρ) v_t u_t``, ``y ← Π_{(1-ρ)B}(y − ηg)``; ``ρ = ρ_0 T^{-1/4}``,
  ``η = ρ/(d B' sqrt(T))`` (FKM's tuning at range ``B'``, derived here);
* :class:`ADXOnePoint` (``μ``-strongly convex; Agarwal–Dekel–Xiao 2010 one-point): the same loop
  with ``η_t = 1/(μt)``, ``ρ = ρ_0 T^{-1/3}``;
* :class:`SahaTewari` (convex, ``β``-smooth; Saha & Tewari 2011) and :class:`HazanLevy`
  (strongly convex and smooth; Hazan & Levy 2014): the barrier ``R(y) = −ln(1 − ‖y‖²)`` of the
  unit ball (``ν = 1``), ``A_t = (∇²R(y_t) + η κ t I)^{-1/2}`` (``κ = β`` or ``μ``), in closed form
  (``∇²R = 2I/(1−s²) + 4yyᵀ/(1−s²)²`` has two eigenvalues), ``x_t = y_t + A_t u_t``,
  ``g_t = d v_t A_t^{-1} u_t`` and FTRL steps, in closed form for Saha–Tewari and by a vectorized
  bisection on ``‖y‖`` for Hazan–Levy; ``η = sqrt(ln T)/(d B' T^{2/3})`` and
  ``η = sqrt((1 + 2(β/μ) ln T)/(4 d² B'² T))`` (constants derived here);
* :class:`UCB` (stochastic MAB, the stochastic half of the MAB row of Table 1 / Appendix B.1;
  Tsallis-INF is not implemented): lower confidence bound on the noisy mean loss with the sub-Gaussian scale
  ``sqrt(B² + sd²)`` of a noisy value, radius ``s sqrt(4 ln T / n)``.

**Algorithm 2** (``two-point``, Zheng et al. 2020, §3.2): ``ρ = ln T / T``, ``ξ = ρ/r`` (``r = 1``),
``η = 1/√T`` or ``η_t = 1/(μt)`` when ``strong_convexity`` is given (Theorem 6's choices, as we
rebuilt them: the display is lost); the estimator is ``g_t = (d/(2ρ)) m_t u_t`` with ``m_t``
computed in float64 from the two values, whose noise term ``d (n_tᵀu_t) u_t`` does not grow as
``ρ → 0``: the noise ``n_tᵀ(x_1 − x_2)`` scales with the query gap ``2ρ``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from learners.ldp.instances import project_ball, unit_sphere

__all__ = [
    "FKM",
    "UCB",
    "ADXOnePoint",
    "Feedback",
    "HazanLevy",
    "OnePointBase",
    "OnePointState",
    "SahaTewari",
    "one_point_gradient",
    "two_point_gradient",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Feedback:
    """What a one-point base learner is told about the values it will observe (Algorithm 1).

    ``dim`` (``d``; the number of arms for a MAB base), ``horizon`` ``T``, ``bound`` ``B`` of the
    clipped loss, ``noise_sd`` of the privacy noise, ``virtual_range`` ``B'`` (the proof of Theorem 3),
    ``lipschitz`` ``G`` (``0`` if unknown).
    """

    dim: int
    horizon: int
    bound: float
    noise_sd: float
    virtual_range: float
    lipschitz: float = 0.0


@runtime_checkable
class OnePointState(Protocol):
    """A running base learner for ``R`` repetitions: ``propose`` then ``observe``, once a round."""

    def propose(self) -> NDArray[Any]:
        """The round's points ``(R, d)`` (a continuous base) or arms ``(R,)`` of int64 (a MAB base)."""
        ...

    def observe(self, values: FloatArray) -> None:
        """The noisy values ``(R,)`` of the points just proposed."""
        ...


@runtime_checkable
class OnePointBase(Protocol):
    """A non-private one-point bandit algorithm ``A`` (Zheng et al. (2020), §3.1): the black box of
    Algorithm 1."""

    @property
    def name(self) -> str: ...

    #: ``"ball"`` (points of the unit ball) or ``"arms"`` (arm indices).
    @property
    def domain(self) -> str: ...

    def start(self, repetitions: int, feedback: Feedback, rng: np.random.Generator) -> OnePointState:
        """A fresh state for ``repetitions`` runs; ``rng`` is its own randomness."""
        ...


def one_point_gradient(values: FloatArray, u: FloatArray, rho: float) -> FloatArray:
    """FKM's estimator ``(d/ρ) v u`` (``values`` ``(R,)``, ``u`` ``(R, d)`` on the sphere): unbiased for
    the gradient of the ``ρ``-ball smoothing of ``f`` when ``v = f(y + ρu) + Z`` with ``E Z = 0``."""
    d = u.shape[-1]
    return np.asarray((d / rho) * values[:, None] * u, dtype=np.float64)


def two_point_gradient(messages: FloatArray, u: FloatArray, rho: float) -> FloatArray:
    """ADX's two-point estimator ``(d/(2ρ)) m u`` (Zheng et al. (2020), Algorithms 2 and 4; Agarwal,
    Dekel & Xiao 2010)."""
    d = u.shape[-1]
    return np.asarray((d / (2 * rho)) * messages[:, None] * u, dtype=np.float64)


class _FKMState:
    def __init__(
        self, R: int, d: int, rho: float, eta: float | None, mu: float | None, rng: np.random.Generator
    ) -> None:
        self.y = np.zeros((R, d))
        self.u = np.zeros((R, d))
        self.rho, self.eta, self.mu, self.rng, self.t = rho, eta, mu, rng, 0

    def propose(self) -> FloatArray:
        self.u = unit_sphere(self.rng, (self.y.shape[0],), self.y.shape[1])
        return np.asarray(self.y + self.rho * self.u, dtype=np.float64)

    def observe(self, values: FloatArray) -> None:
        self.t += 1
        eta = self.eta if self.mu is None else 1.0 / (self.mu * self.t)
        assert eta is not None
        g = one_point_gradient(values, self.u, self.rho)
        self.y = project_ball(self.y - eta * g, 1.0 - self.rho)


def _check_keywords(base: object) -> None:
    """The keywords of a base learner, checked where it is built (each names itself): ``rho`` a
    smoothing radius in ``(0, 1)`` (the perturbed point stays in the unit ball), ``arms`` an
    integer ``>= 2``, every other given number finite and ``> 0`` (a step, a curvature, a scale)."""
    for name in base.__dataclass_fields__:  # type: ignore[attr-defined]
        value = getattr(base, name)
        if value is None:
            continue
        if name == "arms":
            v.integer("arms", value, minimum=2)
        elif name == "rho":
            v.interval("rho", value, 0.0, 1.0, high_open=True)
        else:
            v.positive(name, value)


@dataclass(frozen=True)
class FKM:
    """Flaxman–Kalai–McMahan one-point gradient descent (convex, Lipschitz) on the unit ball.

    ``rho = None``: ``ρ = min(0.5, ρ_0 T^{-1/4})`` with ``ρ_0 = rho0``; ``eta = None``:
    ``η = ρ/(d B' sqrt(T))`` (a tuning derived here of Flaxman, Kalai & McMahan (2005) at the range
    ``B'``, with ``R = 1``).
    """

    rho: float | None = None
    eta: float | None = None
    rho0: float = 1.0

    def __post_init__(self) -> None:
        _check_keywords(self)

    @property
    def name(self) -> str:
        return "fkm"

    @property
    def domain(self) -> str:
        return "ball"

    def start(self, repetitions: int, feedback: Feedback, rng: np.random.Generator) -> OnePointState:
        T, d = feedback.horizon, feedback.dim
        rho = self.rho if self.rho is not None else min(0.5, self.rho0 * T**-0.25)
        rho = v.interval("rho", rho, 0.0, 1.0, high_open=True)
        eta = self.eta if self.eta is not None else rho / (d * feedback.virtual_range * math.sqrt(T))
        return _FKMState(repetitions, d, rho, v.positive("eta", eta), None, rng)


@dataclass(frozen=True)
class ADXOnePoint:
    """Agarwal–Dekel–Xiao's one-point method for ``μ``-strongly convex losses: FKM's loop with
    ``η_t = 1/(μt)`` and ``ρ = min(0.5, ρ_0 T^{-1/3})`` (Agarwal, Dekel & Xiao (2010), as named in
    Zheng et al. (2020), Table 1)."""

    mu: float
    rho: float | None = None
    rho0: float = 1.0

    def __post_init__(self) -> None:
        _check_keywords(self)

    @property
    def name(self) -> str:
        return "adx-one-point"

    @property
    def domain(self) -> str:
        return "ball"

    def start(self, repetitions: int, feedback: Feedback, rng: np.random.Generator) -> OnePointState:
        T = feedback.horizon
        rho = self.rho if self.rho is not None else min(0.5, self.rho0 * T ** (-1.0 / 3.0))
        rho = v.interval("rho", rho, 0.0, 1.0, high_open=True)
        return _FKMState(repetitions, feedback.dim, rho, None, v.positive("mu", self.mu), rng)


def _barrier_axes(y: FloatArray, c: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``∇²R(y) + cI`` for ``R = −ln(1 − ‖y‖²)``: its unit axis ``ŷ`` and eigenvalues across and along it."""
    s2 = np.einsum("ri,ri->r", y, y)
    s = np.sqrt(s2)
    yhat = y / np.where(s > 0, s, 1.0)[:, None]
    across = 2.0 / (1.0 - s2) + c
    along = across + 4.0 * s2 / (1.0 - s2) ** 2
    return yhat, across, along


def _apply_power(
    yhat: FloatArray, across: FloatArray, along: FloatArray, u: FloatArray, p: float
) -> FloatArray:
    """``H^p u`` for ``H = across (I − ŷŷᵀ) + along ŷŷᵀ``."""
    proj = np.einsum("ri,ri->r", yhat, u)[:, None] * yhat
    return np.asarray(across[:, None] ** p * (u - proj) + along[:, None] ** p * proj, dtype=np.float64)


class _BarrierState:
    """Saha–Tewari (``mu = 0``) and Hazan–Levy FTRL with the unit ball's barrier."""

    def __init__(self, R: int, d: int, eta: float, kappa: float, mu: float, rng: np.random.Generator) -> None:
        self.y = np.zeros((R, d))
        self.total = np.zeros((R, d))  # Σ g_s − μ Σ y_s
        self.eta, self.kappa, self.mu, self.rng, self.t = eta, kappa, mu, rng, 0
        self.u = np.zeros((R, d))
        self.axes: tuple[FloatArray, FloatArray, FloatArray] = _barrier_axes(self.y, 0.0)

    def propose(self) -> FloatArray:
        self.axes = _barrier_axes(self.y, self.eta * self.kappa * (self.t + 1))
        self.u = unit_sphere(self.rng, (self.y.shape[0],), self.y.shape[1])
        return np.asarray(self.y + _apply_power(*self.axes, self.u, -0.5), dtype=np.float64)

    def observe(self, values: FloatArray) -> None:
        self.t += 1
        d = self.y.shape[1]
        g = d * values[:, None] * _apply_power(*self.axes, self.u, 0.5)
        self.total += g - self.mu * self.y
        a = np.linalg.norm(self.total, axis=1)
        ahat = self.total / np.where(a > 0, a, 1.0)[:, None]
        if self.mu == 0:
            # argmin η⟨G, y⟩ − ln(1 − ‖y‖²): y = −s Ĝ with η‖G‖ = 2s/(1 − s²)
            ea = self.eta * a
            s = np.where(ea > 0, ea / (1.0 + np.sqrt(1.0 + ea * ea)), 0.0)
        else:
            s = _hazan_levy_radius(a, self.mu * self.t, 2.0 / self.eta)
        self.y = -s[:, None] * ahat


def _hazan_levy_radius(a: FloatArray, m: float, c: float) -> FloatArray:
    """The root ``s ∈ [0, 1)`` of ``h(s) = m s + c s/(1 − s²) − a`` (``m >= 0``, ``c > 0``, ``a >= 0``).

    Hazan–Levy's FTRL step ``argmin ⟨G, y⟩ + (μt/2)‖y‖² − ln(1 − ‖y‖²)/η`` is ``y = −s Ĝ`` with
    ``s`` this root for ``a = ‖G‖``, ``m = μt``, ``c = 2/η``. ``h`` is increasing and convex on
    ``[0, 1)``, so Newton's method started right of the root descends to it monotonically
    (quadratically once close). The start is the smaller of two points where ``h >= 0``: the root
    without the ``m`` term, ``s = 2q/(1 + sqrt(1 + 4q²))`` with ``q = a/c``, and ``a/(m + c)``. The loop stops
    when no iterate decreases any more (the float root), at most 100 steps.
    """
    q = a / c
    s = np.minimum(2.0 * q / (1.0 + np.sqrt(1.0 + 4.0 * q * q)), a / (m + c))
    for _ in range(100):
        s2 = s * s
        one = 1.0 - s2
        h = m * s + c * s / one - a
        slope = m + c * (1.0 + s2) / (one * one)
        nxt = np.maximum(s - h / slope, 0.0)
        moved = nxt < s
        if not moved.any():
            break
        s = np.where(moved, nxt, s)
    return np.asarray(s, dtype=np.float64)


@dataclass(frozen=True)
class SahaTewari:
    """Saha & Tewari 2011, Algorithm 1 (convex, ``β``-smooth): barrier FTRL, ``A_t = (∇²R + ηβtI)^{-1/2}``.

    ``eta = None``: ``η = sqrt(ln T)/(d B' T^{2/3})`` (a constant derived here).
    """

    smoothness: float
    eta: float | None = None

    def __post_init__(self) -> None:
        _check_keywords(self)

    @property
    def name(self) -> str:
        return "saha-tewari"

    @property
    def domain(self) -> str:
        return "ball"

    def start(self, repetitions: int, feedback: Feedback, rng: np.random.Generator) -> OnePointState:
        T, d = feedback.horizon, feedback.dim
        eta = self.eta
        if eta is None:
            eta = math.sqrt(max(1.0, math.log(T))) / (d * feedback.virtual_range * T ** (2.0 / 3.0))
        beta = v.positive("smoothness", self.smoothness)
        return _BarrierState(repetitions, d, v.positive("eta", eta), beta, 0.0, rng)


@dataclass(frozen=True)
class HazanLevy:
    """Hazan & Levy 2014, Algorithm 1 (``μ``-strongly convex, ``β``-smooth): barrier FTRL with
    ``Σ_s (μ/2)‖y − y_s‖²``, ``A_t = (∇²R + ημtI)^{-1/2}``.

    ``eta = None``: ``η = sqrt((1 + 2(β/μ) ln T)/(4 d² B'² T))`` (a constant derived here).
    """

    mu: float
    smoothness: float
    eta: float | None = None

    def __post_init__(self) -> None:
        _check_keywords(self)

    @property
    def name(self) -> str:
        return "hazan-levy"

    @property
    def domain(self) -> str:
        return "ball"

    def start(self, repetitions: int, feedback: Feedback, rng: np.random.Generator) -> OnePointState:
        T, d = feedback.horizon, feedback.dim
        mu = v.positive("mu", self.mu)
        beta = v.positive("smoothness", self.smoothness)
        eta = self.eta
        if eta is None:
            eta = math.sqrt(
                (1 + 2 * (beta / mu) * math.log(max(T, 2))) / (4 * d * d * feedback.virtual_range**2 * T)
            )
        return _BarrierState(repetitions, d, v.positive("eta", eta), mu, mu, rng)


class _UCBState:
    def __init__(self, R: int, K: int, scale: float, horizon: int) -> None:
        self.n = np.zeros((R, K))
        self.sums = np.zeros((R, K))
        self.scale, self.log = scale, 4 * math.log(max(horizon, 2))
        self.arm = np.zeros(R, dtype=np.int64)

    def propose(self) -> IntArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            lcb = self.sums / self.n - self.scale * np.sqrt(self.log / self.n)
        lcb = np.where(self.n > 0, lcb, -np.inf)
        self.arm = np.argmin(lcb, axis=1).astype(np.int64)
        return self.arm

    def observe(self, values: FloatArray) -> None:
        r = np.arange(self.n.shape[0])
        self.n[r, self.arm] += 1
        self.sums[r, self.arm] += values


@dataclass(frozen=True)
class UCB:
    """A stochastic MAB base: the lower confidence bound on the noisy mean loss of ``arms`` arms,
    sub-Gaussian scale ``sqrt(B² + sd²)``, radius ``s sqrt(4 ln T / n)`` (unpulled arms first)."""

    arms: int

    def __post_init__(self) -> None:
        _check_keywords(self)

    @property
    def name(self) -> str:
        return "ucb"

    @property
    def domain(self) -> str:
        return "arms"

    def start(self, repetitions: int, feedback: Feedback, rng: np.random.Generator) -> OnePointState:
        K = v.integer("arms", self.arms, minimum=2)
        scale = math.sqrt(feedback.bound**2 + feedback.noise_sd**2)
        return _UCBState(repetitions, K, scale, feedback.horizon)
