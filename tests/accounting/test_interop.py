"""accounting.interop: dp_accounting events in, certified answers out.

References used here, independent of the code under test: the definitions in dp_accounting's
``dp_event.py`` (a noise multiplier is σ over the contribution bound C; DLap(a) has
P(x) = tanh(a/2) e^{-a|x|}); the exact privacy profile of the Gaussian mechanism (Balle & Wang
2018, Thm 8) evaluated with scipy; and dp_accounting's own PLD accountant, whose
optimistic estimate must lie below every certified upper bound and whose pessimistic estimate
must lie close above the exact value.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from mpmath import mp
from scipy import stats

from accounting import (
    Accountant,
    AdditiveNoise,
    Composed,
    DiscreteGaussian,
    DiscreteLaplace,
    DistributedSum,
    Enclosure,
    Event,
    Gaussian,
    Laplace,
    Neighbouring,
    ParameterError,
    ParameterTypeError,
    Polya,
    PureDP,
    UnsupportedEventError,
)
from accounting.interop import (
    Certificate,
    MissingDependencyError,
    OurEvent,
    certify,
    from_dp_event,
    to_accountant,
    to_dp_event,
)
from accounting.subsampling import PoissonSampled, SampledWithoutReplacement

RELATIONS = ["add-remove", "replace-one"]
#: Δ of a top-level additive-noise event with contribution bound C = 1, per relation.
FACTOR = {"add-remove": 1, "replace-one": 2}


@pytest.fixture
def dp() -> Any:
    return pytest.importorskip("dp_accounting")


@pytest.fixture
def de(dp: Any) -> Any:
    return dp.dp_event


def _their(dp: Any, relation: str) -> Any:
    rel = dp.NeighboringRelation
    return rel.ADD_OR_REMOVE_ONE if relation == "add-remove" else rel.REPLACE_ONE


def gaussian_delta(sigma: float, sens: float, eps: float) -> float:
    """Balle & Wang 2018 Thm 8: δ(ε) = Φ(Δ/2σ - εσ/Δ) - e^ε Φ(-Δ/2σ - εσ/Δ), scipy float64."""
    a, b = sens / (2 * sigma), eps * sigma / sens
    return float(stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b))


def optimistic_pld(dp: Any, parts: list[tuple[str, float, int, int]], relation: Any) -> Any:
    """dp_accounting's PLD with *optimistic* rounding (a lower estimate), composed by hand."""
    pld = dp.pld.privacy_loss_distribution
    total = None
    for kind, param, sens, count in parts:
        if kind == "gaussian":
            one = pld.from_gaussian_mechanism(
                param,
                pessimistic_estimate=False,
                use_connect_dots=False,
                neighboring_relation=relation or dp.NeighboringRelation.ADD_OR_REMOVE_ONE,
            )
        elif kind == "laplace":
            one = pld.from_laplace_mechanism(param, pessimistic_estimate=False)
        else:
            one = pld.from_discrete_laplace_mechanism(param, sensitivity=sens, pessimistic_estimate=False)
        one = one.self_compose(count) if count > 1 else one
        total = one if total is None else total.compose(one)
    return total


# -- dp_accounting stays optional ------------------------------------------------------------------


def test_imports_and_answers_without_dp_accounting() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["dp_accounting"] = None  # `import dp_accounting` now raises ImportError
        import accounting.interop as interop
        from accounting import AdditiveNoise, Gaussian
        try:
            interop.from_dp_event(object())
        except ImportError as err:
            assert isinstance(err, interop.MissingDependencyError), err
            assert "pip install dpcert[interop]" in str(err), err
        else:
            raise AssertionError("no MissingDependencyError")
        for call in (lambda: interop.to_dp_event(AdditiveNoise(Gaussian(1.0), 1)),
                     lambda: interop.certify(object(), target_delta=1e-5)):
            try:
                call()
            except interop.MissingDependencyError:
                pass
            else:
                raise AssertionError("no MissingDependencyError")
        c = interop.certify(AdditiveNoise(Gaussian(1.0), 1), target_delta=1e-5)
        assert c.dp_accounting_version is None and "not installed" in c.dp_accounting_pld, c
        assert c.gaps == {"pld": None, "rdp": None}, c.gaps
        print(c.certified)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    # ε(1e-5) of σ = 1, Δ = 1 (Balle–Wang): δ at the printed ε is the target, from scipy.
    eps = float(out.stdout.strip())
    assert gaussian_delta(1.0, 1.0, eps) <= 1e-5 * (1 + 1e-9)
    assert gaussian_delta(1.0, 1.0, eps * (1 - 1e-9)) > 1e-5
    assert issubclass(MissingDependencyError, ImportError)


# -- dp_accounting -> ours: hand-computed expectations ------------------------------------------


@pytest.mark.parametrize("relation", RELATIONS)
def test_additive_noise_events_take_the_relations_sensitivity(de: Any, dp: Any, relation: str) -> None:
    f = FACTOR[relation]
    for rel in (relation, _their(dp, relation), Neighbouring.parse(relation)):
        assert from_dp_event(de.GaussianDpEvent(1.5), rel) == AdditiveNoise(Gaussian(1.5), f)
        assert from_dp_event(de.LaplaceDpEvent(0.25), rel) == AdditiveNoise(Laplace(0.25), f)
    ours = from_dp_event(de.DiscreteLaplaceDpEvent(0.7, 3), relation)
    assert isinstance(ours, AdditiveNoise)
    assert isinstance(ours.noise, DiscreteLaplace)
    assert ours.sensitivity == 3 * f
    # dp_event.py: DLap(a) has P(x) = tanh(a/2) e^{-a|x|}: decay e^{-a}, scale exactly 1/a.
    assert ours.noise.scale == 1 / Fraction(0.7)
    assert ours.noise.beta is None
    a = Fraction(0.7)
    for x in (0, 1, -4, 9):
        assert float(ours.noise.pmf(x)) == pytest.approx(math.tanh(0.35) * math.exp(-0.7 * abs(x)), rel=1e-14)
        with mp.workdps(40):
            exact = mp.tanh(mp.mpf(a.numerator) / (2 * a.denominator)) * mp.exp(
                -abs(x) * mp.mpf(a.numerator) / a.denominator
            )
            enclosure = Enclosure.from_interval(ours.noise.pmf_intervals(x, x, 30)[0])
            slack = exact * mp.mpf(10) ** -36  # the error of `exact` at 40 digits
            assert enclosure.lo - slack <= exact <= enclosure.hi + slack
            assert enclosure.hi - enclosure.lo < exact * mp.mpf(10) ** -25


def test_the_default_relation_is_dp_accountings(de: Any) -> None:
    assert from_dp_event(de.GaussianDpEvent(2.0)) == AdditiveNoise(Gaussian(2.0), 1)
    assert certify(de.GaussianDpEvent(2.0), target_delta=1e-5).neighbouring is Neighbouring.ADD_REMOVE


@pytest.mark.parametrize("relation", RELATIONS)
def test_sampled_events_take_the_contribution_bound(de: Any, relation: str) -> None:
    """Δ = C inside a sampled event under both relations (as in dp_accounting)."""
    poisson = from_dp_event(de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.2)), relation)
    assert poisson == PoissonSampled(AdditiveNoise(Gaussian(1.2), 1), 0.01)
    assert isinstance(poisson, PoissonSampled)
    assert poisson.q == Fraction(0.01)
    lap = from_dp_event(de.PoissonSampledDpEvent(0.5, de.DiscreteLaplaceDpEvent(2.0, 2)), relation)
    assert lap == PoissonSampled(AdditiveNoise(DiscreteLaplace(Fraction(1, 2)), 2), 0.5)
    wor = from_dp_event(de.SampledWithoutReplacementDpEvent(1000, 30, de.LaplaceDpEvent(3.0)), relation)
    assert wor == SampledWithoutReplacement(AdditiveNoise(Laplace(3.0), 1), Fraction(3, 100))
    assert isinstance(wor, SampledWithoutReplacement)
    assert wor.q == Fraction(3, 100)


def test_compositions_multiply_out(de: Any) -> None:
    g, lap = de.GaussianDpEvent(1.0), de.LaplaceDpEvent(2.0)
    assert from_dp_event(de.SelfComposedDpEvent(de.SelfComposedDpEvent(g, 2), 3)) == Event(
        AdditiveNoise(Gaussian(1.0), 1), 6
    )
    assert from_dp_event(de.SelfComposedDpEvent(de.ComposedDpEvent([g, lap]), 2)) == Composed(
        [Event(AdditiveNoise(Gaussian(1.0), 1), 2), Event(AdditiveNoise(Laplace(2.0), 1), 2)]
    )
    assert from_dp_event(de.ComposedDpEvent([g, de.NoOpDpEvent()])) == Composed(
        [AdditiveNoise(Gaussian(1.0), 1), Composed(())]
    )


def test_events_that_release_nothing(de: Any) -> None:
    nothing = Composed(())
    assert from_dp_event(de.NoOpDpEvent()) == nothing
    assert from_dp_event(de.SelfComposedDpEvent(de.GaussianDpEvent(1.0), 0)) == nothing
    assert from_dp_event(de.PoissonSampledDpEvent(0.0, de.GaussianDpEvent(1.0))) == nothing
    assert from_dp_event(de.SampledWithoutReplacementDpEvent(10, 0, de.GaussianDpEvent(1.0))) == nothing
    c = certify(de.ComposedDpEvent([de.NoOpDpEvent()]), target_delta=1e-6)
    assert c.certified == 0.0
    assert c.dp_accounting_pld == 0.0


# -- round trips ---------------------------------------------------------------------------------

ROUND_TRIPS: dict[str, Callable[[int], OurEvent]] = {
    "gaussian": lambda f: AdditiveNoise(Gaussian(1.25), f),
    "laplace": lambda f: AdditiveNoise(Laplace(0.5), f),
    "discrete-laplace": lambda f: AdditiveNoise(DiscreteLaplace(1 / Fraction(0.3)), 4 * f),
    "self-composed": lambda f: Event(AdditiveNoise(Gaussian(3.0), f), 7),
    "composed": lambda f: Composed(
        [Event(AdditiveNoise(Gaussian(3.0), f), 2), AdditiveNoise(Laplace(2.0), f), Composed(())]
    ),
    "nothing": lambda f: Composed(()),
    "poisson-gaussian": lambda f: PoissonSampled(AdditiveNoise(Gaussian(0.8), 1), 0.01),
    "poisson-laplace": lambda f: PoissonSampled(AdditiveNoise(Laplace(0.8), 1), 0.25),
    "poisson-discrete-laplace": lambda f: PoissonSampled(AdditiveNoise(DiscreteLaplace(Fraction(4)), 2), 0.5),
    "without-replacement": lambda f: SampledWithoutReplacement(
        AdditiveNoise(Gaussian(0.8), 1), Fraction(3, 100)
    ),
}


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("kind", list(ROUND_TRIPS))
def test_round_trip_ours_theirs_ours(de: Any, kind: str, relation: str) -> None:
    ours = ROUND_TRIPS[kind](FACTOR[relation])
    theirs = to_dp_event(ours, relation)
    assert isinstance(theirs, de.DpEvent)
    assert from_dp_event(theirs, relation) == ours


@pytest.mark.parametrize("relation", RELATIONS)
def test_round_trip_of_composed_sampled_events(de: Any, relation: str) -> None:
    sampled = PoissonSampled(AdditiveNoise(Gaussian(0.8), 1), 0.01)
    for ours in (
        Event(sampled, 100),
        Composed([Event(sampled, 100), AdditiveNoise(Gaussian(2.0), FACTOR[relation])]),
    ):
        assert from_dp_event(to_dp_event(ours, relation), relation) == ours


@pytest.mark.parametrize("relation", RELATIONS)
def test_round_trip_theirs_ours_theirs(de: Any, relation: str) -> None:
    for theirs in (
        de.GaussianDpEvent(1.3),
        de.LaplaceDpEvent(0.1),
        de.DiscreteLaplaceDpEvent(0.3, 2),
        de.SelfComposedDpEvent(de.GaussianDpEvent(1.3), 12),
        de.ComposedDpEvent([de.LaplaceDpEvent(0.1), de.SelfComposedDpEvent(de.GaussianDpEvent(2.0), 2)]),
        de.PoissonSampledDpEvent(0.001, de.GaussianDpEvent(0.9)),
        de.SampledWithoutReplacementDpEvent(400, 3, de.DiscreteLaplaceDpEvent(1.5, 1)),
        de.NoOpDpEvent(),
    ):
        assert to_dp_event(from_dp_event(theirs, relation), relation) == theirs


def test_to_dp_event_rounds_toward_less_noise(de: Any) -> None:
    # σ/C = 1/3 is not a float: the multiplier is the largest float <= 1/3.
    nm = to_dp_event(AdditiveNoise(Gaussian(1.0), 3.0)).noise_multiplier
    assert Fraction(nm) <= Fraction(1, 3) < Fraction(math.nextafter(nm, math.inf))
    # Replace-one: Δ = 2C, so C = Δ/2 and the multiplier is σ/(Δ/2).
    assert to_dp_event(AdditiveNoise(Laplace(1.5), 2.0), "replace-one") == de.LaplaceDpEvent(1.5)
    assert to_dp_event(AdditiveNoise(Gaussian(1.0), 0.5), "replace-one") == de.GaussianDpEvent(4.0)
    # Discrete Laplace by its decay β: a = -ln β rounded up (e^{-a} <= β: no more noise than run).
    a = to_dp_event(AdditiveNoise(DiscreteLaplace(beta=0.5), 1)).noise_parameter
    with mp.workdps(50):
        assert mp.mpf(a) >= mp.log(2) > mp.mpf(math.nextafter(a, 0.0))
    # By its scale b = 10/7: a = 7/10 rounded up.
    a = to_dp_event(AdditiveNoise(DiscreteLaplace(Fraction(10, 7)), 1)).noise_parameter
    assert Fraction(a) >= Fraction(7, 10) > Fraction(math.nextafter(a, 0.0))
    # An odd lattice Δ under replace-one: C = ⌈Δ/2⌉, so 2C >= Δ.
    assert to_dp_event(AdditiveNoise(DiscreteLaplace(2.0), 3), "replace-one").sensitivity == 2
    # Sampling rates: exact m/n in lowest terms; a Poisson rate that is not a float, up.
    wor = to_dp_event(SampledWithoutReplacement(AdditiveNoise(Gaussian(1.0), 1), Fraction(30, 1000)))
    assert (wor.source_dataset_size, wor.sample_size) == (100, 3)
    q = to_dp_event(PoissonSampled(AdditiveNoise(Gaussian(1.0), 1), Fraction(1, 3))).sampling_probability
    assert Fraction(q) >= Fraction(1, 3) > Fraction(math.nextafter(q, 0.0))


def test_round_trip_never_adds_noise(de: Any) -> None:
    """Where the parameters are not floats, ours -> theirs -> ours has no more noise than before."""
    with mp.workdps(50):
        cases = [
            (DiscreteLaplace(beta=0.5), mp.mpf(0.5)),
            (DiscreteLaplace(Fraction(10, 7)), mp.exp(mp.mpf(-7) / 10)),
            (DiscreteLaplace(beta=Fraction(9, 10)), mp.mpf(9) / 10),
        ]
        for noise, beta in cases:
            back = from_dp_event(to_dp_event(AdditiveNoise(noise, 1)))
            assert isinstance(back, AdditiveNoise)
            assert isinstance(back.noise, DiscreteLaplace)
            b = Fraction(back.noise.scale)
            back_beta = mp.exp(-mp.mpf(b.denominator) / b.numerator)  # e^{-1/b}: its decay
            assert beta * (1 - mp.mpf(10) ** -14) < back_beta <= beta
    back = from_dp_event(to_dp_event(AdditiveNoise(Gaussian(1.0), 3.0)))
    assert isinstance(back, AdditiveNoise)
    assert isinstance(back.noise, Gaussian)
    assert back.sensitivity == 1
    assert Fraction(back.noise.sigma) <= Fraction(1, 3)


# -- the conventions against dp_accounting's own numbers ------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("relation", RELATIONS)
def test_single_gaussian_is_balle_wang_and_matches_dp_accounting_pld(dp: Any, relation: str) -> None:
    sigma, delta = 1.0, 1e-5
    c = certify(dp.dp_event.GaussianDpEvent(sigma), target_delta=delta, neighbouring=relation)
    assert isinstance(c, Certificate)
    assert c.route == "pld"
    assert c.quantity == "epsilon"
    # Exact (Balle–Wang, evaluated by scipy) with Δ = C under add-remove and 2C under replace-one.
    sens = FACTOR[relation]
    assert gaussian_delta(sigma, sens, c.certified) <= delta * (1 + 1e-9)
    assert gaussian_delta(sigma, sens, c.certified * (1 - 1e-9)) > delta
    assert c.certified == pytest.approx(
        {"add-remove": 4.377178096, "replace-one": 9.997256146}[relation], rel=1e-9
    )
    # dp_accounting's PLD accountant: pessimistic, just above; optimistic estimate below.
    assert isinstance(c.dp_accounting_pld, float)
    assert c.certified <= c.dp_accounting_pld <= c.certified * (1 + 1e-6)
    opt = optimistic_pld(dp, [("gaussian", sigma, 1, 1)], _their(dp, relation)).get_epsilon_for_delta(delta)
    assert opt <= c.enclosure.lower
    assert c.gaps["pld"] is not None
    assert 0 <= c.gaps["pld"] < 1e-6


@pytest.mark.slow
def test_optimistic_flag_agrees_with_the_exact_value(dp: Any) -> None:
    """100 Gaussian releases, σ = C: μ = 10 GDP (Dong, Roth & Su 2019, Cor. 3.3), whose exact
    ε(10⁻⁵) mpmath finds at 50 digits. The certified enclosure holds it, and ``optimistic`` says
    whether dp_accounting's answer is below it (in 0.6 its PLD is, by about 6e-10)."""
    c = certify(dp.SelfComposedDpEvent(dp.GaussianDpEvent(1.0), 100), target_delta=1e-5)
    with mp.workdps(50):
        mu = mp.mpf(10)

        def delta(eps: Any) -> Any:
            return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)

        exact = mp.findroot(lambda e: delta(e) - mp.mpf("1e-5"), 91.8)
        assert c.enclosure.lo <= exact <= c.enclosure.hi
        assert c.enclosure.hi - c.enclosure.lo < mp.mpf(10) ** -12
        for name in ("pld", "rdp"):
            theirs = getattr(c, f"dp_accounting_{name}")
            assert isinstance(theirs, float)
            assert c.optimistic[name] == (delta(mp.mpf(theirs)) > mp.mpf("1e-5"))
            assert c.optimistic[name] == (theirs < exact)


@pytest.mark.slow
def test_dp_accounting_rdp_ignores_replace_one_for_gaussian_events(dp: Any) -> None:
    """dp_accounting's RdpAccountant uses Δ = C under REPLACE_ONE too: optimistic, and shown so."""
    ev = dp.dp_event.GaussianDpEvent(1.0)
    add = certify(ev, target_delta=1e-5, neighbouring="add-remove")
    rep = certify(ev, target_delta=1e-5, neighbouring="replace-one")
    assert add.dp_accounting_rdp == rep.dp_accounting_rdp  # the relation made no difference to it
    assert isinstance(rep.dp_accounting_rdp, float)
    assert rep.dp_accounting_rdp < rep.enclosure.lower
    assert rep.optimistic == {"pld": False, "rdp": True}
    assert rep.gaps["rdp"] is not None
    assert rep.gaps["rdp"] < -5
    assert add.optimistic == {"pld": False, "rdp": False}
    text = str(rep)
    assert "optimistic" in text
    assert "dpcert, certified (pld)" in text
    assert repr(rep.certified) in text


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0])
def test_discrete_laplace_delta_matches_dp_accounting(dp: Any, eps: float) -> None:
    ev = dp.dp_event.DiscreteLaplaceDpEvent(0.7, 3)
    c = certify(ev, target_epsilon=eps)
    assert c.quantity == "delta"
    assert isinstance(c.dp_accounting_pld, float)
    assert c.dp_accounting_pld == pytest.approx(c.certified, rel=1e-9, abs=1e-15)
    assert optimistic_pld(dp, [("discrete", 0.7, 3, 1)], None).get_delta_for_epsilon(eps) <= c.certified
    # Independent: δ(ε) of (X + 3, X) for DLap(0.7), summed in float64 from the dp_event.py PMF.
    pmf = [math.tanh(0.35) * math.exp(-0.7 * abs(x)) for x in range(-200, 201)]
    want = sum(max(0.0, pmf[i - 3] - math.exp(eps) * pmf[i]) for i in range(3, len(pmf)))
    assert c.certified == pytest.approx(want, rel=1e-12)


def test_laplace_pure_epsilon_and_delta_match(dp: Any) -> None:
    ev = dp.dp_event.LaplaceDpEvent(2.0)
    c = certify(ev, target_epsilon=0.2)
    # Exact: δ(ε) = 1 - e^{(ε - C/b)/2} for the Laplace mechanism.
    assert c.certified == pytest.approx(1 - math.exp((0.2 - 0.5) / 2), rel=1e-12)
    assert isinstance(c.dp_accounting_pld, float)
    assert abs(c.dp_accounting_pld - c.certified) < 1e-9
    # Replace-one: Δ = 2C (ε = 1 = 2C/b); dp_accounting's PLD refuses, its RDP keeps Δ = C.
    r = certify(ev, target_epsilon=0.2, neighbouring="replace-one")
    assert r.certified == pytest.approx(1 - math.exp((0.2 - 1.0) / 2), rel=1e-12)
    assert isinstance(r.dp_accounting_pld, str)
    assert r.dp_accounting_pld.startswith("not supported")
    assert r.gaps["pld"] is None
    assert r.optimistic["pld"] is None


@pytest.mark.slow
@pytest.mark.parametrize("relation", RELATIONS)
def test_poisson_gaussian_pairs_match_dp_accounting_pld(dp: Any, relation: str) -> None:
    """Our subsampled event (contribution bound C = 1) against dp_accounting's PLD of the same event."""
    ev = dp.dp_event.PoissonSampledDpEvent(0.01, dp.dp_event.GaussianDpEvent(1.0))
    ours = from_dp_event(ev, relation)
    assert isinstance(ours, PoissonSampled)
    eps = ours.epsilon(1e-5, relation)
    theirs = dp.pld.PLDAccountant(_their(dp, relation)).compose(ev).get_epsilon(1e-5)
    assert eps.upper <= theirs <= eps.upper * (1 + 1e-6)
    optimistic = dp.pld.privacy_loss_distribution.from_gaussian_mechanism(
        1.0,
        pessimistic_estimate=False,
        use_connect_dots=False,
        sampling_prob=0.01,
        neighboring_relation=_their(dp, relation),
    ).get_epsilon_for_delta(1e-5)
    assert optimistic <= eps.lower


def test_full_batch_without_replacement_moves_the_sum_by_2c(dp: Any) -> None:
    """m = n under replace-one: the replaced record moves the sum by 2C (Δ = 2 for C = 1), while
    dp_accounting's RDP accountant (the only one accepting the event) reduces to α/(2σ²), Δ = 1."""
    ev = dp.dp_event.SampledWithoutReplacementDpEvent(50, 50, dp.dp_event.GaussianDpEvent(2.0))
    ours = from_dp_event(ev, "replace-one")
    assert isinstance(ours, SampledWithoutReplacement)
    assert ours.q == 1
    eps = ours.epsilon(1e-5, "replace-one")
    assert gaussian_delta(2.0, 2.0, eps.upper) <= 1e-5 * (1 + 1e-9)
    assert gaussian_delta(2.0, 2.0, eps.upper * (1 - 1e-6)) > 1e-5
    rdp = dp.rdp.RdpAccountant(neighboring_relation=_their(dp, "replace-one")).compose(ev).get_epsilon(1e-5)
    assert rdp < eps.lower  # optimistic
    unsampled = dp.rdp.RdpAccountant().compose(dp.dp_event.GaussianDpEvent(2.0)).get_epsilon(1e-5)
    assert rdp == pytest.approx(unsampled, rel=1e-12)  # the add-remove (Δ = C) answer


def test_l1_mass_on_one_coordinate_is_the_worst_case_for_discrete_laplace() -> None:
    """The vector convention (module docstring): splitting the ℓ1 bound C = 3 over coordinates
    gives a smaller δ(ε) than the scalar pair with shift 3 that both libraries account."""
    noise = DiscreteLaplace(Fraction(3, 2))
    scalar = Accountant("add-remove").compose(AdditiveNoise(noise, 3))
    split_2_1 = Accountant("add-remove").compose(Composed([AdditiveNoise(noise, 2), AdditiveNoise(noise, 1)]))
    split_1_1_1 = Accountant("add-remove").compose(AdditiveNoise(noise, 1), 3)
    for eps in (0.0, 0.4, 1.2, 1.9):
        top = scalar.delta(eps).lo
        assert split_2_1.delta(eps).hi <= top
        assert split_1_1_1.delta(eps).hi <= top


# -- a mixed ledger in one call -------------------------------------------------------------------


def _mixed(de: Any) -> Any:
    return de.ComposedDpEvent(
        [
            de.SelfComposedDpEvent(de.GaussianDpEvent(5.0), 10),
            de.LaplaceDpEvent(10.0),
            de.DiscreteLaplaceDpEvent(0.1, 1),
            de.NoOpDpEvent(),
        ]
    )


@pytest.mark.slow
def test_mixed_ledger_certified_in_one_call(dp: Any, de: Any) -> None:
    ledger = _mixed(de)
    c = certify(ledger, target_delta=1e-6)
    assert c.ours == Composed(
        [
            Event(AdditiveNoise(Gaussian(5.0), 1), 10),
            AdditiveNoise(Laplace(10.0), 1),
            AdditiveNoise(DiscreteLaplace(1 / Fraction(0.1)), 1),
            Composed(()),
        ]
    )
    assert c.enclosure.upper == c.certified
    assert c.route == c.enclosure.route
    opt = optimistic_pld(
        dp, [("gaussian", 5.0, 1, 10), ("laplace", 10.0, 1, 1), ("discrete", 0.1, 1, 1)], None
    ).get_epsilon_for_delta(1e-6)
    assert isinstance(c.dp_accounting_pld, float)
    assert opt <= c.certified  # never below dp_accounting's lower estimate
    # The Accountant answers a Gaussian + Laplace + lattice ledger by the RDP route: within 10%.
    assert c.certified <= 1.1 * c.dp_accounting_pld
    # dp_accounting's RDP accountant has no discrete Laplace: reported, not raised.
    assert isinstance(c.dp_accounting_rdp, str)
    assert "not supported" in c.dp_accounting_rdp
    assert c.gaps["rdp"] is None
    # The same ledger through to_accountant gives the same certified answer.
    assert to_accountant(ledger).epsilon(1e-6).upper == c.certified
    text = str(c)
    assert text.splitlines()[0] == "ε(δ = 1e-06), add-remove neighbours"
    assert "dp_accounting PLD" in text
    assert "dp_accounting RDP" in text
    assert "not supported" in text


def test_all_gaussian_ledger_is_exact_and_close_to_dp_accounting(dp: Any, de: Any) -> None:
    ledger = de.ComposedDpEvent(
        [
            de.SelfComposedDpEvent(de.GaussianDpEvent(5.0), 10),
            de.SelfComposedDpEvent(de.GaussianDpEvent(2.0), 3),
        ]
    )
    c = certify(ledger, target_delta=1e-6)
    sigma = 1 / math.sqrt(10 / 25 + 3 / 4)  # GDP composition: one Gaussian mechanism
    assert gaussian_delta(sigma, 1.0, c.certified) <= 1e-6 * (1 + 1e-9)
    assert gaussian_delta(sigma, 1.0, c.certified * (1 - 1e-8)) > 1e-6
    assert isinstance(c.dp_accounting_pld, float)
    assert c.certified <= c.dp_accounting_pld <= c.certified * (1 + 1e-4)


@pytest.mark.slow
def test_mixed_ledger_with_poisson_sampled_gaussian(dp: Any, de: Any) -> None:
    ledger = de.ComposedDpEvent(
        [
            de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.0)), 100),
            de.LaplaceDpEvent(10.0),
            de.DiscreteLaplaceDpEvent(0.1, 1),
        ]
    )
    c = certify(ledger, target_delta=1e-6)
    opt = dp.pld.privacy_loss_distribution.from_gaussian_mechanism(
        1.0, pessimistic_estimate=False, use_connect_dots=False, sampling_prob=0.01
    ).self_compose(100)
    opt = opt.compose(optimistic_pld(dp, [("laplace", 10.0, 1, 1), ("discrete", 0.1, 1, 1)], None))
    assert opt.get_epsilon_for_delta(1e-6) <= c.certified
    assert isinstance(c.dp_accounting_pld, float)
    # One PLD over all three events on the finest event's grid: as tight as dp_accounting's float
    # PLD to 1% (on the Laplace's coarser grid it was 2x looser).
    assert c.certified <= 1.01 * c.dp_accounting_pld
    assert "inside the certified enclosure" in str(c) or "above the certified upper end" in str(c)


@pytest.mark.slow
@pytest.mark.parametrize("relation", RELATIONS)
def test_poisson_sampled_gaussian_certified(dp: Any, relation: str) -> None:
    ev = dp.dp_event.PoissonSampledDpEvent(0.01, dp.dp_event.GaussianDpEvent(1.0))
    c = certify(ev, target_delta=1e-5, neighbouring=relation)
    assert isinstance(c.dp_accounting_pld, float)
    assert c.certified <= c.dp_accounting_pld <= c.certified * (1 + 1e-6)


@pytest.mark.slow
def test_certify_our_own_events_too(dp: Any) -> None:
    c = certify(AdditiveNoise(Gaussian(1.0), 2), target_delta=1e-5, neighbouring="replace-one")
    assert c.event == AdditiveNoise(Gaussian(1.0), 2)
    assert c.dp_accounting_version == dp_version()
    assert isinstance(c.dp_accounting_pld, float)
    assert c.gaps["pld"] is not None
    assert 0 <= c.gaps["pld"] < 1e-6
    d = certify(
        DistributedSum(Polya(Fraction(1, 4), 0.9), users=4), target_epsilon=1.0, neighbouring="replace-one"
    )
    assert "not expressible" in str(d.dp_accounting_pld)
    assert d.gaps == {"pld": None, "rdp": None}


def dp_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("dp-accounting")


def test_certify_route_is_passed_on(de: Any) -> None:
    ev = de.SelfComposedDpEvent(de.GaussianDpEvent(2.0), 4)
    auto = certify(ev, target_delta=1e-6)
    rdp = certify(ev, target_delta=1e-6, route="rdp")
    assert rdp.route == "rdp"
    assert auto.route == "pld"
    assert auto.certified <= rdp.certified
    with pytest.raises(ParameterError, match="route"):
        certify(ev, target_delta=1e-6, route="fastest")


# -- bad input -------------------------------------------------------------------------------------


def test_non_events_are_refused(de: Any) -> None:
    for bad in ("x", 3, None, AdditiveNoise(Gaussian(1.0), 1)):
        with pytest.raises(ParameterTypeError, match=r"^event=.*expected a dp_accounting DpEvent"):
            from_dp_event(bad)
    with pytest.raises(ParameterTypeError, match="event="):
        certify(object(), target_delta=1e-5)
    with pytest.raises(ParameterTypeError, match=r"event\.events\[1\]='x'"):
        from_dp_event(de.ComposedDpEvent([de.NoOpDpEvent(), "x"]))
    with pytest.raises(ParameterTypeError, match=r"event\.events=.*ComposedDpEvent\.events"):
        from_dp_event(de.ComposedDpEvent("ab"))
    with pytest.raises(ParameterTypeError, match=r"event\.event=.*PoissonSampledDpEvent\.event"):
        from_dp_event(de.PoissonSampledDpEvent(0.1, 1.0))
    with pytest.raises(ParameterTypeError, match="expected an event of accounting"):
        to_dp_event("x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "where", "kind"),
    [
        (lambda de: de.NonPrivateDpEvent(), "event", "NonPrivateDpEvent"),
        (lambda de: de.UnsupportedDpEvent(), "event", "UnsupportedDpEvent"),
        (
            lambda de: de.ComposedDpEvent([de.GaussianDpEvent(1.0), de.NonPrivateDpEvent()]),
            r"event\.events\[1\]",
            "NonPrivateDpEvent",
        ),
        (
            lambda de: de.SelfComposedDpEvent(de.UnsupportedDpEvent(), 2),
            r"event\.event",
            "UnsupportedDpEvent",
        ),
        (lambda de: de.RandomizedResponseDpEvent(0.5, 2), "event", "RandomizedResponseDpEvent"),
        (lambda de: de.ZCDpEvent(0.1), "event", "ZCDpEvent"),
        (
            lambda de: de.SampledWithReplacementDpEvent(100, 10, de.GaussianDpEvent(1.0)),
            "event",
            "SampledWithReplacementDpEvent",
        ),
        (
            lambda de: de.PoissonSampledDpEvent(0.1, de.NonPrivateDpEvent()),
            r"event\.event",
            "NonPrivateDpEvent",
        ),
        (
            lambda de: de.PoissonSampledDpEvent(0.1, de.SelfComposedDpEvent(de.GaussianDpEvent(1.0), 2)),
            r"event\.event",
            "SelfComposedDpEvent",
        ),
        (lambda de: de.GaussianDpEvent(0.0), r"event\.noise_multiplier", "GaussianDpEvent"),
        (
            lambda de: de.ComposedDpEvent([de.LaplaceDpEvent(0)]),
            r"event\.events\[0\]\.noise_multiplier",
            "LaplaceDpEvent",
        ),
    ],
)
def test_unsupported_kinds_are_refused_naming_class_and_place(
    de: Any, build: Any, where: str, kind: str
) -> None:
    event = build(de)
    with pytest.raises(UnsupportedEventError, match=f"^{where}.*{kind}"):
        from_dp_event(event)
    with pytest.raises(UnsupportedEventError, match=kind):
        certify(event, target_delta=1e-6)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda de: de.GaussianDpEvent(-1.0), r"event\.noise_multiplier=-1\.0 .*> 0 \(GaussianDpEvent"),
        (lambda de: de.LaplaceDpEvent(math.nan), r"event\.noise_multiplier=nan .*LaplaceDpEvent"),
        (lambda de: de.GaussianDpEvent(math.inf), r"event\.noise_multiplier=inf"),
        (
            lambda de: de.DiscreteLaplaceDpEvent(-0.5, 1),
            r"event\.noise_parameter=-0\.5 .*DiscreteLaplaceDpEvent",
        ),
        (lambda de: de.DiscreteLaplaceDpEvent(0.5, 0), r"event\.sensitivity=0 .*>= 1"),
        (lambda de: de.DiscreteLaplaceDpEvent(0.5, 1.5), r"event\.sensitivity=1\.5"),
        (
            lambda de: de.ComposedDpEvent([de.SelfComposedDpEvent(de.GaussianDpEvent(1.0), -2)]),
            r"event\.events\[0\]\.count=-2 .*SelfComposedDpEvent\.count",
        ),
        (
            lambda de: de.PoissonSampledDpEvent(1.5, de.GaussianDpEvent(1.0)),
            r"event\.sampling_probability=1\.5 .*\[0, 1\]",
        ),
        (
            lambda de: de.PoissonSampledDpEvent(0.1, de.GaussianDpEvent(-2.0)),
            r"event\.event\.noise_multiplier=-2\.0",
        ),
        (
            lambda de: de.SampledWithoutReplacementDpEvent(10, 11, de.GaussianDpEvent(1.0)),
            r"event\.sample_size=11 .*source_dataset_size=10",
        ),
        (
            lambda de: de.SampledWithoutReplacementDpEvent(0, 0, de.GaussianDpEvent(1.0)),
            r"event\.source_dataset_size=0",
        ),
    ],
)
def test_malformed_fields_name_the_field(de: Any, build: Any, field: str) -> None:
    with pytest.raises((ParameterError, ParameterTypeError), match=f"^{field}"):
        from_dp_event(build(de))


def test_relations_refused(dp: Any, de: Any) -> None:
    special = dp.NeighboringRelation.REPLACE_SPECIAL
    with pytest.raises(ParameterError, match=r"^neighbouring=.*REPLACE_SPECIAL is refused"):
        from_dp_event(de.GaussianDpEvent(1.0), special)
    with pytest.raises(ParameterError, match=r"^neighbouring="):
        certify(de.GaussianDpEvent(1.0), target_delta=1e-5, neighbouring=special)
    with pytest.raises(ParameterError, match=r"^neighbouring='swap'"):
        to_dp_event(AdditiveNoise(Gaussian(1.0), 1), "swap")


def test_targets_are_validated(de: Any) -> None:
    ev = de.GaussianDpEvent(1.0)
    with pytest.raises(ParameterError, match="exactly one of target_delta or target_epsilon"):
        certify(ev)
    with pytest.raises(ParameterError, match="exactly one"):
        certify(ev, target_delta=1e-5, target_epsilon=1.0)
    with pytest.raises(ParameterError, match=r"^target_delta=0"):
        certify(ev, target_delta=0)
    with pytest.raises(ParameterError, match=r"^target_epsilon=-1"):
        certify(ev, target_epsilon=-1.0)


def test_events_without_a_dp_accounting_event_are_refused(de: Any) -> None:
    for ours, where in (
        (DistributedSum(Polya(Fraction(1, 4), 0.9), users=4), "event: DistributedSum"),
        (PureDP(1.0, "a cited theorem (test)"), "event: PureDP"),
        (
            Composed([AdditiveNoise(Gaussian(1.0), 1), AdditiveNoise(DiscreteGaussian(3.0), 1)]),
            r"event\.events\[1\]\.noise: DiscreteGaussian",
        ),
        (
            PoissonSampled(DistributedSum(Polya(Fraction(1, 4), 0.9), users=4), 0.1),
            r"event\.mechanism: DistributedSum",
        ),
    ):
        with pytest.raises(UnsupportedEventError, match=f"^{where}"):
            to_dp_event(ours)


def test_errors_are_value_or_type_errors(de: Any) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the point is the base class
        from_dp_event(de.NonPrivateDpEvent())
    with pytest.raises(ValueError):  # noqa: PT011
        from_dp_event(de.GaussianDpEvent(-1.0))
    with pytest.raises(TypeError):
        from_dp_event("x")
