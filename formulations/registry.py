"""The formulations by name: the registry every listing reads, the
reference method, and the options a name carries.

A formulation is known here by its registry name and by what its class
declares (ability flags, the options its ``__init__`` takes).  The class
itself, :class:`~eomcompare.formulations.base.Formulation`, and the two
functions that take it (:func:`~eomcompare.formulations.base.register`,
:func:`~eomcompare.formulations.base.get_formulation`) are in
:mod:`eomcompare.formulations.base`, above this module, so that the result
of a derivation (:mod:`eomcompare.formulations.result`) can name the
formulation that made it without importing the class that makes it.

>>> from eomcompare.formulations.registry import FORMULATIONS, REFERENCE
>>> REFERENCE in FORMULATIONS
True
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from eomcompare.symbolic.text import key_value

if TYPE_CHECKING:
    from .base import Formulation

__all__ = [
    "FORMULATIONS",
    "REFERENCE",
    "ABILITIES",
    "check_options",
    "formulation_names",
    "formulation_from_spec",
    "peer_of",
    "split_formulation_spec",
]

#: Registry: formulation name -> class.  Every listing reads this.
FORMULATIONS: dict[str, type[Formulation]] = {}

#: The formulation every other one is compared with (harness, CLI, report,
#: tests).
REFERENCE = "kane"

#: The ability flags every formulation declares (class attributes, bool).
ABILITIES = (
    "handles_holonomic",
    "handles_nonholonomic",
    "handles_rheonomic",
    "uses_multipliers",
    "needs_dependent_solutions",
    "is_peer",
    "needs_tree",
    "in_default_comparison",
)


def peer_of(name: str) -> str | None:
    """The peer (the field's tool) a formulation is measured against, if
    that peer is registered."""
    peer = FORMULATIONS[name].peer
    return peer if peer in FORMULATIONS else None


def check_options(owner: str, **choices: tuple[Any, Any]) -> None:
    """Validate option values against their valid choices: the one way
    every formulation checks its options.

    ``choices`` maps an option name to ``(value, valid)``, where ``valid``
    is a tuple of allowed values or a type (or tuple of types).

    Raises
    ------
    TypeError
        For a value of the wrong type (for allowed values: of a type none of
        them has), naming the choices.
    ValueError
        For a value not among the choices, naming them.

    Examples
    --------
    >>> check_options("modified_lagrange", dependent=("auto", ("auto", "implicit")))
    >>> check_options("modified_lagrange", dependent=("x", ("auto", "implicit")))
    Traceback (most recent call last):
    ...
    ValueError: modified_lagrange: `dependent` must be one of ['auto', 'implicit'], not 'x'
    >>> check_options("modified_lagrange", dependent=(1, ("auto", "implicit")))
    Traceback (most recent call last):
    ...
    TypeError: modified_lagrange: `dependent` must be a str, one of ['auto', 'implicit'], not int
    """
    for opt, (value, valid) in choices.items():
        if isinstance(valid, type) or (
            isinstance(valid, tuple)
            and valid
            and all(isinstance(v, type) for v in valid)
        ):
            if not isinstance(value, valid):
                names = (
                    [valid.__name__]
                    if isinstance(valid, type)
                    else [v.__name__ for v in valid]
                )
                raise TypeError(
                    f"{owner}: `{opt}` must be of type "
                    f"{' or '.join(names)}, not "
                    f"{type(value).__name__}"
                )
        elif not any(type(value) is type(v) for v in valid):
            kinds = " or ".join(sorted({type(v).__name__ for v in valid}))
            raise TypeError(
                f"{owner}: `{opt}` must be a {kinds}, one of "
                f"{list(valid)}, not {type(value).__name__}"
            )
        elif value not in valid:
            raise ValueError(
                f"{owner}: `{opt}` must be one of {list(valid)}, not {value!r}"
            )


def formulation_names(
    include_peers: bool = True, *, default_only: bool = False
) -> list[str]:
    """Registered names, in registration order; without the peers when
    ``include_peers`` is false, and only those the default comparison runs
    (``in_default_comparison``) when ``default_only`` is true.

    >>> "kane_composite" in formulation_names(default_only=True)
    False
    """
    return [
        n
        for n, c in FORMULATIONS.items()
        if (include_peers or not c.is_peer)
        and (c.in_default_comparison or not default_only)
    ]


def split_formulation_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """A formulation's name and options as the command line writes them:
    ``"name"`` or ``"name:key=value[:key=value...]"``, each value read as
    a Python literal where it is one (``5``, ``(5.0, 5.0)``, ``True``),
    else as a string (:func:`eomcompare.symbolic.text.key_value`).

    Raises
    ------
    ValueError
        For an option that is not ``key=value``.

    Examples
    --------
    >>> split_formulation_spec("modified_lagrange:dependent=implicit")
    ('modified_lagrange', {'dependent': 'implicit'})
    >>> split_formulation_spec("lagrange:baumgarte=(5.0, 5.0)")
    ('lagrange', {'baumgarte': (5.0, 5.0)})
    """
    name, *parts = str(spec).split(":")
    options: dict[str, Any] = {}
    for part in parts:
        try:
            key, value = key_value(part)
        except ValueError:
            raise ValueError(
                f"formulation {spec!r}: options are written NAME:KEY=VALUE "
                f"(e.g. lagrange:baumgarte=(5.0,5.0)), not {part!r}"
            ) from None
        options[key] = value
    return name.strip(), options


def _check_option_names(cls: type[Formulation], options: Mapping[str, Any]) -> None:
    params = inspect.signature(cls.__init__).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    known = [
        p.name
        for p in params
        if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(
            f"{cls.name} has no option {', '.join(map(repr, unknown))}; "
            f"its options: {', '.join(known) or 'none'}"
        )


def formulation_from_spec(spec: object, **options: Any) -> Formulation:
    """An instance of the formulation a registry name names, with the
    options the name carries (:func:`split_formulation_spec`) and the
    keyword ``options``: what
    :func:`~eomcompare.formulations.base.get_formulation` does with a name.

    Raises
    ------
    ValueError
        For an unknown name, listing the registered ones; for an option
        the formulation does not have, listing those it has; for an option
        given both in the name and as a keyword.

    Examples
    --------
    >>> formulation_from_spec("lagrange", baumgarte=(5.0, 5.0)).name
    'lagrange'
    """
    name, named = split_formulation_spec(spec) if isinstance(spec, str) else (spec, {})
    try:
        cls = FORMULATIONS[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(
            f"`formulation` must be one of {sorted(FORMULATIONS)} or a "
            f"Formulation subclass, not {spec!r}"
        ) from None
    both = sorted(set(named) & set(options))
    if both:
        raise ValueError(
            f"formulation {spec!r}: option(s) {both} given both in "
            f"the name and as keywords"
        )
    options = named | options
    _check_option_names(cls, options)
    return cls(**options)
