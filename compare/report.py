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

import base64
import html
import io
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from eomcompare.symbolic.text import display_name

from .findings import case_kinds, findings, kind_counts, refusals
from .summary import oracle_unavailable
from .tables import (
    SUMMARY_COLUMNS,
    TIMED_COLUMNS,
    _fmt,
    _html_table,
    _md_table,
    _prepared,
    _slug,
    cost_table,
    count_problems,
    overview_table,
    status_cells,
    timed_cells,
    timed_heading,
)
from .variants import variant_options

__all__ = ["write_report", "summary_columns", "ReportOutputError"]

#: Names of the figures a report draws in ``figures/``; a report removes
#: those of an earlier report it did not draw again, and no other file.
_FIGURE_NAMES = (
    "cost.png",
    "trajectories_*.png",
    "deviation_*.png",
    "scaling_*.png",
    "precision_*.png",
)

#: Systems whose builder takes ``n`` (scaling figures).
#: Deviations are drawn no lower than this on log axes (exact zeros).
_DEV_FLOOR = 1e-17


def summary_columns() -> dict:
    """Frame columns of the per-system summary table and their headings.

    Examples
    --------
    >>> summary_columns()["derive_s"]
    'derive s'
    """
    return dict(SUMMARY_COLUMNS)


# ----------------------------------------------------------------------
# Blocks
# ----------------------------------------------------------------------
@dataclass
class _Heading:
    level: int
    text: str


@dataclass
class _Para:
    text: str


@dataclass
class _Table:
    frame: pd.DataFrame
    caption: str = ""
    digits: int = 3


@dataclass
class _Figure:
    path: Path
    caption: str


@dataclass
class _Raw:
    """Ready-made fragments: one for the HTML, one for the Markdown."""

    html: str
    markdown: str


class ReportOutputError(OSError):
    """The report could not be written into its directory (a full disk, a
    file-size limit); the report written there before is left whole."""


@dataclass
class _Later:
    """A part computed after the report's outline, maybe in another
    process: ``make()`` returns the blocks that take its place."""

    make: object
    cost: float = 1.0


@dataclass
class _Report:
    out: Path
    blocks: list = field(default_factory=list)

    def later(self, make, cost: float = 1.0):
        self.blocks.append(_Later(make, cost))

    def later_figure(self, draw, caption):
        """A figure drawn later: ``draw()`` returns its path or None."""

        def make():
            path = draw()
            return [_Figure(Path(path), caption)] if path is not None else []

        self.later(make)

    def h(self, level, text):
        self.blocks.append(_Heading(level, text))

    def p(self, text):
        self.blocks.append(_Para(text))

    def table(self, frame, caption="", digits=3):
        self.blocks.append(_Table(frame, caption, digits))

    def raw(self, html_text, markdown_text):
        self.blocks.append(_Raw(html_text, markdown_text))

    def figure(self, path, caption):
        if path is not None:
            self.blocks.append(_Figure(Path(path), caption))


def _n_of(variant: str):
    n = variant_options(variant).get("n")
    return n if isinstance(n, int) else None


def _coordinate_names(rows, count: int) -> list[str]:
    """The coordinate names a case of the run stored (``coordinates``, a
    JSON list); from the declaration for a run that did not store them;
    ``q[i]`` when neither gives ``count`` names."""
    import json

    for r in rows:
        try:
            names = json.loads(getattr(r, "coordinates", None) or "null")
        except (TypeError, ValueError):
            continue
        if isinstance(names, list) and len(names) == count:
            return [str(n) for n in names]
    try:
        from .prepared import declaration_for_report

        names = [
            display_name(c)
            for c in declaration_for_report(
                rows[0].system, variant_options(rows[0].variant)
            ).coordinates
        ]
        if len(names) == count:
            return names
    except Exception:  # names are a nicety; the figure does not need them
        pass
    return [f"q[{i}]" for i in range(count)]


# ----------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------
_STYLES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 3))]
_MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    # A title at a fixed height spares matplotlib measuring every tick
    # label to place it, the costliest part of drawing a small figure.
    plt.rcParams.update(
        {
            "font.size": 9,
            "axes.titlesize": 10,
            "axes.titley": 1.0,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "legend.fontsize": 8,
        }
    )
    return plt


#: Width of the report's text column in CSS pixels, and the resolution of
#: its figures: no figure is wider than the page, so none is shrunk to fit
#: (a shrunk figure's labels are illegible).
PAGE_PX = 1200
_DPI = 110
#: The widest figure in inches.
_MAX_WIDTH_IN = PAGE_PX / _DPI
#: Colours of a figure's palette: line charts need few, and an indexed PNG
#: is about a quarter of a true-colour one (the report embeds every figure).
_PALETTE = 64

#: Margins of every figure in inches: (left, right, top, bottom).  The
#: legend sits in the right margin.  Fixed margins let a figure be drawn
#: once; ``bbox_inches="tight"`` would draw it twice to measure it.
_MARGINS = (0.8, 2.0, 0.45, 0.5)


def _legend_room(labels) -> float:
    """Inches right of the axes for a legend of ``labels``: the default
    margin, or more for long names (a formulation named with its options,
    ``lagrange:baumgarte=(5.0,5.0)``)."""
    longest = max((len(str(x)) for x in labels), default=0)
    return max(_MARGINS[1], 0.55 + 0.07 * longest)


def _line_width(room: float) -> float:
    """Width in inches of a figure of lines against time with ``room`` for
    its legend: 6.7 in of axes, less when the legend needs more than the
    page leaves."""
    return min(6.7 + _MARGINS[0] + room, _MAX_WIDTH_IN)


def _layout(fig, left=None, right=None, top=None, bottom=None, **spacing):
    """Place the axes of ``fig`` within fixed margins (inches)."""
    w, h = fig.get_size_inches()
    dl, dr, dt, db = _MARGINS
    fig.subplots_adjust(
        left=(dl if left is None else left) / w,
        right=1 - (dr if right is None else right) / w,
        top=1 - (dt if top is None else top) / h,
        bottom=(db if bottom is None else bottom) / h,
        **spacing,
    )


def _save(fig, path: Path) -> Path:
    """``fig`` as the PNG file ``path``, written whole or not at all (a
    figure of the report before stays until it is replaced)."""
    import matplotlib.pyplot as plt
    from PIL import Image

    from .store import _atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    width = fig.get_size_inches()[0]
    if width > _MAX_WIDTH_IN + 1e-9:
        raise ValueError(
            f"{path.name}: a figure {width:.2f} in wide is wider than the "
            f"page ({_MAX_WIDTH_IN:.2f} in)"
        )
    fig.set_dpi(_DPI)
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    plt.close(fig)
    # An indexed palette: a quarter of the bytes of true colour for line
    # and bar charts, with no visible loss at this resolution.
    image = Image.fromarray(rgba[..., :3]).quantize(
        colors=_PALETTE, method=Image.Quantize.FASTOCTREE
    )
    png = io.BytesIO()
    image.save(png, format="PNG", dpi=(_DPI, _DPI), compress_level=6)
    _atomic_write(path, png.getvalue())
    return path


def _formulation_styles(formulations) -> dict:
    import matplotlib

    colours = matplotlib.colormaps["tab10"].colors
    return {
        f: {
            "color": colours[i % len(colours)],
            "linestyle": _STYLES[i % len(_STYLES)],
            "marker": _MARKERS[i % len(_MARKERS)],
        }
        for i, f in enumerate(formulations)
    }


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


def _trajectory_figure(plt, label, rows, trajectories, reference, styles, path):
    """Up to three coordinates of every formulation, overlaid."""
    cases = [(r.formulation, trajectories.get(r.case, {})) for r in rows]
    cases = [(f, a) for f, a in cases if "t" in a and "q" in a and len(a["t"])]
    if not cases:
        return None
    ref = dict(cases).get(reference, cases[0][1])
    q_ref = np.asarray(ref["q"])
    if q_ref.ndim != 2 or q_ref.shape[1] == 0:
        return None
    # The coordinates that move most say most about the motion.
    spread = np.ptp(q_ref, axis=0)
    shown = sorted(np.argsort(-spread, kind="stable")[:3])
    names = _coordinate_names(rows, q_ref.shape[1])
    room = _legend_room(f for f, _ in cases)
    fig, axes = plt.subplots(
        len(shown),
        1,
        sharex=True,
        squeeze=False,
        figsize=(_line_width(room), 1.9 * len(shown) + 0.6),
    )
    _layout(fig, right=room, hspace=0.12)
    n_t = len(ref["t"])
    for ax, j in zip(axes[:, 0], shown):
        for k, (form, arr) in enumerate(cases):
            q = np.asarray(arr["q"])
            if q.ndim != 2 or q.shape[1] <= j:
                continue
            st = styles[form]
            ax.plot(
                arr["t"],
                q[:, j],
                color=st["color"],
                linestyle=st["linestyle"],
                marker=st["marker"],
                markevery=(k * 3, max(n_t // 12, 1)),
                markersize=4,
                linewidth=2.2 if form == reference else 1.3,
                alpha=0.9,
                label=form + (" (reference)" if form == reference else ""),
            )
        ax.set_ylabel(names[j])
    axes[0, 0].set_title(f"{label}: coordinates against time")
    axes[-1, 0].set_xlabel("t [s]")
    axes[0, 0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _save(fig, path)


def _deviations(rows, trajectories, reference, threshold):
    """Formulation -> (t, relative deviation from the reference)."""
    from .assemble import agreement

    by_form = {r.formulation: trajectories.get(r.case, {}) for r in rows}
    ref = by_form.get(reference, {})
    if not all(k in ref for k in ("t", "q", "qd")):
        return {}
    out = {}
    for form, arr in by_form.items():
        if form == reference:
            continue
        dev = arr.get("deviation")
        if dev is None and all(k in arr for k in ("t", "q", "qd")) and len(arr["t"]):
            try:
                dev = agreement(
                    np.asarray(arr["t"]),
                    np.asarray(arr["q"]),
                    np.asarray(arr["qd"]),
                    np.asarray(ref["q"]),
                    np.asarray(ref["qd"]),
                    threshold,
                )["deviation"]
            except (ValueError, IndexError):  # shapes differ: nothing to compare
                dev = None
        if dev is not None and len(dev):
            dev = np.asarray(dev, dtype=float)
            out[form] = (np.asarray(arr["t"])[: len(dev)], dev)
    return out


def _deviation_figure(plt, label, devs, reference, threshold, styles, path):
    if not devs:
        return None
    room = _legend_room(devs)
    fig, ax = plt.subplots(figsize=(_line_width(room), 3.0))
    _layout(fig, right=room)
    for form, (t, dev) in devs.items():
        st = styles[form]
        ax.semilogy(
            t,
            np.maximum(dev, _DEV_FLOOR),
            color=st["color"],
            linestyle=st["linestyle"],
            linewidth=1.4,
            label=form,
        )
        beyond = np.nonzero(dev > threshold)[0] if threshold else []
        if len(beyond):
            # The end of the horizon of agreement, where the reader looks.
            ax.axvline(t[beyond[0]], color=st["color"], linewidth=0.8, alpha=0.6)
    if threshold:
        ax.axhline(
            threshold,
            color="0.3",
            linewidth=0.8,
            linestyle=":",
            label=f"threshold {threshold:g}",
        )
    ax.set_ylim(bottom=_DEV_FLOOR / 3)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("relative deviation")
    ax.set_title(
        f"{label}: deviation from {reference} (exact zeros drawn at {_DEV_FLOOR:g})"
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _save(fig, path)


def _log_axis(ax, values, axis="y"):
    """Log scale starting at a whole decade, ticks as plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    v = pd.to_numeric(pd.Series(values), errors="coerce")
    v = v[v > 0]
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    if len(v):
        lo = 10.0 ** math.floor(math.log10(v.min()))
        hi = 10.0 ** math.ceil(math.log10(v.max() * 1.05))
        getattr(ax, f"set_{axis}lim")(lo, hi)
    target.set_major_locator(LogLocator(base=10))
    target.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    target.set_minor_formatter(NullFormatter())


def _backend_labels(frame, labels) -> list[str]:
    """The x labels of the cost chart: where some systems' right-hand sides
    were compiled and others' not, those of the compiled ones marked
    "(C)", so that microseconds of the two backends are not read as one
    scale (within a system every formulation has one backend)."""
    if "backend" not in frame.columns:
        return list(labels)
    by = frame.dropna(subset=["backend"]).groupby("label", sort=False)["backend"]
    compiled = {lab for lab, b in by if set(b) == {"c"}}
    if not compiled or compiled >= set(labels):
        return list(labels)
    return [f"{lab} (C)" if lab in compiled else str(lab) for lab in labels]


def _bars_figure(plt, frame, formulations, styles, path):
    """Grouped horizontal bars, one group per system variant and one panel
    per measure (operation counts and times).  The systems run down the
    page, so a run of many systems makes the figure taller, never wider
    than the page."""
    ok = frame[frame["status"] == "ok"]
    metrics = [
        (c, t)
        for c, t in (
            ("ops_raw", "operations, raw"),
            ("ops_cse", "operations after cse"),
            ("derive_s", "derivation s"),
            ("rhs_us", "right-hand side µs"),
        )
        if ok[c].notna().any() and (ok[c] > 0).any()
    ]
    if not metrics or ok.empty:
        return None
    labels = list(dict.fromkeys(ok["label"]))
    forms = [f for f in formulations if f in set(ok["formulation"])]
    ticks = _backend_labels(ok, labels)
    width = _MAX_WIDTH_IN
    left = 0.35 + 0.065 * max(len(str(lb)) for lb in ticks)
    # The legend above the panels, in as many columns as fit the width.
    entry = _legend_room(forms) - 1.4
    ncol = max(1, min(len(forms), int((width - 0.4) // entry)))
    top = 0.55 + 0.2 * math.ceil(len(forms) / ncol)
    bar = 0.08  # inches per bar
    height = len(labels) * bar * len(forms) / 0.8 + top + 0.5
    fig, axes = plt.subplots(
        1, len(metrics), sharey=True, squeeze=False, figsize=(width, height)
    )
    _layout(fig, left=left, right=0.25, top=top, bottom=0.5, wspace=0.25)
    y = np.arange(len(labels))
    h = 0.8 / max(len(forms), 1)

    def pivot(col):
        table = ok.pivot_table(
            index="label", columns="formulation", values=col, aggfunc="first"
        ).reindex(index=labels)
        return {
            form: (
                table[form].to_numpy(dtype=float)
                if form in table
                else np.full(len(labels), np.nan)
            )
            for form in forms
        }

    for ax, (col, title) in zip(axes[0], metrics):
        # A time is drawn as the median of its measurements, a line across
        # the bar's end as wide as their interquartile range.
        median = f"{col}_median"
        timed = (
            median in ok.columns
            and pd.to_numeric(ok[median], errors="coerce").notna().any()
        )
        values = pivot(median if timed else col)
        spreads = pivot(f"{col}_spread") if timed and f"{col}_spread" in ok else {}
        for i, form in enumerate(forms):
            vals = np.where(values[form] > 0, values[form], np.nan)
            iqr = spreads.get(form)
            ax.barh(
                y - 0.4 + h * (i + 0.5),
                vals,
                h,
                xerr=None if iqr is None else np.nan_to_num(iqr) / 2,
                error_kw={"elinewidth": 0.6, "capsize": 0},
                label=form,
                color=styles[form]["color"],
            )
        _log_axis(ax, ok[median if timed else col], axis="x")
        ax.set_title(title + (" (median, IQR)" if timed else ""), fontsize=9)
        ax.grid(axis="y", visible=False)
        ax.tick_params(axis="x", labelsize=7)
    axes[0, 0].set_yticks(y)
    axes[0, 0].set_yticklabels(ticks, fontsize=8)
    axes[0, 0].set_ylim(len(labels) - 0.5, -0.5)  # the first system on top
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(
        handles,
        names,
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.3 / height),
        ncol=ncol,
        frameon=False,
    )
    fig.suptitle(
        "Cost per formulation (log scale; missing bar: failed or not run)",
        y=1 - 0.06 / height,
        va="top",
        fontsize=10,
    )
    return _save(fig, path)


def _scaling_figure(plt, frame, system, formulations, styles, path):
    """Operations and derivation seconds against n, log-log."""
    from matplotlib.ticker import NullFormatter

    f = frame[(frame["system"] == system) & (frame["status"] == "ok")].copy()
    f["n"] = [_n_of(v) for v in f["variant"]]
    f = f[f["n"].notna()]
    if f["n"].nunique() < 2:
        return None
    derive = "derivation s"
    if "derive_s_median" in f.columns:
        # The median of the measurements, where the run has them.
        median = pd.to_numeric(f["derive_s_median"], errors="coerce")
        if median.notna().any():
            f["derive_s"] = median.fillna(f["derive_s"])
            derive = "derivation s (median)"
    metrics = [
        (c, t)
        for c, t in (
            ("ops_cse", "operations after cse"),
            ("ops_raw", "operations, raw"),
            ("derive_s", derive),
        )
        if (f[c] > 0).any()
    ]
    if not metrics:
        return None
    room = _legend_room(formulations)
    fig, axes = plt.subplots(
        1,
        len(metrics),
        squeeze=False,
        figsize=(min(3.4 * len(metrics) + 0.6 + room, _MAX_WIDTH_IN), 3.6),
    )
    _layout(fig, right=room, top=0.75, wspace=0.35)
    ns = sorted(int(n) for n in f["n"].unique())
    for ax, (col, title) in zip(axes[0], metrics):
        for form in formulations:
            g = f[(f["formulation"] == form) & (f[col] > 0)].sort_values("n")
            if g.empty:
                continue
            st = styles[form]
            ax.loglog(
                g["n"].astype(float),
                g[col],
                color=st["color"],
                linestyle=st["linestyle"],
                marker=st["marker"],
                markersize=4,
                label=form,
            )
        _log_axis(ax, f[col])
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("n")
        ax.set_title(title)
    fig.suptitle(
        f"{system}: scaling with the number of links",
        y=1 - 0.08 / fig.get_size_inches()[1],
        va="top",
    )
    axes[0, -1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    return _save(fig, path)


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
        _Para(
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
        _Table(table.frame),
    ]


def _equations_part(rows, trajectories, reference, n_states):
    def make():
        from .equations import equations_section

        return [
            _Raw(
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
    return i, _PARTS[i].make()


def _compute_parts(rep: _Report, jobs: int | None = None) -> None:
    """Replace every :class:`_Later` of ``rep`` by its blocks.

    The parts (equations typeset, figures drawn, tables derived) are
    independent, so with several CPUs they are made in forked worker
    processes, the costliest first; the blocks come back in the report's
    order either way.
    """
    global _PARTS
    import multiprocessing as mp
    import os

    parts = [b for b in rep.blocks if isinstance(b, _Later)]
    jobs = min(jobs or os.cpu_count() or 1, len(parts))
    made = {}
    if jobs > 1 and "fork" in mp.get_all_start_methods():
        order = sorted(range(len(parts)), key=lambda i: -parts[i].cost)
        _PARTS = parts
        try:
            with mp.get_context("fork").Pool(jobs) as pool:
                for i, blocks in pool.imap_unordered(_make_part, order):
                    made[i] = blocks
        finally:
            _PARTS = []
    else:
        made = {i: part.make() for i, part in enumerate(parts)}
    out, k = [], 0
    for b in rep.blocks:
        if isinstance(b, _Later):
            out.extend(made[k])
            k += 1
        else:
            out.append(b)
    rep.blocks = out


# ----------------------------------------------------------------------
# The report
# ----------------------------------------------------------------------
def _build_report(result, out, *, tables, figures: bool = True):
    """The report's blocks, with the figures written to ``out/figures``.

    Rendered to markdown and HTML by :func:`write_report`.
    """
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
    rep = _Report(out)

    plt, styles, fig_note = None, {}, "Figures were not requested for this report."
    if figures:
        try:
            plt = _pyplot()
            styles = _formulation_styles(formulations)
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
                lambda rows_=rows_, label=label, slug=slug: _trajectory_figure(
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
                lambda rows_=rows_, label=label, slug=slug: _deviation_figure(
                    plt,
                    label,
                    _deviations(rows_, trajectories, reference, threshold or 0.0),
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
            path = _bars_figure(plt, frame, formulations, styles, fig_dir / "cost.png")
            if not path:
                return [_Para("No successful case to chart.")]
            return [
                _Figure(
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
                path = _scaling_figure(
                    plt,
                    frame,
                    system,
                    formulations,
                    styles,
                    fig_dir / f"scaling_{_slug(system)}.png",
                )
                if path:
                    blocks.append(
                        _Figure(
                            path,
                            f"{system}: operations after cse, "
                            "raw operations and derivation "
                            "seconds against n (log-log).",
                        )
                    )
            return blocks or [
                _Para(
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
        report_section(rep, out, plt=plt, save=_save)
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
    return rep


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:{page}px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:0.6em 0 1.2em;font-size:0.85em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}
th{background:#f0f0f0}
td:first-child,th:first-child{text-align:left}
caption{caption-side:top;text-align:left;font-weight:600;padding:2px 0}
tr.bad td{background:#fde8e8}
tr.na td{background:#f4f4f4;color:#666}
figure{margin:0.5em 0 1.5em}
figure img{max-width:100%}
figcaption{font-size:0.85em;color:#555}
.scroll{overflow-x:auto}
nav ul{list-style:none;padding-left:0;columns:2;font-size:0.9em}
nav li.l3{padding-left:1.5em}
h2{border-bottom:1px solid #ddd;padding-bottom:0.2em;margin-top:1.6em}
.eqs{border-left:3px solid #d0d8e8;padding:0 0.8em;margin:0.8em 0;overflow-x:auto}
.eqs h5{margin:0.3em 0}
p.form{font-size:0.85em;color:#444}
.structure{display:flex;gap:1em;align-items:flex-start}
svg.spy{flex:none}
.side-by-side{display:grid;gap:1.2em;
grid-template-columns:repeat(auto-fit,minmax(min(100%,26em),1fr))}
.side-by-side>div{min-width:0}
.pub{border:1px solid #ccc;padding:0.4em 0.8em;margin:0.5em 0;overflow-x:auto}
math{font-family:"STIX Two Math","Latin Modern Math","DejaVu Math TeX Gyre",
"Cambria Math",math}
.pub.misprint .printed{background:#fde8e8;border:1px dashed #c33;padding:0 0.4em}
.flag{background:#c33;color:#fff;border-radius:3px;padding:0 0.4em;font-size:0.8em}
p.note{font-size:0.85em;color:#333}
details{margin:0.3em 0}
summary{cursor:pointer;color:#1f4e99}
"""


def _render_markdown(rep: _Report) -> str:
    parts = []
    for b in rep.blocks:
        if isinstance(b, _Heading):
            parts.append("#" * b.level + " " + b.text)
        elif isinstance(b, _Para):
            parts.append(b.text)
        elif isinstance(b, _Table):
            parts.append(_md_table(b.frame, b.digits))
        elif isinstance(b, _Raw):
            parts.append(b.markdown)
        elif isinstance(b, _Figure):
            rel = b.path.relative_to(rep.out).as_posix()
            parts.append(f"![{b.caption}]({rel})\n\n*{b.caption}*")
    return "\n\n".join(parts) + "\n"


def _render_html(rep: _Report) -> str:
    title = next((b.text for b in rep.blocks if isinstance(b, _Heading)), "Report")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS.replace('{page}', str(PAGE_PX))}</style>",
        "</head><body>",
    ]
    # A contents list: the report of a full run is long.
    toc = ["<nav><ul>"]
    for b in rep.blocks:
        if isinstance(b, _Heading) and b.level in (2, 3):
            toc.append(
                f'<li class="l{b.level}"><a href="#{_slug(b.text)}">'
                f"{html.escape(b.text)}</a></li>"
            )
    toc.append("</ul></nav>")
    seen_h1 = False
    for b in rep.blocks:
        if isinstance(b, _Heading):
            anchor = f' id="{_slug(b.text)}"' if b.level in (2, 3) else ""
            parts.append(f"<h{b.level}{anchor}>{html.escape(b.text)}</h{b.level}>")
            if b.level == 1 and not seen_h1:
                parts.extend(toc)
                seen_h1 = True
        elif isinstance(b, _Para):
            parts.append(f"<p>{html.escape(b.text)}</p>")
        elif isinstance(b, _Table):
            parts.append(_html_table(b.frame, b.caption, b.digits))
        elif isinstance(b, _Raw):
            parts.append(b.html)
        elif isinstance(b, _Figure):
            data = base64.b64encode(b.path.read_bytes()).decode("ascii")
            cap = html.escape(b.caption)
            parts.append(
                f'<figure><img alt="{cap}" src="data:image/png;base64,'
                f'{data}"><figcaption>{cap}</figcaption></figure>'
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


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
    if not hasattr(result, "frame") or not isinstance(result.frame, pd.DataFrame):
        raise TypeError(
            "result must be a ComparisonResult (with a pandas .frame), "
            f"not {type(result).__name__}"
        )
    out = Path(out)
    problems = count_problems(result.frame)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ValueError(f"{out / 'results.csv'}: {problems[0]}{more}")
    from .sections import SECTIONS, SectionTable, load_sections
    from .store import _atomic_write

    if tables is None:
        tables = load_sections(out)
    for name, table in tables.items():
        if name not in SECTIONS or not isinstance(table, SectionTable):
            raise TypeError(
                f"tables must map a section name ({', '.join(SECTIONS)}) to a "
                f"SectionTable, not {name!r}: {type(table).__name__}"
            )
    md, page = out / "report.md", out / "report.html"
    try:
        rep = _build_report(result, out, tables=tables, figures=figures)
        _compute_parts(rep)
        # The page, which embeds the figures, is the larger: when the disk
        # fills, it fills there, and the markdown before stays too.
        _atomic_write(page, _render_html(rep).encode("utf-8"))
        _atomic_write(md, _render_markdown(rep).encode("utf-8"))
    except OSError as exc:
        raise ReportOutputError(
            exc.errno,
            f"cannot write the report in {out}: {exc.strerror or exc}; "
            f"the report there before, if any, is kept",
        ) from exc
    # Figures of an earlier report that this one did not draw (systems no
    # longer in the run) must not linger; other files in figures/ stay.
    drawn = {b.path.resolve() for b in rep.blocks if isinstance(b, _Figure)}
    for pattern in _FIGURE_NAMES:
        for old in (out / "figures").glob(pattern):
            if old.resolve() not in drawn:
                old.unlink(missing_ok=True)
    return {"markdown": md, "html": page}
