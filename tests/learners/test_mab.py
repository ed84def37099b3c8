"""Batched successive elimination in every variant (spec §4, §6, §7.5): decisions, privacy, noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting import bounds, conversion
from accounting.calibration import Variant, protocol_parameters
from accounting.mechanisms import DistributedSum
from accounting.noise import DiscreteGaussian
from learners.environments import BernoulliArms, ClippedGaussianArms, MABInstance
from learners.errors import ParameterError, ParameterTypeError
from learners.mab import (
    ALGORITHMS,
    Learner,
    RunResult,
    _dpse_size,
    _total_noise,
    confidence_radius,
    make_learner,
    privacy_of,
    run,
)

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


def _run(
    learner: Learner, instances: MABInstance | list[ClippedGaussianArms], T: int, reps: int, seed: int = 1
) -> RunResult:
    tapes = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r,))) for r in range(reps)]
    return run(learner, instances, T, tapes=tapes, rng=np.random.default_rng(seed + 100), checkpoints=50)


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


def test_labels_defaults_and_theorems() -> None:
    assert make_learner("dist-rdp-se", 0.5, scale=10).label == "Dist-RDP-SE(s=10)"
    assert make_learner("dp-se", 0.5).eta == 2  # DP-SE's dc = 2 (spec §4.7)
    assert make_learner("dist-dp-se", 0.5).eta == 4  # l(b) = 4^b in Figures 1-3, 5
    assert [ALGORITHMS[n].theorem for n in ("dist-dp-se", "dist-rdp-se", "shuffle-dp-se")] == [1, 2, 3]
    assert [ALGORITHMS[n].theorem for n in ("dist-cdp-se", "cdp-se", "ldp-se", "dp-se", "se")] == [
        4,
        5,
        6,
        None,
        None,
    ]


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


# -- formulas ----------------------------------------------------------------------------------


def test_dpse_epoch_length_matches_the_spec_example() -> None:
    # Spec §4.7: K = 10, ε = 0.1, δ = 0.1, epoch 1: R_1 = 1 + int(max(855.6, 958.6)) = 959.
    learner = make_learner("dp-se", 0.1)
    assert _dpse_size(learner, np.array([10.0]), 1).tolist() == [959]


@pytest.mark.parametrize(("name", "kwargs"), [p for p in PRIVATE if p[0] != "dp-se"])
def test_confidence_radius_is_equation_2(name: str, kwargs: dict[str, float]) -> None:
    """β(b) of eq. (2) with the (σ, h) of each theorem (spec §4.3 table), recomputed by hand."""
    eps, n, b, k, p, T = 0.5, 4**5, 5, 7, 0.1, 10**6
    learner = make_learner(name, eps, **kwargs)
    l4, l2 = math.log(4 * k * b * b / p), math.log(2 * k * b * b / p)
    g = protocol_parameters(Variant.from_theorem(learner.theorem or 0), eps, n, T, scale=learner.scale).g
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
    p = protocol_parameters(Variant.from_theorem(learner.theorem or 0), 0.5, n, 10**4, scale=learner.scale)
    assert p.share is not None
    draws = _total_noise(learner, p, np.random.default_rng(3), 40_000).astype(np.float64)
    variance = DistributedSum(p.share, n, p.g).total_noise.variance()
    assert abs(draws.mean()) < 5 * math.sqrt(variance / draws.size)
    # the sample variance is within 5 standard errors (kurtosis <= 6 for these laws)
    assert draws.var() == pytest.approx(variance, rel=5 * math.sqrt(8 / draws.size))


def test_local_total_noise_is_n_discrete_laplace_shares() -> None:
    learner = make_learner("ldp-se", 0.5)
    n = 50
    p = protocol_parameters(Variant.from_theorem(6), 0.5, n, 10**4)
    assert p.share is not None
    draws = _total_noise(learner, p, np.random.default_rng(4), 40_000).astype(np.float64)
    shares = p.share.sample(np.random.default_rng(5), (4_000, n)).sum(axis=1).astype(np.float64)
    assert draws.var() == pytest.approx(n * p.share.variance(), rel=0.05)
    assert shares.var() == pytest.approx(n * p.share.variance(), rel=0.15)


# -- the run -----------------------------------------------------------------------------------


def test_partial_last_batch_is_never_released() -> None:
    """Two identical arms and a huge radius: nothing is eliminated, so batches 1, 2, 3 (l = 2, 4,
    8) are complete and the 3 extra rounds of batch 4 are pulled but never released."""
    learner = make_learner("dist-dp-se", 0.01, growth=2)
    T = 2 * (2 + 4 + 8) + 3
    res = _run(learner, BernoulliArms((0.5, 0.5)), T, reps=3)
    assert res.released.tolist() == [6, 6, 6]
    assert res.batch_sizes == (2, 4, 8)
    assert [n for n, _ in res.privacy.batches] == [2, 4, 8]
    assert res.rounds[-1] == T
    assert np.all(res.pseudo_regret == 0)


def test_shares_path_never_releases_a_partial_batch_and_tops_up_dropouts() -> None:
    """User-level protocol with 20% dropouts: the survivors draw exactly the missing shares."""
    learner = make_learner("dist-dp-se", 0.5, growth=2, noise="shares", dropout=0.2)
    res = _run(learner, BernoulliArms((0.3, 0.7)), 2 * (2 + 4 + 8 + 16) + 5, reps=4)
    assert res.dropped.sum() > 0
    assert np.array_equal(res.topped_up, res.dropped)  # never under-noised
    assert res.privacy.epsilon <= 0.5


def test_central_and_local_dropouts_need_no_top_up() -> None:
    for name in ("cdp-se", "ldp-se"):
        learner = make_learner(name, 0.5, growth=2, noise="shares", dropout=0.2)
        res = _run(learner, BernoulliArms((0.3, 0.7)), 200, reps=2)
        assert res.dropped.sum() > 0
        assert res.topped_up.sum() == 0


@pytest.mark.parametrize(("name", "kwargs"), PRIVATE)
def test_privacy_report_matches_the_theorem(name: str, kwargs: dict[str, float]) -> None:
    eps, T, delta = 0.5, 20_000, 1e-6
    learner = make_learner(name, eps, **kwargs)
    res = _run(learner, _easy(2), T, reps=2)
    priv = res.privacy
    assert res.released.min() > 0
    assert priv.epsilon == max(e for _, e in priv.batches)
    if name in ("dist-dp-se", "shuffle-dp-se", "cdp-se", "ldp-se", "dp-se"):
        # pure ε-DP: the certified ε is at most the target, and no slack is wasted
        assert priv.notion == "pure"
        assert priv.delta == 0
        # (the accountant rounds outward: an exact ε/2 + ε/2 may print one ulp above ε)
        assert eps * (1 - 1e-9) <= priv.epsilon <= eps * (1 + 1e-12)
    elif name == "dist-rdp-se":
        # Lemma 3 at the actual g, converted at δ: recomputed here from the closed form
        n = res.batch_sizes[0]
        p = protocol_parameters(Variant.from_theorem(2), eps, n, T, scale=10)
        variance = float(p.g) ** 2 / eps**2
        want, _ = conversion.optimize_rdp_order(
            lambda a: bounds.skellam_rdp_akl(int(a), variance * (1 - 1e-12), p.g),
            delta,
            alpha_min=2,
            integer=True,
        )
        assert priv.batches[0][1] == pytest.approx(want, rel=1e-6)
        assert priv.notion == "rdp"
        assert priv.delta == delta
    else:
        n = res.batch_sizes[0]
        p = protocol_parameters(Variant.from_theorem(4), eps, n, T, scale=10)
        assert isinstance(p.share, DiscreteGaussian)
        rho = bounds.sum_discrete_gaussians_rho_kls(float(p.share.sigma), n, p.g)
        assert priv.rho is not None
        assert priv.rho >= rho * (1 - 1e-12)
        assert priv.notion == "zcdp"
    if learner.theorem is None:
        assert res.bits == 0
    else:
        sizes = res.batch_sizes
        bits = [
            protocol_parameters(Variant.from_theorem(learner.theorem), eps, n, T, scale=learner.scale).bits
            for n in sizes
        ]
        assert res.bits == max(bits)


def test_rdp_report_is_an_upper_bound_on_the_exact_ledger() -> None:
    """Lemma 3 is looser than the exact Skellam RDP the accountant computes (small n)."""
    learner = make_learner("dist-rdp-se", 1.0, scale=2)
    res = _run(learner, BernoulliArms((0.4, 0.6)), 200, reps=1)
    n = res.batch_sizes[0]
    exact = res.ledger(n).epsilon(1e-6, route="rdp").value.hi
    assert float(exact) <= dict(res.privacy.batches)[n]


def test_pure_report_agrees_with_the_ledger() -> None:
    learner = make_learner("shuffle-dp-se", 1.0)
    res = _run(learner, BernoulliArms((0.4, 0.6)), 500, reps=1)
    for n, eps in res.privacy.batches:
        assert float(res.ledger(n).epsilon(1e-6, route="pure").value.hi) == pytest.approx(eps)


def test_non_private_reports_no_privacy() -> None:
    res = _run(make_learner("se"), BernoulliArms((0.4, 0.6)), 500, reps=2)
    assert res.privacy.notion == "none"
    assert math.isinf(res.privacy.epsilon)
    assert privacy_of(make_learner("dist-dp-se", 1.0), [], 100).epsilon == 0.0


def test_same_seeds_same_numbers_and_common_random_numbers() -> None:
    learner = make_learner("dist-rdp-se", 0.5, scale=10)
    a = _run(learner, _easy(3), 30_000, reps=3)
    b = _run(learner, _easy(3), 30_000, reps=3)
    assert np.array_equal(a.pseudo_regret, b.pseudo_regret)
    assert np.array_equal(a.realized_regret, b.realized_regret)
    # The realized regret of SE and DP-SE in the same round reads the same tape value: where both
    # pull the same arms up to round t, their realized regrets agree exactly.
    se = _run(make_learner("se"), BernoulliArms((0.5, 0.5)), 1000, reps=2)
    assert np.all(se.realized_regret == 0)  # r_t(a*) - r_t(a_t) with identical arms and one tape


def test_realized_regret_is_unbiased_for_pseudo_regret() -> None:
    res = _run(make_learner("dist-dp-se", 1.0), _easy(20), 50_000, reps=20)
    diff = res.realized_regret[:, -1] - res.pseudo_regret[:, -1]
    assert abs(diff.mean()) < 4 * diff.std(ddof=1) / math.sqrt(diff.size) + 1e-9
    assert np.all(np.diff(res.pseudo_regret, axis=1) >= 0)


def test_forgetting_switch_changes_the_estimator() -> None:
    forget = _run(make_learner("dist-dp-se", 0.5), _easy(4), 50_000, reps=4)
    keep = _run(make_learner("dist-dp-se", 0.5, forgetting=False), _easy(4), 50_000, reps=4)
    assert not np.array_equal(forget.pseudo_regret, keep.pseudo_regret)
    assert np.all(keep.final_arms >= 1)


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
