"""MJCF import: each supported joint arrangement against MuJoCo's own
``qacc`` (the model compiled from the same text, everything the
declaration leaves out disabled), the same arm written as URDF and as
MJCF, the state conversions, and the errors for models that cannot be
imported."""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest
import sympy as sm
from helpers import worst_relative_deviation

from eomcompare.formulations import UnsupportedSystemError, get_formulation
from eomcompare.formulations.kane_recursive import inverse_dynamics
from eomcompare.references.mujoco_oracle import (
    MujocoWarning,
    forward,
    mjcf_mujoco_model,
    mujoco_accelerations,
)
from eomcompare.references.robot_oracle import (
    oracle_accelerations,
    urdf_pinocchio_accelerations,
)
from eomcompare.systems import (
    DeclarationError,
    from_mjcf,
    from_urdf,
    get_system,
    system_facts,
)

OWN = ("kane", "lagrange", "modified_lagrange", "gibbs_appell")


def mjcf(body, option="", name="m"):
    return (
        f'<mujoco model="{name}"><compiler angle="radian"/>{option}'
        f"<worldbody>{body}</worldbody></mujoco>"
    )


# Each arrangement with rotated body frames, anchors off the body origin,
# axes along no coordinate axis and rotated inertia frames, so that a
# convention mixed up anywhere (quaternion order, anchor, axis sign,
# inertia frame) changes q''.
MODELS = {
    # One hinge; principal inertia frame turned by iquat; a reference
    # angle (qpos0 = ref).
    "hinge": mjcf(
        '<body name="a" pos="0.1 -0.2 0.3" quat="0.9 0.1 -0.3 0.2">'
        '<joint name="h" axis="0.3 1 -0.2" pos="0.05 -0.1 0.2" ref="0.4"/>'
        '<inertial pos="0.1 -0.2 0.3" quat="0.8 0.2 0.1 -0.4" mass="1.3" '
        'diaginertia="0.1 0.2 0.25"/></body>'
    ),
    # A slide carried by a hinge, the slide's body with a full inertia
    # matrix; gravity not along -z.
    "slide": mjcf(
        '<body name="a" euler="0.3 -0.2 0.5"><joint name="h" axis="0 1 0"/>'
        '<inertial pos="0 0 -0.4" mass="2" diaginertia="0.05 0.06 0.02"/>'
        '<body name="b" pos="0.1 0 -0.5" euler="0.1 0.2 -0.3">'
        '<joint name="s" type="slide" axis="1 0.5 0.2" pos="0.3 0.3 0.3" '
        'ref="0.1"/><inertial pos="0.05 0.02 -0.1" mass="0.7" '
        'fullinertia="0.03 0.04 0.05 0.004 -0.006 0.008"/></body></body>',
        option='<option gravity="1 -2 -9"/>',
    ),
    # One body, two hinges applied in order, each about its own anchor.
    "two_hinges": mjcf(
        '<body name="a" pos="0 0 0.2" euler="0.2 0.1 0.3">'
        '<joint name="h1" axis="0 0 1" pos="0.1 0 0"/>'
        '<joint name="h2" axis="1 0.2 0" pos="0 0.2 -0.1"/>'
        '<inertial pos="0.3 0.1 -0.2" quat="0.7 -0.1 0.5 0.2" mass="1.1" '
        'diaginertia="0.02 0.07 0.08"/></body>'
    ),
    # A body without joints welded to its parent (inertia from its geom,
    # computed by MuJoCo), and one welded to the world (part of the
    # ground, its mass ignored).
    "welded": mjcf(
        '<body name="base" pos="0 0 1"><geom type="sphere" size="0.2"/>'
        '<body name="a" euler="0 0.4 0"><joint name="h" axis="1 0 0"/>'
        '<inertial pos="0 0.1 -0.3" mass="0.9" diaginertia="0.03 0.02 0.01"/>'
        '<body name="tool" pos="0.1 0.2 -0.6" euler="0.5 0 0.3">'
        '<geom type="box" size="0.1 0.05 0.02" pos="0.05 0 0" '
        'euler="0 0 0.4" density="2000"/></body></body></body>'
    ),
    # Armature on a hinge and on a slide: J q'' in MuJoCo's mass matrix.
    "armature": mjcf(
        '<body name="a"><joint name="h" axis="0 1 0" armature="0.3"/>'
        '<inertial pos="0.2 0 -0.3" mass="1" diaginertia="0.01 0.02 0.03"/>'
        '<body name="b" pos="0.4 0 0"><joint name="s" type="slide" '
        'axis="0 0 1" armature="0.5"/><inertial pos="0 0 0" mass="0.3" '
        'diaginertia="0.001 0.001 0.001"/></body></body>'
    ),
}


def mujoco_deviation(ms, formulation, n_states=6):
    """Worst relative deviation of ``formulation``'s q'' from MuJoCo's
    ``qacc`` at ``n_states`` random states."""
    eom = get_formulation(formulation, count_ops=False).derive(ms)
    return deviation_of(eom, n_states)


def deviation_of(eom, n_states=6):
    """:func:`mujoco_deviation` of equations derived already."""
    ms = eom.system
    model = mjcf_mujoco_model(ms)
    return worst_relative_deviation(
        eom.numeric(),
        ms,
        lambda q, qd: mujoco_accelerations(ms, q, qd, model=model),
        n_states,
    )


@functools.cache
def imported(model):
    """``from_mjcf(MODELS[model])``, read once per worker: the tests below
    read the declaration (the tests of the import's errors and options
    call :func:`from_mjcf` themselves)."""
    return from_mjcf(MODELS[model])


@functools.cache
def derived(model, formulation):
    """``formulation``'s equations of :func:`imported`, derived once per
    worker (kane's of two models are read by two tests)."""
    return get_formulation(formulation, count_ops=False).derive(imported(model))


@pytest.mark.parametrize("formulation", OWN)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_each_formulation_matches_mujoco(model, formulation):
    assert deviation_of(derived(model, formulation)) < 1e-10


def test_compiled_model_is_read():
    """Coordinates, joint names and types, welded bodies and the
    intermediate body of a two-joint body as MuJoCo compiles them."""
    ms = imported("two_hinges")
    assert ms.options["joints"] == ("h1", "h2")
    assert ms.options["joint_types"] == ("hinge", "hinge")
    assert [s.body for s in ms.joint_tree] == ["a[0]", "a"]
    assert ms.joint_tree[0].mass == 0 and ms.joint_tree[1].parent == 1
    welded = imported("welded")
    assert len(welded.coordinates) == 1
    # The tool's mass (box of density 2000) is merged into body a.
    box = 2000 * 0.2 * 0.1 * 0.04
    assert abs(float(welded.joint_tree[0].mass) - (0.9 + box)) < 1e-12
    slide = imported("slide")
    assert slide.options["joint_types"] == ("hinge", "slide")
    assert abs(slide.parameters[sm.Symbol("g", positive=True)] - np.sqrt(86)) < 1e-12


def test_armature_is_in_every_joints_own_equation():
    """MuJoCo with the armature differs from MuJoCo without it, and the
    declaration follows: the term is exercised, not vacuous."""
    ms = imported("armature")
    bare = from_mjcf(MODELS["armature"].replace('armature="', 'damping="'))
    _, q, qd = ms.states.random_state(3)
    with_j = mujoco_accelerations(ms, q, qd)
    without = mujoco_accelerations(bare, q, qd)
    assert np.max(np.abs(with_j - without)) > 1e-2
    ours = derived("armature", "kane").numeric().coordinate_accelerations(0.0, q, qd)
    np.testing.assert_allclose(ours, with_j, rtol=1e-10, atol=1e-12)
    # Kane's recursive inverse dynamics gives no joint torque at MuJoCo's
    # qacc (nothing is actuated), armature included.
    t = sm.Symbol("t")
    zdd = sm.symbols("zdd1:3")
    tau = inverse_dynamics(ms, zdd).xreplace(
        {c.diff(t): s for c, s in zip(ms.coordinates, ms.speeds)}
    )
    values = {
        **ms.parameters,
        **dict(zip(ms.coordinates, q)),
        **dict(zip(ms.speeds, qd)),
        **dict(zip(zdd, with_j)),
    }
    residual = np.array(tau.xreplace(values).evalf(), dtype=float).ravel()
    assert np.max(np.abs(residual)) < 1e-10
    # The articulated-body recursion has no place for it and says so.
    with pytest.raises(UnsupportedSystemError, match="armature"):
        get_formulation("kane_articulated", count_ops=False).derive(ms)


# The same two-link arm as URDF (read by yourdfpy, checked by Pinocchio)
# and as MJCF (compiled by MuJoCo): rotated joint frames and inertia frames.
ARM_URDF = """<robot name="arm">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.1 0.05 -0.3" rpy="0.2 -0.1 0.3"/>
    <mass value="1.2"/><inertia ixx="0.05" iyy="0.04" izz="0.02" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0 0.1 -0.25"/><mass value="0.8"/>
    <inertia ixx="0.03" iyy="0.025" izz="0.015" ixy="0.001" ixz="-0.002"
    iyz="0.003"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 1" rpy="0.3 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.1 0 -0.6" rpy="0 0.4 -0.2"/><axis xyz="1 0 0"/></joint>
</robot>"""
ARM_MJCF = """<mujoco model="arm"><compiler angle="radian" eulerseq="XYZ"/>
  <worldbody>
    <body name="l1" pos="0 0 1" euler="0.3 0 0"><joint name="j1" axis="0 1 0"/>
      <inertial pos="0.1 0.05 -0.3" euler="0.2 -0.1 0.3" mass="1.2"
        diaginertia="0.05 0.04 0.02"/>
      <body name="l2" pos="0.1 0 -0.6" euler="0 0.4 -0.2">
        <joint name="j2" axis="1 0 0"/>
        <inertial pos="0 0.1 -0.25" mass="0.8"
          fullinertia="0.03 0.025 0.015 0.001 -0.002 0.003"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_the_same_arm_from_urdf_and_mjcf():
    """URDF's rpy turns about the fixed axes x, y, z in turn, MuJoCo's
    ``eulerseq="XYZ"`` (upper case: fixed axes); both files give the same
    q'' as each other and as both oracles."""
    mj = from_mjcf(ARM_MJCF)
    ur = from_urdf(ARM_URDF)
    kane = get_formulation("kane", count_ops=False)
    f_mj = kane.derive(mj).numeric()
    f_ur = kane.derive(ur).numeric()
    for seed in range(5):
        _, q, qd = ur.states.random_state(seed)
        a_ur = f_ur.coordinate_accelerations(0.0, q, qd)
        a_mj = f_mj.coordinate_accelerations(0.0, q, qd)
        pin_a = urdf_pinocchio_accelerations(ur, q, qd)
        mj_a = mujoco_accelerations(mj, q, qd)
        scale = max(1.0, float(np.max(np.abs(pin_a))))
        for a in (a_ur, a_mj, mj_a):
            assert np.max(np.abs(a - pin_a)) / scale < 1e-10
    # MuJoCo's default, moving axes ("xyz"), is another arm: the
    # comparison can fail.
    other = from_mjcf(ARM_MJCF.replace('eulerseq="XYZ"', 'eulerseq="xyz"'))
    _, q, qd = ur.states.random_state(0)
    assert np.max(np.abs(mujoco_accelerations(other, q, qd) - pin_a)) > 1e-3


def test_state_conversions_round_trip():
    ms = from_mjcf(
        MODELS["slide"].replace('axis="0 1 0"/>', 'axis="0 1 0" ref="-0.7"/>')
    )
    model = mujoco.MjModel.from_xml_string(ms.options["mjcf"])
    np.testing.assert_array_equal(model.qpos0, [-0.7, 0.1])
    rng = np.random.default_rng(0)
    q, u, a = rng.normal(size=(3, 2))
    qpos, qvel = ms.to_mujoco(q, u)
    np.testing.assert_allclose(qpos, q + model.qpos0, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(qvel, u)
    back = ms.from_mujoco(qpos, qvel, a)
    for x, y in zip(back, (q, u, a)):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="2 entries"):
        ms.to_mujoco([0.0], [0.0, 0.0])


def test_harness_oracle_is_mujoco_for_mjcf():
    ms = imported("two_hinges")
    states = [ms.states.random_state(seed) for seed in range(3)]
    name, qdd = oracle_accelerations(ms, states)
    assert name == "mujoco" and qdd.shape == (3, 2)
    model = mujoco.MjModel.from_xml_string(ms.options["mjcf"])
    data = mujoco.MjData(model)
    for (_, q, qd), ours in zip(states, qdd):
        data.qpos[:], data.qvel[:] = q, qd
        mujoco.mj_forward(model, data)
        np.testing.assert_allclose(ours, data.qacc, rtol=1e-12)
    assert not np.allclose(qdd[0], qdd[1])


def test_the_oracle_disables_what_is_not_modelled():
    """Limits, a motor with a control, damping, a spring, friction loss and
    contacts change MuJoCo's qacc; the oracle's model leaves them out, and
    with damping=True keeps the damping the declaration then has."""
    busy = mjcf(
        '<geom type="plane" size="1 1 0.1"/>'
        '<body name="a"><joint name="h" axis="0 1 0" range="-0.1 0.1" '
        'damping="0.4" stiffness="3" frictionloss="0.2"/>'
        '<geom type="sphere" size="0.1" pos="0 0 -0.5" mass="1"/></body>',
        option='<option density="1.2" viscosity="0.1"/>',
    )
    busy = busy.replace(
        "</worldbody>", '</worldbody><actuator><motor joint="h"/></actuator>'
    )
    plain = from_mjcf(busy)
    kane = get_formulation("kane", count_ops=False)
    q, qd = np.array([1.0]), np.array([0.5])
    raw = mujoco.MjModel.from_xml_string(busy)
    data = mujoco.MjData(raw)
    data.qpos[:], data.qvel[:], data.ctrl[:] = q, qd, 0.7
    mujoco.mj_forward(raw, data)
    for damping in (False, True):
        ms = from_mjcf(busy, damping=damping)
        ours = kane.derive(ms).numeric().coordinate_accelerations(0.0, q, qd)
        oracle = mujoco_accelerations(ms, q, qd)
        np.testing.assert_allclose(ours, oracle, rtol=1e-10)
        assert abs(ours[0] - data.qacc[0]) > 1e-2
    assert (
        abs(
            mujoco_accelerations(plain, q, qd)[0]
            - mujoco_accelerations(from_mjcf(busy, damping=True), q, qd)[0]
        )
        > 1e-2
    )


@pytest.mark.parametrize(
    "text, match",
    [
        ("<mujoco><worldbody><body>", "cannot compile the MJCF"),
        ("<mujoco><worldbody></mujoco>", "cannot compile the MJCF"),
        (
            mjcf('<body name="a"><joint name="h" type="hinged"/></body>'),
            "cannot compile the MJCF.*hinged",
        ),
        (
            mjcf(
                '<body name="ball_body"><joint name="bj" type="ball" '
                'armature="0.1"/><geom size="0.1"/></body>'
            ),
            # Ball joints are read (tests/systems/test_mjcf_ball_joint.py);
            # armature on one is not modelled.
            "ball joint 'bj' \\(body 'ball_body'\\) has armature 0.1",
        ),
        (
            mjcf(
                '<body name="drone"><joint name="root" type="free" '
                'armature="0.2"/><geom size="0.1"/></body>'
            ),
            # Free joints are read (tests/systems/test_mjcf_free_joint.py);
            # armature on one is not modelled.
            "free joint 'root' \\(body 'drone'\\) has armature 0.2",
        ),
        (
            mjcf(
                '<body name="a"><joint name="h"/><inertial pos="0 0 0" '
                'mass="-1" diaginertia="1 1 1"/></body>'
            ),
            "cannot compile the MJCF.*mass",
        ),
        (mjcf('<body name="a"><geom size="0.1"/></body>'), "nothing moves"),
    ],
)
def test_bad_mjcf_is_refused_clearly(text, match):
    with pytest.raises(DeclarationError, match=match):
        from_mjcf(text)


def test_strict_refuses_what_is_not_modelled():
    limited = mjcf(
        '<body name="a"><joint name="h" range="-1 1"/>'
        '<geom size="0.1" contype="0" conaffinity="0"/></body>'
    )
    with pytest.raises(DeclarationError, match="limits on joints \\['h'\\]"):
        from_mjcf(limited, strict=True)
    from_mjcf(limited)  # left out without strict
    touching = mjcf(
        '<geom name="floor" type="plane" size="1 1 0.1"/>'
        '<body name="a"><joint name="h"/><geom name="ball" size="0.1"/></body>'
    )
    with pytest.raises(DeclarationError, match="'floor' and 'ball' may collide"):
        from_mjcf(touching, strict=True)
    damped = mjcf(
        '<body name="a"><joint name="h" damping="0.2"/>'
        '<geom size="0.1" contype="0" conaffinity="0"/></body>'
    )
    with pytest.raises(DeclarationError, match="damping=True"):
        from_mjcf(damped, strict=True)
    assert from_mjcf(damped, strict=True, damping=True).joint_tree[0].damping == 0.2


def test_source_checks(tmp_path):
    path = tmp_path / "hinge.xml"
    path.write_text(MODELS["hinge"])
    ms = from_mjcf(path)
    assert ms.options["mjcf_path"] == str(path) and ms.name == "m"
    with pytest.raises(FileNotFoundError):
        from_mjcf(tmp_path / "missing.xml")
    with pytest.raises(TypeError, match="path or the MJCF text"):
        from_mjcf(3)


@pytest.mark.parametrize("damping", [False, True])
def test_catalogue_model_from_gymnasium(damping):
    """Gymnasium's double cart-pole (inertias from capsule geoms, gravity
    tilted) by every own formulation against MuJoCo, its damping kept when
    asked for."""
    ms = get_system("inverted_double_pendulum", damping=damping)
    assert ms.options["joints"] == ("slider", "hinge", "hinge2")
    assert system_facts("inverted_double_pendulum").oracle == "mujoco"
    assert [s.damping is not None for s in ms.joint_tree] == [damping] * 3
    for formulation in OWN:
        assert mujoco_deviation(ms, formulation) < 1e-10


def test_a_mujoco_warning_is_an_error_and_writes_no_log(tmp_path, monkeypatch):
    """A model whose mass matrix MuJoCo finds singular: its own handler
    would append to MUJOCO_LOG.TXT in the working directory and return a
    qacc it calls unreliable; the oracle's ``forward`` raises instead and
    puts the previous handler back."""
    monkeypatch.chdir(tmp_path)
    model = mujoco.MjModel.from_xml_string(
        mjcf(
            '<body><joint axis="1 0 0"/><inertial pos="0 0 0" mass="1" '
            'diaginertia="1 1 1"/><body><joint axis="0 1 0"/>'
            '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></body>'
        )
    )
    data = mujoco.MjData(model)
    forward(model, data)  # a regular model: no warning
    model.body_inertia[2][:] = 0.0  # the second joint's dof has no inertia
    seen = []
    mujoco.set_mju_user_warning(seen.append)
    try:
        with pytest.raises(MujocoWarning, match="singular.*DOF 1"):
            forward(model, data)
        # MuJoCo tells a handler only of a data's first warning of a kind;
        # its counters still say it warned again.
        with pytest.raises(MujocoWarning, match="mjWARN_INERTIA"):
            forward(model, data)
        mujoco.mj_forward(model, mujoco.MjData(model))  # the handler is back
    finally:
        mujoco.set_mju_user_warning(None)
    assert len(seen) == 1 and "singular" in seen[0]
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
