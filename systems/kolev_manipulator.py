"""Kolev's manipulator with an elastic arm: a drive module moving
vertically and carrying an arm that bends elastically at its root, the
application of the modified Lagrange equations of the second kind
(kolev_modified_lagrange_bg.txt, (3.1)-(3.10))."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system

__all__ = ["kolev_manipulator"]


@register_system("kolev_manipulator")
def kolev_manipulator() -> MechanicalSystem:
    """Drive module (body 1) with an elastic arm (body 2), small vibrations
    about a vertical drive motion.

    Vertical axis j (up), gravity -g j.  Body 1 (mass m1) translates
    vertically at height ``qG + q1`` under the drive force F_D (along +j,
    a constant parameter).  The arm's root O2 sits at height ``qG - q2``;
    the arm (body 2, mass m2, moment of inertia J_O2 about O2) leaves O2
    at the angle gamma below the horizontal, with its mass centre C2 at
    the distance h (the paper's h_C2) from O2, and turns by the small
    elastic angle q3 (clockwise, i.e. drooping, positive)::

              F_D ^
             +----|----+  body 1 (m1), height qG + q1
             |         |
             +----o----+
                  | c22, c23    (elastic root: body 1 <-> O2)
               O2 o_            height qG - q2
                     `-._  gamma    arm (m2, J_O2)
                         `o C2 (distance h from O2), turns by q3
                  |
                  v g

    Coordinates qG, q1, q2, q3 (the paper's centroid coordinates) with one
    holonomic constraint ``m1 q1 - m2 q2 - m2 h cos(gamma) q3 = 0``; q1 is
    dependent, ``q1 = (m2/m1) (q2 + h cos(gamma) q3)`` as in (3.8).

    The model is the paper's linearized one: kinetic energy and potential
    energy to second order in the elastic coordinates q1, q2, q3 about
    gamma.  So the velocities have constant coefficients, C2 moving with
    ``(qG' - q2' - h cos(gamma) q3') j - h sin(gamma) q3' i`` and the arm
    turning at ``-q3' k`` with central inertia ``J_O2 - m2 h^2``, which
    gives exactly

        T = 1/2 [m1 (qG' + q1')^2 + m2 (qG' - q2')^2 + J_O2 q3'^2]
            - m2 (qG' - q2') q3' h cos(gamma),

    while the weight of the arm acts at the point whose height is that of
    C2 to second order, ``qG - q2 - h (sin(gamma) + q3 cos(gamma)
    - q3^2 sin(gamma) / 2)``, the source of the gravitational stiffness
    ``m2 g h sin(gamma)`` in (3.10).  The elastic root is an internal
    force pair ``-(c22 (q1 + q2) + c23 q3) j`` on body 1 and the opposite
    at O2, and an internal moment pair ``(c23 (q1 + q2) + c33 q3) k`` on
    the arm and the opposite on body 1, so that the potential is
    ``1/2 [c22 (q1 + q2)^2 + 2 c23 (q1 + q2) q3 + c33 q3^2]`` (3.5) and the
    generalized forces of all loads are those printed in (3.6).

    The catalogue's sign convention (body 1 at ``qG + q1``, body 2 at
    ``qG - q2``) is the one that reproduces (3.10); the printed (3.2) and
    the first term of the printed T in (3.5) carry the opposite sign.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("kolev_manipulator")
    >>> [str(q) for q in ms.coordinates]
    ['qG(t)', 'q2(t)', 'q3(t)', 'q1(t)']
    """
    m1, m2, J, h, g = sm.symbols("m1 m2 J_O2 h g", positive=True)
    gamma = sm.Symbol("gamma")
    c22, c23, c33 = sm.symbols("c22 c23 c33")
    F_D = sm.Symbol("F_D")
    qG, q1, q2, q3 = me.dynamicsymbols("qG q1 q2 q3")
    uG, u1, u2, u3 = me.dynamicsymbols("uG u1 u2 u3")
    cg, sg = sm.cos(gamma), sm.sin(gamma)

    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    # Body 1 translates: its frame stays parallel to N.
    B1 = N.orientnew("B1", "Axis", (0, N.z))
    B1.set_ang_vel(N, 0)
    P1 = O.locatenew("P1", (qG + q1) * N.y)
    P1.set_vel(N, (uG + u1) * N.y)
    O2 = O.locatenew("O2", (qG - q2) * N.y)
    O2.set_vel(N, (uG - u2) * N.y)
    B2 = N.orientnew("B2", "Axis", (-q3, N.z))
    B2.set_ang_vel(N, -u3 * N.z)
    # Mass centre to first order in q3 (velocity to zeroth order).
    C2 = O2.locatenew("C2", h * (cg * N.x - sg * N.y) - h * q3 * (sg * N.x + cg * N.y))
    C2.set_vel(N, (uG - u2 - h * cg * u3) * N.y - h * sg * u3 * N.x)
    # Point of action of the arm's weight: C2's height to second order.
    W2 = O2.locatenew("W2", h * cg * N.x - h * (sg + q3 * cg - q3**2 * sg / 2) * N.y)
    W2.set_vel(N, (uG - u2 - h * (cg - q3 * sg) * u3) * N.y)

    body1 = me.RigidBody("drive_module", P1, B1, m1, (me.inertia(B1, 0, 0, 0), P1))
    arm = me.RigidBody("arm", C2, B2, m2, (me.inertia(B2, 0, 0, J - m2 * h**2), C2))

    root_force = c22 * (q1 + q2) + c23 * q3
    root_moment = c23 * (q1 + q2) + c33 * q3
    system = me.System(N, O)
    system.add_coordinates(qG, q2, q3)
    system.add_coordinates(q1, independent=False)
    system.add_speeds(uG, u2, u3)
    system.add_speeds(u1, independent=False)
    system.add_kdes(uG - qG.diff(), u2 - q2.diff(), u3 - q3.diff(), u1 - q1.diff())
    system.add_holonomic_constraints(m1 * q1 - m2 * q2 - m2 * h * cg * q3)
    system.add_bodies(body1, arm)
    system.add_loads(
        me.Force(P1, (F_D - m1 * g) * N.y),
        me.Force(W2, -m2 * g * N.y),
        me.Force(P1, -root_force * N.y),
        me.Force(O2, root_force * N.y),
        me.Torque(B2, root_moment * N.z),
        me.Torque(B1, -root_moment * N.z),
    )
    V = (
        (m1 * g - F_D) * (qG + q1)
        + m2 * g * W2.pos_from(O).dot(N.y)
        + (c22 * (q1 + q2) ** 2 + 2 * c23 * (q1 + q2) * q3 + c33 * q3**2) / 2
    )
    params = {
        m1: 20.0,
        m2: 5.0,
        J: 2.0,
        h: 0.5,
        g: 9.81,
        gamma: 0.3,
        c22: 2.0e4,
        c23: 1.0e3,
        c33: 5.0e3,
        F_D: 260.0,
    }
    init = {qG: 0.0, q2: 1.0e-3, q3: 2.0e-3, uG: 0.0, u2: 0.0, u3: 0.0}
    return MechanicalSystem(
        name="kolev_manipulator",
        system=system,
        parameters=params,
        initial_state=init,
        dependent_solutions={q1: m2 / m1 * (q2 + h * cg * q3)},
        potential_energy=V,
        energy_conserved=True,
        description=kolev_manipulator.__doc__,
        random_spread={qG: 1.0, q2: 0.01, q3: 0.02},
        speed_scale=0.2,
    )
