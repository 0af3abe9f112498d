"""What the benchmark writes: its CSV tables, ``targets.txt``, the Markdown
report and the figures of derivation time and right-hand-side cost."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from .targets import PENDULUMS

__all__: list[str] = []


# ----------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------
def _write_csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        return
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def _format_targets(trows) -> str:
    lines = [f"{'target':68s} {'value':>9s} {'limit':>7s}  status"]
    for r in trows:
        v = r["value"]
        vs = (
            f"{v:9.3g}"
            if isinstance(v, (int, float)) and not math.isnan(v)
            else f"{'-':>9s}"
        )
        lim = r["limit"]
        ls = (
            f"<= {lim:g}"
            if isinstance(lim, (int, float)) and math.isfinite(lim)
            else ""
        )
        lines.append(
            f"{r['target']:68s} {vs} {ls:>7s}  {r['status']}"
            + (f"  ({r['note']})" if r.get("note") else "")
        )
    return "\n".join(lines)


def _read_csv_rows(path: Path) -> list[dict]:
    """Rows of a CSV file written by this benchmark (empty when absent)."""
    if not path.exists():
        return []
    import pandas as pd

    frame = pd.read_csv(path, keep_default_na=False, na_values=["", "nan"])
    rows = frame.to_dict("records")
    # Counts read back as floats where a column has gaps: integers again.
    for r in rows:
        for k in ("n", "ops_raw", "ops_cse", "repeats"):
            v = r.get(k)
            if isinstance(v, float) and math.isfinite(v) and v.is_integer():
                r[k] = int(v)
    return rows


def _write_report(out: Path, run: dict, trows, drows, rrows, srows) -> Path:
    """``report.md``: the run, the targets, and per part its figure and
    table, for a reader (the CSV files hold the same numbers)."""
    import pandas as pd

    from eomcompare.compare.tables import _md_table

    def cell(r):
        if r.get("status") != "ok":
            return r.get("status", "")
        return f"{r['seconds']:.3g} s / {_int_or_dash(r.get('ops_cse'))}"

    lines = ["# Performance benchmark", ""]
    if run:
        lines += [
            f"- commit: {run.get('git_commit') or 'unknown'}",
            f"- arguments: `{' '.join(run.get('argv', []))}`",
            "- versions: "
            + ", ".join(f"{k} {v}" for k, v in run.get("versions", {}).items())
            + f", pinocchio {run.get('pinocchio') or 'not installed'}",
            f"- cpus: {run.get('cpus')}, started {run.get('started')}"
            + (f", {run['seconds']:.0f} s" if run.get("seconds") else ""),
            "",
        ]
    if trows:
        lines += [
            "## Targets (ratios measured in this run)",
            "",
            _md_table(
                pd.DataFrame(trows)[["target", "value", "limit", "status", "note"]]
            ),
            "",
        ]
    if drows:
        lines += [
            "## Derivations",
            "",
            "![Derivation seconds and operation counts against n "
            "(log-log)](derivation.png)",
            "",
        ]
        frame = pd.DataFrame(drows)
        frame["cell"] = [cell(r) for r in drows]
        for system in [x for x in PENDULUMS if x in set(frame["system"])]:
            table = (
                frame[frame["system"] == system]
                .pivot_table(
                    index="n", columns="formulation", values="cell", aggfunc="first"
                )
                .reset_index()
            )
            lines += [
                f"### {system}: seconds / operations after cse",
                "",
                _md_table(table),
                "",
            ]
    if rrows:
        lines += [
            "## Right-hand side, microseconds per call",
            "",
            "![Right-hand-side microseconds against n (log-log)](rhs.png)",
            "",
            _md_table(pd.DataFrame(rrows)),
            "",
        ]
    if srows:
        lines += ["## End-to-end solves", "", _md_table(pd.DataFrame(srows)), ""]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path


def _int_or_dash(x) -> str:
    try:
        return str(int(x))
    except (TypeError, ValueError):
        return "-"


def _pinocchio_version() -> str | None:
    try:
        import pinocchio
    except ImportError:
        return None
    return getattr(pinocchio, "__version__", "unknown")


def _log_ticks(ns, ratio: float = 1.3) -> list:
    """The values of ``ns`` (sorted, positive) to label on a log axis: the
    first and last, and between them none closer than ``ratio`` to a
    neighbour, so labels do not run into each other."""
    ticks = []
    for k in ns:
        if not ticks or k >= ticks[-1] * ratio:
            ticks.append(k)
    if ns and ticks[-1] != ns[-1]:
        if len(ticks) > 1 and ns[-1] < ticks[-1] * ratio:
            ticks.pop()
        ticks.append(ns[-1])
    return ticks


def _figures(out: Path, drows, rrows, log) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("  matplotlib not available: no figures (pip install matplotlib)")
        return
    if drows:
        present = [x for x in PENDULUMS if any(r["system"] == x for r in drows)]
        fig, axes = plt.subplots(
            2, len(present), squeeze=False, figsize=(5.5 * len(present), 8)
        )
        for j, system in enumerate(present):
            for form in sorted({r["formulation"] for r in drows}):
                pts = [
                    (r["n"], r["seconds"], r["ops_raw"], r["ops_cse"])
                    for r in drows
                    if r["system"] == system
                    and r["formulation"] == form
                    and r["status"] == "ok"
                ]
                if not pts:
                    continue
                n, s, raw, cse = map(np.array, zip(*pts))
                axes[0, j].loglog(n, s, "o-", label=form)
                line = axes[1, j].loglog(n, raw, "o-", label=f"{form} raw")
                axes[1, j].loglog(
                    n, cse, "x--", color=line[0].get_color(), label=f"{form} cse"
                )
            axes[0, j].set_title(f"{system}: derivation")
            axes[0, j].set_ylabel("seconds")
            axes[1, j].set_ylabel("operations (mass matrix + forcing)")
            for ax in axes[:, j]:
                ax.set_xlabel("n")
                ax.grid(True, which="both", alpha=0.3)
            ns = _log_ticks(sorted({r["n"] for r in drows}))
            for ax in axes[:, j]:
                ax.set_xticks(ns, [str(k) for k in ns], minor=False)
                ax.minorticks_off()
            axes[0, j].legend(fontsize=7)
            axes[1, j].legend(fontsize=6, ncol=2)
        fig.tight_layout()
        fig.savefig(out / "derivation.png", dpi=120)
        plt.close(fig)
    if rrows:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        n = [r["n"] for r in rrows]
        for key, label in (
            ("lambdify_us", "lambdify"),
            ("c_us", "C"),
            ("lambdify_batch_us_per_state", "lambdify batched, per state"),
            ("c_batch_us_per_state", "C batched, per state"),
            ("aba_us", "Pinocchio aba"),
            ("aba_rhs_us", "Pinocchio aba rhs"),
        ):
            ys = [r.get(key, math.nan) for r in rrows]
            if any(math.isfinite(y) for y in ys):
                ax.loglog(n, ys, "o-", label=label)
        ax.set_xticks(n, [str(k) for k in n])
        ax.minorticks_off()
        ax.set_xlabel("n (n_link_pendulum)")
        ax.set_ylabel("microseconds per right-hand side")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "rhs.png", dpi=120)
        plt.close(fig)
