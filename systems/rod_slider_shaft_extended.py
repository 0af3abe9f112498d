"""The rod with a slider on a rotating shaft, with its joint reactions
modelled as holonomic constraints on extra coordinates.

This is the catalogue's ``rod_slider_shaft`` (the same bodies, loads and
motion) in the form a multiplier formulation recovers constraint forces
from: each reaction the seed computes with an auxiliary speed (section b of
example 4, (2-155) to (2-157) and (2-175)) becomes a coordinate that the
joint holds at zero.  The multiplier of that constraint is then the
reaction.  It is not registered in the catalogue: it describes the same
motion as ``rod_slider_shaft`` and exists for constraint-force recovery.
"""

from __future__ import annotations

from .base import MechanicalSystem
from .rod_slider_shaft import declare_rod_slider_shaft

__all__ = ["rod_slider_shaft_extended"]


def rod_slider_shaft_extended() -> MechanicalSystem:
    """``rod_slider_shaft`` with four constraint coordinates.

    Besides ``q1`` (OP along the rod) and the shaft angle ``q2``:

    - ``z3``: translation of shaft, rod and slider along s1 (the bearing
      forbids it; its reaction is ``R1`` = R1(B->S), (2-155));
    - ``a4``: rotation of rod and slider relative to the shaft about s2
      through O (the shaft forbids it; ``M2`` = M2(S->R), (2-156));
    - ``z5``, ``z9``: translations of the slider relative to the rod along
      r3 and r2 (``R3``, ``R2`` = R3(R->P), R2(R->P), (2-157), (2-175)).

    Holonomic constraints ``z3 = a4 = z5 = z9 = 0``; speeds are the
    coordinate rates.  The declared :class:`~eomcompare.systems.ConstraintForce`
    objects name those reactions; a multiplier formulation recovers each
    one as the generalized constraint force of its coordinate, and Kane's
    method recovers them with auxiliary speeds as usual.  Parameters,
    initial state and the meaning of ``q1``, ``q2`` are those of
    ``rod_slider_shaft``.

    Examples
    --------
    >>> from eomcompare.systems.rod_slider_shaft_extended import rod_slider_shaft_extended
    >>> ms = rod_slider_shaft_extended()
    >>> ms.degrees_of_freedom, len(ms.holonomic_constraints)
    (2, 4)
    """
    return declare_rod_slider_shaft(
        "rod_slider_shaft_extended",
        rod_slider_shaft_extended.__doc__,
        reaction_coordinates=True,
    )
