"""What an audit reports: :class:`AuditResult`, its counts, and the plug-in privacy-loss diagnostic."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

__all__ = ["AuditResult", "EventCounts", "PluginPLD", "Verdict", "plug_in_pld"]

Verdict = Literal["consistent", "violation", "no claim"]


@dataclass(frozen=True)
class EventCounts:
    """The estimation-half counts behind ``ε_lb``: ``first`` hits of ``S`` on the side bounded below."""

    first: int
    second: int
    trials: int


@dataclass(frozen=True)
class PluginPLD:
    """The plug-in privacy-loss distribution of an integer statistic (histogram ratios).

    A diagnostic only: no confidence statement, and biased upwards in sparse tails.
    ``loss(x) = ln(P_D(x) / P_D'(x))`` on bins seen on both sides (all samples, both halves).
    A bin is one integer, or a range of them when the statistic spans more than ``max_bins``;
    the two end bins also hold everything beyond the range fixed by the pilot.

    Attributes
    ----------
    support : int
        Bins seen on either side.
    shared : int
        Bins seen on both sides (where the loss is finite).
    min_count : int
        Bins with at least this many samples on both sides count as well sampled.
    max_abs_loss : float
        ``max |loss(x)|`` over well-sampled bins (0 if none).
    mean_loss : float
        Plug-in ``KL(P_D || P_D')`` over shared bins (the mean of the PLD).
    mean_loss_reverse : float
        Plug-in ``KL(P_D' || P_D)``.
    mass_first_only, mass_second_only : float
        Fraction of the samples on ``D`` (resp. ``D'``) in bins never seen on the other
        side: evidence of an infinite privacy loss when large.
    delta_at_claimed : float or None
        Plug-in hockey-stick divergence ``max over both orders of Σ max(0, p - e^ε q)`` at
        the claimed ε (None without a claim).
    """

    support: int
    shared: int
    min_count: int
    max_abs_loss: float
    mean_loss: float
    mean_loss_reverse: float
    mass_first_only: float
    mass_second_only: float
    delta_at_claimed: float | None


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    epsilon_lower : float
        ``ε_lb``: with probability at least ``confidence``, the mechanism is not
        ``(ε, delta)``-DP for any ``ε < ε_lb``.
    delta, confidence : float
        As given.
    claimed_epsilon : float or None
        The claim checked, if any.
    verdict : str
        ``"consistent"`` (``ε_lb <= claimed``), ``"violation"``, or ``"no claim"``.
    evidence : float or None
        The largest confidence level at which ``ε_lb`` still exceeds the claim
        (``1 - evidence`` is a p-value of "the claim holds"); ``>= confidence`` exactly for a
        violation. None without a claim.
    event : str
        The distinguishing event ``S``, chosen on the selection half.
    direction : str
        ``"D/D'"`` when ``P[M(D) ∈ S]`` was bounded below and ``P[M(D') ∈ S]`` above,
        ``"D'/D"`` for the reverse.
    counts : EventCounts
        Estimation-half counts of ``S`` (numerator side first).
    samples : int
        Samples per side (selection plus estimation; the pilot is extra).
    selection_samples, estimation_samples, pilot_samples : int
        Per side.
    chunks : int
        Number of chunks (tasks).
    bins : int
        Bins of the statistic's histogram.
    statistic : str
        The statistic ``T`` the events are sets of.
    seed : int
        The root entropy: ``audit(..., seed=result.seed)`` reproduces the result.
    seconds : float
        Wall-clock time.
    scheduler : str
        ``"local"`` or the Dask scheduler's address.
    plug_in_pld : PluginPLD or None
        For integer statistics.
    """

    epsilon_lower: float
    delta: float
    confidence: float
    claimed_epsilon: float | None
    verdict: Verdict
    evidence: float | None
    event: str
    direction: str
    counts: EventCounts
    samples: int
    selection_samples: int
    estimation_samples: int
    pilot_samples: int
    chunks: int
    bins: int
    statistic: str
    seed: int
    seconds: float
    scheduler: str
    plug_in_pld: PluginPLD | None

    @property
    def violation(self) -> bool:
        """Whether the claim is refuted at the stated confidence."""
        return self.verdict == "violation"

    def summary(self) -> str:
        """A few human-readable lines."""
        claim = ""
        if self.claimed_epsilon is not None:
            claim = f" (claimed {self.claimed_epsilon:.6g}: "
            if self.violation:
                claim += f"VIOLATION, evidence {self.evidence:.6g})"
            else:
                claim += "consistent)"
        c = self.counts
        lines = [
            f"ε >= {self.epsilon_lower:.6g} at δ = {self.delta:g}, confidence {self.confidence:.0%}{claim}",
            f"event: {self.event} [{self.direction}], hits {c.first} vs {c.second} of {c.trials} per side",
            f"samples: {self.samples} per side ({self.selection_samples} selection, "
            f"{self.estimation_samples} estimation, pilot {self.pilot_samples}), {self.chunks} chunk(s) "
            f"on {self.scheduler}, {self.seconds:.2f} s",
        ]
        pld = self.plug_in_pld
        if pld is not None:
            lines.append(
                f"plug-in PLD: mean loss {pld.mean_loss:.4g}, max |loss| {pld.max_abs_loss:.4g} "
                f"(bins with >= {pld.min_count} per side), mass seen on one side only "
                f"{pld.mass_first_only:.3g} (D) / {pld.mass_second_only:.3g} (D')"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable dictionary of every field (``seed`` as a decimal string)."""
        out = asdict(self)
        out["seed"] = str(self.seed)  # SeedSequence entropy exceeds JSON's safe integers
        return out


def plug_in_pld(
    a: NDArray[np.int64], b: NDArray[np.int64], claimed: float | None, min_count: int
) -> PluginPLD:
    """The :class:`PluginPLD` of an integer statistic's histograms ``a`` (on ``D``) and ``b`` (on ``D'``)."""
    na, nb = int(a.sum()), int(b.sum())
    p, q = a / na, b / nb
    both = (a > 0) & (b > 0)
    loss = np.log(p[both] / q[both])
    well = (a[both] >= min_count) & (b[both] >= min_count)
    delta_at: float | None = None
    if claimed is not None:
        with np.errstate(over="ignore"):
            factor = math.exp(claimed) if claimed < 700 else math.inf
            # where y = 0 the term is x itself (inf * 0 would make it NaN for an infinite claim)
            hockey = [
                float(np.maximum(0.0, np.where(y > 0, x - factor * y, x)).sum()) for x, y in ((p, q), (q, p))
            ]
        delta_at = max(hockey)
    return PluginPLD(
        support=int(((a > 0) | (b > 0)).sum()),
        shared=int(both.sum()),
        min_count=min_count,
        max_abs_loss=float(np.abs(loss[well]).max()) if well.any() else 0.0,
        mean_loss=float((p[both] * loss).sum()),
        mean_loss_reverse=float((q[both] * -loss).sum()),
        mass_first_only=float(p[(a > 0) & (b == 0)].sum()),
        mass_second_only=float(q[(b > 0) & (a == 0)].sum()),
        delta_at_claimed=delta_at,
    )
