"""Exact divergences of distributions on the integers, as certified enclosures.

For ``P`` and ``Q`` on the integers (typically ``X + Δ`` and ``X``, see
:class:`accounting.noise.Shifted`):

* :func:`hockey_stick` — ``δ(ε) = Σ_x max(0, P(x) - e^ε Q(x))``;
* :func:`epsilon_for_delta` — ``ε(δ) = inf{ε >= 0 : δ(ε) <= δ}``;
* :func:`renyi` — ``D_α(P || Q) = ln(Σ_x P(x)^α Q(x)^{1-α}) / (α - 1)`` for real ``α > 1``,
  and ``D_∞ = sup_x ln(P(x)/Q(x))``.

Every result is an :class:`~accounting.certified.Enclosure` ``[lo, hi]`` computed in
interval arithmetic (:mod:`mpmath.iv`). Infinite sums are cut to a window whose left-out
mass is bounded by the distributions' certified tail bounds:

* for ``δ(ε)`` the left-out terms add at most ``P(outside)`` (each term is ``<= P(x)``);
* for ``ε(δ)`` the upper end solves ``δ_hi(ε) = δ`` for the upper envelope
  ``Σ max(0, P_hi - e^ε Q_lo) + P(outside)``, and is then *checked* in interval
  arithmetic; the lower end uses the lower envelope;
* for Rényi sums, Hölder's inequality bounds the left-out part ``E_Q[1_T (P/Q)^α]`` by
  ``Q(T)^{1-α/β} exp((β-1)(α/β) D_β)``, with an a-priori bound on ``D_β`` at some order
  ``β > α`` (:meth:`~accounting.noise.LatticeNoise.renyi_prior`), or by
  ``Q(T) e^{α D_∞}`` when the privacy loss is bounded.

``ε(δ)`` uses the exact identity ``δ(ε) = max_S [P(S) - e^ε Q(S)]``, so that
``ε(δ) = max_S ln((P(S) - δ)/Q(S))`` over sets ``S``, maximised by the prefixes of the
outputs sorted by privacy loss: no bisection, and any set gives a valid lower bound.
"""

from __future__ import annotations

import math
from fractions import Fraction

from mpmath import iv, mp

from accounting import validate as v
from accounting.certified import (
    Enclosure,
    Interval,
    Mpf,
    exact_fraction,
    lower,
    precision,
    to_interval,
    to_mpf,
    upper,
)
from accounting.errors import UnsupportedError
from accounting.noise import DEFAULT_DPS, TAIL_SUM_SIGMA, DiscreteGaussian, LatticeNoise, Shifted
from accounting.noise.discrete_gaussian import normalizer
from accounting.search import certify_upward

__all__ = [
    "MAX_POINTS",
    "check_size",
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "epsilon_for_delta",
    "hockey_stick",
    "mixture_renyi",
    "pmf_tables",
    "renyi",
    "renyi_sum",
]

#: The largest window (in lattice points) an exact sum may use; beyond it the computation is
#: refused with UnsupportedError rather than exhausting memory (under 1 kB per point).
MAX_POINTS = 2**18


def _shift_pair(p: LatticeNoise, q: LatticeNoise) -> tuple[LatticeNoise, int] | None:
    """``(X, Δ)`` when ``P = X + Δ + c`` and ``Q = X + c``, else ``None``."""
    pb, ps = (p.base, p.shift) if isinstance(p, Shifted) else (p, 0)
    qb, qs = (q.base, q.shift) if isinstance(q, Shifted) else (q, 0)
    if pb == qb:
        return pb, ps - qs
    return None


def check_size(a: int, b: int, what: str) -> None:
    """Refuse a window beyond :data:`MAX_POINTS` (memory), rather than run out of memory."""
    if b - a > MAX_POINTS:
        raise UnsupportedError(
            f"{what} needs {b - a + 1} lattice points (more than {MAX_POINTS}): the noise's tails "
            "are too wide for an exact sum over its window. The Accountant's route='published' "
            "answers from the paper's closed form (AKL 2021 for Skellam, CKS 2020 for the discrete "
            "Gaussian, KLS 2021 for sums of them); a single discrete Gaussian's ε and δ come from "
            "its tails at any σ"
        )


def _contains(outer: tuple[float, float], inner: tuple[float, float]) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def _window(p: LatticeNoise, q: LatticeNoise, mass: Mpf, dps: int) -> tuple[int, int]:
    ap, bp = p.window(mass, dps)
    aq, bq = q.window(mass, dps)
    return min(ap, aq), max(bp, bq)


def _outside(d: LatticeNoise, a: int, b: int, dps: int) -> Mpf:
    """A certified upper bound on ``P(X < a) + P(X > b)`` (rounded up)."""
    with precision(dps):
        return upper(iv.mpf(d.cdf_bound(a - 1, dps)) + iv.mpf(d.sf_bound(b + 1, dps)))


def pmf_tables(p: LatticeNoise, q: LatticeNoise, a: int, b: int, dps: int) -> tuple[list[Interval], ...]:
    """PMF enclosures of ``P`` and ``Q`` on ``a..b``; one table of the base noise for a shift pair."""
    pb, ps = (p.base, p.shift) if isinstance(p, Shifted) else (p, 0)
    qb, qs = (q.base, q.shift) if isinstance(q, Shifted) else (q, 0)
    if pb != qb:
        return p.pmf_intervals(a, b, dps), q.pmf_intervals(a, b, dps)
    lo = a - max(ps, qs)
    table = pb.pmf_intervals(lo, b - min(ps, qs), dps)
    width = b - a + 1
    return table[a - ps - lo : a - ps - lo + width], table[a - qs - lo : a - qs - lo + width]


def hockey_stick(p: LatticeNoise, q: LatticeNoise, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
    """``δ(ε) = Σ_x max(0, P(x) - e^ε Q(x))``, certified.

    Parameters
    ----------
    p, q : LatticeNoise
        The two distributions (for a mechanism, the output on two neighbouring inputs).
    epsilon : float
        ``ε >= 0``.
    dps : int
        Working precision in decimal digits; the enclosure is about that tight.
    """
    eps = v.nonnegative("epsilon", epsilon)
    dps = v.dps("dps", dps)
    mass = mp.mpf(10) ** -(dps + 8)
    while True:
        a, b = _window(p, q, mass, dps)
        check_size(a, b, "the hockey-stick sum")
        tail = _outside(p, a, b, dps)
        ps, qs = pmf_tables(p, q, a, b, dps)
        with precision(dps):
            e = iv.exp(iv.mpf(eps))
            lo_sum = iv.mpf(0)
            hi_sum = iv.mpf(tail)
            for px, qx in zip(ps, qs, strict=True):
                term = px - e * qx
                if lower(term) > 0:
                    lo_sum += iv.mpf(lower(term))
                if upper(term) > 0:
                    hi_sum += iv.mpf(upper(term))
            result = Enclosure(max(mp.zero, lower(lo_sum)), min(mp.one, upper(hi_sum)))
        # The tail is an absolute error: tighten the window until it is negligible relative to δ.
        if result.lo == 0 or tail <= result.lo * mp.mpf(10) ** -(dps + 2) or mass < mp.mpf(10) ** -(8 * dps):
            return result
        mass = result.lo * mp.mpf(10) ** -(dps + 4)


def _prefix_epsilon(
    pairs: list[tuple[Mpf, Mpf]], constant: Mpf, delta: Mpf
) -> tuple[Mpf, list[tuple[Mpf, Mpf]]]:
    """``max(0, max_k ln((A_k + constant - δ)/B_k))`` over prefixes of ``pairs`` sorted by loss.

    ``pairs`` are ``(p, q)`` with ``q > 0``; ``constant`` is mass of ``P`` that counts for
    every ε (infinite loss, or the left-out tail). Returns the value (computed in plain
    ``mpf``; the callers certify it) and the maximising prefix.
    """
    pairs = sorted(pairs, key=lambda pq: pq[0] / pq[1], reverse=True)
    best = mp.zero
    best_k = 0
    a_sum = constant
    b_sum = mp.zero
    for k, (px, qx) in enumerate(pairs, 1):
        a_sum += px
        b_sum += qx
        if a_sum > delta:
            value = mp.log((a_sum - delta) / b_sum)
            if value > best:
                best, best_k = value, k
    return best, pairs[:best_k]


def epsilon_for_delta(p: LatticeNoise, q: LatticeNoise, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
    """``ε(δ) = inf{ε >= 0 : δ(ε) <= δ}``, certified (``inf`` when no ε suffices).

    The upper end is verified: ``hockey_stick``'s upper envelope at the returned ``hi`` is
    checked to be ``<= δ`` in interval arithmetic before it is returned.
    """
    d = v.open_unit("delta", delta)
    dps = v.dps("dps", dps)
    mass = mp.mpf(d) * mp.mpf(10) ** -(dps + 6)
    a, b = _window(p, q, mass, dps)
    check_size(a, b, "ε(δ)")
    tail = _outside(p, a, b, dps)
    ps, qs = pmf_tables(p, q, a, b, dps)
    with precision(dps):
        delta_iv = iv.mpf(d)
        dm = mp.mpf(d)
        # Lower envelope: P_lo against Q_hi; upper envelope: P_hi against Q_lo, plus the tail.
        lo_pairs: list[tuple[Mpf, Mpf]] = []
        lo_inf = mp.zero
        hi_pairs: list[tuple[Mpf, Mpf]] = []
        hi_inf = tail
        for px, qx in zip(ps, qs, strict=True):
            p_lo, p_hi, q_lo, q_hi = lower(px), upper(px), lower(qx), upper(qx)
            if p_lo > 0:
                if q_hi > 0:
                    lo_pairs.append((p_lo, q_hi))
                else:
                    lo_inf += p_lo
            if p_hi > 0:
                if q_lo > 0:
                    hi_pairs.append((p_hi, q_lo))
                else:
                    hi_inf += p_hi
        # Lower end: the best prefix of the lower envelope, re-evaluated in interval arithmetic.
        if lo_inf > dm:
            eps_lo = mp.inf
        else:
            _, chosen = _prefix_epsilon(lo_pairs, lo_inf, dm)
            eps_lo = mp.zero
            if chosen:
                a_iv = iv.mpf(lo_inf) + sum((iv.mpf(x) for x, _ in chosen), iv.mpf(0))
                b_iv = sum((iv.mpf(y) for _, y in chosen), iv.mpf(0))
                if lower(a_iv - delta_iv) > 0:
                    eps_lo = max(mp.zero, lower(iv.log((a_iv - delta_iv) / b_iv)))
        # Upper end: solve on the upper envelope, then verify and nudge upwards if needed.
        if hi_inf > dm:
            return Enclosure(eps_lo, mp.inf)
        candidate, _ = _prefix_epsilon(hi_pairs, hi_inf, dm)

        def certified(epsilon: Mpf) -> bool:
            return bool(upper(_envelope(hi_pairs, hi_inf, epsilon)) <= dm)

        hi = certify_upward(candidate, certified, what="the upper end of ε(δ)")
        return Enclosure(min(eps_lo, hi), hi)


def _envelope(pairs: list[tuple[Mpf, Mpf]], constant: Mpf, epsilon: Mpf) -> Interval:
    """``constant + Σ max(0, p - e^ε q)`` in interval arithmetic."""
    e = iv.exp(iv.mpf(epsilon))
    total = iv.mpf(constant)
    for px, qx in pairs:
        term = iv.mpf(px) - e * iv.mpf(qx)
        if upper(term) > 0:
            total += iv.mpf([max(mp.zero, lower(term)), upper(term)])
    return total


def renyi(p: LatticeNoise, q: LatticeNoise, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
    """The Rényi divergence ``D_α(P || Q)`` for real ``α > 1`` or ``α = inf``, certified.

    Raises
    ------
    UnsupportedError
        When the sum is infinite in extent and no certified tail bound is known for the
        pair (it is known when ``P`` and ``Q`` are shifts of the same noise, or when both
        have finite support).
    """
    a_ord = v.order("alpha", alpha)
    dps = v.dps("dps", dps)
    if not _contains(q.support(), p.support()):
        return Enclosure(mp.inf, mp.inf)
    shift = _shift_pair(p, q)
    if math.isinf(a_ord):
        return _renyi_inf(p, q, shift, dps)
    finite = all(math.isfinite(t) for t in (*p.support(), *q.support()))
    if shift is None and not finite:
        raise UnsupportedError(
            "no certified tail bound for the Rényi divergence of this pair: use shifts of one "
            "noise (accounting.noise.Shifted) or distributions with finite support"
        )
    with precision(dps):
        target = mp.mpf(10) ** -(dps + 6)
        if finite:
            lo_s, hi_s = q.support()
            a, b = int(min(lo_s, p.support()[0])), int(max(hi_s, p.support()[1]))
            holder = None
        else:
            assert shift is not None
            holder = shift[0].renyi_prior(shift[1], a_ord)
            mass = _holder_mass(target, a_ord, holder.beta, holder.bound)
            a, b = q.window(mass, dps)
    return renyi_sum(p, q, a, b, a_ord, None if holder is None else (holder.beta, holder.bound), dps)


def renyi_sum(
    p: LatticeNoise,
    q: LatticeNoise,
    a: int,
    b: int,
    alpha: float,
    holder: tuple[float, Mpf] | None,
    dps: int,
) -> Enclosure:
    """``D_α(P || Q)`` from the certified sum ``Σ_{a<=x<=b} P(x)^α Q(x)^{1-α}`` over a window.

    ``holder = (β, bound)`` with ``D_β(P || Q) <= bound`` adds Hölder's bound on the terms outside
    the window (:func:`_holder_tail`); ``None`` when the window holds the whole support. The one
    window sum of :func:`renyi` and of the subsampled pairs (:mod:`accounting.subsampling`).
    """
    check_size(a, b, f"the Rényi sum at alpha={alpha}")
    ps, qs = pmf_tables(p, q, a, b, dps)
    with precision(dps):
        alpha_iv = iv.mpf(alpha)
        logs: dict[int, Interval] = {}  # P and Q often share entries (a shift pair): log once

        def log(x: Interval) -> Interval:
            key = id(x)
            if key not in logs:
                if lower(x) == 0:
                    raise AssertionError("a PMF enclosure touches zero inside the support")
                logs[key] = iv.log(x)
            return logs[key]

        # At an integer order the terms are p^α / q^(α-1): exact powers, no log or exp.
        whole = int(alpha) if alpha.is_integer() and alpha <= 64 else None
        total = iv.mpf(0)
        for px, qx in zip(ps, qs, strict=True):
            if upper(px) == 0:
                continue
            if upper(qx) == 0:
                return Enclosure(mp.inf, mp.inf)
            if whole is not None:
                total += px**whole / qx ** (whole - 1)
            else:
                total += iv.exp(alpha_iv * log(px) + (1 - alpha_iv) * log(qx))
        if holder is not None:
            outside = _outside(q, a, b, dps)
            total += iv.mpf([0, _holder_tail(outside, alpha, holder[0], holder[1])])
        value = iv.log(total) / (alpha_iv - 1)
        return Enclosure(max(mp.zero, lower(value)), max(mp.zero, upper(value)))


def mixture_renyi(
    p: LatticeNoise,
    q: LatticeNoise,
    noise: LatticeNoise,
    spread: int,
    weight: Fraction,
    alpha: float,
    dps: int,
) -> Enclosure:
    """``D_α(P || Q)`` of two mixtures of shifts of one noise ``X``, by certified window sums.

    ``P = (1-α)X + α(X + a)`` and ``Q = (1-β)X + β(X + b)`` (the sides of a subsampled pair,
    :class:`accounting.subsampling.MixturePair`) with ``spread = a - b >= 1`` and
    ``weight = max(α, β)``; real order ``alpha > 1``. The window is cut where Hölder's inequality
    bounds the left-out part, ``E_Q[1_T (P/Q)^α] <= Q(T)^{1-α/γ} (E_Q[(P/Q)^γ])^{α/γ}``, with the
    a-priori bound of the noise at an order ``γ > α``
    (:meth:`~accounting.noise.LatticeNoise.renyi_prior`) carried to the mixtures by joint
    convexity of ``(P, Q) -> Σ P^γ Q^{1-γ}``: written over common weights, ``P`` and ``Q`` are
    mixtures of pairs ``(X + s, X + t)`` with ``|s - t| <= a - b``, each with
    ``D_γ <= D_γ(X + (a - b) || X)`` (a monotone likelihood ratio), so
    ``E_Q[(P/Q)^γ] <= (1 - w) + w e^{(γ-1) B}`` with ``w = max(α, β)``.
    """
    finite = all(math.isfinite(t) for t in (*p.support(), *q.support()))
    with precision(dps):
        target = mp.mpf(10) ** -(dps + 6)
        holder: tuple[float, Mpf] | None = None
        if finite:
            a = int(min(p.support()[0], q.support()[0]))
            b = int(max(p.support()[1], q.support()[1]))
        else:
            prior = noise.renyi_prior(spread, alpha)
            w = to_mpf(weight)
            if math.isinf(prior.beta):
                bound = prior.bound
            else:
                g = mp.mpf(prior.beta)
                bound = mp.log((1 - w) + w * mp.exp((g - 1) * prior.bound)) / (g - 1)
            bound *= 1 + mp.ldexp(1, -mp.prec + 8)
            holder = (prior.beta, bound)
            mass = _holder_mass(target, alpha, prior.beta, bound)
            ap, bp = p.window(mass, dps)
            aq, bq = q.window(mass, dps)
            a, b = min(ap, aq), max(bp, bq)
    return renyi_sum(p, q, a, b, alpha, holder, dps)


def _holder_tail(q_mass: Mpf, alpha: float, beta: float, bound: Mpf) -> Mpf:
    """Upper bound on ``E_Q[1_T (P/Q)^α]`` given ``Q(T) <= q_mass`` and ``D_β(P||Q) <= bound``."""
    if q_mass == 0:
        return mp.zero
    with mp.workprec(mp.prec):
        if math.isinf(beta):
            value = q_mass * mp.exp(alpha * bound)
        else:
            value = q_mass ** (1 - alpha / mp.mpf(beta)) * mp.exp((beta - 1) * (alpha / mp.mpf(beta)) * bound)
        # Round up generously: this bound is astronomically small next to the sum.
        return value * (1 + mp.ldexp(1, -mp.prec + 8))


def _holder_mass(target: Mpf, alpha: float, beta: float, bound: Mpf) -> Mpf:
    """The ``Q(T)`` at which :func:`_holder_tail` equals ``target``."""
    if math.isinf(beta):
        return target * mp.exp(-alpha * bound)
    exponent = 1 - alpha / mp.mpf(beta)
    return (target * mp.exp(-(beta - 1) * (alpha / mp.mpf(beta)) * bound)) ** (1 / exponent)


def _renyi_inf(
    p: LatticeNoise, q: LatticeNoise, shift: tuple[LatticeNoise, int] | None, dps: int
) -> Enclosure:
    if shift is not None:
        noise, k = shift
        with precision(dps):
            value = noise.max_privacy_loss(k)
            if mp.isinf(value):
                return Enclosure(mp.inf, mp.inf)
            # max_privacy_loss is computed in mpf at the guarded precision: widen by a few ulps.
            slack = abs(value) * mp.ldexp(1, -mp.prec + 8)
            return Enclosure(max(mp.zero, value - slack), value + slack)
    if not all(math.isfinite(t) for t in (*p.support(), *q.support())):
        raise UnsupportedError("D_inf of this pair needs shifts of one noise or finite supports")
    a = int(min(p.support()[0], q.support()[0]))
    b = int(max(p.support()[1], q.support()[1]))
    ps, qs = pmf_tables(p, q, a, b, dps)
    with precision(dps):
        best_lo = mp.ninf
        best_hi = mp.ninf
        for px, qx in zip(ps, qs, strict=True):
            if upper(px) == 0:
                continue
            if upper(qx) == 0:
                return Enclosure(mp.inf, mp.inf)
            loss = iv.log(px) - iv.log(qx)
            best_lo = max(best_lo, lower(loss))
            best_hi = max(best_hi, upper(loss))
        return Enclosure(max(mp.zero, best_lo), max(mp.zero, best_hi))


# ---------------------------------------------------------------------------------------
# The discrete Gaussian by its tails (no window)
# ---------------------------------------------------------------------------------------


def _threshold(noise: DiscreteGaussian, shift: int, epsilon: Fraction) -> int:
    """The least output ``y`` whose loss ``(2yΔ - Δ^2)/(2σ^2)`` under ``(X + Δ, X)`` exceeds ``ε`` (exact)."""
    sigma = Fraction(noise.sigma)
    return math.floor((2 * sigma * sigma * epsilon + shift * shift) / (2 * shift)) + 1


def _dg_delta(noise: DiscreteGaussian, shift: int, epsilon: Fraction) -> Interval:
    """``P(X >= t - Δ) - e^ε P(X >= t)`` at the threshold ``t`` of ``ε`` (current precision)."""
    t = _threshold(noise, shift, epsilon)
    e = iv.exp(iv.mpf(epsilon.numerator) / epsilon.denominator)
    return noise.tail_mass(t - shift) - e * noise.tail_mass(t)


def _dg_walk(noise: DiscreteGaussian, d: int, epsilon: Fraction, tol: Mpf) -> Interval:
    """Theorem 7's sum ``Σ_{x > c} [P(X = x - Δ) - e^ε P(X = x)]`` term by term (current precision).

    With ``w(u) = exp(-u²/(2σ²))`` the summand is ``w(x - Δ)(1 - e^{ε - L(x)})``, ``>= 0`` beyond
    ``c = εσ²/Δ + Δ/2``, where the loss ``L(x) = (2xΔ - Δ²)/(2σ²)`` crosses ε: summed directly, with
    no cancellation of two tails, so a δ of 1e-300 keeps its relative accuracy. The terms are
    bounded by ``w(x - Δ)``, which falls away from ``x = Δ``: the sum is walked outwards from ``Δ``
    (up to ∞, and down to ``c`` if ``c < Δ``), each term by multiplication from the last
    (``w(u+1) = w(u) a_u``, ``a_{u+1} = a_u e^{-1/σ²}``). After distance ``u`` the rest of the walk
    is at most ``w(u+1) / (1 - a_{u+1})`` (consecutive ratios fall, so a geometric series
    dominates); that bound is added to the upper end once it is below ``tol`` of the sum.
    A term whose sign the intervals cannot settle counts in the upper end only.
    """
    sigma = to_interval(noise.sigma)
    s2 = sigma * sigma
    c = iv.mpf(epsilon.numerator) / epsilon.denominator * s2 / d + iv.mpf(d) / 2
    x_first = int(mp.floor(lower(c)))  # at or below c: a term there is <= 0, clipped
    q = iv.exp(-1 / s2)
    shift = iv.exp(-d / s2)  # e^{ε - L(x+1)} = e^{ε - L(x)} · shift
    low, high = iv.mpf(0), iv.mpf(0)  # sums of the terms' lower and upper ends (in intervals)

    def walk(u: int, x: int, step: int, stop: int | None) -> None:
        nonlocal low, high
        w = iv.exp(-(iv.mpf(u) ** 2) / (2 * s2))
        a = iv.exp(-(2 * iv.mpf(u) + 1) / (2 * s2))
        g = iv.exp(-(x - c) * d / s2)  # e^{ε - L(x)}, written around c
        g_step = shift if step > 0 else 1 / shift
        while True:
            term = w * (1 - g)
            low += iv.mpf(max(mp.zero, lower(term)))
            high += iv.mpf(max(mp.zero, upper(term)))
            if stop is not None and u >= stop:
                return
            w, a = w * a, a * q
            remainder = w / (1 - a)
            if upper(remainder) <= tol * upper(high):
                high += remainder
                return
            g, u = g * g_step, u + 1

    x_up = max(x_first, d)
    walk(x_up - d, x_up, 1, None)
    if x_first <= d - 1:
        walk(1, d - 1, -1, d - x_first)
    return iv.mpf([lower(low), upper(high)]) / normalizer(sigma)


def discrete_gaussian_delta(
    noise: DiscreteGaussian, shift: int, epsilon: float, dps: int = DEFAULT_DPS
) -> Enclosure:
    """``δ(ε)`` of the discrete Gaussian mechanism ``(X + Δ, X)``, ``X ~ N_Z(0, σ^2)``, certified.

    Canonne, Kamath & Steinke 2020, Theorem 7: the loss at ``y`` is ``(2yΔ - Δ^2)/(2σ^2)``, affine
    and increasing, so ``δ(ε) = Σ_{y >= t} [P(X = y - Δ) - e^ε P(X = y)] = P(X >= t - Δ) - e^ε P(X >= t)``
    for the least ``t`` with loss above ``ε``. From ``σ >=`` :data:`~accounting.noise.TAIL_SUM_SIGMA`
    on, the two tails are :meth:`DiscreteGaussian.tail_mass` (a few terms of Euler–Maclaurin);
    below, the sum is walked term by term (``O(σ)`` terms, any ``Δ``, relative accuracy at any
    δ). The project's one implementation of the theorem:
    :func:`accounting.bounds.discrete_gaussian_delta_cks` is its upper end as a float, and
    :class:`~accounting.mechanisms.AdditiveNoise` uses it from ``TAIL_SUM_SIGMA`` on (below, its
    window sum is the generic :func:`hockey_stick`, which the tests hold against this one).
    """
    eps = v.nonnegative("epsilon", epsilon)
    d = v.integer("shift", shift, minimum=1)
    dps = v.dps("dps", dps)
    with precision(dps):
        if Fraction(noise.sigma) < TAIL_SUM_SIGMA:
            value = _dg_walk(noise, d, Fraction(eps), mp.mpf(10) ** -(dps + 2))
        else:
            value = _dg_delta(noise, d, Fraction(eps))
        return Enclosure(max(mp.zero, lower(value)), min(mp.one, upper(value)))


def discrete_gaussian_epsilon(
    noise: DiscreteGaussian, shift: int, delta: float, dps: int = DEFAULT_DPS
) -> Enclosure:
    """``ε(δ)`` of ``(X + Δ, X)``, ``X ~ N_Z(0, σ^2)``, from tail masses (CKS 2020 Thm 7; no window).

    ``ε(δ) = max_t ln((P(X >= t - Δ) - δ)/P(X >= t))`` over the threshold sets (the loss is
    monotone, as in :func:`epsilon_for_delta`): the best ``t`` is found by climbing from the
    continuous Gaussian's threshold, its value's lower end is the lower end (any set gives a lower
    bound), and the upper end is checked: :func:`discrete_gaussian_delta`'s upper end at it is at
    most ``δ`` (nudged up until it is).
    """
    from accounting.bounds.gaussian import gaussian_epsilon_analytic

    d = v.open_unit("delta", delta)
    k = v.integer("shift", shift, minimum=1)
    dps = v.dps("dps", dps)
    with precision(dps):
        delta_iv = iv.mpf(d)
        if upper(_dg_delta(noise, k, Fraction(0))) <= d:
            return Enclosure.exact(0)
        guess = gaussian_epsilon_analytic(float(noise.sigma), d, float(k))
        start = _threshold(noise, k, Fraction(guess))

        def value(t: int) -> Interval | None:
            top = noise.tail_mass(t - k) - delta_iv
            return None if not lower(top) > 0 else iv.log(top / noise.tail_mass(t))

        def mid(x: Interval | None) -> Mpf:
            return mp.ninf if x is None else (lower(x) + upper(x)) / 2

        best_t, best = start, value(start)
        for step in (1, -1):
            t = best_t + step
            while (candidate := value(t)) is not None and mid(candidate) > mid(best):
                best_t, best = t, candidate
                t += step
        eps_lo = mp.zero if best is None else max(mp.zero, lower(best))
        candidate = mp.mpf(guess) if best is None else max(mp.zero, upper(best))

        def certified(epsilon: Mpf) -> bool:
            # δ at the exact binary value of the candidate: the ε that is returned.
            return bool(upper(_dg_delta(noise, k, exact_fraction(epsilon, "epsilon"))) <= d)

        hi = certify_upward(candidate, certified, what="the discrete Gaussian's ε(δ)")
        return Enclosure(min(eps_lo, hi), hi)
