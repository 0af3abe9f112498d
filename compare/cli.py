"""Command line: ``python -m compare [run|report|regress|list|bench] ...``.

With no subcommand, ``python -m compare`` runs the default comparison
(every catalogue system with every registered formulation) into
``reports/latest/`` and writes its report there.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from formulations import FORMULATIONS
from systems import CATALOGUE

DEFAULT_OUT = Path("reports") / "latest"


def _add_run_options(p: argparse.ArgumentParser):
    p.add_argument("--systems", nargs="+", metavar="NAME",
                   help=f"systems to compare: catalogue names, "
                        f"MODULE:BUILDER or FILE.py:BUILDER for your own, or "
                        f"'all' (default: all of "
                        f"{', '.join(CATALOGUE)} except the slow published "
                        f"benchmarks whipple_bicycle and andrews_squeezer)")
    p.add_argument("--system-option", action="append", default=[],
                   metavar="NAME:KEY=VALUE",
                   help="a builder option, e.g. four_bar:coordinates=minimal "
                        "(repeatable; replaces the system's default variants)")
    p.add_argument("--formulations", nargs="+", metavar="NAME",
                   help=f"formulations (default: all of {', '.join(FORMULATIONS)})")
    p.add_argument("--n", nargs="+", type=int, default=None, metavar="N",
                   help="sizes of the scalable n-link systems (default: 2 3 5)")
    p.add_argument("--t-final", type=float, default=10.0,
                   help="simulated seconds (default 10)")
    p.add_argument("--method", default="DOP853",
                   help="solve_ivp method (default DOP853)")
    p.add_argument("--rtol", type=float, default=1e-10)
    p.add_argument("--atol", type=float, default=1e-10)
    p.add_argument("--reference", default="kane",
                   help="formulation the others are compared with (default kane)")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: number of CPUs; 1 runs inline)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="dask.distributed scheduler address: run the cases on a "
                        "cluster (needs the 'cluster' extra)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds per case before it is recorded as a time-out")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument("--no-cache", action="store_true",
                   help="derive everything again instead of reading the cache")
    p.add_argument("--fresh", action="store_true",
                   help="do not resume finished cases found in --out")
    p.add_argument("--no-report", action="store_true",
                   help="write the data only, no report")
    p.add_argument("--benchmarks", action="store_true",
                   help="add the published-benchmark section to the report "
                        "(derives the Whipple bicycle and Andrews' squeezer "
                        "with every formulation: long on an empty cache)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _executor(args):
    if not args.scheduler:
        return None
    try:
        from dask.distributed import Client
    except ImportError:
        sys.exit("--scheduler needs dask.distributed: pip install 'eomcompare[cluster]'")
    return Client(args.scheduler).get_executor()


def cmd_run(args) -> int:
    from .runner import run
    from .summary import print_summary
    from .runner import DEFAULT_VARIANTS
    from .user_systems import parse_system_options, resolve_systems
    systems = resolve_systems(args.systems)
    variants = parse_system_options(args.system_option, DEFAULT_VARIANTS)
    result = run(systems, args.formulations, n=args.n or [2, 3, 5],
                 variants=variants,
                 executor=_executor(args), jobs=args.jobs, out=args.out,
                 progress=not args.quiet, resume=not args.fresh,
                 t_final=args.t_final, method=args.method, rtol=args.rtol,
                 atol=args.atol, reference=args.reference,
                 timeout=args.timeout, use_cache=not args.no_cache)
    print_summary(result)
    if not args.no_report:
        from .report import write_report
        paths = write_report(result, args.out, benchmarks=args.benchmarks)
        print(f"\nreport: {paths['markdown']} and {paths['html']}")
    return 0


def cmd_report(args) -> int:
    from .report import write_report
    from .runner import load
    result = load(args.out)
    paths = write_report(result, args.out, benchmarks=args.benchmarks)
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
        abilities = [a for a in ("holonomic", "nonholonomic", "rheonomic")
                     if getattr(cls, f"handles_{a}")]
        print(f"  {name:26s} {cls.summary}  [{', '.join(abilities)}"
              f"{', multipliers' if cls.uses_multipliers else ''}]")
    return 0


def cmd_bench(args, rest) -> int:
    try:
        from . import bench
    except ImportError as exc:
        sys.exit(f"the benchmark is not available: {exc}")
    return bench.main(rest) or 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m compare",
        description="Derive equations of motion with every formulation, compare "
                    "them on the catalogue, write reports and gate regressions.")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("run", help="run a comparison (the default command)")
    _add_run_options(p)
    p = sub.add_parser("report", help="write the report of a saved run")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help=f"directory of the run (default {DEFAULT_OUT})")
    p.add_argument("--benchmarks", action="store_true",
                   help="add the published-benchmark section (long)")
    p = sub.add_parser("regress",
                       help="compare a run with a stored baseline; non-zero exit "
                            "on a regression")
    p.add_argument("--baseline", type=Path, required=True,
                   help="baseline directory or its results.csv")
    p.add_argument("--run", type=Path, default=None, dest="run_dir",
                   help="an existing run to check (default: run now with the "
                        "baseline's settings)")
    p.add_argument("--time-factor", type=float, default=1.5,
                   help="flag times that grow by more than this factor, "
                        "relative to the calibration (default 1.5)")
    p.add_argument("--agreement-tol", type=float, default=1e-8,
                   help="largest accepted q'' deviation from the reference")
    p.add_argument("--ignore-times", action="store_true",
                   help="report time changes without failing on them")
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--out", type=Path, default=Path("reports") / "regress",
                   help="where the new run is written")
    p.add_argument("--quiet", action="store_true")
    sub.add_parser("list", help="list systems and formulations")
    sub.add_parser("bench", help="benchmarks: derivation scaling and numeric "
                                 "speed against the peers (see --help)",
                   add_help=False)
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] == "bench":
        return cmd_bench(None, argv[1:])
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["run"] + argv
    args = parser.parse_args(argv)
    handlers = {"run": cmd_run, "report": cmd_report, "regress": cmd_regress,
                "list": cmd_list}
    try:
        return handlers[args.command](args)
    except KeyboardInterrupt:
        print("\ninterrupted: finished cases are kept; run again to resume",
              file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
