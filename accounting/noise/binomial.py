"""Binomial noise: ``Binomial(trials, p)`` and the centered binomial, and the certified ``ln m!``
their exact PMF starts from."""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike

from accounting import _exact
from accounting import validate as v
from accounting._exact import Randomness
from accounting.certified import Interval, Mpf, to_interval, upper
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
    sample_shape,
)

__all__ = ["EXACT_ANCHOR_BITS", "Binomial", "CenteredBinomial", "ln_factorial"]


@lru_cache(maxsize=1)
def _even_bernoulli_numbers(count: int) -> tuple[Fraction, ...]:
    """``B_2, B_4, ..., B_{2 count}`` exactly (Akiyama–Tanigawa; ``B_1 = +1/2`` is not used)."""
    out: list[Fraction] = []
    row: list[Fraction] = []
    for m in range(2 * count + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        if m >= 2 and m % 2 == 0:
            out.append(row[0])
    return tuple(out)


#: The most terms of Stirling's series :func:`ln_factorial` sums (``B_2 .. B_60``): from ``m = 256``
#: on they reach an error below ``10^-100``.
_STIRLING_TERMS = 30


def ln_factorial(m: int) -> Interval:
    """``ln m!`` as an :mod:`mpmath.iv` interval at the current precision, certified.

    Exact (the integer ``m!``, rounded outward) below 256; beyond, Stirling's series for
    ``ln Γ(m + 1)`` with as many terms as the precision needs. DLMF 5.11.1 and §5.11(ii): for real
    ``x > 0`` the error of the series truncated after the ``B_{2K}`` term is at most the first
    omitted term, ``|B_{2K+2}| / ((2K+2)(2K+1) x^{2K+1})``, which is added as a symmetric interval.
    (:func:`mpmath.iv.loggamma` is not used: it does not always round outward.)
    """
    if m < 256:
        return iv.log(iv.mpf(math.factorial(m)))
    x = iv.mpf(m + 1)
    s = (x - iv.mpf(0.5)) * iv.log(x) - x + iv.log(2 * iv.pi) / 2
    bernoulli = _even_bernoulli_numbers(_STIRLING_TERMS + 1)
    floor = mp.ldexp(1, -iv.prec)
    for k in range(1, _STIRLING_TERMS + 1):
        s += to_interval(bernoulli[k - 1] / (2 * k * (2 * k - 1))) / x ** (2 * k - 1)
        rem = upper(abs(to_interval(bernoulli[k] / ((2 * k + 2) * (2 * k + 1)))) / x ** (2 * k + 1))
        if rem < floor:
            break
    return s + iv.mpf([-rem, rem])


#: The PMF's first value is the exact rational ``C(n, k) a^k (d-a)^(n-k) / d^n`` (``p = a/d``) while
#: ``n`` times the bits of ``d`` is at most this (``math.comb(n, n/2)``: 2 ms at ``n = 10^4``, 0.1 s
#: at ``10^5``, 6 s at ``10^6``); beyond, it is enclosed through :func:`ln_factorial`.
EXACT_ANCHOR_BITS = 2**18


class _BinomialLaw(LatticeNoise):
    """``offset + Binomial(trials, p)``: the PMF, tails and samplers of :class:`Binomial` and
    :class:`CenteredBinomial` (its ``p = 1/2`` case moved by ``-floor(trials/2)``), written once."""

    trials: int

    @property
    @abstractmethod
    def _p(self) -> Fraction:
        """The success probability as an exact rational."""

    @property
    @abstractmethod
    def _offset(self) -> int:
        """The value of the noise at zero successes."""

    def support(self) -> tuple[float, float]:
        return (float(self._offset), float(self._offset + self.trials))

    def _center(self) -> float:
        return float(self._offset + self.trials * self._p)

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        """The first value in the support from :meth:`_anchor`, then the exact ratio
        ``P(k+1)/P(k) = (n-k)/(k+1) · p/(1-p)`` upwards (one interval product per point)."""
        n, low, p = self.trials, self._offset, self._p
        odds = None if p == Fraction(1, 2) else to_interval(p / (1 - p))  # at p = 1/2 exactly 1
        out: list[Interval] = []
        value: Interval | None = None
        for x in range(lo, hi + 1):
            k = x - low
            if k < 0 or k > n:
                out.append(iv.mpf(0))
                continue
            if value is None:
                value = self._anchor(k)
            out.append(value)
            value = value * (n - k) / (k + 1)
            if odds is not None:
                value = value * odds
        return out

    def _anchor(self, k: int) -> Interval:
        """``C(n, k) p^k (1-p)^(n-k)`` at the current precision: the exact rational when it is
        small (:data:`EXACT_ANCHOR_BITS`), else ``exp`` of certified log-factorials and logs,
        evaluated with enough extra bits that the ``n ln n``-sized terms cancel without loss."""
        n, p = self.trials, self._p
        a, d = p.numerator, p.denominator
        if n * d.bit_length() <= EXACT_ANCHOR_BITS:
            # Exact integers (iv.loggamma does not always round outward); iv rounds them outward.
            return iv.mpf(math.comb(n, k) * a**k * (d - a) ** (n - k)) / iv.mpf(d) ** n
        saved = iv.prec
        iv.prec = saved + 2 * n.bit_length() + 16
        try:
            log_value = ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
            if k:
                log_value += k * iv.log(to_interval(p))
            if n - k:
                log_value += (n - k) * iv.log(to_interval(1 - p))
            return iv.exp(log_value)
        finally:
            iv.prec = saved

    def _chernoff(self, k: int) -> Interval:
        """``exp(-n KL(k/n || p))``: Chernoff's bound on ``P(K >= k)`` for ``k >= np`` and on
        ``P(K <= k)`` for ``k <= np``, ``K ~ Binomial(n, p)`` (Hoeffding 1963, Theorem 1)."""
        n, p = self.trials, self._p
        exponent = iv.mpf(0)
        if k:
            exponent += k * (iv.log(iv.mpf(k)) - iv.log(iv.mpf(n) * to_interval(p)))
        if n - k:
            exponent += (n - k) * (iv.log(iv.mpf(n - k)) - iv.log(iv.mpf(n) * to_interval(1 - p)))
        return iv.exp(-exponent)

    def _sf(self, t: int) -> Interval:
        k = t - self._offset
        if k <= self.trials * self._p:
            return iv.mpf(1)
        return self._chernoff(k)

    def _cdf(self, t: int) -> Interval:
        k = t - self._offset
        if k >= self.trials * self._p:
            return iv.mpf(1)
        return self._chernoff(k)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        return RenyiPrior(math.inf, self.max_privacy_loss(shift))

    def max_privacy_loss(self, shift: int) -> Mpf:
        return mp.inf if shift else mp.zero  # X + shift has mass outside the support of X

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        return self.max_privacy_loss(shift)

    def variance(self) -> float:
        p = self._p
        return float(self.trials * p * (1 - p))

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = as_float64(x)
        import scipy.stats  # here, not at module level: importing it takes about a second

        out = scipy.stats.binom.pmf(xs - self._offset, self.trials, float(self._p))
        return np.asarray(out, dtype=np.float64)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        return (rng.binomial(self.trials, float(self._p), sample_shape(size)) + self._offset).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws from fair random bits only (:func:`accounting._exact.binomial`), plus the offset."""
        shape, total = exact_shape(rng, size)
        return as_int64(_exact.binomial(rng, self.trials, self._p, total) + self._offset, shape)


@dataclass(frozen=True)
class Binomial(_BinomialLaw):
    """``Binomial(trials, p)`` on ``{0, ..., trials}``: the noise of the shuffle summation protocols.

    ``P(k) = C(n, k) p^k (1-p)^(n-k)``; mean ``np``, variance ``np(1-p)``. Log-concave, and not
    symmetric (its support is ``[0, n]``): a mechanism adding it is accounted for both shifts
    ``±Δ`` (:class:`~accounting.mechanisms.AdditiveNoise`), which differ unless ``p = 1/2``.
    ``p`` is used as the exact rational it is (a float is the dyadic rational it stores; pass a
    :class:`fractions.Fraction` for ``1/3``). :class:`CenteredBinomial` is ``Binomial(n, 1/2)``
    moved to ``-floor(n/2)`` and shares every computation with it.

    The exact PMF starts from :meth:`_anchor` (an exact rational for small ``n``, else certified
    log-factorials, :func:`ln_factorial`) and follows the exact ratio recurrence, so its cost is
    the window's length whatever ``n``; tails by Chernoff's bound; ``sample_exact`` uses fair
    random bits only (:func:`accounting._exact.binomial`).
    """

    trials: int
    p: Param = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "trials", v.integer("trials", self.trials, minimum=1))
        checked = v.open_unit("p", self.p)
        if isinstance(self.p, Fraction):
            if not 0 < self.p < 1:
                raise ParameterError("p", self.p, "a real number in the open interval (0, 1)")
            return
        object.__setattr__(self, "p", checked)

    @property
    def _p(self) -> Fraction:
        return Fraction(self.p)

    @property
    def _offset(self) -> int:
        return 0


@dataclass(frozen=True)
class CenteredBinomial(_BinomialLaw):
    """``Binomial(trials, 1/2) - floor(trials/2)``: binomial noise on the integers.

    The support is ``[-floor(n/2), ceil(n/2)]``; the mean is 0 for even ``trials`` and 1/2
    for odd. The ``p = 1/2`` case of :class:`Binomial`, moved: the same PMF (``C(n, k)/2^n``
    exactly for ``n`` up to about 10^5, then certified log-factorials), tails and samplers.
    """

    trials: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "trials", v.integer("trials", self.trials, minimum=1))

    @property
    def symmetric(self) -> bool:
        return self.trials % 2 == 0

    @property
    def _p(self) -> Fraction:
        return Fraction(1, 2)

    @property
    def _offset(self) -> int:
        return -(self.trials // 2)
