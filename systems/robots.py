"""Spatial serial robots: the arms the literature compares formulations on.

* ``ur5``, ``panda``: the URDF files of the ``example-robot-data`` package
  (``pip install 'eomcompare[robots]'``), read by :func:`eomcompare.systems.from_urdf`
  (the Panda with its two finger joints: 9 coordinates, as Pinocchio reads
  the file).
* ``stanford_arm``, ``puma560``: declared here from their published
  standard Denavit-Hartenberg and inertial parameters (below).
* ``stanford_arm(geometry="khalil")``, ``rx90``: Khalil's modified
  Denavit-Hartenberg tables (Khalil & Dombre, *Modeling, Identification and
  Control of Robots*), the robots SYMORO's published operation counts are
  for; body j's frame is Khalil's link frame j (:func:`mdh_system`).
* ``spatial_chain``: Featherstone's benchmark, an unbranched chain of n
  revolute joints with general inertia.

Sources of the parameter tables
-------------------------------
Both tables are the ones reproduced in P. Corke's Robotics Toolbox
(``mdl_puma560.m``/``Puma560.py``, ``stanford.m``/``mdl_stanford.m``),
standard DH (joint i turns about z of frame i-1; frame i = frame i-1
``Rz(theta) Tz(d) Tx(a) Rx(alpha)``), mass centre ``r`` and central inertia
``I`` in frame i, SI units.

Puma 560: P. Corke and B. Armstrong-Helouvry, "A search for consensus
among model parameters reported for the PUMA 560 robot", IEEE ICRA 1994,
pp. 1608-1613 (the toolbox's values; link 1 mass 0 as there, since
Armstrong et al. give only its inertia about the joint axis, 0.35).  Link
3's published principal moments (0.066, 0.086, 0.0125) violate the
triangle inequality of a real body (0.086 > 0.066 + 0.0125), which the
declaration refuses; its smallest is 0.020 here, the least that satisfies
it.  The
base height d1 = 0.6718 m (26.45 in) of the Python toolbox is used; it
moves the arm along the first, vertical axis and changes no dynamics.

Stanford arm: kinematics from Stanford AIM-177 (Fig. 2.3), inertia from
R. P. Paul, *Robot Manipulators* (MIT Press 1981), Tables 6.4-6.6, as in
the toolbox's ``stanford.m`` (1990-2002).  Two transcriptions differ: the
later ``mdl_stanford.m`` / ``Stanford.py`` give link 5 ``I = (0.003,
0.0004, 0)``, ``r = (0, 0.566, 0.003)``, the older ``(0.003, 0.003,
0.0004)``, ``(0, 0, 0.566)``; the later values are the older ones shifted
by one place (and violate the triangle inequality of principal moments,
0.003 > 0.0004 + 0), so the older ones are used.  ``Stanford.py`` also
gives the prismatic link ``a = 0.0203``, the Puma's a3; the AIM-177 table
has 0, used here.  The mass-centre offsets of links 2, 3 and 6 (-1.054,
-6.447, 1.554 m) cannot be metres for an arm of 1.3 m reach (probably
centimetres in Paul's table); they are kept as published, since the
comparisons here need a valid model, not a faithful Stanford arm.
Motor armature inertias and gear ratios are left out: rigid links only.
"""

from __future__ import annotations

import functools
import os
from importlib import metadata

import numpy as np
import sympy as sm

from .base import MechanicalSystem
from .catalogue import register_system
from .urdf import JointSpec, declare_tree, from_urdf, inertia_symbols

__all__ = [
    "robot_data_path",
    "STANFORD_ARM",
    "PUMA560",
    "dh_system",
    "mdh_system",
    "mdh_specs",
    "KHALIL_STANFORD_ARM",
    "RX90",
    "KHALIL_LENGTHS",
    "MASS_CENTRES",
    "spatial_chain_values",
]


def robot_data_path(relative: str) -> str:
    """The path of a file of the ``example-robot-data`` package, e.g.
    ``"panda_description/urdf/panda.urdf"``.

    The package installs its robots under ``share/example-robot-data/robots``
    of its prefix (``cmeel.prefix`` in site-packages for the wheel);
    ``$EXAMPLE_ROBOT_DATA_DIR`` overrides the search.

    Raises
    ------
    FileNotFoundError
        When the package is not installed (naming the extra to install).
    """
    candidates = []
    if os.environ.get("EXAMPLE_ROBOT_DATA_DIR"):
        candidates.append(os.environ["EXAMPLE_ROBOT_DATA_DIR"])
    try:
        dist = metadata.distribution("example-robot-data")
        candidates.append(
            str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
        )
    except metadata.PackageNotFoundError:
        pass
    for root in candidates:
        path = os.path.join(root, relative)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        f"{relative!r} of example-robot-data not found (searched "
        f"{candidates}); pip install 'eomcompare[robots]'"
    )


@register_system("ur5", heavy=True, oracle="pinocchio")
def ur5(symbolic_inertia: bool = False) -> MechanicalSystem:
    """Universal Robots UR5, six revolute joints, from example-robot-data's
    ``ur_description/urdf/ur5_robot.urdf`` (see :func:`eomcompare.systems.from_urdf`
    for the conventions)."""
    return from_urdf(
        robot_data_path("ur_description/urdf/ur5_robot.urdf"),
        name="ur5",
        symbolic_inertia=symbolic_inertia,
    )


@register_system("panda", heavy=True, oracle="pinocchio")
def panda(symbolic_inertia: bool = False) -> MechanicalSystem:
    """Franka Emika Panda from example-robot-data's
    ``panda_description/urdf/panda.urdf``: seven revolute joints and the
    two prismatic finger joints (the mimic tag ignored, as Pinocchio
    does), 9 coordinates."""
    return from_urdf(
        robot_data_path("panda_description/urdf/panda.urdf"),
        name="panda",
        symbolic_inertia=symbolic_inertia,
    )


# ----------------------------------------------------------------------
# Robots declared from Denavit-Hartenberg tables
# ----------------------------------------------------------------------
_HALF_PI = sm.pi / 2

#: (kind, theta offset, d, a, alpha, m, r, I = (xx, yy, zz, xy, yz, xz)),
#: standard DH; for the prismatic joint d is the offset added to q.
PUMA560 = (
    ("R", 0, 0.6718, 0, _HALF_PI, 0.0, (0, 0, 0), (0, 0.35, 0, 0, 0, 0)),
    (
        "R",
        0,
        0,
        0.4318,
        0,
        17.4,
        (-0.3638, 0.006, 0.2275),
        (0.13, 0.524, 0.539, 0, 0, 0),
    ),
    (
        "R",
        0,
        0.15005,
        0.0203,
        -_HALF_PI,
        4.8,
        (-0.0203, -0.0141, 0.070),
        (0.066, 0.086, 0.020, 0, 0, 0),
    ),
    (
        "R",
        0,
        0.4318,
        0,
        _HALF_PI,
        0.82,
        (0, 0.019, 0),
        (1.8e-3, 1.3e-3, 1.8e-3, 0, 0, 0),
    ),
    ("R", 0, 0, 0, -_HALF_PI, 0.34, (0, 0, 0), (0.3e-3, 0.4e-3, 0.3e-3, 0, 0, 0)),
    ("R", 0, 0, 0, 0, 0.09, (0, 0, 0.032), (0.15e-3, 0.15e-3, 0.04e-3, 0, 0, 0)),
)
STANFORD_ARM = (
    (
        "R",
        0,
        0.412,
        0,
        -_HALF_PI,
        9.29,
        (0, 0.0175, -0.1105),
        (0.276, 0.255, 0.071, 0, 0, 0),
    ),
    ("R", 0, 0.154, 0, _HALF_PI, 5.01, (0, -1.054, 0), (0.108, 0.018, 0.100, 0, 0, 0)),
    ("P", -_HALF_PI, 0, 0, 0, 4.25, (0, 0, -6.447), (2.51, 2.51, 0.006, 0, 0, 0)),
    ("R", 0, 0, 0, -_HALF_PI, 1.08, (0, 0.092, -0.054), (0.002, 0.001, 0.001, 0, 0, 0)),
    ("R", 0, 0, 0, _HALF_PI, 0.63, (0, 0, 0.566), (0.003, 0.003, 0.0004, 0, 0, 0)),
    ("R", 0, 0.263, 0, 0, 0.51, (0, 0, 1.554), (0.013, 0.013, 0.0003, 0, 0, 0)),
)


def _rot(axis, angle):
    c, s = sm.cos(angle), sm.sin(angle)
    if axis == "x":
        return sm.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])
    return sm.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _num(x):
    """Exact 0 and integers as integers (no multiplications by 1.0)."""
    x = sm.sympify(x)
    if x.is_Number and x == int(x):
        return sm.Integer(int(x))
    return sm.Float(x) if x.is_Number else x


#: Where :func:`dh_system` may put the mass centres.
MASS_CENTRES = ("general", "joint_axes")


def _check_inertia_options(symbolic_inertia, principal_axes, mass_centres):
    for label, flag in (
        ("symbolic_inertia", symbolic_inertia),
        ("principal_axes", principal_axes),
    ):
        if not isinstance(flag, bool):
            raise TypeError(f"{label} must be True or False, not {flag!r}")
    if mass_centres not in MASS_CENTRES:
        raise ValueError(
            f"mass_centres must be one of {list(MASS_CENTRES)}, not {mass_centres!r}"
        )


def _inertial(k, m, r_body, I_vals, params, symbolic_inertia, principal_axes, on_axis):
    """Mass, mass centre and central inertia ``(xx, yy, zz, xy, yz, zx)``
    of body k in its own frame under the modelling assumptions of
    :func:`dh_system` (symbols with the values as defaults, added to
    ``params``, or the numbers)."""
    if on_axis:
        r_body = sm.Matrix([0, 0, r_body[2]])
    if principal_axes:
        I_vals = list(I_vals[:3]) + [0, 0, 0]
    if symbolic_inertia:
        ms, cs, Is = inertia_symbols(k)
        if principal_axes:
            Is = Is[:3] + (sm.Integer(0),) * 3
        if on_axis:
            cs = (sm.Integer(0), sm.Integer(0), cs[2])
        params[ms] = float(m)
        params.update({c: float(v) for c, v in zip(cs, r_body) if c.is_Symbol})
        params.update({s: float(v) for s, v in zip(Is, I_vals) if s.is_Symbol})
        return ms, cs, Is
    return (
        _num(m),
        tuple(_num(v) for v in r_body),
        tuple(_num(v) for v in I_vals),
    )


def dh_system(
    name,
    table,
    *,
    symbolic_inertia=False,
    principal_axes=False,
    mass_centres="general",
    description="",
):
    """The system of a standard-DH table (rows as :data:`PUMA560`).

    Body k's frame is DH frame k-1 turned by the joint (``Rz(theta)``, or
    moved by ``Tz(q)``), so that joint k+1 sits at ``Tz(d_k) Tx(a_k)
    Rx(alpha_k)`` in it; the table's mass centre and inertia, given in DH
    frame k, are carried over by that transform.  ``q_k`` is the table's
    joint variable less its offset (``theta_k`` or ``d_k``).

    Modelling assumptions (both keep every remaining quantity, symbolic or
    numeric, as it is):

    * ``principal_axes=True``: each body's central principal axes are
      parallel to its link frame, so its three products of inertia are
      exactly zero (with ``symbolic_inertia``: no product symbols);
    * ``mass_centres="joint_axes"``: each body's mass centre lies on the
      axis of the joint that moves it (its x and y coordinates in the body
      frame exactly zero; the table's values are projected onto the axis).
      ``"general"`` (default): anywhere.

    Raises
    ------
    TypeError
        When ``principal_axes`` or ``symbolic_inertia`` is not a bool.
    ValueError
        When ``mass_centres`` is not one of :data:`MASS_CENTRES`.
    """
    _check_inertia_options(symbolic_inertia, principal_axes, mass_centres)
    on_axis = mass_centres == "joint_axes"
    specs, params = [], {}
    prev = (sm.eye(3), sm.zeros(3, 1))  # DH frame k-1 in body k-1
    for k, (kind, theta, d, a, alpha, m, r, I) in enumerate(table, start=1):
        R_prev, p_prev = prev
        # Joint frame in the parent body: DH frame k-1 turned by the
        # offset; a prismatic joint's d moves with q, which starts at d_k.
        R_joint = R_prev * _rot("z", theta)
        fixed_p = sm.Matrix([a, 0, d])
        # DH frame k in body k.
        R_k = _rot("x", alpha)
        r_body = fixed_p + R_k * sm.Matrix(r)
        Ixx, Iyy, Izz, Ixy, Iyz, Ixz = I
        Ik = sm.Matrix([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
        I_body = R_k * Ik * R_k.T
        I_vals = [
            I_body[0, 0],
            I_body[1, 1],
            I_body[2, 2],
            I_body[0, 1],
            I_body[1, 2],
            I_body[2, 0],
        ]
        mass, com, inertia = _inertial(
            k, m, r_body, I_vals, params, symbolic_inertia, principal_axes, on_axis
        )
        specs.append(
            JointSpec(
                joint=f"joint{k}",
                body=f"link{k}",
                kind="revolute" if kind == "R" else "prismatic",
                parent=k - 1,
                rotation=sm.ImmutableMatrix(R_joint),
                offset=sm.ImmutableMatrix(p_prev),
                axis=sm.ImmutableMatrix([0, 0, 1]),
                mass=mass,
                com=tuple(com),
                inertia=tuple(inertia),
            )
        )
        prev = (R_k, fixed_p)
    return _declare_arm(
        "dh",
        name,
        specs,
        params,
        description,
        symbolic_inertia,
        principal_axes,
        mass_centres,
    )


# ----------------------------------------------------------------------
# Robots declared from Khalil's modified Denavit-Hartenberg tables
# ----------------------------------------------------------------------
#: Geometry symbols of Khalil's tables and their values (m): the Stanford
#: arm's shoulder offset RL2 (AIM-177's d2), the RX-90's upper arm D3 and
#: forearm RL4 (Staubli's 450 mm each).
RL2, D3, RL4 = sm.symbols("RL2 D3 RL4", positive=True)
KHALIL_LENGTHS = {RL2: 0.154, D3: 0.45, RL4: 0.45}

#: (sigma, alpha, d, theta, r) per joint, Khalil's modified DH (Khalil &
#: Dombre, *Modeling, Identification and Control of Robots*, ch. 3 and 9):
#: frame j = frame j-1 ``Rx(alpha) Tx(d) Rz(theta) Tz(r)``; sigma 0:
#: revolute, theta = q + the table's theta; 1: prismatic, r = q + the
#: table's r.
KHALIL_STANFORD_ARM = (
    (0, 0, 0, 0, 0),
    (0, -_HALF_PI, 0, 0, RL2),
    (1, _HALF_PI, 0, 0, 0),
    (0, 0, 0, 0, 0),
    (0, -_HALF_PI, 0, 0, 0),
    (0, _HALF_PI, 0, 0, 0),
)
RX90 = (
    (0, 0, 0, 0, 0),
    (0, _HALF_PI, 0, 0, 0),
    (0, 0, D3, 0, 0),
    (0, -_HALF_PI, 0, 0, RL4),
    (0, _HALF_PI, 0, 0, 0),
    (0, -_HALF_PI, 0, 0, 0),
)


def mdh_specs(
    table, *, symbolic_inertia=False, principal_axes=False, mass_centres="general"
):
    """The joint specs (:class:`eomcompare.systems.urdf.JointSpec`) and
    parameter values of a modified-DH table, as :func:`mdh_system` declares
    them (options as its)."""
    _check_inertia_options(symbolic_inertia, principal_axes, mass_centres)
    on_axis = mass_centres == "joint_axes"
    specs, params = [], {}
    for j, (sigma, alpha, d, theta, r) in enumerate(table, start=1):
        R = _rot("x", alpha) * _rot("z", theta)
        offset = sm.Matrix([d, 0, 0]) + _rot("x", alpha) * sm.Matrix([0, 0, r])
        params.update(
            {x: KHALIL_LENGTHS[x] for x in offset.free_symbols | R.free_symbols}
        )
        v = spatial_chain_values(j)
        mass, com, inertia = _inertial(
            j,
            v["m"],
            sm.Matrix(v["c"]),
            v["I"],
            params,
            symbolic_inertia,
            principal_axes,
            on_axis,
        )
        specs.append(
            JointSpec(
                joint=f"joint{j}",
                body=f"link{j}",
                kind="prismatic" if sigma else "revolute",
                parent=j - 1,
                rotation=sm.ImmutableMatrix(R),
                offset=sm.ImmutableMatrix(offset),
                axis=sm.ImmutableMatrix([0, 0, 1]),
                mass=mass,
                com=tuple(com),
                inertia=tuple(inertia),
            )
        )
    return specs, params


def mdh_system(
    name,
    table,
    *,
    symbolic_inertia=False,
    principal_axes=False,
    mass_centres="general",
    description="",
):
    """The system of a modified-DH table (rows as :data:`RX90`), body j's
    frame being Khalil's link frame j, so that each body's inertial
    parameters are those of SYMORO's link j.

    Joint j's frame in body j-1 is ``Rx(alpha_j) Tx(d_j) Rz(theta_j)
    Tz(r_j)`` with the joint variable's entry at its offset; body j is that
    frame turned about (moved along) its z by ``q_j``.  The table's
    geometry symbols (:data:`KHALIL_LENGTHS`) stay symbols, as in SYMORO's
    models.  No inertia is published with the tables: each body's mass,
    mass centre and central inertia default to the physically valid values
    of :func:`spatial_chain_values` (placeholders: the counts and identities
    these robots serve do not depend on them).  ``principal_axes`` and
    ``mass_centres`` as in :func:`dh_system` (the link frame's z is the
    joint axis, so ``"joint_axes"`` sets SYMORO's MX = MY = 0 and
    ``principal_axes`` its XY = XZ = YZ = 0).

    Raises
    ------
    TypeError, ValueError
        As :func:`dh_system`, for bad options.
    """
    specs, params = mdh_specs(
        table,
        symbolic_inertia=symbolic_inertia,
        principal_axes=principal_axes,
        mass_centres=mass_centres,
    )
    return _declare_arm(
        "mdh",
        name,
        specs,
        params,
        description,
        symbolic_inertia,
        principal_axes,
        mass_centres,
    )


@register_system("puma560", heavy=True, oracle="pinocchio")
def puma560(symbolic_inertia: bool = False) -> MechanicalSystem:
    """Unimation Puma 560, six revolute joints, standard DH parameters and
    inertia of Corke & Armstrong-Helouvry (1994) (see the module)::

        q1 waist (vertical), q2 shoulder, q3 elbow, q4-q6 wrist (gravity -z)
    """
    return dh_system(
        "puma560",
        PUMA560,
        symbolic_inertia=symbolic_inertia,
        description=puma560.__doc__,
    )


@register_system("stanford_arm", heavy=True, oracle="pinocchio")
def stanford_arm(
    symbolic_inertia: bool = False,
    principal_axes: bool = False,
    mass_centres: str = "general",
    geometry: str = "aim177",
) -> MechanicalSystem:
    """Stanford (Scheinman) arm: revolute, revolute, prismatic (q3, the
    boom's extension), three revolute wrist joints; AIM-177 kinematics and
    Paul's (1981) inertia (see the module).

    ``principal_axes=True`` (products of inertia zero in the link frames)
    and ``mass_centres="joint_axes"`` (each mass centre on its joint's
    axis) are the special cases under which operation counts of the
    literature are usually stated (see :func:`dh_system`); Paul's table has
    zero products already, so ``principal_axes`` changes only the symbolic
    form.

    ``geometry="khalil"``: Khalil's modified-DH table instead
    (:data:`KHALIL_STANFORD_ARM`: a symbolic shoulder offset ``RL2``, no
    base height or tool offset; placeholder inertia, see
    :func:`mdh_system`), the arm SYMORO's published operation counts are
    for.
    """
    if geometry == "khalil":
        return mdh_system(
            "stanford_arm",
            KHALIL_STANFORD_ARM,
            symbolic_inertia=symbolic_inertia,
            principal_axes=principal_axes,
            mass_centres=mass_centres,
            description=stanford_arm.__doc__,
        )
    if geometry != "aim177":
        raise ValueError(
            f"geometry must be one of ['aim177', 'khalil'], not {geometry!r}"
        )
    return dh_system(
        "stanford_arm",
        STANFORD_ARM,
        symbolic_inertia=symbolic_inertia,
        principal_axes=principal_axes,
        mass_centres=mass_centres,
        description=stanford_arm.__doc__,
    )


@register_system("rx90", heavy=True, oracle="pinocchio")
def rx90(
    symbolic_inertia: bool = False,
    principal_axes: bool = False,
    mass_centres: str = "general",
) -> MechanicalSystem:
    """Staubli RX-90, a PUMA-like arm of six revolute joints (joints 2 and
    3 parallel, a spherical wrist), from Khalil's modified-DH table
    (:data:`RX90`, symbolic ``D3`` and ``RL4``) with placeholder inertia
    (see :func:`mdh_system`); options as :func:`stanford_arm`'s.
    """
    return mdh_system(
        "rx90",
        RX90,
        symbolic_inertia=symbolic_inertia,
        principal_axes=principal_axes,
        mass_centres=mass_centres,
        description=rx90.__doc__,
    )


# ----------------------------------------------------------------------
# Featherstone's spatial chain
# ----------------------------------------------------------------------
@functools.cache
def spatial_chain_values(k: int) -> dict:
    """Default values of link k of :func:`spatial_chain` (the same for
    every n): DH twist, offsets, mass, mass centre and a physically valid
    general central inertia (principal moments obeying the triangle
    inequality, principal axes turned at random)."""
    rng = np.random.default_rng(1000 + k)
    alpha = rng.uniform(-np.pi, np.pi)
    a, d = rng.uniform(0.1, 0.5, size=2)
    m = rng.uniform(0.5, 3.0)
    c = rng.uniform(-0.2, 0.2, size=3)
    x, y, z = rng.uniform(0.01, 0.1, size=3) * m
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    I = Q @ np.diag([y + z, x + z, x + y]) @ Q.T
    return {
        "alpha": alpha,
        "a": a,
        "d": d,
        "m": m,
        "c": c,
        "I": (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[1, 2], I[2, 0]),
    }


@register_system("spatial_chain", heavy=True, sizes=(2, 4, 6), oracle="pinocchio")
def spatial_chain(n: int = 6, symbolic_inertia: bool = True) -> MechanicalSystem:
    """Featherstone's benchmark: an unbranched chain of n revolute joints
    with general inertia (Featherstone, *Rigid Body Dynamics Algorithms*,
    2008, Table 10.1 gives the operation counts of RNEA, CRBA and ABA on
    it).

    Joint k+1 sits in body k at the DH placement ``Tz(d_k) Tx(a_k)
    Rx(alpha_k)`` (four parameters place any line relative to another, the
    fourth absorbed into the joint angle, so the geometry is general) and
    turns about its own z axis.  Each body has the ten inertial parameters
    ``m{k}``, ``cx{k}..cz{k}``, ``I{k}_xx..I{k}_zx`` (symbols by default,
    numbers with ``symbolic_inertia=False``); the geometry ``alpha{k}``,
    ``a{k}``, ``d{k}`` is symbolic.  Default values: see
    :func:`spatial_chain_values`.  Gravity -z.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, not {n!r}")
    if not isinstance(symbolic_inertia, bool):
        raise TypeError("symbolic_inertia must be True or False")
    specs, params = [], {}
    for k in range(1, n + 1):
        v = spatial_chain_values(k)
        if k == 1:
            R, p = sm.eye(3), sm.zeros(3, 1)
        else:
            w = spatial_chain_values(k - 1)
            al, a, d = sm.symbols(f"alpha{k - 1} a{k - 1} d{k - 1}", real=True)
            params.update({al: w["alpha"], a: w["a"], d: w["d"]})
            R, p = _rot("x", al), sm.Matrix([a, 0, d])
        if symbolic_inertia:
            m, c, I = inertia_symbols(k)
            params[m] = v["m"]
            params.update(zip(c, v["c"]))
            params.update(zip(I, v["I"]))
        else:
            m = sm.Float(v["m"])
            c = tuple(sm.Float(x) for x in v["c"])
            I = tuple(sm.Float(x) for x in v["I"])
        specs.append(
            JointSpec(
                joint=f"joint{k}",
                body=f"link{k}",
                kind="revolute",
                parent=k - 1,
                rotation=sm.ImmutableMatrix(R),
                offset=sm.ImmutableMatrix(p),
                axis=sm.ImmutableMatrix([0, 0, 1]),
                mass=m,
                com=tuple(c),
                inertia=tuple(I),
            )
        )
    return declare_tree(
        "spatial_chain",
        specs,
        params,
        description=spatial_chain.__doc__,
        options={
            "family": "spatial_chain",
            "n": n,
            "symbolic_inertia": symbolic_inertia,
        },
    )


def _declare_arm(
    family,
    name,
    specs,
    params,
    description,
    symbolic_inertia,
    principal_axes,
    mass_centres,
):
    """The joint tree of a (modified-)DH arm, with the options a run and
    the report read back: the table's family and name and the inertia
    assumptions that differ from the default."""
    return declare_tree(
        name,
        specs,
        params,
        description=description,
        options={
            "family": family,
            "table": name,
            "symbolic_inertia": symbolic_inertia,
        }
        | ({"principal_axes": True} if principal_axes else {})
        | ({"mass_centres": mass_centres} if mass_centres == "joint_axes" else {}),
    )
