"""The named URDF robots as :func:`eomcompare.systems.from_urdf` imports them
by default (rotation entries snapped, lengths kept) against Pinocchio's
``aba`` on the same file: ``kane``'s q'' to 1e-10 relative at random
states.  The file's small lengths (``anymal``'s shank mass centres
``-8.66e-10`` m off their axes, merged with the adapter links) are kept,
so its q'' agrees to round-off (snapped to zero they moved it by
1.1e-9); the snapped rounded angles of ``ur5`` move q'' by the rounding
(about 1e-11).  ``puma560`` is declared from its DH table, not a URDF file,
and is checked against Pinocchio in ``test_robots.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import cached_model, cached_system, derivation_group

from eomcompare.formulations import get_formulation
from eomcompare.references.robot_oracle import (
    urdf_pinocchio_accelerations,
    urdf_pinocchio_model,
)
from eomcompare.systems import from_urdf
from eomcompare.systems.robots import robot_data_path

# (example-robot-data file, floating base); kane's derivation and numeric
# model take 2 s (ur5) to 8 s (anymal) of CPU on a quiet machine, so all
# are slow.  hyq's root link carries placeholder inertias (1e-6 in every
# entry), as anymal's does.
ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "panda": ("panda_description/urdf/panda.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", True),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", True),
}


#: The catalogue's entries among them (``from_urdf(file, name=...)``, the
#: default import): kane's equations of these are the session's, derived
#: once on the worker of their group and read by test_robots.py (ur5,
#: panda) and test_urdf_floating.py (solo12) too.
CATALOGUED = ("ur5", "panda", "solo12")


def _system(robot):
    path, floating = ROBOTS[robot]
    if robot not in CATALOGUED:
        return from_urdf(robot_data_path(path), floating_base=floating), None
    ms = cached_system(robot)
    # The file's default import, under the catalogue's name.
    assert ms.options["urdf"] == Path(robot_data_path(path)).read_text()
    assert (ms.options["snap"], ms.options["symbolic_inertia"]) == (1e-9, False)
    assert ms.options["floating_base"] is floating and not ms.options["damping"]
    return ms, cached_model("kane", robot)


@pytest.mark.slow
@pytest.mark.parametrize(
    "robot",
    [
        pytest.param(r, marks=derivation_group(r, "kane")) if r in CATALOGUED else r
        for r in ROBOTS
    ],
)
def test_kane_matches_pinocchio_aba_to_1e_10(robot):
    ms, model = _system(robot)
    if model is None:
        model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    pm = urdf_pinocchio_model(ms)
    for seed in range(10):
        t0, q, qd = ms.states.random_state(seed=seed)
        expected = urdf_pinocchio_accelerations(ms, q, qd, model=pm)
        got = model.coordinate_accelerations(t0, q, qd)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))
