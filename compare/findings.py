"""What a comparison run shows, stated in sentences with its numbers.

:func:`findings` reads only the run's rows: per system variant the
formulation with the fewest operations after cse, the fastest derivation
and the fastest solve, every disagreement, failure, peer limitation and
refusal, the misprints found in the equations published for the run's
systems; across systems, which formulation wins in each class of system and
by how much, and how operation counts and derivation times grow with n.
Nothing in it is written by hand.

Every section of the report counts cases with one vocabulary,
:func:`case_kind`: *ok*, *failed*, *peer limitation* (a peer library cannot
do what the project's formulations do: not a failure) and *refused* (a
formulation declines the system, ``unsupported``, with its reason).

Systems are classed by one rule, their declaration (:data:`CLASS_RULE`),
never by the mechanism's topology: a four-bar declared in its one minimal
coordinate is *unconstrained*, the same linkage in redundant coordinates has
*holonomic constraints*.

Times are compared by their medians, and one is named fastest only where
its lead is beyond the noise (:func:`eomcompare.compare.timing.beyond_noise`: larger
than the larger interquartile range of the two); otherwise the finding is
a tie.  Where every formulation makes the same number of right-hand-side
evaluations, the solves differ by the right-hand side's cost times that
number, and the finding says so instead of ranking the solves.

>>> import pandas as pd
>>> frame = pd.DataFrame({"label": ["p", "p"], "system": ["p", "p"],
...     "variant": ["", ""], "formulation": ["a", "b"], "status": ["ok", "ok"],
...     "ops_cse": [10, 15], "derive_s": [0.2, 0.1], "integrate_s": [1.0, 2.0],
...     "qdd_max_rel_dev": [0.0, 1e-15], "system_class": ["unconstrained"] * 2})
>>> f = findings(frame)
>>> f.per_system[0]["fewest_ops"]
'a (10 operations after cse; next b 15, 1.5×)'
>>> f.per_system[0]["fastest_derivation"]
'not ranked: one measurement each of b, a, no spread to judge a difference by'
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .status import (
    CLASS_RULE,
    CLASSES,
    KINDS,
    OLD_CLASSES,
    case_kind,
    case_kinds,
    kind_counts,
    refusals,
    system_classes,
)
from .timing import SETTLED_SPREAD, Spread, tied_with_best
from .variants import variant_options

__all__ = [
    "findings",
    "Findings",
    "system_classes",
    "refusals",
    "CLASSES",
    "CLASS_RULE",
    "AGREEMENT_TOL",
    "KINDS",
    "case_kind",
    "case_kinds",
    "kind_counts",
    "misprints",
]

#: Largest q'' deviation from the reference still counted as agreement.
AGREEMENT_TOL = 1e-8


#: Words by which the note of a published equation reports a misprint
#: (of that equation or of the lines of the document it rests on).
_MISPRINT_WORDS = ("misprint", "print ", "prints ", "printed as", "as printed")


def misprints(systems) -> list[str]:
    """The misprints found in the equations published for ``systems``
    (catalogue names), one sentence per system, from
    :mod:`eomcompare.systems.seed_equations`: the printed equations that do not hold
    and the notes that report a misprint elsewhere in the document."""
    from eomcompare.systems.seed_equations import PUBLISHED_SYSTEMS, published_equations

    out = []
    for system in dict.fromkeys(systems):
        if system not in PUBLISHED_SYSTEMS:
            continue
        notes: dict[tuple, list[str]] = {}
        for eq in published_equations(system):
            note = eq.note
            if eq.misprinted or any(w in note.lower() for w in _MISPRINT_WORDS):
                notes.setdefault((note, eq.source), []).append(eq.number)
        for (note, source), numbers in notes.items():
            out.append(f"{system} ({', '.join(numbers)} in {source}): {note}")
    return out


def _classes_of(frame: pd.DataFrame) -> dict:
    """label -> list of classes, from the rows or else from the catalogue."""
    out = {}
    col = "system_class" if "system_class" in frame.columns else None
    built = {}
    for r in frame.drop_duplicates("label").itertuples():
        value = getattr(r, col) if col else None
        if isinstance(value, str) and value:
            out[r.label] = [OLD_CLASSES.get(c, c) for c in value.split(",")]
            continue
        key = (r.system, r.variant)
        if key not in built:
            try:
                from .prepared import declaration_for_report

                built[key] = system_classes(
                    declaration_for_report(r.system, variant_options(r.variant))
                )
            except Exception:  # an unknown system: left out of the classes
                built[key] = []
        out[r.label] = built[key]
    return out


def _num(x) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return x


def _g(x, unit="") -> str:
    x = _num(x)
    if not math.isfinite(x):
        return "—"
    if unit == "s":
        return f"{x:.3g} s"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.3g}"


def _best(ok: pd.DataFrame, col: str, unit: str, what: str) -> str | None:
    vals = [(f, _num(v)) for f, v in zip(ok["formulation"], ok[col])]
    vals = sorted([(v, f) for f, v in vals if math.isfinite(v) and v > 0])
    if not vals:
        return None
    (v0, f0) = vals[0]
    text = f"{f0} ({_g(v0, unit)}{what}"
    if len(vals) > 1:
        v1, f1 = vals[1]
        text += f"; next {f1} {_g(v1, unit)}, {v1 / v0:.3g}×"
    return text + ")"


def _ops_measure(frame: pd.DataFrame) -> tuple[str, str]:
    """The column "fewest operations" ranks by and how it is named: the
    canonical count per evaluation (M, f and the solve of the unknowns) where
    the run has it, else (runs from before that column) the count after cse
    as derived."""
    col = "ops_per_evaluation"
    if (
        col in frame.columns
        and pd.to_numeric(frame[col], errors="coerce").notna().any()
    ):
        return col, " operations per evaluation (canonical M, f and solve)"
    return "ops_cse", " operations after cse"


def _spreads(rows: pd.DataFrame, col: str) -> dict[str, Spread]:
    """formulation -> the median, interquartile range and count of its
    measurements of ``col`` (a row without ``col_median``, from a run
    before them, is one measurement of unknown spread)."""
    out = {}
    for _, r in rows.iterrows():
        median = _num(r.get(f"{col}_median", float("nan")))
        if not math.isfinite(median):
            median = _num(r.get(col))
        if not (math.isfinite(median) and median > 0):
            continue
        k = _num(r.get(f"{col}_k", float("nan")))
        out[r["formulation"]] = Spread(
            median,
            _num(r.get(f"{col}_spread", float("nan"))),
            int(k) if math.isfinite(k) else 1,
        )
    return out


def _t(x: float, unit: str) -> str:
    return f"{x:.3g} µs" if unit == "us" else _g(x, unit)


def _fastest(rows: pd.DataFrame, col: str, unit: str) -> str | None:
    """The fastest formulation by median with its lead over the next, or the
    tie of those within the noise of the fastest (:func:`tied_with_best`)."""
    times = _spreads(rows, col)
    tied = tied_with_best(times)
    if not tied:
        return None
    f0 = tied[0]
    s0 = times[f0]
    if len(tied) == 1:
        iqr = f", IQR {_t(s0.iqr, unit)}" if math.isfinite(s0.iqr) else ""
        text = f"{f0} (median {_t(s0.median, unit)}{iqr}, k={s0.k}"
        others = sorted((s.median, f) for f, s in times.items() if f != f0)
        if others:
            m1, f1 = others[0]
            text += f"; next {f1} {_t(m1, unit)}, {m1 / s0.median:.3g}×"
        return text + ")"
    if not any(math.isfinite(times[f].iqr) for f in tied):
        return (
            f"not ranked: one measurement each of {', '.join(tied)}, no "
            f"spread to judge a difference by"
        )
    medians = ", ".join(_t(times[f].median, unit) for f in tied)
    return (
        f"tie between {', '.join(tied)} (medians {medians}, within the "
        f"larger interquartile range)"
    )


def _fastest_solve(rows: pd.DataFrame) -> str | None:
    """:func:`_fastest` of the solve, except where every formulation made
    the same number of right-hand-side evaluations: then the solves differ
    by the right-hand side's cost times that number, which is said."""
    nfev = {_num(v) for v in rows.get("nfev", pd.Series(dtype=float))}
    nfev = {v for v in nfev if math.isfinite(v)}
    if len(rows) > 1 and len(nfev) == 1 and rows["nfev"].notna().all():
        n = int(next(iter(nfev)))
        return (
            f"not ranked: the same {n:,} right-hand-side evaluations each, "
            f"so the solves differ by the right-hand side's cost times {n:,} "
            f"(see the fastest right-hand side)"
        )
    return _fastest(rows, "integrate_s", "s")


@dataclass
class Findings:
    """The statements of :func:`findings` (also as HTML and Markdown)."""

    per_system: list = field(default_factory=list)
    by_class: list = field(default_factory=list)
    growth: list = field(default_factory=list)
    totals: str = ""
    #: The misprints found in the published equations of the run's systems.
    misprints: list = field(default_factory=list)
    #: How many times the times were measured, and the rule comparing them.
    timing: str = ""

    def sentences(self) -> list[str]:
        out = [self.totals] if self.totals else []
        if self.timing:
            out.append(self.timing)
        for s in self.per_system:
            parts = []
            if s.get("fewest_ops"):
                parts.append(f"fewest operations after cse: {s['fewest_ops']}")
            if s.get("fastest_derivation"):
                parts.append(f"fastest derivation: {s['fastest_derivation']}")
            if s.get("fastest_rhs"):
                parts.append(f"fastest right-hand side: {s['fastest_rhs']}")
            if s.get("fastest_solve"):
                parts.append(f"fastest solve: {s['fastest_solve']}")
            if s.get("disagreements"):
                parts.append(
                    "disagreeing with the reference: " + ", ".join(s["disagreements"])
                )
            parts += _trouble(s)
            out.append(f"{s['label']}: " + "; ".join(parts) + ".")
        misprints = [f"Misprint: {m}" for m in self.misprints]
        return out + list(self.by_class) + list(self.growth) + misprints

    def html(self) -> str:
        parts = []
        if self.totals:
            parts.append(f"<p>{html.escape(self.totals)}</p>")
        if self.timing:
            parts.append(f"<p>{html.escape(self.timing)}</p>")
        if self.by_class:
            parts.append(
                "<p><b>By class of system</b> (geometric mean, over the "
                "class's systems, of each formulation's value divided by "
                "the best one's on that system). "
                + html.escape(CLASS_RULE)
                + "</p><ul>"
                + "".join(f"<li>{html.escape(s)}</li>" for s in self.by_class)
                + "</ul>"
            )
        if self.growth:
            parts.append(
                "<p><b>Growth with n</b> (slope of a least-squares line "
                "through log value against log n):</p><ul>"
                + "".join(f"<li>{html.escape(s)}</li>" for s in self.growth)
                + "</ul>"
            )
        if self.per_system:
            head = (
                "<tr><th>system</th><th>fewest ops after cse</th>"
                "<th>fastest derivation</th><th>fastest right-hand side</th>"
                "<th>fastest solve</th>"
                "<th>disagreements, failures, peer limitations, "
                "refusals</th></tr>"
            )
            rows = []
            for s in self.per_system:
                trouble = (
                    ["disagrees: " + ", ".join(s["disagreements"])]
                    if s.get("disagreements")
                    else []
                ) + _trouble(s)
                cls = (
                    ' class="bad"'
                    if s.get("disagreements") or s.get("failures")
                    else ""
                )
                cells = [
                    s["label"],
                    s.get("fewest_ops") or "—",
                    s.get("fastest_derivation") or "—",
                    s.get("fastest_rhs") or "—",
                    s.get("fastest_solve") or "—",
                    "; ".join(trouble) or "none",
                ]
                rows.append(
                    f"<tr{cls}>"
                    + "".join(f"<td>{html.escape(c)}</td>" for c in cells)
                    + "</tr>"
                )
            parts.append(
                '<div class="scroll"><table class="findings"><thead>'
                + head
                + "</thead><tbody>"
                + "".join(rows)
                + "</tbody></table></div>"
            )
        if self.misprints:
            parts.append(
                "<p><b>Misprints found in the published equations</b> "
                "(by re-deriving them; each equation is shown beside the "
                "derived ones in its system's section):</p><ul>"
                + "".join(f"<li>{html.escape(m)}</li>" for m in self.misprints)
                + "</ul>"
            )
        return "\n".join(parts)

    def markdown(self) -> str:
        parts = [self.totals] if self.totals else []
        if self.timing:
            parts.append(self.timing)
        if self.by_class:
            parts.append(
                "**By class of system** (geometric mean, over the class's "
                "systems, of each formulation's value divided by the best "
                f"one's on that system). {CLASS_RULE}\n\n"
                + "\n".join(f"- {s}" for s in self.by_class)
            )
        if self.growth:
            parts.append(
                "**Growth with n** (slope of log value against log n):\n\n"
                + "\n".join(f"- {s}" for s in self.growth)
            )
        if self.per_system:
            head = bool(self.totals) + bool(self.timing)
            parts.append(
                "**Per system:**\n\n"
                + "\n".join(
                    f"- {s}"
                    for s in self.sentences()[head : head + len(self.per_system)]
                )
            )
        if self.misprints:
            parts.append(
                "**Misprints found in the published equations:**\n\n"
                + "\n".join(f"- {m}" for m in self.misprints)
            )
        return "\n\n".join(parts)


def _trouble(entry: dict) -> list[str]:
    """The failures, peer limitations and refusals of a per-system entry,
    each with the row's own reason."""
    out = []
    for key, what in (
        ("failures", "failed"),
        ("peer_limitations", "peer limitation (not a failure)"),
    ):
        if entry.get(key):
            out.append(f"{what}: " + ", ".join(entry[key]))
    # Each refusal says "unsupported" and why already (:func:`refusals`).
    out += list(entry.get("refusals") or [])
    return out


def _ratios(frame, col):
    """label -> {formulation: value / best value on that label}."""
    out = {}
    for label, g in frame.groupby("label", sort=False):
        vals = {f: _num(v) for f, v in zip(g["formulation"], g[col])}
        vals = {f: v for f, v in vals.items() if math.isfinite(v) and v > 0}
        if vals:
            best = min(vals.values())
            out[label] = {f: v / best for f, v in vals.items()}
    return out


#: Time columns: compared by their medians under the noise rule.
_TIMES = ("derive_s", "rhs_us", "integrate_s")


def _same_nfev(rows: pd.DataFrame) -> bool:
    """Whether every row made the same number of rhs evaluations."""
    if "nfev" not in rows.columns or len(rows) < 2:
        return False
    nfev = pd.to_numeric(rows["nfev"], errors="coerce")
    return bool(nfev.notna().all() and nfev.nunique() == 1)


def _class_sentences(ok, classes) -> list[str]:
    out = []
    ops_col, ops_what = _ops_measure(ok)
    metrics = (
        (ops_col, "fewest" + ops_what),
        ("derive_s", "fastest derivation"),
        ("rhs_us", "fastest right-hand side"),
        ("integrate_s", "fastest solve"),
    )
    for cls in CLASSES:
        labels = [lab for lab, cs in classes.items() if cls in cs]
        sub = ok[ok["label"].isin(labels)]
        if sub.empty:
            continue
        n_sys = sub["label"].nunique()
        parts = []
        for col, what in metrics:
            if col not in sub.columns:
                continue
            timed = col in _TIMES
            rows = sub
            if timed:
                # Medians, where the run measured them; a solve whose
                # evaluation counts are equal is the rhs cost times them.
                median = f"{col}_median"
                if median in sub.columns:
                    rows = sub.assign(
                        **{col: sub[median].where(sub[median].notna(), sub[col])}
                    )
                if col == "integrate_s":
                    keep = [
                        lab
                        for lab, g in rows.groupby("label", sort=False)
                        if not _same_nfev(g)
                    ]
                    rows = rows[rows["label"].isin(keep)]
            ratios = _ratios(rows, col)
            per_form = {}
            for r in ratios.values():
                for f, v in r.items():
                    per_form.setdefault(f, []).append(v)
            # Only formulations that finished on every system of the class
            # compete: a refusal must not count as a win elsewhere.
            full = {
                f: float(np.exp(np.mean(np.log(v))))
                for f, v in per_form.items()
                if len(v) == len(ratios)
            }
            if not full:
                continue
            ranked = sorted(full.items(), key=lambda kv: kv[1])
            f0, r0 = ranked[0]
            if timed:
                # A win is a lead beyond the noise on that system.
                wins = sum(
                    1
                    for _, g in sub[sub["label"].isin(ratios)].groupby("label")
                    if tied_with_best(_spreads(g, col)) == [f0]
                )
                if not wins:
                    parts.append(
                        f"{what}: no formulation ahead beyond the noise "
                        f"(lowest mean ratio {f0}'s, {r0:.3g}, on "
                        f"{len(ratios)} system variant{'s' * (len(ratios) != 1)})"
                    )
                    continue
                text = (
                    f"{what}: {f0} (ahead beyond the noise on {wins} of "
                    f"{len(ratios)}, mean ratio {r0:.3g}"
                )
            else:
                wins = sum(1 for r in ratios.values() if r.get(f0) == 1.0)
                if not wins:
                    # The lowest mean ratio without a single system won is
                    # no winner: the class has none to name.
                    parts.append(
                        f"{what}: no winner ({f0} has the lowest mean ratio, "
                        f"{r0:.3g}, but is best on none of the class's systems)"
                    )
                    continue
                text = (
                    f"{what}: {f0} (best on {wins} of {len(ratios)}, "
                    f"mean ratio {r0:.3g}"
                )
            if len(ranked) > 1:
                f1, r1 = ranked[1]
                text += f"; next {f1} at {r1:.3g}, {r1 / r0:.3g}× {f0}'s"
            parts.append(text + ")")
        if parts:
            out.append(
                f"{cls} ({n_sys} system variant{'s' * (n_sys != 1)}): "
                + "; ".join(parts)
                + "."
            )
    return out


def _n_of(variant) -> int | None:
    n = variant_options(variant).get("n")
    return n if isinstance(n, int) else None


def _growth_sentences(ok) -> list[str]:
    out = []
    ok = ok.assign(n=[_n_of(v) for v in ok["variant"]])
    ok = ok[ok["n"].notna()]
    if "derive_s_median" in ok.columns:
        # Fitted to the medians of the measurements, where the run has them.
        median = pd.to_numeric(ok["derive_s_median"], errors="coerce")
        ok = ok.assign(derive_s=median.fillna(ok["derive_s"]))
    for system, g in ok.groupby("system", sort=False):
        if g["n"].nunique() < 2:
            continue
        parts = {}
        for col, what in (
            ("ops_cse", "operations after cse"),
            ("derive_s", "derivation seconds"),
        ):
            slopes = []
            for form, h in g.groupby("formulation", sort=False):
                h = h[[_num(v) > 0 for v in h[col]]]
                if h["n"].nunique() < 2:
                    continue
                x = np.log(h["n"].astype(float).to_numpy())
                y = np.log(h[col].astype(float).to_numpy())
                slope = float(np.polyfit(x, y, 1)[0])
                big = h.loc[h["n"].idxmax()]
                slopes.append((slope, form, int(big["n"]), _num(big[col])))
            if slopes:
                slopes.sort()
                parts[what] = ", ".join(
                    f"{f} n^{s:.2g} ({_g(v, 's' if col == 'derive_s' else '')} at n={n})"
                    for s, f, n, v in slopes
                )
        ns = sorted(int(n) for n in g["n"].unique())
        for what, text in parts.items():
            out.append(
                f"{system}, n = {', '.join(map(str, ns))}: {what} grow as {text}."
            )
    return out


def _timing_note(ok: pd.DataFrame, meta: dict) -> str:
    """How many measurements the times are, and the rule comparing them."""
    parts = []
    for col, what in (
        ("derive_s", "derivation"),
        ("rhs_us", "right-hand side"),
        ("integrate_s", "solve"),
    ):
        k = pd.to_numeric(ok.get(f"{col}_k", pd.Series(dtype=float)), errors="coerce")
        k = k.dropna()
        if len(k):
            lo, hi = int(k.min()), int(k.max())
            parts.append(f"{what} {lo}" + (f"–{hi}" if hi != lo else ""))
    if not parts:
        return (
            "Times are single measurements (the run predates repeated "
            "timings): no formulation is named fastest."
        )
    options = meta.get("options") or {}
    budget = _num(options.get("time_budget"))
    rhs = ""
    if "rhs_backend" in ok.columns and (ok["rhs_backend"] == "c").any():
        rhs = (
            " Right-hand sides are timed compiled (rhs_us; through lambdify "
            "in rhs_lambdify_us), in processor time."
        )
    return (
        "Times are medians of repeated measurements with their interquartile "
        "range (IQR); measurements per case: "
        + ", ".join(parts)
        + (
            f" (derivations and solves repeated within {budget:g} s of "
            f"processor time each per case, so the cheap ones, among which "
            f"the fastest is decided, most, and no more once three "
            f"measurements have an IQR within {SETTLED_SPREAD:.0%} of their "
            f"median)"
            if math.isfinite(budget)
            else ""
        )
        + ". A formulation is named fastest only where its median is ahead of "
        "every other's by more than the larger IQR of the two; otherwise the "
        "finding is a tie, and single measurements are not ranked." + rhs
    )


def findings(frame: pd.DataFrame, metadata: dict | None = None) -> Findings:
    """The statements a run's rows support.

    Parameters
    ----------
    frame : pandas.DataFrame
        A run's rows (``ComparisonResult.frame`` or ``results.csv``).
    metadata : dict, optional
        The run's metadata (for the reference formulation).
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, not {type(frame).__name__}")
    meta = metadata or {}
    reference = (meta.get("options") or {}).get("reference", "kane")
    f = frame.copy()
    for col in (
        "label",
        "system",
        "variant",
        "formulation",
        "status",
        "error",
        "ops_cse",
        "derive_s",
        "integrate_s",
        "qdd_max_rel_dev",
        "peer_limitation",
    ):
        if col not in f.columns:
            f[col] = np.nan
    f["variant"] = ["" if not isinstance(v, str) else v for v in f["variant"]]
    f["label"] = [
        lab if isinstance(lab, str) else (f"{s}[{v}]" if v else str(s))
        for lab, s, v in zip(f["label"], f["system"], f["variant"])
    ]
    out = Findings()
    if f.empty:
        out.totals = "The run has no cases."
        return out
    ok = f[f["status"] == "ok"]
    kinds = case_kinds(f)
    dev = pd.to_numeric(ok["qdd_max_rel_dev"], errors="coerce")
    n_dis = int((dev > AGREEMENT_TOL).sum())
    out.totals = (
        f"{len(f)} cases on {f['label'].nunique()} system variants: "
        + kind_counts(f)
        + f". {len(ok) - n_dis} of {len(ok)} finished cases agree with "
        f"{reference} to {AGREEMENT_TOL:g} in q''"
        + (f" (largest deviation {dev.max():.2g})" if dev.notna().any() else "")
        + "."
    )
    ops_col, ops_what = _ops_measure(ok)
    for label, g in f.groupby("label", sort=False):
        gok = g[g["status"] == "ok"]
        d = pd.to_numeric(gok["qdd_max_rel_dev"], errors="coerce")
        refused = refusals(g)
        in_family = [
            fm for who, names, _ in refused if who == "Lagrange family" for fm in names
        ]
        entry = {
            "label": label,
            "fewest_ops": _best(gok, ops_col, "", ops_what),
            "fastest_derivation": _fastest(gok, "derive_s", "s"),
            "fastest_rhs": _fastest(gok, "rhs_us", "us"),
            "fastest_solve": _fastest_solve(gok),
            "disagreements": [
                f"{fm} ({x:.2g})"
                for fm, x in zip(gok["formulation"], d)
                if x > AGREEMENT_TOL
            ],
            "failures": _with_reasons(g, kinds, "failed"),
            # A peer that declines with its family is named in the family's
            # refusal, not a second time as a limitation.
            "peer_limitations": _with_reasons(
                g[~g["formulation"].isin(in_family)], kinds, "peer limitation"
            ),
            # Refusals once per reason: "Lagrange family: unsupported (...)"
            # where the whole family declines the system alike.
            "refusals": [
                f"{who}: unsupported ({reason})" for who, _, reason in refused
            ],
        }
        out.per_system.append(entry)
    out.timing = _timing_note(ok, meta)
    classes = _classes_of(f)
    out.by_class = _class_sentences(ok, classes)
    out.growth = _growth_sentences(ok)
    try:
        out.misprints = misprints(f["system"].dropna().astype(str))
    except ImportError:  # findings of a run read without the catalogue
        out.misprints = []
    return out


def _reason(status, error) -> str:
    """A case's status and the first line of its error, as one clause."""
    error = error if isinstance(error, str) else ""
    first = error.strip().splitlines()[0] if error.strip() else ""
    return f"{status}: {first}" if first else str(status)


def _with_reasons(g: pd.DataFrame, kinds: pd.Series, kind: str) -> list[str]:
    """The formulations of ``g`` whose case is of ``kind``, with their
    status and error, those with the same reason named together
    ("lagrange, modified_lagrange (unsupported: ...)")."""
    rows = g[kinds.loc[g.index] == kind]
    by_reason: dict[str, list[str]] = {}
    for fm, st, err in zip(rows["formulation"], rows["status"], rows["error"]):
        by_reason.setdefault(_reason(st, err), []).append(str(fm))
    return [f"{', '.join(fms)} ({reason})" for reason, fms in by_reason.items()]
