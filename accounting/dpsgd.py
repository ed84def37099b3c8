"""DP-SGD and federated training with client sampling: the questions their users ask, certified.

A training run clips each record's gradient (or each client's update) to norm ``C``, sums a batch
drawn by Poisson sampling at rate ``q`` (each record independently; fixed-size batches without
replacement with ``sampling="fixed"``) and adds Gaussian noise of standard deviation ``σC``: the
*noise multiplier* is ``σ``. Each step is a :class:`~accounting.subsampling.PoissonSampled`
Gaussian mechanism whose contribution bound is 1 (Abadi et al. 2016, "Deep Learning with
Differential Privacy", Algorithm 1), and a run is a ledger of such steps; a run whose ``q``, ``σ``
or batch size changes across phases is a ledger of :class:`Phase` s. Every answer is an
:class:`~accounting.certified.Enclosure` from the :class:`~accounting.accountant.Accountant`.

The relation defaults to **add-remove** here (one record more or fewer), what Opacus and
``dp_accounting`` mean; ``neighbouring="replace-one"`` is one keyword away (the Accountant's own
default, the relation of the bandit papers). Inside a sampled step the sensitivity is the
contribution bound under both relations, as in ``dp_accounting`` (:mod:`accounting.interop`).

The same questions elsewhere (Opacus ``opacus.accountants``; Google ``dp_accounting``):

* :func:`epsilon` ``(σ, q, steps, δ)`` — Opacus: an ``RDPAccountant`` (or ``PRVAccountant``) with
  ``history = [(σ, q, steps)]``, then ``get_epsilon(δ)``; dp_accounting:
  ``PLDAccountant().compose(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), steps).get_epsilon(δ)``.
* :func:`noise_multiplier` ``(ε, δ, q, steps)`` — Opacus: ``get_noise_multiplier(target_epsilon=ε,
  target_delta=δ, sample_rate=q, steps=steps)``; dp_accounting: ``calibrate_dp_mechanism``.
* :func:`epsilon_curve` ``(σ, q, [s1, s2, ...], δ)`` — ``get_epsilon`` after each step count.
* :func:`schedule_epsilon` ``([Phase(q, σ, steps), ...], δ)`` — several Opacus ``history``
  entries; a dp_accounting ``ComposedDpEvent`` of the phases.
* :func:`certify_opacus` ``(accountant, δ)`` — certifies an Opacus accountant's ``history`` and
  says which side its ``get_epsilon(δ)`` is on (:func:`accounting.interop.certify` for
  dp_accounting's events).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from accounting import validate as v
from accounting.accountant import Accountant, EventLike
from accounting.calibration import Calibration, calibrate
from accounting.certified import DEFAULT_DPS, Enclosure
from accounting.errors import ParameterError, ParameterTypeError
from accounting.mechanisms import AdditiveNoise
from accounting.noise import Gaussian
from accounting.subsampling import SAMPLINGS, sampled

__all__ = [
    "OpacusCertificate",
    "Phase",
    "certify_opacus",
    "epsilon",
    "epsilon_curve",
    "ledger",
    "noise_multiplier",
    "opacus_schedule",
    "schedule_epsilon",
]

#: The relation of these functions unless told otherwise: Opacus's and ``dp_accounting``'s.
DEFAULT_RELATION = "add-remove"


@dataclass(frozen=True)
class Phase:
    """``steps`` training steps at sample rate ``q`` with noise multiplier ``σ``.

    Parameters
    ----------
    sample_rate : float
        ``q ∈ (0, 1]``: a record's probability of entering a batch (Poisson), or the batch size over
        the data set's (fixed-size batches).
    noise_multiplier : float
        ``σ > 0``: the noise's standard deviation over the clipping norm.
    steps : int
        ``>= 0`` steps (a phase of 0 steps adds nothing).
    """

    sample_rate: float
    noise_multiplier: float
    steps: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "sample_rate", v.interval("sample_rate", self.sample_rate, 0.0, 1.0))
        object.__setattr__(self, "noise_multiplier", v.positive("noise_multiplier", self.noise_multiplier))
        object.__setattr__(self, "steps", v.count("steps", self.steps, minimum=0))

    def event(self, sampling: str = "poisson") -> EventLike:
        """One step: the Gaussian mechanism (contribution bound 1) on a sampled batch."""
        return sampled(AdditiveNoise(Gaussian(self.noise_multiplier), 1), self.sample_rate, sampling)


def _phases(items: object, name: str = "schedule", opacus: bool = False) -> list[Phase]:
    """Phases from :class:`Phase` s or triples named ``name[i]`` in errors: ``(sample_rate,
    noise_multiplier, steps)``, or with ``opacus`` Opacus's ``(noise_multiplier, sample_rate, steps)``."""
    triple = "(noise_multiplier, sample_rate, steps)" if opacus else "(sample_rate, noise_multiplier, steps)"
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise ParameterTypeError(name, items, f"a sequence of {triple} triples")
    phases: list[Phase] = []
    for i, item in enumerate(items):
        if isinstance(item, Phase) and not opacus:
            phases.append(item)
            continue
        if isinstance(item, str | bytes) or not isinstance(item, Sequence) or len(item) != 3:
            raise ParameterTypeError(f"{name}[{i}]", item, f"a {triple} triple")
        first, second, count = item
        try:
            phases.append(Phase(second, first, count) if opacus else Phase(first, second, count))
        except (ParameterError, ParameterTypeError) as err:
            raise type(err)(f"{name}[{i}].{err.name}", err.value, err.valid) from None
    if not any(p.steps for p in phases):
        raise ParameterError(name, items, "at least one entry with steps >= 1")
    return phases


def ledger(
    schedule: object,
    *,
    neighbouring: str = DEFAULT_RELATION,
    sampling: str = "poisson",
    dps: int = DEFAULT_DPS,
) -> Accountant:
    """The ledger of a training run: each phase's steps composed in order (one Accountant)."""
    how = v.choice("sampling", sampling, SAMPLINGS)
    acc = Accountant(neighbouring, dps)
    for phase in _phases(schedule):
        if phase.steps:
            acc.compose(phase.event(how), phase.steps)
    return acc


def schedule_epsilon(
    schedule: object,
    delta: float,
    *,
    neighbouring: str = DEFAULT_RELATION,
    sampling: str = "poisson",
    route: str = "auto",
    dps: int = DEFAULT_DPS,
) -> Enclosure:
    """The certified ε at ``delta`` of a run of phases (:func:`ledger`)."""
    return ledger(schedule, neighbouring=neighbouring, sampling=sampling, dps=dps).epsilon(delta, route)


def epsilon(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    delta: float,
    *,
    neighbouring: str = DEFAULT_RELATION,
    sampling: str = "poisson",
    route: str = "auto",
    dps: int = DEFAULT_DPS,
) -> Enclosure:
    """The certified ε at ``delta`` after ``steps`` steps (Opacus's ``get_epsilon``)."""
    phase = Phase(sample_rate, noise_multiplier, steps)
    return schedule_epsilon(
        [phase], delta, neighbouring=neighbouring, sampling=sampling, route=route, dps=dps
    )


def epsilon_curve(
    noise_multiplier: float,
    sample_rate: float,
    steps: Sequence[int],
    delta: float,
    *,
    neighbouring: str = DEFAULT_RELATION,
    sampling: str = "poisson",
    route: str = "auto",
    dps: int = DEFAULT_DPS,
) -> list[tuple[int, Enclosure]]:
    """The certified ε at ``delta`` after each number of ``steps`` (a training curve), in order."""
    if isinstance(steps, str | bytes) or not isinstance(steps, Sequence) or not steps:
        raise ParameterTypeError("steps", steps, "a nonempty sequence of step counts")
    counts = [v.count(f"steps[{i}]", s) for i, s in enumerate(steps)]
    return [
        (
            s,
            epsilon(
                noise_multiplier,
                sample_rate,
                s,
                delta,
                neighbouring=neighbouring,
                sampling=sampling,
                route=route,
                dps=dps,
            ),
        )
        for s in counts
    ]


def noise_multiplier(
    target_epsilon: float,
    delta: float,
    sample_rate: float,
    steps: int,
    *,
    neighbouring: str = DEFAULT_RELATION,
    sampling: str = "poisson",
    route: str = "auto",
    rtol: float = 1e-6,
    max_evaluations: int | None = None,
    dps: int = DEFAULT_DPS,
) -> Calibration:
    """The least noise multiplier whose run meets ``(target_epsilon, delta)``, certified and rounded
    toward more noise (Opacus's ``get_noise_multiplier``): ``.value`` is ``σ``, ``.epsilon`` the
    certified ε it achieves (:func:`accounting.calibration.calibrate`)."""
    v.interval("sample_rate", sample_rate, 0.0, 1.0)
    return calibrate(
        "gaussian",
        target_epsilon,
        delta,
        compositions=v.count("steps", steps),
        route=route,
        dps=dps,
        rtol=rtol,
        neighbouring=neighbouring,
        max_evaluations=max_evaluations,
        sampling_rate=sample_rate,
        sampling=sampling,
    )


def opacus_schedule(history: object) -> list[Phase]:
    """The phases of an Opacus accountant's ``history``: ``(noise_multiplier, sample_rate, steps)``
    entries (Opacus's order, which differs from :class:`Phase`'s)."""
    return _phases(history, "history", opacus=True)


@dataclass(frozen=True)
class OpacusCertificate:
    """An Opacus run's ε, certified, beside the float answer its accountant gave.

    Attributes
    ----------
    certified : Enclosure
        The certified ε at ``delta`` (the truth lies in it).
    theirs : float or None
        The accountant's own ``get_epsilon(delta)`` (``None`` when only a history was given).
    delta : float
    verdict : str
        Which side is loose: ``"optimistic"`` (theirs is below the certified lower end: it claims
        more privacy than the run has), ``"loose"`` (above the certified upper end: safe, but
        more ε than needed), or ``"within"`` (inside the enclosure).
    """

    certified: Enclosure
    theirs: float | None
    delta: float
    verdict: str | None

    def __str__(self) -> str:
        line = f"certified epsilon({self.delta:g}) in [{self.certified.lower!r}, {self.certified.upper!r}]"
        if self.theirs is None:
            return line
        over = self.theirs - self.certified.upper
        side = {
            "optimistic": "below the certified lower end: optimistic, more privacy than the run has",
            "loose": f"above the certified upper end by {over:.3g}: safe, but looser",
            "within": "inside the certified enclosure",
        }[str(self.verdict)]
        return f"{line}; Opacus says {self.theirs!r}, {side}"


def certify_opacus(
    accountant_or_history: Any,
    delta: float,
    *,
    opacus_epsilon: float | None = None,
    neighbouring: str = DEFAULT_RELATION,
    route: str = "auto",
    dps: int = DEFAULT_DPS,
) -> OpacusCertificate:
    """Certify an Opacus accountant's run (its ``history``; Poisson sampling, as Opacus samples) and
    say how far its own ``get_epsilon(delta)`` was from the certified ε. A bare history (a list of
    ``(noise_multiplier, sample_rate, steps)``) is certified alone, or beside ``opacus_epsilon``,
    the ε Opacus printed for it. Opacus itself is not needed."""
    d = v.open_unit("delta", delta)
    history = getattr(accountant_or_history, "history", accountant_or_history)
    certified = schedule_epsilon(opacus_schedule(history), d, neighbouring=neighbouring, route=route, dps=dps)
    theirs: float | None = None
    verdict: str | None = None
    if opacus_epsilon is not None:
        theirs = v.nonnegative_or_inf("opacus_epsilon", opacus_epsilon)
    elif hasattr(accountant_or_history, "get_epsilon"):
        theirs = float(accountant_or_history.get_epsilon(d))
    if theirs is not None:
        if not math.isfinite(theirs) or theirs > certified.upper:
            verdict = "loose"
        elif theirs < certified.lower:
            verdict = "optimistic"
        else:
            verdict = "within"
    return OpacusCertificate(certified, theirs, d, verdict)
