"""The IFToMM table's times measured again, every chosen cell in one run
(``python -m eomcompare precision --no-run --table DIR --remeasure K``).

The table (:func:`eomcompare.compare.precision_figures.iftomm_table`)
chooses each formulation's cheapest solve at the high accuracy level from
sweeps that may have run hours apart under different loads, so the times
of two formulations it puts side by side need not have been measured
under the same conditions.  :func:`remeasure` solves each chosen cell (a
problem, a formulation, an integrator, a constraint treatment and a
tolerance) again: one untimed solve of every cell first (which also checks
that it makes the sweep's number of right-hand-side evaluations: the same
computation), then ``k`` rounds, each solving every cell once in turn, so
that a change of the machine's load during the run falls on every cell
alike.  Each cell's processor times give its median and interquartile
range.  The cell a sweep found cheapest may have been timed under a
heavier load than the next cheapest (on A01 the same odeint solve was
timed 0.31 s in one sweep and 0.56 s in another): with
:func:`candidate_cells` each formulation's few cheapest cells are timed
together and the one with the smallest median of this run is kept.
:func:`rank_within_spread` names a problem's best formulation only
where its median is below every other's by more than the spread
(:func:`eomcompare.compare.timing.tied_with_best`), and calls it a tie
otherwise.

The solves are timed without the sweep's processor-time cap (a wrapper of
the right-hand side that reads the clock every 64 evaluations): the
solve a user of the formulation runs.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .precision import COLUMNS
from .timing import MIN_SAMPLES, Spread, tied_with_best

__all__ = [
    "Remeasured",
    "CELL",
    "candidate_cells",
    "cell_solver",
    "round_robin",
    "remeasure",
    "rank_within_spread",
    "describe",
]


@dataclass(frozen=True)
class Remeasured:
    """What a re-measuring run says about itself: ``k`` timed solves per
    cell, the load averages (1, 5 and 15 minutes, ``os.getloadavg``)
    before and after them, the processors the machine has, and the
    processor seconds the whole run took."""

    k: int
    cells: int
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    cpus: int
    cpu_s: float
    #: Cells timed per formulation and problem (its cheapest by the sweeps).
    per_row: int = 1


def _loadavg() -> tuple[float, float, float]:
    try:
        return tuple(float(x) for x in os.getloadavg())  # type: ignore[return-value]
    except OSError:  # pragma: no cover - not on this platform
        return (float("nan"),) * 3


def _split_label(label: str) -> tuple[str, tuple]:
    """``"n_four_bar[n=2]"`` -> ``("n_four_bar", (("n", 2),))``."""
    from .variants import variant_options

    system, _, rest = str(label).partition("[")
    if not rest:
        return system, ()
    return system, tuple(variant_options(rest.removesuffix("]")).items())


def cell_solver(
    row: Mapping,
    *,
    use_cache: bool = True,
    cache_dir: str | None = None,
    clock: Callable[[], float] = time.process_time,
) -> Callable[[], tuple[float, int]]:
    """A function solving one of the table's cells as the sweep solved it
    (its system variant, formulation, integrator, treatment, tolerance,
    horizon, output steps and numeric backend, from ``row``) and returning
    ``(processor seconds, right-hand-side evaluations)``; ``RuntimeError``
    when the solve fails."""
    from .precision import PrecisionSettings
    from .precision_problems import _model, output_grid, solve_cell

    system, options = _split_label(row["system"])
    backend = row.get("backend")
    settings = PrecisionSettings(
        t_final=float(row["t_final"]),
        output_steps=int(row["output_steps"]),
        backend=backend if isinstance(backend, str) and backend else "sized",
        use_cache=use_cache,
        cache_dir=cache_dir,
    )
    ms, model = _model(system, options, row["formulation"], settings, row["treatment"])
    t0, q0, qd0 = ms.states.consistent_initial_state()
    t_final = float(row["t_final"])
    grid = output_grid(t0, t_final, int(row["output_steps"]))
    integrator, treatment = row["integrator"], row["treatment"]
    tol = float(row["tolerance"])

    def solve() -> tuple[float, int]:
        with np.errstate(all="ignore"):
            start = clock()
            res = solve_cell(
                model, integrator, treatment, tol, t0 + t_final, grid, (t0, q0, qd0)
            )
            took = clock() - start
        if not res.success or len(res.t) != len(grid):
            raise RuntimeError(f"the solve failed: {res.message}")
        return took, int(res.nfev)

    return solve


def round_robin(
    solvers: Mapping[Hashable, Callable[[], tuple[float, int]]],
    k: int,
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict, dict, dict]:
    """Each solver once untimed, then ``k`` rounds of each once in turn.

    Returns ``(times, nfev, failed)``: per key its ``k`` times, the
    evaluations of its untimed solve, and the error of a solver that
    raised (left out of the rounds from then on)."""
    nfev: dict = {}
    failed: dict = {}
    times: dict = {key: [] for key in solvers}
    for key, solve in solvers.items():
        try:
            nfev[key] = solve()[1]
        except Exception as exc:
            failed[key] = f"{type(exc).__name__}: {exc}"
    for i in range(k):
        for key, solve in solvers.items():
            if key in failed:
                continue
            try:
                times[key].append(solve()[0])
            except Exception as exc:
                failed[key] = f"{type(exc).__name__}: {exc}"
        if progress is not None:
            progress(i + 1)
    return times, nfev, failed


#: A cell's columns, as the IFToMM table and a sweep's rows give them: the
#: first eight of ``precision.csv``'s schema, then where the cell ends and
#: how it was evaluated.
CELL = COLUMNS[:8] + ("t_final", "output_steps", "backend")


def candidate_cells(
    frame: pd.DataFrame, table: pd.DataFrame, level: float, n: int
) -> pd.DataFrame:
    """Per reached row of the IFToMM ``table``: the ``n`` cheapest solves
    (by the sweeps' ``cpu_s``) of ``frame`` of its system variant,
    formulation and horizon whose error is at or below ``level``, over
    every integrator, treatment and tolerance swept (the row's own cell
    first among them)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, not {n!r}")
    ok = frame[(frame["status"] == "ok") & (frame["error"] <= level)]
    picked = []
    for _, r in table[table["outcome"] == "reached"].iterrows():
        rows = ok[
            (ok["system"] == r["system"]) & (ok["formulation"] == r["formulation"])
        ]
        if "t_final" in rows and _finite(r["t_final"]):
            rows = rows[rows["t_final"] == r["t_final"]]
        picked.append(rows.sort_values("cpu_s", kind="stable").head(n))
    if not picked:
        return pd.DataFrame(columns=list(CELL))
    cells = pd.concat(picked, ignore_index=True)
    for c in CELL:
        if c not in cells:
            cells[c] = np.nan
    return cells[list(CELL)]


def remeasure(
    table: pd.DataFrame,
    k: int,
    *,
    candidates: pd.DataFrame | None = None,
    use_cache: bool = True,
    cache_dir: str | None = None,
    clock: Callable[[], float] = time.process_time,
    progress: bool = False,
) -> tuple[pd.DataFrame, Remeasured]:
    """The IFToMM ``table`` with its reached cells timed again in one run.

    The cells are each reached row's own (integrator, treatment,
    tolerance) or, with ``candidates`` (:func:`candidate_cells`), every
    cell listed there for its system and formulation.  Each is solved once
    untimed and then ``k`` times, round-robin over all of them; a row
    keeps the cell with the smallest median of this run.  The sweep's
    fastest time of that cell becomes ``sweep_cpu_s``; ``cpu_s_median``,
    ``cpu_s_q1``, ``cpu_s_q3`` (numpy's linear quartiles) and ``cpu_s_k``
    are this run's; ``cells_timed`` counts the row's cells timed;
    ``nfev_remeasured`` is the untimed solve's count of right-hand-side
    evaluations (the sweep's ``nfev`` where the same computation ran);
    ``remeasure_note`` says why a row has no time or where the counts
    differ.  ``best`` and ``opensim_over_best`` are then set by
    :func:`rank_within_spread`."""
    if isinstance(k, bool) or not isinstance(k, int) or k < MIN_SAMPLES:
        raise ValueError(
            f"k must be an integer of at least {MIN_SAMPLES} (an interquartile "
            f"range needs them), not {k!r}"
        )
    out = table.copy().rename(columns={"cpu_s": "sweep_cpu_s"})
    for c in ("cpu_s_median", "cpu_s_q1", "cpu_s_q3", "cpu_s_k", "nfev_remeasured"):
        out[c] = np.nan
    # The quartiles beside the median.
    cols = [c for c in out.columns if c not in ("cpu_s_q1", "cpu_s_q3")]
    at = cols.index("cpu_s_median") + 1
    out = out[cols[:at] + ["cpu_s_q1", "cpu_s_q3"] + cols[at:]]
    out["cells_timed"] = 0
    out["remeasure_note"] = ""
    reached = out[out["outcome"] == "reached"]
    if candidates is None:
        cells = reached.rename(columns={"sweep_cpu_s": "cpu_s"})[list(CELL)]
        cells = cells.reset_index(drop=True)
    else:
        cells = candidates.reset_index(drop=True)
    started = time.process_time()
    solvers = {}
    broken = {}
    for j, cell in cells.iterrows():
        try:
            solvers[j] = cell_solver(
                cell, use_cache=use_cache, cache_dir=cache_dir, clock=clock
            )
        except Exception as exc:
            broken[j] = f"not built: {type(exc).__name__}: {exc}"
    bar = None
    if progress:
        from .runner import progress_bar

        bar = progress_bar(total=k, desc="remeasure", unit="round")
    load_before = _loadavg()
    try:
        times, nfev, failed = round_robin(
            solvers, k, progress=(lambda _: bar.update()) if bar else None
        )
    finally:
        if bar is not None:
            bar.close()
    load_after = _loadavg()
    failed |= broken
    for i, r in reached.iterrows():
        mine = cells.index[
            (cells["system"] == r["system"])
            & (cells["formulation"] == r["formulation"])
        ]
        out.loc[i, "cells_timed"] = len(mine)
        timed = [j for j in mine if j in times and len(times[j]) == k]
        if not timed:
            why = [failed[j] for j in mine if j in failed]
            out.loc[i, "remeasure_note"] = "; ".join(why) or "no cell timed"
            continue
        j = min(timed, key=lambda j: (float(np.median(times[j])), j))
        cell = cells.loc[j]
        for c in ("integrator", "treatment", "tolerance", "error", "nfev", "backend"):
            out.loc[i, c] = cell[c]
        out.loc[i, "sweep_cpu_s"] = cell["cpu_s"]
        xs = times[j]
        q1, q3 = np.percentile(xs, [25, 75])
        out.loc[i, ["cpu_s_median", "cpu_s_q1", "cpu_s_q3", "cpu_s_k"]] = [
            float(np.median(xs)),
            float(q1),
            float(q3),
            k,
        ]
        out.loc[i, "nfev_remeasured"] = nfev[j]
        if _finite(cell["nfev"]) and nfev[j] != int(cell["nfev"]):
            out.loc[i, "remeasure_note"] = (
                f"{nfev[j]} evaluations against the sweep's {int(cell['nfev'])}"
            )
    info = Remeasured(
        k=k,
        cells=len(solvers),
        load_before=load_before,
        load_after=load_after,
        cpus=os.cpu_count() or 1,
        cpu_s=time.process_time() - started,
        per_row=int(out["cells_timed"].max()) if len(out) else 0,
    )
    return rank_within_spread(out), info


def _finite(x) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def rank_within_spread(table: pd.DataFrame) -> pd.DataFrame:
    """``best`` of each system variant's rows by the project's tie rule
    (:func:`eomcompare.compare.timing.tied_with_best` on ``cpu_s_median``
    and the interquartile range ``cpu_s_q3 - cpu_s_q1``): ``yes`` for a
    formulation faster than every other beyond the larger spread, ``tie``
    for each formulation within the spread of the fastest median, ``no``
    for the rest; ``opensim_over_best`` is OpenSim's published time over
    the median of the ``yes`` or each ``tie`` row."""
    out = table.copy()
    out["best"] = "no"
    out["opensim_over_best"] = np.nan
    for _, rows in out.groupby("system", sort=False):
        times = {}
        for i, r in rows.iterrows():
            if not _finite(r["cpu_s_median"]):
                continue
            iqr = float(r["cpu_s_q3"]) - float(r["cpu_s_q1"])
            k = int(r["cpu_s_k"]) if _finite(r["cpu_s_k"]) else 1
            times[i] = Spread(
                float(r["cpu_s_median"]), iqr if k >= MIN_SAMPLES else math.nan, k
            )
        tied = tied_with_best(times)
        mark = "yes" if len(tied) == 1 else "tie"
        for i in tied:
            out.loc[i, "best"] = mark
            opensim = out.loc[i, "opensim_cpu_s"]
            if _finite(opensim):
                out.loc[i, "opensim_over_best"] = float(opensim) / times[i].median
    return out


def describe(info: Remeasured) -> str:
    """The Markdown paragraph saying how the times were measured."""

    def load(xs):
        return ", ".join(f"{x:.2f}" for x in xs)

    cells = (
        "chosen cell" if info.per_row <= 1 else f"cheapest cells, up to {info.per_row},"
    )

    return (
        f"Times measured again in one run: {info.cells} cells (per problem "
        f"and formulation its {cells} at the level by the sweeps' times, "
        f"`cells_timed`: an integrator, a treatment and a tolerance each), "
        f"each solved once untimed and then {info.k} times, round-robin "
        f"over the cells, so that the machine's load falls on all alike; "
        f"each row shows its cell with the smallest median of this run.  "
        f"Processor seconds of the solve (without the sweep's time cap), "
        f"`cpu_s_median` and the interquartile range `cpu_s_q1`-`cpu_s_q3` "
        f"of the {info.k}; `sweep_cpu_s` is the sweep's fastest of that "
        f"cell; `nfev_remeasured` the right-hand-side evaluations of the "
        f"untimed solve (the sweep's `nfev`: the same computation).  `best`: `yes` "
        f"where a formulation's median is below every other's by more than "
        f"the larger interquartile range of the two, `tie` for each "
        f"formulation within that spread of the fastest.  Load average (1, "
        f"5, 15 min) before {load(info.load_before)}, after "
        f"{load(info.load_after)}, on {info.cpus} processors; the run took "
        f"{info.cpu_s:.1f} processor seconds."
    )
