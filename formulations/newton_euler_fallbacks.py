"""Fallbacks of the customised Newton-Euler recursion
(:mod:`eomcompare.formulations.newton_euler`): U's column along a revolute
joint's axis taken from the parent's, turned, and the definitions that may
use it in place of ``wd`` across the axis where nothing else needs that
component (:meth:`~eomcompare.formulations.newton_euler_program._Program.pruned`)."""

from __future__ import annotations

import sympy as sm

from eomcompare.symbolic import lists3 as v3

from .newton_euler_program import _Program

__all__ = [
    "_leaf_axis_entries",
    "_moment_fallbacks",
    "_turned_column",
    "_u_fallbacks",
    "_wd_fallbacks",
]


def _turned_column(M, T, i):
    """``{j: U_k[j, i]}`` for the entries across the axis i of a revolute
    link's U, from its parent's ``M = R^T U_p R`` (seen in the joint
    frame) turned by the joint's turn ``T``: ``U_k = A U_p A^T + qdd
    skew(a) + 2 q' (a w_r^T - (w_r . a) 1) + q'^2 (a a^T - 1)``, whose
    added terms lie in row i and on the diagonal, so that column i across
    the axis is ``A U_p A^T``'s.  Taken when M has at most one nonzero
    entry there: a product (of the first link's ``qdd``, say) that the turn
    of ``wd`` makes anyway, in place of ``w_j w_i +- wd``.  Empty
    otherwise."""
    across = [j for j in range(3) if j != i]
    if sum(1 for j in across if v3.nz(M[j, i])) > 1:
        return {}
    turned = v3.mv(T, [M[j, i] for j in range(3)])
    return {j: turned[j] for j in across}


def _leaf_axis_entries(U, i, wr, wdr, qa, wi, turned, let):
    """U's entries across the axis i of a revolute link without children
    (in place), from the turned parent's ``wr`` and ``wdr`` (before the
    joint's own rate) and the link's own ``w_i = wr_i + qa`` (named
    already): with b, c across (b = i + 1, c = i + 2 cyclic)::

        U_bi = w_b wr_i + wdr_c      U_ib = w_b (w_i + qa) - wdr_c
        U_ci = w_c wr_i - wdr_b      U_ic = w_c (w_i + qa) + wdr_b

    (``wd = wdr + qdd a + wr x qa a``: the rate's terms of ``wd`` across the
    axis join the products).  Four products and five sums, with ``w_i +
    qa = wr_i + 2 qa`` a sum and no product, in place of wd's two
    components across the axis (two products, two sums), the products
    ``w_b w_i``, ``w_c w_i`` and the four sums: a sum fewer where nothing
    else (a child) needs wd across the axis."""
    b, c = (i + 1) % 3, (i + 2) % 3
    w = [wr[j] if j != i else wi for j in range(3)]
    twice = let(wi + qa)
    if isinstance(let, _Program) and twice in let.symbols and wi in let.symbols:
        # Where nothing else needs w_i, wr_i + 2 qa (a product, no sum more).
        let.fallbacks.append((twice, wi, wr[i] + 2 * qa))
    if b not in turned:
        U[b, i] = w[b] * wr[i] + wdr[c]
    if c not in turned:
        U[c, i] = w[c] * wr[i] - wdr[b]
    U[i, b] = w[b] * twice - wdr[c]
    U[i, c] = w[c] * twice + wdr[b]


def _wd_across(a, i, column, pr):
    """``wd_a`` across the axis i from U's column along it (``U_ba = w_a
    w_b + wd_c`` for a, b, c cyclic)."""
    x, y = (a + 1) % 3, (a + 2) % 3
    p = pr[min(x, y), max(x, y)]
    return column[y] - p if x == i else p - column[x]


def _u_fallbacks(U, i, column, wd, pr, let):
    """Fallbacks (:meth:`_Program.pruned`) of a revolute link's U entries
    beside its axis i that use wd across the axis: ``U_bi`` is the turned
    parent's column entry and ``U_ib = 2 w_b w_i - U_bi``, taken where
    nothing else (a child's turn, a moment) needs that wd component: the
    turned entry (two products and a sum) in place of wd's own (the
    parent's turned, one product and two sums more) and a sum of the
    two entries."""
    for b in column:
        c = 3 - i - b
        via = wd[c]
        if via not in let.symbols:
            continue
        index = let.symbols.index
        for s, alone in (
            (U[b, i], column[b]),
            (U[i, b], 2 * pr[min(b, i), max(b, i)] - column[b]),
        ):
            if s in let.symbols and via in let.definitions[index(s)].free_symbols:
                let.fallbacks.append((s, via, alone))


def _wd_fallbacks(i, column, wdr, wd, pr, let):
    """Fallbacks (:meth:`_Program.pruned`) of a revolute link's wd across
    its axis i: from U's column along the axis (:func:`_wd_across`, a sum
    of the turned entry and a product U needs anyway) in place of the
    parent's wd turned, taken where nothing else needs that turned
    component: one product fewer, and the parent's wd component that only
    the turn needed is free to go (its own U entries then take the
    column's fallbacks)."""
    for a in column:
        via = wdr[a]
        if via not in let.symbols or wd[a] not in let.symbols:
            continue
        if via in let.definitions[let.symbols.index(wd[a])].free_symbols:
            let.fallbacks.append((wd[a], via, _wd_across(a, i, column, pr)))


def _moment_fallbacks(n, i, column, wd, pr, let):
    """Fallbacks (:meth:`_Program.pruned`) of a link's moment components
    that use wd across the axis i (``J_aa wd_a``): ``wd_a`` written in U's
    column along the axis (:func:`_wd_across`), taken where nothing else
    needs it (a link without children: ``XX wd_x + ZZ w_y w_z = (XX + ZZ)
    w_y w_z - XX U_yz``, one turned entry in place of the parent's turned
    wd and the joint rate's product and sum)."""
    for a in column:
        via = wd[a]
        if via not in let.symbols or n[a] not in let.symbols:
            continue
        d = let.definitions[let.symbols.index(n[a])]
        if via not in d.free_symbols:
            continue
        e = sm.expand(d.xreplace({via: _wd_across(a, i, column, pr)}))
        moving = sorted(e.free_symbols - let.parameters, key=str)
        let.fallbacks.append((n[a], via, sm.collect(e, moving)))
