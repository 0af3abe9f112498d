"""The random-system strategies: valid options, valid bodies, consistent
assemblies and states, and the tree builder's conventions against the
catalogue's n-link pendulum."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eomcompare.formulations import get_formulation
from eomcompare.systems import MechanicalSystem, get_system
from eomcompare.systems.four_bar import four_bar_closed_form
from eomcompare.testing import strategies as S

#: Building a system lambdifies its constraints (a few tenths of a second),
#: so the strategy checks use few examples.
FEW = settings(max_examples=3, deadline=None)


def _values(ms):
    return {str(k): v for k, v in ms.parameters.items()}


# ----------------------------------------------------------------------
# Options
# ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "call,error,names",
    [
        (lambda: S.kinematic_trees(dimension=4), ValueError, "[2, 3]"),
        (
            lambda: S.kinematic_trees(joint_types=["ball"]),
            ValueError,
            "'revolute', 'prismatic'",
        ),
        (lambda: S.kinematic_trees(joint_types=[]), ValueError, "'revolute'"),
        (lambda: S.kinematic_trees(joint_types=3), TypeError, "'revolute'"),
        (lambda: S.kinematic_trees(max_bodies="2"), TypeError, "integer"),
        (lambda: S.kinematic_trees(max_bodies=0), ValueError, "[1, 6]"),
        (
            lambda: S.kinematic_trees(min_bodies=3, max_bodies=2),
            ValueError,
            "must not exceed",
        ),
        (lambda: S.kinematic_trees(springs="yes"), TypeError, "True or False"),
        (
            lambda: S.open_chains(joint_types=["prismatic"], joint_reactions=True),
            ValueError,
            "'revolute'",
        ),
        (lambda: S.closed_loops(min_bars=3), ValueError, "[4, 7]"),
        (lambda: S.closed_loops(explicit_four_bar=1), TypeError, "True or False"),
        (
            lambda: S.nonholonomic_systems(kinds=["bicycle"]),
            ValueError,
            "'sleigh', 'rolling_disc'",
        ),
        (
            lambda: S.rheonomic_systems(drives="spin"),
            ValueError,
            "'translation', 'rotation'",
        ),
        (lambda: S.consistent_states("four_bar"), TypeError, "MechanicalSystem"),
        (lambda: S.inertia_tensors(mass=-1.0), ValueError, "positive"),
        (lambda: S.inertia_tensors(mass="1"), TypeError, "real number"),
    ],
)
def test_bad_options_are_named(call, error, names):
    with pytest.raises(error) as info:
        call()
    assert names in str(info.value)


# ----------------------------------------------------------------------
# Bodies
# ----------------------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(st.floats(0.1, 10.0), st.data())
def test_inertia_tensors_are_physical(mass, data):
    I = data.draw(S.inertia_tensors(mass=mass))
    assert np.allclose(I, I.T, atol=0)
    p = np.linalg.eigvalsh(I)
    assert p[0] > 0
    # Principal moments of any rigid body: I1 <= I2 + I3 and cyclic.
    assert p[2] <= p[0] + p[1] + 1e-12 * p[2]


def _inertia_of(ms, k):
    v = _values(ms)
    return np.array(
        [
            [v[f"I{k}_xx"], v[f"I{k}_xy"], v[f"I{k}_zx"]],
            [v[f"I{k}_xy"], v[f"I{k}_yy"], v[f"I{k}_yz"]],
            [v[f"I{k}_zx"], v[f"I{k}_yz"], v[f"I{k}_zz"]],
        ]
    )


@FEW
@given(S.kinematic_trees(dimension=2, max_bodies=3))
def test_planar_trees_stay_in_the_plane(ms):
    structure = ms.options["structure"]
    _, dim, joints, *_ = structure
    assert dim == 2 and 1 <= len(joints) <= 3
    for i, (parent, kind, axis) in enumerate(joints):
        assert -1 <= parent < i
        assert axis == 2 if kind == "R" else axis in (0, 1)
    N = ms.frame
    for k, body in enumerate(ms.bodies, start=1):
        assert body.masscenter.vel(N).dot(N.z) == 0
        assert (
            body.frame.ang_vel_in(N).dot(N.x) == 0
            and body.frame.ang_vel_in(N).dot(N.y) == 0
        )
        p = np.linalg.eigvalsh(_inertia_of(ms, k))
        assert p[0] > 0 and p[2] <= p[0] + p[1] + 1e-12


@FEW
@given(S.open_chains(dimension=3, min_bodies=2, max_bodies=3))
def test_open_chains_are_serial(ms):
    joints = ms.options["structure"][2]
    assert [j[0] for j in joints] == list(range(-1, len(joints) - 1))
    assert ms.degrees_of_freedom == len(joints) == len(ms.bodies)
    assert ms.potential_energy is not None


@FEW
@given(S.kinematic_trees(max_bodies=2))
def test_equal_structures_have_equal_symbols(ms):
    # The contract that lets one derivation serve every draw of a structure.
    other = S.build_tree(
        ms.options["structure"][1:], {k: 1.1 * v for k, v in _values(ms).items()}
    )
    assert other.options["structure"] == ms.options["structure"]
    assert list(other.parameters) == list(ms.parameters)
    assert other.coordinates == ms.coordinates
    assert [other.parameters[k] for k in ms.parameters] == [
        1.1 * v for v in ms.parameters.values()
    ]


def test_tree_builder_is_the_catalogue_double_pendulum():
    """Two uniform rods pinned in series, relative angles, gravity -y:
    the catalogue's n_link_pendulum(n=2) (checked there against Huston's
    double rod pendulum)."""
    m1, m2, l1, l2, g = 1.3, 0.7, 0.9, 1.4, 9.81
    values = {
        "m1": m1,
        "m2": m2,
        "rx1": 0.0,
        "ry1": 0.0,
        "rx2": l1,
        "ry2": 0.0,
        "cx1": l1 / 2,
        "cy1": 0.0,
        "cx2": l2 / 2,
        "cy2": 0.0,
        "gx": 0.0,
        "gy": -g,
    }
    for k, (m, l) in enumerate([(m1, l1), (m2, l2)], start=1):
        values |= {
            f"I{k}_xx": 0.0,
            f"I{k}_yy": m * l**2 / 12,
            f"I{k}_zz": m * l**2 / 12,
            f"I{k}_xy": 0.0,
            f"I{k}_yz": 0.0,
            f"I{k}_zx": 0.0,
        }
    structure = (2, ((-1, "R", 2), (0, "R", 2)), False, False, True, ())
    ms = S.build_tree(structure, values, initial={"q1": 0.3, "q2": -0.4})
    ref = get_system("n_link_pendulum", n=2)
    ref_p = {str(k): k for k in ref.parameters}
    ref_values = {
        ref_p["m1"]: m1,
        ref_p["m2"]: m2,
        ref_p["l1"]: l1,
        ref_p["l2"]: l2,
        ref_p["g"]: g,
    }
    a = get_formulation("kane", count_ops=False).derive(ms).numeric()
    b = get_formulation("kane", count_ops=False).derive(ref).numeric(ref_values)
    for q, qd in [([0.3, -0.4], [1.0, -2.0]), ([2.0, 1.0], [0.0, 0.5])]:
        assert np.allclose(
            a.coordinate_accelerations(0.0, q, qd),
            b.coordinate_accelerations(0.0, q, qd),
            rtol=1e-12,
            atol=1e-12,
        )


# ----------------------------------------------------------------------
# Closed loops: consistent assembly
# ----------------------------------------------------------------------
def _loop_residual(ms, q):
    """Closure written out here: sum of the chain's link vectors minus the
    hanging link's vector minus the ground vector L0 N.y."""
    v = _values(ms)
    nl = len(q)
    x = sum(v[f"L{k}"] * np.cos(q[k - 1]) for k in range(1, nl)) - v[f"L{nl}"] * np.cos(
        q[-1]
    )
    y = (
        sum(v[f"L{k}"] * np.sin(q[k - 1]) for k in range(1, nl))
        - v[f"L{nl}"] * np.sin(q[-1])
        - v["L0"]
    )
    return np.hypot(x, y)


@FEW
@given(S.closed_loops(min_bars=4, max_bars=6), st.integers(0, 1000))
def test_closed_loops_are_assembled(ms, seed):
    _, q0, _ = ms.states.consistent_initial_state()
    assert _loop_residual(ms, q0) < 1e-9
    assert ms.degrees_of_freedom == len(ms.coordinates) - 2
    t0, q, qd = ms.states.random_state(seed=seed)
    assert _loop_residual(ms, q) < 1e-9
    assert np.max(np.abs(ms.states.velocity_residual(t0, q, qd))) < 1e-9


@settings(max_examples=2, deadline=None)
@given(
    S.closed_loops(min_bars=4, max_bars=4).filter(
        lambda ms: bool(ms.dependent_solutions)
    ),
    st.floats(-3.0, 3.0),
)
def test_explicit_four_bars_follow_their_closed_form(ms, q1):
    # A crank-rocker: the crank turns fully and the closed form closes the
    # loop everywhere.
    v = _values(ms)
    L1, L2, L3, L4 = (v[f"L{k}"] for k in (1, 2, 3, 0))
    lengths = sorted([L1, L2, L3, L4])
    assert L1 == lengths[0]
    assert lengths[0] + lengths[3] < lengths[1] + lengths[2]
    q = [q1, *four_bar_closed_form(q1, L1, L2, L3, L4)]
    assert _loop_residual(ms, q) < 1e-9


# ----------------------------------------------------------------------
# Nonholonomic and rheonomic systems
# ----------------------------------------------------------------------
@FEW
@given(S.nonholonomic_systems(kinds=["sleigh"]), st.integers(0, 1000))
def test_sleigh_states_do_not_slip(ms, seed):
    v = _values(ms)
    t0, (x, y, th), (xd, yd, thd) = ms.states.random_state(seed=seed)
    # The blade's lateral velocity: across B.x turned by beta.
    across = -np.sin(th + v["beta"]) * xd + np.cos(th + v["beta"]) * yd
    assert abs(across) < 1e-12 * (1 + abs(xd) + abs(yd))
    assert not ms.is_holonomic


@FEW
@given(S.nonholonomic_systems(kinds=["rolling_disc"]), st.integers(0, 1000))
def test_random_discs_roll(ms, seed):
    t0, q, qd = ms.states.random_state(seed=seed)
    q1, q2, q3, x, y = q
    q1d, q2d, q3d, xd, yd = qd
    r = _values(ms)["r"]
    # Contact point at rest: the centre moves as the disc turns about the
    # contact point.  Angular velocity (yaw q1 about z, lean q2 about the
    # heading, spin q3 about the axis) crossed with C->D = r (lean dir).
    w = np.array([q2d, q3d + q1d * np.sin(q2), q1d * np.cos(q2)])  # in L
    cd = np.array([0.0, 0.0, r])
    v_center_L = np.cross(w, cd)
    # Centre velocity from the coordinates: (x', y') plus d/dt of r L.z.
    c1, s1, c2, s2 = np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2)
    Lz = np.array([s1 * s2, -c1 * s2, c2])
    dLz = np.array(
        [c1 * s2 * q1d + s1 * c2 * q2d, s1 * s2 * q1d - c1 * c2 * q2d, -s2 * q2d]
    )
    v_center = np.array([xd, yd, 0.0]) + r * dLz
    Lx = np.array([c1, s1, 0.0])
    Ly = np.array([-s1 * c2, c1 * c2, s2])
    R = np.column_stack([Lx, Ly, Lz])
    assert np.allclose(v_center, R @ v_center_L, atol=1e-10)


@FEW
@given(S.rheonomic_systems())
def test_rheonomic_systems_are_driven(ms):
    assert ms.is_rheonomic and len(ms.specified) == 1
    assert ms.options["nonconservative_power"] is None


@FEW
@given(S.mechanical_systems(max_bodies=2))
def test_every_family_yields_a_declaration(ms):
    assert isinstance(ms, MechanicalSystem)
    assert {"family", "structure", "nonconservative_power"} <= set(ms.options)
    hash(ms.options["structure"])


def test_consistent_states_satisfy_the_constraints():
    ms = get_system("four_bar")

    @settings(max_examples=10, deadline=None)
    @given(S.consistent_states(ms))
    def check(state):
        t0, q, qd = state
        assert np.max(np.abs(ms.states.holonomic_residual(t0, q))) < 1e-10
        assert np.max(np.abs(ms.states.velocity_residual(t0, q, qd))) < 1e-10

    check()
