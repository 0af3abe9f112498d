"""The registry of catalogue systems: name -> builder."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .base import MechanicalSystem

__all__ = [
    "CATALOGUE",
    "Benchmark",
    "SystemFacts",
    "register_system",
    "get_system",
    "system_names",
    "system_facts",
    "import_package_modules",
]

#: A system builder: options in, declaration out.
Builder = Callable[..., MechanicalSystem]

#: Catalogue name -> builder function returning a :class:`MechanicalSystem`.
CATALOGUE: dict[str, Builder] = {}
#: Catalogue name -> what the harness and the tests need to know about it.
FACTS: dict[str, SystemFacts] = {}


@dataclass(frozen=True)
class Benchmark:
    """A published benchmark problem a catalogue entry transcribes, as its
    source defines the problem's accuracy (the IFToMM library of
    computational benchmark problems, say).

    Attributes
    ----------
    problem : str
        The library's name of the problem, e.g. ``"A01"``.
    title : str
    t_final : float
        The simulated time the specification asks for (s).
    reference : tuple of str
        The reference quantities: names of the system's ``observables``
        (:class:`~eomcompare.systems.base.MechanicalSystem`) the error is measured on.
    error_measure : str
        How the problem measures a solution's error, in words.
    accuracy : tuple of float
        The allowed errors, low and high precision (1e-1 and 1e-3 in the
        IFToMM specifications seen).
    output_steps : int or None
        The number of output steps the error is measured over, where the
        specification gives it.
    energy_conserved : bool
        The mechanical energy is a constant of the problem's motion (its
        drift is then a second error measure).
    notes : str
        Differences between the sources and what the catalogue chose.
    """

    problem: str
    title: str
    t_final: float
    reference: tuple[str, ...]
    error_measure: str
    accuracy: tuple[float, ...] = (1e-1, 1e-3)
    output_steps: int | None = None
    energy_conserved: bool = False
    notes: str = ""


@dataclass(frozen=True)
class SystemFacts:
    """Facts about a catalogue entry, declared with it.

    Attributes
    ----------
    heavy : bool
        Its derivations take minutes per formulation: left out of the
        default comparison run and marked slow in the tests.
    sizes : tuple of int
        For a scalable system (its builder takes ``n``), the sizes compared
        by default; empty otherwise.
    variants : tuple of dict
        Builder options compared by default (each a separate case); ``({},)``
        is the builder's defaults alone.
    oracle : str or None
        An independent dynamics library its tests check every formulation
        against (``"pinocchio"`` for the robots).  Such a system is left out
        of the test suite's cross-formulation checks against the reference
        formulation: its oracle is the stronger check, and deriving it with
        every peer there would take tens of minutes.
    benchmark : Benchmark or None
        The published benchmark problem the entry transcribes, with its
        reference quantities and error measure.
    """

    heavy: bool = False
    sizes: tuple[int, ...] = ()
    variants: tuple[dict[str, Any], ...] = field(default_factory=lambda: ({},))
    oracle: str | None = None
    benchmark: Benchmark | None = None

    @property
    def scalable(self) -> bool:
        return bool(self.sizes)


def register_system(
    name: str,
    *,
    heavy: bool = False,
    sizes: Iterable[int] = (),
    variants: Iterable[dict[str, Any]] = ({},),
    oracle: str | None = None,
    benchmark: Benchmark | None = None,
) -> Callable[[Builder], Builder]:
    """Decorator registering a builder under ``name`` (once), with its
    facts (see :class:`SystemFacts`).

    Raises
    ------
    ValueError
        For a name that is not an identifier or is taken, sizes that are not
        positive integers, variants naming options the builder does not take
        or sizes for a builder without ``n``.
    TypeError
        For ``heavy`` that is not a bool, variants that are not mappings,
        an oracle that is not a string or a benchmark that is not a
        :class:`Benchmark`.

    Examples
    --------
    >>> @register_system("my_pendulum", variants=({"n": 1}, {"n": 2}))
    ... def my_pendulum(n=1): ...                    # doctest: +SKIP
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"system name must be an identifier, not {name!r}")
    if not isinstance(heavy, bool):
        raise TypeError(f"heavy must be a bool, not {type(heavy).__name__}")
    sizes = tuple(sizes)
    if any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in sizes):
        raise ValueError(f"sizes must be positive integers, not {sizes}")
    if oracle is not None and not isinstance(oracle, str):
        raise TypeError(f"oracle must be a str or None, not {type(oracle).__name__}")
    if benchmark is not None and not isinstance(benchmark, Benchmark):
        raise TypeError(
            f"benchmark must be a Benchmark or None, not {type(benchmark).__name__}"
        )
    variants = tuple(variants)
    if not variants or any(not isinstance(v, dict) for v in variants):
        raise TypeError(
            "variants must be a non-empty sequence of dicts of builder options"
        )

    def decorate(builder: Builder) -> Builder:
        if name in CATALOGUE and CATALOGUE[name] is not builder:
            raise ValueError(f"system {name!r} is registered already")
        valid = list(inspect.signature(builder).parameters)
        bad = sorted({k for v in variants for k in v if k not in valid})
        if bad:
            raise ValueError(
                f"system {name!r}: variants name options {bad} "
                f"the builder does not take; valid: {valid}"
            )
        if sizes and "n" not in valid:
            raise ValueError(
                f"system {name!r}: sizes need a builder taking "
                f"n; its options are {valid}"
            )
        CATALOGUE[name] = builder
        FACTS[name] = SystemFacts(
            heavy=heavy,
            sizes=sizes,
            variants=tuple(dict(v) for v in variants),
            oracle=oracle,
            benchmark=benchmark,
        )
        return builder

    return decorate


def system_facts(name: str) -> SystemFacts:
    """The facts registered with catalogue system ``name``.

    Raises
    ------
    ValueError
        For an unknown name, listing the valid ones.
    """
    try:
        return FACTS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown system {name!r}; valid names: {sorted(CATALOGUE)}"
        ) from None


def system_names() -> list[str]:
    return list(CATALOGUE)


def get_system(name: str, **options: Any) -> MechanicalSystem:
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
            f"unknown system {name!r}; valid names: {sorted(CATALOGUE)}"
        ) from None
    valid = [p for p in inspect.signature(builder).parameters]
    bad = [k for k in options if k not in valid]
    if bad:
        raise ValueError(
            f"system {name!r} takes no option(s) {bad}; valid options: {valid}"
        )
    return builder(**options)


def import_package_modules(
    package: str, path: Iterable[str], skip: Iterable[str] = ()
) -> None:
    """Import every public module of ``package`` (its ``__path__``) but
    ``skip``: how a registry package collects what its modules register on
    import, so that adding an entry is adding a module, nothing else to
    edit (this package's systems, the formulations)."""
    skip = set(skip)
    for mod in pkgutil.iter_modules(path):
        if not mod.name.startswith("_") and mod.name not in skip:
            importlib.import_module(f"{package}.{mod.name}")
