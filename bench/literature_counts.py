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
``pow`` call.

Forward dynamics is the mass matrix and forcing, evaluated together as the
compiled backend does (one cse over both), plus the solve of
:mod:`numeric.compiled`, counted from its loops: for a mass matrix
symmetric as written its lower triangle and LDL^T
(:func:`ldl_solve_counts`), else the whole matrix and LU with partial
pivoting (:func:`lu_solve_counts`); dense, as a generic solver.  The
backend also takes shared numbers and factors out of sums
(:func:`numeric.compiled.factor_numbers`, :func:`~numeric.compiled.factor_common`);
the convention here is cse alone, so the backend evaluates at most the
operations counted.  Equations in explicit form
with an evaluation order (``kane_articulated``'s) are
counted from that order, which the compiled backend prints as it is,
without a solve (:func:`forward_dynamics_counts`).  Inverse dynamics is
``tau = M z' - f`` for given ``z'`` (the unknowns, q'' here), counted as
one set of expressions.

:data:`PUBLISHED` holds the published figures to set beside these counts.
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
    "forward_dynamics_counts",
    "assignments_counts",
    "inverse_dynamics_counts",
    "recursive_inverse_dynamics_counts",
    "PUBLISHED",
    "featherstone",
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
    :mod:`numeric.compiled` for a dense n x n system: factorization
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
    :mod:`numeric.compiled`, the solve of a mass matrix symmetric as
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


def _parameters(eom):
    return set(eom.system.parameters)


def _assignments(eom):
    return eom.extras.get("assignments")


def assignments_counts(assigned, parameters) -> OpCount:
    """Counts of an evaluation order (:class:`formulations.articulated_body.Assignments`):
    its definitions and outputs as one set of expressions, each assigned
    symbol an input, those whose definitions depend on parameters alone
    (through earlier such symbols) counted apart as parameters."""
    params = set(parameters)
    for s, d in zip(assigned.symbols, assigned.definitions):
        if d.free_symbols <= params:
            params.add(s)
    return count_ops_literature([*assigned.definitions, *assigned.outputs], params)


def forward_dynamics_counts(eom) -> dict:
    """Counts of the forward dynamics of ``eom`` per evaluation: ``"mf"``
    (mass matrix and forcing together), ``"solve"`` (LDL^T or LU, as
    the backend solves), ``"total"``, as :class:`OpCount`.

    Equations in explicit form with an evaluation order
    (``eom.extras["assignments"]``, ``kane_articulated``'s)
    are counted from it, and have no solve: the compiled backend skips it
    when the mass matrix is the identity."""
    assigned = _assignments(eom)
    if assigned is not None:
        mf = assignments_counts(assigned, _parameters(eom))
        return {"mf": mf, "solve": OpCount(), "total": mf}
    from numeric.compiled import is_structurally_symmetric

    M = eom.mass_matrix
    n = M.shape[0]
    if is_structurally_symmetric(M):
        # As the backend: the lower triangle, then LDL^T.
        lower = sm.Matrix([M[i, j] for i in range(n) for j in range(i + 1)])
        mf = count_ops_literature([lower, eom.forcing], _parameters(eom))
        m, a = ldl_solve_counts(n)
    else:
        mf = count_ops_literature([M, eom.forcing], _parameters(eom))
        m, a = lu_solve_counts(n)
    solve = OpCount(mul=m, add=a)
    return {"mf": mf, "solve": solve, "total": mf + solve}


def inverse_dynamics_counts(eom) -> OpCount:
    """Counts of ``tau = M z' - f`` with the unknowns' values ``z'`` given
    (q'' for the robots), one cse over all of ``tau``.

    Raises
    ------
    ValueError
        For equations in explicit form by a recursion
        (``extras["assignments"]``): there ``M z' - f`` is not the joint
        forces."""
    if _assignments(eom) is not None:
        raise ValueError(
            f"{eom.formulation} {dict(eom.options)}: the equations are in "
            "explicit form (u' = forcing), where M z' - f is not the joint "
            "forces; count inverse dynamics with a mass-matrix formulation or "
            "recursive_inverse_dynamics_counts"
        )
    zdd = sm.symbols(f"_zdd0:{len(eom.unknowns)}")
    tau = eom.mass_matrix * sm.Matrix(zdd) - eom.forcing
    return count_ops_literature([tau], _parameters(eom))


def recursive_inverse_dynamics_counts(ms) -> OpCount:
    """Counts of ``tau = M u' - f`` of a joint tree evaluated by Kane's
    equations recursively in body frames
    (:func:`formulations.kane_recursive.inverse_dynamics`), without forming
    ``M``; one cse over all of ``tau``."""
    from formulations.kane_recursive import inverse_dynamics

    zdd = sm.symbols(f"_zdd0:{len(ms.speeds)}")
    return count_ops_literature([inverse_dynamics(ms, zdd)], set(ms.parameters))


def featherstone(n: int) -> dict:
    """Featherstone (2008) Table 10.1 for n revolute joints, general
    inertia: ``{algorithm: (multiplications, additions)}``."""
    F = Fraction
    return {
        "RNEA": (93 * n - 108, 81 * n - 100),
        "CRBA": (10 * n**2 + 22 * n - 32, 6 * n**2 + 37 * n - 43),
        "factorize+solve": (
            F(n**3, 6) + F(3 * n**2, 2) - F(2 * n, 3),
            F(n**3, 6) + n**2 - F(7 * n, 6),
        ),
        "ABA": (224 * n - 259, 205 * n - 248),
    }


#: Six-joint inverse dynamics, (multiplications, additions), and notes.
PUBLISHED = {
    "Lagrangian, 4x4 matrices (Uicker/Kahn; Hollerbach 1980)": (
        66271,
        51548,
        "Hollerbach's polynomial 32 1/2 n^4 + 86 5/12 n^3 + "
        "171 1/4 n^2 + 53 1/3 n - 128 gives 67,143 at n = 6, not 66,271: "
        "one of the two is misprinted",
    ),
    "recursive Newton-Euler (Hollerbach 1980)": (
        852,
        738,
        "150n - 48 / 131n - 48 at n = 6: consistent",
    ),
    "Kane's equations, Stanford arm (Kane & Levinson 1983)": (
        646,
        394,
        "for their own Stanford arm model; the paper could not be "
        "consulted here, so its inertia assumptions are bracketed by "
        "three sets (bench robots, part 2)",
    ),
    "simplified Newton-Euler, ARM program": (
        224,
        174,
        "symbolically customized to one arm",
    ),
}
