"""Kane's equations of a joint tree solved by an articulated-body recursion:
forward dynamics in O(n) operations, without forming the mass matrix (the
``kane_articulated`` formulation, :class:`KaneArticulated`).

For a tree of one-degree-of-freedom joints (the systems of
:func:`eomcompare.systems.declare_tree`: URDF robots, the Denavit-Hartenberg arms,
``spatial_chain``) with the joint rates as generalized speeds, Kane's
equation of speed r sums, over the bodies outboard of joint r, the joint's
twist dotted with their resultants (see :mod:`eomcompare.formulations.kane_recursive`).
Eliminating the speed rates tip to base, one joint at a time, gives the
articulated-body algorithm of Featherstone, *Rigid Body Dynamics
Algorithms* (2008), ch. 7 (Table 7.1): each body's subtree is replaced by
an articulated inertia and a bias force acting on it, and the speed rates
follow base to tip.

Everything is evaluated in body frames (the components of body k about its
origin O_k on the joint axis), with spatial vectors as pairs of 3-vectors
(angular part first).  The transform from a body to its parent is a turn
about the joint axis, the joint frame's constant rotation and a shift; a
turn about a coordinate axis rotates a symmetric 3x3 block in 8
multiplications (its 2x2 part through the double angle), so transforming
an articulated inertia costs O(1) per link with small constants.

A floating root
---------------
A tree whose first link is a free root (``from_urdf(...,
floating_base=True)``, :class:`eomcompare.systems.joint_tree.FreeFlyerJoint`)
keeps the root's speeds as declared (:mod:`eomcompare.systems.free_joint`):
body rates w, and the origin's velocity v in the components of the
ground-fixed joint frame, so the root's spatial velocity is ``(w, C^T v)``
with C the quaternion's rotation matrix; the quaternion's kinematic
equations stay the declaration's.  The root's articulated inertia is
6x6 and no wrench crosses its joint: its spatial acceleration (the
ground's -g in it) solves ``I^A a = -p^A``, by a 6x6 ``L D L^T`` on the
evaluation tape (:func:`_ldl_solve`: six divisions, no numeric solve
left), then ``w' = a_w`` and ``v' = C (a_v + w x C^T v) + g``; the joints
follow base to tip as on a fixed base (Featherstone 2008, section 9.3).

Expression size
---------------
The results nest 2n levels deep: as sympy trees they grow exponentially
although they are small as graphs.  Each recursion quantity is therefore
named by a plain symbol, and the recursion is returned as an ordered list
of ``(symbol, definition)`` assignments (:class:`Assignments`), each
definition in the state, the parameters and earlier symbols.  Operation
counts (:mod:`eomcompare.bench.literature_counts`) and the compiled backend consume
the assignments; the forcing itself, for every other consumer, is the same
graph with the symbols substituted (shared subtrees kept shared), which
only memoised walks (``cse``, :func:`eomcompare.symbolic.calculus.substitute`) may
traverse.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic import lists3 as v3
from eomcompare.symbolic.calculus import substitute
from eomcompare.symbolic.counting import count_ops

from .base import Derivation, Formulation, UnsupportedSystemError, register, speed_form

__all__ = [
    "Assignments",
    "articulated_body_accelerations",
    "check_joint_tree",
    "KaneArticulated",
]

t = me.dynamicsymbols._t


@dataclass(frozen=True)
class Assignments:
    """An evaluation order: ``symbols[i] = definitions[i]`` in turn, each
    definition in the inputs and earlier symbols; ``outputs`` in all of
    them."""

    symbols: tuple
    definitions: tuple
    outputs: tuple

    def substituted(self):
        """The outputs with every symbol replaced by its definition, built
        bottom-up so that each definition is rebuilt once (the result is a
        graph: walk it only with memoised functions)."""
        # One mapping grows as the definitions are rebuilt, one memo is
        # shared: a definition names only earlier symbols, so a subtree
        # rebuilt before a symbol joined the mapping cannot contain it.
        value: dict = {}
        memo: dict = {}
        for s, d in zip(self.symbols, self.definitions):
            (value[s],) = substitute([d], value, memo)
        return tuple(substitute(list(self.outputs), value, memo))

    def raw_operations(self) -> int:
        """``count_ops`` of the definitions and outputs as written."""
        return count_ops(*self.definitions, *self.outputs)


class _Tape:
    """Names every non-trivial expression it is given by a new symbol and
    records the definition."""

    def __init__(self, prefix="_ab"):
        self.prefix = prefix
        self.symbols, self.definitions = [], []

    def let(self, e):
        e = sm.sympify(e)
        if e.is_Atom or (
            e.is_Mul
            and len(e.args) == 2
            and e.args[0] is sm.S.NegativeOne
            and e.args[1].is_Atom
        ):
            return e
        s = sm.Symbol(f"{self.prefix}{len(self.symbols)}")
        self.symbols.append(s)
        self.definitions.append(e)
        return s

    def vec(self, v):
        return [self.let(x) for x in v]

    def sym(self, B):
        """A symmetric 3x3 (list of lists), each entry named once."""
        out = [[None] * 3 for _ in range(3)]
        for i in range(3):
            for j in range(i, 3):
                out[i][j] = out[j][i] = self.let(B[i][j])
        return out

    def mat(self, B):
        return [[self.let(x) for x in row] for row in B]


def _listmat(M):
    M = sm.Matrix(M)
    return [[M[i, j] for j in range(3)] for i in range(3)]


# ----------------------------------------------------------------------
# Rotations: about a coordinate axis (fast) or general
# ----------------------------------------------------------------------
class _Rotation:
    """A rotation Q (parent components = Q child components), as a turn
    by (c, s) in the plane (i, j) about coordinate axis k when it is one,
    else as a general matrix."""

    def __init__(self, Q, tape, angle=None):
        self.Q = _listmat(Q)
        self.plane = _plane(self.Q)
        self.tape = tape
        if self.plane is not None:
            i, j, c, s = self.plane
            self.c, self.s = c, s
            # Shared by every block turned by this rotation.
            self.ss = tape.let(s * s)
            self.cs = tape.let(c * s)

    def is_identity(self):
        return all(
            self.Q[i][j] == (1 if i == j else 0) for i in range(3) for j in range(3)
        )

    def vec(self, v):
        """Q v."""
        if self.plane is None:
            return v3.mv(self.Q, v)
        i, j, c, s = self.plane
        out = list(v)
        out[i] = v3.product(c, v[i]) - v3.product(s, v[j])
        out[j] = v3.product(s, v[i]) + v3.product(c, v[j])
        return out

    def tvec(self, v):
        """Q^T v."""
        if self.plane is None:
            return v3.mtv(self.Q, v)
        i, j, c, s = self.plane
        out = list(v)
        out[i] = v3.product(c, v[i]) + v3.product(s, v[j])
        out[j] = v3.product(c, v[j]) - v3.product(s, v[i])
        return out

    def block(self, B, symmetric):
        """Q B Q^T of a 3x3 block (list of lists)."""
        if self.plane is None:
            QB = [
                [v3.dot(self.Q[r], [B[m][col] for m in range(3)]) for col in range(3)]
                for r in range(3)
            ]
            return [[v3.dot(QB[r], self.Q[col]) for col in range(3)] for r in range(3)]
        i, j, c, s = self.plane
        k = 3 - i - j
        out = [row[:] for row in B]
        # Row and column k turn as vectors; B[k][k] stays.
        ci = self.vec([B[m][k] for m in range(3)])
        out[i][k], out[j][k] = ci[i], ci[j]
        if symmetric:
            out[k][i], out[k][j] = ci[i], ci[j]
        else:
            rk = self.vec([B[k][m] for m in range(3)])
            out[k][i], out[k][j] = rk[i], rk[j]
        # The 2x2 part [[x, y], [w, z]]: with h = x - z and e = y + w,
        # Q2 G Q2^T = [[x - d, y + f], [w + f, z + d]], d = s^2 h + c s e,
        # f = c s h - s^2 e (the antisymmetric part does not turn).
        x, y, w, z = B[i][i], B[i][j], B[j][i], B[j][j]
        h = self.tape.let(x - z)
        e = self.tape.let(y + w) if not symmetric else self.tape.let(2 * y)
        d = self.tape.let(v3.product(self.ss, h) + v3.product(self.cs, e))
        f = self.tape.let(v3.product(self.cs, h) - v3.product(self.ss, e))
        out[i][i], out[j][j] = x - d, z + d
        out[i][j], out[j][i] = y + f, w + f
        return out


def _plane(Q):
    """(i, j, c, s) when Q = identity but for ``[[c, -s], [s, c]]`` in rows
    and columns (i, j), i < j; else None."""
    for k in range(3):
        i, j = [m for m in range(3) if m != k]
        if Q[k][k] != 1 or any(Q[k][m] != 0 or Q[m][k] != 0 for m in (i, j)):
            continue
        c, s = Q[i][i], Q[j][i]
        if Q[j][j] == c and Q[i][j] == -s:
            return i, j, c, s
    return None


# ----------------------------------------------------------------------
# Spatial inertia (I about the origin, H, M) and its transforms
# ----------------------------------------------------------------------
def _shift_inertia(Ib, H, M, r):
    """The inertia about O_p of a body whose inertia about O = O_p + r is
    (Ib, H, M), all in the same components:
    H' = H + r x M, Ib' = Ib - H r x + r x H'^T (r x: the cross-product
    matrix); M' = M."""
    rx = [[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]]
    rxM = [
        [v3.dot(rx[a], [M[m][b] for m in range(3)]) for b in range(3)] for a in range(3)
    ]
    H2 = [[H[a][b] + rxM[a][b] for b in range(3)] for a in range(3)]
    Hrx = [
        [v3.dot(H[a], [rx[m][b] for m in range(3)]) for b in range(3)] for a in range(3)
    ]
    rxH2t = [[v3.dot(rx[a], H2[b]) for b in range(3)] for a in range(3)]
    Ib2 = [[Ib[a][b] - Hrx[a][b] + rxH2t[a][b] for b in range(3)] for a in range(3)]
    return Ib2, H2, M


def _shift_along(Ib, H, M, i, rho, tape):
    """:func:`_shift_inertia` for r = rho e_i: with (i, j, k) cyclic,
    H' rows j and k change by -rho M[k, :] and rho M[j, :], and Ib' differs
    from Ib in five entries."""
    j, k = (i + 1) % 3, (i + 2) % 3
    H2 = [row[:] for row in H]
    for m in range(3):
        H2[j][m] = H[j][m] - v3.product(rho, M[k][m])
        H2[k][m] = H[k][m] + v3.product(rho, M[j][m])
    H2 = tape.mat(H2)
    Ib2 = [row[:] for row in Ib]
    Ib2[i][j] = Ib2[j][i] = Ib[i][j] - v3.product(rho, H[i][k])
    Ib2[i][k] = Ib2[k][i] = Ib[i][k] + v3.product(rho, H[i][j])
    Ib2[j][j] = Ib[j][j] - v3.product(rho, H[j][k] + H2[j][k])
    Ib2[k][k] = Ib[k][k] + v3.product(rho, H[k][j] + H2[k][j])
    Ib2[j][k] = Ib2[k][j] = Ib[j][k] + v3.product(rho, H[j][j] - H2[k][k])
    return tape.sym(Ib2), H2


def _axis_index(S):
    """(index, sign) when the motion subspace S (a spatial 6-vector) is a
    coordinate axis, else None."""
    nz = [i for i in range(6) if S[i] != 0]
    if len(nz) == 1 and abs(S[nz[0]]) == 1:
        return nz[0], S[nz[0]]
    return None


def check_joint_tree(ms, who="kane_articulated"):
    """The joint tree record of ``ms`` (fixed-base or on a free root), or
    :class:`UnsupportedSystemError` naming why the recursion does not
    apply."""
    tree = getattr(ms, "tree", None)
    if tree is None:
        raise UnsupportedSystemError(
            f"{ms.name}: {who} needs a tree of one-coordinate joints, on the "
            "ground or on a free root, declared by systems.declare_tree "
            "(from_urdf, dh_system, spatial_chain); this system is declared "
            "otherwise (a closed loop, constraints, ball joints or other "
            "bodies are not such a joint tree): use kane or kane_composite"
        )
    if ms.holonomic_constraints or ms.nonholonomic_constraints:
        raise UnsupportedSystemError(
            f"{ms.name}: {who} needs an unconstrained joint tree; this "
            "system has constraints: use kane or kane_composite"
        )
    nq = sum(link.joint.nq for link in tree)
    nv = sum(link.joint.nv for link in tree)
    if nv != len(ms.speeds) or nq != len(ms.coordinates):
        raise UnsupportedSystemError(
            f"{ms.name}: {who}: the joint tree has {nq} coordinates and {nv} "
            f"speeds for the system's {len(ms.coordinates)} and "
            f"{len(ms.speeds)}"
        )
    armed = [link.name for link in tree if link.armature is not None]
    if armed:
        raise UnsupportedSystemError(
            f"{ms.name}: {who} does not take joint armature (joints "
            f"{armed}): it is no body of the tree: use forward='mass_matrix'"
        )
    # The recursion knows the loads declare_tree puts (gravity at each
    # mass centre, joint damping); anything added since would be ignored.
    declared = len(tree) + sum(
        (2 if link.parent else 1) for link in tree if link.damping is not None
    )
    if len(ms.loads) != declared or len(ms.bodies) != len(tree):
        raise UnsupportedSystemError(
            f"{ms.name}: {who} knows only the bodies and loads of the joint "
            f"tree (gravity, joint damping); this system has "
            f"{len(ms.bodies)} bodies and {len(ms.loads)} loads for "
            f"{len(tree)} joints: use kane or kane_composite"
        )
    if ms.specified or ms.u_aux:
        raise UnsupportedSystemError(
            f"{ms.name}: {who} does not take prescribed motions or "
            "auxiliary speeds: use kane or kane_composite"
        )
    return tree


def articulated_body_accelerations(ms) -> Assignments:
    """The speed rates u' (= q'') of a joint tree by the articulated-body
    recursion (see the module), as :class:`Assignments` whose outputs are
    u', one per speed, in (t, q, u) and the parameters.

    On a free root (see "A floating root" in the module) the first six
    outputs are the root's speed rates.

    Raises
    ------
    UnsupportedSystemError
        When ``ms`` is not an unconstrained tree of revolute and prismatic
        joints, on the ground or on a free root, declared by
        :func:`eomcompare.systems.declare_tree`.
    """
    tree = check_joint_tree(ms)
    n = len(tree)
    # Each link's coordinates and speeds (a free root has seven and six).
    qs, us = [None], [None]
    iq = iv = 0
    for link in tree:
        qs.append(list(ms.coordinates[iq : iq + link.joint.nq]))
        us.append(list(ms.speeds[iv : iv + link.joint.nv]))
        iq, iv = iq + link.joint.nq, iv + link.joint.nv
    tape = _Tape()
    zero = [sm.S.Zero] * 3
    # Pass 1, base to tip: velocities (w, v of the origin), the
    # velocity-product accelerations c and the bias forces, in body
    # components.
    w, v = [zero], [zero]
    rot_q, rot_c, arm = [None], [None], [None]
    cw, cv = [None], [None]
    IA, pA = [None], [None]
    for k, link in enumerate(tree, start=1):
        p, joint = link.parent, link.joint
        Rc = _Rotation(link.rotation, tape)  # joint frame -> parent components
        if joint.kind == "free":
            # The root's velocity is its speeds: body rates, and the
            # origin's velocity in joint-frame components turned to the body.
            Rq = _Rotation(_quaternion_matrix(qs[k][:4], tape), tape)
            wk = tape.vec(us[k][:3])
            vk = tape.vec(Rq.tvec(us[k][3:]))
            r, ck_w, ck_v = None, None, None
        else:
            qk, uk = qs[k][0], us[k][0]
            # body -> joint frame, when the joint turns the body
            Rq = _Rotation(joint.rotation(qk), tape) if joint.turns else None
            r = link.origin(qk)
            # The parent's motion at O_k, in body components.
            wp, vp = w[p], v[p]
            vO = v3.add(vp, v3.cross(wp, r))
            wJ, vJ = Rc.tvec(wp), Rc.tvec(vO)
            if Rq is not None:
                wJ, vJ = Rq.tvec(wJ), Rq.tvec(vJ)
            wJ, vJ = tape.vec(wJ), tape.vec(vJ)
            # The joint velocity S u and the velocity-product acceleration
            # c = (wJ, vJ) x (S u) (motion cross product).
            Sw, Sv = joint.angular_velocity(uk), joint.linear_velocity(uk)
            wk, vk = tape.vec(v3.add(wJ, Sw)), tape.vec(v3.add(vJ, Sv))
            ck_w = tape.vec(v3.cross(wJ, Sw))
            ck_v = tape.vec(v3.add(v3.cross(wJ, Sv), v3.cross(vJ, Sw)))
        # Rigid-body inertia about O_k and the bias force v x* I v:
        # (w x I_O w + mc x (w x v), m (w x v) + w x (w x mc)).
        body = link.inertia
        m, c = body.mass, list(body.com)
        xx, yy, zz, xy, yz, zx = body.central
        IG = [[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]]
        mc = tape.vec(v3.scale(m, c))
        cc = v3.dot(c, c)
        IO = tape.sym(
            [
                [IG[i][j] + m * ((cc if i == j else 0) - c[i] * c[j]) for j in range(3)]
                for i in range(3)
            ]
        )
        Hk = [[0, -mc[2], mc[1]], [mc[2], 0, -mc[0]], [-mc[1], mc[0], 0]]
        Mk = [[m if i == j else 0 for j in range(3)] for i in range(3)]
        wv = tape.vec(v3.cross(wk, vk))
        pn = tape.vec(v3.add(v3.cross(wk, tape.vec(v3.mv(IO, wk))), v3.cross(mc, wv)))
        pf = tape.vec(v3.add(v3.scale(m, wv), v3.cross(wk, tape.vec(v3.cross(wk, mc)))))
        w.append(wk)
        v.append(vk)
        cw.append(ck_w)
        cv.append(ck_v)
        rot_q.append(Rq)
        rot_c.append(Rc)
        arm.append(r)
        IA.append([IO, Hk, Mk])
        pA.append([pn, pf])
    # Pass 2, tip to base: articulated inertias and bias forces.
    U, invD, uu = [None] * (n + 1), [None] * (n + 1), [None] * (n + 1)
    for k in range(n, 0, -1):
        link = tree.links[k - 1]
        if link.joint.kind == "free":
            continue  # the root: solved below
        Ib, H, M = IA[k]
        pn, pf = pA[k]
        # S = (Sw, Sv): U = I^A S = (Ib Sw + H Sv, H^T Sw + M Sv),
        # D = S^T U, u = tau - S^T p^A.
        Sw, Sv = link.joint.motion_subspace()
        Uk = tape.vec(v3.add(v3.mv(Ib, Sw), v3.mv(H, Sv))) + tape.vec(
            v3.add(v3.mtv(H, Sw), v3.mv(M, Sv))
        )
        D = v3.dot(Sw + Sv, Uk)
        s_p = link.joint.generalized_force(pn, pf)
        damping = link.damping
        tau = -damping * us[k][0] if damping is not None else sm.S.Zero
        U[k] = Uk
        invD[k] = tape.let(1 / tape.let(D))
        uu[k] = tape.let(tau - s_p)
        p = link.parent
        if not p:
            continue
        # Ia = IA - U U^T / D; pa = pA + Ia c + U u / D.
        W = tape.vec(v3.scale(invD[k], Uk))
        Ia6 = [[None] * 6 for _ in range(6)]
        full = [[None] * 6 for _ in range(6)]
        for i in range(3):
            for j in range(3):
                full[i][j] = Ib[i][j]
                full[i][j + 3] = H[i][j]
                full[j + 3][i] = H[i][j]
                full[i + 3][j + 3] = M[i][j]
        # Ia S = 0 and S^T pa = tau exactly: for S along a coordinate axis
        # that row and column of Ia are zero and that entry of pa is tau,
        # which the entries as computed would give only after cancelling.
        ax = _axis_index(Sw + Sv)
        for i in range(6):
            for j in range(i, 6):
                Ia6[i][j] = Ia6[j][i] = (
                    sm.S.Zero
                    if ax is not None and ax[0] in (i, j)
                    else tape.let(full[i][j] - v3.product(W[i], Uk[j]))
                )
        ck = list(cw[k]) + list(cv[k])
        pa = []
        for i in range(6):
            if ax is not None and ax[0] == i:
                pa.append(ax[1] * tau)
            else:
                pA_i = pn[i] if i < 3 else pf[i - 3]
                pa.append(tape.let(pA_i + v3.dot(Ia6[i], ck) + v3.product(W[i], uu[k])))
        Ib = [[Ia6[i][j] for j in range(3)] for i in range(3)]
        H = [[Ia6[i][j + 3] for j in range(3)] for i in range(3)]
        M = [[Ia6[i + 3][j + 3] for j in range(3)] for i in range(3)]
        n_, f_ = pa[:3], pa[3:]
        # To the parent: turn about the joint axis, the joint frame's
        # rotation, then the shift from O_k to O_p.
        for Q in (rot_q[k], rot_c[k]):
            if Q is None or Q.is_identity():
                continue
            Ib = tape.sym(Q.block(Ib, True))
            H = tape.mat(Q.block(H, False))
            M = tape.sym(Q.block(M, True))
            n_, f_ = tape.vec(Q.vec(n_)), tape.vec(Q.vec(f_))
        r = arm[k]
        single = [i for i in range(3) if r[i] != 0]
        if len(single) == 1 or not all(x.is_number for x in r):
            # One shift per nonzero component (shifts commute): a shift
            # along a coordinate axis costs 11 multiplications.
            for i in single:
                Ib, H = _shift_along(Ib, H, M, i, r[i], tape)
                rr = [r[m] if m == i else sm.S.Zero for m in range(3)]
                n_ = tape.vec(v3.add(n_, v3.cross(rr, f_)))
        elif single:
            Ib, H, M = _shift_inertia(Ib, H, M, r)
            n_ = v3.add(n_, v3.cross(r, f_))
        Ibp, Hp, Mp = IA[p]
        IA[p] = [
            tape.sym([[Ibp[i][j] + Ib[i][j] for j in range(3)] for i in range(3)]),
            tape.mat([[Hp[i][j] + H[i][j] for j in range(3)] for i in range(3)]),
            tape.sym([[Mp[i][j] + M[i][j] for j in range(3)] for i in range(3)]),
        ]
        pA[p] = [tape.vec(v3.add(pA[p][0], n_)), tape.vec(v3.add(pA[p][1], f_))]
    # Pass 3, base to tip: accelerations; the base accelerates upwards at
    # g (gravity).
    acc_w, acc_v = [zero], [tree.base_acceleration()]
    qdd = [None] * n
    for k, link in enumerate(tree, start=1):
        if link.joint.kind == "free":
            # I^A a = -p^A: the root's acceleration (the ground's, -g,
            # included), then its speed rates.
            aw, av = _root_acceleration(IA[k], pA[k], tape)
            acc_w.append(aw)
            acc_v.append(av)
            qdd[k - 1] = _root_rates(
                aw, av, w[k], v[k], rot_q[k], rot_c[k], tree.gravity, tape
            )
            continue
        p = link.parent
        ap_w, ap_v = acc_w[p], acc_v[p]
        r = arm[k]
        aw, av = ap_w, v3.add(ap_v, v3.cross(ap_w, r))
        aw, av = rot_c[k].tvec(aw), rot_c[k].tvec(av)
        if rot_q[k] is not None:
            aw, av = rot_q[k].tvec(aw), rot_q[k].tvec(av)
        aw = tape.vec(v3.add(aw, cw[k]))
        av = tape.vec(v3.add(av, cv[k]))
        qdd[k - 1] = tape.let(invD[k] * (uu[k] - v3.dot(U[k], aw + av)))
        aw = tape.vec(v3.add(aw, link.joint.angular_velocity(qdd[k - 1])))
        av = tape.vec(v3.add(av, link.joint.linear_velocity(qdd[k - 1])))
        acc_w.append(aw)
        acc_v.append(av)
    outputs = [
        x for rates in qdd for x in (rates if isinstance(rates, list) else [rates])
    ]
    return _pruned(tape.symbols, tape.definitions, outputs)


# ----------------------------------------------------------------------
# A floating root
# ----------------------------------------------------------------------
def _quaternion_matrix(quat, tape):
    """Joint-frame components of the root frame's axes from its unit
    quaternion (w, x, y, z): ``1 - 2 (y^2 + z^2)``, ... (the form of
    :meth:`eomcompare.systems.joint_tree.FreeFlyerJoint.rotation`), 12
    multiplications."""
    w, x, y, z = quat
    x2, y2, z2 = tape.let(2 * x), tape.let(2 * y), tape.let(2 * z)
    xx, yy, zz = tape.let(x * x2), tape.let(y * y2), tape.let(z * z2)
    xy, xz, yz = tape.let(x * y2), tape.let(x * z2), tape.let(y * z2)
    wx, wy, wz = tape.let(w * x2), tape.let(w * y2), tape.let(w * z2)
    return tape.mat(
        [
            [1 - yy - zz, xy - wz, xz + wy],
            [xy + wz, 1 - xx - zz, yz - wx],
            [xz - wy, yz + wx, 1 - xx - yy],
        ]
    )


def _ldl_solve(A, b, tape):
    """x with A x = b, A symmetric positive definite (lists), by A = L D
    L^T on the tape: one division per pivot, structural zeros skipped."""
    n = len(b)
    L = [[sm.S.Zero] * n for _ in range(n)]
    W = [[sm.S.Zero] * n for _ in range(n)]  # W[i][j] = L[i][j] D[j]
    inv = [sm.S.Zero] * n
    for j in range(n):
        for i in range(j, n):
            W[i][j] = tape.let(A[i][j] - v3.dot(W[i][:j], L[j][:j]))
        inv[j] = tape.let(1 / W[j][j])
        for i in range(j + 1, n):
            L[i][j] = tape.let(v3.product(W[i][j], inv[j]))
    y: list = []
    for i in range(n):
        y.append(tape.let(b[i] - v3.dot(L[i][:i], y)))
    x = [sm.S.Zero] * n
    for i in reversed(range(n)):
        tail = v3.dot([L[m][i] for m in range(i + 1, n)], x[i + 1 :])
        x[i] = tape.let(v3.product(y[i], inv[i]) - tail)
    return x


def _root_acceleration(IA, pA, tape):
    """The free root's spatial acceleration (angular, linear; body
    components, the ground's -g included), the solution of
    ``I^A a = -p^A`` (no wrench crosses a free joint), by
    :func:`_ldl_solve`, the linear rows first."""
    Ib, H, M = IA
    full = [[None] * 6 for _ in range(6)]
    for i in range(3):
        for j in range(3):
            full[i][j] = Ib[i][j]
            full[i][j + 3] = full[j + 3][i] = H[i][j]
            full[i + 3][j + 3] = M[i][j]
    order = [3, 4, 5, 0, 1, 2]
    p = list(pA[0]) + list(pA[1])
    x = _ldl_solve(
        [[full[i][j] for j in order] for i in order], [-p[i] for i in order], tape
    )
    a = [sm.S.Zero] * 6
    for pos, i in enumerate(order):
        a[i] = x[pos]
    return a[:3], a[3:]


def _root_rates(aw, av, wk, vk, Rq, Rc, gravity, tape):
    """The root's speed rates from its spatial acceleration (aw, av) with
    the ground's -g in it: w' = aw; the origin's acceleration in the body
    is av + w x v (v: its velocity, body components) less the ground's
    -g, so in joint-frame components v' = C (av + w x v) + g."""
    acc = tape.vec(v3.add(av, v3.cross(wk, vk)))
    g_joint = Rc.tvec(list(gravity))
    vdot = v3.add(Rq.vec(acc), g_joint)
    return [tape.let(x) for x in list(aw) + vdot]


def _pruned(symbols, definitions, outputs) -> Assignments:
    """The assignments the outputs need (a rotation's shared products, for
    one, go unused when nothing is turned by it)."""
    index = {s: i for i, s in enumerate(symbols)}
    needed = set()
    stack = [x for e in outputs for x in sm.sympify(e).free_symbols if x in index]
    while stack:
        x = stack.pop()
        if x in needed:
            continue
        needed.add(x)
        stack.extend(y for y in definitions[index[x]].free_symbols if y in index)
    keep = [i for i in range(len(symbols)) if symbols[i] in needed]
    return Assignments(
        tuple(symbols[i] for i in keep),
        tuple(definitions[i] for i in keep),
        tuple(outputs),
    )


@register
class KaneArticulated(Formulation):
    """Kane's equations of an unconstrained joint tree solved tip to base
    by the articulated-body recursion: the explicit form u' = forcing (the
    mass matrix the identity), O(n) operations.

    Only for unconstrained trees of revolute and prismatic joints, on the
    ground or on a free root (a floating base), declared by
    :func:`eomcompare.systems.declare_tree` (URDF robots, the Denavit-Hartenberg
    arms, ``spatial_chain``, ``from_urdf(..., floating_base=True)``) with no loads but the tree's own (gravity at
    the mass centres, joint damping), no prescribed motions and no
    auxiliary speeds; every other system is refused with the reason
    (:func:`check_joint_tree`).

    The recursion is published as ``extras["assignments"]`` (an evaluation
    order of the forcing, which the operation counts and the compiled
    backend take); the forcing itself is a graph of shared subtrees,
    exponentially large as a tree, so walk it only with memoised functions
    (cse, :func:`eomcompare.symbolic.calculus.substitute`), never ``count_ops``,
    ``subs`` or ``simplify``.

    Parameters
    ----------
    count_ops : bool
        See :class:`~eomcompare.formulations.base.Formulation`.
    """

    name = "kane_articulated"
    peer = "sympy_kane"
    version = "1"
    summary = "Kane's equations by the articulated-body recursion (joint trees)"
    handles_holonomic = False
    handles_nonholonomic = False
    handles_rheonomic = False
    uses_multipliers = False
    needs_tree = True
    in_default_comparison = False

    def check_supported(self, system) -> None:
        # The joint tree first: its reasons are the specific ones.
        check_joint_tree(system, self.name)
        super().check_supported(system)

    def _derive(self, ms, stage) -> Derivation:
        with stage("articulated_body"):
            assigned = articulated_body_accelerations(ms)
        with stage("assembly"):
            forcing = sm.Matrix(assigned.substituted())
        n = len(ms.speeds)
        return speed_form(ms, sm.eye(n), forcing, {"assignments": assigned})
