"""kane_composite, Kane's equations by composite-body sums: the same
equations as kane's body-by-body sums, derived exactly where the system is
a tree of twists (refused elsewhere), and cheaper on long chains."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import cached_eom, cached_system

from eomcompare.formulations import UnsupportedSystemError, get_formulation
from eomcompare.formulations.base import count_operations
from eomcompare.systems import CATALOGUE, get_system, system_facts

LIGHT = sorted(s for s in CATALOGUE if not system_facts(s).heavy)


def _options(options):
    """The options tuple of the per-worker caches (tests/conftest.py), in
    the order tests/test_contract.py writes them, so that the derivations
    it and this module read are one."""
    return tuple(sorted(options.items()))


def _accelerations(eom, ms, seeds=(0, 1, 2)):
    model = eom.numeric()
    return [
        model.coordinate_accelerations(*ms.states.random_state(s)[:3]) for s in seeds
    ]


# Every light catalogue system whose speeds form a tree of twists (the
# others, crank_slider, double_pendulum and n_four_bar (absolute angles of
# every link), are refused below and in
# test_absolute_angles_are_not_a_tree_of_twists).
NOT_TREES = ("crank_slider", "double_pendulum", "n_four_bar")
TREES = [(n, {}) for n in LIGHT if n not in NOT_TREES]


@pytest.mark.parametrize(
    "name, options",
    TREES
    + [
        ("n_link_pendulum", {"n": 5}),
        ("n_link_pendulum_on_cart", {"n": 4}),
    ],
)
def test_composite_and_direct_sums_agree(name, options):
    comp = cached_eom("kane_composite", name, _options(options))
    direct = cached_eom("kane", name, _options(options))
    ms = comp.system
    assert comp.mass_matrix != direct.mass_matrix  # two different sums
    for a, d in zip(_accelerations(comp, ms), _accelerations(direct, ms)):
        np.testing.assert_allclose(a, d, rtol=1e-10, atol=1e-10)


def test_a_closed_loop_is_not_a_tree_of_twists():
    with pytest.raises(UnsupportedSystemError, match="not a tree of twists"):
        get_formulation("kane_composite", count_ops=False).derive(
            get_system("crank_slider")
        )


@pytest.mark.parametrize(
    "name, options",
    [
        ("n_link_pendulum", {"n": 3, "angles": "absolute"}),
        ("double_pendulum", {}),
        ("n_four_bar", {}),
    ],
)
def test_absolute_angles_are_not_a_tree_of_twists(name, options):
    # The rate of an absolute angle rotates its own link and only
    # translates the links beyond it: no single rigid motion.
    ms = cached_system(name, _options(options))
    with pytest.raises(UnsupportedSystemError, match="not a tree of twists"):
        get_formulation("kane_composite", count_ops=False).derive(ms)
    # kane sums body by body on every system.
    eom = cached_eom("kane", name, _options(options))
    ref = cached_eom("sympy_kane", name, _options(options))
    for a, b in zip(_accelerations(eom, ms), _accelerations(ref, ms)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_composite_mass_matrix_is_smaller_after_cse():
    ops = {
        f: count_operations(eom.mass_matrix, eom.forcing)["cse"]
        for f, eom in (
            (f, cached_eom(f, "n_link_pendulum", (("n", 6),)))
            for f in ("kane_composite", "kane")
        )
    }
    assert ops["kane_composite"] < 0.8 * ops["kane"]


@pytest.mark.parametrize(
    "name, options",
    [
        ("n_link_pendulum", {"n": 6}),
        ("n_link_pendulum_on_cart", {"n": 4}),
        ("n_link_pendulum", {"n": 3}),
        ("solar_panels", {}),
        ("rolling_disc", {}),
    ],
)
def test_kane_sums_body_by_body_at_every_depth(name, options):
    # kane is the textbook method whatever the size: its mass matrix is
    # the body-by-body sum sum_B m v_r.v_s + w_r.I.w_s of the partial
    # velocities it publishes, never the composite sums.
    kane = cached_eom("kane", name, _options(options))
    comp = cached_eom("kane_composite", name, _options(options))
    assert kane.mass_matrix != comp.mass_matrix
    assert "composite_bodies" not in kane.timings
    assert "composite_bodies" in comp.timings


@pytest.mark.parametrize(
    "name, options",
    [
        ("n_link_pendulum", {"n": 3}),
        ("rolling_disc", {}),  # nonholonomic: F_r and F*_r through C
    ],
)
def test_composite_extras_are_lazy_and_equal_the_direct_ones(
    name, options, monkeypatch
):
    import eomcompare.formulations.kane as kane
    from eomcompare.symbolic.identities import RandomPoints

    calls = []
    original = kane.generalized_active_forces

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(kane, "generalized_active_forces", counted)
    ms = get_system(name, **options)
    comp = get_formulation("kane_composite", count_ops=False).derive(ms)
    # The composite sums need no F_r: computed only when the extras are read.
    assert calls == []
    direct = get_formulation("kane", count_ops=False).derive(ms)
    assert len(calls) == 1
    lazy = comp.extras
    assert set(lazy) == set(direct.extras)
    points = RandomPoints(np.random.default_rng(7))
    N = ms.frame
    # F*_r is where the two paths differ (from the composite sums' forcing
    # there, body by body here); F_r and C are built alike on both.
    a, b = (e["generalized_inertia_forces"] for e in (lazy, direct.extras))
    assert a.shape == b.shape
    np.testing.assert_allclose(
        points.vector(a[:]), points.vector(b[:]), rtol=1e-9, atol=1e-9
    )
    for key in (
        "nonholonomic_partial_velocities",
        "nonholonomic_partial_angular_velocities",
    ):
        assert set(lazy[key]) == set(direct.extras[key])
        for name_, vecs in lazy[key].items():
            assert len(vecs) == len(direct.extras[key][name_])
            for va, vb in zip(vecs, direct.extras[key][name_]):
                np.testing.assert_allclose(
                    points.vector((va - vb).to_matrix(N) if va != vb else [0, 0, 0]),
                    0,
                    atol=1e-9,
                )
    for key in lazy:
        lazy[key]
    assert len(calls) == 2  # once for every key of the composite extras


def test_kane_times_its_active_and_inertia_forces_as_stages_of_their_own():
    """``kane`` is the textbook method, and its stages say so: F_r and
    F*_r timed apart; the composite sums are ``kane_composite``'s."""
    ms = get_system("n_link_pendulum", n=2)
    kane = get_formulation("kane", count_ops=False).derive(ms)
    assert {"kinematics", "F_r", "F*_r", "assembly"} <= set(kane.timings)
    composite = get_formulation("kane_composite", count_ops=False).derive(ms)
    assert "composite_bodies" in composite.timings
    assert not {"F_r", "F*_r"} & set(composite.timings)
