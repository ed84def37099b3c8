"""Audits of federated linear contextual bandits (Zhou & Chowdhury 2024, "On Differentially Private
Federated Linear Contextual Bandits", ICLR).

The paper criticizes Dubey & Pentland 2020 (Section 3) and states privacy for its own Algorithm 1
(Section 4; Theorem 5.1); this package checks those statements on the project's own implementation
(:mod:`learners.linear`), each with a broken case that must be flagged and a correct one that must
not:

* **A1, the schedule side channel** (Section 3, Example 3.1; Appendix B):
  :mod:`~verification.federated.side_channel` samples what silo ``j`` sees of a run on the
  neighbouring pair of Example 3.1; :mod:`verification.broken` audits it (the catalogue entries
  ``dubey-pentland-*``, and the fixed-batch controls);
* **A2, the aggregate noise** (Section 3's noise miscalculation; Algorithm 2):
  :mod:`~verification.federated.tree_noise`, the server's noise has per-coordinate variance
  ``M · popcount(k) · σ0²``, not the ``popcount(k) σ0²`` of Dubey & Pentland's analysis;
* **A4, exact GDP accounting of the tree** (Dong, Roth & Su 2022; Theorem 5.1's and the authors'
  code ``σ0``): :mod:`~verification.federated.gdp`;
* **A5, within-batch adaptivity** of Algorithm 1 (the proof of Theorem 5.1 counts each user in one
  term; the lazy Algorithm 8 of Appendix G.3 does not adapt within a batch):
  :mod:`~verification.federated.adaptivity`.

:func:`run_checks` (:mod:`~verification.federated.checks`) runs A2, A4 and A5 as :class:`CheckRow`
values (``dp-audit broken`` prints them after the sampled catalogue). The audits are numbered as in
the project's notes on the paper (A3, the communication audit, is not implemented).
"""

from verification.federated.adaptivity import A5_PARAMETERS, AdaptivityResult, adaptivity_search
from verification.federated.checks import run_checks
from verification.federated.gdp import GDPCheck, gdp_check
from verification.federated.rows import CheckRow, Verdict
from verification.federated.scripted import FloatArray, IntArray, ScriptedInstance
from verification.federated.side_channel import (
    A1_ANGLE,
    A1_REGULARIZER,
    A1_THRESHOLD,
    SideChannelPair,
    View,
    side_channel_claim,
    side_channel_instance,
)
from verification.federated.tree_noise import NoiseMeasurement, measure_tree_noise

__all__ = [
    "A1_ANGLE",
    "A1_REGULARIZER",
    "A1_THRESHOLD",
    "A5_PARAMETERS",
    "AdaptivityResult",
    "CheckRow",
    "FloatArray",
    "GDPCheck",
    "IntArray",
    "NoiseMeasurement",
    "ScriptedInstance",
    "SideChannelPair",
    "Verdict",
    "View",
    "adaptivity_search",
    "gdp_check",
    "measure_tree_noise",
    "run_checks",
    "side_channel_claim",
    "side_channel_instance",
]
