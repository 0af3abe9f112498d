"""The customised Newton-Euler inverse dynamics
(:mod:`eomcompare.formulations.newton_euler`) on Khalil's robots: against Pinocchio's
``rnea`` on a model built here from the modified-DH tables, against Kane's
equations (``M q'' - f``), in the base parameters against the standard
ones, the base-parameter count against the regressor's numerical rank,
and the operation counts it reaches, pinned.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import sympy as sm
from conftest import cached_eom, cached_system
from helpers import customised_counts, random_states, tau_function

from eomcompare.formulations.newton_euler import (
    base_inertia,
    customised_inverse_dynamics,
    standard_inertia,
)
from eomcompare.formulations.newton_euler_composite import customised_forward_dynamics
from eomcompare.formulations.regressor import (
    inverse_dynamics_regressor,
    numerical_rank,
    standard_parameter_values,
    standard_parameters,
)
from eomcompare.symbolic.literature_counts import assignments_counts

H = np.pi / 2
RL2, D3, RL4 = 0.154, 0.45, 0.45
#: (sigma, alpha, d, r offset) per joint, typed in from Khalil & Dombre's
#: tables (../shared/anchors.md); theta offsets are all zero.
TABLES = {
    "stanford_arm": [
        (0, 0, 0, 0),
        (0, -H, 0, RL2),
        (1, H, 0, 0),
        (0, 0, 0, 0),
        (0, -H, 0, 0),
        (0, H, 0, 0),
    ],
    "rx90": [
        (0, 0, 0, 0),
        (0, H, 0, 0),
        (0, 0, D3, 0),
        (0, -H, 0, RL4),
        (0, H, 0, 0),
        (0, -H, 0, 0),
    ],
}
OPTIONS = {"stanford_arm": (("geometry", "khalil"),), "rx90": ()}
ZDD = sm.symbols("zdd0:6")


def _system(name):
    """The robot's declaration, one per worker: its regressor and base
    parameters (formulations.regressor) are then derived once for the
    tests of every module that reads them."""
    return cached_system(name, OPTIONS[name])


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _pinocchio(ms, table):
    """Pinocchio's model of the table: joint j placed at Rx(alpha_j),
    (d_j, 0, 0) + Rx(alpha_j) (0, 0, r_j) in frame j-1 (Khalil's frame j
    at zero joint value), about (along) its z; inertia from the
    declaration's values."""
    values = dict(ms.parameters)
    model = pin.Model()
    for j, (spec, (sigma, alpha, d, r)) in enumerate(zip(ms.joint_tree, table), 1):
        R = _rx(alpha)
        p = np.array([d, 0, 0]) + R @ np.array([0, 0, r])
        jm = pin.JointModelPZ() if sigma else pin.JointModelRZ()
        jid = model.addJoint(j - 1, jm, pin.SE3(R, p), f"joint{j}")
        xx, yy, zz, xy, yz, zx = (
            float(sm.sympify(x).xreplace(values)) for x in spec.inertia
        )
        c = np.array([float(sm.sympify(x).xreplace(values)) for x in spec.com])
        m = float(sm.sympify(spec.mass).xreplace(values))
        I = np.array([[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]])
        model.appendBodyToJoint(jid, pin.Inertia(m, c, I), pin.SE3.Identity())
    model.gravity = pin.Motion(np.array([0, 0, -float(values[_g(ms)])]), np.zeros(3))
    return model


def _g(ms):
    return next(s for s in ms.parameters if s.name == "g")


@pytest.mark.parametrize("name", ["stanford_arm", "rx90"])
@pytest.mark.parametrize("program", [False, True])
def test_customised_inverse_dynamics_equals_pinocchio_rnea(name, program):
    ms = _system(name)
    tau, _ = customised_inverse_dynamics(
        ms, ZDD, parameters="declared", program=program
    )
    if program:
        (tau,) = [sm.Matrix(tau.substituted())]
    f = tau_function(ms, tau)
    model = _pinocchio(ms, TABLES[name])
    data = model.createData()
    for q, v, a in random_states(6):
        want = pin.rnea(model, data, q, v, a)
        assert np.allclose(f(q, v, a), want, rtol=1e-10, atol=1e-10)


@pytest.fixture(scope="module")
def kane_stanford_arm():
    """``(ms, M, f)``: the Khalil Stanford arm and Kane's mass matrix and
    forcing (``M q'' = f`` with no joint forces) as functions of (q, q'),
    derived and lambdified once for the module's two comparisons."""
    eom = cached_eom("kane", "stanford_arm", OPTIONS["stanford_arm"])
    ms = eom.system
    n = len(ms.coordinates)
    fM, ff = tau_function(ms, eom.mass_matrix), tau_function(ms, eom.forcing)
    none = np.zeros(n)
    return (
        ms,
        lambda q, v: fM(q, v, none).reshape(n, n),
        lambda q, v: ff(q, v, none),
    )


def test_standard_parameter_model_is_kanes_tau(kane_stanford_arm):
    # The standard parameters given the declaration's values: tau equals
    # M q'' - f of Kane's method (derived independently, with the
    # declaration's mass, mass centre and central inertia).
    ms, M, forcing = kane_stanford_arm
    tau, symbols = customised_inverse_dynamics(ms, ZDD)
    values = standard_parameter_values(ms)
    tau = tau.xreplace({s: values[s] for s in symbols})
    f = tau_function(ms, tau)
    for q, v, a in random_states(6, seed=8):
        kane = M(q, v) @ a - forcing(q, v)
        assert np.allclose(f(q, v, a), kane, rtol=1e-10, atol=1e-10)


def test_forward_dynamics_program_is_kanes_mass_matrix_and_forcing(
    kane_stanford_arm,
):
    # tau - h at tau = 0 is Kane's forcing f (M q'' = f + tau), and the
    # entries on and above the diagonal are Kane's M.
    ms, M, forcing = kane_stanford_arm
    prog, symbols, n = customised_forward_dynamics(ms)
    values = standard_parameter_values(ms)
    tau = sm.symbols(f"_tau0:{n}")
    out = sm.Matrix(prog.substituted()).xreplace(
        {s: values[s] for s in symbols} | dict.fromkeys(tau, 0)
    )
    f = tau_function(ms, out)
    upper = np.triu_indices(n)
    for q, v, a in random_states(6, count=4, seed=12):
        want = np.concatenate([forcing(q, v), M(q, v)[upper]])
        assert np.allclose(f(q, v, a), want, rtol=1e-10, atol=1e-10)
    prog_m, _, _ = customised_forward_dynamics(ms, mass_matrix_only=True)
    assert len(prog_m.outputs) == n * (n + 1) // 2


def _base_against_standard(ms, assumptions):
    """tau in the base parameters, each replaced by its grouping of the
    standard ones, equals tau in the standard parameters for random
    values of them (consistent or not: an identity)."""
    std, standard = customised_inverse_dynamics(ms, ZDD, assumptions=assumptions)
    base, symbols = customised_inverse_dynamics(
        ms, ZDD, assumptions=assumptions, parameters="base"
    )
    _, grouping = base_inertia(ms, assumptions)
    base = base.xreplace({s: grouping[s] for s in symbols})
    fs, fb = tau_function(ms, std, standard), tau_function(ms, base, standard)
    rng = np.random.default_rng(5)
    for q, v, a in random_states(6, count=4, seed=6):
        x = rng.uniform(-1, 1, len(standard))
        assert np.allclose(fb(q, v, a, x), fs(q, v, a, x), atol=1e-10)
    return symbols


# 1-5 s each (the base parameters of a six-joint robot: the first test
# reading a robot's declaration derives its regressor, the others reuse
# it).
@pytest.mark.slow
@pytest.mark.parametrize("name", ["stanford_arm", "rx90"])
@pytest.mark.parametrize("assumptions", ["general", "simplified"])
def test_base_parameter_model_equals_standard_and_counts_the_rank(name, assumptions):
    ms = _system(name)
    symbols = _base_against_standard(ms, assumptions)
    # The count is the rank of the regressor's columns of the standard
    # parameters the assumption set keeps, stacked over random states.
    _, params = inverse_dynamics_regressor(ms)
    _, kept = standard_inertia(ms, assumptions)
    columns = [k for k, s in enumerate(params) if s in set(kept)]
    assert len(symbols) == numerical_rank(ms, columns=columns, seed=3)
    if assumptions == "general":
        assert len(symbols) == numerical_rank(ms, seed=4)


def test_standard_inertia_of_the_assumption_sets():
    ms = _system("rx90")
    _, general = standard_inertia(ms)
    _, simplified = standard_inertia(ms, "simplified")
    assert general == standard_parameters(ms)
    names = {s.name for s in simplified}
    assert len(simplified) == 30 and {"XX1", "ZZ6", "MZ3", "M4"} <= names
    assert not names & {"XY1", "XZ2", "YZ3", "MX4", "MY5"}


def test_bad_input_is_refused():
    ms = _system("rx90")
    with pytest.raises(ValueError, match="assumptions must be one of"):
        customised_inverse_dynamics(ms, ZDD, assumptions="principal")
    with pytest.raises(ValueError, match="parameters must be one of"):
        customised_inverse_dynamics(ms, ZDD, parameters="minimal")
    with pytest.raises(ValueError, match="accelerations must have 6"):
        customised_inverse_dynamics(ms, ZDD[:5])
    with pytest.raises(ValueError, match="inertia must have 6"):
        customised_inverse_dynamics(ms, ZDD, inertia=[])
    from eomcompare.formulations import UnsupportedSystemError

    with pytest.raises(UnsupportedSystemError, match="joint tree"):
        customised_inverse_dynamics(cached_system("double_pendulum"))


#: The counts reached (multiplications, additions per evaluation after cse,
#: the program of customised_inverse_dynamics): regression pins read off a
#: run, so that a change shows (the model's correctness is the comparisons
#: with Pinocchio and Kane above); SYMORO's and the targets are in
#: bench.khalil.
PINNED = {
    ("stanford_arm", "general", "standard"): (229, 197),
    ("stanford_arm", "general", "base"): (218, 187),
    ("stanford_arm", "simplified", "standard"): (151, 108),
    ("stanford_arm", "simplified", "base"): (127, 85),
    ("rx90", "general", "standard"): (240, 200),
    ("rx90", "general", "base"): (233, 192),
}


#: Forward dynamics (tau - h and M's upper triangle by composite links as
#: one evaluation order, the LDL^T solve not included) and M alone, of the
#: Stanford arm's two sets with a target.
PINNED_FORWARD = {
    ("stanford_arm", "general", "standard"): ((336, 289), (124, 106)),
    ("stanford_arm", "simplified", "base"): ((203, 128), (81, 48)),
}


@pytest.mark.slow
@pytest.mark.parametrize("key", list(PINNED_FORWARD))
def test_pinned_forward_counts(key):
    name, assumptions, parameters = key
    ms = _system(name)
    got = []
    for only in (False, True):
        prog, symbols, _ = customised_forward_dynamics(
            ms,
            assumptions=assumptions,
            parameters=parameters,
            mass_matrix_only=only,
        )
        c = assignments_counts(prog, set(symbols) | set(ms.parameters))
        got.append((c.mul, c.add))
    assert tuple(got) == PINNED_FORWARD[key]


@pytest.mark.slow
@pytest.mark.parametrize("key", list(PINNED))
def test_pinned_counts(key):
    name, assumptions, parameters = key
    ms = _system(name)
    prog, symbols = customised_inverse_dynamics(
        ms, ZDD, assumptions=assumptions, parameters=parameters, program=True
    )
    c = assignments_counts(prog, set(symbols) | set(ms.parameters))
    assert (c.mul, c.add) == PINNED[key]
    # Twice: the count does not depend on the run (set order, caches).
    prog, _ = customised_inverse_dynamics(
        ms, ZDD, assumptions=assumptions, parameters=parameters, program=True
    )
    again = assignments_counts(prog, set(symbols) | set(ms.parameters))
    assert (again.mul, again.add) == PINNED[key]


def test_parallel_joints_turn_by_the_summed_angle(monkeypatch):
    # The RX-90's first three joints (2 and 3 parallel, D3 apart) with a
    # single inertia, ZZ3 of link 3, and nothing else: f = 0 everywhere,
    # n3 = ZZ3 (w_y w_z, -w_x w_z, wd_z) in frame 3, tau3 = tau2 = ZZ3 wd3_z.
    import eomcompare.formulations.newton_euler as ne
    from eomcompare.systems.robots import RX90, mdh_system

    ms = mdh_system("rrr", RX90[:3])
    zz = sm.Symbol("ZZ3")
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    inertia = [none, none, (0, [0, 0, 0], sm.diag(0, 0, zz))]

    def counts(closed=False):
        # Link 3's inertia is symmetric about its axis: the closed form
        # would take its moment (its own test below); the recursion here.
        prog, _ = customised_inverse_dynamics(
            ms, ZDD[:3], inertia=inertia, program=True, closed_forms=closed
        )
        c = assignments_counts(prog, {zz} | set(ms.parameters))
        return c.mul, c.add

    # By the summed angle q23 = q2 + q3 (w1 = u1 z, seen in frame 2 as one
    # component): w3 across the axis = u1 (S23, C23): 2 mul, 1 add (q23);
    # w3_z = u2 + u3: 1 add; wd3_z = qdd2 + qdd3: 1 add; w_x w_z, w_y w_z:
    # 2 mul; ZZ3 times those and wd3_z: 3 mul; tau1 = n3 seen in frame 1
    # along z1, S23 n3_x + C23 n3_y: 2 mul, 1 add.  9 mul, 4 add.
    assert counts() == (9, 4)
    # Turn by turn: w2 = u1 (S2, C2): 2 mul; w3 = T3 w2: 4 mul, 2 add; w3_z,
    # wd3_z, the products and n3 as above (1 add, 1 add, 2 mul, 3 mul);
    # n3 turned into frame 2: 4 mul, 2 add; S2 n2_x + C2 n2_y: 2 mul,
    # 1 add.  17 mul, 7 add.
    monkeypatch.setattr(ne, "_angle_sum", lambda *args: None)
    assert counts() == (17, 7)


def test_axis_column_of_u_is_the_parents_turned(monkeypatch):
    # The Khalil Stanford arm's first two joints with a single inertial
    # parameter, MZ2 (a first moment along joint 2's axis): F2 = MZ2 U2 z,
    # N2 = MZ2 z x vd2, tau2 = 0, and tau1 = z1 . (A2^T n2 + P2 x A2^T f2)
    # with P2 = (0, RL2, 0).
    import eomcompare.formulations.newton_euler as ne
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rr", KHALIL_STANFORD_ARM[:2])
    mz = sm.Symbol("MZ2")
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    inertia = [none, (0, [0, 0, mz], sm.zeros(3, 3))]

    def counts(fallbacks=True):
        # Link 2 is a leaf: its U entries across the axis by the turned
        # column alone (_leaf_axis_entries off).
        return customised_counts(
            ms, inertia, {mz}, leaf_axis_entries=False, column_fallbacks=fallbacks
        )

    # U2_xz, U2_yz = U1's column turned, qdd1 (C2, S2): 2 mul; vd2
    # across the axis: U1 P2 = RL2 (-qdd1, ...) turned with g, RL2 times
    # those two products (not RL2 qdd1 named and turned): 2 mul, and g
    # (S2, C2): 2 mul, 2 add; MZ2 times U2_xz, U2_yz and times vd2_x,
    # vd2_y: 4 mul; f2 and n2 seen in frame 1, the one component each
    # that tau1 needs: 4 mul, 2 add; RL2 times the force's: 1 mul; their
    # sum: 1 add.  15 mul, 5 add.
    assert counts() == (15, 5)
    # U2_xz = w_x w_z + wd_y, U2_yz = w_y w_z - wd_x in place of the two
    # products: w2 across the axis (2 mul), w_x w_z and w_y w_z (2 mul,
    # w2_z = u2: also the products of w x q2' z), wd2 across the axis
    # (turn 2 mul, 2 add), the two sums (2 add): 4 mul and 4 add more
    # (the turn's qdd1 (S2, C2) still those RL2 multiplies).  19 mul,
    # 9 add.  (The column's fallbacks would take the turned column back.)
    monkeypatch.setattr(ne, "_turned_column", lambda *args: {})
    assert counts(False) == (19, 9)
    assert counts() == (15, 5)


def test_inertia_balanced_about_the_joint_axis():
    # The Khalil Stanford arm's first two joints, link 1 with ZZ1 and link
    # 2 with principal moments XX2, YY2, ZZ2 and nothing else: f = 0, n2 =
    # J2 wd2 + w2 x J2 w2, tau2 = n2_z, tau1 = ZZ1 qdd1 + z1 . A2^T n2.
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rr", KHALIL_STANFORD_ARM[:2])
    zz1, xx, yy, zz = sm.symbols("ZZ1 XX2 YY2 ZZ2")
    inertia = [(0, [0, 0, 0], sm.diag(0, 0, zz1)), (0, [0, 0, 0], sm.diag(xx, yy, zz))]
    params = {zz1, xx, yy, zz} | set(ms.parameters)

    def counts(balanced, leaf=False):
        # The column's fallbacks apart (their own test): wd2_x by the
        # recursion, as the counts below have it.
        return customised_counts(
            ms,
            inertia,
            params,
            balanced_axes=balanced,
            leaf_axis_entries=leaf,
            column_fallbacks=False,
        )

    # Joint by joint: w2 across the axis = u1 (S2, C2): 2 mul; wd2 across
    # it, qdd1 (S2, C2): 2 mul, plus w2 x u2 z: the products w_y u2, w_x u2
    # (2 mul, also w_y w_z and w_x w_z), 2 add; w_x w_y: 1 mul.
    # n2 = (XX wd_x + (ZZ - YY) w_y w_z, YY wd_y + (XX - ZZ) w_x w_z,
    # ZZ wd_z + (YY - XX) w_x w_y): 6 mul, 3 add; tau1 = ZZ1 qdd1 + the
    # one component of n2 seen in frame 1 (S2 n_x + C2 n_y): 3 mul, 2 add.
    # 16 mul, 7 add.
    assert counts(False) == (16, 7)
    # Balanced: XX + lam, YY + lam with lam = (ZZ - XX - YY)/2 (link 1's
    # ZZ1 - lam in return, a constant): n2_x = (XX + lam) U_zy, n2_y =
    # -(YY + lam) U_zx, U_zy = w_y w_z + wd_x and U_zx = w_x w_z - wd_y
    # (2 add), n2_z as before: 4 mul, 1 add for n2 in place of 6 mul,
    # 3 add.  14 mul, 7 add.
    assert counts(True) == (14, 7)
    # Link 2 has no child: U_zy = w_y (w'_z + 2 u2) + wd'_x and U_zx =
    # w_x (w'_z + 2 u2) - wd'_y from the turned parent's w', wd' (w'_z = 0
    # here): 2 u2, the two products (3 mul), 2 add, in place of wd2's
    # rate terms (w_y u2, w_x u2: 2 mul, 2 add) and the two sums (2 add).
    # 15 mul, 5 add.
    assert counts(True, leaf=True) == (15, 5)


def test_axial_first_moment_moved_into_the_child(monkeypatch):
    # The Khalil Stanford arm's joints 1, 2 and (as joint 3) its joint 5:
    # joint 3's axis is link 2's y.  Link 2 carries MY2 alone, link 3 MX3,
    # MZ3 and the products XZ3, YZ3 (its moment needs U's axis column, its
    # first moment the acceleration across the axis).
    import eomcompare.formulations.newton_euler as ne
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rrr", (*KHALIL_STANFORD_ARM[:2], KHALIL_STANFORD_ARM[4]))
    my2, mx3, mz3, xz3, yz3 = symbols = sm.symbols("MY2 MX3 MZ3 XZ3 YZ3")
    J3 = sm.Matrix([[0, 0, xz3], [0, 0, yz3], [xz3, yz3, 0]])
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    inertia = [none, (0, [0, my2, 0], sm.zeros(3, 3)), (0, [mx3, 0, mz3], J3)]

    def run(program):
        out, _ = customised_inverse_dynamics(
            ms, ZDD[:3], inertia=inertia, program=program
        )
        if not program:
            return out
        c = assignments_counts(out, set(symbols) | set(ms.parameters))
        return c.mul, c.add

    moved, moved_tau = run(True), run(False)
    monkeypatch.setattr(
        ne, "_axial_moments", lambda specs, inertia, P, *turned: list(inertia)
    )
    kept, kept_tau = run(True), run(False)
    # The same tau for any values of the five parameters.
    f, g = tau_function(ms, moved_tau, symbols), tau_function(ms, kept_tau, symbols)
    rng = np.random.default_rng(9)
    for q, v, a in random_states(3, count=3, seed=10):
        x = rng.uniform(-1, 1, 5)
        a6 = [*a, 0, 0, 0]
        assert np.allclose(f(q, v, a6, x), g(q, v, a6, x), atol=1e-12)
    # Kept in link 2, MY2 costs f2 = MY2 (U2_xy, U2_yy, .) across joint 1's
    # axis (two products; U2_xy = w_x w_y - qdd2: 1 mul, 1 add; U2_yy is
    # link 3's U_zz anyway), n2 = MY2 (vd2_z, 0, -vd2_x) (two products) and
    # four sums joining them to link 3's turned wrench: 5 mul, 5 add.
    # Moved, it is link 3's MZ3 + MY2, a constant.
    assert (kept[0] - moved[0], kept[1] - moved[1]) == (5, 5)
    # Regression pins of the two counts (read off a run).
    assert (moved, kept) == ((60, 38), (65, 43))


def test_leaf_takes_its_axis_rate_twice_from_w(monkeypatch):
    # The Khalil Stanford arm's joints 1, 2 and (as joint 3) its joint 5,
    # a leaf whose turned parent has a rate along its axis (wr_z = -u1 C2
    # seen in frame 3).  Its U entries across the axis need wr_z + 2 u3
    # (_leaf_axis_entries): w3_z + u3, a sum, where w3_z = wr_z + u3 is
    # formed anyway, else wr_z + 2 u3, a product and a sum.
    import eomcompare.formulations.newton_euler as ne
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rrr", (*KHALIL_STANFORD_ARM[:2], KHALIL_STANFORD_ARM[4]))
    mx3, mz3 = sm.symbols("MX3 MZ3")
    none = (0, [0, 0, 0], sm.zeros(3, 3))

    def counts(mc):
        inertia = [none, none, (0, mc, sm.zeros(3, 3))]
        prog, _ = customised_inverse_dynamics(
            ms, ZDD[:3], inertia=inertia, program=True
        )
        c = assignments_counts(prog, {mx3, mz3} | set(ms.parameters))
        return c.mul, c.add

    # MX3 needs U3_xx = -(w_y^2 + w_z^2): w3_z is formed, and 2 u3 joins it
    # as a sum.  MZ3 alone needs U3_xz, U3_yz (the leaf's entries) and U3_zz
    # (the parent's): w3_z serves nothing else, and wr_z + 2 u3 is kept.
    both, alone = counts([mx3, 0, mz3]), counts([0, 0, mz3])
    original = ne._leaf_axis_entries

    def doubled(U, i, wr, wdr, qa, wi, turned, let):
        # The rate doubled (wr_i + 2 qa) whatever needs w_i.
        return original(U, i, wr, wdr, qa, wr[i] + qa, turned, let)

    monkeypatch.setattr(ne, "_leaf_axis_entries", doubled)
    # One multiplication (2 u3) fewer where w3_z is formed anyway; the
    # same count where it is not.
    assert counts([mx3, 0, mz3]) == (both[0] + 1, both[1])
    assert counts([0, 0, mz3]) == alone
    # Regression pins (read off a run).
    assert (both, alone) == ((53, 29), (40, 16))


def test_inertia_kept_in_place_is_the_same_tau():
    # inertia_moves=False (what the base parameters alone would save, in
    # bench.khalil's passes) changes the counts, never tau.
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rrr", (*KHALIL_STANFORD_ARM[:2], KHALIL_STANFORD_ARM[4]))
    inertia, symbols = standard_inertia(ms)
    values = np.random.default_rng(3).uniform(-1, 1, len(symbols))
    taus = [
        customised_inverse_dynamics(ms, ZDD[:3], inertia=inertia, inertia_moves=m)[0]
        for m in (True, False)
    ]
    f, g = (tau_function(ms, t, symbols) for t in taus)
    for q, v, a in random_states(3, count=3, seed=11):
        a6 = [*a, 0, 0, 0]
        assert np.allclose(f(q, v, a6, values), g(q, v, a6, values), atol=1e-12)


def test_prismatic_links_inertia_moved_into_its_parent(monkeypatch):
    # The Khalil Stanford arm's joints 1, 2, 3 (the third prismatic, z3
    # along link 2's y).  Link 2 carries YY2 alone, link 3 ZZ3 alone:
    # link 3 turns with link 2, so its moment ZZ3 (w_y w_z, -w_x w_z,
    # wd_z) (frame 3) is a couple link 2 can carry as ZZ3 y y^T.
    import eomcompare.formulations.newton_euler as ne
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rrp", KHALIL_STANFORD_ARM[:3])
    yy2, zz3 = sm.symbols("YY2 ZZ3")
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    J2, J3 = sm.diag(0, yy2, 0), sm.diag(0, 0, zz3)

    def run(inertia, program=True):
        # The column's fallbacks apart (their own test): link 2's wd by
        # the recursion, as the counts below have it.
        out, _ = customised_inverse_dynamics(
            ms, ZDD[:3], inertia=inertia, program=program, column_fallbacks=False
        )
        if not program:
            return out
        c = assignments_counts(out, {yy2, zz3} | set(ms.parameters))
        return c.mul, c.add

    both = [none, (0, [0, 0, 0], J2), (0, [0, 0, 0], J3)]
    moved, moved_tau = run(both), run(both, False)
    # Moved, link 2's J is diag(0, YY2 + ZZ3, 0): the count of YY2 alone.
    assert moved == run([none, (0, [0, 0, 0], J2), none])
    monkeypatch.setattr(ne, "_fold_prismatic_inertia", lambda links, inertia: inertia)
    kept, kept_tau = run(both), run(both, False)
    # Kept, ZZ3 times link 3's w_y w_z, w_x w_z and wd_z (link 2's
    # products and wd, permuted: formed anyway), each joined to link 2's
    # moment: 3 mul, 3 add more.
    assert (kept[0] - moved[0], kept[1] - moved[1]) == (3, 3)
    f = tau_function(ms, moved_tau, (yy2, zz3))
    g = tau_function(ms, kept_tau, (yy2, zz3))
    for q, v, a in random_states(3, count=3, seed=12):
        a6 = [*a, 0, 0, 0]
        assert np.allclose(f(q, v, a6, (0.3, -0.7)), g(q, v, a6, (0.3, -0.7)))
    # Regression pins (read off a run).
    assert (moved, kept) == ((13, 6), (16, 9))


def test_leaf_frame_turned_to_its_first_moment():
    # The Khalil Stanford arm's first two joints, link 2 (a leaf) with MX2
    # and MY2 alone: f2 = U2 MS2, n2 = MS2 x vd2, tau2 = n2_z, tau1 = z1 .
    # (A2^T n2 + P2 x A2^T f2) with P2 = (0, RL2, 0).
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rr", KHALIL_STANFORD_ARM[:2])
    mx, my = sm.symbols("MX2 MY2")
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    inertia = [none, (0, [mx, my, 0], sm.zeros(3, 3))]

    def run(offsets, program=True):
        out, _ = customised_inverse_dynamics(
            ms, ZDD[:2], inertia=inertia, program=program, leaf_offsets=offsets
        )
        if not program:
            return out
        c = assignments_counts(out, {mx, my} | set(ms.parameters))
        return c.mul, c.add

    # In link 2's frame: u1^2 (1 mul); w2 across the axis, -u1 (S2, C2)
    # (2 mul); vd2_x = -RL2 qdd1 C2 - g S2, vd2_y = RL2 qdd1 S2 - g C2
    # (RL2 qdd1 once, then 5 mul, 2 add); vd2_z = -RL2 u1^2 (1 mul); w_x^2,
    # w_x w_y, w_y^2, u2^2 (4 mul); U_xx, U_xy, U_yx, U_yy (4 add); f2_x,
    # f2_y (4 mul, 2 add); n2 = (MY vz, -MX vz, MX vy - MY vx) (4 mul,
    # 1 add); tau1 = -(S2 n2_x + C2 n2_y) - RL2 (C2 f2_x - S2 f2_y) (7 mul,
    # 3 add).  26 mul, 12 add.
    assert run(False) == (26, 12)
    # Turned by atan2(MY2, MX2) about z2, MS2 = (r, 0, 0) with r =
    # sqrt(MX2^2 + MY2^2) (a parameter) and the angle q2 + beta (1 add):
    # vd2_x, w_x^2, U_xy and U_yy serve nothing (vd2_y: RL2 qdd1 S, g C,
    # 3 mul, 1 add); f2 = r (U_xx, U_yx) (2 mul); n2 = (0, -r vz, r vy)
    # (2 mul); tau1 = -C n2_y - RL2 (C f2_x - S f2_y) (4 mul, 2 add).  With
    # u1^2, w2, vd2_z, w_x w_y, w_y^2, u2^2, U_xx, U_yx as above: 18 mul,
    # 6 add.
    assert run(True) == (18, 6)
    f = tau_function(ms, run(True, False), (mx, my))
    g = tau_function(ms, run(False, False), (mx, my))
    for q, v, a in random_states(2, count=3, seed=13):
        a6 = [*a, 0, 0, 0, 0]
        assert np.allclose(f(q, v, a6, (0.3, -0.7)), g(q, v, a6, (0.3, -0.7)))


def test_turned_leaf_takes_no_axial_first_moment(monkeypatch):
    # The Khalil Stanford arm's joints 1, 2 and (as joint 3) its joint 5,
    # whose axis is link 2's y.  Link 2 carries MY2 alone (a first moment
    # along joint 3's axis), link 3 (a leaf) MX3, MY3, XZ3 and YZ3: its
    # frame is turned to MS3 = (r, 0, 0) (_leaf_offsets).
    import eomcompare.formulations.newton_euler as ne
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rrr", (*KHALIL_STANFORD_ARM[:2], KHALIL_STANFORD_ARM[4]))
    my2, mx3, my3, xz3, yz3 = symbols = sm.symbols("MY2 MX3 MY3 XZ3 YZ3")
    J3 = sm.Matrix([[0, 0, xz3], [0, 0, yz3], [xz3, yz3, 0]])
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    inertia = [none, (0, [0, my2, 0], sm.zeros(3, 3)), (0, [mx3, my3, 0], J3)]

    def run():
        prog, _ = customised_inverse_dynamics(
            ms, ZDD[:3], inertia=inertia, program=True
        )
        c = assignments_counts(prog, set(symbols) | set(ms.parameters))
        return c.mul, c.add

    kept = run()
    original = ne._axial_moments
    monkeypatch.setattr(
        ne,
        "_axial_moments",
        lambda links, inertia, P, turned=(): original(links, inertia, P),
    )
    moved = run()
    # Kept in link 2, MY2 costs f2 = MY2 (U2_xy, U2_yy, .) across joint 1's
    # axis (two products; U2_xy = w_x w_y - qdd2: 1 mul, 1 add), n2 = MY2
    # (vd2_z, 0, -vd2_x) (two products) and four sums: 5 mul, 5 add.
    # Moved into link 3 as its MZ3: f3 gains MZ3 (U_xz, U_yz, U_zz) (U_xz,
    # U_yz formed for XZ3, YZ3, U_zz the parent's: 3 mul, 3 add, all three
    # components reach tau1), n3 gains MZ3 (-vd3_y, vd3_x, 0) (2 mul,
    # 2 add) and vd3_x, which r's terms (vd3_y, vd3_z) do not need (its
    # turn: 2 mul, 1 add): 7 mul, 6 add.  Kept: 2 mul, 1 add fewer.
    assert (moved[0] - kept[0], moved[1] - kept[1]) == (2, 1)


def test_leaf_moment_takes_the_parents_turned_u_column():
    # The Khalil Stanford arm's first two joints, link 2 (a leaf) with
    # principal moments XX2, ZZ2 (YY2 = 0, so not balanced) and nothing
    # else: n2 = (XX wd_x + ZZ w_y w_z, (XX - ZZ) w_x w_z, ZZ wd_z - XX
    # w_x w_y), tau2 = n2_z, tau1 = -(S2 n2_x + C2 n2_y).
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rr", KHALIL_STANFORD_ARM[:2])
    xx, zz = sm.symbols("XX2 ZZ2")
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    inertia = [none, (0, [0, 0, 0], sm.diag(xx, 0, zz))]

    def run(fallbacks):
        prog, _ = customised_inverse_dynamics(
            ms, ZDD[:2], inertia=inertia, program=True, column_fallbacks=fallbacks
        )
        c = assignments_counts(prog, {xx, zz} | set(ms.parameters))
        return prog, (c.mul, c.add)

    # Without: w2 across the axis = u1 (S2, C2): 2 mul; wd2_x = -qdd1 S2 +
    # w_y u2: 1 mul, 1 add (w_y u2 is the product w_y w_z, as w_z = u2);
    # w_y w_z, w_x w_z, w_x w_y: 3 mul; n2: 5 mul, 2 add; tau1: 2 mul,
    # 1 add.  13 mul, 4 add.
    kept, counts = run(False)
    assert counts == (13, 4)
    # With: XX wd_x + ZZ w_y w_z = (XX + ZZ) w_y w_z - XX U_yz, U_yz the
    # parent's column turned (qdd1 S2, the product wd2_x had): the sum
    # wd2_x goes.  13 mul, 3 add.
    taken, counts = run(True)
    assert counts == (13, 3)
    f, g = (
        tau_function(ms, sm.Matrix(p.substituted()), [xx, zz]) for p in (taken, kept)
    )
    for q, v, a in random_states(2, count=3, seed=16):
        a6 = [*a, 0, 0, 0, 0]
        assert np.allclose(f(q, v, a6, [0.7, 1.3]), g(q, v, a6, [0.7, 1.3]))


@pytest.mark.slow
def test_column_fallbacks_keep_tau_on_the_stanford_arm():
    # The whole cascade (link 6's moment, then links 5, 4 and 2's U
    # entries and wd): the same tau as without, in the simplified base
    # parameters, and the count of test_pinned_counts against more
    # without.
    ms = _system("stanford_arm")
    progs = {}
    for fallbacks in (True, False):
        prog, symbols = customised_inverse_dynamics(
            ms,
            ZDD,
            assumptions="simplified",
            parameters="base",
            program=True,
            column_fallbacks=fallbacks,
        )
        c = assignments_counts(prog, set(symbols) | set(ms.parameters))
        progs[fallbacks] = (prog, (c.mul, c.add))
    assert progs[True][1] == (127, 85)
    assert progs[False][1][1] > 85
    extra = sorted(symbols, key=str)
    f, g = (
        tau_function(ms, sm.Matrix(progs[x][0].substituted()), extra)
        for x in (True, False)
    )
    values = np.random.default_rng(17).uniform(0.2, 1.5, len(extra))
    for q, v, a in random_states(6, count=3, seed=18):
        assert np.allclose(f(q, v, a, values), g(q, v, a, values), atol=1e-10)
