"""Integration with constraint stabilization (formulations/integrate.py).

References: an analytic pendulum solved in its angle, the closed-form
decay of the constraint under Baumgarte's stabilization, hand-written loop
Jacobians, and the drift the same integration shows without projection.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import cached_eom, cached_system
from helpers import cartesian_pendulum
from scipy.integrate import solve_ivp

from eomcompare.formulations import (
    formulation_names,
    get_formulation,
)
from eomcompare.numeric.integrate import IntegrationResult, integrate, project_state
from eomcompare.numeric.model import SingularConfigurationError
from eomcompare.systems import CATALOGUE, ConstraintError, system_facts

#: The default comparison's formulations; the tree algorithms
#: (kane_composite, kane_articulated) are checked against kane on every
#: catalogue system in tests/test_contract.py, and against Pinocchio and
#: kane in tests/systems/test_robots_articulated_body.py and
#: tests/formulations/test_composite.py.
COMPARED = formulation_names(default_only=True)


def _param(ms, name):
    return next(k for k in ms.parameters if str(k) == name)


@pytest.fixture(scope="module")
def pendulum():
    ms = cartesian_pendulum(
        length=0.9, x0=0.9 * np.sin(0.7), random_spread=0.5, speed_scale=1.0
    )
    return ms, get_formulation("lagrange", count_ops=False).derive(ms)


#: Andrews' squeezer is a stiff benchmark whose published horizon is
#: 0.03 s (its crank turns several times in it): integrated there with an
#: implicit method instead of 10 s of DOP853.
HORIZONS = {
    "andrews_squeezer": (0.03, "Radau"),
    # Until just before its first singular position (0.714 s), where
    # integrate stops: tests/systems/test_iftomm.py.
    "n_four_bar": (0.7, "DOP853"),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        s
        for s in CATALOGUE  # robots: own tests
        if system_facts(s).oracle is None
    ],
)
def test_default_settings_keep_residuals_below_1e_8_over_10_s(name):
    eom = cached_eom("lagrange", name)
    t_final, method = HORIZONS.get(name, (10.0, "DOP853"))
    res = integrate(eom, t_final, method=method)
    assert res.success, res.message
    assert res.t[0] == 0.0 and res.t[-1] == pytest.approx(t_final)
    n = len(eom.system.coordinates)
    assert res.q.shape == res.qd.shape == (len(res.t), n)
    assert res.holonomic_residual.shape == (
        len(res.t),
        len(eom.system.holonomic_constraints),
    )
    assert res.max_holonomic_residual < 1e-8
    assert res.max_velocity_residual < 1e-8
    assert np.all(np.isfinite(res.q)) and np.all(np.isfinite(res.qd))


@pytest.mark.parametrize("name", ["four_bar", "wheelbarrow"])
def test_trajectory_residuals_are_the_residuals_at_each_state(name):
    """The residuals integrate records (SystemStates.residuals, the
    parameters looked up once) are those of each state of the trajectory
    on its own, in order, to the bit: holonomic (four_bar) and velocity
    constraints (both)."""
    eom = cached_eom("kane", name)
    res = integrate(eom.numeric(), 1.0, t_eval=np.linspace(0.0, 1.0, 21))
    states = eom.system.states
    pmap = dict(zip(eom.system.parameters, eom.numeric().p))
    hol = [states.holonomic_residual(t, q, pmap) for t, q in zip(res.t, res.q)]
    vel = [
        states.velocity_residual(t, q, qd, pmap)
        for t, q, qd in zip(res.t, res.q, res.qd)
    ]
    assert res.holonomic_residual.shape[0] == len(res.t) > 1
    assert np.array_equal(res.holonomic_residual, np.array(hol).reshape(len(hol), -1))
    assert np.array_equal(res.velocity_residual, np.array(vel).reshape(len(vel), -1))
    assert res.velocity_residual.size and np.any(res.velocity_residual != 0)


def test_trajectory_matches_the_pendulum_solved_in_its_angle(pendulum):
    """x = l sin(theta), y = -l cos(theta), theta'' = -(g/l) sin(theta)."""
    ms, eom = pendulum
    g, l = 9.81, 0.9
    t_eval = np.linspace(0.0, 5.0, 26)
    res = integrate(eom, 5.0, t_eval=t_eval)
    ref = solve_ivp(
        lambda t, s: [s[1], -g / l * np.sin(s[0])],
        (0.0, 5.0),
        [0.7, 0.0],
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
        t_eval=t_eval,
    )
    np.testing.assert_allclose(res.t, t_eval)
    np.testing.assert_allclose(res.q[:, 0], l * np.sin(ref.y[0]), atol=1e-8)
    np.testing.assert_allclose(res.q[:, 1], -l * np.cos(ref.y[0]), atol=1e-8)
    np.testing.assert_allclose(res.qd[:, 0], l * np.cos(ref.y[0]) * ref.y[1], atol=1e-7)


def test_projection_removes_the_drift_of_the_index_1_form():
    """Same tolerances, same equations: without projection the residuals
    grow beyond 1e-8 over 10 s; with it they stay below."""
    eom = cached_eom("lagrange", "crank_slider")
    free = integrate(eom, 10.0, rtol=1e-8, atol=1e-8, stabilization=None)
    proj = integrate(eom, 10.0, rtol=1e-8, atol=1e-8)
    assert free.n_projections == 0 and proj.n_projections == 20
    assert free.max_holonomic_residual > 1e-8
    assert proj.max_holonomic_residual < 0.1 * free.max_holonomic_residual
    assert proj.max_holonomic_residual < 1e-8
    assert proj.max_velocity_residual < 1e-8


def test_output_times_neither_split_segments_nor_move_the_trajectory():
    """Output times are read from the dense output: 201 of them leave the
    20 projections of 10 s as they are, the evaluations those 20 segments
    need, and the states where the integrator passed anyway."""
    eom = cached_eom("kane", "four_bar", (("coordinates", "redundant"),))
    grid = np.linspace(0.0, 10.0, 201)
    dense = integrate(eom, 10.0, t_eval=grid)
    plain = integrate(eom, 10.0)
    assert dense.n_projections == plain.n_projections == 20
    assert dense.nfev == plain.nfev
    np.testing.assert_allclose(dense.t, grid)
    # plain reports the segment ends, every 0.5 s: every 10th output.
    np.testing.assert_allclose(dense.q[::10], plain.q, rtol=0, atol=1e-12)
    assert dense.max_holonomic_residual < 1e-9


def test_baumgarte_residual_follows_the_critically_damped_solution(pendulum):
    """With alpha = beta = b the constraint obeys Phi'' + 2 b Phi' +
    b^2 Phi = 0; from Phi(0) = Phi0, Phi'(0) = 0 (a radial offset with a
    tangential velocity) Phi(t) = Phi0 (1 + b t) exp(-b t)."""
    ms, _ = pendulum
    b = 4.0
    eom = get_formulation("lagrange", baumgarte=(b, b)).derive(ms)
    t0, q0, qd0 = ms.states.random_state(1)
    scale = 1.001
    q = q0 * scale
    assert abs(q @ qd0) < 1e-12
    phi0 = (scale**2 - 1) * (q0 @ q0)
    t_eval = np.linspace(0.0, 3.0, 13)
    res = integrate(
        eom,
        3.0,
        stabilization="baumgarte",
        t_eval=t_eval,
        initial_state=(t0, q, qd0),
        consistency_tol=1e-2,
        rtol=1e-12,
        atol=1e-12,
    )
    expected = phi0 * (1 + b * t_eval) * np.exp(-b * t_eval)
    np.testing.assert_allclose(
        res.holonomic_residual[:, 0], expected, rtol=1e-6, atol=1e-12
    )
    assert res.n_projections == 0


def test_kane_and_lagrange_integrate_to_the_same_trajectory():
    t_eval = np.linspace(0.0, 3.0, 7)
    a = integrate(cached_eom("lagrange", "four_bar"), 3.0, t_eval=t_eval)
    b = integrate(cached_eom("kane", "four_bar"), 3.0, t_eval=t_eval)
    np.testing.assert_allclose(a.q, b.q, atol=1e-8)
    np.testing.assert_allclose(a.qd, b.qd, atol=1e-7)
    assert (a.formulation, b.formulation) == ("lagrange", "kane")


def test_numeric_model_and_parameters_are_accepted():
    ms = cached_system("four_bar")
    eom = cached_eom("lagrange", "four_bar")
    par = {_param(ms, "tau"): 3.0}
    a = integrate(eom, 1.0, parameters=par, t_eval=[0.5, 1.0])
    b = integrate(eom.numeric(par), 1.0, t_eval=[0.5, 1.0])
    c = integrate(eom, 1.0, t_eval=[0.5, 1.0])
    np.testing.assert_allclose(a.q, b.q, rtol=1e-12)
    assert np.max(np.abs(a.q - c.q)) > 1e-3
    assert isinstance(a, IntegrationResult) and "four_bar" in repr(a)


def test_project_state_leaves_a_state_on_the_constraints_as_it_is():
    """A state whose residuals are within the tolerance is returned
    unchanged, bit for bit; one whose rates break the velocity constraints
    by 1e-9 is corrected to within the tolerance."""
    ms = cached_system("four_bar")
    t0, q, qd = ms.states.random_state(3)
    assert np.max(np.abs(ms.states.velocity_residual(t0, q, qd))) < 1e-12
    q2, qd2 = project_state(ms, t0, q, qd, tol=1e-10)
    assert np.array_equal(q2, q) and np.array_equal(qd2, qd)
    off = qd + np.array([1e-9, 0.0, 0.0])
    assert np.max(np.abs(ms.states.velocity_residual(t0, q, off))) > 1e-10
    _, qd3 = project_state(ms, t0, q, off, tol=1e-10)
    assert np.max(np.abs(ms.states.velocity_residual(t0, q, qd3))) <= 1e-10
    assert not np.array_equal(qd3, off)


def test_project_state_is_a_minimal_correction():
    """Loop Jacobian written by hand: the position correction is normal to
    the constraint manifold (orthogonal to its tangent, the null vector of
    Phi_q), and the velocity constraints hold afterwards."""
    ms = cached_system("four_bar")
    P = {str(k): v for k, v in ms.parameters.items()}
    t0, q, qd = ms.states.random_state(2)
    rng = np.random.default_rng(0)
    dq = rng.uniform(-1e-4, 1e-4, 3)
    q2, qd2 = project_state(ms, t0, q + dq, qd + 0.01)
    assert np.max(np.abs(ms.states.holonomic_residual(t0, q2))) < 1e-12
    assert np.max(np.abs(ms.states.velocity_residual(t0, q2, qd2))) < 1e-12
    s, c = np.sin(q2), np.cos(q2)
    J = np.array(
        [
            [-P["L1"] * s[0], -P["L2"] * s[1], P["L3"] * s[2]],
            [P["L1"] * c[0], P["L2"] * c[1], -P["L3"] * c[2]],
        ]
    )
    tangent = np.linalg.svd(J)[2][-1]
    correction = q2 - (q + dq)
    assert np.linalg.norm(correction) > 1e-6
    assert abs(correction @ tangent) < 1e-3 * np.linalg.norm(correction)
    assert abs((qd2 - (qd + 0.01)) @ tangent) < 1e-9


# ----------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------
def test_inconsistent_initial_state_is_refused_with_the_configuration():
    ms = cached_system("four_bar")
    t0, q, qd = ms.states.random_state(0)
    bad = q.copy()
    bad[2] += 0.01
    with pytest.raises(
        ConstraintError,
        match=r"inconsistent initial state of 'four_bar'.*"
        r"q1=.*q3=.*holonomic residual",
    ):
        integrate(cached_eom("lagrange", "four_bar"), 1.0, initial_state=(t0, bad, qd))
    with pytest.raises(ConstraintError, match="velocity residual"):
        integrate(
            cached_eom("lagrange", "four_bar"), 1.0, initial_state=(t0, q, qd + 0.1)
        )


def test_nonholonomic_violation_is_refused():
    ms = cached_system("wheelbarrow")
    t0, q, qd = ms.states.random_state(0)
    with pytest.raises(ConstraintError, match="velocity residual"):
        integrate(
            cached_eom("lagrange", "wheelbarrow"),
            1.0,
            initial_state=(t0, q, qd + np.array([0, 0, 0.2, 0])),
        )


def test_dead_point_start_is_a_named_singular_configuration():
    """L1 = 0.6: crank, coupler and rocker collinear at
    q = (-pi/2, pi/2, -pi/2) (DP1 = L2 + L3)."""
    ms = cached_system("four_bar")
    q = np.array([-np.pi / 2, np.pi / 2, -np.pi / 2])
    with pytest.raises(
        SingularConfigurationError,
        match=r"four_bar.*q1=-1\.5708, q2=1\.5708, q3=-1\.5708",
    ):
        integrate(
            cached_eom("lagrange", "four_bar"),
            1.0,
            parameters={_param(ms, "L1"): 0.6},
            initial_state=(0.0, q, np.zeros(3)),
        )


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (
            {"stabilization": "bogus"},
            ValueError,
            r"\['projection', 'baumgarte', None\]",
        ),
        ({"stabilization": "baumgarte"}, ValueError, "baumgarte=\\(alpha, beta\\)"),
        ({"projection_interval": 0.0}, ValueError, "projection_interval"),
        ({"t_eval": [0.5, 0.2]}, ValueError, "t_eval"),
        ({"initial_state": 3.0}, TypeError, "initial_state"),
    ],
)
def test_bad_options_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        integrate(cached_eom("lagrange", "four_bar"), 1.0, **kwargs)


def test_wrong_input_types():
    with pytest.raises(TypeError, match="EquationsOfMotion or a NumericModel"):
        integrate("four_bar", 1.0)
    with pytest.raises(ValueError, match="t_final"):
        integrate(cached_eom("lagrange", "four_bar"), 0.0)


def test_unconstrained_output_times_are_the_solver_steps_once_each():
    res = integrate(cached_eom("lagrange", "double_pendulum"), 1.0)
    assert res.n_projections == 0
    assert res.t[0] == 0.0 and np.all(np.diff(res.t) > 0)
    assert res.holonomic_residual.shape == (len(res.t), 0)


@pytest.mark.parametrize("name", ["four_bar", "rolling_disc"])
@pytest.mark.parametrize("formulation", COMPARED)
def test_every_formulation_integrates_with_projection(formulation, name):
    """Projection works on (q, q') and maps back through each
    formulation's own state, so it serves every backend."""
    # No formulation of the default comparison, the peers included,
    # refuses these catalogue systems (tests/helpers.py lists every
    # expected refusal): any exception fails the test.
    eom = cached_eom(formulation, name)
    res = integrate(eom, 3.0)
    assert res.success and res.n_projections == 6
    assert res.max_holonomic_residual < 1e-8
    assert res.max_velocity_residual < 1e-8
