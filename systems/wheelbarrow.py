"""Ginsberg's wheelbarrow: a nonholonomic cart pushed at its handles."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system


@register_system("wheelbarrow")
def wheelbarrow() -> MechanicalSystem:
    """Wheelbarrow rolling without slip on horizontal ground (Ginsberg,
    pp. 361-364; example 3 of ``kane_method_examples_fa.txt``).

    The body (mass ``m_wb``, moment of inertia ``I`` about the vertical)
    carries the wheel axle at the wheel centre C; its mass centre G lies a
    distance ``l`` behind C on the body axis b1.  The wheel (mass ``m_w``,
    radius ``r``) has moment of inertia ``J`` about its axle b2 and ``J/2``
    about a diameter.  The user pushes at the handles
    A = C - p b1 + q b2 and B = C - p b1 - q b2 with forces whose horizontal
    components have the constant magnitude ``R`` and make the constant angle
    ``beta`` with b1 (measured towards b2); their vertical components only
    hold the body up and do no work, so they are not modelled::

        top view                                b2
                                                ^
           A o-----------.                      |
                          \\       G            |
                           >------o-----------(wheel C)---> b1
                          /                     |
           B o-----------'                      |
             |<-------------- p --------------->|
                                  |<---- l ---->|

    Coordinates: ``phi`` (wheel rolling angle about b2), ``theta`` (heading
    of b1 from the ground X axis), ``X_c``, ``Y_c`` (wheel centre).
    Speeds: independent ``v = r phi'`` (forward speed of C) and
    ``omega = theta'``; dependent ``v_x = X_c'``, ``v_y = Y_c'``.  The two
    nonholonomic constraints are no lateral slip
    (``-v_x sin theta + v_y cos theta = 0``) and rolling
    (``v_x cos theta + v_y sin theta - v = 0``).

    The published equations of motion, (2-111) and (2-112) with the
    misprint corrected (the document's (2-98), (2-100) and (2-111) print
    u2' where u1' is meant), are::

        (m_w + m_wb + J/r^2) v' + m_wb l omega^2 = 2 R cos(beta)
        (I + J/2 + m_wb l^2) omega' - l m_wb v omega = -2 p R sin(beta)

    The handle forces keep pushing, so the energy is not conserved.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("wheelbarrow")
    >>> len(ms.coordinates), len(ms.speeds), ms.degrees_of_freedom
    (4, 4, 2)
    """
    phi, theta, Xc, Yc = me.dynamicsymbols("phi theta X_c Y_c")
    v, w, vx, vy = me.dynamicsymbols("v omega v_x v_y")
    m_w, m_wb, l, I, J, r, R, beta, p, q = sm.symbols(
        "m_w m_wb l I J r R beta p q", real=True
    )
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = N.orientnew("B", "Axis", (theta, N.z))
    B.set_ang_vel(N, w * N.z)
    W = B.orientnew("W", "Axis", (phi, B.y))
    W.set_ang_vel(B, v / r * B.y)
    # The wheel centre's velocity is written with the unconstrained rates of
    # (X_c, Y_c): multiplier formulations need the velocity before the
    # rolling constraints are imposed.
    C = O.locatenew("C", Xc * N.x + Yc * N.y)
    C.set_vel(N, vx * N.x + vy * N.y)
    G = C.locatenew("G", -l * B.x)
    G.v2pt_theory(C, N, B)
    A = C.locatenew("A", -p * B.x + q * B.y)
    A.v2pt_theory(C, N, B)
    Bh = C.locatenew("B_h", -p * B.x - q * B.y)
    Bh.v2pt_theory(C, N, B)
    wheel = me.RigidBody("wheel", C, W, m_w, (me.inertia(W, J / 2, J, J / 2), C))
    # Only the vertical moment of inertia enters planar motion.
    body = me.RigidBody("barrow", G, B, m_wb, (me.inertia(B, 0, 0, I), G))
    handle = R * (sm.cos(beta) * B.x + sm.sin(beta) * B.y)
    system = me.System(N, O)
    system.add_coordinates(phi, theta, Xc, Yc)
    system.add_speeds(v, w)
    system.add_speeds(vx, vy, independent=False)
    system.add_kdes(
        v - r * phi.diff(), w - theta.diff(), vx - Xc.diff(), vy - Yc.diff()
    )
    system.add_nonholonomic_constraints(
        -vx * sm.sin(theta) + vy * sm.cos(theta),
        vx * sm.cos(theta) + vy * sm.sin(theta) - v,
    )
    system.add_bodies(wheel, body)
    system.add_loads(me.Force(A, handle), me.Force(Bh, handle))
    params = {
        m_w: 5.0,
        m_wb: 20.0,
        l: 0.6,
        I: 4.0,
        J: 0.2,
        r: 0.3,
        R: 50.0,
        beta: 0.2,
        p: 1.2,
        q: 0.3,
    }
    init = {phi: 0.0, theta: 0.0, Xc: 0.0, Yc: 0.0, v: 1.0, w: 0.0}
    return MechanicalSystem(
        name="wheelbarrow",
        system=system,
        parameters=params,
        initial_state=init,
        description=wheelbarrow.__doc__,
        random_spread={phi: 3.0, theta: 3.0, Xc: 2.0, Yc: 2.0},
        speed_scale=2.0,
        energy_conserved=False,
    )
