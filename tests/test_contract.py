"""Every registered formulation against the reference ("kane") on every
catalogue system: the same q'' at random consistent states.

The list of formulations and of systems is read from the registries, so a
new backend or a new system takes part without editing this file.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import cached_eom, cached_model, cached_system, derivation_group
from helpers import expected_refusal

from eomcompare.formulations import FORMULATIONS, UnsupportedSystemError
from eomcompare.systems import CATALOGUE, system_facts

N_STATES = 20
#: Variants of catalogue systems checked besides their defaults.
VARIANTS = {
    "n_link_pendulum": [
        (("angles", "absolute"), ("n", 3)),
        (("angles", "relative"), ("n", 3)),
    ],
    "crank_slider": [(("coordinates", "redundant"),), (("coordinates", "minimal"),)],
    "four_bar": [(("coordinates", "redundant"),), (("coordinates", "minimal"),)],
    "solar_panels": [(), (("damped", True),)],
}


#: Published-benchmark systems: each derivation takes tens of seconds.
HEAVY = {s for s in CATALOGUE if system_facts(s).heavy}


#: Systems with an independent oracle are checked against it instead
#: (tests/systems/test_robots.py: every formulation against Pinocchio).
CHECKED_HERE = [s for s in CATALOGUE if system_facts(s).oracle is None]


def _cases():
    for name in CHECKED_HERE:
        for opts in VARIANTS.get(name, [()]):
            for form in FORMULATIONS:
                if form == "kane":
                    continue
                oid = "-".join(f"{k}={v}" for k, v in opts)
                yield pytest.param(
                    form,
                    name,
                    opts,
                    id=f"{form}-{name}" + (f"-{oid}" if oid else ""),
                    marks=[pytest.mark.slow, derivation_group(name, form)]
                    if name in HEAVY
                    else [],
                )


def _relative_error(a, b):
    scale = max(np.max(np.abs(b)), 1.0)
    return float(np.max(np.abs(a - b)) / scale)


@pytest.mark.parametrize("formulation,name,opts", list(_cases()))
def test_same_accelerations_as_kane(formulation, name, opts):
    ms = cached_system(name, opts)
    try:
        eom = cached_eom(formulation, name, opts)
    except Exception as exc:
        # Only the listed refusals (the tree algorithms' scope; no peer
        # refuses a catalogue system) pass; anything else is a failure.
        if not expected_refusal(formulation, ms, opts, exc):
            raise
        return
    ref = cached_model("kane", name, opts)
    model = eom.numeric()
    worst = 0.0
    for seed in range(N_STATES):
        t0, q, qd = ms.states.random_state(seed)
        worst = max(
            worst,
            _relative_error(
                model.coordinate_accelerations(t0, q, qd),
                ref.coordinate_accelerations(t0, q, qd),
            ),
        )
    assert worst < 1e-9, f"{formulation} vs kane on {name}: {worst:.3g}"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[pytest.mark.slow] if n in HEAVY else [])
        for n in CHECKED_HERE
    ],
)
def test_kane_derives_every_catalogue_system(name):
    eom = cached_eom("kane", name, ())
    n_u = len(eom.system.speeds)
    assert eom.mass_matrix.shape == (n_u, n_u)
    # kane's lambdified model, only evaluated here: the one the agreement
    # tests above read as their reference.
    model = cached_model("kane", name, ())
    # The declared initial state is often a symmetric configuration (zero
    # heading, upright) where a careless symbolic pivot vanishes.
    for t0, q, qd in (
        eom.system.states.random_state(0),
        eom.system.states.consistent_initial_state(),
    ):
        qdd = model.coordinate_accelerations(t0, q, qd)
        assert qdd.shape == (len(eom.system.coordinates),)
        assert np.all(np.isfinite(qdd))


#: A small system in each formulation's scope: the double pendulum, or a
#: tree of twists / a declared joint tree for the tree algorithms.
SMALL = {
    "kane_composite": ("n_link_pendulum", (("n", 2),)),
    "kane_articulated": ("spatial_chain", (("n", 2),)),
}


@pytest.mark.parametrize("formulation", list(FORMULATIONS))
def test_rhs_returns_a_fresh_array(formulation):
    """An integrator may keep a reference to an earlier derivative."""
    try:
        eom = cached_eom(formulation, *SMALL.get(formulation, ("double_pendulum", ())))
    except UnsupportedSystemError:
        pytest.fail(f"{formulation} must handle its small system")
    model = eom.numeric()
    t0, q, qd = eom.system.states.random_state(3)
    x = model.state_from(q, qd, t0)
    first = model.rhs(t0, x)
    kept = first.copy()
    second = model.rhs(t0, x + 0.1)
    assert first is not second
    np.testing.assert_array_equal(first, kept)


@pytest.mark.parametrize("formulation", list(FORMULATIONS))
def test_state_round_trip(formulation):
    eom = cached_eom(formulation, *SMALL.get(formulation, ("double_pendulum", ())))
    model = eom.numeric()
    t0, q, qd = eom.system.states.random_state(5)
    q2, qd2 = model.coordinates_from(model.state_from(q, qd, t0), t0)
    np.testing.assert_allclose(q2, q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qd2, qd, rtol=1e-12, atol=1e-12)


def test_the_per_worker_derivation_cache_is_one_entry_per_derivation():
    # The heavy derivations are grouped on one worker so they are derived
    # once; with or without the empty options tuple they are one entry.
    assert cached_system("double_pendulum") is cached_system("double_pendulum", ())
    assert cached_eom("kane", "double_pendulum") is cached_eom(
        "kane", "double_pendulum", ()
    )
