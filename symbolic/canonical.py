"""A method-neutral normal form of derived expressions, for operation counts
that measure a method rather than how tidy its expressions came out.

Two formulations that derive the same equations can write them in forms of
different size for reasons that have nothing to do with the method: one
keeps ``m2*(sin(q3)**2 + cos(q3)**2)`` where the other's route cancelled it
to ``m2``, one writes ``m2*(2*x + 2*y)/2`` where the other writes
``m2*(x + y)``.  :func:`canonical` applies the same few rewrites to every
formulation's mass matrix and forcing before they are counted, so that such
differences do not reach the count:

1. **Pythagorean identities.**  In every sum, a pair of terms
   ``c*R*sin(x)**2`` and ``c*R*cos(x)**2`` with the same coefficient ``c``
   and the same remaining factors ``R`` becomes ``c*R``; the sum is searched
   again until no pair is left, so multiples and pairs inside larger sums
   collapse too (``m1 + m2*sin(x)**2 + m2*cos(x)**2`` gives ``m1 + m2``).
2. **Numeric factors.**  A sum that is a factor of a product gives up its
   numeric content (``Add.primitive``) to the product's coefficient, so
   ``(2*x + 2*y)/2`` is ``x + y``; a float that is an integer (``1.0``,
   ``0.0``) becomes that integer, so products with a structural zero vanish
   and products with one lose the factor.
3. **Expansion where it cancels.**  In each entry, the terms that hold a
   sine or cosine of a moving angle (one holding a function of time) are
   expanded and steps 1-2 applied to the sum; the result is kept when it
   counts fewer operations (``sympy.count_ops``).  This is what joins
   ``m2*((-h*sin(g)*sin(q3) - h*cos(g)*cos(q3))*cos(q3) - ...)`` to
   ``-h*m2*cos(g)``.  Only polynomials in those sines and cosines are
   expanded (a quotient would multiply out its denominator), and only up to
   :data:`EXPAND_LIMIT` nodes; terms without a moving angle keep their
   grouping (``c*(q1 + q2)`` stays).
4. **Angle sums.**  In every sum, pairs ``R*cos(a)*cos(b) ± R*sin(a)*sin(b)``
   become ``R*cos(a ∓ b)`` and ``R*sin(a)*cos(b) ± R*cos(a)*sin(b)``
   become ``R*sin(a ± b)``, until none is left (after step 3, which would
   otherwise have to undo them).
5. **trigsimp**, optional: ``sympy.trigsimp`` on each entry (of at most
   ``trig_max_ops`` operations), kept where it finishes within a time cap
   (``trig_cap`` seconds of CPU time for all entries together) and does
   not increase ``sympy.count_ops``.  Whether it finished is reported,
   since a capped pass leaves the other entries as steps 1-4 left them.

Steps 1, 2 and 4 walk each distinct subexpression once (the expressions
share subtrees); step 3 expands only what it is allowed to.  No step
changes the value of an expression (the tests check this at random
points).  They are a normal form for counting only: the equations a
formulation returns, and that the numeric backends evaluate, are left as
derived.
"""

from __future__ import annotations

import hashlib
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import sympy as sm
from sympy.core.function import AppliedUndef

from eomcompare.symbolic.counting import count_ops, tree_size

__all__ = [
    "CanonicalForm",
    "canonical",
    "collapse_angle_sums",
    "collapse_pythagorean",
    "EXPAND_LIMIT",
    "expand_shared",
    "EntryStore",
    "entry_digest",
    "same_expression",
    "shared_entries",
]

#: Largest entry (nodes of the terms that hold a moving angle, as a tree)
#: that step 3 expands: beyond it the expansion costs more than the count
#: it serves, and the composite sums of long chains are trees far larger
#: than their graphs.
EXPAND_LIMIT = 2000


@dataclass(frozen=True)
class CanonicalForm:
    """The rewritten expressions and what the pass did.

    Attributes
    ----------
    exprs : tuple of sympy expressions
        The inputs in canonical form, in order.
    trigsimp : str
        ``"applied"`` (every entry tried within the cap), ``"capped"`` (the
        cap was reached; later entries kept steps 1-2 only), ``"off"`` (not
        requested) or ``"unavailable"`` (no timer: not on the main thread).
    seconds : float
        Wall time of the whole pass.
    """

    exprs: tuple[sm.Basic, ...]
    trigsimp: str
    seconds: float


def _square_of(factor: sm.Basic, function) -> sm.Basic | None:
    """``x`` when ``factor`` is ``function(x)**2``, else None."""
    if factor.is_Pow and factor.exp == 2 and isinstance(factor.base, function):
        return factor.base.args[0]
    return None


def _split(term: sm.Basic, function) -> tuple[sm.Basic, sm.Basic] | None:
    """``(x, rest)`` with ``term = function(x)**2 * rest``, or None."""
    factors = sm.Mul.make_args(term)
    for i, factor in enumerate(factors):
        x = _square_of(factor, function)
        if x is not None:
            return x, sm.Mul(*factors[:i], *factors[i + 1 :])
    return None


def collapse_pythagorean(expr: sm.Basic) -> sm.Basic:
    """``expr`` (a sum) with every pair ``R*sin(x)**2 + R*cos(x)**2``
    replaced by ``R``, until no pair is left.  Other expressions are
    returned unchanged."""
    while expr.is_Add:
        terms = list(expr.args)
        cosines: dict[tuple[sm.Basic, sm.Basic], int] = {}
        for i, term in enumerate(terms):
            split = _split(term, sm.cos)
            if split is not None:
                cosines.setdefault(split, i)
        for i, term in enumerate(terms):
            split = _split(term, sm.sin)
            if split is None or split not in cosines:
                continue
            j = cosines[split]
            rest = split[1]
            kept = [t for k, t in enumerate(terms) if k not in (i, j)]
            expr = sm.Add(*kept, rest)
            break
        else:
            return expr
    return expr


def _trig_pairs(term: sm.Basic) -> list[tuple[str, sm.Basic, sm.Basic, sm.Basic]]:
    """Every way of writing ``term`` as ``f(a)*g(b)*rest`` with ``f, g``
    sine or cosine (to the first power) of different angles ``a < b`` (in
    sympy's order): ``(kind, a, b, rest)``, kind ``"ss"``, ``"cc"``,
    ``"sc"`` (sin a cos b) or ``"cs"`` (cos a sin b)."""
    factors = sm.Mul.make_args(term)
    trig = [i for i, f in enumerate(factors) if isinstance(f, (sm.sin, sm.cos))]
    out = []
    for ii, i in enumerate(trig):
        for j in trig[ii + 1 :]:
            fi, fj = factors[i], factors[j]
            if fi.args[0] == fj.args[0]:
                continue
            if sm.default_sort_key(fj.args[0]) < sm.default_sort_key(fi.args[0]):
                fi, fj = fj, fi
            kind = ("s" if isinstance(fi, sm.sin) else "c") + (
                "s" if isinstance(fj, sm.sin) else "c"
            )
            rest = sm.Mul(*(f for k, f in enumerate(factors) if k not in (i, j)))
            out.append((kind, fi.args[0], fj.args[0], rest))
    return out


#: Angle-sum identities as pairs of terms: (kind of the first term, kind of
#: the second, sign of the second's remaining factors relative to the
#: first's) -> the function and angle of ``a, b`` that replaces the pair.
_ANGLE_RULES = {
    ("cc", "ss", 1): (sm.cos, lambda a, b: a - b),
    ("cc", "ss", -1): (sm.cos, lambda a, b: a + b),
    ("sc", "cs", -1): (sm.sin, lambda a, b: a - b),
    ("sc", "cs", 1): (sm.sin, lambda a, b: a + b),
}


def collapse_angle_sums(expr: sm.Basic) -> sm.Basic:
    """``expr`` (a sum) with every pair of terms that an angle-sum identity
    joins replaced by one term, until no pair is left:
    ``R*cos(a)*cos(b) + R*sin(a)*sin(b)`` by ``R*cos(a - b)`` (``-`` between
    them: ``cos(a + b)``), ``R*sin(a)*cos(b) - R*cos(a)*sin(b)`` by
    ``R*sin(a - b)`` (``+``: ``sin(a + b)``).  Other expressions are
    returned unchanged."""
    while expr.is_Add:
        terms = list(expr.args)
        seen: dict[tuple[str, sm.Basic, sm.Basic, sm.Basic], int] = {}
        found = None
        for i, term in enumerate(terms):
            for kind, a, b, rest in _trig_pairs(term):
                for (first, second, sign), (f, angle) in _ANGLE_RULES.items():
                    # The pair in either order: the other term's factors
                    # are ``sign * rest``, the result takes the first's.
                    if kind == second:
                        other, r = first, sign * rest
                    elif kind == first:
                        other, r = second, rest
                    else:
                        continue
                    j = seen.get((other, a, b, sign * rest))
                    if j is not None and j != i:
                        found = (i, j, r * f(angle(a, b)))
                        break
                if found:
                    break
                seen.setdefault((kind, a, b, rest), i)
            if found:
                break
        if found is None:
            return expr
        i, j, joined = found
        expr = sm.Add(*(t for k, t in enumerate(terms) if k not in (i, j)), joined)
    return expr


def _numeric_content(args: Sequence[sm.Basic]) -> list[sm.Basic]:
    """A product's factors with each sum's numeric content moved out."""
    out: list[sm.Basic] = []
    for a in args:
        if a.is_Add:
            content, primitive = a.primitive()
            if content is not sm.S.One:
                out += [content, primitive]
                continue
        out.append(a)
    return out


def _rebuild(expr: sm.Basic, memo: dict, angles: bool = False) -> sm.Basic:
    """Steps 1 and 2 on ``expr`` (and step 4 with ``angles``), each
    distinct subexpression once."""
    done = memo.get(expr)
    if done is not None:
        return done
    if expr.is_Float:
        out = sm.Integer(int(expr)) if float(expr).is_integer() else expr
    elif not expr.args or expr.is_Atom:
        out = expr
    else:
        args = [_rebuild(a, memo, angles) for a in expr.args]
        if expr.is_Mul:
            out = sm.Mul(*_numeric_content(args))
        elif expr.is_Add:
            out = collapse_pythagorean(sm.Add(*args))
            if angles:
                out = collapse_angle_sums(out)
        elif all(a is b for a, b in zip(args, expr.args)):
            out = expr
        else:
            out = expr.func(*args)
    memo[expr] = out
    return out


def _moving_trig(expr: sm.Basic, memo: dict) -> bool:
    """Whether ``expr`` holds a sine or cosine of an angle that changes in
    time (one holding a function of time), each distinct node once."""
    done = memo.get(expr)
    if done is None:
        if isinstance(expr, (sm.sin, sm.cos)):
            done = _holds_time(expr.args[0], memo)
        else:
            done = any(_moving_trig(a, memo) for a in expr.args)
        memo[expr] = done
    return done


def _polynomial(expr: sm.Basic, memo: dict) -> bool:
    """Whether ``expr`` is a polynomial in its sines and cosines of moving
    angles: none of them under a division, a root or a function other
    than a power to a positive integer (expanding a quotient multiplies
    out its denominator, thousands of terms on a four-bar)."""
    key = ("p", expr)
    done = memo.get(key)
    if done is None:
        if isinstance(expr, (sm.sin, sm.cos)) or not _moving_trig(expr, memo):
            done = True
        elif expr.is_Add or expr.is_Mul:
            done = all(_polynomial(a, memo) for a in expr.args)
        elif expr.is_Pow:
            done = bool(expr.exp.is_Integer and expr.exp > 0) and _polynomial(
                expr.base, memo
            )
        else:
            done = False
        memo[key] = done
    return done


def _holds_time(expr: sm.Basic, memo: dict) -> bool:
    key = ("t", expr)
    done = memo.get(key)
    if done is None:
        done = isinstance(expr, (AppliedUndef, sm.Derivative)) or any(
            _holds_time(a, memo) for a in expr.args
        )
        memo[key] = done
    return done


def _expanded(
    expr: sm.Basic, memo: dict, trig_memo: dict, expand_memo: dict
) -> sm.Basic:
    """Step 3 on one entry: its terms holding a sine or cosine of a moving
    angle expanded, steps 1-2 on the sum, kept when it counts fewer
    operations.  An entry whose such terms are not polynomials in those
    sines and cosines, or are larger than :data:`EXPAND_LIMIT` nodes, is
    left as it is."""
    terms = sm.Add.make_args(expr)
    moving = [t for t in terms if _moving_trig(t, trig_memo)]
    if (
        not moving
        or not all(_polynomial(t, trig_memo) for t in moving)
        or tree_size(sm.Add(*moving)) > EXPAND_LIMIT
    ):
        return expr
    still = [t for t in terms if not _moving_trig(t, trig_memo)]
    expanded = (expand_shared(t, expand_memo) for t in moving)
    trial = _rebuild(sm.Add(*still, *expanded), memo)
    return trial if count_ops(trial) < count_ops(expr) else expr


#: The hints of ``sympy.expand(e, power_exp=False, log=False)``, as
#: ``Expr.expand`` passes them on to every ``_eval_expand_*`` method.
_EXPAND_HINTS = {
    "power_base": True,
    "power_exp": False,
    "mul": True,
    "log": False,
    "multinomial": True,
    "basic": True,
}
#: The order ``Expr.expand`` applies them in (sorted, multinomial before
#: mul), those that are on; then multinomial and mul until nothing changes.
_EXPAND_ORDER = ("basic", "multinomial", "mul", "power_base")
_EXPAND_AGAIN = ("multinomial", "mul")


def _expand_hint(expr, hint: str, memo: dict):
    """``Expr._expand_hint(expr, hint, **_EXPAND_HINTS)``, each distinct
    subexpression once: the same steps, whose result depends on the
    subexpression and the hint alone, so that a subtree shared by many
    terms (or many paths of one term) is expanded once instead of at
    every occurrence."""
    key = (hint, expr)
    got = memo.get(key)
    if got is not None:
        return got
    hit = False
    if getattr(expr, "args", ()) and not expr.is_Atom:
        sargs = []
        for arg in expr.args:
            arg, arghit = _expand_hint(arg, hint, memo)
            hit |= arghit
            sargs.append(arg)
        if hit:
            expr = expr.func(*sargs)
    out = (expr, hit)
    if hasattr(expr, hint):
        newexpr = getattr(expr, hint)(**_EXPAND_HINTS)
        if newexpr != expr:
            out = (newexpr, True)
    memo[key] = out
    return out


def expand_shared(expr: sm.Basic, memo: dict | None = None) -> sm.Basic:
    """``sympy.expand(expr, power_exp=False, log=False)``, the same steps
    in the same order (``Expr.expand``: each hint down the whole tree,
    then multinomial and mul again until nothing changes), with each
    distinct subexpression expanded once per hint (``memo``, which may be
    shared between calls).  sympy's own walk visits every path of a tree:
    the terms of a chain's equations share their subtrees many times.

    Examples
    --------
    >>> x, y = sm.symbols("x y")
    >>> expand_shared((x + y) ** 2 * (x - y))
    x**3 + x**2*y - x*y**2 - y**3
    """
    memo = {} if memo is None else memo
    expr = sm.sympify(expr)
    for hint in _EXPAND_ORDER:
        expr = _expand_hint(expr, "_eval_expand_" + hint, memo)[0]
    while True:
        was = expr
        for hint in _EXPAND_AGAIN:
            expr = _expand_hint(expr, "_eval_expand_" + hint, memo)[0]
        if expr == was:
            return expr


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


def _each_once(exprs: list[sm.Basic], step) -> list[sm.Basic]:
    """``[step(e) for e in exprs]`` with ``step`` run once per distinct
    expression (the mirrored entries of a symmetric mass matrix are the
    same expression): equal entries are found by their hash and
    same_expression, never by ``==`` along every path."""
    seen: dict[int, list[tuple[sm.Basic, sm.Basic]]] = {}
    compared: dict = {}
    out = []
    for e in exprs:
        bucket = seen.setdefault(hash(e), [])
        found = [got for done, got in bucket if same_expression(done, e, compared)]
        if not found:
            found = [step(e)]
            bucket.append((e, found[0]))
        out.append(found[0])
    return out


def entry_digest(expr: sm.Basic, memo: dict | None = None) -> str:
    """A digest of ``expr``'s structure, the same in every process: equal
    digests are equal expressions (sympy's ``==``).

    Each distinct node is hashed once (``memo``, keyed by the nodes, may
    be shared between calls): the hash of a node is that of its class's
    name and its arguments' digests; a leaf, and an applied undefined
    function (``q1(t)``, whose class is made at run time), is hashed by
    its ``srepr``, which names its assumptions.  Printing the tree itself
    (``srepr`` of the whole entry) would walk every path of its shared
    subtrees."""
    memo = {} if memo is None else memo
    done = memo.get(expr)
    if done is not None:
        return done
    if not expr.args or expr.is_Atom or isinstance(expr, AppliedUndef):
        text = "L" + sm.srepr(expr)
    else:
        text = (
            "N"
            + type(expr).__name__
            + "("
            + ",".join(entry_digest(a, memo) for a in expr.args)
            + ")"
        )
    done = hashlib.sha256(text.encode()).hexdigest()
    memo[expr] = done
    return done


class EntryStore(Protocol):
    """Where :func:`canonical` finds and keeps the canonical form of single
    entries, by :func:`entry_digest` (another process's derivation of the
    same system may have rewritten the same entry)."""

    def get(self, digest: str) -> sm.Basic | None: ...

    def put(self, digest: str, expr: sm.Basic) -> None: ...


#: The stores :func:`canonical` consults, innermost last
#: (:func:`shared_entries`).
_STORES: list[EntryStore] = []


@contextmanager
def shared_entries(store: EntryStore | None) -> Iterator[None]:
    """In the block, :func:`canonical` without ``trig_cap`` reads each
    entry's canonical form from ``store`` where it holds it and keeps there
    those it computes (None: the block computes every entry, as outside
    it).  The form of an entry does not depend on the others (steps 1-4
    rewrite entry by entry, the memos only skip repeated work), so the
    result is the same expressions."""
    if store is None:
        yield
        return
    _STORES.append(store)
    try:
        yield
    finally:
        _STORES.pop()


def _steps(exprs: list[sm.Basic]) -> list[sm.Basic]:
    """Steps 1-4 on ``exprs``, entry by entry."""
    memo: dict = {}
    out = [_rebuild(e, memo) for e in exprs]
    trig_memo: dict = {}
    expand_memo: dict = {}
    out = _each_once(out, lambda e: _expanded(e, memo, trig_memo, expand_memo))
    angle_memo: dict = {}
    return [_rebuild(e, angle_memo, angles=True) for e in out]


def _steps_shared(exprs: list[sm.Basic], store: EntryStore) -> list[sm.Basic]:
    """:func:`_steps`, with the entries ``store`` holds read from it and
    the others computed and kept there."""
    digests: dict = {}
    keys = [entry_digest(e, digests) for e in exprs]
    got: dict[str, sm.Basic] = {}
    for k in dict.fromkeys(keys):
        found = store.get(k)
        if found is not None:
            got[k] = found
    todo = [k for k in dict.fromkeys(keys) if k not in got]
    if todo:
        first = {k: e for k, e in zip(reversed(keys), reversed(exprs))}
        for k, e in zip(todo, _steps([first[k] for k in todo])):
            got[k] = e
            store.put(k, e)
    return [got[k] for k in keys]


class _Deadline(Exception):
    pass


@contextmanager
def _alarm(seconds: float):
    """Raise :class:`_Deadline` in the block after ``seconds`` of this
    process's CPU time (a timer signal: sympy's loops cannot be interrupted
    otherwise; CPU time, so that a busy machine does not cap more).  A
    timer the caller had set is restored, less the time spent here."""

    def ring(signum, frame):
        raise _Deadline

    previous = signal.signal(signal.SIGPROF, ring)
    start = time.process_time()
    before, interval = signal.setitimer(signal.ITIMER_PROF, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if before:
            spent = time.process_time() - start
            signal.setitimer(signal.ITIMER_PROF, max(before - spent, 1e-3), interval)


def canonical(
    exprs: Iterable[sm.Basic],
    *,
    trig_cap: float | None = None,
    trig_max_ops: int | None = None,
) -> CanonicalForm:
    """The canonical form of ``exprs`` (see the module's docstring).

    Parameters
    ----------
    exprs : iterable of sympy expressions
        Usually the entries of a mass matrix and a forcing vector.
    trig_cap : float, optional
        Seconds allowed for ``sympy.trigsimp`` over all entries; None (the
        default) leaves it out.
    trig_max_ops : int, optional
        Only entries of at most this many operations (``count_ops``) are
        given to ``trigsimp``; the others keep steps 1-4 (default: all).
    """
    start = time.perf_counter()
    exprs = [sm.sympify(e) for e in exprs]
    if trig_cap is None and _STORES:
        # trigsimp's cap is shared by the entries: only without it is an
        # entry's form its own.
        out = _steps_shared(exprs, _STORES[-1])
    else:
        out = _steps(exprs)
    status = "off"
    if trig_cap is not None:
        if threading.current_thread() is not threading.main_thread():
            status = "unavailable"
        else:
            status = "applied"
            deadline = time.process_time() + trig_cap
            for i, e in enumerate(out):
                if trig_max_ops is not None and count_ops(e) > trig_max_ops:
                    continue
                left = deadline - time.process_time()
                if left <= 0:
                    status = "capped"
                    break
                try:
                    with _alarm(left):
                        simpler = sm.trigsimp(e)
                except _Deadline:
                    status = "capped"
                    break
                if count_ops(simpler) <= count_ops(e):
                    out[i] = simpler
    return CanonicalForm(tuple(out), status, time.perf_counter() - start)
