"""Redundant velocity constraints, reduced by rank.

sympy users often write every component of a contact point's velocity as a
velocity constraint, although one of them is the time derivative of a
configuration constraint (a rolling disc's vertical contact velocity and the
height of its centre).  The rows are then dependent and the dependent
speeds over-determined.  Instead of refusing such a declaration, the rows
``A u + b = 0`` are evaluated at random configurations and reduced to a
maximal independent set; the dropped rows are named in a
:class:`RedundantConstraintWarning`.

Which rows are kept: those in which auxiliary speeds appear first (they
carry the constraint forces asked for), then the declared velocity
constraints, and the derivatives of holonomic constraints last (the
holonomic constraint itself still holds the coordinates).

Redundant holonomic constraints (more of them than dependent coordinates,
as in Bricard's mechanism) are dependent only on the constraint manifold:
their rows are then tested at random configurations that satisfy the
holonomic constraints (the dependent coordinates solved by Gauss-Newton),
not at arbitrary ones.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.types import Expr, Symbol

from .errors import DeclarationError

if TYPE_CHECKING:
    from .base import MechanicalSystem

__all__ = ["RedundantConstraintWarning", "independent_rows"]

t = me.dynamicsymbols._t


class RedundantConstraintWarning(UserWarning):
    """Velocity constraints that depend on the others were dropped."""


def _rank(M, tol=1e-9):
    if not M.size:
        return 0
    s = np.linalg.svd(M, compute_uv=False)
    return int(np.sum(s > tol * max(1.0, s[0])))


def independent_rows(
    ms: MechanicalSystem,
    rows: Sequence[Expr],
    labels: Sequence[str],
    n_samples: int = 3,
    seed: int = 12345,
) -> list[int]:
    """Indices of a maximal independent subset of velocity constraint rows.

    Parameters
    ----------
    ms : MechanicalSystem
        Supplies speeds, parameters, the initial state and the auxiliary
        speeds (zero) and prescribed functions (substituted).
    rows : list of expressions
        The rows in (t, q, u) (coordinate rates already replaced).
    labels : list of str
        A description of each row for the warning.

    Returns
    -------
    list of int
        The kept rows, in their declared order.  All rows when none is
        redundant.
    """
    if len(rows) <= len(ms.u_dep):
        return list(range(len(rows)))
    u = list(ms.speeds)
    q = list(ms.coordinates)
    M = sm.Matrix(rows)
    A = M.jacobian(u)
    b = M.xreplace({x: 0 for x in u})
    Ab = ms.substitute_specified(A.row_join(b))
    rep = {qi: sm.Dummy() for qi in q}
    Ab = Ab.xreplace({qi.diff(t): 0 for qi in q}).xreplace(rep)
    fn = sm.lambdify(
        [t] + [rep[qi] for qi in q] + list(ms.parameters), Ab, modules="numpy"
    )
    rng = np.random.default_rng(seed)
    p = [ms.parameters[k] for k in ms.parameters]
    q0 = np.array([ms.initial_state.get(qi, 0.1) for qi in q], float)
    on_manifold = len(ms.holonomic_constraints) > len(ms.q_dep)
    samples = []
    for _ in range(n_samples):
        t0 = float(rng.uniform(0, 1))
        if on_manifold:
            qs = _consistent_configuration(ms, t0, q0, rng)
        else:
            qs = q0 + rng.uniform(-0.5, 0.5, size=len(q))
        samples.append(np.asarray(fn(t0, *qs, *p), dtype=float))
    aux = set(ms.u_aux)
    priority = sorted(
        range(len(rows)),
        key=lambda i: (
            0
            if sm.sympify(rows[i]).has(*aux)
            else 2
            if labels[i].startswith("derivative")
            else 1,
            i,
        ),
    )
    kept = []
    for i in priority:
        trial = kept + [i]
        if all(_rank(S[trial, :]) == len(trial) for S in samples):
            kept.append(i)
    kept.sort()
    # Rows that vanish once the kinematic equations give the coordinate
    # rates are implied by them (a quaternion's unit norm differentiated,
    # listed among the kinematic equations as sympy's users do): dropped
    # without a warning, there is nothing redundant to report.
    dropped = [
        i
        for i in range(len(rows))
        if i not in kept
        and any(np.abs(S[i]).max() > 1e-12 * (1 + np.abs(S).max()) for S in samples)
    ]
    if dropped:
        warnings.warn(
            f"system {ms.name!r}: velocity constraints "
            + "; ".join(f"{i} ({labels[i]})" for i in dropped)
            + f" depend on the others at random configurations and were "
            f"dropped ({len(kept)} independent rows kept for "
            f"{len(ms.u_dep)} dependent speeds)",
            RedundantConstraintWarning,
            stacklevel=4,
        )
    return kept


def _consistent_configuration(ms, t0, q0, rng, spread=0.3, maxiter=50):
    """A configuration near ``q0`` satisfying the holonomic constraints:
    the independent coordinates perturbed (half-width ``spread``, halved
    until Gauss-Newton converges), the dependent ones solved by least
    squares (the constraints may outnumber them)."""
    q = list(ms.coordinates)
    nind = len(ms.q_ind)
    rep = {qi: sm.Dummy() for qi in q}
    hol = ms.substitute_specified(sm.Matrix(list(ms.holonomic_constraints)))
    hol = hol.xreplace(rep)
    dep = [rep[qi] for qi in q[nind:]]
    args = [t] + [rep[qi] for qi in q] + list(ms.parameters)
    f = sm.lambdify(args, hol, modules="numpy")
    jac = sm.lambdify(args, hol.jacobian(dep), modules="numpy")
    p = [ms.parameters[k] for k in ms.parameters]
    draw = rng.uniform(-1, 1, size=nind)
    for shrink in (1.0, 0.5, 0.25, 0.1):
        x = np.array(q0, dtype=float)
        x[:nind] += shrink * spread * draw
        for _ in range(maxiter):
            r = np.asarray(f(t0, *x, *p), dtype=float).ravel()
            if np.max(np.abs(r)) < 1e-13:
                return x
            J = np.asarray(jac(t0, *x, *p), dtype=float).reshape(len(r), -1)
            x[nind:] -= np.linalg.lstsq(J, r, rcond=None)[0]
        if np.max(np.abs(np.asarray(f(t0, *x, *p), dtype=float))) < 1e-10:
            return x
    n_dep, nh = len(q) - nind, len(ms.holonomic_constraints)
    if nh > n_dep:
        # Redundant constraints are satisfied wherever the dependent
        # coordinates solve the rest; these are not: together they fix an
        # independent coordinate too.
        raise DeclarationError(
            f"system {ms.name!r}: {nh} holonomic constraints for {n_dep} "
            f"dependent coordinates, and no configuration near the initial "
            f"state with the independent coordinates moved satisfies them: "
            f"they fix independent coordinates too (declare as many "
            f"dependent coordinates as independent constraints)"
        )
    raise ValueError(
        f"system {ms.name!r}: no configuration satisfying the holonomic "
        f"constraints found near the initial state"
    )


def independent_speed_rows(
    ms: MechanicalSystem,
    rows: Sequence[Expr],
    speeds: Sequence[Symbol],
    n_samples: int = 3,
    seed: int = 54321,
) -> list[int]:
    """Indices of rows whose coefficients of ``speeds`` are independent,
    taken in the given order, at random configurations.

    Used to express the speeds in coordinate rates when there are more
    speeds than kinematic differential equations (velocity components as
    speeds, tied to the others by velocity constraints): the kinematic
    equations come first, then as many velocity constraints as needed.
    """
    q = list(ms.coordinates)
    K = ms.substitute_specified(sm.Matrix(rows).jacobian(list(speeds)))
    rep = {qi.diff(t): sm.Dummy() for qi in q} | {qi: sm.Dummy() for qi in q}
    K = K.xreplace(rep)
    args = [t] + list(rep.values()) + list(ms.parameters)
    fn = sm.lambdify(args, K, modules="numpy")
    rng = np.random.default_rng(seed)
    p = [ms.parameters[k] for k in ms.parameters]
    q0 = np.array([ms.initial_state.get(qi, 0.1) for qi in q], float)
    samples = []
    for _ in range(n_samples):
        vals = np.concatenate(
            [rng.uniform(-1, 1, size=len(q)), q0 + rng.uniform(-0.5, 0.5, size=len(q))]
        )
        samples.append(
            np.asarray(fn(float(rng.uniform(0, 1)), *vals, *p), dtype=float).reshape(
                len(rows), -1
            )
        )
    kept = []
    for i in range(len(rows)):
        trial = kept + [i]
        if all(_rank(S[trial, :]) == len(trial) for S in samples):
            kept.append(i)
        if len(kept) == len(speeds):
            break
    return kept
