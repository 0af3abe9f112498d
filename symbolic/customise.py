"""Customisation passes: the work a robot's numbers make unnecessary,
removed from any formulation's expressions alike, each pass's contribution
counted.

Khalil & Kleinfinger's "customised" symbolic models (SYMORO; Khalil &
Dombre, *Modeling, Identification and Control of Robots*, ch. 9) owe their
low operation counts to a few method-neutral rules, applied here as
passes in order to a list of expressions (equations of motion of any
formulation, ``tau`` of any inverse dynamics):

1. ``cse``: the expressions as derived, common subexpressions once (the
   counting convention's starting point, :mod:`eomcompare.symbolic.literature_counts`);
2. ``zero products``: parameters that are zero (an assumption set: products
   of inertia, first moments off the joint axis) set to zero, so that the
   products with them vanish;
3. ``unit factors``: numbers equal to +-1 or 0 written as floats (``1.0 *
   x``, a parameter whose value is exactly +-1) made exact, so that the
   multiplications by one vanish;
4. ``constants``: parameter-only subexpressions computed once per
   parameter set and counted apart (``param_mul``, ``param_add``);
5. ``shared trig``: each sine and cosine value evaluated once for all the
   joints that use it (before this pass each occurrence is a call).

Multiplications and additions follow the literature's convention
(:func:`eomcompare.symbolic.literature_counts.count_ops_literature`); sin/cos calls
are apart and change only in pass 5.
"""

from __future__ import annotations

from collections import Counter

import sympy as sm

from .literature_counts import count_ops_literature

__all__ = ["PASSES", "customisation_passes", "trig_occurrences"]

#: The passes, in the order they are applied.
PASSES = ("cse", "zero products", "unit factors", "constants", "shared trig")


def trig_occurrences(exprs) -> Counter:
    """``{function name: occurrences}`` of the sin and cos calls in
    ``exprs`` as written: each call counted wherever it is an argument of
    a distinct subexpression (a larger subtree shared by the expressions is
    walked once), the calls an evaluation makes that computes each
    distinct subexpression once but does not share the trig values."""
    out: Counter = Counter()
    seen = set()
    stack = [sm.sympify(e) for e in exprs]
    while stack:
        e = stack.pop()
        if isinstance(e, (sm.sin, sm.cos)):
            out[type(e).__name__] += 1
        if e in seen:
            continue
        seen.add(e)
        stack.extend(e.args)
    return out


def _flat(exprs):
    out = []
    for e in exprs:
        out.extend(e if isinstance(e, sm.MatrixBase) else [e])
    return [sm.sympify(e) for e in out]


def _exact_units(e):
    """Floats equal to 0, 1 or -1 made exact (repeated until stable)."""
    rule = {
        f: sm.Integer(int(f)) for f in e.atoms(sm.Float) if float(f) in (0.0, 1.0, -1.0)
    }
    return e.xreplace(rule) if rule else e


def customisation_passes(exprs, parameters, *, zero=(), values=None) -> list[dict]:
    """Apply the passes of the module to ``exprs`` in turn and count after
    each: a list of rows ``{"pass", "mul", "add", "calls", "param_mul",
    "param_add", "saved_mul", "saved_add", "saved_calls"}``, ``saved_*``
    what the pass removed from the previous row (per evaluation).

    Parameters
    ----------
    exprs : iterable of expressions or matrices
    parameters : iterable of symbols
        The constants; every other symbol is a per-evaluation input.
    zero : iterable of symbols
        Parameters that are zero under the assumptions (pass 2).
    values : mapping, optional
        Parameter values: those exactly +-1 are substituted in pass 3.

    Raises
    ------
    ValueError
        When a ``zero`` symbol is not one of ``parameters``.
    """
    params = set(parameters)
    zero = set(zero)
    if zero - params:
        raise ValueError(
            f"zero parameters {sorted(map(str, zero - params))} are not "
            "among the parameters"
        )
    flat = _flat(exprs)
    rows = []

    def row(name, exprs, hoist, shared):
        c = count_ops_literature(exprs, params, hoist=hoist)
        calls = (
            sum(v for k, v in c.calls.items() if k in ("sin", "cos"))
            if shared
            else sum(trig_occurrences(exprs).values())
        )
        r = {
            "pass": name,
            "mul": c.mul,
            "add": c.add,
            "calls": calls,
            "param_mul": c.param_mul,
            "param_add": c.param_add,
        }
        prev = rows[-1] if rows else r
        r["saved_mul"] = prev["mul"] - r["mul"]
        r["saved_add"] = prev["add"] - r["add"]
        r["saved_calls"] = prev["calls"] - r["calls"]
        rows.append(r)

    row("cse", flat, False, False)
    flat = [e.xreplace({s: 0 for s in zero}) for e in flat] if zero else flat
    row("zero products", flat, False, False)
    units = {
        s: sm.Integer(int(v))
        for s, v in (values or {}).items()
        if s in params and s not in zero and v in (1, -1)
    }
    flat = [_exact_units(e.xreplace(units)) for e in flat]
    row("unit factors", flat, False, False)
    row("constants", flat, True, False)
    row("shared trig", flat, True, True)
    return rows
