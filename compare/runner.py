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
import hashlib
import json
import math
import os
import platform
import signal
import subprocess
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from formulations import FORMULATIONS, UnsupportedSystemError, get_formulation
from formulations.integrate import integrate
from systems import CATALOGUE, get_system

__all__ = ["Case", "RunOptions", "ComparisonResult", "run", "expand_cases",
           "DEFAULT_VARIANTS", "calibrate"]

#: Builder options compared by default besides each system's defaults.
DEFAULT_VARIANTS: dict[str, list[dict]] = {
    "crank_slider": [{"coordinates": "redundant"}, {"coordinates": "minimal"}],
    "four_bar": [{"coordinates": "redundant"}, {"coordinates": "minimal"}],
}
#: Published-benchmark systems left out of the default run: their
#: derivations take minutes per formulation (``--all`` or naming them in
#: ``systems`` includes them).
HEAVY = ("whipple_bicycle", "andrews_squeezer", "ur5", "panda", "puma560",
         "stanford_arm", "spatial_chain")
#: Systems whose builder takes ``n``.
SCALABLE = ("n_link_pendulum", "n_link_pendulum_on_cart")


@dataclass(frozen=True)
class Case:
    """One system variant with one formulation."""

    system: str
    options: tuple
    formulation: str

    @property
    def variant(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.options)

    @property
    def label(self) -> str:
        return f"{self.system}[{self.variant}]" if self.options else self.system

    @property
    def id(self) -> str:
        return f"{self.label}/{self.formulation}"

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() or c in "-_" else "_" for c in self.id)


@dataclass(frozen=True)
class RunOptions:
    """Options of a comparison run (all recorded in the metadata).

    Parameters
    ----------
    t_final : float
        Simulated horizon in seconds.
    method, rtol, atol : solver settings for ``scipy.integrate.solve_ivp``.
    n_samples : int
        Points of the common time grid.
    n_states : int
        Random consistent states at which q'' is compared.
    threshold : float
        Deviation (relative to the reference's scale) that ends the horizon
        of agreement.
    reference : str
        Formulation the others are compared with.
    stabilization : {"projection", None}
    timeout : float
        Seconds a case may take before it becomes a time-out row.
    rhs_calls : int
        Right-hand-side calls per timing repeat (5 repeats, median).
    cache_dir : str or None
        Derivation cache directory (None: the default location).
    use_cache : bool
    """

    t_final: float = 10.0
    method: str = "DOP853"
    rtol: float = 1e-10
    atol: float = 1e-10
    n_samples: int = 201
    n_states: int = 20
    threshold: float = 1e-6
    reference: str = "kane"
    stabilization: str | None = "projection"
    timeout: float = 600.0
    rhs_calls: int = 200
    cache_dir: str | None = None
    use_cache: bool = True

    def __post_init__(self):
        if not (self.t_final > 0 and math.isfinite(self.t_final)):
            raise ValueError(f"t_final must be a positive number, not {self.t_final!r}")
        if self.n_samples < 2:
            raise ValueError(f"n_samples must be at least 2, not {self.n_samples!r}")
        if self.reference not in FORMULATIONS:
            raise ValueError(f"reference must be one of {sorted(FORMULATIONS)}, "
                             f"not {self.reference!r}")
        if self.stabilization not in ("projection", None):
            raise ValueError("stabilization must be one of ['projection', None]")

    def digest(self) -> str:
        """Hash of the options that change results and of the code that
        computes them (the resume key: rows of older code are not reused)."""
        from .cache import code_digest
        d = dataclasses.asdict(self)
        for k in ("timeout", "cache_dir", "use_cache", "rhs_calls"):
            d.pop(k)
        d["code"] = code_digest(("formulations", "systems", "compare"))
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


def expand_cases(systems: Sequence[str] | None = None,
                 formulations: Sequence[str] | None = None,
                 n: Sequence[int] | None = None,
                 variants: Mapping[str, list[dict]] | None = None) -> list[Case]:
    """Every (system variant, formulation) pair to run.

    Raises
    ------
    ValueError
        Naming an unknown system or formulation and the valid ones.
    """
    if not systems:
        systems = [s for s in CATALOGUE if s not in HEAVY]
    elif systems == "all" or list(systems) == ["all"]:
        systems = list(CATALOGUE)
    systems = list(systems)
    formulations = list(FORMULATIONS) if not formulations else list(formulations)
    bad = [s for s in systems if s not in CATALOGUE]
    if bad:
        raise ValueError(f"unknown systems {bad}; valid: {sorted(CATALOGUE)}")
    bad = [f for f in formulations if f not in FORMULATIONS]
    if bad:
        raise ValueError(f"unknown formulations {bad}; valid: {sorted(FORMULATIONS)}")
    variants = DEFAULT_VARIANTS if variants is None else variants
    n = list(n) if n else [3]
    for k in n:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"--n takes positive integers, not {k!r}")
    cases = []
    for s in systems:
        if s in SCALABLE:
            opts_list = [{"n": k} for k in n]
        else:
            opts_list = variants.get(s, [{}])
        for opts in opts_list:
            for f in formulations:
                cases.append(Case(s, tuple(sorted(opts.items())), f))
    return cases


# ----------------------------------------------------------------------
# One case, in a worker
# ----------------------------------------------------------------------
class CaseTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise CaseTimeout()


def _time_rhs(model, t0, x, calls: int) -> float:
    """Median microseconds per rhs call over 5 repeats of ``calls`` calls."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            model.rhs(t0, x)
        times.append((time.perf_counter() - start) / calls)
    return float(np.median(times) * 1e6)


def run_case(case: Case, opts: RunOptions) -> dict:
    """Derive, time, integrate one case; never raises (errors become rows)."""
    row = {"case": case.id, "system": case.system, "variant": case.variant,
           "label": case.label, "formulation": case.formulation,
           "options_digest": opts.digest(), "status": "ok", "error": ""}
    arrays = {}
    use_alarm = (threading.current_thread() is threading.main_thread()
                 and hasattr(signal, "setitimer") and opts.timeout)
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, opts.timeout)
    try:
        # Non-finite values (a 0/0 at a singular configuration) are detected
        # and become the row's error; numpy's warnings would only repeat it.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            _run_case_body(case, opts, row, arrays)
    except CaseTimeout:
        row["status"] = "timeout"
        row["error"] = f"time-out after {opts.timeout:g} s"
    except UnsupportedSystemError as exc:
        row["status"] = "unsupported"
        row["error"] = str(exc)
    except Exception as exc:  # recorded as a row; the run goes on
        row["status"] = "error"
        row["error"] = f"{type(exc).__name__}: {exc}"
        row["traceback"] = traceback.format_exc(limit=6)
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return {"row": row, "arrays": arrays}


def _run_case_body(case, opts, row, arrays):
    from .cache import DerivationCache
    ms = get_system(case.system, **dict(case.options))
    form = get_formulation(case.formulation)
    if opts.use_cache:
        eom, hit = DerivationCache(opts.cache_dir).derive(ms, form)
    else:
        eom, hit = form.derive(ms), False
    row["from_cache"] = hit
    row["derive_s"] = eom.timings.get("total", float("nan"))
    row["stage_s"] = json.dumps({k: round(v, 6) for k, v in eom.timings.items()})
    row["ops_raw"] = eom.op_counts.get("raw")
    row["ops_cse"] = eom.op_counts.get("cse")
    row["ops_by_kind"] = json.dumps(eom.op_counts.get("cse_by_kind", {}))
    row["n_equations"] = eom.n_equations
    row["n_unknowns"] = eom.n_unknowns
    row["n_multipliers"] = eom.n_multipliers
    row["n_coordinates"] = len(ms.coordinates)
    row["dof"] = ms.degrees_of_freedom
    start = time.perf_counter()
    model = eom.numeric()  # generates the code
    row["codegen_s"] = time.perf_counter() - start
    # q'' at random consistent states, compared with the reference later.
    states = [ms.random_state(seed) for seed in range(opts.n_states)]
    arrays["qdd"] = np.array([model.coordinate_accelerations(*s) for s in states])
    t0, q0, qd0 = ms.consistent_initial_state()
    row["rhs_us"] = _time_rhs(model, t0, model.state_from(q0, qd0, t0),
                              opts.rhs_calls)
    grid = np.linspace(t0, t0 + opts.t_final, opts.n_samples)
    start = time.perf_counter()
    res = integrate(eom, t0 + opts.t_final, method=opts.method, rtol=opts.rtol,
                    atol=opts.atol, t_eval=grid,
                    stabilization=opts.stabilization)
    row["integrate_s"] = time.perf_counter() - start
    row["nfev"] = res.nfev
    row["success"] = bool(res.success)
    row["message"] = res.message
    row["max_position_residual"] = res.max_holonomic_residual
    row["max_velocity_residual"] = res.max_velocity_residual
    arrays["t"], arrays["q"], arrays["qd"] = res.t, res.q, res.qd
    if ms.energy_conserved and len(res.t):
        E = np.array([sum(ms.energy(ti, qi, qdi))
                      for ti, qi, qdi in zip(res.t, res.q, res.qd)])
        scale = max(np.max(np.abs(E)), 1e-12)
        row["energy_drift"] = float(np.max(np.abs(E - E[0])) / scale)
        arrays["energy"] = E
    if not res.success:
        row["status"] = "integration_failed"
        row["error"] = res.message


# ----------------------------------------------------------------------
# Agreement with the reference
# ----------------------------------------------------------------------
def agreement(t, q, qd, q_ref, qd_ref, threshold):
    """Deviation of a trajectory from the reference's on the same grid.

    Returns a dict: max abs/rel deviations of q and q' (relative to the
    reference's largest magnitude, at least 1) and the horizon of agreement,
    the first time the relative deviation exceeds ``threshold`` (the end of
    the grid when it never does).
    """
    n = min(len(t), len(q_ref))
    dq = np.abs(q[:n] - q_ref[:n])
    dqd = np.abs(qd[:n] - qd_ref[:n])
    sq = max(float(np.max(np.abs(q_ref[:n]))) if n else 1.0, 1.0)
    sqd = max(float(np.max(np.abs(qd_ref[:n]))) if n else 1.0, 1.0)
    rel = np.maximum(np.max(dq, axis=1) / sq, np.max(dqd, axis=1) / sqd)
    beyond = np.nonzero(rel > threshold)[0]
    horizon = float(t[beyond[0]] - t[0]) if len(beyond) else float(t[n - 1] - t[0])
    return {"max_abs_dev_q": float(dq.max()), "max_rel_dev_q": float(dq.max() / sq),
            "max_abs_dev_qd": float(dqd.max()), "max_rel_dev_qd": float(dqd.max() / sqd),
            "agreement_horizon": horizon, "deviation": rel}


def calibrate(repeats: int = 3) -> float:
    """Seconds of a fixed sympy + numpy workload, to turn times into ratios.

    A run measures it at its start and end and keeps the geometric mean.

    The workload is independent of this package, so a slower derivation
    shows as a larger ratio even on a machine that is itself slower.
    """
    import sympy as sm
    x, y, z = sm.symbols("x y z")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        e = sm.expand((x + sm.sin(y) + z) ** 12)
        sm.cse(sm.Matrix([e.diff(x), e.diff(y)]))
        a = np.random.default_rng(0).random((60, 60))
        for _ in range(200):
            np.linalg.solve(a + 60 * np.eye(60), a[:, 0])
        times.append(time.perf_counter() - start)
    return float(np.median(times))


# ----------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------
@dataclass
class ComparisonResult:
    """Rows (one per case), trajectories and run metadata.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per (system variant, formulation).
    trajectories : dict
        Case id -> {"t", "q", "qd", "deviation", ...} arrays.
    metadata : dict
    out : Path or None
        Where the run was saved.
    """

    frame: pd.DataFrame
    trajectories: dict
    metadata: dict
    out: Path | None = None

    def __repr__(self):
        f = self.frame
        counts = f["status"].value_counts().to_dict() if len(f) else {}
        return (f"ComparisonResult(cases={len(f)}, status={counts}, "
                f"out={str(self.out) if self.out else None!r})")

    @property
    def failures(self) -> pd.DataFrame:
        return self.frame[~self.frame["status"].isin(["ok", "unsupported"])]


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10,
                              cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _versions() -> dict:
    import scipy
    import sympy
    out = {"python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__, "sympy": sympy.__version__,
           "pandas": pd.__version__}
    return out


def _load_done(out: Path, digest: str) -> dict:
    done = {}
    path = out / "rows.jsonl"
    if not path.exists():
        return done
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by an interrupted write
        if row.get("options_digest") == digest:
            done[row["case"]] = row
    return done


def _save_case(out: Path, row: dict, arrays: dict):
    if arrays:
        tdir = out / "trajectories"
        tdir.mkdir(parents=True, exist_ok=True)
        slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in row["case"])
        np.savez_compressed(tdir / f"{slug}.npz", **arrays)
        row["arrays"] = f"trajectories/{slug}.npz"
    with open(out / "rows.jsonl", "a") as fh:
        fh.write(json.dumps(row, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _load_arrays(out: Path | None, row: dict) -> dict:
    if out is None or not row.get("arrays"):
        return {}
    path = out / row["arrays"]
    if not path.exists():
        return {}
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def run(systems=None, formulations=None, *, n=None, variants=None,
        executor: cf.Executor | None = None, jobs: int | None = None,
        out=None, progress: bool = True, resume: bool = True,
        **options) -> ComparisonResult:
    """Compare formulations on systems.

    Parameters
    ----------
    systems, formulations : sequence of str, optional
        Default: the catalogue less the :data:`HEAVY` benchmark systems
        (``"all"`` for every system), and every registered formulation.
    n : sequence of int, optional
        Sizes of the scalable systems (default ``[3]``).
    variants : mapping, optional
        Builder options per system (default :data:`DEFAULT_VARIANTS`).
    executor : concurrent.futures.Executor, optional
        Where cases run: any executor (a dask ``Client.get_executor()`` for
        clusters).  Default: a process pool of ``jobs`` workers, or the
        calling process when ``jobs == 1``.
    out : path, optional
        Directory for rows.jsonl, trajectories, results.csv and
        metadata.json; a run into a directory holding finished cases of the
        same options resumes.
    **options
        :class:`RunOptions` fields (t_final, method, rtol, atol, ...).

    Returns
    -------
    ComparisonResult

    Examples
    --------
    >>> from compare import run
    >>> res = run(["double_pendulum"], ["kane", "sympy_kane"], t_final=0.5,
    ...           jobs=1, progress=False, use_cache=False)
    >>> sorted(res.frame["formulation"])
    ['kane', 'sympy_kane']
    """
    opts = RunOptions(**options)
    cases = expand_cases(systems, formulations, n, variants)
    if opts.reference not in {c.formulation for c in cases}:
        cases = cases + [Case(c.system, c.options, opts.reference)
                         for c in {(c.system, c.options): c
                                   for c in cases}.values()]
    out = Path(out) if out else None
    done = {}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        if resume:
            done = _load_done(out, opts.digest())
        else:
            (out / "rows.jsonl").unlink(missing_ok=True)
    todo = [c for c in cases if c.id not in done]
    rows = {cid: row for cid, row in done.items()}
    arrays = {cid: _load_arrays(out, row) for cid, row in done.items()}
    # The calibration is measured at both ends of the run: a load that
    # comes and goes during a run would otherwise be charged to, or hidden
    # from, every case through one short measurement.
    calibration_start = calibrate()
    started = time.time()

    def collect(result):
        row, arr = result["row"], result["arrays"]
        if out is not None:
            _save_case(out, row, arr)
        rows[row["case"]] = row
        arrays[row["case"]] = arr

    bar = None
    if progress and todo:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(todo), desc="cases", unit="case")
    own_executor = False
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    try:
        if executor is None and jobs == 1:
            for case in todo:
                if bar:
                    bar.set_postfix_str(case.id)
                collect(run_case(case, opts))
                if bar:
                    bar.update()
        else:
            if executor is None:
                executor = cf.ProcessPoolExecutor(max_workers=jobs)
                own_executor = True
            # Longest first: the peers' big derivations should not be last.
            futures = {executor.submit(run_case, c, opts): c for c in todo}
            for fut in cf.as_completed(futures):
                case = futures[fut]
                try:
                    collect(fut.result())
                except Exception as exc:  # a worker died
                    collect({"row": {"case": case.id, "system": case.system,
                                     "variant": case.variant, "label": case.label,
                                     "formulation": case.formulation,
                                     "options_digest": opts.digest(),
                                     "status": "error",
                                     "error": f"worker failed: {type(exc).__name__}: {exc}"},
                             "arrays": {}})
                if bar:
                    bar.set_postfix_str(case.id)
                    bar.update()
    except KeyboardInterrupt:
        if own_executor:
            executor.shutdown(wait=False, cancel_futures=True)
            own_executor = False
        raise
    finally:
        if bar:
            bar.close()
        if own_executor:
            executor.shutdown()
    frame = _assemble(cases, rows, arrays, opts)
    calibration_end = calibrate()
    calibration = float(np.sqrt(calibration_start * calibration_end))
    metadata = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_commit": _git_commit(),
        "versions": _versions(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(),
                    "cpus": os.cpu_count()},
        "options": dataclasses.asdict(opts),
        "options_digest": opts.digest(),
        "systems": sorted({c.system for c in cases}),
        "formulations": sorted({c.formulation for c in cases}),
        "n": list(n) if n else [3],
        "calibration_s": calibration,
        "calibration_ends_s": [calibration_start, calibration_end],
        "wall_s": time.time() - started,
        "resumed_cases": len(done),
    }
    result = ComparisonResult(frame, arrays, metadata, out)
    if out is not None:
        save(result, out)
    return result


def _assemble(cases, rows, arrays, opts) -> pd.DataFrame:
    ref_by_label = {}
    for c in cases:
        if c.formulation == opts.reference and rows.get(c.id, {}).get("status") == "ok":
            ref_by_label[c.label] = arrays.get(c.id, {})
    out = []
    for c in cases:
        row = dict(rows.get(c.id, {}))
        if not row:
            continue
        row.pop("traceback", None)
        arr = arrays.get(c.id, {})
        ref = ref_by_label.get(c.label)
        if ref and "qdd" in arr and "qdd" in ref and len(arr["qdd"]) == len(ref["qdd"]):
            d = np.abs(arr["qdd"] - ref["qdd"])
            scale = np.maximum(np.max(np.abs(ref["qdd"]), axis=1), 1.0)
            row["qdd_max_rel_dev"] = float(np.max(np.max(d, axis=1) / scale))
        if ref and "q" in arr and "q" in ref and len(arr["t"]):
            ag = agreement(arr["t"], arr["q"], arr["qd"], ref["q"], ref["qd"],
                           opts.threshold)
            arr["deviation"] = ag.pop("deviation")
            row.update(ag)
        out.append(row)
    frame = pd.DataFrame(out)
    front = ["system", "variant", "formulation", "status", "derive_s", "ops_raw",
             "ops_cse", "n_equations", "n_unknowns", "n_multipliers",
             "qdd_max_rel_dev", "max_rel_dev_q", "agreement_horizon",
             "energy_drift", "max_position_residual", "max_velocity_residual",
             "codegen_s", "rhs_us", "integrate_s", "nfev", "success", "error"]
    cols = [c for c in front if c in frame.columns] + \
        [c for c in frame.columns if c not in front]
    return frame[cols] if len(frame) else frame


def save(result: ComparisonResult, out) -> None:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result.frame.to_csv(out / "results.csv", index=False)
    (out / "metadata.json").write_text(json.dumps(result.metadata, indent=2,
                                                  default=str))


def load(out) -> ComparisonResult:
    """A saved run (results.csv, metadata.json, trajectories)."""
    out = Path(out)
    if not (out / "results.csv").exists():
        raise FileNotFoundError(f"no results.csv in {out}: run a comparison first")
    frame = pd.read_csv(out / "results.csv", keep_default_na=True)
    metadata = json.loads((out / "metadata.json").read_text())
    trajectories = {}
    for _, row in frame.iterrows():
        if isinstance(row.get("arrays"), str):
            trajectories[row["case"]] = _load_arrays(out, {"arrays": row["arrays"]})
    return ComparisonResult(frame, trajectories, metadata, out)
