"""Kane's equations evaluated recursively in body frames
(:mod:`eomcompare.formulations.kane_recursive`) and the Stanford arm's modelling
options, against ``M u' - f`` of the formulations and Pinocchio's ``rnea``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import sympy as sm
from conftest import cached_eom, cached_system
from test_robots import pinocchio_dh, pinocchio_spatial_chain

from eomcompare.formulations import UnsupportedSystemError, get_formulation
from eomcompare.formulations.kane_recursive import inverse_dynamics
from eomcompare.systems import get_system
from eomcompare.systems.robots import PUMA560, STANFORD_ARM

ZDD = sm.symbols("zdd0:6")


def _tau_function(ms, tau, zdd):
    # The rate forms hold q' where the speed forms hold u (u = q' here).
    t = sm.Symbol("t")
    rates = {q.diff(t): u for q, u in zip(ms.coordinates, ms.speeds)}
    tau = sm.Matrix(tau).xreplace(rates)
    args = [*ms.coordinates, *ms.speeds, *zdd, *ms.parameters]
    f = sm.lambdify(args, tau, cse=True)
    p = [float(v) for v in ms.parameters.values()]
    return lambda q, u, a: np.asarray(f(*q, *u, *a, *p), dtype=float).ravel()


def _states(n, count=8, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng.uniform(-1.5, 1.5, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)


def _pinocchio_from_tree(ms):
    """Pinocchio's model of a declared joint tree (every axis z), built
    from the declaration's placements and inertia at the default
    parameter values with Pinocchio's own algebra."""
    values = dict(ms.parameters)

    def num(x):
        return float(sm.sympify(x).xreplace(values))

    model = pin.Model()
    ids = [0]
    for s in ms.joint_tree:
        assert list(s.axis) == [0, 0, 1]
        R = np.array([[num(x) for x in row] for row in s.rotation.tolist()])
        p = np.array([num(x) for x in s.offset])
        jm = pin.JointModelRZ() if s.kind == "revolute" else pin.JointModelPZ()
        jid = model.addJoint(ids[s.parent], jm, pin.SE3(R, p), s.joint)
        xx, yy, zz, xy, yz, zx = (num(x) for x in s.inertia)
        I = np.array([[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]])
        com = np.array([num(x) for x in s.com])
        model.appendBodyToJoint(
            jid, pin.Inertia(num(s.mass), com, I), pin.SE3.Identity()
        )
        ids.append(jid)
    return model


@pytest.mark.parametrize(
    "name,options",
    [
        # The 6-joint arms derive and lambdify for seconds each: out of
        # the quick loop, where the chain checks the same recursion.
        pytest.param(
            "stanford_arm", {"symbolic_inertia": True}, marks=pytest.mark.slow
        ),
        pytest.param("puma560", {}, marks=pytest.mark.slow),
        ("spatial_chain", {"n": 3}),
        # The quick instance (tests/quick_loop.py measures n = 3 as slow).
        ("spatial_chain", {"n": 2}),
    ],
)
def test_recursion_equals_mass_matrix_form(name, options):
    # tau = M u' - f of Kane's and Lagrange's derivations, at random states
    # and (for the symbolic-inertia arm) random inertial parameters.
    # The session's declarations and derivations (kane's and lagrange's of
    # the chain and of puma560 are test_robots.py's too); read only.
    key = tuple(sorted(options.items()))
    ms = cached_system(name, key)
    n = len(ms.speeds)
    zdd = ZDD[:n]
    ours = _tau_function(ms, inverse_dynamics(ms, zdd), zdd)
    for formulation in ("kane", "lagrange"):
        eom = cached_eom(formulation, name, key)
        theirs = _tau_function(ms, eom.mass_matrix * sm.Matrix(zdd) - eom.forcing, zdd)
        for q, u, a in _states(n):
            want = theirs(q, u, a)
            assert np.allclose(ours(q, u, a), want, rtol=1e-10, atol=1e-10), formulation


@pytest.mark.parametrize(
    "name,model",
    [
        ("stanford_arm", lambda: pinocchio_dh(STANFORD_ARM)),
        ("puma560", lambda: pinocchio_dh(PUMA560)),
        ("spatial_chain", lambda: pinocchio_spatial_chain(4)),
    ],
)
def test_recursion_equals_pinocchio_rnea(name, model):
    ms = cached_system(name, (("n", 4),) if name == "spatial_chain" else ())
    n = len(ms.speeds)
    ours = _tau_function(ms, inverse_dynamics(ms, ZDD[:n]), ZDD[:n])
    m = model()
    data = m.createData()
    for q, u, a in _states(n):
        want = np.array(pin.rnea(m, data, q, u, a))
        got = ours(q, u, a)
        assert np.max(np.abs(got - want)) <= 1e-9 * max(1.0, np.max(np.abs(want)))


# Derives and lambdifies a 6-joint arm several times: out of the quick loop.
@pytest.mark.slow
def test_stanford_options_are_the_general_equations_with_those_zeros():
    general = get_system("stanford_arm", symbolic_inertia=True)
    special = get_system(
        "stanford_arm",
        symbolic_inertia=True,
        principal_axes=True,
        mass_centres="joint_axes",
    )
    names = {str(s) for s in special.parameters}
    # Products and the off-axis mass-centre coordinates are gone, nothing else.
    gone = {str(s) for s in general.parameters} - names
    assert gone == {f"{x}{k}" for k in range(1, 7) for x in ("cx", "cy")} | {
        f"I{k}_{p}" for k in range(1, 7) for p in ("xy", "yz", "zx")
    }
    zero = {s: 0 for s in general.parameters if str(s) in gone}
    eg = get_formulation("kane", count_ops=False).derive(general)
    es = get_formulation("kane", count_ops=False).derive(special)
    zdd = ZDD
    tg = (eg.mass_matrix * sm.Matrix(zdd) - eg.forcing).xreplace(zero)
    ts = es.mass_matrix * sm.Matrix(zdd) - es.forcing
    fs = _tau_function(special, ts, zdd)
    args = [*special.coordinates, *special.speeds, *zdd, *special.parameters]
    fg = sm.lambdify(args, tg, cse=True)
    fts = sm.lambdify(args, ts, cse=True)
    p = [float(v) for v in special.parameters.values()]
    rng = np.random.default_rng(5)
    for q, u, a in _states(6):
        # Random parameter values too: the identity is in the parameters.
        pr = [x * rng.uniform(0.5, 1.5) for x in p]
        want = np.asarray(fg(*q, *u, *a, *pr), dtype=float).ravel()
        got = np.asarray(fts(*q, *u, *a, *pr), dtype=float).ravel()
        assert np.allclose(got, want, rtol=1e-10, atol=1e-10)
    # And the special model against Pinocchio on the same numbers.
    m = _pinocchio_from_tree(special)
    data = m.createData()
    ours = _tau_function(special, inverse_dynamics(special, zdd), zdd)
    for q, u, a in _states(6, seed=2):
        want = np.array(pin.rnea(m, data, q, u, a))
        assert np.allclose(fs(q, u, a), want, rtol=1e-9, atol=1e-9)
        assert np.allclose(ours(q, u, a), want, rtol=1e-9, atol=1e-9)


def test_stanford_joint_axes_moves_the_mass_centres_onto_the_axes():
    ms = get_system("stanford_arm", mass_centres="joint_axes")
    for s in ms.joint_tree:
        assert s.com[0] == 0 and s.com[1] == 0
    # Paul's link 1 has its mass centre off its axis (0.1105 m along the
    # body's y): the model differs there, and keeps the height along z.
    plain = get_system("stanford_arm")
    assert abs(float(plain.joint_tree[0].com[1]) + 0.1105) < 1e-12
    assert plain.joint_tree[0].com[2] == ms.joint_tree[0].com[2]


def test_bad_options_and_systems():
    with pytest.raises(ValueError, match="mass_centres must be one of"):
        get_system("stanford_arm", mass_centres="centroid")
    with pytest.raises(TypeError, match="principal_axes must be True or False"):
        get_system("stanford_arm", principal_axes="yes")
    with pytest.raises(UnsupportedSystemError, match="joint tree"):
        inverse_dynamics(get_system("double_pendulum"))
    with pytest.raises(ValueError, match="6 entries"):
        inverse_dynamics(get_system("stanford_arm"), ZDD[:2])
