"""Feldman, McMillan & Talwar 2021, "Hiding among the clones": the numerical bound, certified.

Part of :mod:`accounting.amplification` (its conventions apply). :func:`fmt_delta` encloses the
exact ``δ(ε)`` of the clone reduction and :func:`fmt_numerical` solves it for ε; the derivation and
the error analysis of the fast certified evaluation are in the comment below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from mpmath import iv, mp
from numpy.typing import NDArray

from accounting import validate as v
from accounting.amplification.bound import IV_DPS, AmplificationBound, local_epsilon, user_count
from accounting.certified import Enclosure, Interval, float_down, float_up, precision
from accounting.certified import lower as _lo
from accounting.certified import upper as _hi
from accounting.errors import ParameterError, UnsupportedError
from accounting.noise import ln_factorial
from accounting.search import smallest

__all__ = ["MAX_USERS", "MIN_DELTA", "MIN_EPSILON0", "fmt_delta", "fmt_numerical"]

MAX_USERS: Final = 10**9
"""Largest ``n`` the numerical bound accepts: its window of clone counts grows like ``sqrt(n)``,
and every integer it handles must stay exact in binary64 (``< 2^53``)."""

MIN_DELTA: Final = 1e-100
"""Smallest δ the numerical bound accepts: below it the binary64 fast path could underflow."""

MIN_EPSILON0: Final = 1e-12
"""Smallest ε0 the numerical bound accepts: its interval arithmetic works at a fixed precision and
stops finishing near 1e-17 (a smaller ε0 is amplified to at most ε0 itself)."""

# --------------------------------------------------------------------------------------------
# Feldman, McMillan & Talwar 2021: the numerical bound, certified
# --------------------------------------------------------------------------------------------
#
# The clone reduction (FMT 2021 §3, the pair behind Theorem 3.1): each of the other n - 1 reports
# is, with probability p = e^-ε0, a "clone" — distributed as user 1's report on x1 or on x1',
# with probability 1/2 each. With C ~ Bin(n-1, p) clones, A ~ Bin(C, 1/2) of them of the first
# kind and Δ ~ Bern(e^ε0/(e^ε0+1)), the shuffled output on the two datasets is a post-processing of
#     P = (A + Δ, C - A + 1 - Δ)    and    Q = (A + 1 - Δ, C - A + Δ),
# so the shuffled mechanism is (ε, δ(ε))-DP with δ(ε) the hockey-stick divergence of P and Q
# (symmetric in the two directions). Given C = c the first coordinate K determines the pair, and
#     P(k) - e^ε Q(k) = κ B_c(k-1) (k - k*_c)/k,     B_c = Bin(c, 1/2) pmf,
# with θ = (1 + tanh(ε/2)/tanh(ε0/2))/2, k*_c = (c+1)θ and κ = tanh(ε0/2)(1 + e^ε), derived here.
# Summing the positive terms k > k*_c, with T_c = floor(k*_c), V_c = P(Bin(c, 1/2) > T_c),
# φ = 1 - θ and τ = 2θ - 1 (φ keeps its relative precision as ε -> ε0, where θ -> 1),
#     δ_c = κ [φ B_c(T_c) - τ V_c],      δ(ε) = Σ_c Bin(n-1, p)(c) δ_c.
# (Any integer T and any θ' >= θ in the same formula give a value <= δ_c: negative terms are
# added or positive ones dropped or shrunk.) δ_c is non-increasing in c: P_{c+1}, Q_{c+1} are
# P_c, Q_c with an independent fair coin added to K, a common post-processing.
#
# Evaluating this fast and certified:
# - The clone counts c are cut to a window whose left-out Bin(n-1, p) mass is bounded by
#   Chernoff's bound in interval arithmetic (each left-out δ_c <= δ_0 = (e^ε0 - e^ε)/(e^ε0 + 1)).
# - The window is cut into chunks (_rows_per_chunk). At each chunk's last row m the pmf
#   Bin(n-1, p)(m) and B_m(T_m) are certified anchors (log-factorials by Stirling's series with
#   its remainder bound, in mpmath.iv: accounting.noise.ln_factorial) and V_m/B_m(T_m) is summed
#   in binary64 with a geometric tail bound; every other row follows downwards by exact
#   recurrences (T_{c+1} - T_c ∈ {0, 1})
#       w_{c+1}/w_c = (n-1-c)/(c+1) · p/(1-p),
#       B_{c+1}(T)/B_c(T) = (c+1)/(2(c+1-T)),   B_c(T+1)/B_c(T) = (c-T)/(T+1),
#       V_{c+1} = V_c + B_c(T_c)/2  (T unchanged),   V_{c+1} = V_c - B_c(T_c + 1)/2  (T up by one).
#   These use only +, -, ×, ÷ of binary64 numbers, each correctly rounded (IEEE 754), so a
#   rigorous relative error γ_k = 1.01 k u (u = 2^-53, k roundings) is carried along every
#   quantity and added outward at the end. Going down, B_c(T_c) and V_c grow, so the carried
#   absolute errors shrink relative to them.
# - The upper bound uses φ_hi >= φ (θ_lo = 1 - φ_hi), τ rounded down and κ_hi: the sum
#   Σ_k B(k-1)(k - (c+1)θ_lo)_+/k can only be larger; the lower bound uses φ_lo, τ rounded up,
#   κ_lo. The floors T = c + 1 - ceil((c+1)φ) are exact.
# The search for ε runs on the same recurrences with uncertified anchors (mpmath's log-gamma), by
# regula falsi on ln δ; then the answer is certified: δ_hi(ε_up) <= δ at the returned ε_up and
# δ_lo(ε_lo) > δ at ε_lo. Both δ bounds are about 1e-10 apart (relative), the ε ends 2e-11.

_U: Final = 2.0**-53
_ROW_TOL: Final = 1e-30
_FMT_NUMERICAL = (
    "Feldman, McMillan & Talwar 2021 (FOCS), 'Hiding among the clones': the numerical bound — "
    "the exact hockey-stick divergence of the clone reduction (C ~ Bin(n-1, e^-eps0), A ~ Bin(C, 1/2), "
    "Delta ~ Bern(e^eps0/(e^eps0+1))), certified, solved for eps"
)

IntArray = NDArray[np.int64]


def _g(k: float) -> float:
    """A rigorous bound on ``(1+u)^k - 1`` for ``k`` correctly rounded operations (k u < 0.01)."""
    return 1.01 * k * _U


@dataclass(frozen=True)
class _Params:
    """The constants of the reduction at one ``(ε0, n, ε)``, as floats with certified ends.

    ``φ = 1 - θ`` and ``τ = 2θ - 1 = 1 - 2φ`` are carried instead of ``θ``: ``φ`` keeps full
    relative precision as ε approaches ε0 (where θ would round to 1).
    """

    n: int
    phi: float  # φ_hi for the upper side (θ_lo = 1 - φ_hi), φ_lo for the lower side
    tau: float  # 1 - 2φ, rounded down for the upper side and up for the lower side
    kappa: Interval  # iv enclosure of κ = tanh(ε0/2)(1 + e^ε)
    delta0: Interval  # iv enclosure of δ_0 = (e^ε0 - e^ε)/(e^ε0 + 1), the largest δ_c
    rho: float  # p/(1-p) = 1/(e^ε0 - 1)
    inv_rho: float  # e^ε0 - 1
    rho_err: float  # relative error bound of rho and inv_rho
    log_p: Interval  # ln p = -ε0
    log_q: Interval  # ln(1 - p)


def _params(n: int, e0: float, eps: float, side: int) -> _Params:
    """Constants for one side: ``+1`` upper bound, ``-1`` lower bound, ``0`` plain estimate."""
    with precision(IV_DPS):
        E0, E = iv.mpf(e0), iv.mpf(eps)
        x0, x = iv.exp(E0), iv.exp(E)
        # φ = (1 - tanh(ε/2)/tanh(ε0/2))/2 = sinh((ε0-ε)/2) / (2 sinh(ε0/2) cosh(ε/2)): no cancellation
        h = (E0 - E) / 2
        sinh_h = (iv.exp(h) - iv.exp(-h)) / 2
        sinh_0 = (iv.exp(E0 / 2) - iv.exp(-E0 / 2)) / 2
        cosh_e = (iv.exp(E / 2) + iv.exp(-E / 2)) / 2
        phi = sinh_h / (2 * sinh_0 * cosh_e)
        kappa = (x0 - 1) / (x0 + 1) * (1 + x)
        delta0 = (x0 - x) / (x0 + 1)
        rho = 1 / (x0 - 1)
        log_q = iv.log(1 - iv.exp(-E0))
        if side > 0:
            ph = min(float_up(_hi(phi)), 0.5)
            tau = float_down(1 - 2 * mp.mpf(ph))
        elif side < 0:
            ph = max(float_down(_lo(phi)), 0.0)
            tau = float_up(1 - 2 * mp.mpf(ph))
        else:
            ph = float(mp.mpf(phi.mid))
            tau = 1 - 2 * ph
        rho_hat = float(mp.mpf(rho.mid))
        inv_hat = float(mp.mpf((1 / rho).mid))
        err = max(
            float(abs(mp.mpf(rho_hat) - _hi(rho)) / _lo(rho)),
            float(abs(mp.mpf(rho_hat) - _lo(rho)) / _lo(rho)),
            float(abs(mp.mpf(inv_hat) - _hi(1 / rho)) / _lo(1 / rho)),
            float(abs(mp.mpf(inv_hat) - _lo(1 / rho)) / _lo(1 / rho)),
        )
    return _Params(n, ph, tau, kappa, delta0, rho_hat, inv_hat, 2 * err + 2 * _U, -E0, log_q)


def _floors(c: IntArray, phi: float) -> IntArray:
    """``T_c = floor((c+1)(1-φ)) = c + 1 - ceil((c+1)φ)`` exactly, for a float ``φ``.

    The float product ``(c+1)φ`` is within ``u (c+1)φ`` of the exact one, so only products
    near an integer can be misplaced; those are redone in integer arithmetic.
    """
    prod = (c + 1).astype(np.float64) * phi
    up = np.ceil(prod).astype(np.int64)
    frac = up - prod
    doubtful = np.nonzero((frac < 1e-6) | (frac > 1 - 1e-6))[0]
    if doubtful.size:
        num, den = phi.as_integer_ratio()
        for i in doubtful:
            up[i] = -((-(int(c[i]) + 1) * num) // den)
    return c + 1 - up


def _log_anchors(par: _Params, m: int, t: int, certified: bool) -> tuple[Any, Any]:
    """``ln Bin(n-1, p)(m)`` and ``ln B_m(t)``: intervals when ``certified``, else floats."""
    N = par.n - 1
    if not certified:  # an estimate: mpmath's log-gamma at 30 digits, not certified
        with mp.workdps(IV_DPS):
            lf = mp.loggamma
            lw = lf(N + 1) - lf(m + 1) - lf(N - m + 1)
            lw += m * mp.mpf(par.log_p.mid) + (N - m) * mp.mpf(par.log_q.mid)
            lb = lf(m + 1) - lf(t + 1) - lf(m - t + 1) - m * mp.log(2)
            return float(lw), float(lb)
    with precision(IV_DPS):
        lw = ln_factorial(N) - ln_factorial(m) - ln_factorial(N - m) + m * par.log_p
        if N - m:
            lw += (N - m) * par.log_q
        lb = ln_factorial(m) - ln_factorial(t) - ln_factorial(m - t) - m * iv.log(2)
    return lw, lb


def _row_sum(m: int, t: int) -> tuple[float, float]:
    """``σ = S_m(t+1)/B_m(t) = Σ_{j>t} B_m(j)/B_m(t)`` as ``(σ̂, e)`` with ``|σ - σ̂| <= e``.

    Terms by the ratio ``(m-j)/(j+1)``; the ratios decrease in ``j``, so once one is below 1 the
    rest of the row is at most a geometric series.
    """
    length = 64
    while True:
        i = np.arange(length + 1, dtype=np.int64)
        ratios = np.maximum(m - t - i, 0).astype(np.float64) / (t + 1 + i).astype(np.float64)
        terms = np.cumprod(ratios)  # terms[i] = B_m(t+1+i)/B_m(t), 2(i+1) roundings
        head = float(np.sum(terms[:length]))
        last, r = float(terms[length]), float(ratios[length])
        if last == 0.0:
            tail = 0.0
        elif r + 4 * _U < 1:
            tail = last / (1 - (r + 4 * _U)) * (1 + _g(2 * length + 8))
        else:
            tail = math.inf
        if tail <= _ROW_TOL * max(head, 1.0) or length > 4 * (m + 2):
            break
        length *= 2
    if math.isinf(tail):  # pragma: no cover - the row always ends or decays before 4(m+2) terms
        raise UnsupportedError("internal: a binomial row did not decay")
    # the true σ lies in [head (1 - g), head (1 + g) + tail]
    return head + tail / 2, head * _g(3 * length + 8) + tail / 2


def _chunk(par: _Params, lo: int, hi: int, side: int) -> Any:
    """``Σ_{c=lo..hi} w_c δ_c / κ`` over one chunk of clone counts.

    ``side`` is ``+1`` for a certified upper bound, ``-1`` for a certified lower bound (both
    returned as :mod:`mpmath.iv` intervals whose relevant end is the bound), ``0`` for the natural
    log of a plain float estimate. Per row, with ``V_c = S_c(T_c + 1)`` the tail past ``T_c``,

        δ_c/κ = θ B_c(T_c) - (2θ - 1) S_c(T_c) = φ B_c(T_c) - τ V_c.

    The anchors are at the chunk's *last* row and the recurrences run downwards, where ``B_c(T_c)``
    and ``V_c`` grow, so the carried absolute errors shrink relative to the values.
    """
    c = np.arange(lo, hi + 1, dtype=np.int64)
    t = _floors(c, par.phi)
    m, tm = hi, int(t[-1])
    phi, tau = par.phi, par.tau
    n1 = par.n - 1
    cc = c[:-1].astype(np.float64)
    tc = t[:-1].astype(np.float64)
    step = np.diff(t)  # T_{c+1} - T_c, 0 or 1
    # Row c+1 -> row c: B_c(T_c)/B_{c+1}(T_{c+1}) and w_c/w_{c+1}, one rounding each in the
    # ratio (exact integers below 2^53) plus the error of p/(1-p) for w.
    qb = np.where(step == 0, 2 * (cc + 1 - tc) / (cc + 1), 2 * (tc + 1) / (cc + 1))
    qw = (cc + 1) / (n1 - cc) * par.inv_rho
    b = np.ones(c.size)
    w = np.ones(c.size)
    if c.size > 1:
        b[:-1] = np.cumprod(qb[::-1])[::-1]
        w[:-1] = np.cumprod(qw[::-1])[::-1]
    dist = (m - c).astype(np.float64)
    gb = 1.01 * _U * (2 * dist + 2)  # _g, elementwise
    gw = 1.01 * _U * (3 * dist + 3) + 1.01 * dist * par.rho_err
    # V_c/B_m(T_m): the anchor row's tail, then V_c = V_{c+1} - (increment c -> c+1), which is
    # +B_c(T_c)/2 (T unchanged) or -B_c(T_c + 1)/2 (T up by one).
    sigma, sigma_err = _row_sum(m, tm)
    inc = np.where(step == 0, 0.5 * b[:-1], -0.5 * b[:-1] * ((cc - tc) / (tc + 1)))
    vv = np.full(c.size, sigma)
    v_err = np.full(c.size, sigma_err)
    if c.size > 1:
        part = np.cumsum(inc[::-1])[::-1]  # Σ_{i=c}^{m-1} inc_i
        vv[:-1] = sigma - part
        err_terms = np.abs(inc) * (gb[:-1] + 3 * _U) + _U * np.abs(part)
        v_err[:-1] = sigma_err + 1.01 * np.cumsum(err_terms[::-1])[::-1] + 1.01 * _U * np.abs(vv[:-1])
    if side == 0:  # the natural log of the estimate
        est = float(np.sum(w * np.maximum(phi * b - tau * vv, 0.0)))
        lw, lb = _log_anchors(par, m, tm, certified=False)
        return math.log(est) + lw + lb if est > 0 else -math.inf
    bb = b * (1 + side * gb)
    vb = vv - side * v_err
    ww = w * (1 + side * gw)
    d = phi * bb - tau * vb
    d = np.maximum(d + side * 4 * _U * (phi * bb + tau * np.abs(vb)), 0.0)
    total = float(np.sum(ww * d)) * (1 + side * _g(c.size + 4))
    tiny = np.finfo(np.float64).tiny
    if not (np.all(b >= tiny) and np.all(w >= tiny) and math.isfinite(total)):  # pragma: no cover
        raise UnsupportedError("the numerical bound's binary64 fast path left its range; use a larger delta")
    lw, lb = _log_anchors(par, m, tm, certified=True)
    with precision(IV_DPS):
        return iv.exp(lw + lb) * iv.mpf(total)


def _rows_per_chunk(phi: float, top: int) -> int:
    """Rows per chunk.

    ``B_c(T_c)`` falls by about ``e^{KL(θ || 1/2)}`` per row (``θ = 1 - φ``), so a chunk spans at
    most ``e^250`` of it (far inside binary64). The rounding error carried down a chunk of ``L``
    rows grows like ``L² u / sqrt(c)``, so rows near ``c`` get ``L = 4 sqrt(c)`` (2049 to 8193).
    """
    kl = (1 - phi) * math.log(2 * (1 - phi)) + (phi * math.log(2 * phi) if phi > 0 else 0.0)
    cap = min(8193.0, max(2049.0, 4 * math.sqrt(top + 1)))
    return int(max(16.0, min(cap, 250 / max(kl, 1e-12))))


def _kl_log_tail(N: int, p: Interval, a: int) -> Interval:
    """``-N KL(a/N || p)`` as an interval: ``ln`` of Chernoff's bound on the tail beyond ``a``."""
    x = iv.mpf(a) / N
    out = iv.mpf(0)
    if a > 0:
        out += x * iv.log(x / p)
    if a < N:
        out += (1 - x) * iv.log((1 - x) / (1 - p))
    return -N * out


def _window(n: int, e0: float, budget: float) -> tuple[int, int, Interval]:
    """Clone counts ``[lo, hi]`` and a certified bound on ``P(C ∉ [lo, hi])``, ``C ~ Bin(n-1, e^-ε0)``."""
    N = n - 1
    if N == 0:
        return 0, 0, iv.mpf(0)
    p = math.exp(-e0)
    mean = N * p
    sd = math.sqrt(N * p * (1 - p))
    z = math.sqrt(2 * max(math.log(2 / budget), 1.0)) + 2
    lo = max(0, math.floor(mean - z * sd))
    hi = min(N, math.ceil(mean + z * sd))
    with precision(IV_DPS):
        pp = iv.exp(-iv.mpf(e0))
        while True:
            out = iv.mpf(0)
            if lo > 0:
                out += iv.exp(_kl_log_tail(N, pp, lo - 1))
            if hi < N:
                out += iv.exp(_kl_log_tail(N, pp, hi + 1))
            if _hi(out) <= budget:
                return lo, hi, out
            lo = max(0, lo - math.ceil(sd))
            hi = min(N, hi + math.ceil(sd))


def _delta(n: int, e0: float, eps: float, side: int, budget: float) -> Any:
    """The reduction's ``δ(ε)``: an estimate (``side=0``), or an iv upper/lower bound (``±1``)."""
    if eps >= e0:
        return iv.mpf(0) if side else -math.inf
    par = _params(n, e0, eps, side)
    lo, hi, outside = _window(n, e0, budget)
    rows = _rows_per_chunk(par.phi, hi)
    pieces = [_chunk(par, s, min(s + rows - 1, hi), side) for s in range(lo, hi + 1, rows)]
    if side == 0:  # ln δ: log-sum-exp of the chunks' logs, plus ln κ
        top = max(pieces)
        if math.isinf(top):
            return -math.inf
        return top + math.log(sum(math.exp(x - top) for x in pieces)) + float(iv.log(par.kappa).mid)
    with precision(IV_DPS):
        total = iv.mpf(0)
        for piece in pieces:
            total += piece
        if side > 0:
            return iv.mpf(_hi(par.kappa * total + outside * par.delta0))
        return iv.mpf(max(mp.zero, _lo(par.kappa * total)))


def fmt_delta(epsilon0: float, users: int, epsilon: float) -> Enclosure:
    """``δ(ε)`` of Feldman–McMillan–Talwar's clone reduction, as a certified enclosure.

    The hockey-stick divergence ``D_{e^ε}(P || Q)`` of the pair ``P, Q`` of the clone reduction
    (see the module source for the derivation and the certified evaluation). Shuffling ``n``
    ``ε0``-LDP reports is ``(ε, δ)``-DP for every ``δ >= δ(ε)``.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 ∈ (0, 100]``.
    users : int
        ``n ∈ [1, 1e9]``.
    epsilon : float
        ``ε >= 0``.

    Returns
    -------
    Enclosure
        ``[lo, hi]`` containing the exact ``δ(ε)``; ``float()`` is ``hi`` rounded up.
    """
    e0 = local_epsilon(epsilon0)
    n = _numerical_users(users)
    eps = v.nonnegative("epsilon", epsilon)
    if eps >= e0:
        return Enclosure.exact(0)
    estimate = math.exp(_delta(n, e0, eps, 0, 1e-30))
    budget = max(1e-14 * estimate, 1e-300)
    hi = _delta(n, e0, eps, +1, budget)
    lo = _delta(n, e0, eps, -1, budget)
    return Enclosure(min(_lo(lo), _hi(hi)), _hi(hi))


def _numerical_users(value: object) -> int:
    n = user_count(value)
    if n > MAX_USERS:
        raise ParameterError("users", value, f"an integer in [1, {MAX_USERS}] for the numerical bound")
    return n


def fmt_numerical(epsilon0: float, users: int, delta: float, *, lower: bool = True) -> AmplificationBound:
    """Feldman–McMillan–Talwar 2021, the numerical bound, certified.

    The smallest ε whose reduction δ (:func:`fmt_delta`) is at most the target, located by regula
    falsi on a fast estimate of ``ln δ(ε)`` and then *certified*: the returned ``epsilon``
    satisfies ``δ_hi(epsilon) <= δ`` with ``δ_hi`` a rigorous upper bound of the reduction's δ,
    and ``lower`` (if asked) satisfies ``δ_lo(lower) > δ``, so the analysis's exact ε lies in
    ``[lower, epsilon]``, typically ``2e-11`` (relative) wide: about ten significant digits.
    The reduction's ``δ(ε)`` is non-increasing in ``n`` (the clone count grows stochastically and
    each ``δ_c`` is non-increasing in ``c``), so its exact ε is too; the returned values follow it
    up to that width (the tests check monotonicity in ``n``, ``ε0`` and ``δ``).

    Unlike the public float scripts this has no step size or iteration count to tune: every
    clone count in a window is summed (the left-out mass is bounded by Chernoff's bound), and
    each conditional hockey-stick divergence comes from exact recurrences with rigorous binary64
    error bounds and interval anchors (the derivation and the error analysis are in the comment
    that opens this part of the module's source). The authors' script
    (``computeamplification.py``) brackets each step of clone counts by the divergence at its
    ends; its "upper bound" branch takes ``max(δ_Q(c_hi), δ_Q(c_hi))`` where
    ``max(δ_Q(c_lo), δ_Q(c_hi))`` is meant, so its Q-direction sum is a lower, not an upper,
    bound — harmless only because ``δ_P = δ_Q`` for this pair and the script returns the larger
    of the two. There is no hypothesis to check: valid for every ``ε0`` and ``n``.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 ∈ (0, 100]``.
    users : int
        ``n ∈ [1, 1e9]``.
    delta : float
        ``δ ∈ [1e-100, 1)``.
    lower : bool
        Also certify the lower end (one more evaluation).

    Returns
    -------
    AmplificationBound
        ``epsilon`` the certified upper bound (rounded up), ``lower`` the certified lower end.
    """
    e0 = local_epsilon(epsilon0)
    if e0 < MIN_EPSILON0:
        raise ParameterError(
            "epsilon0",
            epsilon0,
            f"a local ε0 in [{MIN_EPSILON0:g}, 100] for the numerical bound (its interval arithmetic "
            "works at a fixed precision, and stops finishing near 1e-17; a smaller ε0 is amplified to "
            "at most ε0 itself: use fmt-closed or blanket)",
        )
    n = _numerical_users(users)
    dl = v.open_unit("delta", delta)
    if dl < MIN_DELTA:
        raise ParameterError("delta", delta, f"a real number in [{MIN_DELTA:g}, 1) for the numerical bound")
    want_lower = bool(lower)
    budget = 1e-14 * dl  # the Chernoff-bounded mass left out of the window, times δ_0 <= 1
    log_target = math.log(dl)

    def excess(eps: float) -> float:  # ln δ_estimate(ε) - ln δ, decreasing in ε
        return float(_delta(n, e0, eps, 0, budget)) - log_target

    def upper_ok(eps: float) -> bool:
        return bool(_hi(_delta(n, e0, eps, +1, budget)) <= dl)

    def lower_above(eps: float) -> bool:
        return bool(_lo(_delta(n, e0, eps, -1, budget)) > dl)

    cond = "none: the reduction holds for every ε0-LDP randomizer and every n"
    if upper_ok(0.0):
        return AmplificationBound(0.0, dl, "fmt-numerical", _FMT_NUMERICAL, 0.0, True, cond)
    guess = smallest(excess, 0.0, e0, rtol=1e-14) if excess(0.0) > 0 else 0.0
    # Certify: step away from the estimate until the rigorous bounds decide (the enclosure of δ
    # is about 1e-10 wide and the estimate about as accurate, so the first step usually does);
    # the steps are relative to the estimate, absolute near ε = 0 where the estimate may be 0.
    scale = max(guess, 1e-9 * e0)
    eps_up = e0
    for k in range(40):
        cand = min(e0, guess + 1e-11 * 4**k * scale)
        if upper_ok(cand):
            eps_up = cand
            break
    eps_lo: float | None = None
    if want_lower:
        eps_lo = 0.0
        for k in range(40):
            cand = guess - 1e-11 * 4**k * scale
            if cand <= 0:
                break
            if lower_above(cand):
                eps_lo = cand
                break
    return AmplificationBound(
        float(eps_up),
        dl,
        "fmt-numerical",
        _FMT_NUMERICAL,
        None if eps_lo is None else float(eps_lo),
        True,
        cond,
    )
