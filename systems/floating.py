"""Floating systems declared with :class:`eomcompare.systems.free_joint.FreeJoint`:
one free rigid body (torque-free or heavy) and a floating two-body system
(a free root and a second body on a revolute joint).  Builders, not
catalogue entries: tests and users call them with their options."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .free_joint import FreeJoint

__all__ = ["free_body", "floating_two_body"]


def free_body(
    inertia: Sequence[float] = (0.3, 0.4, 0.5),
    mass: float = 2.0,
    gravity: float = 0.0,
    quaternion: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
    angular_velocity: Sequence[float] = (0.3, 0.2, 2.0),
    linear_velocity: Sequence[float] = (0.1, -0.2, 0.3),
) -> MechanicalSystem:
    """One rigid body on a free joint, mass centre at the joint's origin,
    principal moments ``inertia`` along its axes, gravity ``gravity``
    along ``-N.z`` (default none: torque-free motion)."""
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    root = FreeJoint("body", N, O)
    m, g = sm.symbols("m g", nonnegative=True)
    I1, I2, I3 = sm.symbols("I1 I2 I3", positive=True)
    B, P = root.frame, root.origin
    body = me.RigidBody("body", P, B, m, (me.inertia(B, I1, I2, I3), P))
    system = me.System(N, O)
    root.add_to(system)
    system.add_bodies(body)
    system.add_loads(me.Force(P, -m * g * N.z))
    return MechanicalSystem(
        name="free_body",
        system=system,
        parameters={
            m: mass,
            g: gravity,
            I1: inertia[0],
            I2: inertia[1],
            I3: inertia[2],
        },
        initial_state=root.state(
            quaternion=quaternion,
            angular_velocity=angular_velocity,
            linear_velocity=linear_velocity,
        ),
        potential_energy=m * g * P.pos_from(O).dot(N.z),
        energy_conserved=True,
        random_spread=0.5,
        speed_scale=2.0,
        description="one rigid body on a free joint (quaternion w, x, y, z; "
        "body angular rates; velocity measured in N)",
    )


def floating_two_body(gravity: float = 0.0) -> MechanicalSystem:
    """A free root body and a second body on a revolute joint about the
    root's y axis.

    The root's mass centre is off the free joint's origin P, at
    ``c1 = (0.1, 0.05, -0.02)`` in the root frame B, with a full central
    inertia; the revolute joint sits at ``a = (0.4, 0, 0.1)`` in B, the
    second body's mass centre at ``l = 0.3`` along its own x axis.
    ``gravity`` acts along ``-N.z`` (default none: free flight, energy
    and both momenta conserved)."""
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    root = FreeJoint("base", N, O)
    th, om = me.dynamicsymbols("theta omega")
    m1, m2, l = sm.symbols("m1 m2 l", positive=True)
    g = sm.symbols("g", nonnegative=True)
    c = sm.symbols("c1:4", real=True)
    a1, a3 = sm.symbols("a1 a3", real=True)
    i1 = sm.symbols("Ixx1 Iyy1 Izz1 Ixy1 Iyz1 Izx1", real=True)
    i2 = sm.symbols("Ixx2 Iyy2 Izz2", positive=True)
    B, P = root.frame, root.origin
    G1 = P.locatenew("G1", c[0] * B.x + c[1] * B.y + c[2] * B.z)
    G1.v2pt_theory(P, N, B)
    J = P.locatenew("J", a1 * B.x + a3 * B.z)
    J.v2pt_theory(P, N, B)
    C = B.orientnew("C", "Axis", (th, B.y))
    C.set_ang_vel(B, om * B.y)
    G2 = J.locatenew("G2", l * C.x)
    G2.v2pt_theory(J, N, C)
    base = me.RigidBody("base", G1, B, m1, (me.inertia(B, *i1), G1))
    arm = me.RigidBody("arm", G2, C, m2, (me.inertia(C, *i2), G2))
    system = me.System(N, O)
    root.add_to(system)
    system.add_coordinates(th)
    system.add_speeds(om)
    system.add_kdes(th.diff() - om)
    system.add_bodies(base, arm)
    system.add_loads(me.Force(G1, -m1 * g * N.z), me.Force(G2, -m2 * g * N.z))
    values = {
        m1: 3.0,
        m2: 1.2,
        l: 0.3,
        g: gravity,
        a1: 0.4,
        a3: 0.1,
        c[0]: 0.1,
        c[1]: 0.05,
        c[2]: -0.02,
        i1[0]: 0.05,
        i1[1]: 0.06,
        i1[2]: 0.08,
        i1[3]: 0.004,
        i1[4]: -0.003,
        i1[5]: 0.002,
        i2[0]: 0.002,
        i2[1]: 0.012,
        i2[2]: 0.012,
    }
    V = g * (m1 * G1.pos_from(O).dot(N.z) + m2 * G2.pos_from(O).dot(N.z))
    state = root.state(
        quaternion=(0.9, 0.3, -0.2, (1 - 0.81 - 0.09 - 0.04) ** 0.5),
        position=(0.1, -0.2, 1.0),
        angular_velocity=(0.5, -0.3, 1.2),
        linear_velocity=(0.2, 0.1, -0.1),
    )
    state |= {th: 0.4, om: -0.8}
    return MechanicalSystem(
        name="floating_two_body",
        system=system,
        parameters=values,
        initial_state=state,
        potential_energy=V,
        energy_conserved=True,
        random_spread=0.5,
        speed_scale=2.0,
        description="free root body (quaternion w, x, y, z; body angular "
        "rates; origin velocity measured in N) with a second body on a "
        "revolute joint about the root's y axis",
        options={"gravity": gravity},
    )
