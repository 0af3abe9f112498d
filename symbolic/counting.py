"""Size measures of expressions that share subtrees: ``sympy.count_ops``'s
number and the node count, each computed once per distinct subexpression.

The formulations build their results with shared subexpressions (a body's
velocity appears in every later body's terms; a composite body's inertia in
every entry of its row of the mass matrix).  As a DAG the result is small,
but a walk that visits every path, as ``sympy.count_ops`` and a plain
``args`` walk do, takes time proportional to the size of the expanded tree,
which grows exponentially with the depth of the sharing: on a spatial chain
of six bodies, ``sympy.count_ops`` of Kane's mass matrix and forcing took
four minutes where deriving them took three seconds.

:func:`count_ops` returns exactly ``sympy.count_ops(expr)`` (``visual=False``)
by memoising the per-node step of sympy's own walk: each node adds its own
operations (an ``ADD`` per extra term of a sum, a ``SUB`` per negative one,
a ``DIV`` per reciprocal, one per function, ...) and hands on the
expressions sympy's loop would push, so the count of a node is its own
operations plus the counts of those.  ``tests/symbolic/test_counting.py``
checks it against ``sympy.count_ops`` on every catalogue derivation.
:func:`count_kinds` walks the same way by kind, as ``sympy.count_ops(e,
visual=True)`` names the operations (the counts of a derivation after cse
by kind), without building sympy's sum of symbols for each expression.
"""

from __future__ import annotations

from collections.abc import Iterable

import sympy as sm
from sympy.core.function import Derivative, UndefinedFunction, _coeff_isneg
from sympy.core.operations import LatticeOp
from sympy.integrals.integrals import Integral
from sympy.simplify.radsimp import fraction

__all__ = ["count_ops", "count_kinds", "tree_size", "tree_leaves"]

S = sm.S


def _opaque(factor: sm.Basic) -> bool:
    """Whether ``factor`` is a symbol, a function of time, a derivative or
    an applied function, or such a thing to a positive integer power: a
    factor that stays in every product it is in (``Mul`` never evaluates
    inside it, and only a zero or a reciprocal cancels it)."""
    if factor.is_Pow:
        exp = factor.exp
        if not (exp.is_Integer and exp > 0):
            return False
        factor = factor.base
    return bool(factor.is_Symbol or factor.is_Function or factor.is_Derivative)


def _whole(a: sm.Basic) -> bool:
    """Whether ``fraction(a)`` is ``(n, 1)`` with ``n`` not an integer, for
    a product ``a``, read off its factors without building ``n``: no factor
    is a reciprocal or any other power ``fraction`` may split (only powers
    to positive integers), an ``exp``, a zero or a non-integer rational,
    and one factor is opaque (:func:`_opaque`), so the product of the
    factors is not a number.  False where it cannot tell (``fraction``
    decides then)."""
    opaque = False
    for f in a.args:
        if f.is_Number:
            if f.is_Rational and not f.is_Integer or f.is_zero is not False:
                return False
        elif isinstance(f, sm.exp) or (
            f.is_Pow and not (f.exp.is_Integer and f.exp > 0)
        ):
            return False
        elif not opaque and _opaque(f):
            opaque = True
    return opaque


def _step(a: sm.Basic) -> tuple[int, list[sm.Basic]]:
    """One iteration of ``sympy.count_ops``'s loop on node ``a``: the
    number of operations it adds and the expressions it pushes."""
    ops = 0
    if a.is_Rational:
        if a is not S.One:
            ops += int(a.p < 0) + int(a.q != 1)
            return ops, []
    elif a.is_Mul:
        if _coeff_isneg(a):
            ops += 1  # NEG
            a = a.as_two_terms()[1] if a.args[0] is S.NegativeOne else -a
        n, d = (a, S.One) if a.is_Mul and _whole(a) else fraction(a)
        if n.is_Integer:
            ops += 1 + bool(n < 0)  # DIV (and NEG)
            return ops, [d]
        if d is not S.One:
            pushed = [] if d.is_Integer else [d]
            return ops + 1, [*pushed, n]  # DIV
    elif a.is_Add:
        pushed = []
        negs = 0
        for ai in a.args:
            if _coeff_isneg(ai):
                negs += 1
                pushed.append(-ai)
            else:
                pushed.append(ai)
        # ADD or SUB between consecutive terms; a sum of only negative
        # terms adds a NEG; a leading negative term turns its ADD into a
        # SUB (count unchanged).
        ops += len(a.args) - 1 + (negs == len(a.args))
        return ops, pushed
    if a.is_Pow and a.exp is S.NegativeOne:
        return ops + 1, [a.base]  # DIV
    if a == S.Exp1:
        return ops + 1, []
    if a.is_Pow and a.base == S.Exp1:
        return ops + 1, [a.exp]
    if a.is_Mul or isinstance(a, LatticeOp):
        ops += len(a.args) - 1
    elif a.args and (
        a.is_Pow or a.is_Function or isinstance(a, (Derivative, Integral, sm.Sum))
    ):
        ops += 1
    return ops, ([] if a.is_Symbol else list(a.args))


def _kinds_step(a: sm.Basic) -> tuple[Kinds, list[sm.Basic]]:
    """:func:`_step` by kind: the operations ``sympy.count_ops(a,
    visual=True)`` adds at node ``a`` by their names (``ADD``, ``SUB``,
    ``NEG``, ``DIV``, ``MUL``, ``POW``, ``EXP``, a function's name in
    capitals, ``FUNC_`` and the name for an undefined function), and the
    expressions it pushes."""
    ops: dict[str, int] = {}

    def add(kind: str, n: int = 1) -> None:
        ops[kind] = ops.get(kind, 0) + n

    if a.is_Rational:
        if a is not S.One:
            if a.p < 0:
                add("NEG")
            if a.q != 1:
                add("DIV")
            return Kinds(ops), []
    elif a.is_Mul:
        if _coeff_isneg(a):
            add("NEG")
            a = a.as_two_terms()[1] if a.args[0] is S.NegativeOne else -a
        n, d = (a, S.One) if a.is_Mul and _whole(a) else fraction(a)
        if n.is_Integer:
            add("DIV")
            if n < 0:
                add("NEG")
            return Kinds(ops), [d]
        if d is not S.One:
            add("DIV")
            return Kinds(ops), [*([] if d.is_Integer else [d]), n]
    elif a.is_Add:
        pushed = []
        negs = 0
        for i, ai in enumerate(a.args):
            neg = _coeff_isneg(ai)
            negs += neg
            pushed.append(-ai if neg else ai)
            if i:
                add("SUB" if neg else "ADD")
        if negs == len(a.args):
            add("NEG")
        elif _coeff_isneg(a.args[0]):
            # A leading negative term: its ADD is a SUB.
            add("SUB")
            add("ADD", -1)
        return Kinds(ops), pushed
    if a.is_Pow and a.exp is S.NegativeOne:
        add("DIV")
        return Kinds(ops), [a.base]
    if a == S.Exp1:
        add("EXP")
        return Kinds(ops), []
    if a.is_Pow and a.base == S.Exp1:
        add("EXP")
        return Kinds(ops), [a.exp]
    if a.is_Mul or isinstance(a, LatticeOp):
        add(a.func.__name__.upper(), len(a.args) - 1)
    elif a.args and (
        a.is_Pow or a.is_Function or isinstance(a, (Derivative, Integral, sm.Sum))
    ):
        name = a.func.__name__.upper()
        add("FUNC_" + name if isinstance(a.func, UndefinedFunction) else name)
    return Kinds(ops), ([] if a.is_Symbol else list(a.args))


class Kinds(dict[str, int]):
    """Operations by kind; ``+`` adds kind by kind (unlike ``Counter``,
    keeping every sum, a kind's own negative part included)."""

    def __add__(self, other: object) -> Kinds:
        if isinstance(other, int) and other == 0:  # sum()'s start
            return self
        if not isinstance(other, dict):
            return NotImplemented
        out = Kinds(self)
        for k, v in other.items():
            out[k] = out.get(k, 0) + v
        return out

    __radd__ = __add__


def _memo_walk(exprs: Iterable[sm.Basic], step, memo: dict, zero=0):
    """Sum over ``exprs`` of ``own + sum(children)`` with ``step(node) ->
    (own, children)``, each distinct node evaluated once (iteratively, so
    deep expressions do not reach the recursion limit); ``zero`` starts
    the sums."""
    total = zero
    for root in exprs:
        stack: list[tuple[sm.Basic, bool]] = [(root, False)]
        pending: dict = {}
        while stack:
            node, expanded = stack.pop()
            if node in memo:
                continue
            if expanded:
                own, children = pending.pop(node)
                memo[node] = own + sum((memo[c] for c in children), zero)
                continue
            own, children = step(node)
            pending[node] = (own, children)
            stack.append((node, True))
            stack.extend((c, False) for c in children if c not in memo)
        total = total + memo[root]
    return total


def count_ops(*exprs: sm.Basic, memo: dict | None = None) -> int:
    """``sum(sympy.count_ops(e) for e in exprs)`` for expressions
    (``Expr``, not relations), in time proportional to the number of
    distinct subexpressions.  ``memo`` may be shared between calls."""
    return _memo_walk(_flat_exprs(exprs), _step, {} if memo is None else memo)


def _flat_exprs(exprs: Iterable[sm.Basic]) -> list[sm.Basic]:
    """Expressions and the entries of matrices, one list; relations and
    other non-expressions refused."""
    flat: list[sm.Basic] = []
    for e in exprs:
        if isinstance(e, sm.MatrixBase):
            flat.extend(e)
        else:
            flat.append(sm.sympify(e))
    for e in flat:
        if not isinstance(e, sm.Expr) or e.is_Relational:
            raise TypeError(f"count_ops counts expressions, not {type(e).__name__}")
    return flat


def count_kinds(*exprs: sm.Basic, memo: dict | None = None) -> dict[str, int]:
    """The operations of ``exprs`` by kind, as ``sympy.count_ops(e,
    visual=True)`` names them, summed over the expressions: ``{kind:
    number}``, kinds that sum to zero left out.  Each distinct
    subexpression is walked once, and no sympy expression is built
    (sympy's visual count builds a sum of symbols per expression).
    ``memo`` may be shared between calls."""
    flat = _flat_exprs(exprs)
    total = _memo_walk(flat, _kinds_step, {} if memo is None else memo, Kinds())
    return {k: v for k, v in sorted(total.items()) if v}


def _size_step(a: sm.Basic) -> tuple[int, list[sm.Basic]]:
    return 1, list(a.args)


def tree_size(expr: sm.Basic, memo: dict | None = None) -> int:
    """Nodes of ``expr`` as a tree (every path counted), computed once per
    distinct subexpression."""
    return _memo_walk([expr], _size_step, {} if memo is None else memo)


def _leaf_step(a: sm.Basic) -> tuple[int, list[sm.Basic]]:
    return (0, list(a.args)) if a.args else (1, [])


def tree_leaves(expr: sm.Basic, memo: dict | None = None) -> int:
    """Leaves of ``expr`` as a tree (symbols and numbers, every path
    counted), computed once per distinct subexpression."""
    return _memo_walk([expr], _leaf_step, {} if memo is None else memo)
