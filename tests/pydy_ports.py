"""Systems declared as PyDy's Kane & Levinson (1985) exercises declare them.

The declarations are copied from PyDy's ``examples/Kane1985`` scripts
(frames, points, ``v2pt_theory`` / ``v1pt_theory``, kinematic equations,
loads) and wrapped in a :class:`~eomcompare.systems.MechanicalSystem` with values for
the constants.  The results the scripts assert (the book's) are kept beside
each builder as expressions.
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me
from sympy import cos, sin

from eomcompare.systems import MechanicalSystem

t = me.dynamicsymbols._t


def _define_forces(c, exert_by, exert_on, express):
    return sum(
        x * y for x, y in zip(sm.symbols(f"{c}_{exert_by}/{exert_on}_1:4"), express)
    )


def kane_levinson_ex_11_7() -> MechanicalSystem:
    """Kane & Levinson ex. 11.7 (PyDy ``Chapter6/Ex11.7_11.8.py``): bodies
    A, B, C, D; C slides along B (q2).  The reaction K_BC acts on C at C*
    and, opposite, on B at B^, the point of B that coincides with C*:
    ``B^ = C*.locatenew('B^', 0)`` with ``B^.v2pt_theory(P, E, B)``, whose
    velocity is not the time derivative of its position (it lacks C*'s
    sliding).  Every constant gets a value."""
    q0, q1, q2 = me.dynamicsymbols("q0:3")
    u1, u2, u3 = me.dynamicsymbols("u1:4")
    LA, LB, LP = sm.symbols("LA LB LP")
    p1, p2, p3 = sm.symbols("p1:4")
    A1, A2, A3 = sm.symbols("A1:4")
    B1, B2, B3 = sm.symbols("B1:4")
    C1, C2, C3 = sm.symbols("C1:4")
    D11, D22, D33, D12, D23, D31 = sm.symbols("D11 D22 D33 D12 D23 D31")
    g, mA, mB, mC, mD = sm.symbols("g mA mB mC mD")

    E = me.ReferenceFrame("E")
    A = E.orientnew("A", "Axis", [q0, E.x])
    B = A.orientnew("B", "Axis", [q1, A.y])
    C = B.orientnew("C", "Axis", [0, B.x])
    D = C.orientnew("D", "Axis", [0, C.x])

    pO = me.Point("O")
    pA_star = pO.locatenew("A*", LA * A.z)
    pP = pO.locatenew("P", LP * A.z)
    pB_star = pP.locatenew("B*", LB * B.z)
    pC_star = pB_star.locatenew("C*", q2 * B.z)
    pD_star = pC_star.locatenew("D*", p1 * B.x + p2 * B.y + p3 * B.z)

    pO.set_vel(E, 0)
    pA_star.v2pt_theory(pO, E, A)
    pP.v2pt_theory(pO, E, A)
    pB_star.v2pt_theory(pP, E, B)
    pC_star.set_vel(B, pC_star.pos_from(pB_star).diff(t, B))
    pC_star.v1pt_theory(pB_star, E, B)
    pD_star.set_vel(B, pC_star.vel(B))
    pD_star.v1pt_theory(pB_star, E, B)
    pB_hat = pC_star.locatenew("B^", 0)
    pB_hat.v2pt_theory(pP, E, B)

    IA = me.inertia(A, A1, A2, A3)
    IB = me.inertia(B, B1, B2, B3)
    IC = me.inertia(B, C1, C2, C3)
    ID = me.inertia(B, D11, D22, D33, D12, D23, D31)
    rbA = me.RigidBody("rbA", pA_star, A, mA, (IA, pA_star))
    rbB = me.RigidBody("rbB", pB_star, B, mB, (IB, pB_star))
    rbC = me.RigidBody("rbC", pC_star, C, mC, (IC, pC_star))
    rbD = me.RigidBody("rbD", pD_star, D, mD, (ID, pD_star))

    kde = [
        u1 - me.dot(A.ang_vel_in(E), A.x),
        u2 - me.dot(B.ang_vel_in(A), B.y),
        u3 - me.dot(pC_star.vel(B), B.z),
    ]
    T_EA = _define_forces("T", E, A, A)
    K_EA = _define_forces("K", E, A, A)
    T_AB = _define_forces("T", A, B, B)
    T_BC = _define_forces("T", B, C, B)
    K_BC = _define_forces("K", B, C, B)
    forces = [
        (pO, K_EA),
        (pC_star, K_BC),
        (pB_hat, -K_BC),
        (pA_star, -mA * g * E.x),
        (pB_star, -mB * g * E.x),
        (pC_star, -mC * g * E.x),
        (pD_star, -mD * g * E.x),
    ]
    torques = [(A, T_EA - T_AB), (B, T_AB - T_BC), (C, T_BC)]

    system = me.System(E, pO)
    system.add_coordinates(q0, q1, q2)
    system.add_speeds(u1, u2, u3)
    system.add_kdes(*kde)
    system.add_bodies(rbA, rbB, rbC, rbD)
    system.add_loads(*[me.Force(*f) for f in forces])
    system.add_loads(*[me.Torque(*f) for f in torques])
    values = {
        LA: 0.4, LB: 0.5, LP: 0.9, p1: 0.1, p2: -0.2, p3: 0.15,
        A1: 0.3, A2: 0.35, A3: 0.2, B1: 0.5, B2: 0.45, B3: 0.25,
        C1: 0.12, C2: 0.1, C3: 0.08, D11: 0.2, D22: 0.25, D33: 0.3,
        D12: 0.02, D23: -0.03, D31: 0.01, g: 9.81,
        mA: 2.0, mB: 1.5, mC: 0.8, mD: 0.6,
    }  # fmt: skip
    loads = [
        s
        for vec in (K_EA, T_EA, T_AB, T_BC, K_BC)
        for s in sm.sympify(vec.to_matrix(vec.args[0][1])).free_symbols
    ]
    values |= {s: 0.3 + 0.1 * i for i, s in enumerate(sorted(loads, key=str))}
    return MechanicalSystem(
        name="kane_levinson_ex_11_7",
        system=system,
        parameters=values,
        initial_state={q0: 0.3, q1: -0.4, q2: 0.2, u1: 0.5, u2: -0.3, u3: 0.2},
        random_spread=1.0,
    )


def kane_levinson_ex_11_7_asserted():
    """The book's X and Y (``X u' = Y``) as PyDy's script asserts them, in
    (q1, q2, u1, u2, u3) and the declaration's constants."""
    q0, q1, q2 = me.dynamicsymbols("q0:3")
    u1, u2, u3 = me.dynamicsymbols("u1:4")
    LA, LB, LP = sm.symbols("LA LB LP")
    p1, p2, p3 = sm.symbols("p1:4")
    A1, A2, A3 = sm.symbols("A1:4")
    B1, B2, B3 = sm.symbols("B1:4")
    C1, C2, C3 = sm.symbols("C1:4")
    D11, D22, D33, D12, D23, D31 = sm.symbols("D11 D22 D33 D12 D23 D31")
    g, mA, mB, mC, mD = sm.symbols("g mA mB mC mD")
    T1_E_A = sm.Symbol("T_E/A_1")
    T2_A_B = sm.Symbol("T_A/B_2")
    K3_B_C = sm.Symbol("K_B/C_3")

    Z1 = u1 * cos(q1)
    Z2 = u1 * sin(q1)
    Z3 = -Z2 * u2
    Z4 = Z1 * u2
    Z5 = -LA * u1
    Z6 = -(LP + LB * cos(q1))
    Z7 = u2 * LB
    Z8 = Z6 * u1
    Z9 = LB + q2
    Z10 = Z6 - q2 * cos(q1)
    Z11 = u2 * Z9
    Z12 = Z10 * u1
    Z13 = -sin(q1) * p2
    Z14 = Z9 + p3
    Z15 = Z10 + sin(q1) * p1 - cos(q1) * p3
    Z16 = cos(q1) * p2
    Z17 = Z13 * u1 + Z14 * u2
    Z18 = Z15 * u1
    Z19 = Z16 * u1 - u2 * p1 + u3
    Z20 = u1 * Z5  # noqa: F841 (the script's list, kept whole)
    Z21 = LB * sin(q1) * u2
    Z22 = -Z2 * Z8
    Z23 = Z21 * u1 + Z2 * Z7
    Z24 = Z1 * Z8 - u2 * Z7  # noqa: F841
    Z25 = Z21 - u3 * cos(q1) + q2 * sin(q1) * u2
    Z26 = 2 * u2 * u3 - Z2 * Z12
    Z27 = Z25 * u1 + Z2 * Z11 - Z1 * u3
    Z28 = Z1 * Z12 - u2 * Z11
    Z29 = -Z16 * u2
    Z30 = Z25 + u2 * (cos(q1) * p1 + sin(q1) * p3)
    Z31 = Z13 * u2
    Z32 = Z29 * u1 + u2 * (u3 + Z19) - Z2 * Z18
    Z33 = Z30 * u1 + Z2 * Z17 - Z1 * Z19
    Z34 = Z31 * u1 + Z1 * Z18 - u2 * Z17

    D13 = D31
    D21 = D12
    k1 = B2 - B3
    k2 = B3 - B1
    k3 = B1 - B2
    k4 = C2 - C3
    k5 = C3 - C1
    k6 = C1 - C2
    k7 = D33 - D22
    k8 = D11 - D33
    k9 = D22 - D11
    k10 = B1 + k1
    k11 = B3 - k3
    k12 = C1 + k4
    k13 = C3 - k6
    k14 = D11 - k7
    k15 = D31 + D13
    k16 = D33 + k9

    Z35 = cos(q1) * B1
    Z36 = Z3 * k10
    Z37 = Z2 * Z1
    Z38 = -Z37 * k2
    Z39 = sin(q1) * B3
    Z40 = Z4 * k11
    Z41 = cos(q1) * C1
    Z42 = Z3 * k12
    Z43 = -Z37 * k5
    Z44 = sin(q1) * C3
    Z45 = Z4 * k13
    Z46 = Z1 * Z1
    Z47 = u2**2
    Z48 = Z2 * Z2
    Z49 = D11 * cos(q1) + D13 * sin(q1)
    Z50 = k14 * Z3 + k15 * Z4 - D12 * Z37 + D23 * (Z47 - Z48)
    Z51 = D23 * sin(q1) + D21 * cos(q1)
    Z52 = D31 * (Z48 - Z46) + k8 * Z37
    Z53 = D33 * sin(q1) + D31 * cos(q1)
    Z54 = k15 * Z3 + k16 * Z4 + D23 * Z37 + D12 * (Z46 - Z47)

    X11 = -(
        A1
        + cos(q1) * (Z35 + Z41 + Z49)
        + sin(q1) * (Z39 + Z44 + Z53)
        + mA * LA**2
        + mB * Z6**2
        + mC * Z10**2
        + mD * (Z13**2 + Z15**2 + Z16**2)
    )
    X12 = -(Z51 + mD * (Z13 * Z14 - Z16 * p1))
    X13 = -mD * Z16
    X22 = -(B2 + C2 + D22 + mB * LB**2 + mC * Z9**2 + mD * (Z14**2 + p1**2))
    X23 = mD * p1
    X33 = -(mC + mD)
    Y1 = (
        cos(q1) * (Z36 + Z42 + Z50)
        + sin(q1) * (Z40 + Z45 + Z54)
        + mB * Z6 * Z23
        + mC * Z10 * Z27
        + mD * (Z13 * Z32 + Z15 * Z33 + Z16 * Z34)
        - T1_E_A
    )
    Y2 = (
        Z38
        + Z43
        + Z52
        + mB * LB * Z22
        + mC * Z9 * Z26
        + mD * (Z14 * Z32 - p1 * Z34)
        - T2_A_B
        + g * ((mB * LB + mC * Z9 + mD * Z14) * cos(q1) - mD * p1 * sin(q1))
    )
    Y3 = mC * Z28 + mD * Z34 - K3_B_C + g * (mC + mD) * sin(q1)
    X = sm.Matrix([[X11, X12, X13], [X12, X22, X23], [X13, X23, X33]])
    return X, sm.Matrix([Y1, Y2, Y3])
