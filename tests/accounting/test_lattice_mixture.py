"""Tests of :mod:`accounting.lattice_mixture`: the law of ``(1 - w)·X + w·(X + s)``.

The exact PMF against the mixture of a discrete Gaussian table computed here in :mod:`mpmath`.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from mpmath import mp

from accounting import DiscreteGaussian, ParameterError
from accounting.lattice_mixture import LatticeMixture
from tests.accounting.test_subsampling import REF_DPS, assert_in, dgauss_pmf


def test_lattice_mixture_law() -> None:
    mix = LatticeMixture(DiscreteGaussian(2.0), Fraction(1, 3), 2)
    with mp.workdps(REF_DPS):
        base = dgauss_pmf(2.0)
        for x in (-3, 0, 1, 2, 5):
            exact = (1 - mp.mpf(1) / 3) * base[x] + mp.mpf(1) / 3 * base[x - 2]
            assert_in(exact, mix.pmf_exact(x, 30))
        assert float(mix.pmf(1)[()]) == pytest.approx(float((2 * base[1] + base[-1]) / 3), rel=1e-12)
    assert mix.sf_bound(3) >= mix.pmf_exact(3).lo
    assert mix.variance() == pytest.approx(DiscreteGaussian(2.0).variance() + 4 * (1 / 3) * (2 / 3))


def test_weight_outside_the_unit_interval_is_refused() -> None:
    with pytest.raises(ParameterError, match="weight"):
        LatticeMixture(DiscreteGaussian(1.0), Fraction(2), 1)
    with pytest.raises(ParameterError, match="weight"):
        LatticeMixture(DiscreteGaussian(1.0), float("nan"), 1)  # type: ignore[arg-type]
