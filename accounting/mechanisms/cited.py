"""Cited guarantees: a mechanism known (by a theorem) to be ``ε``-DP or ``(ε, δ)``-DP, and nothing more.

Such a mechanism has no noise to inspect, so every answer is the worst case over all mechanisms with
the cited guarantee: binary randomized response for ``ε``-DP, the pair of Kairouz, Oh & Viswanath
2015 (their Theorem 3.3's ``M̃``) for ``(ε, δ)``-DP. The guarantee holds for its theorem's
neighbouring relation only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from mpmath import iv, mp

from accounting import conversion
from accounting import validate as v
from accounting.certified import Enclosure, lower, precision, upper
from accounting.errors import ParameterError, ParameterTypeError, UnsupportedEventError
from accounting.mechanisms.base import Mechanism, float_at_least
from accounting.neighbouring import Neighbouring
from accounting.noise import DEFAULT_DPS

__all__ = ["ApproxDP", "PureDP"]

_closed = Enclosure.from_rounded_up


@dataclass(frozen=True, init=False, repr=False)
class PureDP(Mechanism):
    """A mechanism known (by a cited theorem) to be ``ε``-DP, and nothing more.

    For example the relaxed secure aggregation of Cheu & Yan, whose ``2ε̂`` term Theorem 3 of
    the distributed MAB paper adds. Nothing else is known about the mechanism, so every answer
    is the *worst case over all* ``ε``-DP mechanisms, which is binary randomized response
    ``P = (e^ε, 1)/(1 + e^ε)`` against its reverse ``Q``: every ``ε``-DP pair is a
    post-processing of it (Kairouz, Oh & Viswanath 2015, "The Composition Theorem for
    Differential Privacy": the privacy region of an ``ε``-DP mechanism lies inside that of
    randomized response, the dominance behind their Theorem 3.3), so by data processing no
    ``ε``-DP mechanism has a larger hockey-stick or Rényi divergence. Nothing is optimistic.

    Parameters
    ----------
    epsilon : float or Fraction
        The cited ``ε > 0`` (finite). An ``int``, ``Fraction`` or ``mpf`` that is not a float is
        rounded *up* to one: a smaller ε would claim more privacy than the theorem gives.
    source : str
        Where the guarantee comes from (paper and theorem), kept in the ledger.
    neighbouring : Neighbouring or str
        The relation the cited theorem is stated for (replace-one by default); an
        :class:`~accounting.accountant.Accountant` under another relation refuses the event.
    """

    eps: float
    source: str
    neighbouring: Neighbouring

    def __init__(
        self,
        epsilon: float | Fraction,
        source: str,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE_ONE,
    ) -> None:
        v.positive("epsilon", epsilon)
        object.__setattr__(self, "eps", float_at_least(epsilon))
        object.__setattr__(self, "source", _source(source))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(neighbouring))

    def __repr__(self) -> str:
        return (
            f"PureDP(epsilon={self.eps!r}, source={self.source!r}, neighbouring={self.neighbouring.value!r})"
        )

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        return _cited_under(self, self.neighbouring, neighbouring)

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The inverse of :meth:`delta`: ``ε' = ln(e^ε - δ(1 + e^ε))``, clipped at 0.

        The smallest ``ε'`` with ``δ(ε') <= δ`` (``0`` once ``δ >= tanh(ε/2) = δ(0)``).
        Interval arithmetic at ``dps`` digits (plus guard digits).
        """
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        with precision(dps):
            e = iv.exp(iv.mpf(self.eps))
            ratio = e - iv.mpf(d) * (1 + e)  # e^{ε'}
            if upper(ratio) <= 1:
                return Enclosure.exact(0)
            if lower(ratio) < 1:
                ratio = iv.mpf([1, upper(ratio)])
            return Enclosure.from_interval(iv.log(ratio))

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The privacy profile of randomized response: ``δ(ε') = (e^ε - e^{ε'})/(1 + e^ε)`` for ``ε' < ε``.

        ``0`` for ``ε' >= ε``. Kairouz, Oh & Viswanath 2015 (the privacy region of an ``ε``-DP
        mechanism lies inside that of randomized response; its hockey-stick divergence is
        ``[P_1 - e^{ε'} Q_1]_+``). Interval arithmetic at ``dps`` digits (plus guard digits).
        """
        eps_prime = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        if eps_prime >= self.eps:
            return Enclosure.exact(0)
        with precision(dps):
            e = iv.exp(iv.mpf(self.eps))
            value = (e - iv.exp(iv.mpf(eps_prime))) / (1 + e)
            return Enclosure(max(mp.zero, lower(value)), upper(value))

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The Rényi divergence of randomized response, the tight worst case over ``ε``-DP.

        ``D_α = 1/(α-1) ln[(e^{αε} + e^{(1-α)ε})/(1 + e^ε)]`` for finite ``α > 1``, ``D_∞ = ε``:
        :func:`accounting.conversion.pure_to_rdp` (evaluated at >= 50 digits, rounded up).
        """
        a = v.order("alpha", alpha)
        v.dps("dps", dps)
        if math.isinf(a):
            return self.pure_epsilon(dps)
        return _closed(conversion.pure_to_rdp(self.eps, a))

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """The cited ``ε``, exactly."""
        v.dps("dps", dps)
        return Enclosure.exact(self.eps)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``ρ <= ε²/2``: Bun & Steinke 2016, Proposition 3.3 (``ε``-DP implies ``(ε²/2)``-zCDP).

        The upper end is :func:`accounting.conversion.pure_to_zcdp`. The lower end is the
        Kullback–Leibler divergence of randomized response, ``ε tanh(ε/2)``: the limit of
        ``D_α/α`` as ``α → 1``, so the worst-case ``sup_α D_α/α`` is at least that (numerically
        it *is* that, below ``ε²/2``; the upper end keeps the cited theorem). ``rtol`` is unused.
        """
        dps = v.dps("dps", dps)
        v.positive("rtol", rtol)
        # e^ε - 1 cancels for small ε: carry the digits it loses.
        extra = max(0, math.ceil(-math.log10(self.eps)))
        with precision(dps + extra):
            e = iv.exp(iv.mpf(self.eps))
            kl = iv.mpf(self.eps) * (e - 1) / (e + 1)
            return Enclosure(max(mp.zero, lower(kl)), mp.mpf(conversion.pure_to_zcdp(self.eps)))


def _cited_under(mechanism: Mechanism, own: Neighbouring, asked: Neighbouring | str) -> Mechanism:
    if Neighbouring.parse(asked) is not own:
        raise UnsupportedEventError(
            f"{mechanism!r} is cited for the {own.value} relation and cannot be accounted under "
            f"{Neighbouring.parse(asked).value} (restate the theorem for that relation)"
        )
    return mechanism


def _source(source: object) -> str:
    if not isinstance(source, str):
        raise ParameterTypeError("source", source, "a non-empty str naming the theorem")
    if not source.strip():
        raise ParameterError("source", source, "a non-empty str naming the theorem")
    return source


@dataclass(frozen=True, init=False, repr=False)
class ApproxDP(Mechanism):
    """A mechanism known (by a cited theorem) to be ``(ε, δ)``-DP, and nothing more.

    Amplification by shuffling, the shuffle summation protocols, advanced compositions and
    returning users give such guarantees. Every answer is the worst case over all
    ``(ε, δ)``-DP mechanisms: the pair of Kairouz, Oh & Viswanath 2015 (their Theorem 3.3's
    ``M̃``), which with probability ``δ`` reveals the input (loss ``+∞``) and otherwise is
    randomized response, ``P = (δ, (1-δ) e^ε/(1+e^ε), (1-δ)/(1+e^ε), 0)`` against ``Q`` its
    reverse. Every ``(ε, δ)``-DP pair is a post-processing of it, so nothing is optimistic.
    With ``δ = 0`` it answers exactly as :class:`PureDP`.

    Parameters
    ----------
    epsilon : float
        The cited ``ε >= 0`` (rounded up to a float when given as a Fraction or mpf).
    delta : float
        The cited ``δ ∈ [0, 1)`` (rounded up likewise).
    source : str
        Where the guarantee comes from, kept in the ledger.
    neighbouring : Neighbouring or str
        The relation of the cited theorem (replace-one by default).
    """

    eps: float
    dlt: float
    source: str
    neighbouring: Neighbouring

    def __init__(
        self,
        epsilon: float | Fraction,
        delta: float | Fraction,
        source: str,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE_ONE,
    ) -> None:
        v.nonnegative("epsilon", epsilon)
        d = v.real("delta", delta)
        if not 0 <= d < 1:
            raise ParameterError("delta", delta, "a real number in [0, 1)")
        object.__setattr__(self, "eps", float_at_least(epsilon))
        object.__setattr__(self, "dlt", float_at_least(delta))
        object.__setattr__(self, "source", _source(source))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(neighbouring))

    def __repr__(self) -> str:
        return (
            f"ApproxDP(epsilon={self.eps!r}, delta={self.dlt!r}, source={self.source!r}, "
            f"neighbouring={self.neighbouring.value!r})"
        )

    def under(self, neighbouring: Neighbouring | str) -> Mechanism:
        return _cited_under(self, self.neighbouring, neighbouring)

    def delta(self, epsilon: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """``δ + (1 - δ) (e^ε - e^{ε'})_+ / (1 + e^ε)`` (KOV 2015): interval arithmetic."""
        eps_prime = v.nonnegative("epsilon", epsilon)
        dps = v.dps("dps", dps)
        with precision(dps):
            base = iv.mpf(self.dlt)
            if eps_prime >= self.eps:
                return Enclosure.from_interval(base)
            e = iv.exp(iv.mpf(self.eps))
            value = base + (1 - base) * (e - iv.exp(iv.mpf(eps_prime))) / (1 + e)
            return Enclosure(max(mp.zero, lower(value)), min(mp.one, upper(value)))

    def epsilon(self, delta: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """The inverse of :meth:`delta`: ``ln(e^ε - (δ' - δ)(1 + e^ε)/(1 - δ))``, ``∞`` for ``δ' < δ``."""
        d = v.open_unit("delta", delta)
        dps = v.dps("dps", dps)
        if d < self.dlt:
            return Enclosure(mp.inf, mp.inf)
        with precision(dps):
            e = iv.exp(iv.mpf(self.eps))
            ratio = e - (iv.mpf(d) - iv.mpf(self.dlt)) * (1 + e) / (1 - iv.mpf(self.dlt))
            if upper(ratio) <= 1:
                return Enclosure.exact(0)
            if lower(ratio) < 1:
                ratio = iv.mpf([1, upper(ratio)])
            return Enclosure.from_interval(iv.log(ratio))

    def rdp(self, alpha: float, dps: int = DEFAULT_DPS) -> Enclosure:
        """Infinite when ``δ > 0`` (the pair has an atom of loss ``+∞``); else :class:`PureDP`'s."""
        a = v.order("alpha", alpha)
        v.dps("dps", dps)
        if self.dlt > 0:
            return Enclosure(mp.inf, mp.inf)
        if self.eps == 0:
            return Enclosure.exact(0)
        return PureDP(self.eps, self.source).rdp(a, dps)

    def pure_epsilon(self, dps: int = DEFAULT_DPS) -> Enclosure:
        """``ε`` when ``δ = 0``, else ``∞``."""
        v.dps("dps", dps)
        return Enclosure.exact(self.eps) if self.dlt == 0 else Enclosure(mp.inf, mp.inf)

    def zcdp_rho(self, dps: int = DEFAULT_DPS, rtol: float = 1e-2) -> Enclosure:
        """``ε²/2`` when ``δ = 0`` (Bun–Steinke 2016 Prop. 3.3), else ``∞``."""
        v.dps("dps", dps)
        v.positive("rtol", rtol)
        if self.dlt > 0:
            return Enclosure(mp.inf, mp.inf)
        if self.eps == 0:
            return Enclosure.exact(0)
        return PureDP(self.eps, self.source).zcdp_rho(dps, rtol)
