"""Spherical, weld and planar joints, and a linear spring and damper on a
linear pathway, declared as sympy's System does; every formulation against
sympy's own System.form_eoms() (KanesMethod), and the sprung block against
Newton's law."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import formulation_names, get_formulation
from eomcompare.systems import MechanicalSystem

t = me.dynamicsymbols._t


def joints_and_springs():
    """A rod hung from the ground by a spherical joint with a particle
    welded to its end, and a block on a planar joint held by a spring and a
    damper along the pathway from the ground's origin to its centre."""
    m1, m2, l, g, k, c, L0, mb, I1, I2 = sm.symbols("m1 m2 l g k c L0 mb I1 I2")
    ground = me.RigidBody("ground")
    system = me.System.from_newtonian(ground)
    rodf = me.ReferenceFrame("rodf")
    rod = me.RigidBody("rod", frame=rodf, mass=m1)
    rod.central_inertia = me.inertia(rodf, I1, I1, I2)
    tip = me.Particle("tip", mass=m2)
    sph = me.SphericalJoint("sph", ground, rod, child_point=-l * rodf.z)
    weld = me.WeldJoint("weld", rod, tip, parent_point=-l * rodf.z)
    bf = me.ReferenceFrame("bf")
    block = me.RigidBody("block", frame=bf, mass=mb)
    block.central_inertia = me.inertia(bf, I2, I1, I1)
    planar = me.PlanarJoint("planar", ground, block, parent_interframe=ground.frame)
    system.add_joints(sph, weld, planar)
    system.apply_uniform_gravity(-g * ground.z)
    path = me.LinearPathway(ground.masscenter, block.masscenter)
    system.add_actuators(me.LinearSpring(k, path, L0), me.LinearDamper(c, path))
    values = {
        m1: 1.0,
        m2: 0.5,
        l: 0.7,
        g: 9.81,
        k: 3.0,
        c: 0.4,
        L0: 0.5,
        mb: 2.0,
        I1: 0.2,
        I2: 0.1,
    }
    q = list(system.q)
    ms = MechanicalSystem(
        name="joints_and_springs",
        system=system,
        parameters=values,
        initial_state={q[0]: 0.3, q[1]: 0.2, q[4]: 0.8, q[5]: 0.4},
        random_spread=0.4,
        speed_scale=1.5,
    )
    return (
        ms,
        system,
        values,
        dict(ground=ground, block=block, k=k, c=c, L0=L0, mb=mb, g=g),
    )


@pytest.fixture(scope="module")
def sprung():
    ms, system, values, parts = joints_and_springs()
    system.form_eoms()
    return ms, system, values, parts


def _sympy_qdd(system, values, ms, q, qd):
    # Joints' kinematic equations are u = q' (checked), so q'' = u'.
    assert all(
        sm.simplify(v - u) == 0 for v, u in zip(ms.kinematics.qdot.values(), ms.speeds)
    )
    sub = dict(zip(ms.coordinates, q)) | dict(zip(ms.speeds, qd)) | dict(ms.parameters)
    M = np.array(system.mass_matrix.xreplace(sub).evalf(), dtype=float)
    f = np.array(system.forcing.xreplace(sub).evalf(), dtype=float).ravel()
    return np.linalg.solve(M, f)


@pytest.mark.parametrize("name", formulation_names(default_only=True))
def test_every_formulation_matches_sympys_system(sprung, name):
    ms, system, values, _ = sprung
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        np.testing.assert_allclose(
            model.coordinate_accelerations(t0, q, qd),
            _sympy_qdd(system, values, ms, q, qd),
            rtol=1e-9,
            atol=1e-9,
        )


def test_sprung_block_obeys_newton(sprung):
    """The block translates in the ground's y-z plane (planar joint normal
    to x), pulled by k (d - L0) + c d' towards the origin and by gravity
    -mb g z."""
    ms, _, _, p = sprung
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    N = p["ground"].frame
    r = p["block"].masscenter.pos_from(p["ground"].masscenter).to_matrix(N)
    q = list(ms.coordinates)
    rf = sm.lambdify([q], r)
    J = sm.lambdify([q], r.jacobian(q))
    vals = dict(ms.parameters)
    k, c, L0, mb, g = (vals[p[s]] for s in ("k", "c", "L0", "mb", "g"))
    for seed in range(3):
        t0, qv, qd = ms.states.random_state(seed=seed)
        qdd = model.coordinate_accelerations(t0, qv, qd)
        rv = np.asarray(rf(qv), float).ravel()
        Jv = np.asarray(J(qv), float)
        # The position is linear in the planar coordinates: r'' = J q''.
        acc = Jv @ qdd
        d = np.linalg.norm(rv)
        dd = rv @ (Jv @ qd) / d
        force = -(k * (d - L0) + c * dd) * rv / d + np.array([0, 0, -mb * g])
        # In the plane of motion (normal N.x) Newton's law holds.
        np.testing.assert_allclose(mb * acc[1:], force[1:], rtol=1e-9, atol=1e-9)
        assert abs(acc[0]) < 1e-12
