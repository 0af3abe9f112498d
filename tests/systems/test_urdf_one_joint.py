"""The snapping rule and the damping option of :func:`eomcompare.systems.from_urdf` on
a one-joint file: the quick instances of ``test_urdf.py``'s
``test_rounded_angles_snap_to_exact_rotations`` (a full robot read twice)
and ``test_damping_option_against_pinocchio`` (two chains, two
formulations), which leave the quick loop (``tests/quick_loop.py``)."""

from __future__ import annotations

import math

import pytest
import sympy as sm

from eomcompare.formulations import get_formulation
from eomcompare.systems import from_urdf

# A quarter turn about y written as URDF files write it, rounded to 11
# decimals; cos(1.57079632679) = 4.9e-12, which the rounding left where
# the intended rotation has a zero.
ONE_JOINT = """<robot name="one">
  <link name="base"/>
  <link name="arm">
    <inertial>
      <origin xyz="0 0 {com}" rpy="0 0 0"/>
      <mass value="1.5"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/>
    </inertial>
  </link>
  <joint name="j" type="revolute">
    <parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5" rpy="0 1.57079632679 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
  </joint>
</robot>"""


def _rotation_entries(ms):
    """Every number in the joint frame's rotation relative to the base."""
    R = ms.bodies[0].frame.dcm(ms.frame).subs(dict.fromkeys(ms.coordinates, 0))
    return [x for x in R if x.is_number]


def test_rounded_quarter_turn_snaps_to_zeros_and_ones():
    assert abs(math.cos(1.57079632679)) > 1e-12  # the file's residue
    snapped = _rotation_entries(from_urdf(ONE_JOINT.format(com="0.25")))
    literal = _rotation_entries(from_urdf(ONE_JOINT.format(com="0.25"), snap=0))
    # Snapped: exactly the rotation the rounded angle was written for.
    assert all(x in (sm.Integer(0), sm.Integer(1), sm.Integer(-1)) for x in snapped)
    assert sorted(abs(x) for x in snapped).count(1) == 3
    # Literal: the residues stay, of the size of the rounding.
    tiny = [float(abs(x)) for x in literal if 0 < abs(x) < 1e-6]
    assert tiny and max(tiny) < 1e-11


def _mass_centre(ms):
    """The mass centre's position in the base frame at q = 0."""
    r = ms.bodies[0].masscenter.pos_from(ms.system.fixed_point).to_matrix(ms.frame)
    return r.subs(dict.fromkeys(ms.coordinates, 0))


def test_lengths_are_kept_but_for_round_off():
    # The joint sits 0.5 m up the base's z axis and turns the arm's z onto
    # the base's x.  A centre of mass 1e-13 m along the arm is float
    # round-off and becomes an exact zero; one 1e-10 m along it (within the
    # default snap of rotation entries, 1e-9) is a length the file writes
    # and is kept, as are 2e-9 m and, with snap=0, 1e-13 m.
    near = _mass_centre(from_urdf(ONE_JOINT.format(com="1e-13")))
    assert near[0] == 0 and near[1] == 0  # exact zeros, not round-off
    assert float(near[2]) == 0.5
    for com in ("1e-10", "2e-9"):
        kept = _mass_centre(from_urdf(ONE_JOINT.format(com=com)))
        assert float(kept[0]) == float(com)
        assert kept[1] == 0 and float(kept[2]) == 0.5
    # Literal: turned by the rounded quarter turn, so equal to rounding.
    literal = _mass_centre(from_urdf(ONE_JOINT.format(com="1e-13"), snap=0))
    assert float(literal[0]) == pytest.approx(1e-13, rel=1e-11)


def test_joint_damping_adds_minus_b_qdot_over_the_axis_inertia():
    # The quick instance of test_urdf.py::test_damping_option_against_pinocchio:
    # for one revolute joint the damping torque -b q' changes q'' by
    # -b q' / J, with J the arm's moment of inertia about the joint axis
    # (Steiner: the file's izz about the mass centre plus m d^2, d the
    # centre's distance from the axis).
    b, m, izz, d = 0.7, 1.5, 0.01, 0.25
    text = ONE_JOINT.format(com=str(d)).replace(
        '<axis xyz="0 0 1"/>', f'<axis xyz="1 0 0"/><dynamics damping="{b}"/>'
    )
    text = text.replace('ixx="0.02"', f'ixx="{izz}"')
    plain = get_formulation("kane", count_ops=False).derive(from_urdf(text)).numeric()
    damped_ms = from_urdf(text, damping=True)
    damped = get_formulation("kane", count_ops=False).derive(damped_ms).numeric()
    for seed in range(3):
        t, q, qd = damped_ms.states.random_state(seed)
        change = damped.coordinate_accelerations(
            t, q, qd
        ) - plain.coordinate_accelerations(t, q, qd)
        assert change == pytest.approx(-b * qd / (izz + m * d**2), rel=1e-12)
