"""Floating-base URDF robots (``from_urdf(..., floating_base=True)``) and
the state conversions to and from Pinocchio's conventions for every
robot from URDF.

Floating base
-------------
The root link and the links fixed to it (through ``fixed`` joints, merged
as for any body) become one free body on a
:class:`eomcompare.systems.free_joint.FreeJoint` in the ground frame: seven
coordinates, its quaternion ``(w, x, y, z)`` and the root link's origin,
six speeds, the body angular velocity and the origin's velocity measured
in the ground frame; the other joints follow, in Pinocchio's order.  The
joint names (``options["joints"]``) start with ``root_joint``, the name
Pinocchio gives its free-flyer.

Pinocchio's conventions (``pin.JointModelFreeFlyer``)
----------------------------------------------------
``q`` holds the position then the quaternion ``(x, y, z, w)``; ``v`` the
linear velocity of the root's origin then the angular velocity, both
measured in the body frame; ``a = v'`` (the time derivative of those
components).  A continuous joint's ``q`` is ``(cos, sin)`` of its angle.
So, with R the body's rotation matrix, ``v_lin = R^T (x, y, z)'`` and the
project's ``v' = R (a_lin + w x v_lin)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .errors import DeclarationError
from .free_joint import quaternion_to_matrix

__all__ = ["PinocchioStates", "floating_specs"]

ROOT_JOINT = "root_joint"


def floating_specs(root_inertial, root_name, specs, inertial_entries, spec_class):
    """``specs`` of a fixed-base tree with the ground body made a free body
    (the first spec): the others' bodies and parents shifted by one.

    ``root_inertial`` is ``(mass, com, inertia)`` of the root link and the
    links fixed to it, or None; ``inertial_entries(k, m, c, I)`` gives a
    spec's entries; ``spec_class`` is :class:`eomcompare.systems.urdf.JointSpec`."""
    if root_inertial is None or root_inertial[0] <= 0:
        raise DeclarationError(
            f"link {root_name!r} (the floating base) and the links fixed to "
            f"it have no <inertial> mass; a free body needs its mass and "
            f"inertia"
        )
    import sympy as sm

    m, c, I = inertial_entries(0, *root_inertial)
    root = spec_class(
        joint=ROOT_JOINT,
        body=root_name,
        kind="free",
        parent=0,
        rotation=sm.ImmutableMatrix(sm.eye(3)),
        offset=sm.ImmutableMatrix([0, 0, 0]),
        axis=sm.ImmutableMatrix([0, 0, 1]),
        mass=m,
        com=tuple(c),
        inertia=tuple(I),
        initial=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    )
    return [root] + [dataclasses.replace(s, parent=s.parent + 1) for s in specs]


@dataclass(frozen=True)
class PinocchioStates:
    """``ms.to_pinocchio(q, u) -> (q, v)`` and ``ms.from_pinocchio(q, v, a)
    -> (q, u, u')`` of a robot from URDF (see the module docstring).

    ``kinds`` holds one entry per project joint in order: ``"free"``,
    ``"continuous"`` or ``"scalar"`` (revolute, prismatic)."""

    kinds: tuple

    def _sizes(self):
        nq = sum(7 if k == "free" else 1 for k in self.kinds)
        nu = sum(6 if k == "free" else 1 for k in self.kinds)
        npq = sum(
            7 if k == "free" else 2 if k == "continuous" else 1 for k in self.kinds
        )
        return nq, nu, npq, nu

    def to_pinocchio(self, q, u):
        """Pinocchio's ``(q, v)`` of the project's state ``(q, u)``."""
        nq, nu, _, _ = self._sizes()
        q, u = _entries(q, "q", nq), _entries(u, "u", nu)
        out_q, out_v, iq, iu = [], [], 0, 0
        for kind in self.kinds:
            if kind == "free":
                quat, pos = q[iq : iq + 4], q[iq + 4 : iq + 7]
                R = quaternion_to_matrix(quat)
                out_q += [*pos, quat[1], quat[2], quat[3], quat[0]]
                out_v += [*(R.T @ u[iu + 3 : iu + 6]), *u[iu : iu + 3]]
                iq, iu = iq + 7, iu + 6
            else:
                if kind == "continuous":
                    out_q += [np.cos(q[iq]), np.sin(q[iq])]
                else:
                    out_q.append(q[iq])
                out_v.append(u[iu])
                iq, iu = iq + 1, iu + 1
        return np.array(out_q), np.array(out_v)

    def from_pinocchio(self, q, v, a):
        """The project's ``(q, u, u')`` of Pinocchio's ``(q, v, a)``."""
        _, _, npq, nv = self._sizes()
        q = _entries(q, "q", npq)
        v, a = _entries(v, "v", nv), _entries(a, "a", nv)
        out_q, out_u, out_ud, iq, iv = [], [], [], 0, 0
        for kind in self.kinds:
            if kind == "free":
                pos, xyzw = q[iq : iq + 3], q[iq + 3 : iq + 7]
                quat = np.array([xyzw[3], *xyzw[:3]])
                R = quaternion_to_matrix(quat)
                v_lin, w = v[iv : iv + 3], v[iv + 3 : iv + 6]
                a_lin, a_w = a[iv : iv + 3], a[iv + 3 : iv + 6]
                out_q += [*quat, *pos]
                out_u += [*w, *(R @ v_lin)]
                out_ud += [*a_w, *(R @ (a_lin + np.cross(w, v_lin)))]
                iq, iv = iq + 7, iv + 6
            else:
                if kind == "continuous":
                    out_q.append(np.arctan2(q[iq + 1], q[iq]))
                    iq += 2
                else:
                    out_q.append(q[iq])
                    iq += 1
                out_u.append(v[iv])
                out_ud.append(a[iv])
                iv += 1
        return np.array(out_q), np.array(out_u), np.array(out_ud)


def _entries(x, what, n):
    x = np.asarray(x, dtype=float).ravel()
    if x.shape != (n,):
        raise ValueError(f"{what} must have {n} entries, not {x.size}")
    return x
