"""Constraint forces asked for by auxiliary speeds (``System.u_aux``).

An auxiliary speed ``ua`` is zero in every motion (:mod:`eomcompare.systems.auxiliary`).
It may move points and bodies (``P.set_vel(N, ua*A.x)``) and relax velocity
constraints, through which the dependent speeds depend on it:
``u_dep = C u_ind + C_aux ua + c``.  The constraint force that keeps it zero
follows from the auxiliary speed's own equation of motion, at ``ua = 0``:

    E_a = G_a + sum_d C_aux[d, a] G_d = 0,

with ``G_r`` the generalized active plus inertia force of speed r (partial
velocities with respect to r dotted with the loads and the inertia forces).
When the declaration writes the reactions as loads with unknown constants
(sympy's test suite: ``Force(P, Fx*A.x + ...)``), ``E`` is solved for them;
otherwise each result is ``-E_a``, the generalized force the constraint
contributes to the auxiliary speed's equation.

Three routes, one per kind of formulation:

* ``kane_forces``: Kane's equations of the auxiliary speeds, from partial
  velocities and inertia forces (``kane`` uses it).
* ``gibbs_appell_forces``: the same equations from the acceleration energy
  ``S``, differentiated with respect to the auxiliary speed rates
  (``dS/dua' + C_aux^T dS/du_dep'``), as the Gibbs–Appell equations read.
  A :class:`~eomcompare.systems.ConstraintForce` request is made an auxiliary speed
  there (its virtual motion added to the velocities it moves), so both
  kinds of request take this one route.
* ``multiplier_forces``: with Lagrange multipliers ``lambda`` in the
  convention ``M q'' = f + C^T lambda``, the dependent speeds' part
  ``C_aux^T G_dep`` equals ``A_aux^T lambda`` (``A_aux`` the coefficients of
  the auxiliary speeds in the velocity constraint rows), so
  ``E_a = G_a + (A_aux^T lambda)_a``; ``G_a`` is nonzero only for bodies the
  auxiliary speed moves directly.

Reactions that also act where a generalized speed moves (sympy's
``test_box_on_ground``: the friction ``-mu*N`` along the motion) enter the
equations of motion ``M z = f(R)`` themselves; every route gives them as
``R = R(z)``, linear in the unknowns z, and :func:`eliminate_reactions`
replaces them, leaving ``(M - df/dz) z = f|z=0`` without them.

Every route returns ``{name: expression}``: in (t, q, u, u') for the first
two, in (t, q, q', q'', lambda) for the third.  Names are the reaction
unknowns' (``"Fx"``) or the auxiliary speeds' (``"ua0"``).
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.text import display_name
from eomcompare.systems.base import solve_linear

from .errors import UnsupportedSystemError

__all__ = [
    "kane_forces",
    "gibbs_appell_forces",
    "multiplier_forces",
    "eliminate_reactions",
]

t = me.dynamicsymbols._t


def constraint_rows(ms):
    """(holonomic constraints, velocity-level rows) that the multipliers
    belong to: the declared holonomic and nonholonomic constraints; or,
    when the velocity constraints were reduced by rank (or set by the user),
    the independent velocity constraint rows, all at velocity level (a
    dropped derivative of a holonomic constraint is implied by the rows
    kept, and the coordinates still satisfy the constraint itself)."""
    if ms.velocity_constraints_as_declared:
        return ms.holonomic_constraints, ms.nonholonomic_constraints
    return (), ms.velocity_constraints


def _sub(vec, rep):
    return vec.applyfunc(lambda e: sm.sympify(e).xreplace(rep)) if vec != 0 else vec


def _dependence(ms, qdot):
    """C_aux (dependent speeds on auxiliary speeds) and A_aux (coefficients
    of the auxiliary speeds in the declared velocity constraint rows)."""
    ua = list(ms.u_aux)
    vc = sm.Matrix(list(ms.velocity_constraints)).xreplace(qdot)
    zero = ms._aux_zero
    if not len(vc):
        return sm.zeros(0, len(ua)), sm.zeros(0, len(ua))
    A_aux = vc.jacobian(ua).xreplace(zero)
    if not ms.u_dep:
        return sm.zeros(0, len(ua)), A_aux
    A_dep = vc.jacobian(list(ms.u_dep)).xreplace(zero)
    return solve_linear(A_dep, -A_aux), A_aux


def _generalized_forces(ms, speeds, qdot):
    """G_r = F_r + F*_r (Kane) for each of ``speeds``, at zero auxiliary
    speeds, in (t, q, u, u')."""
    N = ms.frame
    rep = dict(qdot) | ms._aux_zero
    G = [sm.S.Zero] * len(speeds)

    def partials(vec):
        # Rates replaced first: the kinematic equations may hold auxiliary
        # speeds (sympy's test_kane2 vehicle), which then move the points.
        vec = _sub(vec, qdot)
        return [
            _sub(vec.diff(r, N, var_in_dcm=False), ms._aux_zero) if vec != 0 else vec
            for r in speeds
        ]

    for body in ms.bodies:
        v = body.masscenter.vel(N)
        pv = partials(v)
        a = _sub(_sub(v, rep).dt(N), rep)
        R = -body.mass * a
        for k, p in enumerate(pv):
            G[k] += R.dot(p) if p != 0 else 0
        if isinstance(body, me.RigidBody):
            w = body.frame.ang_vel_in(N)
            pw = partials(w)
            w0 = _sub(w, rep)
            alpha = _sub(w0.dt(N), rep)
            I = body.central_inertia
            Tq = -(I.dot(alpha) + w0.cross(I.dot(w0)))
            for k, p in enumerate(pw):
                G[k] += Tq.dot(p) if p != 0 else 0
    for k, F in enumerate(_active_forces(ms, speeds, rep)):
        G[k] += F
    return sm.Matrix(G)


def _active_forces(ms, speeds, rep, motions=None):
    N = ms.frame
    F = [sm.S.Zero] * len(speeds)
    motions = motions or _Motions()
    for load in ms.loads:
        vel = (
            motions.vel(load.point, N)
            if isinstance(load, me.Force)
            else motions.ang_vel(load.frame, N)
        )
        if vel == 0:
            continue
        zero = ms._aux_zero | motions.zero
        vel = _sub(vel, {k: v for k, v in rep.items() if k not in zero})
        for k, r in enumerate(speeds):
            p = _sub(vel.diff(r, N, var_in_dcm=False), zero)
            if p != 0:
                F[k] += load.vector.dot(p)
    return F


def _solve(ms, E):
    """Solve ``E = 0`` for the reaction unknowns, or return ``-E``."""
    E = sm.Matrix(E)
    R = list(ms.reaction_unknowns)
    if not R:
        return {display_name(ua): -E[i] for i, ua in enumerate(ms.u_aux)}
    J = E.jacobian(R)
    if any(sm.sympify(j).has(*R) for j in J):
        raise UnsupportedSystemError(
            f"{ms.name}: the reactions {R} do not enter the auxiliary "
            f"equations linearly"
        )
    E0 = E.xreplace({r: 0 for r in R})
    try:
        sol = solve_linear(J, -E0)
    except ValueError:
        raise UnsupportedSystemError(
            f"{ms.name}: the auxiliary equations cannot be solved for the "
            f"reactions {R} (they do not determine them)"
        ) from None
    return {display_name(r): sol[i] for i, r in enumerate(R)}


def kane_forces(ms) -> dict:
    """Constraint forces of the auxiliary speeds from Kane's equations,
    in (t, q, u, u')."""
    qdot = dict(ms.kinematics.qdot)
    ua, u_dep = list(ms.u_aux), list(ms.u_dep)
    C_aux, _ = _dependence(ms, qdot)
    G = _generalized_forces(ms, ua + u_dep, qdot)
    E = G[: len(ua), :]
    if u_dep:
        E += C_aux.T * G[len(ua) :, :]
    return _solve(ms, E)


class _Motions:
    """Auxiliary motions beside the declared velocities: each
    :class:`~eomcompare.systems.ConstraintForce` as an auxiliary speed of its own.

    A ``ConstraintForce`` names the virtual motion its auxiliary speed
    gives the bodies on one side of the joint (a translation along its
    direction, or a rotation about it through its point) instead of
    writing it into the velocities as ``System.add_auxiliary_speeds``
    declarations do.  Added here to the velocities of those bodies' mass
    centres and load points (and, for a torque, to their frames' angular
    velocities), with a speed ``w`` per force, it makes the request an
    auxiliary speed like any other, which the Gibbs-Appell route then
    treats as it treats the declared ones.  It relaxes no velocity
    constraint (the dependent speeds do not depend on it).
    """

    def __init__(self, forces=()):
        self.speeds = []
        self.names = []
        self._v: dict = {}
        self._w: dict = {}
        for k, cf in enumerate(forces):
            w = me.dynamicsymbols(f"_w_constraint_force_{k}")
            self.speeds.append(w)
            self.names.append(cf.name)
            d = cf.direction
            points = [b.masscenter for b in cf.bodies] + list(cf.points)
            for X in dict.fromkeys(points):
                v = d if cf.kind == "force" else d.cross(X.pos_from(cf.point))
                self._v[X] = self._v.get(X, 0) + w * v
            if cf.kind == "torque":
                frames = [b.frame for b in cf.bodies if isinstance(b, me.RigidBody)]
                for E in dict.fromkeys(frames + list(cf.frames)):
                    self._w[E] = self._w.get(E, 0) + w * d
        self.zero = {x: 0 for w in self.speeds for x in (w.diff(t), w)}

    def vel(self, X, N):
        return X.vel(N) + self._v.get(X, 0)

    def ang_vel(self, E, N):
        return E.ang_vel_in(N) + self._w.get(E, 0)


def gibbs_appell_forces(ms) -> dict:
    """Constraint forces of the auxiliary speeds, and of the
    :class:`~eomcompare.systems.ConstraintForce` requests (each an auxiliary speed of
    its own, :class:`_Motions`), from the acceleration energy, in
    (t, q, u, u')."""
    N = ms.frame
    qdot = dict(ms.kinematics.qdot)
    motions = _Motions(ms.constraint_forces)
    ua, u_dep, uc = list(ms.u_aux), list(ms.u_dep), motions.speeds
    rates = [x.diff(t) for x in uc + ua + u_dep]
    C_aux, _ = _dependence(ms, qdot)
    zero = ms._aux_zero | motions.zero
    S = sm.S.Zero
    for body in ms.bodies:
        # Accelerations with the auxiliary speeds kept (zeroed only after
        # differentiating with respect to their rates).
        a = _sub(_sub(motions.vel(body.masscenter, N), qdot).dt(N), qdot)
        S += body.mass * a.dot(a) / 2
        if isinstance(body, me.RigidBody):
            w = _sub(motions.ang_vel(body.frame, N), qdot)
            alpha = _sub(w.dt(N), qdot)
            I = body.central_inertia
            S += alpha.dot(I.dot(alpha)) / 2 + alpha.dot(w.cross(I.dot(w)))
    dS = sm.Matrix([sm.diff(S, r) for r in rates]).xreplace(zero)
    Q = sm.Matrix(_active_forces(ms, uc + ua + u_dep, dict(qdot) | zero, motions))
    E = Q - dS
    nc, n = len(uc), len(uc) + len(ua)
    # A ConstraintForce's result is the generalized constraint force of its
    # speed, as for auxiliary speeds without reaction unknowns.
    forces = {name: -E[k] for k, name in enumerate(motions.names)}
    if ua:
        E_aux = E[nc:n, :]
        if u_dep:
            E_aux += C_aux.T * E[n:, :]
        forces |= _solve(ms, E_aux)
    return forces


def multiplier_forces(ms, multipliers) -> dict:
    """Constraint forces of the auxiliary speeds from Lagrange multipliers.

    Parameters
    ----------
    multipliers : sequence
        One per constraint row (holonomic, then nonholonomic), in the
        convention ``M q'' = f + C^T lambda``.

    Returns
    -------
    dict
        ``{name: expression in (t, q, q', q'', lambda)}``.
    """
    kin = ms.kinematics
    qdot = dict(kin.qdot)
    u_map = dict(kin.u_of_qdot)
    ua = list(ms.u_aux)
    hol_rows, vel_rows = constraint_rows(ms)
    nh = len(hol_rows)
    nonhol = sm.Matrix(list(vel_rows))
    # Holonomic constraints hold no speeds: only velocity rows relax.
    A_aux = (
        nonhol.xreplace(qdot).jacobian(ua).xreplace(ms._aux_zero)
        if len(nonhol)
        else sm.zeros(0, len(ua))
    )
    lam = sm.Matrix(list(multipliers)[nh:])
    # Bodies moved by the auxiliary speeds themselves (not through the
    # constraints): their generalized forces, in coordinate rates.
    G = _generalized_forces(ms, ua, qdot)
    ud = {x.diff(t): sm.sympify(e).diff(t) for x, e in u_map.items()}
    G = G.xreplace(ud).xreplace(u_map)
    E = G + (A_aux.T * lam if len(lam) else sm.zeros(len(ua), 1))
    return _solve(ms, E.xreplace(u_map))


def eliminate_reactions(ms, formulation: str, parts):
    """``parts`` (a :class:`~eomcompare.formulations.base.Derivation`) with the
    reactions that enter the equations of motion (``ms.reactions_in_motion``)
    replaced by the constraint forces the formulation recovered for them.

    Raises
    ------
    UnsupportedSystemError
        When the formulation recovers no constraint force for one of them, or
        returns its forcing as an evaluation order (``assignments``), which
        no substitution reaches.
    """
    import dataclasses

    R = list(ms.reactions_in_motion)
    if not R:
        return parts
    extras = parts.extras
    forces = extras.get("constraint_forces") or {}
    lacking = [display_name(r) for r in R if display_name(r) not in forces]
    why = None
    if lacking:
        why = extras.get("constraint_forces_unsupported") or (
            f"it recovers no constraint force for {lacking}"
        )
    elif "assignments" in extras:
        why = "its forcing is an evaluation order, not an expression"
    if why:
        raise UnsupportedSystemError(
            f"{formulation}: the reactions {[display_name(r) for r in R]} of system "
            f"{ms.name!r} act where the generalized speeds move, so they "
            f"enter the equations of motion and must be solved with them; "
            f"{why}"
        )
    sol = {r: sm.sympify(forces[display_name(r)]) for r in R}
    z = list(parts.unknowns)
    M = sm.Matrix(parts.mass_matrix)
    f = sm.Matrix(parts.forcing).xreplace(sol)
    return dataclasses.replace(
        parts,
        mass_matrix=M - f.jacobian(z),
        forcing=f.xreplace({zi: 0 for zi in z}),
    )
