"""Andrews' squeezing mechanism against the IVP test set: the published
consistent initial angles satisfy the declared loop constraints, every
formulation's accelerations equal those of the test set's own equations
(Hairer & Wanner VII.7, written out below), and the stiff integration over
[0, 0.03] agrees across formulations and with the reference solution."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sympy as sm
from conftest import cached_eom, cached_system

from eomcompare.formulations.base import formulation_names
from eomcompare.numeric.integrate import integrate
from eomcompare.systems.andrews_squeezer import ANDREWS_INITIAL_ANGLES

#: modified_lagrange needs minutes on this system: it runs as slow.
FAST = [f for f in formulation_names(default_only=True) if f != "modified_lagrange"]
SLOW = [f for f in formulation_names(default_only=True) if f == "modified_lagrange"]


@functools.cache
def _testset_equations():
    """The test set's index-1 form M q'' = f - G^T lam, G q'' = -(G q')' q'
    (Hairer & Wanner, Solving ODEs II, VII.7): mass matrix, forces and
    loop constraints g(q) = 0 as published, lambdified."""
    P = {str(k): v for k, v in cached_system("andrews_squeezer").parameters.items()}
    b, th, ga, ph, de, om, ep = q = sm.symbols("b th ga ph de om ep")
    qd = sm.symbols("bp thp gap php dep omp epp")
    bp, thp, gap, php, dep, omp, epp = qd
    m = [None] + [P[f"m{i}"] for i in range(1, 8)]
    i_ = [None] + [P[f"i{i}"] for i in range(1, 8)]
    rr, da, d, ra = P["rr"], P["da"], P["d"], P["ra"]
    sa, sb, sc, sd, ss = P["sa"], P["sb"], P["sc"], P["sd"], P["ss"]
    e, ea, zt, ta, tb = P["e"], P["ea"], P["zt"], P["ta"], P["tb"]
    zf, fa, u, ua, ub = P["zf"], P["fa"], P["u"], P["ua"], P["ub"]
    xa, ya, xb, yb, xc, yc = (P[k] for k in ("xa", "ya", "xb", "yb", "xc", "yc"))
    c0, l0, mom = P["c0"], P["l0"], P["mom"]
    M = sm.zeros(7, 7)
    M[0, 0] = (
        m[1] * ra**2 + m[2] * (rr**2 - 2 * da * rr * sm.cos(th) + da**2) + i_[1] + i_[2]
    )
    M[1, 0] = M[0, 1] = m[2] * (da**2 - da * rr * sm.cos(th)) + i_[2]
    M[1, 1] = m[2] * da**2 + i_[2]
    M[2, 2] = m[3] * (sa**2 + sb**2) + i_[3]
    M[3, 3] = m[4] * (e - ea) ** 2 + i_[4]
    M[4, 3] = M[3, 4] = m[4] * ((e - ea) ** 2 + zt * (e - ea) * sm.sin(ph)) + i_[4]
    M[4, 4] = (
        m[4] * (zt**2 + 2 * zt * (e - ea) * sm.sin(ph) + (e - ea) ** 2)
        + m[5] * (ta**2 + tb**2)
        + i_[4]
        + i_[5]
    )
    M[5, 5] = m[6] * (zf - fa) ** 2 + i_[6]
    M[6, 5] = M[5, 6] = m[6] * ((zf - fa) ** 2 - u * (zf - fa) * sm.sin(om)) + i_[6]
    M[6, 6] = (
        m[6] * ((zf - fa) ** 2 - 2 * u * (zf - fa) * sm.sin(om) + u**2)
        + m[7] * (ua**2 + ub**2)
        + i_[6]
        + i_[7]
    )
    xd = sd * sm.cos(ga) + sc * sm.sin(ga) + xb
    yd = sd * sm.sin(ga) - sc * sm.cos(ga) + yb
    lang = sm.sqrt((xd - xc) ** 2 + (yd - yc) ** 2)
    force = -c0 * (lang - l0) / lang
    fx, fy = force * (xd - xc), force * (yd - yc)
    f = sm.Matrix(
        [
            mom - m[2] * da * rr * thp * (thp + 2 * bp) * sm.sin(th),
            m[2] * da * rr * bp**2 * sm.sin(th),
            fx * (sc * sm.cos(ga) - sd * sm.sin(ga))
            + fy * (sd * sm.cos(ga) + sc * sm.sin(ga)),
            m[4] * zt * (e - ea) * dep**2 * sm.cos(ph),
            -m[4] * zt * (e - ea) * php * (php + 2 * dep) * sm.cos(ph),
            -m[6] * u * (zf - fa) * epp**2 * sm.cos(om),
            m[6] * u * (zf - fa) * omp * (omp + 2 * epp) * sm.cos(om),
        ]
    )
    cb, sbt = sm.cos(b), sm.sin(b)
    cbt, sbth = sm.cos(b + th), sm.sin(b + th)
    g = sm.Matrix(
        [
            rr * cb - d * cbt - ss * sm.sin(ga) - xb,
            rr * sbt - d * sbth + ss * sm.cos(ga) - yb,
            rr * cb - d * cbt - e * sm.sin(ph + de) - zt * sm.cos(de) - xa,
            rr * sbt - d * sbth + e * sm.cos(ph + de) - zt * sm.sin(de) - ya,
            rr * cb - d * cbt - zf * sm.cos(om + ep) - u * sm.sin(ep) - xa,
            rr * sbt - d * sbth - zf * sm.sin(om + ep) + u * sm.cos(ep) - ya,
        ]
    )
    G = g.jacobian(q)
    gamma = (G * sm.Matrix(qd)).jacobian(q) * sm.Matrix(qd)
    args = [list(q), list(qd)]
    return (
        sm.lambdify(args, M),
        sm.lambdify(args, f),
        sm.lambdify([list(q)], g),
        sm.lambdify(args, G),
        sm.lambdify(args, gamma),
    )


def _testset_accelerations(q, qd):
    M, f, _, G, gamma = _testset_equations()
    Mn = np.array(M(q, qd), float)
    Gn = np.array(G(q, qd), float)
    K = np.block([[Mn, Gn.T], [Gn, np.zeros((6, 6))]])
    rhs = np.concatenate(
        [np.array(f(q, qd), float).ravel(), -np.array(gamma(q, qd), float).ravel()]
    )
    return np.linalg.solve(K, rhs)[:7]


def test_published_initial_angles_satisfy_the_declared_loops():
    ms = cached_system("andrews_squeezer")
    q0 = np.array(ANDREWS_INITIAL_ANGLES)
    assert np.max(np.abs(ms.states.holonomic_residual(0.0, q0))) < 1e-12
    # ... and the test set's own g(q) = 0, the geometry being the same.
    g = _testset_equations()[2]
    assert np.max(np.abs(np.array(g(q0), float))) < 1e-12
    t0, q, qd = ms.states.consistent_initial_state()
    assert np.allclose(q, q0, atol=0.0, rtol=0.0)
    assert np.all(qd == 0.0)


def _states(ms):
    yield ms.states.consistent_initial_state()
    for seed in (1, 2):
        yield ms.states.random_state(seed=seed)


def _check_accelerations(formulation):
    ms = cached_system("andrews_squeezer")
    model = cached_eom(formulation, "andrews_squeezer").numeric()
    for t0, q, qd in _states(ms):
        expected = _testset_accelerations(q, qd)
        got = model.coordinate_accelerations(t0, q, qd)
        assert np.allclose(
            got, expected, rtol=1e-8, atol=1e-8 * np.max(np.abs(expected))
        )


@pytest.mark.parametrize("formulation", FAST)
def test_accelerations_equal_the_test_set_equations(formulation):
    _check_accelerations(formulation)


@pytest.mark.slow
@pytest.mark.parametrize("formulation", SLOW)
def test_accelerations_equal_the_test_set_equations_slow(formulation):
    _check_accelerations(formulation)


#: The test set's reference angles at t = 0.03 (see
#: references.published.ANDREWS_REFERENCE for their provenance).
def _reference():
    from eomcompare.references.published import ANDREWS_REFERENCE

    return np.array(ANDREWS_REFERENCE)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_lagrange_stiff_integration_to_the_reference(method):
    eom = cached_eom("lagrange", "andrews_squeezer")
    res = integrate(
        eom,
        0.03,
        method=method,
        rtol=1e-10,
        atol=1e-10,
        t_eval=np.linspace(0.0, 0.03, 7),
    )
    assert res.success
    assert res.max_holonomic_residual < 1e-8
    assert np.max(np.abs(res.velocity_residual)) < 1e-5
    ref = _reference()
    assert np.allclose(res.q[-1], ref, rtol=1e-6, atol=0.0)


@pytest.mark.slow
def test_every_formulation_follows_the_same_trajectory():
    """Trajectories over [0, 0.03], sampled every 5 ms, agree with the
    multiplier formulation's.  Integrated on the compiled backend: the
    stiff solve evaluates each right-hand side thousands of times, half the
    CPU of the lambdified one, compile included (the two backends agree to
    round-off: tests/numeric/test_compiled.py)."""
    times = np.linspace(0.0, 0.03, 7)
    base = integrate(
        cached_eom("lagrange", "andrews_squeezer").numeric(backend="c"),
        0.03,
        method="Radau",
        rtol=1e-10,
        atol=1e-10,
        t_eval=times,
    )
    for formulation in FAST + SLOW:
        if formulation == "lagrange":
            continue
        res = integrate(
            cached_eom(formulation, "andrews_squeezer").numeric(backend="c"),
            0.03,
            method="Radau",
            rtol=1e-10,
            atol=1e-10,
            t_eval=times,
        )
        assert res.success, formulation
        assert np.allclose(res.q, base.q, rtol=1e-6, atol=1e-7), formulation
