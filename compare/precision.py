"""Work--precision sweeps: CPU time against accuracy, per formulation,
integrator and constraint treatment (``python -m compare precision``).

One integration at one tolerance says little when formulations that treat
constraints differently reach different accuracies at that tolerance.  The
sweep integrates every (system variant, formulation, integrator, treatment)
at several tolerances and measures each solution's error the way the IFToMM
library of computational benchmark problems does (González, Dopico, Lugrís,
Cuadrado, Multibody System Dynamics 16, 2006): the maximum absolute error of
the problem's reference quantities (``system_facts(name).benchmark``,
expressions in ``ms.observables``) over its output steps, against a
reference solution.  A system without benchmark facts is measured on all
its coordinates.  Where the energy is conserved its drift (the largest
``|E - E0|`` over the output steps, in joules) is recorded beside it.

The reference solution of a variant is integrated at :data:`REFERENCE_TOL`
by two formulations (:data:`REFERENCE_PAIRS`), without the singularity
stop, and their agreement (the same measure between the two) is recorded
with every row: an error below it cannot be resolved.

Integrators are a name -> callable table (:data:`INTEGRATORS`), each with
the signature of :func:`numeric.integrate.integrate` less its ``method``;
a DAE solver is one more entry.  The implicit ones (Radau, BDF, LSODA) use
the Jacobian of finite differences of the compiled right-hand side
(:data:`JACOBIANS`: scipy's ``num_jac`` for Radau and BDF, LSODA's own
differences), each evaluation counted in ``nfev``.

Rows go to ``precision.jsonl`` in the output directory as each curve
finishes (one write of whole lines), and ``precision.csv`` is rewritten
whole after each; a run into the same directory with the same settings and
code resumes the curves already there.  SIGINT or SIGTERM stops the sweep
within a second, keeping every finished curve.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import hashlib
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from numeric.integrate import integrate

__all__ = [
    "COLUMNS",
    "INTEGRATORS",
    "JACOBIANS",
    "TREATMENTS",
    "DEFAULT_TOLERANCES",
    "QUICK_TOLERANCES",
    "REFERENCE_TOL",
    "REFERENCE_PAIRS",
    "PrecisionSettings",
    "Curve",
    "max_abs_error",
    "reference_solution",
    "run_curve",
    "sweep",
    "quick_sweep",
    "read_precision",
]

#: Columns of ``precision.csv``, the schema's first nine in this order;
#: the rest say what each number is measured against.
COLUMNS = (
    "system",
    "formulation",
    "integrator",
    "treatment",
    "tolerance",
    "error",
    "cpu_s",
    "nfev",
    "status",
    "energy_drift",
    "reference_agreement",
    "t_final",
    "output_steps",
    "measured_on",
    "cpu_s_median",
    "cpu_s_k",
    "backend",
    "message",
)

#: Integrator name -> callable ``(model, t_final, *, rtol, atol, t_eval,
#: stabilization, initial_state, singularity_tol, residuals)``.  A DAE
#: solver taking the same arguments is registered by one line.
INTEGRATORS: dict[str, Callable[..., Any]] = {
    name: functools.partial(integrate, method=name)
    for name in ("DOP853", "RK45", "Radau", "BDF", "LSODA")
}

#: How each integrator gets its Jacobian.
JACOBIANS: dict[str, str] = {
    "DOP853": "none (explicit)",
    "RK45": "none (explicit)",
    "Radau": "finite differences of the compiled right-hand side (scipy num_jac)",
    "BDF": "finite differences of the compiled right-hand side (scipy num_jac)",
    "LSODA": "LSODA's internal finite differences of the compiled right-hand side",
}

#: Constraint treatment name -> ``integrate``'s ``stabilization``.
TREATMENTS: dict[str, str | None] = {
    "projection": "projection",
    "baumgarte": "baumgarte",
    "none": None,
}
#: Baumgarte gains (alpha, beta) of the ``baumgarte`` treatment, written
#: into ``lagrange``'s equations (the only formulation that takes them).
BAUMGARTE_GAINS = (5.0, 5.0)

#: rtol = atol of the sweep (the command's default): seven decades.
DEFAULT_TOLERANCES = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
#: The default run's cheap sweep: six decades.
QUICK_TOLERANCES = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
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


class SolveCapped(RuntimeError):
    """A solve ran past the sweep's processor-time cap."""


@dataclass(frozen=True)
class PrecisionSettings:
    """Everything that changes a sweep's numbers (hashed into
    :meth:`digest`, which resumes only rows of the same settings).

    Attributes
    ----------
    tolerances : tuple of float
        rtol = atol values, at least six, each in (0, 1).
    t_final : float or None
        Simulated seconds; None: the problem's own (``benchmark.t_final``)
        or 10 s.
    output_steps : int or None
        Output steps the error is measured over; None: the problem's own
        or :data:`DEFAULT_OUTPUT_STEPS`.
    backend : str
        Numeric backend (``"sized"``: compiled C from four coordinates).
    solve_cap : float
        Processor seconds one solve may take; a curve stops at the first
        capped tolerance (the tighter ones would cost more).
    time_samples, time_budget : int, float
        A solve is repeated for its time up to ``time_samples`` times
        within ``time_budget`` processor seconds; the fastest is kept.
    """

    tolerances: tuple[float, ...] = DEFAULT_TOLERANCES
    t_final: float | None = None
    output_steps: int | None = None
    backend: str = "sized"
    solve_cap: float = 60.0
    time_samples: int = 3
    time_budget: float = 0.5
    use_cache: bool = True
    cache_dir: str | None = None

    def __post_init__(self) -> None:
        tols = tuple(self.tolerances)
        if len(tols) < 6:
            raise ValueError(
                f"tolerances: at least six are needed for a work-precision "
                f"curve, got {len(tols)} ({list(tols)})"
            )
        for tol in tols:
            if not (isinstance(tol, (int, float)) and 0 < tol < 1):
                raise ValueError(f"tolerances must lie in (0, 1), not {tol!r}")
        object.__setattr__(self, "tolerances", tuple(sorted(tols, reverse=True)))
        if self.t_final is not None and not (
            math.isfinite(self.t_final) and self.t_final > 0
        ):
            raise ValueError(f"t_final must be a positive number, not {self.t_final}")
        if self.output_steps is not None and not (
            isinstance(self.output_steps, int) and self.output_steps >= 1
        ):
            raise ValueError(
                f"output_steps must be a positive integer, not {self.output_steps!r}"
            )
        if not (math.isfinite(self.solve_cap) and self.solve_cap > 0):
            raise ValueError(
                f"solve_cap must be a positive number, not {self.solve_cap}"
            )
        choices = ("sized", "lambdify", "c", "auto")
        if self.backend not in choices:
            raise ValueError(
                f"backend must be one of {list(choices)}, not {self.backend!r}"
            )

    def digest(self) -> str:
        from .cache import code_digest

        fields = dataclasses.asdict(self)
        fields.pop("tolerances")  # rows are per tolerance
        fields.pop("time_samples")
        fields.pop("time_budget")
        fields.pop("cache_dir")
        fields.pop("use_cache")
        fields["code"] = code_digest(("symbolic", "numeric", "systems", "formulations"))
        fields["reference_tol"] = REFERENCE_TOL
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[
            :12
        ]


@dataclass(frozen=True)
class Curve:
    """One work-precision curve: a system variant, a formulation, an
    integrator and a constraint treatment."""

    system: str
    options: tuple[tuple[str, Any], ...]
    formulation: str
    integrator: str
    treatment: str

    @property
    def label(self) -> str:
        from .variants import variant_label

        return (
            f"{self.system}[{variant_label(self.options)}]"
            if self.options
            else self.system
        )

    @property
    def id(self) -> str:
        return f"{self.label}/{self.formulation}/{self.integrator}/{self.treatment}"


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
    from systems.catalogue import Benchmark

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


def problem_of(system: str, settings: PrecisionSettings):
    """``(t_final, output_steps, benchmark or None)`` of a system."""
    from systems import system_facts

    bench = system_facts(system).benchmark if system in _catalogue() else None
    if bench is None and system in _extra_problems():
        bench = _extra_problems()[system][0]
    t_final = settings.t_final or (bench.t_final if bench else 10.0)
    steps = settings.output_steps or (
        bench.output_steps if bench and bench.output_steps else DEFAULT_OUTPUT_STEPS
    )
    return float(t_final), int(steps), bench


def _catalogue():
    from systems import CATALOGUE

    return CATALOGUE


@functools.cache
def _build(system: str, options: tuple) -> Any:
    from .user_systems import build_system

    return build_system(system, dict(options))


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
    E = np.array([sum(ms.energy(t, q, qd)) for t, q, qd in zip(res.t, res.q, res.qd)])
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
    from formulations import get_formulation

    from .runner import COMPILE_FROM

    ms = _build(system, options)
    if baumgarte:
        form = get_formulation(formulation, baumgarte=BAUMGARTE_GAINS)
    else:
        form = get_formulation(formulation)
    if use_cache:
        from .cache import DerivationCache

        eom, _ = DerivationCache(cache_dir).derive(ms, form)
    else:
        eom = form.derive(ms)
    if backend == "sized":
        backend = "auto" if len(ms.coordinates) >= COMPILE_FROM else "lambdify"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = eom.numeric(backend=backend)
    return ms, model


def _capped(model, cap: float):
    """A shallow copy of ``model`` whose right-hand side raises
    :class:`SolveCapped` once the process has spent ``cap`` processor
    seconds since the copy was made."""
    import copy

    m = copy.copy(model)
    limit = time.process_time() + cap
    rhs = model.rhs

    def checked(t, x):
        if time.process_time() > limit:
            raise SolveCapped(f"stopped after {cap:g} s of processor time")
        return rhs(t, x)

    m.rhs = checked
    return m


# ----------------------------------------------------------------------
# Reference solutions
# ----------------------------------------------------------------------
def reference_solution(
    system: str, options: tuple, settings: PrecisionSettings
) -> dict:
    """The variant's reference: its measured quantities on the output
    steps, integrated at :data:`REFERENCE_TOL` by two formulations
    (:data:`REFERENCE_PAIRS`), the first's values kept and their largest
    difference recorded as ``agreement``.

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
            t0, q0, qd0 = ms.consistent_initial_state()
            grid = np.linspace(t0, t0 + t_final, steps + 1)
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

    from systems.iftomm import A02_B0_SPEED, A02_PARAMETERS

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

    from systems.iftomm import A01_PARAMETERS

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


# ----------------------------------------------------------------------
# One curve
# ----------------------------------------------------------------------
def run_curve(curve: Curve, settings: PrecisionSettings, reference: dict) -> list[dict]:
    """The rows of one curve, one per tolerance, loosest first.

    A curve stops at the first tolerance that fails, is capped or stops at
    a singular position (the tighter ones are recorded ``skipped``): it
    would not do better there.  Statuses: ``ok``; ``singular`` (stopped at
    a singular position, named in ``message``); ``failed`` (the integrator
    gave up); ``capped`` (past ``solve_cap``); ``refused`` (the formulation
    or the treatment does not apply, with the reason); ``skipped``;
    ``no_reference``.
    """
    from compare.timing import repeat_within
    from formulations.errors import UnsupportedSystemError
    from numeric.model import SingularConfigurationError

    t_final, steps, bench = problem_of(curve.system, settings)
    base = {
        "system": curve.label,
        "formulation": curve.formulation,
        "integrator": curve.integrator,
        "treatment": curve.treatment,
        "t_final": t_final,
        "output_steps": steps,
        "reference_agreement": reference.get("agreement", float("nan")),
        "measured_on": ",".join(reference.get("names") or ()),
        "backend": "",
    }

    def rows_with(status, message, tolerances):
        return [
            base
            | {
                "tolerance": tol,
                "error": float("nan"),
                "cpu_s": float("nan"),
                "nfev": None,
                "status": status,
                "message": message,
                "energy_drift": float("nan"),
            }
            for tol in tolerances
        ]

    if reference.get("values") is None:
        return rows_with(
            "no_reference",
            reference.get("message", "no reference"),
            settings.tolerances,
        )
    if curve.integrator not in INTEGRATORS:
        raise ValueError(
            f"unknown integrator {curve.integrator!r}; valid: {sorted(INTEGRATORS)}"
        )
    stabilization = TREATMENTS[curve.treatment]
    if curve.treatment == "baumgarte" and curve.formulation != "lagrange":
        return rows_with(
            "refused",
            "Baumgarte's terms are written into lagrange's equations only "
            "(get_formulation('lagrange', baumgarte=...))",
            settings.tolerances,
        )
    try:
        ms, model = _model(
            curve.system, curve.options, curve.formulation, settings, curve.treatment
        )
    except UnsupportedSystemError as exc:
        return rows_with("refused", str(exc), settings.tolerances)
    except Exception as exc:
        return rows_with("failed", f"{type(exc).__name__}: {exc}", settings.tolerances)
    if curve.treatment == "baumgarte" and not ms.holonomic_constraints:
        return rows_with(
            "refused", "no holonomic constraints to stabilize", settings.tolerances
        )
    base["backend"] = getattr(model, "backend", "lambdify")
    t0, q0, qd0 = ms.consistent_initial_state()
    grid = np.asarray(reference["t"], dtype=float)
    rows: list[dict] = []
    for i, tol in enumerate(settings.tolerances):

        def solve(capped=True):
            m = _capped(model, settings.solve_cap) if capped else model
            start = time.process_time()
            res = INTEGRATORS[curve.integrator](
                m,
                t0 + t_final,
                rtol=tol,
                atol=tol,
                t_eval=grid,
                initial_state=(t0, q0, qd0),
                stabilization=stabilization,
                residuals=False,
            )
            took = time.process_time() - start
            return res, took

        try:
            with np.errstate(all="ignore"):
                res, took = solve()
        except SingularConfigurationError as exc:
            rows += rows_with("singular", str(exc), [tol])
        except SolveCapped as exc:
            rows += rows_with("capped", str(exc), [tol])
        except Exception as exc:
            rows += rows_with("failed", f"{type(exc).__name__}: {exc}", [tol])
        else:
            if not res.success or len(res.t) != len(grid):
                rows += rows_with("failed", res.message, [tol])
            else:
                samples = repeat_within(
                    lambda: (solve()[1],) * 2,
                    [(took, took)],
                    settings.time_samples,
                    settings.time_budget,
                )
                values = _observe(ms, bench, res)
                rows.append(
                    base
                    | {
                        "tolerance": tol,
                        "error": max_abs_error(values, reference["values"]),
                        "cpu_s": float(min(samples)),
                        "cpu_s_median": float(np.median(samples)),
                        "cpu_s_k": len(samples),
                        "nfev": int(res.nfev),
                        "status": "ok",
                        "message": "",
                        "energy_drift": _energy_drift(ms, res),
                    }
                )
                continue
        rows += rows_with(
            "skipped",
            f"not run: the curve stopped at tolerance {tol:g} ({rows[-1]['status']})",
            settings.tolerances[i + 1 :],
        )
        break
    return rows


def _run_curve_task(curve, settings, reference):
    """A curve in a worker: exceptions become rows, never a lost task."""
    try:
        return run_curve(curve, settings, reference)
    except Exception as exc:  # pragma: no cover - defensive
        return [
            {
                "system": curve.label,
                "formulation": curve.formulation,
                "integrator": curve.integrator,
                "treatment": curve.treatment,
                "tolerance": tol,
                "status": "failed",
                "message": f"{type(exc).__name__}: {exc}",
            }
            for tol in settings.tolerances
        ]


# ----------------------------------------------------------------------
# The sweep
# ----------------------------------------------------------------------
def expand_curves(
    systems: Sequence[str] | None,
    formulations: Sequence[str] | None,
    integrators: Sequence[str] | None = None,
    treatments: Sequence[str] | None = None,
    n: Sequence[int] | None = None,
    variants: Mapping[str, list] | None = None,
) -> list[Curve]:
    """Every curve of a sweep (``ValueError`` naming an unknown name and
    the valid ones).  Defaults: the default run's systems, the project's
    own formulations of the default comparison, DOP853, projection."""
    from formulations import formulation_names

    from .runner import _is_peer, expand_cases

    if not formulations:
        formulations = [
            f for f in formulation_names(default_only=True) if not _is_peer(f)
        ]
    integrators = list(dict.fromkeys(integrators or ["DOP853"]))
    bad = [i for i in integrators if i not in INTEGRATORS]
    if bad:
        raise ValueError(f"unknown integrators {bad}; valid: {sorted(INTEGRATORS)}")
    treatments = list(dict.fromkeys(treatments or ["projection"]))
    bad = [t for t in treatments if t not in TREATMENTS]
    if bad:
        raise ValueError(f"unknown treatments {bad}; valid: {sorted(TREATMENTS)}")
    cases = expand_cases(systems, formulations, n, variants)
    return [
        Curve(c.system, c.options, c.formulation, i, t)
        for c in cases
        for i in integrators
        for t in treatments
    ]


def _reference_path(out: Path, system: str, options: tuple, digest: str) -> Path:
    from .variants import variant_label

    label = system + ("_" + variant_label(options) if options else "")
    slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)
    return out / "precision_references" / f"{slug}.{digest}.json"


def _load_reference(path: Path) -> dict | None:
    try:
        ref = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if ref.get("values") is not None:
        ref["t"] = np.asarray(ref["t"], dtype=float)
        ref["values"] = np.asarray(ref["values"], dtype=float)
    return ref


def _save_reference(path: Path, ref: dict) -> None:
    from .runner import _atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, json.dumps(ref, default=_jsonable).encode())


def _jsonable(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return str(x)


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    try:
        text = path.read_text()
    except OSError:
        return rows
    for line in text.splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # a write cut short: its curve runs again
    return rows


def _append_rows(path: Path, rows: list[dict]) -> None:
    from .runner import RunOutputError

    data = "".join(json.dumps(r, default=_jsonable) + "\n" for r in rows).encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if os.write(fd, data) != len(data):
                os.ftruncate(fd, size)
                raise OSError(28, "short write (disk full?)")
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise RunOutputError(
            exc.errno,
            f"cannot save precision rows in {path.parent}: {exc.strerror or exc}",
        ) from exc


def _write_csv(out: Path, rows: list[dict]) -> Path:
    from .runner import _atomic_write

    frame = pd.DataFrame(rows)
    for c in COLUMNS:
        if c not in frame:
            frame[c] = None
    frame = frame[list(COLUMNS)]
    path = out / "precision.csv"
    _atomic_write(path, frame.to_csv(index=False).encode())
    return path


def sweep(
    systems: Sequence[str] | None = None,
    formulations: Sequence[str] | None = None,
    *,
    integrators: Sequence[str] | None = None,
    treatments: Sequence[str] | None = None,
    n: Sequence[int] | None = None,
    variants: Mapping[str, list] | None = None,
    out: str | os.PathLike[str],
    executor: cf.Executor | None = None,
    jobs: int | None = None,
    progress: bool = True,
    resume: bool = True,
    settings: PrecisionSettings | None = None,
) -> pd.DataFrame:
    """Run the tolerance sweep into ``out`` and return ``precision.csv``'s
    frame.

    References first (one task per variant), then one task per curve, each
    on ``executor`` (a dask ``Client.get_executor()``), in ``jobs`` worker
    processes, or here (``jobs=1``).

    Raises
    ------
    ValueError
        Bad names or settings, before anything runs.
    compare.runner.RunInterrupted
        On SIGINT or SIGTERM, after saving every finished curve.
    compare.runner.RunOutputError
        When ``out`` cannot be written during the sweep.
    """
    from .runner import RunInterrupted, _Signals, check_output_dir

    settings = settings or PrecisionSettings()
    curves = expand_curves(systems, formulations, integrators, treatments, n, variants)
    if jobs is not None and (
        isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1
    ):
        raise ValueError(f"jobs must be a positive integer, not {jobs!r}")
    out = check_output_dir(out)
    digest = settings.digest()
    jsonl = out / "precision.jsonl"
    if not resume:
        jsonl.unlink(missing_ok=True)
    kept = [r for r in _read_jsonl(jsonl) if r.get("settings_digest") == digest]
    done_ids = {r["curve"] for r in kept}
    wanted = {c.id for c in curves}
    tol_set = set(settings.tolerances)
    have: dict[str, set] = {}
    for r in kept:
        have.setdefault(r["curve"], set()).add(r["tolerance"])
    todo = [c for c in curves if not (c.id in done_ids and tol_set <= have[c.id])]
    rows = [r for r in kept if r["curve"] in wanted and r["tolerance"] in tol_set]
    # A curve rerun replaces its earlier rows.
    rerun = {c.id for c in todo}
    rows = [r for r in rows if r["curve"] not in rerun]
    variants_needed = list(dict.fromkeys((c.system, c.options) for c in todo))
    refs: dict[tuple, dict] = {}
    for key in variants_needed:
        path = _reference_path(out, *key, digest)
        ref = _load_reference(path) if resume else None
        if ref is not None:
            refs[key] = ref

    bar = None
    if progress and (todo or len(refs) < len(variants_needed)):
        from tqdm.auto import tqdm

        bar = tqdm(
            total=len(todo) + len(variants_needed) - len(refs),
            desc="precision",
            unit="task",
        )
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    pool = None
    if executor is None and jobs > 1:
        import multiprocessing as mp

        pool = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork"))
    run_on = executor or pool

    def submit(fn, *args):
        if run_on is None:
            fut: cf.Future = cf.Future()
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:
                fut.set_exception(exc)
            return fut
        return run_on.submit(fn, *args)

    def tick(text):
        if bar is not None:
            bar.set_postfix_str(text, refresh=False)
            bar.update()

    def wait(futs, signals, on_done):
        remaining = set(futs)
        while remaining and signals.signum is None:
            finished, remaining = cf.wait(
                remaining, timeout=0.5, return_when=cf.FIRST_COMPLETED
            )
            for fut in finished:
                if not fut.cancelled():
                    on_done(futs[fut], fut.result())
        return remaining

    try:
        with _Signals() as signals:
            futs = {
                submit(reference_solution, s, o, settings): (s, o)
                for s, o in variants_needed
                if (s, o) not in refs
            }

            def got_reference(key, ref):
                _save_reference(_reference_path(out, *key, digest), ref)
                ref = _load_reference(_reference_path(out, *key, digest)) or ref
                refs[key] = ref
                tick(f"reference {key[0]}")

            left = wait(futs, signals, got_reference)
            if signals.signum is None:
                futs = {
                    submit(_run_curve_task, c, settings, refs[(c.system, c.options)]): c
                    for c in todo
                }

                def got_curve(curve, curve_rows):
                    for r in curve_rows:
                        r["curve"] = curve.id
                        r["settings_digest"] = digest
                    _append_rows(jsonl, curve_rows)
                    rows.extend(curve_rows)
                    _write_csv(out, rows)
                    tick(curve.id)

                left = wait(futs, signals, got_curve)
            if signals.signum is not None:
                for fut in left:
                    fut.cancel()
                _write_csv(out, rows)
                raise RunInterrupted(signals.signum, len({r["curve"] for r in rows}))
    finally:
        if bar is not None:
            bar.close()
        if pool is not None:
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.kill()
            pool.shutdown(wait=False, cancel_futures=True)
    _write_csv(out, rows)
    return read_precision(out / "precision.csv")


def read_precision(path: str | os.PathLike[str]) -> pd.DataFrame:
    """``precision.csv`` as a frame, checked against :data:`COLUMNS`
    (``ValueError`` naming the file and the missing columns)."""
    path = Path(path)
    frame = pd.read_csv(path)
    missing = [c for c in COLUMNS[:9] if c not in frame]
    if missing:
        raise ValueError(f"{path}: not a precision.csv, missing columns {missing}")
    return frame


#: The default run's cheap sweep: an unconstrained chain, the IFToMM
#: pendulum (over its first 2 s, not its 2,000) and a closed loop in
#: redundant coordinates, where the constraint treatments differ.
QUICK_SYSTEMS = ("double_pendulum", "iftomm_pendulum", "four_bar")
QUICK_VARIANTS = {"four_bar": [{"coordinates": "redundant"}]}


def quick_sweep(
    out,
    *,
    systems: Sequence[str] = QUICK_SYSTEMS,
    formulations: Sequence[str] | None = None,
    jobs: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """The default run's cheap sweep, a few seconds: :data:`QUICK_SYSTEMS`
    with the project's own formulations, DOP853 with projection,
    :data:`QUICK_TOLERANCES` over the first 2 s with 100 output steps, so
    the main job's report shows work-precision diagrams.  The catalogue at
    large and the IFToMM problems over their own horizons are the
    ``precision`` command's job (minutes to hours)."""
    settings = PrecisionSettings(
        tolerances=QUICK_TOLERANCES,
        t_final=2.0,
        output_steps=100,
        time_samples=3,
        time_budget=0.05,
    )
    variants = {s: v for s, v in QUICK_VARIANTS.items() if s in systems}
    return sweep(
        list(systems),
        formulations,
        variants=variants or None,
        out=out,
        jobs=jobs,
        progress=progress,
        settings=settings,
    )
