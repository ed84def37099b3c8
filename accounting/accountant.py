"""The :class:`Accountant`: a ledger of events, answered by the tightest route it can certify.

An *event* is a mechanism applied ``count`` times (what happened); the accountant decides how
to account it (how it is accounted), following the split of Google's ``dp_accounting``.
Routes:

``"pld"``
    exact privacy-loss distributions: one lattice mechanism is answered exactly
    (:mod:`accounting.divergence`), one :class:`~accounting.mechanisms.PureDP` by its own
    worst-case profile; compositions of symmetric lattice mechanisms by certified PLD
    convolution (:mod:`accounting.pld`); compositions of Gaussian mechanisms exactly (the
    composition is again a Gaussian mechanism). A composition involving a ``PureDP`` is not
    accounted by this route.
``"rdp"``
    exact Rényi curves summed over the events (the tight worst-case curve for a ``PureDP``),
    converted by Lemma 10 (Canonne–Kamath–Steinke 2020 / Balle et al. 2020) optimised over
    real orders.
``"zcdp"``
    ρ of each event summed (``ε²/2`` for a ``PureDP``), converted by the CKS optimal conversion.
``"pure"``
    pure ε summed (only when every event has one; a ``PureDP`` always has).
``"auto"``
    the smallest certified upper bound among the routes that apply (PLD when it applies, else
    RDP and pure), and the answer says which route won.

The neighbouring relation is explicit (:class:`Neighbouring`; replace-one by default). For the
additive mechanisms here it fixes what ``sensitivity`` means: the largest change of the query
between neighbours *under that relation*; the ledger records it so a re-accounting uses the same.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any

from mpmath import mp

from accounting import _validate as v
from accounting import conversion
from accounting._certified import Enclosure, float_up
from accounting.errors import AccountingError, ParameterError, UnsupportedError
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism, PureDP
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Geometric,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
    Polya,
    Skellam,
    SumOfDiscreteGaussians,
)

__all__ = ["ROUTES", "Accountant", "Event", "Neighbouring", "PrivacyAnswer"]

ROUTES = ("auto", "pld", "rdp", "zcdp", "pure")

_MECHANISMS = "an AdditiveNoise, a DistributedSum or a PureDP"


@dataclass(frozen=True)
class Event:
    """A mechanism applied ``count`` times (adaptively composed)."""

    mechanism: Mechanism
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, AdditiveNoise | DistributedSum | PureDP):
            raise ParameterError("mechanism", self.mechanism, _MECHANISMS)
        object.__setattr__(self, "count", v.integer("count", self.count, minimum=1))


@dataclass(frozen=True)
class PrivacyAnswer:
    """A certified answer, the route that gave it, and what every route tried gave.

    ``float(answer)`` is the upper end of ``value`` rounded up.
    """

    value: Enclosure
    route: str
    candidates: dict[str, float] = field(default_factory=dict)

    def __float__(self) -> float:
        return self.value.upper


def _central(mechanism: Mechanism) -> AdditiveNoise:
    if isinstance(mechanism, DistributedSum):
        return mechanism.mechanism
    assert isinstance(mechanism, AdditiveNoise)
    return mechanism


def _noise(mechanism: Mechanism) -> NoiseDistribution | None:
    """The noise of the central mechanism; ``None`` for a :class:`PureDP` (it has none)."""
    return None if isinstance(mechanism, PureDP) else _central(mechanism).noise


def _accounted(mechanism: Mechanism) -> Mechanism:
    """The mechanism asked the per-event questions: the central one, or a ``PureDP`` itself."""
    return mechanism if isinstance(mechanism, PureDP) else _central(mechanism)


class Accountant:
    """Composes events and answers ``epsilon(delta)`` and ``delta(epsilon)``.

    Parameters
    ----------
    neighbouring : Neighbouring
        The neighbouring relation the events' sensitivities refer to (recorded in the ledger).
    dps : int
        Working precision of the exact computations.
    """

    def __init__(self, neighbouring: Neighbouring = Neighbouring.REPLACE_ONE, dps: int = 20) -> None:
        if not isinstance(neighbouring, Neighbouring):
            raise ParameterError("neighbouring", neighbouring, "a Neighbouring member")
        self.neighbouring = neighbouring
        self.dps = v.dps("dps", dps)
        self._events: list[Event] = []

    # -- the ledger ---------------------------------------------------------------------
    @property
    def ledger(self) -> tuple[Event, ...]:
        """The events composed so far, in order."""
        return tuple(self._events)

    def compose(self, mechanism: Mechanism | Event, count: int = 1) -> Accountant:
        """Record ``mechanism`` applied ``count`` more times; returns ``self`` for chaining."""
        event = mechanism if isinstance(mechanism, Event) else Event(mechanism, count)
        self._events.append(event)
        return self

    # -- answers ------------------------------------------------------------------------
    def epsilon(self, delta: float, route: str = "auto") -> PrivacyAnswer:
        """The smallest certified ε with the composition ``(ε, δ)``-DP, by ``route``."""
        d = v.open_unit("delta", delta)
        return self._answer(route, lambda r: self._epsilon_by(r, d))

    def delta(self, epsilon: float, route: str = "auto") -> PrivacyAnswer:
        """The smallest certified δ with the composition ``(ε, δ)``-DP, by ``route``."""
        e = v.nonnegative("epsilon", epsilon)
        return self._answer(route, lambda r: self._delta_by(r, e))

    def _answer(self, route: str, by: Callable[[str], Enclosure]) -> PrivacyAnswer:
        if route not in ROUTES:
            raise ParameterError("route", route, "one of " + ", ".join(ROUTES))
        if not self._events:
            return PrivacyAnswer(Enclosure.exact(0), route if route != "auto" else "pure", {})
        if route != "auto":
            value = by(route)
            return PrivacyAnswer(value, route, {route: value.upper})
        tried: dict[str, Enclosure] = {}
        order = ["pld", "pure"] if self._pld_applies() else ["rdp", "pure"]
        for name in order:
            try:
                tried[name] = by(name)
            except UnsupportedError:
                continue
        if not tried:  # pragma: no cover - rdp applies to every supported event
            raise UnsupportedError("no route can account this ledger")
        best = min(tried, key=lambda k: tried[k].hi)
        return PrivacyAnswer(tried[best], best, {k: e.upper for k, e in tried.items()})

    # -- routes -------------------------------------------------------------------------
    def _single(self) -> bool:
        """Whether the ledger is one mechanism applied once."""
        return len(self._events) == 1 and self._events[0].count == 1

    def _pld_applies(self) -> bool:
        if self._single():
            return True
        if all(isinstance(_noise(e.mechanism), Gaussian) for e in self._events):
            return True
        return all(self._symmetric_lattice(e) for e in self._events)

    @staticmethod
    def _symmetric_lattice(event: Event) -> bool:
        noise = _noise(event.mechanism)
        return isinstance(noise, LatticeNoise) and noise.symmetric and noise.log_concave

    def _gaussian_sigma(self) -> float | None:
        """The σ of the single Gaussian mechanism (sensitivity 1) equal to the whole ledger."""
        if not all(isinstance(_noise(e.mechanism), Gaussian) for e in self._events):
            return None
        mechs = [(_central(e.mechanism), e.count) for e in self._events]
        with mp.workdps(50):
            # The losses add: μ² = Σ k Δ²/σ². Round σ_eff = 1/μ down (less noise is pessimistic).
            mu2 = mp.fsum(k * (mp.mpf(m.sensitivity) / _sigma(m.noise)) ** 2 for m, k in mechs)
            sigma = 1 / mp.sqrt(mu2)
            f = float(sigma)
            return math.nextafter(f, 0.0) if mp.mpf(f) > sigma else f

    def _epsilon_by(self, route: str, delta: float) -> Enclosure:
        if route == "pure":
            return self._pure_total()
        if route == "pld":
            return self._pld(lambda p: p.epsilon(delta), lambda m: m.epsilon(delta, self.dps), delta=delta)
        if route == "zcdp":
            rho = self._rho_total()
            return _rounded(conversion.zcdp_to_dp_cks(rho, delta))
        if route == "rdp":
            eps, _ = conversion.optimize_rdp_order(self._rdp_curve, delta, **self._search())
            return _rounded(eps)
        raise ParameterError("route", route, "one of " + ", ".join(ROUTES))  # pragma: no cover

    def _delta_by(self, route: str, epsilon: float) -> Enclosure:
        if route == "pure":
            total = self._pure_total()
            if total.hi <= epsilon:
                return Enclosure.exact(0)
            raise UnsupportedError(f"the pure route certifies δ = 0 only for ε >= {total.upper}")
        if route == "pld":
            return self._pld(
                lambda p: p.delta(epsilon), lambda m: m.delta(epsilon, self.dps), epsilon=epsilon
            )
        if route == "zcdp":
            return _rounded(conversion.zcdp_delta_cks(self._rho_total(), epsilon))
        if route == "rdp":
            value, _ = conversion.optimize_rdp_order_delta(self._rdp_curve, epsilon, **self._search())
            return _rounded(value)
        raise ParameterError("route", route, "one of " + ", ".join(ROUTES))  # pragma: no cover

    def _pure_total(self) -> Enclosure:
        with mp.workdps(40):
            parts = [e.count * _accounted(e.mechanism).pure_epsilon(self.dps).hi for e in self._events]
            total = mp.fsum(parts)
        if mp.isinf(total):
            raise UnsupportedError("an event has no pure-DP guarantee")
        return Enclosure(mp.zero, mp.mpf(float_up(total))) if total else Enclosure.exact(0)

    def _rho_total(self) -> float:
        with mp.workdps(40):
            total = mp.fsum(e.count * _accounted(e.mechanism).zcdp_rho(self.dps).hi for e in self._events)
            if mp.isinf(total):
                raise UnsupportedError("an event is not zCDP (its D_α/α is unbounded)")
            return float_up(total)

    def _rdp_curve(self, alpha: float) -> float:
        """The summed exact RDP curve at ``alpha``, rounded up (``inf`` where it cannot be computed)."""
        try:
            parts = [e.count * _accounted(e.mechanism).rdp(alpha, self.dps).hi for e in self._events]
        except UnsupportedError:
            return math.inf  # an order too large to sum exactly: the optimiser moves elsewhere
        with mp.workdps(40):
            return float_up(mp.fsum(parts))

    def _search(self) -> dict[str, Any]:
        """How hard the RDP route searches orders: closed forms are cheap, exact lattice sums are not.

        For lattice noise the orders stop at 256 (sums get costly beyond) and the search is coarse
        (24 grid points, refinement to 1e-4): any order gives a valid bound, so this only costs a
        little tightness, which the PLD route does not lose. A ``PureDP`` curve is a closed form.
        """
        closed = all(
            isinstance(e.mechanism, PureDP) or isinstance(_noise(e.mechanism), Gaussian | Laplace)
            for e in self._events
        )
        if closed:
            return {"alpha_max": 1e6}
        return {"alpha_max": 256.0, "grid_points": 24, "rtol": 1e-4}

    def _pld(
        self,
        on_pld: Callable[[Any], Enclosure],
        single: Callable[[Mechanism], Enclosure],
        *,
        delta: float | None = None,
        epsilon: float | None = None,
    ) -> Enclosure:
        if self._single():
            try:
                return single(_accounted(self._events[0].mechanism))
            except UnsupportedError:
                # Too wide for the exact single-shot sum (a huge discrete Laplace scale): the
                # grid PLD has closed-form atoms for it, so fall through to it when it applies.
                if not self._symmetric_lattice(self._events[0]):
                    raise
        sigma = self._gaussian_sigma()
        if sigma is not None:
            mech = AdditiveNoise(Gaussian(sigma), 1.0)
            return mech.epsilon(delta) if delta is not None else mech.delta(epsilon if epsilon else 0.0)
        if not all(self._symmetric_lattice(e) for e in self._events):
            raise UnsupportedError(
                "the PLD route needs symmetric log-concave lattice noise (one dominating pair) "
                "or Gaussian mechanisms only (a PureDP only when it is the whole ledger, once)"
            )
        from accounting import pld  # type: ignore[attr-defined,unused-ignore]

        dist = pld.compose_mechanisms([(e.mechanism, e.count) for e in self._events], dps=self.dps)
        return on_pld(dist)

    # -- serialization ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The ledger as plain data (JSON-ready): relation, precision and events."""
        return {
            "format": "dpcert-ledger/1",
            "neighbouring": self.neighbouring.value,
            "dps": self.dps,
            "events": [{"count": e.count, "mechanism": mechanism_to_dict(e.mechanism)} for e in self._events],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The ledger as JSON; :meth:`from_json` rebuilds an equal accountant."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Accountant:
        """Rebuild an accountant from :meth:`to_dict` output (validating everything)."""
        if data.get("format") != "dpcert-ledger/1":
            raise ParameterError("format", data.get("format"), "'dpcert-ledger/1'")
        try:
            acc = cls(Neighbouring(data["neighbouring"]), data.get("dps", 20))
        except ValueError as err:
            if isinstance(err, AccountingError):
                raise
            raise ParameterError(
                "neighbouring", data.get("neighbouring"), "'replace-one' or 'add-remove'"
            ) from None
        for item in data["events"]:
            acc.compose(mechanism_from_dict(item["mechanism"]), item["count"])
        return acc

    @classmethod
    def from_json(cls, text: str) -> Accountant:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Accountant):
            return NotImplemented
        return (self.neighbouring, self.dps, self._events) == (other.neighbouring, other.dps, other._events)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Accountant({self.neighbouring.value}, {len(self._events)} events)"


def _sigma(noise: NoiseDistribution) -> Any:
    assert isinstance(noise, Gaussian)
    return mp.mpf(float(noise.sigma))


def _rounded(value: float) -> Enclosure:
    """A bound from a conversion: certified from above only (its lower end is 0)."""
    return Enclosure(mp.zero, mp.mpf(value))


# -- (de)serialization of noise and mechanisms --------------------------------------------

_NOISE_TYPES: dict[str, type[NoiseDistribution]] = {
    cls.__name__: cls
    for cls in (
        DiscreteLaplace,
        Geometric,
        Polya,
        Skellam,
        DiscreteGaussian,
        SumOfDiscreteGaussians,
        CenteredBinomial,
        Laplace,
        Gaussian,
    )
}


def _encode(value: object) -> object:
    if isinstance(value, Fraction):
        return {"fraction": f"{value.numerator}/{value.denominator}"}
    return value


def _decode(value: object) -> object:
    if isinstance(value, dict) and set(value) == {"fraction"}:
        return Fraction(str(value["fraction"]))
    return value


def noise_to_dict(noise: NoiseDistribution) -> dict[str, Any]:
    """A noise distribution as plain data (exact: Fractions as ``"p/q"``)."""
    name = type(noise).__name__
    if name not in _NOISE_TYPES:
        raise ParameterError("noise", noise, "a distribution of accounting.noise")
    return {"type": name} | {f.name: _encode(getattr(noise, f.name)) for f in fields(noise)}  # type: ignore[arg-type]


def noise_from_dict(data: dict[str, Any]) -> NoiseDistribution:
    """Inverse of :func:`noise_to_dict`."""
    kind = data.get("type")
    if kind not in _NOISE_TYPES:
        raise ParameterError("type", kind, "one of " + ", ".join(sorted(_NOISE_TYPES)))
    params: dict[str, Any] = {k: _decode(val) for k, val in data.items() if k != "type"}
    try:
        if kind == "Skellam":
            return Skellam.from_rates(params["mu1"], params["mu2"], params.get("offset", 0))
        if kind == "DiscreteLaplace":
            if params.get("decay") is not None:
                return DiscreteLaplace(decay=params["decay"])
            return DiscreteLaplace(params["scale"])
        if kind == "Geometric":
            return Geometric(params["beta"])
        return _NOISE_TYPES[kind](**params)
    except (KeyError, TypeError) as err:
        raise ParameterError("noise", data, f"the fields of {kind} ({err})") from None


def mechanism_to_dict(mechanism: Mechanism) -> dict[str, Any]:
    """A mechanism as plain data."""
    if isinstance(mechanism, AdditiveNoise):
        return {
            "type": "AdditiveNoise",
            "noise": noise_to_dict(mechanism.noise),
            "sensitivity": mechanism.sensitivity,
        }
    if isinstance(mechanism, DistributedSum):
        return {
            "type": "DistributedSum",
            "share": noise_to_dict(mechanism.share),
            "users": mechanism.users,
            "sensitivity": mechanism.sensitivity,
        }
    if isinstance(mechanism, PureDP):
        return {"type": "PureDP", "epsilon": mechanism.eps, "source": mechanism.source}
    raise ParameterError("mechanism", mechanism, _MECHANISMS)


def mechanism_from_dict(data: dict[str, Any]) -> Mechanism:
    """Inverse of :func:`mechanism_to_dict`."""
    kind = data.get("type")
    if kind == "AdditiveNoise":
        return AdditiveNoise(noise_from_dict(data["noise"]), data["sensitivity"])
    if kind == "DistributedSum":
        return DistributedSum(noise_from_dict(data["share"]), data["users"], data["sensitivity"])
    if kind == "PureDP":
        if not {"epsilon", "source"} <= set(data):
            raise ParameterError("mechanism", data, "the fields of PureDP (epsilon, source)")
        return PureDP(data["epsilon"], data["source"])
    raise ParameterError("type", kind, "'AdditiveNoise', 'DistributedSum' or 'PureDP'")
