"""Formulation backends behind one contract.

>>> from eomcompare.formulations import FORMULATIONS, get_formulation
>>> "kane" in FORMULATIONS
True
"""

from eomcompare.numeric.model import NumericModel, SingularConfigurationError
from eomcompare.systems.catalogue import (
    import_package_modules as _import_package_modules,
)

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
    split_formulation_spec,
)

# Every module of this package registers its formulations on import.
_import_package_modules(__name__, __path__, skip=("base",))

from .regressor import base_parameters, inverse_dynamics_regressor  # noqa: E402

__all__ = [
    "FORMULATIONS",
    "Formulation",
    "EquationsOfMotion",
    "Derivation",
    "UnsupportedSystemError",
    "get_formulation",
    "split_formulation_spec",
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
    "inverse_dynamics_regressor",
    "base_parameters",
]
