"""Kolev's modified Lagrange equations of the second kind.

Reference: P. Kolev, "Modified equations of Lagrange of II order"
(``shared/seeds/kolev_modified_lagrange_bg.txt``), eqs (2.14)-(2.21).
To our knowledge no other public software implements the method; this
module is written as its reference implementation.

The method
----------
A holonomic system with k degrees of freedom is described by n > k
coordinates q_1..q_n tied by s = n - k holonomic constraints (2.14).  Solve
the constraints for s dependent coordinates (2.16),

    q_r = f_r(q_independent)                     (r = 1..s),

so that their variations are ``dq_r = sum_j df_r/dq_j dq_j`` (2.17).  The
kinetic energy T is written in ALL n coordinates and their rates, and so
are the generalized forces Q_1..Q_n.  Substituting (2.17) into the general
equation of dynamics (2.18) gives, for each independent coordinate q_j
(2.19), (2.20), (2.21)::

    d/dt(dT/dq_j') - dT/dq_j = Q_j + sum_r (Q_r + Phi_r) df_r/dq_j,
    Phi_r = -(d/dt(dT/dq_r') - dT/dq_r),

k equations without multipliers; only then are q_r, q_r', q_r'' replaced by
f_r and its first and second time derivatives.  The point of the method is
that the dependent coordinates never enter T squared: T is differentiated
as written in all coordinates, and f_r enters only linearly, through
df_r/dq_j and the final substitution.

Writing ``E_i = d/dt(dT/dq_i') - dT/dq_i - Q_i`` for every coordinate,
(2.20) reads ``E_j + sum_r E_r df_r/dq_j = 0``, i.e. ``G^T E = 0`` with the
n x k matrix ``G = d q' / d q_ind'`` (identity rows for the independent
coordinates, ``df_r/dq_j`` for the dependent ones).  The method covers
three cases (``docs/theory/modified_lagrange.rst`` derives them):

1. **Explicit dependent coordinates** (the paper's case): every
   dependent coordinate has ``dependent_solutions`` ``{q_r: f_r(t,
   q_ind)}`` and there are no nonholonomic constraints.  The class calls
   :func:`modified_lagrange_equations`, (2.20), (2.21) as printed; the
   state is ``(q_ind, q_ind')``.  A system without constraints is the case
   s = 0 (Lagrange's equations).  Elsewhere the class evaluates the same
   equations as ``G^T E = 0``, G from the coefficients below.
2. **Implicit dependent coordinates**: holonomic constraints
   ``Phi(t, q) = 0`` without explicit solutions (or ``dependent=
   "implicit"``).  The implicit function theorem gives
   ``df/dq_ind = -(dPhi/dq_dep)^-1 dPhi/dq_ind`` and
   ``q_dep' = df/dq_ind q_ind' - (dPhi/dq_dep)^-1 dPhi/dt``; the dependent
   coordinates STAY in the state ``(q, q_ind')``, kept on the constraint
   manifold by a consistent starting state (``ms.states.random_state``,
   ``ms.states.consistent_initial_state``) up to the integrator's drift.
3. **Nonholonomic constraints** (Maggi's form): ``B(t, q) q' + b = 0``
   solved for as many dependent rates, ``q_D' = C q_I' + c``, and
   ``E_I + C^T E_D = 0``.  The dependent rates: the declaration's
   dependent coordinates first, then coordinates whose rates appear in
   its dependent speeds (then the others, from the last backwards),
   checked numerically to give an invertible ``B_D`` at the declared
   initial state and random consistent states; velocity constraints that
   are not independent there are refused (:class:`UnsupportedSystemError`).

Choices
-------
* T from the declared bodies, ``1/2 m v.v + 1/2 w.I.w`` (central inertia);
  the declaration's speeds are replaced by their expressions in (t, q, q')
  through ``ms.kinematics.u_of_qdot``.
* Every load is a generalized force, ``Q_i = sum_P F_P . dv_P/dq_i' +
  sum_B M_B . dw_B/dq_i'`` (partial velocities of the load points, angular
  velocities of the loaded frames, with respect to the coordinate rates);
  ``potential_energy`` is not used, because the loads already hold every
  force (gravity and springs included).
* Explicit time and prescribed functions of time stay in the equations
  (rheonomic systems and constraints, time-dependent f_r).
* No simplification, except the determinant of a small block of
  dependent rates (up to 3 x 3), inverted as ``adj / det`` (elimination
  would divide by an entry that vanishes where the block does not: the
  wheelbarrow's ``sin(theta)``, determinant -1).  Larger blocks are
  eliminated with pivots chosen where they are largest at sample states.
* Constraint forces are not recovered (the method has no multipliers).

Derivation contract
-------------------
q_keep are the coordinates not eliminated by an explicit solution (all of
them in the implicit form), q_I those with independent rates, q_D those
whose rates the velocity constraints determine, ``q' = G q_I' + g``.

``states`` ``(q_keep, q_I')``; with the dependent rates kept (below)
``(q_keep, q_keep')``.  ``unknowns`` ``q_I''``, k equations without
multipliers; with the dependent rates kept ``q_keep''`` (the k equations
and the differentiated velocity constraints).  ``state_rates``
``q_keep' = G q_I' + g``, ``q_I''``.  ``accelerations`` q'' of all n
coordinates, ``d/dt (G q_I' + g)`` (``d^2 f_r/dt^2`` for explicit
solutions) in (t, states, unknowns).  ``state_map``, ``coordinate_map``:
the states from (q, q'), and (q, q') from the states (f_r for eliminated
coordinates, ``G q_I' + g`` for the rates).

Large blocks of dependent rates (option ``dependent_rates``): with more
than three, the symbolic solution of the constraint block and its time
derivative grow without bound (the Whipple bicycle: millions of
operations), so by default the dependent rates then stay in the state,
their accelerations unknown, closed by the velocity constraints
differentiated once; the k equations ``G^T E = 0`` are unchanged.

Extras published: ``dependent_coordinates`` (``"explicit"``,
``"implicit"`` or ``"none"``), ``dependent_rates_eliminated``,
``independent_rates`` (q_I'), ``dependent_rates`` (q_D', not counting
eliminated coordinates), ``rate_coefficients`` (G, in t and the states),
``kinetic_energy`` (T in t, q, q' as differentiated), ``generalized_forces``
(Q, one per coordinate of T).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.calculus import (
    directional_derivative,
    jacobian,
    lagrange_terms,
    linear_split,
    substitute,
    symmetric_from_lower,
    time_derivative,
)
from eomcompare.symbolic.frames import FrameAlgebra, scale
from eomcompare.symbolic.frames import generalized_forces as _generalized_forces
from eomcompare.symbolic.frames import kinetic_energy as _kinetic_energy
from eomcompare.symbolic.linsolve import ADJUGATE_MAX, solve_linear

from .base import (
    Derivation,
    Formulation,
    UnsupportedSystemError,
    register,
    speed_form,
)
from .redundant_coordinates import projected_equations, speeds_in_rates

__all__ = [
    "ModifiedLagrange",
    "modified_lagrange_equations",
    "lagrange_operators",
    "kinetic_energy_in_rates",
    "generalized_forces_in_rates",
    "explicit_solutions",
]

t = me.dynamicsymbols._t

_DEPENDENT = ("auto", "explicit", "implicit")
_DEPENDENT_RATES = ("auto", "eliminate", "keep")


def _d(x, n=1):
    return x.diff(t, n)


def _rates(expr, rates):
    """``rates`` applied to a scalar or matrix (nothing when empty)."""
    return expr.xreplace(dict(rates)) if rates else expr


# ----------------------------------------------------------------------
# The method in the paper's own terms
# ----------------------------------------------------------------------
def modified_lagrange_equations(
    kinetic_energy,
    coordinates: Sequence,
    generalized_forces: Mapping,
    dependent_solutions: Mapping,
) -> list:
    """Kolev's modified Lagrange equations (2.20), (2.21), one per
    independent coordinate, as expressions equal to zero.

    For each independent coordinate q_j the expression is

        d/dt(dT/dq_j') - dT/dq_j - Q_j - sum_r (Q_r + Phi_r) df_r/dq_j,
        Phi_r = -(d/dt(dT/dq_r') - dT/dq_r),

    with q_r, q_r', q_r'' then replaced by f_r and its time derivatives.

    Parameters
    ----------
    kinetic_energy : sympy expression
        T in ALL coordinates (functions of time) and their first derivatives.
    coordinates : sequence of dynamicsymbols
        All n coordinates, dependent ones included, in any order.
    generalized_forces : mapping
        ``{q_i: Q_i}`` for every coordinate (missing ones count as zero).
    dependent_solutions : mapping
        ``{q_r: f_r}`` with f_r in the independent coordinates (and t).

    Returns
    -------
    list
        One expression per independent coordinate (``coordinates`` order,
        dependent ones skipped); the equations are ``expression = 0``.

    Examples
    --------
    A particle on the line y = 2 x under gravity -y, with x independent:

    >>> import sympy as sm, sympy.physics.mechanics as me
    >>> x, y = me.dynamicsymbols("x y")
    >>> m, g = sm.symbols("m g")
    >>> T = m * (x.diff()**2 + y.diff()**2) / 2
    >>> eq, = modified_lagrange_equations(T, [x, y], {y: -m * g}, {y: 2 * x})
    >>> sm.simplify(eq - (5 * m * x.diff(me.dynamicsymbols._t, 2) + 2 * m * g))
    0
    """
    coordinates = list(coordinates)
    unknown = [q for q in dependent_solutions if q not in coordinates]
    if unknown:
        raise ValueError(
            f"dependent_solutions names {unknown}, which are not among the "
            f"coordinates {coordinates}"
        )
    dep = [q for q in coordinates if q in dependent_solutions]
    ind = [q for q in coordinates if q not in dependent_solutions]
    T = sm.sympify(kinetic_energy)
    Q = {q: sm.sympify(generalized_forces.get(q, 0)) for q in coordinates}
    f = {r: sm.sympify(dependent_solutions[r]) for r in dep}

    # d/dt(dT/dq_i') - dT/dq_i for EVERY coordinate, T as written.
    L = lagrange_operators(T, coordinates)
    # (2.21)
    Phi = {r: -L[r] for r in dep}
    # q_r, q_r', q_r'' -> f_r and its derivatives, applied after differentiating.
    sub = {}
    for r in dep:
        sub[_d(r, 2)] = _d(f[r], 2)
        sub[_d(r)] = _d(f[r])
        sub[r] = f[r]
    out = []
    for j in ind:
        # (2.20) with its right-hand side moved to the left.
        lhs = L[j] - Q[j]
        for r in dep:
            lhs += -(Q[r] + Phi[r]) * f[r].diff(j)
        # (xreplace walks every path of the tree even with nothing to
        # replace: the equations of a tree of bodies have none)
        out.append(lhs.xreplace(sub) if sub else lhs)
    return out


def lagrange_operators(kinetic_energy, coordinates: Sequence) -> dict:
    """``{q_i: d/dt(dT/dq_i') - dT/dq_i}`` for each coordinate.

    The derivatives are those of ``expr.diff``, each shared subtree of T
    differentiated with respect to time once for all coordinates.

    Examples
    --------
    >>> import sympy as sm, sympy.physics.mechanics as me
    >>> x = me.dynamicsymbols("x")
    >>> m, k = sm.symbols("m k")
    >>> lagrange_operators(m * x.diff()**2 / 2 - k * x**2 / 2, [x])[x]
    k*x(t) + m*Derivative(x(t), (t, 2))
    """
    T = sm.sympify(kinetic_energy)
    memo: dict = {}
    out = {}
    for q in coordinates:
        p = directional_derivative(T, {_d(q): sm.S.One})
        out[q] = time_derivative(p, t, memo) - directional_derivative(T, {q: sm.S.One})
    return out


def _lagrange_split(T, coordinates, Q):
    """``(M, E0)`` of Lagrange's equations ``E = M q'' + E0``,
    ``E_i = d/dt(dT/dq_i') - dT/dq_i - Q_i``, for a T free of explicit
    time: M the coefficients of q'' (those of q' in dT/dq'), E0 with the
    time derivative taken along q only (q' held, q'' = 0): the equations
    of :func:`lagrange_operators` split by :func:`linear_split`, without
    forming the q'' terms.  dT/dq' and dT/dq come from one backward pass
    over T (:func:`~eomcompare.symbolic.calculus.lagrange_terms`), so the
    expressions equal, but are not term for term, those of
    :func:`lagrange_operators`."""
    _, M, dTdq, dp = lagrange_terms(T, coordinates, [_d(q) for q in coordinates])
    return M, [d - g - sm.sympify(Qq) for d, g, Qq in zip(dp, dTdq, Q)]


# ----------------------------------------------------------------------
# T and Q of a declaration, in coordinate rates
# ----------------------------------------------------------------------
def kinetic_energy_in_rates(ms, rates: Mapping | None = None):
    """Kinetic energy of the declared bodies in (t, q, q').

    Parameters
    ----------
    ms : MechanicalSystem
    rates : mapping, optional
        Extra replacements applied to the velocities after the speeds are
        converted (e.g. ``{q_r: f_r, q_r': df_r/dt}`` to form T in minimal
        coordinates).

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> T = kinetic_energy_in_rates(get_system("double_pendulum"))
    >>> sorted(str(s) for s in T.free_symbols)
    ['l', 'm', 't']
    """
    u_map = speeds_in_rates(ms)
    T = _kinetic_energy(ms.bodies, ms.frame, FrameAlgebra(), [u_map, rates or {}])
    return _rates(T, rates)


def generalized_forces_in_rates(
    ms, coordinates: Sequence, rates: Mapping | None = None
) -> sm.Matrix:
    """Generalized forces of the declared loads for ``coordinates``.

    ``Q_i = sum_P F_P . dv_P/dq_i' + sum_B M_B . dw_B/dq_i'`` with the load
    points' velocities and the loaded frames' angular velocities written in
    (t, q, q') (then ``rates`` applied, as in
    :func:`kinetic_energy_in_rates`).  Speeds inside the load vectors are
    converted too.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("double_pendulum")
    >>> generalized_forces_in_rates(ms, ms.coordinates).shape
    (2, 1)
    """
    u_map = speeds_in_rates(ms)
    # ``rates`` acts on the measure numbers before the differentiation and
    # on the whole result (direction cosines of eliminated coordinates).
    Q = _generalized_forces(
        ms.loads,
        ms.frame,
        FrameAlgebra(),
        [_d(q) for q in coordinates],
        [u_map, rates or {}],
    )
    return _rates(Q, rates)


# ----------------------------------------------------------------------
# The formulation
# ----------------------------------------------------------------------
def explicit_solutions(ms):
    """The declared f_r when every dependent coordinate has one written in
    the independent coordinates and t only; otherwise None (and why)."""
    q_dep = ms.q_dep
    if not q_dep:
        return {}, ""
    sols = ms.dependent_solutions
    missing = [q for q in q_dep if q not in sols]
    if missing:
        return None, f"no explicit solution is declared for {missing}"
    for q in q_dep:
        others = set(me.find_dynamicsymbols(sm.sympify(sols[q]))) & set(q_dep)
        if others:
            return None, (
                f"the declared solution for {q} contains the "
                f"dependent coordinates {sorted(map(str, others))}"
            )
    return {q: sm.sympify(sols[q]) for q in q_dep}, ""


@dataclasses.dataclass
class _Reduction:
    """What the constraints make of the coordinates, (2.16), (2.17).

    ``coords``: all n coordinates; ``elim``: the explicit solutions used,
    ``{q_r: f_r}`` (2.16); ``keep``: the other coordinates, of which
    ``ind`` (q_I) have independent rates and ``dep_rates`` rates the
    velocity constraints ``rows = 0`` determine (replaced by their
    solution where ``eliminate``); ``rate``, ``acc``: every coordinate's
    rate and acceleration in (t, states, unknowns); ``G = dq'/dq_I'``.
    """

    coords: list
    elim: dict
    keep: list
    ind: list
    dep_rates: list
    rows: list
    eliminate: bool
    rate: list
    acc: list
    G: sm.Matrix

    @property
    def unknowns(self) -> list:
        """q_I'' (dependent rates eliminated) or q_keep''."""
        return [_d(q, 2) for q in (self.ind if self.eliminate else self.keep)]

    def substitution(self) -> dict:
        """q'', q' and the eliminated q replaced by their expressions in
        the states and unknowns (Kolev's order: after differentiating)."""
        sub = {}
        for q, r, a in zip(self.coords, self.rate, self.acc):
            if a != _d(q, 2):
                sub[_d(q, 2)] = a
            if r != _d(q):
                sub[_d(q)] = r
        sub.update(self.elim)
        return sub


def _linear_parts(E, unknowns):
    """``(M, rest)`` of E, linear in ``unknowns``: the coefficients and E
    at zero unknowns, in one walk of E where it is a sum of products."""
    split = linear_split(E, unknowns)
    if split is not None:
        return split
    return jacobian(E, unknowns), substitute(E, {a: 0 for a in unknowns})


@register
class ModifiedLagrange(Formulation):
    """Kolev's modified Lagrange equations of the second kind.

    :func:`modified_lagrange_equations` for the declaration's T and Q
    (:func:`kinetic_energy_in_rates`, :func:`generalized_forces_in_rates`)
    where the paper's equations apply as printed, ``G^T E = 0`` elsewhere
    (see the module docstring).  :meth:`_derive` takes the paper's steps,
    one method each: (2.16) :meth:`_dependent_solutions`, (2.17)
    :meth:`_variations`, (2.20), (2.21) :meth:`_equations`, then
    :meth:`_assemble`.

    Parameters
    ----------
    dependent : {"auto", "explicit", "implicit"}
        How dependent coordinates of holonomic constraints are treated:
        ``"auto"`` uses the declared explicit solutions where every
        dependent coordinate has one, the implicit-function-theorem form
        otherwise; ``"explicit"`` requires them (refusing a system without);
        ``"implicit"`` keeps the dependent coordinates in the state even
        when solutions are declared.  Ignored without holonomic constraints.
    dependent_rates : {"auto", "eliminate", "keep"}
        Rates determined by the velocity constraints (implicit holonomic or
        nonholonomic): ``"eliminate"`` replaces them (and their
        accelerations) by their solution, so the unknowns are the
        independent accelerations only; ``"keep"`` keeps every rate in the
        state and every acceleration unknown, closing the equations with
        the differentiated constraints; ``"auto"`` eliminates when at most
        three rates are dependent and keeps them otherwise.
    count_ops : bool
        See :class:`~eomcompare.formulations.base.Formulation`.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> eom = get_formulation("modified_lagrange").derive("double_pendulum")
    >>> eom.n_equations, eom.n_multipliers
    (2, 0)
    """

    name = "modified_lagrange"
    version = "1"
    summary = (
        "Kolev's modified Lagrange equations: T in all coordinates, "
        "dependent ones eliminated after differentiation"
    )
    handles_holonomic = True
    handles_nonholonomic = True
    handles_rheonomic = True
    uses_multipliers = False
    needs_dependent_solutions = False
    needs_velocities_from_positions = True
    handles_quaternions = True
    redundant_constraints = (
        "removes the dependent rows: the holonomic constraints whose "
        "velocity rows are independent at random consistent states"
    )

    def __init__(
        self,
        *,
        dependent: str = "auto",
        dependent_rates: str = "auto",
        count_ops: bool = True,
    ):
        super().__init__(count_ops=count_ops)
        self._set_options(
            dependent=(dependent, _DEPENDENT),
            dependent_rates=(dependent_rates, _DEPENDENT_RATES),
        )

    def check_supported(self, system) -> None:
        super().check_supported(system)
        if len(system.speeds) != len(system.coordinates) and (
            system.holonomic_constraints or system.nonholonomic_constraints
        ):
            raise UnsupportedSystemError(
                f"{self.name}: system {system.name!r} has unit quaternions "
                f"and constraints; the projection on q' = F(q) u that "
                f"replaces the elimination for quaternions is implemented "
                f"for systems without constraints only"
            )
        if not system.q_dep or self.dependent != "explicit":
            return
        sols, why = explicit_solutions(system)
        if sols is None:
            raise UnsupportedSystemError(
                f"{self.name}: dependent='explicit' needs explicit solutions "
                f"of the holonomic constraints of {system.name!r}, but {why}; "
                f"use dependent='auto' or 'implicit'"
            )

    # ------------------------------------------------------------------
    def _derive(self, ms, stage) -> Derivation:
        coords = list(ms.coordinates)
        with stage("energy_and_forces"):
            T = kinetic_energy_in_rates(ms)
            Q = generalized_forces_in_rates(ms, coords)
        if len(ms.speeds) != len(coords):
            # Unit quaternions: (2.20) projected on the kinematic directions
            # q' = F u instead of dq = G dq_ind (redundant_coordinates).
            M, f = projected_equations(ms, T, Q, stage)
            extras = {"projection": "q' = F(q) u", "kinetic_energy": T}
            return speed_form(ms, M, f, extras)
        with stage("constraints"):
            red = self._variations(ms, self._dependent_solutions(ms))
        with stage("lagrange_operator"):
            M, rest = self._equations(ms, T, Q, red)
        with stage("assembly"):
            M, forcing = self._assemble(M, rest, red)
        return self._derivation(ms, red, M, forcing, T, Q)

    def _dependent_solutions(self, ms) -> dict:
        """(2.16): ``{q_r: f_r}`` where the declaration solves every
        holonomic constraint explicitly (and ``dependent`` allows them);
        empty where the dependent coordinates stay implicit or there are
        none."""
        sols, _ = explicit_solutions(ms)
        if not ms.q_dep or sols is None or self.dependent == "implicit":
            return {}
        return {q: sols[q] for q in ms.q_dep}

    def _variations(self, ms, elim) -> _Reduction:
        """(2.17) and its extensions: the rates of all coordinates in the
        independent ones, ``q' = G q_I' + g``, from df_r/dq_j (explicit
        solutions), the implicit function theorem (implicit ones) or
        Maggi's coefficients (nonholonomic constraints); and the
        accelerations, their time derivative."""
        coords = list(ms.coordinates)
        keep = [q for q in coords if q not in elim]
        # q_elim, q_elim' in the kept coordinates (f_r and df_r/dt).
        elim_rates = {}
        for r, f in elim.items():
            elim_rates[_d(r)] = _d(f)
            elim_rates[r] = f
        rows, preset = self._rate_constraints(ms, bool(elim), elim_rates)
        dep_rates, samples = self._choose_dependent(ms, keep, rows, preset, elim)
        ind = [q for q in keep if q not in dep_rates]
        eliminate = (
            not dep_rates
            or self.dependent_rates == "eliminate"
            or (self.dependent_rates == "auto" and len(dep_rates) <= ADJUGATE_MAX)
        )
        rate, acc, G = self._rate_relations(
            coords, keep, ind, dep_rates, rows, elim, eliminate, samples
        )
        return _Reduction(
            coords, elim, keep, ind, dep_rates, rows, eliminate, rate, acc, G
        )

    @staticmethod
    def _equations(ms, T, Q, red: _Reduction):
        """(2.20), (2.21) as ``(M, rest)``, the coefficients of the
        unknowns and the remainder of ``E_j + sum_r E_r df_r/dq_j``.

        Without velocity constraints (the paper's case) they are
        :func:`modified_lagrange_equations` as printed; with none to
        eliminate either (s = 0) Lagrange's equations, split as formed
        (:func:`_lagrange_split`) when no explicit time makes the whole
        time derivative necessary.  With velocity constraints E is
        formed in every coordinate and its rates and accelerations then
        replaced (Kolev's order); :meth:`_assemble` multiplies by G^T.
        """
        coords = red.coords
        if red.rows:
            L = lagrange_operators(T, coords)
            E = sm.Matrix([L[q] - Qi for q, Qi in zip(coords, Q)])
            return _linear_parts(E.xreplace(red.substitution()), red.unknowns)
        if not red.elim and not ms.is_rheonomic:
            # The coefficients and the rest formed apart (dT/dq' read for
            # the q', d/dt of it at q'' = 0 along q), without forming the
            # q'' terms only to take them apart again.
            return _lagrange_split(T, coords, Q)
        E = modified_lagrange_equations(T, coords, dict(zip(coords, Q)), red.elim)
        return _linear_parts(sm.Matrix(E), red.unknowns)

    @staticmethod
    def _assemble(M, rest, red: _Reduction):
        """``(M, forcing)`` of ``M unknowns = forcing``: the equations of
        :meth:`_equations` multiplied by G^T where velocity constraints
        determine rates (``G^T E = 0``), with the differentiated
        constraints appended where the dependent rates are kept."""
        forcing = scale(-1, sm.Matrix(len(rest), 1, rest))
        if not red.elim and not red.rows:
            # No constraint: M is the Hessian of T in the rates, symmetric;
            # written by its lower triangle so that code generators see it.
            M = symmetric_from_lower(M)
        G = red.G
        if red.rows and G != sm.eye(*G.shape):
            # (a product with the identity is not free on large entries)
            M, forcing = G.T * M, G.T * forcing
        if not red.eliminate and red.rows:
            unknowns = red.unknowns
            acc_rows = _d(sm.Matrix(red.rows))
            M = M.col_join(jacobian(acc_rows, unknowns))
            forcing = forcing.col_join(-acc_rows.xreplace({a: 0 for a in unknowns}))
        return M, forcing

    @staticmethod
    def _derivation(ms, red: _Reduction, M, forcing, T, Q) -> Derivation:
        """The equations with their states, maps and extras."""
        unknowns = red.unknowns
        idx = {q: i for i, q in enumerate(red.coords)}
        if red.eliminate:
            states = tuple(red.keep) + tuple(_d(q) for q in red.ind)
            state_rates = [red.rate[idx[q]] for q in red.keep] + unknowns
        else:
            states = tuple(red.keep) + tuple(_d(q) for q in red.keep)
            state_rates = [_d(q) for q in red.keep] + unknowns
        coord_values = [red.elim.get(q, q) for q in red.coords]
        extras = {
            "dependent_coordinates": (
                "none" if not ms.q_dep else "explicit" if red.elim else "implicit"
            ),
            "dependent_rates_eliminated": red.eliminate,
            "independent_rates": tuple(_d(q) for q in red.ind),
            "dependent_rates": tuple(_d(q) for q in red.dep_rates),
            "rate_coefficients": sm.ImmutableMatrix(red.G),
            "kinetic_energy": T,
            "generalized_forces": sm.ImmutableMatrix(Q),
            "constraint_forces_unsupported": (
                "the modified Lagrange equations eliminate the constraints: "
                "they have neither multipliers nor auxiliary speeds"
            ),
        }
        return Derivation(
            states=states,
            unknowns=tuple(unknowns),
            mass_matrix=M,
            forcing=forcing,
            state_rates=sm.Matrix(state_rates),
            accelerations=sm.Matrix(red.acc),
            state_map=sm.Matrix(list(states)),
            coordinate_map=sm.Matrix(coord_values + list(red.rate)),
            extras=extras,
        )

    # ------------------------------------------------------------------
    @staticmethod
    def _rate_constraints(ms, explicit, elim_rates):
        """Velocity constraints in coordinate rates, ``rows = 0``, each
        linear in q'; and the coordinates whose rates they must determine
        (the declaration's dependent coordinates in the implicit form)."""
        u_map = dict(ms.kinematics.u_of_qdot)
        rows = []
        preset = []
        if ms.q_dep and not explicit:
            # d/dt Phi(t, q) = Phi_q q' + Phi_t: the implicit function theorem.
            # Redundant holonomic constraints (Bricard's mechanism): the
            # independent ones only, chosen at random consistent states.
            dropped = ms.redundant_holonomic_constraints
            rows += [
                _d(sm.sympify(c))
                for i, c in enumerate(ms.holonomic_constraints)
                if i not in dropped
            ]
            preset = list(ms.q_dep)
        for c in ms.nonholonomic_constraints:
            c = sm.sympify(c).xreplace(u_map)
            rows.append(c.xreplace(elim_rates) if elim_rates else c)
        return rows, preset

    @staticmethod
    def _choose_dependent(ms, keep, rows, preset, elim):
        """Coordinates whose rates the constraint rows determine."""
        n_free = len(rows) - len(preset)
        qd = [_d(q) for q in keep]
        B = sm.Matrix(rows).jacobian(qd) if rows else None
        if n_free == 0:
            samples = (
                _numeric_samples(ms, B, keep, elim) if len(rows) > ADJUGATE_MAX else []
            )
            return list(preset), samples
        # Prefer coordinates whose rates make up the declaration's dependent
        # speeds (u_dep = x' for a contact point), then later coordinates.
        u_map = dict(ms.kinematics.u_of_qdot)
        in_udep = set()
        for ui in ms.u_dep:
            in_udep |= set(me.find_dynamicsymbols(sm.sympify(u_map[ui])))
        candidates = [q for q in reversed(keep) if q not in preset]
        candidates.sort(key=lambda q: _d(q) not in in_udep)
        samples = _numeric_samples(ms, B, keep, elim)
        chosen = list(preset)
        col = {q: i for i, q in enumerate(keep)}

        def full_rank(cols):
            return all(
                np.linalg.matrix_rank(S[:, [col[c] for c in cols]], tol=1e-9)
                == len(cols)
                for S in samples
            )

        if preset and not full_rank(chosen):
            raise UnsupportedSystemError(
                f"modified_lagrange: the constraints of {ms.name!r} cannot "
                f"be solved for the rates of the dependent coordinates "
                f"{list(preset)} at random consistent states"
            )
        for q in candidates:
            if len(chosen) == len(rows):
                break
            if full_rank(chosen + [q]):
                chosen.append(q)
        if len(chosen) < len(rows):
            raise UnsupportedSystemError(
                f"modified_lagrange: the {len(rows)} velocity constraints of "
                f"{ms.name!r} are not independent in the coordinate rates "
                f"(rank below {len(rows)} at random consistent states), so "
                f"no set of dependent rates can be solved for"
            )
        return [q for q in keep if q in chosen], samples

    @staticmethod
    def _rate_relations(
        coords, keep, ind, dep_rates, rows, elim, eliminate, samples=()
    ):
        """Rates and accelerations of all coordinates, and G = dq'/dq_I'.

        With ``eliminate`` the dependent rates are ``C q_I' + c`` and their
        accelerations its time derivative; otherwise every kept coordinate's
        rate and acceleration stays itself (state and unknown).  Eliminated
        coordinates always get ``df_r/dt`` and ``d^2 f_r/dt^2``.
        """
        qd_I = [_d(q) for q in ind]
        qd_keep = [_d(q) for q in keep]
        n_I = len(ind)
        G_keep = sm.zeros(len(keep), n_I)
        for j, q in enumerate(ind):
            G_keep[keep.index(q), j] = 1
        rate = {q: _d(q) for q in keep}
        if dep_rates:
            R = sm.Matrix(rows)
            qd_D = [_d(q) for q in dep_rates]
            B_D = R.jacobian(qd_D)
            B_I = R.jacobian(qd_I)
            b = R.xreplace({x: 0 for x in qd_D + qd_I})
            cols = [keep.index(q) for q in dep_rates]
            Cc = solve_linear(
                B_D, (-B_I).row_join(-b), samples=[S[:, cols] for S in samples]
            )
            C, c = Cc[:, : B_I.shape[1]], Cc[:, B_I.shape[1] :]
            for i, q in enumerate(dep_rates):
                G_keep[keep.index(q), :] = C.row(i)
            if eliminate:
                sol = C * sm.Matrix(qd_I) + c
                for q, e in zip(dep_rates, sol):
                    rate[q] = e
        keep_rate = {_d(q): rate[q] for q in keep if rate[q] != _d(q)}
        acc = {q: _d(q, 2) for q in keep}
        if eliminate:
            for q in dep_rates:
                acc[q] = _d(rate[q]).xreplace(keep_rate)
        keep_acc = {_d(q, 2): acc[q] for q in keep if acc[q] != _d(q, 2)}
        G_rows = {q: G_keep.row(i) for i, q in enumerate(keep)}
        for r, f in elim.items():
            fd = _d(f)
            G_rows[r] = sm.Matrix([fd]).jacobian(qd_keep) * G_keep
            rate[r] = fd.xreplace(keep_rate)
            acc[r] = _d(f, 2).xreplace(keep_acc).xreplace(keep_rate)
        G = (
            sm.Matrix.vstack(*[G_rows[q] for q in coords])
            if n_I
            else sm.zeros(len(coords), 0)
        )
        return ([rate[q] for q in coords], [acc[q] for q in coords], G)


def _numeric_samples(ms, B, keep, elim, n=3):
    """B evaluated at a few random consistent states (for rank decisions)."""
    B = ms.substitute_specified(B)
    out = []
    coords = list(ms.coordinates)
    params = dict(ms.parameters)
    states = [ms.states.consistent_initial_state()[:2]]
    states += [ms.states.random_state(seed=1000 + seed)[:2] for seed in range(n)]
    for t0, q in states:
        rep = dict(params)
        rep.update({qi: float(v) for qi, v in zip(coords, q)})
        rep[t] = float(t0)
        vals = B.xreplace(rep).evalf()
        out.append(np.array(vals.tolist(), dtype=float))
    return out
