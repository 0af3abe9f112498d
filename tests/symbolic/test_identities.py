"""Identities decided at random points (symbolic.identities)."""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.identities import RandomPoints

t = me.dynamicsymbols._t
q, u = me.dynamicsymbols("q u")
x, y = sm.symbols("x y")


def test_true_identities_vanish_and_others_do_not():
    points = RandomPoints(np.random.default_rng(1), trials=3)
    assert points.vanishes(
        [sm.sin(q + x) - sm.sin(q) * sm.cos(x) - sm.cos(q) * sm.sin(x), sm.S.Zero]
    )
    assert not points.vanishes([sm.sin(q + x) - sm.sin(q) - sm.sin(x)])
    # One non-vanishing entry among vanishing ones decides.
    assert not points.vanishes([sm.S.Zero, sm.cos(q) ** 2 - 1])


def test_derivatives_are_independent_of_their_functions():
    # q'(t) must get its own value, not sin-of-q's: q' - q is not zero,
    # and neither is q'' - q'.
    points = RandomPoints(np.random.default_rng(2))
    assert not points.vanishes([q.diff(t) - q])
    assert not points.vanishes([q.diff(t, 2) - q.diff(t)])
    assert points.vanishes([sm.sin(q.diff(t)) ** 2 + sm.cos(q.diff(t)) ** 2 - 1])


def test_points_are_shared_between_expressions():
    points = RandomPoints(np.random.default_rng(3), trials=4)
    a, b = points.value(sm.sin(q) * x), points.value(x)
    assert a.shape == (4,)
    np.testing.assert_allclose(a / b, points.value(sm.sin(q)))
    np.testing.assert_allclose(
        points.vector(sm.Matrix([x, y])), np.column_stack([b, points.value(y)])
    )


def test_an_expression_without_a_value_does_not_vanish():
    points = RandomPoints(np.random.default_rng(4))
    f = sm.Function("f")
    assert np.all(np.isnan(points.value(f(x))))
    assert not points.vanishes([f(x)])
    assert not points.vanishes([sm.zoo * x])


def test_values_unknown_at_the_points_can_be_left_to_the_caller():
    points = RandomPoints(np.random.default_rng(5))
    f = sm.Function("f")
    assert not points.vanishes([f(x)])  # the safe default
    assert points.vanishes([f(x)], unknown=True)
    # A known nonzero value still decides, whatever ``unknown`` says.
    assert not points.vanishes([f(x), sm.sin(x)], unknown=True)


def test_values_of_shared_subtrees_are_computed_once():
    # A chain of products of sums: a tree of more than 2**40 nodes whose
    # graph has a few hundred; substituting into the tree would never end.
    e = q
    for _ in range(40):
        e = (e + x) * (e - sm.sin(x))
    points = RandomPoints(np.random.default_rng(4), trials=2)
    values = points.value(e)
    # The same chain computed with numbers: the value at each point.
    for k in range(2):
        qv = complex(points.points[k][0][q])
        xv = complex(points.points[k][1][x])
        v = qv
        for _ in range(40):
            v = (v + xv) * (v - np.sin(xv))
        np.testing.assert_allclose(values[k], v, rtol=1e-9)


def test_values_agree_with_sympy_and_mark_poles():
    points = RandomPoints(np.random.default_rng(5), trials=3)
    expr = (
        sm.sqrt(x + sm.Rational(1, 2)) * sm.atan(q.diff(t)) / sm.cosh(y)
        + sm.Abs(x - y)
        + sm.pi
    )
    values = points.value(expr)
    for k, (fvals, svals) in enumerate(points.points):
        ref = complex(expr.xreplace(fvals).xreplace(svals).evalf())
        assert abs(values[k] - ref) < 1e-12 * abs(ref)
    # 1/(x - x) is zoo: no number there, so never a vanishing identity.
    assert np.isnan(
        points.value(sm.Pow(sm.Symbol("w") - sm.Symbol("w"), -1, evaluate=False))
    ).all()
