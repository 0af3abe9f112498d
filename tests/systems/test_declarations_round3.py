"""Declarations as sympy's tests and Kane & Levinson's exercises write
them: accepted, each formulation answering or refusing with the reason."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from pydy_ports import kane_levinson_ex_11_7, kane_levinson_ex_11_7_asserted

from formulations import (
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
def test_coincident_point_is_no_obstacle_to_any_formulation():
    """B^'s velocity is not its position's rate, but only a load acts
    there: nothing is recorded against the declaration, and every
    formulation gives the book's u' = X^-1 Y."""
    ms = kane_levinson_ex_11_7()
    assert ms.declaration_analysis.velocities_are_derivatives
    X, Y = kane_levinson_ex_11_7_asserted()
    for name in COMPARED:
        model = get_formulation(name).derive(ms).numeric()
        for seed in range(2):
            t0, q, qd = ms.random_state(seed)
            u = ms.speeds_from_rates(t0, q, qd)
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
    and the Lagrange family refuses naming the quaternion."""
    from sympy_ports import quaternion_top

    ms = quaternion_top()
    assert ms.states.norm_invariants == ((0, 1, 2, 3),)
    I1, I2, I3, T = 1.0, 2.0, 3.0, 0.5
    for name in ["kane", "gibbs_appell", "sympy_kane"]:
        model = get_formulation(name).derive(ms).numeric()
        for seed in range(3):
            t0, q, qd = ms.random_state(seed)
            assert abs(np.linalg.norm(q) - 1) < 1e-12
            w1, w2, w3 = u = ms.speeds_from_rates(t0, q, qd)
            want = [
                (I2 - I3) * w2 * w3 / I1,
                (I3 - I1) * w3 * w1 / I2,
                ((I1 - I2) * w1 * w2 + T * np.sin(t0)) / I3,
            ]
            np.testing.assert_allclose(
                model.speed_derivatives(t0, q, u), want, rtol=1e-10, err_msg=name
            )
    for name in LAGRANGE_FAMILY:
        with pytest.raises(UnsupportedSystemError) as info:
            get_formulation(name).derive(ms)
        assert "quaternion ['lambda_0', 'lambda_1', 'lambda_2', 'lambda_3']" in str(
            info.value
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


def test_sympys_implicit_kinematics_body():
    """Declared verbatim (test_kane.py::test_implicit_kinematics): lambda_0
    left out of the initial state is solved (Newton from 0 alone fails: 0
    is a critical point of the norm), the norm's derivative among the
    kinematic equations warns of nothing, Kane's method equals sympy's
    KanesMethod, and the Lagrange family refuses naming the quaternion."""
    import warnings

    from sympy_ports import implicit_kinematics_body

    from systems.redundancy import RedundantConstraintWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", RedundantConstraintWarning)
        ms = implicit_kinematics_body()
        assert ms.velocity_constraints == ()
    _, q, _ = ms.consistent_initial_state()
    lam0 = list(ms.coordinates).index(ms.q_dep[0])
    assert q[lam0] == pytest.approx(np.sqrt(1 - 0.01 - 0.04 - 0.09), rel=1e-12)
    model = get_formulation("kane").derive(ms).numeric()
    for seed in range(2):
        t0, q, qd = ms.random_state(seed)
        u = ms.speeds_from_rates(t0, q, qd)
        np.testing.assert_allclose(
            model.speed_derivatives(t0, q, u),
            _sympy_speed_rates(ms, t0, q, u),
            rtol=1e-10,
            atol=1e-10,
        )
    for name in LAGRANGE_FAMILY:
        with pytest.raises(UnsupportedSystemError, match=r"quaternion \['lambda_0"):
            get_formulation(name).derive(ms)
