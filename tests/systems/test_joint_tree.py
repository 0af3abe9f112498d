"""The joint-tree record (:mod:`eomcompare.systems.joint_tree`): the joint
models against sympy's own frames and points, the body inertia against
sympy's parallel-axis term, and the tree's gravity as declared."""

from __future__ import annotations

import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.systems import from_urdf, get_system
from eomcompare.systems.base import DeclarationError
from eomcompare.systems.joint_tree import (
    BodyInertia,
    JointTree,
    Link,
    PrismaticJoint,
    RevoluteJoint,
    joint_model,
)
from eomcompare.systems.urdf import JointSpec

# A unit axis that is no coordinate axis: 2^2 + 3^2 + 6^2 = 7^2.
AXIS = (sm.Rational(2, 7), sm.Rational(3, 7), sm.Rational(6, 7))
q = me.dynamicsymbols("q")
u = q.diff()


def _vector(comps, frame):
    return comps[0] * frame.x + comps[1] * frame.y + comps[2] * frame.z


def _components(vec, frame):
    return sm.Matrix([vec.dot(frame.x), vec.dot(frame.y), vec.dot(frame.z)])


def test_revolute_rotation_is_sympys_axis_orientation():
    J = me.ReferenceFrame("J")
    B = J.orientnew("B", "Axis", (q, _vector(AXIS, J)))
    got = RevoluteJoint(AXIS).rotation(q)
    assert sm.simplify(got - J.dcm(B)) == sm.zeros(3, 3)
    # Not the identity: the test can fail.
    assert sm.simplify(got.subs(q, 1) - sm.eye(3)) != sm.zeros(3, 3)


def test_revolute_rates_are_sympys_angular_velocity():
    J = me.ReferenceFrame("J")
    B = J.orientnew("B", "Axis", (q, _vector(AXIS, J)))
    joint = RevoluteJoint(AXIS)
    w = _components(B.ang_vel_in(J), J)
    assert sm.simplify(sm.Matrix(joint.angular_velocity(u)) - w) == sm.zeros(3, 1)
    assert joint.linear_velocity(u) == [0, 0, 0]
    assert joint.translation(q) == [0, 0, 0]
    assert joint.motion_subspace() == (list(AXIS), [0, 0, 0])


def test_prismatic_velocity_is_sympys_point_velocity():
    J = me.ReferenceFrame("J")
    O = me.Point("O")
    O.set_vel(J, 0)
    P = O.locatenew("P", q * _vector(AXIS, J))
    joint = PrismaticJoint(AXIS)
    v = _components(P.pos_from(O).dt(J), J)
    assert sm.Matrix(joint.linear_velocity(u)) == v
    assert sm.Matrix(joint.translation(q)) == _components(P.pos_from(O), J)
    assert joint.angular_velocity(u) == [0, 0, 0]
    assert joint.rotation(q) == sm.eye(3)
    assert joint.motion_subspace() == ([0, 0, 0], list(AXIS))


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_generalized_force_is_the_axis_component(kind):
    # S^T (n, f) by hand: the axis (2, 3, 6)/7 dotted with n = (1, 1, 1)
    # (revolute: 11/7) or with f = (7, 0, -7) (prismatic: -4).
    n, f = [1, 1, 1], [7, 0, -7]
    expected = {"revolute": sm.Rational(11, 7), "prismatic": -4}[kind]
    assert joint_model(kind, AXIS).generalized_force(n, f) == expected


def test_joint_model_refuses_other_kinds():
    with pytest.raises(DeclarationError, match="not 'ball'"):
        joint_model("ball", AXIS)


def test_origin_inertia_is_the_parallel_axis_shift():
    m, cx, cy, cz = sm.symbols("m cx cy cz")
    I = sm.symbols("xx yy zz xy yz zx")
    B = me.ReferenceFrame("B")
    mass, first, IO = BodyInertia(m, (cx, cy, cz), I).at_origin()
    central = me.inertia(B, *I)
    shift = me.inertia_of_point_mass(m, _vector((cx, cy, cz), B), B)
    assert mass == m and first == sm.Matrix([m * cx, m * cy, m * cz])
    assert sm.expand(IO - (central + shift).to_matrix(B)) == sm.zeros(3, 3)


def test_prismatic_origin_in_parent_by_hand():
    # Joint frame turned a quarter about the parent's z and placed at
    # (1, 2, 3); sliding q along the joint frame's x moves the body origin
    # along the parent's y: (1, 2 + q, 3).
    spec = JointSpec(
        joint="j",
        body="b",
        kind="prismatic",
        parent=0,
        rotation=sm.ImmutableMatrix([[0, -1, 0], [1, 0, 0], [0, 0, 1]]),
        offset=sm.ImmutableMatrix([1, 2, 3]),
        axis=sm.ImmutableMatrix([1, 0, 0]),
        mass=1,
        com=(0, 0, 0),
        inertia=(1, 1, 1, 0, 0, 0),
    )
    link = Link.from_spec(spec)
    assert link.origin(q) == [1, 2 + q, 3]
    assert link.to_parent(q) == sm.Matrix(spec.rotation)
    turned = Link.from_spec(
        JointSpec(**{**spec.__dict__, "kind": "revolute", "axis": sm.Matrix(AXIS)})
    )
    assert turned.origin(q) == [1, 2, 3]
    expected = sm.Matrix(spec.rotation) * RevoluteJoint(AXIS).rotation(q)
    assert turned.to_parent(q) == expected


def test_declared_tree_carries_its_gravity():
    ms = get_system("spatial_chain", n=2)
    g = next(s for s in ms.parameters if s.name == "g")
    assert ms.tree.gravity == (0, 0, -g)
    assert ms.tree.base_acceleration() == [0, 0, g]
    assert [link.parent for link in ms.tree] == [0, 1]
    assert [link.spec for link in ms.tree] == list(ms.joint_tree)


def test_tree_without_gravity_says_so():
    ms = get_system("spatial_chain", n=2)
    bare = JointTree.from_specs(ms.joint_tree)
    with pytest.raises(DeclarationError, match="declared without gravity"):
        bare.base_acceleration()


def test_children_of_a_branched_tree():
    link = '<link name="{0}"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
    joint = (
        '<joint name="{0}" type="revolute"><parent link="{1}"/>'
        '<child link="{2}"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
    )
    text = (
        '<robot name="y"><link name="base"/>'
        + "".join(link.format(n) for n in ("a", "b", "c"))
        + joint.format("ja", "base", "a")
        + joint.format("jb", "a", "b")
        + joint.format("jc", "a", "c")
        + "</robot>"
    )
    tree = from_urdf(text).tree
    # Body a (1) carries b (2) and c (3).
    assert tree.children() == [[1], [2, 3], [], []]
