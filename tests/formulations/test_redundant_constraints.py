"""Redundant velocity constraints, reduced by rank with a warning: sympy's
linearized rolling disc (test_linearize::test_linearize_rolling_disc_kane),
all three components of the contact point's velocity as constraints beside
the configuration constraint of the centre's height, checked against the A
matrix that test asserts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.formulations.base import UnsupportedSystemError
from eomcompare.numeric.linearize import linearize
from eomcompare.systems import MechanicalSystem
from eomcompare.systems.redundancy import RedundantConstraintWarning

t = me.dynamicsymbols._t


def linearized_rolling_disc():
    """The declaration of test_linearize_rolling_disc_kane, as a System."""
    r, m, g = sm.symbols("r m g")
    q1, q2, q3, q4, q5, q6 = q = me.dynamicsymbols("q1:7")
    qd = [qi.diff(t) for qi in q]
    u1, u2, u3, u4, u5, u6 = me.dynamicsymbols("u1:7")
    N = me.ReferenceFrame("N")
    NO = me.Point("NO")
    NO.set_vel(N, 0)
    A = N.orientnew("A", "Axis", [q1, N.z])
    B = A.orientnew("B", "Axis", [q2, A.x])
    C = B.orientnew("C", "Axis", [q3, B.y])
    CO = NO.locatenew("CO", q4 * N.x + q5 * N.y + q6 * N.z)
    w_c_n_qd = C.ang_vel_in(N)
    w_b_n_qd = B.ang_vel_in(N)
    C.set_ang_vel(N, u1 * B.x + u2 * B.y + u3 * B.z)
    v_co_n_qd = CO.pos_from(NO).dt(N)
    CO.set_vel(N, u4 * C.x + u5 * C.y + u6 * C.z)
    P = CO.locatenew("P", r * B.z)
    P.v2pt_theory(CO, N, C)
    f_c = sm.Matrix([q6 - me.dot(CO.pos_from(P), N.z)])
    f_v = sm.Matrix([me.dot(P.vel(N), uv) for uv in C])
    kindiffs = sm.Matrix(
        [me.dot(w_c_n_qd - C.ang_vel_in(N), uv) for uv in B]
        + [me.dot(v_co_n_qd - CO.vel(N), uv) for uv in N]
    )
    qdots = sm.solve(kindiffs, qd)
    B.set_ang_vel(N, w_b_n_qd.subs(qdots))
    I = (m * r**2) / 4
    J = (m * r**2) / 2
    disc = me.RigidBody("Disc", CO, C, m, (me.inertia(C, I, J, I), CO))
    system = me.System(N, NO)
    system.add_coordinates(q1, q2, q3, q4, q5)
    system.add_coordinates(q6, independent=False)
    system.add_speeds(u1, u2, u3)
    system.add_speeds(u4, u5, u6, independent=False)
    system.add_kdes(*kindiffs)
    system.add_holonomic_constraints(*f_c)
    system.add_nonholonomic_constraints(*f_v)
    system.add_bodies(disc)
    system.add_loads(me.Force(CO, m * g * A.z))
    return MechanicalSystem(
        name="linearized_rolling_disc",
        system=system,
        parameters={r: 1.0, m: 1.0, g: 1.0},
        initial_state={q2: 0.1, u2: 1.0},
        random_spread={q2: 0.3, q1: 1.0, q3: 1.0, q4: 1.0, q5: 1.0},
        speed_scale=1.0,
    )


@pytest.fixture(scope="module")
def disc():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ms = linearized_rolling_disc()
        ms.kinematics  # noqa: B018 (building it reduces the rows)
    return ms, [w for w in caught if issubclass(w.category, RedundantConstraintWarning)]


def test_the_derivative_of_the_height_constraint_is_dropped(disc):
    ms, caught = disc
    assert len(caught) == 1
    msg = str(caught[0].message)
    assert "linearized_rolling_disc" in msg
    assert "derivative of holonomic constraint 0" in msg
    assert ms.dropped_velocity_constraints[0].startswith(
        "derivative of holonomic constraint 0"
    )
    assert len(ms.velocity_constraints) == 3
    # The kept rows are the three contact velocity components.
    assert list(ms.velocity_constraints) == list(ms.system.nonholonomic_constraints)


def _sympy_A(q1, q3d):
    # test_linearize_rolling_disc_kane's A_sol (upright, q1' = 0,
    # m = r = g = 1), states (q1..q5, u1, u2, u3).
    s, c = np.sin(q1), np.cos(q1)
    return np.array(
        [
            [0, 0, 0, 0, 0, 0, 0, 1],
            [0, 0, 0, 0, 0, 1, 0, 0],
            [0, 0, 0, 0, 0, 0, 1, 0],
            [s * q3d, 0, 0, 0, 0, -s, -c, 0],
            [-c * q3d, 0, 0, 0, 0, c, -s, 0],
            [0, 4 / 5, 0, 0, 0, 0, 0, 6 * q3d / 5],
            [0, 0, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, -2 * q3d, 0, 0],
        ],
        dtype=float,
    )


@pytest.mark.parametrize("name", ["kane", "gibbs_appell", "sympy_kane", "lagrange"])
def test_linearized_disc_matches_sympys_asserted_A(disc, name):
    ms = disc[0]
    eom = get_formulation(name, count_ops=False).derive(ms)
    for q1, q3, q4, q5, q3d in [
        (0.4, 0.2, 0.1, -0.3, 0.7),
        (-1.0, 1.3, 0.0, 0.5, 1 / np.sqrt(3)),
    ]:
        q = np.array([q1, 0.0, q3, q4, q5, -1.0])
        qd = np.array([0.0, 0.0, q3d, -q3d * np.cos(q1), -q3d * np.sin(q1), 0.0])
        lin = linearize(eom, (0.0, q, qd))
        assert lin.states == ("q1", "q2", "q3", "q4", "q5", "u1", "u2", "u3")
        np.testing.assert_allclose(lin.A, _sympy_A(q1, q3d), rtol=1e-7, atol=1e-7)
    # At the critical speed every eigenvalue is zero (sympy's test).
    assert np.abs(lin.eigenvalues()).max() < 1e-3


@pytest.mark.parametrize("name", ["modified_lagrange", "sympy_lagrange"])
def test_formulations_needing_independent_rows_say_which_were_dropped(disc, name):
    with pytest.raises(
        UnsupportedSystemError,
        match=r"redundant velocity constraints \(derivative "
        r"of holonomic constraint 0",
    ):
        get_formulation(name, count_ops=False).derive(disc[0])


def test_lagrange_multipliers_of_the_kept_rows_are_the_contact_force(disc):
    """Lagrange forms its rows from the kept ones, dot(v_P, C.x|y|z) with P
    the disc's contact point, so its multipliers are the contact force's
    components along C: Newton gives m a_CO - m g A.z, with a_CO the second
    derivative of (q4, q5, q6) in N (m = g = 1)."""
    ms = disc[0]
    model = get_formulation("lagrange", count_ops=False).derive(ms).numeric()
    q1, q2, q3 = ms.coordinates[:3]
    N = ms.frame
    A = N.orientnew("A_", "Axis", [q1, N.z])
    B = A.orientnew("B_", "Axis", [q2, A.x])
    C = B.orientnew("C_", "Axis", [q3, B.y])
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        qdd = model.coordinate_accelerations(t0, q, qd)
        sub = dict(zip(ms.coordinates, q))
        a = qdd[3] * N.x + qdd[4] * N.y + qdd[5] * N.z
        force = a - A.z
        expected = [float(force.dot(e).xreplace(sub)) for e in (C.x, C.y, C.z)]
        lam = model.multipliers(t0, q, qd)
        np.testing.assert_allclose(lam, expected, rtol=1e-8, atol=1e-9)
