"""Systems written as sympy.physics.mechanics users write them (joints,
actuators, ``System.from_newtonian``), checked with every formulation
against sympy's asserted results or textbook equations."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from sympy_ports import (
    double_pendulum_closed_form,
    joints_cart_pendulum,
    joints_cart_pendulum_asserted,
    joints_double_pendulum,
)

from eomcompare.formulations import formulation_names, get_formulation

t = me.dynamicsymbols._t

#: The default comparison's formulations; the tree algorithms
#: (kane_composite, kane_articulated) are checked against kane on every
#: catalogue system in tests/test_contract.py, and against Pinocchio and
#: kane in tests/systems/test_robots_articulated_body.py and
#: tests/formulations/test_composite.py.
COMPARED = formulation_names(default_only=True)


@pytest.fixture(scope="module")
def cart_pendulum():
    return joints_cart_pendulum()


def test_ground_constants_need_no_values_and_are_noted(cart_pendulum):
    ms = cart_pendulum
    note = " ".join(ms.notes)
    for name in ("rail_mass", "rail_izz", "cart_izz"):
        assert name in note
    # The cart's mass does enter: it is not among them.
    assert "mc" not in note.replace("masscenter", "")


def test_actuator_loads_act(cart_pendulum):
    kinds = [type(ld).__name__ for ld in cart_pendulum.loads]
    assert kinds.count("Torque") == 2


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_joints_cart_pendulum_matches_sympys_asserted_equations(cart_pendulum, name):
    ms = cart_pendulum
    M, f = joints_cart_pendulum_asserted()
    qp, qc, up, uc, F = me.dynamicsymbols("qp qc up uc F")
    values = {sm.Symbol(str(k)): v for k, v in ms.parameters.items()}
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    order = [str(q.func) for q in ms.coordinates]
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed)
        state = dict(zip(order, q)) | {"d" + k: v for k, v in zip(order, qd)}
        num = {qp: state["qp"], up: state["dqp"], F: np.sin(t0) / 2} | values
        Mn = np.array(M.xreplace(num), dtype=float)
        fn = np.array(f.xreplace(num), dtype=float).ravel()
        # sympy's speeds are (uc, up) = (qc', qp').
        expected = dict(zip(["qc", "qp"], np.linalg.solve(Mn, fn)))
        got = model.coordinate_accelerations(t0, q, qd)
        np.testing.assert_allclose(
            got, [expected[k] for k in order], rtol=1e-10, atol=1e-10
        )


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_joints_double_pendulum_matches_the_textbook(name):
    ms = joints_double_pendulum()
    assert [str(q.func) for q in ms.coordinates] == ["q1", "q2"]
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed)
        np.testing.assert_allclose(
            model.coordinate_accelerations(t0, q, qd),
            double_pendulum_closed_form(t0, q, qd),
            rtol=1e-10,
            atol=1e-10,
        )


def test_an_auxiliary_speed_alone_gives_its_generalized_constraint_force():
    """A particle on a horizontal rail (coordinate q along N.x) with an
    auxiliary speed across it (N.y) and gravity -m g N.y: the rail's normal
    force, m g, is the generalized force that keeps the auxiliary speed zero
    (no reaction written in the loads, so it is named by the speed)."""
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import MechanicalSystem

    q, u, ua = me.dynamicsymbols("q u ua")
    m, g = sm.symbols("m g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", q * N.x)
    P.set_vel(N, u * N.x + ua * N.y)
    system = me.System(N, O)
    system.add_coordinates(q)
    system.add_speeds(u)
    system.add_auxiliary_speeds(ua)
    system.add_kdes(q.diff() - u)
    system.add_bodies(me.Particle("p", P, m))
    system.add_loads(me.Force(P, -m * g * N.y + sm.cos(q) * N.x))
    ms = MechanicalSystem(
        name="aux", system=system, parameters={m: 1.5, g: 9.81}, initial_state={}
    )
    assert ms.u_aux == (ua,)
    for name in ("kane", "gibbs_appell", "sympy_kane", "lagrange"):
        model = get_formulation(name, count_ops=False).derive(ms).numeric()
        t0, qv, qd = ms.states.random_state(seed=3)
        assert model.constraint_forces(t0, qv, qd) == pytest.approx(
            {"ua": 1.5 * 9.81}, rel=1e-12
        ), name
        # The motion along the rail ignores the auxiliary speed.
        assert model.coordinate_accelerations(t0, qv, qd)[0] == pytest.approx(
            np.cos(qv[0]) / 1.5, rel=1e-12
        ), name
