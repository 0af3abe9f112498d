"""Auxiliary speeds, as ``System.add_auxiliary_speeds`` declares them.

An auxiliary speed (Kane's "auxiliary generalized speed") gives a point or
a body a velocity that the constraints forbid: a contact point allowed to
slip (``P.set_vel(N, ua1*A.x + ua2*A.y + ua3*A.z)``), or a velocity
constraint relaxed by it.  It is zero in every motion; it exists only so
that the constraint force which keeps it zero can be computed.  Such a
declaration asks for one constraint force per auxiliary speed.

In the declaration the auxiliary speeds are therefore zero everywhere a
motion is computed (:meth:`MechanicalSystem.substitute_specified` replaces
them and their rates by 0).  The forces that keep them zero are either

* written in the loads with constants that have no value, as sympy's test
  suite does (``Force(P, Fx*A.x + Fy*A.y + Fz*A.z)`` with ``Fx, Fy, Fz``
  unknown): as many such constants as auxiliary speeds, acting only where
  nothing but the auxiliary speeds moves (so they cannot enter the equations
  of motion).  They are the *reaction unknowns*, solved from the auxiliary
  equations; or
* not written at all: then each result is the generalized constraint force
  of its auxiliary speed (what the constraint contributes to the auxiliary
  speed's equation).

The equations themselves are formed by each formulation
(:mod:`formulations.auxiliary`).
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

__all__ = ["auxiliary_speeds", "reaction_unknowns"]

t = me.dynamicsymbols._t


def auxiliary_speeds(system) -> tuple:
    """The auxiliary speeds of a ``System`` (empty for other objects)."""
    return tuple(getattr(system, "u_aux", ()) or ())


def _vector_symbols(vec) -> set:
    out = set()
    if vec != 0:
        for m, _ in vec.args:
            out |= sm.Matrix(m).free_symbols
    return out


def reaction_unknowns(ms_name, system, loads, speeds, aux, missing) -> tuple:
    """The constants without value that are auxiliary-speed reactions.

    Parameters
    ----------
    ms_name : str
        Name of the system, for messages.
    system : sympy.physics.mechanics.System
    loads : sequence of loads (actuators' included)
    speeds : sequence
        Every generalized speed (independent and dependent).
    aux : sequence
        The auxiliary speeds.
    missing : set
        Constants of the declaration without a value.

    Returns
    -------
    tuple
        The reaction unknowns, sorted by name; empty when ``missing`` holds
        anything else or their number differs from that of ``aux`` (the
        missing values are then reported as such).

    Raises
    ------
    DeclarationError
        When such constants act at a point (or on a frame) that moves with a
        generalized speed: they would enter the equations of motion.
    """
    from .errors import DeclarationError

    if not aux or not missing:
        return ()
    N = system.frame
    in_loads = set()
    for load in loads:
        in_loads |= _vector_symbols(load.vector) & missing
    if in_loads != set(missing) or len(in_loads) != len(aux):
        return ()
    for load in loads:
        names = _vector_symbols(load.vector) & in_loads
        if not names:
            continue
        if isinstance(load, me.Force):
            vel, where = load.point.vel(N), f"point {load.point.name}"
        else:
            vel, where = load.frame.ang_vel_in(N), f"frame {load.frame.name}"
        moving = [
            u for u in speeds if vel != 0 and vel.diff(u, N, var_in_dcm=False) != 0
        ]
        if moving:
            raise DeclarationError(
                f"system {ms_name!r}: the constants {sorted(map(str, names))} "
                f"have no value and act at {where}, which moves with the "
                f"speeds {moving}: as reactions of the auxiliary speeds "
                f"{list(aux)} they may act only where nothing but the "
                f"auxiliary speeds moves; give them values otherwise"
            )
    return tuple(sorted(in_loads, key=str))
