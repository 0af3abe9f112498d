"""Lagrange's equations of the second kind with multipliers, in ALL
declared coordinates.

For coordinates q (independent and dependent alike), the kinetic energy
T(t, q, q') of the declared bodies and the generalized forces Q of the
declared loads,

    d/dt(dT/dq') - dT/dq = Q + C^T lambda,
    C(t, q) q'' = gamma(t, q, q'),

where the rows of ``C q' + c = 0`` are every velocity constraint written in
coordinate rates: the time derivatives of the holonomic constraints
``Phi(t, q) = 0`` (so ``C = Phi_q`` there) followed by the nonholonomic
constraints, and ``gamma`` comes from differentiating those rows once more.
There is one multiplier per holonomic and per nonholonomic constraint, and
``C^T lambda`` is the generalized constraint force.  The unknowns are
``(q'', lambda)`` and the augmented system is

    [[M, -C^T], [C, 0]] [q''; lambda] = [f; gamma],

with ``M = d^2 T / dq'^2`` and ``f = Q + dT/dq - (d/dt dT/dq')|_{q''=0}``.

Choices
-------
* Kinetic energy only, every load as a generalized force.  The declaration's
  loads already hold every force (gravity and springs included) and its
  ``potential_energy`` is informational; writing ``L = T - V`` would count
  the conservative forces twice unless their loads were dropped, and which
  loads those are cannot be told reliably from a declaration.  So
  ``Q_j = sum_P F_P . dv_P/dq'_j + sum_B T_B . dw_B/dq'_j``.
* Declarations are written in generalized speeds u; velocities, angular
  velocities and loads are converted to (t, q, q') through the kinematic
  differential equations (``ms.kinematics.u_of_qdot``), so systems whose
  speeds are not coordinate rates (body angular rates of a rolling disc)
  are handled in coordinate rates.
* Explicit time and prescribed functions of time stay in the equations
  (rheonomic systems); the numeric layer substitutes ``specified``.
* Optional Baumgarte stabilization, ``baumgarte=(alpha, beta)``: the
  acceleration-level constraint rows become
  ``C q'' = gamma - 2 alpha g - beta^2 Phi`` with ``g = C q' + c`` the
  velocity-level residual (the ``beta^2 Phi`` term on holonomic rows only).
  On states that satisfy the constraints the added terms vanish, so the
  accelerations are unchanged there; off the constraint manifold they pull
  the residuals back with the stated gains.

Constraint forces
-----------------
A declared :class:`eomcompare.systems.ConstraintForce` is recovered from the
multipliers when some coordinate q_k moves exactly the force's auxiliary
motion: the partial velocity of every body in ``cf.bodies`` (and of
``cf.points``) with respect to q_k' equals the auxiliary velocity
(``direction``, or ``direction x r`` for a torque; angular partial velocity
zero or ``direction``), and every other body has zero partial velocities.
The force is then the generalized constraint force of that coordinate,
``(C^T lambda)_k``.  Declarations that model a joint's reaction with an
extra coordinate held by a holonomic constraint get their reactions this
way; others are listed in ``extras["unrecovered_constraint_forces"]``.

Extras published: ``kinetic_energy`` (in t, q, q'), ``generalized_forces``
(Q), ``constraint_jacobian`` (C), ``constraint_bias`` (gamma without
stabilization), ``n_dynamic_equations``, ``baumgarte`` and, where any is
recovered, ``constraint_forces`` (name -> expression in t, q, q', q'',
lambda).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.calculus import (
    jacobian,
    lagrange_terms,
    symmetric_from_lower,
)
from eomcompare.symbolic.frames import FrameAlgebra, generalized_forces, kinetic_energy
from eomcompare.symbolic.identities import RandomPoints

from .auxiliary import constraint_rows, multiplier_forces
from .base import Derivation, Formulation, rate_form, register
from .redundant_coordinates import norm_constraints, speeds_in_rates

__all__ = ["Lagrange"]

t = me.dynamicsymbols._t


def _sub_vec(vec, rep):
    return vec.applyfunc(lambda e: e.xreplace(rep)) if vec != 0 else vec


def _check_gains(baumgarte):
    if baumgarte is None:
        return None
    if (
        not isinstance(baumgarte, (tuple, list))
        or len(baumgarte) != 2
        or not all(
            isinstance(g, numbers.Real) and not isinstance(g, bool) for g in baumgarte
        )
    ):
        raise TypeError(
            f"lagrange: `baumgarte` must be None or a pair of real gains "
            f"(alpha, beta), not {baumgarte!r}"
        )
    alpha, beta = (float(g) for g in baumgarte)
    # An infinite or undefined gain makes every constraint row non-finite.
    if not all(math.isfinite(g) and g >= 0 for g in (alpha, beta)):
        raise ValueError(
            f"lagrange: `baumgarte` gains must be finite and non-negative "
            f"(alpha >= 0, beta >= 0), not {baumgarte!r}"
        )
    return alpha, beta


@register
class Lagrange(Formulation):
    """Lagrange's equations with one multiplier per constraint.

    Parameters
    ----------
    baumgarte : (float, float), optional
        Gains ``(alpha, beta)`` of Baumgarte's stabilization added to the
        acceleration-level constraint rows; ``None`` (default) for none.
    count_ops : bool
        See :class:`~eomcompare.formulations.base.Formulation`.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> eom = get_formulation("lagrange").derive("double_pendulum")
    >>> eom.n_equations, eom.n_multipliers
    (2, 0)
    >>> stab = get_formulation("lagrange", baumgarte=(5.0, 5.0))
    >>> stab.options["baumgarte"]
    (5.0, 5.0)
    """

    name = "lagrange"
    peer = "sympy_lagrange"
    version = "1"
    summary = (
        "Lagrange's equations in all coordinates, one multiplier per "
        "constraint: [[M, -C^T], [C, 0]] [q''; lambda] = [f; gamma]"
    )
    handles_holonomic = True
    handles_nonholonomic = True
    handles_rheonomic = True
    uses_multipliers = True
    needs_velocities_from_positions = True
    accepts_velocity_constraint_rows = True
    handles_quaternions = True
    redundant_constraints = (
        "keeps every declared constraint row and solves the singular "
        "augmented system in the least-squares sense: unique accelerations, "
        "minimum-norm multipliers"
    )

    def __init__(self, *, baumgarte=None, count_ops: bool = True):
        super().__init__(count_ops=count_ops)
        self.baumgarte = _check_gains(baumgarte)

    @property
    def options(self) -> dict:
        return super().options | {"baumgarte": self.baumgarte}

    def _derive(self, ms, stage) -> Derivation:
        N = ms.frame
        # The speeds in (t, q, q'): the kinematic equations solved for them,
        # or, for a unit quaternion's four coordinates with three speeds,
        # w = 4 F^T q' and the unit-norm constraint added below
        # (formulations.redundant_coordinates).
        u_map = speeds_in_rates(ms)
        norms = norm_constraints(ms)
        q = list(ms.coordinates)
        qd = [qi.diff(t) for qi in q]
        n = len(q)
        # Plain symbols for q and q' leave time only where it is explicit
        # (or in prescribed functions): used for the explicit time
        # derivatives.
        Q = [sm.Dummy(f"q{i}") for i in range(n)]
        QD = [sm.Dummy(f"qd{i}") for i in range(n)]
        to_plain = dict(zip(qd, QD)) | dict(zip(q, Q))
        back = dict(zip(Q, q)) | dict(zip(QD, qd))

        def plain(expr):
            # Derivatives before their arguments: xreplace is top-down and
            # q'(t) contains q(t).
            return sm.sympify(expr).xreplace(u_map).xreplace(to_plain)

        fa = FrameAlgebra()
        with stage("kinetic_energy"):
            T = sm.sympify(kinetic_energy(ms.bodies, N, fa, u_map))

        with stage("generalized_forces"):
            Qgen = generalized_forces(ms.loads, N, fa, qd, u_map)

        with stage("lagrange_operator"):
            # q and q' are independent variables of T here (the large
            # expressions stay in q(t), q'(t): no round trip through plain
            # symbols).  dT/dq' and dT/dq in one backward pass over T
            # (from two coordinates on): each shared subtree's derivative
            # dT/d node is formed once for all 2n partial derivatives (on a
            # 7-joint arm 14% fewer multiplications in the equations than
            # one forward pass per variable); d/dt(dT/dq') at q'' = 0
            # through q by one directional derivative along q'.
            p_list, M, dTdq_list, dp_list = lagrange_terms(T, q, qd)
            p, dTdq, dp = (sm.Matrix(x) for x in (p_list, dTdq_list, dp_list))
            # The Hessian of T in q': symmetric, though d/dq'_j of dT/dq'_i
            # and d/dq'_i of dT/dq'_j come out as different expressions;
            # written by its lower triangle, the symmetry is visible to the
            # code generators (one triangle evaluated, an LDL^T solve).
            M = symmetric_from_lower(M)
            # d/dt(dT/dq') through explicit time too (t itself and
            # prescribed functions of t).
            if ms.is_rheonomic:
                dp += p.xreplace(to_plain).diff(t).xreplace(back)
            f_dyn = Qgen + dTdq - dp

        with stage("constraints"):
            redundant = len(ms.redundant_holonomic_constraints)
            if redundant:
                # Redundant holonomic constraints (Bricard's mechanism):
                # every declared row, so the multipliers belong to the
                # declared constraints; C has rank m - redundant and the
                # numeric solve is least squares (numeric.model).
                hol_rows = ms.holonomic_constraints
                vel_rows = ms.nonholonomic_constraints
            else:
                hol_rows, vel_rows = constraint_rows(ms)
            hol_rows = tuple(hol_rows) + tuple(norms)
            hol = sm.Matrix([plain(c) for c in hol_rows])
            nonhol = sm.Matrix([plain(c) for c in vel_rows])
            nh, nn = len(hol), len(nonhol)
            if nh:
                C_h = jacobian(hol, Q)
                g_h = C_h * sm.Matrix(QD) + hol.diff(t)
            else:
                C_h, g_h = sm.zeros(0, n), sm.zeros(0, 1)
            if nn:
                C_n = jacobian(nonhol, QD)
                g_n = nonhol
            else:
                C_n, g_n = sm.zeros(0, n), sm.zeros(0, 1)
            C = C_h.col_join(C_n)
            g = g_h.col_join(g_n)
            m = nh + nn
            if m:
                # g is linear in q', so its total derivative is
                # C q'' + g_q q' + g_t.
                gamma = -(jacobian(g, Q) * sm.Matrix(QD) + g.diff(t))
            else:
                gamma = sm.zeros(0, 1)
            gamma_stab = gamma
            if m and self.baumgarte is not None:
                alpha, beta = (sm.Float(x) for x in self.baumgarte)
                phi = hol.col_join(sm.zeros(nn, 1))
                gamma_stab = gamma - 2 * alpha * g - beta**2 * phi

        with stage("assembly"):
            lam = list(me.dynamicsymbols(f"lambda1:{m + 1}")) if m else []
            # Only the (small) constraint rows were formed in plain symbols.
            C, gamma, gamma_stab = (x.xreplace(back) for x in (C, gamma, gamma_stab))
            mass = M.row_join(-C.T).col_join(C.row_join(sm.zeros(m, m))) if m else M
            forcing = f_dyn.col_join(gamma_stab) if m else f_dyn

        with stage("constraint_forces"):
            generalized_reaction = C.T * sm.Matrix(lam) if m else sm.zeros(n, 1)
            forces, missing = _recover_constraint_forces(
                ms, u_map, qd, generalized_reaction
            )
            if ms.u_aux:
                forces |= multiplier_forces(ms, lam)

        extras = {
            "kinetic_energy": T,
            "generalized_forces": sm.ImmutableMatrix(Qgen),
            "constraint_jacobian": sm.ImmutableMatrix(C),
            "constraint_bias": sm.ImmutableMatrix(gamma),
            "n_dynamic_equations": n,
            "baumgarte": self.baumgarte,
        }
        if norms:
            # The multipliers of the unit-norm rows: the last holonomic rows.
            first = len(hol_rows) - len(norms)
            extras["norm_constraints"] = tuple(norms)
            extras["norm_multipliers"] = tuple(lam[first : first + len(norms)])
        if redundant:
            extras["redundant_constraint_rows"] = redundant
        if forces:
            extras["constraint_forces"] = forces
        if missing:
            extras["unrecovered_constraint_forces"] = tuple(missing)
        return rate_form(ms, mass, forcing, multipliers=lam, extras=extras)


def _is_zero_vector(vec, frame, sample) -> bool:
    if vec == 0:
        return True
    entries = [sm.sympify(e) for e in vec.to_matrix(frame)]
    # A nonzero value at a random point settles it; only candidates that
    # pass are simplified.
    # Entries without a value at the points are left to simplify.
    if not sample.vanishes(entries, unknown=True):
        return False
    return all(sm.simplify(e) == 0 for e in entries)


def _recover_constraint_forces(ms, u_map, qd, reaction):
    """Declared constraint forces whose auxiliary motion is a coordinate's."""
    N = ms.frame
    found, missing = {}, []
    # One set of random points for every check: values are cached.
    sample = RandomPoints(np.random.default_rng(0))
    for cf in ms.constraint_forces:
        moving = set(cf.bodies)
        points = [b.masscenter for b in cf.bodies] + list(cf.points)

        def v_aux(X):
            if cf.kind == "force":
                return cf.direction
            return cf.direction.cross(X.pos_from(cf.point))

        w_aux = 0 if cf.kind == "force" else cf.direction
        match = None
        for k, qdk in enumerate(qd):
            ok = True
            for X in points:
                pv = _sub_vec(X.vel(N), u_map).diff(qdk, N, var_in_dcm=False)
                if not _is_zero_vector(pv - v_aux(X), N, sample):
                    ok = False
                    break
            for body in ms.bodies if ok else ():
                if isinstance(body, me.RigidBody):
                    pw = _sub_vec(body.frame.ang_vel_in(N), u_map).diff(
                        qdk, N, var_in_dcm=False
                    )
                    if not _is_zero_vector(
                        pw - (w_aux if body in moving else 0), N, sample
                    ):
                        ok = False
                        break
                if body not in moving:
                    pv = _sub_vec(body.masscenter.vel(N), u_map).diff(
                        qdk, N, var_in_dcm=False
                    )
                    if not _is_zero_vector(pv, N, sample):
                        ok = False
                        break
            if ok:
                match = k
                break
        if match is None:
            missing.append(cf.name)
        else:
            found[cf.name] = reaction[match]
    return found, missing
