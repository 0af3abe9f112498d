"""The system variants a run prepares once in its own process.

:func:`eomcompare.compare.runner.prepare_variant` fills :data:`PREPARED`; the forked
cases of a variant inherit it, and the report reads the run's declarations
and states from it (:func:`prepared`) rather than building them again.
This module imports nothing of the harness, so both can read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from eomcompare.symbolic.types import State
    from eomcompare.systems import MechanicalSystem

#: The packages whose source the resume key hashes.  A system whose
#: builder lives elsewhere (a user's own) is resumed only for the same
#: declaration (:func:`eomcompare.compare.cases.declaration_key`), which its source
#: cannot vouch for.
CODE_PACKAGES = tuple(
    f"eomcompare.{pkg}"
    for pkg in ("symbolic", "numeric", "systems", "formulations", "compare")
)


def declared_outside(system: str) -> bool:
    """Whether the builder of ``system`` lives outside :data:`CODE_PACKAGES`
    (a user's own system, from a module or file of theirs)."""
    from eomcompare.systems import CATALOGUE

    module = getattr(CATALOGUE[system], "__module__", None) or ""
    return not any(
        module == pkg or module.startswith(f"{pkg}.") for pkg in CODE_PACKAGES
    )


__all__ = [
    "PREPARED",
    "Prepared",
    "prepared",
    "prepared_declaration",
    "declaration_for_report",
]

#: (system, random states, initial state, fingerprint).
Prepared: TypeAlias = "tuple[MechanicalSystem, list[State], State, str | None]"

#: (system, options, n_states, use_cache) -> :data:`Prepared`, made once per
#: system variant in the run's process and inherited by the forked cases of
#: that variant, which would otherwise each build the system, solve its
#: constraints for the same states and hash the declaration for the
#: derivation cache again.
PREPARED: dict[tuple[str, tuple[tuple[str, Any], ...], int, bool], Prepared] = {}


def prepared(
    system: str, options: Mapping[str, Any], n_states: int
) -> tuple[MechanicalSystem, list[State]] | None:
    """``(declaration, random states)`` of a variant prepared in this
    process, or None: the report evaluates the published equations at the
    run's own states without building the system and solving its
    constraints again."""
    for (name, opts, n, _), got in PREPARED.items():
        if name == system and dict(opts) == dict(options) and n == n_states:
            return got[0], got[1]
    return None


def prepared_declaration(
    system: str, options: Mapping[str, Any]
) -> MechanicalSystem | None:
    """The declaration of a variant prepared in this process (built,
    validated, its functions lambdified), or None: the main job's
    precision sweep, forked from the run's process, solves the run's own
    declarations instead of building and validating them again."""
    for (name, opts, _, _), got in PREPARED.items():
        if name == system and dict(opts) == dict(options):
            return got[0]
    return None


def declaration_for_report(system: str, options: Mapping[str, Any]) -> MechanicalSystem:
    """The declaration of a variant for what the report reads of it that a
    run of an older version did not store (coordinate names, classes): the
    one prepared in this process, else the catalogue's builder run again.
    A user's own builder is not run here, outside the time limit and the
    interruption its cases run under (``LookupError``)."""
    ms = prepared_declaration(system, options)
    if ms is not None:
        return ms
    from eomcompare.systems import get_system

    if declared_outside(system):
        raise LookupError(f"{system} is a user's system; not built for the report")
    return get_system(system, **options)
