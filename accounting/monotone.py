"""Pairs with a nondecreasing privacy loss: ``δ(ε)`` and ``ε(δ)`` on their threshold sets, certified.

For a pair ``(P, Q)`` of laws on the real line whose privacy loss ``L(x) = ln(P(x)/Q(x))`` is
nondecreasing in the output ``x`` (the continuous mixture pairs of :mod:`accounting.subsampling`:
Gaussian or Laplace noise, subsampled or not), the set where ``P - e^ε Q > 0`` is a half-line
``(x_ε, ∞)`` above the threshold ``x_ε`` where ``L`` crosses ``ε``, so

    δ(ε) = sup_S [P(S) - e^ε Q(S)] = [P - e^ε Q](X > x_ε),

the exact threshold form of the hockey-stick divergence, and every threshold set ``S = (x, ∞)``
gives a point ``(L(x), [P - e^{L(x)} Q](S))`` of the curve ``δ(ε)``. Any set gives a lower bound
``ε(δ) >= ln((P(S) - δ)/Q(S))`` (as in :mod:`accounting.divergence`).

The thresholds are searched by :mod:`accounting.search`: a bracket inferred by
:func:`~accounting.search.expand` from the float threshold (:func:`inverse_float`), then narrowed
in ``mpf`` by :func:`~accounting.search.narrow`. The floats only place the search; every end it
returns is checked in interval arithmetic.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from mpmath import iv, mp
from numpy.typing import NDArray

from accounting.certified import Enclosure, Interval, Mpf, float_up, lower, precision, upper
from accounting.search import certify_upward, expand, narrow

__all__ = ["MonotonePair", "float_window", "inverse_float", "threshold_delta", "threshold_epsilon"]

FloatArray = NDArray[np.float64]
#: ``ln`` of ``P(X <= x)``, ``P(X > x)``, ``Q(X <= x)``, ``Q(X > x)`` at each float ``x`` (float64).
LogTails = Callable[[FloatArray], tuple[FloatArray, FloatArray, FloatArray, FloatArray]]


class MonotonePair(Protocol):
    """A pair of laws on the real line whose privacy loss is nondecreasing (what this module reads)."""

    def loss(self, x: Interval) -> Interval:
        """``L(x)`` in interval arithmetic."""

    def loss_limits(self) -> tuple[Interval | None, Interval | None]:
        """``L(-∞)`` and ``L(+∞)`` (``None`` where infinite)."""

    def masses(self, boundaries: Sequence[Mpf]) -> list[tuple[Interval, Interval]]:
        """Certified ``(P, Q)`` masses of the cells cut at the increasing ``boundaries``."""

    def window_float(self, log_mass: float) -> tuple[float, float]:
        """Floats beyond which both tails of ``P`` and ``Q`` are ``e^{log_mass}`` or less."""

    def inverse_loss_float(self, targets: FloatArray, lo: float, hi: float) -> FloatArray:
        """Floats in ``[lo, hi]`` where the float loss is close to each target."""

    def delta(self, epsilon: float, dps: int = ...) -> Enclosure:
        """The certified ``δ(ε)`` of the pair (:func:`threshold_delta`)."""


# ---------------------------------------------------------------------------------------
# Float placement (never certified)
# ---------------------------------------------------------------------------------------


def float_window(
    log_tails: LogTails, centers: Sequence[float], scale: float, log_mass: float
) -> tuple[float, float]:
    """Floats ``x_a < x_b`` beyond which both tails of ``P`` and ``Q`` are ``e^{log_mass}`` or less.

    From one ``scale`` outside the outermost ``centers``, the bracket is widened by doubling steps
    (:func:`accounting.search.expand`) until the float tails (``log_tails``) are that small.
    """

    def beyond(x: float, upper_side: bool) -> float:
        p_low, p_high, q_low, q_high = log_tails(np.array([x]))
        pair = (p_high, q_high) if upper_side else (p_low, q_low)
        return float(np.logaddexp(pair[0], pair[1])[0])

    _, lo = expand(lambda x: not beyond(x, False) > log_mass, min(centers) - scale, -scale)
    _, hi = expand(lambda x: not beyond(x, True) > log_mass, max(centers) + scale, scale)
    return lo, hi


def inverse_float(
    loss_float: Callable[[FloatArray], FloatArray], targets: FloatArray, lo: float, hi: float
) -> FloatArray:
    """Floats ``x`` in ``[lo, hi]`` with ``loss_float(x)`` close to each target, for a nondecreasing
    loss (an array search, which the scalar searches of :mod:`accounting.search` do not do).

    Each target is bracketed on a grid of :data:`_INVERSE_GRID` points, then the Illinois variant
    of regula falsi (Dowell & Jarratt 1971, superlinear) runs on every bracket at once, with a
    bisection step wherever an interpolation falls outside its bracket; it stops when every
    loss is within a few ulps of its target, every bracket a few ulps wide, or after
    :data:`_INVERSE_STEPS` steps (four do for the loss of a Poisson-subsampled Gaussian).
    """
    t = np.asarray(targets, dtype=np.float64)
    xs = np.linspace(lo, hi, _INVERSE_GRID)
    ls = loss_float(xs)
    j = np.clip(np.searchsorted(ls, t, side="left"), 1, _INVERSE_GRID - 1)
    a, b = xs[j - 1], xs[j]
    fa, fb = ls[j - 1] - t, ls[j] - t
    last = np.zeros(t.shape, dtype=np.int8)  # which end moved last: -1 a, +1 b
    # a few ulps of the targets, or of the largest where they come near 0
    close = 8 * np.spacing(np.abs(t)) + 2.0**-50 * float(np.max(np.abs(t), initial=0.0)) + 1e-300
    for _ in range(_INVERSE_STEPS):
        span = b - a
        with np.errstate(divide="ignore", invalid="ignore"):
            c = b - fb * span / (fb - fa)
        inside = np.isfinite(c) & (c > a) & (c < b)
        c = np.where(inside, c, (a + b) / 2)
        fc = loss_float(c) - t
        below = fc < 0
        fb = np.where(below & (last == -1), fb / 2, fb)  # Illinois: halve the end that stays
        fa = np.where(~below & (last == 1), fa / 2, fa)
        a, fa = np.where(below, c, a), np.where(below, fc, fa)
        b, fb = np.where(below, b, c), np.where(below, fb, fc)
        last = np.where(below, -1, 1).astype(np.int8)
        if np.all(np.minimum(np.abs(fa), np.abs(fb)) <= close) or np.all(b - a <= 4 * np.spacing(np.abs(b))):
            break
    return np.asarray(np.where(np.abs(fa) <= np.abs(fb), a, b), dtype=np.float64)


#: Grid points of :func:`inverse_float`'s first brackets, and its most interpolation steps (a
#: bracket shrinks at least four-fold in a bisection step, and far more near the root).
_INVERSE_GRID = 4097
_INVERSE_STEPS = 40


# ---------------------------------------------------------------------------------------
# Certified answers
# ---------------------------------------------------------------------------------------


def threshold_delta(pair: MonotonePair, eps: float, dps: int) -> Enclosure:
    """``δ(ε)`` of a pair with a nondecreasing loss, certified (validated ``ε >= 0`` and ``dps``).

    With ``x_lo <= x_hi`` bracketing the threshold where ``L`` crosses ``ε`` (checked in interval
    arithmetic, :func:`_threshold`), ``δ = [P - e^ε Q](X > x_hi) + ∫_{(x_lo, x_hi]} (p - e^ε q)_+``,
    and the second term lies in ``[0, P(x_lo < X <= x_hi)]``; the bracket is bisected to the
    working precision.
    """
    with precision(dps):
        x_lo, x_hi = _threshold(pair, mp.mpf(eps))
        (_, p_mid, p_top), (_, _, q_top) = _three_masses(pair, x_lo, x_hi)
        base = p_top - iv.exp(iv.mpf(eps)) * q_top
        lo = max(mp.zero, lower(base))
        hi = min(mp.one, max(mp.zero, upper(base + p_mid)))
        return Enclosure(min(lo, hi), hi)


def _three_masses(
    pair: MonotonePair, x_lo: Mpf, x_hi: Mpf
) -> tuple[tuple[Interval, ...], tuple[Interval, ...]]:
    """``P`` and ``Q`` masses of ``(-∞, x_lo]``, ``(x_lo, x_hi]``, ``(x_hi, ∞)`` (ends may be ``±∞``)."""
    points = [x for x in (x_lo, x_hi) if mp.isfinite(x)]
    if len(points) == 2 and points[0] == points[1]:
        points = points[:1]
    cells = iter(pair.masses(points))
    zero = iv.mpf(0)
    ps: list[Interval] = []
    qs: list[Interval] = []
    edges = [mp.ninf, x_lo, x_hi, mp.inf]
    for left, right in itertools.pairwise(edges):
        if left >= right:
            ps.append(zero)
            qs.append(zero)
        else:
            p, q = next(cells)
            ps.append(p)
            qs.append(q)
    return tuple(ps), tuple(qs)


def _threshold(pair: MonotonePair, eps: Mpf) -> tuple[Mpf, Mpf]:
    """``x_lo <= x_hi`` with ``L <= ε`` on ``(-∞, x_lo]``, ``L >= ε`` on ``[x_hi, ∞)`` (maybe ``±∞``).

    The bracket of :func:`_bracket` is bisected (:func:`accounting.search.narrow`) until it is
    ``2^24`` ulps wide, or until the loss interval at a midpoint contains ``ε``: the ends then close
    in on that midpoint from both sides (:func:`_walk`).
    """
    bottom, top = pair.loss_limits()
    if bottom is not None and lower(bottom) >= eps:
        return mp.ninf, mp.ninf  # L >= ε everywhere
    if top is not None and upper(top) <= eps:
        return mp.inf, mp.inf  # L <= ε everywhere
    a, b = _bracket(pair, eps)
    tolerance = mp.ldexp(max(mp.one, abs(a), abs(b)), -iv.prec + 24)

    def side(x: Mpf) -> bool | None:
        loss = pair.loss(iv.mpf(x))
        if upper(loss) <= eps:
            return False
        if lower(loss) >= eps:
            return True
        return None

    a, b, mid = narrow(side, a, b, width=tolerance)
    if mid is not None:
        # The loss interval at mid contains ε: close in from both sides of mid instead.
        a = _walk(pair, mid, eps, -tolerance, a)
        b = _walk(pair, mid, eps, tolerance, b)
    return a, b


def _walk(pair: MonotonePair, x: Mpf, eps: Mpf, step: Mpf, limit: Mpf) -> Mpf:
    """The nearest point to ``x`` (steps doubling away from it, toward ``limit``) where the
    loss is certainly ``<= ε`` (``step < 0``) or ``>= ε`` (``step > 0``); ``limit`` qualifies."""

    def holds(y: Mpf) -> bool:
        loss = pair.loss(iv.mpf(y))
        return bool(upper(loss) <= eps) if step < 0 else bool(lower(loss) >= eps)

    return expand(holds, x, step, anchored=True, limit=limit)[1]


def _bracket(pair: MonotonePair, eps: Mpf) -> tuple[Mpf, Mpf]:
    """Finite ``a < b`` with ``L(a) <= ε <= L(b)`` certified, near the float threshold: steps growing
    four-fold from ``2^-30`` relative (:func:`accounting.search.expand`)."""
    lo_f, hi_f = pair.window_float(-60.0)
    x0 = float(pair.inverse_loss_float(np.array([float(eps)]), lo_f, hi_f)[0])
    step = max(1.0, abs(x0)) * 2.0**-30
    _, a = expand(lambda x: not upper(pair.loss(iv.mpf(x))) > eps, mp.mpf(x0) - step, -(step * 4), growth=4)
    _, b = expand(lambda x: not lower(pair.loss(iv.mpf(x))) < eps, mp.mpf(x0) + step, step * 4, growth=4)
    return a, b


def threshold_epsilon(pair: MonotonePair, d: float, dps: int) -> Enclosure:
    """``ε(δ)`` of a pair with a nondecreasing loss, certified (validated ``δ ∈ (0, 1)`` and ``dps``).

    On the threshold set ``S = (x, ∞)`` the point ``(L(x), [P - e^{L(x)} Q](S))`` lies on the curve
    ``δ(ε)``, so ``x`` is bisected until it is ``δ``; the lower end is ``ln((P(S) - δ)/Q(S))`` (any
    set gives a lower bound), and the upper end ``L(x)`` is checked with the pair's certified
    ``δ`` (``pair.delta``) and nudged up (:func:`accounting.search.certify_upward`) before it is
    returned.
    """
    if pair.delta(0.0, dps).hi <= d:
        return Enclosure.exact(0)
    with precision(dps):
        dm = mp.mpf(d)
        _, top = pair.loss_limits()
        lo_f, hi_f = pair.window_float(-60.0)
        span = max(1.0, hi_f - lo_f)
        a = mp.mpf(lo_f) - span
        b = mp.mpf(hi_f) + span

        def curve(x: Mpf) -> Mpf:
            (_, _, p_top), (_, _, q_top) = _three_masses(pair, x, x)
            e = iv.exp(pair.loss(iv.mpf(x)))
            return mp.mpf((p_top - e * q_top).mid)

        # δ(L(x)) decreases in x: widen until the target is bracketed, then bisect.
        _, b = expand(lambda x: not curve(x) > dm, b, span)
        a, b, _ = narrow(
            lambda x: not curve(x) > dm,
            a,
            b,
            width=lambda lo, hi: mp.ldexp(max(mp.one, abs(lo), abs(hi)), -iv.prec + 20),
            max_steps=iv.prec + 8,
        )
        if top is not None and lower(pair.loss(iv.mpf(b))) >= upper(top):
            b = a  # past the flat top: the threshold set at the last point below it
        proposal = float_up(max(mp.zero, upper(pair.loss(iv.mpf(b)))))

        def certified(epsilon: float) -> bool:
            return bool(pair.delta(epsilon, dps).hi <= d)

        # ε stays a float here, raised in float arithmetic from 2^-44 relative (2^8 of its ulps).
        candidate = certify_upward(proposal, certified, nudge_exponent=-44, what="the mixture's ε(δ)")
        (_, _, p_top), (_, _, q_top) = _three_masses(pair, a, a)
        eps_lo = mp.zero
        if lower(p_top) > dm and lower(q_top) > 0:
            eps_lo = max(mp.zero, lower(iv.log((p_top - iv.mpf(d)) / q_top)))
        return Enclosure(min(eps_lo, mp.mpf(candidate)), mp.mpf(candidate))
