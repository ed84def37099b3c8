"""dpcert accounting: exact, certified privacy guarantees for the noise real systems add.

Everything a user needs is re-exported here::

    from accounting import Accountant, AdditiveNoise, DistributedSum, PureDP, Skellam, calibrate

    mech = AdditiveNoise(Skellam(variance=100), sensitivity=1)
    float(mech.epsilon(delta=1e-5))   # certified ε, rounded up
    Accountant("add-remove").compose(DistributedSum(Skellam(10), users=10)).epsilon(1e-6)
    calibrate("skellam", epsilon=1, delta=1e-6, users=100)   # least noise, certified
    PureDP(0.5, "a cited theorem")    # known only to be 0.5-DP: answered for the worst case

Every ε, δ or divergence is an :class:`Enclosure` ``[lo, hi]``; ``float()`` gives ``hi``
rounded up, so a reported privacy loss is never optimistic. Amplification by shuffling lives in
:mod:`accounting.shuffle` (``shuffle.fmt_numerical(4, 100_000, 1e-6)``). The recipes of each paper
(:mod:`accounting.papers`) are re-exported here too (``protocol_parameters``, ``theorem53_sigma0``).
"""

from accounting import bounds, interop, papers, shuffle, subsampling, tree
from accounting.accountant import Accountant, Composed, Event, SelfComposed
from accounting.calibration import Calibration, calibrate
from accounting.certified import DEFAULT_DPS, Enclosure
from accounting.divergence import epsilon_for_delta, hockey_stick, renyi
from accounting.errors import (
    AccountingError,
    ParameterError,
    ParameterTypeError,
    UnsupportedError,
    UnsupportedEventError,
)
from accounting.mechanisms import AdditiveNoise, ApproxDP, DistributedSum, Mechanism, PureDP
from accounting.neighbouring import Neighbouring
from accounting.noise import (
    Binomial,
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
from accounting.papers.distributed_dp_mab import (
    EPSILON_DENOMINATOR,
    LOCAL_C,
    SIGMA_GRID,
    ProtocolParameters,
    RelaxedSecAggSplit,
    Variant,
    protocol_parameters,
    relaxed_secagg_split,
    skellam_rdp_theorem2_headline,
    skellam_rdp_theorem2_lemma3,
    skellam_rdp_theorem2_paper,
    theorem2_discrepancy,
    theorem2_g,
    theorem4_epsilon,
    theorem4_xi,
)
from accounting.papers.federated_lcb import (
    Theorem53Calibration,
    gaussian_amplification_lemma_f2,
    theorem53_sigma0,
)

__all__ = [
    "DEFAULT_DPS",
    "EPSILON_DENOMINATOR",
    "LOCAL_C",
    "SIGMA_GRID",
    "Accountant",
    "AccountingError",
    "AdditiveNoise",
    "ApproxDP",
    "Binomial",
    "Calibration",
    "CenteredBinomial",
    "Composed",
    "ContinuousNoise",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "DistributedSum",
    "Enclosure",
    "Event",
    "Gaussian",
    "Geometric",
    "Laplace",
    "LatticeNoise",
    "Mechanism",
    "Neighbouring",
    "NoiseDistribution",
    "ParameterError",
    "ParameterTypeError",
    "Polya",
    "ProtocolParameters",
    "PureDP",
    "RelaxedSecAggSplit",
    "SelfComposed",
    "Shifted",
    "Skellam",
    "SumOfDiscreteGaussians",
    "SystemRandomness",
    "Theorem53Calibration",
    "UnsupportedError",
    "UnsupportedEventError",
    "Variant",
    "bounds",
    "calibrate",
    "epsilon_for_delta",
    "gaussian_amplification_lemma_f2",
    "hockey_stick",
    "interop",
    "papers",
    "protocol_parameters",
    "relaxed_secagg_split",
    "renyi",
    "shuffle",
    "skellam_rdp_theorem2_headline",
    "skellam_rdp_theorem2_lemma3",
    "skellam_rdp_theorem2_paper",
    "subsampling",
    "theorem2_discrepancy",
    "theorem2_g",
    "theorem4_epsilon",
    "theorem4_xi",
    "theorem53_sigma0",
    "tree",
]

__version__ = "0.1.0"
