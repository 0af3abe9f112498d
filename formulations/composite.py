"""Kane's mass matrix and forcing by composite bodies (tree-structured
systems): the sums of the ``kane_composite`` formulation
(:class:`eomcompare.formulations.kane.KaneComposite`).

Summing ``m v_r . v_s + w_r . I w_s`` body by body costs one term per body
moved by both speeds: O(n^3) terms for a chain of n bodies.  When every
speed moves its bodies as ONE rigid motion (a twist), the bodies moved by
both r and s form a composite body, and

    M_rs = m v_r . v_s + v_r . (w_s x h) + v_s . (w_r x h) + w_r . J w_s,
    F_r  = v_r . F + w_r . T,

with (w_r, v_r) the twist of speed r at a reference point X, and the
composite's mass m, first moment h and inertia J about X, and its resultant
force F and moment T about X (applied loads at the mass centres plus the
inertia forces without the speed-rate terms).  The composites are nested,
so each is built from the ones inside it (Featherstone's composite-rigid-
body idea, here symbolic): O(n^2) entries of O(1) terms each.  The
reference point of a speed is a declared point on its axis, where its own
twist vanishes, so most terms drop out.

The structure is detected, not declared: the twist of speed r is read off
one body it moves and checked on every other (exactly when the difference
is syntactically zero, else by value at random states); the sets of bodies
moved by the speeds must be nested or disjoint (a tree).  Anything else
(closed loops, absolute joint angles, rolling contact) returns ``None``,
and :class:`eomcompare.formulations.kane.KaneComposite` (``kane_composite``)
refuses the system with the reason
(:class:`~eomcompare.formulations.base.UnsupportedSystemError`); ``kane``, Kane's
method as the textbook forms it, sums body by body on every system.

Velocity constraints on a tree (a loop closed by constraints on an open
tree of twists) are applied as in ``kane``: the composite sums give the
equations of all speeds, which the dependent-speed coefficients then
reduce.
"""

from __future__ import annotations

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.calculus import jacobian
from eomcompare.symbolic.frames import (
    VectorCalculus,
    add,
    connected_points,
    cross,
    dot,
    dyadic_matrix,
    generalized_forces,
    matmul,
    scale,
    sub,
)
from eomcompare.symbolic.identities import RandomPoints

__all__ = ["composite_equations", "composite_body_equations"]

t = me.dynamicsymbols._t


class _Node:
    __slots__ = ("bodies", "X", "X_value", "m", "h", "J", "F", "T", "children")


def composite_equations(ms, qdot, speeds, fa, calc, rng=None, min_depth=1):
    """``(M, f, loads_used)`` by composite bodies, or None when the system
    is not a tree of twists (see the module docstring) or its composites
    nest fewer than ``min_depth`` deep.

    The composite sums pay off in long chains (fewer operations after cse
    than the body-by-body sum from about 5 nested composites on, on
    n_link_pendulum and n_link_pendulum_on_cart).

    ``f`` holds the inertia forces without speed-rate terms and the loads in
    ``loads_used`` (forces at mass centres, torques on body frames); the
    caller adds the generalized forces of the other loads.
    """
    sample = RandomPoints(rng)
    N, O = ms.frame, ms.system.fixed_point
    bodies = list(ms.bodies)
    n = len(speeds)
    if not bodies or n == 0:
        return None
    # Kinematics of every body in components of one frame E.  Every sum
    # below is a dot product or a cross product of vectors, the same in any
    # frame's components, so the choice changes the expressions, not the
    # equations: E is the frame in which the bodies' positions and
    # orientations are written smallest (for an arm turning about the
    # vertical, its first link rather than N, which removes the first joint
    # angle from every expression).
    try:
        E = _component_frame(ms, fa)
        c = [fa.components(b.masscenter.pos_from(O), E) for b in bodies]
    except ValueError:
        return None
    vr, wr, force, torque, inertia, mass = [], [], [], [], [], []
    for b in bodies:
        _, vr_b, a0 = calc.velocity(b.masscenter.vel(N), E, value=False)
        vr.append(vr_b)
        mass.append(b.mass)
        force.append(scale(-b.mass, a0))
        if isinstance(b, me.RigidBody):
            B = b.frame
            R = fa.dcm(E, B)
            wB = calc.frame_rate(B)
            alpha0 = calc.rate(wB)
            IB = dyadic_matrix(b.central_inertia, B)
            tau = scale(-1, add(matmul(IB, alpha0), cross(wB, matmul(IB, wB))))
            wr.append(matmul(R, jacobian(wB, speeds)))
            torque.append(matmul(R, tau))
            inertia.append(matmul(matmul(R, IB), R.T))
        else:
            wr.append(sm.zeros(3, n))
            torque.append(sm.zeros(3, 1))
            inertia.append(sm.zeros(3, 3))
    used = []
    index = {b.masscenter: i for i, b in enumerate(bodies)}
    frames = {b.frame: i for i, b in enumerate(bodies) if isinstance(b, me.RigidBody)}
    for load in ms.loads:
        if isinstance(load, me.Force) and load.point in index:
            k = index[load.point]
            force[k] = add(force[k], fa.components(load.vector, E, qdot))
            used.append(load)
        elif isinstance(load, me.Torque) and load.frame in frames:
            k = frames[load.frame]
            torque[k] = add(torque[k], fa.components(load.vector, E, qdot))
            used.append(load)

    # The twist of every speed, read off one body and checked on the rest.
    moved, w_of, vO_of = [], [], []
    sizes = {}
    for r in range(n):
        S = frozenset(
            k
            for k in range(len(bodies))
            if any(x != 0 for x in vr[k][:, r]) or any(x != 0 for x in wr[k][:, r])
        )
        rigid = [k for k in S if isinstance(bodies[k], me.RigidBody)]
        ref = min(
            rigid or S, key=lambda k: _tree_size(vr[k][:, r], sizes), default=None
        )
        if ref is None:
            w, vO = sm.zeros(3, 1), sm.zeros(3, 1)
        else:
            w = wr[ref][:, r] if rigid else sm.zeros(3, 1)
            vO = sub(vr[ref][:, r], cross(w, c[ref]))
            checks = []
            for k in S:
                if isinstance(bodies[k], me.RigidBody):
                    checks += list(sub(wr[k][:, r], w))
                checks += list(sub(sub(vr[k][:, r], vO), cross(w, c[k])))
            if not sample.vanishes(checks):
                return None
        moved.append(S)
        w_of.append(w)
        vO_of.append(vO)
    sets = sorted({S for S in moved if S}, key=len)
    for i, A in enumerate(sets):
        for B in sets[i + 1 :]:
            if A & B and not A < B:
                return None  # overlapping, not nested: not a tree
    depth = {}
    for S in sets:  # smallest first: the sets inside S are done
        depth[S] = 1 + max((depth[T] for T in sets if T < S), default=0)
    if max(depth.values(), default=0) < min_depth:
        return None

    # Reference point of each set: a declared point where the twist of one
    # of its speeds vanishes (a joint axis), else the origin.
    # (Numerically: the twist's velocity at a point from the values of its
    # parts, no symbolic work for the many points that do not qualify.)
    candidates = [fa.components(P.pos_from(O), E) for P in connected_points(O)]
    cand_values = [sample.vector(p) for p in candidates]

    def twist_value(r, p_value):
        w, vO = sample.vector(w_of[r]), sample.vector(vO_of[r])
        return vO + np.cross(w, p_value)

    def zero_value(x):
        return bool(np.all(np.abs(x) < 1e-9))

    nodes = {}
    for S in sets:
        node = _Node()
        node.bodies = S
        node.X = sm.zeros(3, 1)
        node.X_value = np.zeros((sample.trials, 3))
        for r in (r for r in range(n) if moved[r] == S):
            found = next(
                (
                    i
                    for i, pv in enumerate(cand_values)
                    if zero_value(twist_value(r, pv))
                ),
                None,
            )
            if found is not None:
                node.X, node.X_value = candidates[found], cand_values[found]
                break
        inner = [nodes[T] for T in sets if T < S]
        node.children = [
            ch for ch in inner if not any(ch.bodies < o.bodies for o in inner)
        ]
        covered = frozenset().union(*(ch.bodies for ch in node.children))
        left = sorted(S - covered)
        X = node.X
        m = sm.Add(*[ch.m for ch in node.children], *[mass[k] for k in left])
        h = sm.zeros(3, 1)
        J = sm.zeros(3, 3)
        F = sm.zeros(3, 1)
        T = sm.zeros(3, 1)
        for ch in node.children:
            d = sub(ch.X, X)
            h = add(h, add(ch.h, scale(ch.m, d)))
            J = add(J, add(ch.J, _shift(ch.h, ch.m, d)))
            F = add(F, ch.F)
            T = add(T, add(ch.T, cross(d, ch.F)))
        for k in left:
            rho = sub(c[k], X)
            h = add(h, scale(mass[k], rho))
            J = add(J, add(inertia[k], scale(mass[k], _parallel(rho))))
            F = add(F, force[k])
            T = add(T, add(torque[k], cross(rho, force[k])))
        node.m, node.h, node.J, node.F, node.T = m, h, J, F, T
        nodes[S] = node

    def twist_at(r, X):
        return add(vO_of[r], cross(w_of[r], X))

    v_at = {}

    def v(r, node):
        key = (r, node.bodies)
        if key not in v_at:
            vanish = zero_value(twist_value(r, node.X_value))
            v_at[key] = sm.zeros(3, 1) if vanish else twist_at(r, node.X)
        return v_at[key]

    M = sm.zeros(n, n)
    f = sm.zeros(n, 1)
    for r in range(n):
        if not moved[r]:
            continue
        node = nodes[moved[r]]
        f[r] = dot(v(r, node), node.F) + dot(w_of[r], node.T)
    for r in range(n):
        for s in range(r, n):
            A, B = moved[r], moved[s]
            if not (A and B and A & B):
                continue
            inner = B if B <= A else A
            node = nodes[inner]
            vr_, vs_ = v(r, node), v(s, node)
            wr_, ws_ = w_of[r], w_of[s]
            val = (
                node.m * dot(vr_, vs_)
                + dot(vr_, cross(ws_, node.h))
                + dot(vs_, cross(wr_, node.h))
                + dot(wr_, matmul(node.J, ws_))
            )
            M[r, s] = M[s, r] = val
    return M, f, used


def _component_frame(ms, fa):
    """The frame the composite sums are written in: the frame of the one
    rigid body oriented directly from N (the root of the tree, its
    orientation one joint from N's), else N.

    In the root body's frame the root joint's angle leaves the positions
    and orientations of every body (it stays only in the components of
    loads given in N, and not even there for gravity along a vertical
    first axis): on panda 7 % fewer operations after cse than in N."""
    N = ms.frame
    frames = [b.frame for b in ms.bodies if isinstance(b, me.RigidBody)]
    own = set(frames)
    roots = []
    for F in frames:
        try:
            path = fa.path(N, F)
        except ValueError:
            return N
        if not any(G in own for G in path[1:-1]):
            roots.append(F)
    return roots[0] if len(roots) == 1 else N


def _tree_size(exprs, memo):
    """Nodes of the expression trees (shared subtrees counted at every
    occurrence, as ``count_ops`` walks them), computed once per distinct
    subtree."""
    total = 0
    for e in exprs:
        stack = [e]
        while stack:
            x = stack[-1]
            if x in memo:
                stack.pop()
                continue
            todo = [a for a in x.args if a not in memo]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            memo[x] = 1 + sum(memo[a] for a in x.args)
        total += memo[e]
    return total


def _parallel(a):
    """|a|^2 1 - a a^T: the inertia of a unit mass at a."""
    return sub(scale(dot(a, a), sm.eye(3)), matmul(a, a.T))


def _shift(h, m, d):
    """Change of a composite's inertia when its reference point moves by
    -d (from Y to X = Y - d), given its first moment h about Y and mass m:
    sum m_k [P(rho_k + d) - P(rho_k)] = 2 (h.d) 1 - h d^T - d h^T + m P(d)."""
    return add(
        sub(sub(scale(2 * dot(h, d), sm.eye(3)), matmul(h, d.T)), matmul(d, h.T)),
        scale(m, _parallel(d)),
    )


def composite_body_equations(ms, qdot, speeds, fa, min_depth=1):
    """Mass matrix and forcing (F_r + F*_r without speed-rate terms) summed
    over nested composite bodies, the loads the composites do not carry
    added as generalized active forces; None when the system is not a tree
    of twists nested ``min_depth`` deep."""
    calc = VectorCalculus(ms.frame, qdot, speeds, fa)
    got = composite_equations(ms, qdot, speeds, fa, calc, min_depth=min_depth)
    if got is None:
        return None
    M, f, carried = got
    others = [ld for ld in ms.loads if ld not in carried]
    if others:
        f = f + generalized_forces(others, ms.frame, fa, speeds, qdot)
    return M, f
