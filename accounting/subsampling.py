"""Subsampled releases: Poisson sampling and sampling without replacement, certified.

A subsampled release runs a mechanism on a random batch of the dataset:

* :class:`PoissonSampled` — each record enters the batch independently with probability ``q``
  (DP-SGD; client sampling in federated learning);
* :class:`SampledWithoutReplacement` — a batch of fixed size ``m`` drawn uniformly, ``q = m/n``.

**Sensitivity convention** (the one of ``dp_accounting``): the mechanism's sensitivity ``Δ`` is
the *contribution bound of one record*, ``|f(S ∪ {x}) - f(S)| <= Δ`` for every batch ``S``. So a
record moves the released sum by at most ``Δ`` when it is added or removed, and by ``2Δ`` when it
is replaced by another.

**Dominating pairs.** Every answer is the answer of a pair ``(P, Q)`` of output laws that
dominates every neighbouring pair (Zhu, Dong & Wang 2022, "Optimal accounting of differential
privacy via characteristic function": by their composition theorem for dominating pairs, a
dominating pair of each mechanism of an adaptive composition gives one of the composition).
With ``X`` the noise (for a distributed sum, the sum of the shares, see below) the pairs are the
:class:`MixturePair`\\ s

=====================  ====================  ==========================================================
sampling               relation              pairs ``(P, Q)``
=====================  ====================  ==========================================================
Poisson                add-remove            remove ``((1-q)X + q(X+Δ), X)``; add ``(X, (1-q)X + q(X+Δ))``
Poisson                replace-one           ``((1-q)X + q(X+Δ), (1-q)X + q(X-Δ))``
without replacement    replace-one           the same pair as Poisson replace-one
without replacement    add-remove            remove ``((1-q)X + q(X+2Δ), X)``; add the reverse
=====================  ====================  ==========================================================

* *Poisson, add-remove* (Zhu, Dong & Wang 2022, their Poisson-subsampling pairs; the pairs of
  ``dp_accounting``'s PLD accountant): with probability ``1 - q`` the record is not sampled and
  both outputs have the law of ``f(S) + X``; otherwise the larger dataset adds ``f(x)``,
  ``|f(x)| <= Δ``. The pair ``(X + s, X)`` with ``|s| <= Δ`` is a post-processing of
  ``(X + Δ, X)`` for symmetric log-concave ``X`` (a monotone likelihood ratio; see :mod:`accounting.pld`),
  and the kernel that maps one to the other maps the mixtures to the mixtures. Each direction is
  composed over the whole ledger separately and the larger δ is taken (Zhu–Dong–Wang: under
  add-remove every neighbouring pair of the composition is of one direction for all mechanisms).
* *Poisson, replace-one*: the pair of ``dp_accounting``'s ``REPLACE_ONE`` and of Lebeda, Regehr,
  Kamath & Steinke 2024 ("Avoiding pitfalls for privacy accounting of subsampled mechanisms
  under composition"). That it dominates every pair
  ``((1-q)X + q(X+a), (1-q)X + q(X+b))`` with ``|a|, |b| <= Δ`` is taken from that work; it is
  checked numerically for lattice noise by this module's tests, not proved here.
* *Without replacement, replace-one*: the replaced record (same index) is in the batch with
  probability ``q``; conditionally on the rest of the batch the pair is the one above.
* *Without replacement, add-remove* (derived here): let the larger dataset be ``D' = D ∪ {x}``.
  A uniform ``m``-subset of ``D'`` contains ``x`` with probability ``q' = m/|D'|``, and then its
  other ``m - 1`` records are a uniform ``(m-1)``-subset ``S`` of ``D``; a uniform ``m``-subset of
  ``D`` is ``S ∪ {y}`` with ``y`` uniform outside ``S``. Coupling the two through ``(S, y)``,
  ``M(D') = E_{S,y}[(1-q') N + q' (N + f(x) - f(y))]`` and ``M(D) = E_{S,y}[N]`` with
  ``N = f(S) + f(y) + X``: a mixture over ``(S, y)``, with the same weights, of subsampled pairs
  whose shift ``f(x) - f(y)`` is at most ``2Δ`` (triangle inequality). By joint convexity of the
  hockey-stick divergence each ``H_{e^ε}`` of ``(M(D'), M(D))`` is at most that of
  ``((1-q')X + q'(X+2Δ), X)``, and ``q' <= q`` may be replaced by ``q``: the hockey-stick
  divergence of ``((1-w)Q + wP, Q)`` is convex in ``w`` and zero at ``w = 0`` for ``ε >= 0``,
  hence nondecreasing (for ``ε < 0`` the same holds of the reversed pair). So ``rate`` need only
  be an upper bound on ``m`` over the size of the *larger* dataset. The shift ``2Δ`` makes this
  pair markedly worse than Poisson's at the same ``q`` (Lebeda et al. 2024 find an order of
  magnitude in ε for DP-SGD-like parameters).

With ``q = 1`` the pairs are the unsampled mechanism's: ``(X + Δ, X)`` under add-remove (Poisson),
``(X + 2Δ, X)`` under replace-one (a replaced record moves the sum by ``2Δ``).

**Distributed sums** (Kairouz, Liu & Steinke 2021, the distributed discrete Gaussian, and the
Skellam and Pólya shares of :class:`~accounting.mechanisms.DistributedSum`): the noise is the
sum of the shares of the clients that take part.

* Without replacement, ``users`` is the batch size ``m``: every released sum holds exactly ``m``
  shares, in both neighbouring datasets and under both relations, so ``X`` is the sum of ``m``
  shares.
* Poisson: the batch size is random, so ``users`` must be a *guaranteed lower bound* on the
  number of shares in every released sum (a protocol that tops up with dummy clients, or
  refuses to release a smaller sum). Under replace-one both datasets have the same
  participants but one, so every conditional pair is a subsampled pair of ``X_k`` with
  ``k >= users`` shares, a post-processing (adding the extra shares) of the pair of ``X_users``.
  Under add-remove the removed record takes its own share along, the two laws have different
  noise, and no dominating pair is certified: refused (:class:`~accounting.errors.UnsupportedEventError`).

**Answers.** ``epsilon``, ``delta`` and ``rdp`` take the neighbouring relation explicitly and
return certified :class:`~accounting.certified.Enclosure`\\ s. Lattice noise is answered by
certified window sums over the mixture pair (:mod:`accounting.divergence`, with
:class:`LatticeMixture` for the sides); continuous Gaussian and Laplace noise by the exact
threshold form of the hockey-stick divergence of a pair with a monotone privacy loss. Every
mixture pair here has a nondecreasing loss ``L(x) = ln(P(x)/Q(x))``: with ``ρ_s(x) = f(x-s)/f(x)``
(nondecreasing in ``x`` for ``s >= 0`` and nonincreasing for ``s <= 0`` when the density ``f`` is
log-concave), ``P/Q = ((1-α) + α ρ_a)/((1-β) + β ρ_b)`` with ``a >= 0 >= b`` has a nondecreasing
numerator and a nonincreasing denominator. The ``add`` direction is written with ``x -> -x``
(``X`` is symmetric) so that it has that form too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import iv, mp
from numpy.typing import NDArray

from accounting import validate as v
from accounting.balls import interval_of
from accounting.certified import (
    Enclosure,
    Interval,
    Mpf,
    exact_fraction,
    log1p,
    lower,
    precision,
    to_interval,
    upper,
)
from accounting.divergence import epsilon_for_delta, hockey_stick, mixture_renyi
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError, UnsupportedEventError
from accounting.lattice_mixture import LatticeMixture
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.mechanisms.base import max_enclosure
from accounting.mechanisms.gaussian import sampled_gaussian_rdp
from accounting.mixture_cells import cell_masses, gaussian_losses, gaussian_masses
from accounting.monotone import float_window, inverse_float, threshold_delta, threshold_epsilon
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    DEFAULT_DPS,
    Gaussian,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
    Shifted,
)
from accounting.special import erfc as _erfc

__all__ = [
    "SAMPLINGS",
    "LatticeMixture",
    "MixturePair",
    "PoissonSampled",
    "SampledWithoutReplacement",
    "sampled",
]

FloatArray = NDArray[np.float64]

#: The largest integer order whose Rényi divergence is summed term by term (binomial expansion).
_MAX_INTEGER_ORDER = 10_000


# ---------------------------------------------------------------------------------------
# Certified tails of the continuous noise
# ---------------------------------------------------------------------------------------


def _small_tail(noise: Gaussian | Laplace, z: Interval, scale: Interval) -> tuple[Interval, bool]:
    """The smaller tail of ``X`` at ``z``: ``(P(X > z), True)`` when ``z >= 0``, else ``(P(X <= z), False)``.

    ``scale`` is ``σ√2`` for the Gaussian and ``b`` for Laplace noise (an enclosure). Returning
    the smaller side keeps the relative precision of a difference of tails.
    """
    mid = (lower(z) + upper(z)) / 2
    upper_side = mid >= 0
    w = z if upper_side else -z  # P(X <= z) = P(X > -z): X is symmetric
    if isinstance(noise, Gaussian):
        tail = _erfc(w / scale) / 2
    else:
        w_lo, w_hi = lower(w), upper(w)
        if w_lo >= 0:
            tail = iv.exp(-w / scale) / 2
        else:  # an interval straddling 0 (only at a kink): the hull of both branches
            left = 1 - iv.exp(iv.mpf([w_lo, 0]) / scale) / 2
            right = iv.exp(-iv.mpf([0, max(mp.zero, w_hi)]) / scale) / 2
            tail = iv.mpf([min(lower(left), lower(right)), max(upper(left), upper(right))])
    return tail, upper_side


def _tail_scale(noise: Gaussian | Laplace) -> Interval:
    """``σ√2`` (Gaussian) or ``b`` (Laplace) at the current precision: the scale of :func:`_small_tail`."""
    if isinstance(noise, Gaussian):
        return to_interval(noise.sigma) * iv.sqrt(2)
    return to_interval(noise.scale)


_ONE = iv.mpf(1)


def _clamped(mass: Interval) -> Interval:
    """``mass`` cut at 0 (a difference of tails whose enclosure reaches below 0)."""
    return mass if lower(mass) >= 0 else iv.mpf([0, max(mp.zero, upper(mass))])


def _fraction(name: str, value: object) -> Fraction:
    """A real validated by :mod:`accounting.validate`, as the exact rational it stores."""
    v.real(name, value)
    return exact_fraction(value, name)


# ---------------------------------------------------------------------------------------
# The mixture pair
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MixturePair:
    """The pair ``P = (1-α)X + α(X + a)``, ``Q = (1-β)X + β(X + b)`` with ``a >= 0 >= b``.

    ``X`` is symmetric and log-concave (continuous :class:`~accounting.noise.Gaussian` or
    :class:`~accounting.noise.Laplace`, or lattice noise), so the privacy loss
    ``L(x) = ln(P(x)/Q(x))`` is nondecreasing in ``x`` (module docstring). Special cases: the
    shift pair ``(X + Δ, X)`` (``α = 1``, ``β = 0``), the subsampled pairs of the module table,
    and their reverses (:meth:`reversed`).

    Parameters
    ----------
    noise : NoiseDistribution
        ``X``.
    p_weight, q_weight : Fraction
        ``α`` and ``β`` in ``[0, 1]`` (exact rationals; a float is the rational it stores).
    p_shift, q_shift : float
        ``a >= 0`` and ``b <= 0`` (integers for lattice noise).
    """

    noise: NoiseDistribution
    p_weight: Fraction
    p_shift: float
    q_weight: Fraction = Fraction(0)
    q_shift: float = 0.0

    def __post_init__(self) -> None:
        noise = self.noise
        lattice = isinstance(noise, LatticeNoise)
        if not (isinstance(noise, Gaussian | Laplace) or lattice):
            raise ParameterTypeError("noise", noise, "Gaussian, Laplace or lattice noise")
        if isinstance(noise, LatticeNoise) and not (noise.symmetric and noise.log_concave):
            raise UnsupportedEventError(
                f"noise {noise!r} is not symmetric and log-concave: a mixture pair of it has no "
                "monotone privacy loss and no single dominating pair is certified (use the RDP route)"
            )
        for name, w in (("p_weight", self.p_weight), ("q_weight", self.q_weight)):
            weight = _fraction(name, w)
            if not 0 <= weight <= 1:
                raise ParameterError(name, w, "a real number in [0, 1]")
            object.__setattr__(self, name, weight)
        shift = v.integer if lattice else v.real
        a = shift("p_shift", self.p_shift)
        b = shift("q_shift", self.q_shift)
        if a < 0:
            raise ParameterError("p_shift", self.p_shift, "a real number >= 0")
        if b > 0:
            raise ParameterError("q_shift", self.q_shift, "a real number <= 0")
        object.__setattr__(self, "p_shift", a)
        object.__setattr__(self, "q_shift", b)

    # -- structure --------------------------------------------------------------------
    @property
    def lattice(self) -> bool:
        """Whether ``X`` is lattice noise."""
        return isinstance(self.noise, LatticeNoise)

    def reversed(self) -> MixturePair:
        """The pair ``(Q, P)`` written with ``x -> -x``: ``(1-β)X + β(X - b)`` against ``(1-α)X + α(X - a)``.

        Its loss at ``-x`` is ``-L(x)``; hockey-stick and Rényi divergences are unchanged by the
        reflection.
        """
        zero: float = 0 if self.lattice else 0.0
        return MixturePair(self.noise, self.q_weight, zero - self.q_shift, self.p_weight, zero - self.p_shift)

    @property
    def shift_pair(self) -> tuple[LatticeNoise, int] | None:
        """``(X, Δ)`` when the pair is the plain shift pair ``(X + Δ, X)`` of lattice noise."""
        if self.lattice and self.p_weight == 1 and self.q_weight == 0:
            assert isinstance(self.noise, LatticeNoise)
            return self.noise, int(self.p_shift)
        return None

    def sides(self) -> tuple[LatticeNoise, LatticeNoise]:
        """``(P, Q)`` as lattice distributions (lattice noise only)."""
        if not isinstance(self.noise, LatticeNoise):
            raise UnsupportedError(
                "sides() is for lattice noise; continuous pairs are answered in closed form"
            )
        return _side(self.noise, self.p_weight, int(self.p_shift)), _side(
            self.noise, self.q_weight, int(self.q_shift)
        )

    def components(self) -> list[tuple[Fraction, float, bool]]:
        """``(weight, location, in P)`` of the non-zero mixture components of ``P`` and ``Q``."""
        out: list[tuple[Fraction, float, bool]] = []
        for weight, loc, in_p in (
            (1 - self.p_weight, 0.0, True),
            (self.p_weight, float(self.p_shift), True),
            (1 - self.q_weight, 0.0, False),
            (self.q_weight, float(self.q_shift), False),
        ):
            if weight:
                out.append((weight, loc, in_p))
        return out

    def loss_terms(self) -> list[tuple[Fraction, float, int]]:
        """``(w, s, sign)`` of the terms ``sign·ln((1 - w) + w ρ_s(x))`` of the loss that are not 0:
        ``P``'s (``α``, ``a``, ``+1``) and ``Q``'s (``β``, ``b``, ``-1``)."""
        terms = ((self.p_weight, float(self.p_shift), 1), (self.q_weight, float(self.q_shift), -1))
        return [(w, s, sign) for w, s, sign in terms if w != 0 and s != 0]

    def centers(self) -> list[float]:
        """The distinct locations of the mixture components (where tails are taken)."""
        return sorted({loc for _, loc, _ in self.components()})

    def kinks(self) -> list[float]:
        """Where the loss is not smooth: the component locations for Laplace noise, else none."""
        return self.centers() if isinstance(self.noise, Laplace) else []

    # -- the certified privacy loss ---------------------------------------------------
    def _log_ratio(self, x: Interval, s: float, scale: Interval | None = None) -> Interval:
        """``ln ρ_s(x) = ln(f(x - s)/f(x))`` in interval arithmetic (``scale``: ``2σ²`` or ``b``)."""
        if isinstance(self.noise, Gaussian):
            two_s2 = scale if scale is not None else 2 * to_interval(self.noise.sigma) ** 2
            return (2 * x * s - iv.mpf(s) ** 2) / two_s2
        assert isinstance(self.noise, Laplace)
        b = scale if scale is not None else to_interval(self.noise.scale)
        return (abs(x) - abs(x - s)) / b

    @staticmethod
    def _log_mix(weight: Fraction, log_ratio: Interval | None) -> Interval:
        """``ln((1 - w) + w e^{r})`` (``r = None``: the limit ``r -> -∞``)."""
        if weight == 0:
            return iv.mpf(0)
        w = to_interval(weight)
        if log_ratio is None:
            return log1p(-w)
        if weight == 1:
            return log_ratio
        return log1p(w * (iv.exp(log_ratio) - 1))

    def loss_limits(self) -> tuple[Interval | None, Interval | None]:
        """``L(-∞)`` and ``L(+∞)`` (``None`` where infinite), continuous noise only.

        As ``x -> +∞``, ``ρ_a -> ∞`` and ``ρ_b -> 0``, so ``L -> +∞`` when ``α > 0`` (or ``β = 1``)
        and ``L -> -ln(1-β)`` otherwise; ``x -> -∞`` is the mirror image. Laplace noise is flat
        beyond its outermost components, where the limits are attained.
        """
        if isinstance(self.noise, Laplace):
            return self.loss(iv.mpf(self.q_shift)), self.loss(iv.mpf(self.p_shift))
        a, b = float(self.p_shift), float(self.q_shift)
        alpha, beta = self.p_weight, self.q_weight
        # ln((1-w) + w ρ) with ρ -> 0 is ln(1-w); with the shift 0, ρ = 1 and the term is 0.
        p_low = self._log_mix(alpha, None) if a > 0 else iv.mpf(0)
        q_low = self._log_mix(beta, None) if b < 0 else iv.mpf(0)
        top_inf = (alpha > 0 and a > 0) or (beta == 1 and b < 0)
        bottom_inf = (beta > 0 and b < 0) or (alpha == 1 and a > 0)
        bottom = None if bottom_inf else p_low  # x -> -∞: ρ_a -> 0, and ρ_b plays no part (β b = 0)
        top = None if top_inf else -q_low  # x -> +∞: ρ_b -> 0, and ρ_a plays no part (α a = 0)
        return bottom, top

    def loss(self, x: Interval) -> Interval:
        """``L(x) = ln((1-α) + α ρ_a(x)) - ln((1-β) + β ρ_b(x))`` in interval arithmetic.

        Continuous noise only (see :meth:`losses` for many points at once).
        """
        return self.losses([x])[0]

    def losses(self, xs: Sequence[Interval | Mpf | float]) -> list[Interval]:
        """:meth:`loss` at each point of ``xs`` (the constants are enclosed once).

        Gaussian noise at float points is evaluated in Arb balls (:mod:`accounting.balls`).
        """
        noise = self.noise
        gaussian = isinstance(noise, Gaussian)
        if gaussian and all(isinstance(x, float) for x in xs):
            return [interval_of(x) for x in gaussian_losses(self, [float(x) for x in xs])]
        if gaussian:
            assert isinstance(noise, Gaussian)
            s2 = to_interval(noise.sigma) ** 2
        else:
            assert isinstance(noise, Laplace)
            b = to_interval(noise.scale)
        terms = []
        for weight, shift, sign in self.loss_terms():
            w = to_interval(weight)
            s_iv = iv.mpf(shift)
            slope, offset = (s_iv / s2, s_iv * s_iv / (2 * s2)) if gaussian else (s_iv, iv.mpf(0))
            terms.append((weight == 1, w, slope, offset, s_iv, sign))
        out = []
        for x in xs:
            xi = iv.mpf(x)
            total = iv.mpf(0)
            for whole, w, slope, offset, s_iv, sign in terms:
                r = xi * slope - offset if gaussian else (abs(xi) - abs(xi - s_iv)) / b
                part = r if whole else log1p(w * (iv.exp(r) - 1))
                total = total + part if sign > 0 else total - part
            out.append(total)
        return out

    def masses(self, boundaries: Sequence[Mpf]) -> list[tuple[Interval, Interval]]:
        """``(P, Q)`` masses of the cells ``(-∞, x_0], (x_0, x_1], ..., (x_{n-1}, +∞)``.

        ``boundaries`` are increasing finite numbers (floats or mpf). Each tail is evaluated once
        per boundary and component location, on its small side (:func:`_small_tail`); for
        Gaussian noise at float boundaries in Arb balls (:mod:`accounting.balls`, whose ``erfc``
        is certified: :func:`accounting.special.erfc` is the reference the tests hold it against).
        """
        noise = self.noise
        assert isinstance(noise, Gaussian | Laplace)
        if isinstance(noise, Gaussian) and all(isinstance(x, float) for x in boundaries):
            cells = gaussian_masses(self, [float(x) for x in boundaries])
            return [(interval_of(p), interval_of(q)) for p, q in cells]
        scale = _tail_scale(noise)
        tails: dict[float, list[tuple[Interval, bool] | None]] = {}
        for c in self.centers():
            shifted = [iv.mpf(x) - c for x in boundaries]
            tails[c] = [None, *(_small_tail(noise, z, scale) for z in shifted), None]
        comps = [(to_interval(weight), loc, in_p) for weight, loc, in_p in self.components()]
        return cell_masses(tails, comps, iv.mpf(0), _ONE, _clamped)

    # -- float helpers (choice of cells only, never certified) ------------------------
    def loss_float(self, x: FloatArray) -> FloatArray:
        """``L(x)`` in float64 (for placing cells)."""
        xs = np.asarray(x, dtype=np.float64)

        def log_ratio(s: float) -> FloatArray:
            if isinstance(self.noise, Gaussian):
                s2 = float(self.noise.sigma) ** 2
                return np.asarray((2 * xs * s - s * s) / (2 * s2), dtype=np.float64)
            lam = _scale(self.noise)
            return np.asarray((np.abs(xs) - np.abs(xs - s)) / lam, dtype=np.float64)

        def log_mix(weight: Fraction, s: float) -> FloatArray:
            if weight == 0 or s == 0:
                return np.zeros_like(xs)
            if weight == 1:
                return log_ratio(s)
            w = float(weight)
            return np.asarray(np.logaddexp(math.log1p(-w), math.log(w) + log_ratio(s)), dtype=np.float64)

        return log_mix(self.p_weight, float(self.p_shift)) - log_mix(self.q_weight, float(self.q_shift))

    def log_tails_float(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """``ln`` of ``P(X <= x)``, ``P(X > x)``, ``Q(X <= x)``, ``Q(X > x)`` in float64."""
        import scipy.special  # here: importing scipy takes a while and is rarely needed

        xs = np.asarray(x, dtype=np.float64)
        parts: dict[bool, list[tuple[FloatArray, FloatArray]]] = {True: [], False: []}
        for weight, loc, in_p in self.components():
            z = xs - loc
            if isinstance(self.noise, Gaussian):
                s = _scale(self.noise)
                low = scipy.special.log_ndtr(z / s)
                high = scipy.special.log_ndtr(-z / s)
            else:
                lam = _scale(self.noise)
                with np.errstate(divide="ignore"):
                    low = np.where(z <= 0, z / lam - math.log(2), np.log1p(-0.5 * np.exp(-np.abs(z) / lam)))
                    high = np.where(z >= 0, -z / lam - math.log(2), np.log1p(-0.5 * np.exp(-np.abs(z) / lam)))
            lw = math.log(float(weight))
            parts[in_p].append((lw + low, lw + high))
        out = []
        for in_p in (True, False):
            lows = np.logaddexp.reduce([lo for lo, _ in parts[in_p]], axis=0)
            highs = np.logaddexp.reduce([hi for _, hi in parts[in_p]], axis=0)
            out.extend([np.asarray(lows, dtype=np.float64), np.asarray(highs, dtype=np.float64)])
        return out[0], out[1], out[2], out[3]

    def window_float(self, log_mass: float) -> tuple[float, float]:
        """Floats ``x_a < x_b`` beyond which both tails of ``P`` and ``Q`` are ``e^{log_mass}`` or less
        (:func:`accounting.monotone.float_window`)."""
        return float_window(self.log_tails_float, self.centers(), _scale(self.noise), log_mass)

    def inverse_loss_float(self, targets: FloatArray, lo: float, hi: float) -> FloatArray:
        """Floats ``x`` in ``[lo, hi]`` with ``L(x)`` close to each target (vectorized bisection,
        :func:`accounting.monotone.inverse_float`)."""
        return inverse_float(self.loss_float, targets, lo, hi)

    # -- single-release answers -------------------------------------------------------
    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``δ(ε) = sup_S P(S) - e^ε Q(S)`` of the pair, certified.

        Lattice noise: :func:`accounting.divergence.hockey_stick` over the sides. Continuous
        noise: the loss is nondecreasing, so ``δ`` is the mass above the threshold where ``L``
        crosses ``ε`` (:func:`accounting.monotone.threshold_delta`).
        """
        eps = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        if self.lattice:
            p, q = self.sides()
            return hockey_stick(p, q, eps, dps)
        return threshold_delta(self, eps, dps)

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``ε(δ) = inf{ε >= 0 : δ(ε) <= δ}`` of the pair, certified.

        Lattice noise: :func:`accounting.divergence.epsilon_for_delta`. Continuous noise: on the
        threshold sets, the upper end checked with :meth:`delta` (and nudged up) before it is
        returned (:func:`accounting.monotone.threshold_epsilon`).
        """
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        if self.lattice:
            p, q = self.sides()
            return epsilon_for_delta(p, q, d, dps)
        return threshold_epsilon(self, d, dps)

    def renyi(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``D_α(P || Q)`` by certified window sums (lattice noise, real ``α > 1`` or ``∞``).

        :func:`accounting.divergence.mixture_renyi` over the sides, whose shifts differ by at most
        ``a - b``; ``D_∞`` is :meth:`max_loss`.
        """
        a_ord = v.order("alpha", alpha)
        dps = v.dps("dps", dps)
        if not self.lattice:
            raise UnsupportedError("renyi() sums lattice pairs; continuous pairs have closed forms")
        assert isinstance(self.noise, LatticeNoise)
        if math.isinf(a_ord):
            return self.max_loss(dps)
        p, q = self.sides()
        spread = int(self.p_shift - self.q_shift)
        if spread == 0:
            return Enclosure.exact(0)
        return mixture_renyi(p, q, self.noise, spread, max(self.p_weight, self.q_weight), a_ord, dps)

    def max_loss(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """``D_∞(P || Q) = sup_x L(x)``: the limit ``L(+∞)`` of the nondecreasing loss.

        With ``M(s) = D_∞(X + s || X)`` (:meth:`~accounting.noise.LatticeNoise.max_privacy_loss`;
        ``|s|/λ`` for Laplace, ``∞`` for the Gaussian), ``ρ_a -> e^{M(a)}`` and ``ρ_b -> e^{-M(-b)}``
        as ``x -> ∞`` (symmetric noise), so ``D_∞ = ln((1-α) + α e^{M(a)}) - ln((1-β) + β e^{-M(-b)})``.
        """
        dps = v.dps("dps", dps)
        with precision(dps):
            if isinstance(self.noise, Gaussian):
                _, top = self.loss_limits()
                if top is None:
                    return Enclosure(mp.inf, mp.inf)
                return Enclosure(max(mp.zero, lower(top)), max(mp.zero, upper(top)))

            def sup_log_ratio(s: float) -> Interval | None:
                if s == 0:
                    return iv.mpf(0)
                if isinstance(self.noise, Laplace):
                    return iv.mpf(abs(s)) / to_interval(self.noise.scale)
                assert isinstance(self.noise, LatticeNoise)
                value = self.noise.max_privacy_loss(int(abs(s)))
                if mp.isinf(value):
                    return None
                slack = abs(value) * mp.ldexp(1, -mp.prec + 8)  # computed in mpf: widen
                return iv.mpf([value - slack, value + slack])

            m_a = sup_log_ratio(float(self.p_shift))
            m_b = sup_log_ratio(float(self.q_shift))
            if (m_a is None and self.p_weight > 0) or (m_b is None and self.q_weight == 1):
                return Enclosure(mp.inf, mp.inf)
            num = self._log_mix(self.p_weight, m_a) if m_a is not None else iv.mpf(0)
            den = self._log_mix(self.q_weight, -m_b if m_b is not None else None)
            value = num - den
            return Enclosure(max(mp.zero, lower(value)), max(mp.zero, upper(value)))


def _scale(noise: NoiseDistribution) -> float:
    """``σ`` of a Gaussian or ``b`` of a Laplace noise, as a float (for placing cells only)."""
    if isinstance(noise, Gaussian):
        return float(noise.sigma)
    assert isinstance(noise, Laplace)
    return float(noise.scale)


def _side(noise: LatticeNoise, weight: Fraction, shift: int) -> LatticeNoise:
    if weight == 0 or shift == 0:
        return noise
    if weight == 1:
        return Shifted(noise, shift)
    return LatticeMixture(noise, weight, shift)


# ---------------------------------------------------------------------------------------
# The events
# ---------------------------------------------------------------------------------------

_MECHANISM = "an AdditiveNoise or a DistributedSum"


@dataclass(frozen=True)
class _Subsampled:
    """What both sampling schemes share: validation, the noise, and the answers."""

    mechanism: AdditiveNoise | DistributedSum
    rate: float | Fraction

    def __post_init__(self) -> None:
        mech = self.mechanism
        if not isinstance(mech, AdditiveNoise | DistributedSum):
            raise ParameterTypeError("mechanism", mech, _MECHANISM)
        if isinstance(self.rate, bool) or not isinstance(self.rate, int | float | Fraction | mpmath.mpf):
            raise ParameterTypeError("rate", self.rate, "a real number in (0, 1]")
        if not math.isfinite(float(self.rate)):
            raise ParameterError("rate", self.rate, "a real number in (0, 1]")
        rate = _fraction("rate", self.rate)
        if not 0 < rate <= 1:
            raise ParameterError("rate", self.rate, "a real number in (0, 1]")
        noise = self.noise
        if isinstance(noise, LatticeNoise) and not (noise.symmetric and noise.log_concave):
            raise UnsupportedEventError(
                f"subsampling is certified here for symmetric log-concave noise only; {noise!r} has no "
                "single dominating pair (account the unsampled mechanism by the RDP route instead)"
            )
        if not isinstance(noise, LatticeNoise | Gaussian | Laplace):
            raise UnsupportedEventError(f"no subsampled pair for noise {noise!r}")

    @property
    def q(self) -> Fraction:
        """The sampling rate as an exact rational."""
        return _fraction("rate", self.rate)

    @property
    def noise(self) -> NoiseDistribution:
        """The noise of one release (for a distributed sum, the sum of ``users`` shares)."""
        mech = self.mechanism
        return mech.total_noise if isinstance(mech, DistributedSum) else mech.noise

    @property
    def sensitivity(self) -> float:
        """The contribution bound ``Δ`` of one record."""
        return self.mechanism.sensitivity

    def _shift(self, factor: int) -> float:
        d = self.sensitivity
        return int(d) * factor if isinstance(self.noise, LatticeNoise) else float(d) * factor

    def dominating_pairs(self, neighbouring: Neighbouring | str) -> dict[str, MixturePair]:
        """The dominating pair of each direction under ``neighbouring`` (module docstring).

        Keys are ``"replace-one"`` under replace-one and ``"remove"``, ``"add"`` under add-remove.

        Raises
        ------
        UnsupportedEventError
            For a Poisson-sampled distributed sum under add-remove.
        """
        raise NotImplementedError  # pragma: no cover - every subclass defines it

    # -- answers ----------------------------------------------------------------------
    def delta(self, epsilon: float, neighbouring: Neighbouring | str, dps: int = DEFAULT_DPS) -> Enclosure:
        """``δ(ε)`` of one release: the largest over the dominating pairs, certified."""
        eps = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        return max_enclosure([pair.delta(eps, dps) for pair in self.dominating_pairs(neighbouring).values()])

    def epsilon(self, delta: float, neighbouring: Neighbouring | str, dps: int = DEFAULT_DPS) -> Enclosure:
        """``ε(δ)`` of one release: the largest over the dominating pairs, certified."""
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        return max_enclosure([pair.epsilon(d, dps) for pair in self.dominating_pairs(neighbouring).values()])

    def pure_epsilon(self, neighbouring: Neighbouring | str, dps: int = DEFAULT_DPS) -> Enclosure:
        """``D_∞`` of the dominating pairs (:meth:`MixturePair.max_loss`): finite for bounded loss."""
        dps = v.dps("dps", dps)
        return max_enclosure([pair.max_loss(dps) for pair in self.dominating_pairs(neighbouring).values()])

    def rdp(self, alpha: float, neighbouring: Neighbouring | str, dps: int = DEFAULT_DPS) -> Enclosure:
        """The Rényi divergence of the dominating pairs at order ``α`` (the largest), certified.

        * Lattice noise: exact, by certified window sums of each pair (:meth:`MixturePair.renyi`).
        * Gaussian noise, add-remove (Poisson, and without replacement with shift ``2Δ``): the
          remove pair's ``A_α`` of Mironov, Talwar & Zhang 2019 (Section 3.3;
          :func:`accounting.mechanisms.gaussian.sampled_gaussian_rdp`, up to order
          :data:`_MAX_INTEGER_ORDER`); the add direction's ``B_α`` is at most ``A_α`` (their
          Section 3.3).
        * ``α = ∞``: :meth:`pure_epsilon`.

        Raises
        ------
        UnsupportedEventError
            For continuous noise other than the Gaussian under add-remove (no exact RDP of the
            pair is known here: use the PLD route).
        """
        a = v.order("alpha", alpha)
        dps = v.dps("dps", dps)
        pairs = self.dominating_pairs(neighbouring)
        if math.isinf(a):
            return self.pure_epsilon(neighbouring, dps)
        if isinstance(self.noise, LatticeNoise):
            return max_enclosure([pair.renyi(a, dps) for pair in pairs.values()])
        if isinstance(self.noise, Gaussian) and "remove" in pairs:
            remove = pairs["remove"]
            order = math.ceil(a)  # the largest integer order the expansion is summed at
            if order > _MAX_INTEGER_ORDER:
                raise UnsupportedError(
                    f"alpha={order}: the binomial expansion is summed up to order {_MAX_INTEGER_ORDER}"
                )
            return sampled_gaussian_rdp(a, remove.p_weight, self.noise.sigma, float(remove.p_shift), dps)
        raise UnsupportedEventError(
            f"no exact Rényi divergence of {self!r} under {Neighbouring.parse(neighbouring).value}: "
            "the mixture pair of continuous noise has one only for the Gaussian under add-remove "
            "(Mironov–Talwar–Zhang); use the PLD route (accounting.pld.compose_events)"
        )


@dataclass(frozen=True)
class PoissonSampled(_Subsampled):
    """Each record enters the batch independently with probability ``rate``; ``mechanism`` runs on the batch.

    Parameters
    ----------
    mechanism : AdditiveNoise or DistributedSum
        The mechanism run on the batch; its sensitivity is the contribution bound of one record.
        For a :class:`~accounting.mechanisms.DistributedSum`, ``users`` is a guaranteed lower
        bound on the number of shares in every released sum (module docstring).
    rate : float or Fraction
        The sampling probability ``q ∈ (0, 1]``.
    """

    def dominating_pairs(self, neighbouring: Neighbouring | str) -> dict[str, MixturePair]:
        relation = Neighbouring.parse(neighbouring)
        x = self.noise
        q = self.q
        d = self._shift(1)
        if relation is Neighbouring.REPLACE_ONE:
            return {"replace-one": MixturePair(x, q, d, q, -d)}
        if isinstance(self.mechanism, DistributedSum):
            raise UnsupportedEventError(
                f"{self!r} under add-remove: the removed record takes its own noise share along, so the "
                "two laws differ in noise and no dominating pair is certified (under add-remove sample "
                "a fixed-size batch, SampledWithoutReplacement, or account under replace-one)"
            )
        zero: float = 0 if isinstance(x, LatticeNoise) else 0.0
        remove = MixturePair(x, q, d)
        return {"remove": remove, "add": MixturePair(x, Fraction(0), zero, q, -d)}


@dataclass(frozen=True)
class SampledWithoutReplacement(_Subsampled):
    """A batch of fixed size ``m`` drawn uniformly without replacement; ``rate = m/n``.

    Parameters
    ----------
    mechanism : AdditiveNoise or DistributedSum
        The mechanism run on the batch; its sensitivity is the contribution bound of one record.
        For a :class:`~accounting.mechanisms.DistributedSum`, ``users`` is the batch size ``m``.
    rate : float or Fraction
        ``q = m/n ∈ (0, 1]``; under add-remove, an upper bound on ``m`` over the size of the
        larger dataset.
    """

    def dominating_pairs(self, neighbouring: Neighbouring | str) -> dict[str, MixturePair]:
        relation = Neighbouring.parse(neighbouring)
        x = self.noise
        q = self.q
        if relation is Neighbouring.REPLACE_ONE:
            d = self._shift(1)
            return {"replace-one": MixturePair(x, q, d, q, -d)}
        d2 = self._shift(2)
        zero: float = 0 if isinstance(x, LatticeNoise) else 0.0
        return {"remove": MixturePair(x, q, d2), "add": MixturePair(x, Fraction(0), zero, q, -d2)}


#: How a sampled release draws its batch: ``"poisson"`` (:class:`PoissonSampled`) or ``"fixed"``
#: (:class:`SampledWithoutReplacement`); ``dp-account --sampling`` and ``calibrate(sampling=)``.
SAMPLINGS = ("poisson", "fixed")


def sampled(
    mechanism: AdditiveNoise | DistributedSum, rate: float | Fraction, sampling: str = "poisson"
) -> PoissonSampled | SampledWithoutReplacement:
    """``mechanism`` run on a batch sampled at ``rate`` the way ``sampling`` names (:data:`SAMPLINGS`)."""
    how = v.choice("sampling", sampling, SAMPLINGS)
    return PoissonSampled(mechanism, rate) if how == "poisson" else SampledWithoutReplacement(mechanism, rate)
