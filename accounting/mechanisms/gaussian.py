"""The Gaussian mechanism in closed form: alone, composed, or Poisson-subsampled.

The privacy loss of ``N(0, σ^2)`` at ℓ2 sensitivity ``Δ`` is itself Gaussian, so a ledger of Gaussian
mechanisms is one Gaussian mechanism (:func:`gaussian_equivalent_sigma`; Dong, Roth & Su 2019,
Corollary 3.3), whose ``ε(δ)`` and ``δ(ε)`` are exact in closed form (Balle & Wang 2018, Theorem 8:
:func:`accounting.bounds.gaussian_epsilon_analytic`). :class:`~accounting.mechanisms.AdditiveNoise`
answers a Gaussian release with it, and :func:`accounting.pld.compose_events` a ledger of them.
The Rényi divergence of the Poisson-subsampled Gaussian is Mironov, Talwar & Zhang 2019
(:func:`sampled_gaussian_rdp`, for :mod:`accounting.subsampling`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from fractions import Fraction

from mpmath import iv, mp

from accounting import bounds
from accounting import validate as v
from accounting.bounds.gaussian import signed_excess
from accounting.certified import Enclosure, float_down, float_up, lower, precision, to_interval, upper
from accounting.errors import ParameterError, ParameterTypeError
from accounting.search import largest

__all__ = [
    "equivalent_gaussian_delta",
    "equivalent_gaussian_epsilon",
    "gaussian_composition_delta",
    "gaussian_composition_epsilon",
    "gaussian_equivalent_sigma",
    "sampled_gaussian_rdp",
]


def gaussian_equivalent_sigma(
    items: Iterable[tuple[float | Fraction, float | Fraction, int]],
) -> tuple[float, float]:
    """The σ of the one Gaussian mechanism (sensitivity 1) equal to a ledger of Gaussian mechanisms.

    The privacy loss of ``N(0, σ^2)`` with ℓ2 sensitivity ``Δ`` is ``N(μ, 2μ)`` with
    ``μ = Δ^2/(2σ^2)``; losses add, so ``k_i`` runs of ``(σ_i, Δ_i)`` compose to the Gaussian
    mechanism with ``1/σ_eff^2 = Σ k_i Δ_i^2/σ_i^2`` (Dong, Roth & Su 2019, Gaussian DP,
    Corollary 3.3: ``μ_i``-GDP compose to ``√(Σ μ_i^2)``-GDP).

    Parameters
    ----------
    items : iterable of (sigma, sensitivity, count)
        Each ``σ > 0``, ``Δ > 0`` and ``count >= 1``.

    Returns
    -------
    tuple of float
        ``(lo, hi)``: floats with ``lo <= σ_eff <= hi`` (``lo`` is the one to use for an upper
        bound on ε or δ: less noise is pessimistic).
    """
    listed = list(items)
    if not listed:
        raise ParameterError("items", listed, "at least one (sigma, sensitivity, count)")
    with precision(30):
        total = iv.mpf(0)
        for i, item in enumerate(listed):
            if not (isinstance(item, tuple) and len(item) == 3):
                raise ParameterTypeError(f"items[{i}]", item, "a (sigma, sensitivity, count) triple")
            sigma, sensitivity, count = item
            v.positive(f"items[{i}] sigma", sigma)
            v.positive(f"items[{i}] sensitivity", sensitivity)
            k = v.integer(f"items[{i}] count", count, minimum=1)
            total += k * (to_interval(sensitivity) / to_interval(sigma)) ** 2
        s = 1 / iv.sqrt(total)
        return float_down(lower(s)), float_up(upper(s))


def equivalent_gaussian_epsilon(sigma: tuple[float, float], delta: float) -> Enclosure:
    """``ε(δ)`` of the Gaussian mechanism with σ in ``[lo, hi]`` and sensitivity 1 (Balle–Wang Thm 8).

    The upper end is :func:`accounting.bounds.gaussian_epsilon_analytic` at ``σ_lo`` (the smallest
    float whose ``δ`` is at most the target, so at least the exact ε). The lower end is
    :func:`_gaussian_epsilon_below` at ``σ_hi``: a float *evaluated* to have ``δ`` above the
    target, rather than two floats below the upper search's answer, which assumed ``δ`` moves by
    more than the search's margin across two floats of ε (not so where ``δ`` is flat in ε).
    """
    s_lo, s_hi = sigma
    high = bounds.gaussian_epsilon_analytic(s_lo, delta, 1.0) if s_lo > 0 else math.inf
    return Enclosure(mp.mpf(_gaussian_epsilon_below(s_hi, delta)), mp.mpf(high))


#: Relative margin by which the Balle–Wang δ, evaluated at 30+ significant digits, must exceed
#: the target for a float ε to be a certified lower end (far above the evaluation error).
_GAUSSIAN_MARGIN = mp.mpf("1e-25")


def _gaussian_epsilon_below(sigma: float, delta: float) -> float:
    """The largest float ε with ``δ(ε) >= δ (1 + 1e-25)`` (Balle–Wang, evaluated at 30+ digits),
    so that the exact ``ε(δ)`` lies above it; 0 when even ``δ(0)`` is below that.

    Found by :func:`accounting.search.largest` below the upper end's answer (which has
    ``δ <= δ(1 - 1e-25)``). A ``σ`` so small that no finite float ε reaches the target gives the
    largest finite float.
    """
    upper_end = bounds.gaussian_epsilon_analytic(sigma, delta, 1.0)
    if upper_end == 0:
        return 0.0
    if math.isinf(upper_end):
        return sys.float_info.max
    with mp.workdps(50):
        target = mp.mpf(delta) * (1 + _GAUSSIAN_MARGIN)

    def above(eps: float) -> float:  # <= 0 where δ(ε) >= target, increasing in ε
        return signed_excess(target, bounds.gaussian_delta_mp(sigma, eps, 1.0)[0])

    if above(0.0) > 0:
        return 0.0
    return largest(above, 0.0, upper_end)


def equivalent_gaussian_delta(sigma: tuple[float, float], epsilon: float) -> Enclosure:
    """``δ(ε)`` of the Gaussian mechanism with σ in ``[lo, hi]`` and sensitivity 1 (Balle–Wang Thm 8)."""
    s_lo, s_hi = sigma
    high = bounds.gaussian_delta_analytic(s_lo, epsilon, 1.0) if s_lo > 0 else 1.0
    low = bounds.gaussian_delta_analytic(s_hi, epsilon, 1.0)
    return Enclosure.from_rounded_up(min(high, 1.0), low)


def gaussian_composition_epsilon(
    sigma: float | Fraction, sensitivity: float | Fraction, count: int, delta: float
) -> Enclosure:
    """``ε(δ)`` of ``count`` Gaussian mechanisms ``N(0, σ^2)`` with ℓ2 sensitivity ``Δ``, exactly.

    ``k`` of them compose to the Gaussian mechanism with ``σ/(Δ√k)`` at sensitivity 1
    (:func:`gaussian_equivalent_sigma`), whose ``ε(δ)`` is Balle–Wang 2018 Theorem 8
    (:func:`accounting.bounds.gaussian_epsilon_analytic`). The effective σ is rounded *down*
    for the upper end (less noise, larger ε) and up for the lower end.
    """
    v.positive("sigma", sigma)
    v.positive("sensitivity", sensitivity)
    k = v.integer("count", count, minimum=1)
    dl = v.open_unit("delta", delta)
    return equivalent_gaussian_epsilon(gaussian_equivalent_sigma([(sigma, sensitivity, k)]), dl)


def gaussian_composition_delta(
    sigma: float | Fraction, sensitivity: float | Fraction, count: int, epsilon: float
) -> Enclosure:
    """``δ(ε)`` of ``count`` Gaussian mechanisms (see :func:`gaussian_composition_epsilon`)."""
    v.positive("sigma", sigma)
    v.positive("sensitivity", sensitivity)
    k = v.integer("count", count, minimum=1)
    eps = v.nonnegative("epsilon", epsilon)
    return equivalent_gaussian_delta(gaussian_equivalent_sigma([(sigma, sensitivity, k)]), eps)


def sampled_gaussian_rdp(
    alpha: float, q: Fraction, sigma: float | Fraction, shift: float, dps: int
) -> Enclosure:
    """``D_α((1-q)N(0,σ²) + qN(Δ,σ²) || N(0,σ²))``, the Poisson-subsampled Gaussian, certified.

    Mironov, Talwar & Zhang 2019 ("Rényi differential privacy of the sampled Gaussian mechanism",
    Section 3.3): ``ln(A_α)/(α - 1)`` by the exact binomial expansion of ``A_α`` at an integer
    ``α >= 2``, in interval arithmetic (the sum has ``α + 1`` terms: the caller bounds ``α``). At a
    non-integer ``α`` (deviation: their fractional-order series is not implemented with a certified
    remainder) the enclosure is ``[D_⌊α⌋, chord]``: ``D_α`` is nondecreasing in ``α`` and
    ``(α - 1) D_α`` is convex, so it lies below the chord through the integers around ``α`` (through
    ``(1, 0)`` below 2). ``shift`` is the sensitivity ``Δ``.
    """
    if alpha.is_integer():
        return _mtz_integer(int(alpha), q, sigma, shift, dps)
    k = math.floor(alpha)
    upper_value = _mtz_integer(k + 1, q, sigma, shift, dps)
    with precision(dps):
        a = iv.mpf(alpha)
        if k == 1:
            chord = iv.mpf(upper_value.hi)  # (α - 1) D_α <= (α - 1) D_2 on (1, 2]
            lo = mp.zero
        else:
            lower_value = _mtz_integer(k, q, sigma, shift, dps)
            f_k = (k - 1) * iv.mpf(lower_value.hi)
            f_k1 = k * iv.mpf(upper_value.hi)
            chord = (f_k + (a - k) * (f_k1 - f_k)) / (a - 1)
            lo = lower_value.lo
        return Enclosure(lo, max(lo, upper(chord)))


def _mtz_integer(alpha: int, q: Fraction, sigma: float | Fraction, shift: float, dps: int) -> Enclosure:
    """``ln(A_α)/(α - 1)``, ``A_α = Σ_k C(α, k) (1-q)^{α-k} q^k e^{(k² - k)Δ²/(2σ²)}`` (MTZ 2019, §3.3)."""
    with precision(dps):
        qi = to_interval(q)
        keep = 1 - qi
        c = iv.mpf(shift) ** 2 / (2 * to_interval(sigma) ** 2)
        total = iv.mpf(0)
        for k in range(alpha + 1):
            term = iv.mpf(math.comb(alpha, k)) * qi**k * keep ** (alpha - k) * iv.exp((k * k - k) * c)
            total += term
        value = iv.log(total) / (alpha - 1)
        return Enclosure(max(mp.zero, lower(value)), max(mp.zero, upper(value)))
