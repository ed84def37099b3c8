"""A side's ``n``-fold composition by one FFT: the spectrum raised to the ``n``-th power.

Repeated squaring (:meth:`~accounting.pld.PrivacyLossDistribution.self_compose`) costs a product
per binary digit of ``n``; the ``n``-fold convolution of a sequence ``a`` is also the inverse
transform of ``â^n``, one transform each way (the way float accountants compose, e.g. Google's
``dp_accounting``). :func:`power_rows` takes it with a certified bound on everything that moves:

* **The window.** The transform is circular: of length ``N``, it folds the ``n``-fold sum ``S``
  onto ``N`` residues. The window ``[lo, lo + N)`` is chosen so that ``P(S < lo)`` and
  ``P(S >= lo + N)`` are at most a budget each, by Chernoff's bound
  ``P(S >= t) <= M(λ)^n e^{-λt}`` (and its mirror image) for the moment generating function
  ``M`` of one term, bounded above from block sums of the masses (:func:`log_mgf_bound`: the
  chord of ``e^{λi}`` over each block), minimised over a grid of ``λ``. Mass beyond the
  window lands inside it: extra mass on the pessimistic side (harmless), and on the optimistic
  side it is taken off the top with the rounding error.
* **The rounding.** Componentwise, a transform of ``N = 2^t`` points computed as ``t`` levels of
  butterflies, each with a relative error at most ``η`` per entry of its factor
  (``F_l + ΔF_l``, ``|ΔF_l| <= η|F_l|``), is within ``((1 + η)^t - 1)|F_t|⋯|F_1||x|`` of the
  exact one (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002, §24.1 and
  Lemma 3.8), and ``|F_t|⋯|F_1|`` is the matrix of ones: each spectral coefficient is within
  ``ε_N ‖x‖_1`` (``ε_N = tη/(1 - tη)``), with ``η`` as :func:`accounting.convolution.fft_convolve`
  assumes it for pocketfft (:data:`~accounting.convolution.FFT_ERROR_PER_LEVEL`). Powers are taken
  by repeated multiplication, ``2n + 1`` complex products at most per coefficient, each within
  ``√2 γ_2`` relative (Higham 2002, Lemma 3.5). With ``B_j >= |â_j|, |â_j + Δ|`` the error of the
  ``j``-th coefficient of ``â^n ê`` is at most ``B^n_j B_j^e (n E_a/B_j + E_e/B^e_j + ρ)``, and the
  inverse transform adds ``ε_N`` of ``Σ_j |ŷ_j|/N`` per entry; over the ``N`` entries the ℓ1
  error is the sum over the whole spectrum. Far from the origin ``B_j^n`` vanishes, so the bound
  grows like ``n`` times the transform's error, not like ``√N`` (the ℓ2 route of
  :func:`~accounting.convolution.fft_error`).

The inputs are the sides' fixed-point masses widened to long doubles
(:func:`~accounting.pld.products.float_masses`), and the result is made good on each side by
:func:`~accounting.pld.products.made_good`, as a float product is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from mpmath import iv
from numpy.typing import NDArray

from accounting import validate as v
from accounting.certified import precision
from accounting.convolution import FFT_ERROR_PER_LEVEL, UNIT
from accounting.pld.grid import Rows
from accounting.pld.products import FFT_MAX_BITS, WIDEN, exact_only, float_masses, made_good, settled

__all__ = ["MAX_POWER_POINTS", "PowerPlan", "log_mgf_bound", "plan_power", "power_rows", "power_sides"]

#: The longest transform a power takes (a long-double transform of 2^20 points takes about 0.15 s
#: each way); a wider composed loss is squared and coarsened first (:attr:`PowerPlan.halvings`).
MAX_POWER_POINTS = 2**20

#: The ``λ`` tried for Chernoff's bound, in units of one over the composed loss's standard deviation.
_LAMBDAS = np.geomspace(1e-3, 64.0, 64)

#: Added to each float logarithm of a moment generating function: covers its roundings (relative
#: ``10^-12`` or so for sums of a few thousand positive terms) many times over.
_LOG_MARGIN = 2.0**-30


def log_mgf_bound(
    values: NDArray[np.float64], centre: int, lams: NDArray[np.float64], block: int = 1
) -> NDArray[np.float64]:
    """Upper bounds of ``ln Σ_i v_i e^{λ(i - centre)}`` for each ``λ`` (either sign), over blocks.

    A block of ``block`` entries from index ``a`` to ``b`` with total mass ``V`` and mean index
    ``μ`` is bounded by the chord of the convex ``e^{λi}``: ``V (w e^{λa} + (1 - w) e^{λb})`` with
    ``w = (b - μ)/(b - a)``, above every term and within ``V e^{λμ} λ²(b - a)²/8`` of them, a
    relative excess that an ``n``-fold sum multiplies by ``n`` (:func:`_window` sizes the blocks
    for it).
    """
    n = len(values)
    size = max(1, block)
    padded = np.zeros(-(-n // size) * size)
    padded[:n] = values
    rows = padded.reshape(-1, size)
    sums = rows.sum(axis=1)
    keep = sums > 0
    first = np.arange(len(sums)) * size
    last = np.minimum(first + size, n) - 1
    mean = (rows @ np.arange(size, dtype=np.float64))[keep] / sums[keep] + first[keep]
    a, b = (first[keep] - centre).astype(np.float64), (last[keep] - centre).astype(np.float64)
    mean = np.clip(mean - centre, a, b)
    span = np.where(b > a, b - a, 1.0)
    with np.errstate(divide="ignore"):
        log_low, log_high = np.log((b - mean) / span), np.log((mean - a) / span)
    log_low = np.where(b > a, log_low, 0.0)  # one point: all of it at a
    log_high = np.where(b > a, log_high, -np.inf)
    logs = np.log(sums[keep])
    exponent = logs[None, :] + np.logaddexp(
        log_low[None, :] + lams[:, None] * a[None, :], log_high[None, :] + lams[:, None] * b[None, :]
    )
    top = exponent.max(axis=1)
    return np.asarray(top + np.log(np.exp(exponent - top[:, None]).sum(axis=1)) + _LOG_MARGIN)


class _Window:
    """The window ``[lo, lo + size)`` of the composed sum's indices and the bounds ``above`` and
    ``below`` on the mass beyond it."""

    def __init__(self, lo: int, size: int, above: float, below: float) -> None:
        self.lo, self.size, self.above, self.below = lo, size, above, below


def _moments(values: NDArray[np.float64]) -> tuple[int, float]:
    """The nearest index to the mean and the variance of the masses (float estimates: they only
    place the ``λ`` tried)."""
    total = float(values.sum())
    index = np.arange(len(values))
    mean = float(values @ index) / total
    return round(mean), max(1.0, float(values @ (index - mean) ** 2) / total)


def _window(parts: list[tuple[NDArray[np.float64], int]], budget: float) -> _Window:
    """The shortest window (a power of two) whose tails hold at most ``budget`` each for the sum of
    ``count`` draws from each ``(masses, count)`` of ``parts`` (indices from 0)."""
    centres, spread = 0, 0.0
    moments = [_moments(v) for v, _ in parts]
    for (c, var), (_, n) in zip(moments, parts, strict=True):
        centres += n * c
        spread += n * var
    lams = _LAMBDAS / math.sqrt(spread)
    # blocks whose chord excess, n λ² size²/8 in all at λ = 16/√spread, stays about 0.05
    blocks = [max(1, int(0.04 * math.sqrt(var))) for _, var in moments]
    up = sum(
        n * log_mgf_bound(v, c, lams, k) for (v, n), (c, _), k in zip(parts, moments, blocks, strict=True)
    )
    down = sum(
        n * log_mgf_bound(v, c, -lams, k) for (v, n), (c, _), k in zip(parts, moments, blocks, strict=True)
    )
    log_budget = math.log(budget)
    # P(S - centres >= t) <= exp(up(λ) - λt) <= budget from t = (up - ln budget)/λ on (one
    # index to spare for the float arithmetic); likewise below.
    top = centres + math.ceil(float(np.min((up - log_budget) / lams))) + 1
    bottom = centres - math.ceil(float(np.min((down - log_budget) / lams))) - 1
    longest = max(len(v) for v, _ in parts)
    size = 1 << max(1, (max(top - bottom + 1, longest) - 1).bit_length())
    lo = bottom - (size - (top - bottom + 1)) // 2  # the room the power of two leaves, both sides
    # the bounds at the window's ends (at most the budget; the exponents rounded up)
    above = math.exp(min(0.0, float(np.min(up - lams * (lo + size - 1 - centres)))) + _LOG_MARGIN)
    below = math.exp(min(0.0, float(np.min(down - lams * (centres - lo - 1)))) + _LOG_MARGIN)
    return _Window(lo, size, min(above, budget), min(below, budget))


def _power(z: NDArray[np.clongdouble], n: int) -> NDArray[np.clongdouble]:
    """``z^n`` by repeated squaring: at most ``2n - 1`` rounded products enter each entry."""
    result: NDArray[np.clongdouble] | None = None
    while True:
        if n & 1:
            result = z if result is None else result * z
        n >>= 1
        if not n:
            break
        z = z * z
    assert result is not None
    return result


def _infinite(parts: list[tuple[Rows, int]], bits: int, up: bool) -> int:
    """Units at ``+inf`` of the product measure: ``Π (F + I)^n - Π F^n`` rounded up or down."""
    with precision(math.ceil((bits + 64 + max(n for _, n in parts).bit_length()) / 3.3)):
        whole, finite = iv.mpf(1), iv.mpf(1)
        for side, n in parts:
            f = iv.mpf(side.total()) / 2**bits
            whole *= (f + iv.mpf(side.infinite) / 2**bits) ** n
            finite *= f**n
        units = (whole - finite) * 2**bits
        value = math.ceil(units.b) if up else math.floor(units.a)
    return max(0, int(value))


class PowerPlan(NamedTuple):
    """What :func:`power_rows` reads before its transforms: the sides as long doubles, the window,
    and how many times the grid's spacing must double for that window to fit in
    :data:`MAX_POWER_POINTS` points (each doubling about halves it)."""

    floats: list[NDArray[np.longdouble]]
    window: _Window
    halvings: int


def plan_power(parts: list[tuple[Rows, int]], bits: int, up: bool, allowance: float) -> PowerPlan | None:
    """The :class:`PowerPlan` of :func:`power_rows` of ``parts``, or ``None`` where no power is taken
    (no allowance, fixed point wider than :data:`~accounting.pld.products.FFT_MAX_BITS`, exact
    products asked, an empty side).

    Raises
    ------
    ParameterError
        For an ``allowance`` that is negative or not finite.
    """
    allowance = v.nonnegative("allowance", allowance)
    if not allowance > 0 or bits > FFT_MAX_BITS or exact_only() or any(not len(s.rows) for s, _ in parts):
        return None
    floats = [float_masses(s.rows, bits, up) for s, _ in parts]
    window = _window(
        [(f.astype(np.float64), n) for f, (_, n) in zip(floats, parts, strict=True)], allowance / 16
    )
    return PowerPlan(floats, window, max(0, (window.size // MAX_POWER_POINTS).bit_length() - 1))


def power_rows(
    parts: list[tuple[Rows, int]], bits: int, up: bool, allowance: float, plan: PowerPlan | None = None
) -> Rows | None:
    """The product measure of ``count`` copies of each ``(side, count)`` of ``parts`` by one FFT,
    or ``None`` when its certified slack would exceed ``allowance``, its transform
    :data:`MAX_POWER_POINTS`, or :func:`plan_power` declines (see the module notes; the caller
    composes by products instead). ``plan``: :func:`plan_power` of the same arguments, if the
    caller has it.

    Rounded up on the pessimistic side (``up``), down on the optimistic one, as
    :func:`~accounting.pld.products.compose_rows` does.
    """
    return power_sides([(parts, up, plan)], bits, allowance)[0]


class _Power(NamedTuple):
    """One side of :func:`power_sides` between its transforms: the window and bounds of
    :func:`power_rows`, the spectrum to invert, and the error that ``made_good`` makes good."""

    parts: list[tuple[Rows, int]]
    up: bool
    plan: PowerPlan
    spectrum: NDArray[np.clongdouble]
    error: float
    widening: float


def power_sides(
    sides: Sequence[tuple[list[tuple[Rows, int]], bool, PowerPlan | None]], bits: int, allowance: float
) -> list[Rows | None]:
    """:func:`power_rows` of several ``(parts, up, plan)`` at once: the transforms of the sides
    whose windows have one length are taken together, on two threads (pocketfft's ``workers``:
    each transform is one thread's, so the result does not depend on them)."""
    import scipy.fft  # here: importing scipy takes a while and only long compositions need it

    plans = [
        plan if plan is not None else plan_power(parts, bits, up, allowance) for parts, up, plan in sides
    ]
    out: list[Rows | None] = [None] * len(sides)
    live = {i: plan for i, plan in enumerate(plans) if plan is not None and not plan.halvings}
    # forward: every part's floats, batched by length
    floats = {(i, k): f for i, plan in live.items() for k, f in enumerate(plan.floats)}
    transforms = _batched(
        lambda x, size: scipy.fft.rfft(x, size, axis=-1, workers=2),
        floats,
        {key: live[key[0]].window.size for key in floats},
    )
    powers: dict[int, _Power] = {}
    for i, plan in live.items():
        parts, up, _ = sides[i]
        power = _spectrum(parts, bits, up, allowance, plan, [transforms[i, k] for k in range(len(parts))])
        if power is not None:
            powers[i] = power
    values = _batched(
        lambda x, size: scipy.fft.irfft(x, size, axis=-1, workers=2),
        {(i, 0): p.spectrum for i, p in powers.items()},
        {(i, 0): p.plan.window.size for i, p in powers.items()},
    )
    for i, power in powers.items():
        out[i] = _finished(power, values[i, 0], bits)
    return out


def _batched(
    transform: Callable[[NDArray[Any], int], NDArray[Any]],
    arrays: dict[tuple[int, int], NDArray[Any]],
    sizes: dict[tuple[int, int], int],
) -> dict[tuple[int, int], NDArray[Any]]:
    """``transform`` of each array at its size (zero-padded), those of one size and dtype stacked
    into one call."""
    groups: dict[tuple[int, object], list[tuple[int, int]]] = {}
    for key, x in arrays.items():
        groups.setdefault((sizes[key], x.dtype), []).append(key)
    out: dict[tuple[int, int], NDArray[Any]] = {}
    for (size, dtype), keys in groups.items():
        longest = max(len(arrays[key]) for key in keys)
        stacked = np.zeros((len(keys), longest), dtype=dtype)  # type: ignore[call-overload]
        for row, key in enumerate(keys):
            stacked[row, : len(arrays[key])] = arrays[key]  # zeros beyond: as the transform pads
        done = transform(stacked, size)
        for row, key in enumerate(keys):
            out[key] = done[row]
    return out


def _spectrum(
    parts: list[tuple[Rows, int]],
    bits: int,
    up: bool,
    allowance: float,
    plan: PowerPlan,
    transforms: list[NDArray[np.clongdouble]],
) -> _Power | None:
    """The certified error of the power of one side from its parts' transforms, and the spectrum to
    invert; ``None`` where the error does not fit ``allowance``."""
    floats, window = plan.floats, plan.window
    size = window.size
    count = sum(n for _, n in parts)
    levels = size.bit_length() - 1
    eta = levels * FFT_ERROR_PER_LEVEL * UNIT
    eps = eta / (1 - eta)
    product_error = math.sqrt(2.0) * 2 * UNIT / (1 - 2 * UNIT)
    rho = math.expm1((2 * count + 1) * math.log1p(product_error)) * (1 + 2.0**-30)
    # the rest of the budget: the slack made_good adds is 3e + (the tails cut, at most 2e) + 3(above
    # + below) + rounding, and the widened inputs' excess mass, (1 + w)^count - 1 of about 1
    widening = math.expm1(count * math.log1p(WIDEN)) * 2
    room = allowance / (1 + WIDEN) - 3 * (window.above + window.below) - widening - math.ldexp(size, -bits)
    sums = [float(np.sum(f)) * (1 + 2.0**-30) for f in floats]
    if 5 * eps * sum(n * t for t, (_, n) in zip(sums, parts, strict=True)) > room:
        return None  # the bound's term at the origin alone is over
    # per coefficient j: log B_j^n summed over the parts, and Σ n E/B_j
    log_bound = np.zeros(size // 2 + 1)
    relative = np.zeros(size // 2 + 1)
    for transform, e1_sum, (_, n) in zip(transforms, sums, parts, strict=True):
        e1 = eps * e1_sum
        b = np.abs(transform).astype(np.float64) * (1 + 2.0**-50) + e1
        log_bound += n * np.log(b)
        relative += n * e1 / b
    weights = np.full(size // 2 + 1, 2.0)
    weights[0] = weights[-1] = 1.0
    magnitude = np.exp(log_bound + 2.0**-40 * np.abs(log_bound))
    # coefficients whose bound is below 2^-200 are set to 0 (an error of at most that bound each)
    small = log_bound <= -200 * math.log(2)
    kept = np.flatnonzero(~small)
    dropped = float(weights[small] @ magnitude[small])
    error = float(weights[kept] @ (magnitude[kept] * (relative[kept] + rho + eps * (1 + rho))))
    error = (error + dropped) * (1 + 2.0**-20) + 2.0**-1000
    if 5 * error * (1 + 2.0**-30) > room:
        return None
    spectrum = np.zeros(size // 2 + 1, dtype=np.clongdouble)
    spectrum[kept] = 1
    for transform, (_, n) in zip(transforms, parts, strict=True):
        spectrum[kept] *= _power(transform[kept], n)
    return _Power(parts, up, plan, spectrum, error, widening)


def _finished(power: _Power, inverse: NDArray[np.longdouble], bits: int) -> Rows:
    """The side from its inverse transform: the window rolled into place and made good."""
    parts, up, window = power.parts, power.up, power.plan.window
    values = np.maximum(inverse, 0.0)
    values = np.asarray(np.roll(values, -(window.lo % window.size)), dtype=np.longdouble)
    made = made_good(values, power.error, window.above, window.below, bits, up)
    slack = made.slack + power.widening
    # each side's own slack, carried n times through the product of everything else
    logs = [n * math.log(math.ldexp(float(s.total() + s.infinite), -bits) * (1 + WIDEN)) for s, n in parts]
    for (s, n), log_mass in zip(parts, logs, strict=True):
        if s.slack:
            rest = math.fsum(logs) - log_mass / n  # (n - 1) ln m_i + Σ_{j != i} n_j ln m_j
            slack += n * s.slack * math.exp(rest) * (1 + 2.0**-20)
    start = sum(n * s.start for s, n in parts) + window.lo + made.first
    return settled(start, made.rows, _infinite(parts, bits, up) + made.infinite, slack * (1 + WIDEN), up)
