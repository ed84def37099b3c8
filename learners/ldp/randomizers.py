"""The users' randomizers of the LDP bandits paper (Zheng et al. 2020): what each user releases.

**Symmetric matrix noise** (Zheng et al. 2020, Algorithms 3 and 5). ``B_t`` has its upper triangle
*including the diagonal* i.i.d. ``N(0, σ²)``, mirrored: exactly symmetric, every entry of variance
``σ²`` (:func:`symmetric_noise`). This differs from :mod:`learners.linear`,
which symmetrizes a full Gaussian matrix as ``(N + Nᵀ)/2`` (diagonal ``σ²``, off-diagonal
``σ²/2``). The claim that ``(N + Nᵀ)/2`` "under-noises and breaks privacy" holds only if that
matrix is accounted as the upper triangle at ``σ``; accounted as what it is — post-processing of
``x xᵀ + N`` on all ``d²`` entries, whose sensitivity ``‖x xᵀ − x'x'ᵀ‖_F`` is also at most ``√2``
(``⟨x xᵀ, x'x'ᵀ⟩ = (xᵀx')² >= 0``) — it is exactly as private at the same ``σ`` with half the
off-diagonal variance, i.e. the better mechanism. The mirrored upper triangle is kept here
because the paper's Algorithms 3 and 5 specify it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from learners.errors import ParameterError
from learners.ldp.instances import apply_link
from learners.ldp.noise import Message, Noise, rr_flip, rr_outputs
from learners.symmetric import mirror

__all__ = [
    "packed_noise",
    "privatize_difference",
    "privatize_glm",
    "privatize_linear",
    "privatize_loss",
    "symmetric_noise",
]

FloatArray = NDArray[np.float64]


def packed_noise(rng: np.random.Generator, shape: tuple[int, ...], dim: int, sigma: float) -> FloatArray:
    """The upper triangle (with the diagonal) of ``B_t``, i.i.d. ``N(0, σ²)``, shape ``shape + (D,)``,
    ``D = d(d+1)/2`` in :func:`numpy.triu_indices` order."""
    return np.asarray(rng.standard_normal((*shape, dim * (dim + 1) // 2)) * sigma, dtype=np.float64)


def symmetric_noise(rng: np.random.Generator, shape: tuple[int, ...], dim: int, sigma: float) -> FloatArray:
    """``B_t`` (Zheng et al. (2020), Algorithms 3 and 5): ``B(i, j)`` i.i.d. ``N(0, σ²)`` for ``i <= j``,
    ``B(j, i) = B(i, j)``.

    Exactly symmetric, every entry (the diagonal included) of variance ``σ²``. Shape ``shape + (d, d)``.
    """
    return mirror(packed_noise(rng, shape, dim, sigma), dim)


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
        flip = rng.random(values.shape) < rr_flip(eps)
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
