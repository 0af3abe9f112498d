"""Operation counts the way the robotics literature counts them.

Convention (Hollerbach 1980, Kane & Levinson 1983, Featherstone 2008
Table 10.1), per evaluation of the equations for one state:

* **multiplications** include divisions; **additions** include
  subtractions; a change of sign is free (``-x`` inside a sum is a
  subtraction, alone it costs nothing);
* function calls (``sin``, ``cos``, ``sqrt``, ...) are counted apart, by
  name;
* common subexpressions are computed once (``sympy.cse``);
* subexpressions that depend only on parameters (masses, lengths, inertias,
  the gravity constant, numbers) are computed once per parameter set:
  every maximal parameter-only part of a sum or product is set apart as
  one precomputed constant, and the cost of those constants is reported
  separately (``param_*``), not per evaluation.

``x**k`` for an integer ``k >= 2`` is ``k - 1`` multiplications, ``x**-k``
one more (the division); ``x**(1/2)`` is a ``sqrt`` call, other powers a
``pow`` call.  The solves are counted from the loops of the compiled
backend's LDL^T and LU (:func:`ldl_solve_counts`, :func:`lu_solve_counts`).

The counting itself, for any expressions; :mod:`eomcompare.bench.literature_counts`
applies it to derivations and holds the published figures, and
:func:`eomcompare.formulations.base.canonical_counts` to the canonical form.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sm
from sympy.core.function import AppliedUndef

__all__ = [
    "OpCount",
    "count_ops_literature",
    "lu_solve_counts",
    "ldl_solve_counts",
    "assignments_counts",
    "forward_dynamics_counts_of",
]


@dataclass
class OpCount:
    """Counts per evaluation (``mul``, ``add``, ``calls``) and per
    parameter set (``param_mul``, ``param_add``, ``param_calls``)."""

    mul: int = 0
    add: int = 0
    calls: Counter = field(default_factory=Counter)
    param_mul: int = 0
    param_add: int = 0
    param_calls: Counter = field(default_factory=Counter)

    def __add__(self, other):
        return OpCount(
            self.mul + other.mul,
            self.add + other.add,
            self.calls + other.calls,
            self.param_mul + other.param_mul,
            self.param_add + other.param_add,
            self.param_calls + other.param_calls,
        )

    def as_dict(self) -> dict:
        return {
            "mul": self.mul,
            "add": self.add,
            "calls": dict(self.calls),
            "param_mul": self.param_mul,
            "param_add": self.param_add,
            "param_calls": dict(self.param_calls),
        }


def _is_reciprocal(f):
    return f.is_Pow and f.exp.is_Number and f.exp.is_negative


def _tree_counts(e, out: OpCount):
    """Add the cost of one expression tree (shared subtrees counted at
    every occurrence: cse has taken out what is shared)."""
    if e.is_Atom or isinstance(e, (AppliedUndef, sm.Derivative)):
        return
    if e.is_Add:
        out.add += len(e.args) - 1
        for a in e.args:
            _tree_counts(a, out)
    elif e.is_Mul:
        factors = [a for a in e.args if a is not sm.S.NegativeOne]
        numerators = [f for f in factors if not _is_reciprocal(f)]
        out.mul += len(factors) - 1 + (0 if numerators else 1)
        for f in factors:
            if _is_reciprocal(f):
                _power_counts(f.base, -f.exp, out)
            else:
                _tree_counts(f, out)
    elif e.is_Pow:
        if _is_reciprocal(e):
            out.mul += 1  # the division 1/x**k
            _power_counts(e.base, -e.exp, out)
        else:
            _power_counts(e.base, e.exp, out)
    elif isinstance(e, sm.Function):
        out.calls[type(e).__name__] += 1
        for a in e.args:
            _tree_counts(a, out)
    else:
        for a in e.args:
            _tree_counts(a, out)


def _power_counts(base, exp, out: OpCount):
    """``base**exp`` for a positive exponent."""
    if exp.is_Integer:
        out.mul += int(exp) - 1
    elif exp == sm.S.Half:
        out.calls["sqrt"] += 1
    else:
        out.calls["pow"] += 1
    _tree_counts(base, out)


def _hoist_parameters(exprs, is_constant):
    """The expressions with every maximal parameter-only part replaced by a
    new symbol, and the definitions of those symbols."""
    memo, defs = {}, {}

    def const(e):
        # From the arguments' answers, each shared subtree once: the
        # composite sums of long chains are small graphs but exponentially
        # large trees, which free_symbols and atoms() would walk whole.
        got = memo.get(("c", e))
        if got is None:
            if isinstance(e, (AppliedUndef, sm.Derivative)):
                got = False
            elif e.is_Symbol:
                got = bool(is_constant(e))
            elif not e.args:
                got = True
            else:
                got = all(const(a) for a in e.args)
            memo[("c", e)] = got
        return got

    def name(e):
        if e.is_Atom or (
            e.is_Mul
            and len(e.args) == 2
            and e.args[0] is sm.S.NegativeOne
            and e.args[1].is_Atom
        ):
            return e  # a symbol, a number, or a free sign: nothing to do
        if e not in defs:
            defs[e] = sm.Symbol(f"_p{len(defs)}")
        return defs[e]

    def walk(e):
        got = memo.get(e)
        if got is not None:
            return got
        if const(e):
            out = name(e)
        elif e.is_Add or e.is_Mul:
            fixed = [a for a in e.args if const(a)]
            moving = [walk(a) for a in e.args if not const(a)]
            if e.is_Mul and sm.S.NegativeOne in fixed:
                fixed.remove(sm.S.NegativeOne)
                moving.append(sm.S.NegativeOne)
            if fixed:
                moving.append(name(e.func(*fixed)))
            out = e.func(*moving)
        elif e.args:
            out = e.func(*[walk(a) for a in e.args])
        else:
            out = e
        memo[e] = out
        return out

    hoisted = [walk(sm.sympify(e)) for e in exprs]
    # Definitions refer to parameters only; the _p symbols are parameters.
    return hoisted, {s: d for d, s in defs.items()}


def count_ops_literature(exprs, parameters=(), *, hoist=True) -> OpCount:
    """Counts of ``exprs`` (expressions or matrices) by the convention of
    the module, after ``sympy.cse``.

    Parameters
    ----------
    exprs : iterable of expressions or matrices
    parameters : iterable of symbols
        The constant symbols (parameters).  Every other symbol, function of
        time and derivative is a per-evaluation input.
    hoist : bool
        Set parameter-only subexpressions apart (default True).

    Examples
    --------
    >>> a, b, c, q = sm.symbols("a b c q")
    >>> n = count_ops_literature([a * sm.sin(q) + b, a * sm.sin(q) - c])
    >>> n.mul, n.add, dict(n.calls)
    (1, 2, {'sin': 1})
    """
    flat = []
    for e in exprs:
        flat.extend(e if isinstance(e, sm.MatrixBase) else [e])
    flat = [sm.sympify(e) for e in flat]
    params = set(parameters)
    out = OpCount()
    if hoist and params:
        flat, defs = _hoist_parameters(flat, lambda s: s in params or s.is_number)
        if defs:
            prep = OpCount()
            reps, red = sm.cse(list(defs.values()), order="none")
            for e in [r for _, r in reps] + list(red):
                _tree_counts(e, prep)
            out.param_mul, out.param_add = prep.mul, prep.add
            out.param_calls = prep.calls
    reps, red = sm.cse(flat, order="none")
    for e in [r for _, r in reps] + list(red):
        _tree_counts(e, out)
    return out


def lu_solve_counts(n: int) -> tuple[int, int]:
    """(multiplications, additions) of ``eom_lu_solve`` in
    :mod:`eomcompare.numeric.compiled` for a dense n x n system: factorization
    with one reciprocal per pivot, elimination, back substitution with one
    division per row; ``n^3/3 + n^2 + 2n/3`` and ``n^3/3 + n^2/2 - 5n/6``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, not {n!r}")
    mul = Fraction(n**3, 3) + n**2 + Fraction(2 * n, 3)
    add = Fraction(n**3, 3) + Fraction(n**2, 2) - Fraction(5 * n, 6)
    return int(mul), int(add)


def ldl_solve_counts(n: int) -> tuple[int, int]:
    """(multiplications, additions) of ``eom_ldl_solve`` in
    :mod:`eomcompare.numeric.compiled`, the solve of a mass matrix symmetric as
    written: LDL^T with one reciprocal per pivot (and ``v_k = L_jk d_k``
    formed once per row), then the unit lower and upper triangular
    solves with the diagonal scaling folded into the second:
    ``n^3/6 + O(n^2)`` of each, against ``n^3/3 + O(n^2)`` for
    :func:`lu_solve_counts` (282 / 192 against 330 / 276 at n = 9).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, not {n!r}")
    mul = add = 0
    for j in range(n):
        mul += 2 * j + 1 + (n - 1 - j) * (j + 1)  # d_j, 1/d_j, column j of L
        add += j + (n - 1 - j) * j
    for i in range(n):
        mul += i + 1 + (n - 1 - i)  # forward; back with the scaling
        add += i + (n - 1 - i)
    return mul, add


def assignments_counts(assigned, parameters) -> OpCount:
    """Counts of an evaluation order (:class:`eomcompare.formulations.articulated_body.Assignments`):
    its definitions and outputs as one set of expressions, each assigned
    symbol an input, those whose definitions depend on parameters alone
    (through earlier such symbols) counted apart as parameters."""
    params = set(parameters)
    for s, d in zip(assigned.symbols, assigned.definitions):
        if d.free_symbols <= params:
            params.add(s)
    return count_ops_literature([*assigned.definitions, *assigned.outputs], params)


def forward_dynamics_counts_of(
    mass_matrix, forcing, parameters, *, assigned=None, symmetric: bool | None = None
) -> dict:
    """Counts of the forward dynamics of given expressions per evaluation:
    a mass matrix and forcing (or an evaluation order ``assigned``), such as
    a derivation's own or their canonical form (:mod:`eomcompare.symbolic.canonical`):
    ``"mf"`` (mass matrix and forcing together), ``"solve"`` (LDL^T when
    ``symmetric``, the lower triangle counted, else LU), ``"total"``, as
    :class:`OpCount`.  An evaluation order has no solve."""
    if assigned is not None:
        mf = assignments_counts(assigned, parameters)
        return {"mf": mf, "solve": OpCount(), "total": mf}
    M = sm.Matrix(mass_matrix)
    n = M.shape[0]
    if symmetric is None:
        raise TypeError(
            "symmetric must be given for a mass matrix: whether the compiled "
            "backend writes it by its lower triangle "
            "(numeric.c_code.is_structurally_symmetric)"
        )
    if symmetric:
        # As the backend: the lower triangle, then LDL^T.
        lower = sm.Matrix([M[i, j] for i in range(n) for j in range(i + 1)])
        mf = count_ops_literature([lower, forcing], parameters)
        m, a = ldl_solve_counts(n)
    else:
        mf = count_ops_literature([M, forcing], parameters)
        m, a = lu_solve_counts(n)
    solve = OpCount(mul=m, add=a)
    return {"mf": mf, "solve": solve, "total": mf + solve}
