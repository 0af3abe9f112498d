"""One symbolic linear solver for small constraint blocks, without spurious
pivots.

Every formulation that solves velocity (or rate) constraints for the
dependent speeds uses :func:`solve_linear`.  Gaussian elimination takes the
first symbolically nonzero pivot, which can vanish at ordinary
configurations (``sin(heading)`` of a wheel at heading zero, the upright
Whipple bicycle), leaving 0/0 where the system is perfectly solvable.
"""

from __future__ import annotations

import numpy as np
import sympy as sm

__all__ = ["solve_linear", "ADJUGATE_MAX"]

#: Largest block inverted through its determinant.
ADJUGATE_MAX = 3


def solve_linear(A, rhs, samples=()) -> sm.Matrix:
    """``A^-1 rhs`` for a small symbolic system, without spurious pivots.

    A is split into its independent blocks (connected rows and columns); a
    1x1 block divides directly, blocks up to :data:`ADJUGATE_MAX` go
    through the adjugate over a simplified determinant, whose zeros are the
    true singular configurations, and larger blocks through Gaussian
    elimination whose row pivots are chosen where they are largest at the
    numeric ``samples`` of A (without samples: the first nonzero pivot).

    Parameters
    ----------
    A : Matrix, n x n
    rhs : Matrix, n x k
    samples : sequence of array_like, optional
        Numeric values of A at a few states where the solution must be
        finite (the declared initial state, random consistent states).

    Raises
    ------
    ValueError
        When A is singular everywhere (a zero determinant or a structurally
        empty row or column).

    Examples
    --------
    >>> th = sm.Symbol("theta")
    >>> A = sm.Matrix([[-sm.sin(th), sm.cos(th)], [sm.cos(th), sm.sin(th)]])
    >>> solve_linear(A, sm.Matrix([0, 1])).T
    Matrix([[cos(theta), sin(theta)]])
    """
    A, rhs = sm.Matrix(A), sm.Matrix(rhs)
    n = A.shape[0]
    if A.shape != (n, n) or rhs.shape[0] != n:
        raise ValueError(
            f"solve_linear needs a square system, not "
            f"{A.shape} with {rhs.shape[0]} right-hand rows"
        )
    nums = [np.array(S, dtype=float).reshape(n, n) for S in samples]
    # Connected components of the bipartite row/column graph.
    parent = list(range(2 * n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in range(n):
            if A[i, j] != 0:
                parent[find(i)] = find(n + j)
    groups: dict = {}
    for i in range(2 * n):
        groups.setdefault(find(i), []).append(i)
    X = sm.zeros(n, rhs.shape[1])
    for members in groups.values():
        rows = [i for i in members if i < n]
        cols = [i - n for i in members if i >= n]
        if len(rows) != len(cols):
            raise ValueError(
                "the linear system is singular everywhere "
                "(its structure leaves a row or column empty)"
            )
        sol = _solve_block(
            A.extract(rows, cols),
            rhs.extract(rows, list(range(rhs.shape[1]))),
            [S[np.ix_(rows, cols)] for S in nums],
        )
        for k, c in enumerate(cols):
            X[c, :] = sol[k, :]
    return X


def _solve_block(A, rhs, samples):
    n = A.shape[0]
    if n == 1:
        return rhs / A[0, 0]
    if n > ADJUGATE_MAX:
        return _guided_elimination(A, rhs, samples)
    det = A.det(method="berkowitz")
    if sm.count_ops(det) < 400:
        det = sm.trigsimp(det)
    if det == 0:
        raise ValueError(
            "the linear system is singular everywhere (a zero determinant)"
        )
    return (A.adjugate() * rhs) / det


def _guided_elimination(A, R, samples):
    """Gaussian elimination on ``A X = R`` with row pivots chosen by the
    smallest magnitude over numeric samples of A (largest wins)."""
    n = A.shape[0]
    A = sm.Matrix(A).copy()
    R = sm.Matrix(R).copy()
    nums = [np.array(S, dtype=float) for S in samples]
    if not nums:
        return A.LUsolve(R)
    for col in range(n):
        score = [min(abs(S[i, col]) for S in nums) for i in range(col, n)]
        piv = col + int(np.argmax(score))
        if piv != col:
            A.row_swap(col, piv)
            R.row_swap(col, piv)
            for S in nums:
                S[[col, piv]] = S[[piv, col]]
        for i in range(col + 1, n):
            if A[i, col] == 0:
                continue
            factor = A[i, col] / A[col, col]
            A[i, :] = A[i, :] - factor * A[col, :]
            R[i, :] = R[i, :] - factor * R[col, :]
            for S in nums:
                S[i] = S[i] - S[i, col] / S[col, col] * S[col]
    X = sm.zeros(n, R.shape[1])
    for i in reversed(range(n)):
        acc = R[i, :]
        for j in range(i + 1, n):
            if A[i, j] != 0:
                acc = acc - A[i, j] * X[j, :]
        X[i, :] = acc / A[i, i]
    return X
