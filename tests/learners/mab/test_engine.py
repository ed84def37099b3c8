"""The vectorized elimination (:mod:`learners.mab.engine`): releases and their ledgers, dropouts,
rewards and regret, against Chowdhury & Zhou (2023), Algorithm 1 and §7."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from accounting.accountant import Event
from accounting.mechanisms import AdditiveNoise, DistributedSum, PureDP
from accounting.noise import Laplace, Polya
from learners.environments import BernoulliArms, ClippedGaussianArms
from learners.errors import ParameterError, ParameterTypeError
from learners.mab import (
    make_learner,
    run,
)
from tests.learners.mab.support import PRIVATE, easy, protocol_params, run_reps


def test_bad_run_arguments() -> None:
    learner = make_learner("se")
    inst = BernoulliArms((0.2, 0.8))
    gen = [np.random.default_rng(0)]
    with pytest.raises(ParameterError, match="horizon"):
        run(learner, inst, 1, tapes=gen, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="horizon"):
        run(learner, BernoulliArms((0.1, 0.2, 0.3)), 2, tapes=gen, rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="tapes"):
        run(learner, inst, 10, tapes=[], rng=np.random.default_rng(0))
    with pytest.raises(ParameterError, match="instances"):
        run(learner, [inst, inst], 10, tapes=gen, rng=np.random.default_rng(0))
    with pytest.raises(ParameterTypeError, match="rng"):
        run(learner, inst, 10, tapes=gen, rng=0)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="learner"):
        run("se", inst, 10, tapes=gen, rng=np.random.default_rng(0))  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="route"):
        run(learner, inst, 10, tapes=gen, rng=np.random.default_rng(0), route="exact")
    with pytest.raises(ParameterError, match="delta"):
        run(learner, inst, 10, tapes=gen, rng=np.random.default_rng(0), delta=1.0)


# -- the run: releases and their ledgers (DESIGN: events emitted while the run runs) -----------


def test_partial_last_batch_is_never_released_nor_accounted() -> None:
    """Two identical arms and a huge radius: nothing is eliminated, so batches 1, 2, 3 (l = 2, 4,
    8) are complete and the 3 extra rounds of batch 4 (l = 16) are pulled but never released:
    no ledger of 16 users exists."""
    learner = make_learner("dist-dp-se", 0.01, growth=2)
    T = 2 * (2 + 4 + 8) + 3
    res = run_reps(learner, BernoulliArms((0.5, 0.5)), T, reps=3)
    assert res.released.tolist() == [6, 6, 6]
    assert res.batch_sizes == (2, 4, 8)
    assert sorted(res.ledgers) == [2, 4, 8]
    assert dict(res.releases) == {2: 6, 4: 6, 8: 6}  # 2 arms x 3 repetitions per batch
    assert [n for n, *_ in res.privacy.batches] == [2, 4, 8]
    assert res.rounds[-1] == T
    assert np.all(res.pseudo_regret == 0)
    with pytest.raises(ParameterError, match="batch_size"):
        res.ledger(16)


@pytest.mark.parametrize(("name", "kwargs"), [p for p in PRIVATE if p[0] != "dp-se"])
def test_ledger_of_a_batch_is_the_release_of_its_users(name: str, kwargs: dict[str, float]) -> None:
    """Each user is in one batch of one arm (Chowdhury & Zhou 2023, §2, footnote 4): a user's ledger
    holds exactly the events of that one release — the calibrated noise of its variant (Theorems
    1-6; App. H for the central and local ones) — and the releases counted per size are all the
    aggregates the run released."""
    eps, T = 0.5, 3000
    learner = make_learner(name, eps, **kwargs)
    res = run_reps(learner, easy(3), T, reps=3)
    assert sum(res.releases.values()) == res.released.sum()
    assert res.batch_sizes == tuple(sorted(res.ledgers))
    for n, ledger in res.ledgers.items():
        p = protocol_params(learner, n, T)
        share, g = p.share, p.g
        assert share is not None or p.server_noise is not None
        mechanisms = [e.mechanism for e in ledger.ledger]
        assert all(e.count == 1 for e in ledger.ledger)
        if name == "cdp-se":
            assert p.server_noise is not None
            assert mechanisms == [AdditiveNoise(p.server_noise, g)]
        elif name == "ldp-se":
            assert share is not None
            assert mechanisms == [AdditiveNoise(share, g)]
        else:
            assert share is not None
            assert mechanisms[0] == DistributedSum(share, n, g)
        if name == "shuffle-dp-se":  # Theorem 3: ε' = ε/2 for the sum, 2ε̂ = ε/2 for relaxed SecAgg
            relaxed = mechanisms[1]
            assert isinstance(relaxed, PureDP)
            assert relaxed.eps == eps / 2
        assert len(mechanisms) == (2 if name == "shuffle-dp-se" else 1)
    # the ledgers are copies: extending one does not change the run's record
    n = res.batch_sizes[0]
    before = res.ledger(n).ledger
    res.ledger(n).compose(Event(PureDP(1.0, source="a test")))
    assert res.ledger(n).ledger == before


def test_dpse_ledger_is_one_laplace_release() -> None:
    """DP-SE (Sajed & Sheffet 2019, as Chowdhury & Zhou (2023), §7, run it): each epoch adds
    Laplace(1/ε) to a sum of sensitivity 1."""
    learner = make_learner("dp-se", 0.5)
    res = run_reps(learner, easy(2), 20_000, reps=2)
    for ledger in res.ledgers.values():
        assert [e.mechanism for e in ledger.ledger] == [AdditiveNoise(Laplace(Fraction(2)), 1.0)]


# -- dropouts: estimate from the survivors ----------------------------------------------------


@pytest.mark.slow
def test_dropout_estimate_is_unbiased() -> None:
    """With dropouts the sum holds the survivors' rewards only: μ̂ = z / survivors is unbiased.

    One batch of l = 4 users per arm, 25% dropout (one user of each aggregate), 3000 repetitions:
    the mean estimate of each arm is its true mean within 5 standard errors. Dividing by l(b) = 4
    instead would shrink it by a quarter (0.7 -> 0.525, ~35 standard errors away).
    """
    arms = BernoulliArms((0.3, 0.7))
    # p_tau small: τ wide enough that the analyzer's modular decoding never fails (the ``τ`` of
    # Lemma 2's analyzer; at T = 9 the default p = 1/T lets a sum near 0 wrap around about once in
    # 150 aggregates)
    learner = make_learner("dist-dp-se", 8.0, noise="shares", dropout=0.25, p_tau=1e-9)
    R = 3000
    res = run_reps(learner, arms, 2 * 4 + 1, reps=R)  # batch 1 complete, batch 2 partial
    assert dict(res.releases) == {4: 2 * R}
    assert res.dropped.tolist() == [2] * R  # floor(0.25 * 4) = 1 per aggregate, 2 arms
    est = res.estimates
    for a, mu in enumerate(arms.means):
        se = est[:, a].std(ddof=1) / math.sqrt(R)
        assert abs(est[:, a].mean() - mu) < 5 * se, (a, est[:, a].mean(), mu, se)


def test_dropouts_are_topped_up_and_accounted_as_released() -> None:
    """With 20% dropouts the survivors draw exactly the missing shares, so every release
    carries the noise of all n shares: the ledger holds the calibrated n-user sum, whose ε is the
    target (Theorem 1: Pólya(1/n, e^{-ε/g}) shares sum to Lap_Z(g/ε), ε-DP)."""
    eps = 0.5
    learner = make_learner("dist-dp-se", eps, growth=2, noise="shares", dropout=0.2)
    T = 2 * (2 + 4 + 8 + 16) + 5
    res = run_reps(learner, BernoulliArms((0.3, 0.7)), T, reps=4)
    assert res.dropped.sum() > 0
    assert np.array_equal(res.topped_up, res.dropped)  # never under-noised
    for n, ledger in res.ledgers.items():
        p = protocol_params(learner, n, T)
        assert isinstance(p.share, Polya)
        assert [e.mechanism for e in ledger.ledger] == [DistributedSum(p.share, n, p.g)]
        # n Pólya(1/n, β) differences sum to Lap_Z with decay β (Fact 1), which is exactly
        # (-g ln β)-DP for sensitivity g: the calibrated ε, not that of the survivors' shares
        beta = float(p.share.beta)
        assert float(ledger.epsilon(1e-6, route="pure")) == pytest.approx(-p.g * math.log(beta), rel=1e-9)
    assert res.privacy.epsilon <= eps * (1 + 1e-12)
    assert res.privacy.epsilon == pytest.approx(eps, rel=1e-9)


def test_central_and_local_dropouts_need_no_top_up() -> None:
    for name in ("cdp-se", "ldp-se"):
        learner = make_learner(name, 0.5, growth=2, noise="shares", dropout=0.2)
        res = run_reps(learner, BernoulliArms((0.3, 0.7)), 200, reps=2)
        assert res.dropped.sum() > 0
        assert res.topped_up.sum() == 0


# -- rewards and regret ------------------------------------------------------------------------


def test_same_seeds_same_numbers() -> None:
    learner = make_learner("dist-rdp-se", 0.5, scaling=10)
    a = run_reps(learner, easy(3), 30_000, reps=3)
    b = run_reps(learner, easy(3), 30_000, reps=3)
    assert np.array_equal(a.pseudo_regret, b.pseudo_regret)
    assert np.array_equal(a.realized_regret, b.realized_regret)


def test_common_random_numbers_across_algorithms() -> None:
    """Same tape seed, same reward table: SE and Dist-DP-SE pull the same arms in the same order
    during batch 1 (4 users per arm), so their realized regrets agree round by round there."""
    inst = ClippedGaussianArms((0.3, 0.5, 0.6))
    T = 300
    se = run_reps(make_learner("se"), inst, T, reps=4, checkpoints=T)
    dp = run_reps(make_learner("dist-dp-se", 1.0), inst, T, reps=4, checkpoints=T)
    first = 3 * 4
    assert np.array_equal(se.realized_regret[:, :first], dp.realized_regret[:, :first])
    assert np.any(se.realized_regret[:, :first] != 0)


def _clipped_variance(mu: float, sd: float = 0.1) -> float:
    """Var[clip(N(μ, sd²), 0, 1)] by quadrature (an independent reference)."""
    law = stats.norm(mu, sd)
    m1 = integrate.quad(lambda x: x * law.pdf(x), 0, 1)[0] + law.sf(1)
    m2 = integrate.quad(lambda x: x * x * law.pdf(x), 0, 1)[0] + law.sf(1)
    return float(m2 - m1 * m1)


@pytest.mark.slow
def test_realized_regret_draws_independent_rewards_per_arm() -> None:
    """The realized regret of Chowdhury & Zhou (2023), §7 (as the authors' code draws it) uses one
    reward per arm per round, independent across arms.

    One batch (l = 4) of arm 0 then arm 1 (the best): the realized regret after it is
    Σ_{t<4} r_t(1) - r_t(0), with mean 4Δ and variance 4(v0 + v1) when the two arms' rewards are
    independent — not ~0, as a reward shared by all arms at a round would give.
    """
    inst = ClippedGaussianArms((0.3, 0.6))
    R = 4000
    res = run_reps(make_learner("se"), inst, 8, reps=R, checkpoints=8)
    final = res.realized_regret[:, -1]
    gap = inst.means[1] - inst.means[0]
    variance = 4 * (_clipped_variance(0.3) + _clipped_variance(0.6))
    assert abs(final.mean() - 4 * gap) < 5 * math.sqrt(variance / R)
    # the sample variance of R draws: within 5 standard errors (normal: Var(s²) = 2σ⁴/(R-1))
    assert final.var(ddof=1) == pytest.approx(variance, abs=5 * variance * math.sqrt(2 / (R - 1)))
    assert np.array_equal(res.pseudo_regret[:, -1], np.full(R, 4 * gap))


def test_realized_regret_is_unbiased_for_pseudo_regret() -> None:
    res = run_reps(make_learner("dist-dp-se", 1.0), easy(20), 50_000, reps=20)
    diff = res.realized_regret[:, -1] - res.pseudo_regret[:, -1]
    assert abs(diff.mean()) < 4 * diff.std(ddof=1) / math.sqrt(diff.size)
    assert np.all(np.diff(res.pseudo_regret, axis=1) >= 0)


def test_forgetting_switch_changes_the_estimator() -> None:
    forget = run_reps(make_learner("dist-dp-se", 0.5), easy(4), 50_000, reps=4)
    keep = run_reps(make_learner("dist-dp-se", 0.5, forgetting=False), easy(4), 50_000, reps=4)
    assert not np.array_equal(forget.pseudo_regret, keep.pseudo_regret)
    assert np.all(keep.final_arms >= 1)


@pytest.mark.slow
def test_qualitative_findings_of_section_7() -> None:
    """The findings of Chowdhury & Zhou (2023), §7 (Figures 1-4) at reduced scale (easy instance, T =
    2e5, 12 repetitions, ε = 0.1, l = 2^b): RDP with s = 100 beats pure Dist-DP-SE; discrete
    Gaussian beats Skellam; CDP-SE ≈ Dist-DP-SE; LDP-SE is far worse than every other variant."""
    T, reps = 200_000, 12
    final = {}
    for name, kwargs in [*PRIVATE, ("dist-rdp-se", {"scaling": 100})]:
        learner = make_learner(name, 0.1, growth=2, **kwargs)
        res = run_reps(learner, easy(reps), T, reps)
        final[learner.label] = res.pseudo_regret[:, -1].mean() / T
    assert final["Dist-RDP-SE(s=100)"] < final["Dist-DP-SE"]
    assert final["Dist-RDP-SE(s=10)"] < final["Dist-DP-SE"]
    assert final["Dist-CDP-SE(s=10)"] < final["Dist-RDP-SE(s=10)"]
    assert final["CDP-SE"] == pytest.approx(final["Dist-DP-SE"], rel=0.25)
    figure4 = ["CDP-SE", "Dist-DP-SE", "Dist-RDP-SE(s=10)", "Dist-CDP-SE(s=10)"]
    assert final["LDP-SE"] > 2.5 * max(final[k] for k in figure4)
    assert final["LDP-SE"] > max(v for k, v in final.items() if k != "LDP-SE")


@pytest.mark.slow
def test_regret_over_log_horizon_flattens() -> None:
    """Theorems 1-6 (Chowdhury & Zhou 2023): for a fixed instance Reg(T)/ln T is bounded as T grows,
    while Reg(T)/T vanishes."""
    inst = ClippedGaussianArms((0.45, 0.5, 0.52, 0.55))
    learner = make_learner("dist-dp-se", 1.0)
    ratio = []
    for T in (10**5, 10**6, 10**7):
        res = run_reps(learner, inst, T, reps=8)
        ratio.append(res.pseudo_regret[:, -1].mean() / math.log(T))
    assert ratio[2] < 1.3 * ratio[1]
    assert ratio[2] * math.log(10**7) < 0.01 * 10**7  # far from linear regret
    assert ratio[1] < 3 * ratio[0]


def test_exact_sampling_runs_on_the_user_level_path() -> None:
    learner = make_learner("dist-dp-se", 1.0, growth=2, noise="shares", exact=True)
    res = run_reps(learner, BernoulliArms((0.3, 0.7)), 60, 1)
    assert res.released.sum() > 0
    with pytest.raises(ParameterError, match="exact"):
        make_learner("dist-dp-se", 1.0, exact=True)
