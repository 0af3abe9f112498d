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
import os
import platform
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from eomcompare.numeric.child import Child, ChildDied, ChildTimeout, wait_any

from .assemble import _assemble
from .case_run import (
    Outcome,
    _base_record,
    _import_what_cases_use,
    _outcome,
    _prepare_quietly,
    note_calibration,
    run_case,
    run_case_isolated,
)
from .cases import (
    SOLVERS,
    Case,
    RunOptions,
    _longest_first,
    declaration_key,
    expand_cases,
)
from .prepared import declared_outside
from .store import (
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
from .timing import calibrate, calibrate_clocks
from .user_systems import BuilderError, build_system, describe_builder

if TYPE_CHECKING:
    pass


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


def progress_bar(**kwargs: Any) -> Any:
    """A tqdm progress bar (``tqdm.auto``) without tqdm's monitor thread.

    The monitor wakes every ten seconds and takes tqdm's lock; the run
    forks its case, sweep and report workers while bars are shown, and a
    fork beside a thread that holds a lock leaves that lock held in the
    child.  Without the monitor a bar whose updates stop for long is
    redrawn at its next update, which these bars get after every task.
    """
    from tqdm.auto import tqdm

    tqdm.monitor_interval = 0
    return tqdm(**kwargs)


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
    # The compiler prepared ahead (python -m eomcompare) has finished: the
    # calibration is measured alone.
    from eomcompare.numeric import ahead

    ahead.wait()
    calibration_start = calibrate()
    if todo:
        _import_what_cases_use(opts)
        # The first calibration the cases record (case_run._calibration:
        # a case measures its own when the run's latest is older than
        # CALIBRATION_MAX_AGE), measured as a case measures it.
        wall, cpu = calibrate_clocks(
            opts.time_repeats, (time.perf_counter, time.thread_time)
        )
        note_calibration(wall, cpu, time.monotonic())
    started = time.time()
    repairs: list[str] = []
    bar: Any = None

    def collect(result: Outcome) -> None:
        row, arr = result["row"], result["arrays"]
        if result.get("calibration") and executor is None:
            note_calibration(*result["calibration"])
        if out_dir is not None:
            _save_case(out_dir, row, arr)
        rows[row["case"]] = row
        arrays[row["case"]] = arr
        if row.get("cache_repair"):
            repairs.append(row["cache_repair"])
            _note(f"cache: rebuilt {row['case']}: {row['cache_repair']}", bar)

    if progress and todo:
        bar = progress_bar(total=len(todo), desc="cases", unit="case")

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

                def start() -> None:
                    while pending and len(children) < jobs and signals.signum is None:
                        case = pending.pop(0)
                        _prepare_quietly(case, opts)
                        children[case] = Child(
                            run_case, case, opts, timeout=opts.timeout
                        )
                        show()

                while (pending or children) and signals.signum is None:
                    start()
                    if pending and len(children) == jobs:
                        # While every worker is busy, the next case's
                        # variant is prepared here, so that it starts as
                        # soon as a worker frees instead of leaving it idle.
                        _prepare_quietly(pending[0], opts)
                    wait_any(children.values(), timeout=0.5)
                    # The cases that have sent their results give their
                    # workers to the next ones first: reading and saving a
                    # result (and waiting for its process to exit) would
                    # leave a worker idle meanwhile.
                    sent = [case for case, child in children.items() if child.sent()]
                    ended = [(case, children.pop(case)) for case in sent]
                    start()
                    ended += [(c, k) for c, k in list(children.items()) if k.poll()]
                    for case, child in ended:
                        child.poll()
                        children.pop(case, None)
                        if signals.signum is not None and not child.finished_normally:
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
        row = _base_record(case, opts)
        row.status = "crashed"
        row.error = f"worker failed: {type(exc).__name__}: {exc}"
        return {"row": row.to_row(), "arrays": {}}


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
