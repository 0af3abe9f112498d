"""Kolev's modified Lagrange equations ("modified_lagrange").

References the tests hold the formulation against:

* Kolev's own application, eq (3.10) of
  ``shared/seeds/kolev_modified_lagrange_bg.txt``, transcribed below as
  printed.  Reproducing it EXACTLY needs two printed signs corrected (as
  ``shared/catalogue.md`` section 9 records): the centroid condition (3.2)
  is printed ``m1 q1 + m2 q2 + m2 h cos(gamma) q3 = 0`` but (3.8) solves
  ``m1 q1 - m2 q2 - m2 h cos(gamma) q3 = 0``; and the first term of T in
  (3.5) is printed ``m1 (qG' - q1')^2`` where ``m1 (qG' + q1')^2`` is
  meant (so (3.9)'s ``Phi_1 = -m1 (qG'' - q1'')`` becomes
  ``-m1 (qG'' + q1'')``).  A test below shows that no other combination of
  those signs reproduces (3.10).
* The wheelbarrow's published (2-111), (2-112) (corrected in the
  catalogue): Maggi's form of the method on a nonholonomic system.
* A pendulum written in Cartesian coordinates with the holonomic constraint
  ``x^2 + y^2 = l^2`` (implicit and explicit dependent coordinate),
  against the analytic pendulum ``theta'' = -(g/l) sin(theta)``.

Agreement with Kane's method on every catalogue system is checked in
``tests/test_contract.py``.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pandas as pd
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_model, cached_system
from helpers import cartesian_pendulum, planar_particle

from eomcompare.compare.kolev_costs import as_default, kolev_cost_table
from eomcompare.formulations import UnsupportedSystemError, get_formulation
from eomcompare.formulations.minimal_coordinates import LagrangeMinimalCoordinates
from eomcompare.formulations.modified_lagrange import (
    generalized_forces_in_rates,
    kinetic_energy_in_rates,
    modified_lagrange_equations,
)
from eomcompare.systems import MechanicalSystem, get_system

t = me.dynamicsymbols._t


def _d(x, n=1):
    return x.diff(t, n)


def _is_zero(expr):
    return sm.simplify(sm.expand(expr)) == 0


# ----------------------------------------------------------------------
# Kolev's manipulator, eq (3.10)
# ----------------------------------------------------------------------
def _printed_3_10(qG, q2, q3, m1, m2, J, h, gamma, g, F_D, c22, c23, c33):
    """(3.10) as printed, each equation as LHS - RHS."""
    cg = sm.cos(gamma)
    return [
        (m1 + m2) * _d(qG, 2) - (F_D - (m1 + m2) * g),
        _d(q2, 2)
        + _d(q3, 2) * h * cg
        + c22 * (m1 + m2) / (m1 * m2) * q2
        + (c23 * m1 + c22 * m2 * h * cg) / (m1 * m2) * q3
        - F_D / (m1 + m2),
        _d(q2, 2) * (m1 + m2) * m2 * h * cg / m1
        + _d(q3, 2) * (J + (m2 * h * cg) ** 2 / m1)
        + q2 * (m1 + m2) / m1 * (c23 + c22 * m2 / m1 * h * cg)
        + q3
        * (
            2 * c23 * m2 / m1 * h * cg
            + c22 * (m2 / m1 * h * cg) ** 2
            + c33
            + m2 * g * h * sm.sin(gamma)
        )
        - F_D * m2 / m1 * h * cg,
    ]


def _printed_normalization(m1, m2):
    """The factor each printed equation of (3.10) was divided by: the
    second is printed divided by its q2'' coefficient m2 (m1 + m2) / m1."""
    return [1, m2 * (m1 + m2) / m1, 1]


def _paper_symbols():
    qG, q1, q2, q3 = me.dynamicsymbols("qG q1 q2 q3")
    m1, m2, J, h, g = sm.symbols("m1 m2 J_O2 h g", positive=True)
    gamma, F_D, c22, c23, c33 = sm.symbols("gamma F_D c22 c23 c33")
    return qG, q1, q2, q3, m1, m2, J, h, gamma, g, F_D, c22, c23, c33


def _paper_equations(body1_sign, constraint_sign):
    """The method applied to the paper's T (3.5), Q (3.6), f_1 (3.8),
    with the two sign choices the printed text is ambiguous about:
    ``body1_sign`` = +1 for ``m1 (qG' + q1')^2`` (catalogue), -1 as printed;
    ``constraint_sign`` = +1 for ``q1 = (m2/m1)(q2 + h cos(gamma) q3)`` as in
    (3.8) (catalogue), -1 for the solution of the printed (3.2)."""
    qG, q1, q2, q3, m1, m2, J, h, gamma, g, F_D, c22, c23, c33 = _paper_symbols()
    cg = sm.cos(gamma)
    T = (
        m1 * (_d(qG) + body1_sign * _d(q1)) ** 2
        + m2 * (_d(qG) - _d(q2)) ** 2
        + J * _d(q3) ** 2
    ) / 2 - m2 * (_d(qG) - _d(q2)) * _d(q3) * h * cg
    Q = {
        qG: F_D - (m1 + m2) * g,
        q1: F_D - m1 * g - c22 * (q1 + q2) - c23 * q3,
        q2: m2 * g - c22 * (q1 + q2) - c23 * q3,
        q3: m2 * g * h * (cg - q3 * sm.sin(gamma)) - c23 * (q1 + q2) - c33 * q3,
    }
    f1 = constraint_sign * (m2 / m1 * q2 + m2 / m1 * q3 * h * cg)
    eqs = modified_lagrange_equations(T, [qG, q1, q2, q3], Q, {q1: f1})
    printed = _printed_3_10(qG, q2, q3, m1, m2, J, h, gamma, g, F_D, c22, c23, c33)
    return eqs, printed, _printed_normalization(m1, m2)


def test_paper_T_and_Q_reproduce_3_10_exactly():
    eqs, printed, k = _paper_equations(+1, +1)
    assert len(eqs) == 3
    for ours, pub, kj in zip(eqs, printed, k):
        assert _is_zero(ours - kj * pub)


@pytest.mark.parametrize(
    "body1_sign,constraint_sign",
    [(-1, +1), (+1, -1), (-1, -1)],
    ids=["printed-T", "printed-3.2", "both-printed"],
)
def test_printed_signs_do_not_reproduce_3_10(body1_sign, constraint_sign):
    """Why the catalogue corrects (3.2) and (3.5): with the printed signs
    the method does not give (3.10), for any normalization of the second
    equation."""
    eqs, printed, _ = _paper_equations(body1_sign, constraint_sign)
    qG, q1, q2, q3 = _paper_symbols()[:4]
    mismatched = False
    for ours, pub in zip(eqs, printed):
        # The ratio of the q'' coefficients fixes the only freedom left.
        acc = [_d(q, 2) for q in (qG, q2, q3)]
        a = next(x for x in acc if sm.expand(pub).coeff(x) != 0)
        ratio = sm.expand(ours).coeff(a) / sm.expand(pub).coeff(a)
        if not _is_zero(ours - ratio * pub):
            mismatched = True
    assert mismatched


@pytest.fixture(scope="module")
def kolev_eom():
    return get_formulation("modified_lagrange", count_ops=False).derive(
        cached_system("kolev_manipulator")
    )


@pytest.mark.parametrize(
    "make,options",
    [
        (lambda: get_formulation("modified_lagrange"), {}),
        (LagrangeMinimalCoordinates, {}),
        (
            lambda: get_formulation("modified_lagrange", dependent="implicit"),
            {"dependent": "implicit"},
        ),
    ],
    ids=["modified", "minimal_coordinates", "implicit"],
)
def test_declared_manipulator_reproduces_3_10_exactly(make, options):
    ms = cached_system("kolev_manipulator")
    eom = make().derive(ms)
    by_name = {str(s): s for s in ms.parameters}
    m1, m2, h, gamma = (by_name[n] for n in ("m1", "m2", "h", "gamma"))
    qG, q1, q2, q3 = me.dynamicsymbols("qG q1 q2 q3")
    printed = _printed_3_10(
        qG,
        q2,
        q3,
        *(
            by_name[n]
            for n in ("m1", "m2", "J_O2", "h", "gamma", "g", "F_D", "c22", "c23", "c33")
        ),
    )
    k = _printed_normalization(m1, m2)
    assert eom.unknowns == (_d(qG, 2), _d(q2, 2), _d(q3, 2))
    ours = eom.mass_matrix * sm.Matrix(eom.unknowns) - eom.forcing
    if options.get("dependent") == "implicit":
        # q1 stays a state; on the constraint manifold it is (3.8).
        assert q1 in eom.states
        ours = ours.xreplace({q1: m2 / m1 * (q2 + h * sm.cos(gamma) * q3)})
    for oj, pj, kj in zip(ours, printed, k):
        assert _is_zero(oj - kj * pj)


def test_dependent_coefficients_are_those_of_3_9(kolev_eom):
    ms = kolev_eom.system
    by_name = {str(s): s for s in ms.parameters}
    m1, m2, h, gamma = (by_name[n] for n in ("m1", "m2", "h", "gamma"))
    q1 = me.dynamicsymbols("q1")
    G = kolev_eom.extras["rate_coefficients"]
    row = G.row(list(ms.coordinates).index(q1))
    # (3.9): df1/dqG = 0, df1/dq2 = m2/m1, df1/dq3 = (m2/m1) h cos(gamma).
    expected = [0, m2 / m1, m2 / m1 * h * sm.cos(gamma)]
    assert all(_is_zero(a - b) for a, b in zip(row, expected))


def test_dependent_coordinate_never_enters_T_of_the_modified_form(kolev_eom):
    """The method's point: T is differentiated in all coordinates, f_1 is
    not substituted into it; Lagrange's equations in minimal coordinates
    (the benchmark's) substitute it (both give (3.10), above)."""
    q1 = me.dynamicsymbols("q1")
    assert kolev_eom.extras["kinetic_energy"].has(_d(q1))
    assert q1 not in kolev_eom.states
    sub = LagrangeMinimalCoordinates().derive(kolev_eom.system)
    assert not sub.extras["kinetic_energy"].has(q1)


@pytest.mark.parametrize(
    "name,options",
    [("kolev_manipulator", ()), ("crank_slider", (("coordinates", "redundant"),))],
    ids=["kolev_manipulator", "crank_slider"],
)
def test_class_gives_the_transcription_of_2_20_2_21(name, options):
    """Where the paper's case applies (explicit f_r, no velocity
    constraints), the class's M q'' - f is the transcription of (2.20),
    (2.21) applied to the declaration's own T, Q and f_r: equation by
    equation, with neither rescaling nor reordering."""
    ms = cached_system(name, options)
    eom = get_formulation("modified_lagrange", count_ops=False).derive(ms)
    assert eom.extras["dependent_coordinates"] == "explicit"
    coords = list(ms.coordinates)
    T = kinetic_energy_in_rates(ms)
    Q = dict(zip(coords, generalized_forces_in_rates(ms, coords)))
    f = {q: ms.dependent_solutions[q] for q in ms.q_dep}
    assert f
    transcribed = modified_lagrange_equations(T, coords, Q, f)
    assert eom.unknowns == tuple(_d(q, 2) for q in coords if q not in f)
    ours = eom.mass_matrix * sm.Matrix(eom.unknowns) - eom.forcing
    assert len(ours) == len(transcribed)
    for oj, tj in zip(ours, transcribed):
        assert _is_zero(oj - tj)


# ----------------------------------------------------------------------
# Nonholonomic: Maggi's form on the wheelbarrow, (2-111), (2-112)
# ----------------------------------------------------------------------
def test_wheelbarrow_at_zero_heading():
    """The declared initial state (heading 0): the dependent rates must not
    divide by sin(theta)."""
    ms = cached_system("wheelbarrow")
    eom = get_formulation("modified_lagrange", count_ops=False).derive(ms)
    t0, q, qd = ms.states.consistent_initial_state()
    assert q[1] == 0.0
    qdd = eom.numeric().coordinate_accelerations(t0, q, qd)
    s = {str(x): v for x, v in ms.parameters.items()}
    # (2-111), (2-112) at omega = 0; X_c'' = v' and Y_c'' = v omega = 0.
    vd = 2 * s["R"] * np.cos(s["beta"]) / (s["m_w"] + s["m_wb"] + s["J"] / s["r"] ** 2)
    wd = (
        -2
        * s["p"]
        * s["R"]
        * np.sin(s["beta"])
        / (s["I"] + s["J"] / 2 + s["m_wb"] * s["l"] ** 2)
    )
    np.testing.assert_allclose(qdd, [vd / s["r"], wd, vd, 0.0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("rates", ["eliminate", "keep"])
def test_wheelbarrow_gives_published_2_111_2_112(rates):
    ms = cached_system("wheelbarrow")
    eom = get_formulation(
        "modified_lagrange", dependent_rates=rates, count_ops=False
    ).derive(ms)
    phi, theta, Xc, Yc = me.dynamicsymbols("phi theta X_c Y_c")
    assert eom.unknowns[:2] == (_d(phi, 2), _d(theta, 2))
    assert set(eom.extras["dependent_rates"]) == {_d(Xc), _d(Yc)}
    s = {str(x): x for x in ms.parameters}
    m_w, m_wb, l, I, J, r, R, beta, p = (
        s[n] for n in ("m_w", "m_wb", "l", "I", "J", "r", "R", "beta", "p")
    )
    # Published, with v = r phi', omega = theta' (the declaration's speeds).
    v, w = r * _d(phi), _d(theta)
    vd = (2 * R * sm.cos(beta) - m_wb * l * w**2) / (m_w + m_wb + J / r**2)
    wd = (-2 * p * R * sm.sin(beta) + l * m_wb * v * w) / (I + J / 2 + m_wb * l**2)
    z = [vd / r, wd]
    if rates == "keep":
        # X_c'', Y_c'' are unknowns too, closed by the differentiated
        # rolling constraints: their values follow from the kinematics.
        z += [
            vd * sm.cos(theta) - v * sm.sin(theta) * w,
            vd * sm.sin(theta) + v * sm.cos(theta) * w,
        ]
    res = (eom.mass_matrix * sm.Matrix(z) - eom.forcing).xreplace(
        {_d(Xc): v * sm.cos(theta), _d(Yc): v * sm.sin(theta)}
    )
    assert all(_is_zero(e) for e in res)


# ----------------------------------------------------------------------
# Implicit and explicit dependent coordinates: a Cartesian pendulum
# ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "explicit,rates",
    [(False, "eliminate"), (False, "keep"), (True, "eliminate")],
    ids=["implicit", "implicit-rates-kept", "explicit"],
)
def test_cartesian_pendulum_matches_the_analytic_pendulum(explicit, rates):
    ms = cartesian_pendulum(length=1.0, x0=0.6, explicit=explicit, random_spread=0.5)
    eom = get_formulation(
        "modified_lagrange", dependent_rates=rates, count_ops=False
    ).derive(ms)
    x, y = me.dynamicsymbols("x y")
    # One equation of motion (plus the differentiated constraint when the
    # dependent rate is kept), never a multiplier.
    assert eom.n_equations == (2 if rates == "keep" else 1)
    assert eom.n_multipliers == 0
    assert eom.extras["dependent_coordinates"] == (
        "explicit" if explicit else "implicit"
    )
    # Implicit: y stays in the state; explicit: it is eliminated.
    assert (y in eom.states) is (not explicit)
    assert (_d(y) in eom.states) is (rates == "keep")
    model = eom.numeric()
    g, l = 9.81, 1.0
    for seed in range(10):
        t0, (xv, yv), (xd, yd) = ms.states.random_state(seed)
        th = np.arctan2(xv, -yv)  # x = l sin th, y = -l cos th
        thd = xd / (l * np.cos(th))
        thdd = -g / l * np.sin(th)
        expected = [
            l * (np.cos(th) * thdd - np.sin(th) * thd**2),
            l * (np.sin(th) * thdd + np.cos(th) * thd**2),
        ]
        np.testing.assert_allclose(
            model.coordinate_accelerations(t0, [xv, yv], [xd, yd]),
            expected,
            rtol=1e-10,
            atol=1e-10,
        )


def _bead_on_rotating_rod(explicit: bool) -> MechanicalSystem:
    """Bead (x, y) on a rod turning at the constant rate w in a horizontal
    plane: the rheonomic constraint ``-x sin(w t) + y cos(w t) = 0``."""
    w = sm.Symbol("w", positive=True)
    system, (x, y, ux, uy, *_, bead) = planar_particle(
        lambda x, y: -x * sm.sin(w * t) + y * sm.cos(w * t), body="bead"
    )
    m = bead.mass
    return MechanicalSystem(
        name="bead_on_rotating_rod",
        system=system,
        parameters={m: 0.7, w: 0.5},
        initial_state={x: 1.0, ux: 0.0},
        dependent_solutions={y: x * sm.tan(w * t)} if explicit else None,
        random_spread=0.5,
        speed_scale=1.0,
    )


@pytest.mark.parametrize("explicit", [False, True], ids=["implicit", "explicit"])
def test_rheonomic_constraint_matches_the_rotating_rod(explicit):
    """Along the rod r'' = w^2 r, so with x = r cos(w t), y = r sin(w t):
    x'' = -2 w r' sin(w t), y'' = 2 w r' cos(w t)."""
    ms = _bead_on_rotating_rod(explicit)
    assert ms.is_rheonomic
    model = get_formulation("modified_lagrange", count_ops=False).derive(ms).numeric()
    w = 0.5
    for seed in range(10):
        t0, q, qd = ms.states.random_state(seed)
        c, s = np.cos(w * t0), np.sin(w * t0)
        rd = qd[0] * c + qd[1] * s
        np.testing.assert_allclose(
            model.coordinate_accelerations(t0, q, qd),
            [-2 * w * rd * s, 2 * w * rd * c],
            rtol=1e-10,
            atol=1e-10,
        )


def test_implicit_coefficients_follow_the_implicit_function_theorem():
    ms = cartesian_pendulum(length=1.0, x0=0.6, random_spread=0.5)
    eom = get_formulation("modified_lagrange", count_ops=False).derive(ms)
    x, y = me.dynamicsymbols("x y")
    G = eom.extras["rate_coefficients"]
    # -(dPhi/dy)^-1 dPhi/dx with Phi = x^2 + y^2 - l^2.
    assert _is_zero(G[1, 0] - (-(2 * x) / (2 * y)))
    assert G[0, 0] == 1


# Each path of the derivation's steps: the explicit form (as printed, and
# s = 0), the implicit form, Maggi's form with the dependent rates
# eliminated or kept; and the benchmark's minimal coordinates.
_PATHS = [
    ("double_pendulum", {}),
    ("four_bar", {}),
    ("four_bar", {"dependent": "implicit"}),
    ("kolev_manipulator", {}),
    ("kolev_manipulator", {"dependent": "implicit"}),
    ("rolling_disc", {}),
    ("rolling_disc", {"dependent_rates": "keep"}),
    ("wheelbarrow", {}),
    ("wheelbarrow", {"dependent_rates": "keep"}),
    ("crank_slider", "minimal"),
    ("four_bar", "minimal"),
    ("kolev_manipulator", "minimal"),
]


@pytest.mark.parametrize(
    "name,options",
    _PATHS,
    ids=[
        f"{n}-{o if isinstance(o, str) else ','.join(o.values()) or 'default'}"
        for n, o in _PATHS
    ],
)
def test_every_path_agrees_with_sympy_kane(name, options):
    """The coordinate accelerations of each path through the steps of
    ``ModifiedLagrange._derive`` (and of Lagrange's equations in minimal
    coordinates) equal those of sympy's KanesMethod at random consistent
    states: an independent derivation of the same motion."""
    ms = cached_system(name)
    if options == "minimal":
        eom = LagrangeMinimalCoordinates(count_ops=False).derive(ms)
    else:
        eom = get_formulation("modified_lagrange", count_ops=False, **options).derive(
            ms
        )
        assert eom.extras["dependent_rates_eliminated"] is (
            options.get("dependent_rates") != "keep"
        )
    model = eom.numeric()
    ref = cached_model("sympy_kane", name)
    for seed in range(4):
        t0, q, qd = ms.states.random_state(seed)
        ours = model.coordinate_accelerations(t0, q, qd)
        theirs = ref.coordinate_accelerations(t0, q, qd)
        assert np.max(np.abs(ours - theirs)) <= 1e-9 * max(np.max(np.abs(theirs)), 1)


def test_minimal_coordinates_refuse_a_system_without_explicit_solutions():
    ms = cartesian_pendulum(length=1.0, x0=0.6, random_spread=0.5)
    with pytest.raises(UnsupportedSystemError, match="explicit solution"):
        LagrangeMinimalCoordinates().derive(ms)
    with pytest.raises(UnsupportedSystemError, match="explicit solutions"):
        get_formulation(
            "modified_lagrange", dependent="explicit", count_ops=False
        ).derive(ms)


def test_options_are_validated():
    # Lagrange's equations in minimal coordinates are the benchmark's, not
    # an option of Kolev's method.
    with pytest.raises(
        ValueError, match="no option 'variant'; its options: dependent, dependent_rates"
    ):
        get_formulation("modified_lagrange:variant=substituted")
    with pytest.raises(TypeError, match="dependent"):
        get_formulation("modified_lagrange", dependent=1)
    with pytest.raises(ValueError, match=r"\['auto', 'explicit', 'implicit'\]"):
        get_formulation("modified_lagrange", dependent="numeric")
    with pytest.raises(ValueError, match=r"\['auto', 'eliminate', 'keep'\]"):
        get_formulation("modified_lagrange", dependent_rates="all")


# ----------------------------------------------------------------------
# The comparison data of the paper's motivation
# ----------------------------------------------------------------------
def _check_cost_rows(df, name):
    ms = cached_system(name)
    rows = df[df["system"] == name].set_index("variant")
    assert set(rows.index) == {
        "modified",
        "modified_implicit",
        "substituted",
        "multipliers",
    }
    for variant in ("modified", "modified_implicit", "substituted"):
        assert rows.loc[variant, "error"] == ""
        assert rows.loc[variant, "n_equations"] == ms.degrees_of_freedom
        assert rows.loc[variant, "n_multipliers"] == 0
        assert rows.loc[variant, "seconds"] > 0
        assert rows.loc[variant, "ops_cse"] > 0
    assert rows.loc["multipliers", "n_multipliers"] == len(ms.holonomic_constraints)
    assert rows.loc["substituted", "formulation"] == "lagrange_minimal_coordinates"
    assert set(rows.loc[["modified", "modified_implicit"], "formulation"]) == {
        "modified_lagrange"
    }


def _documented_columns(fn):
    """The columns a function's docstring lists (``Columns ``a, b, ...``)."""
    doc = " ".join(inspect.getdoc(fn).split())
    listed = re.search(r"Columns ``([^`]*)``", doc)
    assert listed, f"{fn.__name__} documents no columns"
    return [c.strip() for c in listed.group(1).split(",")]


def test_cost_table_on_the_manipulator():
    df = kolev_cost_table(["kolev_manipulator"])
    assert list(df.columns) == _documented_columns(kolev_cost_table)
    assert "ops_cse" in df.columns and "error" in df.columns
    _check_cost_rows(df, "kolev_manipulator")


def test_cost_table_through_a_derivation_cache(tmp_path, monkeypatch):
    """Through a cache the table holds the same numbers, and a second table
    derives nothing: every row is read back."""
    from eomcompare.formulations.base import Formulation
    from eomcompare.formulations.cache import DerivationCache

    fresh = kolev_cost_table(["kolev_manipulator"])
    cache = DerivationCache(tmp_path)
    first = kolev_cost_table(["kolev_manipulator"], cache=cache)
    cols = ["variant", "ops_raw", "ops_cse", "n_equations", "n_unknowns", "error"]
    pd.testing.assert_frame_equal(first[cols], fresh[cols])
    assert list(tmp_path.rglob("*.pkl")), "nothing was stored"

    def no_derivation(self, system):
        raise AssertionError(f"{self.name} derived again")

    monkeypatch.setattr(Formulation, "derive", no_derivation)
    second = kolev_cost_table(["kolev_manipulator"], cache=cache)
    pd.testing.assert_frame_equal(second[cols], fresh[cols])
    # The seconds are those the stored derivations took.
    ok = first["error"] == ""
    assert (second.loc[ok, "seconds"] == first.loc[ok, "seconds"]).all()


@pytest.mark.parametrize("name", ["four_bar", "crank_slider", "kolev_manipulator"])
def test_as_default_derives_the_same_equations(name):
    """Where ``dependent`` chooses nothing, ``as_default`` gives the default
    options, which derive the same equations node for node (and so the
    same counts); where it chooses, the formulation itself."""
    ms = get_system(name)
    explicit = get_formulation("modified_lagrange", dependent="explicit")
    implicit = get_formulation("modified_lagrange", dependent="implicit")
    # Every dependent coordinate of these has a declared solution.
    assert as_default(implicit, ms) is implicit
    default = as_default(explicit, ms)
    assert default.options == get_formulation("modified_lagrange").options
    a, b = explicit.derive(ms), default.derive(ms)
    assert (a.mass_matrix, a.forcing, a.states, a.unknowns) == (
        b.mass_matrix,
        b.forcing,
        b.states,
        b.unknowns,
    )
    counts = {k: v for k, v in a.op_counts.items() if not k.endswith("_s")}
    assert counts == {k: v for k, v in b.op_counts.items() if not k.endswith("_s")}
    # Without dependent coordinates neither choice matters.
    free = get_system("double_pendulum")
    assert as_default(explicit, free).options["dependent"] == "auto"
    assert as_default(implicit, free).options["dependent"] == "auto"


def test_cost_table_reads_the_default_derivation(tmp_path, monkeypatch):
    """Through a cache holding the default derivation (a run's), the
    'modified' row is read back, not derived with dependent='explicit'."""
    from eomcompare.formulations.base import Formulation
    from eomcompare.formulations.cache import DerivationCache

    cache = DerivationCache(tmp_path)
    ms = get_system("kolev_manipulator")
    stored = cache.derive(ms, get_formulation("modified_lagrange"))[0]
    derive = Formulation.derive

    def no_modified(self, system):
        if self.name == "modified_lagrange" and self.dependent != "implicit":
            raise AssertionError(f"{self.options} derived again")
        return derive(self, system)

    monkeypatch.setattr(Formulation, "derive", no_modified)
    df = kolev_cost_table(["kolev_manipulator"], cache=cache)
    row = df[df["variant"] == "modified"].iloc[0]
    assert row["error"] == ""
    assert row["ops_cse"] == stored.op_counts["cse"]
    assert row["seconds"] == stored.timings["total"]


def test_cost_table_rejects_a_bare_string():
    with pytest.raises(TypeError, match="sequence"):
        kolev_cost_table("four_bar")


@pytest.mark.slow
def test_cost_table_on_the_mechanisms():
    df = kolev_cost_table()
    for name in ("four_bar", "crank_slider", "kolev_manipulator"):
        _check_cost_rows(df, name)


@pytest.mark.parametrize(
    "name", ["double_pendulum", "n_link_pendulum", "spatial_chain"]
)
def test_nothing_to_eliminate_gives_the_split_transcription(name):
    """With s = 0 the class forms M and the rest of (2.20) apart, without
    the q'' terms of the whole time derivative, and dT/dq', dT/dq in one
    backward pass: the same functions as the transcription split
    afterwards (compared by value at random states and parameters: the
    expressions are not the same term for term)."""
    from eomcompare.symbolic.calculus import (
        linear_split,
        substitute,
        symmetric_from_lower,
    )

    ms = cached_system(name, ())
    assert not ms.q_dep and not ms.is_rheonomic
    eom = get_formulation("modified_lagrange", count_ops=False).derive(ms)
    coords = list(ms.coordinates)
    T = kinetic_energy_in_rates(ms)
    Q = dict(zip(coords, generalized_forces_in_rates(ms, coords)))
    transcribed = modified_lagrange_equations(T, coords, Q, {})
    assert eom.unknowns == tuple(_d(q, 2) for q in coords)
    M, rest = linear_split(transcribed, eom.unknowns)
    # The class writes the Hessian by its lower triangle.
    assert eom.mass_matrix == symmetric_from_lower(eom.mass_matrix)
    rates = [_d(q) for q in coords]
    free = sorted((M.free_symbols | sm.Matrix(rest).free_symbols) - {t}, key=str)
    rng = np.random.default_rng(1)
    n = len(coords)
    for _ in range(3):
        at = dict(zip(rates, map(sm.Float, rng.uniform(-2, 2, n))))
        at |= dict(zip(coords, map(sm.Float, rng.uniform(-2, 2, n))))
        at |= dict(zip(free, map(sm.Float, rng.uniform(0.5, 2.0, len(free)))))

        def value(X):
            # Each shared subtree evaluated once (xreplace walks every path).
            return np.array(substitute(list(X), at), dtype=float)

        Mb = value(M).reshape(n, n)
        np.testing.assert_allclose(Mb, Mb.T, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(value(eom.mass_matrix).reshape(n, n), Mb, rtol=1e-12)
        np.testing.assert_allclose(
            value(eom.forcing), -value(sm.Matrix(rest)), rtol=1e-12, atol=1e-12
        )
    assert eom.mass_matrix != sm.zeros(*M.shape) and eom.forcing != sm.zeros(
        len(rest), 1
    )
