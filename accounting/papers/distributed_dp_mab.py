"""The recipes of Chowdhury & Zhou 2023 (ICLR), "Distributed differential privacy in multi-armed
bandits".

Built from the domain floor (noise distributions, the published bounds of :mod:`accounting.bounds`),
these are the paper's own choices and statements:

* the protocol variants of its Theorems 1–6 (:class:`Variant`) and their per-batch parameters
  ``g``, ``τ``, ``m`` and noise shares (:func:`protocol_parameters`; the paper's §4 and
  Appendix H), with the precision ``g = ceil(s ε sqrt(n))`` of Theorems 2 and 4
  (:func:`theorem2_g`);
* the closed forms Theorems 2 and 4 state for those protocols (:func:`skellam_rdp_theorem2_paper`,
  :func:`skellam_rdp_theorem2_headline`, :func:`skellam_rdp_theorem2_lemma3`,
  :func:`theorem2_discrepancy`, :func:`theorem4_xi`, :func:`theorem4_epsilon`), cross-checks of the
  exact accounting, built on Lemma 3 (Agarwal, Kairouz & Liu 2021, Theorem 3.5) and Lemma 4
  (Kairouz, Liu & Steinke 2021, Proposition 13);
* how Theorem 3 splits a pure ε for Cheu & Yan's relaxed secure aggregation
  (:func:`relaxed_secagg_split`; Appendix D.2).

Where the extracted paper text is ambiguous or has a slip, the docstring says which reading is
taken and why (this project's notes on the paper: ``papers/distributed-dp-mab.md``). Everything here
is re-exported by the :mod:`accounting` package root.
"""

from __future__ import annotations

import enum
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

from mpmath import mp

from accounting import validate as v
from accounting.bounds.skellam import integer_order
from accounting.certified import Mpf, float_up
from accounting.errors import ParameterError, ParameterTypeError
from accounting.noise import DiscreteGaussian, DiscreteLaplace, NoiseDistribution, Polya, Skellam
from accounting.noise.skellam import akl_rdp
from accounting.noise.sum_of_discrete_gaussians import xi_sum_upper

__all__ = [
    "EPSILON_DENOMINATOR",
    "LOCAL_C",
    "SIGMA_GRID",
    "ProtocolParameters",
    "RelaxedSecAggSplit",
    "Variant",
    "protocol_parameters",
    "relaxed_secagg_split",
    "skellam_rdp_theorem2_headline",
    "skellam_rdp_theorem2_lemma3",
    "skellam_rdp_theorem2_paper",
    "theorem2_discrepancy",
    "theorem2_g",
    "theorem4_epsilon",
    "theorem4_xi",
]

_DPS = 50
"""Working precision (decimal digits) of every formula in this module."""


# --------------------------------------------------------------------------------------------
# Theorem 2: the precision g and the closed forms (Lemma 3 = Agarwal, Kairouz & Liu 2021)
# --------------------------------------------------------------------------------------------


def _exact_rational(name: str, value: object) -> Fraction:
    """``value`` (already validated as a finite real) as an exact rational.

    Integers and :class:`~fractions.Fraction` are taken exactly. A float is read as the
    shortest decimal that round-trips to it (``0.1`` is ``1/10``), i.e. the number the user
    typed, so that ``s * eps * sqrt(n)`` that is an integer on paper is an integer here.
    """
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    return Fraction(repr(v.real(name, value)))


@v.old_keywords(scale="scaling")
def theorem2_g(epsilon: float | Fraction, scaling: float | Fraction, users: int) -> int:
    """The encoding precision ``g = ceil(s ε sqrt(n))`` of Theorem 2 (and Theorem 4).

    Chowdhury & Zhou 2023, §5 (Theorem 2) and Appendix F (Theorem 4). Computed exactly: with
    ``s ε = p/q`` in lowest terms, ``g`` is the smallest integer with ``g² q² >= p² n``, found with
    integer square roots. Floats are read as the decimal they print as (``0.1`` is ``1/10``), so
    ``ceil(10 · 0.1 · sqrt(1))`` is 1, not the 2 that the binary value ``0.1000000000000000055...``
    would give; pass a :class:`~fractions.Fraction` to specify any other exact value.

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    scaling : float
        The scaling factor ``s > 0``.
    users : int
        The batch size ``n >= 1``.

    Returns
    -------
    int
        ``g >= 1``.
    """
    v.positive("epsilon", epsilon)
    v.positive("scaling", scaling)
    n = v.integer("users", users, minimum=1)
    x = _exact_rational("epsilon", epsilon) * _exact_rational("scaling", scaling)
    num, den = x.numerator**2 * n, x.denominator**2
    g = math.isqrt(num // den)
    while g * g * den < num:
        g += 1
    return max(g, 1)


def _theorem2_inputs(alpha: object, epsilon: object, scaling: object) -> tuple[int, float, float]:
    return (
        integer_order(alpha),
        v.positive("epsilon", epsilon),
        v.positive("scaling", scaling),
    )


@v.old_keywords(scale="scaling")
def skellam_rdp_theorem2_paper(alpha: int, epsilon: float, scaling: float, users: int) -> float:
    """The paper's per-batch RDP statement of Theorem 2, as printed.

    Chowdhury & Zhou 2023, Appendix E.2 (proof of Theorem 2)::

        ε̂_n(α) = αε²/2 + min{ (2α-1)ε²/(4s²n) + 3ε/(2s³n^{3/2}),  3ε²/(2s√n) }.

    **Known slip (our reading of the proof; not stated in the paper).** This is Lemma 3 with ``g = sε√n`` (no
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
    scaling : float
        ``s > 0``.
    users : int
        Batch size ``n >= 1``.

    Returns
    -------
    float
        The printed formula, rounded up.
    """
    a, eps, s = _theorem2_inputs(alpha, epsilon, scaling)
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


@v.old_keywords(scale="scaling")
def skellam_rdp_theorem2_headline(alpha: int, epsilon: float, scaling: float) -> float:
    """The headline RDP curve of Theorem 2, valid for ``α = 2, 3, ...`` as stated.

    Chowdhury & Zhou 2023, §5, Theorem 2, obtained from the per-batch statement with
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
    scaling : float
        ``s > 0``.

    Returns
    -------
    float
        The printed formula, rounded up.
    """
    a, eps, s = _theorem2_inputs(alpha, epsilon, scaling)
    with mp.workdps(_DPS):
        return float_up(_theorem2_headline_mp(a, eps, s))


def _theorem2_lemma3_mp(a: int, eps: float, g: int) -> Mpf:
    e = mp.mpf(eps)
    return akl_rdp(a, mp.mpf(g) ** 2 / e**2, mp.mpf(g) ** 2, mp.mpf(g))


@v.old_keywords(scale="scaling")
def skellam_rdp_theorem2_lemma3(alpha: int, epsilon: float, scaling: float, users: int) -> float:
    """Per-batch RDP of Theorem 2's protocol computed from Lemma 3 with the actual integers.

    Lemma 3 of Chowdhury & Zhou 2023 (:func:`~accounting.bounds.skellam_rdp_akl`) with sensitivity
    ``Δ = g = ceil(sε√n)`` (:func:`theorem2_g`) and total variance ``σ² = g²/ε²``, which is
    the noise the protocol actually adds (``n`` shares ``Sk(0, g²/(nε²))``). This is the value
    to account with; the paper's closed forms are cross-checks.

    Parameters
    ----------
    alpha : int
        Integer order ``α >= 2``.
    epsilon : float
        ``ε > 0``.
    scaling : float
        ``s > 0``.
    users : int
        Batch size ``n >= 1``.

    Returns
    -------
    float
        The RDP bound, rounded up.
    """
    a, eps, _ = _theorem2_inputs(alpha, epsilon, scaling)
    g = theorem2_g(epsilon, scaling, users)
    with mp.workdps(_DPS):
        return float_up(_theorem2_lemma3_mp(a, eps, g))


@v.old_keywords(scale="scaling")
def theorem2_discrepancy(alpha: int, epsilon: float, scaling: float, users: int) -> float:
    """Ratio ``headline / Lemma 3`` of Theorem 2's closed form to the value it should bound.

    ``skellam_rdp_theorem2_headline(α, ε, s) / skellam_rdp_theorem2_lemma3(α, ε, s, n)``,
    both at 50 digits, returned as the nearest float (a diagnostic, not a privacy quantity,
    so no rounding direction). A value below 1 means the paper's headline *understates* the
    privacy loss of the batch.

    **Correction to our notes on the paper** (``papers/distributed-dp-mab.md``), which report an
    understatement "by up to 1.5%" on their grid (ε in [0.01, 10], s in {1, 2, 5, 10, 100},
    n = 2..2^21, α = 2..1000), citing
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
    scaling : float
        ``s > 0``.
    users : int
        Batch size ``n >= 1``.

    Returns
    -------
    float
        The ratio.
    """
    a, eps, s = _theorem2_inputs(alpha, epsilon, scaling)
    g = theorem2_g(epsilon, scaling, users)
    with mp.workdps(_DPS):
        return float(_theorem2_headline_mp(a, eps, s) / _theorem2_lemma3_mp(a, eps, g))


# --------------------------------------------------------------------------------------------
# Theorem 4 (Lemma 4 = Kairouz, Liu & Steinke 2021, Proposition 13)
# --------------------------------------------------------------------------------------------


def _theorem4_inputs(scaling: object, horizon: object) -> tuple[float, int]:
    s = v.positive("scaling", scaling)
    if s < 0.5:
        raise ParameterError(
            "scaling", scaling, "a real number >= 1/2 (Lemma 4 needs per-user σ >= 1/2, and σ >= s)"
        )
    return s, v.integer("horizon", horizon, minimum=2)


@v.old_keywords(scale="scaling")
def theorem4_xi(scaling: float, horizon: int) -> float:
    """The batch-independent ξ of Theorem 4: ``10 Σ_{k=1}^{T/2-1} exp(-2π²s² k/(k+1))``.

    Chowdhury & Zhou 2023, Appendix F (proof of Theorem 4). Per batch, Lemma 4 is applied with
    per-user ``σ² = g²/(nε²) >= s²`` and ``n <= T/2``; ξ_n is increasing in ``n`` and
    decreasing in σ, so this ξ bounds every ξ_n. (The proof's "τ_n <= τ" is a typo for
    ``ξ_n <= ξ``.) The upper summation limit is ``floor(T/2) - 1`` for odd ``T``. Lemma 4 needs
    σ >= 1/2, hence ``s >= 1/2`` here (the paper takes ``s >= 1``).

    Parameters
    ----------
    scaling : float
        The scaling factor ``s >= 1/2``.
    horizon : int
        The horizon ``T >= 2``.

    Returns
    -------
    float
        ξ, rounded up (certified upper bound on the sum).
    """
    s, t = _theorem4_inputs(scaling, horizon)
    with mp.workdps(_DPS):
        return float_up(10 * xi_sum_upper(2 * mp.pi**2 * mp.mpf(s) ** 2, t // 2 - 1))


@v.old_keywords(scale="scaling")
def theorem4_epsilon(epsilon: float, scaling: float, horizon: int) -> float:
    """Theorem 4's batch-independent ε̂: ``min{ sqrt(ε² + ξ/2), ε + ξ }`` with ξ of :func:`theorem4_xi`.

    Chowdhury & Zhou 2023, Appendix F, Theorem 4: every batch is ``(1/2)ε̂²``-zCDP. The theorem
    assumes ``ε ∈ (0, 1)`` for its regret part; the privacy statement (Lemma 4) holds for any
    ``ε > 0`` and is not restricted here (our test vector uses ``ε = 1``).

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    scaling : float
        ``s >= 1/2``.
    horizon : int
        ``T >= 2``.

    Returns
    -------
    float
        ε̂, rounded up.
    """
    eps = v.positive("epsilon", epsilon)
    s, t = _theorem4_inputs(scaling, horizon)
    with mp.workdps(_DPS):
        xi = 10 * xi_sum_upper(2 * mp.pi**2 * mp.mpf(s) ** 2, t // 2 - 1)
        e = mp.mpf(eps)
        return float_up(min(mp.sqrt(e**2 + xi / 2), e + xi))


# ---------------------------------------------------------------------------------------
# The protocol variants (Theorems 1–6) and their per-batch parameters
# ---------------------------------------------------------------------------------------

#: The local-model constant ``c`` of Lemma 5 (Appendix H.2), which the paper leaves unspecified:
#: ``c = 1.6`` is valid for every ε (derived numerically in ``papers/distributed-dp-mab.md``).
LOCAL_C = 1.6


class Variant(enum.Enum):
    """The protocol variants of Chowdhury & Zhou 2023 (Theorems 1–6), named by what they are.

    The value is the name a user types; :attr:`theorem` is the paper's theorem, for citation
    only (:meth:`from_theorem` reads a theorem number, as ``dp-account protocol --theorem``
    does). Nothing dispatches on the number.
    """

    #: Pólya shares under secure aggregation; they sum to ``Lap_Z(g/ε)`` (Theorem 1, pure DP).
    POLYA_SHARES = "polya-shares"
    #: Skellam shares (scale ``s``) under secure aggregation (Theorem 2, RDP).
    SKELLAM_SHARES = "skellam-shares"
    #: Pólya shares at ``ε' = ε/2``, shuffled (relaxed SecAgg of Cheu & Yan; Theorem 3, pure DP).
    SHUFFLED_POLYA = "shuffled-polya"
    #: Discrete Gaussian shares (scale ``s``) under secure aggregation (Theorem 4, zCDP).
    DISCRETE_GAUSSIAN_SHARES = "discrete-gaussian-shares"
    #: The trusted server adds ``Lap_Z(g/ε)`` (Theorem 5, central pure DP).
    CENTRAL_LAPLACE = "central-laplace"
    #: Every user adds ``Lap_Z(g/ε)`` (Theorem 6, local pure DP).
    LOCAL_LAPLACE = "local-laplace"

    @property
    def theorem(self) -> int:
        """The theorem of Chowdhury & Zhou 2023 (citation only)."""
        return _VARIANT_THEOREMS[self]

    @property
    def scaled(self) -> bool:
        """Whether the variant takes the scaling factor ``s >= 1`` (Theorems 2 and 4)."""
        return self in (Variant.SKELLAM_SHARES, Variant.DISCRETE_GAUSSIAN_SHARES)

    @property
    def notion(self) -> str:
        """The guarantee its theorem states: ``"pure"``, ``"rdp"`` or ``"zcdp"``."""
        if self is Variant.SKELLAM_SHARES:
            return "rdp"
        if self is Variant.DISCRETE_GAUSSIAN_SHARES:
            return "zcdp"
        return "pure"

    @property
    def epsilon_below_one(self) -> bool:
        """Whether the theorem assumes ``ε ∈ (0, 1)`` (Theorems 4, 5, 6; Appendices F, H.1, H.2).

        Theorems 1–3 hold for every ``ε > 0``. Outside ``(0, 1)`` the protocol still runs and its
        ledger still has an exact guarantee; only the theorem's statement does not apply.
        """
        return self in (Variant.DISCRETE_GAUSSIAN_SHARES, Variant.CENTRAL_LAPLACE, Variant.LOCAL_LAPLACE)

    def hypotheses_hold(self, epsilon: float) -> bool:
        """Whether the theorem's hypotheses on ``ε`` hold (``ε > 0``, and ``ε < 1`` where assumed)."""
        eps = v.positive("epsilon", epsilon)
        return eps < 1 or not self.epsilon_below_one

    @classmethod
    def from_theorem(cls, theorem: object) -> Variant:
        """The variant of Theorem ``theorem`` (an integer in 1..6) of Chowdhury & Zhou 2023."""
        th = v.integer("theorem", theorem, minimum=1)
        for variant, number in _VARIANT_THEOREMS.items():
            if number == th:
                return variant
        raise ParameterError(
            "theorem", theorem, "an integer in 1..6 (a theorem of the distributed MAB paper)"
        )

    @classmethod
    def parse(cls, value: object, name: str = "variant") -> Variant:
        """A :class:`Variant` from a member or its name as typed (``"skellam-shares"``)."""
        if isinstance(value, Variant):
            return value
        if isinstance(value, str):
            try:
                return cls(value)
            except ValueError:
                pass
            raise ParameterError(name, value, "one of " + ", ".join(x.value for x in cls))
        raise ParameterTypeError(
            name,
            value,
            "an accounting.papers.distributed_dp_mab.Variant or its name ("
            + ", ".join(x.value for x in cls)
            + "); Variant.from_theorem(k) for Theorem k",
        )


_VARIANT_THEOREMS = {
    Variant.POLYA_SHARES: 1,
    Variant.SKELLAM_SHARES: 2,
    Variant.SHUFFLED_POLYA: 3,
    Variant.DISCRETE_GAUSSIAN_SHARES: 4,
    Variant.CENTRAL_LAPLACE: 5,
    Variant.LOCAL_LAPLACE: 6,
}


@dataclass(frozen=True)
class ProtocolParameters:
    """Per-batch parameters of one :class:`Variant` (``n`` = users in the batch; the paper's
    Theorems 1–6).

    ``bits`` is ``ceil(log2 m)``, what each user sends. ``share`` is each user's noise
    (``None`` for the central model, where the server adds ``server_noise``).
    """

    variant: Variant
    epsilon: float
    users: int
    horizon: int
    scaling: float | None
    g: int
    tau: int
    m: int
    bits: int
    share: NoiseDistribution | None
    server_noise: NoiseDistribution | None
    privacy: str


#: Calibrated σ of discrete Gaussian shares is rounded up to a multiple of ``1/SIGMA_GRID``, so
#: ``σ²`` has a short rational form and the exact sampler runs in int64 (CKS Algorithm 3).
SIGMA_GRID = 16

#: Rational ε of the central and local discrete Laplace scale ``g/ε``: a denominator at most this.
EPSILON_DENOMINATOR = 10**6


def _rational_below(eps: float) -> Fraction:
    """A rational ``<= eps`` with a small denominator (``0.1`` gives ``1/10``).

    The discrete Laplace scale ``g/ε`` then has a short rational form, which the exact sampler
    (CKS Algorithm 2) needs to stay in int64; rounding ε down adds noise, never removes it.
    """
    exact = Fraction(eps)
    q = exact.limit_denominator(EPSILON_DENOMINATOR)
    if q > exact:
        q = Fraction(math.floor(exact * EPSILON_DENOMINATOR), EPSILON_DENOMINATOR)
    return q if q > 0 else exact


def _sigma_up(variance: Fraction) -> Fraction:
    """The smallest multiple of ``1/SIGMA_GRID`` whose square is at least ``variance`` (exact)."""
    k = math.isqrt(variance.numerator * SIGMA_GRID**2 // variance.denominator)
    while Fraction(k, SIGMA_GRID) ** 2 < variance:
        k += 1
    return Fraction(k, SIGMA_GRID)


def _ceil(x: object) -> int:
    """``ceil`` of an mpf computed at 50 digits (the arguments are transcendental, no ties)."""
    return int(mp.ceil(x))


@v.old_keywords(scale="scaling")
def protocol_parameters(
    variant: Variant | str,
    epsilon: float,
    users: int,
    horizon: int,
    scaling: float | None = None,
    p: float | None = None,
) -> ProtocolParameters:
    """``g``, ``τ``, ``m``, bits and noise of one batch of a :class:`Variant` (§4, §5, Appendices
    D.2, F, H of Chowdhury & Zhou 2023).

    Theorems 1–6 of the paper, by :attr:`Variant.theorem`. ``p`` is the failure probability
    inside ``τ`` (theory: ``1/T``, the default); the shuffled variant (Theorem 3) uses
    ``p' = 1/(2T)`` and ``ε' = ε/2`` (Appendix D.2; the extracted text's ``e^{-ε/g}`` is read as
    ``e^{-ε'/g}``, which the proof's ``2 ε̂ + ε' = ε`` needs). The parameters are
    computed for any ``ε > 0``; whether the theorem's own hypotheses hold (Theorems 4–6 assume
    ``ε < 1``) is :meth:`Variant.hypotheses_hold`'s question, not a reason to refuse.

    Parameters
    ----------
    variant : Variant or str
        The variant, or its name (``"polya-shares"``, ...).
    epsilon : float
        ``ε > 0``.
    users : int
        ``n = l(b)``, the users of the batch.
    horizon : int
        ``T >= 2``.
    scaling : float or None
        ``s >= 1`` for the scaled variants (Skellam and discrete Gaussian shares), else ``None``.
    p : float or None
        The failure probability in ``τ``, in ``(0, 1)`` (``None``: the theory's choice).

    Returns
    -------
    ProtocolParameters
    """
    var = Variant.parse(variant)
    eps = v.positive("epsilon", epsilon)
    n = v.integer("users", users, minimum=1)
    T = v.integer("horizon", horizon, minimum=2)
    s = _scaling_factor(var, scaling)
    prob = v.open_unit("p", p) if p is not None else None
    with mp.workdps(50):
        log_2_over_p = mp.log(2 / mp.mpf(prob)) if prob is not None else mp.log(2 * mp.mpf(T))
        if var in (Variant.POLYA_SHARES, Variant.CENTRAL_LAPLACE, Variant.LOCAL_LAPLACE):
            g, tau, share, server, privacy = _laplace_batch(var, eps, n, log_2_over_p)
        elif var is Variant.SHUFFLED_POLYA:
            g, tau, share, server, privacy = _shuffled_batch(eps, n, T, prob)
        else:
            assert s is not None
            g, tau, share, server, privacy = _scaled_batch(var, eps, s, n, log_2_over_p)
    if not var.hypotheses_hold(eps):
        privacy += (
            f"; Theorem {var.theorem} assumes ε < 1: at ε = {eps:g} its statement does not apply "
            "(account the released mechanism itself)"
        )
    m = n * g + 2 * tau + 1
    bits = (m - 1).bit_length()
    return ProtocolParameters(var, eps, n, T, s, g, tau, m, bits, share, server, privacy)


_Batch = tuple[int, int, NoiseDistribution | None, NoiseDistribution | None, str]
"""``(g, τ, share, server noise, privacy)`` of one batch, as :class:`ProtocolParameters` holds them."""


def _scaling_factor(var: Variant, scaling: float | None) -> float | None:
    """The validated ``s >= 1`` of the scaled variants (Theorems 2 and 4), ``None`` for the others."""
    if not var.scaled:
        return None
    if scaling is None:
        raise ParameterError(
            "scaling", scaling, f"a scaling factor s >= 1 ({var.value}, Theorem {var.theorem})"
        )
    s = v.real("scaling", scaling)
    if s < 1:
        raise ParameterError(
            "scaling", scaling, f"a scaling factor s >= 1 ({var.value}, Theorem {var.theorem})"
        )
    return s


def _laplace_batch(var: Variant, eps: float, n: int, log_2_over_p: Mpf) -> _Batch:
    """Theorems 1, 5 and 6: ``Lap_Z(g/ε)`` as Pólya shares, at the server, or at every user
    (§4; Appendices H.1, H.2), ``g = ceil(ε sqrt(n))``. Runs in the caller's 50-digit context."""
    share: NoiseDistribution | None = None
    server: NoiseDistribution | None = None
    g = theorem2_g(eps, 1, n)
    e = mp.mpf(eps)
    if var is Variant.LOCAL_LAPLACE:
        width = max(mp.sqrt(2 * n * log_2_over_p), 2 * log_2_over_p)
        tau = _ceil(mp.mpf(LOCAL_C) * g / e * width)  # g may exceed the float range
    else:
        tau = _ceil(g / e * log_2_over_p)
    lap = DiscreteLaplace(scale=Fraction(g) / _rational_below(eps))
    if var is Variant.POLYA_SHARES:
        share = Polya(Fraction(1, n), float_up(mp.exp(-e / g)))
        privacy = f"({eps:g}, 0)-DP: Pólya shares sum to Lap_Z(g/ε)"
    elif var is Variant.CENTRAL_LAPLACE:
        server = lap
        privacy = f"({eps:g}, 0) central DP: the server adds Lap_Z(g/ε)"
    else:
        share = lap
        privacy = f"({eps:g}, 0) local DP: each user adds Lap_Z(g/ε)"
    return g, tau, share, server, privacy


def _shuffled_batch(eps: float, n: int, T: int, prob: float | None) -> _Batch:
    """Theorem 3 (Appendix D.2): Pólya shares at ``ε' = ε/2``, ``p' = 1/(2T)`` by default. Runs in
    the caller's 50-digit context."""
    e = mp.mpf(eps) / 2
    g = theorem2_g(eps / 2, 1, n)
    log_term = mp.log(2 / mp.mpf(prob)) if prob is not None else mp.log(4 * mp.mpf(T))
    tau = _ceil(g / e * log_term)
    share = Polya(Fraction(1, n), float_up(mp.exp(-e / g)))
    privacy = f"({eps:g}, 0)-DP via shuffling: ε' = ε/2 for the sum, ε/4 per relaxed SecAgg side"
    return g, tau, share, None, privacy


def _scaled_batch(var: Variant, eps: float, s: float, n: int, log_2_over_p: Mpf) -> _Batch:
    """Theorems 2 and 4 (§5, Appendix F): Skellam or discrete Gaussian shares of total variance
    ``g²/ε²``, ``g = ceil(s ε sqrt(n))``. Runs in the caller's 50-digit context."""
    g = theorem2_g(eps, s, n)
    e = mp.mpf(eps)
    share_variance = Fraction(g * g) / n / Fraction(eps) ** 2
    share: NoiseDistribution
    if var is Variant.SKELLAM_SHARES:
        tau = _ceil(2 * g / e * mp.sqrt(log_2_over_p) + mp.sqrt(2) * log_2_over_p)
        share = Skellam(share_variance)
        privacy = "RDP at integer orders (Lemma 3 with the actual g; see accounting.bounds)"
    else:
        tau = _ceil(g / e * mp.sqrt(2 * log_2_over_p))
        share = DiscreteGaussian(_sigma_up(share_variance))
        privacy = "zCDP (Lemma 4, Kairouz–Liu–Steinke Prop. 13)"
    return g, tau, share, None, privacy


# --------------------------------------------------------------------------------------------
# Theorem 3: Cheu & Yan's relaxed secure aggregation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RelaxedSecAggSplit:
    """How Theorem 3 of Chowdhury & Zhou 2023 splits a pure ε (Appendix D.2).

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
    """Theorem 3 of Chowdhury & Zhou 2023: the ε split of Cheu & Yan's relaxed SecAgg.

    Appendix D.2 of the paper (Cheu & Yan 2021, arXiv:2112.10032): the shuffle protocol simulates an
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
