"""Published closed forms against exact values: does each bound dominate, and how tightly?

Every closed form in :mod:`accounting.bounds` that claims to bound a privacy quantity is
compared, over a grid of parameters, with the exact value the library certifies
(:mod:`accounting.mechanisms`, i.e. :mod:`accounting.divergence`). The exact value is an
enclosure ``[lo, hi]`` of the true one, so at each point the bound

* **dominates** when ``bound >= hi`` (so ``bound >= true``),
* **violates** when ``bound < lo`` (a counterexample: the closed form understates the loss),
* is **undecided** otherwise. The precision is raised (``dps``, ``2 dps``, then enough digits
  to resolve the bound itself) before a point is left undecided; what remains are points
  where the bound *equals* the exact value (Fact 3's ``ε = Δ/b`` when ``Δ/b`` is a float,
  CKS's ``αρ`` when ``αΔ`` is an integer), which no finite precision separates.

The tightness ratio is ``bound / exact`` (at the enclosure's midpoint); the worst is the
smallest one. :data:`BOUNDS` registers each check with its citation, what it is compared
with, a default grid (a few seconds), a quick grid (for tests) and a search space for
:func:`search_counterexamples`, which runs a hypothesis search (targeted at the smallest
ratio) over that space.

Search ranges (:attr:`BoundSpec.space`, printed by :attr:`SearchReport.space`): orders up to
64 (16 for sums of discrete Gaussians and Theorem 4, 200 for the exact Theorem-2 checks, 1000
for the Lemma-3 cross-checks); σ from 0.2 to 50, Skellam variances from 0.5 to 5000, ε from
0.01 to 10 and s from 1 to 100 (log-uniform), n up to 2^21 for the closed-form-only checks;
each restricted to the bound's domain and to points whose exact value costs about a second
(:attr:`BoundSpec.feasible`).

The Theorem-2 closed forms of Chowdhury & Zhou 2023 (Section 5, Theorem 2, and its per-batch
statement in the proof, Appendix E.2) are checked twice: against the exact per-batch Rényi
divergence of the Skellam noise the protocol adds, and against the Lemma-3 value (Agarwal, Kairouz &
Liu 2021, Theorem 3.5) they were derived from. The second comparison is where they fail: with
``Δ = g`` and ``σ² = g²/ε²``, Lemma 3's second term is ``3ε/(2s√n)`` where the paper prints
``3ε²/(2s√n)``, and ``g = ceil(sε√n)`` can fall below ``s``; the library accounts with exact
values, never with them.

The package, by idea: :mod:`~verification.exactness.spec` (what a check is),
:mod:`~verification.exactness.registry` (the checks, :data:`BOUNDS`),
:mod:`~verification.exactness.reports`, :mod:`~verification.exactness.checking` (:func:`check_bound`,
:func:`check_all`) and :mod:`~verification.exactness.search` (:func:`search_counterexamples`).
"""

from verification.exactness.checking import check_all, check_bound
from verification.exactness.registry import BOUNDS
from verification.exactness.reports import BoundReport, PointResult, SearchReport
from verification.exactness.search import search_counterexamples
from verification.exactness.spec import BoundSpec, Dimension, Evaluate, Params, Point

__all__ = [
    "BOUNDS",
    "BoundReport",
    "BoundSpec",
    "Dimension",
    "Evaluate",
    "Params",
    "Point",
    "PointResult",
    "SearchReport",
    "check_all",
    "check_bound",
    "search_counterexamples",
]
