"""Tests of :mod:`accounting.papers.federated_lcb`: Lemma F.2 and the σ0 of Theorem 5.3 of Zhou &
Chowdhury 2024, against the formulas written out here and the feasibility our notes on the paper
(``papers/federated-lcb.md``) derive.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accounting.amplification import fmt_closed
from accounting.errors import ParameterError
from accounting.papers.federated_lcb import gaussian_amplification_lemma_f2, theorem53_sigma0


def test_lemma_f2_formula() -> None:
    """Appendix F, Lemma F.2: ε_r and δ_r, with the (1 + e^{-ε0}/2) reading."""
    e0, d0, big_n, n, dl = 0.002, 1e-10, 10**6, 100, 1e-3
    r = gaussian_amplification_lemma_f2(e0, d0, big_n, n, dl)
    assert r.valid
    q = math.tanh(e0 / 2)
    big = math.exp(n * e0)
    eps_r = math.log1p(q * (8 * math.sqrt(big * math.log(4 / dl) / big_n) + 8 * big / big_n))
    assert r.epsilon == pytest.approx(eps_r, rel=1e-12)
    assert r.epsilon >= eps_r
    delta_r = q * dl + big_n * (math.exp(eps_r) + 1) * (1 + math.exp(-e0) / 2) * d0
    assert r.delta == pytest.approx(delta_r, rel=1e-12)
    # at n = 1 it is FMT's Theorem 3.1 (with Theorem 3.8's δ term)
    one = gaussian_amplification_lemma_f2(0.5, 0.0, 100_000, 1, 1e-6)
    assert one.epsilon == pytest.approx(fmt_closed(0.5, 100_000, 1e-6).epsilon, rel=1e-14)


def test_lemma_f2_hypotheses() -> None:
    big = gaussian_amplification_lemma_f2(0.05, 1e-9, 10**6, 100, 1e-3)  # n ε0 = 5 >= 1
    assert not big.valid
    assert (big.epsilon, big.delta) == (0.05, 1e-9)
    few = gaussian_amplification_lemma_f2(0.001, 1e-9, 100, 10, 1e-3)  # N <= 16 ln(2/δ)
    assert not few.valid
    assert "-inf" in few.conditions


@settings(max_examples=30)
@given(e0=st.floats(1e-5, 9e-3), silos=st.integers(10**5, 10**7))
def test_lemma_f2_monotone(e0: float, silos: int) -> None:
    a = gaussian_amplification_lemma_f2(e0, 1e-12, silos, 100, 1e-4)
    b = gaussian_amplification_lemma_f2(e0 * 1.1, 1e-12, silos, 100, 1e-4)
    c = gaussian_amplification_lemma_f2(e0, 1e-12, silos * 2, 100, 1e-4)
    if a.valid and b.valid:
        assert a.epsilon <= b.epsilon
    if a.valid and c.valid:
        assert c.epsilon <= a.epsilon


def test_theorem53_infeasible_at_the_papers_settings() -> None:
    """Theorem 5.3 at the paper's own M = 100, δ = 1e-4 (Fig. 2) cannot meet M > 16 ln(2/δ_lemma)."""
    cal = theorem53_sigma0(1e-4, 1e-4, 100, 10_000, 100)
    assert not cal.valid
    assert math.isinf(cal.sigma0)
    assert "16 ln" in cal.conditions


def test_theorem53_calibration_meets_its_target() -> None:
    eps, dl, big_m, T, B = 1e-3, 1e-2, 10**6, 100, 10
    cal = theorem53_sigma0(eps, dl, big_m, T, B)
    assert cal.valid
    assert cal.releases == 4
    assert cal.epsilon <= eps
    assert cal.delta <= dl
    # the noise is the classic Gaussian recipe at (ε0, δ0), rounded up
    assert cal.sigma0 == pytest.approx(math.sqrt(2 * math.log(1.25 / cal.delta0)) / cal.epsilon0, rel=1e-12)
    # each release is Lemma F.2 at (ε0, δ0)
    d_lemma = dl / (4 * cal.releases) / 2  # δ_r = δ/(4κ), and the lemma gets half of it
    again = gaussian_amplification_lemma_f2(cal.epsilon0, cal.delta0, big_m, T, d_lemma)
    assert again.valid
    assert again.epsilon == pytest.approx(cal.epsilon_release, rel=1e-12)
    # more ε, less noise (here ε0 hits the cap 1/T from ε = 0.003 on: the noise stops falling)
    sigmas = [theorem53_sigma0(e, dl, big_m, T, B).sigma0 for e in (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)]
    assert sigmas == sorted(sigmas, reverse=True)
    assert sigmas[-1] == sigmas[-2]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: gaussian_amplification_lemma_f2(1.0, 1e-9, 10, 10, 1e-3), "epsilon0"),
        (lambda: gaussian_amplification_lemma_f2(0.1, -1e-9, 10, 10, 1e-3), "delta0"),
        (lambda: theorem53_sigma0(1, 1e-3, 100, 10, 20), "batch"),
    ],
)
def test_bad_input_names_the_parameter(call: object, name: str) -> None:
    with pytest.raises(ParameterError) as err:
        call()  # type: ignore[operator]
    assert err.value.name == name
    assert name in str(err.value)
