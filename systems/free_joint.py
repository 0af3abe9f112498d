"""A free joint for hand-written declarations: a root body floating in the
inertial frame, oriented by a unit quaternion.

Coordinates (7), in this order:

* the quaternion ``(qw, qx, qy, qz)`` of the child frame B in the parent
  frame N, scalar part first (``ReferenceFrame.orient_quaternion``'s
  order and MuJoCo's; Pinocchio stores ``x, y, z, w``);
* the position ``(x, y, z)`` of the joint's origin P from the parent point
  O, measured in N.

Speeds (6), in this order:

* ``(wx, wy, wz)``: the angular velocity of B in N, measured in B (body
  rates, as MuJoCo's ``qvel`` and Pinocchio's ``v`` hold them);
* ``(vx, vy, vz)``: the velocity of P in N, measured in N (MuJoCo's
  convention; Pinocchio measures it in B).

Kinematic equations: ``q' = 1/2 q (x) (0, w)`` (Hamilton product, body
rates) for the quaternion and ``(x, y, z)' = (vx, vy, vz)``.  They keep the
quaternion's norm (``q . q' = 0`` identically), so the declaration has no
constraint: all seven coordinates are independent, states drawn by
``ms.states.random_state`` are scaled back to the unit sphere
(``SystemStates.norm_invariants``), and a formulation that needs one speed
per coordinate adds the unit-norm constraint itself
(:mod:`eomcompare.formulations.redundant_coordinates`).

>>> import sympy.physics.mechanics as me
>>> N = me.ReferenceFrame("N"); O = me.Point("O"); O.set_vel(N, 0)
>>> root = FreeJoint("base", N, O)
>>> [str(c).replace("(t)", "") for c in root.coordinates]
['base_qw', 'base_qx', 'base_qy', 'base_qz', 'base_x', 'base_y', 'base_z']
>>> [str(s).replace("(t)", "") for s in root.speeds]
['base_wx', 'base_wy', 'base_wz', 'base_vx', 'base_vy', 'base_vz']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from .errors import DeclarationError

__all__ = [
    "FreeJoint",
    "quaternion_rates",
    "quaternion_to_matrix",
    "free_root",
    "ball_child",
]


def quaternion_rates(q: Sequence, w: Sequence) -> list:
    """``1/2 q (x) (0, w)``: the rates of the quaternion ``q = (w, x, y, z)``
    of a frame turning at ``w``, measured in that frame."""
    q0, q1, q2, q3 = q
    w1, w2, w3 = w
    return [
        -(q1 * w1 + q2 * w2 + q3 * w3) / 2,
        (q0 * w1 - q3 * w2 + q2 * w3) / 2,
        (q3 * w1 + q0 * w2 - q1 * w3) / 2,
        (-q2 * w1 + q1 * w2 + q0 * w3) / 2,
    ]


def quaternion_to_matrix(q: Sequence[float]) -> np.ndarray:
    """Rotation matrix R (columns: the child's axes measured in the parent)
    of the unit quaternion ``q = (w, x, y, z)``."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


class FreeJoint:
    """Six degrees of freedom between a parent frame and point (N, O) and a
    child frame and point (B, P) it creates.

    Parameters
    ----------
    name : str
        Prefix of the coordinates, speeds, frame and point.
    parent_frame : ReferenceFrame
        N, usually the inertial frame.
    parent_point : Point
        O, fixed in N (its velocity in N must be declared zero).

    Attributes
    ----------
    frame : ReferenceFrame
        B, oriented by :attr:`quaternion` (``orient_quaternion``), angular
        velocity ``wx B.x + wy B.y + wz B.z``.
    origin : Point
        P, at ``x N.x + y N.y + z N.z`` from O, velocity
        ``vx N.x + vy N.y + vz N.z``.  Locate the body's mass centre and
        child joints from it (``v2pt_theory(origin, N, frame)``).
    quaternion, position, angular_velocity, linear_velocity : tuple
        The coordinates and speeds, four, three, three and three.
    coordinates, speeds, kdes : tuple
        In the order stated in the module's docstring.
    """

    def __init__(self, name: str, parent_frame, parent_point) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise DeclarationError(
                f"FreeJoint: the name must be an identifier, not {name!r}"
            )
        if not isinstance(parent_frame, me.ReferenceFrame):
            raise DeclarationError(
                f"FreeJoint {name!r}: parent_frame must be a ReferenceFrame, "
                f"not {type(parent_frame).__name__}"
            )
        if not isinstance(parent_point, me.Point):
            raise DeclarationError(
                f"FreeJoint {name!r}: parent_point must be a Point, not "
                f"{type(parent_point).__name__}"
            )
        self.name = name
        N, O = parent_frame, parent_point
        self.parent_frame, self.parent_point = N, O
        self.quaternion = tuple(
            me.dynamicsymbols(f"{name}_qw {name}_qx {name}_qy {name}_qz")
        )
        self.position = tuple(me.dynamicsymbols(f"{name}_x {name}_y {name}_z"))
        self.angular_velocity = tuple(
            me.dynamicsymbols(f"{name}_wx {name}_wy {name}_wz")
        )
        self.linear_velocity = tuple(
            me.dynamicsymbols(f"{name}_vx {name}_vy {name}_vz")
        )
        B = me.ReferenceFrame(f"{name}_frame")
        B.orient_quaternion(N, self.quaternion)
        wx, wy, wz = self.angular_velocity
        B.set_ang_vel(N, wx * B.x + wy * B.y + wz * B.z)
        x, y, z = self.position
        P = O.locatenew(f"{name}_origin", x * N.x + y * N.y + z * N.z)
        vx, vy, vz = self.linear_velocity
        P.set_vel(N, vx * N.x + vy * N.y + vz * N.z)
        self.frame, self.origin = B, P
        rates = quaternion_rates(self.quaternion, self.angular_velocity)
        self.kdes = tuple(
            [qi.diff() - r for qi, r in zip(self.quaternion, rates)]
            + [xi.diff() - vi for xi, vi in zip(self.position, self.linear_velocity)]
        )

    @property
    def coordinates(self) -> tuple:
        return self.quaternion + self.position

    @property
    def speeds(self) -> tuple:
        return self.angular_velocity + self.linear_velocity

    def add_to(self, system: me.System) -> None:
        """Add the coordinates (all independent), speeds and kinematic
        equations to ``system``."""
        system.add_coordinates(*self.coordinates)
        system.add_speeds(*self.speeds)
        system.add_kdes(*self.kdes)

    def state(
        self,
        quaternion: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
        position: Sequence[float] = (0.0, 0.0, 0.0),
        angular_velocity: Sequence[float] = (0.0, 0.0, 0.0),
        linear_velocity: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> dict:
        """``{coordinate or speed: value}`` for ``initial_state``; the
        quaternion (w, x, y, z) must have unit norm (to 1e-12)."""
        quat = np.asarray(quaternion, dtype=float)
        parts = {
            "quaternion": (quat, 4),
            "position": (position, 3),
            "angular_velocity": (angular_velocity, 3),
            "linear_velocity": (linear_velocity, 3),
        }
        for key, (value, n) in parts.items():
            arr = np.asarray(value, dtype=float)
            if arr.shape != (n,) or not np.all(np.isfinite(arr)):
                raise DeclarationError(
                    f"FreeJoint {self.name!r}: {key} must be {n} finite "
                    f"numbers, not {value!r}"
                )
        if abs(np.linalg.norm(quat) - 1.0) > 1e-12:
            raise DeclarationError(
                f"FreeJoint {self.name!r}: the quaternion {[float(x) for x in quat]} has "
                f"norm {np.linalg.norm(quat):.17g}, not 1"
            )
        values = list(quat) + list(position) + list(angular_velocity)
        values += list(linear_velocity)
        return {s: float(v) for s, v in zip(self.coordinates + self.speeds, values)}

    def __repr__(self) -> str:
        return f"FreeJoint({self.name!r})"


def free_root(k, spec, N, Jf, P, zJ, hP):
    """Body ``k`` on a free joint in the frame ``Jf`` at ``P``, both fixed
    in the ground: ``(B, origin, w, zB, h)`` as ``systems.urdf.declare_tree`` keeps
    them (``B.free_joint`` the :class:`eomcompare.systems.free_joint.FreeJoint`)."""
    if spec.parent != 0:
        raise DeclarationError(
            f"joint {spec.joint!r}: a free joint must join a body to the "
            f"ground (parent 0), not to body {spec.parent}"
        )
    if spec.damping is not None or spec.armature is not None:
        raise DeclarationError(
            f"joint {spec.joint!r}: damping and armature on a free joint are "
            f"not modelled"
        )
    if spec.initial is None or len(spec.initial) != 7:
        raise DeclarationError(
            f"joint {spec.joint!r}: a free joint needs its initial pose "
            f"(qw, qx, qy, qz, x, y, z)"
        )
    prefix = spec.body if spec.body.isidentifier() else f"body{k}"
    joint = FreeJoint(prefix, Jf, P)
    # Jf is fixed in the ground N: the origin's velocity in N is the one in Jf.
    joint.origin.set_vel(N, joint.origin.vel(Jf))
    B = joint.frame
    B.free_joint = joint
    C = sm.Matrix(Jf.dcm(B))
    w = sm.Matrix(joint.angular_velocity)
    pos = sm.Matrix(joint.position)
    return B, joint.origin, w, zJ * C, hP + (zJ * pos)[0]


def ball_child(k, spec, Jf, P, wJ, zJ, hP):
    """Body ``k`` on a ball joint: its frame turned from the joint frame
    ``Jf`` (fixed in the parent body, angular velocity ``wJ`` in its own
    components) by a unit quaternion, about the joint's centre ``P``.

    Coordinates ``(qw, qx, qy, qz)``: the quaternion of the body frame B
    in ``Jf``, scalar part first (MuJoCo's ``qpos`` of a ball joint).
    Speeds ``(wx, wy, wz)``: the angular velocity of B relative to the
    parent, measured in B (MuJoCo's ``qvel``).  Kinematic equations
    ``q' = 1/2 q (x) (0, w)``, as for :class:`FreeJoint`, so the norm is
    kept and the formulations treat the four coordinates as they treat a
    free joint's quaternion.

    Returns ``(B, origin, w, zB, h, coordinates, speeds, kdes, initial)`` as
    ``systems.urdf.declare_tree`` keeps them: ``w`` B's absolute angular
    velocity in B components, ``zB`` the z row of B's orientation in N,
    ``h`` the height of the origin, ``initial`` the state values of the
    coordinates and speeds (the quaternion normalised, at rest).
    """
    if spec.damping is not None or spec.armature is not None:
        raise DeclarationError(
            f"joint {spec.joint!r}: damping and armature on a ball joint are "
            f"not modelled"
        )
    initial = (1.0, 0.0, 0.0, 0.0) if spec.initial is None else spec.initial
    if len(initial) != 4 or abs(float(np.linalg.norm(initial)) - 1.0) > 1e-9:
        raise DeclarationError(
            f"joint {spec.joint!r}: a ball joint's initial orientation must be "
            f"a unit quaternion (qw, qx, qy, qz), not {tuple(initial)!r}"
        )
    prefix = spec.body if spec.body.isidentifier() else f"body{k}"
    quat = tuple(me.dynamicsymbols(f"{prefix}_qw {prefix}_qx {prefix}_qy {prefix}_qz"))
    rates = tuple(me.dynamicsymbols(f"{prefix}_wx {prefix}_wy {prefix}_wz"))
    B = me.ReferenceFrame(f"B{k}")
    B.orient_quaternion(Jf, quat)
    B.set_ang_vel(Jf, rates[0] * B.x + rates[1] * B.y + rates[2] * B.z)
    C = sm.Matrix(Jf.dcm(B))  # Jf components of B's axes
    w = C.T * sm.Matrix(wJ) + sm.Matrix(rates)
    kdes = tuple(qi.diff() - r for qi, r in zip(quat, quaternion_rates(quat, rates)))
    norm = float(np.linalg.norm(initial))
    values = {c: float(v) / norm for c, v in zip(quat, initial)}
    values |= {s: 0.0 for s in rates}
    return B, P, w, zJ * C, hP, quat, rates, kdes, values
