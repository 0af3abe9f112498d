"""Inputs given as functions of time, for linearization.

A user writes an input as sympy does, ``F = dynamicsymbols('F')``, and gives
its motion in ``specified`` (``{F: sin(t)}``).  To linearize with respect to
it (the ``r`` vector of sympy's linearizer), the equations are derived once
more with F(t) replaced by a constant input symbol ``F`` valued at the
operating point's time; ``B`` is then the derivative with respect to that
constant, exactly as for inputs that are constants of the declaration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.text import display_name
from eomcompare.symbolic.types import Symbol

if TYPE_CHECKING:
    from eomcompare.systems.base import MechanicalSystem

    from .result import EquationsOfMotion

__all__ = ["specified_inputs"]

t = me.dynamicsymbols._t


def specified_inputs(
    eom: EquationsOfMotion,
    inputs: Sequence[str | Symbol] | None,
    t0: float,
    derive: Callable[[MechanicalSystem], EquationsOfMotion],
    parameters: Mapping[Any, float] | None = None,
) -> tuple[EquationsOfMotion, list[Any]]:
    """Equations in which the specified inputs among ``inputs`` are constants.

    Parameters
    ----------
    eom : EquationsOfMotion
    inputs : sequence
        Input names or symbols; those naming a function of time in
        ``eom.system.specified`` (``F`` or ``"F"``) are replaced.
    t0 : float
        Time of the operating point: the constant's default value is the
        specified function's value there.
    derive : callable
        Derives equations for a system with the formulation (and options)
        that derived ``eom``.
    parameters : mapping, optional
        Parameter values (default: the declaration's) at which the
        specified functions are evaluated: ``F0 * cos(w * t)`` holds
        parameters as well as time.

    Returns
    -------
    (EquationsOfMotion, list)
        The equations to linearize (``eom`` itself when no input is a
        function of time) and the inputs with each function of time
        replaced by its constant symbol.

    Raises
    ------
    ValueError
        When an input enters the equations through its time derivative (a
        prescribed motion, not an input).
    """
    ms = eom.system
    by_name = {display_name(k): k for k in ms.specified}
    found = {}
    for r in inputs or ():
        if r in ms.parameters or str(r) in {str(p) for p in ms.parameters}:
            continue
        key = r if r in ms.specified else by_name.get(display_name(r))
        if key is not None:
            found[key] = sm.Symbol(display_name(key))
    if not found:
        return eom, list(inputs or ())
    for f in found:
        d = f.diff(t)
        if any(sm.sympify(x).has(d) for x in list(eom.mass_matrix) + list(eom.forcing)):
            raise ValueError(
                f"input {display_name(f)} enters the equations of {ms.name!r} "
                f"through its time derivative: it is a prescribed motion, "
                f"not an input"
            )
    params = dict(ms.parameters)
    values = dict(zip(ms.parameters, ms.states.parameter_vector(parameters)))
    specified = dict(ms.specified)
    for f, s in found.items():
        value = ms.substitute_specified(f).subs(t, t0).xreplace(values)
        params[s] = float(value)
        specified[f] = s
    ms_in = ms.replace(parameters=params, specified=specified, energy_conserved=False)
    eom_in = derive(ms_in)
    return eom_in, [
        found.get(r, found.get(by_name.get(display_name(r)), r)) for r in inputs
    ]
