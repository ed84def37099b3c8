"""Conversions between privacy notions (a first part; the full module comes with the Accountant).

* :func:`rdp_to_dp` — Rényi DP to ``(ε, δ)``-DP by Lemma 10 of the distributed MAB paper
  (spec §3.4), which is Canonne–Kamath–Steinke 2020 Prop. 12 / Balle et al. 2020 Thm 21.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from mpmath import mp

from accounting import _validate as v
from accounting._certified import float_up
from accounting.errors import ParameterError

__all__ = ["rdp_to_dp"]


def rdp_to_dp(curve: Iterable[tuple[float, float]], delta: float) -> float:
    """``ε' = min_α [ε(α) + ln(1/(α δ))/(α - 1) + ln(1 - 1/α)]`` over the given orders.

    Lemma 10 of the distributed MAB paper (spec §3.4): a mechanism that is
    ``(α, ε(α))``-RDP is ``(ε', δ)``-DP. Each candidate is evaluated at 50 digits and the
    minimum is rounded up; ``max(0, ·)`` since ε is never negative.

    Parameters
    ----------
    curve : iterable of (alpha, rdp)
        Orders ``α > 1`` (finite) with an upper bound on the RDP at each (``inf`` allowed).
        Pass integer orders only for a bound that holds only there (the Skellam bound).
    delta : float
        ``δ ∈ (0, 1)``.
    """
    d = v.open_unit("delta", delta)
    best = mp.inf
    seen = False
    with mp.workdps(50):
        for alpha, value in curve:
            a = v.order("alpha", alpha, allow_inf=False)
            if not (isinstance(value, int | float) and not math.isnan(value)) or value < 0:
                raise ParameterError("rdp", value, "a real number >= 0 (or inf)")
            seen = True
            if math.isinf(value):
                continue
            am = mp.mpf(a)
            candidate = mp.mpf(value) + mp.log(1 / (am * d)) / (am - 1) + mp.log(1 - 1 / am)
            best = min(best, candidate)
        if not seen:
            raise ParameterError("curve", [], "at least one (alpha, rdp) pair")
        return float_up(max(mp.zero, best))
