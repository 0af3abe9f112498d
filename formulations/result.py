"""What a derivation returns: the parts a formulation's ``_derive``
hook assembles (:class:`Derivation`, by :func:`speed_form` or
:func:`rate_form` for the two common state choices) and the immutable
result :meth:`~eomcompare.formulations.base.Formulation.derive` makes of
them (:class:`EquationsOfMotion`), with the extras a formulation computes
on first read (:class:`LazyExtras`).

The numeric layer reads the result only; it asks the registry
(:mod:`eomcompare.formulations.registry`) for the formulation that made it
by name, to derive again (pickled extras, constant inputs) or to read its
ability flags.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Mapping as _MappingABC
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.text import display_name
from eomcompare.symbolic.types import Expr, Matrix, ParameterValues, Symbol
from eomcompare.systems import MechanicalSystem

from .errors import UnsupportedSystemError
from .registry import FORMULATIONS, formulation_from_spec

if TYPE_CHECKING:
    from eomcompare.numeric.model import NumericModel

__all__ = [
    "Derivation",
    "EquationsOfMotion",
    "LazyExtras",
    "speed_form",
    "rate_form",
]

t = me.dynamicsymbols._t


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
    :meth:`Formulation.derive <eomcompare.formulations.base.Formulation.derive>`
    adds.  Built only by that method (the derivation cache stores and
    returns it whole).

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
        solve (``per_evaluation``): see
        :func:`~eomcompare.formulations.base.canonical_counts`.
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
    >>> t0, q, qd = eom.system.states.random_state(seed=0)
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
        why = self.extras.get("constraint_forces_unsupported")
        asked = [display_name(u) for u in ms.u_aux] + [
            cf.name for cf in ms.constraint_forces
        ]
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
            return formulation_from_spec(self.formulation, **dict(self.options)).derive(
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
        formulation = formulation_from_spec(self.formulation, **options)
        return formulation.derive(self.system).extras


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
