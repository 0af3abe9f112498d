"""The free joint (systems.free_joint) in every formulation: torque-free
rigid-body motion against Euler's equations in closed form, conservation
in free flight, agreement at random states, unit quaternions, and the
norm drift of a long run.

Expected values come from closed forms (a steady spin about a principal
axis, the axisymmetric body's precession of its rates), from conservation
laws computed with sympy's own ``linear_momentum`` / ``angular_momentum``,
from the quaternion's norm (|q|^2 = 1 differentiated twice) and from
sympy's KanesMethod (``sympy_kane``)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.numeric.integrate import integrate
from eomcompare.systems import DeclarationError
from eomcompare.systems.floating import floating_two_body, free_body
from eomcompare.systems.free_joint import FreeJoint

# The paths the free joint takes: speeds with kinematic equations (kane,
# gibbs_appell), the unit-norm constraint with a multiplier (lagrange), the
# projection on q' = F(q) u (modified_lagrange).
OWN = ["kane", "gibbs_appell", "lagrange", "modified_lagrange", "kane_composite"]
QUATERNION_PATHS = ["kane", "lagrange", "modified_lagrange"]


@functools.cache
def _system(name, **kw):
    return {"free_body": free_body, "floating_two_body": floating_two_body}[name](**kw)


@functools.cache
def _eom(formulation, name, items=()):
    ms = _system(name, **dict(items))
    return get_formulation(formulation, count_ops=False).derive(ms)


@functools.cache
def _model(formulation, name, items=()):
    return _eom(formulation, name, items).numeric()


def _speeds(ms, t0, q, qd):
    return ms.states.speeds_from_rates(t0, q, qd)


# ----------------------------------------------------------------------
# The declaration
# ----------------------------------------------------------------------
def test_free_joint_orders_and_conventions():
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    j = FreeJoint("root", N, O)
    assert [str(c) for c in j.coordinates] == [
        f"root_{s}(t)" for s in ("qw", "qx", "qy", "qz", "x", "y", "z")
    ]
    # Angular velocity in the body frame, the origin's velocity in N.
    w = j.frame.ang_vel_in(N)
    assert w.dot(j.frame.x) == j.angular_velocity[0]
    assert j.origin.vel(N).dot(N.y) == j.linear_velocity[1]
    # A quarter turn about N.z: (cos 45deg, 0, 0, sin 45deg) takes B.x to N.y.
    c = float(np.sqrt(0.5))
    dcm = N.dcm(j.frame).xreplace(dict(zip(j.quaternion, (c, 0, 0, c))))
    np.testing.assert_allclose(
        np.array(dcm, dtype=float) @ [1, 0, 0], [0, 1, 0], atol=1e-15
    )


@pytest.mark.parametrize(
    "args, match",
    [
        (("1x", "N", "O"), "identifier"),
        (("root", "N", "O"), "ReferenceFrame"),
    ],
)
def test_free_joint_refuses_bad_arguments(args, match):
    with pytest.raises(DeclarationError, match=match):
        FreeJoint(*args)


def test_free_joint_state_refuses_a_quaternion_off_the_sphere():
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    j = FreeJoint("root", N, O)
    with pytest.raises(
        DeclarationError, match=r"\[1.0, 0.1, 0.0, 0.0\] has norm 1.00498"
    ):
        j.state(quaternion=(1.0, 0.1, 0.0, 0.0))
    with pytest.raises(DeclarationError, match="position must be 3 finite"):
        j.state(position=(0.0, float("nan"), 0.0))


def test_random_and_consistent_states_keep_unit_quaternions():
    ms = _system("floating_two_body")
    _, q, qd = ms.states.consistent_initial_state()
    assert np.dot(q[:4], q[:4]) == pytest.approx(1.0, abs=1e-15)
    for seed in range(10):
        _, q, qd = ms.states.random_state(seed=seed)
        assert np.dot(q[:4], q[:4]) == pytest.approx(1.0, abs=1e-14)
        # Rates tangent to the sphere: the kinematic equations keep the norm.
        assert abs(np.dot(q[:4], qd[:4])) < 1e-14


# ----------------------------------------------------------------------
# Torque-free rigid body against Euler's equations
# ----------------------------------------------------------------------
@pytest.mark.parametrize("formulation", QUATERNION_PATHS)
def test_steady_spin_about_a_principal_axis(formulation):
    """Spin s about the body's z axis from the identity, drifting at v:
    q(t) = (cos(s t / 2), 0, 0, sin(s t / 2)), x(t) = v t, rates constant."""
    s, v = 2.0, np.array([0.1, -0.2, 0.3])
    items = (("angular_velocity", (0.0, 0.0, s)), ("linear_velocity", tuple(v)))
    ms = _system("free_body", **dict(items))
    model = _model(formulation, "free_body", items)
    times = np.linspace(0.0, 5.0, 11)
    res = integrate(model, 5.0, t_eval=times, rtol=1e-12, atol=1e-12)
    quat = np.stack(
        [np.cos(s * times / 2), 0 * times, 0 * times, np.sin(s * times / 2)], axis=1
    )
    np.testing.assert_allclose(res.q[:, :4], quat, atol=1e-10)
    np.testing.assert_allclose(res.q[:, 4:], np.outer(times, v), atol=1e-10)
    for tk, qk, qdk in zip(res.t, res.q, res.qd):
        np.testing.assert_allclose(_speeds(ms, tk, qk, qdk), [0, 0, s, *v], atol=1e-10)


@pytest.mark.parametrize("formulation", QUATERNION_PATHS)
def test_axisymmetric_body_precesses_at_euler_rate(formulation):
    """I = (A, A, C): w3 constant, (w1, w2) turning in the body frame at
    Omega = (C - A) / A * w3 (Euler's equations solved in closed form)."""
    A, C, w1, w3 = 0.3, 0.5, 0.7, 2.0
    items = (("inertia", (A, A, C)), ("angular_velocity", (w1, 0.0, w3)))
    ms = _system("free_body", **dict(items))
    model = _model(formulation, "free_body", items)
    times = np.linspace(0.0, 10.0, 21)
    res = integrate(model, 10.0, t_eval=times, rtol=1e-12, atol=1e-12)
    omega = (C - A) / A * w3
    expected = np.stack(
        [w1 * np.cos(omega * times), w1 * np.sin(omega * times), w3 + 0 * times],
        axis=1,
    )
    u = np.array([_speeds(ms, *x) for x in zip(res.t, res.q, res.qd)])
    np.testing.assert_allclose(u[:, :3], expected, atol=1e-9)


def _momenta(ms):
    """(T, p, H_O) as functions of (q, u), from sympy's own functions."""
    N = ms.frame
    O = ms.system.fixed_point
    q, u = list(ms.coordinates), list(ms.speeds)
    bodies = list(ms.bodies)
    p = me.linear_momentum(N, *bodies).to_matrix(N)
    H = me.angular_momentum(O, N, *bodies).to_matrix(N)
    T = sum(b.kinetic_energy(N) for b in bodies)
    values = dict(ms.parameters)
    exprs = [sm.sympify(e).xreplace(values) for e in [T, *p, *H]]
    Q, U = sm.symbols(f"q0:{len(q)}"), sm.symbols(f"u0:{len(u)}")
    plain = dict(zip(q, Q)) | dict(zip(u, U))
    f = sm.lambdify([Q, U], [e.xreplace(plain) for e in exprs])
    return lambda qq, uu: np.array(f(qq, uu), dtype=float)


@functools.cache
def _free_flight_momenta():
    """:func:`_momenta` of the gravity-free floating two-body system, the
    same functions for every formulation's run: lambdified once."""
    return _momenta(_system("floating_two_body"))


def test_triaxial_body_keeps_its_energy_and_momentum_magnitude():
    """Euler's equations keep T = w.Iw/2 and |Iw| for any inertia."""
    ms = _system("free_body")
    model = _model("kane", "free_body")
    I = np.array([0.3, 0.4, 0.5])
    res = integrate(model, 10.0, t_eval=np.linspace(0, 10, 41), rtol=1e-12, atol=1e-12)
    u = np.array([_speeds(ms, *x) for x in zip(res.t, res.q, res.qd)])[:, :3]
    T = 0.5 * np.einsum("ij,j,ij->i", u, I, u)
    H = np.linalg.norm(u * I, axis=1)
    assert np.ptp(T) / T[0] < 1e-10
    assert np.ptp(H) / H[0] < 1e-10


# ----------------------------------------------------------------------
# The floating two-body system
# ----------------------------------------------------------------------
@pytest.mark.parametrize("formulation", ["kane", "lagrange", "modified_lagrange"])
def test_free_flight_conserves_energy_and_momenta(formulation):
    """No gravity: T, the linear momentum and the angular momentum about
    the fixed point O (in N) stay constant over 10 s."""
    ms = _system("floating_two_body")
    model = _model(formulation, "floating_two_body")
    t0, q0, qd0 = ms.states.random_state(seed=3)
    times = np.linspace(0.0, 10.0, 51)
    res = integrate(
        model, 10.0, t_eval=times, initial_state=(t0, q0, qd0), rtol=1e-12, atol=1e-12
    )
    assert res.success
    measure = _free_flight_momenta()
    vals = np.array(
        [
            measure(qk, _speeds(ms, tk, qk, qdk))
            for tk, qk, qdk in zip(res.t, res.q, res.qd)
        ]
    )
    T, p, H = vals[:, 0], vals[:, 1:4], vals[:, 4:7]
    assert np.ptp(T) / T[0] < 1e-9
    assert np.max(np.ptp(p, axis=0)) / np.linalg.norm(p[0]) < 1e-9
    assert np.max(np.ptp(H, axis=0)) / np.linalg.norm(H[0]) < 1e-9
    # And the motion is not trivial: the relative joint turns.
    assert np.ptp(res.q[:, 7]) > 0.5


@pytest.fixture(scope="module")
def heavy_states():
    ms = _system("floating_two_body", gravity=9.81)
    return ms, [ms.states.random_state(seed=s) for s in range(5)]


@pytest.fixture(scope="module")
def sympy_kane_accelerations(heavy_states):
    _, states = heavy_states
    model = _model("sympy_kane", "floating_two_body", (("gravity", 9.81),))
    return np.array([model.coordinate_accelerations(*s) for s in states])


def _agree(formulation, heavy_states, expected):
    _, states = heavy_states
    model = _model(formulation, "floating_two_body", (("gravity", 9.81),))
    got = np.array([model.coordinate_accelerations(*s) for s in states])
    for g, e in zip(got, expected):
        assert np.max(np.abs(g - e)) <= 1e-10 * np.max(np.abs(e))
    return got


@pytest.mark.parametrize("formulation", OWN)
def test_every_formulation_agrees_with_sympy_kane(
    formulation, heavy_states, sympy_kane_accelerations
):
    got = _agree(formulation, heavy_states, sympy_kane_accelerations)
    # |q|^2 = 1 differentiated twice: q . q'' = -|q'|^2.
    for (_, q, qd), a in zip(heavy_states[1], got):
        assert np.dot(q[:4], a[:4]) == pytest.approx(-np.dot(qd[:4], qd[:4]), rel=1e-10)


def test_sympy_lagrange_agrees_with_sympy_kane():
    """The peer's path through the free joint (T in the quaternion's
    rates, the unit norm a holonomic constraint with its multiplier) on
    one free body under gravity, triaxial and turned at random: sympy's
    KanesMethod's q''.  On the two-body system the peer took 20 s of CPU
    to derive; its second body adds a revolute joint, a path the peer
    takes on every catalogue system."""
    items = (("gravity", 9.81),)
    ms = _system("free_body", **dict(items))
    peer = _model("sympy_lagrange", "free_body", items)
    kane = _model("sympy_kane", "free_body", items)
    for seed in range(5):
        state = ms.states.random_state(seed=seed)
        got = peer.coordinate_accelerations(*state)
        expected = kane.coordinate_accelerations(*state)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))


def test_lagrange_reports_the_norm_multiplier(heavy_states):
    ms, states = heavy_states
    # The derivation the agreement test above read, not a second one.
    eom = _eom("lagrange", "floating_two_body", (("gravity", 9.81),))
    assert eom.system is ms
    assert len(eom.extras["norm_multipliers"]) == 1
    assert eom.multipliers == eom.extras["norm_multipliers"]
    model = _model("lagrange", "floating_two_body", (("gravity", 9.81),))
    lam = np.array([model.multipliers(*s) for s in states]).ravel()
    assert lam.shape == (5,) and np.all(np.isfinite(lam))
    # The value depends on how w is extended off the sphere; what holds for
    # any extension is the constraint's row, C = 2 q^T on the quaternion.
    C = np.asarray(
        sm.lambdify([list(ms.coordinates)], eom.extras["constraint_jacobian"], "numpy")(
            states[0][1]
        ),
        dtype=float,
    )
    np.testing.assert_allclose(C[0, :4], 2 * states[0][1][:4], rtol=1e-14)
    assert np.all(C[0, 4:] == 0)


@pytest.mark.parametrize("formulation", ["kane_articulated"])
def test_tree_recursion_refuses_the_free_joint_with_a_reason(formulation):
    # Declared by hand, not by systems.declare_tree: no joint-tree record
    # (a floating URDF has one: tests/systems/test_articulated_floating.py).
    from eomcompare.formulations.base import UnsupportedSystemError

    with pytest.raises(UnsupportedSystemError, match="one-coordinate joints"):
        get_formulation(formulation, count_ops=False).derive(
            _system("floating_two_body")
        )


@pytest.mark.slow
@pytest.mark.parametrize("formulation", QUATERNION_PATHS)
def test_quaternion_norm_drift_over_a_long_run(formulation, capsys):
    """100 s of free flight: the norm's drift without stabilisation, and
    with the projection (normalisation every 0.5 s) that integrate uses by
    default.  Printed; bounded loosely (the integrator's tolerance, 1e-10,
    over 100 s)."""
    ms = _system("floating_two_body")
    model = _model(formulation, "floating_two_body")
    start = ms.states.random_state(seed=3)
    times = np.linspace(0.0, 100.0, 201)
    drift = {}
    for stab in (None, "projection"):
        res = integrate(
            model, 100.0, t_eval=times, initial_state=start, stabilization=stab
        )
        drift[stab] = float(np.max(np.abs(np.linalg.norm(res.q[:, :4], axis=1) - 1)))
    with capsys.disabled():
        print(
            f"\n{formulation}: max | |q| - 1 | over 100 s (DOP853, rtol=atol=1e-10): "
            f"{drift[None]:.2e} unstabilised, {drift['projection']:.2e} with "
            f"projection every 0.5 s"
        )
    assert drift["projection"] <= drift[None] + 1e-15
    assert drift["projection"] < 1e-9
    assert drift[None] < 1e-5


def test_the_guides_free_joint_example_spins_by_eulers_equations():
    """The guide's FreeJoint example, run as written: kane's u' is Euler's
    torque-free w' = -(w x I w) / I with I = (1, 2, 3)."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "guide.md").read_text()
    code = re.search(
        r"<!-- example: free_brick.py -->\n```python\n(.*?)```", text, re.S
    ).group(1)
    namespace: dict = {}
    exec(compile(code, "free_brick.py", "exec"), namespace)
    ms = namespace["brick"]()
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    I = np.array([1.0, 2.0, 3.0])
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        u = ms.states.speeds_from_rates(t0, q, qd)
        ud = model.speed_derivatives(t0, q, u)
        w = u[:3]
        np.testing.assert_allclose(
            ud[:3], -np.cross(w, I * w) / I, rtol=1e-12, atol=1e-12
        )
        np.testing.assert_allclose(ud[3:], 0, atol=1e-12)
