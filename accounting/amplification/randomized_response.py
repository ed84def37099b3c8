"""Ground truth: the exact ε of shuffled binary randomized response.

Part of :mod:`accounting.amplification` (its conventions apply). Randomized response is an
``ε0``-LDP randomizer, so every generic amplification bound must be at least this value.
"""

from __future__ import annotations

from typing import Final

from mpmath import iv, mp

from accounting import validate as v
from accounting.amplification.bound import IV_DPS, AmplificationBound, local_epsilon, user_count
from accounting.certified import Interval, Mpf, float_down, float_up, precision
from accounting.certified import lower as _lo
from accounting.certified import upper as _hi
from accounting.errors import ParameterError

__all__ = ["RR_EXACT_MAX_USERS", "randomized_response_exact"]


_RR_EXACT = (
    "exact: shuffled binary randomized response (report the bit w.p. e^eps0/(e^eps0+1)); the output is "
    "the count of ones; worst case over the other users' bits"
)

#: Largest ``n`` for the worst case over all configurations of the other users (cost ``O(n^3)``).
RR_EXACT_MAX_USERS: Final = 64


def _binomial_pmf(trials: int, prob: Interval) -> list[Interval]:
    """``Bin(trials, prob)`` pmf in interval arithmetic (by the ratio recurrence)."""
    q = 1 - prob
    out = [q**trials]
    for i in range(trials):
        out.append(out[-1] * (trials - i) / (i + 1) * prob / q)
    return out


def _rr_epsilon(ones: int, n: int, r: Interval, dl: Interval) -> tuple[Mpf, Mpf]:
    """Enclosure of the exact ε(δ) of the shuffled count for one configuration of the others."""
    a = _binomial_pmf(ones, 1 - r)  # the others with bit 1 report 1 w.p. 1 - r
    b = _binomial_pmf(n - 1 - ones, r)
    others = [iv.mpf(0)] * n
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            others[i + j] += x * y
    zero = iv.mpf(0)
    pk = [(1 - r) * (others[k - 1] if k else zero) + r * (others[k] if k < n else zero) for k in range(n + 1)]
    qk = [r * (others[k - 1] if k else zero) + (1 - r) * (others[k] if k < n else zero) for k in range(n + 1)]
    best_lo, best_hi = mp.zero, mp.zero
    # The likelihood ratio P/Q is increasing in the count (the others' count is log-concave), so
    # the optimal sets are suffixes for D(P||Q) and prefixes for D(Q||P):
    # ε(δ) = max_S ln((P(S) - δ)/Q(S)).
    for first, second in ((pk, qk), (qk[::-1], pk[::-1])):
        s1, s2 = iv.mpf(0), iv.mpf(0)
        for x, y in zip(first[::-1], second[::-1], strict=True):
            s1 += x
            s2 += y
            num = s1 - dl
            if _hi(num) <= 0:
                continue
            if _lo(num) > 0:
                val = iv.log(num / s2)
                best_lo = max(best_lo, _lo(val))
                best_hi = max(best_hi, _hi(val))
            else:
                best_hi = max(best_hi, _hi(iv.log(iv.mpf(_hi(num)) / s2)))
    return best_lo, best_hi


def randomized_response_exact(
    epsilon0: float, users: int, delta: float, *, ones: int | None = None
) -> AmplificationBound:
    """The exact ε of shuffling ``n`` binary randomized responses: the ground truth.

    Each user reports its bit with probability ``e^ε0/(e^ε0+1)`` and the flipped bit otherwise
    (an ``ε0``-LDP randomizer); the shuffled output is equivalent to the count of ones. For
    neighbours differing in one user's bit, with ``ones`` of the other ``n - 1`` bits equal to 1,
    the count is ``Bin(ones, 1-r) + Bin(n-1-ones, r) + Bern(·)``, ``r = 1/(e^ε0+1)``; its exact
    ``ε(δ) = max_S ln((P(S) - δ)/Q(S))`` (both directions) is computed in interval arithmetic.
    With ``ones=None`` the worst case over every configuration is taken (``n <= 64``).

    Since randomized response is an ``ε0``-LDP randomizer, every *generic* amplification bound
    (FMT, blanket, EFMRTT) must be at least this value: it is the floor any such analysis has.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 ∈ (0, 100]``.
    users : int
        ``n >= 1`` (at most 64 when ``ones`` is None).
    delta : float
        ``δ ∈ (0, 1)``.
    ones : int, optional
        How many of the other ``n - 1`` users hold a 1 (``0 <= ones < n``); default: the worst case.

    Returns
    -------
    AmplificationBound
        ``epsilon`` the upper end of the exact value's enclosure (rounded up), ``lower`` its
        lower end (rounded down).
    """
    e0 = local_epsilon(epsilon0)
    n = user_count(users)
    dl = v.open_unit("delta", delta)
    if ones is None:
        if n > RR_EXACT_MAX_USERS:
            raise ParameterError(
                "users", users, f"an integer in [1, {RR_EXACT_MAX_USERS}] for the worst case (or pass ones=)"
            )
        configs = list(range(n))
    else:
        o = v.integer("ones", ones, minimum=0)
        if o > n - 1:
            raise ParameterError("ones", ones, f"an integer in [0, users - 1] = [0, {n - 1}]")
        if min(o, n - 1 - o) * n > 10**6:
            raise ParameterError("ones", ones, "a configuration with min(ones, users-1-ones) * users <= 1e6")
        configs = [o]
    with precision(IV_DPS):
        r = 1 / (iv.exp(iv.mpf(e0)) + 1)
        d = iv.mpf(dl)
        lo, hi = mp.zero, mp.zero
        for o in configs:
            a, b = _rr_epsilon(o, n, r, d)
            lo, hi = max(lo, a), max(hi, b)
        cond = "worst case over all configurations" if ones is None else f"{configs[0]} of the others hold 1"
        return AmplificationBound(float_up(hi), dl, "rr-exact", _RR_EXACT, float_down(lo), True, cond)
