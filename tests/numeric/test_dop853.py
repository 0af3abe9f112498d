"""The ``"dop853"`` driver: solve_ivp's DOP853 with its step loop in
compiled code (numeric/dop853.py, numeric/c/eom_dop853.c).

References: scipy's solve_ivp ``"DOP853"`` on the same equations (the same
steps: the same number of evaluations and the same states to round-off),
the IFToMM pendulum's elliptic closed form, and the N-four-bar's closed
form with its singular positions.
"""

from __future__ import annotations

import signal

import numpy as np
import pytest
from conftest import cached_eom
from helpers import parallelogram_branch
from scipy.integrate import solve_ivp
from scipy.special import ellipj, ellipk

from eomcompare.numeric.drivers import DRIVERS, dop853_segment
from eomcompare.numeric.integrate import integrate
from eomcompare.numeric.model import SingularConfigurationError

G = 9.81


def _compiled(formulation, system, opts=()):
    return cached_eom(formulation, system, opts).numeric(backend="c")


def _segment(model, a, b, x, t_out=None, **extra):
    """The driver over ``[a, b]`` at rtol = atol = 1e-10, reporting at
    ``t_out`` (default: ``b``)."""
    t_out = np.array([b]) if t_out is None else t_out
    return dop853_segment(
        model.rhs, a, b, x, rtol=1e-10, atol=1e-10, t_out=t_out, model=model, **extra
    )


def _start(model):
    t0, q, qd = model.system.states.consistent_initial_state()
    return t0, model.state_from(np.asarray(q, float), np.asarray(qd, float), t0)


@pytest.mark.parametrize(
    "formulation,system,opts",
    [
        ("kane", "double_pendulum", ()),
        ("lagrange", "n_link_pendulum_on_cart", (("n", 3),)),
        ("kane", "rolling_disc", ()),
    ],
)
def test_the_same_steps_as_solve_ivps_dop853(formulation, system, opts):
    """Over 3 s at rtol = atol = 1e-10: the same number of evaluations as
    solve_ivp (one at the start, one for the first step's choice, twelve
    per attempted step, three more per step holding an output time), and
    the same states at the output times to round-off; also from a given
    first step and under a largest step, which change the steps taken."""
    model = _compiled(formulation, system, opts)
    t0, x0 = _start(model)
    grid = np.linspace(t0, t0 + 3.0, 31)[1:]
    for extra in ({}, {"first_step": 1e-3}, {"max_step": 0.01}):
        ref = solve_ivp(
            model.rhs,
            (t0, t0 + 3.0),
            x0,
            method="DOP853",
            rtol=1e-10,
            atol=1e-10,
            t_eval=grid,
            **extra,
        )
        seg = _segment(model, t0, t0 + 3.0, x0, grid, **extra)
        assert ref.success and seg.success
        assert seg.nfev == ref.nfev, extra
        assert np.array_equal(seg.t, grid)
        scale = max(1.0, float(np.max(np.abs(ref.y))))
        assert np.max(np.abs(seg.y - ref.y)) < 1e-11 * scale, extra
        assert np.max(np.abs(seg.x_end - ref.y[:, -1])) < 1e-11 * scale
    # The largest step bounds the steps: many more evaluations.
    assert seg.nfev > 3.0 / 0.01 * 12


def _theta_exact(t):
    """The IFToMM pendulum from the horizontal at rest (L = 1):
    sin(phi/2) = k sn(K - w t | 1/2), phi = theta + pi/2."""
    sn, _, _, _ = ellipj(ellipk(0.5) - np.sqrt(G) * np.asarray(t), 0.5)
    return 2 * np.arcsin(np.sqrt(0.5) * sn) - np.pi / 2


def test_the_pendulum_follows_its_closed_form():
    """40 s (about 20 swings) at 1e-10: P1 within 1e-6 m of the elliptic
    closed form; at 1e-4 visibly worse, so the bound says something."""
    model = _compiled("kane", "iftomm_pendulum")
    grid = np.linspace(0.0, 40.0, 401)
    exact = _theta_exact(grid)
    errors = []
    for tol in (1e-10, 1e-4):
        res = integrate(model, 40.0, method="dop853", rtol=tol, atol=tol, t_eval=grid)
        assert res.success and np.array_equal(res.t, grid)
        errors.append(float(np.max(np.abs(2 * np.sin((res.q[:, 0] - exact) / 2)))))
    assert errors[0] < 1e-6 < errors[1]


def test_a_closed_loop_is_projected_and_agrees_with_solve_ivp():
    """lagrange on the four-bar in redundant coordinates with projection:
    the loop closes at every segment end and the trajectory is solve_ivp's
    (the same steps; solve_ivp evaluates more, for its interpolants)."""
    model = _compiled("lagrange", "four_bar")
    grid = np.linspace(0.0, 3.0, 61)
    common = dict(rtol=1e-9, atol=1e-9, t_eval=grid)
    res = integrate(model, 3.0, method="dop853", **common)
    ref = integrate(model, 3.0, method="DOP853", **common)
    assert res.success and res.n_projections == 6
    assert res.max_holonomic_residual < 1e-7
    assert np.max(np.abs(res.q - ref.q)) < 1e-10
    assert 0 < res.nfev <= ref.nfev


@pytest.mark.parametrize("formulation", ["kane", "lagrange"])
def test_it_stops_at_the_n_four_bars_singular_position(formulation):
    """Integrating the dependent coordinates, the watch at each accepted
    step's end stops it with solve_ivp's error, at a time where the closed
    form is horizontal, with a horizontal crank."""
    ref = parallelogram_branch(2, 10.0, G)
    with pytest.raises(SingularConfigurationError, match="singular position") as err:
        integrate(
            _compiled(formulation, "n_four_bar"),
            10.0,
            method="dop853",
            rtol=1e-12,
            atol=1e-12,
        )
    msg = str(err.value)
    assert msg.startswith(f"{formulation}: 'n_four_bar' reached a singular position")
    te = float(msg.split("at t=")[1].split(",")[0])
    assert np.min(np.abs(ref.t_events[0] - te)) < 2e-3, msg
    assert abs(np.sin(float(msg.split("phi0=")[1].split(",")[0]))) < 5e-3


def test_the_watch_checks_the_steps_between_output_times():
    """One output time at the end of one 3 s segment: no returned state
    is near a singular position (the closed form is horizontal at 0.714,
    1.228, ... s), so only the watch at the steps can find one."""
    crossings = parallelogram_branch(2, 3.0, G).t_events[0]
    model = _compiled("kane", "n_four_bar")
    with pytest.raises(SingularConfigurationError, match="singular position") as e:
        integrate(model, 3.0, method="dop853", t_eval=[3.0], projection_interval=3.0)
    te = float(str(e.value).split("at t=")[1].split(",")[0])
    assert np.min(np.abs(crossings - te)) < 2e-3, str(e.value)


def test_a_singular_mass_matrix_met_in_a_step_raises_the_callers_error():
    """A massless pendulum: the compiled right-hand side fails at the
    first evaluation; the caller's right-hand side then raises its error
    for that state."""
    eom = cached_eom("kane", "iftomm_pendulum")
    (m,) = [s for s in eom.system.parameters if str(s) == "m"]
    model = eom.numeric(backend="c", parameters={m: 0.0})
    with pytest.raises(SingularConfigurationError, match="singular at t=0"):
        _segment(model, 0.0, 1.0, np.array([0.1, 0.0]))


def test_an_exception_in_the_watch_stops_the_loop_and_is_raised():
    model = _compiled("kane", "double_pendulum")
    t0, x0 = _start(model)
    seen = []

    def watch(tt, x):
        seen.append(tt)
        if tt > 0.5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        model.dop853_segment(
            t0,
            t0 + 5.0,
            x0,
            rtol=1e-10,
            atol=1e-10,
            t_out=np.array([t0 + 5.0]),
            watch=watch,
        )
    # Called at each step's end, increasing; nothing after the stop.
    assert len(seen) > 5 and np.all(np.diff(seen) > 0) and seen[-1] > 0.5
    assert sum(t > 0.5 for t in seen) == 1


def test_a_model_that_is_not_compiled_runs_solve_ivps_dop853():
    """The loop calls a compiled right-hand side; any other model is
    integrated by solve_ivp's DOP853, the same method."""
    model = cached_eom("kane", "double_pendulum").numeric(backend="lambdify")
    a = integrate(model, 2.0, method="dop853")
    b = integrate(model, 2.0, method="DOP853")
    assert np.array_equal(a.q, b.q) and a.nfev == b.nfev
    assert "dop853" in DRIVERS


def test_a_signal_handler_runs_while_a_long_segment_steps():
    """Without a watch the loop calls back into Python every POLL_STEPS
    steps, where a pending signal's handler runs: the handler (raising
    here) interrupts 10^6 s of the double pendulum, about a minute of
    stepping, from within the loop's callback, not after its end."""

    class Stop(Exception):
        pass

    where = []

    def handler(signum, frame):
        where.append(frame.f_code.co_name)
        raise Stop

    model = _compiled("kane", "double_pendulum")
    t0, x0 = _start(model)
    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(Stop):
            _segment(model, t0, t0 + 1e6, x0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    # Raised in the callback (run_compiled's check or the poll it calls).
    assert where and where[0] in ("check", "_poll"), where
