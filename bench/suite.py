"""The performance benchmark: ``python -m eomcompare bench``.

Measures in one run, as medians of repeats, and writes CSV files, a table of
targets and log-log figures into ``--out`` (default ``reports/bench/``):

1. derivation seconds and operation counts (raw and after cse) of
   ``n_link_pendulum`` (relative angles) and ``n_link_pendulum_on_cart`` at
   n = 1 .. 20 for every registered formulation (the default comparison's
   and those it leaves out, ``kane_composite``; one whose scope leaves the
   planar pendulums out, ``kane_articulated``, is logged as not
   applicable).  Each (system, formulation, n) runs in its own process under a time cap, so a peer that grows
   exponentially stops at the cap (recorded as ``capped``) and cannot hang
   the run; larger n of a capped formulation are not attempted;
2. right-hand-side microseconds per call of the lambdify and C backends,
   their batched per-state cost, and Pinocchio's ``aba`` on the same
   pendulum at n = 2, 5, 10, 20;
3. the ``solve_ivp`` time of 10 s of ``n_link_pendulum_on_cart(5)`` with
   each formulation's right-hand side against a Pinocchio ``aba``
   right-hand side, same solver and tolerances;
4. the spatial robots (:mod:`eomcompare.bench.robots`, in ``--out``/robots):
   operation counts of ``spatial_chain(n)`` against ABA and of the
   Stanford arm against Kane & Levinson, compiled right-hand sides of
   ``panda`` and ``ur5`` against Pinocchio, derivation seconds against
   ``sympy_kane``, each row naming its algorithm (``kane``,
   ``kane_composite``, ``kane_articulated``, ...), and floating bases
   (:mod:`eomcompare.bench.floating`: agreement with Pinocchio and MuJoCo,
   the floating quadruped's rhs and derivation, the floating-base counts).  ``--skip
   derive,rhs,solve`` runs this part alone (its targets are still
   written).

Ratios are formed from numbers of the same run and compared with the
performance targets, each naming the algorithm that meets it (the
operation-count target: ``kane_composite``; the robot targets:
:func:`eomcompare.bench.robots.robot_targets`); a missed target is printed as
missed.

Needs the ``bench`` extra (``pip install eomcompare[bench]``: Pinocchio and
matplotlib); without Pinocchio the comparisons with it are reported as not
measured.

Examples
--------
A quick run (a few minutes: it measures), from the shell or from Python::

    python -m eomcompare bench --quick --out /tmp/bench

    from eomcompare.bench import suite as bench
    bench.main(["--quick", "--out", "/tmp/bench"])
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eomcompare.numeric.child import Child, wait_any

from .robots import robot_targets
from .suite_output import (
    _figures,
    _format_targets,
    _pinocchio_version,
    _read_csv_rows,
    _write_csv,
    _write_report,
)
from .targets import PENDULUMS, evaluate_targets, fit_growth
from .timing import per_call

__all__ = ["main", "pinocchio_chain", "fit_growth"]

# Solver settings of the end-to-end comparison (the reference measurements
# of the field use these).
SOLVER = {"method": "DOP853", "rtol": 1e-8, "atol": 1e-8}


# ----------------------------------------------------------------------
# Pinocchio oracle of the planar chains
# ----------------------------------------------------------------------
def pinocchio_chain(
    n: int,
    *,
    cart: bool = False,
    m: float = 1.0,
    l: float = 1.0,
    m0: float = 2.0,
    g: float = 9.81,
):
    """Pinocchio model of ``n_link_pendulum`` (relative angles) or, with
    ``cart``, of ``n_link_pendulum_on_cart`` at the catalogue's default
    parameters.

    Revolute z joints with relative angles, each at ``[l, 0, 0]`` in its
    parent; uniform rods ``Inertia(m, [l/2, 0, 0], diag(0, ml^2/12,
    ml^2/12))``; gravity ``-g`` along y; the cart a prismatic x joint
    carrying a point mass.  Configuration and velocity order: (x,) q1..qn.

    Examples
    --------
    >>> model = pinocchio_chain(3)
    >>> model.nq
    3
    """
    from eomcompare.references.oracles import TreeJoint, tree_model

    rod = (m, [l / 2, 0.0, 0.0], np.diag([0.0, m * l * l / 12, m * l * l / 12]))
    joints = []
    if cart:
        joints.append(
            TreeJoint(-1, "P", 0, np.zeros(3), m0, np.zeros(3), np.zeros((3, 3)))
        )
    for i in range(n):
        joints.append(
            TreeJoint(len(joints) - 1, "R", 2, [l if i else 0.0, 0.0, 0.0], *rod)
        )
    model = tree_model(joints, [0.0, -g, 0.0])
    return model


def _pinocchio():
    try:
        import pinocchio
    except Exception as exc:  # ImportError, or a broken binary install
        return None, f"Pinocchio not available ({exc}); pip install pin"
    return pinocchio, ""


def _pin_rhs(model):
    import pinocchio as pin

    data = model.createData()
    nv = model.nv
    tau = np.zeros(nv)
    aba = pin.aba

    def rhs(t, x):
        return np.concatenate((x[nv:], aba(model, data, x[:nv], x[nv:], tau)))

    return rhs, data


# ----------------------------------------------------------------------
# 1. Derivations, each in a child process under a time cap
# ----------------------------------------------------------------------
def _child(spec: dict) -> None:
    """Run in a child process: derive, write timings, then count ops.

    Writes JSON lines to ``spec["out"]``: ``ready`` once the declaration is
    built (so the parent's time cap covers the derivation only), one
    ``seconds`` per derivation, then ``raw``/``cse`` counts: what was
    written survives the child being killed at a cap.
    """
    import sympy

    from eomcompare.formulations import count_operations, get_formulation
    from eomcompare.symbolic.counting import count_ops
    from eomcompare.systems import get_system

    path = spec["out"]

    def put(rec):
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")

    system = get_system(spec["system"], n=spec["n"], angles="relative")
    form = get_formulation(spec["formulation"], count_ops=False)
    put({"ready": True})
    eom, spent = None, 0.0
    for _ in range(spec["repeats"]):
        # sympy's global cache would make later repeats cheaper.
        sympy.core.cache.clear_cache()
        start = time.perf_counter()
        eom = form.derive(system)
        seconds = time.perf_counter() - start
        spent += seconds
        put({"seconds": seconds})
        if spent + seconds > spec["cap"]:
            break  # another repeat would not fit in the cap
    if spec["count"]:
        # The raw count first: it is cheap next to cse and survives a
        # count cap that stops cse.
        raw = count_ops(eom.mass_matrix, eom.forcing)
        put({"raw": raw})
        put({"cse": count_operations(eom.mass_matrix, eom.forcing, raw=raw)["cse"]})


def _read_jsonl(path):
    recs = []
    try:
        with open(path) as fh:
            for line in fh:
                if line.endswith("\n"):
                    recs.append(json.loads(line))
    except FileNotFoundError:
        pass
    return recs


def _derive_once(
    system, formulation, n, repeats, cap, count=True, startup=120.0, count_cap=None
) -> dict:
    """One (system, formulation, n) in a child process.

    The child is killed when a derivation runs past ``cap`` seconds (status
    ``capped``), or when counting operations takes longer than
    ``count_cap`` (default ``cap``) after the last derivation (the counts
    not finished left empty, timings kept).
    """
    count_cap = cap if count_cap is None else count_cap
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    spec = {
        "system": system,
        "formulation": formulation,
        "n": n,
        "repeats": repeats,
        "out": path,
        "count": count,
        "cap": cap,
    }
    # compare.child's forked child, killed here at whichever cap applies
    # to what its last record says it is doing (no time limit of its own).
    child = Child(_child, spec)
    start = time.perf_counter()
    status, mark, seen, stopped = "ok", start, 0, False
    try:
        while not child.poll():
            wait_any([child], timeout=0.2)
            recs = _read_jsonl(path)
            now = time.perf_counter()
            if len(recs) > seen:
                seen, mark = len(recs), now
            last = recs[-1] if recs else {}
            if not recs and now - start > startup:
                status = "error: the child did not start"
            elif "ready" in last and now - mark > cap:
                status = "capped"
            elif ("seconds" in last or "raw" in last) and now - mark > (
                count_cap if count else cap
            ):
                # Counting (or a further repeat) past its cap: keep timings.
                status = "ok" if count else "capped"
            else:
                continue
            child.kill()
            stopped = True
            break
        if not stopped:
            try:
                child.result()
            except Exception as exc:  # its own error, or it died
                status = f"error: {type(exc).__name__}: {exc}"
    finally:
        child.kill()
        recs = _read_jsonl(path)
        os.unlink(path)
    seconds = [r["seconds"] for r in recs if "seconds" in r]
    raw = [r["raw"] for r in recs if "raw" in r]
    cse = [r["cse"] for r in recs if "cse" in r]
    med = statistics.median(seconds) if seconds else math.nan
    if seconds and med > cap:
        status = "capped"
    return {
        "system": system,
        "formulation": formulation,
        "n": n,
        "seconds": med,
        "repeats": len(seconds),
        "ops_raw": raw[0] if raw else math.nan,
        "ops_cse": cse[0] if cse else math.nan,
        "status": status,
        "wall": time.perf_counter() - start,
    }


def _refusal(system, formulation):
    """Why ``formulation`` does not derive the scaling ``system`` at all
    (its declared scope: ``kane_articulated`` takes joint trees declared
    by ``declare_tree`` only), or None."""
    from eomcompare.formulations import UnsupportedSystemError, get_formulation
    from eomcompare.systems import get_system

    try:
        get_formulation(formulation).check_supported(
            get_system(system, n=2, angles="relative")
        )
    except UnsupportedSystemError as exc:
        return str(exc)
    return None


def bench_derivations(
    ns, formulations, repeats, cap, log, count_cap=None, systems=PENDULUMS
) -> list[dict]:
    """Seconds and operation counts of each formulation on each scaling
    system at each n; a formulation whose scope leaves the system out
    (:func:`_refusal`) is logged as not applicable and has no rows."""
    rows = []
    for system in systems:
        for form in formulations:
            why = _refusal(system, form)
            if why is not None:
                log(f"  {system:24s} {form:18s} not applicable: {why}")
                continue
            stopped = None
            for n in ns:
                if stopped is not None:
                    rows.append(
                        {
                            "system": system,
                            "formulation": form,
                            "n": n,
                            "seconds": math.nan,
                            "repeats": 0,
                            "ops_raw": math.nan,
                            "ops_cse": math.nan,
                            "status": f"capped (at n={stopped})",
                            "wall": 0.0,
                        }
                    )
                    continue
                # Repeats only where a derivation is short: medians of long
                # ones add little and cost a lot.
                r = repeats if n <= 10 else 1
                row = _derive_once(system, form, n, r, cap, count_cap=count_cap)
                rows.append(row)
                log(
                    f"  {system:24s} {form:18s} n={n:2d} "
                    f"{row['seconds']:8.3f} s  raw {row['ops_raw']:>10} "
                    f"cse {row['ops_cse']:>7}  {row['status']}"
                )
                if row["status"] != "ok":
                    stopped = n
    return rows


# ----------------------------------------------------------------------
# 2. Right-hand side per call
# ----------------------------------------------------------------------
def bench_rhs(ns, repeats, batch, log, formulation="kane") -> list[dict]:
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    pin, why = _pinocchio()
    rows = []
    for n in ns:
        eom = get_formulation(formulation, count_ops=False).derive(
            get_system("n_link_pendulum", n=n, angles="relative")
        )
        t0, q, qd = eom.system.states.random_state(seed=1)
        lam = eom.numeric()
        x = lam.state_from(q, qd, t0)
        X = np.array(
            [
                lam.state_from(*eom.system.states.random_state(seed=s)[1:])
                for s in range(batch)
            ]
        )
        entry = {"n": n, "formulation": formulation}
        entry["lambdify_us"] = per_call(lambda: lam.rhs(t0, x), repeats) * 1e6
        entry["lambdify_batch_us_per_state"] = (
            per_call(lambda: lam.rhs_batch(t0, X), repeats) * 1e6 / batch
        )
        try:
            cm = eom.numeric(backend="c")
        except Exception as exc:  # no compiler: reported, not fatal
            log(f"  C backend unavailable: {exc}")
            cm = None
        if cm is not None:
            entry["c_us"] = per_call(lambda: cm.rhs(t0, x), repeats) * 1e6
            entry["c_batch_us_per_state"] = (
                per_call(lambda: cm.rhs_batch(t0, X), repeats) * 1e6 / batch
            )
            entry["c_vs_lambdify_maxdiff"] = float(
                np.max(np.abs(cm.rhs(t0, x) - lam.rhs(t0, x)))
            )
        if pin is not None:
            model = pinocchio_chain(n)
            data = model.createData()
            qq, vv = np.array(x[:n]), np.array(x[n:])
            tau = np.zeros(n)
            entry["aba_us"] = (
                per_call(lambda: pin.aba(model, data, qq, vv, tau), repeats) * 1e6
            )
            prhs, _ = _pin_rhs(model)
            entry["aba_rhs_us"] = per_call(lambda: prhs(t0, x), repeats) * 1e6
            # The same system: accelerations agree to rounding.
            entry["aba_vs_lambdify_maxdiff"] = float(
                np.max(np.abs(prhs(t0, x) - lam.rhs(t0, x)))
            )
        rows.append(entry)
        log(
            f"  n={n:2d} "
            + "  ".join(
                f"{k} {v:.3g}" for k, v in entry.items() if isinstance(v, float)
            )
        )
    if pin is None:
        log(f"  {why}")
    return rows


# ----------------------------------------------------------------------
# 3. End-to-end solve
# ----------------------------------------------------------------------
def bench_solve(formulations, repeats, log, n=5, t_end=10.0) -> list[dict]:
    from scipy.integrate import solve_ivp

    from eomcompare.formulations import UnsupportedSystemError, get_formulation
    from eomcompare.systems import get_system

    system = get_system("n_link_pendulum_on_cart", n=n, angles="relative")
    t0 = 0.0
    q0 = np.array([system.initial_state[c] for c in system.coordinates], dtype=float)
    qd0 = np.zeros(len(q0))
    rows = []

    def timed(fun, y0):
        times, sol = [], None
        for _ in range(repeats):
            start = time.perf_counter()
            sol = solve_ivp(fun, (t0, t_end), y0, **SOLVER)
            times.append(time.perf_counter() - start)
        return statistics.median(times), sol

    pin, why = _pinocchio()
    ref = None
    if pin is not None:
        prhs, _ = _pin_rhs(pinocchio_chain(n, cart=True))
        y0 = np.concatenate([q0, qd0])
        sec, sol = timed(prhs, y0)
        ref = sol
        rows.append(
            {
                "formulation": "pinocchio",
                "backend": "aba",
                "seconds": sec,
                "nfev": sol.nfev,
                "success": sol.success,
                "q_diff_t1": 0.0,
            }
        )
        log(f"  pinocchio aba             {sec:8.3f} s  nfev {sol.nfev}")
    else:
        log(f"  {why}")
    for form in formulations:
        try:
            eom = get_formulation(form, count_ops=False).derive(system)
        except UnsupportedSystemError as exc:
            log(f"  {form}: {exc}")
            continue
        for backend in ("lambdify", "c"):
            try:
                model = eom.numeric(backend=backend)
            except Exception as exc:
                log(f"  {form} {backend}: unavailable ({exc})")
                continue
            y0 = model.state_from(q0, qd0, t0)
            sec, sol = timed(model.rhs, y0)
            # Agreement with the oracle inside the horizon where chaotic
            # trajectories of correct models still agree.
            diff = math.nan
            if ref is not None:
                a = solve_ivp(model.rhs, (t0, 1.0), y0, **SOLVER)
                b = solve_ivp(prhs, (t0, 1.0), np.concatenate([q0, qd0]), **SOLVER)
                qa, _ = model.coordinates_from(a.y[:, -1], 1.0)
                diff = float(np.max(np.abs(qa - b.y[: len(q0), -1])))
            rows.append(
                {
                    "formulation": form,
                    "backend": backend,
                    "seconds": sec,
                    "nfev": sol.nfev,
                    "success": sol.success,
                    "q_diff_t1": diff,
                }
            )
            log(
                f"  {form:18s} {backend:8s} {sec:8.3f} s  nfev {sol.nfev}"
                f"  |q - q_pin|(1 s) {diff:.1e}"
            )
    return rows


def main(argv=None) -> int:
    """Run the benchmark; see the module docstring.

    Parameters
    ----------
    argv : list of str, optional
        ``--quick`` (few n, one repeat), ``--out DIR``, ``--time-cap S``
        (seconds per derivation), ``--count-cap S`` (seconds for counting
        operations), ``--systems S,T``, ``--formulations A,B``,
        ``--skip derive,rhs,solve``.

    Returns
    -------
    int
        0; missed targets are reported, not turned into a failure.
    """
    from eomcompare.formulations import formulation_names

    ap = argparse.ArgumentParser(
        prog="python -m eomcompare bench",
        description="Derivation scaling and numeric cost against Pinocchio.",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="few n and one repeat (minutes instead of an hour)",
    )
    ap.add_argument(
        "--out",
        default="reports/bench",
        help="directory of the CSV files, table and figures",
    )
    ap.add_argument(
        "--time-cap",
        type=float,
        default=60.0,
        help="seconds allowed for one derivation (default 60)",
    )
    ap.add_argument(
        "--count-cap",
        type=float,
        default=None,
        help="seconds allowed for counting operations after a "
        "derivation (default: the time cap); counts not "
        "finished are left empty",
    )
    ap.add_argument(
        "--systems",
        default=",".join(PENDULUMS),
        help="comma-separated scaling systems to derive "
        f"(default: {','.join(PENDULUMS)}); one per process "
        "runs them side by side on two cores",
    )
    ap.add_argument(
        "--formulations",
        default=None,
        help="comma-separated names (default: all registered)",
    )
    ap.add_argument(
        "--skip",
        default="",
        help="comma-separated parts to skip: derive, rhs, solve, robots",
    )
    ap.add_argument(
        "--robot-n",
        type=int,
        nargs="+",
        default=None,
        help="sizes of spatial_chain in the robot section (default 1 .. 8)",
    )
    ap.add_argument(
        "--from-csv",
        action="store_true",
        help="measure nothing: rebuild the targets, figures and "
        "report.md from the CSV files of the run in --out",
    )
    args = ap.parse_args(argv)
    if args.time_cap <= 0:
        ap.error("--time-cap must be positive")
    if args.count_cap is not None and args.count_cap <= 0:
        ap.error("--count-cap must be positive")
    names = formulation_names()
    forms = (
        names
        if args.formulations is None
        else [f.strip() for f in args.formulations.split(",") if f.strip()]
    )
    bad = [f for f in forms if f not in names]
    if bad:
        ap.error(f"unknown formulations {bad}; valid: {names}")
    systems = [x.strip() for x in args.systems.split(",") if x.strip()]
    if not systems or set(systems) - set(PENDULUMS):
        ap.error(f"--systems takes {', '.join(PENDULUMS)}, not {args.systems!r}")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    bad = skip - {"derive", "rhs", "solve", "robots"}
    if bad:
        ap.error(f"--skip takes derive, rhs, solve, robots, not {sorted(bad)}")
    out = Path(args.out)
    if args.from_csv:
        return _rebuild(out, args.time_cap)
    out.mkdir(parents=True, exist_ok=True)
    logfile = open(out / "bench.log", "w")

    def log(msg):
        print(msg, flush=True)
        logfile.write(msg + "\n")
        logfile.flush()

    if args.quick:
        ns_derive, ns_rhs, repeats, batch = [1, 2, 3, 5, 8, 10], [2, 5, 10], 1, 200
    else:
        ns_derive, ns_rhs, repeats, batch = list(range(1, 21)), [2, 5, 10, 20], 3, 1000
    start = time.perf_counter()
    from eomcompare.compare.store import _git_commit, _versions

    run = {
        "argv": list(sys.argv[1:] if argv is None else argv),
        "git_commit": _git_commit(),
        "versions": _versions(),
        "cpus": os.cpu_count(),
        "pinocchio": _pinocchio_version(),
        "time_cap": args.time_cap,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (out / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    log(
        f"benchmark: formulations {forms}, time cap {args.time_cap:g} s, "
        f"{'quick' if args.quick else 'full'} run"
    )
    log(
        f"  commit {run['git_commit'] or 'unknown'}, {run['cpus']} cpus, "
        + ", ".join(f"{k} {v}" for k, v in run["versions"].items())
        + f", pinocchio {run['pinocchio'] or 'not installed'}"
    )
    drows = rrows = srows = []
    robots: dict = {}
    if "derive" not in skip:
        log("1. derivations (seconds, raw ops, cse ops)")
        drows = bench_derivations(
            ns_derive,
            forms,
            repeats,
            args.time_cap,
            log,
            count_cap=args.count_cap,
            systems=systems,
        )
        _write_csv(out / "derivation.csv", drows)
    if "rhs" not in skip:
        log(
            "2. right-hand side, microseconds per call (median of "
            f"{max(repeats, 5)} repeats)"
        )
        rrows = bench_rhs(ns_rhs, max(repeats, 5), batch, log)
        _write_csv(out / "rhs.csv", rrows)
    if "solve" not in skip:
        log(f"3. solve_ivp of 10 s, n_link_pendulum_on_cart(5), {SOLVER}")
        srows = bench_solve(forms, repeats, log)
        _write_csv(out / "solve.csv", srows)
    if "robots" not in skip:
        from .robots import bench_robots

        robots = bench_robots(
            out / "robots",
            log,
            ns=args.robot_n or range(1, 9),
            cap=args.time_cap,
            repeats=max(repeats, 5),
        )
    run["seconds"] = round(time.perf_counter() - start, 1)
    (out / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    if {"derive", "rhs", "solve"} - skip:
        _conclude(out, run, drows, rrows, srows, args.time_cap, log, robots)
    elif robots:
        _write_targets(out, robot_targets(robots), log)
    log(f"\nwritten to {out}/ in {time.perf_counter() - start:.0f} s")
    logfile.close()
    return 0


def _write_targets(out: Path, trows, log):
    """targets.csv and targets.txt, the table logged."""
    _write_csv(out / "targets.csv", trows)
    table = _format_targets(trows)
    log("\nTargets (ratios from this run)\n" + table)
    (out / "targets.txt").write_text(table + "\n")


def _conclude(out: Path, run: dict, drows, rrows, srows, time_cap, log, robots=None):
    """Targets (CSV and text), figures and report.md of a run's rows; the
    robot section's targets (:func:`eomcompare.bench.robots.robot_targets`) appended
    from ``robots``, its rows by part."""
    ns = sorted({r["n"] for r in drows}) or [10]
    trows = evaluate_targets(
        drows, rrows, srows, time_cap, n_ref=10 if 10 in ns else max(ns)
    )
    trows += robot_targets(robots or {})
    _write_targets(out, trows, log)
    _figures(out, drows, rrows, log)
    return _write_report(out, run, trows, drows, rrows, srows)


def _rebuild(out: Path, time_cap: float) -> int:
    """Targets, figures and report of the run whose CSV files are in
    ``out`` (``--from-csv``), with its own time cap when run.json has it."""
    drows = _read_csv_rows(out / "derivation.csv")
    rrows = _read_csv_rows(out / "rhs.csv")
    srows = _read_csv_rows(out / "solve.csv")
    if not (drows or rrows or srows):
        print(f"no benchmark CSV files in {out}/", file=sys.stderr)
        return 2
    run = {}
    if (out / "run.json").exists():
        run = json.loads((out / "run.json").read_text())
    robots = {
        part: _read_csv_rows(out / "robots" / f"robots_{part}.csv")
        for part in ("chain", "stanford", "rhs", "derive", "urdf")
    }
    robots["khalil"] = _read_csv_rows(out / "robots" / "khalil.csv")
    robots["floating"] = _read_csv_rows(out / "robots" / "floating.csv")
    path = _conclude(
        out, run, drows, rrows, srows, run.get("time_cap", time_cap), print, robots
    )
    print(f"rebuilt from the CSV files: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
