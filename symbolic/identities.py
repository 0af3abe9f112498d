"""Identities decided by value at random points.

Whether a partial velocity is the twist of a joint, or a constraint force's
auxiliary motion is a coordinate's, is an identity between expressions that
need not be syntactically equal.  An identity between analytic functions
that holds at random points holds everywhere but on a set of measure zero,
so a few values decide it far more cheaply than ``simplify`` (which may
also fail to decide).  Used by the composite-body detection
(:mod:`formulations.composite`) and by Lagrange's constraint-force recovery.
"""
from __future__ import annotations

import numpy as np
import sympy as sm

from .calculus import dynamic_symbols

__all__ = ["RandomPoints"]


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

    def _draw(self, table, key):
        for point in self.points:
            d = point[table]
            if key not in d:
                d[key] = sm.Float(self.rng.uniform(0.3, 1.3))

    def value(self, expr) -> np.ndarray:
        """Complex values of ``expr`` at the points (NaN where it has no
        number there)."""
        expr = sm.sympify(expr)
        if expr in self.cache:
            return self.cache[expr]
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
        self.cache[expr] = np.array(out)
        return self.cache[expr]

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
