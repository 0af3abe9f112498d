"""The compiled integrator drivers (numeric/drivers.py) behind
``integrate(method="odeint")``.

References: the IFToMM pendulum's elliptic closed form and its
small-amplitude limit, its conserved energy, solve_ivp's DOP853 on the
same equations, and the loop constraints of the four-bar linkage.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import cached_eom
from helpers import parallelogram_branch
from scipy.special import ellipj, ellipk

from eomcompare.compare.precision_problems import SolveCapped, _capped
from eomcompare.numeric.drivers import DRIVERS, odeint_segment
from eomcompare.numeric.integrate import integrate
from eomcompare.numeric.model import SingularConfigurationError

G, L, M = 9.81, 1.0, 1.0


def _theta_exact(t):
    """The IFToMM pendulum from the horizontal at rest, theta from +x:
    with phi = theta + pi/2 the angle from the downward vertical,
    sin(phi/2) = k sn(K - w t | 1/2), k = sin(pi/4), w = sqrt(g/L)."""
    m = 0.5
    sn, _, _, _ = ellipj(ellipk(m) - np.sqrt(G / L) * np.asarray(t), m)
    return 2 * np.arcsin(np.sqrt(m) * sn) - np.pi / 2


def _p1_distance(theta_a, theta_b):
    """Largest distance of P1 between two angle histories (L = 1)."""
    return float(np.max(np.abs(2 * np.sin((theta_a - theta_b) / 2))))


@pytest.fixture(scope="module")
def pendulum():
    return cached_eom("kane", "iftomm_pendulum").numeric()


def test_odeint_follows_the_pendulums_closed_form_like_dop853(pendulum):
    """Over 40 s (about 20 swings) at rtol = atol = 1e-10, P1 stays within
    1e-6 m of the elliptic closed form with odeint as with DOP853; a loose
    tolerance is visibly worse, so the bound says something."""
    grid = np.linspace(0.0, 40.0, 401)
    exact = _theta_exact(grid)
    errors = {}
    for method in ("odeint", "DOP853"):
        res = integrate(
            pendulum, 40.0, method=method, rtol=1e-10, atol=1e-10, t_eval=grid
        )
        assert res.success and np.array_equal(res.t, grid)
        errors[method] = _p1_distance(res.q[:, 0], exact)
    assert errors["odeint"] < 1e-6 and errors["DOP853"] < 1e-6
    loose = integrate(
        pendulum, 40.0, method="odeint", rtol=1e-4, atol=1e-4, t_eval=grid
    )
    assert _p1_distance(loose.q[:, 0], exact) > 100 * errors["odeint"]


def test_odeint_meets_the_small_amplitude_limit_and_keeps_the_energy(pendulum):
    """Released 1e-3 rad from hanging: theta = -pi/2 + a cos(w t) with
    w = sqrt(g/L), up to the amplitude's frequency correction (a^2/16
    relative: 2e-9 rad over 10 s); the energy m g L sin(theta) + m L^2
    theta'^2 / 2 stays that of the release."""
    a = 1e-3
    grid = np.linspace(0.0, 10.0, 201)
    res = integrate(
        pendulum,
        10.0,
        method="odeint",
        rtol=1e-12,
        atol=1e-12,
        t_eval=grid,
        initial_state=(0.0, [-np.pi / 2 + a], [0.0]),
    )
    w = np.sqrt(G / L)
    assert np.max(np.abs(res.q[:, 0] - (-np.pi / 2 + a * np.cos(w * grid)))) < 2e-8
    assert np.max(np.abs(res.qd[:, 0] + a * w * np.sin(w * grid))) < 1e-7
    energy = M * G * L * np.sin(res.q[:, 0]) + M * L**2 * res.qd[:, 0] ** 2 / 2
    e0 = M * G * L * np.sin(-np.pi / 2 + a)
    assert np.max(np.abs(energy - e0)) < 1e-10


def test_odeint_without_output_times_reports_every_projection_interval(pendulum):
    res = integrate(pendulum, 2.0, method="odeint", projection_interval=0.25)
    assert np.allclose(res.t, np.arange(9) * 0.25)
    assert res.nfev > 0 and res.success


def test_odeint_projects_a_closed_loop_onto_its_constraints():
    """lagrange on the four-bar in redundant coordinates: with projection
    the loop closes to projection precision at each segment end and within
    the tolerance's drift between them, the trajectory agrees with
    DOP853's, and without projection the drift is larger."""
    model = cached_eom("lagrange", "four_bar").numeric()
    grid = np.linspace(0.0, 3.0, 61)
    common = dict(rtol=1e-9, atol=1e-9, t_eval=grid, singularity_tol=None)
    res = integrate(model, 3.0, method="odeint", **common)
    ref = integrate(model, 3.0, method="DOP853", **common)
    assert res.success and res.n_projections == 6
    assert res.max_holonomic_residual < 1e-7
    assert np.max(np.abs(res.q - ref.q)) < 1e-6
    free = integrate(model, 3.0, method="odeint", stabilization=None, **common)
    assert free.max_holonomic_residual > res.max_holonomic_residual


def _parallelogram(t_final=10.0):
    return parallelogram_branch(2, t_final, G)


@pytest.mark.parametrize("formulation", ["kane", "lagrange", "gibbs_appell"])
def test_odeint_stops_at_the_n_four_bars_singular_position(formulation):
    """Integrating the dependent coordinates, odeint meets the loop
    Jacobian's loss of rank as solve_ivp does: the same error, naming a
    time at which the closed form is horizontal and a horizontal crank."""
    eom = cached_eom(formulation, "n_four_bar")
    ref = _parallelogram()
    assert len(ref.t_events[0]) >= 6
    with pytest.raises(SingularConfigurationError, match="singular position") as err:
        integrate(eom, 10.0, method="odeint", rtol=1e-12, atol=1e-12)
    msg = str(err.value)
    assert msg.startswith(f"{formulation}: 'n_four_bar' reached a singular position")
    assert "integration stopped" in msg
    te = float(msg.split("at t=")[1].split(",")[0])
    assert np.min(np.abs(ref.t_events[0] - te)) < 2e-3, msg
    phi0 = float(msg.split("phi0=")[1].split(",")[0])
    assert abs(np.sin(phi0)) < 5e-3


def test_odeint_watches_the_steps_between_output_times():
    """With a single output time at the end of one 3 s segment, no
    returned state is near a singular position (the closed form is
    horizontal at 0.714, 1.228, ... s): the watch finds one at the
    driver's own steps.  Like solve_ivp's event, it may step over the
    first one (a dip within one step), so any of them is right."""
    eom = cached_eom("kane", "n_four_bar")
    crossings = _parallelogram(3.0).t_events[0]
    assert len(crossings) >= 3
    common = dict(t_eval=[3.0], projection_interval=3.0)
    for tol in (1e-6, 1e-9, 1e-12):
        with pytest.raises(SingularConfigurationError, match="singular position") as e:
            integrate(eom, 3.0, method="odeint", rtol=tol, atol=tol, **common)
        te = float(str(e.value).split("at t=")[1].split(",")[0])
        assert np.min(np.abs(crossings - te)) < 2e-3, (tol, str(e.value))


def test_odeint_passes_the_singular_positions_with_modified_lagrange():
    """Through the declared explicit solutions the equations are
    Lagrange's in phi0 alone (no dependent coordinate is integrated, so
    nothing is watched): the whole specified 10 s on the closed form."""
    ref = _parallelogram()
    grid = np.linspace(0.0, 10.0, 401)
    res = integrate(
        cached_eom("modified_lagrange", "n_four_bar"),
        10.0,
        method="odeint",
        rtol=1e-12,
        atol=1e-12,
        t_eval=grid,
    )
    assert res.success and np.array_equal(res.t, grid)
    np.testing.assert_allclose(res.q[:, 0], ref.sol(grid)[0], atol=1e-8)
    assert "odeint" in DRIVERS


def test_an_exception_in_the_right_hand_side_ends_the_solve(pendulum):
    capped = _capped(pendulum, 0.0)
    with pytest.raises(SolveCapped):
        integrate(capped, 100.0, method="odeint", rtol=1e-10, atol=1e-10)


def test_a_failed_segment_reports_where_it_stopped():
    """x' = x^2 from x(0) = 1 blows up at t = 1: the output times before
    it are reached (x = 1 / (1 - t)), the later ones are not."""
    with np.errstate(over="ignore", invalid="ignore"):
        seg = odeint_segment(
            lambda t, x: x**2,
            0.0,
            2.0,
            np.array([1.0]),
            rtol=1e-10,
            atol=1e-10,
            t_out=np.array([0.25, 0.5, 1.5]),
        )
    assert not seg.success and seg.x_end is None and seg.message
    assert seg.t.tolist() == [0.25, 0.5]
    assert np.allclose(seg.y[0], 1 / (1 - seg.t), rtol=1e-7)


def test_a_message_names_a_long_chains_first_coordinates_only():
    """An error at a configuration of the 40-window four-bar (81
    coordinates) names the first twelve and says how many there are."""
    from types import SimpleNamespace

    import sympy.physics.mechanics as me

    from eomcompare.numeric.watch import describe_configuration as _describe

    long = SimpleNamespace(coordinates=me.dynamicsymbols("q0:81"))
    text = _describe(long, np.arange(81.0))
    assert text.startswith("q0=0, q1=1, ") and "q11=11, ..." in text
    assert "q12=" not in text and text.endswith("(the first 12 of 81 coordinates)")
    short = SimpleNamespace(coordinates=me.dynamicsymbols("q0:3"))
    assert _describe(short, [0.5, 1.0, 2.0]) == "q0=0.5, q1=1, q2=2"
