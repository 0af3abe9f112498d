"""MJCF ball joints (``from_mjcf``) against MuJoCo's own ``qacc``: a body
on a ball joint off its origin, with a hinged child, every own formulation;
MuJoCo's state conventions (``qpos``: the quaternion ``w, x, y, z`` of the
body in its parent; ``qvel``: the angular velocity relative to the parent
in the body frame) by round trip and against MuJoCo's own kinematics."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from eomcompare.formulations import get_formulation
from eomcompare.references.mujoco_oracle import mjcf_mujoco_model, mujoco_accelerations
from eomcompare.systems import DeclarationError, from_mjcf

OWN = ("kane",) + tuple(
    pytest.param(f, marks=pytest.mark.slow)
    for f in ("gibbs_appell", "lagrange", "modified_lagrange")
)

# Parent frame turned, ball centre off the body's origin, mass centre and
# inertia frame off the body's axes, a hinge about a skew axis below it,
# gravity not along -z: a mixed-up convention anywhere changes u'.
BALL = """<mujoco model="ball2"><compiler angle="radian"/>
<option gravity="0.5 -1 -9"/>
<worldbody><body name="upper" pos="0.1 0 1" quat="0.9 0.3 -0.2 0.2">
<joint name="s" type="ball" pos="0 0.05 0.1"/>
<inertial pos="0.1 0.05 -0.3" quat="0.8 0.2 0.1 -0.4" mass="2"
 diaginertia="0.05 0.06 0.08"/>
<body name="lower" pos="0.05 0 -0.5" euler="0.2 -0.1 0.3">
<joint name="h" axis="0.3 1 -0.2" pos="0.05 0 0"/>
<inertial pos="0.3 0 0" mass="1.2" diaginertia="0.002 0.012 0.012"/>
</body></body></worldbody></mujoco>"""


@pytest.fixture(scope="module")
def ball():
    return from_mjcf(BALL)


def test_ball_joint_has_a_quaternion_and_three_body_rates(ball):
    names = [str(c).replace("(t)", "") for c in ball.coordinates]
    assert names == ["upper_qw", "upper_qx", "upper_qy", "upper_qz", "q2"]
    speeds = [str(s).replace("(t)", "") for s in ball.speeds]
    assert speeds == ["upper_wx", "upper_wy", "upper_wz", "u2"]
    assert ball.degrees_of_freedom == 4
    # The initial state is MuJoCo's qpos0: the identity quaternion.
    model = mujoco.MjModel.from_xml_string(BALL)
    _, q0, _ = ball.states.consistent_initial_state()
    qpos, _ = ball.to_mujoco(q0, np.zeros(4))
    np.testing.assert_allclose(qpos, model.qpos0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(q0[:4], [1, 0, 0, 0], atol=1e-15)


def test_random_states_keep_the_quaternion_at_unit_norm(ball, states_with_speeds):
    for _, q, qd, _ in states_with_speeds(ball):
        assert np.linalg.norm(q[:4]) == pytest.approx(1.0, abs=1e-14)
        # ... and its rates tangent to the sphere.
        assert abs(np.dot(q[:4], qd[:4])) <= 1e-14


def test_state_conversion_round_trip_and_frames(ball, states_with_speeds):
    model = mjcf_mujoco_model(ball)
    data = mujoco.MjData(model)
    upper = model.body("upper").id
    for _, q, _, u in states_with_speeds(ball, 3):
        qpos, qvel = ball.to_mujoco(q, u)
        back = ball.from_mujoco(qpos, qvel, qvel)
        np.testing.assert_allclose(back[0], q, rtol=0, atol=1e-15)
        np.testing.assert_allclose(back[1], u, rtol=0, atol=1e-15)
        # MuJoCo's own reading: the upper body's orientation is its parent
        # frame's (body quat) turned by the joint's quaternion, and its
        # angular velocity in the world is R_body (wx, wy, wz).
        data.qpos[:], data.qvel[:] = qpos, qvel
        mujoco.mj_forward(model, data)
        parent = np.zeros(9)
        mujoco.mju_quat2Mat(parent, model.body_quat[upper])
        turn = np.zeros(9)
        mujoco.mju_quat2Mat(turn, q[:4])
        R = data.xmat[upper].reshape(3, 3)
        np.testing.assert_allclose(
            R, parent.reshape(3, 3) @ turn.reshape(3, 3), atol=1e-14
        )
        v = np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, upper, v, 0)
        np.testing.assert_allclose(v[:3], R @ u[:3], atol=1e-12)


@pytest.mark.parametrize("formulation", OWN)
def test_every_formulation_matches_mujoco_qacc(ball, formulation, states_with_speeds):
    model = get_formulation(formulation, count_ops=False).derive(ball).numeric()
    mj = mjcf_mujoco_model(ball)
    for t0, q, _, u in states_with_speeds(ball):
        expected = mujoco_accelerations(ball, q, u, model=mj)
        got = model.speed_derivatives(t0, q, u)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))


def test_a_ball_pendulum_at_rest_falls_as_a_compound_pendulum():
    """One body on a ball joint at its origin, mass centre at c below the
    horizontal: at rest, u' = (I_O^-1)(c x m g) in the body frame (the
    closed form of a body pinned at a point, released at rest)."""
    c, m = np.array([0.3, 0.0, 0.0]), 2.0
    I_G = np.diag([0.01, 0.02, 0.03])
    ms = from_mjcf(
        '<mujoco><worldbody><body><joint type="ball"/>'
        f'<inertial pos="0.3 0 0" mass="{m}" diaginertia="0.01 0.02 0.03"/>'
        "</body></worldbody></mujoco>"
    )
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    ud = model.speed_derivatives(0.0, np.array([1.0, 0, 0, 0]), np.zeros(3))
    I_O = I_G + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    expected = np.linalg.solve(I_O, np.cross(c, [0.0, 0.0, -9.81 * m]))
    np.testing.assert_allclose(ud, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "attribute, match",
    [
        ('armature="0.1"', "ball joint 'b' \\(body 'f'\\) has armature 0.1"),
        ('damping="0.2"', "ball joint 'b' \\(body 'f'\\) has damping 0.2"),
    ],
)
def test_armature_and_damping_on_a_ball_joint_are_refused(attribute, match):
    xml = (
        f'<mujoco><worldbody><body name="f"><joint type="ball" name="b" '
        f'{attribute}/><inertial pos="0 0 -1" mass="1" diaginertia="1 1 1"/>'
        "</body></worldbody></mujoco>"
    )
    with pytest.raises(DeclarationError, match=match):
        from_mjcf(xml, damping=True)
