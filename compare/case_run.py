"""One case, in a worker: derive, count, generate the numeric model, time
its right-hand side, integrate, and record it all in a
:class:`~eomcompare.compare.record.CaseRecord`.

:func:`run_case` never raises: an error becomes the record's status and
message.  :func:`run_case_isolated` runs it in a child process under the
run's time limit (what an executor's workers run); :func:`prepare_variant`
builds and validates a system variant once per process, before the cases
are forked.
"""

from __future__ import annotations

import dataclasses
import json
import time
import traceback
import warnings
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from eomcompare.formulations import (
    FORMULATIONS,
    SingularConfigurationError,
    UnsupportedSystemError,
    get_formulation,
    split_formulation_spec,
)
from eomcompare.formulations.base import counted_in
from eomcompare.numeric.child import (
    Child,
    ChildDied,
    ChildTimeout,
    frozen_heap,
    wait_any,
)
from eomcompare.numeric.dae import (
    DAE_METHOD,
    DAE_TREATMENT,
    integrate_dae,
)
from eomcompare.numeric.integrate import integrate, prepare_projection
from eomcompare.symbolic.text import display_name

from .assemble import _max_rel_dev
from .cases import (
    COMPILE_FROM,
    Case,
    RunOptions,
    declaration_key,
)
from .prepared import PREPARED, Prepared, declared_outside
from .record import CaseRecord
from .store import (
    Arrays,
)
from .timing import SETTLED_SPREAD, calibrate_clocks, repeat_within
from .user_systems import build_system

if TYPE_CHECKING:
    from eomcompare.formulations import EquationsOfMotion
    from eomcompare.numeric.model import NumericModel
    from eomcompare.symbolic.types import FloatArray, State
    from eomcompare.systems import MechanicalSystem

#: What a case yields: ``{"row": Row, "arrays": Arrays}``, and
#: ``"calibration"`` when the case measured one (:func:`_calibration`).
Outcome: TypeAlias = dict[str, Any]


__all__ = [
    "CALIBRATION_MAX_AGE",
    "LAMBDIFY_REPEATS",
    "note_calibration",
    "is_peer",
    "prepare_variant",
    "run_case",
    "run_case_isolated",
]


#: Repeats of the lambdify right-hand side's timing where the compiled one
#: is the time compared (``rhs_lambdify_us``, shown beside it).
LAMBDIFY_REPEATS = 3


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


#: Seconds for which a calibration measured in the run stands for the
#: cases that start after it (:func:`_calibration`).  Measured for every
#: case, it was about 0.12 s of processor time a case, 13 s of the main
#: job's; a load that changes more slowly than this is still followed.
CALIBRATION_MAX_AGE = 10.0

#: The run's latest calibration, ``(wall s, processor s, time.monotonic()
#: when measured)``, set by the run's process before it forks a case
#: (:func:`note_calibration`); None in a process that has none.
LATEST_CALIBRATION: tuple[float, float, float] | None = None


#: The calibration this process measured last, as
#: :data:`LATEST_CALIBRATION`; a case returns it with its row
#: (``"calibration"``) for the run to pass on.
MEASURED_CALIBRATION: tuple[float, float, float] | None = None


def note_calibration(wall: float, cpu: float, when: float) -> None:
    """Record a calibration measured at ``when`` (``time.monotonic()``) for
    the cases started from now on, unless a later one is recorded."""
    global LATEST_CALIBRATION
    if LATEST_CALIBRATION is None or when >= LATEST_CALIBRATION[2]:
        LATEST_CALIBRATION = (wall, cpu, when)


def _calibration(opts: RunOptions) -> tuple[float, float, float]:
    """The case's calibration: ``(wall s, processor s, age s)``.

    The rule: a case measures the workload (:func:`calibrate_clocks`, on
    the wall clock and the thread's processor time around the same runs)
    when the run holds no calibration measured within the last
    :data:`CALIBRATION_MAX_AGE` seconds, and otherwise records that one
    with its age; a case measures its own when derivations are repeated
    (``time_repeats`` above 1, the baseline's runs), and so does every
    case run by an executor (whose workers hold no calibration)."""
    latest = LATEST_CALIBRATION
    if opts.time_repeats <= 1 and latest is not None:
        age = time.monotonic() - latest[2]
        if 0 <= age <= CALIBRATION_MAX_AGE:
            return latest[0], latest[1], age
    wall, cpu = calibrate_clocks(
        opts.time_repeats, (time.perf_counter, time.thread_time)
    )
    global MEASURED_CALIBRATION
    MEASURED_CALIBRATION = (wall, cpu, time.monotonic())
    return wall, cpu, 0.0


def is_peer(formulation: str) -> bool:
    cls = FORMULATIONS.get(split_formulation_spec(formulation)[0])
    return bool(getattr(cls, "is_peer", False))


def _base_record(case: Case, opts: RunOptions) -> CaseRecord:
    return CaseRecord(
        case=case.id,
        system=case.system,
        variant=case.variant,
        label=case.label,
        formulation=case.formulation,
        options_digest=opts.digest(),
    )


def run_case(case: Case, opts: RunOptions) -> Outcome:
    """Derive, time, integrate one case in this process, with no time limit;
    never raises (errors become rows).

    A peer (``is_peer``) that declines the system or whose equations are
    not finite is a limitation of the peer, marked ``peer_limitation``.
    """
    row = _base_record(case, opts)
    arrays: Arrays = {}
    try:
        # Non-finite values (a 0/0 at a singular configuration) are detected
        # and become the row's error; numpy's warnings would only repeat it.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            derived = _derive_case(case, opts, row, arrays)
            # Every derivation of the case is timed by now (with the heap
            # as it is): the collections of the rest leave alone what the
            # case's process holds to its end, inherited and derived.
            with frozen_heap():
                _evaluate_case(opts, row, arrays, *derived)
    except UnsupportedSystemError as exc:
        row.status = "unsupported"
        row.error = str(exc)
        row.peer_limitation = is_peer(case.formulation)
    except Exception as exc:  # recorded as a row; the run goes on
        row.status = "error"
        row.error = f"{type(exc).__name__}: {exc}"
        row.traceback = traceback.format_exc(limit=6)
        row.peer_limitation = isinstance(exc, SingularConfigurationError) and is_peer(
            case.formulation
        )
    outcome: Outcome = {"row": row.to_row(), "arrays": arrays}
    if MEASURED_CALIBRATION is not None:
        outcome["calibration"] = MEASURED_CALIBRATION
    return outcome


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
    row = _base_record(case, opts)
    row.status, row.error, row.timeout_s = status, error, opts.timeout
    row.peer_limitation = status == "timeout" and is_peer(case.formulation)
    return {"row": row.to_row(), "arrays": {}}


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
        if opts.stabilization == "projection" or opts.method == DAE_METHOD:
            # The constraint functions every case of the variant projects
            # its states with (the DAE integrator reads them too); where
            # they cannot be built, each case's solve reports why.
            try:
                prepare_projection(ms)
            except Exception:
                pass
        got = (ms, states, initial, fingerprint)
        PREPARED[key] = got
    return got


def _import_what_cases_use(opts: RunOptions) -> None:
    """Import in the run's process the modules every case imports on first
    use (the equations' printer, the derivation cache, the oracle, the
    literature's counts, the C printer's constants, the compiled
    backend's C parser, the package metadata the cache keys read):
    forked cases inherit them instead of each importing them again."""
    import sympy.codegen.cfunctions
    import sympy.printing.c
    import sympy.printing.mathml  # noqa: F401

    import eomcompare.references.robot_oracle
    import eomcompare.symbolic.literature_counts  # noqa: F401
    from eomcompare.formulations import cache
    from eomcompare.numeric import backends  # noqa: F401

    cache._package_version()  # imports importlib.metadata's parsers

    from . import equations, findings  # noqa: F401

    if opts.backend != "lambdify":
        try:
            import cffi.cparser  # noqa: F401
        except ImportError:
            pass  # the backend reports it, case by case
        # The compiler found, its -march=native probe run and the call
        # extension loaded once here rather than in every case (a compiler
        # run of about 30 ms each).
        from eomcompare.numeric.backends import prepare_compiler

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                prepare_compiler()
        except Exception:
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


def _derive_case(
    case: Case, opts: RunOptions, row: CaseRecord, arrays: Arrays
) -> tuple[MechanicalSystem, list[State], State, EquationsOfMotion]:
    """A case's derivation (from the cache or timed here), its repeats and
    its counts, in ``row``; the variant's declaration, states and initial
    state, and the equations."""
    from eomcompare.formulations.cache import CanonicalEntries, DerivationCache
    from eomcompare.symbolic.canonical import shared_entries

    ms, states, initial, fingerprint = prepare_variant(case, opts)
    row.declaration = declaration_key(ms, fingerprint)
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
    # The counts are taken after the timed derivation, with the heap frozen
    # (their collections leave alone what the case holds).
    with counted_in(frozen_heap):
        if opts.use_cache:
            cache = DerivationCache(opts.cache_dir)
            # The canonical pass reads the entries other cases of the run
            # (the other formulations of the system) rewrote already.
            with shared_entries(CanonicalEntries(cache.directory / "canonical")):
                eom, hit = cache.derive(ms, form, fingerprint)
            repairs = list(getattr(cache, "rebuilt", []) or [])
            if repairs:
                row.cache_repair = "; ".join(repairs)
        else:
            eom, hit = form.derive(ms), False
    derive_cpu = time.thread_time() - derive_cpu
    row.from_cache = hit
    # The report typesets the run's own equations, read back from here.
    from .equations import pack_equations
    from .findings import system_classes

    arrays["equations"] = pack_equations(eom)
    row.system_class = ",".join(system_classes(ms))

    # The derivation is repeated time_repeats times when derived here,
    # then (also when read from the cache, whose timing is its first
    # measurement and the estimate of its cost) as often as the case's
    # time budget allows.
    # The repeats are timed for ``total``, which leaves out the counts:
    # they derive without counting (the counts of the first derivation
    # are the row's), so that a repeat costs the derivation alone.
    form.count_ops = False

    def derive_again() -> tuple[float, float]:
        start = time.thread_time()
        value = float(form.derive(ms).timings.get("total", float("nan")))
        return value, time.thread_time() - start

    first = float(eom.timings.get("total", float("nan")))
    # The first derivation's cost is that of the derivation alone (its
    # wall time, when it is below the processor time the counts were
    # taken in too), the cost of a repeat.
    derived = [(first, first if hit else min(first, derive_cpu))]
    while not hit and len(derived) < opts.time_repeats:
        derived.append(derive_again())
    derive_samples = repeat_within(
        derive_again, derived, opts.time_samples, opts.time_budget, SETTLED_SPREAD
    )
    row.record_time("derive_s", derive_samples)
    row.stage_s = json.dumps({k: round(v, 6) for k, v in eom.timings.items()})
    row.ops_raw = eom.op_counts.get("raw")
    row.ops_cse = eom.op_counts.get("cse")
    row.ops_by_kind = json.dumps(eom.op_counts.get("cse_by_kind", {}))
    # The same counts of the canonical form (symbolic.canonical), the same
    # pass for every formulation, and per evaluation with the solve.
    row.ops_canonical = eom.op_counts.get("canonical")
    per = eom.op_counts.get("per_evaluation") or {}
    row.ops_per_evaluation = per.get("total")
    row.ops_per_evaluation_detail = json.dumps(per) if per else None
    row.trigsimp = eom.op_counts.get("trigsimp")
    row.n_equations = eom.n_equations
    row.n_unknowns = eom.n_unknowns
    row.n_multipliers = eom.n_multipliers
    row.n_coordinates = len(ms.coordinates)
    # The report labels its figures with these, without building the system.
    row.coordinates = json.dumps([display_name(c) for c in ms.coordinates])
    row.dof = ms.degrees_of_freedom
    return ms, states, initial, eom


def _with_residuals(ms, model, res):
    """``res`` with the constraint residuals at its output times."""
    hol, vel = ms.states.residuals(
        res.t, res.q, res.qd, dict(zip(ms.parameters, model.p))
    )
    return dataclasses.replace(res, holonomic_residual=hol, velocity_residual=vel)


def _evaluate_case(
    opts: RunOptions,
    row: CaseRecord,
    arrays: Arrays,
    ms: MechanicalSystem,
    states: list[State],
    initial: State,
    eom: EquationsOfMotion,
) -> None:
    """The rest of a case once its derivations are timed: its numeric
    models, q'' at the run's states, the right-hand side's times, the
    solve and its times."""
    start = time.perf_counter()
    backend = opts.backend
    if backend == "sized":
        # Decided by the variant alone: every formulation gets the same.
        backend = "auto" if len(ms.coordinates) >= COMPILE_FROM else "lambdify"
    with warnings.catch_warnings():
        # Without a compiler "auto" is lambdify; the row's backend says so.
        warnings.simplefilter("ignore", RuntimeWarning)
        model = eom.numeric(backend=backend)  # generates the code
        model.prepare()  # all of it: the solve is timed
        row.backend = getattr(model, "backend", "lambdify")
        # The right-hand side is timed compiled and through lambdify on
        # every system: the models the case does not integrate with are
        # generated for the timing (their code generation counted too;
        # a lambdify model timed for its right-hand side alone generates
        # no more than that).
        compiled = model if row.backend == "c" else None
        if compiled is None and opts.backend in ("auto", "c"):
            other = eom.numeric(backend="auto")
            compiled = other if getattr(other, "backend", "") == "c" else None
        plain = model if row.backend != "c" else eom.numeric(backend="lambdify")
    row.codegen_s = time.perf_counter() - start
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
        row.oracle_unavailable = str(exc)
    if oracle is not None:
        name, oracle_qdd = oracle
        dev = _max_rel_dev(arrays["qdd"], oracle_qdd)
        row.oracle = name
        row.oracle_qdd_max_rel_dev = dev
        if not dev <= ORACLE_TOLERANCE:
            row.status = "oracle_disagrees"
            row.error = (
                f"q'' deviates from {name}'s by {dev:.3g} "
                f"(tolerance {ORACLE_TOLERANCE:g})"
            )
    t0, q0, qd0 = initial
    x0 = model.state_from(q0, qd0, t0)
    timed = compiled if compiled is not None else plain
    row.rhs_backend = getattr(timed, "backend", "lambdify")
    rhs = _time_rhs(timed, t0, x0, opts.rhs_calls, opts.rhs_repeats)
    row.record_time("rhs_us", rhs)
    if timed is plain:
        lambdified = rhs
    else:
        # Shown beside the compiled time, never ranked: the fewest repeats
        # that give a spread (tens of microseconds a call, where the
        # compiled call takes well under one).
        lambdified = _time_rhs(
            plain, t0, x0, opts.rhs_calls, min(opts.rhs_repeats, LAMBDIFY_REPEATS)
        )
    row.record_time("rhs_lambdify_us", lambdified)
    # The calibration workload, on the wall clock (the derivation's) and
    # the thread's processor time (the right-hand side's) around the same
    # runs, as many times as derivations are repeated: measured here,
    # right after the derivation and the right-hand side, unless the run
    # measured it within CALIBRATION_MAX_AGE seconds (_calibration).
    wall, cpu, age = _calibration(opts)
    row.calibration_cpu_s = cpu
    row.calibration_s = wall
    row.calibration_age_s = age
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
            # The constraint residuals along the trajectory are evaluated
            # once, after the timed solves: the solve's time is the
            # integration's alone.
            residuals=False,
        )
        return res, time.perf_counter() - start, time.thread_time() - cpu

    res, took, cost = solve()
    if opts.method != DAE_METHOD:
        res = _with_residuals(ms, model, res)
    # Repeated for its time alone: the solve is deterministic.
    solve_samples = (
        repeat_within(
            lambda: solve()[1:],
            [(took, cost)],
            opts.solve_samples,
            opts.time_budget,
            SETTLED_SPREAD,
        )
        if res.success
        else [took]
    )
    row.record_time("integrate_s", solve_samples)
    row.nfev = res.nfev
    row.success = bool(res.success)
    row.message = res.message
    row.max_position_residual = res.max_holonomic_residual
    row.max_velocity_residual = res.max_velocity_residual
    arrays["t"], arrays["q"], arrays["qd"] = res.t, res.q, res.qd
    if ms.energy_conserved and len(res.t):
        E = np.array(
            [
                sum(ms.states.energy(ti, qi, qdi))
                for ti, qi, qdi in zip(res.t, res.q, res.qd)
            ]
        )
        scale = max(np.max(np.abs(E)), 1e-12)
        row.energy_drift = float(np.max(np.abs(E - E[0])) / scale)
        arrays["energy"] = E
    if not res.success:
        row.status = "integration_failed"
        row.error = res.message
