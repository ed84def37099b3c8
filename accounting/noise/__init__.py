"""Noise distributions: on the integers (the noise real systems add) and two continuous baselines.

Every distribution is an immutable value with validated parameters. A lattice
distribution (:class:`LatticeNoise`) offers

* an exact PMF at any precision: :meth:`LatticeNoise.pmf_exact` returns a certified
  :class:`~accounting.certified.Enclosure`, and :meth:`LatticeNoise.pmf_intervals` a whole
  table of :mod:`mpmath.iv` intervals, which is what the divergences consume;
* a vectorized float64 PMF for statistics (:meth:`LatticeNoise.pmf`, numpy/scipy);
* rigorous one-sided tail bounds (:meth:`LatticeNoise.sf_bound` for ``P(X >= t)``,
  :meth:`LatticeNoise.cdf_bound` for ``P(X <= t)``) and ``tail_bound(t) >= P(|X| >= t)``,
  used to truncate infinite sums with a certified remainder;
* an a-priori Rényi bound for the shifted pair ``(X + Δ, X)`` (:meth:`LatticeNoise.renyi_prior`),
  used only to bound the truncated tail of a Rényi sum by Hölder's inequality;
* ``variance()``, ``support()`` and ``sample(rng, size)`` (fast, floating point inside numpy);
* ``sample_exact(rng, size)``: integer / rational arithmetic only, vectorized over the draws
  (:mod:`accounting._exact`: Canonne–Kamath–Steinke 2020 Algorithms 1–3 for ``Bernoulli(exp(-γ))``,
  the discrete Laplace and the discrete Gaussian; exact geometric, Poisson (hence Skellam), Pólya
  (negative-binomial totals split by the Ewens partition) and binomial (fair random bits against
  the binary digits of ``p``)).
  ``rng`` is a :class:`numpy.random.Generator` or :class:`SystemRandomness` (the operating
  system's CSPRNG). Every parameter is used as the exact rational it is (a float is the dyadic
  rational it stores; pass :class:`fractions.Fraction` for values like 1/3).

Parameters that are naturally rational (a scale ``g/ε``) may be given as
:class:`fractions.Fraction`; the exact PMFs then enclose the rational value rigorously.

One module per family: :mod:`~accounting.noise.discrete_laplace`, :mod:`~accounting.noise.polya`
(Pólya and geometric), :mod:`~accounting.noise.skellam`, :mod:`~accounting.noise.discrete_gaussian`,
:mod:`~accounting.noise.sum_of_discrete_gaussians`, :mod:`~accounting.noise.binomial` and
:mod:`~accounting.noise.continuous` (Laplace and Gaussian baselines), on the shared protocol of
:mod:`~accounting.noise.base`; :mod:`~accounting.noise.shifted` moves a lattice distribution by an
integer. :mod:`~accounting.noise.families` is the one list of the families by name
(:data:`NOISE_FAMILIES`), from which the ledger, the ``dp_accounting`` conversion and the command
line take theirs.
"""

from accounting._exact import Randomness, SystemRandomness, bernoulli_exp, check_randomness, uniform_below
from accounting.certified import DEFAULT_DPS
from accounting.noise.base import (
    MAX_EXACT_SCALE,
    MAX_SAMPLE_SCALE,
    MAX_SAMPLE_VARIANCE,
    FloatArray,
    IntArray,
    LatticeNoise,
    NoiseDistribution,
    Param,
    RenyiPrior,
)
from accounting.noise.binomial import EXACT_ANCHOR_BITS, Binomial, CenteredBinomial, ln_factorial
from accounting.noise.continuous import ContinuousNoise, Gaussian, Laplace
from accounting.noise.discrete_gaussian import TAIL_SUM_SIGMA, DiscreteGaussian
from accounting.noise.discrete_laplace import DiscreteLaplace
from accounting.noise.families import NOISE_FAMILIES, NoiseFamily, family_named, family_of, family_of_type
from accounting.noise.polya import Geometric, Polya
from accounting.noise.shifted import Shifted
from accounting.noise.skellam import Skellam
from accounting.noise.sum_of_discrete_gaussians import MAX_SUM_TABLE_BITS, SumOfDiscreteGaussians

__all__ = [
    "DEFAULT_DPS",
    "EXACT_ANCHOR_BITS",
    "MAX_EXACT_SCALE",
    "MAX_SAMPLE_SCALE",
    "MAX_SAMPLE_VARIANCE",
    "MAX_SUM_TABLE_BITS",
    "NOISE_FAMILIES",
    "TAIL_SUM_SIGMA",
    "Binomial",
    "CenteredBinomial",
    "ContinuousNoise",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "FloatArray",
    "Gaussian",
    "Geometric",
    "IntArray",
    "Laplace",
    "LatticeNoise",
    "NoiseDistribution",
    "NoiseFamily",
    "Param",
    "Polya",
    "Randomness",
    "RenyiPrior",
    "Shifted",
    "Skellam",
    "SumOfDiscreteGaussians",
    "SystemRandomness",
    "bernoulli_exp",
    "check_randomness",
    "family_named",
    "family_of",
    "family_of_type",
    "ln_factorial",
    "uniform_below",
]
