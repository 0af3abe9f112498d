"""Crank and slider with OA = AB = l: loop closure, the two coordinate
choices against each other, an analytic equation of motion and the energy
balance."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.systems import get_system

N_STATES = 20
OPTIONS = ["redundant", "minimal"]
t = me.dynamicsymbols._t


def _sym(ms, name):
    return {str(x): x for x in ms.parameters}[name]


def _par(ms):
    return {str(k): v for k, v in ms.parameters.items()}


def test_dependent_solutions_close_the_loop():
    """psi = -phi, x = 2 l cos(phi) satisfy both loop constraints exactly."""
    ms = get_system("crank_slider")
    phi, psi, x = ms.coordinates
    l = _sym(ms, "l")
    sol = dict(ms.dependent_solutions)
    assert sm.simplify(sol[x] - 2 * l * sm.cos(phi)) == 0
    for c in ms.holonomic_constraints:
        assert sm.simplify(c.subs(sol)) == 0


def test_redundant_states_follow_the_closed_forms():
    """Newton on the constraints lands on x = 2 l cos(phi), psi = -phi, and
    the dependent rates are their time derivatives."""
    ms = get_system("crank_slider")
    l = _par(ms)["l"]
    for seed in range(N_STATES):
        _, (phi, psi, x), (dphi, dpsi, dx) = ms.states.random_state(seed)
        assert x == pytest.approx(2 * l * np.cos(phi), abs=1e-12)
        assert psi == pytest.approx(-phi, abs=1e-12)
        assert dx == pytest.approx(-2 * l * np.sin(phi) * dphi, abs=1e-12)
        assert dpsi == pytest.approx(-dphi, abs=1e-12)


def test_minimal_kinematics_close_the_loop():
    """In one coordinate the slider is on the guide at 2 l cos(phi), at the
    rod's length from A, and its velocity is the derivative of that."""
    ms = get_system("crank_slider", coordinates="minimal")
    N, O = ms.frame, ms.system.fixed_point
    (phi,), (omega,) = ms.coordinates, ms.speeds
    l = _sym(ms, "l")
    pts = {b.name: b.masscenter for b in ms.bodies}
    B = pts["slider"]
    A = O.locatenew("A_check", l * (sm.cos(phi) * N.x + sm.sin(phi) * N.y))
    r = B.pos_from(O).to_matrix(N)
    assert sm.simplify(r - sm.Matrix([2 * l * sm.cos(phi), 0, 0])) == sm.zeros(3, 1)
    AB = B.pos_from(A)
    assert sm.simplify(AB.dot(AB) - l**2) == 0
    v = B.vel(N).to_matrix(N).subs(omega, phi.diff(t))
    assert sm.simplify(v - r.diff(t)) == sm.zeros(3, 1)


def test_both_coordinate_choices_give_the_same_crank_acceleration():
    red = get_system("crank_slider", coordinates="redundant")
    mini = get_system("crank_slider", coordinates="minimal")
    m_red = get_formulation("kane", count_ops=False).derive(red).numeric()
    m_min = get_formulation("kane", count_ops=False).derive(mini).numeric()
    for seed in range(N_STATES):
        t0, q, qd = mini.states.random_state(seed)
        # The redundant state from the loop constraints alone.
        q_r = red.states.solve_dependent_coordinates(t0, q, [-0.3, 0.8])
        u_r = red.states.solve_dependent_speeds(t0, q_r, qd)
        qd_r = red.states.rates_from_speeds(t0, q_r, u_r)
        a_min = m_min.coordinate_accelerations(t0, q, qd)[0]
        a_red = m_red.coordinate_accelerations(t0, q_r, qd_r)[0]
        assert a_red == pytest.approx(a_min, rel=1e-10, abs=1e-10)


def test_minimal_equation_matches_an_analytic_lagrange_equation():
    """Lagrange's equation in phi, derived by hand.

    G1 = (l/2)(cos phi, sin phi), G2 = ((3l/2) cos phi, (l/2) sin phi),
    B = (2 l cos phi, 0); crank and rod turn at +-phi' with central inertia
    m l^2/12.  Hence

        T = M(phi) phi'^2 / 2,
        M = m l^2/12 + m l^2/4 + m l^2/12 + m l^2 (9 sin^2/4 + cos^2/4)
            + 4 mB l^2 sin^2 = m l^2 (2/3 + 2 sin^2 phi) + 4 mB l^2 sin^2 phi,

    and the generalized force (gravity -y, slider force F - c (x - l0)
    along x, x' = -2 l sin(phi) phi') is

        Q = -m g l cos phi - 2 l sin phi (F - c (2 l cos phi - l0)),

    so that  M phi'' + M'(phi) phi'^2 / 2 = Q  with
    M' = (4 m l^2 + 8 mB l^2) sin phi cos phi.
    """
    ms = get_system("crank_slider", coordinates="minimal")
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    p = _par(ms)
    m, mB, l, g, F, c, l0 = (p[k] for k in ("m", "m_B", "l", "g", "F", "c", "l0"))
    for seed in range(N_STATES):
        t0, (phi,), (dphi,) = ms.states.random_state(seed)
        s, co = np.sin(phi), np.cos(phi)
        M = m * l**2 * (2 / 3 + 2 * s**2) + 4 * mB * l**2 * s**2
        dM = (4 * m * l**2 + 8 * mB * l**2) * s * co
        Q = -m * g * l * co - 2 * l * s * (F - c * (2 * l * co - l0))
        expected = (Q - dM * dphi**2 / 2) / M
        got = model.coordinate_accelerations(t0, [phi], [dphi])[0]
        assert got == pytest.approx(expected, rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("coordinates", OPTIONS)
def test_energy_rate_equals_power_of_the_force(coordinates):
    """d/dt (T + V_gravity + V_spring) = F x' along the equations of motion.

    T is sympy's kinetic energy of the declared bodies; V_gravity, V_spring
    are written here from the geometry, and the rate is formed by the chain
    rule with the formulation's q'' (u = q' in both declarations).
    """
    ms = get_system("crank_slider", coordinates=coordinates)
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    N, O = ms.frame, ms.system.fixed_point
    s = {str(x): x for x in ms.parameters}
    m, g, c, l0, F, l = (s[k] for k in ("m", "g", "c", "l0", "F", "l"))
    q, u = list(ms.coordinates), list(ms.speeds)
    qdot = dict(ms.kinematics.qdot)
    for qi, ui in zip(q, u):
        assert sm.simplify(qdot[qi.diff(t)] - ui) == 0
    pts = {b.name: b.masscenter for b in ms.bodies}
    x_B = pts["slider"].pos_from(O).dot(N.x)
    T = sum(b.kinetic_energy(N) for b in ms.bodies)
    V = (
        m * g * (pts["crank"].pos_from(O).dot(N.y) + pts["rod"].pos_from(O).dot(N.y))
        + c * (x_B - l0) ** 2 / 2
    )
    E = (T + V).subs(qdot)
    # Chain-rule terms of dE/dt and the power, in plain symbols.
    Q, U, A = (sm.symbols(f"{k}0:{len(q)}") for k in ("Q", "U", "A"))
    rep = dict(zip(u, U)) | dict(zip(q, Q))
    terms = [E.diff(qi).xreplace(rep) * Ui for qi, Ui in zip(q, U)] + [
        E.diff(ui).xreplace(rep) * Ai for ui, Ai in zip(u, A)
    ]
    power = (F * x_B.diff(t)).subs(qdot).xreplace(rep)
    pvals = list(ms.parameters.values())
    f_terms = sm.lambdify([Q, U, A, list(ms.parameters)], terms)
    f_power = sm.lambdify([Q, U, list(ms.parameters)], power)
    for seed in range(N_STATES):
        t0, qv, qdv = ms.states.random_state(seed)
        qdd = model.coordinate_accelerations(t0, qv, qdv)
        vals = np.array(f_terms(qv, qdv, qdd, pvals), dtype=float)
        P = float(f_power(qv, qdv, pvals))
        scale = np.sum(np.abs(vals)) + abs(P)
        assert abs(vals.sum() - P) <= 1e-10 * scale, (seed, vals, P)


def test_coordinates_option_is_checked():
    with pytest.raises(ValueError, match="redundant.*minimal"):
        get_system("crank_slider", coordinates="absolute")
    with pytest.raises(TypeError, match="coordinates"):
        get_system("crank_slider", coordinates=1)
