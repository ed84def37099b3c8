"""Distributed sums: ``n`` users each add an independent noise share, the server sees only the sum.

* :class:`DistributedSum` — a scalar query; the released sum carries the ``n``-fold convolution of
  the share (Pólya ``(1/n, β)`` differences make a discrete Laplace exactly, Goryczka & Xiong 2015;
  Skellam shares a Skellam; discrete Gaussian shares a sum of discrete Gaussians), answered as the
  central mechanism under replace-one and by :class:`AddRemoveSum` under add-remove.
* :class:`DistributedVectorSum` — an integer vector query bounded in ℓ2, by the closed forms of
  Agarwal, Kairouz & Liu 2021 (Skellam) and Kairouz, Liu & Steinke 2021 (discrete Gaussians).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath import mp

from accounting import bounds
from accounting import validate as v
from accounting.certified import Enclosure, float_down, float_up, lower, precision, to_interval
from accounting.divergence import epsilon_for_delta, hockey_stick
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedError, UnsupportedEventError
from accounting.mechanisms.additive import AdditiveNoise
from accounting.mechanisms.base import Mechanism, float_at_least, max_enclosure
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    DEFAULT_DPS,
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    LatticeNoise,
    NoiseDistribution,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
)

__all__ = ["MAX_ADD_REMOVE_PAIRS", "AddRemoveSum", "DistributedSum", "DistributedVectorSum"]


@dataclass(frozen=True)
class DistributedSum(Mechanism):
    """``n`` users each add an independent noise share; the server sees only the sum.

    The total noise is the ``n``-fold convolution of the share:

    * ``Polya(r, β)`` shares, each user adding the difference of two independent draws (Fact 1,
      Goryczka–Xiong 2015): with ``r·n = 1`` exactly, the total is the discrete Laplace with
      ``e^{-1/b} = β``;
    * ``Skellam`` shares: a Skellam with ``n`` times the rates (exact rational arithmetic);
    * ``DiscreteGaussian(σ)`` shares: ``SumOfDiscreteGaussians(σ, n)``;
    * ``CenteredBinomial(t)`` shares with even ``t``: ``CenteredBinomial(n t)``.

    A share whose sum has no exact form here raises :class:`UnsupportedError` rather than
    being approximated.
    """

    share: NoiseDistribution
    users: int
    sensitivity: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "users", v.integer("users", self.users, minimum=1))
        object.__setattr__(self, "sensitivity", v.integer("sensitivity", self.sensitivity, minimum=1))
        self.total_noise  # noqa: B018 - validate the share now, not at the first question

    @property
    def total_noise(self) -> LatticeNoise:
        """The distribution of the sum of all users' shares."""
        n = self.users
        share = self.share
        if isinstance(share, Polya) and Fraction(share.r) * n != 1:
            raise UnsupportedError(
                f"Polya shares sum to a discrete Laplace only when r * users == 1 exactly; got "
                f"r={share.r!r}, users={n} (pass r as fractions.Fraction(1, users))"
            )
        return self.noise_of(n)

    def noise_of(self, users: int) -> LatticeNoise:
        """The distribution of the sum of ``users`` shares (``1 <= users``), exactly.

        ``users`` Pólya ``(r, β)`` differences are the difference of two negative binomials
        ``NB(users·r, β)``: the discrete Laplace when ``users·r = 1`` (Fact 1); other counts have
        no exact law here (:class:`~accounting.errors.UnsupportedError`).
        """
        n = v.integer("users", users, minimum=1)
        share = self.share
        if isinstance(share, Polya):
            if Fraction(share.r) * n != 1:
                raise UnsupportedError(
                    f"the sum of {n} Pólya({share.r!r}, β) differences is a difference of two "
                    f"NB({Fraction(share.r) * n}, β), which has no exact law here (only r·users = 1: "
                    "the discrete Laplace)"
                )
            return DiscreteLaplace(beta=share.beta)
        if isinstance(share, Skellam):
            return Skellam.from_rates(Fraction(share.mu1) * n, Fraction(share.mu2) * n, share.offset * n)
        if isinstance(share, DiscreteGaussian):
            return SumOfDiscreteGaussians(share.sigma, n)
        if isinstance(share, SumOfDiscreteGaussians):
            return SumOfDiscreteGaussians(share.sigma, share.count * n)
        if isinstance(share, CenteredBinomial) and share.trials % 2 == 0:
            return CenteredBinomial(share.trials * n)
        raise UnsupportedError(
            f"no exact distribution for the sum of {n} shares of {share!r}: supported shares are "
            "Polya(1/users, β) differences, Skellam, DiscreteGaussian and CenteredBinomial (even trials)"
        )

    @property
    def mechanism(self) -> AdditiveNoise:
        """The equivalent central mechanism: the sum plus the total noise (replace-one)."""
        return AdditiveNoise(self.total_noise, self.sensitivity)

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        """Replace-one: the central mechanism. Add-remove: the pairs of :class:`AddRemoveSum`."""
        if Neighbouring.parse(neighbouring) is Neighbouring.REPLACE_ONE:
            return self.mechanism
        return AddRemoveSum(self)

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.mechanism.epsilon(delta, dps)

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.mechanism.delta(epsilon, dps)

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.mechanism.rdp(alpha, dps)

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        return self.mechanism.pure_epsilon(dps)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        return self.mechanism.zcdp_rho(dps, rtol)


#: The most neighbouring pairs an :class:`AddRemoveSum` computes (two per shift ``0..Δ``).
MAX_ADD_REMOVE_PAIRS = 130


@dataclass(frozen=True)
class AddRemoveSum(Mechanism):
    """A :class:`DistributedSum` under the add-remove relation: a removed user takes their share along.

    With ``X_m`` the sum of ``m`` shares, the larger dataset has ``n = users`` participants and
    the smaller ``n - 1``. Removing a user whose value is ``x`` (``|x| <= Δ``) turns
    ``S + x + X_n`` into ``S + X_{n-1}``, so the pairs are ``(X_n + k, X_{n-1})`` (remove) and
    ``(X_{n-1} + k, X_n)`` (add, after the shift ``y -> k - y`` for symmetric noise) for
    ``k = 0..Δ`` (``-Δ..Δ`` for asymmetric noise): the variances differ, so ``k = 0`` already
    leaks, and no single pair is known to dominate the others; every one is computed and the
    worst taken. ``δ(ε)`` and ``ε(δ)`` are exact (certified window sums). The two laws have
    different tails, so the privacy loss is unbounded (no pure ε, no zCDP), and the Rényi
    divergence of such a pair has no certified tail bound here: :meth:`rdp` is refused, and so
    is composition by the PLD route (no dominating pair is certified).

    More noise does not make such a release arbitrarily private: as the variance grows the pair
    ``(X_n, X_{n-1})`` tends to two centred Gaussians with variance ratio ``(n-1)/n``, whose
    ``ε(10⁻⁶)`` is about 1.03 for ``n = 10``, 0.071 for ``n = 100`` and 0.0049 for ``n = 1000``
    (a float check with scipy); :func:`~accounting.calibration.calibrate` says so when a target
    is below that floor.
    """

    sum: DistributedSum

    def __post_init__(self) -> None:
        if not isinstance(self.sum, DistributedSum):
            raise ParameterTypeError("sum", self.sum, "a DistributedSum")
        if self.sum.users < 2:
            raise UnsupportedEventError(
                f"users={self.sum.users} under add-remove: removing the only user leaves no noise at all"
            )
        try:
            self.sum.noise_of(self.sum.users - 1)
        except UnsupportedError as err:
            raise UnsupportedEventError(f"{self.sum!r} under add-remove: {err}") from None
        if 2 * len(self._shifts()) > MAX_ADD_REMOVE_PAIRS:
            raise UnsupportedEventError(
                f"sensitivity={self.sum.sensitivity} under add-remove needs "
                f"{2 * len(self._shifts())} neighbouring pairs (at most {MAX_ADD_REMOVE_PAIRS} are computed)"
            )

    def _shifts(self) -> list[int]:
        d = int(self.sum.sensitivity)
        symmetric = self.sum.noise_of(self.sum.users).symmetric
        return list(range(0, d + 1)) if symmetric else list(range(-d, d + 1))

    def pairs(self) -> list[tuple[LatticeNoise, LatticeNoise]]:
        """Every neighbouring pair ``(P, Q)``: removals, then additions."""
        large = self.sum.noise_of(self.sum.users)
        small = self.sum.noise_of(self.sum.users - 1)
        ks = self._shifts()
        removals: list[tuple[LatticeNoise, LatticeNoise]] = [(Shifted(large, k), small) for k in ks]
        return removals + [(Shifted(small, k), large) for k in ks]

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        return max_enclosure([epsilon_for_delta(p, q, d, dps) for p, q in self.pairs()])

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        eps = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        return max_enclosure([hockey_stick(p, q, eps, dps) for p, q in self.pairs()])

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        v.order("alpha", alpha)
        v.dps("dps", dps)
        if math.isinf(alpha):
            return self.pure_epsilon(dps)
        raise UnsupportedEventError(
            "the Rényi divergence of a distributed sum under add-remove (X_n + k against X_{n-1}) "
            "has no certified tail bound here: ask for ε(δ) of a single release"
        )

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """``∞``: the sums of ``n`` and ``n - 1`` shares have different tails."""
        v.dps("dps", dps)
        return Enclosure(mp.inf, mp.inf)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``∞``: ``D_α`` of laws with different tails grows faster than ``α`` (or is infinite)."""
        v.dps("dps", dps)
        v.positive("rtol", rtol)
        return Enclosure(mp.inf, mp.inf)


@dataclass(frozen=True)
class DistributedVectorSum(Mechanism):
    """``n`` users each add an independent noise share to every coordinate of an integer vector
    query in ``Z^d``; the server sees only the sum, and the query's change is bounded in ℓ2.

    A user's change ``v ∈ Z^d`` of the query has ``‖v‖₂ <= l2`` (and ``‖v‖₁ <= l1`` when given):
    for example a bias vector ``x·y`` with ``‖x‖ <= 1`` or the upper triangle of ``x xᵀ``, scaled
    and rounded to the integers. Composing the ``d`` coordinates as scalar sums (each at the
    per-coordinate bound) assumes every coordinate moves by its full bound at once, about ``√d``
    too much noise under an ℓ2 bound; here the guarantee is the closed form for the vector:

    * ``Skellam`` shares (a Skellam of variance ``σ²`` on each coordinate): RDP at integer orders
      ``α >= 2``, Agarwal–Kairouz–Liu 2021 Thm 3.5 (:func:`accounting.bounds.skellam_rdp_akl`);
      an asymmetric or offset Skellam is a symmetric one of variance ``2 min(μ1, μ2)`` plus
      independent noise (post-processing), and is accounted as that;
    * ``DiscreteGaussian`` (or ``SumOfDiscreteGaussians``) shares with ``σ >= 1/2``: zCDP,
      Kairouz–Liu–Steinke 2021 (:func:`accounting.bounds.sum_discrete_gaussians_rho_kls`).

    Parameters are read toward less noise (a variance or σ rounded down to a float), so every
    answer is an upper bound. Between integer orders a Skellam sum's RDP is the chord of AKL's
    values (see :meth:`rdp`).

    **Relation.** The sensitivities are those of replace-one: one person's data replaced, every
    noise share present. Under add-remove a removed user would take a share along (the laws of
    the two sums differ in variance, which no closed form here covers): refused with
    :class:`~accounting.errors.UnsupportedEventError`. A release where users' data come and go
    but the ``n`` shares stay (silos adding noise for their users) is a shift of the sum: state
    that shift's bounds and account it under replace-one.

    **(ε, δ).** No certified dominating pair is known for a shift bounded in ℓ2 only, so
    :meth:`epsilon` and :meth:`delta` are refused and the PLD route of the
    :class:`~accounting.accountant.Accountant` refuses the event; the RDP route (which ``"auto"``
    reaches) converts the curve. For a scalar (``dimension = 1``),
    :class:`DistributedSum` is exact and tighter.

    Parameters
    ----------
    share : LatticeNoise
        Each user's noise share per coordinate.
    users : int
        ``n >= 1``, the shares summed.
    dimension : int
        ``d >= 1``, the coordinates of the query.
    l2 : float
        The ℓ2 sensitivity ``Δ2 >= 1`` (a float rounded up from any real given; in one
        dimension the integer ``⌊Δ2⌋`` is used).
    l1 : float, optional
        An ℓ1 sensitivity ``Δ1 >= 1``; by default ``min(√d Δ2, Δ2²)``, which every integer
        vector of norm ``<= Δ2`` meets (see :func:`accounting.bounds.skellam_rdp_akl`).
    """

    share: NoiseDistribution
    users: int
    dimension: int
    l2: float
    l1: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.share, LatticeNoise):
            raise ParameterTypeError(
                "share", self.share, "lattice noise (a Skellam or DiscreteGaussian share)"
            )
        object.__setattr__(self, "users", v.integer("users", self.users, minimum=1))
        object.__setattr__(self, "dimension", v.integer("dimension", self.dimension, minimum=1))
        why = "a nonzero integer vector has norm >= 1"
        v.interval("l2", self.l2, 1, math.inf, low_open=False, why=why)
        object.__setattr__(self, "l2", float_at_least(self.l2))
        if self.l1 is not None:
            v.interval("l1", self.l1, 1, math.inf, low_open=False, why=why)
            object.__setattr__(self, "l1", float_at_least(self.l1))
        noise = self.total_noise
        if isinstance(noise, SumOfDiscreteGaussians) and _sigma_down(noise) < 0.5:
            raise ParameterError(
                "share", self.share, "a discrete Gaussian share with σ >= 1/2 (Kairouz–Liu–Steinke 2021)"
            )
        if not isinstance(noise, Skellam | SumOfDiscreteGaussians):
            raise UnsupportedError(
                f"no closed-form bound for a vector sum of {self.share!r} shares: Skellam and "
                "discrete Gaussian shares have one (use DistributedSum per coordinate)"
            )

    @property
    def total_noise(self) -> LatticeNoise:
        """The law of the sum of all users' shares on each coordinate (:class:`DistributedSum`'s)."""
        return DistributedSum(self.share, self.users).total_noise

    @property
    def bound_arguments(self) -> dict[str, Any]:
        """The sensitivity arguments of the closed forms of :mod:`accounting.bounds`
        (``sensitivity``, ``dimension``, ``l1``)."""
        l2: float | int = math.floor(self.l2) if self.dimension == 1 else self.l2
        return {"sensitivity": l2, "dimension": self.dimension, "l1": self.l1}

    def _skellam_rdp(self, order: int) -> float:
        noise = self.total_noise
        assert isinstance(noise, Skellam)
        variance = _float_at_most(2 * min(Fraction(noise.mu1), Fraction(noise.mu2)))
        return bounds.skellam_rdp_akl(order, variance, **self.bound_arguments)

    @functools.cached_property
    def _kls_rho(self) -> float:
        """KLS's ρ, computed once (the RDP route asks at many orders; ξ costs tens of ms)."""
        noise = self.total_noise
        assert isinstance(noise, SumOfDiscreteGaussians)
        return bounds.sum_discrete_gaussians_rho_kls(_sigma_down(noise), noise.count, **self.bound_arguments)

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        """Itself under replace-one; refused under add-remove (see the class docstring)."""
        if Neighbouring.parse(neighbouring) is Neighbouring.REPLACE_ONE:
            return self
        raise UnsupportedEventError(
            f"{self!r} under add-remove: a removed user takes a noise share along, and no closed form "
            "here covers sums of different variances; state the sensitivities of one person's change "
            "with every share present and account under replace-one"
        )

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        v.open_unit("delta", delta)
        v.dps("dps", dps)
        raise UnsupportedError(self._no_pair())

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        v.nonnegative("epsilon", epsilon)
        v.dps("dps", dps)
        raise UnsupportedError(self._no_pair())

    def _no_pair(self) -> str:
        return (
            "a vector sum bounded in ℓ2 has no certified dominating pair here, only an RDP curve: "
            "compose it in an Accountant and ask it (route 'rdp', which 'auto' reaches)"
        )

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``α ρ`` of KLS (discrete Gaussians); AKL's bound (Skellam) at integer orders, between them
        its chord; ``∞`` at ``α = ∞``.

        AKL's theorem holds at integer orders only. ``f(α) = (α - 1) D_α`` is convex (the log of
        ``E_Q[(P/Q)^α]``) with ``f(1) = 0``, so on ``[k - 1, k]`` it lies below the chord through
        ``(k - 2) AKL(k - 1)`` and ``(k - 1) AKL(k)`` (through 0 at ``α = 1``: ``D_α <= AKL(2)``
        on ``(1, 2]``). Continuous in ``α``, unlike ``AKL(⌈α⌉)``, so the accountant's search over
        real orders is not misled by steps.
        """
        a = v.order("alpha", alpha)
        v.dps("dps", dps)
        if math.isinf(a):
            return Enclosure(mp.inf, mp.inf)
        if isinstance(self.total_noise, Skellam):
            k = max(2, math.ceil(a))
            top = self._skellam_rdp(k)
            if a == k or k == 2:
                return Enclosure(mp.zero, mp.mpf(top))
            below = self._skellam_rdp(k - 1)
            with mp.workdps(30):
                am = mp.mpf(a)
                chord = (k - am) * (k - 2) * mp.mpf(below) + (am - k + 1) * (k - 1) * mp.mpf(top)
                return Enclosure(mp.zero, mp.mpf(float_up(chord / (am - 1))))
        with mp.workdps(30):
            return Enclosure(mp.zero, mp.mpf(float_up(mp.mpf(a) * mp.mpf(self._kls_rho))))

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """``∞``: the privacy loss of a shifted Skellam or sum of discrete Gaussians is unbounded."""
        v.dps("dps", dps)
        return Enclosure(mp.inf, mp.inf)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """KLS's ρ; for Skellam ``sup_α D_α/α <= AKL(2)``.

        For ``α ∈ (k-1, k]``, ``D_α/α <= AKL(k)/(k-1)``, which decreases in ``k`` (see
        :meth:`accounting.noise.Skellam.rho_tail`; the argument holds with ``‖v‖₂²`` and ``‖v‖₁``
        in place of ``Δ²`` and ``Δ``), so its value at ``k = 2`` bounds every order. ``rtol`` is unused.
        """
        v.dps("dps", dps)
        v.positive("rtol", rtol)
        if isinstance(self.total_noise, Skellam):
            return Enclosure(mp.zero, mp.mpf(self._skellam_rdp(2)))
        return Enclosure(mp.zero, mp.mpf(self._kls_rho))


def _sigma_down(noise: SumOfDiscreteGaussians) -> float:
    """σ of a sum of discrete Gaussians as a float rounded down (less noise: a larger bound)."""
    with precision(DEFAULT_DPS):
        return float_down(lower(to_interval(noise.sigma)))


def _float_at_most(value: Fraction) -> float:
    """The largest float ``<= value``, compared exactly."""
    f = float(value)
    return math.nextafter(f, -math.inf) if Fraction(f) > value else f
