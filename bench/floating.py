"""Floating bases in the robot section of the benchmark (part ``floating``
of :func:`eomcompare.bench.robots.bench_robots`, in ``python -m eomcompare
bench``), every number of one run:

1. three-way agreement: the speeds' rates u' of the own formulations,
   of Pinocchio's ``aba`` (free-flyer root for a floating base) and of
   MuJoCo's ``qacc`` (``mj_forward``, constraints, actuation, springs and
   damping off) at random states of each model of :data:`MODELS`: the
   two-body floating test system, ``solo12``, ``anymal`` and ``hyq`` floating
   (URDF), ``ant`` (MJCF: MuJoCo only) and the fixed-base robots of the
   robot section (``ur5``, ``panda`` from URDF; ``puma560``,
   ``stanford_arm`` from their DH tables, Pinocchio built from the table,
   no file MuJoCo reads).  MuJoCo reads a URDF file with its own parser
   (visual and collision geometry stripped, ``fusestatic`` off, a free
   joint added to the root body for a floating base, a placeholder link's
   mass properties merged exactly with those of the link it is fixed to:
   :func:`merge_placeholder_links`): nothing of the declaration is shared
   but the file;
2. the compiled (C) right-hand side of the floating quadruped ``solo12``
   against Pinocchio's ``aba`` with a free-flyer root on the same URDF,
   per call, the calls interleaved over the repeats (median and spread);
3. derivation seconds of the own formulations on ``solo12`` against
   ``sympy_kane``'s (capped);
4. the first floating-base operation-count table: forward dynamics per
   evaluation after cse (literature convention,
   :mod:`eomcompare.bench.literature_counts`: M, f and the backend's
   solve) of the RX-90 on a floating base with general symbolic inertia
   (:func:`floating_rx90`, like for like with Khalil's customised
   Newton-Euler, SYMORO, 941 / 719 plus a 6x6 solve) and of ``solo12``
   (numeric inertia: no published count).

Each derivation runs in a child process under the time cap; a case that
does not finish is recorded as ``capped``.  Rows go to ``floating.csv``
(column ``table``: ``agreement``, ``rhs``, ``derive``, ``counts``), the
markdown to ``robots.md``, the targets to the target table
(:func:`eomcompare.bench.floating_report.floating_targets`).
"""

from __future__ import annotations

import functools
import re
import statistics
import time
from pathlib import Path

import numpy as np

from .rows import capped as _capped
from .rows import derive_row

__all__ = [
    "TWO_BODY",
    "MODELS",
    "TOLERANCE",
    "load_model",
    "floating_rx90",
    "agreement",
    "count_row",
    "bench_floating",
    "PUBLISHED_FLOATING",
]

#: Relative agreement required of every pair (own, Pinocchio, MuJoCo).
TOLERANCE = 1e-10

#: The two-body floating test system: a free root link with a full inertia
#: off its origin and a link fixed to it, a revolute joint about a turned
#: axis (``tests/systems/test_urdf_floating.py``).
TWO_BODY = """<robot name="two_body">
<link name="base"><inertial><origin xyz="0.1 0.05 -0.02" rpy="0.2 0.1 -0.3"/>
<mass value="3"/><inertia ixx="0.05" iyy="0.06" izz="0.08" ixy="0.004"
 ixz="0.002" iyz="-0.003"/></inertial></link>
<link name="tip"><inertial><origin xyz="0.02 0 0"/><mass value="0.2"/>
<inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/>
</inertial></link>
<joint name="fix" type="fixed"><parent link="base"/><child link="tip"/>
<origin xyz="-0.2 0.1 0" rpy="0 0 0.5"/></joint>
<link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="1.2"/>
<inertia ixx="0.002" iyy="0.012" izz="0.012" ixy="0" ixz="0" iyz="0"/>
</inertial></link>
<joint name="h" type="continuous"><parent link="base"/><child link="arm"/>
<origin xyz="0.4 0 0.1" rpy="0.2 -0.1 0.3"/><axis xyz="0 1 0"/>
<limit effort="1" velocity="1"/></joint>
</robot>"""

#: name -> (floating base, where the model comes from).
MODELS = {
    "two_body": (True, "URDF text TWO_BODY"),
    "solo12": (True, "example-robot-data solo_description/robots/solo12.urdf"),
    "anymal": (
        True,
        "example-robot-data anymal_b_simple_description/robots/anymal.urdf",
    ),
    "hyq": (
        True,
        "example-robot-data hyq_description/robots/hyq_no_sensors.urdf",
    ),
    "ant": (True, "gymnasium ant.xml (MJCF)"),
    "ur5": (False, "example-robot-data ur_description/urdf/ur5_robot.urdf"),
    "panda": (False, "example-robot-data panda_description/urdf/panda.urdf"),
    "puma560": (False, "standard DH table (Corke & Armstrong-Helouvry)"),
    "stanford_arm": (False, "standard DH table (AIM-177)"),
}

#: Published floating-base forward-dynamics counts (multiplications,
#: additions) per evaluation, and what they count.
PUBLISHED_FLOATING = {
    "SYMORO, RX-90 on a floating base, general inertia": (
        941,
        719,
        "customised Newton-Euler (Khalil & Kleinfinger), OpenSYMORO's output "
        "counted in this project's convention, plus a 6x6 numeric solve for "
        "the base acceleration (not included in 941 / 719)",
    ),
}
#: Featherstone's factorize-and-solve, n^3/6 + 3n^2/2 - 2n/3 multiplications
#: and n^3/6 + n^2 - 7n/6 additions (RBDA 2008, Table 10.1), at n = 6: the
#: 6x6 solve SYMORO's forward dynamics adds.
SOLVE_6 = (6**3 // 6 + 3 * 6**2 // 2 - 2 * 6 // 3, 6**3 // 6 + 6**2 - 7 * 6 // 6)


def floating_rx90():
    """The RX-90 of :func:`eomcompare.systems.robots.rx90` (Khalil's
    modified-DH table, symbolic ``D3`` and ``RL4``, general symbolic
    inertia) on a free base: a base body with its own general symbolic
    inertia (``m0``, ``cx0`` ... ``I0_zx``) on a free joint, 13
    coordinates and 12 speeds."""
    from eomcompare.systems.pinocchio_states import floating_specs
    from eomcompare.systems.robots import RX90, mdh_specs, spatial_chain_values
    from eomcompare.systems.urdf import JointSpec, declare_tree, inertia_symbols

    specs, params = mdh_specs(RX90, symbolic_inertia=True)
    v = spatial_chain_values(1)
    xx, yy, zz, xy, yz, zx = v["I"]
    inertia = np.array([[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]], dtype=float)

    def entries(k, m, c, I):
        ms_, cs, Is = inertia_symbols(k)
        params[ms_] = m
        params.update(zip(cs, c))
        params.update(zip(Is, (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[1, 2], I[2, 0])))
        return ms_, tuple(cs), tuple(Is)

    specs = floating_specs(
        (float(v["m"]), np.array(v["c"], dtype=float), inertia),
        "base",
        specs,
        entries,
        JointSpec,
    )
    return declare_tree(
        "rx90_floating",
        specs,
        params,
        description=floating_rx90.__doc__,
        options={"family": "mdh", "table": "rx90", "symbolic_inertia": True},
    )


@functools.cache
def load_model(name):
    """The system of one of :data:`MODELS` (URDF robots by
    :func:`eomcompare.systems.from_urdf`, with ``floating_base`` as
    listed), or ``"rx90_floating"`` (:func:`floating_rx90`)."""
    from eomcompare.systems import from_urdf, get_system
    from eomcompare.systems.robots import robot_data_path

    if name == "two_body":
        return from_urdf(TWO_BODY, floating_base=True)
    if name == "anymal":
        path = robot_data_path("anymal_b_simple_description/robots/anymal.urdf")
        return from_urdf(path, name="anymal", floating_base=True)
    if name == "hyq":
        path = robot_data_path("hyq_description/robots/hyq_no_sensors.urdf")
        return from_urdf(path, name="hyq", floating_base=True)
    if name == "rx90_floating":
        return floating_rx90()
    return get_system(name)


# ----------------------------------------------------------------------
# The references: Pinocchio and MuJoCo
# ----------------------------------------------------------------------
def _dh_pinocchio(table):
    """Pinocchio's model of a standard-DH table (as
    :func:`eomcompare.systems.robots.dh_system` reads it: frame k = frame
    k-1 Rz(theta) Tz(d) Tx(a) Rx(alpha); joint k about z of frame k-1; the
    mass centre and inertia of link k in frame k), built from the table."""
    import pinocchio as pin

    def rot(axis, a):
        c, s = np.cos(a), np.sin(a)
        if axis == "x":
            return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
        return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])

    model = pin.Model()
    parent, after = 0, pin.SE3.Identity()
    for k, (kind, theta, d, a, alpha, m, r, I) in enumerate(table, start=1):
        placement = after * pin.SE3(rot("z", float(theta)), np.zeros(3))
        jm = pin.JointModelRZ() if kind == "R" else pin.JointModelPZ()
        jid = model.addJoint(parent, jm, placement, f"joint{k}")
        dh = pin.SE3(rot("x", float(alpha)), np.array([a, 0.0, d], dtype=float))
        xx, yy, zz, xy, yz, xz = (float(x) for x in I)
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        model.appendBodyToJoint(
            jid,
            dh.act(pin.Inertia(float(m), np.array(r, dtype=float), inertia)),
            pin.SE3.Identity(),
        )
        parent, after = jid, dh
    return model


def pinocchio_reference(ms):
    """``(q, u) -> u'`` by Pinocchio's ``aba`` (URDF systems: Pinocchio's
    parser on the same file, free-flyer root for a floating base; DH arms:
    a model built from the table), or a string saying why there is none."""
    try:
        import pinocchio as pin
    except ImportError:
        return "Pinocchio not installed"
    family = ms.options.get("family")
    if family == "urdf":
        from eomcompare.references.robot_oracle import urdf_pinocchio_model

        model = urdf_pinocchio_model(ms)
        data = model.createData()

        def ud(q, u):
            q_pin, v = ms.to_pinocchio(q, u)
            a = pin.aba(model, data, q_pin, v, np.zeros(model.nv))
            return ms.from_pinocchio(q_pin, v, np.asarray(a))[2]

        return ud
    if family == "dh":
        from eomcompare.systems.robots import PUMA560, STANFORD_ARM

        tables = {"puma560": PUMA560, "stanford_arm": STANFORD_ARM}
        if ms.options.get("table") not in tables:
            return "no Pinocchio model of this table"
        model = _dh_pinocchio(tables[ms.options["table"]])
        data = model.createData()
        return lambda q, u: np.array(pin.aba(model, data, q, u, np.zeros(model.nv)))
    if family == "mjcf":
        return "MJCF model: MuJoCo only"
    return "no file Pinocchio reads"


def _strip_urdf(text):
    """The URDF text without visual and collision geometry (MuJoCo would
    load their meshes), with MuJoCo's compiler told to keep links fixed to
    their parents as bodies (``fusestatic`` off: the root link of a
    floating base is one of them until its free joint is added)."""
    text = re.sub(r"<visual\b.*?</visual>", "", text, flags=re.S)
    text = re.sub(r"<collision\b.*?</collision>", "", text, flags=re.S)
    text = re.sub(r"<\?xml[^>]*\?>", "", text)
    return re.sub(
        r"(<robot\b[^>]*>)",
        r'\1<mujoco><compiler fusestatic="false" discardvisual="true"/></mujoco>',
        text,
        count=1,
    )


def _rpy_matrix(rpy):
    """The rotation of a URDF ``rpy`` (fixed axes x, y, z: Rz Ry Rx)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (
        np.cos(r),
        np.sin(r),
        np.cos(p),
        np.sin(p),
        np.cos(y),
        np.sin(y),
    )
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _pose(el):
    """(R, t) of an element's ``<origin>`` (identity without one)."""
    origin = el.find("origin") if el is not None else None
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = [float(x) for x in origin.get("xyz", "0 0 0").split()]
    rpy = [float(x) for x in origin.get("rpy", "0 0 0").split()]
    return _rpy_matrix(rpy), np.array(xyz)


def _inertial(link):
    """(mass, mass centre, inertia about it) of a link in its own frame, or
    None without an ``<inertial>``."""
    el = link.find("inertial")
    if el is None:
        return None
    R, c = _pose(el)
    mass = float(el.find("mass").get("value"))
    i = {
        k: float(el.find("inertia").get(k, 0.0))
        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    }
    I = np.array(
        [
            [i["ixx"], i["ixy"], i["ixz"]],
            [i["ixy"], i["iyy"], i["iyz"]],
            [i["ixz"], i["iyz"], i["izz"]],
        ]
    )
    return mass, c, R @ I @ R.T


def _set_inertial(link, mass, c, I):
    import xml.etree.ElementTree as ET

    old = link.find("inertial")
    if old is not None:
        link.remove(old)
    el = ET.SubElement(link, "inertial")
    ET.SubElement(el, "origin", xyz=" ".join(repr(float(x)) for x in c), rpy="0 0 0")
    ET.SubElement(el, "mass", value=repr(float(mass)))
    names = {
        "ixx": (0, 0),
        "ixy": (0, 1),
        "ixz": (0, 2),
        "iyy": (1, 1),
        "iyz": (1, 2),
        "izz": (2, 2),
    }
    ET.SubElement(el, "inertia", **{k: repr(float(I[ij])) for k, ij in names.items()})


def _is_placeholder(inertial) -> bool:
    """A link's mass properties that a physical body cannot have: an
    inertia that is not positive definite (anymal's and hyq's root links
    hold 1e-6 in every entry, off-diagonal ones included)."""
    return inertial is not None and np.min(np.linalg.eigvalsh(inertial[2])) <= 0.0


def merge_placeholder_links(text: str) -> tuple[str, list[str]]:
    """The URDF ``text`` with every placeholder link's mass properties
    merged with those of the link it is fixed to (a ``fixed`` joint), into
    the parent of the two, exactly (masses added, mass centres and
    inertias carried by the joint's pose and the parallel-axis theorem),
    and the names of the pairs merged.  The dynamics are unchanged: the
    two links move as one body.  MuJoCo refuses a placeholder inertia
    ("inertia must have positive eigenvalues"); Pinocchio and the
    project's import add it as given."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(text)
    links = {lk.get("name"): lk for lk in root.iter("link")}
    merged = []
    for joint in root.iter("joint"):
        if joint.get("type") != "fixed":
            continue
        parent = links[joint.find("parent").get("link")]
        child = links[joint.find("child").get("link")]
        a, b = _inertial(parent), _inertial(child)
        if b is None or not (_is_placeholder(a) or _is_placeholder(b)):
            continue
        R, t = _pose(joint)
        # The child's mass properties in the parent's frame.
        mb, cb, Ib = b[0], R @ b[1] + t, R @ b[2] @ R.T
        ma, ca, Ia = a if a is not None else (0.0, np.zeros(3), np.zeros((3, 3)))
        m = ma + mb
        c = (ma * ca + mb * cb) / m

        def shifted(mass, centre, inertia):
            d = centre - c
            return inertia + mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))

        _set_inertial(parent, m, c, shifted(ma, ca, Ia) + shifted(mb, cb, Ib))
        child.remove(child.find("inertial"))
        merged.append(f"{child.get('name')} into {parent.get('name')}")
    return ET.tostring(root, encoding="unicode"), merged


def urdf_mujoco_model(ms):
    """MuJoCo's model of the URDF ``ms`` was imported from, read by
    MuJoCo's own URDF parser, a free joint added to the root body for a
    floating base, with what the declaration leaves out disabled (as
    :func:`eomcompare.references.mujoco_oracle.mjcf_mujoco_model`)."""
    import mujoco

    from eomcompare.references.mujoco_oracle import _DISABLED

    text, _ = merge_placeholder_links(_strip_urdf(ms.options["urdf"]))
    spec = mujoco.MjSpec.from_string(text)
    if ms.options.get("floating_base"):
        spec.worldbody.first_body().add_freejoint()
    model = spec.compile()
    for flag in _DISABLED:
        model.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag, 0))
    model.jnt_stiffness[:] = 0.0
    model.dof_damping[:] = 0.0
    model.dof_armature[:] = 0.0
    model.body_gravcomp[:] = 0.0
    model.opt.gravity[:] = [0.0, 0.0, -float(dict(ms.parameters)[_g(ms)])]
    return model


def _g(ms):
    return next(k for k in ms.parameters if str(k) == "g")


def mujoco_reference(ms):
    """``(q, u) -> u'`` by MuJoCo's ``qacc`` (MJCF systems: the compiled
    file; URDF systems: :func:`urdf_mujoco_model`, joints matched by name,
    the free joint's qpos ``(x, y, z, w, x, y, z)`` and qvel ``(v world,
    omega body)`` reordered to the project's), or a string saying why
    there is none."""
    try:
        import mujoco
    except ImportError:
        return "MuJoCo not installed"
    family = ms.options.get("family")
    if family == "mjcf":
        from eomcompare.references.mujoco_oracle import (
            mjcf_mujoco_model,
            mujoco_accelerations,
        )

        model = mjcf_mujoco_model(ms)
        return lambda q, u: mujoco_accelerations(ms, q, u, model=model)
    if family != "urdf":
        return "no URDF or MJCF file MuJoCo reads"
    try:
        model = urdf_mujoco_model(ms)
    except ValueError as exc:
        return "not loadable by MuJoCo: " + str(exc).splitlines()[0]
    from eomcompare.references.mujoco_oracle import forward

    data = mujoco.MjData(model)
    floating = bool(ms.options.get("floating_base"))
    names = ms.options["joints"][1:] if floating else ms.options["joints"]
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in names]
    if min(ids, default=0) < 0:
        return "MuJoCo's model lacks joints " + str(
            [n for n, i in zip(names, ids) if i < 0]
        )
    qadr = [int(model.jnt_qposadr[i]) for i in ids]
    dadr = [int(model.jnt_dofadr[i]) for i in ids]
    f = 6 if floating else 0

    def ud(q, u):
        q, u = np.asarray(q, dtype=float), np.asarray(u, dtype=float)
        data.qpos[:] = 0.0
        data.qvel[:] = 0.0
        if floating:
            data.qpos[0:3], data.qpos[3:7] = q[4:7], q[0:4]
            data.qvel[0:3], data.qvel[3:6] = u[3:6], u[0:3]
        data.qpos[qadr] = q[f + (1 if floating else 0) :]
        data.qvel[dadr] = u[f:]
        forward(model, data)
        out = np.empty(len(u))
        if floating:
            out[0:3], out[3:6] = data.qacc[3:6], data.qacc[0:3]
        out[f:] = data.qacc[dadr]
        return out

    return ud


def _relative(a, b):
    """Largest |a - b| relative to the largest |b|."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def agreement(ms, formulations=("kane",), *, states=20, reference=None, tol=TOLERANCE):
    """Rows of the three-way agreement on ``ms``: for each formulation the
    largest relative difference of u' (over ``states`` random states of
    ``ms.states.random_state``) from Pinocchio's and from MuJoCo's, and the two
    references' from each other; ``status`` ``"agree"`` when every pair
    measured is within ``tol``, else ``"DISAGREE"``.

    ``reference`` is the system whose file the references read (default
    ``ms``); a different one checks that a wrong model is caught.  Where a
    reference is not available its column holds the reason."""
    from eomcompare.formulations import get_formulation

    ref = ms if reference is None else reference
    refs = {"pinocchio": pinocchio_reference(ref), "mujoco": mujoco_reference(ref)}
    points = []
    for seed in range(states):
        t0, q, qd = ms.states.random_state(seed=seed)
        points.append((t0, q, ms.states.speeds_from_rates(t0, q, qd)))
    values = {
        k: [f(q, u) for _, q, u in points] if callable(f) else f
        for k, f in refs.items()
    }
    pm = None
    if all(not isinstance(v, str) for v in values.values()):
        pm = max(_relative(a, b) for a, b in zip(values["pinocchio"], values["mujoco"]))
    rows = []
    for label in formulations:
        t = time.perf_counter()
        eom = get_formulation(label, count_ops=False).derive(ms)
        derive = time.perf_counter() - t
        model = eom.numeric(backend="lambdify")
        own = [model.speed_derivatives(t0, q, u) for t0, q, u in points]
        row = {
            "table": "agreement",
            "model": ms.name,
            # A free joint: more coordinates (its quaternion) than speeds.
            "floating": len(ms.coordinates) > len(ms.speeds),
            "formulation": label,
            "states": states,
            "speeds": len(ms.speeds),
            "derive_s": round(derive, 2),
        }
        worst = [] if pm is None else [pm]
        for k, v in values.items():
            if isinstance(v, str):
                row[f"own_{k}"] = v
            else:
                row[f"own_{k}"] = max(_relative(a, b) for a, b in zip(own, v))
                worst.append(row[f"own_{k}"])
        row["pinocchio_mujoco"] = "" if pm is None else pm
        row["status"] = "agree" if worst and max(worst) <= tol else "DISAGREE"
        rows.append(row)
    return rows


def _agreement_case(name, formulation, states):
    return agreement(load_model(name), (formulation,), states=states)[0]


# ----------------------------------------------------------------------
# Counts, derivation seconds, compiled right-hand side
# ----------------------------------------------------------------------
def count_row(ms, formulation):
    """The forward-dynamics count of ``ms`` by ``formulation`` (per
    evaluation after cse, literature convention: M, f and the solve)."""
    from eomcompare.formulations import get_formulation

    from .literature_counts import forward_dynamics_counts

    t = time.perf_counter()
    eom = get_formulation(formulation, count_ops=False).derive(ms)
    derive = time.perf_counter() - t
    fd = forward_dynamics_counts(eom)
    return {
        "table": "counts",
        "model": ms.name,
        "formulation": formulation,
        "speeds": len(ms.speeds),
        "fd_mul": fd["total"].mul,
        "fd_add": fd["total"].add,
        "solve_mul": fd["solve"].mul,
        "solve_add": fd["solve"].add,
        "derive_s": round(derive, 2),
    }


def _count_case(name, formulation):
    return count_row(load_model(name), formulation)


def _derive_case(name, formulation):
    from eomcompare.formulations import get_formulation

    ms = load_model(name)
    return get_formulation(formulation, count_ops=False).derive(ms).timings["total"]


def _rhs_case(name, formulations, repeats):
    """Seconds per call of the C right-hand side of each formulation and
    of Pinocchio's aba (free-flyer root) at one state, ``repeats`` samples
    each, the calls of all interleaved; and the largest relative u'
    difference from aba."""
    import pinocchio as pin

    from eomcompare.formulations import get_formulation
    from eomcompare.numeric.compiled import default_cflags
    from eomcompare.references.robot_oracle import urdf_pinocchio_model

    from .timing import per_call

    ms = load_model(name)
    model = urdf_pinocchio_model(ms)
    data = model.createData()
    t0, q, qd = ms.states.random_state(seed=1)
    u = ms.states.speeds_from_rates(t0, q, qd)
    q_pin, v = ms.to_pinocchio(q, u)
    tau = np.zeros(model.nv)
    a = np.asarray(pin.aba(model, data, q_pin, v, tau))
    ref = ms.from_pinocchio(q_pin, v, a)[2]
    calls = {"aba": lambda: pin.aba(model, data, q_pin, v, tau)}
    diff = {}
    for label in formulations:
        cm = get_formulation(label, count_ops=False).derive(ms).numeric(backend="c")
        x = cm.state_from(q, qd, t0)
        calls[label] = functools.partial(cm.rhs, t0, x)
        diff[label] = _relative(cm.speed_derivatives(t0, q, u), ref)
    runs = {label: [] for label in calls}
    for _ in range(repeats):
        for label, call in calls.items():
            runs[label].append(per_call(call, 1))
    return {"runs": runs, "diff": diff, "cflags": " ".join(default_cflags())}


def rhs_rows(got, name):
    """Rows of the rhs table from :func:`_rhs_case`'s samples: median
    microseconds per call, the ratio of medians, and the spread of the
    ratio over the repeats (each repeat's own over aba's, min and max)."""
    aba = got["runs"]["aba"]
    rows = []
    for label, times in got["runs"].items():
        if label == "aba":
            continue
        ratios = [t / s for t, s in zip(times, aba)]
        rows.append(
            {
                "table": "rhs",
                "model": name,
                "formulation": label,
                "c_us": round(statistics.median(times) * 1e6, 3),
                "aba_us": round(statistics.median(aba) * 1e6, 3),
                "ratio": round(statistics.median(times) / statistics.median(aba), 3),
                "ratio_min": round(min(ratios), 3),
                "ratio_max": round(max(ratios), 3),
                "repeats": len(times),
                "ud_reldiff": got["diff"][label],
                "cflags": got["cflags"],
            }
        )
    return rows


# ----------------------------------------------------------------------
# The part
# ----------------------------------------------------------------------
#: Formulations of the agreement: every own one on the small and the
#: floating models, kane (the one the catalogue's robots are checked
#: with) on the fixed-base arms, whose every formulation the robot
#: section's rhs part compares with aba already.
AGREEMENT_FORMULATIONS = (
    "kane",
    "kane_composite",
    "lagrange",
    "modified_lagrange",
    "gibbs_appell",
)
FIXED_FORMULATIONS = ("kane",)
QUADRUPED = "solo12"
RHS_FORMULATIONS = ("kane", "kane_composite")
COUNT_MODELS = ("rx90_floating", "solo12")


def bench_floating(
    out,
    log,
    *,
    cap=120.0,
    repeats=7,
    states=20,
    models=tuple(MODELS),
    formulations=AGREEMENT_FORMULATIONS,
    derive_formulations=AGREEMENT_FORMULATIONS,
    count_models=COUNT_MODELS,
):
    """Run the floating-base part; write ``floating.csv`` into ``out`` and
    return its rows (the markdown:
    :func:`eomcompare.bench.floating_report.floating_markdown`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    log(f"robots 7. floating bases: agreement of u' at {states} random states")
    for name in models:
        floating = MODELS[name][0]
        for f in formulations if floating else FIXED_FORMULATIONS:
            try:
                got = _capped(_agreement_case, name, f, states, cap=cap)
            except Exception as exc:  # a library missing, a file unreadable
                got = {"status": f"failed: {type(exc).__name__}: {exc}"}
            row = {"table": "agreement", "model": name, "formulation": f}
            row.update(got or {"status": "capped"})
            rows.append(row)
            log(
                f"  {name} {f:18s} "
                + " ".join(
                    f"{k}={row[k]:.2g}" if isinstance(row.get(k), float) else ""
                    for k in ("own_pinocchio", "own_mujoco", "pinocchio_mujoco")
                )
                + f" {row['status']}"
            )
    log(f"robots 7b. {QUADRUPED} (free-flyer root) C rhs against Pinocchio aba")
    try:
        got = _capped(
            _rhs_case,
            QUADRUPED,
            RHS_FORMULATIONS,
            repeats,
            cap=cap * len(RHS_FORMULATIONS),
        )
    except Exception as exc:  # no compiler or no Pinocchio: reported
        got = None
        log(f"  not measured ({type(exc).__name__}: {exc})")
    for r in rhs_rows(got, QUADRUPED) if got else []:
        rows.append(r)
        log(
            f"  {r['formulation']:18s} C {r['c_us']} us, aba {r['aba_us']} us: "
            f"x{r['ratio']} (per repeat {r['ratio_min']}..{r['ratio_max']})"
        )
    log(f"robots 7c. {QUADRUPED} derivation seconds against sympy_kane")
    peer = _capped(_derive_case, QUADRUPED, "sympy_kane", cap=cap)
    for f in derive_formulations:
        own = _capped(_derive_case, QUADRUPED, f, cap=cap)
        row = derive_row(
            own, peer, table="derive", model=QUADRUPED, formulation=f, cap_s=cap
        )
        rows.append(row)
        log(
            f"  {f:18s} {row['derive_s']} s vs sympy_kane "
            f"{row['sympy_kane_s'] if peer is not None else f'capped at {cap:g} s'}"
        )
    log("robots 7d. floating-base forward-dynamics counts after cse")
    for name in count_models:
        for f in formulations:
            got = _capped(_count_case, name, f, cap=cap)
            row = {"table": "counts", "model": name, "formulation": f}
            row.update(got or {"status": "capped"})
            row.setdefault("status", "ok")
            rows.append(row)
            log(
                f"  {name} {f:18s} "
                + (
                    f"{row['fd_mul']}/{row['fd_add']}"
                    if got
                    else f"capped at {cap:g} s"
                )
            )
    _write_csv(out / "floating.csv", rows)
    return rows


def _write_csv(path, rows):
    import csv

    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
