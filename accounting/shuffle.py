"""Privacy amplification by shuffling, one published result per function.

``n`` users each run an ``ε0``-LDP local randomizer; a shuffler permutes the ``n`` reports. The
functions here bound the ``(ε, δ)`` of the shuffled output for neighbouring datasets that differ
in one user's input (replace-one), and say which theorem they are:

* :func:`efmrtt` — Erlingsson, Feldman, Mironov, Raghunathan, Talwar & Thakurta (SODA 2019);
* :func:`blanket_generic`, :func:`blanket_randomized_response` — Balle, Bell, Gascón & Nissim,
  "The privacy blanket of the shuffle model" (CRYPTO 2019);
* :func:`fmt_closed`, :func:`fmt_numerical` (and :func:`fmt_delta`) — Feldman, McMillan & Talwar,
  "Hiding among the clones" (FOCS 2021): Theorem 3.1 and the numerical bound, the latter
  certified here (an enclosure of the analysis's exact ``ε``, so the gap is visible);
* :func:`randomized_response_exact` — the exact ``ε`` of shuffled binary randomized response
  (small ``n``): a *lower* bound for every generic analysis, which must cover this randomizer;
* :func:`gaussian_amplification_lemma_f2`, :func:`theorem53_sigma0` — Lemma F.2 and the σ0
  recipe of Theorem 5.3 of the federated LCB paper (``papers/federated-lcb.md`` §5.2.3–§5.2.4);
* :func:`relaxed_secagg_split` — Cheu & Yan's relaxed secure aggregation as Theorem 3 of the
  distributed MAB paper uses it (``papers/distributed-dp-mab.md`` §3.6).

:func:`amplify` dispatches by name (``dp-account shuffle`` on the command line).

The shuffle summation protocols (bits with binomial noise; their parameters and the cited
theorems' guarantees are :func:`accounting.calibration.shuffle_sum_parameters`) are accounted
exactly here, not through a theorem: the server's view is the count of ones of each coordinate, the
users' encoded sum plus ``Bin(b n, p)``, at sensitivity ``levels`` (the reduction is written out
above :func:`shuffle_sum_ledger`). :func:`shuffle_sum_epsilon`, :func:`shuffle_sum_delta` and
:func:`shuffle_sum_rdp` answer for one call (exact for one coordinate; for ``D`` coordinates exact
at ``p = 1/2``, else a certified bound: within about ``1/(2b)`` relatively at the DP-DPE protocols'
``p``, looser far from 1/2), and
:func:`shuffle_sum_calibration` finds the least ``b`` by exact accounting beside the cited one
(``dp-account shuffle-protocol --exact``).

Conventions
-----------
- Every ε and δ returned is rounded *up* (:func:`~accounting.certified.float_up`) from a value
  computed in :mod:`mpmath` (at 50 digits, or in interval arithmetic); the ``lower`` ends of
  enclosures are rounded down. A calibrated σ is rounded up, a local budget ``ε0``/``δ0`` down.
- A theorem applied outside its hypotheses does not give a number: the result has
  ``valid=False``, ``conditions`` says which hypothesis fails, and ``epsilon``/``delta`` fall back
  to the trivial guarantee (shuffling is post-processing of the ``ε0``-LDP reports, so the output
  is ``(ε0, 0)``-DP) — a true statement, never the theorem's formula evaluated where it is not
  proved.
- Logarithms are natural.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

import numpy as np
from mpmath import iv, mp
from numpy.typing import NDArray

from accounting import bounds
from accounting import validate as v
from accounting.accountant import Accountant
from accounting.calibration import ShuffleSumParameters, _bracket_and_search, shuffle_sum_parameters
from accounting.certified import DEFAULT_DPS, Enclosure, Interval, Mpf, float_down, float_up, precision
from accounting.certified import lower as _lo
from accounting.certified import upper as _hi
from accounting.composition import drv_epsilon
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError
from accounting.mechanisms import AdditiveNoise, ApproxDP
from accounting.neighbouring import Neighbouring
from accounting.noise import Binomial, CenteredBinomial, LatticeNoise, ln_factorial
from accounting.search import largest, smallest

__all__ = [
    "BOUNDS",
    "MAX_USERS",
    "MIN_DELTA",
    "RR_EXACT_MAX_USERS",
    "AmplificationBound",
    "RelaxedSecAggSplit",
    "ShuffleSumCalibration",
    "Theorem53Calibration",
    "amplify",
    "blanket_generic",
    "blanket_randomized_response",
    "efmrtt",
    "fmt_closed",
    "fmt_delta",
    "fmt_numerical",
    "gaussian_amplification_lemma_f2",
    "randomized_response_exact",
    "relaxed_secagg_split",
    "shuffle_sum_calibration",
    "shuffle_sum_delta",
    "shuffle_sum_epsilon",
    "shuffle_sum_exact",
    "shuffle_sum_ledger",
    "shuffle_sum_noise",
    "shuffle_sum_rdp",
    "theorem53_sigma0",
]

_DPS: Final = 50
"""Working precision (decimal digits) of the closed forms."""

_IV_DPS: Final = 30
"""Decimal digits of the interval arithmetic behind the numerical bound's anchors."""

MAX_USERS: Final = 10**9
"""Largest ``n`` the numerical bound accepts: its window of clone counts grows like ``sqrt(n)``,
and every integer it handles must stay exact in binary64 (``< 2^53``)."""

MIN_DELTA: Final = 1e-100
"""Smallest δ the numerical bound accepts: below it the binary64 fast path could underflow."""

MIN_EPSILON0: Final = 1e-12
"""Smallest ε0 the numerical bound accepts: its interval arithmetic works at a fixed precision and
stops finishing near 1e-17 (a smaller ε0 is amplified to at most ε0 itself)."""

_TRIVIAL = "the trivial bound: shuffling is post-processing of the ε0-LDP reports, so (ε0, 0)-DP"


@dataclass(frozen=True)
class AmplificationBound:
    """A shuffled ``(ε, δ)`` guarantee and where it comes from.

    Attributes
    ----------
    epsilon : float
        The certified ε, rounded up. When ``valid`` is False this is the trivial guarantee
        (``ε0``, or ``ε0`` of the local mechanism), not the theorem's formula.
    delta : float
        The δ the guarantee holds with (the requested δ, or the δ the theorem produces).
    bound : str
        The short name (``"fmt-numerical"``, ``"fmt-closed"``, ``"blanket"``, ...).
    theorem : str
        The paper and theorem it implements.
    lower : float or None
        For the numerical bound: the largest ε (rounded down) at which the analysis's own δ is
        certainly above the target — no refinement of the computation can go below it, so
        ``[lower, epsilon]`` is the gap. For :func:`randomized_response_exact`, the lower end of
        the exact value's enclosure. ``None`` for closed forms.
    valid : bool
        Whether the number is the theorem's: False when a hypothesis fails (or the theorem
        certifies nothing below the trivial bound), and ``epsilon`` is then the trivial one.
    conditions : str
        The hypotheses and how they were checked (or which one fails).
    """

    epsilon: float
    delta: float
    bound: str
    theorem: str
    lower: float | None
    valid: bool
    conditions: str

    def event(self) -> ApproxDP:
        """This guarantee as an event an :class:`~accounting.accountant.Accountant` composes
        (for the replace-one relation of the shuffle model's theorems)."""
        return ApproxDP(self.epsilon, self.delta, f"{self.bound}: {self.theorem}")


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _epsilon0(value: object, name: str = "epsilon0") -> float:
    e0 = v.positive(name, value)
    if e0 > 100:
        raise ParameterError(name, value, "a local ε0 in (0, 100]")
    return e0


def _users(value: object, name: str = "users") -> int:
    return v.integer(name, value, minimum=1)


def _trivial(e0: float, dl: float, bound: str, theorem: str, why: str) -> AmplificationBound:
    return AmplificationBound(e0, dl, bound, theorem, None, False, f"{why}; reporting {_TRIVIAL}")


# --------------------------------------------------------------------------------------------
# Erlingsson et al. 2019
# --------------------------------------------------------------------------------------------

_EFMRTT = (
    "Erlingsson, Feldman, Mironov, Raghunathan, Talwar & Thakurta 2019 (SODA), 'Amplification by "
    "shuffling', the explicit corollary for eps0 < 1/2: eps = 12 eps0 sqrt(ln(1/delta)/n)"
)


def efmrtt(epsilon0: float, users: int, delta: float) -> AmplificationBound:
    """``ε = 12 ε0 sqrt(ln(1/δ)/n)``: Erlingsson et al. 2019.

    Erlingsson, Feldman, Mironov, Raghunathan, Talwar & Thakurta, "Amplification by Shuffling:
    From Local to Central Differential Privacy via Anonymity" (SODA 2019), the explicit corollary
    of their amplification theorem: for ``ε0 < 1/2``, ``n > 1000`` and ``δ < 1/100`` the shuffled
    output is ``(12 ε0 sqrt(ln(1/δ)/n), δ)``-DP. The statement is quoted from memory of the paper
    (it is not among ``papers/``; status [K]); the tests check it against the exact shuffled
    randomized response and against :func:`fmt_numerical`. Outside the hypotheses (or when the
    formula exceeds ``ε0``) the trivial bound is returned with ``valid=False``.

    Parameters
    ----------
    epsilon0 : float
        The local randomizer's pure ``ε0 > 0``.
    users : int
        ``n >= 1``.
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    AmplificationBound
    """
    e0 = _epsilon0(epsilon0)
    n = _users(users)
    dl = v.open_unit("delta", delta)
    failed = []
    if not e0 < 0.5:
        failed.append(f"ε0 = {e0:g} is not < 1/2")
    if not n > 1000:
        failed.append(f"n = {n} is not > 1000")
    if not dl < 0.01:
        failed.append(f"δ = {dl:g} is not < 1/100")
    if failed:
        return _trivial(e0, dl, "efmrtt", _EFMRTT, "; ".join(failed))
    with mp.workdps(_DPS):
        eps = 12 * mp.mpf(e0) * mp.sqrt(-mp.log(mp.mpf(dl)) / n)
        value = float_up(eps)
    if value > e0:
        return _trivial(e0, dl, "efmrtt", _EFMRTT, f"the formula gives {value:g} > ε0")
    return AmplificationBound(
        value, dl, "efmrtt", _EFMRTT, None, True, "ε0 < 1/2, n > 1000, δ < 1/100: all hold"
    )


# --------------------------------------------------------------------------------------------
# Feldman, McMillan & Talwar 2021: closed form
# --------------------------------------------------------------------------------------------

_FMT_CLOSED = (
    "Feldman, McMillan & Talwar 2021 (FOCS), 'Hiding among the clones', Theorem 3.1: "
    "eps = ln(1 + (e^eps0-1)/(e^eps0+1) (8 sqrt(e^eps0 ln(4/delta)/n) + 8 e^eps0/n))"
)


def fmt_closed(epsilon0: float, users: int, delta: float) -> AmplificationBound:
    """Feldman–McMillan–Talwar 2021, Theorem 3.1 (the closed form).

    For ``ε0 <= ln(n / (16 ln(2/δ)))`` the shuffled output of ``n`` ``ε0``-LDP reports is
    ``(ε, δ)``-DP with::

        ε = ln(1 + (e^ε0 - 1)/(e^ε0 + 1) · (8 sqrt(e^ε0 ln(4/δ)/n) + 8 e^ε0/n)).

    This is the statement as the paper gives it (also as the federated spec recalls it, §5.2.3
    [K], and as Lemma F.2 of that paper generalises it). The authors' public script
    (``closedformanalysis``) computes a slightly larger variant,
    ``ln(1 + (1 - e^-ε0)(e^ε' - 1)/(1 + e^(-ε0-ε')))`` with ``e^ε' = 1 + 8 sqrt(...) + 8e^ε0/n``,
    and also asks for ``ln(4/δ)`` in the hypothesis: at ``(ε0, n, δ) = (4, 1e5, 1e-6)`` it gives
    0.5378 where the theorem gives 0.5346. Both are upper bounds on :func:`fmt_numerical`.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 > 0``.
    users : int
        ``n >= 1``.
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    AmplificationBound
        ``valid=False`` (and the trivial ``ε0``) outside the hypothesis.
    """
    e0 = _epsilon0(epsilon0)
    n = _users(users)
    dl = v.open_unit("delta", delta)
    with mp.workdps(_DPS):
        d = mp.mpf(dl)
        limit = mp.log(n / (16 * mp.log(2 / d))) if n > 16 * mp.log(2 / d) else -mp.inf
        holds = mp.mpf(e0) <= limit
        cond = f"ε0 = {e0:g} {'<=' if holds else '>'} ln(n/(16 ln(2/δ))) = {mp.nstr(limit, 6)}"
        if not holds:
            return _trivial(e0, dl, "fmt-closed", _FMT_CLOSED, cond)
        ee0 = mp.exp(mp.mpf(e0))
        inner = 8 * mp.sqrt(ee0 * mp.log(4 / d) / n) + 8 * ee0 / n
        eps = mp.log1p((ee0 - 1) / (ee0 + 1) * inner)
        value = float_up(eps)
    return AmplificationBound(value, dl, "fmt-closed", _FMT_CLOSED, None, True, cond)


# --------------------------------------------------------------------------------------------
# Feldman, McMillan & Talwar 2021: the numerical bound, certified
# --------------------------------------------------------------------------------------------
#
# The clone reduction (FMT 2021 §3, the pair behind Theorem 3.1): each of the other n - 1 reports
# is, with probability p = e^-ε0, a "clone" — distributed as user 1's report on x1 or on x1',
# with probability 1/2 each. With C ~ Bin(n-1, p) clones, A ~ Bin(C, 1/2) of them of the first
# kind and Δ ~ Bern(e^ε0/(e^ε0+1)), the shuffled output on the two datasets is a post-processing of
#     P = (A + Δ, C - A + 1 - Δ)    and    Q = (A + 1 - Δ, C - A + Δ),
# so the shuffled mechanism is (ε, δ(ε))-DP with δ(ε) the hockey-stick divergence of P and Q
# (symmetric in the two directions). Given C = c the first coordinate K determines the pair, and
#     P(k) - e^ε Q(k) = κ B_c(k-1) (k - k*_c)/k,     B_c = Bin(c, 1/2) pmf,
# with θ = (1 + tanh(ε/2)/tanh(ε0/2))/2, k*_c = (c+1)θ and κ = tanh(ε0/2)(1 + e^ε), derived here.
# Summing the positive terms k > k*_c, with T_c = floor(k*_c), V_c = P(Bin(c, 1/2) > T_c),
# φ = 1 - θ and τ = 2θ - 1 (φ keeps its relative precision as ε -> ε0, where θ -> 1),
#     δ_c = κ [φ B_c(T_c) - τ V_c],      δ(ε) = Σ_c Bin(n-1, p)(c) δ_c.
# (Any integer T and any θ' >= θ in the same formula give a value <= δ_c: negative terms are
# added or positive ones dropped or shrunk.) δ_c is non-increasing in c: P_{c+1}, Q_{c+1} are
# P_c, Q_c with an independent fair coin added to K, a common post-processing.
#
# Evaluating this fast and certified:
# - The clone counts c are cut to a window whose left-out Bin(n-1, p) mass is bounded by
#   Chernoff's bound in interval arithmetic (each left-out δ_c <= δ_0 = (e^ε0 - e^ε)/(e^ε0 + 1)).
# - The window is cut into chunks (_rows_per_chunk). At each chunk's last row m the pmf
#   Bin(n-1, p)(m) and B_m(T_m) are certified anchors (log-factorials by Stirling's series with
#   its remainder bound, in mpmath.iv: accounting.noise.ln_factorial) and V_m/B_m(T_m) is summed
#   in binary64 with a geometric tail bound; every other row follows downwards by exact
#   recurrences (T_{c+1} - T_c ∈ {0, 1})
#       w_{c+1}/w_c = (n-1-c)/(c+1) · p/(1-p),
#       B_{c+1}(T)/B_c(T) = (c+1)/(2(c+1-T)),   B_c(T+1)/B_c(T) = (c-T)/(T+1),
#       V_{c+1} = V_c + B_c(T_c)/2  (T unchanged),   V_{c+1} = V_c - B_c(T_c + 1)/2  (T up by one).
#   These use only +, -, ×, ÷ of binary64 numbers, each correctly rounded (IEEE 754), so a
#   rigorous relative error γ_k = 1.01 k u (u = 2^-53, k roundings) is carried along every
#   quantity and added outward at the end. Going down, B_c(T_c) and V_c grow, so the carried
#   absolute errors shrink relative to them.
# - The upper bound uses φ_hi >= φ (θ_lo = 1 - φ_hi), τ rounded down and κ_hi: the sum
#   Σ_k B(k-1)(k - (c+1)θ_lo)_+/k can only be larger; the lower bound uses φ_lo, τ rounded up,
#   κ_lo. The floors T = c + 1 - ceil((c+1)φ) are exact.
# The search for ε runs on the same recurrences with uncertified anchors (mpmath's log-gamma), by
# regula falsi on ln δ; then the answer is certified: δ_hi(ε_up) <= δ at the returned ε_up and
# δ_lo(ε_lo) > δ at ε_lo. Both δ bounds are about 1e-10 apart (relative), the ε ends 2e-11.

_U: Final = 2.0**-53
_ROW_TOL: Final = 1e-30
_FMT_NUMERICAL = (
    "Feldman, McMillan & Talwar 2021 (FOCS), 'Hiding among the clones': the numerical bound — "
    "the exact hockey-stick divergence of the clone reduction (C ~ Bin(n-1, e^-eps0), A ~ Bin(C, 1/2), "
    "Delta ~ Bern(e^eps0/(e^eps0+1))), certified, solved for eps"
)

IntArray = NDArray[np.int64]


def _g(k: float) -> float:
    """A rigorous bound on ``(1+u)^k - 1`` for ``k`` correctly rounded operations (k u < 0.01)."""
    return 1.01 * k * _U


@dataclass(frozen=True)
class _Params:
    """The constants of the reduction at one ``(ε0, n, ε)``, as floats with certified ends.

    ``φ = 1 - θ`` and ``τ = 2θ - 1 = 1 - 2φ`` are carried instead of ``θ``: ``φ`` keeps full
    relative precision as ε approaches ε0 (where θ would round to 1).
    """

    n: int
    phi: float  # φ_hi for the upper side (θ_lo = 1 - φ_hi), φ_lo for the lower side
    tau: float  # 1 - 2φ, rounded down for the upper side and up for the lower side
    kappa: Interval  # iv enclosure of κ = tanh(ε0/2)(1 + e^ε)
    delta0: Interval  # iv enclosure of δ_0 = (e^ε0 - e^ε)/(e^ε0 + 1), the largest δ_c
    rho: float  # p/(1-p) = 1/(e^ε0 - 1)
    inv_rho: float  # e^ε0 - 1
    rho_err: float  # relative error bound of rho and inv_rho
    log_p: Interval  # ln p = -ε0
    log_q: Interval  # ln(1 - p)


def _params(n: int, e0: float, eps: float, side: int) -> _Params:
    """Constants for one side: ``+1`` upper bound, ``-1`` lower bound, ``0`` plain estimate."""
    with precision(_IV_DPS):
        E0, E = iv.mpf(e0), iv.mpf(eps)
        x0, x = iv.exp(E0), iv.exp(E)
        # φ = (1 - tanh(ε/2)/tanh(ε0/2))/2 = sinh((ε0-ε)/2) / (2 sinh(ε0/2) cosh(ε/2)): no cancellation
        h = (E0 - E) / 2
        sinh_h = (iv.exp(h) - iv.exp(-h)) / 2
        sinh_0 = (iv.exp(E0 / 2) - iv.exp(-E0 / 2)) / 2
        cosh_e = (iv.exp(E / 2) + iv.exp(-E / 2)) / 2
        phi = sinh_h / (2 * sinh_0 * cosh_e)
        kappa = (x0 - 1) / (x0 + 1) * (1 + x)
        delta0 = (x0 - x) / (x0 + 1)
        rho = 1 / (x0 - 1)
        log_q = iv.log(1 - iv.exp(-E0))
        if side > 0:
            ph = min(float_up(_hi(phi)), 0.5)
            tau = float_down(1 - 2 * mp.mpf(ph))
        elif side < 0:
            ph = max(float_down(_lo(phi)), 0.0)
            tau = float_up(1 - 2 * mp.mpf(ph))
        else:
            ph = float(mp.mpf(phi.mid))
            tau = 1 - 2 * ph
        rho_hat = float(mp.mpf(rho.mid))
        inv_hat = float(mp.mpf((1 / rho).mid))
        err = max(
            float(abs(mp.mpf(rho_hat) - _hi(rho)) / _lo(rho)),
            float(abs(mp.mpf(rho_hat) - _lo(rho)) / _lo(rho)),
            float(abs(mp.mpf(inv_hat) - _hi(1 / rho)) / _lo(1 / rho)),
            float(abs(mp.mpf(inv_hat) - _lo(1 / rho)) / _lo(1 / rho)),
        )
    return _Params(n, ph, tau, kappa, delta0, rho_hat, inv_hat, 2 * err + 2 * _U, -E0, log_q)


def _floors(c: IntArray, phi: float) -> IntArray:
    """``T_c = floor((c+1)(1-φ)) = c + 1 - ceil((c+1)φ)`` exactly, for a float ``φ``.

    The float product ``(c+1)φ`` is within ``u (c+1)φ`` of the exact one, so only products
    near an integer can be misplaced; those are redone in integer arithmetic.
    """
    prod = (c + 1).astype(np.float64) * phi
    up = np.ceil(prod).astype(np.int64)
    frac = up - prod
    doubtful = np.nonzero((frac < 1e-6) | (frac > 1 - 1e-6))[0]
    if doubtful.size:
        num, den = phi.as_integer_ratio()
        for i in doubtful:
            up[i] = -((-(int(c[i]) + 1) * num) // den)
    return c + 1 - up


def _log_anchors(par: _Params, m: int, t: int, certified: bool) -> tuple[Any, Any]:
    """``ln Bin(n-1, p)(m)`` and ``ln B_m(t)``: intervals when ``certified``, else floats."""
    N = par.n - 1
    if not certified:  # an estimate: mpmath's log-gamma at 30 digits, not certified
        with mp.workdps(_IV_DPS):
            lf = mp.loggamma
            lw = lf(N + 1) - lf(m + 1) - lf(N - m + 1)
            lw += m * mp.mpf(par.log_p.mid) + (N - m) * mp.mpf(par.log_q.mid)
            lb = lf(m + 1) - lf(t + 1) - lf(m - t + 1) - m * mp.log(2)
            return float(lw), float(lb)
    with precision(_IV_DPS):
        lw = ln_factorial(N) - ln_factorial(m) - ln_factorial(N - m) + m * par.log_p
        if N - m:
            lw += (N - m) * par.log_q
        lb = ln_factorial(m) - ln_factorial(t) - ln_factorial(m - t) - m * iv.log(2)
    return lw, lb


def _row_sum(m: int, t: int) -> tuple[float, float]:
    """``σ = S_m(t+1)/B_m(t) = Σ_{j>t} B_m(j)/B_m(t)`` as ``(σ̂, e)`` with ``|σ - σ̂| <= e``.

    Terms by the ratio ``(m-j)/(j+1)``; the ratios decrease in ``j``, so once one is below 1 the
    rest of the row is at most a geometric series.
    """
    length = 64
    while True:
        i = np.arange(length + 1, dtype=np.int64)
        ratios = np.maximum(m - t - i, 0).astype(np.float64) / (t + 1 + i).astype(np.float64)
        terms = np.cumprod(ratios)  # terms[i] = B_m(t+1+i)/B_m(t), 2(i+1) roundings
        head = float(np.sum(terms[:length]))
        last, r = float(terms[length]), float(ratios[length])
        if last == 0.0:
            tail = 0.0
        elif r + 4 * _U < 1:
            tail = last / (1 - (r + 4 * _U)) * (1 + _g(2 * length + 8))
        else:
            tail = math.inf
        if tail <= _ROW_TOL * max(head, 1.0) or length > 4 * (m + 2):
            break
        length *= 2
    if math.isinf(tail):  # pragma: no cover - the row always ends or decays before 4(m+2) terms
        raise UnsupportedError("internal: a binomial row did not decay")
    # the true σ lies in [head (1 - g), head (1 + g) + tail]
    return head + tail / 2, head * _g(3 * length + 8) + tail / 2


def _chunk(par: _Params, lo: int, hi: int, side: int) -> Any:
    """``Σ_{c=lo..hi} w_c δ_c / κ`` over one chunk of clone counts.

    ``side`` is ``+1`` for a certified upper bound, ``-1`` for a certified lower bound (both
    returned as :mod:`mpmath.iv` intervals whose relevant end is the bound), ``0`` for the natural
    log of a plain float estimate. Per row, with ``V_c = S_c(T_c + 1)`` the tail past ``T_c``,

        δ_c/κ = θ B_c(T_c) - (2θ - 1) S_c(T_c) = φ B_c(T_c) - τ V_c.

    The anchors are at the chunk's *last* row and the recurrences run downwards, where ``B_c(T_c)``
    and ``V_c`` grow, so the carried absolute errors shrink relative to the values.
    """
    c = np.arange(lo, hi + 1, dtype=np.int64)
    t = _floors(c, par.phi)
    m, tm = hi, int(t[-1])
    phi, tau = par.phi, par.tau
    n1 = par.n - 1
    cc = c[:-1].astype(np.float64)
    tc = t[:-1].astype(np.float64)
    step = np.diff(t)  # T_{c+1} - T_c, 0 or 1
    # Row c+1 -> row c: B_c(T_c)/B_{c+1}(T_{c+1}) and w_c/w_{c+1}, one rounding each in the
    # ratio (exact integers below 2^53) plus the error of p/(1-p) for w.
    qb = np.where(step == 0, 2 * (cc + 1 - tc) / (cc + 1), 2 * (tc + 1) / (cc + 1))
    qw = (cc + 1) / (n1 - cc) * par.inv_rho
    b = np.ones(c.size)
    w = np.ones(c.size)
    if c.size > 1:
        b[:-1] = np.cumprod(qb[::-1])[::-1]
        w[:-1] = np.cumprod(qw[::-1])[::-1]
    dist = (m - c).astype(np.float64)
    gb = 1.01 * _U * (2 * dist + 2)  # _g, elementwise
    gw = 1.01 * _U * (3 * dist + 3) + 1.01 * dist * par.rho_err
    # V_c/B_m(T_m): the anchor row's tail, then V_c = V_{c+1} - (increment c -> c+1), which is
    # +B_c(T_c)/2 (T unchanged) or -B_c(T_c + 1)/2 (T up by one).
    sigma, sigma_err = _row_sum(m, tm)
    inc = np.where(step == 0, 0.5 * b[:-1], -0.5 * b[:-1] * ((cc - tc) / (tc + 1)))
    vv = np.full(c.size, sigma)
    v_err = np.full(c.size, sigma_err)
    if c.size > 1:
        part = np.cumsum(inc[::-1])[::-1]  # Σ_{i=c}^{m-1} inc_i
        vv[:-1] = sigma - part
        err_terms = np.abs(inc) * (gb[:-1] + 3 * _U) + _U * np.abs(part)
        v_err[:-1] = sigma_err + 1.01 * np.cumsum(err_terms[::-1])[::-1] + 1.01 * _U * np.abs(vv[:-1])
    if side == 0:  # the natural log of the estimate
        est = float(np.sum(w * np.maximum(phi * b - tau * vv, 0.0)))
        lw, lb = _log_anchors(par, m, tm, certified=False)
        return math.log(est) + lw + lb if est > 0 else -math.inf
    bb = b * (1 + side * gb)
    vb = vv - side * v_err
    ww = w * (1 + side * gw)
    d = phi * bb - tau * vb
    d = np.maximum(d + side * 4 * _U * (phi * bb + tau * np.abs(vb)), 0.0)
    total = float(np.sum(ww * d)) * (1 + side * _g(c.size + 4))
    tiny = np.finfo(np.float64).tiny
    if not (np.all(b >= tiny) and np.all(w >= tiny) and math.isfinite(total)):  # pragma: no cover
        raise UnsupportedError("the numerical bound's binary64 fast path left its range; use a larger delta")
    lw, lb = _log_anchors(par, m, tm, certified=True)
    with precision(_IV_DPS):
        return iv.exp(lw + lb) * iv.mpf(total)


def _rows_per_chunk(phi: float, top: int) -> int:
    """Rows per chunk.

    ``B_c(T_c)`` falls by about ``e^{KL(θ || 1/2)}`` per row (``θ = 1 - φ``), so a chunk spans at
    most ``e^250`` of it (far inside binary64). The rounding error carried down a chunk of ``L``
    rows grows like ``L² u / sqrt(c)``, so rows near ``c`` get ``L = 4 sqrt(c)`` (2049 to 8193).
    """
    kl = (1 - phi) * math.log(2 * (1 - phi)) + (phi * math.log(2 * phi) if phi > 0 else 0.0)
    cap = min(8193.0, max(2049.0, 4 * math.sqrt(top + 1)))
    return int(max(16.0, min(cap, 250 / max(kl, 1e-12))))


def _kl_log_tail(N: int, p: Interval, a: int) -> Interval:
    """``-N KL(a/N || p)`` as an interval: ``ln`` of Chernoff's bound on the tail beyond ``a``."""
    x = iv.mpf(a) / N
    out = iv.mpf(0)
    if a > 0:
        out += x * iv.log(x / p)
    if a < N:
        out += (1 - x) * iv.log((1 - x) / (1 - p))
    return -N * out


def _window(n: int, e0: float, budget: float) -> tuple[int, int, Interval]:
    """Clone counts ``[lo, hi]`` and a certified bound on ``P(C ∉ [lo, hi])``, ``C ~ Bin(n-1, e^-ε0)``."""
    N = n - 1
    if N == 0:
        return 0, 0, iv.mpf(0)
    p = math.exp(-e0)
    mean = N * p
    sd = math.sqrt(N * p * (1 - p))
    z = math.sqrt(2 * max(math.log(2 / budget), 1.0)) + 2
    lo = max(0, math.floor(mean - z * sd))
    hi = min(N, math.ceil(mean + z * sd))
    with precision(_IV_DPS):
        pp = iv.exp(-iv.mpf(e0))
        while True:
            out = iv.mpf(0)
            if lo > 0:
                out += iv.exp(_kl_log_tail(N, pp, lo - 1))
            if hi < N:
                out += iv.exp(_kl_log_tail(N, pp, hi + 1))
            if _hi(out) <= budget:
                return lo, hi, out
            lo = max(0, lo - math.ceil(sd))
            hi = min(N, hi + math.ceil(sd))


def _delta(n: int, e0: float, eps: float, side: int, budget: float) -> Any:
    """The reduction's ``δ(ε)``: an estimate (``side=0``), or an iv upper/lower bound (``±1``)."""
    if eps >= e0:
        return iv.mpf(0) if side else -math.inf
    par = _params(n, e0, eps, side)
    lo, hi, outside = _window(n, e0, budget)
    rows = _rows_per_chunk(par.phi, hi)
    pieces = [_chunk(par, s, min(s + rows - 1, hi), side) for s in range(lo, hi + 1, rows)]
    if side == 0:  # ln δ: log-sum-exp of the chunks' logs, plus ln κ
        top = max(pieces)
        if math.isinf(top):
            return -math.inf
        return top + math.log(sum(math.exp(x - top) for x in pieces)) + float(iv.log(par.kappa).mid)
    with precision(_IV_DPS):
        total = iv.mpf(0)
        for piece in pieces:
            total += piece
        if side > 0:
            return iv.mpf(_hi(par.kappa * total + outside * par.delta0))
        return iv.mpf(max(mp.zero, _lo(par.kappa * total)))


def fmt_delta(epsilon0: float, users: int, epsilon: float) -> Enclosure:
    """``δ(ε)`` of Feldman–McMillan–Talwar's clone reduction, as a certified enclosure.

    The hockey-stick divergence ``D_{e^ε}(P || Q)`` of the pair ``P, Q`` of the clone reduction
    (see the module source for the derivation and the certified evaluation). Shuffling ``n``
    ``ε0``-LDP reports is ``(ε, δ)``-DP for every ``δ >= δ(ε)``.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 ∈ (0, 100]``.
    users : int
        ``n ∈ [1, 1e9]``.
    epsilon : float
        ``ε >= 0``.

    Returns
    -------
    Enclosure
        ``[lo, hi]`` containing the exact ``δ(ε)``; ``float()`` is ``hi`` rounded up.
    """
    e0 = _epsilon0(epsilon0)
    n = _numerical_users(users)
    eps = v.nonnegative("epsilon", epsilon)
    if eps >= e0:
        return Enclosure.exact(0)
    estimate = math.exp(_delta(n, e0, eps, 0, 1e-30))
    budget = max(1e-14 * estimate, 1e-300)
    hi = _delta(n, e0, eps, +1, budget)
    lo = _delta(n, e0, eps, -1, budget)
    return Enclosure(min(_lo(lo), _hi(hi)), _hi(hi))


def _numerical_users(value: object) -> int:
    n = _users(value)
    if n > MAX_USERS:
        raise ParameterError("users", value, f"an integer in [1, {MAX_USERS}] for the numerical bound")
    return n


def fmt_numerical(epsilon0: float, users: int, delta: float, *, lower: bool = True) -> AmplificationBound:
    """Feldman–McMillan–Talwar 2021, the numerical bound, certified.

    The smallest ε whose reduction δ (:func:`fmt_delta`) is at most the target, located by regula
    falsi on a fast estimate of ``ln δ(ε)`` and then *certified*: the returned ``epsilon``
    satisfies ``δ_hi(epsilon) <= δ`` with ``δ_hi`` a rigorous upper bound of the reduction's δ,
    and ``lower`` (if asked) satisfies ``δ_lo(lower) > δ``, so the analysis's exact ε lies in
    ``[lower, epsilon]``, typically ``2e-11`` (relative) wide: about ten significant digits.
    The reduction's ``δ(ε)`` is non-increasing in ``n`` (the clone count grows stochastically and
    each ``δ_c`` is non-increasing in ``c``), so its exact ε is too; the returned values follow it
    up to that width (the tests check monotonicity in ``n``, ``ε0`` and ``δ``).

    Unlike the public float scripts this has no step size or iteration count to tune: every
    clone count in a window is summed (the left-out mass is bounded by Chernoff's bound), and
    each conditional hockey-stick divergence comes from exact recurrences with rigorous binary64
    error bounds and interval anchors (the derivation and the error analysis are in the comment
    that opens this part of the module's source). The authors' script
    (``computeamplification.py``) brackets each step of clone counts by the divergence at its
    ends; its "upper bound" branch takes ``max(δ_Q(c_hi), δ_Q(c_hi))`` where
    ``max(δ_Q(c_lo), δ_Q(c_hi))`` is meant, so its Q-direction sum is a lower, not an upper,
    bound — harmless only because ``δ_P = δ_Q`` for this pair and the script returns the larger
    of the two. There is no hypothesis to check: valid for every ``ε0`` and ``n``.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 ∈ (0, 100]``.
    users : int
        ``n ∈ [1, 1e9]``.
    delta : float
        ``δ ∈ [1e-100, 1)``.
    lower : bool
        Also certify the lower end (one more evaluation).

    Returns
    -------
    AmplificationBound
        ``epsilon`` the certified upper bound (rounded up), ``lower`` the certified lower end.
    """
    e0 = _epsilon0(epsilon0)
    if e0 < MIN_EPSILON0:
        raise ParameterError(
            "epsilon0",
            epsilon0,
            f"a local ε0 in [{MIN_EPSILON0:g}, 100] for the numerical bound (its interval arithmetic "
            "works at a fixed precision, and stops finishing near 1e-17; a smaller ε0 is amplified to "
            "at most ε0 itself: use fmt-closed or blanket)",
        )
    n = _numerical_users(users)
    dl = v.open_unit("delta", delta)
    if dl < MIN_DELTA:
        raise ParameterError("delta", delta, f"a real number in [{MIN_DELTA:g}, 1) for the numerical bound")
    want_lower = bool(lower)
    budget = 1e-14 * dl  # the Chernoff-bounded mass left out of the window, times δ_0 <= 1
    log_target = math.log(dl)

    def excess(eps: float) -> float:  # ln δ_estimate(ε) - ln δ, decreasing in ε
        return float(_delta(n, e0, eps, 0, budget)) - log_target

    def upper_ok(eps: float) -> bool:
        return bool(_hi(_delta(n, e0, eps, +1, budget)) <= dl)

    def lower_above(eps: float) -> bool:
        return bool(_lo(_delta(n, e0, eps, -1, budget)) > dl)

    cond = "none: the reduction holds for every ε0-LDP randomizer and every n"
    if upper_ok(0.0):
        return AmplificationBound(0.0, dl, "fmt-numerical", _FMT_NUMERICAL, 0.0, True, cond)
    guess = smallest(excess, 0.0, e0, rtol=1e-14) if excess(0.0) > 0 else 0.0
    # Certify: step away from the estimate until the rigorous bounds decide (the enclosure of δ
    # is about 1e-10 wide and the estimate about as accurate, so the first step usually does);
    # the steps are relative to the estimate, absolute near ε = 0 where the estimate may be 0.
    scale = max(guess, 1e-9 * e0)
    eps_up = e0
    for k in range(40):
        cand = min(e0, guess + 1e-11 * 4**k * scale)
        if upper_ok(cand):
            eps_up = cand
            break
    eps_lo: float | None = None
    if want_lower:
        eps_lo = 0.0
        for k in range(40):
            cand = guess - 1e-11 * 4**k * scale
            if cand <= 0:
                break
            if lower_above(cand):
                eps_lo = cand
                break
    return AmplificationBound(
        float(eps_up),
        dl,
        "fmt-numerical",
        _FMT_NUMERICAL,
        None if eps_lo is None else float(eps_lo),
        True,
        cond,
    )


# --------------------------------------------------------------------------------------------
# Balle, Bell, Gascón & Nissim 2019: the privacy blanket
# --------------------------------------------------------------------------------------------

_BLANKET_GENERIC = (
    "Balle, Bell, Gascon & Nissim 2019 (CRYPTO), 'The privacy blanket of the shuffle model': blanket "
    "decomposition with the generic blanket mass gamma >= e^-eps0 and Hoeffding's bound on the privacy "
    "amplification random variable"
)
_BLANKET_RR = (
    "Balle, Bell, Gascon & Nissim 2019 (CRYPTO), 'The privacy blanket of the shuffle model', Theorem 3.1 "
    "(k-ary randomized response): (eps, delta)-DP for gamma >= max(14 k ln(2/delta)/((n-1) eps^2), "
    "27 k/((n-1) eps)), eps <= 1"
)


def _blanket_log_delta(e0: Mpf, n: int, eps: Mpf) -> Mpf:
    """``ln`` of the blanket–Hoeffding bound on ``δ(ε)`` (see :func:`blanket_generic`)."""
    a = mp.expm1(eps)
    big_b = mp.expm1(e0) * (1 + mp.exp(eps))
    gamma = mp.exp(-e0)
    x = 2 * a**2 / big_b**2
    return 2 * mp.log(big_b) - mp.log(4 * a * gamma * n) + n * mp.log1p(gamma * mp.expm1(-x))


def blanket_generic(epsilon0: float, users: int, delta: float) -> AmplificationBound:
    """Balle et al. 2019, the privacy blanket for a generic ``ε0``-LDP randomizer (Hoeffding).

    Balle, Bell, Gascón & Nissim, "The Privacy Blanket of the Shuffle Model" (CRYPTO 2019). Every
    ``ε0``-LDP randomizer splits as ``R(x) = (1-γ) μ_x + γ ω`` with a common "blanket" ``ω`` of
    mass ``γ = Σ_y min_x R(x)(y) >= e^-ε0``. Conditioning on which of the other ``n-1`` users
    drew from the blanket, their shuffled §5 analysis gives

        δ(ε) <= (1/(γ n)) E[(L_1 + ... + L_M)_+],   M ~ Bin(n, γ),

    with ``L = (R(x)(W) - e^ε R(x')(W))/ω(W)``, ``W ~ ω``, of mean ``1 - e^ε`` and range at most
    ``b = (e^ε0 - 1)(e^ε + 1)`` (since ``R(x)(y)/ω(y) ∈ [γ, γ e^ε0]`` and ``γ <= 1``); Hoeffding's
    inequality then gives, with ``a = e^ε - 1``,

        δ(ε) <= b²/(4 a γ n) · (1 - γ (1 - e^{-2a²/b²}))^n,

    which is decreasing in ``γ``, so ``γ = e^-ε0`` may be used. The derivation is redone here
    (the paper is not among ``papers/``): the authors' public code uses the same formula with the
    wider range ``(e^ε + 1)(e^ε0 - e^-ε0)``, so this is slightly tighter but still proved.
    The smallest float ε with a bound ``<= δ`` is found by bisection (a log-grid locates the first
    crossing; any ε whose bound is ``<= δ`` is a valid guarantee, and the returned one is checked
    at 50 digits). If none below ``ε0`` works, the trivial bound is returned (``valid=False``).

    Parameters
    ----------
    epsilon0 : float
        ``ε0 ∈ (0, 100]``.
    users : int
        ``n >= 1``.
    delta : float
        ``δ ∈ (0, 1)``.

    Returns
    -------
    AmplificationBound
    """
    e0 = _epsilon0(epsilon0)
    n = _users(users)
    dl = v.open_unit("delta", delta)
    with mp.workdps(_DPS):
        log_target = mp.log(mp.mpf(dl))
        e0m = mp.mpf(e0)

        def ok(eps: float) -> bool:
            return bool(eps > 0 and _blanket_log_delta(e0m, n, mp.mpf(eps)) <= log_target)

        grid = [e0 * 10.0 ** (-12 + 12 * i / 400) for i in range(400)]
        first = next((i for i, x in enumerate(grid) if x < e0 and ok(x)), None)
        if first is None:
            why = "the Hoeffding bound exceeds δ for every ε < ε0"
            return _trivial(e0, dl, "blanket", _BLANKET_GENERIC, why)
        eps = smallest(ok, grid[first - 1] if first else 0.0, grid[first])
    cond = "none (any ε0-LDP randomizer)"
    return AmplificationBound(eps, dl, "blanket", _BLANKET_GENERIC, None, True, cond)


def blanket_randomized_response(epsilon0: float, users: int, delta: float, k: int = 2) -> AmplificationBound:
    """Balle et al. 2019, Theorem 3.1: shuffled ``k``-ary randomized response.

    The randomizer keeps its input with probability ``1 - γ`` and otherwise reports a uniform
    value of ``[k]``; it is ``ε0``-LDP for ``γ = k/(e^ε0 + k - 1)``. The theorem (Balle, Bell,
    Gascón & Nissim, CRYPTO 2019) makes the shuffled protocol ``(ε, δ)``-DP for ``ε <= 1`` once
    ``γ >= max(14 k ln(2/δ)/((n-1) ε²), 27 k/((n-1) ε))``; since more blanket noise is a
    post-processing of less, the smallest such ε is

        ε = max(sqrt(14 k ln(2/δ)/((n-1) γ)), 27 k/((n-1) γ)),

    valid when it is ``<= 1``. The constants are quoted from memory of the paper (status [K]) and
    checked in the tests against the exact shuffled randomized response. This bound is for this
    randomizer only, not for a generic ``ε0``-LDP one.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 > 0`` of the randomized response.
    users : int
        ``n >= 2``.
    delta : float
        ``δ ∈ (0, 1)``.
    k : int
        The domain size ``k >= 2`` (2: binary randomized response).

    Returns
    -------
    AmplificationBound
    """
    e0 = _epsilon0(epsilon0)
    n = v.integer("users", users, minimum=2)
    dl = v.open_unit("delta", delta)
    kk = v.integer("k", k, minimum=2)
    with mp.workdps(_DPS):
        gamma = kk / (mp.exp(mp.mpf(e0)) + kk - 1)
        eps = max(
            mp.sqrt(14 * kk * mp.log(2 / mp.mpf(dl)) / ((n - 1) * gamma)),
            27 * kk / ((n - 1) * gamma),
        )
        value = float_up(eps)
    cond = f"ε = {value:.6g} {'<=' if eps <= 1 else '>'} 1"
    if not eps <= 1 or value > e0:
        return _trivial(e0, dl, "blanket-rr", _BLANKET_RR, cond)
    return AmplificationBound(value, dl, "blanket-rr", _BLANKET_RR, None, True, cond)


# --------------------------------------------------------------------------------------------
# Ground truth: exact shuffled binary randomized response
# --------------------------------------------------------------------------------------------

_RR_EXACT = (
    "exact: shuffled binary randomized response (report the bit w.p. e^eps0/(e^eps0+1)); the output is "
    "the count of ones; worst case over the other users' bits"
)

#: Largest ``n`` for the worst case over all configurations of the other users (cost ``O(n^3)``).
RR_EXACT_MAX_USERS: Final = 64


def _binomial_pmf(trials: int, prob: Interval) -> list[Interval]:
    """``Bin(trials, prob)`` pmf in interval arithmetic (by the ratio recurrence)."""
    q = 1 - prob
    out = [q**trials]
    for i in range(trials):
        out.append(out[-1] * (trials - i) / (i + 1) * prob / q)
    return out


def _rr_epsilon(ones: int, n: int, r: Interval, dl: Interval) -> tuple[Mpf, Mpf]:
    """Enclosure of the exact ε(δ) of the shuffled count for one configuration of the others."""
    a = _binomial_pmf(ones, 1 - r)  # the others with bit 1 report 1 w.p. 1 - r
    b = _binomial_pmf(n - 1 - ones, r)
    others = [iv.mpf(0)] * n
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            others[i + j] += x * y
    zero = iv.mpf(0)
    pk = [(1 - r) * (others[k - 1] if k else zero) + r * (others[k] if k < n else zero) for k in range(n + 1)]
    qk = [r * (others[k - 1] if k else zero) + (1 - r) * (others[k] if k < n else zero) for k in range(n + 1)]
    best_lo, best_hi = mp.zero, mp.zero
    # The likelihood ratio P/Q is increasing in the count (the others' count is log-concave), so
    # the optimal sets are suffixes for D(P||Q) and prefixes for D(Q||P):
    # ε(δ) = max_S ln((P(S) - δ)/Q(S)).
    for first, second in ((pk, qk), (qk[::-1], pk[::-1])):
        s1, s2 = iv.mpf(0), iv.mpf(0)
        for x, y in zip(first[::-1], second[::-1], strict=True):
            s1 += x
            s2 += y
            num = s1 - dl
            if _hi(num) <= 0:
                continue
            if _lo(num) > 0:
                val = iv.log(num / s2)
                best_lo = max(best_lo, _lo(val))
                best_hi = max(best_hi, _hi(val))
            else:
                best_hi = max(best_hi, _hi(iv.log(iv.mpf(_hi(num)) / s2)))
    return best_lo, best_hi


def randomized_response_exact(
    epsilon0: float, users: int, delta: float, *, ones: int | None = None
) -> AmplificationBound:
    """The exact ε of shuffling ``n`` binary randomized responses: the ground truth.

    Each user reports its bit with probability ``e^ε0/(e^ε0+1)`` and the flipped bit otherwise
    (an ``ε0``-LDP randomizer); the shuffled output is equivalent to the count of ones. For
    neighbours differing in one user's bit, with ``ones`` of the other ``n - 1`` bits equal to 1,
    the count is ``Bin(ones, 1-r) + Bin(n-1-ones, r) + Bern(·)``, ``r = 1/(e^ε0+1)``; its exact
    ``ε(δ) = max_S ln((P(S) - δ)/Q(S))`` (both directions) is computed in interval arithmetic.
    With ``ones=None`` the worst case over every configuration is taken (``n <= 64``).

    Since randomized response is an ``ε0``-LDP randomizer, every *generic* amplification bound
    (FMT, blanket, EFMRTT) must be at least this value: it is the floor any such analysis has.

    Parameters
    ----------
    epsilon0 : float
        ``ε0 ∈ (0, 100]``.
    users : int
        ``n >= 1`` (at most 64 when ``ones`` is None).
    delta : float
        ``δ ∈ (0, 1)``.
    ones : int, optional
        How many of the other ``n - 1`` users hold a 1 (``0 <= ones < n``); default: the worst case.

    Returns
    -------
    AmplificationBound
        ``epsilon`` the upper end of the exact value's enclosure (rounded up), ``lower`` its
        lower end (rounded down).
    """
    e0 = _epsilon0(epsilon0)
    n = _users(users)
    dl = v.open_unit("delta", delta)
    if ones is None:
        if n > RR_EXACT_MAX_USERS:
            raise ParameterError(
                "users", users, f"an integer in [1, {RR_EXACT_MAX_USERS}] for the worst case (or pass ones=)"
            )
        configs = list(range(n))
    else:
        o = v.integer("ones", ones, minimum=0)
        if o > n - 1:
            raise ParameterError("ones", ones, f"an integer in [0, users - 1] = [0, {n - 1}]")
        if min(o, n - 1 - o) * n > 10**6:
            raise ParameterError("ones", ones, "a configuration with min(ones, users-1-ones) * users <= 1e6")
        configs = [o]
    with precision(_IV_DPS):
        r = 1 / (iv.exp(iv.mpf(e0)) + 1)
        d = iv.mpf(dl)
        lo, hi = mp.zero, mp.zero
        for o in configs:
            a, b = _rr_epsilon(o, n, r, d)
            lo, hi = max(lo, a), max(hi, b)
        cond = "worst case over all configurations" if ones is None else f"{configs[0]} of the others hold 1"
        return AmplificationBound(float_up(hi), dl, "rr-exact", _RR_EXACT, float_down(lo), True, cond)


# --------------------------------------------------------------------------------------------
# Federated LCB paper (Zhou & Chowdhury, ICLR 2024): Lemma F.2 and the σ0 of Theorem 5.3
# --------------------------------------------------------------------------------------------

_LEMMA_F2 = (
    "Zhou & Chowdhury 2024 (ICLR), 'On differentially private federated linear contextual bandits', "
    "Lemma F.2 (amplification lemma for Gaussian mechanisms on datasets of size n > 1)"
)


def _lemma_f2_mp(e0: Mpf, n: int, silos: int, dl: Mpf) -> Mpf:
    """``ε_r`` of Lemma F.2 at 50 digits."""
    q = mp.tanh(e0 / 2)  # (e^ε0 - 1)/(e^ε0 + 1)
    big = mp.exp(n * e0)
    return mp.log1p(q * (8 * mp.sqrt(big * mp.log(4 / dl) / silos) + 8 * big / silos))


def _lemma_f2_delta_mp(e0: Mpf, d0: Mpf, silos: int, dl: Mpf, eps_r: Mpf) -> Mpf:
    """``δ_r`` of Lemma F.2 at 50 digits."""
    return mp.tanh(e0 / 2) * dl + silos * (mp.exp(eps_r) + 1) * (1 + mp.exp(-e0) / 2) * d0


def _lemma_f2_conditions(e0: float, n: int, silos: int, dl: float) -> tuple[bool, str]:
    with mp.workdps(_DPS):
        ln2 = mp.log(2 / mp.mpf(dl))
        limit = mp.log(silos / (16 * ln2)) / n if silos > 16 * ln2 else -mp.inf
        first = mp.mpf(e0) <= limit
    second = n * e0 < 1
    text = (
        f"ε0 = {e0:g} {'<=' if first else '>'} (1/n) ln(N/(16 ln(2/δ))) = {mp.nstr(limit, 6)}; "
        f"n ε0 = {n * e0!r} {'<' if second else '>='} 1 (the scaling step for a classically calibrated "
        "Gaussian)"
    )
    return bool(first and second), text


def gaussian_amplification_lemma_f2(
    epsilon0: float, delta0: float, silos: int, points: int, delta: float
) -> AmplificationBound:
    """Lemma F.2 of the federated LCB paper: shuffling ``N`` Gaussian mechanisms on ``n`` points each.

    Federated spec §5.2.3 ([P], constants partly [R]). ``N`` silos each hold ``n`` data points
    and release the output of an ``(ε0, δ0)``-DP Gaussian mechanism, ``ε0 ∈ (0, 1)``; a shuffler
    permutes the ``N`` outputs. For ``ε0 <= (1/n) ln(N/(16 ln(2/δ)))`` the shuffled release is
    ``(ε_r, δ_r)``-DP with, ``q = (e^ε0 - 1)/(e^ε0 + 1)``,

        ε_r = ln(1 + q (8 sqrt(e^{n ε0} ln(4/δ)/N) + 8 e^{n ε0}/N)),
        δ_r = q δ + N (e^ε_r + 1)(1 + e^{-ε0}/2) δ0.

    Deviations and readings (spec §5.2.3, §10.4):

    * The extracted text shows the last factor as "(1 + e εr 0/2)"; it is read as
      ``1 + e^{-ε0}/2`` as in FMT's Theorem 3.8. The proof's total-variation bound
      ``1 + 1/(2 e^{n ε0})`` is smaller, so this reading is the conservative one.
    * The proof's step "an arbitrary pair of datasets is ``(n ε0, δ0)``-indistinguishable" holds
      for a Gaussian calibrated by the classic recipe only while ``n ε0 < 1`` (the recipe's own
      range, footnote 7), so ``n ε0 < 1`` is checked as a hypothesis too.

    Outside the hypotheses the result has ``valid=False`` and the trivial ``(ε0, δ0)`` (shuffling
    the silos' outputs is post-processing of the one changed silo's ``(ε0, δ0)``-DP output).

    Parameters
    ----------
    epsilon0 : float
        The per-silo ``ε0 ∈ (0, 1)`` for adjacent datasets (one point changed).
    delta0 : float
        The per-silo ``δ0 ∈ [0, 1)``.
    silos : int
        ``N >= 1``, the number of shuffled outputs.
    points : int
        ``n >= 1``, the size of each silo's dataset (any upper bound on it).
    delta : float
        The lemma's free ``δ ∈ (0, 1)``.

    Returns
    -------
    AmplificationBound
        ``epsilon = ε_r`` and ``delta = δ_r``, both rounded up.
    """
    e0 = v.real("epsilon0", epsilon0)
    if not 0 < e0 < 1:
        raise ParameterError("epsilon0", epsilon0, "a real number in the open interval (0, 1) (Lemma F.2)")
    d0 = v.nonnegative("delta0", delta0)
    if not d0 < 1:
        raise ParameterError("delta0", delta0, "a real number in [0, 1)")
    big_n = v.integer("silos", silos, minimum=1)
    n = v.integer("points", points, minimum=1)
    dl = v.open_unit("delta", delta)
    holds, cond = _lemma_f2_conditions(e0, n, big_n, dl)
    if not holds:
        return AmplificationBound(e0, d0, "lemma-f2", _LEMMA_F2, None, False, f"{cond}; reporting (ε0, δ0)")
    with mp.workdps(_DPS):
        eps_r = _lemma_f2_mp(mp.mpf(e0), n, big_n, mp.mpf(dl))
        delta_r = _lemma_f2_delta_mp(mp.mpf(e0), mp.mpf(d0), big_n, mp.mpf(dl), eps_r)
        return AmplificationBound(float_up(eps_r), float_up(delta_r), "lemma-f2", _LEMMA_F2, None, True, cond)


@dataclass(frozen=True)
class Theorem53Calibration:
    """The per-node Gaussian noise of Theorem 5.3 (SDP via amplification), and its accounting.

    Attributes
    ----------
    sigma0 : float
        Standard deviation of each tree node's Gaussian noise (rounded up; ``inf`` if infeasible).
    epsilon0, delta0 : float
        The per-silo, per-release budget the noise is calibrated to (rounded down).
    epsilon_release, delta_release : float
        One shuffled release by Lemma F.2 at ``(epsilon0, delta0)`` (rounded up).
    releases : int
        ``κ = floor(log2(floor(T/B))) + 1``: releases per stream a user's data enters.
    epsilon, delta : float
        The certified total over both streams (``<= `` the targets; rounded up).
    valid : bool
        False when no ``ε0`` meets Lemma F.2's hypotheses (then ``sigma0`` is ``inf``).
    conditions : str
        What was checked.
    theorem : str
        The source.
    """

    sigma0: float
    epsilon0: float
    delta0: float
    epsilon_release: float
    delta_release: float
    releases: int
    epsilon: float
    delta: float
    valid: bool
    conditions: str
    theorem: str

    def event(self) -> ApproxDP:
        """The total ``(ε, δ)`` of the two streams as a ledger event (replace-one)."""
        if not self.valid:
            raise UnsupportedError(f"Theorem 5.3 certifies nothing here: {self.conditions}")
        return ApproxDP(self.epsilon, self.delta, self.theorem)


_THEOREM53 = (
    "Zhou & Chowdhury 2024 (ICLR), Theorem 5.3 (SDP via amplification): the sigma0 recipe of the federated "
    "spec §5.2.4 with explicit constants — two streams, advanced composition over kappa releases, Lemma F.2 "
    "inverted numerically, classic Gaussian calibration"
)


def _largest(pred: Callable[[Mpf], bool], hi: Mpf) -> Mpf:
    """The largest float ``x ∈ (0, hi]`` with ``pred(x)``, ``pred`` true near 0 and decreasing."""
    top = float_down(hi)
    if pred(mp.mpf(top)):
        return mp.mpf(top)
    return mp.mpf(largest(lambda x: pred(mp.mpf(x)), 0.0, top))


def theorem53_sigma0(
    epsilon: float, delta: float, silos: int, horizon: int, batch: int, sensitivity: float = 1.0
) -> Theorem53Calibration:
    """σ0 of Theorem 5.3 of the federated LCB paper, with explicit constants (spec §5.2.4).

    The paper states only ``σ0² = O(κ log(1/δ) log(κ/(δT)) log(Mκ/δ)/(ε² M))``. This follows the
    spec's exact-constant recipe ([O]), every step rounded toward more noise:

    1. two streams (bias and covariance), each ``(ε/2, δ/2)``;
    2. each user's data enters ``κ = floor(log2(floor(T/B))) + 1`` releases per stream; advanced
       composition (Dwork–Rothblum–Vadhan) with ``δ' = δ/4`` and per-release ``δ_r = δ/(4κ)``,
       and the largest ``ε_r`` with ``ε_r sqrt(2κ ln(1/δ')) + κ ε_r (e^ε_r - 1) <= ε/2``;
    3. Lemma F.2 (:func:`gaussian_amplification_lemma_f2`) with ``N = M`` silos and ``n = T``
       points and its ``δ`` set to ``δ_r/2``, inverted for the largest ``ε0`` (subject to its
       hypotheses) whose ``ε_r`` is at most the target; then ``δ0`` is the largest with
       ``M (e^ε_r + 1)(1 + e^{-ε0}/2) δ0 <= δ_r/2``, so both parts of ``δ_r`` are at most ``δ_r/2``;
    4. ``σ0 = Δ sqrt(2 ln(1.25/δ0))/ε0`` (Dwork–Roth Thm A.1, valid since ``ε0 < 1``).

    The chain is then re-run forwards at the rounded ``(ε0, δ0)`` and the certified totals are
    returned; it must meet the targets. When Lemma F.2's hypothesis cannot hold for any ``ε0``
    (it needs ``M > 16 ln(2/δ_lemma)``; e.g. the paper's own ``M = 100, δ = 1e-4``) the result has
    ``valid=False`` and ``sigma0 = inf``: the theorem certifies nothing there.

    Parameters
    ----------
    epsilon : float
        Target total ``ε > 0``.
    delta : float
        Target total ``δ ∈ (0, 1)``.
    silos : int
        ``M >= 1`` silos (the shuffled outputs per release).
    horizon : int
        ``T >= 1`` rounds (each silo's dataset size, Lemma F.2's ``n``).
    batch : int
        ``B ∈ [1, T]`` rounds between synchronisations.
    sensitivity : float
        The ℓ2 sensitivity ``Δ > 0`` of one point (1 in the paper; see spec §10.2).

    Returns
    -------
    Theorem53Calibration
    """
    eps = v.positive("epsilon", epsilon)
    dl = v.open_unit("delta", delta)
    big_m = v.integer("silos", silos, minimum=1)
    T = v.integer("horizon", horizon, minimum=1)
    B = v.integer("batch", batch, minimum=1)
    if B > T:
        raise ParameterError("batch", batch, f"an integer in [1, horizon] = [1, {T}]")
    L = v.positive("sensitivity", sensitivity)
    syncs = T // B
    kappa = syncs.bit_length()  # floor(log2(K)) + 1
    with mp.workdps(_DPS):
        e_s, d_s = mp.mpf(eps) / 2, mp.mpf(dl) / 2
        d_prime = d_s / 2
        d_r = d_s / (2 * kappa)
        log_inv = -mp.log(d_prime)
        eps_r = _largest(lambda x: drv_epsilon(x, kappa, log_inv) <= e_s, e_s)
        d_lemma = d_r / 2
        ln2 = mp.log(2 / d_lemma)
        if not big_m > 16 * ln2:
            cond = f"M = {big_m} <= 16 ln(2/δ_lemma) = {mp.nstr(16 * ln2, 6)}: Lemma F.2 holds for no ε0 > 0"
            inf = math.inf
            return Theorem53Calibration(inf, 0.0, 0.0, inf, 1.0, kappa, inf, 1.0, False, cond, _THEOREM53)
        cap = min(mp.log(big_m / (16 * ln2)) / T, (1 - mp.mpf(10) ** -30) / T)

        def fits(e0: Mpf) -> bool:
            return bool(_lemma_f2_mp(e0, T, big_m, d_lemma) <= eps_r)

        e0 = mp.mpf(float_down(_largest(fits, cap)))
        if e0 <= 0:  # pragma: no cover - fits(x) holds for small enough x whenever M > 16 ln(2/δ)
            raise UnsupportedError("Theorem 5.3: no positive ε0 meets the per-release target")
        # δ0 from the ε_r actually reached (the caps on ε0 may keep it below the target), so that
        # the noise depends on the targets monotonically
        reached = _lemma_f2_mp(e0, T, big_m, d_lemma)
        d0 = mp.mpf(float_down(d_r / (2 * big_m * (mp.exp(reached) + 1) * (1 + mp.exp(-e0) / 2))))
        sigma0 = float_up(mp.mpf(L) * mp.sqrt(2 * mp.log(mp.mpf("1.25") / d0)) / e0)
        # forwards, at the rounded values: Lemma F.2, then κ releases, then two streams
        rel_e = _lemma_f2_mp(e0, T, big_m, d_lemma)
        rel_d = _lemma_f2_delta_mp(e0, d0, big_m, d_lemma, rel_e)
        tot_e = 2 * drv_epsilon(rel_e, kappa, log_inv)
        tot_d = 2 * (kappa * rel_d + d_prime)
        if not (tot_e <= eps and tot_d <= dl):  # pragma: no cover - guards the inversion above
            raise UnsupportedError(f"Theorem 5.3: internal check failed ({tot_e}, {tot_d})")
        holds, cond = _lemma_f2_conditions(float(e0), T, big_m, float(d_lemma))
        return Theorem53Calibration(
            sigma0,
            float(e0),
            float(d0),
            float_up(rel_e),
            float_up(rel_d),
            kappa,
            float_up(tot_e),
            float_up(tot_d),
            holds,
            cond,
            _THEOREM53,
        )


# --------------------------------------------------------------------------------------------
# Distributed MAB paper, Theorem 3: Cheu & Yan's relaxed secure aggregation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RelaxedSecAggSplit:
    """How Theorem 3 of the distributed MAB paper splits a pure ε (spec §3.6).

    Attributes
    ----------
    epsilon : float
        The total pure ε of one batch's release.
    epsilon_hat : float
        ``ε̂ = ε/4``: the security level of the ``(ε̂, q̂)``-relaxed SecAgg (its output is within
        log-likelihood-ratio ``ε̂`` of a simulation of the perfect modular sum).
    epsilon_sum : float
        ``ε' = ε/2``: the pure ε of the perfect modular sum (the noise is calibrated to it:
        Pólya shares ``Polya(1/n, e^{-ε'/g})``, ``g = ceil(ε' sqrt(n))``).
    q_hat : float or None
        ``q̂ = 1/(2T)``, the relaxed correctness failure probability (with a horizon).
    guarantee : str
        What the parts add up to.
    theorem : str
        The source.
    """

    epsilon: float
    epsilon_hat: float
    epsilon_sum: float
    q_hat: float | None
    guarantee: str
    theorem: str


def relaxed_secagg_split(epsilon: float, horizon: int | None = None) -> RelaxedSecAggSplit:
    """Theorem 3 of the distributed MAB paper: the ε split of Cheu & Yan's relaxed SecAgg.

    Spec §3.6 (Appendix D.2; Cheu & Yan 2021, arXiv:2112.10032): the shuffle protocol simulates an
    ``(ε̂, q̂)``-relaxed secure aggregation. With ``ε̂ = ε/4`` and the modular sum ``ε' = ε/2``-DP,

        LLR(S(R(x)), S(R(x'))) <= 2 ε̂ + LLR(Σ R(x_i) mod m, Σ R(x'_i) mod m) <= ε/2 + ε/2 = ε

    by the triangle inequality (one ``ε̂`` per side) and data processing: the batch is
    ``(ε, 0)``-DP. ``q̂ = p' = 1/(2T)`` enters only the accuracy (relaxed correctness), not the
    privacy. This is what ``protocol_parameters(Variant.SHUFFLED_POLYA, ...)`` calibrates
    (``ε' = ε/2``) and what the learners account as ``PureDP(ε/2)`` for the ``2 ε̂`` part.
    The halvings are exact in binary floating point.

    Parameters
    ----------
    epsilon : float
        The target ``ε > 0`` of one batch.
    horizon : int, optional
        ``T >= 1``, to report ``q̂ = 1/(2T)``.

    Returns
    -------
    RelaxedSecAggSplit
    """
    eps = v.positive("epsilon", epsilon)
    q_hat = None if horizon is None else 1 / (2 * v.integer("horizon", horizon, minimum=1))
    theorem = (
        "Chowdhury & Zhou 2023 (ICLR), 'Distributed differential privacy in multi-armed bandits', Theorem 3 "
        "(shuffle model via Cheu & Yan's relaxed SecAgg, Appendix D.2)"
    )
    guarantee = (
        f"2 × ε̂ ({eps / 4:g}, one per relaxed SecAgg side) + ε' ({eps / 2:g}, the modular sum) = "
        f"{eps:g}: pure ({eps:g}, 0)-DP per batch; q̂ affects accuracy only"
    )
    return RelaxedSecAggSplit(eps, eps / 4, eps / 2, q_hat, guarantee, theorem)


# --------------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------------

_GENERIC: dict[str, Callable[[float, int, float], AmplificationBound]] = {
    "fmt-numerical": fmt_numerical,
    "fmt-closed": fmt_closed,
    "blanket": blanket_generic,
    "efmrtt": efmrtt,
}

#: The generic bounds (valid for any ``ε0``-LDP randomizer) :func:`amplify` knows, tightest first.
BOUNDS: Final = tuple(_GENERIC)


def amplify(epsilon0: float, users: int, delta: float, bound: str = "fmt-numerical") -> AmplificationBound:
    """Amplification by shuffling of ``n`` ``ε0``-LDP reports, by the named bound.

    Parameters
    ----------
    epsilon0 : float
        The local randomizer's ``ε0``.
    users : int
        ``n``, the number of shuffled reports.
    delta : float
        The target ``δ``.
    bound : {"fmt-numerical", "fmt-closed", "blanket", "efmrtt"}
        :func:`fmt_numerical` (the tightest), :func:`fmt_closed`, :func:`blanket_generic`,
        :func:`efmrtt`.

    Returns
    -------
    AmplificationBound
    """
    if bound not in _GENERIC:
        raise ParameterError("bound", bound, "one of " + ", ".join(BOUNDS))
    return _GENERIC[bound](epsilon0, users, delta)


# --------------------------------------------------------------------------------------------
# The shuffle summation protocols (bits with binomial noise), accounted exactly
# --------------------------------------------------------------------------------------------
#
# What the server sees (ShuffleSumParameters: n users, D coordinates, each coordinate of each
# user's input encoded as x̂ ∈ {0, ..., levels} by a shift, a scaling and randomized rounding,
# then sent as x̂ + Bin(b, p) ones among levels + b bits tagged with the coordinate):
#
# 1. The view is the vector of counts. The shuffler outputs a uniformly random order of the
#    multiset of tagged bits; the multiset is fixed by the counts c_j of ones per coordinate (each
#    coordinate carries n (levels + b) bits), and its order is independent of the inputs given
#    the multiset. So the view and the counts are post-processings of each other: same privacy.
# 2. c_j = Σ_u x̂_{u,j} + X_j with X_j ~ Bin(b n, p): the users' Bin(b, p) are independent and
#    add up; the X_j are independent over j.
# 3. Replace one user's input. Given the other users' encodings (the same law on both sides: a
#    mixture with common weights) and a coupling of the changed user's two roundings, the pair is
#    (⊗_j (X_j + k_j), ⊗_j X_j) up to a common translation, with k_j ∈ [-levels, levels]; by joint
#    convexity of the hockey-stick divergence the view is no worse than the worst such k.
#    Binomial noise is log-concave, so the loss of (X + k, X) is monotone and δ(ε) is that of a
#    threshold set, sup_t [P(X >= t - k) - e^ε P(X >= t)], nondecreasing in |k| (for each sign):
#    every coordinate's pair is a post-processing of (X + levels, X) or of (X - levels, X).
#
# One coordinate (D = 1) is therefore exactly AdditiveNoise(Bin(b n, p), levels), both shifts;
# the worst case is attained (x = -B against x' = B is encoded as 0 against levels, no rounding).
# The two shifts differ unless p = 1/2 (Bin(N, p) reflected is Bin(N, 1 - p)).
#
# D coordinates: the pair is the product of D pairs, each (X + levels, X) or (X - levels, X). The
# PLD route composes symmetric noise only (a single dominating pair), so the ledger is built on a
# pair that dominates *both* shifts, by thinning: for p <= 1/2, Bin(N, p) is Bin(M, 1/2) with
# M ~ Bin(N, 2p) independent of the data (each trial is active with probability 2p, then a fair
# coin). Revealing M: when M >= M0, Bin(M, 1/2) is Bin(M0, 1/2) plus independent coins, so
# either shift is a post-processing of the symmetric pair (Y + levels, Y), Y ~ Bin(M0, 1/2)
# (X - levels against X is its mirror image y -> M0 - y); when M < M0, nothing is claimed. So each
# coordinate is dominated by that pair composed with the (0, τ)-DP pair of Kairouz, Oh &
# Viswanath, τ = P(M < M0) (their product is "with probability τ reveal the data, else the
# symmetric pair"), and the ledger is D × AdditiveNoise(CenteredBinomial(M0), levels) and
# D × ApproxDP(0, τ), composed by the PLD route. M0 (made even, so that the centred noise is
# symmetric; dropping a fair coin is a post-processing) is the τ-quantile of Bin(N, 2p), certified
# by Chernoff's bound. At p = 1/2, M = N and τ = 0: the ledger is exact for even N. The DP-DPE
# protocols' p is within 1/(2b) of 1/2 (b is the least integer above 180 s and p = 90 s/b), so M0
# is about N - n - 12 sqrt(n): the bound exceeds the exact value by about 1/(2b) relatively (plus
# D τ in δ; measured 1.4e-5 in ε for dpdpe-vector at (5, 0.01), n = 50, D = 3). Far from 1/2 it is
# loose: no thinning into fair coins keeps more than a fraction 2 min(p, 1-p) of the trials, so at
# cheu-vector's p = 1/4 the bound has 2/3 of the variance (ε about 15% high at δ = 10^-3).
#
# Inputs with ||x||_2 <= B cannot move every coordinate by the whole range at once: under that
# constraint the vector ledger is a certified upper bound, exact for inputs bounded per coordinate.
#
# The Rényi divergence is infinite at every order: X + levels puts mass where X has none (the
# binomial's support is finite), so the protocols are (ε, δ)-DP with δ > 0 only.

#: The largest tail τ the vector ledger leaves to an ApproxDP(0, τ) event, relative to the δ asked
#: (ε(δ)), or absolutely (δ(ε)): far below any δ that matters, and M0 is only about 12 standard
#: deviations of M below its mean.
_THINNING_TAIL = 1e-30
_THINNING_RELATIVE = 1e-10


def _count_noise(trials: int, p: float | Fraction) -> LatticeNoise:
    """``Bin(trials, p)`` (at ``p = 1/2`` centred, which changes no divergence and is symmetric
    for even ``trials``)."""
    return CenteredBinomial(trials) if Fraction(p) == Fraction(1, 2) else Binomial(trials, p)


def shuffle_sum_noise(params: ShuffleSumParameters) -> LatticeNoise:
    """The noise on each coordinate's count of ones: ``Bin(b n, p)`` (the users' ``Bin(b, p)`` add up).

    At ``p = 1/2`` it is given centred (:class:`~accounting.noise.CenteredBinomial`): a translation
    changes no divergence.
    """
    return _count_noise(params.b * params.users, params.p)


def _thinned(trials: int, p: float | Fraction, tail: float) -> tuple[int, Mpf]:
    """``(M0, τ)``: an even ``M0`` with ``P(Bin(trials, 2p) < M0) <= τ <= tail`` (certified; ``p``
    folded to ``<= 1/2`` first)."""
    q = 2 * min(Fraction(p), 1 - Fraction(p))
    if q == 1:
        return trials - trials % 2, mp.zero
    active = Binomial(trials, q)
    low, _ = active.window(mp.mpf(2) * mp.mpf(tail))
    low = max(low, 0)
    tau = active.cdf_bound(low - 1) if low > 0 else mp.zero
    return low - low % 2, tau


def shuffle_sum_ledger(
    params: ShuffleSumParameters, tail: float = _THINNING_TAIL, dps: int = DEFAULT_DPS
) -> Accountant:
    """One call of a shuffle summation protocol as a ledger (replace-one, the theorems' relation).

    One coordinate: exactly ``AdditiveNoise(Bin(b n, p), levels)``. ``D > 1`` coordinates: the
    dominating ledger of the reduction above (``D`` releases of ``CenteredBinomial(M0)`` at
    sensitivity ``levels``, and ``D`` of ``ApproxDP(0, τ)`` when ``p != 1/2``), composed exactly by
    the PLD route; exact when ``p = 1/2`` and ``b n`` is even, for inputs bounded per coordinate.

    Parameters
    ----------
    params : ShuffleSumParameters
        From :func:`~accounting.calibration.shuffle_sum_parameters` or
        :func:`shuffle_sum_calibration`.
    tail : float
        The largest ``τ`` the thinning may leave (vectors with ``p != 1/2`` only), in ``(0, 1)``.
    dps : int
        Working precision of the ledger.

    Returns
    -------
    Accountant
    """
    if not isinstance(params, ShuffleSumParameters):
        raise ParameterTypeError("params", params, "a ShuffleSumParameters")
    t = v.open_unit("tail", tail)
    acc = Accountant(Neighbouring.REPLACE_ONE, dps)
    trials = params.b * params.users
    if params.dimension == 1:
        return acc.compose(AdditiveNoise(_count_noise(trials, params.p), params.levels))
    m0, tau = _thinned(trials, params.p, t)
    if m0 < 2:
        raise UnsupportedError(
            f"the thinning of Bin({trials}, {params.p!r}) keeps no trial with certainty 1 - {t:g}: "
            "too little noise to account the vector protocol"
        )
    acc.compose(AdditiveNoise(CenteredBinomial(m0), params.levels), params.dimension)
    if tau > 0:
        source = (
            f"thinning of Bin({trials}, p) into Bin(M, 1/2), M ~ Bin({trials}, 2p) below {m0} with "
            "probability at most this delta"
        )
        acc.compose(ApproxDP(0, float_up(tau), source), params.dimension)
    return acc


def shuffle_sum_exact(params: ShuffleSumParameters) -> bool:
    """Whether :func:`shuffle_sum_ledger` is the protocol's exact privacy (for inputs bounded per
    coordinate): one coordinate, or ``p = 1/2`` with ``b n`` even; otherwise a certified upper bound."""
    if params.dimension == 1:
        return True
    return Fraction(params.p) == Fraction(1, 2) and (params.b * params.users) % 2 == 0


def shuffle_sum_epsilon(params: ShuffleSumParameters, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
    """The certified ``ε(δ)`` of one call (:func:`shuffle_sum_ledger`; the route is named).

    The thinning's ``τ`` is at most ``10^-10 δ / D`` (and ``10^-30``).
    """
    d = v.open_unit("delta", delta)
    tail = min(_THINNING_TAIL, d * _THINNING_RELATIVE / params.dimension)
    return shuffle_sum_ledger(params, tail, dps).epsilon(d)


def shuffle_sum_delta(params: ShuffleSumParameters, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
    """The certified ``δ(ε)`` of one call (:func:`shuffle_sum_ledger`; the thinning's ``τ <= 10^-30``)."""
    eps = v.nonnegative("epsilon", epsilon)
    return shuffle_sum_ledger(params, _THINNING_TAIL, dps).delta(eps)


def shuffle_sum_rdp(params: ShuffleSumParameters, alpha: float, dps: int = DEFAULT_DPS) -> float:
    """The Rényi DP of one call at order ``α``: the sum over the coordinates of the worse of the two
    shifts' ``D_α`` (exact: the product of the coordinates' pairs), which is ``inf`` at every order,
    since ``Bin(b n, p) + levels`` has mass where ``Bin(b n, p)`` has none."""
    a = v.order("alpha", alpha)
    if not isinstance(params, ShuffleSumParameters):
        raise ParameterTypeError("params", params, "a ShuffleSumParameters")
    mech = AdditiveNoise(Binomial(params.b * params.users, params.p), params.levels)
    return Accountant(Neighbouring.REPLACE_ONE, dps).compose(mech, params.dimension).rdp(a)


@dataclass(frozen=True)
class ShuffleSumCalibration:
    """The least binomial noise of a shuffle summation protocol, by exact accounting, and the cited one.

    Attributes
    ----------
    cited : ShuffleSumParameters
        The parameters of the cited theorem (:func:`~accounting.calibration.shuffle_sum_parameters`).
    exact : ShuffleSumParameters
        The same ``g`` and ``levels``, the least ``b`` at the chosen ``p`` whose certified ``ε(δ)``
        (:func:`shuffle_sum_epsilon`) is at most the target; its ``epsilon`` is that certified ε.
    epsilon : Enclosure
        The certified ``ε(δ)`` of ``exact`` (``epsilon.upper <= `` the target).
    exact_accounting : bool
        Whether that ε is the exact value (:func:`shuffle_sum_exact`) or a certified upper bound
        (vectors at ``p != 1/2``, or an odd ``b n``); the ``b`` found is then least for the bound.
    """

    cited: ShuffleSumParameters
    exact: ShuffleSumParameters
    epsilon: Enclosure
    exact_accounting: bool

    @property
    def saved_bits(self) -> int:
        """How many fewer one-bit messages each user sends per call than with the cited constants."""
        return self.cited.bits - self.exact.bits

    @property
    def saved_fraction(self) -> float:
        """:attr:`saved_bits` as a fraction of the cited bits."""
        return self.saved_bits / self.cited.bits


def shuffle_sum_calibration(
    protocol: str,
    epsilon: float,
    delta: float,
    users: int,
    dimension: int = 1,
    bound: float = 1.0,
    p: float = 0.5,
    dps: int = DEFAULT_DPS,
) -> ShuffleSumCalibration:
    """The least ``b`` (at success probability ``p``) meeting ``(ε, δ)`` by exact accounting.

    ``g`` and ``levels`` are the cited theorem's (:func:`~accounting.calibration.shuffle_sum_parameters`:
    they set the rounding error, not the privacy); ``b`` is searched by the calibration's search
    (:mod:`accounting.calibration`'s bracket and regula falsi, :mod:`accounting.search`) over the
    certified ``ε(δ)`` of :func:`shuffle_sum_epsilon`, each integer ``b`` accounted once. ``p = 1/2``
    (the default) gives the most variance per bit and a symmetric noise. The ``b`` returned was
    itself accounted and meets the target, and ``b - 1`` (unless ``b = 1``) was accounted and does not.

    Parameters
    ----------
    protocol, epsilon, delta, users, dimension, bound
        As :func:`~accounting.calibration.shuffle_sum_parameters` (whose ranges apply).
    p : float
        The success probability of each user's binomial, in ``(0, 1)`` (accounted as the float it is,
        which the protocol's sampler uses).
    dps : int
        Working precision of each accounting.

    Returns
    -------
    ShuffleSumCalibration
    """
    cited = shuffle_sum_parameters(protocol, epsilon, delta, users, dimension, bound)
    prob = v.open_unit("p", p)
    dps = v.dps("dps", dps)
    target = cited.epsilon

    def at(b: int) -> ShuffleSumParameters:
        return dataclasses.replace(
            cited, b=b, p=prob, bits=cited.dimension * (cited.levels + b), theorem=_EXACT_THEOREM
        )

    answers: dict[int, Enclosure] = {}

    def excess(theta: float) -> float:
        """``ln ε(b) - ln target`` at ``b = ceil(θ)``: ``<= 0`` exactly when met (cached per ``b``)."""
        b = max(1, math.ceil(theta))
        if b not in answers:
            answers[b] = shuffle_sum_epsilon(at(b), cited.delta, dps)
        hi = answers[b].hi
        if hi > target:
            with mp.workdps(30):
                return max(float(mp.log(hi) - mp.log(target)), 1e-300)
        if hi == 0:
            return -math.inf
        with mp.workdps(30):
            return min(float(mp.log(hi) - mp.log(target)), 0.0)

    # Start from the analytic Gaussian's variance at the ℓ2 sensitivity levels·sqrt(D).
    sigma = bounds.gaussian_sigma_analytic(target, cited.delta, cited.levels * math.sqrt(cited.dimension))
    guess = max(1.0, sigma**2 / (cited.users * float(prob) * (1 - float(prob))))
    b = max(1, math.ceil(_bracket_and_search(excess, guess, 0.0)))
    found = at(b)
    value = answers[b]
    found = dataclasses.replace(
        found, epsilon=value.upper, theorem=f"({value.upper:g}, {cited.delta:g})-SDP: {_EXACT_THEOREM}"
    )
    return ShuffleSumCalibration(cited, found, value, shuffle_sum_exact(found))


_EXACT_THEOREM = (
    "exact accounting of the count of ones, the sum plus Bin(b n, p) at sensitivity levels "
    "(accounting.shuffle.shuffle_sum_ledger)"
)
