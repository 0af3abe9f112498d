"""Regression gate: a new run against a stored baseline.

Rules (each violation is listed; any one makes the exit status 1):

- every baseline case is present, and a case that succeeded still does;
- operation counts (raw and after cse) match exactly: a derivation that
  changed must be accepted deliberately by committing a new baseline;
- q'' agreement with the reference stays within ``agreement_tol``, and a
  trajectory that agreed over the whole horizon still does;
- times, as ratios to the calibration workload measured in the same run,
  grow by at most ``time_factor`` (derivation seconds and right-hand-side
  microseconds; times under ``min_seconds`` are too noisy to judge).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path


from .runner import ComparisonResult, load, run

__all__ = ["Finding", "compare_runs", "main"]


@dataclass(frozen=True)
class Finding:
    case: str
    kind: str          # "missing", "status", "ops", "agreement", "time", "improved"
    regression: bool
    message: str

    def __str__(self):
        tag = "REGRESSION" if self.regression else "note"
        return f"[{tag}] {self.case}: {self.kind}: {self.message}"


def _num(x):
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def compare_runs(baseline: ComparisonResult, new: ComparisonResult, *,
                 time_factor: float = 1.5, agreement_tol: float = 1e-8,
                 ignore_times: bool = False, min_seconds: float = 0.05,
                 min_rhs_us: float = 5.0) -> list[Finding]:
    """All differences that matter between two runs, as findings."""
    findings = []
    b_cal = _num(baseline.metadata.get("calibration_s")) or 1.0
    n_cal = _num(new.metadata.get("calibration_s")) or 1.0
    b_t = _num(baseline.metadata.get("options", {}).get("t_final"))
    new_rows = {r["case"]: r for _, r in new.frame.iterrows()}
    for _, b in baseline.frame.iterrows():
        case = b["case"]
        n = new_rows.get(case)
        if n is None:
            findings.append(Finding(case, "missing", True,
                                    "case is in the baseline but not in the new run"))
            continue
        if b["status"] == "ok" and n["status"] != "ok":
            findings.append(Finding(case, "status", True,
                                    f"was ok, now {n['status']}: {n.get('error', '')}"))
            continue
        if b["status"] != "ok" and n["status"] == "ok":
            findings.append(Finding(case, "improved", False,
                                    f"was {b['status']}, now ok"))
        if n["status"] != "ok":
            continue
        for col in ("ops_raw", "ops_cse"):
            bv, nv = _num(b.get(col)), _num(n.get(col))
            if bv is not None and nv is not None and int(bv) != int(nv):
                findings.append(Finding(case, "ops", True,
                                        f"{col} changed {int(bv)} -> {int(nv)}"))
        dev = _num(n.get("qdd_max_rel_dev"))
        if dev is not None and dev > agreement_tol:
            findings.append(Finding(case, "agreement", True,
                                    f"q'' deviates from the reference by {dev:.3g} "
                                    f"(tolerance {agreement_tol:g})"))
        bh, nh = _num(b.get("agreement_horizon")), _num(n.get("agreement_horizon"))
        if b_t and bh is not None and nh is not None and bh >= b_t - 1e-9 \
                and nh < bh - 1e-9:
            findings.append(Finding(case, "agreement", True,
                                    f"trajectory agreed over the whole {b_t:g} s, "
                                    f"now only until {nh:g} s"))
        for col, floor in (("derive_s", min_seconds), ("rhs_us", min_rhs_us)):
            bv, nv = _num(b.get(col)), _num(n.get(col))
            if bv is None or nv is None or bv < floor:
                continue
            ratio = (nv / n_cal) / (bv / b_cal)
            if ratio > time_factor:
                findings.append(Finding(
                    case, "time", not ignore_times,
                    f"{col} grew {ratio:.2f}x relative to the calibration "
                    f"({bv:.3g} -> {nv:.3g}; calibration {b_cal:.3g} -> {n_cal:.3g} s)"))
    return findings


def _load_baseline(path: Path) -> ComparisonResult:
    path = Path(path)
    return load(path.parent if path.suffix == ".csv" else path)


def main(args) -> int:
    baseline = _load_baseline(args.baseline)
    if args.run_dir:
        new = load(args.run_dir)
    else:
        meta = baseline.metadata
        opts = dict(meta.get("options", {}))
        for k in ("cache_dir", "use_cache"):
            opts.pop(k, None)
        systems = sorted(set(baseline.frame["system"]))
        formulations = sorted(set(baseline.frame["formulation"]))
        new = run(systems, formulations, n=meta.get("n"), jobs=args.jobs,
                  out=args.out, progress=not args.quiet, resume=False,
                  use_cache=False, **opts)
    findings = compare_runs(baseline, new, time_factor=args.time_factor,
                            agreement_tol=args.agreement_tol,
                            ignore_times=args.ignore_times)
    regressions = [f for f in findings if f.regression]
    for f in findings:
        print(f)
    print(f"\n{len(baseline.frame)} baseline cases, {len(new.frame)} new; "
          f"{len(regressions)} regression(s), "
          f"{len(findings) - len(regressions)} note(s)")
    return 1 if regressions else 0
