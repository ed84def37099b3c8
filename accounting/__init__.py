"""dpcert accounting: exact, certified privacy guarantees for the noise real systems add.

Everything a user needs is re-exported here::

    from accounting import AdditiveNoise, DistributedSum, PureDP, Skellam, DiscreteGaussian

    mech = AdditiveNoise(Skellam(variance=100), sensitivity=1)
    float(mech.epsilon(delta=1e-5))   # certified ε, rounded up
    PureDP(0.5, "a cited theorem")    # known only to be 0.5-DP: answered for the worst case

Every ε, δ or divergence is an :class:`Enclosure` ``[lo, hi]``; ``float()`` gives ``hi``
rounded up, so a reported privacy loss is never optimistic. Amplification by shuffling lives in
:mod:`accounting.shuffle` (``shuffle.fmt_numerical(4, 100_000, 1e-6)``).
"""

from accounting import bounds, shuffle
from accounting._certified import Enclosure
from accounting.divergence import epsilon_for_delta, hockey_stick, renyi
from accounting.errors import AccountingError, ParameterError, ParameterTypeError, UnsupportedError
from accounting.mechanisms import AdditiveNoise, DistributedSum, Mechanism, PureDP
from accounting.noise import (
    CenteredBinomial,
    ContinuousNoise,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Geometric,
    Laplace,
    LatticeNoise,
    NoiseDistribution,
    Polya,
    Shifted,
    Skellam,
    SumOfDiscreteGaussians,
    SystemRandomness,
)

__all__ = [
    "AccountingError",
    "AdditiveNoise",
    "CenteredBinomial",
    "ContinuousNoise",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "DistributedSum",
    "Enclosure",
    "Gaussian",
    "Geometric",
    "Laplace",
    "LatticeNoise",
    "Mechanism",
    "NoiseDistribution",
    "ParameterError",
    "ParameterTypeError",
    "Polya",
    "PureDP",
    "Shifted",
    "Skellam",
    "SumOfDiscreteGaussians",
    "SystemRandomness",
    "UnsupportedError",
    "bounds",
    "epsilon_for_delta",
    "hockey_stick",
    "renyi",
    "shuffle",
]

__version__ = "0.1.0"
