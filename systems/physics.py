"""Physical validity of a body's mass and inertia.

One check for every way a body is declared: :class:`MechanicalSystem`
applies it to each body whose mass and inertia are numbers (given or by
their parameter values), :func:`eomcompare.systems.from_urdf` to each link as the
file states it, and an importer of another format calls it the same way.
A negative mass or an inertia no mass distribution has (a negative
principal moment, or one larger than the sum of the other two) gives
equations of motion that integrate without complaint and mean nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import DeclarationError

__all__ = ["check_mass_properties"]

#: Relative tolerance of the inertia checks, against the largest principal
#: moment: rounding in a file (or in merging links) is not a violation.
RTOL = 1e-9


def check_mass_properties(owner: str, mass: Any, inertia: Any = None) -> None:
    """Raise :class:`DeclarationError` naming ``owner`` unless the mass and
    inertia are those of a real body.

    Parameters
    ----------
    owner : str
        What the values belong to, as the message names it, e.g.
        ``"link 'forearm'"``.
    mass : float
        Finite and not negative.
    inertia : array_like (3, 3), optional
        Finite; its principal moments (eigenvalues of the symmetric part)
        not negative and each at most the sum of the other two (the
        triangle inequality every mass distribution satisfies), within
        :data:`RTOL` of the largest.  About the mass centre or any other
        point: both hold for every point.  A single nonzero principal
        moment is accepted: it is how a body that turns about one axis only
        (the links of a planar model, ``inertia(B, 0, 0, Izz)``) is
        declared, by the one moment that enters its equations.

    Examples
    --------
    >>> check_mass_properties("link 'a'", 1.0, np.diag([0.1, 0.1, 0.2]))
    >>> check_mass_properties("link 'a'", 1.0, np.diag([0.1, 0.1, 0.3]))
    Traceback (most recent call last):
    ...
    systems.errors.DeclarationError: link 'a': the principal moments of inertia \
[0.1, 0.1, 0.3] violate the triangle inequality (0.3 > 0.1 + 0.1): no mass \
distribution has them
    """
    m = float(mass)
    if not np.isfinite(m):
        raise DeclarationError(f"{owner}: mass {m} is not a finite number")
    if m < 0:
        raise DeclarationError(f"{owner}: mass {m:g} is negative")
    if inertia is None:
        return
    I = np.asarray(inertia, dtype=float)
    if I.shape != (3, 3):
        raise DeclarationError(f"{owner}: the inertia must be 3x3, not {I.shape}")
    if not np.all(np.isfinite(I)):
        raise DeclarationError(
            f"{owner}: the inertia {I.tolist()} holds a value that is not a "
            f"finite number"
        )
    moments = np.linalg.eigvalsh((I + I.T) / 2)
    tol = RTOL * max(float(np.max(np.abs(moments))), 1e-300)
    shown = [float(f"{x:.6g}") for x in moments]
    if moments[0] < -tol:
        raise DeclarationError(
            f"{owner}: the inertia is not positive semi-definite (principal "
            f"moments {shown})"
        )
    a, b, c = moments
    if c > a + b + tol and b > tol:
        raise DeclarationError(
            f"{owner}: the principal moments of inertia {shown} violate the "
            f"triangle inequality ({shown[2]:g} > {shown[0]:g} + {shown[1]:g}): "
            f"no mass distribution has them"
        )
