"""Black-box empirical auditing: a lower bound on ε from samples of a mechanism.

Given a way to sample a mechanism's output on two neighbouring inputs ``D`` and ``D'``,
:func:`audit` returns a number ``ε_lb`` such that, with probability at least the stated
confidence over the auditor's own randomness, the mechanism is *not* ``(ε, δ)``-DP for
any ``ε < ε_lb``. It never needs the mechanism's code, only its outputs.

The method is the standard one of empirical privacy auditing (Jagielski, Ullman & Oprea
2020, "Auditing Differentially Private Machine Learning: How Private is Private SGD?";
Nasr et al. 2021, "Adversary Instantiation"):

1. Draw ``samples`` outputs on each side, in chunks (each chunk from its own stream
   spawned by :class:`numpy.random.SeedSequence`), reduce each output to a scalar by a
   *statistic*, and count them into histograms. Only counts are kept, so ``10^8`` samples
   per side need the memory of one chunk.
2. *Selection* (the first ``selection_fraction`` of every chunk): choose a distinguishing
   event ``S`` and a direction among the threshold sets ``{T >= t}``, ``{T <= t}`` and the
   sets of bins with the largest likelihood ratio (ordered by the ratios of a held-out
   pilot sample), maximizing the ε bound computed with simultaneous (Bonferroni) Wilson
   intervals on the selection half, so sparse tail events do not win by chance.
3. *Estimation* (the rest, never seen by step 2): bound ``p = P[M(D) ∈ S]`` from below and
   ``q = P[M(D') ∈ S]`` from above by one-sided Clopper–Pearson intervals (Clopper &
   Pearson 1934), each at level ``1 - α/2`` with ``α = 1 - confidence`` (a union bound),
   and report ``ε_lb = ln((p_lo - δ) / q_hi)``, clipped at 0 and rounded down. An
   ``(ε, δ)``-DP mechanism has ``p <= e^ε q + δ`` for every event, so ``ε_lb <= ε`` with
   probability at least ``confidence``: no double dipping, because ``S`` was fixed before
   the estimation half was looked at.

For integer statistics the histograms also give a plug-in estimate of the privacy-loss
distribution (:class:`PluginPLD`), as a diagnostic (it carries no confidence statement).

The chunks can run on a Dask cluster: pass a :class:`distributed.Client` or a scheduler
address as ``scheduler``; each chunk is a task with its own spawned seed and returns only
its histograms, so the result is identical to the local run with the same seed.

The package, by idea:

* :mod:`verification.audit.pairs` — neighbouring pairs (a mechanism, a protocol's server view)
  and statistics;
* :mod:`verification.audit.bounds` — Clopper–Pearson and the ε lower bound;
* :mod:`verification.audit.results` — :class:`AuditResult` and the plug-in PLD;
* :mod:`verification.audit.auditor` — :func:`audit` itself, on the private binning, chunked
  sampling and event selection modules.
"""

from __future__ import annotations

from verification.audit._chunks import Histograms
from verification.audit.auditor import audit
from verification.audit.bounds import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound
from verification.audit.pairs import (
    AdditivePair,
    CoordinateDifference,
    Projection,
    ProtocolPair,
    SamplePair,
    Statistic,
    additive_pair,
    protocol_pair,
)
from verification.audit.results import AuditResult, EventCounts, PluginPLD, Verdict

__all__ = [
    "AdditivePair",
    "AuditResult",
    "CoordinateDifference",
    "EventCounts",
    "Histograms",
    "PluginPLD",
    "Projection",
    "ProtocolPair",
    "SamplePair",
    "Statistic",
    "Verdict",
    "additive_pair",
    "audit",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "protocol_pair",
]
