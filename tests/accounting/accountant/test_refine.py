"""``route="auto"`` refines a small PLD instead of running the RDP route (:data:`AUTO_REFINE_POINTS`).

A few Poisson-sampled lattice releases compose on grids of thousands of points; the first PLD
enclosure can be a few tenths of a percent wide, which used to send ``auto`` on to the RDP route's
exact Rényi sums (13 s for a discrete Gaussian, 122 s for a Skellam at k = 3). The grid is refined
instead, and the answer is checked here against a brute-force composition of the exact pair.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from accounting import Accountant, AdditiveNoise, DiscreteGaussian, DiscreteLaplace, LatticeNoise, Skellam
from accounting.accountant.core import AUTO_MARGIN
from accounting.subsampling import PoissonSampled

Q, K, DELTA = 0.01, 3, 1e-5


def _brute_force_delta(noise: LatticeNoise, epsilon: float) -> float:
    """``δ(ε)`` of ``K`` Poisson-sampled releases under add-remove, the worse direction: the product
    measures of ``P = (1-q) X + q (X+1)`` and ``Q = X`` summed over every output triple (float64,
    on a window whose left-out mass is below 1e-13)."""
    half = math.ceil(12 * math.sqrt(noise.variance())) + 4
    xs = np.arange(-half, half + 2)
    base = np.asarray(noise.pmf(xs), dtype=np.float64)
    shifted = np.asarray(noise.pmf(xs - 1), dtype=np.float64)
    mixture = (1 - Q) * base + Q * shifted
    worst = 0.0
    for p, q in ((mixture, base), (base, mixture)):  # remove, add
        joint_p = np.ones(1)
        joint_q = np.ones(1)
        for _ in range(K):
            joint_p = np.multiply.outer(joint_p, p).ravel()
            joint_q = np.multiply.outer(joint_q, q).ravel()
        worst = max(worst, float(np.sum(np.maximum(0.0, joint_p - math.exp(epsilon) * joint_q))))
    return worst


@pytest.mark.slow
@pytest.mark.parametrize("noise", [DiscreteGaussian(2.0), DiscreteLaplace(2.0), Skellam(4.0)], ids=repr)
def test_a_few_sampled_lattice_releases_are_answered_by_a_refined_pld(noise: LatticeNoise) -> None:
    acc = Accountant("add-remove")
    acc.compose(PoissonSampled(AdditiveNoise(noise, 1), Q), K)
    answer = acc.epsilon(DELTA)
    assert answer.route == "pld"
    assert "rdp" not in answer.candidates  # settled by refining, so the RDP route was not run
    assert answer.hi - answer.lo <= answer.lo * AUTO_MARGIN
    # The enclosure holds the brute force: δ is at most the target at the upper end, at least at
    # the lower end (float64 sums: 1e-9 relative slack).
    assert _brute_force_delta(noise, float(answer.hi)) <= DELTA * (1 + 1e-9)
    assert _brute_force_delta(noise, float(answer.lo)) >= DELTA * (1 - 1e-9)
    # Refining only intersects certified enclosures: never looser than the first PLD answer.
    first = acc.epsilon(DELTA, "pld")
    assert first.lo <= answer.lo
    assert answer.hi <= first.hi


def test_refinement_is_decided_by_grid_sizes_not_by_a_clock() -> None:
    """The same ledger gives the same bytes twice (the refinement depends on no timing)."""
    answers = []
    for _ in itertools.repeat(None, 2):
        acc = Accountant("add-remove")
        acc.compose(PoissonSampled(AdditiveNoise(DiscreteLaplace(2.0), 1), Q), K)
        answers.append(acc.epsilon(DELTA))
    assert answers[0] == answers[1]
    assert answers[0].candidates == answers[1].candidates


@pytest.mark.slow
def test_more_digits_never_give_a_looser_answer() -> None:
    """At 30 digits a Skellam(30) ledger kept wider tails, its grids coarsened once more and the
    upper end rose by 2e-7 above the 20-digit one: the answer now intersects both."""
    at_default = Accountant("add-remove").compose(AdditiveNoise(Skellam(30), 1), 50).epsilon(1e-5, "pld")
    precise = Accountant("add-remove", dps=30).compose(AdditiveNoise(Skellam(30), 1), 50).epsilon(1e-5, "pld")
    assert precise.hi <= at_default.hi
    assert precise.lo >= at_default.lo
