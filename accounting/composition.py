"""Composition of privacy guarantees: pure, approximate (basic, advanced, optimal), RDP and zCDP.

* Pure DP: :func:`compose_pure` (ε adds). Approximate DP: :func:`compose_approx` (basic
  composition: ε and δ add), :func:`advanced_composition_drv` (Dwork–Rothblum–Vadhan 2010) and
  :func:`advanced_composition_kov` / :func:`advanced_composition_kov_delta` (the optimal
  homogeneous composition of Kairouz–Oh–Viswanath 2015, computed exactly in interval
  arithmetic).
* RDP: :class:`RdpCurve`, an immutable curve ``α ↦ ε(α)`` (a function of real ``α``, or a table
  over integer orders) that adds for heterogeneous events and scales for repeated ones, and
  converts to ``(ε, δ)`` through :mod:`accounting.conversion`. zCDP: :func:`compose_zcdp`.
* Returning users (Chowdhury & Zhou 2023, Appendix I):
  :func:`returning_users_approx_dp` and :func:`returning_users_rdp`.

Every ε, δ or ρ that is a privacy *loss* is rounded up; a per-event *budget* (what each
event may spend so that a total is met) is rounded down. Exact lattice-PLD composition lives in
:mod:`accounting.pld`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

import mpmath
from mpmath import iv, mp

from accounting import validate as v
from accounting.certified import Interval, Mpf, exact_fraction, float_down, float_up, lower, precision, upper
from accounting.conversion import (
    Conversion,
    optimize_rdp_order,
    optimize_rdp_order_delta,
    pure_to_rdp,
    zcdp_to_dp_cks,
)
from accounting.errors import ParameterError

__all__ = [
    "RdpCurve",
    "advanced_composition_drv",
    "advanced_composition_kov",
    "advanced_composition_kov_delta",
    "compose_approx",
    "compose_pure",
    "compose_rdp",
    "compose_zcdp",
    "drv_epsilon",
    "returning_users_approx_dp",
    "returning_users_rdp",
    "sum_up",
]

_DPS = 50
"""Working precision (decimal digits) of the closed forms in this module."""

_KOV_DPS = (50, 100, 200, 400, 800)
"""Precisions tried in turn by the KOV computation until its enclosure is narrow enough."""

_KOV_RTOL = mp.mpf("1e-30")
"""Relative width of the KOV enclosure at which the precision is no longer raised."""


# --------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------


def _delta(name: str, value: object) -> float:
    """A δ of a guarantee: a real in ``[0, 1]``."""
    x = v.real(name, value)
    if not 0 <= x <= 1:
        raise ParameterError(name, value, "a real number in [0, 1]")
    return x


def _pair(index: int, pair: object) -> tuple[float, float]:
    if not isinstance(pair, tuple | list) or len(pair) != 2:
        raise ParameterError(f"pairs[{index}]", pair, "an (epsilon, delta) pair")
    return (
        v.nonnegative(f"pairs[{index}].epsilon", pair[0]),
        _delta(f"pairs[{index}].delta", pair[1]),
    )


def _fraction(x: object) -> Fraction | None:
    """``x`` (int, float, Fraction or mpf) as an exact Fraction; ``None`` for ``+inf``."""
    # +inf is a value of the sum here (it makes the sum inf), so it is told apart before the
    # kernel's conversion, which refuses every non-finite number.
    if isinstance(x, mpmath.mpf | float) and x == math.inf:
        return None
    if not isinstance(x, int | float | Fraction | mpmath.mpf):
        raise ParameterError("value", x, "an int, float, Fraction or mpf")
    return exact_fraction(x)


def sum_up(values: Iterable[object]) -> float:
    """``Σ values`` summed exactly and rounded up to a float once: the one sum of the ledger.

    An item ``(c, x)`` counts ``c · x``. Items are ints, floats, Fractions or mpfs, each taken
    exactly (an mpf is a binary number: no rounding); ``+inf`` makes the sum ``inf``. Summing
    in fixed-precision arithmetic instead can drop a tiny term (``1 + 1e-300`` at 50 digits is
    1) and then round *down*: every composition in this project (pure ε, ρ, RDP curves, basic
    composition of δ) goes through here.
    """
    total = Fraction(0)
    for item in values:
        c, x = item if isinstance(item, tuple) else (1, item)
        value = _fraction(x)
        if value is None:
            return math.inf
        total += int(c) * value
    try:
        f = float(total)  # correctly rounded to nearest
    except OverflowError:
        return math.inf
    if Fraction(f) < total:
        f = math.nextafter(f, math.inf)
    return f


# --------------------------------------------------------------------------------------------
# Pure and basic composition
# --------------------------------------------------------------------------------------------


def compose_pure(epsilons: Iterable[float]) -> float:
    """``Σ ε_i``: the composition of ``ε_i``-DP mechanisms (pure DP composes additively).

    Dwork, McSherry, Nissim & Smith 2006; Chowdhury & Zhou 2023, Appendix I, Remark 9 (pure DP
    composes linearly in the number of events). Adaptive composition is covered.

    Parameters
    ----------
    epsilons : iterable of float
        The ``ε_i >= 0`` (empty: 0).

    Returns
    -------
    float
        ``Σ ε_i``, rounded up.
    """
    values = [v.nonnegative(f"epsilons[{i}]", e) for i, e in enumerate(epsilons)]
    return sum_up(values)


def compose_approx(pairs: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """``(Σ ε_i, Σ δ_i)``: basic composition of ``(ε_i, δ_i)``-DP mechanisms.

    Dwork, Kenthapadi, McSherry, Mironov & Naor 2006; Dwork & Roth 2014, Theorem 3.16 (holds
    for adaptive composition). δ is capped at 1 (every mechanism is ``(0, 1)``-DP).

    Parameters
    ----------
    pairs : iterable of (float, float)
        ``(ε_i >= 0, δ_i ∈ [0, 1])`` (empty: ``(0, 0)``).

    Returns
    -------
    (float, float)
        ``(ε, δ)``, both rounded up.
    """
    values = [_pair(i, p) for i, p in enumerate(pairs)]
    return sum_up(e for e, _ in values), min(1.0, sum_up(d for _, d in values))


def compose_zcdp(rhos: Iterable[float]) -> float:
    """``Σ ρ_i``: adaptive composition of ``ρ_i``-zCDP mechanisms.

    Bun & Steinke 2016, Lemma 2.3 (used in the proof of Zhou & Chowdhury 2024, Theorem 5.1);
    Chowdhury & Zhou 2023, Appendix I (B-fold composition of ``ε²/2``-CDP is ``Bε²/2``-CDP).

    Parameters
    ----------
    rhos : iterable of float
        The ``ρ_i >= 0`` (empty: 0).

    Returns
    -------
    float
        ``Σ ρ_i``, rounded up.
    """
    values = [v.nonnegative(f"rhos[{i}]", r) for i, r in enumerate(rhos)]
    return sum_up(values)


# --------------------------------------------------------------------------------------------
# Advanced composition
# --------------------------------------------------------------------------------------------


def advanced_composition_drv(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """``(ε', kδ + δ')`` with ``ε' = sqrt(2k ln(1/δ')) ε + k ε (e^ε - 1)``.

    Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Theorem 3.20 (as used by Zhou & Chowdhury 2024,
    Theorems 5.3 and 5.5): the
    ``k``-fold adaptive composition of ``(ε, δ)``-DP mechanisms is ``(ε', kδ + δ')``-DP for every
    ``δ' > 0``. The total δ is capped at 1.

    Parameters
    ----------
    epsilon : float
        Per-mechanism ``ε >= 0``.
    delta : float
        Per-mechanism ``δ ∈ [0, 1]``.
    k : int
        Number of mechanisms, ``k >= 1``.
    delta_prime : float
        The slack ``δ' ∈ (0, 1)``.

    Returns
    -------
    (float, float)
        ``(ε', kδ + δ')``, both rounded up.
    """
    eps = v.nonnegative("epsilon", epsilon)
    dlt = _delta("delta", delta)
    n = v.integer("k", k, minimum=1)
    dp = v.open_unit("delta_prime", delta_prime)
    with mp.workdps(_DPS):
        total_eps = drv_epsilon(mp.mpf(eps), n, -mp.log(mp.mpf(dp)))
        total_delta = min(mp.one, n * mp.mpf(dlt) + mp.mpf(dp))
        return float_up(total_eps), float_up(total_delta)


def drv_epsilon(epsilon: Mpf, k: int, log_inv_delta_prime: Mpf) -> Mpf:
    """``ε sqrt(2k ln(1/δ')) + k ε (e^ε - 1)`` at the working precision: the ε of
    :func:`advanced_composition_drv` (Dwork, Rothblum & Vadhan 2010), for searches that invert it."""
    return epsilon * mp.sqrt(2 * k * log_inv_delta_prime) + k * epsilon * mp.expm1(epsilon)


@dataclass(frozen=True)
class _KovTables:
    """Prefix sums of the two binomial laws of ``k``-fold randomized response (intervals).

    With ``p = e^ε/(1+e^ε)``, ``q = 1 - p``, ``a_l = C(k,l) p^{k-l} q^l`` and
    ``b_l = C(k,l) p^l q^{k-l}`` (``l`` "unfavourable" coordinates under each hypothesis),
    ``A[i] = Σ_{l<i} a_l``, ``B[i] = Σ_{l<i} b_l`` for ``i = 0..k+1``.
    ``one_minus_tail = (1-δ)^k`` and ``head = 1 - (1-δ)^k``.
    """

    a: list[Interval]
    b: list[Interval]
    head: Interval
    one_minus_tail: Interval


def _kov_tables(eps: float, dlt: float, n: int) -> _KovTables:
    e = iv.mpf(eps)
    p = 1 / (1 + iv.exp(-e))
    q = 1 / (1 + iv.exp(e))
    down, up = iv.exp(-e), iv.exp(e)
    a_l, b_l = p**n, q**n
    a, b = [iv.mpf(0)], [iv.mpf(0)]
    for ell in range(n + 1):
        a.append(a[-1] + a_l)
        b.append(b[-1] + b_l)
        a_l = a_l * (n - ell) / (ell + 1) * down
        b_l = b_l * (n - ell) / (ell + 1) * up
    log_keep = n * iv.log1p(-iv.mpf(dlt))
    return _KovTables(a, b, -iv.expm1(log_keep), iv.exp(log_keep))


def _kov_inputs(epsilon: object, delta: object, k: object) -> tuple[float, float, int]:
    eps = v.nonnegative("epsilon", epsilon)
    dlt = _delta("delta", delta)
    if dlt == 1:
        raise ParameterError("delta", delta, "a real number in [0, 1)")
    return eps, dlt, v.integer("k", k, minimum=1)


def advanced_composition_kov(
    epsilon: float, delta: float, k: int, target_delta: float, *, corners_only: bool = False
) -> float:
    """Smallest ``ε_total`` with ``k``-fold ``(ε, δ)``-DP composition ``(ε_total, target_delta)``-DP.

    Kairouz, Oh & Viswanath 2015, "The Composition Theorem for Differential Privacy",
    Theorem 3.3 (optimal homogeneous composition): for every ``i = 0, ..., ⌊k/2⌋`` the
    ``k``-fold adaptive composition of ``(ε, δ)``-DP mechanisms is
    ``((k - 2i)ε, 1 - (1-δ)^k (1 - δ_i))``-DP with::

        δ_i = Σ_{l=0}^{i-1} C(k,l) (e^{(k-l)ε} - e^{(k-2i+l)ε}) / (1 + e^ε)^k,

    and no better guarantee holds for all such mechanisms (it is attained by composing
    randomized response with a δ-probability leak). With ``corners_only=True`` the answer is
    the smallest ``(k - 2i)ε`` of the theorem whose δ is at most ``target_delta``.

    By default (deviation: a consequence of the theorem, derived here) the answer is exact
    between the corners too. The theorem describes the privacy region of the composition as
    that of ``M̃^k``, whose hockey-stick divergence at any ``ε_total`` is
    ``1 - (1-δ)^k (1 - δ_RR(ε_total))`` with ``δ_RR(ε_t) = Σ_l [a_l - e^{ε_t} b_l]_+``
    (``a_l = C(k,l) e^{(k-l)ε}/(1+e^ε)^k``, ``b_l = C(k,l) e^{lε}/(1+e^ε)^k``; ``δ_RR`` at
    ``(k-2i)ε`` is ``δ_i``). As ``a_l/b_l`` decreases in ``l``, ``δ_RR(ε_t) = max_i Σ_{l<i}
    (a_l - e^{ε_t} b_l)``, so ``δ_RR(ε_t) <= t`` iff ``e^{ε_t} >= (A_i - t)/B_i`` for every
    prefix ``i``: the answer is ``ln max(1, max_i (A_i - t)/B_i)`` with
    ``t = 1 - (1 - target_delta)/(1-δ)^k``, no search needed.

    Computed in interval arithmetic, raising the precision until the enclosure of ``ε_total``
    is narrow, and its upper end rounded up: ``O(k)`` operations.

    Parameters
    ----------
    epsilon : float
        Per-mechanism ``ε >= 0``.
    delta : float
        Per-mechanism ``δ ∈ [0, 1)``.
    k : int
        Number of mechanisms, ``k >= 1``.
    target_delta : float
        The total ``δ ∈ (0, 1)``; at least ``1 - (1-δ)^k``, the δ no finite ε can remove.
    corners_only : bool
        Restrict the answer to the ``(k - 2i)ε`` of the theorem as stated.

    Returns
    -------
    float
        ``ε_total ∈ [0, kε]``, rounded up.
    """
    eps, dlt, n = _kov_inputs(epsilon, delta, k)
    target = v.open_unit("target_delta", target_delta)
    result_hi = mp.inf
    for dps in _KOV_DPS:
        with precision(dps):
            tab = _kov_tables(eps, dlt, n)
            t = (iv.mpf(target) - tab.head) / tab.one_minus_tail
            if lower(t) < 0:
                if upper(t) < 0 or dps == _KOV_DPS[-1]:
                    floor = float_up(upper(tab.head))
                    raise ParameterError(
                        "target_delta",
                        target_delta,
                        f"a real number in [{floor!r}, 1): k-fold composition of (ε, δ)-DP is never "
                        "(ε', δ')-DP with δ' below 1 - (1 - δ)^k",
                    )
                continue
            if corners_only:
                t_lo = lower(t)
                best = 0
                for i in range(n // 2 + 1):
                    x = iv.exp(iv.mpf(n - 2 * i) * iv.mpf(eps))
                    if upper(tab.a[i] - x * tab.b[i]) <= t_lo:
                        best = i
                    else:
                        break
                return float_up(upper(iv.mpf(n - 2 * best) * iv.mpf(eps)))
            x_lo, x_hi = mp.one, mp.one
            for i in range(1, n + 2):
                ratio = (tab.a[i] - t) / tab.b[i]
                x_lo, x_hi = max(x_lo, lower(ratio)), max(x_hi, upper(ratio))
            lo, result_hi = lower(iv.log(iv.mpf(x_lo))), upper(iv.log(iv.mpf(x_hi)))
            if result_hi - lo <= _KOV_RTOL * max(result_hi, mp.mpf(10) ** -300):
                return float_up(min(result_hi, upper(iv.mpf(n) * iv.mpf(eps))))
    with precision(_KOV_DPS[-1]):
        return float_up(min(result_hi, upper(iv.mpf(n) * iv.mpf(eps))))


def advanced_composition_kov_delta(epsilon: float, delta: float, k: int, epsilon_total: float) -> float:
    """The exact δ at ``epsilon_total`` of the ``k``-fold composition of ``(ε, δ)``-DP (worst case).

    Kairouz, Oh & Viswanath 2015, Theorem 3.3, as a δ-curve (see
    :func:`advanced_composition_kov`): ``1 - (1-δ)^k (1 - δ_RR(ε_total))`` with
    ``δ_RR(ε_t) = Σ_l [a_l - e^{ε_t} b_l]_+``, the hockey-stick divergence of ``k``-fold
    randomized response. At ``ε_total = (k - 2i)ε`` this is the theorem's
    ``1 - (1-δ)^k (1 - δ_i)``. Interval arithmetic, upper end rounded up.

    Parameters
    ----------
    epsilon : float
        Per-mechanism ``ε >= 0``.
    delta : float
        Per-mechanism ``δ ∈ [0, 1)``.
    k : int
        Number of mechanisms, ``k >= 1``.
    epsilon_total : float
        ``ε_total >= 0``.

    Returns
    -------
    float
        δ, rounded up.
    """
    eps, dlt, n = _kov_inputs(epsilon, delta, k)
    et = v.nonnegative("epsilon_total", epsilon_total)
    for dps in _KOV_DPS:
        with precision(dps):
            tab = _kov_tables(eps, dlt, n)
            x = iv.exp(iv.mpf(et))
            rr_lo, rr_hi = mp.zero, mp.zero
            for i in range(1, n + 2):
                term = tab.a[i] - x * tab.b[i]
                rr_lo, rr_hi = max(rr_lo, lower(term)), max(rr_hi, upper(term))
            total = tab.head + tab.one_minus_tail * iv.mpf([rr_lo, rr_hi])
            hi = upper(total)
            if dps == _KOV_DPS[-1] or hi - lower(total) <= _KOV_RTOL * hi:
                return float_up(min(mp.one, hi))
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# RDP curves
# --------------------------------------------------------------------------------------------

RdpFunction = Callable[[float], float]
"""``α ↦`` an upper bound on the RDP of one event at order ``α`` (float ``>= 0`` or ``inf``)."""


def _rdp_value(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParameterError("rdp_fn", value, "a real number >= 0 (or inf) returned by the RDP function")
    f = float(value)
    if math.isnan(f) or f < 0:
        raise ParameterError("rdp_fn", value, "a real number >= 0 (or inf) returned by the RDP function")
    return f


@dataclass(frozen=True)
class _Term:
    """``count`` copies of one event's RDP curve: a function of ``α`` or a table."""

    count: int
    function: RdpFunction | None
    table: tuple[tuple[int, float], ...]
    integer_only: bool

    def value(self, alpha: float) -> float:
        if self.function is not None:
            return _rdp_value(self.function(int(alpha) if self.integer_only else alpha))
        # Rényi divergence is nondecreasing in α (van Erven & Harremoës 2014, Thm 3), so the
        # bound at the next tabulated order is a bound at α; beyond the table nothing is known.
        orders = [a for a, _ in self.table]
        j = bisect.bisect_left(orders, alpha)
        return self.table[j][1] if j < len(orders) else math.inf

    @property
    def max_order(self) -> float:
        return float(self.table[-1][0]) if self.function is None else math.inf

    def same_curve(self, other: _Term) -> bool:
        return (self.function, self.table, self.integer_only) == (
            other.function,
            other.table,
            other.integer_only,
        )


@dataclass(frozen=True)
class RdpCurve:
    """An RDP curve ``α ↦ ε(α)``: a sum of event curves, each repeated ``count`` times.

    Mironov 2017, Proposition 1 (adaptive sequential composition: RDP at each order adds), the
    numerical accounting Chowdhury & Zhou 2023 recommend (Appendix I, Remark 8): sum the ``ε(α)``
    curves, then apply their Lemma 10.
    Build curves with :meth:`from_function`, :meth:`from_table`, :meth:`from_zcdp` or
    :meth:`from_pure`; combine them with ``+`` (different events) and :meth:`scale` (an event
    repeated ``k`` times); read them with :meth:`at`, :meth:`epsilon` and :meth:`delta`.

    ``integer_only`` is true when any summand is valid only at integer orders (a table, or a
    function built with ``integer_only=True`` such as the Skellam bound of Chowdhury & Zhou 2023,
    Lemma 3); then :meth:`at` accepts only integers and conversions optimise over integer orders.
    """

    terms: tuple[_Term, ...]

    def __post_init__(self) -> None:
        if not self.terms:
            raise ParameterError("terms", self.terms, "at least one event curve")

    # -- constructors ---------------------------------------------------------------------------

    @classmethod
    def from_function(cls, rdp_fn: RdpFunction, *, integer_only: bool = False) -> RdpCurve:
        """One event whose RDP at order ``α`` is at most ``rdp_fn(α)``.

        Parameters
        ----------
        rdp_fn : callable
            ``α ↦`` an upper bound on the RDP (float ``>= 0`` or ``inf``), e.g.
            ``functools.partial(bounds.gaussian_rdp, sigma=2.0)``.
        integer_only : bool
            The bound holds only at integer orders (it is then called with ints).
        """
        if not callable(rdp_fn):
            raise ParameterError("rdp_fn", rdp_fn, "a callable alpha -> rdp")
        return cls((_Term(1, rdp_fn, (), bool(integer_only)),))

    @classmethod
    def from_table(cls, table: Mapping[int, float] | Iterable[tuple[int, float]]) -> RdpCurve:
        """One event with RDP bounds at integer orders ``α >= 2`` (valid only at integer orders).

        Between tabulated orders the bound at the next larger tabulated order is used (Rényi
        divergence is nondecreasing in ``α``); beyond the largest the curve is infinite.
        """
        items = table.items() if isinstance(table, Mapping) else table
        rows: dict[int, float] = {}
        for alpha, value in items:
            a = v.integer("alpha", alpha, minimum=2)
            rows[a] = _rdp_value(value)
        if not rows:
            raise ParameterError("table", table, "at least one (alpha, rdp) row")
        return cls((_Term(1, None, tuple(sorted(rows.items())), True),))

    @classmethod
    def from_zcdp(cls, rho: float) -> RdpCurve:
        """The curve ``αρ`` of a ``ρ``-zCDP event (Bun–Steinke 2016, Def. 1.1)."""
        r = v.nonnegative("rho", rho)
        return cls((_Term(1, _ZcdpCurve(r), (), False),))

    @classmethod
    def from_pure(cls, epsilon: float) -> RdpCurve:
        """The tight RDP curve of an ``ε``-DP event (:func:`accounting.conversion.pure_to_rdp`)."""
        eps = v.nonnegative("epsilon", epsilon)
        return cls((_Term(1, _PureCurve(eps), (), False),))

    # -- algebra --------------------------------------------------------------------------------

    def __add__(self, other: object) -> RdpCurve:
        if not isinstance(other, RdpCurve):
            return NotImplemented
        terms = list(self.terms)
        for t in other.terms:
            for j, s in enumerate(terms):
                if s.same_curve(t):
                    terms[j] = _Term(s.count + t.count, s.function, s.table, s.integer_only)
                    break
            else:
                terms.append(t)
        return RdpCurve(tuple(terms))

    def scale(self, k: int) -> RdpCurve:
        """The ``k``-fold composition of this curve with itself (``k >= 1``)."""
        n = v.integer("k", k, minimum=1)
        return RdpCurve(tuple(_Term(t.count * n, t.function, t.table, t.integer_only) for t in self.terms))

    # -- reading --------------------------------------------------------------------------------

    @property
    def integer_only(self) -> bool:
        """True when some summand holds only at integer orders."""
        return any(t.integer_only for t in self.terms)

    @property
    def max_order(self) -> float:
        """The largest order with a finite bound from every table (``inf`` with no tables)."""
        return min(t.max_order for t in self.terms)

    def at(self, alpha: float) -> float:
        """An upper bound on the composed RDP at order ``α``: ``Σ count · ε_event(α)``, rounded up.

        Parameters
        ----------
        alpha : float
            ``α > 1`` (or ``inf``); an integer when :attr:`integer_only`.
        """
        a = v.order("alpha", alpha, allow_inf=True)
        if self.integer_only and (math.isinf(a) or not a.is_integer()):
            raise ParameterError("alpha", alpha, "an integer >= 2: this curve holds only at integer orders")
        values = [(t.count, t.value(a)) for t in self.terms]
        if any(math.isinf(x) for _, x in values):
            return math.inf
        return sum_up(values)

    def _range(self, alpha_max: float) -> float:
        return min(alpha_max, self.max_order)

    def epsilon(
        self,
        delta: float,
        *,
        alpha_min: float = 1 + 1e-6,
        alpha_max: float = 1e6,
        conversion: Conversion = "cks",
        grid_points: int = 161,
        rtol: float = 1e-14,
    ) -> float:
        """ε at ``δ`` by :func:`accounting.conversion.optimize_rdp_order` (Lemma 10 by default).

        Orders are real unless :attr:`integer_only`; the range is cut at :attr:`max_order`.
        ``grid_points`` and ``rtol`` set how hard the orders are searched (fewer for a costly
        curve: any order is valid, only tightness varies).
        """
        eps, _ = optimize_rdp_order(
            self.at,
            delta,
            alpha_min,
            self._range(alpha_max),
            self.integer_only,
            conversion,
            grid_points,
            rtol,
        )
        return eps

    def delta(
        self,
        epsilon: float,
        *,
        alpha_min: float = 1 + 1e-6,
        alpha_max: float = 1e6,
        grid_points: int = 161,
        rtol: float = 1e-14,
    ) -> float:
        """δ at ``ε`` by :func:`accounting.conversion.optimize_rdp_order_delta` (CKS 2020 Prop. 12)."""
        dlt, _ = optimize_rdp_order_delta(
            self.at, epsilon, alpha_min, self._range(alpha_max), self.integer_only, grid_points, rtol
        )
        return dlt


@dataclass(frozen=True)
class _ZcdpCurve:
    rho: float

    def __call__(self, alpha: float) -> float:
        if self.rho == 0:
            return 0.0
        if math.isinf(alpha):
            return math.inf
        with mp.workdps(_DPS):
            return float_up(mp.mpf(alpha) * mp.mpf(self.rho))


@dataclass(frozen=True)
class _PureCurve:
    epsilon: float

    def __call__(self, alpha: float) -> float:
        return pure_to_rdp(self.epsilon, alpha)


def compose_rdp(curves: Iterable[RdpCurve]) -> RdpCurve:
    """The composition (sum) of RDP curves of heterogeneous events (Mironov 2017, Prop. 1)."""
    items = list(curves)
    if not items:
        raise ParameterError("curves", items, "at least one RdpCurve")
    total = items[0]
    for i, c in enumerate(items):
        if not isinstance(c, RdpCurve):
            raise ParameterError(f"curves[{i}]", c, "an RdpCurve")
        if i:
            total = total + c
    return total


# --------------------------------------------------------------------------------------------
# Returning users (Chowdhury & Zhou 2023, Appendix I)
# --------------------------------------------------------------------------------------------


def returning_users_approx_dp(epsilon: float, delta: float, batches: int) -> tuple[float, float]:
    """Per-batch ``(ε_i, δ_i)`` so that a user in at most ``B`` batches is ``(ε, δ)``-DP overall.

    Chowdhury & Zhou 2023, Appendix I (approximate-DP route, eq. 14), from their Theorem 7
    (advanced composition, Dwork & Roth 2014 Cor. 3.21) with ``δ' = δ/2``::

        ε_i = ε / (2 sqrt(2 B ln(1/δ'))),    δ_i = δ / (2B).

    Theorem 7 is stated for ``ε ∈ (0, 1)``. Deviation: any ``ε > 0`` is accepted, and the
    returned budgets are *checked* with the Dwork–Rothblum–Vadhan bound
    (:func:`advanced_composition_drv`, valid for every ε): a :class:`ParameterError` is raised
    if ``B``-fold composition of ``(ε_i, δ_i)`` with slack ``δ'`` does not give ``(ε, δ)``
    (it always does for ``ε < 1``). The budgets are rounded *down* (a smaller budget means more
    noise, the safe direction).

    Parameters
    ----------
    epsilon : float
        Overall ``ε > 0``.
    delta : float
        Overall ``δ ∈ (0, 1)``.
    batches : int
        ``B >= 1``, the most batches a user may join (Assumption 2).

    Returns
    -------
    (float, float)
        ``(ε_i, δ_i)``, rounded down.
    """
    eps = v.positive("epsilon", epsilon)
    dlt = v.open_unit("delta", delta)
    b = v.integer("batches", batches, minimum=1)
    with mp.workdps(_DPS):
        d_prime = mp.mpf(dlt) / 2
        eps_i = float_down(mp.mpf(eps) / (2 * mp.sqrt(2 * b * -mp.log(d_prime))))
        delta_i = float_down(mp.mpf(dlt) / (2 * b))
    total_eps, total_delta = advanced_composition_drv(eps_i, delta_i, b, dlt / 2)
    if total_eps > eps or total_delta > dlt:
        raise ParameterError(
            "epsilon",
            epsilon,
            f"a target that Theorem 7's split meets (it gives ε = {total_eps!r} here; "
            "use the RDP route for large ε)",
        )
    return eps_i, delta_i


def returning_users_rdp(per_batch_rho: float, batches: int, delta: float) -> float:
    """Overall ε at ``δ`` of a user in at most ``B`` batches, each ``ρ``-zCDP.

    Chowdhury & Zhou 2023, Appendix I (RDP route, eq. 15): ``B``-fold zCDP composition gives ``Bρ``
    (:func:`compose_zcdp`), converted by their Lemma 10 minimised over real α
    (:func:`accounting.conversion.zcdp_to_dp_cks`). The paper's ``O(ε sqrt(B ln(1/δ)))`` is the
    order of this number; here it is computed exactly.

    Parameters
    ----------
    per_batch_rho : float
        Per-batch ``ρ >= 0`` (``ε²/2`` for a batch that is ``(1/2)ε²``-CDP).
    batches : int
        ``B >= 1``.
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    float
        ε, rounded up.
    """
    r = v.nonnegative("per_batch_rho", per_batch_rho)
    b = v.integer("batches", batches, minimum=1)
    dlt = v.open_unit("delta", delta)
    return zcdp_to_dp_cks(sum_up([(b, r)]), dlt)
