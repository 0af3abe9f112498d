"""The exception a formulation raises for a system it cannot handle.

Its own module, below :mod:`eomcompare.formulations.base` and the method modules, so
that the helpers every formulation shares (:mod:`eomcompare.formulations.auxiliary`)
can raise it without importing the base class back.
"""

from __future__ import annotations

__all__ = ["UnsupportedSystemError"]


class UnsupportedSystemError(ValueError):
    """The formulation cannot handle this system; the message says why."""
