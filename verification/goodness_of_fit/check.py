"""Checking a sampler: draw, time, and run the chi-square, G and moment tests at a family-wise level."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from accounting import validate as v
from accounting.noise import LatticeNoise
from verification.errors import ParameterTypeError, VerificationError
from verification.goodness_of_fit.fit import FitResult, chi_square_test, g_test
from verification.goodness_of_fit.moments import MomentResult, moment_test
from verification.goodness_of_fit.pooling import checked_level, lattice
from verification.goodness_of_fit.samplers import Sampler

__all__ = ["SamplerReport", "check_sampler"]


@dataclass(frozen=True)
class SamplerReport:
    """The verdict on one sampler: three tests, each at level ``alpha / 3`` (Bonferroni).

    ``passed`` is true when the chi-square test, the G-test and the moment test all pass
    at ``alpha / 3``, so a correct sampler fails with probability at most ``alpha``.
    """

    name: str
    noise: str
    size: int
    seconds: float
    samples_per_second: float
    chi_square: FitResult
    g: FitResult
    moments: MomentResult
    alpha: float
    passed: bool

    @property
    def verdict(self) -> str:
        """``"pass"`` or ``"FAIL"``."""
        return "pass" if self.passed else "FAIL"

    @property
    def p_value(self) -> float:
        """The smallest of the three p-values (the one that decides the verdict)."""
        return min(self.chi_square.p_value, self.g.p_value, self.moments.p_value)

    def summary(self) -> str:
        """The verdict, speed and all three tests, for a terminal."""
        head = (
            f"{self.name}: {self.verdict} ({self.noise}; {self.size} samples in {self.seconds:.3f} s, "
            f"{self.samples_per_second:,.0f} samples/s; family-wise alpha = {self.alpha:g})"
        )
        return "\n".join([head, self.chi_square.summary(), self.g.summary(), self.moments.summary()])


def check_sampler(
    noise: LatticeNoise,
    rng: np.random.Generator,
    size: int,
    sampler: Sampler | None = None,
    alpha: float = 1e-3,
    *,
    min_expected: float = 5,
    name: str | None = None,
) -> SamplerReport:
    """Draw ``size`` samples and test them against the exact PMF of ``noise``.

    Runs :func:`chi_square_test`, :func:`g_test` and :func:`moment_test`, each at level
    ``alpha / 3``, so the family-wise false-alarm rate for a correct sampler is at most
    ``alpha`` (union bound). Only the sampling is timed.

    Parameters
    ----------
    noise : LatticeNoise
        The distribution the sampler claims to draw from.
    rng : numpy.random.Generator
        The randomness (use a spawned stream per check).
    size : int
        Number of samples, ``>= 2``.
    sampler : callable, optional
        ``sampler(rng, size)`` returning integer draws; ``noise.sample`` when omitted.
    alpha : float
        Family-wise level in (0, 1).
    min_expected : float
        Smallest expected count of a pooled bin.
    name : str, optional
        A label for the report (the noise's repr when omitted).

    Returns
    -------
    SamplerReport
    """
    dist = lattice(noise)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError("rng", rng, "a numpy.random.Generator")
    n = v.integer("size", size, minimum=2)
    if sampler is not None and not callable(sampler):
        raise ParameterTypeError("sampler", sampler, "a callable sampler(rng, size) or None")
    level = checked_level(alpha)
    draw: Sampler = sampler if sampler is not None else dist.sample  # type: ignore[assignment]
    started = time.perf_counter()
    samples = np.asarray(draw(rng, n))
    seconds = time.perf_counter() - started
    if samples.size != n:
        raise VerificationError(f"the sampler returned {samples.size} draws, not size={n}")
    each = level / 3
    chi = chi_square_test(dist, samples, min_expected, alpha=each)
    g = g_test(dist, samples, min_expected, alpha=each)
    moments = moment_test(dist, samples, alpha=each)
    return SamplerReport(
        name=name if name is not None else repr(dist),
        noise=repr(dist),
        size=n,
        seconds=seconds,
        samples_per_second=n / seconds if seconds > 0 else math.inf,
        chi_square=chi,
        g=g,
        moments=moments,
        alpha=level,
        passed=chi.passed and g.passed and moments.passed,
    )
