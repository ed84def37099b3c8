"""Published closed forms for the Gaussian mechanism: RDP, the classic σ and the analytic one.

Part of :mod:`accounting.bounds` (its conventions apply: arguments validated, arithmetic at 50
digits or more where the formulas cancel, every privacy quantity and calibrated σ rounded *up*).
"""

from __future__ import annotations

import math

from mpmath import mp

from accounting import validate as v
from accounting.certified import Mpf, float_up
from accounting.errors import ParameterError
from accounting.search import smallest

__all__ = [
    "gaussian_delta_analytic",
    "gaussian_delta_mp",
    "gaussian_epsilon_analytic",
    "gaussian_rdp",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
]

_DPS = 50
"""Working precision (decimal digits) of every formula in this module."""


def gaussian_rdp(alpha: float, sigma: float, sensitivity: float = 1.0) -> float:
    """RDP of the Gaussian mechanism: ``α Δ² / (2σ²)``.

    Mironov 2017, Proposition 7 / Table II (Gaussian row). At ``α = ∞`` the divergence is
    infinite and ``inf`` is returned.

    Parameters
    ----------
    alpha : float
        The order ``α > 1``, or ``inf``.
    sigma : float
        The noise standard deviation ``σ > 0``.
    sensitivity : float
        The ℓ2 sensitivity ``Δ > 0``.

    Returns
    -------
    float
        ``α Δ² / (2σ²)``, rounded up.
    """
    a = v.order("alpha", alpha, allow_inf=True)
    s = v.positive("sigma", sigma)
    d = v.positive("sensitivity", sensitivity)
    if math.isinf(a):
        return math.inf
    with mp.workdps(_DPS):
        return float_up(mp.mpf(a) * mp.mpf(d) ** 2 / (2 * mp.mpf(s) ** 2))


def gaussian_sigma_classic(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The classic Gaussian-mechanism calibration ``σ = Δ sqrt(2 ln(1.25/δ)) / ε``.

    Dwork & Roth 2014, "The Algorithmic Foundations of Differential Privacy", Theorem A.1.
    The theorem holds only for ``ε ∈ (0, 1)``; larger ε raise :class:`ParameterError` (use
    :func:`gaussian_sigma_analytic`, which is valid for every ε and never larger).

    The theorem asks for ``c² > 2 ln(1.25/δ)`` strictly. The exact value is transcendental for
    every float δ, so it is never a float, and rounding it up gives the strict inequality.

    Parameters
    ----------
    epsilon : float
        ``ε ∈ (0, 1)``.
    delta : float
        ``δ ∈ (0, 1)``.
    sensitivity : float
        The ℓ2 sensitivity ``Δ > 0``.

    Returns
    -------
    float
        ``σ``, rounded up (more noise is the safe direction).
    """
    eps = v.real("epsilon", epsilon)
    if not 0 < eps < 1:
        raise ParameterError(
            "epsilon", epsilon, "a real number in (0, 1): Dwork–Roth 2014 Thm A.1 holds only for ε < 1"
        )
    dl = v.open_unit("delta", delta)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        return float_up(mp.mpf(d) * mp.sqrt(2 * mp.log(mp.mpf("1.25") / mp.mpf(dl))) / mp.mpf(eps))


_MILLS_ASYMPTOTIC_FROM = 1000
"""Above this argument the Mills ratio is summed from its asymptotic series: mpmath's
``ncdf(-x)/npdf(x)`` loses digits as ``x`` grows (about 10 of 50 at ``x = 1e8``) and its
``erfc`` overflows beyond ``x ≈ 1e154``."""


def _mills(x: Mpf) -> Mpf:
    """Mills' ratio ``R(x) = Φ(-x)/φ(x)`` for ``x >= 0`` at the working precision.

    For large ``x`` the asymptotic series ``Σ_k (-1)^k (2k-1)!! / x^{2k+1}`` is alternating with
    terms that decrease while ``2k + 1 < x²``, so its error is below the first omitted term.
    """
    if x < _MILLS_ASYMPTOTIC_FROM:
        return mp.ncdf(-x) / mp.npdf(x)
    stop = mp.mpf(10) ** (-mp.dps - 10) / x
    inv_x2 = 1 / x**2
    term, total, k = 1 / x, mp.zero, 0
    while abs(term) >= stop:
        total += term
        term *= -(2 * k + 1) * inv_x2
        k += 1
    return total


def _ncdf(z: Mpf) -> Mpf:
    """``Φ(z)`` that stays accurate (and finite) for arguments of any size."""
    if abs(z) < _MILLS_ASYMPTOTIC_FROM:
        return mp.ncdf(z)
    tail = mp.npdf(z) * _mills(abs(z))
    return 1 - tail if z > 0 else tail


# Φ(-40) < 1e-349, so when b - a >= 40 the whole δ is below the least positive float.
_DELTA_NEGLIGIBLE = mp.mpf(2) ** -1100


def gaussian_delta_mp(sigma: Mpf, eps: Mpf, d: Mpf) -> tuple[Mpf, int]:
    """Balle–Wang ``δ(ε)`` as an mpf, at a precision raised until the difference is resolved.

    With ``a = Δ/(2σ)``, ``b = εσ/Δ`` (so ``ε = 2ab``) the identity ``e^ε φ(a + b) = φ(b - a)``
    gives ``e^ε Φ(-a - b) = φ(a - b) R(a + b)`` (``R`` is Mills' ratio): the second term never
    needs ``e^ε`` itself, which overflows no precision however large ε is. The difference
    ``Φ(a - b) - φ(a - b) R(a + b)`` cancels: for ``b ≫ a`` about ``log10(b/a)`` digits are
    lost, and for ``ε = 0`` the two terms are both near ``1/2`` when ``σ ≫ Δ``. The loop
    raises the precision until the result keeps at least 30 significant digits.

    When ``b - a >= 40``, ``δ <= Φ(a - b) <= Φ(-40) < 2^-1100``, and ``2^-1100`` is returned:
    a certified upper bound that rounds up to the least positive float.

    Returns ``(δ, dps)``: callers round δ inside ``mp.workdps(dps)`` so that the extra digits
    are not rounded away (possibly downwards) first.
    """
    dps = _DPS
    while True:
        with mp.workdps(dps):
            s, e, dd = mp.mpf(sigma), mp.mpf(eps), mp.mpf(d)
            a = dd / (2 * s)
            b = e * s / dd
            if b - a >= 40:
                return _DELTA_NEGLIGIBLE, dps
            t1 = _ncdf(a - b)
            t2 = mp.npdf(a - b) * _mills(a + b)
            delta = t1 - t2
            if delta > 0 and t1 <= delta * mp.mpf(10) ** (dps - 30):
                return delta, dps
            # δ > 0 for every finite σ; a non-positive or barely resolved value means lost digits.
            lost = int(mp.log10(t1 / delta)) if delta > 0 else dps
        dps += max(lost, 20) + 10
        if dps > 20000:  # pragma: no cover - would need σ/Δ far beyond the float range
            raise ParameterError("sigma", float(sigma), "a σ/Δ ratio whose δ can be resolved")


def gaussian_delta_analytic(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Tight ``δ(ε)`` of the Gaussian mechanism.

    Balle & Wang 2018, "Improving the Gaussian Mechanism for Differential Privacy", Theorem 8::

        δ(ε) = Φ(Δ/(2σ) - εσ/Δ) - e^ε Φ(-Δ/(2σ) - εσ/Δ).

    Computed with extra precision where the two terms cancel (see ``gaussian_delta_mp``).

    Parameters
    ----------
    sigma : float
        ``σ > 0``.
    epsilon : float
        ``ε >= 0``.
    sensitivity : float
        The ℓ2 sensitivity ``Δ > 0``.

    Returns
    -------
    float
        ``δ(ε)``, rounded up.
    """
    s = v.positive("sigma", sigma)
    eps = v.nonnegative("epsilon", epsilon)
    d = v.positive("sensitivity", sensitivity)
    delta, dps = gaussian_delta_mp(s, eps, d)
    with mp.workdps(dps):
        return float_up(delta)


def signed_excess(value: Mpf, target: Mpf) -> float:
    """``ln(value/target)`` as a float whose sign is the exact comparison's (``<= 0`` exactly when
    ``value <= target``): the magnitude guides :func:`accounting.search.smallest`'s secant steps
    (a dozen evaluations instead of bisecting 64 bits of a float), the sign decides."""
    if not value > 0:
        return -math.inf
    with mp.workdps(20):
        log_ratio = float(mp.log(value / target))
    return min(0.0, log_ratio) if value <= target else max(5e-324, log_ratio)


# δ is compared with the target shrunk by this relative margin, far above the ~1e-30 relative
# error of the evaluation, so a returned parameter satisfies δ <= target even at higher precision.
_MARGIN = mp.mpf("1e-25")


def gaussian_epsilon_analytic(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest ε with ``δ(ε) <= δ`` for the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    ``δ(ε)`` of :func:`gaussian_delta_analytic` is strictly decreasing in ε, so the answer is
    found by bisection. The search runs over floats and returns the smallest float ε whose
    ``δ(ε)``, evaluated at 50+ digits, is at most ``δ (1 - 1e-25)``: the returned value is the
    exact ε for that (marginally smaller) target, rounded *up*, so ``δ(returned ε) <= δ``.

    Parameters
    ----------
    sigma : float
        ``σ > 0``.
    delta : float
        Target ``δ ∈ (0, 1)``.
    sensitivity : float
        The ℓ2 sensitivity ``Δ > 0``.

    Returns
    -------
    float
        ``ε >= 0`` (``0.0`` when the mechanism is already ``(0, δ)``-DP; ``inf`` when no
        finite float ε suffices, e.g. ``σ = 1e-300``, where the exact ε is about ``1e600``).
    """
    s = v.positive("sigma", sigma)
    dl = v.open_unit("delta", delta)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        target = mp.mpf(dl) * (1 - _MARGIN)

    def excess(eps: float) -> float:
        return signed_excess(gaussian_delta_mp(s, eps, d)[0], target)

    f_lo = excess(0.0)
    if f_lo <= 0:
        return 0.0
    hi = 1.0
    while (f_hi := excess(hi)) > 0:
        hi *= 2.0
        if math.isinf(hi):
            return math.inf  # no finite float ε suffices (the bracket reached inf)
    return smallest(excess, 0.0, hi, f_lo=f_lo, f_hi=f_hi)


def gaussian_sigma_analytic(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ with ``δ(ε; σ) <= δ``: the analytic Gaussian mechanism.

    Balle & Wang 2018, Theorem 8 (their Algorithm 1 solves the same equation with a different
    parametrisation). ``δ(ε; σ)`` is strictly decreasing in σ, so the answer is found by
    bisection over floats: the result is the smallest float σ with ``δ(ε; σ) <= δ (1 - 1e-25)``
    at 50+ digits, i.e. the exact σ for that (marginally smaller) target rounded *up*, so
    ``δ(ε; returned σ) <= δ`` holds.
    Unlike :func:`gaussian_sigma_classic` this is valid for every ``ε >= 0``.

    Parameters
    ----------
    epsilon : float
        ``ε >= 0``.
    delta : float
        Target ``δ ∈ (0, 1)``.
    sensitivity : float
        The ℓ2 sensitivity ``Δ > 0``.

    Returns
    -------
    float
        ``σ > 0``, rounded up.
    """
    eps = v.nonnegative("epsilon", epsilon)
    dl = v.open_unit("delta", delta)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        target = mp.mpf(dl) * (1 - _MARGIN)

    def excess(sig: float) -> float:
        return signed_excess(gaussian_delta_mp(sig, eps, d)[0], target)

    hi = d
    while (f_hi := excess(hi)) > 0:
        hi *= 2.0
    lo = hi / 2.0
    while (f_lo := excess(lo)) <= 0:
        lo, hi, f_hi = lo / 2.0, lo, f_lo
    return smallest(excess, lo, hi, log=True, f_lo=f_lo, f_hi=f_hi)
