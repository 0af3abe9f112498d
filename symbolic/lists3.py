"""3-vectors and 3x3 matrices as plain lists, without products by zero.

The recursive tree algorithms (the articulated-body recursion, the
customised Newton-Euler recursion) build their expressions a component at
a time; a product with a structural zero would enter the operation counts
as work the evaluation never needs.  Each function here forms only the
products of two nonzero entries, in the order of the inner index.  A
matrix is a list of three rows, or a 3x3 sympy Matrix.

>>> import sympy as sm
>>> a, b = sm.symbols("a b")
>>> cross([a, 0, 0], [0, b, 0])
[0, 0, a*b]
>>> mv(sm.eye(3), [a, b, 0])
[a, b, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sympy as sm

__all__ = ["nz", "product", "dot", "mv", "mtv", "cross", "add", "scale"]


def nz(x: Any) -> bool:
    """Whether ``x`` is not a structural zero."""
    return x != 0


def _rows(A: Any) -> Sequence[Sequence[Any]]:
    if isinstance(A, sm.MatrixBase):
        return [[A[i, j] for j in range(3)] for i in range(3)]
    return A


def dot(a: Sequence[Any], b: Sequence[Any]) -> Any:
    """``a . b``: the sum of the products of nonzero pairs."""
    return sm.Add(*[x * y for x, y in zip(a, b) if nz(x) and nz(y)])


def mv(A: Any, v: Sequence[Any]) -> list[Any]:
    """``A v``."""
    rows = _rows(A)
    return [dot(rows[i], v) for i in range(3)]


def mtv(A: Any, v: Sequence[Any]) -> list[Any]:
    """``A^T v``."""
    rows = _rows(A)
    return [dot([rows[k][i] for k in range(3)], v) for i in range(3)]


def product(x: Any, y: Any) -> Any:
    """``x y``, or zero without a product when either is a structural zero."""
    return x * y if nz(x) and nz(y) else sm.S.Zero


def cross(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
    """``a x b``."""
    p = product
    return [
        p(a[1], b[2]) - p(a[2], b[1]),
        p(a[2], b[0]) - p(a[0], b[2]),
        p(a[0], b[1]) - p(a[1], b[0]),
    ]


def add(*vs: Sequence[Any]) -> list[Any]:
    """The entrywise sum of 3-vectors."""
    return [sm.Add(*xs) for xs in zip(*vs)]


def scale(c: Any, v: Sequence[Any]) -> list[Any]:
    """``c v``, zero entries left without a product."""
    return [c * x if nz(x) else sm.S.Zero for x in v]
