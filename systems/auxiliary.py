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
  unknown), or with functions of time that are neither coordinates, speeds
  nor specified, as PyDy's examples and sympy's ``test_box_on_ground`` do
  (``CF = dynamicsymbols('Rx Ry Rz')``): as many of them as auxiliary
  speeds.  They are the *reaction unknowns*, solved from the auxiliary
  equations.  Where they act only where nothing but the auxiliary speeds
  moves, they cannot enter the equations of motion; where they also act
  where a generalized speed moves (a friction force proportional to the
  normal force, ``-mu*N*x``), they enter them, and each formulation
  replaces them by their solution (:func:`eomcompare.formulations.auxiliary.
  eliminate_reactions`); or
* not written at all: then each result is the generalized constraint force
  of its auxiliary speed (what the constraint contributes to the auxiliary
  speed's equation).

The equations themselves are formed by each formulation
(:mod:`eomcompare.formulations.auxiliary`).
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

__all__ = [
    "auxiliary_speeds",
    "reaction_unknowns",
    "reactions_in_motion",
    "unknown_functions",
]

t = me.dynamicsymbols._t


def auxiliary_speeds(system) -> tuple:
    """The auxiliary speeds of a ``System`` (empty for other objects)."""
    return tuple(getattr(system, "u_aux", ()) or ())


def _vector_symbols(vec) -> set:
    """Constants and functions of time in a vector's measure numbers."""
    out = set()
    if vec != 0:
        for m, _ in vec.args:
            m = sm.Matrix(m)
            out |= m.free_symbols | set(me.find_dynamicsymbols(m))
    return out


def unknown_functions(loads, known) -> set:
    """The functions of time in the loads that are not in ``known``
    (coordinates, speeds, specified, auxiliary speeds): candidates for
    reaction unknowns written as ``dynamicsymbols``."""
    out = set()
    for load in loads:
        if load.vector == 0:
            continue
        for m, _ in load.vector.args:
            for d in me.find_dynamicsymbols(sm.Matrix(m)):
                if not isinstance(d, sm.Derivative) and d not in known:
                    out.add(d)
    return out


def reaction_unknowns(ms_name, system, loads, speeds, aux, missing) -> tuple:
    """The unknowns without value that are auxiliary-speed reactions.

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
        Constants of the declaration without a value, and functions of time
        in the loads that are neither coordinates, speeds nor specified
        (:func:`unknown_functions`).

    Returns
    -------
    tuple
        The reaction unknowns, sorted by name; empty when ``missing`` holds
        anything else or their number differs from that of ``aux`` (the
        missing values are then reported as such).

    Raises
    ------
    DeclarationError
        When such an unknown acts only where a generalized speed moves and
        nowhere the auxiliary speeds do: no auxiliary equation holds it.
    """
    from .errors import DeclarationError

    if not aux or not missing:
        return ()
    in_loads = set()
    for load in loads:
        in_loads |= _vector_symbols(load.vector) & missing
    if in_loads != set(missing) or len(in_loads) != len(aux):
        return ()
    held = set()
    for load in loads:
        names = _vector_symbols(load.vector) & in_loads
        if names and _moving(system.frame, load, aux):
            held |= names
    if held != in_loads:
        raise DeclarationError(
            f"system {ms_name!r}: {sorted(map(str, in_loads - held))} have no "
            f"value and act nowhere the auxiliary speeds {list(aux)} move: "
            f"no auxiliary equation determines them; give them values (or "
            f"declare them specified)"
        )
    return tuple(sorted(in_loads, key=str))


def reactions_in_motion(system, loads, speeds, reactions) -> tuple:
    """The reaction unknowns that enter the equations of motion: those in a
    load acting at a point (or on a frame) that moves with a generalized
    speed (friction proportional to a normal force)."""
    out = set()
    for load in loads:
        names = _vector_symbols(load.vector) & set(reactions)
        if names and _moving(system.frame, load, speeds):
            out |= names
    return tuple(sorted(out, key=str))


def _moving(N, load, speeds) -> list:
    """The ``speeds`` that move the point (or frame) a load acts on."""
    if isinstance(load, me.Force):
        vel = load.point.vel(N)
    else:
        vel = load.frame.ang_vel_in(N)
    return [u for u in speeds if vel != 0 and vel.diff(u, N, var_in_dcm=False) != 0]
