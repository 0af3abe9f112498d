"""The figures of a comparison report: trajectories, deviations from the
reference, costs and their scaling, drawn at the page's width and saved as
indexed PNG files (:func:`save_figure`).

Every figure is at most :data:`PAGE_PX` CSS pixels wide, so none is shrunk
by the browser until its labels cannot be read.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

from eomcompare.symbolic.text import display_name

from .variants import variant_options

__all__ = [
    "PAGE_PX",
    "backend_labels",
    "bars_figure",
    "coordinate_names",
    "deviation_figure",
    "deviations",
    "formulation_styles",
    "pyplot",
    "save_figure",
    "scaling_figure",
    "trajectory_figure",
]

#: Deviations are drawn no lower than this on log axes (exact zeros).
_DEV_FLOOR = 1e-17


def n_of(variant: str):
    n = variant_options(variant).get("n")
    return n if isinstance(n, int) else None


def coordinate_names(rows, count: int) -> list[str]:
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


def pyplot():
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


def save_figure(fig, path: Path) -> Path:
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
    _share_renderer(fig.canvas)
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


#: Agg renderers by (width, height, dpi) in pixels, kept across figures.
_RENDERERS: dict = {}


def _share_renderer(canvas) -> None:
    """Let ``canvas`` draw with the renderer kept for its size, which it
    clears before drawing as it clears its own: matplotlib keeps the
    measures of texts and the parsed labels of log axes (``10^{-8}``) per
    renderer, and the report's figures, many of one size, repeat their
    labels (the same ticks, legends and titles' words). The pixels are the
    same as with a renderer of its own."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

    if type(canvas) is not FigureCanvasAgg:
        return
    w, h = canvas.get_width_height(physical=True)
    key = (w, h, canvas.figure.dpi)
    renderer = _RENDERERS.get(key)
    if renderer is None:
        if len(_RENDERERS) >= 8:
            _RENDERERS.clear()
        renderer = RendererAgg(w, h, canvas.figure.dpi)
        if _RENDERERS:
            # One parser of mathematical text for every size.
            renderer.mathtext_parser = next(iter(_RENDERERS.values())).mathtext_parser
        _RENDERERS[key] = renderer
    canvas.renderer = renderer
    canvas._lastKey = key


def formulation_styles(formulations) -> dict:
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


def trajectory_figure(plt, label, rows, trajectories, reference, styles, path):
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
    names = coordinate_names(rows, q_ref.shape[1])
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
    return save_figure(fig, path)


def deviations(rows, trajectories, reference, threshold):
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


def deviation_figure(plt, label, devs, reference, threshold, styles, path):
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
    return save_figure(fig, path)


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


def backend_labels(frame, labels) -> list[str]:
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


def bars_figure(plt, frame, formulations, styles, path):
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
    ticks = backend_labels(ok, labels)
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
    return save_figure(fig, path)


def scaling_figure(plt, frame, system, formulations, styles, path):
    """Operations and derivation seconds against n, log-log."""
    from matplotlib.ticker import NullFormatter

    f = frame[(frame["system"] == system) & (frame["status"] == "ok")].copy()
    f["n"] = [n_of(v) for v in f["variant"]]
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
    return save_figure(fig, path)
