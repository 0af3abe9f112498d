"""robosuite's robot arms (robosuite 1.4, from the ``mujoco`` and ``test``
extras) read by :func:`eomcompare.systems.from_mjcf` through the catalogue
entry ``robosuite_arm``: kane's q'' against MuJoCo's qacc on the same
file, and the entry's refusals."""

from __future__ import annotations

import numpy as np
import pytest

from eomcompare.formulations import get_formulation
from eomcompare.references.mujoco_oracle import mjcf_mujoco_model, mujoco_accelerations
from eomcompare.systems import get_system, system_facts


def _deviation(ms, seeds=5):
    """Largest q'' difference from MuJoCo's, relative to the largest |q''|."""
    model = get_formulation("kane", count_ops=False).derive(ms).numeric(backend="c")
    mj = mjcf_mujoco_model(ms)
    worst = 0.0
    for seed in range(seeds):
        t0, q, qd = ms.states.random_state(seed=seed)
        expected = mujoco_accelerations(ms, q, qd, model=mj)
        got = model.coordinate_accelerations(t0, q, qd)
        worst = max(worst, np.max(np.abs(got - expected)) / np.max(np.abs(expected)))
    return worst


def test_panda_agrees_with_mujoco():
    ms = get_system("robosuite_arm", robot="panda")
    assert ms.name == "robosuite_panda" and len(ms.coordinates) == 7
    assert system_facts("robosuite_arm").oracle == "mujoco"
    assert _deviation(ms) < 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("robot", ["iiwa", "ur5e", "jaco"])
def test_arms_agree_with_mujoco(robot):
    assert _deviation(get_system("robosuite_arm", robot=robot)) < 1e-10


def test_an_unknown_arm_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"one of \['panda', 'iiwa'.*not 'sawyer'"):
        get_system("robosuite_arm", robot="sawyer")
