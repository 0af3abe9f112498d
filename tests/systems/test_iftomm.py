"""The IFToMM benchmark problems A01, A02, A04, A05 (systems/iftomm.py)
against their specification as transcribed in shared/benchmarks.md, and
against closed forms: the pendulum's period by the complete elliptic
integral, energy conservation, the N-four-bar's parallelogram motion (a
physical pendulum).  Bricard's redundant constraints in the Lagrange
family, and what each formulation does at the N-four-bar's singular
position."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_eom, cached_system
from helpers import parallelogram_branch
from scipy.integrate import solve_ivp
from scipy.special import ellipk

from eomcompare.formulations import get_formulation
from eomcompare.numeric.integrate import _projection_functions, integrate
from eomcompare.numeric.model import SingularConfigurationError
from eomcompare.systems import system_facts

t = me.dynamicsymbols._t
OWN = ("kane", "lagrange", "modified_lagrange", "gibbs_appell")
G = 9.81


def _values(ms):
    return {str(k): v for k, v in ms.parameters.items()}


def _positions(ms, q, exprs):
    sub = dict(zip(ms.coordinates, q)) | dict(ms.parameters)
    return np.array([float(sm.sympify(e).xreplace(sub)) for e in exprs])


def _energy(ms, res):
    return np.array(
        [sum(ms.states.energy(tt, q, qd)) for tt, q, qd in zip(res.t, res.q, res.qd)]
    )


# ----------------------------------------------------------------------
# Facts
# ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,problem,t_final,reference",
    [
        ("iftomm_pendulum", "A01", 2000.0, ("x_P1", "y_P1")),
        ("n_four_bar", "A02", 10.0, ("x_B0", "y_B0")),
        pytest.param(
            "bricard", "A04", 10.0, ("x_P3", "y_P3", "z_P3"), marks=pytest.mark.slow
        ),
        ("flyball_governor", "A05", 10.0, ("s",)),
    ],
)
def test_benchmark_facts_name_the_problem_and_its_reference(
    name, problem, t_final, reference
):
    """benchmarks.md: the problems' times, reference points and the two
    accuracy levels 1e-1 and 1e-3."""
    b = system_facts(name).benchmark
    assert (b.problem, b.t_final, b.reference) == (problem, t_final, reference)
    assert b.accuracy == (1e-1, 1e-3)
    assert set(reference) <= set(cached_system(name).observables)
    if name == "iftomm_pendulum":
        assert b.output_steps == 4000
    assert b.energy_conserved == (name != "flyball_governor")


# ----------------------------------------------------------------------
# Specification values (benchmarks.md, "The IFToMM library ...")
# ----------------------------------------------------------------------
def test_pendulum_specification():
    """A01: 1 kg lumped mass, massless 1 m link, gravity 9.81 along -y,
    released at rest with x(P1) = +1 m."""
    ms = cached_system("iftomm_pendulum")
    assert _values(ms) == {"m": 1.0, "L": 1.0, "g": 9.81}
    (mass,) = ms.bodies
    assert isinstance(mass, me.Particle)
    t0, q, qd = ms.states.consistent_initial_state()
    obs = ms.observables
    np.testing.assert_allclose(_positions(ms, q, [obs["x_P1"], obs["y_P1"]]), [1, 0])
    assert np.all(qd == 0)
    # Gravity along -y: the potential energy falls by m g as P1 drops 1 m.
    assert sum(ms.states.energy(0.0, [-np.pi / 2], [0.0])) == pytest.approx(-9.81)


def test_n_four_bar_specification():
    """A02: 2N+1 uniform links of 1 m and 1 kg, gravity -y, x'(B0) = 1 m/s
    at the start (cranks vertical, B0 at (0, 1) as in the OpenSim port)."""
    for n in (1, 2, 3):
        ms = cached_system("n_four_bar", (("n", n),))
        assert _values(ms) == {"m": 1.0, "L": 1.0, "g": 9.81}
        assert len(ms.bodies) == 2 * n + 1
        assert all(
            float(b.mass.xreplace(dict(ms.parameters))) == 1.0 for b in ms.bodies
        )
        t0, q, qd = ms.states.consistent_initial_state()
        b0 = [ms.observables["x_B0"], ms.observables["y_B0"]]
        np.testing.assert_allclose(_positions(ms, q, b0), [0.0, 1.0], atol=1e-15)
        rates = {qi.diff(t): v for qi, v in zip(ms.coordinates, qd)}
        vel = [
            float(
                sm.sympify(e)
                .diff(t)
                .xreplace(rates)
                .xreplace(dict(zip(ms.coordinates, q)) | dict(ms.parameters))
            )
            for e in b0
        ]
        np.testing.assert_allclose(vel, [1.0, 0.0], atol=1e-15)
        # 1 degree of freedom in the parallelogram: two loop rows per window.
        assert ms.degrees_of_freedom == 1
        assert len(ms.holonomic_constraints) == 2 * n
    assert system_facts("n_four_bar").sizes == (2,)


@pytest.mark.slow
def test_bricard_specification():
    """A04: five rods of 1 m, 1 kg, 0.1 m square section, gravity -y;
    Grübler's count 0 (five closure equations for five joint angles), one
    degree of freedom."""
    ms = cached_system("bricard")
    assert _values(ms) == {"m": 1.0, "L": 1.0, "a": 0.1, "g": 9.81}
    assert len(ms.bodies) == 5
    for body in ms.bodies:
        # A 1 x 0.1 x 0.1 box of 1 kg: central moments 1.01/12 (twice)
        # and 0.02/12 about its long axis.
        I = np.array(
            me.inertia_of_point_mass(
                0, body.masscenter.pos_from(body.masscenter), body.frame
            ).to_matrix(body.frame)
            + body.central_inertia.to_matrix(body.frame).xreplace(dict(ms.parameters)),
            dtype=float,
        )
        np.testing.assert_allclose(
            np.sort(np.linalg.eigvalsh(I)), [0.02 / 12, 1.01 / 12, 1.01 / 12]
        )
    assert len(ms.coordinates) == len(ms.holonomic_constraints) == 5
    assert ms.degrees_of_freedom == 1
    t0, q, qd = ms.states.consistent_initial_state()
    p3 = [ms.observables[k] for k in ("x_P3", "y_P3", "z_P3")]
    np.testing.assert_allclose(_positions(ms, q, p3), [1.0, -1.0, 0.0], atol=1e-15)
    assert np.all(qd == 0)


@pytest.mark.slow
def test_bricard_constraint_jacobian_has_rank_four_on_the_motion():
    """One closure equation is redundant at every configuration of the
    motion (the mechanism moves although Grübler says it cannot)."""
    ms = cached_system("bricard")
    f = _projection_functions(ms)
    p = ms.states.parameter_vector()
    for seed in range(5):
        t0, q, _ = ms.states.random_state(seed)
        sv = np.linalg.svd(
            np.asarray(f["phi_q"](t0, q, p), float).reshape(5, 5), compute_uv=False
        )
        assert sv[3] > 1e-2 * sv[0] and sv[4] < 1e-12 * sv[0]
    assert len(ms.redundant_holonomic_constraints) == 1
    assert len(ms.velocity_constraints) == 4


def test_flyball_governor_specification():
    """A05: shaft and rods 1.0 x 0.01 x 0.01 m, slider a 0.1 m cube, density
    3000 kg/m^3, two 5 kg point masses, K = 8e5 N/m, C = 4e4 N s/m, rest
    length 0.5 m, s = 0.5 m, alpha = 30 degrees, shaft at 2 pi rad/s."""
    ms = cached_system("flyball_governor")
    v = _values(ms)
    assert (v["rho"], v["b"], v["l"], v["c"], v["mp"]) == (3000.0, 0.01, 1.0, 0.1, 5.0)
    assert (v["K"], v["C"], v["L0"]) == (8e5, 4e4, 0.5)
    assert v["omega"] == pytest.approx(2 * np.pi, rel=1e-15)
    masses = {
        b.name: float(sm.sympify(b.mass).xreplace(dict(ms.parameters)))
        for b in ms.bodies
    }
    assert masses == pytest.approx(
        {
            "shaft": 0.3,
            "slider": 3.0,
            "rod1": 0.3,
            "rod2": 0.3,
            "ball1": 5.0,
            "ball2": 5.0,
        }
    )
    t0, q, qd = ms.states.consistent_initial_state()
    np.testing.assert_allclose(q, [0.5, np.pi / 6, np.pi / 6])
    # theta = omega t: the shaft turns at 2 pi rad/s.
    (theta,) = ms.specified
    assert float(sm.diff(ms.specified[theta], t).xreplace(dict(ms.parameters))) == (
        pytest.approx(2 * np.pi)
    )
    # The springs start at their rest length: zero spring force, so at rest
    # the slider's acceleration is gravity's plus the rods' reaction only
    # (no stiff term): small compared with K * 1 mm / m_slider.
    qdd = (
        cached_eom("kane", "flyball_governor")
        .numeric()
        .coordinate_accelerations(t0, q, qd)
    )
    assert abs(qdd[0]) < 100.0


def test_flyball_governor_free_shaft_starts_at_two_pi():
    ms = cached_system("flyball_governor", (("shaft", "free"),))
    _, q, qd = ms.states.consistent_initial_state()
    assert qd[0] == pytest.approx(2 * np.pi) and q[0] == 0.0


# ----------------------------------------------------------------------
# Every own formulation, the same accelerations
# ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "iftomm_pendulum",
        "n_four_bar",
        pytest.param("bricard", marks=pytest.mark.slow),
        "flyball_governor",
    ],
)
def test_every_own_formulation_derives_and_agrees(name):
    ms = cached_system(name)
    models = {f: cached_eom(f, name).numeric() for f in OWN}
    for seed in range(5):
        t0, q, qd = ms.states.random_state(seed)
        ref = models["kane"].coordinate_accelerations(t0, q, qd)
        for f in OWN[1:]:
            qdd = models[f].coordinate_accelerations(t0, q, qd)
            scale = max(1.0, np.max(np.abs(ref)))
            assert np.max(np.abs(qdd - ref)) < 1e-9 * scale, (f, seed)


# ----------------------------------------------------------------------
# A01: the period and the energy
# ----------------------------------------------------------------------
def test_pendulum_period_is_the_elliptic_integral():
    """Released from the horizontal: T = 4 sqrt(L/g) K(m = 1/2)."""
    model = cached_eom("kane", "iftomm_pendulum").numeric()

    def back_at_rest(tt, x):
        return x[1]

    back_at_rest.direction = -1.0  # the speed falls through 0 at T
    sol = solve_ivp(
        model.rhs,
        (0.0, 3.0),
        [0.0, 0.0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        events=back_at_rest,
    )
    period = 4 * np.sqrt(1.0 / G) * ellipk(0.5)
    back = sol.t_events[0][sol.t_events[0] > 1.0]  # not the release itself
    assert back[0] == pytest.approx(period, rel=1e-10)


def test_pendulum_energy_is_conserved():
    ms = cached_system("iftomm_pendulum")
    res = integrate(
        cached_eom("lagrange", "iftomm_pendulum"),
        50.0,
        rtol=1e-12,
        atol=1e-12,
        t_eval=np.linspace(0, 50, 101),
    )
    E = _energy(ms, res)
    assert E[0] == 0.0  # at rest, at the pivot's height
    assert np.max(np.abs(E - E[0])) < 1e-9


# ----------------------------------------------------------------------
# A02: the singular position, the energy
# ----------------------------------------------------------------------
def _parallelogram(n=2, t_final=10.0):
    return parallelogram_branch(n, t_final, G)


def test_n_four_bar_modified_lagrange_passes_the_singular_positions():
    """Through the declared explicit solutions (the parallelogram branch)
    the equations are Lagrange's in phi0 alone, never singular: the whole
    specified time, B0 on the closed form, energy conserved."""
    ms = cached_system("n_four_bar")
    ref = _parallelogram()
    assert len(ref.t_events[0]) >= 6  # it does cross the singular positions
    t_eval = np.linspace(0.0, 10.0, 401)
    res = integrate(
        cached_eom("modified_lagrange", "n_four_bar"),
        10.0,
        rtol=1e-12,
        atol=1e-12,
        t_eval=t_eval,
    )
    assert res.success
    np.testing.assert_allclose(res.q[:, 0], ref.sol(res.t)[0], atol=1e-8)
    E = _energy(ms, res)
    assert np.max(np.abs(E - E[0])) < 1e-8


@pytest.mark.parametrize("formulation", ["kane", "lagrange", "gibbs_appell"])
def test_n_four_bar_dependent_coordinate_formulations_stop_at_the_singularity(
    formulation,
):
    """Integrating the dependent coordinates, they meet the rank-deficient
    loop Jacobian: integrate stops with an error naming the singular
    position and the time, which is a time the closed form is horizontal;
    before it B0 follows the closed form and the energy is conserved."""
    ms = cached_system("n_four_bar")
    ref = _parallelogram()
    eom = cached_eom(formulation, "n_four_bar")
    with pytest.raises(SingularConfigurationError, match="singular position") as err:
        integrate(eom, 10.0, rtol=1e-12, atol=1e-12)
    msg = str(err.value)
    te = float(msg.split("at t=")[1].split(",")[0])
    assert np.min(np.abs(ref.t_events[0] - te)) < 2e-3, msg
    phi0 = float(msg.split("phi0=")[1].split(",")[0])
    assert abs(np.sin(phi0)) < 5e-3
    # Up to just before the first singular position (the integrator may
    # step over it and be stopped at a later one): the parallelogram
    # motion, energy conserved.
    t_stop = ref.t_events[0][0] - 0.05
    res = integrate(
        eom, t_stop, rtol=1e-12, atol=1e-12, t_eval=np.linspace(0.0, t_stop, 51)
    )
    np.testing.assert_allclose(res.q[:, 0], ref.sol(res.t)[0], atol=1e-7)
    E = _energy(ms, res)
    assert np.max(np.abs(E - E[0])) < 1e-8


# ----------------------------------------------------------------------
# A04: redundant constraints in the Lagrange family, energy
# ----------------------------------------------------------------------
@pytest.mark.slow
def test_bricard_lagrange_multipliers_are_the_minimum_norm_ones():
    """lagrange keeps all five closure rows: its multipliers reproduce the
    generalized constraint force M q'' - f (q'' from Kane, which never sees
    the dropped row) and have no component in the null space of C^T (the
    multipliers of a redundant set are not unique; the minimum-norm ones
    are orthogonal to that null space)."""
    ms = cached_system("bricard")
    lag = cached_eom("lagrange", "bricard")
    assert lag.n_multipliers == 5
    assert "least-squares" in get_formulation("lagrange").redundant_constraints
    model = lag.numeric()
    kane = cached_eom("kane", "bricard").numeric()
    f = _projection_functions(ms)
    p = ms.states.parameter_vector()
    for seed in range(4):
        t0, q, qd = ms.states.random_state(seed)
        C = np.asarray(f["phi_q"](t0, q, p), float).reshape(5, 5)
        lam = model.multipliers(t0, q, qd)
        qdd = kane.coordinate_accelerations(t0, q, qd)
        M, rhs = model.mass_matrix_and_forcing(t0, model.state_from(q, qd, t0))
        force = M[:5, :5] @ qdd - rhs[:5]
        np.testing.assert_allclose(C.T @ lam, force, atol=1e-8 * np.max(np.abs(force)))
        U, sv, _ = np.linalg.svd(C)
        null = U[:, -1]  # C^T null = 0
        assert sv[-1] < 1e-12 * sv[0]
        assert abs(null @ lam) < 1e-9 * np.linalg.norm(lam)


@pytest.mark.slow
def test_bricard_modified_lagrange_removes_the_dependent_row():
    eom = cached_eom("modified_lagrange", "bricard")
    assert (
        "removes the dependent rows"
        in get_formulation("modified_lagrange").redundant_constraints
    )
    assert eom.n_multipliers == 0
    # The rates of the four dependent joints solved from four rows.
    assert len(eom.extras["dependent_rates"]) == 4


@pytest.mark.slow
@pytest.mark.parametrize("formulation", ["kane", "lagrange", "modified_lagrange"])
def test_bricard_energy_is_conserved_over_the_specified_time(formulation):
    ms = cached_system("bricard")
    res = integrate(
        cached_eom(formulation, "bricard"),
        10.0,
        rtol=1e-11,
        atol=1e-11,
        t_eval=np.linspace(0.0, 10.0, 41),
    )
    assert res.success
    E = _energy(ms, res)
    assert np.max(np.abs(E - E[0])) < 1e-7
    # It moves: P3 leaves its initial position.
    p3 = [ms.observables[k] for k in ("x_P3", "y_P3", "z_P3")]
    travel = [np.linalg.norm(_positions(ms, q, p3) - [1, -1, 0]) for q in res.q]
    assert max(travel) > 0.1


def test_register_system_refuses_a_benchmark_that_is_not_one():
    from eomcompare.systems import register_system

    with pytest.raises(TypeError, match="benchmark must be a Benchmark"):
        register_system("not_registered", benchmark={"problem": "A01"})
