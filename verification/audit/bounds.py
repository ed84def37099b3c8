"""The ε lower bound from counts: one-sided Clopper–Pearson intervals and their union bound.

For an event ``S`` fixed before the counts were drawn, an ``(ε, δ)``-DP mechanism has
``P[M(D) ∈ S] <= e^ε P[M(D') ∈ S] + δ`` (Dwork & Roth 2014, Definition 2.4), so exact
binomial confidence bounds on the two probabilities (Clopper & Pearson 1934, "The use of
confidence or fiducial limits illustrated in the case of the binomial", Biometrika 26) bound ε
from below: the method of Jagielski, Ullman & Oprea 2020 (NeurIPS) and Nasr et al. 2021 (IEEE S&P).
"""

from __future__ import annotations

import math

from accounting import validate as v
from accounting.search import largest
from verification.errors import ParameterError

__all__ = [
    "checked_delta",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "evidence",
]


def clopper_pearson_lower(hits: int, trials: int, alpha: float) -> float:
    """One-sided Clopper–Pearson lower bound: ``P[p >= bound] >= 1 - alpha``.

    Clopper & Pearson 1934: the ``alpha`` quantile of ``Beta(k, n - k + 1)`` (0 when ``k = 0``).
    """
    if hits <= 0:
        return 0.0
    from scipy.stats import beta  # here, not at module level: importing scipy.stats takes a second

    return float(beta.ppf(alpha, hits, trials - hits + 1))


def clopper_pearson_upper(hits: int, trials: int, alpha: float) -> float:
    """One-sided Clopper–Pearson upper bound: ``P[p <= bound] >= 1 - alpha``.

    Clopper & Pearson 1934: the ``1 - alpha`` quantile of ``Beta(k + 1, n - k)`` (1 when ``k = n``).
    """
    if hits >= trials:
        return 1.0
    from scipy.stats import beta

    return float(beta.ppf(1 - alpha, hits + 1, trials - hits))


def epsilon_lower_bound(
    first_hits: int, second_hits: int, trials: int, *, delta: float = 0.0, confidence: float = 0.95
) -> float:
    """``ε_lb = ln((p_lo - δ) / q_hi)`` for an event fixed before these counts were drawn.

    ``p_lo`` is the Clopper–Pearson lower bound of ``P[M(D) ∈ S]`` from ``first_hits`` of
    ``trials``, ``q_hi`` the upper bound of ``P[M(D') ∈ S]`` from ``second_hits``, each at
    level ``1 - (1 - confidence)/2`` so that both hold together with probability at least
    ``confidence`` (union bound). An ``(ε, δ)``-DP mechanism has ``p <= e^ε q + δ``, hence
    ``ε >= ε_lb`` at that confidence. Clipped at 0 (a lower bound on ε is never negative)
    and rounded down by two ulps (``beta.ppf`` is accurate to a few ulps; a lower bound must
    not round up).

    Parameters
    ----------
    first_hits, second_hits : int
        Outputs in ``S`` among ``trials`` samples on ``D`` and on ``D'``.
    trials : int
        Samples per side in the estimation half.
    delta : float
        The ``δ`` of the claim, in ``[0, 1)``.
    confidence : float
        In ``(0, 1)``.
    """
    n = v.integer("trials", trials, minimum=1)
    k1 = v.integer("first_hits", first_hits, minimum=0)
    k2 = v.integer("second_hits", second_hits, minimum=0)
    if k1 > n:
        raise ParameterError("first_hits", first_hits, f"an integer in [0, trials={n}]")
    if k2 > n:
        raise ParameterError("second_hits", second_hits, f"an integer in [0, trials={n}]")
    d = checked_delta(delta)
    alpha = 1 - v.open_unit("confidence", confidence)
    p_lo = clopper_pearson_lower(k1, n, alpha / 2)
    q_hi = clopper_pearson_upper(k2, n, alpha / 2)
    if p_lo - d <= 0:
        return 0.0
    value = math.log((p_lo - d) / q_hi)
    if value <= 0:
        return 0.0
    return math.nextafter(math.nextafter(value, -math.inf), -math.inf)


def checked_delta(delta: object) -> float:
    """``delta`` validated: a real number in ``[0, 1)`` (the ``δ`` of a claim)."""
    d = v.nonnegative("delta", delta)
    if not d < 1:
        raise ParameterError("delta", delta, "a real number in [0, 1)")
    return d


def evidence(first_hits: int, second_hits: int, trials: int, delta: float, claimed: float) -> float:
    """The largest confidence at which the lower bound still exceeds ``claimed`` (0 if none).

    ``1 - evidence`` is the p-value of the test "the mechanism is (claimed, δ)-DP" on this
    event (the bound decreases in the confidence; the project's one search, to 1e-12).
    """

    def above(c: float) -> bool:
        return epsilon_lower_bound(first_hits, second_hits, trials, delta=delta, confidence=c) > claimed

    lo, hi = 1e-12, 1 - 1e-12
    if not above(lo):
        return 0.0
    if above(hi):
        return hi
    return largest(above, lo, hi, rtol=1e-12)
