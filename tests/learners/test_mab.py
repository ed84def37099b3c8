"""Batched successive elimination in every variant (spec §4, §6, §7.5): decisions, privacy, noise."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from accounting import bounds, conversion
from accounting.accountant import Accountant, Event
from accounting.calibration import ProtocolParameters, Variant, protocol_parameters
from accounting.mechanisms import AdditiveNoise, DistributedSum, PureDP
from accounting.noise import DiscreteGaussian, Laplace, Polya, Skellam
from learners.environments import BernoulliArms, ClippedGaussianArms, MABInstance
from learners.errors import ParameterError, ParameterTypeError
from learners.mab import (
    ALGORITHMS,
    Learner,
    RunResult,
    confidence_radius,
    make_learner,
    privacy_of,
    run,
)
from learners.mab.radius import dpse_size
from learners.mab.recipes import total_noise

PRIVATE = [
    ("dist-dp-se", {}),
    ("dist-rdp-se", {"scale": 10}),
    ("shuffle-dp-se", {}),
    ("dist-cdp-se", {"scale": 10}),
    ("cdp-se", {}),
    ("ldp-se", {}),
    ("dp-se", {}),
]


def _easy(reps: int, seed: int = 0) -> list[ClippedGaussianArms]:
    """The easy instance of spec §7.2, one per repetition (the paper's recipe: means per run)."""
    return [
        ClippedGaussianArms(tuple(0.25 + 0.5 * np.random.RandomState(seed + r).rand(10))) for r in range(reps)
    ]


def _tapes(reps: int, seed: int = 1) -> list[np.random.Generator]:
    return [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r,))) for r in range(reps)]


def _run(
    learner: Learner,
    instances: MABInstance | list[ClippedGaussianArms],
    T: int,
    reps: int,
    seed: int = 1,
    checkpoints: int = 50,
) -> RunResult:
    return run(
        learner,
        instances,
        T,
        tapes=_tapes(reps, seed),
        rng=np.random.default_rng(seed + 100),
        checkpoints=checkpoints,
    )


def _params(learner: Learner, n: int, T: int) -> ProtocolParameters:
    assert learner.variant is not None
    assert learner.epsilon is not None
    return protocol_parameters(learner.variant, learner.epsilon, n, T, scale=learner.scale)


def _gaussian_epsilon(ratio: float, delta: float) -> float:
    """ε(δ) of the Gaussian mechanism with sensitivity/σ = ``ratio`` (Balle & Wang 2018, analytic)."""
    return bounds.gaussian_epsilon_analytic(1 / ratio, delta)


# -- settings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"name": "ucb"}, "algorithm"),
        ({"name": "dist-dp-se", "epsilon": 0.0}, "epsilon"),
        ({"name": "dist-dp-se", "epsilon": -1.0}, "epsilon"),
        ({"name": "dist-dp-se"}, "epsilon"),
        ({"name": "se", "epsilon": 1.0}, "epsilon"),
        ({"name": "dist-rdp-se", "epsilon": 1.0}, "scale"),
        ({"name": "dist-rdp-se", "epsilon": 1.0, "scale": 0.5}, "scale"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "scale": 10}, "scale"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "growth": 3}, "growth"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "growth": 4.5}, "growth"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "p_beta": 1.5}, "p_beta"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "p_tau": 0.0}, "p_tau"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "crs": 0}, "crs"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "noise": "fast"}, "noise"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "dropout": 0.1}, "dropout"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "noise": "shares", "dropout": 1.0}, "dropout"),
        ({"name": "dist-dp-se", "epsilon": 1.0, "batches": 3}, "batches"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises((ParameterError, ParameterTypeError)) as err:
        make_learner(**kwargs)  # type: ignore[arg-type]
    assert err.value.name == field


def test_labels_defaults_and_variants() -> None:
    assert make_learner("dist-rdp-se", 0.5, scale=10).label == "Dist-RDP-SE(s=10)"
    assert make_learner("dp-se", 0.5).eta == 2  # DP-SE's dc = 2 (spec §4.7)
    assert make_learner("dist-dp-se", 0.5).eta == 4  # l(b) = 4^b in Figures 1-3, 5
    # an integral float is the integer, as accounting's validator says
    assert make_learner("dist-dp-se", 0.5, growth=2.0).eta == 2
    # spec §7.1 and §4.4: the algorithm names of the experiments and the variants they run
    expected = {
        "dist-dp-se": (Variant.POLYA_SHARES, 1),
        "dist-rdp-se": (Variant.SKELLAM_SHARES, 2),
        "shuffle-dp-se": (Variant.SHUFFLED_POLYA, 3),
        "dist-cdp-se": (Variant.DISCRETE_GAUSSIAN_SHARES, 4),
        "cdp-se": (Variant.CENTRAL_LAPLACE, 5),
        "ldp-se": (Variant.LOCAL_LAPLACE, 6),
    }
    for name, (variant, theorem) in expected.items():
        assert ALGORITHMS[name].variant is variant
        assert variant.theorem == theorem
    assert ALGORITHMS["dp-se"].variant is None
    assert ALGORITHMS["se"].variant is None


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


# -- formulas ----------------------------------------------------------------------------------


def test_dpse_epoch_length_matches_the_spec_example() -> None:
    # Spec §4.7: K = 10, ε = 0.1, δ = 0.1, epoch 1: R_1 = 1 + int(max(855.6, 958.6)) = 959.
    learner = make_learner("dp-se", 0.1)
    assert dpse_size(learner, np.array([10.0]), 1).tolist() == [959]


@pytest.mark.parametrize(("name", "kwargs"), [p for p in PRIVATE if p[0] != "dp-se"])
def test_confidence_radius_is_equation_2(name: str, kwargs: dict[str, float]) -> None:
    """β(b) of eq. (2) with the (σ, h) of each theorem (spec §4.3 table), recomputed by hand."""
    eps, n, b, k, p, T = 0.5, 4**5, 5, 7, 0.1, 10**6
    learner = make_learner(name, eps, **kwargs)
    l4, l2 = math.log(4 * k * b * b / p), math.log(2 * k * b * b / p)
    g = _params(learner, n, T).g
    e = eps / 2 if name == "shuffle-dp-se" else eps
    noise = {
        "dist-dp-se": math.sqrt(2) / e * math.sqrt(l2) + l2 / e,
        "shuffle-dp-se": math.sqrt(2) / e * math.sqrt(l2) + l2 / e,
        "cdp-se": math.sqrt(2) / e * math.sqrt(l2) + l2 / e,
        "dist-rdp-se": (2 / e + math.sqrt(2) / (10 * e)) * math.sqrt(l2) + math.sqrt(2) / g * l2,
        "dist-cdp-se": math.sqrt(2) * (1 + 1 / 10) / e * math.sqrt(l2),
        "ldp-se": math.sqrt(2) / e * math.sqrt(l2) + 1.6 / e * max(math.sqrt(2 * n * l2), 2 * l2),
    }[name]
    expected = math.sqrt(l4 / (2 * n)) + noise / n
    assert confidence_radius(learner, [k], b, n, T)[0] == pytest.approx(expected, rel=1e-12)


def test_non_private_radius_is_hoeffding() -> None:
    learner = make_learner("se", crs=2.0)
    got = confidence_radius(learner, [3], 2, 16, 1000)[0]
    assert got == pytest.approx(2 * math.sqrt(math.log(4 * 3 * 4 / 0.1) / 32))


@pytest.mark.parametrize(
    ("name", "kwargs"), [("dist-dp-se", {}), ("dist-rdp-se", {"scale": 10}), ("dist-cdp-se", {"scale": 3})]
)
def test_total_noise_has_the_law_of_the_summed_shares(name: str, kwargs: dict[str, float]) -> None:
    """The fast path draws the total; its law is the n-fold convolution of the share (Fact 1)."""
    learner = make_learner(name, 0.5, **kwargs)
    n = 64
    p = _params(learner, n, 10**4)
    assert p.share is not None
    draws = total_noise(learner, p, np.random.default_rng(3), 40_000).astype(np.float64)
    variance = DistributedSum(p.share, n, p.g).total_noise.variance()
    assert abs(draws.mean()) < 5 * math.sqrt(variance / draws.size)
    # the sample variance is within 5 standard errors (kurtosis <= 6 for these laws)
    assert draws.var() == pytest.approx(variance, rel=5 * math.sqrt(8 / draws.size))


def test_local_total_noise_is_n_discrete_laplace_shares() -> None:
    learner = make_learner("ldp-se", 0.5)
    n = 50
    p = protocol_parameters(Variant.LOCAL_LAPLACE, 0.5, n, 10**4)
    assert p.share is not None
    draws = total_noise(learner, p, np.random.default_rng(4), 40_000).astype(np.float64)
    shares = p.share.sample(np.random.default_rng(5), (4_000, n)).sum(axis=1).astype(np.float64)
    assert draws.var() == pytest.approx(n * p.share.variance(), rel=0.05)
    assert shares.var() == pytest.approx(n * p.share.variance(), rel=0.15)


# -- the run: releases and their ledgers (DESIGN: events emitted while the run runs) -----------


def test_partial_last_batch_is_never_released_nor_accounted() -> None:
    """Two identical arms and a huge radius: nothing is eliminated, so batches 1, 2, 3 (l = 2, 4,
    8) are complete and the 3 extra rounds of batch 4 (l = 16) are pulled but never released:
    no ledger of 16 users exists."""
    learner = make_learner("dist-dp-se", 0.01, growth=2)
    T = 2 * (2 + 4 + 8) + 3
    res = _run(learner, BernoulliArms((0.5, 0.5)), T, reps=3)
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
    """Each user is in one batch of one arm (spec §1.2, footnote 4): a user's ledger holds exactly
    the events of that one release — the calibrated noise of its variant (spec §3.7, §4.4-§4.6) —
    and the releases counted per size are all the aggregates the run released."""
    eps, T = 0.5, 3000
    learner = make_learner(name, eps, **kwargs)
    res = _run(learner, _easy(3), T, reps=3)
    assert sum(res.releases.values()) == res.released.sum()
    assert res.batch_sizes == tuple(sorted(res.ledgers))
    for n, ledger in res.ledgers.items():
        p = _params(learner, n, T)
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
    """DP-SE (spec §4.7): each epoch adds Laplace(1/ε) to a sum of sensitivity 1."""
    learner = make_learner("dp-se", 0.5)
    res = _run(learner, _easy(2), 20_000, reps=2)
    for ledger in res.ledgers.values():
        assert [e.mechanism for e in ledger.ledger] == [AdditiveNoise(Laplace(Fraction(2)), 1.0)]


# -- dropouts: estimate from the survivors (defect 1) -------------------------------------------


@pytest.mark.slow
def test_dropout_estimate_is_unbiased() -> None:
    """With dropouts the sum holds the survivors' rewards only: μ̂ = z / survivors is unbiased.

    One batch of l = 4 users per arm, 25% dropout (one user of each aggregate), 3000 repetitions:
    the mean estimate of each arm is its true mean within 5 standard errors. Dividing by l(b) = 4
    instead would shrink it by a quarter (0.7 -> 0.525, ~35 standard errors away).
    """
    arms = BernoulliArms((0.3, 0.7))
    # p_tau small: τ wide enough that the analyzer's modular decoding never fails (spec §9.3; at
    # T = 9 the default p = 1/T lets a sum near 0 wrap around about once in 150 aggregates)
    learner = make_learner("dist-dp-se", 8.0, noise="shares", dropout=0.25, p_tau=1e-9)
    R = 3000
    res = _run(learner, arms, 2 * 4 + 1, reps=R)  # batch 1 complete, batch 2 partial
    assert dict(res.releases) == {4: 2 * R}
    assert res.dropped.tolist() == [2] * R  # floor(0.25 * 4) = 1 per aggregate, 2 arms
    est = res.estimates
    for a, mu in enumerate(arms.means):
        se = est[:, a].std(ddof=1) / math.sqrt(R)
        assert abs(est[:, a].mean() - mu) < 5 * se, (a, est[:, a].mean(), mu, se)


def test_dropouts_are_topped_up_and_accounted_as_released() -> None:
    """Spec §9.5: with 20% dropouts the survivors draw exactly the missing shares, so every release
    carries the noise of all n shares: the ledger holds the calibrated n-user sum, whose ε is the
    target (Theorem 1: Pólya(1/n, e^{-ε/g}) shares sum to Lap_Z(g/ε), ε-DP)."""
    eps = 0.5
    learner = make_learner("dist-dp-se", eps, growth=2, noise="shares", dropout=0.2)
    T = 2 * (2 + 4 + 8 + 16) + 5
    res = _run(learner, BernoulliArms((0.3, 0.7)), T, reps=4)
    assert res.dropped.sum() > 0
    assert np.array_equal(res.topped_up, res.dropped)  # never under-noised
    for n, ledger in res.ledgers.items():
        p = _params(learner, n, T)
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
        res = _run(learner, BernoulliArms((0.3, 0.7)), 200, reps=2)
        assert res.dropped.sum() > 0
        assert res.topped_up.sum() == 0


# -- the privacy report: the ledgers answered; the theorem only where it holds (defect 2) ------


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kwargs"), PRIVATE)
def test_privacy_report_is_the_ledgers_and_the_theorem(name: str, kwargs: dict[str, float]) -> None:
    """At ε = 0.5 every theorem's hypotheses hold: the report gives the ledger's certified ε and
    the theorem's closed form, recomputed here from the papers' formulas."""
    eps, T, delta = 0.5, 20_000, 1e-6
    learner = make_learner(name, eps, **kwargs)
    res = _run(learner, _easy(2), T, reps=2)
    priv = res.privacy
    assert res.released.min() > 0
    assert priv.theorem_holds
    assert priv.message == ""
    assert priv.epsilon == max(e for _, e, _ in priv.batches)
    if name in ("dist-dp-se", "shuffle-dp-se", "cdp-se", "ldp-se", "dp-se"):
        # pure ε-DP: the certified ε is the target, no slack is wasted, and the theorem says ε
        assert priv.notion == "pure"
        assert priv.delta == 0
        assert priv.theorem_epsilon == eps
        # (the accountant rounds outward: an exact ε/2 + ε/2 may print one ulp above ε)
        assert eps * (1 - 1e-9) <= priv.epsilon <= eps * (1 + 1e-12)
    else:
        # The exact ledger of a Skellam or discrete Gaussian sum with total variance ≈ (g/ε)² and
        # sensitivity g is within 1% of the Gaussian mechanism with Δ/σ = ε, and below the
        # theorem's closed form, which Lemma 3 (Theorem 2) or Lemma 4 (Theorem 4) gives.
        assert priv.delta == delta
        assert priv.epsilon == pytest.approx(_gaussian_epsilon(eps, delta), rel=0.01)
        closed = []
        for n in res.batch_sizes:
            p = _params(learner, n, T)
            if name == "dist-rdp-se":
                # Lemma 3 (AKL 2021 Thm 3.5) at integer orders, converted by Lemma 10 (spec §3.2)
                assert isinstance(p.share, Skellam)
                variance, g = float(p.g) ** 2 / eps**2 * (1 - 1e-12), p.g

                def lemma3(alpha: float, variance: float = variance, g: int = g) -> float:
                    return bounds.skellam_rdp_akl(int(alpha), variance, g)

                want, _ = conversion.optimize_rdp_order(lemma3, delta, alpha_min=2, integer=True)
            else:
                # Lemma 4 (KLS 2021a Prop. 13), converted by CKS 2020 (spec §3.3)
                assert isinstance(p.share, DiscreteGaussian)
                rho = bounds.sum_discrete_gaussians_rho_kls(float(p.share.sigma), n, p.g)
                want = conversion.zcdp_to_dp_cks(rho, delta)
            closed.append(want)
        assert priv.theorem_epsilon is not None
        assert priv.theorem_epsilon == pytest.approx(max(closed), rel=1e-6)
        assert priv.epsilon < priv.theorem_epsilon
        assert priv.notion == ("rdp" if name == "dist-rdp-se" else "zcdp")
        assert (priv.rho is not None) is (name == "dist-cdp-se")
    if learner.variant is None:
        assert res.bits == 0
    else:
        bits = [_params(learner, n, T).bits for n in res.batch_sizes]
        assert res.bits == max(bits)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "kwargs", "theorem"),
    [("cdp-se", {}, 5), ("ldp-se", {}, 6), ("dist-cdp-se", {"scale": 10}, 4)],
)
def test_theorems_4_to_6_are_not_claimed_at_epsilon_one_or_more(
    name: str, kwargs: dict[str, float], theorem: int
) -> None:
    """Theorems 4, 5 and 6 assume ε < 1 (spec §3.3, §4.4, §9.5). At ε = 2 the report says so, gives
    no closed form of the theorem, and reports the guarantee of what was released: the discrete
    Laplace mechanism with scale g/ε is exactly ε-DP (central, and per message in the local
    model); the discrete Gaussian sum is within 1% of the Gaussian mechanism with Δ/σ = ε."""
    eps, delta = 2.0, 1e-6
    learner = make_learner(name, eps, **kwargs)
    res = _run(learner, _easy(2), 5_000, reps=2)
    priv = res.privacy
    assert not priv.theorem_holds
    assert priv.theorem == theorem
    assert priv.theorem_epsilon is None
    assert priv.rho is None
    assert f"Theorem {theorem} assumes ε < 1" in priv.message
    if name == "dist-cdp-se":
        assert priv.epsilon == pytest.approx(_gaussian_epsilon(eps, delta), rel=0.01)
    else:
        assert priv.epsilon == pytest.approx(eps, rel=1e-12)


def test_theorems_1_to_3_hold_at_any_epsilon() -> None:
    res = _run(make_learner("dist-dp-se", 4.0), _easy(2), 5_000, reps=2)
    assert res.privacy.theorem_holds
    assert res.privacy.theorem_epsilon == 4.0
    assert res.privacy.epsilon == pytest.approx(4.0, rel=1e-12)


def test_a_ledger_the_accountant_cannot_sum_is_answered_by_the_published_lemma() -> None:
    """A Skellam sum of variance ~ 4e10 is too wide for the exact routes: the report falls back to
    Lemma 3 (AKL 2021 Thm 3.5), the published bound on that very mechanism, and says so."""
    learner = make_learner("dist-rdp-se", 1.0, scale=100)
    n, T = 4**10, 10**7
    p = _params(learner, n, T)
    assert p.share is not None
    ledger = Accountant().compose(DistributedSum(p.share, n, p.g))
    priv = privacy_of(learner, {n: ledger}, 1e-6)
    ((size, eps, route),) = priv.batches
    assert size == n
    assert route == "published:skellam-akl"
    assert "no exact route of the accountant can answer" in priv.message
    assert priv.theorem_epsilon is not None
    assert eps == pytest.approx(priv.theorem_epsilon, rel=1e-12)
    # s = 100: Lemma 3 is nearly the Gaussian RDP curve α ε²/2, converted by Lemma 10; an upper
    # bound on the exact ε, which is nearly the Gaussian mechanism's (analytic) ε
    gaussian_rdp, _ = conversion.optimize_rdp_order(lambda a: a / 2, 1e-6, alpha_min=2, integer=True)
    assert _gaussian_epsilon(1.0, 1e-6) < eps
    assert eps == pytest.approx(gaussian_rdp, rel=1e-3)


def test_published_route_on_request() -> None:
    """route="published": the ledgers answered by Lemma 4 (cheap), which is the theorem's form."""
    learner = make_learner("dist-cdp-se", 0.5, scale=10)
    res = run(learner, _easy(2), 5_000, tapes=_tapes(2), rng=np.random.default_rng(0), route="published")
    assert {route for *_, route in res.privacy.batches} == {"published"}
    assert res.privacy.epsilon == pytest.approx(res.privacy.theorem_epsilon, rel=1e-12)


def test_non_private_reports_no_privacy() -> None:
    res = _run(make_learner("se"), BernoulliArms((0.4, 0.6)), 500, reps=2)
    assert res.privacy.notion == "none"
    assert math.isinf(res.privacy.epsilon)
    assert res.ledgers == {}
    assert privacy_of(make_learner("dist-dp-se", 1.0), {}).epsilon == 0.0


# -- rewards and regret (defect 3) --------------------------------------------------------------


def test_same_seeds_same_numbers() -> None:
    learner = make_learner("dist-rdp-se", 0.5, scale=10)
    a = _run(learner, _easy(3), 30_000, reps=3)
    b = _run(learner, _easy(3), 30_000, reps=3)
    assert np.array_equal(a.pseudo_regret, b.pseudo_regret)
    assert np.array_equal(a.realized_regret, b.realized_regret)


def test_common_random_numbers_across_algorithms() -> None:
    """Same tape seed, same reward table: SE and Dist-DP-SE pull the same arms in the same order
    during batch 1 (4 users per arm), so their realized regrets agree round by round there."""
    inst = ClippedGaussianArms((0.3, 0.5, 0.6))
    T = 300
    se = _run(make_learner("se"), inst, T, reps=4, checkpoints=T)
    dp = _run(make_learner("dist-dp-se", 1.0), inst, T, reps=4, checkpoints=T)
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
    """Spec §7.1: the realized regret uses one reward per arm per round, independent across arms.

    One batch (l = 4) of arm 0 then arm 1 (the best): the realized regret after it is
    Σ_{t<4} r_t(1) - r_t(0), with mean 4Δ and variance 4(v0 + v1) when the two arms' rewards are
    independent — not ~0, as a reward shared by all arms at a round would give.
    """
    inst = ClippedGaussianArms((0.3, 0.6))
    R = 4000
    res = _run(make_learner("se"), inst, 8, reps=R, checkpoints=8)
    final = res.realized_regret[:, -1]
    gap = inst.means[1] - inst.means[0]
    variance = 4 * (_clipped_variance(0.3) + _clipped_variance(0.6))
    assert abs(final.mean() - 4 * gap) < 5 * math.sqrt(variance / R)
    # the sample variance of R draws: within 5 standard errors (normal: Var(s²) = 2σ⁴/(R-1))
    assert final.var(ddof=1) == pytest.approx(variance, abs=5 * variance * math.sqrt(2 / (R - 1)))
    assert np.array_equal(res.pseudo_regret[:, -1], np.full(R, 4 * gap))


def test_realized_regret_is_unbiased_for_pseudo_regret() -> None:
    res = _run(make_learner("dist-dp-se", 1.0), _easy(20), 50_000, reps=20)
    diff = res.realized_regret[:, -1] - res.pseudo_regret[:, -1]
    assert abs(diff.mean()) < 4 * diff.std(ddof=1) / math.sqrt(diff.size)
    assert np.all(np.diff(res.pseudo_regret, axis=1) >= 0)


def test_forgetting_switch_changes_the_estimator() -> None:
    forget = _run(make_learner("dist-dp-se", 0.5), _easy(4), 50_000, reps=4)
    keep = _run(make_learner("dist-dp-se", 0.5, forgetting=False), _easy(4), 50_000, reps=4)
    assert not np.array_equal(forget.pseudo_regret, keep.pseudo_regret)
    assert np.all(keep.final_arms >= 1)


@pytest.mark.slow
def test_qualitative_findings_of_section_7_5() -> None:
    """Spec §7.5 at reduced scale (easy instance, T = 2e5, 12 repetitions, ε = 0.1, l = 2^b):
    RDP with s = 100 beats pure Dist-DP-SE; discrete Gaussian beats Skellam; CDP-SE ≈ Dist-DP-SE;
    LDP-SE is far worse than every other variant."""
    T, reps = 200_000, 12
    final = {}
    for name, kwargs in [*PRIVATE, ("dist-rdp-se", {"scale": 100})]:
        learner = make_learner(name, 0.1, growth=2, **kwargs)
        res = _run(learner, _easy(reps), T, reps)
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
    """Spec §6: for a fixed instance Reg(T)/ln T is bounded as T grows, while Reg(T)/T vanishes."""
    inst = ClippedGaussianArms((0.45, 0.5, 0.52, 0.55))
    learner = make_learner("dist-dp-se", 1.0)
    ratio = []
    for T in (10**5, 10**6, 10**7):
        res = _run(learner, inst, T, reps=8)
        ratio.append(res.pseudo_regret[:, -1].mean() / math.log(T))
    assert ratio[2] < 1.3 * ratio[1]
    assert ratio[2] * math.log(10**7) < 0.01 * 10**7  # far from linear regret
    assert ratio[1] < 3 * ratio[0]


def test_exact_sampling_runs_on_the_user_level_path() -> None:
    learner = make_learner("dist-dp-se", 1.0, growth=2, noise="shares", exact=True)
    res = _run(learner, BernoulliArms((0.3, 0.7)), 60, 1)
    assert res.released.sum() > 0
    with pytest.raises(ParameterError, match="exact"):
        make_learner("dist-dp-se", 1.0, exact=True)
