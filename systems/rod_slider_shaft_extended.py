"""The rod with a slider on a rotating shaft, with its joint reactions
modelled as holonomic constraints on extra coordinates.

This is the catalogue's ``rod_slider_shaft`` (the same bodies, loads and
motion) in the form a multiplier formulation recovers constraint forces
from: each reaction the seed computes with an auxiliary speed (section b of
example 4, (2-155) to (2-157) and (2-175)) becomes a coordinate that the
joint holds at zero.  The multiplier of that constraint is then the
reaction.  It is not registered in the catalogue: it describes the same
motion as ``rod_slider_shaft`` and exists for constraint-force recovery.
"""
from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import ConstraintForce, MechanicalSystem

__all__ = ["rod_slider_shaft_extended"]


def rod_slider_shaft_extended() -> MechanicalSystem:
    """``rod_slider_shaft`` with four constraint coordinates.

    Besides ``q1`` (OP along the rod) and the shaft angle ``q2``:

    - ``z3``: translation of shaft, rod and slider along s1 (the bearing
      forbids it; its reaction is ``R1`` = R1(B->S), (2-155));
    - ``a4``: rotation of rod and slider relative to the shaft about s2
      through O (the shaft forbids it; ``M2`` = M2(S->R), (2-156));
    - ``z5``, ``z9``: translations of the slider relative to the rod along
      r3 and r2 (``R3``, ``R2`` = R3(R->P), R2(R->P), (2-157), (2-175)).

    Holonomic constraints ``z3 = a4 = z5 = z9 = 0``; speeds are the
    coordinate rates.  The declared :class:`~systems.ConstraintForce`
    objects name those reactions; a multiplier formulation recovers each
    one as the generalized constraint force of its coordinate, and Kane's
    method recovers them with auxiliary speeds as usual.  Parameters,
    initial state and the meaning of ``q1``, ``q2`` are those of
    ``rod_slider_shaft``.

    Examples
    --------
    >>> from systems.rod_slider_shaft_extended import rod_slider_shaft_extended
    >>> ms = rod_slider_shaft_extended()
    >>> ms.degrees_of_freedom, len(ms.holonomic_constraints)
    (2, 4)
    """
    q1, q2, z3, a4, z5, z9 = me.dynamicsymbols("q1 q2 z3 a4 z5 z9")
    u1, u2, u3, u4, u5, u9 = me.dynamicsymbols("u1 u2 u3 u4 u5 u9")
    m_R, m_P, L, beta, g, T = sm.symbols("m_R m_P L beta g T", real=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    S = N.orientnew("S", "Axis", (q2, N.x))
    S.set_ang_vel(N, u2 * S.x)
    # The shaft's point O where the rod is fixed, free to slide along s1.
    Os = O.locatenew("O_S", z3 * S.x)
    Os.set_vel(N, u3 * S.x)
    A = S.orientnew("A", "Axis", (a4, S.y))
    A.set_ang_vel(S, u4 * S.y)
    Rf = A.orientnew("R", "Axis", (beta, A.z))
    Rf.set_ang_vel(A, 0)
    Gr = Os.locatenew("G_R", L * Rf.x)
    Gr.v2pt_theory(Os, N, Rf)
    P = Os.locatenew("P", q1 * Rf.x + z9 * Rf.y + z5 * Rf.z)
    P.set_vel(Rf, u1 * Rf.x + u9 * Rf.y + u5 * Rf.z)
    P.v1pt_theory(Os, N, Rf)
    rod = me.RigidBody("rod", Gr, Rf, m_R,
                       (me.inertia(Rf, 0, m_R * L**2 / 3, m_R * L**2 / 3), Gr))
    slider = me.Particle("slider", P, m_P)
    system = me.System(N, O)
    system.add_coordinates(q1, q2)
    system.add_coordinates(z3, a4, z5, z9, independent=False)
    system.add_speeds(u1, u2)
    system.add_speeds(u3, u4, u5, u9, independent=False)
    system.add_kdes(*[u - q.diff() for q, u in
                      zip((q1, q2, z3, a4, z5, z9), (u1, u2, u3, u4, u5, u9))])
    system.add_holonomic_constraints(z3, a4, z5, z9)
    system.add_bodies(rod, slider)
    system.add_loads(me.Force(Gr, m_R * g * S.x), me.Force(P, m_P * g * S.x),
                     me.Torque(S, T * S.x))
    V = -g * (m_R * Gr.pos_from(O).dot(S.x) + m_P * P.pos_from(O).dot(S.x)) \
        - T * q2
    forces = [
        ConstraintForce("R1", "force", S.x, Os, (rod, slider)),
        ConstraintForce("M2", "torque", S.y, Os, (rod, slider)),
        ConstraintForce("R3", "force", Rf.z, P, (slider,)),
        ConstraintForce("R2", "force", Rf.y, P, (slider,)),
    ]
    params = {m_R: 2.0, m_P: 1.0, L: 0.5, beta: 0.6, g: 9.81, T: 1.0}
    init = {q1: 0.5, q2: 0.0, u1: 0.0, u2: 2.0}
    return MechanicalSystem(
        name="rod_slider_shaft_extended", system=system, parameters=params,
        initial_state=init, potential_energy=V, energy_conserved=True,
        constraint_forces=forces,
        description=rod_slider_shaft_extended.__doc__,
        random_spread={q1: 0.4, q2: 3.0}, speed_scale=2.0)
