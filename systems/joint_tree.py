"""One record per link of a tree of one-coordinate joints, fixed-base or
on a free root, for the recursive tree algorithms
(:mod:`eomcompare.formulations.kane_recursive`,
:mod:`eomcompare.formulations.articulated_body`, the customised Newton-Euler
recursion and the regressor).

:func:`eomcompare.systems.urdf.declare_tree` (``from_urdf``, the
Denavit-Hartenberg arms, ``spatial_chain``) sets ``ms.tree``, a
:class:`JointTree` built from its :class:`~eomcompare.systems.urdf.JointSpec`
tuple (still ``ms.joint_tree`` for a fixed-base tree), with the gravity
of the declaration.  A floating tree (``from_urdf(...,
floating_base=True)``: a free root, :class:`FreeFlyerJoint`, then
one-coordinate joints) has ``ms.tree`` only; the articulated-body
recursion takes it, the other recursions refuse it
(:func:`eomcompare.formulations.kane_recursive.tree_record`).

The record is Pinocchio's ``Model`` in small:

* :class:`JointTree` ~ ``pinocchio.Model``: the links in order, parents
  before children, index 0 the ground (Pinocchio's ``universe`` joint 0);
  ``Link.parent`` ~ ``model.parents[i]``; ``JointTree.gravity`` ~
  ``model.gravity.linear`` (ground components, ``(0, 0, -g)`` for
  ``declare_tree``).
* ``Link.rotation``, ``Link.offset`` ~ ``model.jointPlacements[i]`` (the
  SE3 placement of the joint frame in the parent body's frame: its
  ``rotation`` and ``translation``).
* ``Link.joint`` ~ ``model.joints[i]`` (a ``JointModel``):
  :class:`RevoluteJoint` ~ ``JointModelRevoluteUnaligned`` (``RX``,
  ``RY``, ``RZ`` for a coordinate axis), :class:`PrismaticJoint` ~
  ``JointModelPrismaticUnaligned``.  What is particular to a joint type
  sits behind it as in Pinocchio's ``JointData`` after ``calc``: the
  motion subspace ``S`` (:meth:`~RevoluteJoint.motion_subspace`, angular
  part first as this package's spatial vectors, where Pinocchio puts the
  linear part first), the joint velocity ``S qdot``
  (:meth:`~RevoluteJoint.angular_velocity`,
  :meth:`~RevoluteJoint.linear_velocity`; also ``S qddot``), the joint
  transform at q (``jdata.M``: :meth:`~RevoluteJoint.rotation`,
  :meth:`~RevoluteJoint.translation`) and ``S^T`` of a wrench
  (:meth:`~RevoluteJoint.generalized_force`, the last line of the RNEA
  backward pass).
* ``Link.inertia`` (:class:`BodyInertia`) ~ ``model.inertias[i]``
  (``pinocchio.Inertia``: mass, lever = mass centre, rotational inertia
  about it, in the body frame); :meth:`BodyInertia.at_origin` gives the
  blocks about the body origin, ``(m, m c, I_O)``, as ``Inertia.matrix()``
  holds them.

Vectors are lists of three entries; products by a structural zero are not
formed (:mod:`eomcompare.symbolic.lists3`), so an algorithm written once for
``S`` gives for each joint type the expressions of a pass written for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import sympy as sm

from eomcompare.symbolic import lists3 as v3

from .base import DeclarationError

__all__ = [
    "BodyInertia",
    "FreeFlyerJoint",
    "JointTree",
    "Link",
    "PrismaticJoint",
    "RevoluteJoint",
    "axis_rotation_matrix",
    "joint_model",
]

_ZERO = (sm.S.Zero,) * 3


def axis_rotation_matrix(a, angle) -> sm.Matrix:
    """Components in a frame J of the axes of the frame turned from J by
    ``angle`` about the unit vector ``a`` (J components), Rodrigues'
    formula ``c 1 + s [a]x + (1 - c) a a^T``: the matrix sympy's
    ``J.orientnew(name, "Axis", (angle, a))`` builds as ``J.dcm(B)``;
    exact for a coordinate axis."""
    c, s = sm.cos(angle), sm.sin(angle)
    a = sm.Matrix(a)
    ax = sm.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return c * sm.eye(3) + s * ax + (1 - c) * (a * a.T)


@dataclass(frozen=True)
class RevoluteJoint:
    """A turn by q about ``axis`` (a unit vector of joint-frame
    components): ``S = (axis, 0)``."""

    axis: tuple
    kind: ClassVar[str] = "revolute"
    #: Whether the body frame turns with q (its rotation depends on q).
    turns: ClassVar[bool] = True
    #: Coordinates and speeds of the joint.
    nq: ClassVar[int] = 1
    nv: ClassVar[int] = 1

    def rotation(self, q) -> sm.Matrix:
        """Joint-frame components of the body frame's axes at q."""
        return axis_rotation_matrix(self.axis, q)

    def translation(self, q, direction=None) -> list:
        """The body origin's displacement from the joint frame's at q:
        none."""
        return list(_ZERO)

    def angular_velocity(self, rate) -> list:
        """The angular part of ``S rate`` (``rate`` q' or q'')."""
        return v3.scale(rate, self.axis)

    def linear_velocity(self, rate) -> list:
        """The linear part of ``S rate``: none."""
        return list(_ZERO)

    def motion_subspace(self) -> tuple[list, list]:
        """``S`` as (angular, linear) 3-vectors, body components."""
        return list(self.axis), list(_ZERO)

    def generalized_force(self, moment, force) -> Any:
        """``S^T (n, f)``: the moment's component along the axis."""
        return v3.dot(self.axis, moment)


@dataclass(frozen=True)
class PrismaticJoint:
    """A translation by q along ``axis`` (a unit vector of joint-frame
    components), the body frame parallel to the joint frame:
    ``S = (0, axis)``."""

    axis: tuple
    kind: ClassVar[str] = "prismatic"
    turns: ClassVar[bool] = False
    nq: ClassVar[int] = 1
    nv: ClassVar[int] = 1

    def rotation(self, q) -> sm.Matrix:
        """Joint-frame components of the body frame's axes: the identity."""
        return sm.eye(3)

    def translation(self, q, direction=None) -> list:
        """The body origin's displacement at q, ``q axis``, or ``q
        direction`` for the axis in other components (``direction``: the
        axis in them)."""
        return v3.scale(q, self.axis if direction is None else direction)

    def angular_velocity(self, rate) -> list:
        """The angular part of ``S rate``: none."""
        return list(_ZERO)

    def linear_velocity(self, rate) -> list:
        """The linear part of ``S rate`` (``rate`` q' or q'')."""
        return v3.scale(rate, self.axis)

    def motion_subspace(self) -> tuple[list, list]:
        """``S`` as (angular, linear) 3-vectors, body components."""
        return list(_ZERO), list(self.axis)

    def generalized_force(self, moment, force) -> Any:
        """``S^T (n, f)``: the force's component along the axis."""
        return v3.dot(self.axis, force)


@dataclass(frozen=True)
class FreeFlyerJoint:
    """The free joint of a floating root (Pinocchio's
    ``JointModelFreeFlyer``), as :func:`eomcompare.systems.free_joint.free_root`
    declares it: coordinates ``(qw, qx, qy, qz, x, y, z)``, the unit
    quaternion of the body frame B in the joint frame J (scalar first) and
    the body origin's position in J; speeds ``(wx, wy, wz, vx, vy, vz)``,
    B's angular velocity in B components and the origin's velocity in J
    components (J is fixed in the ground).  Only the root of a tree
    (parent 0, first link) has one."""

    kind: ClassVar[str] = "free"
    turns: ClassVar[bool] = True
    nq: ClassVar[int] = 7
    nv: ClassVar[int] = 6

    def rotation(self, q) -> sm.Matrix:
        """J components of B's axes for the coordinates ``q`` (seven, the
        quaternion first): ``1 - 2 (y^2 + z^2)``, ... (equal on the unit
        sphere to sympy's ``orient_quaternion``)."""
        w, x, y, z = q[:4]
        return sm.Matrix(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        )

    def translation(self, q, direction=None) -> list:
        """The body origin's displacement from the joint frame's origin, J
        components."""
        return list(q[4:7])


#: The joint models by :attr:`JointSpec.kind`.
JOINT_MODELS = {
    "revolute": RevoluteJoint,
    "prismatic": PrismaticJoint,
    "free": FreeFlyerJoint,
}


def joint_model(kind: str, axis) -> RevoluteJoint | PrismaticJoint | FreeFlyerJoint:
    """The joint model of a :class:`~eomcompare.systems.urdf.JointSpec`'s
    ``kind`` and ``axis`` (a free joint has no axis: ``axis`` is
    ignored)."""
    if kind not in JOINT_MODELS:
        raise DeclarationError(
            f"a joint tree's joints are {sorted(JOINT_MODELS)}, not {kind!r}"
        )
    if kind == "free":
        return FreeFlyerJoint()
    return JOINT_MODELS[kind](tuple(sm.Matrix(axis)))


@dataclass(frozen=True)
class BodyInertia:
    """A body's mass, mass centre ``com`` and central inertia ``(xx, yy,
    zz, xy, yz, zx)``, in its frame (Pinocchio's ``Inertia``)."""

    mass: Any
    com: tuple
    central: tuple

    def at_origin(self) -> tuple:
        """``(m, m c, I_O)``: mass, first moment about the body origin and
        the inertia tensor about it, ``I_O = I_G + m (|c|^2 1 - c c^T)``
        (the parameters in which the dynamics is linear)."""
        m, c = self.mass, sm.Matrix(self.com)
        xx, yy, zz, xy, yz, zx = self.central
        IG = sm.Matrix([[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]])
        return m, m * c, IG + m * ((c.T * c)[0] * sm.eye(3) - c * c.T)


@dataclass(frozen=True)
class Link:
    """One joint and the body it moves (see the module for Pinocchio's
    names): ``parent`` (0 the ground), the joint frame's placement in the
    parent body (``rotation``: parent components of its axes; ``offset``:
    its origin), the joint model, the body's inertia, and the joint's
    ``damping`` and ``armature`` (None without); ``spec`` the
    :class:`~eomcompare.systems.urdf.JointSpec` it was read from."""

    name: str
    parent: int
    rotation: sm.ImmutableMatrix
    offset: sm.ImmutableMatrix
    joint: RevoluteJoint | PrismaticJoint | FreeFlyerJoint
    inertia: BodyInertia
    damping: Any = None
    armature: Any = None
    spec: Any = None

    @classmethod
    def from_spec(cls, spec) -> Link:
        return cls(
            name=spec.joint,
            parent=spec.parent,
            rotation=sm.ImmutableMatrix(spec.rotation),
            offset=sm.ImmutableMatrix(spec.offset),
            joint=joint_model(spec.kind, spec.axis),
            inertia=BodyInertia(spec.mass, tuple(spec.com), tuple(spec.inertia)),
            damping=spec.damping,
            armature=spec.armature,
            spec=spec,
        )

    def to_parent(self, q) -> sm.Matrix:
        """Parent components of the body frame's axes at q: the placement's
        rotation times the joint's."""
        R = sm.Matrix(self.rotation)
        return R * self.joint.rotation(q) if self.joint.turns else R

    def origin(self, q) -> list:
        """The body origin in the parent's frame at q: the placement's
        offset plus the joint's translation (``q (R axis)`` for a
        prismatic joint)."""
        direction = v3.mv(self.rotation, self.joint.axis)
        return v3.add(list(self.offset), self.joint.translation(q, direction))


@dataclass(frozen=True)
class JointTree:
    """The links of a joint tree, parents before children, and the gravity
    of the declaration (a ground-components 3-vector, None when the tree
    was given none).  The tree is fixed-base, or :attr:`floating`: its
    first link a free root (:class:`FreeFlyerJoint`, parent 0) and every
    other link a one-coordinate joint."""

    links: tuple
    gravity: tuple | None = None

    @classmethod
    def from_specs(cls, specs, gravity=None) -> JointTree:
        """The record of a :class:`~eomcompare.systems.urdf.JointSpec`
        tuple of revolute and prismatic joints, the first one possibly a
        free root (``kind="free"``); ``gravity`` a 3-vector."""
        links = tuple(Link.from_spec(s) for s in specs)
        for k, link in enumerate(links, start=1):
            if not 0 <= link.parent < k:
                raise DeclarationError(
                    f"joint {link.name!r}: parent body {link.parent} must be "
                    f"declared before body {k}"
                )
            if link.joint.kind == "free" and (k != 1 or link.parent != 0):
                raise DeclarationError(
                    f"joint {link.name!r}: a joint tree's free joint must be "
                    f"its first, on the ground (the floating root)"
                )
        return cls(
            links, None if gravity is None else tuple(sm.sympify(x) for x in gravity)
        )

    def __len__(self) -> int:
        return len(self.links)

    def __iter__(self):
        return iter(self.links)

    @property
    def floating(self) -> bool:
        """Whether the first link is a free root (:class:`FreeFlyerJoint`)."""
        return bool(self.links) and self.links[0].joint.kind == "free"

    def children(self) -> list[list[int]]:
        """Per body (0 the ground), the indices of its children."""
        out: list[list[int]] = [[] for _ in range(len(self.links) + 1)]
        for k, link in enumerate(self.links, start=1):
            out[link.parent].append(k)
        return out

    def base_acceleration(self) -> list:
        """The ground's acceleration that stands in for gravity in a
        recursion (the base accelerating against it): ``-gravity``.

        Raises
        ------
        DeclarationError
            When the tree was declared without gravity.
        """
        if self.gravity is None:
            raise DeclarationError(
                "this joint tree was declared without gravity: give "
                "JointTree.from_specs(specs, gravity=...) its gravity vector"
            )
        return [-x for x in self.gravity]
