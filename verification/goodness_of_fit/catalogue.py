"""Every sampler of the project, with its exact distribution and the sample size it is checked at.

Including the Pólya-difference construction of a discrete Laplace by ``n`` users (Chowdhury & Zhou
2023, Fact 1) at the example of their released-code bug: ``n = 64``, ``ε = 0.5``, ``g = 4``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from accounting.noise import (
    Binomial,
    CenteredBinomial,
    DiscreteGaussian,
    DiscreteLaplace,
    Geometric,
    LatticeNoise,
    Polya,
    Skellam,
    SumOfDiscreteGaussians,
)
from verification.goodness_of_fit.check import SamplerReport, check_sampler
from verification.goodness_of_fit.samplers import Sampler, polya_difference_sampler

__all__ = ["EXACT_SAMPLERS", "SAMPLERS", "SIZE", "SamplerCase"]


@dataclass(frozen=True)
class SamplerCase:
    """A sampler to check: its exact distribution, the sampler, and the sample size.

    ``sampler`` is ``None`` for the distribution's own :meth:`~LatticeNoise.sample`, or its
    :meth:`~LatticeNoise.sample_exact` when ``exact`` is true.
    """

    name: str
    noise: LatticeNoise
    size: int
    sampler: Sampler | None = None
    exact: bool = False

    def check(self, rng: np.random.Generator, alpha: float = 1e-3) -> SamplerReport:
        """:func:`check_sampler` on this case (the exact sampler when ``exact`` and no ``sampler``)."""
        sampler = self.sampler
        if sampler is None and self.exact:
            sampler = self.noise.sample_exact  # type: ignore[assignment]
        return check_sampler(self.noise, rng, self.size, sampler, alpha, name=self.name)


#: The example of the released code's Pólya bug: n = 64 users, ε = 0.5, g = 4, so b = g/ε = 8 and
#: β = e^{-1/8}.
_FACT1_USERS = 64
_FACT1_BETA = math.exp(-1 / 8)

#: Samples per check. At 200 000 draws the variance z-test has a standard error of about
#: ``sqrt((κ - 1)/N) <= 0.5%`` of the variance for every case below (kurtosis ``κ <= 6``), so a
#: sampler whose variance is 3% off gives ``|z| >= 6`` and fails; a wrong parameterization
#: (σ·√2, the Pólya scale bug) is off by far more.
SIZE = 200_000

#: Every sampler the project has, with its exact distribution (see :func:`check_sampler`).
SAMPLERS: tuple[SamplerCase, ...] = (
    SamplerCase("discrete Laplace (b = 8)", DiscreteLaplace(8.0), SIZE),
    SamplerCase("geometric (β = 0.9)", Geometric(0.9), SIZE),
    SamplerCase("Pólya (r = 2.5, β = 0.7)", Polya(2.5, 0.7), SIZE),
    SamplerCase("Pólya share (r = 1/16, β = 0.9)", Polya(Fraction(1, 16), 0.9), SIZE),
    SamplerCase("Skellam symmetric (variance 50)", Skellam(50.0), SIZE),
    SamplerCase("Skellam asymmetric (μ1 = 3.5, μ2 = 1.25, offset 2)", Skellam.from_rates(3.5, 1.25, 2), SIZE),
    SamplerCase("discrete Gaussian (σ = 0.4)", DiscreteGaussian(0.4), SIZE),
    SamplerCase("discrete Gaussian (σ = 150)", DiscreteGaussian(150.0), SIZE),
    SamplerCase("sum of 8 discrete Gaussians (σ = 3)", SumOfDiscreteGaussians(3.0, 8), SIZE),
    SamplerCase("centered binomial (31 trials)", CenteredBinomial(31), SIZE),
    SamplerCase("binomial (40 trials, p = 3/10)", Binomial(40, Fraction(3, 10)), SIZE),
    SamplerCase(
        f"Pólya differences of {_FACT1_USERS} users (Fact 1, b = 8)",
        DiscreteLaplace(beta=_FACT1_BETA),
        SIZE,
        polya_difference_sampler(_FACT1_USERS, _FACT1_BETA),
    ),
)


def _exact_polya_share(r: float | Fraction, beta: float | Fraction) -> Sampler:
    """The exact Pólya sampler (:meth:`accounting.noise.Polya.sample_exact`) as a share sampler."""
    return Polya(r, beta).sample_exact


#: Every exact sampler (``sample_exact``), on the cases of :data:`SAMPLERS`, plus rational
#: parameters (the fast int64 paths) and the users' sum of exact Pólya shares (Fact 1).
EXACT_SAMPLERS: tuple[SamplerCase, ...] = (
    *(
        SamplerCase(f"exact {case.name}", case.noise, case.size, exact=True)
        for case in SAMPLERS
        if case.sampler is None
    ),
    SamplerCase("exact discrete Laplace (b = 10/3)", DiscreteLaplace(Fraction(10, 3)), SIZE, exact=True),
    SamplerCase("exact discrete Gaussian (σ = 37/10)", DiscreteGaussian(Fraction(37, 10)), SIZE, exact=True),
    SamplerCase("exact discrete Laplace (decay β = 0.95)", DiscreteLaplace(beta=0.95), SIZE, exact=True),
    SamplerCase(
        "exact Pólya share (r = 1/1000, β = 0.999)", Polya(Fraction(1, 1000), 0.999), SIZE, exact=True
    ),
    SamplerCase(
        f"exact Pólya differences of {_FACT1_USERS} users (Fact 1, b = 8)",
        DiscreteLaplace(beta=_FACT1_BETA),
        SIZE,
        polya_difference_sampler(_FACT1_USERS, _FACT1_BETA, share=_exact_polya_share),
    ),
)
