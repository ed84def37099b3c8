"""The noise of a learner's release in the LDP bandits paper (Zheng et al. 2020).

A user's release is the messages of one round (:class:`Message`: each block's sensitivity and the
noise added to it); :func:`noise_of` builds them for a learner on an instance from the recipes of
:mod:`learners.ldp.recipes`, and :meth:`Noise.ledger` is one user's ledger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from accounting import validate as v
from accounting.accountant import Accountant, Event
from accounting.mechanisms import AdditiveNoise, Mechanism, PureDP
from accounting.neighbouring import Neighbouring
from accounting.noise import Gaussian, Laplace
from learners.errors import ParameterError, ParameterTypeError
from learners.ldp.instances import ContextualInstance, link_constants
from learners.ldp.recipes import (
    MATRIX_SENSITIVITY,
    SIGMA_UP,
    classic_sigma,
    code_sigma,
    composed_sigmas,
    gaussian_multiplier,
)
from learners.ldp.spec import MAX_HORIZON, Learner

__all__ = [
    "Message",
    "Noise",
    "glm_constants",
    "lipschitz_of",
    "loss_bound",
    "noise_of",
    "rr_outputs",
    "two_point_rho",
]


@dataclass(frozen=True)
class Message:
    """One block of a user's release: its ℓ2 sensitivity and the noise added to each coordinate.

    The ledger holds what the users add (never a stand-in computed beside the draw, which could
    drift from it), so the
    block's released noise ``sd`` is derived from the number that scales the draw:

    * ``draw_sd``: what every drawn coordinate is scaled by, the sd of a Gaussian or the scale of a
      Laplace; the users' randomizers (:func:`privatize_loss`, :func:`privatize_difference`, the
      contextual learners' messages) draw with it and with nothing else;
    * ``spread``: the norm of the public vector the drawn noise is dotted with before it is added,
      ``1.0`` for noise added as drawn. Algorithm 2 (Zheng et al. 2020, §3, Algorithm 2) adds
      ``n_tᵀ(x_1 − x_2)`` with ``n_t ~ N(0, σ² I_d)`` and ``‖x_1 − x_2‖ = 2ρ``: one scalar of sd ``2ρσ``;
    * ``sd = spread · draw_sd`` (set here, not given): the sd (Laplace: scale) of the noise of the
      block as released, the one :meth:`mechanism` puts in the ledger.

    Randomized response (``kind`` ``"randomized-response"``): ``sensitivity`` is the width of the
    loss range, ``sd`` (``= draw_sd``) the sub-Gaussian scale of the debiased value (half its
    range), ``epsilon`` the flip's ε, which both flips the bits (:func:`privatize_loss`) and is
    the ledger's.
    """

    name: str
    sensitivity: float
    draw_sd: float
    kind: str = "gaussian"
    epsilon: float = 0.0
    spread: float = 1.0
    sd: float = field(init=False)

    def __post_init__(self) -> None:
        # ``1.0 · x == x`` exactly: a block added as drawn has ``sd`` bit for bit its ``draw_sd``
        object.__setattr__(self, "sd", self.spread * self.draw_sd)

    def mechanism(self) -> Mechanism:
        """The block as the ledger holds it: the additive noise mechanism of ``sd`` (the released
        noise) on ``sensitivity``, or for randomized response
        :class:`~accounting.mechanisms.PureDP` (whose worst case *is* binary randomized
        response, so the ledger is exact)."""
        if self.kind == "randomized-response":
            return PureDP(self.epsilon, "binary randomized response (Warner 1965) of the rounded loss")
        noise = Gaussian(self.sd) if self.kind == "gaussian" else Laplace(self.sd)
        return AdditiveNoise(noise, self.sensitivity)


def rr_flip(epsilon: float) -> float:
    """The probability ``q = 1/(1 + e^ε)`` that randomized response flips a bit (Warner 1965);
    beyond ``ε = 709``, where ``e^ε`` overflows a float, ``e^-ε`` (the same to within rounding)."""
    return 1.0 / (1.0 + math.exp(epsilon)) if epsilon < 709 else math.exp(-epsilon)


def rr_outputs(low: float, high: float, epsilon: float) -> tuple[float, float]:
    """The two values the server decodes a randomized-response bit to (:func:`privatize_loss`).

    The user rounds a loss ``x ∈ [low, high]`` to a bit ``s`` with ``P(s = 1) = (x − low)/(high −
    low)`` (exact for a binary loss) and reports ``s`` with probability ``p = e^ε/(1 + e^ε)``, else
    ``1 − s``: ``P(b = 1) = q + (p − q)P(s = 1)``, ``q = 1 − p``, so ``low + (high − low)(b − q)/(p − q)``
    is unbiased for ``x`` (Duchi, Jordan & Wainwright 2013's one-dimensional randomizer). ``p − q =
    tanh(ε/2)``. Returns ``(value at b = 0, value at b = 1)``.
    """
    gap = math.tanh(epsilon / 2)
    q = rr_flip(epsilon)
    width = (high - low) / gap
    return low - width * q, low + width * (1.0 - q)


@dataclass(frozen=True)
class Noise:
    """The privacy noise of a learner on an instance and horizon (:func:`noise_of`).

    ``sigma`` is the paper's ``σ`` (Algorithm 1: the sd of ``Z_t``, or the Laplace scale;
    Algorithm 2: the sd of each coordinate of ``n_t``; Algorithms 3, 5: the sd of ``B_t``'s and
    ``ξ_t``'s entries; randomized response: the sub-Gaussian scale of the decoded value);
    ``messages`` are the blocks of one user's release as the ledger holds them; ``multiplier`` is
    the exact ``z`` when ``calibration == "exact"``.
    """

    kind: str  # "gaussian", "laplace", "randomized-response" or "none"
    calibration: str  # "exact", "classic", "code", "laplace", "randomized-response" or "none"
    sigma: float
    messages: tuple[Message, ...]
    multiplier: float = 0.0
    #: Randomized response: the range ``[low, high]`` the user rounds the loss in.
    loss_range: tuple[float, float] | None = None

    def ledger(self) -> Accountant:
        """One user's ledger: every message block as an event (replace-one: LDP's any two data)."""
        acc = Accountant(Neighbouring.REPLACE_ONE)
        for m in self.messages:
            acc.compose(Event(m.mechanism()))
        return acc


def loss_bound(learner: Learner, instance: object) -> float:
    if learner.bound is not None:
        return learner.bound
    b = getattr(instance, "bound", None)
    if b is None:
        raise ParameterError("bound", None, "a loss bound B > 0 (the instance has none)")
    return float(b)


def _loss_range(learner: Learner, instance: object) -> tuple[float, float]:
    """The range of Algorithm 1's loss: the instance's ``loss_range`` (Bernoulli arms: ``[0, 1]``),
    else ``[-B, B]``."""
    given = getattr(instance, "loss_range", None) if learner.bound is None else None
    if given is not None:
        return float(given[0]), float(given[1])
    B = loss_bound(learner, instance)
    return -B, B


def lipschitz_of(learner: Learner, instance: object) -> float:
    if learner.lipschitz is not None:
        return learner.lipschitz
    g = getattr(instance, "lipschitz", None)
    if g is None:
        raise ParameterError("lipschitz", None, "a Lipschitz constant G > 0 (the instance has none)")
    return float(g)


def two_point_rho(learner: Learner, horizon: int) -> float:
    if learner.rho is not None:
        return learner.rho
    return min(0.5, math.log(max(horizon, 3)) / horizon)


def glm_constants(learner: Learner, instance: ContextualInstance) -> tuple[float, float]:
    mu, C = link_constants(instance.link)
    return mu, learner.gradient_bound if learner.gradient_bound is not None else C


def noise_of(learner: Learner, instance: object, horizon: int) -> Noise:
    """The noise ``learner`` runs with on ``instance`` over ``horizon`` rounds
    (:mod:`learners.ldp.recipes`)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.ldp.Learner (see make_learner)")
    T = v.integer("horizon", horizon, minimum=1, maximum=MAX_HORIZON)
    name = learner.name
    if name in ("one-point", "two-point"):
        if name == "one-point":
            low, high = _loss_range(learner, instance)
            unit = sens = high - low  # σ per unit of ε-scaling; the message's sensitivity (2B)
            msg_scale = 1.0
            label = "loss"
            span: tuple[float, float] | None = (low, high)  # the user clips the loss to it
        else:
            G = lipschitz_of(learner, instance)
            rho = two_point_rho(learner, T)
            unit, sens = 2 * G, 4 * rho * G
            msg_scale = 2 * rho  # ‖x1 − x2‖: m_t's noise n_tᵀ(x1 − x2) has sd 2ρσ
            label = "difference"
            low = high = 0.0
            span = None
        if learner.epsilon is None:
            return Noise("none", "none", 0.0, (), loss_range=span)
        eps = learner.epsilon
        if learner.mechanism == "randomized-response":
            v0, v1 = rr_outputs(low, high, eps)
            scale = (v1 - v0) / 2  # a value in [v0, v1] is (v1 - v0)/2-sub-Gaussian about its mean
            rr = Message(label, sens, scale, "randomized-response", eps)
            return Noise("randomized-response", "randomized-response", scale, (rr,), loss_range=span)
        if learner.mechanism == "laplace":
            b = unit / eps * SIGMA_UP
            # one Laplace scalar of scale 2ρb is drawn for the whole message (not a vector dotted
            # with x1 − x2): the draw's scale is the released one
            msg = Message(label, sens, msg_scale * b, "laplace")
            return Noise("laplace", "laplace", b, (msg,), loss_range=span)
        assert learner.delta is not None
        if learner.calibration == "exact":
            z = gaussian_multiplier(eps, learner.delta)
            sigma = z * unit * SIGMA_UP
        else:
            z, sigma = 0.0, classic_sigma(eps, learner.delta, unit)
        # the users draw N(0, σ²) per coordinate; Algorithm 2's message dots it with x1 − x2, so
        # the ledger's sd 2ρσ is derived from that σ by the message (Message.sd)
        msg = Message(label, sens, sigma, spread=msg_scale)
        return Noise("gaussian", learner.calibration, sigma, (msg,), z, loss_range=span)
    assert learner.epsilon is not None
    assert learner.delta is not None
    if not isinstance(instance, ContextualInstance):
        raise ParameterTypeError("instance", instance, "a learners.ldp_instances.ContextualInstance")
    eps, delta = learner.epsilon, learner.delta
    if name == "ldp-linucb":
        Y = learner.reward_bound
        blocks = (MATRIX_SENSITIVITY, 2 * Y)
        if learner.mode == "code":
            sigma, z, cal = code_sigma(eps, delta, Y), 0.0, "code"
        elif learner.calibration == "exact":
            z = gaussian_multiplier(eps, delta)
            sigma, cal = z * math.hypot(*blocks) * SIGMA_UP, "exact"
        else:
            sigma, z, cal = classic_sigma(eps, delta, 2 + 2 * Y), 0.0, "classic"
        pair = (Message("matrix", blocks[0], sigma), Message("vector", blocks[1], sigma))
        return Noise("gaussian", cal, sigma, pair, z)
    _, C = glm_constants(learner, instance)
    if learner.calibration == "exact":
        z = gaussian_multiplier(eps, delta)
        sigma = z * math.sqrt(MATRIX_SENSITIVITY**2 + 4 + 4) * SIGMA_UP
    else:
        z, sigma = 0.0, composed_sigmas(eps, delta, (2.0, 2.0, 2.0), "classic")[0]
    messages = (
        Message("matrix", MATRIX_SENSITIVITY, sigma),
        Message("vector", 2.0, sigma),
        Message("gradient", 2 * C, C * sigma),
    )
    return Noise("gaussian", learner.calibration, sigma, messages, z)
