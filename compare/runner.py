"""Run every (system, formulation) case and gather one row per case.

A case is derived (or read from the derivation cache), turned into numeric
code identically for every formulation, timed, integrated from the
system's consistent initial state, and sampled on a common time grid in all
coordinates and their rates.  Agreement with the reference formulation is
computed once every case has finished.  Finished cases are appended to
``rows.jsonl`` (and their trajectories saved) as they complete, so an
interrupted run loses nothing and a second run resumes.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import json
import math
import os
import platform
import signal
import threading
import time
import traceback
import warnings
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np

from eomcompare.formulations import (
    FORMULATIONS,
    SingularConfigurationError,
    UnsupportedSystemError,
    get_formulation,
    split_formulation_spec,
)
from eomcompare.numeric.child import Child, ChildDied, ChildTimeout, wait_any
from eomcompare.numeric.dae import (
    DAE_METHOD,
    DAE_TREATMENT,
    integrate_dae,
)
from eomcompare.numeric.integrate import integrate
from eomcompare.symbolic.text import display_name

from .assemble import _assemble, _max_rel_dev
from .cases import (
    COMPILE_FROM,
    SOLVERS,
    Case,
    RunOptions,
    _longest_first,
    declaration_key,
    expand_cases,
)
from .prepared import PREPARED, Prepared, declared_outside
from .store import (
    Arrays,
    ComparisonResult,
    Row,
    RunOutputError,
    _git_commit,
    _load_arrays,
    _load_done,
    _note,
    _read_rows,
    _save_case,
    _versions,
    check_output_dir,
    save,
)
from .timing import calibrate, calibrate_clocks, repeat_within, spread
from .user_systems import BuilderError, build_system, describe_builder

if TYPE_CHECKING:
    from eomcompare.numeric.model import NumericModel
    from eomcompare.symbolic.types import FloatArray

#: What a case yields: ``{"row": Row, "arrays": Arrays}``.
Outcome: TypeAlias = dict[str, Any]

__all__ = [
    "Case",
    "RunOptions",
    "ComparisonResult",
    "run",
    "expand_cases",
    "calibrate",
    "calibrate_clocks",
    "RunInterrupted",
    "RunOutputError",
    "ExecutorLost",
    "SOLVERS",
]

#: Repeats of the lambdify right-hand side's timing where the compiled one
#: is the time compared (``rhs_lambdify_us``, shown beside it).
LAMBDIFY_REPEATS = 5


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by SIGINT or SIGTERM; finished rows are saved."""

    def __init__(self, signum: int, saved: int):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum
        self.saved = saved


class ExecutorLost(RuntimeError):
    """The executor cancelled cases it was given (a dask client does when
    it loses its scheduler); every case finished is saved, ``not_run`` are
    the ids of those it did not run."""

    def __init__(self, not_run: list[str], saved: int):
        super().__init__(f"the executor did not run {len(not_run)} case(s)")
        self.not_run = not_run
        self.saved = saved


# ----------------------------------------------------------------------
# One case, in a worker
# ----------------------------------------------------------------------
def _time_rhs(
    model: NumericModel, t0: float, x: FloatArray, calls: int, repeats: int = 5
) -> list[float]:
    """Microseconds of processor time per rhs call, one value for each of
    ``repeats`` repeats of ``calls`` calls.

    Processor time of this thread, not wall time: a repeat lasts a few
    milliseconds, about a time slice of a machine shared with other jobs,
    so its wall time is the call's own or several times that depending on
    whether another process ran meanwhile."""
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        for _ in range(calls):
            model.rhs(t0, x)
        times.append((time.thread_time() - start) / calls * 1e6)
    return times


def _record_time(row: Row, column: str, samples: Sequence[float]) -> None:
    """``column`` (the fastest measurement: noise only ever adds time, and
    the regression gate judges it), ``column_median``, ``column_spread``
    (the interquartile range, empty below ``MIN_SAMPLES`` measurements)
    and ``column_k`` (how many were taken)."""
    s = spread(samples)
    finite = [x for x in samples if math.isfinite(x)]
    row[column] = float(min(finite)) if finite else float("nan")
    row[f"{column}_median"] = s.median
    row[f"{column}_spread"] = s.iqr
    row[f"{column}_k"] = s.k


def _is_peer(formulation: str) -> bool:
    cls = FORMULATIONS.get(split_formulation_spec(formulation)[0])
    return bool(getattr(cls, "is_peer", False))


def _base_row(case: Case, opts: RunOptions) -> Row:
    return {
        "case": case.id,
        "system": case.system,
        "variant": case.variant,
        "label": case.label,
        "formulation": case.formulation,
        "options_digest": opts.digest(),
        "status": "ok",
        "error": "",
        "peer_limitation": False,
    }


def run_case(case: Case, opts: RunOptions) -> Outcome:
    """Derive, time, integrate one case in this process, with no time limit;
    never raises (errors become rows).

    A peer (``is_peer``) that declines the system or whose equations are
    not finite is a limitation of the peer, marked ``peer_limitation``.
    """
    row = _base_row(case, opts)
    arrays: Arrays = {}
    try:
        # Non-finite values (a 0/0 at a singular configuration) are detected
        # and become the row's error; numpy's warnings would only repeat it.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            _run_case_body(case, opts, row, arrays)
    except UnsupportedSystemError as exc:
        row["status"] = "unsupported"
        row["error"] = str(exc)
        row["peer_limitation"] = _is_peer(case.formulation)
    except Exception as exc:  # recorded as a row; the run goes on
        row["status"] = "error"
        row["error"] = f"{type(exc).__name__}: {exc}"
        row["traceback"] = traceback.format_exc(limit=6)
        row["peer_limitation"] = isinstance(
            exc, SingularConfigurationError
        ) and _is_peer(case.formulation)
    return {"row": row, "arrays": arrays}


def _outcome(case: Case, opts: RunOptions, child: Child) -> Outcome:
    """The result of a finished :class:`~eomcompare.numeric.child.Child` as a case."""
    try:
        result: Outcome = child.result()
        return result
    except ChildTimeout as exc:
        status, error = "timeout", str(exc)
    except ChildDied as exc:
        status, error = "crashed", str(exc)
    except (Exception, SystemExit) as exc:  # run_case never raises; a
        # pickling failure may, and a case's sys.exit must not end the run.
        status, error = "error", f"{type(exc).__name__}: {exc}"
    row = _base_row(case, opts)
    row.update(
        status=status,
        error=error,
        timeout_s=opts.timeout,
        peer_limitation=status == "timeout" and _is_peer(case.formulation),
    )
    return {"row": row, "arrays": {}}


def run_case_isolated(case: Case, opts: RunOptions) -> Outcome:
    """:func:`run_case` in a child process killed after ``opts.timeout``
    seconds (what an executor's workers run)."""
    child = Child(run_case, case, opts, timeout=opts.timeout)
    try:
        while not child.poll():
            wait_any([child], timeout=1.0)
    finally:
        if not child.done:
            child.kill()
    return _outcome(case, opts, child)


def prepare_variant(case: Case, opts: RunOptions) -> Prepared:
    """The declaration of ``case``'s system variant, its random consistent
    states (seeds ``0 .. n_states - 1``), its consistent initial state and
    (when the run uses the derivation cache) its fingerprint, made once
    per process."""
    key = (case.system, case.options, opts.n_states, opts.use_cache)
    got = PREPARED.get(key)
    if got is None:
        ms = build_system(case.system, case.options)
        states = [ms.states.random_state(seed) for seed in range(opts.n_states)]
        fingerprint = ms.fingerprint() if opts.use_cache else None
        initial = ms.states.consistent_initial_state()
        if ms.energy_conserved:
            # Lambdifies the energy, which every case of the variant
            # evaluates along its trajectory.
            ms.states.energy(*initial)
        got = (ms, states, initial, fingerprint)
        PREPARED[key] = got
    return got


def _import_what_cases_use(opts: RunOptions) -> None:
    """Import in the run's process the modules every case imports on first
    use (the equations' printer, the derivation cache, the oracle, the
    compiled backend's C parser): forked cases inherit them instead of each
    importing them again, about 40 ms of CPU per case."""
    import sympy.printing.c
    import sympy.printing.mathml  # noqa: F401

    import eomcompare.references.robot_oracle  # noqa: F401
    from eomcompare.formulations import cache  # noqa: F401
    from eomcompare.numeric import backends  # noqa: F401

    from . import equations, findings  # noqa: F401

    if opts.backend != "lambdify":
        try:
            import cffi.cparser  # noqa: F401
        except ImportError:
            pass  # the backend reports it, case by case


def _prepare_quietly(case: Case, opts: RunOptions) -> None:
    """:func:`prepare_variant` in the run's process; a system that cannot
    be built or solved is left to its cases, which record the error.  A
    user's own builder runs only in its cases' child processes, under
    their time limit and the run's interrupts."""
    if declared_outside(case.system):
        return
    try:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            prepare_variant(case, opts)
    except Exception:
        pass


def _run_case_body(case: Case, opts: RunOptions, row: Row, arrays: Arrays) -> None:
    from eomcompare.formulations.cache import DerivationCache

    ms, states, initial, fingerprint = prepare_variant(case, opts)
    row["declaration"] = declaration_key(ms, fingerprint)
    form = get_formulation(case.formulation)
    if opts.method == DAE_METHOD and not form.uses_multipliers:
        raise UnsupportedSystemError(
            f"{case.formulation}: method {DAE_METHOD!r} integrates the "
            f"multiplier form ({DAE_TREATMENT}: the constraints among the "
            f"equations), and {case.formulation} eliminates the constraints "
            f"instead; formulations with multipliers: "
            f"{sorted(n for n, c in FORMULATIONS.items() if c.uses_multipliers)}"
        )
    derive_cpu = time.thread_time()
    if opts.use_cache:
        cache = DerivationCache(opts.cache_dir)
        eom, hit = cache.derive(ms, form, fingerprint)
        repairs = list(getattr(cache, "rebuilt", []) or [])
        if repairs:
            row["cache_repair"] = "; ".join(repairs)
    else:
        eom, hit = form.derive(ms), False
    derive_cpu = time.thread_time() - derive_cpu
    row["from_cache"] = hit
    # The report typesets the run's own equations, read back from here.
    from .equations import pack_equations
    from .findings import system_classes

    arrays["equations"] = pack_equations(eom)
    row["system_class"] = ",".join(system_classes(ms))

    # The derivation is repeated time_repeats times when derived here,
    # then (also when read from the cache, whose timing is its first
    # measurement and the estimate of its cost) as often as the case's
    # time budget allows.
    def derive_again() -> tuple[float, float]:
        start = time.thread_time()
        value = float(form.derive(ms).timings.get("total", float("nan")))
        return value, time.thread_time() - start

    first = float(eom.timings.get("total", float("nan")))
    derived = [(first, first if hit else derive_cpu)]
    while not hit and len(derived) < opts.time_repeats:
        derived.append(derive_again())
    derive_samples = repeat_within(
        derive_again, derived, opts.time_samples, opts.time_budget
    )
    _record_time(row, "derive_s", derive_samples)
    row["stage_s"] = json.dumps({k: round(v, 6) for k, v in eom.timings.items()})
    row["ops_raw"] = eom.op_counts.get("raw")
    row["ops_cse"] = eom.op_counts.get("cse")
    row["ops_by_kind"] = json.dumps(eom.op_counts.get("cse_by_kind", {}))
    # The same counts of the canonical form (symbolic.canonical), the same
    # pass for every formulation, and per evaluation with the solve.
    row["ops_canonical"] = eom.op_counts.get("canonical")
    per = eom.op_counts.get("per_evaluation") or {}
    row["ops_per_evaluation"] = per.get("total")
    row["ops_per_evaluation_detail"] = json.dumps(per) if per else None
    row["trigsimp"] = eom.op_counts.get("trigsimp")
    row["n_equations"] = eom.n_equations
    row["n_unknowns"] = eom.n_unknowns
    row["n_multipliers"] = eom.n_multipliers
    row["n_coordinates"] = len(ms.coordinates)
    # The report labels its figures with these, without building the system.
    row["coordinates"] = json.dumps([display_name(c) for c in ms.coordinates])
    row["dof"] = ms.degrees_of_freedom
    start = time.perf_counter()
    backend = opts.backend
    if backend == "sized":
        # Decided by the variant alone: every formulation gets the same.
        backend = "auto" if len(ms.coordinates) >= COMPILE_FROM else "lambdify"
    with warnings.catch_warnings():
        # Without a compiler "auto" is lambdify; the row's backend says so.
        warnings.simplefilter("ignore", RuntimeWarning)
        model = eom.numeric(backend=backend)  # generates the code
        row["backend"] = getattr(model, "backend", "lambdify")
        # The right-hand side is timed compiled and through lambdify on
        # every system: the models the case does not integrate with are
        # generated for the timing (their code generation counted too).
        compiled = model if row["backend"] == "c" else None
        if compiled is None and opts.backend in ("auto", "c"):
            other = eom.numeric(backend="auto")
            compiled = other if getattr(other, "backend", "") == "c" else None
        plain = model if row["backend"] != "c" else eom.numeric(backend="lambdify")
    row["codegen_s"] = time.perf_counter() - start
    # q'' at random consistent states, compared with the reference later.
    arrays["qdd"] = np.array([model.coordinate_accelerations(*s) for s in states])
    # Beside the reference, an independent library's q'' where there is one
    # (Pinocchio for robots read from URDF).  Beyond ORACLE_TOLERANCE the
    # case fails: formulations that agree with each other and not with the
    # oracle were given another robot than the file describes.
    from eomcompare.references.robot_oracle import (
        ORACLE_TOLERANCE,
        OracleUnavailable,
        oracle_accelerations,
    )

    try:
        oracle = oracle_accelerations(ms, states)
    except OracleUnavailable as exc:
        oracle = None
        row["oracle_unavailable"] = str(exc)
    if oracle is not None:
        name, oracle_qdd = oracle
        dev = _max_rel_dev(arrays["qdd"], oracle_qdd)
        row["oracle"] = name
        row["oracle_qdd_max_rel_dev"] = dev
        if not dev <= ORACLE_TOLERANCE:
            row["status"] = "oracle_disagrees"
            row["error"] = (
                f"q'' deviates from {name}'s by {dev:.3g} "
                f"(tolerance {ORACLE_TOLERANCE:g})"
            )
    t0, q0, qd0 = initial
    x0 = model.state_from(q0, qd0, t0)
    timed = compiled if compiled is not None else plain
    row["rhs_backend"] = getattr(timed, "backend", "lambdify")
    rhs = _time_rhs(timed, t0, x0, opts.rhs_calls, opts.rhs_repeats)
    _record_time(row, "rhs_us", rhs)
    if timed is plain:
        lambdified = rhs
    else:
        # Shown beside the compiled time, never ranked: the fewest repeats
        # that give a spread (tens of microseconds a call, where the
        # compiled call takes well under one).
        lambdified = _time_rhs(
            plain, t0, x0, opts.rhs_calls, min(opts.rhs_repeats, LAMBDIFY_REPEATS)
        )
    _record_time(row, "rhs_lambdify_us", lambdified)
    # The calibration workload, measured in the same process right after
    # the derivation and the right-hand side, on the wall clock (the
    # derivation's) and the thread's processor time (the right-hand side's)
    # around the same runs; as many times as derivations are repeated (the
    # default run: once, about 0.1 s of a case's CPU; the run measures it
    # again at its start and end).
    wall, cpu = calibrate_clocks(
        opts.time_repeats, (time.perf_counter, time.thread_time)
    )
    row["calibration_cpu_s"] = cpu
    row["calibration_s"] = wall
    grid = np.linspace(t0, t0 + opts.t_final, opts.n_samples)

    def solve() -> tuple[Any, float, float]:
        start, cpu = time.perf_counter(), time.thread_time()
        if opts.method == DAE_METHOD:
            dae = integrate_dae(
                model,
                t0 + opts.t_final,
                rtol=opts.rtol,
                atol=opts.atol,
                t_eval=grid,
                initial_state=initial,
            )
            return dae, time.perf_counter() - start, time.thread_time() - cpu
        res = integrate(
            model,
            t0 + opts.t_final,
            method=opts.method,
            rtol=opts.rtol,
            atol=opts.atol,
            t_eval=grid,
            initial_state=initial,
            stabilization=opts.stabilization,
        )
        return res, time.perf_counter() - start, time.thread_time() - cpu

    res, took, cost = solve()
    # Repeated for its time alone: the solve is deterministic.
    solve_samples = (
        repeat_within(
            lambda: solve()[1:], [(took, cost)], opts.time_samples, opts.time_budget
        )
        if res.success
        else [took]
    )
    _record_time(row, "integrate_s", solve_samples)
    row["nfev"] = res.nfev
    row["success"] = bool(res.success)
    row["message"] = res.message
    row["max_position_residual"] = res.max_holonomic_residual
    row["max_velocity_residual"] = res.max_velocity_residual
    arrays["t"], arrays["q"], arrays["qd"] = res.t, res.q, res.qd
    if ms.energy_conserved and len(res.t):
        E = np.array(
            [
                sum(ms.states.energy(ti, qi, qdi))
                for ti, qi, qdi in zip(res.t, res.q, res.qd)
            ]
        )
        scale = max(np.max(np.abs(E)), 1e-12)
        row["energy_drift"] = float(np.max(np.abs(E - E[0])) / scale)
        arrays["energy"] = E
    if not res.success:
        row["status"] = "integration_failed"
        row["error"] = res.message


# ----------------------------------------------------------------------
# Agreement with the reference
# ----------------------------------------------------------------------


# ----------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------


class _Signals:
    """SIGINT and SIGTERM set a flag the run polls (main thread only)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:  # a second signal: stop at once
            raise RunInterrupted(signum, 0)
        self.signum = signum

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False


def run(
    systems: Sequence[str] | None = None,
    formulations: Sequence[str] | None = None,
    *,
    n: Sequence[int] | None = None,
    variants: Mapping[str, list[dict[str, Any]]] | None = None,
    executor: cf.Executor | None = None,
    jobs: int | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool = True,
    resume: bool = True,
    **options: Any,
) -> ComparisonResult:
    """Compare formulations on systems.

    Every case runs in a child process of its own, killed when it takes
    longer than ``timeout`` seconds (a time-out row).

    Parameters
    ----------
    systems, formulations : sequence of str, optional
        Default: the catalogue less its heavy systems (``system_facts``)
        (``"all"`` for every system), and every registered formulation.
    n : sequence of int, optional
        Sizes of the scalable systems (default ``[3]``).
    variants : mapping, optional
        Builder options per system (default: the catalogue's ``variants``).
    executor : concurrent.futures.Executor, optional
        Where cases run: any executor (a dask ``Client.get_executor()`` for
        clusters), each case in a child process of the executor's worker.
        Default: ``jobs`` child processes of this one.
    jobs : int, optional
        Cases at once (default: the number of CPUs).
    out : path, optional
        Directory for rows.jsonl, trajectories, results.csv and
        metadata.json; a run into a directory holding finished cases of the
        same options and code resumes them (time-outs only under the same
        or a shorter time limit; cases whose worker died run again; a
        user's own system only for the same declaration,
        :func:`user_declarations`).
    resume : bool
        False starts over (drops rows.jsonl and the trajectories of the
        run's cases).
    **options
        :class:`RunOptions` fields (t_final, method, rtol, atol, ...).

    Returns
    -------
    ComparisonResult

    Raises
    ------
    ValueError
        For bad options or names, and a user's own system that cannot be
        built (:func:`user_declarations`), before any case runs.
    RunInterrupted
        On SIGINT or SIGTERM (a ``KeyboardInterrupt``): running cases are
        stopped, every case finished by then is saved first.
    RunOutputError
        When ``out`` cannot be written during the run (the run stops; the
        rows saved until then are kept).
    ExecutorLost
        When ``executor`` cancels cases instead of running them (a dask
        client that lost its scheduler); the rows saved are kept.

    Examples
    --------
    >>> from eomcompare.compare import run
    >>> res = run(["double_pendulum"], ["kane", "sympy_kane"], t_final=0.5,
    ...           jobs=1, progress=False, use_cache=False)
    >>> sorted(res.frame["formulation"])
    ['kane', 'sympy_kane']
    """
    opts = RunOptions(**options)
    cases = expand_cases(systems, formulations, n, variants)
    if jobs is not None and (
        isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1
    ):
        raise ValueError(f"jobs must be a positive integer, not {jobs!r}")
    if opts.reference not in {c.formulation for c in cases}:
        cases = cases + [
            Case(c.system, c.options, opts.reference)
            for c in {(c.system, c.options): c for c in cases}.values()
        ]
    out_dir = check_output_dir(out) if out else None
    try:
        declarations = user_declarations(cases, opts)
    except RunInterrupted as exc:
        # Before any case ran: what is kept is what earlier runs saved.
        kept = {r["case"] for r in _read_rows(out_dir, repair=False)} if out_dir else ()
        raise RunInterrupted(exc.signum, len(kept)) from None
    done: dict[str, Row] = {}
    if out_dir is not None:
        if resume:
            done = _load_done(out_dir, opts, declarations)
            resumed = sum(c.id in done for c in cases)
            if resumed:
                _note(
                    f"resumed {resumed} of {len(cases)} cases from the earlier "
                    f"run in {out_dir} (--fresh runs them again)"
                )
        else:
            (out_dir / "rows.jsonl").unlink(missing_ok=True)
            # The trajectories of this run's own cases (any options), named
            # as _save_case names them; other files there are not the run's.
            for c in cases:
                for f in (out_dir / "trajectories").glob(f"{c.slug}.*.npz"):
                    f.unlink()
    todo = _longest_first([c for c in cases if c.id not in done], out_dir)
    rows = {cid: row for cid, row in done.items()}
    arrays = {cid: _load_arrays(out_dir, row) for cid, row in done.items()}
    # The calibration is measured at both ends of the run: a load that
    # comes and goes during a run would otherwise be charged to, or hidden
    # from, every case through one short measurement.
    calibration_start = calibrate()
    if todo:
        _import_what_cases_use(opts)
    started = time.time()
    repairs: list[str] = []
    bar: Any = None

    def collect(result: Outcome) -> None:
        row, arr = result["row"], result["arrays"]
        if out_dir is not None:
            _save_case(out_dir, row, arr)
        rows[row["case"]] = row
        arrays[row["case"]] = arr
        if row.get("cache_repair"):
            repairs.append(row["cache_repair"])
            _note(f"cache: rebuilt {row['case']}: {row['cache_repair']}", bar)

    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="cases", unit="case")

    def remain(done: int) -> str:
        left = bar.total - bar.n - done
        return f"{left} remain{'s' if left == 1 else ''}"

    def show() -> None:
        """The bar names the cases running and how many remain."""
        if bar:
            running = [c.id for c in children]
            bar.set_postfix_str(
                (f"running {', '.join(running)}; " if running else "") + remain(0),
                refresh=True,
            )

    def advance(case: Case) -> None:
        if bar:
            # The text first, so the bar never shows a finished case running.
            running = [c.id for c in children]
            text = (
                f"running {', '.join(running)}; "
                if running
                else ""
                if executor is None
                else f"finished {case.id}; "
            )
            bar.set_postfix_str(text + remain(1), refresh=False)
            bar.update()

    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    children: dict[Case, Child] = {}
    futures: dict[cf.Future[Outcome], Case] = {}
    not_run: list[str] = []
    with _Signals() as signals:
        try:
            if executor is None:
                pending = list(todo)
                while (pending or children) and signals.signum is None:
                    while pending and len(children) < jobs:
                        case = pending.pop(0)
                        _prepare_quietly(case, opts)
                        children[case] = Child(
                            run_case, case, opts, timeout=opts.timeout
                        )
                        show()
                    if pending and len(children) == jobs:
                        # While every worker is busy, the next case's
                        # variant is prepared here, so that it starts as
                        # soon as a worker frees instead of leaving it idle.
                        _prepare_quietly(pending[0], opts)
                    wait_any(children.values(), timeout=0.5)
                    for case, child in list(children.items()):
                        if child.poll():
                            del children[case]
                            if (
                                signals.signum is not None
                                and not child.finished_normally
                            ):
                                continue  # killed with us (a terminal's ^C)
                            collect(_outcome(case, opts, child))
                            advance(case)
            else:
                futures = {executor.submit(run_case_isolated, c, opts): c for c in todo}
                remaining = set(futures)
                while remaining and signals.signum is None:
                    finished, remaining = cf.wait(
                        remaining, timeout=0.5, return_when=cf.FIRST_COMPLETED
                    )
                    for fut in finished:
                        if fut.cancelled():  # not run: no row, resumed later
                            not_run.append(futures[fut].id)
                            continue
                        collect(_future_result(futures[fut], opts, fut))
                        advance(futures[fut])
                futures = {f: c for f, c in futures.items() if f in remaining}
            if signals.signum is not None:
                # Cases whose results are complete are kept, even those
                # that finished after the signal; the rest are stopped.
                grace = time.monotonic() + 1.0
                while children and time.monotonic() < grace:
                    for case, child in list(children.items()):
                        if child.poll():
                            del children[case]
                            if child.finished_normally:
                                collect(_outcome(case, opts, child))
                    if children:
                        wait_any(children.values(), timeout=0.1)
                for fut, case in futures.items():
                    if fut.done() and not fut.cancelled():
                        collect(_future_result(case, opts, fut))
                raise RunInterrupted(signals.signum, len(rows))
            if not_run:
                raise ExecutorLost(sorted(not_run), len(rows))
        finally:
            for child in children.values():
                child.kill()
            for fut in futures:
                fut.cancel()
            if bar:
                bar.close()
    frame = _assemble(cases, rows, arrays, opts)
    calibration_end = calibrate()
    calibration = float(np.sqrt(calibration_start * calibration_end))
    metadata = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": _git_commit(),
        "versions": _versions(),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.machine(),
            "cpus": os.cpu_count(),
        },
        "options": dataclasses.asdict(opts),
        "options_digest": opts.digest(),
        "systems": sorted({c.system for c in cases}),
        "formulations": sorted({c.formulation for c in cases}),
        "n": list(n) if n else [3],
        "calibration_s": calibration,
        "calibration_ends_s": [calibration_start, calibration_end],
        "wall_s": time.time() - started,
        "resumed_cases": len(done),
        "cache_repairs": len(repairs),
    }
    result = ComparisonResult(frame, arrays, metadata, out_dir)
    if out_dir is not None:
        try:
            save(result, out_dir)
        except OSError as exc:
            raise RunOutputError(
                exc.errno,
                f"cannot save the results in {out_dir}: {exc.strerror or exc}",
            ) from exc
    return result


def _future_result(case: Case, opts: RunOptions, fut: cf.Future[Outcome]) -> Outcome:
    try:
        return fut.result()
    except Exception as exc:  # the executor's worker died
        row = _base_row(case, opts)
        row.update(
            status="crashed", error=f"worker failed: {type(exc).__name__}: {exc}"
        )
        return {"row": row, "arrays": {}}


def _declare(system: str, options: tuple[tuple[str, Any], ...]) -> str:
    return declaration_key(build_system(system, options))


def user_declarations(cases: Sequence[Case], opts: RunOptions) -> dict[str, str]:
    """Case id -> :func:`declaration_key` of the cases of users' own systems
    (:func:`declared_outside`), each variant built once in a child process
    under the run's time limit: a builder that hangs, exits or returns no
    declaration stops nothing but itself, and SIGINT or SIGTERM stop it
    as they stop cases.

    Raises
    ------
    ValueError
        Naming the builder that raised, timed out, exited or returned no
        :class:`~eomcompare.systems.MechanicalSystem` (nothing is computed then).
    RunInterrupted
        On SIGINT or SIGTERM.
    """
    keys: dict[tuple[str, tuple[tuple[str, Any], ...]], str] = {}
    variants = dict.fromkeys(
        (c.system, c.options) for c in cases if declared_outside(c.system)
    )
    with _Signals() as signals:
        for system, options in variants:
            child = Child(_declare, system, options, timeout=opts.timeout)
            try:
                while not child.poll() and signals.signum is None:
                    wait_any([child], timeout=0.5)
            finally:
                if not child.done:
                    child.kill()
            if signals.signum is not None:
                raise RunInterrupted(signals.signum, 0)
            label = Case(system, options, "").label
            try:
                keys[(system, options)] = child.result()
            except BuilderError as exc:
                raise ValueError(str(exc)) from None
            except ChildTimeout:
                raise ValueError(
                    f"{describe_builder(system)} did not build {label} within "
                    f"the time limit of {opts.timeout:g} s (--timeout)"
                ) from None
            except ChildDied as exc:
                raise ValueError(
                    f"{describe_builder(system)} did not build {label}: {exc}"
                ) from None
            except Exception as exc:
                raise ValueError(
                    f"{describe_builder(system)} cannot build {label}: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
    return {
        c.id: keys[(c.system, c.options)]
        for c in cases
        if (c.system, c.options) in keys
    }
