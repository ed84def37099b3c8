"""The sum of ``n`` independent discrete Gaussians: the total noise of ``n`` users' discrete Gaussian shares.

It is not a discrete Gaussian. Its exact table is the exact convolution of the summands' certified
lower bounds in fixed point (cached per ``(σ, n, precision)``); its a-priori zCDP bound is the closed
form of Kairouz, Liu & Steinke 2021, Proposition 13 (:func:`kls_epsilon`), which
:func:`accounting.bounds.sum_discrete_gaussians_epsilon_kls` also evaluates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import mpmath
import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike

from accounting import validate as v
from accounting._exact import Randomness
from accounting.certified import (
    DEFAULT_DPS,
    Interval,
    Mpf,
    float_down,
    float_up,
    lower,
    precision,
    to_interval,
    to_mpf,
)
from accounting.convolution import convolve
from accounting.errors import ParameterError
from accounting.noise.base import (
    FloatArray,
    IntArray,
    LatticeNoise,
    Param,
    RenyiPrior,
    as_float64,
    as_int64,
    exact_shape,
    parameter,
    sample_shape,
)
from accounting.noise.discrete_gaussian import DiscreteGaussian, normalizer

__all__ = ["MAX_SUM_TABLE_BITS", "SumOfDiscreteGaussians", "kls_epsilon", "xi_sum_upper"]

#: The working precision (decimal digits) at which :class:`SumOfDiscreteGaussians` evaluates
#: :func:`kls_epsilon` for its a-priori bounds: the precision of
#: :func:`accounting.bounds.sum_discrete_gaussians_rho_kls`, so both round the same number up.
_KLS_DPS = 50

#: Relative size at which the series of :func:`xi_sum_upper` is stopped. The certified remainder
#: bound is *added* to the partial sum, so this only controls tightness, never validity.
_XI_TOL = Fraction(1, 10**30)

#: Terms of the Taylor expansion of the tail of :func:`xi_sum_upper`.
_TAYLOR_ORDER = 24


def xi_sum_upper(c: Mpf, terms: int) -> Mpf:
    """Upper bound on ``Σ_{k=1}^{K} exp(-c k/(k+1))`` (``K = terms``), tight to ~30 digits: the ``ξ/10``
    of Kairouz, Liu & Steinke 2021 Prop. 13 at ``c = 2π²σ²`` (:func:`kls_epsilon`).

    With ``j = k + 1`` the summand is ``exp(c/j - c)``, decreasing in ``j``. The sum is
    evaluated directly for small ``j`` and stopped at the first ``j`` where either

    - the crude bound ``(K + 1 - j + 1) exp(c/j - c)`` on the rest is negligible (large ``c``:
      the first terms dominate), or
    - ``c/j <= 1/2``, where the rest is ``exp(-c) Σ_j exp(c/j)`` with
      ``exp(x) = 1 + Σ_{p=1}^{P} x^p/p! + R``, ``0 <= R <= e^{1/2} x^{P+1}/(P+1)!``; the power
      sums ``Σ_j j^{-p}`` are differences of Hurwitz zeta values (digamma for ``p = 1``), so
      the whole tail costs ``O(P)`` special-function calls however large ``K`` is.

    Both stopping rules add a certified upper bound for the rest, so the result is an upper
    bound (up to 50-digit rounding) whatever the tolerance.
    """
    if terms <= 0:
        return mp.zero
    m = terms + 1  # j runs over 2..m
    tol = mp.mpf(_XI_TOL.numerator) / _XI_TOL.denominator
    total = mp.zero
    j = 2
    while j <= m:
        term = mp.exp(c / j - c)
        crude = (m - j + 1) * term
        if total > 0 and crude <= tol * total:
            return total + crude
        if c / j <= mp.mpf(1) / 2:
            break
        total += term
        j += 1
    else:
        return total
    # Taylor tail over j = j..m.
    count = m - j + 1
    tail = mp.mpf(count)
    tail += c * (mp.psi(0, m + 1) - mp.psi(0, j))
    factorial = mp.one
    for p in range(2, _TAYLOR_ORDER + 1):
        factorial *= p
        tail += c**p / factorial * (mp.zeta(p, j) - mp.zeta(p, m + 1))
    factorial *= _TAYLOR_ORDER + 1
    tail += mp.sqrt(mp.e) * c ** (_TAYLOR_ORDER + 1) / factorial * mp.zeta(_TAYLOR_ORDER + 1, j)
    return total + mp.exp(-c) * tail


def kls_epsilon(sigma: Mpf, count: int, l2_squared: int, moving: int) -> Mpf:
    """ε with ``(1/2)ε²``-zCDP for a sum of ``count`` discrete Gaussians, as an mpf (inputs validated).

    Kairouz, Liu & Steinke 2021, "The Distributed Discrete Gaussian Mechanism for Federated Learning
    with Secure Aggregation", Proposition 13 and its d-dimensional form (Lemma 4 of Chowdhury & Zhou
    2023): ``l2_squared`` bounds ``‖v‖₂²`` and ``moving`` the nonzero coordinates of the shift
    (``Δ²`` and 1 in one dimension); ``σ >= 1/2`` is the per-summand parameter. See
    :func:`accounting.bounds.sum_discrete_gaussians_epsilon_kls` for the statement.
    """
    xi = 10 * xi_sum_upper(2 * mp.pi**2 * sigma**2, count - 1)
    base = mp.mpf(l2_squared) / (count * sigma**2)
    return min(mp.sqrt(base + moving * xi / 2), mp.sqrt(base) + mp.sqrt(moving) * xi)


def _to_fixed(values: list[Interval], bits: int) -> list[int]:
    """Lower endpoints scaled by ``2^bits`` and rounded down (lower bounds stay lower bounds)."""
    # Exact integer arithmetic on the raw mantissas: mp.floor would round to mp.prec.
    return [mpmath.libmp.to_int(mpmath.libmp.mpf_shift(lower(x)._mpf_, bits), "f") for x in values]


@dataclass(frozen=True)
class _SumTable:
    """Lower bounds ``masses[i]·2^-bits`` of ``P(Z = offset + i)`` for ``|offset + i| <= reach``,
    and ``missing``: ``2^bits`` minus their total, which bounds every value's error (see
    :class:`SumOfDiscreteGaussians`)."""

    reach: int
    bits: int
    offset: int
    masses: list[int]
    missing: int


#: The widest fixed-point table of each sum of discrete Gaussians computed so far, per
#: ``(σ, count, working precision)``: a table of reach ``R`` serves every window within it (its
#: bits were chosen for the smallest value at ``±R``), so the Rényi sums at many orders (each
#: with its own window) share one convolution instead of rebuilding it per order.
_SUM_TABLES: dict[tuple[Param, int, int], _SumTable] = {}


def _sum_table(sigma: Param, count: int, reach: int, prec: int) -> _SumTable:
    """The fixed-point table of ``count`` discrete Gaussians of parameter ``σ`` out to ``±reach``.

    Reuses a cached table that reaches at least as far (:data:`_SUM_TABLES`); otherwise builds
    one (:func:`_build_sum_table`), at twice the reach asked for when it replaces a narrower one
    so that a growing sequence of windows rebuilds only a few times.
    """
    key = (sigma, count, prec)
    cached = _SUM_TABLES.get(key)
    if cached is not None and cached.reach >= reach:
        return cached
    if cached is not None:
        reach = max(reach, 2 * cached.reach)
    table = _build_sum_table(sigma, count, reach, prec)
    if len(_SUM_TABLES) >= 16:
        _SUM_TABLES.pop(next(iter(_SUM_TABLES)))
    _SUM_TABLES[key] = table
    return table


def _build_sum_table(sigma: Param, n: int, reach: int, prec: int) -> _SumTable:
    """The exact convolution of ``n`` lower-bounded discrete Gaussian tables in fixed point.

    Bits: the working precision plus the dynamic range down to the window's edge (an estimate of
    the smallest value there, :func:`_edge_nats`). A table with a value still 0 within ``±reach``
    (the estimate fell short: its enclosure would touch zero inside the support) is rebuilt with
    twice the bits; beyond :data:`MAX_SUM_TABLE_BITS` the sum is refused, naming ``sigma``. The
    component's own rounding error is lost mass too: it is computed at that precision, by the
    recurrence ``e^{-(x+1)^2/(2σ^2)} = e^{-x^2/(2σ^2)} · e^{-(2x+1)/(2σ^2)}`` (two interval
    products per point instead of an exponential at thousands of bits).
    """
    s = float(sigma)
    edge_log2 = min(_edge_nats(s, n, reach) / math.log(2), 2.0 * MAX_SUM_TABLE_BITS)
    bits = prec + int(edge_log2) + 2 * max(n, 2).bit_length() + 16
    while True:
        if bits > MAX_SUM_TABLE_BITS:
            raise ParameterError(
                "sigma",
                sigma,
                f"a per-summand σ whose sum of {n} has no value below 2^-{MAX_SUM_TABLE_BITS} in its "
                f"window (this one needs more than {bits // 2} bits per entry: P(X = ±1) = "
                "e^(-1/(2σ²)) of each summand is too small for an exact table); a larger σ, or "
                "route='published' (KLS 2021, σ >= 1/2)",
            )
        table = _convolved_table(sigma, n, reach, bits)
        inside = _trim(table.masses, table.offset, reach)[0]
        if len(inside) == 2 * reach + 1 and min(inside) > 0:
            return table
        bits *= 2


def _convolved_table(sigma: Param, n: int, reach: int, bits: int) -> _SumTable:
    """:func:`_build_sum_table` at ``bits`` fractional bits."""
    s = float(sigma)
    stages = 2 * max(n, 2).bit_length()

    def cut(k: int) -> int:
        # P(|Z_k| > W) <= 2 exp(-W^2/(2kσ^2)) <= 2^-bits / stages.
        w = math.sqrt(2 * k * s * s * (bits * math.log(2) + math.log(4 * stages))) + 1
        return math.ceil(w)

    w1 = cut(1)
    saved = iv.prec
    try:
        iv.prec = bits + 16
        half = _discrete_gaussian_half(to_interval(sigma), w1)
    finally:
        iv.prec = saved
    base = _to_fixed([*reversed(half[1:]), *half], bits)
    base_k, base_off = 1, -w1
    acc: list[int] | None = None
    acc_k, acc_off = 0, 0
    remaining = n
    while True:
        if remaining & 1:
            if acc is None:
                acc, acc_k, acc_off = base, base_k, base_off
            else:
                acc = [x >> bits for x in convolve(acc, base)]
                acc_k += base_k
                acc_off += base_off
                acc, acc_off = _trim(acc, acc_off, max(cut(acc_k), reach))
        remaining >>= 1
        if not remaining:
            break
        base = [x >> bits for x in convolve(base, base)]
        base_k *= 2
        base_off *= 2
        base, base_off = _trim(base, base_off, max(cut(base_k), reach))
    assert acc is not None
    missing = (1 << bits) - sum(acc)
    if missing < 0:  # impossible for lower bounds of a probability vector
        raise AssertionError("lower bounds exceed one")
    return _SumTable(reach, bits, acc_off, acc, missing)


#: The most fixed-point bits per entry of a table of :class:`SumOfDiscreteGaussians`: beyond, the
#: per-summand σ is so small (its ``P(±1) = e^{-1/(2σ²)}``) that the exact convolution would carry
#: megabits per entry; the sum is refused, naming ``sigma``.
MAX_SUM_TABLE_BITS = 2**17


def _edge_nats(s: float, n: int, reach: int) -> float:
    """An estimate of ``-ln P(Z = reach)`` for ``Z`` the sum of ``n`` discrete Gaussians of ``σ = s``.

    The Gaussian estimate ``reach²/(2nσ²)`` is close from σ of about 1 on, but below it the
    lattice dominates: the likeliest way to reach ``x`` is ``x`` summands at ±1 (each
    ``e^{-1/(2σ²)}``), far rarer than the Gaussian's tail (for σ = 0.042, e^{-283} per unit).
    There the exact bound of that configuration is used: ``Σ k_i²/(2σ²) + n ln N(σ)`` with the
    ``k_i`` as equal as possible (``ln N <= ln(1 + 2 r/(1 - r))``, ``r = e^{-1/(2σ²)}``), unless its
    ``n ln N`` alone exceeds the Gaussian estimate (many summands are off 0: the Gaussian regime).
    Too small an estimate left values of the table at 0 (an enclosure touching zero inside the
    support); :func:`_build_sum_table` now rebuilds then, so this only saves rebuilds.
    """
    if not s * s > 0:
        return math.inf  # σ² underflows: e^{-1/(2σ²)} is 0 to any precision a table could carry
    gauss = reach**2 / (2 * n * s * s) + math.log(math.sqrt(2 * math.pi * n) * s + 1)
    if s >= 1:
        return gauss
    inv = 1 / (2 * s * s)
    r = math.exp(-inv)
    log_norm = math.log1p(2 * r / (1 - r))
    if n * log_norm > gauss:
        return gauss  # many summands off 0: the Gaussian regime (the rebuild covers a shortfall)
    q, rem = divmod(reach, n)
    squares = (n - rem) * q * q + rem * (q + 1) ** 2
    return max(gauss, squares * inv + n * log_norm)


def _discrete_gaussian_half(sigma: Interval, width: int) -> list[Interval]:
    """``P(N_Z(0, σ^2) = x)`` for ``x = 0..width`` by the recurrence of :func:`_build_sum_table`."""
    inv_two_s2 = 1 / (2 * sigma * sigma)
    q = iv.exp(-2 * inv_two_s2)  # e^{-1/σ^2}: the ratio of consecutive factors
    factor = iv.exp(-inv_two_s2)  # e^{-(2x+1)/(2σ^2)} at x = 0
    value = 1 / normalizer(sigma)
    out = [value]
    for _ in range(width):
        value = value * factor
        factor = factor * q
        out.append(value)
    return out


@dataclass(frozen=True)
class SumOfDiscreteGaussians(LatticeNoise):
    """The sum of ``count`` independent ``N_Z(0, σ^2)``: not a discrete Gaussian.

    ``sigma`` is the per-summand (per-user) parameter. The exact table is the exact
    convolution of lower bounds in fixed point (``F`` bits, rounded down, Kronecker
    products), with windows cut where the sub-Gaussian tail (each summand is
    ``σ^2``-sub-Gaussian, CKS 2020) is below ``2^-F``. The computed values are lower
    bounds whose total ``M`` falls short of 1 by all the truncated and rounded-off mass,
    so ``true(x) <= lower(x) + (1 - M)`` at every ``x``: a certified enclosure without any
    bookkeeping of where mass was lost.
    """

    sigma: Param
    count: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", parameter("sigma", self.sigma))
        object.__setattr__(self, "count", v.integer("count", self.count, minimum=1))

    @property
    def symmetric(self) -> bool:
        return True

    @property
    def component(self) -> DiscreteGaussian:
        return DiscreteGaussian(self.sigma)

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        table = _sum_table(self.sigma, self.count, max(abs(lo), abs(hi)), iv.prec)
        bits, offset, acc, missing = table.bits, table.offset, table.masses, table.missing
        out: list[Interval] = []
        for x in range(lo, hi + 1):
            i = x - offset
            low = acc[i] if 0 <= i < len(acc) else 0
            # Exact dyadic endpoints; iv.mpf then rounds them outward to the working precision.
            ends = [mp.make_mpf(mpmath.libmp.from_man_exp(m, -bits)) for m in (low, low + missing)]
            out.append(iv.mpf(ends))
        return out

    def _sf(self, t: int) -> Interval:
        # Each summand is σ^2-sub-Gaussian (CKS 2020), so the sum is nσ^2-sub-Gaussian.
        if t <= 0:
            return iv.mpf(1)
        sigma = to_interval(self.sigma)
        return iv.exp(-(iv.mpf(t) ** 2) / (2 * self.count * sigma * sigma))

    def _cdf(self, t: int) -> Interval:
        return self._sf(-t)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        # Post-processing: Z + Δ = (X_1 + Δ) + (X_2 + ... + X_n), so D_β is at most the
        # single discrete Gaussian's, <= β Δ^2/(2σ^2) (CKS 2020); and at most β ρ for the zCDP
        # ρ of Kairouz–Liu–Steinke 2021 Prop. 13 (about n times smaller: the Hölder window of
        # a Rényi sum at order 256 shrinks from ±1600 to ±520 for n = 10, σ = 2).
        single = self.component.renyi_prior(shift, alpha)
        rho = self.rho_tail(shift, alpha)
        return RenyiPrior(single.beta, min(single.bound, single.beta * rho))

    def max_privacy_loss(self, shift: int) -> Mpf:
        return mp.zero if shift == 0 else mp.inf

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        # Kairouz–Liu–Steinke 2021 Prop. 13 (requires σ >= 1/2), else one summand's CKS bound.
        single = self.component.rho_tail(shift, alpha)
        with precision(DEFAULT_DPS):
            sigma = float_down(lower(to_interval(self.sigma)))  # less noise: a larger bound
        if shift == 0 or sigma < 0.5:
            return single
        return min(single, to_mpf(_kls_rho(sigma, self.count, shift)))

    def variance(self) -> float:
        return self.count * self.component.variance()

    @cached_property
    def _float_table(self) -> tuple[int, FloatArray]:
        n = self.count
        s = float(self.sigma)
        w = math.ceil(10 * s) + 2
        xs = np.arange(-w, w + 1)
        one = self.component.pmf(xs)
        table = np.array([1.0])
        offset = 0
        base, base_off = one, -w
        remaining = n
        while remaining:
            if remaining & 1:
                table = np.convolve(table, base)
                offset += base_off
            remaining >>= 1
            if remaining:
                base = np.convolve(base, base)
                base_off *= 2
        return offset, table

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = as_float64(x)
        offset, table = self._float_table
        idx = xs - offset
        inside = (idx >= 0) & (idx < table.size) & (xs == np.round(xs))
        out = np.zeros(xs.shape, dtype=np.float64)
        out[inside] = table[idx[inside].astype(np.int64)]
        return out

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        shape = sample_shape(size)
        total = math.prod(shape)
        out = np.zeros(total, dtype=np.int64)
        # Summands in blocks so memory stays bounded for many users.
        block = max(1, 2**22 // max(total, 1))
        done = 0
        while done < self.count:
            k = min(block, self.count - done)
            out += self.component.sample(rng, (k, total)).sum(axis=0)
            done += k
        return out.reshape(shape)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: the sum of ``count`` exact discrete Gaussians (CKS 2020 Algorithm 3)."""
        shape, total = exact_shape(rng, size)
        component = self.component
        out = np.zeros(total, dtype=np.int64)
        block = max(1, 2**22 // max(total, 1))
        done = 0
        while done < self.count:
            k = min(block, self.count - done)
            out += component.sample_exact(rng, (k, total)).sum(axis=0)
            done += k
        return as_int64(out, shape)


def _trim(table: list[int], offset: int, reach: int) -> tuple[list[int], int]:
    """Keep the entries at ``|x| <= reach`` (dropping mass only lowers the lower bounds)."""
    start = max(0, -reach - offset)
    stop = min(len(table), reach - offset + 1)
    return table[start:stop], offset + start


def _kls_rho(sigma: float, count: int, shift: int) -> float:
    """``ρ = ε²/2`` of :func:`kls_epsilon` at a scalar shift ``|shift| >= 1`` and ``σ >= 1/2``, rounded
    up to a float (the value of ``accounting.bounds.sum_discrete_gaussians_rho_kls(sigma, count,
    |shift|)``)."""
    s = v.positive("sigma", sigma)
    n = v.integer("count", count, minimum=1)
    d = abs(shift)
    with mp.workdps(_KLS_DPS):
        return float_up(kls_epsilon(mp.mpf(s), n, d * d, 1) ** 2 / 2)
