"""The auditor: :func:`audit`, and its steps (validation, the pilot, counting, the report).

The method is described in :mod:`verification.audit`. The steps draw from the random streams in a
fixed order: the root :class:`numpy.random.SeedSequence` spawns the pilot's stream first, then one
per chunk, so a seed reproduces the report whether the chunks run here or on Dask.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from verification.audit._binning import Binning, IntegerBins, edge_bins, integer_bins
from verification.audit._chunks import (
    Histograms,
    Job,
    checked_outputs,
    chunk_sizes,
    connection,
    reduce_to_scalars,
    run_dask,
    run_local,
)
from verification.audit._selection import select_event
from verification.audit.bounds import checked_delta, epsilon_lower_bound, evidence
from verification.audit.pairs import SamplePair, Statistic, fit_discriminant, identity, statistic_name
from verification.audit.results import AuditResult, EventCounts, Verdict, plug_in_pld
from verification.errors import ParameterError, ParameterTypeError, VerificationError

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["audit", "planned_draws", "within_draws"]

#: The default pilot of :func:`audit` (samples per side).
PILOT = 65_536


def planned_draws(samples: int, pilot: int = PILOT) -> int:
    """The outputs an audit of ``samples`` per side draws in all: both sides, the pilot included."""
    return 2 * (samples + pilot)


def within_draws(
    draws: int, max_draws: int | None, what: str, name: str = "samples", value: object = None
) -> None:
    """Refuse, before any draw, work of ``draws`` outputs over the budget ``max_draws`` (``None``:
    no budget); ``what`` says how ``draws`` was counted, the error names ``name``.

    Raises
    ------
    ParameterError
        With the estimate, the budget and how to raise it.
    """
    if max_draws is not None and draws > max_draws:
        raise ParameterError(
            name,
            value,
            f"at most max_draws = {max_draws:,} outputs drawn in all (this one draws {draws:,}: "
            f"{what}): fewer samples, or raise max_draws (--max-draws)",
        )


def audit(
    sample_pair: SamplePair,
    delta: float = 0.0,
    claimed_epsilon: float | None = None,
    *,
    samples: int = 1_000_000,
    confidence: float = 0.95,
    chunk: int = 1_000_000,
    seed: int | np.random.SeedSequence | None = None,
    statistic: Statistic | None = None,
    scheduler: str | Client | None = None,
    selection_fraction: float = 0.5,
    pilot: int = PILOT,
    ratio_sets: bool = True,
    max_bins: int = 65_536,
    float_bins: int = 1_024,
    min_count: int = 100,
    max_draws: int | None = None,
) -> AuditResult:
    """Audit a mechanism from samples: a lower bound on ε at ``delta``, with ``confidence``.

    See :mod:`verification.audit` for the method (event selection on the first part of every
    chunk, Clopper–Pearson bounds on the rest; Jagielski, Ullman & Oprea 2020).

    Parameters
    ----------
    sample_pair : callable
        ``sample_pair(rng, size) -> (outputs on D, outputs on D')``: ``size`` independent
        outputs on each of two neighbouring inputs, arrays of shape ``(size,)`` or
        ``(size, d)``. Use only ``rng`` for randomness. For ``scheduler`` it must pickle.
    delta : float
        The ``δ`` of the claim, in ``[0, 1)``.
    claimed_epsilon : float or None
        The ε the mechanism claims at ``delta`` (``>= 0``, may be ``inf``).
    samples : int
        Samples per side (selection and estimation together), ``>= 100``.
    confidence : float
        The probability, over the auditor's randomness, that ``ε_lb`` is a true lower bound.
    chunk : int
        Samples per side drawn at once; memory is proportional to it.
    seed : int, SeedSequence or None
        Root of the :class:`numpy.random.SeedSequence` whose spawned children seed the
        pilot and each chunk. None draws fresh entropy (reported as ``result.seed``).
    statistic : callable or None
        Maps outputs ``(size,)``/``(size, d)`` to scalars ``(size,)``; integer results are
        binned exactly, real ones by quantiles of the pilot. Default: the identity for
        scalar outputs, and for vector outputs Fisher's linear discriminant fitted on the
        pilot (see :class:`Projection`, :class:`CoordinateDifference` for fixed choices).
    scheduler : None, str or distributed.Client
        None runs the chunks here; a Dask scheduler address or client runs them as tasks.
    selection_fraction : float
        The part of each chunk used to choose the event, in ``(0, 1)``.
    pilot : int
        Extra samples per side, drawn first and never used for the bound, that fix the
        binning (and the default vector statistic).
    ratio_sets : bool
        Also consider the sets of bins with the largest empirical likelihood ratio.
    max_bins : int
        The most bins for an integer statistic (wider ranges are binned in equal widths).
    float_bins : int
        Quantile bins for a real statistic.
    min_count : int
        Per-bin count for the plug-in PLD's ``max_abs_loss``.
    max_draws : int or None
        A budget: an audit that would draw more outputs in all (:func:`planned_draws`) is refused
        before it draws any (``None``: no budget).

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> from accounting import DiscreteLaplace
    >>> from verification.audit import additive_pair
    >>> r = audit(additive_pair(DiscreteLaplace(10)), claimed_epsilon=0.1, samples=10**5, seed=1)
    >>> r.verdict
    'consistent'
    """
    started = time.perf_counter()
    d, claim = _claim(sample_pair, delta, claimed_epsilon)
    plan = _plan(samples, confidence, chunk, selection_fraction, pilot, max_bins, float_bins, min_count)
    _within(plan, max_draws)
    root, entropy = _root(statistic, seed)
    with connection(scheduler) as (client, where):
        sizes = chunk_sizes(plan.samples, plan.chunk)
        pilot_seed, *chunk_seeds = root.spawn(1 + len(sizes))
        # The pilot fixes the statistic (for vectors) and the binning; it is not used again.
        statistic, t_pilot, binning = _pilot(sample_pair, pilot_seed, statistic, plan)
        job = Job(sample_pair, statistic, binning, plan.selection_fraction)
        runs = (
            run_local(job, chunk_seeds, sizes)
            if client is None
            else run_dask(job, chunk_seeds, sizes, client)
        )
        totals = _add_up(runs, binning.bins)
    pilot_values = t_pilot if ratio_sets else None
    counted = _Counted(totals, binning, statistic, pilot_values, len(sizes), where, entropy)
    return _report(d, claim, plan, counted, started)


# ---------------------------------------------------------------------------------------
# The steps of the audit
# ---------------------------------------------------------------------------------------


def _claim(sample_pair: object, delta: object, claimed_epsilon: object) -> tuple[float, float | None]:
    """The sample pair checked, and the claim ``(δ, ε or None)`` validated."""
    if not callable(sample_pair):
        raise ParameterTypeError("sample_pair", sample_pair, "a callable sample_pair(rng, size)")
    d = checked_delta(delta)
    claim: float | None = None
    if claimed_epsilon is not None:
        if isinstance(claimed_epsilon, bool) or not isinstance(claimed_epsilon, numbers.Real | mpmath.mpf):
            raise ParameterTypeError("claimed_epsilon", claimed_epsilon, "a real number >= 0, inf, or None")
        claim = float(claimed_epsilon)
        if math.isnan(claim) or claim < 0:
            raise ParameterError("claimed_epsilon", claimed_epsilon, "a real number >= 0, inf, or None")
    return d, claim


@dataclass(frozen=True)
class _Plan:
    """The sampling plan of an audit: :func:`audit`'s arguments, validated."""

    samples: int
    confidence: float
    chunk: int
    selection_fraction: float
    pilot: int
    max_bins: int
    float_bins: int
    min_count: int


def _plan(
    samples: object,
    confidence: object,
    chunk: object,
    selection_fraction: object,
    pilot: object,
    max_bins: object,
    float_bins: object,
    min_count: object,
) -> _Plan:
    """The sampling plan, each argument validated in the order of :func:`audit`'s signature."""
    n_samples = v.integer("samples", samples, minimum=100)
    level = v.open_unit("confidence", confidence)
    chunk_size = v.integer("chunk", chunk, minimum=10)
    fraction = v.open_unit("selection_fraction", selection_fraction)
    n_pilot = v.integer("pilot", pilot, minimum=100)
    n_max_bins = v.integer("max_bins", max_bins, minimum=2)
    n_float_bins = v.integer("float_bins", float_bins, minimum=2)
    n_min_count = v.integer("min_count", min_count, minimum=1)
    return _Plan(n_samples, level, chunk_size, fraction, n_pilot, n_max_bins, n_float_bins, n_min_count)


def _within(plan: _Plan, max_draws: object) -> None:
    """Refuse a plan that draws more than ``max_draws`` (:func:`within_draws`)."""
    if max_draws is not None:
        max_draws = v.integer("max_draws", max_draws, minimum=1)
    within_draws(
        planned_draws(plan.samples, plan.pilot),
        max_draws,
        f"2 sides x ({plan.samples} samples + {plan.pilot} pilot)",
        value=plan.samples,
    )


def _root(statistic: object, seed: object) -> tuple[np.random.SeedSequence, int]:
    """The statistic checked, and the root of the audit's random streams with its (integer) entropy."""
    if statistic is not None and not callable(statistic):
        raise ParameterTypeError("statistic", statistic, "a callable statistic(outputs) or None")
    if seed is not None and not isinstance(seed, np.random.SeedSequence):
        seed = v.integer("seed", seed, minimum=0)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    entropy = root.entropy
    if not isinstance(entropy, int):
        raise ParameterError("seed", seed, "a SeedSequence with integer entropy")
    return root, entropy


def _pilot(
    sample_pair: SamplePair, seed: np.random.SeedSequence, statistic: Statistic | None, plan: _Plan
) -> tuple[Statistic, NDArray[Any], Binning]:
    """The pilot's statistic (Fisher's discriminant for vectors by default), its values, and the binning."""
    pilot_a, pilot_b = checked_outputs(sample_pair(np.random.default_rng(seed), plan.pilot), plan.pilot)
    if statistic is None:
        statistic = identity if pilot_a.ndim == 1 else fit_discriminant(pilot_a, pilot_b)
    t_pilot = np.concatenate([reduce_to_scalars(statistic, pilot_a), reduce_to_scalars(statistic, pilot_b)])
    binning: Binning
    if t_pilot.dtype.kind in "iu":
        binning = integer_bins(t_pilot, plan.max_bins)
    elif t_pilot.dtype.kind == "f":
        binning = edge_bins(t_pilot, plan.float_bins)
    else:
        raise VerificationError(f"the statistic must return integers or reals; got dtype {t_pilot.dtype}")
    return statistic, t_pilot, binning


def _add_up(runs: Iterable[Histograms], bins: int) -> list[NDArray[np.int64]]:
    """The chunks' histograms added up: selection on D, on D', estimation on D, on D'."""
    totals = [np.zeros(bins, dtype=np.int64) for _ in range(4)]
    for hist in runs:
        for total, h in zip(totals, hist, strict=True):
            total += h
    return totals


@dataclass(frozen=True)
class _Counted:
    """What the sampling produced: the four histograms, and how they were binned and drawn."""

    totals: list[NDArray[np.int64]]
    binning: Binning
    statistic: Statistic
    t_pilot: (
        NDArray[Any] | None
    )  # the pilot's values, to order the bins by likelihood ratio (None: no ratio sets)
    chunks: int
    scheduler: str
    seed: int  # the root entropy


def _report(d: float, claim: float | None, plan: _Plan, counted: _Counted, started: float) -> AuditResult:
    """Select the event on the selection half, bound ε on the estimation half, and report."""
    sel_a, sel_b, est_a, est_b = counted.totals
    binning = counted.binning
    n_sel = int(sel_a.sum())
    n_est = int(est_a.sum())
    if n_sel == 0 or n_est == 0:
        raise VerificationError(
            f"samples={plan.samples} with chunk={plan.chunk} and selection_fraction="
            f"{plan.selection_fraction} leaves an empty selection or estimation half"
        )
    alpha = 1 - plan.confidence
    name = statistic_name(counted.statistic)
    pilot_hists = None
    if counted.t_pilot is not None:
        pilot_idx = binning.index(counted.t_pilot)
        pilot_hists = (
            np.bincount(pilot_idx[: plan.pilot], minlength=binning.bins).astype(np.int64),
            np.bincount(pilot_idx[plan.pilot :], minlength=binning.bins).astype(np.int64),
        )
    event = select_event(sel_a, sel_b, n_sel, d, alpha, binning, name, pilot_hists)
    num, den = (est_b, est_a) if event.reverse else (est_a, est_b)
    counts = EventCounts(int(num[event.mask].sum()), int(den[event.mask].sum()), n_est)
    eps_lb = epsilon_lower_bound(
        counts.first, counts.second, counts.trials, delta=d, confidence=plan.confidence
    )
    verdict: Verdict = "no claim"
    evidence_level: float | None = None
    if claim is not None:
        verdict = "violation" if eps_lb > claim else "consistent"
        evidence_level = evidence(counts.first, counts.second, counts.trials, d, claim)
    pld = None
    if isinstance(binning, IntegerBins):
        pld = plug_in_pld(sel_a + est_a, sel_b + est_b, claim, plan.min_count)
    return AuditResult(
        epsilon_lower=eps_lb,
        delta=d,
        confidence=plan.confidence,
        claimed_epsilon=claim,
        verdict=verdict,
        evidence=evidence_level,
        event=event.description,
        direction="D'/D" if event.reverse else "D/D'",
        counts=counts,
        samples=plan.samples,
        selection_samples=n_sel,
        estimation_samples=n_est,
        pilot_samples=plan.pilot,
        chunks=counted.chunks,
        bins=binning.bins,
        statistic=name,
        seed=counted.seed,
        seconds=time.perf_counter() - started,
        scheduler=counted.scheduler,
        plug_in_pld=pld,
    )
