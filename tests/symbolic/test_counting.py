"""symbolic.counting against sympy's own ``count_ops`` and against closed
forms on expressions whose shared subtrees make the expanded tree
exponentially large."""

from __future__ import annotations

import pytest
import sympy as sm
import sympy.physics.mechanics as me
from helpers import random_expression
from hypothesis import given
from hypothesis import strategies as st

from eomcompare.formulations import get_formulation
from eomcompare.symbolic.counting import count_kinds, count_ops, tree_size

t = me.dynamicsymbols._t
x, y, z = sm.symbols("x y z")
q = me.dynamicsymbols("q")
f = sm.Function("f")

# Every branch of sympy's walk: signs of sums, reciprocals, rationals,
# exp and E, functions of time and their derivatives, lattice operations.
EDGES = [
    -x - y,
    -x + y,
    x - y,
    1 / (x + y),
    -2 / x,
    x**-1,
    sm.exp(x),
    sm.exp(x + y) * y,
    sm.E,
    f(t).diff(t),
    q.diff(t, 2) * sm.sin(q),
    sm.Max(x, y, z),
    sm.Rational(-1, 3),
    sm.Integer(-1),
    sm.Integer(1),
    -x,
    2 * x / (3 * y),
    -(x + y) / z,
    sm.sin(x) ** 2 - sm.cos(y) / x,
    sm.sqrt(x + y),
    (x - y) * (-z),
    -x * y * sm.sin(-z),
    -sm.Rational(1, 2) * x / (y + 1),
]


@pytest.mark.parametrize("expr", EDGES, ids=str)
def test_count_ops_equals_sympys_on_each_kind_of_node(expr):
    assert count_ops(expr) == sm.count_ops(expr)


_LEAVES = [x, y, z, q, q.diff(t), sm.Integer(2), sm.Rational(-1, 2), sm.Integer(-3)]
_UNARY = [sm.sin, sm.cos, sm.exp, sm.sqrt, lambda a: -a, lambda a: 1 / (a + 1)]
_BINARY = [sm.Add, sm.Mul, lambda a, b: a - b, lambda a, b: a / (b + 2), sm.Pow]


def _expr(draw, depth):
    return random_expression(draw, _LEAVES, _UNARY, _BINARY, depth)


@given(st.composite(lambda draw: _expr(draw, 5))())
def test_count_ops_equals_sympys_on_random_expressions(expr):
    assert count_ops(expr) == sm.count_ops(expr)


def _visual(*exprs):
    """sympy's visual count of each expression, summed by kind."""
    out: dict = {}
    for e in exprs:
        terms = sm.sympify(sm.count_ops(e, visual=True)).as_coefficients_dict()
        for k, v in terms.items():
            if k != 1 and v:
                out[str(k)] = out.get(str(k), 0) + int(v)
    return out


@pytest.mark.parametrize("expr", EDGES, ids=str)
def test_count_kinds_equals_sympys_visual_count_on_each_kind_of_node(expr):
    assert count_kinds(expr) == _visual(expr)


def test_a_leading_negative_term_is_a_sub_not_an_add():
    assert count_kinds(-x + y) == {"SUB": 1}
    assert count_kinds(-x + y + z) == {"ADD": 1, "SUB": 1}
    assert count_kinds(-x - y) == {"NEG": 1, "SUB": 1}
    assert count_kinds(x, -y + 2 * z) == {"MUL": 1, "SUB": 1}


@given(st.composite(lambda draw: [_expr(draw, 4) for _ in range(3)])())
def test_count_kinds_equals_sympys_visual_count_on_random_expressions(exprs):
    assert count_kinds(*exprs) == _visual(*exprs)


@pytest.mark.parametrize(
    "system, formulation",
    [("rolling_disc", "gibbs_appell"), ("wheelbarrow", "sympy_kane")],
)
def test_count_kinds_of_a_derivation_after_cse_equals_sympys(system, formulation):
    eom = get_formulation(formulation, count_ops=False).derive(system)
    reps, reduced = sm.cse([*eom.mass_matrix, *eom.forcing], order="none")
    exprs = [e for _, e in reps] + list(reduced)
    assert count_kinds(*exprs) == _visual(*exprs)


@pytest.mark.parametrize(
    "system, formulation",
    [
        ("double_pendulum", "kane"),
        ("four_bar", "lagrange"),
        ("rolling_disc", "gibbs_appell"),
        ("kolev_manipulator", "modified_lagrange"),
    ],
)
def test_raw_count_of_a_derivation_equals_sympys(system, formulation):
    eom = get_formulation(formulation, count_ops=False).derive(system)
    exprs = list(eom.mass_matrix) + list(eom.forcing)
    assert count_ops(*exprs) == sum(sm.count_ops(e) for e in exprs)


def _shared_chain(k):
    """e_0 = x, e_{j+1} = sin(e_j) + cos(e_j): as a tree, s_j = 2 s_{j-1} + 3
    nodes (s_0 = 1, so s_j = 2**(j+2) - 3) and c_j = 2 c_{j-1} + 3
    operations (one ADD, one SIN, one COS; c_0 = 0, so c_j = 3 (2**j - 1)),
    but only 3 j + 1 distinct nodes."""
    e = x
    for _ in range(k):
        e = sm.sin(e) + sm.cos(e)
    return e


def test_closed_forms_of_a_shared_chain_agree_with_sympy_where_it_can_walk():
    for k in range(6):
        e = _shared_chain(k)
        assert count_ops(e) == sm.count_ops(e) == 3 * (2**k - 1)
        assert tree_size(e) == len(list(sm.preorder_traversal(e))) == 2 ** (k + 2) - 3


def test_a_shared_chain_sixty_deep_is_counted_without_walking_every_path():
    # 2**60 paths: a walk of the expanded tree would never end.
    e = _shared_chain(60)
    assert count_ops(e) == 3 * (2**60 - 1)
    assert tree_size(e) == 2**62 - 3


def test_a_memo_shared_between_calls_gives_the_same_totals():
    memo: dict = {}
    a, b = _shared_chain(4), _shared_chain(5)
    assert count_ops(a, memo=memo) + count_ops(b, memo=memo) == count_ops(a, b)


def test_relations_are_refused():
    with pytest.raises(TypeError, match="expressions"):
        count_ops(sm.Eq(x, y))
