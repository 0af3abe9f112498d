"""Functions of time to plain symbols: the one conversion every numeric
generator uses before ``lambdify`` or a code printer.

``lambdify`` and the C printer take plain symbols as arguments, while a
declaration is written in functions of time ``q(t)``, their derivatives and
``t``.  :func:`plain_replacements` names the plain symbols and orders the
replacement so derivatives are matched before the functions inside them
(``xreplace`` matches whole subtrees top-down, and two keys can nest).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sm
import sympy.physics.mechanics as me

from .calculus import dynamic_symbols, substitute

__all__ = ["TIME", "plain_replacements", "to_plain"]

t = me.dynamicsymbols._t

#: The plain symbol standing for time in generated code.
TIME = sm.Symbol("_t")


def plain_replacements(
    coordinates: Sequence, speeds: Sequence = (), accelerations: bool = False
):
    """Plain symbols for ``t``, coordinates, their rates, speeds (and
    coordinate accelerations) and the replacement dict.

    Returns
    -------
    rep : dict
        ``{q''(t): _qdd_i, q'(t): _qd_i, q(t): _q_i, u(t): _u_i, t: _t}``,
        derivatives first.
    symbols : dict
        ``{"T": _t, "Q": (...), "QD": (...), "U": (...), "QDD": (...)}``.

    Examples
    --------
    >>> q = me.dynamicsymbols("q")
    >>> rep, s = plain_replacements([q])
    >>> (q.diff(t) + q).xreplace(rep)
    _q0 + _qd0
    """
    q = list(coordinates)
    u = list(speeds)
    n = len(q)
    Q = sm.symbols(f"_q0:{n}")
    QD = sm.symbols(f"_qd0:{n}")
    U = sm.symbols(f"_u0:{len(u)}")
    QDD = sm.symbols(f"_qdd0:{n}") if accelerations else ()
    rep = {}
    if accelerations:
        rep.update({qi.diff(t, 2): s for qi, s in zip(q, QDD)})
    rep.update({qi.diff(t): s for qi, s in zip(q, QD)})
    rep.update(zip(q, Q))
    rep.update(zip(u, U))
    rep[t] = TIME
    return rep, {"T": TIME, "Q": Q, "QD": QD, "U": U, "QDD": QDD}


def to_plain(exprs, rep, system=None, memo=None) -> sm.Matrix:
    """``exprs`` as a Matrix in plain symbols.

    Prescribed functions of ``system`` (if given) are substituted first;
    shared subtrees are substituted once (``memo`` may be shared between
    calls with the same ``rep``).

    Raises
    ------
    RuntimeError
        When a function of time is left (a name missing from ``rep``).
    """
    m = sm.Matrix(exprs)
    if system is not None and (system.specified or system.u_aux):
        # Prescribed functions take their laws; auxiliary speeds are zero
        # in every motion (they exist only to expose constraint forces).
        m = system.substitute_specified(m)
    m = sm.Matrix(m.rows, m.cols, substitute(m, rep, memo))
    left = dynamic_symbols(m)
    if left:
        raise RuntimeError(
            f"functions of time left in generated code: {sorted(map(str, left))}"
        )
    return m
