"""The registry of catalogue systems: name -> builder."""
from __future__ import annotations

import inspect
from typing import Callable

from .base import MechanicalSystem

__all__ = ["CATALOGUE", "register_system", "get_system", "system_names"]

#: Catalogue name -> builder function returning a :class:`MechanicalSystem`.
CATALOGUE: dict[str, Callable[..., MechanicalSystem]] = {}


def register_system(name: str):
    """Decorator registering a builder under ``name`` (once)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"system name must be an identifier, not {name!r}")

    def decorate(builder):
        if name in CATALOGUE and CATALOGUE[name] is not builder:
            raise ValueError(f"system {name!r} is registered already")
        CATALOGUE[name] = builder
        return builder

    return decorate


def system_names() -> list[str]:
    return list(CATALOGUE)


def get_system(name: str, **options) -> MechanicalSystem:
    """Build the catalogue system ``name`` with builder ``options``.

    Raises
    ------
    ValueError
        For an unknown name (listing the valid ones) or an unknown option
        (listing the builder's options).
    """
    if isinstance(name, MechanicalSystem):
        if options:
            raise ValueError("options cannot be applied to a built system")
        return name
    try:
        builder = CATALOGUE[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown system {name!r}; valid names: {sorted(CATALOGUE)}") from None
    valid = [p for p in inspect.signature(builder).parameters]
    bad = [k for k in options if k not in valid]
    if bad:
        raise ValueError(
            f"system {name!r} takes no option(s) {bad}; valid options: {valid}")
    return builder(**options)
