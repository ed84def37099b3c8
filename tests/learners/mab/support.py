"""Helpers of the tests of :mod:`learners.mab`: instances, tapes and runs."""

from __future__ import annotations

import numpy as np

from accounting import bounds
from accounting.papers.distributed_dp_mab import ProtocolParameters, protocol_parameters
from learners.environments import ClippedGaussianArms, MABInstance
from learners.mab import (
    Learner,
    RunResult,
    run,
)

PRIVATE = [
    ("dist-dp-se", {}),
    ("dist-rdp-se", {"scaling": 10}),
    ("shuffle-dp-se", {}),
    ("dist-cdp-se", {"scaling": 10}),
    ("cdp-se", {}),
    ("ldp-se", {}),
    ("dp-se", {}),
]


def easy(reps: int, seed: int = 0) -> list[ClippedGaussianArms]:
    """The easy instance of Chowdhury & Zhou (2023), §7, one per repetition (the paper's recipe: means
    per run)."""
    return [
        ClippedGaussianArms(tuple(0.25 + 0.5 * np.random.RandomState(seed + r).rand(10))) for r in range(reps)
    ]


def tapes(reps: int, seed: int = 1) -> list[np.random.Generator]:
    return [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r,))) for r in range(reps)]


def run_reps(
    learner: Learner,
    instances: MABInstance | list[ClippedGaussianArms],
    T: int,
    reps: int,
    seed: int = 1,
    checkpoints: int = 50,
) -> RunResult:
    return run(
        learner,
        instances,
        T,
        tapes=tapes(reps, seed),
        rng=np.random.default_rng(seed + 100),
        checkpoints=checkpoints,
    )


def protocol_params(learner: Learner, n: int, T: int) -> ProtocolParameters:
    assert learner.variant is not None
    assert learner.epsilon is not None
    return protocol_parameters(learner.variant, learner.epsilon, n, T, scaling=learner.scaling)


def gaussian_epsilon(ratio: float, delta: float) -> float:
    """ε(δ) of the Gaussian mechanism with sensitivity/σ = ``ratio`` (Balle & Wang 2018, analytic)."""
    return bounds.gaussian_epsilon_analytic(1 / ratio, delta)
