"""Tables of a run as text: cell formatting, Markdown and HTML tables, the
overview a notebook shows (shared by the report and ``ComparisonResult``)
and the cost table at the top of the report."""

from __future__ import annotations

import html
import json
import math

import numpy as np
import pandas as pd

from .findings import case_kind, case_kinds, findings
from .summary import HEADINGS, REPORT_COLUMNS

#: Columns of the per-system summary table: frame column -> heading.
SUMMARY_COLUMNS = {c: HEADINGS[c] for c in REPORT_COLUMNS}
_INT_COLUMNS = {
    "ops_raw",
    "ops_cse",
    "ops_canonical",
    "ops_per_evaluation",
    "n_equations",
    "n_unknowns",
    "n_multipliers",
    "nfev",
}


# ----------------------------------------------------------------------
# Formatting
# ----------------------------------------------------------------------
def _is_missing(x) -> bool:
    if x is None:
        return True
    if isinstance(x, float) and math.isnan(x):
        return True
    try:
        return bool(pd.isna(x)) if np.ndim(x) == 0 else False
    except (TypeError, ValueError):
        return False


def is_count(x) -> bool:
    """``x`` is a finite, non-negative whole number (an operation or
    equation count); text, booleans, infinities and fractions are not."""
    if isinstance(x, (bool, np.bool_)):
        return False
    try:
        x = float(x)
    except (TypeError, ValueError):
        return False
    return math.isfinite(x) and x >= 0 and x == int(x)


def count_problems(frame: pd.DataFrame) -> list[str]:
    """One sentence per cell of a count column (operations, equations,
    right-hand-side calls) that holds something other than a count or
    nothing: a saved run a report or the gate would misread."""
    problems = []
    for col in sorted(_INT_COLUMNS & set(frame.columns)):
        for case, x in zip(frame.get("case", frame.index), frame[col]):
            if not _is_missing(x) and not is_count(x):
                problems.append(f"{case}: {col} is {x!r}, not a count")
    return problems


def _fmt(x, column: str = "", digits: int | None = 3) -> str:
    """A cell as text: ``digits`` significant digits (None: every digit of
    the float), integers whole, missing as —."""
    if _is_missing(x):
        return "—"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if column in _INT_COLUMNS and math.isfinite(x) and x == int(x):
            return str(int(x))
        if x == 0:
            return "0"
        if not math.isfinite(x):
            return str(x)
        return repr(x) if digits is None else f"{x:.{digits}g}"
    return str(x)


#: Time columns every table shows as median, spread and count (the runner
#: writes ``X_median``, ``X_spread`` and ``X_k`` beside each).
TIMED_COLUMNS = ("derive_s", "rhs_us", "rhs_lambdify_us", "integrate_s")


def timed_cell(row, column: str) -> str:
    """A time as a table shows it where times are compared: the median of
    its measurements, their interquartile range and how many there were,
    ``"0.0123 (IQR 0.0004, k=5)"``; ``"0.0123 (k=1)"`` when the spread is
    unknown (fewer than three measurements), the fastest measurement of a
    row saved before medians were recorded as ``"0.0123 (k unknown)"``, and — when
    there is no time.

    >>> timed_cell({"rhs_us": 1.1, "rhs_us_median": 1.2,
    ...             "rhs_us_spread": 0.05, "rhs_us_k": 11}, "rhs_us")
    '1.2 (IQR 0.05, k=11)'
    """
    get = row.get if hasattr(row, "get") else (lambda k, d=None: d)
    median = get(f"{column}_median")
    if _is_missing(median):
        value = get(column)
        return "—" if _is_missing(value) else f"{_fmt(float(value))} (k unknown)"
    k = get(f"{column}_k")
    k = int(float(k)) if not _is_missing(k) else 1
    iqr = get(f"{column}_spread")
    spread = "" if _is_missing(iqr) else f"IQR {_fmt(float(iqr), digits=2)}, "
    return f"{_fmt(float(median))} ({spread}k={k})"


def timed_cells(frame: pd.DataFrame, column: str) -> list[str]:
    """:func:`timed_cell` of every row of ``frame``."""
    return [timed_cell(r, column) for _, r in frame.iterrows()]


def timed_heading(heading: str) -> str:
    """The heading of a column of :func:`timed_cell` s."""
    return f"{heading}: median (IQR, k)"


def _text_frame(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    return pd.DataFrame(
        {str(c): [_fmt(v, c, digits) for v in frame[c]] for c in frame.columns},
        index=frame.index,
    )


def _md_cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _md_table(frame: pd.DataFrame, digits: int = 3) -> str:
    text = _text_frame(frame, digits)
    head = "| " + " | ".join(_md_cell(c) for c in text.columns) + " |"
    rule = "|" + "|".join("---" for _ in text.columns) + "|"
    rows = [
        "| " + " | ".join(_md_cell(v) for v in row) + " |"
        for row in text.itertuples(index=False)
    ]
    return "\n".join([head, rule, *rows])


def _html_table(frame: pd.DataFrame, caption: str, digits: int = 3) -> str:
    text = _text_frame(frame, digits)
    parts = ['<div class="scroll"><table>']
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    parts.append(
        "<thead><tr>"
        + "".join(f"<th>{html.escape(str(c))}</th>" for c in text.columns)
        + "</tr></thead><tbody>"
    )
    status_col = (
        list(text.columns).index("status") if "status" in text.columns else None
    )
    for row in text.itertuples(index=False):
        cls = ""
        if status_col is not None and row[status_col] not in ("ok", "—"):
            cls = ' class="bad"' if _is_failure(row[status_col]) else ' class="na"'
        parts.append(
            f"<tr{cls}>"
            + "".join(f"<td>{html.escape(str(v))}</td>" for v in row)
            + "</tr>"
        )
    parts.append("</tbody></table></div>")
    return "\n".join(parts)


def status_cell(status, peer_limitation=False) -> str:
    """A case's status as the report's tables show it, in the vocabulary of
    :func:`eomcompare.compare.findings.case_kind`: the status of a failed case
    (``error``, ``timeout``), "peer limitation (error)" for a peer's
    limitation, "refused" for a formulation that declines the system.

    >>> status_cell("error"), status_cell("error", True), status_cell("unsupported")
    ('error', 'peer limitation (error)', 'refused')
    """
    kind = case_kind(status, peer_limitation)
    if kind == "peer limitation":
        return f"peer limitation ({status})"
    if kind == "refused":
        return "refused"
    return str(status)


def _is_failure(cell: str) -> bool:
    """A status cell of :func:`status_cell` that names a failure."""
    return not (
        cell.startswith("peer limitation") or cell in ("refused", "unsupported")
    )


def status_cells(frame: pd.DataFrame) -> list[str]:
    """:func:`status_cell` of every row of ``frame``."""
    kinds = case_kinds(frame)
    return [
        status_cell(s, k == "peer limitation") for s, k in zip(frame["status"], kinds)
    ]


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(text))


# ----------------------------------------------------------------------
# The frame, made uniform
# ----------------------------------------------------------------------
def _prepared(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with every column the report reads (missing ones as NaN)."""
    f = frame.copy()
    for col in (
        "system",
        "variant",
        "formulation",
        "status",
        "error",
        "case",
        *SUMMARY_COLUMNS,
    ):
        if col not in f.columns:
            f[col] = np.nan
    f["system"] = f["system"].fillna("?").astype(str)
    f["formulation"] = f["formulation"].fillna("?").astype(str)
    f["status"] = f["status"].fillna("unknown").astype(str)
    f["variant"] = f["variant"].apply(lambda v: "" if _is_missing(v) else str(v))
    f["error"] = f["error"].apply(lambda v: "" if _is_missing(v) else str(v))
    if "label" not in frame.columns:
        f["label"] = np.nan
    f["label"] = [
        lab if not _is_missing(lab) else (f"{s}[{v}]" if v else s)
        for lab, s, v in zip(f["label"], f["system"], f["variant"])
    ]
    f["case"] = [
        c if not _is_missing(c) else f"{lab}/{form}"
        for c, lab, form in zip(f["case"], f["label"], f["formulation"])
    ]
    for col in SUMMARY_COLUMNS:
        if col not in ("formulation", "status"):
            f[col] = pd.to_numeric(f[col], errors="coerce")
    return f.reset_index(drop=True)


def overview_table(frame: pd.DataFrame, formulations=None) -> pd.DataFrame:
    """q'' deviation from the reference per system and formulation, or the
    status of a case that did not finish (text cells)."""
    fr = _prepared(frame)
    if formulations is None:
        formulations = list(dict.fromkeys(fr["formulation"]))
    cell = [
        (_fmt(d) if s == "ok" else c)
        for d, s, c in zip(fr["qdd_max_rel_dev"], fr["status"], status_cells(fr))
    ]
    ov = fr.assign(cell=cell).pivot_table(
        index="label", columns="formulation", values="cell", aggfunc="first"
    )
    ov = ov.reindex(
        index=list(dict.fromkeys(fr["label"])),
        columns=[f for f in formulations if f in ov.columns],
    )
    return ov.reset_index().rename(columns={"label": "system"})


def result_html(result) -> str:
    """Findings and the overview table of a run, as an HTML fragment."""
    fnd = findings(result.frame, getattr(result, "metadata", None))
    parts = ["<div><h3>Findings</h3>", fnd.html()]
    if len(result.frame):
        parts += [
            "<h3>Overview: q'' deviation from the reference</h3>",
            _html_table(overview_table(result.frame), ""),
        ]
    parts.append("</div>")
    return "\n".join(parts)


#: The measure of the cost table, in order of preference: column, what it
#: counts.
COST_MEASURES = (
    (
        "ops_per_evaluation",
        "operations per evaluation of the right-hand side (canonical M and f "
        "and the solve for the unknowns)",
    ),
    (
        "ops_cse",
        "operations of M and f after common-subexpression elimination (the "
        "solve for the unknowns not included)",
    ),
)


def _mul_add(kinds) -> str:
    """Multiplications and divisions, additions and subtractions of a JSON
    ``ops_by_kind`` as "45×, 16±"; "" without one."""
    try:
        k = json.loads(kinds) if isinstance(kinds, str) else None
    except ValueError:
        return ""
    if not isinstance(k, dict):
        return ""
    mul = int(k.get("MUL", 0)) + int(k.get("DIV", 0))
    add = int(k.get("ADD", 0)) + int(k.get("SUB", 0))
    return f"{mul}×, {add}±"


def cost_table(frame: pd.DataFrame, formulations=None):
    """The paper-style cost table: systems × formulations, each cell the
    operations of one evaluation and the unknowns solved for, the fewest
    operations of a system in bold.

    Reads ``ops_per_evaluation`` where the run has it, else ``ops_cse``
    (with its multiplications and additions from ``ops_by_kind``); says
    which.  Returns ``(html, markdown)``, or None when no case finished
    with a count.
    """
    fr = _prepared(frame)
    ok = fr[fr["status"] == "ok"]
    col, what = next(
        (
            (c, w)
            for c, w in COST_MEASURES
            if c in ok.columns and pd.to_numeric(ok[c], errors="coerce").notna().any()
        ),
        (None, None),
    )
    if col is None:
        return None
    if formulations is None:
        formulations = list(dict.fromkeys(fr["formulation"]))
    forms = [f for f in formulations if f in set(ok["formulation"])]
    labels = list(dict.fromkeys(ok["label"]))
    ops = pd.to_numeric(ok[col], errors="coerce")
    cells = {}
    for r, v in zip(ok.itertuples(), ops):
        if not math.isfinite(v):
            continue
        unknowns = _fmt(getattr(r, "n_unknowns", float("nan")), "n_unknowns")
        detail = _mul_add(getattr(r, "ops_by_kind", None)) if col == "ops_cse" else ""
        cells[(r.label, r.formulation)] = (int(v), detail, unknowns)
    head = ["system", *forms]
    html_rows, md_rows = [], []
    for label in labels:
        mine = [cells.get((label, f)) for f in forms]
        best = min((c[0] for c in mine if c), default=None)
        h_cells, m_cells = [html.escape(label)], [_md_cell(label)]
        for c in mine:
            if c is None:
                h_cells.append("—")
                m_cells.append("—")
                continue
            n, detail, unknowns = c
            text = f"{n}" + (f" ({detail})" if detail else "") + f"; z {unknowns}"
            if n == best:
                h_cells.append(f"<b>{html.escape(text)}</b>")
                m_cells.append(f"**{_md_cell(text)}**")
            else:
                h_cells.append(html.escape(text))
                m_cells.append(_md_cell(text))
        html_rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in h_cells) + "</tr>")
        md_rows.append("| " + " | ".join(m_cells) + " |")
    caption = (
        f"Cost of one evaluation: {what} (column {col}); z the number of "
        "unknowns solved for; the fewest operations of each system in bold."
    )
    page = (
        '<div class="scroll"><table class="cost"><caption>'
        + html.escape(caption)
        + "</caption><thead><tr>"
        + "".join(f"<th>{html.escape(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(html_rows)
        + "</tbody></table></div>"
    )
    md = (
        f"*{caption}*\n\n"
        + "| "
        + " | ".join(head)
        + " |\n|"
        + "|".join("---" for _ in head)
        + "|\n"
        + "\n".join(md_rows)
    )
    return page, md
