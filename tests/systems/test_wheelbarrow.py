"""The wheelbarrow against its published equations of motion.

Reference: ``kane_method_examples_fa.txt``, example 3 (after Ginsberg),
equations (2-111) and (2-112) with the misprint corrected as listed in the
catalogue: (2-98), (2-100) and (2-111) print u2' where u1' is meant, so the
first equation reads

    (m_w + m_wb + J/r^2) u1' + m_wb l u2^2 = 2 R cos(beta),
    (I + J/2 + m_wb l^2) u2' - l m_wb u1 u2 = -2 p R sin(beta),

with u1 = v the forward speed of the wheel centre and u2 = theta'.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import cached_eom, cached_system

N_STATES = 25


def _params(ms):
    return {str(k): v for k, v in ms.parameters.items()}


def _published_residuals(P, u1, u2, u1d, u2d):
    lhs1 = (P["m_w"] + P["m_wb"] + P["J"] / P["r"] ** 2) * u1d + P["m_wb"] * P[
        "l"
    ] * u2**2
    rhs1 = 2 * P["R"] * np.cos(P["beta"])
    lhs2 = (P["I"] + P["J"] / 2 + P["m_wb"] * P["l"] ** 2) * u2d - P["l"] * P[
        "m_wb"
    ] * u1 * u2
    rhs2 = -2 * P["p"] * P["R"] * np.sin(P["beta"])
    return (
        abs(lhs1 - rhs1) / max(abs(rhs1), abs(lhs1), 1.0),
        abs(lhs2 - rhs2) / max(abs(rhs2), abs(lhs2), 1.0),
    )


def _speeds_and_rates(P, q, qd, qdd):
    """(u1, u2, u1', u2') from the kinematic relations (2-72)-(2-76).

    Coordinates are (phi, theta, X_c, Y_c).  u1 = v = r phi' (rolling,
    (2-76)) and u2 = theta'.  The rate u1' is also the derivative of
    X_c' cos(theta) + Y_c' sin(theta), which the test uses as a second,
    independent route (the lateral term theta' (Y_c' cos - X_c' sin)
    vanishes by the no-slip constraint).
    """
    r = P["r"]
    th = q[1]
    u1, u2 = r * qd[0], qd[1]
    u1d = r * qdd[0]
    u1d_xy = qdd[2] * np.cos(th) + qdd[3] * np.sin(th)
    u2d = qdd[1]
    return u1, u2, u1d, u2d, u1d_xy


def test_kane_satisfies_published_equations():
    ms = cached_system("wheelbarrow")
    model = cached_eom("kane", "wheelbarrow").numeric()
    P = _params(ms)
    worst = 0.0
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        qdd = model.coordinate_accelerations(t0, q, qd)
        u1, u2, u1d, u2d, u1d_xy = _speeds_and_rates(P, q, qd, qdd)
        # The wheel centre moves along b1 at speed r phi'.
        assert qd[2] == pytest.approx(u1 * np.cos(q[1]), abs=1e-12)
        assert qd[3] == pytest.approx(u1 * np.sin(q[1]), abs=1e-12)
        assert u1d_xy == pytest.approx(u1d, rel=1e-10, abs=1e-10)
        worst = max(worst, *_published_residuals(P, u1, u2, u1d, u2d))
    assert worst < 1e-10


def test_published_equations_with_other_parameters():
    """The same check with every parameter changed, so no default value can
    hide a wrong term (e.g. l = p or J = I)."""
    ms = cached_system("wheelbarrow")
    other = {
        "m_w": 3.0,
        "m_wb": 11.0,
        "l": 0.35,
        "I": 2.5,
        "J": 0.13,
        "r": 0.22,
        "R": 17.0,
        "beta": -0.7,
        "p": 0.9,
        "q": 0.45,
    }
    model = cached_eom("kane", "wheelbarrow").numeric(
        {ms_sym: other[str(ms_sym)] for ms_sym in ms.parameters}
    )
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(
            seed, parameters={k: other[str(k)] for k in ms.parameters}
        )
        qdd = model.coordinate_accelerations(t0, q, qd)
        u1, u2, u1d, u2d, _ = _speeds_and_rates(other, q, qd, qdd)
        r1, r2 = _published_residuals(other, u1, u2, u1d, u2d)
        assert max(r1, r2) < 1e-10


def test_misprinted_first_equation_is_not_satisfied():
    """The equation as printed, (m_w + m_wb) u2' + J u1'/r^2 + ... , fails:
    the correction in the catalogue is needed."""
    ms = cached_system("wheelbarrow")
    model = cached_eom("kane", "wheelbarrow").numeric()
    P = _params(ms)
    t0, q, qd = ms.states.random_state(3)
    qdd = model.coordinate_accelerations(t0, q, qd)
    u1, u2, u1d, u2d, _ = _speeds_and_rates(P, q, qd, qdd)
    printed = (
        (P["m_w"] + P["m_wb"]) * u2d
        + P["J"] * u1d / P["r"] ** 2
        + P["m_wb"] * P["l"] * u2**2
    )
    assert abs(printed - 2 * P["R"] * np.cos(P["beta"])) > 1e-3


def test_declaration_shape():
    ms = cached_system("wheelbarrow")
    assert len(ms.coordinates) == len(ms.speeds) == 4
    assert ms.degrees_of_freedom == 2
    assert len(ms.nonholonomic_constraints) == 2
    assert not ms.energy_conserved
