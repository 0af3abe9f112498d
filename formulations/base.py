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
"""

from __future__ import annotations

import abc
import inspect
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Mapping as _MappingABC
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.counting import count_ops
from eomcompare.symbolic.linsolve import ADJUGATE_MAX, solve_linear
from eomcompare.symbolic.types import Expr, Matrix, ParameterValues, Symbol
from eomcompare.systems import MechanicalSystem, get_system

from .errors import UnsupportedSystemError

if TYPE_CHECKING:
    from eomcompare.numeric.model import NumericModel

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


#: Registry: formulation name -> class.  Every listing reads this.
FORMULATIONS: dict[str, type[Formulation]] = {}

#: The formulation every other one is compared with (harness, CLI, report,
#: tests).
REFERENCE = "kane"

#: The ability flags every formulation declares (class attributes, bool).
ABILITIES = (
    "handles_holonomic",
    "handles_nonholonomic",
    "handles_rheonomic",
    "uses_multipliers",
    "needs_dependent_solutions",
    "is_peer",
    "needs_tree",
    "in_default_comparison",
)


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


def peer_of(name: str) -> str | None:
    """The peer (the field's tool) a formulation is measured against, if
    that peer is registered."""
    peer = FORMULATIONS[name].peer
    return peer if peer in FORMULATIONS else None


def check_options(owner: str, **choices: tuple[Any, Any]) -> None:
    """Validate option values against their valid choices: the one way
    every formulation checks its options.

    ``choices`` maps an option name to ``(value, valid)``, where ``valid``
    is a tuple of allowed values or a type (or tuple of types).

    Raises
    ------
    TypeError
        For a value of the wrong type (for allowed values: of a type none of
        them has), naming the choices.
    ValueError
        For a value not among the choices, naming them.

    Examples
    --------
    >>> check_options("modified_lagrange", dependent=("auto", ("auto", "implicit")))
    >>> check_options("modified_lagrange", dependent=("x", ("auto", "implicit")))
    Traceback (most recent call last):
    ...
    ValueError: modified_lagrange: `dependent` must be one of ['auto', 'implicit'], not 'x'
    >>> check_options("modified_lagrange", dependent=(1, ("auto", "implicit")))
    Traceback (most recent call last):
    ...
    TypeError: modified_lagrange: `dependent` must be a str, one of ['auto', 'implicit'], not int
    """
    for opt, (value, valid) in choices.items():
        if isinstance(valid, type) or (
            isinstance(valid, tuple)
            and valid
            and all(isinstance(v, type) for v in valid)
        ):
            if not isinstance(value, valid):
                names = (
                    [valid.__name__]
                    if isinstance(valid, type)
                    else [v.__name__ for v in valid]
                )
                raise TypeError(
                    f"{owner}: `{opt}` must be of type "
                    f"{' or '.join(names)}, not "
                    f"{type(value).__name__}"
                )
        elif not any(type(value) is type(v) for v in valid):
            kinds = " or ".join(sorted({type(v).__name__ for v in valid}))
            raise TypeError(
                f"{owner}: `{opt}` must be a {kinds}, one of "
                f"{list(valid)}, not {type(value).__name__}"
            )
        elif value not in valid:
            raise ValueError(
                f"{owner}: `{opt}` must be one of {list(valid)}, not {value!r}"
            )


def formulation_names(
    include_peers: bool = True, *, default_only: bool = False
) -> list[str]:
    """Registered names, in registration order; without the peers when
    ``include_peers`` is false, and only those the default comparison runs
    (``in_default_comparison``) when ``default_only`` is true.

    >>> "kane_composite" in formulation_names(default_only=True)
    False
    """
    return [
        n
        for n, c in FORMULATIONS.items()
        if (include_peers or not c.is_peer)
        and (c.in_default_comparison or not default_only)
    ]


def split_formulation_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """A formulation's name and options as the command line writes them:
    ``"name"`` or ``"name:key=value[:key=value...]"``, each value read as
    a Python literal where it is one (``5``, ``(5.0, 5.0)``, ``True``),
    else as a string.

    Raises
    ------
    ValueError
        For an option that is not ``key=value``.

    Examples
    --------
    >>> split_formulation_spec("modified_lagrange:dependent=implicit")
    ('modified_lagrange', {'dependent': 'implicit'})
    >>> split_formulation_spec("lagrange:baumgarte=(5.0, 5.0)")
    ('lagrange', {'baumgarte': (5.0, 5.0)})
    """
    import ast

    name, *parts = str(spec).split(":")
    options: dict[str, Any] = {}
    for part in parts:
        key, eq, text = part.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise ValueError(
                f"formulation {spec!r}: options are written NAME:KEY=VALUE "
                f"(e.g. lagrange:baumgarte=(5.0,5.0)), not {part!r}"
            )
        try:
            options[key] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            options[key] = text.strip()
    return name.strip(), options


def _check_option_names(cls: type[Formulation], options: Mapping[str, Any]) -> None:
    params = inspect.signature(cls.__init__).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    known = [
        p.name
        for p in params
        if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(
            f"{cls.name} has no option {', '.join(map(repr, unknown))}; "
            f"its options: {', '.join(known) or 'none'}"
        )


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
    name, named = (
        split_formulation_spec(name_or_class)
        if isinstance(name_or_class, str)
        else (name_or_class, {})
    )
    try:
        cls = FORMULATIONS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"`formulation` must be one of {sorted(FORMULATIONS)} or a "
            f"Formulation subclass, not {name_or_class!r}"
        ) from None
    both = sorted(set(named) & set(options))
    if both:
        raise ValueError(
            f"formulation {name_or_class!r}: option(s) {both} given both in "
            f"the name and as keywords"
        )
    options = named | options
    _check_option_names(cls, options)
    return cls(**options)


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
    by_kind: dict[str, int] = {}
    for e in [r[1] for r in replacements] + list(reduced):
        visual = sm.count_ops(e, visual=True)
        for k, v in sm.sympify(visual).as_coefficients_dict().items():
            if k == 1 or v == 0:
                continue
            by_kind[str(k)] = by_kind.get(str(k), 0) + int(v)
    return {
        "raw": raw,
        "cse": int(sum(by_kind.values())),
        "cse_by_kind": dict(sorted(by_kind.items())),
    }


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
    as_derived: int | None = None,
) -> dict[str, Any]:
    """Counts of the canonical form (:func:`eomcompare.symbolic.canonical.canonical`)
    of a mass matrix and forcing, the same pass for every formulation.

    ``as_derived``, the cse count of the expressions as derived (``cse``),
    bounds the pass: where the canonical form counts more after cse (a
    rewrite that shrank the tree but lost subexpressions cse would have
    shared), the expressions as derived are counted instead and
    ``canonical_form`` says ``"as derived"``.  The rule is the same for
    every formulation: a normal form for counting never adds operations.

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
    cse = count_operations(*out, raw=0)
    used = "canonical"
    if as_derived is not None and cse["cse"] > as_derived:
        out, used = list(exprs), "as derived"
        cse = count_operations(*out, raw=0)
    if assigned is None:
        Mc = sm.Matrix(n, n, out[: n * n])
        fc = sm.Matrix(out[n * n :])
        from eomcompare.numeric.compiled import is_structurally_symmetric

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
        "canonical_by_kind": cse["cse_by_kind"],
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
        f"the quaternion {[str(x).replace('(t)', '') for x in four]} has four "
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


@dataclass(frozen=True, eq=False)
class Derivation:
    """What a formulation's ``_derive`` hook returns.

    All expressions may contain ``t``, the declaration's functions of time
    and constant symbols.

    states : x, the formulation's own state vector.
    unknowns : z, what the mass matrix multiplies.
    mass_matrix, forcing : ``mass_matrix * z = forcing``, square.
    state_rates : x' in terms of (t, x, z).
    accelerations : q'' of ALL coordinates (``system.coordinates`` order)
        in terms of (t, x, z).
    state_map : x in terms of (t, q, q') (all coordinates and their rates).
    coordinate_map : (q, q') stacked, in terms of (t, x).
    multipliers : the unknowns that are Lagrange multipliers.
    extras : anything else the method yields (partial velocities,
        constraint forces, ...), documented by the formulation.  One key
        is read here: ``"assignments"``, an evaluation order of an
        explicit forcing (:class:`eomcompare.formulations.articulated_body.Assignments`),
        which the operation counts and the compiled backend take instead
        of the forcing's tree.
    """

    states: tuple[Symbol, ...]
    unknowns: tuple[Symbol, ...]
    mass_matrix: Matrix
    forcing: Matrix
    state_rates: Matrix
    accelerations: Matrix
    state_map: Matrix
    coordinate_map: Matrix
    multipliers: tuple[Symbol, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False, kw_only=True)
class EquationsOfMotion(Derivation):
    """Immutable result of a derivation, ``mass_matrix * unknowns = forcing``:
    the :class:`Derivation` a formulation returned, with what
    :meth:`Formulation.derive` adds.  Built only by
    :meth:`Formulation.derive` (the derivation cache stores and returns it
    whole).

    Attributes
    ----------
    states, unknowns, mass_matrix, forcing, state_rates, accelerations,
    state_map, coordinate_map, multipliers, extras :
        See :class:`Derivation` (immutable here: matrices are
        ``ImmutableMatrix``, ``extras`` a read-only mapping).
    system : MechanicalSystem
    formulation : str
        Registry name of the formulation that produced it.
    kinematic_equations : tuple
        The declaration's kinematic differential equations (``= 0``).
    op_counts : mapping
        ``count_ops`` of mass matrix and forcing as returned (``raw``), of
        the cse-reduced form (``cse``) and its breakdown by kind; of the
        canonical form after cse (``canonical``, with ``trigsimp``
        ``applied`` or ``capped``) and, per evaluation in the literature's
        multiplications and additions, of the canonical form with the
        solve (``per_evaluation``): see :func:`canonical_counts`.
    timings : mapping
        Seconds per stage, ``total`` for the whole derivation, and
        ``count_ops`` for the counting itself (not part of ``total``; the
        canonical counts' own time is ``op_counts["canonical_s"]``).
    options : mapping
        The formulation's options that produced it.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> eom = get_formulation("kane").derive("double_pendulum")
    >>> eom.mass_matrix.shape
    (2, 2)
    >>> model = eom.numeric()
    >>> t0, q, qd = eom.system.random_state(seed=0)
    >>> model.coordinate_accelerations(t0, q, qd).shape
    (2,)
    """

    system: MechanicalSystem
    formulation: str
    kinematic_equations: tuple[Expr, ...]
    op_counts: Mapping[str, Any]
    timings: Mapping[str, float]
    options: Mapping[str, Any]

    @property
    def n_equations(self) -> int:
        return int(self.mass_matrix.shape[0])

    @property
    def n_unknowns(self) -> int:
        return len(self.unknowns)

    @property
    def n_multipliers(self) -> int:
        return len(self.multipliers)

    @property
    def unknowns_kind(self) -> str:
        """What the mass matrix multiplies, as :attr:`unknowns` holds it:
        ``"u'"`` (speed rates: kane, gibbs_appell, sympy_kane), ``"q''"``
        (coordinate accelerations: lagrange without constraints,
        modified_lagrange, whose are the independent coordinates') or
        ``"q'' and multipliers"`` (lagrange, sympy_lagrange with
        constraints).  The mass matrices of two kinds differ even for one
        system (with u = T(q) q', Lagrange's is T^T times Kane's times T);
        ``model.speed_derivatives`` and ``model.coordinate_accelerations``
        give u' and q'' whatever the kind.

        Examples
        --------
        >>> from eomcompare.formulations import get_formulation
        >>> get_formulation("kane").derive("double_pendulum").unknowns_kind
        "u'"
        >>> get_formulation("lagrange").derive("four_bar").unknowns_kind
        "q'' and multipliers"
        """
        multipliers = set(self.multipliers)
        rest = [z for z in self.unknowns if z not in multipliers]
        rates = {u.diff(t) for u in self.system.speeds}
        accelerations = {q.diff(t, 2) for q in self.system.coordinates}
        if all(z in rates for z in rest):
            kind = "u'"
        elif all(z in accelerations for z in rest):
            kind = "q''"
        else:
            kind = "u' and q''"
        return kind + (" and multipliers" if multipliers else "")

    def __repr__(self) -> str:
        return (
            f"EquationsOfMotion(system={self.system.name!r}, "
            f"formulation={self.formulation!r}, "
            f"equations={self.n_equations}, unknowns={self.n_unknowns}, "
            f"multipliers={self.n_multipliers}, "
            f"ops_raw={self.op_counts.get('raw')}, "
            f"ops_cse={self.op_counts.get('cse')}, "
            f"seconds={self.timings.get('total', float('nan')):.3g})"
        )

    # Pickling (the derivation cache): read-only mappings travel as dicts;
    # extras not yet computed travel as the recipe to compute them.
    def __getstate__(self) -> dict[str, Any]:
        state = {f.name: getattr(self, f.name) for f in fields(self)}
        for k in ("op_counts", "timings", "options"):
            state[k] = dict(state[k])
        extras = self.extras
        if isinstance(extras, LazyExtras):
            state["extras"] = extras.portable(
                _Rederive(self.formulation, dict(self.options), self.system)
            )
        else:
            state["extras"] = dict(extras)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k in ("op_counts", "timings", "options"):
            state[k] = MappingProxyType(state[k])
        if not isinstance(state["extras"], LazyExtras):
            state["extras"] = MappingProxyType(state["extras"])
        for k, v in state.items():
            object.__setattr__(self, k, v)

    # What the numeric layer asks of the equations beyond M and f.  It
    # imports nothing from this package, so these live on the result.
    def multiplier_indices(self) -> list[int]:
        """Positions of the Lagrange multipliers among ``unknowns``, in the
        order of the declaration's constraint rows (see
        :mod:`eomcompare.formulations.multipliers` for the sign convention).

        Raises
        ------
        UnsupportedSystemError
            For a formulation without multipliers.
        """
        cls = FORMULATIONS.get(self.formulation)
        if cls is None or not cls.uses_multipliers:
            with_them = sorted(n for n, c in FORMULATIONS.items() if c.uses_multipliers)
            raise UnsupportedSystemError(
                f"{self.formulation} has no Lagrange multipliers (it "
                f"eliminates the constraints); formulations with multipliers: "
                f"{with_them}"
            )
        index = {z: i for i, z in enumerate(self.unknowns)}
        return [index[m] for m in self.multipliers]

    def constraint_forces_refusal(self) -> UnsupportedSystemError:
        """The error of a model asked for constraint forces these equations
        do not recover, saying why."""
        ms = self.system

        def name(x: object) -> str:
            return str(x).replace("(t)", "")

        why = self.extras.get("constraint_forces_unsupported")
        asked = [name(u) for u in ms.u_aux] + [cf.name for cf in ms.constraint_forces]
        if not asked:
            return UnsupportedSystemError(
                f"{self.formulation}: system {ms.name!r} asks for no "
                f"constraint forces (declare auxiliary speeds with "
                f"System.add_auxiliary_speeds, or constraint_forces)"
            )
        if not why and "unrecovered_constraint_forces" in self.extras:
            why = (
                "no coordinate moves exactly the auxiliary motion of "
                f"{list(self.extras['unrecovered_constraint_forces'])}"
            )
        return UnsupportedSystemError(
            f"{self.formulation} recovers no constraint forces of "
            f"{ms.name!r} (asked for {asked}): "
            f"{why or 'the method has neither auxiliary speeds nor multipliers'}"
        )

    def with_constant_inputs(
        self,
        inputs: Sequence[str | Symbol] | None,
        t0: float,
        parameters: ParameterValues | None = None,
    ) -> tuple[EquationsOfMotion, list[Any]]:
        """These equations derived again with the inputs among ``inputs``
        that are functions of time (``specified``) made constants valued at
        time ``t0`` and ``parameters``
        (:func:`eomcompare.formulations.inputs.specified_inputs`)."""
        from .inputs import specified_inputs

        def derive(system: MechanicalSystem) -> EquationsOfMotion:
            return get_formulation(self.formulation, **dict(self.options)).derive(
                system
            )

        return specified_inputs(self, inputs, t0, derive, parameters)

    def numeric(
        self,
        parameters: ParameterValues | None = None,
        backend: str = "lambdify",
        **options: Any,
    ) -> NumericModel:
        """The numeric contract: a :class:`~eomcompare.numeric.model.NumericModel`.

        Code is generated once per equations object (parameters are runtime
        arguments), so different parameter values cost nothing extra.
        ``backend="c"`` compiles it to C, ``"auto"`` does so when a compiler
        is available (see :func:`eomcompare.numeric.backends.numeric_model`).
        """
        from eomcompare.numeric.backends import numeric_model

        return numeric_model(self, parameters, backend=backend, **options)


class _Rederive:
    """The extras a formulation computes on first read, for equations
    restored from a pickle: derived again (without counting), on first
    read, by the same formulation and options."""

    def __init__(
        self, formulation: str, options: dict[str, Any], system: MechanicalSystem
    ) -> None:
        self.formulation, self.options, self.system = formulation, options, system

    def __call__(self) -> Mapping[str, Any]:
        options = dict(self.options, count_ops=False)
        return get_formulation(self.formulation, **options).derive(self.system).extras


class LazyExtras(_MappingABC[str, Any]):
    """Extras of which some are computed on first access.

    A formulation whose equations do not need some by-products (Kane's
    partial velocities when the composite-body sums give the equations)
    returns them this way, so a derivation only pays for them when a user
    reads them.  ``eager`` holds the values known already; ``compute()``
    returns a dict of the keys ``lazy_keys``, called at most once.
    """

    def __init__(
        self,
        eager: Mapping[str, Any],
        lazy_keys: Sequence[str],
        compute: Callable[[], Mapping[str, Any]] | None,
    ) -> None:
        self._eager = dict(eager)
        self._lazy_keys = tuple(k for k in lazy_keys if k not in self._eager)
        self._compute = compute
        self._computed: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def __getitem__(self, key: str) -> Any:
        if key in self._eager:
            return self._eager[key]
        if key not in self._lazy_keys:
            raise KeyError(key)
        with self._lock:
            if self._computed is None:
                # Set until the first computation, which clears it.
                assert self._compute is not None
                self._computed = dict(self._compute())
                self._compute = None
        return self._computed[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._eager
        yield from self._lazy_keys

    def __len__(self) -> int:
        return len(self._eager) + len(self._lazy_keys)

    def __contains__(self, key: object) -> bool:
        return key in self._eager or key in self._lazy_keys

    def portable(self, recompute: Callable[[], Mapping[str, Any]]) -> LazyExtras:
        """The same extras in a picklable form: those computed already as
        values, the others from ``recompute()`` (a picklable callable
        returning a mapping that holds them) on first read."""
        with self._lock:
            if self._computed is not None:
                return LazyExtras(self._eager | self._computed, (), None)
        return LazyExtras(
            self._eager, self._lazy_keys, _Pick(recompute, self._lazy_keys)
        )

    def __reduce__(
        self,
    ) -> tuple[type[LazyExtras], tuple[dict[str, Any], tuple[str, ...], Any]]:
        # Picklable when ``compute`` is (see :meth:`portable`); the lock is
        # made afresh.
        eager = self._eager | (self._computed or {})
        lazy = () if self._computed is not None else self._lazy_keys
        return (LazyExtras, (eager, lazy, self._compute if lazy else None))


class _Pick:
    def __init__(
        self, source: Callable[[], Mapping[str, Any]], keys: Sequence[str]
    ) -> None:
        self.source, self.keys = source, tuple(keys)

    def __call__(self) -> dict[str, Any]:
        values = self.source()
        return {k: values[k] for k in self.keys}


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
        if self.needs_velocities_from_positions and len(system.speeds) != len(
            system.coordinates
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
        """
        if isinstance(system, str):
            system = get_system(system)
        if not isinstance(system, MechanicalSystem):
            raise TypeError(
                f"system must be a MechanicalSystem or a catalogue name, not "
                f"{type(system).__name__}"
            )
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
                    M,
                    f,
                    system.parameters,
                    assigned=assigned,
                    as_derived=op_counts.get("cse"),
                )
            )
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

    @abc.abstractmethod
    def _derive(self, system: MechanicalSystem, stage: Stage) -> Derivation:
        """Read ``system`` and return a :class:`Derivation`; wrap each stage
        of the work in ``with stage("name"):``."""


# ----------------------------------------------------------------------
# Shared assembly for the two common state choices
# ----------------------------------------------------------------------
def speed_form(
    system: MechanicalSystem,
    mass_matrix: Matrix,
    forcing: Matrix,
    extras: Mapping[str, Any] | None = None,
) -> Derivation:
    """Derivation parts for a method whose unknowns are all speed rates u'.

    States are (q, u); q' follows from the kinematic differential equations.
    """
    kin = system.kinematics
    q, u = system.coordinates, system.speeds
    ud = tuple(ui.diff(t) for ui in u)
    qdot = sm.Matrix([kin.qdot[qi.diff(t)] for qi in q])
    qdd = qdot.diff(t).xreplace(dict(kin.qdot))
    state_map = sm.Matrix(list(q) + [kin.u_of_qdot[ui] for ui in u])
    coordinate_map = sm.Matrix(list(q)).col_join(qdot)
    return Derivation(
        states=tuple(q) + tuple(u),
        unknowns=ud,
        mass_matrix=mass_matrix,
        forcing=forcing,
        state_rates=qdot.col_join(sm.Matrix(ud)),
        accelerations=qdd,
        state_map=state_map,
        coordinate_map=coordinate_map,
        extras=extras or {},
    )


def rate_form(
    system: MechanicalSystem,
    mass_matrix: Matrix,
    forcing: Matrix,
    multipliers: Sequence[Symbol] = (),
    extras: Mapping[str, Any] | None = None,
) -> Derivation:
    """Derivation parts for a method in coordinate rates: states (q, q'),
    unknowns (q'', multipliers)."""
    q = system.coordinates
    qd = tuple(qi.diff(t) for qi in q)
    qdd = tuple(qi.diff(t, 2) for qi in q)
    return Derivation(
        states=tuple(q) + qd,
        unknowns=qdd + tuple(multipliers),
        mass_matrix=mass_matrix,
        forcing=forcing,
        state_rates=sm.Matrix(list(qd) + list(qdd)),
        accelerations=sm.Matrix(qdd),
        state_map=sm.Matrix(list(q) + list(qd)),
        coordinate_map=sm.Matrix(list(q) + list(qd)),
        multipliers=tuple(multipliers),
        extras=extras or {},
    )


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
    states = [ms.consistent_initial_state()[:2]]
    states += [ms.random_state(seed=1000 + k)[:2] for k in range(3)]
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
