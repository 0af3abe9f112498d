"""A slider on an inclined rod carried by a torque-driven vertical shaft,
with the constraint forces of its three joints."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import ConstraintForce, MechanicalSystem
from .catalogue import register_system


@register_system("rod_slider_shaft")
def rod_slider_shaft() -> MechanicalSystem:
    """Rod with a slider on a rotating shaft (example 4 of
    ``kane_method_examples_fa.txt``).

    A massless vertical shaft S turns in a frictionless bearing B, driven by
    the constant torque ``T`` about s1; s1 points DOWN along the shaft and
    gravity is ``+g s1``.  A thin uniform rod R (length ``2 L``, mass
    ``m_R``, central moment of inertia ``m_R L^2 / 3`` about axes normal to
    it) is fixed to the shaft at O at the angle ``beta`` from s1.  A slider
    P (point mass ``m_P``) slides without friction along the rod::

              |  bearing B
             [|]
              |  S (massless, torque T about s1)
              O
              |\\  beta
              | \\  rod R (length 2L), r1 along the rod
              |  o P (slider, OP = q1)
              |   \\
           s1 v    \\

    Frames: s1 (down the shaft), s2 in the plane of shaft and rod (towards
    the rod), s3 = s1 x s2; the rod frame r = s rotated by ``beta`` about
    s3, so r1 = cos(beta) s1 + sin(beta) s2 lies along the rod, r2 is in
    the plane of shaft and rod, r3 = s3.  Coordinates: ``q1`` = OP and the
    shaft angle ``q2``; speeds ``u1 = q1'``, ``u2 = q2'``.

    Published equations (2-144) (there divided by m_P) and (2-145)::

        u1' - sin(beta)^2 u2^2 q1 = g cos(beta)
        sin(beta)^2 ((m_P q1^2 + 4 m_R L^2 / 3) u2' + 2 m_P q1 u1 u2) = T

    Constraint forces recovered by auxiliary speeds (``constraint_forces``),
    named as in the document (X->Y is the action of X on Y):

    - ``R1``: s1 component of the bearing force on the shaft, R1(B->S).
      The shaft is massless, so it passes this force on to the rod
      unchanged (2-150); the auxiliary translation along s1 therefore moves
      the rod and the slider, as the document's u3 does (2-155).
    - ``M2``: s2 component of the moment of the shaft on the rod about O,
      M2(S->R): an auxiliary rotation of rod and slider about s2 through O
      (the document's u4, (2-156)).
    - ``R3``, ``R2``: r3 and r2 components of the rod's force on the
      slider, R3(R->P), R2(R->P): auxiliary translations of the slider
      relative to the rod (u5 and u9, (2-157), (2-175)).

    The potential energy holds gravity and the constant torque
    (``-T q2``), so ``T + V`` is conserved.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("rod_slider_shaft")
    >>> [cf.name for cf in ms.constraint_forces]
    ['R1', 'M2', 'R3', 'R2']
    """
    return declare_rod_slider_shaft(
        "rod_slider_shaft", rod_slider_shaft.__doc__, reaction_coordinates=False
    )


def declare_rod_slider_shaft(
    name: str, description: str, *, reaction_coordinates: bool
) -> MechanicalSystem:
    """The declaration of :func:`rod_slider_shaft`, or with
    ``reaction_coordinates`` that of
    :func:`eomcompare.systems.rod_slider_shaft_extended.rod_slider_shaft_extended`
    (the joints' forbidden motions as coordinates held at zero); one
    declaration, so the two cannot drift apart."""
    q1, q2 = me.dynamicsymbols("q1 q2")
    u1, u2 = me.dynamicsymbols("u1 u2")
    m_R, m_P, L, beta, g, T = sm.symbols("m_R m_P L beta g T", real=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    S = N.orientnew("S", "Axis", (q2, N.x))
    S.set_ang_vel(N, u2 * S.x)
    if reaction_coordinates:
        z3, a4, z5, z9 = me.dynamicsymbols("z3 a4 z5 z9")
        u3, u4, u5, u9 = me.dynamicsymbols("u3 u4 u5 u9")
        # The shaft's point where the rod is fixed, free to slide along s1,
        # and the rod's mounting, free to turn about s2.
        J = O.locatenew("O_S", z3 * S.x)
        J.set_vel(N, u3 * S.x)
        A = S.orientnew("A", "Axis", (a4, S.y))
        A.set_ang_vel(S, u4 * S.y)
    else:
        z5 = z9 = u5 = u9 = 0
        J, A = O, S
    Rf = A.orientnew("R", "Axis", (beta, A.z))
    Rf.set_ang_vel(A, 0)
    Gr = J.locatenew("G_R", L * Rf.x)
    Gr.v2pt_theory(J, N, Rf)
    P = J.locatenew("P", q1 * Rf.x + z9 * Rf.y + z5 * Rf.z)
    P.set_vel(Rf, u1 * Rf.x + u9 * Rf.y + u5 * Rf.z)
    P.v1pt_theory(J, N, Rf)
    rod = me.RigidBody(
        "rod", Gr, Rf, m_R, (me.inertia(Rf, 0, m_R * L**2 / 3, m_R * L**2 / 3), Gr)
    )
    slider = me.Particle("slider", P, m_P)
    system = me.System(N, O)
    system.add_coordinates(q1, q2)
    if reaction_coordinates:
        system.add_coordinates(z3, a4, z5, z9, independent=False)
    system.add_speeds(u1, u2)
    if reaction_coordinates:
        system.add_speeds(u3, u4, u5, u9, independent=False)
        system.add_kdes(
            *[
                u - q.diff()
                for q, u in zip((q1, q2, z3, a4, z5, z9), (u1, u2, u3, u4, u5, u9))
            ]
        )
        system.add_holonomic_constraints(z3, a4, z5, z9)
    else:
        system.add_kdes(u1 - q1.diff(), u2 - q2.diff())
    system.add_bodies(rod, slider)
    system.add_loads(
        me.Force(Gr, m_R * g * S.x), me.Force(P, m_P * g * S.x), me.Torque(S, T * S.x)
    )
    V = -g * (m_R * Gr.pos_from(O).dot(S.x) + m_P * P.pos_from(O).dot(S.x)) - T * q2
    forces = [
        ConstraintForce("R1", "force", S.x, J, (rod, slider)),
        ConstraintForce("M2", "torque", S.y, J, (rod, slider)),
        ConstraintForce("R3", "force", Rf.z, P, (slider,)),
        ConstraintForce("R2", "force", Rf.y, P, (slider,)),
    ]
    params = {m_R: 2.0, m_P: 1.0, L: 0.5, beta: 0.6, g: 9.81, T: 1.0}
    init = {q1: 0.5, q2: 0.0, u1: 0.0, u2: 2.0}
    return MechanicalSystem(
        name=name,
        system=system,
        parameters=params,
        initial_state=init,
        potential_energy=V,
        energy_conserved=True,
        constraint_forces=forces,
        description=description,
        random_spread={q1: 0.4, q2: 3.0},
        speed_scale=2.0,
    )
