"""The report's equations section: each case's derived equations, and the
equations printed in a seed document beside them.

:func:`published_html` and :func:`published_markdown` put the equations
printed in a seed document (:mod:`eomcompare.systems.seed_equations`) beside the derived
ones, with the misprints marked and explained and the residual of each
published equation under every formulation's accelerations from the run
(:func:`published_checks`).  :func:`equations_section` adds both to a
report.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from .equations import (
    PUBLISHED_FORMS,
    CaseEquations,
    case_equations,
    equations_html,
    equations_markdown,
    latex,
    math_element,
    mathml,
    same_equations,
    same_html,
)
from .variants import variant_options

__all__ = [
    "PublishedCheck",
    "equations_section",
    "published_checks",
    "published_html",
    "published_markdown",
    "published_partner",
]


@dataclass
class PublishedCheck:
    """A published equation with its residual under each formulation."""

    equation: object  # systems.seed_equations.PublishedEquation
    residuals: dict  # formulation -> (printed, holds) largest relative residual


def published_checks(
    system: str, builder_options: dict, qdd_by_formulation: dict, n_states: int
) -> list[PublishedCheck]:
    """Evaluate each published equation with the run's accelerations.

    ``qdd_by_formulation`` maps a formulation to its ``qdd`` array of the
    run (q'' at ``ms.states.random_state(seed)``, seeds ``0 .. n_states - 1``, the
    runner's sampling).
    """
    from eomcompare.systems import get_system
    from eomcompare.systems.seed_equations import published_equations, residual_function

    from .prepared import prepared

    got = prepared(system, builder_options, n_states)
    ms = got[0] if got else get_system(system, **builder_options)
    equations = published_equations(ms)
    if not equations:
        return []
    states = (
        got[1] if got else [ms.states.random_state(seed) for seed in range(n_states)]
    )
    out = []
    for eq in equations:
        funcs = {}
        for which, e, subs in (
            ("printed", eq.printed, {**eq.substitutions, **eq.printed_reading}),
            ("holds", eq.holds, eq.substitutions),
        ):
            try:
                funcs[which] = residual_function(e, ms, subs)
            except ValueError:
                funcs[which] = None
        res = {}
        for form, qdd in qdd_by_formulation.items():
            qdd = np.asarray(qdd, dtype=float)
            if (
                qdd.ndim != 2
                or len(qdd) != len(states)
                or qdd.shape[1] != len(ms.coordinates)
            ):
                continue
            vals = {}
            for which, fn in funcs.items():
                if fn is None:
                    vals[which] = float("nan")
                    continue
                worst = 0.0
                for (t0, q, qd), a in zip(states, qdd):
                    r, scale = fn(t0, q, qd, a)
                    worst = max(worst, abs(r) / max(scale, 1e-300))
                vals[which] = worst
            res[form] = (vals["printed"], vals["holds"])
        out.append(PublishedCheck(eq, res))
    return out


def _residual_table_html(check: PublishedCheck) -> str:
    eq = check.equation
    rows = []
    for form, (printed, holds) in check.residuals.items():
        cells = [form]
        if eq.misprinted:
            cells.append(_fmt_res(printed))
        cells.append(_fmt_res(holds))
        rows.append(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
        )
    head = (
        ["formulation"]
        + (["as printed"] if eq.misprinted else [])
        + ["corrected" if eq.misprinted else "as printed"]
    )
    return (
        '<table class="residuals"><caption>largest relative residual over '
        "the run's random states, with each formulation's q''</caption><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _fmt_res(x) -> str:
    if x != x:
        return "— (cannot be evaluated)"
    return f"{x:.1e}"


def published_html(checks: list[PublishedCheck], derived: CaseEquations | None) -> str:
    """The published equations of a system beside the derived ones."""
    if not checks:
        return ""
    left = []
    for c in checks:
        eq = c.equation
        block = [
            f'<div class="pub{" misprint" if eq.misprinted else ""}">',
            f"<p><b>{html.escape(eq.number)}</b> in "
            f"<code>{html.escape(eq.source)}</code>"
            + (' <span class="flag">misprint</span>' if eq.misprinted else "")
            + "</p>",
            "<p>as printed:</p>" if eq.misprinted else "",
            math_element(mathml(eq.printed))
            if not eq.misprinted
            else f'<div class="printed">{math_element(mathml(eq.printed))}</div>',
        ]
        if eq.misprinted:
            block += ["<p>corrected:</p>", math_element(mathml(eq.corrected))]
        block += [
            f'<p class="note">{html.escape(eq.note)}</p>',
            _residual_table_html(c),
            "</div>",
        ]
        left.append("\n".join(block))
    right = ""
    if derived is not None:
        right = (
            '<div class="derived"><p>derived by this run '
            f"({html.escape(derived.formulation)}):</p>"
            + equations_html(derived)
            + "</div>"
        )
    return (
        '<div class="side-by-side"><div class="published">'
        + "\n".join(left)
        + "</div>"
        + right
        + "</div>"
    )


def published_partner(
    checks: list[PublishedCheck], cases: list[CaseEquations], reference: str
) -> CaseEquations | None:
    """The derived equations to show beside published ones: those of the
    formulation whose form the document prints (:data:`PUBLISHED_FORMS`),
    else the reference's, else none."""
    by_form = {c.formulation: c for c in cases}
    for c in checks:
        form = PUBLISHED_FORMS.get(c.equation.source)
        if form in by_form:
            return by_form[form]
    return by_form.get(reference)


def published_markdown(checks: list[PublishedCheck]) -> str:
    out = []
    for c in checks:
        eq = c.equation
        out.append(
            f"**{eq.number}** in `{eq.source}`"
            + (" — **misprint**" if eq.misprinted else "")
        )
        if eq.misprinted:
            out.append(
                f"As printed:\n\n$$\n{latex(eq.printed)}\n$$\n\n"
                f"Corrected:\n\n$$\n{latex(eq.corrected)}\n$$"
            )
        else:
            out.append(f"$$\n{latex(eq.printed)}\n$$")
        out.append(eq.note)
        res = "; ".join(
            f"{form} {_fmt_res(h)}"
            + (f" (as printed {_fmt_res(p)})" if eq.misprinted else "")
            for form, (p, h) in c.residuals.items()
        )
        if res:
            out.append(f"Largest relative residual with each formulation's q'': {res}.")
    return "\n\n".join(out)


# ----------------------------------------------------------------------
# A system's Equations part of the report
# ----------------------------------------------------------------------
def equations_section(
    rows, trajectories, *, reference: str = "kane", n_states: int = 20
) -> tuple[str, str]:
    """(html, markdown) of one system variant's Equations part.

    ``rows`` are the report frame's rows of that variant (attributes
    ``case``, ``label``, ``system``, ``variant``, ``formulation``,
    ``ops_raw``, ``ops_cse``); ``trajectories`` the run's arrays by case.
    """
    untrusted: list[str] = []
    cases = case_equations(rows, trajectories, untrusted)
    if untrusted:
        note = (
            "Equations not shown, their files not signed with this user's "
            "key (written by someone else, or damaged): " + "; ".join(untrusted)
        )
        html_note, md_note = f"<p>{html.escape(note)}</p>", note
    else:
        html_note = md_note = ""
    if not cases:
        return (
            html_note
            or "<p>The run kept no equations for these cases (a run of an "
            "older version, or every case failed before deriving).</p>",
            md_note or "The run kept no equations for these cases.",
        )
    order = {f: i for i, f in enumerate([reference])}
    cases.sort(key=lambda c: (order.get(c.formulation, 1), c.formulation))
    html_parts, md_parts = [html_note] * bool(html_note), [md_note] * bool(md_note)
    r0 = rows[0]
    qdd = {r.formulation: trajectories.get(r.case, {}).get("qdd") for r in rows}
    qdd = {f: a for f, a in qdd.items() if a is not None}
    checks = []
    from eomcompare.systems.seed_equations import PUBLISHED_SYSTEMS

    # An equation that cannot be evaluated is shown with its residual as
    # "cannot be evaluated" (published_checks); any exception is a bug.
    if r0.system in PUBLISHED_SYSTEMS:
        checks = published_checks(r0.system, variant_options(r0.variant), qdd, n_states)
    beside = None
    if checks:
        beside = published_partner(checks, cases, reference)
        html_parts.append("<h5>As published, beside the derived equations</h5>")
        html_parts.append(published_html(checks, beside))
        md_parts.append("*As published:*\n\n" + published_markdown(checks))
    html_parts.append('<div class="eq-grid">')
    shown: list[CaseEquations] = [beside] if beside is not None else []
    simplified: dict = {}
    for c in cases:
        if c is beside:
            continue  # shown beside the published ones above
        same = next((o for o in shown if same_equations(o, c)), None)
        html_parts.append(
            equations_html(c, simplified) if same is None else same_html(c, same)
        )
        if same is None:
            shown.append(c)
    html_parts.append("</div>")
    md_parts += [equations_markdown(c) for c in cases]
    return "\n".join(html_parts), "\n\n".join(md_parts)
