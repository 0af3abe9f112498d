"""Published benchmarks by every formulation: the rolling disc's critical
speed (1/sqrt(3) for m = g = r = 1) and steady circular rolling as a
relative equilibrium, from the linearization; the benchmark table of the
comparison report.  The bicycle and Andrews' mechanism have their own files
(tests/systems/)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import cached_eom, cached_system

from eomcompare.formulations.base import formulation_names
from eomcompare.numeric.linearize import linearize
from eomcompare.references import published as bm

#: The default comparison's formulations; the tree algorithms
#: (kane_composite, kane_articulated) are checked against kane on every
#: catalogue system in tests/test_contract.py, and against Pinocchio and
#: kane in tests/systems/test_robots_articulated_body.py and
#: tests/formulations/test_composite.py.
FORMULATIONS = formulation_names(default_only=True)
UNIT_DISC = {"m": 1.0, "g": 1.0, "r": 1.0}


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_rolling_disc_critical_speed(formulation):
    eom = cached_eom(formulation, "rolling_disc")
    v = bm.rolling_disc_critical_speed(eom, parameters=UNIT_DISC)
    assert abs(v - 1.0 / math.sqrt(3.0)) < 1e-9
    # Below it the lean/yaw block has a real unstable pair, above it only
    # an oscillation (energy is conserved, so no decay).
    below = bm.rolling_disc_lean_model(eom, 0.9 * v).eigenvalues()
    above = bm.rolling_disc_lean_model(eom, 1.1 * v).eigenvalues()
    assert below.real.max() > 0.05
    assert np.max(np.abs(above.real)) < 1e-7
    assert np.abs(above.imag).max() > 0.05


def test_rolling_disc_critical_speed_scales_with_radius_and_gravity():
    """The condition v^2 > g r / 3 of the thin disc: other g and r."""
    eom = cached_eom("kane", "rolling_disc")
    v = bm.rolling_disc_critical_speed(
        eom, parameters={"m": 2.0, "g": 9.81, "r": 0.5}, bracket=(0.1, 5.0)
    )
    assert abs(v - math.sqrt(9.81 * 0.5 / 3.0)) < 1e-9


def _steady_circle(P, lean, yaw_rate):
    """(q, q') of steady turning (derivation in
    tests/systems/test_rolling_disc.py::_steady_spin_rate): with the yaw
    rate W and the lean a fixed, u3 = W cos a, and the moment balance about
    the centre gives u2 = ((r/4) W^2 sin a cos a - g sin a) / ((3/2) r W cos a);
    the spin rate is q3' = u2 - W sin a and the contact point moves along
    Y.x at r q3'."""
    r, g = P["r"], P["g"]
    a, W = lean, yaw_rate
    u2 = ((r / 4) * W**2 * np.sin(a) * np.cos(a) - g * np.sin(a)) / (
        1.5 * r * W * np.cos(a)
    )
    spin = u2 - W * np.sin(a)
    q = np.array([0.3, lean, 0.1, 0.2, -0.1])
    qd = np.array([W, 0.0, spin, r * spin * np.cos(q[0]), r * spin * np.sin(q[0])])
    return q, qd


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("lean,yaw_rate", [(0.3, 4.0), (-0.4, 3.0)])
def test_steady_circular_rolling_is_a_relative_equilibrium(formulation, lean, yaw_rate):
    ms = cached_system("rolling_disc")
    P = {str(k): v for k, v in ms.parameters.items()}
    q, qd = _steady_circle(P, lean, yaw_rate)
    assert np.max(np.abs(ms.states.velocity_residual(0.0, q, qd))) < 1e-12
    lin = linearize(cached_eom(formulation, "rolling_disc"), (0.0, q, qd))
    rates = dict(zip(lin.states, lin.rates))
    # The shape (lean) and every speed are stationary ...
    for s in ("q2", "u1", "u2", "u3"):
        assert abs(rates[s]) < 1e-9, (s, rates[s])
    # ... while the cyclic coordinates advance: yaw at W.
    assert abs(rates["q1"] - yaw_rate) < 1e-12
    # The vector field does not depend on the cyclic coordinates.
    cyclic = [lin.states.index(s) for s in ("q1", "q3", "x", "y")]
    shape = [lin.states.index(s) for s in ("q2", "u1", "u2", "u3")]
    assert np.max(np.abs(lin.A[np.ix_(shape, cyclic)])) < 1e-8
    # A slightly wrong spin is not steady: the lean rate changes.
    q, qd_wrong = _steady_circle(P, lean, yaw_rate)
    qd_wrong[2] *= 1.05
    qd_wrong[3:] *= 1.05
    wrong = linearize(cached_eom(formulation, "rolling_disc"), (0.0, q, qd_wrong))
    assert abs(dict(zip(wrong.states, wrong.rates))["u1"]) > 1e-3


def test_published_vs_computed_table():
    df = bm.published_vs_computed(
        ["kane", "lagrange"], benchmarks=["rolling_disc"], use_cache=False
    )
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == [
        "benchmark",
        "quantity",
        "formulation",
        "published",
        "computed",
        "difference",
        "relative",
        "seconds",
    ]
    assert set(df["formulation"]) == {"kane", "lagrange"}
    assert np.all(df["published"] == 1.0 / math.sqrt(3.0))
    assert df["difference"].abs().max() < 1e-9
    with pytest.raises(ValueError, match="valid"):
        bm.published_vs_computed(["kane"], benchmarks=["tricycle"])
    with pytest.raises(ValueError, match="must be one of"):
        bm.rolling_disc_critical_speed("no_such_method")


def test_derivations_over_the_time_limit_are_reported(tmp_path, monkeypatch):
    """A derivation that exceeds the limit is a row saying so, not a hang."""
    monkeypatch.setenv("EOMCOMPARE_CACHE", str(tmp_path))
    df = bm.published_vs_computed(
        ["kane"], benchmarks=["rolling_disc"], derive_timeout=1e-3
    )
    assert len(df) == 1
    assert "TimeoutError" in df["quantity"].iloc[0]
    assert np.isnan(df["computed"].iloc[0])
