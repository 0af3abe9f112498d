"""The declaration contract: bad declarations fail when constructed with a
ValueError naming the problem; consistent random states are consistent."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_system
from helpers import planar_particle

from eomcompare.systems import (
    CATALOGUE,
    ConstraintError,
    DeclarationError,
    MechanicalSystem,
    get_system,
)

t = me.dynamicsymbols._t


def _slider_on_circle(**overrides):
    """A particle on a circle of radius r, described by redundant Cartesian
    coordinates x (independent) and y (dependent), x^2 + y^2 = r^2."""
    r, g = sm.symbols("r g", positive=True)
    system, (x, y, vx, vy, N, O, P, particle) = planar_particle(
        lambda x, y: x**2 + y**2 - r**2, speeds=("vx", "vy"), body="P"
    )
    m = particle.mass
    system.add_loads(me.Force(P, -m * g * N.y))
    kwargs = dict(
        name="slider_on_circle",
        system=system,
        parameters={m: 1.0, r: 2.0, g: 9.81},
        initial_state={x: 1.0, vx: 0.3, y: -np.sqrt(3.0)},
    )
    kwargs.update(overrides)
    return kwargs, (x, y, vx, vy, m, r, g, N, O, P, system)


def test_a_consistent_declaration_builds_and_solves_dependent_parts():
    kwargs, (x, y, *_rest) = _slider_on_circle()
    ms = MechanicalSystem(**kwargs)
    t0, q, qd = ms.states.consistent_initial_state()
    # Independent derivation: y = -sqrt(r^2 - x^2), y' = -x x'/y.
    assert q[1] == pytest.approx(-np.sqrt(4.0 - 1.0), abs=1e-12)
    assert qd[1] == pytest.approx(-q[0] * qd[0] / q[1], rel=1e-12)


def test_dependent_coordinates_must_match_holonomic_constraints():
    kwargs, parts = _slider_on_circle()
    system = parts[-1]
    system.add_holonomic_constraints(parts[0] - 1)
    with pytest.raises(DeclarationError, match="dependent coordinates"):
        MechanicalSystem(**kwargs)


def test_nonholonomic_constraint_must_be_linear_in_speeds():
    kwargs, (x, y, vx, vy, *_rest, system) = _slider_on_circle()
    system.holonomic_constraints = []
    system.add_nonholonomic_constraints(vx**2 + vy - 1)
    with pytest.raises(DeclarationError, match="not linear in the speeds"):
        MechanicalSystem(**kwargs)


def test_every_constant_needs_a_value():
    kwargs, (x, y, vx, vy, m, r, g, *_rest) = _slider_on_circle()
    kwargs["parameters"] = {m: 1.0, r: 2.0}
    with pytest.raises(DeclarationError, match=r"constants without a value.*\[g\]"):
        MechanicalSystem(**kwargs)


def test_kdes_must_be_solvable_for_coordinate_rates():
    kwargs, (x, y, vx, vy, *_rest, system) = _slider_on_circle()
    # Both equations give x' only: y' cannot be solved for.
    system.kdes = [vx - x.diff(), vy - 2 * x.diff()]
    with pytest.raises(
        DeclarationError, match="cannot be solved for the coordinate rates"
    ):
        MechanicalSystem(**kwargs).validate()


def test_kdes_must_be_as_many_as_coordinates():
    kwargs, (x, y, vx, vy, *_rest, system) = _slider_on_circle()
    system.kdes = [vx - x.diff()]
    with pytest.raises(
        DeclarationError, match="cannot be solved for the coordinate rates"
    ):
        MechanicalSystem(**kwargs).validate()


def test_initial_state_violating_a_constraint_reports_the_residual():
    kwargs, (x, y, *_rest) = _slider_on_circle()
    kwargs["initial_state"] = dict(kwargs["initial_state"]) | {y: -1.0}
    # x^2 + y^2 - r^2 = 1 + 1 - 4 = -2
    with pytest.raises(
        DeclarationError,
        match=r"violates the holonomic constraints \(residual \[-2\.0\]\)",
    ):
        MechanicalSystem(**kwargs).validate()


def test_initial_state_without_any_solution_is_refused():
    kwargs, (x, y, vx, *_rest) = _slider_on_circle()
    kwargs["initial_state"] = {x: 3.0, vx: 0.0}  # |x| > r: no y exists
    with pytest.raises(DeclarationError, match=r"could not solve .*\[y\(t\)\]"):
        MechanicalSystem(**kwargs).validate()


def test_unknown_function_of_time_is_refused():
    kwargs, (x, y, vx, vy, m, r, g, N, O, P, system) = _slider_on_circle()
    F = me.dynamicsymbols("F")
    system.add_loads(me.Force(P, F * N.x))
    with pytest.raises(
        DeclarationError, match=r"neither coordinates, speeds nor specified: \[F\(t\)\]"
    ):
        MechanicalSystem(**kwargs)


def test_system_must_be_a_sympy_system():
    with pytest.raises(TypeError, match="sympy.physics.mechanics.System"):
        MechanicalSystem(name="x", system=object(), parameters={}, initial_state={})


def test_unknown_catalogue_name_lists_valid_names():
    with pytest.raises(ValueError, match="valid names: .*double_pendulum"):
        get_system("no_such_system")


def test_unknown_builder_option_lists_valid_options():
    with pytest.raises(ValueError, match=r"valid options: \['n', 'angles'\]"):
        get_system("n_link_pendulum", links=3)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_n_link_pendulum_rejects_bad_n(bad):
    with pytest.raises(ValueError, match="positive integer"):
        get_system("n_link_pendulum", n=bad)


@pytest.mark.parametrize("name", list(CATALOGUE))
def test_random_states_are_consistent_and_reproducible(name):
    # The session's declaration (read only; other modules derive from it).
    ms = cached_system(name)
    for seed in range(5):
        t0, q, qd = ms.states.random_state(seed)
        t1, q1, qd1 = ms.states.random_state(seed)
        assert t0 == t1
        np.testing.assert_array_equal(q, q1)
        np.testing.assert_array_equal(qd, qd1)
        if ms.holonomic_constraints:
            assert np.max(np.abs(ms.states.holonomic_residual(t0, q))) < 1e-10
        if ms.system.velocity_constraints.shape[0]:
            assert np.max(np.abs(ms.states.velocity_residual(t0, q, qd))) < 1e-10
    # Different seeds give different states.
    assert not np.allclose(ms.states.random_state(0)[1], ms.states.random_state(1)[1])


def test_random_state_of_redundant_system_satisfies_circle():
    kwargs, _ = _slider_on_circle()
    ms = MechanicalSystem(**kwargs)
    for seed in range(10):
        t0, q, qd = ms.states.random_state(seed)
        assert q[0] ** 2 + q[1] ** 2 == pytest.approx(4.0, abs=1e-12)
        assert q[0] * qd[0] + q[1] * qd[1] == pytest.approx(0.0, abs=1e-12)


def test_dependent_coordinates_unreachable_raise_constraint_error():
    kwargs, _ = _slider_on_circle()
    ms = MechanicalSystem(**kwargs)
    with pytest.raises(ConstraintError, match="cannot be satisfied"):
        ms.states.solve_dependent_coordinates(0.0, [5.0], [-1.0])


def test_fingerprint_changes_with_parameters_and_not_otherwise():
    a = get_system("n_link_pendulum", n=2)
    b = get_system("n_link_pendulum", n=2)
    c = get_system("n_link_pendulum", n=2, angles="absolute")
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != c.fingerprint()


def _heading_particle():
    """A particle in the plane whose speeds are its velocity components
    along a frame turned by theta, with the kinematic equations written so
    that elimination in order pivots on sin(theta)."""
    x, y, th = me.dynamicsymbols("x y theta")
    u1, u2, w = me.dynamicsymbols("u1 u2 w")
    m = sm.Symbol("m", positive=True)
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", (th, N.z))
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, u1 * A.x + u2 * A.y)
    system = me.System(N, O)
    system.add_coordinates(x, y, th)
    system.add_speeds(u1, u2, w)
    # u2 first: its x' coefficient -sin(theta) is the first pivot.
    system.add_kdes(
        u2 - (-sm.sin(th) * x.diff() + sm.cos(th) * y.diff()),
        u1 - (sm.cos(th) * x.diff() + sm.sin(th) * y.diff()),
        w - th.diff(),
    )
    system.add_bodies(me.Particle("P", P, m))
    return MechanicalSystem(
        name="heading_particle",
        system=system,
        parameters={m: 1.0},
        initial_state={x: 0, y: 0, th: 0, u1: 1.0, u2: 0.5, w: 0.2},
    ), (x, y, th, u1, u2)


def test_kinematics_has_no_spurious_pivot_at_heading_zero():
    ms, (x, y, th, u1, u2) = _heading_particle()
    at_zero = {th: 0, u1: 1.0, u2: 0.5}
    qdot = ms.kinematics.qdot
    # At heading 0 the frame is N: x' = u1, y' = u2 (LU gives 0/0 here).
    assert complex(qdot[x.diff()].xreplace(at_zero)) == pytest.approx(1.0)
    assert complex(qdot[y.diff()].xreplace(at_zero)) == pytest.approx(0.5)
    # Elsewhere: the rotation of (u1, u2) by theta.
    at = {th: 0.7, u1: 1.0, u2: 0.5}
    assert float(qdot[x.diff()].xreplace(at)) == pytest.approx(
        np.cos(0.7) - 0.5 * np.sin(0.7)
    )
    assert float(qdot[y.diff()].xreplace(at)) == pytest.approx(
        np.sin(0.7) + 0.5 * np.cos(0.7)
    )


def _rod(mass, inertia, parameters):
    """A rod hinged about N.z: body ``rod`` of mass ``mass`` and central
    inertia ``diag(inertia)`` in its frame, parameters as given."""
    q, u = me.dynamicsymbols("q u")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = N.orientnew("B", "Axis", (q, N.z))
    B.set_ang_vel(N, u * N.z)
    G = O.locatenew("G", -B.y)
    G.v2pt_theory(O, N, B)
    rod = me.RigidBody("rod", G, B, mass, (me.inertia(B, *inertia), G))
    system = me.System(N, O)
    system.add_coordinates(q)
    system.add_speeds(u)
    system.add_kdes(u - q.diff())
    system.add_bodies(rod)
    return dict(
        name="rod",
        system=system,
        parameters=parameters,
        initial_state={q: 0.1, u: 0.0},
    )


m, Ixx, Iyy, Izz = sm.symbols("m I_xx I_yy I_zz")
mp = sm.Symbol("m", positive=True)


@pytest.mark.parametrize(
    "mass,inertia,parameters,match",
    [
        (m, (1, 1, 1), {m: -2.0}, r"body 'rod': mass -2 is negative"),
        (-1.5, (1, 1, 1), {}, r"body 'rod': mass -1.5 is negative"),
        (
            1,
            (Ixx, Iyy, Izz),
            {Ixx: 0.1, Iyy: 0.1, Izz: 0.3},
            r"body 'rod': the principal moments of inertia \[0.1, 0.1, 0.3\] "
            r"violate the triangle inequality",
        ),
        (
            1,
            (Ixx, Iyy, Izz),
            {Ixx: -0.1, Iyy: 0.2, Izz: 0.2},
            r"body 'rod': the inertia is not positive semi-definite",
        ),
        (
            mp,
            (1, 1, 1),
            {mp: -1.0},
            r"parameter m is declared positive and given -1$",
        ),
        (m, (1, 1, 1), {m: float("nan")}, r"parameter m is given nan, not a finite"),
    ],
    ids=[
        "negative-parameter",
        "negative-number",
        "triangle",
        "indefinite",
        "contradicts-assumption",
        "nan",
    ],
)
def test_unphysical_mass_inertia_and_parameters_are_refused(
    mass, inertia, parameters, match
):
    with pytest.raises(DeclarationError, match=match):
        MechanicalSystem(**_rod(mass, inertia, parameters))


def test_physical_symbolic_and_zero_mass_properties_are_accepted():
    # A thin rod (one principal moment 0, the triangle inequality an
    # equality), a massless body, and assumptions the values agree with.
    ms = MechanicalSystem(**_rod(mp, (Ixx, Iyy, 0), {mp: 2.0, Ixx: 0.5, Iyy: 0.5}))
    assert ms.parameters[mp] == 2.0
    MechanicalSystem(**_rod(0, (0, 0, 0), {}))
    # Zero for a symbol declared positive: gravity switched off.
    kwargs, (*_, g, _N, _O, _P, _system) = _slider_on_circle()
    kwargs["parameters"] = {**kwargs["parameters"], g: 0.0}
    assert MechanicalSystem(**kwargs).parameters[g] == 0.0


def test_replace_keeps_every_argument_and_checks_the_new_declaration():
    kwargs, (x, y, vx, vy, m, r, g, *_rest) = _slider_on_circle(
        description="a slider", energy_conserved=True, options={"k": 1}
    )
    ms = MechanicalSystem(**kwargs)
    same = ms.replace()
    assert same is not ms and same.fingerprint() == ms.fingerprint()
    for field in ("description", "energy_conserved", "options", "random_spread"):
        assert getattr(same, field) == getattr(ms, field), field
    # A change reaches the new declaration only; the rest is kept.
    heavier = ms.replace(parameters={m: 3.0, r: 2.0, g: 9.81})
    assert heavier.parameters[m] == 3.0 and ms.parameters[m] == 1.0
    assert heavier.description == "a slider" and heavier.energy_conserved
    assert heavier.fingerprint() != ms.fingerprint()
    # The new declaration is checked as any is: x = 1, y = -1 is off the
    # circle, which the numeric checks find.
    off = ms.replace(initial_state={x: 1.0, vx: 0.3, y: -1.0})
    with pytest.raises(DeclarationError, match="violates the holonomic"):
        off.validate()
    with pytest.raises(TypeError, match="unknown argument.*'colour'"):
        ms.replace(colour="red")


def test_the_constructor_declares_and_validate_checks_with_numbers():
    """Declaring evaluates nothing: no numeric half is built, no Newton
    iteration runs; an initial state off the constraints is found by
    validate(), which names the residual and returns the declaration
    when every check passes."""
    kwargs, (x, y, vx, vy, m, r, g, *_rest) = _slider_on_circle()
    off = MechanicalSystem(**(kwargs | {"initial_state": {x: 1.0, vx: 0.3, y: -1.0}}))
    assert "states" not in vars(off) and "declaration_analysis" not in vars(off)
    with pytest.raises(DeclarationError, match=r"violates the holonomic.*residual"):
        off.validate()
    ok = MechanicalSystem(**kwargs)
    assert ok.validate() is ok
    assert "declaration_analysis" in vars(ok)
    t0, q, qd = ok.states.consistent_initial_state()
    assert abs(ok.states.holonomic_residual(t0, q)).max() < 1e-12
