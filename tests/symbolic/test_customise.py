"""The customisation passes (:mod:`eomcompare.symbolic.customise`) on a case counted
by hand."""

from __future__ import annotations

import pytest
import sympy as sm

from eomcompare.symbolic.customise import PASSES, customisation_passes, trig_occurrences

a, b, c, z, o, x, q = sm.symbols("a b c z o x q")


def test_each_pass_on_a_hand_counted_case():
    # Parameters a, b, c, z (zero), o (one); inputs x, q.
    e1 = z * x**2 + o * x * sm.sin(q) + a * b * x
    e2 = c * x * sm.cos(q) + sm.sin(q)
    rows = customisation_passes([e1, e2], [a, b, c, z, o], zero=[z], values={o: 1.0})
    got = {r["pass"]: r for r in rows}
    assert [r["pass"] for r in rows] == list(PASSES)
    # As derived: z*x**2 (x**2, z*.: 2 mul), o*x*sin (2), a*b*x (2), c*x*cos
    # (2); 2 + 1 additions; sin twice and cos once as written.
    assert (got["cse"]["mul"], got["cse"]["add"], got["cse"]["calls"]) == (8, 3, 3)
    # z = 0 removes z*x**2: 2 mul and its addition.
    assert (got["zero products"]["saved_mul"], got["zero products"]["saved_add"]) == (
        2,
        1,
    )
    # o = 1 removes one multiplication.
    assert got["unit factors"]["saved_mul"] == 1
    assert got["unit factors"]["mul"] == 5
    # a*b once per parameter set: one multiplication moves apart.
    cst = got["constants"]
    assert (cst["mul"], cst["add"], cst["param_mul"], cst["saved_mul"]) == (4, 2, 1, 1)
    # sin(q) evaluated once for both expressions.
    trig = got["shared trig"]
    assert (trig["calls"], trig["saved_calls"], trig["mul"]) == (2, 1, 4)


def test_trig_occurrences_counts_each_call_as_written():
    e = sm.sin(q) * x + sm.sin(q) * a + sm.cos(q + x)
    assert trig_occurrences([e]) == {"sin": 2, "cos": 1}


def test_a_zero_that_is_not_a_parameter_is_refused():
    with pytest.raises(ValueError, match="not among the parameters"):
        customisation_passes([a * x], [a], zero=[x])
