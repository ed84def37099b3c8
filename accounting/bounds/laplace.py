"""Published closed forms for Laplace noise, continuous and on the integers.

Part of :mod:`accounting.bounds` (its conventions apply: arguments validated, arithmetic at 50
digits, every privacy quantity rounded *up*).
"""

from __future__ import annotations

import math

from mpmath import mp

from accounting import validate as v
from accounting.certified import float_up

__all__ = ["discrete_laplace_pure_epsilon", "laplace_delta", "laplace_pure_epsilon", "laplace_rdp"]

_DPS = 50
"""Working precision (decimal digits) of every formula in this module."""


def discrete_laplace_pure_epsilon(scale: float, sensitivity: int = 1) -> float:
    """Pure ε of adding discrete Laplace noise ``Lap_Z(scale)`` to an integer query.

    Chowdhury & Zhou 2023, Fact 3: ``q + Lap_Z(Δ/ε)`` is ``(ε, 0)``-DP, i.e. ``ε = Δ / b``. The
    discrete Laplace on ``Z`` (their Definition 4) has the same privacy-loss range as the continuous one
    because its PMF ratio at distance ``Δ`` is exactly ``e^{Δ/b}``.

    Parameters
    ----------
    scale : float
        The scale ``b > 0`` of ``Lap_Z(b)``, PMF proportional to ``exp(-|x|/b)``.
    sensitivity : int
        The integer sensitivity ``Δ >= 1`` of the query.

    Returns
    -------
    float
        ``Δ / b``, rounded up.
    """
    b = v.positive("scale", scale)
    delta_q = v.integer("sensitivity", sensitivity, minimum=1)
    with mp.workdps(_DPS):
        return float_up(mp.mpf(delta_q) / mp.mpf(b))


def laplace_pure_epsilon(scale: float, sensitivity: float = 1.0) -> float:
    """Pure ε of the (continuous) Laplace mechanism: ``ε = Δ / b``.

    Dwork, McSherry, Nissim & Smith 2006 (the noise of the DP-SE baseline of Sajed & Sheffet 2019).

    Parameters
    ----------
    scale : float
        The scale ``b > 0`` (density ``exp(-|x|/b) / (2b)``).
    sensitivity : float
        The ℓ1 sensitivity ``Δ > 0``.

    Returns
    -------
    float
        ``Δ / b``, rounded up.
    """
    b = v.positive("scale", scale)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        return float_up(mp.mpf(d) / mp.mpf(b))


def laplace_delta(scale: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact hockey-stick divergence ``δ(ε)`` of ``Lap(Δ, b)`` from ``Lap(0, b)``.

    Derived here (not quoted). With ``a = Δ/b`` the privacy loss ``(|x| - |x - Δ|)/b`` equals
    ``-a`` on ``x <= 0``, ``a`` on ``x >= Δ`` and ``(2x - Δ)/b`` in between, so it exceeds ``ε``
    exactly on ``x > c = (Δ + εb)/2``. When ``ε < a`` we have ``c < Δ`` and::

        δ = P[X > c] - e^ε Q[X > c]
          = (1 - e^{-(Δ-c)/b}/2) - e^ε e^{-c/b}/2
          = 1 - exp((ε - a)/2),

    and ``δ = 0`` when ``ε >= a`` (pure DP). By symmetry of the Laplace pair both directions
    of the divergence agree, so this is the tight ``δ`` for ``(ε, δ)``-DP of the mechanism.

    Parameters
    ----------
    scale : float
        The scale ``b > 0``.
    epsilon : float
        ``ε >= 0``.
    sensitivity : float
        ``Δ > 0``.

    Returns
    -------
    float
        ``δ(ε)``, rounded up.
    """
    b = v.positive("scale", scale)
    eps = v.nonnegative("epsilon", epsilon)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        a = mp.mpf(d) / mp.mpf(b)
        e = mp.mpf(eps)
        if e >= a:
            return 0.0
        # -expm1 avoids the cancellation of 1 - exp(t) for ε close to Δ/b.
        return float_up(-mp.expm1((e - a) / 2))


def laplace_rdp(alpha: float, scale: float, sensitivity: float = 1.0) -> float:
    """Rényi divergence of order ``α`` of the Laplace mechanism.

    Mironov 2017, "Rényi Differential Privacy", Table II (Laplace row), for ``λ = b/Δ``::

        D_α = 1/(α-1) · ln( α/(2α-1) · e^{(α-1)/λ} + (α-1)/(2α-1) · e^{-α/λ} ),

    and ``D_∞ = 1/λ = Δ/b``. Mironov states it for sensitivity 1; the mechanism with
    ``(Δ, b)`` is a rescaling of the one with ``(1, b/Δ)``, so only ``λ = b/Δ`` matters.

    Parameters
    ----------
    alpha : float
        The order ``α > 1``, or ``inf``.
    scale : float
        The scale ``b > 0``.
    sensitivity : float
        ``Δ > 0``.

    Returns
    -------
    float
        ``D_α``, rounded up.
    """
    a = v.order("alpha", alpha, allow_inf=True)
    b = v.positive("scale", scale)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        inv_lam = mp.mpf(d) / mp.mpf(b)
        if math.isinf(a):
            return float_up(inv_lam)
        am = mp.mpf(a)
        # Factor e^{(α-1)/λ} out of the sum so that a huge α/λ cannot overflow the mantissa
        # budget and the log is of a number in (0, 1]: ln(w1 + w2 e^{-(2α-1)/λ}) + (α-1)/λ.
        w1 = am / (2 * am - 1)
        w2 = (am - 1) / (2 * am - 1)
        inner = mp.log(w1 + w2 * mp.exp(-(2 * am - 1) * inv_lam))
        return float_up(inv_lam + inner / (am - 1))
