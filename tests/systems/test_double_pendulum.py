"""Huston's double rod pendulum (Fig. 11.4.3) against the book's printed
partial velocities (11.4.24), and the n-link pendulum against an analytic
one-link pendulum and against the double rod pendulum."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm

from eomcompare.formulations import get_formulation
from eomcompare.systems import get_system

N_STATES = 20


@pytest.fixture(scope="module")
def huston():
    ms = get_system("double_pendulum")
    return ms, get_formulation("kane", count_ops=False).derive(ms)


def _by_name(ms, values):
    """Parameter values keyed by the declaration's own symbols."""
    syms = {str(x): x for x in ms.parameters}
    return {syms[k]: v for k, v in values.items()}


def _zero_in(vec, frame):
    if vec == 0:
        return True
    return sm.simplify(vec.to_matrix(frame)) == sm.zeros(3, 1)


def test_partial_velocities_match_huston_11_4_24(huston):
    """v_G1 = (l/2)(cos th1 n2 - sin th1 n1), 0;
    v_G2 = l (cos th1 n2 - sin th1 n1), (l/2)(cos th2 n2 - sin th2 n1)."""
    ms, eom = huston
    N = ms.frame
    n1, n2 = N.x, N.y
    th1, th2 = ms.coordinates
    l = {str(x): x for x in ms.parameters}["l"]
    e1 = sm.cos(th1) * n2 - sm.sin(th1) * n1
    e2 = sm.cos(th2) * n2 - sm.sin(th2) * n1
    printed = {"G1": (l / 2 * e1, 0 * n1), "G2": (l * e1, l / 2 * e2)}
    pv = eom.extras["partial_velocities"]
    for point, expected in printed.items():
        got = pv[point]
        assert len(got) == len(ms.speeds) == 2
        for vr, er in zip(got, expected):
            assert _zero_in(vr - er, N), (point, vr, er)


def test_partial_angular_velocities_match_huston_11_4_24(huston):
    """w_B1 = n3, 0;  w_B2 = 0, n3."""
    ms, eom = huston
    N = ms.frame
    n3 = N.z
    printed = {"B1": (n3, 0 * n3), "B2": (0 * n3, n3)}
    pw = eom.extras["partial_angular_velocities"]
    for frame, expected in printed.items():
        got = pw[frame]
        assert len(got) == 2
        for wr, er in zip(got, expected):
            assert _zero_in(wr - er, N), (frame, wr, er)


def test_one_link_pendulum_matches_the_analytic_pendulum():
    """A uniform rod of mass m, length l pinned at O, at angle q from the
    horizontal x axis, gravity -y.  About O, I_O = m l^2/3 and the weight at
    the mid-point G = (l/2)(cos q, sin q) has moment
    (G - O) x (-m g y) = -(m g l/2) cos q z, so

        (m l^2/3) q'' = -(m g l/2) cos q   =>   q'' = -(3 g / (2 l)) cos q,

    independent of the mass and of the rate q'.
    """
    ms = get_system("n_link_pendulum", n=1)
    g, l = 9.81, 0.7
    model = (
        get_formulation("kane")
        .derive(ms)
        .numeric(_by_name(ms, {"g": g, "l1": l, "m1": 2.5}))
    )
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        got = model.coordinate_accelerations(t0, q, qd)[0]
        assert got == pytest.approx(
            -3 * g / (2 * l) * np.cos(q[0]), rel=1e-12, abs=1e-12
        )


def test_two_link_absolute_chain_is_the_double_rod_pendulum():
    """Same accelerations after mapping the conventions.

    Huston's rod direction is cos(th) n1 + sin(th) n2 with n1 down (along
    gravity) and n2 horizontal; the chain's is cos(q) x + sin(q) y with
    gravity -y.  Taking n1 = -y, n2 = x (so n3 = n1 x n2 = z, the same
    rotation sense): cos(th) (-y) + sin(th) x = cos(q) x + sin(q) y holds
    for q = th - pi/2.  Hence q_i = th_i - pi/2, q_i' = th_i', q_i'' = th_i''.
    """
    m, l, g = 1.3, 0.8, 9.81
    dp = get_system("double_pendulum")
    chain = get_system("n_link_pendulum", n=2, angles="absolute")
    m_dp = (
        get_formulation("kane")
        .derive(dp)
        .numeric(_by_name(dp, {"m": m, "l": l, "g": g}))
    )
    m_ch = (
        get_formulation("kane")
        .derive(chain)
        .numeric(_by_name(chain, {"m1": m, "m2": m, "l1": l, "l2": l, "g": g}))
    )
    for seed in range(N_STATES):
        t0, th, thd = dp.states.random_state(seed)
        a_dp = m_dp.coordinate_accelerations(t0, th, thd)
        a_ch = m_ch.coordinate_accelerations(t0, th - np.pi / 2, thd)
        np.testing.assert_allclose(a_ch, a_dp, rtol=1e-10, atol=1e-10)
