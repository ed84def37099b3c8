"""The one monotone search of the project: the smallest (or largest) float where a condition holds.

Every calibration (the least noise for a target), every inversion of a certified bound (the least
ε with ``δ(ε) <= δ``) and every optimal order of a conversion is a search along a monotone
condition. They all go through :func:`smallest` / :func:`largest`, so they share one
termination rule: stop when the bracket's ends are adjacent floats, or (when asked) when its
relative width is at most ``rtol``, or at the caller's budget (``stop``; the search reads no clock)
— and return the end where the condition was *evaluated* to hold, so the answer is certified by
construction, never interpolated.

The condition is either a predicate (``bool``; bisection on the floats' bit patterns, at most 64
steps to adjacency) or a signed *excess* ``f`` (``f <= 0`` where the condition holds) that is
monotone, for which regula falsi with the Illinois modification takes far fewer evaluations
(a calibration evaluates a whole accountant per step); a step that stalls or meets an infinite
end bisects instead. Searches run on ``x`` or on ``ln x`` (``log=True``, for scale parameters).
A calibration that starts from a guess rather than a bracket first infers one
(:func:`bracket_and_search`: geometric steps on ``ln θ`` from the guess, then :func:`smallest`).

A search needs a bracket. Where none is known, :func:`expand` infers one: it walks away from a
start by steps that grow geometrically until the condition holds (the pattern of every
"double until it holds" loop). Where the variable is not a float the bracket is narrowed by
:func:`narrow` (midpoints of ``mpf`` or other exact-enough numbers, to a width the caller sets)
or :func:`smallest_integer` (integers, as :func:`bisect.bisect_left`).

Every certified ``ε(δ)`` ends with one more step, :func:`certify_upward`: the upper end is first
*proposed* (solved in plain arithmetic on a pessimistic curve, so within rounding of the answer)
and then raised until the upper end of the certified ``δ`` there is at most the target. It is the
step that makes the upper end certified, so it is written once, here.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import TypeVar

from mpmath import mp

from accounting.certified import Mpf
from accounting.errors import ParameterError, UnsupportedError

__all__ = [
    "MAX_STEP",
    "bracket_and_search",
    "certify_upward",
    "expand",
    "largest",
    "narrow",
    "smallest",
    "smallest_integer",
]

_BITS = struct.Struct("<d")
_INTS = struct.Struct("<q")


def _ordinal(x: float) -> int:
    """A float's rank: monotone in ``x``, consecutive floats have consecutive ranks (``±0`` is 0)."""
    if x < 0:
        return -_ordinal(-x)
    (i,) = _INTS.unpack(_BITS.pack(x + 0.0))
    return int(i)


def _from_ordinal(i: int) -> float:
    if i < 0:
        return -_from_ordinal(-i)
    (x,) = _BITS.unpack(_INTS.pack(i))
    return float(x)


def _between(lo: float, hi: float) -> float | None:
    """A float strictly between ``lo < hi`` (the middle of their ranks), or ``None`` if adjacent."""
    a, b = _ordinal(lo), _ordinal(hi)
    if b - a <= 1:
        return None
    return _from_ordinal((a + b) // 2)


Condition = Callable[[float], bool] | Callable[[float], float]


def _holds(value: bool | float) -> bool:
    return bool(value) if isinstance(value, bool) else value <= 0


def smallest(
    condition: Condition,
    lo: float,
    hi: float,
    *,
    rtol: float = 0.0,
    log: bool = False,
    max_steps: int = 400,
    f_lo: float = math.nan,
    f_hi: float = math.nan,
    stop: Callable[[], bool] | None = None,
) -> float:
    """The smallest float ``x ∈ (lo, hi]`` where ``condition`` holds, for a condition that holds
    from some point on (``condition(lo)`` false, ``condition(hi)`` true, ``lo < hi`` finite).

    Parameters
    ----------
    condition : callable
        ``x -> bool`` (holds when true) or ``x -> float`` (an excess, holds when ``<= 0``,
        nonincreasing in ``x``; ``±inf`` allowed).
    lo, hi : float
        The bracket. Neither end is evaluated here: the caller has checked them.
    rtol : float
        Stop once ``hi - lo <= rtol·|hi|`` (``0``: only at adjacent floats).
    log : bool
        Take the secant steps in ``ln x`` (for scale parameters; needs ``lo > 0``).
    max_steps : int
        A bound on evaluations (the bracket is returned as reached, still certified).
    f_lo, f_hi : float
        The excess already evaluated at ``lo`` and ``hi`` (``nan``: not known), so that the first
        step can be a secant step (a caller that bracketed the crossing has them).
    stop : callable, optional
        ``() -> bool``, asked before each evaluation while the bracket is wider than ``rtol``: when
        true, no further evaluation starts and the bracket is returned as reached (``hi`` still
        holds; it is only less tight). The search itself reads no clock: a caller's budget (a
        count of evaluations, or a time limit it chose to depend on) is this predicate.

    Returns
    -------
    float
        The right end of the final bracket: ``condition`` was evaluated to hold there (or it is
        the given ``hi``).
    """
    _bracket(lo, hi, log)
    side = 0
    for _ in range(max_steps):
        if hi - lo <= rtol * abs(hi) or (stop is not None and stop()):
            break
        x = _secant(lo, hi, f_lo, f_hi, log)
        if x is None and rtol == 0:
            x = _next_to_crossing(lo, hi, f_lo, f_hi)
        if x is not None and rtol > 0:
            # A secant point within rtol/2 of an end moves to rtol/2 from it, past the predicted
            # crossing: its evaluation then closes the bracket instead of creeping toward it.
            margin = rtol * abs(hi) / 2
            x = min(max(x, lo + margin), hi - margin) if hi - lo > 2 * margin else x
        if x is None:
            x = _between(lo, hi)
            if x is None:
                break
        value = condition(x)
        if _holds(value):
            hi = x
            f_hi = -1.0 if isinstance(value, bool) else float(value)
            if side == -1:
                f_lo /= 2
            side = -1
        else:
            lo = x
            f_lo = 1.0 if isinstance(value, bool) else float(value)
            if side == 1:
                f_hi /= 2
            side = 1
        if isinstance(value, bool):
            f_lo = f_hi = math.nan  # a predicate has no magnitude: bisect
    return hi


def _bracket(lo: float, hi: float, log: bool) -> None:
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or (log and lo <= 0):
        raise ValueError(f"bracket [{lo!r}, {hi!r}] is not finite with lo < hi (and lo > 0 for log)")


def _secant(lo: float, hi: float, f_lo: float, f_hi: float, log: bool) -> float | None:
    """The regula falsi point of the bracket, or ``None`` (bisect) when it cannot be trusted."""
    if not (math.isfinite(f_lo) and math.isfinite(f_hi)) or f_lo == f_hi or (log and lo <= 0):
        return None
    a, b = (math.log(lo), math.log(hi)) if log else (lo, hi)
    t = b - f_hi * (b - a) / (f_hi - f_lo)
    x = math.exp(t) if log else t
    return x if lo < x < hi else None


def _next_to_crossing(lo: float, hi: float, f_lo: float, f_hi: float) -> float | None:
    """The float next to the end that regula falsi points at, when its point rounds onto that end.

    For the exact search (``rtol = 0``) a crossing within an ulp of one end otherwise falls back
    to bisection from the far end, which closes about 1e-5 to 1e-16 in some 36 steps; the
    neighbouring float settles it in one."""
    if not (math.isfinite(f_lo) and math.isfinite(f_hi)) or f_lo == f_hi:
        return None
    x = math.nextafter(lo, hi) if abs(f_lo) < abs(f_hi) else math.nextafter(hi, lo)
    return x if lo < x < hi else None


def largest(
    condition: Condition,
    lo: float,
    hi: float,
    *,
    rtol: float = 0.0,
    max_steps: int = 400,
) -> float:
    """The largest float ``x ∈ [lo, hi)`` where ``condition`` holds, for a condition that holds up
    to some point (``condition(lo)`` true, ``condition(hi)`` false, ``lo < hi`` finite).

    :func:`smallest` on ``y = -x`` (an excess must be nondecreasing in ``x``); returns the left end
    of the final bracket, where ``condition`` was evaluated to hold (or the given ``lo``).
    """
    _bracket(lo, hi, False)
    return -smallest(lambda y: condition(-y), -hi, -lo, rtol=rtol, max_steps=max_steps)


_LN_CEILING = math.log(1e300)

#: The largest first step of :func:`bracket_and_search` in ``ln θ`` (a factor ``e^2``); later steps double.
MAX_STEP = 2.0


def bracket_and_search(
    excess: Callable[[float], float], first: float, rtol: float, stop: Callable[[], bool] | None = None
) -> float:
    """The least noise level ``θ`` meeting a calibration's target, from a first guess: bracket the
    crossing from ``first``, then :func:`smallest` (on ``ln θ``) from both ends.

    Shared by every calibration of the project (:func:`accounting.calibration.calibrate`, and the
    binomial trials of :func:`accounting.summation.shuffle_sum_calibration`). The excess is
    ``ln ε(θ) - ln target`` (``<= 0`` where the target is met), and ``ε`` falls at least as
    ``θ^{-1/2}`` in every noise family calibrated (as ``1/σ``, ``1/b`` or ``1/√variance`` in the
    Gaussian regime), so the first step in
    ``ln θ`` is ``2.5 |excess(first)|``: from a good guess (the analytic Gaussian's, usually within
    ``10^-6``) the bracket is then that narrow, and regula falsi, given the excess at both ends,
    finishes in a few evaluations instead of bisecting from a factor-2 bracket (each evaluation
    of a long ledger is a whole PLD composition).

    ``ε`` may also fall much *faster* than that: to exactly 0 once ``δ`` exceeds the total
    variation distance (a target ``ε = 1e-20`` is met a factor 2 above a guess whose ε is
    ``1e-6``, an excess of 32). So the step is at most :data:`MAX_STEP` (a factor e^2), and a step
    that does not cross doubles: an uncapped step of ``e^64`` made the next evaluation one at a
    noise level ``10^28`` times too large (a discrete Laplace scale of 1.7e33, which did not finish).

    A noise level the route cannot account (a published bound's hypothesis, such as KLS's
    ``σ >= 1/2``, or a table too fine to build) counts as not meeting the target while no
    smaller level has been accounted: the search then moves to more noise, which is certified.

    ``stop`` (the caller's budget, :func:`smallest`'s) is asked once a level meeting the target is
    known, before each further evaluation: when true, that level is returned. ``rtol`` is
    :func:`smallest`'s.
    """
    refused: list[Exception] = []

    def checked(theta: float) -> float:
        try:
            return excess(theta)
        except (UnsupportedError, ParameterError) as err:
            refused.append(err)
            return math.inf

    f0 = checked(first)
    step = 2.5 * abs(f0) if math.isfinite(f0) and f0 != 0 else math.log(2)
    step = min(max(step, 1e-9), MAX_STEP)
    if f0 > 0:
        lo, f_lo = first, f0
        while True:
            # The test is on ln θ: θ e^step itself overflows once the doubled step passes ~709.
            hi = lo * math.exp(step) if math.log(lo) + step <= _LN_CEILING else math.inf
            if hi > 1e300:
                if refused and not math.isfinite(f_lo):
                    raise refused[0]  # no level up to 1e300 could be accounted: say why
                raise UnsupportedError("no noise level up to 1e300 meets the target")
            try:
                f_hi = excess(hi)
            except (UnsupportedError, ParameterError) as err:
                if math.isfinite(f_lo):
                    raise UnsupportedError(
                        f"no noise level meets the target: ε is still above it at θ = {lo!r} and "
                        f"θ = {hi!r} cannot be accounted ({err}); under add-remove a distributed sum "
                        "has an ε floor that no amount of noise removes (the removed user's share "
                        "changes the variance)"
                    ) from None
                refused.append(err)
                f_hi = math.inf  # nothing accounted yet: keep moving toward more noise
            if f_hi <= 0:
                break
            lo, f_lo = hi, f_hi
            step *= 2
    else:
        hi, f_hi = first, f0
        while True:
            lo = hi * math.exp(-step)
            if lo < 1e-300 or (stop is not None and stop()):
                return hi
            f_lo = checked(lo)
            if f_lo > 0:
                break
            hi, f_hi = lo, f_lo
            step *= 2
    return smallest(checked, lo, hi, rtol=rtol, log=True, f_lo=f_lo, f_hi=f_hi, stop=stop)


#: A point of :func:`expand`: an ``int``, a float or an ``mpf`` (in the working precision), whatever
#: the caller's arithmetic is; the walk adds and scales it only.
Point = TypeVar("Point", int, float, Mpf)
#: A point of :func:`narrow`: a float or an ``mpf`` (midpoints are halves).
Real = TypeVar("Real", float, Mpf)


def expand(
    holds: Callable[[Point], bool],
    start: Point,
    step: Point,
    *,
    growth: int = 2,
    anchored: bool = False,
    limit: Point | None = None,
) -> tuple[Point | None, Point]:
    """Bracket inference: the first point of a geometrically growing walk where ``holds`` is true.

    The walk (``step`` gives the direction; each step is ``growth`` times the last):

    * by default a running sum, ``start, start + s, start + s + growth·s, ...``, whose first point
      ``start`` is evaluated too;
    * ``anchored``: ``start + s, start + growth·s, start + growth²·s, ...``, each from ``start``,
      which is not evaluated (a point where the condition is known not to hold).

    The arithmetic is the caller's (``int``, float, or ``mpf`` in the working precision): a point
    is exactly what the caller's own loop would have computed.

    Parameters
    ----------
    holds : callable
        ``x -> bool``, false and then true along the walk (only evaluated, never assumed).
    start, step : int, float or mpf
        The first point (or the anchor) and the first step (nonzero, signed).
    growth : int
        The factor by which the step grows after each point where ``holds`` is false.
    anchored : bool
        Whether each point is ``start`` plus the step (else the last point plus the step).
    limit : int, float or mpf, optional
        A point where the condition is known to hold: a point of the walk at or beyond it is
        replaced by ``limit`` (not evaluated), which ends the walk.

    Returns
    -------
    tuple
        ``(before, at)``: ``at`` is the first point evaluated to hold (or ``limit``); ``before`` is
        the last point evaluated not to hold (``start`` when anchored and the first point holds;
        ``None`` when ``start`` itself holds). With no ``limit`` the walk goes on until the
        condition holds, as the loops it replaces did.
    """
    before: Point | None = start if anchored else None
    x = start
    if not anchored:
        if holds(x):
            return None, x
        before = x
        x = x + step
    else:
        x = start + step
    while True:
        if limit is not None and (x <= limit if step < 0 else x >= limit):
            return before, limit
        if holds(x):
            return before, x
        before = x
        step = step * growth
        x = start + step if anchored else x + step


def narrow(
    side: Callable[[Real], bool | None],
    lo: Real,
    hi: Real,
    *,
    width: Real | Callable[[Real, Real], Real],
    max_steps: int | None = None,
) -> tuple[Real, Real, Real | None]:
    """Bisect the bracket ``[lo, hi]`` of a monotone condition at midpoints ``(lo + hi)/2``.

    For numbers that are not floats (an ``mpf`` threshold, in the working precision), where
    :func:`smallest` cannot walk the bit patterns. Each step first compares ``hi - lo`` with
    ``width`` (a number, or ``width(lo, hi)``) and stops once it is at most that; else the
    midpoint's side is asked.

    Parameters
    ----------
    side : callable
        ``x -> True`` where ``x`` is on ``hi``'s side (the condition holds), ``False`` on ``lo``'s,
        ``None`` where the caller cannot tell (e.g. an interval that straddles the threshold):
        the bisection then stops at that midpoint.
    lo, hi : int, float or mpf
        The bracket (``side(lo)`` false, ``side(hi)`` true; neither is evaluated here).
    width : number or callable
        The width at which to stop.
    max_steps : int, optional
        A bound on the midpoints evaluated (none by default).

    Returns
    -------
    tuple
        ``(lo, hi, undecided)``: the final bracket, and the midpoint where ``side`` answered
        ``None`` (``None`` when the bisection ran to ``width`` or ``max_steps``).
    """
    steps = 0
    while max_steps is None or steps < max_steps:
        steps += 1
        if hi - lo <= (width(lo, hi) if callable(width) else width):
            break
        mid = (lo + hi) / 2
        on_high_side = side(mid)
        if on_high_side is None:
            return lo, hi, mid
        if on_high_side:
            hi = mid
        else:
            lo = mid
    return lo, hi, None


def smallest_integer(holds: Callable[[int], bool], lo: int, hi: int) -> int:
    """The smallest integer ``i ∈ [lo, hi)`` where ``holds``, for a condition false then true
    (``hi`` when it holds nowhere): the bisection of :func:`bisect.bisect_left`, midpoint for
    midpoint, so a search written with it evaluates the same points."""
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


#: A candidate of :func:`certify_upward`: an ``mpf`` (raised in the working precision) or a float.
Candidate = TypeVar("Candidate", Mpf, float)


def certify_upward(
    candidate: Candidate,
    certified: Callable[[Candidate], bool],
    *,
    nudge_exponent: int | None = None,
    growth: int = 2,
    max_tries: int = 200,
    ceiling: Candidate | None = None,
    what: str = "the upper end of ε(δ)",
) -> Candidate:
    """The first of ``candidate``, ``candidate + n``, ``candidate + n + growth·n``, ... that is
    ``certified``: the upward step that turns a proposed upper end of ``ε(δ)`` into a certified one.

    A proposed upper end solves ``δ(ε) = target`` in plain (rounded) arithmetic, so the certified
    ``δ`` there may exceed the target by a few units of the last place. It is raised by a nudge
    ``n = max(1, candidate)·2^nudge_exponent`` that grows geometrically, so a candidate a few ulps
    short costs a try or two and one that is far off still ends in a bounded number of tries.

    Parameters
    ----------
    candidate : mpf or float
        The proposed upper end, ``>= 0``. An ``mpf`` is raised in the working precision
        (:data:`mpmath.mp`), a float in float arithmetic.
    certified : callable
        ``candidate -> bool``: whether the *upper* end of the certified ``δ`` at ``candidate`` (the
        pessimistic side, rounded up) is at most the target. Only that end makes the returned
        value an upper bound on ``ε(δ)``: a lower end, or an optimistic curve, would accept a
        candidate whose true ``δ`` is still above the target.
    nudge_exponent : int, optional
        The first nudge is ``max(1, candidate)·2^nudge_exponent``. By default ``16 - mp.prec``:
        16 bits above the last place of the working precision, a few times the rounding of a
        proposal computed there. A float candidate needs its own (its last place is ``2^-52``).
    growth : int
        The factor by which the nudge grows after each refused try.
    max_tries : int
        A bound on the evaluations of ``certified``.
    ceiling : mpf or float, optional
        An upper end already certified by other means. A candidate at or above it is not
        evaluated, and it is returned in place of an error when the tries run out.

    Returns
    -------
    mpf or float
        The first candidate of the sequence that is ``certified`` (or ``ceiling``, see there).

    Raises
    ------
    AssertionError
        When ``max_tries`` candidates are refused and there is no ``ceiling``: the certified
        ``δ`` falls to the target within a few ulps of a correct proposal, so this is a bug (or a
        ``certified`` that can never hold), not a property of the input.
    """
    exponent = 16 - mp.prec if nudge_exponent is None else nudge_exponent
    # ldexp is exact in both arithmetics (a power-of-two scaling), so the nudges are too.
    if isinstance(candidate, float):
        nudge = math.ldexp(max(1.0, candidate), exponent)
    else:
        nudge = mp.ldexp(max(mp.one, candidate), exponent)
    for _ in range(max_tries):
        if ceiling is not None and candidate >= ceiling:
            return ceiling
        if certified(candidate):
            return candidate
        candidate += nudge
        nudge *= growth
    if ceiling is not None:
        return ceiling
    raise AssertionError(f"could not certify {what} in {max_tries} tries")
