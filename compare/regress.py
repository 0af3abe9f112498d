"""Regression gate: a new run against a stored baseline.

Before anything runs, the baseline is checked: it must hold cases, every
column the gate reads, and numbers where counts and times belong.  A
baseline that cannot be fully checked is refused, each problem on a line
of its own (exit status 2).

Rules (each violation is listed; any one makes the exit status 1):

- the same cases on both sides: a case in only one of them is a
  regression, and so are different run options (horizon, tolerances, ...);
- a case that succeeded still does;
- operation counts (raw and after cse) match exactly: a derivation that
  changed must be accepted deliberately by committing a new baseline;
- q'' agreement with the reference stays within ``agreement_tol``, a
  trajectory that agreed over the whole horizon still does, and an
  agreement that cannot be computed is a regression too;
- a case whose q'' disagrees with the oracle (status
  ``oracle_disagrees``) is a regression, on one side or both, and so is
  an oracle agreement the baseline has and the new run cannot compute;
- times grow by at most ``time_factor``.  A time is judged twice: as a
  ratio to the calibration workload measured alongside it (in the same
  process, or by the run at most ``case_run.CALIBRATION_MAX_AGE``
  seconds before; each the fastest of repeated measurements: noise only
  ever adds time), and as it was measured.  It has grown only when it
  grew by more than the factor both ways: a machine slower as a whole
  slows the calibration too, and a calibration slowed (or sped up) by
  other jobs on a shared machine leaves the measured time where it was.
  Times under a floor (``min_seconds``, ``min_rhs_us``) are too short to
  judge.  A case whose time looks slower is measured again (``confirm``
  times) and flagged only when every measurement is slower: a rerun of
  the same code gives no time finding, on a busy machine too.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd

from .cases import RunOptions
from .runner import run
from .store import ComparisonResult, load
from .tables import is_count
from .variants import variant_options

__all__ = [
    "Finding",
    "BaselineError",
    "compare_runs",
    "check_baseline",
    "load_checked",
    "main",
]

#: Columns the gate reads in every row.
REQUIRED = (
    "case",
    "system",
    "variant",
    "formulation",
    "status",
    "ops_raw",
    "ops_cse",
    "qdd_max_rel_dev",
    "agreement_horizon",
)
#: Counts compared where the baseline has them: a baseline written before
#: these columns existed is read without them (no finding).
ADDED_COUNTS = ("ops_canonical", "ops_per_evaluation")
#: Time columns and the floor under which they are not judged (each the
#: fastest of its measurements).
TIME_COLUMNS = {"derive_s": "min_seconds", "rhs_us": "min_rhs_us"}
#: Time columns judged where both runs have them (runs before them lack
#: them).  The compiled right-hand side (``rhs_us``) of most systems takes
#: less than the floor; its lambdify time keeps their evaluation judged.
OPTIONAL_TIME_COLUMNS = {"rhs_lambdify_us": "min_rhs_us"}
#: Time columns measured in processor time, and the calibration measured
#: so beside them (runs before it judge them by ``calibration_s``).
_CPU_CALIBRATION = {
    "rhs_us": "calibration_cpu_s",
    "rhs_lambdify_us": "calibration_cpu_s",
}
_STATUSES = {
    "ok",
    "error",
    "unsupported",
    "timeout",
    "integration_failed",
    "crashed",
    "oracle_disagrees",
}
#: Run options that must be equal on both sides.
_COMPARED_OPTIONS = (
    "t_final",
    "method",
    "rtol",
    "atol",
    "n_samples",
    "n_states",
    "threshold",
    "reference",
    "stabilization",
)


class BaselineError(ValueError):
    """A baseline (or run) the gate cannot fully check; ``problems`` lists
    why, one sentence each."""

    def __init__(self, source, problems):
        self.source = source
        self.problems = list(problems)
        super().__init__(f"{source}: " + "; ".join(self.problems))


@dataclass(frozen=True)
class Finding:
    case: str
    kind: str  # missing, extra, options, status, ops, agreement, oracle, time, improved
    regression: bool
    message: str

    def __str__(self):
        tag = "REGRESSION" if self.regression else "note"
        return f"[{tag}] {self.case}: {self.kind}: {self.message}"


def _num(x):
    if isinstance(x, bool):
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def check_baseline(
    result: ComparisonResult, source="baseline", times: bool = True
) -> None:
    """Raise :class:`BaselineError` unless the gate can check every row.

    Parameters
    ----------
    times : bool
        Also require the time columns and a calibration.
    """
    frame, meta = result.frame, result.metadata
    problems = []
    if not len(frame):
        problems.append("results.csv holds no cases")
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        problems.append(f"results.csv lacks the column(s) {missing}")
    if times:
        lacking = [c for c in TIME_COLUMNS if c not in frame.columns]
        if lacking:
            problems.append(
                f"results.csv lacks the time column(s) {lacking} "
                f"(--ignore-times skips times)"
            )
        if (
            _num(meta.get("calibration_s")) is None
            and "calibration_s" not in frame.columns
        ):
            problems.append("no calibration (calibration_s) to judge times by")
    options = meta.get("options")
    if not isinstance(options, dict) or _num(options.get("t_final")) is None:
        problems.append("metadata.json lacks the run's options (t_final, ...)")
    else:
        try:  # the options the gate runs the baseline's cases with again
            RunOptions(**_run_options(options))
        except (TypeError, ValueError) as exc:
            problems.append(f"metadata.json's options cannot be run: {exc}")
    if not problems:
        dup = frame["case"][frame["case"].duplicated()].tolist()
        if dup:
            problems.append(f"case(s) listed twice: {sorted(set(dup))}")
        for _, r in frame.iterrows():
            case = r["case"] if isinstance(r["case"], str) else repr(r["case"])
            if r["status"] not in _STATUSES:
                problems.append(
                    f"{case}: status {r['status']!r} is not one of {sorted(_STATUSES)}"
                )
                continue
            if r["status"] != "ok":
                continue
            for col in ("ops_raw", "ops_cse"):
                if not is_count(r[col]):
                    problems.append(
                        f"{case}: {col} is {r[col]!r}, not an operation count"
                    )
            if times:
                for col in TIME_COLUMNS:
                    v = _num(r[col])
                    if v is None or v < 0:
                        problems.append(f"{case}: {col} is {r[col]!r}, not a time")
    if problems:
        raise BaselineError(source, problems)


def load_checked(path, source: str, times: bool = True) -> ComparisonResult:
    """A saved run (directory or its results.csv), checked for the gate."""
    path = Path(path)
    directory = path.parent if path.suffix == ".csv" else path
    if not (directory / "results.csv").is_file():
        raise BaselineError(source, [f"no results.csv in {directory}"])
    if not (directory / "metadata.json").is_file():
        raise BaselineError(source, [f"no metadata.json in {directory}"])
    try:
        result = load(directory)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise BaselineError(source, [f"cannot be read: {exc}"]) from None
    if not isinstance(result.metadata, dict):
        raise BaselineError(source, ["metadata.json is not an object"])
    check_baseline(result, source, times=times)
    return result


def _calibrations(result: ComparisonResult):
    run_cal = _num(result.metadata.get("calibration_s"))

    def of(row):
        return _num(row.get("calibration_s")) or run_cal

    return of


def time_ratios(
    baseline: ComparisonResult,
    new: ComparisonResult,
    *,
    min_seconds: float = 0.05,
    min_rhs_us: float = 5.0,
) -> dict:
    """``{(case, column): (growth, ratio, baseline value, new value)}`` for
    the time columns both runs measured above the floors: ``ratio`` is the
    growth of the time relative to the calibration, ``growth`` the smaller
    of it and the growth of the time as measured (the slowdown both
    agree on)."""
    floors = {"min_seconds": min_seconds, "min_rhs_us": min_rhs_us}
    b_cal, n_cal = _calibrations(baseline), _calibrations(new)
    new_rows = {r["case"]: r for _, r in new.frame.iterrows()}
    out = {}
    for _, b in baseline.frame.iterrows():
        n = new_rows.get(b["case"])
        if n is None or b["status"] != "ok" or n["status"] != "ok":
            continue
        for col, floor in {**TIME_COLUMNS, **OPTIONAL_TIME_COLUMNS}.items():
            bv, nv = _num(b.get(col)), _num(n.get(col))
            cpu = _CPU_CALIBRATION.get(col, "")
            bc, nc = _num(b.get(cpu)), _num(n.get(cpu))
            if bc is None or nc is None:
                bc, nc = b_cal(b), n_cal(n)
            if None in (bv, nv, bc, nc) or bv < floors[floor] or bc <= 0 or nc <= 0:
                continue
            ratio = (nv / nc) / (bv / bc)
            out[(b["case"], col)] = (min(ratio, nv / bv), ratio, bv, nv)
    return out


def compare_runs(
    baseline: ComparisonResult,
    new: ComparisonResult,
    *,
    time_factor: float = 1.5,
    agreement_tol: float = 1e-8,
    ignore_times: bool = False,
    min_seconds: float = 0.05,
    min_rhs_us: float = 5.0,
) -> list[Finding]:
    """All differences that matter between two runs, as findings."""
    findings = []
    b_opts = baseline.metadata.get("options", {}) or {}
    n_opts = new.metadata.get("options", {}) or {}
    for key in _COMPARED_OPTIONS:
        if key in b_opts and b_opts.get(key) != n_opts.get(key):
            findings.append(
                Finding(
                    "(run)",
                    "options",
                    True,
                    f"{key} is {n_opts.get(key)!r}, the baseline's {b_opts.get(key)!r}",
                )
            )
    b_t = _num(b_opts.get("t_final"))
    reference = b_opts.get("reference", "kane")
    new_rows = {r["case"]: r for _, r in new.frame.iterrows()}
    base_cases = set(baseline.frame["case"])
    for case in sorted(set(new_rows) - base_cases):
        findings.append(
            Finding(
                case, "extra", True, "case is in the new run but not in the baseline"
            )
        )
    for _, b in baseline.frame.iterrows():
        case = b["case"]
        n = new_rows.get(case)
        if n is None:
            findings.append(
                Finding(
                    case,
                    "missing",
                    True,
                    "case is in the baseline but not in the new run",
                )
            )
            continue
        if n["status"] == "oracle_disagrees" and b["status"] != "ok":
            # Disagreeing on both sides is no change, and still a failure.
            findings.append(Finding(case, "oracle", True, str(n.get("error", ""))))
        if b["status"] == "ok" and n["status"] != "ok":
            findings.append(
                Finding(
                    case,
                    "status",
                    True,
                    f"was ok, now {n['status']}: {n.get('error', '')}",
                )
            )
            continue
        if b["status"] != "ok" and n["status"] == "ok":
            findings.append(
                Finding(case, "improved", False, f"was {b['status']}, now ok")
            )
        if n["status"] != "ok":
            continue
        for col in ("ops_raw", "ops_cse", *ADDED_COUNTS):
            bv, nv = _num(b.get(col)), _num(n.get(col))
            if col in ADDED_COUNTS and bv is None:
                continue  # a baseline from before the column
            if b["status"] == "ok" and bv != nv:
                findings.append(
                    Finding(
                        case, "ops", True, f"{col} changed {_int(bv)} -> {_int(nv)}"
                    )
                )
        dev = _num(n.get("qdd_max_rel_dev"))
        if n.get("formulation") != reference and dev is None:
            findings.append(
                Finding(
                    case,
                    "agreement",
                    True,
                    "q'' agreement with the reference could not be computed",
                )
            )
        elif dev is not None and dev > agreement_tol:
            findings.append(
                Finding(
                    case,
                    "agreement",
                    True,
                    f"q'' deviates from the reference by {dev:.3g} "
                    f"(tolerance {agreement_tol:g})",
                )
            )
        if (
            _num(b.get("oracle_qdd_max_rel_dev")) is not None
            and _num(n.get("oracle_qdd_max_rel_dev")) is None
        ):
            why = n.get("oracle_unavailable")
            findings.append(
                Finding(
                    case,
                    "oracle",
                    True,
                    "q'' agreement with the oracle could not be computed"
                    + (f": {why}" if isinstance(why, str) and why else ""),
                )
            )
        bh, nh = _num(b.get("agreement_horizon")), _num(n.get("agreement_horizon"))
        if (
            b_t
            and bh is not None
            and bh >= b_t - 1e-9
            and (nh is None or nh < bh - 1e-9)
        ):
            findings.append(
                Finding(
                    case,
                    "agreement",
                    True,
                    f"trajectory agreed over the whole {b_t:g} s, "
                    f"now only until {nh if nh is not None else 0:g} s",
                )
            )
    if not ignore_times:
        ratios = time_ratios(
            baseline, new, min_seconds=min_seconds, min_rhs_us=min_rhs_us
        )
        for (case, col), (growth, ratio, bv, nv) in ratios.items():
            if growth > time_factor:
                findings.append(
                    Finding(case, "time", True, _grew(col, ratio, bv, nv, time_factor))
                )
    return findings


def _grew(col, ratio, bv, nv, factor, every=None) -> str:
    """The message of a time finding (``every``: measurements confirming it)."""
    where = f"in every one of {every} measurements, best " if every else ""
    return (
        f"{col} grew {nv / bv:.2f}x and {ratio:.2f}x relative to the "
        f"calibration {where}({bv:.3g} -> {nv:.3g}; factor {factor:g})"
    )


def _int(v):
    return "missing" if v is None else int(v)


def _run_options(options: dict) -> dict:
    """The :class:`RunOptions` a run recorded, less those of the machine
    and the session (cache, timing repeats), which the gate sets itself."""
    known = {f.name for f in fields(RunOptions)}
    return {
        k: v
        for k, v in options.items()
        if k in known and k not in ("cache_dir", "use_cache", "time_repeats")
    }


def _rerun(
    baseline: ComparisonResult, out, *, jobs, quiet, use_cache, time_repeats, cases=None
) -> ComparisonResult:
    """The baseline's cases (or ``cases`` of them) run with its options."""
    frame = baseline.frame
    if cases is not None:
        frame = frame[frame["case"].isin(cases)]
    opts = _run_options(baseline.metadata.get("options") or {})
    # Each variant whole: a scalable system's keeps its size ``n`` beside
    # its other options (``angles=absolute``).
    variants: dict[str, list[dict]] = {}
    for system, variant in zip(frame["system"], frame["variant"]):
        vo = variant_options(variant)
        if vo not in variants.setdefault(system, []):
            variants[system].append(vo)
    return run(
        sorted(set(frame["system"])),
        sorted(set(frame["formulation"])),
        variants=variants,
        jobs=jobs,
        out=out,
        progress=not quiet,
        resume=False,
        use_cache=use_cache,
        time_repeats=time_repeats,
        **opts,
    )


def main(args) -> int:
    times = not args.ignore_times
    for name in ("time_factor", "agreement_tol"):
        value = getattr(args, name)
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(
                f"--{name.replace('_', '-')} must be a positive number, not {value!r}"
            )
    base_dir = args.baseline.parent if args.baseline.suffix == ".csv" else args.baseline
    if args.run_dir is None and Path(args.out).resolve() == base_dir.resolve():
        # The new run would overwrite the baseline it is judged against.
        raise ValueError(
            f"--out {args.out} is the baseline's directory: the new run "
            f"would overwrite it; choose another --out"
        )
    try:
        baseline = load_checked(args.baseline, "baseline", times=times)
        new = load_checked(args.run_dir, "run", times=times) if args.run_dir else None
    except BaselineError as exc:
        for problem in exc.problems:
            where = args.baseline if exc.source == "baseline" else args.run_dir
            print(f"error: {exc.source} {where}: {problem}", file=sys.stderr)
        print(
            f"error: the {exc.source} cannot be fully checked; nothing compared",
            file=sys.stderr,
        )
        return 2
    measured_here = new is None
    if measured_here:
        from .store import check_output_dir

        check_output_dir(args.out)
        # Times judged: derive afresh, repeatedly.  Times ignored: the
        # derivation cache (keyed by the code) gives the same counts.
        new = _rerun(
            baseline,
            args.out,
            jobs=args.jobs,
            quiet=args.quiet,
            use_cache=not times,
            time_repeats=args.time_repeats if times else 1,
        )
    kw = dict(
        time_factor=args.time_factor,
        agreement_tol=args.agreement_tol,
        ignore_times=args.ignore_times,
    )
    findings = compare_runs(baseline, new, **kw)
    slow = sorted({f.case for f in findings if f.kind == "time"})
    if slow and measured_here and args.confirm:
        findings = _confirm(baseline, new, findings, slow, args, kw)
    regressions = [f for f in findings if f.regression]
    for f in findings:
        print(f)
    print(
        f"\n{len(baseline.frame)} baseline cases, {len(new.frame)} new; "
        f"{len(regressions)} regression(s), "
        f"{len(findings) - len(regressions)} note(s)"
    )
    return 1 if regressions else 0


def _confirm(baseline, new, findings, slow, args, kw):
    """Measure the cases that look slower again; keep a time finding only
    when every measurement is slower than the factor (as measured and
    relative to the calibration)."""
    best = dict(time_ratios(baseline, new))
    for i in range(args.confirm):
        if not any(v[0] > args.time_factor for v in best.values()):
            break
        again = _rerun(
            baseline,
            Path(args.out) / f"confirm-{i + 1}",
            jobs=args.jobs,
            quiet=args.quiet,
            use_cache=False,
            time_repeats=args.time_repeats,
            cases=slow,
        )
        for key, value in time_ratios(baseline, again).items():
            if key in best and value[0] < best[key][0]:
                best[key] = value
    kept = [f for f in findings if f.kind != "time"]
    for (case, col), (growth, ratio, bv, nv) in sorted(best.items()):
        if growth > args.time_factor:
            message = _grew(col, ratio, bv, nv, args.time_factor, args.confirm + 1)
            kept.append(Finding(case, "time", True, message))
    return kept
