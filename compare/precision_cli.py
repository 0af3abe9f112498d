"""``python -m eomcompare precision``: the tolerance sweep on the command line.

::

    python -m eomcompare precision --systems iftomm --integrators DOP853 Radau \\
        --out reports/precision --table reports/bench
    python -m eomcompare precision --systems double_pendulum four_bar \\
        --formulations kane lagrange --tolerances 1e-4 1e-5 1e-6 1e-7 1e-8 1e-9
    python -m eomcompare precision --systems all --scheduler tcp://host:8786

Exit status as the rest of the harness: 0 done (curves that stop or are
refused are results, with their reason in each row), 2 a usage error
before anything runs, 3 the output directory could not be written or the
scheduler was lost, 130/143 interrupted (finished curves kept; the same
command resumes).
"""

from __future__ import annotations

import argparse
import math
import shlex
import signal
import sys
import time
from pathlib import Path

from .precision import (
    DEFAULT_TOLERANCES,
    INTEGRATORS,
    TREATMENTS,
    PrecisionSettings,
    sweep,
)

__all__ = ["main", "build_parser", "IFTOMM_SYSTEMS"]

DEFAULT_OUT = Path("reports") / "precision"
#: ``--systems iftomm``: the library's problems in the catalogue.
IFTOMM_SYSTEMS = (
    "iftomm_pendulum",
    "n_four_bar",
    "andrews_squeezer",
    "bricard",
    "flyball_governor",
)


class UsageError(ValueError):
    """A command line that cannot run (exit status 2)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m eomcompare precision",
        description="Work-precision sweep: each (system, formulation, "
        "integrator, constraint treatment) integrated at several tolerances, "
        "its error measured as the IFToMM library defines it and its CPU "
        "time recorded; writes precision.csv in --out.",
    )
    p.add_argument(
        "--systems",
        nargs="+",
        metavar="NAME",
        help="catalogue systems, 'all', or 'iftomm' for "
        + ", ".join(IFTOMM_SYSTEMS)
        + " (default: the default run's systems)",
    )
    p.add_argument(
        "--formulations",
        nargs="+",
        metavar="NAME",
        help="formulations (default: the project's own of the default run)",
    )
    p.add_argument(
        "--integrators",
        nargs="+",
        metavar="NAME",
        default=["DOP853"],
        help=f"of {', '.join(INTEGRATORS)} (default DOP853); the implicit "
        "ones use finite differences of the compiled right-hand side as "
        "their Jacobian; odeint is LSODA stepping in compiled code "
        "(scipy.integrate.odeint), whose watch for singular positions "
        "checks its step ends and output times",
    )
    p.add_argument(
        "--treatments",
        nargs="+",
        metavar="NAME",
        default=["projection"],
        help=f"constraint treatments, of {', '.join(TREATMENTS)} (default "
        "projection; baumgarte applies to lagrange only)",
    )
    p.add_argument(
        "--tolerances",
        nargs="+",
        type=float,
        metavar="TOL",
        default=list(DEFAULT_TOLERANCES),
        help="rtol = atol values, at least six (default "
        + " ".join(f"{t:g}" for t in DEFAULT_TOLERANCES)
        + ")",
    )
    p.add_argument(
        "--t-final",
        type=float,
        default=None,
        help="simulated seconds (default: the problem's own, else 10)",
    )
    p.add_argument(
        "--output-steps",
        type=int,
        default=None,
        help="output steps the error is measured over (default: the "
        "problem's own, else 200)",
    )
    p.add_argument(
        "--n",
        nargs="+",
        type=int,
        default=None,
        metavar="N",
        help="sizes of scalable systems (n_four_bar: 2 and 40 for the "
        "OpenSim port's and the specification's N)",
    )
    p.add_argument(
        "--backend",
        default="sized",
        choices=["sized", "lambdify", "c", "auto"],
        help="numeric backend (default sized: compiled C from 4 coordinates)",
    )
    p.add_argument(
        "--solve-cap",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="processor seconds one solve may take; the curve stops there (default 60)",
    )
    p.add_argument(
        "--time-samples",
        type=int,
        default=3,
        metavar="K",
        help="solves timed per row, the fastest kept (cpu_s; cpu_s_median "
        "and cpu_s_k beside it) (default 3)",
    )
    p.add_argument(
        "--time-budget",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="processor seconds the repeated solves of a row may take in "
        "all; at least one runs (default 0.5)",
    )
    p.add_argument("--jobs", type=int, default=None, help="worker processes")
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="dask.distributed scheduler address: run the curves on a cluster",
    )
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS")
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"output directory, e.g. a run's (default {DEFAULT_OUT})",
    )
    p.add_argument(
        "--table",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write into DIR the IFToMM table (iftomm.csv, iftomm.md), "
        "each system's costs at the IFToMM accuracy levels (precision.md, "
        "precision_costs.csv) and its work-precision figures "
        "(precision_figures/*.png)",
    )
    p.add_argument(
        "--remeasure",
        type=int,
        default=0,
        metavar="K",
        help="with --table: after each formulation's cheapest cell at the "
        "high accuracy level is chosen, time every chosen cell again in one "
        "run, K solves each (at least 3; 5 or more to quote), round-robin "
        "over the cells; the table gives each time's median and "
        "interquartile range, the load average before and after, and names "
        "a best formulation only beyond the spread (else 'tie')",
    )
    p.add_argument(
        "--remeasure-cells",
        type=int,
        default=3,
        metavar="N",
        help="with --remeasure: time each formulation's N cheapest cells at "
        "the level (by the sweeps' times, which may have run under "
        "different loads) and keep the one with the smallest median "
        "(default 3)",
    )
    p.add_argument(
        "--no-run",
        action="store_true",
        help="run nothing: write the --table from the precision.csv already "
        "in --out (a sweep stopped half-way, or run on a cluster)",
    )
    p.add_argument(
        "--from",
        nargs="+",
        type=Path,
        default=None,
        dest="from_dirs",
        metavar="DIR",
        help="with --no-run: the directories whose precision.csv files the "
        "table reads (default --out), e.g. sweeps of the explicit and the "
        "stiff problems run apart; a curve of a later directory replaces "
        "the same curve of an earlier one",
    )
    p.add_argument("--fresh", action="store_true", help="do not resume earlier curves")
    p.add_argument("--no-cache", action="store_true", help="derive again")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _check(args) -> PrecisionSettings:
    from .precision import expand_curves

    if args.systems and [s.lower() for s in args.systems] == ["iftomm"]:
        args.systems = list(IFTOMM_SYSTEMS)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be a positive integer, not {args.jobs}")
    wait = args.connect_timeout
    if not (wait > 0 and math.isfinite(wait)):
        raise UsageError(f"--connect-timeout must be a positive number, not {wait}")
    if args.output_steps is not None and args.output_steps < 1:
        raise UsageError(f"--output-steps must be positive, not {args.output_steps}")
    if args.time_samples < 1:
        raise UsageError(
            f"--time-samples must be a positive integer, not {args.time_samples}"
        )
    if not (args.time_budget >= 0 and math.isfinite(args.time_budget)):
        raise UsageError(
            f"--time-budget must be a non-negative number, not {args.time_budget}"
        )
    try:
        settings = PrecisionSettings(
            tolerances=tuple(args.tolerances),
            t_final=args.t_final,
            output_steps=args.output_steps,
            backend=args.backend,
            solve_cap=args.solve_cap,
            time_samples=args.time_samples,
            time_budget=args.time_budget,
            use_cache=not args.no_cache,
        )
    except ValueError as exc:
        raise UsageError(f"{exc}") from None
    try:
        expand_curves(
            args.systems, args.formulations, args.integrators, args.treatments, args.n
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    from .store import check_output_dir

    check_output_dir(args.out)
    if args.table is not None:
        check_output_dir(args.table)
    return settings


def _executor(args):
    """A dask executor on ``--scheduler``, or None (a usage error when the
    scheduler cannot be reached within ``--connect-timeout``)."""
    if not args.scheduler:
        return None
    try:
        from dask.distributed import Client
    except ImportError:
        raise UsageError(
            "--scheduler needs dask.distributed: pip install 'eomcompare[cluster]'"
        ) from None
    try:
        client = Client(args.scheduler, timeout=args.connect_timeout)
    except Exception as exc:
        raise UsageError(
            f"cannot reach the dask scheduler at {args.scheduler}: {exc}"
        ) from None
    return client.get_executor()


def main(argv=None) -> int:
    """Run ``python -m eomcompare precision ARGV``; returns the exit status."""
    from .runner import ExecutorLost, RunInterrupted
    from .store import RunOutputError

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    if args.remeasure and (
        args.remeasure < 3 or args.table is None or args.remeasure_cells < 1
    ):
        print(
            "error: --remeasure K needs K >= 3 (an interquartile range), "
            "--remeasure-cells N >= 1 and --table DIR, not K = "
            f"{args.remeasure}, N = {args.remeasure_cells}"
            + ("" if args.table is not None else " without --table"),
            file=sys.stderr,
        )
        return 2
    if args.no_run:
        from .precision import read_precision

        if args.table is None:
            print(
                "error: --no-run writes the --table only; give --table DIR",
                file=sys.stderr,
            )
            return 2
        try:
            frames = [
                read_precision(d / "precision.csv")
                for d in args.from_dirs or [args.out]
            ]
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        frame = _latest_curves(frames)
        return _table(frame, args, argv)
    if args.from_dirs:
        print(
            "error: --from reads finished sweeps: use it with --no-run", file=sys.stderr
        )
        return 2
    try:
        settings = _check(args)
        executor = _executor(args)
        frame = sweep(
            args.systems,
            args.formulations,
            integrators=args.integrators,
            treatments=args.treatments,
            n=args.n,
            out=args.out,
            executor=executor,
            jobs=args.jobs,
            progress=not args.quiet,
            resume=not args.fresh,
            settings=settings,
        )
    except RunInterrupted as exc:
        name = signal.Signals(exc.signum).name
        print(
            f"\ninterrupted by {name}: {exc.saved} finished curve(s) kept in "
            f"{args.out / 'precision.csv'}; the same command resumes",
            file=sys.stderr,
        )
        return 128 + exc.signum
    except ExecutorLost as exc:
        print(
            f"error: lost the dask scheduler at {args.scheduler}: {exc}",
            file=sys.stderr,
        )
        return 3
    except RunOutputError as exc:
        print(f"error: {exc.strerror}; finished curves are kept", file=sys.stderr)
        return 3
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = frame["status"].value_counts().to_dict()
    print(
        f"precision: {len(frame)} rows ({', '.join(f'{v} {k}' for k, v in counts.items())}) "
        f"in {args.out / 'precision.csv'}, {time.perf_counter() - started:.1f} s"
    )
    if args.table is not None:
        return _table(frame, args, argv)
    return 0


def _latest_curves(frames):
    """The rows of several sweeps, a curve (system, formulation,
    integrator, treatment, horizon) of a later sweep replacing the same
    curve of an earlier one (a sweep run again after a change of the
    code)."""
    import pandas as pd

    from .precision_figures import CURVE

    kept = []
    seen: set = set()
    for frame in reversed(frames):
        # A curve over another horizon is another curve.
        curve = CURVE + (["t_final"] if "t_final" in frame.columns else [])
        # (NaN, a horizon not recorded, equals itself here.)
        keys = [
            tuple(None if v != v else v for v in key)
            for key in frame[curve].itertuples(index=False, name=None)
        ]
        kept.append(frame[[k not in seen for k in keys]])
        seen |= set(keys)
    return pd.concat(kept[::-1], ignore_index=True)


def _table(frame, args, argv) -> int:
    from .precision_figures import write_iftomm_table, write_precision_summary

    command = "python -m eomcompare precision " + " ".join(shlex.quote(a) for a in argv)
    paths = write_iftomm_table(
        frame,
        args.table,
        command=command,
        remeasure=args.remeasure,
        remeasure_cells=args.remeasure_cells,
        use_cache=not args.no_cache,
        progress=not args.quiet,
    )
    print(f"IFToMM table: {paths['csv']} and {paths['markdown']}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        plt = None
    summary = write_precision_summary(frame, args.table, command=command, plt=plt)
    print(
        f"costs at equal accuracy: {summary['markdown']} and {summary['csv']}"
        + (" (figures in precision_figures/)" if summary["figures"] else "")
    )
    return 0
