"""The rod with a slider on a rotating shaft against its published equations
of motion and constraint forces.

Reference: ``kane_method_examples_fa.txt``, example 4.  With u1 = q1',
u2 = q2' the equations of motion are (2-144) (printed divided by m_P) and
(2-145)::

    u1' - sin^2(beta) u2^2 q1 = g cos(beta)
    sin^2(beta) ((m_P q1^2 + 4 m_R L^2/3) u2' + 2 m_P q1 u1 u2) = T

and the constraint forces recovered by auxiliary speeds are (2-170) to
(2-172)::

    R1(B->S) = -g (m_P + m_R) + m_P cos(beta) u1'
    M2(S->R) = -sin(beta) cos(beta) ((m_P q1^2 + 4 m_R L^2/3) u2'
                                      + 2 m_P q1 u1 u2)
    R3(R->P) = m_P sin(beta) (q1 u2' + 2 u1 u2)

(2-182) prints R2(R->P) = m_P sin(beta) (g + u2' q1 + 2 u1 u2): its inertia
term (2-181) is a copy of the r3 one, (2-169).  Newton's law for the slider
along r2 gives the right one.  The slider's acceleration is (2-126)::

    a_P = u1' r1 + sin(beta) ((2 u1 u2 + q1 u2') r3 - u2^2 q1 s2)

and with s2 . r2 = cos(beta), s1 . r2 = -sin(beta), the r2 component of
R2 r2 + m_P g s1 = m_P a_P reads R2 - m_P g sin(beta) =
-m_P sin(beta) cos(beta) q1 u2^2, so

    R2(R->P) = m_P sin(beta) (g - cos(beta) q1 u2^2).

The rates u1', u2' in the published expressions are taken from the Kane
coordinate accelerations (u1' = q1'', u2' = q2'').
"""

from __future__ import annotations

import numpy as np
from conftest import cached_eom, cached_system

N_STATES = 25

OTHER = {"m_R": 3.5, "m_P": 0.7, "L": 0.8, "beta": 1.1, "g": 9.7, "T": -2.3}


def _params(ms, values=None):
    return values or {str(k): v for k, v in ms.parameters.items()}


def _inertia(P, q1):
    return P["m_P"] * q1**2 + 4 * P["m_R"] * P["L"] ** 2 / 3


def _published(P, q, qd, qdd):
    q1 = q[0]
    u1, u2 = qd
    u1d, u2d = qdd
    sb, cb = np.sin(P["beta"]), np.cos(P["beta"])
    eom = (
        u1d - sb**2 * u2**2 * q1 - P["g"] * cb,
        sb**2 * (_inertia(P, q1) * u2d + 2 * P["m_P"] * q1 * u1 * u2) - P["T"],
    )
    forces = {
        "R1": -P["g"] * (P["m_P"] + P["m_R"]) + P["m_P"] * cb * u1d,
        "M2": -sb * cb * (_inertia(P, q1) * u2d + 2 * P["m_P"] * q1 * u1 * u2),
        "R3": P["m_P"] * sb * (q1 * u2d + 2 * u1 * u2),
        "R2": P["m_P"] * sb * (P["g"] - cb * q1 * u2**2),
    }
    return eom, forces


def _model(ms, values):
    if values is None:
        return cached_eom("kane", "rod_slider_shaft").numeric()
    return cached_eom("kane", "rod_slider_shaft").numeric(
        {k: values[str(k)] for k in ms.parameters}
    )


def _states(ms, values):
    par = None if values is None else {k: values[str(k)] for k in ms.parameters}
    for seed in range(N_STATES):
        yield ms.states.random_state(seed, parameters=par)


def _check_equations(values):
    ms = cached_system("rod_slider_shaft")
    P = _params(ms, values)
    model = _model(ms, values)
    worst = 0.0
    for t0, q, qd in _states(ms, values):
        qdd = model.coordinate_accelerations(t0, q, qd)
        (r1, r2), _ = _published(P, q, qd, qdd)
        scale1 = max(abs(qdd[0]), P["g"], 1.0)
        scale2 = max(abs(P["T"]), abs(_inertia(P, q[0]) * qdd[1]), 1.0)
        worst = max(worst, abs(r1) / scale1, abs(r2) / scale2)
    assert worst < 1e-10


def _check_forces(values):
    ms = cached_system("rod_slider_shaft")
    P = _params(ms, values)
    model = _model(ms, values)
    worst = {name: 0.0 for name in ("R1", "M2", "R3", "R2")}
    for t0, q, qd in _states(ms, values):
        qdd = model.coordinate_accelerations(t0, q, qd)
        _, expected = _published(P, q, qd, qdd)
        got = model.constraint_forces(t0, q, qd)
        for name, value in expected.items():
            err = abs(got[name] - value) / max(abs(value), 1.0)
            worst[name] = max(worst[name], err)
    assert max(worst.values()) < 1e-10, worst


def test_equations_of_motion_2_144_2_145():
    _check_equations(None)


def test_equations_of_motion_with_other_parameters():
    _check_equations(OTHER)


def test_constraint_forces_2_170_to_2_172_and_corrected_2_182():
    _check_forces(None)


def test_constraint_forces_with_other_parameters():
    _check_forces(OTHER)


def test_printed_2_182_is_a_misprint():
    """The printed R2(R->P) differs from the recovered force by exactly the
    wrongly copied inertia term plus the missing centripetal one."""
    ms = cached_system("rod_slider_shaft")
    P = _params(ms)
    model = _model(ms, None)
    t0, q, qd = ms.states.random_state(2)
    qdd = model.coordinate_accelerations(t0, q, qd)
    q1, (u1, u2), u2d = q[0], qd, qdd[1]
    sb, cb = np.sin(P["beta"]), np.cos(P["beta"])
    printed = P["m_P"] * sb * (P["g"] + u2d * q1 + 2 * u1 * u2)
    got = model.constraint_forces(t0, q, qd)["R2"]
    assert abs(printed - got) > 1e-3
    np.testing.assert_allclose(
        printed - got,
        P["m_P"] * sb * (q1 * u2d + 2 * u1 * u2 + cb * q1 * u2**2),
        rtol=1e-10,
        atol=1e-12,
    )


def test_energy_with_torque_work_is_conserved():
    """T + V with V = -g (m_R L + m_P q1) cos(beta) - T q2 is constant:
    kinetic energy written out by hand, 1/2 m_P (u1^2 + q1^2 sin^2 u2^2)
    + 1/2 (4/3) m_R L^2 sin^2 u2^2."""
    from scipy.integrate import solve_ivp

    ms = cached_system("rod_slider_shaft")
    P = _params(ms)
    model = _model(ms, None)
    sb, cb = np.sin(P["beta"]), np.cos(P["beta"])

    def energy(q, qd):
        kin = (
            0.5 * P["m_P"] * (qd[0] ** 2 + (q[0] * sb * qd[1]) ** 2)
            + 0.5 * 4 / 3 * P["m_R"] * P["L"] ** 2 * sb**2 * qd[1] ** 2
        )
        pot = -P["g"] * (P["m_R"] * P["L"] + P["m_P"] * q[0]) * cb - P["T"] * q[1]
        return kin + pot

    t0, q, qd = ms.states.random_state(4)
    sol = solve_ivp(
        model.rhs, (t0, t0 + 0.5), model.state_from(q, qd, t0), rtol=1e-11, atol=1e-12
    )
    assert sol.success
    e = [energy(*model.coordinates_from(x)) for x in sol.y.T]
    assert abs(e[-1] - e[0]) / max(abs(e[0]), 1.0) < 1e-8


def test_declared_potential_energy():
    import sympy as sm

    ms = cached_system("rod_slider_shaft")
    P = _params(ms)
    q1, q2 = ms.coordinates
    V = sm.lambdify([q1, q2], ms.potential_energy.subs(dict(ms.parameters)))
    cb = np.cos(P["beta"])
    for q in ([0.3, 1.2], [0.9, -2.0]):
        hand = -P["g"] * (P["m_R"] * P["L"] + P["m_P"] * q[0]) * cb - P["T"] * q[1]
        assert np.isclose(V(*q), hand, rtol=1e-13, atol=0.0)
