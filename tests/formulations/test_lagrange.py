"""Lagrange's equations with multipliers ("lagrange") against analytic
derivations written out here and the seed's published equations.

The cross-backend agreement with "kane" and "sympy_lagrange" at random
states of every catalogue system lives in ``tests/test_contract.py``.

Sign convention under test: ``d/dt(dT/dq') - dT/dq = Q + C^T lambda`` with
``C`` the Jacobian of the velocity constraints with respect to q', i.e.
``C^T lambda`` is the generalized constraint force.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_eom, cached_model, cached_system
from helpers import cartesian_pendulum

from eomcompare.formulations import get_formulation
from eomcompare.numeric.model import SingularConfigurationError
from eomcompare.systems import MechanicalSystem
from eomcompare.systems.rod_slider_shaft_extended import rod_slider_shaft_extended

N_STATES = 20


def _param(ms, name):
    """The declaration's own symbol called ``name`` (assumptions differ)."""
    return next(k for k in ms.parameters if str(k) == name)


def _values(ms):
    return {str(k): v for k, v in ms.parameters.items()}


# ----------------------------------------------------------------------
# Small systems with hand-derived multipliers
# ----------------------------------------------------------------------
def knife_edge() -> MechanicalSystem:
    """A knife edge on a horizontal plane (contact point G at (x, y),
    heading theta), driven by a forward force F and a torque tau.

    The speeds are NOT coordinate rates: forward speed v, lateral speed w
    (dependent, held at zero by the nonholonomic constraint) and
    omega = theta'.
    """
    x, y, th = me.dynamicsymbols("x y theta")
    v, w, om = me.dynamicsymbols("v w omega")
    m, I, F, tau = sm.symbols("m I F tau", real=True)
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (th, N.z))
    B.set_ang_vel(N, om * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    G = O.locatenew("G", x * N.x + y * N.y)
    G.set_vel(N, v * B.x + w * B.y)
    system = me.System(N, O)
    system.add_coordinates(x, y, th)
    system.add_speeds(v, om)
    system.add_speeds(w, independent=False)
    system.add_kdes(
        x.diff() - v * sm.cos(th) + w * sm.sin(th),
        y.diff() - v * sm.sin(th) - w * sm.cos(th),
        th.diff() - om,
    )
    system.add_nonholonomic_constraints(w)
    system.add_bodies(me.RigidBody("edge", G, B, m, (me.inertia(B, 0, 0, I), G)))
    system.add_loads(me.Force(G, F * B.x), me.Torque(B, tau * N.z))
    return MechanicalSystem(
        name="knife_edge",
        system=system,
        parameters={m: 2.0, I: 0.3, F: 1.5, tau: -0.7},
        initial_state={x: 0.0, y: 0.0, th: 0.2, v: 1.0, om: 0.5},
        random_spread=2.0,
        speed_scale=2.0,
    )


@pytest.fixture(scope="module")
def pendulum():
    ms = cartesian_pendulum(length=0.9, x0=0.5, ux0=0.4)
    return ms, get_formulation("lagrange", count_ops=False).derive(ms)


@pytest.fixture(scope="module")
def edge():
    ms = knife_edge()
    return ms, get_formulation("lagrange", count_ops=False).derive(ms)


def test_cartesian_pendulum_augmented_matrix_by_hand(pendulum):
    """T = m (x'^2 + y'^2)/2, C = [2x, 2y]: [[m,0,-2x],[0,m,-2y],[2x,2y,0]]."""
    ms, eom = pendulum
    x, y = ms.coordinates
    m, g = _param(ms, "m"), _param(ms, "g")
    xd, yd = x.diff(), y.diff()
    expected_M = sm.Matrix([[m, 0, -2 * x], [0, m, -2 * y], [2 * x, 2 * y, 0]])
    # Acceleration-level constraint: 2 (x x'' + y y'') = -2 (x'^2 + y'^2).
    expected_f = sm.Matrix([0, -m * g, -2 * (xd**2 + yd**2)])
    assert sm.simplify(eom.mass_matrix - expected_M) == sm.zeros(3, 3)
    assert sm.simplify(eom.forcing - expected_f) == sm.zeros(3, 1)
    assert (eom.n_equations, eom.n_unknowns, eom.n_multipliers) == (3, 3, 1)
    assert str(eom.multipliers[0]) == "lambda1(t)"
    assert eom.unknowns[-1] == eom.multipliers[0]


def test_cartesian_pendulum_multiplier_is_the_rod_tension(pendulum):
    """With C^T lambda the constraint force, m x'' = 2 lambda x and
    m y'' = -m g + 2 lambda y; the acceleration-level constraint
    x x'' + y y'' + v^2 = 0 gives lambda = m (g y - v^2) / (2 l^2)."""
    ms, eom = pendulum
    P = _values(ms)
    m, g, l = P["m"], P["g"], P["l"]
    model = eom.numeric()
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        (x, y), v2 = q, qd @ qd
        lam = m * (g * y - v2) / (2 * l**2)
        expected = np.array([2 * lam * x / m, -g + 2 * lam * y / m])
        z = model.solve_unknowns(t0, model.state_from(q, qd, t0))
        np.testing.assert_allclose(
            model.coordinate_accelerations(t0, q, qd), expected, rtol=1e-11, atol=1e-11
        )
        np.testing.assert_allclose(z[2], lam, rtol=1e-11, atol=1e-11)


def test_knife_edge_in_coordinate_rates_with_lateral_multiplier(edge):
    """Forward: m v' = F, I theta'' = tau; in coordinates
    x'' = (F/m) cos - v theta' sin, y'' = (F/m) sin + v theta' cos, and the
    lateral reaction mu (C = [-sin, cos, 0]) is m v theta'."""
    ms, eom = edge
    P = _values(ms)
    model = eom.numeric()
    assert (eom.n_equations, eom.n_multipliers) == (4, 1)
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        th, thd = q[2], qd[2]
        c, s = np.cos(th), np.sin(th)
        v = qd[0] * c + qd[1] * s
        expected = np.array(
            [
                P["F"] / P["m"] * c - v * thd * s,
                P["F"] / P["m"] * s + v * thd * c,
                P["tau"] / P["I"],
            ]
        )
        np.testing.assert_allclose(
            model.coordinate_accelerations(t0, q, qd), expected, rtol=1e-11, atol=1e-11
        )
        z = model.solve_unknowns(t0, model.state_from(q, qd, t0))
        np.testing.assert_allclose(z[3], P["m"] * v * thd, rtol=1e-11, atol=1e-11)


# ----------------------------------------------------------------------
# Baumgarte's stabilization
# ----------------------------------------------------------------------
def test_baumgarte_rows_enforce_the_stated_constraint_dynamics(pendulum):
    """Off the constraint, Phi'' + 2 alpha Phi' + beta^2 Phi = 0 with
    Phi = x^2 + y^2 - l^2, Phi' = 2 (x x' + y y'),
    Phi'' = 2 (x x'' + y y'' + x'^2 + y'^2)."""
    ms, _ = pendulum
    alpha, beta = 3.0, 7.0
    eom = get_formulation("lagrange", baumgarte=(alpha, beta), count_ops=False).derive(
        ms
    )
    assert eom.options["baumgarte"] == (alpha, beta)
    model = eom.numeric()
    l = _values(ms)["l"]
    rng = np.random.default_rng(0)
    for seed in range(10):
        t0, q, qd = ms.states.random_state(seed)
        q = q + rng.uniform(-0.05, 0.05, 2)
        qd = qd + rng.uniform(-0.3, 0.3, 2)
        qdd = model.coordinate_accelerations(t0, q, qd)
        phi = q @ q - l**2
        dphi = 2 * q @ qd
        ddphi = 2 * (q @ qdd + qd @ qd)
        assert abs(phi) > 1e-4
        assert abs(ddphi + 2 * alpha * dphi + beta**2 * phi) < 1e-10


@pytest.mark.parametrize(
    "name", ["four_bar", "crank_slider", "wheelbarrow", "rolling_disc"]
)
def test_baumgarte_leaves_consistent_states_unchanged(name):
    ms = cached_system(name)
    plain = cached_model("lagrange", name)
    stab = get_formulation("lagrange", baumgarte=(10.0, 10.0), count_ops=False).derive(
        ms
    )
    model = stab.numeric()
    for seed in range(5):
        t0, q, qd = ms.states.random_state(seed)
        a = model.coordinate_accelerations(t0, q, qd)
        b = plain.coordinate_accelerations(t0, q, qd)
        assert np.max(np.abs(a - b)) <= 1e-9 * max(1.0, np.max(np.abs(b)))


@pytest.mark.parametrize(
    "gains,error",
    [
        ((1.0,), TypeError),
        ("ab", TypeError),
        ((1.0, "b"), TypeError),
        ((True, 1.0), TypeError),
        ((-1.0, 2.0), ValueError),
        ((float("inf"), 1.0), ValueError),
        ((1.0, float("nan")), ValueError),
    ],
)
def test_baumgarte_gains_are_checked(gains, error):
    with pytest.raises(error, match="baumgarte"):
        get_formulation("lagrange", baumgarte=gains)


# ----------------------------------------------------------------------
# Seed systems
# ----------------------------------------------------------------------
def test_wheelbarrow_counts_and_published_equations():
    """The seed's claim: the multiplier form needs 4 dynamic equations and
    2 multipliers.  With u1 = v = r phi', u2 = theta', (2-111), (2-112)
    corrected:
    (m_w + m_wb + J/r^2) u1' + m_wb l u2^2 = 2 R cos(beta),
    (I + J/2 + m_wb l^2) u2' - l m_wb u1 u2 = -2 p R sin(beta)."""
    ms = cached_system("wheelbarrow")
    eom = cached_eom("lagrange", "wheelbarrow")
    assert len(ms.coordinates) == 4
    assert eom.extras["n_dynamic_equations"] == 4
    assert eom.n_multipliers == 2
    assert (eom.n_equations, eom.n_unknowns) == (6, 6)
    P = _values(ms)
    model = eom.numeric()
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        qdd = model.coordinate_accelerations(t0, q, qd)
        u1, u2 = P["r"] * qd[0], qd[1]
        u1d, u2d = P["r"] * qdd[0], qdd[1]
        r1 = (
            (P["m_w"] + P["m_wb"] + P["J"] / P["r"] ** 2) * u1d
            + P["m_wb"] * P["l"] * u2**2
            - 2 * P["R"] * np.cos(P["beta"])
        )
        r2 = (
            (P["I"] + P["J"] / 2 + P["m_wb"] * P["l"] ** 2) * u2d
            - P["l"] * P["m_wb"] * u1 * u2
            + 2 * P["p"] * P["R"] * np.sin(P["beta"])
        )
        assert abs(r1) < 1e-9 and abs(r2) < 1e-9


def test_rotating_tube_published_equations_with_explicit_time():
    """(2-38), (2-39) with theta(t) = Omega t + a sin(nu t):
    -m1 (q1'' - (L1 + q1) theta'^2) + m1 g cos(theta) - k1 q1 + k2 (q2 - q1) = 0,
    -m2 (q2'' - (L1 + L2 + q2) theta'^2) + m2 g cos(theta) - k2 (q2 - q1) = 0."""
    ms = cached_system("rotating_tube")
    eom = cached_eom("lagrange", "rotating_tube")
    P = _values(ms)
    model = eom.numeric()
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        assert t0 > 0.0
        th = P["Omega"] * t0 + P["a"] * np.sin(P["nu"] * t0)
        thd = P["Omega"] + P["a"] * P["nu"] * np.cos(P["nu"] * t0)
        qdd = model.coordinate_accelerations(t0, q, qd)
        r1 = (
            -P["m1"] * (qdd[0] - (P["L1"] + q[0]) * thd**2)
            + P["m1"] * P["g"] * np.cos(th)
            - P["k1"] * q[0]
            + P["k2"] * (q[1] - q[0])
        )
        r2 = (
            -P["m2"] * (qdd[1] - (P["L1"] + P["L2"] + q[1]) * thd**2)
            + P["m2"] * P["g"] * np.cos(th)
            - P["k2"] * (q[1] - q[0])
        )
        assert abs(r1) < 1e-9 and abs(r2) < 1e-9


@pytest.fixture(scope="module")
def extended():
    ms = rod_slider_shaft_extended()
    return ms, get_formulation("lagrange", count_ops=False).derive(ms)


def _published_rod_slider(P, q1, u1, u2, u1d, u2d):
    """(2-144), (2-145) residuals and (2-170) to (2-172); R2 from Newton's
    law for the slider along r2 (the printed (2-182) copies the r3 inertia
    term): a_P . r2 = -sin(beta) cos(beta) q1 u2^2 and s1 . r2 = -sin(beta),
    so R2 - m_P g sin(beta) = -m_P sin(beta) cos(beta) q1 u2^2."""
    sb, cb = np.sin(P["beta"]), np.cos(P["beta"])
    J = P["m_P"] * q1**2 + 4 * P["m_R"] * P["L"] ** 2 / 3
    eom = (
        u1d - sb**2 * u2**2 * q1 - P["g"] * cb,
        sb**2 * (J * u2d + 2 * P["m_P"] * q1 * u1 * u2) - P["T"],
    )
    forces = {
        "R1": -P["g"] * (P["m_P"] + P["m_R"]) + P["m_P"] * cb * u1d,
        "M2": -sb * cb * (J * u2d + 2 * P["m_P"] * q1 * u1 * u2),
        "R3": P["m_P"] * sb * (q1 * u2d + 2 * u1 * u2),
        "R2": P["m_P"] * sb * (P["g"] - cb * q1 * u2**2),
    }
    return eom, forces


def test_rod_slider_shaft_multipliers_are_the_published_reactions(extended):
    ms, eom = extended
    assert eom.n_multipliers == 4
    assert set(eom.extras["constraint_forces"]) == {"R1", "M2", "R3", "R2"}
    assert "unrecovered_constraint_forces" not in eom.extras
    P = _values(ms)
    model = eom.numeric()
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        qdd = model.coordinate_accelerations(t0, q, qd)
        res, expected = _published_rod_slider(P, q[0], qd[0], qd[1], qdd[0], qdd[1])
        assert max(abs(r) for r in res) < 1e-9
        got = model.constraint_forces(t0, q, qd)
        for name, value in expected.items():
            assert got[name] == pytest.approx(value, rel=1e-9, abs=1e-9), name


def test_rod_slider_shaft_multipliers_match_kane_auxiliary_speeds(extended):
    ms, eom = extended
    model = eom.numeric()
    kane = cached_model("kane", "rod_slider_shaft")
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        assert np.all(q[2:] == 0) and np.all(qd[2:] == 0)
        got = model.constraint_forces(t0, q, qd)
        ref = kane.constraint_forces(t0, q[:2], qd[:2])
        for name, value in ref.items():
            assert got[name] == pytest.approx(value, rel=1e-9, abs=1e-9), name


def test_reactions_without_a_coordinate_are_listed_not_guessed():
    eom = cached_eom("lagrange", "rod_slider_shaft")
    assert eom.extras["unrecovered_constraint_forces"] == ("R1", "M2", "R3", "R2")
    ms = cached_system("rod_slider_shaft")
    t0, q, qd = ms.states.random_state(0)
    with pytest.raises(ValueError, match="recovers no constraint forces"):
        eom.numeric().constraint_forces(t0, q, qd)


# ----------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------
def test_four_bar_dead_point_is_named():
    """With L1 = 0.6 the crank reaches DP1 = L2 + L3 = 1.2 at q1 = -pi/2:
    crank, coupler and rocker are collinear (q = (-pi/2, pi/2, -pi/2)), the
    loop Jacobian has rank 1 and the augmented matrix is singular."""
    ms = cached_system("four_bar")
    eom = cached_eom("lagrange", "four_bar")
    model = eom.numeric({_param(ms, "L1"): 0.6})
    q = np.array([-np.pi / 2, np.pi / 2, -np.pi / 2])
    assert (
        np.max(np.abs(ms.states.holonomic_residual(0.0, q, {_param(ms, "L1"): 0.6})))
        < 1e-12
    )
    with pytest.raises(
        SingularConfigurationError,
        match=r"four_bar.*q1=-1\.5708.*q2=1\.5708.*q3=-1\.5708",
    ):
        model.coordinate_accelerations(0.0, q, np.zeros(3))
