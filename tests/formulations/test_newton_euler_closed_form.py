"""The customised Newton-Euler model's closed-form moments
(:mod:`eomcompare.formulations.newton_euler_closed_form`): the moment of a
link turning with the first joint and its own alone taken from Lagrange's
equations, hand-counted on small chains and checked against the
recursion's tau; a link symmetric about its axis, and the balance chosen
to make a two-rate link so."""

from __future__ import annotations

import numpy as np
import sympy as sm
from helpers import customised_counts, random_states, tau_function

from eomcompare.formulations.newton_euler import customised_inverse_dynamics
from eomcompare.symbolic.literature_counts import assignments_counts

ZDD = sm.symbols("zdd0:6")


def test_moment_of_a_link_turning_with_the_first_joint_in_closed_form():
    # The Khalil Stanford arm's first two joints, link 2 with XZ2 alone:
    # w2 = u1 e + u2 z, e = (-S2, -C2, 0), J2 = XZ2 (x z^T + z x^T).
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, RX90, mdh_system

    ms = mdh_system("rr", KHALIL_STANFORD_ARM[:2])
    xz = sm.Symbol("XZ2")
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    J = sm.zeros(3, 3)
    J[0, 2] = J[2, 0] = xz

    def run(ms, inertia, closed, program=True):
        out, _ = customised_inverse_dynamics(
            ms,
            ZDD[: len(inertia)],
            inertia=inertia,
            program=program,
            closed_forms=closed,
        )
        if not program:
            return out
        c = assignments_counts(out, {xz} | set(ms.parameters))
        return c.mul, c.add

    # Lagrange's equations of w^T J w / 2: Q = e^T J e = 0, L = e^T J z =
    # -XZ2 S2, L' = -XZ2 C2, ZZ = 0; tau1 = qdd2 L + u2^2 L', tau2 = qdd1 L.
    # L, L' (2 mul), u2^2 (1 mul), tau1 (2 mul, 1 add), tau2 (1 mul).
    # 6 mul, 1 add.
    assert run(ms, [none, (0, [0, 0, 0], J)], True) == (6, 1)
    # By the recursion: n2 = XZ2 (U_yx, w_z^2 - w_x^2, -U_yz) with U_yx =
    # w_x w_y + qdd2 and U_yz = -qdd1 S2 (the leaf's entry: w' has no z
    # component); w2 across the axis (2 mul), w_x w_y, w_x^2, u2^2 (3 mul),
    # U_yx and the difference (2 add), qdd1 S2 (1 mul), XZ2 times the three
    # (3 mul), tau1 = -(S2 n2_x + C2 n2_y) (2 mul, 1 add).  11 mul, 3 add.
    assert run(ms, [none, (0, [0, 0, 0], J)], False) == (11, 3)
    # The same tau, and through a parallel joint (the RX-90's joints 2
    # and 3, turned by q2 + q3) with a general inertia.
    rx = mdh_system("rrr", RX90[:3])
    J3 = sm.Matrix(3, 3, lambda i, j: sm.Symbol(f"J{min(i, j)}{max(i, j)}"))
    cases = [
        (ms, [none, (0, [0, 0, 0], J)]),
        (rx, [(0, [0, 0, 0], sm.diag(0, 0, xz)), none, (0, [0, 0, 0], J3)]),
    ]
    for system, inertia in cases:
        extra = sorted(
            set().union(*(sm.Matrix(x[2]).free_symbols for x in inertia)),
            key=str,
        )
        f, g = (
            tau_function(system, run(system, inertia, c, False), extra)
            for c in (True, False)
        )
        values = np.random.default_rng(14).uniform(-1, 1, len(extra))
        n = len(inertia)
        for q, v, a in random_states(n, count=3, seed=15):
            a6 = [*a, *[0] * (6 - n)]
            assert np.allclose(f(q, v, a6, values), g(q, v, a6, values), atol=1e-12)


def test_closed_form_of_a_link_symmetric_about_its_axis():
    # The summed-angle test's chain (the RX-90's first three joints) and
    # inertia, ZZ3 of link 3 alone: J3 = ZZ3 z z^T is symmetric about z3,
    # w3 = u1 e + (u2 + u3) z with e across z.  Lagrange's equations of
    # w^T J w / 2: Q = e^T J e = 0, L = e^T J z = 0, so tau1 = 0 and tau3
    # = tau2 (the parallel parent takes link 3's share) = ZZ3 (qdd2 +
    # qdd3): 1 add, 1 mul.  By the recursion: 9 mul, 4 add (counted in
    # test_newton_euler's summed-angle test).
    from eomcompare.systems.robots import RX90, mdh_system

    ms = mdh_system("rrr", RX90[:3])
    zz = sm.Symbol("ZZ3")
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    inertia = [none, none, (0, [0, 0, 0], sm.diag(0, 0, zz))]
    assert customised_counts(ms, inertia, {zz}) == (1, 1)
    assert customised_counts(ms, inertia, {zz}, closed_forms=False) == (9, 4)
    # The same tau; and with XX3 = YY3 (a body symmetric about z3) too,
    # its share of tau1 then XX3 qdd1 (a constant of link 1).
    xx = sm.Symbol("XX3")
    for J in (sm.diag(0, 0, zz), sm.diag(xx, xx, zz)):
        inertia = [none, none, (0, [0, 0, 0], J)]
        f, g = (
            tau_function(
                ms,
                customised_inverse_dynamics(
                    ms, ZDD[:3], inertia=inertia, closed_forms=c
                )[0],
                [xx, zz],
            )
            for c in (True, False)
        )
        for q, v, a in random_states(3, count=3, seed=19):
            a6 = [*a, 0, 0, 0]
            assert np.allclose(f(q, v, a6, [0.6, 1.1]), g(q, v, a6, [0.6, 1.1]))


def test_balance_chosen_to_make_a_two_rate_link_symmetric(monkeypatch):
    # The Khalil Stanford arm's joints 1, 2 and (as joint 3) its joint 5,
    # whose axis is link 2's y: link 2 with XX2 alone, link 3 (a leaf)
    # with principal moments XX3, YY3, ZZ3; no forces.  w2 = u1 e + u2 z,
    # e = (-S2, -C2, 0) (a, b = u1 (-S2, -C2)); tau1 = e . n2, tau2 =
    # n2_z, tau3 = n3_z.  Counted by the recursion's wd (no leaf entries,
    # no column fallbacks: their own tests).
    import eomcompare.formulations.newton_euler as ne
    from eomcompare.systems.robots import KHALIL_STANFORD_ARM, mdh_system

    ms = mdh_system("rrr", (*KHALIL_STANFORD_ARM[:2], KHALIL_STANFORD_ARM[4]))
    xx2, xx3, yy3, zz3 = symbols = sm.symbols("XX2 XX3 YY3 ZZ3")
    none = (0, [0, 0, 0], sm.zeros(3, 3))
    inertia = [
        none,
        (0, [0, 0, 0], sm.diag(xx2, 0, 0)),
        (0, [0, 0, 0], sm.diag(xx3, yy3, zz3)),
    ]

    def run(program=True):
        return customised_inverse_dynamics(
            ms,
            ZDD[:3],
            inertia=inertia,
            program=program,
            leaf_axis_entries=False,
            column_fallbacks=False,
        )[0]

    def counts(prog):
        c = assignments_counts(prog, set(symbols) | set(ms.parameters))
        return c.mul, c.add

    # Chosen: link 3's balance lam = XX2, so that link 2 keeps diag(XX2,
    # 0, 0) - XX2 D = diag(0, 0, -XX2) (D = 1 - y y^T, link 3's axis being
    # link 2's y): symmetric about z2, its moment the closed form's -XX2
    # qdd2 on tau2 (1 mul).  Link 3 holds diag(XX3 + XX2, YY3 + XX2, ZZ3).
    # w2 across the axis: 2 mul; wd2_x = -qdd1 S2 + b u2, wd2_y = -qdd1
    # C2 - a u2: 4 mul, 2 add; w3 across: the turn of (a, -u2): 4 mul, 2
    # add; w3_z = b + u3: 1 add; wd3 across: the turn of (wd2_x, -qdd2)
    # and w3 x u3 z: 6 mul, 4 add; wd3_z = wd2_y + qdd3: 1 add; w_y w_z,
    # w_x w_z, w_x w_y: 3 mul; n3 = ((XX3 + XX2) wd_x + (ZZ3 - YY3 -
    # XX2) w_y w_z, (YY3 + XX2) wd_y + (XX3 + XX2 - ZZ3) w_x w_z, ZZ3
    # wd_z + (YY3 - XX3) w_x w_y): 6 mul, 3 add; n3 into frame 2: 4 mul,
    # 2 add; tau2 = -XX2 qdd2 + its component: 1 add; tau1 = -(S2 n_x +
    # C2 n_y): 2 mul, 1 add.  32 mul, 17 add.
    chosen = run()
    assert counts(chosen) == (32, 17)
    # Balanced for itself: link 3 takes lam = (ZZ3 - XX3 - YY3) / 2 and
    # link 2 keeps diag(P, 0, R) = diag(XX2 - lam, 0, -lam) (not balanced:
    # YY2 = 0 and no U column of it used), by the recursion.  n3 = (A3
    # U_zy, -B3 U_zx, as before) with U_zy = w_y w_z + wd_x, U_zx = w_x w_z
    # - wd_y: 4 mul, 3 add (2 mul, 0 add fewer); n2 = (P wd2_x + R b u2,
    # XX2 a u2, R qdd2 - P a b) (b u2, a u2 those of wd2; a b: 1 mul): 6
    # mul, 2 add (5 mul, 2 add more); n3 joins n2 in three sums (2 add
    # more).  35 mul, 21 add.
    monkeypatch.setattr(ne, "_axisymmetric_balance", lambda *args: None)
    kept = run()
    assert counts(kept) == (35, 21)
    f, g = (
        tau_function(ms, sm.Matrix(p.substituted()), list(symbols))
        for p in (chosen, kept)
    )
    values = [0.4, 0.9, 1.2, 1.6]
    for q, v, a in random_states(3, count=3, seed=20):
        a6 = [*a, 0, 0, 0]
        assert np.allclose(f(q, v, a6, values), g(q, v, a6, values))
