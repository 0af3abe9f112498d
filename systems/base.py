"""The declaration of a mechanical system, shared by every formulation.

A :class:`MechanicalSystem` wraps a :class:`sympy.physics.mechanics.System`
(frames, points, bodies, loads, coordinates, speeds, kinematic differential
equations and constraints) together with the numbers a comparison needs:
default parameter values, a consistent initial state, prescribed functions
of time, and optional facts some formulations use (explicit solutions of the
holonomic constraints, a potential energy).  Every formulation reads the same
declaration; none of them changes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any

import sympy as sm
import sympy.physics.mechanics as me
from sympy.core.function import AppliedUndef

from eomcompare.numeric.states import ConstraintError, SystemStates
from eomcompare.symbolic.calculus import dynamic_symbols, subexpressions
from eomcompare.symbolic.frames import (
    FrameAlgebra,
    kinetic_energy,
)
from eomcompare.symbolic.linsolve import solve_linear
from eomcompare.symbolic.types import (
    Expr,
    Matrix,
    Point,
    ReferenceFrame,
    Symbol,
    Vector,
)

from .checks import (
    check_mass_properties_of,
    check_parameters,
    check_structure,
    fingerprint,
    free_constants,
    linear_coefficients,
    measures,
    orientation_steps,
)
from .errors import DeclarationError

__all__ = [
    "MechanicalSystem",
    "ConstraintForce",
    "DeclarationError",
    "ConstraintError",
    "Kinematics",
    "has_explicit_time",
]

t = me.dynamicsymbols._t


@dataclass(frozen=True)
class ConstraintForce:
    """A constraint force or torque to be recovered by an auxiliary speed.

    The auxiliary speed gives the bodies in ``bodies`` (the side of the joint
    the force acts on) a virtual motion that the constraint forbids: a
    translation along ``direction`` (``kind="force"``) or a rotation about the
    axis through ``point`` along ``direction`` (``kind="torque"``).  The
    recovered quantity is the component along ``direction`` of the force (or
    torque about ``point``) that the rest of the system exerts on ``bodies``.

    Parameters
    ----------
    name : str
        Name of the force, e.g. ``"R1"``.
    kind : {"force", "torque"}
    direction : sympy.physics.vector.Vector
        Unit vector of the component that is recovered.
    point : sympy.physics.vector.Point
        Point of application of the force; the rotation axis of a torque.
    bodies : sequence of bodies
        The bodies that move with the auxiliary motion.
    points : sequence of Point, optional
        Further points (load points) rigidly attached to ``bodies``.
    frames : sequence of ReferenceFrame, optional
        Further frames rigidly attached to ``bodies`` on which torques act.
    """

    name: str
    kind: str
    direction: Vector
    point: Point
    bodies: tuple[Any, ...]
    points: tuple[Point, ...] = ()
    frames: tuple[ReferenceFrame, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("force", "torque"):
            raise ValueError(
                f"ConstraintForce {self.name!r}: kind must be one of "
                f"['force', 'torque'], not {self.kind!r}"
            )
        object.__setattr__(self, "bodies", tuple(self.bodies))
        object.__setattr__(self, "points", tuple(self.points))
        object.__setattr__(self, "frames", tuple(self.frames))


def _is_function_of_time(e: Expr) -> bool:
    """True for q(t) and its derivatives: what ``find_dynamicsymbols`` finds."""
    return isinstance(e, (sm.Derivative, AppliedUndef)) and e.free_symbols == {t}


def has_explicit_time(*exprs: Expr) -> bool:
    """True when ``t`` appears outside the functions of time in ``exprs``
    (each shared subtree visited once)."""
    return any(e == t for e in subexpressions(exprs, prune=_is_function_of_time))


def _as_tuple(matrix: Matrix | None) -> tuple[Expr, ...]:
    return tuple(sm.Matrix(matrix)) if matrix is not None else ()


@dataclass(frozen=True)
class Kinematics:
    """Kinematic facts derived once from a declaration.

    Attributes
    ----------
    qdot : dict
        ``{q_i': expression in (t, q, u)}`` from the kinematic differential
        equations.
    u_of_qdot : dict
        ``{u_i: expression in (t, q, q')}``.
    velocity_constraint_A, velocity_constraint_b : Matrix
        All velocity constraints (differentiated holonomic ones, then the
        nonholonomic ones) written as ``A u + b = 0``, in (t, q, u).
    """

    qdot: Mapping[Symbol, Expr]
    u_of_qdot: Mapping[Symbol, Expr]
    velocity_constraint_A: Matrix
    velocity_constraint_b: Matrix


class MechanicalSystem:
    """One system, declared once, read by every formulation.

    Parameters
    ----------
    name : str
        Catalogue name, e.g. ``"double_pendulum"``.
    system : sympy.physics.mechanics.System
        Frames, bodies, loads, coordinates (independent and dependent),
        speeds (independent and dependent), kinematic differential equations,
        holonomic and nonholonomic constraints.
    parameters : mapping
        Every constant symbol of the declaration mapped to a default number.
    initial_state : mapping
        Independent coordinates and speeds (dynamicsymbols) mapped to numbers.
        Dependent coordinates and speeds may be given too; they are then
        checked against the constraints, otherwise solved from them.
    specified : mapping, optional
        Prescribed functions of time: ``{theta(t): expression of t}``.
    dependent_solutions : mapping, optional
        Explicit solutions ``{q_dep: f(q_ind)}`` of the holonomic constraints.
    potential_energy : sympy expression, optional
        Potential energy of the conservative loads, where the declaration
        provides it (informational: loads always hold every force).
    constraint_forces : sequence of ConstraintForce, optional
        Constraint forces a user wants recovered (Kane's auxiliary speeds).
    description : str, optional
        Text, ideally with an ASCII sketch.
    random_spread : float or mapping, optional
        Half-width of the uniform perturbation of the independent coordinates
        about ``initial_state`` used by ``states.random_state`` (default 0.5);
        a mapping gives it per coordinate.
    speed_scale : float, optional
        Half-width of the uniform distribution of random independent speeds.
    energy_conserved : bool, optional
        True where the total energy ``T + V`` is a constant of the motion
        (used by the harness to report energy drift).
    observables : mapping, optional
        Named quantities of interest, expressions in (t, q) (the reference
        point of a benchmark problem, say): ``{"x_P1": expression}``.

    Raises
    ------
    DeclarationError
        A ``ValueError`` naming the problem the symbolic checks find:
        dependent coordinates that do not match the holonomic constraints, a
        nonholonomic constraint that is not linear in the speeds, a constant
        without a value, kinematic differential equations that cannot be
        solved for the coordinate rates.  The checks with numbers (an
        initial state that violates a constraint, a velocity that
        contradicts its position, an explicit dependent solution that
        violates the holonomic constraints) are :meth:`validate`'s.

    Attributes
    ----------
    u_aux : tuple
        Auxiliary speeds (``System.add_auxiliary_speeds``): zero in every
        motion, each a request for the constraint force that keeps it zero
        (``model.constraint_forces``; :mod:`eomcompare.systems.auxiliary`).
    reaction_unknowns : tuple
        Constants without value, or functions of time neither coordinates,
        speeds nor specified, in the loads that are those forces.
    reactions_in_motion : tuple
        Those of them that also act where a generalized speed moves (a
        friction force proportional to a normal force): they enter the
        equations of motion, where each formulation replaces them by their
        solution, or refuses the system.

    Notes
    -----
    Speeds need not be one per coordinate: with more coordinates (a
    quaternion's four, three body rates) the kinematic equations give the
    coordinate rates and as many of them as there are speeds give the
    speeds; with more speeds (velocity components as speeds) the velocity
    constraints give the rest.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("double_pendulum")
    >>> t0, q, qd = ms.states.random_state(seed=1)
    >>> len(q) == len(ms.coordinates)
    True
    """

    def __init__(
        self,
        *,
        name: str,
        system: me.System,
        parameters: Mapping[Symbol | str, float],
        initial_state: Mapping[Symbol, float],
        specified: Mapping[Symbol, Expr] | None = None,
        dependent_solutions: Mapping[Symbol, Expr] | None = None,
        potential_energy: Expr | None = None,
        constraint_forces: Sequence[ConstraintForce] = (),
        description: str = "",
        random_spread: float | Mapping[Symbol, float] = 0.5,
        speed_scale: float = 1.0,
        energy_conserved: bool = False,
        options: Mapping[str, Any] | None = None,
        observables: Mapping[str, Expr] | None = None,
    ) -> None:
        if not isinstance(system, me.System):
            raise TypeError(
                f"system must be a sympy.physics.mechanics.System, not "
                f"{type(system).__name__}"
            )
        if not isinstance(name, str) or not name:
            raise TypeError("name must be a non-empty string")
        # The arguments as given, for replace().
        self._arguments: dict[str, Any] = {
            "name": name,
            "system": system,
            "parameters": dict(parameters),
            "initial_state": dict(initial_state),
            "specified": dict(specified or {}),
            "dependent_solutions": dict(dependent_solutions or {}),
            "potential_energy": potential_energy,
            "constraint_forces": tuple(constraint_forces),
            "description": description,
            "random_spread": random_spread,
            "speed_scale": speed_scale,
            "energy_conserved": energy_conserved,
            "options": dict(options or {}),
            "observables": dict(observables or {}),
        }
        self.name = name
        self.system = system
        self._validated = False
        self.parameters: Mapping[Symbol, float] = MappingProxyType(
            {sm.sympify(k): float(v) for k, v in parameters.items()}
        )
        check_parameters(self)
        self.initial_state = MappingProxyType(
            {k: float(v) for k, v in initial_state.items()}
        )
        self.specified = MappingProxyType(dict(specified or {}))
        self.dependent_solutions = MappingProxyType(dict(dependent_solutions or {}))
        self.potential_energy = (
            None if potential_energy is None else sm.sympify(potential_energy)
        )
        self.constraint_forces = tuple(constraint_forces)
        self.description = description
        self.random_spread = random_spread
        self.speed_scale = float(speed_scale)
        self.energy_conserved = bool(energy_conserved)
        self.options = MappingProxyType(dict(options or {}))
        self.observables: Mapping[str, Expr] = MappingProxyType(
            {str(k): sm.sympify(v) for k, v in (observables or {}).items()}
        )
        # Constants that cannot enter the equations (the ground body's mass
        # and inertia) need no value: a harmless zero, and a note.
        from .consistency import inert_constants

        # Read once: collecting them walks every expression of the
        # declaration, and the checks below all need them.
        self._declared_constants = frozenset(free_constants(self))
        inert = sorted(
            inert_constants(system, self._declared_constants) - set(self.parameters),
            key=str,
        )
        self.notes: tuple[str, ...] = tuple(
            [
                f"constants that cannot enter the equations of motion need no "
                f"value and were given 0: {inert}"
            ]
            if inert
            else []
        )
        if inert:
            self.parameters = MappingProxyType(
                dict(self.parameters) | {c: 0.0 for c in inert}
            )
        # Auxiliary speeds ask for constraint forces (systems.auxiliary):
        # zero in every motion; constants without value in the loads where
        # only they move are the forces' unknowns.
        from .auxiliary import (
            auxiliary_speeds,
            reaction_unknowns,
            reactions_in_motion,
            unknown_functions,
        )

        self.u_aux = auxiliary_speeds(system)
        self._aux_zero = {x: 0 for ua in self.u_aux for x in (ua.diff(t), ua)}
        # Reactions may be written as constants without value or as
        # functions of time nobody prescribes (dynamicsymbols).
        unknown = unknown_functions(
            self.loads,
            set(self.coordinates)
            | set(self.speeds)
            | set(self.specified)
            | set(self.u_aux),
        )
        self.reaction_unknowns = reaction_unknowns(
            name,
            system,
            self.loads,
            self.speeds,
            self.u_aux,
            (self._declared_constants - set(self.parameters)) | unknown,
        )
        self.reactions_in_motion = reactions_in_motion(
            system, self.loads, self.speeds, self.reaction_unknowns
        )
        if self.reaction_unknowns:
            self.notes += (
                f"{list(self.reaction_unknowns)} are the reactions of the "
                f"auxiliary speeds {list(self.u_aux)} (model.constraint_forces); "
                + (
                    f"{list(self.reactions_in_motion)} enter the equations of "
                    f"motion and are replaced there by their solution"
                    if self.reactions_in_motion
                    else "they do not enter the equations of motion"
                ),
            )
            self.parameters = MappingProxyType(
                dict(self.parameters)
                | {c: 0.0 for c in self.reaction_unknowns if isinstance(c, sm.Symbol)}
            )
        check_mass_properties_of(self)
        check_structure(self)

    def replace(self, **changes: Any) -> MechanicalSystem:
        """A new declaration with the arguments of this one, ``changes``
        replacing some of them; it is checked as any declaration is.

        Raises
        ------
        TypeError
            For a keyword that is not an argument of the constructor.

        Examples
        --------
        >>> from eomcompare.systems import get_system
        >>> ms = get_system("double_pendulum")
        >>> other = ms.replace(initial_state={ms.coordinates[0]: 0.3})
        >>> other.initial_state[other.coordinates[0]], other.description == ms.description
        (0.3, True)
        """
        unknown = sorted(set(changes) - set(self._arguments))
        if unknown:
            raise TypeError(
                f"replace() got unknown argument(s) {unknown}; the arguments "
                f"of a declaration are {sorted(self._arguments)}"
            )
        return type(self)(**(self._arguments | changes))

    # ------------------------------------------------------------------
    # Vocabulary
    # ------------------------------------------------------------------
    @property
    def frame(self) -> ReferenceFrame:
        return self.system.frame

    @property
    def q_ind(self) -> tuple[Symbol, ...]:
        return _as_tuple(self.system.q_ind)

    @property
    def q_dep(self) -> tuple[Symbol, ...]:
        return _as_tuple(self.system.q_dep)

    @property
    def u_ind(self) -> tuple[Symbol, ...]:
        return _as_tuple(self.system.u_ind)

    @property
    def u_dep(self) -> tuple[Symbol, ...]:
        return _as_tuple(self.system.u_dep)

    @property
    def coordinates(self) -> tuple[Symbol, ...]:
        """All generalized coordinates: independent, then dependent."""
        return self.q_ind + self.q_dep

    @property
    def speeds(self) -> tuple[Symbol, ...]:
        """All generalized speeds: independent, then dependent."""
        return self.u_ind + self.u_dep

    @property
    def coordinate_rates(self) -> tuple[Symbol, ...]:
        return tuple(q.diff(t) for q in self.coordinates)

    @property
    def kdes(self) -> tuple[Expr, ...]:
        return _as_tuple(self.system.kdes)

    @property
    def holonomic_constraints(self) -> tuple[Expr, ...]:
        return _as_tuple(self.system.holonomic_constraints)

    @property
    def nonholonomic_constraints(self) -> tuple[Expr, ...]:
        return _as_tuple(self.system.nonholonomic_constraints)

    @property
    def bodies(self) -> tuple[Any, ...]:
        return tuple(self.system.bodies)

    @property
    def loads(self) -> tuple[Any, ...]:
        # sympy's System keeps actuators apart from loads; their loads act
        # all the same (System.form_eoms adds them too).
        return tuple(self.system.loads) + tuple(
            ld for act in self.system.actuators for ld in act.to_loads()
        )

    @property
    def degrees_of_freedom(self) -> int:
        return len(self.u_ind)

    @property
    def is_holonomic(self) -> bool:
        return not self.nonholonomic_constraints

    @cached_property
    def is_rheonomic(self) -> bool:
        """True when time appears explicitly or through prescribed motion.

        Cached: every random state asks, and the answer is a property of
        the declaration alone.
        """
        if self.specified:
            return True
        N = self.frame
        exprs = (
            list(self.kdes)
            + list(self.holonomic_constraints)
            + list(self.nonholonomic_constraints)
        )
        # Measure numbers and each frame's own orientation step: expressing
        # the velocities in N would compose the direction cosine matrices,
        # which grows exponentially along a chain of bodies.
        for body in self.bodies:
            exprs += measures(body.masscenter.vel(N))
        for _, _, dcm in orientation_steps(N):
            exprs += list(dcm)
        return has_explicit_time(*exprs)

    def __repr__(self) -> str:
        return (
            f"MechanicalSystem(name={self.name!r}, "
            f"coordinates={len(self.coordinates)}, "
            f"speeds={len(self.speeds)}, dof={self.degrees_of_freedom}, "
            f"holonomic={len(self.holonomic_constraints)}, "
            f"nonholonomic={len(self.nonholonomic_constraints)})"
        )

    # ------------------------------------------------------------------
    # Symbolic helpers every formulation uses
    # ------------------------------------------------------------------
    def substitute_specified(self, expr: Expr) -> Expr:
        """Replace prescribed functions of time (and their derivatives),
        and the auxiliary speeds (zero in every motion) with their rates.

        Each derivative's law is differentiated once and each shared
        subexpression rebuilt once (``Matrix.subs(...).doit()`` walks the
        tree of an acceleration expression whole, many times over)."""
        from eomcompare.symbolic.calculus import substitute

        aux = getattr(self, "_aux_zero", None)
        if aux:
            expr = sm.sympify(expr).xreplace(aux)
        if not self.specified:
            return expr
        expr = sm.sympify(expr)
        entries = list(expr) if isinstance(expr, sm.MatrixBase) else [expr]
        laws = {}
        for d in dynamic_symbols(entries):
            if d in self.specified:
                laws[d] = sm.sympify(self.specified[d])
            elif isinstance(d, sm.Derivative) and d.expr in self.specified:
                laws[d] = sm.sympify(self.specified[d.expr]).diff(*d.variable_count)
        if not laws:
            return expr
        out = substitute(entries, laws)
        if isinstance(expr, sm.MatrixBase):
            return sm.ImmutableMatrix(expr.rows, expr.cols, out)
        return out[0]

    @cached_property
    def kinematics(self) -> Kinematics:
        q = list(self.coordinates)
        u = list(self.speeds)
        qd = [qi.diff(t) for qi in q]
        kdes = sm.Matrix(list(self.kdes))
        Kqd, rest = linear_coefficients(kdes, qd)
        qdot_sol = solve_linear(Kqd, -rest)
        qdot = {qdi: sm.sympify(e) for qdi, e in zip(qd, qdot_sol)}
        quaternion_speeds = None
        if len(u) < len(kdes):
            # Unit quaternions: w = 4 F^T q', defined on the whole sphere.
            from .quaternions import quaternion_blocks, speeds_from_quaternion_rates

            blocks = quaternion_blocks(self.frame, self.q_ind, u, qdot)
            quaternion_speeds = speeds_from_quaternion_rates(
                blocks, q, u, qdot, solve_linear
            )
        if len(u) == len(kdes):
            Ku, rest_u = linear_coefficients(kdes, u)
            u_sol = solve_linear(Ku, -rest_u)
        elif quaternion_speeds is not None:
            u_sol = [quaternion_speeds[ui] for ui in u]
        else:
            # Speeds not one per coordinate: as many independent rows of the
            # kinematic equations, then of the velocity constraints, as
            # there are speeds (more coordinates: the other kinematic
            # equations hold on the motion; more speeds: the constraints
            # give the rest).
            from .redundancy import independent_speed_rows

            rows = list(kdes) + [
                sm.sympify(r).xreplace(self._aux_zero)
                for r in self.velocity_constraints
            ]
            keep = independent_speed_rows(self, rows, u)
            if len(keep) != len(u):
                raise ValueError(
                    f"the kinematic differential equations and velocity "
                    f"constraints determine {len(keep)} of the {len(u)} "
                    f"speeds {u} from the coordinate rates"
                )
            Ku, rest_u = linear_coefficients([rows[i] for i in keep], u)
            u_sol = solve_linear(Ku, -rest_u)
        u_of_qdot = {ui: sm.sympify(e) for ui, e in zip(u, u_sol)}
        vc = sm.Matrix(list(self.velocity_constraints))
        if len(vc):
            vc = vc.xreplace(qdot)
            A, b = linear_coefficients(vc, u)
        else:
            A, b = sm.zeros(0, len(u)), sm.zeros(0, 1)
        return Kinematics(
            MappingProxyType(qdot),
            MappingProxyType(u_of_qdot),
            sm.ImmutableMatrix(A),
            sm.ImmutableMatrix(b),
        )

    @cached_property
    def _velocity_rows(self) -> tuple[list[int], list[str]]:
        """Indices and labels of the independent rows of the declared
        velocity constraints (:mod:`eomcompare.systems.redundancy`)."""
        from .redundancy import independent_rows

        rows = list(self.system.velocity_constraints)
        nh = len(self.holonomic_constraints)
        derived = self.system._vel_constrs is None
        labels = [
            (
                f"derivative of holonomic constraint {i}"
                if derived and i < nh
                else "velocity constraint"
            )
            + f": {r}"
            for i, r in enumerate(rows)
        ]
        if len(rows) <= len(self.u_dep):
            return list(range(len(rows))), labels
        q = list(self.coordinates)
        qd = [qi.diff(t) for qi in q]
        Kqd, rest = linear_coefficients(sm.Matrix(list(self.kdes)), qd)
        qdot = dict(zip(qd, solve_linear(Kqd, -rest)))
        plain = [sm.sympify(r).xreplace(qdot) for r in rows]
        return independent_rows(self, plain, labels), labels

    @property
    def velocity_constraints(self) -> tuple[Expr, ...]:
        """The independent velocity constraint rows (``= 0``): the
        declaration's (``System.velocity_constraints``), redundant ones
        dropped with a :class:`~eomcompare.systems.redundancy.RedundantConstraintWarning`
        and listed in ``dropped_velocity_constraints``."""
        rows = list(self.system.velocity_constraints)
        return tuple(rows[i] for i in self._velocity_rows[0])

    @property
    def dropped_velocity_constraints(self) -> tuple[str, ...]:
        """Descriptions of the declared velocity constraint rows dropped
        as combinations of the others."""
        kept, labels = self._velocity_rows
        return tuple(lb for i, lb in enumerate(labels) if i not in kept)

    @property
    def redundant_holonomic_constraints(self) -> tuple[int, ...]:
        """Indices of the holonomic constraints that are combinations of
        the others on the constraint manifold (their velocity rows were
        dropped, :mod:`eomcompare.systems.redundancy`): empty unless the declaration
        has more holonomic constraints than dependent coordinates, as
        Bricard's mechanism.  The coordinates still satisfy every one."""
        nh = len(self.holonomic_constraints)
        if nh <= len(self.q_dep) or self.system._vel_constrs is not None:
            return ()
        kept = self._velocity_rows[0]
        return tuple(i for i in range(nh) if i not in kept)

    @property
    def velocity_constraints_as_declared(self) -> bool:
        """True when the velocity constraint rows are exactly the
        derivatives of the holonomic constraints followed by the
        nonholonomic ones (what the Lagrange family forms itself)."""
        return (
            self.system._vel_constrs is None and not self.dropped_velocity_constraints
        )

    def constants(self) -> set[Symbol]:
        """Every constant symbol appearing in the declaration."""
        return free_constants(self)

    def fingerprint(self) -> str:
        """A hash of the declaration's content, for caches keyed on content
        (:func:`eomcompare.systems.checks.fingerprint`)."""
        return fingerprint(self)

    # ------------------------------------------------------------------
    # Validation
    # ------------------------------------------------------------------
    def validate(self) -> MechanicalSystem:
        """Check the declaration with numbers; returns the declaration.

        The constructor checks the declaration symbolically.  This runs the
        numeric checks (:mod:`eomcompare.numeric.states`): the kinematic
        differential equations solvable for the rates at the initial state,
        the initial state consistent with every constraint (dependent parts
        solved by Newton's method), and the :attr:`declaration_analysis`
        (declared velocities against the derivatives of the positions, at
        random consistent states).  The harness validates every system it
        compares, and every formulation before it derives; the checks run
        once per declaration.

        Raises
        ------
        DeclarationError
            Naming the check that failed, with its residual.

        Examples
        --------
        >>> from eomcompare.systems import get_system
        >>> get_system("double_pendulum").validate().name
        'double_pendulum'
        """
        if self._validated:
            return self
        try:
            self.states.check_kinematic_equations()
            self.states.consistent_initial_state()
        except ConstraintError as exc:
            raise DeclarationError(str(exc)) from None
        self.declaration_analysis  # noqa: B018 (the analysis is the check)
        self._validated = True
        return self

    @cached_property
    def declaration_analysis(self) -> Any:
        """Velocities against positions and dependent solutions against the
        constraints at random consistent states
        (:func:`eomcompare.systems.consistency.analyse_declaration`), on
        first read.

        Raises
        ------
        DeclarationError
            When a declared velocity contradicts the positions or an
            explicit dependent solution violates the constraints.
        """
        from .consistency import analyse_declaration

        return analyse_declaration(self)

    # ------------------------------------------------------------------
    # The numeric half (numeric.states)
    # ------------------------------------------------------------------
    @cached_property
    def states(self) -> SystemStates:
        """Numbers from this declaration
        (a :class:`eomcompare.numeric.states.SystemStates`, built on first
        read): constraint residuals, Newton's method on the holonomic
        constraints, consistent and random states, energy, e.g.
        ``ms.states.random_state(seed=0)``,
        ``ms.states.consistent_initial_state()``."""
        return SystemStates(self)

    def kinetic_energy(self) -> Expr:
        """Kinetic energy of every body in (t, q, q')."""
        return sm.sympify(
            kinetic_energy(
                self.bodies, self.frame, FrameAlgebra(), dict(self.kinematics.u_of_qdot)
            )
        )
