"""The registry of numeric backends: ``eom.numeric(backend=...)``.

As scipy's ``solve_ivp`` names its methods, a backend is a name mapped to a
model class taking ``(eom, parameters, **options)``, a subclass of
:class:`eomcompare.numeric.model.NumericModel` implementing its evaluations: ``"lambdify"``
(:class:`eomcompare.numeric.model.LambdifyModel`, numpy code from sympy's lambdify,
needs no compiler) and ``"c"`` (:class:`eomcompare.numeric.compiled.CompiledModel`, C
compiled with the system compiler).  ``"auto"`` is ``"c"`` when it can be
built, else a warning and ``"lambdify"``.  A new backend is one more entry
in :data:`BACKENDS`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from .compiled import CompiledBackendError, CompiledModel
from .model import LambdifyModel, NumericModel

__all__ = ["BACKENDS", "numeric_model", "prepare_compiler"]

#: Backend name -> model class.
BACKENDS: dict[str, type[NumericModel]] = {
    "lambdify": LambdifyModel,
    "c": CompiledModel,
}


def numeric_model(
    eom: Any,
    parameters: Mapping[Any, float] | None = None,
    backend: str = "lambdify",
    **options: Any,
) -> NumericModel:
    """The numeric model of ``eom`` evaluated by ``backend``.

    Parameters
    ----------
    backend : {"lambdify", "c", "auto"}
        A name in :data:`BACKENDS`, or ``"auto"``: ``"c"`` when it can be
        built here, else a ``RuntimeWarning`` and ``"lambdify"``.
    **options
        Passed to the backend's model (the C backend takes ``compiler``,
        ``cflags``, ``cache_dir``; lambdify takes none).

    Raises
    ------
    ValueError
        For an unknown backend, naming the valid ones.
    numeric.compiled.CompiledBackendError
        With ``backend="c"`` when the C code cannot be built.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> eom = get_formulation("kane").derive("double_pendulum")
    >>> type(numeric_model(eom)).__name__
    'LambdifyModel'
    """
    if backend != "auto" and backend not in BACKENDS:
        raise ValueError(
            f"`backend` must be one of {list(BACKENDS) + ['auto']}, not {backend!r}"
        )
    if backend == "lambdify" and options:
        raise TypeError(f"the lambdify backend takes no options, not {sorted(options)}")
    if backend != "auto":
        return BACKENDS[backend](eom, parameters, **options)
    try:
        return CompiledModel(eom, parameters, **options)
    except CompiledBackendError as exc:
        warnings.warn(
            f"the compiled backend is not available, using lambdify: {exc}",
            RuntimeWarning,
            stacklevel=3,
        )
        return LambdifyModel(eom, parameters)


def prepare_compiler() -> None:
    """Find the compiler, probe its flags, make the C printer and load
    (building it when the cache has none) the extension that calls every
    library, as a process's first compiled model does: processes forked
    afterwards inherit them instead of each probing the compiler (a
    compiler run) and loading the extension again.  Raises as that model
    does."""
    from . import c_code, compiled

    c_code.prepare_printer()

    cffi = compiled._cffi()  # type: ignore[no-untyped-call]
    cc = compiled.find_compiler(None)
    flags = list(compiled.default_cflags(cc))
    with compiled._LOCK:
        directory = compiled._usable_cache_dir(compiled.compiled_cache_dir(None))
        compiled._call_module(cffi, cc, flags, directory)  # type: ignore[no-untyped-call]
        compiled._abi_ffi(cffi)  # type: ignore[no-untyped-call]


def compiled_unavailable() -> str | None:
    """Why ``backend="auto"`` falls back to lambdify on this machine (no
    cffi, no C compiler, no Python headers, an extension that does not
    build), or None when the compiled backend is available."""
    from .c_code import CompiledBackendError

    try:
        prepare_compiler()
    except CompiledBackendError as exc:
        return str(exc)
    return None
