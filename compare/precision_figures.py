"""Work--precision diagrams, solve cost read off at a stated error, and the
IFToMM table (``precision.csv`` written by :mod:`eomcompare.compare.precision`).

Costs are compared **at equal accuracy**, never at equal tolerance: the
cost of a curve at an error level is the smallest processor time among its
solves whose measured error is at or below that level (a point of the
curve, not an interpolation: no curve is credited with an error it did not
reach).  A curve that never reaches the level has no cost there, and the
tables say how close it came.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "OPENSIM_CPU_S",
    "OPENSIM_MACHINE",
    "cost_at_error",
    "cost_table",
    "iftomm_table",
    "write_iftomm_table",
    "write_precision_summary",
    "SUMMARY_LEVELS",
    "work_precision_figure",
    "report_section",
    "REPORT_ERROR_LEVEL",
]

#: CPU seconds of the OpenSim 3.2 port of the IFToMM problems
#: (RehabEngGroup/MBSbenchmarksInOpenSim), as shared/benchmarks.md
#: transcribes them; A05 has no published time there.
OPENSIM_CPU_S = {"A01": 0.637, "A02": 0.455, "A03": 0.384, "A04": 0.258}
#: Problems the port ran at one size among several the sweep can run:
#: OpenSim's time stands beside that variant and horizon only (A02: the
#: port's N = 2 over 10 s, not the specification's N = 40 over 20 s).
OPENSIM_VARIANT = {"A02": ("n_four_bar[n=2]", 10.0)}
OPENSIM_MACHINE = "Intel i5-4570 at 3.2 GHz"
#: The error level the report reads the curves at (absolute, in the
#: measured quantities' units): the IFToMM high accuracy level.
REPORT_ERROR_LEVEL = 1e-3
#: The problem each system variant transcribes, for the IFToMM table.
PROBLEMS = {
    "iftomm_pendulum": "A01",
    "n_four_bar": "A02",
    "andrews_squeezer": "A03",
    "bricard": "A04",
    "flyball_governor": "A05",
}
CURVE = ["system", "formulation", "integrator", "treatment"]


def _base_system(label: str) -> str:
    return str(label).split("[", 1)[0]


def cost_at_error(frame: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per curve: the cheapest solve whose error is at or below ``level``
    (``cpu_s``, its ``tolerance``, ``error``, ``nfev``) or, where none is,
    NaN with the best error the curve reached (``best_error``) and why it
    stopped (``status`` of its last row)."""
    if not (isinstance(level, (int, float)) and level > 0):
        raise ValueError(f"level must be a positive number, not {level!r}")
    out = []
    # Curves over different horizons (a problem's specified one and the
    # catalogue's default) are different curves.
    curve = CURVE + (["t_final"] if "t_final" in frame.columns else [])
    for key, rows in frame.groupby(curve, sort=True, dropna=False):
        ok = rows[(rows["status"] == "ok") & rows["error"].notna()]
        reached = ok[ok["error"] <= level]
        best_error = float(ok["error"].min()) if len(ok) else float("nan")
        rec = dict(zip(CURVE, key))
        if len(reached):
            r = reached.loc[reached["cpu_s"].idxmin()]
            rec |= {
                "cpu_s": float(r["cpu_s"]),
                "tolerance": float(r["tolerance"]),
                "error": float(r["error"]),
                "nfev": r["nfev"],
                "best_error": best_error,
                "status": "reached",
            }
            # The spread of its timed solves, where the sweep recorded it.
            for c in ("cpu_s_median", "cpu_s_k", "t_final", "output_steps"):
                rec[c] = float(r[c]) if c in r.index else float("nan")
            # The numeric backend the solve ran on (the table's times are
            # measured again on it).
            backend = r.get("backend")
            rec["backend"] = backend if isinstance(backend, str) else ""
        else:
            stopped = rows[rows["status"] != "skipped"].iloc[-1]
            why = stopped["status"]
            msg = stopped.get("message")
            if why == "ok":
                why = "not reached"
            elif isinstance(msg, str) and msg:
                why = f"{why}: {msg}"
            rec |= {
                "cpu_s": float("nan"),
                "tolerance": float("nan"),
                "error": float("nan"),
                "nfev": None,
                "best_error": best_error,
                "status": why,
                "cpu_s_median": float("nan"),
                "cpu_s_k": float("nan"),
                "t_final": (
                    float(stopped["t_final"])
                    if "t_final" in stopped.index
                    else float("nan")
                ),
                "output_steps": float("nan"),
                "backend": "",
            }
        out.append(rec)
    return pd.DataFrame(out)


def cost_table(frame: pd.DataFrame, level: float = REPORT_ERROR_LEVEL) -> pd.DataFrame:
    """Per system: the cheapest curve at ``level`` and each formulation's
    best cost there, as ratios to the cheapest (measured in one run)."""
    costs = cost_at_error(frame, level)
    rows = []
    for system, group in costs.groupby("system", sort=True):
        reached = group[group["status"] == "reached"]
        rec = {"system": system}
        if len(reached):
            best = reached.loc[reached["cpu_s"].idxmin()]
            rec["cheapest"] = (
                f"{best['formulation']} ({best['integrator']}, {best['treatment']})"
            )
            rec["cpu_s"] = best["cpu_s"]
            for f, fg in group.groupby("formulation"):
                fr = fg[fg["status"] == "reached"]
                rec[f"{f} x"] = (
                    fr["cpu_s"].min() / best["cpu_s"] if len(fr) else float("nan")
                )
        else:
            rec["cheapest"] = "none reached it"
            rec["cpu_s"] = float("nan")
        rows.append(rec)
    return pd.DataFrame(rows)


def iftomm_table(frame: pd.DataFrame, level: float = 1e-3) -> pd.DataFrame:
    """The IFToMM problems in ``frame``: per problem and formulation, the
    cheapest solve reaching ``level`` (the high accuracy level), or what
    stopped it; the best formulation's time beside OpenSim 3.2's."""
    costs = cost_at_error(frame, level)
    costs = costs[costs["system"].map(_base_system).isin(PROBLEMS)]
    # Each system at the longest horizon swept (the problem's specified
    # one, where a shorter sweep of the same system exists too).
    longest = costs.groupby("system")["t_final"].transform("max")
    costs = costs[costs["t_final"].isna() | (costs["t_final"] == longest)]
    rows = []
    for (system, formulation), group in costs.groupby(
        ["system", "formulation"], sort=True
    ):
        reached = group[group["status"] == "reached"]
        problem = PROBLEMS[_base_system(system)]
        rec = {
            "problem": problem,
            "system": system,
            "t_final": group["t_final"].max(),
            "formulation": formulation,
        }
        if len(reached):
            r = reached.loc[reached["cpu_s"].idxmin()]
            rec |= {
                "cpu_s": r["cpu_s"],
                "cpu_s_median": r["cpu_s_median"],
                "cpu_s_k": r["cpu_s_k"],
                "integrator": r["integrator"],
                "treatment": r["treatment"],
                "tolerance": r["tolerance"],
                "error": r["error"],
                "nfev": r["nfev"],
                "output_steps": r["output_steps"],
                "backend": r["backend"],
                "outcome": "reached",
            }
        else:
            rec |= {
                "cpu_s": float("nan"),
                "cpu_s_median": float("nan"),
                "cpu_s_k": float("nan"),
                "integrator": "",
                "treatment": "",
                "tolerance": float("nan"),
                "error": float("nan"),
                "nfev": float("nan"),
                "output_steps": float("nan"),
                "backend": "",
                "outcome": "; ".join(
                    f"{r.integrator}/{r.treatment}: {r.status}"
                    + (
                        f" (best error {r.best_error:.3g})"
                        if math.isfinite(r.best_error)
                        else ""
                    )
                    for r in group.itertuples()
                ),
            }
        rows.append(rec)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = table.sort_values(["problem", "system", "formulation"], ignore_index=True)
    best = table.groupby("system")["cpu_s"].transform("min")
    # The sweep's fastest; the re-measured table (precision_remeasure)
    # names it only beyond the spread, and says "tie" otherwise.
    table["best"] = np.where(table["cpu_s"] == best, "yes", "no")
    table["opensim_cpu_s"] = [
        OPENSIM_CPU_S.get(p, np.nan) if _opensim_ran(p, s, t) else np.nan
        for p, s, t in zip(table["problem"], table["system"], table["t_final"])
    ]
    table["opensim_over_best"] = np.where(
        table["best"] == "yes", table["opensim_cpu_s"] / table["cpu_s"], np.nan
    )
    return table


def _opensim_ran(problem: str, system: str, t_final: float) -> bool:
    """Whether OpenSim's published time is of this variant and horizon
    (a sweep without recorded horizons is taken to have the port's)."""
    if problem not in OPENSIM_VARIANT:
        return True
    label, horizon = OPENSIM_VARIANT[problem]
    return system == label and (not np.isfinite(t_final) or t_final == horizon)


def write_iftomm_table(
    frame: pd.DataFrame,
    out,
    *,
    command: str = "",
    level=1e-3,
    remeasure: int = 0,
    remeasure_cells: int = 1,
    use_cache: bool = True,
    progress: bool = False,
) -> dict:
    """``iftomm.csv`` and ``iftomm.md`` in ``out`` (each written whole);
    with ``remeasure`` = k, the chosen cells' times measured again in one
    run, k interleaved solves each, over each formulation's
    ``remeasure_cells`` cheapest cells at ``level``, the one with the
    smallest median kept
    (:func:`eomcompare.compare.precision_remeasure.remeasure`)."""
    from .store import _atomic_write

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = iftomm_table(frame, level)
    info = None
    if remeasure and not table.empty:
        from .precision_remeasure import candidate_cells
        from .precision_remeasure import remeasure as measure_again

        table, info = measure_again(
            table,
            remeasure,
            candidates=candidate_cells(frame, table, level, remeasure_cells),
            use_cache=use_cache,
            progress=progress,
        )
    csv = out / "iftomm.csv"
    md = out / "iftomm.md"
    _atomic_write(csv, table.to_csv(index=False).encode())
    if info is None:
        how = (
            "CPU seconds of this process (processor time, the fastest of "
            "`cpu_s_k` timed solves, their median beside it: the spread of a "
            "shared 2-core machine's noise), from sweeps that may have run "
            "under different loads; `best` is the fastest."
        )
    else:
        from .precision_remeasure import describe

        how = describe(info)
    lines = [
        "# IFToMM benchmark problems: CPU time at the high accuracy level",
        "",
        f"Generated by `{command}`." if command else "",
        "",
        f"Each formulation's cheapest solve whose error (the problem's error "
        f"measure: largest absolute error of its reference quantities over "
        f"its output steps, against a reference at tolerance 1e-12) is at or "
        f"below {level:g}, over the integrators and constraint treatments "
        f"swept; `t_final` the simulated seconds.  {how}  "
        f"OpenSim 3.2's published times ({OPENSIM_MACHINE}) beside the best "
        f"formulation of the variant the port ran (A02: N = 2 over 10 s); "
        f"`opensim_over_best` > 1 means faster than OpenSim.  A row without "
        f"a time says what stopped each curve.",
        "",
    ]
    if table.empty:
        lines.append("No IFToMM problem in this sweep.")
    else:
        lines.append(_markdown(_shown(table)))
    _atomic_write(md, ("\n".join(lines) + "\n").encode())
    return {"csv": csv, "markdown": md}


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    """The IFToMM table as the Markdown shows it: numbers to three digits,
    a re-measured time as its median and interquartile range."""

    def g(v):
        return "—" if not _finite(v) else f"{float(v):.3g}"

    shown = table.copy()
    shown["t_final"] = shown["t_final"].map(
        lambda v: "—" if not _finite(v) else f"{float(v):g}"
    )
    if "cpu_s_q1" in shown:
        shown["cpu_s_median"] = shown["cpu_s_median"].map(g)
        shown.insert(
            shown.columns.get_loc("cpu_s_median") + 1,
            "IQR (q1-q3)",
            [
                f"{g(q3 - q1)} ({g(q1)}-{g(q3)})" if _finite(q3 - q1) else "—"
                for q1, q3 in zip(table["cpu_s_q1"], table["cpu_s_q3"])
            ],
        )
        shown = shown.drop(columns=["cpu_s_q1", "cpu_s_q3", "output_steps"])
        shown["cpu_s_k"] = shown["cpu_s_k"].map(
            lambda v: "—" if not _finite(v) else f"{int(v)}"
        )
        for c in ("nfev", "nfev_remeasured"):
            shown[c] = shown[c].map(lambda v: "—" if not _finite(v) else f"{int(v)}")
    else:
        shown = shown.drop(columns=["output_steps", "nfev"])
        shown["cpu_s_k"] = shown["cpu_s_k"].map(g)
    for c in (
        "cpu_s",
        "sweep_cpu_s",
        "cpu_s_median",
        "tolerance",
        "error",
        "opensim_cpu_s",
        "opensim_over_best",
    ):
        if c in shown:
            shown[c] = shown[c].map(g)
    return shown


def _finite(v) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _markdown(frame: pd.DataFrame) -> str:
    """A pipe table (pandas' to_markdown needs tabulate)."""

    def cell(v):
        text = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
        return text.replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(cell(v) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])


def work_precision_figure(
    plt, frame: pd.DataFrame, system: str, path, levels=(), save=None
):
    """Error against CPU time, log-log, one curve per formulation,
    integrator and treatment; the accuracy ``levels`` as dashed lines.
    ``save(fig, path)`` writes the figure (the report's writer, at the
    report's resolution and palette); by default matplotlib's PNG."""
    rows = frame[(frame["system"] == system) & (frame["status"] == "ok")]
    rows = rows[rows["error"].notna() & (rows["cpu_s"] > 0)]
    if rows.empty:
        return None
    fig, ax = plt.subplots(figsize=(9.5, 5.0))
    formulations = sorted(rows["formulation"].unique())
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    markers = "os^vDP*X"
    integrators = sorted(rows["integrator"].unique())
    for (f, i, t), g in rows.groupby(["formulation", "integrator", "treatment"]):
        g = g.sort_values("tolerance", ascending=False)
        ax.loglog(
            g["cpu_s"],
            np.maximum(g["error"], 1e-17),
            marker=markers[integrators.index(i) % len(markers)],
            color=colours[formulations.index(f) % len(colours)],
            linestyle="-" if t == "projection" else "--",
            label=f"{f}, {i}" + ("" if t == "projection" else f", {t}"),
            markersize=4,
        )
    for lv in levels:
        ax.axhline(lv, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("CPU time of the solve (s, fastest of up to 3)")
    ax.set_ylabel("error (max abs over output steps)")
    treatments = sorted(rows["treatment"].unique())
    ax.set_title(f"work-precision: {system} ({', '.join(treatments)})")
    # Beside the axes: a full grid has two dozen curves, which a legend
    # inside would cover.
    ax.legend(
        fontsize=6 if len(ax.lines) > 12 else 7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    if save is not None:
        from .report_figures import _share_renderer

        # Its texts measured as the report's other figures' are (the
        # pixels are the same).
        _share_renderer(fig.canvas)
    fig.tight_layout()
    if save is not None:
        return save(fig, Path(path))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def report_section(rep, out: Path, *, plt=None, level=REPORT_ERROR_LEVEL, save=None):
    """The report's work-precision section from ``out/precision.csv``
    (written by ``python -m eomcompare precision --out`` into the run's
    directory, or by the default run's quick sweep)."""
    from .precision import read_precision

    path = Path(out) / "precision.csv"
    if not path.exists():
        rep.p(
            "Section not available: no precision.csv in this run's directory "
            "(python -m eomcompare precision --out DIR sweeps the tolerances)."
        )
        return
    frame = read_precision(path)
    t_final = sorted(set(frame["t_final"].dropna()))
    steps = sorted(set(frame["output_steps"].dropna().astype(int)))
    rep.p(
        f"Error against CPU time over {frame['tolerance'].nunique()} tolerances "
        f"(rtol = atol), one curve per formulation and integrator (dashed: "
        f"another constraint treatment than projection).  Error: the largest "
        f"absolute error of the problem's reference quantities (every "
        f"coordinate where the system has no benchmark facts) over "
        f"{', '.join(map(str, steps))} output steps of {', '.join(f'{t:g}' for t in t_final)} s, "
        f"against a reference integrated at 1e-12 by two formulations "
        f"(their agreement is the `reference_agreement` column of "
        f"precision.csv).  CPU time: processor seconds of the solve alone, "
        f"the fastest of up to three.  Costs below are read off the curves "
        f"at an error of {level:g}, never at equal tolerance: the cheapest "
        f"solve whose error is at or below it."
    )
    rep.table(
        cost_table(frame, level),
        caption=f"Solve cost at error {level:g}: cheapest curve and each "
        f"formulation's time as a multiple of it",
    )
    if plt is None:  # figures not drawn (not asked for, or no matplotlib)
        return
    fig_dir = Path(out) / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    for system in sorted(frame["system"].unique()):
        slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in system)
        target = fig_dir / f"precision_{slug}.png"
        rep.later_figure(
            lambda s=system, p=target: work_precision_figure(
                plt, frame, s, p, levels=(1e-1, 1e-3), save=save
            ),
            f"Work-precision diagram of {system} (dotted: the IFToMM levels 1e-1, 1e-3).",
        )


#: The IFToMM library's two accuracy levels (absolute, in the problem's
#: reference quantities' units): low and high.
SUMMARY_LEVELS = (1e-1, 1e-3)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(text))


def write_precision_summary(
    frame: pd.DataFrame,
    out,
    *,
    command: str = "",
    levels=SUMMARY_LEVELS,
    plt=None,
) -> dict:
    """``precision_costs.csv`` and ``precision.md`` in ``out``, and with
    ``plt`` (matplotlib's pyplot) one work-precision figure per system and
    constraint treatment in ``out/precision_figures``.

    The CSV has, per curve and level, :func:`cost_at_error`'s row (the
    cheapest solve at or below the level, or what stopped the curve); the
    Markdown, per system, each formulation's cheapest curve at each level
    (at equal accuracy, never at equal tolerance), the statuses of the
    sweep's rows and the figures' links."""
    from .store import _atomic_write

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    costs = pd.concat(
        [cost_at_error(frame, lv).assign(level=lv) for lv in levels],
        ignore_index=True,
    )
    csv = out / "precision_costs.csv"
    _atomic_write(csv, costs.to_csv(index=False).encode())
    figures = {}
    if plt is not None:
        fig_dir = out / "precision_figures"
        fig_dir.mkdir(parents=True, exist_ok=True)
        for (system, treatment), rows in frame.groupby(
            ["system", "treatment"], sort=True
        ):
            target = fig_dir / f"{_slug(system)}_{_slug(treatment)}.png"
            drawn = work_precision_figure(
                plt, rows, system, target, levels=levels, save=None
            )
            if drawn is not None:
                figures.setdefault(system, []).append((treatment, target))

    def fmt(v):
        return "—" if not np.isfinite(v) else f"{v:.3g}"

    lines = [
        "# Work-precision sweeps: solve cost at equal accuracy",
        "",
        f"Generated by `{command}`." if command else "",
        "",
        "Error: the largest absolute error of the problem's reference "
        "quantities (every coordinate where the system has no benchmark "
        "facts) over its output steps, against a reference integrated at "
        "1e-12 by two formulations.  CPU: processor seconds of the solve "
        "alone on a shared 2-core machine, the fastest of `k` timed solves "
        "with their median beside it.  Each formulation's cost at a level is "
        "its cheapest solve, over the integrators, treatments and "
        "tolerances swept, whose error is at or below that level (a "
        f"measured point, never interpolated); levels {', '.join(f'{v:g}' for v in levels)}.  "
        "Every curve's cost at each level, and what stopped the curves "
        "that never reach it: `precision_costs.csv`.",
        "",
    ]
    for system, sys_rows in frame.groupby("system", sort=True):
        lines += [f"## {system}", ""]
        meta = []
        for c, name in (("t_final", "s simulated"), ("output_steps", "output steps")):
            vals = sorted(set(sys_rows[c].dropna())) if c in sys_rows else []
            if vals:
                meta.append(f"{', '.join(f'{v:g}' for v in vals)} {name}")
        counts = sys_rows["status"].value_counts().to_dict()
        grid = (
            f"{sys_rows['formulation'].nunique()} formulations x "
            f"{sys_rows['integrator'].nunique()} integrators "
            f"({', '.join(sorted(sys_rows['integrator'].unique()))}) x "
            f"{sys_rows['treatment'].nunique()} treatments "
            f"({', '.join(sorted(sys_rows['treatment'].unique()))}) x "
            f"{sys_rows['tolerance'].nunique()} tolerances"
        )
        lines += [
            f"{grid}; {'; '.join(meta)}.  Rows: "
            + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
            + ".",
            "",
        ]
        table = []
        for f in sorted(sys_rows["formulation"].unique()):
            rec = {"formulation": f}
            for lv in levels:
                c = costs[
                    (costs["system"] == system)
                    & (costs["formulation"] == f)
                    & (costs["level"] == lv)
                ]
                r = c[c["status"] == "reached"]
                if len(r):
                    b = r.loc[r["cpu_s"].idxmin()]
                    rec[f"cpu_s at {lv:g} (median, k)"] = (
                        f"{fmt(b['cpu_s'])} ({fmt(b['cpu_s_median'])}, "
                        f"{int(b['cpu_s_k']) if np.isfinite(b['cpu_s_k']) else '—'})"
                    )
                    rec[f"how, at {lv:g}"] = (
                        f"{b['integrator']}, {b['treatment']}, tol "
                        f"{b['tolerance']:g}, error {b['error']:.2g}"
                    )
                else:
                    best = c["best_error"].min() if len(c) else float("nan")
                    rec[f"cpu_s at {lv:g} (median, k)"] = "not reached"
                    rec[f"how, at {lv:g}"] = f"best error {fmt(best)}"
            table.append(rec)
        lines += [_markdown(pd.DataFrame(table)), ""]
        for treatment, target in figures.get(system, []):
            rel = target.relative_to(out).as_posix()
            lines += [f"![{system}, {treatment}]({rel})", ""]
    md = out / "precision.md"
    _atomic_write(md, ("\n".join(lines) + "\n").encode())
    return {"csv": csv, "markdown": md, "figures": figures}
