"""Systems declared as sympy.physics.mechanics' own test suite declares them.

Each builder writes the declaration a sympy user would write (frames,
points, ``v2pt_theory``, kinematic equations as in sympy's tests) and wraps
it in a :class:`~eomcompare.systems.MechanicalSystem` with values for the constants.
The results sympy's tests assert are kept beside each builder as
expressions, so tests can check every formulation against them.
"""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.systems import MechanicalSystem

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
        name="contact_point_disc",
        system=system,
        parameters={r: 0.5, m: 1.0, g: 9.81},
        initial_state={q2: 0.2, u2: 3.0, u3: 1.0},
        random_spread={q1: 3.0, q2: 0.6, q3: 3.0},
        speed_scale=3.0,
    )


def rolling_disc_asserted_speed_rates():
    """u' of the rolling disc as sympy's test_kane.py asserts it, in
    (q2, u1, u2, u3) with symbols r, g."""
    q2, u1, u2, u3 = me.dynamicsymbols("q2 u1 u2 u3")
    r, g = sm.symbols("r g")
    return sm.Matrix(
        [
            (6 * u2 * u3 * r - u3**2 * r * sm.tan(q2) + 4 * g * sm.sin(q2)) / (5 * r),
            -2 * u1 * u3 / 3,
            u1 * (-2 * u2 + u3 * sm.tan(q2)),
        ]
    )


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
    expr = (
        qdd.xreplace(dict(kin.u_of_qdot))
        .xreplace(rep)
        .xreplace({sm.Symbol(str(k)): v for k, v in ms.parameters.items()})
        .xreplace(dict(ms.parameters))
    )
    f = sm.lambdify([Q, QD], expr)
    return lambda t0, qv, qdv: np.asarray(f(qv, qdv), dtype=float).ravel()


def joints_cart_pendulum() -> MechanicalSystem:
    """sympy's cart-pendulum built from joints (test_system_class.py,
    ``test_cart_pendulum_kanes``; the example of ``System``'s
    documentation): ``System.from_newtonian(rail)``, a prismatic and a pin
    joint, uniform gravity, a force on the cart and a torque actuator.
    The ground body's mass and inertia get no values: they cannot enter
    the equations.  The force F(t) is prescribed as ``sin(t) / 2``."""
    g, l, mc, mp, k = sm.symbols("g l mc mp k")
    F, qp, qc, up, uc = me.dynamicsymbols("F qp qc up uc")
    rail = me.RigidBody("rail")
    cart = me.RigidBody("cart", mass=mc)
    bob = me.Particle("bob", mass=mp)
    bob_frame = me.ReferenceFrame("bob_frame")
    system = me.System.from_newtonian(rail)
    slider = me.PrismaticJoint("slider", rail, cart, qc, uc, joint_axis=rail.x)
    pin = me.PinJoint(
        "pin",
        cart,
        bob,
        qp,
        up,
        joint_axis=cart.z,
        child_interframe=bob_frame,
        child_point=l * bob_frame.y,
    )
    system.add_joints(slider, pin)
    system.apply_uniform_gravity(-g * system.y)
    system.add_loads((cart.masscenter, F * rail.x))
    system.add_actuators(me.TorqueActuator(k * qp, cart.z, bob_frame, cart))
    return MechanicalSystem(
        name="joints_cart_pendulum",
        system=system,
        parameters={g: 9.81, l: 0.8, mc: 1.5, mp: 0.7, k: 0.4},
        initial_state={qp: 0.4},
        specified={F: sm.sin(t) / 2},
        random_spread=1.0,
    )


def joints_cart_pendulum_asserted():
    """(M, forcing) sympy's test asserts, in (qp, up) and F(t)."""
    g, l, mc, mp, k = sm.symbols("g l mc mp k")
    F, qp, up = me.dynamicsymbols("F qp up")
    M = sm.Matrix([[mp + mc, mp * l * sm.cos(qp)], [mp * l * sm.cos(qp), mp * l**2]])
    f = sm.Matrix([mp * l * up**2 * sm.sin(qp) + F, -mp * g * l * sm.sin(qp) + k * qp])
    return M, f


def joints_double_pendulum() -> MechanicalSystem:
    """A double pendulum of point masses built from pin joints the way
    sympy's documentation builds its cart-pendulum: ``from_newtonian`` on
    a ceiling body, particles with joint frames given as interframes.
    q1 is the first rod's angle from the downward vertical, q2 the second
    rod's angle relative to the first."""
    q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
    l1, l2, m1, m2, g = sm.symbols("l1 l2 m1 m2 g")
    ceiling = me.RigidBody("ceiling")
    bob1 = me.Particle("bob1", mass=m1)
    bob2 = me.Particle("bob2", mass=m2)
    f1 = me.ReferenceFrame("f1")
    f2 = me.ReferenceFrame("f2")
    system = me.System.from_newtonian(ceiling)
    pin1 = me.PinJoint(
        "pin1",
        ceiling,
        bob1,
        q1,
        u1,
        joint_axis=ceiling.z,
        child_interframe=f1,
        child_point=l1 * f1.y,
    )
    pin2 = me.PinJoint(
        "pin2",
        bob1,
        bob2,
        q2,
        u2,
        joint_axis=f1.z,
        parent_interframe=f1,
        child_interframe=f2,
        child_point=l2 * f2.y,
    )
    system.add_joints(pin1, pin2)
    system.apply_uniform_gravity(-g * system.y)
    return MechanicalSystem(
        name="joints_double_pendulum",
        system=system,
        parameters={l1: 1.1, l2: 0.7, m1: 1.3, m2: 0.6, g: 9.81},
        initial_state={q1: 0.5, q2: -0.3},
        random_spread=2.0,
        speed_scale=2.0,
    )


def double_pendulum_closed_form(t0, q, qd, *, l1=1.1, l2=0.7, m1=1.3, m2=0.6, g=9.81):
    """(q1'', q2'') of :func:`joints_double_pendulum` from the textbook
    equations of a double pendulum of point masses in absolute angles
    (th1 = q1, th2 = q1 + q2)."""
    import math

    th1, th2 = q[0], q[0] + q[1]
    w1, w2 = qd[0], qd[0] + qd[1]
    den = 2 * m1 + m2 - m2 * math.cos(2 * th1 - 2 * th2)
    a1 = (
        -g * (2 * m1 + m2) * math.sin(th1)
        - m2 * g * math.sin(th1 - 2 * th2)
        - 2 * math.sin(th1 - th2) * m2 * (w2**2 * l2 + w1**2 * l1 * math.cos(th1 - th2))
    ) / (l1 * den)
    a2 = (
        2
        * math.sin(th1 - th2)
        * (
            w1**2 * l1 * (m1 + m2)
            + g * (m1 + m2) * math.cos(th1)
            + w2**2 * l2 * m2 * math.cos(th1 - th2)
        )
    ) / (l2 * den)
    return np.array([a1, a2 - a1])


def implicit_kinematics_body(*, initial_state=None) -> MechanicalSystem:
    """sympy's free rigid body of ``test_kane.py::test_implicit_kinematics``
    as written there: a quaternion ``lambda_0:4`` with ``lambda_0``
    dependent on the unit-norm configuration constraint, the norm's
    derivative among the kinematic equations, body-frame position
    coordinates and velocity components as speeds; gravity, and the inputs
    ``T_z``, ``F_z`` prescribed here as ``sin(t)``, ``cos(t) / 2``.
    ``lambda_0`` is left out of the initial state (solved from the norm)."""
    S, Matrix = sm.S, sm.Matrix
    NED = me.ReferenceFrame("NED")
    NED_o = me.Point("NED_o")
    NED_o.set_vel(NED, 0)
    q_att = me.dynamicsymbols("lambda_0:4", real=True)
    B = NED.orientnew("B", "Quaternion", q_att)
    q_pos = me.dynamicsymbols("B_x:z")
    B_cm = NED_o.locatenew("B_cm", q_pos[0] * B.x + q_pos[1] * B.y + q_pos[2] * B.z)
    q_ind = q_att[1:] + q_pos
    q_dep = [q_att[0]]
    kinematic_eqs = []
    B_ang_vel = B.ang_vel_in(NED)
    P, Q, R = me.dynamicsymbols("P Q R")
    B.set_ang_vel(NED, P * B.x + Q * B.y + R * B.z)
    B_ang_vel_kd = (B.ang_vel_in(NED) - B_ang_vel).simplify()
    kinematic_eqs += [B_ang_vel_kd & B.x, B_ang_vel_kd & B.y, B_ang_vel_kd & B.z]
    B_cm_vel = B_cm.vel(NED)
    U, V, W = me.dynamicsymbols("U V W")
    B_cm.set_vel(NED, U * B.x + V * B.y + W * B.z)
    B_ref_vel_kd = B_cm.vel(NED) - B_cm_vel
    kinematic_eqs += [B_ref_vel_kd & B.x, B_ref_vel_kd & B.y, B_ref_vel_kd & B.z]
    u_ind = [U, V, W, P, Q, R]
    q_att_vec = Matrix(q_att)
    config_cons = [(q_att_vec.T * q_att_vec)[0] - 1]  # unit norm
    kinematic_eqs = kinematic_eqs + [(q_att_vec.T * q_att_vec.diff())[0]]
    M_B = sm.symbols("M_B")
    J_B = me.inertia(
        B,
        *[
            S(f"J_B_{ax}") * (1 if ax[0] == ax[1] else -1)
            for ax in ["xx", "yy", "zz", "xy", "yz", "xz"]
        ],
    )
    J_B = J_B.subs({S("J_B_xy"): 0, S("J_B_yz"): 0})
    RB = me.RigidBody("RB", B_cm, B, M_B, (J_B, B_cm))
    T_z, F_z = me.dynamicsymbols("T_z F_z")
    system = me.System(NED, NED_o)
    system.add_coordinates(*q_ind)
    system.add_coordinates(*q_dep, independent=False)
    system.add_holonomic_constraints(*config_cons)
    system.add_speeds(*u_ind)
    system.add_kdes(*kinematic_eqs)
    system.add_bodies(RB)
    system.add_loads(
        me.Force(RB.masscenter, RB.mass * S("g") * NED.z),
        me.Torque(RB.frame, T_z * B.z),
        me.Force(RB.masscenter, F_z * B.z),
    )
    params = {M_B: 2.0, S("g"): 9.81, S("J_B_xx"): 1.0, S("J_B_yy"): 1.5}
    params |= {S("J_B_zz"): 2.0, S("J_B_xz"): 0.1}
    return MechanicalSystem(
        name="implicit_kinematics_body",
        system=system,
        parameters=params,
        initial_state=initial_state
        or {q_att[1]: 0.1, q_att[2]: 0.2, q_att[3]: 0.3, U: 1.0, P: 0.3, R: 0.5},
        specified={T_z: sm.sin(t), F_z: sm.cos(t) / 2},
        random_spread=0.3,
    )


def quaternion_top() -> MechanicalSystem:
    """A rigid body about its fixed mass centre oriented by
    ``orient_quaternion`` with 4 coordinates, 3 body-rate speeds and the
    textbook kinematic equations q' = Q(w) q / 2 (which keep the norm),
    driven by a torque ``T sin(t)`` about B.z."""
    lam = me.dynamicsymbols("lambda_0:4")
    w1, w2, w3 = me.dynamicsymbols("w1:4")
    I1, I2, I3, T = sm.symbols("I1 I2 I3 T")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = me.ReferenceFrame("B")
    B.orient_quaternion(N, lam)
    B.set_ang_vel(N, w1 * B.x + w2 * B.y + w3 * B.z)
    Qw = sm.Matrix(
        [[0, -w1, -w2, -w3], [w1, 0, w3, -w2], [w2, -w3, 0, w1], [w3, w2, -w1, 0]]
    )
    qv = sm.Matrix(lam)
    body = me.RigidBody("body", O, B, 1, (me.inertia(B, I1, I2, I3), O))
    system = me.System(N, O)
    system.add_coordinates(*lam)
    system.add_speeds(w1, w2, w3)
    system.add_kdes(*(qv.diff(t) - Qw * qv / 2))
    system.add_bodies(body)
    system.add_loads(me.Torque(B, T * sm.sin(t) * B.z))
    return MechanicalSystem(
        name="quaternion_top",
        system=system,
        parameters={I1: 1.0, I2: 2.0, I3: 3.0, T: 0.5},
        initial_state={
            lam[0]: np.sqrt(1 - 0.14),
            lam[1]: 0.1,
            lam[2]: 0.2,
            lam[3]: 0.3,
            w1: 0.5,
            w2: -1.0,
            w3: 0.3,
        },
    )


def box_on_ground() -> MechanicalSystem:
    """sympy's particle sliding on the ground with friction
    (``test_system_class.py::TestSystemExamples::test_box_on_ground``), as
    written there: the normal force ``N`` and the applied force ``F`` are
    ``dynamicsymbols``; ``N`` is the reaction of the auxiliary speed ``ua``
    (the ground's direction) and enters the motion through the friction
    ``-mu*N``.  ``F`` is prescribed here as ``7 + cos(t)`` (above the
    friction, as the test assumes)."""
    from sympy.physics.mechanics import Force, Particle, System, dynamicsymbols

    g, m, mu = sm.symbols("g m mu")
    q, u, ua = dynamicsymbols("q u ua")
    N, F = dynamicsymbols("N F", positive=True)
    P = Particle("P", mass=m)
    system = System()
    system.add_bodies(P)
    P.masscenter.set_pos(system.fixed_point, q * system.x)
    P.masscenter.set_vel(system.frame, u * system.x + ua * system.y)
    system.q_ind, system.u_ind, system.u_aux = [q], [u], [ua]
    system.kdes = [q.diff(t) - u]
    system.apply_uniform_gravity(-g * system.y)
    system.add_loads(Force(P, N * system.y), Force(P, F * system.x - mu * N * system.x))
    return MechanicalSystem(
        name="box_on_ground",
        system=system,
        parameters={g: 9.81, m: 2.0, mu: 0.3},
        initial_state={q: 0.0, u: 1.0},
        specified={F: 7 + sm.cos(t)},
    )


def box_on_ground_asserted():
    """What test_box_on_ground asserts: the dynamic equation
    ``m u' = F - mu N`` (``system.mass_matrix``, ``system.forcing``) and the
    auxiliary equation ``N - m g = 0`` (``eom_method.auxiliary_eqs``), as
    functions of (m, g, mu, F): the normal force and u'."""

    def normal_force(m, g, mu, F):
        return m * g

    def speed_rate(m, g, mu, F):
        return (F - mu * normal_force(m, g, mu, F)) / m

    return normal_force, speed_rate


def replace_qdots_double_pendulum() -> MechanicalSystem:
    """sympy's double pendulum of ``test_kane4.py::test_replace_qdots_in_force``
    with its second kinematic equations ``kde2``: u1 = q1', u2 = q1' + q2'
    (the second rod's absolute rate), and a torsional spring-damper between
    the rods written in the coordinate rates."""
    q1, q2 = me.dynamicsymbols("q1, q2")
    qd1, qd2 = me.dynamicsymbols("q1, q2", level=1)
    u1, u2 = me.dynamicsymbols("u1, u2")
    l, m = sm.symbols("l, m")
    N = me.ReferenceFrame("N")  # Inertial frame
    A = N.orientnew("A", "Axis", (q1, N.z))  # Rod A frame
    B = A.orientnew("B", "Axis", (q2, N.z))  # Rod B frame
    O = me.Point("O")  # Origo
    O.set_vel(N, 0)
    P = O.locatenew("P", (l * A.x))  # Point @ end of rod A
    P.v2pt_theory(O, N, A)
    Q = P.locatenew("Q", (l * B.x))  # Point @ end of rod B
    Q.v2pt_theory(P, N, B)
    Ap = me.Particle("Ap", P, m)
    Bp = me.Particle("Bp", Q, m)
    sig, delta = sm.symbols("sigma, delta")
    Ta = (sig * q2 + delta * qd2) * N.z
    forces = [(A, Ta), (B, -Ta)]
    kde2 = [u1 - qd1, u2 - (qd1 + qd2)]
    system = me.System(N, O)
    system.add_coordinates(q1, q2)
    system.add_speeds(u1, u2)
    system.add_kdes(*kde2)
    system.add_bodies(Ap, Bp)
    system.add_loads(*forces)
    return MechanicalSystem(
        name="replace_qdots_double_pendulum",
        system=system,
        parameters={l: 0.7, m: 1.2, sig: 3.0, delta: 0.4},
        initial_state={q1: 0.3, q2: 0.5},
    )


def replace_qdots_double_pendulum_asserted():
    """KanesMethod's mass matrix the test asserts (``mass_matrix_expected``),
    in q2 and the constants l, m."""
    q2 = me.dynamicsymbols("q2")
    l, m = sm.symbols("l, m")
    return sm.Matrix(
        [[2 * m * l**2, m * l**2 * sm.cos(q2)], [m * l**2 * sm.cos(q2), m * l**2]]
    )
