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

import sympy as sm
import sympy.physics.mechanics as me

from .base import UnsupportedSystemError

__all__ = [
    "joint_tree",
    "inverse_dynamics",
    "origin_inertia",
    "recursive_kinematics",
]


def joint_tree(ms):
    """The :class:`eomcompare.systems.urdf.JointSpec` tuple that declared ``ms``
    (see :func:`eomcompare.systems.declare_tree`), or None for any other system."""
    return getattr(ms, "joint_tree", None)


def _rodrigues(a, angle):
    """Components in the joint frame of the axes of a frame turned by
    ``angle`` about the unit vector ``a`` (joint-frame components), as
    sympy's ``orientnew("Axis")`` builds it; exact for a coordinate axis."""
    c, s = sm.cos(angle), sm.sin(angle)
    a = sm.Matrix(a)
    ax = sm.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return c * sm.eye(3) + s * ax + (1 - c) * (a * a.T)


def _cross(a, b):
    return sm.Matrix(
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    )


def _is_zero(v):
    return all(x == 0 for x in v)


def _mul(A, v):
    """A v, entry by entry, skipping zero entries (no 0*x terms)."""
    return sm.Matrix(
        [
            sm.Add(*[A[i, j] * v[j] for j in range(3) if A[i, j] != 0 and v[j] != 0])
            for i in range(3)
        ]
    )


def _cross_or_zero(a, b):
    if _is_zero(a) or _is_zero(b):
        return sm.zeros(3, 1)
    return _cross(a, b)


def origin_inertia(spec):
    """``(m, m c, I_O)`` of a :class:`~eomcompare.systems.urdf.JointSpec`'s body in its
    frame: mass, first moment about the body origin and the inertia tensor
    about the origin, ``I_O = I_G + m (|c|^2 1 - c c^T)`` (the parameters in
    which the dynamics is linear)."""
    m, c = spec.mass, sm.Matrix(spec.com)
    xx, yy, zz, xy, yz, zx = spec.inertia
    IG = sm.Matrix([[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]])
    return m, m * c, IG + m * ((c.T * c)[0] * sm.eye(3) - c * c.T)


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
    specs = joint_tree(ms)
    if specs is None:
        raise UnsupportedSystemError(
            f"{ms.name}: recursive inverse dynamics needs a joint tree "
            "(systems.declare_tree: from_urdf, dh_system, spatial_chain)"
        )
    q, u = list(ms.coordinates), list(ms.speeds)
    n = len(specs)
    if accelerations is None:
        accelerations = [x.diff(me.dynamicsymbols._t) for x in u]
    accelerations = list(accelerations)
    if len(accelerations) != n:
        raise ValueError(
            f"accelerations must have {n} entries (one per speed), not "
            f"{len(accelerations)}"
        )
    g = next(s for s in ms.parameters if s.name == "g")
    # Forward pass: angular velocity w, angular acceleration al and the
    # acceleration aO of the body origin, in body components; the base
    # accelerates upwards at g (gravity).
    w = [sm.zeros(3, 1)]
    al = [sm.zeros(3, 1)]
    aO = [sm.Matrix([0, 0, g])]
    E, arm = [None], [None]  # parent-to-body rotation; origin in parent
    for k, s in enumerate(specs, start=1):
        p = s.parent
        R, off, a = sm.Matrix(s.rotation), sm.Matrix(s.offset), sm.Matrix(s.axis)
        wp, alp = w[p], al[p]
        # Acceleration of the joint point P (fixed in the parent).
        aP = (
            aO[p]
            + _cross_or_zero(alp, off)
            + _cross_or_zero(wp, _cross_or_zero(wp, off))
        )
        if s.kind == "revolute":
            Ek = (R * _rodrigues(a, q[k - 1])).T
            wJ = _mul(Ek, wp)
            wk = wJ + u[k - 1] * a
            alk = (
                _mul(Ek, alp)
                + accelerations[k - 1] * a
                + _cross_or_zero(wJ, u[k - 1] * a)
            )
            aOk = _mul(Ek, aP)
            arm_k = off
        else:  # prismatic: the joint frame translates along a
            Ek = R.T
            wk = _mul(Ek, wp)
            alk = _mul(Ek, alp)
            d = q[k - 1] * a
            aOk = (
                _mul(Ek, aP)
                + accelerations[k - 1] * a
                + 2 * _cross_or_zero(wk, u[k - 1] * a)
                + _cross_or_zero(alk, d)
                + _cross_or_zero(wk, _cross_or_zero(wk, d))
            )
            arm_k = off + R * d
        w.append(sm.Matrix(wk))
        al.append(sm.Matrix(alk))
        aO.append(sm.Matrix(aOk))
        E.append(Ek)
        arm.append(arm_k)
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
    if kinematics is None:
        kinematics = recursive_kinematics(ms, accelerations)
    specs = joint_tree(ms)
    u = list(ms.speeds)
    n = len(specs)
    w, al, aO, E, arm = kinematics
    # Resultants of each body about its origin, in body components: the
    # inertia about the origin and the first moment are parameter-only.
    f = [None] + [sm.zeros(3, 1) for _ in specs]
    nO = [None] + [sm.zeros(3, 1) for _ in specs]
    if inertia is None:
        inertia = [origin_inertia(s) for s in specs]
    elif len(inertia) != n:
        raise ValueError(
            f"inertia must have {n} entries (one per body), not {len(inertia)}"
        )
    for k, (m, mc, IO) in enumerate(inertia, start=1):
        mc, IO = sm.Matrix(mc), sm.Matrix(IO)
        wk, alk = w[k], al[k]
        f[k] = (
            m * aO[k]
            + _cross_or_zero(alk, mc)
            + _cross_or_zero(wk, _cross_or_zero(wk, mc))
        )
        nO[k] = (
            _mul(IO, alk) + _cross_or_zero(wk, _mul(IO, wk)) + _cross_or_zero(mc, aO[k])
        )
    # Backward pass: add each body's resultant to its parent's, brought to
    # the parent's origin and components; the joint's equation is the axis
    # component.
    tau = [sm.S.Zero] * n
    for k in range(n, 0, -1):
        s = specs[k - 1]
        a = sm.Matrix(s.axis)
        fk, nk = sm.Matrix(f[k]), sm.Matrix(nO[k])
        if s.kind == "revolute":
            tau[k - 1] = a.dot(nk)
        else:
            tau[k - 1] = a.dot(fk)
        if s.damping is not None:
            tau[k - 1] += s.damping * u[k - 1]
        if s.armature is not None:
            tau[k - 1] += s.armature * accelerations[k - 1]
        p = s.parent
        if p:
            Et = E[k].T
            fp = _mul(Et, fk)
            f[p] = f[p] + fp
            nO[p] = nO[p] + _mul(Et, nk) + _cross_or_zero(arm[k], fp)
    return sm.Matrix(tau)
