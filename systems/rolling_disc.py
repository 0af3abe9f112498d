"""The thin rolling disc of the sympy.physics.mechanics documentation,
with the contact point's position as coordinates."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system


@register_system("rolling_disc")
def rolling_disc() -> MechanicalSystem:
    """Thin disc (radius ``r``, mass ``m``) rolling without slip on a
    horizontal plane in gravity ``g`` (the sympy.physics.mechanics Kane's
    method example; ``sympy_kane_rolling_disc_zh.txt``).

    Frames as in sympy's example: N inertial with N.z up; Y = N rotated by
    the yaw ``q1`` about N.z; L = Y rotated by the lean ``q2`` about Y.x
    (L.x is the horizontal rolling direction, L.y the disc axis, L.z points
    from the contact point C to the centre D in the disc plane); the disc
    frame R = L rotated by the spin ``q3`` about L.y.  The contact point is
    C = (x, y, 0)::

              L.z
               ^    disc (edge on), lean q2 from the vertical
               |   /
               |  /  D (centre), CD = r
               | /
               |/ q2
        -------C-------------> Y.y      (plane z = 0)

    Coordinates (q1, q2, q3, x, y).  Speeds: independent u1, u2, u3, the
    disc's angular velocity components along L.x, L.y, L.z; dependent
    u4 = x', u5 = y'.  The two nonholonomic constraints say that the disc's
    material point at C has no horizontal velocity (its vertical velocity
    vanishes identically).  The centre's velocity is declared with the
    unconstrained rates (x', y'), as multiplier formulations need.

    Central inertia: ``m r^2 / 2`` about the axis, ``m r^2 / 4`` about a
    diameter.  Rolling does no work, so ``T + V`` with
    ``V = m g r cos(q2)`` is conserved.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("rolling_disc")
    >>> len(ms.coordinates), ms.degrees_of_freedom
    (5, 3)
    """
    q1, q2, q3, x, y = me.dynamicsymbols("q1 q2 q3 x y")
    u1, u2, u3, u4, u5 = me.dynamicsymbols("u1:6")
    m, r, g = sm.symbols("m r g", positive=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    Y = N.orientnew("Y", "Axis", (q1, N.z))
    L = Y.orientnew("L", "Axis", (q2, Y.x))
    R = L.orientnew("R", "Axis", (q3, L.y))
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    # The kinematic equations solved for the rates, from
    # w_R = q1' Y.z + q2' L.x + q3' L.y with Y.z = sin(q2) L.y + cos(q2) L.z;
    # written solved so that no formulation meets a spurious 0/0 at q2 = 0.
    kdes = [
        q1.diff() - u3 / sm.cos(q2),
        q2.diff() - u1,
        q3.diff() - u2 + u3 * sm.tan(q2),
        x.diff() - u4,
        y.diff() - u5,
    ]
    # The lean frame's angular velocity q1' Y.z + q2' L.x in the speeds.
    w_L = u1 * L.x + u3 * sm.tan(q2) * L.y + u3 * L.z
    C = O.locatenew("C", x * N.x + y * N.y)
    C.set_vel(N, u4 * N.x + u5 * N.y)
    D = C.locatenew("D", r * L.z)
    D.set_vel(N, u4 * N.x + u5 * N.y + w_L.cross(r * L.z))
    # Velocity of the disc's material point at C.
    v_contact = D.vel(N) + R.ang_vel_in(N).cross(-r * L.z)
    nonhol = [sm.simplify(v_contact.dot(Y.x)), sm.simplify(v_contact.dot(Y.y))]
    disc = me.RigidBody(
        "disc", D, R, m, (me.inertia(R, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4), D)
    )
    system = me.System(N, O)
    system.add_coordinates(q1, q2, q3, x, y)
    system.add_speeds(u1, u2, u3)
    system.add_speeds(u4, u5, independent=False)
    system.add_kdes(*kdes)
    system.add_nonholonomic_constraints(*nonhol)
    system.add_bodies(disc)
    system.add_loads(me.Force(D, -m * g * N.z))
    V = m * g * D.pos_from(O).dot(N.z)
    params = {m: 1.0, r: 0.5, g: 9.81}
    init = {q1: 0.0, q2: 0.2, q3: 0.0, x: 0.0, y: 0.0, u1: 0.0, u2: 6.0, u3: 1.0}
    return MechanicalSystem(
        name="rolling_disc",
        system=system,
        parameters=params,
        initial_state=init,
        potential_energy=V,
        energy_conserved=True,
        description=rolling_disc.__doc__,
        # The lean stays well away from +-pi/2 (disc flat on the ground),
        # where the kinematic equations are singular.
        random_spread={q1: 3.0, q2: 0.6, q3: 3.0, x: 1.0, y: 1.0},
        speed_scale=3.0,
    )
