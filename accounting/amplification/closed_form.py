"""The closed-form amplification bounds: Erlingsson et al. 2019, Feldman, McMillan & Talwar 2021
(Theorem 3.1), and the privacy blanket of Balle, Bell, Gascón & Nissim 2019.

Part of :mod:`accounting.amplification` (its conventions apply).
"""

from __future__ import annotations

from mpmath import mp

from accounting import validate as v
from accounting.amplification.bound import DPS, AmplificationBound, local_epsilon, trivial_bound, user_count
from accounting.certified import Mpf, float_up
from accounting.search import smallest

__all__ = ["blanket_generic", "blanket_randomized_response", "efmrtt", "fmt_closed"]


# --------------------------------------------------------------------------------------------
# Erlingsson et al. 2019
# --------------------------------------------------------------------------------------------

_EFMRTT = (
    "Erlingsson, Feldman, Mironov, Raghunathan, Talwar & Thakurta 2019 (SODA), 'Amplification by "
    "shuffling', the explicit corollary for eps0 < 1/2: eps = 12 eps0 sqrt(ln(1/delta)/n)"
)


def efmrtt(epsilon0: float, users: int, delta: float) -> AmplificationBound:
    """``ε = 12 ε0 sqrt(ln(1/δ)/n)``: Erlingsson et al. 2019.

    Erlingsson, Feldman, Mironov, Raghunathan, Talwar & Thakurta, "Amplification by Shuffling:
    From Local to Central Differential Privacy via Anonymity" (SODA 2019), the explicit corollary
    of their amplification theorem: for ``ε0 < 1/2``, ``n > 1000`` and ``δ < 1/100`` the shuffled
    output is ``(12 ε0 sqrt(ln(1/δ)/n), δ)``-DP. The statement is quoted from memory of the paper
    (it is not among ``papers/``; status [K]); the tests check it against the exact shuffled
    randomized response and against :func:`fmt_numerical`. Outside the hypotheses (or when the
    formula exceeds ``ε0``) the trivial bound is returned with ``valid=False``.

    Parameters
    ----------
    epsilon0 : float
        The local randomizer's pure ``ε0 > 0``.
    users : int
        ``n >= 1``.
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    AmplificationBound
    """
    e0 = local_epsilon(epsilon0)
    n = user_count(users)
    dl = v.open_unit("delta", delta)
    failed = []
    if not e0 < 0.5:
        failed.append(f"ε0 = {e0:g} is not < 1/2")
    if not n > 1000:
        failed.append(f"n = {n} is not > 1000")
    if not dl < 0.01:
        failed.append(f"δ = {dl:g} is not < 1/100")
    if failed:
        return trivial_bound(e0, dl, "efmrtt", _EFMRTT, "; ".join(failed))
    with mp.workdps(DPS):
        eps = 12 * mp.mpf(e0) * mp.sqrt(-mp.log(mp.mpf(dl)) / n)
        value = float_up(eps)
    if value > e0:
        return trivial_bound(e0, dl, "efmrtt", _EFMRTT, f"the formula gives {value:g} > ε0")
    return AmplificationBound(
        value, dl, "efmrtt", _EFMRTT, None, True, "ε0 < 1/2, n > 1000, δ < 1/100: all hold"
    )


# --------------------------------------------------------------------------------------------
# Feldman, McMillan & Talwar 2021: closed form
# --------------------------------------------------------------------------------------------

_FMT_CLOSED = (
    "Feldman, McMillan & Talwar 2021 (FOCS), 'Hiding among the clones', Theorem 3.1: "
    "eps = ln(1 + (e^eps0-1)/(e^eps0+1) (8 sqrt(e^eps0 ln(4/delta)/n) + 8 e^eps0/n))"
)


def fmt_closed(epsilon0: float, users: int, delta: float) -> AmplificationBound:
    """Feldman–McMillan–Talwar 2021, Theorem 3.1 (the closed form).

    For ``ε0 <= ln(n / (16 ln(2/δ)))`` the shuffled output of ``n`` ``ε0``-LDP reports is
    ``(ε, δ)``-DP with::

        ε = ln(1 + (e^ε0 - 1)/(e^ε0 + 1) · (8 sqrt(e^ε0 ln(4/δ)/n) + 8 e^ε0/n)).

    This is the statement as the paper gives it (also as Zhou & Chowdhury 2024, Appendix F, recall
    it, and as their Lemma F.2 generalises it to datasets of ``n > 1`` points). The authors' public script
    (``closedformanalysis``) computes a slightly larger variant,
    ``ln(1 + (1 - e^-ε0)(e^ε' - 1)/(1 + e^(-ε0-ε')))`` with ``e^ε' = 1 + 8 sqrt(...) + 8e^ε0/n``,
    and also asks for ``ln(4/δ)`` in the hypothesis: at ``(ε0, n, δ) = (4, 1e5, 1e-6)`` it gives
    0.5378 where the theorem gives 0.5346. Both are upper bounds on :func:`fmt_numerical`.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 > 0``.
    users : int
        ``n >= 1``.
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    AmplificationBound
        ``valid=False`` (and the trivial ``ε0``) outside the hypothesis.
    """
    e0 = local_epsilon(epsilon0)
    n = user_count(users)
    dl = v.open_unit("delta", delta)
    with mp.workdps(DPS):
        d = mp.mpf(dl)
        limit = mp.log(n / (16 * mp.log(2 / d))) if n > 16 * mp.log(2 / d) else -mp.inf
        holds = mp.mpf(e0) <= limit
        cond = f"ε0 = {e0:g} {'<=' if holds else '>'} ln(n/(16 ln(2/δ))) = {mp.nstr(limit, 6)}"
        if not holds:
            return trivial_bound(e0, dl, "fmt-closed", _FMT_CLOSED, cond)
        ee0 = mp.exp(mp.mpf(e0))
        inner = 8 * mp.sqrt(ee0 * mp.log(4 / d) / n) + 8 * ee0 / n
        eps = mp.log1p((ee0 - 1) / (ee0 + 1) * inner)
        value = float_up(eps)
    return AmplificationBound(value, dl, "fmt-closed", _FMT_CLOSED, None, True, cond)


# --------------------------------------------------------------------------------------------
# Balle, Bell, Gascón & Nissim 2019: the privacy blanket
# --------------------------------------------------------------------------------------------

_BLANKET_GENERIC = (
    "Balle, Bell, Gascon & Nissim 2019 (CRYPTO), 'The privacy blanket of the shuffle model': blanket "
    "decomposition with the generic blanket mass gamma >= e^-eps0 and Hoeffding's bound on the privacy "
    "amplification random variable"
)
_BLANKET_RR = (
    "Balle, Bell, Gascon & Nissim 2019 (CRYPTO), 'The privacy blanket of the shuffle model', Theorem 3.1 "
    "(k-ary randomized response): (eps, delta)-DP for gamma >= max(14 k ln(2/delta)/((n-1) eps^2), "
    "27 k/((n-1) eps)), eps <= 1"
)


def _blanket_log_delta(e0: Mpf, n: int, eps: Mpf) -> Mpf:
    """``ln`` of the blanket–Hoeffding bound on ``δ(ε)`` (see :func:`blanket_generic`)."""
    a = mp.expm1(eps)
    big_b = mp.expm1(e0) * (1 + mp.exp(eps))
    gamma = mp.exp(-e0)
    x = 2 * a**2 / big_b**2
    return 2 * mp.log(big_b) - mp.log(4 * a * gamma * n) + n * mp.log1p(gamma * mp.expm1(-x))


def blanket_generic(epsilon0: float, users: int, delta: float) -> AmplificationBound:
    """Balle et al. 2019, the privacy blanket for a generic ``ε0``-LDP randomizer (Hoeffding).

    Balle, Bell, Gascón & Nissim, "The Privacy Blanket of the Shuffle Model" (CRYPTO 2019). Every
    ``ε0``-LDP randomizer splits as ``R(x) = (1-γ) μ_x + γ ω`` with a common "blanket" ``ω`` of
    mass ``γ = Σ_y min_x R(x)(y) >= e^-ε0``. Conditioning on which of the other ``n-1`` users
    drew from the blanket, their shuffled §5 analysis gives

        δ(ε) <= (1/(γ n)) E[(L_1 + ... + L_M)_+],   M ~ Bin(n, γ),

    with ``L = (R(x)(W) - e^ε R(x')(W))/ω(W)``, ``W ~ ω``, of mean ``1 - e^ε`` and range at most
    ``b = (e^ε0 - 1)(e^ε + 1)`` (since ``R(x)(y)/ω(y) ∈ [γ, γ e^ε0]`` and ``γ <= 1``); Hoeffding's
    inequality then gives, with ``a = e^ε - 1``,

        δ(ε) <= b²/(4 a γ n) · (1 - γ (1 - e^{-2a²/b²}))^n,

    which is decreasing in ``γ``, so ``γ = e^-ε0`` may be used. The derivation is redone here
    (the paper is not among ``papers/``): the authors' public code uses the same formula with the
    wider range ``(e^ε + 1)(e^ε0 - e^-ε0)``, so this is slightly tighter but still proved.
    The smallest float ε with a bound ``<= δ`` is found by bisection (a log-grid locates the first
    crossing; any ε whose bound is ``<= δ`` is a valid guarantee, and the returned one is checked
    at 50 digits). If none below ``ε0`` works, the trivial bound is returned (``valid=False``).

    Parameters
    ----------
    epsilon0 : float
        ``ε0 ∈ (0, 100]``.
    users : int
        ``n >= 1``.
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    AmplificationBound
    """
    e0 = local_epsilon(epsilon0)
    n = user_count(users)
    dl = v.open_unit("delta", delta)
    with mp.workdps(DPS):
        log_target = mp.log(mp.mpf(dl))
        e0m = mp.mpf(e0)

        def ok(eps: float) -> bool:
            return bool(eps > 0 and _blanket_log_delta(e0m, n, mp.mpf(eps)) <= log_target)

        grid = [e0 * 10.0 ** (-12 + 12 * i / 400) for i in range(400)]
        first = next((i for i, x in enumerate(grid) if x < e0 and ok(x)), None)
        if first is None:
            why = "the Hoeffding bound exceeds δ for every ε < ε0"
            return trivial_bound(e0, dl, "blanket", _BLANKET_GENERIC, why)
        eps = smallest(ok, grid[first - 1] if first else 0.0, grid[first])
    cond = "none (any ε0-LDP randomizer)"
    return AmplificationBound(eps, dl, "blanket", _BLANKET_GENERIC, None, True, cond)


def blanket_randomized_response(epsilon0: float, users: int, delta: float, k: int = 2) -> AmplificationBound:
    """Balle et al. 2019, Theorem 3.1: shuffled ``k``-ary randomized response.

    The randomizer keeps its input with probability ``1 - γ`` and otherwise reports a uniform
    value of ``[k]``; it is ``ε0``-LDP for ``γ = k/(e^ε0 + k - 1)``. The theorem (Balle, Bell,
    Gascón & Nissim, CRYPTO 2019) makes the shuffled protocol ``(ε, δ)``-DP for ``ε <= 1`` once
    ``γ >= max(14 k ln(2/δ)/((n-1) ε²), 27 k/((n-1) ε))``; since more blanket noise is a
    post-processing of less, the smallest such ε is

        ε = max(sqrt(14 k ln(2/δ)/((n-1) γ)), 27 k/((n-1) γ)),

    valid when it is ``<= 1``. The constants are quoted from memory of the paper (status [K]) and
    checked in the tests against the exact shuffled randomized response. This bound is for this
    randomizer only, not for a generic ``ε0``-LDP one.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 > 0`` of the randomized response.
    users : int
        ``n >= 2``.
    delta : float
        ``δ ∈ (0, 1)``.
    k : int
        The domain size ``k >= 2`` (2: binary randomized response).

    Returns
    -------
    AmplificationBound
    """
    e0 = local_epsilon(epsilon0)
    n = v.integer("users", users, minimum=2)
    dl = v.open_unit("delta", delta)
    kk = v.integer("k", k, minimum=2)
    with mp.workdps(DPS):
        gamma = kk / (mp.exp(mp.mpf(e0)) + kk - 1)
        eps = max(
            mp.sqrt(14 * kk * mp.log(2 / mp.mpf(dl)) / ((n - 1) * gamma)),
            27 * kk / ((n - 1) * gamma),
        )
        value = float_up(eps)
    cond = f"ε = {value:.6g} {'<=' if eps <= 1 else '>'} 1"
    if not eps <= 1 or value > e0:
        return trivial_bound(e0, dl, "blanket-rr", _BLANKET_RR, cond)
    return AmplificationBound(value, dl, "blanket-rr", _BLANKET_RR, None, True, cond)
