"""Two masses in a rotating tube against the published equations (2-38),
(2-39) of ``kane_method_examples_fa.txt`` (example 1):

    -m1 (u1' - (L1 + q1) theta'^2) + m1 g cos theta - k1 q1 + k2 (q2 - q1) = 0
    -m2 (u2' - (L1 + L2 + q2) theta'^2) + m2 g cos theta - k2 (q2 - q1) = 0

with theta(t) the declaration's prescribed motion, evaluated at the state's
own time t."""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.systems import get_system

N_STATES = 20
t = me.dynamicsymbols._t


def _prescribed(ms):
    """theta(t) and theta'(t) as numeric functions, from ``specified``."""
    ((theta, expr),) = ms.specified.items()
    expr = expr.subs(dict(ms.parameters))
    return (sm.lambdify(t, expr), sm.lambdify(t, expr.diff(t)))


def published_terms(t0, q, qd, qdd, p, theta, theta_dot):
    q1, q2 = q
    a1, a2 = qdd
    th, thd = theta(t0), theta_dot(t0)
    m1, m2, k1, k2, L1, L2, g = (
        p[k] for k in ("m1", "m2", "k1", "k2", "L1", "L2", "g")
    )
    eq238 = [
        -m1 * a1,
        m1 * (L1 + q1) * thd**2,
        m1 * g * np.cos(th),
        -k1 * q1,
        k2 * (q2 - q1),
    ]
    eq239 = [
        -m2 * a2,
        m2 * (L1 + L2 + q2) * thd**2,
        m2 * g * np.cos(th),
        -k2 * (q2 - q1),
    ]
    return eq238, eq239


def test_kane_satisfies_published_equations():
    ms = get_system("rotating_tube")
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    p = {str(k): v for k, v in ms.parameters.items()}
    theta, theta_dot = _prescribed(ms)
    times = set()
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        times.add(round(t0, 9))
        qdd = model.coordinate_accelerations(t0, q, qd)
        for terms in published_terms(t0, q, qd, qdd, p, theta, theta_dot):
            scale = sum(abs(x) for x in terms)
            assert abs(sum(terms)) <= 1e-10 * scale, (seed, terms)
    # The states must sample the prescribed motion at different times.
    assert len(times) > N_STATES // 2


def test_published_equations_hold_for_any_prescribed_motion():
    """Symbolically, with theta(t) left an arbitrary function of time."""
    ms = get_system("rotating_tube")
    eom = get_formulation("kane", count_ops=False).derive(ms)
    q1, q2 = ms.coordinates
    u1, u2 = ms.speeds
    (theta,) = ms.specified
    s = {str(x): x for x in ms.parameters}
    m1, m2, k1, k2, L1, L2, g = (
        s[k] for k in ("m1", "m2", "k1", "k2", "L1", "L2", "g")
    )
    a1, a2 = sm.symbols("a1 a2")
    thd = theta.diff(t)
    eq238 = (
        -m1 * (a1 - (L1 + q1) * thd**2)
        + m1 * g * sm.cos(theta)
        - k1 * q1
        + k2 * (q2 - q1)
    )
    eq239 = (
        -m2 * (a2 - (L1 + L2 + q2) * thd**2) + m2 * g * sm.cos(theta) - k2 * (q2 - q1)
    )
    assert list(eom.unknowns) == [u1.diff(t), u2.diff(t)]
    sol = sm.Matrix(eom.mass_matrix).LUsolve(sm.Matrix(eom.forcing))
    for eq in (eq238, eq239):
        assert sm.simplify(eq.subs({a1: sol[0], a2: sol[1]})) == 0


def test_prescribed_motion_is_the_documented_profile():
    ms = get_system("rotating_tube")
    assert ms.is_rheonomic
    ((theta, expr),) = ms.specified.items()
    s = {str(x): x for x in ms.parameters}
    assert sm.simplify(expr - (s["Omega"] * t + s["a"] * sm.sin(s["nu"] * t))) == 0


def test_transverse_velocity_is_along_t2():
    """The corrected (2-17), (2-18): v_P = q' t1 + r theta' t2."""
    ms = get_system("rotating_tube")
    N = ms.frame
    (theta,) = ms.specified
    t1 = sm.cos(theta) * N.x + sm.sin(theta) * N.y
    t2 = -sm.sin(theta) * N.x + sm.cos(theta) * N.y
    s = {str(x): x for x in ms.parameters}
    q1, q2 = ms.coordinates
    u1, u2 = ms.speeds
    radius = {"P1": s["L1"] + q1, "P2": s["L1"] + s["L2"] + q2}
    speed = {"P1": u1, "P2": u2}
    for body in ms.bodies:
        P = body.masscenter
        expected = speed[P.name] * t1 + radius[P.name] * theta.diff(t) * t2
        diff = (P.vel(N) - expected).to_matrix(N).applyfunc(sm.simplify)
        assert diff == sm.zeros(3, 1)
