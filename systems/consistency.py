"""Numeric analysis of a declaration: are its velocities what its positions say?

A :class:`sympy.physics.mechanics.System` lets a user declare velocities and
angular velocities independently of positions and orientations
(``Point.set_vel``, ``v2pt_theory`` from any point, ``set_ang_vel``).  Some
formulations (Kane's, Gibbs–Appell's) read only the declared velocities;
the Lagrange family differentiates the kinetic energy with respect to the
coordinate rates and so silently assumes that every velocity is the time
derivative of a position.  This module checks that assumption at random
states that satisfy every constraint:

* an angular velocity that differs from the rate of the frame's declared
  orientation (through the kinematic differential equations) is a
  contradiction between two declarations of the same motion:
  :class:`~eomcompare.systems.DeclarationError` naming the frame;
* a mass centre's velocity that is not the time derivative of its position
  from the system's fixed point -- it cannot be derived (no position chain
  to the fixed point, as for a disc declared from its contact point up with
  ``C.set_vel(N, 0)`` and ``D.v2pt_theory(C, N, R)``), or it differs from
  the derived one (a velocity that embeds a constraint) -- is recorded in
  :class:`DeclarationAnalysis`: the velocity-based formulations use it as
  sympy does, those that build a kinetic energy from positions refuse;
* the points where loads act need only a declared velocity: every
  formulation takes a load's partial velocities from it, so the point of a
  body that coincides with another body's point at this instant (Kane &
  Levinson's ``B^ = C*.locatenew('B^', 0); B^.v2pt_theory(P, E, B)``)
  needs no position of its own;
* every explicit solution of a dependent coordinate is checked against the
  holonomic constraints.

The states compared at satisfy every constraint and the invariants the
kinematic equations imply (a quaternion's unit norm, see
:meth:`eomcompare.numeric.states.SystemStates.random_state`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.numeric.model import _lambdify
from eomcompare.symbolic.calculus import subexpressions, substitute
from eomcompare.symbolic.frames import dyadic_matrix

__all__ = ["DeclarationAnalysis", "analyse_declaration"]

t = me.dynamicsymbols._t

#: Relative tolerance of a velocity residual (values of order one at the
#: random states; derivation round-off is many orders below).
_RTOL = 1e-7


@dataclass(frozen=True)
class DeclarationAnalysis:
    """What the numeric analysis of a declaration found.

    Attributes
    ----------
    underived_velocities : tuple of (str, str)
        ``(point name, reason)`` of every mass centre whose declared
        velocity is not the time derivative of its position from the fixed
        point (no position chain to it, or a different velocity).
    underived_angular_velocities : tuple of (str, str)
        ``(frame name, reason)`` of every body's frame whose orientation
        from the inertial frame is not declared.
    states_checked : int
        Number of random states at which the comparisons were made.
    """

    underived_velocities: tuple = ()
    underived_angular_velocities: tuple = ()
    states_checked: int = 0

    @property
    def velocities_are_derivatives(self) -> bool:
        """True when every body's velocity is the derivative of its position
        (and every body's angular velocity the rate of its orientation):
        what a kinetic energy built from positions needs."""
        return not (self.underived_velocities or self.underived_angular_velocities)

    def reason(self) -> str:
        """Why the velocities are not derivatives, and how to declare the
        system so that they are; empty when they are."""
        if self.velocities_are_derivatives:
            return ""
        parts = [f"point {n}: {r}" for n, r in self.underived_velocities]
        parts += [f"frame {n}: {r}" for n, r in self.underived_angular_velocities]
        return (
            "bodies whose velocities are not time derivatives of their "
            "positions (" + "; ".join(parts) + "). Such velocities may "
            "already contain constraints (a rolling contact), which a kinetic "
            "energy built "
            "from them would wrongly enforce. To make the system usable, "
            "locate every point from the fixed point (and orient every frame "
            "from the inertial frame) with coordinates, add the coordinates "
            "the chain needs (e.g. the contact point's x, y), and declare the "
            "constraints as holonomic or nonholonomic constraints"
        )


def _vector_terms(vec):
    """(measure column, frame) of a sympy vector, frame by frame."""
    return [] if vec == 0 else [(sm.Matrix(m), F) for m, F in vec.args]


def _frames_from(N):
    """Every frame reachable from N through declared orientations, in
    breadth-first order, as (frame, parent, parent.dcm(frame))."""
    seen, queue, steps = {N}, [N], []
    while queue:
        F = queue.pop(0)
        for G, dcm in F._dcm_dict.items():
            if G not in seen:
                seen.add(G)
                queue.append(G)
                # F._dcm_dict[G] is F.dcm(G): v_F = F.dcm(G) v_G.
                steps.append((G, F, sm.Matrix(dcm)))
    return steps


def _skew_vector(W):
    return np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2


def _states(ms, n):
    """Up to n states satisfying every constraint (the initial one if no
    random state can be had)."""
    from eomcompare.numeric.states import ConstraintError

    out = []
    for seed in range(n):
        try:
            out.append(ms.states.random_state(seed=1000 + seed))
        except ConstraintError:
            pass
    if not out:
        out.append(ms.states.consistent_initial_state())
    return out


def analyse_declaration(ms, n_states: int = 2) -> DeclarationAnalysis:
    """Analyse the velocities and dependent solutions of a declaration.

    Parameters
    ----------
    ms : MechanicalSystem
        A declaration whose structure has been validated already.
    n_states : int
        Number of random consistent states to compare at.

    Returns
    -------
    DeclarationAnalysis

    Raises
    ------
    DeclarationError
        When a velocity a load acts with or a body moves with is not
        declared, a declared angular velocity contradicts the one derived
        from the orientations, or an explicit solution
        of a dependent coordinate violates the holonomic constraints; the
        message names the point, frame or coordinate and the residual.
    """
    from .errors import DeclarationError

    N, O = ms.frame, ms.system.fixed_point
    steps = _frames_from(N)
    connected = {N} | {G for G, _, _ in steps}

    # What enters the equations: bodies' mass centres and frames, loads'
    # points and frames (a load's point needs only a declared velocity).
    points, frames = {}, {}
    for body in ms.bodies:
        points.setdefault(body.masscenter, f"mass centre of {body.name}")
        if isinstance(body, me.RigidBody):
            frames.setdefault(body.frame, f"frame of {body.name}")
    for load in ms.loads:
        if isinstance(load, me.Force):
            points.setdefault(load.point, "a load's point")
        else:
            frames.setdefault(load.frame, "a load's frame")

    masscentres = {body.masscenter for body in ms.bodies}
    bodyframes = {b.frame for b in ms.bodies if isinstance(b, me.RigidBody)}
    underived_v, underived_w = [], []
    # Symbolic pieces to evaluate: (kind, name, declared terms, derived
    # terms) with terms as (measure column, frame); a derived term whose
    # frame moves needs the frame's rotation rate too.
    checks = []
    for P, role in points.items():
        try:
            declared = P.vel(N)
        except ValueError as exc:
            raise DeclarationError(
                f"system {ms.name!r}: the velocity of point {P.name} "
                f"({role}) in {N.name} is not declared: {exc}"
            ) from None
        if P not in masscentres:
            continue
        try:
            r = P.pos_from(O) if P is not O else me.Vector(0)
        except ValueError:
            if ms.u_aux and all(
                sm.sympify(e).xreplace(ms._aux_zero) == 0
                for m, _ in _vector_terms(declared)
                for e in m
            ):
                # Moved by auxiliary speeds only (a contact point carrying
                # their reactions): at rest in every motion, no energy and
                # no work, nothing to derive.
                continue
            underived_v.append(
                (
                    P.name,
                    f"its velocity is declared but its "
                    f"position from the fixed point {O.name} "
                    f"is not ({role})",
                )
            )
            continue
        dec_terms, pos_terms = _vector_terms(declared), _vector_terms(r)
        loose = sorted({F.name for _, F in dec_terms + pos_terms if F not in connected})
        if loose:
            underived_v.append(
                (
                    P.name,
                    f"it is expressed in frames {loose} not oriented from {N.name}",
                )
            )
            continue
        checks.append(("point", P.name, role, dec_terms, pos_terms))
    for F, role in frames.items():
        if F is N:
            continue
        try:
            declared = F.ang_vel_in(N)
        except ValueError as exc:
            raise DeclarationError(
                f"system {ms.name!r}: the angular velocity of frame "
                f"{F.name} ({role}) in {N.name} is not declared: "
                f"{exc}"
            ) from None
        dec_terms = _vector_terms(declared)
        if F not in connected and F not in bodyframes:
            # A load's frame: its declared angular velocity is all any
            # formulation reads.
            continue
        if F not in connected:
            underived_w.append(
                (
                    F.name,
                    f"its angular velocity is declared "
                    f"but its orientation from {N.name} is not "
                    f"({role})",
                )
            )
            continue
        loose = sorted({G.name for _, G in dec_terms if G not in connected})
        if loose and F not in bodyframes:
            continue
        if loose:
            underived_w.append(
                (
                    F.name,
                    f"its angular velocity is expressed "
                    f"in frames {loose} not oriented from "
                    f"{N.name}",
                )
            )
            continue
        checks.append(("frame", F.name, role, dec_terms, F))

    # Frames first: a wrong angular velocity makes the velocities built on
    # it by v2pt_theory wrong too, and the frame is the cause to name.
    checks.sort(key=lambda c: c[0] != "frame")
    dep_checks = [(qi, sm.sympify(f)) for qi, f in ms.dependent_solutions.items()]
    analysis = DeclarationAnalysis(tuple(underived_v), tuple(underived_w), 0)
    if not checks and not dep_checks:
        return analysis

    # One flat list of expressions, lambdified once.
    q, u = list(ms.coordinates), list(ms.speeds)
    qs = sm.symbols(f"_q0:{len(q)}")
    qds = sm.symbols(f"_qd0:{len(q)}")
    us = sm.symbols(f"_u0:{len(u)}")
    ts = sm.Symbol("_t")
    rep = (
        {qi.diff(t): s for qi, s in zip(q, qds)}
        | dict(zip(q, qs))
        | dict(zip(u, us))
        | {t: ts}
    )
    exprs, slots, memo = [], {}, {}

    def put(key, matrix):
        matrix = sm.Matrix(ms.substitute_specified(sm.Matrix(matrix)))
        slots[key] = (len(exprs), matrix.shape)
        # Shared subtrees (a chain's nested velocities) replaced once.
        exprs.extend(substitute(matrix, rep, memo))

    for i, (_, _, dcm) in enumerate(steps):
        put(("dcm", i), dcm)
        put(("dcm_dot", i), ms.substitute_specified(dcm).diff(t))
    for k, check in enumerate(checks):
        kind, _, _, dec_terms = check[:4]
        for j, (m, _) in enumerate(dec_terms):
            put(("dec", k, j), m)
        if kind == "point":
            for j, (m, _) in enumerate(check[4]):
                put(("pos", k, j), m)
                put(("pos_dot", k, j), ms.substitute_specified(m).diff(t))
    for k, (_, f) in enumerate(dep_checks):
        put(("dep", k), [f])
    hol = list(ms.holonomic_constraints)
    if dep_checks and hol:
        put(("hol",), hol)
    p = list(ms.parameters)
    leftover = (
        {e for e in subexpressions(exprs) if e.is_Symbol}
        - set(qs)
        - set(qds)
        - set(us)
        - {ts}
        - set(p)
    )
    if leftover:
        # Unknown symbols were reported by the structural validation; what
        # remains here (a function of time outside the declaration) cannot
        # be evaluated: leave the declaration as the user wrote it.
        return analysis
    f = _lambdify([ts, qs, qds, us, p], exprs)
    pvec = ms.states.parameter_vector()

    states = _states(ms, n_states)
    mismatched = {}
    for t0, qv, qdv in states:
        uv = ms.states.speeds_from_rates(t0, qv, qdv)
        vals = np.array(f(t0, qv, qdv, uv, pvec), dtype=float).ravel()

        def get(key):
            start, shape = slots[key]
            return vals[start : start + shape[0] * shape[1]].reshape(shape)

        R = {N: np.eye(3)}
        Rd = {N: np.zeros((3, 3))}
        for i, (G, F, _) in enumerate(steps):
            D, Dd = get(("dcm", i)), get(("dcm_dot", i))
            R[G] = R[F] @ D
            Rd[G] = Rd[F] @ D + R[F] @ Dd

        def in_N(terms, key):
            out = np.zeros(3)
            for j, (_, F) in enumerate(terms):
                out += R[F] @ get(key + (j,)).ravel()
            return out

        state_text = (
            f"at t = {t0:.3g}, q = {np.round(qv, 4).tolist()}, "
            f"q' = {np.round(qdv, 4).tolist()}"
        )
        for k, check in enumerate(checks):
            kind, name, role, dec_terms = check[:4]
            declared = in_N(dec_terms, ("dec", k))
            if kind == "point":
                derived = np.zeros(3)
                for j, (_, F) in enumerate(check[4]):
                    m = get(("pos", k, j)).ravel()
                    md = get(("pos_dot", k, j)).ravel()
                    derived += Rd[F] @ m + R[F] @ md
                res = np.linalg.norm(declared - derived)
                scale = 1.0 + np.linalg.norm(derived) + np.linalg.norm(declared)
                if not res <= _RTOL * scale and name not in mismatched:
                    # A velocity that embeds a constraint: what Kane's
                    # method uses as declared, and a kinetic energy cannot.
                    mismatched[name] = (
                        f"its declared velocity in {N.name} differs from the "
                        f"time derivative of its position from {O.name} by "
                        f"{res:.3g} {state_text} ({role})"
                    )
                continue
            F = check[4]
            derived = _skew_vector(Rd[F] @ R[F].T)
            what = (
                f"frame {name} ({role}): its declared angular "
                f"velocity in {N.name} differs from the rate of its "
                f"orientation (through the kinematic differential "
                f"equations)"
            )
            res = np.linalg.norm(declared - derived)
            scale = 1.0 + np.linalg.norm(derived) + np.linalg.norm(declared)
            if not np.isfinite(res) or res > _RTOL * scale:
                raise DeclarationError(
                    f"system {ms.name!r}: {what} by {res:.3g} {state_text} "
                    f"(declared {np.round(declared, 6).tolist()}, derived "
                    f"{np.round(derived, 6).tolist()}, in {N.name}'s "
                    f"components)"
                )
        if dep_checks and hol:
            _check_dependent(ms, dep_checks, get, q, t0, qv, state_text)
    underived_v += list(mismatched.items())
    return DeclarationAnalysis(tuple(underived_v), tuple(underived_w), len(states))


def _check_dependent(ms, dep_checks, get, q, t0, qv, state_text):
    """Each explicit solution, put in place of its coordinate, must satisfy
    the holonomic constraints (with the other coordinates at a consistent
    state; when the solutions give every dependent coordinate, they are all
    put in at once, so a solution on another branch of the constraints than
    the state's still passes)."""
    from .errors import DeclarationError

    index = {qi: i for i, qi in enumerate(q)}
    sols = [(qi, float(get(("dep", k))[0, 0])) for k, (qi, _) in enumerate(dep_checks)]
    qx = np.array(qv, dtype=float)
    for qi, v in sols:
        qx[index[qi]] = v
    res = ms.states.holonomic_residual(t0, qx)
    if np.max(np.abs(res)) <= 1e-8 * (1 + np.max(np.abs(qx))):
        # On the constraints; but a solution on another branch than the
        # declared motion's (the other assembly mode of a loop) would give
        # a formulation that substitutes it another system.
        for qi, v in sols:
            if abs(v - qv[index[qi]]) > 1e-7 * (1 + abs(v)):
                raise DeclarationError(
                    f"system {ms.name!r}: the explicit solution of dependent "
                    f"coordinate {qi} in dependent_solutions satisfies the "
                    f"holonomic constraints on another branch than the "
                    f"initial state's: it gives {v:.6g} where the "
                    f"consistent state has {qv[index[qi]]:.6g} "
                    f"{state_text}"
                )
        return
    # Which solution is wrong: each alone against the consistent state.
    for qi, v in sols:
        qy = np.array(qv, dtype=float)
        qy[index[qi]] = v
        r = ms.states.holonomic_residual(t0, qy)
        if np.max(np.abs(r)) > 1e-8 * (1 + np.max(np.abs(qy))):
            raise DeclarationError(
                f"system {ms.name!r}: the explicit solution of dependent "
                f"coordinate {qi} in dependent_solutions violates the "
                f"holonomic constraints (residual {np.max(np.abs(r)):.3g} "
                f"{state_text}, where the solution gives {v:.6g} and the "
                f"constraints {qv[index[qi]]:.6g})"
            )
    raise DeclarationError(
        f"system {ms.name!r}: the explicit solutions of the dependent "
        f"coordinates {[qi for qi, _ in sols]} in dependent_solutions "
        f"together violate the holonomic constraints (residual "
        f"{np.max(np.abs(res)):.3g} {state_text})"
    )


def inert_constants(system, free_constants) -> set:
    """Constants of ``system`` that cannot enter the equations of motion.

    The mass of a body whose mass centre is declared at rest and which does
    not rotate (the ground body of ``System.from_newtonian``), the central
    inertia of a body that does not rotate, and the loads on points at rest
    or frames that do not rotate do no work and have no momentum: their
    constants need no values.  Only exact zeros of the declared
    (angular) velocities count, so nothing that could matter is left out.

    Parameters
    ----------
    system : sympy.physics.mechanics.System
    free_constants : set
        Every constant of the declaration.

    Returns
    -------
    set
        The constants of ``free_constants`` that occur only in such places.
    """
    N = system.frame

    def at_rest(point):
        try:
            return point.vel(N) == 0
        except ValueError:
            return False

    def still(frame):
        try:
            return frame.ang_vel_in(N) == 0
        except ValueError:
            return frame is N

    def symbols_of(vec):
        out = set()
        if vec != 0:
            for m, _ in vec.args:
                out |= sm.Matrix(m).free_symbols
        return out

    inert, active = set(), set()
    for body in system.bodies:
        rigid = isinstance(body, me.RigidBody)
        rotating = rigid and not still(body.frame)
        mass = sm.sympify(body.mass).free_symbols
        if at_rest(body.masscenter) and not rotating:
            inert |= mass
        else:
            active |= mass
        if rigid:
            inertia = dyadic_matrix(body.central_inertia, body.frame).free_symbols
            (active if rotating else inert).update(inertia)
    loads = list(system.loads) + [
        ld for act in system.actuators for ld in act.to_loads()
    ]
    for load in loads:
        resting = (
            at_rest(load.point) if isinstance(load, me.Force) else still(load.frame)
        )
        (inert if resting else active).update(symbols_of(load.vector))
    candidates = (inert - active) & set(free_constants)
    # Anything else naming them (positions, constraints, kinematics) keeps
    # them active: look there only for the few candidates.
    if not candidates:
        return set()
    others = (
        list(system.kdes)
        + list(system.holonomic_constraints)
        + list(system.nonholonomic_constraints)
    )
    for body in system.bodies:
        for vec in (body.masscenter.vel(N),):
            others += [e for m, _ in (vec.args if vec != 0 else []) for e in m]
        if isinstance(body, me.RigidBody) and not still(body.frame):
            w = body.frame.ang_vel_in(N)
            others += [e for m, _ in (w.args if w != 0 else []) for e in m]
    used = (
        set().union(*(sm.sympify(e).free_symbols for e in others)) if others else set()
    )
    return candidates - used
