"""Markdown and standalone HTML reports of a comparison run.

The report is built once as a sequence of blocks (headings, paragraphs,
tables, figures) and rendered twice: ``report.md`` links the PNG files in
``figures/``; ``report.html`` embeds the same PNGs as base64 data, so the
HTML file can be mailed or archived on its own.

Every section tolerates a partial run: a failed case has few columns, a
resumed run may lack trajectories, a column may be missing altogether.
Missing numbers are shown as an em dash, never as ``nan``.  An optional
section whose module is missing says "not available"; an exception while
computing one is a bug and fails the report instead of passing for an
absence.
"""

from __future__ import annotations

import html
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .findings import case_kinds, findings, kind_counts, refusals
from .report_blocks import (
    Figure,
    Later,
    Para,
    Raw,
    Report,
    Table,
    render_html,
    render_markdown,
)
from .report_figures import (
    bars_figure,
    deviation_figure,
    deviations,
    formulation_styles,
    pyplot,
    save_figure,
    scaling_figure,
    trajectory_figure,
)
from .summary import oracle_unavailable
from .tables import (
    SUMMARY_COLUMNS,
    TIMED_COLUMNS,
    _fmt,
    _prepared,
    _slug,
    cost_table,
    count_problems,
    overview_table,
    status_cells,
    timed_cells,
    timed_heading,
)

__all__ = [
    "write_report",
    "start_report",
    "PendingReport",
    "check_counts",
    "summary_columns",
    "ReportOutputError",
]

#: Names of the figures a report draws in ``figures/``; a report removes
#: those of an earlier report it did not draw again, and no other file.
_FIGURE_NAMES = (
    "cost.png",
    "trajectories_*.png",
    "deviation_*.png",
    "scaling_*.png",
    "precision_*.png",
)


def summary_columns() -> dict:
    """Frame columns of the per-system summary table and their headings.

    Examples
    --------
    >>> summary_columns()["derive_s"]
    'derive s'
    """
    return dict(SUMMARY_COLUMNS)


class ReportOutputError(OSError):
    """The report could not be written into its directory (a full disk, a
    file-size limit); the report written there before is left whole."""


def _oracle_overview(frame, reference):
    """(oracle name, label -> cell) for the overview: the oracle's q''
    deviation from the reference formulation, by the reference's row of
    each system; None when no row of the run has an oracle."""
    if "oracle_qdd_max_rel_dev" not in frame.columns:
        return None
    rows = frame[frame["oracle_qdd_max_rel_dev"].notna()]
    if rows.empty:
        return None
    name = rows["oracle"].iloc[0]
    ref = rows[rows["formulation"] == reference]
    return name, {
        lab: _fmt(d) for lab, d in zip(ref["label"], ref["oracle_qdd_max_rel_dev"])
    }


def _stage_table(frame: pd.DataFrame):
    """One row per case, one column per derivation stage (seconds)."""
    import json

    if "stage_s" not in frame.columns:
        return None
    rows = []
    for r in frame.itertuples():
        try:
            stages = json.loads(r.stage_s) if isinstance(r.stage_s, str) else {}
        except ValueError:
            stages = {}
        if isinstance(stages, dict) and stages:
            rows.append({"case": r.case, **stages})
    if not rows:
        return None
    table = pd.DataFrame(rows)
    # "total" last, the stages in the order the derivations report them.
    cols = ["case"] + [c for c in table.columns if c not in ("case", "total")]
    return table[cols + (["total"] if "total" in table.columns else [])]


# ----------------------------------------------------------------------
# Optional sections
# ----------------------------------------------------------------------
def _backend_note(frame: pd.DataFrame) -> str:
    """Which systems' right-hand sides were compiled (every formulation of
    a system is evaluated by one backend)."""
    if "backend" not in frame.columns:
        return ""
    by = frame.dropna(subset=["backend"]).groupby("label", sort=False)["backend"]
    compiled = [lab for lab, b in by if set(b) == {"c"}]
    if not compiled:
        return " Every right-hand side is lambdify's numpy code."
    return (
        " Right-hand sides in compiled C for "
        + ", ".join(compiled)
        + "; lambdify's numpy code for the others (one backend per system)."
    )


def _kolev_part(table) -> list:
    return [
        Para(
            "Kolev's modified Lagrange equations keep the kinetic energy "
            "T in all coordinates and eliminate the dependent ones after "
            "differentiating. Rows: 'modified' uses the declared explicit "
            "solutions of the constraints, 'modified_implicit' their "
            "derivatives from the implicit function theorem, "
            "'substituted' is Lagrange's equations in minimal "
            "coordinates with the solutions substituted into T before "
            "differentiating, 'multipliers' is Lagrange's equations with "
            f"one multiplier per constraint. Numbers {table.note}."
        ),
        Table(table.frame),
    ]


def _equations_part(rows, trajectories, reference, n_states):
    def make():
        from .equations_section import equations_section

        return [
            Raw(
                *equations_section(
                    rows, trajectories, reference=reference, n_states=n_states
                )
            )
        ]

    return make


# ----------------------------------------------------------------------
# Parts computed in parallel
# ----------------------------------------------------------------------
#: The parts of the report being built, read by the forked workers.
_PARTS: list = []


def _make_part(i: int):
    return _PARTS[i].make()


class _Parts:
    """The :class:`Later` parts of a report, being made.

    The parts (equations typeset, figures drawn, tables derived) are
    independent, so with several CPUs they are made in forked worker
    processes (:class:`~eomcompare.numeric.child.Workers`: no threads in
    this process, a worker's death an error, never a wait), the costliest
    first, from the moment this is made: :meth:`collect` waits for them.
    With one CPU (or no ``fork``) they are made by :meth:`collect` itself.
    :meth:`close` kills the workers (done by :meth:`collect` too, whatever
    happens there).
    """

    def __init__(self, rep: Report, jobs: int | None = None) -> None:
        global _PARTS
        import os

        self.parts = [b for b in rep.blocks if isinstance(b, Later)]
        self.pool = None
        jobs = min(jobs or os.cpu_count() or 1, len(self.parts))
        if jobs > 1 and hasattr(os, "fork"):
            from eomcompare.numeric.child import Workers, frozen_heap

            order = sorted(range(len(self.parts)), key=lambda i: -self.parts[i].cost)
            _PARTS = self.parts
            try:
                # The workers' collections leave the run's heap alone.
                with frozen_heap():
                    self.pool = Workers(_make_part, jobs)
                self._made = self.pool.map_unordered(order)
            except BaseException:
                self.close()
                raise

    def collect(self) -> list:
        """The blocks of each part, in the report's order."""
        if self.pool is None:
            return [part.make() for part in self.parts]
        made = {}
        try:
            for i, blocks in self._made:
                made[i] = blocks
        finally:
            self.close()
        return [made[i] for i in range(len(self.parts))]

    def close(self) -> None:
        global _PARTS
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        if _PARTS is self.parts:
            _PARTS = []


def _replace_parts(blocks: list, made: list) -> list:
    """``blocks`` with each :class:`Later` replaced by its blocks."""
    out, k = [], 0
    for b in blocks:
        if isinstance(b, Later):
            out.extend(made[k])
            k += 1
        else:
            out.append(b)
    return out


def _compute_parts(rep: Report, jobs: int | None = None) -> None:
    """Replace every :class:`Later` of ``rep`` by its blocks (made in
    parallel where there are several CPUs, see :class:`_Parts`)."""
    rep.blocks = _replace_parts(rep.blocks, _Parts(rep, jobs).collect())


# ----------------------------------------------------------------------
# The report
# ----------------------------------------------------------------------
def _build_report(result, out, *, tables, figures: bool = True):
    """The report's blocks, with the figures written to ``out/figures``.

    Rendered to markdown and HTML by :func:`write_report`.
    """
    rep, plt = _build_head(result, out, figures=figures)
    _build_tail(rep, tables=tables)
    return rep


def _build_head(result, out, *, figures: bool = True):
    """``(report, pyplot or None)``: the report's blocks up to the
    sections of the optional tables (:func:`_build_tail`): what needs only
    ``result`` and the run's precision sweep (``out/precision.csv``)."""
    out = Path(out)
    fig_dir = out / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    meta = dict(getattr(result, "metadata", {}) or {})
    options = dict(meta.get("options", {}) or {})
    from eomcompare.formulations import REFERENCE

    reference = options.get("reference", REFERENCE)
    threshold = options.get("threshold")
    frame = _prepared(result.frame)
    trajectories = getattr(result, "trajectories", {}) or {}
    formulations = list(
        dict.fromkeys(
            [reference] * (reference in set(frame["formulation"]))
            + sorted(frame["formulation"].unique())
        )
    )
    rep = Report(out)

    plt, styles, fig_note = None, {}, "Figures were not requested for this report."
    if figures:
        try:
            plt = pyplot()
            styles = formulation_styles(formulations)
            fig_note = None
        except ImportError as exc:
            fig_note = (
                f"Figures are not available: matplotlib cannot be imported ({exc})."
            )

    rep.h(1, "Comparison of equation-of-motion formulations")
    rep.p(
        f"{len(frame)} cases: "
        + kind_counts(frame)
        + f". Reference formulation: {reference}. Deviations are relative to "
        "the reference's largest magnitude (at least 1); the horizon of "
        "agreement is the first time the deviation of q or q' exceeds "
        f"{_fmt(threshold)}, the end of the run when it never does."
    )
    if fig_note:
        rep.p(fig_note)

    stated = findings(result.frame, meta)
    costs = cost_table(frame, formulations)
    if costs is not None:
        rep.h(2, "Cost per evaluation")
        rep.raw(*costs)
        if stated.growth:
            # The scaling beside the table, with what it assumes.
            note = (
                "Growth with n, fitted on this run's sizes of its scalable "
                "systems: the slope of a least-squares line through log "
                "value against log n, a power law assumed (the benchmark, "
                "python -m eomcompare bench, fits n up to 20 and tests the "
                "power law against an exponential)."
            )
            rep.raw(
                f"<p>{html.escape(note)}</p><ul>"
                + "".join(f"<li>{html.escape(g)}</li>" for g in stated.growth)
                + "</ul>",
                note + "\n\n" + "\n".join(f"- {g}" for g in stated.growth),
            )

    rep.h(2, "Findings")
    rep.raw(stated.html(), stated.markdown())

    # --- metadata -----------------------------------------------------
    rep.h(2, "Run")
    versions = meta.get("versions", {}) or {}
    machine = meta.get("machine", {}) or {}
    rows = [
        ("date (UTC)", meta.get("created", "—")),
        ("git commit", meta.get("git_commit") or "—"),
        ("versions", ", ".join(f"{k} {v}" for k, v in versions.items()) or "—"),
        ("machine", ", ".join(f"{k} {v}" for k, v in machine.items()) or "—"),
        ("options", ", ".join(f"{k}={v}" for k, v in options.items()) or "—"),
        ("calibration s", _fmt(meta.get("calibration_s"))),
        ("wall s", _fmt(meta.get("wall_s"))),
        ("cases resumed from disk", _fmt(meta.get("resumed_cases"))),
        ("report written", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
    ]
    rep.table(pd.DataFrame(rows, columns=["item", "value"]))

    # --- overview -----------------------------------------------------
    if len(frame):
        rep.h(2, "Overview")
        rep.p(
            "Largest relative deviation of q'' from the reference at random "
            "consistent states, or the status of a case that did not finish "
            "(— : not run)."
        )
        ov = overview_table(frame, formulations).set_index("system")
        oracle = _oracle_overview(frame, reference)
        if oracle is not None:
            name, cells = oracle
            rep.p(
                f"Oracle column: the q'' of {name}, an independent library "
                f"reading the same model, as deviation from {reference}; "
                f"each formulation's own deviation from {name} is in its "
                "system's table."
            )
            ov[f"{name} (oracle)"] = [cells.get(lab, "—") for lab in ov.index]
        rep.table(ov.reset_index())

    # --- failures -----------------------------------------------------
    # One vocabulary (compare.findings.case_kind) for the header, the
    # Findings and this section: each case is counted once, as one kind.
    kinds = case_kinds(frame)
    rep.h(2, "Failures")
    rep.p(f"{kind_counts(frame)}.")
    failed = frame[kinds == "failed"]
    if failed.empty:
        rep.p("No case failed.")
    else:
        rep.p(f"Failed ({len(failed)}):")
        rep.table(failed[["case", "status", "error"]])
    limited = frame[kinds == "peer limitation"]
    if not limited.empty:
        rep.p(
            f"Peer limitations ({len(limited)}; not failures: a peer library "
            "cannot do what the project's formulations do):"
        )
        rep.table(limited[["case", "status", "error"]])
    refused = frame[kinds == "refused"]
    if not refused.empty:
        rep.p(
            f"Refused ({len(refused)}; a formulation declines the system, "
            "with its reason):"
        )
        rep.table(refused[["case", "status", "error"]])

    # --- per system ---------------------------------------------------
    rep.h(2, "Systems")
    for system in dict.fromkeys(frame["system"]):
        rep.h(3, system)
        for label in dict.fromkeys(frame.loc[frame["system"] == system, "label"]):
            sub = frame[frame["label"] == label]
            if label != system:
                rep.h(4, label)
            table = sub[list(SUMMARY_COLUMNS)].assign(status=status_cells(sub))
            # Times as compared: median, interquartile range, repetitions.
            headings = dict(SUMMARY_COLUMNS)
            for col in TIMED_COLUMNS:
                if col in table.columns:
                    table[col] = timed_cells(sub, col)
                    headings[col] = timed_heading(headings[col])
            table = table.rename(columns=headings)
            if (
                "oracle_qdd_max_rel_dev" in sub.columns
                and sub["oracle_qdd_max_rel_dev"].notna().any()
            ):
                name = sub["oracle"].dropna().iloc[0]
                table.insert(
                    list(SUMMARY_COLUMNS).index("qdd_max_rel_dev") + 1,
                    f"q'' rel. dev. from {name}",
                    sub["oracle_qdd_max_rel_dev"].to_numpy(),
                )
            rep.table(table, caption=label)
            for why in oracle_unavailable(sub).values():
                rep.p(f"oracle: unavailable ({why})")
            errs = sub[(sub["error"] != "") & (sub["status"] != "unsupported")]
            for r, cell in zip(errs.itertuples(), status_cells(errs)):
                rep.p(f"{r.formulation}: {cell}: {r.error}")
            # Refusals once per reason: "Lagrange family: unsupported (...)"
            # where the whole family declines the system alike.
            for who, names, reason in refusals(sub):
                members = f" ({', '.join(names)})" if who != ", ".join(names) else ""
                rep.p(f"{who}{members}: unsupported ({reason})")
            rep.h(5, f"Equations of {label}")
            rows_ = list(sub.itertuples())
            rep.later(
                _equations_part(
                    rows_, trajectories, reference, int(options.get("n_states", 20))
                ),
                cost=2.0
                + float(np.nansum(pd.to_numeric(sub["ops_raw"], errors="coerce")))
                / 2000,
            )
            if plt is None:
                continue
            slug = _slug(label)
            rep.later_figure(
                lambda rows_=rows_, label=label, slug=slug: trajectory_figure(
                    plt,
                    label,
                    rows_,
                    trajectories,
                    reference,
                    styles,
                    fig_dir / f"trajectories_{slug}.png",
                ),
                f"{label}: coordinates of every formulation, overlaid "
                "(the three that move most).",
            )
            rep.later_figure(
                lambda rows_=rows_, label=label, slug=slug: deviation_figure(
                    plt,
                    label,
                    deviations(rows_, trajectories, reference, threshold or 0.0),
                    reference,
                    threshold,
                    styles,
                    fig_dir / f"deviation_{slug}.png",
                ),
                f"{label}: relative deviation of q and q' from {reference} "
                "against time.",
            )

    # --- cost ---------------------------------------------------------
    rep.h(2, "Cost")
    if plt is not None:

        def cost_part():
            path = bars_figure(plt, frame, formulations, styles, fig_dir / "cost.png")
            if not path:
                return [Para("No successful case to chart.")]
            return [
                Figure(
                    path,
                    "Operation counts (raw and after "
                    "common-subexpression elimination), derivation "
                    "seconds and right-hand-side microseconds per "
                    "formulation, each time the median of its "
                    "measurements with a line as wide as their "
                    "interquartile range; where the run has both backends, a "
                    "system marked (C) had its right-hand sides compiled."
                    + _backend_note(frame),
                )
            ]

        rep.later(cost_part, cost=3.0)
    stages = _stage_table(frame)
    if stages is not None:
        rep.p("Derivation seconds by stage (as timed by each formulation).")
        rep.table(stages)
    from eomcompare.systems import CATALOGUE, system_facts

    scal = [
        s for s in CATALOGUE if system_facts(s).scalable and s in set(frame["system"])
    ]
    rep.h(2, "Scaling with n")
    if plt is not None:

        def scaling_part():
            blocks = []
            for system in scal:
                path = scaling_figure(
                    plt,
                    frame,
                    system,
                    formulations,
                    styles,
                    fig_dir / f"scaling_{_slug(system)}.png",
                )
                if path:
                    blocks.append(
                        Figure(
                            path,
                            f"{system}: operations after cse, "
                            "raw operations and derivation "
                            "seconds against n (log-log).",
                        )
                    )
            return blocks or [
                Para(
                    "Not drawn: the run has no n-link system with two or more "
                    "sizes (use --n 2 3 5)."
                )
            ]

        rep.later(scaling_part, cost=1.0 + len(scal))

    # --- optional sections --------------------------------------------
    rep.h(2, "Work-precision: solve cost at equal accuracy")
    try:
        from .precision_figures import report_section
    except ImportError as exc:
        rep.p(f"Section not available: compare.precision_figures ({exc}).")
    else:
        report_section(rep, out, plt=plt, save=save_figure)
    return rep, plt


def _build_tail(rep, *, tables) -> None:
    """The report's sections of the benchmarks' and Kolev's ``tables``,
    appended to ``rep``."""
    rep.h(2, "Benchmarks: published against computed")
    table = tables.get("benchmarks")
    if table is None:
        rep.p(
            "Section not computed for this run (`--benchmarks` computes it: "
            "long on an empty cache)."
        )
    else:
        rep.p(f"Table {table.note}.")
        # Published numbers carry many digits; three would hide a misfit.
        rep.table(table.frame.reset_index(drop=True), digits=None)
    rep.h(2, "Kolev's motivation: cost of eliminating dependent coordinates")
    table = tables.get("kolev")
    if table is None:
        rep.p("Section not computed for this run (`compare report` computes it).")
    else:
        rep.blocks.extend(_kolev_part(table))


def check_counts(result, out) -> None:
    """Raise ``ValueError`` naming ``out``'s results.csv and its first cell
    that should hold a count and does not (:func:`count_problems`): a saved
    run is refused before anything is computed or drawn from it."""
    problems = count_problems(result.frame)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ValueError(f"{Path(out) / 'results.csv'}: {problems[0]}{more}")


def write_report(result, out, *, tables=None, figures: bool = True) -> dict:
    """Write ``report.md``, a standalone ``report.html`` and ``figures/``.

    Parameters
    ----------
    result : compare.store.ComparisonResult
        A run, fresh or read back with :func:`eomcompare.compare.store.load`.
    out : str or Path
        Directory of the report (usually the run's own directory).
    tables : mapping of str to SectionTable, optional
        The optional sections' tables (:mod:`eomcompare.compare.sections`:
        ``"benchmarks"``, ``"kolev"``); by default those kept beside the run
        in ``out/sections``.  The report renders them and derives nothing;
        a section without its table says it was not computed.
    figures : bool
        Draw the figures (matplotlib); without them the report is text and
        tables only.

    Returns
    -------
    dict
        ``{"markdown": Path, "html": Path}``.

    Raises
    ------
    ValueError
        When a count column (operations, equations) of ``result`` holds
        something other than a count.
    ReportOutputError
        When ``out`` cannot be written; each file is written whole or not
        at all, so the report there before stays readable.

    Examples
    --------
    Without its figures, a report of a short run is written at once:

    >>> import tempfile
    >>> from eomcompare.compare import run
    >>> from eomcompare.compare.report import write_report
    >>> res = run(["double_pendulum"], ["kane", "sympy_kane"], t_final=0.5,
    ...           jobs=1, progress=False, use_cache=False)
    >>> out = tempfile.mkdtemp()
    >>> paths = write_report(res, out, figures=False)
    >>> sorted(paths)
    ['html', 'markdown']
    """
    if tables is not None:
        _check_tables(tables)
    with start_report(result, out, figures=figures) as pending:
        return pending.finish(tables)


def _check_result(result, out: Path) -> None:
    if not hasattr(result, "frame") or not isinstance(result.frame, pd.DataFrame):
        raise TypeError(
            "result must be a ComparisonResult (with a pandas .frame), "
            f"not {type(result).__name__}"
        )
    check_counts(result, out)


def _check_tables(tables) -> None:
    from .sections import SECTIONS, SectionTable

    for name, table in tables.items():
        if name not in SECTIONS or not isinstance(table, SectionTable):
            raise TypeError(
                f"tables must map a section name ({', '.join(SECTIONS)}) to a "
                f"SectionTable, not {name!r}: {type(table).__name__}"
            )


def _output_error(exc: OSError, out: Path) -> ReportOutputError:
    return ReportOutputError(
        exc.errno,
        f"cannot write the report in {out}: {exc.strerror or exc}; "
        f"the report there before, if any, is kept",
    )


def start_report(result, out, *, figures: bool = True, jobs: int | None = None):
    """Begin the report of ``result`` in ``out``: the parts that need only
    the run and its precision sweep (each system's equations and figures,
    the cost, scaling and work-precision figures) are made in worker
    processes from now on, while the caller does other work (the main
    job: waits for the sections' tables).
    :meth:`PendingReport.finish` adds the optional sections and writes the
    files, as :func:`write_report` does; :meth:`PendingReport.close` (or
    leaving the ``with`` block) stops the workers of a report not
    finished."""
    return PendingReport(result, out, figures=figures, jobs=jobs)


class PendingReport:
    """A report begun by :func:`start_report`."""

    def __init__(self, result, out, *, figures: bool = True, jobs=None) -> None:
        self.out = Path(out)
        _check_result(result, self.out)
        try:
            self.rep, _ = _build_head(result, self.out, figures=figures)
        except OSError as exc:
            raise _output_error(exc, self.out) from exc
        self._head = len(self.rep.blocks)
        self._parts = _Parts(self.rep, jobs)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers (nothing to do once finished)."""
        self._parts.close()

    def finish(self, tables=None) -> dict:
        """Add the optional sections and write ``report.md``,
        ``report.html`` and the figures; ``tables`` as for
        :func:`write_report`."""
        from .sections import load_sections
        from .store import _atomic_write

        out, rep = self.out, self.rep
        if tables is None:
            tables = load_sections(out)
        _check_tables(tables)
        md, page = out / "report.md", out / "report.html"
        try:
            try:
                _build_tail(rep, tables=tables)
                # Any parts of the tables' sections are made here (their
                # tables are ready-made: none so far).
                tail = _replace_parts(
                    rep.blocks[self._head :],
                    _Parts(Report(out, rep.blocks[self._head :]), 1).collect(),
                )
                rep.blocks = (
                    _replace_parts(rep.blocks[: self._head], self._parts.collect())
                    + tail
                )
            finally:
                self.close()
            # The page, which embeds the figures, is the larger: when the disk
            # fills, it fills there, and the markdown before stays too.
            _atomic_write(page, render_html(rep).encode("utf-8"))
            _atomic_write(md, render_markdown(rep).encode("utf-8"))
        except OSError as exc:
            raise _output_error(exc, out) from exc
        # Figures of an earlier report that this one did not draw (systems no
        # longer in the run) must not linger; other files in figures/ stay.
        drawn = {b.path.resolve() for b in rep.blocks if isinstance(b, Figure)}
        for pattern in _FIGURE_NAMES:
            for old in (out / "figures").glob(pattern):
                if old.resolve() not in drawn:
                    old.unlink(missing_ok=True)
        return {"markdown": md, "html": page}
