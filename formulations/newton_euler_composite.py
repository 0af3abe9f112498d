"""The mass matrix of a joint tree by composite links, customised as
:mod:`eomcompare.formulations.newton_euler` is (SYMORO's inertia matrix; Khalil &
Dombre ch. 9): in the standard or base inertial parameters, each link's
frame, only the nonzero entries of the modified-DH rotations.

From the tips inwards, the composite link k (k and everything outboard of
it) has, about the origin of frame k and in its components, the inertia
``Jc``, first moment ``MSc`` and mass ``Mc``; a child c carried into its
parent p (``A`` the p-to-c rotation, ``P`` c's origin in p)::

    Jc_p  += A^T Jc_c A + Mc_c (|P|^2 1 - P P^T)
             + 2 (P . s) 1 - P s^T - s P^T,      s = A^T MSc_c
    MSc_p += s + Mc_c P ;   Mc_p += Mc_c

Column j of M is the wrench the composite link j needs for a unit q''_j
at rest, ``(f, n) = (z x MSc, Jc z)`` (revolute) or ``(Mc z, MSc x z)``
(prismatic), carried inwards as in the inverse recursion; entry ``M[i, j]``
is its axis component at joint i.
"""

from __future__ import annotations

import sympy as sm

from eomcompare.symbolic import lists3 as v3

from .kane_recursive import tree_record
from .newton_euler import (
    PARAMETER_SETS,
    _rotation,
    customised_inverse_dynamics,
    link_inertia,
)
from .newton_euler_program import _Program

__all__ = ["composite_mass_matrix", "customised_forward_dynamics"]


def _rotate_inertia(A, J, let):
    """``A^T J A`` of a symmetric J, each entry once."""
    B = [
        [
            v3.dot([J[i, m] for m in range(3)], [A[m, j] for m in range(3)])
            for j in range(3)
        ]
        for i in range(3)
    ]
    B = [let(row) for row in B]
    out = sm.zeros(3, 3)
    for i in range(3):
        for j in range(i, 3):
            out[i, j] = out[j, i] = let(
                v3.dot([A[m, i] for m in range(3)], [B[m][j] for m in range(3)])
            )
    return out


def composite_mass_matrix(ms, inertia, let):
    """The entries ``M[i, j]``, ``i <= j``, row by row (see the module),
    each intermediate named by ``let``."""
    links = tree_record(ms, "customised Newton-Euler").links
    n = len(links)
    q = list(ms.coordinates)
    A = [None] + [_rotation(s, q[k]) for k, s in enumerate(links)]
    P = [None] + [s.origin(q[k]) for k, s in enumerate(links)]
    Jc = [None] + [sm.Matrix(J) for _, _, J in inertia]
    MSc = [None] + [list(mc) for _, mc, _ in inertia]
    Mc = [None] + [m for m, _, _ in inertia]
    for k in range(n, 0, -1):
        p = links[k - 1].parent
        Jc[k] = sm.Matrix(let(Jc[k]))
        MSc[k] = let(MSc[k])
        if not p:
            continue
        s = let(v3.mtv(A[k], MSc[k]))
        Pk, m = P[k], Mc[k]
        J = _rotate_inertia(A[k], Jc[k], let)
        Ps = v3.dot(Pk, s)
        PP = v3.dot(Pk, Pk)
        for i in range(3):
            for j in range(i, 3):
                e = J[i, j] - (Pk[i] * s[j] if v3.nz(Pk[i]) and v3.nz(s[j]) else 0)
                e -= Pk[j] * s[i] if v3.nz(Pk[j]) and v3.nz(s[i]) else 0
                if v3.nz(m):
                    e -= m * Pk[i] * Pk[j]
                if i == j:
                    e += 2 * Ps + (m * PP if v3.nz(m) else 0)
                Jc[p][i, j] = Jc[p][i, j] + e
                Jc[p][j, i] = Jc[p][i, j]
        MSc[p] = v3.add(MSc[p], s, [m * x for x in Pk] if v3.nz(m) else [0, 0, 0])
        Mc[p] = Mc[p] + m
    out = {}
    for j in range(1, n + 1):
        # The wrench of a unit q''_j at rest on the composite link j, S_j
        # = (Sw, Sv): (f, n) = (Sw x MSc + Mc Sv, Jc Sw + MSc x Sv).
        Sw, Sv = links[j - 1].joint.motion_subspace()
        f = v3.add(v3.cross(Sw, MSc[j]), [Mc[j] * x for x in Sv])
        nn = v3.add(list(Jc[j] * sm.Matrix(Sw)), v3.cross(MSc[j], Sv))
        k = j
        while k:
            sk = links[k - 1]
            out[k, j] = sk.joint.generalized_force(nn, f)
            p = sk.parent
            if not p:
                break
            f = let(v3.mtv(A[k], let(f)))
            nn = let(v3.add(v3.mtv(A[k], let(nn)), v3.cross(P[k], f)))
            k = p
    return [
        out.get((i, j), sm.S.Zero) for i in range(1, n + 1) for j in range(i, n + 1)
    ]


def customised_forward_dynamics(
    ms,
    *,
    assumptions="general",
    parameters="standard",
    mass_matrix_only=False,
    link=None,
):
    """The forward dynamics' expressions as one evaluation order: ``tau -
    h``, ``h`` the customised inverse dynamics at ``q'' = 0``
    (:func:`eomcompare.formulations.newton_euler.customised_inverse_dynamics`), and M
    by composite links (:func:`composite_mass_matrix`); ``q'' = M^-1 (tau -
    h)`` is then a symmetric solve
    (:func:`eomcompare.symbolic.literature_counts.ldl_solve_counts`).

    Returns
    -------
    (Assignments, symbols, n)
        Outputs: the n entries of ``tau - h`` (``tau`` the symbols
        ``_tau0``, ...), then ``M[i, j]`` for ``i <= j`` row by row (only
        these with ``mass_matrix_only``); the inertial parameter symbols;
        n.  ``link``, when given, is
        :func:`eomcompare.formulations.newton_euler.link_inertia`'s result for these
        options, computed once by the caller.

    Raises
    ------
    UnsupportedSystemError, ValueError
        As :func:`eomcompare.formulations.newton_euler.customised_inverse_dynamics`.
    """
    if parameters not in PARAMETER_SETS:
        raise ValueError(
            f"parameters must be one of {list(PARAMETER_SETS)}, not {parameters!r}"
        )
    tree_record(ms, "customised Newton-Euler")
    n = len(ms.coordinates)
    inertia, symbols = link or link_inertia(ms, assumptions, parameters)
    let = _Program(set(symbols) | set(ms.parameters))
    outputs = []
    if not mass_matrix_only:
        zero = [sm.S.Zero] * n
        h, _ = customised_inverse_dynamics(ms, zero, inertia=inertia, program=let)
        tau = sm.symbols(f"_tau0:{n}")
        outputs = [t - x for t, x in zip(tau, h)]
    outputs += composite_mass_matrix(ms, inertia, let)
    return let.pruned(outputs), tuple(symbols), n
