"""A case's variant: its builder options as the label the tables show.

>>> variant_label((("n", 3), ("coordinates", "minimal")))
'n=3,coordinates=minimal'
>>> variant_options("n=3,coordinates=minimal")
{'n': 3, 'coordinates': 'minimal'}
"""

from __future__ import annotations

from eomcompare.symbolic.text import key_value

__all__ = ["variant_label", "variant_options"]


def variant_label(options) -> str:
    """``"k=v,..."`` of builder options given as ``(key, value)`` pairs."""
    return ",".join(f"{k}={v}" for k, v in options)


def variant_options(variant) -> dict:
    """A variant label back to builder keyword arguments (values read as
    Python literals where they are, as strings otherwise, by
    :func:`eomcompare.symbolic.text.key_value`).  A comma not followed by
    ``key=`` belongs to the value before it (a tuple's).  Anything but a
    string (the empty variant read back from a CSV file is NaN) is no
    options.

    >>> variant_options("size=(2, 3),n=4")
    {'size': (2, 3), 'n': 4}
    """
    if not isinstance(variant, str):
        return {}
    items: list[str] = []
    for part in variant.split(","):
        key, eq, _ = part.partition("=")
        if items and not (eq and key.strip().isidentifier()):
            items[-1] += "," + part
        else:
            items.append(part)
    return dict(key_value(item) for item in items if item)
