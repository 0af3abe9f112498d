"""The Whipple bicycle of the benchmark of Meijaard, Papadopoulos, Ruina and
Schwab (2007), nonlinear, in the benchmark's own parameters."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system

#: The benchmark parameters (Meijaard et al. 2007, Table 1), SI units, with
#: the benchmark's axes: x forward, y to the right, z down.
BENCHMARK_PARAMETERS = {
    "w": 1.02,
    "c": 0.08,
    "lam": 3.141592653589793 / 10,
    "g": 9.81,
    "rR": 0.3,
    "mR": 2.0,
    "IRxx": 0.0603,
    "IRyy": 0.12,
    "xB": 0.3,
    "zB": -0.9,
    "mB": 85.0,
    "IBxx": 9.2,
    "IByy": 11.0,
    "IBzz": 2.8,
    "IBxz": 2.4,
    "xH": 0.9,
    "zH": -0.7,
    "mH": 4.0,
    "IHxx": 0.05892,
    "IHyy": 0.06,
    "IHzz": 0.00708,
    "IHxz": -0.00756,
    "rF": 0.35,
    "mF": 3.0,
    "IFxx": 0.1405,
    "IFyy": 0.28,
    "T_phi": 0.0,
    "T_delta": 0.0,
}


@register_system("whipple_bicycle", heavy=True)
def whipple_bicycle() -> MechanicalSystem:
    """The Whipple bicycle: rear wheel R, rear frame with rider B, front
    fork and handlebar H, front wheel F; knife-edge wheels rolling without
    slip on flat ground (Meijaard et al. 2007, the benchmark's notation).

    Axes as in the benchmark: inertial N with x forward, y right, z DOWN
    (heights are negative), origin at the ground.  Coordinates::

        q1, q2  rear contact point (x, y)
        q3      yaw psi        (about N.z)          -> frame A
        q4      roll phi       (about A.x, lean right positive) -> frame Rl
        q5      pitch theta of the rear frame (about Rl.y) -> frame C
                (dependent: the front wheel must touch the ground)
        q6      steer delta    (about the steer axis E.z) -> frame H
        q7, q8  rear and front wheel rotations relative to their frames

    The steer axis E.z is C.z tilted forward by lambda about C.y (pointing
    down and forward); it meets the ground a trail c ahead of the front
    contact, the wheelbase w behind it.  In the nominal configuration (all
    angles zero) C is aligned with N, the rear wheel centre is at
    (0, 0, -rR), the front wheel centre at (w, 0, -rF), the rear frame's
    mass centre at (xB, 0, zB) and the fork's at (xH, 0, zH).  Inertia
    tensors are given, as in the benchmark, in these nominal axes:
    ``[[Ixx, 0, Ixz], [0, Iyy, 0], [Ixz, 0, Izz]]`` (the tensor's own
    entries, not the negated products of inertia).

    Speeds: one per coordinate, ``u_i = q_i'``; the independent ones are
    the roll rate u4, the steer rate u6 and the rear wheel rate u7; the
    dependent ones (u1, u2, u3, u5, u8) follow from the four horizontal
    rolling conditions at the two contacts (nonholonomic) and the time
    derivative of the front-contact height constraint (holonomic).

    Inputs: a roll torque ``T_phi`` acting on the rear frame about A.x
    (reacting on the ground) and a steer torque ``T_delta`` between rear
    frame and fork about the steer axis, both zero by default; the
    benchmark's M, C1, K0, K2 are defined with respect to them.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("whipple_bicycle")
    >>> len(ms.coordinates), ms.degrees_of_freedom
    (8, 3)
    """
    q = me.dynamicsymbols("q1:9")
    u = me.dynamicsymbols("u1:9")
    q1, q2, q3, q4, q5, q6, q7, q8 = q
    syms = {name: sm.Symbol(name, real=True) for name in BENCHMARK_PARAMETERS}
    S = type("P", (), syms)
    w, c, lam, g = S.w, S.c, S.lam, S.g
    rR, rF = S.rR, S.rF

    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", (q3, N.z))
    Rl = A.orientnew("Rl", "Axis", (q4, A.x))
    C = Rl.orientnew("C", "Axis", (q5, Rl.y))
    E = C.orientnew("E", "Axis", (lam, C.y))
    H = E.orientnew("H", "Axis", (q6, E.z))
    Rw = C.orientnew("Rw", "Axis", (q7, C.y))
    Fw = H.orientnew("Fw", "Axis", (q8, H.y))
    # The fork's inertia is given in axes fixed in H that coincide with N
    # in the nominal configuration.
    Hn = H.orientnew("Hn", "Axis", (-lam, H.y))

    qd_to_u = {qi.diff(): ui for qi, ui in zip(q, u)}

    def in_speeds(vec):
        return vec.xreplace(qd_to_u) if vec != 0 else vec

    for frame in (A, Rl, C, H, Rw, Fw):
        frame.set_ang_vel(N, in_speeds(frame.ang_vel_in(N)))
    Hn.set_ang_vel(N, H.ang_vel_in(N))
    E.set_ang_vel(N, C.ang_vel_in(N))

    # Perpendicular distances along the steer axis (Moore's d1, d2, d3),
    # from the nominal geometry: rear wheel centre to the axis along E.x,
    # along the axis, axis to front wheel centre along H.x.
    d1 = (w + c) * sm.cos(lam) - rR * sm.sin(lam)
    d2 = w * sm.sin(lam) + (rR - rF) * sm.cos(lam)
    d3 = rF * sm.sin(lam) - c * sm.cos(lam)

    O = me.Point("O")
    O.set_vel(N, 0)
    P_R = O.locatenew("P_R", q1 * N.x + q2 * N.y)  # rear contact
    R_o = P_R.locatenew("R_o", -rR * Rl.z)  # rear centre
    B_o = R_o.locatenew("B_o", S.xB * C.x + (S.zB + rR) * C.z)
    S_a = R_o.locatenew("S_a", d1 * E.x)  # on the axis
    F_o = S_a.locatenew("F_o", d2 * E.z + d3 * H.x)  # front centre
    # The fork's mass centre from its nominal position relative to the
    # front wheel centre, (xH - w, 0, zH + rF) in nominal axes.
    H_o = F_o.locatenew("H_o", (S.xH - w) * Hn.x + (S.zH + rF) * Hn.z)
    # Front contact: from the front centre, rF along the wheel plane's
    # steepest downward direction.
    g_dir = H.y.cross(N.z.cross(H.y))
    g_norm = sm.sqrt(1 - H.y.dot(N.z) ** 2)
    P_F = F_o.locatenew("P_F", rF * g_dir / g_norm)
    holonomic = P_F.pos_from(O).dot(A.z)

    # Velocities by the two-point theorem along the chain, in the
    # unconstrained speeds (multiplier formulations need them so).
    P_R.set_vel(N, u[0] * N.x + u[1] * N.y)
    R_o.v2pt_theory(P_R, N, Rl)
    B_o.v2pt_theory(R_o, N, C)
    S_a.v2pt_theory(R_o, N, C)
    F_o.v2pt_theory(S_a, N, H)
    H_o.v2pt_theory(F_o, N, H)

    def tidy(expr):
        """Speed coefficients simplified (u3, u4 cancel at the rear contact)."""
        expr = sm.expand(expr)
        return sum(sm.trigsimp(sm.factor_terms(expr.coeff(ui))) * ui for ui in u)

    # Material points of the wheels at the contacts.  The rear one moves at
    # u1 N.x + u2 N.y + rR (u5 + u7) A.x; its constraints in N components
    # have unit coefficients of u1, u2, so symbolic elimination never meets
    # a pivot that vanishes at some heading.  The front ones are left as
    # formed: simplifying them costs minutes.  With the dependent speeds
    # ordered (u1, u2, u5, u8, u3) the pivots of the elimination are, in
    # turn, 1, 1, the pitch sensitivity of the front-contact height, the
    # front wheel radius term and the wheelbase term: none vanishes in the
    # upright configuration.
    v_R = R_o.vel(N) + Rw.ang_vel_in(N).cross(P_R.pos_from(R_o))
    v_F = F_o.vel(N) + Fw.ang_vel_in(N).cross(P_F.pos_from(F_o))
    nonholonomic = [tidy(v_R.dot(N.x)), tidy(v_R.dot(N.y)), v_F.dot(A.x), v_F.dot(A.y)]

    rear_wheel = me.RigidBody(
        "rear_wheel", R_o, Rw, S.mR, (me.inertia(C, S.IRxx, S.IRyy, S.IRxx), R_o)
    )
    rear_frame = me.RigidBody(
        "rear_frame",
        B_o,
        C,
        S.mB,
        (me.inertia(C, S.IBxx, S.IByy, S.IBzz, 0, 0, S.IBxz), B_o),
    )
    fork = me.RigidBody(
        "fork",
        H_o,
        Hn,
        S.mH,
        (me.inertia(Hn, S.IHxx, S.IHyy, S.IHzz, 0, 0, S.IHxz), H_o),
    )
    front_wheel = me.RigidBody(
        "front_wheel", F_o, Fw, S.mF, (me.inertia(H, S.IFxx, S.IFyy, S.IFxx), F_o)
    )
    bodies = (rear_wheel, rear_frame, fork, front_wheel)

    loads = [me.Force(b.masscenter, b.mass * g * N.z) for b in bodies]
    loads += [
        me.Torque(C, S.T_phi * A.x + S.T_delta * -E.z),
        me.Torque(H, S.T_delta * E.z),
    ]

    system = me.System(N, O)
    system.add_coordinates(q1, q2, q3, q4, q6, q7, q8)
    system.add_coordinates(q5, independent=False)
    system.add_speeds(u[3], u[5], u[6])
    system.add_speeds(u[0], u[1], u[4], u[7], u[2], independent=False)
    system.add_kdes(
        *[
            ui - qi.diff()
            for qi, ui in zip(
                (q4, q6, q7, q1, q2, q3, q5, q8),
                (u[3], u[5], u[6], u[0], u[1], u[2], u[4], u[7]),
            )
        ]
    )
    system.add_holonomic_constraints(holonomic)
    system.add_nonholonomic_constraints(*nonholonomic)
    system.add_bodies(*bodies)
    system.add_loads(*loads)
    V = sum(-b.mass * g * b.masscenter.pos_from(O).dot(N.z) for b in bodies)
    params = {syms[k]: v for k, v in BENCHMARK_PARAMETERS.items()}
    # Upright straight running at 4.6 m/s (rear wheel rate -v/rR); the
    # pitch solved from the front contact (zero at the nominal geometry).
    init = {
        q1: 0.0,
        q2: 0.0,
        q3: 0.0,
        q4: 0.0,
        q6: 0.0,
        q7: 0.0,
        q8: 0.0,
        q5: 0.0,
        u[3]: 0.0,
        u[5]: 0.0,
        u[6]: -4.6 / 0.3,
    }
    return MechanicalSystem(
        name="whipple_bicycle",
        system=system,
        parameters=params,
        initial_state=init,
        potential_energy=V,
        energy_conserved=True,
        description=whipple_bicycle.__doc__,
        random_spread={q1: 1.0, q2: 1.0, q3: 1.0, q4: 0.2, q6: 0.3, q7: 1.0, q8: 1.0},
        speed_scale=1.0,
    )
