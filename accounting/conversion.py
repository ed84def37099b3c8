"""Conversions between privacy notions: RDP, zCDP and pure DP to ``(ε, δ)``-DP and to each other.

RDP → ``(ε, δ)``:

* :func:`rdp_to_dp` — Lemma 10 of Chowdhury & Zhou 2023 (Appendix K), which is
  Canonne–Kamath–Steinke 2020 Prop. 12 / Balle et al. 2020 Thm 21, over given orders;
* :func:`rdp_to_delta` — the same result solved for ``δ`` at a given ``ε``;
* :func:`rdp_to_dp_mironov` — Mironov 2017 Prop. 3 (looser; kept as a named cross-check);
* :func:`optimize_rdp_order` / :func:`optimize_rdp_order_delta` — either conversion minimised
  over *real* orders (or integer orders, for bounds proved only there) of a curve given as a
  function of ``α``.

zCDP → ``(ε, δ)``: :func:`zcdp_to_dp_bun_steinke` (Bun–Steinke 2016 Prop. 1.3),
:func:`zcdp_to_dp_cks` and :func:`zcdp_delta_cks` (Lemma 10 on the curve ``αρ``, minimised
exactly over real ``α``).

Pure DP → zCDP / RDP: :func:`pure_to_zcdp` (Bun–Steinke 2016 Prop. 3.3) and the tight
:func:`pure_to_rdp`.

Conventions as in :mod:`accounting.bounds`: parameters are validated with
:mod:`accounting.validate`, arithmetic is done in :mod:`mpmath` at ``_DPS = 50`` digits or more,
and every ε, δ or ρ is returned as a float rounded *up* (inside the precision context).

A conversion is valid at *every* order ``α``, so an optimiser that misses the exact minimiser
only loses tightness, never validity: the reported value is the objective evaluated (at 50
digits, rounded up) at the order actually found, using the caller's upper bound on the RDP there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Literal

from mpmath import mp

from accounting import validate as v
from accounting.certified import Mpf, float_up
from accounting.errors import ParameterError
from accounting.search import smallest

__all__ = [
    "optimize_rdp_order",
    "optimize_rdp_order_delta",
    "pure_to_rdp",
    "pure_to_zcdp",
    "rdp_to_delta",
    "rdp_to_dp",
    "rdp_to_dp_mironov",
    "zcdp_delta_cks",
    "zcdp_to_dp_bun_steinke",
    "zcdp_to_dp_cks",
]

_DPS = 50
"""Working precision (decimal digits) of every formula in this module."""

Conversion = Literal["cks", "mironov"]
"""Which RDP → ``(ε, δ)`` theorem an optimiser minimises: Lemma 10 (``"cks"``) or Mironov's."""

_GRID_POINTS = 161
"""Orders of the coarse log-spaced grid in ``α - 1`` searched before the refinement."""

_EXHAUSTIVE_INTEGERS = 1024
"""An integer range with at most this many orders is searched exhaustively."""


# --------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------


def _rdp_value(name: str, value: object) -> float:
    """An RDP upper bound: a real ``>= 0`` or ``+inf`` (never NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParameterError(name, value, "a real number >= 0 (or inf)")
    f = float(value)
    if math.isnan(f) or f < 0:
        raise ParameterError(name, value, "a real number >= 0 (or inf)")
    return f


def _curve(curve: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """Validated ``(α, rdp)`` pairs (finite ``α > 1``; ``rdp >= 0`` or ``inf``), at least one."""
    pairs = []
    for alpha, value in curve:
        a = v.order("alpha", alpha, allow_inf=False)
        pairs.append((a, _rdp_value("rdp", value)))
    if not pairs:
        raise ParameterError("curve", [], "at least one (alpha, rdp) pair")
    return pairs


# --------------------------------------------------------------------------------------------
# Objectives (mpmath, at the caller's precision)
# --------------------------------------------------------------------------------------------


def _cks_epsilon(alpha: Mpf, rdp: Mpf, log_inv_delta: Mpf) -> Mpf:
    """Lemma 10: ``ε(α) + ln(1/(αδ))/(α-1) + ln(1 - 1/α)``."""
    return rdp + (log_inv_delta - mp.log(alpha)) / (alpha - 1) + mp.log1p(-1 / alpha)


def _mironov_epsilon(alpha: Mpf, rdp: Mpf, log_inv_delta: Mpf) -> Mpf:
    """Mironov 2017 Prop. 3: ``ε(α) + ln(1/δ)/(α-1)``."""
    return rdp + log_inv_delta / (alpha - 1)


def _cks_log_delta(alpha: Mpf, rdp: Mpf, eps: Mpf) -> Mpf:
    """``ln δ`` of CKS 2020 Prop. 12: ``(α-1)(ε(α) - ε) + (α-1) ln(1 - 1/α) - ln α``."""
    return (alpha - 1) * (rdp - eps + mp.log1p(-1 / alpha)) - mp.log(alpha)


# --------------------------------------------------------------------------------------------
# RDP → (ε, δ) over given orders
# --------------------------------------------------------------------------------------------


def rdp_to_dp(curve: Iterable[tuple[float, float]], delta: float) -> float:
    """``ε' = min_α [ε(α) + ln(1/(α δ))/(α - 1) + ln(1 - 1/α)]`` over the given orders.

    Chowdhury & Zhou 2023, Lemma 10 (Appendix K): a mechanism that is
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


def rdp_to_dp_mironov(curve: Iterable[tuple[float, float]], delta: float) -> float:
    """``ε' = min_α [ε(α) + ln(1/δ)/(α - 1)]`` over the given orders.

    Mironov 2017, "Rényi Differential Privacy", Proposition 3: an ``(α, ε(α))``-RDP mechanism
    is ``(ε(α) + ln(1/δ)/(α-1), δ)``-DP. Lemma 10 (:func:`rdp_to_dp`) improves every term by
    ``ln(1 - 1/α) - ln(α)/(α-1) < 0``, so this is never smaller; it is kept as the classic
    reference.

    Parameters
    ----------
    curve : iterable of (alpha, rdp)
        Orders ``α > 1`` (finite) with an upper bound on the RDP at each (``inf`` allowed).
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    float
        ``ε' >= 0``, rounded up (``inf`` when the RDP is infinite at every order).
    """
    pairs = _curve(curve)
    d = v.open_unit("delta", delta)
    with mp.workdps(_DPS):
        log_inv = -mp.log(mp.mpf(d))
        best = min(
            (_mironov_epsilon(mp.mpf(a), mp.mpf(r), log_inv) for a, r in pairs if not math.isinf(r)),
            default=mp.inf,
        )
        return float_up(max(mp.zero, best))


def rdp_to_delta(curve: Iterable[tuple[float, float]], epsilon: float) -> float:
    """``δ = min_α exp((α-1)(ε(α) - ε)) (1 - 1/α)^α / (α - 1)`` over the given orders.

    Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy",
    Proposition 12 (Balle et al. 2020 Thm 21): an ``(α, ε(α))``-RDP mechanism is
    ``(ε, δ)``-DP with the ``δ`` above, for every ``ε >= 0``. The same expression is often
    written ``exp((α-1)(ε(α) - ε)) (1 - 1/α)^{α-1} / α``; the two are identical, since
    ``(1 - 1/α)^α / (α - 1) = (1 - 1/α)^{α-1} / α``. Solving it for ``ε`` gives exactly the
    ``ε'`` of Lemma 10 (:func:`rdp_to_dp`), so the two functions are inverse to each other at
    a fixed order. Evaluated in log space (no overflow), capped at 1.

    Parameters
    ----------
    curve : iterable of (alpha, rdp)
        Orders ``α > 1`` (finite) with an upper bound on the RDP at each (``inf`` allowed).
    epsilon : float
        ``ε >= 0``.

    Returns
    -------
    float
        ``δ ∈ [0, 1]``, rounded up.
    """
    pairs = _curve(curve)
    eps = v.nonnegative("epsilon", epsilon)
    with mp.workdps(_DPS):
        e = mp.mpf(eps)
        best = min(
            (_cks_log_delta(mp.mpf(a), mp.mpf(r), e) for a, r in pairs if not math.isinf(r)),
            default=mp.inf,
        )
        return float_up(min(mp.one, mp.exp(best)))


# --------------------------------------------------------------------------------------------
# RDP → (ε, δ) optimised over real or integer orders
# --------------------------------------------------------------------------------------------


def _order_range(alpha_min: object, alpha_max: object, integer: bool) -> tuple[float, float]:
    lo = v.order("alpha_min", alpha_min, allow_inf=False)
    hi = v.order("alpha_max", alpha_max, allow_inf=False)
    if not hi > lo:
        raise ParameterError("alpha_max", alpha_max, f"a finite real number > alpha_min = {lo!r}")
    if integer and math.floor(hi) < max(2, math.ceil(lo)):
        raise ParameterError(
            "alpha_max",
            alpha_max,
            f"a real number with an integer >= 2 in [alpha_min, alpha_max] (alpha_min = {lo!r})",
        )
    return lo, hi


def _minimise(
    objective: Callable[[float], Mpf],
    lo: float,
    hi: float,
    integer: bool,
    grid_points: int = _GRID_POINTS,
    rtol: float = 1e-14,
) -> tuple[Mpf, float]:
    """Approximate minimiser of ``objective`` over orders in ``[lo, hi]`` (integers if asked).

    A log-spaced grid in ``α - 1`` locates the basin; golden-section search in ``ln(α - 1)``
    (ternary search over integers) refines it. Every evaluated order is remembered and the best
    one returned, so the result is never worse than the grid's best.
    """
    cache: dict[float, Mpf] = {}

    def f(a: float) -> Mpf:
        if a not in cache:
            cache[a] = objective(a)
        return cache[a]

    if integer:
        first, last = max(2, math.ceil(lo)), math.floor(hi)
        if last - first + 1 <= _EXHAUSTIVE_INTEGERS:
            grid = list(range(first, last + 1))
        else:
            u0, u1 = math.log(first - 1), math.log(last - 1)
            pts = {first, last}
            for j in range(grid_points):
                pts.add(1 + round(math.exp(u0 + (u1 - u0) * j / (grid_points - 1))))
            grid = sorted(p for p in pts if first <= p <= last)
        values = [f(a) for a in grid]
        j = min(range(len(grid)), key=lambda i: values[i])
        a, b = grid[max(j - 1, 0)], grid[min(j + 1, len(grid) - 1)]
        while b - a > 2:  # ternary search on a unimodal basin
            m1, m2 = a + (b - a) // 3, b - (b - a) // 3
            if f(m1) <= f(m2):
                b = m2
            else:
                a = m1
        for n in range(a, b + 1):
            f(n)
    else:
        u0, u1 = math.log(lo - 1), math.log(hi - 1)

        def order(u: float) -> float:
            return min(max(1.0 + math.exp(u), lo), hi)

        us = [u0 + (u1 - u0) * j / (grid_points - 1) for j in range(grid_points)]
        values = [f(order(u)) for u in us]
        j = min(range(len(us)), key=lambda i: values[i])
        a_u, b_u = us[max(j - 1, 0)], us[min(j + 1, len(us) - 1)]
        ratio = (math.sqrt(5) - 1) / 2
        c_u, d_u = b_u - ratio * (b_u - a_u), a_u + ratio * (b_u - a_u)
        fc, fd = f(order(c_u)), f(order(d_u))
        for _ in range(200):
            if b_u - a_u <= rtol * max(1.0, abs(a_u)):
                break
            if fc <= fd:
                b_u, d_u, fd = d_u, c_u, fc
                c_u = b_u - ratio * (b_u - a_u)
                fc = f(order(c_u))
            else:
                a_u, c_u, fc = c_u, d_u, fd
                d_u = a_u + ratio * (b_u - a_u)
                fd = f(order(d_u))
    best_alpha = min(cache, key=lambda a: cache[a])
    return cache[best_alpha], float(best_alpha)


def _rdp_objective(
    rdp_fn: Callable[[float], float], integer: bool, term: Callable[[Mpf, Mpf], Mpf]
) -> Callable[[float], Mpf]:
    """``α ↦ term(α, rdp_fn(α))`` at the working precision; ``inf`` where the RDP is infinite."""

    def objective(a: float) -> Mpf:
        value = _rdp_value("rdp_fn", rdp_fn(int(a) if integer else a))
        if math.isinf(value):
            return mp.inf
        return term(mp.mpf(a), mp.mpf(value))

    return objective


def optimize_rdp_order(
    rdp_fn: Callable[[float], float],
    delta: float,
    alpha_min: float = 1 + 1e-6,
    alpha_max: float = 1e6,
    integer: bool = False,
    conversion: Conversion = "cks",
    grid_points: int = _GRID_POINTS,
    rtol: float = 1e-14,
) -> tuple[float, float]:
    """``(ε, α)``: the RDP → ``(ε, δ)`` conversion minimised over orders ``α ∈ [alpha_min, alpha_max]``.

    By default the objective is Lemma 10 of Chowdhury & Zhou 2023 (Appendix K; CKS 2020
    Prop. 12 / Balle et al. 2020 Thm 21), ``ε(α) + ln(1/(αδ))/(α-1) + ln(1 - 1/α)``; with
    ``conversion="mironov"`` it is Mironov 2017 Prop. 3, ``ε(α) + ln(1/δ)/(α-1)``. Lemma 10
    takes the infimum over *real* ``α``; for a bound proved only at integer orders (the Skellam
    bound, Chowdhury & Zhou 2023, Lemma 3) pass ``integer=True`` and only integers are tried.

    The search is a log-spaced grid in ``α - 1`` followed by golden-section refinement (ternary
    search for integers), each objective evaluated at 50 digits. Any order gives a valid
    guarantee, so a non-unimodal curve can only make the answer less tight, never wrong: the
    value returned is the objective at the returned order, rounded up.

    Parameters
    ----------
    rdp_fn : callable
        ``α ↦`` an upper bound on the RDP at order ``α`` (a float ``>= 0`` or ``inf``), called
        with floats (with ints when ``integer``).
    delta : float
        ``δ ∈ (0, 1)``.
    alpha_min, alpha_max : float
        The range of orders searched, ``1 < alpha_min < alpha_max < inf``.
    integer : bool
        Search integer orders only.
    conversion : {"cks", "mironov"}
        Which theorem to minimise.
    grid_points, rtol : int, float
        Size of the first grid and relative tolerance (in ``ln(α - 1)``) of the refinement: fewer
        points for a costly curve (an exact lattice RDP); any order is valid, only tightness varies.

    Returns
    -------
    (float, float)
        ``ε >= 0`` rounded up, and the order at which it was attained (``(inf, inf)`` when the
        curve is infinite at every order tried).
    """
    d = v.open_unit("delta", delta)
    lo, hi = _order_range(alpha_min, alpha_max, integer)
    if conversion not in ("cks", "mironov"):
        raise ParameterError("conversion", conversion, "'cks' or 'mironov'")
    term_fn = _cks_epsilon if conversion == "cks" else _mironov_epsilon
    with mp.workdps(_DPS):
        log_inv = -mp.log(mp.mpf(d))
        objective = _rdp_objective(rdp_fn, integer, lambda a, r: term_fn(a, r, log_inv))
        value, alpha = _minimise(
            objective, lo, hi, integer, v.integer("grid_points", grid_points, minimum=3), rtol
        )
        if mp.isinf(value):
            return math.inf, math.inf
        return float_up(max(mp.zero, value)), alpha


def optimize_rdp_order_delta(
    rdp_fn: Callable[[float], float],
    epsilon: float,
    alpha_min: float = 1 + 1e-6,
    alpha_max: float = 1e6,
    integer: bool = False,
    grid_points: int = _GRID_POINTS,
    rtol: float = 1e-14,
) -> tuple[float, float]:
    """``(δ, α)``: CKS 2020 Prop. 12 (:func:`rdp_to_delta`) minimised over orders in a range.

    The objective ``ln δ(α) = (α-1)(ε(α) - ε) + (α-1) ln(1 - 1/α) - ln α`` is minimised as in
    :func:`optimize_rdp_order` (grid, then golden-section or integer ternary search).

    Parameters
    ----------
    rdp_fn : callable
        ``α ↦`` an upper bound on the RDP at ``α`` (a float ``>= 0`` or ``inf``).
    epsilon : float
        ``ε >= 0``.
    alpha_min, alpha_max : float
        The range of orders searched, ``1 < alpha_min < alpha_max < inf``.
    integer : bool
        Search integer orders only.

    Returns
    -------
    (float, float)
        ``δ ∈ [0, 1]`` rounded up, and the order at which it was attained (``(1.0, inf)`` when
        the curve is infinite at every order tried).
    """
    eps = v.nonnegative("epsilon", epsilon)
    lo, hi = _order_range(alpha_min, alpha_max, integer)
    with mp.workdps(_DPS):
        e = mp.mpf(eps)
        objective = _rdp_objective(rdp_fn, integer, lambda a, r: _cks_log_delta(a, r, e))
        value, alpha = _minimise(
            objective, lo, hi, integer, v.integer("grid_points", grid_points, minimum=3), rtol
        )
        if mp.isinf(value):
            return 1.0, math.inf
        return float_up(min(mp.one, mp.exp(value))), alpha


# --------------------------------------------------------------------------------------------
# zCDP → (ε, δ)
# --------------------------------------------------------------------------------------------


def _rho(value: object) -> float:
    return v.nonnegative("rho", value)


def zcdp_to_dp_bun_steinke(rho: float, delta: float) -> float:
    """``ε = ρ + 2 sqrt(ρ ln(1/δ))``.

    Bun & Steinke 2016, "Concentrated Differential Privacy: Simplifications, Extensions, and
    Lower Bounds", Proposition 1.3: ``ρ``-zCDP implies ``(ε, δ)``-DP with this ε for every
    ``δ > 0``. :func:`zcdp_to_dp_cks` is never larger.

    Parameters
    ----------
    rho : float
        ``ρ >= 0``.
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    float
        ε, rounded up.
    """
    r = _rho(rho)
    d = v.open_unit("delta", delta)
    with mp.workdps(_DPS):
        rm = mp.mpf(r)
        return float_up(rm + 2 * mp.sqrt(rm * -mp.log(mp.mpf(d))))


def _root_increasing(g: Callable[[Mpf], Mpf], lo: Mpf, hi: Mpf) -> Mpf:
    """The order where an increasing ``g`` crosses 0 (``g(lo) < 0 < g(hi)``), searched in ``ln(α - 1)``.

    :func:`accounting.search.smallest` on the float ``u = ln(α - 1)`` with the excess ``-g``: any
    order gives a valid conversion, so the float resolution of ``u`` only bounds the tightness.
    """

    def order(u: float) -> Mpf:
        return 1 + mp.exp(mp.mpf(u))

    u = smallest(lambda x: float(-g(order(x))), float(mp.log(lo - 1)), float(mp.log(hi - 1)), max_steps=200)
    return order(u)


def _cks_zcdp_order(r: Mpf, log_inv: Mpf) -> Mpf:
    """The order minimising Lemma 10 on ``αρ``: the root of ``ρ(α-1)² = ln(1/δ) - ln α``.

    The derivative of ``ρα + (L - ln α)/(α-1) + ln(1 - 1/α)`` is ``ρ - (L - ln α)/(α-1)²``;
    ``h(α) = ρ(α-1)² - L + ln α`` is strictly increasing from ``-L < 0``, so the root is
    unique and bisection finds it.
    """
    hi = 2 + mp.sqrt(log_inv / r)

    def h(a: Mpf) -> Mpf:
        return r * (a - 1) ** 2 - log_inv + mp.log(a)

    return _root_increasing(h, 1 + mp.mpf(10) ** -30 * min(mp.one, mp.sqrt(log_inv / r)), hi)


def zcdp_to_dp_cks(rho: float, delta: float) -> float:
    """``ε = inf_{α>1} [αρ + ln(1/(αδ))/(α-1) + ln(1 - 1/α)]``: Lemma 10 on the zCDP curve.

    Chowdhury & Zhou 2023, Lemma 10 (its CDP part, with ``ρ = ε²/2``); Canonne, Kamath & Steinke 2020 §2.3
    (their Prop. 12 applied to the curve ``αρ``). The infimum is over real ``α`` and is found
    exactly: the objective is convex with derivative ``ρ - (ln(1/δ) - ln α)/(α-1)²``, whose
    unique root is located by bisection at 50 digits; the objective is then evaluated at that
    order (a valid bound at any order) and rounded up. Never larger than
    :func:`zcdp_to_dp_bun_steinke`.

    Parameters
    ----------
    rho : float
        ``ρ >= 0`` (``0`` gives ``ε = 0``).
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    float
        ε, rounded up.
    """
    r = _rho(rho)
    d = v.open_unit("delta", delta)
    if r == 0:
        return 0.0
    with mp.workdps(_DPS):
        rm = mp.mpf(r)
        log_inv = -mp.log(mp.mpf(d))
        alpha = _cks_zcdp_order(rm, log_inv)
        return float_up(max(mp.zero, _cks_epsilon(alpha, rm * alpha, log_inv)))


def zcdp_delta_cks(rho: float, epsilon: float) -> float:
    """``δ = inf_{α>1} exp((α-1)(αρ - ε)) (1 - 1/α)^α / (α - 1)``.

    Canonne, Kamath & Steinke 2020 §2.3: their Prop. 12 (:func:`rdp_to_delta`) applied to the
    zCDP curve ``αρ``. In log space the objective ``(α-1)(αρ - ε) + α ln(1 - 1/α) - ln(α-1)``
    has derivative ``(2α-1)ρ - ε + ln(1 - 1/α)`` (increasing: the objective is convex), whose
    unique root is found by bisection; the bound at that order is rounded up and capped at 1.
    Inverse to :func:`zcdp_to_dp_cks`.

    Parameters
    ----------
    rho : float
        ``ρ >= 0``.
    epsilon : float
        ``ε >= 0``.

    Returns
    -------
    float
        δ, rounded up.
    """
    r = _rho(rho)
    eps = v.nonnegative("epsilon", epsilon)
    if r == 0:
        return 0.0
    with mp.workdps(_DPS):
        rm, e = mp.mpf(r), mp.mpf(eps)

        def g(a: Mpf) -> Mpf:
            return (2 * a - 1) * rm - e + mp.log1p(-1 / a)

        # g(α) > 0 once (2α-1)ρ >= ε + 1 and ln(1 - 1/α) > -1 (α > 1.582...).
        hi = max(mp.mpf(2), ((e + 1) / rm + 1) / 2 + 1)
        alpha = _root_increasing(g, 1 + mp.mpf(10) ** -40, hi)
        return float_up(min(mp.one, mp.exp(_cks_log_delta(alpha, rm * alpha, e))))


# --------------------------------------------------------------------------------------------
# Pure DP → zCDP / RDP
# --------------------------------------------------------------------------------------------


def pure_to_zcdp(epsilon: float) -> float:
    """``ρ = ε²/2``.

    Bun & Steinke 2016, Proposition 3.3: ``ε``-DP implies ``(ε²/2)``-zCDP (Chowdhury & Zhou 2023,
    Lemma 10, pure-DP part: ``(α, αε²/2)``-RDP for all ``α > 1``). :func:`pure_to_rdp` is tighter at every
    order.

    Parameters
    ----------
    epsilon : float
        ``ε >= 0``.

    Returns
    -------
    float
        ρ, rounded up.
    """
    eps = v.nonnegative("epsilon", epsilon)
    with mp.workdps(_DPS):
        return float_up(mp.mpf(eps) ** 2 / 2)


def pure_to_rdp(epsilon: float, alpha: float) -> float:
    """The exact worst-case RDP of an ``ε``-DP mechanism at order ``α``.

    For ``P = (e^ε, 1)/(1 + e^ε)`` and ``Q`` its reverse (randomized response)::

        D_α(P || Q) = 1/(α-1) ln[(e^{αε} + e^{(1-α)ε}) / (1 + e^ε)]
                    = ε - 1/(α-1) ln[(1 + e^{-ε}) / (1 + e^{-(2α-1)ε})],

    and ``D_∞ = ε``. Derived here: the likelihood ratio ``z`` of an ``ε``-DP pair lies in
    ``[e^{-ε}, e^ε]`` with ``E_Q[z] = 1``; ``z^α`` is convex, so ``E_Q[z^α]`` is largest when
    ``z`` only takes the two end values, which is randomized response. The same statement is
    Theorem 4 of T. Steinke, "Sharp RDP & zCDP from Pure DP" (differentialprivacy.org, 2024).
    It is at most ``min(ε, αε²/2)`` (the latter is Bun–Steinke 2016 Prop. 3.3 / Chowdhury & Zhou
    2023, Lemma 10).

    Computed from the second form with ``ln(1 + r)``, ``r = -e^{-ε} expm1(-2(α-1)ε) /
    (1 + e^{-(2α-1)ε})``, which has no cancellation as ``α → 1``; the remaining subtraction
    from ``ε`` loses about ``log10(1/ε)`` digits, which are added to the working precision.

    Parameters
    ----------
    epsilon : float
        ``ε >= 0``.
    alpha : float
        ``α > 1`` or ``inf``.

    Returns
    -------
    float
        ``D_α``, rounded up.
    """
    eps = v.nonnegative("epsilon", epsilon)
    a = v.order("alpha", alpha, allow_inf=True)
    if eps == 0:
        return 0.0
    if math.isinf(a):
        return eps
    extra = max(0, math.ceil(-math.log10(eps))) + max(0, math.ceil(-math.log10(a - 1)))
    with mp.workdps(_DPS + extra):
        e, am = mp.mpf(eps), mp.mpf(a)
        r = -mp.exp(-e) * mp.expm1(-2 * (am - 1) * e) / (1 + mp.exp(-(2 * am - 1) * e))
        return float_up(max(mp.zero, e - mp.log1p(r) / (am - 1)))
