"""Differentiation for derivations: sympy's results, without its overhead.

sympy's ``diff`` is general: it re-checks at every node which symbols an
expression holds, differentiates with respect to a function of time by
substituting a dummy at every call, and its product rule multiplies zeros
into large terms, each time asking the assumptions system whether they are
finite.  On the large entries of an n-link chain that is most of a
derivation's time.  The two functions here walk an expression tree once,
remember shared subtrees, and never build a product with a zero factor:

* :func:`jacobian`: reads the coefficients off expressions linear in the
  variables (velocities in the speeds, accelerations in the speed rates,
  momenta in the rates) and differentiates anything else;
* :func:`directional_derivative`: ``sum_j d expr/d x_j * v_j`` in one pass,
  e.g. the time derivative through the coordinates ``sum_j dp/dq_j q_j'``;
* :func:`reverse_gradient`: every partial derivative of one expression in
  one backward pass (the chain rule taken from the root down, as reverse
  mode automatic differentiation does), where :func:`gradient` takes one
  forward pass per variable.

:func:`time_derivative` and :func:`derivative` (by a plain symbol) give
sympy's very expressions, term for term, so that a derivation using them
keeps sympy's operation counts.

The variables may be symbols, functions of time q(t) or derivatives q'(t);
each is independent of the others, as sympy's ``diff`` by a function
treats them.  Both give the same expressions as sympy up to the order of
terms; the tests check them against sympy on random expressions.

More walks visit each shared subtree once, where sympy's ``xreplace``,
``atoms`` and ``free_symbols`` visit it once per occurrence (equations
assembled from composite bodies, and the nested velocities of a chain,
share most of their subtrees, so their trees are far larger than their
graphs): :func:`substitute`, :func:`subexpressions` and
:func:`dynamic_symbols`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import sympy as sm

from .dense import entries, matrix

__all__ = [
    "jacobian",
    "linear_split",
    "directional_derivative",
    "gradient",
    "reverse_gradient",
    "lagrange_terms",
    "derivative",
    "time_derivative",
    "substitute",
    "subexpressions",
    "dynamic_symbols",
    "symmetric_from_lower",
]


#: Bases whose log is infinite: the zero product ``0 * log(b)`` is nan.
_LOG_NOT_FINITE = frozenset(
    {sm.S.Zero, sm.S.Infinity, sm.S.NegativeInfinity, sm.S.ComplexInfinity}
)


def symmetric_from_lower(M) -> sm.Matrix:
    """The symmetric matrix whose lower triangle is that of the square
    matrix ``M``: ``M[i, j]`` for ``i >= j``, mirrored above the diagonal.

    For a matrix symmetric in value but not as written (a Hessian, whose
    mixed partial derivatives are taken in two orders and come out as
    different expressions of the same function), this writes each pair as
    one expression, so that code generators see the symmetry
    (:func:`eomcompare.numeric.c_code.is_structurally_symmetric`) and evaluate one
    triangle.  Only for matrices known to be symmetric: nothing is checked.

    Examples
    --------
    >>> a, b, c = sm.symbols("a b c")
    >>> symmetric_from_lower(sm.Matrix([[a, c], [b, a]]))
    Matrix([
    [a, b],
    [b, a]])
    """
    M = sm.Matrix(M)
    n, m = M.shape
    if n != m:
        raise ValueError(f"a square matrix is needed, not {n} x {m}")
    return sm.Matrix(n, n, lambda i, j: M[i, j] if i >= j else M[j, i])


class _Nonlinear(Exception):
    pass


def _linear_parts(expr, symbols, memo):
    """{symbol: coefficient} of an expression linear in ``symbols`` (the
    part free of them dropped); raises :class:`_Nonlinear` otherwise."""
    key = expr
    if key in memo:
        return memo[key]
    if expr in symbols:
        out = {expr: sm.S.One}
    elif _is_leaf(expr, symbols):
        out = {}
    elif expr.is_Add:
        terms: dict = {}  # one Add per symbol at the end, not one per term
        for a in expr.args:
            for s, c in _linear_parts(a, symbols, memo).items():
                terms.setdefault(s, []).append(c)
        out = {s: sm.Add(*cs) for s, cs in terms.items()}
    elif expr.is_Mul:
        parts = [_linear_parts(a, symbols, memo) for a in expr.args]
        moving = [i for i, p in enumerate(parts) if p]
        if len(moving) > 1:
            raise _Nonlinear
        if moving:
            i = moving[0]
            rest = sm.Mul(*(expr.args[:i] + expr.args[i + 1 :]))
            out = {s: rest * c for s, c in parts[i].items()}
        else:
            out = {}
    else:
        # Functions, powers, derivatives: nothing of the symbols inside.
        for a in expr.args:
            if _linear_parts(a, symbols, memo):
                raise _Nonlinear
        out = {}
    memo[key] = out
    return out


def jacobian(exprs, variables) -> sm.Matrix:
    """``exprs.jacobian(variables)``, fast for variables that are functions
    of time (speeds u(t), rates q'(t), u'(t)) and expressions linear in them.

    An expression linear in the variables (velocities in the speeds,
    accelerations in the speed rates) has its coefficients read off its
    tree; anything else is differentiated by :func:`directional_derivative`.
    The result is the same matrix.
    """
    exprs = exprs if isinstance(exprs, sm.MatrixBase) else sm.Matrix(exprs)
    flat = entries(exprs)
    variables = list(variables)
    symbols = set(variables)
    memo: dict = {}
    try:
        rows = []
        for e in flat:
            parts = _linear_parts(e, symbols, memo)
            rows.append([parts.get(v, sm.S.Zero) for v in variables])
        return matrix(exprs.shape[0], len(variables), [c for r in rows for c in r])
    except _Nonlinear:
        memos = [{} for _ in variables]
        return sm.Matrix(
            exprs.shape[0],
            len(variables),
            [
                directional_derivative(e, {v: sm.S.One}, memo=m)
                for e in exprs
                for v, m in zip(variables, memos)
            ],
        )


def linear_split(exprs, variables):
    """``(exprs.jacobian(variables), [e.xreplace({v: 0}) for e in exprs])``
    of expressions linear in the variables term by term (as
    :func:`jacobian` reads them), in one walk; None when they are not.

    The part free of the variables is the very expression ``xreplace``
    gives (each node holding a variable rebuilt from its rebuilt
    arguments by its own class), but a product with a factor that
    vanishes is the zero without being formed: sympy forms it only to
    ask the assumptions system whether the other factors are finite,
    which on the large terms of equations of motion costs more than the
    rest of the rebuilding.  Each shared subtree is visited once.

    Examples
    --------
    >>> import sympy as sm
    >>> x, y, a, b = sm.symbols("x y a b")
    >>> J, free = linear_split([a * x + sm.sin(b) * (y + b), x], [x, y])
    >>> J, free
    (Matrix([
    [a, sin(b)],
    [1,      0]]), [b*sin(b), 0])
    """
    if isinstance(exprs, sm.MatrixBase):
        exprs = entries(exprs)
    exprs = [sm.sympify(e) for e in exprs]
    variables = list(variables)
    symbols = set(variables)
    memo: dict = {}
    zero = sm.S.Zero

    def free_of(e):
        got = memo.get(e)
        if got is not None:
            return got
        if e in symbols:
            out = zero
        elif _is_leaf(e, symbols):
            out = e
        elif e.is_Add or e.is_Mul:
            args = [free_of(a) for a in e.args]
            if all(a is b for a, b in zip(args, e.args)):
                out = e
            elif e.is_Mul and any(a is zero for a in args):
                out = zero
            else:
                out = e.func(*args)
        else:
            # Functions, powers, derivatives: nothing of the variables
            # inside (else the expression is not linear).
            out = e
        memo[e] = out
        return out

    try:
        parts_memo: dict = {}
        rows = []
        for e in exprs:
            parts = _linear_parts(e, symbols, parts_memo)
            rows.append([parts.get(v, zero) for v in variables])
    except _Nonlinear:
        return None
    J = matrix(len(exprs), len(variables), [c for r in rows for c in r])
    return J, [free_of(e) for e in exprs]


def _is_leaf(e, variables) -> bool:
    """Atoms, and functions of plain symbols other than the variables
    (q(t)) with their derivatives by such symbols (q'(t)): independent of
    any variable other than themselves, as in sympy's diff by a function.
    A function of an expression, f(q(t)), or of a variable, f(x), is not a
    leaf: the chain rule goes through its argument."""
    if e.is_Atom or not e.args:
        return True
    if isinstance(e, sm.Derivative):
        if not all(v.is_Symbol and v not in variables for v in e.variables):
            return False
        e = e.expr
    return isinstance(e, sm.core.function.AppliedUndef) and all(
        a.is_Symbol and a not in variables for a in e.args
    )


def directional_derivative(expr, direction, memo=None):
    """``sum_s d expr/d s * direction[s]`` over the variables ``s`` in
    ``direction``: symbols, functions of time or their derivatives, each
    independent of the others (as in Lagrange's equations, where q' is held
    fixed while differentiating by q); everything else is held constant.

    Parameters
    ----------
    expr : sympy expression
    direction : mapping symbol -> expression
    memo : dict, optional
        Results of subtrees, shared between calls with the SAME direction
        (pass one dict per direction to reuse work across expressions).

    Examples
    --------
    >>> import sympy as sm
    >>> x, y, a = sm.symbols("x y a")
    >>> directional_derivative(sm.sin(x * y), {x: a})
    a*y*cos(x*y)
    """
    memo = {} if memo is None else memo
    return _dd(sm.sympify(expr), direction, memo)


def gradient(expr, symbols) -> list:
    """``[d expr/d s for s in symbols]`` with :func:`directional_derivative`."""
    return [directional_derivative(expr, {s: sm.S.One}) for s in symbols]


def reverse_gradient(expr, variables) -> list:
    """``[d expr/d v for v in variables]`` in one backward pass over the
    expression graph.

    Each node that holds a variable gets its adjoint ``d expr/d node``:
    the sum, over the nodes that hold it as an argument, of their
    adjoint times their derivative by it (a sum passes its adjoint on, a
    product multiplies it by the other factors, ``f(a)`` by ``f'(a)``).
    The adjoints of the variables are the partial derivatives.  Every
    shared subtree is visited once for all the variables, so the work is
    a few times the size of the expression's graph, where :func:`gradient`
    walks the graph once per variable; on the kinetic energy of a spatial
    arm the derivatives also come out with fewer operations, since the
    adjoint of a subtree is formed once and shared by the derivatives
    below it.

    Variables are as for :func:`directional_derivative` (symbols, q(t),
    q'(t), each independent of the others).  Nodes other than sums,
    products, powers and functions (piecewise, ...) are differentiated by
    sympy, variable by variable.  The results equal sympy's ``diff``; they
    are not its expressions term for term.

    Examples
    --------
    >>> import sympy as sm
    >>> x, y = sm.symbols("x y")
    >>> reverse_gradient(sm.sin(x * y) + x, [x, y])
    [y*cos(x*y) + 1, x*cos(x*y)]
    """
    expr = sm.sympify(expr)
    variables = list(variables)
    vset = set(variables)
    zero = sm.S.Zero
    # Which nodes hold a variable, and an order of the inner ones with
    # every node after all its arguments (depth first, post-order).
    holds: dict = {}
    inner = []
    stack = [(expr, False)]
    while stack:
        e, ready = stack.pop()
        if e in holds:
            continue
        if e in vset:
            holds[e] = True
        elif _is_leaf(e, vset):
            holds[e] = False
        elif not ready:
            stack.append((e, True))
            stack.extend((a, False) for a in e.args if a not in holds)
        else:
            holds[e] = any(holds[a] for a in e.args)
            if holds[e]:
                inner.append(e)
    adjoint: dict = {expr: [sm.S.One]}

    def give(a, c):
        if holds[a]:
            adjoint.setdefault(a, []).append(c)

    # Backwards: every node after all the nodes that hold it, so its
    # adjoint is complete when it is handed on.
    for e in reversed(inner):
        parts = adjoint.pop(e, None)
        if not parts:
            continue
        A = parts[0] if len(parts) == 1 else sm.Add(*parts)
        if A is zero:
            continue
        args = e.args
        if e.is_Add:
            for a in args:
                give(a, A)
        elif e.is_Mul:
            for i, a in enumerate(args):
                if holds[a]:
                    give(a, sm.Mul(A, *args[:i], *args[i + 1 :]))
        elif e.is_Pow:
            b, x = args
            if holds[b]:
                give(b, A * x * b ** (x - 1))
            if holds[x]:
                give(x, A * e * sm.log(b))
        elif isinstance(e, sm.Function) and not isinstance(e, sm.Piecewise):
            for k, a in enumerate(args, start=1):
                if holds[a]:
                    give(a, A * e.fdiff(k))
        else:
            for v in variables:
                if e.has(v):
                    adjoint.setdefault(v, []).append(A * e.diff(v))
    return [sm.Add(*adjoint.get(v, ())) for v in variables]


#: From this many coordinates on, :func:`lagrange_terms` takes dT/dq' and
#: dT/dq from one backward pass.  With one coordinate there are two
#: derivatives to form and the forward passes give fewer operations: on the
#: one-coordinate four-bar, whose energy holds the loop's nested square
#: roots, a backward pass's products of adjoints come out 10% larger after
#: cse (387 against 425 operations), where from two coordinates on the
#: equations of every chain in the catalogue have 5-15% fewer.
REVERSE_FROM = 2


def lagrange_terms(T, coordinates, rates):
    """The terms of Lagrange's operator ``d/dt(dT/dq') - dT/dq`` of a
    kinetic energy ``T`` in ``coordinates`` q and their ``rates`` q', for
    the part of d/dt through q:

    ``(p, M, dTdq, dp)``: the momenta ``p = dT/dq'``, their coefficients
    of q' ``M = dp/dq'`` (the mass matrix, as written: not symmetrized),
    ``dT/dq``, and ``dp = sum_j dp/dq_j q_j'`` (d/dt of p at q'' = 0
    without explicit time), as lists (M a Matrix).

    dT/dq' and dT/dq come from :func:`reverse_gradient` (one backward pass
    for both) from :data:`REVERSE_FROM` coordinates on, else from
    :func:`gradient`; dp is one directional derivative along q' per
    momentum, the shared subtrees differentiated once for all."""
    coordinates, rates = list(coordinates), list(rates)
    n = len(coordinates)
    if n >= REVERSE_FROM:
        both = reverse_gradient(T, rates + coordinates)
        p, dTdq = both[:n], both[n:]
    else:
        p, dTdq = gradient(T, rates), gradient(T, coordinates)
    M = jacobian(sm.Matrix(n, 1, p), rates)
    along = dict(zip(coordinates, rates))
    memo: dict = {}
    dp = [directional_derivative(pi, along, memo) for pi in p]
    return p, M, dTdq, dp


def derivative(expr, symbol, memo=None):
    """sympy's ``expr.diff(symbol)`` by a plain symbol: the very
    expression, term for term, in one pass over the tree.

    sympy re-reads the free symbols of every subtree at every level of
    the product rule; on a large expression (an n-link chain's
    acceleration energy) that is almost all of the differentiation.
    Here each shared subtree is differentiated once and a subtree free of
    ``symbol`` costs one look at its leaves.  ``memo`` may be shared
    between calls with the same ``symbol``.

    Examples
    --------
    >>> import sympy as sm
    >>> x, y = sm.symbols("x y")
    >>> e = (x * y + 1) ** 2 * sm.sin(x)
    >>> derivative(e, x) == e.diff(x)
    True
    """
    # sympy differentiates by time as by any symbol: the same walk.
    return time_derivative(expr, symbol, memo, exact=True)


def time_derivative(expr, t, memo=None, *, exact: bool = False, rates=None):
    """Total derivative d/dt of an expression in t and functions of t
    (sympy's ``expr.diff(t)``, in one pass over the tree).

    ``exact=True`` builds powers by sympy's own rule (``b**x`` as
    ``b**x * (x' log b + b' x / b)``), so the result is the very
    expression ``expr.diff(t)`` returns, not only an equal one; the
    default form may distribute a number over a sum where sympy does not.
    Products are sympy's in both: one Mul per term of the product rule,
    as sympy's ``Mul._eval_derivative_n_times`` forms them.

    ``rates``, a mapping, replaces the derivatives of the functions of
    time as they are formed (the kinematic differential equations' q' ->
    u, u' -> 0 for the terms without speed rates): for an expression
    holding none of its keys, ``expr.diff(t).xreplace(rates)`` without
    the terms a rate of zero removes ever being formed.  No value may be
    a sum: a number met in the product rule would be distributed over it
    where the replacement afterwards leaves the product alone.  ``memo``
    must then be used with the same ``rates`` only.

    Raises
    ------
    ValueError
        For a value of ``rates`` that is a sum.
    """
    if rates and any(sm.sympify(v).is_Add for v in rates.values()):
        raise ValueError(
            "time_derivative: the values of `rates` must not be sums "
            "(replace those after differentiating)"
        )

    def leaf(e):
        if e == t:
            return sm.S.One
        if isinstance(e, (sm.Derivative, sm.core.function.AppliedUndef)):
            d = e.diff(t) if t in e.free_symbols else sm.S.Zero
            return rates.get(d, d) if rates else d
        if e.is_Atom or not e.args:
            return sm.S.Zero
        return None

    def fallback(e):
        d = e.diff(t)
        return substitute([d], rates)[0] if rates else d

    memo = {} if memo is None else memo
    return _walk(sm.sympify(expr), leaf, fallback, memo, exact)


def _dd(e, direction, memo):
    def leaf(x):
        if x in direction:
            return direction[x]
        return sm.S.Zero if _is_leaf(x, direction) else None

    def fallback(x):
        return sm.Add(*[x.diff(s) * v for s, v in direction.items() if x.has(s)])

    return _walk(e, leaf, fallback, memo)


def _walk(e, leaf, fallback, memo, exact=False):
    """The derivative of ``e`` given the derivatives of its leaves
    (``leaf(e)`` returns None for a node that is not a leaf); nodes other
    than sums, products, powers and functions (piecewise, ...) go to
    ``fallback``, which is sympy.

    ``exact``: False for the plain rules, True for sympy's (by a symbol,
    time included: see :func:`time_derivative`).
    """
    if e in memo:
        return memo[e]
    zero = sm.S.Zero
    out = leaf(e)
    if out is not None:
        pass
    elif e.is_Add:
        out = sm.Add(
            *[
                d
                for d in (_walk(a, leaf, fallback, memo, exact) for a in e.args)
                if d is not zero
            ]
        )
    elif e.is_Mul:
        args = e.args
        terms = []
        for i, a in enumerate(args):
            d = _walk(a, leaf, fallback, memo, exact)
            if d is not zero:
                factors = args[:i] + (d,) + args[i + 1 :]
                # One Mul per term of the product rule, as sympy's
                # Mul._eval_derivative_n_times forms it (by a symbol, t
                # included): multiplied pair by pair instead, a leading
                # number would be distributed over a following sum.
                terms.append(sm.Mul(*factors))
        out = sm.Add(*terms)
    elif e.is_Pow:
        b, x = e.args
        db = _walk(b, leaf, fallback, memo, exact)
        dx = _walk(x, leaf, fallback, memo, exact)
        out = zero
        if exact:
            if dx is zero and db is zero:
                out = zero
            elif dx is zero and b not in _LOG_NOT_FINITE:
                # sympy's ``0 * log(b)`` is 0 unless log(b) is known to be
                # infinite (b zero or infinite, never for a base in a
                # derivation); forming it asks the assumptions system
                # about b twice (log's evaluation and the zero product),
                # which on the large bases of a spatial chain's energies
                # costs more than the derivative itself.
                out = e * (db * x / b)
            else:
                out = e * (dx * sm.log(b) + db * x / b)
            memo[e] = out
            return out
        if db is not zero:
            out += x * b ** (x - 1) * db
        if dx is not zero:
            out += e * sm.log(b) * dx
    elif isinstance(e, sm.Function) and not isinstance(e, sm.Piecewise):
        terms = []
        for k, a in enumerate(e.args, start=1):
            d = _walk(a, leaf, fallback, memo, exact)
            if d is not zero:
                terms.append(e.fdiff(k) * d)
        out = sm.Add(*terms)
    else:
        out = fallback(e)
    memo[e] = out
    return out


def substitute(exprs, mapping, memo=None) -> list:
    """``[e.xreplace(mapping) for e in exprs]``, each shared subtree
    rebuilt once.

    Matching is top-down as in ``xreplace``: a node that is a key is
    replaced whole (so q'(t) is matched before the q(t) inside it).

    Parameters
    ----------
    exprs : iterable of sympy expressions
    mapping : mapping expression -> expression
    memo : dict, optional
        Rebuilt subtrees, shared between calls with the SAME mapping.

    Examples
    --------
    >>> import sympy as sm
    >>> x, y, a = sm.symbols("x y a")
    >>> substitute([sm.sin(x) + x * y, y], {x: a})
    [a*y + sin(a), y]
    """
    memo = {} if memo is None else memo

    def walk(e):
        got = memo.get(e)
        if got is not None:
            return got
        if e in mapping:
            out = mapping[e]
        elif not e.args:
            out = e
        else:
            args = [walk(a) for a in e.args]
            out = e.func(*args) if any(a is not b for a, b in zip(args, e.args)) else e
        memo[e] = out
        return out

    return [walk(sm.sympify(e)) for e in exprs]


def subexpressions(
    exprs: Iterable[Any], prune: Callable[[Any], bool] | None = None
) -> Iterator[Any]:
    """Each distinct subexpression of ``exprs`` once, a node before its
    arguments: a subtree shared by many expressions or many times within
    one is visited once, so the work is the size of the expressions'
    graph, not of their trees.  The arguments of a node for which
    ``prune(node)`` is true are not visited.

    Examples
    --------
    >>> import sympy as sm
    >>> x, y = sm.symbols("x y")
    >>> e = sm.sin(x + y)
    >>> len(list(subexpressions([e**2 + e, e])))  # e**2 + e, e**2, e, 2, x + y, x, y
    7
    """
    seen, stack = set(), [sm.sympify(e) for e in exprs]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        yield e
        if prune is None or not prune(e):
            stack.extend(e.args)


def dynamic_symbols(exprs, t=None) -> set:
    """The functions of time and their derivatives in ``exprs`` (sympy's
    ``find_dynamicsymbols``), each shared subtree visited once."""
    t = sm.physics.mechanics.dynamicsymbols._t if t is None else t
    return {
        e
        for e in subexpressions(exprs)
        if isinstance(e, (sm.Derivative, sm.core.function.AppliedUndef))
        and e.free_symbols == {t}
    }
