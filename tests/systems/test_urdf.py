"""URDF import: every joint type against Pinocchio reading the same file,
the conventions (joint order, rounded angles, symbolic inertia), and the
errors for files that cannot be imported."""

from __future__ import annotations

import functools
import time

import numpy as np
import pinocchio as pin
import pytest
import sympy as sm
from helpers import worst_relative_deviation

from eomcompare.bench.robots import urdf_chain
from eomcompare.formulations import get_formulation
from eomcompare.references.robot_oracle import (
    urdf_pinocchio_accelerations,
    urdf_pinocchio_model,
)
from eomcompare.symbolic.calculus import subexpressions
from eomcompare.symbolic.counting import tree_size
from eomcompare.systems import DeclarationError, from_urdf

OWN = ("kane", "lagrange", "modified_lagrange", "gibbs_appell")


def inertial(m, xyz="0 0 0", rpy="0 0 0", I=(0.2, 0.25, 0.3, 0.01, -0.02, 0.03)):
    ixx, iyy, izz, ixy, ixz, iyz = I
    return (
        f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{m}"/>'
        f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" '
        f'ixz="{ixz}" iyz="{iyz}"/></inertial>'
    )


def link(name, body=""):
    return f'<link name="{name}">{body}</link>'


def joint(name, kind, parent, child, xyz="0 0 0", rpy="0 0 0", axis=None, extra=""):
    ax = f'<axis xyz="{axis}"/>' if axis else ""
    lim = (
        '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
        if kind in ("revolute", "prismatic")
        else ""
    )
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
        f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/>'
        f"{ax}{lim}{extra}</joint>"
    )


def robot(*parts, name="r"):
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


def worst_deviation(ms, formulation, n_states=10, **derive_options):
    """q'' of ``formulation`` (with ``derive_options``) against Pinocchio's
    ``aba`` on the model Pinocchio reads from the same URDF."""
    eom = get_formulation(formulation, count_ops=False, **derive_options).derive(ms)
    return deviation_of(eom, n_states)


def deviation_of(eom, n_states=10):
    """:func:`worst_deviation` of equations derived already (of a system
    read by :func:`from_urdf`)."""
    ms = eom.system
    model = urdf_pinocchio_model(ms)
    return worst_relative_deviation(
        eom.numeric(),
        ms,
        lambda q, qd: urdf_pinocchio_accelerations(ms, q, qd, model=model),
        n_states,
    )


# Each joint type, with rotated joint origins, rotated inertial frames and
# axes not along the parent's axes, so that a convention mixed up anywhere
# (rpy order, sign of an axis, inertia frame) changes q''.
REVOLUTE = robot(
    link("base"),
    link("a", inertial(1.3, "0.1 -0.2 0.3", "0.3 -0.2 0.5")),
    link(
        "b", inertial(0.7, "0 0.1 -0.25", "0 0 0", (0.05, 0.04, 0.02, 0.0, 0.005, 0.0))
    ),
    joint("j1", "revolute", "base", "a", "0.1 0 0.2", "0.4 0.1 -0.3", "0 0 -1"),
    joint("j2", "revolute", "a", "b", "0 0.3 0.1", "1.2 -0.7 0.2", "0 1 0"),
)
CONTINUOUS = robot(
    link("base"),
    link("a", inertial(2.0, "0.2 0.1 0", "0.1 0.2 0.3")),
    link("b", inertial(0.9, "0.1 0 -0.2")),
    joint("j1", "continuous", "base", "a", "0 0 0.5", "0 0.3 0", "1 1 0"),
    joint("j2", "continuous", "a", "b", "0.4 0 0", "0.2 0 0", "0.2 -0.5 0.8"),
)
PRISMATIC = robot(
    link("base"),
    link("slider", inertial(1.5, "0.1 0 0.05")),
    link("arm", inertial(0.6, "0 0 -0.3", "0.2 0 0.1")),
    joint("j1", "prismatic", "base", "slider", "0 0.1 0", "0.3 0.2 0.1", "0.6 0 0.8"),
    joint("j2", "revolute", "slider", "arm", "0.2 0 0", "0 0 0", "1 0 0"),
    joint("j3", "prismatic", "arm", "tip", "0 0 -0.4", "0 0 0", "0 0 1"),
    link("tip", inertial(0.3)),
)
FIXED = robot(
    link("world"),
    link("pedestal", inertial(5.0, "0 0 0.2")),  # fixed to the ground
    link("a", inertial(1.0, "0 0 0.1")),
    link("a_bracket", inertial(0.4, "0.1 0.2 0", "0.5 0 0")),
    link("a_sensor", inertial(0.2, "0 0 0.05")),
    link("a_marker"),  # no inertial: fine
    link("b", inertial(0.8, "0.2 0 0")),
    joint("f0", "fixed", "world", "pedestal", "0 0 0.3", "0 0 0.7"),
    joint("j1", "revolute", "pedestal", "a", "0 0 0.4", "0 0 0", "0 0 1"),
    joint("f1", "fixed", "a", "a_bracket", "0.3 0 0", "0 1.5707963267949 0"),
    joint("f2", "fixed", "a_bracket", "a_sensor", "0 0.1 0", "0.3 0 0"),
    joint("f3", "fixed", "a", "a_marker", "0 0 0.1"),
    # Moved by a joint placed in a link merged into body a.
    joint("j2", "revolute", "a_bracket", "b", "0 0 0.2", "0.1 0.2 0", "0 1 0"),
)
# Branches whose joint names sort otherwise than the document order.
TREE = robot(
    link("root"),
    link("L1", inertial(1.0, "0.1 0 0")),
    link("L2", inertial(1.2, "0 0.1 0")),
    link("L3", inertial(0.5, "0 0 0.1")),
    link("L4", inertial(0.7, "0.1 0.1 0")),
    joint("zz", "revolute", "root", "L1", "0 0 0.1", "0 0 0", "0 0 1"),
    joint("mm", "continuous", "L1", "L4", "0.2 0 0", "0 0 0", "0 1 1"),
    joint("aa", "revolute", "root", "L2", "0 0.3 0", "0 0 0", "1 0 0"),
    joint("bb", "prismatic", "L1", "L3", "0 0 0.2", "0 0 0", "0 1 0"),
)


@functools.cache
def imported(text, **options):
    """``from_urdf(text, **options)``, read once per worker: the tests of
    the formulations on one file (here and in
    tests/systems/test_robots_articulated_body.py) only read the
    declaration; the tests of the import itself call :func:`from_urdf`."""
    return from_urdf(text, **options)


@pytest.mark.parametrize("formulation", OWN + ("sympy_kane",))
@pytest.mark.parametrize(
    "text",
    [REVOLUTE, CONTINUOUS, PRISMATIC, FIXED, TREE],
    ids=["revolute", "continuous", "prismatic", "fixed", "tree"],
)
def test_joint_types_against_pinocchio(text, formulation):
    assert worst_deviation(imported(text), formulation) < 1e-10


def test_pinocchio_joint_order():
    ms = from_urdf(TREE)
    model = pin.buildModelFromXML(TREE)
    # Depth first, children in the order of their joint names.
    assert ms.options["joints"] == tuple(model.names[1:]) == ("aa", "zz", "bb", "mm")
    assert ms.options["joint_types"] == (
        "revolute",
        "revolute",
        "prismatic",
        "continuous",
    )


def test_fixed_joints_merge_links():
    ms = from_urdf(FIXED)
    # The pedestal is ground; a, a_bracket, a_sensor (and a_marker) are one
    # body; b the other.
    assert [b.name for b in ms.bodies] == ["a", "b"]
    assert float(ms.bodies[0].mass) == pytest.approx(1.6)
    model = pin.buildModelFromXML(FIXED)
    assert float(ms.bodies[0].mass) == pytest.approx(model.inertias[1].mass)


def test_damping_option_against_pinocchio():
    text = REVOLUTE.replace("</joint>", '<dynamics damping="0.7"/></joint>', 1)
    text = text.replace(
        'axis xyz="0 1 0"/>', 'axis xyz="0 1 0"/><dynamics damping="0.3"/>'
    )
    plain = from_urdf(text)
    damped = from_urdf(text, damping=True)
    assert not plain.options["damping"] and damped.options["damping"]
    kane = get_formulation("kane", count_ops=False)
    damped_kane = kane.derive(damped)
    assert deviation_of(damped_kane) < 1e-10
    assert worst_deviation(damped, "lagrange") < 1e-10
    # The option changes the accelerations (the oracle adds -b q' too).
    t0, q, qd = damped.states.random_state(0)
    a = kane.derive(plain).numeric()
    b = damped_kane.numeric()
    assert (
        np.max(
            np.abs(
                a.coordinate_accelerations(t0, q, qd)
                - b.coordinate_accelerations(t0, q, qd)
            )
        )
        > 1e-3
    )


def test_symbolic_inertia_keeps_symbols_with_file_defaults():
    ms = from_urdf(REVOLUTE, symbolic_inertia=True)
    names = {str(s) for s in ms.parameters}
    for k in (1, 2):
        assert {
            f"m{k}",
            f"cx{k}",
            f"cy{k}",
            f"cz{k}",
            f"I{k}_xx",
            f"I{k}_yy",
            f"I{k}_zz",
            f"I{k}_xy",
            f"I{k}_yz",
            f"I{k}_zx",
        } <= names
    eom = get_formulation("kane", count_ops=False).derive(ms)
    free = {str(s) for s in eom.mass_matrix.free_symbols}
    assert {"m2", "I2_xy", "I1_zz", "cx2"} <= free
    # The defaults are the file's values: same q'' as Pinocchio.
    assert deviation_of(eom) < 1e-10
    values = dict(zip(map(str, ms.parameters), ms.states.parameter_vector()))
    assert values["m1"] == 1.3 and values["g"] == 9.81


# Eleven decimals, as xacro writes pi/2 and pi.
ROUNDED = robot(
    link("base"),
    link("a", inertial(2.0, "0 0 0.2")),
    link("b", inertial(1.0, "0.1 0 0.25")),
    link("c", inertial(0.5, "0 0.05 0.1")),
    joint("j1", "revolute", "base", "a", "0 0 0.1", "0 0 3.14159265359", "0 0 1"),
    joint("j2", "revolute", "a", "b", "0 0.1 0.2", "0 1.57079632679 0", "0 1 0"),
    joint("j3", "revolute", "b", "c", "0 0 0.4", "-1.57079632679 0 0", "0 0 1"),
)


def _tiny_floats(ms):
    out = []
    for F in [ms.frame] + [b.frame for b in ms.bodies]:
        for dcm in F._dcm_dict.values():
            out += [x for x in dcm.atoms(sm.Float) if abs(x) < 1e-6]
    return out


def test_rounded_angles_snap_to_exact_rotations():
    snapped = from_urdf(ROUNDED)
    literal = from_urdf(ROUNDED, snap=0)
    assert _tiny_floats(literal), "the file's rounding leaves residues"
    assert not _tiny_floats(snapped)
    # Snapping changes the model by the rounding (~1e-12 rad): Pinocchio,
    # which reads the rounded numbers, agrees with the literal import to
    # round-off and with the snapped one to the size of the rounding.
    # One derivation of each, with the counts compared below.
    kane = get_formulation("kane")
    eoms = {"snapped": kane.derive(snapped), "literal": kane.derive(literal)}
    exact = deviation_of(eoms["literal"])
    rounded = deviation_of(eoms["snapped"])
    assert exact < 1e-13
    assert rounded < 1e-9
    # The snapped equations are smaller.
    ops = {label: eom.op_counts["cse"] for label, eom in eoms.items()}
    assert ops["snapped"] < ops["literal"]


def test_source_path_and_text_give_the_same_system(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text(PRISMATIC)
    a, b, c = from_urdf(path), from_urdf(str(path)), from_urdf(PRISMATIC)
    assert a.fingerprint() == b.fingerprint() == c.fingerprint()
    assert from_urdf(PRISMATIC, name="slider").name == "slider"
    assert a.name == "r"


def test_a_30_link_chain_is_declared_walking_each_subexpression_once():
    """The velocities of a chain nest: as trees they double with every
    link, as graphs they grow linearly.  The declaration's checks walk the
    graph (each distinct subexpression once), so 30 links are declared in
    seconds, where a walk of the trees would take hours."""
    start = time.process_time()
    ms = from_urdf(urdf_chain(30))
    seconds = time.process_time() - start
    N = ms.frame
    velocities = [x for b in ms.bodies for m, _ in b.masscenter.vel(N).args for x in m]
    paths = sum(tree_size(e, {}) for e in velocities)
    nodes = list(subexpressions(velocities))
    assert paths > 10**8
    assert len(nodes) == len(set(nodes)) < 10**4
    assert {str(c) for c in ms.constants()} == {"g"}
    # About 5 s of CPU time (python -m eomcompare bench, robots part 5); the
    # walk of the trees took 17 s at 20 links, twice as long with each link.
    assert seconds < 60, seconds


# ----------------------------------------------------------------------
# Bad files
# ----------------------------------------------------------------------
TWO = (link("base"), link("a", inertial(1.0)), link("b", inertial(1.0)))
#: A base and a continuous joint moving link "a", declared by each case.
ONE_JOINT = (link("base"), joint("j1", "continuous", "base", "a", axis="0 0 1"))


@pytest.mark.parametrize(
    "text,match",
    [
        (
            robot(
                *TWO,
                joint("j1", "revolute", "base", "a", axis="0 0 1"),
                joint("j2", "ball", "a", "b"),
            ),
            r"unknown type 'ball'.*valid joint types: \['revolute', 'continuous', "
            r"'prismatic', 'fixed'\]",
        ),
        (
            robot(
                *TWO,
                joint("free", "floating", "base", "a"),
                joint("j2", "revolute", "a", "b", axis="0 0 1"),
            ),
            "floating base.*not supported yet",
        ),
        (
            robot(
                *TWO,
                joint("j1", "planar", "base", "a", axis="0 0 1"),
                joint("j2", "revolute", "a", "b", axis="0 0 1"),
            ),
            "planar joint is not supported yet",
        ),
        (
            robot(
                *TWO,
                link("c", inertial(1.0)),
                joint("j1", "revolute", "base", "a", axis="0 0 1"),
                joint("j2", "revolute", "a", "b", axis="0 0 1"),
                joint("j3", "revolute", "base", "c", axis="0 0 1"),
                joint("j4", "revolute", "c", "b", axis="0 0 1"),
            ),
            "closed kinematic loop: link 'b' is the child of joints 'j2' and 'j4'",
        ),
        (
            robot(
                *TWO,
                joint("j1", "revolute", "a", "b", axis="0 0 1"),
                joint("j2", "revolute", "b", "a", axis="0 0 1"),
            ),
            "closed kinematic loop through links",
        ),
        (
            robot(
                link("base"),
                link("a"),
                link("b", inertial(1.0)),
                joint("j1", "revolute", "base", "a", axis="0 0 1"),
                joint("j2", "revolute", "a", "b", axis="0 1 0"),
            ),
            r"link 'a' \(moved by joint 'j1'\).*no <inertial> mass",
        ),
        (
            robot(*TWO, joint("j1", "revolute", "base", "arm", axis="0 0 1")),
            "names child link 'arm', which is not declared",
        ),
        (
            robot(*TWO, joint("j1", "revolute", "base", "a", axis="0 0 1")),
            r"do not form one tree: links \['b', 'base'\]",
        ),
        (
            robot(
                *TWO, joint("j1", "fixed", "base", "a"), joint("j2", "fixed", "a", "b")
            ),
            "no revolute, continuous or prismatic joint",
        ),
        (
            robot(
                *TWO,
                joint("j1", "revolute", "base", "a", axis="0 0 0"),
                joint("j2", "revolute", "a", "b", axis="0 0 1"),
            ),
            "axis must be a nonzero 3-vector",
        ),
        ('<robot name="x"><link name="a"></robot>', "cannot read the URDF"),
        (
            robot(*ONE_JOINT, link("a", inertial(-1.0))),
            r"^link 'a': mass -1 is negative$",
        ),
        (
            robot(*ONE_JOINT, link("a", inertial(1.0, I=(-0.1, 0.2, 0.2, 0, 0, 0)))),
            r"^link 'a': the inertia is not positive semi-definite",
        ),
        (
            robot(*ONE_JOINT, link("a", inertial(1.0, I=(0.1, 0.1, 0.3, 0, 0, 0)))),
            r"^link 'a': the principal moments of inertia \[0.1, 0.1, 0.3\] "
            r"violate the triangle inequality",
        ),
        (
            robot(*ONE_JOINT, link("a", inertial("nan"))),
            r"^link 'a': mass nan is not a finite number$",
        ),
        (
            robot(*ONE_JOINT, link("a", inertial(1.0, I=("inf", 1, 1, 0, 0, 0)))),
            r"^link 'a': the inertia .* not a finite number$",
        ),
        (
            robot(*ONE_JOINT, link("a", inertial(1.0, xyz="0 0 NaN"))),
            r"^link 'a': the <inertial> <origin> holds a value that is not a "
            r"finite number$",
        ),
        (
            robot(
                link("base"),
                link("a", inertial(1.0)),
                joint("j1", "continuous", "base", "a", xyz="0 nan 0", axis="0 0 1"),
            ),
            r"^joint 'j1': the <origin> holds a value that is not a finite number$",
        ),
    ],
    ids=[
        "unknown-type",
        "floating",
        "planar",
        "loop",
        "cycle",
        "missing-inertial",
        "unknown-link",
        "two-roots",
        "nothing-moves",
        "zero-axis",
        "malformed",
        "negative-mass",
        "indefinite-inertia",
        "triangle-inequality",
        "nan-mass",
        "inf-inertia",
        "nan-inertial-origin",
        "nan-joint-origin",
    ],
)
def test_bad_files_raise_declaration_error(text, match):
    with pytest.raises(DeclarationError, match=match):
        from_urdf(text)


def test_nan_damping_is_refused_where_it_is_read():
    text = robot(
        link("base"),
        link("a", inertial(1.0)),
        joint(
            "j1",
            "continuous",
            "base",
            "a",
            axis="0 0 1",
            extra='<dynamics damping="nan"/>',
        ),
    )
    with pytest.raises(
        DeclarationError, match=r"^joint 'j1': the <dynamics> damping holds a value"
    ):
        from_urdf(text, damping=True)
    # Ignored without damping=True, as Pinocchio's aba ignores it.
    assert from_urdf(text).options["joints"] == ("j1",)


def test_bad_arguments():
    with pytest.raises(FileNotFoundError, match="no URDF file"):
        from_urdf("/nonexistent/robot.urdf")
    with pytest.raises(TypeError, match="path or the URDF text"):
        from_urdf(3.5)
    with pytest.raises(ValueError, match=r"snap must be in \[0, 0.1\)"):
        from_urdf(REVOLUTE, snap=0.5)
    with pytest.raises(TypeError, match="symbolic_inertia"):
        from_urdf(REVOLUTE, symbolic_inertia="yes")
    assert issubclass(DeclarationError, ValueError)
