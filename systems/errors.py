"""The declaration's own error, in a module of its own so that every part
of the declaration checks (``base``, ``consistency``, ``auxiliary``,
``redundancy``) can raise it without importing each other."""

from __future__ import annotations

__all__ = ["DeclarationError"]


class DeclarationError(ValueError):
    """A system declaration is inconsistent; the message names the problem."""
