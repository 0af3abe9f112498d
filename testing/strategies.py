"""Hypothesis strategies of random mechanical systems, for property checks.

Every strategy draws a :class:`eomcompare.systems.MechanicalSystem`: a small symbolic
structure (which joints, which axes, which loads) and random parameter
VALUES in its ``parameters`` mapping.  Formulations can then be checked
against each other, and against independent references, on systems nobody
wrote by hand.

The systems are those of :mod:`eomcompare.systems.families`, built from
the drawn structure and values: the symbols of a structure are always
named the same way, so two draws with the same structure differ only in
their parameter values (``eom.numeric(other.parameters)`` evaluates one's
derivation with the other's), and each system's ``options`` name its
``"family"``, its ``"structure"`` (a cache key) and the
``"nonconservative_power"`` of its dampers (see that module).

Strategies
----------
:func:`kinematic_trees`, :func:`open_chains`
    Planar or spatial trees of rigid bodies on revolute and prismatic
    joints: random masses, inertia tensors (triangle inequalities hold),
    joint offsets, mass-centre offsets, gravity, joint springs and dampers.
:func:`closed_loops`
    Planar n-bar linkages (n = 4, 5, ...), assembled consistently; four-bars
    optionally with the explicit solutions of
    :func:`eomcompare.systems.four_bar.four_bar_closed_form`.
:func:`nonholonomic_systems`
    The Chaplygin sleigh / knife-edge family and the rolling disc.
:func:`rheonomic_systems`
    Planar chains hung from a support moved by a prescribed function of
    time (``specified``).
:func:`mechanical_systems`
    Any of the above.
:func:`unlocated_velocities`, :func:`reanchor_velocity`
    A system whose last body's mass-centre velocity is declared by
    ``v2pt_theory`` from a point not located from the fixed point (as
    sympy users declare a rolling disc from its contact point up).
:func:`consistent_states`
    ``(t, q, q')`` states of a given system satisfying every constraint.
:func:`inertia_tensors`
    Physically valid central inertia tensors.
:func:`build_tree`, :func:`build_linkage`, :func:`build_sleigh`,
:func:`build_rolling_disc`, :func:`build_driven_chain`
    The builders behind the strategies, for fixed structures and values
    (regression cases, hand-made checks); they are
    :mod:`eomcompare.systems.families`', importable from here too.

Examples
--------
>>> from hypothesis import given, settings
>>> from eomcompare.testing.strategies import open_chains
>>> @settings(max_examples=2, deadline=None, database=None)
... @given(open_chains(dimension=2, max_bodies=2))
... def check(ms):
...     assert 1 <= ms.degrees_of_freedom <= 2
>>> check()
"""

from __future__ import annotations

import numbers
from collections.abc import Collection, Sequence
from typing import TypeVar, cast

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

try:
    from hypothesis import assume
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - depends on the installation
    raise ImportError(
        "testing.strategies needs hypothesis, part of the test extra: "
        "pip install 'eomcompare[test]'"
    ) from None

from eomcompare.symbolic.types import FloatArray, ParameterValues, State
from eomcompare.systems import MechanicalSystem
from eomcompare.systems.base import ConstraintError

# The builders behind the strategies are declarations: they live beside the
# systems and are re-exported here, where the strategies' users find them.
from eomcompare.systems.families import (
    TreeStructure,
    build_driven_chain,
    build_linkage,
    build_rolling_disc,
    build_sleigh,
    build_tree,
    inertia_symbols,
    inertia_values,
    reanchor_velocity,
)
from eomcompare.systems.four_bar import four_bar_closed_form

_T = TypeVar("_T")

__all__ = [
    "kinematic_trees",
    "open_chains",
    "closed_loops",
    "nonholonomic_systems",
    "rheonomic_systems",
    "mechanical_systems",
    "consistent_states",
    "inertia_tensors",
    "build_tree",
    "build_linkage",
    "build_sleigh",
    "build_driven_chain",
    "build_rolling_disc",
    "TreeStructure",
    "JOINT_TYPES",
    "NONHOLONOMIC_KINDS",
    "DRIVES",
    "unlocated_velocities",
    "reanchor_velocity",
]

#: Joint types of :func:`kinematic_trees`: revolute (R) and prismatic (P).
JOINT_TYPES = ("revolute", "prismatic")
#: Kinds of :func:`nonholonomic_systems`.
NONHOLONOMIC_KINDS = ("sleigh", "rolling_disc")
#: Prescribed drives of :func:`rheonomic_systems`.
DRIVES = ("translation", "rotation")


# ----------------------------------------------------------------------
# Option validation
# ----------------------------------------------------------------------
def _check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        rng = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be in {rng}, not {value}")
    return value


def _check_choices(
    name: str, values: str | Sequence[str], valid: Collection[str]
) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    try:
        values = tuple(values)
    except TypeError:
        raise TypeError(
            f"{name} must be a sequence of names from {list(valid)}, not {values!r}"
        ) from None
    bad = [v for v in values if v not in valid]
    if bad or not values:
        raise ValueError(
            f"{name} must be a non-empty selection of {list(valid)}, not "
            f"{list(values)!r}"
        )
    return tuple(dict.fromkeys(values))


def _check_range(lo_name: str, lo: int, hi_name: str, hi: int) -> None:
    if lo > hi:
        raise ValueError(f"{lo_name} ({lo}) must not exceed {hi_name} ({hi})")


# ----------------------------------------------------------------------
# Numbers
# ----------------------------------------------------------------------
def _not_none(strategy: st.SearchStrategy[_T | None]) -> st.SearchStrategy[_T]:
    """``strategy`` without its ``None`` draws (rejected, as ``filter``)."""

    def present(x: _T | None) -> bool:
        return x is not None

    # filter keeps the draws' type; the cast states what it leaves out.
    return cast("st.SearchStrategy[_T]", strategy.filter(present))


def _floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def _rotation(draw: st.DrawFn) -> FloatArray:
    """A uniformly spread rotation matrix, from a normalized quaternion."""
    v = np.array([draw(_floats(-1.0, 1.0)) for _ in range(4)])
    n = float(np.linalg.norm(v))
    if n < 0.1:
        v, n = np.array([1.0, 0.0, 0.0, 0.0]), 1.0
    w, x, y, z = v / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def inertia_tensors(*, mass: float = 1.0) -> st.SearchStrategy[FloatArray]:
    """Central inertia tensors (3x3 arrays) of bodies of mass ``mass``.

    The principal moments are ``(b + c, a + c, a + b)`` for second moments
    ``a, b, c`` of the mass distribution along the principal axes (drawn in
    ``[0.01, 1] * mass``), so they are positive and satisfy the triangle
    inequalities ``I1 <= I2 + I3`` (and cyclic) as every rigid body's do;
    the principal axes have a random orientation.

    Parameters
    ----------
    mass : float
        Positive mass that scales the tensor.

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=3, database=None)
    ... @given(inertia_tensors(mass=2.0))
    ... def check(I):
    ...     assert np.all(np.linalg.eigvalsh(I) > 0)
    >>> check()
    """
    if isinstance(mass, bool) or not isinstance(mass, numbers.Real):
        raise TypeError(f"mass must be a real number, not {mass!r}")
    if not mass > 0:
        raise ValueError(f"mass must be positive, not {mass!r}")
    return _inertia_tensors(float(mass))


@st.composite
def _inertia_tensors(draw: st.DrawFn, mass: float) -> FloatArray:
    a, b, c = (draw(_floats(0.01, 1.0)) * mass for _ in range(3))
    R = draw(_rotation())
    I = R @ np.diag([b + c, a + c, a + b]) @ R.T
    return (I + I.T) / 2


# ----------------------------------------------------------------------
# Kinematic trees
# ----------------------------------------------------------------------
def _tree_values(draw: st.DrawFn, structure: TreeStructure) -> dict[str, float]:
    """Random values of every parameter of a tree structure."""
    dim, joints, springs, dampers, gravity, reactions = structure
    vals = {}
    comps = "xy" if dim == 2 else "xyz"
    for i, _joint in enumerate(joints):
        k = i + 1
        m = draw(_floats(0.5, 3.0))
        vals[f"m{k}"] = m
        for c in comps:
            vals[f"r{c}{k}"] = draw(_floats(-1.0, 1.0))
            vals[f"c{c}{k}"] = draw(_floats(-0.6, 0.6))
        I = draw(_inertia_tensors(m))
        for x, v in inertia_values(inertia_symbols(k), I).items():
            vals[str(x)] = float(v)
        if springs:
            vals[f"k{k}"] = draw(_floats(0.0, 20.0))
            vals[f"s{k}"] = draw(_floats(-1.0, 1.0))
        if dampers:
            vals[f"b{k}"] = draw(_floats(0.0, 2.0))
    if gravity:
        for c in comps:
            vals[f"g{c}"] = draw(_floats(-10.0, 10.0))
    return vals


@st.composite
def _trees(
    draw: st.DrawFn,
    dim: int,
    lo: int,
    hi: int,
    kinds: tuple[str, ...],
    branching: bool,
    springs: bool,
    dampers: bool,
    gravity: bool,
    reactions: bool,
) -> MechanicalSystem:
    n = draw(st.integers(lo, hi))
    joints = []
    for i in range(n):
        parent = draw(st.integers(-1, i - 1)) if branching and i > 0 else i - 1
        kind = draw(st.sampled_from(kinds))
        if dim == 2:
            axis = 2 if kind == "R" else draw(st.integers(0, 1))
        else:
            axis = draw(st.integers(0, 2))
        joints.append((parent, kind, axis))
    react: tuple[int, ...] = ()
    if reactions:
        revolute = [i for i, j in enumerate(joints) if j[1] == "R"]
        if not revolute:
            # A reaction is asked for: the first joint becomes revolute.
            joints[0] = (-1, "R", 2 if dim == 2 else joints[0][2])
            revolute = [0]
        react = (draw(st.sampled_from(revolute)),)
    structure = (dim, tuple(joints), springs, dampers, gravity, react)
    values = _tree_values(draw, structure)
    initial = {f"q{i + 1}": draw(_floats(-1.0, 1.0)) for i in range(n)}
    return build_tree(
        structure,
        values,
        initial=initial,
        name="random_planar_tree" if dim == 2 else "random_spatial_tree",
    )


def kinematic_trees(
    *,
    dimension: int = 2,
    min_bodies: int = 1,
    max_bodies: int = 3,
    joint_types: Sequence[str] = JOINT_TYPES,
    branching: bool = True,
    springs: bool = True,
    dampers: bool = True,
    gravity: bool = True,
    joint_reactions: bool = False,
) -> st.SearchStrategy[MechanicalSystem]:
    """Random trees of rigid bodies on revolute and prismatic joints.

    Parameters
    ----------
    dimension : {2, 3}
        2: planar (revolute joints about z, prismatic along x or y, gravity
        in the plane); 3: spatial (any body axis).
    min_bodies, max_bodies : int
        Number of bodies, 1 to 6 (3 or fewer keep derivations fast).
    joint_types : sequence of {"revolute", "prismatic"}
    branching : bool
        False for serial chains; True lets a body hang from any earlier one.
    springs, dampers, gravity : bool
        Include joint springs, joint dampers, gravity (values random, zero
        included for springs and dampers).
    joint_reactions : bool
        Declare the reaction of one revolute joint (force of the parent on
        the subtree along the parent's x and y) as two constraint
        coordinates held by holonomic constraints, with
        :class:`~eomcompare.systems.ConstraintForce` objects: multipliers and Kane's
        auxiliary speeds both recover it.  Where no revolute joint is
        drawn, the first joint is made revolute.

    Returns
    -------
    hypothesis strategy of MechanicalSystem

    Raises
    ------
    TypeError, ValueError
        For options of the wrong type or out of range, naming valid ones.

    Examples
    --------
    >>> from eomcompare.testing.strategies import kinematic_trees
    >>> strategy = kinematic_trees(dimension=3, max_bodies=2)
    """
    if dimension not in (2, 3) or isinstance(dimension, bool):
        raise ValueError(f"dimension must be one of [2, 3], not {dimension!r}")
    lo = _check_int("min_bodies", min_bodies, 1, 6)
    hi = _check_int("max_bodies", max_bodies, 1, 6)
    _check_range("min_bodies", lo, "max_bodies", hi)
    kinds = tuple(
        {"revolute": "R", "prismatic": "P"}[k]
        for k in _check_choices("joint_types", joint_types, JOINT_TYPES)
    )
    for name, v in (
        ("branching", branching),
        ("springs", springs),
        ("dampers", dampers),
        ("gravity", gravity),
        ("joint_reactions", joint_reactions),
    ):
        _check_bool(name, v)
    if joint_reactions and "R" not in kinds:
        raise ValueError("joint_reactions needs 'revolute' in joint_types")
    return _trees(
        int(dimension),
        lo,
        hi,
        kinds,
        branching,
        springs,
        dampers,
        gravity,
        joint_reactions,
    )


def open_chains(
    *,
    dimension: int = 2,
    min_bodies: int = 1,
    max_bodies: int = 3,
    joint_types: Sequence[str] = JOINT_TYPES,
    springs: bool = True,
    dampers: bool = True,
    gravity: bool = True,
    joint_reactions: bool = False,
) -> st.SearchStrategy[MechanicalSystem]:
    """Random serial chains: :func:`kinematic_trees` without branching.

    Examples
    --------
    >>> from eomcompare.testing.strategies import open_chains
    >>> strategy = open_chains(dimension=2, joint_types=["revolute"])
    """
    return kinematic_trees(
        dimension=dimension,
        min_bodies=min_bodies,
        max_bodies=max_bodies,
        joint_types=joint_types,
        branching=False,
        springs=springs,
        dampers=dampers,
        gravity=gravity,
        joint_reactions=joint_reactions,
    )


# ----------------------------------------------------------------------
# Closed loops
# ----------------------------------------------------------------------
def _link_values(draw: st.DrawFn, nl: int) -> dict[str, float]:
    vals = {}
    for k in range(1, nl + 1):
        m = draw(_floats(0.5, 3.0))
        vals[f"m{k}"] = m
        vals[f"cx{k}"] = draw(_floats(-0.3, 1.0))
        vals[f"cy{k}"] = draw(_floats(-0.3, 0.3))
        I = draw(_inertia_tensors(m))
        vals |= {
            str(x): float(v) for x, v in inertia_values(inertia_symbols(k), I).items()
        }
    vals["gx"] = draw(_floats(-10.0, 10.0))
    vals["gy"] = draw(_floats(-10.0, 10.0))
    vals["tau"] = draw(_floats(-5.0, 5.0))
    vals["k1"] = draw(_floats(0.0, 20.0))
    vals["s1"] = draw(_floats(-1.0, 1.0))
    vals["b1"] = draw(_floats(0.0, 2.0))
    return vals


@st.composite
def _linkages(draw: st.DrawFn, lo: int, hi: int, explicit: bool) -> MechanicalSystem:
    n_bars = draw(st.integers(lo, hi))
    nl = n_bars - 1
    if n_bars == 4 and explicit and draw(st.booleans()):
        # A Grashof crank-rocker with margins: the crank L1 is shortest and
        # the distance D P1, in [L4 - L1, L4 + L1], stays 0.1 inside
        # (|L2 - L3|, L2 + L3), so coupler and rocker are never collinear
        # and the closed form holds on the whole crank turn.
        L1 = draw(_floats(0.1, 0.4))
        L4 = draw(_floats(L1 + 0.3, 1.5))
        L2 = draw(_floats(L1 + 0.2, 1.5))
        d = L4 - L1 - 0.1
        lo3, hi3 = max(L2 - d, L4 + L1 + 0.1 - L2, L1 + 0.05), L2 + d
        L3 = lo3 + (hi3 - lo3) * draw(_floats(0.02, 0.98))
        q1 = draw(_floats(-3.0, 3.0))
        q2, q3 = four_bar_closed_form(q1, L1, L2, L3, L4)
        vals = {"L0": L4, "L1": L1, "L2": L2, "L3": L3} | _link_values(draw, nl)
        return build_linkage(4, vals, [q1, float(q2), float(q3)], explicit=True)
    lengths = [draw(_floats(0.3, 1.5)) for _ in range(nl)]
    angles = [draw(_floats(-np.pi, np.pi)) for _ in range(nl - 1)]
    # The angle between the two dependent links is kept away from 0 and pi
    # so that the loop can be solved for them (well-conditioned Jacobian).
    delta = draw(_floats(0.6, np.pi - 0.6)) * draw(st.sampled_from([-1, 1]))
    # Link n-1 points from D to the tip of link n-2.
    angles.append(angles[-1] + np.pi + delta)
    w = sum(
        L * np.array([np.cos(a), np.sin(a)]) for L, a in zip(lengths[:-1], angles[:-1])
    ) - lengths[-1] * np.array([np.cos(angles[-1]), np.sin(angles[-1])])
    L0 = float(np.hypot(*w))
    assume(L0 > 0.2)
    # Turn the whole assembly so that the ground link lies along +y.
    rot = np.pi / 2 - float(np.arctan2(w[1], w[0]))
    angles = [a + rot for a in angles]
    vals = {"L0": L0} | {f"L{k}": lengths[k - 1] for k in range(1, nl + 1)}
    vals |= _link_values(draw, nl)
    return build_linkage(n_bars, vals, angles, explicit=False)


def closed_loops(
    *, min_bars: int = 4, max_bars: int = 5, explicit_four_bar: bool = True
) -> st.SearchStrategy[MechanicalSystem]:
    """Random planar n-bar linkages assembled consistently.

    Link lengths and all link angles are drawn first; the ground link is
    whatever closes the loop, and the assembly is turned so that it lies
    along +y (gravity has a random direction, so nothing is lost).  The
    two dependent links meet at an angle kept away from 0 and pi, so the
    loop equations can be solved for them.

    Parameters
    ----------
    min_bars, max_bars : int
        Bars including the ground, 4 to 7 (n bars have n - 3 degrees of
        freedom).
    explicit_four_bar : bool
        Let some four-bars be Grashof crank-rockers in the catalogue's
        geometry that carry the explicit solutions of
        :func:`eomcompare.systems.four_bar.four_bar_closed_form` as
        ``dependent_solutions``.

    Examples
    --------
    >>> from eomcompare.testing.strategies import closed_loops
    >>> strategy = closed_loops(min_bars=4, max_bars=4)
    """
    lo = _check_int("min_bars", min_bars, 4, 7)
    hi = _check_int("max_bars", max_bars, 4, 7)
    _check_range("min_bars", lo, "max_bars", hi)
    _check_bool("explicit_four_bar", explicit_four_bar)
    return _linkages(lo, hi, explicit_four_bar)


# ----------------------------------------------------------------------
# Nonholonomic systems
# ----------------------------------------------------------------------
@st.composite
def _sleighs(draw: st.DrawFn) -> MechanicalSystem:
    m = draw(_floats(0.5, 3.0))
    vals = {
        "m": m,
        "a": draw(_floats(-1.0, 1.0)),
        "b": draw(_floats(-0.5, 0.5)),
        "beta": draw(_floats(-1.0, 1.0)),
        "gx": draw(_floats(-10.0, 10.0)),
        "gy": draw(_floats(-10.0, 10.0)),
        "k": draw(_floats(0.0, 10.0)),
        "s0": draw(_floats(-1.0, 1.0)),
        "c": draw(_floats(0.0, 2.0)),
    }
    I = draw(_inertia_tensors(m))
    vals |= {str(s): float(v) for s, v in inertia_values(inertia_symbols(1), I).items()}
    init = {
        "x": draw(_floats(-1.0, 1.0)),
        "y": draw(_floats(-1.0, 1.0)),
        "theta": draw(_floats(-3.0, 3.0)),
    }
    return build_sleigh(vals, init)


@st.composite
def _discs(draw: st.DrawFn) -> MechanicalSystem:
    values = {
        "m": draw(_floats(0.5, 3.0)),
        "r": draw(_floats(0.1, 1.0)),
        "g": draw(_floats(0.0, 10.0)),
    }
    initial = {c: draw(_floats(-1.0, 1.0)) for c in ("q1", "q3", "x", "y")}
    # The lean q2 stays well away from the disc lying flat.
    initial["q2"] = draw(_floats(-0.6, 0.6))
    initial |= {u: draw(_floats(-3.0, 3.0)) for u in ("u1", "u2", "u3")}
    return build_rolling_disc(values, initial)


def nonholonomic_systems(
    *, kinds: Sequence[str] = NONHOLONOMIC_KINDS
) -> st.SearchStrategy[MechanicalSystem]:
    """Random nonholonomic systems.

    Parameters
    ----------
    kinds : sequence of {"sleigh", "rolling_disc"}
        ``"sleigh"``: the Chaplygin sleigh / knife-edge family (random mass,
        inertia, mass-centre offset from the blade, blade angle, in-plane
        gravity, heading spring and damper).  ``"rolling_disc"``: the
        catalogue's ``rolling_disc`` declaration with random mass, radius,
        gravity and initial state.

    Examples
    --------
    >>> from eomcompare.testing.strategies import nonholonomic_systems
    >>> strategy = nonholonomic_systems(kinds=["sleigh"])
    """
    kinds = _check_choices("kinds", kinds, NONHOLONOMIC_KINDS)
    parts = {"sleigh": _sleighs(), "rolling_disc": _discs()}
    return st.one_of(*[parts[k] for k in kinds])


# ----------------------------------------------------------------------
# Rheonomic systems
# ----------------------------------------------------------------------
@st.composite
def _driven(
    draw: st.DrawFn, lo: int, hi: int, drives: tuple[str, ...]
) -> MechanicalSystem:
    n = draw(st.integers(lo, hi))
    drive = draw(st.sampled_from(drives))
    vals = {
        "A": draw(_floats(0.0, 1.0)),
        "w": draw(_floats(0.0, 5.0)),
        "phi": draw(_floats(-np.pi, np.pi)),
        "g": draw(_floats(0.0, 10.0)),
    }
    if drive == "translation":
        vals["alpha"] = draw(_floats(-np.pi, np.pi))
    else:
        vals["La"] = draw(_floats(0.1, 1.0))
        vals["Omega"] = draw(_floats(-3.0, 3.0))
    for k in range(1, n + 1):
        l, m = draw(_floats(0.2, 1.5)), draw(_floats(0.5, 3.0))
        # Between a thin rod (m l^2/12) and a point mass at the centre.
        vals |= {
            f"l{k}": l,
            f"m{k}": m,
            f"J{k}": m * l * l / 12 * draw(_floats(0.05, 1.0)),
        }
    init = [draw(_floats(-1.5, 1.5)) for _ in range(n)]
    return build_driven_chain(n, drive, vals, init)


def rheonomic_systems(
    *, min_bodies: int = 1, max_bodies: int = 2, drives: Sequence[str] = DRIVES
) -> st.SearchStrategy[MechanicalSystem]:
    """Random planar chains driven by a prescribed motion of their support.

    The support's motion is a function of time given through ``specified``
    (see :func:`build_driven_chain`); the energy of such a system is not
    conserved (the drive does work), so ``nonconservative_power`` is
    ``None``: unknown.

    Parameters
    ----------
    min_bodies, max_bodies : int
        Links, 1 to 4.
    drives : sequence of {"translation", "rotation"}

    Examples
    --------
    >>> from eomcompare.testing.strategies import rheonomic_systems
    >>> strategy = rheonomic_systems(drives=["rotation"])
    """
    lo = _check_int("min_bodies", min_bodies, 1, 4)
    hi = _check_int("max_bodies", max_bodies, 1, 4)
    _check_range("min_bodies", lo, "max_bodies", hi)
    drives = _check_choices("drives", drives, DRIVES)
    return _driven(lo, hi, drives)


# ----------------------------------------------------------------------
# Everything, and states
# ----------------------------------------------------------------------
def mechanical_systems(*, max_bodies: int = 3) -> st.SearchStrategy[MechanicalSystem]:
    """Any of the families above, each with small structures.

    Examples
    --------
    >>> from eomcompare.testing.strategies import mechanical_systems
    >>> strategy = mechanical_systems(max_bodies=2)
    """
    hi = _check_int("max_bodies", max_bodies, 1, 6)
    return st.one_of(
        open_chains(dimension=2, max_bodies=hi),
        kinematic_trees(dimension=3, max_bodies=min(hi, 2)),
        closed_loops(min_bars=4, max_bars=min(4 + max(hi - 1, 0), 5)),
        nonholonomic_systems(),
        rheonomic_systems(max_bodies=min(hi, 2)),
    )


def consistent_states(
    system: MechanicalSystem, *, parameters: ParameterValues | None = None
) -> st.SearchStrategy[State]:
    """States ``(t, q, q')`` of ``system`` satisfying every constraint.

    Drawn by :meth:`eomcompare.numeric.states.SystemStates.random_state` from a random
    seed (so a failing example names a reproducible state); seeds for which
    no consistent state is found are rejected.

    Parameters
    ----------
    system : MechanicalSystem
    parameters : mapping, optional
        Parameter values overriding the system's own.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> from eomcompare.testing.strategies import consistent_states
    >>> strategy = consistent_states(get_system("four_bar"))
    """
    if not isinstance(system, MechanicalSystem):
        raise TypeError(
            f"system must be a MechanicalSystem, not {type(system).__name__}"
        )

    def state(seed: int) -> State | None:
        try:
            return system.states.random_state(seed=seed, parameters=parameters)
        except ConstraintError:
            return None

    return _not_none(st.integers(0, 2**32 - 1).map(state))


# ----------------------------------------------------------------------
# Velocities declared from points not located from the origin
# ----------------------------------------------------------------------
def _every_speed_moves_a_body(ms: MechanicalSystem) -> bool:
    N = ms.frame
    vectors = []
    for b in ms.bodies:
        vectors.append(b.masscenter.vel(N))
        if isinstance(b, me.RigidBody):
            vectors.append(b.frame.ang_vel_in(N))
    measures = [m for v in vectors if v != 0 for mat, _ in v.args for m in mat]
    return all(any(sm.sympify(m).diff(u) != 0 for m in measures) for u in ms.speeds)


@st.composite
def _reanchored(
    draw: st.DrawFn, base: st.SearchStrategy[MechanicalSystem], moving: tuple[bool, ...]
) -> MechanicalSystem:
    ms = draw(base)
    offset = draw(st.tuples(*[_floats(-0.5, 0.5)] * 3))
    mode = draw(st.sampled_from(moving))
    out = reanchor_velocity(ms, offset, moving=mode)
    # At rest, C can take away the only motion of a speed (a prismatic
    # leaf): its mass matrix is singular, a degenerate system to skip.
    assume(_every_speed_moves_a_body(out))
    return out


def unlocated_velocities(
    systems: st.SearchStrategy[MechanicalSystem] | None = None,
    *,
    moving: Sequence[bool] = (True, False),
) -> st.SearchStrategy[MechanicalSystem]:
    """Systems whose last body's mass-centre velocity comes by
    ``v2pt_theory`` from a point not located from the fixed point.

    Parameters
    ----------
    systems : strategy of MechanicalSystem, optional
        The systems to re-declare (default: planar open chains and spatial
        trees of up to two bodies).
    moving : sequence of bool
        Which kinds of new point to draw (see :func:`reanchor_velocity`).

    Examples
    --------
    >>> from eomcompare.testing.strategies import unlocated_velocities
    >>> strategy = unlocated_velocities()
    """
    if systems is None:
        systems = st.one_of(
            open_chains(dimension=2, max_bodies=2),
            kinematic_trees(dimension=3, max_bodies=2),
        )
    moving = tuple(moving)
    if not moving or not all(isinstance(m, bool) for m in moving):
        raise ValueError(
            f"moving must be a non-empty sequence of bools, not {moving!r}"
        )
    return _reanchored(systems, moving)
