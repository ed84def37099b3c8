"""Google's ``dp_accounting`` events in, certified answers out.

A ``dp_accounting`` user certifies an existing ledger in one call and sees how far the float
answers of ``dp_accounting``'s own accountants were from the certified one::

    import dp_accounting
    from accounting.interop import certify

    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.0), 100)
    print(certify(event, target_delta=1e-5))

(With ``dp_accounting`` 0.6 this shows its PLD answer, ``91.81728962407377``, about ``6e-10`` below
the exact ``ε = 91.8172896246637...`` that the certified enclosure holds: optimistic.)

* :func:`from_dp_event` turns a ``DpEvent`` into an event of :mod:`accounting`;
  :func:`to_dp_event` goes back; :func:`to_accountant` composes a ``DpEvent`` into an
  :class:`~accounting.accountant.Accountant` under the matching relation (the safe door: an event
  converted for one relation must be accounted under that relation, see below).
* :func:`certify` answers ``ε(δ)`` or ``δ(ε)`` certified, and puts ``dp_accounting``'s PLD and RDP
  answers next to it (:class:`Certificate`).

``dp_accounting`` is optional: this module imports without it, and the functions that need it
raise :class:`MissingDependencyError` (an :class:`ImportError`) saying ``pip install dpcert[interop]``.

**Events.**

======================================  ============================================================
``dp_accounting``                       :mod:`accounting`
======================================  ============================================================
``GaussianDpEvent(nm)``                 ``AdditiveNoise(Gaussian(nm), Δ)``
``LaplaceDpEvent(nm)``                  ``AdditiveNoise(Laplace(nm), Δ)``
``DiscreteLaplaceDpEvent(a, C)``        ``AdditiveNoise(DiscreteLaplace(scale=1/a), Δ)``, ``1/a`` an
                                        exact :class:`~fractions.Fraction`
``PoissonSampledDpEvent(q, e)``         ``PoissonSampled(mechanism of e, q)``
``SampledWithoutReplacementDpEvent``    ``SampledWithoutReplacement(mechanism of e, m/n)``, ``m/n``
``(n, m, e)``                           an exact Fraction
``SelfComposedDpEvent(e, k)``           ``Event(e, k)`` (counts of nested groups multiplied out)
``ComposedDpEvent([...])``              ``Composed([...])``
``NoOpDpEvent()``                       ``Composed(())``: nothing
``NonPrivateDpEvent``,                  refused (:class:`~accounting.errors.UnsupportedEventError`
``UnsupportedDpEvent``, any other       naming the class and where it sits in the event)
======================================  ============================================================

**Sensitivities: where the conventions differ.** ``dp_accounting`` states a *contribution
bound*: ``GaussianDpEvent.noise_multiplier`` is ``σ/C`` where every record's value has
``‖v‖₂ <= C`` (``dp_event.py``, ``GaussianDpEvent``); likewise ``LaplaceDpEvent`` with an ℓ₁ bound
and ``DiscreteLaplaceDpEvent.sensitivity = C``. Under its ``ADD_OR_REMOVE_ONE`` a record moves the
released sum by ``C``; under ``REPLACE_ONE`` by ``2C`` (its ``AdditiveNoisePrivacyLoss`` takes the
pair ``(X + C, X - C)`` for replace adjacency: a shift of ``2C``). Our
:class:`~accounting.mechanisms.AdditiveNoise` states the sensitivity *under the ledger's relation*
instead (:mod:`accounting.neighbouring`), so a top-level event becomes, with ``C = 1`` (``σ = nm``):

* ``Δ = C`` under add-remove and ``Δ = 2C`` under replace-one (Gaussian, Laplace, discrete Laplace);
* inside a sampled event, ``Δ = C`` under both relations: our subsampled events take the
  contribution bound, as ``dp_accounting`` does (:mod:`accounting.subsampling`).

Checked against ``dp_accounting`` 0.6 (the tests repeat these): its ``PLDAccountant`` gives
``ε(10⁻⁵) = 4.37717810`` for ``GaussianDpEvent(1.0)`` under ``ADD_OR_REMOVE_ONE`` and
``9.99725615`` under ``REPLACE_ONE``; the exact values (Balle & Wang 2018, Thm 8) for ``σ = 1`` and
``Δ = 1`` and ``Δ = 2`` are ``4.377178096`` and ``9.997256146``.

Two consequences for the answers ``dp_accounting`` prints, which :func:`certify` shows as
negative gaps:

* its ``RdpAccountant`` accounts ``GaussianDpEvent`` and ``LaplaceDpEvent`` with the add-remove
  sensitivity ``C`` whatever the relation, so under ``REPLACE_ONE`` it is optimistic (for
  ``GaussianDpEvent(1.0)``: ``ε(10⁻⁵) = 4.73`` where the exact value is ``9.9973``); the
  ``SampledWithoutReplacementDpEvent`` it accepts (replace-one only) reduces at ``m = n`` to
  ``α/(2 nm²)``, again the sensitivity ``C``, where a replaced record moves the sum by ``2C``;
* its ``PLDAccountant`` refuses Laplace and discrete Laplace events under ``REPLACE_ONE``. We
  account them with ``Δ = 2C``: the event's own definition (a sum of values with ``‖v‖₁ <= C``)
  fixes that a replaced record moves the sum by at most ``2C``.

**Vector releases.** Gaussian events release a vector; its worst pair is the scalar one with
shift ``C`` (the Gaussian is rotation invariant). For Laplace and discrete Laplace events with an
ℓ₁ bound, ``dp_accounting`` uses the scalar pair with shift ``C`` too, and so do we: for a scalar
query that is exact; that the ℓ₁ mass concentrated on one coordinate is the worst case for vector
queries is that library's convention, checked numerically by the tests on small cases but not
proved here.

**Numbers.** Every float is mapped so that the result never claims more noise than was run, nor
less sampling: ``noise_multiplier`` and the discrete Laplace parameter map exactly into our events
(``σ = nm``, ``scale = 1/a`` as a Fraction), and back they are rounded toward less noise (a
multiplier down, ``a = 1/b`` or ``a = -ln β`` up); a sampling probability maps exactly (and is
rounded up on the way back); ``sample_size/source_dataset_size`` is an exact Fraction.
A zero sampling probability or sample size is no release at all (nothing); a zero noise multiplier
is a non-private release and is refused like ``NonPrivateDpEvent``.

**Neighbouring relation.** ``ADD_OR_REMOVE_ONE`` maps to ``"add-remove"`` (the default here, as in
``dp_accounting``; note that the :class:`~accounting.accountant.Accountant` defaults to
replace-one), ``REPLACE_ONE`` to ``"replace-one"``. ``REPLACE_SPECIAL`` (a record replaced by a
special "null" record; Kairouz et al. 2021, "Practical and private (deep) learning without
sampling or shuffling", Definition 1.1) is refused: the events do not say what the special
record contributes. If it contributes zero, every event here has the add-remove pairs (or, for
sampling without replacement, pairs the add-remove ones dominate), and the caller may pass
``ADD_OR_REMOVE_ONE``, making that assumption explicitly.
"""

from __future__ import annotations

import importlib.metadata
import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from mpmath import iv

from accounting import validate as v
from accounting.accountant import Accountant, Composed, Event
from accounting.certified import (
    DEFAULT_DPS,
    Enclosure,
    exact_fraction,
    float_up,
    precision,
    to_interval,
    upper,
)
from accounting.errors import (
    MissingDependencyError,
    ParameterError,
    ParameterTypeError,
    UnsupportedEventError,
)
from accounting.mechanisms import AdditiveNoise, Mechanism
from accounting.neighbouring import Neighbouring
from accounting.noise import NOISE_FAMILIES, DiscreteLaplace, NoiseFamily
from accounting.subsampling import PoissonSampled, SampledWithoutReplacement

__all__ = [
    "Certificate",
    "MissingDependencyError",
    "OurEvent",
    "certify",
    "from_dp_event",
    "to_accountant",
    "to_dp_event",
]

#: An event of :mod:`accounting` that :func:`from_dp_event` can return.
OurEvent = Mechanism | Event | Composed | PoissonSampled | SampledWithoutReplacement

_INSTALL = "pip install dpcert[interop]"

#: The noise families ``dp_accounting`` has an event for (:attr:`accounting.noise.NoiseFamily.dp_event`).
_DP_FAMILIES: tuple[NoiseFamily, ...] = tuple(f for f in NOISE_FAMILIES if f.dp_event is not None)


def _listed(names: list[str], last: str) -> str:
    """``"a, b and c"`` (``last`` is ``"and"`` or ``"or"``)."""
    return ", ".join(names[:-1]) + f" {last} " + names[-1] if len(names) > 1 else "".join(names)


#: The ``dp_accounting`` events of additive noise, and the noise classes they describe.
_NOISE_EVENTS = [str(f.dp_event) for f in _DP_FAMILIES]
_NOISE_CLASSES = [f.type_name for f in _DP_FAMILIES]

_OURS = "an event of accounting (AdditiveNoise, Event, Composed, PoissonSampled or SampledWithoutReplacement)"


def _dp() -> Any:
    """The ``dp_accounting`` package, or :class:`MissingDependencyError`."""
    try:
        import dp_accounting
        import dp_accounting.dp_event
        import dp_accounting.pld
        import dp_accounting.rdp
    except ImportError as err:
        raise MissingDependencyError(
            f"dp_accounting is not installed ({err}); install the optional extra: {_INSTALL}"
        ) from err
    return dp_accounting


def _is_dp_event(value: object) -> bool:
    module = sys.modules.get("dp_accounting.dp_event")
    return module is not None and isinstance(value, module.DpEvent)


# -- the neighbouring relation ------------------------------------------------------------------


def _relation(value: object) -> Neighbouring:
    """Our relation from ours, its value, or a ``dp_accounting.NeighboringRelation`` member."""
    module = sys.modules.get("dp_accounting.privacy_accountant")
    if module is not None and isinstance(value, module.NeighboringRelation):
        if value is module.NeighboringRelation.ADD_OR_REMOVE_ONE:
            return Neighbouring.ADD_REMOVE
        if value is module.NeighboringRelation.REPLACE_ONE:
            return Neighbouring.REPLACE_ONE
        raise ParameterError(
            "neighbouring",
            value,
            "ADD_OR_REMOVE_ONE or REPLACE_ONE: REPLACE_SPECIAL is refused, the events do not say what "
            "the special record contributes (if zero, pass ADD_OR_REMOVE_ONE; see accounting.interop)",
        )
    try:
        return Neighbouring.parse(value)
    except ParameterError:
        raise ParameterError(
            "neighbouring",
            value,
            "'add-remove' or 'replace-one' (a Neighbouring member), or dp_accounting's "
            "NeighboringRelation.ADD_OR_REMOVE_ONE or REPLACE_ONE",
        ) from None


def _their_relation(relation: Neighbouring) -> Any:
    rel = _dp().NeighboringRelation
    return rel.ADD_OR_REMOVE_ONE if relation is Neighbouring.ADD_REMOVE else rel.REPLACE_ONE


# -- exact numbers and rounding ------------------------------------------------------------------


def _float_down(x: Fraction) -> float:
    """The largest float ``<= x`` (``float(Fraction)`` rounds to nearest, correctly)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _float_up(x: Fraction) -> float:
    """The smallest float ``>= x``."""
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


# -- dp_accounting -> ours ------------------------------------------------------------------------


def _field(event: object, path: str, name: str, check: Any, **kwargs: Any) -> Any:
    """``event.name`` validated by ``check`` (a validator of :mod:`accounting.validate`); errors
    name where the field sits (``path``) and which class it belongs to."""
    value = getattr(event, name)
    label = f"{path}.{name}"
    try:
        return check(label, value, **kwargs)
    except ParameterError as err:
        raise ParameterError(label, value, f"{err.valid} ({type(event).__name__}.{name})") from None
    except ParameterTypeError as err:
        raise ParameterTypeError(label, value, f"{err.valid} ({type(event).__name__}.{name})") from None


def _refuse(event: object, path: str, why: str) -> UnsupportedEventError:
    return UnsupportedEventError(f"{path}: {type(event).__name__} is not supported: {why}")


def _noise_multiplier(event: Any, path: str) -> float | Fraction:
    """A Gaussian or Laplace event's ``noise_multiplier``: finite and ``> 0`` (``0`` is non-private)."""
    m = _field(event, path, "noise_multiplier", v.real)
    if m < 0:
        raise ParameterError(
            f"{path}.noise_multiplier",
            event.noise_multiplier,
            f"a finite real number > 0 ({type(event).__name__}.noise_multiplier: σ over the clip norm)",
        )
    if m == 0:
        raise UnsupportedEventError(
            f"{path}.noise_multiplier=0 ({type(event).__name__}): a release without noise is not "
            "private (dp_accounting accounts it as ε = ∞, like NonPrivateDpEvent); refused"
        )
    return event.noise_multiplier if isinstance(event.noise_multiplier, Fraction) else m


def _mechanism(event: Any, path: str, factor: int) -> AdditiveNoise | None:
    """An additive-noise event with contribution bound ``C = 1`` and sensitivity ``factor·C``
    (``None`` when ``event`` is of another kind)."""
    de = _dp().dp_event
    for family in _DP_FAMILIES:
        kind = getattr(de, str(family.dp_event), None)  # DiscreteLaplaceDpEvent: from 0.4.x on, not 0.4.0
        if kind is None or not isinstance(event, kind):
            continue
        if family.cls is DiscreteLaplace:
            # dp_accounting's DLap(a) has P(x) ∝ e^{-a|x|} (dp_event.py): decay e^{-a}, scale exactly 1/a.
            _field(event, path, "noise_parameter", v.positive)
            c = _field(event, path, "sensitivity", v.integer, minimum=1)
            return AdditiveNoise(DiscreteLaplace(1 / exact_fraction(event.noise_parameter)), factor * c)
        # A continuous noise's event states its parameter over C (σ/C, b/C) as noise_multiplier.
        noise = family.rebuild({family.parameter: _noise_multiplier(event, path)})
        return AdditiveNoise(noise, factor)
    return None


def _nothing() -> Composed:
    return Composed(())


def _compose(items: list[OurEvent], path: str, event: object) -> Composed:
    try:
        return Composed(items)
    except ParameterTypeError as err:
        why = f"the Accountant's Composed cannot hold one of its members yet ({err})"
        raise _refuse(event, path, why) from None


def _repeat(ours: OurEvent, count: int, path: str, event: object) -> OurEvent:
    """``ours`` run ``count`` times (nested counts multiplied out; ``0`` times is nothing)."""
    if count == 0:
        return _nothing()
    if isinstance(ours, Composed):
        return _compose([_repeat(e, count, path, event) for e in ours.events], path, event)
    if isinstance(ours, Event):
        return Event(ours.mechanism, ours.count * count)
    try:
        return Event(ours, count)
    except ParameterTypeError as err:
        raise _refuse(
            event, path, f"the Accountant's Event cannot hold a {type(ours).__name__} yet ({err})"
        ) from None


def _sampled_mechanism(event: Any, path: str) -> AdditiveNoise:
    inner_path = f"{path}.event"
    inner = event.event
    if not _is_dp_event(inner):
        raise ParameterTypeError(inner_path, inner, f"a dp_accounting DpEvent ({type(event).__name__}.event)")
    mechanism = _mechanism(inner, inner_path, 1)  # the contribution bound, under both relations
    if mechanism is None:
        raise _refuse(
            inner,
            inner_path,
            f"the event inside a {type(event).__name__} must be a {_listed(_NOISE_EVENTS, 'or')}",
        )
    return mechanism


#: The events that sample, compose or repeat other events (converted by :func:`_from`).
_STRUCTURE_EVENTS = [
    "PoissonSampledDpEvent",
    "SampledWithoutReplacementDpEvent",
    "ComposedDpEvent",
    "SelfComposedDpEvent",
    "NoOpDpEvent",
]


def _from(event: object, path: str, relation: Neighbouring) -> OurEvent:
    dp = _dp()
    de = dp.dp_event
    if not isinstance(event, de.DpEvent):
        raise ParameterTypeError(path, event, "a dp_accounting DpEvent")
    factor = 2 if relation is Neighbouring.REPLACE_ONE else 1
    mechanism = _mechanism(event, path, factor)
    if mechanism is not None:
        return mechanism
    if isinstance(event, de.NoOpDpEvent):
        return _nothing()
    if isinstance(event, de.SelfComposedDpEvent):
        count = _field(event, path, "count", v.integer, minimum=0)
        return _repeat(_from(event.event, f"{path}.event", relation), count, path, event)
    if isinstance(event, de.ComposedDpEvent):
        events = event.events
        if isinstance(events, str | bytes) or not isinstance(events, list | tuple):
            raise ParameterTypeError(f"{path}.events", events, "a list of DpEvents (ComposedDpEvent.events)")
        members = [_from(e, f"{path}.events[{i}]", relation) for i, e in enumerate(events)]
        return _compose(members, path, event)
    if isinstance(event, de.PoissonSampledDpEvent):
        q = _field(event, path, "sampling_probability", v.real)
        if not 0 <= q <= 1:
            raise ParameterError(
                f"{path}.sampling_probability",
                event.sampling_probability,
                "a real number in [0, 1] (PoissonSampledDpEvent.sampling_probability)",
            )
        mechanism = _sampled_mechanism(event, path)
        if q == 0:
            return _nothing()  # no record is ever in the batch: the output ignores the data
        raw = event.sampling_probability
        exact = exact_fraction(raw)
        return PoissonSampled(mechanism, q if Fraction(q) == exact else exact)  # the rate as run
    if isinstance(event, de.SampledWithoutReplacementDpEvent):
        n = _field(event, path, "source_dataset_size", v.integer, minimum=1)
        m = _field(event, path, "sample_size", v.integer, minimum=0)
        if m > n:
            raise ParameterError(
                f"{path}.sample_size",
                event.sample_size,
                f"an integer in [0, source_dataset_size={n}] (SampledWithoutReplacementDpEvent.sample_size)",
            )
        mechanism = _sampled_mechanism(event, path)
        if m == 0:
            return _nothing()
        return SampledWithoutReplacement(mechanism, Fraction(m, n))
    if isinstance(event, de.NonPrivateDpEvent):
        raise _refuse(event, path, "a non-private release has no finite ε or δ < 1 to certify")
    if isinstance(event, de.UnsupportedDpEvent):
        raise _refuse(event, path, "an operation without a DP description cannot be accounted")
    raise _refuse(
        event,
        path,
        "dpcert converts " + _listed([*_NOISE_EVENTS, *_STRUCTURE_EVENTS], "and"),
    )


def from_dp_event(event: object, neighbouring: object = Neighbouring.ADD_REMOVE) -> OurEvent:
    """The event of :mod:`accounting` that ``event`` describes under ``neighbouring``.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        A Gaussian, Laplace, discrete Laplace, Poisson-sampled, sampled-without-replacement,
        composed, self-composed or no-op event (module docstring).
    neighbouring : Neighbouring, str or dp_accounting.NeighboringRelation
        The relation the ledger is accounted under (add-remove by default, as in
        ``dp_accounting``). The sensitivity of a top-level additive-noise event depends on it
        (``C`` or ``2C``), so the result must be composed into an
        :class:`~accounting.accountant.Accountant` with the same relation
        (:func:`to_accountant` does that).

    Returns
    -------
    Mechanism, Event, Composed, PoissonSampled or SampledWithoutReplacement
        ``Composed(())`` for an event that releases nothing.

    Raises
    ------
    MissingDependencyError
        Without ``dp_accounting``.
    UnsupportedEventError
        For ``NonPrivateDpEvent``, ``UnsupportedDpEvent``, a zero noise multiplier and every other
        kind, naming the class and where it sits (``event.events[2].event``).
    ParameterError, ParameterTypeError
        For a malformed field (a negative noise multiplier, a sampling probability above 1, ...),
        naming it.
    """
    _dp()
    return _from(event, "event", _relation(neighbouring))


# -- ours -> dp_accounting ------------------------------------------------------------------------


def _discrete_laplace_parameter(noise: DiscreteLaplace) -> float:
    """``a`` with ``e^{-a}`` at most the decay (less noise), as a float rounded up."""
    if noise.beta is not None:
        with precision(40):
            return float_up(upper(-iv.log(to_interval(noise.beta))))
    return _float_up(1 / exact_fraction(noise.scale))


def _mechanism_to(m: Mechanism, path: str, relation: Neighbouring | None) -> Any:
    """The ``DpEvent`` of an additive-noise mechanism; ``relation=None`` inside a sampled event
    (the sensitivity is then the contribution bound)."""
    de = _dp().dp_event
    if not isinstance(m, AdditiveNoise):
        raise UnsupportedEventError(
            f"{path}: {type(m).__name__} has no dp_accounting event (only AdditiveNoise with "
            f"{_listed(_NOISE_CLASSES, 'or')} noise, and sampled or composed groups of them)"
        )
    noise = m.noise
    family = _dp_family(noise)
    if family is None:
        raise UnsupportedEventError(
            f"{path}.noise: {type(noise).__name__} noise has no dp_accounting event "
            f"({_listed(_NOISE_CLASSES, 'and')} have)"
        )
    halve = relation is Neighbouring.REPLACE_ONE  # Δ = 2C under replace-one
    event = str(family.dp_event)
    if isinstance(noise, DiscreteLaplace):
        if not hasattr(de, event):
            raise UnsupportedEventError(f"{path}: this dp_accounting has no {event} (upgrade)")
        d = int(m.sensitivity)
        c = -(-d // 2) if halve else d  # an odd Δ under replace-one: C = ⌈Δ/2⌉, so 2C >= Δ
        return getattr(de, event)(noise_parameter=_discrete_laplace_parameter(noise), sensitivity=c)
    contribution = exact_fraction(m.sensitivity) / (2 if halve else 1)
    scale = getattr(noise, family.parameter)
    multiplier = _float_down(exact_fraction(scale) / contribution)  # less noise, never more
    return getattr(de, event)(noise_multiplier=multiplier)


def _dp_family(noise: object) -> NoiseFamily | None:
    """The family of ``noise`` if ``dp_accounting`` has an event for it (``None`` otherwise)."""
    return next((f for f in _DP_FAMILIES if isinstance(noise, f.cls)), None)


def _to(ours: object, path: str, relation: Neighbouring) -> Any:
    de = _dp().dp_event
    if isinstance(ours, Event):
        inner = _to(ours.mechanism, f"{path}.mechanism", relation)
        return de.SelfComposedDpEvent(event=inner, count=ours.count)
    if isinstance(ours, Composed):
        if not ours.events:
            return de.NoOpDpEvent()
        members = [_to(e, f"{path}.events[{i}]", relation) for i, e in enumerate(ours.events)]
        return de.ComposedDpEvent(events=members)
    if isinstance(ours, PoissonSampled):
        inner = _mechanism_to(ours.mechanism, f"{path}.mechanism", None)
        return de.PoissonSampledDpEvent(sampling_probability=_float_up(ours.q), event=inner)
    if isinstance(ours, SampledWithoutReplacement):
        inner = _mechanism_to(ours.mechanism, f"{path}.mechanism", None)
        q = ours.q
        return de.SampledWithoutReplacementDpEvent(
            source_dataset_size=q.denominator, sample_size=q.numerator, event=inner
        )
    if isinstance(ours, Mechanism):
        return _mechanism_to(ours, path, relation)
    raise ParameterTypeError(path, ours, _OURS)


def to_dp_event(event: OurEvent, neighbouring: object = Neighbouring.ADD_REMOVE) -> Any:
    """The ``dp_accounting`` event of an event of :mod:`accounting` under ``neighbouring``.

    The inverse of :func:`from_dp_event` up to rounding toward less noise: a noise multiplier
    ``σ/C`` is rounded down and a discrete Laplace parameter up (module docstring), a Poisson
    rate up; ``sample_size/source_dataset_size`` is the rate in lowest terms. Under replace-one a
    top-level mechanism's sensitivity ``Δ`` is ``2C``, so ``C = Δ/2`` (``⌈Δ/2⌉`` for an odd
    lattice sensitivity: a larger bound, never a smaller one). An empty :class:`Composed` becomes
    ``NoOpDpEvent``.

    Raises
    ------
    MissingDependencyError
        Without ``dp_accounting``.
    UnsupportedEventError
        For a mechanism ``dp_accounting`` has no event for (a distributed sum, a cited guarantee,
        lattice noise other than the discrete Laplace), naming where it sits.
    ParameterTypeError
        When ``event`` is not an event of :mod:`accounting`.
    """
    _dp()
    return _to(event, "event", _relation(neighbouring))


# -- into the Accountant --------------------------------------------------------------------------


def _ours(event: object, relation: Neighbouring) -> OurEvent:
    if isinstance(event, Mechanism | Event | Composed | PoissonSampled | SampledWithoutReplacement):
        return event
    if _is_dp_event(event):
        return _from(event, "event", relation)
    _dp()  # without dp_accounting, say so rather than "not an event"
    raise ParameterTypeError("event", event, "a dp_accounting DpEvent or " + _OURS)


def to_accountant(
    event: object, neighbouring: object = Neighbouring.ADD_REMOVE, dps: int = DEFAULT_DPS
) -> Accountant:
    """An :class:`~accounting.accountant.Accountant` under ``neighbouring`` holding ``event``.

    ``event`` is a ``dp_accounting`` ``DpEvent`` (converted by :func:`from_dp_event` for the same
    relation) or an event of :mod:`accounting`.

    Raises
    ------
    UnsupportedEventError
        When the event cannot be converted, or the Accountant cannot account it.
    """
    relation = _relation(neighbouring)
    ours = _ours(event, relation)
    accountant = Accountant(relation, dps)
    try:
        accountant.compose(ours)
    except ParameterTypeError as err:
        raise UnsupportedEventError(
            f"the Accountant does not accept {type(ours).__name__} events ({err})"
        ) from None
    return accountant


# -- the certificate ------------------------------------------------------------------------------

Quantity = Literal["epsilon", "delta"]


def _gap(theirs: float | str, ours: float) -> float | None:
    """``theirs - ours`` with its sign exact (``None`` when ``theirs`` is not a number)."""
    if isinstance(theirs, str):
        return None
    if theirs == ours:
        return 0.0
    if math.isinf(theirs) or math.isinf(ours):
        return theirs - ours
    return float(Fraction(theirs) - Fraction(ours))


@dataclass(frozen=True)
class Certificate:
    """A certified answer next to ``dp_accounting``'s float answers on the same ledger.

    Attributes
    ----------
    event : object
        The event as given (a ``DpEvent`` or an event of :mod:`accounting`).
    ours : OurEvent
        The event accounted (:func:`from_dp_event`).
    neighbouring : Neighbouring
        The relation of both accountings.
    quantity : {"epsilon", "delta"}
        ``"epsilon"`` for ``ε(δ)`` at ``target = δ``, ``"delta"`` for ``δ(ε)`` at ``target = ε``.
    target : float
        The given δ or ε.
    enclosure : Enclosure
        The certified answer; :attr:`certified` is its upper end rounded up.
    route : str
        The route of the :class:`~accounting.accountant.Accountant` that answered.
    dp_accounting_pld, dp_accounting_rdp : float or str
        ``dp_accounting``'s ``PLDAccountant`` (pessimistic estimate, its default) and
        ``RdpAccountant`` answers, or why there is none (``"not supported: ..."``).
    dp_accounting_version : str or None
        The ``dp_accounting`` version that answered (``None`` when not installed).
    """

    event: object
    ours: OurEvent
    neighbouring: Neighbouring
    quantity: Quantity
    target: float
    enclosure: Enclosure
    route: str
    dp_accounting_pld: float | str
    dp_accounting_rdp: float | str
    dp_accounting_version: str | None

    @property
    def certified(self) -> float:
        """The certified upper bound on the ε or δ (never optimistic)."""
        return self.enclosure.upper

    def _theirs(self) -> dict[str, float | str]:
        return {"pld": self.dp_accounting_pld, "rdp": self.dp_accounting_rdp}

    @property
    def optimistic(self) -> dict[str, bool | None]:
        """Whether ``dp_accounting``'s answer is *proved* optimistic: below the certified lower end.

        A negative gap alone proves nothing when the route's enclosure is wide (the RDP route's
        lower end is 0): the certified bound may be loose. ``None`` where there is no answer.
        """
        return {
            name: None if isinstance(value, str) else value < self.enclosure.lower
            for name, value in self._theirs().items()
        }

    @property
    def gaps(self) -> dict[str, float | None]:
        """``dp_accounting``'s answer minus :attr:`certified`, per accountant (``"pld"``, ``"rdp"``).

        Negative: ``dp_accounting`` claimed more privacy than dpcert certifies, so it was
        optimistic when the certified enclosure is tight (see :attr:`optimistic`, which checks
        against the lower end). ``None`` where it gave no answer.
        """
        return {name: _gap(value, self.certified) for name, value in self._theirs().items()}

    def __str__(self) -> str:
        symbol, other = ("ε", "δ") if self.quantity == "epsilon" else ("δ", "ε")
        head = f"{symbol}({other} = {self.target!r}), {self.neighbouring.value} neighbours"
        rows = [(f"dpcert, certified ({self.route})", repr(self.certified), "")]
        optimistic = self.optimistic
        for name, value in self._theirs().items():
            gap = _gap(value, self.certified)
            shown = value if isinstance(value, str) else repr(value)
            if len(shown) > 60:
                shown = shown[:57] + "..."
            note = "" if gap is None else f"{gap:+.3e}"
            if optimistic[name]:
                note += "  optimistic (below the certified lower end)"
            elif gap is not None and gap < 0:
                # Inside the enclosure: the truth may lie on either side of theirs, so the width
                # of our enclosure, not their answer, is what is uncertain.
                note += (
                    "  inside the certified enclosure (not proved optimistic; dpcert's upper end is looser)"
                )
            elif gap is not None and gap > 0:
                note += "  above the certified upper end (safe; theirs is looser)"
            rows.append((f"dp_accounting {name.upper()}", shown, note))
        width = max(len(r[0]) for r in rows)
        value_width = max(len(r[1]) for r in rows)
        lines = [head, f"{'':{width}}  {symbol:{value_width}}  gap (theirs - certified)"]
        lines += [f"{a:{width}}  {b:{value_width}}  {c}".rstrip() for a, b, c in rows]
        return "\n".join(lines)


def _version(dp: Any) -> str:
    try:
        return importlib.metadata.version("dp-accounting")
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(dp, "__version__", "unknown"))


def _their_answers(event: Any, relation: Neighbouring, quantity: Quantity, target: float) -> tuple[Any, Any]:
    dp = _dp()
    rel = _their_relation(relation)
    answers: list[float | str] = []
    for kind in (dp.pld.PLDAccountant, dp.rdp.RdpAccountant):
        try:
            accountant = kind(neighboring_relation=rel)
            accountant.compose(event)
            value = accountant.get_epsilon(target) if quantity == "epsilon" else accountant.get_delta(target)
            answers.append(float(value))
        except dp.UnsupportedEventError as err:
            answers.append(f"not supported: {err}")
        except Exception as err:  # their failure is reported, not raised
            answers.append(f"not supported ({type(err).__name__}: {err})")
    return answers[0], answers[1]


def certify(
    event: object,
    *,
    target_delta: float | None = None,
    target_epsilon: float | None = None,
    neighbouring: object = Neighbouring.ADD_REMOVE,
    route: str = "auto",
    dps: int = DEFAULT_DPS,
) -> Certificate:
    """Certify a ``dp_accounting`` ledger in one call, next to ``dp_accounting``'s own answers.

    Parameters
    ----------
    event : dp_accounting.DpEvent or an event of accounting
        The ledger (for example ``PrivacyAccountant.ledger``).
    target_delta, target_epsilon : float
        Exactly one: ``ε(δ)`` at ``target_delta`` in (0, 1), or ``δ(ε)`` at ``target_epsilon >= 0``.
    neighbouring : Neighbouring, str or dp_accounting.NeighboringRelation
        Add-remove by default, as ``dp_accounting``'s accountants.
    route : str
        The :class:`~accounting.accountant.Accountant` route (``"auto"``: the tightest certified).
    dps : int
        Working precision of the exact computations.

    Returns
    -------
    Certificate
        The certified enclosure and route, and ``dp_accounting``'s PLD and RDP answers on the same
        event with their gaps (``str(certificate)`` is a short table). Without ``dp_accounting``
        (an event of :mod:`accounting` given) their answers say so.

    Raises
    ------
    UnsupportedEventError, ParameterError, ParameterTypeError, MissingDependencyError
        As :func:`from_dp_event` and :func:`to_accountant`.
    """
    if (target_delta is None) == (target_epsilon is None):
        valid = f"exactly one of target_delta or target_epsilon (got {target_epsilon=})"
        raise ParameterError("target_delta", target_delta, valid)
    quantity: Quantity
    if target_delta is not None:
        quantity, target = "epsilon", v.open_unit("target_delta", target_delta)
    else:
        quantity, target = "delta", v.nonnegative("target_epsilon", target_epsilon)
    relation = _relation(neighbouring)
    ours = _ours(event, relation)
    accountant = to_accountant(ours, relation, dps)
    answer = accountant.epsilon(target, route) if quantity == "epsilon" else accountant.delta(target, route)

    version: str | None = None
    pld: float | str
    rdp: float | str
    try:
        dp = _dp()
    except MissingDependencyError:
        pld = rdp = f"dp_accounting not installed ({_INSTALL})"
    else:
        version = _version(dp)
        try:
            theirs = event if _is_dp_event(event) else _to(ours, "event", relation)
        except UnsupportedEventError as err:
            pld = rdp = f"not expressible as a dp_accounting event: {err}"
        else:
            pld, rdp = _their_answers(theirs, relation, quantity, target)
    return Certificate(
        event=event,
        ours=ours,
        neighbouring=relation,
        quantity=quantity,
        target=target,
        enclosure=answer,
        route=answer.route,
        dp_accounting_pld=pld,
        dp_accounting_rdp=rdp,
        dp_accounting_version=version,
    )
