"""Kolev's manipulator with an elastic arm against the published model.

Reference: kolev_modified_lagrange_bg.txt, (3.5)-(3.10), with the sign
convention of the catalogue (section 9).  Two printed signs had to be
corrected to reproduce the published equations of motion (3.10):

* the constraint (3.2), printed ``m1 q1 + m2 q2 + m2 q3 h cos(gamma) = 0``,
  must read ``m1 q1 - m2 q2 - m2 h cos(gamma) q3 = 0`` (as its own
  solution (3.8) says);
* the first term of T in (3.5), printed ``m1 (qG' - q1')^2``, must read
  ``m1 (qG' + q1')^2`` (body 1 at ``qG + q1``, as the generalized forces
  (3.6) say: Q_1 = F_D - m1 g - ...); the printed Phi_1 of (3.9),
  ``-m1 (qG'' - q1'')``, inherits that sign and becomes ``-m1 (qG'' + q1'')``.

Everything else, the potential of (3.5), the generalized forces (3.6),
(3.8) and (3.10), is used as printed.
"""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_eom, cached_system
from helpers import power_balance

t = me.dynamicsymbols._t
N_STATES = 25
NAME = "kolev_manipulator"


def _symbols(ms):
    by_name = {str(s): s for s in ms.parameters}
    names = "m1 m2 J_O2 h g gamma c22 c23 c33 F_D".split()
    return [by_name[n] for n in names]


def _coords(ms):
    by_name = {str(q): q for q in ms.coordinates}
    return [by_name[f"{n}(t)"] for n in ("qG", "q1", "q2", "q3")]


def _catalogue_T(ms, sign_body1=+1):
    m1, m2, J, h, *_ = _symbols(ms)
    gamma = _symbols(ms)[5]
    qG, q1, q2, q3 = (q.diff(t) for q in _coords(ms))
    return (
        m1 * (qG + sign_body1 * q1) ** 2 + m2 * (qG - q2) ** 2 + J * q3**2
    ) / 2 - m2 * (qG - q2) * q3 * h * sm.cos(gamma)


def _published_Q(ms):
    """(3.6): Q_G, Q_1, Q_2, Q_3."""
    m1, m2, J, h, g, gamma, c22, c23, c33, F_D = _symbols(ms)
    qG, q1, q2, q3 = _coords(ms)
    return [
        F_D - (m1 + m2) * g,
        F_D - m1 * g - c22 * (q1 + q2) - c23 * q3,
        m2 * g - c22 * (q1 + q2) - c23 * q3,
        m2 * g * h * (sm.cos(gamma) - q3 * sm.sin(gamma)) - c23 * (q1 + q2) - c33 * q3,
    ]


def _published_3_10_terms(p, q, qdd):
    """The three equations of (3.10) as arrays of terms (lhs - rhs)."""
    m1, m2, J, h, g, gamma = (p[k] for k in ("m1", "m2", "J_O2", "h", "g", "gamma"))
    c22, c23, c33, F_D = (p[k] for k in ("c22", "c23", "c33", "F_D"))
    _, q2, q3 = q
    qGdd, q2dd, q3dd = qdd
    hc = h * np.cos(gamma)
    r = m2 / m1 * hc
    return [
        np.array([(m1 + m2) * qGdd, -F_D, (m1 + m2) * g]),
        np.array(
            [
                q2dd,
                q3dd * hc,
                c22 * (m1 + m2) / (m1 * m2) * q2,
                (c23 * m1 + c22 * m2 * hc) / (m1 * m2) * q3,
                -F_D / (m1 + m2),
            ]
        ),
        np.array(
            [
                q2dd * (m1 + m2) * m2 * hc / m1,
                q3dd * (J + (m2 * hc) ** 2 / m1),
                q2 * (m1 + m2) / m1 * (c23 + c22 * r),
                q3 * (2 * c23 * r + c22 * r**2 + c33 + m2 * g * h * np.sin(gamma)),
                -F_D * r,
            ]
        ),
    ]


def _u_to_qdot(ms):
    return {u: e for u, e in ms.kinematics.u_of_qdot.items()}


def test_kinetic_energy_of_the_declared_bodies_is_the_catalogue_T():
    ms = cached_system(NAME)
    N = ms.frame
    T = sum(b.kinetic_energy(N) for b in ms.bodies)
    T = sm.sympify(T).xreplace(_u_to_qdot(ms))
    assert sm.simplify(sm.expand(T - _catalogue_T(ms))) == 0


def test_generalized_forces_of_the_loads_are_the_published_3_6():
    ms = cached_system(NAME)
    N = ms.frame
    qG, q1, q2, q3 = _coords(ms)
    u_of = dict(zip(ms.coordinates, ms.speeds))
    speeds = [u_of[q] for q in (qG, q1, q2, q3)]
    Q = [sm.S.Zero] * 4
    for load in ms.loads:
        if isinstance(load, me.Force):
            v = load.point.vel(N)
        else:
            v = load.frame.ang_vel_in(N)
        for r, u in enumerate(speeds):
            Q[r] += load.vector.dot(v.diff(u, N))
    for got, expected in zip(Q, _published_Q(ms)):
        assert sm.expand(got - expected) == 0


def test_declared_potential_energy_gives_the_conservative_part_of_3_6():
    """-dV/dq equals (3.6) (the drive force is constant, so conservative)."""
    ms = cached_system(NAME)
    V = ms.potential_energy
    for q, expected in zip(_coords(ms), _published_Q(ms)):
        assert sm.expand(-V.diff(q) - expected) == 0


def test_dependent_solution_is_3_8_and_satisfies_the_constraint():
    ms = cached_system(NAME)
    m1, m2, J, h, g, gamma, *_ = _symbols(ms)
    qG, q1, q2, q3 = _coords(ms)
    f1 = ms.dependent_solutions[q1]
    expected = m2 / m1 * q2 + m2 / m1 * q3 * h * sm.cos(gamma)
    assert sm.expand(f1 - expected) == 0
    (c,) = ms.holonomic_constraints
    assert sm.expand(c.xreplace({q1: f1})) == 0


def _modified_lagrange(ms, T, Q, f1):
    """(3.7): E_j - Q_j - (Q_1 + Phi_1) df1/dq_j for j = G, 2, 3, with
    E = d/dt dT/dq' - dT/dq and Phi_1 = -E_1, then q1 -> f1."""
    qG, q1, q2, q3 = _coords(ms)
    coords = [qG, q1, q2, q3]

    def E(q):
        return T.diff(q.diff(t)).diff(t) - T.diff(q)

    Phi1 = -E(q1)
    eqs = [E(q) - Q[coords.index(q)] - (Q[1] + Phi1) * f1.diff(q) for q in (qG, q2, q3)]
    rep = {q1.diff(t, 2): f1.diff(t, 2), q1.diff(t): f1.diff(t), q1: f1}
    return [sm.expand(e.subs(rep)) for e in eqs]


def _symbolic_3_10(ms):
    m1, m2, J, h, g, gamma, c22, c23, c33, F_D = _symbols(ms)
    qG, _, q2, q3 = _coords(ms)
    hc = h * sm.cos(gamma)
    r = m2 / m1 * hc
    dd = lambda q: q.diff(t, 2)
    return [
        (m1 + m2) * dd(qG) - F_D + (m1 + m2) * g,
        dd(q2)
        + dd(q3) * hc
        + c22 * (m1 + m2) / (m1 * m2) * q2
        + (c23 * m1 + c22 * m2 * hc) / (m1 * m2) * q3
        - F_D / (m1 + m2),
        dd(q2) * (m1 + m2) * m2 * hc / m1
        + dd(q3) * (J + (m2 * hc) ** 2 / m1)
        + q2 * (m1 + m2) / m1 * (c23 + c22 * r)
        + q3 * (2 * c23 * r + c22 * r**2 + c33 + m2 * g * h * sm.sin(gamma))
        - F_D * r,
    ]


def test_catalogue_convention_reproduces_3_10_and_the_printed_sign_does_not():
    """An analytic derivation by (3.7): the catalogue's T yields (3.10)
    exactly (equation 2 up to the factor m2 (m1 + m2) / m1); the printed
    m1 (qG' - q1')^2 does not."""
    ms = cached_system(NAME)
    m1, m2, *_ = _symbols(ms)
    qG, q1, q2, q3 = _coords(ms)
    f1 = ms.dependent_solutions[q1]
    Q = _published_Q(ms)
    factors = [1, m2 * (m1 + m2) / m1, 1]
    good = _modified_lagrange(ms, _catalogue_T(ms), Q, f1)
    for eq, pub, k in zip(good, _symbolic_3_10(ms), factors):
        assert sm.simplify(eq - k * pub) == 0
    bad = _modified_lagrange(ms, _catalogue_T(ms, sign_body1=-1), Q, f1)
    assert any(
        sm.simplify(eq - k * pub) != 0
        for eq, pub, k in zip(bad, _symbolic_3_10(ms), factors)
    )


def test_published_3_10_holds_for_kane():
    ms = cached_system(NAME)
    p = {str(k): v for k, v in ms.parameters.items()}
    model = cached_eom("kane", NAME).numeric()
    names = [str(q) for q in ms.coordinates]
    idx = [names.index(f"{n}(t)") for n in ("qG", "q2", "q3")]
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        qdd = model.coordinate_accelerations(t0, q, qd)
        for terms in _published_3_10_terms(p, q[idx], qdd[idx]):
            residual = abs(terms.sum()) / np.max(np.abs(terms))
            assert residual < 1e-10, (seed, residual, terms)


def test_energy_is_conserved_as_declared():
    """T + V (V with the constant drive as a potential) is constant: its
    rate, formed from the declared bodies and potential, vanishes with the
    accelerations of Kane's equations."""
    ms = cached_system("kolev_manipulator")
    assert ms.energy_conserved
    rate = power_balance(ms)
    model = cached_eom("kane", "kolev_manipulator").numeric()
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        terms = np.array(
            rate(q, qd, model.coordinate_accelerations(t0, q, qd)), dtype=float
        )
        assert abs(terms.sum()) < 1e-10 * np.max(np.abs(terms)), (seed, terms)
