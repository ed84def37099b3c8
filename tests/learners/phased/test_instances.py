"""The synthetic instance of Li, Zhou & Ji (2022), §7 (:mod:`learners.phased.instances`)."""

from __future__ import annotations

import math

import numpy as np

from learners.phased_instances import draw_instance

# ------------------------------------------------------------------------------------------
# The instance and the schedule
# ------------------------------------------------------------------------------------------


def test_instance_of_section_7() -> None:
    """Li, Zhou & Ji (2022), §7: arms and θ* on the unit sphere, σ = 0.1, |𝒰| = 10^6, a unique best action."""
    inst = draw_instance(np.random.default_rng(0))
    assert inst.actions.shape == (1000, 20)
    assert np.allclose(np.linalg.norm(inst.actions, axis=1), 1)
    assert math.isclose(float(np.linalg.norm(inst.theta)), 1)
    assert (inst.client_sd, inst.noise_sd, inst.population) == (0.1, 1.0, 10**6)
    assert inst.gaps[inst.best] == 0
    assert (np.delete(inst.gaps, inst.best) > 0).all()
    assert not inst.actions.flags.writeable
    same = draw_instance(np.random.default_rng(0))
    assert np.array_equal(same.actions, inst.actions)
    assert np.array_equal(same.theta, inst.theta)
