"""Auxiliary speeds as sympy declares them: constraint forces from every
formulation that can recover them, a refusal from the others.

Checked against sympy's own KanesMethod with ``u_auxiliary`` (the
declaration of sympy's test_kane2::test_aux_dep, whose auxiliary equations
that test asserts equal to a manual derivation) and against Newton's law for
the disc's mass centre, ``F_contact = m a_O - (gravity)``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.formulations.base import UnsupportedSystemError
from eomcompare.systems import MechanicalSystem
from eomcompare.systems.redundancy import RedundantConstraintWarning

t = me.dynamicsymbols._t


def aux_dep_disc():
    """test_kane2::test_aux_dep's rolling disc, as a System.

    Returns the MechanicalSystem and the pieces for the oracles: sympy's
    KanesMethod built exactly as that test builds it, and the disc's
    mass-centre velocity, mass and gravity.
    """
    r, m, g, I, J = sm.symbols("r m g I J")
    Fx, Fy, Fz = sm.symbols("Fx Fy Fz")
    q = me.dynamicsymbols("q:4")
    qd = [qi.diff(t) for qi in q]
    u = me.dynamicsymbols("u:6")
    ua = me.dynamicsymbols("ua:3")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q[0], N.z])
    B = A.orientnew("B", "Axis", [q[1], A.x])
    C = B.orientnew("C", "Axis", [q[2], B.y])
    C.set_ang_vel(N, u[0] * B.x + u[1] * B.y + u[2] * B.z)
    P = me.Point("P")
    P.set_vel(N, ua[0] * A.x + ua[1] * A.y + ua[2] * A.z)
    O = P.locatenew("O", q[3] * A.z + r * sm.sin(q[1]) * A.y)
    O.set_vel(N, u[3] * A.x + u[4] * A.y + u[5] * A.z)
    w_c_n_qd = qd[0] * A.z + qd[1] * B.x + qd[2] * B.y
    v_o_n_qd = O.pos_from(P).diff(t, A) + A.ang_vel_in(N).cross(O.pos_from(P))
    kindiffs = sm.Matrix(
        [me.dot(w_c_n_qd - C.ang_vel_in(N), uv) for uv in B]
        + [me.dot(v_o_n_qd - O.vel(N), A.z)]
    )
    f_c = sm.Matrix([me.dot(-r * B.z, A.z) - q[3]])
    f_v = sm.Matrix(
        [
            me.dot(
                O.vel(N) - (P.vel(N) + C.ang_vel_in(N).cross(O.pos_from(P))), ai
            ).expand()
            for ai in A
        ]
    )
    I_C_O = me.inertia(B, I, J, I)
    disc = me.RigidBody("disc", O, C, m, (I_C_O, O))
    loads = [me.Force(O, m * g * A.z), me.Force(P, Fx * A.x + Fy * A.y + Fz * A.z)]

    system = me.System(N)
    system.add_coordinates(*q[:3])
    system.add_coordinates(q[3], independent=False)
    system.add_speeds(*u[:3])
    system.add_speeds(*u[3:], independent=False)
    system.add_auxiliary_speeds(*ua)
    system.add_kdes(*kindiffs)
    system.add_holonomic_constraints(*f_c)
    system.add_nonholonomic_constraints(*f_v)
    system.add_bodies(disc)
    system.add_loads(*loads)
    ms = MechanicalSystem(
        name="aux_dep_disc",
        system=system,
        parameters={r: 0.3, m: 2.0, g: -9.81, I: 0.05, J: 0.09},
        initial_state={
            q[0]: 0.1,
            q[1]: 0.3,
            q[2]: 0.0,
            u[0]: 0.4,
            u[1]: 5.0,
            u[2]: -0.7,
        },
        random_spread={q[0]: 1.0, q[1]: 0.4, q[2]: 1.0},
        speed_scale=2.0,
    )

    # sympy's KanesMethod exactly as in test_aux_dep.
    km = me.KanesMethod(
        N,
        q_ind=q[:3],
        u_ind=u[:3],
        kd_eqs=kindiffs,
        q_dependent=q[3:],
        configuration_constraints=f_c,
        u_dependent=u[3:],
        velocity_constraints=f_v,
        u_auxiliary=ua,
    )
    km.kanes_equations([disc], [(O, m * g * A.z), (P, Fx * A.x + Fy * A.y + Fz * A.z)])
    return ms, dict(km=km, q=q, u=u, ua=ua, O=O, A=A, N=N, m=m, g=g, F=(Fx, Fy, Fz))


def _sympy_kane_oracle(ms, parts, t0, q, qd):
    """Fx, Fy, Fz from sympy's KanesMethod auxiliary equations, and from
    Newton's law for the mass centre, at a state."""
    km, N, A, O = parts["km"], parts["N"], parts["A"], parts["O"]
    u_vals = ms.states.speeds_from_rates(t0, q, qd)
    num = {k: v for k, v in ms.parameters.items() if k not in parts["F"]}
    sub = dict(zip(parts["q"], q)) | dict(zip(parts["u"], u_vals)) | num
    sub |= {x: 0 for ua in parts["ua"] for x in (ua.diff(t), ua)}
    M = np.array(km.mass_matrix.xreplace(sub).evalf(), dtype=float)
    f = np.array(km.forcing.xreplace(sub).evalf(), dtype=float).ravel()
    ud = np.linalg.solve(M, f)
    sub_ud = {ui.diff(t): v for ui, v in zip(parts["u"], ud)}
    aux = sm.Matrix(km.auxiliary_eqs).xreplace(sub_ud).xreplace(sub)
    F = parts["F"]
    sol = sm.solve(list(aux), F, dict=True)[0]
    from_kane = np.array([float(sol[x]) for x in F])
    a_O = (
        O.vel(N)
        .dt(N)
        .xreplace(sub_ud)
        .xreplace({qi.diff(t): v for qi, v in zip(parts["q"], qd)})
        .xreplace(sub)
    )
    m, g = num[parts["m"]], num[parts["g"]]
    newton = np.array(
        [float((m * a_O - m * g * A.z).dot(ai).xreplace(sub)) for ai in A]
    )
    return from_kane, newton


@pytest.fixture(scope="module")
def aux_disc():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ms, parts = aux_dep_disc()
    return ms, parts, caught


def test_redundant_contact_row_is_dropped_with_a_warning(aux_disc):
    ms, _, caught = aux_disc
    msgs = [
        str(w.message)
        for w in caught
        if issubclass(w.category, RedundantConstraintWarning)
    ]
    assert len(msgs) == 1
    assert "derivative of holonomic constraint 0" in msgs[0]
    assert len(ms.velocity_constraints) == 3
    # The three contact rows, each carrying an auxiliary speed, are kept.
    assert all(sm.sympify(r).has(*ms.u_aux) for r in ms.velocity_constraints)
    assert ms.reaction_unknowns == sm.symbols("Fx Fy Fz")


@pytest.fixture(scope="module")
def aux_disc_oracle(aux_disc):
    """The references at the states the tests read, ``[(t0, q, qd,
    from_kane, newton)]``: the same for every formulation, computed once."""
    ms, parts, _ = aux_disc
    out = []
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        out.append((t0, q, qd, *_sympy_kane_oracle(ms, parts, t0, q, qd)))
    return out


@pytest.mark.parametrize("name", ["kane", "gibbs_appell", "sympy_kane"])
def test_aux_dep_contact_forces_match_sympy_and_newton(aux_disc, aux_disc_oracle, name):
    ms, parts, _ = aux_disc
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    for t0, q, qd, from_kane, newton in aux_disc_oracle:
        got = model.constraint_forces(t0, q, qd)
        assert list(got) == ["Fx", "Fy", "Fz"]
        vals = np.array(list(got.values()))
        np.testing.assert_allclose(vals, from_kane, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(vals, newton, rtol=1e-9, atol=1e-9)
        # Not the static weight alone: the disc accelerates.
        assert abs(vals[0]) + abs(vals[1]) > 1e-3


@pytest.mark.parametrize("name", ["lagrange", "modified_lagrange", "sympy_lagrange"])
def test_aux_dep_is_refused_by_the_lagrange_family(aux_disc, name):
    ms, _, _ = aux_disc
    with pytest.raises(UnsupportedSystemError, match="6 speeds for 4 coordinates"):
        get_formulation(name, count_ops=False).derive(ms)


def rolling_disc_with_contact_forces(reactions=sm.symbols):
    """The catalogue's rolling disc (contact point located from the origin
    by x, y) with the rolling relaxed by two auxiliary speeds and the
    friction force written with unknown constants, as test_aux_dep does
    (``reactions=me.dynamicsymbols``: with functions of time, as PyDy's
    rattleback writes its contact forces)."""
    q1, q2, q3, x, y = me.dynamicsymbols("q1 q2 q3 x y")
    u1, u2, u3, u4, u5 = me.dynamicsymbols("u1:6")
    ua1, ua2 = me.dynamicsymbols("ua1 ua2")
    m, r, g = sm.symbols("m r g")
    Fx, Fy = reactions("Fx Fy")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    Y = N.orientnew("Y", "Axis", (q1, N.z))
    L = Y.orientnew("L", "Axis", (q2, Y.x))
    R = L.orientnew("R", "Axis", (q3, L.y))
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    kdes = [
        q1.diff() - u3 / sm.cos(q2),
        q2.diff() - u1,
        q3.diff() - u2 + u3 * sm.tan(q2),
        x.diff() - u4,
        y.diff() - u5,
    ]
    w_L = u1 * L.x + u3 * sm.tan(q2) * L.y + u3 * L.z
    C = O.locatenew("C", x * N.x + y * N.y)
    C.set_vel(N, u4 * N.x + u5 * N.y)
    D = C.locatenew("D", r * L.z)
    D.set_vel(N, u4 * N.x + u5 * N.y + w_L.cross(r * L.z))
    P = me.Point("P")  # the contact, moved by the aux speeds only
    P.set_vel(N, ua1 * Y.x + ua2 * Y.y)
    v_slip = D.vel(N) + R.ang_vel_in(N).cross(-r * L.z) - P.vel(N)
    nonhol = [v_slip.dot(Y.x), v_slip.dot(Y.y)]
    disc = me.RigidBody(
        "disc", D, R, m, (me.inertia(R, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4), D)
    )
    system = me.System(N, O)
    system.add_coordinates(q1, q2, q3, x, y)
    system.add_speeds(u1, u2, u3)
    system.add_speeds(u4, u5, independent=False)
    system.add_auxiliary_speeds(ua1, ua2)
    system.add_kdes(*kdes)
    system.add_nonholonomic_constraints(*nonhol)
    system.add_bodies(disc)
    # The ground's force on the disc, at the contact (as test_aux_dep).
    system.add_loads(me.Force(D, -m * g * N.z), me.Force(P, Fx * Y.x + Fy * Y.y))
    ms = MechanicalSystem(
        name="disc_contact_forces",
        system=system,
        parameters={m: 1.0, r: 0.5, g: 9.81},
        initial_state={q2: 0.2, u2: 6.0, u3: 1.0},
        random_spread={q1: 3.0, q2: 0.6, q3: 3.0, x: 1.0, y: 1.0},
        speed_scale=3.0,
    )
    return ms, dict(D=D, N=N, Y=Y, m=m, q=(q1, q2, q3, x, y), u=(u1, u2, u3, u4, u5))


@pytest.fixture(scope="module")
def contact_disc():
    return rolling_disc_with_contact_forces()


@pytest.fixture(scope="module")
def contact_disc_by_kane(contact_disc):
    """kane's numeric model of the disc, the accelerations the tests read."""
    return get_formulation("kane", count_ops=False).derive(contact_disc[0]).numeric()


def _newton_friction(ms, parts, reference, t0, q, qd):
    """m a_D.Y_x, m a_D.Y_y: the ground's horizontal force on the disc by
    Newton's law for its centre (gravity is vertical), a_D from sympy's
    vector calculus with the accelerations of ``reference``."""
    D, N, Y = parts["D"], parts["N"], parts["Y"]
    qdd = reference.coordinate_accelerations(t0, q, qd)
    sub = dict(zip(parts["q"], q)) | dict(ms.parameters)
    sub |= {qi.diff(t): v for qi, v in zip(parts["q"], qd)}
    sub |= {qi.diff(t, 2): v for qi, v in zip(parts["q"], qdd)}
    u_of = dict(ms.kinematics.u_of_qdot)
    a = D.vel(N).xreplace(u_of).dt(N)
    a = a.xreplace({ui.diff(t): sm.sympify(u_of[ui]).diff(t) for ui in parts["u"]})
    m = ms.parameters[parts["m"]]
    return [
        float((m * a).dot(Y.x).xreplace(sub).xreplace(sub)),
        float((m * a).dot(Y.y).xreplace(sub).xreplace(sub)),
    ]


@pytest.fixture(scope="module")
def contact_disc_friction(contact_disc, contact_disc_by_kane):
    """Newton's friction at the states the tests read, ``[(t0, q, qd,
    friction)]``: the same reference for every formulation, computed once
    (with kane's accelerations)."""
    ms, parts = contact_disc
    out = []
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        out.append(
            (t0, q, qd, _newton_friction(ms, parts, contact_disc_by_kane, t0, q, qd))
        )
    return out


@pytest.mark.parametrize("name", ["kane", "gibbs_appell", "lagrange", "sympy_kane"])
def test_friction_of_a_rolling_disc_is_newtons(
    contact_disc, contact_disc_friction, name
):
    """The auxiliary speeds let the disc's contact slip, carrying the disc
    (through the relaxed rolling constraints) and P along: the force at P is
    the ground's horizontal force on the disc, which Newton's law for the
    centre gives as m a_D.Y_i (gravity is vertical)."""
    ms, _ = contact_disc
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    for t0, q, qd, friction in contact_disc_friction:
        got = model.constraint_forces(t0, q, qd)
        assert list(got) == ["Fx", "Fy"]
        # With the accelerations of the formulation that is not under test
        # for kane itself.
        np.testing.assert_allclose(
            [got["Fx"], got["Fy"]], friction, rtol=1e-9, atol=1e-9
        )
        assert max(abs(f) for f in friction) > 1e-3


def test_reactions_written_as_functions_of_time_are_newtons(contact_disc_by_kane):
    """Fx(t), Fy(t) (``dynamicsymbols``, as PyDy's rattleback writes its
    contact forces) are the same reaction unknowns as the constants: they
    act only where the auxiliary speeds move, stay out of the equations,
    and kane gives Newton's friction."""
    ms, parts = rolling_disc_with_contact_forces(me.dynamicsymbols)
    assert [str(r) for r in ms.reaction_unknowns] == ["Fx(t)", "Fy(t)"]
    assert ms.reactions_in_motion == ()
    eom = get_formulation("kane", count_ops=False).derive(ms)
    assert not eom.forcing.has(*ms.reaction_unknowns)
    model = eom.numeric()
    for seed in range(2):
        t0, q, qd = ms.states.random_state(seed=seed)
        got = model.constraint_forces(t0, q, qd)
        friction = _newton_friction(ms, parts, contact_disc_by_kane, t0, q, qd)
        np.testing.assert_allclose(
            [got["Fx"], got["Fy"]], friction, rtol=1e-9, atol=1e-9
        )


@pytest.mark.parametrize("name", ["modified_lagrange", "sympy_lagrange"])
def test_formulations_without_the_means_refuse_constraint_forces(
    contact_disc, contact_disc_by_kane, name
):
    ms, _ = contact_disc
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    t0, q, qd = ms.states.random_state(seed=0)
    # The motion itself is still computed (and agrees).
    np.testing.assert_allclose(
        model.coordinate_accelerations(t0, q, qd),
        contact_disc_by_kane.coordinate_accelerations(t0, q, qd),
        rtol=1e-9,
        atol=1e-9,
    )
    with pytest.raises(
        UnsupportedSystemError, match=r"recovers no constraint forces.*ua1"
    ):
        model.constraint_forces(t0, q, qd)
