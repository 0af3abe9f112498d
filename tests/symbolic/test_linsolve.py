"""The one symbolic linear solver (symbolic.linsolve)."""

import numpy as np
import pytest
import sympy as sm

from eomcompare.symbolic.linsolve import _guided_elimination, solve_linear


def _is_zero(e):
    return sm.simplify(e) == 0


def test_guided_elimination_avoids_a_pivot_vanishing_at_the_samples():
    """Large dependent blocks are eliminated with pivots chosen at numeric
    samples; the first symbolic pivot here is sin(th), zero at th = 0."""
    th = sm.Symbol("th")
    A = sm.Matrix([[sm.sin(th), sm.cos(th)], [sm.cos(th), -sm.sin(th)]])
    b = sm.Matrix([1, 2])
    sample = np.array([[0.0, 1.0], [1.0, 0.0]])  # A at th = 0
    X = _guided_elimination(A, b, [sample])
    assert all(_is_zero(e) for e in A * X - b)
    assert X.subs(th, 0) == sm.Matrix([2, 1])  # finite at th = 0
    assert A == sm.Matrix(
        [[sm.sin(th), sm.cos(th)], [sm.cos(th), -sm.sin(th)]]
    )  # input untouched


def test_solve_linear_blocks_and_singular_matrices():
    a, b, c = sm.symbols("a b c")
    th = sm.Symbol("theta")
    # Two independent blocks, permuted: a 2x2 rotation and a 1x1.
    A = sm.Matrix(
        [[sm.sin(th), 0, sm.cos(th)], [0, a, 0], [sm.cos(th), 0, -sm.sin(th)]]
    )
    rhs = sm.Matrix([b, c, 1])
    X = solve_linear(A, rhs)
    vals = {a: 2.0, b: 0.3, c: 0.4, th: 0.0}
    Xn = np.array(X.xreplace(vals), dtype=float).ravel()
    An = np.array(A.xreplace(vals), dtype=float)
    np.testing.assert_allclose(An @ Xn, [0.3, 0.4, 1.0])
    with pytest.raises(ValueError, match="singular"):
        solve_linear(sm.Matrix([[a, b], [2 * a, 2 * b]]), sm.Matrix([1, 2]))
    with pytest.raises(ValueError, match="singular"):
        solve_linear(sm.Matrix([[a, b], [0, 0]]), sm.Matrix([1, 2]))
