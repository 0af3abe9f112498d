"""Khalil's modified-DH robots (``stanford_arm(geometry="khalil")``,
``rx90``) against their tables: each body's frame against a direct product
of the modified-DH transforms written here, and the recursive inverse
dynamics against Pinocchio's ``rnea`` on a model built from those
transforms.

Tables (Khalil & Dombre, as in ``docs/guide.md``): frame j = frame j-1
Rx(alpha_j) Tx(d_j) Rz(theta_j) Tz(r_j).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import sympy as sm
from conftest import cached_system

from eomcompare.formulations import inverse_dynamics_regressor
from eomcompare.formulations.kane_recursive import inverse_dynamics
from eomcompare.systems import get_system

H = np.pi / 2
RL2, D3, RL4 = 0.154, 0.45, 0.45
#: (sigma, alpha, d, theta offset, r offset), typed in from the tables.
TABLES = {
    "stanford_arm": [
        (0, 0, 0, 0, 0),
        (0, -H, 0, 0, RL2),
        (1, H, 0, 0, 0),
        (0, 0, 0, 0, 0),
        (0, -H, 0, 0, 0),
        (0, H, 0, 0, 0),
    ],
    "rx90": [
        (0, 0, 0, 0, 0),
        (0, H, 0, 0, 0),
        (0, 0, D3, 0, 0),
        (0, -H, 0, 0, RL4),
        (0, H, 0, 0, 0),
        (0, -H, 0, 0, 0),
    ],
}
OPTIONS = {"stanford_arm": {"geometry": "khalil"}, "rx90": {}}


def _system(name, **options):
    """The robot's declaration, one per worker (conftest's cached_system):
    the regressor's test reads the one whose regressor
    tests/formulations derive."""
    return cached_system(name, tuple(sorted((OPTIONS[name] | options).items())))


def _hom(R=None, p=(0, 0, 0)):
    T = np.eye(4)
    T[:3, :3] = np.eye(3) if R is None else R
    T[:3, 3] = p
    return T


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return _hom(np.array([[1, 0, 0], [0, c, -s], [0, s, c]]))


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return _hom(np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]))


def mdh_frames(table, q):
    """0T1, 0T2, ... for joint values q: the product of the transforms."""
    T, out = np.eye(4), []
    for (sigma, alpha, d, theta, r), qj in zip(table, q):
        theta, r = (theta, r + qj) if sigma else (theta + qj, r)
        T = T @ _rx(alpha) @ _hom(p=(d, 0, 0)) @ _rz(theta) @ _hom(p=(0, 0, r))
        out.append(T)
    return out


def _declared_frames(ms, q):
    """Each body's frame in N and its origin, from the declaration."""
    N, O = ms.frame, ms.system.fixed_point
    values = {s: v for s, v in ms.parameters.items()} | dict(zip(ms.coordinates, q))
    out = []
    for body, spec in zip(ms.bodies, ms.joint_tree):
        B = body.frame
        R = np.array(N.dcm(B).xreplace(values), dtype=float)
        # Origin = mass centre less the mass centre's offset in B.
        c = sum((x * e for x, e in zip(spec.com, (B.x, B.y, B.z))), sm.S.Zero * B.x)
        p = (body.masscenter.pos_from(O) - c).to_matrix(N).xreplace(values)
        out.append(_hom(R, np.array(p, dtype=float).ravel()))
    return out


@pytest.mark.parametrize("name", ["stanford_arm", "rx90"])
def test_frames_are_the_modified_dh_products(name):
    ms = _system(name)
    rng = np.random.default_rng(3)
    configurations = [np.zeros(6)] + [rng.uniform(-2, 2, 6) for _ in range(4)]
    for q in configurations:
        want = mdh_frames(TABLES[name], q)
        got = _declared_frames(ms, q)
        for j, (a, b) in enumerate(zip(got, want), start=1):
            assert np.allclose(a, b, atol=1e-12), (name, j, q)


def _pinocchio_mdh(ms, table):
    """Pinocchio's model from the table's transforms (not the
    declaration's placements), with the declaration's inertia values."""
    values = dict(ms.parameters)
    model = pin.Model()
    zero = mdh_frames(table, np.zeros(6))
    for j, (spec, (sigma, *_)) in enumerate(zip(ms.joint_tree, table), start=1):
        # Joint j's placement: frame j at q = 0 seen from frame j-1.
        prev = np.eye(4) if j == 1 else zero[j - 2]
        M = np.linalg.solve(prev, zero[j - 1])
        jm = pin.JointModelPZ() if sigma else pin.JointModelRZ()
        jid = model.addJoint(j - 1, jm, pin.SE3(M[:3, :3], M[:3, 3]), f"joint{j}")
        xx, yy, zz, xy, yz, zx = (
            float(sm.sympify(x).xreplace(values)) for x in spec.inertia
        )
        I = np.array([[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]])
        c = np.array([float(sm.sympify(x).xreplace(values)) for x in spec.com])
        m = float(sm.sympify(spec.mass).xreplace(values))
        model.appendBodyToJoint(jid, pin.Inertia(m, c, I), pin.SE3.Identity())
    return model


@pytest.mark.parametrize(
    "name,options",
    [
        ("stanford_arm", {}),
        ("rx90", {}),
        pytest.param(
            "rx90",
            {"principal_axes": True, "mass_centres": "joint_axes"},
            marks=pytest.mark.slow,
        ),
    ],
)
def test_inverse_dynamics_equals_pinocchio_rnea(name, options):
    ms = _system(name, **options)
    zdd = sm.symbols("zdd0:6")
    t = sm.Symbol("t")
    tau = inverse_dynamics(ms, zdd).xreplace(
        {q.diff(t): u for q, u in zip(ms.coordinates, ms.speeds)}
    )
    f = sm.lambdify([*ms.coordinates, *ms.speeds, *zdd, *ms.parameters], tau, cse=True)
    p = [float(v) for v in ms.parameters.values()]
    model = _pinocchio_mdh(ms, TABLES[name])
    data = model.createData()
    rng = np.random.default_rng(7)
    for _ in range(6):
        q, v, a = (rng.uniform(-1.5, 1.5, 6) for _ in range(3))
        want = pin.rnea(model, data, q, v, a)
        got = np.asarray(f(*q, *v, *a, *p), dtype=float).ravel()
        assert np.allclose(got, want, rtol=1e-10, atol=1e-10)


def test_options_of_the_khalil_robots():
    ms = get_system(
        "rx90", symbolic_inertia=True, principal_axes=True, mass_centres="joint_axes"
    )
    names = {str(s) for s in ms.parameters}
    assert {"D3", "RL4", "m1", "cz6", "I6_zz"} <= names
    assert not names & {"cx1", "cy3", "I2_xy", "I4_yz", "I5_zx"}
    with pytest.raises(ValueError, match="geometry must be one of"):
        get_system("stanford_arm", geometry="paul")
    with pytest.raises(ValueError, match="mass_centres must be one of"):
        get_system("rx90", mass_centres="centroid")


# About 2 s (Y of six bodies, derived once per declaration, and its
# lambdified form).
@pytest.mark.slow
def test_regressor_equals_pinocchios_on_the_khalil_stanford_arm():
    # Prismatic joint included.  Pinocchio's ten parameters per joint are
    # (m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz) about the joint frame's
    # origin; the regressor's (XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M).
    ms = _system("stanford_arm")
    Y, _ = inverse_dynamics_regressor(ms)
    t = sm.Symbol("t")
    q = list(ms.coordinates)
    x = sm.symbols("x0:18")
    rule = {v.diff(t, 2): s for v, s in zip(q, x[12:])}
    rule |= {v.diff(t): s for v, s in zip(q, x[6:12])} | dict(zip(q, x[:6]))
    f = sm.lambdify([*x, *ms.parameters], Y.xreplace(rule), cse=True)
    p = [float(v) for v in ms.parameters.values()]
    model = _pinocchio_mdh(ms, TABLES["stanford_arm"])
    data = model.createData()
    order = [10 * k + i for k in range(6) for i in (4, 5, 7, 6, 8, 9, 1, 2, 3, 0)]
    rng = np.random.default_rng(2)
    for _ in range(6):
        qv, v, a = (rng.uniform(-1.5, 1.5, 6) for _ in range(3))
        want = pin.computeJointTorqueRegressor(model, data, qv, v, a)[:, order]
        got = np.asarray(f(*qv, *v, *a, *p), dtype=float)
        assert np.allclose(got, want, rtol=1e-9, atol=1e-9)
