"""Formulation backends behind one contract.

>>> from formulations import FORMULATIONS, get_formulation
>>> "kane" in FORMULATIONS
True
"""

# Every module of this package registers its formulations on import: a new
# backend is a new module, nothing else to edit.
import importlib as _importlib
import pkgutil as _pkgutil

from numeric.model import NumericModel, SingularConfigurationError

from .base import (
    FORMULATIONS,
    REFERENCE,
    Derivation,
    EquationsOfMotion,
    Formulation,
    UnsupportedSystemError,
    check_options,
    count_operations,
    formulation_names,
    get_formulation,
    peer_of,
    rate_form,
    register,
    speed_form,
)

for _mod in _pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_") and _mod.name not in ("base", "numeric"):
        _importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = [
    "FORMULATIONS",
    "Formulation",
    "EquationsOfMotion",
    "Derivation",
    "UnsupportedSystemError",
    "get_formulation",
    "register",
    "formulation_names",
    "count_operations",
    "speed_form",
    "rate_form",
    "NumericModel",
    "SingularConfigurationError",
    "REFERENCE",
    "peer_of",
    "check_options",
]
