"""Identities decided by value at random points.

Whether a partial velocity is the twist of a joint, or a constraint force's
auxiliary motion is a coordinate's, is an identity between expressions that
need not be syntactically equal.  An identity between analytic functions
that holds at random points holds everywhere but on a set of measure zero,
so a few values decide it far more cheaply than ``simplify`` (which may
also fail to decide).  Used by the composite-body detection
(:mod:`eomcompare.formulations.composite`) and by Lagrange's constraint-force recovery.
"""

from __future__ import annotations

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef

from .calculus import dynamic_symbols

__all__ = ["RandomPoints"]

_NUMPY = {
    sm.sin: np.sin,
    sm.cos: np.cos,
    sm.tan: np.tan,
    sm.exp: np.exp,
    sm.log: np.log,
    sm.sinh: np.sinh,
    sm.cosh: np.cosh,
    sm.tanh: np.tanh,
    sm.asin: np.arcsin,
    sm.acos: np.arccos,
    sm.atan: np.arctan,
}


class RandomPoints:
    """Values of expressions at ``trials`` random points: every function of
    time, derivative and symbol drawn once per point in [0.3, 1.3] (away
    from the zeros of the usual trigonometric and rational terms).

    Values are cached per expression, and the points are shared, so values
    of different expressions combine (as vectors, for instance).

    Examples
    --------
    >>> import numpy as np, sympy as sm
    >>> x = sm.Symbol("x")
    >>> points = RandomPoints(np.random.default_rng(0))
    >>> points.vanishes([sm.sin(x)**2 + sm.cos(x)**2 - 1])
    True
    >>> points.vanishes([sm.sin(2 * x) - sm.sin(x)])
    False
    """

    def __init__(self, rng=None, trials: int = 2):
        self.rng = np.random.default_rng(12345) if rng is None else rng
        self.trials = trials
        self.points = [({}, {}) for _ in range(trials)]
        self.cache = {}
        self._memo = {}
        self._t = sm.physics.mechanics.dynamicsymbols._t

    def _draw(self, table, key):
        for point in self.points:
            d = point[table]
            if key not in d:
                d[key] = sm.Float(self.rng.uniform(0.3, 1.3))

    def value(self, expr) -> np.ndarray:
        """Complex values of ``expr`` at the points (NaN where it has no
        number there)."""
        expr = sm.sympify(expr)
        if expr not in self.cache:
            with np.errstate(all="ignore"):
                self.cache[expr] = self._eval(expr)
        return self.cache[expr]

    def _eval(self, expr) -> np.ndarray:
        # Node by node with every shared subtree evaluated once: the
        # expressions of long chains are small as graphs but their trees
        # grow exponentially, and substituting numbers into the tree
        # (``xreplace``, then ``evalf``) would walk every path.
        memo = self._memo
        stack = [expr]
        while stack:
            e = stack[-1]
            if e in memo:
                stack.pop()
                continue
            leaf = self._leaf(e)
            if leaf is not None:
                memo[e] = leaf
                stack.pop()
                continue
            todo = [a for a in e.args if a not in memo]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            memo[e] = self._combine(e, [memo[a] for a in e.args])
        return memo[expr]

    def _leaf(self, e):
        """Values of a number, symbol or function of time; None for a node
        computed from its arguments."""
        if e.is_Number or e.is_NumberSymbol or e is sm.I:
            try:
                return np.full(self.trials, complex(e))
            except TypeError:  # zoo, nan
                return np.full(self.trials, complex(np.nan, np.nan))
        if e.is_Symbol:
            self._draw(1, e)
            return np.array([p[1][e] for p in self.points], dtype=complex)
        if isinstance(e, (sm.Derivative, AppliedUndef)):
            if e.free_symbols != {self._t}:
                return np.full(self.trials, complex(np.nan, np.nan))
            self._draw(0, e)
            return np.array([p[0][e] for p in self.points], dtype=complex)
        if not e.args:
            return np.full(self.trials, complex(np.nan, np.nan))
        return None

    def _combine(self, e, args):
        if e.is_Add:
            return np.sum(args, axis=0)
        if e.is_Mul:
            return np.prod(args, axis=0)
        if e.is_Pow:
            base, exp = args
            with np.errstate(all="ignore"):
                out = base**exp
            # 0 to a negative power: sympy's zoo, no number.
            return np.where(np.isinf(out), complex(np.nan, np.nan), out)
        fn = _NUMPY.get(e.func)
        if fn is not None and len(args) == 1:
            return fn(args[0])
        return self._substitute(e)

    def _substitute(self, expr) -> np.ndarray:
        """Values by substituting the points into the tree and ``evalf``
        (for the rare nodes without a numpy counterpart)."""
        # Derivatives before the functions inside them (xreplace is
        # top-down, and the larger expression is matched first).
        funcs = sorted(dynamic_symbols([expr]), key=sm.count_ops, reverse=True)
        for f in funcs:
            self._draw(0, f)
        for x in expr.free_symbols:
            self._draw(1, x)
        out = []
        for fvals, svals in self.points:
            e = expr.xreplace({f: fvals[f] for f in funcs})
            try:
                out.append(complex(e.xreplace(svals).evalf()))
            except TypeError:  # zoo, nan or an unevaluated function
                out.append(complex(np.nan, np.nan))
        return np.array(out)

    def vector(self, vec) -> np.ndarray:
        """(trials, len(vec)) values of the entries of a column."""
        return np.array([self.value(x) for x in vec]).T

    def vanishes(self, exprs, tol: float = 1e-9, unknown: bool = False) -> bool:
        """Whether every expression is zero at every point.  An expression
        without a value there (an undefined function, say) counts as
        ``unknown``: False where a wrong "zero" would be unsafe, True where
        a caller confirms candidates symbolically afterwards."""
        for e in exprs:
            if e == 0:
                continue
            v = self.value(e)
            if np.isnan(v).any():
                if not unknown:
                    return False
                v = v[~np.isnan(v)]
            if not np.all(np.abs(v) < tol):
                return False
        return True
