"""Work--precision sweeps: CPU time against accuracy, per formulation,
integrator and constraint treatment (``python -m eomcompare precision``).

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
the signature of :func:`eomcompare.numeric.integrate.integrate` less its ``method``;
a DAE solver is one more entry, and so is each compiled driver of
:mod:`eomcompare.numeric.drivers` (``odeint``: LSODA stepping in compiled
code, where solve_ivp's methods step in Python).  The implicit ones (Radau, BDF, LSODA) use
the Jacobian of finite differences of the compiled right-hand side
(:data:`JACOBIANS`: scipy's ``num_jac`` for Radau and BDF, LSODA's own
differences), each evaluation counted in ``nfev``.

Rows go to ``precision.jsonl`` in the output directory as each curve
finishes (one write of whole lines), and ``precision.csv`` is rewritten
whole after each; a run into the same directory with the same settings and
code resumes the curves already there.  SIGINT or SIGTERM stops the sweep,
keeping every finished curve: within a second when the curves run in
worker processes or on dask, after the curve running when they run here
(``jobs=1``; a second signal stops at once).

The problems, integrators and reference solutions are in
:mod:`eomcompare.compare.precision_problems`.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import hashlib
import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eomcompare.numeric.dae import NoMultiplierFormError
from eomcompare.numeric.drivers import UnsupportedDriverError
from eomcompare.numeric.stack_room import call_with_room

from .precision_problems import (
    DAE_INTEGRATOR,
    DAE_TREATMENT,
    INTEGRATORS,
    JACOBIANS,
    REFERENCE_PAIRS,
    REFERENCE_TOL,
    TREATMENTS,
    SolveCapped,
    _capped,
    _energy_drift,
    _model,
    _observe,
    max_abs_error,
    problem_of,
    reference_solution,
    solve_cell,
)

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

#: rtol = atol of the sweep (the command's default): seven decades.
DEFAULT_TOLERANCES = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
#: The default run's cheap sweep: six decades.
QUICK_TOLERANCES = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


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
        from eomcompare.formulations.cache import code_digest

        fields = dataclasses.asdict(self)
        fields.pop("tolerances")  # rows are per tolerance
        fields.pop("time_samples")
        fields.pop("time_budget")
        fields.pop("cache_dir")
        fields.pop("use_cache")
        fields["code"] = code_digest(
            tuple(
                f"eomcompare.{pkg}"
                for pkg in ("symbolic", "numeric", "systems", "formulations")
            )
        )
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
    from eomcompare.compare.timing import repeat_within
    from eomcompare.formulations.errors import UnsupportedSystemError
    from eomcompare.numeric.model import SingularConfigurationError

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
    if curve.treatment not in TREATMENTS:
        raise ValueError(
            f"unknown treatment {curve.treatment!r}; valid: {sorted(TREATMENTS)}"
        )
    if (curve.integrator == DAE_INTEGRATOR) != (curve.treatment == DAE_TREATMENT):
        return rows_with(
            "refused",
            f"{DAE_INTEGRATOR} integrates the multiplier form in its own "
            f"stabilised index-2 form (treatment {DAE_TREATMENT!r}), and only "
            f"{DAE_INTEGRATOR} takes that treatment",
            settings.tolerances,
        )
    if curve.integrator == DAE_INTEGRATOR:
        from eomcompare.numeric.dae import dae_available

        if not dae_available():
            return rows_with(
                "refused",
                "IDA needs scikit-sundae (pip install 'eomcompare[dae]')",
                settings.tolerances,
            )
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
    t0, q0, qd0 = ms.states.consistent_initial_state()
    grid = np.asarray(reference["t"], dtype=float)
    rows: list[dict] = []
    for i, tol in enumerate(settings.tolerances):

        def solve(capped=True):
            m = _capped(model, settings.solve_cap) if capped else model
            start = time.process_time()
            res = solve_cell(
                m,
                curve.integrator,
                curve.treatment,
                tol,
                t0 + t_final,
                grid,
                (t0, q0, qd0),
            )
            took = time.process_time() - start
            return res, took

        try:
            with np.errstate(all="ignore"):
                res, took = solve()
        except SingularConfigurationError as exc:
            rows += rows_with("singular", str(exc), [tol])
        except (NoMultiplierFormError, UnsupportedDriverError) as exc:
            # Not a failure of the solve: the formulation has no multiplier
            # form for the DAE integrator (kane, modified_lagrange, ...), or
            # a compiled driver cannot do what was asked.
            rows += rows_with("refused", str(exc), settings.tolerances[i:])
            break
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
    from eomcompare.formulations import formulation_names

    from .case_run import is_peer
    from .cases import expand_cases

    if not formulations:
        formulations = [
            f for f in formulation_names(default_only=True) if not is_peer(f)
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
    from .store import _atomic_write

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
    from .store import RunOutputError, append_whole

    data = "".join(json.dumps(r, default=_jsonable) + "\n" for r in rows).encode()
    try:
        append_whole(path, data)
    except OSError as exc:
        raise RunOutputError(
            exc.errno,
            f"cannot save precision rows in {path.parent}: {exc.strerror or exc}",
        ) from exc


def _write_csv(out: Path, rows: list[dict]) -> Path:
    from .store import _atomic_write

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
    compare.store.RunOutputError
        When ``out`` cannot be written during the sweep.
    """
    from .runner import RunInterrupted, _Signals
    from .store import check_output_dir

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
        from .runner import progress_bar

        bar = progress_bar(
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

    def tick(text):
        if bar is not None:
            bar.set_postfix_str(text, refresh=False)
            bar.update()

    def run_all(tasks, signals, on_done) -> set:
        """Run ``(fn, args, key)`` tasks, ``on_done(key, result)`` as each
        finishes (so it is saved at once); stop at a signal.  Returns the
        futures not finished (none when running here, one task at a time,
        the signal taking effect after the task running)."""
        if run_on is None:
            for fn, args, key in tasks:
                if signals.signum is not None:
                    break
                on_done(key, fn(*args))
            return set()
        # Each task's frames in a stack chunk of their own, wherever the
        # pool's process was forked (numeric.stack_room).
        futs = {
            run_on.submit(call_with_room, fn, *args): key for fn, args, key in tasks
        }
        remaining = set(futs)
        while remaining and signals.signum is None:
            finished, remaining = cf.wait(
                remaining, timeout=0.5, return_when=cf.FIRST_COMPLETED
            )
            for fut in finished:
                if not fut.cancelled():
                    on_done(futs[fut], fut.result())
        return remaining

    completed = False
    try:
        with _Signals() as signals:

            def got_reference(key, ref):
                _save_reference(_reference_path(out, *key, digest), ref)
                ref = _load_reference(_reference_path(out, *key, digest)) or ref
                refs[key] = ref
                tick(f"reference {key[0]}")

            tasks = [
                (reference_solution, (s, o, settings), (s, o))
                for s, o in variants_needed
                if (s, o) not in refs
            ]
            left = run_all(tasks, signals, got_reference)
            if signals.signum is None:

                def got_curve(curve, curve_rows):
                    for r in curve_rows:
                        r["curve"] = curve.id
                        r["settings_digest"] = digest
                    _append_rows(jsonl, curve_rows)
                    rows.extend(curve_rows)
                    _write_csv(out, rows)
                    tick(curve.id)

                tasks = [
                    (_run_curve_task, (c, settings, refs[(c.system, c.options)]), c)
                    for c in todo
                ]
                left = run_all(tasks, signals, got_curve)
            if signals.signum is not None:
                for fut in left:
                    fut.cancel()
                _write_csv(out, rows)
                raise RunInterrupted(signals.signum, len({r["curve"] for r in rows}))
        completed = True
    except RunInterrupted as exc:
        # A second signal stops the curve running here at once; the
        # finished curves are on disk all the same: count them.
        raise RunInterrupted(exc.signum, len({r["curve"] for r in rows})) from None
    finally:
        if bar is not None:
            bar.close()
        if pool is not None:
            _close_pool(pool, completed)
    _write_csv(out, rows)
    return read_precision(out / "precision.csv")


#: Seconds the sweep's idle workers are given to exit once its work is done.
POOL_EXIT_S = 30.0


def _close_pool(pool: cf.ProcessPoolExecutor, completed: bool) -> None:
    """Stop the sweep's process pool.  With every task done its idle
    workers exit (killed past :data:`POOL_EXIT_S`) and its thread ends
    with them, before the run forks anything else (the report's workers:
    a fork beside a thread that holds a lock leaves that lock held in the
    child); otherwise (an interrupt, an error) the workers are killed at
    once and nothing is waited for."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    thread = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    if completed:
        deadline = time.monotonic() + POOL_EXIT_S
        for proc in procs:
            proc.join(max(0.0, deadline - time.monotonic()))
    for proc in procs:
        if proc.is_alive():
            proc.kill()
    if completed and thread is not None:
        thread.join(POOL_EXIT_S)


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
    backend: str = "auto",
) -> pd.DataFrame:
    """The default run's cheap sweep, a few seconds: :data:`QUICK_SYSTEMS`
    with the project's own formulations, DOP853 with projection (its
    loop compiled, ``dop853``, like the cases' solves),
    :data:`QUICK_TOLERANCES` over the first 2 s with 100 output steps, so
    the main job's report shows work-precision diagrams.  The catalogue at
    large and the IFToMM problems over their own horizons are the
    ``precision`` command's job (minutes to hours).

    ``backend`` is the numeric backend of the solves; the main job passes
    its own (``--backend``, compiled by default), so that the sweep solves
    on the code its cases solved on and loads their libraries instead of
    compiling."""
    settings = PrecisionSettings(
        tolerances=QUICK_TOLERANCES,
        t_final=2.0,
        output_steps=100,
        backend=backend,
        time_samples=3,
        time_budget=0.05,
    )
    variants = {s: v for s, v in QUICK_VARIANTS.items() if s in systems}
    return sweep(
        list(systems),
        formulations,
        integrators=["dop853"],
        variants=variants or None,
        out=out,
        jobs=jobs,
        progress=progress,
        settings=settings,
    )
