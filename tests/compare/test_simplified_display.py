"""Derived equations shown simplified for display only, marked as such,
beside (never instead of) the equations as derived."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
import sympy as sm
from sympy.core.function import AppliedUndef

from eomcompare.compare.equations import (
    CaseEquations,
    equations_html,
    equations_markdown,
)
from eomcompare.compare.simplified import MARK, NOTE, display_form


def test_the_display_form_collapses_what_a_hand_simplification_would():
    m1, m2, q, x, y = sm.symbols("m1 m2 q x y")
    M = sm.Matrix(
        [
            [m1 + m2 * (sm.sin(q) ** 2 + sm.cos(q) ** 2), 0],
            [0, m2 * (2 * sm.sin(q) ** 2 + 2 * sm.cos(q) ** 2) / 2],
        ]
    )
    f = sm.Matrix([m2 * (2 * x + 2 * y) / 2, 1.0 * x])
    Ms, fs = display_form(M, f)
    # By hand: sin² + cos² = 1, (2x + 2y)/2 = x + y, 1.0 x = x.
    assert Ms == sm.Matrix([[m1 + m2, 0], [0, m2]])
    assert fs == sm.Matrix([m2 * (x + y), x])


def test_nothing_to_simplify_shows_nothing():
    m, q = sm.symbols("m q")
    assert display_form(sm.Matrix([[m]]), sm.Matrix([m * sm.sin(q)])) is None


@pytest.mark.slow
def test_a_real_case_shows_both_forms_equal_in_value_the_simplified_marked():
    from eomcompare.formulations import get_formulation

    # kane's equations of the double pendulum shrink under the canonical
    # pass (48 operations after cse as derived, 32 after trigsimp).
    eom = get_formulation("kane").derive("double_pendulum")
    case = CaseEquations.of(eom)
    data = case.data
    page = equations_html(case)
    block = re.search(
        r'<details class="simplified"><summary>(.*?)</summary>(.*?)</details>',
        page,
        re.S,
    )
    assert block and block.group(1) == MARK
    # The derived equations come first, outside the marked block.
    assert page.index("<math") < block.start()
    assert html.escape(NOTE) in block.group(2)
    assert "simplified for display only" in equations_markdown(case).lower()
    # The simplified form equals the derived one at random points.
    M, f = data["mass_matrix"], data["forcing"]
    Ms, fs = display_form(M, f)
    exprs = [*sm.Matrix(M), *sm.Matrix(f)]
    simple = [*Ms, *fs]
    rng = np.random.default_rng(0)
    everything = exprs + simple
    derivatives = set().union(*(e.atoms(sm.Derivative) for e in everything))
    functions = set().union(*(e.atoms(AppliedUndef) for e in everything))
    for _ in range(3):
        # Rates first, then the functions of time, then the constants.
        rates = {d: rng.uniform(0.3, 1.7) for d in derivatives}
        at = [e.xreplace(rates) for e in everything]
        values = {g: rng.uniform(0.3, 1.7) for g in functions}
        at = [e.xreplace(values) for e in at]
        symbols = set().union(*(e.free_symbols for e in at))
        point = {x: rng.uniform(0.3, 1.7) for x in symbols}
        values = np.array([float(e.xreplace(point)) for e in at])
        n = len(exprs)
        assert np.allclose(values[:n], values[n:], rtol=1e-12, atol=1e-12)
    assert sum(map(sm.count_ops, simple)) < sum(map(sm.count_ops, exprs))
    # Another formulation whose equations simplify to the same form links
    # to the first one's instead of typesetting it again.
    seen: dict = {}
    other = CaseEquations(
        "double_pendulum", "sympy_kane", data, case.ops_raw, case.ops_cse
    )
    first, second = equations_html(case, seen), equations_html(other, seen)
    assert first.count('class="simplified"') == second.count('class="simplified"') == 1
    block = re.search(r'<details class="simplified">.*?</details>', second, re.S)
    assert "<math" not in block.group(0)
    assert 'href="#eq-double_pendulum-kane"' in block.group(0)


@pytest.mark.slow
def test_a_simplified_form_beyond_its_budget_is_left_out(monkeypatch):
    import eomcompare.compare.equations as equations
    from eomcompare.formulations import get_formulation

    eom = get_formulation("kane").derive("double_pendulum")
    case = CaseEquations.of(eom)
    assert 'class="simplified"' in equations_html(case)
    monkeypatch.setattr(equations, "SIMPLIFIED_BUDGET", 100)
    page = equations_html(case, {})
    assert 'class="simplified"' not in page
    assert page.count("<math") >= 1  # the derived equations stay
