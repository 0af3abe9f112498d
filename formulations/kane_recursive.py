"""Kane's equations of a joint tree evaluated recursively in body frames:
inverse dynamics without the mass matrix.

For a tree of one-degree-of-freedom joints (the systems of
:func:`eomcompare.systems.declare_tree`: URDF robots, the Denavit-Hartenberg arms,
``spatial_chain``) with the joint rates as generalized speeds, Kane's
equation of speed r, ``F_r + F*_r = 0``, sums the partial velocity of every
body outboard of joint r dotted with that body's resultant.  Since the
partial (angular) velocity of joint r is one twist shared by all those
bodies, the sum is the joint axis dotted with the resultant force (prismatic
joint) or moment about the joint (revolute joint) of everything outboard,
accumulated from the tips inwards.  With every vector in components of the
body it belongs to (body-fixed unit vectors, as Kane & Levinson (1983) use
for the Stanford arm) each step is a constant rotation and one turn about a
coordinate axis, so

    tau = M u' - f

costs O(n) operations instead of the O(n^2) entries of ``M`` (and the
O(n^3) of ``M`` times ``u'`` after substitution).  Gravity enters as the
base's upward acceleration g (the loads ``declare_tree`` puts at the mass
centres), joint damping as ``c u``, joint armature (MuJoCo's) as
``J u'``.

Parameter-only quantities are formed as such, so that a count by the
literature's convention (:mod:`eomcompare.bench.literature_counts`) sets them apart:
each body's first moment ``m c`` and its inertia about the joint origin,
``I_O = I_G + m (|c|^2 1 - c c^T)``.

The equations are the same as :class:`eomcompare.formulations.kane.Kane`'s, arranged
for evaluation; ``tests/systems/test_robots_kane_recursive.py`` checks them
against ``M u' - f`` of every own formulation and against Pinocchio's
``rnea``.
"""

from __future__ import annotations

import functools

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.frames import add, cross, matmul, scale
from eomcompare.systems.joint_tree import BodyInertia

from .base import UnsupportedSystemError

__all__ = [
    "joint_tree",
    "inverse_dynamics",
    "origin_inertia",
    "recursive_kinematics",
    "tree_record",
]


def joint_tree(ms):
    """The :class:`eomcompare.systems.urdf.JointSpec` tuple that declared ``ms``
    (see :func:`eomcompare.systems.declare_tree`), or None for any other system."""
    return getattr(ms, "joint_tree", None)


def tree_record(ms, who="recursive inverse dynamics"):
    """The :class:`eomcompare.systems.joint_tree.JointTree` of ``ms`` (one
    record per link, with the declaration's gravity), or
    :class:`UnsupportedSystemError` naming ``who`` needs one."""
    tree = getattr(ms, "tree", None)
    if tree is None:
        raise UnsupportedSystemError(
            f"{ms.name}: {who} needs a joint tree "
            "(systems.declare_tree: from_urdf, dh_system, spatial_chain)"
        )
    if tree.floating:
        raise UnsupportedSystemError(
            f"{ms.name}: {who} needs a fixed-base joint tree; this one has a "
            "free root (kane_articulated takes it)"
        )
    return tree


def origin_inertia(spec):
    """``(m, m c, I_O)`` of a :class:`~eomcompare.systems.urdf.JointSpec`'s body in its
    frame: mass, first moment about the body origin and the inertia tensor
    about the origin, ``I_O = I_G + m (|c|^2 1 - c c^T)`` (the parameters in
    which the dynamics is linear; :meth:`BodyInertia.at_origin`)."""
    return BodyInertia(spec.mass, tuple(spec.com), tuple(spec.inertia)).at_origin()


def _col(v):
    return sm.Matrix(v)


def _sum(*columns):
    """The sum of 3 x 1 columns, entry by entry (frames.add)."""
    return functools.reduce(add, columns)


def recursive_kinematics(ms, accelerations=None):
    """The forward pass of :func:`inverse_dynamics`: per body (index 0 the
    ground) its angular velocity ``w``, angular acceleration ``al`` and the
    acceleration ``aO`` of its origin with the base accelerating upwards at
    g (gravity), in body components, and the parent-to-body rotation ``E``
    and origin ``arm`` in the parent, as a tuple ``(w, al, aO, E, arm)``.

    Computed once, it serves several backward passes with different
    inertia (:func:`eomcompare.formulations.regressor.inverse_dynamics_regressor`:
    one per standard parameter).  Arguments and errors as
    :func:`inverse_dynamics`'s.
    """
    tree = tree_record(ms)
    q, u = list(ms.coordinates), list(ms.speeds)
    n = len(tree)
    if accelerations is None:
        accelerations = [x.diff(me.dynamicsymbols._t) for x in u]
    accelerations = list(accelerations)
    if len(accelerations) != n:
        raise ValueError(
            f"accelerations must have {n} entries (one per speed), not "
            f"{len(accelerations)}"
        )
    # Forward pass: angular velocity w, angular acceleration al and the
    # acceleration aO of the body origin, in body components; the base
    # accelerates against gravity.  The joint's rates S q', S q'' enter
    # through its model (systems.joint_tree).
    w = [sm.zeros(3, 1)]
    al = [sm.zeros(3, 1)]
    aO = [_col(tree.base_acceleration())]
    E, arm = [None], [None]  # parent-to-body rotation; origin in parent
    for k, link in enumerate(tree, start=1):
        p, joint = link.parent, link.joint
        R, off = sm.Matrix(link.rotation), sm.Matrix(link.offset)
        wp, alp = w[p], al[p]
        # Acceleration of the joint point P (fixed in the parent).
        aP = _sum(aO[p], cross(alp, off), cross(wp, cross(wp, off)))
        Ek = link.to_parent(q[k - 1]).T
        wJ = matmul(Ek, wp)
        w_rel = _col(joint.angular_velocity(u[k - 1]))
        v_rel = _col(joint.linear_velocity(u[k - 1]))
        d = _col(joint.translation(q[k - 1]))
        wk = add(wJ, w_rel)
        alk = _sum(
            matmul(Ek, alp),
            _col(joint.angular_velocity(accelerations[k - 1])),
            cross(wJ, w_rel),
        )
        # The origin moves along a prismatic joint: its rate, Coriolis
        # and the turning parent's terms (zero for a revolute joint).
        aOk = _sum(
            matmul(Ek, aP),
            _col(joint.linear_velocity(accelerations[k - 1])),
            scale(2, cross(wk, v_rel)),
            cross(alk, d),
            cross(wk, cross(wk, d)),
        )
        w.append(wk)
        al.append(alk)
        aO.append(aOk)
        E.append(Ek)
        arm.append(add(off, R * d))
    return w, al, aO, E, arm


def inverse_dynamics(ms, accelerations=None, *, inertia=None, kinematics=None):
    """Joint forces ``tau = M u' - f`` of a joint tree, by Kane's equations
    evaluated recursively in body frames (see the module).

    Parameters
    ----------
    ms : MechanicalSystem
        A system declared by :func:`eomcompare.systems.declare_tree` (URDF robots, the
        Denavit-Hartenberg arms, ``spatial_chain``).
    accelerations : sequence of symbols or expressions, optional
        The speed rates ``u'`` (q'' for these systems), one per speed;
        ``ms.speeds`` differentiated by default.
    inertia : sequence of (m, mc, I_O), optional
        Per body, its mass, first moment (3-vector) and inertia tensor
        about its origin (3 x 3), in its frame, in place of the
        declaration's (:func:`origin_inertia` of each spec by default):
        :func:`eomcompare.formulations.regressor.inverse_dynamics_regressor` passes
        symbols here, in which ``tau`` is linear.
    kinematics : tuple, optional
        :func:`recursive_kinematics` of ``ms`` for these accelerations,
        when already computed.

    Returns
    -------
    sympy.Matrix
        n x 1, in (t, q, u, u') and the parameters: the generalized force
        each joint must supply (torque about a revolute axis, force along a
        prismatic one).

    Raises
    ------
    UnsupportedSystemError
        When ``ms`` was not declared as a joint tree.
    ValueError
        When ``accelerations`` has not one entry per speed.
    """
    tree = tree_record(ms)
    u = list(ms.speeds)
    if accelerations is None:
        accelerations = [x.diff(me.dynamicsymbols._t) for x in u]
    if kinematics is None:
        kinematics = recursive_kinematics(ms, accelerations)
    n = len(tree)
    w, al, aO, E, arm = kinematics
    # Resultants of each body about its origin, in body components: the
    # inertia about the origin and the first moment are parameter-only.
    f = [None] + [sm.zeros(3, 1) for _ in tree]
    nO = [None] + [sm.zeros(3, 1) for _ in tree]
    if inertia is None:
        inertia = [link.inertia.at_origin() for link in tree]
    elif len(inertia) != n:
        raise ValueError(
            f"inertia must have {n} entries (one per body), not {len(inertia)}"
        )
    for k, (m, mc, IO) in enumerate(inertia, start=1):
        mc, IO = sm.Matrix(mc), sm.Matrix(IO)
        wk, alk = w[k], al[k]
        f[k] = _sum(scale(m, aO[k]), cross(alk, mc), cross(wk, cross(wk, mc)))
        nO[k] = _sum(matmul(IO, alk), cross(wk, matmul(IO, wk)), cross(mc, aO[k]))
    # Backward pass: add each body's resultant to its parent's, brought to
    # the parent's origin and components; the joint's equation is S^T of
    # it (the axis component of the moment or of the force).
    tau = [sm.S.Zero] * n
    for k in range(n, 0, -1):
        link = tree.links[k - 1]
        fk, nk = f[k], nO[k]
        tau[k - 1] = link.joint.generalized_force(nk, fk)
        if link.damping is not None:
            tau[k - 1] += link.damping * u[k - 1]
        if link.armature is not None:
            tau[k - 1] += link.armature * accelerations[k - 1]
        p = link.parent
        if p:
            Et = E[k].T
            fp = matmul(Et, fk)
            f[p] = add(f[p], fp)
            nO[p] = _sum(nO[p], matmul(Et, nk), cross(arm[k], fp))
    return sm.Matrix(tau)
