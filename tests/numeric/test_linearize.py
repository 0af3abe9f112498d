"""Linearization through the numeric contract: against the analytic
linearization of the double pendulum, against a finite-difference Jacobian
of the contract's ``rhs``, against sympy's ``KanesMethod.linearize`` (with
dependent coordinates and with nonholonomic constraints, about steady
motions), and against a hand-written system with an input."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_eom, cached_system

from eomcompare.formulations.base import formulation_names
from eomcompare.numeric.linearize import LinearModel, linearize
from eomcompare.systems.base import ConstraintError, MechanicalSystem

t = me.dynamicsymbols._t
#: The default comparison's formulations; the tree algorithms
#: (kane_composite, kane_articulated) are checked against kane on every
#: catalogue system in tests/test_contract.py, and against Pinocchio and
#: kane in tests/systems/test_robots_articulated_body.py and
#: tests/formulations/test_composite.py.
FORMULATIONS = formulation_names(default_only=True)


def _fd_rhs_jacobian(model, x0, h=1e-6):
    J = np.empty((len(x0), len(x0)))
    for j in range(len(x0)):
        e = np.zeros_like(x0)
        e[j] = h
        J[:, j] = (model.rhs(0.0, x0 + e) - model.rhs(0.0, x0 - e)) / (2 * h)
    return J


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_double_pendulum_hanging_frequencies(formulation):
    """Two uniform rods (m, l) hanging, absolute angles: with
    T = (m l^2 / 2) [(4/3) th1'^2 + th1' th2' + (1/3) th2'^2] (rod 1 about
    its pivot, m l^2/3; rod 2's centre at l e1 + (l/2) e2 and its central
    inertia m l^2/12) and V = -m g l [(3/2) cos th1 + (1/2) cos th2],
    small motions obey M th'' + K th = 0 with
    M = m l^2 [[4/3, 1/2], [1/2, 1/3]], K = m g l diag(3/2, 1/2);
    the eigenvalues are +-i w with w^2 the roots of det(K - w^2 M) = 0."""
    eom = cached_eom(formulation, "double_pendulum")
    ms = eom.system
    P = {str(k): v for k, v in ms.parameters.items()}
    m, l, g = P["m"], P["l"], P["g"]
    M = m * l**2 * np.array([[4 / 3, 1 / 2], [1 / 2, 1 / 3]])
    K = m * g * l * np.diag([3 / 2, 1 / 2])
    w2 = np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real)
    lin = linearize(eom, (0.0, np.zeros(2), np.zeros(2)))
    ev = lin.eigenvalues()
    assert np.max(np.abs(ev.real)) < 1e-8
    assert np.allclose(np.sort(ev.imag[ev.imag > 0] ** 2), w2, rtol=1e-9)
    assert np.max(np.abs(lin.rates)) < 1e-12  # an equilibrium


@pytest.mark.parametrize("system", ["double_pendulum", "n_link_pendulum"])
def test_matches_rhs_jacobian_without_constraints(system):
    """Without constraints Kane's state (q, u) is the minimal state, so A is
    the Jacobian of the contract's rhs, here away from equilibrium."""
    eom = cached_eom("kane", system)
    ms = eom.system
    model = eom.numeric()
    t0, q, qd = ms.states.random_state(seed=7)
    x0 = model.state_from(q, qd, t0)
    J = _fd_rhs_jacobian(model, x0)
    lin = linearize(eom, (t0, q, qd))
    assert np.allclose(lin.A, J, rtol=1e-6, atol=1e-6)
    assert np.allclose(lin.rates, model.rhs(t0, x0), rtol=1e-12, atol=1e-12)


def test_matches_rhs_jacobian_on_the_constraint_manifold():
    """With nonholonomic constraints: Kane's full state x = (q, u) embeds the
    minimal state y = (q, u_ind) by x(y) = (q, u_ind, u_dep(q, u_ind)), so
    the minimal A is the rows of y in J_rhs(x) dx/dy."""
    eom = cached_eom("kane", "rolling_disc")
    ms = eom.system
    model = eom.numeric()
    t0, q, qd = ms.states.random_state(seed=3)
    x0 = model.state_from(q, qd, t0)
    nq, nu = len(ms.q_ind), len(ms.u_ind)

    def embed(y):
        u = ms.states.solve_dependent_speeds(t0, y[:nq], y[nq:])
        return np.concatenate([y[:nq], u])

    y0 = np.concatenate([x0[:nq], x0[nq : nq + nu]])
    h = 1e-6
    E = np.column_stack(
        [(embed(y0 + h * e) - embed(y0 - h * e)) / (2 * h) for e in np.eye(len(y0))]
    )
    J = _fd_rhs_jacobian(model, x0)
    rows = list(range(nq)) + list(range(nq, nq + nu))
    expected = (J @ E)[rows]
    lin = linearize(eom, (t0, q, qd))
    assert np.allclose(lin.A, expected, rtol=1e-6, atol=1e-6)


@functools.cache
def _sympy_linearization_of(name, q, u):
    """:func:`_sympy_linearization` of the catalogue system ``name``, once
    per worker: every formulation's test compares with the same matrix."""
    return _sympy_linearization(cached_system(name), np.array(q), np.array(u))


#: The tests comparing with one sympy linearization run on one worker.
_ONE_WORKER = pytest.mark.xdist_group("sympy-linearization")


def _sympy_linearization(ms, q, u):
    """A in (q_ind, u_ind) from sympy's KanesMethod.linearize on the same
    declaration, the speed rates at the operating point from sympy's own
    mass matrix and forcing."""
    s = ms.system
    km = me.KanesMethod(
        s.frame,
        q_ind=list(ms.q_ind),
        u_ind=list(ms.u_ind),
        kd_eqs=list(ms.kdes),
        q_dependent=list(ms.q_dep),
        u_dependent=list(ms.u_dep),
        configuration_constraints=list(ms.holonomic_constraints),
        velocity_constraints=list(s.velocity_constraints),
    )
    km.kanes_equations(list(s.bodies), list(s.loads))
    op = dict(ms.parameters)
    op.update(zip(ms.coordinates, q))
    op.update(zip(ms.speeds, u))
    Mf = np.array(km.mass_matrix_full.xreplace(op).evalf(), dtype=float)
    ff = np.array(km.forcing_full.xreplace(op).evalf(), dtype=float).ravel()
    xd = np.linalg.solve(Mf, ff)
    n = len(ms.coordinates)
    op.update({qi.diff(t): v for qi, v in zip(ms.coordinates, xd[:n])})
    op.update({ui.diff(t): v for ui, v in zip(ms.speeds, xd[n:])})
    A, _, _ = km.linearize(op_point=op, A_and_B=True)
    return np.array(A.evalf(), dtype=float)


@_ONE_WORKER
@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_rolling_disc_upright_rolling_against_sympy(formulation):
    """A steady motion with nonholonomic constraints: upright rolling."""
    ms = cached_system("rolling_disc")
    q = np.zeros(5)
    u = ms.states.solve_dependent_speeds(0.0, q, np.array([0.0, 2.0, 0.0]))
    expected = _sympy_linearization_of("rolling_disc", tuple(q), tuple(u))
    lin = linearize(
        cached_eom(formulation, "rolling_disc"),
        (0.0, q, ms.states.rates_from_speeds(0.0, q, u)),
    )
    assert lin.states == ("q1", "q2", "q3", "x", "y", "u1", "u2", "u3")
    assert np.allclose(lin.A, expected, rtol=1e-8, atol=1e-8)


@_ONE_WORKER
@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_four_bar_dependent_coordinates_against_sympy(formulation):
    """Dependent coordinates eliminated, away from equilibrium and at
    nonzero speed."""
    ms = cached_system("four_bar")
    t0, q, qd = ms.states.random_state(seed=3)
    u = ms.states.speeds_from_rates(t0, q, qd)
    expected = _sympy_linearization_of("four_bar", tuple(q), tuple(u))
    lin = linearize(cached_eom(formulation, "four_bar"), (t0, q, qd))
    assert lin.A.shape == (2, 2)
    assert np.allclose(lin.A, expected, rtol=1e-8, atol=1e-8)


def _spring_mass():
    """x'' = (F - k x) / m: A = [[0, 1], [-k/m, 0]], B = [[0], [1/m]]."""
    x, v = me.dynamicsymbols("x v")
    m, k, F = sm.symbols("m k F", positive=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x)
    P.set_vel(N, v * N.x)
    system = me.System(N, O)
    system.add_coordinates(x)
    system.add_speeds(v)
    system.add_kdes(v - x.diff())
    system.add_bodies(me.Particle("p", P, m))
    system.add_loads(me.Force(P, (F - k * x) * N.x))
    return MechanicalSystem(
        name="spring_mass",
        system=system,
        parameters={m: 2.0, k: 8.0, F: 0.0},
        initial_state={x: 0.0, v: 0.0},
    )


def test_inputs_give_B():
    from eomcompare.formulations import get_formulation

    eom = get_formulation("kane", count_ops=False).derive(_spring_mass())
    lin = linearize(
        eom,
        (0.0, np.array([0.3]), np.array([0.5])),
        inputs=["F"],
        parameters={"m": 4.0},
    )
    assert isinstance(lin, LinearModel)
    assert np.allclose(lin.A, [[0.0, 1.0], [-8.0 / 4.0, 0.0]], atol=1e-10)
    assert np.allclose(lin.B, [[0.0], [1 / 4.0]], atol=1e-10)
    assert lin.inputs == ("F",)
    assert np.allclose(lin.rates, [0.5, -8.0 * 0.3 / 4.0], atol=1e-12)


def test_bad_input():
    eom = cached_eom("kane", "double_pendulum")
    op = (0.0, np.zeros(2), np.zeros(2))
    with pytest.raises(TypeError, match="EquationsOfMotion"):
        linearize(eom.numeric(), op)
    with pytest.raises(ValueError, match="valid: "):
        linearize(eom, op, inputs=["torque"])
    with pytest.raises(ValueError, match="2 coordinates"):
        linearize(eom, (0.0, np.zeros(3), np.zeros(3)))
    with pytest.raises(ValueError, match="valid states"):
        linearize(eom, op).submodel(["nope"])


def test_inconsistent_operating_point_is_refused():
    ms = cached_system("four_bar")
    t0, q, qd = ms.states.random_state(seed=1)
    with pytest.raises(ConstraintError, match="violates"):
        linearize(cached_eom("kane", "four_bar"), (t0, q + 0.1, qd))
