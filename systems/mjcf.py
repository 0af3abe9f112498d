"""Robots from MJCF (MuJoCo's XML format): a fixed-base tree of hinge and
slide joints, declared as a :class:`MechanicalSystem`.

>>> from eomcompare.systems import from_mjcf
>>> ms = from_mjcf('''
... <mujoco model="arm">
...   <worldbody>
...     <body name="rod">
...       <joint name="hinge" type="hinge" axis="1 0 0"/>
...       <inertial pos="0 0 -0.5" mass="1" diaginertia="0.1 0.1 0.01"/>
...     </body>
...   </worldbody>
... </mujoco>''')
>>> ms.coordinates, ms.options["joints"]
((q1(t),), ('hinge',))

Compiler
--------
The model is compiled by MuJoCo itself (``mujoco.MjModel``) and the
declaration is read from the compiled arrays (``body_parentid``,
``body_pos``, ``body_quat``, ``body_mass``, ``body_inertia``,
``body_ipos``, ``body_iquat``, ``jnt_type``, ``jnt_axis``, ``jnt_pos``,
``jnt_bodyid``, ``qpos0``, ``dof_armature``, ``dof_damping``,
``opt.gravity``), never from the XML by hand: MuJoCo's defaults classes,
its angle units, its inertias computed from geoms and meshes
(``inertiafromgeom``) and its frame conventions are then the ones MuJoCo
simulates.  What the compiler refuses is a :class:`DeclarationError`.

Conventions
-----------
* The world body is the ground frame ``N`` with origin ``O``.  Gravity is
  the model's ``opt.gravity``: ``N`` is the world frame turned so that
  gravity is ``g`` along ``-N.z`` (the identity for MuJoCo's default
  ``0 0 -9.81``); ``g`` is its magnitude (parameter ``g``).
* One coordinate per hinge or slide joint, in MuJoCo's joint order (the
  order of ``qpos`` and ``qvel``): ``q{k} = qpos - qpos0``, the joint's
  angle (displacement) from its reference ``ref``, positive about (along)
  ``jnt_axis`` by the right-hand rule; ``u{k} = q{k}' = qvel``.  For these
  joints the state conversions ``ms.to_mujoco(q, u) -> (qpos, qvel)`` and
  ``ms.from_mujoco(qpos, qvel, qacc) -> (q, u, u')`` only add or subtract
  ``qpos0``.
* A body with several joints has them applied in order, as MuJoCo does:
  each joint moves a massless intermediate body (named
  ``{body}[{i}]``), the last one carries the body's inertia.  A hinge
  turns the body about ``jnt_axis`` through the anchor ``jnt_pos``; the
  project's body frame ``B{k}`` is MuJoCo's body frame with its origin
  moved to the anchor.  A slide moves it along ``jnt_axis``.
* Bodies without joints are welded to their parent: their masses and
  inertias are merged into the body they are fixed to (bodies fixed to the
  world are part of the ground).
* Joint armature ``J`` (``dof_armature``) is kept: MuJoCo adds it to the
  diagonal of its mass matrix, i.e. ``J q''`` in the joint's own equation.
  It is declared as a rotor of axial inertia ``J`` turning with ``q`` about
  a ground-fixed axis (a particle of mass ``J`` for a slide), whose kinetic
  energy ``J q'^2 / 2`` every formulation takes in (see
  :class:`eomcompare.systems.urdf.JointSpec`).  A motor rotor mounted on the parent
  body would also couple the parent's rotation; MuJoCo leaves that out,
  and so does this rotor.
* Not modelled: contacts, joint limits, actuators, tendons, equality
  constraints, friction loss, joint springs, fluid forces and gravity
  compensation; joint damping (``dof_damping``) only with
  ``damping=True``.  ``strict=True`` refuses a model that has any of them;
  by default they are left out, as the oracle
  (:mod:`eomcompare.references.mujoco_oracle`) disables them in MuJoCo.
* A free joint (a body of the world) is the project's free joint
  (:class:`eomcompare.systems.free_joint.FreeJoint`) in the world frame: seven
  coordinates, the body's quaternion ``(w, x, y, z)`` then its position
  (MuJoCo's ``qpos`` holds the position first), six speeds, the angular
  velocity in the body frame then the origin's velocity in the world frame
  (MuJoCo's ``qvel`` holds the linear velocity first).  Its coordinates are
  the absolute pose, so its initial state is MuJoCo's ``qpos0`` (the
  body's ``pos`` and ``quat``).  Armature on a free joint is refused.
* A ball joint turns its body about the anchor ``jnt_pos`` by a unit
  quaternion (:func:`eomcompare.systems.free_joint.ball_child`): four
  coordinates, MuJoCo's ``qpos`` ``(w, x, y, z)`` of the body frame in
  the parent's, and three speeds, the angular velocity relative to the
  parent measured in the body frame (MuJoCo's ``qvel``); its initial
  state is ``qpos0``.  Armature or damping on a ball joint is refused.

Rounded numbers (``snap``) and symbolic inertia are as in
:func:`eomcompare.systems.from_urdf`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import sympy as sm

from .base import DeclarationError, MechanicalSystem
from .urdf import (
    JointSpec,
    _compose,
    _length_tol,
    _snap_matrix,
    combine_inertias,
    declare_tree,
    inertial_entries,
)

__all__ = ["from_mjcf", "MujocoStates"]


def _mujoco():
    try:
        import mujoco
    except ImportError as exc:  # pragma: no cover - a dependency of 'mujoco'
        raise ImportError(
            "from_mjcf needs MuJoCo: pip install 'eomcompare[mujoco]'"
        ) from exc
    return mujoco


def compile_mjcf(source):
    """``(model, text, path)``: MuJoCo's compiled model of ``source`` (a
    path or the MJCF text), the text, and the absolute path (None for
    text; a file is compiled from its path so that its includes and
    meshes are found)."""
    mujoco = _mujoco()
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and "<" not in source
    ):
        path = os.path.abspath(os.fspath(source))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no MJCF file {path!r}")
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    elif isinstance(source, str):
        path, text = None, source
    elif isinstance(source, bytes):
        path, text = None, source.decode(errors="replace")
    else:
        raise TypeError(
            f"source must be a path or the MJCF text, not {type(source).__name__}"
        )
    try:
        if path is None:
            model = mujoco.MjModel.from_xml_string(text)
        else:
            model = mujoco.MjModel.from_xml_path(path)
    except Exception as exc:
        raise DeclarationError(f"cannot compile the MJCF: {exc}") from exc
    return model, text, path


def _name(mujoco, model, kind, i, fallback):
    return mujoco.mj_id2name(model, kind, i) or f"{fallback}{i}"


def _quat_matrix(mujoco, quat):
    """Parent components of the axes of a frame turned by MuJoCo's unit
    quaternion ``quat`` (w, x, y, z)."""
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, np.asarray(quat, dtype=float))
    return R.reshape(3, 3)


def _up_rotation(gravity):
    """A rotation R (N components of the world axes) with R g = -|g| N.z;
    the identity when gravity is along -z or zero."""
    norm = float(np.linalg.norm(gravity))
    if norm == 0:
        return np.eye(3)
    down = np.asarray(gravity, dtype=float) / norm
    target = np.array([0.0, 0.0, -1.0])
    v, c = np.cross(down, target), float(down @ target)
    if np.linalg.norm(v) < 1e-15:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + K + K @ K / (1 + c)


def _floats(T):
    R, p = T
    return (
        np.array(R.evalf(), dtype=float),
        np.array(p.evalf(), dtype=float).ravel(),
    )


def _strict_reasons(mujoco, model, damping):
    """What the model has that the declaration leaves out, one phrase each."""
    reasons = []

    def named(kind, ids, fallback):
        return [_name(mujoco, model, kind, int(i), fallback) for i in ids]

    obj = mujoco.mjtObj
    limited = np.flatnonzero(model.jnt_limited)
    if limited.size:
        reasons.append(f"limits on joints {named(obj.mjOBJ_JOINT, limited, 'joint')}")
    if model.nu:
        reasons.append(f"{model.nu} actuators")
    if model.ntendon:
        reasons.append(f"{model.ntendon} tendons")
    if model.neq:
        reasons.append(f"{model.neq} equality constraints")
    if model.npair:
        reasons.append(f"{model.npair} contact pairs")
    # Geoms on different bodies (not both on the ground, not a body and
    # its parent other than the world, which MuJoCo filters) whose masks
    # let them collide.
    weld = model.body_weldid
    parent = model.body_parentid
    bodies = model.geom_bodyid
    for a in range(model.ngeom):
        for b in range(a + 1, model.ngeom):
            wa, wb = weld[bodies[a]], weld[bodies[b]]
            pa, pb = weld[parent[wa]], weld[parent[wb]]
            if wa == wb or (pa == wb and wb) or (pb == wa and wa):
                continue
            if (model.geom_contype[a] & model.geom_conaffinity[b]) or (
                model.geom_contype[b] & model.geom_conaffinity[a]
            ):
                ga, gb = named(obj.mjOBJ_GEOM, (a, b), "geom")
                reasons.append(f"contacts (geoms {ga!r} and {gb!r} may collide)")
                break
        else:
            continue
        break
    frictional = np.flatnonzero(model.dof_frictionloss)
    if frictional.size:
        joints = model.dof_jntid[frictional]
        reasons.append(
            f"friction loss on joints {named(obj.mjOBJ_JOINT, joints, 'joint')}"
        )
    springs = np.flatnonzero(model.jnt_stiffness)
    if springs.size:
        reasons.append(f"springs on joints {named(obj.mjOBJ_JOINT, springs, 'joint')}")
    damped = np.flatnonzero(model.dof_damping)
    if damped.size and not damping:
        joints = model.dof_jntid[damped]
        reasons.append(
            f"damping on joints {named(obj.mjOBJ_JOINT, joints, 'joint')} "
            f"(kept with damping=True)"
        )
    if model.opt.density or model.opt.viscosity:
        reasons.append("fluid forces (opt.density, opt.viscosity)")
    comp = np.flatnonzero(model.body_gravcomp)
    if comp.size:
        reasons.append(
            f"gravity compensation on bodies {named(obj.mjOBJ_BODY, comp, 'body')}"
        )
    return reasons


@dataclass(frozen=True)
class MujocoStates:
    """The state conversions of a system from :func:`from_mjcf`, attached
    to it as ``ms.to_mujoco`` and ``ms.from_mujoco``.

    For hinge and slide joints MuJoCo's ``qpos`` and ``qvel`` hold one
    entry per joint in the order of the coordinates: ``qpos = q + qpos0``
    (``qpos0`` the joints' ``ref``), ``qvel = u`` and ``qacc = u'``.  A
    free joint's seven ``qpos`` entries are its position then its
    quaternion ``(w, x, y, z)``, its six ``qvel`` entries the linear
    velocity (world frame) then the angular velocity (body frame); the
    project's free joint (:class:`eomcompare.systems.free_joint.FreeJoint`) orders
    them quaternion first and angular velocity first, in the same frames,
    so the conversion only reorders (``qacc`` is the time derivative of
    ``qvel``, as ``u'`` is of ``u``).  A ball joint's four ``qpos`` and
    three ``qvel`` entries are its coordinates and speeds as they are.

    ``layout`` holds, per MuJoCo joint, ``(type, qpos address, qvel
    address, first coordinate, first speed)``; empty for a model of hinge
    and slide joints only (one entry per joint, in order).
    """

    qpos0: tuple
    layout: tuple = ()
    n_coordinates: int = 0
    n_speeds: int = 0

    def _joints(self):
        if self.layout:
            return self.layout
        return tuple(("hinge", i, i, i, i) for i in range(len(self.qpos0)))

    def _sizes(self):
        if self.layout:
            return (
                len(self.qpos0),
                self.n_speeds_mujoco,
                self.n_coordinates,
                self.n_speeds,
            )
        n = len(self.qpos0)
        return n, n, n, n

    @property
    def n_speeds_mujoco(self):
        return sum({"free": 6, "ball": 3}.get(j[0], 1) for j in self._joints())

    def to_mujoco(self, q, u):
        """``(qpos, qvel)`` of the state ``(q, u)``."""
        nq, nv, nc, ns = self._sizes()
        q, u = _entries(q, "q", nc), _entries(u, "u", ns)
        qpos, qvel = np.array(self.qpos0, dtype=float), np.zeros(nv)
        for kind, qa, da, iq, iu in self._joints():
            if kind == "free":
                qpos[qa : qa + 3] = q[iq + 4 : iq + 7]
                qpos[qa + 3 : qa + 7] = q[iq : iq + 4]
                qvel[da : da + 3] = u[iu + 3 : iu + 6]
                qvel[da + 3 : da + 6] = u[iu : iu + 3]
            elif kind == "ball":
                qpos[qa : qa + 4] = q[iq : iq + 4]
                qvel[da : da + 3] = u[iu : iu + 3]
            else:
                qpos[qa] += q[iq]
                qvel[da] = u[iu]
        return qpos, qvel

    def from_mujoco(self, qpos, qvel, qacc):
        """``(q, u, u')`` of MuJoCo's ``(qpos, qvel, qacc)``."""
        nq, nv, nc, ns = self._sizes()
        qpos = _entries(qpos, "qpos", nq)
        qvel, qacc = _entries(qvel, "qvel", nv), _entries(qacc, "qacc", nv)
        q, u, ud = np.zeros(nc), np.zeros(ns), np.zeros(ns)
        for kind, qa, da, iq, iu in self._joints():
            if kind == "free":
                q[iq : iq + 4] = qpos[qa + 3 : qa + 7]
                q[iq + 4 : iq + 7] = qpos[qa : qa + 3]
                for out, x in ((u, qvel), (ud, qacc)):
                    out[iu : iu + 3] = x[da + 3 : da + 6]
                    out[iu + 3 : iu + 6] = x[da : da + 3]
            elif kind == "ball":
                q[iq : iq + 4] = qpos[qa : qa + 4]
                u[iu : iu + 3], ud[iu : iu + 3] = qvel[da : da + 3], qacc[da : da + 3]
            else:
                q[iq] = qpos[qa] - self.qpos0[qa]
                u[iu], ud[iu] = qvel[da], qacc[da]
        return q, u, ud


def _refuse_armature(model, dof, n, damping, kind, joint, body):
    """A :class:`DeclarationError` naming the armature (and, with
    ``damping``, the damping) on the ``n`` degrees of freedom from ``dof``
    of a free or ball joint, which the declaration does not model."""
    extra = [
        f"{what} {float(np.max(np.abs(x[dof : dof + n]))):g}"
        for what, x in (
            ("armature", model.dof_armature),
            ("damping", model.dof_damping if damping else [0] * n),
        )
        if np.any(x[dof : dof + n])
    ]
    if extra:
        raise DeclarationError(
            f"{kind} joint {joint!r} (body {body!r}) has "
            f"{' and '.join(extra)}: not modelled on a {kind} joint"
        )


def _entries(x, what, n):
    x = np.asarray(x, dtype=float).ravel()
    if x.shape != (n,):
        raise ValueError(f"{what} must have {n} entries, not {x.size}")
    return x


def from_mjcf(
    source,
    *,
    name=None,
    symbolic_inertia=False,
    snap=1e-9,
    damping=False,
    strict=False,
) -> MechanicalSystem:
    """The :class:`MechanicalSystem` of a fixed-base MJCF model, read from
    MuJoCo's compiled model (see the module docstring for the conventions).

    Parameters
    ----------
    source : str or os.PathLike
        A path to an MJCF file, or the MJCF text itself (a string holding
        ``<``).
    name : str, optional
        The system's name; default: the model's name.
    symbolic_inertia, snap
        As in :func:`eomcompare.systems.from_urdf`.
    damping : bool, optional
        Add each joint's ``dof_damping`` ``b`` as ``-b q'`` (default
        False: MuJoCo's damping is left out, as the oracle disables it).
    strict : bool, optional
        Refuse a model with contacts, limits, actuators, tendons, equality
        constraints, friction loss, springs, damping (unless
        ``damping=True``), fluid forces or gravity compensation, none of
        which the declaration models (default False: they are left out).

    Returns
    -------
    MechanicalSystem
        With ``options["family"] == "mjcf"``, ``options["joints"]`` the
        joint names in coordinate order, ``options["joint_types"]``
        (``"hinge"``/``"slide"``), ``options["mjcf"]`` the text read,
        ``options["mjcf_path"]`` the file (None for text), and the state
        conversions ``ms.to_mujoco`` / ``ms.from_mujoco``
        (:class:`MujocoStates`).

    Raises
    ------
    DeclarationError
        For a model MuJoCo does not compile, armature or damping on a
        free or ball joint (naming it), a model without joints, and with
        ``strict`` a model with any of the features above (naming them).
    FileNotFoundError
        For a path that is not a file.
    TypeError
        For a source that is neither a path nor text.
    """
    for flag, value in (
        ("symbolic_inertia", symbolic_inertia),
        ("damping", damping),
        ("strict", strict),
    ):
        if not isinstance(value, bool):
            raise TypeError(f"{flag} must be True or False")
    if isinstance(snap, bool) or not isinstance(snap, (int, float)):
        raise TypeError(f"snap must be a number, not {type(snap).__name__}")
    if not 0 <= snap < 0.1:
        raise ValueError(f"snap must be in [0, 0.1), not {snap!r}")
    mujoco = _mujoco()
    model, text, path = compile_mjcf(source)
    obj, jt = mujoco.mjtObj, mujoco.mjtJoint
    # The <mujoco model="..."> attribute is the first name MuJoCo stores.
    model_name = name or bytes(model.names).split(b"\0", 1)[0].decode() or "mjcf"
    # MuJoCo's enums compare equal to plain ints only, not to numpy's.
    jtypes = [int(x) for x in model.jnt_type]
    if model.njnt == 0:
        raise DeclarationError(f"model {model_name!r} has no joint: nothing moves")
    if strict:
        reasons = _strict_reasons(mujoco, model, damping)
        if reasons:
            raise DeclarationError(
                f"model {model_name!r} has what the declaration does not "
                f"model (strict=True): {'; '.join(reasons)}"
            )
    up = _up_rotation(model.opt.gravity)
    # Snapped only as a whole: a gravity tilted by a small angle (gymnasium's
    # cart-poles have 1e-5 m/s^2 along x) keeps its exact rotation.
    if np.max(np.abs(up - np.round(up))) <= snap:
        up = _snap_matrix(up, snap)
    else:
        up = sm.ImmutableMatrix(3, 3, [sm.Float(float(x)) for x in up.ravel()])
    identity = sm.ImmutableMatrix(sm.eye(3)), sm.ImmutableMatrix([0, 0, 0])
    # For each MuJoCo body: the project body carrying it (0: the ground)
    # and the placement of its frame in that body's frame.
    attach = {0: (0, (up, sm.ImmutableMatrix([0, 0, 0])))}
    pending, parts = [], {}
    for b in range(1, model.nbody):
        carrier, T = attach[int(model.body_parentid[b])]
        R = _snap_matrix(_quat_matrix(mujoco, model.body_quat[b]), snap)
        T = _compose(T, (R, _snap_matrix(model.body_pos[b], _length_tol(snap))))
        body = _name(mujoco, model, obj.mjOBJ_BODY, b, "body")
        first, count = int(model.body_jntadr[b]), int(model.body_jntnum[b])
        for i, j in enumerate(range(first, first + count)):
            joint = _name(mujoco, model, obj.mjOBJ_JOINT, j, "joint")
            dof = int(model.jnt_dofadr[j])
            anchor = _snap_matrix(model.jnt_pos[j], _length_tol(snap))
            if jtypes[j] == int(jt.mjJNT_FREE):
                # The body's pose in the world is the joint's coordinates:
                # the joint frame is the world's, the body frame the free
                # joint's own (MuJoCo's free joint has no anchor or axis).
                _refuse_armature(model, dof, 6, damping, "free", joint, body)
                adr = int(model.jnt_qposadr[j])
                pose = [float(x) for x in model.qpos0[adr : adr + 7]]
                pending.append(
                    dict(
                        joint=joint,
                        body=body,
                        kind="free",
                        parent=carrier,
                        rotation=attach[0][1][0],
                        offset=attach[0][1][1],
                        axis=sm.ImmutableMatrix([0, 0, 1]),
                        initial=tuple(pose[3:] + pose[:3]),
                        mujoco_type="free",
                    )
                )
                carrier, T = len(pending), identity
                continue
            if jtypes[j] == int(jt.mjJNT_BALL):
                # Turns the body about the anchor, as a hinge does, by a
                # quaternion (systems.free_joint.ball_child).
                _refuse_armature(model, dof, 3, damping, "ball", joint, body)
                adr = int(model.jnt_qposadr[j])
                Tj = _compose(T, (identity[0], anchor))
                pending.append(
                    dict(
                        joint=joint,
                        body=body if i == count - 1 else f"{body}[{i}]",
                        kind="ball",
                        parent=carrier,
                        rotation=Tj[0],
                        offset=Tj[1],
                        axis=sm.ImmutableMatrix([0, 0, 1]),
                        initial=tuple(float(x) for x in model.qpos0[adr : adr + 4]),
                        mujoco_type="ball",
                    )
                )
                T = (identity[0], sm.ImmutableMatrix(-anchor))
                carrier = len(pending)
                continue
            if jtypes[j] == int(jt.mjJNT_HINGE):
                Tj = _compose(T, (identity[0], anchor))
                T = (identity[0], sm.ImmutableMatrix(-anchor))
                kind = "revolute"
            else:
                Tj, T, kind = T, identity, "prismatic"
            armature = float(model.dof_armature[dof])
            b_damp = float(model.dof_damping[dof])
            pending.append(
                dict(
                    joint=joint,
                    body=body if i == count - 1 else f"{body}[{i}]",
                    kind=kind,
                    parent=carrier,
                    rotation=Tj[0],
                    offset=Tj[1],
                    axis=_snap_matrix(model.jnt_axis[j], snap),
                    damping=sm.Float(b_damp) if damping and b_damp else None,
                    armature=sm.Float(armature) if armature else None,
                    mujoco_type="hinge" if kind == "revolute" else "slide",
                )
            )
            carrier = len(pending)
        attach[b] = (carrier, T)
        if carrier and model.body_mass[b] > 0:
            Rt, pt = _floats(T)
            Ri = Rt @ _quat_matrix(mujoco, model.body_iquat[b])
            parts.setdefault(carrier, []).append(
                (
                    float(model.body_mass[b]),
                    pt + Rt @ model.body_ipos[b],
                    Ri @ np.diag(model.body_inertia[b]) @ Ri.T,
                )
            )
    specs, params = [], {}
    for k, spec in enumerate(pending, start=1):
        inertial = combine_inertias(parts.get(k, []))
        if inertial is None:  # a body's intermediate frame: massless
            m, c, I = sm.S.Zero, (sm.S.Zero,) * 3, (sm.S.Zero,) * 6
        else:
            m, c, I = inertial_entries(k, *inertial, symbolic_inertia, snap, params)
        spec = dict(spec)
        spec.pop("mujoco_type")
        specs.append(JointSpec(mass=m, com=c, inertia=I, **spec))
    types = tuple(s["mujoco_type"] for s in pending)
    lines = [
        f"Model {model_name!r} from MJCF: {len(specs)} joints, "
        f"gravity {float(np.linalg.norm(model.opt.gravity)):g} m/s^2.",
        "coordinate  joint  type  moves body",
    ]
    lines += [
        f"q{k}  {s.joint}  {t}  {s.body}"
        for k, (s, t) in enumerate(zip(specs, types), 1)
    ]
    ms = declare_tree(
        model_name,
        specs,
        params,
        description="\n".join(lines),
        gravity=float(np.linalg.norm(model.opt.gravity)),
        options={
            "family": "mjcf",
            "joints": tuple(s.joint for s in specs),
            "joint_types": types,
            "mjcf": text,
            "mjcf_path": path,
            "symbolic_inertia": symbolic_inertia,
            "snap": float(snap),
            "damping": damping,
        },
    )
    layout, iq, iu = [], 0, 0
    for j, jtype in enumerate(jtypes):
        kind = {int(jt.mjJNT_FREE): "free", int(jt.mjJNT_BALL): "ball"}.get(
            jtype, "scalar"
        )
        layout.append(
            (kind, int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j]), iq, iu)
        )
        iq += {"free": 7, "ball": 4}.get(kind, 1)
        iu += {"free": 6, "ball": 3}.get(kind, 1)
    states = MujocoStates(
        tuple(float(x) for x in model.qpos0),
        tuple(layout) if {"free", "ball"} & set(types) else (),
        iq,
        iu,
    )
    ms.to_mujoco = states.to_mujoco
    ms.from_mujoco = states.from_mujoco
    return ms
