"""Two masses on springs in a tube turned by a prescribed motion
(``kane_method_examples_fa.txt``, example 1, equations (2-38), (2-39))."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system

t = me.dynamicsymbols._t


@register_system("rotating_tube")
def rotating_tube() -> MechanicalSystem:
    """Point masses P1, P2 sliding in a frictionless tube turned about a
    horizontal axis by a prescribed angle theta(t): a rheonomic system.

    Unit vectors: n1 points DOWN (along gravity), n2 is horizontal in the
    plane of motion, n3 = n1 x n2 is the tube's rotation axis.  The tube's
    frame t1, t2, t3 is n1, n2, n3 turned by theta about n3, t1 along the
    tube.  Spring k1 (free length L1) joins the tube's base O to P1, spring
    k2 (free length L2) joins P1 to P2; q1, q2 are their extensions, so that
    ``r_P1 = (L1 + q1) t1`` and ``r_P2 = (L1 + L2 + q2) t1``::

                 O  (horizontal axis n3, tube turned by theta(t))
                 |\\
            n1   | \\ t1
            v    |  \\ ~~k1~~ P1 ~~k2~~ P2
                 |theta
              gravity

    The prescribed motion is the smooth profile
    ``theta(t) = Omega t + a sin(nu t)`` (a steady spin with a superposed
    oscillation, so that theta' and theta'' both vary in time); it is given
    through ``specified``, so ``theta`` is a dynamicsymbol of the
    declaration.  Speeds are u1 = q1', u2 = q2'.

    The document's velocities (2-17), (2-18) are misprinted: they write the
    transverse term ``(L1 + q1) theta'`` along t1 where it is along t2 (as
    its own accelerations (2-22), (2-23) have it); the declaration uses t2.
    Energy is not conserved: the prescribed motion does work.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("rotating_tube")
    >>> ms.is_rheonomic, ms.degrees_of_freedom
    (True, 2)
    """
    q1, q2, u1, u2, theta = me.dynamicsymbols("q1 q2 u1 u2 theta")
    m1, m2, k1, k2, L1, L2, g = sm.symbols("m1 m2 k1 k2 L1 L2 g", positive=True)
    Omega, a, nu = sm.symbols("Omega a nu", real=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    T = N.orientnew("T", "Axis", (theta, N.z))
    P1 = O.locatenew("P1", (L1 + q1) * T.x)
    P2 = O.locatenew("P2", (L1 + L2 + q2) * T.x)
    thd = theta.diff(t)
    P1.set_vel(N, u1 * T.x + (L1 + q1) * thd * T.y)
    P2.set_vel(N, u2 * T.x + (L1 + L2 + q2) * thd * T.y)
    mass1 = me.Particle("mass1", P1, m1)
    mass2 = me.Particle("mass2", P2, m2)
    stretch2 = q2 - q1
    system = me.System(N, O)
    system.add_coordinates(q1, q2)
    system.add_speeds(u1, u2)
    system.add_kdes(u1 - q1.diff(), u2 - q2.diff())
    system.add_bodies(mass1, mass2)
    # The tube's normal forces do no work and are left out (Kane's point).
    system.add_loads(
        me.Force(P1, m1 * g * N.x + (-k1 * q1 + k2 * stretch2) * T.x),
        me.Force(P2, m2 * g * N.x - k2 * stretch2 * T.x),
    )
    V = (
        k1 * q1**2 / 2
        + k2 * stretch2**2 / 2
        - g * (m1 * P1.pos_from(O).dot(N.x) + m2 * P2.pos_from(O).dot(N.x))
    )
    params = {
        m1: 1.0,
        m2: 1.0,
        k1: 20.0,
        k2: 20.0,
        L1: 0.5,
        L2: 0.5,
        g: 9.81,
        Omega: 1.0,
        a: 0.3,
        nu: 2.0,
    }
    return MechanicalSystem(
        name="rotating_tube",
        system=system,
        parameters=params,
        initial_state={q1: 0.0, q2: 0.0, u1: 0.0, u2: 0.0},
        specified={theta: Omega * t + a * sm.sin(nu * t)},
        potential_energy=V,
        energy_conserved=False,
        description=rotating_tube.__doc__,
        # Small enough that the masses never pass each other or the base.
        random_spread=0.2,
        speed_scale=1.0,
    )
