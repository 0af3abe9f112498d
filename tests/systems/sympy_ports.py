"""Systems declared as sympy.physics.mechanics' own test suite declares them.

Each builder writes the declaration a sympy user would write (frames,
points, ``v2pt_theory``, kinematic equations as in sympy's tests) and wraps
it in a :class:`~systems.MechanicalSystem` with values for the constants.
The results sympy's tests assert are kept beside each builder as
expressions, so tests can check every formulation against them.
"""
from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from systems import MechanicalSystem

t = me.dynamicsymbols._t


def contact_point_disc(*, gravity_frame: str = "Y") -> MechanicalSystem:
    """sympy's rolling disc "from the contact point up" (test_kane.py,
    ``test_rolling_disc``): three coordinates, three speeds, the contact
    point C with ``C.set_vel(N, 0)`` and the centre by
    ``Dmc.v2pt_theory(C, N, R)``; the rolling constraints are in the
    velocities, not in constraint equations.
    """
    q1, q2, q3, u1, u2, u3 = me.dynamicsymbols("q1 q2 q3 u1 u2 u3")
    r, m, g = sm.symbols("r m g")
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    w_R_N_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = me.Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    I = me.inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    kd = [me.dot(R.ang_vel_in(N) - w_R_N_qd, uv) for uv in L]
    body = me.RigidBody("BodyD", Dmc, R, m, (I, Dmc))
    system = me.System(N)
    system.add_coordinates(q1, q2, q3)
    system.add_speeds(u1, u2, u3)
    system.add_kdes(*kd)
    system.add_bodies(body)
    system.add_loads(me.Force(Dmc, -m * g * Y.z))
    return MechanicalSystem(
        name="contact_point_disc", system=system,
        parameters={r: 0.5, m: 1.0, g: 9.81},
        initial_state={q2: 0.2, u2: 3.0, u3: 1.0},
        random_spread={q1: 3.0, q2: 0.6, q3: 3.0}, speed_scale=3.0)


def rolling_disc_asserted_speed_rates():
    """u' of the rolling disc as sympy's test_kane.py asserts it, in
    (q2, u1, u2, u3) with symbols r, g."""
    q2, u1, u2, u3 = me.dynamicsymbols("q2 u1 u2 u3")
    r, g = sm.symbols("r g")
    return sm.Matrix([
        (6 * u2 * u3 * r - u3**2 * r * sm.tan(q2) + 4 * g * sm.sin(q2))
        / (5 * r),
        -2 * u1 * u3 / 3,
        u1 * (-2 * u2 + u3 * sm.tan(q2))])


def expected_coordinate_accelerations(ms, speed_rates):
    """q'' implied by ``speed_rates`` (u' in t, q, u) through the
    declaration's kinematic equations, as a function of (t, q, q')."""
    kin = ms.kinematics
    q, u = list(ms.coordinates), list(ms.speeds)
    ud = dict(zip([ui.diff(t) for ui in u], speed_rates))
    qdot = sm.Matrix([kin.qdot[qi.diff(t)] for qi in q])
    qdd = qdot.diff(t).xreplace(ud).xreplace(dict(kin.qdot))
    qdd = qdd.xreplace(dict(kin.u_of_qdot))
    Q, QD = sm.symbols(f"Q0:{len(q)}"), sm.symbols(f"QD0:{len(q)}")
    rep = {qi.diff(t): s for qi, s in zip(q, QD)} | dict(zip(q, Q))
    expr = qdd.xreplace(dict(kin.u_of_qdot)).xreplace(rep).xreplace(
        {sm.Symbol(str(k)): v for k, v in ms.parameters.items()}).xreplace(
        dict(ms.parameters))
    f = sm.lambdify([Q, QD], expr)
    return lambda t0, qv, qdv: np.asarray(f(qv, qdv), dtype=float).ravel()
