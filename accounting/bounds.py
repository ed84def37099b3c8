"""Published closed-form privacy bounds, one formula per function.

Every function here implements one published statement, cited in its docstring by the names
used in ``papers/distributed-dp-mab.md`` (the "spec"). These are *bounds*, not exact
divergences: the exact accounting of lattice noise lives elsewhere; this module is what the
exact numbers are cross-checked against.

Conventions
-----------
- Public parameters are validated with :mod:`accounting.validate`; a bad value raises
  :class:`~accounting.errors.ParameterError` or :class:`~accounting.errors.ParameterTypeError`
  naming the parameter. No function returns NaN; a value beyond the float range is returned
  as ``inf`` (the rounded-up answer).
- Arithmetic is done in :mod:`mpmath` at 50 significant digits (more where a formula cancels),
  and every privacy quantity (ε, δ, ρ, an RDP value) and every calibrated noise scale is returned
  as a float rounded *up* with :func:`~accounting.certified.float_up`: a larger loss or a larger
  noise is the safe direction. ``float_up`` is always called inside the precision context in
  which its argument was computed, because converting a 50-digit number at the default 15-digit
  precision would round it to nearest first.
- "scale" is the Laplace/discrete-Laplace parameter ``b``; "sigma" a standard deviation;
  "variance" a variance; "sensitivity" the ``Δ`` of the query (an integer where the noise lives
  on the integer lattice).
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

from mpmath import mp

from accounting import validate as v
from accounting.certified import Mpf, exact_fraction, float_up
from accounting.errors import ParameterError
from accounting.noise.skellam import akl_rdp as _skellam_akl_mp
from accounting.noise.sum_of_discrete_gaussians import kls_epsilon as _kls_epsilon_mp
from accounting.noise.sum_of_discrete_gaussians import xi_sum_upper as _xi_sum_upper
from accounting.search import smallest

__all__ = [
    "discrete_gaussian_delta_cks",
    "discrete_gaussian_epsilon_zcdp",
    "discrete_gaussian_rho_cks",
    "discrete_laplace_pure_epsilon",
    "gaussian_delta_analytic",
    "gaussian_epsilon_analytic",
    "gaussian_rdp",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "laplace_delta",
    "laplace_pure_epsilon",
    "laplace_rdp",
    "skellam_rdp_akl",
    "skellam_rdp_theorem2_headline",
    "skellam_rdp_theorem2_lemma3",
    "skellam_rdp_theorem2_paper",
    "sum_discrete_gaussians_epsilon_kls",
    "sum_discrete_gaussians_rho_kls",
    "theorem2_discrepancy",
    "theorem2_g",
    "theorem4_epsilon",
    "theorem4_xi",
]

_DPS = 50
"""Working precision (decimal digits) of every formula in this module."""

_TRUNCATION_TOL = Fraction(1, 10**30)
"""Relative size at which a truncated series is stopped. The certified remainder bound is
*added* to the partial sum, so this only controls tightness, never validity."""


# --------------------------------------------------------------------------------------------
# Validation helpers specific to this module
# --------------------------------------------------------------------------------------------


def _integer_order(value: object) -> int:
    """An integer Rényi order ``α >= 2`` (for bounds proved only at integer orders)."""
    a = v.order("alpha", value, allow_inf=True)
    if math.isinf(a) or not a.is_integer():
        raise ParameterError(
            "alpha",
            value,
            "an integer >= 2: the Skellam bound of Agarwal–Kairouz–Liu 2021 Thm 3.5 "
            "(spec Lemma 3) is proved only for integer orders",
        )
    return int(a)


def _exact_rational(name: str, value: object) -> Fraction:
    """``value`` (already validated as a finite real) as an exact rational.

    Integers and :class:`~fractions.Fraction` are taken exactly. A float is read as the
    shortest decimal that round-trips to it (``0.1`` is ``1/10``), i.e. the number the user
    typed, so that ``s * eps * sqrt(n)`` that is an integer on paper is an integer here.
    """
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    return Fraction(repr(v.real(name, value)))


# --------------------------------------------------------------------------------------------
# Laplace and discrete Laplace
# --------------------------------------------------------------------------------------------


def discrete_laplace_pure_epsilon(scale: float, sensitivity: int = 1) -> float:
    """Pure ε of adding discrete Laplace noise ``Lap_Z(scale)`` to an integer query.

    Spec §3.1, Fact 3: ``q + Lap_Z(Δ/ε)`` is ``(ε, 0)``-DP, i.e. ``ε = Δ / b``. The discrete
    Laplace on ``Z`` (spec §2.3, Def. 4) has the same privacy-loss range as the continuous one
    because its PMF ratio at distance ``Δ`` is exactly ``e^{Δ/b}``.

    Parameters
    ----------
    scale : float
        The scale ``b > 0`` of ``Lap_Z(b)``, PMF proportional to ``exp(-|x|/b)``.
    sensitivity : int
        The integer sensitivity ``Δ >= 1`` of the query.

    Returns
    -------
    float
        ``Δ / b``, rounded up.
    """
    b = v.positive("scale", scale)
    delta_q = v.integer("sensitivity", sensitivity, minimum=1)
    with mp.workdps(_DPS):
        return float_up(mp.mpf(delta_q) / mp.mpf(b))


def laplace_pure_epsilon(scale: float, sensitivity: float = 1.0) -> float:
    """Pure ε of the (continuous) Laplace mechanism: ``ε = Δ / b``.

    Dwork, McSherry, Nissim & Smith 2006 (the spec's DP-SE baseline, §2.6).

    Parameters
    ----------
    scale : float
        The scale ``b > 0`` (density ``exp(-|x|/b) / (2b)``).
    sensitivity : float
        The ℓ1 sensitivity ``Δ > 0``.

    Returns
    -------
    float
        ``Δ / b``, rounded up.
    """
    b = v.positive("scale", scale)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        return float_up(mp.mpf(d) / mp.mpf(b))


def laplace_delta(scale: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact hockey-stick divergence ``δ(ε)`` of ``Lap(Δ, b)`` from ``Lap(0, b)``.

    Derived here (not quoted). With ``a = Δ/b`` the privacy loss ``(|x| - |x - Δ|)/b`` equals
    ``-a`` on ``x <= 0``, ``a`` on ``x >= Δ`` and ``(2x - Δ)/b`` in between, so it exceeds ``ε``
    exactly on ``x > c = (Δ + εb)/2``. When ``ε < a`` we have ``c < Δ`` and::

        δ = P[X > c] - e^ε Q[X > c]
          = (1 - e^{-(Δ-c)/b}/2) - e^ε e^{-c/b}/2
          = 1 - exp((ε - a)/2),

    and ``δ = 0`` when ``ε >= a`` (pure DP). By symmetry of the Laplace pair both directions
    of the divergence agree, so this is the tight ``δ`` for ``(ε, δ)``-DP of the mechanism.

    Parameters
    ----------
    scale : float
        The scale ``b > 0``.
    epsilon : float
        ``ε >= 0``.
    sensitivity : float
        ``Δ > 0``.

    Returns
    -------
    float
        ``δ(ε)``, rounded up.
    """
    b = v.positive("scale", scale)
    eps = v.nonnegative("epsilon", epsilon)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        a = mp.mpf(d) / mp.mpf(b)
        e = mp.mpf(eps)
        if e >= a:
            return 0.0
        # -expm1 avoids the cancellation of 1 - exp(t) for ε close to Δ/b.
        return float_up(-mp.expm1((e - a) / 2))


def laplace_rdp(alpha: float, scale: float, sensitivity: float = 1.0) -> float:
    """Rényi divergence of order ``α`` of the Laplace mechanism.

    Mironov 2017, "Rényi Differential Privacy", Table II (Laplace row), for ``λ = b/Δ``::

        D_α = 1/(α-1) · ln( α/(2α-1) · e^{(α-1)/λ} + (α-1)/(2α-1) · e^{-α/λ} ),

    and ``D_∞ = 1/λ = Δ/b``. Mironov states it for sensitivity 1; the mechanism with
    ``(Δ, b)`` is a rescaling of the one with ``(1, b/Δ)``, so only ``λ = b/Δ`` matters.

    Parameters
    ----------
    alpha : float
        The order ``α > 1``, or ``inf``.
    scale : float
        The scale ``b > 0``.
    sensitivity : float
        ``Δ > 0``.

    Returns
    -------
    float
        ``D_α``, rounded up.
    """
    a = v.order("alpha", alpha, allow_inf=True)
    b = v.positive("scale", scale)
    d = v.positive("sensitivity", sensitivity)
    with mp.workdps(_DPS):
        inv_lam = mp.mpf(d) / mp.mpf(b)
        if math.isinf(a):
            return float_up(inv_lam)
        am = mp.mpf(a)
        # Factor e^{(α-1)/λ} out of the sum so that a huge α/λ cannot overflow the mantissa
        # budget and the log is of a number in (0, 1]: ln(w1 + w2 e^{-(2α-1)/λ}) + (α-1)/λ.
        w1 = am / (2 * am - 1)
        w2 = (am - 1) / (2 * am - 1)
        inner = mp.log(w1 + w2 * mp.exp(-(2 * am - 1) * inv_lam))
        return float_up(inv_lam + inner / (am - 1))


# --------------------------------------------------------------------------------------------
# Gaussian
# --------------------------------------------------------------------------------------------


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


def _gaussian_delta_mp(sigma: Mpf, eps: Mpf, d: Mpf) -> tuple[Mpf, int]:
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

    Computed with extra precision where the two terms cancel (see ``_gaussian_delta_mp``).

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
    delta, dps = _gaussian_delta_mp(s, eps, d)
    with mp.workdps(dps):
        return float_up(delta)


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

    def ok(eps: float) -> bool:
        return bool(_gaussian_delta_mp(s, eps, d)[0] <= target)

    if ok(0.0):
        return 0.0
    hi = 1.0
    while not ok(hi):
        hi *= 2.0
        if math.isinf(hi):
            return math.inf  # no finite float ε suffices (the bracket reached inf)
    return smallest(ok, 0.0, hi)


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

    def ok(sig: float) -> bool:
        return bool(_gaussian_delta_mp(sig, eps, d)[0] <= target)

    hi = d
    while not ok(hi):
        hi *= 2.0
    lo = hi / 2.0
    while ok(lo):
        lo /= 2.0
    return smallest(ok, lo, hi)


# --------------------------------------------------------------------------------------------
# Discrete Gaussian
# --------------------------------------------------------------------------------------------


def discrete_gaussian_rho_cks(sigma: float, sensitivity: int = 1) -> float:
    """zCDP ρ of the discrete Gaussian mechanism: ``ρ = Δ² / (2σ²)``.

    Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy",
    Theorem 4 (the spec's Fact 2, §2.5: ``N_Z(0, Δ²/ε²)`` gives ``(1/2)ε²``-CDP).

    Parameters
    ----------
    sigma : float
        The parameter ``σ > 0`` of ``N_Z(0, σ²)``.
    sensitivity : int
        The integer sensitivity ``Δ >= 1``.

    Returns
    -------
    float
        ``ρ``, rounded up.
    """
    s = v.positive("sigma", sigma)
    d = v.integer("sensitivity", sensitivity, minimum=1)
    with mp.workdps(_DPS):
        return float_up(mp.mpf(d) ** 2 / (2 * mp.mpf(s) ** 2))


def _dg_normalizer_lower(sigma: Mpf) -> Mpf:
    """A lower bound on ``Z = Σ_{x∈Z} exp(-x²/(2σ²))`` (truncations of positive series).

    For ``2π²σ² >= 1`` Poisson summation, ``Z = σ sqrt(2π) Σ_{k∈Z} exp(-2π²σ²k²)``, converges
    in a few terms for any σ, where direct summation would need ``O(σ)`` terms; for smaller σ
    the direct series is the fast one.
    """
    tiny = mp.mpf(10) ** (-mp.dps - 5)
    if 2 * mp.pi**2 * sigma**2 >= 1:
        c = 2 * mp.pi**2 * sigma**2
        total, k = mp.one, 1
        while True:
            term = 2 * mp.exp(-c * k * k)
            total += term
            if term < tiny * total:
                return sigma * mp.sqrt(2 * mp.pi) * total
            k += 1
    total, x = mp.one, 1
    while True:
        term = 2 * mp.exp(-(mp.mpf(x) ** 2) / (2 * sigma**2))
        total += term
        if term < tiny * total:
            return total
        x += 1


def _dg_hockey_stick_upper(sigma: Mpf, eps: Mpf, d: int) -> Mpf:
    """Upper bound on ``Σ_{x > c} w(x-Δ) - e^ε w(x)`` with ``w(u) = exp(-u²/(2σ²))``.

    ``c = εσ²/Δ + Δ/2`` is where the privacy loss ``(2xΔ - Δ²)/(2σ²)`` crosses ε, so every
    summand is ``>= 0``: summing them directly avoids the cancellation of the two-tail form.
    The terms are bounded by ``w(x - Δ)``, which decreases away from ``x = Δ``; the sum is
    walked outwards from ``Δ`` (up to ∞, and down to ``c`` if ``c < Δ``). After a term at
    distance ``u`` the rest of that walk is at most
    ``Σ_{u' > u} w(u') <= w(u+1) / (1 - exp(-(2u+3)/(2σ²)))`` (ratio of consecutive ``w`` is
    decreasing, so a geometric series dominates); that bound is added to the partial sum.

    Consecutive terms are produced by multiplication only (``w(u+1) = w(u) a_u``,
    ``a_{u+1} = a_u q``), which keeps an ``O(σ)``-term walk cheap; the rounding drift is
    about ``(number of terms) · 10^{-50}``, far below the stopping tolerance.
    """
    s2 = sigma**2
    c = eps * s2 / d + mp.mpf(d) / 2
    x_first = int(mp.floor(c))  # the term at floor(c) is <= 0 and clipped; it guards rounding of c
    q = mp.exp(-1 / s2)
    shift = mp.exp(-mp.mpf(d) / s2)  # exp(ε - L(x+1)) = exp(ε - L(x)) · shift
    tol = mp.mpf(_TRUNCATION_TOL.numerator) / _TRUNCATION_TOL.denominator

    def loss_gap(x: int) -> Mpf:
        """``exp(ε - L(x))``: the term is ``w(x - Δ) (1 - loss_gap(x))``."""
        # ε - L(x) = -(x - c) Δ/σ²: written around c so that no two large numbers are subtracted.
        return mp.exp(-(x - c) * d / s2)

    def walk(u0: int, x0: int, step: int, stop_u: int | None, base: Mpf) -> tuple[Mpf, Mpf]:
        """Sum terms at distances u0, u0+1, ... from Δ (x moving by ``step``)."""
        w = mp.exp(-(mp.mpf(u0) ** 2) / (2 * s2))
        a = mp.exp(-(2 * mp.mpf(u0) + 1) / (2 * s2))
        g = loss_gap(x0)
        g_step = shift if step > 0 else 1 / shift
        total = mp.zero
        u = u0
        while True:
            term = w * (1 - g)
            if term > 0:
                total += term
            if stop_u is not None and u >= stop_u:
                return total, mp.zero
            w_next = w * a
            a_next = a * q
            remainder = w_next / (1 - a_next)
            if remainder <= tol * (base + total):
                return total, remainder
            w, a, g, u = w_next, a_next, g * g_step, u + 1

    x_up = max(x_first, d)
    up_sum, up_rem = walk(x_up - d, x_up, 1, None, mp.zero)
    total = up_sum + up_rem
    if x_first <= d - 1:
        down_sum, down_rem = walk(1, d - 1, -1, d - x_first, up_sum)
        total += down_sum + down_rem
    return total


def discrete_gaussian_delta_cks(sigma: float, epsilon: float, sensitivity: int = 1) -> float:
    """Tight ``δ(ε)`` of the discrete Gaussian mechanism.

    Canonne, Kamath & Steinke 2020, Theorem 7: with ``Y ~ N_Z(0, σ²)``::

        δ = P[Y > εσ²/Δ - Δ/2] - e^ε P[Y > εσ²/Δ + Δ/2].

    This equals the hockey-stick divergence ``Σ_x max(0, P(x) - e^ε Q(x))`` for
    ``P = N_Z(Δ, σ²)``, ``Q = N_Z(0, σ²)`` (the loss ``ln P/Q = (2xΔ - Δ²)/(2σ²)`` exceeds ε
    exactly on ``x > εσ²/Δ + Δ/2``; the reverse divergence is the same by the reflection
    ``x ↦ Δ - x``). It is computed in that cancellation-free form, as a sum of nonnegative
    terms with a certified geometric remainder, divided by a certified lower bound on the
    normalizer: the result is an upper bound on δ (up to 50-digit rounding), then rounded up.
    The cost is about ``12σ`` terms for large σ (σ = 1e4 takes about 2 s).

    Unlike the continuous case, ``δ(ε)`` is *not* monotone in σ for small σ (at ``ε = 4``,
    ``σ = 0.375`` gives 0.027 but ``σ = 0.5625`` gives 0.077): ``N_Z(0, σ₂²)`` is not
    ``N_Z(0, σ₁²)`` plus independent noise, so there is no post-processing argument.

    Parameters
    ----------
    sigma : float
        The parameter ``σ > 0`` of ``N_Z(0, σ²)``.
    epsilon : float
        ``ε >= 0``.
    sensitivity : int
        The integer sensitivity ``Δ >= 1``.

    Returns
    -------
    float
        ``δ(ε)``, rounded up.
    """
    s = v.positive("sigma", sigma)
    eps = v.nonnegative("epsilon", epsilon)
    d = v.integer("sensitivity", sensitivity, minimum=1)
    with mp.workdps(_DPS):
        sm = mp.mpf(s)
        numerator = _dg_hockey_stick_upper(sm, mp.mpf(eps), d)
        return float_up(min(mp.one, numerator / _dg_normalizer_lower(sm)))


def discrete_gaussian_epsilon_zcdp(sigma: float, delta: float, sensitivity: int = 1) -> float:
    """ε at a given δ for the discrete Gaussian, through zCDP: ``ε = ρ + 2 sqrt(ρ ln(1/δ))``.

    Bun & Steinke 2016, "Concentrated Differential Privacy", Proposition 1.3, applied to
    ``ρ = Δ²/(2σ²)`` of :func:`discrete_gaussian_rho_cks` (CKS 2020). Looser than
    :func:`discrete_gaussian_delta_cks`, which is tight.

    Parameters
    ----------
    sigma : float
        ``σ > 0``.
    delta : float
        ``δ ∈ (0, 1)``.
    sensitivity : int
        The integer sensitivity ``Δ >= 1``.

    Returns
    -------
    float
        ε, rounded up.
    """
    s = v.positive("sigma", sigma)
    dl = v.open_unit("delta", delta)
    d = v.integer("sensitivity", sensitivity, minimum=1)
    with mp.workdps(_DPS):
        rho = mp.mpf(d) ** 2 / (2 * mp.mpf(s) ** 2)
        return float_up(rho + 2 * mp.sqrt(rho * mp.log(1 / mp.mpf(dl))))


# --------------------------------------------------------------------------------------------
# Integer shifts of a vector query (the sensitivities the lattice bounds take)
# --------------------------------------------------------------------------------------------


def _lattice_shift(sensitivity: object, dimension: object, l1: object) -> tuple[int, int, int]:
    """``(S2, S1, m)``: integer bounds on ``‖v‖₂²``, on ``‖v‖₁`` and on the number of nonzero
    coordinates of every shift ``v ∈ Z^d`` of an integer query.

    In one dimension (``dimension = 1``) ``sensitivity`` is the integer ``Δ >= 1``, and
    ``(S2, S1, m) = (Δ², Δ, 1)``. For a vector, ``sensitivity`` is the ℓ2 bound ``Δ2`` (any real
    ``>= 1``: a nonzero integer vector has norm at least 1) and ``l1`` an optional ℓ1 bound
    ``Δ1``. Because ``v`` has integer coordinates:

    * ``‖v‖₂²`` is an integer ``<= Δ2²``, so ``S2 = ⌊Δ2²⌋`` (exact rational arithmetic);
    * ``‖v‖₁ <= √d ‖v‖₂`` (Cauchy–Schwarz against the all-ones vector), and ``|v_i| <= v_i²``
      for every integer ``v_i`` (equality at 0 and ±1, and ``|v_i| >= 2`` otherwise), so
      ``‖v‖₁ <= ‖v‖₂²``. ``‖v‖₁`` is an integer, so
      ``S1 = min(⌊Δ1⌋, ⌊√(d·S2)⌋, S2)`` — the smaller of ``√d·Δ2`` and ``Δ2²`` when ``Δ1``
      is not given;
    * every nonzero coordinate adds at least 1 to ``‖v‖₁``: ``m = min(d, S1)``.
    """
    d = v.integer("dimension", dimension, minimum=1)
    if d == 1:
        s = v.integer("sensitivity", sensitivity, minimum=1)
        if l1 is not None:
            v.interval("l1", l1, 1, math.inf, low_open=False, why="a nonzero integer shift has |v| >= 1")
            s = min(s, math.floor(exact_fraction(l1, "l1")))
        return s * s, s, 1
    why = "a nonzero integer vector has ℓ2 norm >= 1"
    v.interval("sensitivity", sensitivity, 1, math.inf, low_open=False, why=why)
    s2 = math.floor(exact_fraction(sensitivity, "sensitivity") ** 2)
    s1 = min(math.isqrt(d * s2), s2)
    if l1 is not None:
        v.interval("l1", l1, 1, math.inf, low_open=False, why="a nonzero integer vector has ℓ1 norm >= 1")
        s1 = min(s1, math.floor(exact_fraction(l1, "l1")))
    return s2, s1, min(d, s1)


# --------------------------------------------------------------------------------------------
# Skellam (spec §3.2)
# --------------------------------------------------------------------------------------------


def skellam_rdp_akl(
    alpha: int,
    variance: float,
    sensitivity: float = 1,
    *,
    dimension: int = 1,
    l1: float | None = None,
) -> float:
    """RDP of adding Skellam noise ``Sk(0, σ²)`` (total variance σ² per coordinate) to an integer query.

    Agarwal, Kairouz & Liu 2021, "The Skellam Mechanism for Differentially Private Federated
    Learning", Theorem 3.5 = the spec's Lemma 3 (§3.2). For a query in ``Z^d`` whose change
    ``v`` has ``‖v‖₂ <= Δ2`` and ``‖v‖₁ <= Δ1``, with i.i.d. ``Sk(0, σ²)`` noise on every
    coordinate::

        ε(α) <= αΔ2²/(2σ²) + min{ ((2α-1)Δ2² + 6Δ1) / (4σ⁴),  3Δ1/(2σ²) }.

    In one dimension ``Δ1 = Δ2 = Δ``, the spec's Lemma 3. AKL parametrise by the Poisson rate μ
    of each of the two Poisson variables; here σ² = 2μ is the *total* variance, as in the spec
    (their multi-dimensional statement has the same form, in the variance; their accounting
    code, google-research/federated ``distributed_dp/accounting_utils.py``, evaluates it so).
    The theorem is proved only for integer orders ``α >= 2``; other orders raise
    :class:`ParameterError`.

    **The d-dimensional form from the 1-D one.** Independent coordinates make the noise a
    product law, whose Rényi divergence is the sum of the coordinates' (tensorization). Each
    coordinate ``i`` gives the 1-D bound at ``Δ = |v_i|`` (0 for ``v_i = 0``), and a sum of minima
    is at most the minimum of the sums, so the total is at most the formula above with
    ``Σ v_i² = ‖v‖₂²`` and ``Σ |v_i| = ‖v‖₁``: increasing in both, hence bounded at ``(Δ2², Δ1)``.

    **Integer vectors.** ``‖v‖₂²`` and ``‖v‖₁`` are integers, so ``Δ2²`` is taken as ``⌊Δ2²⌋``
    and ``Δ1`` as ``min(⌊Δ1⌋, ⌊√d Δ2⌋, ⌊Δ2²⌋)``: ``‖v‖₁ <= √d ‖v‖₂`` (Cauchy–Schwarz) and
    ``‖v‖₁ <= ‖v‖₂²`` (``|v_i| <= v_i²`` for integers). Without ``l1`` the smaller of the two
    applies (see ``_lattice_shift``).

    Parameters
    ----------
    alpha : int
        Integer order ``α >= 2``.
    variance : float
        Total variance ``σ² > 0`` of the Skellam noise on each coordinate.
    sensitivity : int or float
        The ℓ2 sensitivity ``Δ2``: in one dimension the integer ``Δ >= 1``; for a vector any
        real ``>= 1``.
    dimension : int
        ``d >= 1``, the coordinates of the query.
    l1 : float, optional
        An ℓ1 sensitivity ``Δ1 >= 1`` (default: implied by ``Δ2`` and ``d`` as above).

    Returns
    -------
    float
        The RDP bound, rounded up.
    """
    a = _integer_order(alpha)
    var = v.positive("variance", variance)
    l2_squared, ell1, _ = _lattice_shift(sensitivity, dimension, l1)
    with mp.workdps(_DPS):
        return float_up(_skellam_akl_mp(a, mp.mpf(var), mp.mpf(l2_squared), mp.mpf(ell1)))


def theorem2_g(epsilon: float, scale: float, users: int) -> int:
    """The encoding precision ``g = ceil(s ε sqrt(n))`` of Theorem 2 (and Theorem 4).

    Spec §3.2 and §4.4. Computed exactly: with ``s ε = p/q`` in lowest terms, ``g`` is the
    smallest integer with ``g² q² >= p² n``, found with integer square roots. Floats are read
    as the decimal they print as (``0.1`` is ``1/10``), so ``ceil(10 · 0.1 · sqrt(1))`` is 1,
    not the 2 that the binary value ``0.1000000000000000055...`` would give; pass a
    :class:`~fractions.Fraction` to specify any other exact value.

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    scale : float
        The scaling factor ``s > 0``.
    users : int
        The batch size ``n >= 1``.

    Returns
    -------
    int
        ``g >= 1``.
    """
    v.positive("epsilon", epsilon)
    v.positive("scale", scale)
    n = v.integer("users", users, minimum=1)
    x = _exact_rational("epsilon", epsilon) * _exact_rational("scale", scale)
    num, den = x.numerator**2 * n, x.denominator**2
    g = math.isqrt(num // den)
    while g * g * den < num:
        g += 1
    return max(g, 1)


def _theorem2_inputs(alpha: object, epsilon: object, scale: object) -> tuple[int, float, float]:
    return (
        _integer_order(alpha),
        v.positive("epsilon", epsilon),
        v.positive("scale", scale),
    )


def skellam_rdp_theorem2_paper(alpha: int, epsilon: float, scale: float, users: int) -> float:
    """The paper's per-batch RDP statement of Theorem 2, as printed.

    Chowdhury & Zhou 2023, proof of Theorem 2 (spec §3.2)::

        ε̂_n(α) = αε²/2 + min{ (2α-1)ε²/(4s²n) + 3ε/(2s³n^{3/2}),  3ε²/(2s√n) }.

    **Known slip (spec §3.2 [RECON], §10 item 1).** This is Lemma 3 with ``g = sε√n`` (no
    ceiling) except the second min-argument: Lemma 3 gives ``3Δ/(2σ²) = 3ε²/(2g) =
    3ε/(2s√n)``, while the paper prints ``3ε²/(2s√n)``. For ``ε < 1`` the printed value is
    smaller than the true one, so Lemma 3 does *not* imply it; it is provided only to
    cross-check the paper. Use :func:`skellam_rdp_theorem2_lemma3` or the exact RDP. (Against
    the *exact* Skellam RDP, which lies below the Gaussian ``αΔ²/(2σ²)``, every Theorem-2 form
    dominated on all points checked by :mod:`verification.exactness`: the slip is one of proof,
    not of privacy, on those points.)

    Parameters
    ----------
    alpha : int
        Integer order ``α >= 2``.
    epsilon : float
        ``ε > 0``.
    scale : float
        ``s > 0``.
    users : int
        Batch size ``n >= 1``.

    Returns
    -------
    float
        The printed formula, rounded up.
    """
    a, eps, s = _theorem2_inputs(alpha, epsilon, scale)
    n = v.integer("users", users, minimum=1)
    with mp.workdps(_DPS):
        e, sm, nm = mp.mpf(eps), mp.mpf(s), mp.mpf(n)
        first = (2 * a - 1) * e**2 / (4 * sm**2 * nm) + 3 * e / (2 * sm**3 * nm**1.5)
        second = 3 * e**2 / (2 * sm * mp.sqrt(nm))
        return float_up(a * e**2 / 2 + min(first, second))


def _theorem2_headline_mp(a: int, eps: float, s: float) -> Mpf:
    e, sm = mp.mpf(eps), mp.mpf(s)
    first = (2 * a - 1) * e**2 / (4 * sm**2) + 3 * e / (2 * sm**3)
    second = 3 * e**2 / (2 * sm)
    return a * e**2 / 2 + min(first, second)


def skellam_rdp_theorem2_headline(alpha: int, epsilon: float, scale: float) -> float:
    """The headline RDP curve of Theorem 2, valid for ``α = 2, 3, ...`` as stated.

    Chowdhury & Zhou 2023, Theorem 2 (spec §3.2), obtained from the per-batch statement with
    ``n >= 1``::

        ε̂(α) = αε²/2 + min{ (2α-1)ε²/(4s²) + 3ε/(2s³),  3ε²/(2s) }.

    It inherits the slip of :func:`skellam_rdp_theorem2_paper` and, because the real ``g`` is
    a ceiling that can be below ``s``, it can understate the Lemma-3 value: e.g. at
    ``α = 100, ε = 0.2, s = 2, n = 2`` (``g = 1``) it gives 2.03 against 2.06 from Lemma 3,
    and at ``α = 21, ε = 0.3535, s = 2, n = 2`` 1.4058 against 1.4956, i.e. 6% too small
    (see :func:`theorem2_discrepancy`). A cross-check only, not a proved bound (it still
    dominated the exact RDP on every point checked by :mod:`verification.exactness`).

    Parameters
    ----------
    alpha : int
        Integer order ``α >= 2``.
    epsilon : float
        ``ε > 0``.
    scale : float
        ``s > 0``.

    Returns
    -------
    float
        The printed formula, rounded up.
    """
    a, eps, s = _theorem2_inputs(alpha, epsilon, scale)
    with mp.workdps(_DPS):
        return float_up(_theorem2_headline_mp(a, eps, s))


def _theorem2_lemma3_mp(a: int, eps: float, g: int) -> Mpf:
    e = mp.mpf(eps)
    return _skellam_akl_mp(a, mp.mpf(g) ** 2 / e**2, mp.mpf(g) ** 2, mp.mpf(g))


def skellam_rdp_theorem2_lemma3(alpha: int, epsilon: float, scale: float, users: int) -> float:
    """Per-batch RDP of Theorem 2's protocol computed from Lemma 3 with the actual integers.

    Spec §3.2, "Implementation rule": Lemma 3 (:func:`skellam_rdp_akl`) with sensitivity
    ``Δ = g = ceil(sε√n)`` (:func:`theorem2_g`) and total variance ``σ² = g²/ε²``, which is
    the noise the protocol actually adds (``n`` shares ``Sk(0, g²/(nε²))``). This is the value
    to account with; the paper's closed forms are cross-checks.

    Parameters
    ----------
    alpha : int
        Integer order ``α >= 2``.
    epsilon : float
        ``ε > 0``.
    scale : float
        ``s > 0``.
    users : int
        Batch size ``n >= 1``.

    Returns
    -------
    float
        The RDP bound, rounded up.
    """
    a, eps, _ = _theorem2_inputs(alpha, epsilon, scale)
    g = theorem2_g(epsilon, scale, users)
    with mp.workdps(_DPS):
        return float_up(_theorem2_lemma3_mp(a, eps, g))


def theorem2_discrepancy(alpha: int, epsilon: float, scale: float, users: int) -> float:
    """Ratio ``headline / Lemma 3`` of Theorem 2's closed form to the value it should bound.

    ``skellam_rdp_theorem2_headline(α, ε, s) / skellam_rdp_theorem2_lemma3(α, ε, s, n)``,
    both at 50 digits, returned as the nearest float (a diagnostic, not a privacy quantity,
    so no rounding direction). A value below 1 means the paper's headline *understates* the
    privacy loss of the batch.

    **Correction to the spec.** The spec (§3.2) reports an understatement "by up to 1.5%" on
    its grid (ε in [0.01, 10], s in {1, 2, 5, 10, 100}, n = 2..2^21, α = 2..1000), citing
    ``α = 100, ε = 0.2, s = 2, n = 2``, where this ratio is ``2.03/2.06 ≈ 0.9854``. At that
    same ``(ε, s, n)`` the worst order is ``α = 72`` (ratio 0.98026, 2.0% too small), and on
    the stated ranges the understatement reaches 6.0%: at ``ε = 0.3535, s = 2, n = 2``
    (``g = ceil(0.99985) = 1``) and ``α = 21`` the ratio is 0.93998. The mechanism: with
    ``g = 1`` Lemma 3's second min-argument is ``3ε²/2``, while the headline caps it at
    ``3ε²/(2s)``; the gap matters most at the smallest α for which Lemma 3 takes that cap.

    Parameters
    ----------
    alpha : int
        Integer order ``α >= 2``.
    epsilon : float
        ``ε > 0``.
    scale : float
        ``s > 0``.
    users : int
        Batch size ``n >= 1``.

    Returns
    -------
    float
        The ratio.
    """
    a, eps, s = _theorem2_inputs(alpha, epsilon, scale)
    g = theorem2_g(epsilon, scale, users)
    with mp.workdps(_DPS):
        return float(_theorem2_headline_mp(a, eps, s) / _theorem2_lemma3_mp(a, eps, g))


# --------------------------------------------------------------------------------------------
# Sum of discrete Gaussians (spec §3.3)
# --------------------------------------------------------------------------------------------


def _kls_inputs(
    sigma: object, count: object, sensitivity: object, dimension: object, l1: object
) -> tuple[float, int, int, int]:
    """Validated ``(σ, n, S2, m)`` for Prop. 13, which needs ``σ >= 1/2`` (see ``_lattice_shift``)."""
    s = v.positive("sigma", sigma)
    if s < 0.5:
        raise ParameterError("sigma", sigma, "a real number >= 1/2 (Kairouz–Liu–Steinke 2021 Prop. 13)")
    n = v.integer("count", count, minimum=1)
    l2_squared, _, moving = _lattice_shift(sensitivity, dimension, l1)
    return s, n, l2_squared, moving


def sum_discrete_gaussians_epsilon_kls(
    sigma: float,
    count: int,
    sensitivity: float = 1,
    *,
    dimension: int = 1,
    l1: float | None = None,
) -> float:
    """ε such that adding a sum of ``count`` discrete Gaussians is ``(1/2)ε²``-zCDP.

    Kairouz, Liu & Steinke 2021, "The Distributed Discrete Gaussian Mechanism for Federated
    Learning with Secure Aggregation", Proposition 13 = the spec's Lemma 4 (§3.3). With
    ``X_i ~ N_Z(0, σ²)`` i.i.d. (σ is the *per-user* parameter) and ``Z_n = Σ_{i≤n} X_i``, adding
    ``Z_n`` to a query of integer sensitivity ``Δ`` is ``(1/2)ε²``-zCDP with::

        ε = min{ sqrt(Δ²/(nσ²) + ξ/2),  Δ/(√n σ) + ξ },
        ξ = 10 Σ_{k=1}^{n-1} exp(-2π²σ² k/(k+1)).

    **d dimensions** (i.i.d. sums on every coordinate, a change ``v ∈ Z^d`` with
    ``‖v‖₂ <= Δ2``)::

        ε = min{ sqrt(Δ2²/(nσ²) + m ξ/2),  Δ2/(√n σ) + √m ξ },

    with ``m <= d`` the nonzero coordinates of ``v`` (``m = min(d, ⌊Δ1⌋, ⌊√d Δ2⌋, ⌊Δ2²⌋)``,
    see ``_lattice_shift``; ``Δ2²`` is taken as ``⌊Δ2²⌋``, ``‖v‖₂²`` being an integer). Derived
    here from the 1-D statement: zCDP of independent coordinates adds (the Rényi divergence of
    a product law is the sum of the coordinates'), coordinate ``i`` contributes ``ε_i²/2`` at
    ``Δ = |v_i|`` (nothing where ``v_i = 0``), and either form summed over the moving
    coordinates gives ``Σ(v_i²/(nσ²) + ξ/2) <= Δ2²/(nσ²) + mξ/2``, respectively
    ``Σ(|v_i|/(√nσ) + ξ)² = ‖v‖₂²/(nσ²) + 2ξ‖v‖₁/(√nσ) + mξ² <= (Δ2/(√nσ) + √m ξ)²``
    (``‖v‖₁ <= √m ‖v‖₂``). The second form is KLS's d-dimensional one, which has ``τ√d``
    (the authors' accounting code, google-research/federated
    ``distributed_dp/accounting_utils.py``, evaluates ``(α/2)(Δ2/(√nσ) + √d τ)²`` for
    their Prop. 14); ``d ξ`` there, as sometimes quoted, is also valid but looser.

    ξ is summed with a certified tail bound (see ``_xi_sum_upper``) in ``O(1)`` special
    function calls beyond the first few terms, so large ``n`` is cheap. Requires ``σ >= 1/2``.

    Parameters
    ----------
    sigma : float
        Per-user parameter ``σ >= 1/2``.
    count : int
        Number of summands ``n >= 1``.
    sensitivity : int or float
        The ℓ2 sensitivity: in one dimension the integer ``Δ >= 1``; for a vector any real ``>= 1``.
    dimension : int
        ``d >= 1``, the coordinates of the query.
    l1 : float, optional
        An ℓ1 sensitivity ``Δ1 >= 1`` (it only bounds ``m``).

    Returns
    -------
    float
        ε, rounded up.
    """
    s, n, l2_squared, moving = _kls_inputs(sigma, count, sensitivity, dimension, l1)
    with mp.workdps(_DPS):
        return float_up(_kls_epsilon_mp(mp.mpf(s), n, l2_squared, moving))


def sum_discrete_gaussians_rho_kls(
    sigma: float,
    count: int,
    sensitivity: float = 1,
    *,
    dimension: int = 1,
    l1: float | None = None,
) -> float:
    """zCDP ``ρ = ε²/2`` for :func:`sum_discrete_gaussians_epsilon_kls` (KLS 2021 Prop. 13, and
    its d-dimensional form there).

    Parameters
    ----------
    sigma : float
        Per-user parameter ``σ >= 1/2``.
    count : int
        Number of summands ``n >= 1``.
    sensitivity : int or float
        The ℓ2 sensitivity: in one dimension the integer ``Δ >= 1``; for a vector any real ``>= 1``.
    dimension : int
        ``d >= 1``, the coordinates of the query.
    l1 : float, optional
        An ℓ1 sensitivity ``Δ1 >= 1``.

    Returns
    -------
    float
        ρ, rounded up.
    """
    s, n, l2_squared, moving = _kls_inputs(sigma, count, sensitivity, dimension, l1)
    with mp.workdps(_DPS):
        return float_up(_kls_epsilon_mp(mp.mpf(s), n, l2_squared, moving) ** 2 / 2)


def _theorem4_inputs(scale: object, horizon: object) -> tuple[float, int]:
    s = v.positive("scale", scale)
    if s < 0.5:
        raise ParameterError(
            "scale", scale, "a real number >= 1/2 (Lemma 4 needs per-user σ >= 1/2, and σ >= s)"
        )
    return s, v.integer("horizon", horizon, minimum=2)


def theorem4_xi(scale: float, horizon: int) -> float:
    """The batch-independent ξ of Theorem 4: ``10 Σ_{k=1}^{T/2-1} exp(-2π²s² k/(k+1))``.

    Chowdhury & Zhou 2023, proof of Theorem 4 (spec §3.3). Per batch, Lemma 4 is applied with
    per-user ``σ² = g²/(nε²) >= s²`` and ``n <= T/2``; ξ_n is increasing in ``n`` and
    decreasing in σ, so this ξ bounds every ξ_n. (The proof's "τ_n <= τ" is a typo for
    ``ξ_n <= ξ``.) The upper summation limit is ``floor(T/2) - 1`` for odd ``T``. Lemma 4 needs
    σ >= 1/2, hence ``s >= 1/2`` here (the paper takes ``s >= 1``).

    Parameters
    ----------
    scale : float
        The scaling factor ``s >= 1/2``.
    horizon : int
        The horizon ``T >= 2``.

    Returns
    -------
    float
        ξ, rounded up (certified upper bound on the sum).
    """
    s, t = _theorem4_inputs(scale, horizon)
    with mp.workdps(_DPS):
        return float_up(10 * _xi_sum_upper(2 * mp.pi**2 * mp.mpf(s) ** 2, t // 2 - 1))


def theorem4_epsilon(epsilon: float, scale: float, horizon: int) -> float:
    """Theorem 4's batch-independent ε̂: ``min{ sqrt(ε² + ξ/2), ε + ξ }`` with ξ of :func:`theorem4_xi`.

    Chowdhury & Zhou 2023, Theorem 4 (spec §3.3): every batch is ``(1/2)ε̂²``-zCDP. The theorem
    assumes ``ε ∈ (0, 1)`` for its regret part; the privacy statement (Lemma 4) holds for any
    ``ε > 0`` and is not restricted here (the spec's own test vector uses ``ε = 1``).

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    scale : float
        ``s >= 1/2``.
    horizon : int
        ``T >= 2``.

    Returns
    -------
    float
        ε̂, rounded up.
    """
    eps = v.positive("epsilon", epsilon)
    s, t = _theorem4_inputs(scale, horizon)
    with mp.workdps(_DPS):
        xi = 10 * _xi_sum_upper(2 * mp.pi**2 * mp.mpf(s) ** 2, t // 2 - 1)
        e = mp.mpf(eps)
        return float_up(min(mp.sqrt(e**2 + xi / 2), e + xi))
