"""Quaternion coordinates in the formulations that differentiate a kinetic
energy in the coordinate rates (``lagrange``, ``modified_lagrange``,
``sympy_lagrange``).

A unit quaternion q = (q0, q1, q2, q3) orients a frame with three rates
(body or space angular velocity w) and kinematic equations
``q' = F(q) w`` that keep its norm (``q . F(q) = 0``).  Four coordinates
and three speeds: the kinetic energy in the coordinate rates is not given
by the declaration, because w is not a function of q' alone off the
sphere.  The treatment here, exact on the motion:

* **The speeds in the coordinate rates.**  For the quaternion kinematics
  ``F^T F = |q|^2 / 4 * I``, so on the unit sphere ``w = 4 F^T q'``
  (``w = 2 G(q) q'`` in the usual notation): this left inverse of F is the
  chosen extension of w to every (q, q').  The other speeds are solved from
  the kinematic equations of the other coordinates
  (:mod:`eomcompare.systems.quaternions`, the declaration's ``kinematics.u_of_qdot``).
  Then
  ``T(q, q') = T(q, u(q, q'))`` and the generalized forces are formed in
  the rates as for any system.  ``T`` is degenerate along ``q' ~ q``
  (``F^T q = 0``): its Hessian in q' has rank 3 per quaternion.
* **lagrange, sympy_lagrange: the unit-norm constraint with a
  multiplier.**  ``q . q - 1 = 0`` is added as a holonomic constraint per
  quaternion, after the declared ones, and the augmented system
  ``[[M, -C^T], [C, 0]]`` is regular (the constraint's gradient 2 q is
  exactly the direction M misses).  The motion does not depend on how w
  was extended off the sphere; the multiplier does (a different extension
  changes it by a multiple of the constraint's gradient): with the
  extension above it is reported as ``model.multipliers`` like any other.
* **modified_lagrange: the equations projected on the kinematic
  directions** (Kolev's construction with quasi-velocities, Maggi's form of
  a holonomic constraint).  Kolev eliminates the constraint by writing the
  virtual displacements through independent ones, ``dq = G dq_ind``, and
  projects Lagrange's operator ``E = d/dt(dT/dq') - dT/dq - Q`` in ALL
  coordinates on them: ``G^T E = 0``.  For a quaternion every choice of an
  independent component is singular somewhere (where the dependent
  component vanishes), so the displacements are written through the speeds
  instead, ``dq = F(q) dpi``, whose columns span the sphere's tangent
  space everywhere: ``F^T E = 0`` with ``q'' = F u' + F' u``, i.e.
  ``(F^T M F) u' = F^T (f - M (F' u))``, unknowns u', states (q, u).
  ``F^T E`` does not depend on the extension of T off the sphere, since
  the extension changes E by multiples of q, and ``F^T q = 0``.

The quaternion's norm then drifts only as the integrator lets it; states
are drawn on the sphere (``SystemStates.norm_invariants``), ``lagrange``'s
Baumgarte option acts on the norm row too, and the integration's
projection step puts the norm back.
"""

from __future__ import annotations

import contextlib

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.calculus import (
    jacobian,
    lagrange_terms,
    substitute,
)
from eomcompare.symbolic.dense import matrix

from .errors import UnsupportedSystemError

__all__ = [
    "QuaternionTreatment",
    "quaternion_treatment",
    "speeds_in_rates",
    "norm_constraints",
]

t = me.dynamicsymbols._t


class QuaternionTreatment:
    """The quaternion blocks of a declaration (:mod:`eomcompare.systems.quaternions`)
    and the unit-norm constraints this treatment adds.

    Attributes
    ----------
    groups : tuple of (coordinates, speeds)
        Each quaternion's four coordinates and its three speeds.
    norm_constraints : tuple
        ``q . q - 1`` per quaternion.
    """

    def __init__(self, blocks) -> None:
        self.groups = tuple((b.coordinates, b.speeds) for b in blocks)
        self.norm_constraints = tuple(b.norm_constraint for b in blocks)


def quaternion_treatment(ms) -> QuaternionTreatment:
    """The quaternion treatment of ``ms``, or ``UnsupportedSystemError``
    saying why it does not apply.  A system with one speed per coordinate
    gets an empty treatment."""
    from eomcompare.systems.quaternions import quaternion_blocks

    q, u = ms.coordinates, ms.speeds
    if len(q) == len(u):
        return QuaternionTreatment(())
    blocks = quaternion_blocks(ms.frame, ms.q_ind, u, ms.kinematics.qdot)
    if len(q) - len(u) != len(blocks):
        raise UnsupportedSystemError(
            f"system {ms.name!r} has {len(u)} speeds for {len(q)} "
            f"coordinates and {len(blocks)} unit quaternion(s) of four "
            f"independent coordinates with kinematic equations q' = F(q) w, "
            f"F^T F = |q|^2/4 (systems.quaternions): the excess of "
            f"coordinates is not that of such quaternions"
        )
    return QuaternionTreatment(blocks)


def speeds_in_rates(ms) -> dict:
    """``{u: expression in (t, q, q')}``: ``ms.kinematics.u_of_qdot``, which
    writes a quaternion's speeds as ``4 F^T q'``."""
    return dict(ms.kinematics.u_of_qdot)


def norm_constraints(ms) -> tuple:
    """The unit-norm constraints the treatment adds (empty with one speed
    per coordinate)."""
    return quaternion_treatment(ms).norm_constraints


def projected_equations(ms, T, Q, stage=None):
    """``(F^T M F, F^T (f - M F' u))`` in (t, q, u): Lagrange's operator of
    ``T`` (in t, q, q') with generalized forces ``Q`` projected on the
    kinematic directions ``q' = F u + b`` (the module's docstring).

    The products are taken on the nonzero entries of F only: a
    coordinate whose rate is one speed has a row of F with a single 1, so
    that speed's rows and columns of ``F^T M F`` are entries of M as they
    stand, and only a quaternion's four rows combine entries (``q_k / 2``
    coefficients).  M is read from its lower triangle (symmetric in value),
    and q' is replaced by ``F u + b`` in M and f with each shared subtree
    rebuilt once.  ``stage``, a derivation's stage timer, records the
    stages ``lagrange_operator``, ``rates_in_speeds`` and ``projection``."""

    def timed(name):
        return stage(name) if stage is not None else contextlib.nullcontext()

    kin = ms.kinematics
    q, u = list(ms.coordinates), list(ms.speeds)
    n, k = len(q), len(u)
    qd = [qi.diff(t) for qi in q]
    with timed("lagrange_operator"):
        p, M, dTdq, dp = lagrange_terms(T, q, qd)
        p, dTdq, dp = (sm.Matrix(x) for x in (p, dTdq, dp))
        if ms.is_rheonomic:
            Qp = [sm.Dummy(f"q{i}") for i in range(n)]
            QD = [sm.Dummy(f"qd{i}") for i in range(n)]
            to_plain = dict(zip(qd, QD)) | dict(zip(q, Qp))
            back = dict(zip(Qp, q)) | dict(zip(QD, qd))
            dp += p.xreplace(to_plain).diff(t).xreplace(back)
        f = sm.Matrix(Q) + dTdq - dp
    with timed("rates_in_speeds"):
        qdot = dict(kin.qdot)
        qdot_vec = sm.Matrix([qdot[x] for x in qd])
        F = jacobian(qdot_vec, u)
        ud = [ui.diff(t) for ui in u]
        h = qdot_vec.diff(t).xreplace(qdot).xreplace({x: 0 for x in ud})
        # q' -> F u + b in the lower triangle of M and in f, one walk.
        lower = [(i, j) for i in range(n) for j in range(i + 1)]
        got = substitute([M[i, j] for i, j in lower] + list(f), qdot)
        Ml = dict(zip(lower, got[: len(lower)]))
        f_q = got[len(lower) :]

    def m(i, j):
        return Ml[(i, j) if i >= j else (j, i)]

    with timed("projection"):
        cols = [[(i, F[i, a]) for i in range(n) if F[i, a] != 0] for a in range(k)]
        # M F, column by column, and M h (h is zero where F is constant).
        MF = [
            [_combination((c, m(i, j)) for j, c in cols[b]) for b in range(k)]
            for i in range(n)
        ]
        nz_h = [(j, h[j]) for j in range(n) if h[j] != 0]
        Mh = [_combination((c, m(i, j)) for j, c in nz_h) for i in range(n)]
        lower_u = {
            (a, b): _combination((c, MF[i][b]) for i, c in cols[a])
            for a in range(k)
            for b in range(a + 1)
        }
        Mu = matrix(
            k, k, [lower_u[max(a, b), min(a, b)] for a in range(k) for b in range(k)]
        )
        fu = matrix(
            k,
            1,
            [
                _combination(
                    (c, f_q[i] - Mh[i] if Mh[i] != 0 else f_q[i]) for i, c in cols[a]
                )
                for a in range(k)
            ],
        )
    return Mu, fu


def _combination(terms):
    """``sum c * x`` over ``(c, x)`` pairs, a coefficient of one leaving x
    as it stands and zero terms left out.

    A negative coefficient of a sum x is written as the positive one times
    ``-x`` (x's terms negated, the subtrees below them shared): a
    quaternion's columns of F have two negative entries of four, and a sum
    with as many terms that extract a minus sign as not makes sympy's
    ``cse`` (``could_extract_minus_sign``) compare the sort keys of the
    whole sum and its negation, which walks every occurrence of every
    shared subtree (on solo12 minutes of the numeric model's generation)."""
    out = []
    for c, x in terms:
        if c == 0 or x == 0:
            continue
        if c == 1:
            out.append(x)
        elif x.is_Add and c.could_extract_minus_sign():
            out.append(-c * sm.Add(*[-a for a in x.args]))
        else:
            out.append(c * x)
    return sm.Add(*out) if len(out) != 1 else out[0]


def check_unit_norm(ms, q: np.ndarray, tol: float = 1e-9) -> None:
    """Raise ``ValueError`` when a quaternion of ``q`` is off the unit
    sphere by more than ``tol``."""
    idx = {qi: i for i, qi in enumerate(ms.coordinates)}
    for coords, _ in quaternion_treatment(ms).groups:
        n = float(np.linalg.norm([q[idx[c]] for c in coords]))
        if abs(n - 1.0) > tol:
            raise ValueError(
                f"the quaternion {[str(c).replace('(t)', '') for c in coords]} "
                f"has norm {n:.17g}, not 1"
            )
