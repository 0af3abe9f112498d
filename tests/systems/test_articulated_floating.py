"""The articulated-body recursion (``kane_articulated``) on a floating
base: a free root, then one-coordinate joints (``from_urdf(...,
floating_base=True)``, :func:`eomcompare.bench.floating.floating_rx90`).

Expected values come from Pinocchio's ``aba`` with a free-flyer root
(:func:`eomcompare.bench.floating.pinocchio_reference`), from the ``kane``
formulation (which handles the free joint through its speeds and
kinematic equations), and from free fall in closed form."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import cached_model, derivation_group

from eomcompare.bench.floating import TWO_BODY, load_model, pinocchio_reference
from eomcompare.formulations import UnsupportedSystemError, get_formulation
from eomcompare.systems import from_urdf
from eomcompare.systems.joint_tree import FreeFlyerJoint

#: A free root with a turned joint frame on it, a prismatic joint and a
#: revolute joint about a general axis further out (two branches).
BRANCHED = """<robot name="branched">
<link name="base"><inertial><origin xyz="0.05 -0.02 0.03" rpy="0.1 0.2 0.3"/>
<mass value="2.5"/><inertia ixx="0.04" iyy="0.05" izz="0.07" ixy="0.003"
 ixz="-0.002" iyz="0.001"/></inertial></link>
<link name="slider"><inertial><origin xyz="0 0.05 0.01"/><mass value="0.7"/>
<inertia ixx="0.003" iyy="0.002" izz="0.004" ixy="0" ixz="0" iyz="0"/>
</inertial></link>
<joint name="p" type="prismatic"><parent link="base"/><child link="slider"/>
<origin xyz="0.1 0.2 -0.05" rpy="0.3 0 -0.2"/><axis xyz="1 0 0"/>
<limit effort="1" velocity="1" lower="-1" upper="1"/></joint>
<link name="arm"><inertial><origin xyz="0.2 0.01 0" rpy="0 0.1 0"/>
<mass value="0.9"/><inertia ixx="0.002" iyy="0.01" izz="0.011" ixy="0.0005"
 ixz="0" iyz="0"/></inertial></link>
<joint name="h" type="revolute"><parent link="slider"/><child link="arm"/>
<origin xyz="0 0.1 0.05" rpy="-0.2 0.4 0.1"/><axis xyz="0.6 0 0.8"/>
<limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
<link name="leg"><inertial><origin xyz="0 0 -0.15"/><mass value="0.4"/>
<inertia ixx="0.001" iyy="0.001" izz="0.0005" ixy="0" ixz="0" iyz="0"/>
</inertial></link>
<joint name="k" type="continuous"><parent link="base"/><child link="leg"/>
<origin xyz="-0.15 0 -0.05"/><axis xyz="0 1 0"/></joint>
</robot>"""


@functools.cache
def _system(name):
    if name == "branched":
        return from_urdf(BRANCHED, floating_base=True)
    if name == "two_body":
        return from_urdf(TWO_BODY, floating_base=True)
    return load_model(name)


@functools.cache
def _model(formulation, name, backend="c"):
    eom = get_formulation(formulation, count_ops=False).derive(_system(name))
    return eom.numeric(backend=backend)


def _states(ms, n):
    out = []
    for seed in range(n):
        t0, q, qd = ms.states.random_state(seed=seed)
        out.append((t0, q, ms.states.speeds_from_rates(t0, q, qd)))
    return out


def _relative(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def _worst(name, reference, n=20, backend="c"):
    ms = _system(name)
    ours = _model("kane_articulated", name, backend)
    return max(
        _relative(ours.speed_derivatives(t0, q, u), reference(t0, q, u))
        for t0, q, u in _states(ms, n)
    )


def _pinocchio(name):
    ud = pinocchio_reference(_system(name))
    assert callable(ud), ud
    return lambda t0, q, u: ud(q, u)


def _kane(name, backend="c"):
    kane = _model("kane", name, backend)
    return kane.speed_derivatives


def test_the_record_has_the_free_root():
    ms = _system("branched")
    assert ms.tree.floating and isinstance(ms.tree.links[0].joint, FreeFlyerJoint)
    got = [(link.name, link.joint.kind, link.parent) for link in ms.tree]
    # The URDF's joints after the root, each on its parent body.
    assert got == [
        ("root_joint", "free", 0),
        ("k", "revolute", 1),
        ("p", "prismatic", 1),
        ("h", "revolute", 3),
    ]
    # The fixed-base recursions still see no tree of theirs.
    assert getattr(ms, "joint_tree", None) is None
    assert not get_system_tree("spatial_chain").floating


def get_system_tree(name):
    from eomcompare.systems import get_system

    return get_system(name, n=2).tree


@pytest.mark.parametrize("name", ["two_body", "branched"])
def test_speed_rates_equal_pinocchio_aba(name):
    assert _worst(name, _pinocchio(name)) < 1e-10


@pytest.mark.parametrize("name", ["two_body", "branched"])
def test_speed_rates_equal_kane(name):
    # kane's model by lambdify: on these small systems it costs less than
    # generating the C code (0.3 against 0.6 s of CPU for two_body, 1.0
    # against 1.2-1.4 s for branched); the backend is not under test here.
    assert _worst(name, _kane(name, "lambdify")) < 1e-10


def test_compiled_backend_equals_pinocchio_aba():
    assert _worst("branched", _pinocchio("branched"), 5, backend="c") < 1e-10


def test_free_fall_at_rest():
    # At rest every body falls at g, turned or not: the root's body rates
    # stay zero, its origin accelerates at (0, 0, -g) in the joint frame
    # (the ground's), the joints do not move.
    ms = _system("branched")
    t0, q, _ = ms.states.random_state(seed=4)
    g = float(ms.parameters[next(s for s in ms.parameters if str(s) == "g")])
    ud = _model("kane_articulated", "branched").speed_derivatives(
        t0, q, np.zeros(len(ms.speeds))
    )
    expected = np.zeros(len(ms.speeds))
    expected[5] = -g
    np.testing.assert_allclose(ud, expected, atol=1e-12)


def test_the_fixed_base_recursions_refuse_a_free_root():
    from eomcompare.formulations.kane_recursive import tree_record

    with pytest.raises(UnsupportedSystemError, match="fixed-base"):
        tree_record(_system("two_body"))


# The larger models on the compiled backend, which evaluates the
# recursion's own order (lambdify's cse of the substituted graph is slow
# on them).
@pytest.mark.slow
def test_rx90_floating_equals_kane():
    # Symbolic inertia throughout (Khalil's RX-90 table on a free base).
    assert _worst("rx90_floating", _kane("rx90_floating"), 10, backend="c") < 1e-10


@pytest.mark.slow
@derivation_group("solo12", "kane")
def test_solo12_equals_pinocchio_aba_and_kane():
    assert _worst("solo12", _pinocchio("solo12"), backend="c") < 1e-10
    # Kane's numeric model is the session's (lambdify), the one
    # test_urdf_robots_exact.py and test_urdf_floating.py hold to Pinocchio.
    kane = cached_model("kane", "solo12").speed_derivatives
    assert _worst("solo12", kane, 10, backend="c") < 1e-10
