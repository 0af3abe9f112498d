"""Canonical operation counts: the same pass for every formulation, so that
formulations deriving the same equations count the same, and the count per
evaluation (mass matrix, forcing and the solve of the unknowns)."""

from __future__ import annotations

import pytest
import sympy as sm

from eomcompare.formulations import get_formulation
from eomcompare.formulations.base import canonical_counts

#: (system, formulation, its peer): sympy's own KanesMethod and
#: LagrangesMethod derive the same equations in the same unknowns.
PAIRS = [
    ("double_pendulum", "kane", "sympy_kane"),
    ("double_pendulum", "lagrange", "sympy_lagrange"),
    ("double_pendulum", "gibbs_appell", "sympy_kane"),
    ("double_pendulum", "modified_lagrange", "sympy_lagrange"),
    ("kolev_manipulator", "kane", "sympy_kane"),
    ("kolev_manipulator", "lagrange", "sympy_lagrange"),
]


@pytest.mark.parametrize("system,formulation,peer", PAIRS)
def test_canonical_counts_agree_with_the_peers(system, formulation, peer):
    ours = get_formulation(formulation).derive(system)
    theirs = get_formulation(peer).derive(system)
    assert ours.n_unknowns == theirs.n_unknowns
    a, b = ours.op_counts["canonical"], theirs.op_counts["canonical"]
    assert abs(a - b) <= 0.1 * b, (a, b)
    # Per evaluation the same solve is added to both.
    pa = ours.op_counts["per_evaluation"]["total"]
    pb = theirs.op_counts["per_evaluation"]["total"]
    assert abs(pa - pb) <= 0.1 * pb, (pa, pb)


def test_as_derived_counts_differ_where_canonical_ones_agree():
    # What the canonical count is for: on kolev_manipulator kane keeps
    # m2*(sin(q3)**2 + cos(q3)**2)-like sums that sympy_kane cancelled.
    kane = get_formulation("kane").derive("kolev_manipulator").op_counts
    peer = get_formulation("sympy_kane").derive("kolev_manipulator").op_counts
    assert kane["cse"] > 1.2 * peer["cse"]
    assert kane["canonical"] <= kane["cse"]
    assert kane["trigsimp"] == "off"


def test_per_evaluation_is_mass_matrix_forcing_and_solve_by_hand():
    a, b, c, g, q, u = sm.symbols("a b c g q u")
    M = sm.Matrix([[a, b * sm.cos(q)], [b * sm.cos(q), c]])
    f = sm.Matrix([b * sm.sin(q) * u**2, -g * sm.sin(q) + u])
    counts = canonical_counts(M, f, {a, b, c, g})
    per = counts["per_evaluation"]
    # By hand, parameters (a, b, c, g) free, sin(q) and cos(q) calls apart:
    # M is symmetric as written, its lower triangle a, b*cos(q), c: 1 mul.
    # f: b*sin(q)*u**2 is u*u, then two products: 3 mul; -g*sin(q) + u:
    # 1 mul (the sign is free), 1 add.  M and f: 5 mul, 1 add.
    # LDL^T of 2x2: r0 = 1/d0 (1), L10 = M10*r0 (1), v = L10*d0 (1),
    # d1 = M11 - L10*v (1 mul, 1 add), r1 = 1/d1 (1): 5 mul, 1 add;
    # y1 = b1 - L10*y0 (1 mul, 1 add); x1 = y1*r1 (1 mul);
    # x0 = y0*r0 - L10*x1 (2 mul, 1 add): 4 mul, 2 add.  Solve: 9 mul, 3 add.
    assert (per["solve_mul"], per["solve_add"]) == (9, 3)
    assert (per["mul"], per["add"]) == (5 + 9, 1 + 3)
    assert per["total"] == 18
    assert per["unknowns"] == 2
    assert per["calls"] == {"cos": 1, "sin": 1}


def test_an_unsymmetric_mass_matrix_is_solved_by_lu():
    a, b, c, q = sm.symbols("a b c q")
    M = sm.Matrix([[a, b], [c, a]])
    f = sm.Matrix([q, q])
    per = canonical_counts(M, f, {a, b, c})["per_evaluation"]
    # M and f cost nothing.  LU of 2x2 with partial pivoting: one
    # reciprocal per pivot (2), the multiplier l = M10*r0 (1), the update
    # M11 - l*M01 (1 mul, 1 add), forward b1 - l*b0 (1 mul, 1 add), back
    # x1 = b1*r1 (1), x0 = (b0 - M01*x1)*r0 (2 mul, 1 add): 8 mul, 3 add.
    assert (per["solve_mul"], per["solve_add"]) == (8, 3)
    assert per["total"] == 11


def test_the_canonical_count_never_exceeds_the_count_as_derived():
    # rolling_disc by lagrange: the pass's expansion step shrinks the tree
    # but loses sharing cse would use (640 against 472 before the bound).
    for formulation in ("lagrange", "kane"):
        counts = get_formulation(formulation).derive("rolling_disc").op_counts
        assert counts["canonical"] <= counts["cse"], formulation


def test_a_bound_below_the_canonical_count_counts_the_form_as_derived():
    q = sm.Function("q")(sm.Symbol("t"))
    m = sm.Symbol("m")
    M = sm.Matrix([[m * (sm.sin(q) ** 2 + sm.cos(q) ** 2)]])
    f = sm.Matrix([m * sm.sin(q)])
    free = canonical_counts(M, f, [m])
    assert free["canonical_form"] == "canonical"
    # The canonical M is m: one fewer entry with operations than as derived.
    bounded = canonical_counts(M, f, [m], as_derived=0)
    assert bounded["canonical_form"] == "as derived"
    assert bounded["canonical"] > free["canonical"]


def test_counts_are_taken_in_the_context_given_and_are_the_same():
    """``counted_in``: a derivation enters the context around its counts
    alone (after its timed part), and counts the same."""
    from contextlib import contextmanager

    from eomcompare.formulations import get_formulation
    from eomcompare.formulations.base import counted_in

    events = []
    form = get_formulation("kane")
    real = form._derive

    def derive(system, stage):
        events.append("derive")
        return real(system, stage)

    form._derive = derive

    @contextmanager
    def context():
        events.append("enter")
        yield
        events.append("exit")

    with counted_in(context):
        inside = form.derive("double_pendulum")
    assert events == ["derive", "enter", "exit"]
    outside = get_formulation("kane").derive("double_pendulum")
    counts = [
        {k: v for k, v in eom.op_counts.items() if k != "canonical_s"}
        for eom in (inside, outside)
    ]
    assert counts[0] == counts[1] and counts[0]["cse"] > 0
