"""Kane's equations solved by the articulated-body recursion (the
``kane_articulated`` formulation, :mod:`eomcompare.formulations.articulated_body`):
q'' against Pinocchio's ``aba`` and against kane's mass-matrix form, the
refusals, and the operation counts of its evaluation order.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
from conftest import cached_eom, cached_model, cached_system
from helpers import worst_relative_deviation
from test_robots import N_STATES, _system_and_oracle
from test_urdf import PRISMATIC, REVOLUTE, TREE, imported, worst_deviation

from eomcompare.bench.literature_counts import (
    assignments_counts,
    featherstone,
    forward_dynamics_counts,
    inverse_dynamics_counts,
)
from eomcompare.formulations import UnsupportedSystemError, get_formulation
from eomcompare.formulations.articulated_body import Assignments
from eomcompare.formulations.cache import DerivationCache
from eomcompare.systems import from_urdf, get_system


def _aba_eom(ms, **options):
    return get_formulation("kane_articulated", count_ops=False, **options).derive(ms)


def _urdf_deviation(ms, n_states=10):
    return worst_deviation(ms, "kane_articulated", n_states)


def _chain(n):
    """The catalogue's spatial_chain(n) and its options, as the session's
    caches key them (``tests/conftest.py``)."""
    options = (("n", n),)
    return cached_system("spatial_chain", options), options


def _deviation_from_pinocchio(name, options, backend="lambdify"):
    # The session's derivation (the same kane_articulated without counts
    # as _aba_eom): the lambdified and compiled checks of a system, the
    # counts and the mass-matrix comparison read one derivation.
    ms, oracle = _system_and_oracle(name, options)
    if backend == "lambdify":
        model = cached_model("kane_articulated", name, options)
    else:
        model = cached_eom("kane_articulated", name, options).numeric(backend=backend)
    return worst_relative_deviation(model, ms, oracle, N_STATES)


@pytest.mark.parametrize(
    "name,options",
    [("spatial_chain", (("n", n),)) for n in (1, 2, 3, 4, 6)]
    + [("stanford_arm", ()), ("puma560", ()), ("ur5", ())]
    + [pytest.param("spatial_chain", (("n", 8),), marks=pytest.mark.slow)]
    + [pytest.param("panda", (), marks=pytest.mark.slow)],
)
def test_accelerations_equal_pinocchio(name, options):
    # 20 random states; the Stanford arm has a prismatic joint, ur5 and
    # panda are read from their URDF files (axes and rotations general).
    assert _deviation_from_pinocchio(name, options) < 1e-9


@pytest.mark.parametrize(
    "name,options", [("spatial_chain", (("n", 4),)), ("stanford_arm", ())]
)
def test_compiled_backend_equals_pinocchio(name, options):
    # The C backend prints the evaluation order and skips the solve.
    assert _deviation_from_pinocchio(name, options, backend="c") < 1e-9


@pytest.mark.parametrize(
    "text", [REVOLUTE, PRISMATIC, TREE], ids=["revolute", "prismatic", "tree"]
)
def test_urdf_joint_types_and_branches_against_pinocchio(text):
    # General axes (prismatic along (0.6, 0, 0.8)), rotated joint frames
    # and a branched tree.
    # The declarations test_urdf.py's formulations read, once per worker.
    assert _urdf_deviation(imported(text)) < 1e-10


def test_damping_against_pinocchio():
    text = REVOLUTE.replace("</joint>", '<dynamics damping="0.7"/></joint>', 1)
    ms = from_urdf(text, damping=True)
    assert _urdf_deviation(ms) < 1e-10


@pytest.mark.parametrize("n", [2, 3])
def test_equals_mass_matrix_form_at_random_parameters(n):
    # Against kane's M u' = f, at random states and random (physically
    # meaningless but finite) values of every symbolic parameter.
    # The session's derivations of the chain (kane's is test_robots.py's).
    ms, options = _chain(n)
    ours = cached_eom("kane_articulated", "spatial_chain", options)
    ref = cached_eom("kane", "spatial_chain", options)
    rng = np.random.default_rng(3)
    for _ in range(5):
        p = {s: v * rng.uniform(0.5, 1.5) for s, v in ms.parameters.items()}
        a, b = ours.numeric(p), ref.numeric(p)
        t0, q, qd = ms.states.random_state(int(rng.integers(1000)))
        np.testing.assert_allclose(
            a.coordinate_accelerations(t0, q, qd),
            b.coordinate_accelerations(t0, q, qd),
            rtol=1e-10,
            atol=1e-10,
        )


def test_explicit_form_and_evaluation_order(tmp_path):
    ms = get_system("spatial_chain", n=3)
    kane = get_formulation("kane_articulated")
    eom = kane.derive(ms)
    assert eom.mass_matrix == sm.eye(3)
    assigned = eom.extras["assignments"]
    assert isinstance(assigned, Assignments)
    # Each definition refers only to earlier symbols.
    seen = set()
    for s, d in zip(assigned.symbols, assigned.definitions):
        assert not (d.free_symbols & set(assigned.symbols)) - seen
        seen.add(s)
    # The derivation's own counts come from the evaluation order.
    assert eom.op_counts["cse"] > 0 and eom.op_counts["raw"] > 0
    t0, q, qd = ms.states.random_state(0)
    expected = eom.numeric().coordinate_accelerations(t0, q, qd)
    # The derivation cache stores the result whole.
    cache = DerivationCache(tmp_path)
    cache.store(eom, kane)
    back = cache.load(ms, kane)
    assert back is not None and not cache.rebuilt
    assert back.extras["assignments"].symbols == assigned.symbols
    np.testing.assert_allclose(
        back.numeric().coordinate_accelerations(t0, q, qd), expected, rtol=1e-13
    )


@pytest.mark.parametrize(
    "name,options,reason",
    [
        ("four_bar", {}, "joint tree"),  # closed loop
        ("rolling_disc", {}, "joint tree"),  # nonholonomic
        ("double_pendulum", {}, "joint tree"),  # not declared as a tree
    ],
)
def test_refuses_what_is_not_a_joint_tree(name, options, reason):
    with pytest.raises(UnsupportedSystemError, match=reason) as info:
        _aba_eom(get_system(name, **options))
    assert "use kane or kane_composite" in str(info.value)


def test_refuses_constraints_added_to_a_tree():
    ms = get_system("spatial_chain", n=2)
    q1, q2 = ms.coordinates
    ms.system.add_holonomic_constraints(q1 - q2)
    with pytest.raises(UnsupportedSystemError, match="constraints"):
        _aba_eom(ms)


def test_refuses_loads_added_to_a_tree():
    import sympy.physics.mechanics as me

    ms = get_system("spatial_chain", n=2)
    body = ms.bodies[-1]
    ms.system.add_loads(me.Force(body.masscenter, 3 * ms.frame.x))
    with pytest.raises(UnsupportedSystemError, match="loads"):
        _aba_eom(ms)


def test_is_a_formulation_of_its_own_left_out_of_the_default_run():
    from eomcompare.formulations import FORMULATIONS, formulation_names

    cls = FORMULATIONS["kane_articulated"]
    assert cls.needs_tree and not cls.handles_holonomic
    assert not cls.handles_nonholonomic and cls.peer == "sympy_kane"
    assert "kane_articulated" in formulation_names()
    assert "kane_articulated" not in formulation_names(default_only=True)


def test_inverse_dynamics_count_refuses_the_explicit_form():
    eom = cached_eom("kane_articulated", "spatial_chain", _chain(2)[1])
    with pytest.raises(ValueError, match="explicit form"):
        inverse_dynamics_counts(eom)


def test_assignment_counts_by_hand():
    # s0 = a*b (parameters only: once per parameter set), s1 = s0*q + c,
    # s2 = s1*s1 - q: per evaluation 2 multiplications and 2 additions.
    a, b, c = sm.symbols("a b c")
    q = sm.Function("q")(sm.Symbol("t"))
    s0, s1, s2 = sm.symbols("s0 s1 s2")
    order = Assignments((s0, s1, s2), (a * b, s0 * q + c, s1**2 - q), (s2,))
    n = assignments_counts(order, {a, b, c})
    assert (n.mul, n.add, n.param_mul, n.param_add) == (2, 2, 1, 0)
    # Substituted, the output is the same expression.
    assert sm.expand(order.substituted()[0] - ((a * b * q + c) ** 2 - q)) == 0


@pytest.mark.parametrize(
    "n", [2, 3, 4] + [pytest.param(n, marks=pytest.mark.slow) for n in (5, 6, 7, 8)]
)
def test_counts_at_most_featherstone_aba(n):
    # RBDA Table 10.1: ABA 224n - 259 multiplications, 205n - 248
    # additions for n revolute joints with general inertia.
    # Counted from the evaluation order, which a derivation without
    # counts has too: the session's derivation of the chain.
    fd = forward_dynamics_counts(
        cached_eom("kane_articulated", "spatial_chain", _chain(n)[1])
    )
    mul, add = featherstone(n)["ABA"]
    assert fd["solve"].mul == fd["solve"].add == 0
    assert fd["total"].mul <= mul and fd["total"].add <= add, (
        fd["total"].mul,
        fd["total"].add,
        mul,
        add,
    )
