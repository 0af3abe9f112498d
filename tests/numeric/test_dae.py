"""The multiplier form integrated as a DAE by IDA (numeric/dae.py).

References: the ODE path (``numeric.integrate.integrate``, scipy's DOP853
at tight tolerances, with Kane's equations in the independent speeds where
the formulation should not matter), the pendulum solved in its angle by
scipy alone, the rod tension of a pendulum in closed form, and the energy
of conservative closed loops.
"""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pytest

# scikit-sundae is in the test extra: without it these tests fail, not skip.
import sksundae  # noqa: F401
from conftest import cached_eom, cached_system
from helpers import cartesian_pendulum
from scipy.integrate import solve_ivp

from eomcompare.formulations import get_formulation
from eomcompare.numeric.dae import (
    DAE_METHOD,
    DAE_TREATMENT,
    NoMultiplierFormError,
    integrate_dae,
)
from eomcompare.numeric.integrate import integrate
from eomcompare.systems import ConstraintError

#: Closed loops of the catalogue, in redundant coordinates.
LOOPS = ["four_bar", "crank_slider"]


def _ode_reference(name, t_final, grid):
    """Kane's equations (dependent speeds eliminated) by DOP853 with
    projection at 1e-12: a different formulation and a different solver."""
    return integrate(
        cached_eom("kane", name), t_final, rtol=1e-12, atol=1e-12, t_eval=grid
    )


@pytest.mark.parametrize("name", LOOPS)
def test_dae_follows_the_ode_path_on_a_closed_loop(name):
    grid = np.linspace(0.0, 3.0, 31)
    ref = _ode_reference(name, 3.0, grid)
    res = integrate_dae(
        cached_eom("lagrange", name), 3.0, rtol=1e-9, atol=1e-9, t_eval=grid
    )
    assert res.success, res.message
    assert res.stabilization == DAE_TREATMENT == "ida-ggl"
    np.testing.assert_allclose(res.t, grid)
    # Global error of a BDF solution at rtol 1e-9 over 3 s: a few 1e-7.
    scale_q = max(1.0, np.abs(ref.q).max())
    scale_v = max(1.0, np.abs(ref.qd).max())
    assert np.abs(res.q - ref.q).max() / scale_q < 1e-6
    assert np.abs(res.qd - ref.qd).max() / scale_v < 1e-6
    # The error shrinks with the tolerance (it is the solver's, not a
    # difference of equations).
    loose = integrate_dae(
        cached_eom("lagrange", name), 3.0, rtol=1e-6, atol=1e-6, t_eval=grid
    )
    assert np.abs(loose.q - ref.q).max() > 10 * np.abs(res.q - ref.q).max()


@pytest.mark.parametrize("name", LOOPS)
def test_constraints_hold_without_projection(name):
    """Position and velocity constraints are equations of the GGL form:
    their residuals stay of the tolerance's order however long the
    integration, where the ODE path without projection drifts further
    with time (at 1e-6 over 20 s: 4e-6 and 5e-5 on these loops, the DAE
    1.6e-7 and 1.1e-6)."""
    eom = cached_eom("lagrange", name)
    tol = 1e-6
    res = integrate_dae(eom, 20.0, rtol=tol, atol=tol)
    assert res.success, res.message
    assert res.n_projections == 0
    assert res.max_holonomic_residual < 10 * tol
    assert res.max_velocity_residual < 100 * tol
    drift = integrate(eom, 20.0, rtol=tol, atol=tol, stabilization=None)
    assert drift.max_holonomic_residual > 10 * res.max_holonomic_residual
    # Tighter tolerances, smaller residuals: they are the solver's.
    tight = integrate_dae(eom, 5.0, rtol=1e-10, atol=1e-10)
    assert tight.max_holonomic_residual < 1e-9


@pytest.mark.parametrize("name", LOOPS)
def test_energy_is_conserved_on_a_conservative_loop(name):
    ms = cached_system(name)
    assert ms.energy_conserved
    res = integrate_dae(cached_eom("lagrange", name), 5.0, rtol=1e-10, atol=1e-10)
    assert res.success, res.message
    parts = np.array(
        [ms.states.energy(t, q, v) for t, q, v in zip(res.t, res.q, res.qd)]
    )
    E = parts.sum(axis=1)
    # Relative to the largest of kinetic and potential energy (measured:
    # 1.4e-10 and 3.6e-9; BDF of order <= 5 drifts more than DOP853 at the
    # same tolerance, 2e-12 and 9e-11).
    scale = np.abs(parts).max()
    assert np.abs(E - E[0]).max() / scale < 1e-7


def test_pendulum_against_its_angle_and_the_rod_tension():
    """A particle on a rod in Cartesian coordinates: the trajectory of the
    angle equation integrated by scipy alone, and the multiplier of
    ``x^2 + y^2 - l^2 = 0`` from the tension ``m (|v|^2 - g y) / l``
    (``C^T lambda = 2 lambda (x, y)`` pulls towards O with that force)."""
    ms = cartesian_pendulum(length=0.9, x0=0.9 * math.sin(0.7))
    eom = get_formulation("lagrange", count_ops=False).derive(ms)
    grid = np.linspace(0.0, 4.0, 41)
    res = integrate_dae(eom, 4.0, rtol=1e-10, atol=1e-10, t_eval=grid)
    assert res.success, res.message
    g, l, m = 9.81, 0.9, 1.3
    ang = solve_ivp(
        lambda _, s: [s[1], -g / l * math.sin(s[0])],
        (0.0, 4.0),
        [0.7, 0.0],
        t_eval=grid,
        rtol=1e-12,
        atol=1e-12,
        method="DOP853",
    )
    np.testing.assert_allclose(res.q[:, 0], l * np.sin(ang.y[0]), atol=1e-7)
    np.testing.assert_allclose(res.q[:, 1], -l * np.cos(ang.y[0]), atol=1e-7)
    x, y = res.q.T
    v2 = (res.qd**2).sum(axis=1)
    tension = m * (v2 - g * y) / l
    assert res.multipliers.shape == (len(grid), 1)
    np.testing.assert_allclose(res.multipliers[:, 0], -tension / (2 * l), rtol=1e-6)


def test_unconstrained_equations_are_an_implicit_ode():
    """Lagrange's equations without constraints (no multipliers): IDA on
    M q'' = f follows the ODE path."""
    grid = np.linspace(0.0, 2.0, 11)
    eom = cached_eom("lagrange", "double_pendulum")
    res = integrate_dae(eom, 2.0, rtol=1e-10, atol=1e-10, t_eval=grid)
    ref = integrate(
        cached_eom("kane", "double_pendulum"), 2.0, rtol=1e-12, atol=1e-12, t_eval=grid
    )
    assert res.success and res.multipliers.shape == (11, 0)
    assert np.abs(res.q - ref.q).max() < 1e-7


def test_sympy_peer_and_compiled_backend_give_the_same_trajectory():
    """The DAE path reads only the numeric contract: sympy's
    LagrangesMethod (the peer with multipliers) and the compiled model of
    lagrange's equations integrate to lagrange's lambdified trajectory."""
    grid = np.linspace(0.0, 2.0, 11)
    kw = dict(rtol=1e-10, atol=1e-10, t_eval=grid)
    base = integrate_dae(cached_eom("lagrange", "four_bar"), 2.0, **kw)
    peer = integrate_dae(cached_eom("sympy_lagrange", "four_bar"), 2.0, **kw)
    assert peer.success and peer.formulation == "sympy_lagrange"
    assert np.abs(peer.q - base.q).max() < 1e-8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # no compiler: lambdify
        model = cached_eom("lagrange", "four_bar").numeric(backend="auto")
    compiled = integrate_dae(model, 2.0, **kw)
    assert np.abs(compiled.q - base.q).max() < 1e-8
    np.testing.assert_allclose(compiled.multipliers, base.multipliers, rtol=1e-6)


def test_cost_is_counted():
    eom = cached_eom("lagrange", "four_bar")
    model = eom.numeric()
    res = integrate_dae(model, 1.0, rtol=1e-8, atol=1e-8)
    # Every residual evaluates the model's mass matrix and forcing once;
    # the model's own counter is of right-hand sides (solves), untouched.
    assert res.nfev > 0 and res.njev > 0
    assert res.nfev > res.njev * (2 * 3 + 2 + 2)  # a Jacobian is N residuals
    assert model.nfev == 0
    assert res.cpu_seconds > 0


@pytest.mark.slow
def test_bricard_redundant_rows_chosen_again_along_the_motion():
    """IFToMM A04: five closure equations of rank four.  The rows kept at
    the start lose rank about 1.2 s in (where the whole set does not), so
    the rows are chosen again; the trajectory follows Kane's in the
    independent speed."""
    grid = np.linspace(0.0, 2.0, 21)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _ode_reference("bricard", 2.0, grid)
        eom = cached_eom("lagrange", "bricard")
        res = integrate_dae(eom, 2.0, rtol=1e-9, atol=1e-9, t_eval=grid)
    assert res.success, res.message
    assert res.n_reselections >= 1 and len(res.kept_rows) >= 2
    assert all(len(rows) == 4 for rows in res.kept_rows)
    assert np.abs(res.q - ref.q).max() < 1e-6
    assert res.max_holonomic_residual < 1e-8
    # Every declared multiplier row has a value, zero where dropped.
    assert res.multipliers.shape == (21, 5)


def test_singular_position_is_named():
    """IFToMM A02 (two four-bars) is horizontal 0.714 s in (the ODE path
    stops there too: tests/numeric/test_integrate.py): the Newton
    iteration fails at tight tolerances, and the result names the time
    and the singular position instead of raising."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eom = cached_eom("lagrange", "n_four_bar")
    res = integrate_dae(eom, 1.0, rtol=1e-10, atol=1e-10)
    assert not res.success
    assert abs(res.t[-1] - 0.714) < 1e-3
    assert "singular position" in res.message and "t=0.714" in res.message
    assert res.max_holonomic_residual < 1e-8
    # It stops there promptly: without a smallest step IDA went on with
    # steps too small to move t (each with its Jacobian, N residuals) up
    # to max_num_steps, tens of minutes on some machines.
    assert res.nfev < 20_000


# ----------------------------------------------------------------------
# Clear errors
# ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "formulation",
    [
        "kane",
        "gibbs_appell",
        # q'' of the independent coordinate only (a derivation of seconds)
        pytest.param("modified_lagrange", marks=pytest.mark.slow),
    ],
)
def test_formulations_without_multipliers_are_refused(formulation):
    eom = cached_eom(formulation, "four_bar")
    with pytest.raises(NoMultiplierFormError, match="multiplier form"):
        integrate_dae(eom, 1.0)


def test_missing_binding_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sksundae.ida", None)
    monkeypatch.setitem(sys.modules, "sksundae", None)
    with pytest.raises(ImportError, match=r"\.\[dae\]"):
        integrate_dae(cached_eom("lagrange", "four_bar"), 1.0)


def test_bad_arguments():
    eom = cached_eom("lagrange", "four_bar")
    ms = eom.system
    t0, q, qd = ms.states.consistent_initial_state()
    with pytest.raises(ConstraintError, match="inconsistent initial state"):
        integrate_dae(eom, 1.0, initial_state=(t0, np.asarray(q) + 0.1, qd))
    with pytest.raises(ValueError, match="rtol"):
        integrate_dae(eom, 1.0, rtol=-1.0)
    with pytest.raises(ValueError, match="t_eval"):
        integrate_dae(eom, 1.0, t_eval=[0.0, 2.0])
    with pytest.raises(ValueError, match="t_final"):
        integrate_dae(eom, -1.0)


def test_run_options_refuse_a_reference_without_multipliers():
    from eomcompare.compare.cases import SOLVERS, RunOptions

    assert DAE_METHOD in SOLVERS
    with pytest.raises(ValueError, match="--reference lagrange"):
        RunOptions(method=DAE_METHOD)
    RunOptions(method=DAE_METHOD, reference="lagrange")


def test_a_case_without_multipliers_is_refused_by_the_harness():
    from eomcompare.compare.case_run import run_case
    from eomcompare.compare.cases import Case, RunOptions

    opts = RunOptions(method=DAE_METHOD, reference="lagrange", use_cache=False)
    out = run_case(Case("four_bar", (), "kane"), opts)
    assert out["row"]["status"] == "unsupported"
    assert "multiplier form" in out["row"]["error"]


@pytest.mark.slow  # a subprocess importing the harness
def test_the_command_line_refuses_a_reference_without_multipliers(tmp_path):
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), EOMCOMPARE_CACHE=str(tmp_path / "c"))
    out = tmp_path / "run"
    res = subprocess.run(
        [sys.executable, "-m", "eomcompare", "run", "--systems", "double_pendulum"]
        + ["--method", DAE_METHOD, "--quiet", "--out", str(out)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--reference lagrange" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (out / "rows.jsonl").exists()
