"""Declarations as sympy's tests and Kane & Levinson's exercises write
them: accepted, each formulation answering or refusing with the reason."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from pydy_ports import kane_levinson_ex_11_7, kane_levinson_ex_11_7_asserted

from eomcompare.formulations import (
    UnsupportedSystemError,
    formulation_names,
    get_formulation,
)

t = me.dynamicsymbols._t

#: The default comparison's formulations; the tree algorithms
#: (kane_composite, kane_articulated) are checked against kane on every
#: catalogue system in tests/test_contract.py, and against Pinocchio and
#: kane in tests/systems/test_robots_articulated_body.py and
#: tests/formulations/test_composite.py.
COMPARED = formulation_names(default_only=True)


def _at(expr, ms, q, u):
    """``expr`` in (q, u) and constants at numbers (no q' in it)."""
    rep = dict(zip(ms.coordinates, q)) | dict(zip(ms.speeds, u))
    return np.array(
        sm.Matrix(expr).xreplace(dict(ms.parameters)).xreplace(rep).evalf(),
        dtype=float,
    )


# ----------------------------------------------------------------------
# Kane & Levinson ex. 11.7: the coincident point B^ (PyDy's script)
# ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def ex_11_7():
    return kane_levinson_ex_11_7()


@pytest.mark.parametrize("name", COMPARED)
def test_coincident_point_is_no_obstacle_to_any_formulation(ex_11_7, name):
    """B^'s velocity is not its position's rate, but only a load acts
    there: nothing is recorded against the declaration, and every
    formulation gives the book's u' = X^-1 Y."""
    ms = ex_11_7
    assert ms.declaration_analysis.velocities_are_derivatives
    X, Y = kane_levinson_ex_11_7_asserted()
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    for seed in range(2):
        t0, q, qd = ms.states.random_state(seed)
        u = ms.states.speeds_from_rates(t0, q, qd)
        want = np.linalg.solve(_at(X, ms, q, u), _at(Y, ms, q, u)).ravel()
        np.testing.assert_allclose(
            model.speed_derivatives(t0, q, u),
            want,
            rtol=1e-10,
            atol=1e-10,
            err_msg=f"{name}, seed {seed}",
        )


# ----------------------------------------------------------------------
# The quaternion idiom
# ----------------------------------------------------------------------
LAGRANGE_FAMILY = ["lagrange", "modified_lagrange", "sympy_lagrange"]


def test_quaternion_top_follows_eulers_equations():
    """4 coordinates, 3 speeds, q' = Q(w) q / 2: random states keep the
    unit norm, the velocity-based formulations give Euler's equations
    I1 w1' = (I2 - I3) w2 w3, ..., I3 w3' = (I1 - I2) w1 w2 + T sin(t),
    and the Lagrange family, with the quaternion's unit norm as a
    constraint, the same coordinate accelerations."""
    from sympy_ports import quaternion_top

    ms = quaternion_top()
    assert ms.states.norm_invariants == ((0, 1, 2, 3),)
    I1, I2, I3, T = 1.0, 2.0, 3.0, 0.5
    models = {}
    for name in ["kane", "gibbs_appell", "sympy_kane"]:
        model = get_formulation(name, count_ops=False).derive(ms).numeric()
        models[name] = model
        for seed in range(3):
            t0, q, qd = ms.states.random_state(seed)
            assert abs(np.linalg.norm(q) - 1) < 1e-12
            w1, w2, w3 = u = ms.states.speeds_from_rates(t0, q, qd)
            want = [
                (I2 - I3) * w2 * w3 / I1,
                (I3 - I1) * w3 * w1 / I2,
                ((I1 - I2) * w1 * w2 + T * np.sin(t0)) / I3,
            ]
            np.testing.assert_allclose(
                model.speed_derivatives(t0, q, u), want, rtol=1e-10, err_msg=name
            )
    # The Lagrange family takes the quaternion's four components as
    # coordinates with the unit-norm constraint: the same q'' as Kane's
    # equations, which the loop above checked against Euler's.
    kane = models["kane"]
    for name in LAGRANGE_FAMILY:
        model = get_formulation(name, count_ops=False).derive(ms).numeric()
        for seed in range(3):
            t0, q, qd = ms.states.random_state(seed)
            np.testing.assert_allclose(
                model.coordinate_accelerations(t0, q, qd),
                kane.coordinate_accelerations(t0, q, qd),
                rtol=1e-9,
                atol=1e-12,
                err_msg=name,
            )


def _sympy_speed_rates(ms, t0, q, u):
    """u' from sympy's own KanesMethod on the declaration, as
    test_implicit_kinematics builds it (implicit kinematics)."""
    km = me.KanesMethod(
        ms.frame,
        list(ms.q_ind),
        list(ms.u_ind),
        kd_eqs=list(ms.kdes),
        q_dependent=list(ms.q_dep),
        configuration_constraints=list(ms.holonomic_constraints),
        velocity_constraints=[],
        u_dependent=[],
        u_auxiliary=[],
        explicit_kinematics=False,
    )
    km.kanes_equations(list(ms.bodies), list(ms.loads))
    rep = {k: v.subs(t, t0) for k, v in ms.specified.items()}
    rep |= dict(zip(km.q, [q[list(ms.coordinates).index(x)] for x in km.q]))
    rep |= dict(zip(km.u, u)) | {t: t0}
    M = km.mass_matrix_full.xreplace(dict(ms.parameters)).xreplace(rep)
    f = km.forcing_full.xreplace(dict(ms.parameters)).xreplace(rep)
    x = np.linalg.solve(np.array(M.evalf(), float), np.array(f.evalf(), float))
    return x.ravel()[len(km.q) :]


# Building the declaration alone takes 8 s (its consistency check on a
# large orientation); the quaternion top above keeps the idiom's checks in
# the quick loop.
@pytest.mark.slow
def test_sympys_implicit_kinematics_body():
    """Declared verbatim (test_kane.py::test_implicit_kinematics): lambda_0
    left out of the initial state is solved (Newton from 0 alone fails: 0
    is a critical point of the norm), the norm's derivative among the
    kinematic equations warns of nothing, Kane's method equals sympy's
    KanesMethod, and the Lagrange family refuses naming the quaternion."""
    import warnings

    from sympy_ports import implicit_kinematics_body

    from eomcompare.systems.redundancy import RedundantConstraintWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", RedundantConstraintWarning)
        ms = implicit_kinematics_body()
        assert ms.velocity_constraints == ()
    _, q, _ = ms.states.consistent_initial_state()
    lam0 = list(ms.coordinates).index(ms.q_dep[0])
    assert q[lam0] == pytest.approx(np.sqrt(1 - 0.01 - 0.04 - 0.09), rel=1e-12)
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    for seed in range(2):
        t0, q, qd = ms.states.random_state(seed)
        u = ms.states.speeds_from_rates(t0, q, qd)
        np.testing.assert_allclose(
            model.speed_derivatives(t0, q, u),
            _sympy_speed_rates(ms, t0, q, u),
            rtol=1e-10,
            atol=1e-10,
        )
    for name in LAGRANGE_FAMILY:
        with pytest.raises(UnsupportedSystemError, match=r"quaternion \['lambda_0"):
            get_formulation(name, count_ops=False).derive(ms)


# ----------------------------------------------------------------------
# Reactions written as dynamicsymbols (sympy's test_box_on_ground)
# ----------------------------------------------------------------------
@pytest.mark.parametrize("name", COMPARED)
def test_box_on_ground_reaction_as_a_function_of_time(name):
    """N(t), the ground's reaction of the auxiliary speed, is accepted as the
    unknown it is; it enters the motion through the friction -mu*N, so each
    formulation that recovers it gives sympy's asserted N = m g and
    m u' = F - mu N, and the others refuse saying why."""
    from sympy_ports import box_on_ground, box_on_ground_asserted

    ms = box_on_ground()
    assert [str(r) for r in ms.reaction_unknowns] == ["N(t)"]
    assert ms.reactions_in_motion == ms.reaction_unknowns
    normal_force, speed_rate = box_on_ground_asserted()
    m, g, mu = (ms.parameters[sm.Symbol(s)] for s in "m g mu".split())
    if name in ("modified_lagrange", "sympy_lagrange"):
        with pytest.raises(UnsupportedSystemError, match=r"reactions \['N'\].*enter"):
            get_formulation(name, count_ops=False).derive(ms)
        return
    eom = get_formulation(name, count_ops=False).derive(ms)
    assert not eom.forcing.has(*ms.reaction_unknowns)
    model = eom.numeric()
    for seed in range(2):
        t0, q, qd = ms.states.random_state(seed)
        F = 7 + np.cos(t0)
        u = ms.states.speeds_from_rates(t0, q, qd)
        np.testing.assert_allclose(
            model.speed_derivatives(t0, q, u), [speed_rate(m, g, mu, F)], rtol=1e-12
        )
        forces = model.constraint_forces(t0, q, qd)
        assert forces == pytest.approx({"N": normal_force(m, g, mu, F)}, rel=1e-12)


# ----------------------------------------------------------------------
# One constraint force, asked for either way
# ----------------------------------------------------------------------
def _pendulum_rod_force(route):
    """A particle on a massless rod about O, the rod's pull on it along
    A.x asked for as a ``ConstraintForce`` or by an auxiliary speed that
    lets the particle leave the rod (``System.add_auxiliary_speeds``)."""
    from eomcompare.systems import ConstraintForce, MechanicalSystem

    q, u, ua = me.dynamicsymbols("q u ua")
    m, L, g = sm.symbols("m L g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    A = N.orientnew("A", "Axis", (q, N.z))
    A.set_ang_vel(N, u * N.z)
    P = O.locatenew("P", L * A.x)
    bob = me.Particle("bob", P, m)
    system = me.System(N, O)
    system.add_coordinates(q)
    system.add_speeds(u)
    system.add_kdes(q.diff(t) - u)
    system.add_bodies(bob)
    system.add_loads(me.Force(P, m * g * N.x))
    forces = ()
    if route == "ConstraintForce":
        P.v2pt_theory(O, N, A)
        forces = (ConstraintForce("ua", "force", A.x, P, (bob,)),)
    else:
        P.set_vel(N, L * u * A.y + ua * A.x)
        system.add_auxiliary_speeds(ua)
    return MechanicalSystem(
        name=f"rod_force_{route}",
        system=system,
        parameters={m: 1.5, L: 0.8, g: 9.81},
        initial_state={q: 0.4, u: 1.0},
        constraint_forces=forces,
    )


def test_gibbs_appell_takes_one_route_for_both_requests():
    """gibbs_appell recovers the rod's pull requested as a ConstraintForce
    as it does when requested by an auxiliary speed, and both equal kane's
    and Newton's along the rod, R = -m L u^2 - m g cos q."""
    m, L, g = 1.5, 0.8, 9.81
    by_route = {}
    for route in ("ConstraintForce", "add_auxiliary_speeds"):
        ms = _pendulum_rod_force(route)
        for name in ("kane", "gibbs_appell"):
            by_route[route, name] = (
                ms,
                get_formulation(name, count_ops=False).derive(ms).numeric(),
            )
    for seed in range(3):
        for (route, name), (ms, model) in by_route.items():
            t0, (q,), (u,) = ms.states.random_state(seed)
            got = model.constraint_forces(t0, [q], [u])
            assert got == pytest.approx(
                {"ua": -m * L * u**2 - m * g * np.cos(q)}, rel=1e-12
            ), (route, name)


# ----------------------------------------------------------------------
# What each mass matrix multiplies
# ----------------------------------------------------------------------
KIND = {
    "kane": "u'",
    "gibbs_appell": "u'",
    "sympy_kane": "u'",
    "lagrange": "q''",
    "modified_lagrange": "q''",
    "sympy_lagrange": "q''",
}


@pytest.mark.parametrize("name", COMPARED)
def test_mass_matrix_kind_and_sympys_asserted_kane_mass_matrix(name):
    """test_kane4's double pendulum with u2 = q1' + q2': the Kane family's
    M multiplies u' and equals the mass matrix sympy asserts; the Lagrange
    family's multiplies q'' and is T^T M T with u = T q', T = [[1, 0],
    [1, 1]] (the same kinetic energy in the other rates)."""
    from sympy_ports import (
        replace_qdots_double_pendulum,
        replace_qdots_double_pendulum_asserted,
    )

    ms = replace_qdots_double_pendulum()
    eom = get_formulation(name, count_ops=False).derive(ms)
    assert eom.unknowns_kind == KIND[name]
    M_kane = replace_qdots_double_pendulum_asserted()
    if KIND[name] == "u'":
        assert eom.unknowns == tuple(u.diff(t) for u in ms.speeds)
        expected = M_kane
    else:
        assert eom.unknowns == tuple(q.diff(t, 2) for q in ms.coordinates)
        T = sm.Matrix([[1, 0], [1, 1]])
        expected = T.T * M_kane * T
    names = {sm.Symbol(str(k)): k for k in ms.parameters}
    expected = expected.xreplace({s: names.get(s, s) for s in expected.free_symbols})
    assert sm.simplify(sm.Matrix(eom.mass_matrix) - expected) == sm.zeros(2, 2)


def test_multipliers_are_named_among_the_unknowns():
    eom = get_formulation("lagrange", count_ops=False).derive("four_bar")
    assert eom.unknowns_kind == "q'' and multipliers"
    assert eom.unknowns[-eom.n_multipliers :] == eom.multipliers


def test_coordinates_without_a_speed_are_named_so_not_quaternions():
    """A rolling disc with the contact point's x, y as coordinates moved by
    the spin rate (5 coordinates, 3 speeds, as the rattleback declares its
    contact point): the Lagrange family refuses naming the two coordinates
    without a speed of their own, and no quaternion."""
    from eomcompare.systems import MechanicalSystem

    q1, q2, q3, x, y = me.dynamicsymbols("q1 q2 q3 x y")
    u1, u2, u3 = me.dynamicsymbols("u1:4")
    m, r, g = sm.symbols("m r g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    Y = N.orientnew("Y", "Axis", (q1, N.z))
    L = Y.orientnew("L", "Axis", (q2, Y.x))
    R = L.orientnew("R", "Axis", (q3, L.y))
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    D = O.locatenew("C", x * N.x + y * N.y).locatenew("D", r * L.z)
    disc = me.RigidBody(
        "disc", D, R, m, (me.inertia(L, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4), D)
    )
    system = me.System(N, O)
    system.add_coordinates(q1, q2, q3, x, y)
    system.add_speeds(u1, u2, u3)
    system.add_kdes(
        q1.diff(t) - u3 / sm.cos(q2),
        q2.diff(t) - u1,
        q3.diff(t) - u2 + u3 * sm.tan(q2),
        x.diff(t) - r * u2 * sm.cos(q1),
        y.diff(t) - r * u2 * sm.sin(q1),
    )
    system.add_bodies(disc)
    system.add_loads(me.Force(D, -m * g * N.z))
    ms = MechanicalSystem(
        name="disc_rolling_in_its_kinematics",
        system=system,
        parameters={m: 1.0, r: 0.5, g: 9.81},
        initial_state={q2: 0.2, u2: 3.0},
    )
    for name in LAGRANGE_FAMILY:
        with pytest.raises(UnsupportedSystemError) as info:
            get_formulation(name, count_ops=False).derive(ms)
        msg = str(info.value)
        assert "3 speeds for 5 coordinates" in msg
        assert "2 coordinate(s) have no speed of their own" in msg
        assert "quaternion" not in msg
