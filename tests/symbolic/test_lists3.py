"""The list algebra of the recursive tree algorithms: the same values as
sympy's matrices, and no product with a structural zero."""

import sympy as sm

from eomcompare.symbolic import lists3 as v3


def test_values_equal_sympys_matrix_algebra():
    a = sm.symbols("a0:3")
    b = sm.symbols("b0:3")
    A = sm.Matrix(3, 3, sm.symbols("A0:9"))
    assert sm.Matrix(v3.cross(a, b)) == sm.Matrix(a).cross(sm.Matrix(b))
    assert sm.expand(v3.dot(a, b) - sm.Matrix(a).dot(sm.Matrix(b))) == 0
    assert sm.Matrix(v3.mv(A, b)) == A * sm.Matrix(b)
    assert sm.Matrix(v3.mtv(A, b)) == A.T * sm.Matrix(b)
    rows = [[A[i, j] for j in range(3)] for i in range(3)]
    assert v3.mv(rows, b) == v3.mv(A, b)
    assert sm.Matrix(v3.add(a, b, a)) == 2 * sm.Matrix(a) + sm.Matrix(b)
    assert sm.Matrix(v3.scale(b[0], a)) == b[0] * sm.Matrix(a)


def test_no_product_with_a_structural_zero():
    # An entry that stays symbolic after a product with 0 (oo * 0 is nan in
    # sympy) shows whether the product was formed.
    x, y = sm.symbols("x y")
    a = [x, 0, 0]
    b = [sm.oo, y, 0]
    assert v3.cross(a, b) == [0, 0, x * y]
    assert v3.dot([0, y, 0], b) == y**2
    assert v3.mv([[0, 1, 0], [0, 0, 0], [1, 0, 0]], [sm.oo, y, 0]) == [y, 0, sm.oo]
    assert v3.scale(sm.oo, [0, x, 0]) == [0, sm.oo * x, 0]
