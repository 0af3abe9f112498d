"""Floating-base URDF import (``from_urdf(..., floating_base=True)``)
against Pinocchio's ``aba`` with a free-flyer root, every own formulation;
Pinocchio's state conventions (q: position then x, y, z, w quaternion; v:
linear then angular velocity, both in the body frame) by round trip and
against Pinocchio's own kinematics; and the errors."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import cached_model, cached_system, derivation_group

from eomcompare.bench.floating import TWO_BODY
from eomcompare.formulations import get_formulation
from eomcompare.references.robot_oracle import (
    urdf_pinocchio_accelerations,
    urdf_pinocchio_model,
)
from eomcompare.systems import DeclarationError, from_urdf

# kane in the quick loop; the others derive the same system again (about
# 20 s each on an idle machine), slow.
OWN = ("kane",) + tuple(
    pytest.param(f, marks=pytest.mark.slow)
    for f in ("gibbs_appell", "lagrange", "modified_lagrange")
)

# A root link with a full inertia off its origin and a link fixed to it
# (merged into the free body), a revolute joint about a turned axis: the
# floating bench's two-body system.
FLOATING = TWO_BODY


@pytest.fixture(scope="module")
def floating():
    return from_urdf(FLOATING, floating_base=True)


def test_floating_root_is_a_free_joint_first(floating):
    ms = floating
    assert [str(c).replace("(t)", "") for c in ms.coordinates] == [
        "base_qw",
        "base_qx",
        "base_qy",
        "base_qz",
        "base_x",
        "base_y",
        "base_z",
        "q2",
    ]
    assert ms.options["joints"] == ("root_joint", "h")
    assert tuple(urdf_pinocchio_model(ms).names) == ("universe", "root_joint", "h")
    # The merged free body: 3 + 0.2 kg.
    assert float(sum(b.mass for b in ms.bodies)) == pytest.approx(4.4, rel=1e-15)


def test_pinocchio_conversions_round_trip_and_frames(floating):
    ms = floating
    model = urdf_pinocchio_model(ms)
    data = model.createData()
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        u = ms.states.speeds_from_rates(t0, q, qd)
        q_pin, v = ms.to_pinocchio(q, u)
        assert q_pin.shape == (9,) and v.shape == (7,)
        back = ms.from_pinocchio(q_pin, v, np.zeros(7))
        np.testing.assert_allclose(back[0], q, atol=1e-15)
        np.testing.assert_allclose(back[1], u, atol=1e-14)
        # Pinocchio's own reading: the root's placement and its velocity
        # in its local frame (linear of the origin, then angular).
        pin.forwardKinematics(model, data, q_pin, v)
        M = data.oMi[1]
        np.testing.assert_allclose(M.translation, q[4:7], atol=1e-15)
        w, x, y, z = q[:4]
        R = pin.Quaternion(w, x, y, z).toRotationMatrix()
        np.testing.assert_allclose(M.rotation, R, atol=1e-15)
        np.testing.assert_allclose(data.v[1].angular, u[:3], atol=1e-14)
        np.testing.assert_allclose(R @ data.v[1].linear, u[3:6], atol=1e-14)


@pytest.mark.parametrize("formulation", OWN)
def test_every_formulation_matches_pinocchio_aba(floating, formulation):
    ms = floating
    model = get_formulation(formulation, count_ops=False).derive(ms).numeric()
    pm = urdf_pinocchio_model(ms)
    for seed in range(5):
        t0, q, qd = ms.states.random_state(seed=seed)
        expected = urdf_pinocchio_accelerations(ms, q, qd, model=pm)
        got = model.coordinate_accelerations(t0, q, qd)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))
        # The speeds' rates too, Pinocchio's a converted by from_pinocchio.
        u = ms.states.speeds_from_rates(t0, q, qd)
        q_pin, v = ms.to_pinocchio(q, u)
        a = pin.aba(pm, pm.createData(), q_pin, v, np.zeros(pm.nv))
        ud = ms.from_pinocchio(q_pin, v, a)[2]
        got_ud = model.speed_derivatives(t0, q, u)
        assert np.max(np.abs(got_ud - ud)) <= 1e-10 * np.max(np.abs(ud))


def test_fixed_base_conversion_gives_continuous_joints_cos_sin():
    ms = from_urdf(FLOATING)
    q, u = np.array([0.7]), np.array([-0.3])
    q_pin, v = ms.to_pinocchio(q, u)
    np.testing.assert_allclose(q_pin, [np.cos(0.7), np.sin(0.7)], rtol=1e-15)
    back = ms.from_pinocchio(q_pin, v, np.array([2.0]))
    np.testing.assert_allclose(np.concatenate(back), [0.7, -0.3, 2.0], rtol=1e-15)


def test_floating_base_errors():
    massless = FLOATING.replace(
        FLOATING[
            FLOATING.index('<link name="base">') : FLOATING.index('<link name="tip">')
        ],
        '<link name="base"/>',
    ).replace('<mass value="0.2"/>', '<mass value="0"/>')
    with pytest.raises(
        DeclarationError, match="'base' \\(the floating base\\).*no <inertial> mass"
    ):
        from_urdf(massless, floating_base=True)
    with pytest.raises(TypeError, match="floating_base must be True or False"):
        from_urdf(FLOATING, floating_base="yes")
    with pytest.raises(ValueError, match="q must have 8 entries, not 7"):
        from_urdf(FLOATING, floating_base=True).to_pinocchio(np.zeros(7), np.zeros(7))


@pytest.mark.slow
@derivation_group("solo12", "kane")
def test_solo12_matches_pinocchio_free_flyer():
    """The catalogue's floating quadruped: kane's q'' against Pinocchio's
    aba (free-flyer root, the same URDF) at five random states.  Kane's
    numeric model is the session's, shared with test_urdf_robots_exact.py
    and test_articulated_floating.py (their derivation group)."""
    from eomcompare.systems import system_facts

    ms = cached_system("solo12")
    assert system_facts("solo12").oracle == "pinocchio"
    assert (len(ms.coordinates), len(ms.speeds)) == (19, 18)
    assert ms.options["joints"][0] == "root_joint"
    model = cached_model("kane", "solo12")
    pm = urdf_pinocchio_model(ms)
    for seed in range(5):
        t0, q, qd = ms.states.random_state(seed=seed)
        assert np.dot(q[:4], q[:4]) == pytest.approx(1.0, abs=1e-14)
        expected = urdf_pinocchio_accelerations(ms, q, qd, model=pm)
        got = model.coordinate_accelerations(t0, q, qd)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))
