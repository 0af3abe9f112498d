"""Properties every registered formulation must have on random systems.

Systems come from :mod:`eomcompare.testing.strategies`; the formulations are read from
:data:`eomcompare.formulations.FORMULATIONS`, so a new backend takes part without
editing this file.  References:

* q'' of every formulation equals that of ``"kane"`` (1e-8 relative);
* q'' of random open chains and trees equals Pinocchio's articulated-body
  algorithm (1e-9 relative), an implementation independent of sympy;
* a reduced mass matrix (no multipliers, one unknown per degree of freedom)
  is symmetric positive definite;
* ``d(T + V)/dt`` equals the power of the non-conservative loads, with T
  formed here from the bodies, V from the declaration and the power from
  the damper laws, and ``d/dt`` taken with each formulation's q'';
* constraint forces from ``"lagrange"``'s multipliers (and any other
  multiplier formulation that recovers them) equal those from ``"kane"``'s
  auxiliary speeds, and both equal Newton's second law of the subtree the
  joint carries (sum of m (a_G - g)).  Multipliers give a joint's
  reaction where the declaration models it as constraint coordinates held
  at zero (``joint_reactions=True``), so that construction is what is
  drawn.

Derivations are the costly part: they are cached per symbolic structure
(``options["structure"]``) and evaluated with each example's parameter
values.  The number of examples scales with the hypothesis profile
(``ci``, ``dev``, ``long``; see ``tests/conftest.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from conftest import cached_eom
from hypothesis import example, given, settings
from hypothesis import strategies as st

from eomcompare.formulations import (
    FORMULATIONS,
    UnsupportedSystemError,
    formulation_names,
    get_formulation,
)
from eomcompare.references.oracles import pinocchio_accelerations
from eomcompare.testing import strategies as S

#: The default comparison's formulations; the tree algorithms
#: (kane_composite, kane_articulated) are checked against kane on every
#: catalogue system in tests/test_contract.py, and against Pinocchio and
#: kane in tests/systems/test_robots_articulated_body.py and
#: tests/formulations/test_composite.py.
COMPARED = formulation_names(default_only=True)

t = me.dynamicsymbols._t

#: Examples per property: a share of the profile's ``max_examples``.
_PROFILE_EXAMPLES = settings.default.max_examples
#: Bodies per random tree: 2 in the bounded CI profile, 3 otherwise.
MAX_BODIES = 2 if _PROFILE_EXAMPLES <= 15 else 3
MAX_BARS = 4 if _PROFILE_EXAMPLES <= 15 else 5
STATES_PER_EXAMPLE = 2


def _examples(share):
    return max(2, int(round(_PROFILE_EXAMPLES * share)))


_seeds = st.integers(0, 2**31 - 1)
_EOM: dict = {}


def derived(ms, formulation):
    """Equations of ``ms``'s structure by ``formulation`` (cached), or the
    formulation's refusal."""
    key = (ms.name, ms.options["structure"], formulation)
    if key not in _EOM:
        try:
            if ms.options["family"] == "rolling_disc":
                # The catalogue's declaration: share the session's cache.
                _EOM[key] = cached_eom(formulation, "rolling_disc")
            else:
                _EOM[key] = get_formulation(formulation, count_ops=False).derive(ms)
        except UnsupportedSystemError as exc:
            _EOM[key] = exc
        except Exception as exc:
            # Failing again on every draw of the structure keeps hypothesis
            # from calling the failure flaky.  (The derivation is made from
            # the structure's first draw, whose values a formulation may
            # sample: a failure names that draw's structure.)
            _EOM[key] = _Failed(exc)
    if isinstance(_EOM[key], _Failed):
        raise _EOM[key].error
    return _EOM[key]


class _Failed:
    def __init__(self, error):
        self.error = error


def model(ms, formulation):
    """The numeric model of ``formulation`` with ``ms``'s parameter values,
    or None where a peer declines the system by its declared scope (the
    ability flags :meth:`~eomcompare.formulations.Formulation.check_supported` reads,
    e.g. sympy_lagrange's kinetic energy in coordinate rates); a failure of
    sympy itself, or any other refusal, fails the test."""
    eom = derived(ms, formulation)
    if isinstance(eom, UnsupportedSystemError):
        assert str(eom), "a refusal must carry a reason"
        scope = _declared_scope_refusal(ms, formulation)
        if not (FORMULATIONS[formulation].is_peer and scope is not None):
            pytest.fail(f"{formulation} refused {ms.name}: {eom}")
        assert str(eom) == scope
        return None
    return eom.numeric(dict(ms.parameters))


def _declared_scope_refusal(ms, formulation):
    """The reason ``check_supported`` gives for ``ms`` (the formulation's
    declared scope), or None when the system is within it."""
    try:
        get_formulation(formulation).check_supported(ms)
    except UnsupportedSystemError as exc:
        return str(exc)
    return None


def states(ms, seeds):
    return [ms.states.random_state(seed=s) for s in seeds]


def _rel(a, b):
    return float(
        np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0)
        / max(1.0, float(np.max(np.abs(b), initial=0.0)))
    )


# ----------------------------------------------------------------------
# Same q'' as Kane's method
# ----------------------------------------------------------------------
def check_same_accelerations(ms, seeds):
    ref = model(ms, "kane")
    for state in states(ms, seeds):
        a_ref = ref.coordinate_accelerations(*state)
        for name in COMPARED:
            m = model(ms, name)
            if m is None:
                continue
            a = m.coordinate_accelerations(*state)
            assert _rel(a, a_ref) < 1e-8, (
                f"{name} differs from kane on {ms.name} "
                f"{ms.options['structure']} at {state}: {a} vs {a_ref}"
            )


# ----------------------------------------------------------------------
# Pinocchio as the external oracle
# ----------------------------------------------------------------------
def check_against_pinocchio(ms, seeds):
    for t0, q, qd in states(ms, seeds):
        oracle = pinocchio_accelerations(ms, q, qd)
        for name in COMPARED:
            m = model(ms, name)
            if m is None:
                continue
            a = m.coordinate_accelerations(t0, q, qd)
            assert _rel(a, oracle) < 1e-9, (
                f"{name} differs from Pinocchio on {ms.options['structure']}"
                f": {a} vs {oracle}"
            )


def test_pinocchio_mapping_on_a_compound_pendulum():
    """One revolute body: I_O q'' = (r_G x m g)_z + spring + damper, with
    I_O = I_zz + m |c|^2 (parallel axes), written out here."""
    structure = (2, ((-1, "R", 2),), True, True, True, ())
    m, cx, cy, Izz, gx, gy = 1.7, 0.4, -0.2, 0.3, 2.0, -9.0
    k, s, b = 3.0, 0.1, 0.5
    values = {
        "m1": m,
        "rx1": 0.3,
        "ry1": 0.2,
        "cx1": cx,
        "cy1": cy,
        "I1_xx": 0.2,
        "I1_yy": 0.25,
        "I1_zz": Izz,
        "I1_xy": 0.0,
        "I1_yz": 0.0,
        "I1_zx": 0.0,
        "k1": k,
        "s1": s,
        "b1": b,
        "gx": gx,
        "gy": gy,
    }
    ms = S.build_tree(structure, values)
    q, qd = 0.7, -1.3
    c, sn = np.cos(q), np.sin(q)
    rG = np.array([c * cx - sn * cy, sn * cx + c * cy])
    torque = rG[0] * m * gy - rG[1] * m * gx - k * (q - s) - b * qd
    expected = torque / (Izz + m * (cx**2 + cy**2))
    assert np.isclose(pinocchio_accelerations(ms, [q], [qd])[0], expected, rtol=1e-12)
    a = model(ms, "kane").coordinate_accelerations(0.0, [q], [qd])
    assert np.isclose(a[0], expected, rtol=1e-12)


# ----------------------------------------------------------------------
# Reduced mass matrices are symmetric positive definite
# ----------------------------------------------------------------------
def check_reduced_mass_matrices(ms, seeds):
    t0, q, qd = ms.states.random_state(seed=seeds[0])
    checked = 0
    for name in COMPARED:
        eom = derived(ms, name)
        if isinstance(eom, UnsupportedSystemError):
            continue
        if eom.multipliers or eom.n_unknowns != ms.degrees_of_freedom:
            continue
        m = eom.numeric(dict(ms.parameters))
        M, _ = m.mass_matrix_and_forcing(t0, m.state_from(q, qd, t0))
        scale = np.max(np.abs(M))
        assert np.allclose(M, M.T, rtol=0, atol=1e-10 * scale), (
            f"{name}: mass matrix of {ms.options['structure']} not symmetric"
        )
        assert np.min(np.linalg.eigvalsh((M + M.T) / 2)) > 1e-10 * scale, (
            f"{name}: mass matrix of {ms.options['structure']} not positive definite"
        )
        checked += 1
    if ms.is_holonomic and not ms.holonomic_constraints:
        # Kane's method in independent speeds always gives the reduced form.
        assert checked >= 1


# ----------------------------------------------------------------------
# Energy balance
# ----------------------------------------------------------------------
_ENERGY: dict = {}


def _energy_functions(ms):
    """Gradients of T (from the bodies) and V, and the non-conservative
    power, as numeric functions of (t, q, q', p)."""
    key = (ms.name, ms.options["structure"])
    if key in _ENERGY:
        return _ENERGY[key]
    N = ms.frame
    T = sm.S.Zero
    for body in ms.bodies:
        v = body.masscenter.vel(N)
        T += body.mass * v.dot(v) / 2
        if isinstance(body, me.RigidBody):
            w = body.frame.ang_vel_in(N)
            T += w.dot(body.central_inertia.dot(w)) / 2
    u_map = dict(ms.kinematics.u_of_qdot)
    q = list(ms.coordinates)
    n = len(q)
    Q, QD = sm.symbols(f"_q0:{n}"), sm.symbols(f"_qd0:{n}")
    rep = {qi.diff(t): s for qi, s in zip(q, QD)} | dict(zip(q, Q))
    T = sm.sympify(T).xreplace(u_map).xreplace(rep)
    V = sm.sympify(ms.potential_energy).xreplace(rep)
    P = sm.sympify(ms.options["nonconservative_power"]).xreplace(u_map).xreplace(rep)
    args = [list(Q), list(QD), list(ms.parameters)]
    grads = sm.Matrix(
        [[T.diff(s) for s in Q], [T.diff(s) for s in QD], [V.diff(s) for s in Q]]
    )
    f = sm.lambdify(args, [grads, P], cse=True)
    _ENERGY[key] = (f, tuple(ms.parameters))
    return _ENERGY[key]


def check_energy_balance(ms, seeds):
    f, order = _energy_functions(ms)
    p = np.array([ms.parameters[s] for s in order])
    for t0, q, qd in states(ms, seeds):
        grads, P = f(q, qd, p)
        grads = np.asarray(grads, dtype=float)
        for name in COMPARED:
            m = model(ms, name)
            if m is None:
                continue
            qdd = m.coordinate_accelerations(t0, q, qd)
            terms = np.array([grads[0] @ qd, grads[1] @ qdd, grads[2] @ qd, -float(P)])
            residual = terms.sum()
            assert abs(residual) < 1e-8 * max(1.0, np.abs(terms).sum()), (
                f"{name}: d(T+V)/dt - P_nc = {residual} on {ms.name} "
                f"{ms.options['structure']} (terms {terms})"
            )


# ----------------------------------------------------------------------
# The properties, family by family (one derivation per structure serves all)
# ----------------------------------------------------------------------
def _state_seeds(n=STATES_PER_EXAMPLE):
    return st.lists(_seeds, min_size=n, max_size=n)


@settings(max_examples=_examples(0.27))
@given(ms=S.kinematic_trees(dimension=2, max_bodies=MAX_BODIES), seeds=_state_seeds())
def test_planar_trees(ms, seeds):
    check_same_accelerations(ms, seeds)
    check_against_pinocchio(ms, seeds)
    check_reduced_mass_matrices(ms, seeds)
    check_energy_balance(ms, seeds)


@settings(max_examples=_examples(0.2))
@given(ms=S.kinematic_trees(dimension=3, max_bodies=MAX_BODIES), seeds=_state_seeds())
def test_spatial_trees(ms, seeds):
    check_same_accelerations(ms, seeds)
    check_against_pinocchio(ms, seeds)
    check_reduced_mass_matrices(ms, seeds)
    check_energy_balance(ms, seeds)


@settings(max_examples=_examples(0.2))
@given(ms=S.closed_loops(max_bars=MAX_BARS), seeds=_state_seeds())
def test_closed_loops(ms, seeds):
    check_same_accelerations(ms, seeds)
    check_reduced_mass_matrices(ms, seeds)
    check_energy_balance(ms, seeds)


def _knife_edge_at_rest_heading_zero():
    """Found by this test: the knife edge (mass centre on the blade, blade
    along the body axis) declared at heading 0.  Kinematic equations solved
    symbolically for the speeds had a 1/sin(heading) pole there, and
    modified_lagrange, which samples the declared initial state, met 0/0."""
    values = dict(
        m=0.5,
        a=0.0,
        b=0.0,
        beta=0.0,
        gx=0.0,
        gy=0.0,
        k=0.0,
        s0=0.0,
        c=0.0,
        I1_xx=0.01,
        I1_yy=0.01,
        I1_zz=0.01,
        I1_xy=0.0,
        I1_yz=0.0,
        I1_zx=0.0,
    )
    return S.build_sleigh(values, {"theta": 0.0})


@settings(max_examples=_examples(0.2))
@example(ms=_knife_edge_at_rest_heading_zero(), seeds=[0, 0])
@given(ms=S.nonholonomic_systems(), seeds=_state_seeds())
def test_nonholonomic_systems(ms, seeds):
    check_same_accelerations(ms, seeds)
    check_reduced_mass_matrices(ms, seeds)
    check_energy_balance(ms, seeds)


@settings(max_examples=_examples(0.2))
@given(ms=S.rheonomic_systems(max_bodies=MAX_BODIES), seeds=_state_seeds())
def test_rheonomic_systems(ms, seeds):
    # The drive does work at a rate nobody declared: no energy balance.
    check_same_accelerations(ms, seeds)
    check_reduced_mass_matrices(ms, seeds)


# ----------------------------------------------------------------------
# Constraint forces: multipliers against auxiliary speeds
# ----------------------------------------------------------------------
def _newton_reaction_functions(ms, index):
    """The force on the subtree of body ``index`` through its (revolute)
    joint, from Newton's second law of that subtree: the sum of m (a_G - g)
    over its bodies (joint springs and dampers inside the subtree are
    action-reaction pairs, the joint's own are pure torques), along the
    parent's x and y, as a function of (q, u, u', p)."""
    joints = ms.options["structure"][2]
    N = ms.frame

    def subtree(i):
        return [i] + [
            j for c, jt in enumerate(joints) if jt[0] == i for j in subtree(c)
        ]

    parent = joints[index][0]
    P = N if parent < 0 else ms.bodies[parent].frame
    g = sm.Symbol("gx", real=True) * N.x + sm.Symbol("gy", real=True) * N.y
    total = 0
    for i in subtree(index):
        body = ms.bodies[i]
        total += body.mass * (body.masscenter.acc(N) - g)
    u = list(ms.speeds)
    q = list(ms.coordinates)
    kin = dict(ms.kinematics.qdot)
    exprs = [sm.sympify(total.dot(e)).xreplace(kin) for e in (P.x, P.y)]
    Q, U, UD = (sm.symbols(f"_{c}0:{len(q)}") for c in "qvw")
    rep = {ui.diff(t): s for ui, s in zip(u, UD)} | dict(zip(u, U)) | dict(zip(q, Q))
    exprs = [e.xreplace(rep) for e in exprs]
    return sm.lambdify(
        [list(Q), list(U), list(UD), list(ms.parameters)], exprs, cse=True
    )


def _middle_joint_reaction():
    """A double pendulum with springs and dampers whose second joint's
    reaction is declared: the parent frame turns, the subtree is one body."""
    values = {"gx": 1.0, "gy": -9.0}
    for k in (1, 2):
        values |= {
            f"m{k}": 1.0 + k / 3,
            f"rx{k}": 0.8 * (k - 1),
            f"ry{k}": 0.1 * (k - 1),
            f"cx{k}": 0.4,
            f"cy{k}": -0.1,
            f"I{k}_xx": 0.05,
            f"I{k}_yy": 0.1,
            f"I{k}_zz": 0.12,
            f"I{k}_xy": 0.01,
            f"I{k}_yz": 0.0,
            f"I{k}_zx": 0.0,
            f"k{k}": 2.0,
            f"s{k}": 0.2,
            f"b{k}": 0.3,
        }
    structure = (2, ((-1, "R", 2), (0, "R", 2)), True, True, True, (1,))
    return S.build_tree(structure, values, initial={"q1": 0.4, "q2": -0.3})


def _slider_on_pendulum_reaction():
    """Found by this test: a pendulum carrying a spring-loaded slider, the
    root joint's reaction declared.  The slider spring pushes back on the
    pendulum at the slider's joint point; a declaration that does not list
    that point among the ConstraintForce's load points loses the spring
    force from Kane's auxiliary-speed equation (the multipliers keep it)."""
    values = {"gx": 0.5, "gy": -9.0}
    for k in (1, 2):
        values |= {
            f"m{k}": 1.5,
            f"rx{k}": 0.6 * (k - 1),
            f"ry{k}": 0.0,
            f"cx{k}": 0.3,
            f"cy{k}": 0.1,
            f"I{k}_xx": 0.05,
            f"I{k}_yy": 0.1,
            f"I{k}_zz": 0.12,
            f"I{k}_xy": 0.0,
            f"I{k}_yz": 0.0,
            f"I{k}_zx": 0.0,
            f"k{k}": 5.0,
            f"s{k}": 0.3,
            f"b{k}": 0.4,
        }
    structure = (2, ((-1, "R", 2), (0, "P", 0)), True, True, True, (0,))
    return S.build_tree(structure, values, initial={"q1": 0.4, "q2": -0.2})


@settings(max_examples=_examples(0.27))
@example(ms=_slider_on_pendulum_reaction(), seeds=[0, 0])
@example(ms=_middle_joint_reaction(), seeds=[1, 2])
@given(
    ms=S.kinematic_trees(
        dimension=2,
        max_bodies=MAX_BODIES,
        joint_types=["revolute", "prismatic"],
        joint_reactions=True,
    ),
    seeds=st.lists(_seeds, min_size=STATES_PER_EXAMPLE, max_size=STATES_PER_EXAMPLE),
)
def test_reactions_from_multipliers_equal_auxiliary_speeds(ms, seeds):
    if not ms.constraint_forces:
        return  # no revolute joint drawn: nothing to recover
    kane = model(ms, "kane")
    lag = derived(ms, "lagrange")
    assert not lag.extras.get("unrecovered_constraint_forces"), (
        "lagrange must recover joint reactions declared as constraint coordinates"
    )
    # Formulations with multipliers are the ones that can recover them.
    others = [
        name
        for name, cls in ((n, FORMULATIONS[n]) for n in COMPARED)
        if cls.uses_multipliers
        and not isinstance(derived(ms, name), UnsupportedSystemError)
        and derived(ms, name).extras.get("constraint_forces")
    ]
    assert "lagrange" in others
    structure = ms.options["structure"]
    (react,) = structure[-1]
    newton = _newton_reaction_functions(ms, react)
    p = ms.states.parameter_vector()
    for t0, q, qd in states(ms, seeds):
        ref = kane.constraint_forces(t0, q, qd)
        for name in others:
            got = model(ms, name).constraint_forces(t0, q, qd)
            for k in ref:
                assert np.isclose(
                    got[k], ref[k], rtol=1e-8, atol=1e-8 * max(1.0, abs(ref[k]))
                ), f"{name}: {k} = {got[k]} but kane gives {ref[k]} on {structure}"
        x = kane.state_from(q, qd, t0)
        ud = kane.solve_unknowns(t0, x)
        fx, fy = newton(q, x[len(q) :], ud, p)
        k = react + 1
        assert np.isclose(
            ref[f"Rx{k}"], fx, rtol=1e-8, atol=1e-8 * max(1.0, abs(fx))
        ), (ref, fx, fy)
        assert np.isclose(
            ref[f"Ry{k}"], fy, rtol=1e-8, atol=1e-8 * max(1.0, abs(fy))
        ), (ref, fx, fy)
