"""The identification model (:mod:`eomcompare.formulations.regressor`): the
regressor against the formulations' joint forces and Pinocchio's
``computeJointTorqueRegressor``, and the base parameters against the
regressor's numerical rank (Gautier's QR method) and against Khalil's
regrouping formulas for the RX-90, derived by hand below.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_eom, cached_system

from eomcompare.formulations import base_parameters, inverse_dynamics_regressor
from eomcompare.formulations.kane_recursive import inverse_dynamics
from eomcompare.formulations.regressor import (
    numerical_rank,
    standard_parameter_values,
    standard_parameters,
)
from eomcompare.references.robot_oracle import (
    pinocchio_configuration,
    urdf_pinocchio_model,
)
from eomcompare.systems import get_system

T = me.dynamicsymbols._t
OWN = ("kane", "lagrange", "modified_lagrange", "gibbs_appell")
#: Position of each standard parameter (XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ,
#: M) in Pinocchio's ten per joint (m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz,
#: Izz, its documented order).
PIN_ORDER = (4, 5, 7, 6, 8, 9, 1, 2, 3, 0)
#: The two-joint chain of the identity with every formulation's tau.
CHAIN = ("spatial_chain", (("n", 2),))


def _function(ms, exprs, extra=()):
    """exprs as a function of (q, q', q'', extra values): q' and u are the
    same numbers for a joint tree."""
    q = list(ms.coordinates)
    x = sm.symbols(f"_x0:{3 * len(q)}")
    n = len(q)
    rule = dict(zip([v.diff(T, 2) for v in q], x[2 * n :]))
    rule |= dict(zip([v.diff(T) for v in q], x[n : 2 * n]))
    rule |= dict(zip([v.diff(T) for v in ms.speeds], x[2 * n :]))
    rule |= dict(zip(ms.speeds, x[n : 2 * n]))
    rule |= dict(zip(q, x[:n]))
    e = sm.Matrix(exprs).xreplace(rule)
    f = sm.lambdify([*x, *ms.parameters, *extra], e, cse=True)
    return lambda q, v, a, p=(), e=(): np.asarray(f(*q, *v, *a, *p, *e), float)


def _states(n, count=6, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (rng.uniform(-1.5, 1.5, n) for _ in range(3))


def test_regressor_times_standard_parameters_is_every_formulations_tau():
    ms = cached_system(*CHAIN)
    Y, p = inverse_dynamics_regressor(ms)
    assert Y.shape == (2, 20) and list(p) == list(standard_parameters(ms))
    values = standard_parameter_values(ms)
    ours = _function(ms, Y * p.xreplace(values))
    u = list(ms.speeds)
    theirs = {"kane_recursive": _function(ms, inverse_dynamics(ms))}
    for name in OWN:
        eom = cached_eom(name, *CHAIN)
        ud = sm.Matrix([x.diff(T) for x in u])
        theirs[name] = _function(ms, eom.mass_matrix * ud - eom.forcing)
    rng = np.random.default_rng(4)
    for q, v, a in _states(2):
        # Random parameter values: the identity holds for any.
        pr = [x * rng.uniform(0.5, 1.5) for x in ms.parameters.values()]
        got = ours(q, v, a, pr).ravel()
        for name, f in theirs.items():
            want = f(q, v, a, pr).ravel()
            assert np.allclose(got, want, rtol=1e-10, atol=1e-10), name


def _against_pinocchio(ms, model, configuration=lambda q: q):
    Y, _ = inverse_dynamics_regressor(ms)
    f = _function(ms, Y)
    data = model.createData()
    n = len(ms.coordinates)
    order = [10 * k + i for k in range(n) for i in PIN_ORDER]
    for q, v, a in _states(n, seed=2):
        want = pin.computeJointTorqueRegressor(model, data, configuration(q), v, a)
        got = f(q, v, a, [float(x) for x in ms.parameters.values()])
        assert np.allclose(got, want[:, order], rtol=1e-9, atol=1e-9)


# The 6-joint URDF arm: Y and its lambdified form, about 6 s.
@pytest.mark.slow
def test_regressor_equals_pinocchios_on_ur5():
    ms = get_system("ur5")
    model = urdf_pinocchio_model(ms)
    _against_pinocchio(ms, model, lambda q: pinocchio_configuration(model, q))


def _base_model_check(ms):
    """Y_b base = Y standard for any standard parameter values, Y_b being
    columns of Y; the number of base parameters is Y's numerical rank."""
    standard, base, grouping = base_parameters(ms)
    assert len(base) == numerical_rank(ms, seed=11)
    Yb, beta = inverse_dynamics_regressor(ms, base=True)
    assert list(beta) == list(base) and list(grouping.values()) == list(base)
    Y, p = inverse_dynamics_regressor(ms)
    assert list(p) == list(standard)
    # Each column of Y_b is a column of Y (that of the standard parameter
    # the base parameter is grouped into): Y_b is evaluated through Y.
    columns = [
        next(c for c in range(Y.cols) if Y[:, c] == Yb[:, j]) for j in range(Yb.cols)
    ]
    s = sm.symbols(f"_s0:{len(standard)}")
    fy = _function(ms, Y)
    fbeta = _function(ms, beta.xreplace(dict(zip(standard, s))), s)
    rng = np.random.default_rng(9)
    params = [float(x) for x in ms.parameters.values()]
    for q, v, a in _states(len(ms.coordinates)):
        # Any standard parameter values, consistent or not: an identity.
        x = rng.uniform(-1, 1, len(standard))
        y = fy(q, v, a, params)
        got = y[:, columns] @ fbeta(q, v, a, params, x).ravel()
        assert np.allclose(got, y @ x, atol=1e-10)
    return grouping


@pytest.mark.slow
def test_base_parameters_of_a_general_chain():
    # Generic geometry, revolute joints: 7 per link beyond the first, and
    # only ZZR1 of the first (gravity along its axis).
    grouping = _base_model_check(cached_system("spatial_chain", (("n", 3),)))
    assert len(grouping) == 1 + 7 + 7


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,options,count",
    [("stanford_arm", {"geometry": "khalil"}, 33), ("rx90", {}, 36)],
)
def test_base_parameters_of_khalils_robots(name, options, count):
    # count: the numerical rank measured by _base_model_check, recorded
    # here so that a change of either shows.
    grouping = _base_model_check(cached_system(name, tuple(options.items())))
    assert len(grouping) == count


@pytest.mark.slow
def test_rx90_groupings_are_khalils_formulas():
    # Khalil & Dombre's rules for revolute joint j (modified DH):
    # MX_{j-1} += d_j M_j, MY_{j-1} -= sin(alpha_j) (MZ_j + r_j M_j),
    # XZ_{j-1} -= d_j cos(alpha_j) (MZ_j + r_j M_j), M_{j-1} += M_j,
    # XX_{j-1} += YY_j + 2 r_j MZ_j + r_j^2 M_j, applied from link 6 in.
    # For the RX-90: M grouped into link 3 is M4 + M5 + M6 (RL4 = r_4,
    # alpha_4 = -pi/2), into link 2 M3 + M4 + M5 + M6 (D3 = d_3, alpha_3 = 0).
    _, _, g = base_parameters(cached_system("rx90"))
    S = {s.name: s for e in g.values() for s in e.free_symbols}
    D3, RL4 = S["D3"], S["RL4"]
    M3456 = S["M3"] + S["M4"] + S["M5"] + S["M6"]
    M456 = M3456 - S["M3"]
    want = {
        "MYR3": S["MY3"] + S["MZ4"] + RL4 * M456,
        "MXR2": S["MX2"] + D3 * M3456,
        "XZR2": S["XZ2"] - D3 * S["MZ3"],
        "MYR5": S["MY5"] + S["MZ6"],
        "MYR4": S["MY4"] - S["MZ5"],
        "XXR6": S["XX6"] - S["YY6"],
        "XXR3": S["XX3"] - S["YY3"] + S["YY4"] + 2 * RL4 * S["MZ4"] + RL4**2 * M456,
    }
    got = {str(k): v for k, v in g.items()}
    for name, expr in want.items():
        assert sm.expand(got[name] - expr) == 0, name
    # Link 1: only ZZR1 (its axis is along gravity).
    assert [k for k in got if k.endswith("1")] == ["ZZR1"]


def test_regressor_is_derived_and_lambdified_once_per_declaration(monkeypatch):
    import eomcompare.formulations.regressor as regressor

    built, lambdified = [], []
    build, lambdify = regressor._standard_regressor, sm.lambdify
    monkeypatch.setattr(
        regressor, "_standard_regressor", lambda ms: built.append(ms) or build(ms)
    )
    monkeypatch.setattr(
        sm, "lambdify", lambda *a, **k: lambdified.append(a) or lambdify(*a, **k)
    )
    ms = get_system("spatial_chain", n=2)
    _, base, grouping = base_parameters(ms)
    # The two-joint chain of generic geometry: ZZR1 and 7 of link 2.
    assert len(base) == numerical_rank(ms) == 1 + 7
    # Link 1's columns: only ZZ1 acts (its axis is fixed).  Link 2's: its 7
    # base parameters, and ZZ1's column, which YY2, MZ2 and M2 (grouped
    # into ZZR1) reach.
    assert numerical_rank(ms, columns=range(10)) == 1
    assert numerical_rank(ms, columns=range(10, 20)) == 1 + 7
    Yb, beta = inverse_dynamics_regressor(ms, base=True)
    Y, p = inverse_dynamics_regressor(ms)
    assert list(beta) == list(grouping.values()) and Yb.shape == (2, 8)
    assert (len(built), len(lambdified)) == (1, 1)
    # Y is the caller's: a change to it does not reach the next caller.
    first = Y[0, 0]
    Y[0, 0] = sm.Symbol("changed")
    assert inverse_dynamics_regressor(ms)[0][0, 0] == first != Y[0, 0]
    # Another declaration, or this one's tree record replaced: derived
    # again, not read from what is kept for the first.
    other = get_system("spatial_chain", n=2)
    assert inverse_dynamics_regressor(other)[0].shape == (2, 20)
    assert len(built) == 2
    ms.tree = type(ms.tree)(ms.tree.links, ms.tree.gravity)
    base_parameters(ms)
    assert (len(built), len(lambdified)) == (3, 2)
