"""Tests of :mod:`verification.symbolic`: the sympy proofs, and numerical sanity checks.

Each proof is a test: it must hold with every step decided by sympy. The statements are those
of Chowdhury & Zhou 2023: Fact 1 / Remark 7, the Skellam MGF of Definition 5, Fact 3, the
analyzer's decoding (Algorithm 1; proof of Theorem 1), and Mironov 2017, Prop. 7. The
numerical checks evaluate the proved expressions at a few points against
:mod:`accounting.noise` and :mod:`accounting.bounds`; they guard against proving the right
identity about the wrong formula, and are not part of any proof. Tests of the step helpers
make sure a false claim or an undecidable one is reported as *not* holding.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import numpy as np
import pytest
import sympy as sp
from mpmath import mp

from accounting import DiscreteLaplace, Geometric, Polya, Skellam, bounds
from verification import symbolic
from verification.errors import ParameterError
from verification.symbolic import ALL_PROOFS, Proof, prove, prove_all


@cache
def proved(name: str) -> Proof:
    """Each proof runs once per test session."""
    return ALL_PROOFS[name]()


def symbol(expr: Any, name: str) -> Any:
    """The free symbol called ``name`` in ``expr``."""
    (found,) = (s for s in expr.free_symbols if s.name == name)
    return found


def evaluate(expr: Any, **values: float) -> complex:
    """``expr`` at the given values of its free symbols, in 30-digit floating point."""
    return complex(expr.subs({symbol(expr, k): v for k, v in values.items()}).evalf(30))


# ---------------------------------------------------------------------------------------
# The proofs hold
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ALL_PROOFS))
def test_proof_holds(name: str) -> None:
    proof = proved(name)
    assert proof.name == name
    failed = [step.claim for step in proof.steps if not step.holds]
    assert not failed, f"{name}: sympy did not prove {failed}"
    assert proof.holds
    assert len(proof.steps) >= 4
    assert "FAILED" not in proof.derivation
    assert proof.derivation.count("\n") == len(proof.steps) - 1
    for step in proof.steps:
        assert step.reduced == 0 or step.reduced == sp.true


def test_the_accounting_relies_on_these_proofs() -> None:
    assert set(ALL_PROOFS) >= {
        "polya_shares_sum_to_discrete_laplace",
        "skellam_mgf_and_closure",
        "discrete_laplace_loss_bounded",
        "modular_decoding_lemma",
    }


@pytest.mark.slow
def test_prove_all_and_prove_by_name() -> None:
    results = prove_all()
    assert list(results) == list(ALL_PROOFS)
    assert all(p.holds for p in results.values())
    assert prove("modular_decoding_lemma").holds


def test_unknown_names_are_errors() -> None:
    with pytest.raises(ParameterError, match="name='nope'"):
        prove("nope")
    with pytest.raises(ValueError, match=r"label='nope'.*modulus"):
        proved("modular_decoding_lemma").expression("nope")


def test_proof_is_frozen() -> None:
    proof = proved("modular_decoding_lemma")
    with pytest.raises(dataclasses.FrozenInstanceError):
        proof.holds = False  # type: ignore[misc]


# ---------------------------------------------------------------------------------------
# A false or undecidable claim does not hold
# ---------------------------------------------------------------------------------------


def test_false_identity_does_not_hold() -> None:
    x = sp.Symbol("x", positive=True)
    assert symbolic._identity("x = x", x, x).holds
    assert not symbolic._identity("x = x + 1", x, x + 1).holds


def test_undecidable_inequality_does_not_hold() -> None:
    x = sp.Symbol("x", real=True)
    assert symbolic._relation("x^2 >= 0", sp.Ge, x**2, 0).holds
    assert not symbolic._relation("x >= 0", sp.Ge, x, 0).holds  # sign of x unknown
    assert not symbolic._relation("x^2 > 0", sp.Gt, x**2, 0).holds  # false at x = 0


def test_case_split_with_a_gap_does_not_hold() -> None:
    # The case split of Fact 3 without x = 0 (0 < x < Δ instead of 0 <= x < Δ) covers less.
    x = sp.Symbol("x", integer=True)
    delta = sp.Symbol("Delta", integer=True, nonnegative=True)
    full = (x >= delta) | ((x >= 0) & (x < delta)) | (x < 0)
    gap = (x >= delta) | ((x > 0) & (x < delta)) | (x < 0)
    assert symbolic._condition("full", full, full).holds
    assert not symbolic._condition("gap", gap, gap).holds


def test_a_failed_step_fails_the_proof() -> None:
    x = sp.Symbol("x")
    proof = symbolic._conclude(
        "demo", "demo", {"x": x}, [symbolic._identity("ok", x, x), symbolic._identity("no", x, 2 * x)]
    )
    assert not proof.holds
    assert "[FAILED] no" in proof.derivation
    assert not symbolic._conclude("empty", "empty", {}, []).holds


def test_polya_scale_bug_is_not_provable() -> None:
    # The paper's released code draws Polya(r, 1−β) (Gamma scale (1−β)/β, where footnote 3 has
    # β/(1−β)); n such shares are not geometric(β).
    proof = proved("polya_shares_sum_to_discrete_laplace")
    pgf, geometric = proof.expression("polya_pgf"), proof.expression("geometric_pgf")
    beta, r = symbol(pgf, "beta"), symbol(pgf, "r")
    n = sp.Symbol("n", integer=True, positive=True)
    wrong = pgf.subs({r: 1 / n, beta: 1 - beta}) ** n
    assert not symbolic._identity("buggy shares", wrong, geometric).holds


def test_non_strict_threshold_is_not_provable() -> None:
    # Algorithm 1's threshold is strict; with `>=` the top of the range, n g + τ, decodes wrongly.
    proof = proved("modular_decoding_lemma")
    decoder, m = proof.expression("decoder"), proof.expression("modulus")
    y = symbol(decoder, "y")
    top = m - symbol(m, "tau") - 1
    wrong = sp.Piecewise((y - m, y >= top), (y, True))
    assert symbolic._identity("strict", decoder.subs(y, top), top).holds
    assert not symbolic._identity("non-strict", wrong.subs(y, top), top).holds


# ---------------------------------------------------------------------------------------
# Numerical sanity checks against accounting.noise and accounting.bounds
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("r", "beta", "z"), [(0.25, 0.3, 1.7), (1.0, 0.6, 0.9), (3.0, 0.1, -2.5)])
def test_polya_pgf_matches_pmf(r: float, beta: float, z: float) -> None:
    pgf = proved("polya_shares_sum_to_discrete_laplace").expression("polya_pgf")
    xs = np.arange(400)
    series = float(np.sum(Polya(r, beta).pmf(xs) * z**xs))
    assert series == pytest.approx(evaluate(pgf, r=r, beta=beta, z=z).real, rel=1e-10)


@pytest.mark.parametrize(("beta", "z"), [(0.3, 1.7), (0.8, 1.1), (0.5, 0.6)])
def test_discrete_laplace_pgf_matches_pmf(beta: float, z: float) -> None:
    proof = proved("polya_shares_sum_to_discrete_laplace")
    xs = np.arange(-600, 601)
    series = float(np.sum(DiscreteLaplace(beta=beta).pmf(xs) * float(z) ** xs))
    for label in ("difference_pgf", "discrete_laplace_pgf"):
        value = evaluate(proof.expression(label), beta=beta, z=z).real
        assert series == pytest.approx(value, rel=1e-10)


def test_polya_shares_convolve_to_geometric() -> None:
    # Fact 1 numerically: four Polya(1/4, β) shares convolve to Geometric(β) (Chowdhury & Zhou 2023).
    beta, n, size = 0.4, 4, 200
    share = Polya(1 / n, beta).pmf(np.arange(size))
    total = np.array([1.0])
    for _ in range(n):
        total = np.convolve(total, share)[:size]
    np.testing.assert_allclose(total[:60], Geometric(beta).pmf(np.arange(60)), rtol=1e-10)


@pytest.mark.parametrize(("variance", "t"), [(3.5, 0.7), (50.0, -0.2), (0.2, 1.5)])
def test_symmetric_skellam_mgf_matches_pmf(variance: float, t: float) -> None:
    mgf = proved("skellam_mgf_and_closure").expression("symmetric_mgf")
    xs = np.arange(-400, 401)
    series = float(np.sum(Skellam(variance).pmf(xs) * np.exp(t * xs)))
    assert series == pytest.approx(evaluate(mgf, sigma2=variance, t=t).real, rel=1e-9)
    assert Skellam(variance).variance() == pytest.approx(variance)


def test_asymmetric_skellam_mgf_matches_pmf() -> None:
    mgf = proved("skellam_mgf_and_closure").expression("skellam_mgf")
    mu1, mu2, t = 1.2, 0.5, 0.8
    xs = np.arange(-200, 201)
    series = float(np.sum(Skellam.from_rates(mu1, mu2).pmf(xs) * np.exp(t * xs)))
    assert series == pytest.approx(evaluate(mgf, mu1=mu1, mu2=mu2, t=t).real, rel=1e-9)


@pytest.mark.parametrize("scale", [0.7, 2.5, 10.0])
def test_discrete_laplace_loss_matches_log_pmf(scale: float) -> None:
    loss = sp.lambdify(sp.symbols("x Delta b"), proved("discrete_laplace_loss_bounded").expression("loss"))
    noise = DiscreteLaplace(scale)
    xs = np.arange(-12, 13)
    for shift in range(5):
        numeric = noise.log_pmf(xs) - noise.log_pmf(xs - shift)
        symbolic_loss = np.array([loss(int(x), shift, scale) for x in xs])
        np.testing.assert_allclose(numeric, symbolic_loss, atol=1e-12)
        assert np.max(np.abs(numeric)) == pytest.approx(shift / scale, abs=1e-12)
        assert float(noise.max_privacy_loss(shift)) == pytest.approx(shift / scale, rel=1e-12)


def test_decoder_round_trips_on_small_parameters() -> None:
    proof = proved("modular_decoding_lemma")
    decode = sp.lambdify(sp.symbols("y n g tau"), proof.expression("decoder"), modules="math")
    modulus = sp.lambdify(sp.symbols("n g tau"), proof.expression("modulus"), modules="math")
    for n in range(1, 4):
        for g in range(1, 4):
            for tau in range(1, 4):
                m = n * g + 2 * tau + 1
                assert modulus(n, g, tau) == m
                for s in range(-tau, n * g + tau + 1):
                    assert decode(s % m, n, g, tau) == s
                assert decode((n * g + tau + 1) % m, n, g, tau) == -tau
                assert decode((-tau - 1) % m, n, g, tau) == n * g + tau


@pytest.mark.parametrize(
    ("alpha", "sigma", "sensitivity"), [(2.0, 1.0, 1.0), (7.5, 3.0, 2.0), (1.01, 0.5, 1.0)]
)
def test_gaussian_rdp_matches_bounds_and_quadrature(alpha: float, sigma: float, sensitivity: float) -> None:
    divergence = proved("gaussian_rdp_closed_form").expression("divergence")
    value = evaluate(divergence, c=alpha - 1, sigma=sigma, Delta=sensitivity).real
    assert bounds.gaussian_rdp(alpha, sigma, sensitivity) == pytest.approx(value, rel=1e-12)
    with mp.workdps(30):

        def integrand(x: Any) -> Any:
            p = mp.npdf(x, sensitivity, sigma)
            q = mp.npdf(x, 0, sigma)
            return p**alpha * q ** (1 - alpha)

        quadrature = mp.log(mp.quad(integrand, [-mp.inf, 0, alpha * sensitivity, mp.inf])) / (alpha - 1)
    assert float(quadrature) == pytest.approx(value, rel=1e-10)
    assert value == pytest.approx(alpha * sensitivity**2 / (2 * sigma**2), rel=1e-12)
