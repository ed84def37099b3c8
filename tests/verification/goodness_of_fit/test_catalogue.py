"""Tests of :mod:`verification.goodness_of_fit.catalogue`: every sampler of the project passes.

Fixed seeds, so the outcome is reproducible; the fast samplers and the exact ones (``sample_exact``),
including the users' sum of Pólya differences of Chowdhury & Zhou 2023, Fact 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from accounting import DiscreteGaussian, DiscreteLaplace, Skellam
from accounting.noise import NOISE_FAMILIES, SumOfDiscreteGaussians
from verification.goodness_of_fit import (
    EXACT_SAMPLERS,
    SAMPLERS,
    SamplerCase,
    polya_difference_sampler,
)

from .streams import rng


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(SAMPLERS)), ids=[c.name for c in SAMPLERS])
def test_every_sampler_passes(index: int) -> None:
    case = SAMPLERS[index]
    report = case.check(rng(index))
    assert report.passed, report.summary()
    assert report.verdict == "pass"
    # Pooled bins are valid, and the library's closed-form variance matches the PMF's.
    assert all(b.expected >= 5 for b in report.chi_square.bins)
    assert report.moments.table_variance == pytest.approx(report.moments.expected_variance, rel=1e-7)
    assert report.samples_per_second > 0


def test_samplers_cover_every_distribution() -> None:
    """The catalogue checks a sampler of every lattice family of the project's one list of noise
    families (:data:`accounting.noise.NOISE_FAMILIES`), fast and exact: a new family is added there
    and this test asks for its samplers to be checked."""
    lattice = {f.cls for f in NOISE_FAMILIES if f.lattice}
    assert lattice >= {DiscreteLaplace, DiscreteGaussian, Skellam, SumOfDiscreteGaussians}
    assert {type(case.noise) for case in SAMPLERS} >= lattice
    assert {type(case.noise) for case in EXACT_SAMPLERS if case.exact} >= lattice
    assert any(case.sampler is not None for case in SAMPLERS)  # the Pólya-difference construction
    skellams = [c.noise for c in SAMPLERS if isinstance(c.noise, Skellam)]
    assert any(s.symmetric for s in skellams)
    assert any(not s.symmetric for s in skellams)
    sigmas = [float(c.noise.sigma) for c in SAMPLERS if type(c.noise) is DiscreteGaussian]
    assert min(sigmas) < 0.5 < 100 < max(sigmas)


def test_case_with_custom_sampler_runs() -> None:
    case = SamplerCase("two users", DiscreteLaplace(beta=0.5), 20_000, polya_difference_sampler(2, 0.5))
    assert case.check(rng(28)).passed


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(EXACT_SAMPLERS)), ids=[c.name for c in EXACT_SAMPLERS])
def test_every_exact_sampler_passes(index: int) -> None:
    case = EXACT_SAMPLERS[index]
    report = case.check(np.random.default_rng(np.random.SeedSequence(7_000 + index)))
    assert report.passed, report.summary()


def test_exact_samplers_cover_every_lattice_distribution() -> None:
    kinds = {type(case.noise).__name__ for case in EXACT_SAMPLERS}
    assert kinds >= {
        "DiscreteLaplace",
        "Geometric",
        "Polya",
        "Skellam",
        "DiscreteGaussian",
        "SumOfDiscreteGaussians",
        "CenteredBinomial",
    }
