"""Names for the types the public API passes around.

sympy ships no type information, so every sympy object is ``Any`` to a
type checker.  The aliases below still say *which* sympy object a signature
expects (an expression, a symbol, a matrix, a frame), so that the hints
document the API even where the checker cannot verify them; numbers are
typed precisely with numpy's own annotations.

Examples
--------
>>> from eomcompare.symbolic.types import FloatArray
>>> import numpy as np
>>> x: FloatArray = np.zeros(3)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Expr",
    "Symbol",
    "Matrix",
    "ReferenceFrame",
    "Point",
    "Dyadic",
    "Vector",
    "FloatArray",
    "ArrayLike",
    "State",
    "ParameterValues",
]

#: A sympy expression (``sympy.Expr``), possibly containing functions of time.
Expr: TypeAlias = Any
#: A sympy symbol or a function of time (``dynamicsymbols``).
Symbol: TypeAlias = Any
#: A sympy matrix (``sympy.Matrix``, mutable or immutable).
Matrix: TypeAlias = Any
#: A ``sympy.physics.vector.ReferenceFrame``.
ReferenceFrame: TypeAlias = Any
#: A ``sympy.physics.vector.Point``.
Point: TypeAlias = Any
#: A ``sympy.physics.vector.Dyadic`` (an inertia).
Dyadic: TypeAlias = Any
#: A ``sympy.physics.vector.Vector``.
Vector: TypeAlias = Any
#: An array of floats.
FloatArray: TypeAlias = NDArray[np.float64]
#: A state ``(t, q, q')``: the time, all coordinates and their rates.
State: TypeAlias = tuple[float, FloatArray, FloatArray]
#: Parameter values by symbol (or by the symbol's name).
ParameterValues: TypeAlias = Mapping[Any, float]
