"""Building and reading sympy matrices without the checks of their
constructor.

A derivation builds thousands of small matrices (3-vectors of components,
3x3 rotations, rows of partial velocities) whose entries are sympy
expressions already.  ``sympy.Matrix(rows, cols, entries)`` sympifies and
inspects every entry and guesses its shape from nested input first: about
a hundred microseconds for a 3x3, more than the arithmetic that filled it.
:func:`matrix` gives the same matrix from a flat list of expressions
directly, :func:`entries` reads one back as a flat list.

>>> import sympy as sm
>>> x, y = sm.symbols("x y")
>>> A = matrix(2, 2, [x, 0, sm.Float(0.5), y])
>>> A == sm.Matrix(2, 2, [x, 0, sm.Float(0.5), y]), type(A) is type(sm.Matrix())
(True, True)
>>> entries(A)
[x, 0, 0.500000000000000, y]
"""

from __future__ import annotations

import sympy as sm

__all__ = ["matrix", "entries"]

try:  # the representation sympy's dense matrices have held since 1.9
    from sympy.polys.domains import EXRAW as _EXRAW
    from sympy.polys.matrices import DomainMatrix as _DomainMatrix

    _FROMREP = getattr(sm.MutableDenseMatrix, "_fromrep", None)
except ImportError:  # pragma: no cover - other sympy versions
    _FROMREP = None


def matrix(rows: int, cols: int, flat) -> sm.Matrix:
    """``sympy.Matrix(rows, cols, flat)`` for a flat list of sympy
    expressions, the same mutable dense matrix.

    The entries are stored as sympy's constructor stores them (those
    ``!= 0``, in its domain of raw expressions); a matrix of integers or
    rationals only, which sympy keeps in an exact number domain, goes
    through the constructor itself.
    """
    flat = list(flat)
    if len(flat) != rows * cols:
        raise ValueError(f"{len(flat)} entries for a {rows}x{cols} matrix")
    if _FROMREP is None or all(isinstance(e, sm.Rational) for e in flat):
        return sm.Matrix(rows, cols, flat)
    dod: dict = {}
    for n, e in enumerate(flat):
        if not isinstance(e, sm.Expr):
            return sm.Matrix(rows, cols, flat)
        if e != 0:
            i, j = divmod(n, cols)
            dod.setdefault(i, {})[j] = e
    return _FROMREP(_DomainMatrix(dod, (rows, cols), _EXRAW))


def entries(A) -> list:
    """The entries of a matrix, row by row, as a list."""
    flat = getattr(A, "flat", None)
    return flat() if callable(flat) else list(A)
