"""Notebook display: a declaration and its equations as HTML for IPython
and Jupyter (:func:`system_html`, :func:`eom_html`), registered with a
running IPython by :func:`register_notebook_display`.
"""

from __future__ import annotations

import html

import sympy.physics.mechanics as me

from .equations import (
    EQ,
    LARGE_OPS,
    LARGE_ROWS,
    CaseEquations,
    equations_html,
    expression_ops,
    fmt_int,
    is_large,
    math_element,
    mathml,
    mrow,
)

__all__ = ["eom_html", "register_notebook_display", "system_html"]


def _facts_table(rows) -> str:
    """A two-column table of (heading, HTML cell) pairs."""
    return (
        '<table class="eom-facts">'
        + "".join(
            f'<tr><th style="text-align:left">{html.escape(k)}</th>'
            f'<td style="text-align:left">{v}</td></tr>'
            for k, v in rows
        )
        + "</table>"
    )


def _inline(exprs) -> str:
    """Expressions as one inline MathML list, or — when there are none."""
    exprs = list(exprs)
    if not exprs:
        return "—"
    sep = "<mo separator='true'>,</mo>"
    return math_element(sep.join(mathml(e) for e in exprs), block=False)


def eom_html(eom) -> str:
    """An :class:`~eomcompare.formulations.EquationsOfMotion` as a notebook shows it
    (``_repr_html_``): its sizes and counts, then ``M z = f`` in MathML as
    the report typesets it; large systems show their structure and first
    entries, and the whole is collapsed in a ``<details>``."""
    case = CaseEquations.of(eom)
    seconds = eom.timings.get("total", float("nan"))
    facts = _facts_table(
        [
            ("system", html.escape(eom.system.name)),
            ("formulation", html.escape(eom.formulation)),
            (
                "equations, unknowns, multipliers",
                f"{eom.n_equations}, {eom.n_unknowns}, {eom.n_multipliers}",
            ),
            (
                "operations raw, after cse",
                f"{fmt_int(case.ops_raw)}, {fmt_int(case.ops_cse)}",
            ),
            ("derivation s", "—" if seconds != seconds else f"{seconds:.3g}"),
        ]
    )
    body = equations_html(case)
    if is_large(case):
        body = (
            f"<details><summary>the equations ({eom.n_equations} rows; "
            "structure and first entries)</summary>" + body + "</details>"
        )
    return f'<div class="eom">{facts}{body}</div>'


def system_html(ms) -> str:
    """A :class:`~eomcompare.systems.MechanicalSystem` as a notebook shows it
    (``_repr_html_``): coordinates, speeds, constraints, bodies and loads,
    the expressions in MathML."""

    def equations(exprs) -> str:
        exprs = list(exprs)
        if not exprs:
            return "—"
        if len(exprs) > LARGE_ROWS or sum(map(expression_ops, exprs)) > LARGE_OPS:
            return f"{len(exprs)} (too large to typeset here)"
        rows = "".join(
            f"<mtr><mtd>{mrow(mathml(e), EQ, '<mn>0</mn>')}</mtd></mtr>" for e in exprs
        )
        return math_element(f'<mtable columnalign="left">{rows}</mtable>', block=False)

    def load(ld) -> str:
        where = getattr(ld, "location", None)
        what = "force at" if isinstance(where, me.Point) else "torque on"
        return f"{what} {html.escape(str(getattr(where, 'name', where)))}"

    bodies = ", ".join(
        f"{html.escape(b.name)} ({_inline([b.mass])})"
        if getattr(b, "mass", 0) != 0
        else html.escape(b.name)
        for b in ms.bodies
    )
    rows = [
        ("name", html.escape(ms.name)),
        (
            f"coordinates ({len(ms.coordinates)}; "
            f"{ms.degrees_of_freedom} degrees of freedom)",
            _inline(ms.coordinates),
        ),
        ("dependent coordinates", _inline(ms.q_dep)),
        (f"speeds ({len(ms.speeds)})", _inline(ms.speeds)),
        ("dependent speeds", _inline(ms.u_dep)),
        (
            f"holonomic constraints ({len(ms.holonomic_constraints)})",
            equations(ms.holonomic_constraints),
        ),
        (
            f"nonholonomic constraints ({len(ms.nonholonomic_constraints)})",
            equations(ms.nonholonomic_constraints),
        ),
        (f"bodies ({len(ms.bodies)})", bodies or "—"),
        (
            f"loads ({len(ms.loads)})",
            html.escape(", ".join(load(ld) for ld in ms.loads)) or "—",
        ),
    ]
    return f'<div class="mechanical-system">{_facts_table(rows)}</div>'


# ----------------------------------------------------------------------
# Published equations beside the derived ones
# ----------------------------------------------------------------------
def register_notebook_display() -> bool:
    """Show :class:`~eomcompare.formulations.EquationsOfMotion` and
    :class:`~eomcompare.systems.MechanicalSystem` in IPython and Jupyter as
    :func:`eom_html` and :func:`system_html` draw them.

    The two classes live on floors below the harness, which typesets them,
    so they carry no ``_repr_html_`` of their own: importing
    :mod:`eomcompare.compare` registers these with a running IPython's HTML
    formatter.  Returns whether one took them (False outside IPython).
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    from eomcompare.formulations import EquationsOfMotion
    from eomcompare.systems import MechanicalSystem

    html_formatter = shell.display_formatter.formatters["text/html"]
    html_formatter.for_type(EquationsOfMotion, eom_html)
    html_formatter.for_type(MechanicalSystem, system_html)
    return True
