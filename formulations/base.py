"""The contract every formulation meets.

How to write a new formulation
------------------------------
1. Subclass :class:`Formulation`; set ``name`` and the ability flags
   (``handles_holonomic``, ``handles_nonholonomic``, ``handles_rheonomic``,
   ``uses_multipliers``, ``needs_dependent_solutions``,
   ``needs_velocities_from_positions``) and ``version``
   (bump it whenever the equations it produces change: caches key on it).
2. Implement ``_derive(self, system, stage)``: read the
   :class:`~eomcompare.systems.MechanicalSystem` and return a :class:`Derivation`.
   Wrap each stage of the work in ``with stage("name"):`` so it is timed.
   Do not count operations or time the whole: :meth:`Formulation.derive`
   does that, identically for every formulation.
3. Decorate the class with :func:`register` so that the harness, the CLI and
   the tests pick it up from :data:`FORMULATIONS`.
4. Refuse what the method cannot do with :class:`UnsupportedSystemError`
   and a reason; never return a wrong answer.

The numeric contract (:mod:`eomcompare.numeric.model`) is generated from the
returned expressions in the same way for every formulation.

This module holds the base class, the two functions that take its
classes (:func:`register`, :func:`get_formulation`) and what every
derivation shares (operation counts, the dependent speeds).  The registry
by name and the options a name carries are in
:mod:`eomcompare.formulations.registry`; what a derivation returns
(:class:`Derivation`, :class:`EquationsOfMotion`, :func:`speed_form`,
:func:`rate_form`) in :mod:`eomcompare.formulations.result`.  Every name
is importable from here and from :mod:`eomcompare.formulations`.
"""

from __future__ import annotations

import abc
import inspect
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.counting import count_kinds, count_ops
from eomcompare.symbolic.linsolve import ADJUGATE_MAX, solve_linear
from eomcompare.symbolic.text import display_name
from eomcompare.symbolic.types import Expr, Matrix, Symbol
from eomcompare.systems import MechanicalSystem, get_system

from .errors import UnsupportedSystemError
from .registry import (
    ABILITIES,
    FORMULATIONS,
    REFERENCE,
    check_options,
    formulation_from_spec,
    formulation_names,
    peer_of,
    split_formulation_spec,
)
from .result import Derivation, EquationsOfMotion, LazyExtras, rate_form, speed_form

__all__ = [
    "Formulation",
    "EquationsOfMotion",
    "Derivation",
    "FORMULATIONS",
    "register",
    "get_formulation",
    "split_formulation_spec",
    "UnsupportedSystemError",
    "canonical_counts",
    "count_operations",
    "counted_in",
    "speed_form",
    "rate_form",
    "formulation_names",
    "LazyExtras",
    "solve_dependent_speeds",
    "constraint_samples",
    "REFERENCE",
    "ABILITIES",
    "check_options",
    "peer_of",
]

t = me.dynamicsymbols._t

#: ``stage("name")``: the context manager a formulation's ``_derive`` wraps
#: each stage of its work in, so that the stage is timed.
Stage = Callable[[str], AbstractContextManager[None]]

_F = TypeVar("_F", bound="type[Formulation]")


def register(cls: _F) -> _F:
    """Class decorator adding a formulation to :data:`FORMULATIONS`.

    Validates the declaration of the class: a non-empty ``name`` not taken,
    a concrete class (``_derive`` implemented), every flag of
    :data:`ABILITIES` a bool (a flag left unset is refused, not read as
    true), ``version`` a string and ``peer`` the name of a peer or None.

    Raises
    ------
    TypeError
        For a class that is not a concrete Formulation subclass or a flag
        that is not a bool.
    ValueError
        For a missing or taken name.
    """
    if not (isinstance(cls, type) and issubclass(cls, Formulation)):
        raise TypeError(f"{cls!r} is not a Formulation subclass")
    if not isinstance(cls.name, str) or not cls.name:
        raise ValueError(f"{cls.__name__} must set a non-empty class attribute name")
    if inspect.isabstract(cls):
        raise TypeError(
            f"{cls.__name__} does not implement {sorted(cls.__abstractmethods__)}"
        )
    bad = [a for a in ABILITIES if not isinstance(getattr(cls, a), bool)]
    if bad:
        raise TypeError(
            f"{cls.__name__} must set the ability flags {bad} to True or "
            f"False (every one of {list(ABILITIES)} is declared)"
        )
    if not isinstance(cls.version, str):
        raise TypeError(
            f"{cls.__name__}.version must be a str, not {type(cls.version).__name__}"
        )
    if cls.peer is not None and not isinstance(cls.peer, str):
        raise TypeError(
            f"{cls.__name__}.peer must be a formulation name or None, not {cls.peer!r}"
        )
    if cls.name in FORMULATIONS and FORMULATIONS[cls.name] is not cls:
        raise ValueError(f"formulation {cls.name!r} is registered already")
    FORMULATIONS[cls.name] = cls
    return cls


def get_formulation(
    name_or_class: str | Formulation | type[Formulation], **options: Any
) -> Formulation:
    """An instance of the named (or given) formulation.

    A name may carry options, ``"modified_lagrange:dependent=implicit"``
    (:func:`split_formulation_spec`); keyword ``options`` are added to
    them.

    Raises
    ------
    ValueError
        For an unknown name, listing the registered ones; for an option
        the formulation does not have, listing those it has; for an option
        given both in the name and as a keyword.

    Examples
    --------
    >>> get_formulation("modified_lagrange:dependent=implicit").options["dependent"]
    'implicit'
    """
    if isinstance(name_or_class, Formulation):
        return name_or_class
    if isinstance(name_or_class, type) and issubclass(name_or_class, Formulation):
        return name_or_class(**options)
    return formulation_from_spec(name_or_class, **options)


def _flat(exprs: Sequence[Expr | Matrix]) -> list[Expr]:
    out: list[Expr] = []
    for e in exprs:
        if isinstance(e, sm.MatrixBase):
            out.extend(e)
        else:
            out.append(sm.sympify(e))
    return out


def count_operations(*exprs: Expr | Matrix, raw: int | None = None) -> dict[str, Any]:
    """Operation counts of expressions: raw, after ``sympy.cse``, by kind.

    ``raw``, when the caller has counted already, is taken as given.  It
    is ``sympy.count_ops``'s number, computed once per distinct
    subexpression (:func:`eomcompare.symbolic.counting.count_ops`): the expressions
    share subtrees, and a walk of every path takes minutes on a spatial
    chain of six bodies.

    Returns
    -------
    dict
        ``{"raw": int, "cse": int, "cse_by_kind": {"ADD": .., "MUL": ..}}``;
        the cse count includes the common subexpressions themselves.
    """
    flat = _flat(exprs)
    if raw is None:
        raw = count_ops(*flat)
    replacements, reduced = sm.cse(flat, order="none")
    # sympy.count_ops(e, visual=True) of each, summed by kind: that of the
    # expressions walked once per distinct node (count_kinds), of anything
    # else (a relation) as sympy counts it.
    out = [r[1] for r in replacements] + list(reduced)
    plain = [e for e in out if isinstance(e, sm.Expr) and not e.is_Relational]
    by_kind = count_kinds(*plain)
    for e in out:
        if not (isinstance(e, sm.Expr) and not e.is_Relational):
            visual = sm.count_ops(e, visual=True)
            for k, v in sm.sympify(visual).as_coefficients_dict().items():
                if k != 1 and v != 0:
                    by_kind[str(k)] = by_kind.get(str(k), 0) + int(v)
    by_kind = dict(sorted(by_kind.items()))
    return {
        "raw": raw,
        "cse": int(sum(by_kind.values())),
        "cse_by_kind": by_kind,
    }


#: The contexts derivations take their operation counts in, innermost
#: last (:func:`counted_in`).
_COUNTING: list[Callable[[], AbstractContextManager[Any]]] = []


@contextmanager
def counted_in(context: Callable[[], AbstractContextManager[Any]]) -> Iterator[None]:
    """In the block, a derivation takes its operation counts, after its
    timed part, inside ``context()`` (the harness: with the heap its case
    process holds frozen, which the collections the counts trigger then
    leave alone; the derivation itself is timed with the heap as it is).
    The counts are the same whatever the context."""
    _COUNTING.append(context)
    try:
        yield
    finally:
        _COUNTING.pop()


#: Seconds of CPU time ``sympy.trigsimp`` may take over the entries of one
#: derivation in the canonical count (:func:`canonical_counts`), None: not
#: run.  Off by default: after steps 1-4 of the pass it found only common
#: factors on the catalogue (34 -> 32 on double_pendulum, alike for every
#: formulation) at three to five times the derivation's own time, and a
#: cap that bites leaves some entries simplified and others not, which
#: makes the count depend on the machine's speed.
TRIGSIMP_CAP: float | None = None
#: Entries larger than this (``count_ops``) are not given to ``trigsimp``:
#: on them it takes seconds and rarely finds what steps 1-4 missed.
TRIGSIMP_MAX_OPS = 24


def canonical_counts(
    mass_matrix: Matrix,
    forcing: Matrix,
    parameters: Any = (),
    *,
    assigned: Any = None,
    trig_cap: float | None = TRIGSIMP_CAP,
    as_derived: int | dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Counts of the canonical form (:func:`eomcompare.symbolic.canonical.canonical`)
    of a mass matrix and forcing, the same pass for every formulation.

    ``as_derived``, the cse count of the expressions as derived (``cse``),
    bounds the pass: where the canonical form counts more after cse (a
    rewrite that shrank the tree but lost subexpressions cse would have
    shared), the expressions as derived are counted instead and
    ``canonical_form`` says ``"as derived"``.  The rule is the same for
    every formulation: a normal form for counting never adds operations.
    Given as :func:`count_operations`' result for the same expressions
    (``cse`` and ``cse_by_kind``), it is also the count taken where the
    canonical form is the expressions as derived, node for node, or
    counts more, instead of a second ``cse`` of the same expressions.

    ``canonical`` is the cse count (``sympy.count_ops`` units, as ``cse``)
    of the canonical M and f; ``per_evaluation`` the literature's count
    (:func:`eomcompare.symbolic.literature_counts.forward_dynamics_counts_of`:
    multiplications and additions, parameter-only parts once per parameter
    set) of the canonical M and f with the solve of the unknowns as the
    compiled backend does it, LDL^T or LU as it decides from the matrix as
    derived.  An evaluation order (``assigned``, the articulated-body
    recursion) is rewritten definition by definition and has no solve.

    Returns
    -------
    dict
        ``canonical``, ``canonical_by_kind``, ``trigsimp`` (``off``
        without a cap, else ``applied``, ``capped`` or ``unavailable`` off
        the main thread), ``canonical_form`` (``"canonical"``, or ``"as
        derived"`` where that counts less),
        ``canonical_s`` (seconds of the pass and its counts) and
        ``per_evaluation``: ``{"mul", "add", "total", "calls", "solve_mul",
        "solve_add", "unknowns"}``, ``total`` = ``mul + add``.
    """
    import dataclasses

    from eomcompare.symbolic.canonical import canonical
    from eomcompare.symbolic.literature_counts import forward_dynamics_counts_of

    start = time.perf_counter()
    M = sm.Matrix(mass_matrix)
    f = sm.Matrix(forcing)
    n = M.shape[0]
    if assigned is None:
        exprs = [*M, *f]
    else:
        exprs = [*assigned.definitions, *assigned.outputs]
    form = canonical(exprs, trig_cap=trig_cap, trig_max_ops=TRIGSIMP_MAX_OPS)
    out = list(form.exprs)
    derived = as_derived if isinstance(as_derived, dict) else None
    bound = derived["cse"] if derived is not None else as_derived
    from eomcompare.symbolic.canonical import same_expression

    memo: dict[tuple[int, int], bool] = {}
    if derived is not None and all(
        same_expression(a, sm.sympify(b), memo) for a, b in zip(out, exprs)
    ):
        # Nothing rewritten: the count of the expressions as derived.
        cse = derived
    else:
        cse = count_operations(*out, raw=0)
    used = "canonical"
    if bound is not None and cse["cse"] > bound:
        out, used = list(exprs), "as derived"
        cse = derived if derived is not None else count_operations(*out, raw=0)
    if assigned is None:
        Mc = sm.Matrix(n, n, out[: n * n])
        fc = sm.Matrix(out[n * n :])
        from eomcompare.numeric.c_code import is_structurally_symmetric

        per = forward_dynamics_counts_of(
            Mc, fc, parameters, symmetric=is_structurally_symmetric(M)
        )
    else:
        k = len(assigned.definitions)
        rewritten = dataclasses.replace(
            assigned, definitions=tuple(out[:k]), outputs=tuple(out[k:])
        )
        per = forward_dynamics_counts_of(None, None, parameters, assigned=rewritten)
    total = per["total"]
    return {
        "canonical": cse["cse"],
        "canonical_by_kind": dict(cse["cse_by_kind"]),
        "trigsimp": form.trigsimp,
        "canonical_form": used,
        "canonical_s": time.perf_counter() - start,
        "per_evaluation": {
            "mul": total.mul,
            "add": total.add,
            "total": total.mul + total.add,
            "calls": dict(sorted(total.calls.items())),
            "solve_mul": per["solve"].mul,
            "solve_add": per["solve"].add,
            "unknowns": n,
        },
    }


def _speed_count_reason(system: MechanicalSystem) -> str:
    """Why the speeds are not one per coordinate, from the declaration: a
    quaternion's four coordinates with three rates, coordinates that the
    kinematic equations move with other coordinates' speeds, or speeds
    tied by velocity constraints."""
    from eomcompare.symbolic.frames import connected_frames, declared_orientations

    n_q, n_u = len(system.coordinates), len(system.speeds)
    if n_u > n_q:
        return (
            f"{n_u - n_q} more speeds than coordinates: some speeds are "
            f"velocities tied by constraints, which the kinetic energy would "
            f"wrongly enforce"
        )
    coords = set(system.coordinates)
    quaternions = []
    for F in connected_frames(system.frame):
        for dcm in declared_orientations(F).values():
            four = sorted(
                (x for x in sm.Matrix(dcm).atoms(sm.Function) if x in coords), key=str
            )
            if len(four) == 4 and four not in quaternions:
                quaternions.append(four)
    parts = [
        f"the quaternion {[display_name(x) for x in four]} has four "
        f"coordinates and three rates, so the kinetic energy is degenerate in "
        f"its coordinate rates"
        for four in quaternions
    ]
    rest = n_q - n_u - len(quaternions)
    if rest > 0:
        parts.append(
            f"{rest} coordinate(s) "
            + ("beyond the quaternions' " if quaternions else "")
            + "have no speed of their own: the kinematic equations move them "
            "with the other coordinates' speeds (a contact point's position "
            "under rolling embedded in the velocities), a constraint the "
            "kinetic energy in the coordinate rates would not see; declare "
            "such a constraint as nonholonomic, with a speed per coordinate"
        )
    return "; ".join(parts)


class _StageTimer:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times[name] = self.times.get(name, 0.0) + time.perf_counter() - start


class Formulation(abc.ABC):
    """Base class of every formulation backend (abstract: ``_derive``).

    Class attributes state what a backend can do; :meth:`derive` checks them
    against the system before any work is done.

    Parameters
    ----------
    count_ops : bool
        Count operations of the result (raw and after cse).  Counting the
        huge expressions of some peers takes long; the harness can turn it
        off.
    """

    name: ClassVar[str] = NotImplemented
    version: ClassVar[str] = "1"
    # No default: register() refuses a class that does not say.
    handles_holonomic: ClassVar[bool] = NotImplemented
    handles_nonholonomic: ClassVar[bool] = NotImplemented
    handles_rheonomic: ClassVar[bool] = True
    uses_multipliers: ClassVar[bool] = False
    needs_dependent_solutions: ClassVar[bool] = False
    #: True for methods that differentiate a kinetic energy with respect to
    #: the coordinate rates, and so need every velocity to be the time
    #: derivative of a position (see :mod:`eomcompare.systems.consistency`).
    needs_velocities_from_positions: ClassVar[bool] = False
    #: True for methods with multipliers that form their constraint rows
    #: from the independent velocity constraints when these were reduced by
    #: rank (or set by the user), instead of refusing such a system.
    accepts_velocity_constraint_rows: ClassVar[bool] = False
    #: True for methods in coordinate rates that take a unit quaternion's
    #: four coordinates with three speeds
    #: (:mod:`eomcompare.formulations.redundant_coordinates`).
    handles_quaternions: ClassVar[bool] = False
    #: How the method treats redundant holonomic constraints (more than
    #: dependent coordinates, Bricard's mechanism), in words; None for a
    #: method with multipliers or coordinate rates that refuses them.
    #: Methods that solve for dependent speeds use the independent rows
    #: (:mod:`eomcompare.systems.redundancy`) like any other reduced set.
    redundant_constraints: ClassVar[str | None] = None
    #: True for wrappers of other software (the field's tools, for reference).
    is_peer: ClassVar[bool] = False
    #: True for algorithms defined on trees only (composite-body sums, the
    #: articulated-body recursion): they refuse every other system with
    #: the reason, which is the method's scope, not a failure.
    needs_tree: ClassVar[bool] = False
    #: False for formulations the default comparison (``python -m
    #: compare`` without ``--formulations``) leaves out; the benchmark
    #: (``python -m eomcompare bench``) runs every registered formulation.
    in_default_comparison: ClassVar[bool] = True
    #: One line for listings.
    summary: ClassVar[str] = ""
    #: The peer (a wrapper of the field's tool) this method is measured
    #: against in the benchmark, or None.
    peer: ClassVar[str | None] = None

    #: The options :meth:`_set_options` has set, beside ``count_ops``.
    _option_names: tuple[str, ...] = ()

    def __init__(self, *, count_ops: bool = True) -> None:
        self.count_ops = bool(count_ops)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    def _set_options(self, **choices: tuple[Any, Sequence[Any]]) -> None:
        """Validate options by :func:`check_options` (``name=(value,
        valid)``), keep each as the attribute of its name and report it in
        :attr:`options`: what a subclass's ``__init__`` does with its
        keyword options."""
        check_options(self.name, **choices)
        for opt, (value, _) in choices.items():
            setattr(self, opt, value)
        self._option_names = (*self._option_names, *choices)

    @property
    def options(self) -> dict[str, Any]:
        """The options the instance was made with (they key the cache)."""
        return {"count_ops": self.count_ops} | {
            k: getattr(self, k) for k in self._option_names
        }

    def check_supported(self, system: MechanicalSystem) -> None:
        """Raise :class:`UnsupportedSystemError` for what the method lacks."""
        if system.holonomic_constraints and not self.handles_holonomic:
            raise UnsupportedSystemError(
                f"{self.name}: system {system.name!r} has holonomic "
                f"constraints, which this formulation does not handle"
            )
        if system.nonholonomic_constraints and not self.handles_nonholonomic:
            raise UnsupportedSystemError(
                f"{self.name}: system {system.name!r} has nonholonomic "
                f"constraints, which this formulation does not handle"
            )
        if system.is_rheonomic and not self.handles_rheonomic:
            raise UnsupportedSystemError(
                f"{self.name}: system {system.name!r} is rheonomic (time "
                f"appears explicitly), which this formulation does not handle"
            )
        if self.needs_dependent_solutions:
            missing = [q for q in system.q_dep if q not in system.dependent_solutions]
            if missing:
                raise UnsupportedSystemError(
                    f"{self.name}: system {system.name!r} declares no "
                    f"explicit solution for dependent coordinates {missing}"
                )
        if (
            self.needs_velocities_from_positions
            and len(system.speeds) != len(system.coordinates)
            and not self._takes_quaternions(system)
        ):
            raise UnsupportedSystemError(
                f"{self.name}: system {system.name!r} has "
                f"{len(system.speeds)} speeds for {len(system.coordinates)} "
                f"coordinates; this formulation forms the kinetic energy in "
                f"the coordinate rates, which needs one speed per coordinate "
                f"({_speed_count_reason(system)}): use kane, gibbs_appell or "
                f"sympy_kane, or declare one speed per coordinate"
            )
        redundant_only = self.redundant_constraints is not None and len(
            system.redundant_holonomic_constraints
        ) == len(system.dropped_velocity_constraints)
        if (
            (self.uses_multipliers or self.needs_velocities_from_positions)
            and not self.accepts_velocity_constraint_rows
            and not system.velocity_constraints_as_declared
            and not redundant_only
        ):
            dropped = system.dropped_velocity_constraints
            raise UnsupportedSystemError(
                f"{self.name}: system {system.name!r} "
                + (
                    f"has redundant velocity constraints ({'; '.join(dropped)})"
                    if dropped
                    else "sets System.velocity_constraints itself"
                )
                + ", but this formulation forms its constraint rows from the "
                "holonomic and nonholonomic constraints, which must then be "
                "independent: declare the independent ones only"
            )
        analysis = getattr(system, "declaration_analysis", None)
        if (
            self.needs_velocities_from_positions
            and analysis is not None
            and not analysis.velocities_are_derivatives
        ):
            raise UnsupportedSystemError(
                f"{self.name}: system {system.name!r} declares {analysis.reason()}"
            )

    def _takes_quaternions(self, system: MechanicalSystem) -> bool:
        """True when the extra coordinates are unit quaternions this
        method treats (:mod:`eomcompare.formulations.redundant_coordinates`)."""
        if not self.handles_quaternions:
            return False
        from .redundant_coordinates import quaternion_treatment

        try:
            quaternion_treatment(system)
        except UnsupportedSystemError:
            return False
        return True

    def derive(self, system: MechanicalSystem | str) -> EquationsOfMotion:
        """Derive the equations of motion of ``system``.

        Parameters
        ----------
        system : MechanicalSystem or str
            A declaration, or a catalogue name.

        Raises
        ------
        UnsupportedSystemError
            When the system needs what this formulation cannot do.
        DeclarationError
            When the declaration fails its numeric checks
            (:meth:`~eomcompare.systems.MechanicalSystem.validate`).
        """
        if isinstance(system, str):
            system = get_system(system)
        if not isinstance(system, MechanicalSystem):
            raise TypeError(
                f"system must be a MechanicalSystem or a catalogue name, not "
                f"{type(system).__name__}"
            )
        # The numeric checks of the declaration, once per declaration: no
        # equations are derived from one that contradicts itself.
        system.validate()
        self.check_supported(system)
        timer = _StageTimer()
        start = time.perf_counter()
        parts = self._derive(system, timer.stage)
        if not isinstance(parts, Derivation):
            raise TypeError(
                f"{type(self).__name__}._derive must return a "
                f"Derivation, not {type(parts).__name__}"
            )
        if system.reactions_in_motion:
            # Reactions in the forcing (friction on a normal force): replaced
            # by the constraint forces the method recovered, one step for
            # every formulation.
            from .auxiliary import eliminate_reactions

            with timer.stage("constraint_forces"):
                parts = eliminate_reactions(system, self.name, parts)
        total = time.perf_counter() - start
        M = sm.ImmutableMatrix(parts.mass_matrix)
        f = sm.ImmutableMatrix(parts.forcing)
        nz = len(parts.unknowns)
        if M.shape != (nz, nz) or f.shape != (nz, 1):
            raise RuntimeError(
                f"{self.name}: mass matrix {M.shape} and forcing {f.shape} do "
                f"not fit {nz} unknowns"
            )
        timings = dict(timer.times)
        timings["total"] = total
        op_counts: dict[str, Any] = {}
        if self.count_ops:
            with _COUNTING[-1]() if _COUNTING else nullcontext():
                op_counts = self._counts(system, parts, M, f, timings)
        return EquationsOfMotion(
            system=system,
            formulation=self.name,
            states=tuple(parts.states),
            unknowns=tuple(parts.unknowns),
            mass_matrix=M,
            forcing=f,
            state_rates=sm.ImmutableMatrix(parts.state_rates),
            accelerations=sm.ImmutableMatrix(parts.accelerations),
            state_map=sm.ImmutableMatrix(parts.state_map),
            coordinate_map=sm.ImmutableMatrix(parts.coordinate_map),
            kinematic_equations=system.kdes,
            multipliers=tuple(parts.multipliers),
            op_counts=MappingProxyType(op_counts),
            timings=MappingProxyType(timings),
            # A read-only copy; LazyExtras (read-only, computing on first
            # read) is kept as is.
            extras=(
                parts.extras
                if isinstance(parts.extras, LazyExtras)
                else MappingProxyType(dict(parts.extras))
            ),
            options=MappingProxyType(self.options),
        )

    @staticmethod
    def _counts(
        system: MechanicalSystem,
        parts: Derivation,
        M: Matrix,
        f: Matrix,
        timings: dict[str, float],
    ) -> dict[str, Any]:
        """The operation counts of a derivation (``timings["count_ops"]``
        their seconds, the canonical pass's excluded)."""
        c0 = time.perf_counter()
        assigned = parts.extras.get("assignments")
        if assigned is None:
            op_counts = count_operations(M, f)
        else:
            # Count the evaluation order the method returns, the
            # recursion as written: the forcing's tree (every path of
            # its shared subtrees) is astronomically large, a count of
            # no one's cost (M, explicit, costs nothing).
            op_counts = count_operations(
                *assigned.definitions,
                *assigned.outputs,
                raw=assigned.raw_operations(),
            )
        timings["count_ops"] = time.perf_counter() - c0
        op_counts.update(
            canonical_counts(
                M, f, system.parameters, assigned=assigned, as_derived=op_counts
            )
        )
        return op_counts

    @abc.abstractmethod
    def _derive(self, system: MechanicalSystem, stage: Stage) -> Derivation:
        """Read ``system`` and return a :class:`Derivation`; wrap each stage
        of the work in ``with stage("name"):``."""


def constraint_samples(ms: MechanicalSystem, A_dep: Matrix) -> list[np.ndarray]:
    """``A_dep`` (in t and q) evaluated at the declared initial state and
    three random consistent states: the samples that guide the pivots of
    :func:`eomcompare.symbolic.linsolve.solve_linear` for a block larger than
    :data:`~eomcompare.symbolic.linsolve.ADJUGATE_MAX` (empty for smaller ones, which
    go through their determinant).  Without them the first symbolically
    nonzero pivot is taken, and it may vanish all along the motion (rods of
    Bricard's mechanism at its initial position).
    """
    if A_dep.shape[0] <= ADJUGATE_MAX:
        return []
    A = ms.substitute_specified(sm.Matrix(A_dep)).xreplace(dict(ms.parameters))
    coords = list(ms.coordinates)
    states = [ms.states.consistent_initial_state()[:2]]
    states += [ms.states.random_state(seed=1000 + k)[:2] for k in range(3)]
    out = []
    for t0, q in states:
        rep = {qi: float(v) for qi, v in zip(coords, q)} | {t: float(t0)}
        out.append(np.array(A.xreplace(rep).evalf().tolist(), dtype=float))
    return out


def solve_dependent_speeds(
    A_dep: Matrix, rhs: Matrix, samples: Sequence[Mapping[Symbol, float]] = ()
) -> Matrix:
    """``A_dep^-1 rhs``: the dependent speeds (or their coefficients) from
    the velocity constraints ``A_dep u_dep = rhs``.

    Through :func:`eomcompare.symbolic.linsolve.solve_linear`, which has no spurious
    symbolic pivot (sin(theta) at a wheelbarrow heading of zero).

    Raises
    ------
    UnsupportedSystemError
        When the coefficient matrix is singular everywhere.

    Examples
    --------
    >>> th = sm.Symbol("theta")
    >>> A = sm.Matrix([[-sm.sin(th), sm.cos(th)], [sm.cos(th), sm.sin(th)]])
    >>> solve_dependent_speeds(A, sm.Matrix([0, 1])).T
    Matrix([[cos(theta), sin(theta)]])
    """
    try:
        return solve_linear(A_dep, rhs, samples)
    except ValueError:
        raise UnsupportedSystemError(
            "the velocity constraints cannot be solved for the dependent "
            "speeds: their coefficient matrix is singular everywhere; declare "
            "other dependent speeds"
        ) from None
