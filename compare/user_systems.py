"""Systems from outside the catalogue, and builder options, for the CLI.

``python -m eomcompare run --systems mypackage.mymodule:builder`` (or
``path/to/file.py:builder``) imports the builder, registers it in
:data:`eomcompare.systems.CATALOGUE` under its own name and runs it like a catalogue
system; a module or file named without ``:builder`` contributes the systems
it registers with :func:`eomcompare.systems.register_system`.  ``--system-option
NAME:KEY=VALUE`` passes builder options (values read as Python literals,
otherwise as strings); several options of one system make one variant.
Worker processes are forked from the registering process, so they see the
registration; a dask cluster's workers need the module importable.

A user's module is the user's input: one that cannot be imported (a syntax
error, an exception or ``sys.exit`` at import) is a one-line error naming
its file and line, and a builder that does not return a
:class:`~eomcompare.systems.MechanicalSystem` (or calls ``sys.exit``) is an error
naming the builder (:func:`build_system`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import traceback
from pathlib import Path

from eomcompare.symbolic.text import key_value
from eomcompare.systems import CATALOGUE, MechanicalSystem, get_system, register_system

__all__ = [
    "resolve_systems",
    "parse_system_options",
    "build_system",
    "describe_builder",
    "BuilderError",
]


#: The import machinery's own files, left out of where an import failed.
_IMPORTLIB = Path(importlib.__file__).parent


class BuilderError(ValueError):
    """A system's builder gave no declaration (the message names it)."""


def _failed_import(target: str, exc: BaseException) -> ValueError:
    """One line naming where importing ``target`` failed: the file and line
    of a syntax error, else the line of the user's module (the first frame
    past the import machinery) the exception came from."""
    if isinstance(exc, SyntaxError) and exc.filename:
        where, what = f"{exc.filename}:{exc.lineno}", f"SyntaxError: {exc.msg}"
    else:
        frames = [
            f
            for f in traceback.extract_tb(exc.__traceback__)
            if not f.filename.startswith("<")
            and f.filename != __file__
            and Path(f.filename).parent != _IMPORTLIB
        ]
        where = f"{frames[0].filename}:{frames[0].lineno}" if frames else target
        what = (
            f"sys.exit({exc.code!r})"
            if isinstance(exc, SystemExit)
            else f"{type(exc).__name__}: {exc}"
        )
    return ValueError(f"cannot import {target!r} for --systems: {where}: {what}")


def _import(target: str):
    path = Path(target)
    if target.endswith(".py") or os.sep in target or path.is_file():
        if not path.is_file():
            raise ValueError(f"no such file {target!r} for --systems")
        name = "_eomcompare_user_" + path.stem
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            raise _failed_import(target, exc) from None
        return module
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        raise ValueError(f"cannot import {target!r} for --systems: {exc}") from None
    except (Exception, SystemExit) as exc:
        raise _failed_import(target, exc) from None


def describe_builder(name: str) -> str:
    """``"builder pendulum() of system 'pendulum' (in /path/mine.py)"``: what
    an error about a system's builder names."""
    builder = CATALOGUE[name]
    try:
        source = inspect.getsourcefile(builder)
    except TypeError:  # a builtin or a callable object: no source file
        source = None
    where = f" (in {source})" if source else ""
    qualname = getattr(builder, "__qualname__", type(builder).__qualname__)
    return f"builder {qualname}() of system {name!r}{where}"


def build_system(name: str, options=None) -> MechanicalSystem:
    """The system ``name`` built with builder ``options``
    (:func:`eomcompare.systems.get_system`), checked to be a declaration
    and validated (:meth:`~eomcompare.systems.MechanicalSystem.validate`).

    Raises
    ------
    BuilderError
        When the builder returns anything but a :class:`MechanicalSystem`,
        or calls ``sys.exit`` (which must not end the run).
    ValueError
        For an unknown name or option.
    """
    try:
        ms = get_system(name, **dict(options or {}))
    except SystemExit as exc:
        raise BuilderError(
            f"{describe_builder(name)} called sys.exit({exc.code!r})"
        ) from None
    if not isinstance(ms, MechanicalSystem):
        kind = type(ms)
        if kind.__name__ == MechanicalSystem.__name__:
            # The class of another copy of the package: the builder imported
            # it under a name other than eomcompare's (an old top-level
            # ``systems``, or a second checkout on the path).
            raise BuilderError(
                f"{describe_builder(name)} returned a MechanicalSystem of module "
                f"{kind.__module__!r}, not {MechanicalSystem.__module__!r}: import it "
                f"as `from eomcompare.systems import ...`"
            )
        raise BuilderError(
            f"{describe_builder(name)} returned {kind.__name__}: "
            f"a builder must return a MechanicalSystem"
        )
    # The numeric checks (consistent initial state, velocities against
    # positions): every system the harness compares passes them first.
    return ms.validate()


def resolve_systems(specs):
    """Catalogue names for ``specs``, importing and registering builders
    named as ``module:builder`` or ``file.py:builder`` (or modules and files
    that register systems themselves).

    Raises
    ------
    ValueError
        For a module or file that cannot be imported, a builder that does
        not exist or is not callable, or a module that registers nothing.
    """
    if not specs:
        return specs
    names = []
    for spec in specs:
        if (
            spec in CATALOGUE
            or spec == "all"
            or (":" not in spec and not spec.endswith(".py") and os.sep not in spec)
        ):
            names.append(spec)
            continue
        target, _, attr = (
            spec.partition(":") if not os.path.isfile(spec) else (spec, "", "")
        )
        before = set(CATALOGUE)
        module = _import(target)
        if not attr:
            added = [n for n in CATALOGUE if n not in before]
            if not added:
                raise ValueError(
                    f"{target!r} registers no system; name a builder as "
                    f"{target}:BUILDER"
                )
            names += added
            continue
        builder = getattr(module, attr, None)
        if not callable(builder):
            valid = sorted(
                n
                for n, v in vars(module).items()
                if callable(v) and not n.startswith("_")
            )
            raise ValueError(
                f"{target!r} has no builder {attr!r}; callables there: {valid}"
            )
        registered = [n for n, b in CATALOGUE.items() if b is builder]
        if not registered:
            register_system(attr)(builder)
        names.append(registered[0] if registered else attr)
    return names


def parse_system_options(items, defaults=None):
    """``["four_bar:coordinates=redundant", ...]`` as runner variants.

    Returns ``defaults`` (a mapping of system name -> list of option dicts)
    updated with one variant per system named in ``items``.

    Raises
    ------
    ValueError
        For an item not of the form ``NAME:KEY=VALUE``, an unknown system or
        an option its builder does not take (listing the valid ones).
    """
    variants = {k: list(v) for k, v in (defaults or {}).items()}
    chosen: dict[str, dict] = {}
    for item in items or ():
        name, _, rest = item.partition(":")
        try:
            key, value = key_value(rest)  # no ":" leaves rest empty: refused
        except ValueError:
            name = ""
        if not name:
            raise ValueError(f"--system-option takes NAME:KEY=VALUE, not {item!r}")
        if name not in CATALOGUE:
            raise ValueError(
                f"--system-option names unknown system "
                f"{name!r}; valid: {sorted(CATALOGUE)}"
            )
        valid = list(inspect.signature(CATALOGUE[name]).parameters)
        if key not in valid:
            raise ValueError(
                f"system {name!r} takes no option {key!r}; valid options: {valid}"
            )
        chosen.setdefault(name, {})[key] = value
    for name, opts in chosen.items():
        variants[name] = [opts]
    return variants
