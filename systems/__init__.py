"""The shared catalogue of mechanical systems.

Every system is declared once, in the vocabulary of
``sympy.physics.mechanics``, and read by every formulation.

>>> from eomcompare.systems import CATALOGUE, get_system
>>> ms = get_system("n_link_pendulum", n=2)
>>> ms.coordinates
(q1(t), q2(t))
"""

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
    import_package_modules,
    register_system,
    system_facts,
    system_names,
)
from .mjcf import from_mjcf
from .urdf import from_urdf

# Every module of this package registers its systems on import.
import_package_modules(__name__, __path__, skip=("base", "catalogue"))

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
    "from_mjcf",
]
