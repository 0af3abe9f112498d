"""Names and options as text: how a function of time is shown to a reader,
and how a ``key=value`` option written on a command line is read.

One helper each, so that every table, message and option string of the
project writes and reads them the same way.

>>> import sympy.physics.mechanics as me
>>> display_name(me.dynamicsymbols("q1"))
'q1'
>>> key_value("baumgarte=(5.0, 5.0)")
('baumgarte', (5.0, 5.0))
"""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["display_name", "literal", "key_value"]


def display_name(x: object) -> str:
    """``x`` as a reader names it: a function of time without its ``(t)``
    (``q1(t)`` -> ``q1``, ``Derivative(q1(t), t)`` -> ``Derivative(q1,
    t)``), anything else as ``str`` writes it.

    Examples
    --------
    >>> import sympy.physics.mechanics as me
    >>> q = me.dynamicsymbols("theta")
    >>> display_name(q), display_name(2 * q), display_name("x")
    ('theta', '2*theta', 'x')
    """
    return str(x).replace("(t)", "")


def literal(text: str) -> Any:
    """``text`` read as a Python literal where it is one (``5``, ``(5.0,
    5.0)``, ``True``, ``'a'``), else the text itself, without surrounding
    blanks.

    Examples
    --------
    >>> literal(" 2.5 "), literal("(1, 2)"), literal("implicit")
    (2.5, (1, 2), 'implicit')
    """
    text = text.strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def key_value(text: str) -> tuple[str, Any]:
    """One option written ``key=value``: the key (an identifier) and the
    value read by :func:`literal`.

    Raises
    ------
    ValueError
        For text without ``=`` or whose key is not an identifier; callers
        say where the option was written.

    Examples
    --------
    >>> key_value("dependent=implicit")
    ('dependent', 'implicit')
    >>> key_value("n = 4")
    ('n', 4)
    >>> key_value("forward")
    Traceback (most recent call last):
    ...
    ValueError: an option is written KEY=VALUE, not 'forward'
    """
    key, eq, value = text.partition("=")
    key = key.strip()
    if not eq or not key.isidentifier():
        raise ValueError(f"an option is written KEY=VALUE, not {text!r}")
    return key, literal(value)
