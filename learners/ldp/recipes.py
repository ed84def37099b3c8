"""The noise recipes of the LDP bandits paper (Zheng et al. 2020) and of its official code.

**Noise** (:func:`learners.ldp.noise.noise_of`; every message's, from :mod:`accounting`). A user's
release is the messages of one round; each is a Gaussian mechanism on a block of ℓ2 sensitivity
``Δ_i`` (replace one user's data by any other: LDP, Zheng et al. (2020), Definition 1), and the
blocks of one release share a noise multiplier ``z``:

* ``calibration="exact"`` (default): ``z`` = :func:`accounting.calibration.calibrate`
  ``("gaussian", ε, δ)``, the least multiplier the Accountant certifies ``(ε, δ)``-DP for a
  sensitivity-1 query (exact accounting of the Gaussian mechanism, valid for every ε); a release of
  ``k`` blocks at one noise level is one Gaussian mechanism of sensitivity ``sqrt(Σ Δ_i²)``, so
  ``σ = z sqrt(Σ Δ_i²)`` (rounded up by a few ulps);
* ``calibration="classic"``: the paper's formulas (Dwork & Roth 2014, Theorem A.1, proved only for
  ``ε < 1``; the paper's regret bounds assume ``ε <= 1`` too): Algorithm 1
  ``σ = 2B sqrt(2 ln(1.25/δ))/ε``; Algorithm 2 ``σ = 2G sqrt(2 ln(1.25/δ))/ε``; Algorithm 5
  ``σ = (2 + 2Y) sqrt(2 ln(1.25/δ))/ε`` (one mechanism on the concatenated message, sensitivity
  ``2 + 2Y`` by the triangle inequality, ``6`` at the paper's ``|y| <= Y = 2``: our reconstruction
  of Algorithm 5's σ, lost with the appendix, from the official code's README); Algorithm 3
  :func:`composed_sigmas` (``k = 3`` messages at ``(ε/3, δ/3)``: ``σ = 6 sqrt(2 ln(3.75/δ))/ε``,
  gradient noise ``Cσ``, as printed in Algorithm 3, §4.2);
* ``delta=None`` (Algorithms 1 and 2 only): pure ε-LDP by the Laplace mechanism, scale ``Δ/ε``;
* ``mechanism="randomized-response"`` (Algorithm 1 only): pure ε-LDP by randomized response; the
  user rounds the loss to a bit of the loss range (Bernoulli arms: the loss itself) and flips it
  with probability ``1/(1 + e^ε)``, the server decodes it unbiasedly
  (:func:`learners.ldp.noise.rr_outputs`); the ledger holds :class:`~accounting.mechanisms.PureDP`
  ``(ε)``, whose worst case is exactly this.

The sensitivities the ledger holds are the true suprema for ``‖x‖ <= 1`` (the paper uses upper
bounds): ``f_t(x_t) ∈ [-B, B]``: ``2B``; the difference of Algorithm 2 (clipped to
``[-2ρG, 2ρG]`` by the user, which changes nothing for a ``G``-Lipschitz ``f``): ``4ρG``;
``y x`` with ``|y| <= Y`` (clipped by the user): ``2Y``; ``z x``: ``2``; the clipped gradient:
``2C``; and the upper triangle of ``x xᵀ`` (what is released: the lower one is its mirror):
``√2`` (**derived here; the paper uses 2**), since ``‖triu(x xᵀ)‖_F² = (‖x‖⁴ + Σ x_i⁴)/2 <= 1`` and
``⟨triu(x xᵀ), triu(x'x'ᵀ)⟩ = ((xᵀx')² + Σ x_i² x_i'²)/2 >= 0``, so the distance is at most
``√2`` (attained at ``e_1, e_2``). The classic mode keeps the paper's constants; its ledger
holds the true sensitivities, so its exact ε is that of what was released.

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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from accounting import validate as v
from accounting.mechanisms import AdditiveNoise
from accounting.noise import Gaussian
from learners.errors import ParameterError
from learners.gaussian import classic_sigma, gaussian_multiplier, releases_epsilon
from learners.ldp.spec import CALIBRATIONS

__all__ = [
    "MATRIX_SENSITIVITY",
    "SIGMA_UP",
    "CodeModeCheck",
    "classic_sigma",
    "code_mode_check",
    "code_sigma",
    "composed_sigmas",
    "gaussian_multiplier",
    "upsilon",
]

#: Relative amount a released σ is rounded up by (a few float operations of half an ulp each).
SIGMA_UP = 1.0 + 8 * 2.0**-52

#: ``triu(x xᵀ)``'s ℓ2 sensitivity for ``‖x‖ <= 1`` (derived here, see above; the paper uses 2).
MATRIX_SENSITIVITY = math.sqrt(2.0)


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
    return tuple(z * s * math.sqrt(k) * SIGMA_UP for s in sens)


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
    """The exact privacy of the official code's σ, against the ``(ε, δ)`` it states.

    The code's ``σ`` lacks the 2 under the square root of Dwork & Roth (2014), Theorem A.1, which its
    README states, and that theorem is proved only for ``ε < 1``.

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
    e_stated = releases_epsilon([AdditiveNoise(Gaussian(s), stated)], d)
    e_blocks = releases_epsilon(
        [AdditiveNoise(Gaussian(s), MATRIX_SENSITIVITY), AdditiveNoise(Gaussian(s), 2 * Y)], d
    )
    return CodeModeCheck(
        eps, d, Y, s, classic_sigma(eps, d, stated), stated, e_stated, e_blocks, e_stated > eps
    )
