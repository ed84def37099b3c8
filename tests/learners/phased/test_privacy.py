"""What a run guarantees (:mod:`learners.phased.privacy`): one release per client, one ledger per phase."""

from __future__ import annotations

import math

from accounting.accountant import Accountant
from learners.phased import (
    make_learner,
)
from learners.phased_instances import PhasedInstance
from tests.learners.phased.support import DELTA, EPS, go


def test_ledgers_one_release_per_client(inst: PhasedInstance) -> None:
    """Each phase's clients report once: one event per phase ledger, and ε is the largest over them
    (all equal here), re-accounted from the saved ledgers; the practical SDP surrogate certifies
    nothing; non-private runs have no ledger."""
    res, _ = go(make_learner("ldp-dpe", EPS, delta=DELTA), inst, 2**10)
    assert sorted(res.ledgers) == list(range(1, int(res.phases.max()) + 1))
    for acc in res.ledgers.values():
        assert len(acc.ledger) == 1
        assert acc.ledger[0].count == 1
        again = Accountant.from_dict(acc.to_dict())
        assert float(again.epsilon(DELTA)) <= EPS
    assert res.privacy.epsilon <= EPS
    assert res.privacy.meets_claim
    assert res.privacy.basis == "accounted"
    assert {e for _, e in res.privacy.phases} == {res.privacy.epsilon}
    res, _ = go(make_learner("sdp-dpe", 10.0, delta=DELTA, mode="practical"), inst, 2**10)
    assert not res.ledgers
    assert not res.privacy.certified
    assert res.privacy.epsilon == math.inf
    assert res.noise.kind == "surrogate"
    assert res.unit == "reals"
    res, _ = go(make_learner("dpe"), inst, 2**10)
    assert not res.ledgers
    assert res.privacy.model == "none"
