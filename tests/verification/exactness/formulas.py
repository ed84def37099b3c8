"""Reference values computed from the published formulas (mpmath, Bessel functions), not from the code.

Lemma 3 of Chowdhury & Zhou 2023 is Agarwal, Kairouz & Liu 2021, Theorem 3.5; the headline is
Chowdhury & Zhou 2023, Theorem 2 (Section 5); the Skellam PMF is their Definition 5.
"""

from __future__ import annotations

from mpmath import mp


def lemma3_by_hand(alpha: int, eps: float, g: int) -> float:
    """Lemma 3 (AKL 2021 Thm 3.5) with Δ = g and σ² = g²/ε², in mpmath."""
    with mp.workdps(40):
        d, var = mp.mpf(g), mp.mpf(g) ** 2 / mp.mpf(eps) ** 2
        extra = min(((2 * alpha - 1) * d**2 + 6 * d) / (4 * var**2), 3 * d / (2 * var))
        return float(alpha * d**2 / (2 * var) + extra)


def headline_by_hand(alpha: int, eps: float, s: float) -> float:
    """Theorem 2's headline αε²/2 + min{(2α-1)ε²/(4s²) + 3ε/(2s³), 3ε²/(2s)}, in mpmath."""
    with mp.workdps(40):
        e, sm = mp.mpf(eps), mp.mpf(s)
        return float(
            alpha * e**2 / 2
            + min((2 * alpha - 1) * e**2 / (4 * sm**2) + 3 * e / (2 * sm**3), 3 * e**2 / (2 * sm))
        )


def skellam_d2_by_hand(variance: float) -> float:
    """``D_2(Sk + 1 || Sk) = ln Σ_k P(k-1)²/P(k)`` with ``P(k) = e^{-v} I_k(v)``.

    The Skellam PMF of Chowdhury & Zhou 2023, Definition 5, at variance ``v``.
    """
    with mp.workdps(40):
        v = mp.mpf(variance)
        total = mp.fsum(
            (mp.exp(-v) * mp.besseli(k - 1, v)) ** 2 / (mp.exp(-v) * mp.besseli(k, v)) for k in range(-45, 47)
        )
        return float(mp.log(total))
