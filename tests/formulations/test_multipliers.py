"""Public multipliers: ``model.multipliers(t, q, qd)`` in the convention
``M q'' = f + C^T lambda`` for every formulation that has them, checked
against sympy's LagrangesMethod (whose multipliers are the negatives) and
against Newton's law."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_eom, cached_model, cached_system

from eomcompare.formulations import get_formulation
from eomcompare.formulations.base import UnsupportedSystemError
from eomcompare.systems import MechanicalSystem

t = me.dynamicsymbols._t


def nonminimal_pendulum():
    """sympy test_lagrange::test_nonminimal_pendulum as a System (gravity
    m g N.x, the bob at (q1, q2), q1^2 + q2^2 - L^2 = 0)."""
    q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
    L, m = sm.symbols("L m")
    N = me.ReferenceFrame("N")
    pN = me.Point("N*")
    pN.set_vel(N, 0)
    P = pN.locatenew("P1", q1 * N.x + q2 * N.y)
    P.set_vel(N, u1 * N.x + u2 * N.y)
    system = me.System(N, pN)
    system.add_coordinates(q2)
    system.add_coordinates(q1, independent=False)
    system.add_speeds(u2)
    system.add_speeds(u1, independent=False)
    system.add_kdes(q1.diff() - u1, q2.diff() - u2)
    system.add_holonomic_constraints(q1**2 + q2**2 - L**2)
    system.add_bodies(me.Particle("pP", P, m))
    system.add_loads(me.Force(P, m * 9.8 * N.x))
    ms = MechanicalSystem(
        name="nonminimal_pendulum",
        system=system,
        parameters={L: 1.3, m: 0.7},
        initial_state={q2: 0.5, q1: 1.2},
        random_spread=0.8,
        speed_scale=2.0,
    )
    return ms, (q1, q2, L, m)


@pytest.fixture(scope="module")
def pendulum():
    return nonminimal_pendulum()


def _sympy_lambda(q1v, q2v, q1d, q2d, m):
    # test_nonminimal_pendulum's asserted solution of LM.solve_multipliers.
    return (19.6 * q1v + 2 * q1d**2 + 2 * q2d**2) / (4 * q1v**2 / m + 4 * q2v**2 / m)


@pytest.mark.parametrize("name", ["lagrange", "sympy_lagrange"])
def test_pendulum_multiplier_is_minus_sympys(pendulum, name):
    ms, (q1, q2, L, m) = pendulum
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    mv = ms.parameters[m]
    coords = list(ms.coordinates)
    i1, i2 = coords.index(q1), coords.index(q2)
    for seed in range(4):
        t0, q, qd = ms.states.random_state(seed=seed)
        lam = model.multipliers(t0, q, qd)
        assert lam.shape == (1,)
        ref = _sympy_lambda(q[i1], q[i2], qd[i1], qd[i2], mv)
        assert lam[0] == pytest.approx(-ref, rel=1e-10)
        # Newton: C^T lambda = 2 lambda (q1, q2) is the rod's force,
        # m q'' - m g N.x.
        qdd = model.coordinate_accelerations(t0, q, qd)
        rod = mv * qdd - np.array([9.8 * mv if c is q1 else 0.0 for c in coords])
        np.testing.assert_allclose(2 * lam[0] * q, rod, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    "name", ["kane", "gibbs_appell", "modified_lagrange", "sympy_kane"]
)
def test_formulations_without_multipliers_say_so(pendulum, name):
    ms, _ = pendulum
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    t0, q, qd = ms.states.random_state(seed=0)
    with pytest.raises(
        UnsupportedSystemError, match=rf"{name} has no Lagrange multipliers.*lagrange"
    ):
        model.multipliers(t0, q, qd)


def test_unconstrained_system_has_no_multipliers():
    # The derivation shared with the other modules; the model is this test's.
    model = cached_eom("lagrange", "double_pendulum").numeric()
    t0, q, qd = model.system.states.random_state(seed=0)
    assert model.multipliers(t0, q, qd).shape == (0,)


@pytest.fixture(scope="module")
def disc_friction():
    """The catalogue disc's friction by Newton's law at the states the
    multiplier tests read, ``[(t0, q, qd, friction)]``: the same reference
    for both formulations, computed once.  The centre's acceleration is
    that of kane's q'' (the formulations under test are Lagrange's)."""
    ms = cached_system("rolling_disc")
    kane = cached_model("kane", "rolling_disc")
    disc = ms.bodies[0]
    N = ms.frame
    q1 = ms.coordinates[0]
    Yx = sm.cos(q1) * N.x + sm.sin(q1) * N.y
    Yy = -sm.sin(q1) * N.x + sm.cos(q1) * N.y
    u_of = dict(ms.kinematics.u_of_qdot)
    a = disc.masscenter.vel(N).xreplace(u_of).dt(N)
    m = [v for k, v in ms.parameters.items() if str(k) == "m"][0]
    out = []
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        qdd = kane.coordinate_accelerations(t0, q, qd)
        sub = {c.diff(t, 2): v for c, v in zip(ms.coordinates, qdd)}
        sub |= {c.diff(t): v for c, v in zip(ms.coordinates, qd)}
        sub |= dict(zip(ms.coordinates, q)) | dict(ms.parameters)
        friction = [
            float(sm.sympify((m * a).dot(Y)).xreplace(sub).evalf()) for Y in (Yx, Yy)
        ]
        out.append((t0, q, qd, friction))
    return out


@pytest.mark.parametrize("name", ["lagrange", "sympy_lagrange"])
def test_rolling_disc_multipliers_are_the_friction_force(name, disc_friction):
    """The catalogue disc's nonholonomic rows are v_contact . Y.x and
    v_contact . Y.y, so C^T lambda is the generalized force of a horizontal
    force (lambda_1 Y.x + lambda_2 Y.y) at the contact: the friction, which
    Newton's law for the centre gives as m a_D (gravity is vertical)."""
    # The derivation shared with the other modules; the model is this test's.
    model = cached_eom(name, "rolling_disc").numeric()
    for t0, q, qd, friction in disc_friction:
        lam = model.multipliers(t0, q, qd)
        np.testing.assert_allclose(lam, friction, rtol=1e-8, atol=1e-9)
        assert max(abs(f) for f in friction) > 1e-3
