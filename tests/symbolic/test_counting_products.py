"""symbolic.counting on products, where it reads the factors instead of
calling sympy's fraction: the numbers must be sympy's own on every kind of
factor fraction treats apart (reciprocals, other powers, exp, zeros,
rationals, products of numbers alone)."""

from __future__ import annotations

import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.counting import count_kinds, count_ops

t = me.dynamicsymbols._t
q = me.dynamicsymbols("q")
x, y, a = sm.symbols("x y a")

PRODUCTS = [
    x * y,
    3 * x * sm.sin(q),
    -3 * x * sm.sin(q) ** 2,
    sm.Float(2.5) * x * sm.cos(q),
    sm.Rational(3, 2) * x * y,
    x * y**-2,
    x / (y + 1),
    x * y**a,
    x * y ** (-a),
    x * y ** sm.Rational(1, 2),
    x * sm.exp(-y),
    x * sm.exp(y),
    q.diff(t) * sm.sin(q) * x,
    sm.sin(q) * sm.cos(q),
    (x + y) * (x - y) * 2,
    sm.Mul(2, 3, evaluate=False),
    sm.Mul(0, x, evaluate=False),
    sm.Mul(sm.Float(0.0), x, evaluate=False),
    sm.Mul(sm.Pow(2, 3, evaluate=False), 2, evaluate=False),
    sm.Mul(x, sm.Rational(1, 3), evaluate=False),
    sm.Mul(-1, x, y, evaluate=False),
    sm.Mul(sm.nan, x, evaluate=False),
    sm.oo * x,
]


def _visual(e):
    out: dict = {}
    for k, v in sm.sympify(sm.count_ops(e, visual=True)).as_coefficients_dict().items():
        if k != 1 and v:
            out[str(k)] = int(v)
    return out


@pytest.mark.parametrize("expr", PRODUCTS, ids=sm.srepr)
def test_count_ops_of_a_product_is_sympys(expr):
    assert count_ops(expr) == sm.count_ops(expr)


@pytest.mark.parametrize("expr", PRODUCTS, ids=sm.srepr)
def test_count_kinds_of_a_product_is_sympys(expr):
    assert count_kinds(expr) == _visual(expr)
