"""Tests of :mod:`verification.federated.gdp` (A4): exact GDP accounting of the Gaussian tree.

``δ(ε)`` of a ``μ``-GDP release (Dong, Roth & Su 2022, Corollary 2.13) at the authors' code ``σ0``, at
Theorem 5.1's (Zhou & Chowdhury 2024, Section 5.1) and at the exactly calibrated one, for
``T = 10⁴``, ``B = 25``, ``κ = 9``.
"""

from __future__ import annotations

import pytest

from accounting.tree import ADD_REMOVE, REPLACE_ONE
from verification.errors import ParameterError
from verification.federated import (
    gdp_check,
)


def test_a4_the_code_sigma_misses_and_the_paper_and_exact_sigma_meet() -> None:
    """At (5, 0.1), T = 10⁴, B = 25, κ = 9: code σ0 misses δ; Theorem 5.1's and the exact one meet it."""
    code = gdp_check("code", sensitivity=ADD_REMOVE)
    assert code.kappa == 9
    assert code.delta_at_epsilon == pytest.approx(0.178, abs=5e-4)
    assert not code.meets
    code_r1 = gdp_check("code", sensitivity=REPLACE_ONE)
    assert code_r1.delta_at_epsilon == pytest.approx(0.82, abs=5e-3)
    paper = gdp_check("paper", sensitivity=ADD_REMOVE)
    assert paper.delta_at_epsilon == pytest.approx(1e-8, rel=0.5)
    assert paper.meets
    paper_r1 = gdp_check("paper", sensitivity=REPLACE_ONE)
    assert paper_r1.delta_at_epsilon == pytest.approx(2.1e-3, rel=0.05)
    exact = gdp_check("exact", sensitivity=REPLACE_ONE)
    assert exact.meets
    assert exact.sigma0 < paper_r1.sigma0
    assert exact.delta_at_epsilon == pytest.approx(0.1, rel=1e-6)
    with pytest.raises(ParameterError):
        gdp_check("theory")  # type: ignore[arg-type]
