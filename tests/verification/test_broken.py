"""Tests of :mod:`verification.broken`: the auditor flags every broken mechanism and no correct one.

Every catalogue entry is flagged and the correct mechanisms pass (false alarms at most at the
stated confidence level). The defects and their sources are in the module docstring: the Pólya
scale bug of the released code of Chowdhury & Zhou 2023, floating-point Laplace (Mironov 2012),
LDP-LinUCB's σ in the official code of Zheng et al. 2020 (√2 below Dwork & Roth 2014, Theorem
A.1), and the mutations of DP-SE (Sajed & Sheffet 2019), distributed Skellam (a dropout) and the
discrete Gaussian (σ/√2). The claims are checked against closed forms recomputed here where they
exist.
"""

from __future__ import annotations

import math
import pickle
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from accounting import AdditiveNoise, DiscreteGaussian, DistributedSum, Gaussian, ParameterError, Skellam
from accounting.errors import ParameterTypeError
from learners.ldp import classic_sigma, code_sigma, gaussian_multiplier
from verification import broken
from verification.audit import AdditivePair, AuditResult, additive_pair, audit
from verification.audit.auditor import planned_draws
from verification.broken import (
    BROKEN,
    CORRECT,
    FEDERATED_NAMES,
    ArmSumsPair,
    BrokenMechanism,
    CatalogueRow,
    FloatLaplacePair,
    LaplaceReachability,
    PolyaSharesPair,
    SkellamSharesPair,
    federated_catalogue,
    run_catalogue,
)

BY_NAME = {m.name: m for m in (*BROKEN, *CORRECT)}


# ---------------------------------------------------------------------------------------
# The catalogue at the default sample size
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalogue() -> list[CatalogueRow]:
    """Every entry audited with 10^6 samples per side (about 5 s in all)."""
    return run_catalogue(samples=10**6, seed=0)


@pytest.mark.slow
def test_every_broken_mechanism_is_flagged(catalogue: list[CatalogueRow]) -> None:
    broken = [row for row in catalogue if row.broken]
    assert [row.name for row in broken] == [m.name for m in BROKEN]
    for row in broken:
        assert row.flagged, f"{row.name}: ε_lb {row.epsilon_lower} <= claimed {row.claimed_epsilon}"
        assert row.ok
        assert row.expected
        assert row.result.evidence is not None
        assert row.result.evidence >= 0.95


@pytest.mark.slow
def test_no_correct_mechanism_is_flagged(catalogue: list[CatalogueRow]) -> None:
    correct = [row for row in catalogue if not row.broken]
    assert [row.name for row in correct] == [m.name for m in CORRECT]
    for row in correct:
        assert not row.flagged, f"{row.name}: ε_lb {row.epsilon_lower} > claimed {row.claimed_epsilon}"
        assert row.ok
        assert row.epsilon_lower <= row.claimed_epsilon


@pytest.mark.slow
def test_the_violations_are_clear(catalogue: list[CatalogueRow]) -> None:
    """Margins measured at 10^6 samples: each broken entry exceeds its claim by a wide margin."""
    lb = {row.name: row.epsilon_lower for row in catalogue}
    claim = {row.name: row.claimed_epsilon for row in catalogue}
    # Pure-DP claims broken by orders of magnitude (the true ε is 8.6, ∞, ∞).
    assert lb["polya-scale-bug"] > 10 * claim["polya-scale-bug"]
    assert lb["dp-se-shared-noise"] > 10 * claim["dp-se-shared-noise"]
    assert lb["float-laplace"] > 10 * claim["float-laplace"]
    # Half the variance: the (ε, 10^-3) claims are exceeded by more than 1.
    assert lb["skellam-dropout"] > claim["skellam-dropout"] + 0.8
    assert lb["discrete-gaussian-sigma"] > claim["discrete-gaussian-sigma"] + 0.8
    # LDP-LinUCB's code σ at (4, 0.1): exact ε 5.60, measured ε_lb 5.38.
    assert lb["ldp-linucb-code-sigma"] > claim["ldp-linucb-code-sigma"] + 1.0
    # The correct counterparts come close to their claims where the auditor is tight.
    assert lb["polya-shares"] > 0.9 * claim["polya-shares"]
    assert lb["discrete-laplace"] > 0.9 * claim["discrete-laplace"]
    assert lb["ldp-linucb-exact-sigma"] > 0.9 * claim["ldp-linucb-exact-sigma"]  # measured 3.92 of 4


@pytest.mark.slow
def test_false_alarms_over_seeds_stay_below_the_level() -> None:
    """Each correct entry audited with 10 seeds at 10^5 samples: at most 5% of the audits may alarm."""
    seeds = np.random.SeedSequence(99).spawn(10)
    alarms = 0
    for mech in CORRECT:
        for s in seeds:
            r = audit(
                mech.sample_pair,
                delta=mech.delta,
                claimed_epsilon=mech.claimed_epsilon,
                samples=100_000,
                pilot=10_000,
                seed=s,
                statistic=mech.statistic,
            )
            alarms += r.violation
    assert len(CORRECT) == 6
    assert alarms <= 3  # 5% of 60


def test_a_small_catalogue_run_flags_the_gross_defects() -> None:
    rows = run_catalogue(samples=20_000, seed=1, include_correct=False, pilot=5_000)
    assert len(rows) == len(BROKEN)
    flagged = {row.name for row in rows if row.flagged}
    # Even 2·10^4 samples expose the defects whose true ε is large or infinite.
    assert {"polya-scale-bug", "dp-se-shared-noise", "float-laplace"} <= flagged
    row = rows[0]
    assert row.as_expected == row.ok
    line = row.summary()
    assert row.name in line
    assert "flagged" in line
    assert row.result.summary().startswith("ε >= ")


def test_entries_pickle_for_dask_workers() -> None:
    rng = np.random.default_rng(0)
    for m in (*BROKEN, *CORRECT):
        pair = pickle.loads(pickle.dumps(m.sample_pair))
        a, b = pair(rng, 10)
        assert a.shape[0] == b.shape[0] == 10
        if m.statistic is not None:
            assert pickle.loads(pickle.dumps(m.statistic)) == m.statistic


# ---------------------------------------------------------------------------------------
# The entries
# ---------------------------------------------------------------------------------------


def test_entries_are_described() -> None:
    assert len(BROKEN) == len(CORRECT) == 6
    assert len(BY_NAME) == 12  # unique names
    for m in (*BROKEN, *CORRECT):
        assert isinstance(m, BrokenMechanism)
        assert m.description
        assert m.reference
        assert m.claimed_epsilon > 0
        assert 0 <= m.delta < 1
    # Counterparts claim the same privacy.
    for bad, good in zip(BROKEN, CORRECT, strict=True):
        if bad.name != "float-laplace":  # its counterpart is the discrete Laplace remedy
            assert bad.claimed_epsilon == good.claimed_epsilon
            assert bad.delta == good.delta


def test_claims_come_from_the_accounting() -> None:
    # Pure ε of Lap_Z(b) with Δ = g is g/b = ε (Fact 3); here b = g/ε = 8, Δ = 4, ε = 0.5.
    assert BY_NAME["polya-scale-bug"].claimed_epsilon == pytest.approx(0.5, rel=1e-12)
    assert BY_NAME["polya-scale-bug"].claimed_epsilon >= 0.5 * (1 - 1e-15)
    # Laplace mechanism, scale 1/ε: ε = 1 (DP-SE), and scale 10: ε = 0.1.
    assert BY_NAME["dp-se-shared-noise"].claimed_epsilon == pytest.approx(1.0, rel=1e-12)
    assert BY_NAME["float-laplace"].claimed_epsilon == pytest.approx(0.1, rel=1e-12)
    assert BY_NAME["discrete-laplace"].claimed_epsilon == pytest.approx(0.1, rel=1e-12)
    # (ε, δ) claims: the exact ε(δ) of the intended mechanism.
    sk = DistributedSum(Skellam(Fraction(50)), 2, 10).epsilon(1e-3)
    assert BY_NAME["skellam-dropout"].claimed_epsilon == float(sk)
    dg = AdditiveNoise(DiscreteGaussian(10.0), 10).epsilon(1e-3)
    assert BY_NAME["discrete-gaussian-sigma"].claimed_epsilon == float(dg)


def _gaussian_pair(name: str) -> tuple[Gaussian, float]:
    """The noise and the sensitivity an additive Gaussian entry samples."""
    pair = BY_NAME[name].sample_pair
    assert isinstance(pair, AdditivePair)
    assert isinstance(pair.noise, Gaussian)
    return pair.noise, pair.sensitivity


def test_ldp_linucb_entries_sample_the_code_sigma_and_the_exact_one() -> None:
    """Zheng et al. 2020's official code: σ = 4 sqrt(ln(1.25/δ))/ε is √2 below the README's (Dwork &
    Roth 2014, Theorem A.1) 4 sqrt(2 ln(1.25/δ))/ε; both entries claim the stated (4, 0.1) at
    sensitivity 2 + 2Y = 4."""
    bad, good = BY_NAME["ldp-linucb-code-sigma"], BY_NAME["ldp-linucb-exact-sigma"]
    assert (bad.claimed_epsilon, bad.delta) == (good.claimed_epsilon, good.delta) == (4.0, 0.1)
    (code, code_sens), (exact, exact_sens) = _gaussian_pair(bad.name), _gaussian_pair(good.name)
    assert code_sens == exact_sens == 4.0
    assert float(code.sigma) == code_sigma(4.0, 0.1)
    # 4 sqrt(ln 12.5)/4 by hand, and √2 below the stated formula's.
    assert float(code.sigma) == pytest.approx(math.sqrt(math.log(12.5)), rel=1e-15)
    assert float(code.sigma) * math.sqrt(2) == pytest.approx(classic_sigma(4.0, 0.1, 4.0), rel=1e-14)
    assert float(exact.sigma) == 4 * gaussian_multiplier(4.0, 0.1)
    # The accounting's verdicts: the code's σ misses the claim (exact ε 5.60), the calibrated one meets it.
    missed = AdditiveNoise(code, 4.0).epsilon(0.1)
    assert missed.lower > 5.59
    assert AdditiveNoise(exact, 4.0).epsilon(0.1).upper <= 4.0
    # The description carries the accounting's number, not a hand-written one.
    assert f"exact ε {float(missed.upper):.4g}" in bad.description


def test_ldp_linucb_code_sigma_is_flagged_and_the_exact_sigma_is_not() -> None:
    """The auditor flags the official code's σ at (4, 0.1) and not the exactly calibrated σ.

    At 10^5 samples a side (about a second for both): ε_lb 5.17 and 3.62 here; over ten seeds the code's
    σ gave 4.86-5.18 and the exact σ 3.63-3.89.
    """
    rows = run_catalogue(
        samples=100_000, seed=0, pilot=10_000, names=["ldp-linucb-code-sigma", "ldp-linucb-exact-sigma"]
    )
    assert [(row.name, row.broken) for row in rows] == [
        ("ldp-linucb-code-sigma", True),
        ("ldp-linucb-exact-sigma", False),
    ]
    code, exact = rows
    assert code.flagged
    assert code.epsilon_lower > code.claimed_epsilon + 0.5
    assert code.result.evidence is not None
    assert code.result.evidence >= 0.99
    assert not exact.flagged
    assert exact.epsilon_lower <= exact.claimed_epsilon
    assert exact.epsilon_lower > 3.0  # the auditor is not blind: it comes near the claim
    assert code.ok
    assert exact.ok


def test_polya_scale_bug_has_the_released_code_variance() -> None:
    """n = 64, ε = 0.5, g = 4: total noise variance 0.30 with the bug, 127.8 = Var Lap_Z(8) without."""
    rng = np.random.default_rng(0)
    beta = math.exp(-1 / 8)
    buggy, _ = PolyaSharesPair(64, beta, 4, released_code=True)(rng, 200_000)
    right, _ = PolyaSharesPair(64, beta, 4, released_code=False)(rng, 200_000)
    assert buggy.var() == pytest.approx(2 * (1 - beta) / beta**2, rel=0.02)  # 0.30
    assert 2 * (1 - beta) / beta**2 == pytest.approx(0.30, abs=0.005)
    assert right.var() == pytest.approx(2 * beta / (1 - beta) ** 2, rel=0.02)  # 127.8
    assert 2 * beta / (1 - beta) ** 2 == pytest.approx(127.8, abs=0.1)


def test_aggregated_polya_shares_match_per_user_draws() -> None:
    """Σ of n users' Poisson(Gamma(1/n, θ)) draws has the law of Poisson(Gamma(1, θ)).

    The catalogue draws the users in aggregate; here the released code's per-user sampler
    (``MABPrivate.py``) is run user by user and the two totals are compared by a chi-square test.
    """
    from scipy import stats

    rng = np.random.default_rng(1)
    n, size = 16, 40_000
    beta = math.exp(-1 / 8)
    theta = (1 - beta) / beta
    per_user = sum(rng.poisson(rng.gamma(1 / n, theta, size)) for _ in range(n))
    aggregated = PolyaSharesPair(n, beta, 4, released_code=True)._total(rng, size)
    top = 3
    table = np.array(
        [[np.sum(np.minimum(x, top) == k) for k in range(top + 1)] for x in (per_user, aggregated)]
    )
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_shared_noise_cancels_in_arm_differences() -> None:
    pair = ArmSumsPair((30, 20, 25, 10), arm=0, scale=1.0, shared=True)
    a, b = pair(np.random.default_rng(2), 1000)
    assert a.shape == b.shape == (1000, 4)
    assert np.allclose(a[:, 0] - a[:, 1], 10, atol=1e-12)
    assert np.allclose(b[:, 0] - b[:, 1], 11, atol=1e-12)
    own = ArmSumsPair((30, 20, 25, 10), arm=0, scale=1.0, shared=False)
    a, _ = own(np.random.default_rng(2), 1000)
    assert np.std(a[:, 0] - a[:, 1]) > 1


def test_reachability_reproduces_numpy_laplace() -> None:
    """Mironov's distinguisher: outputs on loc = 0 are (almost all) reproducible from 0 only.

    Codes: 0 = first only, 1 = neither, 2 = both, 3 = second only. The few outputs not
    recognized are those where ``np.log`` and the C library's ``log`` differ in the last bit.
    """
    stat = LaplaceReachability(10.0)
    first, second = FloatLaplacePair(10.0)(np.random.default_rng(3), 200_000)
    codes_first, codes_second = stat(first), stat(second)
    assert np.mean(np.isin(codes_first, (0, 2))) > 0.99
    assert np.mean(np.isin(codes_second, (2, 3))) > 0.99
    assert np.mean(codes_first == 0) > 0.5  # impossible on the other input
    assert np.mean(codes_second == 3) > 0.5
    assert np.mean(codes_first == 3) < 0.01
    assert str(stat) == "reachable(x | loc=0 or 1)"


def test_the_reachability_statistic_does_not_flag_exact_integer_noise() -> None:
    # A sanity check of the statistic's honesty: on outputs it cannot explain (integers from
    # the discrete Laplace), it finds nothing to tell the inputs apart by.
    mech = BY_NAME["discrete-laplace"]
    r = audit(
        mech.sample_pair,
        claimed_epsilon=mech.claimed_epsilon,
        samples=100_000,
        seed=4,
        statistic=LaplaceReachability(10.0),
    )
    assert not r.violation


def test_skellam_dropout_has_the_missing_variance() -> None:
    share = Fraction(50)
    full, _ = SkellamSharesPair(share, 2, 10)(np.random.default_rng(5), 100_000)
    partial, moved = SkellamSharesPair(share, 1, 10)(np.random.default_rng(5), 100_000)
    assert full.var() == pytest.approx(100, rel=0.03)
    assert partial.var() == pytest.approx(50, rel=0.03)
    assert moved.mean() - partial.mean() == pytest.approx(10, abs=0.2)


# ---------------------------------------------------------------------------------------
# run_catalogue
# ---------------------------------------------------------------------------------------


def test_run_catalogue_with_a_custom_auditor() -> None:
    calls: list[dict[str, Any]] = []

    def fake_audit(sample_pair: Any, **kwargs: Any) -> AuditResult:
        calls.append(kwargs)
        return audit(sample_pair, **{**kwargs, "samples": 1_000, "pilot": 500})

    rows = run_catalogue(samples=1_000, seed=3, audit_fn=fake_audit, chunk=500)
    assert len(rows) == len(BROKEN) + len(CORRECT)
    assert [c["claimed_epsilon"] for c in calls] == [m.claimed_epsilon for m in (*BROKEN, *CORRECT)]
    assert all(c["chunk"] == 500 for c in calls)
    assert all(row.flagged == row.result.violation for row in rows)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"samples": 5}, "samples"), ({"seed": -2}, "seed"), ({"statistic": None}, "options")],
)
def test_run_catalogue_validates(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(ParameterError) as info:
        run_catalogue(**kwargs)
    assert info.value.name == name


@pytest.mark.parametrize(
    ("names", "error"),
    [
        (["no-such-entry"], ParameterError),
        (["dubey-pentland-action"], ParameterError),  # a federated entry, without federated=True
        ([], ParameterTypeError),
        ("ldp-linucb-code-sigma", ParameterTypeError),  # a str is no sequence of names
        ([3], ParameterTypeError),
    ],
)
def test_run_catalogue_validates_names(names: Any, error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        run_catalogue(samples=200, names=names)
    assert getattr(info.value, "name", None) == "names"


def test_the_draws_budget_refuses_before_any_draw() -> None:
    """A catalogue over its budget is refused up front, with the estimate, and the estimate is
    what the audits then draw (counted at the samplers)."""
    drawn: list[int] = []

    def counting(sample_pair: Any) -> Any:
        def pair(rng: np.random.Generator, size: int) -> Any:
            drawn.append(2 * size)
            return sample_pair(rng, size)

        return pair

    def fake(sample_pair: Any, **kwargs: Any) -> AuditResult:
        return audit(counting(sample_pair), **kwargs)

    names = ["discrete-laplace", "float-laplace"]
    expected = 2 * planned_draws(1_000, 500)
    with pytest.raises(ParameterError, match=f"one draws {expected:,}:") as info:
        run_catalogue(samples=1_000, names=names, audit_fn=fake, pilot=500, max_draws=expected - 1)
    assert info.value.name == "samples"
    assert drawn == []
    run_catalogue(samples=1_000, names=names, audit_fn=fake, pilot=500, max_draws=expected, chunk=400)
    assert sum(drawn) == expected
    with pytest.raises(ParameterError, match="max_draws"):
        audit(additive_pair(DiscreteGaussian(3.0)), samples=10**12, max_draws=10**8)


def test_a_federated_name_is_checked_without_building_the_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    built = federated_catalogue()
    assert tuple(m.name for m in (*built[0], *built[1])) == FEDERATED_NAMES

    def unbuilt() -> Any:
        raise AssertionError("the federated entries were built to check a name")

    monkeypatch.setattr(broken, "federated_catalogue", unbuilt)
    with pytest.raises(ParameterError, match="dubey-pentland-action"):
        run_catalogue(samples=200, names=["nope"], federated=True)


def test_named_entries_keep_their_seeds_of_the_whole_run() -> None:
    """``names`` audits a subset; each entry gets the seed (hence the row) the whole run gives it."""
    seen: list[list[tuple[float, Any]]] = [[], []]

    def spy(into: list[tuple[float, Any]]) -> Any:
        def fake(sample_pair: Any, **kwargs: Any) -> AuditResult:
            into.append((kwargs["claimed_epsilon"], kwargs["seed"].spawn_key))
            return audit(sample_pair, **{**kwargs, "samples": 200, "pilot": 100})

        return fake

    wanted = ["discrete-laplace", "ldp-linucb-code-sigma"]
    whole = run_catalogue(samples=200, seed=5, audit_fn=spy(seen[0]))
    some = run_catalogue(samples=200, seed=5, audit_fn=spy(seen[1]), names=wanted)
    # In catalogue order (broken first), whatever the order asked.
    assert [row.name for row in some] == ["ldp-linucb-code-sigma", "discrete-laplace"]
    index = {row.name: i for i, row in enumerate(whole)}
    assert seen[1] == [seen[0][index[row.name]] for row in some]
    assert [row.epsilon_lower for row in some] == [whole[index[row.name]].epsilon_lower for row in some]


@pytest.mark.slow
def test_federated_entries_leave_the_other_entries_seeds_alone() -> None:
    """``run_catalogue(federated=True)`` spawns the federated entries' seeds after the others'."""
    seeds: list[list[Any]] = [[], []]

    def spy(into: list[Any]) -> Any:
        def fake(sample_pair: Any, **kwargs: Any) -> AuditResult:
            into.append(kwargs["seed"].spawn_key)
            return audit(sample_pair, **{**kwargs, "samples": 200, "pilot": 100})

        return fake

    plain = run_catalogue(samples=200, seed=7, audit_fn=spy(seeds[0]))
    both = run_catalogue(samples=200, seed=7, audit_fn=spy(seeds[1]), federated=True)
    assert len(both) == len(plain) + 4
    assert seeds[1][: len(plain)] == seeds[0]
    assert [row.epsilon_lower for row in both[: len(plain)]] == [row.epsilon_lower for row in plain]
