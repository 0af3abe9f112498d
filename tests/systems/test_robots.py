"""The spatial robots of the catalogue against Pinocchio's ``aba``.

ur5 and panda: Pinocchio reads the same URDF file.  puma560, stanford_arm
and spatial_chain: the Pinocchio model is built here, joint by joint, from
the same published tables with Pinocchio's own SE3 and inertia algebra,
so that the DH conventions of :mod:`eomcompare.systems.robots` are checked too.

Every own formulation must give Pinocchio's q'' at 20 random states to
1e-9 relative.  The larger cases are ``slow`` (they still run in CI);
derivations skip the operation counts, which are not under test here.
The numeric models are the session's (``cached_model``): kane's of ur5
and panda are the ones tests/systems/test_urdf_robots_exact.py holds to
1e-10, built once on the worker of their derivation group.
"""

from __future__ import annotations

import functools

import numpy as np
import pinocchio as pin
import pytest
import sympy as sm
from conftest import cached_eom, cached_model, cached_system, derivation_group
from helpers import worst_relative_deviation
from sympy.core.function import AppliedUndef

from eomcompare.references.robot_oracle import (
    urdf_pinocchio_accelerations,
    urdf_pinocchio_model,
)
from eomcompare.systems import get_system
from eomcompare.systems.robots import (
    PUMA560,
    STANFORD_ARM,
    robot_data_path,
    spatial_chain_values,
)

OWN = ("kane", "lagrange", "modified_lagrange", "gibbs_appell")
N_STATES = 20


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _inertia(I):
    xx, yy, zz, xy, yz, xz = I
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)


def pinocchio_dh(table):
    """A Pinocchio model of a standard-DH table: frame k = frame k-1
    Rz(theta) Tz(d) Tx(a) Rx(alpha); joint k turns about (slides along) z
    of frame k-1; r and I of link k in frame k."""
    model = pin.Model()
    parent, after = 0, pin.SE3.Identity()
    for k, (kind, theta, d, a, alpha, m, r, I) in enumerate(table, start=1):
        theta, alpha = float(theta), float(alpha)
        placement = after * pin.SE3(_rz(theta), np.zeros(3))
        jm = pin.JointModelRZ() if kind == "R" else pin.JointModelPZ()
        jid = model.addJoint(parent, jm, placement, f"joint{k}")
        dh = pin.SE3(_rx(alpha), np.array([a, 0.0, d], dtype=float))
        model.appendBodyToJoint(
            jid,
            dh.act(pin.Inertia(float(m), np.array(r, float), _inertia(I))),
            pin.SE3.Identity(),
        )
        parent, after = jid, dh
    return model


def pinocchio_spatial_chain(n):
    model = pin.Model()
    parent = 0
    for k in range(1, n + 1):
        v = spatial_chain_values(k)
        if k == 1:
            placement = pin.SE3.Identity()
        else:
            w = spatial_chain_values(k - 1)
            placement = pin.SE3(_rx(w["alpha"]), np.array([w["a"], 0.0, w["d"]]))
        jid = model.addJoint(parent, pin.JointModelRZ(), placement, f"joint{k}")
        model.appendBodyToJoint(
            jid,
            pin.Inertia(v["m"], np.array(v["c"]), _inertia(v["I"])),
            pin.SE3.Identity(),
        )
        parent = jid
    return model


def _oracle(name, options):
    ms = cached_system(name, options)
    if name in ("ur5", "panda"):
        model = urdf_pinocchio_model(ms)
        return ms, lambda q, qd: urdf_pinocchio_accelerations(ms, q, qd, model=model)
    if name == "spatial_chain":
        model = pinocchio_spatial_chain(dict(options)["n"])
    else:
        model = pinocchio_dh(PUMA560 if name == "puma560" else STANFORD_ARM)
    data = model.createData()
    return ms, lambda q, qd: np.array(pin.aba(model, data, q, qd, np.zeros(model.nv)))


@functools.cache
def _system_and_oracle(name, options):
    return _oracle(name, options)


def _deviation(formulation, name, options=()):
    ms, oracle = _system_and_oracle(name, options)
    eom = cached_eom(formulation, name, options)
    model = cached_model(formulation, name, options)
    worst = worst_relative_deviation(model, ms, oracle, N_STATES)
    return worst, eom.timings["total"]


# CPU seconds per case (derivation, code generation, 20 states) on a quiet
# machine: panda 5.5-9; spatial_chain(6) 2-3; ur5, puma560, stanford_arm
# 1-2; spatial_chain(n <= 4) under 1.  puma560, stanford_arm and
# spatial_chain(n <= 4) run without the slow mark.  The chain's sizes are
# the catalogue's (2, 4, 6) and the smallest: spatial_chain(5) and (8),
# 6 and 22 s by the four formulations, checked nothing n = 6 does not (the
# links are drawn alike, a general geometry and inertia each).
FAST = {("puma560", ()), ("stanford_arm", ())} | {
    ("spatial_chain", (("n", n),)) for n in (1, 2, 3, 4)
}
CASES = [("ur5", ()), ("panda", ()), ("puma560", ()), ("stanford_arm", ())] + [
    ("spatial_chain", (("n", n),)) for n in (1, 2, 3, 4, 6)
]
#: Kane's equations of the URDF arms, read by test_urdf_robots_exact.py too.
SHARED = {("kane", "ur5"), ("kane", "panda")}


def _marks(formulation, name, options):
    marks = [] if (name, options) in FAST else [pytest.mark.slow]
    if (formulation, name) in SHARED:
        marks.append(derivation_group(name, formulation))
    return marks


@pytest.mark.parametrize(
    "name,options,formulation",
    [
        pytest.param(
            name,
            opts,
            f,
            id=name + "".join(f"-{k}={v}" for k, v in opts) + f"-{f}",
            marks=_marks(f, name, opts),
        )
        for f in OWN
        for name, opts in CASES
    ],
)
def test_accelerations_equal_pinocchio(formulation, name, options):
    worst, seconds = _deviation(formulation, name, options)
    assert worst < 1e-9, (
        f"{formulation} on {name}{dict(options)}: "
        f"{worst:.3g} from Pinocchio ({seconds:.1f} s)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ur5", "puma560", "stanford_arm"])
def test_sympy_kane_peer_equals_pinocchio(name):
    worst, _ = _deviation("sympy_kane", name)
    assert worst < 1e-9


def test_example_robot_data_files_are_found():
    path = robot_data_path("ur_description/urdf/ur5_robot.urdf")
    assert path.endswith("ur5_robot.urdf")
    with pytest.raises(FileNotFoundError, match=r"eomcompare\[robots\]"):
        robot_data_path("no_description/urdf/none.urdf")


def test_robot_shapes():
    # The session's declarations (the catalogue's defaults), read only.
    assert len(cached_system("ur5").coordinates) == 6
    assert cached_system("panda").options["joints"][-2:] == (
        "panda_finger_joint1",
        "panda_finger_joint2",
    )
    assert len(cached_system("spatial_chain", (("n", 3),)).coordinates) == 3
    q3 = cached_system("stanford_arm").coordinates[2]
    # The boom's joint slides: no sine or cosine of q3 anywhere (a property
    # of the declaration; Kane's method derives the arm fastest).
    eom = cached_eom("kane", "stanford_arm")
    assert q3 in eom.mass_matrix.atoms(AppliedUndef)
    assert not any(q3 in f.args for f in eom.mass_matrix.atoms(sm.sin, sm.cos))
    chain = cached_system("spatial_chain", (("n", 2),))
    assert {"alpha1", "a1", "d1", "m2", "I2_xy"} <= {str(s) for s in chain.parameters}
    numeric = get_system("spatial_chain", n=2, symbolic_inertia=False)
    assert "m2" not in {str(s) for s in numeric.parameters}
    with pytest.raises(ValueError, match="n must be a positive integer"):
        get_system("spatial_chain", n=0)


# Derives and lambdifies a 6-joint arm several times: out of the quick loop.
@pytest.mark.slow
def test_symbolic_inertia_defaults_are_the_tables():
    # The same q'' with the inertia as numbers and as symbols at their
    # defaults (the DH inertia carried into the body frames either way).
    # A property of the declarations: any formulation shows it, and Kane's
    # method derives these arms fastest.
    for name in ("puma560", "stanford_arm"):
        a = cached_system(name)
        # The session's (test_robots_kane_recursive.py derives the Stanford
        # arm's with symbolic inertia too).
        na = cached_model("kane", name)
        nb = cached_model("kane", name, (("symbolic_inertia", True),))
        t0, q, qd = a.states.random_state(3)
        assert np.allclose(
            na.coordinate_accelerations(t0, q, qd),
            nb.coordinate_accelerations(t0, q, qd),
            rtol=1e-10,
            atol=1e-10,
        )
