"""Exact moves of inertia between the links of a joint tree for the
customised Newton-Euler model (:mod:`eomcompare.formulations.newton_euler`):
each changes which link carries a part of the inertia, never ``tau``
(Khalil & Dombre's groupings of the base parameters, and the freedom they
leave), and is taken where it makes the recursion cheaper.  The links are
those of the tree's record (:class:`eomcompare.systems.joint_tree.Link`)."""

from __future__ import annotations

import sympy as sm

from eomcompare.symbolic import lists3 as v3

__all__: list[str] = []


def _is_signed_permutation(A):
    return (
        all(sorted(abs(A[i, j]) for j in range(3)) == [0, 0, 1] for i in range(3))
        and not A.free_symbols
    )


def _fold_masses(links, inertia, P):
    """Each revolute link's mass carried into its parent, from the tips
    inwards, where that adds no nonzero parameter the parent lacks.  The
    link's origin is fixed in the parent (at ``P``), so its mass term
    ``M (vd_p + U_p P)`` is that of a point mass of the parent: the
    parent's ``M += M_k``, ``MS += M_k P``, ``J += M_k (|P|^2 1 - P P^T)``,
    all constants (Khalil & Dombre's grouping of the masses)."""
    out = [(m, list(mc), sm.Matrix(J)) for m, mc, J in inertia]
    for k in range(len(links), 0, -1):
        s = links[k - 1]
        p = s.parent
        m, mc, J = out[k - 1]
        if not s.joint.turns or not p or not v3.nz(m):
            continue
        Pk = sm.Matrix(P[k])
        dJ = m * ((Pk.T * Pk)[0] * sm.eye(3) - Pk * Pk.T)
        dMS = [m * x for x in Pk]
        mp, mcp, Jp = out[p - 1]
        if any(v3.nz(d) and not v3.nz(x) for d, x in zip(dMS, mcp)) or any(
            v3.nz(dJ[i, j]) and not v3.nz(Jp[i, j]) for i in range(3) for j in range(3)
        ):
            continue
        out[p - 1] = (mp + m, v3.add(mcp, dMS), Jp + dJ)
        out[k - 1] = (sm.S.Zero, mc, J)
    return out


def _fold_prismatic_inertia(links, inertia):
    """Each prismatic link's inertia tensor carried into its parent, where
    that adds no nonzero entry the parent lacks: the link turns with its
    parent, so ``J_k wd_k + w_k x J_k w_k`` is the parent's ``R J_k R^T``
    term seen in the link's frame, a couple (no force), the same about
    either origin (Khalil & Dombre's grouping of a prismatic link's
    inertia into its parent; ``R`` the joint frame's constant
    rotation)."""
    out = [(m, list(mc), sm.Matrix(J)) for m, mc, J in inertia]
    for k in range(len(links), 0, -1):
        s = links[k - 1]
        p = s.parent
        m, mc, J = out[k - 1]
        if s.joint.turns or not p or not any(v3.nz(x) for x in J):
            continue
        R = sm.Matrix(s.rotation)
        dJ = (R * J * R.T).applyfunc(sm.expand)
        mp, mcp, Jp = out[p - 1]
        if any(
            v3.nz(dJ[i, j]) and not v3.nz(Jp[i, j]) for i in range(3) for j in range(3)
        ):
            continue
        out[p - 1] = (mp, mcp, (Jp + dJ).applyfunc(sm.expand))
        out[k - 1] = (m, mc, sm.zeros(3, 3))
    return out


def _axial_moments(links, inertia, P, turned=()):
    """A revolute parent's first moment along a child's joint axis moved
    into the child (its ``MZ``), where the child's moment already needs
    U's column along its axis (products of inertia ``XZ``, ``YZ``): the
    first moment ``mu a`` at the child's origin ``P`` is in the parent's
    terms ``MS += mu a``, ``J += mu (2 (P . a) 1 - P a^T - a P^T)`` (Khalil
    & Dombre's grouping of ``MZ_j``, run backwards).  The parent then needs
    no U entry of that column's diagonal.  Skipped where the parent's J
    would gain a nonzero entry it lacks, and for the children in
    ``turned`` (leaves whose frame :func:`_leaf_offsets` turns) without a
    first moment along their axis: their first moment across the axis has
    one entry, their force one column of U, and the axial moment would
    add a second (with the terms ``MZ x vd`` across the axis)."""
    out = [(m, list(mc), sm.Matrix(J)) for m, mc, J in inertia]
    for k in range(1, len(links) + 1):
        s = links[k - 1]
        p = s.parent
        R = sm.Matrix(s.rotation)
        if not p or not s.joint.turns or not links[p - 1].joint.turns:
            continue
        if not _is_signed_permutation(R):
            continue
        m, mc, J = out[k - 1]
        i = [abs(x) for x in s.joint.axis].index(1)
        if k in turned and not v3.nz(mc[i]):
            continue
        across = [j for j in range(3) if j != i]
        # The child's moment needs U's axis column (XZ, YZ) and its first
        # moment the acceleration across the axis, whatever it carries.
        if not all(v3.nz(J[i, j]) for j in across) or not any(
            v3.nz(mc[j]) for j in across
        ):
            continue
        a = list(R * sm.Matrix(s.joint.axis))
        mp, mcp, Jp = out[p - 1]
        mu = sm.expand(sum(x * y for x, y in zip(a, mcp)))
        if mu == 0:
            continue
        Pk, ak = sm.Matrix(P[k]), sm.Matrix(a)
        dJ = mu * (2 * (Pk.T * ak)[0] * sm.eye(3) - Pk * ak.T - ak * Pk.T)
        if any(
            v3.nz(dJ[r, c]) and not v3.nz(Jp[r, c]) for r in range(3) for c in range(3)
        ):
            continue
        mcp = [sm.expand(x - mu * y) for x, y in zip(mcp, a)]
        out[p - 1] = (mp, mcp, (Jp - dJ).applyfunc(sm.expand))
        mc = list(mc)
        mc[i] = sm.expand(mc[i] + mu * s.joint.axis[i])
        out[k - 1] = (m, mc, J)
    return out


def _balance_axes(links, inertia, P, chosen=None):
    """Each revolute link's inertia balanced about its joint axis a:
    ``lam (1 - a a^T)`` added to it and taken from its first revolute
    ancestor (through prismatic links, which turn with it), from the tips
    inwards, with ``lam`` such that the axis's moment of inertia is the sum
    of the other two (``ZZ = XX + YY``: the second moment ``Sigma_zz =
    (XX + YY - ZZ) / 2`` zero).

    The inertia of a body symmetric about the joint axis moves freely
    between the two links the joint connects (Khalil & Dombre's grouping
    of ``YY_j``, which takes ``lam = -YY_j``): its moment is the same in
    either and has no component along the axis; a link of the base loses
    it.  With ``ZZ = XX + YY`` the moment's components across the axis
    are one term each, ``XX (wd_x + w_y w_z) = XX U_zy`` and ``-YY U_zx``,
    in place of ``XX wd_x + (ZZ - YY) w_y w_z`` and ``(XX - ZZ) w_x w_z``
    (:func:`_moment`).  Skipped where the ancestor would gain a product
    of inertia it lacks (a rotation between them that is not a signed
    permutation).

    ``chosen(p, D, Jp)``, when given, may choose ``lam`` for the ancestor
    instead (p its index, ``Jp`` its inertia so far, ``-lam D`` what it
    receives): taken for a link whose moment across its axis is formed
    anyway (an entry of its inertia there), where it gives a value, and no
    move where that is 0 (``newton_euler_closed_form._axisymmetric_balance``
    chooses the ``lam`` that leaves a two-rate ancestor symmetric about
    its axis)."""
    n = len(links)
    out = [(m, list(mc), sm.Matrix(J)) for m, mc, J in inertia]
    for k in range(n, 0, -1):
        s = links[k - 1]
        m, mc, J = out[k - 1]
        if not s.joint.turns:
            continue
        i = [abs(x) for x in s.joint.axis].index(1)
        j, l = (i + 1) % 3, (i + 2) % 3
        perp = sm.eye(3)
        perp[i, i] = 0
        R = sm.Matrix(s.rotation)
        D = R * perp * R.T
        p = s.parent
        while p and not links[p - 1].joint.turns:
            Rp = sm.Matrix(links[p - 1].rotation)
            D = Rp * D * Rp.T
            p = links[p - 1].parent
        across = any(
            v3.nz(J[r, c]) for r in range(3) for c in range(3) if (r, c) != (i, i)
        )
        lam = chosen(p, D, out[p - 1][2]) if chosen and p and across else None
        if lam is None:
            lam = sm.expand((J[i, i] - J[j, j] - J[l, l]) / 2)
            # U's columns the link needs anyway: its force U MS, its
            # children's origin accelerations U P.
            used = [
                v3.nz(mc[c])
                or any(
                    v3.nz(P[h][c])
                    for h in range(k + 1, n + 1)
                    if links[h - 1].parent == k
                )
                for c in range(3)
            ]
            if not (
                any(v3.nz(J[r, c]) for r in range(3) for c in range(3) if r != c)
                or (v3.nz(J[j, j]) and v3.nz(J[l, l]))
                or used[j]
                or used[l]
            ):
                # A principal-axes link with a zero moment across the axis
                # whose U columns across it serve nothing else (no first
                # moment, no child's origin there): ``XX wd_x + ZZ w_y
                # w_z`` and ``(XX - ZZ) w_x w_z`` need neither U_zy nor
                # U_zx.
                continue
        if lam == 0:
            continue
        if p:
            mp, mcp, Jp = out[p - 1]
            if any(
                v3.nz(D[r, c]) and not v3.nz(Jp[r, c])
                for r in range(3)
                for c in range(3)
                if r != c
            ):
                continue
            out[p - 1] = (mp, mcp, (Jp - lam * D).applyfunc(sm.expand))
        out[k - 1] = (m, mc, (J + lam * perp).applyfunc(sm.expand))
    return out


def _leaf_offsets(links, inertia, children):
    """``{k: (beta, B)}`` for each revolute link k without children whose
    first moment has two free parameters across its joint axis a (the
    ``MX``, ``MY`` of a z axis): the link's frame turned about a by the
    constant angle that puts the first moment on the first of the two
    (``tan phi = MY / MX``), the joint's angle read as ``q + beta``
    (``beta = +-phi``, the sign of a) and ``B`` the frame turn (link
    components of the turned frame's axes).

    The frame of a link without children is free to turn about its axis
    (no child's constant rotation is written in it): the joint's
    rotation ``Rot(a, q) Rot(a, beta)`` and the inertia ``B^T MS``,
    ``B^T J B`` in the turned frame, parameter-only functions of the
    given ones (``sqrt(MX^2 + MY^2)``, ``atan2``: once per parameter set);
    ``tau`` is the same.  The first moment's second entry is then zero:
    the force ``U MS`` and the moment ``MS x vd`` lose its terms, for one
    addition (the angle ``q + beta``) per evaluation.  Bare symbols only:
    values of the parameters that make both entries zero at once are then
    outside the model's generic case (``atan2(0, 0)``), as a base
    parameter set's are."""
    out = {}
    for k, s in enumerate(links, start=1):
        if children[k] or not s.joint.turns:
            continue
        p = s.parent
        if (
            p
            and links[p - 1].joint.turns
            and tuple(links[p - 1].joint.axis) == tuple(s.joint.axis)
            and sm.Matrix(s.rotation) == sm.eye(3)
        ):
            # Parallel to its parent: turned by the summed angle
            # (newton_euler._angle_sum), with the parent's frame.
            continue
        axis = [sm.Integer(x) for x in s.joint.axis]
        i = [abs(x) for x in axis].index(1)
        b, c = (i + 1) % 3, (i + 2) % 3
        mc = list(inertia[k - 1][1])
        if not all(isinstance(mc[j], sm.Symbol) for j in (b, c)):
            continue
        r = sm.sqrt(mc[b] ** 2 + mc[c] ** 2)
        cb, sb = mc[b] / r, mc[c] / r
        B = sm.eye(3)
        B[b, b], B[b, c], B[c, b], B[c, c] = cb, -sb, sb, cb
        out[k] = (axis[i] * sm.atan2(mc[c], mc[b]), B)
    return out


def _turn_frame(inertia, B):
    """``(M, MS, J)`` in the frame whose axes are B's columns."""
    m, mc, J = inertia
    mc = [sm.factor(x) for x in v3.mtv(B, list(mc))]
    J = (B.T * sm.Matrix(J) * B).applyfunc(sm.factor)
    return m, mc, J
