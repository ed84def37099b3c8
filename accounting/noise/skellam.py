"""The Skellam distribution: the difference of two Poisson variables, moved by an integer.

Its a-priori Rényi bounds (:meth:`Skellam.renyi_prior`, :meth:`Skellam.rho_tail`) are the closed
form of Agarwal, Kairouz & Liu 2021, Theorem 3.5 (:func:`akl_rdp`), which
:func:`accounting.bounds.skellam_rdp_akl` also evaluates (with the validation of a public bound and
the d-dimensional query).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mpmath
import numpy as np
from mpmath import iv, mp
from numpy.typing import ArrayLike

from accounting import _exact
from accounting import validate as v
from accounting._exact import Randomness
from accounting.certified import DEFAULT_DPS, Interval, Mpf, float_up, lower, precision, to_interval, upper
from accounting.errors import ParameterError
from accounting.noise.base import (
    MAX_SAMPLE_VARIANCE,
    WHY_SAMPLE,
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

__all__ = ["Skellam", "akl_rdp"]

#: The working precision (decimal digits) at which :class:`Skellam` evaluates :func:`akl_rdp` for
#: its a-priori bounds: the precision of :func:`accounting.bounds.skellam_rdp_akl`, so both round
#: the same number up to the same float.
_AKL_DPS = 50


def akl_rdp(alpha: int, variance: Mpf, l2_squared: Mpf, l1: Mpf) -> Mpf:
    """The Rényi divergence bound of Skellam noise, as an mpf at the current precision.

    Agarwal, Kairouz & Liu 2021, "The Skellam Mechanism for Differentially Private Federated
    Learning", Theorem 3.5 (Lemma 3 of Chowdhury & Zhou 2023): for an integer order ``α >= 2``,
    i.i.d. ``Sk(0, σ²)`` noise of total variance ``σ² = variance`` on each coordinate and a shift
    ``v`` with ``‖v‖₂² <= l2_squared`` and ``‖v‖₁ <= l1`` (``Δ²`` and ``Δ`` in one dimension),
    ``D_α <= αΔ2²/(2σ²) + min{((2α-1)Δ2² + 6Δ1)/(4σ⁴), 3Δ1/(2σ²)}``. The inputs are taken as
    validated (see :func:`accounting.bounds.skellam_rdp_akl`).
    """
    gauss = alpha * l2_squared / (2 * variance)
    first = ((2 * alpha - 1) * l2_squared + 6 * l1) / (4 * variance**2)
    second = 3 * l1 / (2 * variance)
    return gauss + min(first, second)


def _akl_float(alpha: int, variance: Param, shift: int) -> float:
    """:func:`akl_rdp` at a scalar shift ``|shift| >= 1``, rounded up to a float (the value of
    ``accounting.bounds.skellam_rdp_akl(alpha, variance, |shift|)``)."""
    var = v.positive("variance", variance)
    d = abs(shift)
    with mp.workdps(_AKL_DPS):
        return float_up(akl_rdp(alpha, mp.mpf(var), mp.mpf(d * d), mp.mpf(d)))


#: The largest shift at which :meth:`Skellam._poisson_shift_prior` is evaluated (see there).
_POISSON_SHIFT_MAX = 1000


@dataclass(frozen=True, init=False)
class Skellam(LatticeNoise):
    """Skellam: ``offset + N1 - N2`` with independent ``N1 ~ Poisson(μ1)``, ``N2 ~ Poisson(μ2)``.

    ``Skellam(variance, offset=0)`` is the symmetric ``Sk(offset, variance)`` of Chowdhury & Zhou
    2023 (Definition 5, whose first parameter is the mean; ``μ1 = μ2 = variance/2``; ``mean=`` is
    the keyword's old spelling). ``Skellam.from_rates(mu1, mu2, offset)`` is the asymmetric form. PMF:
    ``P(offset + k) = e^{-(μ1+μ2)} (μ1/μ2)^{k/2} I_k(2 sqrt(μ1 μ2))``.

    The exact table runs the Bessel recurrence downwards in interval arithmetic (see
    :meth:`_intervals`); tests cross-check it against :func:`mpmath.besseli`.
    """

    mu1: Param
    mu2: Param
    offset: int = field(default=0)

    @v.old_keywords(mean="offset")
    def __init__(self, variance: Param, offset: int = 0) -> None:
        half = parameter("variance", variance)
        half = half / 2
        if half < 2.2250738585072014e-308:  # a subnormal rate (or 0: Skellam(5e-324)) inverts to inf
            valid = "a variance >= 4.5e-308 (each rate, variance/2, a normal float)"
            raise ParameterError("variance", variance, valid)
        object.__setattr__(self, "mu1", half)
        object.__setattr__(self, "mu2", half)
        object.__setattr__(self, "offset", v.integer("offset", offset))

    @classmethod
    def from_rates(cls, mu1: Param, mu2: Param, offset: int = 0) -> Skellam:
        """The asymmetric Skellam ``offset + Poisson(mu1) - Poisson(mu2)``."""
        self = object.__new__(cls)
        object.__setattr__(self, "mu1", parameter("mu1", mu1))
        object.__setattr__(self, "mu2", parameter("mu2", mu2))
        object.__setattr__(self, "offset", v.integer("offset", offset))
        return self

    def __repr__(self) -> str:
        if self.mu1 == self.mu2:
            return f"Skellam(variance={self.mu1 * 2!r}, offset={self.offset})"
        return f"Skellam.from_rates(mu1={self.mu1!r}, mu2={self.mu2!r}, offset={self.offset})"

    @property
    def symmetric(self) -> bool:
        return self.mu1 == self.mu2 and self.offset == 0

    @property
    def mean(self) -> float:
        return self.offset + float(self.mu1) - float(self.mu2)

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _center(self) -> float:
        return self.mean

    @staticmethod
    def _bessel_ratio(k: int, z: Interval) -> Interval:
        """An enclosure of ``r_k = I_{k+1}(z) / I_k(z)`` by its continued fraction.

        ``r_ν = 1 / (2(ν+1)/z + r_{ν+1})`` and ``0 < r_ν < 1``; the map is decreasing and
        contracting (factor about ``r^2``), so iterating it from ``[0, 1]`` at a deep
        order ``m`` encloses ``r_k`` ever more tightly. The depth doubles until the
        enclosure is tight to the working precision.
        """
        depth = 32
        tight = mp.ldexp(1, -iv.prec + 12)
        while True:
            r = iv.mpf([0, 1])
            for nu in range(k + depth, k - 1, -1):
                r = 1 / (2 * (nu + 1) / z + r)
            if upper(r) - lower(r) <= tight * upper(r) or depth > 10**7:
                return r
            depth *= 2

    def _intervals(self, lo: int, hi: int) -> list[Interval]:
        """Exact PMF enclosures by the Bessel recurrence, in interval arithmetic throughout.

        With ``z = 2 sqrt(μ1 μ2)`` and ``t = sqrt(μ1/μ2)``, ``P(offset + k) ∝ t^k I_|k|(z)``.
        ``J_k = I_k / I_K`` follows from ``J_K = 1``, ``J_{K+1} = r_K`` (continued fraction)
        and the downward recurrence ``J_{k-1} = J_{k+1} + (2k/z) J_k``: a positive
        combination, stable and tight. The PMF is ``t^k J_|k|`` over its total, whose parts
        beyond ``|k| = K`` are geometric series: ``r_k`` decreases in ``k`` (the Turán-type
        inequality ``I_ν^2 > I_{ν-1} I_{ν+1}``, Thiruvenkatachar–Nanjundiah 1951), so the
        ratio of consecutive terms stays below ``t r_K`` (resp. ``r_K / t``). No special
        function of a library is trusted: every step is interval arithmetic.
        """
        mu1 = to_interval(self.mu1)
        mu2 = to_interval(self.mu2)
        z = 2 * iv.sqrt(mu1 * mu2)
        t = iv.mpf(1) if self.mu1 == self.mu2 else iv.sqrt(mu1 / mu2)
        ks = range(lo - self.offset, hi - self.offset + 1)
        # Start where the Chernoff tails say the mass beyond is negligible (no doubling later).
        cut = mp.ldexp(1, -iv.prec - 10)
        reach = 1
        while max(upper(self._chernoff(reach, a, b)) for a, b in self._rate_pairs()) > cut:
            reach *= 2
        big = max(abs(ks[0]), abs(ks[-1]), reach)
        while True:
            r = self._bessel_ratio(big, z)
            # The tails beyond ``big`` are geometric series of ratio t r_K (resp. r_K / t).
            if max(upper(t * r), upper(r / t)) < 1:
                break
            big *= 2
        log_t = iv.log(t)
        negligible = mp.ldexp(1, -iv.prec - 8)
        while True:
            jlo, jhi, jexp = self._recurrence(big, r, z)

            def j(k: int, jlo: list[int] = jlo, jhi: list[int] = jhi, jexp: list[int] = jexp) -> Interval:
                if not jexp[k]:
                    return iv.mpf([jlo[k], jhi[k]])  # ints, rounded outward by iv
                ends = [mp.make_mpf(mpmath.libmp.from_man_exp(m, jexp[k])) for m in (jlo[k], jhi[k])]
                return iv.mpf(ends)

            if self.mu1 == self.mu2:
                one = iv.mpf(1)
                weight = {-big: one, big: one}
                if not jexp[0]:  # one scale throughout: exact integer sums
                    total = iv.mpf([jlo[0] + 2 * sum(jlo[1 : big + 1]), jhi[0] + 2 * sum(jhi[1 : big + 1])])
                else:
                    total = j(0) + 2 * sum((j(k) for k in range(1, big + 1)), iv.mpf(0))
            else:
                weight = {k: iv.exp(k * log_t) for k in range(-big, big + 1)}
                total = sum((weight[k] * j(abs(k)) for k in range(-big, big + 1)), iv.mpf(0))
            tails = j(big) * (weight[big] * (t * r) / (1 - t * r) + weight[-big] * (r / t) / (1 - r / t))
            # Grow the table until the mass beyond it is below the working precision.
            if upper(tails) <= negligible * lower(total):
                break
            big *= 2
            r = self._bessel_ratio(big, z)
        norm = total + iv.mpf([0, upper(tails)])
        if self.mu1 == self.mu2:
            return [j(abs(k)) / norm if abs(k) <= big else iv.mpf(0) for k in ks]
        return [weight[k] * j(abs(k)) / norm if abs(k) <= big else iv.mpf(0) for k in ks]

    @staticmethod
    def _recurrence(big: int, r: Interval, z: Interval) -> tuple[list[int], list[int], list[int]]:
        """Integer enclosures ``lo_k 2^{e_k} <= 2^F J_k <= hi_k 2^{e_k}`` for ``k = 0..big+1``.

        ``J_big = 1``, ``J_{big+1} = r``. The recurrence ``J_{k-1} = J_{k+1} + (2k/z) J_k`` has
        positive coefficients, so running it on lower bounds rounded down and on upper bounds
        rounded up (fixed point with ``F`` bits beyond the working precision, exact Python
        integers) encloses every ``J_k``: the interval arithmetic of mpmath, at a fraction of
        the cost. ``J_k`` grows super-exponentially as ``k`` falls far below ``big`` when
        ``big >> z``; the running pair is then shifted right (block floating point, exponents
        ``e_k``) so the integers stay about ``2F`` bits long.
        """
        bits = iv.prec + 24
        to_int = mpmath.libmp.to_int
        shift = mpmath.libmp.mpf_shift
        scaled = iv.mpf(2) ** bits / z
        c_lo, c_hi = to_int(lower(scaled)._mpf_, "f"), to_int(upper(scaled)._mpf_, "c")
        lo = [0] * (big + 2)
        hi = [0] * (big + 2)
        exps = [0] * (big + 2)
        lo[big] = hi[big] = 1 << bits
        lo[big + 1] = to_int(shift(lower(r)._mpf_, bits), "f")
        hi[big + 1] = to_int(shift(upper(r)._mpf_, bits), "c")
        # The returned J_k keep the scale they were computed at; only the running pair is
        # shifted. (Shifting the stored J_k too lost every bit of J_1 = I_1/I_K relative to J_0
        # when z is tiny: Skellam of variance 1e-300 had P(X = ±1) enclosed in [0, 3e-81].)
        out_lo, out_hi = lo[:], hi[:]
        limit = 3 * bits
        e = 0
        for k in range(big, 0, -1):
            lo[k - 1] = lo[k + 1] + ((2 * k * c_lo * lo[k]) >> bits)
            hi[k - 1] = hi[k + 1] - ((-2 * k * c_hi * hi[k]) >> bits)
            exps[k - 1] = e
            out_lo[k - 1], out_hi[k - 1] = lo[k - 1], hi[k - 1]
            if hi[k - 1].bit_length() > limit:
                s = hi[k - 1].bit_length() - 2 * bits
                e += s
                for i in (k - 1, k):
                    lo[i] >>= s
                    hi[i] = -((-hi[i]) >> s)
        return out_lo, out_hi, exps

    def _rate_pairs(self) -> tuple[tuple[Param, Param], tuple[Param, Param]]:
        return ((self.mu1, self.mu2), (self.mu2, self.mu1))

    def _chernoff(self, s: int, mu_up: Param, mu_down: Param) -> Interval:
        """``P(N_up - N_down >= s) <= exp(μu(e^θ-1) + μd(e^-θ-1) - θs)`` at the optimal θ."""
        a = to_interval(mu_up)
        b = to_interval(mu_down)
        am, bm = mp.mpf(a.mid), mp.mpf(b.mid)
        e_theta = iv.mpf((s + mp.sqrt(s * s + 4 * am * bm)) / (2 * am))
        theta = iv.log(e_theta)
        return iv.exp(a * (e_theta - 1) + b * (1 / e_theta - 1) - theta * s)

    def _sf(self, t: int) -> Interval:
        s = t - self.offset
        if s <= float(self.mu1) - float(self.mu2):
            return iv.mpf(1)
        return self._chernoff(s, self.mu1, self.mu2)

    def _cdf(self, t: int) -> Interval:
        s = self.offset - t
        if s <= float(self.mu2) - float(self.mu1):
            return iv.mpf(1)
        return self._chernoff(s, self.mu2, self.mu1)

    def renyi_prior(self, shift: int, alpha: float) -> RenyiPrior:
        # Agarwal–Kairouz–Liu 2021 Thm 3.5 at the integer order β = max(2, ceil(2α)), for the
        # symmetric part of variance 2 min(μ1, μ2) (the rest is independent post-processing),
        # or the Poisson shift bound (:meth:`_poisson_shift_prior`) where it is smaller: the
        # AKL bound grows as 1/variance (Skellam of variance 1e-300: about 1e300, a Hölder
        # window beyond any exact sum; the shift bound is 691.5).
        beta = max(2, math.ceil(2 * alpha))
        if shift == 0:
            return RenyiPrior(beta, mp.zero)
        variance = 2 * min(self.mu1, self.mu2)
        akl = mp.mpf(_akl_float(beta, variance, shift))
        return RenyiPrior(beta, min(akl, self._poisson_shift_prior(shift, beta)))

    def _poisson_shift_prior(self, shift: int, beta: int) -> Mpf:
        """An upper bound on ``D_β(X + Δ || X)`` from the Poisson part that the shift moves.

        ``X + Δ = offset + (N1 + Δ) - N2`` (``Δ > 0``; ``N2 + |Δ|`` for ``Δ < 0``), so by
        post-processing ``D_β(X + Δ || X) <= D_β(N + Δ || N)`` for ``N ~ Poisson(μ)``, whose sum
        is ``E[((K+1)···(K+Δ)/μ^Δ)^{β-1}]`` over ``K ~ Poisson(μ)``; with
        ``(K+1)···(K+Δ) <= Δ! e^{ΔK}`` and the Poisson MGF,
        ``D_β <= ln(Δ!/μ^Δ) + μ(e^{Δ(β-1)} - 1)/(β - 1)`` (rounded up).

        For shifts beyond :data:`_POISSON_SHIFT_MAX` the bound is ``inf`` (not computed): there
        ``Δ!`` alone takes seconds (a minute at 10^7), and as ``μ >= 5e-324 > e^{-745}`` its last
        term exceeds ``e^{Δ(β-1) - 745}/(β - 1) > e^{250}``, so it never beats the AKL bound.
        """
        d = abs(shift)
        if d > _POISSON_SHIFT_MAX:
            return mp.inf
        rate = self.mu1 if shift > 0 else self.mu2
        with precision(DEFAULT_DPS):
            mu = to_interval(rate)
            value = iv.log(iv.mpf(math.factorial(d))) - d * iv.log(mu)
            value += mu * (iv.exp(iv.mpf(d * (beta - 1))) - 1) / (beta - 1)
            return upper(value)

    def max_privacy_loss(self, shift: int) -> Mpf:
        # I_{k-Δ}(z)/I_k(z) grows without bound in k: no pure DP.
        return mp.zero if shift == 0 else mp.inf

    def rho_tail(self, shift: int, alpha: float) -> Mpf:
        """``sup_{a >= alpha} D_a/a`` from Agarwal–Kairouz–Liu 2021 Thm 3.5.

        For ``a`` in ``(k-1, k]`` (integer ``k >= 2``), ``D_a <= D_k <= AKL(k)``, so
        ``D_a/a < AKL(k)/(k-1)``. With ``c = Δ²/(2σ²)``, ``AKL(k) = min(kC + D, kc + B)`` where
        ``C = c + Δ²/(2σ⁴)``, ``D = (6Δ - Δ²)/(4σ⁴)`` and ``B = 3Δ/(2σ²)`` (the first argument
        of the min *grows* with ``k``), so ``AKL(k)/(k-1)`` is the minimum of
        ``C + (C + D)/(k-1)`` and ``c + (c + B)/(k-1)``; both ``C + D`` and ``c + B`` are
        positive, so it decreases in ``k`` and the first ``k`` bounds all later ones.
        """
        if shift == 0:
            return mp.zero
        k = max(2, math.ceil(alpha))
        variance = 2 * min(self.mu1, self.mu2)
        first = mp.mpf(_akl_float(k, variance, shift)) / max(k - 1, alpha)
        nxt = mp.mpf(_akl_float(k + 1, variance, shift)) / k
        return max(first, nxt)

    def variance(self) -> float:
        return float(self.mu1) + float(self.mu2)

    def pmf(self, x: ArrayLike) -> FloatArray:
        xs = as_float64(x)
        import scipy.stats  # here, not at module level: importing it takes about a second

        out = scipy.stats.skellam.pmf(xs - self.offset, float(self.mu1), float(self.mu2))
        return np.asarray(out, dtype=np.float64)

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> IntArray:
        shape = sample_shape(size)
        v.at_most("variance", self.variance(), MAX_SAMPLE_VARIANCE, WHY_SAMPLE)
        n1 = rng.poisson(float(self.mu1), shape)
        n2 = rng.poisson(float(self.mu2), shape)
        return (self.offset + n1 - n2).astype(np.int64)

    def sample_exact(self, rng: Randomness, size: int | tuple[int, ...]) -> IntArray:
        """Exact draws: ``offset + N1 - N2`` with exact Poissons of the rational rates.

        The Poisson sampler costs ``O(μ)`` uniform draws per variate (see
        :func:`accounting._exact.poisson`), so large variances are slow; :meth:`sample` is the
        fast floating-point alternative (numpy's Poisson, as in Agarwal et al. 2021).
        """
        shape, total = exact_shape(rng, size)
        n1 = _exact.poisson(rng, _exact.rational("mu1", self.mu1), total)
        n2 = _exact.poisson(rng, _exact.rational("mu2", self.mu2), total)
        return as_int64(self.offset + n1 - n2, shape)
