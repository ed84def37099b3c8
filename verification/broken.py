"""A catalogue of mechanisms with known defects, and their correct counterparts.

Each :class:`BrokenMechanism` samples a faulty implementation on two neighbouring inputs
and states the privacy it *claims*, computed by :mod:`accounting` for the mechanism it was
meant to be. The empirical auditor (:func:`verification.audit.audit`) must flag every entry
of :data:`BROKEN` and none of :data:`CORRECT` (the same mechanisms, implemented correctly,
with the same kind of claim): :func:`run_catalogue` runs both.

The defects, published bugs first, then mutations of a correct mechanism:

* ``polya-scale-bug`` — Pólya shares sampled with Gamma scale ``(1-β)/β`` instead of
  ``β/(1-β)``: the released code (``MABPrivate.py``) of Chowdhury & Zhou 2023, whose footnote 3
  states the correct sampler (their Fact 1 then makes the users' total a discrete Laplace);
* ``float-laplace`` — numpy's floating-point Laplace sampler, whose set of possible outputs
  depends on the input (Mironov 2012, "On significance of the least significant bits for
  differential privacy", CCS);
* ``ldp-linucb-code-sigma`` — the Gaussian noise of LDP-LinUCB in the official code of Zheng et
  al. 2020 (``LDPbandit2020``, ``src/linucb.py``): ``σ = (2 + 2Y) sqrt(ln(1.25/δ))/ε``, √2 below
  the Gaussian mechanism of Dwork & Roth 2014 (Theorem A.1) that its README and the paper's
  preliminaries state, at the stated sensitivity ``2 + 2Y``, claiming the stated
  ``(ε, δ) = (4, 0.1)`` (exact ε 5.60); its counterpart ``ldp-linucb-exact-sigma`` is the σ
  :mod:`learners.ldp`'s paper mode calibrates exactly;
* ``dp-se-shared-noise`` — DP-SE (Sajed & Sheffet 2019, ICML), as Chowdhury & Zhou 2023 run it
  as their central-model baseline (Section 7), mutated to add one Laplace draw to every arm's sum:
  the noise cancels in the difference of two arms;
* ``skellam-dropout`` — distributed Skellam noise (Agarwal, Kairouz & Liu 2021; Chowdhury & Zhou
  2023, Theorem 2) with one of the ``n`` users' shares missing, accounted as if all ``n`` were
  there: the dropout that secure aggregation must handle (Bonawitz et al. 2017, CCS);
* ``discrete-gaussian-sigma`` — a discrete Gaussian (Canonne, Kamath & Steinke 2020) whose σ is
  smaller than the claimed one by a factor √2 (a variance/σ² mix-up), claiming the correct σ's
  ``ε(δ)``.

The parameters are chosen so that ``10^6`` samples per side flag each defect clearly.

The federated LinUCB entries (:func:`federated_catalogue`; audited by
``run_catalogue(federated=True)``, at most :data:`FEDERATED_SAMPLES` runs a side) are the published
privacy failure of Dubey & Pentland 2020 (NeurIPS) found by Zhou & Chowdhury 2024 (ICLR):

* ``dubey-pentland-schedule`` — Dubey & Pentland's sync rule reads non-private local data, so
  whether a sync follows round 1 tells another silo whether a user's ``‖x‖²`` exceeds a public
  constant (Zhou & Chowdhury 2024, Section 3, Example 3.1); silo-level LDP fails for every noise
  level (it needs ``δ >= 1``);
* ``dubey-pentland-action`` — the same through silo ``j``'s action at ``t = 2`` alone, which is
  all Fed-DP constrains (Zhou & Chowdhury 2024, Appendix B.2);
* their controls ``fedlinucb-fixed-schedule`` and ``fedlinucb-lazy-fixed-schedule``: Algorithm 1
  and Algorithm 8 of Zhou & Chowdhury 2024 on the same pair, with the fixed (public) schedule.

The other federated audits (A2 aggregate noise, A4 exact accounting, A5 within-batch
adaptivity) are not sampled audits; they are in :mod:`verification.federated`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accounting import validate as v
from accounting.mechanisms import AdditiveNoise, DistributedSum
from accounting.noise import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, Polya, Skellam
from learners.ldp import code_mode_check, gaussian_multiplier
from verification.audit import (
    AuditResult,
    CoordinateDifference,
    SamplePair,
    Statistic,
    additive_pair,
    audit,
)
from verification.audit.auditor import PILOT, planned_draws, within_draws
from verification.errors import ParameterError, ParameterTypeError
from verification.federated import SideChannelPair, Verdict, side_channel_claim

__all__ = [
    "BROKEN",
    "CORRECT",
    "FEDERATED_NAMES",
    "FEDERATED_PILOT",
    "FEDERATED_SAMPLES",
    "ArmSumsPair",
    "BrokenMechanism",
    "CatalogueRow",
    "FloatLaplacePair",
    "LaplaceReachability",
    "PolyaSharesPair",
    "SkellamSharesPair",
    "federated_catalogue",
    "run_catalogue",
]


@dataclass(frozen=True)
class BrokenMechanism:
    """A mechanism (broken or correct), the privacy it claims, and how to sample it.

    Attributes
    ----------
    name : str
        A short identifier.
    description : str
        What the implementation does (and, for a broken one, what is wrong with it).
    claimed_epsilon : float
        The ε claimed at ``delta``, computed by :mod:`accounting` (rounded up).
    delta : float
        The δ of the claim (0 for pure DP).
    sample_pair : SamplePair
        ``sample_pair(rng, size) -> (outputs on D, outputs on D')``.
    reference : str
        Where the defect (or the correct mechanism) is described.
    statistic : Statistic or None
        The statistic the audit should use (None: the auditor's default).
    samples : int or None
        The most samples per side this entry is audited with, whatever the catalogue's (None: no
        limit). An entry whose sample is a whole bandit run sets it, so that the catalogue's
        default of 10^6 cheap draws does not become 10^6 runs.
    pilot : int or None
        The most pilot samples per side (None: the auditor's default).
    """

    name: str
    description: str
    claimed_epsilon: float
    delta: float
    sample_pair: SamplePair
    reference: str
    statistic: Statistic | None = None
    samples: int | None = None
    pilot: int | None = None


# ---------------------------------------------------------------------------------------
# Pólya shares (Chowdhury & Zhou 2023, Fact 1; the released code's scale bug)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolyaSharesPair:
    """``n`` users each add ``Polya(1/n, β)`` differences to a sum moved by ``Δ`` (Chowdhury & Zhou 2023).

    With ``released_code=True`` every share is drawn as in the paper's released code
    (``MABPrivate.py``: ``lam = rng.gamma(shape=r, scale=(1-p)/p)``, then ``Poisson(lam)``),
    which samples ``Polya(r, 1-β)``; otherwise with the project's correct sampler
    (:meth:`accounting.noise.Polya.sample`, scale ``β/(1-β)``).

    The ``n`` users' draws are made in aggregate: ``Σ_i Poisson(Λ_i)`` with independent
    ``Λ_i ~ Gamma(1/n, θ)`` has the law of ``Poisson(Λ)`` with ``Λ ~ Gamma(1, θ)`` (Gamma
    shapes add; given the rates, Poisson variables add), so two Gamma–Poisson pairs per
    output give exactly the distribution of the ``2n`` per-user draws at ``1/n`` of the cost.
    """

    users: int
    beta: float
    sensitivity: int
    released_code: bool

    def _total(self, rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        shape = self.users * (1 / self.users)  # the users' Gamma shapes 1/n, added up
        if self.released_code:
            lam = rng.gamma(shape=shape, scale=(1 - self.beta) / self.beta, size=size)
            return rng.poisson(lam).astype(np.int64)
        return Polya(shape, self.beta).sample(rng, size)

    def _noise(self, rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        return self._total(rng, size) - self._total(rng, size)

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        return self._noise(rng, size), self._noise(rng, size) + self.sensitivity


def _polya(released_code: bool, users: int = 64, g: int = 4, epsilon: float = 0.5) -> BrokenMechanism:
    # The released-code example: n = 64, g = 4, ε = 0.5, so b = g/ε = 8 and Δ = g.
    beta = math.exp(-epsilon / g)
    claim = DistributedSum(Polya(Fraction(1, users), beta), users, sensitivity=g).pure_epsilon()
    if released_code:
        return BrokenMechanism(
            name="polya-scale-bug",
            description=(
                f"{users} users add Polya(1/{users}, β) differences, β = e^(-ε/g), g = {g}, sampled with "
                "Gamma scale (1-β)/β: the total is Lap_Z of scale ~0.47, not 8 (variance 0.30, not 127.8)"
            ),
            claimed_epsilon=float(claim),
            delta=0.0,
            sample_pair=PolyaSharesPair(users, beta, g, released_code=True),
            reference=(
                "Chowdhury & Zhou 2023 (ICLR), released code MABPrivate.py (footnote 5): Gamma scale "
                "(1-β)/β where footnote 3 has β/(1-β); Fact 1 (Goryczka & Xiong 2015, Thm 5.1)"
            ),
        )
    return BrokenMechanism(
        name="polya-shares",
        description=(
            f"{users} users add Polya(1/{users}, β) differences with Gamma scale β/(1-β): "
            f"the total is Lap_Z({g / epsilon:g}) (Goryczka & Xiong 2015)"
        ),
        claimed_epsilon=float(claim),
        delta=0.0,
        sample_pair=PolyaSharesPair(users, beta, g, released_code=False),
        reference="Chowdhury & Zhou 2023 (ICLR), Fact 1 and footnote 3 (Goryczka & Xiong 2015, Thm 5.1)",
    )


# ---------------------------------------------------------------------------------------
# DP-SE arm sums (Sajed & Sheffet 2019)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArmSumsPair:
    """DP-SE's released per-arm reward sums plus Laplace noise (Sajed & Sheffet 2019, as run by
    Chowdhury & Zhou 2023, Section 7).

    ``D`` has the arm sums ``sums``; ``D'`` differs in one reward of arm ``arm``, so its sum
    is larger by 1 (the sensitivity). With ``shared=True`` a single ``Lap(scale)`` draw is
    added to every arm (the defect); otherwise each arm gets its own draw.
    """

    sums: tuple[int, ...]
    arm: int
    scale: float
    shared: bool

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        k = len(self.sums)
        base = np.asarray(self.sums, dtype=np.float64)
        moved = base.copy()
        moved[self.arm] += 1

        def noise() -> NDArray[np.float64]:
            if self.shared:
                return np.repeat(rng.laplace(0.0, self.scale, (size, 1)), k, axis=1)
            return rng.laplace(0.0, self.scale, (size, k))

        return base + noise(), moved + noise()


def _dp_se(shared: bool, epsilon: float = 1.0) -> BrokenMechanism:
    sums = (30, 20, 25, 10)
    scale = 1 / epsilon
    # DP-SE's accounting: each arm's sum (sensitivity 1) gets Lap(1/ε); a reward belongs to
    # one arm, so the release is ε-DP by parallel composition.
    claim = AdditiveNoise(Laplace(scale), 1).pure_epsilon()
    pair = ArmSumsPair(sums, arm=0, scale=scale, shared=shared)
    if shared:
        return BrokenMechanism(
            name="dp-se-shared-noise",
            description=(
                f"DP-SE releases {len(sums)} arm sums plus ONE Lap(1/ε) draw shared by all arms: "
                "x[0] - x[1] is noiseless and reveals the changed reward"
            ),
            claimed_epsilon=float(claim),
            delta=0.0,
            sample_pair=pair,
            reference=(
                "Sajed & Sheffet 2019 (ICML), DP-SE, as run by Chowdhury & Zhou 2023, Section 7; "
                "mutated: one Laplace draw shared by every arm"
            ),
            statistic=CoordinateDifference(0, 1),
        )
    return BrokenMechanism(
        name="dp-se-independent-noise",
        description=f"DP-SE releases {len(sums)} arm sums, each plus its own Lap(1/ε) draw",
        claimed_epsilon=float(claim),
        delta=0.0,
        sample_pair=pair,
        reference="Sajed & Sheffet 2019 (ICML), DP-SE, as run by Chowdhury & Zhou 2023, Section 7",
        statistic=CoordinateDifference(0, 1),
    )


# ---------------------------------------------------------------------------------------
# Floating-point Laplace (Mironov 2012)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FloatLaplacePair:
    """``rng.laplace(first, scale)`` versus ``rng.laplace(second, scale)``: numpy's float sampler."""

    scale: float
    first: float = 0.0
    second: float = 1.0

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        return rng.laplace(self.first, self.scale, size), rng.laplace(self.second, self.scale, size)


@dataclass(frozen=True)
class LaplaceReachability:
    """Mironov's (2012) distinguisher for numpy's Laplace sampler: which input can produce ``y``?

    numpy's ``Generator.laplace(loc, scale)`` draws ``U`` on the grid ``k 2^-53`` of
    ``[0, 1)`` and returns ``loc + scale·ln(2U)`` for ``U < 1/2`` and
    ``loc - scale·ln(2 - U - U)`` otherwise. The arguments of the logarithm lie on grids
    (``2^-52`` and ``2^-53``), so the outputs near ``loc`` form a sparse subset of the
    floats, and the subsets for ``loc = 0`` and ``loc = 1`` are largely disjoint. For each
    ``y`` and each candidate input, this statistic inverts the sampler (``U ≈ e^{-|y -
    loc|/scale}`` on the branch given by the sign of ``y - loc``), re-runs it on the three
    nearest grid points, and checks whether one reproduces ``y`` bit for bit.

    Returns a code per output: 0 = only ``first`` can produce it, 1 = neither, 2 = both,
    3 = only ``second``; so ``{T <= 0}`` and ``{T >= 3}`` are the events with infinite
    privacy loss.

    ``np.log`` and the C library's ``log`` that numpy's sampler calls disagree in the last
    bit for a small fraction of arguments (about 0.3% on the machine this was written on),
    so a few outputs are misclassified. That costs the audit power, never validity: any
    statistic gives a valid lower bound.
    """

    scale: float
    first: float = 0.0
    second: float = 1.0

    def _reachable(self, y: NDArray[np.float64], loc: float) -> NDArray[np.bool_]:
        upper = y >= loc
        # Grid of the logarithm's argument: 2U (step 2^-52) below loc, 2 - 2U (2^-53) above.
        step = np.where(upper, 2.0**-53, 2.0**-52)
        k0 = np.rint(np.exp(-np.abs(y - loc) / self.scale) / step)
        hit = np.zeros(y.shape, dtype=bool)
        for j in (-1, 0, 1):
            arg = np.clip(k0 + j, 1, 1 / step) * step
            log = np.log(arg)
            hit |= np.where(upper, loc - self.scale * log, loc + self.scale * log) == y
        return hit

    def __call__(self, outputs: NDArray[Any]) -> NDArray[np.int64]:
        y = np.asarray(outputs, dtype=np.float64)
        a = self._reachable(y, self.first)
        b = self._reachable(y, self.second)
        # 0: first only, 1: neither, 2: both, 3: second only.
        return np.where(a, np.where(b, 2, 0), np.where(b, 3, 1)).astype(np.int64)

    def __str__(self) -> str:
        return f"reachable(x | loc={self.first:g} or {self.second:g})"


def _float_laplace(scale: float = 10.0) -> BrokenMechanism:
    claim = AdditiveNoise(Laplace(scale), 1).pure_epsilon()
    return BrokenMechanism(
        name="float-laplace",
        description=(
            f"numpy's floating-point Laplace(scale={scale:g}) added to 0 versus 1: about 60% of the "
            "outputs on one input are impossible on the other (least significant bits)"
        ),
        claimed_epsilon=float(claim),
        delta=0.0,
        sample_pair=FloatLaplacePair(scale),
        reference=(
            "Mironov 2012, 'On significance of the least significant bits for differential privacy' (CCS)"
        ),
        statistic=LaplaceReachability(scale),
    )


def _discrete_laplace(scale: int = 10) -> BrokenMechanism:
    noise = DiscreteLaplace(scale)
    return BrokenMechanism(
        name="discrete-laplace",
        description=f"integer noise Lap_Z({scale}) added to 0 versus 1 (the remedy for float Laplace)",
        claimed_epsilon=float(AdditiveNoise(noise, 1).pure_epsilon()),
        delta=0.0,
        sample_pair=additive_pair(noise, 1),
        reference="Chowdhury & Zhou 2023 (ICLR), Definition 4, Fact 3: the remedy for Mironov 2012",
    )


# ---------------------------------------------------------------------------------------
# Skellam shares with a dropout (Agarwal, Kairouz & Liu 2021; Bonawitz et al. 2017)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkellamSharesPair:
    """``present`` of ``users`` users each add a ``Skellam(share_variance)`` share to a sum moved by ``Δ``."""

    share_variance: Fraction
    present: int
    sensitivity: int

    def _noise(self, rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        share = Skellam(self.share_variance)
        total = np.zeros(size, dtype=np.int64)
        for _ in range(self.present):
            total += share.sample(rng, size)
        return total

    def __call__(self, rng: np.random.Generator, size: int) -> tuple[NDArray[Any], NDArray[Any]]:
        return self._noise(rng, size), self._noise(rng, size) + self.sensitivity


def _skellam(dropout: bool, users: int = 2, variance: int = 100, sensitivity: int = 10) -> BrokenMechanism:
    # With n users a dropout removes 1/n of the variance. At 10^6 samples per side the audit
    # flags it for n = 2 (ε_lb 4.2 against 3.1), 3 (3.6) and 4 (3.3), not for n = 8 (2.9):
    # a small share going missing is the accountant's job to catch, not the auditor's.
    delta = 1e-3
    share = Fraction(variance, users)
    claim = DistributedSum(Skellam(share), users, sensitivity).epsilon(delta)
    present = users - 1 if dropout else users
    return BrokenMechanism(
        name="skellam-dropout" if dropout else "skellam-all-shares",
        description=(
            f"{present} of {users} users add Sk({share}) shares (Δ = {sensitivity}); the claim assumes "
            f"all {users} (total variance {variance})"
            + (": one user dropped out and her noise is missing" if dropout else "")
        ),
        claimed_epsilon=float(claim),
        delta=delta,
        sample_pair=SkellamSharesPair(share, present, sensitivity),
        reference=(
            "Agarwal, Kairouz & Liu 2021 (NeurIPS), the Skellam mechanism; Chowdhury & Zhou 2023, "
            "Theorem 2; dropouts in secure aggregation: Bonawitz et al. 2017 (CCS)"
        ),
    )


# ---------------------------------------------------------------------------------------
# Discrete Gaussian with the wrong σ (Canonne, Kamath & Steinke 2020)
# ---------------------------------------------------------------------------------------


def _discrete_gaussian(wrong: bool, sigma: float = 10.0, sensitivity: int = 10) -> BrokenMechanism:
    delta = 1e-3
    claim = AdditiveNoise(DiscreteGaussian(sigma), sensitivity).epsilon(delta)
    used = sigma / math.sqrt(2) if wrong else sigma
    return BrokenMechanism(
        name="discrete-gaussian-sigma" if wrong else "discrete-gaussian",
        description=(
            f"N_Z(0, σ^2) with σ = {used:.6g} added to 0 versus {sensitivity}; the claim is for σ = {sigma:g}"
            + (" (σ off by a factor √2)" if wrong else "")
        ),
        claimed_epsilon=float(claim),
        delta=delta,
        sample_pair=additive_pair(DiscreteGaussian(used), sensitivity),
        reference="Canonne, Kamath & Steinke 2020 (NeurIPS), the discrete Gaussian mechanism",
    )


# ---------------------------------------------------------------------------------------
# LDP-LinUCB's σ in the official code of Zheng et al. 2020 (Dwork & Roth 2014, Theorem A.1)
# ---------------------------------------------------------------------------------------

#: The claim the LDP-LinUCB entries audit: δ = 0.1 is the official code's experiment's; at ε = 4 the
#: code's σ misses it by enough for 10^6 samples a side (the official ε ~ 10^5 is beyond any audit).
_LDP_EPSILON, _LDP_DELTA = 4.0, 0.1


def _ldp_linucb(code: bool, epsilon: float = _LDP_EPSILON, delta: float = _LDP_DELTA) -> BrokenMechanism:
    """LDP-LinUCB's user noise as the Gaussian mechanism the official code says it is.

    The code (``src/linucb.py``, rewards in ``[-1, 1]``: ``Y = 1``) releases ``x xᵀ + B`` and
    ``y x + ξ`` with ``σ = (2 + 2Y) sqrt(ln(1.25/δ))/ε`` (:func:`learners.ldp.code_sigma`), and its
    README states Dwork–Roth's ``(2 + 2Y) sqrt(2 ln(1.25/δ))/ε`` (:func:`learners.ldp.classic_sigma`;
    Dwork & Roth 2014, Theorem A.1, the Gaussian mechanism of the preliminaries of Zheng et al. 2020):
    one Gaussian mechanism on the concatenated message of sensitivity ``2 + 2Y = 4``,
    ``(ε, δ)``-LDP. The code lost the 2 under the root, so its σ is √2 short. Both entries sample
    ``N(0, σ²)`` added to 0 versus 4 and claim the stated ``(ε, δ) = (4, 0.1)``:

    * broken (``code=True``): the code's σ = 1.5893; its exact ε at δ = 0.1 is 5.5993
      (:func:`learners.ldp.code_mode_check`), and 10^6 samples a side bound it below by about 5.4;
    * correct: σ = 4 z = 1.9422 with ``z`` :func:`learners.ldp.gaussian_multiplier`, the least
      multiplier the Accountant certifies ``(4, 0.1)`` for (the paper mode's exact calibration, here
      for the stated sensitivity 4; ×4 is exact in floating point), about 3.9 from 10^6 samples a side.

    At ``(4, 0.1)`` the README's σ = 2.2475 would meet the claim (exact ε 3.13, though the classic
    formula is proved only for ε < 1, Dwork & Roth 2014, Theorem A.1): the missing √2 alone breaks
    it. This audits the code's
    argument — σ for one query of sensitivity 4 — not the release itself: LDP-LinUCB's messages have
    block sensitivities √2 and 2Y (:mod:`learners.ldp`), at which the code's σ gives ε = 2.46 at
    δ = 0.1 (``code_mode_check(...).epsilon_blocks``); the triangle bound's slack hides the missing
    factor there (up to ε ≈ 8 at δ = 0.1).
    """
    check = code_mode_check(epsilon, delta)
    sensitivity = check.stated_sensitivity
    if code:
        return BrokenMechanism(
            name="ldp-linucb-code-sigma",
            description=(
                f"N(0, σ^2) with the official LDP-LinUCB code's σ = {sensitivity:g} sqrt(ln(1.25/δ))/ε = "
                f"{check.sigma_code:.6g} added to 0 versus {sensitivity:g} (its stated sensitivity 2 + 2Y, "
                f"Y = 1); the README's σ = {sensitivity:g} sqrt(2 ln(1.25/δ))/ε = {check.sigma_stated:.6g} "
                f"is √2 larger; exact ε {check.epsilon_stated:.4g} at δ = {delta:g}, not {epsilon:g}"
            ),
            claimed_epsilon=check.claimed_epsilon,
            delta=check.delta,
            sample_pair=additive_pair(Gaussian(check.sigma_code), sensitivity),
            reference=(
                "Zheng et al. 2020 (NeurIPS), official code LDPbandit2020 src/linucb.py: σ without the 2 "
                "under the root of Dwork & Roth 2014, Theorem A.1"
            ),
        )
    sigma = gaussian_multiplier(epsilon, delta) * sensitivity
    return BrokenMechanism(
        name="ldp-linucb-exact-sigma",
        description=(
            f"N(0, σ^2) with σ = {sigma:.6g}, the least the Accountant certifies (ε, δ) = "
            f"({epsilon:g}, {delta:g}) at sensitivity {sensitivity:g} (learners.ldp's paper mode), "
            f"added to 0 versus {sensitivity:g}"
        ),
        claimed_epsilon=check.claimed_epsilon,
        delta=check.delta,
        sample_pair=additive_pair(Gaussian(sigma), sensitivity),
        reference=(
            "Zheng et al. 2020 (NeurIPS), Algorithm 5 (LDP-LinUCB); Dwork & Roth 2014, Theorem A.1 "
            "(proved for ε < 1); accounting.calibration.calibrate('gaussian', ε, δ)"
        ),
    )


# ---------------------------------------------------------------------------------------
# Federated LinUCB: the schedule side channel of Dubey & Pentland 2020 (Zhou & Chowdhury 2024, Example 3.1)
# ---------------------------------------------------------------------------------------

#: Whole two-round runs per side (vectorized): 4000 and a pilot of 1000 take about a second an entry
#: and bound ε from below by about 6.9 when one side never shows the event the other always does.
FEDERATED_SAMPLES = 4000
#: The names of :func:`federated_catalogue`'s entries, broken then correct (known before they are
#: built, so a name is checked without paying for their calibration).
FEDERATED_NAMES = (
    "dubey-pentland-schedule",
    "dubey-pentland-action",
    "fedlinucb-fixed-schedule",
    "fedlinucb-lazy-fixed-schedule",
)
FEDERATED_PILOT = 1000
_A1_EPSILON, _A1_DELTA = 1.0, 0.01


def _side_channel(name: str, pair: SideChannelPair, description: str, broken: bool) -> BrokenMechanism:
    reference = (
        "Dubey & Pentland 2020 (NeurIPS), Algorithm 1; the side channel: Zhou & Chowdhury 2024 (ICLR), "
        "Section 3, Example 3.1, Appendix B.1-B.2"
        if broken
        else "Zhou & Chowdhury 2024 (ICLR), Algorithm 1 (fixed schedule) and Algorithm 8 (Appendix G.3)"
    )
    return BrokenMechanism(
        name=name,
        description=description,
        claimed_epsilon=side_channel_claim(pair),
        delta=pair.delta,
        sample_pair=pair,
        reference=reference,
        samples=FEDERATED_SAMPLES,
        pilot=FEDERATED_PILOT,
    )


@cache
def federated_catalogue() -> tuple[tuple[BrokenMechanism, ...], tuple[BrokenMechanism, ...]]:
    """The A1 entries: (broken, correct), counterparts in the same order (built on first use).

    Each sample is what silo ``j`` sees of a two-round run on the neighbouring pair of Zhou &
    Chowdhury 2024, Example 3.1 (:class:`verification.federated.SideChannelPair`). Dubey & Pentland
    2020 claim ``(ε, δ)`` from
    their content noise (calibrated exactly, its ε is the claim); their sync after round 1 happens
    iff silo ``i``'s first user is Tracy, so no noise level can meet any ``δ < 1``. The fixed-batch
    controls (``B = 1``, at which Algorithm 1's batch sensitivity is the per-user one) sync on a
    public schedule and must not be flagged. The claims need a calibration and learners.linear, so
    the entries are built when first asked for rather than on import.
    """
    e, d = _A1_EPSILON, _A1_DELTA
    broken = (
        _side_channel(
            "dubey-pentland-schedule",
            SideChannelPair("dubey-pentland", e, d, "transcript"),
            "Dubey & Pentland (Algorithm 3): silo j sees 2·1{sync after round 1} + its action at t = 2; "
            "the sync fires iff silo i's first user has ‖x‖² > C = λ(e^D - 1) (Tracy, not Alice)",
            True,
        ),
        _side_channel(
            "dubey-pentland-action",
            SideChannelPair("dubey-pentland", e, d, "action"),
            "Dubey & Pentland: silo j's action at t = 2 only (Fed-DP): deterministic without the sync "
            "(Alice), decided by the synced noisy sums with it (Tracy)",
            True,
        ),
    )
    correct = (
        _side_channel(
            "fedlinucb-fixed-schedule",
            SideChannelPair("ldp-fedlinucb", e, d, "transcript", batch=1, sensitivity="batch"),
            "Algorithm 1 with protocol P, B = 1 (public schedule): silo j sees 2·1{sync after round 1} + "
            "its action at t = 2",
            False,
        ),
        _side_channel(
            "fedlinucb-lazy-fixed-schedule",
            SideChannelPair("ldp-fedlinucb-lazy", e, d, "action", batch=1),
            "Algorithm 8 (lazy) with protocol P, B = 1: silo j's action at t = 2",
            False,
        ),
    )
    assert tuple(m.name for m in (*broken, *correct)) == FEDERATED_NAMES
    return broken, correct


#: The broken mechanisms; the auditor must flag each of them.
BROKEN: tuple[BrokenMechanism, ...] = (
    _polya(released_code=True),
    _dp_se(shared=True),
    _float_laplace(),
    _skellam(dropout=True),
    _discrete_gaussian(wrong=True),
    _ldp_linucb(code=True),
)

#: Their correct counterparts, in the same order; the auditor must not flag them.
CORRECT: tuple[BrokenMechanism, ...] = (
    _polya(released_code=False),
    _dp_se(shared=False),
    _discrete_laplace(),
    _skellam(dropout=False),
    _discrete_gaussian(wrong=False),
    _ldp_linucb(code=False),
)


def _names(names: Sequence[str] | None, others: list[str], federated: bool) -> frozenset[str] | None:
    """``run_catalogue``'s ``names``, validated: None, or a non-empty set of the names of entries
    of the run (``others``, and :data:`FEDERATED_NAMES` if ``federated``)."""
    if names is None:
        return None
    if isinstance(names, str) or not isinstance(names, Sequence) or not names:
        raise ParameterTypeError("names", names, "a non-empty sequence of entry names, or None")
    for name in names:
        if not isinstance(name, str):
            raise ParameterTypeError("names", name, "an entry name (a str)")
    known = others + (list(FEDERATED_NAMES) if federated else [])
    unknown = sorted(set(names) - set(known))
    if unknown:
        more_names = "" if federated else " (federated=True adds the federated LinUCB entries)"
        valid = f"the name of an entry of this run: {', '.join(known)}{more_names}"
        raise ParameterError("names", unknown[0], valid)
    return frozenset(names)


_Plan = tuple[BrokenMechanism, bool, np.random.SeedSequence, dict[str, Any], int]


def _plans(
    chosen: Sequence[tuple[tuple[BrokenMechanism, bool], np.random.SeedSequence]],
    samples: int,
    options: dict[str, Any],
    max_draws: int | None,
) -> list[_Plan]:
    """Each chosen entry's audit: the entry, whether it is broken, its seed, the auditor's options
    and its samples (an entry's own caps applied); refused, before any draw, when all of them
    would draw more than ``max_draws`` outputs."""
    plans = []
    for (mech, broken), child in chosen:
        extra = dict(options)
        if mech.pilot is not None:
            asked = v.integer("pilot", options["pilot"], minimum=100) if "pilot" in options else mech.pilot
            extra["pilot"] = min(asked, mech.pilot)
        n = samples if mech.samples is None else min(samples, mech.samples)
        plans.append((mech, broken, child, extra, n))
    draws = sum(planned_draws(n, extra.get("pilot", PILOT)) for *_, extra, n in plans)
    within_draws(
        draws,
        max_draws,
        f"{len(plans)} entr{'y' if len(plans) == 1 else 'ies'}, each 2 sides x (samples + pilot)",
        value=samples,
    )
    return plans


@dataclass(frozen=True)
class CatalogueRow(Verdict):
    """One audited catalogue entry.

    ``flagged`` is the auditor's verdict (a violation at the stated confidence);
    ``expected`` whether it should be (True for :data:`BROKEN`); ``ok`` whether they agree.
    """

    name: str
    broken: bool
    claimed_epsilon: float
    delta: float
    epsilon_lower: float
    flagged: bool
    result: AuditResult

    def summary(self) -> str:
        """One human-readable line."""
        kind = "broken " if self.broken else "correct"
        verdict = "flagged" if self.flagged else "not flagged"
        return (
            f"{kind} {self.name:29s} claimed ε = {self.claimed_epsilon:<8.4g} {f'(δ = {self.delta:g})':13s} "
            f"ε_lb = {self.epsilon_lower:<8.4g} {verdict:12s} {'ok' if self.ok else 'UNEXPECTED'}"
        )


def run_catalogue(
    samples: int = 1_000_000,
    seed: int | None = 0,
    *,
    confidence: float = 0.95,
    include_correct: bool = True,
    federated: bool = False,
    names: Sequence[str] | None = None,
    audit_fn: Callable[..., AuditResult] = audit,
    max_draws: int | None = None,
    **options: Any,
) -> list[CatalogueRow]:
    """Audit every catalogue entry: :data:`BROKEN`, then (``include_correct``) :data:`CORRECT`,
    then (``federated``) the federated LinUCB entries of :func:`federated_catalogue`.

    Parameters
    ----------
    samples : int
        Samples per side for each audit.
    seed : int or None
        Root seed; entry ``i`` gets the ``i``-th spawned :class:`numpy.random.SeedSequence`.
    confidence : float
        The confidence of every audit.
    include_correct : bool
        Also audit the correct counterparts (the false-alarm check).
    federated : bool
        Also audit the federated LinUCB entries (broken, then correct if ``include_correct``); an
        entry's ``samples`` and ``pilot`` cap the catalogue's. Their seeds are spawned after the
        others', so the other entries' results do not depend on it.
    names : sequence of str or None
        Audit only the entries of these names, among those the other arguments select (None: all).
        Each entry keeps the seed it has without ``names``, so its row is the one the whole run gives.
    audit_fn : callable
        The auditor (default :func:`verification.audit.audit`).
    max_draws : int or None
        A budget: a run whose audits would draw more outputs in all (each entry's
        :func:`~verification.audit.auditor.planned_draws`) is refused before any draw (``None``:
        no budget).
    **options
        Passed to the auditor (``chunk``, ``scheduler``, ...).

    Returns
    -------
    list of CatalogueRow
    """
    samples = v.integer("samples", samples, minimum=100)
    if seed is not None:
        seed = v.integer("seed", seed, minimum=0)
    if "statistic" in options or "delta" in options or "claimed_epsilon" in options:
        raise ParameterError(
            "options", sorted(options), "no statistic, delta or claimed_epsilon (set per entry)"
        )
    if max_draws is not None:
        max_draws = v.integer("max_draws", max_draws, minimum=1)
    entries = [(m, True) for m in BROKEN] + ([(m, False) for m in CORRECT] if include_correct else [])
    # names checked before the federated entries' calibration is paid for
    wanted = _names(names, [m.name for m, _ in entries], federated)
    root = np.random.SeedSequence(seed)
    seeds = root.spawn(len(entries))
    # The federated entries cost a calibration to build: not when every name asked is another's.
    if federated and (wanted is None or not wanted <= {m.name for m, _ in entries}):
        fed_broken, fed_correct = federated_catalogue()
        more = [(m, True) for m in fed_broken] + (
            [(m, False) for m in fed_correct] if include_correct else []
        )
        entries += more
        seeds += root.spawn(len(more))
    chosen = list(zip(entries, seeds, strict=True))
    if wanted is not None:
        chosen = [(entry, child) for entry, child in chosen if entry[0].name in wanted]
    plans = _plans(chosen, samples, options, max_draws)
    rows = []
    for mech, broken, child, extra, n in plans:
        result = audit_fn(
            mech.sample_pair,
            delta=mech.delta,
            claimed_epsilon=mech.claimed_epsilon,
            samples=n,
            confidence=confidence,
            seed=child,
            statistic=mech.statistic,
            **extra,
        )
        rows.append(
            CatalogueRow(
                name=mech.name,
                broken=broken,
                claimed_epsilon=mech.claimed_epsilon,
                delta=mech.delta,
                epsilon_lower=result.epsilon_lower,
                flagged=result.violation,
                result=result,
            )
        )
    return rows
