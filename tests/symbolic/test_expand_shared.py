"""symbolic.canonical.expand_shared against sympy.expand(power_exp=False,
log=False), whose steps it repeats with each distinct subexpression once:
the results must be the same expressions, node for node."""

from __future__ import annotations

import pytest
import sympy as sm
import sympy.physics.mechanics as me
from helpers import random_expression
from hypothesis import given
from hypothesis import strategies as st

from eomcompare.formulations import get_formulation
from eomcompare.symbolic.canonical import expand_shared

t = me.dynamicsymbols._t
q1, q2 = me.dynamicsymbols("q1 q2")
x, y, m = sm.symbols("x y m")


def _sympys(e):
    return sm.expand(e, power_exp=False, log=False)


def _same(a, b):
    return sm.srepr(a) == sm.srepr(b)


@pytest.mark.parametrize(
    "expr",
    [
        (x + y) ** 2 * (x - y),
        m * (sm.sin(q1) * x + sm.cos(q2)) * (sm.cos(q1) - y),
        (sm.sin(q1) + sm.cos(q1)) ** 3,
        # power_base on, power_exp off: (x*y)**2 splits, x**(a+b) does not
        (x * sm.sin(q1)) ** 2 + x ** (y + 1),
        sm.sin(x * (y + 1)) * (x + 1),
        (x + 1) / (y * (x + 2)),
        sm.exp(x + y) * (x + q1),
        sm.log(x * y) * (x + 1),
        q1.diff(t) * (q1.diff(t) + q2) * sm.sin(q1 - q2),
    ],
    ids=str,
)
def test_the_same_expression_as_sympys_expand(expr):
    assert _same(expand_shared(expr), _sympys(expr))


_LEAVES = [x, y, m, q1, q2, q1.diff(t), sm.Integer(2), sm.Rational(-1, 2)]
_UNARY = [sm.sin, sm.cos, lambda a: -a, lambda a: a**2, lambda a: 1 / (a + 1)]
_BINARY = [sm.Add, sm.Mul, lambda a, b: a - b, lambda a, b: a * (b + 1)]


def _expr(draw, depth):
    return random_expression(draw, _LEAVES, _UNARY, _BINARY, depth)


@given(st.composite(lambda draw: [_expr(draw, 4) for _ in range(3)])())
def test_the_same_expressions_as_sympys_expand_with_one_memo(exprs):
    # One memo for several expressions, as the canonical pass shares it
    # between the entries of a derivation.
    memo: dict = {}
    for e in exprs:
        assert _same(expand_shared(e, memo), _sympys(e))


def test_the_terms_of_a_derivation_expand_as_sympy_expands_them():
    eom = get_formulation("kane", count_ops=False).derive("rolling_disc")
    memo: dict = {}
    terms = [t for e in [*eom.mass_matrix, *eom.forcing] for t in sm.Add.make_args(e)]
    assert len(terms) > 10
    for term in terms:
        assert _same(expand_shared(term, memo), _sympys(term))
