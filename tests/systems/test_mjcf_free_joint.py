"""MJCF free joints (``from_mjcf``) against MuJoCo's own ``qacc``: a free
root with a hinged second body, every own formulation, MuJoCo's state
conventions (qpos: position then w, x, y, z quaternion; qvel: linear
velocity in the world frame then angular velocity in the body frame) by
round trip and against MuJoCo's own kinematics, and the errors."""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest

from eomcompare.formulations import get_formulation
from eomcompare.references.mujoco_oracle import (
    mjcf_mujoco_model,
    mujoco_accelerations,
    mujoco_coordinate_accelerations,
)
from eomcompare.references.robot_oracle import oracle_accelerations
from eomcompare.systems import DeclarationError, from_mjcf

# kane in the quick loop; the others derive the same system again (about
# 20 s each on an idle machine), slow.
OWN = ("kane",) + tuple(
    pytest.param(f, marks=pytest.mark.slow)
    for f in ("gibbs_appell", "lagrange", "modified_lagrange")
)

# Body frame turned, mass centre and inertia frame off the body's axes, a
# hinge about a skew axis through an anchor off the child's origin, gravity
# not along -z: a mixed-up convention anywhere changes u'.
FLOATING = """<mujoco model="floating2"><compiler angle="radian"/>
<option gravity="0.5 -1 -9"/>
<worldbody><body name="base" pos="0.1 -0.2 1.0" quat="0.9 0.3 -0.2 0.2">
<freejoint name="root"/>
<inertial pos="0.1 0.05 -0.02" quat="0.8 0.2 0.1 -0.4" mass="3"
 diaginertia="0.05 0.06 0.08"/>
<body name="arm" pos="0.4 0 0.1" euler="0.2 -0.1 0.3">
<joint name="h" axis="0.3 1 -0.2" pos="0.05 0 0"/>
<inertial pos="0.3 0 0" mass="1.2" diaginertia="0.002 0.012 0.012"/>
</body></body></worldbody></mujoco>"""


@pytest.fixture(scope="module")
def floating():
    return from_mjcf(FLOATING)


@pytest.fixture(scope="module")
def derive_floating(floating):
    """``derive_floating(formulation)``: the equations of ``floating``,
    derived once in the module (kane's are read by two tests)."""

    @functools.cache
    def derive(formulation):
        return get_formulation(formulation, count_ops=False).derive(floating)

    return derive


def test_free_joint_coordinates_are_the_bodys_world_pose(floating):
    ms = floating
    names = [str(c).replace("(t)", "") for c in ms.coordinates]
    assert names == [
        "base_qw",
        "base_qx",
        "base_qy",
        "base_qz",
        "base_x",
        "base_y",
        "base_z",
        "q2",
    ]
    # The initial state is MuJoCo's qpos0: the body's pos and (normalised) quat.
    model = mujoco.MjModel.from_xml_string(FLOATING)
    _, q0, _ = ms.states.consistent_initial_state()
    quat = np.array([0.9, 0.3, -0.2, 0.2]) / np.linalg.norm([0.9, 0.3, -0.2, 0.2])
    np.testing.assert_allclose(q0[:4], quat, rtol=1e-14)
    np.testing.assert_allclose(q0[4:7], [0.1, -0.2, 1.0], rtol=1e-14)
    qpos, _ = ms.to_mujoco(q0, np.zeros(7))
    np.testing.assert_allclose(qpos, model.qpos0, rtol=1e-14)


def test_state_conversion_round_trip_and_frames(floating, states_with_speeds):
    ms = floating
    model = mjcf_mujoco_model(ms)
    data = mujoco.MjData(model)
    for _, q, _, u in states_with_speeds(ms, 3):
        qpos, qvel = ms.to_mujoco(q, u)
        back = ms.from_mujoco(qpos, qvel, qvel)
        np.testing.assert_allclose(back[0], q, rtol=0, atol=1e-15)
        np.testing.assert_allclose(back[1], u, rtol=0, atol=1e-15)
        # MuJoCo's own reading of the state: the body's world velocity at
        # its mass centre (mj_objectVelocity, world frame: angular then
        # linear) and its pose.
        data.qpos[:], data.qvel[:] = qpos, qvel
        mujoco.mj_forward(model, data)
        v = np.zeros(6)
        body = model.body("base").id
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, v, 0)
        R = data.xmat[body].reshape(3, 3)
        w = R @ u[:3]  # the speeds' angular velocity is in the body frame
        np.testing.assert_allclose(v[:3], w, atol=1e-12)
        # ... and their linear velocity the body origin's, in the world frame.
        arm = data.xipos[body] - data.xpos[body]
        np.testing.assert_allclose(v[3:], u[3:6] + np.cross(w, arm), atol=1e-12)
        np.testing.assert_allclose(data.xpos[body], q[4:7], atol=1e-14)
        np.testing.assert_allclose(data.xquat[body], q[:4], atol=1e-14)


@pytest.mark.parametrize("formulation", OWN)
def test_every_formulation_matches_mujoco_qacc(
    floating, derive_floating, formulation, states_with_speeds
):
    ms = floating
    model = derive_floating(formulation).numeric()
    mj = mjcf_mujoco_model(ms)
    for t0, q, qd, u in states_with_speeds(ms):
        expected = mujoco_accelerations(ms, q, u, model=mj)
        got = model.speed_derivatives(t0, q, u)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))
        qdd = model.coordinate_accelerations(t0, q, qd)
        qdd_mj = mujoco_coordinate_accelerations(ms, t0, q, qd, model=mj)
        assert np.max(np.abs(qdd - qdd_mj)) <= 1e-10 * np.max(np.abs(qdd_mj))


def test_oracle_column_reads_mujoco_in_coordinate_accelerations(
    floating, derive_floating, states_with_speeds
):
    ms = floating
    states = [s[:3] for s in states_with_speeds(ms, 2)]
    name, qdd = oracle_accelerations(ms, states)
    kane = derive_floating("kane").numeric()
    assert name == "mujoco" and qdd.shape == (2, 8)
    for (t0, q, qd), row in zip(states, qdd):
        # |q|^2 = 1 twice differentiated holds for MuJoCo's q'' too.
        assert np.dot(q[:4], row[:4]) == pytest.approx(
            -np.dot(qd[:4], qd[:4]), rel=1e-10
        )
        np.testing.assert_allclose(
            row, kane.coordinate_accelerations(t0, q, qd), rtol=1e-9, atol=1e-9
        )


def test_free_body_alone_falls_at_g(floating):
    """One free body: MuJoCo and every formulation give the free fall,
    v' = g (world frame), w' = Euler's equations."""
    ms = from_mjcf(
        '<mujoco><worldbody><body pos="0 0 1"><freejoint/>'
        '<inertial pos="0 0 0" mass="2" diaginertia="0.1 0.2 0.3"/>'
        "</body></worldbody></mujoco>"
    )
    model = get_formulation("lagrange", count_ops=False).derive(ms).numeric()
    t0, q, qd = ms.states.random_state(seed=1)
    u = ms.states.speeds_from_rates(t0, q, qd)
    ud = model.speed_derivatives(t0, q, u)
    I = np.array([0.1, 0.2, 0.3])
    w = u[:3]
    np.testing.assert_allclose(ud[:3], -np.cross(w, I * w) / I, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ud[3:], [0, 0, -9.81], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        mujoco_accelerations(ms, q, u), ud, rtol=1e-10, atol=1e-10
    )


@pytest.mark.parametrize(
    "xml, match",
    [
        (
            '<mujoco><worldbody><body name="f"><freejoint name="r"/>'
            '<joint type="free" name="r2" armature="0.1"/>'
            '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
            "</body></worldbody></mujoco>",
            "cannot compile|armature",
        ),
        (
            '<mujoco><worldbody><body name="f"><joint type="free" name="r" '
            'armature="0.1"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
            "</body></worldbody></mujoco>",
            "free joint 'r' \\(body 'f'\\) has armature 0.1",
        ),
    ],
)
def test_unsupported_free_joints_are_named(xml, match):
    with pytest.raises(DeclarationError, match=match):
        from_mjcf(xml)


def test_conversions_refuse_wrong_sizes(floating):
    with pytest.raises(ValueError, match="q must have 8 entries, not 7"):
        floating.to_mujoco(np.zeros(7), np.zeros(7))
    with pytest.raises(ValueError, match="qvel must have 7 entries, not 8"):
        floating.from_mujoco(np.zeros(8), np.zeros(8), np.zeros(7))


@pytest.mark.slow
def test_gymnasium_ant_matches_mujoco():
    """The catalogue's ant (free torso, eight hinges with armature): kane's
    u' against MuJoCo's qacc at five random states."""
    from eomcompare.systems import get_system, system_facts

    ms = get_system("ant")
    assert system_facts("ant").oracle == "mujoco"
    assert (len(ms.coordinates), len(ms.speeds)) == (15, 14)
    _kane_matches_mujoco(ms, quaternions=(0,))


def _kane_matches_mujoco(ms, quaternions):
    """kane's u' against MuJoCo's qacc at five random states, the
    quaternions starting at ``quaternions`` of unit norm."""
    model = (
        get_formulation("kane", count_ops=False).derive(ms).numeric(backend="lambdify")
    )
    mj = mjcf_mujoco_model(ms)
    for seed in range(5):
        t0, q, qd = ms.states.random_state(seed=seed)
        for k in quaternions:
            assert np.dot(q[k : k + 4], q[k : k + 4]) == pytest.approx(1.0, abs=1e-14)
        u = ms.states.speeds_from_rates(t0, q, qd)
        expected = mujoco_accelerations(ms, q, u, model=mj)
        got = model.speed_derivatives(t0, q, u)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))


# Two free bodies, each carrying a child (a hinge on one, a slide on the
# other), gravity tilted: each free joint's coordinates are its own body's
# world pose, and the bodies do not interact.
TWO_FREE = """<mujoco model="two_free"><compiler angle="radian"/>
<option gravity="0.3 -0.5 -9.81"/>
<worldbody>
<body name="a" pos="0.1 -0.2 1.0" quat="0.9 0.3 -0.2 0.2"><freejoint name="ra"/>
<inertial pos="0.1 0.05 -0.02" quat="0.8 0.2 0.1 -0.4" mass="3"
 diaginertia="0.05 0.06 0.08"/>
<body name="arm" pos="0.4 0 0.1" euler="0.2 -0.1 0.3">
<joint name="h" axis="0.3 1 -0.2" pos="0.05 0 0"/>
<inertial pos="0.3 0 0" mass="1.2" diaginertia="0.002 0.012 0.012"/></body></body>
<body name="b" pos="1 1 2" euler="0.3 0.2 0.1"><freejoint name="rb"/>
<inertial pos="0.02 0 0.01" mass="0.5" diaginertia="0.01 0.02 0.025"/>
<body name="c" pos="0 0.2 0"><joint name="s" type="slide" axis="0 1 0.2"/>
<inertial pos="0 0 0" mass="0.3" diaginertia="0.001 0.001 0.001"/></body></body>
</worldbody></mujoco>"""


@pytest.fixture(scope="module")
def two_free():
    return from_mjcf(TWO_FREE)


@pytest.mark.parametrize("formulation", OWN)
def test_two_free_bodies_match_mujoco(two_free, formulation, states_with_speeds):
    ms = two_free
    assert (len(ms.coordinates), len(ms.speeds)) == (16, 14)
    model = get_formulation(formulation, count_ops=False).derive(ms).numeric()
    mj = mjcf_mujoco_model(ms)
    for t0, q, _qd, u in states_with_speeds(ms):
        # Both quaternions at unit norm (the layout: 7 + 1 + 7 + 1).
        for k in (0, 8):
            assert np.dot(q[k : k + 4], q[k : k + 4]) == pytest.approx(1, abs=1e-14)
        expected = mujoco_accelerations(ms, q, u, model=mj)
        got = model.speed_derivatives(t0, q, u)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))


@pytest.mark.slow
def test_dm_control_quadruped_with_its_ball_matches_mujoco():
    """dm-control's quadruped: the torso and the fetch task's ball on two
    free joints, twelve hinges with armature; kane's u' against MuJoCo's
    qacc at five random states."""
    from eomcompare.systems import get_system, system_facts

    ms = get_system("quadruped")
    assert system_facts("quadruped").oracle == "mujoco"
    assert (len(ms.coordinates), len(ms.speeds)) == (30, 28)
    free = [i for i, q in enumerate(ms.coordinates) if str(q).endswith("qw(t)")]
    assert len(free) == 2
    _kane_matches_mujoco(ms, quaternions=free)
