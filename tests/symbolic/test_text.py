"""Names and options as text: the one display name of a function of time
and the one reader of ``key=value`` options."""

from __future__ import annotations

import pytest
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.text import display_name, key_value, literal


def test_display_name_drops_the_time_argument_only():
    q1, u = me.dynamicsymbols("q1 u")
    t = me.dynamicsymbols._t
    assert display_name(q1) == "q1"
    assert display_name(q1.diff(t)) == "Derivative(q1, t)"
    assert display_name(sm.sin(q1) * u) == "u*sin(q1)"
    # A plain symbol, a number or a string is written as str writes it.
    assert display_name(sm.Symbol("m")) == "m"
    assert display_name(2.5) == "2.5"
    assert display_name("theta") == "theta"
    # Only the argument t is dropped: a function of another symbol keeps its.
    x = sm.Symbol("x")
    assert display_name(sm.Function("f")(x)) == "f(x)"


@pytest.mark.parametrize(
    "text, value",
    [
        ("5", 5),
        (" 2.5 ", 2.5),
        ("(5.0, 5.0)", (5.0, 5.0)),
        ("True", True),
        ("None", None),
        ("'quoted'", "quoted"),
        ("implicit", "implicit"),
        (" padded ", "padded"),
        ("", ""),
        ("a:b", "a:b"),
    ],
)
def test_literal_reads_python_literals_and_keeps_other_text(text, value):
    assert literal(text) == value
    assert type(literal(text)) is type(value)


def test_key_value_reads_one_option():
    assert key_value("dependent=implicit") == ("dependent", "implicit")
    assert key_value(" n = 4 ") == ("n", 4)
    assert key_value("baumgarte=(5, 2.5)") == ("baumgarte", (5, 2.5))
    # Only the first '=' separates: the value may hold more.
    assert key_value("label=a=b") == ("label", "a=b")
    assert key_value("empty=") == ("empty", "")


@pytest.mark.parametrize("text", ["forward", "=1", "2x=1", "a b=1", ""])
def test_key_value_refuses_what_is_not_key_equals_value(text):
    with pytest.raises(ValueError, match="KEY=VALUE") as info:
        key_value(text)
    assert repr(text) in str(info.value)
