"""The C code of a compiled model: the equations printed by sympy's C99
printer (with small integer powers as products and shared factors taken
out of sums), between the runtime kept as C files in ``numeric/c/`` (the
linear solve, the entry points, the function table and the call
extension).  :mod:`eomcompare.numeric.compiled` builds and loads it.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import sympy as sm
from sympy.core.parameters import distribute
from sympy.printing.c import C99CodePrinter

from eomcompare.symbolic.calculus import substitute
from eomcompare.symbolic.canonical import same_expression

from .model import plain_parts

__all__ = [
    "CompiledBackendError",
    "CompilerNotFoundError",
    "CompilationError",
    "c_source",
    "prepare_printer",
    "factor_numbers",
    "factor_common",
    "is_structurally_symmetric",
    "same_expression",
]


class CompiledBackendError(RuntimeError):
    """The compiled backend cannot be built here; ``backend="auto"`` falls
    back to lambdify on it."""


class CompilerNotFoundError(CompiledBackendError):
    """No C compiler, no Python headers or no cffi: the message names what
    is missing."""


class CompilationError(CompiledBackendError):
    """The compiler ran and failed (or the equations cannot be printed as C);
    the message carries its output."""


# ----------------------------------------------------------------------
# C generation
# ----------------------------------------------------------------------
class _Printer(C99CodePrinter):
    """C99 with small integer powers as products (``pow`` is a libm call)."""

    def _print_Pow(self, expr):
        b, e = expr.base, expr.exp
        if e.is_Integer and 0 < abs(int(e)) <= 8:
            base = self._print(b) if b.is_Atom else f"({self._print(b)})"
            prod = "*".join([base] * abs(int(e)))
            # Parenthesized: the Mul printer puts powers in denominators.
            return f"({prod})" if e > 0 else f"(1.0/({prod}))"
        return super()._print_Pow(expr)


_PRINTERS = threading.local()


def _printer() -> _Printer:
    """This thread's C printer: making one evaluates sympy's mathematical
    constants (milliseconds once c_source has emptied sympy's cache), and
    its state is reset by every ``doprint``.  A process forked from a
    thread that made one inherits it (:func:`prepare_printer`)."""
    printer = getattr(_PRINTERS, "printer", None)
    if printer is None:
        printer = _PRINTERS.printer = _Printer()
    return printer


def prepare_printer() -> None:
    """Make this thread's C printer now (the run's process does, before it
    forks the cases)."""
    _printer()


def _c_file(name: str) -> str:
    """The text of the C runtime file ``name`` (numeric/c/), shipped with
    the package: the parts of every compiled model that are not generated."""
    return (_C_DIR / name).read_text(encoding="utf-8")


_C_DIR = Path(__file__).resolve().parent / "c"

#: The defines of one model, then the linear solve (c/eom_solve.c); the
#: generated functions follow, then the entry points (c/eom_entry.c).
_HEADER = r"""
#include <math.h>
#include <string.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#endif

#define NX {nx}
#define NZ {nz}
#define NZA {nza}
/* 1: the mass matrix is the identity (explicit form), no solve. */
#define EOM_EXPLICIT {explicit}
/* 1: the mass matrix is symmetric by construction (every entry above the
   diagonal is the very expression below it): only its lower triangle is
   evaluated for the solve, which is LDL^T, with LU as the fallback. */
#define EOM_SYMMETRIC {symmetric}

"""
_SOLVE = _c_file("eom_solve.c")
_FOOTER = _c_file("eom_entry.c")


def factor_numbers(expr, memo=None):
    """``c*a + c*b + ... -> c*(a + b + ...)``: in every sum, the terms
    multiplied by the same number (up to sign) share one multiplication.

    The equations of a robot with numeric inertias are sums of products
    of numbers and kinematic terms, and many terms of one sum carry the
    same number (a mass or an inertia); sympy keeps them distributed (and
    ``cse`` does not factor), so each costs a multiplication.  Factored,
    the same expression has 20-40 % fewer multiplications after ``cse``.
    The result is the same function; in floating point it differs from
    the distributed form by rounding (one rounding per shared
    multiplication instead of one per term), as any evaluation order
    does.  Products with a sum are kept, not redistributed, only inside
    ``sympy.core.parameters.distribute(False)``: build, ``cse`` and print
    the results there.  ``memo`` may be shared between calls.

    Examples
    --------
    >>> from sympy.core.parameters import distribute
    >>> a, b, c = sm.symbols("a b c")
    >>> with distribute(False):
    ...     print(factor_numbers(3 * a - 3 * b + 2 * c))
    2*c + 3*(a - b)
    """

    def add(args):
        groups, new = {}, []
        for a in args:
            c, rest = a.as_coeff_Mul()
            if (
                (c.is_Rational or c.is_Float)
                and c.is_nonzero
                and abs(c) != 1
                and rest is not sm.S.One
            ):
                groups.setdefault(abs(c), []).append((c, rest))
            else:
                new.append(a)
        for k, terms in groups.items():
            if len(terms) == 1:
                new.append(sm.Mul(*terms[0]))
            else:
                new.append(sm.Mul(k, sm.Add(*[r if c > 0 else -r for c, r in terms])))
        return sm.Add(*new)

    return _rebuild_sums(expr, add, memo)


def _rebuild_sums(expr, add, memo=None):
    """``expr`` rebuilt bottom up with every sum made by ``add(args)`` from
    its rebuilt terms; each distinct subexpression once (``memo``), and a
    node whose arguments did not change kept as it is."""
    memo = {} if memo is None else memo

    def walk(e):
        if e.is_Atom:
            return e
        got = memo.get(e)
        if got is not None:
            return got
        args = [walk(a) for a in e.args]
        if e.is_Add:
            out = add(args)
        elif any(a is not b for a, b in zip(args, e.args)):
            out = e.func(*args)
        else:
            out = e
        memo[e] = out
        return out

    return walk(sm.sympify(expr))


def _term_factors(term):
    """A product as (its number, Counter of its other factors, each power
    with a positive integer exponent counted as that many factors)."""
    c, rest = term.as_coeff_Mul()
    factors = Counter()
    for f in sm.Mul.make_args(rest):
        if f.is_Pow and f.exp.is_Integer and f.exp > 0:
            factors[f.base] += int(f.exp)
        elif f is not sm.S.One:
            factors[f] += 1
    return c, factors


def _product(c, factors):
    return sm.Mul(c, *[b if k == 1 else sm.Pow(b, k) for b, k in factors.items()])


def _greedy_sum(terms):
    """The sum of ``terms`` [(number, factors)] with the factor (or number,
    up to sign) that most terms share taken out, recursively inside and
    outside: k terms sharing it cost one multiplication instead of k."""
    count = Counter()
    for c, factors in terms:
        count.update(("f", b) for b in factors)
        if c.is_Number and abs(c) != 1:
            count[("n", abs(c))] += 1
    best = max(count.items(), key=lambda kv: kv[1], default=(None, 0))
    if best[1] < 2:
        return sm.Add(*[_product(c, factors) for c, factors in terms])
    (kind, common), _ = best
    inside, outside = [], []
    for c, factors in terms:
        if kind == "f" and factors.get(common):
            rest = Counter(factors)
            rest[common] -= 1
            if not rest[common]:
                del rest[common]
            inside.append((c, rest))
        elif kind == "n" and c.is_Number and abs(c) == common:
            inside.append((sm.S.One if c > 0 else sm.S.NegativeOne, factors))
        else:
            outside.append((c, factors))
    return sm.Add(sm.Mul(common, _greedy_sum(inside)), _greedy_sum(outside))


def factor_common(expr, memo=None):
    """Every sum with the factors its terms share taken out, greedily
    (the most shared first): ``a*x + a*y + 2*b + 2*c`` -> ``a*(x + y) +
    2*(b + c)``.

    For the small sums ``cse`` leaves (its temporaries are sums of
    products of earlier temporaries); as :func:`factor_numbers`, the same
    function, a different rounding, kept only inside
    ``distribute(False)``.

    Examples
    --------
    >>> from sympy.core.parameters import distribute
    >>> a, b, c, x, y = sm.symbols("a b c x y")
    >>> with distribute(False):
    ...     print(factor_common(a * x + a * y + 2 * b + 2 * c))
    a*(x + y) + 2*(b + c)
    """
    return _rebuild_sums(
        expr, lambda args: _greedy_sum([_term_factors(a) for a in args]), memo
    )


def _c_function(printer, signature, outputs, prelude=()):
    """A C function body: ``prelude`` [(symbol, expr)] assigned in turn,
    then cse over all ``outputs`` [(array name, exprs)] or [(array name,
    exprs, indices)] (``exprs[k]`` written to ``name[indices[k]]``).

    The expressions are factored before and after ``cse``: their numbers
    first (:func:`factor_numbers`), which lets ``cse`` share the sums
    formed, then every common factor of the sums ``cse`` left
    (:func:`factor_common`; on the whole expressions before ``cse`` it
    would hide shared products from it)."""
    with distribute(False):
        memo = {}
        exprs = [factor_numbers(e, memo) for out in outputs for e in out[1]]
        tmps, reduced = sm.cse(exprs, symbols=sm.numbered_symbols("w"), order="none")
        memo = {}
        tmps = [(s, factor_common(e, memo)) for s, e in tmps]
        reduced = [factor_common(e, memo) for e in reduced]
        lines = [f"static void {signature}", "{"]
        for s, e in prelude:
            lines.append(f"    const double {s} = {printer.doprint(e)};")
        for s, e in tmps:
            lines.append(f"    const double {s} = {printer.doprint(e)};")
        it = iter(reduced)
        for name, es, *indices in outputs:
            where = indices[0] if indices else range(len(es))
            for i in where:
                lines.append(f"    {name}[{i}] = {printer.doprint(next(it))};")
    lines.append("}")
    return "\n".join(lines)


def is_structurally_symmetric(M) -> bool:
    """Whether the square matrix ``M`` is symmetric as written: every entry
    above the diagonal the same expression (sympy's structural ``==``,
    :func:`same_expression`) as its mirror below.  Nothing is simplified,
    so a mathematically symmetric matrix whose mirrored entries are
    written differently is not."""
    n, m = M.shape
    memo: dict = {}
    return n == m and all(
        same_expression(M[i, j], M[j, i], memo) for i in range(n) for j in range(i)
    )


def c_source(eom) -> tuple[str, dict]:
    """The C source of the compiled model of ``eom`` and its dimensions.

    Returns
    -------
    source : str
        Self-contained C (math.h only) defining ``eom_mf``, ``eom_unknowns``, ``eom_rates``,
        ``eom_acc``, ``eom_coords``, ``eom_state``, ``eom_forces``,
        ``eom_rhs`` and ``eom_rhs_batch``.
    info : dict
        ``nx``, ``nz``, ``nq``, ``forces`` (constraint force names),
        ``symmetric`` (the mass matrix is symmetric as written: its lower
        triangle is evaluated and solved by LDL^T, LU the fallback).

    Raises
    ------
    CompilationError
        When an expression has no C form (an undefined function, say).

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> src, info = c_source(get_formulation("kane").derive("double_pendulum"))
    >>> info["nx"], "eom_lu_solve" in src
    (4, True)
    """
    parts = plain_parts(eom)
    T, X, Z, Q, QD, P = (parts[k] for k in ("T", "X", "Z", "Q", "QD", "P"))
    rename = {T: sm.Symbol("t")}
    rename |= {s: sm.Symbol(f"x[{i}]") for i, s in enumerate(X)}
    rename |= {s: sm.Symbol(f"z[{i}]") for i, s in enumerate(Z)}
    rename |= {s: sm.Symbol(f"q[{i}]") for i, s in enumerate(Q)}
    rename |= {s: sm.Symbol(f"qd[{i}]") for i, s in enumerate(QD)}
    rename |= {s: sm.Symbol(f"p[{i}]") for i, s in enumerate(P)}

    memo = {}  # shared subtrees renamed once, across every piece

    def c(name):
        return substitute(parts[name], rename, memo)

    nx, nz, nq = len(X), len(Z), len(Q)
    forces = parts.get("forces_names", [])
    printer = _printer()
    # An explicit forcing with an evaluation order is printed as that
    # order (its tree is exponentially large), and needs no solve.
    explicit = eom.mass_matrix == sm.eye(nz)
    prelude, forcing = (), None
    if "assignments" in parts and explicit:
        syms, defs, outs = parts["assignments"]
        prelude = list(zip(syms, substitute(defs, rename, memo)))
        forcing = substitute(outs, rename, memo)
    M = sm.Matrix(nz, nz, list(c("M")))
    # A symmetric mass matrix (symmetric as written, never assumed) is
    # evaluated by its lower triangle alone and solved by LDL^T.
    symmetric = not explicit and nz > 0 and is_structurally_symmetric(M)
    if symmetric:
        lower = [(i, j) for i in range(nz) for j in range(i + 1)]
        m_out = ("M", [M[i, j] for i, j in lower], [i * nz + j for i, j in lower])
    else:
        m_out = ("M", list(M))
    # The pieces in the model's symbols first (distributing products as
    # sympy does by default), then every function built inside one
    # distribute(False): each change of that setting empties sympy's
    # cache, and per function that was twelve times per model.
    try:
        f_out = c("f") if forcing is None else forcing
        R, A, C, S = (c(k) for k in ("R", "A", "C", "S"))
        F = c("F") if forces else []
        with distribute(False):
            body = [
                _c_function(
                    printer,
                    "eom_mf_solve(double t, const double *x, const "
                    "double *p, double *M, double *f)",
                    [m_out, ("f", f_out)],
                    prelude,
                ),
                "static void eom_mf(double t, const double *x, const double *p, "
                "double *M, double *f)\n{\n    eom_mf_solve(t, x, p, M, f);\n"
                "    if (EOM_SYMMETRIC) eom_mirror(M);\n}",
                _c_function(
                    printer,
                    "eom_rates(double t, const double *x, const "
                    "double *z, const double *p, double *out)",
                    [("out", R)],
                ),
                _c_function(
                    printer,
                    "eom_acc(double t, const double *x, const "
                    "double *z, const double *p, double *out)",
                    [("out", A)],
                ),
                _c_function(
                    printer,
                    "eom_coords(double t, const double *x, const double *p, "
                    "double *out)",
                    [("out", C)],
                ),
                _c_function(
                    printer,
                    "eom_state(double t, const double *q, const "
                    "double *qd, const double *p, double *out)",
                    [("out", S)],
                ),
                _c_function(
                    printer,
                    "eom_forces(double t, const double *x, const "
                    "double *z, const double *p, double *out)",
                    [("out", F)],
                ),
            ]
    except Exception as exc:  # the printers raise several kinds
        raise CompilationError(
            f"{eom.formulation}: the equations of {eom.system.name!r} cannot "
            f"be printed as C: {exc}"
        ) from None
    source = (
        _HEADER.format(
            nx=nx,
            nz=nz,
            nza=max(nz, 1),
            explicit=int(explicit),
            symmetric=int(symmetric),
        )
        + _SOLVE
        + "\n\n".join(body)
        + "\n"
        + _FOOTER
    )
    info = {
        "nx": nx,
        "nz": nz,
        "nq": nq,
        "forces": list(forces),
        "symmetric": symmetric,
    }
    return source, info


#: The table of the generated functions, the one symbol a library exports
#: (the functions stay ``static``, so the compiler inlines them into
#: ``eom_rhs`` as before).
_TABLE = _c_file("eom_table.h")

_EXPORTS = (
    _TABLE
    + """
__attribute__((visibility("default")))
const struct eom_functions eom_functions = {
    eom_rhs, eom_rhs_batch, eom_mf, eom_rates, eom_acc, eom_coords,
    eom_state, eom_forces, eom_unknowns,
};
"""
)

#: The calls into a library through its table: one cffi extension for
#: every library, so that only the first model on a machine pays for
#: compiling against the Python headers.  A call costs what a direct call
#: into an extension of the equations did (one indirect C call more).
_CALL_CDEF = (
    _TABLE
    + """
int eom_call_rhs(const struct eom_functions *, double, const double *,
                 const double *, double *);
long eom_call_rhs_batch(const struct eom_functions *, long, const double *,
                        long, const double *, const double *, double *);
void eom_call_mf(const struct eom_functions *, double, const double *,
                 const double *, double *, double *);
void eom_call_rates(const struct eom_functions *, double, const double *,
                    const double *, const double *, double *);
void eom_call_acc(const struct eom_functions *, double, const double *,
                  const double *, const double *, double *);
void eom_call_coords(const struct eom_functions *, double, const double *,
                     const double *, double *);
void eom_call_state(const struct eom_functions *, double, const double *,
                    const double *, const double *, double *);
void eom_call_forces(const struct eom_functions *, double, const double *,
                     const double *, const double *, double *);
int eom_call_unknowns(const struct eom_functions *, double, const double *,
                      const double *, double *, int *);
void *eom_fast_rhs_function(void);
int eom_call_dop853(const struct eom_functions *, const double *, long, double,
                    double, double *, double, double, double, double,
                    const double *, long, double *, long *, double *, long,
                    int (*)(double, const double *));
"""
)

_CALL_SOURCE = _TABLE + _c_file("eom_call.c") + _c_file("eom_dop853.c")
