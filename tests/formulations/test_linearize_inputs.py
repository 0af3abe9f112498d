"""linearize(eom, point, inputs=[F]) for an input given as a function of
time, against sympy's KanesMethod.linearize(A_and_B=True) with r = [F]."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from formulations import get_formulation
from numeric.linearize import linearize
from systems import MechanicalSystem

t = me.dynamicsymbols._t


def cart_pendulum():
    """sympy's cart-pendulum of System's documentation (test_system_class
    ``test_cart_pendulum_kanes``): a prismatic and a pin joint, gravity,
    the force F(t) on the cart (prescribed sin(t)/2) and a torsion spring."""
    g, l, mc, mp, k = sm.symbols("g l mc mp k")
    F, qp, qc, up, uc = me.dynamicsymbols("F qp qc up uc")
    rail = me.RigidBody("rail")
    cart = me.RigidBody("cart", mass=mc)
    bob = me.Particle("bob", mass=mp)
    bob_frame = me.ReferenceFrame("bob_frame")
    system = me.System.from_newtonian(rail)
    slider = me.PrismaticJoint("slider", rail, cart, qc, uc, joint_axis=rail.x)
    pin = me.PinJoint(
        "pin",
        cart,
        bob,
        qp,
        up,
        joint_axis=cart.z,
        child_interframe=bob_frame,
        child_point=l * bob_frame.y,
    )
    system.add_joints(slider, pin)
    system.apply_uniform_gravity(-g * system.y)
    system.add_loads((cart.masscenter, F * rail.x))
    system.add_actuators(me.TorqueActuator(k * qp, cart.z, bob_frame, cart))
    values = {g: 9.81, l: 0.8, mc: 1.5, mp: 0.7, k: 0.4}
    ms = MechanicalSystem(
        name="cart_pendulum_input",
        system=system,
        parameters=values,
        initial_state={qp: 0.4},
        specified={F: sm.sin(t) / 2},
    )
    return ms, system, values, (F, qc, qp, uc, up)


@pytest.fixture(scope="module")
def cart():
    ms, system, values, syms = cart_pendulum()
    system.form_eoms()
    return ms, system.eom_method, values, syms


# (t0, qc, qp, uc, up): an equilibrium at F = 0, and a general state.
POINTS = [(0.0, 0.3, 0.0, 0.0, 0.0), (1.1, -0.2, 0.5, 0.7, -1.3)]


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
def test_input_function_of_time_gives_sympys_B(cart, name):
    ms, km, values, (F, qc, qp, uc, up) = cart
    eom = get_formulation(name).derive(ms)
    for t0, qcv, qpv, ucv, upv in POINTS:
        Fv = np.sin(t0) / 2
        op = {qc: qcv, qp: qpv, uc: ucv, up: upv, F: Fv}
        # Away from equilibrium sympy's A holds the speed rates: give them
        # from its own equations.
        M = np.array(km.mass_matrix.xreplace(op).xreplace(values), float)
        f = np.array(km.forcing.xreplace(op).xreplace(values), float)
        ud = np.linalg.solve(M, f).ravel()
        op |= {uc.diff(t): ud[0], up.diff(t): ud[1]}
        A_s, B_s, r = km.linearize(op_point=op, A_and_B=True)
        assert list(r) == [F]
        A_s = np.array(A_s.xreplace(values).evalf(), dtype=float)
        B_s = np.array(B_s.xreplace(values).evalf(), dtype=float)
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
    eom = get_formulation("kane").derive(ms)
    with pytest.raises(ValueError, match=r"valid: .*'F'"):
        linearize(eom, (0.0, np.zeros(2), np.zeros(2)), inputs=["G"])
