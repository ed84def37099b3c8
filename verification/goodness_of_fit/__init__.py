"""Samplers against exact PMFs: chi-square and G-tests with pooled tails, and moment z-tests.

A sampler is only as private as the distribution it really draws from. The accountant
assumes the exact PMF of :mod:`accounting.noise`; these tests ask whether samples are
consistent with it:

* :func:`chi_square_test` and :func:`g_test` — Pearson's ``X² = Σ (O - E)²/E`` and the
  likelihood-ratio ``G = 2 Σ O ln(O/E)`` over integer bins, with expected counts from the
  *exact* PMF (certified enclosures converted to float) and tails pooled so that every
  expected count is at least ``min_expected``; p-values from the ``χ²`` distribution with
  ``bins - 1`` degrees of freedom (no parameter is estimated);
* :func:`moment_test` — z-tests of the sample mean and of the sample variance about the
  known mean against the exact moments;
* :func:`check_sampler` — draws, times, and runs all three, with a verdict at a family-wise
  level ``alpha``;
* :data:`SAMPLERS` — every sampler of the project, with the sample size at which it is
  checked, including the Pólya-difference construction of a discrete Laplace (Chowdhury & Zhou
  2023, Fact 1);
* :func:`buggy_polya_sample` — the Pólya sampler of that paper's released code
  (``MABPrivate.py``), whose Gamma scale ``(1-β)/β`` should be ``β/(1-β)`` (the paper's
  footnote 3): it must fail.

The p-values are exact for the asymptotic ``χ²`` law of the statistics; with every expected
count ``>= 5`` that law is the classical, accurate approximation (no exact multinomial test
is attempted).

The package, by idea: :mod:`~verification.goodness_of_fit.pooling` (the exact table, pooled
tails), :mod:`~verification.goodness_of_fit.pvalues` (exact ``χ²`` p-values),
:mod:`~verification.goodness_of_fit.fit` (chi-square, G), :mod:`~verification.goodness_of_fit.moments`,
:mod:`~verification.goodness_of_fit.check` (:func:`check_sampler`),
:mod:`~verification.goodness_of_fit.samplers` and :mod:`~verification.goodness_of_fit.catalogue`.
"""

from verification.goodness_of_fit.catalogue import EXACT_SAMPLERS, SAMPLERS, SIZE, SamplerCase
from verification.goodness_of_fit.check import SamplerReport, check_sampler
from verification.goodness_of_fit.fit import FitResult, chi_square_test, g_test
from verification.goodness_of_fit.moments import MomentResult, moment_test
from verification.goodness_of_fit.pooling import Bin
from verification.goodness_of_fit.samplers import (
    Sampler,
    buggy_polya_sample,
    exact_share_sum_sampler,
    polya_difference_sampler,
    polya_sample,
)

__all__ = [
    "EXACT_SAMPLERS",
    "SAMPLERS",
    "SIZE",
    "Bin",
    "FitResult",
    "MomentResult",
    "Sampler",
    "SamplerCase",
    "SamplerReport",
    "buggy_polya_sample",
    "check_sampler",
    "chi_square_test",
    "exact_share_sum_sampler",
    "g_test",
    "moment_test",
    "polya_difference_sampler",
    "polya_sample",
]
