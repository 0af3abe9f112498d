"""The two-panel solar array against the published equations (26), (27) of
``kane_method_solar_panels_ru.txt`` (re-derived and confirmed in the
catalogue), with T1, T12 replaced by the declaration's documented spring
laws ``T1 = -k1 phi1 - b1 phi1'``, ``T12 = -k12 (phi2 - pi) - b12 phi2'``."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.systems import get_system

N_STATES = 20


def published_terms(q, qd, qdd, p, damped=False):
    """The additive terms of (26) and (27), transcribed from the slides.

    Returns two lists of numbers whose sums are the left-hand sides.
    """
    phi1, phi2 = q
    d1, d2 = qd
    a1, a2 = qdd
    J1, J2, L1, L2, m1, m2 = (p[k] for k in ("J1", "J2", "L1", "L2", "m1", "m2"))
    T1 = -p["k1"] * phi1 - (p["b1"] * d1 if damped else 0.0)
    T12 = -p["k12"] * (phi2 - np.pi) - (p["b12"] * d2 if damped else 0.0)
    eq26 = [
        -J1 * a1,
        -(L1**2) * (m1 + 4 * m2) * a1,
        -(J2 + L2**2 * m2) * (a1 + a2),
        2 * L1 * L2 * m2 * (2 * a1 + a2) * np.cos(phi2),
        -2 * L1 * L2 * m2 * (2 * d1 + d2) * d2 * np.sin(phi2),
        T1,
    ]
    eq27 = [
        2 * L1 * L2 * m2 * d1**2 * np.sin(phi2),
        2 * L1 * L2 * m2 * a1 * np.cos(phi2),
        -(J2 + L2**2 * m2) * (a1 + a2),
        T12,
    ]
    return eq26, eq27


def _parameters(ms):
    return {str(k): v for k, v in ms.parameters.items()}


@pytest.mark.parametrize("damped", [False, True], ids=["undamped", "damped"])
def test_kane_satisfies_published_equations(damped):
    ms = get_system("solar_panels", damped=damped)
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    p = _parameters(ms)
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        qdd = model.coordinate_accelerations(t0, q, qd)
        for terms in published_terms(q, qd, qdd, p, damped):
            scale = sum(abs(x) for x in terms)
            assert abs(sum(terms)) <= 1e-10 * scale, (seed, terms)


def test_published_equations_hold_symbolically():
    """Kane's accelerations, substituted into (26), (27), simplify to 0."""
    ms = get_system("solar_panels")
    eom = get_formulation("kane", count_ops=False).derive(ms)
    phi1, phi2 = ms.coordinates
    u1, u2 = ms.speeds
    s = {str(x): x for x in ms.parameters}
    J1, J2, L1, L2, m1, m2 = (s[k] for k in ("J1", "J2", "L1", "L2", "m1", "m2"))
    a1, a2 = sm.symbols("a1 a2")
    T1 = -s["k1"] * phi1
    T12 = -s["k12"] * (phi2 - sm.pi)
    # u = phi' here, so phi'' = u' and phi' = u.
    eq26 = (
        -J1 * a1
        - L1**2 * (m1 + 4 * m2) * a1
        - (J2 + L2**2 * m2) * (a1 + a2)
        + 2
        * L1
        * L2
        * m2
        * ((2 * a1 + a2) * sm.cos(phi2) - (2 * u1 + u2) * u2 * sm.sin(phi2))
        + T1
    )
    eq27 = (
        2 * L1 * L2 * m2 * (u1**2 * sm.sin(phi2) + a1 * sm.cos(phi2))
        - (J2 + L2**2 * m2) * (a1 + a2)
        + T12
    )
    M = sm.Matrix(eom.mass_matrix)
    f = sm.Matrix(eom.forcing)
    assert list(eom.unknowns) == [u1.diff(), u2.diff()]
    sol = M.LUsolve(f)
    for eq in (eq26, eq27):
        residual = eq.subs({a1: sol[0], a2: sol[1]})
        assert sm.simplify(sm.together(residual)) == 0


def test_speeds_are_coordinate_rates_and_stowed_start():
    ms = get_system("solar_panels")
    t0, q, qd = ms.states.consistent_initial_state()
    np.testing.assert_allclose(q, [np.pi / 2, 0.0])
    np.testing.assert_allclose(qd, [0.0, 0.0])
    t = me.dynamicsymbols._t
    for qi, ui in zip(ms.coordinates, ms.speeds):
        assert sm.simplify(ms.kinematics.qdot[qi.diff(t)] - ui) == 0


def test_deployed_state_is_the_springs_equilibrium():
    """Both spring torques vanish at phi1 = 0, phi2 = pi: no acceleration."""
    ms = get_system("solar_panels")
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    qdd = model.coordinate_accelerations(0.0, np.array([0.0, np.pi]), np.zeros(2))
    np.testing.assert_allclose(qdd, 0.0, atol=1e-12)


def test_energy_flag_follows_damping():
    assert get_system("solar_panels").energy_conserved
    assert not get_system("solar_panels", damped=True).energy_conserved


def test_damped_must_be_a_bool():
    with pytest.raises(TypeError, match="damped"):
        get_system("solar_panels", damped="yes")
