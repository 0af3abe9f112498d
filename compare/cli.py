"""Command line: ``python -m eomcompare [run|report|regress|baseline|list|bench] ...``.

With no subcommand, ``python -m eomcompare`` runs the default comparison
(every catalogue system with every registered formulation) into
``reports/latest/`` and writes its report there.

Exit status (:data:`EXIT_CODES`): 0 success; 1 a case of this project's
formulations failed (error, time-out, failed integration, a worker that
died) or ``regress`` found a regression; 2 a usage error, found before
anything is computed (bad option or name, a user's system that cannot be
built, an output directory that cannot be written, an unreachable
scheduler, a baseline that cannot be fully checked); 3 the output
directory could not be written during the run, or the dask scheduler was
lost mid-run (finished cases are kept); 130 and 143 interrupted by SIGINT
and SIGTERM.  Limitations of the peers
(``sympy_*`` declining a system, timing out or giving non-finite
equations) are listed but do not fail a run.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from pathlib import Path

from eomcompare.formulations import FORMULATIONS, REFERENCE, formulation_names
from eomcompare.systems import CATALOGUE, system_facts

DEFAULT_OUT = Path("reports") / "latest"
BASELINE_OUT = Path("reports") / "baseline"
#: Exit status of ``python -m eomcompare`` and its meaning.
EXIT_CODES = {
    0: "success (peer limitations may be listed)",
    1: "a case of this project's formulations failed, or regress found a regression",
    2: "usage error, nothing computed: bad option or name, a user's system "
    "that cannot be built, unwritable --out, unreachable --scheduler, a "
    "baseline that cannot be fully checked",
    3: "the output directory could not be written, or the --scheduler was "
    "lost, during the run (saved cases are kept and resumed)",
    130: "interrupted by SIGINT (finished cases kept; the same command resumes)",
    143: "interrupted by SIGTERM (finished cases kept; the same command resumes)",
}


class UsageError(ValueError):
    """A command line that cannot run (exit status 2)."""


def _systems_help() -> str:
    """The --systems help, naming what the default leaves out from the
    catalogue's own facts."""
    heavy = [s for s in CATALOGUE if system_facts(s).heavy]
    default = [s for s in CATALOGUE if s not in heavy]
    return (
        "systems to compare: catalogue names, MODULE:BUILDER or "
        "FILE.py:BUILDER for your own, or 'all' (default: "
        + ", ".join(default)
        + ("; 'all' adds the heavy ones, " + ", ".join(heavy) + ")" if heavy else ")")
    )


def _formulations_help() -> str:
    """The --formulations help, naming the default comparison's
    formulations and the registered ones it leaves out, from the
    registry's own facts."""
    default = formulation_names(default_only=True)
    others = [n for n in FORMULATIONS if n not in default]
    return (
        "formulations (default: "
        + ", ".join(default)
        + ("; also registered: " + ", ".join(others) if others else "")
        + "); a formulation with options is written NAME:KEY=VALUE[:KEY=VALUE], "
        "e.g. lagrange:baumgarte=(5.0,5.0), and is compared as a formulation "
        "of its own"
    )


def _add_run_options(p: argparse.ArgumentParser):
    p.add_argument(
        "--systems",
        nargs="+",
        metavar="NAME",
        help=_systems_help(),
    )
    p.add_argument(
        "--system-option",
        action="append",
        default=[],
        metavar="NAME:KEY=VALUE",
        help="a builder option, e.g. four_bar:coordinates=minimal "
        "(repeatable; replaces the system's default variants; a scalable "
        "system takes it at every --n size, and NAME:n=K sets its size)",
    )
    p.add_argument(
        "--formulations",
        nargs="+",
        metavar="NAME",
        help=_formulations_help(),
    )
    p.add_argument(
        "--n",
        nargs="+",
        type=int,
        default=None,
        metavar="N",
        help="sizes of the scalable n-link systems (default: 2 3 5)",
    )
    p.add_argument(
        "--t-final", type=float, default=10.0, help="simulated seconds (default 10)"
    )
    p.add_argument(
        "--method",
        default="dop853",
        help="integrator: dop853 (default: solve_ivp's DOP853, the same "
        "steps, its loop in compiled code where the case compiles), odeint "
        "(LSODA, compiled), a solve_ivp method (DOP853, RK45, Radau, BDF, "
        "LSODA, RK23), or IDA: SUNDIALS' IDA on "
        "the multiplier form (stabilised index-2, ida-ggl; pip install -e "
        "'.[dae]'), for formulations with multipliers (--reference lagrange; "
        "the others are refused)",
    )
    p.add_argument("--rtol", type=float, default=1e-10)
    p.add_argument("--atol", type=float, default=1e-10)
    p.add_argument(
        "--reference",
        default=REFERENCE,
        help=f"formulation the others are compared with (default {REFERENCE})",
    )
    p.add_argument(
        "--backend",
        default="auto",
        choices=["auto", "sized", "lambdify", "c"],
        help="numeric backend the cases integrate with, the same for "
        "every formulation of a system (default auto: compiled C "
        "everywhere a compiler is found, else lambdify; sized: compiled C "
        "for systems of 4 or more coordinates, lambdify below; c always "
        "compiles; the right-hand side is timed compiled wherever the "
        "case compiles, and through lambdify beside it)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="worker processes (default: number of CPUs; 1 runs inline)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="dask.distributed scheduler address: run the cases on a "
        "cluster (needs the 'cluster' extra)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds per case before it is recorded as a time-out",
    )
    p.add_argument(
        "--time-repeats",
        type=int,
        default=1,
        metavar="K",
        help="derive each case at least K times (when not read from "
        "the cache; default 1); cheap derivations are repeated up to 5 "
        "times anyway, within 0.15 s of processor time per case",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"output directory (default {DEFAULT_OUT})",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="derive everything again instead of reading the cache",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="do not resume finished cases found in --out",
    )
    p.add_argument(
        "--no-report", action="store_true", help="write the data only, no report"
    )
    p.add_argument(
        "--benchmarks",
        action="store_true",
        help="add the published-benchmark section to the report "
        "(derives the Whipple bicycle and Andrews' squeezer "
        "with every formulation: long on an empty cache)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--precision",
        choices=["quick", "none"],
        default=None,
        help="work-precision sweep for the report: quick (a few systems, "
        "DOP853, six tolerances, seconds; the default of the default "
        "comparison) or none (the default when --systems or --formulations "
        "is given); python -m eomcompare precision runs a full one",
    )


def _executor(args):
    if not args.scheduler:
        return None
    try:
        from dask.distributed import Client
    except ImportError:
        raise UsageError(
            "--scheduler needs dask.distributed: pip install 'eomcompare[cluster]'"
        ) from None
    # A scheduler that cannot be reached or is lost mid-run is reported in
    # one line (UsageError, ExecutorLost), not by the client's tracebacks
    # of every reconnection attempt.
    import logging

    for name in ("distributed", *logging.root.manager.loggerDict):
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        client = Client(args.scheduler, timeout=args.connect_timeout)
    except Exception as exc:
        raise UsageError(
            f"cannot reach the dask scheduler at {args.scheduler}: {exc}"
        ) from None
    return client.get_executor()


def _run_kwargs(args) -> dict:
    return dict(
        t_final=args.t_final,
        method=args.method,
        rtol=args.rtol,
        atol=args.atol,
        reference=args.reference,
        timeout=args.timeout,
        time_repeats=args.time_repeats,
        use_cache=not args.no_cache,
        backend=args.backend,
    )


def _check_run_args(args, variants=None) -> None:
    """Everything that can be checked before computing (ValueError)."""
    from .cases import RunOptions, expand_cases, selected_systems
    from .store import check_output_dir

    RunOptions(**_run_kwargs(args))
    expand_cases(args.systems, args.formulations, args.n or [2, 3, 5], variants)
    chosen = selected_systems(args.systems)
    unused = sorted(
        {item.partition(":")[0] for item in args.system_option} - set(chosen)
    )
    if unused:
        raise UsageError(
            f"--system-option names {', '.join(unused)}, which this run does "
            f"not compare (--systems {' '.join(chosen)})"
        )
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be a positive integer, not {args.jobs}")
    wait = args.connect_timeout
    if not (wait > 0 and math.isfinite(wait)):
        raise UsageError(
            f"--connect-timeout must be a positive number of seconds, not {wait}"
        )
    check_output_dir(args.out)


def cmd_run(args) -> int:
    import time

    from .runner import run
    from .summary import print_summary

    started = getattr(args, "started", None) or time.perf_counter()
    from .user_systems import parse_system_options, resolve_systems

    # A user's own systems (module:builder or file.py:builder) are
    # registered first, so that the checks below know their names.
    args.systems = resolve_systems(args.systems)
    variants = None
    if args.system_option:
        from eomcompare.systems import CATALOGUE, system_facts

        variants = parse_system_options(
            args.system_option, {s: list(system_facts(s).variants) for s in CATALOGUE}
        )
    _check_run_args(args, variants)
    executor = _executor(args)
    result = run(
        args.systems,
        args.formulations,
        n=args.n or [2, 3, 5],
        variants=variants,
        executor=executor,
        jobs=args.jobs,
        out=args.out,
        progress=not args.quiet,
        resume=not args.fresh,
        **_run_kwargs(args),
    )
    print_summary(result)
    precision = getattr(args, "precision", None) or (
        "none" if args.systems or args.formulations else "quick"
    )
    if args.no_report:
        where = f"results in {args.out / 'results.csv'}"
        split = ""
    else:
        where, split = _report(args, result, precision, started)
    print(f"\nfinished in {time.perf_counter() - started:.1f} s{split}: {where}")
    return 1 if len(result.failures) else 0


def _report(args, result, precision: str, started: float) -> tuple[str, str]:
    """The main job's report of ``result``, with its quick sweep when
    ``precision`` asks for it: where the report is, and the run's time
    split between the cases and the report."""
    import time

    from eomcompare.numeric.child import Child, frozen_heap

    from .report import start_report
    from .sections import compute_sections, save_sections

    # The report's optional tables (Kolev's, and the published benchmarks
    # when asked) are computed beside the quick sweep, in a child process,
    # and kept with the run.  It times the derivations of Kolev's table
    # with the heap as it is; the collections of the rest (this
    # process's, the sweep's and the report's workers') leave the run's
    # heap alone.
    child = Child(compute_sections, result, benchmarks=args.benchmarks)
    pending = None
    with frozen_heap():
        try:
            if precision == "quick":
                from .precision import quick_sweep

                quick_sweep(
                    args.out,
                    jobs=args.jobs,
                    progress=not args.quiet,
                    backend=args.backend,
                )
            # The report's time includes what the tables take past the sweep.
            cases_done = time.perf_counter()
            # The parts of the report that need only the cases (each
            # system's equations and figures) are made while the tables
            # are finished, after the sweep, whose solves are timed.
            pending = start_report(result, args.out)
            tables = _child_result(child)
            save_sections(args.out, tables)
        except BaseException:
            if pending is not None:
                pending.close()
            raise
        finally:
            if not child.done:
                child.kill()
        with pending:
            paths = pending.finish(tables)
    where = f"report in {paths['html']} (and {paths['markdown'].name})"
    split = (
        f" (cases {cases_done - started:.1f} s, "
        f"report {time.perf_counter() - cases_done:.1f} s)"
    )
    return where, split


def cmd_baseline(args) -> int:
    """The default comparison, derived afresh with repeated timings, kept
    as results.csv and metadata.json in ``--out``."""
    import shutil
    import tempfile

    from .runner import run
    from .store import check_output_dir
    from .summary import print_summary

    check_output_dir(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        result = run(
            None,
            None,
            n=[2, 3, 5],
            jobs=args.jobs,
            out=tmp,
            progress=not args.quiet,
            resume=False,
            use_cache=False,
            time_repeats=args.time_repeats,
        )
        for name in ("results.csv", "metadata.json"):
            shutil.copyfile(Path(tmp) / name, args.out / name)
    print_summary(result)
    print(f"\nbaseline: {args.out}")
    return 1 if len(result.failures) else 0


def _child_result(child):
    """Wait for ``child`` and return its result (its exception raised)."""
    from eomcompare.numeric.child import wait_any

    while not child.poll():
        wait_any([child], timeout=1.0)
    return child.result()


def cmd_report(args) -> int:
    from .report import check_counts, write_report
    from .sections import compute_sections, load_sections, save_sections
    from .store import load

    result = load(args.out)
    # A damaged results.csv is refused before the missing tables are
    # derived (seconds to minutes), not after.
    check_counts(result, args.out)
    # The tables kept with the run are shown as they are; those it lacks
    # (a run with --no-report, or --benchmarks asked now) are computed once
    # and kept.
    tables = load_sections(args.out)
    missing = compute_sections(
        result,
        kolev="kolev" not in tables,
        benchmarks=args.benchmarks and "benchmarks" not in tables,
    )
    save_sections(args.out, missing)
    paths = write_report(result, args.out, tables=tables | missing)
    print(f"report: {paths['markdown']} and {paths['html']}")
    return 0


def cmd_regress(args) -> int:
    from .regress import main as regress_main

    return regress_main(args)


def cmd_list(args) -> int:
    print("systems:")
    for name, builder in CATALOGUE.items():
        doc = (builder.__doc__ or "").strip().splitlines()
        print(f"  {name:26s} {doc[0] if doc else ''}")
    print("formulations:")
    for name, cls in FORMULATIONS.items():
        tags = [
            a
            for a in ("holonomic", "nonholonomic", "rheonomic")
            if getattr(cls, f"handles_{a}")
        ]
        tags += ["multipliers"] if cls.uses_multipliers else []
        tags += ["trees only"] if cls.needs_tree else []
        tags += [] if cls.in_default_comparison else ["not in the default run"]
        print(f"  {name:26s} {cls.summary}  [{', '.join(tags)}]")
        options = {k: v for k, v in cls().options.items() if k != "count_ops"}
        if options:
            defaults = ", ".join(f"{k}={v!r}" for k, v in options.items())
            print(f"  {'':26s} options (NAME:KEY=VALUE): {defaults}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m eomcompare",
        description="Derive equations of motion with every formulation, compare "
        "them on the catalogue, write reports and gate regressions.",
    )
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("run", help="run a comparison (the default command)")
    _add_run_options(p)
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="seconds to reach --scheduler before giving up (default 10)",
    )
    p = sub.add_parser("report", help="write the report of a saved run")
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"directory of the run (default {DEFAULT_OUT})",
    )
    p.add_argument(
        "--benchmarks",
        action="store_true",
        help="add the published-benchmark section (long)",
    )
    p = sub.add_parser(
        "regress",
        help="compare a run with a stored baseline; non-zero exit on a regression",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        required=True,
        help="baseline directory or its results.csv",
    )
    p.add_argument(
        "--run",
        type=Path,
        default=None,
        dest="run_dir",
        help="an existing run to check (default: run now with the baseline's settings)",
    )
    p.add_argument(
        "--time-factor",
        type=float,
        default=1.5,
        help="flag times that grow by more than this factor, "
        "relative to the calibration (default 1.5)",
    )
    p.add_argument(
        "--agreement-tol",
        type=float,
        default=1e-8,
        help="largest accepted q'' deviation from the reference",
    )
    p.add_argument(
        "--ignore-times",
        action="store_true",
        help="report time changes without failing on them",
    )
    p.add_argument(
        "--time-repeats",
        type=int,
        default=3,
        metavar="K",
        help="derivations per case in the new run, the fastest "
        "kept (default 3; 1 with --ignore-times)",
    )
    p.add_argument(
        "--confirm",
        type=int,
        default=2,
        metavar="K",
        help="measure a case that looks slower up to K more times; "
        "a time finding needs every measurement slower "
        "(default 2)",
    )
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("reports") / "regress",
        help="where the new run is written",
    )
    p.add_argument("--quiet", action="store_true")
    p = sub.add_parser(
        "baseline",
        help="write the regression baseline: the default "
        "comparison derived afresh, timings repeated",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=BASELINE_OUT,
        help=f"baseline directory (default {BASELINE_OUT})",
    )
    p.add_argument(
        "--time-repeats",
        type=int,
        default=3,
        metavar="K",
        help="derivations per case, the fastest kept (default 3)",
    )
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--quiet", action="store_true")
    sub.add_parser("list", help="list systems and formulations")
    sub.add_parser(
        "precision",
        help="work-precision sweep: error against CPU time over tolerances, "
        "per formulation, integrator and constraint treatment (see --help)",
        add_help=False,
    )
    sub.add_parser(
        "bench",
        help="benchmarks: derivation scaling and numeric "
        "speed against the peers (see --help)",
        add_help=False,
    )
    return parser


def main(argv=None, *, started: float | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the
    exit status.  ``started`` (a ``time.perf_counter()`` value) is when the
    command began, for the wall time ``run`` reports last."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] == "bench":
        # The benchmark sits above the harness it measures; the command
        # line of the whole package (eomcompare.cli) dispatches to it.
        print(
            "error: the benchmark runs as `python -m eomcompare bench` "
            "(eomcompare.cli.main)",
            file=sys.stderr,
        )
        return 2
    if argv and argv[0] == "precision":
        from .precision_cli import main as precision_main

        return precision_main(argv[1:])
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["run"] + argv
    args = parser.parse_args(argv)
    args.started = started
    handlers = {
        "run": cmd_run,
        "report": cmd_report,
        "regress": cmd_regress,
        "baseline": cmd_baseline,
        "list": cmd_list,
    }
    from .report import ReportOutputError
    from .runner import ExecutorLost, RunInterrupted
    from .store import RunOutputError

    if args.command in ("run", "regress", "baseline"):
        from eomcompare.formulations.cache import use_private_cache_if_refused

        note = use_private_cache_if_refused()
        if note:
            print(note, file=sys.stderr)
    try:
        return handlers[args.command](args)
    except RunInterrupted as exc:
        name = signal.Signals(exc.signum).name
        print(
            f"\ninterrupted by {name}: {exc.saved} finished case(s) kept; "
            f"the same command resumes",
            file=sys.stderr,
        )
        return 128 + exc.signum
    except KeyboardInterrupt:
        print(
            "\ninterrupted: finished cases are kept; run again to resume",
            file=sys.stderr,
        )
        return 130
    except ExecutorLost as exc:
        print(
            f"error: lost the dask scheduler at {args.scheduler}: "
            f"{len(exc.not_run)} case(s) not run ({', '.join(exc.not_run)}); "
            f"{exc.saved} finished case(s) kept, the same command resumes",
            file=sys.stderr,
        )
        return 3
    except ReportOutputError as exc:
        print(f"error: {exc.strerror}", file=sys.stderr)
        return 3
    except RunOutputError as exc:
        print(
            f"error: {exc.strerror}; the cases saved before are kept and the "
            f"same command resumes them",
            file=sys.stderr,
        )
        return 3
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
