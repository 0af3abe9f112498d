"""A compiled numeric backend: C from sympy's code printers, one C call per
right-hand side.

The mass matrix and forcing are printed as cse-reduced C, the dense solve is
in C (LDL^T when the mass matrix is symmetric as written, of which only the
lower triangle is then evaluated, with an LU factorization with partial
pivoting as the fallback for a matrix that is not positive definite, and as
the solve of every other matrix), and the state rates follow in the same
call, so that ``rhs(t, x)`` is a single call into compiled code
that writes a fresh numpy array.  ``rhs(t, x)`` of a
plain float64 vector goes into C by its data pointer (a function of the
extension written to numpy's C API, which keeps the GIL for the call): a
double pendulum's call takes 0.2 us, against 0.8 us when cffi converts the
arrays; anything else takes the cffi call, which converts it.  The
equations are compiled with the system C compiler (``$CC``, else ``cc``, ``gcc`` or ``clang``) as a plain
shared library (C and ``math.h`` only, no Python headers, so that it
compiles in a fraction of the time a Python extension takes) and called
through one small cffi extension, the same for every model, compiled once.
Both are cached on disk under a hash of their source, in
``$EOMCOMPARE_CACHE/compiled`` (default ``~/.cache/eomcompare/compiled``); a
second process or a second derivation of the same equations loads them
without compiling.  A library is loaded only with this user's signature
(:mod:`eomcompare.numeric.trust`): a damaged or planted one is rebuilt, never opened,
and a cache directory another user could write is not used (the libraries
are then built in a private temporary directory).

Select it with ``eom.numeric(backend="c")``; ``backend="auto"`` uses it when a
compiler is available and otherwise warns and falls back to lambdify, which
stays the default and needs no compiler.

Examples
--------
>>> from eomcompare.formulations import get_formulation
>>> eom = get_formulation("kane").derive("double_pendulum")
>>> model = eom.numeric(backend="auto")
>>> t0, q, qd = eom.system.random_state(seed=0)
>>> model.rhs(t0, model.state_from(q, qd, t0)).shape
(4,)
"""

from __future__ import annotations

import errno
import functools
import hashlib
import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
import weakref
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import sympy as sm
from sympy.core.parameters import distribute
from sympy.printing.c import C99CodePrinter

from eomcompare.symbolic.calculus import substitute

from .model import NumericModel, plain_parts
from .trust import (
    CacheRefused,
    check_private,
    ensure_key,
    private_dir,
    sign,
    temporary_cache,
    verify,
)

__all__ = [
    "CompiledModel",
    "CompiledBackendError",
    "CompilerNotFoundError",
    "CompilationError",
    "find_compiler",
    "default_cflags",
    "compiled_cache_dir",
    "c_source",
    "factor_numbers",
    "factor_common",
    "is_structurally_symmetric",
    "same_expression",
]

#: Flags for every build; part of the cache key.  No fast-math: the backend
#: must agree with lambdify to rounding (the order of the operations is the
#: generated code's).  Without explicit ``cflags`` the build adds
#: :data:`NATIVE_CFLAGS` when the compiler accepts them.
DEFAULT_CFLAGS = ("-O2", "-fPIC", "-shared", "-fno-math-errno")

#: Code for the processor of this machine (its vector units and fused
#: multiply-add): on a 7-joint arm's right-hand side 1.3-1.7x faster than
#: the baseline instruction set.  A fused multiply-add rounds once where a
#: product and a sum round twice, so results may differ from lambdify's in
#: the last bits, well inside the backend's 1e-12 agreement.  Libraries
#: built with them are keyed by the processor too
#: (:func:`_processor_fingerprint`): a cache directory shared between
#: machines never hands one a library for another's instructions.
NATIVE_CFLAGS = ("-march=native",)


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
# Environment: compiler, headers, cache directory
# ----------------------------------------------------------------------
def find_compiler(cc: str | None = None) -> list[str]:
    """The C compiler command as an argument list.

    ``cc`` if given, else ``$CC``, else the first of ``cc``, ``gcc``,
    ``clang`` on the PATH.

    Raises
    ------
    CompilerNotFoundError
        Naming the command that was looked for.

    Examples
    --------
    >>> find_compiler("gcc")[0].endswith("gcc")  # doctest: +SKIP
    True
    """
    if cc is None:
        cc = os.environ.get("CC") or None
        origin = "$CC"
    else:
        origin = "the compiler argument"
    if cc is not None:
        if not isinstance(cc, str):
            raise TypeError(f"compiler must be a str, not {type(cc).__name__}")
        words = shlex.split(cc)
        path = shutil.which(words[0]) if words else None
        if path is None:
            raise CompilerNotFoundError(
                f"C compiler {cc!r} (from {origin}) was not found; install a C "
                f"compiler (gcc or clang) or point CC to one, or use "
                f"backend='lambdify', which needs none"
            )
        return [path] + words[1:]
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    raise CompilerNotFoundError(
        "no C compiler found: none of cc, gcc, clang is on the PATH and CC is "
        "not set; install gcc or clang, or use backend='lambdify', which "
        "needs none"
    )


@functools.cache
def native_cflags(cc: tuple[str, ...]) -> tuple[str, ...]:
    """:data:`NATIVE_CFLAGS` if compiler ``cc`` builds with them on this
    machine, else none (a compiler or architecture that does not know
    ``-march=native``: the baseline instruction set)."""
    with tempfile.TemporaryDirectory(prefix="eomc-probe-") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text("double f(double a, double b, double c) { return a * b + c; }\n")
        cmd = [*cc, *NATIVE_CFLAGS, "-c", str(src), "-o", str(Path(tmp) / "probe.o")]
        try:
            proc = subprocess.run(cmd, capture_output=True, cwd=tmp)
        except OSError:
            return ()
    return NATIVE_CFLAGS if proc.returncode == 0 else ()


def default_cflags(compiler=None) -> tuple[str, ...]:
    """The flags of a build without explicit ``cflags``: :data:`DEFAULT_CFLAGS`
    and, where ``compiler`` (as for :func:`find_compiler`) takes them,
    :data:`NATIVE_CFLAGS`."""
    cc = compiler if isinstance(compiler, list) else find_compiler(compiler)
    return (*DEFAULT_CFLAGS, *native_cflags(tuple(cc)))


@functools.cache
def _processor_fingerprint() -> str:
    """What ``-march=native`` reads of the processor: its model and its
    instruction-set extensions (Linux's /proc/cpuinfo), else what the
    platform module says."""
    import platform

    parts = [platform.machine(), platform.processor()]
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    for key in ("model name", "flags", "Features", "CPU part"):
        for line in text.splitlines():
            if line.split(":", 1)[0].strip() == key:
                parts.append(line.split(":", 1)[1].strip())
                break
    return "\n".join(parts)


def _machine_key(flags) -> str:
    """The part of a build's cache key that names the processor: its
    fingerprint for a build for this processor's instructions, else
    nothing (a portable build runs anywhere)."""
    return _processor_fingerprint() if "-march=native" in flags else ""


def _python_include() -> str:
    inc = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(inc, "Python.h")):
        raise CompilerNotFoundError(
            f"the Python headers are missing (no Python.h in {inc}); install "
            f"the Python development package (e.g. python3-dev), or use "
            f"backend='lambdify'"
        )
    return inc


def _cffi():
    try:
        import cffi
    except ImportError:
        raise CompilerNotFoundError(
            "the compiled backend needs cffi (pip install cffi); or use "
            "backend='lambdify'"
        ) from None
    return cffi


def compiled_cache_dir(directory=None) -> Path:
    """Where compiled modules are kept: ``directory``, else
    ``numeric.cache_dir("compiled")``."""
    if directory is not None:
        return Path(directory)
    from eomcompare.numeric import cache_dir

    return cache_dir("compiled")


class CacheWarning(UserWarning):
    """The compiled cache was not used, or a library in it was rebuilt."""


_PRIVATE: dict[Path, Path] = {}


def _usable_cache_dir(directory: Path) -> Path:
    """``directory``, created private (:func:`eomcompare.numeric.trust.private_dir`),
    or, when it cannot be created or trusted (or the signing key cannot
    be), a private temporary directory for this process, with a warning
    naming why (once)."""
    if directory not in _PRIVATE:
        try:
            ensure_key()
            _PRIVATE[directory] = private_dir(directory)
        except CacheRefused as exc:
            _PRIVATE[directory] = temporary_cache()
            warnings.warn(f"{exc}: compiling uncached", CacheWarning, stacklevel=3)
    return _PRIVATE[directory]


def _signature_path(target: Path) -> Path:
    return target.with_name(target.name + ".sig")


def _cached(target: Path) -> bool:
    """Whether ``target`` is in the cache as this user built it (its
    signature holds).  A library that is not, damaged (cut short by a full
    disk or a killed copy: opening it could crash the process with SIGBUS)
    or planted (its constructors would run on opening), is removed with a
    warning, to be built again."""
    if not target.exists():
        return False
    try:
        check_private(target)
        signature = _signature_path(target).read_text()
        if verify(target.read_bytes(), target.name, signature):
            return True
        why = "signature mismatch (damaged, or not built by this user)"
    except FileNotFoundError:
        why = "no signature"
    except (OSError, CacheRefused) as exc:
        why = str(exc)
    warnings.warn(
        f"compiled cache: rebuilt {target.name}: {why}", CacheWarning, stacklevel=3
    )
    target.unlink(missing_ok=True)
    return False


def _install(built: Path, target: Path) -> None:
    """Move the library ``built`` to ``target``, the user's alone and
    signed (the signature first: a reader never finds a library newer than
    its signature unsigned)."""
    os.chmod(built, 0o700)
    signature = _signature_path(built)
    signature.write_text(sign(built.read_bytes(), target.name))
    os.replace(signature, _signature_path(target))
    os.replace(built, target)


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

/* Solve A z = b in place (b becomes z) by LU with partial pivoting, as
   LAPACK's dgesv; A is n x n, row-major.  1: zero or NaN pivot (singular),
   2: a non-finite solution. */
static int eom_lu_solve(int n, double *A, double *b)
{{
    for (int k = 0; k < n; ++k) {{
        int piv = k;
        double big = fabs(A[k * n + k]);
        for (int i = k + 1; i < n; ++i) {{
            double v = fabs(A[i * n + k]);
            if (v > big) {{ big = v; piv = i; }}
        }}
        if (!(big > 0.0)) return 1;
        if (piv != k) {{
            for (int j = k; j < n; ++j) {{
                double s = A[k * n + j];
                A[k * n + j] = A[piv * n + j];
                A[piv * n + j] = s;
            }}
            double s = b[k]; b[k] = b[piv]; b[piv] = s;
        }}
        double inv = 1.0 / A[k * n + k];
        for (int i = k + 1; i < n; ++i) {{
            double l = A[i * n + k] * inv;
            if (l != 0.0) {{
                for (int j = k + 1; j < n; ++j) A[i * n + j] -= l * A[k * n + j];
                b[i] -= l * b[k];
            }}
        }}
    }}
    for (int i = n - 1; i >= 0; --i) {{
        double s = b[i];
        for (int j = i + 1; j < n; ++j) s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
        if (!isfinite(b[i])) return 2;
    }}
    return 0;
}}

/* Solve A z = b by LDL^T without pivoting, reading only the lower triangle
   of A (row-major NZ x NZ).  A symmetric matrix whose pivots d_j are all
   positive is positive definite, where this is backward stable; at the
   first pivot that is not (or not finite) it returns 1 with A and b
   untouched, for the LU fallback.  2: a non-finite solution. */
static int eom_ldl_solve(const double *A, double *b)
{{
    double L[NZA * NZA], d[NZA], dinv[NZA], v[NZA];
    for (int j = 0; j < NZ; ++j) {{
        double s = A[j * NZ + j];
        for (int k = 0; k < j; ++k) {{
            v[k] = L[j * NZ + k] * d[k];
            s -= L[j * NZ + k] * v[k];
        }}
        if (!(s > 0.0) || !isfinite(s)) return 1;
        double inv = 1.0 / s;
        d[j] = s;
        dinv[j] = inv;
        for (int i = j + 1; i < NZ; ++i) {{
            double r = A[i * NZ + j];
            for (int k = 0; k < j; ++k) r -= L[i * NZ + k] * v[k];
            L[i * NZ + j] = r * inv;
        }}
    }}
    for (int i = 1; i < NZ; ++i) {{
        double s = b[i];
        for (int k = 0; k < i; ++k) s -= L[i * NZ + k] * b[k];
        b[i] = s;
    }}
    for (int i = NZ - 1; i >= 0; --i) {{
        double s = b[i] * dinv[i];
        for (int k = i + 1; k < NZ; ++k) s -= L[k * NZ + i] * b[k];
        b[i] = s;
        if (!isfinite(s)) return 2;
    }}
    return 0;
}}

/* The lower triangle of a symmetric A copied above the diagonal. */
static void eom_mirror(double *A)
{{
    for (int i = 0; i < NZ; ++i)
        for (int j = i + 1; j < NZ; ++j) A[i * NZ + j] = A[j * NZ + i];
}}

/* The solve of the right-hand side: which path, 1 LDL^T, 2 LU (0: none,
   explicit form), in *path; the status as eom_lu_solve's. */
static int eom_solve_mz(double *M, double *z, int *path)
{{
    if (EOM_EXPLICIT) {{ *path = 0; return 0; }}
    if (EOM_SYMMETRIC) {{
        int status = eom_ldl_solve(M, z);
        if (status != 1) {{ *path = 1; return status; }}
        eom_mirror(M);
    }}
    *path = 2;
    return eom_lu_solve(NZ, M, z);
}}
"""

_FOOTER = r"""
/* x' = rhs(t, x): 0 on success, else the solver's status (3: non-finite
   rates).  out is written in full only on success. */
static int eom_rhs(double t, const double *x, const double *p, double *out)
{
    double M[NZA * NZA], z[NZA];
    int path;
    eom_mf_solve(t, x, p, M, z);
    int status = eom_solve_mz(M, z, &path);
    if (status) return status;
    eom_rates(t, x, z, p, out);
    for (int i = 0; i < NX; ++i)
        if (!isfinite(out[i])) return 3;
    return 0;
}

/* The unknowns z at (t, x) by the solve of eom_rhs; *path as
   eom_solve_mz's.  The status of the solve. */
static int eom_unknowns(double t, const double *x, const double *p, double *z,
                        int *path)
{
    double M[NZA * NZA];
    eom_mf_solve(t, x, p, M, z);
    return eom_solve_mz(M, z, path);
}

/* k states, row-major k x NX; t has stride ts (0: one time for all).
   Returns 0, or 1 + the index of the first state that failed. */
static long eom_rhs_batch(long k, const double *t, long ts, const double *X,
                          const double *p, double *OUT)
{
    for (long i = 0; i < k; ++i)
        if (eom_rhs(t[i * ts], X + i * NX, p, OUT + i * NX)) return i + 1;
    return 0;
}
"""


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


def same_expression(a, b, memo=None) -> bool:
    """sympy's structural ``a == b``, each pair of subtrees compared once.

    ``==`` compares two equal expressions that are distinct objects along
    every path of their trees; on copies of a graph that shares subtrees
    (equations of motion) that is exponential in its depth.  Here a pair
    is compared once (``memo``, keyed by the objects, may be shared
    between calls), unequal hashes settle a pair at once, and leaves are
    compared by ``==``."""
    memo = {} if memo is None else memo
    if a is b:
        return True
    key = (id(a), id(b))
    got = memo.get(key)
    if got is not None:
        return got
    if type(a) is not type(b) or hash(a) != hash(b):
        out = False
    elif not a.args or not b.args:
        out = a == b
    else:
        out = len(a.args) == len(b.args) and all(
            same_expression(x, y, memo) for x, y in zip(a.args, b.args)
        )
    memo[key] = out
    return out


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
    printer = _Printer()
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
    try:
        body = [
            _c_function(
                printer,
                "eom_mf_solve(double t, const double *x, const "
                "double *p, double *M, double *f)",
                [m_out, ("f", c("f") if forcing is None else forcing)],
                prelude,
            ),
            "static void eom_mf(double t, const double *x, const double *p, "
            "double *M, double *f)\n{\n    eom_mf_solve(t, x, p, M, f);\n"
            "    if (EOM_SYMMETRIC) eom_mirror(M);\n}",
            _c_function(
                printer,
                "eom_rates(double t, const double *x, const "
                "double *z, const double *p, double *out)",
                [("out", c("R"))],
            ),
            _c_function(
                printer,
                "eom_acc(double t, const double *x, const "
                "double *z, const double *p, double *out)",
                [("out", c("A"))],
            ),
            _c_function(
                printer,
                "eom_coords(double t, const double *x, const double *p, double *out)",
                [("out", c("C"))],
            ),
            _c_function(
                printer,
                "eom_state(double t, const double *q, const "
                "double *qd, const double *p, double *out)",
                [("out", c("S"))],
            ),
            _c_function(
                printer,
                "eom_forces(double t, const double *x, const "
                "double *z, const double *p, double *out)",
                [("out", c("F") if forces else [])],
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


# ----------------------------------------------------------------------
# Build and load, cached by source hash
# ----------------------------------------------------------------------
#: The table of the generated functions, the one symbol a library exports
#: (the functions stay ``static``, so the compiler inlines them into
#: ``eom_rhs`` as before).
_TABLE = """
struct eom_functions {
    int (*rhs)(double, const double *, const double *, double *);
    long (*rhs_batch)(long, const double *, long, const double *,
                      const double *, double *);
    void (*mf)(double, const double *, const double *, double *, double *);
    void (*rates)(double, const double *, const double *, const double *,
                  double *);
    void (*acc)(double, const double *, const double *, const double *,
                double *);
    void (*coords)(double, const double *, const double *, double *);
    void (*state)(double, const double *, const double *, const double *,
                  double *);
    void (*forces)(double, const double *, const double *, const double *,
                   double *);
    int (*unknowns)(double, const double *, const double *, double *, int *);
};
"""

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
"""
)

_CALL_SOURCE = (
    _TABLE
    + """
typedef const struct eom_functions *eom_table;
static int eom_call_rhs(eom_table f, double t, const double *x,
                        const double *p, double *out)
{ return f->rhs(t, x, p, out); }
static long eom_call_rhs_batch(eom_table f, long k, const double *t, long ts,
                               const double *X, const double *p, double *OUT)
{ return f->rhs_batch(k, t, ts, X, p, OUT); }
static void eom_call_mf(eom_table f, double t, const double *x,
                        const double *p, double *M, double *g)
{ f->mf(t, x, p, M, g); }
static void eom_call_rates(eom_table f, double t, const double *x,
                           const double *z, const double *p, double *out)
{ f->rates(t, x, z, p, out); }
static void eom_call_acc(eom_table f, double t, const double *x,
                         const double *z, const double *p, double *out)
{ f->acc(t, x, z, p, out); }
static void eom_call_coords(eom_table f, double t, const double *x,
                            const double *p, double *out)
{ f->coords(t, x, p, out); }
static void eom_call_state(eom_table f, double t, const double *q,
                           const double *qd, const double *p, double *out)
{ f->state(t, q, qd, p, out); }
static void eom_call_forces(eom_table f, double t, const double *x,
                            const double *z, const double *p, double *out)
{ f->forces(t, x, z, p, out); }
static int eom_call_unknowns(eom_table f, double t, const double *x,
                             const double *p, double *z, int *path)
{ return f->unknowns(t, x, p, z, path); }

/* rhs(table, t, x, p, n) as a plain Python function: x and p float64
   ndarrays as they are (aligned, native, C-contiguous; x of n entries),
   the rates a new ndarray.  A cffi call converts its arrays with
   ffi.from_buffer, which costs more than the equations of a small model;
   this takes their data pointers.  None, with nothing raised, for any
   input it does not take as it is and for a failed solve: the caller
   then goes the cffi way, which converts, and reports failures. */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static int eom_plain_vector(PyObject *a, Py_ssize_t n)
{
    if (!PyArray_Check(a)) return 0;
    PyArrayObject *v = (PyArrayObject *)a;
    return PyArray_TYPE(v) == NPY_DOUBLE && PyArray_NDIM(v) == 1
        && (n < 0 || PyArray_DIM(v, 0) == n) && PyArray_ISCARRAY_RO(v)
        && PyArray_ISNOTSWAPPED(v);
}

static PyObject *eom_fast_rhs(PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "rhs(table, t, x, p, n) takes 5 arguments");
        return NULL;
    }
    eom_table f = (eom_table)PyLong_AsVoidPtr(args[0]);
    if (f == NULL) return NULL;
    double t = PyFloat_AsDouble(args[1]);
    if (t == -1.0 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    Py_ssize_t n = PyLong_AsSsize_t(args[4]);
    if (n < 0) return NULL;
    if (!eom_plain_vector(args[2], n) || !eom_plain_vector(args[3], -1))
        Py_RETURN_NONE;
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *out = PyArray_SimpleNew(1, dims, NPY_DOUBLE);
    if (out == NULL) return NULL;
    int status = f->rhs(t, (const double *)PyArray_DATA((PyArrayObject *)args[2]),
                        (const double *)PyArray_DATA((PyArrayObject *)args[3]),
                        (double *)PyArray_DATA((PyArrayObject *)out));
    if (status) { Py_DECREF(out); Py_RETURN_NONE; }
    return out;
}

static PyMethodDef eom_fast_rhs_def = {
    "eom_fast_rhs", (PyCFunction)(void (*)(void))eom_fast_rhs, METH_FASTCALL,
    "rhs(table, t, x, p, n): the rates, or None (see numeric.compiled)"};

/* A new reference to the function, or NULL (numpy's C API unavailable).
   cffi calls without the GIL: it is taken here. */
static void *eom_fast_rhs_function(void)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *fn = NULL;
    if (PyArray_API == NULL && _import_array() < 0)
        PyErr_Clear();
    else
        fn = PyCFunction_New(&eom_fast_rhs_def, NULL);
    if (fn == NULL) PyErr_Clear();
    PyGILState_Release(gil);
    return fn;
}
"""
)

_LOADED: dict[str, object] = {}
_LOCK = threading.Lock()


def _load(modname: str, path: Path):
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


class CompiledLibrary:
    """The compiled equations of one source, loaded.

    ``lib.eom_rhs(t, x, p, out)`` and the other generated functions are
    called as if they were the extension's own; ``ffi`` converts numpy
    arrays (``ffi.from_buffer``).  ``call`` is the extension's ``lib`` and
    ``table`` the library's function table, for the hot paths that call
    ``call.eom_call_rhs(table, ...)`` directly.
    """

    def __init__(self, call_module, shared, table):
        self.ffi = call_module.ffi
        self.call = call_module.lib
        self.table = table
        self._shared = shared  # keeps the library loaded
        self.lib = _BoundCalls(self.call, table)
        self.table_address = int(call_module.ffi.cast("uintptr_t", table))
        self.fast_rhs = _fast_rhs(call_module)


_FAST_RHS: dict = {}


def _fast_rhs(call_module):
    """The extension's ``rhs(table, t, x, p, n)`` as a Python function
    (one per extension), or None when numpy's C API cannot be loaded."""
    key = id(call_module)
    if key not in _FAST_RHS:
        ffi = call_module.ffi
        ptr = call_module.lib.eom_fast_rhs_function()
        if ptr == ffi.NULL:
            _FAST_RHS[key] = None
        else:
            import ctypes

            # A new reference from C, kept for the life of the process.
            _FAST_RHS[key] = ctypes.cast(
                int(ffi.cast("uintptr_t", ptr)), ctypes.py_object
            ).value
    return _FAST_RHS[key]


class _BoundCalls:
    """``eom_<name>(...)`` -> ``eom_call_<name>(table, ...)``."""

    def __init__(self, call, table):
        for name in (
            "rhs",
            "rhs_batch",
            "mf",
            "rates",
            "acc",
            "coords",
            "state",
            "forces",
            "unknowns",
        ):
            fn = getattr(call, f"eom_call_{name}")
            setattr(self, f"eom_{name}", functools.partial(fn, table))


def _call_module(cffi, cc, flags, directory):
    """The cffi extension that calls every library, built once per
    compiler, flags, Python and numpy (and cached on disk like the
    libraries)."""
    include = [_python_include(), np.get_include()]
    key = _key(
        _CALL_SOURCE,
        _CALL_CDEF,
        " ".join(cc),
        " ".join(flags),
        sys.version,
        cffi.__version__,
        np.__version__,
        np.get_include(),
        sysconfig.get_config_var("EXT_SUFFIX") or "",
        _machine_key(flags),
    )
    modname = f"_eomcall_{key}"
    if modname in _LOADED:
        return _LOADED[modname], 0.0
    target = directory / (modname + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    seconds = 0.0
    if not _cached(target):
        start = time.perf_counter()
        _compile_extension(cffi, cc, flags, include, modname, directory, target)
        seconds = time.perf_counter() - start
    try:
        module = _load(modname, target)
    except ImportError as exc:
        raise CompilationError(
            f"the compiled module {target} does not load: {exc}"
        ) from None
    _LOADED[modname] = module
    return module, seconds


def build_module(
    source: str, *, compiler: str | None = None, cflags=None, cache_dir=None
):
    """Compile (or load from the cache) the equations of ``source`` as a
    shared library, with the extension that calls them.

    Returns ``(library, compile_seconds)``, a :class:`CompiledLibrary`;
    ``compile_seconds`` is 0 when everything came from the cache.
    """
    cffi = _cffi()
    cc = find_compiler(compiler)
    flags = list(default_cflags(cc) if cflags is None else cflags)
    source = source + _EXPORTS
    modname = "_eomc_" + _key(
        source, " ".join(cc), " ".join(flags), sys.platform, _machine_key(flags)
    )
    with _LOCK:
        if modname in _LOADED:
            return _LOADED[modname], 0.0
        wanted = compiled_cache_dir(cache_dir)
        directory = _usable_cache_dir(wanted)
        try:
            call_module, seconds, target = _build_in(
                cffi, cc, flags, source, modname, directory
            )
        except OSError as exc:
            # A full disk, a quota, a read-only directory: built once more
            # where it can be, uncached, with a note naming the cache.
            _PRIVATE[wanted] = directory = temporary_cache()
            warnings.warn(
                f"compiled cache {wanted} cannot be written "
                f"({exc.strerror or exc}): compiling uncached",
                CacheWarning,
                stacklevel=2,
            )
            call_module, seconds, target = _build_in(
                cffi, cc, flags, source, modname, directory
            )
        try:
            shared = _abi_ffi(cffi).dlopen(str(target))
            address = int(
                _ABI.cast("uintptr_t", _ABI.addressof(shared, "eom_functions"))
            )
        except (OSError, AttributeError, cffi.FFIError) as exc:
            raise CompilationError(
                f"the compiled library {target} does not load: {exc}"
            ) from None
        table = call_module.ffi.cast("const struct eom_functions *", address)
        library = CompiledLibrary(call_module, shared, table)
        _LOADED[modname] = library
        return library, seconds


def _build_in(cffi, cc, flags, source, modname, directory):
    """The call module and the library of ``source`` in ``directory``,
    each compiled there unless signed there already: ``(call module,
    compile seconds, library path)``."""
    call_module, seconds = _call_module(cffi, cc, flags, directory)
    target = directory / f"{modname}.so"
    if not _cached(target):
        start = time.perf_counter()
        _compile_library(cc, flags, source, modname, directory, target)
        seconds += time.perf_counter() - start
    return call_module, seconds, target


_ABI = None


def _abi_ffi(cffi):
    """The cffi instance that opens libraries and finds their table."""
    global _ABI
    if _ABI is None:
        ffi = cffi.FFI()
        ffi.cdef(_TABLE + "extern struct eom_functions eom_functions;")
        _ABI = ffi
    return _ABI


#: Errors of a directory that cannot take a file, as a compiler reports
#: them (the system's own messages): the cache is at fault, not the code.
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def _run_compiler(cmd, cwd):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    except OSError as exc:
        raise CompilerNotFoundError(
            f"C compiler {cmd[0]!r} cannot be run: {exc}"
        ) from None
    if proc.returncode != 0:
        # A file size limit kills the compiler with SIGXFSZ.
        xfsz = getattr(signal, "SIGXFSZ", None)
        if xfsz is not None and proc.returncode == -xfsz:
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), cwd)
        for code in _DISK_ERRORS:
            if os.strerror(code) in proc.stderr:
                raise OSError(code, os.strerror(code), cwd)
        raise CompilationError(
            f"compiling the generated C failed ({shlex.join(cmd)}):\n"
            f"{proc.stderr[-4000:]}"
        )


def _compile_library(cc, flags, source, modname, directory, target):
    # A private build directory and an atomic rename: processes sharing the
    # cache never see a half-written library.
    with tempfile.TemporaryDirectory(dir=directory, prefix="build-") as tmp:
        csrc = Path(tmp) / f"{modname}.c"
        csrc.write_text(source)
        out = Path(tmp) / target.name
        _run_compiler(cc + flags + [str(csrc), "-o", str(out), "-lm"], tmp)
        os.chmod(csrc, 0o600)
        os.replace(csrc, directory / f"{modname}.c")
        _install(out, target)


def _compile_extension(cffi, cc, flags, include, modname, directory, target):
    from cffi.recompiler import recompile

    ffi = cffi.FFI()
    ffi.cdef(_CALL_CDEF)
    with tempfile.TemporaryDirectory(dir=directory, prefix="build-") as tmp:
        csrc = Path(tmp) / f"{modname}.c"
        # ffi.compile() would chdir into its build directory; only the C
        # is taken from cffi and the compiler is run here.
        recompile(
            ffi,
            modname,
            _CALL_SOURCE,
            c_file=str(csrc),
            call_c_compiler=False,
            uses_ffiplatform=False,
            compiler_verbose=False,
        )
        out = Path(tmp) / target.name
        _run_compiler(
            # The fast rhs uses the full C API (vectorcall, numpy's).
            cc
            + flags
            + ["-D_CFFI_NO_LIMITED_API"]
            + [f"-I{i}" for i in include]
            + [str(csrc), "-o", str(out)],
            tmp,
        )
        _install(out, target)


# ----------------------------------------------------------------------
# The model
# ----------------------------------------------------------------------
_SOURCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _generated_c(eom):
    """C source and dimensions of ``eom``, generated once per equations."""
    got = _SOURCES.get(eom)
    if got is None:
        start = time.perf_counter()
        source, info = c_source(eom)
        got = (source, info, time.perf_counter() - start)
        _SOURCES[eom] = got
    return got


_F8 = np.dtype(float)
_PATHS = {0: "none", 1: "ldlt", 2: "lu"}


class CompiledModel(NumericModel):
    """The ``"c"`` backend: the numeric contract of
    :class:`~eomcompare.numeric.model.NumericModel` evaluated in compiled C.

    Parameters
    ----------
    eom : EquationsOfMotion
    parameters : mapping, optional
        Parameter values overriding the declaration's.
    compiler : str, optional
        C compiler command (default ``$CC``, else cc, gcc or clang).
    cflags : sequence of str, optional
        Compiler flags (default :data:`DEFAULT_CFLAGS`, with
        :data:`NATIVE_CFLAGS` where the compiler accepts them).
    cache_dir : path, optional
        Directory of compiled modules (default :func:`compiled_cache_dir`).

    Raises
    ------
    CompilerNotFoundError
        When no C compiler, Python headers or cffi are available.
    CompilationError
        When the generated C does not compile.

    Notes
    -----
    ``rhs`` is one C call: mass matrix, forcing, the solve and the state
    rates.  The solve is LDL^T on the lower triangle when the mass matrix
    is symmetric as written (:func:`is_structurally_symmetric`), falling
    back to LU with partial pivoting at a pivot that is not positive; LU
    for any other matrix (:meth:`compiled_unknowns` tells which ran).  Every call returns a fresh array.  When
    the solve fails, the call is repeated through numpy to raise the same
    :class:`SingularConfigurationError` as the lambdify backend.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> eom = get_formulation("kane").derive("double_pendulum")
    >>> model = eom.numeric(backend="c")  # doctest: +SKIP
    >>> model.rhs(0.0, [0.1, 0.2, 0.0, 0.0]).shape  # doctest: +SKIP
    (4,)
    """

    backend = "c"

    def __init__(
        self,
        eom,
        parameters: Mapping | None = None,
        *,
        compiler: str | None = None,
        cflags=None,
        cache_dir=None,
    ):
        source, info, self._codegen_seconds = _generated_c(eom)
        self._module, self.compile_seconds = build_module(
            source, compiler=compiler, cflags=cflags, cache_dir=cache_dir
        )
        self._lib = self._module.lib
        # The hot paths call the extension with the table themselves.
        self._table = self._module.table
        self._c_rhs = self._module.call.eom_call_rhs
        self._c_rhs_batch = self._module.call.eom_call_rhs_batch
        self._fast_rhs = self._module.fast_rhs
        self._table_address = self._module.table_address
        self._fb = self._module.ffi.from_buffer
        self._dbl = self._module.ffi.typeof("double[]")
        self.force_names = tuple(info["forces"])
        self._xshape = (len(eom.states),)
        super().__init__(eom, parameters)

    def _set_parameters(self, p):
        self._pc = self._fb("double[]", p)

    @property
    def codegen_seconds(self) -> float:
        """Seconds spent printing the C (compiling excluded)."""
        return self._codegen_seconds

    def _call(self, fn, t0, inputs, outputs) -> None:
        """``fn(t, *inputs, p, *outputs)``, one of the generated C functions
        (every array contiguous doubles; the outputs written in place)."""
        fb = self._fb
        fn(
            float(t0),
            *[fb("double[]", a) for a in inputs],
            self._pc,
            *[fb("double[]", a) for a in outputs],
        )

    def _mass_matrix_and_forcing(self, t0, x):
        n = self.n_unknowns
        M = np.empty((n, n))
        f = np.empty(n)
        self._call(self._lib.eom_mf, t0, (x,), (M, f))
        return M, f

    def _rhs(self, t0, x) -> np.ndarray:
        # One C call: mass matrix, forcing, solve and rates.  The fast
        # path takes float64 arrays of the right shape as they are, and
        # answers None for anything else and for a failed solve, which
        # the cffi call below converts (never reinterprets) or reports.
        fast = self._fast_rhs
        if fast is not None:
            out = fast(self._table_address, t0, x, self._p, self._xshape[0])
            if out is not None:
                return out
        if type(x) is not np.ndarray or x.dtype is not _F8 or x.shape != self._xshape:
            x = self._vec(x, self.n_states, "x")
        out = np.empty(self.n_states)
        fb, dbl, table = self._fb, self._dbl, self._table
        try:
            status = self._c_rhs(table, t0, fb(dbl, x), self._pc, fb(dbl, out))
        except (TypeError, ValueError, BufferError):  # a strided view, say
            x = self._vec(x, self.n_states, "x")
            status = self._c_rhs(table, float(t0), fb(dbl, x), self._pc, fb(dbl, out))
        if status:
            return self._rates_after_failure(t0, x)
        return out

    def compiled_unknowns(self, t0, x):
        """The unknowns at ``(t0, x)`` by the compiled solve of ``rhs``,
        and which solve produced them.

        Returns
        -------
        z : ndarray or None
            The unknowns (q'' or u', and multipliers), None when the solve
            failed (a singular matrix: ``rhs`` then raises).
        path : {"ldlt", "lu", "none"}
            LDL^T (a symmetric, positive definite mass matrix), LU with
            partial pivoting (any other, or the fallback of LDL^T), or no
            solve (explicit form).
        """
        x = self._vec(x, self.n_states, "x")
        z = np.empty(max(self.n_unknowns, 1))
        path = self._module.ffi.new("int *")
        status = self._lib.eom_unknowns(
            float(t0), self._fb("double[]", x), self._pc, self._fb("double[]", z), path
        )
        return (None if status else z[: self.n_unknowns]), _PATHS[path[0]]

    def _rates_after_failure(self, t0, x):
        # numpy repeats the solve and raises the lambdify backend's error;
        # if it does not, its solution is used.
        return self._rates(t0, x, self.solve_unknowns(t0, x))

    def _rates(self, t0, x, z):
        out = np.empty(self.n_states)
        self._call(self._lib.eom_rates, t0, (x, np.ascontiguousarray(z, float)), (out,))
        return out

    def _rhs_batch(self, T, X) -> np.ndarray:
        # One C call for all states; a state whose solve fails is redone
        # through numpy (raising for it), then the rest continue in C.
        k = X.shape[0]
        if T.ndim == 0:
            T, ts = T.reshape(1), 0
        else:
            T, ts = np.ascontiguousarray(T), 1
        out = np.empty((k, self.n_states))
        fb = self._fb
        bad = self._c_rhs_batch(
            self._table,
            k,
            fb("double[]", T),
            ts,
            fb("double[]", X),
            self._pc,
            fb("double[]", out),
        )
        while bad:
            i = bad - 1
            out[i] = self._rates_after_failure(T[i * ts], X[i])
            if i + 1 == k:
                break
            rest = self._c_rhs_batch(
                self._table,
                k - i - 1,
                fb("double[]", T[(i + 1) * ts :] if ts else T),
                ts,
                fb("double[]", X[i + 1 :]),
                self._pc,
                fb("double[]", out[i + 1 :]),
            )
            bad = rest + i + 1 if rest else 0
        return out

    def _state(self, t0, q, qd):
        out = np.empty(self.n_states)
        self._call(self._lib.eom_state, t0, (q, qd), (out,))
        return out

    def _coordinates(self, t0, x):
        out = np.empty(2 * self.n_coordinates)
        self._call(self._lib.eom_coords, t0, (x,), (out,))
        return out

    def _accelerations(self, t0, x, z):
        out = np.empty(self.n_coordinates)
        self._call(self._lib.eom_acc, t0, (x, np.ascontiguousarray(z, float)), (out,))
        return out

    def _forces(self, t0, x, z):
        out = np.empty(len(self.force_names))
        self._call(
            self._lib.eom_forces, t0, (x, np.ascontiguousarray(z, float)), (out,)
        )
        return out
