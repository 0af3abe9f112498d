"""Property: a velocity declared from a point not located from the origin
never yields disagreeing accelerations; the formulations that need
velocities to be derivatives of positions refuse the system instead."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from eomcompare.formulations import (
    FORMULATIONS,
    UnsupportedSystemError,
    formulation_names,
    get_formulation,
)
from eomcompare.testing.strategies import (
    kinematic_trees,
    open_chains,
    reanchor_velocity,
    unlocated_velocities,
)

#: The default comparison's formulations; the tree algorithms
#: (kane_composite, kane_articulated) are checked against kane on every
#: catalogue system in tests/test_contract.py, and against Pinocchio and
#: kane in tests/systems/test_robots_articulated_body.py and
#: tests/formulations/test_composite.py.
COMPARED = formulation_names(default_only=True)

READERS = ["kane", "gibbs_appell", "sympy_kane"]


def _accelerations(ms, name, states):
    model = get_formulation(name, count_ops=False).derive(ms).numeric()
    return np.array([model.coordinate_accelerations(*s) for s in states])


BASES = st.one_of(
    open_chains(dimension=2, max_bodies=2), kinematic_trees(dimension=3, max_bodies=2)
)
OFFSETS = st.tuples(*[st.floats(-0.5, 0.5)] * 3)


@pytest.mark.slow
@given(BASES, OFFSETS, st.booleans())
def test_unlocated_velocities_agree_or_are_refused(base, offset, moving):
    ms = reanchor_velocity(base, offset, moving=moving)
    try:
        states = [ms.states.random_state(seed) for seed in range(2)]
        ref = _accelerations(ms, "kane", states)
    except ValueError as exc:  # a pinned C that takes a speed's only motion
        assume("singular" not in str(exc).lower())
        raise
    a = ms.declaration_analysis
    assert [p for p, _ in a.underived_velocities] == ["G_unlocated"]
    scale = 1.0 + np.max(np.abs(ref))
    for name in COMPARED:
        try:
            got = _accelerations(ms, name, states)
        except UnsupportedSystemError as exc:
            assert FORMULATIONS[name].needs_velocities_from_positions, (
                f"{name} refused: {exc}"
            )
            assert "G_unlocated" in str(exc)
            continue
        assert name in READERS or not FORMULATIONS[name].needs_velocities_from_positions
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8 * scale, err_msg=name)
    if moving:
        # C moves as the body's point there: the system drawn from, whose
        # velocities are derivatives, which the Lagrange family accepts.
        assert base.declaration_analysis.velocities_are_derivatives
        np.testing.assert_allclose(
            _accelerations(base, "lagrange", states), ref, rtol=0, atol=1e-8 * scale
        )


@given(unlocated_velocities())
def test_unlocated_velocities_strategy_records_the_new_point(ms):
    assert not ms.declaration_analysis.velocities_are_derivatives
    assert ms.options["reanchored"][1] in (True, False)
    with np.testing.assert_raises(UnsupportedSystemError):
        get_formulation("lagrange", count_ops=False).derive(ms)
