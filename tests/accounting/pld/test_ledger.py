"""Tests of :mod:`accounting.pld.ledger`: ledgers composed per direction by :func:`compose_events`.

Gaussian ledgers are one Gaussian; cited guarantees compose as randomized response (Kairouz, Oh &
Viswanath 2015); mixed and subsampled ledgers against products of atoms; refusals.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from mpmath import mp

from accounting import (
    AdditiveNoise,
    ApproxDP,
    DiscreteGaussian,
    DiscreteLaplace,
    DistributedSum,
    Gaussian,
    Geometric,
    ParameterError,
    ParameterTypeError,
    PureDP,
    Skellam,
    UnsupportedEventError,
)
from accounting.certified import Enclosure
from accounting.neighbouring import Neighbouring
from accounting.pld import (
    PrivacyLossDistribution,
    compose_events,
    event_distributions,
    gaussian_composition_epsilon,
    gaussian_equivalent_sigma,
)
from accounting.subsampling import PoissonSampled, SampledWithoutReplacement
from tests.accounting.pld.references import (
    REF_DPS,
    Mpf,
    assert_in,
    binomial_atoms,
    brute_delta,
    brute_epsilon,
    overlaps,
)

# Ledgers: compose_events
# ---------------------------------------------------------------------------------------------


def test_gaussian_ledger_is_one_gaussian() -> None:
    items = [(AdditiveNoise(Gaussian(2.0), 1.0), 10), (AdditiveNoise(Gaussian(3.0), 2.0), 5)]
    lo, hi = gaussian_equivalent_sigma([(2.0, 1.0, 10), (3.0, 2.0, 5)])
    with mp.workdps(40):
        exact = 1 / mp.sqrt(mp.mpf(10) / 4 + mp.mpf(5) * 4 / 9)
        assert lo <= exact <= hi
        assert hi - lo <= 2.0**-50 * exact
    for relation in ("add-remove", "replace-one"):
        ledger = compose_events(items, relation)
        assert ledger.gaussian_sigma == (lo, hi)
        assert overlaps(ledger.epsilon(1e-6), gaussian_composition_epsilon(float(exact), 1.0, 1, 1e-6))
    with pytest.raises(ParameterError, match="sigma"):
        gaussian_equivalent_sigma([(0.0, 1.0, 1)])
    with pytest.raises(ParameterError, match="count"):
        gaussian_equivalent_sigma([(1.0, 1.0, 0)])


def rr_atoms(eps: float, count: int, dlt: float = 0.0) -> list[tuple[Mpf, Mpf]]:
    """``count``-fold randomized response (the KOV pair of ε) as (P, Q) atoms; ``+∞`` carries the rest."""
    e = mp.exp(mp.mpf(eps))
    up = e / (1 + e)
    keep = (1 - mp.mpf(dlt)) ** count
    atoms = []
    for k in range(count + 1):
        p = keep * mp.binomial(count, k) * up**k * (1 - up) ** (count - k)
        atoms.append((p, p * mp.exp(-(2 * k - count) * mp.mpf(eps))))
    atoms.append((1 - keep, mp.zero))
    return atoms


def test_cited_guarantees_compose_exactly() -> None:
    with mp.workdps(REF_DPS):
        pure = compose_events([(PureDP(0.3, "thm"), 20)], "replace-one")
        approx = compose_events([(ApproxDP(0.3, 1e-6, "thm"), 20)], "replace-one")
        assert pure.directions["replace-one"].exact_grid
        for eps in (0.0, 1.0, 3.0):
            assert_in(brute_delta(rr_atoms(0.3, 20), eps), pure.delta(eps))
            assert_in(brute_delta(rr_atoms(0.3, 20, 1e-6), eps), approx.delta(eps))
        assert_in(brute_epsilon(rr_atoms(0.3, 20), 1e-5), pure.epsilon(1e-5))
        assert pure.delta(0.5).digits() > 15
    with pytest.raises(UnsupportedEventError, match="replace-one"):
        compose_events([(PureDP(0.3, "thm"), 2)], "add-remove")


def test_mixed_ledger_against_the_product_of_atoms() -> None:
    """Randomized response and a discrete Laplace on one rounded grid: atoms multiply."""
    with mp.workdps(REF_DPS):
        mixed = compose_events(
            [(PureDP(0.25, "thm"), 3), (AdditiveNoise(DiscreteLaplace(3.0), 1), 4)], "replace-one"
        )
        assert not mixed.directions["replace-one"].exact_grid
        atoms = [
            (p1 * p2, q1 * q2)
            for (p1, q1), (p2, q2) in itertools.product(rr_atoms(0.25, 3), binomial_atoms(3.0, 4))
        ]
        for eps in (0.0, 0.5, 1.5):
            got = mixed.delta(eps)
            assert_in(brute_delta(atoms, eps), got)
            assert got.hi - got.lo < 1e-3 * got.hi
        assert_in(brute_epsilon(atoms, 1e-3), mixed.epsilon(1e-3))


def test_subsampled_ledger_takes_the_worse_direction() -> None:
    event = PoissonSampled(AdditiveNoise(DiscreteGaussian(2.0), 1), 0.2)
    ledger = compose_events([(event, 20)], Neighbouring.ADD_REMOVE, dps=20)
    assert set(ledger.directions) == {"remove", "add"}
    for delta in (1e-3, 1e-6):
        parts = [d.epsilon(delta) for d in ledger.directions.values()]
        got = ledger.epsilon(delta)
        assert got.hi == max(p.hi for p in parts)
        assert got.lo == max(p.lo for p in parts)
    # A symmetric ledger is composed once under add-remove.
    symmetric = compose_events([(AdditiveNoise(DiscreteGaussian(2.0), 1), 3)], "add-remove")
    assert len(symmetric.directions) == 1


@pytest.mark.slow
def test_composition_is_additive_in_the_counts() -> None:
    event = SampledWithoutReplacement(AdditiveNoise(Gaussian(2.0), 1.0), 0.1)
    split = compose_events([(event, 30), (event, 50)], "replace-one", spacing=2.0**-9, dps=20)
    whole = compose_events([(event, 80)], "replace-one", spacing=2.0**-9, dps=20)
    for delta in (1e-3, 1e-6):
        assert overlaps(split.epsilon(delta), whole.epsilon(delta))
    pair = event.dominating_pairs("replace-one")["replace-one"]
    one = PrivacyLossDistribution.from_pair(pair, spacing=2.0**-9, dps=20)
    for eps in (0.0, 0.5):
        assert overlaps(
            one.self_compose(30).compose(one.self_compose(50)).delta(eps), one.self_compose(80).delta(eps)
        )


@pytest.mark.parametrize(
    ("event", "relation", "match"),
    [
        (DistributedSum(DiscreteGaussian(2.0), 5), "add-remove", "noise share"),
        (AdditiveNoise(Geometric(0.5), 1), "replace-one", "RDP"),
        (AdditiveNoise(Skellam.from_rates(3, 5), 1), "add-remove", "RDP"),
        (PureDP(1.0, "thm", "add-remove"), "replace-one", "add-remove"),
        ("not an event", "replace-one", "PLD route"),
        (PoissonSampled(DistributedSum(DiscreteGaussian(2.0), 5), 0.1), "add-remove", "share"),
    ],
    ids=repr,
)
def test_compose_events_refuses_what_it_cannot_certify(event: Any, relation: str, match: str) -> None:
    with pytest.raises(UnsupportedEventError, match=match):
        compose_events([(event, 2)], relation)


def test_compose_events_parameter_errors() -> None:
    mech = AdditiveNoise(DiscreteLaplace(3.0), 1)
    with pytest.raises(ParameterError, match="items"):
        compose_events([], "replace-one")
    with pytest.raises(ParameterTypeError, match=r"items\[0\]"):
        compose_events([mech], "replace-one")  # type: ignore[list-item]
    with pytest.raises(ParameterError, match="count"):
        compose_events([(mech, 0)], "replace-one")
    with pytest.raises(ParameterError, match="spacing"):
        compose_events([(mech, 1)], "replace-one", spacing=-1.0)
    with pytest.raises(ParameterError, match="neighbouring"):
        compose_events([(mech, 1)], "sideways")


# ---------------------------------------------------------------------------------------------


def test_one_pld_per_direction() -> None:
    """event_distributions: one PLD per direction of a subsampled release, whose worse δ is the event's."""
    event = PoissonSampled(AdditiveNoise(DiscreteGaussian(2.0), 1), 0.3)
    plds = event_distributions(event, "add-remove", dps=20)
    assert set(plds) == {"remove", "add"}
    for eps in (0.0, 0.4):
        single = event.delta(eps, "add-remove", dps=20)
        assert overlaps(
            Enclosure(
                max(p.delta(eps).lo for p in plds.values()), max(p.delta(eps).hi for p in plds.values())
            ),
            single,
        )
