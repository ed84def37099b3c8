"""The ledger as plain data: noise, mechanisms, events and whole ledgers to JSON-ready dicts and back.

The format (``dpcert-ledger/1``) is exact: parameters keep their value (a Fraction as ``"p/q"``), a
noise is ``{"type": <class name>, <its fields>}`` for every family of
:data:`accounting.noise.NOISE_FAMILIES`, and a ledger carries a ``sha256`` of the rest so an edited
ledger is refused. :meth:`Accountant.to_dict <accounting.accountant.Accountant.to_dict>` and
:meth:`~accounting.accountant.Accountant.from_dict` are built on :func:`ledger_to_dict`,
:func:`check_ledger` and :func:`ledger_entries`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import fields
from fractions import Fraction
from typing import Any

from accounting import validate as v
from accounting.accountant.events import EVENT_KINDS, Composed, Event, EventLike, Release
from accounting.errors import AccountingError, ParameterError, ParameterTypeError
from accounting.integrity import ledger_digest, sign
from accounting.mechanisms import AdditiveNoise, ApproxDP, DistributedSum, DistributedVectorSum, PureDP
from accounting.neighbouring import Neighbouring
from accounting.noise import NoiseDistribution, family_of, family_of_type
from accounting.subsampling import PoissonSampled, SampledWithoutReplacement

__all__ = [
    "LEDGER_FIELDS",
    "LEDGER_FORMAT",
    "check_ledger",
    "event_from_dict",
    "event_to_dict",
    "ledger_entries",
    "ledger_to_dict",
    "mechanism_from_dict",
    "mechanism_to_dict",
    "noise_from_dict",
    "noise_to_dict",
]

#: The format of a ledger's plain data.
LEDGER_FORMAT = "dpcert-ledger/1"
#: The fields of a ledger, in the order :func:`ledger_to_dict` writes them (``hmac`` only when
#: signed, :mod:`accounting.integrity`).
LEDGER_FIELDS = ("format", "neighbouring", "dps", "events", "sha256", "hmac")


def ledger_to_dict(
    neighbouring: Neighbouring, dps: int, events: Sequence[Event], key: bytes | None = None
) -> dict[str, Any]:
    """A ledger as plain data: relation, precision, events, the ``sha256`` of the rest and, with a
    ``key``, its signature (:func:`accounting.integrity.sign`)."""
    data: dict[str, Any] = {
        "format": LEDGER_FORMAT,
        "neighbouring": neighbouring.value,
        "dps": dps,
        "events": [{"count": e.count, "mechanism": mechanism_to_dict(e.mechanism)} for e in events],
    }
    data["sha256"] = ledger_digest(data)
    if key is not None:
        data = sign(data, key)
    return data


def check_ledger(data: object) -> dict[str, Any]:
    """``data`` if it is a ledger's plain data whose ``sha256`` (when given) matches its content.

    Raises
    ------
    ParameterError
        Naming the field: not an object, another format, an unknown field, a hash that does not
        match (the ledger was edited after it was written).
    """
    if not isinstance(data, dict):
        raise ParameterError("ledger", data, "a JSON object (dpcert-ledger/1)")
    if data.get("format") != LEDGER_FORMAT:
        raise ParameterError("format", data.get("format"), "'dpcert-ledger/1'")
    for key in data:
        if key not in LEDGER_FIELDS:
            valid = "no such field; a ledger has " + ", ".join(LEDGER_FIELDS)
            raise ParameterError(str(key), data[key], valid)
    if "sha256" in data:
        stated = data["sha256"]
        try:
            actual: str | None = ledger_digest(data)
        except (TypeError, ValueError, RecursionError):
            actual = None
        if stated != actual:
            raise ParameterError(
                "sha256",
                stated,
                "the hash of the ledger's content: the ledger was changed after it was written (an "
                "edited σ, ε or count?); write it again with Accountant.to_json, or delete the sha256 "
                "field to account it as it stands",
            )
    return data


def ledger_entries(data: dict[str, Any]) -> Iterator[tuple[Release, int]]:
    """The ``(release, count)`` entries of a checked ledger (:func:`check_ledger`), one at a time:
    each is validated when it is reached, so the caller composing them meets a ledger's errors in
    the order of its entries."""
    events = data.get("events")
    if not isinstance(events, list):
        raise ParameterError("events", events, "a list of {count, mechanism} objects")
    for i, item in enumerate(events):
        if not isinstance(item, dict) or set(item) != {"count", "mechanism"}:
            raise ParameterError(f"events[{i}]", item, "an object with exactly 'count' and 'mechanism'")
        count = v.count(f"events[{i}].count", item["count"])
        try:
            release = mechanism_from_dict(item["mechanism"])
        except RecursionError:
            raise ParameterError(
                f"events[{i}].mechanism", "...", "a mechanism nested a few levels deep, not thousands"
            ) from None
        except (KeyError, IndexError, AttributeError) as err:  # a malformed field deeper down
            raise ParameterError(
                f"events[{i}].mechanism", item["mechanism"], f"the fields of a mechanism ({err!r})"
            ) from None
        yield release, count


def _encode(value: object) -> object:
    """A parameter as JSON-ready data (a Fraction as ``{"fraction": "p/q"}``, exactly)."""
    if isinstance(value, Fraction):
        return {"fraction": f"{value.numerator}/{value.denominator}"}
    return value


def _decode(value: object) -> object:
    """Inverse of :func:`_encode`."""
    if isinstance(value, dict) and set(value) == {"fraction"}:
        try:
            return Fraction(str(value["fraction"]))
        except (ValueError, ZeroDivisionError):
            raise ParameterError("fraction", value["fraction"], "a fraction 'p/q'") from None
    return value


def noise_to_dict(noise: NoiseDistribution) -> dict[str, Any]:
    """A noise distribution as plain data (exact: Fractions as ``"p/q"``)."""
    family = family_of(noise)
    return {"type": family.type_name} | {
        family.stored_name(f.name): _encode(getattr(noise, f.name))
        for f in fields(noise)  # type: ignore[arg-type]
    }


def noise_from_dict(data: object) -> NoiseDistribution:
    """Inverse of :func:`noise_to_dict`."""
    if not isinstance(data, dict):
        raise ParameterError("noise", data, "an object with a 'type'")
    kind = data.get("type")
    family = family_of_type(kind)
    params: dict[str, Any] = {family.field_name(k): _decode(val) for k, val in data.items() if k != "type"}
    try:
        return family.rebuild(params)
    except (KeyError, TypeError) as err:
        if isinstance(err, AccountingError | ParameterTypeError):
            raise
        raise ParameterError("noise", data, f"the fields of {kind} ({err})") from None


def mechanism_to_dict(mechanism: Release) -> dict[str, Any]:
    """A mechanism, a cited guarantee or a sampled release as plain data."""
    if isinstance(mechanism, PoissonSampled | SampledWithoutReplacement):
        return {
            "type": type(mechanism).__name__,
            "rate": _encode(mechanism.rate),
            "mechanism": mechanism_to_dict(mechanism.mechanism),
        }
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
    if isinstance(mechanism, DistributedVectorSum):
        return {
            "type": "DistributedVectorSum",
            "share": noise_to_dict(mechanism.share),
            "users": mechanism.users,
            "dimension": mechanism.dimension,
            "l2": mechanism.l2,
            "l1": mechanism.l1,
        }
    if isinstance(mechanism, PureDP):
        return {
            "type": "PureDP",
            "epsilon": mechanism.eps,
            "source": mechanism.source,
            "neighbouring": mechanism.neighbouring.value,
        }
    if isinstance(mechanism, ApproxDP):
        return {
            "type": "ApproxDP",
            "epsilon": mechanism.eps,
            "delta": mechanism.dlt,
            "source": mechanism.source,
            "neighbouring": mechanism.neighbouring.value,
        }
    raise ParameterError("mechanism", mechanism, EVENT_KINDS)


_FIELDS = {
    "AdditiveNoise": {"type", "noise", "sensitivity"},
    "DistributedSum": {"type", "share", "users", "sensitivity"},
    "DistributedVectorSum": {"type", "share", "users", "dimension", "l2", "l1"},
    "PureDP": {"type", "epsilon", "source", "neighbouring"},
    "ApproxDP": {"type", "epsilon", "delta", "source", "neighbouring"},
    "PoissonSampled": {"type", "rate", "mechanism"},
    "SampledWithoutReplacement": {"type", "rate", "mechanism"},
}


def mechanism_from_dict(data: object) -> Release:
    """Inverse of :func:`mechanism_to_dict`."""
    if not isinstance(data, dict):
        raise ParameterError("mechanism", data, "an object with a 'type'")
    kind = data.get("type")
    if kind not in _FIELDS:
        raise ParameterError("type", kind, "one of " + ", ".join(repr(k) for k in _FIELDS))
    required = _FIELDS[kind] - {"neighbouring", "l1"}  # l1 of a vector sum is optional
    if not required <= set(data) or not set(data) <= _FIELDS[kind]:
        raise ParameterError("mechanism", data, f"the fields of {kind} ({', '.join(sorted(_FIELDS[kind]))})")
    relation = data.get("neighbouring", Neighbouring.REPLACE_ONE.value)
    if kind == "AdditiveNoise":
        return AdditiveNoise(noise_from_dict(data["noise"]), data["sensitivity"])
    if kind == "DistributedSum":
        return DistributedSum(noise_from_dict(data["share"]), data["users"], data["sensitivity"])
    if kind == "DistributedVectorSum":
        share = noise_from_dict(data["share"])
        return DistributedVectorSum(share, data["users"], data["dimension"], data["l2"], data.get("l1"))
    if kind == "PureDP":
        return PureDP(data["epsilon"], data["source"], relation)
    if kind in ("PoissonSampled", "SampledWithoutReplacement"):
        inner = mechanism_from_dict(data["mechanism"])
        if not isinstance(inner, AdditiveNoise | DistributedSum):
            raise ParameterError("mechanism", data["mechanism"], "an AdditiveNoise or DistributedSum")
        sampled = PoissonSampled if kind == "PoissonSampled" else SampledWithoutReplacement
        return sampled(inner, _decode(data["rate"]))  # type: ignore[arg-type]
    return ApproxDP(data["epsilon"], data["delta"], data["source"], relation)


def event_to_dict(event: EventLike) -> dict[str, Any]:
    """Any event as plain data: a mechanism, a self-composed :class:`Event`, a :class:`Composed` group."""
    if isinstance(event, Event):
        return {"type": "SelfComposed", "count": event.count, "event": mechanism_to_dict(event.mechanism)}
    if isinstance(event, Composed):
        return {"type": "Composed", "events": [event_to_dict(e) for e in event.events]}
    return mechanism_to_dict(event)


def event_from_dict(data: object, _depth: int = 0) -> EventLike:
    """Inverse of :func:`event_to_dict`."""
    if _depth > 64:
        raise ParameterError("events", "...", "at most 64 levels of nested Composed events")
    if isinstance(data, dict) and data.get("type") == "SelfComposed":
        if set(data) != {"type", "count", "event"}:
            raise ParameterError("event", data, "the fields of SelfComposed (count, event)")
        return Event(mechanism_from_dict(data["event"]), data["count"])
    if isinstance(data, dict) and data.get("type") == "Composed":
        items = data.get("events")
        if set(data) != {"type", "events"} or not isinstance(items, list):
            raise ParameterError("event", data, "the fields of Composed (events: a list)")
        return Composed(event_from_dict(e, _depth + 1) for e in items)
    return mechanism_from_dict(data)
