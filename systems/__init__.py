"""The shared catalogue of mechanical systems.

Every system is declared once, in the vocabulary of
``sympy.physics.mechanics``, and read by every formulation.

>>> from systems import CATALOGUE, get_system
>>> ms = get_system("n_link_pendulum", n=2)
>>> ms.coordinates
(q1(t), q2(t))
"""

# Every module of this package registers its systems on import: a new
# system is a new module, nothing else to edit.
import importlib as _importlib
import pkgutil as _pkgutil

from .base import (
    ConstraintError,
    ConstraintForce,
    DeclarationError,
    Kinematics,
    MechanicalSystem,
)
from .catalogue import (
    CATALOGUE,
    SystemFacts,
    get_system,
    register_system,
    system_facts,
    system_names,
)
from .urdf import from_urdf

for _mod in _pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_") and _mod.name not in ("base", "catalogue"):
        _importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = [
    "MechanicalSystem",
    "ConstraintForce",
    "DeclarationError",
    "ConstraintError",
    "Kinematics",
    "CATALOGUE",
    "get_system",
    "register_system",
    "system_names",
    "system_facts",
    "SystemFacts",
    "from_urdf",
]
