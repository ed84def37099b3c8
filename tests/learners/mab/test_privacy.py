"""What a run spent (:mod:`learners.mab.privacy`): its ledgers answered, and the theorem of the variant
(Chowdhury & Zhou 2023, Theorems 1-6) only where its hypotheses hold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accounting import bounds, conversion
from accounting.accountant import Accountant
from accounting.mechanisms import DistributedSum
from accounting.noise import DiscreteGaussian, Skellam
from learners.environments import BernoulliArms
from learners.mab import (
    make_learner,
    privacy_of,
    run,
)
from tests.learners.mab.support import PRIVATE, easy, gaussian_epsilon, protocol_params, run_reps, tapes

# -- the privacy report: the ledgers answered; the theorem only where it holds ----------------


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kwargs"), PRIVATE)
def test_privacy_report_is_the_ledgers_and_the_theorem(name: str, kwargs: dict[str, float]) -> None:
    """At ε = 0.5 every theorem's hypotheses hold: the report gives the ledger's certified ε and
    the theorem's closed form, recomputed here from the papers' formulas."""
    eps, T, delta = 0.5, 20_000, 1e-6
    learner = make_learner(name, eps, **kwargs)
    res = run_reps(learner, easy(2), T, reps=2)
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
        assert priv.epsilon == pytest.approx(gaussian_epsilon(eps, delta), rel=0.01)
        closed = []
        for n in res.batch_sizes:
            p = protocol_params(learner, n, T)
            if name == "dist-rdp-se":
                # Lemma 3 (AKL 2021 Thm 3.5) at integer orders, converted by Lemma 10
                assert isinstance(p.share, Skellam)
                variance, g = float(p.g) ** 2 / eps**2 * (1 - 1e-12), p.g

                def lemma3(alpha: float, variance: float = variance, g: int = g) -> float:
                    return bounds.skellam_rdp_akl(int(alpha), variance, g)

                want, _ = conversion.optimize_rdp_order(lemma3, delta, alpha_min=2, integer=True)
            else:
                # Lemma 4 (KLS 2021a Prop. 13), converted by CKS 2020
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
        bits = [protocol_params(learner, n, T).bits for n in res.batch_sizes]
        assert res.bits == max(bits)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "kwargs", "theorem"),
    [("cdp-se", {}, 5), ("ldp-se", {}, 6), ("dist-cdp-se", {"scaling": 10}, 4)],
)
def test_theorems_4_to_6_are_not_claimed_at_epsilon_one_or_more(
    name: str, kwargs: dict[str, float], theorem: int
) -> None:
    """Theorems 4, 5 and 6 assume ε < 1 (Chowdhury & Zhou 2023, App. F and H). At ε = 2 the report says
    so, gives no closed form of the theorem, and reports the guarantee of what was released: the
    discrete Laplace mechanism with scale g/ε is exactly ε-DP (central, and per message in the local
    model); the discrete Gaussian sum is within 1% of the Gaussian mechanism with Δ/σ = ε."""
    eps, delta = 2.0, 1e-6
    learner = make_learner(name, eps, **kwargs)
    res = run_reps(learner, easy(2), 5_000, reps=2)
    priv = res.privacy
    assert not priv.theorem_holds
    assert priv.theorem == theorem
    assert priv.theorem_epsilon is None
    assert priv.rho is None
    assert f"Theorem {theorem} assumes ε < 1" in priv.message
    if name == "dist-cdp-se":
        assert priv.epsilon == pytest.approx(gaussian_epsilon(eps, delta), rel=0.01)
    else:
        assert priv.epsilon == pytest.approx(eps, rel=1e-12)


def test_theorems_1_to_3_hold_at_any_epsilon() -> None:
    res = run_reps(make_learner("dist-dp-se", 4.0), easy(2), 5_000, reps=2)
    assert res.privacy.theorem_holds
    assert res.privacy.theorem_epsilon == 4.0
    assert res.privacy.epsilon == pytest.approx(4.0, rel=1e-12)


def test_a_ledger_the_accountant_cannot_sum_is_answered_by_the_published_lemma() -> None:
    """A Skellam sum of variance ~ 4e10 is too wide for the exact routes: the report falls back to
    Lemma 3 (AKL 2021 Thm 3.5), the published bound on that very mechanism, and says so."""
    learner = make_learner("dist-rdp-se", 1.0, scaling=100)
    n, T = 4**10, 10**7
    p = protocol_params(learner, n, T)
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
    assert gaussian_epsilon(1.0, 1e-6) < eps
    assert eps == pytest.approx(gaussian_rdp, rel=1e-3)


def test_published_route_on_request() -> None:
    """route="published": the ledgers answered by Lemma 4 (cheap), which is the theorem's form."""
    learner = make_learner("dist-cdp-se", 0.5, scaling=10)
    res = run(learner, easy(2), 5_000, tapes=tapes(2), rng=np.random.default_rng(0), route="published")
    assert {route for *_, route in res.privacy.batches} == {"published"}
    assert res.privacy.epsilon == pytest.approx(res.privacy.theorem_epsilon, rel=1e-12)


def test_non_private_reports_no_privacy() -> None:
    res = run_reps(make_learner("se"), BernoulliArms((0.4, 0.6)), 500, reps=2)
    assert res.privacy.notion == "none"
    assert math.isinf(res.privacy.epsilon)
    assert res.ledgers == {}
    assert privacy_of(make_learner("dist-dp-se", 1.0), {}).epsilon == 0.0
