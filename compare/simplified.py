"""Derived equations simplified for display only.

The report typesets each formulation's ``M z = f`` as derived: the form the
generated code evaluates, the operation counts "as derived" count and the
trajectories come from.  Beside it, where it reads shorter, the same
equations after the canonical pass of the operation counts
(:func:`eomcompare.symbolic.canonical.canonical`, its steps 1-4: Pythagorean
identities, numeric factors, expansion where it cancels, angle sums; no
``trigsimp``, whose time a report cannot bound) are shown collapsed and
marked "simplified for display only": they equal the derived equations
(the pass changes no value) but are not what was counted as derived,
compiled, timed or integrated.

>>> import sympy as sm
>>> m1, m2, q = sm.symbols("m1 m2 q")
>>> M = sm.Matrix([[m1 + m2 * (sm.sin(q) ** 2 + sm.cos(q) ** 2)]])
>>> display_form(M, sm.Matrix([2 * m2 * (q + 1) / 2]))
(Matrix([[m1 + m2]]), Matrix([[m2*(q + 1)]]))
>>> display_form(sm.Matrix([[m1]]), sm.Matrix([q])) is None
True
"""

from __future__ import annotations

import sympy as sm

from eomcompare.symbolic.canonical import canonical
from eomcompare.symbolic.counting import tree_size

__all__ = ["display_form", "MARK", "NOTE"]

#: The summary line of the collapsed block: what the reader is shown.
MARK = "simplified for display only"

#: What the simplified form is and is not.
NOTE = (
    "The equations above after the canonical pass of the operation counts "
    "(symbolic.canonical, steps 1-4: sin² + cos² collapsed, numeric factors "
    "normalised, expansion where it cancels, angle sums joined). Equal in "
    "value to the derived equations, shown for reading only: the code, the "
    "counts as derived, the times and the trajectories are of the equations "
    "as derived."
)


def display_form(M, f) -> tuple[sm.Matrix, sm.Matrix] | None:
    """``(M, f)`` after the canonical pass, or None where it reads no
    shorter than the derived form (fewer tree nodes in all, and some entry
    changed)."""
    M, f = sm.Matrix(M), sm.Matrix(f)
    n, m = M.shape
    exprs = [*M, *f]
    got = list(canonical(exprs).exprs)
    if all(a == b for a, b in zip(got, exprs)):
        return None
    if sum(tree_size(e) for e in got) >= sum(tree_size(e) for e in exprs):
        return None
    return sm.Matrix(n, m, got[: n * m]), sm.Matrix(got[n * m :])
