"""Lagrange's equations in minimal coordinates: the approach Kolev's
modified Lagrange equations set out to improve on, kept as a formulation
class of its own (not registered: it is measured beside
``modified_lagrange`` by :func:`eomcompare.compare.kolev_costs.kolev_cost_table`,
the report's Kolev section).
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.calculus import jacobian, linear_split, substitute
from eomcompare.symbolic.frames import scale

from .base import Derivation, Formulation
from .errors import UnsupportedSystemError
from .modified_lagrange import (
    generalized_forces_in_rates,
    kinetic_energy_in_rates,
    lagrange_operators,
)

__all__ = ["LagrangeMinimalCoordinates"]

_t = me.dynamicsymbols._t


class LagrangeMinimalCoordinates(Formulation):
    """Lagrange's equations in minimal coordinates, the approach Kolev's
    paper sets out to improve on: the explicit solutions f_r and df_r/dt
    of the holonomic constraints are substituted into the velocities
    BEFORE T is formed (so they enter T squared), and the plain equations
    ``d/dt(dT/dq_j') - dT/dq_j = Q_j`` in the independent coordinates
    follow.  Measured beside ``modified_lagrange`` by
    :func:`kolev_cost_table`; not a registered formulation.

    It needs an explicit solution of every holonomic constraint, written
    in the independent coordinates and t, and refuses nonholonomic
    constraints (:class:`UnsupportedSystemError`).  The state is
    ``(q_ind, q_ind')``, as for ``modified_lagrange`` with explicit
    solutions.

    Examples
    --------
    >>> eom = LagrangeMinimalCoordinates().derive("crank_slider")
    >>> [str(q) for q in eom.unknowns]
    ['Derivative(phi(t), (t, 2))']
    """

    name = "lagrange_minimal_coordinates"
    summary = "Lagrange's equations with the explicit solutions substituted into T"
    handles_holonomic = True
    handles_nonholonomic = False
    handles_rheonomic = True
    needs_dependent_solutions = True
    needs_velocities_from_positions = True

    def check_supported(self, system) -> None:
        super().check_supported(system)
        sols = system.dependent_solutions
        for q in system.q_dep:
            others = set(me.find_dynamicsymbols(sm.sympify(sols[q])))
            if others & set(system.q_dep):
                raise UnsupportedSystemError(
                    f"{self.name}: the declared solution for {q} of "
                    f"{system.name!r} contains dependent coordinates; minimal "
                    f"coordinates need explicit solutions in the independent "
                    f"ones"
                )

    def _derive(self, ms, stage) -> Derivation:
        coords = list(ms.coordinates)
        elim = {r: sm.sympify(ms.dependent_solutions[r]) for r in ms.q_dep}
        ind = [q for q in coords if q not in elim]
        rates = {}
        for r, f in elim.items():
            rates[r.diff(_t)] = f.diff(_t)
            rates[r] = f
        with stage("energy_and_forces"):
            T = kinetic_energy_in_rates(ms, rates)
            Q = generalized_forces_in_rates(ms, ind, rates)
        with stage("lagrange_operator"):
            L = lagrange_operators(T, ind)
            E = sm.Matrix([L[q] - Qq for q, Qq in zip(ind, Q)])
        with stage("assembly"):
            unknowns = [q.diff(_t, 2) for q in ind]
            split = linear_split(E, unknowns)
            if split is None:
                M = jacobian(E, unknowns)
                rest = substitute(E, {a: 0 for a in unknowns})
            else:
                M, rest = split
            forcing = scale(-1, sm.Matrix(len(rest), 1, rest))
        states = tuple(ind) + tuple(q.diff(_t) for q in ind)
        return Derivation(
            states=states,
            unknowns=tuple(unknowns),
            mass_matrix=M,
            forcing=forcing,
            state_rates=sm.Matrix([q.diff(_t) for q in ind] + unknowns),
            accelerations=sm.Matrix([elim.get(q, q).diff(_t, 2) for q in coords]),
            state_map=sm.Matrix(list(states)),
            coordinate_map=sm.Matrix(
                [elim.get(q, q) for q in coords]
                + [elim.get(q, q).diff(_t) for q in coords]
            ),
            extras={
                "kinetic_energy": T,
                "generalized_forces": sm.ImmutableMatrix(Q),
                "constraint_forces_unsupported": (
                    "Lagrange's equations in minimal coordinates have "
                    "neither multipliers nor auxiliary speeds"
                ),
            },
        )
