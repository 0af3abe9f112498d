"""A case's variant: its builder options as the label the tables show.

>>> variant_label((("n", 3), ("coordinates", "minimal")))
'n=3,coordinates=minimal'
>>> variant_options("n=3,coordinates=minimal")
{'n': 3, 'coordinates': 'minimal'}
"""

from __future__ import annotations

import ast

__all__ = ["variant_label", "variant_options"]


def variant_label(options) -> str:
    """``"k=v,..."`` of builder options given as ``(key, value)`` pairs."""
    return ",".join(f"{k}={v}" for k, v in options)


def variant_options(variant) -> dict:
    """A variant label back to builder keyword arguments (values read as
    Python literals where they are, as strings otherwise).  Anything but a
    string (the empty variant read back from a CSV file is NaN) is no
    options."""
    opts = {}
    if not isinstance(variant, str):
        return opts
    for part in filter(None, variant.split(",")):
        key, _, value = part.partition("=")
        try:
            opts[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            opts[key] = value
    return opts
