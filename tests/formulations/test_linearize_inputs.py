"""linearize(eom, point, inputs=[F]) for an input given as a function of
time, against sympy's KanesMethod.linearize(A_and_B=True) with r = [F]."""

from __future__ import annotations

import numpy as np
import pytest
import sympy.physics.mechanics as me
from sympy_ports import joints_cart_pendulum

from eomcompare.formulations import get_formulation
from eomcompare.numeric.linearize import linearize

t = me.dynamicsymbols._t


@pytest.fixture(scope="module")
def cart():
    """sympy's cart-pendulum (test_system_class ``test_cart_pendulum_kanes``,
    the example of System's documentation) with the force F(t) prescribed
    as sin(t)/2, and sympy's own KanesMethod of it."""
    ms = joints_cart_pendulum()
    ms.system.form_eoms()
    syms = tuple(me.dynamicsymbols("F qc qp uc up"))
    return ms, ms.system.eom_method, dict(ms.parameters), syms


# (t0, qc, qp, uc, up): an equilibrium at F = 0, and a general state.
POINTS = [(0.0, 0.3, 0.0, 0.0, 0.0), (1.1, -0.2, 0.5, 0.7, -1.3)]


@pytest.fixture(scope="module")
def sympys(cart):
    """sympy's (A, B) at each of POINTS, computed once for every
    formulation's test."""
    ms, km, values, (F, qc, qp, uc, up) = cart
    out = []
    for t0, qcv, qpv, ucv, upv in POINTS:
        op = {qc: qcv, qp: qpv, uc: ucv, up: upv, F: np.sin(t0) / 2}
        # Away from equilibrium sympy's A holds the speed rates: give them
        # from its own equations.
        M = np.array(km.mass_matrix.xreplace(op).xreplace(values), float)
        f = np.array(km.forcing.xreplace(op).xreplace(values), float)
        ud = np.linalg.solve(M, f).ravel()
        op |= {uc.diff(t): ud[0], up.diff(t): ud[1]}
        A_s, B_s, r = km.linearize(op_point=op, A_and_B=True)
        assert list(r) == [F]
        out.append(
            (
                np.array(A_s.xreplace(values).evalf(), dtype=float),
                np.array(B_s.xreplace(values).evalf(), dtype=float),
            )
        )
    return out


@pytest.mark.parametrize(
    "name",
    [
        "kane",
        "lagrange",
        "gibbs_appell",
        "modified_lagrange",
        "sympy_kane",
        "sympy_lagrange",
    ],
)
def test_input_function_of_time_gives_sympys_B(cart, sympys, name):
    ms, _, _, (F, *_) = cart
    eom = get_formulation(name, count_ops=False).derive(ms)
    for (t0, qcv, qpv, ucv, upv), (A_s, B_s) in zip(POINTS, sympys):
        q = np.array([qcv, qpv])
        qd = np.array([ucv, upv])
        lin = linearize(eom, (t0, q, qd), inputs=[F])
        assert lin.states == ("qc", "qp", "uc", "up")
        assert lin.inputs == ("F",)
        np.testing.assert_allclose(lin.B, B_s, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(lin.A, A_s, rtol=1e-7, atol=1e-7)
        # By name too, and the B column is not zero.
        assert np.abs(B_s).max() > 0.1
        np.testing.assert_allclose(
            linearize(eom, (t0, q, qd), inputs=["F"]).B, B_s, rtol=1e-8, atol=1e-9
        )


def test_unknown_input_names_the_valid_ones(cart):
    ms = cart[0]
    eom = get_formulation("kane", count_ops=False).derive(ms)
    with pytest.raises(ValueError, match=r"valid: .*'F'"):
        linearize(eom, (0.0, np.zeros(2), np.zeros(2)), inputs=["G"])


@pytest.mark.parametrize("name", ["kane", "lagrange"])
def test_input_with_parameters_at_time_zero(cart, name):
    """F(t) = F0 cos(w t), linearized at t = 0 where it is F0 (it raised
    TypeError: the parameters were left in the input's value): sympy's
    (A, B) at F = F0, and a parameter override reaches the input too."""
    import sympy as sm

    from eomcompare.systems import MechanicalSystem

    ms0, km, values, (F, qc, qp, uc, up) = cart
    F0, w = sm.symbols("F0 w")
    ms = MechanicalSystem(
        name="cart_pendulum_cos_input",
        system=ms0.system,
        parameters=dict(ms0.parameters) | {F0: 0.8, w: 3.0},
        initial_state=dict(ms0.initial_state),
        specified={F: F0 * sm.cos(w * t)},
    )
    eom = get_formulation(name, count_ops=False).derive(ms)
    q, qd = np.array([0.1, 0.4]), np.array([0.3, -0.5])
    for f0, override in [(0.8, None), (-1.5, {"F0": -1.5})]:
        op = {qc: q[0], qp: q[1], uc: qd[0], up: qd[1], F: f0}
        M = np.array(km.mass_matrix.xreplace(op).xreplace(values), float)
        f = np.array(km.forcing.xreplace(op).xreplace(values), float)
        ud = np.linalg.solve(M, f).ravel()
        op |= {uc.diff(t): ud[0], up.diff(t): ud[1]}
        A_s, B_s, _ = km.linearize(op_point=op, A_and_B=True)
        lin = linearize(eom, (0.0, q, qd), inputs=[F], parameters=override)
        np.testing.assert_allclose(
            lin.A, np.array(A_s.xreplace(values).evalf(), float), rtol=1e-7, atol=1e-7
        )
        np.testing.assert_allclose(
            lin.B, np.array(B_s.xreplace(values).evalf(), float), rtol=1e-8, atol=1e-9
        )
