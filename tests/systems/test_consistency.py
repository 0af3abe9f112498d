"""Declarations whose velocities are not the derivatives of their positions:
refused with a reason, never answered wrongly."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_model, cached_system
from helpers import planar_particle
from sympy_ports import (
    contact_point_disc,
    expected_coordinate_accelerations,
    rolling_disc_asserted_speed_rates,
)

from eomcompare.formulations import (
    FORMULATIONS,
    UnsupportedSystemError,
    formulation_names,
    get_formulation,
)
from eomcompare.systems import DeclarationError, MechanicalSystem

#: The default comparison's formulations; the tree algorithms
#: (kane_composite, kane_articulated) are checked against kane on every
#: catalogue system in tests/test_contract.py, and against Pinocchio and
#: kane in tests/systems/test_robots_articulated_body.py and
#: tests/formulations/test_composite.py.
COMPARED = formulation_names(default_only=True)

LAGRANGE_FAMILY = ["lagrange", "modified_lagrange", "sympy_lagrange"]


def _assert_matches(ms, names, expected, seeds=range(4)):
    for name in names:
        model = get_formulation(name, count_ops=False).derive(ms).numeric()
        for seed in seeds:
            t0, q, qd = ms.states.random_state(seed)
            got = model.coordinate_accelerations(t0, q, qd)
            want = expected(t0, q, qd)
            np.testing.assert_allclose(
                got, want, rtol=1e-9, atol=1e-9, err_msg=f"{name}, seed {seed}"
            )


# ----------------------------------------------------------------------
# The disc from the contact point up (sympy test_kane::test_rolling_disc)
# ----------------------------------------------------------------------
def test_contact_point_disc_is_recorded_as_underived():
    ms = contact_point_disc()
    a = ms.declaration_analysis
    assert not a.velocities_are_derivatives
    assert [name for name, _ in a.underived_velocities] == ["Dmc"]
    # The frames are oriented from N, so their rates are checked, not
    # recorded.
    assert a.underived_angular_velocities == ()


@pytest.mark.parametrize("name", LAGRANGE_FAMILY)
def test_contact_point_disc_is_refused_by_the_lagrange_family(name):
    ms = contact_point_disc()
    assert FORMULATIONS[name].needs_velocities_from_positions
    with pytest.raises(UnsupportedSystemError) as info:
        get_formulation(name, count_ops=False).derive(ms)
    msg = str(info.value)
    assert name in msg and "Dmc" in msg and "fixed point" in msg
    # It says how to declare the system instead.
    assert "nonholonomic constraints" in msg and "coordinates" in msg


def test_contact_point_disc_matches_sympys_asserted_equations():
    ms = contact_point_disc()
    expected = expected_coordinate_accelerations(
        ms, rolling_disc_asserted_speed_rates()
    )
    names = [n for n in COMPARED if not FORMULATIONS[n].needs_velocities_from_positions]
    assert {"kane", "gibbs_appell", "sympy_kane"} <= set(names)
    _assert_matches(ms, names, expected)


def test_rolling_disc_with_contact_coordinates_matches_sympy_everywhere():
    """The same disc declared the other way (contact point located by x, y
    from the origin, rolling as nonholonomic constraints): every
    formulation, the Lagrange family included, gives the u' sympy's
    test_kane.py asserts for the disc."""
    ms = cached_system("rolling_disc")
    assert ms.declaration_analysis.velocities_are_derivatives
    rates = expected_coordinate_accelerations(
        ms, rolling_disc_asserted_speed_rates().col_join(sm.zeros(2, 1))
    )

    def first_three(t0, q, qd):
        return rates(t0, q, qd)[:3]

    for name in COMPARED:
        # The session's equations of the disc (tests/numeric/test_linearize.py
        # and tests/references/test_published.py read them too).
        model = cached_model(name, "rolling_disc")
        for seed in range(3):
            t0, q, qd = ms.states.random_state(seed)
            got = model.coordinate_accelerations(t0, q, qd)[:3]
            np.testing.assert_allclose(
                got, first_three(t0, q, qd), rtol=1e-9, atol=1e-9, err_msg=name
            )


def test_harness_shows_the_refusal_as_unsupported(tmp_path):
    from eomcompare.compare import run
    from eomcompare.systems import CATALOGUE, register_system

    register_system("contact_point_disc")(contact_point_disc)
    try:
        res = run(
            ["contact_point_disc"],
            ["kane", "lagrange", "gibbs_appell"],
            t_final=0.2,
            n_states=3,
            jobs=1,
            progress=False,
            use_cache=False,
            backend="lambdify",
            out=tmp_path,
        )
    finally:
        CATALOGUE.pop("contact_point_disc")
    rows = res.frame.set_index("formulation")
    assert rows.loc["lagrange", "status"] == "unsupported"
    assert "Dmc" in rows.loc["lagrange", "error"]
    assert rows.loc["kane", "status"] == "ok"
    assert rows.loc["gibbs_appell", "status"] == "ok"
    assert res.failures.empty
    # The report lists the refusal with its reason, apart from failures.
    from eomcompare.compare.report import write_report

    write_report(res, tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text()
    declines = text.split("Refused (1; a formulation declines the system")[1]
    assert "unsupported" in declines and "Dmc" in declines


# ----------------------------------------------------------------------
# Contradictions
# ----------------------------------------------------------------------
def _pendulum(*, vel=None, ang_vel=None, kde=None):
    """A rigid rod B about O: q about N.z, bob P at l B.x."""
    q, u = me.dynamicsymbols("q u")
    m, l = sm.symbols("m l")
    N = me.ReferenceFrame("N")
    B = N.orientnew("B", "Axis", (q, N.z))
    B.set_ang_vel(N, (ang_vel or (lambda u, N: u * N.z))(u, N))
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", l * B.x)
    if vel is None:
        P.v2pt_theory(O, N, B)
    else:
        P.set_vel(N, vel(u, l, B))
    body = me.RigidBody("rod", P, B, m, (me.inertia(B, 0, 1, 1), P))
    system = me.System(N, O)
    system.add_coordinates(q)
    system.add_speeds(u)
    system.add_kdes(kde(q, u) if kde else q.diff() - u)
    system.add_bodies(body)
    system.add_loads(me.Force(P, -m * N.y))
    return dict(
        name="pendulum",
        system=system,
        parameters={m: 1.0, l: 0.7},
        initial_state={q: 0.3, u: 0.5},
    )


def test_consistent_pendulum_is_accepted():
    ms = MechanicalSystem(**_pendulum())
    assert ms.declaration_analysis.velocities_are_derivatives
    assert ms.declaration_analysis.states_checked == 2


def test_mass_centre_velocity_other_than_its_positions_rate():
    """The rod's tip declared moving along the rod instead of across it:
    Kane's method uses the declared velocity as sympy does, the Lagrange
    family refuses naming P.  By hand: partial velocity l B.x, so gravity
    gives F = -m l sin(q); a_P . B.x = l u' and the rod's I_zz = 1, so
    F* = -(m l^2 + 1) u', and u' = -m l sin(q) / (m l^2 + 1)."""
    ms = MechanicalSystem(**_pendulum(vel=lambda u, l, B: u * l * B.x))
    [(name, reason)] = ms.declaration_analysis.underived_velocities
    assert name == "P" and "differs from the time derivative" in reason
    m, l = 1.0, 0.7
    for fname in ["kane", "gibbs_appell", "sympy_kane"]:
        model = get_formulation(fname, count_ops=False).derive(ms).numeric()
        for q0, u0 in [(0.3, 0.5), (-1.2, 2.0)]:
            np.testing.assert_allclose(
                model.speed_derivatives(0.0, [q0], [u0]),
                [-m * l * math.sin(q0) / (m * l**2 + 1)],
                rtol=1e-12,
                err_msg=fname,
            )
    for fname in LAGRANGE_FAMILY:
        with pytest.raises(UnsupportedSystemError, match=r"point P: .*differs"):
            get_formulation(fname, count_ops=False).derive(ms)


def test_angular_velocity_contradicting_the_orientation_is_refused():
    decl = _pendulum(ang_vel=lambda u, N: 2 * u * N.z)
    with pytest.raises(DeclarationError, match=r"frame B .*rate of its orientation"):
        MechanicalSystem(**decl).validate()


def test_kinematic_equations_contradicting_the_angular_velocity_are_refused():
    """A wrong kinematic equation (q' = 2u with w = u N.z): the declared
    angular velocity is no longer the orientation's rate."""
    decl = _pendulum(kde=lambda q, u: q.diff() - 2 * u)
    with pytest.raises(DeclarationError, match=r"frame B") as info:
        MechanicalSystem(**decl).validate()
    assert "differs" in str(info.value)


def test_contact_point_disc_with_a_wrong_kinematic_equation_is_refused():
    """sympy's disc with the 1/cos(q2) of q1' dropped: the body rates no
    longer match the orientation's rates."""
    ms = contact_point_disc()
    system = ms.system
    q1, q2, q3 = ms.coordinates
    u1, u2, u3 = ms.speeds
    wrong = me.System(system.frame)
    wrong.add_coordinates(q1, q2, q3)
    wrong.add_speeds(u1, u2, u3)
    wrong.add_kdes(q1.diff() - u3, q2.diff() - u1, q3.diff() - u2 + u3 * sm.tan(q2))
    wrong.add_bodies(*system.bodies)
    wrong.add_loads(*system.loads)
    with pytest.raises(DeclarationError, match=r"frame R"):
        MechanicalSystem(
            name="disc",
            system=wrong,
            parameters=dict(ms.parameters),
            initial_state=dict(ms.initial_state),
        ).validate()


# ----------------------------------------------------------------------
# Explicit solutions of dependent coordinates
# ----------------------------------------------------------------------
def _circle(solution):
    l = sm.Symbol("l", positive=True)
    system, (x, y, ux, uy, N, O, P, bob) = planar_particle(
        lambda x, y: x**2 + y**2 - l**2
    )
    g = sm.Symbol("g")
    system.add_loads(me.Force(P, -bob.mass * g * N.y))
    return dict(
        name="circle",
        system=system,
        parameters={bob.mass: 1.0, l: 1.0, g: 9.81},
        initial_state={x: 0.4, y: -math.sqrt(1 - 0.16), ux: 0.3},
        dependent_solutions={y: solution(x, l)},
        random_spread=0.3,
    )


def test_correct_dependent_solution_is_accepted():
    ms = MechanicalSystem(**_circle(lambda x, l: -sm.sqrt(l**2 - x**2)))
    assert ms.dependent_solutions


def test_dependent_solution_violating_the_constraint_is_refused():
    with pytest.raises(
        DeclarationError, match=r"dependent coordinate y\(t\).*violates"
    ):
        MechanicalSystem(**_circle(lambda x, l: -sm.sqrt(l**2 - x**2 / 2))).validate()


def test_dependent_solution_on_the_other_branch_is_refused():
    with pytest.raises(DeclarationError, match=r"y\(t\).*another branch"):
        MechanicalSystem(**_circle(lambda x, l: sm.sqrt(l**2 - x**2))).validate()


def test_catalogue_declarations_are_consistent():
    for name, opts in [
        ("four_bar", {}),
        ("crank_slider", {}),
        ("wheelbarrow", {}),
        ("rolling_disc", {}),
        ("rotating_tube", {}),
        ("n_link_pendulum", {"n": 3}),
    ]:
        # The session's declarations, which other modules derive from.
        a = cached_system(name, tuple(opts.items())).declaration_analysis
        assert a.velocities_are_derivatives, name
