"""Locally differentially private bandits: the learners of Zheng et al. (NeurIPS 2020), vectorized.

Zheng, Cai, Huang, Li & Wang, "Locally Differentially Private (Contextual) Bandits Learning",
spec ``ldp-bandits.md``. Every round a **new user** arrives, takes part once and sends the server
locally privatized messages only; the server runs a bandit learner on them. Algorithms
(:data:`ALGORITHMS`):

================  ==========================================================================
name              what it is
================  ==========================================================================
``one-point``     Algorithm 1 (§2): the black-box reduction. The user sends ``f_t(x_t) + Z_t``
                  (``f_t`` clipped to ``[-B, B]``, ``Δ = 2B``; to ``[0, 1]``, ``Δ = 1``, for
                  Bernoulli arms, whose losses are bits); any one-point base learner
                  (:class:`OnePointBase`: :class:`FKM`, :class:`ADXOnePoint`, :class:`SahaTewari`,
                  :class:`HazanLevy`, :class:`UCB`) runs on the noisy values
``two-point``     Algorithm 2 (§3): Agarwal–Dekel–Xiao two-point gradient descent (Algorithm 4);
                  the user sends ``m_t = f_t(x_1) − f_t(x_2) + n_tᵀ(x_1 − x_2)``,
                  ``n_t ~ N(0, σ² I_d)``, one scalar of std ``2ρσ``
``ldp-linucb``    Algorithm 5 (§4.2): the user sends ``x xᵀ + B_t`` and ``y x + ξ_t``; the server
                  ridge-regresses with ``c_t = 2Υ_t`` and plays LinUCB
``ldp-glm``       Algorithm 3 (§4.4): GLOC with LDP-OGD: ``x xᵀ + B_t``, ``z x + ξ_t``
                  (``z = xᵀθ̂_t``) and ``∇ℓ_t(θ̂_t) + r_t``; ``θ̂`` by projected noisy OGD on the
                  unit ball, ``θ̃`` by the noisy ridge regression; logistic and Poisson links
================  ==========================================================================

**Noise** (:func:`noise_of`; every message's, from :mod:`accounting`). A user's release is the
messages of one round; each is a Gaussian mechanism on a block of ℓ2 sensitivity ``Δ_i`` (replace
one user's data by any other: LDP, Definition 1), and the blocks of one release share a noise
multiplier ``z``:

* ``calibration="exact"`` (default): ``z`` = :func:`accounting.calibration.calibrate`
  ``("gaussian", ε, δ)``, the least multiplier the Accountant certifies ``(ε, δ)``-DP for a
  sensitivity-1 query (exact accounting of the Gaussian mechanism, valid for every ε); a release of
  ``k`` blocks at one noise level is one Gaussian mechanism of sensitivity ``sqrt(Σ Δ_i²)``, so
  ``σ = z sqrt(Σ Δ_i²)`` (rounded up by a few ulps);
* ``calibration="classic"``: the paper's formulas (Dwork–Roth Thm A.1, proved only for ``ε < 1``,
  P7): Algorithm 1 ``σ = 2B sqrt(2 ln(1.25/δ))/ε``; Algorithm 2 ``σ = 2G sqrt(2 ln(1.25/δ))/ε``;
  Algorithm 5 ``σ = (2 + 2Y) sqrt(2 ln(1.25/δ))/ε`` (one mechanism on the concatenated message,
  sensitivity ``2 + 2Y`` by the triangle inequality, ``6`` at the paper's ``|y| <= Y = 2``: our
  reconstruction of Algorithm 5's σ, lost with the appendix, from the official code's README);
  Algorithm 3 :func:`composed_sigmas` (``k = 3`` messages at ``(ε/3, δ/3)``:
  ``σ = 6 sqrt(2 ln(3.75/δ))/ε``, gradient noise ``Cσ``, as printed in Algorithm 3, §4.2);
* ``delta=None`` (Algorithms 1 and 2 only): pure ε-LDP by the Laplace mechanism, scale ``Δ/ε``;
* ``mechanism="randomized-response"`` (Algorithm 1 only): pure ε-LDP by randomized response; the
  user rounds the loss to a bit of the loss range (Bernoulli arms: the loss itself) and flips it
  with probability ``1/(1 + e^ε)``, the server decodes it unbiasedly (:func:`rr_outputs`); the
  ledger holds :class:`~accounting.mechanisms.PureDP` ``(ε)``, whose worst case is exactly this.

The sensitivities the ledger holds are the true suprema for ``‖x‖ <= 1`` (the paper uses upper
bounds): ``f_t(x_t) ∈ [-B, B]``: ``2B``; the difference of Algorithm 2 (clipped to
``[-2ρG, 2ρG]`` by the user, which changes nothing for a ``G``-Lipschitz ``f``): ``4ρG``;
``y x`` with ``|y| <= Y`` (clipped by the user, P15): ``2Y``; ``z x``: ``2``; the clipped gradient:
``2C``; and the upper triangle of ``x xᵀ`` (what is released: the lower one is its mirror):
``√2`` **[DERIVED; the paper uses 2]**, since ``‖triu(x xᵀ)‖_F² = (‖x‖⁴ + Σ x_i⁴)/2 <= 1`` and
``⟨triu(x xᵀ), triu(x'x'ᵀ)⟩ = ((xᵀx')² + Σ x_i² x_i'²)/2 >= 0``, so the distance is at most
``√2`` (attained at ``e_1, e_2``). The classic mode keeps the paper's constants; its ledger
holds the true sensitivities, so its exact ε is that of what was released.

**Symmetric matrix noise** (§4.2, P2). ``B_t`` has its upper triangle *including the diagonal*
i.i.d. ``N(0, σ²)``, mirrored: exactly symmetric, every entry of variance ``σ²``
(:func:`symmetric_noise`), as the spec's test asks. This differs from :mod:`learners.linear`,
which symmetrizes a full Gaussian matrix as ``(N + Nᵀ)/2`` (diagonal ``σ²``, off-diagonal
``σ²/2``). P2's claim that ``(N + Nᵀ)/2`` "under-noises and breaks privacy" holds only if that
matrix is accounted as the upper triangle at ``σ``; accounted as what it is — post-processing of
``x xᵀ + N`` on all ``d²`` entries, whose sensitivity ``‖x xᵀ − x'x'ᵀ‖_F`` is also at most ``√2``
(``⟨x xᵀ, x'x'ᵀ⟩ = (xᵀx')² >= 0``) — it is exactly as private at the same ``σ`` with half the
off-diagonal variance, i.e. the better mechanism. The mirrored upper triangle is kept here
because the spec's tests and the paper's Algorithms 3 and 5 specify it.

**Modes** (``mode``). ``"paper"`` (default): the formulas above and the bonus
``β ‖x‖_{Ṽ^{-1}}``. ``"code"`` (``ldp-linucb`` only): the constants of the authors' official code
(``huang-research-group/LDPbandit2020``, its MovieLens-100K run; the paper has no experiments),
for reproducing its figures: ``σ = (2 + 2Y) sqrt(ln(1.25/δ))/ε`` — at its ``Y = 1``
exactly the code's ``4 sqrt(ln(1.25/δ))/ε``, a factor ``√2`` below what its README states —
the bonus ``β xᵀṼ^{-1}x`` without the square root, ``Ṽ_0 = 0.1 I`` and ``β_t`` (not ``β_{t-1}``)
at round ``t``. It does **not** meet its stated ``(ε, δ)`` in general: :func:`code_mode_check`
computes the exact ε of the code's σ (at the official ``(8·10⁵, 0.1)``: 1.27·10¹¹ at the
sensitivity ``4`` the code states, 4.75·10¹⁰ at this module's block sensitivities; at
``(1, 10⁻⁵)``: 1.098 > 1 at the stated sensitivity, 0.64 at the block ones). A run's
:attr:`Privacy` reports the exact ε of what it released in every mode.

**Algorithm 1** (:func:`run` with ``one-point``). The base learner is told the virtual range
``B' = B + σ sqrt(2 ln(2T/δ))`` (Laplace: ``B + b ln(2T)``; the virtual range of the proof of
Theorem 3, §3.1, our reconstruction: the bound's display is lost) and tunes its steps for
it. Bases ([REF], written from the cited papers' algorithms; tunings [DERIVED], overridable):

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
  ``η = sqrt((1 + 2(β/μ) ln T)/(4 d² B'² T))`` [DERIVED constants];
* :class:`UCB` (stochastic MAB, the stochastic half of the MAB row of Table 1 / Appendix B.1;
  Tsallis-INF is not implemented): lower confidence bound on the noisy mean loss with the sub-Gaussian scale
  ``sqrt(B² + sd²)`` of a noisy value, radius ``s sqrt(4 ln T / n)``.

**Algorithm 2** (``two-point``, §3.2): ``ρ = ln T / T``, ``ξ = ρ/r`` (``r = 1``), ``η = 1/√T``
or ``η_t = 1/(μt)`` when ``strong_convexity`` is given (Theorem 6's choices [RECON]); the
estimator is ``g_t = (d/(2ρ)) m_t u_t`` with ``m_t`` computed in float64 from the two values,
whose noise term ``d (n_tᵀu_t) u_t`` does not grow as ``ρ → 0`` (P10).

**Algorithm 5** (``ldp-linucb``, §4.1 and Appendix D). ``Υ_t = σ√t (4√d + 2 ln(2T/α))``, ``c_t = 2Υ_t``,
``Ṽ_t = V_t + c_t I``, ``θ̃_t = Ṽ_t^{-1} u_t``; at round ``t`` the user plays
``argmax ⟨θ̃_{t-1}, x⟩ + β_{t-1} ‖x‖_{Ṽ_{t-1}^{-1}}`` (lowest index on ties, P17). ``radius="code"``
(the default of ``mode="code"``): the official code's
``β_t = 2σ sqrt(d ln T) + (sqrt(3Υ_t) + σ sqrt(dt/Υ_t)) d ln T`` [CODE, the only available source
of the appendix's formula]; ``radius="derived"`` (the default of ``mode="paper"``): a
first-principles radius derived here (self-normalized bound plus the noise terms) (the code's
``β`` with the paper's square-root bonus over-explores: linear regret up to ``T = 32000`` on the
synthetic instance). Round 1 (P4, choice (a)):
``Ṽ_0 = c_1 I``, ``θ̃_0 = 0`` and ``β_0 := β_1``.
``Ṽ`` can be indefinite (P3): the quadratic form is clamped at 0 before the square root and the
rounds where that happened are counted (:attr:`RunResult.indefinite`). ``Ṽ^{-1}`` is a fresh
inverse every round (``c_t`` changes every round, P14).

**Algorithm 3** (``ldp-glm``, §4.2): ``θ̂_1 = 0``, ``ζ = 1/√T`` (``step``),
``β_t = sqrt(κ C σ sqrt(d t)/μ)`` (``κ = radius_scale``; our reconstruction of the paper's
truncated ``β_t² = O(Cσ sqrt(dt)/μ)``),
``μ, C`` of the link (:func:`learners.ldp_instances.link_constants`: logistic ``0.19661, 1``;
Poisson ``e^{-1}, e``); the user clips ``g(xᵀθ̂) − y`` to ``[-C, C]`` (P15; needed for the Poisson
link), and ``θ̂_{t+1} = Π_W(θ̂_t − ζ(∇ℓ_t(θ̂_t) + r_t))`` on the unit ball ``W``.

**Privacy: one release per user** (§1.2). Each user reports once, so the run is
``(ε, δ)``-LDP exactly when one user's release is. :attr:`RunResult.ledgers` holds one
:class:`~accounting.accountant.Accountant` (key 1: every round's user has the same ledger — in
Algorithm 2 the sensitivity ``4ρG`` and the noise ``2ρσ`` scale together), with one
``AdditiveNoise`` event per message block; :attr:`RunResult.privacy` is its exact ε at δ.

**Regret.** ``pseudo_regret``: Algorithms 1, 2: ``Σ_t f(x_t) − f(x*)`` on the mean loss (the mean
of the two points for Algorithm 2); contextual: ``Σ_t g(x_{t,*}ᵀθ*) − g(x_tᵀθ*)`` (§4).
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.accountant import Accountant, Event
from accounting.answers import ledger_epsilon
from accounting.bounds import gaussian_sigma_classic
from accounting.calibration import calibrate
from accounting.mechanisms import AdditiveNoise, Mechanism, PureDP
from accounting.neighbouring import Neighbouring
from accounting.noise import Gaussian, Laplace
from learners.errors import ParameterError, ParameterTypeError
from learners.ldp_instances import (
    BernoulliArms,
    ContextualInstance,
    QuadraticLoss,
    apply_link,
    link_constants,
    project_ball,
    unit_sphere,
)

__all__ = [
    "ALGORITHMS",
    "CALIBRATIONS",
    "CHUNK",
    "FKM",
    "MECHANISMS",
    "MODES",
    "PURE_MECHANISMS",
    "UCB",
    "ADXOnePoint",
    "CodeModeCheck",
    "ContextualRecord",
    "Feedback",
    "HazanLevy",
    "Learner",
    "Message",
    "Noise",
    "OnePointBase",
    "OnePointState",
    "Privacy",
    "RunResult",
    "SahaTewari",
    "classic_sigma",
    "code_mode_check",
    "code_sigma",
    "composed_sigmas",
    "gaussian_multiplier",
    "make_learner",
    "noise_of",
    "one_point_gradient",
    "privacy_of",
    "privatize_difference",
    "privatize_glm",
    "privatize_linear",
    "privatize_loss",
    "rr_outputs",
    "run",
    "symmetric_noise",
    "two_point_gradient",
    "upsilon",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

ALGORITHMS = ("one-point", "two-point", "ldp-linucb", "ldp-glm")
MODES = ("paper", "code")
CALIBRATIONS = ("exact", "classic")
#: A private one- or two-point learner's randomizer (``mechanism``): the Gaussian mechanism
#: (``(ε, δ)``), the Laplace mechanism (pure ``ε``) or randomized response (pure ``ε``, one-point
#: only; :func:`privatize_loss`).
MECHANISMS = ("gaussian", "laplace", "randomized-response")
#: The mechanisms of pure ε-LDP (no δ).
PURE_MECHANISMS = ("laplace", "randomized-response")
#: The algorithms that take each mechanism.
_TAKERS = {
    "gaussian": ALGORITHMS,
    "laplace": ("one-point", "two-point"),
    "randomized-response": ("one-point",),
}
RADII = ("code", "derived")

#: Rounds of contexts and noise drawn at once by the contextual learners.
CHUNK = 1024

#: The longest horizon (a run's arrays are per round chunk; the bound is the loop's patience).
MAX_HORIZON = 10**8

#: Relative amount a released σ is rounded up by (a few float operations of half an ulp each).
_SIGMA_UP = 1.0 + 8 * 2.0**-52

#: ``triu(x xᵀ)``'s ℓ2 sensitivity for ``‖x‖ <= 1`` (module docstring, [DERIVED]).
MATRIX_SENSITIVITY = math.sqrt(2.0)


# ---------------------------------------------------------------------------------------
# Calibration helpers (Zheng et al. (2020), Preliminaries: the Gaussian mechanism; basic composition)
# ---------------------------------------------------------------------------------------


@cache
def gaussian_multiplier(epsilon: float, delta: float) -> float:
    """The least ``z`` with ``N(0, z²)`` on a sensitivity-1 query ``(ε, δ)``-DP, certified
    (:func:`accounting.calibration.calibrate` ``("gaussian", ε, δ)``)."""
    eps = v.positive("epsilon", epsilon)
    d = v.open_unit("delta", delta)
    return float(calibrate("gaussian", eps, d, sensitivity=1.0).value)


def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Dwork–Roth's ``σ = Δ sqrt(2 ln(1.25/δ))/ε`` (Thm A.1; Zheng et al. (2020), Preliminaries), rounded up.

    :func:`accounting.bounds.gaussian_sigma_classic` refuses ``ε >= 1`` (the theorem's range);
    the formula is evaluated there through ``σ(ε, δ, Δ) = σ(ε/2^m, δ, Δ/2^m)`` (exact divisions):
    the number is the formula's, a guarantee only where the ledger says so (P7).
    """
    eps = v.positive("epsilon", epsilon)
    d = v.open_unit("delta", delta)
    sens = v.positive("sensitivity", sensitivity)
    scale = 2.0 ** max(0, math.frexp(eps)[1])
    return float(gaussian_sigma_classic(eps / scale, d, sens / scale))


def composed_sigmas(
    epsilon: float, delta: float, sensitivities: Sequence[float], calibration: str = "classic"
) -> tuple[float, ...]:
    """Noise of ``k`` messages of ℓ2 sensitivities ``Δ_1..Δ_k`` released together ``(ε, δ)``-LDP.

    ``"classic"`` (the calibration behind Algorithm 3's printed σ, Zheng et al. (2020), §4.2): basic
    composition of ``k`` mechanisms at ``(ε/k, δ/k)``,
    ``σ_i = k Δ_i sqrt(2 ln(1.25k/δ))/ε`` (``k = 3``, ``Δ = 2``: Algorithm 3's
    ``6 sqrt(2 ln(3.75/δ))/ε``; ``k = 1``, ``Δ = 2B``: Algorithm 1's). ``"exact"``: the messages
    as one Gaussian mechanism, ``σ_i = z Δ_i √k`` with :func:`gaussian_multiplier` ``z`` (their
    privacy-loss is that of one Gaussian of ``Σ (Δ_i/σ_i)² = 1/z²``), never larger than the
    classic value where that one holds.
    """
    v.choice("calibration", calibration, CALIBRATIONS)
    if isinstance(sensitivities, str) or not isinstance(sensitivities, Sequence) or not sensitivities:
        raise ParameterError("sensitivities", sensitivities, "a non-empty sequence of positive reals")
    sens = [v.positive(f"sensitivities[{i}]", s) for i, s in enumerate(sensitivities)]
    k = len(sens)
    eps = v.positive("epsilon", epsilon)
    d = v.open_unit("delta", delta)
    if calibration == "classic":
        return tuple(classic_sigma(eps / k, d / k, s) for s in sens)
    z = gaussian_multiplier(eps, d)
    return tuple(z * s * math.sqrt(k) * _SIGMA_UP for s in sens)


def code_sigma(epsilon: float, delta: float, reward_bound: float = 1.0) -> float:
    """The official code's ``σ = (2 + 2Y) sqrt(ln(1.25/δ))/ε`` (``4 sqrt(ln(1.25/δ))/ε`` at ``Y = 1``),
    without the 2 under the square root that its README states (``LDPbandit2020``, ``src/linucb.py``)."""
    eps = v.positive("epsilon", epsilon)
    d = v.open_unit("delta", delta)
    Y = v.positive("reward_bound", reward_bound)
    return (2 + 2 * Y) * math.sqrt(math.log(1.25 / d)) / eps


def upsilon(sigma: float, t: float, dim: int, horizon: int, alpha: float) -> float:
    """``Υ_t = σ √t (4√d + 2 ln(2T/α))`` (Zheng et al. (2020), Algorithm 3's notation, §4.2): a
    high-probability bound on the spectral norm of the summed symmetric noise."""
    return sigma * math.sqrt(t) * (4 * math.sqrt(dim) + 2 * math.log(2 * horizon / alpha))


def _epsilon_of(releases: Sequence[AdditiveNoise], delta: float) -> float:
    return ledger_epsilon(tuple(Event(r) for r in releases), delta)


@dataclass(frozen=True)
class CodeModeCheck:
    """What :func:`code_mode_check` found.

    Attributes
    ----------
    claimed_epsilon, delta : float
        The ``(ε, δ)`` the code states.
    sigma_code : float
        The σ it runs, :func:`code_sigma`.
    sigma_stated : float
        The σ its README states, ``(2 + 2Y) sqrt(2 ln(1.25/δ))/ε`` (``√2`` larger).
    stated_sensitivity : float
        ``2 + 2Y``: the sensitivity the stated σ is calibrated for (one Gaussian mechanism).
    epsilon_stated : float
        The exact ε at ``δ`` of ``σ_code`` at ``stated_sensitivity`` (the code's own argument).
    epsilon_blocks : float
        The exact ε at ``δ`` of the release as this module's ledger holds it (blocks ``√2`` and ``2Y``).
    misses : bool
        ``epsilon_stated > claimed_epsilon``: the code does not give its stated guarantee.
    """

    claimed_epsilon: float
    delta: float
    reward_bound: float
    sigma_code: float
    sigma_stated: float
    stated_sensitivity: float
    epsilon_stated: float
    epsilon_blocks: float
    misses: bool


def code_mode_check(epsilon: float, delta: float, reward_bound: float = 1.0) -> CodeModeCheck:
    """The exact privacy of the official code's σ, against the ``(ε, δ)`` it states (P6(i), P7).

    Through :mod:`accounting`: ``Accountant`` ledgers of ``AdditiveNoise(Gaussian(σ_code), Δ)`` at
    the code's sensitivity ``2 + 2Y`` (and at this module's block sensitivities). At the official
    ``(8·10⁵, 0.1)`` the exact ε is 1.27·10¹¹ (stated sensitivity) or 4.75·10¹⁰ (blocks): at huge
    ε the classic formula's ``1/ε`` noise is far below the ``1/sqrt(2ε)`` it needs; at
    ``(1, 10⁻⁵)`` it is 1.098 at the stated sensitivity (0.64 at the blocks: the code's triangle
    bound ``2 + 2Y`` hides part of the missing ``√2``).
    """
    eps = v.positive("epsilon", epsilon)
    d = v.open_unit("delta", delta)
    Y = v.positive("reward_bound", reward_bound)
    s = code_sigma(eps, d, Y)
    stated = 2 + 2 * Y
    e_stated = _epsilon_of([AdditiveNoise(Gaussian(s), stated)], d)
    e_blocks = _epsilon_of(
        [AdditiveNoise(Gaussian(s), MATRIX_SENSITIVITY), AdditiveNoise(Gaussian(s), 2 * Y)], d
    )
    return CodeModeCheck(
        eps, d, Y, s, classic_sigma(eps, d, stated), stated, e_stated, e_blocks, e_stated > eps
    )


# ---------------------------------------------------------------------------------------
# The learner (a value)
# ---------------------------------------------------------------------------------------


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

    ``eta = None``: ``η = sqrt(ln T)/(d B' T^{2/3})`` [DERIVED constant].
    """

    smoothness: float
    eta: float | None = None

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

    ``eta = None``: ``η = sqrt((1 + 2(β/μ) ln T)/(4 d² B'² T))`` [DERIVED constant].
    """

    mu: float
    smoothness: float
    eta: float | None = None

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


@dataclass(frozen=True)
class Learner:
    """One algorithm with its settings (a value; build it with :func:`make_learner`).

    Attributes
    ----------
    name : str
        One of :data:`ALGORITHMS`.
    epsilon : float or None
        ``ε > 0``; ``None``: no privacy (Algorithms 1 and 2 only, the non-private baseline).
    delta : float or None
        ``δ ∈ (0, 1)``; ``None`` with an ε: pure ε-LDP (Algorithms 1, 2; ``mechanism``).
    mechanism : {"gaussian", "laplace", "randomized-response"} or None
        The randomizer of a private learner (:data:`MECHANISMS`); ``None``: the Gaussian mechanism
        with a ``delta``, the Laplace mechanism without. ``"randomized-response"``: Algorithm 1
        only, pure ε (:func:`privatize_loss`). Resolved to the name (``None`` without privacy).
    mode : {"paper", "code"}
        ``"code"``: the official code's constants (``ldp-linucb`` only; module docstring).
    calibration : {"exact", "classic"}
        The Gaussian noise multiplier (module docstring); ignored by ``mode="code"`` and Laplace.
    base : OnePointBase or None
        Algorithm 1's black box (default :class:`FKM`); only for ``one-point``.
    alpha : float
        The failure probability ``α`` of ``Υ_t``, ``β_t`` (contextual).
    bound, lipschitz : float or None
        ``B`` and ``G`` (``None``: the instance's).
    strong_convexity : float or None
        ``two-point``: ``μ`` for ``η_t = 1/(μt)`` (``None``: ``η = 1/√T``).
    eta, rho : float or None
        ``two-point``: override ``η`` and ``ρ``.
    reward_bound : float
        ``ldp-linucb``: ``Y``, rewards clipped to ``[-Y, Y]`` by the user (the paper's 2).
    gradient_bound : float or None
        ``ldp-glm``: ``C`` (``None``: the link's, :func:`~learners.ldp_instances.link_constants`).
    step : float or None
        ``ldp-glm``: ``ζ`` (``None``: ``1/√T``).
    radius : {"code", "derived"} or None
        ``ldp-linucb``'s ``β_t``; ``None``: ``"code"`` in ``mode="code"``, else ``"derived"``
        (resolved to the name).
    radius_scale : float
        A factor on ``β_t`` (``ldp-glm``: the ``κ`` of ``β_t² = κCσ sqrt(dt)/μ``).
    """

    name: str
    epsilon: float | None = None
    delta: float | None = None
    mechanism: str | None = None
    mode: str = "paper"
    calibration: str = "exact"
    base: OnePointBase | None = None
    alpha: float = 0.1
    bound: float | None = None
    lipschitz: float | None = None
    strong_convexity: float | None = None
    eta: float | None = None
    rho: float | None = None
    reward_bound: float = 2.0
    gradient_bound: float | None = None
    step: float | None = None
    radius: str | None = None
    radius_scale: float = 1.0

    def __post_init__(self) -> None:
        name = v.choice("algorithm", self.name, ALGORITHMS)
        mode = v.choice("mode", self.mode, MODES)
        v.choice("calibration", self.calibration, CALIBRATIONS)
        if self.radius is None:
            object.__setattr__(self, "radius", "code" if mode == "code" else "derived")
        v.choice("radius", self.radius, RADII)
        contextual = name in ("ldp-linucb", "ldp-glm")
        object.__setattr__(self, "mechanism", self._mechanism(name))
        if mode == "code" and name != "ldp-linucb":
            raise ParameterError("mode", mode, "'paper' (the official code implements only ldp-linucb)")
        if self.epsilon is None:
            if contextual:
                raise ParameterError(
                    "epsilon", None, f"a real number > 0 ('{name}' is private by construction)"
                )
            if self.delta is not None:
                raise ParameterError("delta", self.delta, "None without an epsilon (a non-private run)")
        else:
            object.__setattr__(self, "epsilon", v.positive("epsilon", self.epsilon))
            if self.delta is None:
                if contextual:
                    raise ParameterError(
                        "delta",
                        None,
                        f"a real number in the open interval (0, 1) ('{name}' is (ε, δ)-LDP only)",
                    )
            else:
                object.__setattr__(self, "delta", v.open_unit("delta", self.delta))
        if name == "one-point":
            base = FKM() if self.base is None else self.base
            if not isinstance(base, OnePointBase):
                raise ParameterTypeError(
                    "base", self.base, "a one-point base learner (FKM, ADXOnePoint, ..., UCB)"
                )
            object.__setattr__(self, "base", base)
        elif self.base is not None:
            raise ParameterError("base", self.base, "None (only 'one-point' takes a base learner)")
        object.__setattr__(self, "alpha", v.open_unit("alpha", self.alpha))
        for attr in ("bound", "lipschitz", "strong_convexity", "eta", "gradient_bound", "step"):
            if getattr(self, attr) is not None:
                object.__setattr__(self, attr, v.positive(attr, getattr(self, attr)))
        if self.rho is not None:
            object.__setattr__(self, "rho", v.interval("rho", self.rho, 0.0, 1.0, high_open=True))
        object.__setattr__(self, "reward_bound", v.positive("reward_bound", self.reward_bound))
        object.__setattr__(self, "radius_scale", v.positive("radius_scale", self.radius_scale))

    def _mechanism(self, name: str) -> str | None:
        """The randomizer's name, or ``None`` without privacy: a given one must be one the algorithm
        takes (:data:`_TAKERS`), and pure exactly when ``delta`` is ``None``."""
        if self.mechanism is not None:
            mechanism = v.choice("mechanism", self.mechanism, MECHANISMS)
            if name not in _TAKERS[mechanism]:
                takers = " and ".join(f"'{a}'" for a in _TAKERS[mechanism])
                raise ParameterError(
                    "mechanism", mechanism, f"'gaussian': only {takers} take(s) the {mechanism} mechanism"
                )
            if self.epsilon is None:
                raise ParameterError("mechanism", mechanism, "None without an epsilon (a non-private run)")
            if mechanism in PURE_MECHANISMS and self.delta is not None:
                raise ParameterError("delta", self.delta, f"None with mechanism '{mechanism}' (pure ε-LDP)")
            if mechanism not in PURE_MECHANISMS and self.delta is None:
                raise ParameterError(
                    "delta", None, "a real number in the open interval (0, 1) (the Gaussian mechanism)"
                )
            return mechanism
        if self.epsilon is None:
            return None
        return "gaussian" if self.delta is not None else "laplace"

    @property
    def private(self) -> bool:
        return self.epsilon is not None

    @property
    def label(self) -> str:
        """A display label naming the mode, e.g. ``LDP-LinUCB(ε=1, paper)``."""
        base = {"one-point": "Alg1", "two-point": "Alg2", "ldp-linucb": "LDP-LinUCB", "ldp-glm": "LDP-GLM"}[
            self.name
        ]
        if self.name == "one-point" and self.base is not None:
            base += f"[{self.base.name}]"
        inner = "non-private" if self.epsilon is None else f"ε={self.epsilon:g}, {self.mode}"
        return f"{base}({inner})"


def make_learner(name: str, epsilon: float | None = None, **params: Any) -> Learner:
    """A validated :class:`Learner`; unknown settings are an error naming them."""
    known = set(Learner.__dataclass_fields__) - {"name", "epsilon"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ParameterError(unknown[0], params[unknown[0]], "one of " + ", ".join(sorted(known)))
    return Learner(name, epsilon, **params)


# ---------------------------------------------------------------------------------------
# Noise
# ---------------------------------------------------------------------------------------


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


def rr_outputs(low: float, high: float, epsilon: float) -> tuple[float, float]:
    """The two values the server decodes a randomized-response bit to (:func:`privatize_loss`).

    The user rounds a loss ``x ∈ [low, high]`` to a bit ``s`` with ``P(s = 1) = (x − low)/(high −
    low)`` (exact for a binary loss) and reports ``s`` with probability ``p = e^ε/(1 + e^ε)``, else
    ``1 − s``: ``P(b = 1) = q + (p − q)P(s = 1)``, ``q = 1 − p``, so ``low + (high − low)(b − q)/(p − q)``
    is unbiased for ``x`` (Duchi, Jordan & Wainwright 2013's one-dimensional randomizer). ``p − q =
    tanh(ε/2)``. Returns ``(value at b = 0, value at b = 1)``.
    """
    gap = math.tanh(epsilon / 2)
    q = 1.0 / (1.0 + math.exp(epsilon))
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


def _bound(learner: Learner, instance: object) -> float:
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
    B = _bound(learner, instance)
    return -B, B


def _lipschitz(learner: Learner, instance: object) -> float:
    if learner.lipschitz is not None:
        return learner.lipschitz
    g = getattr(instance, "lipschitz", None)
    if g is None:
        raise ParameterError("lipschitz", None, "a Lipschitz constant G > 0 (the instance has none)")
    return float(g)


def _two_point_rho(learner: Learner, horizon: int) -> float:
    if learner.rho is not None:
        return learner.rho
    return min(0.5, math.log(max(horizon, 3)) / horizon)


def _glm_constants(learner: Learner, instance: ContextualInstance) -> tuple[float, float]:
    mu, C = link_constants(instance.link)
    return mu, learner.gradient_bound if learner.gradient_bound is not None else C


def noise_of(learner: Learner, instance: object, horizon: int) -> Noise:
    """The noise ``learner`` runs with on ``instance`` over ``horizon`` rounds (module docstring)."""
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
            G = _lipschitz(learner, instance)
            rho = _two_point_rho(learner, T)
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
            b = unit / eps * _SIGMA_UP
            # one Laplace scalar of scale 2ρb is drawn for the whole message (not a vector dotted
            # with x1 − x2): the draw's scale is the released one
            msg = Message(label, sens, msg_scale * b, "laplace")
            return Noise("laplace", "laplace", b, (msg,), loss_range=span)
        assert learner.delta is not None
        if learner.calibration == "exact":
            z = gaussian_multiplier(eps, learner.delta)
            sigma = z * unit * _SIGMA_UP
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
            sigma, cal = z * math.hypot(*blocks) * _SIGMA_UP, "exact"
        else:
            sigma, z, cal = classic_sigma(eps, delta, 2 + 2 * Y), 0.0, "classic"
        pair = (Message("matrix", blocks[0], sigma), Message("vector", blocks[1], sigma))
        return Noise("gaussian", cal, sigma, pair, z)
    _, C = _glm_constants(learner, instance)
    if learner.calibration == "exact":
        z = gaussian_multiplier(eps, delta)
        sigma = z * math.sqrt(MATRIX_SENSITIVITY**2 + 4 + 4) * _SIGMA_UP
    else:
        z, sigma = 0.0, composed_sigmas(eps, delta, (2.0, 2.0, 2.0), "classic")[0]
    messages = (
        Message("matrix", MATRIX_SENSITIVITY, sigma),
        Message("vector", 2.0, sigma),
        Message("gradient", 2 * C, C * sigma),
    )
    return Noise("gaussian", learner.calibration, sigma, messages, z)


# ---------------------------------------------------------------------------------------
# The users' randomizers
# ---------------------------------------------------------------------------------------


def _packed_noise(rng: np.random.Generator, shape: tuple[int, ...], dim: int, sigma: float) -> FloatArray:
    """The upper triangle (with the diagonal) of ``B_t``, i.i.d. ``N(0, σ²)``, shape ``shape + (D,)``,
    ``D = d(d+1)/2`` in :func:`numpy.triu_indices` order."""
    return np.asarray(rng.standard_normal((*shape, dim * (dim + 1) // 2)) * sigma, dtype=np.float64)


def _mirror(packed: FloatArray, dim: int) -> FloatArray:
    iu, ju = np.triu_indices(dim)
    out = np.empty((*packed.shape[:-1], dim, dim))
    out[..., iu, ju] = packed
    out[..., ju, iu] = packed
    return out


def symmetric_noise(rng: np.random.Generator, shape: tuple[int, ...], dim: int, sigma: float) -> FloatArray:
    """``B_t`` (Zheng et al. (2020), Algorithms 3 and 5): ``B(i, j)`` i.i.d. ``N(0, σ²)`` for ``i <= j``,
    ``B(j, i) = B(i, j)``.

    Exactly symmetric, every entry (the diagonal included) of variance ``σ²``. Shape ``shape + (d, d)``.
    """
    return _mirror(_packed_noise(rng, shape, dim, sigma), dim)


def _add(values: FloatArray, message: Message, rng: np.random.Generator) -> FloatArray:
    """``values`` plus ``message``'s noise, added as drawn: at the message's ``draw_sd``, which is
    its ``sd`` (the ledger's) for a block of ``spread`` 1."""
    assert message.spread == 1.0  # noise dotted with a vector is drawn by its randomizer
    if message.kind == "laplace":
        return np.asarray(values + rng.laplace(0.0, message.draw_sd, values.shape), dtype=np.float64)
    return np.asarray(values + rng.normal(0.0, message.draw_sd, values.shape), dtype=np.float64)


def privatize_loss(values: FloatArray, bound: float, noise: Noise, rng: np.random.Generator) -> FloatArray:
    """Algorithm 1's message ``clip(f_t(x_t), a, b) + Z_t`` (``noise`` from :func:`noise_of`; the
    range ``[a, b]`` is ``noise.loss_range``, else ``[-bound, bound]``).

    Randomized response (``noise.kind``): the loss clipped to ``noise.loss_range`` is rounded to a
    bit, the bit flipped with probability ``1/(1 + e^ε)``, and the server's decoded value
    (:func:`rr_outputs`) returned: unbiased for the clipped loss, ``ε``-LDP whatever the loss.
    """
    low, high = noise.loss_range if noise.loss_range is not None else (-bound, bound)
    clipped = np.clip(values, low, high)
    if noise.kind == "randomized-response":
        eps = noise.messages[0].epsilon
        bit = rng.random(values.shape) < (clipped - low) / (high - low)
        flip = rng.random(values.shape) < 1.0 / (1.0 + math.exp(eps))
        v0, v1 = rr_outputs(low, high, eps)
        return np.where(bit != flip, v1, v0).astype(np.float64)
    if noise.kind == "none":
        return np.asarray(clipped, dtype=np.float64)
    return _add(clipped, noise.messages[0], rng)


def privatize_difference(
    difference: FloatArray, gap: FloatArray, bound: float, noise: Noise, rng: np.random.Generator
) -> FloatArray:
    """Algorithm 2's message ``m_t = clip(f(x_1) − f(x_2), ±bound) + n_tᵀ(x_1 − x_2)`` (Zheng et al.
    2020, §3).

    ``gap`` ``(R, d)`` is ``x_1 − x_2 = 2ρu_t``; ``n_t ~ N(0, σ² I_d)`` is drawn at the message's
    ``draw_sd`` ``σ`` and dotted with it: sd ``σ‖gap‖``, the message's ``sd = spread · σ`` with
    ``spread = 2ρ = ‖gap‖``, the ledger's. Laplace: a scalar of scale ``2ρ b`` (the message's
    Laplace mechanism).

    Raises
    ------
    ParameterError
        If ``2 · bound`` exceeds the message's sensitivity, or a row of ``gap`` is not of norm
        ``spread`` (up to a relative ``1e-9``, far above rounding): the release would not be the
        ledger's event.
    """
    clipped = np.clip(difference, -bound, bound)
    if noise.kind == "none":
        return np.asarray(clipped, dtype=np.float64)
    message = noise.messages[0]
    if not 2 * bound <= message.sensitivity:
        raise ParameterError(
            "bound", bound, f"at most {message.sensitivity / 2:g}, half the ledger's sensitivity"
        )
    if noise.kind == "laplace":
        return _add(clipped, message, rng)
    # the released noise is σ‖gap‖: the ledger's spread must be the real norm of x_1 − x_2
    norms = np.sqrt(np.einsum("ri,ri->r", gap, gap))
    if not np.all(np.abs(norms - message.spread) <= 1e-9 * message.spread):
        shown = f"rows of norms {norms.min():g}..{norms.max():g}"
        raise ParameterError("gap", shown, f"rows of norm {message.spread:g} (2ρ, the ledger's)")
    n = rng.normal(0.0, message.draw_sd, gap.shape)
    return np.asarray(clipped + np.einsum("ri,ri->r", n, gap), dtype=np.float64)


def privatize_linear(
    x: FloatArray, y: FloatArray, sigma: float, reward_bound: float, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """Algorithm 5's messages ``(x xᵀ + B_t, clip(y, ±Y) x + ξ_t)`` for ``x`` ``(R, d)``, ``y`` ``(R,)``."""
    d = x.shape[-1]
    yc = np.clip(y, -reward_bound, reward_bound)
    matrix = x[:, :, None] * x[:, None, :] + symmetric_noise(rng, x.shape[:-1], d, sigma)
    vector = yc[:, None] * x + rng.normal(0.0, sigma, x.shape)
    return matrix, np.asarray(vector, dtype=np.float64)


def privatize_glm(
    x: FloatArray,
    y: FloatArray,
    theta_hat: FloatArray,
    link: str,
    sigma: float,
    gradient_bound: float,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Algorithm 3's messages ``(x xᵀ + B_t, z x + ξ_t, ∇ℓ_t(θ̂_t) + r_t)``, ``z = xᵀθ̂_t``,
    ``∇ℓ_t = clip(g(xᵀθ̂) − y, ±C) x``, ``r_t ~ N(0, C²σ² I)``."""
    d = x.shape[-1]
    z = np.einsum("ri,ri->r", x, theta_hat)
    residual = np.clip(apply_link(link, z) - y, -gradient_bound, gradient_bound)
    matrix = x[:, :, None] * x[:, None, :] + symmetric_noise(rng, x.shape[:-1], d, sigma)
    vector = z[:, None] * x + rng.normal(0.0, sigma, x.shape)
    gradient = residual[:, None] * x + rng.normal(0.0, gradient_bound * sigma, x.shape)
    return matrix, np.asarray(vector, dtype=np.float64), np.asarray(gradient, dtype=np.float64)


# ---------------------------------------------------------------------------------------
# Privacy
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Privacy:
    """What a run's releases guarantee.

    Attributes
    ----------
    mode, calibration : str
    claimed_epsilon, claimed_delta : float or None
    epsilon : float
        The exact certified ε of one user's release at ``delta`` (the pure ε for Laplace noise;
        ``inf`` without privacy).
    delta : float
        ``0`` for Laplace noise.
    certified : bool
    meets_claim : bool
        ``epsilon <= claimed_epsilon``.
    argument, message : str
    """

    mode: str
    calibration: str
    claimed_epsilon: float | None
    claimed_delta: float | None
    epsilon: float
    delta: float
    certified: bool
    meets_claim: bool
    argument: str
    message: str = ""


def privacy_of(
    learner: Learner, noise: Noise, ledgers: dict[int, Accountant], delta: float, route: str = "auto"
) -> Privacy:
    """The privacy of a run from its ledgers (:attr:`RunResult.ledgers`); the Gaussian releases'
    ledgers are answered by the accountant's ``route`` (the pure mechanisms' by the pure route)."""
    if not isinstance(learner, Learner):
        raise ParameterTypeError("learner", learner, "a learners.ldp.Learner")
    d = v.open_unit("delta", delta)
    if noise.kind == "none":
        return Privacy(
            learner.mode, "none", None, None, math.inf, d, False, False,
            "none: the losses are released without noise", "a non-private run: nothing is guaranteed",
        )  # fmt: skip
    blocks = ", ".join(f"{m.name} (Δ = {m.sensitivity:.6g}, noise {m.sd:.6g})" for m in noise.messages)
    argument = (
        f"each user releases once ({blocks}): the run is as private as one release; replace-one "
        "(LDP: any two data of a user)"
    )
    if noise.kind in PURE_MECHANISMS:
        epsilon = max(acc.pure_epsilon() for acc in ledgers.values())
        at = 0.0
        argument += f"; {'Laplace mechanism' if noise.kind == 'laplace' else 'randomized response'}, pure ε"
    else:
        epsilon = max(
            ledger_epsilon(acc.ledger, d, acc.neighbouring, acc.dps, route) for acc in ledgers.values()
        )
        at = d
        argument += f"; {noise.calibration} calibration, exact accounting of the Gaussian mechanism"
    assert learner.epsilon is not None
    meets = epsilon <= learner.epsilon and (learner.delta is None or at >= learner.delta or at == 0.0)
    notes = []
    if noise.calibration == "code":
        notes.append(
            "mode='code': the official code's σ = (2 + 2Y) sqrt(ln(1.25/δ))/ε lacks the factor 2 under the "
            "square root (spec P6(i)); epsilon is the exact ε of what was released"
        )
    if noise.calibration == "classic" and learner.epsilon >= 1:
        notes.append("calibration='classic': Dwork–Roth's formula is proved only for ε < 1 (spec P7)")
    if not meets:
        notes.append(f"the release's exact epsilon {epsilon:g} exceeds the claimed {learner.epsilon:g}")
    return Privacy(
        learner.mode, noise.calibration, learner.epsilon, learner.delta, epsilon, at, True, meets, argument,
        "; ".join(notes),
    )  # fmt: skip


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ContextualRecord:
    """What the server of ``ldp-linucb`` (Algorithm 5) or ``ldp-glm`` (Algorithm 3) received by round
    ``t``, and the same without the users' noise (Zheng et al. 2020, §4.2, §4.4); passed to
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
        Contextual: rounds whose ``Ṽ_{t-1}`` gave a negative quadratic form on an arm (clamped, P3).
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


# ---------------------------------------------------------------------------------------
# The engines
# ---------------------------------------------------------------------------------------


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
    B = _bound(learner, instance)
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
        dim, G = instance.dim, _lipschitz(learner, instance)
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
    G = _lipschitz(learner, instance)
    rho = _two_point_rho(learner, T)
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
    noise_rng, _, env = gens
    d = instance.dim
    glm = learner.name == "ldp-glm"
    code = learner.mode == "code"
    sigma = noise.sigma  # the paper's σ, in Υ_t and β_t (the server's widths, not the draws)
    link = instance.link
    if glm:
        if link == "identity":
            raise ParameterError(
                "link", link, "'logistic' or 'poisson' for 'ldp-glm' (use 'ldp-linucb' for linear)"
            )
        mu, C = _glm_constants(learner, instance)
        zeta = learner.step if learner.step is not None else 1 / math.sqrt(T)
    elif link != "identity":
        raise ParameterError("link", link, "'identity' for 'ldp-linucb' (use 'ldp-glm' for a GLM)")
    Y = learner.reward_bound
    # The users draw every block's noise at its message's draw_sd, the number the ledger's event
    # is built from (Noise.ledger: the ledger holds what was drawn); each message's sensitivity is its clip's.
    blocks = {m.name: m for m in noise.messages}
    matrix, vector = blocks["matrix"], blocks["vector"]
    assert matrix.spread == vector.spread == 1.0
    assert matrix.sensitivity == MATRIX_SENSITIVITY
    assert vector.sensitivity == (2.0 if glm else 2 * Y)  # |z| <= ‖x‖‖θ̂‖ <= 1; y clipped to ±Y
    if glm:
        gradient = blocks["gradient"]
        assert gradient.spread == 1.0
        assert gradient.sensitivity == 2 * C  # the residual clipped to ±C, times ‖x‖ <= 1
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

    # Ṽ_0 (P4): c_1 I in the paper's mode, 0.1 I in the code's
    c0 = 0.1 if code else 2 * upsilon(sigma, 1, d, T, learner.alpha)
    V_inv = np.broadcast_to(eye / c0, (R, d, d)).copy()
    theta = np.zeros((R, d))
    beta_prev = radius(1)
    for start in range(0, T, CHUNK):
        n = min(CHUNK, T - start)
        ctx = instance.contexts(env, n, R)  # (n, R, K, d)
        lin_all = ctx @ instance.theta  # (n, R, K): xᵀθ*
        best = instance.mean(lin_all.max(axis=2))  # (n, R): g increasing
        N_cum = np.cumsum(_packed_noise(noise_rng, (n, R), d, matrix.draw_sd), axis=0) + N_packed
        N_full = _mirror(N_cum, d)
        xi_cum = np.cumsum(noise_rng.standard_normal((n, R, d)) * vector.draw_sd, axis=0) + xi_sum
        N_packed, xi_sum = N_cum[-1], xi_cum[-1]
        if glm:
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
                        round=t,
                        matrix=released_matrix,
                        vector=released_vector,
                        gradient=released_gradient,  # fresh arrays, never written again
                        exact_matrix=XX.copy(),
                        exact_vector=XY.copy(),
                        exact_gradient=exact_gradient,
                    )
                )
    return theta, indefinite, hat_norm


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
    d_report = (
        (learner.delta if learner.delta is not None else 1e-6)
        if delta is None
        else v.open_unit("delta", delta)
    )
    noise = noise_of(learner, instance, T)
    learner_rng, env_default = rng.spawn(2)
    gens = (rng, learner_rng, env_rng if env_rng is not None else env_default)
    n = min(C, T)
    rounds = np.unique(-(-np.arange(1, n + 1, dtype=np.int64) * T // n))
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

    def frozen(a: NDArray[Any]) -> NDArray[Any]:
        a.setflags(write=False)
        return a

    return RunResult(
        learner=learner,
        mode=learner.mode,
        horizon=T,
        rounds=frozen(rounds),
        pseudo_regret=frozen(curves.pseudo),
        realized_regret=frozen(curves.realized),
        noise=noise,
        delta=d_report,
        indefinite=frozen(indefinite),
        theta_hat_norm=frozen(hat_norm),
        final_estimate=frozen(np.array(final, dtype=np.float64)),
        _ledgers=ledgers,
    )
