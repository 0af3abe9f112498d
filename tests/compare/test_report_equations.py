"""The report's typeset equations: the collapsed parts of a large system
within their budget, the cse'd form the count after cse was taken on, and
entries left out unprinted when they are too long."""

from __future__ import annotations

import re


def test_the_equations_of_a_large_system_are_typeset_within_a_budget():
    """Each collapsed part of a large system's equations (further entries,
    the cse'd form) holds at most MATHML_BUDGET characters of MathML and
    counts what it leaves out."""
    from eomcompare.compare.equations import (
        MATHML_BUDGET,
        CaseEquations,
        equations_html,
    )
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    eom = get_formulation("kane").derive(get_system("n_link_pendulum", n=5))
    case = CaseEquations.of(eom, "n_link_pendulum[n=5]")
    page = equations_html(case)
    parts = re.findall(r"<details><summary>(.*?)</summary>(.*?)</details>", page, re.S)
    assert len(parts) == 2
    for _, body in parts:
        typeset = sum(len(m) for m in re.findall(r"<math.*?</math>", body, re.S))
        assert typeset <= MATHML_BUDGET + 200
    # Five links: more than the budget holds, so something is counted out.
    assert "not typeset here" in page or "not shown" in page
    assert "unpack_equations" in page


def test_the_cse_shown_is_the_one_the_count_after_cse_was_taken_on():
    """The equations' cse'd form in the report is the common-subexpression
    elimination whose operations are the row's count after cse."""
    import sympy as sm

    from eomcompare.compare.equations import _cse_block
    from eomcompare.formulations import get_formulation
    from eomcompare.symbolic.counting import count_kinds
    from eomcompare.systems import get_system

    eom = get_formulation("lagrange").derive(get_system("rolling_disc"))
    M, f = eom.mass_matrix, eom.forcing
    shown = int(re.match(r"<p>(\d+) common subexpressions", _cse_block(M, f))[1])
    counted = sm.cse([*M, *f], order="none")
    assert shown == len(counted[0])
    ops = count_kinds(*[e for _, e in counted[0]], *counted[1])
    assert sum(ops.values()) == eom.op_counts["cse"]


def test_no_expression_is_typeset_shorter_than_its_leaves_allow():
    """What lets the report leave out an entry without printing it: every
    leaf is printed in at least MIN_LEAF_CHARS characters of MathML (signs
    and reciprocals, functions of time and their derivatives, roots)."""
    import sympy as sm
    import sympy.physics.mechanics as me

    from eomcompare.compare.equations import mathml, shortest_mathml
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    x, y = sm.symbols("x y")
    q = me.dynamicsymbols("q")
    t = me.dynamicsymbols._t
    edges = [x - y, -x, -x / y, 1 / x, sm.sqrt(x), 1 / sm.sqrt(x + y), x**-2]
    edges += [sm.Rational(-1, 2) * x, sm.exp(-x), q.diff(t), q.diff(t, 4), sm.S(0)]
    edges += [sm.sin(q) ** 2 * q.diff(t, 2), 0.5 * x, sm.pi * x]
    eom = get_formulation("lagrange").derive(get_system("rolling_disc"))
    entries = [*eom.mass_matrix, *eom.forcing]
    reps, reduced = sm.cse(entries, order="none")
    for e in edges + entries + [r for _, r in reps] + list(reduced):
        assert shortest_mathml(e) <= len(mathml(e)), e


def test_an_entry_beyond_the_budget_is_left_out_unprinted(monkeypatch):
    import sympy as sm

    from eomcompare.compare import equations

    long_sum = sum(sm.symbols("a0:1000"))
    assert equations.expression_ops(long_sum) <= equations.MAX_ENTRY_OPS

    def printed(expr):
        raise AssertionError("printed")

    monkeypatch.setattr(equations, "_mathml", printed)
    assert "(not typeset here)" in equations._entry_html("f_1", long_sum)


def test_a_subexpression_printed_before_prints_the_same_inside_another():
    """The report's printers print each subexpression once and insert its
    markup where it comes again: an equation's MathML and LaTeX are those
    of printers that print it afresh (a new MathML printer; vlatex itself),
    whatever was printed before it."""
    import sympy as sm
    import sympy.physics.mechanics as me
    from sympy.printing.printer import Printer

    from eomcompare.compare import equations as eqs
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    eom = get_formulation("gibbs_appell").derive(get_system("double_pendulum"))
    entries = [*eom.mass_matrix, *eom.forcing]
    q1 = eom.system.coordinates[0]
    sub = entries[0].args[0] if entries[0].args else entries[0]
    # Parts first, then the wholes they stand in, twice over, negated
    # (a minus sign taken out of a product) and in powers.
    exprs = [sub, *entries, sub * q1.diff() - entries[1], (sub + 1) ** 2, -sub]
    exprs += [sm.Matrix([[e, sub], [2 * e, e]]) for e in entries[:2]]

    class Afresh(eqs._Printer):
        def _print(self, expr, **kwargs):  # every node printed anew
            return Printer._print(self, expr, **kwargs)

    shared_mathml = eqs._Printer({"order": "none"})
    shared_latex = eqs._Latex()
    for e in exprs + exprs:
        fresh = Afresh({"order": "none"})._print(sm.sympify(e)).toxml()
        assert shared_mathml._print(sm.sympify(e)).toxml() == fresh
        assert shared_latex.doprint(sm.sympify(e)) == me.vlatex(e)
    # Subexpressions printed before were found (their markup kept).
    assert any(isinstance(v, str) for v in shared_mathml._printed.values())
