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
three cases:

1. **Explicit dependent coordinates** (the paper's case).  Where the
   declaration gives ``dependent_solutions`` ``{q_r: f_r(t, q_ind)}`` for
   every dependent coordinate and has no nonholonomic constraints, the
   class calls :func:`modified_lagrange_equations`, the transcription of
   (2.20), (2.21) as printed: q_r, q_r', q_r'' are replaced by ``f_r``,
   ``df_r/dt``, ``d^2 f_r/dt^2`` after differentiation.  A system without
   constraints is the case s = 0 (Lagrange's equations).  The state is
   ``(q_ind, q_ind')``: the dependent coordinates leave the state.

   The transcription does not reach the two other cases (it needs every
   f_r written down, and has no term for velocity constraints, so neither
   does it cover nonholonomic constraints beside explicit solutions):
   there the class evaluates the same equations in the matrix form
   ``G^T E = 0``, with G from the coefficients below.
2. **Implicit dependent coordinates.**  Where the declaration has holonomic
   constraints ``Phi(t, q) = 0`` without explicit solutions, the implicit
   function theorem gives the same coefficients,

       df/dq_ind = -(dPhi/dq_dep)^-1 dPhi/dq_ind,
       q_dep' = df/dq_ind q_ind' - (dPhi/dq_dep)^-1 dPhi/dt,

   and q_dep'' follows by differentiating that once more.  The dependent
   coordinates themselves cannot be written down, so they STAY in the state
   ``(q, q_ind')`` with rates from the velocity relation above: they are
   obtained from the constraints by integrating their differentiated form,
   and a consistent starting state (``ms.random_state``,
   ``ms.consistent_initial_state`` or ``ms.solve_dependent_coordinates``,
   which solve the constraints by Newton's method) keeps them on the
   constraint manifold up to the integrator's drift.  The option
   ``dependent="implicit"`` forces this path on a system that has explicit
   solutions (useful to compare the two).
3. **Nonholonomic constraints** (Maggi's form).  Constraints linear in the
   rates, ``B(t, q) q' + b(t, q) = 0`` (after the declaration's speeds are
   converted to coordinate rates), are solved for as many dependent rates;
   ``q_D' = C q_I' + c``.  The virtual displacements obey
   ``dq_D = C dq_I``, so the construction is the same with ``C`` in place
   of ``df_r/dq_j`` (this is Maggi's form of the equations of motion):
   ``E_I + C^T E_D = 0``.  The coordinates whose rates are dependent stay
   in the state.  Which rates are dependent: the dependent coordinates of
   the declaration first, then, for each nonholonomic constraint, a
   coordinate whose rate appears in the declaration's dependent speeds
   (then the others, from the last coordinate backwards), checked
   numerically to give an invertible ``B_D`` at the declared initial state
   and at random consistent states.  A system whose velocity constraints
   cannot be solved for any set of rates there (constraints not
   independent) is refused with :class:`UnsupportedSystemError`.

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
  (rheonomic systems, rheonomic constraints, time-dependent f_r); the
  numeric layer substitutes ``specified``.
* No simplification, with one exception: the determinant of a small block
  of dependent rates (up to 3 x 3) is simplified and the block inverted as
  ``adj / det``, because elimination would divide by an entry that can
  vanish where the block does not (the wheelbarrow's rolling constraints:
  LU divides by ``sin(theta)``, the determinant is -1).  Larger blocks are
  eliminated with pivots chosen where they are largest at the declared
  initial state and random consistent states (the upright Whipple bicycle
  makes the first symbolically nonzero pivot vanish).
* Constraint forces are not recovered (the method has no multipliers).

Variants (option ``variant``)
-----------------------------
``"modified"`` (default)
    Kolev's equations as above.
``"substituted"``
    Lagrange's equations in minimal coordinates, the approach the paper sets
    out to improve on: f_r and df_r/dt are substituted into the velocities
    BEFORE T is formed (so they enter T squared), and the plain equations
    ``d/dt(dT/dq_j') - dT/dq_j = Q_j`` in the independent coordinates follow
    (Maggi's form for any nonholonomic constraints, exactly as above).  It
    needs explicit solutions of every holonomic constraint and refuses a
    system without them (:class:`UnsupportedSystemError`).

:func:`eomcompare.bench.methods.kolev_cost_table` measures both variants against
Lagrange's equations with multipliers (the ``"lagrange"`` formulation) on
the paper's kind of systems.

Derivation contract
-------------------
q_keep are the coordinates not eliminated by an explicit solution (all of
them in the implicit form), q_I those with independent rates, q_D those
whose rates the velocity constraints determine, ``q' = G q_I' + g``.

``states``
    ``(q_keep, q_I')`` (default); with the dependent rates kept (below)
    ``(q_keep, q_keep')``.
``unknowns``
    ``q_I''``, the k independent coordinate accelerations, no multipliers
    (k equations); with the dependent rates kept, ``q_keep''`` (the k
    equations and the differentiated velocity constraints).
``state_rates``
    ``q_keep' = G q_I' + g`` (rows of the kept coordinates), ``q_I''``.
``accelerations``
    q'' of all n coordinates: ``d/dt (G q_I' + g)`` with the rates
    substituted (``d^2 f_r/dt^2`` for explicit solutions), in (t, states,
    unknowns).
``state_map``, ``coordinate_map``
    Selection of the states from (q, q'); and (q, q') from the states,
    with eliminated coordinates given by f_r and every rate by
    ``G q_I' + g``.

Large blocks of dependent rates (option ``dependent_rates``): substituting
``q_D' = C q_I' + c`` and differentiating it once more is what the method
prescribes, and for up to three dependent rates it is what happens.  With
more, the symbolic solution of the constraint block and its time derivative
grow without bound (the Whipple bicycle's five dependent rates: millions of
operations in the accelerations alone), so by default the dependent rates
then stay in the state and their accelerations stay unknown, closed by the
velocity constraints differentiated once (as Kane's method here closes its
dependent speed rates).  The k equations ``G^T E = 0`` are unchanged;
``extras["dependent_rates_eliminated"]`` records which form was built.

Extras published: ``variant``, ``dependent_coordinates`` (``"explicit"``,
``"implicit"`` or ``"none"``), ``dependent_rates_eliminated``,
``independent_rates`` (q_I'), ``dependent_rates`` (q_D', not counting
eliminated coordinates), ``rate_coefficients`` (G, in t and the states),
``kinetic_energy`` (T in t, q, q' as differentiated), ``generalized_forces``
(Q, one per coordinate of T).
"""

from __future__ import annotations

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
]

t = me.dynamicsymbols._t

_VARIANTS = ("modified", "substituted")
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
def _explicit_solutions(ms):
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


@register
class ModifiedLagrange(Formulation):
    """Kolev's modified Lagrange equations of the second kind.

    Where the paper's equations apply as printed (variant ``"modified"``,
    explicit solutions of every holonomic constraint or none to solve, no
    nonholonomic constraints) the equations are those of
    :func:`modified_lagrange_equations` for the declaration's T and Q
    (:func:`kinetic_energy_in_rates`, :func:`generalized_forces_in_rates`).
    Elsewhere they are formed as ``G^T E = 0`` (see the module docstring):
    implicit dependent coordinates with G from the implicit function
    theorem, nonholonomic constraints with Maggi's coefficients, and the
    ``"substituted"`` variant as Lagrange's equations in minimal
    coordinates.

    Parameters
    ----------
    variant : {"modified", "substituted"}
        ``"modified"``: Kolev's equations (T in all coordinates).
        ``"substituted"``: Lagrange's equations with the explicit solutions
        substituted into T (minimal coordinates), for comparison.
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
    >>> get_formulation("modified_lagrange", variant="substituted").options["variant"]
    'substituted'
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
        variant: str = "modified",
        dependent: str = "auto",
        dependent_rates: str = "auto",
        count_ops: bool = True,
    ):
        super().__init__(count_ops=count_ops)
        self._set_options(
            variant=(variant, _VARIANTS),
            dependent=(dependent, _DEPENDENT),
            dependent_rates=(dependent_rates, _DEPENDENT_RATES),
        )
        if variant == "substituted" and dependent == "implicit":
            raise ValueError(
                "variant='substituted' substitutes explicit solutions into T "
                "and cannot be combined with dependent='implicit'; valid "
                "dependent values for it: ['auto', 'explicit']"
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
        if not system.q_dep:
            return
        sols, why = _explicit_solutions(system)
        needs_explicit = self.variant == "substituted" or self.dependent == "explicit"
        if sols is None and needs_explicit:
            what = (
                "minimal coordinates (variant='substituted')"
                if self.variant == "substituted"
                else "dependent='explicit'"
            )
            raise UnsupportedSystemError(
                f"{self.name}: {what} needs explicit solutions of the "
                f"holonomic constraints of {system.name!r}, but {why}; use "
                f"variant='modified' with dependent='auto' or 'implicit'"
            )

    # ------------------------------------------------------------------
    def _derive(self, ms, stage) -> Derivation:
        coords = list(ms.coordinates)
        if len(ms.speeds) != len(coords):
            # Unit quaternions: (2.20) projected on the kinematic directions
            # q' = F u instead of dq = G dq_ind (redundant_coordinates).
            with stage("energy_and_forces"):
                T = kinetic_energy_in_rates(ms)
                Q = generalized_forces_in_rates(ms, coords)
            with stage("lagrange_operator"):
                M, f = projected_equations(ms, T, Q)
            extras = {"variant": "projected on q' = F(q) u", "kinetic_energy": T}
            return speed_form(ms, M, f, extras)
        sols, _ = _explicit_solutions(ms)
        explicit = bool(ms.q_dep) and sols is not None and self.dependent != "implicit"
        elim = {q: sols[q] for q in ms.q_dep} if explicit else {}
        keep = [q for q in coords if q not in elim]
        # q_elim, q_elim' in the kept coordinates (f_r and df_r/dt).
        elim_rates = {}
        for r, f in elim.items():
            elim_rates[_d(r)] = _d(f)
            elim_rates[r] = f

        with stage("energy_and_forces"):
            if self.variant == "substituted":
                T_coords = keep
                T = kinetic_energy_in_rates(ms, elim_rates)
                Q = generalized_forces_in_rates(ms, keep, elim_rates)
            else:
                T_coords = coords
                T = kinetic_energy_in_rates(ms)
                Q = generalized_forces_in_rates(ms, coords)

        with stage("constraints"):
            rows, preset = self._rate_constraints(ms, explicit, elim_rates)
            dep_rates, samples = self._choose_dependent(
                ms, keep, rows, preset, explicit, elim
            )
            ind = [q for q in keep if q not in dep_rates]
            eliminate = (
                not dep_rates
                or self.dependent_rates == "eliminate"
                or (self.dependent_rates == "auto" and len(dep_rates) <= ADJUGATE_MAX)
            )
            rate, acc, G = self._rate_relations(
                coords, keep, ind, dep_rates, rows, elim, eliminate, samples
            )

        # Kolev's case: every dependent coordinate has its explicit f_r and
        # no velocity constraint is left, so (2.20), (2.21) apply as printed.
        as_printed = self.variant == "modified" and not rows
        # Nothing to eliminate (s = 0): (2.20) is Lagrange's equations
        # E = d/dt(dT/dq') - dT/dq - Q, linear in q''.  Its coefficients
        # and its rest are formed apart (dT/dq' read for the q', d/dt of it
        # at q'' = 0 along q), the expressions the whole time derivative
        # split afterwards would give, without forming the q'' terms only
        # to take them apart again.  (With explicit time, through t
        # itself or prescribed functions, the whole derivative is taken.)
        split = None
        with stage("lagrange_operator"):
            if as_printed and not elim and not ms.is_rheonomic:
                split = _lagrange_split(T, coords, Q)
            elif as_printed:
                E_sub = sm.Matrix(
                    modified_lagrange_equations(T, coords, dict(zip(coords, Q)), elim)
                )
            else:
                L = lagrange_operators(T, T_coords)
                E = sm.Matrix([L[qi] - Qi for qi, Qi in zip(T_coords, Q)])

        with stage("assembly"):
            idx = {q: i for i, q in enumerate(coords)}
            if not as_printed:
                # The same equations as G^T E = 0, G from the implicit
                # function theorem or Maggi's coefficients; the Lagrange
                # expression of every coordinate is formed first, then the
                # rates and accelerations are replaced (Kolev's order).
                sub = {}
                for q in coords:
                    if acc[idx[q]] != _d(q, 2):
                        sub[_d(q, 2)] = acc[idx[q]]
                    if rate[idx[q]] != _d(q):
                        sub[_d(q)] = rate[idx[q]]
                for r, f in elim.items():
                    sub[r] = f
                E_sub = E.xreplace(sub)
            if eliminate:
                unknowns = [_d(q, 2) for q in ind]
            else:
                # Dependent accelerations stay unknown, closed by the
                # differentiated velocity constraints.
                unknowns = [_d(q, 2) for q in keep]
            zero = {a: 0 for a in unknowns}
            # G^T E is linear in the unknowns through E alone: split E
            # first rather than differentiate the products with G.
            # The coefficients of the unknowns and the rest (E at zero
            # unknowns) in one walk of E.
            if split is None:
                split = linear_split(E_sub, unknowns)
            if split is None:
                M = jacobian(E_sub, unknowns)
                rest = substitute(E_sub, zero)
            else:
                M, rest = split
            forcing = scale(-1, sm.Matrix(len(rest), 1, rest))
            if not elim and not dep_rates and not rows:
                # No constraint: E is Lagrange's operator in every
                # coordinate and M the Hessian of T in the rates,
                # symmetric; written by its lower triangle so that code
                # generators see it.
                M = symmetric_from_lower(M)
            G_T = G.extract([idx[q] for q in T_coords], list(range(len(ind))))
            if not as_printed and G_T != sm.eye(*G_T.shape):
                # (a product with the identity is not free on large entries)
                M, forcing = G_T.T * M, G_T.T * forcing
            if not eliminate and rows:
                acc_rows = _d(sm.Matrix(rows))
                M = M.col_join(jacobian(acc_rows, unknowns))
                forcing = forcing.col_join(-acc_rows.xreplace(zero))

        if eliminate:
            states = tuple(keep) + tuple(_d(q) for q in ind)
            state_rates = [rate[idx[q]] for q in keep] + unknowns
        else:
            states = tuple(keep) + tuple(_d(q) for q in keep)
            state_rates = [_d(q) for q in keep] + unknowns
        coord_values = [elim.get(q, q) for q in coords]
        extras = {
            "variant": self.variant,
            "dependent_coordinates": (
                "none" if not ms.q_dep else "explicit" if explicit else "implicit"
            ),
            "dependent_rates_eliminated": eliminate,
            "independent_rates": tuple(_d(q) for q in ind),
            "dependent_rates": tuple(_d(q) for q in dep_rates),
            "rate_coefficients": sm.ImmutableMatrix(G),
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
            accelerations=sm.Matrix(acc),
            state_map=sm.Matrix(list(states)),
            coordinate_map=sm.Matrix(coord_values + list(rate)),
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
    def _choose_dependent(ms, keep, rows, preset, explicit, elim):
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
    states = [ms.consistent_initial_state()[:2]]
    states += [ms.random_state(seed=1000 + seed)[:2] for seed in range(n)]
    for t0, q in states:
        rep = dict(params)
        rep.update({qi: float(v) for qi, v in zip(coords, q)})
        rep[t] = float(t0)
        vals = B.xreplace(rep).evalf()
        out.append(np.array(vals.tolist(), dtype=float))
    return out
