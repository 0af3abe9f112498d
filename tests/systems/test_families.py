"""The builders of the random families, beside the systems: usable
without hypothesis, and the same functions the strategies module offers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from eomcompare.systems import families

ROOT = Path(__file__).resolve().parents[2]
DISC = {"m": 2.0, "r": 0.3, "g": 9.0}


def test_builders_need_no_hypothesis():
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        sys.modules["hypothesis"] = None  # importing it fails
        from eomcompare.systems.families import build_driven_chain
        ms = build_driven_chain(
            1, "translation",
            dict(A=0.1, w=1.0, phi=0.0, g=9.81, alpha=0.0, l1=1.0, m1=1.0, J1=0.1),
            [0.2],
        )
        print(ms.options["family"], ms.degrees_of_freedom)
        import eomcompare.testing.strategies
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    # The builder ran; the strategies module, which needs hypothesis, did not.
    assert out.stdout.split() == ["driven_chain", "1"], out.stderr[-2000:]
    assert "needs hypothesis" in out.stderr


def test_strategies_offer_the_same_builders():
    from eomcompare.testing import strategies

    for name in families.__all__:
        assert getattr(strategies, name) is getattr(families, name), name
    assert set(families.__all__) <= set(strategies.__all__) | {
        "inertia_symbols",
        "inertia_values",
    }


def test_rolling_disc_takes_values_and_initial_state_by_name():
    ms = families.build_rolling_disc(DISC, {"q2": 0.1, "x": 1.5, "u3": -2.0})
    by_name = {str(k): v for k, v in ms.parameters.items()}
    assert by_name == DISC
    start = {str(k.func): v for k, v in ms.initial_state.items()}
    assert (start["q2"], start["x"], start["u3"]) == (0.1, 1.5, -2.0)
    # Not given: the catalogue's initial state; the dependent speeds are
    # left to the constraints.
    assert start["u2"] == 6.0
    assert not {"u4", "u5"} & set(start)
    assert ms.options["structure"] == ("rolling_disc",)


@pytest.mark.parametrize(
    "values, initial, message",
    [
        ({"m": 1.0, "r": 0.5}, None, r"missing for parameters \['g'\]"),
        (DISC, {"u4": 1.0}, r"no initial value can be given for \['u4'\]"),
    ],
)
def test_rolling_disc_refuses_what_it_cannot_take(values, initial, message):
    with pytest.raises(ValueError, match=message):
        families.build_rolling_disc(values, initial)
