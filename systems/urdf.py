"""Robots from URDF files: a kinematic tree of revolute, continuous,
prismatic and fixed joints, declared as a :class:`MechanicalSystem`.

>>> from eomcompare.systems import from_urdf
>>> ms = from_urdf('''
... <robot name="arm">
...   <link name="base"/>
...   <link name="rod">
...     <inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
...       <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/>
...     </inertial>
...   </link>
...   <joint name="hinge" type="continuous">
...     <parent link="base"/><child link="rod"/><axis xyz="1 0 0"/>
...   </joint>
... </robot>''')
>>> ms.coordinates, ms.options["joints"]
((q1(t),), ('hinge',))

Parser
------
The file is read by `yourdfpy <https://github.com/clemense/yourdfpy>`_,
not by hand: it is maintained, pure Python (lxml), reads a file or a
stream, applies the URDF defaults (axis ``1 0 0``, identity origins), and
can skip the visual and collision geometry entirely
(``build_scene_graph=False``, ``load_meshes=False``), so no mesh is ever
looked up.  ``urdf_parser_py`` (ROS) is older and unmaintained on the
package index; Pinocchio's own parser builds a numeric model with no
symbolic access to the file's values, and it is the oracle the import is
checked against, so it must not also be the reader.

Conventions (those of Pinocchio's ``buildModelFromUrdf``)
--------------------------------------------------------
* The root link (the one no joint has as child) is the ground frame ``N``
  with origin ``O``.  Gravity is ``g = 9.81`` m/s^2 along ``-N.z``
  (parameter ``g``).
* Links joined by ``fixed`` joints are merged into one body (masses, mass
  centres and inertias combined); links fixed to the root are part of the
  ground.
* One coordinate per revolute, continuous or prismatic joint, in the order
  Pinocchio numbers the joints: depth first from the root, the children of
  a link in the order of their joint names (urdfdom keeps joints in a map
  sorted by name).  ``q{k}`` is the joint angle (or displacement) from the
  URDF's zero configuration, positive about (along) the joint axis by the
  right-hand rule; the speed ``u{k} = q{k}'``.  A continuous joint is a
  revolute joint without limits (Pinocchio represents it by ``(cos q, sin
  q)``; here it is the angle).
* Body ``k`` has frame ``B{k}`` = the frame of the child link of joint
  ``k`` (joint ``k``'s frame turned by ``q{k}`` for a revolute joint,
  parallel to it for a prismatic one) and origin ``O{k}``; its mass
  centre is ``G{k}``.  The joint frame ``J{k}`` (the joint's ``<origin>``
  in the parent body) is declared as a fixed rotation from the parent's
  frame where it is not the identity.
* Ignored, as Pinocchio's ``aba`` ignores them: ``<limit>``, ``<mimic>``
  (every mimic joint keeps its own coordinate), joint friction, and joint
  damping unless ``damping=True`` (then ``-b q'`` acts in the joint as an
  action-reaction pair).  Visual and collision geometry are never read.

Rounded angles, lengths kept
----------------------------
URDF files write angles rounded (``rpy="0 1.57079632679 0"``); their
rotation matrices then hold residues like ``4.9e-12`` where the intended
rotation has zeros, and every residue is a term that the exact symbolic
derivation carries through every product of the chain.  ``snap`` (default
``1e-9``) sets each entry of a joint or inertial rotation matrix and each
component of a joint axis within ``snap`` of ``0``, ``1`` or ``-1`` to that
exact value, which is what the rounded multiples of ``pi/2`` in ``rpy``
were written for, and each inertia entry within ``snap`` times its
body's largest to zero; other numbers are kept as written.  The change
is of the order of the rounding (``2e-12`` rad for 11 decimals): on
``ur5`` (six rounded ``pi/2`` and ``pi`` angles) q'' of the snapped model
differs from Pinocchio's, which reads the rounded numbers literally, by
about ``1e-11`` relative (``tests/systems/test_urdf.py``), against
``2e-15`` without snapping; in exchange ``ur5``'s forward dynamics by
``lagrange`` takes 2241 multiplications and 1509 additions per evaluation
instead of 2672 and 1912 (literature convention,
:mod:`eomcompare.bench.literature_counts`).

Lengths (joint origins, mass centres) are kept as written, snapped only
within ``min(snap, 1e-12)`` m (:data:`LENGTH_SNAP`, float round-off).
anymal (``anymal_b_simple_description``) places its shanks' mass centres
``-8.66e-10`` m off their axes; set to zero (lengths snapped at ``snap``)
they moved q'' of the floating robot by ``1.1e-9`` relative against
Pinocchio's ``aba``, kept they agree to ``1e-14``
(``tests/systems/test_urdf_robots_exact.py``) at the same operation
count.  ``snap=0`` keeps every number as written.

Inertial data
-------------
By default every mass, mass centre and inertia is a number in the
equations.  ``symbolic_inertia=True`` gives each (merged) body the symbols
``m{k}``, ``cx{k}``, ``cy{k}``, ``cz{k}`` (mass centre in ``B{k}``) and
``I{k}_xx``, ``I{k}_yy``, ``I{k}_zz``, ``I{k}_xy``, ``I{k}_yz``,
``I{k}_zx`` (central inertia in ``B{k}``), with the file's values as their
defaults: the general form, for operation counts.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from xml.etree import ElementTree

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.frames import cross

from .base import DeclarationError, MechanicalSystem
from .free_joint import ball_child, free_root
from .joint_tree import JointTree
from .physics import check_mass_properties

__all__ = [
    "from_urdf",
    "URDF_JOINT_TYPES",
    "JointSpec",
    "declare_tree",
    "inertia_symbols",
]

#: The joint types that are imported; fixed joints merge their links.
URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
_UNSUPPORTED = {
    "floating": "a floating joint (a floating base) is not supported yet",
    "planar": "a planar joint is not supported yet",
}


@dataclass
class _Body:
    """A set of links rigidly joined by fixed joints."""

    index: int  # 0: the ground (root), k >= 1: body k
    joint: object = None  # the yourdfpy joint that moves it
    links: list = field(default_factory=list)  # (link, R, p) in the body


def _read(source):
    """The yourdfpy model and the XML text of ``source``."""
    try:
        import yourdfpy
    except ImportError as exc:  # pragma: no cover - a dependency of 'robots'
        raise ImportError(
            "from_urdf needs yourdfpy: pip install 'eomcompare[robots]'"
        ) from exc
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and "<" not in source
    ):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no URDF file {path!r}")
        with open(path, "rb") as fh:
            data = fh.read()
    elif isinstance(source, str):
        data = source.encode()
    elif isinstance(source, bytes):
        data = source
    else:
        raise TypeError(
            f"source must be a path or the URDF text, not {type(source).__name__}"
        )
    # yourdfpy recovers what it can from malformed XML; a file that is not
    # well-formed is refused here instead of half read.
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise DeclarationError(f"cannot read the URDF: {exc}") from exc
    if root.tag != "robot":
        raise DeclarationError(
            f"cannot read the URDF: the root element is <{root.tag}>, not <robot>"
        )
    try:
        model = yourdfpy.URDF.load(
            io.BytesIO(data),
            build_scene_graph=False,
            load_meshes=False,
            build_collision_scene_graph=False,
            load_collision_meshes=False,
        )
    except Exception as exc:
        raise DeclarationError(f"cannot read the URDF: {exc}") from exc
    if model.robot is None:
        raise DeclarationError("cannot read the URDF: no <robot> element")
    return model.robot, data.decode(errors="replace")


def _finite(what, values):
    if not np.all(np.isfinite(np.asarray(values, dtype=float))):
        raise DeclarationError(f"{what} holds a value that is not a finite number")


def _check_numbers(robot, damping):
    """Every number the import reads is finite, and each link's mass and
    inertia are those of a real body
    (:func:`eomcompare.systems.physics.check_mass_properties`), named by its link or
    joint: a NaN would otherwise surface as a sympy error far from the
    file, a negative mass as equations that mean nothing."""
    for link in robot.links:
        inertial = link.inertial
        if inertial is None or inertial.mass is None:
            continue
        what = f"link {link.name!r}"
        if inertial.origin is not None:
            _finite(f"{what}: the <inertial> <origin>", inertial.origin)
        check_mass_properties(what, inertial.mass, inertial.inertia)
    for j in robot.joints:
        what = f"joint {j.name!r}"
        if j.origin is not None:
            _finite(f"{what}: the <origin>", j.origin)
        if j.axis is not None:
            _finite(f"{what}: the <axis>", j.axis)
        if damping and j.dynamics is not None and j.dynamics.damping is not None:
            _finite(f"{what}: the <dynamics> damping", j.dynamics.damping)


#: Metres within which a length is snapped (see "Rounded angles, lengths kept").
LENGTH_SNAP = 1e-12


def _length_tol(tol):
    """The snapping tolerance of lengths for ``snap`` = ``tol``."""
    return min(tol, LENGTH_SNAP)


def _snap_value(x, tol):
    for exact in (0, 1, -1):
        if abs(x - exact) <= tol:
            return sm.Integer(exact)
    return sm.Float(float(x))


def _snap_matrix(a, tol):
    a = np.asarray(a, dtype=float)
    return sm.ImmutableMatrix(
        a.shape[0],
        a.shape[1] if a.ndim > 1 else 1,
        [_snap_value(x, tol) for x in a.ravel()],
    )


def _transform(origin, tol):
    """(R, p): rotation (parent components of the child's axes) and
    translation of a yourdfpy 4x4 origin, snapped."""
    if origin is None:
        return sm.ImmutableMatrix(sm.eye(3)), sm.ImmutableMatrix([0, 0, 0])
    T = np.asarray(origin, dtype=float)
    return _snap_matrix(T[:3, :3], tol), _snap_matrix(T[:3, 3], _length_tol(tol))


def _compose(a, b):
    """Transform ``a`` followed by ``b`` (both (R, p) from a parent)."""
    Ra, pa = a
    Rb, pb = b
    return (sm.ImmutableMatrix(Ra * Rb), sm.ImmutableMatrix(pa + Ra * pb))


def _tree(robot):
    """The root link and {link: [child joints sorted by name]}, checked."""
    links = {}
    for link in robot.links:
        if link.name in links:
            raise DeclarationError(f"link {link.name!r} is declared twice")
        links[link.name] = link
    parent_of, children = {}, {name: [] for name in links}
    names = set()
    for j in robot.joints:
        if j.name in names:
            raise DeclarationError(f"joint {j.name!r} is declared twice")
        names.add(j.name)
        if j.type in _UNSUPPORTED:
            raise DeclarationError(
                f"joint {j.name!r}: {_UNSUPPORTED[j.type]};"
                f" valid joint types: {list(URDF_JOINT_TYPES)}"
            )
        if j.type not in URDF_JOINT_TYPES:
            raise DeclarationError(
                f"joint {j.name!r} has unknown type {j.type!r}; valid joint "
                f"types: {list(URDF_JOINT_TYPES)}"
            )
        for role, name in (("parent", j.parent), ("child", j.child)):
            if name not in links:
                raise DeclarationError(
                    f"joint {j.name!r} names {role} link {name!r}, which is "
                    f"not declared; links: {sorted(links)}"
                )
        if j.child in parent_of:
            raise DeclarationError(
                f"closed kinematic loop: link {j.child!r} is the child of "
                f"joints {parent_of[j.child].name!r} and {j.name!r}; only "
                f"kinematic trees are supported"
            )
        parent_of[j.child] = j
        children[j.parent].append(j)
    roots = [name for name in links if name not in parent_of]
    if not roots:
        raise DeclarationError(
            "closed kinematic loop: every link is the "
            "child of a joint, so there is no root link"
        )
    if len(roots) > 1:
        raise DeclarationError(
            f"the links do not form one tree: links {sorted(roots)} are each "
            f"no joint's child; join them to one root"
        )
    # A cycle not through the root leaves links unreachable from it.
    seen, stack = set(), [roots[0]]
    while stack:
        name = stack.pop()
        seen.add(name)
        stack.extend(j.child for j in children[name])
    if len(seen) != len(links):
        raise DeclarationError(
            f"closed kinematic loop through links "
            f"{sorted(set(links) - seen)}; only kinematic trees are supported"
        )
    for name in children:
        children[name].sort(key=lambda j: j.name)
    return links, roots[0], children


def _bodies(robot, tol):
    """Bodies in Pinocchio's joint order, each with its links placed in it,
    and for each moving body its parent's index and the joint's placement
    (R, p) in the parent body."""
    links, root, children = _tree(robot)
    ground = _Body(0)
    identity = (sm.ImmutableMatrix(sm.eye(3)), sm.ImmutableMatrix([0, 0, 0]))
    bodies, placements, parents = [ground], [None], [None]

    def visit(link_name, body, T):
        body.links.append((links[link_name], T))
        for j in children[link_name]:
            Tj = _compose(T, _transform(j.origin, tol))
            if j.type == "fixed":
                visit(j.child, body, Tj)
                continue
            child = _Body(len(bodies), joint=j)
            bodies.append(child)
            placements.append(Tj)
            parents.append(body.index)
            visit(j.child, child, identity)

    visit(root, ground, identity)
    return bodies, placements, parents


def _merged_inertia(body, tol):
    """(mass, mass centre, central inertia) of a body's links in its
    frame, as floats; None when no link carries inertial data."""
    parts = []
    for link, (R, p) in body.links:
        inertial = link.inertial
        if inertial is None or inertial.mass is None:
            continue
        Rl = np.array(R.evalf(), dtype=float)
        pl = np.array(p.evalf(), dtype=float).ravel()
        Ri, pi_ = _transform(inertial.origin, tol)
        Ri = np.array(Ri.evalf(), dtype=float)
        pi_ = np.array(pi_.evalf(), dtype=float).ravel()
        I = (
            np.zeros((3, 3))
            if inertial.inertia is None
            else np.asarray(inertial.inertia, dtype=float)
        )
        Rb = Rl @ Ri
        parts.append((float(inertial.mass), pl + Rl @ pi_, Rb @ I @ Rb.T))
    return combine_inertias(parts)


def combine_inertias(parts):
    """(mass, mass centre, central inertia) of rigidly joined parts, each
    ``(mass, mass centre, central inertia)`` in one frame, as floats; None
    for no parts.  Shared by the URDF and MJCF importers, which merge the
    links (bodies) welded together into one body."""
    if not parts:
        return None
    m = sum(mi for mi, _, _ in parts)
    c = sum(mi * ci for mi, ci, _ in parts) / m if m > 0 else parts[0][1]
    I = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        d = ci - c
        I += Ii + mi * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, (I + I.T) / 2


def _axis(joint, tol):
    a = np.asarray(joint.axis if joint.axis is not None else (1, 0, 0), dtype=float)
    norm = float(np.linalg.norm(a))
    if a.shape != (3,) or not norm > 0:
        raise DeclarationError(
            f"joint {joint.name!r} has axis {a.tolist()}; "
            f"the axis must be a nonzero 3-vector"
        )
    return _snap_matrix(a / norm, tol)


def _vec(comps, frame):
    return comps[0] * frame.x + comps[1] * frame.y + comps[2] * frame.z


def from_urdf(
    source,
    *,
    name=None,
    symbolic_inertia=False,
    snap=1e-9,
    damping=False,
    floating_base=False,
) -> MechanicalSystem:
    """The :class:`MechanicalSystem` of a fixed-base robot in a URDF file.

    Parameters
    ----------
    source : str or os.PathLike
        A path to a ``.urdf`` file, or the URDF text itself (a string
        holding ``<``).
    name : str, optional
        The system's name; default: the ``<robot>`` name.
    symbolic_inertia : bool, optional
        Keep each body's mass, mass centre and central inertia as symbols
        with the file's values as defaults (see the module docstring);
        default: numbers in the equations.
    snap : float, optional
        Tolerance of snapping rotation entries, axis components and
        (relative) inertia entries, default ``1e-9``; lengths are kept (see
        "Rounded angles, lengths kept" in the module docstring).
    damping : bool, optional
        Add each joint's ``<dynamics damping>`` ``b`` as a load ``-b q'``
        (default False, as Pinocchio's ``aba``).
    floating_base : bool, optional
        Make the root link (with the links fixed to it) a free body on a
        :class:`eomcompare.systems.free_joint.FreeJoint`, as Pinocchio's
        ``JointModelFreeFlyer`` root (see :mod:`eomcompare.systems.pinocchio_states`);
        default False: the root link is the ground.

    Returns
    -------
    MechanicalSystem
        With ``options["family"] == "urdf"``, ``options["joints"]`` the
        joint names in coordinate order, ``options["joint_types"]``,
        ``options["urdf"]`` the text read.

    Raises
    ------
    DeclarationError
        For an unreadable file, an unknown joint type, a floating or planar
        joint, a closed kinematic loop, a link named but not declared, a
        moving body with no inertial data, a number that is not finite
        (NaN, inf), a negative mass, or an inertia no mass distribution has
        (not positive semi-definite, principal moments violating the
        triangle inequality); the message names the link or joint.
    FileNotFoundError
        For a path that is not a file.
    TypeError
        For a source that is neither a path nor text.
    """
    if not isinstance(symbolic_inertia, bool):
        raise TypeError("symbolic_inertia must be True or False")
    if not isinstance(damping, bool):
        raise TypeError("damping must be True or False")
    if not isinstance(floating_base, bool):
        raise TypeError("floating_base must be True or False")
    if isinstance(snap, bool) or not isinstance(snap, (int, float)):
        raise TypeError(f"snap must be a number, not {type(snap).__name__}")
    if not 0 <= snap < 0.1:
        raise ValueError(f"snap must be in [0, 0.1), not {snap!r}")
    robot, text = _read(source)
    _check_numbers(robot, damping)
    bodies, placements, parents = _bodies(robot, snap)
    movers = bodies[1:]
    if not movers and not floating_base:
        raise DeclarationError(
            f"robot {robot.name!r} has no revolute, continuous or prismatic "
            f"joint: nothing moves"
        )
    specs, params = [], {}
    for body in movers:
        k, j = body.index, body.joint
        inertial = _merged_inertia(body, snap)
        if inertial is None:
            raise DeclarationError(
                f"link {body.links[0][0].name!r} (moved by joint {j.name!r}) "
                f"and the links fixed to it have no <inertial> mass; a moving "
                f"body needs its mass and inertia"
            )
        m, c, I = inertial_entries(k, *inertial, symbolic_inertia, snap, params)
        R, p = placements[k]
        b = None
        if damping and j.dynamics is not None and j.dynamics.damping:
            b = sm.Float(float(j.dynamics.damping))
        specs.append(
            JointSpec(
                joint=j.name,
                body=body.links[0][0].name,
                kind="prismatic" if j.type == "prismatic" else "revolute",
                parent=parents[k],
                rotation=R,
                offset=p,
                axis=_axis(j, snap),
                mass=m,
                com=tuple(c),
                inertia=tuple(I),
                damping=b,
            )
        )
    types = tuple(b.joint.type for b in movers)
    if floating_base:
        from .pinocchio_states import floating_specs

        specs = floating_specs(
            _merged_inertia(bodies[0], snap),
            bodies[0].links[0][0].name,
            specs,
            lambda k, m, c, I: inertial_entries(
                k, m, c, I, symbolic_inertia, snap, params
            ),
            JointSpec,
        )
        types = ("floating",) + types
    lines = [
        f"Robot {robot.name!r} from URDF: {len(specs)} joints, gravity -z.",
        "coordinate  joint  type  moves link",
    ]
    lines += [
        f"q{k}  {s.joint}  {jt}  {s.body}"
        for k, (s, jt) in enumerate(zip(specs, types), 1)
    ]
    ms = declare_tree(
        name or robot.name,
        specs,
        params,
        description="\n".join(lines),
        options={
            "family": "urdf",
            "joints": tuple(s.joint for s in specs),
            "joint_types": types,
            "urdf": text,
            "symbolic_inertia": symbolic_inertia,
            "snap": float(snap),
            "damping": damping,
            "floating_base": floating_base,
        },
    )
    from .pinocchio_states import PinocchioStates

    kinds = {"floating": "free", "continuous": "continuous"}
    states = PinocchioStates(tuple(kinds.get(t, "scalar") for t in types))
    ms.to_pinocchio = states.to_pinocchio
    ms.from_pinocchio = states.from_pinocchio
    return ms


def inertial_entries(k, mass, com, inertia, symbolic, snap, params):
    """The mass, mass centre and inertia entries (``xx, yy, zz, xy, yz,
    zx``) of body ``k`` for a :class:`JointSpec`: numbers (the mass centre
    and the inertia entries snapped, see "Rounded angles, lengths kept"), or with
    ``symbolic`` the symbols of :func:`inertia_symbols`, whose values are
    then added to ``params``."""
    I_vals = [
        inertia[0, 0],
        inertia[1, 1],
        inertia[2, 2],
        inertia[0, 1],
        inertia[1, 2],
        inertia[2, 0],
    ]
    if symbolic:
        m, c, I = inertia_symbols(k)
        params[m] = mass
        params.update(zip(c, com))
        params.update(zip(I, I_vals))
        return m, tuple(c), tuple(I)
    scale = max(float(np.max(np.abs(inertia))), 1e-300)
    c = tuple(_snap_value(x, _length_tol(snap)) for x in com)
    I = tuple(sm.S.Zero if abs(x) <= snap * scale else sm.Float(x) for x in I_vals)
    return sm.Float(mass), c, I


def inertia_symbols(k):
    """``(m{k}, (cx{k}, cy{k}, cz{k}), (I{k}_xx, I{k}_yy, I{k}_zz, I{k}_xy,
    I{k}_yz, I{k}_zx))``: the general inertial parameters of body k."""
    m = sm.Symbol(f"m{k}", positive=True)
    c = sm.symbols(f"cx{k} cy{k} cz{k}", real=True)
    I = sm.symbols(f"I{k}_xx I{k}_yy I{k}_zz I{k}_xy I{k}_yz I{k}_zx", real=True)
    return m, c, I


@dataclass(frozen=True)
class JointSpec:
    """One joint of a kinematic tree and the body it moves.

    ``rotation`` and ``offset`` place the joint frame in the parent body's
    frame (``rotation``: parent components of the joint frame's axes); the
    body's frame is the joint frame turned by ``q`` about ``axis`` (a unit
    vector of joint-frame components) or, for a prismatic joint, parallel
    to it with its origin moved by ``q * axis``.  ``com`` (mass centre) and
    ``inertia`` (central, ``xx, yy, zz, xy, yz, zx``) are in the body's
    frame.  Entries may be numbers or symbols.  ``parent`` is the index of
    the parent body (0: the ground, k: the body of the k-th spec).
    ``damping`` (``b``) adds ``-b q'`` acting in the joint; ``armature``
    (``J``) adds ``J q''`` to the joint's own equation and nothing else
    (MuJoCo's joint armature, a diagonal term of its mass matrix), declared
    by :func:`declare_tree` as a rotor: a massless body at ``O`` turning
    by ``q`` about the ground-fixed axis ``N.z`` with axial inertia ``J``
    (revolute joint), or a particle of mass ``J`` at ``q N.x`` (prismatic
    joint), no weight on either; its kinetic energy is ``J q'^2 / 2``
    exactly, so every formulation gets the term from its own energy or
    inertia forces.
    """

    joint: str
    body: str
    kind: str
    parent: int
    rotation: sm.ImmutableMatrix
    offset: sm.ImmutableMatrix
    axis: sm.ImmutableMatrix
    mass: object
    com: tuple
    inertia: tuple
    damping: object = None
    armature: object = None
    #: For ``kind="free"`` (a root body's free joint, parent 0): the
    #: initial ``(qw, qx, qy, qz, x, y, z)`` of the body in the joint frame;
    #: for ``kind="ball"`` (systems.free_joint.ball_child) the initial
    #: ``(qw, qx, qy, qz)`` (default: the joint frame's orientation).
    initial: tuple | None = None


def _rotor(k, spec, qk, uk, N, O):
    """The body that carries joint ``k``'s armature (see
    :class:`JointSpec`): kinetic energy ``armature * uk**2 / 2``."""
    if spec.kind == "prismatic":
        P = O.locatenew(f"A{k}", qk * N.x)
        P.set_vel(N, uk * N.x)
        return me.Particle(f"{spec.body}_armature", P, spec.armature)
    A = N.orientnew(f"A{k}", "Axis", (qk, N.z))
    A.set_ang_vel(N, uk * N.z)
    return me.RigidBody(
        f"{spec.body}_armature",
        O,
        A,
        sm.S.Zero,
        (me.inertia(A, 0, 0, spec.armature), O),
    )


def declare_tree(
    name, specs, parameters, *, description="", options=None, gravity=9.81
) -> MechanicalSystem:
    """The :class:`MechanicalSystem` of a fixed-base tree of
    :class:`JointSpec` (parents before children), gravity ``g`` along
    ``-N.z``; ``parameters`` holds the values of the symbols in the specs.
    """
    n = len(specs)
    q = me.dynamicsymbols(f"q1:{n + 1}")
    u = me.dynamicsymbols(f"u1:{n + 1}")
    # Each joint's coordinates, speeds and kinematic equations (a free
    # joint has seven, six and seven: systems.free_joint).
    coords, speeds, kdes, initial, spread = [], [], [], {}, {}
    g = sm.Symbol("g", positive=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    params = {g: gravity} | dict(parameters)
    frames, origins = [N], [O]
    # Angular velocity of each body in its own frame, and the z row of its
    # orientation in N (for the potential energy), built recursively: the
    # compact form of the chain's kinematics, where sympy's cross product
    # would compose the rotations of the whole chain at every link.
    omegas, zrows, heights = [sm.zeros(3, 1)], [sm.Matrix([[0, 0, 1]])], [sm.S.Zero]
    rigid, loads, V = [], [], sm.S.Zero
    for k, spec in enumerate(specs, start=1):
        if not 0 <= spec.parent < k:
            raise DeclarationError(
                f"joint {spec.joint!r}: parent body {spec.parent} must be "
                f"declared before body {k}"
            )
        p_idx = spec.parent
        Bp, Op = frames[p_idx], origins[p_idx]
        R, p = sm.Matrix(spec.rotation), sm.Matrix(spec.offset)
        a = sm.Matrix(spec.axis)
        wp, zp = omegas[p_idx], zrows[p_idx]
        P = Op.locatenew(f"P{k}", _vec(p, Bp))
        P.set_vel(N, Op.vel(N) + _vec(cross(wp, p), Bp))
        if R == sm.eye(3):
            Jf, wJ, zJ = Bp, wp, zp
        else:
            Jf = me.ReferenceFrame(f"J{k}")
            Jf.orient_dcm(Bp, R.T)
            Jf.set_ang_vel(Bp, 0)
            wJ, zJ = R.T * wp, zp * R
        hP = heights[p_idx] + (zp * p)[0]
        if spec.kind not in ("free", "ball"):
            coords.append(q[k - 1])
            speeds.append(u[k - 1])
            kdes.append(u[k - 1] - q[k - 1].diff())
            initial |= {q[k - 1]: 0.0, u[k - 1]: 0.0}
            spread[q[k - 1]] = 1.5 if spec.kind == "revolute" else 0.05
        if spec.kind == "free":
            B, Ok, w, zB, hO = free_root(k, spec, N, Jf, P, zJ, hP)
            joint = B.free_joint
            coords += joint.coordinates
            speeds += joint.speeds
            kdes += joint.kdes
            initial |= joint.state(spec.initial[:4], spec.initial[4:])
            spread |= {c: 0.5 for c in joint.coordinates}
        elif spec.kind == "ball":
            B, Ok, w, zB, hO, bq, bu, bk, values = ball_child(
                k, spec, Jf, P, wJ, zJ, hP
            )
            coords += bq
            speeds += bu
            kdes += bk
            initial |= values
            spread |= {c: 0.5 for c in bq}
        elif spec.kind == "revolute":
            unit = [i for i in range(3) if a[i] != 0]
            if len(unit) == 1 and abs(a[unit[0]]) == 1:
                # About a coordinate axis: the rotation the derivations
                # recognise and merge with the next one about the same axis.
                ax = a[unit[0]] * (Jf.x, Jf.y, Jf.z)[unit[0]]
            else:
                ax = _vec(a, Jf)
            B = Jf.orientnew(f"B{k}", "Axis", (q[k - 1], ax))
            B.set_ang_vel(Jf, u[k - 1] * ax)
            C = sm.Matrix(Jf.dcm(B))  # J components of B's axes
            w = C.T * wJ + u[k - 1] * a
            zB = zJ * C
            Ok, hO = P, hP
        elif spec.kind == "prismatic":
            B = Jf.orientnew(f"B{k}", "Axis", (sm.S.Zero, Jf.z))
            B.set_ang_vel(Jf, 0)
            w, zB = wJ, zJ
            Ok = P.locatenew(f"O{k}", q[k - 1] * _vec(a, Jf))
            Ok.set_vel(N, P.vel(N) + _vec(u[k - 1] * a + cross(wJ, q[k - 1] * a), Jf))
            hO = hP + q[k - 1] * (zJ * a)[0]
        else:
            raise DeclarationError(
                f"joint {spec.joint!r}: kind must be one of ['revolute', "
                f"'prismatic', 'ball', 'free'], not {spec.kind!r}"
            )
        w = sm.Matrix(w)
        m, c = spec.mass, sm.Matrix(spec.com)
        G = Ok.locatenew(f"G{k}", _vec(c, B))
        G.set_vel(N, Ok.vel(N) + _vec(cross(w, c), B))
        rb = me.RigidBody(spec.body, G, B, m, (me.inertia(B, *spec.inertia), G))
        rigid.append(rb)
        loads.append(me.Force(G, -m * g * N.z))
        V += m * g * (hO + (zB * c)[0])
        if spec.damping is not None:
            gen = -spec.damping * u[k - 1]
            if spec.kind == "prismatic":
                loads.append(me.Force(Ok, gen * _vec(a, Jf)))
                if p_idx:
                    loads.append(me.Force(P, -gen * _vec(a, Jf)))
            else:
                loads.append(me.Torque(B, gen * _vec(a, Jf)))
                if p_idx:
                    loads.append(me.Torque(Bp, -gen * _vec(a, Jf)))
        if spec.armature is not None:
            rigid.append(_rotor(k, spec, q[k - 1], u[k - 1], N, O))
        frames.append(B)
        origins.append(Ok)
        omegas.append(w)
        zrows.append(zB)
        heights.append(hO)
    system = me.System(N, O)
    system.add_coordinates(*coords)
    system.add_speeds(*speeds)
    system.add_kdes(*kdes)
    system.add_bodies(*rigid)
    system.add_loads(*loads)
    damped = any(s.damping is not None for s in specs)
    ms = MechanicalSystem(
        name=name,
        system=system,
        parameters=params,
        initial_state=initial,
        potential_energy=V,
        energy_conserved=not damped,
        description=description,
        random_spread=spread,
        options=dict(options or {}),
    )
    # The tree itself, for evaluations that recurse over it
    # (formulations.kane_recursive), which know one-coordinate joints only:
    # the specs as declared and one record per link (systems.joint_tree).
    # A free root then one-coordinate joints gives the record alone (the
    # articulated-body recursion takes it).
    one = ("revolute", "prismatic")
    if all(s.kind in one for s in specs):
        ms.joint_tree = tuple(specs)
        ms.tree = JointTree.from_specs(specs, gravity=(0, 0, -g))
    elif specs[0].kind == "free" and all(s.kind in one for s in specs[1:]):
        ms.tree = JointTree.from_specs(specs, gravity=(0, 0, -g))
    return ms
