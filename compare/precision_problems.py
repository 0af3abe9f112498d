"""The problems a work-precision sweep measures, its integrators and its
reference solutions (:mod:`eomcompare.compare.precision` runs the sweep).

A problem is a system variant with its horizon, output steps and measured
quantities: the IFToMM benchmark facts of the catalogue entry
(``system_facts(name).benchmark``), Andrews' squeezer as A03 (whose entry
carries none), or every coordinate over 10 s.  A reference solution is
the problem integrated at :data:`REFERENCE_TOL` by two solutions that must
agree: two formulations, or a formulation and a closed form.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from eomcompare.numeric.integrate import integrate

#: Integrator name -> callable ``(model, t_final, *, rtol, atol, t_eval,
#: stabilization, initial_state, singularity_tol, residuals)``.  A DAE
#: solver taking the same arguments is registered by one line.
INTEGRATORS: dict[str, Callable[..., Any]] = {
    name: functools.partial(integrate, method=name)
    for name in ("DOP853", "RK45", "Radau", "BDF", "LSODA")
}
#: The compiled drivers (:data:`eomcompare.numeric.drivers.DRIVERS`):
#: ``odeint`` is the LSODA of ``LSODA`` above and ``dop853`` the DOP853 of
#: ``DOP853`` (the same steps), their step loops in compiled code instead
#: of solve_ivp's Python.
INTEGRATORS["odeint"] = functools.partial(integrate, method="odeint")
INTEGRATORS["dop853"] = functools.partial(integrate, method="dop853")


def _ida(model, t_final, *, rtol, atol, t_eval=None, initial_state=None, **_ode_only):
    """SUNDIALS' IDA on the multiplier form (:func:`eomcompare.numeric.dae.
    integrate_dae`, its stabilised index-2 form): the ODE integrators'
    arguments it has no use for (``stabilization``, ``residuals``,
    ``singularity_tol``) are ignored, the form being IDA's own treatment."""
    from eomcompare.numeric.dae import integrate_dae

    return integrate_dae(
        model, t_final, rtol=rtol, atol=atol, t_eval=t_eval, initial_state=initial_state
    )


#: The DAE solver: integrates the multiplier form (``lagrange``,
#: ``sympy_lagrange``) with its own constraint treatment, ``ida-ggl``.
DAE_INTEGRATOR = "IDA"
INTEGRATORS[DAE_INTEGRATOR] = _ida

#: How each integrator gets its Jacobian.
JACOBIANS: dict[str, str] = {
    "DOP853": "none (explicit)",
    "dop853": "none (explicit)",
    "RK45": "none (explicit)",
    "Radau": "finite differences of the compiled right-hand side (scipy num_jac)",
    "BDF": "finite differences of the compiled right-hand side (scipy num_jac)",
    "LSODA": "LSODA's internal finite differences of the compiled right-hand side",
    "odeint": "LSODA's internal finite differences of the compiled right-hand side",
    "IDA": "IDA's internal finite differences of the DAE residual",
}

#: Constraint treatment name -> ``integrate``'s ``stabilization``.
TREATMENTS: dict[str, str | None] = {
    "projection": "projection",
    "baumgarte": "baumgarte",
    "none": None,
    # The multiplier form as a stabilised index-2 DAE: IDA's own treatment
    # (position and velocity constraints solved at every step).
    "ida-ggl": None,
}
#: The treatment only the DAE integrator takes, and the only one it takes.
DAE_TREATMENT = "ida-ggl"
#: Baumgarte gains (alpha, beta) of the ``baumgarte`` treatment, written
#: into ``lagrange``'s equations (the only formulation that takes them).
BAUMGARTE_GAINS = (5.0, 5.0)

#: rtol = atol of the reference solutions.
REFERENCE_TOL = 1e-12
#: The two solutions whose agreement makes a variant's reference.  The
#: N-four-bar's must pass its singular positions: ``modified_lagrange`` does
#: (on its explicit dependent solutions), while every formulation that
#: integrates the dependent coordinates leaves the parallelogram branch
#: there when not stopped (``kane`` at 1e-12 ends metres away); its second
#: solution is the closed form of that branch, a physical pendulum
#: (:func:`_n_four_bar_branch`), integrated at the same tolerance.
REFERENCE_PAIRS: dict[str, tuple[str, str]] = {
    "n_four_bar": ("modified_lagrange", "parallelogram branch"),
    # kane's and lagrange's equations of one pendulum are the same
    # arithmetic (their agreement is exactly zero and says nothing): the
    # second solution is the closed form.
    "iftomm_pendulum": ("kane", "elliptic closed form"),
}
DEFAULT_REFERENCE_PAIR = ("kane", "lagrange")
#: Reference integrator: DOP853, but the stiff problems need an implicit one.
REFERENCE_INTEGRATOR: dict[str, str] = {
    "flyball_governor": "Radau",
    "andrews_squeezer": "Radau",
}
#: Output steps of a problem whose specification gives none.
DEFAULT_OUTPUT_STEPS = 200


#: Evaluations between two readings of the clock by a capped solve.
CAP_CHECK_EVERY = 64


class SolveCapped(RuntimeError):
    """A solve ran past the sweep's processor-time cap."""


# ----------------------------------------------------------------------
# The problem: horizon, output steps, reference quantities
# ----------------------------------------------------------------------
def _andrews_f(ms) -> dict:
    """A03's reference point F, the crank's joint with the rod: F = rr
    (cos beta, sin beta) (the OpenSim port's crank OF of length 0.007 m is
    the test set's rr)."""
    import sympy as sm

    beta = next(q for q in ms.coordinates if str(q) == "beta(t)")
    rr = next(p for p in ms.parameters if str(p) == "rr")
    return {"x_F": rr * sm.cos(beta), "y_F": rr * sm.sin(beta)}


def _extra_problems() -> dict:
    """IFToMM problems whose catalogue entry carries no benchmark facts:
    Andrews' squeezer (A03, ``systems/andrews_squeezer.py``, Hairer and
    Wanner's test-set version).  Its reference quantity is the position of
    F (the OpenSim port, ``help/benchmarks/A03_AndrewsMechanism.rst``,
    compares F's displacement with the library's reference); the horizon
    is the test set's 0.03 s (the OpenSim port ran 0.05 s)."""
    from eomcompare.systems.catalogue import Benchmark

    return {
        "andrews_squeezer": (
            Benchmark(
                problem="A03",
                title="Andrews' squeezer",
                t_final=0.03,
                reference=("x_F", "y_F"),
                error_measure=(
                    "maximum absolute error of the coordinates of F over the "
                    "output steps, against the reference solution"
                ),
                energy_conserved=False,
            ),
            _andrews_f,
        )
    }


def problem_of(system: str, settings):
    """``(t_final, output_steps, benchmark or None)`` of a system."""
    from eomcompare.systems import system_facts

    bench = system_facts(system).benchmark if system in _catalogue() else None
    if bench is None and system in _extra_problems():
        bench = _extra_problems()[system][0]
    t_final = settings.t_final or (bench.t_final if bench else 10.0)
    steps = settings.output_steps or (
        bench.output_steps if bench and bench.output_steps else DEFAULT_OUTPUT_STEPS
    )
    return float(t_final), int(steps), bench


def _catalogue():
    from eomcompare.systems import CATALOGUE

    return CATALOGUE


@functools.cache
def _build(system: str, options: tuple) -> Any:
    from .prepared import prepared_declaration
    from .user_systems import build_system

    # The main job's sweep, forked from the run's process, solves the
    # declarations its cases were derived from.
    ms = prepared_declaration(system, dict(options))
    return ms if ms is not None else build_system(system, dict(options))


def measured_quantities(ms, bench) -> tuple[list[str], Callable]:
    """Names and a function ``(t, q) -> values`` of the quantities the
    error is measured on: the benchmark's reference quantities, else every
    coordinate."""
    import sympy as sm
    import sympy.physics.mechanics as me

    if bench is None:
        names = [str(c).replace("(t)", "") for c in ms.coordinates]
        return names, lambda t, q: np.asarray(q, dtype=float)
    observables = dict(ms.observables)
    if ms.name in _extra_problems() and not set(bench.reference) <= set(observables):
        observables |= _extra_problems()[ms.name][1](ms)
    missing = [r for r in bench.reference if r not in observables]
    if missing:
        raise ValueError(
            f"{ms.name}: the reference quantities {missing} are not among its "
            f"observables {sorted(ms.observables)}"
        )
    qs = [sm.Dummy(f"q{i}") for i in range(len(ms.coordinates))]
    ts = sm.Dummy("t")
    exprs = [
        sm.sympify(observables[r])
        .xreplace(dict(ms.parameters))
        .xreplace(dict(zip(ms.coordinates, qs)))
        .xreplace({me.dynamicsymbols._t: ts})
        for r in bench.reference
    ]
    f = sm.lambdify([ts, qs], exprs, modules="numpy")
    return list(bench.reference), lambda t, q: np.asarray(f(t, list(q)), dtype=float)


def max_abs_error(values: np.ndarray, reference: np.ndarray) -> float:
    """The IFToMM error measure: the largest absolute difference of the
    reference quantities over the output steps (``nan`` when the shapes
    differ: a solution that did not reach every output step has no
    error)."""
    values, reference = np.asarray(values, float), np.asarray(reference, float)
    if values.shape != reference.shape or not values.size:
        return float("nan")
    return float(np.max(np.abs(values - reference)))


def _observe(ms, bench, res) -> np.ndarray:
    _, f = measured_quantities(ms, bench)
    return np.array([f(t, q) for t, q in zip(res.t, res.q)]).reshape(len(res.t), -1)


def _energy_drift(ms, res) -> float:
    if not ms.energy_conserved or not len(res.t):
        return float("nan")
    E = np.array(
        [sum(ms.states.energy(t, q, qd)) for t, q, qd in zip(res.t, res.q, res.qd)]
    )
    return float(np.max(np.abs(E - E[0])))


def _model(system, options, formulation, settings, treatment="projection"):
    """The numeric model of one formulation on one variant (derived or read
    from the derivation cache), made once per process: the reference and
    the curves of a worker share it (generating the code costs more than
    most solves)."""
    return _model_memo(
        system,
        options,
        formulation,
        treatment == "baumgarte",
        settings.backend,
        settings.use_cache,
        settings.cache_dir,
    )


@functools.lru_cache(maxsize=64)
def _model_memo(system, options, formulation, baumgarte, backend, use_cache, cache_dir):
    from eomcompare.formulations import get_formulation

    from .cases import COMPILE_FROM

    ms = _build(system, options)
    if baumgarte:
        form = get_formulation(formulation, baumgarte=BAUMGARTE_GAINS)
    else:
        form = get_formulation(formulation)
    if use_cache:
        from eomcompare.formulations.cache import DerivationCache

        eom, _ = DerivationCache(cache_dir).derive(ms, form)
    else:
        eom = form.derive(ms)
    if backend == "sized":
        backend = "auto" if len(ms.coordinates) >= COMPILE_FROM else "lambdify"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = eom.numeric(backend=backend)
    model.prepare()  # before any solve is timed
    return ms, model


def _capped(model, cap: float):
    """A shallow copy of ``model`` whose right-hand side raises
    :class:`SolveCapped` once the process has spent ``cap`` processor
    seconds since the copy was made.

    The clock is read every :data:`CAP_CHECK_EVERY` evaluations: reading
    it costs about what a compiled right-hand side of a small model costs,
    and the solve being timed would pay for it at every one."""
    import copy

    m = copy.copy(model)
    limit = time.process_time() + cap
    rhs = model.rhs
    calls = [0]

    def checked(t, x):
        calls[0] += 1
        if not calls[0] % CAP_CHECK_EVERY and time.process_time() > limit:
            raise SolveCapped(f"stopped after {cap:g} s of processor time")
        return rhs(t, x)

    m.rhs = checked
    return m


def output_grid(t0: float, t_final: float, steps: int) -> np.ndarray:
    """The output times a problem's error is measured on: ``steps``
    intervals from ``t0`` over ``t_final`` seconds."""
    return np.linspace(t0, t0 + t_final, steps + 1)


def solve_cell(model, integrator, treatment, tol, t_end, grid, initial_state):
    """One solve of a sweep's cell (an integrator, a constraint treatment
    and rtol = atol = ``tol``) reporting the states at ``grid``: the call
    the sweep times, and the one its table's times are measured again on."""
    return INTEGRATORS[integrator](
        model,
        t_end,
        rtol=tol,
        atol=tol,
        t_eval=grid,
        initial_state=initial_state,
        stabilization=TREATMENTS[treatment],
        residuals=False,
    )


# ----------------------------------------------------------------------
# Reference solutions
# ----------------------------------------------------------------------
def reference_solution(system: str, options: tuple, settings: Any) -> dict:
    """The variant's reference: its measured quantities on the output
    steps, integrated at :data:`REFERENCE_TOL` by two formulations
    (:data:`REFERENCE_PAIRS`), the first's values kept and their largest
    difference recorded as ``agreement``.

    ``settings`` is a :class:`eomcompare.compare.precision.PrecisionSettings`.

    Returns a dict with ``t``, ``values`` (output steps x quantities),
    ``names``, ``formulations``, ``integrator``, ``agreement``,
    ``energy_drift`` (of the first) and ``cpu_s``; on failure ``status``
    and ``message`` say why and ``values`` is None.
    """
    t_final, steps, bench = problem_of(system, settings)
    pair = REFERENCE_PAIRS.get(system, DEFAULT_REFERENCE_PAIR)
    method = REFERENCE_INTEGRATOR.get(system, "DOP853")
    out = {
        "system": system,
        "options": list(options),
        "formulations": list(pair),
        "integrator": method,
        "tolerance": REFERENCE_TOL,
        "t_final": t_final,
        "output_steps": steps,
        "values": None,
        "status": "ok",
        "message": "",
    }
    results = []
    start = time.process_time()
    try:
        for formulation in pair:
            if formulation in CLOSED_FORMS:
                continue
            ms, model = _model(system, options, formulation, settings)
            t0, q0, qd0 = ms.states.consistent_initial_state()
            grid = output_grid(t0, t_final, steps)
            res = INTEGRATORS[method](
                model,
                t0 + t_final,
                rtol=REFERENCE_TOL,
                atol=REFERENCE_TOL,
                t_eval=grid,
                initial_state=(t0, q0, qd0),
                stabilization="projection",
                singularity_tol=None,
                residuals=False,
            )
            if not res.success or len(res.t) != len(grid):
                raise RuntimeError(f"{formulation}: {res.message}")
            results.append((ms, res))
    except Exception as exc:  # recorded: the variant's curves report it
        out.update(status="failed", message=f"{type(exc).__name__}: {exc}")
        return out
    ms, res = results[0]
    names, _ = measured_quantities(ms, bench)
    values = [_observe(m, bench, r) for m, r in results]
    for formulation in pair:
        if formulation in CLOSED_FORMS:
            values.append(CLOSED_FORMS[formulation](dict(options), res.t))
    out.update(
        t=results[0][1].t,
        values=values[0],
        names=names,
        agreement=max_abs_error(values[1], values[0]),
        energy_drift=_energy_drift(ms, res),
        cpu_s=time.process_time() - start,
    )
    return out


def _n_four_bar_branch(options: dict, t: np.ndarray) -> np.ndarray:
    """B0 = (L cos phi0, L sin phi0) on the N-four-bar's parallelogram
    branch, where every crank turns with crank 0 and the couplers
    translate: a physical pendulum ``((n+1)/3 + n) m L^2 phi0'' =
    -((n+1)/2 + n) m g L cos(phi0)``, from phi0 = pi/2, phi0' = -1/L (B0's
    x-velocity 1 m/s), integrated by DOP853 at :data:`REFERENCE_TOL`."""
    from scipy.integrate import solve_ivp

    from eomcompare.systems.iftomm import A02_B0_SPEED, A02_PARAMETERS

    n = int(options.get("n", 2))
    g, length = A02_PARAMETERS["g"], A02_PARAMETERS["L"]
    inertia, moment = (n + 1) / 3 + n, (n + 1) / 2 + n
    sol = solve_ivp(
        lambda _, y: [y[1], -moment * g * np.cos(y[0]) / (inertia * length)],
        (t[0], t[-1]),
        [np.pi / 2, -A02_B0_SPEED / length],
        method="DOP853",
        rtol=REFERENCE_TOL,
        atol=REFERENCE_TOL,
        t_eval=t,
    )
    phi = sol.y[0]
    return np.column_stack([length * np.cos(phi), length * np.sin(phi)])


def _pendulum_elliptic(options: dict, t: np.ndarray) -> np.ndarray:
    """P1 of the IFToMM pendulum released from the horizontal at rest, in
    closed form: with phi the angle from the downward vertical,
    ``sin(phi/2) = k sn(K(m) - w t | m)``, ``k = sin(pi/4)``, ``m = k^2 =
    1/2``, ``w = sqrt(g/L)`` (Jacobi's elliptic sine); P1 = L (sin phi,
    -cos phi)."""
    from scipy.special import ellipj, ellipk

    from eomcompare.systems.iftomm import A01_PARAMETERS

    g, length = A01_PARAMETERS["g"], A01_PARAMETERS["L"]
    m = 0.5
    sn, _, _, _ = ellipj(ellipk(m) - np.sqrt(g / length) * np.asarray(t), m)
    phi = 2 * np.arcsin(np.sqrt(m) * sn)
    return np.column_stack([length * np.sin(phi), -length * np.cos(phi)])


#: Closed forms standing as a reference's second solution.
CLOSED_FORMS: dict[str, Callable[[dict, np.ndarray], np.ndarray]] = {
    "parallelogram branch": _n_four_bar_branch,
    "elliptic closed form": _pendulum_elliptic,
}
