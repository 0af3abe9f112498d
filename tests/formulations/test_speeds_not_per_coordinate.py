"""Speeds not one per coordinate, as sympy writes them: a quaternion body
(4 coordinates, 3 body rates, q' = f(q, u)) and test_kane2's vehicle
(test_sub_qdot: 3 coordinates, 2 speeds and an auxiliary one).  Kane's,
Gibbs–Appell's and sympy's KanesMethod accept them; the Lagrange family,
which forms the kinetic energy in the coordinate rates, refuses them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.formulations.base import UnsupportedSystemError
from eomcompare.systems import MechanicalSystem

t = me.dynamicsymbols._t
SPEED_FORMS = ["kane", "gibbs_appell", "sympy_kane"]
LAGRANGE_FAMILY = ["lagrange", "modified_lagrange", "sympy_lagrange"]


def quaternion_top():
    """A heavy top on a fixed point, oriented by a unit quaternion
    (q0 dependent through q0^2 + q1^2 + q2^2 + q3^2 = 1), with body rates
    as speeds and the quaternion kinematics as kinematic equations."""
    q0, q1, q2, q3 = q = me.dynamicsymbols("q0:4")
    u1, u2, u3 = u = me.dynamicsymbols("u1:4")
    m, g, h, I1, I2, I3 = sm.symbols("m g h I1 I2 I3")
    N = me.ReferenceFrame("N")
    B = me.ReferenceFrame("B")
    B.orient_quaternion(N, q)
    B.set_ang_vel(N, u1 * B.x + u2 * B.y + u3 * B.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    G = O.locatenew("G", h * B.z)
    G.v2pt_theory(O, N, B)
    # q' = 1/2 q (x) (0, w) in body rates.
    kdes = [
        q0.diff() + (q1 * u1 + q2 * u2 + q3 * u3) / 2,
        q1.diff() - (q0 * u1 - q3 * u2 + q2 * u3) / 2,
        q2.diff() - (q3 * u1 + q0 * u2 - q1 * u3) / 2,
        q3.diff() - (-q2 * u1 + q1 * u2 + q0 * u3) / 2,
    ]
    top = me.RigidBody("top", G, B, m, (me.inertia(B, I1, I2, I3), G))
    system = me.System(N, O)
    system.add_coordinates(q1, q2, q3)
    system.add_coordinates(q0, independent=False)
    system.add_speeds(*u)
    system.add_kdes(*kdes)
    system.add_holonomic_constraints(q0**2 + q1**2 + q2**2 + q3**2 - 1)
    system.add_bodies(top)
    system.add_loads(me.Force(G, -m * g * N.z))
    values = {m: 1.2, g: 9.81, h: 0.4, I1: 0.3, I2: 0.25, I3: 0.1}
    with warnings.catch_warnings():
        # The norm's derivative vanishes identically along q' = f(q, u):
        # a redundant row, dropped with a warning.
        warnings.simplefilter("ignore")
        ms = MechanicalSystem(
            name="quaternion_top",
            system=system,
            parameters=values,
            initial_state={q0: 1.0, q1: 0.0, q2: 0.0, q3: 0.0, u3: 5.0},
            random_spread=0.4,
            speed_scale=2.0,
        )
    km = me.KanesMethod(
        N,
        q_ind=[q1, q2, q3],
        u_ind=list(u),
        kd_eqs=kdes,
        q_dependent=[q0],
        configuration_constraints=[q0**2 + q1**2 + q2**2 + q3**2 - 1],
    )
    km.kanes_equations([top], [(G, -m * g * N.z)])
    return ms, km, values


def _sympy_speed_rates(km, values, ms, q, u):
    sub = dict(zip(ms.coordinates, q)) | dict(zip(ms.speeds, u)) | values
    M = np.array(km.mass_matrix.xreplace(sub).evalf(), dtype=float)
    f = np.array(km.forcing.xreplace(sub).evalf(), dtype=float).ravel()
    return np.linalg.solve(M, f)


@pytest.fixture(scope="module")
def top():
    return quaternion_top()


def test_quaternion_states_are_unit_and_rates_follow_the_kinematics(top):
    ms, _, _ = top
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        assert np.dot(q, q) == pytest.approx(1.0, abs=1e-12)
        u = ms.states.speeds_from_rates(t0, q, qd)
        np.testing.assert_allclose(
            ms.states.rates_from_speeds(t0, q, u), qd, rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize("name", SPEED_FORMS)
def test_quaternion_top_matches_sympy_kane(top, name):
    ms, km, values = top
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        x = model.state_from(q, qd, t0)
        u = x[len(q) :]
        ud = model.rhs(t0, x)[len(q) :]
        np.testing.assert_allclose(
            ud, _sympy_speed_rates(km, values, ms, q, u), rtol=1e-10, atol=1e-10
        )
        # And Euler's equations with the gravity torque, independently.
        I = np.array([values[s] for s in sm.symbols("I1 I2 I3")])
        m, g, h = (values[s] for s in sm.symbols("m g h"))
        q0, q1, q2, q3 = q[3], q[0], q[1], q[2]
        # N.z in B from the quaternion's direction cosine matrix.
        nz = np.array(
            [
                2 * (q1 * q3 - q0 * q2),
                2 * (q2 * q3 + q0 * q1),
                q0**2 - q1**2 - q2**2 + q3**2,
            ]
        )
        torque = np.cross([0, 0, h], -m * g * nz)
        Io = I + m * h**2 * np.array([1, 1, 0])
        euler = (torque - np.cross(u, Io * u)) / Io
        np.testing.assert_allclose(ud, euler, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", LAGRANGE_FAMILY)
def test_quaternion_top_is_refused_by_the_lagrange_family(top, name):
    with pytest.raises(
        UnsupportedSystemError, match="3 speeds for 4 coordinates.*degenerate"
    ):
        get_formulation(name, count_ops=False).derive(top[0])


def kane2_vehicle():
    """test_kane2::test_sub_qdot's vehicle as written there (Kane 1985,
    exercises 8.12 and 8.17): 3 coordinates, 2 speeds, the auxiliary u3,
    rolling wheels in the kinematic equations, velocities from the contact
    point D up."""
    q1, q2, q3 = me.dynamicsymbols("q1:4")
    q1d = q1.diff()
    u1, u2, u3 = me.dynamicsymbols("u1:4")
    R, M, g, e, f, theta = sm.symbols("R, M, g, e, f, theta")
    a, b, mA, mB, IA, J, K = sm.symbols("a b mA mB IA J K")
    IA22, IA23, IA33 = sm.symbols("IA22 IA23 IA33")
    Q1, Q2, Q3 = sm.symbols("Q1 Q2 Q3")
    F = me.ReferenceFrame("F")
    P = F.orientnew("P", "axis", [-theta, F.y])
    A = P.orientnew("A", "axis", [q1, P.x])
    A.set_ang_vel(F, u1 * A.x + u3 * A.z)
    B = A.orientnew("B", "axis", [q2, A.z])
    C = A.orientnew("C", "axis", [q3, A.z])
    pD = me.Point("D")
    pD.set_vel(A, 0)
    pD.set_vel(F, u2 * A.y)
    pS_star = pD.locatenew("S*", e * A.y)
    pQ = pD.locatenew("Q", f * A.y - R * A.x)
    pA_star = pD.locatenew("A*", a * A.y)
    pB_star = pD.locatenew("B*", b * A.z)
    pC_star = pD.locatenew("C*", -b * A.z)
    for p in [pS_star, pQ, pA_star, pB_star, pC_star]:
        p.v2pt_theory(pD, F, A)
    pB_hat = pB_star.locatenew("B^", -R * A.x)
    pC_hat = pC_star.locatenew("C^", -R * A.x)
    pB_hat.v2pt_theory(pB_star, F, B)
    pC_hat.v2pt_theory(pC_star, F, C)
    kde = [me.dot(p.vel(F), A.y) for p in [pB_hat, pC_hat]]
    kde += [u1 - q1d]
    rbA = me.RigidBody(
        "rbA", pA_star, A, mA, (me.inertia(A, IA, IA22, IA33, 0, IA23, 0), pA_star)
    )
    rbB = me.RigidBody("rbB", pB_star, B, mB, (me.inertia(B, K, K, J), pB_star))
    rbC = me.RigidBody("rbC", pC_star, C, mB, (me.inertia(C, K, K, J), pC_star))
    system = me.System(F)
    system.add_coordinates(q1, q2, q3)
    system.add_speeds(u1, u2)
    system.add_auxiliary_speeds(u3)
    system.add_kdes(*kde)
    system.add_bodies(rbA, rbB, rbC)
    system.add_loads(
        me.Force(pS_star, -M * g * F.x), me.Force(pQ, Q1 * A.x + Q2 * A.y + Q3 * A.z)
    )
    values = {
        R: 0.3,
        M: 5.0,
        g: 9.81,
        e: 0.4,
        f: 1.1,
        theta: 0.2,
        a: 0.5,
        b: 0.35,
        mA: 3.0,
        mB: 0.8,
        IA: 0.6,
        J: 0.05,
        K: 0.03,
        IA22: 0.4,
        IA23: 0.01,
        IA33: 0.5,
        Q1: 0.7,
        Q2: -1.1,
        Q3: 0.4,
    }
    ms = MechanicalSystem(
        name="kane2_vehicle",
        system=system,
        parameters=values,
        initial_state={u2: 1.0},
        random_spread=1.0,
        speed_scale=2.0,
    )
    # test_sub_qdot's asserted Fr and Fr* (the third row is the auxiliary
    # speed's).
    fr = sm.Matrix(
        [
            f * Q3 + M * g * e * sm.sin(theta) * sm.cos(q1),
            Q2 + M * g * sm.sin(theta) * sm.sin(q1),
            e * M * g * sm.cos(theta) - Q1 * f - Q2 * R,
        ]
    )
    frs = sm.Matrix(
        [
            -(IA + 2 * J * b**2 / R**2 + 2 * K + mA * a**2 + 2 * mB * b**2) * u1.diff(t)
            - mA * a * u1 * u2,
            -(mA + 2 * mB + 2 * J / R**2) * u2.diff(t) + mA * a * u1**2,
            0,
        ]
    )
    return ms, (fr + frs).xreplace(values), (q1, u1, u2)


@pytest.fixture(scope="module")
def vehicle():
    return kane2_vehicle()


@pytest.mark.parametrize("name", SPEED_FORMS)
def test_kane2_vehicle_matches_sympys_asserted_equations(vehicle, name):
    ms, eqs, (q1, u1, u2) = vehicle
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        x = model.state_from(q, qd, t0)
        u = x[len(q) :]
        ud = model.rhs(t0, x)[len(q) :]
        sub = {q1: q[0], u1: u[0], u2: u[1], u1.diff(t): ud[0], u2.diff(t): ud[1]}
        res = [float(e.xreplace(sub)) for e in eqs[:2]]
        np.testing.assert_allclose(res, 0, atol=1e-10)
        # The auxiliary speed's equation: the generalized constraint force
        # is minus sympy's Fr_3 + Fr*_3.
        got = model.constraint_forces(t0, q, qd)
        assert got["u3"] == pytest.approx(
            -float(eqs[2].xreplace(sub)), rel=1e-10, abs=1e-10
        )


@pytest.mark.parametrize("name", LAGRANGE_FAMILY)
def test_kane2_vehicle_is_refused_by_the_lagrange_family(vehicle, name):
    with pytest.raises(UnsupportedSystemError, match="2 speeds for 3 coordinates"):
        get_formulation(name, count_ops=False).derive(vehicle[0])
