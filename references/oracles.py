"""External references for the formulations: Pinocchio's forward dynamics.

Pinocchio (PyPI ``pin``) computes the forward dynamics of a kinematic tree
by the articulated-body algorithm, in C++, with no symbolic step: an oracle
written independently of sympy and of every formulation here.

Frame and sign mapping
----------------------
For the trees of :func:`eomcompare.testing.strategies.build_tree` (structure
``("tree", dimension, joints, springs, dampers, gravity, reactions)``):

==========================  ================================================
declaration                 Pinocchio
==========================  ================================================
ground frame N, point O     universe joint (id 0), world frame
body i, frame ``B{i}``,     joint i (``JointModelR{X,Y,Z}`` or
origin ``O{i}``             ``JointModelP{X,Y,Z}`` after the axis), one body
                            appended at the joint frame
joint offset ``r_i`` in     joint placement ``SE3(I, r_i)`` in the parent
the parent's frame          joint's frame (rotation identity: the joint
                            frame is the parent's frame)
revolute ``q{i}`` about     RX/RY/RZ: the child frame is the parent's turned
parent axis, right hand     by q about that axis, right hand (same sign)
prismatic ``q{i}`` along    PX/PY/PZ: the child origin moves by q along the
parent axis                 axis (same sign)
mass centre ``c_i`` in      ``Inertia(m, c_i, I_c)`` with ``I_c`` the
``B{i}``, central inertia   CENTRAL inertia in the body frame (Pinocchio's
``I{i}_..`` in ``B{i}``     convention for the rotational part)
``u{i} = q{i}'``            ``v[i]`` (one-dimensional joints: v = q')
gravity ``(gx, gy, gz)``    ``model.gravity = Motion(g, 0)`` (Pinocchio's
in N                        default is ``-9.81 z``: always set explicitly)
joint spring and damper     joint torque/force
pair                        ``tau_i = -k_i (q_i - s_i) - b_i q_i'`` passed to
                            ``aba`` (an action-reaction pair along the joint
                            axis contributes exactly this generalized force)
==========================  ================================================

Planar trees (dimension 2) use the same mapping with z components zero.
Trees with declared joint reactions (extra constraint coordinates) are not
mapped: their extra coordinates are held at zero by constraints, which
Pinocchio's tree does not have.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from eomcompare.systems import MechanicalSystem

__all__ = [
    "pinocchio_model",
    "pinocchio_accelerations",
    "pinocchio_available",
    "tree_model",
    "TreeJoint",
]


def pinocchio_available() -> bool:
    """True when the ``pinocchio`` module (PyPI ``pin``) can be imported."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return False
    return True


def _tree_structure(system):
    if not isinstance(system, MechanicalSystem):
        raise TypeError(
            f"system must be a MechanicalSystem, not {type(system).__name__}"
        )
    structure = system.options.get("structure")
    if not structure or structure[0] != "tree":
        raise ValueError(
            f"system {system.name!r} is not a tree of "
            f"testing.strategies.build_tree; valid families: ['tree']"
        )
    _, dim, joints, springs, dampers, gravity, reactions = structure
    if reactions:
        raise ValueError(
            f"system {system.name!r} declares joint reactions as constraint "
            f"coordinates, which a Pinocchio tree does not have; valid: "
            f"trees with joint_reactions=False"
        )
    return dim, joints, springs, dampers, gravity


class TreeJoint(NamedTuple):
    """One joint of a tree and the body it carries, for :func:`tree_model`.

    parent : index of the parent joint in the list, -1 for the ground.
    kind, axis : ``"R"`` (revolute) or ``"P"`` (prismatic) about/along axis
        0, 1 or 2 of the parent joint's frame.
    offset : the joint's position in the parent joint's frame.
    mass, com, inertia : the body's mass, mass centre in the joint frame and
        CENTRAL inertia (3x3) in the joint frame.
    """

    parent: int
    kind: str
    axis: int
    offset: Any
    mass: float
    com: Any
    inertia: Any


def tree_model(joints, gravity):
    """A Pinocchio model of a tree of one-axis joints, each carrying one
    body: the one place this project builds Pinocchio models (the random
    trees here, the benchmark's chains).

    Parameters
    ----------
    joints : sequence of :class:`TreeJoint`, parents before children.
    gravity : 3-vector in the world frame.

    Examples
    --------
    >>> model = tree_model([TreeJoint(-1, "R", 2, [0, 0, 0], 2.0,
    ...                               [0.5, 0, 0], np.zeros((3, 3)))],
    ...                    [0.0, -9.81, 0.0])
    >>> model.nq
    1
    """
    import pinocchio as pin

    kinds = {
        ("R", 0): pin.JointModelRX,
        ("R", 1): pin.JointModelRY,
        ("R", 2): pin.JointModelRZ,
        ("P", 0): pin.JointModelPX,
        ("P", 1): pin.JointModelPY,
        ("P", 2): pin.JointModelPZ,
    }
    model = pin.Model()
    ids = []
    for k, j in enumerate(joints, start=1):
        parent_id = 0 if j.parent < 0 else ids[j.parent]
        placement = pin.SE3(np.eye(3), np.asarray(j.offset, dtype=float))
        jid = model.addJoint(
            parent_id, kinds[(j.kind, j.axis)](), placement, f"joint{k}"
        )
        ids.append(jid)
        model.appendBodyToJoint(
            jid,
            pin.Inertia(
                float(j.mass),
                np.asarray(j.com, dtype=float),
                np.asarray(j.inertia, dtype=float),
            ),
            pin.SE3.Identity(),
        )
    model.gravity = pin.Motion(np.asarray(gravity, dtype=float), np.zeros(3))
    return model


def pinocchio_model(system, parameters=None):
    """A ``pinocchio.Model`` of a random tree, with the mapping of the module
    docstring.

    Parameters
    ----------
    system : MechanicalSystem
        A tree drawn by :func:`eomcompare.testing.strategies.kinematic_trees`.
    parameters : mapping, optional
        Parameter values overriding the system's own.

    Returns
    -------
    model : pinocchio.Model
    joint_torque : callable ``(q, qd) -> tau``
        The joint springs and dampers as generalized forces.

    Raises
    ------
    TypeError, ValueError
        For anything but such a tree (naming the valid family).
    ImportError
        When Pinocchio is not installed (``pip install pin``).

    Examples
    --------
    >>> from eomcompare.testing.strategies import build_tree
    >>> structure = (2, ((-1, "R", 2), (0, "P", 0)), False, False, True, ())
    >>> values = {"gx": 0.0, "gy": -9.81}
    >>> for k in (1, 2):
    ...     values |= {f"m{k}": 1.0, f"rx{k}": 0.5, f"ry{k}": 0.0,
    ...                f"cx{k}": 0.2, f"cy{k}": 0.0, f"I{k}_xx": 0.1,
    ...                f"I{k}_yy": 0.1, f"I{k}_zz": 0.1, f"I{k}_xy": 0.0,
    ...                f"I{k}_yz": 0.0, f"I{k}_zx": 0.0}
    >>> model, tau = pinocchio_model(build_tree(structure, values))
    >>> model.nq
    2
    """
    dim, joints, springs, dampers, gravity = _tree_structure(system)

    values = {
        str(k): v
        for k, v in zip(system.parameters, system.states.parameter_vector(parameters))
    }
    comps = "xyz"

    def vec(prefix, k):
        return np.array([values.get(f"{prefix}{c}{k}", 0.0) for c in comps])

    specs = []
    for i, (parent, kind, axis) in enumerate(joints):
        k = i + 1
        I = np.array(
            [
                [values[f"I{k}_xx"], values[f"I{k}_xy"], values[f"I{k}_zx"]],
                [values[f"I{k}_xy"], values[f"I{k}_yy"], values[f"I{k}_yz"]],
                [values[f"I{k}_zx"], values[f"I{k}_yz"], values[f"I{k}_zz"]],
            ]
        )
        specs.append(
            TreeJoint(parent, kind, axis, vec("r", k), values[f"m{k}"], vec("c", k), I)
        )
    g = np.array([values.get(f"g{c}", 0.0) for c in comps]) if gravity else np.zeros(3)
    model = tree_model(specs, g)
    n = len(joints)
    stiff = np.array([values.get(f"k{k}", 0.0) for k in range(1, n + 1)])
    rest = np.array([values.get(f"s{k}", 0.0) for k in range(1, n + 1)])
    damp = np.array([values.get(f"b{k}", 0.0) for k in range(1, n + 1)])

    def joint_torque(q, qd):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        return -stiff * (q - rest) - damp * qd

    return model, joint_torque


def pinocchio_accelerations(system, q, qd, parameters=None):
    """q'' of a random tree from Pinocchio's articulated-body algorithm.

    Examples
    --------
    >>> from eomcompare.testing.strategies import build_tree
    >>> structure = (2, ((-1, "R", 2),), False, False, True, ())
    >>> values = {"m1": 2.0, "rx1": 0.0, "ry1": 0.0, "cx1": 0.5, "cy1": 0.0,
    ...           "I1_xx": 0.0, "I1_yy": 0.5, "I1_zz": 0.5, "I1_xy": 0.0,
    ...           "I1_yz": 0.0, "I1_zx": 0.0, "gx": 0.0, "gy": -9.81}
    >>> ms = build_tree(structure, values)
    >>> qdd = pinocchio_accelerations(ms, [0.0], [0.0])
    >>> round(float(qdd[0]), 6)  # -m g c / (I_zz + m c^2) = -9.81 / 1
    -9.81
    """
    import pinocchio as pin

    model, tau = pinocchio_model(system, parameters)
    data = model.createData()
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    return np.array(pin.aba(model, data, q, qd, tau(q, qd)), dtype=float)
