"""Events: what happened, as the :class:`~accounting.accountant.Accountant` takes it.

A release (a mechanism, a cited guarantee, a release on a sampled batch), an :class:`Event` (a
release self-composed ``count`` times) or a :class:`Composed` group, following ``dp_accounting``'s
``DpEvent`` split; :func:`flatten` turns any of them into the ledger's entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from accounting import validate as v
from accounting.errors import ParameterTypeError
from accounting.mechanisms import AddRemoveSum, Mechanism
from accounting.subsampling import PoissonSampled, SampledWithoutReplacement

__all__ = [
    "EVENT_KINDS",
    "Composed",
    "Event",
    "EventLike",
    "Release",
    "SelfComposed",
    "flatten",
    "is_release",
]

#: What an event may be (the ``valid`` of the errors refusing anything else).
EVENT_KINDS = (
    "an AdditiveNoise, DistributedSum, DistributedVectorSum, PureDP, ApproxDP, PoissonSampled, "
    "SampledWithoutReplacement, "
    "Event or Composed"
)

Release = Mechanism | PoissonSampled | SampledWithoutReplacement
"""What one ledger entry runs: a mechanism, a cited guarantee, or a release on a sampled batch."""


def is_release(x: object) -> bool:
    """Whether ``x`` can be one ledger entry: a mechanism, a cited guarantee or a sampled release
    (not a distributed sum's add-remove view, which only the Accountant makes)."""
    return isinstance(x, Mechanism | PoissonSampled | SampledWithoutReplacement) and not isinstance(
        x, AddRemoveSum
    )


@dataclass(frozen=True)
class Event:
    """A mechanism applied ``count`` times, adaptively (``dp_accounting``'s ``SelfComposedDpEvent``)."""

    mechanism: Release
    count: int = 1

    def __post_init__(self) -> None:
        if not is_release(self.mechanism):
            raise ParameterTypeError("mechanism", self.mechanism, EVENT_KINDS)
        object.__setattr__(self, "count", v.integer("count", self.count, minimum=1))


SelfComposed = Event


@dataclass(frozen=True, init=False)
class Composed:
    """Events run one after another, adaptively (``dp_accounting``'s ``ComposedDpEvent``)."""

    events: tuple[Release | Event | Composed, ...]

    def __init__(self, events: Iterable[Release | Event | Composed]) -> None:
        items = tuple(events)
        for i, e in enumerate(items):
            if not (is_release(e) or isinstance(e, Event | Composed)):
                raise ParameterTypeError(f"events[{i}]", e, EVENT_KINDS)
        object.__setattr__(self, "events", items)


EventLike = Release | Event | Composed


def flatten(event: object, count: int = 1) -> list[Event]:
    """The ledger entries of ``event`` run ``count`` times (a :class:`Composed` group repeated
    ``count`` times is its members each ``count`` times more: the order of adaptive composition
    does not change any route's answer)."""
    k = v.integer("count", count, minimum=1)
    if isinstance(event, Event):
        return [Event(event.mechanism, event.count * k)]
    if isinstance(event, Composed):
        return [Event(e.mechanism, e.count * k) for item in event.events for e in flatten(item)]
    if is_release(event):
        return [Event(event, k)]  # type: ignore[arg-type]
    raise ParameterTypeError("event", event, EVENT_KINDS)
