"""The four-bar linkage against the seed's published equation of motion.

Reference: kane_method_examples_fa.txt, example 2, equation (2-70)

    (m1 L1^2 + m2 L3^2 B^2) u1' + m2 L3^2 B (dB/dq . Y) u1^2
        + g (m1 L1 s1 + m2 L3 s3 B) = tau,

with the ratios of (2-47) corrected as in the catalogue,
A = q2'/q1' = L1 sin(q3 - q1) / (L2 sin(q2 - q3)),
B = q3'/q1' = L1 sin(q1 - q2) / (L3 sin(q3 - q2)), and m2 for the
misprinted m3.  Y = (1, A, B) is the column of (2-47), so
``dB/dq . Y = dB/dq1 + A dB/dq2 + B dB/dq3`` is dB/dt / u1 (the term of
(2-57), (2-58)); it is derived below by sympy from B(q).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_eom, cached_system
from helpers import power_balance

from eomcompare.formulations import get_formulation
from eomcompare.numeric.model import SingularConfigurationError
from eomcompare.systems import ConstraintError, get_system
from eomcompare.systems.four_bar import four_bar_closed_form

t = me.dynamicsymbols._t
N_STATES = 25

_q1, _q2, _q3 = sm.symbols("q1 q2 q3")
_L1, _L2, _L3 = sm.symbols("L1 L2 L3")
_A = _L1 * sm.sin(_q3 - _q1) / (_L2 * sm.sin(_q2 - _q3))
_B = _L1 * sm.sin(_q1 - _q2) / (_L3 * sm.sin(_q3 - _q2))
_dB_Y = sm.diff(_B, _q1) + sm.diff(_B, _q2) * _A + sm.diff(_B, _q3) * _B
_args = (_q1, _q2, _q3, _L1, _L2, _L3)
A_ratio = sm.lambdify(_args, _A)
B_ratio = sm.lambdify(_args, _B)
dB_dot_Y = sm.lambdify(_args, _dB_Y)


def _params(ms):
    return {str(k): v for k, v in ms.parameters.items()}


def _lengths(p):
    return p["L1"], p["L2"], p["L3"], p["L4"]


def _loop(q23, q1, L1, L2, L3, L4):
    q2, q3 = q23
    return [
        L1 * np.cos(q1) + L2 * np.cos(q2) - L3 * np.cos(q3),
        L1 * np.sin(q1) + L2 * np.sin(q2) - L3 * np.sin(q3) - L4,
    ]


def _solve_loop(q1, guess, L1, L2, L3, L4):
    """Newton on the loop equations for (q2, q3) at a given crank angle."""
    x = np.array(guess, dtype=float)
    for _ in range(30):
        r = np.array(_loop(x, q1, L1, L2, L3, L4))
        J = np.array(
            [
                [-L2 * np.sin(x[0]), L3 * np.sin(x[1])],
                [L2 * np.cos(x[0]), -L3 * np.cos(x[1])],
            ]
        )
        x -= np.linalg.solve(J, r)
    assert np.max(np.abs(_loop(x, q1, L1, L2, L3, L4))) < 1e-14
    return x


def test_published_equation_2_70_holds_for_kane():
    ms = cached_system("four_bar")
    p = _params(ms)
    L1, L2, L3, _ = _lengths(p)
    model = cached_eom("kane", "four_bar").numeric()
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        q1, q2, q3 = q
        u1 = qd[0]
        u1d = model.coordinate_accelerations(t0, q, qd)[0]
        B = B_ratio(q1, q2, q3, L1, L2, L3)
        dBY = dB_dot_Y(q1, q2, q3, L1, L2, L3)
        terms = np.array(
            [
                (p["m1"] * L1**2 + p["m2"] * L3**2 * B**2) * u1d,
                p["m2"] * L3**2 * B * dBY * u1**2,
                p["g"] * (p["m1"] * L1 * np.sin(q1) + p["m2"] * L3 * np.sin(q3) * B),
                -p["tau"],
            ]
        )
        residual = abs(terms.sum()) / np.max(np.abs(terms))
        assert residual < 1e-10, (seed, residual, terms)


def test_ratios_match_finite_differences_of_the_loop_equations():
    ms = cached_system("four_bar")
    L = _lengths(_params(ms))
    h = 1e-6
    for seed in range(N_STATES):
        _, q, _ = ms.states.random_state(seed)
        q1, q2, q3 = q
        plus = _solve_loop(q1 + h, [q2, q3], *L)
        minus = _solve_loop(q1 - h, [q2, q3], *L)
        fd = (plus - minus) / (2 * h)
        A = A_ratio(q1, q2, q3, *L[:3])
        B = B_ratio(q1, q2, q3, *L[:3])
        np.testing.assert_allclose([A, B], fd, rtol=1e-6, atol=1e-8)
        # The ratios as printed in (2-47) have the opposite sign.
        A_printed = L[0] * np.sin(q3 - q1) / (L[1] * np.sin(q3 - q2))
        assert not np.isclose(A_printed, fd[0], rtol=1e-3)


def test_closed_form_solves_the_loop_and_random_states_stay_on_its_branch():
    ms = cached_system("four_bar")
    L = _lengths(_params(ms))
    q1 = np.linspace(-np.pi, np.pi, 181)
    q2, q3 = four_bar_closed_form(q1, *L)
    np.testing.assert_allclose(_loop((q2, q3), q1, *L), 0.0, atol=1e-13)
    for seed in range(N_STATES):
        _, q, _ = ms.states.random_state(seed)
        expected = np.array(four_bar_closed_form(q[0], *L))
        wrapped = np.angle(np.exp(1j * (q[1:] - expected)))
        np.testing.assert_allclose(wrapped, 0.0, atol=1e-10)


def test_declared_dependent_solutions_are_the_closed_form():
    ms = cached_system("four_bar")
    num = dict(ms.parameters)
    q1s, q2s, q3s = ms.coordinates
    L = _lengths(_params(ms))
    for q1 in (-2.0, 0.3, 1.7):
        expected = four_bar_closed_form(q1, *L)
        got = [
            float(ms.dependent_solutions[qi].subs(num).subs(q1s, q1))
            for qi in (q2s, q3s)
        ]
        np.testing.assert_allclose(got, expected, atol=1e-13)


def test_redundant_and_minimal_coordinates_give_the_same_crank_acceleration():
    red = cached_system("four_bar")
    L = _lengths(_params(red))
    m_red = cached_eom("kane", "four_bar").numeric()
    m_min = (
        get_formulation("kane")
        .derive(get_system("four_bar", coordinates="minimal"))
        .numeric()
    )
    rng = np.random.default_rng(7)
    for q1, u1 in zip(rng.uniform(-np.pi, np.pi, 20), rng.uniform(-3, 3, 20)):
        q2, q3 = four_bar_closed_form(q1, *L)
        A = A_ratio(q1, q2, q3, *L[:3])
        B = B_ratio(q1, q2, q3, *L[:3])
        a_red = m_red.coordinate_accelerations(0.0, [q1, q2, q3], [u1, A * u1, B * u1])[
            0
        ]
        a_min = m_min.coordinate_accelerations(0.0, [q1], [u1])[0]
        assert abs(a_red - a_min) <= 1e-10 * max(1.0, abs(a_red))


def _change_point(ms):
    """A change-point linkage (0.2 + 1.0 = 0.7 + 0.5) at the configuration
    where coupler and rocker are folded onto one line along j:
    P1 = (0, -0.2), P2 = (0, 0.5), D = (0, 1.0)."""
    L4 = next(p for p in ms.parameters if str(p) == "L4")
    params = {L4: 1.0}
    q = np.array([-np.pi / 2, np.pi / 2, -np.pi / 2])
    return params, q


def test_dead_point_raises_constraint_error_not_nan():
    ms = cached_system("four_bar")
    params, q = _change_point(ms)
    assert np.max(np.abs(ms.states.holonomic_residual(0.0, q, params))) < 1e-12
    with pytest.raises(ConstraintError, match="singular configuration"):
        ms.states.solve_dependent_speeds(0.0, q, [1.0], params)


def test_dead_point_raises_from_the_numeric_model():
    params, q = _change_point(cached_system("four_bar"))
    model = cached_eom("kane", "four_bar").numeric(params)
    with pytest.raises(SingularConfigurationError, match="singular"):
        # Coupler and rocker rates are indeterminate here: any values do.
        model.coordinate_accelerations(0.0, q, [1.0, 0.0, 0.0])


def test_unknown_coordinates_option_names_the_choices():
    with pytest.raises(ValueError, match="redundant"):
        get_system("four_bar", coordinates="absolute")


def test_energy_is_conserved_as_declared():
    """T + V (V with the constant drive as a potential) is constant: its
    rate, formed from the declared bodies and potential, vanishes with the
    accelerations of Kane's equations."""
    ms = cached_system("four_bar")
    assert ms.energy_conserved
    rate = power_balance(ms)
    model = cached_eom("kane", "four_bar").numeric()
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        terms = np.array(
            rate(q, qd, model.coordinate_accelerations(t0, q, qd)), dtype=float
        )
        assert abs(terms.sum()) < 1e-10 * np.max(np.abs(terms)), (seed, terms)
