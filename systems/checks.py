"""The checks of a declaration: what :class:`~eomcompare.systems.MechanicalSystem`'s
constructor asks of it symbolically, its constants and its fingerprint.

Each function reads a declaration through its attributes; the constructor
calls :func:`check_parameters`, :func:`check_mass_properties_of` and
:func:`check_structure`.  The checks with numbers are
:meth:`~eomcompare.systems.MechanicalSystem.validate`'s
(:mod:`eomcompare.numeric.states`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.calculus import dynamic_symbols, jacobian, subexpressions
from eomcompare.symbolic.frames import declared_orientations, dyadic_matrix
from eomcompare.symbolic.types import Expr, Matrix, ReferenceFrame, Symbol, Vector

from .errors import DeclarationError
from .physics import check_mass_properties

if TYPE_CHECKING:
    from .base import MechanicalSystem

__all__ = [
    "linear_coefficients",
    "measures",
    "orientation_steps",
    "path_measures",
    "is_linear",
    "check_mass_properties_of",
    "check_parameters",
    "check_structure",
    "fingerprint",
    "free_constants",
]

t = me.dynamicsymbols._t

#: The assumptions on a parameter's sign that its value is checked against.
#: A symbol's sign assumption -> what its value must satisfy.  A symbol
#: declared positive (or negative) may be given zero: what sympy assumes of
#: it while deriving (``Abs(x) = x``, ``sqrt(x**2) = x``) holds at zero as
#: well, and zero is how a declaration switches a load off (``g`` or an
#: applied force ``F``); a value of the wrong sign is refused.
_SIGN_FACTS = {
    "positive": "nonnegative",
    "negative": "nonpositive",
    "nonnegative": "nonnegative",
    "nonpositive": "nonpositive",
    "zero": "zero",
    "nonzero": "nonzero",
}


def linear_coefficients(
    exprs: Sequence[Expr] | Matrix, variables: Sequence[Symbol]
) -> tuple[Matrix, Matrix]:
    """Return (A, b) with exprs = A * variables + b, checking linearity."""
    rows = sm.Matrix(list(exprs))
    var = list(variables)
    if not var:
        return sm.zeros(len(rows), 0), rows
    A = jacobian(rows, var)
    zero = {v: 0 for v in var}
    b = rows.xreplace(zero)
    return A, b


def measures(vec: Vector) -> list[Expr]:
    """The measure numbers of a sympy vector, frame by frame, WITHOUT
    expressing it in one frame (composing direction cosine matrices grows
    exponentially along a chain of bodies oriented from their parents)."""
    return [] if vec == 0 else [x for m, _ in vec.args for x in m]


def path_measures(path: Sequence[Any], steps: str) -> list[Expr]:
    """The measure numbers of each declared step along ``path`` (points
    and their ``_pos_dict``, or frames and their ``_ang_vel_dict``, as
    sympy's ``pos_from`` and ``ang_vel_in`` find them): the constants of
    the sum without forming it, which along a chain of n bodies adds n
    vectors for every body."""
    return [x for a, b in zip(path, path[1:]) for x in measures(getattr(a, steps)[b])]


def orientation_steps(
    N: ReferenceFrame,
) -> list[tuple[ReferenceFrame, ReferenceFrame, Matrix]]:
    """(frame, parent, direction cosine matrix) of every frame connected to
    N, each step as declared."""
    seen, stack = {N}, [N]
    steps: list[tuple[ReferenceFrame, ReferenceFrame, Matrix]] = []
    while stack:
        F = stack.pop()
        for G, dcm in declared_orientations(F).items():
            if G not in seen:
                seen.add(G)
                stack.append(G)
                steps.append((G, F, dcm))
    return steps


def is_linear(exprs: Sequence[Expr], variables: Sequence[Symbol]) -> bool:
    A, _ = linear_coefficients(exprs, variables)
    syms = set(variables)
    return not any(a.has(*syms) for a in A) if syms else True


def free_constants(ms: MechanicalSystem) -> set[Symbol]:
    """Every constant symbol of the declaration, read in one walk over
    the distinct subexpressions (see :meth:`~eomcompare.systems.MechanicalSystem.constants`)."""
    N = ms.frame
    exprs = (
        list(ms.kdes)
        + list(ms.holonomic_constraints)
        + list(ms.nonholonomic_constraints)
    )
    for _, _, dcm in orientation_steps(N):
        exprs += list(dcm)
    for body in ms.bodies:
        exprs.append(sm.sympify(body.mass))
        exprs += measures(body.masscenter.vel(N))
        try:
            path = body.masscenter._pdict_list(ms.system.fixed_point, 0)
        except ValueError:
            path = []
        exprs += path_measures(path, "_pos_dict")
        if isinstance(body, me.RigidBody):
            exprs += list(dyadic_matrix(body.central_inertia, body.frame))
            exprs += path_measures(body.frame._dict_list(N, 1), "_ang_vel_dict")
    for load in ms.loads:
        exprs += measures(load.vector)
        if isinstance(load, me.Force):
            exprs += measures(load.point.vel(N))
    if ms.potential_energy is not None:
        exprs.append(ms.potential_energy)
    exprs += list(ms.specified.values())
    exprs += list(ms.dependent_solutions.values())
    # One walk over the shared subtrees: ``free_symbols`` expression by
    # expression would walk a chain's nested velocities once per path,
    # twice as long with each link.
    symbols = {e for e in subexpressions(exprs) if e.is_Symbol}
    symbols.discard(t)
    return symbols


def check_parameters(ms: MechanicalSystem) -> None:
    """Each given value is a finite number that its symbol's assumptions
    allow (:data:`_SIGN_FACTS`): ``Symbol("m", positive=True)`` given -1
    is refused, given 0 accepted."""
    for k, v in ms.parameters.items():
        if not np.isfinite(v):
            raise DeclarationError(
                f"system {ms.name!r}: parameter {k} is given {v}, not a finite number"
            )
        value = sm.Float(v)
        facts = _SIGN_FACTS
        if k.is_positive or k.is_negative:
            # What positive (negative) implies, nonzero among it, is
            # not asked of the value: zero is allowed.
            facts = {f: a for f, a in facts.items() if f in ("positive", "negative")}
        for fact, allowed in facts.items():
            if (
                getattr(k, f"is_{fact}") is True
                and getattr(value, f"is_{allowed}") is False
            ):
                raise DeclarationError(
                    f"system {ms.name!r}: parameter {k} is declared "
                    f"{fact} and given {v:g}"
                )


def check_mass_properties_of(ms: MechanicalSystem) -> None:
    """Each body's mass and central inertia, where the parameter values
    make them numbers, are those of a real body
    (:func:`eomcompare.systems.physics.check_mass_properties`).  The check reads
    the default values: a catalogue system with symbolic masses and
    inertias is checked at the values it ships with."""
    values = {k: sm.Float(v) for k, v in ms.parameters.items()}
    for body in ms.bodies:
        owner = f"system {ms.name!r}: body {body.name!r}"
        mass = sm.sympify(body.mass).xreplace(values)
        if not mass.is_number:
            continue  # a constant without a value: _check_structure names it
        inertia = None
        if isinstance(body, me.RigidBody):
            I = dyadic_matrix(body.central_inertia, body.frame).xreplace(values)
            if all(x.is_number for x in I):
                inertia = np.array(I.evalf(), dtype=float)
        check_mass_properties(owner, mass, inertia)


def check_structure(ms: MechanicalSystem) -> None:
    """The symbolic checks of the declaration (the constructor's)."""
    problems = []
    q_dep, u_dep = ms.q_dep, ms.u_dep
    nh, nnh = len(ms.holonomic_constraints), len(ms.nonholonomic_constraints)
    # More holonomic constraints than dependent coordinates are
    # redundant ones (Bricard's mechanism): their velocity rows are
    # reduced by rank on the constraint manifold, and the check below
    # asks that the independent rows match the dependent speeds.
    if len(q_dep) > nh:
        problems.append(
            f"{len(q_dep)} dependent coordinates {list(q_dep)} but {nh} "
            f"holonomic constraints: they must be equal in number (or "
            f"the constraints more, when some are redundant)"
        )
    n_vc = len(ms.system.velocity_constraints)
    if len(u_dep) > n_vc:
        problems.append(
            f"{len(u_dep)} dependent speeds {list(u_dep)} but {n_vc} "
            f"velocity constraints ({nh} holonomic + {nnh} nonholonomic "
            f"constraints): they must be equal in number"
        )
    aux_in = (
        [e for e in ms.holonomic_constraints if sm.sympify(e).has(*ms.u_aux)]
        if ms.u_aux
        else []
    )
    if aux_in:
        problems.append(
            f"auxiliary speeds {list(ms.u_aux)} appear in holonomic "
            f"constraints {aux_in}: they may appear only in velocities, "
            f"kinematic equations and velocity constraints"
        )
    speeds_and_rates = list(ms.speeds) + list(ms.coordinate_rates)
    for i, c in enumerate(ms.nonholonomic_constraints):
        if not is_linear([c], speeds_and_rates):
            problems.append(
                f"nonholonomic constraint {i} ({c}) is not linear in the speeds"
            )
    kdes = ms.kdes
    qd = list(ms.coordinate_rates)
    if len(kdes) != len(qd):
        problems.append(
            f"{len(kdes)} kinematic differential equations for "
            f"{len(qd)} coordinates: they cannot be solved for the "
            f"coordinate rates"
        )
    elif not is_linear(kdes, qd + list(ms.speeds)):
        problems.append(
            "the kinematic differential equations are not linear in the "
            "coordinate rates and speeds: they cannot be solved for the "
            "coordinate rates"
        )
    # Constants without a value and unknown functions of time.
    constants = ms._declared_constants
    missing = sorted(constants - set(ms.parameters), key=str)
    if missing:
        problems.append(f"constants without a value in parameters: {missing}")
    known = (
        set(ms.coordinates)
        | set(ms.speeds)
        | set(ms.specified)
        | set(ms.u_aux)
        | set(ms.reaction_unknowns)
    )
    exprs = (
        list(kdes) + list(ms.holonomic_constraints) + list(ms.nonholonomic_constraints)
    )
    for body in ms.bodies:
        exprs += measures(body.masscenter.vel(ms.frame))
    for load in ms.loads:
        exprs += measures(load.vector)
    for _, _, dcm in orientation_steps(ms.frame):
        exprs += list(dcm)
    dyn = dynamic_symbols(exprs)
    unknown = sorted(
        (d for d in dyn if not isinstance(d, sm.Derivative) and d not in known),
        key=str,
    )
    if unknown:
        problems.append(
            f"functions of time that are neither coordinates, speeds nor "
            f"specified: {unknown}"
        )
    if problems:
        raise DeclarationError(
            f"system {ms.name!r} is inconsistent:\n- " + "\n- ".join(problems)
        )
    if not ms.coordinate_rates:
        raise DeclarationError(f"system {ms.name!r} has no coordinates")
    u_dep, nh = ms.u_dep, len(ms.holonomic_constraints)
    nnh = len(ms.nonholonomic_constraints)
    if len(ms.velocity_constraints) != len(u_dep):
        raise DeclarationError(
            f"system {ms.name!r}: {len(u_dep)} dependent speeds "
            f"{list(u_dep)} but {len(ms.velocity_constraints)} "
            f"independent velocity constraints (of "
            f"{len(ms.system.velocity_constraints)} declared, {nh} "
            f"holonomic + {nnh} nonholonomic): they must be equal in "
            f"number"
        )
    try:
        ms.kinematics  # noqa: B018 (building it is the check)
    except (sm.matrices.exceptions.NonInvertibleMatrixError, ValueError) as exc:
        raise DeclarationError(
            f"system {ms.name!r}: the kinematic differential equations "
            f"cannot be solved for the coordinate rates ({exc})"
        ) from None


def fingerprint(ms: MechanicalSystem) -> str:
    """A hash of the declaration's content, for caches keyed on content."""
    N = ms.frame
    parts = [ms.name, str(sorted(ms.options.items(), key=str))]
    parts += [
        sm.srepr(sm.Tuple(*ms.coordinates)),
        sm.srepr(sm.Tuple(*ms.speeds)),
        sm.srepr(sm.Tuple(*ms.kdes)),
        sm.srepr(sm.Tuple(*ms.holonomic_constraints)),
        sm.srepr(sm.Tuple(*ms.nonholonomic_constraints)),
    ]

    def vector(vec: Vector) -> str:
        # Measure numbers with their frames (orientations come below).
        return (
            "0"
            if vec == 0
            else ";".join(F.name + sm.srepr(sm.ImmutableMatrix(m)) for m, F in vec.args)
        )

    for G, F, dcm in orientation_steps(N):
        parts.append(f"{G.name}<{F.name}" + sm.srepr(sm.ImmutableMatrix(dcm)))
    for body in ms.bodies:
        parts.append(body.name + sm.srepr(body.mass))
        parts.append(vector(body.masscenter.vel(N)))
        if isinstance(body, me.RigidBody):
            parts.append(
                sm.srepr(
                    sm.ImmutableMatrix(dyadic_matrix(body.central_inertia, body.frame))
                )
            )
            parts.append(vector(body.frame.ang_vel_in(N)))
    for load in ms.loads:
        parts.append(str(load.location) + vector(load.vector))
    parts.append(str(sorted((str(k), v) for k, v in ms.parameters.items())))
    parts.append(str(sorted((str(k), str(v)) for k, v in ms.specified.items())))
    parts.append(
        str(sorted((str(k), str(v)) for k, v in ms.dependent_solutions.items()))
    )
    parts.append(str(ms.potential_energy))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
